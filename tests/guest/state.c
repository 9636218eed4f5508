// SPDX-License-Identifier: GPL-2.0
/*
 * state: the state that kernel.pidns_coupling exists for, judged through
 * sequences of calls rather than one call.
 *
 * The hazard is a task in a PID namespace whose mount, IPC or network
 * namespace belongs to a PID namespace outside it. Every case below is a
 * sequence of raw system calls that either reaches that state (a hole of
 * the same-call rule, which modes 2 and 3 must refuse and mode 0 must let
 * through) or reaches an isolated state in several calls (which mode 3
 * must accept and mode 2 refuses at its first call), and is run in every
 * mode, as root and, where the sequence needs no host privilege, as
 * uid 1000 through a user namespace:
 *
 *  - hole: unshare the four namespaces, setns() back into the old mount,
 *    IPC or network namespace, fork (the init of the new PID namespace)
 *    and exec;
 *  - member: a container's init setns() back into the outside's mount,
 *    IPC or network namespace, by namespace file and by pidfd;
 *  - leader: a fork into a PID namespace whose init is a thread-group
 *    leader that has exited while another thread lives on;
 *  - joins: nsenter --all, nsenter --pid, setns(pidfd, CLONE_NEWPID), a
 *    join that forks with CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWNET (docker
 *    run --pid=container:X), the host entering a container's network,
 *    and a join of a container whose init unshared its mount namespace;
 *  - stage: clone(CLONE_NEWPID) and then unshare() of the rest before
 *    execve(), in one call, in three, or after CLONE_NEWNET|CLONE_NEWIPC;
 *    the same with one namespace forgotten (execve() refused with EPERM,
 *    the caller still running); unshare(CLONE_NEWPID) then fork; and a
 *    second fork into that PID namespace (a joiner) in mode 3;
 *  - predates: a PID namespace created in mode 0 or 1 keeps running when
 *    the mode is raised, and its execve() is logged, not refused.
 *
 * Each sequence runs in a child of its own, so the test's namespaces never
 * change; a step that is not reached is "-". Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define NONE	(-1)	/* a step that was not reached */
#define ODD	(-2)	/* a step that ended in a way no case expects */
#define EXEC_OK	7	/* the status of the program that execve() started */
#define STILL	50	/* the status of a caller whose execve() failed */
#define USER	1000
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What a sequence's steps returned: 0, an errno, NONE or ODD. */
struct outcome {
	int setns;	/* the setns() the case is about */
	int fork;	/* the fork into the other PID namespace */
	int exec;	/* execve() in it */
	int alive;	/* a refused execve() left its caller running */
	int moved;	/* a refused setns() moved the caller's root or cwd */
};

static int exe_fd;	/* this program, for execve() anywhere */
static struct outcome *out;	/* shared with the sequence's children */
static int mode;

static const struct {
	uint64_t flag;
	const char *name;
	const char *file;
} types[] = {
	{ CLONE_NEWNS, "mnt", "mnt" },
	{ CLONE_NEWIPC, "ipc", "ipc" },
	{ CLONE_NEWNET, "net", "net" },
};

static const char *step(int v, char *buf)
{
	if (v == NONE)
		return "-";
	if (v == ODD)
		return "odd";
	if (v == 0)
		return "0";
	snprintf(buf, 16, "%s", v == EPERM ? "EPERM" : v == EINVAL ? "EINVAL" :
		 strerrorname_np(v) ? strerrorname_np(v) : "errno");
	return buf;
}

/* execve() this program, which exits EXEC_OK; on failure, record it. */
static void try_exec(void)
{
	char *argv[] = { "state", "--exit", NULL };
	extern char **environ;

	syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	out->exec = errno;
	out->alive = 1;
	_exit(STILL);
}

/* Wait for a child that tried try_exec() and fill out->exec. */
static void wait_exec(pid_t pid)
{
	int st = wait_status(pid);

	if (st == EXEC_OK)
		out->exec = 0;
	else if (st != STILL)
		out->exec = ODD;
}

/* fork(), recording its errno; the child runs try_exec(). */
static void fork_exec(uint64_t flags)
{
	pid_t pid = raw_clone(true, flags);

	if (pid < 0) {
		out->fork = errno;
		return;
	}
	if (pid == 0)
		try_exec();
	out->fork = 0;
	wait_exec(pid);
}

static int ns_open(const char *pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		_exit(91);
	close(fd);
}

/*
 * As uid 1000: a user namespace with its own mount, IPC and network
 * namespaces (created in the initial PID namespace, so they belong to
 * it), in which the sequence has every capability.
 */
static void enter_user(void)
{
	char map[32];

	become_user(USER);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET))
		_exit(92);
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %d 1", USER);
	write_file("/proc/self/uid_map", map);
	write_file("/proc/self/gid_map", map);
}

/* Run @fn(@arg) in a child of its own (as uid 1000 if @user). */
static void run(void (*fn)(int), int arg, bool user)
{
	pid_t pid;
	int st;

	*out = (struct outcome){ NONE, NONE, NONE, 0, 0 };
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		if (user)
			enter_user();
		fn(arg);
		_exit(0);
	}
	st = wait_status(pid);
	if (st != 0)
		tap_diag("the sequence's process ended with %d", st);
}

static bool check(const char *name, bool user, struct outcome want)
{
	char a[4][16], b[4][16];
	bool pass = out->setns == want.setns && out->fork == want.fork &&
		    out->exec == want.exec &&
		    (want.exec <= 0 || out->alive) && !out->moved;

	tap_case(pass, "%s, %s, mode %d: setns %s, fork %s, exec %s%s", name,
		 user ? "uid 1000 in a user namespace" : "root", mode,
		 step(want.setns, a[0]), step(want.fork, a[1]),
		 step(want.exec, a[2]), want.exec > 0 ? ", caller alive" : "");
	if (!pass)
		tap_diag("got: setns %s, fork %s, exec %s, alive %d%s",
			 step(out->setns, b[0]), step(out->fork, b[1]),
			 step(out->exec, b[2]), out->alive,
			 out->moved ? ", and the refused setns() moved its root or cwd" : "");
	return pass;
}

static bool refuses(void)
{
	return mode >= PIDNS_ENFORCE;
}

/*
 * hole: unshare(NEWPID|NEWNS|NEWIPC|NEWNET) (coupled: allowed), setns()
 * back into the old namespace of type @t, fork: the init of the new PID
 * namespace would have the outside's namespace.
 */
static void seq_hole(int t)
{
	int fd = ns_open("self", types[t].file);

	if (fd < 0 || unshare(CLONE_NEWPID | NS_COUPLED))
		_exit(93);
	out->setns = setns(fd, types[t].flag) ? errno : 0;
	if (out->setns)
		return;
	fork_exec(0);
}

static struct outcome want_hole(void)
{
	/* The caller is in the initial PID namespace: its setns() is free. */
	struct outcome w = { 0, 0, 0, 0, 0 };

	if (mode == PIDNS_ENFORCE) {
		w.fork = EINVAL;
		w.exec = NONE;
	} else if (mode == PIDNS_STAGE) {
		w.exec = EPERM;		/* the init's fork is not judged */
	}
	return w;
}

/*
 * member: the init of a coupled container setns() back into the
 * outside's namespace of type @t % 3, by namespace file (@t < 3) or by a
 * pidfd of the sequence's process (@t >= 3), then execs.
 */
static void seq_member(int t)
{
	int fd = t < 3 ? ns_open("self", types[t % 3].file) :
			 (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t pid;

	if (fd < 0)
		_exit(94);
	pid = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (pid < 0)
		_exit(95);
	if (pid == 0) {
		struct stat root, cwd, now_root, now_cwd;

		/*
		 * A working directory that only this mount namespace has:
		 * a refused setns() must leave it (and the root) alone.
		 */
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("state", "/tmp", "tmpfs", 0, NULL) || chdir("/tmp") ||
		    stat("/", &root) || stat(".", &cwd))
			_exit(96);
		out->setns = setns(fd, types[t % 3].flag) ? errno : 0;
		if (out->setns) {
			if (stat("/", &now_root) || stat(".", &now_cwd) ||
			    now_root.st_dev != root.st_dev ||
			    now_root.st_ino != root.st_ino ||
			    now_cwd.st_dev != cwd.st_dev ||
			    now_cwd.st_ino != cwd.st_ino)
				out->moved = 1;
			_exit(0);
		}
		try_exec();
	}
	if (wait_status(pid) == EXEC_OK)
		out->exec = 0;
}

static struct outcome want_member(void)
{
	struct outcome w = { 0, NONE, 0, 0, 0 };

	if (refuses()) {
		w.setns = EPERM;
		w.exec = NONE;
	}
	return w;
}

/* A coupled container's init that waits; @setup runs in it first. */
static struct target box;

static void box_unshare_mnt(void)
{
	if (unshare(CLONE_NEWNS))
		_exit(96);
}

static int box_pidns(void)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", box.pid);
	return ns_open(pid, "pid");
}

/* joins: what a task in the initial PID namespace does to a container. */
enum join {
	JOIN_ALL,		/* setns(pidfd, the four), fork, exec */
	JOIN_PID_FILE,		/* setns(pid ns file), fork, exec */
	JOIN_PID_PIDFD,		/* setns(pidfd, CLONE_NEWPID), fork, exec */
	JOIN_ISOLATED,		/* setns(pid ns file), fork with the rest new */
	JOIN_HOST_NET,		/* setns(pidfd, CLONE_NEWNET), exec (host) */
	JOIN_UNSHARED,		/* JOIN_ALL, into a box that unshared mnt */
	JOIN_NR
};

static const char *const join_names[JOIN_NR] = {
	"join: setns(pidfd, PID|NS|IPC|NET) (nsenter --all)",
	"join: setns(pid ns file) alone (nsenter --pid)",
	"join: setns(pidfd, CLONE_NEWPID) alone",
	"join: setns(pid ns file), fork with NEWNS|NEWIPC|NEWNET (--pid=container:X)",
	"join: the host setns(pidfd, CLONE_NEWNET) into a container (CNI)",
	"join: nsenter --all into a box whose init unshared its mount namespace",
};

static void seq_join(int j)
{
	pid_t pid;
	int fd;

	switch (j) {
	case JOIN_ALL:
	case JOIN_UNSHARED:
		out->setns = setns(box.pidfd, CLONE_NEWPID | NS_COUPLED) ?
			     errno : 0;
		break;
	case JOIN_PID_FILE:
	case JOIN_ISOLATED:
		fd = box_pidns();
		out->setns = fd < 0 || setns(fd, CLONE_NEWPID) ? errno : 0;
		break;
	case JOIN_PID_PIDFD:
		out->setns = setns(box.pidfd, CLONE_NEWPID) ? errno : 0;
		break;
	case JOIN_HOST_NET:
		out->setns = setns(box.pidfd, CLONE_NEWNET) ? errno : 0;
		if (out->setns)
			return;
		/* The host stays in the initial PID namespace: exec is free. */
		pid = fork();
		if (pid == 0)
			try_exec();
		wait_exec(pid);
		return;
	}
	if (out->setns)
		return;
	fork_exec(j == JOIN_ISOLATED ? NS_COUPLED : 0);
}

static struct outcome want_join(int j)
{
	struct outcome w = { 0, 0, 0, 0, 0 };

	switch (j) {
	case JOIN_PID_PIDFD:
		if (mode == PIDNS_ENFORCE) {	/* the same-call rule */
			w = (struct outcome){ EINVAL, NONE, NONE, 0, 0 };
			break;
		}
		/* fall through */
	case JOIN_PID_FILE:
		if (refuses()) {		/* a joiner with the host's */
			w.fork = EINVAL;
			w.exec = NONE;
		}
		break;
	case JOIN_HOST_NET:
		w.fork = NONE;
		break;
	}
	return w;
}

/*
 * leader: the init of a coupled container starts a thread and exits as a
 * thread-group leader; the thread lives on. A fork into that PID
 * namespace from outside, with the host's namespaces, must be judged.
 */
static int leader_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void seq_leader(int unused)
{
	int go[2], ready[2], fd;
	char byte, pid[16];
	pid_t init;

	(void)unused;
	if (pipe(go) || pipe(ready))
		_exit(97);
	init = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (init < 0)
		_exit(98);
	if (init == 0) {
		char *stack = malloc(1 << 16);

		if (!stack || clone(leader_thread, stack + (1 << 16),
				    CLONE_VM | CLONE_THREAD | CLONE_SIGHAND |
				    CLONE_FS | CLONE_FILES, NULL) < 0)
			_exit(99);
		(void)!write(ready[1], "", 1);
		(void)!read(go[0], &byte, 1);
		syscall(SYS_exit, 0);	/* this thread only */
	}
	if (read(ready[0], &byte, 1) != 1)
		_exit(100);
	snprintf(pid, sizeof(pid), "%d", init);
	fd = ns_open(pid, "pid");
	(void)!write(go[1], "", 1);
	usleep(200000);		/* the leader is a zombie by now */
	out->setns = fd < 0 || setns(fd, CLONE_NEWPID) ? errno : 0;
	if (!out->setns)
		fork_exec(0);
	kill(init, SIGKILL);
	waitpid(init, NULL, __WALL);
}

static struct outcome want_leader(void)
{
	struct outcome w = { 0, 0, 0, 0, 0 };

	if (refuses()) {
		w.fork = EINVAL;
		w.exec = NONE;
	}
	return w;
}

/*
 * stage: clone(CLONE_NEWPID | @first) and then, in the child, unshare()
 * of each flag set of @later in turn, then execve().
 */
struct stage {
	const char *name;
	uint64_t first;
	uint64_t later[3];
	bool isolated;		/* the child ends with nothing shared */
};

static const struct stage stages[] = {
	{ "stage: clone NEWPID, unshare NEWNS|NEWIPC|NEWNET, exec", 0,
	  { NS_COUPLED }, true },
	{ "stage: clone NEWPID|NEWNET|NEWIPC, unshare NEWNS, exec",
	  CLONE_NEWNET | CLONE_NEWIPC, { CLONE_NEWNS }, true },
	{ "stage: clone NEWPID, unshare NEWNS, NEWIPC, NEWNET one by one, exec",
	  0, { CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET }, true },
	{ "stage: clone NEWPID, unshare NEWIPC|NEWNET (mnt forgotten), exec", 0,
	  { CLONE_NEWIPC | CLONE_NEWNET }, false },
	{ "stage: clone NEWPID, unshare NEWNS|NEWNET (ipc forgotten), exec", 0,
	  { CLONE_NEWNS | CLONE_NEWNET }, false },
	{ "stage: clone NEWPID, unshare NEWNS|NEWIPC (net forgotten), exec", 0,
	  { CLONE_NEWNS | CLONE_NEWIPC }, false },
};

static void stage_child(const struct stage *s)
{
	int i;

	for (i = 0; i < 3 && s->later[i]; i++)
		if (unshare(s->later[i]))
			_exit(101);
	try_exec();
}

static void seq_stage(int i)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID | stages[i].first);

	if (pid < 0) {
		out->fork = errno;
		return;
	}
	if (pid == 0)
		stage_child(&stages[i]);
	out->fork = 0;
	wait_exec(pid);
}

static struct outcome want_stage(bool isolated)
{
	struct outcome w = { NONE, 0, 0, 0, 0 };

	if (mode == PIDNS_ENFORCE)
		w = (struct outcome){ NONE, EINVAL, NONE, 0, 0 };
	else if (mode == PIDNS_STAGE && !isolated)
		w.exec = EPERM;
	return w;
}

/*
 * unshare(CLONE_NEWPID) then fork: the init unshares the rest and execs;
 * then (@joiner) a second fork into the PID namespace, with the
 * sequence's own namespaces, which in mode 3 is a joiner's fork.
 */
static void seq_unshare_pid(int joiner)
{
	static const struct stage rest = { "", 0, { NS_COUPLED }, true };
	int err = unshare(CLONE_NEWPID) ? errno : 0;
	int go[2];
	pid_t init;
	char byte;

	if (err) {
		out->setns = err;	/* reported in the setns column */
		return;
	}
	if (!joiner) {
		out->setns = 0;
		init = fork();
		if (init < 0) {
			out->fork = errno;
			return;
		}
		if (init == 0)
			stage_child(&rest);
		out->fork = 0;
		wait_exec(init);
		return;
	}
	/* An init that waits, then the joiner's fork. */
	if (pipe(go))
		_exit(102);
	init = fork();
	if (init < 0)
		_exit(103);
	if (init == 0) {
		close(go[1]);
		if (unshare(NS_COUPLED))
			_exit(104);
		(void)!read(go[0], &byte, 1);
		_exit(0);
	}
	out->setns = 0;
	fork_exec(0);
	close(go[1]);
	waitpid(init, NULL, 0);
}

static struct outcome want_unshare_pid(bool joiner)
{
	struct outcome w = { 0, 0, 0, 0, 0 };

	if (mode == PIDNS_ENFORCE)
		return (struct outcome){ EINVAL, NONE, NONE, 0, 0 };
	if (joiner && mode == PIDNS_STAGE)
		w = (struct outcome){ 0, EINVAL, NONE, 0, 0 };
	return w;
}

/*
 * predates: a PID namespace created uncoupled in mode @born, whose init
 * calls execve() after the mode is raised to 2 or 3: logged, not refused.
 */
static void seq_predates(int born)
{
	int go[2];
	char byte;
	pid_t pid;

	set_mode(born);
	if (pipe(go))
		_exit(105);
	pid = raw_clone(true, CLONE_NEWPID);
	if (pid < 0) {
		out->fork = errno;
		return;
	}
	if (pid == 0) {
		close(go[1]);
		(void)!read(go[0], &byte, 1);
		try_exec();
	}
	out->fork = 0;
	set_mode(mode);
	close(go[1]);
	wait_exec(pid);
}

int main(int argc, char **argv)
{
	static const int modes[] = {
		PIDNS_OFF, PIDNS_WARN, PIDNS_ENFORCE, PIDNS_STAGE,
	};
	unsigned int m, t, j, i;
	bool user;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return EXEC_OK;

	printf("TAP version 13\n");
	if (pidns_mode_read() == PIDNS_ABSENT) {
		printf("Bail out! no kernel.pidns_coupling\n");
		return 1;
	}
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (exe_fd < 0) {
		printf("Bail out! /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	out = shared_alloc(sizeof(*out));

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		mode = modes[m];
		set_mode(mode);
		for (user = false; ; user = true) {
			for (t = 0; t < ARRAY_SIZE(types); t++) {
				char name[96];

				snprintf(name, sizeof(name),
					 "hole: unshare the four, setns back into the old %s, fork, exec",
					 types[t].name);
				run(seq_hole, t, user);
				check(name, user, want_hole());
			}
			for (t = 0; t < 2 * ARRAY_SIZE(types); t++) {
				char name[96];

				snprintf(name, sizeof(name),
					 "member: a container's init setns back into the outside %s by %s, exec",
					 types[t % 3].name, t < 3 ? "namespace file" : "pidfd");
				run(seq_member, t, user);
				check(name, user, want_member());
			}
			run(seq_leader, 0, user);
			check("leader: fork into a PID namespace whose init's leader exited, exec",
			      user, want_leader());
			run(seq_stage, 0, user);
			check(stages[0].name, user, want_stage(true));
			run(seq_stage, 5, user);
			check(stages[5].name, user, want_stage(false));
			if (user)
				break;
		}
		for (j = 0; j < JOIN_NR; j++) {
			target_start(&box, CLONE_NEWPID | NS_COUPLED,
				     j == JOIN_UNSHARED ? box_unshare_mnt : NULL);
			run(seq_join, j, false);
			check(join_names[j], false, want_join(j));
			target_stop(&box);
		}
		for (i = 1; i < ARRAY_SIZE(stages) - 1; i++) {
			run(seq_stage, i, false);
			check(stages[i].name, false, want_stage(stages[i].isolated));
		}
		run(seq_unshare_pid, 0, false);
		check("stage: unshare NEWPID, fork, the init unshares the rest, exec",
		      false, want_unshare_pid(false));
		run(seq_unshare_pid, 1, false);
		check("stage: unshare NEWPID, an init, then a second fork with the outside's (a joiner)",
		      false, want_unshare_pid(true));
		if (mode >= PIDNS_ENFORCE) {
			/*
			 * The log is rate limited (10 lines in 5 s for
			 * root) and the cases above filled it: wait for
			 * a fresh interval so the lines checked below
			 * are printed.
			 */
			sleep(6);
			for (i = PIDNS_OFF; i <= PIDNS_WARN; i++) {
				char name[96];

				snprintf(name, sizeof(name),
					 "predates: a PID namespace created uncoupled in mode %u execs",
					 i);
				run(seq_predates, i, false);
				check(name, false, (struct outcome){ NONE, 0, 0, 0, 0 });
			}
			tap_case(klog_has("its PID namespace predates it"),
				 "mode %d: the log says the PID namespace predates the mode",
				 mode);
		}
	}

	/* The refusals were logged as the documentation says. */
	/* execveat(fd, "", AT_EMPTY_PATH) runs "/dev/fd/N". */
	tap_case(klog_has("execve \"/dev/fd/"),
		 "the log names the executable of a refused execve()");
	tap_case(klog_has("of pid:["), "the log names the namespaces and their owners");
	tap_case(klog_has(": refused (kernel.pidns_coupling=3)"),
		 "stage mode logs its refusals");

	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
