#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the stock-kernel guest for tests/bench --stock (pidns.rounds=N,
# pidns.ms=MS, pidns.threads=T): N rounds of bench.c's fork, clone3 and
# vfork+execve, each measured with the BPF form detached and attached (in
# stage mode), the order alternating; then claimcost with the program
# attached. Prints "MEASURE detached|attached VALUE" and claimcost's
# "claim ..." lines.
top=$PIDNS_TOP
lsm=$top/build/meson/userspace/pidns-lsm
arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
rounds=$(arg pidns.rounds) ms=$(arg pidns.ms) threads=$(arg pidns.threads)
grep -qs ' /sys/fs/bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
echo "# $(uname -r); rounds ${rounds:=5}, ${ms:=100} ms a measure"
# From tmpfs: an execve() of a file on the 9p root asks the host, and the
# host's latency shows in the guest's instruction count.
bin=$(mktemp -d /dev/shm/bench.XXXXXX)
cp "$top/build/meson/tests/bench" "$top/build/meson/tests/claimcost" "$bin/"
measure() {
	"$bin/bench" base 1 "$ms" |
		sed -n "s/^\(fork\|clone3\|exec\) base /\1 $1 /p"
}
# Each followed by 2 s of an idle guest (no cost under -icount with
# sleep=off), so that what the kernel frees after a grace period is not
# counted in the next measure. detach returns when no program runs: before
# it waited, 6.12's "detached" rounds ran with programs still attached
# (clone3() 8% dearer than attached in four of five rounds).
on() { "$lsm" attach --mode 3 >/dev/null || echo "# attach failed"; sleep 2; }
off() { "$lsm" detach >/dev/null || echo "# detach failed"; sleep 2; }
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		measure detached; on; measure attached; off
	else
		on; measure attached; off; measure detached
	fi
done
on
"$bin/claimcost" "${threads:-10000}" 31
off
