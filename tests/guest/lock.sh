#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kernel.pidns_coupling_locked: once set, nothing lowers (or changes) the
# mode until reboot: not root, not root in a user namespace, not root in
# a container with its own mount and PID namespaces, and the lock itself
# cannot be cleared. Its own boot, since a lock lasts until reboot.
#   pidns.locked=1  booted with pidns_coupling_locked: locked from the
#                   start, at the mode pidns_coupling= gave
. /tests/tap.sh
echo "TAP version 13"

M=/proc/sys/kernel/pidns_coupling
L=/proc/sys/kernel/pidns_coupling_locked

booted_locked=
given=
for arg in $(cat /proc/cmdline); do
	case $arg in
	pidns.locked=1) booted_locked=1 ;;
	pidns_coupling=*) given=${arg#pidns_coupling=} ;;
	esac
done

# try VALUE FILE: write as root; "ok", or the shell's error.
try() { (echo "$1" >"$2") 2>&1 && echo ok; }

if [ -z "$booted_locked" ]; then
	output "unlocked at boot" "0" -- cat $L
	for v in 0 1 2 3 0; do
		output "unlocked: root sets the mode to $v" "ok" -- try $v $M
	done
	refuse "unlocked: 0 cannot be written to the lock (only 1)" "Invalid argument" -- \
		sh -c "echo 0 >$L"
	refuse "unlocked: root of uid 1000's user namespace cannot set the lock" "Permission denied" -- \
		su -s /bin/sh user -c "/usr/bin/unshare -U -r sh -c 'echo 1 >$L'"
	refuse "unlocked: root in a user namespace of its own cannot set the lock" "Operation not permitted" -- \
		/usr/bin/unshare -U --map-user=0 --map-group=0 sh -c "echo 1 >$L"
	output "the lock is still clear" "0" -- cat $L
	mode 2
	output "root sets the lock" "ok" -- try 1 $L
	check "the kernel log says what was locked" -- \
		sh -c "dmesg | grep -q 'pidns_coupling: kernel.pidns_coupling locked at 2 until reboot'"
	output "setting the lock again is accepted, and logged only once" "ok 1" -- \
		sh -c "echo 1 >$L && echo ok \$(dmesg | grep -c 'locked at 2 until reboot')"
	at=2
else
	at=$given
	check "the kernel took pidns_coupling_locked: it is not in init's arguments or environment" -- \
		sh -c "! tr '\\0' '\\n' </proc/1/cmdline | grep -q pidns_coupling_locked && ! tr '\\0' '\\n' </proc/1/environ | grep -q pidns_coupling_locked"
fi

output "locked: the lock reads 1" "1" -- cat $L
output "locked: the mode is $at" "$at" -- cat $M
for v in 0 1 2 3; do
	[ "$v" = "$at" ] && continue
	refuse "locked: root cannot set the mode to $v" "Invalid argument" -- \
		sh -c "echo $v >$M"
done
output "locked: writing the mode it has is accepted" "ok" -- try "$at" $M
refuse "locked: the lock cannot be cleared" "Invalid argument" -- sh -c "echo 0 >$L"
output "locked: writing 1 to the lock again is accepted" "ok" -- try 1 $L
refuse "locked: root of uid 1000's user namespace cannot write the mode" "Permission denied" -- \
	su -s /bin/sh user -c "/usr/bin/unshare -U -r sh -c 'echo 0 >$M'"
refuse "locked: root in a user namespace of its own cannot write the mode" "Operation not permitted" -- \
	/usr/bin/unshare -U --map-user=0 --map-group=0 sh -c "echo 0 >$M"
other=$(((at + 1) % 4))
refuse "locked: root in a container (new mount, PID, IPC, net namespaces, /proc mounted anew) cannot change it to $other" "Invalid argument" -- \
	/usr/bin/unshare -p -m -i -n -f --mount-proc sh -c "echo $other >$M"
output "locked: the mode is still $at" "$at" -- cat $M
if [ "$at" = 2 ]; then
	refuse "locked at 2: CLONE_NEWPID alone is refused" "Invalid argument" -- \
		/usr/bin/unshare --pid --fork true
elif [ "$at" = 3 ]; then
	refuse "locked at 3: CLONE_NEWPID alone cannot execve" "Operation not permitted" -- \
		/usr/bin/unshare --pid --fork true
else
	output "locked at $at: CLONE_NEWPID alone runs" "1" -- \
		/usr/bin/unshare --pid --fork sh -c 'echo $$'
fi
tap_end
