// SPDX-License-Identifier: GPL-2.0
/*
 * claimcost THREADS ROUNDS: what a claim costs (tests/bench --claim), in
 * stage mode. A claim looks at the namespace's own members (patch 23),
 * not at every thread of the system, so its cost must not grow with the
 * threads on the host: each measure runs with no extra threads, with
 * 1,000 and with THREADS (default 20,000) sleeping threads in host
 * processes:
 *
 *  - own: a container's init setns() into a network namespace that its
 *    PID namespace already owns (no claim: the comparison alone);
 *  - made: the init setns() into a network namespace made on the host,
 *    pinned and left (podman's pattern): a claim that succeeds;
 *  - refused: the same, with a host process in the namespace that was
 *    started after the threads: a claim that fails (EPERM);
 *  - exec: in warn mode, the default, an init whose network namespace a
 *    host process is in execve()s itself in a loop: each execve() asks
 *    for the claim again and is refused it, and is let through. Timed
 *    whole, from before execve() to the new image's main(): what a user
 *    who keeps one process in a network namespace makes every execve()
 *    of a PID namespace that shares it cost.
 *
 * Prints "claim MEASURE THREADS MIN MEDIAN" lines (of ROUNDS, in ns of
 * guest time; under -icount shift=0 one ns is one instruction), for
 * tests/bench to read, and TAP. Under -icount a round costs the same
 * instructions every time unless something else runs inside it (a timer
 * interrupt, an RCU callback, a slab refill): the minimum is the path's
 * own cost, the median shows how often the rest lands in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define ROUNDS_MAX	64

static long long *shared;	/* the child's measure, or -errno */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A network namespace made here, pinned by the returned fd, and left. */
static int pin_netns(void)
{
	int old = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), fd;

	if (old < 0 || unshare(CLONE_NEWNET))
		return -1;
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (setns(old, CLONE_NEWNET))
		return -1;
	close(old);
	return fd;
}

enum measure { OWN, MADE, REFUSED, EXEC, MEASURES };
static const char *const names[] = { "own", "made", "refused", "exec" };

/*
 * The execve() loop's state, in a memfd that each new image maps again:
 * the time before the last execve(), the rounds left, and the measures.
 */
struct exec_loop {
	long long t0;
	int left, done;
	long long v[ROUNDS_MAX];
};

static int exe_fd = -1;

/* Map the loop's state from memfd @fd */
static struct exec_loop *loop_map(int fd)
{
	void *p = mmap(NULL, sizeof(struct exec_loop), PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* execve() this program again, to count one more round of @fd's loop */
static void __attribute__((noreturn)) exec_again(int fd, struct exec_loop *l)
{
	char arg[16];
	char *argv[] = { "claimcost", "--exec-loop", arg, NULL };
	char *envp[] = { NULL };

	snprintf(arg, sizeof(arg), "%d", fd);
	l->t0 = now_ns();
	syscall(SYS_execveat, exe_fd, "", argv, envp, AT_EMPTY_PATH);
	_exit(2);
}

/* The new image of a round: its time, then the next round or the end */
static int exec_round(const char *fdarg)
{
	long long t = now_ns();
	int fd = atoi(fdarg);
	struct exec_loop *l = loop_map(fd);

	if (!l)
		return 3;
	l->v[l->done++] = t - l->t0;
	if (--l->left <= 0)
		return 0;
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (exe_fd < 0)
		return 4;
	exec_again(fd, l);
}

/* One container init that times its setns() into @net (or its own). */
static long long one(enum measure m, int net)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC);
	long long t;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (m == OWN) {
			/* Two of its own; the one it leaves stays pinned. */
			if (unshare(CLONE_NEWNET))
				_exit(1);
			net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
			if (net < 0 || unshare(CLONE_NEWNET) ||
			    open("/proc/self/ns/net", O_RDONLY) < 0)
				_exit(1);
		}
		t = now_ns();
		if (setns(net, CLONE_NEWNET))
			*shared = -errno;
		else
			*shared = now_ns() - t;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return *shared;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A process with @n sleeping threads; its pid. */
static pid_t threads(int n)
{
	pthread_attr_t attr;
	pthread_t t;
	int ready[2], i;
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 16384);
		for (i = 0; i < n; i++)
			if (pthread_create(&t, &attr, sleeper, NULL))
				break;
		c = i == n ? 'y' : 'n';
		if (i < n)
			fprintf(stderr, "claimcost: %d threads, then pthread_create failed\n", i);
		(void)!write(ready[1], &c, 1);
		for (;;)
			pause();
	}
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Write @value to the sysctl @path, as a TAP case. */
static void raise_limit(const char *path, int value)
{
	int fd = open(path, O_WRONLY);
	char v[16];

	snprintf(v, sizeof(v), "%d", value);
	tap_case(fd >= 0 && write(fd, v, strlen(v)) > 0, "%s raised to %s",
		 path, v);
	if (fd >= 0)
		close(fd);
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v, put its median in @median, and return its minimum */
static long long summary(long long *v, int rounds, long long *median)
{
	qsort(v, rounds, sizeof(v[0]), cmp);
	*median = v[rounds / 2];
	return v[0];
}

/* The least of @rounds measures of @m (own or made), or -errno. */
static long long measure(enum measure m, int rounds, long long *median)
{
	long long v[ROUNDS_MAX];
	int r, net = -1;

	for (r = 0; r < rounds; r++) {
		if (m == MADE && (net = pin_netns()) < 0)
			return -errno;
		v[r] = one(m, net);
		if (net >= 0)
			close(net);
		if (v[r] < 0)
			return v[r];
	}
	return summary(v, rounds, median);
}

/*
 * The execve() loop, in warn mode: an init in a host process's network
 * namespace execve()s itself @rounds times; the least and the median.
 */
static long long measure_exec(int rounds, long long *median)
{
	struct exec_loop *l;
	pid_t outsider, pid;
	int fd, net, st;
	char path[64];

	fd = memfd_create("claimcost", 0);
	if (fd < 0 || ftruncate(fd, sizeof(*l)) || !(l = loop_map(fd)))
		return -errno;
	outsider = fork();
	if (outsider == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(1);
		for (;;)
			pause();
	}
	usleep(20000);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)outsider);
	net = open(path, O_RDONLY | O_CLOEXEC);
	set_mode(PIDNS_WARN);
	l->left = rounds;
	l->done = 0;
	pid = raw_clone(true, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC);
	if (pid == 0) {
		if (net < 0 || setns(net, CLONE_NEWNET))
			_exit(1);
		exec_again(fd, l);
	}
	st = pid > 0 && waitpid(pid, &st, 0) == pid ? st : -1;
	set_mode(PIDNS_STAGE);
	kill(outsider, SIGKILL);
	waitpid(outsider, NULL, 0);
	if (net >= 0)
		close(net);
	close(fd);
	if (st != 0 || l->done != rounds)
		return -EINVAL;
	return summary(l->v, rounds, median);
}

/*
 * The refused claim: a host process started last is in the namespace, so
 * the walk meets every thread before it; the init's setns() fails.
 */
static long long measure_refused(int rounds, long long *median)
{
	long long v[ROUNDS_MAX], t;
	pid_t outsider, pid;
	int r, net;

	for (r = 0; r < rounds; r++) {
		net = pin_netns();
		if (net < 0)
			return -errno;
		outsider = fork();
		if (outsider == 0) {
			if (setns(net, CLONE_NEWNET))
				_exit(1);
			for (;;)
				pause();
		}
		usleep(20000);
		pid = raw_clone(true, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC);
		if (pid == 0) {
			t = now_ns();
			*shared = setns(net, CLONE_NEWNET) ? now_ns() - t : -1;
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		kill(outsider, SIGKILL);
		waitpid(outsider, NULL, 0);
		close(net);
		if (*shared < 0)
			return -EINVAL;
		v[r] = *shared;
	}
	return summary(v, rounds, median);
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 31, pass, m;
	int counts[3] = { 0, 1000, nthreads };
	long long r[3][MEASURES], med;
	pid_t helper[3] = { 0, 0, 0 };

	if (argc > 2 && !strcmp(argv[1], "--exec-loop"))
		return exec_round(argv[2]);
	if (rounds < 1 || rounds > ROUNDS_MAX)
		rounds = 31;
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	printf("TAP version 13\n");
	shared = shared_alloc(sizeof(*shared));
	/*
	 * The guest's defaults are below 20,000 threads: threads-max is RAM /
	 * 128 KiB, and pid_max 4096 (tinyconfig has BASE_SMALL).
	 */
	raise_limit("/proc/sys/kernel/threads-max", 2 * nthreads + 1000);
	/* tinyconfig's BASE_SMALL caps pid_max at 32768 */
	raise_limit("/proc/sys/kernel/pid_max",
		    nthreads + 4000 < 32768 ? nthreads + 4000 : 32768);
	set_mode(PIDNS_STAGE);
	for (pass = 0; pass < 3; pass++) {
		if (pass > 0) {
			/* The threads of the passes before stay */
			helper[pass] = threads(counts[pass] - counts[pass - 1]);
			tap_case(helper[pass] > 0,
				 "%d sleeping threads in host processes",
				 counts[pass]);
			if (helper[pass] < 0)
				break;
		}
		for (m = 0; m < MEASURES; m++) {
			med = 0;
			r[pass][m] = m == REFUSED ?
				     measure_refused(rounds, &med) :
				     m == EXEC ? measure_exec(rounds, &med) :
				     measure(m, rounds, &med);
			tap_case(r[pass][m] >= 0,
				 "claim %s with %d extra threads: least %lld ns, median %lld ns of %d rounds",
				 names[m], counts[pass], r[pass][m], med, rounds);
			printf("claim %s %d %lld %lld\n", names[m], counts[pass],
			       r[pass][m], med);
		}
	}
	for (pass = 1; pass < 3; pass++) {
		if (helper[pass] > 0) {
			kill(helper[pass], SIGKILL);
			waitpid(helper[pass], NULL, 0);
		}
	}
	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
