#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What qemu/run shows without a terminal: each mode of kernel.pidns_coupling
# in turn (off, warn, enforce, stage), refused and accepted requests in
# nsclone's and Debian's tools' own words, and pidns-report on what warn
# mode recorded. Every step says what it expects; the last line counts the
# steps that behaved so, and the demo exits non-zero if one did not.
# Debian's tools by full path: busybox sh runs its own unshare and nsenter.
steps=0
good=0

# expect ok|fail COMMAND...: run COMMAND, show its output and status.
expect() {
	want=$1
	shift
	steps=$((steps + 1))
	echo "guest# $*"
	"$@" 2>&1
	got=$?
	echo "  -> exit $got"
	if { [ "$want" = fail ] && [ $got -eq 0 ]; } || { [ "$want" = ok ] && [ $got -ne 0 ]; }; then
		echo "  !! expected $want"
	else
		good=$((good + 1))
	fi
}

# holds DESCRIPTION -- COMMAND...: a step that checks what the last one
# showed; COMMAND's status says whether it holds.
holds() {
	desc=$1
	shift 2
	steps=$((steps + 1))
	if "$@" >/dev/null 2>&1; then
		good=$((good + 1))
		echo "  ($desc)"
	else
		echo "  !! expected $desc"
	fi
}

mode() {
	echo "$1" >/proc/sys/kernel/pidns_coupling
	echo
	echo "guest# sysctl kernel.pidns_coupling=$1"
	/bin/nsclone --policy
}

# The kernel log's lines of the policy since the last call.
log_seen=0
new_log() {
	dmesg | grep 'pidns_coupling' >/tmp/log.all
	tail -n +$((log_seen + 1)) /tmp/log.all >/tmp/log.new
	log_seen=$(wc -l </tmp/log.all)
	sed 's/^/  kernel: /' /tmp/log.new
}

T=/sys/kernel/tracing/events/pidns_coupling/pidns_coupling_verdict
new_log >/dev/null

echo "== Mode 0 (off): nothing refused, nothing recorded =="
mode 0
expect ok /bin/nsclone -p sh -c 'echo "pid $$, sharing mounts, IPC and net"'
expect ok /usr/bin/unshare --pid --fork true
new_log
holds "no log line" -- test ! -s /tmp/log.new

echo
echo "== Mode 1 (warn): allowed, and recorded =="
[ -d $T ] && echo 1 >$T/enable && : >/sys/kernel/tracing/trace
mode 1
expect ok /bin/nsclone -p sh -c 'echo "pid $$, sharing mounts, IPC and net"'
new_log
holds "the kernel logged this request: allowed" -- \
	grep -qE "nsclone\[[0-9]+\]: CLONE_NEWPID without .*: allowed" /tmp/log.new
expect ok /usr/bin/unshare --pid --fork true
[ -d $T ] && echo 0 >$T/enable

echo
echo "== Mode 2 (enforce): a new PID namespace only with new mount, IPC and network namespaces, in one call =="
mode 2
expect fail /bin/nsclone -p -m true
expect fail /usr/bin/unshare --pid --fork true
expect fail /usr/bin/bwrap --dev-bind / / --unshare-pid true
expect fail /usr/bin/unshare -m -i -n /usr/bin/unshare -p -f true
expect ok /bin/nsclone -p -m -i -n --mount-proc sh -c 'echo "pid $$ in a new container"'
expect ok /bin/nsclone --container --mount-proc ps
expect ok /usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sh -c 'echo "unshare: pid $$"'
expect ok /usr/bin/bwrap --dev-bind / / --unshare-pid --unshare-ipc --unshare-net sh -c 'echo "bwrap: pid $$"'
expect ok /bin/nsclone --container --show-ids true
echo "-- Joining a container: the whole set, or nothing"
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
echo "-- Unprivileged, through a user namespace"
expect fail su -s /bin/sh user -c '/bin/nsclone -U -p true'
expect ok su -s /bin/sh user -c '/bin/nsclone -r --container --mount-proc id'

echo
echo "== Mode 3 (stage): judged by the state a program runs in =="
mode 3
echo "-- A container built in two calls (mount, IPC and network first, then the PID namespace) runs"
expect ok /usr/bin/unshare -m -i -n /usr/bin/unshare -p -f --mount-proc sh -c 'echo "stage: pid $$, built in two calls"'
echo "-- One that shares the host's namespaces is refused when its init runs a program"
expect fail /usr/bin/unshare --pid --fork true
expect fail /bin/nsclone -p true
expect ok /bin/nsclone --container --mount-proc sh -c 'echo "stage: pid $$ in a new container"'

echo
echo "== What warn mode recorded: pidns-report on the trace =="
if [ -d $T ]; then
	expect ok /bin/pidns-report /sys/kernel/tracing/trace
	/bin/pidns-report /sys/kernel/tracing/trace >/tmp/report 2>&1
	holds "nsclone's and unshare's requests are in it, none refused" -- \
		awk '$1 == "/usr/bin/unshare" && $3 > 0 && $4 == 0 { u = 1 }
		     $1 == "/bin/nsclone" && $3 > 0 && $4 == 0 { n = 1 }
		     END { exit !(u && n) }' /tmp/report
else
	steps=$((steps + 1))
	echo "  !! this kernel has no pidns_coupling trace event"
fi

mode 2
echo
echo "demo: $good of $steps steps behaved as documented"
[ $good -eq $steps ]
