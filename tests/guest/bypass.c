// SPDX-License-Identifier: GPL-2.0
/*
 * bypass: the ways around the coupling policy, closed.
 *
 * 1. setns() into a container's lone PID namespace and fork: the child
 *    would share the host's mount, IPC and network namespaces. Refused at
 *    the fork in enforce mode, whatever nstype was passed; joining the
 *    whole set, in any order, or with a pidfd, keeps working.
 * 2. CLONE_NEWCONTAINER under a seccomp filter that masks the four
 *    CLONE_NEW* bits it stands for: the filter cannot see the alias, so
 *    unshare() and setns() refuse it (EINVAL) to filtered tasks. clone3()
 *    takes it: no filter can read clone3()'s flags, so a filter that
 *    allows clone3() allows the four flags already.
 * Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

static struct target box;	/* a container: its init waits */
static ino_t ns_runner[NS_MAX];

static int ns_index(uint64_t bit)
{
	size_t i;

	for (i = 0; i < ns_flags_count; i++)
		if (ns_flags[i].bit == bit)
			return (int)i;
	return -1;
}

static int open_ns(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)box.pid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * In a case process: join @names (namespace files of the container, in
 * this order) with nstype @nstype (0, or the file's type), then fork.
 * Exit 0 if the fork worked and the child is in the container's PID
 * namespace, the errno of a failed fork, 100 + step if a setns() failed.
 */
static int join_files_and_fork(const char *const *names, int n, int typed)
{
	static const struct { const char *name; int type; } types[] = {
		{ "pid", CLONE_NEWPID }, { "mnt", CLONE_NEWNS },
		{ "ipc", CLONE_NEWIPC }, { "net", CLONE_NEWNET },
	};
	int i, k, fd;
	pid_t pid;

	for (i = 0; i < n; i++) {
		int type = 0;

		for (k = 0; k < 4; k++)
			if (!strcmp(types[k].name, names[i]))
				type = types[k].type;
		fd = open_ns(names[i]);
		if (fd < 0 || setns(fd, typed ? type : 0) < 0)
			return 100 + i;
		close(fd);
	}
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		ino_t now[NS_MAX];
		int p = ns_index(CLONE_NEWPID);

		ns_read("self", now);
		_exit(now[p] == box.ns[p] ? 0 : 99);
	}
	return wait_status(pid);
}

static void join_case(const char *mode, const char *const *names, int n,
		      int typed, int want)
{
	char list[64] = "";
	pid_t pid;
	int i, got;

	for (i = 0; i < n; i++) {
		strcat(list, i ? "," : "");
		strcat(list, names[i]);
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(join_files_and_fork(names, n, typed));
	got = wait_status(pid);
	tap_case(got == want, "%s: setns(%s, nstype %s) then fork: %s (got %d)",
		 mode, list, typed ? "typed" : "0",
		 want ? strerror(want) : "child in the container's PID namespace",
		 got);
}

/* setns() with the pidfd and @mask, then fork. */
static void pidfd_case(const char *mode, int mask, int want_setns, int want_fork)
{
	char names[128];
	pid_t pid;
	int got;

	ns_flags_str((uint64_t)mask, "|", "|", names, sizeof(names));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pid_t child;

		if (setns(box.pidfd, mask) < 0)
			_exit(200 + errno);
		child = fork();
		if (child < 0)
			_exit(errno);
		if (child == 0)
			_exit(0);
		_exit(wait_status(child));
	}
	got = wait_status(pid);
	tap_case(got == (want_setns ? 200 + want_setns : want_fork),
		 "%s: setns(pidfd, %s) %s, fork %s (got %d)", mode, names,
		 want_setns ? strerror(want_setns) : "accepted",
		 want_setns ? "not reached" :
		 want_fork ? strerror(want_fork) : "accepted", got);
}

static void join_cases(int mode)
{
	static const char *const pid[] = { "pid" };
	static const char *const pid_mnt[] = { "pid", "mnt" };
	static const char *const pid_mnt_ipc[] = { "pid", "mnt", "ipc" };
	static const char *const nsenter_order[] = { "ipc", "net", "pid", "mnt" };
	static const char *const pid_first[] = { "pid", "mnt", "ipc", "net" };
	const char *name = pidns_mode_name(mode);
	int refuse = mode == PIDNS_ENFORCE ? EINVAL : 0;

	set_mode(mode);
	join_case(name, pid, 1, 1, refuse);
	join_case(name, pid, 1, 0, refuse);
	join_case(name, pid_mnt, 2, 1, refuse);
	join_case(name, pid_mnt_ipc, 3, 0, refuse);
	join_case(name, nsenter_order, 4, 1, 0);
	join_case(name, pid_first, 4, 0, 0);
	pidfd_case(name, CLONE_NEWPID, refuse, 0);
	pidfd_case(name, CLONE_NEWCONTAINER, 0, 0);
	pidfd_case(name, (int)NS_CONTAINER, 0, 0);
}

/* The unsharer's second fork joins the namespace its first fork created. */
static void unsharer_forks_twice(void)
{
	pid_t pid;
	int got;

	set_mode(PIDNS_ENFORCE);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pid_t a, b;
		int r;

		if (unshare(CLONE_NEWCONTAINER) < 0)
			_exit(100);
		a = fork();
		if (a == 0) {
			pause();
			_exit(0);
		}
		if (a < 0)
			_exit(101);
		b = fork();
		if (b == 0)
			_exit(getpid() == 2 ? 0 : 102);
		r = b < 0 ? errno : wait_status(b);
		kill(a, SIGKILL);
		wait_status(a);
		_exit(r);
	}
	got = wait_status(pid);
	tap_case(got == 0, "enforce: after unshare(CLONE_NEWCONTAINER) a second fork joins as pid 2 (got %d)",
		 got);
}

/*
 * A filter in the style of systemd's RestrictNamespaces=: unshare(),
 * clone() and setns() fail with EPERM when their flags carry any of
 * CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWIPC or CLONE_NEWNET; clone3()
 * fails with ENOSYS, since a filter cannot read its flags.
 */
static int install_filter(void)
{
	const __u32 mask = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET;
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 3, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* unshare, clone: flags in args[0] */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 2, 3),
		/* setns: nstype in args[1] */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

enum sc_call { SC_UNSHARE, SC_SETNS };

/* Under the filter: make one call; its errno (0 if it worked), or 255. */
static int filtered(enum sc_call call, uint64_t flags)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long r = -1;

		if (install_filter() < 0)
			_exit(255);
		switch (call) {
		case SC_UNSHARE:
			r = unshare((int)flags);
			break;
		case SC_SETNS:
			r = setns(box.pidfd, (int)flags);
			break;
		}
		_exit(r < 0 ? errno : 0);
	}
	return wait_status(pid);
}

static void seccomp_cases(int mode)
{
	const char *name = pidns_mode_name(mode);
	int got;

	set_mode(mode);
	got = filtered(SC_UNSHARE, NS_CONTAINER);
	tap_case(got == EPERM, "%s: the filter denies unshare(CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWNET) with EPERM (got %d)",
		 name, got);
	got = filtered(SC_UNSHARE, CLONE_NEWUTS);
	tap_case(got == 0, "%s: the filter allows unshare(CLONE_NEWUTS) (got %d)", name, got);
	/*
	 * EINVAL, not the filter's EPERM: the filter let the alias through,
	 * which is the hole; the kernel refused it, which closes it.
	 */
	got = filtered(SC_UNSHARE, CLONE_NEWCONTAINER);
	tap_case(got == EINVAL, "%s: the filter passes unshare(CLONE_NEWCONTAINER) and the kernel refuses it with EINVAL (got %d)",
		 name, got);
	got = filtered(SC_SETNS, CLONE_NEWCONTAINER);
	tap_case(got == EINVAL, "%s: the filter passes setns(pidfd, CLONE_NEWCONTAINER) and the kernel refuses it with EINVAL (got %d)",
		 name, got);
	got = filtered(SC_UNSHARE, CLONE_NEWCONTAINER | CLONE_NEWUTS);
	tap_case(got == EINVAL, "%s: unshare(CLONE_NEWCONTAINER|CLONE_NEWUTS) under the filter: EINVAL (got %d)",
		 name, got);
}

/*
 * A filter that allows everything: the kernel cannot tell it from one that
 * masks the four bits, so unshare() still refuses the alias; clone3(),
 * whose flags no filter can read, takes it.
 */
static void seccomp_allow_all(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 1, .filter = code };
	pid_t pid;
	int got;

	set_mode(PIDNS_ENFORCE);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(255);
		_exit(unshare(CLONE_NEWCONTAINER) ? errno : 0);
	}
	got = wait_status(pid);
	tap_case(got == EINVAL, "enforce: unshare(CLONE_NEWCONTAINER) under a filter that allows everything: EINVAL (got %d)",
		 got);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct clone_args args = { .flags = CLONE_NEWCONTAINER,
					   .exit_signal = SIGCHLD };
		long r;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(255);
		r = syscall(SYS_clone3, &args, sizeof(args));
		if (r == 0)
			_exit(getpid() == 1 ? 0 : 1);
		if (r < 0)
			_exit(errno);
		_exit(wait_status((pid_t)r));
	}
	got = wait_status(pid);
	tap_case(got == 0, "enforce: clone3(CLONE_NEWCONTAINER) under the same filter makes PID 1 of a new PID namespace (got %d)",
		 got);

	pid = fork();
	if (pid == 0) {
		pid_t c;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(255);
		c = raw_clone(true, NS_CONTAINER);
		if (c == 0)
			_exit(getpid() == 1 ? 0 : 1);
		_exit(c < 0 ? errno : wait_status(c));
	}
	got = wait_status(pid);
	tap_case(got == 0, "enforce: under the same filter the four flags spelled out work (got %d)",
		 got);
}

int main(void)
{
	char line[256];
	pid_t pid;
	int got;

	printf("TAP version 13\n");
	ns_read("self", ns_runner);
	target_start(&box, CLONE_NEWCONTAINER, NULL);

	/* The log line first, before anything else is rate limited. */
	set_mode(PIDNS_WARN);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open_ns("pid");

		prctl(PR_SET_NAME, "pidns-joiner");
		if (fd < 0 || setns(fd, 0) < 0)
			_exit(100);
		pid = fork();
		if (pid == 0)
			_exit(0);
		_exit(pid < 0 ? errno : wait_status(pid));
	}
	got = wait_status(pid);
	/* The joiner's namespaces are the runner's, of the initial one. */
	snprintf(line, sizeof(line),
		 "pidns_coupling: pidns-joiner[%d]: fork into pid:[%lu] with mnt:[%lu] of pid:[%lu] ipc:[%lu] of pid:[%lu] net:[%lu] of pid:[%lu]: allowed (kernel.pidns_coupling=1)",
		 (int)pid, (unsigned long)box.ns[ns_index(CLONE_NEWPID)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWNS)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWPID)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWIPC)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWPID)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWNET)],
		 (unsigned long)ns_runner[ns_index(CLONE_NEWPID)]);
	tap_case(got == 0 && klog_has(line), "warn: a fork into a lone joined PID namespace is allowed and logged: \"%s\"",
		 line);

	join_cases(PIDNS_ENFORCE);
	join_cases(PIDNS_WARN);
	join_cases(PIDNS_OFF);
	unsharer_forks_twice();
	seccomp_cases(PIDNS_ENFORCE);
	seccomp_cases(PIDNS_OFF);
	seccomp_allow_all();

	target_stop(&box);
	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
