#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian's stock kernel, unmodified, with the policy's BPF form
# (userspace/pidns-lsm), booted by tests/stock-kernel through dracut's
# initramfs into the Debian root of its release:
#  - the kernel: the one Debian ships (its version and that it has no
#    kernel.pidns_coupling), BTF, and "bpf" among the active LSMs;
#  - the loader: attach, status (the verifier's figures), the mode
#    through the same adapter the suites use, the counters, the record
#    in the trace event's text and pidns-report reading it, detach;
#  - the suites, through that adapter: the state suite in every mode
#    (its cells that differ on a stock kernel are named in it), or the
#    suites of pidns.suites= ("none": none); the matrix groups of
#    pidns.matrix=, against docs/compatibility.md's column for the BPF
#    form; before them, AppArmor's profiles loaded as Debian's boot loads
#    them (with systemd as PID 1, for the pods group, after its boot);
#  - after them, that no record of the programs outlives its namespace.
. "$PIDNS_TOP/tests/guest/tap.sh"
echo "TAP version 13"
top=$PIDNS_TOP
lsm=$top/build/meson/userspace/pidns-lsm
report=$top/build/meson/userspace/pidns-report

arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
kver=$(arg pidns.kver)
echo "# $(uname -r) ($(uname -v)); root: $(. /etc/os-release; echo "$PRETTY_NAME")"
# With systemd as PID 1 (the matrix's pods group): the boot first, as
# Debian's runs before any container (apparmor.service among it).
[ -d /run/systemd/system ] && booted
case $(uname -r) in
"$kver".*) tap 0 "the kernel is Debian's $kver: $(uname -r)" ;;
*) tap 1 "the kernel is Debian's $kver: $(uname -r)" ;;
esac
[ ! -e /proc/sys/kernel/pidns_coupling ]
tap $? "the kernel has no kernel.pidns_coupling (a kernel without the series)"
[ -s /sys/kernel/btf/vmlinux ]
tap $? "the kernel has BTF (/sys/kernel/btf/vmlinux, $(stat -c %s /sys/kernel/btf/vmlinux 2>/dev/null) bytes)"
grep -qs ' /sys/kernel/security ' /proc/mounts ||
	mount -t securityfs securityfs /sys/kernel/security
lsms=$(cat /sys/kernel/security/lsm)
echo "# LSMs active: $lsms"
case ",$lsms," in *",bpf,"*) st=0 ;; *) st=1 ;; esac
tap $st "bpf is an active LSM"
grep -qs ' /sys/fs/bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
# What Debian's boot does before any container runs (apparmor.service):
# load the profiles in /etc/apparmor.d, LXC's among them. The patched
# guest kernels have no AppArmor; here it is active, and LXC's default
# configuration asks for its profile.
case ",$lsms," in
*",apparmor,"*)
	t0=$(date +%s)
	/lib/apparmor/apparmor.systemd reload >/tmp/apparmor.log 2>&1
	tap $? "AppArmor's profiles loaded as apparmor.service loads them ($(wc -l </sys/kernel/security/apparmor/profiles) profiles, $(($(date +%s) - t0)) s)"
	tail -3 /tmp/apparmor.log | sed 's/^/# apparmor: /' ;;
esac

out=$("$lsm" attach --mode 1 2>&1)
st=$?
tap $st "pidns-lsm attach --mode 1: the kernel's verifier accepts every program, and they attach"
printf '%s\n' "$out" | sed 's/^/# /'
[ $st -eq 0 ] || { tap_end; exit 1; }
# The record, drained as a service would: the trace text, and the log
# lines that the suites read where the patched kernel's log has them.
"$lsm" record --follow --log /run/pidns-lsm.log >/run/pidns-lsm.trace 2>&1 &
follower=$!
output "pidns-lsm mode: 1" "1" -- "$lsm" mode
check "pidns-lsm status: attached" -- sh -c "\"$lsm\" status | grep -qx 'attached, mode 1'"
"$lsm" status | sed 's/^/# status: /'

# The record: a same-call verdict of warn mode, counted and in the ring
# buffer, in the trace event's text, which pidns-report reads.
before=$("$lsm" stats | sed -n 's/^unshare allowed //p')
/usr/bin/unshare --pid --fork true
after=$("$lsm" stats | sed -n 's/^unshare allowed //p')
[ "$after" = $((before + 1)) ]
tap $? "warn mode counts unshare(CLONE_NEWPID) alone as allowed ($before, then $after)"
sleep 1
cp /run/pidns-lsm.trace /tmp/record.txt
grep -q 'pidns_coupling_verdict: call=unshare .* missing=CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWNET mode=1 verdict=allowed comm="unshare"' /tmp/record.txt
tap $? "pidns-lsm record prints the verdict as the trace event does"
sed 's/^/# record: /' /tmp/record.txt | tail -5
check "pidns-report reads the record taken on a stock kernel" -- \
	sh -c "\"$report\" /tmp/record.txt | grep -q unshare"
"$report" /tmp/record.txt 2>&1 | sed 's/^/# report: /'

# A network namespace that six PID namespaces share at once (warn mode
# lets them): its member counts under each of them end with it, which
# "no record outlives its namespace" below checks.
/usr/bin/unshare --net sh -c 'for i in 1 2 3 4 5 6; do /usr/bin/unshare --pid --fork sleep 2 & done; wait'
tap $? "a network namespace shared by six PID namespaces at once, in warn mode"

# A host task in a pinned network namespace that takes a new time
# namespace at its execve() (6.12 switches the nsproxy in
# exec_task_namespaces(), which inlines switch_task_namespaces()) is still
# a member: in stage mode a container's init may not setns() into that
# network namespace while it runs.
mkdir -p /run/netns && touch /run/netns/pidns-time
/usr/bin/unshare --net=/run/netns/pidns-time true
/usr/bin/nsenter --net=/run/netns/pidns-time /usr/bin/unshare --time sleep 60 &
member=$!
sleep 1
"$lsm" mode 3
out=$(/usr/bin/unshare --pid --mount --ipc --net --fork \
	/usr/bin/nsenter --net=/run/netns/pidns-time /bin/true 2>&1)
st=$?
"$lsm" mode 1
[ $st -ne 0 ] && printf '%s\n' "$out" | grep -q "reassociate to namespace 'ns/net' failed: Operation not permitted"
tap $? "stage mode: a container's init may not enter a netns whose host member took a time namespace at its execve() (exit $st: ${out:-no output})"
kill $member; wait $member 2>/dev/null
umount /run/netns/pidns-time && rm -f /run/netns/pidns-time

# The windows between a program's check and the kernel's act
# (tests/guest/races.c), in stage mode: each must be hit, and closed.
"$top/build/meson/tests/races" >/tmp/races.tap 2>/tmp/races.err </dev/null
st=$?
relay races /tmp/races.tap
tap $st "races: exited $st"
[ $st -eq 0 ] || sed "s/^/# races stderr: /" /tmp/races.err | tail -20

# The state suite, through the adapter, in every mode.
suites=$(arg pidns.suites)
for s in ${suites:-state}; do
	[ "$s" = none ] && continue
	PATH=$top/build/meson/userspace:$PATH "$top/build/meson/tests/$s" >/tmp/$s.tap 2>/tmp/$s.err </dev/null
	st=$?
	relay "$s" "/tmp/$s.tap"
	tap $st "$s: exited $st"
	[ $st -eq 0 ] || sed "s/^/# $s stderr: /" /tmp/$s.err | tail -20
done

# The real software of docs/compatibility.md, its groups from the
# command line (pidns.matrix=), against the cells' documented verdicts.
for g in $(arg pidns.matrix | tr , ' '); do
	bash "$top/tests/guest/matrix.sh" "$g" >/tmp/matrix-$g.tap 2>/tmp/matrix-$g.err </dev/null
	st=$?
	relay "matrix-$g" "/tmp/matrix-$g.tap"
	tap $st "matrix-$g: exited $st"
	[ $st -eq 0 ] || sed "s/^/# matrix-$g stderr: /" /tmp/matrix-$g.err | tail -20
done

# No record outlives its namespace: after the suites, every record the
# programs keep is of a namespace that still exists (a task's, a file
# descriptor's or a bind mount's). A record left behind would be found by
# the next namespace given its address (its owner, its claim, its
# members) or its inode number (NS_GET_PIDNS_OWNER through the adapter).
live_ns() {
	local p t f
	for p in /proc/[0-9]*; do
		for t in "$p"/task/*; do
			for f in mnt ipc net pid pid_for_children; do
				readlink "$t/ns/$f"
			done
		done
		for f in "$p"/fd/*; do
			readlink "$f"
		done
		awk '$9 == "nsfs" { print $4 }' "$p/mountinfo"
	done 2>/dev/null | sed -n 's/^\(mnt\|ipc\|net\|pid\):\[\([0-9]*\)\]$/\1 \2/p' | sort -u
}
# A member count names its namespace ("count TYPE INODE ..."); an
# "orphan" one has lost it.
# A failure of "records" is one too.
stale() {
	"$lsm" records >/tmp/records.txt || echo "pidns-lsm records failed"
	awk '$1 == "count" { print $2, $3; next }
		$1 == "orphan" { print "orphan", NR; next } { print $1, $2 }' /tmp/records.txt |
		sort -u | comm -23 - <(live_ns)
}
# And a namespace that lives keeps its record: one held for the check.
/usr/bin/unshare --net sleep infinity &
keeper=$!
sleep 1	# a PID namespace's record ends after an RCU grace period
keep=$(readlink /proc/$keeper/ns/net | sed 's/^net:\[\(.*\)\]$/\1/')
left=$(stale)
[ -n "$left" ] && sleep 5 && left=$(stale)
[ -z "$left" ] && grep -q "^net $keep " /tmp/records.txt
tap $? "no record outlives its namespace, and a live one's is there ($(wc -l </tmp/records.txt) records, $(echo "$left" | grep -c .) of no namespace that exists, net:[$keep] $(grep -c "^net $keep " /tmp/records.txt))"
if [ -n "$left" ]; then
	grep -F -f <(printf '%s\n' "$left" | sed 's/$/ /') /tmp/records.txt | head -20 | sed 's/^/# stale: /'
	echo "# live: $(live_ns | awk '{ print $1 }' | sort | uniq -c | tr '\n' ' ')"
fi
sed 's/^/# records: /' /tmp/records.txt | head -40
# While its holder still runs: whether it does, and a second reading
grep -q "^net $keep " /tmp/records.txt || {
	"$lsm" stats | sed 's/^/# stats: /'
	echo "# keeper: $(readlink /proc/$keeper/ns/net) $(cat /proc/$keeper/comm 2>&1); read again: $("$lsm" records | grep -c "^net $keep ") records of it"
	"$lsm" status | sed 's/^/# status: /'
}
kill $keeper; wait $keeper 2>/dev/null

kill "$follower"
wait "$follower"
tap $? "the record's reader ended cleanly"
check "pidns-lsm detach" -- "$lsm" detach
[ ! -e /sys/fs/bpf/pidns-coupling ]
tap $? "nothing of it stays pinned"
# Unpinned is not detached: 6.12 releases links from a workqueue (6.1
# in the unlink). What is still loaded when detach returns may still run.
n=$(grep -c ' bpf_prog_[0-9a-f]*_pidns_' /proc/kallsyms)
[ "$n" -eq 0 ]
tap $? "no program of it is loaded once detach returns ($n in /proc/kallsyms)"
tap_end
