#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's util-linux and bubblewrap, and nsclone, against the policy.
# Debian's tools are called by full path: busybox sh runs its own
# unshare/nsenter applets before anything on PATH.
. /tests/tap.sh
echo "TAP version 13"

MSG="nsclone: clone3(CLONE_NEWPID|CLONE_NEWNS): Invalid argument: kernel.pidns_coupling=2 requires CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET with CLONE_NEWPID (missing: CLONE_NEWIPC, CLONE_NEWNET); add -i -n or use --container"

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
refuse "enforce: nsclone explains the refusal" "$MSG" -- /bin/nsclone -p -m true
output "enforce: nsclone -c --mount-proc runs as pid 1" "1" -- \
	/bin/nsclone -c --mount-proc sh -c 'echo $$'
output "enforce: nsclone -s unshare -p -m -i -n runs as pid 1" "1" -- \
	/bin/nsclone -s unshare -p -m -i -n --mount-proc sh -c 'echo $$'
output "enforce: nsclone -r -c runs as root of a user namespace" "0 1" -- \
	/bin/nsclone -r -c --mount-proc sh -c 'echo $(id -u) $$'
refuse "enforce: nsclone -s clone -p is refused" "nsclone: clone(CLONE_NEWPID): Invalid argument: kernel.pidns_coupling=2 requires" -- \
	/bin/nsclone -s clone -p true
output "enforce: nsclone exits with the command's status" "exit 7" -- \
	sh -c '/bin/nsclone -c sh -c "exit 7"; echo "exit $?"'
output "enforce: nsclone exits 127 when the command is missing" "exit 127" -- \
	sh -c '/bin/nsclone -c /nonexistent 2>/dev/null; echo "exit $?"'
output "enforce: nsclone --policy" \
	"kernel.pidns_coupling = 2 (enforce): CLONE_NEWPID without CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET is refused with EINVAL" -- \
	/bin/nsclone --policy

mode 0
output "off: unshare --pid --fork runs as pid 1" "1" -- \
	/usr/bin/unshare --pid --fork sh -c 'echo $$'
output "off: unshare --pid --mount --ipc --net --fork --mount-proc still works" "1" -- \
	/usr/bin/unshare --pid --mount --ipc --net --fork --mount-proc sh -c 'echo $$'
output "off: bwrap --unshare-pid runs as pid 2" "2" -- \
	/usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid sh -c 'echo $$'
output "off: bwrap --unshare-pid --unshare-ipc --unshare-net still works" "2" -- \
	/usr/bin/bwrap --dev-bind / / --proc /proc --unshare-pid --unshare-ipc --unshare-net sh -c 'echo $$'
output "off: nsclone -p runs as pid 1" "1" -- /bin/nsclone -p --mount-proc sh -c 'echo $$'

mode 1
output "warn: unshare --pid --fork runs as pid 1" "1" -- \
	/usr/bin/unshare --pid --fork sh -c 'echo $$'
check "warn: the kernel log names unshare and the missing flags" -- \
	sh -c 'dmesg | grep -E "pidns_coupling: unshare\[[0-9]+\]: CLONE_NEWPID without CLONE_NEWNS CLONE_NEWIPC CLONE_NEWNET: allowed"'

mode 2
tap_end
