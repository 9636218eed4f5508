#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Booted with pidns_coupling=<value from pidns.expect's companion>:
#   pidns.expect=N  the value kernel.pidns_coupling must have
#   pidns.logged=1  the boot log must name an invalid value
. /tests/tap.sh
echo "TAP version 13"

expect=
logged=
for arg in $(cat /proc/cmdline); do
	case $arg in
	pidns.expect=*) expect=${arg#pidns.expect=} ;;
	pidns.logged=*) logged=${arg#pidns.logged=} ;;
	pidns_coupling=*) given=${arg#pidns_coupling=} ;;
	esac
done
[ -n "$expect" ] || { echo "Bail out! no pidns.expect= on the command line"; exit 1; }

output "pidns_coupling=$given boots with kernel.pidns_coupling = $expect" "$expect" -- \
	cat /proc/sys/kernel/pidns_coupling
case $expect in
2)
	refuse "unshare --pid --fork true is refused" "Invalid argument" -- \
		/usr/bin/unshare --pid --fork true ;;
3)
	refuse "stage: unshare --pid --fork true is refused at execve" "Operation not permitted" -- \
		/usr/bin/unshare --pid --fork true
	output "stage: unshare -p -m -i -n --fork runs as pid 1" "1" -- \
		/usr/bin/unshare -p -m -i -n --fork sh -c 'echo $$' ;;
*)
	output "unshare --pid --fork runs as pid 1" "1" -- \
		/usr/bin/unshare --pid --fork sh -c 'echo $$' ;;
esac
if [ "$logged" = 1 ]; then
	check "the invalid value is logged and the default kept" -- \
		sh -c "dmesg | grep -F 'pidns_coupling: invalid pidns_coupling=$given, keeping $expect'"
fi
tap_end
