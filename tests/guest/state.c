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
 *    the mode is raised, and its execve() is logged, not refused; a task
 *    that joins it afterwards is judged in full (at its fork, and at a
 *    setns() back to the host after an isolated fork);
 *  - claims: namespaces made on the host and used by one container only
 *    (podman's default network, pinned and joined by the container's
 *    init; a CNI pod sandbox whose bootstrap joins the pinned network
 *    and IPC namespaces before unshare(CLONE_NEWPID); a shared-PID pod
 *    member; crun's PID join after a fresh mount namespace; the reversed
 *    order, unshare(NEWNS|NEWIPC|NEWNET) then unshare(NEWPID)) run in
 *    mode 3, while a pod's app container with its own PID namespace, a
 *    second container on a network that a live one has claimed, and the
 *    host's namespaces are refused; a namespace whose owner died can be
 *    claimed again;
 *  - tools: the flag sets of Firefox's probe and content processes,
 *    sbuild, mmdebstrap, autopkgtest-virt-unshare and systemd's
 *    PrivatePIDs= (see seq_tool()).
 *
 * Each sequence runs in a child of its own, so the test's namespaces never
 * change; a step that is not reached is "-". Prints TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
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
/*
 * The policy is the BPF form on a stock kernel (tests/stock-kernel), and
 * the cause of the cell the next check() shows differing from the
 * patched kernel's, which the case's description names.
 */
static bool bpf_form;
static const char *stock_cause;
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

/*
 * execve() @path, or this program (which exits EXEC_OK) if @path is NULL;
 * on failure, record it.
 */
static void __attribute__((noreturn)) try_exec_file(const char *path)
{
	char *argv[] = { "state", "--exit", NULL };
	extern char **environ;

	if (path)
		execve(path, argv, environ);
	else
		syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	out->exec = errno;
	out->alive = 1;
	_exit(STILL);
}

/* execve() this program, which exits EXEC_OK; on failure, record it. */
static void __attribute__((noreturn)) try_exec(void)
{
	try_exec_file(NULL);
}

/* out->exec from the exit status of a child that tried try_exec() */
static void exec_status(int st)
{
	if (st == EXEC_OK)
		out->exec = 0;
	else if (st != STILL)
		out->exec = ODD;
}

/* Wait for a child that tried try_exec() and fill out->exec. */
static void wait_exec(pid_t pid)
{
	exec_status(wait_status(pid));
}

/*
 * fork() with clone3() or clone(), recording its errno; the child runs
 * try_exec_file(@path).
 */
static void fork_exec_with(bool clone3, uint64_t flags, const char *path)
{
	pid_t pid = raw_clone(clone3, flags);

	if (pid < 0) {
		out->fork = errno;
		return;
	}
	if (pid == 0)
		try_exec_file(path);
	out->fork = 0;
	wait_exec(pid);
}

/* fork() with clone3(), recording its errno; the child runs try_exec_file(). */
static void fork_exec_file(uint64_t flags, const char *path)
{
	fork_exec_with(true, flags, path);
}

/* fork(), recording its errno; the child runs try_exec(). */
static void fork_exec(uint64_t flags)
{
	fork_exec_file(flags, NULL);
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
	/*
	 * A process that stays in these namespaces, as the host's processes
	 * stay in the host's: without it they would have no member outside
	 * the sequence's PID namespaces, and a container could claim them.
	 */
	if (fork() == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
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

/* check() with @who saying who ran the sequence */
/*
 * The cells of the BPF form that differ from the patch's, by cause
 * (docs/policy.md, "The BPF form on a stock kernel"): unshare() and
 * setns() have no hook that sees their flags, so the same-call rule
 * refuses them at their CAP_SYS_ADMIN check, with EPERM, where the patch
 * gives EINVAL; the EINVAL of a setns() step is always that rule's.
 */
static struct outcome stock_want(struct outcome w)
{
	if (bpf_form && w.setns == EINVAL) {
		w.setns = EPERM;
		stock_cause = "EPERM, not EINVAL: no hook of a stock kernel sees unshare()'s or setns()'s flags";
	}
	return w;
}

static bool check_as(const char *name, const char *who, struct outcome want)
{
	char a[4][16], b[4][16];
	bool pass;

	want = stock_want(want);
	pass = out->setns == want.setns && out->fork == want.fork &&
		    out->exec == want.exec &&
		    (want.exec <= 0 || out->alive) && !out->moved;

	tap_case(pass, "%s, %s, mode %d: setns %s, fork %s, exec %s%s%s%s%s",
		 name, who, mode,
		 step(want.setns, a[0]), step(want.fork, a[1]),
		 step(want.exec, a[2]), want.exec > 0 ? ", caller alive" : "",
		 stock_cause ? " [stock kernel + BPF: " : "",
		 stock_cause ? stock_cause : "", stock_cause ? "]" : "");
	stock_cause = NULL;
	if (!pass)
		tap_diag("got: setns %s, fork %s, exec %s, alive %d%s",
			 step(out->setns, b[0]), step(out->fork, b[1]),
			 step(out->exec, b[2]), out->alive,
			 out->moved ? ", and the refused setns() moved its root or cwd" : "");
	return pass;
}

static bool check(const char *name, bool user, struct outcome want)
{
	return check_as(name, user ? "uid 1000 in a user namespace" : "root",
			want);
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
static void hole(int t, const char *path)
{
	int fd = ns_open("self", types[t].file);

	if (fd < 0 || unshare(CLONE_NEWPID | NS_COUPLED))
		_exit(93);
	out->setns = setns(fd, types[t].flag) ? errno : 0;
	if (out->setns)
		return;
	fork_exec_file(0, path);
}

static void seq_hole(int t)
{
	hole(t, NULL);
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
 * order: the hole's state (the init of a new PID namespace with the
 * outside's network), and an execve() that fails for a reason of its own:
 * a file that no binary format takes (ENOEXEC), or one that does not exist
 * (ENOENT). The policy judges an execve() last, once the binary's loader
 * has taken it, so either fails as without the policy and is not counted.
 * This program is the control (kind ORDER_PROGRAM).
 */
enum { ORDER_NOEXEC, ORDER_MISSING, ORDER_PROGRAM, ORDER_NR };
static const char *const order_names[ORDER_NR] = {
	"order: the hole's init execs a file no binary format takes",
	"order: the hole's init execs a file that does not exist",
	"order: the hole's init execs this program (the control)",
};
#define NOEXEC_FILE	"/tmp/state-noexec"

static void seq_order(int kind)
{
	static const char *const paths[ORDER_NR] = {
		[ORDER_NOEXEC] = NOEXEC_FILE,
		[ORDER_MISSING] = "/nonexistent/state",
		[ORDER_PROGRAM] = NULL,		/* this program */
	};

	hole(2, paths[kind]);	/* types[2]: the network namespace */
}

/*
 * On a stock kernel the BPF form judges execve() at bprm_creds_for_exec,
 * before the binary loaders: a file no format takes is judged, and
 * refused where the hole's execve() is.
 */
static bool stock_noexec(int kind)
{
	return bpf_form && kind == ORDER_NOEXEC;
}

static struct outcome want_order(int kind)
{
	struct outcome w = want_hole();

	if (stock_noexec(kind) && w.exec == EPERM) {
		stock_cause = "EPERM, not ENOEXEC: the exec hook comes before the binary loaders";
		return w;
	}
	if (w.exec != NONE && kind != ORDER_PROGRAM)
		w.exec = kind == ORDER_NOEXEC ? ENOEXEC : ENOENT;
	return w;
}

/*
 * lifetime: the owner of a namespace is recorded in every mode, and must
 * change nothing in mode 0: a network namespace that outlives the PID
 * namespace it belongs to (held here by an open file, as "ip netns add"
 * pins one by a bind mount) must not keep the PID namespace alive, nor its
 * count in user.max_pid_namespaces. With that limit at LIFETIME_LIMIT,
 * LIFETIME_ROUNDS children each unshare(NEWPID|NEWNS|NEWIPC|NEWNET) and
 * exit while the test holds their network namespaces open: every round
 * must succeed. A PID namespace's count drops an RCU grace period after it
 * is freed, so a round that gets ENOSPC waits and tries again, for up to
 * 2 s; if the namespaces were kept alive, the rounds past the limit
 * would fail for good.
 */
#define LIFETIME_LIMIT	6
#define LIFETIME_ROUNDS	(4 * LIFETIME_LIMIT)
#define MAX_PID_NS	"/proc/sys/user/max_pid_namespaces"

/* One round: the child's errno (0 if it unshared), its netns in *fd */
static int lifetime_round(int *fd)
{
	int sync[2], err = 0;
	char path[64], byte;
	pid_t pid;

	if (pipe2(sync, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid == 0) {
		close(sync[0]);
		byte = unshare(CLONE_NEWPID | NS_COUPLED) ? (char)errno : 0;
		(void)!write(sync[1], &byte, 1);
		pause();	/* until the test has opened our netns */
		_exit(0);
	}
	close(sync[1]);
	if (pid < 0 || read(sync[0], &byte, 1) != 1)
		err = EIO;
	else
		err = byte;
	close(sync[0]);
	*fd = -1;
	if (!err) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			err = EIO;
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		wait_status(pid);
	}
	return err;
}

static void lifetime_case(void)
{
	int fds[LIFETIME_ROUNDS], r, tries, err = 0, waits = 0, done = 0;
	char old[32] = "", lim[16];
	FILE *f = fopen(MAX_PID_NS, "re");

	if (!f || !fgets(old, sizeof(old), f)) {
		printf("Bail out! cannot read %s\n", MAX_PID_NS);
		exit(1);
	}
	fclose(f);
	snprintf(lim, sizeof(lim), "%d", LIFETIME_LIMIT);
	write_file(MAX_PID_NS, lim);
	for (r = 0; r < LIFETIME_ROUNDS; r++) {
		for (tries = 0; tries < 40; tries++) {
			err = lifetime_round(&fds[r]);
			if (err != ENOSPC)
				break;
			waits++;
			usleep(50000);
		}
		if (err)
			break;
		done++;
	}
	write_file(MAX_PID_NS, old);
	for (r = 0; r < done; r++)
		close(fds[r]);
	tap_case(done == LIFETIME_ROUNDS,
		 "lifetime, mode %d: %d PID namespaces whose netns outlives them, user.max_pid_namespaces %d: %d made (%d waits of 50 ms)%s%s",
		 mode, LIFETIME_ROUNDS, LIFETIME_LIMIT, done, waits,
		 err ? ", then " : "", err ? strerrorname_np(err) : "");
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

/*
 * Wait until @pid is a zombie or gone, for at most 10 s. An exiting init
 * leaves its namespaces in do_exit() before its PID namespace dies (in
 * zap_pid_ns_processes(), from exit_notify()): until then the namespace is
 * still live, and what it claimed is still its own. A zombie has passed
 * both.
 */
static void wait_zombie(pid_t pid)
{
	char path[64], buf[512], *p;
	int i;

	for (i = 0; i < 1000; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		if (!f)
			return;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
			return;
		usleep(10000);
	}
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
	wait_zombie(init);	/* the leader, its thread still running */
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
 * The init of a PID namespace created uncoupled in mode @born, then the
 * mode of the test set again. The init waits for what the sequence writes
 * to *@go (it closes it when done): a network namespace's path, which it
 * setns() into first, or nothing; then it calls execve(). Returns the
 * init's PID, or -1 (out->fork says why).
 */
static pid_t old_init(int born, int *go)
{
	char path[64] = "";
	int pipefd[2], fd;
	pid_t pid;

	set_mode(born);
	if (pipe(pipefd))
		_exit(105);
	pid = raw_clone(true, CLONE_NEWPID);
	if (pid < 0) {
		out->fork = errno;
		set_mode(mode);
		return -1;
	}
	if (pid == 0) {
		close(pipefd[1]);
		(void)!read(pipefd[0], path, sizeof(path) - 1);
		if (path[0]) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				_exit(118);
			out->setns = setns(fd, CLONE_NEWNET) ? errno : 0;
			if (out->setns)
				_exit(STILL);
		}
		try_exec();
	}
	out->fork = 0;
	close(pipefd[0]);
	set_mode(mode);
	*go = pipefd[1];
	return pid;
}

/*
 * predates: a PID namespace created uncoupled in mode @born, whose init
 * calls execve() after the mode is raised to 2 or 3: logged, not refused.
 */
static void seq_predates(int born)
{
	int go;
	pid_t pid = old_init(born, &go);

	if (pid < 0)
		return;
	close(go);
	wait_exec(pid);
}

/*
 * claims: a namespace of @type made by the sequence (on the host) and
 * pinned by an fd, which the sequence then leaves, as podman, a CRI
 * (ip netns add, cri-o's pinns) and systemd do with a network namespace.
 */
static int pin_new(uint64_t type, const char *file)
{
	int old = ns_open("self", file), pinned;

	if (old < 0 || unshare(type))
		_exit(106);
	pinned = ns_open("self", file);
	if (pinned < 0 || setns(old, type))
		_exit(107);
	close(old);
	return pinned;
}

/* exec this program to pause, after writing a byte to @fd */
static void exec_pause(int fd)
{
	char arg[16], *argv[] = { "state", "--pause", arg, NULL };
	extern char **environ;

	snprintf(arg, sizeof(arg), "%d", fd);
	syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	_exit(STILL);
}

/*
 * A container built on the pinned @net (and @ipc, if >= 0), CNI style: a
 * bootstrap on the host setns() into them and unshare()s the PID and
 * mount namespaces; its init execs (and pauses, if @pause). Returns the
 * init's PID, or -errno of the step that failed (out->setns for the
 * unshare(), out->fork for the fork).
 */
static pid_t cni_container(int net, int ipc, bool pause)
{
	int ready[2];
	pid_t boot, init = -1;
	char byte;

	if (pipe(ready))
		_exit(108);
	boot = fork();
	if (boot == 0) {
		close(ready[0]);
		if (setns(net, CLONE_NEWNET) || (ipc >= 0 && setns(ipc, CLONE_NEWIPC)))
			_exit(109);
		out->setns = unshare(CLONE_NEWPID | CLONE_NEWNS |
				     (ipc >= 0 ? 0 : CLONE_NEWIPC)) ? errno : 0;
		if (out->setns)
			_exit(0);
		init = fork();
		if (init < 0) {
			out->fork = errno;
			_exit(0);
		}
		if (init == 0) {
			if (pause)
				exec_pause(ready[1]);
			try_exec();
		}
		out->fork = 0;
		if (pause) {
			/* the bootstrap leaves once the init runs, as runc's does */
			_exit(0);
		}
		wait_exec(init);
		_exit(0);
	}
	close(ready[1]);
	if (pause && read(ready[0], &byte, 1) == 1)
		init = 1;
	close(ready[0]);
	waitpid(boot, NULL, 0);
	return init;
}

enum claim {
	CLAIM_PODMAN,		/* the init setns() into a pinned netns */
	CLAIM_CNI,		/* bootstrap joins net and ipc, unshares the rest */
	CLAIM_APP,		/* a pod's app container, its own PID namespace */
	CLAIM_SHARED_PID,	/* a pod member in the sandbox's PID namespace */
	CLAIM_MNT_FIRST,	/* crun --pid=container:X: a new mnt, then the pid join */
	CLAIM_REVERSED,		/* unshare NEWNS|NEWIPC|NEWNET, then NEWPID */
	CLAIM_SECOND,		/* a second container on a claimed netns */
	CLAIM_AGAIN,		/* a new container after the claimer died */
	CLAIM_NR
};

static const char *const claim_names[CLAIM_NR] = {
	"claim: podman's default network: a netns made on the host, pinned, joined by the container's init",
	"claim: CNI pod sandbox: the bootstrap joins a pinned netns and ipc, unshares NEWPID|NEWNS",
	"claim: a pod's app container with its own PID namespace on the sandbox's net and ipc",
	"claim: a shared-PID pod member: the sandbox's net, ipc and PID namespace, a new mnt",
	"claim: --pid=container:X as crun does it: a new mnt on the host, then the PID join",
	"claim: the reversed order: unshare NEWNS|NEWIPC|NEWNET, then unshare NEWPID, fork, exec",
	"claim: a second container on a netns that a live container claimed",
	"claim: a new container on a netns whose claimer died",
};

/* podman: clone(NEWPID|NEWNS|NEWIPC), the init joins @net and execs */
static void podman_init(int net)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC);

	if (pid < 0) {
		out->fork = errno;
		return;
	}
	if (pid == 0) {
		out->setns = setns(net, CLONE_NEWNET) ? errno : 0;
		if (out->setns)
			_exit(STILL);
		try_exec();
	}
	out->fork = 0;
	wait_exec(pid);
}

/* The sandbox of the pod cases, made in mode 3, that waits. */
static void sandbox(int net, int ipc)
{
	set_mode(PIDNS_STAGE);
	if (cni_container(net, ipc, true) != 1)
		_exit(110);
	*out = (struct outcome){ NONE, NONE, NONE, 0, 0 };
	set_mode(mode);
}

/* A task other than the caller in @net (the sandbox's init), or 0 */
static pid_t find_member(int net)
{
	char path[300], link[64], want[64];
	struct dirent *d;
	struct stat st;
	pid_t pid = 0;
	DIR *dir;

	if (fstat(net, &st) || !(dir = opendir("/proc")))
		_exit(111);
	snprintf(want, sizeof(want), "net:[%lu]", (unsigned long)st.st_ino);
	while (!pid && (d = readdir(dir))) {
		ssize_t n;

		if (atoi(d->d_name) <= 0 || atoi(d->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, want))
			pid = atoi(d->d_name);
	}
	closedir(dir);
	return pid;
}

static pid_t find_init(int net)
{
	pid_t pid = find_member(net);

	if (!pid)
		_exit(112);
	return pid;
}

static void seq_claim(int c)
{
	int net = pin_new(CLONE_NEWNET, "net"), ipc = -1, fd;
	char pid[16];
	pid_t init;

	switch (c) {
	case CLAIM_PODMAN:
		podman_init(net);
		break;
	case CLAIM_CNI:
		ipc = pin_new(CLONE_NEWIPC, "ipc");
		cni_container(net, ipc, false);
		break;
	case CLAIM_APP:
		ipc = pin_new(CLONE_NEWIPC, "ipc");
		sandbox(net, ipc);
		cni_container(net, ipc, false);
		break;
	case CLAIM_SHARED_PID:
		ipc = pin_new(CLONE_NEWIPC, "ipc");
		sandbox(net, ipc);
		snprintf(pid, sizeof(pid), "%d", find_init(net));
		fd = ns_open(pid, "pid");
		out->setns = fd < 0 || setns(net, CLONE_NEWNET) ||
			     setns(ipc, CLONE_NEWIPC) || setns(fd, CLONE_NEWPID) ||
			     unshare(CLONE_NEWNS) ? errno : 0;
		if (!out->setns)
			fork_exec(0);
		break;
	case CLAIM_MNT_FIRST:
		target_start(&box, CLONE_NEWPID | NS_COUPLED, NULL);
		out->setns = unshare(CLONE_NEWNS) ||
			     setns(box.pidfd, CLONE_NEWIPC | CLONE_NEWNET) ||
			     (fd = box_pidns()) < 0 || setns(fd, CLONE_NEWPID) ?
			     errno : 0;
		if (!out->setns)
			fork_exec(0);
		target_stop(&box);
		break;
	case CLAIM_REVERSED:
		out->setns = unshare(NS_COUPLED) || unshare(CLONE_NEWPID) ?
			     errno : 0;
		if (!out->setns)
			fork_exec(0);
		break;
	case CLAIM_SECOND:
	case CLAIM_AGAIN:
		/* The first container claims @net in mode 3, and waits. */
		set_mode(PIDNS_STAGE);
		if (cni_container(net, -1, true) != 1)
			_exit(113);
		set_mode(mode);
		init = find_init(net);
		if (c == CLAIM_AGAIN) {
			kill(init, SIGKILL);
			wait_zombie(init);
		}
		*out = (struct outcome){ NONE, NONE, NONE, 0, 0 };
		podman_init(net);
		if (c == CLAIM_SECOND)
			kill(init, SIGKILL);
		break;
	}
	if (c == CLAIM_APP || c == CLAIM_SHARED_PID)
		kill(find_init(net), SIGKILL);
}

static struct outcome want_claim(int c)
{
	struct outcome w = { 0, 0, 0, 0, 0 };

	switch (c) {
	case CLAIM_PODMAN:
	case CLAIM_SECOND:
	case CLAIM_AGAIN:
		if (mode == PIDNS_ENFORCE)	/* clone without NEWNET */
			w = (struct outcome){ NONE, EINVAL, NONE, 0, 0 };
		else if (c == CLAIM_SECOND && mode == PIDNS_STAGE)
			w = (struct outcome){ EPERM, 0, NONE, 0, 0 };
		break;
	case CLAIM_CNI:
	case CLAIM_REVERSED:
		if (mode == PIDNS_ENFORCE)	/* unshare(NEWPID) without all */
			w = (struct outcome){ EINVAL, NONE, NONE, 0, 0 };
		break;
	case CLAIM_APP:
		if (mode == PIDNS_ENFORCE)
			w = (struct outcome){ EINVAL, NONE, NONE, 0, 0 };
		else if (mode == PIDNS_STAGE)	/* the sandbox owns its net */
			w.exec = EPERM;
		break;
	}
	return w;
}

/*
 * tools: the namespace calls of real software, as its sources at Debian's
 * versions make them, raw (docs/compatibility.md has the real tools,
 * measured where they run in the guest):
 *
 *  - Firefox ESR's probe (SandboxInfo.cpp, CanCreateUserNamespace(), at
 *    every start): clone(CLONE_NEWUSER), and in the child
 *    unshare(CLONE_NEWPID) alone; the child never forks. A failure makes
 *    Firefox start every child process with a plain fork(): no user,
 *    network or IPC namespace, no chroot. Its content processes
 *    (SandboxLaunch.cpp) get clone(CLONE_NEWUSER|CLONE_NEWIPC|
 *    CLONE_NEWNET), never CLONE_NEWPID, and execve();
 *  - sbuild 0.85's --chroot-mode=unshare: unshare(NEWUSER|NEWNS|NEWPID|
 *    NEWUTS|NEWIPC) (NEWNET only for the dpkg-buildpackage step), a fork,
 *    whose child (PID 1) execs "sh -c ... chroot";
 *  - mmdebstrap's --mode=unshare: the same flags, never NEWNET; the PID 1
 *    it forks runs Perl and does not exec, its children do;
 *  - autopkgtest-virt-unshare: unshare(NEWUSER|NEWNS), then
 *    unshare --ipc --mount --pid --uts --cgroup --fork: PID 1 execs;
 *  - systemd 257's PrivatePIDs= with PrivateNetwork= and PrivateIPC=: the
 *    executor unshare()s the network and IPC namespaces, in the host's PID
 *    namespace, then clone(CLONE_NEWPID) alone, hands the child's pidfd to
 *    the manager, tells the child to go on and _exit()s; the child
 *    unshare()s its mount namespace and execs. Whether the executor is
 *    still in the network namespace at the child's execve() is a race:
 *    both sides of it are run, and PrivatePIDs= without the other two.
 *
 * out->setns is the call that creates the PID namespace, out->fork the
 * fork of its PID 1 (or of a tool's process), out->exec the first
 * execve() in it.
 */
enum tool {
	TOOL_FIREFOX_PROBE,
	TOOL_FIREFOX_CHILD,
	TOOL_SBUILD,
	TOOL_SBUILD_BUILD,
	TOOL_MMDEBSTRAP,
	TOOL_AUTOPKGTEST,
	TOOL_PRIVATEPIDS_ALIVE,
	TOOL_PRIVATEPIDS_GONE,
	TOOL_PRIVATEPIDS_ONLY,
	TOOL_NR
};

static const char *const tool_names[TOOL_NR] = {
	"tools: Firefox's probe: clone(NEWUSER), the child unshare(NEWPID)",
	"tools: a Firefox content process: clone(NEWUSER|NEWIPC|NEWNET), exec",
	"tools: sbuild --chroot-mode=unshare: unshare(NEWUSER|NEWNS|NEWPID|NEWUTS|NEWIPC), fork, exec",
	"tools: sbuild's build step: the same with NEWNET, fork, exec",
	"tools: mmdebstrap --mode=unshare: unshare(NEWUSER|NEWNS|NEWPID|NEWUTS|NEWIPC), a PID 1 that does not exec forks one that does",
	"tools: autopkgtest-virt-unshare: unshare(NEWUSER|NEWNS), unshare(NEWIPC|NEWNS|NEWPID|NEWUTS|NEWCGROUP), fork, exec",
	"tools: PrivatePIDs= PrivateNetwork= PrivateIPC=: the executor still in the netns at the init's exec",
	"tools: PrivatePIDs= PrivateNetwork= PrivateIPC=: the executor gone before the init's exec",
	"tools: PrivatePIDs= alone: clone(NEWPID), the init unshares NEWNS, exec",
};

#define DEBIAN_BUILD_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | \
			    CLONE_NEWUTS | CLONE_NEWIPC)

/*
 * systemd's executor: @net_ipc: unshare(NEWNET), unshare(NEWIPC) first;
 * clone(CLONE_NEWPID); the child waits for the word, unshare(NEWNS),
 * execs. @gone: the executor exits before the child reads the word (EOF),
 * or else writes it and waits for the child's end.
 */
static void privatepids(bool net_ipc, bool gone)
{
	int go[2];
	char byte;
	pid_t init;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(go))
		_exit(120);
	if (fork() == 0) {	/* the executor */
		if (net_ipc && (unshare(CLONE_NEWNET) || unshare(CLONE_NEWIPC)))
			_exit(121);
		init = raw_clone(false, CLONE_NEWPID);
		if (init < 0) {
			out->fork = errno;
			_exit(0);
		}
		if (init == 0) {
			close(go[1]);
			/* one byte, or EOF once the executor is gone */
			(void)!read(go[0], &byte, 1);
			if (unshare(CLONE_NEWNS))
				_exit(122);
			try_exec();
		}
		out->fork = 0;
		close(go[0]);
		if (gone)
			_exit(0);
		(void)!write(go[1], "", 1);
		wait_exec(init);
		_exit(0);
	}
	close(go[0]);
	close(go[1]);
	/* the executor, then (reparented to this subreaper) its child */
	while (waitpid(-1, &init, 0) > 0) {
		/* the executor exits 0 */
		if (out->exec == NONE && WIFEXITED(init) && WEXITSTATUS(init))
			exec_status(WEXITSTATUS(init));
	}
}

static void seq_tool(int t)
{
	pid_t pid;

	/* The desktop and build tools run as a user; systemd as root. */
	if (t < TOOL_PRIVATEPIDS_ALIVE)
		become_user(USER);
	switch (t) {
	case TOOL_FIREFOX_PROBE:
		pid = raw_clone(false, CLONE_NEWUSER);
		if (pid == 0)
			_exit(unshare(CLONE_NEWPID) ? errno : 0);
		out->setns = pid < 0 ? ODD : wait_status(pid);
		break;
	case TOOL_FIREFOX_CHILD:	/* clone(), as Firefox calls it */
		fork_exec_with(false, CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWNET,
			       NULL);
		break;
	case TOOL_SBUILD:
	case TOOL_SBUILD_BUILD:
	case TOOL_AUTOPKGTEST:
		if (t == TOOL_AUTOPKGTEST &&
		    unshare(CLONE_NEWUSER | CLONE_NEWNS))
			_exit(123);
		out->setns = unshare(t == TOOL_AUTOPKGTEST ?
				     CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWPID |
				     CLONE_NEWUTS | CLONE_NEWCGROUP :
				     DEBIAN_BUILD_FLAGS |
				     (t == TOOL_SBUILD_BUILD ? CLONE_NEWNET : 0)) ?
			     errno : 0;
		if (!out->setns)
			fork_exec(0);
		break;
	case TOOL_MMDEBSTRAP:
		out->setns = unshare(DEBIAN_BUILD_FLAGS) ? errno : 0;
		if (out->setns)
			break;
		pid = fork();
		if (pid < 0) {
			out->fork = errno;
			break;
		}
		if (pid == 0) {		/* PID 1: Perl, no execve() */
			fork_exec(0);
			_exit(out->fork == 0 ? 0 : 124);
		}
		waitpid(pid, NULL, 0);
		break;
	case TOOL_PRIVATEPIDS_ALIVE:
	case TOOL_PRIVATEPIDS_GONE:
		privatepids(true, t == TOOL_PRIVATEPIDS_GONE);
		break;
	case TOOL_PRIVATEPIDS_ONLY:
		privatepids(false, false);
		break;
	}
}

static struct outcome want_tool(int t)
{
	struct outcome w = { 0, 0, 0, 0, 0 };

	switch (t) {
	case TOOL_FIREFOX_PROBE:
		w = (struct outcome){ 0, NONE, NONE, 0, 0 };
		if (mode == PIDNS_ENFORCE)	/* NEWPID alone */
			w.setns = EINVAL;
		break;
	case TOOL_FIREFOX_CHILD:
	case TOOL_SBUILD_BUILD:
		w.setns = t == TOOL_SBUILD_BUILD ? 0 : NONE;
		break;			/* no NEWPID, or all four */
	case TOOL_SBUILD:
	case TOOL_MMDEBSTRAP:
	case TOOL_AUTOPKGTEST:
		if (mode == PIDNS_ENFORCE)
			w = (struct outcome){ EINVAL, NONE, NONE, 0, 0 };
		else if (mode == PIDNS_STAGE && t == TOOL_MMDEBSTRAP)
			/*
			 * PID 1 (Perl) forks with the host's network: stage
			 * mode's window is the init's alone (patch 16)
			 */
			w = (struct outcome){ 0, EINVAL, NONE, 0, 0 };
		else if (mode == PIDNS_STAGE)	/* the host's network */
			w.exec = EPERM;
		break;
	case TOOL_PRIVATEPIDS_ALIVE:
	case TOOL_PRIVATEPIDS_GONE:
	case TOOL_PRIVATEPIDS_ONLY:
		w.setns = NONE;
		if (mode == PIDNS_ENFORCE)	/* clone(CLONE_NEWPID) alone */
			w = (struct outcome){ NONE, EINVAL, NONE, 0, 0 };
		else if (mode == PIDNS_STAGE && t != TOOL_PRIVATEPIDS_GONE)
			w.exec = EPERM;	/* the executor, or the host, shares */
		break;
	}
	return w;
}

/*
 * window: can a fork enter a PID namespace that has no init yet, and not
 * become its PID 1? Stage mode exempts the fork that makes the init, and
 * an earlier version of the series took "the PID namespace has no
 * child_reaper" to mean "this fork makes the init": a second fork into
 * such a PID namespace would have gone unjudged with PID 2. After
 * unshare(CLONE_NEWPID) only the caller has the new PID namespace P for
 * its children, so a second fork needs a second task with P as
 * pid_for_children, or a PID other than 1 for the first. Each door,
 * tried from the unsharer (one before P has an init): a thread
 * (CLONE_THREAD: EINVAL), a nested PID namespace
 * whose NS_GET_PARENT would give P to others (clone(CLONE_NEWPID): EINVAL,
 * copy_pid_ns()), P's file (/proc/self/ns/pid_for_children: ENOENT until
 * there is an init), and clone3() with set_tid asking for PID 2 (EINVAL:
 * "a PID != 1 ... and no PID 1"). Then the control: the same clone3()
 * asking for PID 1 makes the init. Returns
 * how many doors were open (a door's errno is told).
 */
static int window_case(void)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t set_tid[2] = { 2, 0 };
	int *open_doors = &out->alive;
	pid_t pid;

	*open_doors = -1;
	pid = fork();
	if (pid == 0) {
		int doors = 0, fd;
		pid_t c;

		if (unshare(CLONE_NEWPID | NS_COUPLED))
			_exit(91);
		c = raw_clone(true, CLONE_THREAD | CLONE_SIGHAND | CLONE_VM);
		if (c == 0)
			_exit(0);
		doors += c >= 0 || errno != EINVAL;
		c = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
		if (c == 0)
			_exit(0);
		if (c > 0)
			wait_status(c);
		doors += c >= 0 || errno != EINVAL;
		fd = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
		doors += fd >= 0 || errno != ENOENT;
		/* set_tid: the PID in P (level 1), then in the host's */
		args.set_tid = (uint64_t)(uintptr_t)set_tid;
		args.set_tid_size = 1;
		c = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (c == 0)
			_exit(0);
		if (c > 0)
			wait_status(c);
		doors += c >= 0 || errno != EINVAL;
		/* The first fork makes the init: set_tid=1, the control */
		set_tid[0] = 1;
		c = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (c == 0)
			_exit(getpid() == 1 ? 0 : 1);
		doors += c < 0 || wait_status(c) != 0;
		*open_doors = doors;
		_exit(0);
	}
	if (pid < 0 || wait_status(pid) != 0)
		return -1;
	return *open_doors;
}

/*
 * predates, joiners: a PID namespace created uncoupled in mode 0 (its
 * init has the host's namespaces), then, in the mode under test, a new
 * joiner: with the host's namespaces (@isolated false), or isolated at
 * its fork and then setns() back into the host's network.
 */
static void seq_late_joiner(int isolated)
{
	int fd, host = ns_open("self", "net");
	pid_t pid;

	set_mode(PIDNS_OFF);
	target_start(&box, CLONE_NEWPID, NULL);
	set_mode(mode);
	fd = box_pidns();
	if (fd < 0 || host < 0 || setns(fd, CLONE_NEWPID))
		_exit(114);
	if (!isolated) {
		fork_exec(0);
	} else {
		pid = raw_clone(true, NS_COUPLED);
		if (pid < 0) {
			out->fork = errno;
		} else if (pid == 0) {
			out->setns = setns(host, CLONE_NEWNET) ? errno : 0;
			if (out->setns)
				_exit(STILL);
			try_exec();
		} else {
			out->fork = 0;
			wait_exec(pid);
		}
	}
	target_stop(&box);
}

/*
 * predates, new containers: the init of a PID namespace created uncoupled
 * in mode 0 (exempt in modes 2 and 3: it predates them) setns() into the
 * network namespace of a container created in the mode under test, then
 * execve(). The exemption covers the state an old container had, not a
 * new container's namespaces: refused in modes 2 and 3.
 */
static void seq_old_enters_new(int unused)
{
	char path[64];
	int go;
	pid_t pid;

	(void)unused;
	pid = old_init(PIDNS_OFF, &go);
	if (pid < 0)
		return;
	target_start(&box, CLONE_NEWPID | NS_COUPLED, NULL);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)box.pid);
	(void)!write(go, path, strlen(path) + 1);
	close(go);
	wait_exec(pid);
	target_stop(&box);
}

static struct outcome want_old_enters_new(void)
{
	if (!refuses())
		return (struct outcome){ 0, 0, 0, 0, 0 };
	return (struct outcome){ EPERM, 0, NONE, 0, 0 };
}

/*
 * errno order: a task outside the initial PID namespace, in a user
 * namespace, whose fs_struct is shared (a CLONE_FS sibling), setns() into
 * the host's mount namespace, over which it has no CAP_SYS_ADMIN. The
 * kernel without the series says EPERM (mntns_install() checks the
 * permissions before the shared fs_struct's EINVAL): so must every mode.
 */
static int host_mnt = -1;

static void seq_shared_fs(int unused)
{
	pid_t pid, sib;

	(void)unused;
	if (unshare(CLONE_NEWPID | NS_COUPLED))
		_exit(119);
	pid = fork();
	if (pid < 0)
		_exit(120);
	if (pid == 0) {
		sib = raw_clone(false, CLONE_FS);
		if (sib == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		if (sib < 0)
			_exit(121);
		out->setns = setns(host_mnt, CLONE_NEWNS) ? errno : 0;
		kill(sib, SIGKILL);
		_exit(0);
	}
	wait_status(pid);
}

static struct outcome want_late_joiner(bool isolated)
{
	if (!refuses())
		return (struct outcome){ isolated ? 0 : NONE, 0, 0, 0, 0 };
	if (isolated)
		return (struct outcome){ EPERM, 0, NONE, 0, 0 };
	return (struct outcome){ NONE, EINVAL, NONE, 0, 0 };
}

/* NS_GET_PIDNS_OWNER of @fd, as "pid:[N]" and " claimed"; false on error */
static bool owner_of(int fd, char *buf, size_t len)
{
	struct ns_pidns_owner o;

	if (pidns_owner_get(fd, &o))
		return false;
	snprintf(buf, len, "pid:[%llu]%s", (unsigned long long)o.pidns,
		 o.flags & NS_PIDNS_OWNER_CLAIMED ? " claimed" : "");
	return true;
}

/*
 * What NS_GET_PIDNS_OWNER says of podman's pinned netns, before and after
 * the container's init claims it (mode 3), and of a PID namespace file
 * (the PID namespace itself).
 */
static void owner_report(void)
{
	char want[64], before[64] = "?", after[64] = "?", *shared;
	int net, pid_fd, init_fd;
	struct stat host, self;
	pid_t pid;

	shared = shared_alloc(2 * 64);
	set_mode(PIDNS_STAGE);
	net = pin_new(CLONE_NEWNET, "net");
	pid_fd = ns_open("self", "pid");
	if (pid_fd < 0 || fstat(pid_fd, &host))
		_exit(115);
	owner_of(net, before, sizeof(before));
	pid = raw_clone(true, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC);
	if (pid == 0) {
		init_fd = ns_open("self", "pid");
		if (init_fd < 0 || fstat(init_fd, &self) || setns(net, CLONE_NEWNET))
			_exit(1);
		snprintf(shared, 64, "pid:[%llu] claimed",
			 (unsigned long long)self.st_ino);
		owner_of(net, shared + 64, 64);
		_exit(0);
	}
	if (pid < 0 || wait_status(pid) != 0)
		_exit(116);
	snprintf(after, sizeof(after), "%s", shared + 64);
	snprintf(want, sizeof(want), "pid:[%llu]", (unsigned long long)host.st_ino);
	tap_case(!strcmp(before, want),
		 "NS_GET_PIDNS_OWNER: a netns made on the host belongs to the host's PID namespace (%s, want %s)",
		 before, want);
	tap_case(!strcmp(after, shared),
		 "NS_GET_PIDNS_OWNER: once the container's init setns() into it in mode 3, the container's, claimed (%s, want %s)",
		 after, shared);
	{
		struct ns_pidns_owner o = { 0 };
		int e = -pidns_owner_get(pid_fd, &o);

		tap_case(!e && o.pidns == (unsigned long long)host.st_ino &&
			 o.pidns_id == o.ns_id && !o.flags,
			 "NS_GET_PIDNS_OWNER on a PID namespace file: the PID namespace itself (errno %d, pid:[%llu], ids %llu and %llu, want pid:[%llu] and one id)",
			 e, (unsigned long long)o.pidns,
			 (unsigned long long)o.pidns_id,
			 (unsigned long long)o.ns_id,
			 (unsigned long long)host.st_ino);
	}
	{
		char line[256] = "", expect[80];
		FILE *f = popen("nsclone --owners /proc/self/ns/net", "r");

		if (f && !fgets(line, sizeof(line), f))
			line[0] = '\0';
		if (f)
			pclose(f);
		line[strcspn(line, "\n")] = '\0';
		snprintf(expect, sizeof(expect), "belongs to pid:[%llu]",
			 (unsigned long long)host.st_ino);
		tap_case(strstr(line, expect) != NULL,
			 "nsclone --owners names the initial PID namespace as the owner of the host's network (%s)",
			 line);
	}
	close(net);
	close(pid_fd);
	set_mode(mode);
}

int main(int argc, char **argv)
{
	static const int modes[] = {
		PIDNS_OFF, PIDNS_WARN, PIDNS_ENFORCE, PIDNS_STAGE,
	};
	unsigned int m, t, j, i;
	bool user;
	int fd;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return EXEC_OK;
	if (argc > 2 && !strcmp(argv[1], "--pause")) {
		(void)!write(atoi(argv[2]), "", 1);
		for (;;)
			pause();
	}

	printf("TAP version 13\n");
	if (pidns_mode_read() == PIDNS_ABSENT) {
		printf("Bail out! no kernel.pidns_coupling\n");
		return 1;
	}
	bpf_form = pidns_is_bpf();
	if (bpf_form)
		printf("# the BPF form on a kernel without the series: its differing cells are marked\n");
	host_mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (exe_fd < 0) {
		printf("Bail out! /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	out = shared_alloc(sizeof(*out));
	fd = open(NOEXEC_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, "not a program\n", 14) != 14) {
		printf("Bail out! %s: %s\n", NOEXEC_FILE, strerror(errno));
		return 1;
	}
	close(fd);

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
			for (t = 0; !user && t < ORDER_NR; t++) {
				long before = pidns_judged("exec"), counted;
				/* Only the control's execve() is judged */
				long want = (t == ORDER_PROGRAM ||
					     stock_noexec(t)) &&
					    (mode == PIDNS_WARN ||
					     mode == PIDNS_STAGE);

				run(seq_order, t, false);
				check(order_names[t], false, want_order(t));
				counted = pidns_judged("exec") - before;
				tap_case(counted == want,
					 "%s, mode %d: %ld execve() verdicts counted, %ld expected%s",
					 order_names[t], mode, counted, want,
					 stock_noexec(t) && want ?
					 " [stock kernel + BPF: judged, the exec hook comes before the binary loaders]" : "");
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
		for (j = 0; j < CLAIM_NR; j++) {
			run(seq_claim, j, false);
			check(claim_names[j], false, want_claim(j));
		}
		run(seq_claim, CLAIM_REVERSED, true);
		check(claim_names[CLAIM_REVERSED], true, want_claim(CLAIM_REVERSED));
		for (j = 0; j < TOOL_NR; j++) {
			run(seq_tool, j, false);
			check_as(tool_names[j], j < TOOL_PRIVATEPIDS_ALIVE ?
				 "as uid 1000" : "root", want_tool(j));
		}
		lifetime_case();
		i = (unsigned int)window_case();
		tap_case(i == 0,
			 "window, mode %d: after unshare(CLONE_NEWPID), no second task can fork into the PID namespace before its init, nor the first fork take a PID other than 1 (thread, nested PID namespace, pid_for_children file, set_tid=2): %d doors open",
			 mode, (int)i);
		run(seq_late_joiner, 0, false);
		check("predates: a new joiner of a PID namespace made in mode 0 forks with the host's, exec",
		      false, want_late_joiner(false));
		run(seq_late_joiner, 1, false);
		check("predates: a new joiner of a PID namespace made in mode 0 forks isolated, setns back to the host's net, exec",
		      false, want_late_joiner(true));
		run(seq_old_enters_new, 0, false);
		check("predates: the init of a PID namespace made in mode 0 enters the netns of a container made in this mode, exec",
		      false, want_old_enters_new());
		run(seq_shared_fs, 0, true);
		check("errno order: in a PID namespace, a shared fs_struct, setns() into the host's mount namespace without CAP_SYS_ADMIN over it: EPERM as without the series",
		      true, (struct outcome){ EPERM, NONE, NONE, 0, 0 });
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

	mode = PIDNS_STAGE;
	owner_report();

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
