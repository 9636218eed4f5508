// SPDX-License-Identifier: GPL-2.0
/*
 * lsmorder: which refusal an execve() in a new PID namespace gets when an
 * LSM and the policy could both refuse it (tests/guest/debian.sh, under
 * Debian's config, where AppArmor and Landlock are built in).
 *
 *   lsmorder [--landlock-exec DIR] --flags pmin PATH [ARG...]
 *
 * With --landlock-exec, the process first restricts itself with a Landlock
 * ruleset that handles LANDLOCK_ACCESS_FS_EXECUTE and allows it only
 * beneath DIR. It then unshares the namespaces of --flags (p: PID, m:
 * mount, i: IPC, n: network), forks the new PID namespace's init, and the
 * init execs PATH. One line tells the outcome: "exec: ok, status N" (PATH
 * ran and exited N) or "exec: ENAME" (execve() failed with errno ENAME).
 * An AppArmor profile is applied from outside, by aa-exec.
 *
 * The policy judges an execve() once the LSMs' bprm hooks have passed
 * (docs/policy.md): a path that Landlock or AppArmor forbids fails with
 * their EACCES in every mode; one they allow fails with the policy's
 * EPERM in the namespaces it refuses, and runs otherwise.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void landlock_exec_beneath(const char *dir)
{
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE,
	};
	struct landlock_path_beneath_attr beneath = {
		.allowed_access = LANDLOCK_ACCESS_FS_EXECUTE,
	};
	int ruleset;

	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		err(2, "landlock_create_ruleset");
	beneath.parent_fd = open(dir, O_PATH | O_CLOEXEC);
	if (beneath.parent_fd < 0)
		err(2, "open %s", dir);
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
		    &beneath, 0))
		err(2, "landlock_add_rule");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err(2, "PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_landlock_restrict_self, ruleset, 0))
		err(2, "landlock_restrict_self");
	close(beneath.parent_fd);
	close(ruleset);
}

static int parse_flags(const char *s)
{
	int flags = 0;

	for (; *s; s++) {
		switch (*s) {
		case 'p': flags |= CLONE_NEWPID; break;
		case 'm': flags |= CLONE_NEWNS; break;
		case 'i': flags |= CLONE_NEWIPC; break;
		case 'n': flags |= CLONE_NEWNET; break;
		default: errx(2, "--flags: unknown letter '%c'", *s);
		}
	}
	return flags;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "landlock-exec", required_argument, NULL, 'l' },
		{ "flags", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	const char *landlock = NULL;
	int flags = -1, c, pipefd[2], child_errno, status;
	ssize_t n;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+l:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': landlock = optarg; break;
		case 'f': flags = parse_flags(optarg); break;
		default: return 2;
		}
	}
	if (flags < 0 || optind >= argc)
		errx(2, "usage: lsmorder [--landlock-exec DIR] --flags pmin PATH [ARG...]");
	if (landlock)
		landlock_exec_beneath(landlock);
	if (unshare(flags))
		err(2, "unshare");
	if (pipe2(pipefd, O_CLOEXEC))
		err(2, "pipe2");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		err(2, "fork");
	if (pid == 0) {
		close(pipefd[0]);
		execv(argv[optind], argv + optind);
		child_errno = errno;
		if (write(pipefd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(3);
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], &child_errno, sizeof(child_errno));
	if (waitpid(pid, &status, 0) != pid)
		err(2, "waitpid");
	if (n == sizeof(child_errno))
		printf("exec: %s\n", strerrorname_np(child_errno));
	else if (WIFEXITED(status))
		printf("exec: ok, status %d\n", WEXITSTATUS(status));
	else
		printf("exec: ok, killed by signal %d\n", WTERMSIG(status));
	return 0;
}
