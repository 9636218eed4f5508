# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the guest's shell tests (busybox sh).
tap_n=0
tap_failed=0

# ok CONDITION-STATUS DESCRIPTION: prints one TAP line.
tap() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

# check DESCRIPTION -- COMMAND...: the case passes if COMMAND exits 0.
check() {
	desc=$1
	shift 2
	out=$("$@" 2>&1)
	st=$?
	tap $st "$desc"
	[ $st -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
	return 0
}

# refuse DESCRIPTION PATTERN -- COMMAND...: COMMAND must fail and print PATTERN.
refuse() {
	desc=$1
	pat=$2
	shift 3
	out=$("$@" 2>&1)
	st=$?
	if [ $st -ne 0 ] && printf '%s\n' "$out" | grep -qF -- "$pat"; then
		tap 0 "$desc"
	else
		tap 1 "$desc"
		echo "# exit $st, wanted failure with: $pat"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

# output DESCRIPTION EXPECTED -- COMMAND...: COMMAND must succeed and print EXPECTED.
output() {
	desc=$1
	want=$2
	shift 3
	out=$("$@" 2>&1)
	st=$?
	if [ $st -eq 0 ] && [ "$out" = "$want" ]; then
		tap 0 "$desc"
	else
		tap 1 "$desc"
		echo "# exit $st, wanted output: $want"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

mode() { echo "$1" >/proc/sys/kernel/pidns_coupling || { echo "Bail out! cannot set mode $1"; exit 1; }; }

# relay NAME FILE: FILE's TAP (another suite's) as this test's cases, a
# skip counted as a failure; then a case that it ran all it planned.
relay() {
	local planned= ran=0 line st desc
	while IFS= read -r line; do
		case $line in
		"ok "*|"not ok "*)
			st=0
			case $line in "not ok "*) st=1 ;; esac
			case $line in *"# SKIP"*|*"# skip"*) st=1 ;; esac
			desc=$(printf '%s\n' "$line" | sed -E 's/^(not )?ok [0-9]+ *-? *//')
			tap $st "$1: $desc"
			ran=$((ran + 1)) ;;
		1..*) planned=${line#1..}; planned=${planned%%[!0-9]*} ;;
		"TAP version"*) ;;
		*) printf '# %s\n' "$line" ;;
		esac
	done <"$2"
	[ -n "$planned" ] && [ "$ran" -gt 0 ] && [ "$planned" -eq "$ran" ]
	tap $? "$1: ran all of its ${planned:-?} planned cases ($ran)"
}

# booted: with systemd as PID 1, a case that its boot completes
# ("running", waited for with a bound), or the failed units with the end
# of their status, and the jobs still queued.
booted() {
	local state u
	state=$(timeout 600 systemctl is-system-running --wait 2>&1)
	tap "$([ "$state" = running ]; echo $?)" "the boot completes: systemctl is-system-running says $state"
	[ "$state" = running ] && return 0
	systemctl list-units --failed --no-legend --plain --no-pager | sed 's/^/# failed: /'
	for u in $(systemctl list-units --failed --no-legend --plain --no-pager | cut -d' ' -f1); do
		SYSTEMD_COLORS=0 systemctl status --no-pager -l -n 8 "$u" 2>&1 | sed "s|^|# $u: |"
	done
	systemctl list-jobs --no-pager | sed 's/^/# job: /'
}

tap_end() {
	echo "1..$tap_n"
	[ $tap_failed -eq 0 ]
}
