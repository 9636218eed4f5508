#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What qemu/run shows without a terminal: refused and accepted requests,
# in nsclone's and Debian's tools' own words. Exits non-zero if any step
# does not behave as the comment above it says.
st=0
run() {
	echo "guest# $*"
	"$@" 2>&1
	echo "  -> exit $?"
}
expect() {
	want=$1
	shift
	echo "guest# $*"
	"$@" 2>&1
	got=$?
	echo "  -> exit $got"
	if { [ "$want" = fail ] && [ $got -eq 0 ]; } || { [ "$want" = ok ] && [ $got -ne 0 ]; }; then
		echo "  !! expected $want"
		st=1
	fi
}

echo "== The policy =="
run /bin/nsclone --policy
echo
echo "== What this kernel accepts (nsclone --matrix) =="
expect ok /bin/nsclone --matrix
echo
echo "== Refused in enforce mode: a PID namespace that shares mounts, IPC or net =="
expect fail /bin/nsclone -p true
expect fail /bin/nsclone -p -m true
expect fail /usr/bin/unshare --pid --fork true
expect fail /usr/bin/bwrap --dev-bind / / --unshare-pid true
echo
echo "== Accepted: the whole set, spelled out or as CLONE_NEWCONTAINER =="
expect ok /bin/nsclone -p -m -i -n --mount-proc sh -c 'echo "pid $$ in a new container"'
expect ok /bin/nsclone -c --mount-proc ps
expect ok /usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sh -c 'echo "unshare: pid $$"'
expect ok /usr/bin/bwrap --dev-bind / / --unshare-pid --unshare-ipc --unshare-net sh -c 'echo "bwrap: pid $$"'
echo
echo "== A child's identity across PID namespaces, without trusting a PID =="
expect ok /bin/nsclone -c --show-ids true
echo
echo "== Joining a container: the whole set, or nothing =="
/usr/bin/unshare -p -m -i -n -f sleep 60 &
sleep 0.5
init=
for status in /proc/[0-9]*/status; do
	grep -q "^PPid:[[:space:]]*$!\$" "$status" && { init=${status#/proc/}; init=${init%/status}; }
done
expect ok /usr/bin/nsenter -t "$init" --all sh -c 'echo "joined: pid $$ in the container"'
expect fail /usr/bin/nsenter -t "$init" --pid true
kill -KILL "$init"
wait
echo
echo "== Unprivileged, through a user namespace =="
expect fail su -s /bin/sh user -c '/bin/nsclone -U -p true'
expect ok su -s /bin/sh user -c '/bin/nsclone -r -c --mount-proc id'
echo
echo "== Warn mode: allowed, and logged =="
echo 1 >/proc/sys/kernel/pidns_coupling
expect ok /bin/nsclone -p sh -c 'echo "pid $$, sharing mounts, IPC and net"'
dmesg | grep 'pidns_coupling:' | tail -n 1
echo 2 >/proc/sys/kernel/pidns_coupling
exit $st
