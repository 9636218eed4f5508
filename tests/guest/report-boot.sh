#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Recording from boot, with no tool running: booted with
# trace_event=pidns_coupling:pidns_coupling_verdict and pidns_coupling=1,
# the tracefs "trace" file holds every verdict since boot, and
# pidns-report --stats needs no baseline to say so.
. /tests/tap.sh
echo "TAP version 13"

T=/sys/kernel/tracing
EV=$T/events/pidns_coupling/pidns_coupling_verdict
[ -d "$EV" ] || { echo "Bail out! no $EV"; exit 1; }

output "the event is on from boot (trace_event=)" "1" -- cat $EV/enable
output "warn mode from boot (pidns_coupling=1)" "1" -- cat /proc/sys/kernel/pidns_coupling
for i in 1 2 3; do /usr/bin/unshare --pid --fork true; done
/usr/bin/bwrap --dev-bind / / --unshare-pid true
/bin/pidns-report --stats $T/trace >/tmp/table 2>&1
tap $? "pidns-report reads the trace and the counts"
sed 's/^/# /' /tmp/table
# Three verdicts a run of unshare (unshare, the init's fork, its execve()),
# three of bwrap (clone; the fork of its PID 1, bwrap itself, which runs
# the program in a child with the host's IPC and network; that child's
# execve()).
output "unshare: 3 runs, 9 verdicts" "9 unshare,join,exec" -- awk '$1 == "/usr/bin/unshare" { print $3, $7 }' /tmp/table
output "bwrap: 1 run, 3 verdicts" "3 clone,join,exec" -- awk '$1 == "/usr/bin/bwrap" { print $3, $7 }' /tmp/table
check "the record holds every event the kernel counted since boot" -- \
	grep -q "^the record holds every event the kernel counted since boot$" /tmp/table
tap_end
