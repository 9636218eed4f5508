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

struct oracle_verdict oracle(const struct oracle_case *c)
{
	uint64_t flags = c->flags, want;

	switch (c->call) {
	case ORACLE_CLONE:
		/*
		 * clone(2): the low byte is the exit signal, so CLONE_NEWTIME
		 * (0x80) is not a flag there ("use clone3()"); policy.md, "The
		 * ABI": nor is CLONE_NEWCONTAINER (0x40). Both only change the
		 * exit signal, which the kernel does not validate for clone().
		 */
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
	 * policy.md, "The rule": in enforce mode CLONE_NEWPID without all of
	 * CLONE_NEWNS, CLONE_NEWIPC and CLONE_NEWNET is EINVAL, checked before
	 * the permission check ("an unprivileged caller ... gets EINVAL").
	 * Modes 0 and 1 accept it (1 only logs).
	 */
	if (c->alias && c->mode == 2 && (want & CLONE_NEWPID) &&
	    (!(want & CLONE_NEWNS) || !(want & CLONE_NEWIPC) ||
	     !(want & CLONE_NEWNET)))
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

	return (struct oracle_verdict){ .err = 0, .ns = want };
}
