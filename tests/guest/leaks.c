// SPDX-License-Identifier: GPL-2.0
/*
 * Nothing leaks, nothing is left inconsistent, after 100,000 refused
 * requests in enforce mode (clone, clone3, unshare and setns(pidfd) as
 * root and as uid 1000, and forks refused after setns() into a lone PID
 * namespace, which take and drop a reference on its init). The policy
 * judges a request after the permission checks and once its namespaces
 * are made, so its refusals make and free namespaces; uid 1000's requests
 * without a new user namespace get EPERM before the policy, and only the
 * policy's refusals are counted in kernel.pidns_coupling_stats:
 *   - the user.max_*_namespaces ucounts did not drift: with the limits
 *     set low, uid 1000 can hold exactly as many containers as before,
 *     and that is the limit;
 *   - the namespaces alive (distinct /proc/PID/ns inodes) are the same;
 *   - with pidns.kmemleak=1 (the debug kernel), a kmemleak scan reports
 *     nothing new.
 * The same checks cover the state checks' refusals (patch 4), made in
 * stage mode, n / 10 of each: execve() by an init that shares the host's
 * namespaces (EPERM, before the point of no return); setns() back to the
 * host's mount namespace alone (whose refusal drops a temporary
 * fs_struct), IPC and network namespaces by a member of a coupled
 * container (EPERM); and a second fork by an unsharer into its PID
 * namespace once its init exists, with the host's mount, IPC and network
 * namespaces, which belong to the initial PID namespace (EINVAL). That
 * the policy refused them, not a capability check or an LSM with the
 * same errno, is read in kernel.pidns_coupling_stats: each adds one to
 * its call's "refused" count (exec, enter, join).
 * Kernel command line: pidns.refusals=N (default 100000).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#define LIMIT		8	/* user.max_*_namespaces during the test */
#define HOLD_MAX	64
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

static const char *const limits[] = {
	"user", "pid", "mnt", "ipc", "net", "uts", "cgroup", "time",
};

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Distinct namespaces of each kind among all processes, summed. */
static long census(void)
{
	static ino_t seen[1 << 14];
	long count = 0, n = 0;
	struct dirent *d;
	DIR *proc = opendir("/proc");
	size_t i;

	if (!proc)
		return -1;
	while ((d = readdir(proc))) {
		ino_t ns[NS_MAX];

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		ns_read(d->d_name, ns);
		for (i = 0; i < ns_flags_count; i++) {
			long j;

			if (!ns[i])
				continue;
			for (j = 0; j < n && seen[j] != ns[i]; j++)
				;
			if (j == n && n < (long)(sizeof(seen) / sizeof(seen[0]))) {
				seen[n++] = ns[i];
				count++;
			}
		}
	}
	closedir(proc);
	return count;
}

/*
 * How many containers (CLONE_NEWUSER | CLONE_NEWCONTAINER and the other
 * namespaces) uid 1000 can hold at once: each is a process that waits.
 */
static int hold_containers(void)
{
	pid_t holders[HOLD_MAX];
	int held = 0, i, st;

	for (i = 0; i < HOLD_MAX; i++) {
		int ready[2];
		char ok = 0;

		if (pipe(ready) < 0)
			break;
		fflush(stdout);
		holders[i] = fork();
		if (holders[i] == 0) {
			uint64_t all = CLONE_NEWUSER | CLONE_NEWCONTAINER | CLONE_NEWUTS |
				       CLONE_NEWCGROUP | CLONE_NEWTIME;

			close(ready[0]);
			become_user(1000);
			ok = syscall(SYS_unshare, (unsigned long)all) == 0;
			if (write(ready[1], &ok, 1) != 1 || !ok)
				_exit(0);
			for (;;)
				pause();
		}
		close(ready[1]);
		if (holders[i] < 0 || read(ready[0], &ok, 1) != 1)
			ok = 0;
		close(ready[0]);
		if (!ok) {
			if (holders[i] > 0)
				waitpid(holders[i], &st, 0);
			break;
		}
		held++;
	}
	for (i = 0; i < held; i++) {
		kill(holders[i], SIGKILL);
		waitpid(holders[i], &st, 0);
	}
	return held;
}

/* Namespaces are freed asynchronously: wait until the count settles. */
static int hold_settled(int want)
{
	int got = -1, i;

	for (i = 0; i < 60; i++) {
		got = hold_containers();
		if (got == want)
			break;
		usleep(500000);
	}
	return got;
}

static long census_settled(long want)
{
	long got = -1;
	int i;

	for (i = 0; i < 60; i++) {
		got = census();
		if (got == want)
			break;
		usleep(500000);
	}
	return got;
}

static const uint64_t lone[] = {
	CLONE_NEWPID, CLONE_NEWPID | CLONE_NEWNS,
	CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET,
	CLONE_NEWPID | CLONE_NEWUSER, CLONE_NEWPID | CLONE_NEWUSER | CLONE_NEWNS |
	CLONE_NEWIPC | CLONE_NEWUTS,
};

/*
 * What request @i of refusals() gets, and whether the policy refuses it
 * (*@policy): EINVAL from the policy; EPERM before it for uid 1000
 * without a new user namespace, and for its setns() into root's container
 * (the fourth kind of call); and EINVAL before it for root's setns() with
 * CLONE_NEWUSER into a container of its own user namespace, which
 * setns(2) refuses (userns_install()).
 */
static int refusal_errno(long i, bool unpriv, bool *policy)
{
	bool join = (i / 5) % 4 == 3, user = lone[i % 5] & CLONE_NEWUSER;

	*policy = false;
	if (unpriv && (join || !user))
		return EPERM;
	*policy = !(join && user);
	return EINVAL;
}

/*
 * The refusals: @n requests, then (with a @pidns_fd) @n / 4 forks after
 * setns() to it. Each is refused by the policy with EINVAL, or, for a
 * caller without the permission (uid 1000 without a new user namespace,
 * or joining root's container), with EPERM before the policy judges it,
 * as without the series. Returns how many were not; *@policy counts the
 * refusals that are the policy's.
 */
static long refusals(long n, const struct target *t, int pidns_fd,
		     long *policy)
{
	long i, wrong = 0;
	pid_t pid;
	int st;

	bool unpriv = getuid() != 0;

	*policy = 0;
	for (i = 0; i < n; i++) {
		uint64_t flags = lone[i % 5];
		bool judged;
		int want = refusal_errno(i, unpriv, &judged);
		long r;

		*policy += judged;
		switch ((i / 5) % 4) {
		case 0:
			r = ns_clone(1, flags, NULL);
			break;
		case 1:
			r = ns_clone(0, flags, NULL);
			break;
		case 2:
			r = syscall(SYS_unshare, (unsigned long)flags);
			break;
		default:
			r = syscall(SYS_setns, t->pidfd, (int)flags);
			break;
		}
		if (r == 0)
			_exit(0);	/* a child that should not exist */
		if (r > 0) {
			waitpid((pid_t)r, &st, 0);
			wrong++;
		} else if (errno != want) {
			if (!wrong)
				tap_diag("request %ld, flags %#llx: %s, not %s", i,
					 (unsigned long long)flags, strerror(errno),
					 strerror(want));
			wrong++;
		}
	}
	if (pidns_fd < 0)
		return wrong;
	/* Forks into the target's PID namespace, from outside its init's. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long bad = 0;

		if (syscall(SYS_setns, pidns_fd, CLONE_NEWPID) < 0)
			_exit(100);
		for (i = 0; i < n / 4; i++) {
			pid_t c = fork();

			if (c == 0)
				_exit(0);
			if (c > 0) {
				waitpid(c, NULL, 0);
				bad++;
			} else if (errno != EINVAL) {
				bad++;
			}
		}
		_exit(bad ? 1 : 0);
	}
	if (ns_wait(pid) != 0)
		wrong++;
	*policy += n / 4;
	return wrong;
}

/* The policy's refusals of requests and forks counted so far */
static long policy_refused(void)
{
	return pidns_stats("clone", "refused") + pidns_stats("unshare", "refused") +
	       pidns_stats("setns", "refused") + pidns_stats("join", "refused");
}

/*
 * @n calls of @what (@name) by this process, each to be refused with @err:
 * how many were not. The first that was not is told.
 */
static long refused_n(const char *name, long n, int err, long (*what)(void *), void *arg)
{
	long i, bad = 0;

	for (i = 0; i < n; i++) {
		long r = what(arg);
		int e = errno;

		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		if (r < 0 && e == err)
			continue;
		if (!bad++)
			tap_diag("%s, call %ld: %s (want %s)", name, i,
				 r >= 0 ? "accepted" : strerror(e), strerror(err));
	}
	fflush(stdout);
	return bad;
}

/* An execve() that runs: this program again, which exits at once with 7. */
static long do_exec(void *arg)
{
	static char *const argv[] = { "leaks", "--exit", NULL };

	(void)arg;
	execve("/proc/self/exe", argv, environ);
	return -1;
}

static long do_setns(void *arg)
{
	const int *fd = arg;

	return syscall(SYS_setns, fd[0], fd[1]);
}

static long do_fork(void *arg)
{
	pid_t pid = fork();

	(void)arg;
	if (pid == 0)
		_exit(0);	/* a child that should not exist */
	return pid;
}

/* A child of the state refusals that did not end with 0: say how. */
static long child_failed(pid_t pid, const char *what)
{
	int st = ns_wait(pid);

	if (st == 0)
		return 0;
	tap_diag("%s: exit status %d (100-102: its setup failed)", what, st);
	return 1;
}

/*
 * The state checks' refusals, in stage mode: @n of each kind (see the top
 * of the file). Returns how many were not refused as they should be.
 */
static long state_refusals(long n)
{
	static const char *const calls[] = { "exec", "enter", "join" };
	const long want[] = { n, 3 * n, n };
	const uint64_t back = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;
	long wrong = 0, before[3];
	pid_t pid;
	size_t i;

	for (i = 0; i < 3; i++)
		before[i] = pidns_stats(calls[i], "refused");
	set_mode(PIDNS_STAGE);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long bad = 0;
		int done[2];
		char verdict = 1;
		pid_t init;

		if (pipe(done) < 0 || syscall(SYS_unshare, CLONE_NEWPID) < 0)
			_exit(100);
		/*
		 * The init shares mount, IPC and network with the host: its
		 * execve()s are refused. It stays, so that the unsharer's
		 * next forks are a joiner's, judged.
		 */
		init = fork();
		if (init == 0) {
			/* Not left in pause() if the unsharer dies early. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			verdict = refused_n("execve() by the init", n, EPERM,
					    do_exec, NULL) ? 1 : 0;
			if (write(done[1], &verdict, 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(done[1]);	/* an init that exec'd leaves an empty pipe */
		if (init < 0 || read(done[0], &verdict, 1) != 1 || verdict) {
			tap_diag("the init (%d) did not report all its execve() refused",
				 (int)init);
			bad++;
		}
		bad += refused_n("fork by the unsharer", n, EINVAL, do_fork, NULL);
		if (init > 0) {
			kill(init, SIGKILL);
			waitpid(init, NULL, 0);
		}
		_exit(bad ? 1 : 0);
	}
	wrong += child_failed(pid, "the unsharer");

	/* A member of a coupled container that setns()es back to the host. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd[NS_MAX][2], nfd = 0;
		pid_t member;

		/* The host's mount, IPC and network namespaces, from the flag table. */
		for (i = 0; i < ns_flags_count; i++) {
			char path[32];

			if (!(ns_flags[i].bit & back) || !ns_flags[i].nsfile)
				continue;
			snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_flags[i].nsfile);
			fd[nfd][0] = open(path, O_RDONLY | O_CLOEXEC);
			fd[nfd][1] = (int)ns_flags[i].bit;
			if (fd[nfd++][0] < 0)
				_exit(100);
		}
		if (nfd != 3)
			_exit(102);
		if (syscall(SYS_unshare, CLONE_NEWCONTAINER) < 0)
			_exit(101);
		member = fork();
		if (member == 0) {
			long bad = 0;

			for (i = 0; i < (size_t)nfd; i++)
				bad += refused_n("setns() back to the host", n, EPERM,
						 do_setns, fd[i]);
			_exit(bad ? 1 : 0);
		}
		_exit(member > 0 && ns_wait(member) == 0 ? 0 : 1);
	}
	wrong += child_failed(pid, "the container");
	set_mode(PIDNS_ENFORCE);
	/* The policy refused them: each counted once, as its call's. */
	for (i = 0; i < 3; i++) {
		long got = pidns_stats(calls[i], "refused") - before[i];

		if (before[i] < 0 || got != want[i]) {
			tap_diag("kernel.pidns_coupling_stats: %s refused grew by %ld, not %ld",
				 calls[i], before[i] < 0 ? -1 : got, want[i]);
			wrong++;
		}
	}
	return wrong;
}

static bool kmemleak_clean(char *first, size_t len)
{
	FILE *f;
	size_t n;

	/* Two scans: an object is reported once it stays unreferenced. */
	if (write_file(KMEMLEAK, "scan") < 0 || write_file(KMEMLEAK, "scan") < 0)
		return false;
	f = fopen(KMEMLEAK, "re");
	if (!f)
		return false;
	n = fread(first, 1, len - 1, f);
	fclose(f);
	first[n] = '\0';
	return n == 0;
}

/*
 * Set user.max_*_namespaces to @limit (the user namespaces' to twice it:
 * each container's holder has one of its own), or bail out.
 */
static void set_limits(long limit)
{
	char path[64], value[24];
	size_t i;

	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		snprintf(path, sizeof(path), "/proc/sys/user/max_%s_namespaces",
			 limits[i]);
		snprintf(value, sizeof(value), "%ld", i == 0 ? 2 * limit : limit);
		if (write_file(path, value) < 0) {
			printf("Bail out! cannot set %s\n", path);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	long n = (long)cmdline_u64("pidns.refusals=", 100000), wrong, before, after;
	bool kmemleak = cmdline_u64("pidns.kmemleak=", 0) == 1;
	int held_before, held_after, pidns_fd, uid_wrong;
	long counted, policy;
	char path[64], report[2048];
	struct target t;
	size_t i;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		_exit(7);
	printf("TAP version 13\n");
	set_mode(PIDNS_ENFORCE);
	if (kmemleak) {
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
		if (write_file(KMEMLEAK, "clear") < 0) {
			printf("Bail out! pidns.kmemleak=1 but %s is not usable: %s\n",
			       KMEMLEAK, strerror(errno));
			return 1;
		}
	}
	set_limits(LIMIT);
	/* A coupled container whose PID namespace the refused forks aim at. */
	target_start(&t, CLONE_NEWCONTAINER, NULL);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)t.pid);
	pidns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pidns_fd < 0) {
		printf("Bail out! open %s: %s\n", path, strerror(errno));
		return 1;
	}

	held_before = hold_containers();
	tap_case(held_before == LIMIT,
		 "uid 1000 holds %d containers at user.max_*_namespaces=%d", held_before, LIMIT);
	before = census();
	tap_diag("namespaces alive before: %ld", before);

	/*
	 * A refused request has made its namespaces, which are freed after
	 * an RCU grace period or by a work item: with the limits at LIMIT a
	 * loop of refusals would meet ENOSPC. Room for them, then LIMIT
	 * again for the count of containers after.
	 */
	set_limits(100000);
	counted = policy_refused();
	wrong = refusals(n, &t, pidns_fd, &policy);
	counted = policy_refused() - counted;
	tap_case(wrong == 0 && counted == policy,
		 "root: %ld requests and %ld forks refused with EINVAL (%ld were not), %ld counted as the policy's (%ld expected: not the setns() that setns(2) refuses itself)",
		 n, n / 4, wrong, counted, policy);
	fflush(stdout);
	counted = policy_refused();
	pid = fork();
	if (pid == 0) {
		become_user(1000);
		_exit(refusals(n, &t, -1, &policy) ? 1 : 0);
	}
	uid_wrong = ns_wait(pid);
	counted = policy_refused() - counted;
	/* The same requests, counted in this process */
	policy = 0;
	for (i = 0; i < (size_t)n; i++) {
		bool judged;

		refusal_errno((long)i, true, &judged);
		policy += judged;
	}
	tap_case(uid_wrong == 0 && counted == policy,
		 "uid 1000: %ld requests refused, with EINVAL by the policy where a new user namespace gives the permission, with EPERM before it otherwise; %ld counted as the policy's (%ld expected)",
		 n, counted, policy);
	set_limits(LIMIT);

	wrong = state_refusals(n / 10);
	tap_case(wrong == 0, "stage mode: %ld execve() by an init with the host's namespaces, "
		 "%ld setns() back to the host's mnt, ipc and net by a member (EPERM), "
		 "%ld forks by an unsharer into its PID namespace (EINVAL): all refused, "
		 "and counted in kernel.pidns_coupling_stats as the policy's",
		 n / 10, 3 * (n / 10), n / 10);

	held_after = hold_settled(held_before);
	tap_case(held_after == held_before,
		 "ucounts did not drift: uid 1000 still holds %d containers (before: %d)",
		 held_after, held_before);
	after = census_settled(before);
	tap_case(after == before, "namespaces alive after: %ld (before: %ld)", after, before);

	if (kmemleak) {
		bool clean = kmemleak_clean(report, sizeof(report));

		tap_case(clean, "kmemleak: no unreferenced object after %ld refusals",
			 2 * n + n / 4 + 5 * (n / 10));
		if (!clean) {
			char *line = strtok(report, "\n");

			for (i = 0; line && i < 20; i++, line = strtok(NULL, "\n"))
				tap_diag("%s", line);
		}
	}
	target_stop(&t);
	close(pidns_fd);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
