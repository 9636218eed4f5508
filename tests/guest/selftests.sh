#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs every kernel selftest binary in /selftests/TARGET/ (built statically
# from the unpatched tree by qemu/lib.sh build_selftests) and reports what
# each did, for tests/host/selftests to compare between kernels:
#   "# st<TAB>TARGET/BINARY<TAB>#N<TAB>DESCRIPTION<TAB>RESULT" for each TAP
#   result line "ok N ..." of the binary (RESULT ok, fail or skip), and
#   "# st<TAB>TARGET/BINARY<TAB>(exit)<TAB>exit status<TAB>N" for its exit status
#   (124: killed after pidns.selftest_timeout seconds, default 120).
# Its own TAP case per binary fails only if the binary could not run.
. /tests/tap.sh
echo "TAP version 13"
limit=120
for arg in $(cat /proc/cmdline); do
	case $arg in
	pidns.selftest_timeout=*) limit=${arg#pidns.selftest_timeout=} ;;
	esac
done
tab=$(printf '\t')
[ -d /selftests ] || { echo "Bail out! no /selftests in the initramfs"; exit 1; }
echo "# kernel.pidns_coupling: $(cat /proc/sys/kernel/pidns_coupling 2>/dev/null || echo absent)"
for bin in /selftests/*/*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	name=${bin#/selftests/}
	dir=${bin%/*}
	(cd "$dir" && exec timeout -s KILL "$limit" "$bin") >/tmp/st.out 2>&1 </dev/null
	st=$?
	[ $st -eq 137 ] && st=124
	# A result line: "ok N desc", "not ok N desc", "ok N desc # SKIP why".
	grep -E '^(not )?ok [0-9]+ ' /tmp/st.out | while IFS= read -r line; do
		res=ok
		case $line in
		"not ok "*) res=fail ;;
		esac
		case $line in
		*"# SKIP"*|*"# skip"*) res=skip ;;
		esac
		num=$(printf '%s\n' "$line" | sed 's/^\(not \)\{0,1\}ok \([0-9]*\).*/\2/')
		desc=$(printf '%s\n' "$line" | tr '\t' ' ' |
			sed -e 's/^\(not \)\{0,1\}ok [0-9]* *//' -e 's/ *# [Ss][Kk][Ii][Pp].*//')
		echo "# st$tab$name$tab#$num$tab$desc$tab$res"
	done
	echo "# st$tab$name$tab(exit)${tab}exit status$tab$st"
	[ $st -ne 126 ] && [ $st -ne 127 ]
	tap $? "$name ran (exit $st)"
	if [ $st -ne 0 ] && [ $st -ne 4 ]; then
		tail -5 /tmp/st.out | sed 's/^/#   | /'
	fi
done
[ "$tap_n" -gt 0 ] || tap 1 "there are selftests to run"
echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
