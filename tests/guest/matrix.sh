#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# matrix.sh GROUP...: the real software of docs/compatibility.md, run in
# the host-root guest (qemu/hostinit: this machine's Debian userspace,
# unmodified) in every mode of the kernel it boots (0, 1, 2 and 3; "vanilla"
# on a kernel without the series), one TAP case per cell.
#
# Each cell starts a container (or sandbox) the way its users do, with a
# payload that prints the namespaces it got. Per cell the suite records
# whether the payload ran, the exit status and what the tool printed, the
# namespaces the payload got that are not the guest's own, the change in
# kernel.pidns_coupling_stats (requests the kernel allowed in warn mode or
# refused in enforce mode) and the kernel's log lines, and from these a
# verdict. The case passes when the verdict is the one the cell's row in
# docs/compatibility.md ("Measured in the guest") documents for this mode
# and kernel, and, in mode 2, when what the tool printed has the row's
# error text. Every cell's record also goes to the console as a
# "matrix-record" line, which tests/host/matrix-table turns into the rows.
#
# Groups: util (util-linux unshare, nsenter), bwrap, firejail, oci (runc,
# crun), podman, lxc, nspawn, chromium, flatpak, docker (dockerd started in
# the guest), k8s (the Kubernetes pattern with runc and crun), firefox
# (Firefox ESR headless, its tab's namespaces), podman-more (--pid=container,
# rootless, --userns=keep-id), pods (podman's pods on its default network,
# one sharing its PID namespace; booted with systemd as PID 1), debian
# (Debian's build tools as a user: mmdebstrap, sbuild, autopkgtest), criu
# (runc checkpoint and restore), incus (Incus's containers, incusd started
# in the guest; Debian 13's root only), stacks (what most users run: three
# Docker cells and the Kubernetes pattern with runc, the boot CI runs). GROUP
# "all" runs them all but three: pods, which needs systemd as PID 1
# (pidns.systemd=1), webkit (Epiphany under Xvfb), which only Debian
# 13's root with the browsers has (qemu/mkroot trixie+browsers), and
# incus, which Debian 12's root does not have.
# Runs on the guest's own bash (the host's), never busybox.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TOP=${PIDNS_TOP:?}
DOC=$TOP/docs/compatibility.md
W=/tmp/matrix
mkdir -p "$W"
KVER=$(uname -r)
KVER=${KVER%%[!0-9.]*}
KVER=${KVER%.*}
STATS=/proc/sys/kernel/pidns_coupling_stats
# The root the guest booted: Debian 12's (this machine's /) has its cells
# in "Measured in the guest"; another (qemu/mkroot: Debian 13, trixie)
# in a section of its own, "Measured on Debian 13's userspace".
ROOT=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
SECTION="Measured in the guest"
[ "$ROOT" = trixie ] && SECTION="Measured on Debian 13's userspace"
CELL_TIMEOUT=${PIDNS_CELL_TIMEOUT:-240}
# Cells that build a package under TCG need longer (their times are in
# docs/verification.md).
declare -A CELL_TIMEOUTS=([sbuild]=900 [autopkgtest]=600 [epiphany]=300)

# tap(), tap_n, tap_failed: the guest suites' own helpers.
. "$TOP/tests/guest/tap.sh"
bail() { echo "Bail out! $*"; exit 1; }
note() { printf '%s\n' "$@" | sed 's/^/# /'; }

# The namespaces a payload got that are not the guest's own: the guest's
# init (pid 1) is the reference.
NSTYPES="pid mnt ipc net uts user cgroup"
declare -A HOSTNS
for t in $NSTYPES; do HOSTNS[$t]=$(readlink /proc/1/ns/$t); done

# The payload: prints one "NS t=inode ..." line. It runs in the
# container's root (the busybox rootfs below) or on the guest's own /.
payload_text='#!/bin/sh
line=NS
for t in pid mnt ipc net uts user cgroup; do
	line="$line $t=$(readlink /proc/self/ns/$t)"
done
echo "$line"
(echo "$line" >/ns-record) 2>/dev/null
exit 0
'
printf '%s' "$payload_text" >"$W/payload"
chmod 0755 "$W/payload"

# A small rootfs for the container tools, built here from Debian's
# busybox-static (a rootfs made by the test, nothing downloaded): built
# once per boot, copied for each cell. Only the applets the payloads use
# get a link (under TCG each ln costs ~50 ms, all 400 would cost 20 s).
mktemplate() {
	local r=$W/rootfs-template a
	rm -rf "$r"
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,var/tmp,mnt,usr/bin,usr/sbin}
	cp /bin/busybox "$r/bin/busybox"
	for a in sh ash readlink echo cat ls sleep true mount id ps; do
		ln -s busybox "$r/bin/$a"
	done
	printf '%s' "$payload_text" >"$r/payload"
	chmod 0755 "$r/payload"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
	echo 'root:x:0:' >"$r/etc/group"
	: >"$r/etc/hostname"
	: >"$r/etc/resolv.conf"
	: >"$r/etc/hosts"
}
mkrootfs() {
	rm -rf "$1"
	mkdir -p "${1%/*}"
	cp -a "$W/rootfs-template" "$1"
}
# rootfs_tar NAME: the rootfs as a tarball, $W/NAME-rootfs.tar (readable by
# all, for a rootless import), for the tools' "import"; prints its path.
rootfs_tar() {
	mkrootfs "$W/$1-rootfs"
	tar -C "$W/$1-rootfs" -cf "$W/$1-rootfs.tar" . &&
		chmod 0644 "$W/$1-rootfs.tar" && echo "$W/$1-rootfs.tar"
}
# record_ns PID: PID's namespaces as the payload's record, for the cells
# whose payload is a process read from outside (Chromium, Firefox).
record_ns() {
	local line=NS t
	for t in $NSTYPES; do line="$line $t=$(readlink "/proc/$1/ns/$t")"; done
	echo "$line" >"$W/record.tmp" && mv "$W/record.tmp" "$W/record"
}
# test_page: the local page the browsers load.
test_page() {
	printf '<html><body><p id="m">matrix-page-loaded</p></body></html>\n' >"$W/page.html"
	chmod 0644 "$W/page.html"
}

# ns_set LINE: the types in an "NS ..." line that differ from the guest's.
ns_set() {
	local t v set=
	for t in $NSTYPES; do
		v=$(printf '%s\n' "$1" | grep -o " $t=[^ ]*" | head -1)
		v=${v#* $t=}
		[ -n "$v" ] && [ "$v" != "${HOSTNS[$t]}" ] && set="$set $t"
	done
	echo "${set# }"
}

# The kernel's counts: "allowed REFUSED" summed over the calls.
stats() {
	[ $FORM = bpf ] && "$LSM" stats >"$STATS"
	[ -r "$STATS" ] || { echo "0 0"; return; }
	awk '$2 == "allowed" { a += $3 } $2 == "refused" { r += $3 }
	     END { print a + 0, r + 0 }' "$STATS"
}

# The documented row of a cell: "namespaces|vanilla|0|1|2|3|error|bpf",
# bpf being the column "stock kernel + BPF".
doc_row() {
	awk -F'|' -v id="\`$1\`" -v sect="$SECTION" '
		$0 == "## " sect { m = 1; next }
		m && /^## / { exit }
		m && $2 ~ "^ *" id " *$" {
			for (i = 3; i <= NF; i++) { gsub(/^ +| +$/, "", $i) }
			print $4 "|" $5 "|" $6 "|" $7 "|" $8 "|" $9 "|" $10 "|" $12; exit
		}' "$DOC"
}

# The documented verdict for this kernel from a field that is either one
# verdict or "6.1: V; 6.12: V".
doc_verdict() {
	local field=$1 part
	case $field in
	*"$KVER: "*)
		part=${field#*"$KVER: "}
		echo "${part%%;*}" ;;
	*) echo "$field" ;;
	esac
}

# The policy: the patched kernel's sysctl; or, on a stock kernel, the BPF
# form (pidns-lsm, attached by tests/guest/stock.sh), driven through its
# loader, its counters in the sysctl's format, its log lines in
# /run/pidns-lsm.log (FORM=bpf); or none (vanilla).
MODES= FORM=patch
LSM=$TOP/build/meson/userspace/pidns-lsm
if [ -w /proc/sys/kernel/pidns_coupling ]; then
	MODES="0 1 2 3"
elif [ ! -e /proc/sys/kernel/pidns_coupling ] && "$LSM" mode >/dev/null 2>&1; then
	MODES="0 1 2 3" FORM=bpf
	STATS=$W/bpf-stats
else
	MODES=vanilla
fi
klog() {
	if [ $FORM = bpf ]; then cat /run/pidns-lsm.log 2>/dev/null; else dmesg; fi
}
setmode() {
	[ "$MODES" = vanilla ] && return 0
	if [ $FORM = bpf ]; then
		"$LSM" mode "$1" || bail "cannot set the BPF form's mode $1"
		return 0
	fi
	echo "$1" >/proc/sys/kernel/pidns_coupling || bail "cannot set mode $1"
}
# On a patched kernel the counters must be readable: a verdict without
# them would silently lose "warned" and "refused".
[ "$MODES" = vanilla ] || [ $FORM = bpf ] || [ -r "$STATS" ] || bail "$STATS is not readable"

# run_cell ID MODE: run the cell's function, record, judge.
run_cell() {
	local id=$1 mode=$2 out=$W/$1.$2.out before after klog0 st line ran=no
	local set verdict allowed refused row want_ns want err col t
	[ "$(type -t "cell_$id")" = function ] || bail "no cell $id"
	row=$(doc_row "$id")
	[ -n "$row" ] || { tap 1 "$id mode $mode: the cell has a row in docs/compatibility.md"; return; }
	before=$(stats)
	klog0=$(klog | wc -l)
	rm -f "$W/record"
	# A bash of its own, so that a cell can be timed out: the functions
	# and the variables they use go with it.
	timeout -k 10 "${CELL_TIMEOUTS[$id]:-$CELL_TIMEOUT}" bash -c "$(declare -p W TARGET NSTYPES payload_text FP ROOT FIREFOX_PROCS);
		$(declare -f); cell_$id" >"$out" 2>&1 </dev/null
	st=$?
	after=$(stats)
	cleanup_cell "$id"
	allowed=$((${after% *} - ${before% *}))
	refused=$((${after#* } - ${before#* }))
	# nspawn's console is a pty: its lines end in CR.
	sed -i 's/\r$//' "$out"
	line=$(grep -m1 '^NS ' "$out")
	[ -z "$line" ] && [ -s "$W/record" ] && line=$(grep -m1 '^NS ' "$W/record")
	# A record counts only whole: every type with a namespace inode.
	if [ -n "$line" ]; then
		ran=yes
		for t in $NSTYPES; do
			[[ $line =~ \ $t=$t:\[[0-9]+\] ]] || ran=invalid
		done
	fi
	set=$(ns_set "$line")

	want_ns=${row%%|*}
	col=$(echo "$row" | cut -d'|' -f2-6)
	case $mode in
	vanilla) want=$(echo "$col" | cut -d'|' -f1) ;;
	0) want=$(echo "$col" | cut -d'|' -f2) ;;
	1) want=$(echo "$col" | cut -d'|' -f3) ;;
	2) want=$(echo "$col" | cut -d'|' -f4) ;;
	3) want=$(echo "$col" | cut -d'|' -f5) ;;
	esac
	want=$(doc_verdict "$want")
	err=$(echo "$row" | cut -d'|' -f7)
	err=${err#\`}
	err=${err%\`}
	# The BPF form on a stock kernel: the patch's verdict, but where the
	# column "stock kernel + BPF" names this mode ("2: error `TEXT`",
	# "3: VERDICT", separated by "; ") for a cause docs/policy.md lists.
	local bpf=${row##*|} entry bpfnote= unmeasured=
	if [ $FORM = bpf ]; then
		case $bpf in
		same) ;;
		""|"not measured")
			# Run it all the same: the verdict is what the entry needs.
			unmeasured=" [no \"stock kernel + BPF\" entry in docs/compatibility.md]" ;;
		*)
			while IFS= read -r entry; do
				case $entry in
				"$mode: error \`"*)
					err=${entry#"$mode: error \`"}
					err=${err%\`}
					bpfnote=" [stock kernel + BPF: error $err]" ;;
				"$mode: "*)
					want=${entry#"$mode: "}
					bpfnote=" [stock kernel + BPF: $want]" ;;
				esac
			done < <(printf '%s\n' "$bpf" | sed 's/; /\n/g') ;;
		esac
	fi

	if [ $ran = invalid ]; then
		verdict="invalid record: $line"
	elif [ $ran = yes ]; then
		verdict=runs
		[ "$refused" -gt 0 ] && verdict="runs after $refused refused"
		[ "$allowed" -gt 0 ] && verdict="runs, warned"
		[ "$st" -ne 0 ] && verdict="$verdict, exit $st"
	else
		verdict=fails
		[ "$refused" -gt 0 ] && verdict="fails, refused"
		[ "$allowed" -gt 0 ] && verdict="fails, warned"
		[ "$st" -eq 124 ] || [ "$st" -eq 137 ] && verdict="$verdict (timed out)"
	fi
	# The record keeps the verdict without the namespaces; the case
	# compares both: a payload that got other namespaces than the row says
	# (a sandbox that fell back to fewer, say) is "runs with SET".
	local base=$verdict
	[ $ran = yes ] && [ "${set:-none}" != "$(doc_verdict "$want_ns")" ] &&
		verdict="$verdict with ${set:-none}"

	local ok=0
	[ "$verdict" = "$want" ] && [ -z "$unmeasured" ] || ok=1
	if [ "$mode" = 2 ] && [ $ran = no ] && [ -n "$err" ] && [ "$err" != - ]; then
		grep -qF -- "$err" "$out" || ok=1
	fi
	tap $ok "$id, $KVER, mode $mode: $verdict (documented: $want)$bpfnote$unmeasured"
	local first
	# one line: without a tool's colours and carriage returns (nspawn's)
	first=$(grep -v '^NS ' "$out" | grep -m1 -E -i 'error|invalid|fail|denied|cannot|not permitted' |
		tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g' || true)
	note "exit $st; payload ran: $ran; namespaces not the guest's: ${set:-none}; stats: +$allowed allowed, +$refused refused"
	[ -n "$first" ] && note "the tool said: $first"
	klog | tail -n +$((klog0 + 1)) | grep 'pidns_coupling' | head -3 | sed 's/^/# kernel: /'
	if [ $ok -ne 0 ]; then
		note "documented: namespaces '$want_ns', verdict '$want', error '$err'"
		tail -15 "$out" | sed 's/^/#   /'
	fi
	# The record for tests/host/matrix-table, in the TAP stream (never
	# the console, where the kernel's lines could split it).
	printf '# matrix-record\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$KVER" "$mode" \
		"$base" "${set:-none}" "${first:0:200}" "$ROOT" "$FORM"
	RESULT[$id.$mode]="$base|${set:-none}"
}

# A cell's own cleanup, bounded: a hung podman or lxc-stop must not stall
# the boot.
# After each mode: nothing a cell started outlives it into the next mode.
# The patterns of pkill -f are anchored: the sweep's own command line
# (and timeout's) holds their text, and "pkill -f firefox-esr" killed the
# sweep half way, before k8s_unpin and Docker's containers.
FIREFOX_PROCS='^(/usr/lib/firefox-esr/)?firefox-esr( |$)'
sweep() {
	rm -f "$W/swept"
	timeout -k 5 180 bash -c "$(declare -f pm k8s_unpin); pm rm -af -t 0; pm pod rm -af
		for c in \$(lxc-ls -1 2>/dev/null); do lxc-stop -k -n \$c; done
		for rt in runc crun; do for c in \$(\$rt list -q 2>/dev/null); do \$rt delete -f \$c; done; done
		pkill -KILL -f '^/usr/lib/chromium/'
		pkill -KILL -f '$FIREFOX_PROCS'
		pkill -KILL -u matrix
		k8s_unpin
		[ -S /run/docker.sock ] && /usr/bin/docker rm -f \$(/usr/bin/docker ps -aq)
		: >$W/swept" >/dev/null 2>&1 </dev/null
	local st=$?
	[ -f "$W/swept" ] || note "the sweep after mode $mode did not finish (status $st)"
	return 0
}
cleanup_cell() {
	[ "$(type -t "clean_$1")" = function ] || return 0
	timeout -k 5 120 bash -c "$(declare -p W TARGET NSTYPES payload_text FP ROOT FIREFOX_PROCS); $(declare -f); clean_$1" \
		>/dev/null 2>&1 </dev/null
	return 0
}

# A container target for the joining cells: new pid, mnt, ipc, net
# (coupled, accepted in every mode), created again in each mode: a PID
# namespace created in mode 0 or 1 is only warned about in modes 2 and 3.
TARGET= NEED_TARGET=
start_target() {
	if [ -n "$TARGET" ]; then
		kill -KILL "$TARGET" 2>/dev/null
		TARGET=
	fi
	/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sleep infinity &
	local outer=$! i p
	for i in $(seq 300); do
		p=$(pgrep -P $outer sleep) && break
		sleep 0.1
	done
	[ -n "$p" ] || bail "the target container did not start"
	TARGET=$p
	export TARGET
}

# --- util-linux ---------------------------------------------------------
cell_unshare_p() { /usr/bin/unshare --pid --fork "$W/payload"; }
cell_unshare_pmin() { /usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc "$W/payload"; }
cell_nsenter_all() { /usr/bin/nsenter -t "$TARGET" --all "$W/payload"; }
cell_nsenter_p() { /usr/bin/nsenter -t "$TARGET" --pid "$W/payload"; }
# The policy's accepted edge: a host task that enters a running
# container's network namespace and executes there. And builders: a task
# that executes in the namespaces of a PID namespace it has for its
# children, without forking that PID namespace's init.
cell_nsenter_n() { /usr/bin/nsenter -t "$TARGET" --net "$W/payload"; }
cell_ip_netns_exec() {
	ip netns attach mxtarget "$TARGET" && ip netns exec mxtarget "$W/payload"
}
clean_ip_netns_exec() { ip netns delete mxtarget; }
cell_nsenter_all_nofork() { /usr/bin/nsenter -t "$TARGET" --all --no-fork "$W/payload"; }
# The payload forks more than once, which a PID namespace whose init has
# exited cannot give it: the builder executes a second unshare, which forks
# the payload as the init.
cell_unshare_pmin_nofork() {
	/usr/bin/unshare --pid --mount --ipc --net /usr/bin/unshare --fork "$W/payload"
}
# --- bubblewrap ---------------------------------------------------------
cell_bwrap_unshare_pid() { /usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid "$W/payload"; }
cell_bwrap_unshare_all() { /usr/bin/bwrap --dev-bind / / --proc /proc --unshare-all "$W/payload"; }
cell_bwrap_pidns() { /usr/bin/bwrap --dev-bind / / --pidns 3 "$W/payload" 3<"/proc/$TARGET/ns/pid"; }
# --- firejail -----------------------------------------------------------
cell_firejail() { /usr/bin/firejail --noprofile --quiet "$W/payload"; }
cell_firejail_net_none() { /usr/bin/firejail --noprofile --quiet --net=none "$W/payload"; }
# As its users run it: not as root (firejail is setuid). Without root it
# asks for no IPC namespace (main.c: NEWIPC "if (getuid() == 0 || arg_ipc)").
# matrix_user: what an administrator does for a user: a login shell
# (firejail refuses nologin accounts) and subordinate ids (newuidmap, for
# mmdebstrap and rootless podman). The guest's /etc is an overlay on tmpfs.
matrix_user() {
	grep -q '^matrix:' /etc/passwd || {
		echo 'matrix:x:1999:1999:matrix:/tmp:/bin/sh' >>/etc/passwd
		echo 'matrix:x:1999:' >>/etc/group
	}
	grep -q '^matrix:' /etc/subuid || echo 'matrix:200000:65536' >>/etc/subuid
	grep -q '^matrix:' /etc/subgid || echo 'matrix:200000:65536' >>/etc/subgid
}
cell_firejail_user_net_none() {
	# ... and allowed in firejail.users.
	matrix_user
	grep -qx matrix /etc/firejail/firejail.users 2>/dev/null ||
		echo matrix >>/etc/firejail/firejail.users
	setpriv --reuid=matrix --regid=matrix --clear-groups env HOME=/tmp \
		/usr/bin/firejail --noprofile --quiet --net=none "$W/payload"
}

# --- runc and crun: "runc spec"'s bundle over the busybox rootfs ---------
# jq edits only what a user edits: no terminal (the test has none), a
# writable root, the payload as the process; the host-network variant
# drops the network namespace, as Docker's --net=host does.
oci_bundle() {
	local b=$W/bundle-$1
	rm -rf "$b"
	mkdir -p "$b"
	mkrootfs "$b/rootfs"
	(cd "$b" && runc spec) || return 1
	jq --arg args "$2" '.process.terminal = false | .root.readonly = false |
		.process.args = ($args | split(" "))' "$b/config.json" >"$b/c.json" || return 1
	if [ "${3:-}" = hostnet ]; then
		jq '.linux.namespaces |= map(select(.type != "network"))' "$b/c.json" >"$b/config.json" ||
			return 1
	else
		mv "$b/c.json" "$b/config.json"
	fi
	echo "$b"
}
oci_run() {
	local rt=$1 b
	b=$(oci_bundle "$rt" /payload "${2:-}") || return 1
	"$rt" run --bundle "$b" "m-$rt-$$" </dev/null
}
oci_exec() {
	local rt=$1 b
	b=$(oci_bundle "$rt" "sleep 600") || return 1
	"$rt" run -d --bundle "$b" "m-$rt-x" </dev/null >/dev/null 2>"$W/oci-start.err" ||
		{ cat "$W/oci-start.err"; return 1; }
	"$rt" exec "m-$rt-x" /payload
}
oci_clean() {
	local c
	for c in $("$1" list -q 2>/dev/null); do "$1" delete -f "$c"; done
}
cell_runc_run() { oci_run runc; }
cell_runc_run_hostnet() { oci_run runc hostnet; }
cell_runc_exec() { oci_exec runc; }
cell_crun_run() { oci_run crun; }
cell_crun_run_hostnet() { oci_run crun hostnet; }
cell_crun_exec() { oci_exec crun; }
clean_runc_run() { oci_clean runc; }
clean_runc_run_hostnet() { oci_clean runc; }
clean_runc_exec() { oci_clean runc; }
clean_crun_run() { oci_clean crun; }
clean_crun_run_hostnet() { oci_clean crun; }
clean_crun_exec() { oci_clean crun; }

# --- CRIU: runc checkpoint and runc restore -----------------------------
# Debian's criu behind runc: "runc spec"'s bundle runs a sleep detached;
# runc checkpoint dumps it (and ends it), runc restore brings it back from
# the images, detached. A restore makes the namespaces again and execs
# nothing: the payload is the restored process, read from outside.
cell_criu() {
	local b pid
	b=$(oci_bundle runc "sleep 600") || return 1
	# A detached container keeps runc's standard streams: /dev/null, which
	# criu can dump (a file of the test's it would have to be told about);
	# runc's own errors go to its log.
	rm -rf "$W/criu-img" "$W/criu-work" "$W/criu-runc.log"
	runc --log "$W/criu-runc.log" run -d --bundle "$b" m-criu </dev/null >/dev/null 2>&1 ||
		{ cat "$W/criu-runc.log"; return 1; }
	# On a failure, criu's own errors from its log, then the log's end.
	if ! runc checkpoint --image-path "$W/criu-img" --work-path "$W/criu-work" m-criu; then
		grep -h 'Error (' "$W/criu-work/dump.log"
		tail -20 "$W/criu-work/dump.log"
		return 1
	fi
	if ! runc restore -d --bundle "$b" --image-path "$W/criu-img" \
		--work-path "$W/criu-work" m-criu </dev/null; then
		grep -h 'Error (' "$W/criu-work/restore.log"
		tail -20 "$W/criu-work/restore.log"
		return 1
	fi
	pid=$(runc state m-criu | jq -r .pid) && [ "$pid" -gt 0 ] || return 1
	record_ns "$pid"
}
clean_criu() { oci_clean runc; }

# --- podman, rootful, no registry: an image imported from a tarball -----
# Under the test init, podman's cgroupfs manager; with systemd as PID 1
# (the "pods" group), podman's default, systemd's.
pm() {
	local cg=--cgroup-manager=cgroupfs
	[ -d /run/systemd/system ] && cg=
	podman ${cg:+"$cg"} --events-backend=file "$@"
}
podman_image() {
	local tar
	pm image exists localhost/matrix:latest && return 0
	tar=$(rootfs_tar podman) && pm import "$tar" localhost/matrix:latest >/dev/null
}
# podman_target NAME: a detached container that waits, to be joined.
podman_target() {
	pm run -d --network=none --name "$1" localhost/matrix sleep 600 >/dev/null
}
cell_podman_run_default() { podman_image && pm run --rm localhost/matrix /payload; }
cell_podman_run_none() { podman_image && pm run --rm --network=none localhost/matrix /payload; }
cell_podman_run_host() { podman_image && pm run --rm --network=host localhost/matrix /payload; }
cell_podman_pod() {
	podman_image || return 1
	pm pod create --network=none --name matrixpod >/dev/null || return 1
	pm run --rm --pod matrixpod localhost/matrix /payload
}
cell_podman_exec() {
	podman_image || return 1
	podman_target matrixexec || return 1
	pm exec matrixexec /payload
}
# What a pod does, without the pod: a container that joins another's
# network and IPC namespaces and gets a PID namespace of its own.
cell_podman_join_netipc() {
	podman_image || return 1
	podman_target matrixinfra || return 1
	pm run --rm --network=container:matrixinfra --ipc=container:matrixinfra localhost/matrix /payload
}
# --pid=container:X: crun makes the new container's namespaces, then joins
# X's PID namespace.
cell_podman_pid_container() {
	podman_image || return 1
	podman_target matrixpid || return 1
	pm run --rm --pid=container:matrixpid localhost/matrix /payload
}
clean_podman_pid_container() { pm rm -f -t 0 matrixpid; }
# Pods as users make them, on podman's default network (the "pods" group:
# under the test init podman 4's pod cannot start its infra container, so
# on Debian 12 they run with systemd as PID 1). The default pod shares
# cgroup, IPC, network and UTS: the app container joins the infra
# container's and gets a PID namespace of its own. With --share=+pid
# (Kubernetes' shareProcessNamespace) it joins the infra's PID namespace
# too.
cell_podman_pod_default() {
	podman_image || return 1
	pm pod create --name matrixpoddef >/dev/null || return 1
	pm run --rm --pod matrixpoddef localhost/matrix /payload
}
clean_podman_pod_default() { pm pod rm -f matrixpoddef; }
cell_podman_pod_sharepid() {
	podman_image || return 1
	pm pod create --share=+pid --name matrixpodpid >/dev/null || return 1
	pm run --rm --pod matrixpodpid localhost/matrix /payload
}
clean_podman_pod_sharepid() { pm pod rm -f matrixpodpid; }
# Rootless, as a user with subordinate ids and a runtime directory, its
# own image store, podman's default network for a user (slirp4netns in
# 4.3: a network namespace that podman makes and pins under
# $XDG_RUNTIME_DIR/netns, which the container's init joins), and with
# --userns=keep-id.
pmu() {
	setpriv --reuid=matrix --regid=matrix --init-groups env HOME=/tmp/matrix-home \
		XDG_RUNTIME_DIR=/run/user/1999 \
		podman --cgroup-manager=cgroupfs --events-backend=file "$@"
}
podman_user_image() {
	local tar
	matrix_user
	# A host with a network, as a user's has: pasta (podman 5's rootless
	# default) copies the host's routes into the container. A dummy
	# interface, a documentation-range address and a default route;
	# nothing leaves the guest, which has no network card.
	if ! ip route show default | grep -q . && ip link add pidns0 type dummy 2>/dev/null; then
		ip addr add 192.0.2.2/24 dev pidns0
		ip link set pidns0 up
		ip route add default via 192.0.2.1 dev pidns0
	fi
	mkdir -p /tmp/matrix-home /run/user/1999
	chown matrix:matrix /tmp/matrix-home /run/user/1999
	chmod 0700 /run/user/1999
	pmu image exists localhost/matrix:latest && return 0
	tar=$(rootfs_tar podman-user) && pmu import "$tar" localhost/matrix:latest >/dev/null
}
cell_podman_rootless() { podman_user_image && pmu run --rm localhost/matrix /payload; }
cell_podman_keep_id() { podman_user_image && pmu run --rm --userns=keep-id localhost/matrix /payload; }
# conmon and rootless podman's pause process outlive a cell: end them all.
podman_user_clean() { pmu rm -af -t 0; pkill -KILL -u matrix; return 0; }
clean_podman_rootless() { podman_user_clean; }
clean_podman_keep_id() { podman_user_clean; }
clean_podman_join_netipc() { pm rm -f -t 0 matrixinfra; }
clean_podman_pod() { pm pod rm -f matrixpod; }
clean_podman_exec() { pm rm -f -t 0 matrixexec; }

# --- Docker: dockerd and containerd from Debian, started in the guest ----
# Started once per boot, before the first mode, as the docker.service unit
# would (its ExecStart is "dockerd -H fd://": here a Unix socket), with the
# daemon's defaults: the overlay2 driver, the default bridge with its
# iptables rules (Debian 12's iptables, nf_tables backend), runc. Its state
# goes on tmpfs: overlay2 refuses an overlayfs (the guest's /var) as its
# upper layer. /usr/bin/docker, not whatever client comes first on PATH.
dk() { /usr/bin/docker "$@"; }
docker_setup() {
	local d i tar
	for d in /var/lib/docker /var/lib/containerd; do
		mkdir -p "$d"
		mountpoint -q "$d" || mount -t tmpfs -o mode=0711 tmpfs "$d" || return 1
	done
	/usr/sbin/dockerd -H unix:///run/docker.sock >"$W/dockerd.log" 2>&1 &
	for i in $(seq 180); do
		dk version >/dev/null 2>&1 && break
		kill -0 $! 2>/dev/null || { echo "dockerd exited"; tail -20 "$W/dockerd.log"; return 1; }
		sleep 1
	done
	dk version --format 'docker {{.Server.Version}}, containerd {{range .Server.Components}}{{if eq .Name "containerd"}}{{.Version}}{{end}}{{end}}, runc {{range .Server.Components}}{{if eq .Name "runc"}}{{.Version}}{{end}}{{end}}' || {
		tail -20 "$W/dockerd.log"; return 1; }
	dk info --format 'storage driver {{.Driver}}, cgroup driver {{.CgroupDriver}}, default runtime {{.DefaultRuntime}}'
	tar=$(rootfs_tar docker) && dk import "$tar" matrix:latest >/dev/null
}
cell_docker_run() { dk run --rm matrix /payload; }
cell_docker_none() { dk run --rm --network=none matrix /payload; }
cell_docker_host() { dk run --rm --network=host matrix /payload; }
cell_docker_ipc_host() { dk run --rm --ipc=host matrix /payload; }
# docker_target NAME: a detached container that waits, to be joined.
docker_target() { dk run -d --name "$1" matrix sleep 600 >/dev/null; }
cell_docker_net_container() {
	docker_target mxinfra || return 1
	dk run --rm --network=container:mxinfra matrix /payload
}
cell_docker_pid_container() {
	docker_target mxpid || return 1
	dk run --rm --pid=container:mxpid matrix /payload
}
cell_docker_exec() { docker_target mxexec && dk exec mxexec /payload; }
# dk_build TAG [OPTION...]: "docker build" of a RUN step, with the builder
# the client picks by default; the cell says which one ran.
dk_build() {
	local tag=$1 ctx=$W/docker-build st
	shift
	rm -rf "$ctx"
	mkdir -p "$ctx"
	printf 'FROM matrix\nRUN /payload\n' >"$ctx/Dockerfile"
	dk build --no-cache --rm "$@" -t "$tag" "$ctx" >"$W/docker-build.out" 2>&1
	st=$?
	if grep -q '^Sending build context' "$W/docker-build.out"; then
		echo "builder: legacy (the daemon's classic builder)"
	elif grep -q '^#[0-9]' "$W/docker-build.out"; then
		echo "builder: BuildKit"
	fi
	cat "$W/docker-build.out"
	# BuildKit prefixes a step's output ("#6 0.41 NS ...")
	grep -o 'NS pid=.*' "$W/docker-build.out" | head -1 >"$W/record"
	return $st
}
cell_docker_build() { dk_build mxbuild; }
# The RUN step on the host's network.
cell_docker_build_host() { dk_build mxbuildhost --network=host; }
clean_docker_net_container() { dk rm -f mxinfra; }
clean_docker_pid_container() { dk rm -f mxpid; }
clean_docker_exec() { dk rm -f mxexec; }
clean_docker_build() { dk image rm -f mxbuild; }
clean_docker_build_host() { dk image rm -f mxbuildhost; }

# --- The Kubernetes pattern, without Kubernetes --------------------------
# What the CRI does for a pod: a network namespace made and pinned on the
# host ("ip netns add", as CNI's netns helper does), an IPC namespace pinned
# the same way (cri-o's pinns; containerd lets the sandbox create its IPC
# namespace, which changes no verdict: the network is still joined), then
# the sandbox container, which joins
# both by path and creates the rest (runc's bootstrap setns()es, then
# unshare()s). The app containers join the sandbox's network and IPC; with
# shareProcessNamespace its PID namespace too. The payload is the
# sandbox's process here (in a pod it is the pause binary), or the app's.
k8s_pod() {
	k8s_unpin
	ip netns add mxpod || return 1
	mkdir -p /run/ipcns
	: >/run/ipcns/mxpod
	/usr/bin/unshare --ipc=/run/ipcns/mxpod true
}
# k8s_bundle RUNTIME NAME ARGS [PIDNS]: a runc-spec bundle on the pod's
# network and IPC (and PIDNS's PID namespace, if given).
k8s_bundle() {
	local b=$W/k8s-$1-$2 ns
	rm -rf "$b"
	mkdir -p "$b"
	mkrootfs "$b/rootfs"
	(cd "$b" && runc spec) || return 1
	ns='map(if .type == "network" then .path = "/run/netns/mxpod"
		elif .type == "ipc" then .path = "/run/ipcns/mxpod"
		elif .type == "pid" and $pid != "" then .path = $pid
		else . end)'
	jq --arg args "$3" --arg pid "${4:-}" '.process.terminal = false |
		.root.readonly = false | .process.args = ($args | split(" ")) |
		.linux.namespaces |= '"$ns" "$b/config.json" >"$b/c.json" &&
		mv "$b/c.json" "$b/config.json" && echo "$b"
}
k8s_sandbox() {
	local rt=$1 b
	k8s_pod || return 1
	b=$(k8s_bundle "$rt" sandbox "sleep 600") || return 1
	"$rt" run -d --bundle "$b" mx-sandbox </dev/null >/dev/null 2>"$W/k8s-sandbox.err" ||
		{ echo "the pod sandbox did not start:"; cat "$W/k8s-sandbox.err"; return 1; }
}
k8s_sandbox_cell() {
	local rt=$1 b
	k8s_pod || return 1
	b=$(k8s_bundle "$rt" sandbox /payload) || return 1
	"$rt" run --bundle "$b" mx-sandbox </dev/null
}
k8s_app_cell() {
	local rt=$1 b pid=
	k8s_sandbox "$rt" || return 1
	[ "${2:-}" = sharepid ] &&
		pid=/proc/$("$rt" state mx-sandbox | jq -r .pid)/ns/pid
	b=$(k8s_bundle "$rt" app /payload "$pid") || return 1
	"$rt" run --bundle "$b" mx-app </dev/null
}
k8s_unpin() {
	ip netns delete mxpod
	umount /run/ipcns/mxpod
	rm -f /run/ipcns/mxpod
} 2>/dev/null
k8s_clean() { oci_clean "$1"; k8s_unpin; }
cell_k8s_sandbox_runc() { k8s_sandbox_cell runc; }
cell_k8s_app_runc() { k8s_app_cell runc; }
cell_k8s_sharepid_runc() { k8s_app_cell runc sharepid; }
cell_k8s_sandbox_crun() { k8s_sandbox_cell crun; }
cell_k8s_app_crun() { k8s_app_cell crun; }
cell_k8s_sharepid_crun() { k8s_app_cell crun sharepid; }
clean_k8s_sandbox_runc() { k8s_clean runc; }
clean_k8s_app_runc() { k8s_clean runc; }
clean_k8s_sharepid_runc() { k8s_clean runc; }
clean_k8s_sandbox_crun() { k8s_clean crun; }
clean_k8s_app_crun() { k8s_clean crun; }
clean_k8s_sharepid_crun() { k8s_clean crun; }

# --- LXC: privileged containers from a directory rootfs ------------------
lxc_config() {
	local name=$1 rootfs=/var/lib/lxc/$1/rootfs
	rm -rf "/var/lib/lxc/$name"
	mkdir -p "/var/lib/lxc/$name"
	mkrootfs "$rootfs"
	cat >"/var/lib/lxc/$name/config" <<-EOF
	lxc.uts.name = $name
	lxc.rootfs.path = dir:$rootfs
	lxc.mount.auto = proc:mixed sys:ro cgroup:mixed
	lxc.console.path = none
	lxc.tty.max = 0
	lxc.pty.max = 8
	lxc.log.level = ERROR
	EOF
}
# lxc_fg NAME CONFIG-LINE: a container with that line, the payload in
# the foreground. Its record is also left in the rootfs (the console is
# none).
lxc_fg() {
	local st=0
	lxc_config "$1"
	echo "$2" >>"/var/lib/lxc/$1/config"
	lxc-start -n "$1" -F -- /payload </dev/null || st=$?
	cp "/var/lib/lxc/$1/rootfs/ns-record" "$W/record" 2>/dev/null
	return $st
}
cell_lxc_empty_net() { lxc_fg mx-empty "lxc.net.0.type = empty"; }
cell_lxc_share_net() { lxc_fg mx-share "lxc.namespace.share.net = 1"; }
# The host's network the common way: no network section of its own.
cell_lxc_net_none() { lxc_fg mx-none "lxc.net.0.type = none"; }
cell_lxc_attach() {
	lxc_config mx-attach
	echo "lxc.net.0.type = empty" >>/var/lib/lxc/mx-attach/config
	lxc-start -n mx-attach -d -- sleep 600 </dev/null || return 1
	lxc-wait -n mx-attach -s RUNNING -t 60 || return 1
	lxc-attach -n mx-attach -- /payload </dev/null
}
# An unprivileged container: started by root with an ID map, so the
# container's root is uid 100000 outside (LXC's own "unprivileged").
cell_lxc_unpriv() {
	lxc_config mx-unpriv
	cat >>/var/lib/lxc/mx-unpriv/config <<-EOF
	lxc.net.0.type = empty
	lxc.idmap = u 0 100000 65536
	lxc.idmap = g 0 100000 65536
	EOF
	# What an administrator does for it: subordinate IDs for root (the
	# guest's /etc is an overlay on tmpfs), the rootfs owned by the map.
	local f
	for f in /etc/subuid /etc/subgid; do
		grep -q '^root:100000:65536$' "$f" || echo 'root:100000:65536' >>"$f"
	done
	chown -R 100000:100000 /var/lib/lxc/mx-unpriv/rootfs
	chmod 0755 /var/lib/lxc/mx-unpriv
	lxc-start -n mx-unpriv -F -- /payload </dev/null || return $?
	cp /var/lib/lxc/mx-unpriv/rootfs/ns-record "$W/record" 2>/dev/null
}
clean_lxc_attach() { lxc-stop -k -n mx-attach; }

# --- Incus (Debian 13): incusd started in the guest ---------------------
# Started once per boot, before the first mode, as incus.service's
# ExecStart (/usr/libexec/incus/startup) starts it, after lxcfs, as
# lxcfs.service starts that; then set up as "incus admin init --minimal"
# sets it up: a "dir" storage pool and the incusbr0 bridge (NAT, dnsmasq)
# on the default profile. Its state goes on tmpfs. The containers are
# Incus's default, unprivileged (an ID map of their own), from an image
# the test builds (metadata.yaml and the busybox rootfs; no image server).
# The image's init runs the payload, which leaves its record in the
# rootfs, then waits.
ic() { /usr/bin/incus "$@"; }
incus_setup() {
	local d=$W/incus-image i
	mkdir -p /var/lib/incus /var/log/incus
	mountpoint -q /var/lib/incus || mount -t tmpfs -o mode=0711 tmpfs /var/lib/incus || return 1
	mkdir -p /var/lib/lxcfs
	/usr/bin/lxcfs /var/lib/lxcfs >"$W/lxcfs.log" 2>&1 &
	for i in $(seq 60); do
		mountpoint -q /var/lib/lxcfs && break
		sleep 0.5
	done
	mountpoint -q /var/lib/lxcfs || { echo "lxcfs did not mount"; cat "$W/lxcfs.log"; return 1; }
	PATH=/usr/libexec/incus:$PATH /usr/libexec/incus/incusd --group incus-admin \
		--logfile=/var/log/incus/incus.log >"$W/incusd.log" 2>&1 &
	/usr/libexec/incus/incusd waitready --timeout=300 ||
		{ echo "incusd did not start"; tail -20 "$W/incusd.log" /var/log/incus/incus.log; return 1; }
	ic admin init --minimal || return 1
	ic profile create nonet && ic profile device add nonet root disk path=/ pool=default ||
		return 1
	rm -rf "$d"
	mkdir -p "$d"
	mkrootfs "$d/rootfs"
	printf '#!/bin/sh\n/payload\nexec /bin/sleep 600\n' >"$d/rootfs/sbin/init"
	chmod 0755 "$d/rootfs/sbin/init"
	printf 'architecture: x86_64\ncreation_date: %s\nproperties:\n  description: matrix\n  os: busybox\n' \
		"$(date +%s)" >"$d/metadata.yaml"
	tar -C "$d" -cf "$W/incus-image.tar" metadata.yaml rootfs &&
		ic image import "$W/incus-image.tar" --alias matrix || return 1
	ic version
	awk '$2 == "/var/lib/lxcfs" { print "lxcfs: " $1 " on " $2 ", " $3 }' /proc/mounts
	ic info | grep -E '^ *(driver|driver_version|storage|firewall|idmapped_mounts|unpriv_binfmt|pidfds):' |
		tr -s ' \n' ' '
	echo
	ic network list -f csv
}
# incus_launch NAME [ARGS]: a container; its record is the payload's
# file in the rootfs, written by the container's init.
incus_launch() {
	local name=$1 i pool=/var/lib/incus/storage-pools/default/containers
	shift
	# On a failure, liblxc's own lines from the container's log too.
	ic launch -q matrix "$name" "$@" </dev/null ||
		{ ic info --show-log "$name" 2>&1 | grep ' ERROR ' | head -3; return 1; }
	for i in $(seq 120); do
		[ -s "$pool/$name/rootfs/ns-record" ] && break
		sleep 0.5
	done
	cp "$pool/$name/rootfs/ns-record" "$W/record" 2>/dev/null ||
		{ echo "no record from the container's init"; ic info --show-log "$name" | tail -20; return 1; }
}
cell_incus_launch() { incus_launch mx-launch; }
cell_incus_none() { incus_launch mx-none -p nonet; }
cell_incus_privileged() { incus_launch mx-priv -c security.privileged=true; }
cell_incus_exec() {
	incus_launch mx-exec || return 1
	rm -f "$W/record"
	ic exec mx-exec -- /payload </dev/null
}
clean_incus_launch() { ic delete -f mx-launch; }
clean_incus_none() { ic delete -f mx-none; }
clean_incus_privileged() { ic delete -f mx-priv; }
clean_incus_exec() { ic delete -f mx-exec; }

# --- systemd-nspawn ------------------------------------------------------
# --keep-unit: no systemd in the guest to make a scope unit.
nspawn_run() {
	mkrootfs "$W/nspawn-root"
	systemd-nspawn -q --register=no --keep-unit "$@" -D "$W/nspawn-root" /payload </dev/null
}
cell_nspawn() { nspawn_run; }
cell_nspawn_private_net() { nspawn_run --private-network; }

# --- Chromium, headless, as an unprivileged user, sandbox on -------------
# The payload is the renderer: its namespaces are read from outside while
# the page loads (the browser prints the page with --dump-dom and exits).
chromium_run() {
	local home=$W/chromium-home
	rm -rf "$home"
	mkdir -p "$home"
	chown nobody:nogroup "$home"
	test_page
	setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$home" \
		chromium --headless=new --no-first-run --disable-gpu --user-data-dir="$home/profile" \
		--disable-extensions --disable-component-update --disable-background-networking \
		--disable-sync --disable-default-apps --no-default-browser-check --mute-audio \
		"$@" --dump-dom "file://$W/page.html" >"$W/chromium.dom" 2>"$W/chromium.err" &
	local pid=$! r= p
	while kill -0 $pid 2>/dev/null; do
		for p in $(pgrep -f -- '^/usr/lib/chromium/chromium .*--type=renderer'); do
			descends "$p" "$pid" || continue
			r=$(readlink /proc/$p/ns/pid) || continue
			record_ns "$p"
			break
		done
		[ -s "$W/record" ] && break
		sleep 0.05
	done
	wait $pid
	local st=$?
	cat "$W/chromium.err"
	grep -q matrix-page-loaded "$W/chromium.dom" || { echo "chromium: the page did not load (exit $st)"; rm -f "$W/record"; return 1; }
	return $st
}
# descends PID ANCESTOR: whether PID is ANCESTOR's descendant (PPid as the
# guest's init sees it, across the sandbox's PID namespaces).
descends() {
	local p=$1 n
	while [ "$p" -gt 1 ]; do
		[ "$p" = "$2" ] && return 0
		n=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
		[ -n "$n" ] || return 1
		p=$n
	done
	return 1
}
chromium_clean() {
	local i
	pkill -KILL -f -- '^/usr/lib/chromium/'
	for i in $(seq 100); do
		pgrep -f -- '^/usr/lib/chromium/' >/dev/null || return 0
		sleep 0.1
	done
	return 1
}
cell_chromium_userns() { chromium_run; }
cell_chromium_suid() { chromium_run --disable-namespace-sandbox; }
clean_chromium_userns() { chromium_clean; }
clean_chromium_suid() { chromium_clean; }

# --- Firefox ESR, headless, as an unprivileged user, sandbox on ----------
# As the Chromium cells: the payload is the first content process of a tab
# ("-contentproc ... tab"), whose namespaces are read from outside while
# the page loads (--screenshot loads it and exits). Firefox probes for
# user namespaces at every start (clone(CLONE_NEWUSER), then
# unshare(CLONE_NEWPID) in the child) and, if the probe fails, starts its
# children with a plain fork(). The record also says whether the tab was
# chrooted (Firefox's chroot helper leaves it in a /proc/N/fdinfo).
firefox_run() {
	local home=$W/firefox-home pid p root
	rm -rf "$home"
	mkdir -p "$home/profile"
	chown -R nobody:nogroup "$home"
	test_page
	setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$home" \
		firefox-esr --headless --no-remote --profile "$home/profile" \
		--screenshot "$home/shot.png" "file://$W/page.html" >"$W/firefox.out" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		for p in $(pgrep -f -- '^/usr/lib/firefox-esr/firefox-esr -contentproc .* tab$'); do
			descends "$p" "$pid" || continue
			# after the launch: the tab's own program; its sandbox
			# chroots it once it starts (a while later), if it does
			[ "$(readlink "/proc/$p/exe")" = /usr/lib/firefox-esr/firefox-esr ] || continue
			# its namespaces are the clone()'s: final from the exec on
			record_ns "$p"
			root=/
			while kill -0 "$p" 2>/dev/null && [ ! -s "$home/shot.png" ]; do
				root=$(readlink "/proc/$p/root") || { root="unknown (the tab ended)"; break; }
				[ "$root" != / ] && break
				sleep 0.1
			done
			echo "firefox: the tab's root is $root"
			break
		done
		[ -s "$W/record" ] && break
		sleep 0.05
	done
	wait $pid
	local st=$?
	grep -v '^\*\*\* You are running in headless mode' "$W/firefox.out" | head -20
	[ -s "$home/shot.png" ] || { echo "firefox: the page was not rendered (exit $st)"; rm -f "$W/record"; return 1; }
	return $st
}
firefox_clean() { pkill -KILL -f -- "$FIREFOX_PROCS"; sleep 0.5; return 0; }
cell_firefox() { firefox_run; }
clean_firefox() { firefox_clean; }

# --- WebKitGTK's sandbox: Epiphany under Xvfb, as a user -----------------
# WebKitGTK starts its web processes through bubblewrap. The payload is
# the web process that renders the page, read from outside; that the page
# was read at all is its access time (set to 0 before, and a read moves
# it on tmpfs). Epiphany keeps running: the cell ends it once it has both.
epiphany_run() {
	local home=$W/epiphany-home pid p i read=
	rm -rf "$home"
	mkdir -p "$home"
	chown nobody:nogroup "$home"
	test_page
	touch -a -d @0 "$W/page.html"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$home" \
		XDG_RUNTIME_DIR="$home" dbus-run-session -- xvfb-run -a \
		epiphany --private-instance "file://$W/page.html" >"$W/epiphany.out" 2>&1 &
	pid=$!
	for i in $(seq 1800); do
		kill -0 $pid 2>/dev/null || break
		if [ ! -s "$W/record" ]; then
			for p in $(pgrep -f -- 'WebKitWebProcess'); do
				descends "$p" "$pid" || continue
				[ "$(readlink "/proc/$p/exe")" != /usr/bin/bwrap ] || continue
				record_ns "$p"
				echo "epiphany: the web process is $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-120)"
				break
			done
		fi
		[ "$(stat -c %X "$W/page.html")" != 0 ] && read=1
		[ -s "$W/record" ] && [ -n "$read" ] && break
		sleep 0.1
	done
	pkill -KILL -P $pid; pkill -KILL -u nobody; kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	head -20 "$W/epiphany.out"
	[ -n "$read" ] || { echo "epiphany: the page was never read"; rm -f "$W/record"; return 1; }
	return 0
}
cell_epiphany() { epiphany_run; }
clean_epiphany() { pkill -KILL -u nobody; return 0; }

# --- Debian's build tools, as a user ------------------------------------
# mmdebstrap --mode=unshare (its default for a user), offline: one empty
# package in a local repository that the cell builds (copy://, as the
# manual says for a repository outside the chroot), --variant=extract (no
# dpkg needed in the target). The payload is a setup hook, which runs in
# the namespaces mmdebstrap made for the build.
cell_mmdebstrap() {
	local d=$W/mmdebstrap
	matrix_user
	rm -rf "$d"
	mkdir -p "$d/pkg/DEBIAN" "$d/repo"
	printf 'Package: pidns-dummy\nVersion: 1\nArchitecture: all\nMaintainer: pidns-coupling <dev@pidns-coupling.invalid>\nDescription: an empty package\n' \
		>"$d/pkg/DEBIAN/control"
	dpkg-deb -b "$d/pkg" "$d/repo/pidns-dummy_1_all.deb" >/dev/null &&
		(cd "$d/repo" && dpkg-scanpackages . /dev/null >Packages 2>/dev/null) || return 1
	chown -R matrix:matrix "$d"
	setpriv --reuid=matrix --regid=matrix --clear-groups env HOME="$d" TMPDIR="$d" \
		mmdebstrap --mode=unshare --variant=extract --include=pidns-dummy \
		--setup-hook="$W/payload" bookworm "$d/out.tar" \
		"deb [trusted=yes] copy://$d/repo ./"
}

# sbuild --chroot-mode=unshare and autopkgtest-virt-unshare, as a
# developer runs them: the chroot tarball that mmdebstrap made
# (qemu/mkroot --buildd, the suite of the root the guest booted), a source
# package the cell makes, whose build runs the payload. Offline: no apt
# update or upgrade (sbuild's options for that), nothing to download
# (the chroot holds build-essential, and fakeroot and apt-utils, which the
# tools install). The payload runs in the build's namespaces, where sbuild
# adds a network namespace; the namespaces without one are the rest of
# the session (apt, dpkg), which the kernel's log and counters show.
# debian_build DIR: DIR's source package and the user's home made; prints
# the build chroot of the root's suite.
debian_build() {
	local tar=/run/pidns-chroots/$ROOT-amd64.tar
	[ -r "$tar" ] || { echo "error: no build chroot $tar (qemu/mkroot --buildd $ROOT)" >&2; return 1; }
	debian_source "$1" || return 1
	mkdir -p "$W/home" && chown matrix:matrix "$W/home" && echo "$tar"
}
# debian_source DIR: DIR/pidns-hello_1.dsc, made as the matrix user.
debian_source() {
	local d=$1 s=$1/pidns-hello
	matrix_user
	rm -rf "$d"
	mkdir -p "$s/debian/source" "$s/debian/tests"
	printf '%s\n' 'Source: pidns-hello' 'Section: misc' 'Priority: optional' \
		'Maintainer: pidns-coupling <dev@pidns-coupling.invalid>' \
		'Standards-Version: 4.6.2' 'Rules-Requires-Root: no' '' \
		'Package: pidns-hello' 'Architecture: all' \
		'Description: a package whose build prints its namespaces' \
		' Made by the pidns-coupling matrix (tests/guest/matrix.sh).' >"$s/debian/control"
	printf '%s\n' 'pidns-hello (1) unstable; urgency=medium' '' '  * The matrix cell.' '' \
		' -- pidns-coupling <dev@pidns-coupling.invalid>  Sat, 05 Dec 2026 00:00:00 +0000' \
		>"$s/debian/changelog"
	echo '3.0 (native)' >"$s/debian/source/format"
	printf '%s\n' '#!/usr/bin/make -f' 'build build-arch build-indep:' '	sh debian/payload' \
		'binary binary-arch binary-indep: build' '	mkdir -p debian/tmp/DEBIAN' \
		'	dpkg-gencontrol -ppidns-hello -Pdebian/tmp' '	dpkg-deb -b debian/tmp ..' \
		'clean:' '	rm -rf debian/tmp debian/files' >"$s/debian/rules"
	chmod 0755 "$s/debian/rules"
	printf '%s' "$payload_text" >"$s/debian/payload"
	printf '%s\n' 'Test-Command: sh debian/payload' 'Depends: dash' >"$s/debian/tests/control"
	chown -R matrix:matrix "$d"
	(cd "$d" && setpriv --reuid=matrix --regid=matrix --clear-groups \
		dpkg-source -b pidns-hello >/dev/null)
}
as_matrix() {
	setpriv --reuid=matrix --regid=matrix --clear-groups env HOME="$W/home" TMPDIR=/tmp "$@"
}
cell_sbuild() {
	local d=$W/sbuild tar st
	tar=$(debian_build "$d") || return 1
	(cd "$d" && as_matrix sbuild --chroot-mode=unshare --chroot="$tar" --dist="$ROOT" \
		--no-apt-update --no-apt-upgrade --no-apt-distupgrade \
		--no-run-lintian --no-run-piuparts --no-run-autopkgtest pidns-hello_1.dsc) \
		>"$d/sbuild.out" 2>&1
	st=$?
	# What sbuild printed, less its warning that the chroot cannot
	# resolve the guest's name (offline, every time); then, as sbuild
	# writes its log to a file when its output is not a terminal, the
	# log's errors ("E: ") and the whole log.
	grep -v '^hostname: Temporary failure in name resolution$' "$d/sbuild.out"
	grep '^E: ' "$d"/pidns-hello_1_amd64.build 2>/dev/null
	cat "$d"/pidns-hello_1_amd64.build 2>/dev/null
	return $st
}
cell_autopkgtest() {
	local d=$W/autopkgtest tar
	tar=$(debian_build "$d") || return 1
	as_matrix autopkgtest "$d/pidns-hello/" -- unshare --tarball "$tar" --release "$ROOT" --arch amd64
}
# Whatever a refused session left unpacked (sbuild's and autopkgtest's
# unpack directories belong to the user's subordinate ids).
clean_sbuild() { pkill -KILL -u matrix; rm -rf /tmp/tmp.* /tmp/autopkgtest*; }
clean_autopkgtest() { clean_sbuild; }

# --- flatpak: a runtime and an app made from the guest's own files -------
# As flatpak's own tests do (tests/make-test-runtime.sh, make-test-app.sh),
# but from busybox-static: exported with build-export into a local OSTree
# repository, installed from it into a --user installation under $W, and
# run without D-Bus. The app's command is the payload.
FP=$W/flatpak
fp() {
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME="$FP/home" \
		XDG_RUNTIME_DIR="$FP/run" XDG_DATA_HOME="$FP/data" \
		XDG_CACHE_HOME="$FP/cache" XDG_CONFIG_HOME="$FP/config" \
		FLATPAK_USER_DIR="$FP/user" FLATPAK_SYSTEM_DIR="$FP/system" \
		flatpak "$@"
}
flatpak_setup() {
	local arch r=$FP/build/runtime a=$FP/build/app
	rm -rf "$FP"
	mkdir -p "$FP"/{home,run,user,cache,config,data,system} "$r/usr/bin" "$r/files" "$a/files/bin"
	chmod 0700 "$FP/run"
	arch=$(flatpak --default-arch) || return 1
	# A runtime's content is its usr/ (mounted at /usr); files/ must exist.
	printf '[Runtime]\nname=org.pidns.Platform\nruntime=org.pidns.Platform/%s/master\nsdk=org.pidns.Platform/%s/master\n' \
		"$arch" "$arch" >"$r/metadata"
	cp /bin/busybox "$r/usr/bin/busybox"
	ln -s busybox "$r/usr/bin/sh"
	ln -s busybox "$r/usr/bin/readlink"
	printf '[Application]\nname=org.pidns.Payload\nruntime=org.pidns.Platform/%s/master\nsdk=org.pidns.Platform/%s/master\n' \
		"$arch" "$arch" >"$a/metadata"
	printf '%s' "$payload_text" >"$a/files/bin/payload"
	chmod 0755 "$a/files/bin/payload"
	fp build-finish --command=payload "$a" >/dev/null &&
	fp build-export --disable-sandbox --runtime "$FP/repo" "$r" master >/dev/null &&
	fp build-export --disable-sandbox "$FP/repo" "$a" master >/dev/null &&
	fp --user remote-add --no-gpg-verify local "file://$FP/repo" &&
	fp --user install -y --noninteractive local "app/org.pidns.Payload/$arch/master" >/dev/null
}
# The app declares no permission; each cell grants what its users grant.
flatpak_run() {
	fp --user run --no-a11y-bus --no-documents-portal --no-session-bus "$@" org.pidns.Payload
}
cell_flatpak() { flatpak_run; }
cell_flatpak_share_net() { flatpak_run --share=network; }
cell_flatpak_share_ipc() { flatpak_run --share=ipc; }

declare -A GROUP_CELLS=(
	[util]="unshare_p unshare_pmin nsenter_all nsenter_p nsenter_n ip_netns_exec nsenter_all_nofork unshare_pmin_nofork"
	[bwrap]="bwrap_unshare_pid bwrap_unshare_all bwrap_pidns"
	[firejail]="firejail firejail_net_none firejail_user_net_none"
	[oci]="runc_run runc_run_hostnet runc_exec crun_run crun_run_hostnet crun_exec"
	[podman]="podman_run_default podman_run_none podman_run_host podman_pod podman_join_netipc podman_exec"
	[lxc]="lxc_empty_net lxc_net_none lxc_share_net lxc_attach lxc_unpriv"
	[nspawn]="nspawn nspawn_private_net"
	[chromium]="chromium_userns chromium_suid"
	[docker]="docker_run docker_none docker_host docker_ipc_host docker_net_container docker_pid_container docker_exec docker_build docker_build_host"
	[k8s]="k8s_sandbox_runc k8s_app_runc k8s_sharepid_runc k8s_sandbox_crun k8s_app_crun k8s_sharepid_crun"
	[podman-more]="podman_pid_container podman_rootless podman_keep_id"
	[pods]="podman_pod_default podman_pod_sharepid"
	[criu]="criu"
	[incus]="incus_launch incus_none incus_privileged incus_exec"
	[firefox]="firefox"
	[webkit]="epiphany"
	[debian]="mmdebstrap sbuild autopkgtest"
	[stacks]="docker_run docker_none docker_host k8s_sandbox_runc k8s_app_runc k8s_sharepid_runc"
	[flatpak]="flatpak flatpak_share_net flatpak_share_ipc"
)
groups=("$@")
[ ${#groups[@]} -eq 0 ] && read -r -a groups <<<"$(sed -n 's/.*pidns.matrix=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')"
[ "${groups[*]}" = all ] && groups=(util bwrap firejail oci podman lxc nspawn chromium flatpak docker k8s podman-more firefox debian criu)
[ ${#groups[@]} -gt 0 ] || bail "no group given (matrix.sh GROUP... or pidns.matrix=)"

echo "TAP version 13"
[ -f "$DOC" ] || bail "$DOC not found"
note "root: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); section \"$SECTION\""
note "packages: $(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' runc crun \
	podman docker.io containerd lxc systemd util-linux bubblewrap firejail flatpak chromium \
	firefox-esr epiphany-browser libwebkit2gtk-4.1-0 libwebkitgtk-6.0-4 mmdebstrap sbuild autopkgtest criu 2>/dev/null | awk '$1 == "ii" { printf "%s%s %s", sep, $2, $3; sep = ", " }')"
case " ${groups[*]} " in
*" pods "*) note "podman's network backend: $(pm info --format '{{.Host.NetworkBackend}}' 2>&1)" ;;
esac
mktemplate
# group_setup FN SECONDS MESSAGE: a group's setup, function FN of this
# file, run once before its cells in a shell of its own, bounded; its log
# is printed, and the boot bails out with MESSAGE if it failed.
group_setup() {
	local log=$W/$1.log
	timeout -k 5 "$2" bash -c "$(declare -p W FP payload_text); $(declare -f); $1" \
		>"$log" 2>&1 </dev/null || { sed 's/^/# /' "$log"; bail "$3"; }
	sed 's/^/# /' "$log"
}
cells=
for g in "${groups[@]}"; do
	[ -n "${GROUP_CELLS[$g]:-}" ] || bail "unknown group $g"
	cells="$cells ${GROUP_CELLS[$g]}"
done
for id in $cells; do
	case $id in
	nsenter_*|bwrap_pidns|ip_netns_exec) NEED_TARGET=1 ;;
	flatpak) setmode 0
		group_setup flatpak_setup 300 "flatpak: cannot build and install the test app" ;;
	docker_run) setmode 0
		group_setup docker_setup 400 "docker: dockerd did not start" ;;
	incus_launch) setmode 1
		before=$(stats)
		group_setup incus_setup 400 "incus: incusd did not start"
		# Started in warn mode: what incusd's own probes ask of the
		# kernel at start is counted (and, in mode 3, would be judged).
		note "incusd's start and setup, in warn mode: stats $before -> $(stats)" ;;
	esac
done
# The plan first: a boot cut short shows what it ran.
ncells=$(echo $cells | wc -w)
nmodes=$(echo $MODES | wc -w)
if [ "$MODES" = vanilla ]; then
	echo "1..$ncells"
else
	echo "1..$((ncells * (nmodes + 1)))"
fi
declare -A RESULT
for mode in $MODES; do
	setmode "$mode"
	[ -n "$NEED_TARGET" ] && start_target
	for id in $cells; do
		t0=$(date +%s.%N)
		run_cell "$id" "$mode"
		note "time: $(echo "$(date +%s.%N) - $t0" | bc) s"
	done
	sweep
done
setmode 0

# What holds whatever the document says, on a patched kernel: mode 0
# (off) is upstream's behaviour and counts nothing; warn mode changes
# nothing but the count; what enforce or stage mode refuses, warn mode
# counted.
if [ "$MODES" != vanilla ]; then
	for id in $cells; do
		if [ "${RESULT[$id.0]+0}${RESULT[$id.1]+1}${RESULT[$id.2]+2}${RESULT[$id.3]+3}" != 0123 ]; then
			tap 1 "$id, $KVER: off, warn, enforce and stage compared (a mode's cell did not run)"
			continue
		fi
		r0=${RESULT[$id.0]} r1=${RESULT[$id.1]} r2=${RESULT[$id.2]}
		v0=${r0%%|*} v1=${r1%%|*} v2=${r2%%|*} v3=${RESULT[$id.3]%%|*}
		ok=0 why=
		case $v0 in *warned*|*refused*) ok=1 why="mode 0 moved the counters ($v0)" ;; esac
		if [ "${v1/, warned/}|${r1#*|}" != "$v0|${r0#*|}" ]; then
			ok=1 why="$why; warn mode changed the outcome ($v0 / $v1)"
		fi
		case $v2 in
		*refused*) case $v1 in *warned*) ;; *) ok=1 why="$why; enforce refused what warn did not count" ;; esac ;;
		esac
		case $v3 in
		*refused*) case $v1 in *warned*) ;; *) ok=1 why="$why; stage refused what warn did not count" ;; esac ;;
		esac
		tap $ok "$id, $KVER: off counts nothing, warn changes nothing but the count, warn counted what enforce and stage refuse${why:+ ($why)}"
	done
fi
[ -n "$TARGET" ] && kill "$TARGET" 2>/dev/null
[ $tap_failed -eq 0 ]
