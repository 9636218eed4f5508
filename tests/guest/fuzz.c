// SPDX-License-Identifier: GPL-2.0
/*
 * Random flag words, bounded, and random sequences of calls, in two parts.
 *
 * 1. Random calls: clone3() (random flags, struct sizes and fields),
 *    unshare() and setns() (pidfds and namespace fds of coupled targets,
 *    random nstype), each from the worker's initial state, in enforce (2)
 *    or stage (3) mode, drawn for each batch. In enforce mode the new task
 *    (the clone3 child, or the next child of the unsharer or joiner) must
 *    obey the invariant of the same-call rule: if its PID namespace is not
 *    its parent's, none of its mount, IPC and network namespaces is its
 *    parent's. In a new PID namespace it also runs the execve() probe
 *    below (every time in stage mode, where that is the only rule; one
 *    call in four in enforce mode).
 *
 * 2. Chains: a process (root, or uid 1000 for a quarter of them) in a
 *    random mode (0 to 3) makes a random sequence of clone()/clone3() and
 *    fork() (going on in the child), unshare(), setns() by namespace fd
 *    and by pidfd (of the targets, the test, the chain's own processes
 *    and namespaces, saved along the way), mode changes, and execve()
 *    probes: by itself, or by a child it forks; namespaces made and
 *    left ("pin and leave"), setns() back to its own PID namespace
 *    ("reset pid_for_children"), and concurrent joiners: two or three
 *    tasks in PID namespaces of their own or one they joined, released at
 *    once to setns() into one namespace and execve() (see step_race()).
 *
 * The execve() probe is the state invariant of kernel.pidns_coupling: no
 * task that runs a program in a PID namespace other than the initial one,
 * in mode 2 or 3, in a PID namespace made in mode 2 or 3 (or that it was
 * forked into from outside in mode 2 or 3), has a mount, IPC or network
 * namespace that belongs to a PID namespace outside its own.
 * Userspace cannot read the owner, so the test knows it by construction:
 * every namespace that a call creates is recorded in memory shared by all
 * (a memfd, which the new image of execve() maps again), with the PID
 * namespace that its creator's children are born into
 * (/proc/self/ns/pid_for_children) as owner, and every PID namespace with
 * its parent and the mode it was made in; the guest's initial namespaces
 * belong to the initial PID namespace. Owners change by claims, as
 * policy.md says: at each point the kernel judges (a fork into another PID
 * namespace, a setns() by a task outside the initial PID namespace, an
 * execve()), in modes 1 to 3, a namespace that the task's PID namespace P
 * does not own, that is not one of the initial ones and whose owner (or
 * that owner's nearest live ancestor, if it has no task left) is an
 * ancestor of P, becomes P's if no task outside P is a member, other than
 * one whose pid_for_children is P or inside it. The test decides each
 * claim itself, from every task's /proc/PID/task/TID/ns links (tasks it
 * cannot read are not its own: as uid 1000, root's tasks, which never
 * join what uid 1000 made), and records the new owner. A probe execs this program, whose
 * new image reads its /proc/self/ns inodes, judges them from the record,
 * and counts; an execve() that fails is judged by the caller. Both
 * directions count: an execve() that runs where the state says EPERM is a
 * counterexample, and so is an EPERM where the state says it may run.
 * In mode 0 the probes must reach the unsafe state at least once (the
 * check has teeth), and in modes 2 and 3 they must run in a judged PID
 * namespace at least once each (it does not pass vacuously).
 *
 * Kernel command line: pidns.fuzz_calls=N (default 100000; a quarter of
 * them, or pidns.fuzz_steps=M, are chain steps), pidns.fuzz_seed=S
 * (default: from getrandom()), pidns.fuzz_first=I (start the random calls
 * at call I, to replay one call with pidns.fuzz_calls=1
 * pidns.fuzz_steps=0), pidns.fuzz_chain=K (start the chains at chain K,
 * to replay one up to step L with pidns.fuzz_calls=L pidns.fuzz_steps=L;
 * each counterexample prints its own).
 *
 * Random calls run in batches in a worker process, which dies and is
 * replaced after every successful unshare() or setns() (they change it).
 * A quarter of the batches run as uid 1000. The targets are created in
 * enforce mode, so every PID namespace of part 1 that can be joined is
 * coupled.
 *
 * Flags that would make the new task share the worker's memory, stack or
 * TLS, or not be its child (CLONE_VM, CLONE_SIGHAND, CLONE_THREAD,
 * CLONE_SETTLS, CLONE_PARENT), are cleared from clone3 words: with them the
 * child could not run the check, and they are not namespace flags.
 * SIGKILL and SIGSTOP are not used as exit signals (they would stop the
 * worker); the worker blocks every other signal.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#ifndef __WALL
#define __WALL		0x40000000
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND	0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif

#define BATCH		2000
#define LIST_MAX	20
#define NTARGETS	3
#define NSFDS		4	/* pid, mnt, ipc, net files of each target */
#define NSREC_MAX	16384	/* namespaces recorded (a power of 2) */
#define POOL_MAX	48	/* fds a chain can setns() to */
#define HISTORY		240	/* a chain's steps, as text */
#define CHAIN_SECS	60	/* a chain that takes longer hung */
#define PROBE_ARG	"--exec-probe"
#define RACE_ARG	"--race-probe"
#define RACERS_MAX	3	/* concurrent joiners of one namespace */
#define RACE_SECS	10	/* a racer slower than this hung */

enum call { FUZZ_CLONE3, FUZZ_UNSHARE, FUZZ_SETNS, FUZZ_CALLS };
static const char *const call_name[] = { "clone3", "unshare", "setns" };

/* The steps of a chain (part 2). */
enum step { STEP_UNSHARE, STEP_CLONE, STEP_FORK, STEP_SETNS_FD,
	    STEP_SETNS_PIDFD, STEP_PROBE, STEP_EXEC, STEP_SAVE, STEP_MODE,
	    STEP_PIN, STEP_RESET, STEP_RACE, STEP_N };
static const char *const step_name[STEP_N] = {
	"unshare", "clone", "fork", "setns(fd)", "setns(pidfd)",
	"fork+execve", "execve", "save fds", "mode",
	"pin and leave", "reset pid_for_children", "concurrent joiners",
};
/* Out of 33, how often each step is drawn. */
static const int step_weight[STEP_N] = { 5, 4, 3, 5, 3, 4, 2, 2, 2, 1, 1, 1 };
#define STEP_WEIGHTS	33

/*
 * The namespaces whose owners are recorded, as /proc/self/ns names them;
 * NST_PIDC is pid_for_children, and in a chain's pool NST_PIDFD a pidfd.
 */
enum nstype { NST_PID, NST_MNT, NST_IPC, NST_NET, NST_PIDC, NST_N,
	      NST_PIDFD = NST_N };
static const char *const nst_file[NST_N] = {
	"pid", "mnt", "ipc", "net", "pid_for_children",
};
static const uint64_t nst_flag[NST_N] = {
	CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID,
};

/* A task's namespaces by inode, indexed by enum nstype. */
struct view {
	uint64_t ino[NST_N];
};

/*
 * What the test knows of a namespace, recorded when a call created it. A
 * live namespace keeps its inode and pins its owner (a mount, IPC or
 * network namespace holds its PID namespace, a PID namespace its parent),
 * so the record of a namespace that a task has is never stale: an inode
 * is recorded again only once it has been freed and reused.
 */
struct nsrec {
	uint64_t ino;		/* 0: a free slot */
	uint64_t owner;		/* PID namespace (pid: its parent; 0: none) */
	int type;		/* NST_PID, NST_MNT, NST_IPC or NST_NET */
	int mode;		/* pid: the mode it was made in */
	bool had_task;		/* pid: a task of the test was seen in it */
	uint64_t born;		/* pid: st->births when the test made it, 0: seen */
	uint64_t owner_at;	/* st->births when owner was last set */
};

/* A task's namespaces by inode, 0 where unreadable. */
struct taskns {
	uint64_t ino[NST_N];
	bool pidc_guessed;	/* ino[NST_PIDC] is the table's guess, not /proc's */
};

#define TASKS_MAX	1024
#define SCAN_REQUEST	'S'	/* a chain asks the driver to read /proc */

/* What the execve() probe and its new image exit with. */
enum {
	PROBE_OWN = 20,		/* it ran; every namespace is the task's own */
	PROBE_FOREIGN,		/* it ran with a foreign one, as allowed */
	PROBE_REFUSED,		/* EPERM, as the state says */
	PROBE_VIOLATED,		/* it ran where the state says EPERM */
	PROBE_OVERREFUSED,	/* EPERM where the state says it may run */
	PROBE_FAILED,		/* another error */
	PROBE_UNTRACKED,	/* a namespace the test did not see created */
	PROBE_END
};
static const char *const probe_name[] = {
	"ran", "ran with a foreign namespace", "refused",
	"ran, but the state says EPERM", "EPERM, but the state says it may run",
	"failed", "a namespace was not recorded",
};

/* Where a probe was: the call of part 1 or the chain of part 2. */
struct where {
	int kind;		/* enum call, or FUZZ_CALLS for a chain */
	int step;		/* chain: its steps so far */
	uint64_t call;		/* the call, or the chain */
	uint64_t flags;		/* the call's flags */
	char history[HISTORY];	/* chain: its steps */
};

/* A counterexample of the state invariant. */
struct example {
	struct where w;
	int code, err, mode, born;
	uint64_t pid, foreign, lost, lost_in, lost_owner;
};

/*
 * A concurrent joiner (step "concurrent joiners"): a task in a PID
 * namespace of its own making or one it joined, waiting with the others
 * to setns() into one namespace and execve().
 */
enum { RACE_NONE, RACE_UNREADY, RACE_READY, RACE_SETNS_REFUSED,
       RACE_EXEC_REFUSED, RACE_BROKEN, RACE_RAN };

struct racer {
	int state;		/* RACE_*, the last it reached */
	int err;		/* the errno it stopped at */
	bool join;		/* in a PID namespace it joined */
	uint64_t pid;		/* its PID namespace */
	uint64_t ino;		/* the contested namespace, as its image has it */
	uint64_t owner;		/* and its owner then (NS_GET_PIDNS_OWNER) */
	struct timespec t0, t1;	/* around its setns() */
};

/* How a racer gets into its PID namespace, and joins the contested one */
struct racer_plan {
	bool join;		/* join a PID namespace of the pool */
	int pool;		/* join: the pidfd or PID namespace file */
	uint64_t flags;		/* unshare()'s, or setns()'s if it joins */
	uint64_t then;		/* join: unshare() after setns() */
	int nstype;		/* setns() into the contested one: its flag, or 0 */
};

/* Shared between the driver, the workers, the chains and the probes. */
struct state {
	uint64_t next;			/* the call a worker should do next */
	uint64_t calls[FUZZ_CALLS];
	uint64_t accepted[FUZZ_CALLS];
	uint64_t new_pidns[FUZZ_CALLS];	/* accepted, with a new PID namespace */
	uint64_t fork_refused;		/* a fork after unshare/setns refused */
	uint64_t violations;
	struct {
		uint64_t call, flags;
		int kind, detail;
	} list[LIST_MAX];

	int mode;			/* kernel.pidns_coupling, as last set */
	uint64_t host_pid;		/* the initial PID namespace */
	uint64_t steps, steps_end;	/* chain steps made, and to make */
	uint64_t chains, chain_ok[STEP_N], chain_calls[STEP_N];
	uint64_t chain_einval;		/* fork, clone or probe fork: EINVAL */
	uint64_t exec_ran[4];		/* in a non-initial PID ns, by mode */
	uint64_t exec_foreign[4];	/* of them, with a foreign namespace */
	uint64_t exec_judged[4];	/* in a PID ns made in mode 2 or 3 */
	uint64_t exec_refused[4];
	uint64_t predates;		/* ran in 2/3, foreign: PID ns of 0/1 */
	uint64_t claims[2];		/* claims tried that failed, made */
	struct {
		uint64_t ino, from, to, chain;
		int type, step;
	} claim_log[64];		/* the last claims made, for diagnosis */
	uint64_t claim_n;
	uint64_t claims_bad;		/* claims against the rule */
	uint64_t claims_unread;		/* claims /proc could not be read for */
	/*
	 * Owners handed to an ancestor when their PID namespace was freed
	 * (patch 2), and execve() claims not predicted because the owner
	 * could be freed meanwhile (see pidns_unpinned()).
	 */
	uint64_t orphans, claims_uncertain;
	uint64_t builder_unknown;	/* builders' execve() not judged */
	uint64_t builder_judged;	/* builders' execve() judged */
	/*
	 * PID namespaces the test made (pidns_born()), and the hand-ups not
	 * judged because a PID namespace made later had taken the freed
	 * owner's inode number.
	 */
	uint64_t births, orphans_reused;
	struct {
		struct where w;
		uint64_t ino, from, to;
		int type, why;
		char members[160];	/* who was in it, when seen */
	} claim_list[LIST_MAX];
	uint64_t bad[PROBE_END - PROBE_OWN];
	uint64_t nsrec_full, fake_next;
	struct example bad_list[2][LIST_MAX];	/* of part 1, of part 2 */
	uint64_t nbad[2];
	struct where pending;		/* the probe in execve(), for its image */
	/*
	 * /proc as the driver reads it for a chain: root in the initial user
	 * namespace sees every task's namespaces, a task in a user namespace
	 * of its own only those of its namespace (commoncap's ptrace check).
	 */
	struct racer race[RACERS_MAX];
	/*
	 * Races by mode: made (two joiners or more at the barrier), with one
	 * winner or more, with winners in one PID namespace or nested ones,
	 * with winners in unrelated ones (the rule's failure in modes 2 and
	 * 3, the control in 0 and 1); contested (racers in unrelated PID
	 * namespaces for a namespace that is not an initial one), of them
	 * won, and with setns() calls that overlapped in time; races whose
	 * winners saw two owners; and the races that could not be judged
	 * from the record.
	 */
	uint64_t races[4], races_won[4], races_shared[4], races_split[4];
	uint64_t races_contested[4], races_contested_won[4], races_overlap[4];
	uint64_t races_two_owners[4], races_adopted;
	uint64_t races_unjudged, races_hung, races_unsettled, races_broken;
	struct {
		int slot, state;
		struct racer_plan plan;
	} race_hangs[LIST_MAX];
	struct {
		struct where w;
		int type, mode;
		uint64_t ino, pid[RACERS_MAX];
	} race_bad[LIST_MAX];
	struct taskns scan[TASKS_MAX];
	int scan_n;
	char scan_self[32];		/* the asking task, as /proc names it */
	uint64_t scan_pidc;		/* and its pid_for_children */
	struct nsrec ns[NSREC_MAX];
};

static struct state *st;
static uint64_t seed;
static int memfd = -1;			/* st, for the probe's new image */
static int pidfds[NTARGETS], nsfds[NTARGETS * NSFDS];
static int hostfds[NST_NET + 1], selfpidfd;
static int req_rd = -1, req_wr = -1, ack_rd = -1, ack_wr = -1;
static ino_t host[NS_MAX];
static struct view hostv;

/* The namespace entries of ns_flags[] that the invariant looks at. */
static int ix_pid = -1, ix_mnt = -1, ix_ipc = -1, ix_net = -1;

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t ns_bits(void)
{
	uint64_t all = 0;
	size_t i;

	for (i = 0; i < ns_flags_count; i++)
		all |= ns_flags[i].bit;
	return all;
}

/* The bits that each call knows, besides the namespace flags. */
static const uint64_t known[FUZZ_CALLS] = {
	[FUZZ_CLONE3] = CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_IO |
		CLONE_PTRACE | CLONE_UNTRACED | CLONE_VFORK | CLONE_PIDFD |
		CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID |
		CLONE_CLEAR_SIGHAND,
	[FUZZ_UNSHARE] = CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_VM |
		CLONE_SIGHAND | CLONE_THREAD,
	[FUZZ_SETNS] = 0,
};

/*
 * A flag word for @kind: raw 64 bits (1/8), raw low 32 bits (1/8), a
 * subset of the bits the call knows with one more random bit (1/4), or
 * such a subset alone (1/2).
 */
static uint64_t random_flags(uint64_t *r, int kind)
{
	uint64_t w = splitmix(r), mask = ns_bits() | known[kind];

	switch (splitmix(r) % 8) {
	case 0:
		return w;
	case 1:
		return w & 0xffffffffULL;
	case 2:
	case 3:
		return (w & mask) | (1ULL << (splitmix(r) % 64));
	default:
		return w & mask;
	}
}

/* The record of @ino, or (@add) the free slot for it; NULL if none. */
static struct nsrec *nsrec_find(uint64_t ino, bool add)
{
	size_t i, h = ino & (NSREC_MAX - 1);

	for (i = 0; i < NSREC_MAX; i++) {
		struct nsrec *e = &st->ns[(h + i) & (NSREC_MAX - 1)];
		uint64_t at = __atomic_load_n(&e->ino, __ATOMIC_ACQUIRE);

		if (at == ino)
			return e;
		if (!at)
			return add ? e : NULL;
	}
	return NULL;
}

/* The table takes @owner for @e's owner, now (see pidns_born()). */
static void owner_set(struct nsrec *e, uint64_t owner)
{
	e->owner = owner;
	e->owner_at = __atomic_load_n(&st->births, __ATOMIC_SEQ_CST);
}

/*
 * Record namespace @ino of @type, owned by @owner (for a PID namespace:
 * its parent, and @mode the mode it was made in).
 */
static void nsrec_note(uint64_t ino, int type, uint64_t owner, int mode)
{
	struct nsrec *e = nsrec_find(ino, true);

	if (!e) {
		__atomic_fetch_add(&st->nsrec_full, 1, __ATOMIC_SEQ_CST);
		return;
	}
	e->type = type;
	owner_set(e, owner);
	e->born = 0;
	e->mode = mode;
	e->had_task = false;
	__atomic_store_n(&e->ino, ino, __ATOMIC_RELEASE);
}

/*
 * Whether PID namespace record @o, found under the number of @e's owner,
 * is of a PID namespace the test made after that owner was set: then the
 * owner was freed and its number reused.
 */
static bool owner_reused(const struct nsrec *e, const struct nsrec *o)
{
	return o && o->type == NST_PID && o->born > e->owner_at;
}

/*
 * A PID namespace @ino that a clone or unshare() of the test has just made,
 * a child of @parent, is recorded with its birth. Namespace inode numbers
 * are unique among live namespaces, and the kernel reuses a freed one at
 * once: a record whose owner was set before the birth of the PID
 * namespace now known by its owner's number was owned by a PID namespace
 * that has since been freed (claim_seen()).
 */
static void pidns_born(uint64_t ino, uint64_t parent, int mode)
{
	struct nsrec *e;

	nsrec_note(ino, NST_PID, parent, mode);
	e = nsrec_find(ino, false);
	if (e)
		e->born = __atomic_add_fetch(&st->births, 1, __ATOMIC_SEQ_CST);
}

/*
 * /proc/self/ns/pid_for_children cannot be read until the PID namespace
 * that unshare(CLONE_NEWPID) made has its init. Until then the test calls
 * it by a number of its own (above any inode), and gives its records the
 * real inode as soon as a process sees it: the first child born there, or
 * the unsharer after that child. A setns() that moves the unsharer's
 * pid_for_children elsewhere first leaves it with the made-up number, as
 * a PID namespace that never has a task: what it owns is foreign to
 * every other. The numbers start again with each worker and chain, once
 * the processes that knew the old ones are gone.
 */
static uint64_t pidc_fake;		/* this process's pid_for_children */
static uint64_t pidc_named;		/* its inode, once the kernel named it */
static uint64_t fake_was, fake_is;	/* the last one given its inode */

/*
 * Record @real as the PID namespace known so far as @fake, in its own
 * record and as the owner of every namespace it owns. @had: whether it has
 * had an init (its pid_for_children file can be read once it has; a
 * record of the same inode from a namespace that is gone says nothing).
 * The birth goes with it: @real may be the number of a PID namespace
 * freed before unshare() made this one, and owner_reused() tells the two
 * apart by it.
 */
static void nsrec_rename(uint64_t fake, uint64_t real, bool had)
{
	struct nsrec *f = nsrec_find(fake, false), *r;
	size_t i;

	if (f) {
		nsrec_note(real, NST_PID, f->owner, f->mode);
		r = nsrec_find(real, false);
		if (r) {
			r->had_task = had;
			r->born = f->born;
		}
	}
	for (i = 0; i < NSREC_MAX; i++)
		if (st->ns[i].ino && st->ns[i].owner == fake)
			owner_set(&st->ns[i], real);
}

static void pidc_settle(uint64_t real)
{
	nsrec_rename(pidc_fake, real, true);
	fake_was = pidc_fake;
	fake_is = real;
	pidc_fake = 0;
}

/*
 * The kernel named the PID namespace that this process calls @fake (its
 * pid_for_children, before it has an init): NS_GET_PIDNS_OWNER of a
 * namespace it owns returns its inode, @real. Give the records that inode,
 * and use it from now on.
 */
static void fake_named(uint64_t fake, uint64_t real)
{
	nsrec_rename(fake, real, false);
	if (pidc_fake == fake)
		pidc_named = real;
}

/* What @ino is now: the real inode of a made-up one that was settled. */
static uint64_t unfake(uint64_t ino)
{
	return ino && ino == fake_was ? fake_is : ino;
}

/* The caller's namespaces, and settle its pid_for_children if it can. */
static int view_read(struct view *v)
{
	struct nsrec *p;
	char path[48];
	struct stat s;
	int i;

	for (i = 0; i < NST_N; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[i]);
		if (stat(path, &s) == 0) {
			v->ino[i] = s.st_ino;
		} else if (i == NST_PIDC && pidc_named) {
			v->ino[i] = pidc_named;
		} else if (i == NST_PIDC) {
			if (!pidc_fake)
				pidc_fake = 1ULL << 62 |
					__atomic_add_fetch(&st->fake_next, 1,
							   __ATOMIC_SEQ_CST);
			v->ino[i] = pidc_fake;
		} else {
			return -1;
		}
	}
	if (pidc_named) {
		/* Readable now, or moved: the made-up number is done with. */
		if (v->ino[NST_PIDC] != pidc_named || stat(path, &s) == 0)
			pidc_fake = pidc_named = 0;
	} else if (pidc_fake && v->ino[NST_PIDC] != pidc_fake) {
		pidc_settle(v->ino[NST_PIDC]);
	}
	p = nsrec_find(v->ino[NST_PID], false);
	if (p && p->type == NST_PID && !p->had_task)
		p->had_task = true;
	return 0;
}

/* A successful setns() that may have moved pid_for_children. */
static void pidc_moved(void)
{
	pidc_fake = pidc_named = 0;
}

/*
 * A clone child (@now) records what its clone created, against its parent
 * (@parent): a PID namespace other than the parent's pid_for_children is
 * new, its parent that one; the mount, IPC and network namespaces that
 * differ are new and belong to the child's pid_for_children, which is
 * what the clone set.
 */
static void note_clone(const struct view *parent, const struct view *now)
{
	uint64_t pidc = unfake(parent->ino[NST_PIDC]);
	int i;

	if (now->ino[NST_PID] != pidc)
		pidns_born(now->ino[NST_PID], pidc, st->mode);
	for (i = NST_MNT; i <= NST_NET; i++)
		if (now->ino[i] != parent->ino[i])
			nsrec_note(now->ino[i], i, now->ino[NST_PIDC],
				   st->mode);
}

/*
 * The caller of unshare() records what it created: a new pid_for_children,
 * a child of its own PID namespace, and new mount, IPC and network
 * namespaces, which belong to the pid_for_children after the call.
 */
static void note_unshare(const struct view *was, const struct view *now)
{
	int i;

	if (now->ino[NST_PIDC] != was->ino[NST_PIDC])
		pidns_born(now->ino[NST_PIDC], now->ino[NST_PID], st->mode);
	for (i = NST_MNT; i <= NST_NET; i++)
		if (now->ino[i] != was->ino[i])
			nsrec_note(now->ino[i], i, now->ino[NST_PIDC],
				   st->mode);
}

/* The state of a task, from the record. */
struct judgment {
	uint64_t pid;		/* its PID namespace */
	uint64_t foreign;	/* CLONE_NEWNS, NEWIPC, NEWNET not its own */
	uint64_t newer;		/* of those, owned by a PID ns made in 2 or 3 */
	int born;		/* the mode its PID namespace was made in */
	int mode;		/* kernel.pidns_coupling now */
	bool initial;		/* in the initial PID namespace: not judged */
	bool joined;		/* forked into it from outside in mode 2 or 3 */
	bool untracked;		/* a namespace without a record */
	bool refuse;		/* execve() must get EPERM */
	uint64_t built;		/* CLONE_NEW* it shares with what it builds */
	bool built_unknown;	/* a builder whose chain has no record */
	bool built_refuse;	/* the builder's verdict: execve() gets EPERM */
};

/*
 * The last namespace that owns() or judge() found without a record, and
 * the namespace (and its owner) that judge() was judging then
 */
static uint64_t lost, lost_in, lost_owner, judging, judging_owner;

/* Whether PID namespace @owner is @pid or below it. */
static bool owns(uint64_t pid, uint64_t owner, bool *untracked)
{
	int depth;

	for (depth = 0; depth < 64 && owner; depth++) {
		struct nsrec *e;

		if (owner == pid)
			return true;
		e = nsrec_find(owner, false);
		if (!e || e->type != NST_PID) {
			*untracked = true;
			lost = owner;
			lost_in = judging;
			lost_owner = judging_owner;
			return false;
		}
		owner = e->owner;
	}
	return false;
}

/*
 * Whether this process, or one it descends from, was forked into another
 * PID namespace (not one that the fork made) in mode 2 or 3: the kernel
 * judges its execve() in full even in a PID namespace made in mode 0 or 1.
 */
static bool joined;


/* The pid_for_children of this process, which /proc may not show yet. */
static uint64_t self_pidc;

/* Whether this process is a chain's, whose driver answers SCAN_REQUEST */
static bool in_chain;

/* This task as /proc names it (gettid() is in its own PID namespace) */
static void self_name(char *buf, size_t len)
{
	char path[64];
	ssize_t i = readlink("/proc/thread-self", path, sizeof(path) - 1);

	buf[0] = '\0';
	if (i > 0) {
		path[i] = '\0';
		snprintf(buf, len, "%s", strrchr(path, '/') + 1);
	}
}

/*
 * Every task that the caller can read, into @t (task @self, whose
 * pid_for_children /proc may not show yet, has @pidc): how many, or -1.
 */
static int tasks_read_as(struct taskns *t, const char *self, uint64_t pidc)
{
	DIR *proc = opendir("/proc"), *task;
	struct dirent *p, *d;
	char path[600];
	struct stat s;
	int n = 0, i;

	if (!proc)
		return -1;
	while ((p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		task = opendir(path);
		while (task && (d = readdir(task))) {
			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			if (n == TASKS_MAX) {
				closedir(task);
				closedir(proc);
				return -1;
			}
			for (i = 0; i < NST_N; i++) {
				snprintf(path, sizeof(path), "/proc/%s/task/%s/ns/%s",
					 p->d_name, d->d_name, nst_file[i]);
				t[n].ino[i] = stat(path, &s) ? 0 : s.st_ino;
			}
			t[n].pidc_guessed = false;
			if (!strcmp(d->d_name, self) && !t[n].ino[NST_PIDC]) {
				t[n].ino[NST_PIDC] = pidc;
				t[n].pidc_guessed = true;
			}
			if (t[n].ino[NST_PID])
				n++;
		}
		if (task)
			closedir(task);
	}
	closedir(proc);
	return n;
}

/*
 * Every task's namespaces, into @t: read by the driver for a chain (see
 * struct state), by this process otherwise (the random calls of part 1,
 * whose namespaces no PID namespace can claim). How many, or -1.
 */
static int tasks_read(struct taskns *t)
{
	char self[32], byte = SCAN_REQUEST;

	self_name(self, sizeof(self));
	if (!in_chain)
		return tasks_read_as(t, self, self_pidc);
	snprintf(st->scan_self, sizeof(st->scan_self), "%s", self);
	st->scan_pidc = self_pidc;
	if (write(req_wr, &byte, 1) != 1 || read(ack_rd, &byte, 1) != 1)
		return -1;
	if (st->scan_n > 0)
		memcpy(t, st->scan, (size_t)st->scan_n * sizeof(*t));
	return st->scan_n;
}

/*
 * Whether PID namespace @pid has a task, or has not had one yet (it is
 * being built); the initial one always.
 */
static bool pidns_live(uint64_t pid, const struct taskns *t, int n)
{
	struct nsrec *e = nsrec_find(pid, false);
	int k;

	if (pid == st->host_pid || (e && e->type == NST_PID && !e->had_task))
		return true;
	for (k = 0; k < n; k++)
		if (t[k].ino[NST_PID] == pid)
			return true;
	return false;
}

/*
 * Whether a task uses PID namespace @pid, or one below it, or makes
 * children in it; with @guess false, not counting a pid_for_children that
 * /proc did not show (the table's own guess for this process).
 */
static bool pidns_used(uint64_t pid, const struct taskns *t, int n, bool guess)
{
	bool untracked = false;
	int k;

	for (k = 0; k < n; k++)
		if (owns(pid, t[k].ino[NST_PID], &untracked) ||
		    (t[k].ino[NST_PIDC] && (guess || !t[k].pidc_guessed) &&
		     owns(pid, t[k].ino[NST_PIDC], &untracked)))
			return true;
	return false;
}

static bool pidns_referenced(uint64_t pid, const struct taskns *t, int n)
{
	return pidns_used(pid, t, n, true);
}

/*
 * Whether PID namespace @pid, which the model counts as live because it
 * never had a task, is used by no task: only a file can keep it then (the
 * chains' saved namespace files and pidfds, which the model does not
 * follow), and the kernel hands what it owns to its parent when it is
 * freed, which another process's exit can do at any moment.
 */
static bool pidns_unpinned(uint64_t pid, const struct taskns *t, int n)
{
	struct nsrec *e = nsrec_find(pid, false);

	return pid != st->host_pid && e && e->type == NST_PID && !e->had_task &&
	       !pidns_referenced(pid, t, n);
}

/* Whether namespace @ino of @type belongs to PID namespace @pid or below. */
static bool model_owns(uint64_t pid, int type, uint64_t ino)
{
	struct nsrec *e = nsrec_find(ino, false);
	bool untracked = false;

	return e && e->type == type && owns(pid, e->owner, &untracked);
}

/* Why a claim breaks the rule (0: it does not) */
enum { CLAIM_INITIAL = 1, CLAIM_NOT_ANCESTOR, CLAIM_OUTSIDER,
       CLAIM_UNPREDICTED, CLAIM_MISSED, CLAIM_ORPHAN_USED };

/*
 * The rule of policy.md for PID namespace @pid and namespace @e of @type,
 * with the tasks @t (@n of them): 0 if @pid may claim it, or why not.
 * @owner: the owner it was judged by (@e's, or its nearest live ancestor).
 */
static int claim_rule(uint64_t pid, const struct nsrec *e, int type,
		      const struct taskns *t, int n, uint64_t *owner,
		      bool *uncertain)
{
	bool untracked = false;
	struct nsrec *o;
	int k;

	if (e->ino == hostv.ino[type])
		return CLAIM_INITIAL;
	if (uncertain)
		*uncertain = pidns_unpinned(e->owner, t, n);
	/*
	 * A claim the kernel made (@uncertain NULL) may follow a hand-up that
	 * the table did not see: an owner used by no task may have been
	 * freed, its namespaces handed to its parent. It is judged as dead.
	 */
	for (*owner = e->owner;
	     !pidns_live(*owner, t, n) ||
	     (!uncertain && pidns_unpinned(*owner, t, n));
	     *owner = o->owner) {
		o = nsrec_find(*owner, false);
		if (!o || o->type != NST_PID)
			return CLAIM_NOT_ANCESTOR;
	}
	if (!owns(*owner, pid, &untracked))
		return CLAIM_NOT_ANCESTOR;
	for (k = 0; k < n; k++)
		if (t[k].ino[type] == e->ino &&
		    !owns(pid, t[k].ino[NST_PID], &untracked) &&
		    !(t[k].ino[NST_PIDC] &&
		      owns(pid, t[k].ino[NST_PIDC], &untracked)))
			return CLAIM_OUTSIDER;
	return 0;
}

/*
 * The claim, as policy.md states it: whether PID namespace @pid may take
 * namespace @ino of @type, which it does not own. Never one of
 * the initial namespaces; the owner, or its nearest live ancestor, must be
 * an ancestor of @pid; and no task outside @pid may be a member, other
 * than one whose pid_for_children is @pid or inside it.
 */
static bool model_claimable(uint64_t pid, int type, uint64_t ino,
			    bool *uncertain)
{
	static struct taskns t[TASKS_MAX];
	struct nsrec *e = nsrec_find(ino, false);
	bool untracked = false;
	uint64_t owner;
	int n, why;

	if (!e || e->type != type)
		return false;
	n = tasks_read(t);
	if (n < 0)
		return false;
	why = claim_rule(pid, e, type, t, n, &owner, uncertain);
	if (why == CLAIM_OUTSIDER)
		__atomic_fetch_add(&st->claims[0], 1, __ATOMIC_SEQ_CST);
	/* An owner below @pid: its own already, as the kernel sees it */
	return !why || (why == CLAIM_NOT_ANCESTOR && owns(pid, owner, &untracked));
}

/*
 * A fork with @flags by a process whose namespaces were @v: a child forked
 * into another PID namespace (not one the fork makes) in mode 2 or 3 is
 * judged in full from then on. Called in the child.
 */
static void fork_judged(const struct view *v, uint64_t flags)
{
	if (!(flags & (CLONE_NEWPID | CLONE_NEWCONTAINER)) &&
	    v->ino[NST_PIDC] != v->ino[NST_PID] && st->mode >= PIDNS_ENFORCE)
		joined = true;
}

/* The kernel's owner of the namespace of file @fd, or 0 */
static uint64_t fd_owner(int fd)
{
	struct ns_pidns_owner o;

	return ioctl(fd, NS_GET_PIDNS_OWNER, &o) ? 0 : o.pidns;
}

/* The kernel's owner of this process's namespace of @type, or 0 */
static uint64_t kernel_owner(int type)
{
	char path[48];
	uint64_t owner;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[type]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	owner = fd_owner(fd);
	close(fd);
	return owner;
}

static const char *const claim_why[] = {
	"", "an initial namespace", "its owner is no ancestor of the claimer",
	"a member outside the claimer was in it",
	"execve() claimed what the rule says it cannot",
	"execve() did not claim what the rule says it can",
	"handed to an ancestor while a task still uses its owner",
};

static void claim_bad(const struct where *w, int type, uint64_t ino,
		      uint64_t from, uint64_t to, int why)
{
	uint64_t n = __atomic_fetch_add(&st->claims_bad, 1, __ATOMIC_SEQ_CST);
	static struct taskns t[TASKS_MAX];
	int k, m, len = 0;

	if (n < LIST_MAX) {
		/* Each member's PID namespace and pid_for_children, by /proc */
		m = tasks_read(t);
		st->claim_list[n].members[0] = '\0';
		for (k = 0; k < m; k++)
			if (t[k].ino[type] == ino && len < 140)
				len += snprintf(st->claim_list[n].members + len,
						sizeof(st->claim_list[n].members) - (size_t)len,
						" %llu/%llu",
						(unsigned long long)t[k].ino[NST_PID] % 100000,
						(unsigned long long)t[k].ino[NST_PIDC] % 100000);
		st->claim_list[n].w = *w;
		st->claim_list[n].type = type;
		st->claim_list[n].ino = ino;
		st->claim_list[n].from = from;
		st->claim_list[n].to = to;
		st->claim_list[n].why = why;
	}
}

/*
 * A claim that the kernel made, seen as the new owner @to of namespace @e
 * (of @type) of this process: check it against the rule (not an initial
 * namespace; the owner, or its nearest live ancestor, is an ancestor of
 * @to; no member outside @to other than its builders, as /proc shows
 * them now, one step of the test after the claim), and record it.
 */
static void claim_seen(const struct where *w, struct nsrec *e, int type,
		       uint64_t to)
{
	static struct taskns t[TASKS_MAX];
	bool untracked = false;
	uint64_t owner;
	struct nsrec *o;
	int n, k, why;

	__atomic_fetch_add(&st->claims[1], 1, __ATOMIC_SEQ_CST);
	k = (int)(__atomic_fetch_add(&st->claim_n, 1, __ATOMIC_SEQ_CST) % 64);
	st->claim_log[k].ino = e->ino;
	st->claim_log[k].from = e->owner;
	st->claim_log[k].to = to;
	st->claim_log[k].type = type;
	st->claim_log[k].chain = w->call;
	n = tasks_read(t);
	if (n < 0) {
		/* Not judged: nobody could read /proc for it. */
		__atomic_fetch_add(&st->claims_unread, 1, __ATOMIC_SEQ_CST);
		goto out;
	}
	o = nsrec_find(e->owner, false);
	if (to != e->owner && owner_reused(e, o)) {
		/*
		 * A PID namespace the test made after the owner was recorded
		 * has the owner's number: the owner was freed, and handed
		 * the namespace up. Its line is gone with its record, and the
		 * tasks that use the number are the new namespace's: the
		 * hand-up is counted, not checked.
		 */
		__atomic_fetch_add(&st->orphans, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&st->orphans_reused, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_sub(&st->claims[1], 1, __ATOMIC_SEQ_CST);
		goto out;
	}
	if (to != e->owner &&
	    (owns(to, e->owner, &untracked) ||
	     ((!o || o->type != NST_PID) && !pidns_referenced(e->owner, t, n)))) {
		/*
		 * Not a claim, which only ever moves a namespace down: its
		 * owner was freed and handed it to its parent (and so on up
		 * to @to). Every PID namespace on the way must be unused. An
		 * owner that the table knows by no record (a PID namespace it
		 * knew by a made-up number, forgotten when pid_for_children
		 * moved) is taken for one handed up if no task uses it.
		 */
		__atomic_fetch_add(&st->orphans, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_sub(&st->claims[1], 1, __ATOMIC_SEQ_CST);
		for (owner = e->owner; owner && owner != to; owner = o->owner) {
			o = nsrec_find(owner, false);
			/*
			 * A PID namespace the test made after the owner was
			 * recorded has its number: the owner was freed, and
			 * the tasks that use the number are the new one's.
			 */
			if (owner_reused(e, o)) {
				__atomic_fetch_add(&st->orphans_reused, 1, __ATOMIC_SEQ_CST);
				break;
			}
			/*
			 * What /proc shows, not the table's guess of this
			 * process's pid_for_children, which can be a freed
			 * PID namespace's number after a reset.
			 */
			if (pidns_used(owner, t, n, false)) {
				claim_bad(w, type, e->ino, e->owner, to,
					  CLAIM_ORPHAN_USED);
				break;
			}
			if (!o || o->type != NST_PID)
				break;
		}
		goto out;
	}
	why = claim_rule(to, e, type, t, n, &owner, NULL);
	if (!why)
		goto out;
	claim_bad(w, type, e->ino, e->owner, to, why);
	k = (int)(st->claims_bad - 1);
	if (why == CLAIM_NOT_ANCESTOR && k < LIST_MAX) {
		/* How the table sees the owner's line, for the diagnosis */
		char *b = st->claim_list[k].members;
		size_t len = strlen(b);

		for (owner = e->owner; owner && len < 120; owner = o->owner) {
			o = nsrec_find(owner, false);
			len += (size_t)snprintf(b + len, sizeof(st->claim_list[k].members) - len,
					" <%llu%s%s>", (unsigned long long)owner % 100000,
					!o || o->type != NST_PID ? " unrecorded" : o->had_task ? " had" : "",
					pidns_live(owner, t, n) ? " live" : "");
			if (!o || o->type != NST_PID)
				break;
		}
	}
out:
	owner_set(e, to);
}

/*
 * Bring the records of this process's mount, IPC and network namespaces
 * up to date with the kernel's owners (NS_GET_PIDNS_OWNER), checking each
 * claim that the kernel made since: at a fork into another PID namespace,
 * a setns() or an execve() that the last step made.
 */
static void owners_sync(const struct where *w)
{
	struct view v;
	int i;

	if (view_read(&v) < 0)
		return;
	self_pidc = v.ino[NST_PIDC];
	for (i = NST_MNT; i <= NST_NET; i++) {
		struct nsrec *e = nsrec_find(v.ino[i], false);
		uint64_t k = kernel_owner(i);

		bool fake = (pidc_fake >> 62) == 1 && !pidc_named;

		if (e && e->type == i && k && e->owner == pidc_fake && fake) {
			fake_named(pidc_fake, k);
			continue;
		}
		/*
		 * A claim for a PID namespace that is neither this process's
		 * nor its pid_for_children as /proc shows them: the claimer is
		 * its pid_for_children, known by a made-up number only (the
		 * fork into it claimed), whatever an old record of the same
		 * inode says.
		 */
		if (e && e->type == i && k && k != e->owner && fake &&
		    k != v.ino[NST_PID] && k != v.ino[NST_PIDC])
			fake_named(pidc_fake, k);
		if (pidc_named && v.ino[NST_PIDC] == pidc_fake)
			self_pidc = pidc_named;
		if (e && e->type == i && k && k != e->owner)
			claim_seen(w, e, i, k);
	}
}

/*
 * What execve() by this process, in PID namespace @pid with the
 * namespaces of @v, will claim, by the rule: the foreign ones that can
 * be claimed (CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET).
 */
static uint64_t claims_predict(uint64_t pid, const struct view *v,
			       uint64_t *uncertain)
{
	uint64_t claims = 0, foreign = 0;
	bool maybe;
	int i;

	*uncertain = 0;
	if (st->mode == PIDNS_OFF || pid == st->host_pid)
		return 0;
	self_pidc = v->ino[NST_PIDC];
	for (i = NST_MNT; i <= NST_NET; i++) {
		if (model_owns(pid, i, v->ino[i]))
			continue;
		foreign |= nst_flag[i];
		maybe = false;
		if (model_claimable(pid, i, v->ino[i], &maybe))
			claims |= nst_flag[i];
		if (maybe)
			*uncertain |= nst_flag[i];
	}
	/*
	 * "A request's claims are made only if the request is accepted,
	 * which is when every namespace it would share is P's own or
	 * claimable": one that surely cannot be claimed takes the others
	 * with it; one that may or may not be claimed decides for all.
	 */
	if (foreign & ~(claims | *uncertain)) {
		*uncertain = 0;
		return 0;
	}
	if (*uncertain)
		*uncertain |= claims;
	return claims;
}

static void judge(const struct view *v, struct judgment *j)
{
	struct nsrec *p;
	int i;

	memset(j, 0, sizeof(*j));
	j->joined = joined;
	j->pid = v->ino[NST_PID];
	j->mode = st->mode;
	j->initial = j->pid == st->host_pid;
	if (j->initial)
		return;
	p = nsrec_find(j->pid, false);
	if (!p || p->type != NST_PID) {
		j->untracked = true;
		lost = j->pid;
		return;
	}
	j->born = p->mode;
	for (i = NST_MNT; i <= NST_NET; i++) {
		struct nsrec *e = nsrec_find(v->ino[i], false);

		if (!e || e->type != i) {
			j->untracked = true;
			lost = v->ino[i];
		}
		else if (judging = v->ino[i], judging_owner = e->owner,
			 !owns(j->pid, e->owner, &j->untracked)) {
			struct nsrec *o = nsrec_find(e->owner, false);

			j->foreign |= nst_flag[i];
			if (e->owner != st->host_pid && o &&
			    o->type == NST_PID && o->mode >= PIDNS_ENFORCE)
				j->newer |= nst_flag[i];
		}
	}
	j->refuse = j->mode >= PIDNS_ENFORCE && j->foreign &&
		    (j->born >= PIDNS_ENFORCE || j->joined || j->newer);
}

/*
 * The judgment @j once execve() has made the claims @claims. A PID
 * namespace made in mode 0 or 1 is exempt in modes 2 and 3, unless its
 * task joined it in those modes or a namespace it shares belongs to a
 * PID namespace made in 2 or 3 (a new container's).
 */
static void judge_claimed(struct judgment *j, uint64_t claims)
{
	j->foreign &= ~claims;
	j->newer &= j->foreign;
	j->refuse = j->mode >= PIDNS_ENFORCE && j->foreign &&
		    (j->born >= PIDNS_ENFORCE || j->joined || j->newer);
}

/*
 * policy.md, the state checks, point 5: execve() by a builder, a task
 * whose pid_for_children is not its PID namespace, that has "the mount,
 * IPC or network namespace of that PID namespace, or of one between it
 * and its own", is refused in modes 2 and 3 (with the exemption of a PID
 * namespace that predates the mode, judged on the one it builds), before
 * any claim; if it accepts, the task's own state is judged as any
 * execve()'s. Sets @j->built, and @j->built_refuse to what it says; @j->built_unknown if the table lacks a PID
 * namespace on the way from pid_for_children up (a PID namespace that a
 * setns() reached), where the model cannot tell.
 */
static void judge_builder(const struct view *v, struct judgment *j)
{
	uint64_t pid = v->ino[NST_PID], pidc = v->ino[NST_PIDC];
	struct nsrec *b = nsrec_find(pidc, false);
	bool untracked = false, old;
	int i;

	j->built = 0;
	if (st->mode == PIDNS_OFF || !pidc || pidc == pid)
		return;
	old = b && b->type == NST_PID && b->mode < PIDNS_ENFORCE && !joined;
	for (i = NST_MNT; i <= NST_NET; i++) {
		struct nsrec *e = nsrec_find(v->ino[i], false);
		struct nsrec *o;

		if (!e || e->type != i || e->owner == pid || !e->owner ||
		    !owns(pid, e->owner, &untracked) ||
		    !owns(e->owner, pidc, &untracked))
			continue;
		j->built |= nst_flag[i];
		o = nsrec_find(e->owner, false);
		if (!o || o->type != NST_PID || o->mode >= PIDNS_ENFORCE)
			old = false;
	}
	if (untracked) {
		j->built = 0;
		j->built_unknown = true;
		__atomic_fetch_add(&st->builder_unknown, 1, __ATOMIC_SEQ_CST);
		return;
	}
	if (j->built)
		j->built_refuse = st->mode >= PIDNS_ENFORCE && !old;
}

/* Count a probe that is not what the state says, with @w and @j. */
static int probe_bad(int code, int err, const struct where *w,
		     const struct judgment *j)
{
	int part = w->kind == FUZZ_CALLS;
	uint64_t n;

	__atomic_fetch_add(&st->bad[code - PROBE_OWN], 1, __ATOMIC_SEQ_CST);
	n = __atomic_fetch_add(&st->nbad[part], 1, __ATOMIC_SEQ_CST);
	if (n < LIST_MAX) {
		struct example *x = &st->bad_list[part][n];

		x->w = *w;
		x->code = code;
		x->err = err;
		x->mode = j->mode;
		x->born = j->born;
		x->pid = j->pid;
		x->foreign = j->foreign;
		x->lost = lost;
		x->lost_in = lost_in;
		x->lost_owner = lost_owner;
	}
	return code;
}

/*
 * The new image of a probe's execve(): judge the namespaces it runs with.
 * It prints nothing (its stdout is the TAP stream).
 */
static int probe_main(const char *fd, const char *was_joined,
		      const char *claims, const char *maybe, const char *pidc)
{
	uint64_t predicted = claims ? strtoull(claims, NULL, 10) : 0;
	uint64_t uncertain = maybe ? strtoull(maybe, NULL, 10) : 0;
	bool untracked = false;
	struct judgment j;
	struct view v;
	int m, i;

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  atoi(fd), 0);
	if (st == MAP_FAILED)
		return PROBE_FAILED;
	joined = was_joined && !strcmp(was_joined, "1");
	/*
	 * The caller's pid_for_children, which /proc may not show before
	 * its init: the record knows it by the number the caller used.
	 */
	pidc_named = pidc ? strtoull(pidc, NULL, 10) : 0;
	if (view_read(&v) < 0) {
		memset(&j, 0, sizeof(j));
		return probe_bad(PROBE_FAILED, errno, &st->pending, &j);
	}
	judge(&v, &j);
	judge_builder(&v, &j);
	if (j.built_unknown)
		return PROBE_OWN;
	if (j.built && j.built_refuse) {
		/* A builder's refusal comes first */
		if (j.untracked)
			return probe_bad(PROBE_UNTRACKED, 0, &st->pending, &j);
		j.refuse = true;
		return probe_bad(PROBE_VIOLATED, 0, &st->pending, &j);
	}
	if (j.initial && !j.built)
		return PROBE_OWN;
	if (j.untracked)
		return probe_bad(PROBE_UNTRACKED, 0, &st->pending, &j);
	/* What execve() claimed: exactly what the rule predicted. */
	for (i = NST_MNT; i <= NST_NET; i++) {
		struct nsrec *e = nsrec_find(v.ino[i], false);
		uint64_t k = kernel_owner(i);
		bool made = e && k && k != e->owner;

		if (made && owns(k, e->owner, &untracked)) {
			/* Its owner was freed meanwhile: handed up, no claim */
			__atomic_fetch_add(&st->orphans, 1, __ATOMIC_SEQ_CST);
			owner_set(e, k);
			continue;
		}
		if (uncertain & nst_flag[i]) {
			/*
			 * Either verdict is the rule's (see pidns_unpinned()):
			 * the state is judged by what the kernel did.
			 */
			__atomic_fetch_add(&st->claims_uncertain, 1, __ATOMIC_SEQ_CST);
			predicted &= ~nst_flag[i];
			if (made) {
				predicted |= nst_flag[i];
				owner_set(e, k);
			}
			continue;
		}
		if (made && !(predicted & nst_flag[i]))
			claim_bad(&st->pending, i, v.ino[i], e->owner, k,
				  CLAIM_UNPREDICTED);
		else if (!made && (predicted & nst_flag[i]))
			claim_bad(&st->pending, i, v.ino[i], e ? e->owner : 0,
				  j.pid, CLAIM_MISSED);
		if (made) {
			/* Its members were read before execve(), for the prediction. */
			__atomic_fetch_add(&st->claims[1], 1, __ATOMIC_SEQ_CST);
			owner_set(e, k);
		}
	}
	judge_claimed(&j, predicted);
	m = j.mode & 3;
	__atomic_fetch_add(&st->exec_ran[m], 1, __ATOMIC_SEQ_CST);
	if (j.born >= PIDNS_ENFORCE || j.joined)
		__atomic_fetch_add(&st->exec_judged[m], 1, __ATOMIC_SEQ_CST);
	if (!j.foreign)
		return PROBE_OWN;
	__atomic_fetch_add(&st->exec_foreign[m], 1, __ATOMIC_SEQ_CST);
	if (j.refuse)
		return probe_bad(PROBE_VIOLATED, 0, &st->pending, &j);
	if (j.mode >= PIDNS_ENFORCE)
		__atomic_fetch_add(&st->predates, 1, __ATOMIC_SEQ_CST);
	return PROBE_FOREIGN;
}

/*
 * The probe: execve() this program in the caller's state, for
 * probe_main() to judge. Returns only if execve() failed: what that says.
 */
static int exec_probe(const struct where *w)
{
	char fd[16], claims[24], maybe[24], pidc[24];
	char *argv[] = { "fuzz", PROBE_ARG, fd, joined ? "1" : "0", claims,
			 maybe, pidc, NULL };
	struct judgment j;
	uint64_t predicted, uncertain;
	struct view v;
	int err;

	memset(&j, 0, sizeof(j));
	owners_sync(w);
	if (view_read(&v) < 0)
		return probe_bad(PROBE_FAILED, errno, w, &j);
	/* execve() claims what the task's PID namespace can, then judges. */
	predicted = claims_predict(v.ino[NST_PID], &v, &uncertain);
	judge(&v, &j);
	judge_builder(&v, &j);
	if (j.built)
		__atomic_fetch_add(&st->builder_judged, 1, __ATOMIC_SEQ_CST);
	if (j.built_unknown || j.built_refuse) {
		/* A builder's refusal comes first, and claims nothing */
		predicted = uncertain = 0;
		j.refuse = j.built_refuse;
	} else {
		/* A refusal is the rule's if an uncertain claim was not made */
		judge_claimed(&j, predicted & ~uncertain);
	}
	snprintf(claims, sizeof(claims), "%llu", (unsigned long long)predicted);
	snprintf(maybe, sizeof(maybe), "%llu", (unsigned long long)uncertain);
	snprintf(pidc, sizeof(pidc), "%llu", (unsigned long long)v.ino[NST_PIDC]);
	st->pending = *w;
	snprintf(fd, sizeof(fd), "%d", memfd);
	execv("/proc/self/exe", argv);
	err = errno;
	if (j.built_unknown)	/* either verdict may be the rule's */
		return PROBE_REFUSED;
	if (j.untracked)
		return probe_bad(PROBE_UNTRACKED, err, w, &j);
	if (err != EPERM)
		return probe_bad(PROBE_FAILED, err, w, &j);
	if (!j.refuse)
		return probe_bad(PROBE_OVERREFUSED, err, w, &j);
	__atomic_fetch_add(&st->exec_refused[j.mode & 3], 1, __ATOMIC_SEQ_CST);
	return PROBE_REFUSED;
}

static bool invariant_holds(const ino_t *ns, const ino_t *parent)
{
	if (ns[ix_pid] == parent[ix_pid])
		return true;
	return ns[ix_mnt] != parent[ix_mnt] && ns[ix_ipc] != parent[ix_ipc] &&
	       ns[ix_net] != parent[ix_net];
}

static void record(uint64_t call, uint64_t flags, int kind, int detail)
{
	uint64_t n = __atomic_fetch_add(&st->violations, 1, __ATOMIC_SEQ_CST);

	if (n < LIST_MAX) {
		st->list[n].call = call;
		st->list[n].flags = flags;
		st->list[n].kind = kind;
		st->list[n].detail = detail;
	}
}

/* What the new task's check exits with, besides the probe's PROBE_*. */
enum { CHECK_SAME_PIDNS = 10, CHECK_NEW_PIDNS, CHECK_VIOLATED, CHECK_UNREADABLE };

/*
 * The new task: check the invariant of the same-call rule against @parent
 * (@same_call: in enforce mode), and, in a new PID namespace, run the probe
 * (in stage mode always, else one call in four). @created: a clone3 child,
 * whose new namespaces the clone made.
 */
static void child_check(const ino_t *parent, bool created, bool same_call,
			const struct where *w)
{
	ino_t ns[NS_MAX];
	struct view v;

	ns_read("self", ns);
	if (!ns[ix_pid] || !ns[ix_mnt] || !ns[ix_ipc] || !ns[ix_net])
		_exit(CHECK_UNREADABLE);
	if (ns[ix_pid] == parent[ix_pid])
		_exit(CHECK_SAME_PIDNS);
	if (created) {
		if (view_read(&v) < 0)
			_exit(CHECK_UNREADABLE);
		note_clone(&hostv, &v);
	}
	if (same_call && !invariant_holds(ns, parent))
		_exit(CHECK_VIOLATED);
	if (st->mode == PIDNS_STAGE || w->call % 4 == 0)
		_exit(exec_probe(w));
	_exit(CHECK_NEW_PIDNS);
}

/* Count the check's verdict, or record a counterexample. */
static void checked(uint64_t call, uint64_t flags, int kind, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	/* A probe that went wrong is a counterexample of its own. */
	if (code == CHECK_NEW_PIDNS || (code >= PROBE_OWN && code < PROBE_END))
		st->new_pidns[kind]++;
	else if (code != CHECK_SAME_PIDNS)
		record(call, flags, kind, code);
}

static void fuzz_clone3(uint64_t call, uint64_t *r, const ino_t *self)
{
	static const uint64_t unsafe = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD |
		CLONE_SETTLS | CLONE_PARENT;
	static pid_t set_tid[4];
	static int scratch[4];
	struct {
		struct clone_args a;
		uint64_t tail[4];
	} args;
	struct where w = { .kind = FUZZ_CLONE3, .call = call };
	size_t size;
	pid_t pid;
	int sig, status, i;

	memset(&args, 0, sizeof(args));
	args.a.flags = random_flags(r, FUZZ_CLONE3) & ~unsafe;
	do
		sig = (int)(splitmix(r) % 4 ? SIGCHLD : splitmix(r) % 72);
	while (sig == SIGKILL || sig == SIGSTOP);
	args.a.exit_signal = (uint64_t)sig;
	if (splitmix(r) % 16 == 0)
		args.a.exit_signal |= splitmix(r) << 8;
	scratch[0] = -1;
	args.a.pidfd = (uintptr_t)&scratch[0];
	args.a.child_tid = (uintptr_t)&scratch[1];
	args.a.parent_tid = (uintptr_t)&scratch[2];
	if (splitmix(r) % 8 == 0) {
		args.a.set_tid_size = splitmix(r) % 5;
		for (i = 0; i < 4; i++)
			set_tid[i] = (pid_t)(splitmix(r) % 4096);
		args.a.set_tid = (uintptr_t)set_tid;
	}
	if (splitmix(r) % 8 == 0)
		args.a.cgroup = splitmix(r) % 8;
	switch (splitmix(r) % 8) {
	case 0: size = 64; break;	/* CLONE_ARGS_SIZE_VER0 */
	case 1: size = 80; break;	/* VER1 */
	case 2: size = splitmix(r) % (sizeof(args) + 1); break;
	case 3: /* bigger than the kernel knows, with a nonzero tail */
		size = sizeof(args);
		args.tail[splitmix(r) % 4] = splitmix(r) | 1;
		break;
	case 4: size = sizeof(args); break;	/* bigger, zero tail */
	default: size = sizeof(args.a); break;
	}
	w.flags = args.a.flags;

	st->calls[FUZZ_CLONE3]++;
	pid = (pid_t)syscall(SYS_clone3, &args, size);
	if (pid < 0)
		return;
	if (pid == 0)
		child_check(self, true, st->mode == PIDNS_ENFORCE, &w);
	st->accepted[FUZZ_CLONE3]++;
	if ((args.a.flags & CLONE_PIDFD) && scratch[0] > 2)
		close(scratch[0]);
	if (waitpid(pid, &status, __WALL) < 0)
		record(call, args.a.flags, FUZZ_CLONE3, -errno);
	else
		checked(call, args.a.flags, FUZZ_CLONE3, status);
}

/*
 * After a successful unshare() or setns(): the caller's next child must
 * obey the invariant against the caller as it was (@self). Then this
 * worker, changed by the call, ends and the driver starts another.
 */
static void after_success(uint64_t call, uint64_t flags, int kind, const ino_t *self)
{
	struct where w = { .kind = kind, .call = call, .flags = flags };
	struct view now;
	pid_t pid;
	int status;

	st->accepted[kind]++;
	st->next = call + 1;
	if (kind == FUZZ_UNSHARE) {
		if (view_read(&now) < 0) {
			record(call, flags, kind, CHECK_UNREADABLE);
			_exit(0);
		}
		note_unshare(&hostv, &now);
	}
	pid = fork();
	if (pid < 0) {
		if (errno == EINVAL)
			st->fork_refused++;
		else
			record(call, flags, kind, -errno);
		_exit(0);
	}
	if (pid == 0)
		child_check(self, false, st->mode == PIDNS_ENFORCE, &w);
	if (waitpid(pid, &status, 0) < 0)
		record(call, flags, kind, -errno);
	else
		checked(call, flags, kind, status);
	_exit(0);
}

static void worker(uint64_t first, uint64_t end, bool unpriv)
{
	ino_t self[NS_MAX];
	sigset_t all;
	uint64_t call;

	/* All of them, with glibc's internal ones (which sigfillset() omits). */
	memset(&all, 0xff, sizeof(all));
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)8);
	if (unpriv)
		become_user(1000);
	memcpy(self, host, sizeof(self));
	for (call = first; call < end; call++) {
		uint64_t r = seed ^ (call * 0xd1342543de82ef95ULL), flags;
		int kind = (int)(splitmix(&r) % FUZZ_CALLS), fd;

		st->next = call;
		if (kind == FUZZ_CLONE3) {
			fuzz_clone3(call, &r, self);
			continue;
		}
		flags = random_flags(&r, kind);
		st->calls[kind]++;
		if (kind == FUZZ_UNSHARE) {
			if (syscall(SYS_unshare, (unsigned long)flags) == 0)
				after_success(call, flags, kind, self);
			continue;
		}
		switch (splitmix(&r) % 4) {
		case 0:
		case 1:
			fd = pidfds[splitmix(&r) % NTARGETS];
			break;
		case 2:
			fd = nsfds[splitmix(&r) % (NTARGETS * NSFDS)];
			if (splitmix(&r) % 2)
				flags = 0;
			break;
		default:
			fd = (int)(splitmix(&r) % 8) - 1;
			break;
		}
		if (syscall(SYS_setns, fd, (int)flags) == 0)
			after_success(call, flags, kind, self);
	}
	st->next = end;
	_exit(0);
}

/* Set kernel.pidns_coupling (or bail out), and tell the probes. */
static void mode_now(int mode)
{
	set_mode(mode);
	st->mode = mode;
}

/*
 * Part 2: the chains. A chain process keeps what it can setns() to in a
 * pool of fds, inherited by the processes that go on with the chain.
 */

#define CHAIN_BROKEN	3	/* a chain process could not go on */

struct chain {
	uint64_t r;
	bool unpriv;
	int len, done, npool, nfixed;
	struct {
		int fd, type;	/* enum nstype (never NST_PIDC), or NST_PIDFD */
	} pool[POOL_MAX];
	struct where w;
};

static void hist(struct chain *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append a step to the chain's history (its end is kept if too long). */
static void hist(struct chain *c, const char *fmt, ...)
{
	char *h = c->w.history;
	size_t len = strlen(h), room = HISTORY - 1;
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n + 1 >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	if (len + (size_t)n + 1 > room) {
		size_t cut = len + (size_t)n + 1 - room;

		memmove(h, h + cut, len - cut + 1);
		len -= cut;
		h[0] = '.';
	}
	snprintf(h + len, HISTORY - len, "%s%s", len ? " " : "", buf);
}

/* The flags of @flags as nsclone's option letters ("pmin"), or "0". */
static const char *letters(uint64_t flags, char *buf, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < ns_flags_count && n + 1 < len; i++)
		if (flags & ns_flags[i].bit)
			buf[n++] = ns_flags[i].opt ?: 'c';
	if (!n && len > 1)
		buf[n++] = '0';
	buf[n] = '\0';
	return buf;
}

/* Random namespace flags, CLONE_NEWPID and the coupled three often. */
static uint64_t chain_flags(struct chain *c)
{
	uint64_t flags = 0;
	size_t i;

	for (i = 0; i < ns_flags_count; i++) {
		uint64_t bit = ns_flags[i].bit;
		unsigned int p = 15;

		if (bit == CLONE_NEWPID)
			p = 45;
		else if (bit & (CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET))
			p = 35;
		else if (bit == CLONE_NEWCONTAINER)
			p = 8;
		else if (bit == CLONE_NEWUSER && c->unpriv)
			p = 60;
		if (splitmix(&c->r) % 100 < p)
			flags |= bit;
	}
	return flags;
}

static int chain_count(enum step s, bool ok)
{
	__atomic_fetch_add(&st->chain_calls[s], 1, __ATOMIC_SEQ_CST);
	if (ok)
		__atomic_fetch_add(&st->chain_ok[s], 1, __ATOMIC_SEQ_CST);
	return ok;
}

/*
 * The chain goes on in the child: the parent waits for it and ends with
 * it. A status that says something broke (a signal, CHAIN_BROKEN) goes up
 * to the driver; the status of a probe's image that replaced a process
 * of the chain is the end of the chain.
 */
static void __attribute__((noreturn)) chain_handover(pid_t pid)
{
	int status = ns_wait(pid);

	if (status < 0 || status >= 128 || status == CHAIN_BROKEN)
		_exit(status < 0 ? CHAIN_BROKEN : status);
	_exit(0);
}

/* A fork that failed: EINVAL is the state check at fork. */
static void fork_failed(struct chain *c, const char *what, int err)
{
	if (err == EINVAL)
		__atomic_fetch_add(&st->chain_einval, 1, __ATOMIC_SEQ_CST);
	hist(c, "%s!%d", what, err);
}

static void step_unshare(struct chain *c)
{
	uint64_t flags = chain_flags(c);
	struct view was, now;
	char l[16];
	bool ok;

	if (view_read(&was) < 0)
		_exit(CHAIN_BROKEN);
	ok = syscall(SYS_unshare, (unsigned long)flags) == 0;
	if (!chain_count(STEP_UNSHARE, ok)) {
		hist(c, "u:%s!%d", letters(flags, l, sizeof(l)), errno);
		return;
	}
	if (view_read(&now) < 0)
		_exit(CHAIN_BROKEN);
	note_unshare(&was, &now);
	hist(c, "u:%s", letters(flags, l, sizeof(l)));
}

static void step_clone(struct chain *c)
{
	uint64_t flags = chain_flags(c);
	bool legacy = splitmix(&c->r) % 4 == 0;
	struct view parent, now;
	char l[16];
	pid_t pid;

	/* In clone()'s flags these two bits are the exit signal. */
	if (legacy)
		flags &= ~(uint64_t)(CLONE_NEWTIME | CLONE_NEWCONTAINER);
	if (view_read(&parent) < 0)
		_exit(CHAIN_BROKEN);
	pid = ns_clone(legacy, flags, NULL);
	if (!chain_count(STEP_CLONE, pid >= 0)) {
		fork_failed(c, legacy ? "c" : "c3", errno);
		return;
	}
	if (pid > 0)
		chain_handover(pid);
	fork_judged(&parent, flags);
	if (view_read(&now) < 0)
		_exit(CHAIN_BROKEN);
	note_clone(&parent, &now);
	hist(c, "%s:%s", legacy ? "c" : "c3", letters(flags, l, sizeof(l)));
}

static void step_fork(struct chain *c)
{
	struct view parent, v;
	pid_t pid;

	if (view_read(&parent) < 0)
		_exit(CHAIN_BROKEN);
	pid = fork();
	if (!chain_count(STEP_FORK, pid >= 0)) {
		fork_failed(c, "f", errno);
		return;
	}
	if (pid > 0)
		chain_handover(pid);
	fork_judged(&parent, 0);
	/* Born in the unsharer's new PID namespace: settle its inode. */
	if (view_read(&v) < 0)
		_exit(CHAIN_BROKEN);
	hist(c, "f");
}

/* The pool's types, as pool_pick() takes them. */
#define POOL_NS		(1U << NST_PID | 1U << NST_MNT | 1U << NST_IPC | 1U << NST_NET)
#define POOL_PIDFD	(1U << NST_PIDFD)

/* A random entry of the pool whose type is one of @types, or -1. */
static int pool_pick(struct chain *c, unsigned int types)
{
	int i, n = 0, pick[POOL_MAX];

	for (i = 0; i < c->npool; i++)
		if (types & 1U << c->pool[i].type)
			pick[n++] = i;
	return n ? pick[splitmix(&c->r) % (uint64_t)n] : -1;
}

static void step_setns_fd(struct chain *c)
{
	int i = pool_pick(c, POOL_NS), type, nstype;
	bool ok;

	if (i < 0)
		return;
	type = c->pool[i].type;
	nstype = splitmix(&c->r) % 2 ? (int)nst_flag[type] : 0;
	ok = syscall(SYS_setns, c->pool[i].fd, nstype) == 0;
	if (ok && type == NST_PID)
		pidc_moved();

	if (!chain_count(STEP_SETNS_FD, ok))
		hist(c, "s:%s#%d%s!%d", nst_file[type], i, nstype ? "" : "/0", errno);
	else
		hist(c, "s:%s#%d%s", nst_file[type], i, nstype ? "" : "/0");
}

/*
 * Keep @fd (of @type) in the pool: a free place, or a saved one replaced.
 * Returns where.
 */
static int pool_add(struct chain *c, int fd, int type)
{
	int i;

	if (c->npool < POOL_MAX) {
		i = c->npool++;
	} else {
		i = c->nfixed + (int)(splitmix(&c->r) %
				      (uint64_t)(POOL_MAX - c->nfixed));
		close(c->pool[i].fd);
	}
	c->pool[i].fd = fd;
	c->pool[i].type = type;
	return i;
}

/*
 * Make a mount, IPC or network namespace, keep it in the pool and go back
 * to the one before: a namespace made on the host (or in a container) and
 * left, that a later setns(fd) step joins (podman's pinned network).
 * Returns its place in the pool, or -1.
 */
static int pin_new(struct chain *c)
{
	static const int types[] = { NST_MNT, NST_IPC, NST_NET };
	int type = types[splitmix(&c->r) % 3], old, fd, at = -1;
	struct view was, now;
	char path[48];
	bool ok;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[type]);
	old = open(path, O_RDONLY | O_CLOEXEC);
	if (old < 0 || view_read(&was) < 0)
		_exit(CHAIN_BROKEN);
	ok = syscall(SYS_unshare, (unsigned long)nst_flag[type]) == 0;
	if (!chain_count(STEP_PIN, ok)) {
		hist(c, "p:%s!%d", nst_file[type], errno);
		close(old);
		return -1;
	}
	if (view_read(&now) < 0)
		_exit(CHAIN_BROKEN);
	note_unshare(&was, &now);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		at = pool_add(c, fd, type);
	/*
	 * Leave it: back to the namespace of before. That is a setns() like
	 * any other, judged in a container and refused without the
	 * capability: then the task stays a member.
	 */
	ok = syscall(SYS_setns, old, (int)nst_flag[type]) == 0;
	close(old);
	if (ok)
		hist(c, "p:%s", nst_file[type]);
	else
		hist(c, "p:%s=%d", nst_file[type], errno);
	return at;
}

static void step_pin(struct chain *c)
{
	pin_new(c);
}

/* setns() to this task's own PID namespace: pid_for_children back to it */
static void step_reset(struct chain *c)
{
	int fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		_exit(CHAIN_BROKEN);
	ok = syscall(SYS_setns, fd, CLONE_NEWPID) == 0;
	close(fd);
	if (ok)
		pidc_moved();
	if (!chain_count(STEP_RESET, ok))
		hist(c, "r!%d", errno);
	else
		hist(c, "r");
}

static void step_setns_pidfd(struct chain *c)
{
	uint64_t flags = chain_flags(c);
	int i = pool_pick(c, POOL_PIDFD);
	char l[16];
	bool ok;

	if (i < 0)
		return;
	if (!flags)
		flags = CLONE_NEWPID;
	ok = syscall(SYS_setns, c->pool[i].fd, (int)flags) == 0;
	if (ok && (flags & (CLONE_NEWPID | CLONE_NEWCONTAINER)))
		pidc_moved();

	if (!chain_count(STEP_SETNS_PIDFD, ok))
		hist(c, "S:%s#%d!%d", letters(flags, l, sizeof(l)), i, errno);
	else
		hist(c, "S:%s#%d", letters(flags, l, sizeof(l)), i);
}

/*
 * execve() by a child of the chain process, which is born in its
 * pid_for_children, or by the chain process itself: only in a PID
 * namespace other than the initial one, where execve() is judged.
 */
static void step_probe(struct chain *c, bool self)
{
	struct view v;
	pid_t pid;
	int code;

	if (view_read(&v) < 0)
		_exit(CHAIN_BROKEN);
	if (v.ino[self ? NST_PID : NST_PIDC] == st->host_pid) {
		hist(c, "%s-", self ? "X" : "x");
		return;
	}
	c->w.step = c->done;
	if (self) {
		chain_count(STEP_EXEC, true);
		hist(c, "X");
		code = exec_probe(&c->w);
		hist(c, "=%d", code);
		return;
	}
	pid = fork();
	if (!chain_count(STEP_PROBE, pid >= 0)) {
		fork_failed(c, "x", errno);
		return;
	}
	if (pid == 0) {
		fork_judged(&v, 0);
		hist(c, "x");
		_exit(exec_probe(&c->w));
	}
	hist(c, "x=%d", ns_wait(pid));
}

/* Keep fds of the caller's namespaces and a pidfd of it in the pool. */
static void step_save(struct chain *c)
{
	static const int types[] = {
		NST_PID, NST_PIDC, NST_MNT, NST_IPC, NST_NET, NST_PIDFD,
	};
	char path[48];
	size_t t;

	chain_count(STEP_SAVE, true);
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		int fd, type = types[t];

		if (type == NST_PIDFD) {
			fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		} else {
			snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[type]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			continue;
		/* pid_for_children is a PID namespace file too. */
		pool_add(c, fd, type == NST_PIDC ? NST_PID : type);
	}
	hist(c, "w");
}

/*
 * Concurrent joiners. Two or three tasks, each in a PID namespace that its
 * process made (unshare(), most often with the coupled flags) or joined
 * (setns() by pidfd or PID namespace file, then fresh namespaces, most
 * often), set up one at a time (they write the record), wait at a barrier
 * and then, all at once, setns() into one mount, IPC or network namespace
 * (a fresh pinned one, or one from the pool) and execve(). A claim is
 * atomic: in modes 2 and 3, the racers that run are in one PID namespace,
 * or in nested ones; never in two unrelated ones (each would be a member
 * outside the other's PID namespace). In modes 0 and 1 that state is
 * reached (the control). The winners' images wait until the chain has
 * judged the race and synced the namespace's owner with the kernel's.
 */
static void __attribute__((noreturn)) race_stop(struct racer *x, int state,
						 int err)
{
	x->err = err;
	__atomic_store_n(&x->state, state, __ATOMIC_RELEASE);
	_exit(0);
}

/* Racer @s: its process sets up, its child races (see above). */
static void __attribute__((noreturn)) racer(struct chain *c,
					    const struct racer_plan *p, int s,
					    int xfd, int type, int go, int rel)
{
	char fd[16], slot[16], relfd[16], t[16];
	char *argv[] = { "fuzz", RACE_ARG, fd, slot, relfd, t, NULL };
	struct racer *x = &st->race[s];
	struct view was, now;
	pid_t pid;
	char b;

	if (view_read(&was) < 0)
		race_stop(x, RACE_UNREADY, errno);
	if (p->join) {
		if (syscall(SYS_setns, c->pool[p->pool].fd, (int)p->flags) < 0)
			race_stop(x, RACE_UNREADY, errno);
		pidc_moved();
		if (view_read(&was) < 0)
			race_stop(x, RACE_UNREADY, errno);
	}
	if ((p->join ? p->then : p->flags) &&
	    syscall(SYS_unshare, (unsigned long)(p->join ? p->then : p->flags)) < 0)
		race_stop(x, RACE_UNREADY, errno);
	if (view_read(&now) < 0)
		race_stop(x, RACE_UNREADY, errno);
	note_unshare(&was, &now);
	/* A fork into the initial PID namespace or its own: not a joiner */
	if (now.ino[NST_PIDC] == st->host_pid ||
	    now.ino[NST_PIDC] == now.ino[NST_PID])
		race_stop(x, RACE_UNREADY, 0);
	pid = fork();
	if (pid < 0)
		race_stop(x, RACE_UNREADY, errno);
	if (pid > 0) {
		ns_wait(pid);
		_exit(0);
	}
	/* Born in it: settle its inode in the record. */
	if (view_read(&now) < 0)
		race_stop(x, RACE_UNREADY, errno);
	x->pid = now.ino[NST_PID];
	x->join = p->join;
	__atomic_store_n(&x->state, RACE_READY, __ATOMIC_RELEASE);
	while (read(go, &b, 1) > 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &x->t0);
	if (syscall(SYS_setns, xfd, p->nstype) < 0) {
		clock_gettime(CLOCK_MONOTONIC, &x->t1);
		race_stop(x, RACE_SETNS_REFUSED, errno);
	}
	clock_gettime(CLOCK_MONOTONIC, &x->t1);
	snprintf(fd, sizeof(fd), "%d", memfd);
	snprintf(slot, sizeof(slot), "%d", s);
	snprintf(relfd, sizeof(relfd), "%d", rel);
	snprintf(t, sizeof(t), "%d", type);
	fcntl(rel, F_SETFD, 0);
	execv("/proc/self/exe", argv);
	race_stop(x, RACE_EXEC_REFUSED, errno);
}

/* The new image of a racer that ran: say so, and wait for the judgment. */
static int race_main(char **argv)
{
	int s = atoi(argv[3]), rel = atoi(argv[4]), type = atoi(argv[5]);
	struct stat sb;
	char path[48], b;

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  atoi(argv[2]), 0);
	if (st == MAP_FAILED || s < 0 || s >= RACERS_MAX)
		return 1;
	if (type < NST_MNT || type > NST_NET) {
		__atomic_store_n(&st->race[s].state, RACE_BROKEN, __ATOMIC_RELEASE);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[type]);
	if (stat(path, &sb) == 0)
		st->race[s].ino = sb.st_ino;
	st->race[s].owner = kernel_owner(type);
	__atomic_store_n(&st->race[s].state, RACE_RAN, __ATOMIC_RELEASE);
	while (read(rel, &b, 1) > 0)
		;
	return 0;
}

static void plan_racer(struct chain *c, struct racer_plan *p, int type,
		       int how, int shared)
{
	const uint64_t coupled = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;

	memset(p, 0, sizeof(*p));
	p->nstype = splitmix(&c->r) % 2 ? (int)nst_flag[type] : 0;
	p->join = how == 1 || (how == 2 && splitmix(&c->r) % 2);
	if (p->join) {
		p->pool = how == 1 ? shared : pool_pick(c, 1U << NST_PID | POOL_PIDFD);
		p->join = p->pool >= 0;
	}
	if (p->join && c->pool[p->pool].type == NST_PIDFD) {
		p->flags = CLONE_NEWPID | coupled;
	} else if (p->join) {
		p->flags = CLONE_NEWPID;
		p->then = splitmix(&c->r) % 4 ? coupled : 0;
	} else {
		switch (splitmix(&c->r) % 8) {
		case 0:
			p->flags = CLONE_NEWCONTAINER;
			break;
		case 1:
		case 2:
			p->flags = chain_flags(c) | CLONE_NEWPID;
			break;
		default:
			p->flags = CLONE_NEWPID | coupled;
		}
	}
}

/*
 * Wait while racer @s (of plan @p) is in @state, for at most RACE_SECS;
 * false if it hung.
 */
static bool race_wait(int s, int state, const struct racer_plan *p)
{
	int i;

	for (i = 0; i < RACE_SECS * 1000; i++) {
		if (__atomic_load_n(&st->race[s].state, __ATOMIC_ACQUIRE) != state)
			return true;
		usleep(1000);
	}
	i = (int)__atomic_fetch_add(&st->races_hung, 1, __ATOMIC_SEQ_CST);
	if (i < LIST_MAX) {
		st->race_hangs[i].slot = s;
		st->race_hangs[i].state = state;
		st->race_hangs[i].plan = *p;
	}
	return false;
}

static bool overlapped(const struct racer *a, const struct racer *b)
{
	return a->state >= RACE_SETNS_REFUSED && b->state >= RACE_SETNS_REFUSED &&
	       timespans_overlap(&a->t0, &a->t1, &b->t0, &b->t1);
}

/* Whether PID namespaces @a and @b are unrelated: neither holds the other. */
static bool unrelated(uint64_t a, uint64_t b, bool *gap)
{
	return !owns(a, b, gap) && !owns(b, a, gap);
}

/*
 * Judge a race of @n racers for namespace @ino of @type: the number of
 * winners, and in @owner the owner they saw (0 if none).
 */
static int race_judge(struct chain *c, int n, int type, uint64_t ino,
		      uint64_t *owner)
{
	int m = st->mode & 3, s, t, at = 0, won = 0;
	bool split = false, rivals = false, overlap = false, untracked = false;
	bool contested, two = false;

	*owner = 0;
	for (s = 0; s < n; s++) {
		const struct racer *a = &st->race[s];
		bool ran = a->state == RACE_RAN && a->ino == ino;

		if (a->state == RACE_BROKEN)
			st->races_broken++;
		if (a->state < RACE_READY)
			continue;
		at++;
		if (ran) {
			won++;
			two |= *owner && a->owner && a->owner != *owner;
			if (a->owner)
				*owner = a->owner;
		}
		for (t = 0; t < s; t++) {
			const struct racer *b = &st->race[t];
			bool gap = false, apart;

			if (b->state < RACE_READY)
				continue;
			apart = unrelated(a->pid, b->pid, &gap) && !gap;
			rivals |= apart;
			if (apart)
				overlap |= overlapped(a, b);
			if (ran && b->state == RACE_RAN && b->ino == ino &&
			    unrelated(a->pid, b->pid, &gap)) {
				/* Unrelated, unless the record lacks a link */
				split |= !gap;
				untracked |= gap;
			}
		}
	}
	if (at < 2)
		return won;
	contested = rivals && ino != hostv.ino[type];
	st->races[m]++;
	st->races_won[m] += won > 0;
	st->races_contested[m] += contested;
	st->races_contested_won[m] += contested && won > 0;
	st->races_overlap[m] += contested && overlap;
	st->races_two_owners[m] += two;
	if (!split && untracked) {
		st->races_unjudged++;
	} else if (split) {
		uint64_t k = st->races_split[PIDNS_ENFORCE] +
			     st->races_split[PIDNS_STAGE];

		st->races_split[m]++;
		if (m >= PIDNS_ENFORCE && k < LIST_MAX) {
			typeof(st->race_bad[0]) *x = &st->race_bad[k];

			x->w = c->w;
			x->type = type;
			x->mode = m;
			x->ino = ino;
			for (s = 0; s < n; s++)
				x->pid[s] = st->race[s].state == RACE_RAN ?
					    st->race[s].pid : 0;
		}
	} else if (won >= 2) {
		st->races_shared[m]++;
	}
	return won;
}

/*
 * The record of namespace @fd (of @type) brought up to the kernel's owner,
 * the claim checked against the rule (claim_seen()).
 */
static void owner_sync_fd(const struct where *w, int fd, int type)
{
	uint64_t k = fd_owner(fd);
	struct nsrec *e;
	struct stat sb;

	if (!k || fstat(fd, &sb) < 0)
		return;
	e = nsrec_find(sb.st_ino, false);
	if (e && e->type == type && k != e->owner)
		claim_seen(w, e, type, k);
}

/* The table takes @owner for namespace @ino of @type, unjudged. */
static void owner_adopt(uint64_t ino, int type, uint64_t owner)
{
	struct nsrec *e = nsrec_find(ino, false);

	if (e && e->type == type && e->owner != owner) {
		owner_set(e, owner);
		st->races_adopted++;
	}
}

/*
 * Wait until the contested namespace (file @fd) is not owned by a PID
 * namespace that a racer made: the racers are gone, and one that claimed it
 * hands it to its parent when it is freed, a grace period after its last
 * task (pidns_coupling_orphan()). The record follows that hand-up now,
 * before the PID namespace's inode can be reused.
 */
static void race_settle(int fd, int n)
{
	int i, s;

	for (i = 0; i < RACE_SECS * 100; i++) {
		uint64_t k = fd_owner(fd);

		for (s = 0; s < n; s++)
			if (st->race[s].state >= RACE_READY &&
			    !st->race[s].join && k == st->race[s].pid)
				break;
		if (s == n)
			return;
		usleep(10000);
	}
	__atomic_fetch_add(&st->races_unsettled, 1, __ATOMIC_SEQ_CST);
}

static void step_race(struct chain *c)
{
	struct racer_plan plan[RACERS_MAX];
	int i, n, s, type, how, shared, won, go[2], rel[2];
	uint64_t owner;
	pid_t pid[RACERS_MAX];
	struct stat sb;

	/*
	 * Not while pid_for_children has no init: the first racer would be
	 * it, and its exit would kill the others mid-race (and wait, in
	 * zap_pid_ns_processes(), until this process reaps them).
	 */
	if (stat("/proc/self/ns/pid_for_children", &sb) < 0) {
		chain_count(STEP_RACE, false);
		hist(c, "R-");
		return;
	}
	/* A namespace pinned now (no member), or one of the pool. */
	i = splitmix(&c->r) % 2 ? pin_new(c) :
	    pool_pick(c, POOL_NS & ~(1U << NST_PID));
	chain_count(STEP_RACE, i >= 0);
	if (i < 0)
		return;
	type = c->pool[i].type;
	if (fstat(c->pool[i].fd, &sb) < 0)
		_exit(CHAIN_BROKEN);
	n = 2 + (int)(splitmix(&c->r) % (RACERS_MAX - 1));
	/* All in new PID namespaces, all joining one, or each its own way */
	how = (int)(splitmix(&c->r) % 3);
	shared = pool_pick(c, 1U << NST_PID | POOL_PIDFD);
	for (s = 0; s < n; s++)
		plan_racer(c, &plan[s], type, how, shared);
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rel, O_CLOEXEC) < 0)
		_exit(CHAIN_BROKEN);
	memset(st->race, 0, sizeof(st->race));
	fflush(stdout);
	for (s = 0; s < n; s++) {
		pid[s] = fork();
		if (pid[s] == 0) {
			close(go[1]);
			close(rel[1]);
			racer(c, &plan[s], s, c->pool[i].fd, type, go[0], rel[0]);
		}
		/*
		 * One at a time up to the barrier: they write the record. One
		 * that does not get there may still be writing it: the chain
		 * ends, with its process group (the racers too), and the
		 * hang is reported.
		 */
		if (pid[s] < 0)
			st->race[s].state = RACE_UNREADY;
		else if (!race_wait(s, RACE_NONE, &plan[s]))
			kill(0, SIGKILL);
	}
	close(go[1]);
	close(go[0]);
	for (s = 0; s < n; s++)
		race_wait(s, RACE_READY, &plan[s]);
	won = race_judge(c, n, type, sb.st_ino, &owner);
	/*
	 * A claim is judged by who is in the namespace: in modes 2 and 3 the
	 * winners, still in it. In mode 1, joiners in unrelated PID
	 * namespaces follow a claim in, and nothing can judge it afterwards:
	 * the table takes the owner the winners saw (one, or the race
	 * counts two), and follows its hand-up below.
	 */
	if (st->mode >= PIDNS_ENFORCE)
		owner_sync_fd(&c->w, c->pool[i].fd, type);
	else if (won && owner)
		owner_adopt(sb.st_ino, type, owner);
	close(rel[1]);
	close(rel[0]);
	for (s = 0; s < n; s++)
		if (pid[s] > 0)
			ns_wait(pid[s]);
	race_settle(c->pool[i].fd, n);
	owner_sync_fd(&c->w, c->pool[i].fd, type);
	hist(c, "R%d:%s#%d:%d/%d", how, nst_file[type], i, won, n);
}

/* Ask the driver for another mode, and wait until it is set. */
static void step_mode(struct chain *c)
{
	unsigned char mode = (unsigned char)(splitmix(&c->r) % 4), ack;

	chain_count(STEP_MODE, true);
	if (write(req_wr, &mode, 1) != 1 || read(ack_rd, &ack, 1) != 1)
		_exit(CHAIN_BROKEN);
	hist(c, "m%d", mode);
}

/* The next chain step, if any is left of the budget. */
static bool chain_step_left(void)
{
	if (__atomic_fetch_add(&st->steps, 1, __ATOMIC_SEQ_CST) < st->steps_end)
		return true;
	__atomic_fetch_sub(&st->steps, 1, __ATOMIC_SEQ_CST);
	return false;
}

static void __attribute__((noreturn)) chain_run(struct chain *c)
{
	int s, w;

	setpgid(0, 0);
	in_chain = true;
	if (c->unpriv)
		become_user(1000);
	for (; c->done < c->len && chain_step_left(); c->done++) {
		c->w.step = c->done;
		owners_sync(&c->w);
		w = (int)(splitmix(&c->r) % STEP_WEIGHTS);
		for (s = 0; s < STEP_N - 1 && w >= step_weight[s]; s++)
			w -= step_weight[s];
		switch (s) {
		case STEP_UNSHARE: step_unshare(c); break;
		case STEP_CLONE: step_clone(c); break;
		case STEP_FORK: step_fork(c); break;
		case STEP_SETNS_FD: step_setns_fd(c); break;
		case STEP_SETNS_PIDFD: step_setns_pidfd(c); break;
		case STEP_PROBE: step_probe(c, false); break;
		case STEP_EXEC: step_probe(c, true); break;
		case STEP_SAVE: step_save(c); break;
		case STEP_PIN: step_pin(c); break;
		case STEP_RESET: step_reset(c); break;
		case STEP_RACE: step_race(c); break;
		default: step_mode(c); break;
		}
	}
	_exit(0);
}

/*
 * Run chain @pid until it ends, setting the modes it asks for: its status,
 * or -1 if it hung (then it is killed, with its process group).
 */
static int chain_serve(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), status = -1;
	time_t end = time(NULL) + CHAIN_SECS;
	unsigned char mode;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = req_rd, .events = POLLIN },
		};
		time_t now = time(NULL);

		if (now >= end || poll(p, 2, (int)(end - now) * 1000) == 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		if (p[1].revents & POLLIN) {
			if (read(req_rd, &mode, 1) == 1) {
				if (mode == SCAN_REQUEST)
					st->scan_n = tasks_read_as(st->scan,
								   st->scan_self,
								   st->scan_pidc);
				else
					mode_now(mode);
				if (write(ack_wr, &mode, 1) != 1) {
					printf("Bail out! cannot answer a chain\n");
					exit(1);
				}
			}
			continue;
		}
		if (p[0].revents & (POLLIN | POLLHUP) || pidfd < 0) {
			status = ns_wait(pid);
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	/* What a chain killed mid-request left in the pipes. */
	while (read(req_rd, &mode, 1) == 1)
		;
	for (;;) {
		struct pollfd p = { .fd = ack_rd, .events = POLLIN };

		if (poll(&p, 1, 0) <= 0 || read(ack_rd, &mode, 1) != 1)
			break;
	}
	return status;
}

static void chain_start(struct chain *c, uint64_t index)
{
	int i, j;

	memset(c, 0, sizeof(*c));
	c->r = seed ^ 0xa0761d6478bd642fULL ^ (index * 0xe7037ed1a0b428dbULL);
	c->unpriv = index % 4 == 3;
	c->len = 4 + (int)(splitmix(&c->r) % 29);
	c->w.kind = FUZZ_CALLS;
	c->w.call = index;
	for (i = NST_PID; i <= NST_NET; i++) {
		c->pool[c->npool].fd = hostfds[i];
		c->pool[c->npool++].type = i;
	}
	c->pool[c->npool].fd = selfpidfd;
	c->pool[c->npool++].type = NST_PIDFD;
	for (i = 0; i < NTARGETS; i++) {
		c->pool[c->npool].fd = pidfds[i];
		c->pool[c->npool++].type = NST_PIDFD;
		for (j = 0; j < NSFDS; j++) {
			c->pool[c->npool].fd = nsfds[i * NSFDS + j];
			c->pool[c->npool++].type = j;	/* pid, mnt, ipc, net */
		}
	}
	c->nfixed = c->npool;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Wait for @pid for at most @secs: its status, or -1 (killed) if it hung. */
static int wait_bounded(pid_t pid, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int status;

	sigaction(SIGALRM, &sa, NULL);
	alarm(secs);
	if (waitpid(pid, &status, 0) == pid) {
		alarm(0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * The positive control: with the policy off, clone3(CLONE_NEWPID) makes a
 * task that breaks the invariant, and the check must say so.
 */
static void control(void)
{
	pid_t pid;

	mode_now(PIDNS_OFF);
	fflush(stdout);
	pid = ns_clone(0, CLONE_NEWPID, NULL);
	if (pid == 0)
		child_check(host, true, true,
			    &(struct where){ .kind = FUZZ_CLONE3 });
	tap_case(pid > 0 && ns_wait(pid) == CHECK_VIOLATED,
		 "control: the check catches clone3(CLONE_NEWPID) made in mode 0");
}

/*
 * The controls of the probe: unshare(CLONE_NEWPID) and a fork leave the
 * fork's child with the outside's mount, IPC and network namespaces. By
 * the record, its execve() runs with foreign namespaces in mode 0 and is
 * refused in mode 3, and the kernel must agree.
 */
static void control_probe(int mode, int want)
{
	struct where w = { .kind = FUZZ_UNSHARE, .call = (uint64_t)-1,
			   .flags = CLONE_NEWPID };
	struct view was, now;
	pid_t pid;
	int status;

	mode_now(mode);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (view_read(&was) < 0 ||
		    syscall(SYS_unshare, (unsigned long)CLONE_NEWPID) < 0 ||
		    view_read(&now) < 0)
			_exit(1);
		note_unshare(&was, &now);
		pid = fork();
		if (pid == 0)
			_exit(exec_probe(&w));
		_exit(pid < 0 ? 2 : ns_wait(pid));
	}
	status = pid > 0 ? ns_wait(pid) : -1;
	tap_case(status == want,
		 "control: mode %d: execve() after unshare(CLONE_NEWPID) and fork: %s (status %d, want %d)",
		 mode, status >= PROBE_OWN && status < PROBE_END ?
		 probe_name[status - PROBE_OWN] : "?", status, want);
}

/* Forget what the controls counted: the fuzzer must find it alone. */
static void stats_reset(void)
{
	memset(st->exec_ran, 0, sizeof(st->exec_ran));
	memset(st->exec_foreign, 0, sizeof(st->exec_foreign));
	memset(st->exec_judged, 0, sizeof(st->exec_judged));
	memset(st->exec_refused, 0, sizeof(st->exec_refused));
	memset(st->bad, 0, sizeof(st->bad));
	st->predates = 0;
	memset(st->nbad, 0, sizeof(st->nbad));
}

static void start_targets(void)
{
	static const uint64_t extra[NTARGETS] = {
		0, CLONE_NEWUSER | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME,
		CLONE_NEWUTS,
	};
	static struct target t[NTARGETS];
	char path[64];
	int i, j;

	for (i = 0; i < NTARGETS; i++) {
		target_start(&t[i], CLONE_NEWCONTAINER | extra[i], NULL);
		pidfds[i] = t[i].pidfd;
		for (j = 0; j < NSFDS; j++) {
			struct stat s;

			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)t[i].pid,
				 nst_file[j]);
			nsfds[i * NSFDS + j] = open(path, O_RDONLY | O_CLOEXEC);
			if (nsfds[i * NSFDS + j] < 0 ||
			    fstat(nsfds[i * NSFDS + j], &s) < 0) {
				printf("Bail out! open %s: %s\n", path, strerror(errno));
				exit(1);
			}
			/*
			 * Made at once by clone3(CLONE_NEWCONTAINER): the
			 * mount, IPC and network namespaces are the new PID
			 * namespace's, a child of the initial one.
			 */
			if (j == NST_PID)
				nsrec_note(s.st_ino, NST_PID,
					   hostv.ino[NST_PID], st->mode);
			else
				nsrec_note(s.st_ino, j, t[i].ns[ix_pid],
					   st->mode);
		}
	}
}

/*
 * The shared state, in a memfd that the probes' new images map again,
 * with the initial namespaces recorded (their owner: the initial PID
 * namespace, which has no parent), and the fds the chains start with.
 */
static void state_init(void)
{
	int i, p[2], q[2];
	char path[48];

	memfd = (int)syscall(SYS_memfd_create, "pidns-fuzz", 0);
	if (memfd < 0 || ftruncate(memfd, sizeof(*st)) < 0) {
		printf("Bail out! memfd: %s\n", strerror(errno));
		exit(1);
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  memfd, 0);
	if (st == MAP_FAILED || view_read(&hostv) < 0) {
		printf("Bail out! mmap or /proc/self/ns: %s\n", strerror(errno));
		exit(1);
	}
	st->mode = pidns_mode_read();
	st->host_pid = hostv.ino[NST_PID];
	nsrec_note(hostv.ino[NST_PID], NST_PID, 0, PIDNS_OFF);
	for (i = NST_MNT; i <= NST_NET; i++)
		nsrec_note(hostv.ino[i], i, hostv.ino[NST_PID], PIDNS_OFF);
	for (i = NST_PID; i <= NST_NET; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", nst_file[i]);
		hostfds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (hostfds[i] < 0) {
			printf("Bail out! open %s: %s\n", path, strerror(errno));
			exit(1);
		}
	}
	selfpidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (selfpidfd < 0 || pipe2(p, O_CLOEXEC) < 0 ||
	    pipe2(q, O_CLOEXEC) < 0) {
		printf("Bail out! pidfd_open or pipe: %s\n", strerror(errno));
		exit(1);
	}
	req_rd = p[0];
	req_wr = p[1];
	ack_rd = q[0];
	ack_wr = q[1];
	fcntl(req_rd, F_SETFL, O_NONBLOCK);
}

/*
 * The concurrent joiners: never unrelated winners in modes 2 and 3, where
 * contested races are won; unrelated winners in modes 0 and 1 (the
 * control); one owner seen by a race's winners; and with more than one
 * CPU, contested joins that overlapped in time (the window).
 */
static void report_races(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t overlap = 0, two = 0, bad;
	size_t i;
	int m, k;

	for (m = 0; m < 4; m++) {
		if (m >= PIDNS_WARN)
			overlap += st->races_overlap[m];
		two += st->races_two_owners[m];
		tap_diag("mode %d (%s): %llu races of concurrent joiners, %llu won, %llu by joiners of one PID namespace, %llu by unrelated ones; %llu contested (rivals in unrelated PID namespaces, not an initial namespace), %llu of them won, %llu with overlapping setns() calls; %llu with two owners seen",
			 m, pidns_mode_name(m), (unsigned long long)st->races[m],
			 (unsigned long long)st->races_won[m],
			 (unsigned long long)st->races_shared[m],
			 (unsigned long long)st->races_split[m],
			 (unsigned long long)st->races_contested[m],
			 (unsigned long long)st->races_contested_won[m],
			 (unsigned long long)st->races_overlap[m],
			 (unsigned long long)st->races_two_owners[m]);
	}
	bad = st->races_split[PIDNS_ENFORCE] + st->races_split[PIDNS_STAGE];
	for (i = 0; i < LIST_MAX && i < bad; i++) {
		const typeof(st->race_bad[0]) *x = &st->race_bad[i];
		char pids[3 * 24] = "";
		size_t len = 0;

		for (k = 0; k < RACERS_MAX; k++)
			if (x->pid[k])
				len += (size_t)snprintf(pids + len, sizeof(pids) - len,
							" pid:[%llu]",
							(unsigned long long)x->pid[k]);
		tap_diag("race counterexample: chain %llu, step %d, mode %d: %s [%llu] run by%s; steps: %s (replay: pidns.fuzz_seed=%#llx pidns.fuzz_chain=%llu pidns.fuzz_calls=%d pidns.fuzz_steps=%d)",
			 (unsigned long long)x->w.call, x->w.step, x->mode,
			 nst_file[x->type], (unsigned long long)x->ino, pids,
			 x->w.history, (unsigned long long)seed,
			 (unsigned long long)x->w.call, x->w.step + 1,
			 x->w.step + 1);
	}
	for (i = 0; i < LIST_MAX && i < st->races_hung; i++)
		tap_diag("racer %d hung in state %d: %s, flags %#llx, then %#llx, pool entry %d, setns() type %#x",
			 st->race_hangs[i].slot, st->race_hangs[i].state,
			 st->race_hangs[i].plan.join ? "joins" : "new",
			 (unsigned long long)st->race_hangs[i].plan.flags,
			 (unsigned long long)st->race_hangs[i].plan.then,
			 st->race_hangs[i].plan.pool, st->race_hangs[i].plan.nstype);
	tap_case(!bad && !two && !st->races_unjudged &&
		 st->races_contested_won[PIDNS_ENFORCE] > 0 &&
		 st->races_contested_won[PIDNS_STAGE] > 0,
		 "concurrent joiners: in modes 2 and 3 the tasks that run after racing into one namespace are in one PID namespace or nested ones, and a race's winners see one owner (%llu contested races won in mode 2, %llu in mode 3; %llu won by unrelated PID namespaces, %llu with two owners, %llu not judged: a PID namespace without a record)",
		 (unsigned long long)st->races_contested_won[PIDNS_ENFORCE],
		 (unsigned long long)st->races_contested_won[PIDNS_STAGE],
		 (unsigned long long)bad, (unsigned long long)two,
		 (unsigned long long)st->races_unjudged);
	tap_case(st->races_split[PIDNS_OFF] + st->races_split[PIDNS_WARN] > 0,
		 "control: in modes 0 and 1 racers in unrelated PID namespaces both ran with one namespace (%llu races)",
		 (unsigned long long)(st->races_split[PIDNS_OFF] +
				      st->races_split[PIDNS_WARN]));
	if (cpus > 1)
		tap_case(overlap > 0,
			 "concurrent joiners hit the window: in %llu contested races in modes 1-3 the intervals around two racers' setns() calls overlapped (%ld CPUs)",
			 (unsigned long long)overlap, cpus);
	else
		tap_diag("one CPU: the intervals around two racers' setns() calls overlapped in %llu contested races in modes 1-3 (a racer preempted in user space between its clock and its call; the kernel, PREEMPT_NONE, runs the calls one after another); the SMP kernels (tests/run --long) run them at once",
			 (unsigned long long)overlap);
	tap_diag("in modes 0 and 1, %llu owners the winners saw taken by the table unjudged",
		 (unsigned long long)st->races_adopted);
}

static void report(uint64_t calls, uint64_t steps, int hung, int died)
{
	uint64_t total = 0, accepted = 0, chain_ok = 0;
	char buf[256];
	size_t i;
	int c, m;

	for (c = 0; c < FUZZ_CALLS; c++) {
		total += st->calls[c];
		accepted += st->accepted[c];
		tap_case(st->calls[c] > 0 && st->new_pidns[c] > 0,
			 "%s: %llu calls, %llu accepted, %llu of them with a new PID namespace",
			 call_name[c], (unsigned long long)st->calls[c],
			 (unsigned long long)st->accepted[c],
			 (unsigned long long)st->new_pidns[c]);
	}
	for (c = 0; c < STEP_N; c++) {
		chain_ok += st->chain_ok[c];
		tap_diag("chain step %s: %llu made, %llu succeeded", step_name[c],
			 (unsigned long long)st->chain_calls[c],
			 (unsigned long long)st->chain_ok[c]);
	}
	tap_case(total + st->steps == calls && st->steps == steps,
		 "%llu calls made, as asked: %llu random calls (%llu accepted, %llu forks after unshare/setns refused), %llu steps in %llu chains (%llu succeeded, %llu forks and clones failed with EINVAL)",
		 (unsigned long long)(total + st->steps), (unsigned long long)total,
		 (unsigned long long)accepted, (unsigned long long)st->fork_refused,
		 (unsigned long long)st->steps, (unsigned long long)st->chains,
		 (unsigned long long)chain_ok,
		 (unsigned long long)st->chain_einval);
	for (i = 0; i < LIST_MAX && i < st->violations; i++)
		tap_diag("counterexample: call %llu, %s flags %s (%#llx), check status %d (12: shares a namespace, 13: unreadable, <0: -errno)",
			 (unsigned long long)st->list[i].call, call_name[st->list[i].kind],
			 ns_flags_str(st->list[i].flags, "|", "|", buf, sizeof(buf)),
			 (unsigned long long)st->list[i].flags, st->list[i].detail);
	tap_case(st->violations == 0,
		 "invariant: in enforce mode a new PID namespace never shares mount, IPC or network (%llu counterexamples, seed %#llx)",
		 (unsigned long long)st->violations, (unsigned long long)seed);

	for (i = 0; i < LIST_MAX && i < st->claims_bad; i++) {
		const typeof(st->claim_list[0]) *x = &st->claim_list[i];

		tap_diag("claim counterexample: %s [%llu] from pid:[%llu] to pid:[%llu]: %s (members, pid/pid_for_children:%s); %s %llu, step %d%s%s",
			 nst_file[x->type], (unsigned long long)x->ino,
			 (unsigned long long)x->from, (unsigned long long)x->to,
			 claim_why[x->why], x->members, x->w.kind == FUZZ_CALLS ? "chain" : "call",
			 (unsigned long long)x->w.call, x->w.step,
			 x->w.kind == FUZZ_CALLS ? "; steps: " : "",
			 x->w.kind == FUZZ_CALLS ? x->w.history : "");
	}
	if (st->claims_bad)
		for (i = 0; i < 64 && i < st->claim_n; i++)
			tap_diag("claim seen: %s [%llu] from pid:[%llu] to pid:[%llu] (chain %llu)",
				 nst_file[st->claim_log[i].type],
				 (unsigned long long)st->claim_log[i].ino,
				 (unsigned long long)st->claim_log[i].from,
				 (unsigned long long)st->claim_log[i].to,
				 (unsigned long long)st->claim_log[i].chain);
	tap_case(!st->claims_bad && !st->claims_unread && st->claims[1] > 0,
		 "claims: every owner change the kernel reports (NS_GET_PIDNS_OWNER) obeys the rule, and execve() claims what the rule predicts, no more, no less (%llu claims, %llu predicted refused for a member outside, %llu against the rule, %llu not judged: /proc unread; %llu owners handed up by a freed PID namespace, %llu of them not checked for users because a PID namespace made later had taken the freed one's number; %llu execve() claims not predicted: their owner, used by no task, could be freed meanwhile)",
		 (unsigned long long)st->claims[1], (unsigned long long)st->claims[0],
		 (unsigned long long)st->claims_bad,
		 (unsigned long long)st->claims_unread,
		 (unsigned long long)st->orphans,
		 (unsigned long long)st->orphans_reused,
		 (unsigned long long)st->claims_uncertain);
	tap_case(st->builder_judged > 0,
		 "builders: %llu execve() by a task that shares what it builds, judged by the rule before any claim (%llu not judged: a PID namespace between its pid_for_children and its own has no record)",
		 (unsigned long long)st->builder_judged,
		 (unsigned long long)st->builder_unknown);
	report_races();
	for (m = 0; m < 4; m++)
		tap_diag("mode %d (%s): execve() in a non-initial PID namespace: %llu ran (%llu in one made in mode 2 or 3, %llu with a foreign namespace), %llu refused",
			 m, pidns_mode_name(m), (unsigned long long)st->exec_ran[m],
			 (unsigned long long)st->exec_judged[m],
			 (unsigned long long)st->exec_foreign[m],
			 (unsigned long long)st->exec_refused[m]);
	for (i = 0; i < 2 * LIST_MAX; i++) {
		const struct example *x = &st->bad_list[i / LIST_MAX][i % LIST_MAX];

		if (i % LIST_MAX >= st->nbad[i / LIST_MAX])
			continue;
		if (x->w.kind == FUZZ_CALLS)
			tap_diag("state counterexample: chain %llu, step %d: %s (errno %d); mode %d, pid:[%llu] made in mode %d, foreign %s, unrecorded %#llx (judging %#llx, owner %#llx); steps: %s (replay: pidns.fuzz_seed=%#llx pidns.fuzz_chain=%llu pidns.fuzz_calls=%d pidns.fuzz_steps=%d)",
				 (unsigned long long)x->w.call, x->w.step,
				 probe_name[x->code - PROBE_OWN], x->err, x->mode,
				 (unsigned long long)x->pid, x->born,
				 ns_flags_str(x->foreign, "|", "|", buf, sizeof(buf)),
				 (unsigned long long)x->lost,
				 (unsigned long long)x->lost_in,
				 (unsigned long long)x->lost_owner,
				 x->w.history, (unsigned long long)seed,
				 (unsigned long long)x->w.call, x->w.step + 1,
				 x->w.step + 1);
		else
			tap_diag("state counterexample: call %llu, %s flags %#llx: %s (errno %d); mode %d, pid:[%llu] made in mode %d, foreign %s (replay: pidns.fuzz_seed=%#llx pidns.fuzz_first=%llu pidns.fuzz_calls=1 pidns.fuzz_steps=0)",
				 (unsigned long long)x->w.call, call_name[x->w.kind],
				 (unsigned long long)x->w.flags,
				 probe_name[x->code - PROBE_OWN], x->err, x->mode,
				 (unsigned long long)x->pid, x->born,
				 ns_flags_str(x->foreign, "|", "|", buf, sizeof(buf)),
				 (unsigned long long)seed,
				 (unsigned long long)x->w.call);
	}
	tap_case(!st->bad[PROBE_VIOLATED - PROBE_OWN] &&
		 st->exec_judged[PIDNS_ENFORCE] > 0 && st->exec_judged[PIDNS_STAGE] > 0,
		 "state invariant: no execve() ran in mode 2 or 3 in a PID namespace made in mode 2 or 3 with a mount, IPC or network namespace of a PID namespace outside it (%llu counterexamples; %llu such execve() ran in mode 2, %llu in mode 3, %llu with a foreign namespace in a PID namespace that predates the mode)",
		 (unsigned long long)st->bad[PROBE_VIOLATED - PROBE_OWN],
		 (unsigned long long)st->exec_judged[PIDNS_ENFORCE],
		 (unsigned long long)st->exec_judged[PIDNS_STAGE],
		 (unsigned long long)st->predates);
	tap_case(!st->bad[PROBE_OVERREFUSED - PROBE_OWN] &&
		 !st->bad[PROBE_FAILED - PROBE_OWN],
		 "execve() refused only where the state says so (%llu refused with EPERM as expected; %llu EPERM otherwise, %llu other errors)",
		 (unsigned long long)(st->exec_refused[0] + st->exec_refused[1] +
				      st->exec_refused[2] + st->exec_refused[3]),
		 (unsigned long long)st->bad[PROBE_OVERREFUSED - PROBE_OWN],
		 (unsigned long long)st->bad[PROBE_FAILED - PROBE_OWN]);
	tap_case(!st->bad[PROBE_UNTRACKED - PROBE_OWN] && !st->nsrec_full,
		 "every namespace of a probe was recorded when it was created (%llu not, %llu records lost to a full table)",
		 (unsigned long long)st->bad[PROBE_UNTRACKED - PROBE_OWN],
		 (unsigned long long)st->nsrec_full);
	tap_case(st->exec_foreign[PIDNS_OFF] > 0,
		 "mode 0 reaches the unsafe state: %llu execve() ran with a foreign mount, IPC or network namespace",
		 (unsigned long long)st->exec_foreign[PIDNS_OFF]);
	tap_case(!hung && !died && !st->races_hung && !st->races_broken &&
		 !st->races_unsettled,
		 "no worker, chain or racer hung (%d, %llu) or died (%d, %llu), no claimed namespace kept by a racer's PID namespace after it (%llu)",
		 hung, (unsigned long long)st->races_hung, died,
		 (unsigned long long)st->races_broken,
		 (unsigned long long)st->races_unsettled);
}

int main(int argc, char **argv)
{
	uint64_t calls, steps, first, end, batch, chain;
	int hung = 0, died = 0;
	size_t i;

	/* The new images of a racer's and of a probe's execve(). */
	if (argc == 6 && !strcmp(argv[1], RACE_ARG))
		return race_main(argv);
	if (argc > 2 && !strcmp(argv[1], PROBE_ARG))
		return probe_main(argv[2], argc > 3 ? argv[3] : NULL,
				  argc > 4 ? argv[4] : NULL,
				  argc > 5 ? argv[5] : NULL,
				  argc > 6 ? argv[6] : NULL);

	printf("TAP version 13\n");
	for (i = 0; i < ns_flags_count; i++) {
		const char *n = ns_flags[i].nsfile;

		if (!n)
			continue;
		if (!strcmp(n, "pid"))
			ix_pid = (int)i;
		else if (!strcmp(n, "mnt"))
			ix_mnt = (int)i;
		else if (!strcmp(n, "ipc"))
			ix_ipc = (int)i;
		else if (!strcmp(n, "net"))
			ix_net = (int)i;
	}
	if (ix_pid < 0 || ix_mnt < 0 || ix_ipc < 0 || ix_net < 0) {
		printf("Bail out! the flag table lacks pid, mnt, ipc or net\n");
		return 1;
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL);
	seed = cmdline_u64("pidns.fuzz_seed=", seed);
	calls = cmdline_u64("pidns.fuzz_calls=", 100000);
	steps = cmdline_u64("pidns.fuzz_steps=", calls / 4);
	if (steps > calls)
		steps = calls;
	first = cmdline_u64("pidns.fuzz_first=", 0);
	chain = cmdline_u64("pidns.fuzz_chain=", 0);
	end = first + calls - steps;
	ns_read("self", host);
	state_init();
	control();
	control_probe(PIDNS_OFF, PROBE_FOREIGN);
	control_probe(PIDNS_STAGE, PROBE_REFUSED);
	stats_reset();
	mode_now(PIDNS_ENFORCE);
	start_targets();
	tap_diag("seed %#llx: %llu random calls from call %llu in modes 2 and 3, then %llu chain steps from chain %llu in modes 0 to 3 (replay call I: pidns.fuzz_seed=%#llx pidns.fuzz_first=I pidns.fuzz_calls=1 pidns.fuzz_steps=0)",
		 (unsigned long long)seed, (unsigned long long)(calls - steps),
		 (unsigned long long)first, (unsigned long long)steps,
		 (unsigned long long)chain, (unsigned long long)seed);

	for (st->next = first; st->next < end;) {
		uint64_t at = st->next, r;
		pid_t pid;
		int status;

		batch = at / BATCH;
		r = seed ^ (batch * 0x9fb21c651e98df25ULL);
		mode_now(splitmix(&r) % 2 ? PIDNS_STAGE : PIDNS_ENFORCE);
		st->fake_next = 0;
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			worker(at, at + BATCH < end ? (batch + 1) * BATCH : end, batch % 4 == 3);
		status = wait_bounded(pid, 60);
		if (status < 0) {
			hung++;
			tap_diag("worker hung at call %llu", (unsigned long long)st->next);
			st->next++;
		} else if (status != 0) {
			died++;
			tap_diag("worker died at call %llu (status %d)",
				 (unsigned long long)st->next, status);
			st->next++;
		} else if (st->next == at) {
			st->next++;	/* cannot happen; never loop */
		}
	}

	st->steps_end = steps;
	for (; st->steps < st->steps_end; chain++) {
		struct chain c;
		uint64_t was = st->steps;
		pid_t pid;
		int status;

		chain_start(&c, chain);
		mode_now((int)(splitmix(&c.r) % 4));
		st->chains++;
		st->fake_next = 0;
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			chain_run(&c);
		status = pid < 0 ? CHAIN_BROKEN : chain_serve(pid);
		if (status < 0) {
			hung++;
			tap_diag("chain %llu hung at step %llu", (unsigned long long)chain,
				 (unsigned long long)(st->steps - was));
		} else if (status != 0) {
			died++;
			tap_diag("chain %llu died at step %llu (status %d)",
				 (unsigned long long)chain,
				 (unsigned long long)(st->steps - was), status);
		}
		if (st->steps == was)
			break;	/* a chain that made no step: never loop */
	}

	report(calls, steps, hung, died);
	mode_now(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
