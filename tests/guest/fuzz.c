// SPDX-License-Identifier: GPL-2.0
/*
 * Random flag words, bounded: clone3() (random flags, struct sizes and
 * fields), unshare() and setns() (pidfds and namespace fds of coupled
 * targets, random nstype) in enforce mode. On every success the new task
 * (the clone3 child, or the next child of the unsharer or joiner) must
 * obey the invariant of the policy: if its PID namespace is not its
 * parent's, none of its mount, IPC and network namespaces is its
 * parent's. A counterexample is printed with its call number and flag
 * word; the run is reproducible from the seed it prints.
 *
 * Kernel command line: pidns.fuzz_calls=N (default 100000),
 * pidns.fuzz_seed=S (default: from getrandom()), pidns.fuzz_first=I
 * (start at call I, to replay one call with pidns.fuzz_calls=1).
 *
 * Calls run in batches in a worker process, which dies and is replaced
 * after every successful unshare() or setns() (they change it). A quarter
 * of the batches run as uid 1000. The targets are created in enforce mode,
 * so every PID namespace that can be joined is coupled.
 *
 * Flags that would make the new task share the worker's memory, stack or
 * TLS, or not be its child (CLONE_VM, CLONE_SIGHAND, CLONE_THREAD,
 * CLONE_SETTLS, CLONE_PARENT), are cleared from clone3 words: with them the
 * child could not run the check, and they are not namespace flags.
 * SIGKILL and SIGSTOP are not used as exit signals (they would stop the
 * worker); the worker blocks every other signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#ifndef __WALL
#define __WALL		0x40000000
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND	0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif

#define BATCH		2000
#define LIST_MAX	20
#define NTARGETS	3
#define NSFDS		4	/* pid, mnt, ipc, net files of each target */

enum call { FUZZ_CLONE3, FUZZ_UNSHARE, FUZZ_SETNS, FUZZ_CALLS };
static const char *const call_name[] = { "clone3", "unshare", "setns" };

/* Shared between the driver and the workers. */
struct state {
	uint64_t next;			/* the call a worker should do next */
	uint64_t calls[FUZZ_CALLS];
	uint64_t accepted[FUZZ_CALLS];
	uint64_t new_pidns[FUZZ_CALLS];	/* accepted, with a new PID namespace */
	uint64_t fork_refused;		/* a fork after unshare/setns refused */
	uint64_t violations;
	struct {
		uint64_t call, flags;
		int kind, detail;
	} list[LIST_MAX];
};

static struct state *st;
static uint64_t seed;
static int pidfds[NTARGETS], nsfds[NTARGETS * NSFDS];
static ino_t host[NS_MAX];

/* The namespace entries of ns_flags[] that the invariant looks at. */
static int ix_pid = -1, ix_mnt = -1, ix_ipc = -1, ix_net = -1;

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t ns_bits(void)
{
	uint64_t all = 0;
	size_t i;

	for (i = 0; i < ns_flags_count; i++)
		all |= ns_flags[i].bit;
	return all;
}

/* The bits that each call knows, besides the namespace flags. */
static const uint64_t known[FUZZ_CALLS] = {
	[FUZZ_CLONE3] = CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_IO |
		CLONE_PTRACE | CLONE_UNTRACED | CLONE_VFORK | CLONE_PIDFD |
		CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID |
		CLONE_CLEAR_SIGHAND,
	[FUZZ_UNSHARE] = CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_VM |
		CLONE_SIGHAND | CLONE_THREAD,
	[FUZZ_SETNS] = 0,
};

/*
 * A flag word for @kind: raw 64 bits (1/8), raw low 32 bits (1/8), a
 * subset of the bits the call knows with one more random bit (1/4), or
 * such a subset alone (1/2).
 */
static uint64_t random_flags(uint64_t *r, int kind)
{
	uint64_t w = splitmix(r), mask = ns_bits() | known[kind];

	switch (splitmix(r) % 8) {
	case 0:
		return w;
	case 1:
		return w & 0xffffffffULL;
	case 2:
	case 3:
		return (w & mask) | (1ULL << (splitmix(r) % 64));
	default:
		return w & mask;
	}
}

static bool invariant_holds(const ino_t *ns, const ino_t *parent)
{
	if (ns[ix_pid] == parent[ix_pid])
		return true;
	return ns[ix_mnt] != parent[ix_mnt] && ns[ix_ipc] != parent[ix_ipc] &&
	       ns[ix_net] != parent[ix_net];
}

static void record(uint64_t call, uint64_t flags, int kind, int detail)
{
	uint64_t n = __atomic_fetch_add(&st->violations, 1, __ATOMIC_SEQ_CST);

	if (n < LIST_MAX) {
		st->list[n].call = call;
		st->list[n].flags = flags;
		st->list[n].kind = kind;
		st->list[n].detail = detail;
	}
}

/* What the new task's check exits with. */
enum { CHECK_SAME_PIDNS = 10, CHECK_NEW_PIDNS, CHECK_VIOLATED, CHECK_UNREADABLE };

/* The new task: check the invariant against @parent. */
static void child_check(const ino_t *parent)
{
	ino_t ns[NS_MAX];

	ns_read("self", ns);
	if (!ns[ix_pid] || !ns[ix_mnt] || !ns[ix_ipc] || !ns[ix_net])
		_exit(CHECK_UNREADABLE);
	if (!invariant_holds(ns, parent))
		_exit(CHECK_VIOLATED);
	_exit(ns[ix_pid] == parent[ix_pid] ? CHECK_SAME_PIDNS : CHECK_NEW_PIDNS);
}

/* Count the check's verdict, or record a counterexample. */
static void checked(uint64_t call, uint64_t flags, int kind, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	if (code == CHECK_NEW_PIDNS)
		st->new_pidns[kind]++;
	else if (code != CHECK_SAME_PIDNS)
		record(call, flags, kind, code);
}

static void fuzz_clone3(uint64_t call, uint64_t *r, const ino_t *self)
{
	static const uint64_t unsafe = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD |
		CLONE_SETTLS | CLONE_PARENT;
	static pid_t set_tid[4];
	static int scratch[4];
	struct {
		struct clone_args a;
		uint64_t tail[4];
	} args;
	size_t size;
	pid_t pid;
	int sig, status, i;

	memset(&args, 0, sizeof(args));
	args.a.flags = random_flags(r, FUZZ_CLONE3) & ~unsafe;
	do
		sig = (int)(splitmix(r) % 4 ? SIGCHLD : splitmix(r) % 72);
	while (sig == SIGKILL || sig == SIGSTOP);
	args.a.exit_signal = (uint64_t)sig;
	if (splitmix(r) % 16 == 0)
		args.a.exit_signal |= splitmix(r) << 8;
	scratch[0] = -1;
	args.a.pidfd = (uintptr_t)&scratch[0];
	args.a.child_tid = (uintptr_t)&scratch[1];
	args.a.parent_tid = (uintptr_t)&scratch[2];
	if (splitmix(r) % 8 == 0) {
		args.a.set_tid_size = splitmix(r) % 5;
		for (i = 0; i < 4; i++)
			set_tid[i] = (pid_t)(splitmix(r) % 4096);
		args.a.set_tid = (uintptr_t)set_tid;
	}
	if (splitmix(r) % 8 == 0)
		args.a.cgroup = splitmix(r) % 8;
	switch (splitmix(r) % 8) {
	case 0: size = 64; break;	/* CLONE_ARGS_SIZE_VER0 */
	case 1: size = 80; break;	/* VER1 */
	case 2: size = splitmix(r) % (sizeof(args) + 1); break;
	case 3: /* bigger than the kernel knows, with a nonzero tail */
		size = sizeof(args);
		args.tail[splitmix(r) % 4] = splitmix(r) | 1;
		break;
	case 4: size = sizeof(args); break;	/* bigger, zero tail */
	default: size = sizeof(args.a); break;
	}

	st->calls[FUZZ_CLONE3]++;
	pid = (pid_t)syscall(SYS_clone3, &args, size);
	if (pid < 0)
		return;
	if (pid == 0)
		child_check(self);
	st->accepted[FUZZ_CLONE3]++;
	if ((args.a.flags & CLONE_PIDFD) && scratch[0] > 2)
		close(scratch[0]);
	if (waitpid(pid, &status, __WALL) < 0)
		record(call, args.a.flags, FUZZ_CLONE3, -errno);
	else
		checked(call, args.a.flags, FUZZ_CLONE3, status);
}

/*
 * After a successful unshare() or setns(): the caller's next child must
 * obey the invariant against the caller as it was (@self). Then this
 * worker, changed by the call, ends and the driver starts another.
 */
static void after_success(uint64_t call, uint64_t flags, int kind, const ino_t *self)
{
	pid_t pid;
	int status;

	st->accepted[kind]++;
	st->next = call + 1;
	pid = fork();
	if (pid < 0) {
		if (errno == EINVAL)
			st->fork_refused++;
		else
			record(call, flags, kind, -errno);
		_exit(0);
	}
	if (pid == 0)
		child_check(self);
	if (waitpid(pid, &status, 0) < 0)
		record(call, flags, kind, -errno);
	else
		checked(call, flags, kind, status);
	_exit(0);
}

static void worker(uint64_t first, uint64_t end, bool unpriv)
{
	ino_t self[NS_MAX];
	sigset_t all;
	uint64_t call;

	/* All of them, with glibc's internal ones (which sigfillset() omits). */
	memset(&all, 0xff, sizeof(all));
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)8);
	if (unpriv)
		become_user(1000);
	memcpy(self, host, sizeof(self));
	for (call = first; call < end; call++) {
		uint64_t r = seed ^ (call * 0xd1342543de82ef95ULL), flags;
		int kind = (int)(splitmix(&r) % FUZZ_CALLS), fd;

		st->next = call;
		if (kind == FUZZ_CLONE3) {
			fuzz_clone3(call, &r, self);
			continue;
		}
		flags = random_flags(&r, kind);
		st->calls[kind]++;
		if (kind == FUZZ_UNSHARE) {
			if (syscall(SYS_unshare, (unsigned long)flags) == 0)
				after_success(call, flags, kind, self);
			continue;
		}
		switch (splitmix(&r) % 4) {
		case 0:
		case 1:
			fd = pidfds[splitmix(&r) % NTARGETS];
			break;
		case 2:
			fd = nsfds[splitmix(&r) % (NTARGETS * NSFDS)];
			if (splitmix(&r) % 2)
				flags = 0;
			break;
		default:
			fd = (int)(splitmix(&r) % 8) - 1;
			break;
		}
		if (syscall(SYS_setns, fd, (int)flags) == 0)
			after_success(call, flags, kind, self);
	}
	st->next = end;
	_exit(0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Wait for @pid for at most @secs: its status, or -1 (killed) if it hung. */
static int wait_bounded(pid_t pid, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int status;

	sigaction(SIGALRM, &sa, NULL);
	alarm(secs);
	if (waitpid(pid, &status, 0) == pid) {
		alarm(0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * The positive control: with the policy off, clone3(CLONE_NEWPID) makes a
 * task that breaks the invariant, and the check must say so.
 */
static void control(void)
{
	pid_t pid;

	set_mode(PIDNS_OFF);
	fflush(stdout);
	pid = ns_clone(0, CLONE_NEWPID, NULL);
	if (pid == 0)
		child_check(host);
	tap_case(pid > 0 && ns_wait(pid) == CHECK_VIOLATED,
		 "control: the check catches clone3(CLONE_NEWPID) made in mode 0");
}

static void start_targets(void)
{
	static const uint64_t extra[NTARGETS] = {
		0, CLONE_NEWUSER | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME,
		CLONE_NEWUTS,
	};
	static const char *const files[NSFDS] = { "pid", "mnt", "ipc", "net" };
	static struct target t[NTARGETS];
	char path[64];
	int i, j;

	for (i = 0; i < NTARGETS; i++) {
		target_start(&t[i], CLONE_NEWCONTAINER | extra[i], NULL);
		pidfds[i] = t[i].pidfd;
		for (j = 0; j < NSFDS; j++) {
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)t[i].pid, files[j]);
			nsfds[i * NSFDS + j] = open(path, O_RDONLY | O_CLOEXEC);
			if (nsfds[i * NSFDS + j] < 0) {
				printf("Bail out! open %s: %s\n", path, strerror(errno));
				exit(1);
			}
		}
	}
}

int main(void)
{
	uint64_t calls, first, end, batch, total = 0, accepted = 0;
	int hung = 0, died = 0, c;
	size_t i;
	char buf[256];

	printf("TAP version 13\n");
	for (i = 0; i < ns_flags_count; i++) {
		const char *n = ns_flags[i].nsfile;

		if (!n)
			continue;
		if (!strcmp(n, "pid"))
			ix_pid = (int)i;
		else if (!strcmp(n, "mnt"))
			ix_mnt = (int)i;
		else if (!strcmp(n, "ipc"))
			ix_ipc = (int)i;
		else if (!strcmp(n, "net"))
			ix_net = (int)i;
	}
	if (ix_pid < 0 || ix_mnt < 0 || ix_ipc < 0 || ix_net < 0) {
		printf("Bail out! the flag table lacks pid, mnt, ipc or net\n");
		return 1;
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL);
	seed = cmdline_u64("pidns.fuzz_seed=", seed);
	calls = cmdline_u64("pidns.fuzz_calls=", 100000);
	first = cmdline_u64("pidns.fuzz_first=", 0);
	end = first + calls;
	st = shared_alloc(sizeof(*st));
	ns_read("self", host);
	control();
	set_mode(PIDNS_ENFORCE);
	start_targets();
	tap_diag("seed %#llx, calls %llu..%llu (replay: pidns.fuzz_seed=%#llx pidns.fuzz_first=I pidns.fuzz_calls=1)",
		 (unsigned long long)seed, (unsigned long long)first,
		 (unsigned long long)end - 1, (unsigned long long)seed);

	for (st->next = first; st->next < end;) {
		uint64_t at = st->next;
		pid_t pid;
		int status;

		batch = at / BATCH;
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			worker(at, at + BATCH < end ? (batch + 1) * BATCH : end, batch % 4 == 3);
		status = wait_bounded(pid, 60);
		if (status < 0) {
			hung++;
			tap_diag("worker hung at call %llu", (unsigned long long)st->next);
			st->next++;
		} else if (status != 0) {
			died++;
			tap_diag("worker died at call %llu (status %d)",
				 (unsigned long long)st->next, status);
			st->next++;
		} else if (st->next == at) {
			st->next++;	/* cannot happen; never loop */
		}
	}

	for (c = 0; c < FUZZ_CALLS; c++) {
		total += st->calls[c];
		accepted += st->accepted[c];
		tap_case(st->calls[c] > 0 && st->new_pidns[c] > 0,
			 "%s: %llu calls, %llu accepted, %llu of them with a new PID namespace",
			 call_name[c], (unsigned long long)st->calls[c],
			 (unsigned long long)st->accepted[c],
			 (unsigned long long)st->new_pidns[c]);
	}
	tap_case(total == calls, "%llu calls made, as asked (%llu accepted, %llu forks after unshare/setns refused)",
		 (unsigned long long)total, (unsigned long long)accepted,
		 (unsigned long long)st->fork_refused);
	for (i = 0; i < LIST_MAX && i < st->violations; i++)
		tap_diag("counterexample: call %llu, %s flags %s (%#llx), check status %d (12: shares a namespace, 13: unreadable, <0: -errno)",
			 (unsigned long long)st->list[i].call, call_name[st->list[i].kind],
			 ns_flags_str(st->list[i].flags, "|", "|", buf, sizeof(buf)),
			 (unsigned long long)st->list[i].flags, st->list[i].detail);
	tap_case(st->violations == 0,
		 "invariant: a new PID namespace never shares mount, IPC or network (%llu counterexamples, seed %#llx)",
		 (unsigned long long)st->violations, (unsigned long long)seed);
	tap_case(!hung && !died, "no worker hung (%d) or died (%d)", hung, died);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
