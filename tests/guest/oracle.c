// SPDX-License-Identifier: GPL-2.0
/*
 * The verdict oracle (see oracle.h). Each rule names the text it comes
 * from. It is deliberately written without nsflags.c's helpers
 * (ns_expand(), ns_missing()), which the code under test shares with
 * nsclone: a mistake there must not be copied into the expectation.
 */
#include <errno.h>
#include <linux/sched.h>

#include "oracle.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif
/* docs/policy.md, "The ABI": 0x40 */
#define ORACLE_NEWCONTAINER	0x00000040ULL

/* clone(2): "the low byte of flags contains the number of the
 * termination signal" (CSIGNAL) */
#define ORACLE_CSIGNAL		0xffULL

/* namespaces(7): the eight namespace flags */
#define ORACLE_NS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | \
		   CLONE_NEWUTS | CLONE_NEWUSER | CLONE_NEWCGROUP | \
		   (uint64_t)CLONE_NEWTIME)

/* policy.md, "The rule": what CLONE_NEWPID must come with */
#define ORACLE_COUPLED	((uint64_t)(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET))

const char *oracle_call_name(enum oracle_call call)
{
	static const char *const names[] = {
		[ORACLE_CLONE] = "clone",
		[ORACLE_CLONE3] = "clone3",
		[ORACLE_UNSHARE] = "unshare",
		[ORACLE_SETNS] = "setns(pidfd)",
	};

	return call < ORACLE_CALLS ? names[call] : "?";
}

static struct oracle_verdict refuse(int err)
{
	return (struct oracle_verdict){ .err = err };
}

/*
 * kernel.rst, pidns_coupling: the state checks, for the new task of an
 * accepted request. Only a task in a PID namespace other than the initial
 * one is judged, so only a request with CLONE_NEWPID: the new task is in a
 * new PID namespace (clone, clone3), or the caller's next child is born in
 * a new one (unshare) or the target's (setns).
 *
 * "Every mount, IPC and network namespace belongs to the PID namespace
 * that its creator's children were born into when it was created": those
 * the request creates with CLONE_NEWPID belong to the new PID namespace,
 * and the target's to its own, since it was made with all of them at once.
 * The others stay the caller's, which "belong to the initial PID
 * namespace". So the namespaces that are not the task's own are exactly
 * the coupled ones that the request did not ask for.
 */
static void oracle_state(const struct oracle_case *c, struct oracle_verdict *v)
{
	uint64_t foreign = ORACLE_COUPLED & ~v->ns;
	int born = c->call == ORACLE_SETNS ? c->target_mode : c->mode;
	bool refused;

	if (!(v->ns & CLONE_NEWPID) || !foreign)
		return;
	/*
	 * Mode 0 judges nothing, mode 1 only logs; modes 2 and 3 refuse,
	 * except for what ran in "a PID namespace created while the mode was
	 * 0 or 1": the execve() and setns() of "the tasks that were in it"
	 * are "only logged, as in mode 1". "A task forked into it from
	 * outside after the mode was raised to 2 or 3 ... is judged in full":
	 * the fork after setns() is such a fork, whatever the target's age.
	 * (The caller's mount, IPC and network namespaces are the initial
	 * ones, which no PID namespace can claim.)
	 */
	refused = c->mode >= 2 && (born >= 2 || c->call == ORACLE_SETNS);
	if (!refused)
		return;
	/*
	 * "A fork into a PID namespace other than the parent's (after setns()
	 * or unshare() of a PID namespace)": EINVAL. clone() and clone3()
	 * with CLONE_NEWPID are judged by their flags alone. Stage mode does
	 * not judge "the fork that gives a PID namespace its init": the one
	 * after unshare(). The target of setns() has its init already.
	 */
	if (c->call == ORACLE_SETNS ||
	    (c->call == ORACLE_UNSHARE && c->mode != 3)) {
		v->fork_err = EINVAL;
		return;
	}
	/* "execve() in a PID namespace other than the initial one": EPERM. */
	v->exec_err = EPERM;
}

struct oracle_verdict oracle(const struct oracle_case *c)
{
	struct oracle_verdict v = { .err = 0 };
	uint64_t flags = c->flags, want;

	switch (c->call) {
	case ORACLE_CLONE:
		/*
		 * clone(2): the low byte is the exit signal, so CLONE_NEWTIME
		 * (0x80) is not a flag there ("use clone3()"); policy.md, "The
		 * ABI": nor is CLONE_NEWCONTAINER (0x40). Both only change the
		 * exit signal, which the kernel does not validate for clone();
		 * but "an exit signal that it makes invalid
		 * (CLONE_NEWCONTAINER | SIGCHLD, 81) is refused with EINVAL in
		 * modes 1-3": with SIGCHLD (17), 0x40 always makes it invalid.
		 */
		if ((flags & ORACLE_NEWCONTAINER) && c->alias && c->mode != 0)
			return refuse(EINVAL);
		flags &= ~ORACLE_CSIGNAL;
		break;
	case ORACLE_CLONE3:
		/*
		 * clone3 in clone(2): CSIGNAL bits in .flags are EINVAL, except
		 * CLONE_NEWTIME and, with the series, CLONE_NEWCONTAINER.
		 */
		if ((flags & ORACLE_NEWCONTAINER) && !c->alias)
			return refuse(EINVAL);
		break;
	case ORACLE_UNSHARE:
	case ORACLE_SETNS:
		/*
		 * unshare(2), setns(2): unknown flags are EINVAL; 0x40 is one
		 * without the series ("that is the feature test").
		 */
		if ((flags & ORACLE_NEWCONTAINER) && !c->alias)
			return refuse(EINVAL);
		break;
	default:
		return refuse(-1);
	}

	/* policy.md, "The ABI": the alias means exactly the four flags. */
	if (flags & ORACLE_NEWCONTAINER)
		flags = (flags & ~ORACLE_NEWCONTAINER) | CLONE_NEWPID |
			CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;
	want = flags & ORACLE_NS;

	/* setns(2): with a pidfd, nstype must name at least one namespace. */
	if (c->call == ORACLE_SETNS && !want)
		return refuse(EINVAL);

	/*
	 * Permissions. Root (CAP_SYS_ADMIN in the initial user namespace)
	 * may create and join everything here. Without capabilities:
	 * clone(2), unshare(2): CLONE_NEWUSER needs no privilege and the
	 * other namespaces are created with the capabilities the new user
	 * namespace gives (user_namespaces(7)); without it, any namespace is
	 * EPERM. setns(2): the target's namespaces belong to a user
	 * namespace that uid 1000 created, so joining it first
	 * (CLONE_NEWUSER in the mask) gives CAP_SYS_ADMIN there; without it,
	 * joining any namespace needs CAP_SYS_ADMIN in the caller's own user
	 * namespace, which it lacks: EPERM.
	 */
	if (c->unpriv && want && !(want & CLONE_NEWUSER))
		return refuse(EPERM);

	/*
	 * policy.md, "The rule": in enforce mode CLONE_NEWPID without all of
	 * CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET is EINVAL, judged after
	 * every other check ("a request that the kernel refuses for another
	 * reason ... fails as it does without the series").
	 * Modes 0 and 1 accept it (1 only logs); kernel.rst, pidns_coupling:
	 * stage mode (3) drops "the rule on the flags of one call".
	 */
	if (c->alias && (c->mode == 1 || c->mode == 2) &&
	    (want & CLONE_NEWPID) &&
	    (want & ORACLE_COUPLED) != ORACLE_COUPLED) {
		/* "every verdict of modes 1 to 3 is counted" */
		v.counted = true;
		if (c->mode == 2) {
			v.err = EINVAL;
			return v;
		}
	}

	v.ns = want;
	if (c->alias)
		oracle_state(c, &v);
	return v;
}
