#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel built with Debian's config (tests/debian-config), booted
# through dracut's initramfs into a Debian root with its modules from a
# second share, in the mode of the command line (pidns_coupling=N):
#  - the kernel: the mode it booted in, the LSMs it reports, its modules
#    loaded from the package (overlay, by qemu/hostinit);
#  - the errno order of docs/policy.md, shown with the LSMs that sit on
#    the exec path: an execve() by the init of a new PID namespace that
#    shares the host's network namespace ("the hole", refused by the
#    policy in stage mode) and by one that has its own ("isolated",
#    accepted), each under a Landlock ruleset and under AppArmor
#    profiles. What an LSM forbids fails with its EACCES in every mode,
#    before the policy is asked; what the LSMs allow fails with the
#    policy's EPERM in the hole in stage mode; an AppArmor profile that
#    changes domain on exec does so where the exec is accepted;
#  - the state suite and the series' kselftest, the same programs as on
#    the test kernels: the state suite from the build directory, the
#    kselftest from its initramfs image, unpacked and run in a chroot
#    (which changes no namespace) with its script.
. "$PIDNS_TOP/tests/guest/tap.sh"
echo "TAP version 13"
top=$PIDNS_TOP
lsmorder=$top/build/meson/tests/lsmorder

arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
mode=$(arg pidns_coupling)
kver=$(arg pidns.kver)
[ -n "$mode" ] && [ -n "$kver" ] ||
	{ echo "Bail out! no pidns_coupling= or pidns.kver= on the command line"; exit 1; }
echo "# $(uname -r) ($(uname -v)); root: $(. /etc/os-release; echo "$PRETTY_NAME")"
output "booted with kernel.pidns_coupling = $mode" "$mode" -- \
	cat /proc/sys/kernel/pidns_coupling
check "overlay (a module) was loaded from the package's share" -- \
	grep -q '^overlay ' /proc/modules

grep -qs ' /sys/kernel/security ' /proc/mounts ||
	mount -t securityfs securityfs /sys/kernel/security
lsms=$(cat /sys/kernel/security/lsm)
echo "# LSMs active: $lsms"
for l in apparmor landlock; do
	case ",$lsms," in *",$l,"*) st=0 ;; *) st=1 ;; esac
	tap $st "$l is active"
done
output "AppArmor is enabled (aa-enabled)" "Yes" -- aa-enabled

# The outcome each case wants: the hole in stage mode is refused at
# execve() (EPERM), in enforce mode at unshare() (EINVAL), and runs in
# modes 0 and 1; the isolated container runs in every mode.
ran="exec: ok, status 0"
case $mode in
3) hole="exec: EPERM" ;;
2) hole="lsmorder: unshare: Invalid argument" ;;
*) hole=$ran ;;
esac
forbidden() { # what an LSM's refusal looks like, unless unshare() fails first
	if [ "$1" = pmi ] && [ "$mode" = 2 ]; then echo "$hole"; else echo "exec: EACCES"; fi
}

output "control: the hole's init execs /usr/bin/true" "$hole" -- \
	"$lsmorder" --flags pmi /usr/bin/true
output "control: the isolated init execs /usr/bin/true" "$ran" -- \
	"$lsmorder" --flags pmin /usr/bin/true

# Landlock: execute allowed only beneath /usr/sbin, then beneath /usr
# (the program's ELF interpreter, opened for exec too, is in /usr/lib).
for f in pmi pmin; do
	name=hole; [ $f = pmin ] && name=isolated
	output "Landlock allows execute beneath /usr/sbin only: the $name init's exec of /usr/bin/true gets Landlock's EACCES" \
		"$(forbidden $f)" -- "$lsmorder" --landlock-exec /usr/sbin --flags $f /usr/bin/true
	want=$ran; [ $f = pmi ] && want=$hole
	output "Landlock allows execute beneath /usr: the $name init's exec of /usr/bin/true is the policy's to judge" \
		"$want" -- "$lsmorder" --landlock-exec /usr --flags $f /usr/bin/true
done

# AppArmor: a profile that denies one exec, and one that changes domain
# on exec. Loaded here, in the guest (apparmor_parser from the root).
mkdir -p /tmp/aa
cat >/tmp/aa/pidns <<'EOF'
profile pidns-deny {
  capability,
  network,
  signal,
  ptrace,
  unix,
  /** rwlkmix,
  deny /usr/bin/true x,
}
profile pidns-parent {
  capability,
  network,
  signal,
  ptrace,
  unix,
  /** rwlkmix,
  /usr/bin/cat Px -> pidns-child,
}
profile pidns-child {
  /** rm,
}
EOF
check "apparmor_parser $(apparmor_parser --version 2>/dev/null | sed -n '1s/.*version //p') loads the test profiles" -- \
	apparmor_parser -r -K /tmp/aa/pidns
attr=/proc/self/attr/apparmor/current
[ -e "$attr" ] || attr=/proc/self/attr/current
output "AppArmor: aa-exec puts a process in pidns-parent" "pidns-parent (enforce)" -- \
	aa-exec -p pidns-parent -- cat "$attr"
for f in pmi pmin; do
	name=hole; [ $f = pmin ] && name=isolated
	output "AppArmor pidns-deny: the $name init's exec of /usr/bin/true gets AppArmor's EACCES" \
		"$(forbidden $f)" -- aa-exec -p pidns-deny -- "$lsmorder" --flags $f /usr/bin/true
	want=$ran; [ $f = pmi ] && want=$hole
	output "AppArmor pidns-deny: the $name init's exec of /usr/bin/cat (allowed) is the policy's to judge" \
		"$want" -- aa-exec -p pidns-deny -- "$lsmorder" --flags $f /usr/bin/cat /dev/null
	# The domain change: the exec that the policy accepts runs cat in
	# pidns-child; the one it refuses fails with EPERM, not with an
	# error of AppArmor's (its transition was computed and allowed).
	want="pidns-child (enforce)
$ran"
	[ $f = pmi ] && [ "$hole" != "$ran" ] && want=$hole
	output "AppArmor pidns-parent: the $name init's exec of cat changes domain to pidns-child, or is the policy's to refuse" \
		"$want" -- aa-exec -p pidns-parent -- "$lsmorder" --flags $f /usr/bin/cat "$attr"
done

# The state suite and the kselftest.
# in_initramfs NAME IMAGE COMMAND: COMMAND in a chroot of IMAGE unpacked.
in_initramfs() {
	local d=/run/irfs-$1 st
	mkdir -p "$d"
	(cd "$d" && zcat "$2" | cpio -id --quiet) ||
		{ tap 1 "$1: unpack $2"; return; }
	mkdir -p "$d/proc" "$d/sys" "$d/dev" "$d/tmp"
	mount -t proc proc "$d/proc"
	mount -t sysfs sysfs "$d/sys"
	mount --bind /dev "$d/dev"
	mount -t tmpfs tmpfs "$d/tmp"
	PATH=/bin:/sbin:/usr/bin:/usr/sbin chroot "$d" $3 >"/tmp/$1.tap" 2>"/tmp/$1.err" </dev/null
	st=$?
	relay "$1" "/tmp/$1.tap"
	tap $st "$1: exited $st"
	[ $st -eq 0 ] || sed "s/^/# $1 stderr: /" "/tmp/$1.err" | tail -20
	umount -R "$d/sys" "$d/proc" "$d/dev" "$d/tmp" 2>/dev/null
}
# The state suite runs here, not in a chroot: its cases as uid 1000 make
# user namespaces, which the kernel refuses to a chrooted caller. Its
# nsclone case needs nsclone on PATH (/bin in the initramfs).
PATH=$top/build/meson/userspace:$PATH "$top/build/meson/tests/state" >/tmp/state.tap 2>/tmp/state.err </dev/null
st=$?
relay state /tmp/state.tap
tap $st "state: exited $st"
[ $st -eq 0 ] || sed "s/^/# state stderr: /" /tmp/state.err | tail -20
# The state suite leaves the mode of its last case; the kselftest must
# leave the mode it finds.
echo "# the state suite left kernel.pidns_coupling at $(cat /proc/sys/kernel/pidns_coupling); set back to $mode"
mode "$mode"
in_initramfs kselftest "$top/build/meson/tests/initramfs-kselftest-$kver.cpio.gz" /tests/kselftest.sh
output "kernel.pidns_coupling is $mode after the kselftest" "$mode" -- cat /proc/sys/kernel/pidns_coupling
tap_end
