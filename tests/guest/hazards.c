// SPDX-License-Identifier: GPL-2.0
/*
 * hazards: the 2007 problem, happening, and the policy refusing its setup.
 *
 * A process in a new PID namespace that shares state with the outside
 * hands out PIDs that mean something else there:
 *  - a PID lock file: the owner writes getpid(), the outside checks it
 *    with kill(pid, 0) and finds another process;
 *  - a PI futex in a file-backed MAP_SHARED mapping: the owner's TID is in
 *    the lock word, and a waiter outside makes the kernel look it up in
 *    the waiter's namespace: ESRCH while the owner is alive.
 * With kernel.pidns_coupling=0 both happen; with 2 their setup (a new PID
 * namespace sharing the filesystem) is refused. What the policy cannot
 * stop, shown as known limits: the same through a file that both mount
 * namespaces see, and through anonymous shared memory inherited across
 * clone3(CLONE_NEWCONTAINER). Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#define LOCKFILE "/tmp/hazard.pid"
#define FUTEXFILE "/tmp/hazard.futex"
#define OWNER_TID 1000	/* the owner's TID inside its PID namespace */

/* The owner: a child of the case, in the namespaces of @flags. */
struct owner {
	pid_t pid;		/* as the outside sees it */
	int release[2];		/* the owner exits when this pipe closes */
};

/*
 * Start an owner in new namespaces @flags that runs @fn and then waits.
 * Returns 0, or the errno of clone3() if the kernel refused the setup.
 */
static int owner_start(struct owner *o, uint64_t flags, int (*fn)(void *),
		       void *arg)
{
	int ready[2];
	char byte;

	if (pipe(ready) < 0 || pipe(o->release) < 0)
		return -1;
	fflush(stdout);
	o->pid = raw_clone(true, flags);
	if (o->pid < 0) {
		int e = errno;

		close(ready[0]);
		close(ready[1]);
		close(o->release[0]);
		close(o->release[1]);
		return e;
	}
	if (o->pid == 0) {
		close(ready[0]);
		close(o->release[1]);
		if (fn(arg))
			_exit(1);
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		(void)!read(o->release[0], &byte, 1);
		_exit(0);
	}
	close(ready[1]);
	close(o->release[0]);
	if (read(ready[0], &byte, 1) != 1) {
		close(ready[0]);
		close(o->release[1]);
		wait_status(o->pid);
		return -1;
	}
	close(ready[0]);
	return 0;
}

static void owner_stop(struct owner *o)
{
	close(o->release[1]);
	wait_status(o->pid);
}

static int write_lockfile(void *arg)
{
	FILE *f = fopen(LOCKFILE, "we");

	(void)arg;
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f) ? 1 : 0;
}

static void lockfile_case(int mode, uint64_t flags, const char *what,
			  bool limit)
{
	const char *name = pidns_mode_name(mode);
	char flagstr[128];
	struct owner o;
	int r, seen = -1;
	FILE *f;

	set_mode(mode);
	ns_flags_str(flags, "|", "|", flagstr, sizeof(flagstr));
	unlink(LOCKFILE);
	r = owner_start(&o, flags, write_lockfile, NULL);
	if (mode == PIDNS_ENFORCE && !limit) {
		tap_case(r == EINVAL, "%s: lock file: the setup, clone3(%s), is refused with EINVAL (got %d)",
			 name, flagstr, r);
		if (!r)
			owner_stop(&o);
		return;
	}
	if (r) {
		tap_case(0, "%s: lock file: clone3(%s) failed: %s", name,
			 flagstr, strerror(r));
		return;
	}
	f = fopen(LOCKFILE, "re");
	if (!f || fscanf(f, "%d", &seen) != 1)
		seen = -1;
	if (f)
		fclose(f);
	/*
	 * The file names pid 1, which outside is this guest's init: alive,
	 * so kill(pid, 0) says the lock is held, by the wrong process.
	 */
	tap_case(seen > 0 && seen != o.pid && kill(seen, 0) == 0,
		 "%s%s: lock file %s names pid %d, which outside is another live process, not the owner (pid %d)",
		 limit ? "known limit: " : "", name, what, seen, (int)o.pid);
	owner_stop(&o);
	unlink(LOCKFILE);
}

/* Map the lock word: a file both sides open, or @anon shared memory. */
static unsigned int *map_word(bool anon)
{
	void *p;
	int fd;

	if (anon) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	fd = open(FUTEXFILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return NULL;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

struct futex_arg {
	unsigned int *word;	/* NULL: map FUTEXFILE in the owner */
};

/*
 * In the owner (pid 1 of its namespace): make a thread-less child with
 * TID OWNER_TID there (clone3 set_tid) that takes the PI lock the way
 * glibc does when it is free: cmpxchg 0 -> its TID, without the kernel.
 */
static int take_pi_lock(void *arg)
{
	struct futex_arg *fa = arg;
	unsigned int *word = fa->word ? fa->word : map_word(false);
	pid_t tid = OWNER_TID;
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};
	int ready[2];
	pid_t holder;
	char byte;

	if (!word || pipe(ready) < 0)
		return 1;
	holder = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (holder < 0)
		return 1;
	if (holder == 0) {
		unsigned int zero = 0;

		if (!__atomic_compare_exchange_n(word, &zero,
						 (unsigned int)getpid(), false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			_exit(1);
		(void)!write(ready[1], "", 1);
		for (;;)
			pause();
	}
	if (read(ready[0], &byte, 1) != 1)
		return 1;
	return 0;	/* the holder lives until the owner's namespace ends */
}

static void futex_case(int mode, uint64_t flags, bool anon, bool limit)
{
	const char *name = pidns_mode_name(mode);
	struct futex_arg fa = { NULL };
	struct timespec deadline;
	unsigned int *word;
	char flagstr[128];
	struct owner o;
	long r;
	int e;

	set_mode(mode);
	ns_flags_str(flags, "|", "|", flagstr, sizeof(flagstr));
	unlink(FUTEXFILE);
	word = map_word(anon);
	if (!word) {
		tap_case(0, "%s: PI futex: cannot map the lock word", name);
		return;
	}
	if (anon)
		fa.word = word;
	r = owner_start(&o, flags, take_pi_lock, &fa);
	if (mode == PIDNS_ENFORCE && !limit) {
		tap_case(r == EINVAL, "%s: PI futex: the setup, clone3(%s), is refused with EINVAL (got %ld)",
			 name, flagstr, r);
		if (!r)
			owner_stop(&o);
		munmap(word, 4096);
		return;
	}
	if (r) {
		tap_case(0, "%s: PI futex: clone3(%s) failed (%ld)", name,
			 flagstr, r);
		munmap(word, 4096);
		return;
	}
	if (kill(OWNER_TID, 0) == 0 || errno != ESRCH) {
		tap_case(0, "%s: PI futex: pid %d exists outside; the case needs it free",
			 name, OWNER_TID);
		owner_stop(&o);
		munmap(word, 4096);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	r = syscall(SYS_futex, word, FUTEX_LOCK_PI, 0, &deadline, NULL, 0);
	e = r < 0 ? errno : 0;
	/* The lock is held, by a live task; the kernel says there is none. */
	tap_case(r < 0 && e == ESRCH && (*word & FUTEX_TID_MASK) == OWNER_TID,
		 "%s%s: PI futex in %s held by TID %d in its namespace: FUTEX_LOCK_PI from outside fails with ESRCH while the owner lives (got %s, word %u)",
		 limit ? "known limit: " : "", name,
		 anon ? "anonymous MAP_SHARED memory" : "a MAP_SHARED file",
		 OWNER_TID, e ? strerror(e) : "success", *word);
	owner_stop(&o);
	munmap(word, 4096);
	unlink(FUTEXFILE);
}

int main(void)
{
	printf("TAP version 13\n");

	/* The knob off: the problem, happening. */
	lockfile_case(PIDNS_OFF, CLONE_NEWPID, "on the shared filesystem", false);
	futex_case(PIDNS_OFF, CLONE_NEWPID, false, false);

	/* Enforce: the same setups are refused. */
	lockfile_case(PIDNS_ENFORCE, CLONE_NEWPID, "", false);
	futex_case(PIDNS_ENFORCE, CLONE_NEWPID, false, false);
	lockfile_case(PIDNS_ENFORCE, CLONE_NEWPID | CLONE_NEWNS, "", false);

	/* What enforce mode does not stop. */
	lockfile_case(PIDNS_ENFORCE, CLONE_NEWCONTAINER,
		      "in /tmp, which the copied mount tree still shares", true);
	futex_case(PIDNS_ENFORCE, CLONE_NEWCONTAINER, false, true);
	futex_case(PIDNS_ENFORCE, CLONE_NEWCONTAINER, true, true);

	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
