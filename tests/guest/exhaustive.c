// SPDX-License-Identifier: GPL-2.0
/*
 * Every subset of the nine namespace flags (the eight namespaces and
 * CLONE_NEWCONTAINER: 512) through clone(), clone3(), unshare() and
 * setns(pidfd), in each mode of kernel.pidns_coupling (0 to 3), as root
 * and as uid 1000, compared with the oracle (oracle.c), which knows only
 * the documentation. Every success is also checked namespace by namespace:
 * the new task's /proc/self/ns inodes must differ from the caller's
 * exactly where the request asked for a new namespace (or, for setns,
 * equal the target's exactly where it asked to join). The policy's state
 * checks are compared too: the caller's fork after unshare() and setns()
 * (refused or not), and an execve() of this program by the new task when
 * it is in a PID namespace other than the initial one (in the initial one
 * execve() is not judged, and the test saves the time).
 *
 * One TAP line per (call, mode, user) group: its cases, accepted and
 * refused counts, the forks and execve() calls refused after an accepted
 * request, and mismatches, every one listed. On a kernel without the
 * series (no kernel.pidns_coupling) only mode 0 exists, and the oracle
 * is told the kernel has no CLONE_NEWCONTAINER.
 *
 * Each case runs in a fresh worker process (unshare() and setns() change
 * their caller), which forks the child that reads its namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "oracle.h"
#include "tap.h"

#define UNPRIV_UID	1000
#define SUBSETS		(1U << 9)

/* argv[1] of the execve() probe, and what the new image exits with */
#define EXEC_PROBE	"--exec-probe"
#define EXEC_PROBE_OK	42

#ifndef __WALL
#define __WALL		0x40000000
#endif

/* What a worker found, in memory shared with the driver. */
struct result {
	int done;		/* the worker got to the end */
	int err;		/* errno of the call, 0 on success */
	int fork_err;		/* errno of the fork after unshare/setns */
	int child_ok;		/* the child read its namespaces */
	int exec_tried;		/* the child is in a new PID namespace: execve() */
	int exec_err;		/* errno of its execve(), 0 if it ran */
	int child_status;	/* the child's exit status, 128 + signal */
	ino_t ns[NS_MAX];	/* the child's, indexed like ns_flags[] */
};

static struct result *res;
static ino_t host_ns[NS_MAX];
static int ix_pid = -1;		/* the pid entry of ns_flags[] */

struct nstarget {
	pid_t pid, helper;
	int pidfd;
	int mode;		/* kernel.pidns_coupling when it was made */
	ino_t ns[NS_MAX];
};

/* The subset @n: bit i of @n is ns_flags[i]. */
static uint64_t subset(unsigned int n)
{
	uint64_t flags = 0;
	size_t i;

	for (i = 0; i < ns_flags_count; i++)
		if (n & (1U << i))
			flags |= ns_flags[i].bit;
	return flags;
}

static pid_t do_clone(enum oracle_call call, uint64_t flags)
{
	struct clone_args args = { .flags = flags, .exit_signal = SIGCHLD };

	if (call == ORACLE_CLONE)
		return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD,
				      NULL, NULL, NULL, 0UL);
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/*
 * The new task: its namespaces, then, in a PID namespace other than the
 * initial one, an execve() of this program, which exits EXEC_PROBE_OK at
 * once (main()). A refused execve() returns, before the point of no return.
 */
static void child_report(void)
{
	char *const argv[] = { "exhaustive", EXEC_PROBE, NULL };

	ns_read("self", res->ns);
	res->child_ok = 1;
	if (res->ns[ix_pid] == host_ns[ix_pid])
		_exit(0);
	res->exec_tried = 1;
	execv("/proc/self/exe", argv);
	res->exec_err = errno;
	_exit(0);
}

/* Wait for the worker's child: its exit status or 128 + signal. */
static void child_wait(pid_t pid, int flags)
{
	int status;

	if (waitpid(pid, &status, flags) < 0)
		res->child_status = -1;
	else if (WIFEXITED(status))
		res->child_status = WEXITSTATUS(status);
	else
		res->child_status = 128 + WTERMSIG(status);
}

static void worker(enum oracle_call call, uint64_t flags, bool unpriv, int pidfd)
{
	pid_t pid;
	long r = 0;

	alarm(20);
	if (unpriv)
		become_user(UNPRIV_UID);
	switch (call) {
	case ORACLE_CLONE:
	case ORACLE_CLONE3:
		pid = do_clone(call, flags);
		if (pid < 0) {
			res->err = errno;
			break;
		}
		if (pid == 0)
			child_report();
		child_wait(pid, __WALL);
		break;
	case ORACLE_UNSHARE:
	case ORACLE_SETNS:
		if (call == ORACLE_UNSHARE)
			r = syscall(SYS_unshare, (unsigned long)flags);
		else
			r = syscall(SYS_setns, pidfd, (int)flags);
		if (r < 0) {
			res->err = errno;
			break;
		}
		pid = fork();
		if (pid < 0) {
			res->fork_err = errno;
			break;
		}
		if (pid == 0)
			child_report();
		child_wait(pid, 0);
		break;
	default:
		_exit(91);
	}
	res->done = 1;
	_exit(0);
}

/*
 * A setns() target in new namespaces of every kind, created by root or by
 * uid 1000 (through a helper that drops to it and stays, so that the
 * target's user namespace belongs to uid 1000).
 */
static void nstarget_start(struct nstarget *t, bool unpriv)
{
	uint64_t all = 0;
	int pipefd[2];
	char path[24];
	size_t i;

	for (i = 0; i < ns_flags_count; i++)
		if (ns_flags[i].nsfile)
			all |= ns_flags[i].bit;
	if (pipe(pipefd) < 0) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	t->helper = fork();
	if (t->helper == 0) {
		pid_t pid;

		if (unpriv)
			become_user(UNPRIV_UID);
		pid = do_clone(ORACLE_CLONE3, all);
		if (pid == 0) {
			for (;;)
				pause();
		}
		if (write(pipefd[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (t->helper < 0 || read(pipefd[0], &t->pid, sizeof(t->pid)) != sizeof(t->pid) ||
	    t->pid <= 0) {
		printf("Bail out! cannot start a %s setns target\n", unpriv ? "uid 1000" : "root");
		exit(1);
	}
	close(pipefd[0]);
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (t->pidfd < 0) {
		printf("Bail out! pidfd_open: %s\n", strerror(errno));
		exit(1);
	}
	t->mode = pidns_mode_read();
	snprintf(path, sizeof(path), "%d", (int)t->pid);
	ns_read(path, t->ns);
	for (i = 0; i < ns_flags_count; i++) {
		if (ns_flags[i].nsfile && (!t->ns[i] || t->ns[i] == host_ns[i])) {
			printf("Bail out! the setns target is not in a new %s namespace\n",
			       ns_flags[i].nsfile);
			exit(1);
		}
	}
}

static void nstarget_stop(struct nstarget *t)
{
	kill(t->pid, SIGKILL);
	kill(t->helper, SIGKILL);
	waitpid(t->helper, NULL, 0);
	close(t->pidfd);
}

static const char *err_name(int err)
{
	static char buf[16];

	switch (err) {
	case 0: return "success";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case ENOSPC: return "ENOSPC";
	case EUSERS: return "EUSERS";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

/*
 * Run one case; on a mismatch, describe it in @why and return false.
 */
static bool run_case(const struct oracle_case *c, const struct nstarget *t,
		     struct oracle_verdict *want, char *why, size_t len)
{
	pid_t pid;
	int status;
	size_t i;

	*want = oracle(c);
	memset(res, 0, sizeof(*res));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork of the worker: %s", strerror(errno));
		return false;
	}
	if (pid == 0)
		worker(c->call, c->flags, c->unpriv, t->pidfd);
	status = ns_wait(pid);
	if (status != 0 || !res->done) {
		snprintf(why, len, "the worker failed (status %d)", status);
		return false;
	}
	if (res->err != want->err) {
		snprintf(why, len, "got %s, oracle says %s", err_name(res->err),
			 err_name(want->err));
		return false;
	}
	if (want->err)
		return true;
	if (res->fork_err != want->fork_err) {
		snprintf(why, len, "accepted, then the fork got %s, oracle says %s",
			 err_name(res->fork_err), err_name(want->fork_err));
		return false;
	}
	if (want->fork_err)
		return true;
	if (!res->child_ok) {
		snprintf(why, len, "accepted, but the child after it did not report");
		return false;
	}
	for (i = 0; i < ns_flags_count; i++) {
		const struct ns_flag *f = &ns_flags[i];
		bool asked = want->ns & f->bit, ok;

		if (!f->nsfile)
			continue;
		if (!asked)
			ok = res->ns[i] == host_ns[i];
		else if (c->call == ORACLE_SETNS)
			ok = res->ns[i] == t->ns[i];
		else
			ok = res->ns[i] && res->ns[i] != host_ns[i];
		if (!ok) {
			snprintf(why, len, "accepted, but the %s namespace is %s",
				 f->nsfile, asked ? (c->call == ORACLE_SETNS ?
				 "not the target's" : "not new") : "not the caller's");
			return false;
		}
	}
	/* Only a child in a new PID namespace tries execve(). */
	if (res->exec_tried && !res->exec_err &&
	    res->child_status != EXEC_PROBE_OK) {
		snprintf(why, len, "accepted, but the child's execve() ended with status %d",
			 res->child_status);
		return false;
	}
	if (res->exec_tried && res->exec_err != want->exec_err) {
		snprintf(why, len, "accepted, then execve() got %s, oracle says %s",
			 err_name(res->exec_err), err_name(want->exec_err));
		return false;
	}
	return true;
}

static void run_group(enum oracle_call call, int mode, bool alias, bool unpriv,
		      const struct nstarget *t)
{
	unsigned int n, mismatches = 0, accepted = 0, refused = 0;
	unsigned int forks = 0, execs = 0;
	/* The rule's verdicts on this call, counted as the oracle says */
	const char *counter = call == ORACLE_UNSHARE ? "unshare" :
			      call == ORACLE_SETNS ? "setns" : "clone";
	long before = pidns_judged(counter);
	long counted = 0, got = 0;
	char why[160], flags[256];

	for (n = 0; n < SUBSETS; n++) {
		struct oracle_case c = {
			.call = call, .flags = subset(n), .mode = mode,
			.alias = alias, .unpriv = unpriv,
			.target_mode = t->mode,
		};
		struct oracle_verdict want;

		if (run_case(&c, t, &want, why, sizeof(why))) {
			counted += want.counted;
			if (want.err)
				refused++;
			else
				accepted++;
			forks += !want.err && want.fork_err;
			execs += !want.err && want.exec_err;
			continue;
		}
		mismatches++;
		tap_diag("mismatch: %s(%s) mode %d %s: %s", oracle_call_name(call),
			 ns_flags_str(c.flags, "|", "|", flags, sizeof(flags)),
			 mode, unpriv ? "uid 1000" : "root", why);
	}
	/*
	 * Only what the rule judged is counted: a request refused for another
	 * reason (EPERM without a user namespace) is not, in any mode.
	 */
	if (alias) {
		got = pidns_judged(counter) - before;
		if (got != counted) {
			tap_diag("kernel.pidns_coupling_stats: %s grew by %ld, the oracle says %ld",
				 counter, got, counted);
			mismatches++;
		}
	}
	tap_case(mismatches == 0,
		 "%s, mode %d (%s)%s, %s: %u cases, %u accepted (then %u forks and %u execve() refused), %u refused, %ld counted as the rule's, %u mismatches",
		 oracle_call_name(call), mode, pidns_mode_name(mode),
		 alias ? "" : " on the unpatched kernel", unpriv ? "uid 1000" : "root",
		 SUBSETS, accepted, forks, execs, refused, got, mismatches);
}

/*
 * NS_GET_PIDNS_OWNER (ioctl_ns(2)): on the caller's network namespace, its
 * owner, and on its PID namespace, the PID namespace itself, with the
 * series; on a UTS namespace, which has no owner, EINVAL with the series;
 * ENOTTY on all three without it.
 */
static void owner_ioctl_case(bool patched)
{
	static const char *const files[] = { "net", "pid", "uts" };
	static const int want[] = { 0, 0, EINVAL };
	char path[32], got[64] = "";
	struct ns_pidns_owner o;
	bool ok = true;
	size_t i;

	for (i = 0; i < 3; i++) {
		int fd, e, w = patched ? want[i] : ENOTTY;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		e = fd < 0 ? EBADF : ioctl(fd, NS_GET_PIDNS_OWNER, &o) ? errno : 0;
		ok = ok && e == w;
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
			 i ? ", " : "", e ? strerrorname_np(e) : "0");
		if (fd >= 0)
			close(fd);
	}
	tap_case(ok,
		 "NS_GET_PIDNS_OWNER%s: on a network, a PID and a UTS namespace %s (got %s)",
		 patched ? "" : " on the unpatched kernel",
		 patched ? "0, 0, EINVAL" : "ENOTTY, ENOTTY, ENOTTY", got);
}

int main(int argc, char **argv)
{
	int modes[] = { PIDNS_OFF, PIDNS_WARN, PIDNS_ENFORCE, PIDNS_STAGE };
	int start_mode, nmodes = 4, m, u, call;
	struct nstarget targets[2];
	bool alias;
	size_t i;
	FILE *f;

	/* The new image of child_report()'s execve(): it ran, that is all. */
	if (argc > 1 && !strcmp(argv[1], EXEC_PROBE))
		_exit(EXEC_PROBE_OK);

	start_mode = pidns_mode_read();
	alias = start_mode != PIDNS_ABSENT;
	printf("TAP version 13\n");
	for (i = 0; i < ns_flags_count; i++)
		if (ns_flags[i].nsfile && !strcmp(ns_flags[i].nsfile, "pid"))
			ix_pid = (int)i;
	if (ix_pid < 0) {
		printf("Bail out! the flag table lacks pid\n");
		return 1;
	}
	res = shared_alloc(sizeof(*res));
	/* Debian's switch for unprivileged user namespaces must be on. */
	f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "re");
	if (f) {
		int on = 0;

		if (fscanf(f, "%d", &on) != 1 || on != 1) {
			printf("Bail out! kernel.unprivileged_userns_clone is not 1\n");
			return 1;
		}
		fclose(f);
	}
	ns_read("self", host_ns);
	if (!alias)
		nmodes = 1;
	else
		set_mode(PIDNS_ENFORCE);
	nstarget_start(&targets[0], false);
	nstarget_start(&targets[1], true);
	tap_diag("kernel.pidns_coupling at start: %s; %u subsets per group",
		 pidns_mode_name(start_mode), SUBSETS);

	for (m = 0; m < nmodes; m++) {
		if (alias)
			set_mode(modes[m]);
		for (call = 0; call < ORACLE_CALLS; call++)
			for (u = 0; u < 2; u++)
				run_group(call, modes[m], alias, u, &targets[u]);
	}
	nstarget_stop(&targets[0]);
	nstarget_stop(&targets[1]);
	if (alias)
		set_mode(start_mode);
	owner_ioctl_case(alias);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
