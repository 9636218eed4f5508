#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The series' own kselftest, /tests/pidns_coupling (tools/testing/selftests/
# pid_namespace/pidns_coupling.c, built statically from this version's
# patched tree by qemu/lib.sh build_coupling_selftest): each of its cases,
# in each mode, which it sets and restores itself. Here (the patched
# kernel, root, the initial namespaces, not locked) no case may skip, and
# kernel.pidns_coupling must be what it was when the test ends.
. /tests/tap.sh
echo "TAP version 13"
bin=/tests/pidns_coupling
[ -x "$bin" ] || { echo "Bail out! no $bin in the initramfs"; exit 1; }
before=$(cat /proc/sys/kernel/pidns_coupling) ||
	{ echo "Bail out! no kernel.pidns_coupling"; exit 1; }
(cd /tmp && exec timeout -s KILL 600 "$bin") >/tmp/ks.out 2>&1 </dev/null
st=$?
grep -E '^(not )?ok [0-9]+ ' /tmp/ks.out >/tmp/ks.res
# A case's line, without its number and with "# SKIP" spelled out (a TAP
# "not ok ... # SKIP" would be read as a skip, not as a failure).
while IFS= read -r line; do
	desc=$(printf '%s\n' "$line" | sed -e 's/^\(not \)\{0,1\}ok [0-9]* *//' \
		-e 's/ *# *[Ss][Kk][Ii][Pp] */: skipped: /')
	case $line in
	"not ok "*) tap 1 "$desc" ;;
	*"# SKIP"*|*"# skip"*) tap 1 "$desc" ;;
	*) tap 0 "$desc" ;;
	esac
done </tmp/ks.res
planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' /tmp/ks.out | head -1)
ran=$(wc -l </tmp/ks.res)
[ -n "$planned" ] && [ "$planned" -gt 0 ] && [ "$ran" -eq "$planned" ]
tap $? "pidns_coupling reported all of its ${planned:-?} planned cases ($ran)"
[ $st -eq 0 ]
tap $? "pidns_coupling exited 0 (exit $st)"
after=$(cat /proc/sys/kernel/pidns_coupling)
[ "$after" = "$before" ]
tap $? "kernel.pidns_coupling is back at $before ($after)"
[ "$tap_failed" -eq 0 ] || sed 's/^/#   | /' /tmp/ks.out
tap_end
