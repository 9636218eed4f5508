/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict oracle: what a clone(), clone3(), unshare() or setns(pidfd)
 * request should do, from the documentation alone (docs/policy.md and the
 * man pages in docs/man2/ for the policy; clone(2), unshare(2), setns(2)
 * and user_namespaces(7) for the rules that were there before it).
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
	int mode;		/* kernel.pidns_coupling: 0, 1 or 2 */
	bool alias;		/* the kernel has CLONE_NEWCONTAINER (patched) */
	bool unpriv;		/* uid 1000 without capabilities, not root */
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
};

struct oracle_verdict oracle(const struct oracle_case *c);

const char *oracle_call_name(enum oracle_call call);

#endif /* ORACLE_H */
