// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what the coupling policy costs, as ratios of times measured side
 * by side in one boot. Not a test: it prints measurements for tests/bench.
 *
 *   bench base ROUNDS [MS]   fork+exit+wait and clone3() with no namespace
 *                            flags, ns per call, one line per round (run on
 *                            the patched and the unpatched kernel)
 *   bench knob ROUNDS [MS]   interleaved rounds, in one boot, of
 *                            - fork and clone3() with the knob at 0 and at 2
 *                            - clone3() with the four flags at 0 and at 2
 *                            - unshare(CLONE_NEWCONTAINER) vs the four flags
 *                            - a refused request vs an accepted coupled one
 *
 * Each measure runs for at least MS milliseconds of guest time (default
 * 1000; under QEMU's -icount, where guest time counts instructions and is
 * exact, 100 is plenty).
 *
 * Output lines: "<measure> <variant> <ns per call>", one per round and
 * variant; the order of the variants alternates between rounds so that a
 * drift in the emulator's speed does not favour either.
 */
#include <errno.h>
#include <fcntl.h>
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

/* A refused request changes nothing: no throwaway child needed. */
static double refused_ns(void)
{
	double t0 = now_ns(), t;
	long n = 0, i;

	do {
		for (i = 0; i < 1000; i++) {
			if (unshare(CLONE_NEWPID) == 0 || errno != EINVAL) {
				fprintf(stderr, "bench: unshare(CLONE_NEWPID) was not refused\n");
				exit(1);
			}
		}
		n += 1000;
		t = now_ns() - t0;
	} while (t < MIN_NS);
	return t / n;
}

static void pair(const char *measure, const char *a, const char *b,
		 int round, double (*run)(int variant))
{
	double va, vb;

	if (round % 2) {
		vb = run(1);
		va = run(0);
	} else {
		va = run(0);
		vb = run(1);
	}
	printf("%s %s %.0f\n%s %s %.0f\n", measure, a, va, measure, b, vb);
	fflush(stdout);
}

static double knob_fork(int v)
{
	set_mode(v ? PIDNS_ENFORCE : PIDNS_OFF);
	return spawn_ns(false, 0, 0);
}

static double knob_clone3(int v)
{
	set_mode(v ? PIDNS_ENFORCE : PIDNS_OFF);
	return spawn_ns(true, 0, 0);
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

	if (argc > 3)
		min_ns = atof(argv[3]) * 1e6;
	if (argc < 2 || rounds < 1 || min_ns <= 0) {
		fprintf(stderr, "usage: bench base|knob ROUNDS [MS]\n");
		return 1;
	}
	/* Warm up caches and the emulator's translation blocks. */
	spawn_one(false, 0, 0);
	spawn_one(true, 0, 0);

	for (r = 0; r < rounds; r++) {
		if (!strcmp(argv[1], "base")) {
			printf("fork base %.0f\n", spawn_ns(false, 0, 0));
			printf("clone3 base %.0f\n", spawn_ns(true, 0, 0));
			fflush(stdout);
		} else if (!strcmp(argv[1], "knob")) {
			pair("fork", "off", "enforce", r, knob_fork);
			pair("clone3", "off", "enforce", r, knob_clone3);
			pair("clone3-four", "off", "enforce", r, knob_clone3_four);
			pair("unshare", "container", "four", r, alias);
			pair("request", "refused", "accepted", r, refusal);
			pair("fork-event", "off", "on", r, event_fork);
			pair("refused-event", "off", "on", r, event_refused);
		} else {
			fprintf(stderr, "bench: unknown measure %s\n", argv[1]);
			return 1;
		}
	}
	if (!strcmp(argv[1], "knob"))
		set_mode(PIDNS_ENFORCE);
	return 0;
}
