#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Warn mode loses nothing: a mix of Debian's tools and a burst big enough
# to trip the kernel log's rate limit, recorded with Debian's trace-cmd
# and with tracefs directly, summarized by pidns-report, and checked
# against the kernel's own counts (kernel.pidns_coupling_stats). Also:
# who may read the counts, and that one user's flood does not keep
# another user's lines out of the log. One boot: the cases share the
# trace buffer and the log, in order.
. /tests/tap.sh
echo "TAP version 13"

T=/sys/kernel/tracing
EV=$T/events/pidns_coupling/pidns_coupling_verdict
STATS=/proc/sys/kernel/pidns_coupling_stats
BURST=200

[ -d "$EV" ] || { echo "Bail out! no $EV: kernel without the series' trace event, or no tracefs"; exit 1; }
[ -x /usr/bin/trace-cmd ] || { echo "Bail out! no /usr/bin/trace-cmd in the initramfs"; exit 1; }

# row FILE EXE: "COUNT REFUSED CALLS UIDS MISSING" of EXE's row (columns:
# EXE INODE COUNT REFUSED FIRST LAST CALLS UIDS MISSING).
row() { awk -v exe="$2" '$1 == exe { print $3, $4, $7, $8, $9 }' "$1"; }

# child_of PID: a child of PID (from /proc/*/stat's ppid field).
child_of() {
	awk -v p="$1" '$4 == p { print $1; found = 1; exit } END { exit !found }' \
		/proc/[0-9]*/stat 2>/dev/null
}

# klog_count PATTERN: lines of the kernel log that match.
klog_count() { dmesg | grep -c -- "$1"; }

check "the event's format names every field" -- \
	sh -c "grep -q 'call=%s pid=%d uid=%u pidns=%u target=%u flags=%#llx missing=%s mode=%d verdict=%s comm=%s exe_dev=%u:%u exe_ino=%lu exe=%s' $EV/format"
output "kernel.pidns_coupling_stats is root's alone (mode 0400)" "400" -- \
	stat -c %a "$STATS"
refuse "uid 1000 cannot read kernel.pidns_coupling_stats" "Permission denied" -- \
	su -s /bin/sh user -c "cat $STATS"
refuse "root of uid 1000's user namespace cannot read it either" "Permission denied" -- \
	su -s /bin/sh user -c "/usr/bin/unshare -U -r cat $STATS"
output "tracefs is root's alone (mode 0700)" "700" -- stat -c %a $T
check "uid 1000 cannot enable the event" -- \
	su -s /bin/sh user -c "! echo 1 > $EV/enable"

# A container that nsenter joins with --pid alone (a join event each time).
/usr/bin/unshare -p -m -i -n -f sleep 1000 &
upid=$!
cpid=
for i in 1 2 3 4 5 6 7 8 9 10; do
	cpid=$(child_of $upid) && break
	sleep 0.2
done
[ -n "$cpid" ] || { echo "Bail out! the container's sleep did not start"; exit 1; }

mode 1
cp "$STATS" /tmp/base
dmesg -c >/dev/null
# --compression none: trace-cmd 3.1.6 cannot read back, in this guest,
# the compressed file it writes by default ("error reading header").
trace-cmd record --compression none -e pidns_coupling:pidns_coupling_verdict \
	-b 8192 -o /tmp/trace.dat >/tmp/record.log 2>&1 &
rec=$!
# trace-cmd clears the buffer, then enables the event: from then on every
# event is in the buffer, which its recorders drain.
for i in $(seq 100); do
	[ "$(cat $EV/enable)" = 1 ] && break
	sleep 0.1
done
[ "$(cat $EV/enable)" = 1 ] || { sed 's/^/# /' /tmp/record.log; echo "Bail out! trace-cmd record did not enable the event"; exit 1; }
sleep 1

# The mix, as root: util-linux, bubblewrap, firejail, nsclone.
for i in 1 2 3; do /usr/bin/unshare --pid --fork true; done
for i in 1 2; do /usr/bin/bwrap --dev-bind / / --unshare-pid true; done
for i in 1 2; do /usr/bin/nsenter --pid --target "$cpid" true; done
/usr/bin/firejail --noprofile --quiet true >/dev/null 2>&1
for i in 1 2 3 4 5; do /bin/nsclone -p true; done
# The burst: far past the log's limit for root (10 lines in 5 s).
i=0
while [ $i -lt $BURST ]; do /usr/bin/unshare --pid --fork true; i=$((i + 1)); done
# And as uid 1000, through a user namespace.
su -s /bin/sh user -c 'for i in 1 2 3 4; do /usr/bin/unshare -U -r -p -f true; done'

kill -INT $rec
wait $rec
trace-cmd report -i /tmp/trace.dat >/tmp/report.txt 2>/tmp/report.err
st=$?
tap $st "trace-cmd report reads the record"
[ $st -eq 0 ] || sed 's/^/# /' /tmp/record.log /tmp/report.err
/bin/pidns-report --baseline=/tmp/base /tmp/report.txt >/tmp/table 2>&1
tap $? "pidns-report reads trace-cmd's report"
sed 's/^/# /' /tmp/table

# Each run is judged where the state is checked too: "unshare --pid
# --fork true" is three verdicts (the unshare, the init's fork into the
# new PID namespace with the outside's namespaces, a "join", and the init's
# execve(), counted before the new program replaces unshare); a clone is
# two (the clone and the child's execve()), a join by nsenter two (the
# fork and the execve()).
unshare_n=$((3 * (3 + BURST + 4)))
output "the report counts every unshare run three times: $unshare_n, none refused, by uids 0 and 1000" \
	"$unshare_n 0 unshare,join,exec 0,1000 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- row /tmp/table /usr/bin/unshare
# bwrap's PID 1 (bwrap) forks the program with the host's IPC and network,
# and firejail's the same with the host's network: a fork that stays in
# a PID namespace whose namespaces it shares is judged (patch 16).
output "the report counts bwrap --unshare-pid twice (clone, its PID 1's fork, exec), lacking IPC and net" \
	"6 0 clone,join,exec 0 CLONE_NEWIPC,CLONE_NEWNET" -- row /tmp/table /usr/bin/bwrap
output "the report counts nsenter --pid's two joins (fork, exec), lacking all three" \
	"4 0 join,exec 0 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- row /tmp/table /usr/bin/nsenter
# firejail asks for CLONE_NEWIPC as root (docs/compatibility.md).
output "the report counts firejail once (clone, its PID 1's fork, exec), lacking net" \
	"3 0 clone,join,exec 0 CLONE_NEWNET" -- row /tmp/table /usr/bin/firejail
output "the report counts nsclone -p five times (clone, exec)" \
	"10 0 clone,exec 0 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- row /tmp/table /bin/nsclone
check "the report names no other program" -- \
	sh -c "head -1 /tmp/table | grep -q ' events from 5 programs'"
check "the record holds every event the kernel counted since the baseline" -- \
	grep -q "^the record holds every event the kernel counted since the baseline$" /tmp/table
lines=$(klog_count 'pidns_coupling: unshare\[')
check "the kernel log dropped unshare lines ($lines of $unshare_n), the record none" -- \
	test "$lines" -lt "$unshare_n"
check "the kernel log says where the complete record is" -- \
	sh -c "dmesg | grep -qF 'pidns_coupling: this log is rate limited per user; every verdict is counted in kernel.pidns_coupling_stats and traced in tracefs, events/pidns_coupling/'"
/bin/pidns-report --json --baseline=/tmp/base /tmp/report.txt >/tmp/json 2>&1
check "pidns-report --json has unshare's row with its count" -- \
	sh -c "tr -d ' \n' </tmp/json | grep -q '{\"exe\":\"/usr/bin/unshare\",\"inode\":\"[0-9]*:[0-9]*:[0-9]*\",\"count\":$unshare_n,\"refused\":0,'"
check "pidns-report --json says the record lacks nothing" -- \
	sh -c "tr -d ' \n' </tmp/json | grep -q '\"lacking\":0,\"extra\":0}\$'"

# One user's flood must not hide another user's lines: uid 1000 floods
# (past its own limit of 100 lines a second), then root's request is
# logged all the same. tracefs directly this time, its "trace" file.
sleep 6		# root's window from the burst above has passed
# The audit records of the verdicts: without auditd the kernel prints them
# ("audit: type=1400 audit(...): pidns_coupling_verdict: ..."), under the
# log's per-user rate limit and printk's own, both past by now: one join
# by nsenter --pid (the fork and the execve()).
dmesg -c >/dev/null
/usr/bin/nsenter --pid --target "$cpid" true
dmesg | grep 'type=1400 audit(.*pidns_coupling_verdict: ' >/tmp/audit.txt
audits=$(wc -l </tmp/audit.txt)
check "the kernel log has the two AVC audit records of the join: its fork and its execve() ($audits)" -- test "$audits" -eq 2
check "an audit record has the event's fields and the owners of what a state check judged" -- \
	sh -c "grep -q 'pidns_coupling_verdict: call=join pid=[0-9]* uid=0 pidns=[0-9]* target=[0-9]* flags=0x[0-9a-f]* missing=CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWNET mode=1 verdict=allowed comm=\"nsenter\" exe_dev=[0-9]*:[0-9]* exe_ino=[0-9]* exe=\"/usr/bin/nsenter\" owners=mnt:[0-9]*@[0-9]*,ipc:[0-9]*@[0-9]*,net:[0-9]*@[0-9]*' /tmp/audit.txt"
/bin/pidns-report /tmp/audit.txt >/tmp/table-audit 2>&1
tap $? "pidns-report reads the audit records"
sed 's/^/# /' /tmp/table-audit
check "pidns-report counts every audit record as an event ($audits)" -- \
	sh -c "head -1 /tmp/table-audit | grep -q '^$audits events from '"
echo 8192 >$T/buffer_size_kb
echo >$T/trace
echo 1 >$EV/enable
cp "$STATS" /tmp/base2
dmesg -c >/dev/null
out=$(/tests/burst 2000 1000)
output "uid 1000's burst of 2000 requests is accepted (warn mode)" "2000 accepted, 0 refused" -- echo "$out"
/bin/nsclone -p true
check "root's request right after it is in the kernel log" -- \
	sh -c "dmesg | grep -q 'pidns_coupling: nsclone\[[0-9]*\]: CLONE_NEWPID without CLONE_NEWNS CLONE_NEWIPC CLONE_NEWNET: allowed (kernel.pidns_coupling=1)'"
lines=$(klog_count 'pidns_coupling: burst\[')
# The boot's log_buf_len=2M holds 2,000 lines: fewer is the rate limit.
check "uid 1000's flood was limited in the log ($lines lines of 2000), to its own budget (100 a second)" -- \
	test "$lines" -lt 2000 -a "$lines" -ge 100
echo 0 >$EV/enable
/bin/pidns-report --baseline=/tmp/base2 $T/trace >/tmp/table2 2>&1
tap $? "pidns-report reads tracefs's trace file"
sed 's/^/# /' /tmp/table2
output "the trace holds all 2000 of the flood" "2000 0 unshare 1000 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- \
	row /tmp/table2 /tests/burst
output "and root's request (clone, exec)" "2 0 clone,exec 0 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- \
	row /tmp/table2 /bin/nsclone
check "and every event the kernel counted" -- \
	grep -q "^the record holds every event the kernel counted since the baseline$" /tmp/table2

# Enforce mode is recorded the same way, as refusals.
echo >$T/trace
echo 1 >$EV/enable
mode 2
cp "$STATS" /tmp/base3
/usr/bin/unshare --pid --fork true 2>/dev/null
/usr/bin/nsenter --pid --target "$cpid" true 2>/dev/null
echo 0 >$EV/enable
/bin/pidns-report --baseline=/tmp/base3 $T/trace >/tmp/table3 2>&1
tap $? "pidns-report reads the enforce-mode trace"
output "enforce: the refused unshare is recorded as refused" "1 1 unshare 0 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- \
	row /tmp/table3 /usr/bin/unshare
output "enforce: the refused join is recorded as refused" "1 1 join 0 CLONE_NEWNS,CLONE_NEWIPC,CLONE_NEWNET" -- \
	row /tmp/table3 /usr/bin/nsenter
check "enforce: the counts agree" -- \
	grep -q "^the record holds every event the kernel counted since the baseline$" /tmp/table3

# A flood of requests that fail without the series is not the policy's:
# uid 1000, without a user namespace, has no CAP_SYS_ADMIN for
# unshare(CLONE_NEWPID) and gets EPERM before the policy judges anything.
# Nothing in the log, the trace or the counts, in any mode.
for m in 1 2 3; do
	mode $m
	echo >$T/trace
	echo 1 >$EV/enable
	cp "$STATS" /tmp/base4
	dmesg -c >/dev/null
	out=$(/tests/burst 1000 1000 pid)
	echo 0 >$EV/enable
	output "mode $m: uid 1000's 1000 unshare(CLONE_NEWPID) without a user namespace get EPERM, as unpatched" \
		"0 accepted, 1000 refused, 1000 with EPERM" -- echo "$out"
	check "mode $m: the counts did not move" -- cmp -s /tmp/base4 "$STATS"
	lines=$(klog_count 'pidns_coupling: ')
	check "mode $m: the kernel log has none of it ($lines lines)" -- test "$lines" -eq 0
	events=$(grep -c 'pidns_coupling_verdict:' $T/trace)
	check "mode $m: the trace has none of it ($events events)" -- test "$events" -eq 0
done
mode 1

kill $cpid $upid 2>/dev/null
tap_end
