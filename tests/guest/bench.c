// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what the coupling policy costs, as ratios of times measured side
 * by side in one boot. Not a test: it prints measurements for tests/bench.
 *
 *   bench base ROUNDS [MS]   fork+exit+wait, clone3() with no namespace
 *                            flags, vfork+execve+exit+wait, and the same
 *                            execve() in a coupled PID namespace, ns per
 *                            call, one line per round (run on the patched
 *                            and the unpatched kernel)
 *   bench knob ROUNDS [MS]   interleaved rounds, in one boot, of
 *                            - fork, clone3() and vfork+execve with the knob
 *                              at 0, 2 and 3, in the initial PID namespace
 *                            - vfork+execve by a task in a PID namespace
 *                              with its own mount, IPC and net namespaces,
 *                              knob at 0, 2 and 3 (the ownership check)
 *                            - clone3() with the four flags at 0 and at 2
 *                            - unshare(CLONE_NEWCONTAINER) vs the four flags
 *                            - a refused request vs an accepted coupled one
 *                            - a refused clone3(CLONE_NEWPID) vs a clone3()
 *                              fork, exit and wait
 *
 * Each measure runs for at least MS milliseconds of guest time (default
 * 1000; under QEMU's -icount, where guest time counts instructions and is
 * exact, 100 is plenty).
 *
 * Output lines: "<measure> <variant> <ns per call>", one per round and
 * variant; the order of the variants rotates between rounds so that a
 * drift in the emulator's speed does not favour any.
 *
 * The execve() benchmarks run this program again with EXEC_MARK as its
 * only argument, which makes it exit at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"

/* kernel.pidns_coupling=3, stage (PIDNS_STAGE once nsflags.h has it). */
#define MODE_STAGE	3

/* The argument that makes this program exit as soon as it starts. */
#define EXEC_MARK	"--exit-at-once"

extern char **environ;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The guest's clock may be jiffies (TCG often fails to calibrate the TSC
 * without ACPI), so every measure runs for at least a second and reports
 * the mean: a 4 ms tick is then 0.4% of it.
 */
static double min_ns = 1e9;
#define MIN_NS min_ns

/* Create a child with @flags (raw clone3, or fork), let it exit, reap it. */
static void spawn_one(bool use_clone3, uint64_t flags, uint64_t unshare_flags)
{
	pid_t pid = use_clone3 ? raw_clone(true, flags) : fork();

	if (pid < 0) {
		fprintf(stderr, "bench: clone: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		if (unshare_flags && unshare((int)unshare_flags) < 0)
			_exit(1);
		_exit(0);
	}
	if (wait_status(pid) != 0) {
		fprintf(stderr, "bench: unshare(%#llx) failed\n",
			(unsigned long long)unshare_flags);
		exit(1);
	}
}

/* ns per call of spawn_one(), over at least MIN_NS. */
static double spawn_ns(bool use_clone3, uint64_t flags, uint64_t unshare_flags)
{
	double t0 = now_ns(), t;
	long n = 0;

	do {
		spawn_one(use_clone3, flags, unshare_flags);
		n++;
		t = now_ns() - t0;
	} while (t < MIN_NS);
	return t / n;
}

/* The program that execve() runs: this one, which exits at once. */
static char self_exe[PATH_MAX];

/* vfork(), execve() this program with EXEC_MARK, reap it. */
static void exec_one(void)
{
	char *const args[] = { "bench", EXEC_MARK, NULL };
	pid_t pid = vfork();

	if (pid < 0) {
		fprintf(stderr, "bench: vfork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		execve(self_exe, args, environ);
		_exit(127);
	}
	if (wait_status(pid) != 0) {
		fprintf(stderr, "bench: execve(%s) failed\n", self_exe);
		exit(1);
	}
}

/* ns per call of exec_one(), over at least MIN_NS. */
static double exec_ns(void)
{
	double t0 = now_ns(), t;
	long n = 0;

	do {
		exec_one();
		n++;
		t = now_ns() - t0;
	} while (t < MIN_NS);
	return t / n;
}

/*
 * A helper in new PID, mount, IPC and net namespaces, created once: their
 * owner is its PID namespace, so each of its children's execve() runs the
 * ownership check and passes it. It measures exec_ns() whenever it reads a
 * byte from @cmd and writes the result to @res. One helper for the whole
 * run: a network namespace per measure would be torn down by a kernel
 * worker while the next measure runs, and be counted in it.
 */
static struct {
	pid_t pid;
	int cmd, res;
} helper = { .pid = -1 };

static void helper_start(void)
{
	int cmd[2], res[2];
	double ns;
	char c;

	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0) {
		fprintf(stderr, "bench: pipe: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	helper.pid = raw_clone(true, NS_CONTAINER);
	if (helper.pid < 0) {
		fprintf(stderr, "bench: clone3 for the PID namespace: %s\n",
			strerror(errno));
		exit(1);
	}
	if (helper.pid == 0) {
		close(cmd[1]);
		close(res[0]);
		exec_one();	/* warm up, as main() does */
		while (read(cmd[0], &c, 1) == 1) {
			ns = exec_ns();
			if (write(res[1], &ns, sizeof(ns)) != sizeof(ns))
				_exit(1);
		}
		_exit(0);
	}
	close(cmd[0]);
	close(res[1]);
	helper.cmd = cmd[1];
	helper.res = res[0];
}

/* exec_ns() in the helper's PID namespace. */
static double helper_exec_ns(void)
{
	double ns;

	if (write(helper.cmd, "m", 1) != 1 ||
	    read(helper.res, &ns, sizeof(ns)) != sizeof(ns)) {
		fprintf(stderr, "bench: the PID namespace helper failed\n");
		exit(1);
	}
	return ns;
}

static void helper_stop(void)
{
	close(helper.cmd);
	close(helper.res);
	if (wait_status(helper.pid) != 0) {
		fprintf(stderr, "bench: the PID namespace helper failed\n");
		exit(1);
	}
}

/*
 * ns per call of @request, which must be refused with EINVAL (@what names
 * it), over at least MIN_NS, in batches of @batch. A refused request
 * changes nothing: no throwaway child needed.
 */
static double refused_loop(long (*request)(void), long batch, const char *what)
{
	double t0 = now_ns(), t;
	long n = 0, i;

	do {
		for (i = 0; i < batch; i++) {
			if (request() >= 0 || errno != EINVAL) {
				fprintf(stderr, "bench: %s was not refused\n", what);
				exit(1);
			}
		}
		n += batch;
		t = now_ns() - t0;
	} while (t < MIN_NS);
	return t / n;
}

static long refused_unshare(void)
{
	return unshare(CLONE_NEWPID);
}

/*
 * A refused fork: clone3(CLONE_NEWPID) in enforce mode. Judged last in
 * copy_process(), it copies the task and makes its PID namespace first.
 */
static long refused_clone(void)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID);

	if (pid == 0)
		_exit(0);
	return pid;
}

static double refused_ns(void)
{
	return refused_loop(refused_unshare, 1000, "unshare(CLONE_NEWPID)");
}

static double refused_clone_ns(void)
{
	return refused_loop(refused_clone, 100, "clone3(CLONE_NEWPID)");
}

/*
 * Run @run for each of the @n variants @names (at most 4), starting with
 * variant @round % @n, and print one line per variant in the order given.
 */
static void series(const char *measure, const char *const *names, int n,
		   int round, double (*run)(int variant))
{
	double v[4];
	int i;

	for (i = 0; i < n; i++)
		v[(round + i) % n] = run((round + i) % n);
	for (i = 0; i < n; i++)
		printf("%s %s %.0f\n", measure, names[i], v[i]);
	fflush(stdout);
}

static void pair(const char *measure, const char *a, const char *b,
		 int round, double (*run)(int variant))
{
	const char *const names[] = { a, b };

	series(measure, names, 2, round, run);
}

/* The knob's values that the fast paths are measured at, and their names. */
static const int knob_modes[] = { PIDNS_OFF, PIDNS_ENFORCE, MODE_STAGE };
static const char *const knob_names[] = { "off", "enforce", "stage" };
#define KNOB_VARIANTS	3

static void knob_series(const char *measure, int round,
			double (*run)(int variant))
{
	series(measure, knob_names, KNOB_VARIANTS, round, run);
}

static double knob_fork(int v)
{
	set_mode(knob_modes[v]);
	return spawn_ns(false, 0, 0);
}

static double knob_clone3(int v)
{
	set_mode(knob_modes[v]);
	return spawn_ns(true, 0, 0);
}

/* execve() in the initial PID namespace: its check is one comparison. */
static double knob_exec(int v)
{
	set_mode(knob_modes[v]);
	return exec_ns();
}

/* execve() in the helper's PID namespace: the ownership check. */
static double knob_exec_pidns(int v)
{
	set_mode(knob_modes[v]);
	return helper_exec_ns();
}

static double knob_clone3_four(int v)
{
	set_mode(v ? PIDNS_ENFORCE : PIDNS_OFF);
	return spawn_ns(true, NS_CONTAINER, 0);
}

/* fork, then unshare() the alias or the four flags in the child. */
static double alias(int v)
{
	set_mode(PIDNS_ENFORCE);
	return spawn_ns(false, 0, v ? NS_CONTAINER : CLONE_NEWCONTAINER);
}

/*
 * The refused call, against what an accepted coupled unshare() adds to a
 * fork (fork+unshare+exit minus fork+exit, measured back to back).
 */
static double refusal(int v)
{
	set_mode(PIDNS_ENFORCE);
	if (!v)
		return refused_ns();
	return spawn_ns(false, 0, NS_CONTAINER) - spawn_ns(false, 0, 0);
}

/* A refused clone3(CLONE_NEWPID), against a clone3() that forks and exits */
static double refused_fork(int v)
{
	set_mode(PIDNS_ENFORCE);
	if (!v)
		return refused_clone_ns();
	return spawn_ns(true, 0, 0);
}

#define EVENT_ENABLE \
	"/sys/kernel/tracing/events/pidns_coupling/pidns_coupling_verdict/enable"

/* Switch the series' trace event on or off. */
static void set_event(int on)
{
	int fd = open(EVENT_ENABLE, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, on ? "1" : "0", 1) != 1) {
		perror("bench: " EVENT_ENABLE);
		exit(1);
	}
	close(fd);
}

/* The fork path with the trace event on and off: it has no tracepoint. */
static double event_fork(int v)
{
	double ns;

	set_mode(PIDNS_ENFORCE);
	set_event(v);
	ns = spawn_ns(false, 0, 0);
	set_event(0);
	return ns;
}

/* A refused request with and without its record (path lookup and all). */
static double event_refused(int v)
{
	double ns;

	set_mode(PIDNS_ENFORCE);
	set_event(v);
	ns = refused_ns();
	set_event(0);
	return ns;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r;
	ssize_t len;

	if (argc == 2 && !strcmp(argv[1], EXEC_MARK))
		_exit(0);
	if (argc > 3)
		min_ns = atof(argv[3]) * 1e6;
	if (argc < 2 || rounds < 1 || min_ns <= 0) {
		fprintf(stderr, "usage: bench base|knob ROUNDS [MS]\n");
		return 1;
	}
	if (strcmp(argv[1], "base") && strcmp(argv[1], "knob")) {
		fprintf(stderr, "bench: unknown measure %s\n", argv[1]);
		return 1;
	}
	len = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (len < 0) {
		perror("bench: /proc/self/exe");
		return 1;
	}
	self_exe[len] = '\0';

	/*
	 * The helper's PID namespace is created in enforce mode on the
	 * patched kernel (the default in base mode), so that none of its
	 * states is grandfathered.
	 */
	if (!strcmp(argv[1], "knob"))
		set_mode(PIDNS_ENFORCE);
	helper_start();

	/* Warm up caches and the emulator's translation blocks. */
	spawn_one(false, 0, 0);
	spawn_one(true, 0, 0);
	exec_one();

	for (r = 0; r < rounds; r++) {
		if (!strcmp(argv[1], "base")) {
			printf("fork base %.0f\n", spawn_ns(false, 0, 0));
			printf("clone3 base %.0f\n", spawn_ns(true, 0, 0));
			printf("exec base %.0f\n", exec_ns());
			printf("exec-pidns base %.0f\n", helper_exec_ns());
			fflush(stdout);
		} else {
			knob_series("fork", r, knob_fork);
			knob_series("clone3", r, knob_clone3);
			knob_series("exec", r, knob_exec);
			knob_series("exec-pidns", r, knob_exec_pidns);
			pair("clone3-four", "off", "enforce", r, knob_clone3_four);
			pair("unshare", "container", "four", r, alias);
			pair("request", "refused", "accepted", r, refusal);
			pair("refused-clone", "refused", "fork", r, refused_fork);
			pair("fork-event", "off", "on", r, event_fork);
			pair("refused-event", "off", "on", r, event_refused);
		}
	}
	helper_stop();
	if (!strcmp(argv[1], "knob"))
		set_mode(PIDNS_ENFORCE);
	return 0;
}
