// SPDX-License-Identifier: GPL-2.0
/*
 * Races of the BPF form (userspace/pidns-lsm) on a stock kernel, where
 * the programs judge a call at one point and the kernel acts at a later
 * one. The patch judges under the locks the kernel holds; the programs
 * must notice what changed in between. Each case runs until it has hit
 * its window (the programs' counter of it, "pidns-lsm stats") or its time
 * is up, says how often it did, and fails if it never did: a race case
 * that did not race proves nothing.
 *
 *  - retarget: setns(pidfd) is judged at its entry on the target's
 *    namespaces then; the kernel reads them again after allocating the
 *    nsset. A container's init enters the network namespace of a host
 *    task that moves between the container's own network namespace (which
 *    the init may enter) and the host's (which it may not) as fast as it
 *    can. Stage mode: the init never ends up in the host's.
 *  - fdswap: setns(fd) is judged at its entry on the namespace the
 *    descriptor names then; the kernel looks the descriptor up after.
 *    A container's init enters, through one descriptor number, its own
 *    network namespace while a task sharing its descriptor table points
 *    that number at its own and at the host's network namespace in turn
 *    (dup2()). Stage mode: the init never ends up in the host's.
 *  - init: in stage mode the fork that gives a new PID namespace its init
 *    keeps the host's namespaces until the init's execve(); task_alloc,
 *    where that is decided, runs before alloc_pid(), so two forks into the
 *    namespace before it has a PID 1 would both see the window. The case
 *    shows that the kernel lets no second task have such a namespace for
 *    its children (no window to hit: it fails where a kernel would).
 *  - outsider: a claim asks whether a namespace has a member outside the
 *    claimer's PID namespace from two member counts (under the initial
 *    PID namespace and under the claimer's), which other CPUs change as
 *    nsproxies holding it are made and freed. A host task sits in a
 *    network namespace (the outsider); a task of a container, let in
 *    while the mode was 1, makes a new nsproxy with it as fast as it can
 *    (unshare(CLONE_NEWUTS)); in stage mode, another task of the
 *    container tries to enter it, which the outsider must always refuse.
 *    Needs two CPUs: the programs are not preempted.
 *
 * Run by tests/guest/stock.sh with pidns-lsm attached. TAP on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "pidns-lsm.h"
#include "tap.h"

#define SECS 20

static ino_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What a container's init counted entering a netns, for the parent */
struct enter_result {
	long tries, own, refused, host, other;
	double secs;
	int err;
};

/*
 * In a container's init (stage mode): setns(@fd, CLONE_NEWNET) for SECS
 * seconds, counting where each call leaves it, back to its own netns
 * (@own) after any other; stop at the first that leaves it in another,
 * or once the programs have counted 3 retargeted installs since @hits0.
 */
static void enter_loop(struct enter_result *r, int fd, int own,
		       ino_t host_ino, long hits0)
{
	ino_t own_ino = ino_of("/proc/self/ns/net"), ino;
	double start = now(), end = start + SECS;

	while (now() < end) {
		if (r->tries && !(r->tries % 64) &&
		    pidns_lsm_stat(PIDNS_LSM_RETARGETED) - hits0 >= 3)
			break;
		r->tries++;
		if (setns(fd, CLONE_NEWNET)) {
			r->refused++;
			continue;
		}
		ino = ino_of("/proc/self/ns/net");
		if (ino == own_ino) {
			r->own++;
			continue;
		}
		if (ino == host_ino)
			r->host++;
		else
			r->other++;
		if (setns(own, CLONE_NEWNET))
			r->err = errno;
		break;
	}
	r->secs = now() - start;
}

static void retarget(void)
{
	struct enter_result *r = shared_alloc(sizeof(*r));
	int host_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	long hits0 = pidns_lsm_stat(PIDNS_LSM_RETARGETED), hits;
	ino_t host_ino = ino_of("/proc/self/ns/net");
	int ready[2], go[2], pidfd, st;
	pid_t mover, init;

	if (host_net < 0 || pipe(ready) || pipe(go)) {
		tap_case(0, "retarget: setup: %s", strerror(errno));
		return;
	}
	/*
	 * The mover, first: a host task that moves between the container's
	 * network namespace and the host's as soon as it knows the container
	 */
	mover = fork();
	if (mover == 0) {
		char path[64];
		int theirs;

		if (read(go[0], &init, sizeof(init)) != sizeof(init))
			_exit(1);
		snprintf(path, sizeof(path), "/proc/%d/ns/net", init);
		theirs = open(path, O_RDONLY | O_CLOEXEC);
		if (theirs < 0 || write(ready[1], "m", 1) != 1)
			_exit(1);
		for (;;)
			if (setns(theirs, CLONE_NEWNET) ||
			    setns(host_net, CLONE_NEWNET))
				_exit(2);
	}
	pidfd = (int)syscall(SYS_pidfd_open, mover, 0);
	if (pidfd < 0)
		tap_case(0, "retarget: pidfd of the mover: %s", strerror(errno));
	/* The container: its init has the pidfd, and waits for the mover */
	init = raw_clone(false, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
			 CLONE_NEWNET);
	if (init == 0) {
		int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		char c;

		if (read(ready[0], &c, 1) != 1 || own < 0) {
			r->err = errno ? errno : EIO;
			_exit(1);
		}
		enter_loop(r, pidfd, own, host_ino, hits0);
		_exit(r->err ? 1 : 0);
	}
	if (init < 0) {
		tap_case(0, "retarget: clone the container: %s", strerror(errno));
		kill(mover, SIGKILL);
		return;
	}
	if (write(go[1], &init, sizeof(init)) != sizeof(init))
		tap_case(0, "retarget: start the mover: %s", strerror(errno));
	st = wait_status(init);
	kill(mover, SIGKILL);
	waitpid(mover, NULL, 0);
	hits = pidns_lsm_stat(PIDNS_LSM_RETARGETED) - hits0;
	tap_diag("retarget: %ld tries in %.1f s: %ld into its own netns, %ld refused, %ld into the host's, %ld elsewhere; %ld setns() found a target other than the one judged",
		 r->tries, r->secs, r->own, r->refused, r->host, r->other, hits);
	tap_case(st == 0 && !r->err && r->host == 0 && r->other == 0,
		 "retarget: stage mode: a container's init that enters a host task's netns by pidfd never ends up in the host's, however the target moves (%ld times it did, exit %d, error %s)",
		 r->host, st, strerror(r->err));
	tap_case(hits > 0,
		 "retarget: the race hit its window: the target moved between the check and the kernel's lookup %ld times",
		 hits);
	close(host_net);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(pidfd);
}

static void fdswap(void)
{
	struct enter_result *r = shared_alloc(sizeof(*r));
	int host_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	long hits0 = pidns_lsm_stat(PIDNS_LSM_RETARGETED), hits;
	ino_t host_ino = ino_of("/proc/self/ns/net");
	pid_t init;
	int st;

	if (host_net < 0) {
		tap_case(0, "fdswap: setup: %s", strerror(errno));
		return;
	}
	init = raw_clone(false, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
			 CLONE_NEWNET);
	if (init == 0) {
		int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		int slot = dup(own);
		pid_t swapper;

		if (own < 0 || slot < 0) {
			r->err = errno;
			_exit(1);
		}
		/* The swapper: a task of the container sharing the init's table */
		swapper = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0,
					 NULL, NULL, 0);
		if (swapper == 0)
			for (;;)
				if (dup2(own, slot) < 0 ||
				    dup2(host_net, slot) < 0)
					_exit(2);
		if (swapper < 0) {
			r->err = errno;
			_exit(1);
		}
		enter_loop(r, slot, own, host_ino, hits0);
		kill(swapper, SIGKILL);
		waitpid(swapper, NULL, 0);
		_exit(r->err ? 1 : 0);
	}
	if (init < 0) {
		tap_case(0, "fdswap: clone the container: %s", strerror(errno));
		close(host_net);
		return;
	}
	st = wait_status(init);
	hits = pidns_lsm_stat(PIDNS_LSM_RETARGETED) - hits0;
	tap_diag("fdswap: %ld tries in %.1f s: %ld into its own netns, %ld refused, %ld into the host's, %ld elsewhere; %ld setns() found a namespace other than the one judged",
		 r->tries, r->secs, r->own, r->refused, r->host, r->other, hits);
	tap_case(st == 0 && !r->err && r->host == 0 && r->other == 0 &&
		 r->tries > 0,
		 "fdswap: stage mode: a container's init whose descriptor another task points at the host's netns and back never ends up in the host's (%ld times it did, exit %d, error %s)",
		 r->host, st, strerror(r->err));
	tap_case(hits > 0,
		 "fdswap: the race hit its window: the descriptor changed between the check and the kernel's lookup %ld times",
		 hits);
	close(host_net);
}

/*
 * The window needs two forks into the same PID namespace before it has an
 * init. Only the task that unshared CLONE_NEWPID has that namespace for
 * its children (the nsproxy is per thread) until then: a thread it makes
 * would be in another PID namespace than its group (EINVAL), another task
 * cannot open its pid_for_children (no init: ENOENT), and setns() by pidfd
 * enters the target's own PID namespace, not the one for its children.
 * One task forks once at a time, so the race cannot be set up; this case
 * fails on a kernel that lets it, where the programs would need to decide
 * the window after alloc_pid().
 */
static void *noop(void *arg)
{
	return arg;
}

static void init_race(void)
{
	int *res = shared_alloc(3 * sizeof(int));
	int fds[2], pidfd, st;
	pid_t p, builder;
	char c;

	/* The builder's own thread, made after its unshare() */
	p = fork();
	if (p == 0) {
		pthread_t t;

		if (unshare(CLONE_NEWPID))
			_exit(101);
		res[0] = pthread_create(&t, NULL, noop, NULL);
		if (!res[0])
			pthread_join(t, NULL);
		_exit(0);
	}
	st = wait_status(p);
	/* Another task, while the builder has not forked yet */
	if (pipe(fds))
		tap_case(0, "init: pipe: %s", strerror(errno));
	builder = fork();
	if (builder == 0) {
		if (unshare(CLONE_NEWPID) || write(fds[1], "u", 1) != 1)
			_exit(102);
		pause();
		_exit(0);
	}
	if (read(fds[0], &c, 1) == 1) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children",
			 builder);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		res[1] = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		p = fork();
		if (p == 0) {
			pidfd = (int)syscall(SYS_pidfd_open, builder, 0);
			if (pidfd < 0 || setns(pidfd, CLONE_NEWPID))
				res[2] = -errno;
			else if (ino_of("/proc/self/ns/pid_for_children") ==
				 ino_of("/proc/1/ns/pid"))
				res[2] = 1;
			else
				res[2] = 2;
			_exit(0);
		}
		st |= wait_status(p);
	} else {
		st |= 1;
	}
	kill(builder, SIGKILL);
	waitpid(builder, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	tap_diag("init: after unshare(CLONE_NEWPID) and before a fork: a new thread: %s; another task's open of its pid_for_children: %s; setns() by its pidfd: %s",
		 strerror(res[0]), strerror(res[1]),
		 res[2] == 1 ? "the host's PID namespace" :
		 res[2] == 2 ? "the new one" : strerror(-res[2]));
	tap_case(st == 0 && res[0] == EINVAL && res[1] == ENOENT && res[2] == 1,
		 "init: no other task can fork into a new PID namespace before its init, so stage mode's window, decided at task_alloc before alloc_pid(), has no race (exit %d)",
		 st);
}

/* The container's two tasks, and what they saw */
struct outsider_state {
	int stop, in, err;
	long tries, refused, entered, unshares;
	double secs;
};

static void outsider(void)
{
	struct outsider_state *o = shared_alloc(sizeof(*o));
	long hits0 = pidns_lsm_stat(PIDNS_LSM_CONTENDED), hits;
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN), ns_fd, st;
	pid_t host, init;
	char path[64];

	if (cpus < 2) {
		tap_case(0, "outsider: needs two CPUs, the guest has %d", cpus);
		return;
	}
	set_mode(1);
	/* The outsider: a host task in its own network namespace */
	host = fork();
	if (host == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(1);
		pause();
		_exit(0);
	}
	usleep(200000);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", host);
	ns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ns_fd < 0) {
		tap_case(0, "outsider: %s: %s", path, strerror(errno));
		kill(host, SIGKILL);
		return;
	}
	init = raw_clone(false, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
			 CLONE_NEWNET);
	if (init == 0) {
		double start, end;
		pid_t churn;

		/* The insider: in the namespace, and making nsproxies */
		churn = fork();
		if (churn == 0) {
			if (setns(ns_fd, CLONE_NEWNET)) {
				o->err = errno;
				_exit(1);
			}
			__atomic_store_n(&o->in, 1, __ATOMIC_SEQ_CST);
			while (!__atomic_load_n(&o->stop, __ATOMIC_SEQ_CST)) {
				if (unshare(CLONE_NEWUTS))
					_exit(2);
				o->unshares++;
			}
			_exit(0);
		}
		while (!__atomic_load_n(&o->in, __ATOMIC_SEQ_CST) && !o->err)
			usleep(1000);
		/* Stage mode, set by the parent once the insider is in */
		while (__atomic_load_n(&o->in, __ATOMIC_SEQ_CST) != 2)
			usleep(1000);
		start = now();
		end = start + SECS;
		while (now() < end) {
			o->tries++;
			if (setns(ns_fd, CLONE_NEWNET)) {
				o->refused++;
			} else {
				o->entered++;
				break;
			}
			if (!(o->tries % 64) &&
			    pidns_lsm_stat(PIDNS_LSM_CONTENDED) - hits0 >= 3)
				break;
		}
		o->secs = now() - start;
		__atomic_store_n(&o->stop, 1, __ATOMIC_SEQ_CST);
		wait_status(churn);
		_exit(0);
	}
	while (!__atomic_load_n(&o->in, __ATOMIC_SEQ_CST) && !o->err)
		usleep(1000);
	set_mode(3);
	__atomic_store_n(&o->in, 2, __ATOMIC_SEQ_CST);
	st = wait_status(init);
	kill(host, SIGKILL);
	waitpid(host, NULL, 0);
	close(ns_fd);
	hits = pidns_lsm_stat(PIDNS_LSM_CONTENDED) - hits0;
	tap_diag("outsider: %ld tries in %.1f s on %d CPUs: %ld refused, %ld entered, while the insider made %ld nsproxies; %ld reads of the member counts changed under them",
		 o->tries, o->secs, cpus, o->refused, o->entered, o->unshares, hits);
	tap_case(st == 0 && !o->err && o->entered == 0 && o->tries > 0,
		 "outsider: stage mode: a container's task never enters a network namespace that a host task is in, however fast another task of the container makes nsproxies with it (%ld times it did, exit %d, error %s)",
		 o->entered, st, strerror(o->err));
	tap_case(hits > 0,
		 "outsider: the race hit its window: the member counts changed while a claim read them %ld times",
		 hits);
}

int main(void)
{
	printf("TAP version 13\n");
	if (!pidns_is_bpf()) {
		printf("Bail out! pidns-lsm is not attached\n");
		return 1;
	}
	set_mode(3);
	retarget();
	fdswap();
	init_race();
	outsider();
	set_mode(1);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
