#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's util-linux, bubblewrap and firejail, and nsclone, against the policy.
# Debian's tools are called by full path: busybox sh runs its own
# unshare/nsenter applets before anything on PATH.
. /tests/tap.sh
echo "TAP version 13"

# explained DESCRIPTION STATUS EXPECTED -- COMMAND...: COMMAND exits STATUS
# and prints EXPECTED, namespace inodes ([N]) aside: util-linux's
# "nsclone: clone3 failed: Invalid argument", then the policy's line.
explained() {
	desc=$1
	want_st=$2
	want=$3
	shift 4
	out=$("$@" 2>&1)
	st=$?
	got=$(printf '%s\n' "$out" | sed 's/\[[0-9][0-9]*\]/[N]/g')
	if [ $st -eq "$want_st" ] && [ "$got" = "$want" ]; then
		tap 0 "$desc"
	else
		tap 1 "$desc"
		echo "# exit $st (wanted $want_st), wanted output:"
		printf '%s\n' "$want" | sed 's/^/#   /'
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}
EINVAL_2="nsclone: clone3 failed: Invalid argument
nsclone: kernel.pidns_coupling=2 (enforce) refuses CLONE_NEWPID without CLONE_NEWIPC and CLONE_NEWNET in the same call: add -i -n, or use --container"
EPERM_3="nsclone: failed to execute true: Operation not permitted
nsclone: kernel.pidns_coupling=3 (stage) refuses to run a program in pid:[N] while its mount, IPC and network namespaces belong to pid:[N], outside it: add -m -i -n, or use --container"

# Warn mode first: its log line must not be lost to the rate limit that
# the refusals below run into.
mode 1
output "warn: unshare --pid --fork runs as pid 1" "1" -- \
	/usr/bin/unshare --pid --fork sh -c 'echo $$'
check "warn: the kernel log names unshare and the missing flags" -- \
	sh -c 'dmesg | grep -E "pidns_coupling: unshare\[[0-9]+\]: CLONE_NEWPID without CLONE_NEWNS CLONE_NEWIPC CLONE_NEWNET: allowed"'


mode 2
refuse "enforce: unshare --pid --fork true is refused" "Invalid argument" -- \
	/usr/bin/unshare --pid --fork true
refuse "enforce: unshare --pid --mount --fork true is refused" "Invalid argument" -- \
	/usr/bin/unshare --pid --mount --fork true
output "enforce: unshare --pid --mount --ipc --net --fork --mount-proc runs as pid 1" "1" -- \
	/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sh -c 'echo $$'
output "enforce: unshare -U -r -p -m -i -n --fork runs as pid 1 (user namespace)" "1" -- \
	/usr/bin/unshare -U -r -p -m -i -n --fork sh -c 'echo $$'
refuse "enforce: bwrap --unshare-pid is refused" "Invalid argument" -- \
	/usr/bin/bwrap --dev-bind / / --unshare-pid true
output "enforce: bwrap --unshare-pid --unshare-ipc --unshare-net runs as pid 2 (bwrap is pid 1)" "2" -- \
	/usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid --unshare-ipc --unshare-net sh -c 'echo $$'
check "enforce: bwrap --unshare-net brings up loopback in its new net namespace" -- \
	/usr/bin/bwrap --dev-bind / / --unshare-pid --unshare-ipc --unshare-net sh -c 'ip link show lo | grep -q UP'
check "enforce: lsns lists namespaces" -- /usr/bin/lsns -t pid
explained "enforce: nsclone explains the refusal" 1 "$EINVAL_2" -- /bin/nsclone -p -m true
explained "enforce: nsclone explains the refusal to a user without privilege" 1 "$EINVAL_2" -- \
	su -s /bin/sh user -c '/bin/nsclone -r -p -m true'
explained "enforce: nsclone -s unshare explains the refusal" 1 "$(printf '%s\n' "$EINVAL_2" | sed 's/clone3 failed/unshare failed/')" -- \
	/bin/nsclone -s unshare -p -m true
output "enforce: nsclone --container --mount-proc runs as pid 1" "1" -- \
	/bin/nsclone --container --mount-proc sh -c 'echo $$'
output "enforce: nsclone -s unshare -p -m -i -n runs as pid 1" "1" -- \
	/bin/nsclone -s unshare -p -m -i -n --mount-proc sh -c 'echo $$'
output "enforce: nsclone -r --container runs as root of a user namespace" "0 1" -- \
	/bin/nsclone -r --container --mount-proc sh -c 'echo $(id -u) $$'
explained "enforce: nsclone -s clone -p is refused and explained" 1 "$(printf '%s\n' "$EINVAL_2" | sed 's/clone3 failed/clone failed/; s/without CLONE_NEWIPC and CLONE_NEWNET/without CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET/; s/add -i -n/add -m -i -n/')" -- \
	/bin/nsclone -s clone -p true
output "enforce: nsclone exits with the command's status" "exit 7" -- \
	sh -c '/bin/nsclone --container sh -c "exit 7"; echo "exit $?"'
output "enforce: nsclone exits 127 when the command is missing" "exit 127" -- \
	sh -c '/bin/nsclone --container /nonexistent 2>/dev/null; echo "exit $?"'
output "enforce: nsclone --policy" \
	"kernel.pidns_coupling = 2 (enforce): CLONE_NEWPID without CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET is refused with EINVAL" -- \
	/bin/nsclone --policy
check "enforce: nsclone --matrix shows pid alone refused with EINVAL" -- \
	sh -c '/bin/nsclone --matrix | grep -Eq "^pid +0x20000000 clone3 +refused +EINVAL$"'
check "enforce: nsclone --matrix shows pid,mnt,ipc,net and container accepted" -- \
	sh -c 'm=$(/bin/nsclone --matrix) && echo "$m" | grep -Eq "^pid,mnt,ipc,net +0x68020000 clone3 +accepted +-$" && echo "$m" | grep -Eq "^container +0x00000040 clone3 +accepted +-$"'
check "enforce: nsclone --matrix -s unshare refuses exactly the 7 uncoupled pid rows" -- \
	sh -c 'test "$(/bin/nsclone --matrix -s unshare | grep -c " refused ")" = 7'
check "enforce: nsclone --matrix --json is JSON with the verdicts" -- \
	sh -c '/bin/nsclone --matrix --json | tr -d " \n" | grep -q "{\"flags\":\"pid\",\"mask\":\"0x20000000\",\"syscall\":\"clone3\",\"result\":\"refused\",\"errno\":\"EINVAL\"}"'
check "enforce: nsclone --show-ids prints NSpid at both levels, the pid namespace and a pidfd" -- \
	sh -c 'o=$(/bin/nsclone --container --show-ids true) && echo "$o" | grep -Eq "^nsclone: NSpid:[[:space:]]+[0-9]+[[:space:]]+1$" && echo "$o" | grep -Eq "^nsclone: pid namespace: [0-9]+:[0-9]+ inode [0-9]+ " && echo "$o" | grep -Eq "^nsclone: pidfd: [0-9]+ "'
check "enforce: nsclone --show-ids names the child's pid namespace inode" -- \
	sh -c 'o=$(/bin/nsclone --container --show-ids readlink /proc/self/ns/pid) && ino=$(echo "$o" | sed -n "s/.* inode \([0-9]*\) .*/\1/p") && echo "$o" | grep -q "^pid:\[$ino\]$"'
refuse "enforce: firejail (no --net: the host network is shared) is refused" "Invalid argument" -- \
	/usr/bin/firejail --noprofile --quiet true
check "enforce: firejail --net=none (root: new IPC and network namespaces too) runs" -- \
	/usr/bin/firejail --noprofile --quiet --net=none true

mode 3
explained "stage: nsclone -p true is refused at its execve(), and explained" 126 "$EPERM_3" -- \
	/bin/nsclone -p true
explained "stage: the same for a user without privilege" 126 "$EPERM_3" -- \
	su -s /bin/sh user -c '/bin/nsclone -r -p true'
explained "stage: nsclone -s unshare -p true, the same" 126 "$EPERM_3" -- \
	/bin/nsclone -s unshare -p true
explained "stage: nsclone -p -m -i true names the network namespace alone" 126 "$(printf '%s\n' "$EPERM_3" | sed 's/its mount, IPC and network namespaces belong/its network namespace belongs/; s/add -m -i -n/add -n/')" -- \
	/bin/nsclone -p -m -i true
output "stage: nsclone --container runs" "1" -- \
	/bin/nsclone --container --mount-proc sh -c 'echo $$'
explained "stage: a refusal that is not the policy's gets no explanation" 126 "nsclone: failed to execute /: Permission denied" -- \
	/bin/nsclone --container /

mode 0
check "off: firejail without --net runs" -- /usr/bin/firejail --noprofile --quiet true
check "off: nsclone --matrix accepts every row" -- \
	sh -c 'test "$(/bin/nsclone --matrix | grep -c " accepted ")" = 17'
output "off: unshare --pid --fork runs as pid 1" "1" -- \
	/usr/bin/unshare --pid --fork sh -c 'echo $$'
output "off: unshare --pid --mount --ipc --net --fork --mount-proc still works" "1" -- \
	/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sh -c 'echo $$'
output "off: bwrap --unshare-pid runs as pid 2" "2" -- \
	/usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid sh -c 'echo $$'
output "off: bwrap --unshare-pid --unshare-ipc --unshare-net still works" "2" -- \
	/usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid --unshare-ipc --unshare-net sh -c 'echo $$'
output "off: nsclone -p runs as pid 1" "1" -- /bin/nsclone -p --mount-proc sh -c 'echo $$'

mode 2
tap_end
