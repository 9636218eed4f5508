#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest for tests/bench: pidns.bench=base|knob, pidns.rounds=N,
# pidns.ms=MS (minimum guest time per measure).
what=base rounds=5 ms=1000
for arg in $(cat /proc/cmdline); do
	case $arg in
	pidns.bench=*) what=${arg#pidns.bench=} ;;
	pidns.rounds=*) rounds=${arg#pidns.rounds=} ;;
	pidns.ms=*) ms=${arg#pidns.ms=} ;;
	esac
done
/tests/bench "$what" "$rounds" "$ms"
