# SPDX-License-Identifier: GPL-2.0
# Shared by qemu/run, qemu/kernel-tree and tests/run: packages, the kernel
# tree cache, the guest kernel build and the QEMU command line.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The Debian kernel sources the project builds and tests; the first is the
# default (what "linux-source" installs) and gives userspace its headers.
read -r -a KVERS <<<"${PIDNS_KVERS:-6.1 6.12}"
CACHE=${PIDNS_CACHE:-/var/cache/pidns-coupling}
BUILD=$TOP/build
GUEST=$BUILD/guest
MESON_BUILD=$BUILD/meson
FRAGMENT=$TOP/qemu/guest.config
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}

# Everything that depends on the kernel version.
set_kver() {
	KVER=$1
	SRC=$CACHE/linux-$KVER
	OBJ=$CACHE/obj-$KVER
	SERIES=$TOP/patches/$KVER
	TARBALL=/usr/src/linux-source-$KVER.tar.xz
	VANILLA_SRC=$CACHE/vanilla/linux-$KVER
}
set_kver "${KVER:-${KVERS[0]}}"

# Fixed identities and dates make the baseline commit, and every commit that
# "git am" creates on top of it, the same on every machine, so that
# "kernel-tree export" reproduces patches/ byte for byte.
GIT_IDENT=(-c user.name="pidns-coupling developers" -c user.email=dev@pidns-coupling.invalid)
BASE_DATE="2000-01-01T00:00:00Z"

PACKAGES=(gcc make flex bison bc libelf-dev libssl-dev cpio
	  qemu-system-x86 meson ninja-build util-linux busybox-static
	  bubblewrap firejail ccache xz-utils git libsmartcols-dev pkg-config sparse
	  libcap-dev trace-cmd groff-base man-db
	  # The real software the host-root guest runs (tests/guest/matrix.sh):
	  runc crun podman conmon catatonit golang-github-containers-common
	  containernetworking-plugins uidmap lxc systemd-container chromium
	  chromium-sandbox flatpak jq procps
	  docker.io containerd slirp4netns iproute2 firefox-esr mmdebstrap
	  dpkg-dev sbuild autopkgtest criu
	  # The BPF form (userspace/pidns-lsm): clang for the BPF target,
	  # bpftool for vmlinux.h and the skeleton, libbpf linked statically.
	  clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev)
# Daemons the packages above would start on this machine: the tests start
# them in the guest only (see ensure_packages).
DAEMON_UNITS=(docker.service docker.socket containerd.service)
for v in "${KVERS[@]}"; do PACKAGES+=("linux-source-$v" "linux-config-$v"); done

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "error: $*"; exit 1; }

ensure_packages() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages (run as root to install): ${missing[*]}"
	say "installing: ${missing[*]}"
	apt-get update -q >&2 || die "apt-get update failed"
	# docker.io and containerd would start their daemons here: a
	# policy-rc.d that says "no" (as Debian's build chroots have) keeps
	# invoke-rc.d and deb-systemd-invoke from starting anything during
	# the install, and the units they enable are disabled after it, so
	# that nothing starts at the next boot either.
	local policy=/usr/sbin/policy-rc.d made_policy= rc=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# pidns-coupling: no daemon starts during its install\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
		made_policy=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >&2 || rc=$?
	[ -n "$made_policy" ] && rm -f "$policy"
	[ $rc -eq 0 ] || die "apt-get install failed"
	if [ -d /run/systemd/system ] && [[ " ${missing[*]} " =~ \ (docker\.io|containerd)\  ]]; then
		systemctl disable --now "${DAEMON_UNITS[@]}" >&2 2>/dev/null || true
	fi
}

tree_git() { git -C "$SRC" "${GIT_IDENT[@]}" "$@"; }

series_patches() { ls "$SERIES"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-'; }

series_hash() { series_patches | xargs cat | sha256sum | cut -d' ' -f1; }

# Extract the pristine Debian source once into a git repository whose first
# commit, tagged "pristine", is exactly what the package ships.
extract_tree() {
	[ -d "$SRC/.git" ] && tree_git rev-parse -q --verify pristine >/dev/null && return 0
	[ -f "$TARBALL" ] || die "$TARBALL not found (package linux-source-$KVER)"
	say "extracting $TARBALL into $SRC (once, about a minute)"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$TARBALL" -C "$SRC.tmp" || die "cannot extract $TARBALL"
	mv "$SRC.tmp/linux-source-$KVER" "$SRC"
	rmdir "$SRC.tmp"
	local ver
	ver=$(dpkg-query -W -f='${Version}' "linux-source-$KVER")
	git init -q -b pristine-branch "$SRC"
	tree_git config core.autocrlf false
	tree_git add -A -f
	GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE \
		tree_git commit -q -m "Debian linux-source-$KVER $ver (pristine)"
	tree_git tag pristine
}

# Bring the tree to "pristine + patches/$KVER". A tree that already carries
# the current series is left alone (a developer may be editing it); one that
# carries an older series is rebuilt, unless it holds work not yet exported.
# "blob mtime path" for each file the tree's series touches. Re-applying a
# series rewrites all of them; those whose content comes out the same get
# their old mtime back, so that make rebuilds only what really changed.
series_files_snapshot() {
	tree_git rev-parse -q --verify pidns-coupling >/dev/null || return 0
	tree_git diff --name-only pristine pidns-coupling | while IFS= read -r f; do
		[ -f "$SRC/$f" ] || continue
		printf '%s %s %s\n' "$(tree_git hash-object "$f")" \
			"$(stat -c %.9Y "$SRC/$f")" "$f"
	done
}

restore_unchanged_mtimes() {
	local blob mtime f
	while read -r blob mtime f; do
		[ -n "$f" ] && [ -f "$SRC/$f" ] || continue
		[ "$(tree_git hash-object "$f")" = "$blob" ] && touch -d "@$mtime" "$SRC/$f"
	done
	return 0
}

# Uncommitted changes, or commits other than the applied series (a tree
# left at pristine, by a failed "git am" say, holds nothing to lose).
tree_has_work() {
	[ -f "$SRC/.git/pidns-head" ] || return 1
	[ -n "$(tree_git status --porcelain --untracked-files=no)" ] && return 0
	local head
	head=$(tree_git rev-parse HEAD)
	[ "$head" != "$(tree_git rev-parse pristine)" ] &&
		[ "$head" != "$(cat "$SRC/.git/pidns-head")" ]
}

# In CI (or with PIDNS_STRICT_TREE=1) the kernel is built from patches/
# exactly: work in the tree that is not in them is set aside on a branch.
prepare_tree() {
	extract_tree
	local want stamp=$SRC/.git/pidns-series strict=${PIDNS_STRICT_TREE:-${CI:-}}
	want=$(series_hash)
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
	   [ "$(tree_git rev-parse HEAD)" != "$(tree_git rev-parse pristine)" ]; then
		case $strict in 1|true) tree_has_work || return 0 ;; *) return 0 ;; esac
	fi
	if tree_has_work; then
		case $strict in
		1|true)
			say "setting aside the tree's unexported work on branch pidns-set-aside"
			tree_git stash push -q -m "set aside by prepare_tree" || true
			tree_git branch -f pidns-set-aside HEAD ;;
		*) die "$SRC has work that is not in patches/$KVER: run 'qemu/kernel-tree export' or reset it" ;;
		esac
	fi
	say "applying patches/$KVER to $SRC"
	local before
	before=$(series_files_snapshot)
	tree_git checkout -q -f -B pidns-coupling pristine
	# shellcheck disable=SC2046
	tree_git am -q --committer-date-is-author-date $(series_patches) ||
		{ tree_git am --abort; rm -f "$stamp" "$SRC/.git/pidns-head";
		  die "patches/$KVER does not apply with git am"; }
	printf '%s\n' "$before" | restore_unchanged_mtimes
	tree_git rev-parse HEAD >"$SRC/.git/pidns-head"
	echo "$want" >"$stamp"
}

# Regenerate patches/$KVER from the tree (the inverse of prepare_tree). The
# cover letter's text is kept: it is edited in 0000-cover-letter.patch.
export_series() {
	local cover=$SERIES/0000-cover-letter.patch tmp subject blurb
	tmp=$(mktemp -d)
	subject=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$cover")
	# The blurb: from the first blank line after the headers to the shortlog.
	blurb=$(awk 'h && /^[^ ].* \([0-9]+\):$/ { exit }
		     h { print } /^$/ && !h { h = 1 }' "$cover")
	tree_git config branch.pidns-coupling.description "$subject

$blurb"
	tree_git format-patch -q --cover-letter --cover-from-description=subject \
		--base=pristine -o "$tmp" pristine..pidns-coupling
	rm -f "$SERIES"/*.patch
	mv "$tmp"/*.patch "$SERIES"/
	rmdir "$tmp"
	tree_git rev-parse HEAD >"$SRC/.git/pidns-head"
	series_hash >"$SRC/.git/pidns-series"
}

# Whether $1/.config has every line of the fragment $2 (quiet unless $3).
config_satisfies() {
	local line opt ok=0
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$1/.config" ||
			{ [ -n "${3:-}" ] && say "config: wanted $line"; ok=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			! grep -q "^$opt=" "$1/.config" ||
				{ [ -n "${3:-}" ] && say "config: wanted $line"; ok=1; } ;;
		esac
	done <"$2"
	return $ok
}

# Configure tinyconfig + qemu/guest.config in $OBJ, unless the .config
# there already has every option the fragment asks for; fail if it cannot.
configure_kernel() {
	[ -f "$OBJ/.config" ] && config_satisfies "$OBJ" "$FRAGMENT" && return 0
	say "configuring $OBJ: tinyconfig + qemu/guest.config"
	mkdir -p "$OBJ"
	make -s -C "$SRC" O="$OBJ" tinyconfig >/dev/null
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" "$FRAGMENT" >/dev/null
	make -s -C "$SRC" O="$OBJ" olddefconfig >/dev/null
	config_satisfies "$OBJ" "$FRAGMENT" verbose ||
		die "the guest config fragment is not satisfied (see above)"
}

# kernel_make WHAT SRC OBJ TARGET...: make in OBJ, its output in
# OBJ/pidns-build.log. Every 20 s (on a terminal: every second, on one
# line) it says how far it is: the files compiled so far, out of the
# number the last full build of OBJ compiled if it knows it. A failure
# says where the log is and shows its end.
kernel_make() {
	local what=$1 src=$2 obj=$3 log=$3/pidns-build.log total=0
	local t0=$SECONDS pid rc=0 n last=$SECONDS line
	shift 3
	[ -f "$obj/pidns-build.total" ] && total=$(cat "$obj/pidns-build.total")
	make -C "$src" O="$obj" -j"$(nproc)" CC="ccache gcc" \
		KBUILD_BUILD_USER=pidns KBUILD_BUILD_HOST=guest "$@" >"$log" 2>&1 &
	pid=$!
	# A job started with & in a script ignores SIGINT: stop make with us.
	# shellcheck disable=SC2064
	trap "kill $pid 2>/dev/null; exit 130" INT TERM
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if [ -t 2 ] || [ $((SECONDS - last)) -ge 20 ]; then
			last=$SECONDS
			n=$(grep -c '^  CC ' "$log" || true)
			line="$what: $n files compiled"
			[ "$total" -gt 0 ] && line="$line of about $total ($((n * 100 / total))%)"
			line="$line, $((SECONDS - t0)) s"
			if [ -t 2 ]; then printf '\r%s: %s ' "${0##*/}" "$line" >&2
			else say "$line"; fi
		fi
	done
	wait "$pid" || rc=$?
	trap - INT TERM
	[ -t 2 ] && printf '\n' >&2
	if [ "$rc" -ne 0 ]; then
		say "$what failed (exit $rc); the full log is $log; its end:"
		grep -E 'error|Error' "$log" | head -20 >&2 || true
		tail -30 "$log" >&2
		exit 1
	fi
	grep -E 'warning:' "$log" >&2 || true
	n=$(grep -c '^  CC ' "$log" || true)
	# Remember the size of a full build (for the percentage next time).
	[ "$n" -gt "$total" ] && echo "$n" >"$obj/pidns-build.total"
	say "$what: done, $n files compiled in $((SECONDS - t0)) s"
}

build_kernel() {
	ensure_packages
	prepare_tree
	configure_kernel
	local t0=$SECONDS
	kernel_make "building linux-$KVER (patched) in $OBJ" "$SRC" "$OBJ" bzImage
	config_satisfies "$OBJ" "$FRAGMENT" verbose ||
		die "the build changed .config away from the fragment (see above)"
	# What headers_install would copy, left in place: "make headers" only
	# touches a header that changed, so userspace is rebuilt only then.
	make -s -C "$SRC" O="$OBJ" headers >&2 || die "make headers failed"
	mkdir -p "$GUEST"
	cmp -s "$OBJ/arch/x86/boot/bzImage" "$GUEST/bzImage-$KVER" ||
		cp "$OBJ/arch/x86/boot/bzImage" "$GUEST/bzImage-$KVER"
	say "kernel ready: $GUEST/bzImage-$KVER ($((SECONDS - t0)) s)"
}

# Other flavours of the guest kernel, each in its own object directory,
# installed as build/guest/bzImage-$KVER-NAME. Each is a full build: ccache
# cannot share objects between them (a config option that task_struct or a
# common header depends on changes every file's preprocessed text, and the
# source tree's path is in every command line through -fmacro-prefix-map):
#   vanilla  the pristine tree, the fragment without the coupling options
#            (for comparisons: tests/bench, the oracle, the selftests);
#   debug    the patched tree, the fragment plus qemu/debug.config (KASAN,
#            kmemleak, lockdep and the other checkers);
#   kcsan    the patched tree, the fragment plus qemu/kcsan.config (KCSAN,
#            which Kconfig excludes with KASAN, and lockdep).
# A flavour's own fragment file is qemu/NAME.config.
flavour_fragment() {
	case $1 in
	vanilla) grep -v 'PID_NS_COUPLING' "$FRAGMENT" ;;
	*) cat "$FRAGMENT" "$TOP/qemu/$1.config" ;;
	esac
}

build_flavour() {
	local name=$1 src=$SRC obj=$CACHE/obj-$KVER-$1 frag t0=$SECONDS
	ensure_packages
	if [ "$name" = vanilla ]; then
		vanilla_tree
		src=$VANILLA_SRC
		obj=$CACHE/vanilla/obj-$KVER
	else
		prepare_tree
	fi
	mkdir -p "$obj"
	frag=$obj/guest-$name.config
	flavour_fragment "$name" >"$frag"
	if [ ! -f "$obj/.config" ] || ! config_satisfies "$obj" "$frag"; then
		say "configuring $obj: tinyconfig + the $name fragment"
		make -s -C "$src" O="$obj" tinyconfig >/dev/null
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null
		make -s -C "$src" O="$obj" olddefconfig >/dev/null
		config_satisfies "$obj" "$frag" verbose ||
			die "the $name fragment is not satisfied (see above)"
	fi
	kernel_make "building the $name linux-$KVER in $obj" "$src" "$obj" bzImage
	config_satisfies "$obj" "$frag" verbose ||
		die "the build changed .config away from the $name fragment"
	mkdir -p "$GUEST"
	cmp -s "$obj/arch/x86/boot/bzImage" "$GUEST/bzImage-$KVER-$name" ||
		cp "$obj/arch/x86/boot/bzImage" "$GUEST/bzImage-$KVER-$name"
	say "$name kernel ready: $GUEST/bzImage-$KVER-$name ($((SECONDS - t0)) s)"
}

build_vanilla() { build_flavour vanilla; }

# The pristine tree, as a worktree of the cache's repository.
vanilla_tree() {
	extract_tree
	if [ ! -d "$VANILLA_SRC" ]; then
		tree_git worktree add -q --detach "$VANILLA_SRC" pristine ||
			die "cannot add the vanilla worktree"
	fi
}

# The kernel's own selftests that create or join namespaces, built
# statically from the pristine tree (the same binaries run on every
# kernel) into $CACHE/selftests-$KVER/kselftest/TARGET/.
SELFTEST_TARGETS="clone3 pidfd pid_namespace nsfs timens proc mount"
build_selftests() {
	local out=$CACHE/selftests-$KVER
	ensure_packages
	vanilla_tree
	say "building selftests ($SELFTEST_TARGETS) in $out"
	make -s -C "$VANILLA_SRC/tools/testing/selftests" TARGETS="$SELFTEST_TARGETS" \
		O="$out" USERLDFLAGS=-static -j"$(nproc)" >"$out.log" 2>&1 ||
		{ tail -20 "$out.log" >&2; die "selftests build failed (log: $out.log)"; }
	# A stamp that changes when a binary does: meson rebuilds the initramfs.
	find "$out/kselftest" -type f -perm -u+x ! -name .pidns-built -exec sha256sum {} + |
		sort -k2 | sha256sum >"$out/kselftest/.pidns-built.new"
	cmp -s "$out/kselftest/.pidns-built.new" "$out/kselftest/.pidns-built" &&
		rm "$out/kselftest/.pidns-built.new" ||
		mv "$out/kselftest/.pidns-built.new" "$out/kselftest/.pidns-built"
}

# The series' own selftest, tools/testing/selftests/pid_namespace/
# pidns_coupling.c (the pristine tree has none: build_selftests cannot
# build it), built statically from the patched tree of $KVER against its
# uapi headers (build_kernel's "make headers") into
# $COUPLING_SELFTEST/$KVER/kselftest/pid_namespace/. -Werror: it must
# compile warning-free, and it is no Kbuild object for tests/host/lint.
COUPLING_SELFTEST=$CACHE/selftest-coupling
build_coupling_selftest() {
	local out=$COUPLING_SELFTEST/$KVER
	ensure_packages
	prepare_tree
	[ -f "$SRC/tools/testing/selftests/pid_namespace/pidns_coupling.c" ] ||
		die "the $KVER series adds no tools/testing/selftests/pid_namespace/pidns_coupling.c"
	mkdir -p "$out"
	say "building the series' selftest (pid_namespace) in $out"
	make -s -C "$SRC/tools/testing/selftests" TARGETS=pid_namespace O="$out" \
		KHDR_INCLUDES="-isystem $OBJ/usr/include" USERCFLAGS="-Wall -Werror" \
		USERLDFLAGS=-static >"$out.log" 2>&1 ||
		{ tail -20 "$out.log" >&2; die "the series' selftest build failed (log: $out.log)"; }
}

# meson builds the launcher, the guest test programs and the initramfs,
# against the headers of the first kernel version (or, before that one is
# built, of the one qemu/run boots: the uapi the programs use is the same).
# The selftest initramfs is built once the selftests are, and the series'
# own selftest's (one per version) once it is built for every version.
build_userspace() {
	local versions headers=$CACHE/obj-${KVERS[0]}/usr/include
	local selftests=$CACHE/selftests-${KVERS[0]}/kselftest
	local coupling=$COUPLING_SELFTEST v keep=$KVER btf
	[ -d "$headers/linux" ] || headers=$CACHE/obj-$KVER/usr/include
	# The BPF form is compiled against the BTF of Debian's stock kernel
	# of the first version (CO-RE: the same object runs on the others).
	set_kver "${KVERS[0]}"
	stock_kernel
	btf=$STOCK/vmlinux
	set_kver "$keep"
	[ -f "$selftests/.pidns-built" ] || selftests=
	for v in "${KVERS[@]}"; do
		[ -x "$coupling/$v/kselftest/pid_namespace/pidns_coupling" ] || coupling=
	done
	versions=$(IFS=,; echo "${KVERS[*]}")
	say "building userspace and the initramfs in $MESON_BUILD"
	if [ ! -f "$MESON_BUILD/build.ninja" ]; then
		meson setup -Dkernel_headers="$headers" -Dstatic=true -Dwerror=true \
			-Dkernel_versions="$versions" -Dselftests="$selftests" \
			-Dcoupling_selftest="$coupling" -Dbpf_btf="$btf" \
			"$MESON_BUILD" "$TOP" >"$BUILD/meson-setup.log" 2>&1 ||
			{ tail -30 "$BUILD/meson-setup.log" >&2; die "meson setup failed (log: $BUILD/meson-setup.log)"; }
	elif [ "$(cat "$MESON_BUILD/.pidns-kvers" 2>/dev/null)" != "$versions $selftests $headers $coupling $btf" ]; then
		meson setup --reconfigure -Dkernel_headers="$headers" -Dkernel_versions="$versions" \
			-Dselftests="$selftests" -Dcoupling_selftest="$coupling" -Dbpf_btf="$btf" \
			"$MESON_BUILD" "$TOP" >"$BUILD/meson-setup.log" 2>&1 ||
			{ tail -30 "$BUILD/meson-setup.log" >&2; die "meson setup --reconfigure failed (log: $BUILD/meson-setup.log)"; }
	fi
	echo "$versions $selftests $headers $coupling $btf" >"$MESON_BUILD/.pidns-kvers"
	meson compile -C "$MESON_BUILD" >&2 || die "meson compile failed"
}

# dracut_initrd ROOT PKG KREL MODDIR OUT: the initramfs of kernel KREL,
# whose package is unpacked in PKG (its modules in MODDIR, inside PKG),
# made by Debian's dracut in the guest root ROOT (qemu/mkroot), in a
# mount namespace of its own: dracut is never installed on this machine.
# With the package's module index (depmod) and its virtfs module (a 9p
# root). OUT is inside PKG.
dracut_initrd() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private sh -ec '
		root=$1 pkg=$2 krel=$3 moddir=$4 out=$5
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs tmpfs "$root/tmp"
		mount -t tmpfs tmpfs "$root/var/tmp"
		mount --bind "$pkg" "$root/mnt"
		chroot "$root" depmod -b "/mnt${moddir#"$pkg"}/../.." "$krel"
		chroot "$root" dracut --quiet --force --no-hostonly --no-early-microcode \
			--modules "base virtfs" --kver "$krel" \
			--kmoddir "/mnt${moddir#"$pkg"}/$krel" "/mnt${out#"$pkg"}"
	' sh "$@"
}

# Debian's stock kernel of $KVER, unmodified, for the BPF form
# (userspace/pidns-lsm): the signed linux-image package of the version of
# the installed linux-source-$KVER (the same sources the series patches),
# or the newest the archive still has. Downloaded once into
# $CACHE/stock/$KVER/VERSION and unpacked there (its modules inside), with
# its vmlinux (scripts/extract-vmlinux), whose BTF the BPF program is
# compiled against. Sets STOCK to that directory and STOCK_KREL.
stock_kernel() {
	local ver pkg= p dir newest=
	ver=$(dpkg-query -W -f '${Version}' "linux-source-$KVER" 2>/dev/null) ||
		die "linux-source-$KVER is not installed"
	# The generic flavour's: linux-image-6.1.0-57-amd64 (6.1),
	# linux-image-6.12.118+deb12-amd64 (6.12); not -rt-, -cloud- or -dbg.
	for p in $(apt-cache search --names-only "^linux-image-${KVER//./\\.}" | cut -d' ' -f1 |
		   grep -E "^linux-image-${KVER//./\\.}(\.0-[0-9]+|\.[0-9]+\+deb[0-9]+)-amd64\$" |
		   sort -rV); do
		if apt-cache madison "$p" | grep -q " $ver "; then
			pkg=$p
			break
		fi
		[ -n "$newest" ] || newest=$p
	done
	if [ -z "${pkg:-}" ]; then
		ls -d "$CACHE/stock/$KVER"/*/ok >/dev/null 2>&1 || [ -n "${newest:-}" ] ||
			die "no linux-image package of $KVER in the archive"
		pkg=${newest:-}
		ver=
		say "linux-source-$KVER's version is no longer in the archive: $pkg instead"
	fi
	dir=$CACHE/stock/$KVER/${ver:-newest}
	STOCK=$dir
	if [ -f "$dir/ok" ]; then
		STOCK_KREL=$(cat "$dir/ok")
		return 0
	fi
	rm -rf "$dir" && mkdir -p "$dir"
	say "downloading Debian's $pkg ${ver:-(newest)}"
	(cd "$dir" && apt-get download -q "$pkg${ver:+=$ver}" >&2) ||
		die "apt-get download $pkg failed"
	dpkg-deb -x "$dir"/linux-image-*.deb "$dir/pkg" || die "cannot unpack $pkg"
	STOCK_KREL=$(ls "$dir/pkg/lib/modules" | head -1)
	[ -f "$dir/pkg/boot/vmlinuz-$STOCK_KREL" ] || die "$pkg has no vmlinuz"
	# The script is the source's: a run that built nothing
	# (PIDNS_BUILT=1) may not have extracted it yet
	[ -x "$SRC/scripts/extract-vmlinux" ] || extract_tree
	"$SRC/scripts/extract-vmlinux" "$dir/pkg/boot/vmlinuz-$STOCK_KREL" >"$dir/vmlinux" ||
		die "extract-vmlinux failed on $pkg"
	echo "$STOCK_KREL" >"$dir/ok"
}

# stock_initrd ROOT: after stock_kernel, the stock kernel's initramfs made
# by dracut in the guest root ROOT (dracut_initrd), kept in the cache
# until the root's dracut changes. Sets STOCK_KERNEL, STOCK_MODULES,
# STOCK_INITRD and STOCK_DRACUT; fails with dracut's log in
# $STOCK/dracut.log.
stock_initrd() {
	local root=$1 pkg=$STOCK/pkg
	STOCK_KERNEL=$pkg/boot/vmlinuz-$STOCK_KREL
	STOCK_MODULES=$pkg/lib/modules
	[ -d "$STOCK_MODULES" ] || STOCK_MODULES=$pkg/usr/lib/modules
	STOCK_INITRD=$pkg/initrd.img-$STOCK_KREL
	STOCK_DRACUT=$(chroot "$root" dpkg-query -W -f '${Version}' dracut-core 2>/dev/null)
	[ "$(cat "$STOCK/initrd.stamp" 2>/dev/null)" = "$root $STOCK_DRACUT" ] &&
		[ -s "$STOCK_INITRD" ] && return 0
	dracut_initrd "$root" "$pkg" "$STOCK_KREL" "$STOCK_MODULES" "$STOCK_INITRD" \
		>"$STOCK/dracut.log" 2>&1 || return 1
	echo "$root $STOCK_DRACUT" >"$STOCK/initrd.stamp"
}

# What qemu/run boots: the patched kernel of $KVER, userspace and the
# initramfs. Nothing else (tests/run builds the rest).
build_boot() {
	mkdir -p "$BUILD"
	build_kernel
	build_userspace
}

# Every kernel version's guest kernel and the series' own selftest, the
# first version's vanilla flavour and selftests (the comparisons run on
# 6.1), then userspace. With "long", also every version's debug and KCSAN
# flavours.
build_all() {
	local keep=$KVER v
	mkdir -p "$BUILD"
	for v in "${KVERS[@]}"; do
		set_kver "$v"
		build_kernel
		build_coupling_selftest
		if [ "$v" = "${KVERS[0]}" ]; then
			build_flavour vanilla
			build_selftests
		fi
		if [ "${1:-}" = long ]; then
			build_flavour debug
			build_flavour kcsan
		fi
	done
	set_kver "$keep"
	build_userspace
	# Debian 13's root: the systemd boot of CI, and the long suite's
	# matrix on Debian 13's userspace; Debian 12's for the long suite's
	# systemd boots.
	case " ${KVERS[*]} " in
	*" 6.12 "*) "$TOP/qemu/mkroot" trixie >/dev/null ;;
	esac
	if [ "${1:-}" = long ]; then
		"$TOP/qemu/mkroot" bookworm >/dev/null
		# The matrix's "debian" group: sbuild's and autopkgtest's chroots.
		"$TOP/qemu/mkroot" --buildd bookworm >/dev/null
		case " ${KVERS[*]} " in
		*" 6.12 "*) "$TOP/qemu/mkroot" --buildd trixie >/dev/null
			    "$TOP/qemu/mkroot" trixie+browsers >/dev/null ;;
		esac
	fi
	return 0
}

# TCG unless KVM really works: /dev/kvm may exist, open, and still hang the
# guest. The probe boots the guest kernel under KVM with no root: a working
# KVM reaches "Kernel panic" (and, with -no-reboot, exits) in well under a
# second. The answer is kept in build/guest/accel for later runs.
qemu_accel() {
	local cache=$GUEST/accel kernel=${PIDNS_KERNEL:-$GUEST/bzImage-$KVER} log
	if [ -z "${PIDNS_ACCEL:-}" ] && [ -f "$cache" ]; then
		PIDNS_ACCEL=$(cat "$cache")
	fi
	if [ -z "${PIDNS_ACCEL:-}" ]; then
		PIDNS_ACCEL=tcg
		if [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ -f "$kernel" ]; then
			log=$(timeout -k 2 10 qemu-system-x86_64 -accel kvm -M pc -m 256M \
				-nodefaults -no-reboot -display none -serial stdio \
				-kernel "$kernel" -append "console=ttyS0 panic=-1" 2>/dev/null) || true
			case $log in *"Kernel panic"*) PIDNS_ACCEL=kvm ;; esac
		fi
		mkdir -p "$GUEST" && echo "$PIDNS_ACCEL" >"$cache"
	fi
	export PIDNS_ACCEL
	echo "$PIDNS_ACCEL"
}

# CPUs for -smp: $PIDNS_SMP (default 1), one per socket: without ACPI the
# guest finds CPUs in SeaBIOS's MP table, which lists one processor per
# socket (-smp 2 alone boots one CPU).
qemu_smp() {
	local n=${PIDNS_SMP:-1}
	echo "$n,sockets=$n"
}

# Common QEMU arguments. The guest reports its exit status through the
# isa-debug-exit device (QEMU exits with status*2+1); a panic or reboot
# ends QEMU with 0 because of -no-reboot and panic=-1.
qemu_args() {
	local kernel=$1 initrd=$2 append=$3
	printf '%s\n' -accel "$(qemu_accel)" -m 512M -smp "$(qemu_smp)" -nodefaults -no-reboot \
		-display none -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 $append"
}

# Debian's own amd64 config for $KVER (package linux-config-$KVER, the
# config of linux-image-$KVER-amd64) in $1/.config, with what the build
# here cannot or need not have: Debian's signing certificates are not in
# the source package (the trusted and revocation key lists are emptied),
# DEBUG_INFO (it changes no code, only the time) is off, and the series'
# policy is on. Not made valid yet: the caller runs olddefconfig.
debian_config() {
	local obj=$1 deb=/usr/src/linux-config-$KVER/config.amd64_none_amd64.xz
	[ -f "$deb" ] || die "$deb not found (package linux-config-$KVER)"
	mkdir -p "$obj"
	xzcat "$deb" >"$obj/.config"
	"$SRC/scripts/config" --file "$obj/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" \
		--disable DEBUG_INFO --enable DEBUG_INFO_NONE \
		--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--disable DEBUG_INFO_DWARF5 --disable DEBUG_INFO_BTF \
		--enable PID_NS_COUPLING
}

# The Debian release whose kernel $KVER is: its userspace is the root the
# Debian-config kernel boots (tests/debian-config).
debian_suite() {
	case $KVER in
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	*) die "no Debian release known for $KVER" ;;
	esac
}

# The host-root guest: this machine's / shared read-only over virtio-9p
# (virtme-ng's model) and qemu/hostinit as init, which mounts tmpfs where
# the software writes. The tag is a plain word: 6.1 strips a "/dev/"
# prefix from root= and then finds no 9p channel. multidevs=remap keeps
# inode numbers unique across the host's mounts. cache=loose: the guest
# caches what it read (Chromium's 200 MB load once); a file the host
# changes while a guest runs may be seen stale by it, so build first, then
# boot (as tests/run does). 2 GiB: podman and Chromium.
# PIDNS_ROOT=SUITE: a root that qemu/mkroot built ($CACHE/roots/SUITE)
# instead of this machine's /; the checkout is then a second share, which
# the root's /sbin/pidns-init mounts on /pidns-top.
# PIDNS_HOST_INITRD=FILE: an initramfs that mounts the root itself (dracut's,
# root=virtfs:TAG); PIDNS_MODULES=DIR: the kernel's modules (DIR/lib/modules
# of its package) as a third share, which qemu/hostinit mounts on
# /lib/modules (tests/debian-config).
qemu_hostroot_args() {
	local kernel=$1 append=$2 path=/ init=$TOP/qemu/hostinit top=$TOP
	local root="root=hostroot rootfstype=9p"
	if [ -n "${PIDNS_HOST_INITRD:-}" ]; then
		printf '%s\n' -initrd "$PIDNS_HOST_INITRD"
		root="root=virtfs:hostroot rootfstype=9p"
	fi
	if [ -n "${PIDNS_MODULES:-}" ]; then
		printf '%s\n' -fsdev "local,id=pidnsmods,path=$PIDNS_MODULES,security_model=none,readonly=on,multidevs=remap" \
			-device virtio-9p-pci,fsdev=pidnsmods,mount_tag=pidnsmods
		append="pidns.modules=1 $append"
	fi
	# The build chroots of Debian's build tools (qemu/mkroot --buildd),
	# read-only: hostinit mounts them on /run/pidns-chroots.
	if [ -d "$CACHE/chroots" ]; then
		printf '%s\n' -fsdev "local,id=pidnschroots,path=$CACHE/chroots,security_model=none,readonly=on,multidevs=remap" \
			-device virtio-9p-pci,fsdev=pidnschroots,mount_tag=pidnschroots
		append="pidns.chroots=1 $append"
	fi
	if [ -n "${PIDNS_ROOT:-}" ]; then
		path=$CACHE/roots/$PIDNS_ROOT init=/sbin/pidns-init top=/pidns-top
		[ -x "$path/sbin/pidns-init" ] || die "no $PIDNS_ROOT root in $path (qemu/mkroot $PIDNS_ROOT)"
		printf '%s\n' -fsdev "local,id=pidnstop,path=$TOP,security_model=none,readonly=on,multidevs=remap" \
			-device virtio-9p-pci,fsdev=pidnstop,mount_tag=pidnstop
	fi
	printf '%s\n' -accel "$(qemu_accel)" -m 2G -smp "$(qemu_smp)" -nodefaults -no-reboot \
		-display none -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-fsdev "local,id=hostroot,path=$path,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-kernel "$kernel" \
		-append "console=ttyS0 panic=-1 $root ro rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose init=$init pidns.top=$top $append"
}
