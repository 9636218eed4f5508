#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# pidns-lsm's systemd units on Debian's stock kernel, systemd as PID 1
# (tests/stock-kernel with PIDNS_STOCK_UNIT=1: qemu/hostinit's
# pidns.systemd=1). What an operator does: the units as meson installs
# them (the loader's path the build's), /etc/default/pidns-lsm asking for
# stage mode, systemd-analyze verify, start; then stage mode refuses a
# lone unshare(CLONE_NEWPID)'s init at its execve() and runs a container
# that makes all four, and the record service writes both records; stop
# detaches and unpins; start again attaches again.
. "$PIDNS_TOP/tests/guest/tap.sh"
echo "TAP version 13"
top=$PIDNS_TOP
lsm=$top/build/meson/userspace/pidns-lsm
echo "# $(uname -r); $(systemctl --version | head -1); $(. /etc/os-release; echo "$PRETTY_NAME")"

booted
check "systemd has mounted the BPF filesystem on /sys/fs/bpf" -- \
	sh -c "findmnt -n -t bpf /sys/fs/bpf >/dev/null"

for u in pidns-lsm.service pidns-lsm-record.service; do
	sed "s|/usr/local/sbin/pidns-lsm|$lsm|g" "$top/build/meson/userspace/$u" >"/etc/systemd/system/$u"
done
echo PIDNS_LSM_MODE=3 >/etc/default/pidns-lsm
systemctl daemon-reload
check "systemd-analyze verify accepts both units" -- \
	systemd-analyze verify --man=no /etc/systemd/system/pidns-lsm.service /etc/systemd/system/pidns-lsm-record.service
check "systemctl enable pidns-lsm.service pidns-lsm-record.service" -- \
	systemctl enable pidns-lsm.service pidns-lsm-record.service
check "systemctl start pidns-lsm.service pidns-lsm-record.service" -- \
	systemctl start pidns-lsm.service pidns-lsm-record.service
output "pidns-lsm status: attached in /etc/default/pidns-lsm's mode" "attached, mode 3" -- \
	sh -c "\"$lsm\" status | head -1"
check "the record service runs" -- systemctl is-active -q pidns-lsm-record.service

refuse "stage mode: unshare --pid --fork alone, its init's execve() refused" \
	"Operation not permitted" -- /usr/bin/unshare --pid --fork /bin/true
check "stage mode: unshare --pid --mount --ipc --net --fork runs" -- \
	/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc /bin/true
sleep 1
check "the record service wrote the refusal as the patched kernel's log line" -- \
	grep -q 'execve "/bin/true" .*: refused (kernel.pidns_coupling=3)' /var/log/pidns-lsm.log
check "and as the trace event's text" -- \
	grep -q 'pidns_coupling_verdict: call=exec .* mode=3 verdict=refused' /var/log/pidns-lsm.trace
sed 's/^/# log: /' /var/log/pidns-lsm.log | tail -3

check "systemctl stop pidns-lsm.service" -- systemctl stop pidns-lsm.service
check "stopping it stops the record service too (BindsTo=)" -- \
	sh -c '! systemctl is-active -q pidns-lsm-record.service'
[ ! -e /sys/fs/bpf/pidns-coupling ]
tap $? "stopped, nothing of it stays pinned"
check "and unshare --pid --fork alone runs again" -- /usr/bin/unshare --pid --fork /bin/true
check "systemctl start pidns-lsm.service attaches again" -- \
	sh -c "systemctl start pidns-lsm.service && \"$lsm\" status | grep -qx 'attached, mode 3'"
check "systemctl stop pidns-lsm.service detaches again" -- \
	sh -c "systemctl stop pidns-lsm.service && [ ! -e /sys/fs/bpf/pidns-coupling ]"
failed=$(systemctl list-units --failed --no-legend --plain --no-pager 'pidns-lsm*')
[ -z "$failed" ]
tap $? "no pidns-lsm unit failed${failed:+: $failed}"
tap_end
