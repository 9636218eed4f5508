#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The KUnit suite of the series (kernel/pidns_coupling_test.c) ran at boot
# (the guest kernel has it built in; this boot passed kunit.enable=1) and
# left its KTAP in the kernel log. Each of its test cases becomes one TAP case
# here, then the suite's own result; a missing suite is a failure.
. /tests/tap.sh
echo "TAP version 13"
suite=pidns_coupling

# The suite's KTAP, without the printk timestamps.
dmesg | sed 's/^\[[ 0-9.]*\] //' |
	awk -v s="$suite" '$0 ~ "# Subtest: " s "$" { on = 1 }
		on { print }
		on && $0 ~ "^(not )?ok [0-9]+ " s "$" { exit }' >/tmp/ktap
if ! grep -q "# Subtest: $suite\$" /tmp/ktap; then
	echo "Bail out! no KUnit suite $suite in the kernel log (is CONFIG_PID_NS_COUPLING_KUNIT_TEST=y?)"
	exit 1
fi
cases=0
while IFS= read -r line; do
	case $line in
	"    ok "*|"    not ok "*)
		cases=$((cases + 1))
		name=${line#*ok }
		name=${name#* }
		case $line in
		*"# SKIP"*) tap 1 "KUnit $suite: $name (skipped)" ;;
		"    ok "*) tap 0 "KUnit $suite: $name" ;;
		*) tap 1 "KUnit $suite: $name" ;;
		esac ;;
	"    #"*|"        #"*) echo "# ${line#*# }" ;;
	"ok "*" $suite") tap 0 "KUnit suite $suite passed ($cases cases)"; done=1 ;;
	"not ok "*" $suite") tap 1 "KUnit suite $suite passed ($cases cases)"; done=1 ;;
	esac
done </tmp/ktap
[ "$cases" -gt 0 ] || tap 1 "KUnit suite $suite has test cases"
# The suite judges without recording: nothing else in this boot has made a
# request, so the counters, the log and the audit records hold none.
stats=/proc/sys/kernel/pidns_coupling_stats
if [ -r $stats ]; then
	nonzero=$(awk '$3 != 0' $stats)
	[ -z "$nonzero" ]
	tap $? "KUnit suite $suite left no verdict in kernel.pidns_coupling_stats"
	[ -z "$nonzero" ] || printf '%s\n' "$nonzero" | sed 's/^/# /'
else
	tap 1 "KUnit suite $suite: $stats is readable"
fi
logged=$(dmesg | grep -c 'pidns_coupling_verdict:\|pidns_coupling: .*(kernel.pidns_coupling=')
[ "$logged" -eq 0 ]
tap $? "KUnit suite $suite left no log line and no audit record ($logged)"
[ -n "${done:-}" ] || tap 1 "KUnit suite $suite reported its result (it did not finish)"
echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
