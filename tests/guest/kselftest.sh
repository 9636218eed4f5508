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

# The restore of a killed test. The harness kills a test that runs past
# its timeout with SIGKILL to the test's process group, and no teardown
# runs; the program's main() puts back, at exit(), the mode it found.
# Do what the timeout does, at a moment when a test has set a mode other
# than the starting one: the harness runs in a cgroup of its own; when
# the mode changes, freeze the cgroup (a write, no fork: the tests take a
# few milliseconds), and if the mode is still not the starting one, kill
# every task in it but the harness (the test, and in later harnesses the
# wrapper around it), else thaw and look again. Then thaw, let the
# harness finish, and read the mode.
wait_gone() { # until no process is named pidns_coupling
	i=0
	while grep -qx pidns_coupling /proc/[0-9]*/comm 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
}
cg=/sys/fs/cgroup
grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none "$cg"
mkdir -p "$cg/ks"
left=$before killed=0 looks=0
(echo 0 >"$cg/ks/cgroup.procs"; cd /tmp && exec "$bin") >/tmp/ks2.out 2>&1 </dev/null &
h=$!
while [ $killed = 0 ] && kill -0 "$h" 2>/dev/null && [ $looks -lt 500 ]; do
	looks=$((looks + 1))
	n=0
	while read -r m </proc/sys/kernel/pidns_coupling &&
	      [ "$m" = "$before" ] && [ $n -lt 20000 ]; do
		n=$((n + 1))
	done
	echo 1 >"$cg/ks/cgroup.freeze"
	read -r left </proc/sys/kernel/pidns_coupling
	if [ "$left" != "$before" ]; then
		while read -r p; do
			[ "$p" = "$h" ] || kill -KILL "$p"
		done <"$cg/ks/cgroup.procs"
		killed=1
	fi
	echo 0 >"$cg/ks/cgroup.freeze"
done
wait "$h"
wait_gone
end=$(cat /proc/sys/kernel/pidns_coupling)
[ "$killed" = 1 ] && [ "$left" != "$before" ] && [ "$end" = "$before" ]
tap $? "a test killed as the harness's timeout kills it left kernel.pidns_coupling at $left (found in $looks looks); main() put back $before when the run ended ($end)"
grep -q '^not ok' /tmp/ks2.out
tap $? "the harness reported the killed test as failed"
[ "$tap_failed" -eq 0 ] || sed 's/^/#   ks2 | /' /tmp/ks2.out | grep -v '^#   ks2 | ok '

# The kselftest runner's timeout: SIGTERM to the harness's process, once a
# test has set its mode (the whole run takes about a second).
(cd /tmp && exec "$bin") >/tmp/ks3.out 2>&1 </dev/null &
h=$!
n=0
while read -r m </proc/sys/kernel/pidns_coupling &&
      [ "$m" = "$before" ] && [ $n -lt 200000 ]; do
	n=$((n + 1))
done
kill -TERM "$h"
wait "$h"
st=$?
wait_gone
end=$(cat /proc/sys/kernel/pidns_coupling)
[ "$st" = 143 ] && [ "$end" = "$before" ]
tap $? "SIGTERM ends the harness (exit $st) and kernel.pidns_coupling is back at $before ($end)"
tap_end
