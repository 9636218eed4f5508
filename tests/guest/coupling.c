// SPDX-License-Identifier: GPL-2.0
/*
 * coupling: the kernel.pidns_coupling policy through clone(), clone3(),
 * unshare() and setns() with a pidfd, in every mode, as root and as an
 * unprivileged user. Runs as root in the guest; prints TAP.
 *
 * Each case runs in a forked "case process" so that unshare() and setns()
 * never change the runner. Results come back through a shared page.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

enum call { CALL_CLONE, CALL_CLONE3, CALL_UNSHARE, CALL_SETNS };

static const char *const call_names[] = {
	[CALL_CLONE] = "clone",
	[CALL_CLONE3] = "clone3",
	[CALL_UNSHARE] = "unshare",
	[CALL_SETNS] = "setns(pidfd)",
};

/* Filled in by the case process and its children. */
struct result {
	int call_errno;		/* errno of the call, 0 if it succeeded */
	int checked;		/* the namespace check ran */
	char problem[256];	/* what the namespace check found wrong */
};

static struct result *res;
static ino_t ns_runner[NS_MAX];	/* the runner's namespaces */
static struct target target;	/* for setns(): a container's init */

static void __attribute__((format(printf, 1, 2)))
problem(const char *fmt, ...)
{
	va_list ap;

	if (res->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(res->problem, sizeof(res->problem), fmt, ap);
	va_end(ap);
}

/*
 * In the new process: the namespaces in @fresh are new (differ from the
 * runner's) or, with @join, are the target's; all others are the runner's.
 * With @pid1 the process must be pid 1 of its PID namespace.
 */
static int check_ns(uint64_t fresh, bool join, bool pid1)
{
	ino_t now[NS_MAX];
	size_t i;

	ns_read("self", now);
	res->checked = 1;
	if (pid1 && getpid() != 1)
		problem("getpid() is not 1");
	for (i = 0; i < ns_flags_count; i++) {
		const char *f = ns_flags[i].nsfile;

		if (!f)
			continue;
		if (!now[i]) {
			problem("/proc/self/ns/%s missing", f);
		} else if (!(fresh & ns_flags[i].bit)) {
			if (now[i] != ns_runner[i])
				problem("%s namespace changed but was not asked for", f);
		} else if (join) {
			if (now[i] != target.ns[i])
				problem("%s namespace is not the target's", f);
		} else if (now[i] == ns_runner[i]) {
			problem("%s namespace is not new", f);
		}
	}
	return res->problem[0] ? 1 : 0;
}

/* Fork, let the child check its namespaces, and wait for it. */
static void fork_and_check(uint64_t fresh, bool join, bool pid1)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		problem("fork after the call failed: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		_exit(check_ns(fresh, join, pid1));
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status))
		problem("checking child died");
}

/* The case process: make the call, then check the namespaces. */
static void __attribute__((noreturn))
do_call(enum call call, uint64_t flags, uid_t uid)
{
	uint64_t want = ns_expand(flags);
	pid_t pid;
	int status;

	if (uid && (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)) {
		problem("cannot become uid %s", "1000");
		_exit(1);
	}
	switch (call) {
	case CALL_CLONE:
	case CALL_CLONE3:
		pid = raw_clone(call == CALL_CLONE3, flags);
		if (pid < 0) {
			res->call_errno = errno;
			_exit(0);
		}
		if (pid == 0)
			_exit(check_ns(want, false, want & CLONE_NEWPID));
		waitpid(pid, &status, 0);
		break;
	case CALL_UNSHARE:
		if (unshare((int)flags) < 0) {
			res->call_errno = errno;
			_exit(0);
		}
		fork_and_check(want, false, want & CLONE_NEWPID);
		break;
	case CALL_SETNS:
		if (setns(target.pidfd, (int)flags) < 0) {
			res->call_errno = errno;
			_exit(0);
		}
		fork_and_check(want, true, false);
		break;
	}
	_exit(0);
}

/* Run one request in a case process; fill *res. Returns false if it died. */
static bool run(enum call call, uint64_t flags, uid_t uid)
{
	pid_t pid;
	int status;

	memset(res, 0, sizeof(*res));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
		do_call(call, flags, uid);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return false;
	return true;
}

/*
 * One TAP case: @call with @flags as @uid must fail with @want_errno, or
 * succeed (0) and produce the namespaces asked for.
 */
static void expect(enum call call, uint64_t flags, uid_t uid, int want_errno,
		   const char *mode)
{
	char names[256];
	bool ok;

	ns_flags_str(flags, "|", "|", names, sizeof(names));
	ok = run(call, flags, uid);
	if (ok && want_errno)
		ok = res->call_errno == want_errno;
	else if (ok)
		ok = !res->call_errno && res->checked && !res->problem[0];
	tap_case(ok, "%s: %s(%s)%s %s", mode, call_names[call], names,
		 uid ? " as uid 1000" : "",
		 want_errno ? strerror(want_errno) : "accepted");
	if (!ok)
		tap_diag("got errno %d (%s), checked %d, problem: %s",
			 res->call_errno, strerror(res->call_errno),
			 res->checked, res->problem[0] ? res->problem : "none");
}

/* The log line of warn and enforce modes names the task and what is missing. */
static void log_case(int mode, const char *comm, uint64_t flags,
		     const char *text)
{
	char line[256];
	pid_t pid;
	int status;

	set_mode(mode);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, comm);
		_exit(unshare((int)flags) < 0 ? errno : 0);
	}
	waitpid(pid, &status, 0);
	snprintf(line, sizeof(line), "pidns_coupling: %s[%d]: %s", comm,
		 (int)pid, text);
	tap_case(WIFEXITED(status) &&
		 WEXITSTATUS(status) == (mode == PIDNS_ENFORCE ? EINVAL : 0) &&
		 klog_has(line), "%s mode logs \"%s\"", pidns_mode_name(mode),
		 line);
}

static void policy_cases(int mode)
{
	const enum call calls[] = { CALL_CLONE, CALL_CLONE3, CALL_UNSHARE,
				    CALL_SETNS };
	const char *name = pidns_mode_name(mode);
	size_t c;
	uint64_t sub;

	set_mode(mode);
	for (c = 0; c < sizeof(calls) / sizeof(*calls); c++) {
		/* Every subset of the coupled flags, with CLONE_NEWPID. */
		for (sub = 0; sub < 8; sub++) {
			uint64_t flags = CLONE_NEWPID;
			size_t bit = 0, i;

			for (i = 0; i < ns_flags_count; i++) {
				if (!(NS_COUPLED & ns_flags[i].bit))
					continue;
				if (sub & (1u << bit++))
					flags |= ns_flags[i].bit;
			}
			expect(calls[c], flags, 0,
			       mode == PIDNS_ENFORCE && ns_missing(flags) ?
			       EINVAL : 0, name);
		}
		/* The alias, where it exists: not in legacy clone(). */
		if (calls[c] != CALL_CLONE)
			expect(calls[c], CLONE_NEWCONTAINER, 0, 0, name);
	}

	/* Unprivileged: only through a user namespace. */
	expect(CALL_CLONE3, CLONE_NEWUSER | CLONE_NEWPID, 1000,
	       mode == PIDNS_ENFORCE ? EINVAL : 0, name);
	expect(CALL_UNSHARE, CLONE_NEWUSER | CLONE_NEWPID, 1000,
	       mode == PIDNS_ENFORCE ? EINVAL : 0, name);
	expect(CALL_CLONE3, CLONE_NEWUSER | CLONE_NEWCONTAINER, 1000, 0, name);
	expect(CALL_UNSHARE, CLONE_NEWUSER | CLONE_NEWCONTAINER, 1000, 0, name);
	expect(CALL_CLONE3, CLONE_NEWUSER | NS_CONTAINER, 1000, 0, name);
	/*
	 * Permission before the policy: without a user namespace uid 1000
	 * gets EPERM in every mode, as without the series.
	 */
	expect(CALL_UNSHARE, CLONE_NEWPID, 1000, EPERM, name);
	expect(CALL_CLONE3, CLONE_NEWPID, 1000, EPERM, name);
	expect(CALL_UNSHARE, CLONE_NEWCONTAINER, 1000, EPERM, name);
}

/* Namespaces other than PID combine as before; old errors stay. */
static void unchanged_cases(void)
{
	const char *name = "enforce";
	const uint64_t threads = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
	int nsfd;

	set_mode(PIDNS_ENFORCE);
	expect(CALL_CLONE3, CLONE_NEWUTS, 0, 0, name);
	expect(CALL_CLONE3, CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET, 0, 0, name);
	expect(CALL_CLONE, CLONE_NEWNET | CLONE_NEWUTS, 0, 0, name);
	expect(CALL_UNSHARE, CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC, 0, 0, name);
	expect(CALL_UNSHARE, CLONE_NEWTIME, 0, 0, name);
	expect(CALL_CLONE3, CLONE_NEWTIME | CLONE_NEWCONTAINER, 0, 0, name);
	expect(CALL_CLONE3, CLONE_NEWCONTAINER | CLONE_NEWUTS | CLONE_NEWCGROUP, 0, 0, name);

	/* Errors that came before the policy existed. */
	expect(CALL_CLONE3, NS_CONTAINER | threads, 0, EINVAL, name);
	expect(CALL_CLONE3, CLONE_NEWCONTAINER | CLONE_FS, 0, EINVAL, name);
	expect(CALL_CLONE3, CLONE_NEWUSER | CLONE_NEWCONTAINER | CLONE_FS, 0, EINVAL, name);
	expect(CALL_UNSHARE, CLONE_NEWCONTAINER | CLONE_IO, 0, EINVAL, name);
	expect(CALL_CLONE3, (uint64_t)1 << 40 | CLONE_NEWCONTAINER, 0, EINVAL, name);

	tap_case(setns(-1, CLONE_NEWCONTAINER) < 0 && errno == EBADF,
		 "enforce: setns(-1, CLONE_NEWCONTAINER) Bad file descriptor");
	nsfd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	tap_case(nsfd >= 0 && setns(nsfd, CLONE_NEWCONTAINER) < 0 &&
		 errno == EINVAL,
		 "enforce: setns(pid namespace fd, CLONE_NEWCONTAINER) Invalid argument");
	if (nsfd >= 0)
		close(nsfd);
}

/* Root of a user namespace: uid 0 maps to global root, but no capability. */
static int userns_root_write(void)
{
	int fd;

	if (unshare(CLONE_NEWUSER) < 0)
		return 100;
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, "0 0 1", 5) != 5)
		return 101;
	close(fd);
	return -write_sysctl("0");
}

static void knob_cases(void)
{
	const char *bad[] = { "4", "-1", "abc", "99999999999" };
	size_t i;
	pid_t pid;
	int status, r;

	set_mode(PIDNS_ENFORCE);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		r = write_sysctl(bad[i]);
		tap_case(r == -EINVAL && pidns_mode_read() == PIDNS_ENFORCE,
			 "knob: writing \"%s\" fails with EINVAL and keeps 2 (got %d, now %d)",
			 bad[i], r, pidns_mode_read());
	}
	r = write_sysctl("1");
	tap_case(!r && pidns_mode_read() == PIDNS_WARN,
		 "knob: root writes 1 and reads it back");
	r = write_sysctl("3");
	tap_case(!r && pidns_mode_read() == PIDNS_STAGE,
		 "knob: root writes 3 (stage) and reads it back");
	set_mode(PIDNS_ENFORCE);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(100);
		_exit(-write_sysctl("0"));
	}
	waitpid(pid, &status, 0);
	tap_case(WIFEXITED(status) && WEXITSTATUS(status) == EACCES &&
		 pidns_mode_read() == PIDNS_ENFORCE,
		 "knob: uid 1000 cannot write it (EACCES, value kept)");

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(userns_root_write());
	waitpid(pid, &status, 0);
	tap_case(WIFEXITED(status) && WEXITSTATUS(status) == EPERM &&
		 pidns_mode_read() == PIDNS_ENFORCE,
		 "knob: root of a user namespace cannot write it (EPERM, value kept; exit %d)",
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void)
{
	int expected = PIDNS_ENFORCE;

	printf("TAP version 13\n");
	res = shared_alloc(sizeof(*res));
	ns_read("self", ns_runner);

	tap_case(pidns_mode_read() == expected,
		 "knob: kernel.pidns_coupling boots as %d (CONFIG_PID_NS_COUPLING_DEFAULT)",
		 expected);

	/* First, while the rate limit has not been touched. */
	log_case(PIDNS_WARN, "pidns-warn", CLONE_NEWPID | CLONE_NEWNS,
		 "CLONE_NEWPID without CLONE_NEWIPC CLONE_NEWNET: allowed (kernel.pidns_coupling=1)");
	log_case(PIDNS_ENFORCE, "pidns-refuse", CLONE_NEWPID,
		 "CLONE_NEWPID without CLONE_NEWNS CLONE_NEWIPC CLONE_NEWNET: refused (kernel.pidns_coupling=2)");

	target_start(&target, CLONE_NEWCONTAINER, NULL);
	policy_cases(PIDNS_ENFORCE);
	policy_cases(PIDNS_WARN);
	policy_cases(PIDNS_OFF);
	unchanged_cases();
	knob_cases();

	target_stop(&target);
	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
