/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict oracle: what a clone(), clone3(), unshare() or setns(pidfd)
 * request should do, from the documentation alone (docs/policy.md, the
 * man pages in docs/man2/ and the kernel's sysctl/kernel.rst, entry
 * pidns_coupling, for the policy; clone(2), unshare(2), setns(2) and
 * user_namespaces(7) for the rules that were there before it), and what
 * the new task's fork and execve() then get from the policy's state checks.
 * It never asks the kernel anything.
 */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdbool.h>
#include <stdint.h>

enum oracle_call {
	ORACLE_CLONE,		/* legacy clone(flags | SIGCHLD, NULL, ...) */
	ORACLE_CLONE3,		/* clone3() with .flags, .exit_signal = SIGCHLD */
	ORACLE_UNSHARE,		/* unshare(flags) */
	ORACLE_SETNS,		/* setns(pidfd, flags), the target in new ones */
	ORACLE_CALLS,
};

struct oracle_case {
	enum oracle_call call;
	uint64_t flags;		/* the flag word as passed */
	int mode;		/* kernel.pidns_coupling: 0, 1, 2 or 3 */
	bool alias;		/* the kernel has CLONE_NEWCONTAINER (patched) */
	bool unpriv;		/* uid 1000 without capabilities, not root */
	/*
	 * setns: the mode in which the target's namespaces were made, all at
	 * once (clone3() with CLONE_NEWPID, NEWNS, NEWIPC and NEWNET).
	 */
	int target_mode;
};

struct oracle_verdict {
	int err;		/* 0 for success, or the errno */
	/*
	 * On success, the namespaces (CLONE_NEW* bits) in which the new task
	 * (clone, clone3) or the caller's next child (unshare, setns) differs
	 * from the caller before the call: new ones for clone, clone3 and
	 * unshare, the target's for setns. All others are the caller's.
	 */
	uint64_t ns;
	/*
	 * unshare, setns: the errno of the caller's next fork() (0: it
	 * succeeds), the state check at a fork into another PID namespace.
	 */
	int fork_err;
	/*
	 * The errno of an execve() by the new task (clone, clone3), or by the
	 * child of that fork, in the state the request left it (0: it
	 * succeeds). The state check at execve().
	 */
	int exec_err;
	/*
	 * The rule on the flags of one call judged the request: it is counted
	 * in kernel.pidns_coupling_stats as its call's, allowed (mode 1) or
	 * refused (mode 2). A request refused for another reason is not.
	 */
	bool counted;
};

struct oracle_verdict oracle(const struct oracle_case *c);

const char *oracle_call_name(enum oracle_call call);

#endif /* ORACLE_H */
