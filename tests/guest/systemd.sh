#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A whole Debian system under the policy: booted by qemu/hostinit with
# pidns.systemd=1 in a root that qemu/mkroot built, systemd as PID 1, and
# kernel.pidns_coupling set from the boot (pidns_coupling=N on the command
# line). This runs as a unit of the boot transaction (pidns-test.service)
# and checks what an operator would: that the boot completes, with the
# failed units and their logs if it does not; journald and logind; a
# service with PrivateNetwork=; and, with systemd 257 or later (Debian 13),
# PrivatePIDs= alone and with PrivateNetwork= and PrivateIPC=. A
# PrivatePIDs= service either runs as PID 1 of a PID namespace of its own
# or fails visibly: one that runs in the host's PID namespace instead is a
# silent fallback, and fails the test.
. "$PIDNS_TOP/tests/guest/tap.sh"
echo "TAP version 13"

mode=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^pidns_coupling=//p' | tail -1)
[ -n "$mode" ] || { echo "Bail out! no pidns_coupling= on the command line"; exit 1; }
output "booted with kernel.pidns_coupling = $mode" "$mode" -- \
	cat /proc/sys/kernel/pidns_coupling
grep -qs qemu/hostinit /etc/sysctl.d/50-pid-max.conf &&
	echo "# kernel.pid_max: 32768 (qemu/hostinit's /etc/sysctl.d/50-pid-max.conf: the test kernel's limit)"
sdver=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
echo "# $(systemctl --version | head -1); $(. /etc/os-release; echo "$PRETTY_NAME")"

# The boot: "running", or the failed units with why.
booted

check "journald runs and takes a message" -- sh -c '
	systemctl is-active -q systemd-journald &&
	logger -t pidns-systemd "boot check $$" &&
	journalctl --sync &&
	journalctl -b -q -t pidns-systemd --no-pager | grep -q "boot check $$"'
check "logind runs and answers" -- sh -c '
	systemctl is-active -q systemd-logind && loginctl list-sessions --no-pager >/dev/null'

host_pid=$(readlink /proc/self/ns/pid)
host_net=$(readlink /proc/self/ns/net)
# unit PROPERTY...: a transient service that prints its PID, PID namespace
# and network namespace; "" if it did not run (then unit_status says its
# status: "exited, status=203/EXEC" gives 203). ExecStart= turns "$$"
# into "$": the shell gets "$$".
unit() {
	local args=()
	for p in "$@"; do args+=(-p "$p"); done
	timeout 120 systemd-run --wait --pipe --collect "${args[@]}" \
		/bin/sh -c 'echo "$$$$ $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net)"' \
		2>/tmp/unit.err </dev/null
}
unit_status() {
	sed -n 's/.*Main processes terminated with: code=exited, status=\([0-9]*\).*/\1/p' /tmp/unit.err
}

out=$(unit PrivateNetwork=yes)
read -r upid upidns unet <<<"$out"
tap "$([ -n "$unet" ] && [ "$unet" != "$host_net" ]; echo $?)" \
	"a PrivateNetwork=yes service runs in a network namespace of its own"
[ -n "$unet" ] || sed 's/^/# /' /tmp/unit.err

# The policy is live for services: unshare -p -f in a unit runs in modes
# 0 and 1, and is refused in 2 (EINVAL) and 3 (EPERM at the execve()).
svc_unshare() {
	timeout 120 systemd-run --wait --pipe --collect /usr/bin/unshare -p -f /bin/true </dev/null
}
case $mode in
0|1) check "mode $mode: a service's unshare -p -f true runs" -- svc_unshare ;;
2) refuse "mode 2: a service's unshare -p -f true is refused" "Invalid argument" -- svc_unshare ;;
3) refuse "mode 3: a service's unshare -p -f true is refused at its execve()" \
	"Operation not permitted" -- svc_unshare ;;
esac

# PrivatePIDs=: N tries of each; in mode 0 every one runs as PID 1; in
# mode 2 every one is refused (the clone carries CLONE_NEWPID alone); in
# mode 3 alone every one is refused at the init's execve(), and with
# PrivateNetwork= and PrivateIPC= it runs if systemd's executor has begun
# to exit when the init execs (policy.md: a race of systemd's, counted);
# never anything else.
# A refusal is the policy's by its status: in mode 2 the executor's
# clone() fails (226/NAMESPACE), in mode 3 the init's execve() (203/EXEC).
tries=10
private_pids() {
	local m=$1 what=$2 n=$3 ran=0 refused=0 fellback=0 other=0 i want
	local code=$([ "$m" = 2 ] && echo 226 || echo 203)
	shift 3
	for i in $(seq "$n"); do
		out=$(unit PrivatePIDs=yes "$@")
		read -r upid upidns unet <<<"$out"
		if [ -z "$upid" ] && [ "$(unit_status)" = "$code" ] && [ "$m" -ge 2 ]; then
			refused=$((refused + 1))
		elif [ -z "$upid" ]; then
			other=$((other + 1))
			grep -v "^Running as unit" /tmp/unit.err | sed "s/^/# failed: /"
		elif [ "$upid" = 1 ] && [ "$upidns" != "$host_pid" ]; then
			ran=$((ran + 1))
		else
			fellback=$((fellback + 1))
			echo "# fell back: PID $upid in $upidns"
		fi
	done
	case $m:$what in
	0:*|1:*) want="$ran = $n" ;;
	2:*|3:alone) want="$refused = $n" ;;
	3:private) want="$((ran + refused)) = $n" ;;
	esac
	tap "$([ $fellback -eq 0 ] && [ $other -eq 0 ] && [ $want ]; echo $?)" \
		"mode $m: PrivatePIDs=yes $*: $ran of $n ran as PID 1, $refused refused with status $code, $other failed otherwise, $fellback fell back ($want)"
}
if [ "${sdver:-0}" -ge 257 ]; then
	private_pids "$mode" alone $tries
	private_pids "$mode" private $tries PrivateNetwork=yes PrivateIPC=yes
	if [ "$mode" != 0 ]; then
		# The control, in this boot: with the policy off, they run.
		echo 0 >/proc/sys/kernel/pidns_coupling
		private_pids 0 control 3
		private_pids 0 control 3 PrivateNetwork=yes PrivateIPC=yes
		echo "$mode" >/proc/sys/kernel/pidns_coupling
	fi
else
	echo "# systemd $sdver has no PrivatePIDs= (257 has)"
fi

echo "# what ran:"
dpkg-query -W systemd dbus udev util-linux 2>/dev/null | sed 's/^/#   /'
dmesg | grep -F pidns_coupling: | tail -20 | sed 's/^/# dmesg: /'
tap_end
