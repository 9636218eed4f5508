// SPDX-License-Identifier: GPL-2.0
/*
 * claims: what carries the state judgement of kernel.pidns_coupling, tried
 * as a namespace maintainer would try it. Each case is a sequence of raw
 * system calls whose outcome the policy defines; the outcome is read from
 * the calls' return values, NS_GET_PIDNS_OWNER and the kernel's counters,
 * never from a model of the kernel.
 *
 *  - refused-setns: a claim takes effect only with the verdict of its
 *    request. A container's init whose setns(pidfd, NEWNET|NEWIPC) is
 *    refused (the IPC namespace is the host's) leaves the pinned network
 *    namespace it asked for with its owner, and a later container can
 *    still claim it;
 *  - refused-join: the same for a joiner's fork refused with EINVAL;
 *  - same-point: modes 1, 2 and 3 judge a sequence at the same points: an
 *    init forked with a claimable network namespace claims it at its fork
 *    in every mode, so a host task that enters the namespace afterwards
 *    (the accepted ancestor edge) does not turn mode 3's verdict at the
 *    init's execve() against what mode 2 accepted;
 *  - exemption: a PID namespace made before the mode was raised keeps only
 *    what it had: its init may not setns() into the host's network or IPC
 *    namespace after the mode is raised;
 *  - builder: a task outside a PID namespace that holds the PID
 *    namespace's own mount, IPC and network namespaces (the caller of
 *    unshare(NEWPID|NEWNS|NEWIPC|NEWNET) without a fork) is judged at its
 *    execve(), with and without the PID namespace's init alive, and after
 *    it joins a PID namespace nested in the one it built (builder-nested);
 *    a builder's refused execve() claims nothing (exec-claim);
 *  - builder-own: a builder's own state is judged as well: the init of a
 *    PID namespace that predates the mode, in a new container's network
 *    namespace, is refused at execve() whether or not it builds one;
 *  - window: stage mode's window is PID 1 alone until its execve(): a
 *    fork inside the new PID namespace while it still shares the host's
 *    namespaces is judged (a thread is not a new process, and is not);
 *    and so is its making the init of a nested PID namespace
 *    (window-nested), which would otherwise run unjudged as well;
 *  - setns-state: setns(pidfd, CLONE_NEWPID) by a task that already has
 *    the container's mount, IPC and network namespaces is judged by the
 *    state it produces, in mode 2 as in the others;
 *  - ancestor: the accepted edge, decided: a host task that enters a
 *    running container's mount, IPC and network namespaces and executes
 *    there (nsenter -n, ip netns exec, CNI plugins) is neither refused
 *    nor recorded;
 *  - stats: kernel.pidns_coupling_stats reads whole at any offset and
 *    with any read size;
 *  - clone-alias: legacy clone() refuses CLONE_NEWCONTAINER where the
 *    alias turns the exit signal into an invalid one, in every mode but
 *    0; 0x40 alone (SIGRTMAX) stays a legal exit signal; so does the
 *    32-bit clone() (compat-clone);
 *  - owner-id: NS_GET_PIDNS_OWNER names a PID namespace by an id that is
 *    never reused: a network namespace that outlives its container's PID
 *    namespace is handed to the host, and the next PID namespace made,
 *    which takes the ended one's inode number, has another id;
 *  - pending: a fork's claims wait for its commit point without holding
 *    anything that another request waits on: a fork stopped in put_user()
 *    by userfaultfd blocks no other claim, and a claim against the
 *    pending one is refused.
 *
 * Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef __WALL
#define __WALL 0x40000000
#endif

#define NONE	(-1)	/* a step that was not reached */
#define EXEC_OK	7	/* the status of the program that execve() started */
#define STILL	50	/* the status of a caller whose execve() failed */
#define NSTEP	6

/* What a sequence's steps returned (0, an errno or NONE), and owners. */
struct result {
	int step[NSTEP];
	unsigned long long owner;	/* NS_GET_PIDNS_OWNER's pidns, or 0 */
	unsigned long long owner_flags;
	long counted;			/* verdicts counted during a step */
};

static struct result *r;
static int exe_fd;
static unsigned long long init_pidns;	/* inode of the initial PID namespace */
static int mode;

static int err_of(long ret)
{
	return ret < 0 ? errno : 0;
}

/* execve() this program, which exits EXEC_OK; else record and exit STILL */
static void __attribute__((noreturn)) exec_self(int slot)
{
	char *argv[] = { "claims", "--exit", NULL };
	extern char **environ;

	syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	r->step[slot] = errno;
	_exit(STILL);
}

/* The step's value from the exit status of a child that ran exec_self() */
static int exec_result(int st, int slot)
{
	if (st == EXEC_OK)
		return 0;
	if (st == STILL)
		return r->step[slot];
	return 1000 + st;	/* no case expects it */
}

static int ns_open(pid_t pid, const char *file)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, file);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static unsigned long long ino_of(pid_t pid, const char *file)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, file);
	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

/* NS_GET_PIDNS_OWNER of @fd into r->owner and r->owner_flags */
static void read_owner(int fd)
{
	struct ns_pidns_owner o;

	if (ioctl(fd, NS_GET_PIDNS_OWNER, &o)) {
		r->owner = 0;
		return;
	}
	r->owner = o.pidns;
	r->owner_flags = o.flags;
}

/*
 * exec_self(), and if it fails, the owner of the caller's network
 * namespace while the caller still lives (an owner's death hands what it
 * claimed back to its parent).
 */
static void __attribute__((noreturn)) try_exec_owner(int slot)
{
	char *argv[] = { "claims", "--exit", NULL };
	extern char **environ;
	int fd;

	syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	r->step[slot] = errno;
	fd = ns_open(0, "net");
	if (fd >= 0)
		read_owner(fd);
	_exit(STILL);
}

/*
 * A network namespace made here and pinned by the fd returned, which this
 * process leaves at once: no task is in it (as "ip netns add" leaves one).
 */
static int pinned_netns(void)
{
	int old = ns_open(0, "net"), n;

	if (old < 0 || unshare(CLONE_NEWNET))
		_exit(101);
	n = ns_open(0, "net");
	if (n < 0 || setns(old, CLONE_NEWNET))
		_exit(102);
	close(old);
	return n;
}

/* A pipe that one side waits on until the other writes a byte. */
struct gate {
	int fd[2];
};

static void gate_make(struct gate *g)
{
	if (pipe2(g->fd, O_CLOEXEC)) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
}

static void gate_open(struct gate *g)
{
	(void)!write(g->fd[1], "", 1);
}

static void gate_wait(struct gate *g)
{
	char byte;

	if (read(g->fd[0], &byte, 1) != 1)
		_exit(97);
}

/* A child that dies with its parent and waits to be killed */
static void __attribute__((noreturn)) linger(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
}

static void reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
	}
}

/* Run @fn in a child of its own, so the test's namespaces never change */
static void run(void (*fn)(void))
{
	pid_t pid;
	int st, i;

	for (i = 0; i < NSTEP; i++)
		r->step[i] = NONE;
	r->owner = r->owner_flags = 0;
	r->counted = 0;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		fn();
		_exit(0);
	}
	st = wait_status(pid);
	if (st)
		tap_diag("the sequence's process ended with %d", st);
}

static const char *name_of(int v, char *buf)
{
	if (v == NONE)
		return "-";
	if (v == 0)
		return "0";
	snprintf(buf, 24, "%s", v == EPERM ? "EPERM" : v == EINVAL ? "EINVAL" :
		 v >= 1000 ? "odd status" :
		 strerrorname_np(v) ? strerrorname_np(v) : "errno");
	return buf;
}

/* One TAP case: the steps in @want[0..@n) against r->step[] */
static bool steps(const char *name, const char *const *labels,
		  const int *want, int n)
{
	char a[NSTEP][24], b[NSTEP][24], wanted[256] = "", got[256] = "";
	bool pass = true;
	int i;

	for (i = 0; i < n; i++) {
		size_t lw = strlen(wanted), lg = strlen(got);

		pass = pass && r->step[i] == want[i];
		snprintf(wanted + lw, sizeof(wanted) - lw, "%s%s %s",
			 i ? ", " : "", labels[i], name_of(want[i], a[i]));
		snprintf(got + lg, sizeof(got) - lg, "%s%s %s",
			 i ? ", " : "", labels[i], name_of(r->step[i], b[i]));
	}
	tap_case(pass, "%s, mode %d: %s", name, mode, wanted);
	if (!pass)
		tap_diag("got: %s", got);
	return pass;
}

static bool refuses(void)
{
	return mode >= PIDNS_ENFORCE;
}

static void owner_case(const char *what)
{
	bool pass = r->owner == init_pidns &&
		    !(r->owner_flags & NS_PIDNS_OWNER_CLAIMED);

	tap_case(pass,
		 "%s, mode %d: the namespace it carried still belongs to the initial PID namespace, unclaimed (pid:[%llu])",
		 what, mode, init_pidns);
	if (!pass)
		tap_diag("NS_GET_PIDNS_OWNER says pid:[%llu]%s", r->owner,
			 r->owner_flags & NS_PIDNS_OWNER_CLAIMED ? " claimed" : "");
}

/* r->owner is the PID namespace of the sequence's builder, claimed */
static void owner_claimed(const char *what)
{
	bool pass = r->owner && r->owner != init_pidns &&
		    (r->owner_flags & NS_PIDNS_OWNER_CLAIMED);

	tap_case(pass,
		 "%s, mode %d: once the fork has ended, the namespace it carried belongs to the new PID namespace, claimed",
		 what, mode);
	if (!pass)
		tap_diag("NS_GET_PIDNS_OWNER says pid:[%llu]%s", r->owner,
			 r->owner_flags & NS_PIDNS_OWNER_CLAIMED ? " claimed" : "");
}

/*
 * refused-setns. P: a host task in a network namespace N of its own,
 * which joins the container's PID namespace for its children (a builder,
 * so no outsider is in N). C, the container's init, asks for P's network
 * and IPC namespaces with one setns(pidfd): the IPC namespace is the
 * host's, which no container can claim, so modes 2 and 3 refuse. Then P
 * leaves N, which only the test's fd pins, and a new container D joins it
 * as podman's init joins its network (modes 2 and 3).
 */
static void seq_refused_setns(void)
{
	struct gate p_go, p_ready, c_go, c_done;
	pid_t p, c, d;
	int pidfd, nfd, st;

	gate_make(&p_go);
	gate_make(&p_ready);
	gate_make(&c_go);
	gate_make(&c_done);
	p = fork();
	if (p == 0) {
		pid_t cpid;
		int fd;

		if (unshare(CLONE_NEWNET))
			_exit(101);
		if (read(p_go.fd[0], &cpid, sizeof(cpid)) != sizeof(cpid))
			_exit(102);
		fd = ns_open(cpid, "pid");
		if (fd < 0 || setns(fd, CLONE_NEWPID))
			_exit(103);
		gate_open(&p_ready);
		linger();
	}
	pidfd = (int)syscall(SYS_pidfd_open, p, 0);
	if (pidfd < 0)
		_exit(104);
	c = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (c == 0) {
		gate_wait(&c_go);
		r->step[0] = err_of(setns(pidfd, CLONE_NEWNET | CLONE_NEWIPC));
		gate_open(&c_done);
		linger();
	}
	if (c < 0)
		_exit(105);
	(void)!write(p_go.fd[1], &c, sizeof(c));
	gate_wait(&p_ready);
	nfd = ns_open(p, "net");
	if (nfd < 0)
		_exit(106);
	gate_open(&c_go);
	gate_wait(&c_done);
	read_owner(nfd);
	reap(p);
	if (refuses()) {
		d = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
		if (d < 0)
			r->step[1] = errno;
		if (d == 0) {
			r->step[1] = err_of(setns(nfd, CLONE_NEWNET));
			if (r->step[1])
				_exit(STILL + 1);
			exec_self(2);
		}
		st = d > 0 ? wait_status(d) : STILL + 1;
		if (st != STILL + 1)
			r->step[2] = exec_result(st, 2);
	}
	reap(c);
}

/*
 * refused-join. J: a host task in a network namespace N of its own that
 * joins a running container's PID namespace and forks with the host's
 * mount and IPC namespaces: refused in modes 2 and 3, whatever N is.
 */
static void seq_refused_join(void)
{
	pid_t c, j;

	c = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (c == 0)
		linger();
	if (c < 0)
		_exit(101);
	j = fork();
	if (j == 0) {
		int fd = ns_open(c, "pid"), nfd;
		pid_t k;

		if (fd < 0 || unshare(CLONE_NEWNET) || setns(fd, CLONE_NEWPID))
			_exit(102);
		k = fork();
		if (k == 0)
			_exit(0);
		r->step[0] = err_of(k);
		if (k > 0)
			waitpid(k, NULL, 0);
		nfd = ns_open(0, "net");
		if (nfd < 0)
			_exit(103);
		read_owner(nfd);
		_exit(0);
	}
	waitpid(j, NULL, 0);
	reap(c);
}

/*
 * same-point. B, on the host, unshares the four namespaces (accepted in
 * every mode), then enters a pinned network namespace N that no task is
 * in, and forks the init: N is claimable at that fork (B is a builder).
 * Then H, a host task, enters N (the accepted ancestor edge), and the
 * init executes.
 */
static void seq_same_point(void)
{
	struct gate init_go, forked, h_ready;
	pid_t b, h;
	int n;

	gate_make(&init_go);
	gate_make(&forked);
	gate_make(&h_ready);
	n = pinned_netns();
	b = fork();
	if (b == 0) {
		pid_t init;

		r->step[0] = err_of(unshare(CLONE_NEWPID | NS_COUPLED)) ?:
			     err_of(setns(n, CLONE_NEWNET));
		if (r->step[0]) {
			gate_open(&forked);
			_exit(0);
		}
		init = fork();
		if (init == 0) {
			gate_wait(&init_go);
			exec_self(2);
		}
		r->step[1] = err_of(init);
		gate_open(&forked);
		if (init > 0)
			r->step[2] = exec_result(wait_status(init), 2);
		_exit(0);
	}
	gate_wait(&forked);
	h = fork();
	if (h == 0) {
		if (setns(n, CLONE_NEWNET))
			_exit(104);
		gate_open(&h_ready);
		linger();
	}
	gate_wait(&h_ready);
	r->counted = pidns_judged("join") + pidns_judged("exec");
	gate_open(&init_go);
	waitpid(b, NULL, 0);
	r->counted = pidns_judged("join") + pidns_judged("exec") - r->counted;
	reap(h);
}

/*
 * exemption. C is made coupled in mode 1; the mode is raised to @raised;
 * C then setns() into the host's network and IPC namespaces (a state it
 * never had) and executes.
 */
static int raised;

static void seq_exemption(void)
{
	int net = ns_open(0, "net"), ipc = ns_open(0, "ipc"), st;
	struct gate go;
	pid_t c;

	gate_make(&go);
	set_mode(PIDNS_WARN);
	c = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (c == 0) {
		gate_wait(&go);
		r->step[0] = err_of(setns(net, CLONE_NEWNET));
		r->step[1] = err_of(setns(ipc, CLONE_NEWIPC));
		exec_self(2);
	}
	if (c < 0)
		_exit(101);
	set_mode(raised);
	gate_open(&go);
	st = wait_status(c);
	r->step[2] = exec_result(st, 2);
	set_mode(mode);
}

/*
 * builder-own. A new container C is made in mode @raised and owns its
 * network namespace. In mode 1, the init I of a coupled PID namespace P
 * made then (so P predates the raise) enters C's network namespace; with
 * @builds, it also unshares NEWPID|NEWNS, which makes it the builder of a
 * PID namespace P2 that predates the raise too, and gives it P2's mount
 * namespace. The mode is raised, and I executes: it runs in P sharing a
 * new container's network namespace from outside, whatever it builds, so
 * it is refused either way (a builder's verdict does not replace its own).
 */
static bool builds;

static void seq_builder_own(void)
{
	struct gate go, ready;
	pid_t c, i;
	int net, st;

	gate_make(&go);
	gate_make(&ready);
	set_mode(raised);
	c = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (c == 0)
		linger();
	if (c < 0)
		_exit(101);
	net = ns_open(c, "net");
	if (net < 0)
		_exit(102);
	set_mode(PIDNS_WARN);
	i = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (i == 0) {
		r->step[0] = err_of(setns(net, CLONE_NEWNET));
		if (builds)
			r->step[1] = err_of(unshare(CLONE_NEWPID | CLONE_NEWNS));
		gate_open(&ready);
		gate_wait(&go);
		exec_self(2);
	}
	if (i < 0)
		_exit(103);
	gate_wait(&ready);
	set_mode(raised);
	gate_open(&go);
	st = wait_status(i);
	r->step[2] = exec_result(st, 2);
	set_mode(mode);
	reap(c);
}

/*
 * builder. B unshares the four namespaces and stays in the initial PID
 * namespace; with @with_init, it forks the init first. Then B executes,
 * in the new PID namespace's mount, IPC and network namespaces.
 */
static bool with_init;

static void seq_builder(void)
{
	pid_t b = fork();

	if (b == 0) {
		r->step[0] = err_of(unshare(CLONE_NEWPID | NS_COUPLED));
		if (r->step[0])
			_exit(0);
		if (with_init) {
			pid_t init = fork();

			if (init == 0)
				linger();
			r->step[1] = err_of(init);
		}
		exec_self(2);
	}
	r->step[2] = exec_result(wait_status(b), 2);
}

/*
 * window. unshare(CLONE_NEWPID) alone and a fork: the init, staged in
 * mode 3, still has the host's namespaces. It forks a child (judged), makes
 * a thread (not judged), then unshares the rest, forks again and executes.
 */
static void *thread_fn(void *arg)
{
	return arg;
}

/* fork() a child that exits at once; its errno in r->step[@slot] */
static void fork_exit(int slot)
{
	pid_t k = fork();

	if (k == 0)
		_exit(0);
	r->step[slot] = err_of(k);
	if (k > 0)
		waitpid(k, NULL, 0);
}

/*
 * unshare(CLONE_NEWPID) alone and a fork: @fn runs in the init, which
 * stage mode leaves with the host's namespaces until its execve(), and
 * which ends by calling exec_self(@slot).
 */
static void staged_init(void (*fn)(void), int slot)
{
	pid_t b = fork();

	if (b == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			_exit(101);
		init = fork();
		if (init == 0)
			fn();
		if (init < 0)
			_exit(103);
		r->step[slot] = exec_result(wait_status(init), slot);
		_exit(0);
	}
	waitpid(b, NULL, 0);
}

static void window_init(void)
{
	long before = pidns_judged("join");
	pthread_t th;

	fork_exit(0);
	r->counted = pidns_judged("join") - before;
	r->step[1] = pthread_create(&th, NULL, thread_fn, NULL);
	if (!r->step[1])
		pthread_join(th, NULL);
	if (unshare(NS_COUPLED))
		_exit(102);
	fork_exit(2);
	exec_self(3);
}

static void seq_window(void)
{
	staged_init(window_init, 3);
}

/*
 * window-nested. As window, but the init makes each new process the init
 * of a PID namespace of its own, which stage mode would let run unjudged
 * for as long as it never executes: clone(CLONE_NEWPID), and, from a
 * thread (so that the init's own namespaces stay), unshare(CLONE_NEWPID)
 * and a fork. A parent that itself shares is not building a container.
 */
static void *nested_fn(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWPID)) {
		r->step[1] = 1000 + errno;
		return NULL;
	}
	fork_exit(1);
	return NULL;
}

static void nested_init(void)
{
	pthread_t th;
	pid_t k = raw_clone(false, CLONE_NEWPID);

	if (k == 0)
		_exit(0);
	r->step[0] = err_of(k);
	if (k > 0)
		waitpid(k, NULL, 0);
	if (pthread_create(&th, NULL, nested_fn, NULL))
		_exit(102);
	pthread_join(th, NULL);
	if (unshare(NS_COUPLED))
		_exit(103);
	exec_self(2);
}

static void seq_window_nested(void)
{
	staged_init(nested_init, 2);
}

/* Send @fd over @sock */
static void send_fd(int sock, int fd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		_exit(98);
}

static int recv_fd(int sock)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * builder-nested. B unshares the four and forks the init I; I makes a
 * coupled PID namespace P2 nested in B's and its init. B, still holding
 * the mount, IPC and network namespaces of the PID namespace it built,
 * joins P2 for its children (a builder of P2 now) and executes.
 */
static void seq_builder_nested(void)
{
	pid_t b = fork();

	if (b == 0) {
		int sv[2], fd;
		pid_t i;

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			_exit(101);
		r->step[0] = err_of(unshare(CLONE_NEWPID | NS_COUPLED));
		if (r->step[0])
			_exit(0);
		i = fork();
		if (i == 0) {
			pid_t i2;

			if (unshare(CLONE_NEWPID | NS_COUPLED))
				_exit(102);
			i2 = fork();
			if (i2 == 0)
				linger();
			fd = ns_open(0, "pid_for_children");
			if (i2 < 0 || fd < 0)
				_exit(103);
			send_fd(sv[1], fd);
			linger();
		}
		fd = recv_fd(sv[0]);
		if (i < 0 || fd < 0)
			_exit(104);
		r->step[1] = err_of(setns(fd, CLONE_NEWPID));
		if (r->step[1])
			_exit(0);
		exec_self(2);
	}
	r->step[2] = exec_result(wait_status(b), 2);
}

/*
 * exec-claim. B enters a pinned network namespace N that no task is in,
 * unshare(CLONE_NEWPID) and forks the init I (mode 3: staged, with the
 * host's mount namespace, so nothing is claimed). I unshares its own
 * mount and IPC namespaces (N could now be claimed), then
 * unshare(CLONE_NEWPID | CLONE_NEWNS), which makes I a builder of a nested
 * PID namespace with that namespace's mount namespace, and executes:
 * refused as a builder's execve(), which must claim nothing. The owner is
 * read by I after the refusal: once I, the init, exits, whatever its PID
 * namespace claimed goes back to the parent.
 */
static void seq_exec_claim(void)
{
	pid_t b;
	int n;

	n = pinned_netns();
	b = fork();
	if (b == 0) {
		pid_t i;

		if (setns(n, CLONE_NEWNET) || unshare(CLONE_NEWPID))
			_exit(103);
		i = fork();
		if (i == 0) {
			r->step[0] = err_of(unshare(CLONE_NEWNS | CLONE_NEWIPC)) ?:
				     err_of(unshare(CLONE_NEWPID | CLONE_NEWNS));
			if (r->step[0])
				_exit(0);
			try_exec_owner(1);
		}
		if (i < 0)
			_exit(104);
		r->step[1] = exec_result(wait_status(i), 1);
		_exit(0);
	}
	waitpid(b, NULL, 0);
}

/*
 * pending. A fork's claims wait for its commit point, and nothing else may
 * wait on them: B, a builder on a pinned network namespace N that no task
 * is in, forks its init with clone3(CLONE_PIDFD) whose pidfd field is on a
 * page that userfaultfd holds, so the fork stops in put_user(), after its
 * check, with N's claim pending. While it stops (its fault read from the
 * userfaultfd shows it), a new container D joins another pinned network
 * namespace N2 (a claim of its own), and D2 joins N (a claim against the
 * pending one). Both must answer at once; D2 is refused in modes 2 and 3.
 * Then the fault is resolved, the fork ends, and N belongs to B's new PID
 * namespace.
 */
#define WAIT_MS 5000

/* Wait up to @ms for a byte on @fd: 0, or ETIMEDOUT */
static int wait_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char byte;

	if (poll(&p, 1, ms) != 1 || read(fd, &byte, 1) != 1)
		return ETIMEDOUT;
	return 0;
}

/*
 * Wait up to @ms for the result that joiner() sends on @fd: that result,
 * or ETIMEDOUT. A result that comes later is not read: the caller records
 * that it did not come at once.
 */
static int wait_result(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int v;

	if (poll(&p, 1, ms) != 1 || read(fd, &v, sizeof(v)) != sizeof(v))
		return ETIMEDOUT;
	return v;
}

/* A new container whose init joins @net; its result on @done */
static pid_t joiner(int net, int done)
{
	pid_t d = raw_clone(true, CLONE_NEWPID | NS_COUPLED);

	if (d == 0) {
		int v = err_of(setns(net, CLONE_NEWNET));

		(void)!write(done, &v, sizeof(v));
		linger();
	}
	return d;
}

static void seq_pending(void)
{
	struct gate d_done, d2_done, owned, go;
	int sv[2], n, n2, uffd;
	struct uffd_msg msg;
	pid_t b, d = -1, d2 = -1;
	void *page;

	gate_make(&d_done);
	gate_make(&d2_done);
	gate_make(&owned);
	gate_make(&go);
	n = pinned_netns();
	n2 = pinned_netns();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		_exit(101);
	b = fork();
	if (b == 0) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg;
		struct clone_args args = { .flags = CLONE_PIDFD,
					   .exit_signal = SIGCHLD };
		pid_t init;

		if (unshare(CLONE_NEWPID | NS_COUPLED) ||
		    setns(n, CLONE_NEWNET))
			_exit(102);
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		reg = (struct uffdio_register){
			.range = { (unsigned long)page, 4096 },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};
		if (uffd < 0 || page == MAP_FAILED ||
		    ioctl(uffd, UFFDIO_API, &api) ||
		    ioctl(uffd, UFFDIO_REGISTER, &reg)) {
			tap_diag("pending: userfaultfd: %s", strerror(errno));
			_exit(103);
		}
		send_fd(sv[1], uffd);
		args.pidfd = (unsigned long)page;
		init = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (init == 0) {
			gate_wait(&go);
			_exit(0);
		}
		r->step[0] = err_of(init);
		if (init > 0) {
			int fd = ns_open(0, "net");

			if (fd >= 0)
				read_owner(fd);
		}
		gate_open(&owned);
		gate_open(&go);
		if (init > 0)
			waitpid(init, NULL, 0);
		_exit(0);
	}
	uffd = recv_fd(sv[0]);
	if (uffd < 0)
		_exit(104);
	{
		struct pollfd p = { .fd = uffd, .events = POLLIN };

		r->step[1] = poll(&p, 1, WAIT_MS) == 1 &&
			     read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
			     msg.event == UFFD_EVENT_PAGEFAULT ? 0 : ETIMEDOUT;
	}
	if (!r->step[1]) {
		d = joiner(n2, d_done.fd[1]);
		r->step[2] = wait_result(d_done.fd[0], WAIT_MS);
		d2 = joiner(n, d2_done.fd[1]);
		r->step[3] = wait_result(d2_done.fd[0], WAIT_MS);
		{
			struct uffdio_zeropage z = {
				.range = { msg.arg.pagefault.address & ~4095ULL, 4096 },
			};

			ioctl(uffd, UFFDIO_ZEROPAGE, &z);
		}
	}
	r->step[4] = wait_byte(owned.fd[0], 2 * WAIT_MS);
	waitpid(b, NULL, 0);
	reap(d);
	reap(d2);
}

/*
 * compat-clone. The 32-bit clone() (int $0x80, as a 32-bit program calls
 * it) with CLONE_NEWCONTAINER | SIGCHLD: refused in modes 1-3, as the
 * 64-bit one is.
 */
static long ia32_clone(unsigned long flags)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(120L), "b"(flags), "c"(0L), "d"(0L), "S"(0L), "D"(0L)
		     : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static void compat_clone_case(void)
{
	long pid = ia32_clone(CLONE_NEWCONTAINER | SIGCHLD);
	bool want = mode != PIDNS_OFF;

	if (pid == 0)
		syscall(SYS_exit, 0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, __WALL);
	if (want)
		tap_case(pid == -EINVAL,
			 "compat-clone, mode %d: the 32-bit clone(CLONE_NEWCONTAINER|SIGCHLD) fails with EINVAL: %ld",
			 mode, pid);
	else
		tap_case(pid > 0,
			 "compat-clone, mode %d: the 32-bit clone(CLONE_NEWCONTAINER|SIGCHLD) forks, as without the series: %ld",
			 mode, pid);
}

/*
 * setns-state and ancestor. T, a host task, enters a running container's
 * mount, IPC and network namespaces with setns(pidfd); for setns-state it
 * then asks for the PID namespace with setns(pidfd, CLONE_NEWPID) and
 * forks a child that executes; for ancestor it executes itself.
 */
static bool then_pid;

static void seq_enter(void)
{
	struct target box;
	pid_t t;

	target_start(&box, CLONE_NEWPID | NS_COUPLED, NULL);
	r->counted = pidns_judged("exec") + pidns_judged("enter") +
		     pidns_judged("setns");
	t = fork();
	if (t == 0) {
		pid_t k;

		r->step[0] = err_of(setns(box.pidfd, CLONE_NEWNS |
					  CLONE_NEWIPC | CLONE_NEWNET));
		if (r->step[0])
			_exit(0);
		if (!then_pid)
			exec_self(1);
		r->step[1] = err_of(setns(box.pidfd, CLONE_NEWPID));
		if (r->step[1])
			_exit(0);
		k = fork();
		if (k == 0)
			exec_self(3);
		r->step[2] = err_of(k);
		if (k > 0)
			r->step[3] = exec_result(wait_status(k), 3);
		_exit(0);
	}
	if (then_pid) {
		waitpid(t, NULL, 0);
	} else {
		r->step[1] = exec_result(wait_status(t), 1);
	}
	r->counted = pidns_judged("exec") + pidns_judged("enter") +
		     pidns_judged("setns") - r->counted;
	target_stop(&box);
}

/* stats: the file read whole, in 16-byte reads, and from an offset */
static void stats_case(void)
{
	char whole[4096], small[4096], buf[16];
	size_t lw = 0, ls = 0;
	ssize_t n;
	int fd, lines_w = 0, lines_s = 0;
	size_t i;

	fd = open("/proc/sys/kernel/pidns_coupling_stats", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tap_case(0, "stats: open kernel.pidns_coupling_stats: %s",
			 strerror(errno));
		return;
	}
	while ((n = read(fd, whole + lw, sizeof(whole) - 1 - lw)) > 0)
		lw += (size_t)n;
	whole[lw] = '\0';
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0 &&
	       ls + (size_t)n < sizeof(small)) {
		memcpy(small + ls, buf, (size_t)n);
		ls += (size_t)n;
	}
	small[ls] = '\0';
	for (i = 0; i < lw; i++)
		lines_w += whole[i] == '\n';
	for (i = 0; i < ls; i++)
		lines_s += small[i] == '\n';
	tap_case(lines_w == 12,
		 "stats: one read gives 12 lines (6 calls, allowed and refused): %d",
		 lines_w);
	tap_case(lines_s == lines_w && ls == lw && !strcmp(small, whole),
		 "stats: 16-byte reads give the same %zu bytes as one read: %zu bytes, %d lines",
		 lw, ls, lines_s);
	n = pread(fd, buf, sizeof(buf), 20);
	tap_case(n == (ssize_t)sizeof(buf) && lw >= 36 &&
		 !memcmp(buf, whole + 20, sizeof(buf)),
		 "stats: pread() at offset 20 gives the text's bytes 20-35: %zd bytes",
		 n);
	close(fd);
}

/* NS_GET_PIDNS_OWNER of /proc/PID/ns/FILE (pid 0: self); false on error */
static bool owner_of(pid_t pid, const char *file, struct ns_pidns_owner *o)
{
	int fd = ns_open(pid, file);
	bool ok = fd >= 0 && !ioctl(fd, NS_GET_PIDNS_OWNER, o);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* A coupled container whose init waits to be killed */
static pid_t container(void)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID | NS_COUPLED);

	if (pid == 0)
		linger();
	return pid;
}

/*
 * owner-id: the ids of NS_GET_PIDNS_OWNER survive the reuse of an inode
 * number: a network namespace pinned past its container's end is handed
 * to the initial PID namespace, and the PID namespace that takes the
 * ended one's inode number has an id of its own.
 */
static void owner_id_case(void)
{
	struct ns_pidns_owner self = { 0 }, p1 = { 0 }, n1 = { 0 };
	struct ns_pidns_owner after = { 0 }, pk = { 0 };
	pid_t c1, ck;
	int net, k, tries;
	bool ok;

	ok = owner_of(0, "pid", &self);
	tap_case(ok && self.pidns == init_pidns &&
		 self.pidns_id == 4 && self.ns_id == 4 && !self.flags,
		 "owner-id: the initial PID namespace's own file says pid:[%llu], id 4: pid:[%llu], ids %llu and %llu",
		 init_pidns, (unsigned long long)self.pidns,
		 (unsigned long long)self.pidns_id, (unsigned long long)self.ns_id);

	c1 = container();
	net = c1 > 0 ? ns_open(c1, "net") : -1;
	if (net < 0 || !owner_of(c1, "pid", &p1) ||
	    ioctl(net, NS_GET_PIDNS_OWNER, &n1)) {
		tap_case(0, "owner-id: a container and its network namespace's owner: %s",
			 strerror(errno));
		reap(c1);
		return;
	}
	tap_case(n1.pidns == p1.pidns && n1.pidns_id == p1.pidns_id &&
		 p1.ns_id == p1.pidns_id && p1.pidns_id > 8 &&
		 n1.ns_id > 8 && n1.ns_id != p1.pidns_id,
		 "owner-id: a container's network namespace belongs to its PID namespace, pid:[%llu] id %llu: pid:[%llu] id %llu, the netns's own id %llu",
		 (unsigned long long)p1.pidns, (unsigned long long)p1.pidns_id,
		 (unsigned long long)n1.pidns, (unsigned long long)n1.pidns_id,
		 (unsigned long long)n1.ns_id);
	reap(c1);

	/* The PID namespace ends once its last reference goes, after RCU */
	for (tries = 0; tries < 500; tries++) {
		if (ioctl(net, NS_GET_PIDNS_OWNER, &after) ||
		    after.pidns_id != p1.pidns_id)
			break;
		usleep(10000);
	}
	tap_case(after.pidns == init_pidns && after.pidns_id == 4 &&
		 after.ns_id == n1.ns_id && !after.flags,
		 "owner-id: once the container's PID namespace ends, its pinned network namespace belongs to the initial one, id 4, and keeps its own id %llu: pid:[%llu] id %llu, own id %llu",
		 (unsigned long long)n1.ns_id, (unsigned long long)after.pidns,
		 (unsigned long long)after.pidns_id,
		 (unsigned long long)after.ns_id);
	close(net);

	/* The window: a PID namespace that takes the ended one's number */
	for (k = 1; k <= 64; k++) {
		ck = container();
		if (ck < 0 || !owner_of(ck, "pid", &pk)) {
			reap(ck);
			break;
		}
		reap(ck);
		if (pk.pidns == p1.pidns)
			break;
	}
	tap_case(k <= 64 && pk.pidns == p1.pidns && pk.pidns_id != p1.pidns_id &&
		 pk.pidns_id > p1.pidns_id,
		 "owner-id: a PID namespace made later takes the ended one's inode number pid:[%llu] (container %d of at most 64) and has an id of its own: ids %llu then %llu",
		 (unsigned long long)p1.pidns, k, (unsigned long long)p1.pidns_id,
		 (unsigned long long)pk.pidns_id);
}

static void noop(int sig)
{
	(void)sig;
}

/* clone-alias: legacy clone() with CLONE_NEWCONTAINER in the signal byte */
static void clone_alias_case(void)
{
	static const struct {
		unsigned long flags;
		const char *name;
		bool refused;	/* in modes 1-3 */
	} reqs[] = {
		{ CLONE_NEWCONTAINER | SIGCHLD, "CLONE_NEWCONTAINER|SIGCHLD (exit signal 81)", true },
		{ CLONE_NEWCONTAINER, "CLONE_NEWCONTAINER alone (exit signal 64, SIGRTMAX)", false },
	};
	size_t i;

	/* A child with exit signal SIGRTMAX sends it to us when it exits */
	signal(SIGRTMAX, noop);
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		unsigned long long own = ino_of(getpid(), "pid"), child;
		bool want = reqs[i].refused && mode != PIDNS_OFF;
		long pid;

		r->owner = 0;
		pid = syscall(SYS_clone, reqs[i].flags, 0, NULL, NULL, 0);
		if (pid == 0) {
			r->owner = ino_of(getpid(), "pid");
			_exit(0);
		}
		if (pid > 0)
			waitpid((pid_t)pid, NULL, __WALL);
		child = r->owner;
		if (want)
			tap_case(pid < 0 && errno == EINVAL,
				 "clone-alias, mode %d: legacy clone(%s) fails with EINVAL: %s",
				 mode, reqs[i].name, pid < 0 ? strerror(errno) : "a child");
		else
			tap_case(pid > 0 && child == own,
				 "clone-alias, mode %d: legacy clone(%s) forks a child in the parent's PID namespace, as without the series",
				 mode, reqs[i].name);
	}
}

int main(int argc, char **argv)
{
	static const char *const l_setns[] = { "init's setns", "new container's setns", "its exec" };
	static const char *const l_join[] = { "joiner's fork" };
	static const char *const l_point[] = { "unshare, setns", "init's fork", "init's exec" };
	static const char *const l_exempt[] = { "setns net", "setns ipc", "exec" };
	static const char *const l_bown[] = { "setns net", "unshare NEWPID|NEWNS", "exec" };
	static const char *const l_builder[] = { "unshare", "init's fork", "builder's exec" };
	static const char *const l_window[] = { "init's fork", "thread", "fork once isolated", "exec" };
	static const char *const l_nested[] = { "init's clone(NEWPID)", "unshare(NEWPID) and fork, from a thread", "exec once isolated" };
	static const char *const l_bnested[] = { "unshare", "setns to the nested PID namespace", "exec" };
	static const char *const l_eclaim[] = { "unshare mnt|ipc, then NEWPID|NEWNS", "exec" };
	static const char *const l_pending[] = { "the fork", "its fault seen", "the other netns joined at once", "the same netns joined at once", "the fork ended" };
	static const char *const l_state[] = { "setns mnt|ipc|net", "setns pid", "fork", "exec" };
	static const char *const l_anc[] = { "setns mnt|ipc|net", "exec" };
	static const int modes[] = { PIDNS_OFF, PIDNS_WARN, PIDNS_ENFORCE, PIDNS_STAGE };
	unsigned int m;
	struct stat st;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return EXEC_OK;

	printf("TAP version 13\n");
	if (pidns_mode_read() == PIDNS_ABSENT) {
		printf("Bail out! no kernel.pidns_coupling\n");
		return 1;
	}
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (exe_fd < 0 || stat("/proc/self/ns/pid", &st)) {
		printf("Bail out! /proc/self: %s\n", strerror(errno));
		return 1;
	}
	init_pidns = st.st_ino;
	r = shared_alloc(sizeof(*r));

	mode = PIDNS_WARN;
	set_mode(mode);
	stats_case();
	owner_id_case();

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		int e, inval;

		mode = modes[m];
		set_mode(mode);
		e = refuses() ? EPERM : 0;
		inval = refuses() ? EINVAL : 0;
		clone_alias_case();
		compat_clone_case();
		if (mode == PIDNS_OFF)
			continue;

		run(seq_refused_setns);
		steps("refused-setns: a container's init setns(pidfd, NEWNET|NEWIPC) into a host task's own netns and the host's ipc, then a new container joins that netns",
		      l_setns, (int[]){ e, refuses() ? 0 : NONE, refuses() ? 0 : NONE }, 3);
		owner_case("refused-setns");

		run(seq_refused_join);
		steps("refused-join: a host task in a netns of its own joins a container's PID namespace and forks with the host's mnt and ipc",
		      l_join, (int[]){ inval }, 1);
		owner_case("refused-join");

		run(seq_same_point);
		steps("same-point: unshare the four, setns into a pinned netns no task is in, fork the init, a host task enters the netns, the init execs",
		      l_point, (int[]){ 0, 0, 0 }, 3);
		tap_case(r->counted == 0,
			 "same-point, mode %d: no verdict recorded for a sequence that modes 2 and 3 accept: %ld",
			 mode, r->counted);

		if (mode >= PIDNS_ENFORCE) {
			raised = mode;
			run(seq_exemption);
			steps("exemption: the init of a container made coupled in mode 1, after the mode is raised, setns into the host's net and ipc, exec",
			      l_exempt, (int[]){ EPERM, EPERM, 0 }, 3);
		}

		if (mode >= PIDNS_ENFORCE) {
			for (builds = false; ; builds = true) {
				raised = mode;
				run(seq_builder_own);
				steps(builds ?
				      "builder-own: in mode 1 the init of a PID namespace enters a new container's netns and unshares NEWPID|NEWNS; after the raise it execs as a builder of a PID namespace that predates the mode" :
				      "builder-own: in mode 1 the init of a PID namespace enters a new container's netns; after the raise it execs",
				      l_bown, (int[]){ 0, builds ? 0 : NONE, EPERM }, 3);
				if (builds)
					break;
			}
		}

		for (with_init = false; ; with_init = true) {
			run(seq_builder);
			steps(with_init ?
			      "builder: unshare the four, fork the init, execve in the init's namespaces from outside its PID namespace" :
			      "builder: unshare the four, execve in them from outside the new PID namespace before its init",
			      l_builder, (int[]){ 0, with_init ? 0 : NONE, e }, 3);
			if (with_init)
				break;
		}

		if (mode != PIDNS_ENFORCE) {
			run(seq_window);
			steps("window: unshare NEWPID, fork the init; the init forks with the host's namespaces, makes a thread, unshares the rest, forks, execs",
			      l_window, (int[]){ mode == PIDNS_STAGE ? EINVAL : 0, 0, 0, 0 }, 4);
			tap_case(r->counted == 1,
				 "window, mode %d: the init's fork with the host's namespaces is one verdict recorded: %ld",
				 mode, r->counted);
		}

		if (mode != PIDNS_ENFORCE) {
			run(seq_window_nested);
			steps("window-nested: the init of an unshared PID namespace, still with the host's namespaces, makes the init of a nested one: clone(NEWPID); a thread's unshare(NEWPID) and fork; then it unshares the rest and execs",
			      l_nested, (int[]){ mode == PIDNS_STAGE ? EINVAL : 0, mode == PIDNS_STAGE ? EINVAL : 0, 0 }, 3);
		}

		run(seq_builder_nested);
		steps("builder-nested: unshare the four, fork the init, which makes a coupled nested PID namespace; the unsharer joins the nested one for its children and execs in the namespaces it built",
		      l_bnested, (int[]){ 0, 0, e }, 3);

		if (mode == PIDNS_STAGE) {
			run(seq_exec_claim);
			steps("exec-claim: a staged init on a pinned netns no task is in unshares mnt and ipc, then NEWPID|NEWNS, and execs as a builder",
			      l_eclaim, (int[]){ 0, EPERM }, 2);
			owner_case("exec-claim");
		}

		run(seq_pending);
		steps("pending: a builder's init fork on a pinned netns stops in put_user() of its pidfd (userfaultfd) with the claim pending; meanwhile a new container joins another pinned netns, and one joins the same",
		      l_pending, (int[]){ 0, 0, 0, e, 0 }, 5);
		owner_claimed("pending");

		then_pid = true;
		run(seq_enter);
		steps("setns-state: a host task setns(pidfd, NEWNS|NEWIPC|NEWNET) into a container, then setns(pidfd, NEWPID), forks, the child execs",
		      l_state, (int[]){ 0, 0, 0, 0 }, 4);
		tap_case(r->counted == 0,
			 "setns-state, mode %d: no verdict recorded for a state that modes 2 and 3 accept: %ld",
			 mode, r->counted);
		then_pid = false;
		run(seq_enter);
		steps("ancestor (accepted edge): a host task setns(pidfd, NEWNS|NEWIPC|NEWNET) into a running container and execs there",
		      l_anc, (int[]){ 0, 0 }, 2);
		tap_case(r->counted == 0,
			 "ancestor, mode %d: no verdict recorded for the accepted edge: %ld",
			 mode, r->counted);
	}

	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
