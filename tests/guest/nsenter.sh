#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's nsenter (util-linux 2.38) against a running container: the
# forms that join the whole set work in enforce mode, the ones that would
# leave the joiner sharing mounts, IPC or net with the host are refused at
# their fork. Called by full path: busybox sh has its own nsenter applet.
. /tests/tap.sh
echo "TAP version 13"

mode 2
/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sleep 600 &
outer=$!
# The container's init: the child of unshare (busybox has no pgrep).
child_of() {
	for status in /proc/[0-9]*/status; do
		grep -q "^PPid:[[:space:]]*$1\$" "$status" 2>/dev/null &&
			{ p=${status#/proc/}; echo "${p%/status}"; return 0; }
	done
	return 1
}
n=
for i in 1 2 3 4 5 6 7 8 9 10; do
	n=$(child_of $outer) && break
	sleep 0.2
done
[ -n "$n" ] || { echo "Bail out! the container did not start"; exit 1; }
NS=/usr/bin/nsenter

output "enforce: nsenter -t N --all runs in the container's PID namespace" "$(readlink /proc/$n/ns/pid)" -- \
	$NS -t "$n" --all readlink /proc/self/ns/pid
output "enforce: nsenter -t N -p -m -i -n runs as a container process" "$(readlink /proc/$n/ns/pid) $(readlink /proc/$n/ns/net)" -- \
	$NS -t "$n" -p -m -i -n sh -c 'echo $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net)'
output "enforce: nsenter -t N -m -i -n -p (other order) works" "ok" -- \
	$NS -t "$n" -m -i -n -p echo ok
refuse "enforce: nsenter -t N --pid is refused" "Invalid argument" -- \
	$NS -t "$n" --pid true
refuse "enforce: nsenter -t N --pid --mount is refused" "Invalid argument" -- \
	$NS -t "$n" --pid --mount true
refuse "enforce: nsenter -t N -p -m -i is refused (net missing)" "Invalid argument" -- \
	$NS -t "$n" -p -m -i true
output "enforce: nsenter -t N --net alone (no PID namespace) is not the policy's business" "ok" -- \
	$NS -t "$n" --net echo ok
refuse "enforce: bwrap --pidns (join the container's PID namespace) is refused" "Invalid argument" -- \
	sh -c "/usr/bin/bwrap --dev-bind / / --pidns 3 true 3</proc/$n/ns/pid"
refuse "enforce: bwrap --pidns --unshare-pid --unshare-ipc --unshare-net is refused" "Invalid argument" -- \
	sh -c "/usr/bin/bwrap --dev-bind / / --unshare-pid --unshare-ipc --unshare-net --pidns 3 true 3</proc/$n/ns/pid"

mode 1
output "warn: nsenter -t N --pid is allowed" "ok" -- $NS -t "$n" --pid echo ok
check "warn: and logged with the missing namespaces" -- \
	sh -c 'dmesg | grep -E "pidns_coupling: nsenter\[[0-9]+\]: fork into pid:\[[0-9]+\] with mnt:\[[0-9]+\] of pid:\[[0-9]+\] ipc:\[[0-9]+\] of pid:\[[0-9]+\] net:\[[0-9]+\] of pid:\[[0-9]+\]: allowed"'

mode 0
output "off: nsenter -t N --pid works" "ok" -- $NS -t "$n" --pid echo ok
output "off: nsenter -t N --pid --mount works" "ok" -- $NS -t "$n" --pid --mount echo ok
check "off: bwrap --pidns works" -- \
	sh -c "/usr/bin/bwrap --dev-bind / / --pidns 3 true 3</proc/$n/ns/pid"

mode 2
kill -KILL $n 2>/dev/null
wait
tap_end
