// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded concurrent stress of the state checks, for the debug flavour
 * booted with -smp 2 (SMP, PREEMPT, KASAN, lockdep: qemu/debug.config).
 * Workers create containers, join them by pidfd (all four namespaces, the
 * PID namespace alone, or with new mount, IPC and network namespaces at
 * the fork), build PID namespaces in several calls, unshare, setns() back
 * to the host, let a container's thread-group leader exit while another
 * thread forks, execve() a probe, and race two containers for one pinned
 * network namespace, all at once, while another process flips
 * kernel.pidns_coupling. The races this aims at: a dying init or an
 * exited leader against joiners, setns()/unshare() against forks and
 * execve(), two claims of one namespace, and the mode changing under all
 * of them.
 *
 * Phase A flips the mode through 0..3: only the kernel's own checkers
 * (the boot fails on any report) and that nothing hangs are judged.
 * Phase B starts after every process of phase A is gone and flips between
 * 2 and 3, where every PID namespace is judged: then the state invariant
 * must hold. Each probe writes, after its execve(), its PID namespace and
 * whether its mount, IPC or network namespace is the host's (which belongs
 * to the initial PID namespace, so is foreign to every container); in
 * phase B no probe in a container may have one, and no setns() back to the
 * host's network namespace from inside a container may succeed. A control
 * at the end makes the same state in mode 0 and checks that the probe
 * reports it.
 *
 * The claim race (patch 4): a worker makes a network namespace on the
 * host, keeps it by a file and leaves it (podman's pattern), then starts
 * two coupled containers whose inits wait on one pipe and, released
 * together, both setns() into it. In phase B (modes 2 and 3, where claims
 * are judged) at most one may win. Each init records when its setns()
 * started and ended: a race whose two calls overlapped in time reached
 * the window that the claim mutex closes, and at least one must have.
 *
 * Bounded: pidns.stress_secs (default 20) seconds per phase,
 * pidns.stress_workers (default 6) workers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#define SLOTS 32
#define REC "/tmp/stress.rec"

enum op { OP_CONTAINER, OP_JOIN, OP_STAGE, OP_UNSHARE, OP_CLAIM, OP_NR };

static const char *const op_names[OP_NR] = {
	"container", "join", "stage", "unshare", "claim race",
};

struct shared {
	volatile int stop;
	volatile pid_t slot[SLOTS];	/* container inits to join */
	long ops[OP_NR];
	long setns_back;		/* setns() to the host's net tried */
	long setns_back_ok;		/* ... and accepted in phase B */
	long flips;
	long flip_errors;
	long races;			/* claim races in phase B */
	long races_both;		/* ... that both containers won */
	long races_overlap;		/* ... whose two setns() overlapped */
};

/* One claim race: each init's setns() into the pinned netns */
struct race {
	struct timespec start[2], end[2];
	int ok[2];
};

static struct shared *sh;
static int exe_fd, rec_fd, host_net_fd;
static char phase;
static unsigned int seed;

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)rand_r(&seed) % n;
}

static ino_t ns_ino(const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* After execve(): one line, "PHASE PIDNS-INODE FOREIGN-SET". */
static int probe(const char *ph, int fd, const char *host)
{
	char line[128], foreign[16] = "";
	unsigned long h[4];

	if (sscanf(host, "%lu:%lu:%lu:%lu", &h[0], &h[1], &h[2], &h[3]) != 4)
		return 2;
	if (ns_ino("mnt") == h[1])
		strcat(foreign, "m");
	if (ns_ino("ipc") == h[2])
		strcat(foreign, "i");
	if (ns_ino("net") == h[3])
		strcat(foreign, "n");
	snprintf(line, sizeof(line), "%s %lu %s\n", ph,
		 (unsigned long)ns_ino("pid"), foreign[0] ? foreign : "-");
	if (write(fd, line, strlen(line)) < 0)
		return 3;
	return 0;
}

static char host_arg[96];

static void exec_probe(void)
{
	char ph[2] = { phase, 0 }, fd[16];
	char *argv[] = { "stress", "--probe", ph, fd, host_arg, NULL };
	extern char **environ;

	snprintf(fd, sizeof(fd), "%d", rec_fd);
	syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
	_exit(0);	/* refused: fine, the probe only reports what ran */
}

static void fork_probe(uint64_t flags)
{
	pid_t pid = raw_clone(true, flags);

	if (pid == 0)
		exec_probe();
	if (pid > 0)
		waitpid(pid, NULL, __WALL);
}

static void *late_thread(void *arg)
{
	(void)arg;
	usleep(1000 + rnd(10000));
	fork_probe(0);
	usleep(rnd(10000));
	syscall(SYS_exit_group, 0);
	return NULL;
}

/* A container's init (its parent publishes it): one of several lives. */
static void container_init(void)
{
	pthread_t t;

	switch (rnd(5)) {
	case 0:
		exec_probe();
		break;
	case 1:
		if (unshare(CLONE_NEWNS) == 0)
			fork_probe(0);
		break;
	case 2:
		__atomic_add_fetch(&sh->setns_back, 1, __ATOMIC_RELAXED);
		if (setns(host_net_fd, CLONE_NEWNET) == 0 && phase == 'B')
			__atomic_add_fetch(&sh->setns_back_ok, 1,
					   __ATOMIC_RELAXED);
		exec_probe();
		break;
	case 3:
		/* The leader exits, a thread lives on and forks. */
		if (pthread_create(&t, NULL, late_thread, NULL) == 0)
			syscall(SYS_exit, 0);
		break;
	default:
		usleep(rnd(20000));
		break;
	}
	_exit(0);
}

static void op_container(void)
{
	pid_t pid = raw_clone(true, CLONE_NEWPID | NS_COUPLED);

	if (pid == 0)
		container_init();
	if (pid > 0)
		sh->slot[rnd(SLOTS)] = pid;
}

static void op_join(void)
{
	static const uint64_t setns_flags[] = {
		CLONE_NEWPID | NS_COUPLED, CLONE_NEWPID,
		CLONE_NEWPID | CLONE_NEWNET,
	};
	static const uint64_t fork_flags[] = { 0, NS_COUPLED, CLONE_NEWNS };
	pid_t target = sh->slot[rnd(SLOTS)], pid;
	int fd;

	if (target <= 1)
		return;
	fd = (int)syscall(SYS_pidfd_open, target, 0);
	if (fd < 0)
		return;
	pid = fork();
	if (pid == 0) {
		if (setns(fd, (int)setns_flags[rnd(3)]) == 0)
			fork_probe(fork_flags[rnd(3)]);
		_exit(0);
	}
	close(fd);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void op_stage(void)
{
	static const int rest[] = {
		NS_COUPLED, CLONE_NEWNS, CLONE_NEWIPC | CLONE_NEWNET,
		CLONE_NEWNS | CLONE_NEWIPC,
	};
	pid_t pid = raw_clone(true, CLONE_NEWPID);

	if (pid == 0) {
		if (unshare(rest[rnd(4)]) == 0 && rnd(2))
			(void)!unshare(CLONE_NEWNS);
		exec_probe();
	}
	if (pid > 0)
		waitpid(pid, NULL, __WALL);
}

static void op_unshare(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (unshare(CLONE_NEWPID | (rnd(2) ? NS_COUPLED : 0)))
			_exit(0);
		pid = fork();
		if (pid == 0) {
			if (rnd(2))
				(void)!unshare(NS_COUPLED);
			usleep(rnd(5000));
			exec_probe();
		}
		fork_probe(0);	/* a joiner's fork, or fails once init is gone */
		if (pid > 0)
			waitpid(pid, NULL, 0);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void op_claim(void)
{
	struct race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, own, net = -1, k;
	pid_t pid[2] = { -1, -1 };
	char byte;

	if (r == MAP_FAILED)
		return;
	memset(r, 0, sizeof(*r));
	/* A network namespace made here, kept by a file, and left */
	own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (own < 0 || pipe(go) < 0 || pipe(done) < 0)
		goto out;
	if (!unshare(CLONE_NEWNET)) {
		net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (setns(own, CLONE_NEWNET))
			_exit(1);	/* a worker that cannot leave it */
	}
	if (net < 0)
		goto out;
	for (k = 0; k < 2; k++) {
		pid[k] = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
		if (pid[k] == 0) {
			close(go[1]);
			if (read(go[0], &byte, 1) < 0)
				_exit(1);
			clock_gettime(CLOCK_MONOTONIC, &r->start[k]);
			r->ok[k] = setns(net, CLONE_NEWNET) == 0;
			clock_gettime(CLOCK_MONOTONIC, &r->end[k]);
			/*
			 * Stay until both have tried: a PID namespace that
			 * dies hands what it claimed back, and the other
			 * could then claim it in turn, legitimately.
			 */
			close(done[1]);
			if (read(done[0], &byte, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	close(go[1]);		/* both inits go */
	go[1] = -1;
	for (k = 0; k < 2; k++)
		if (pid[k] > 0)
			while (!__atomic_load_n(&r->end[k].tv_sec, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&r->end[k].tv_nsec, __ATOMIC_ACQUIRE) &&
			       waitpid(pid[k], NULL, WNOHANG) == 0)
				usleep(1000);
	close(done[1]);		/* both have tried: they may end */
	done[1] = -1;
	for (k = 0; k < 2; k++)
		if (pid[k] > 0)
			waitpid(pid[k], NULL, 0);
	if (phase == 'B' && pid[0] > 0 && pid[1] > 0) {
		__atomic_add_fetch(&sh->races, 1, __ATOMIC_RELAXED);
		if (r->ok[0] && r->ok[1])
			__atomic_add_fetch(&sh->races_both, 1, __ATOMIC_RELAXED);
		if (timespans_overlap(&r->start[0], &r->end[0],
				      &r->start[1], &r->end[1]))
			__atomic_add_fetch(&sh->races_overlap, 1, __ATOMIC_RELAXED);
	}
out:
	if (own >= 0)
		close(own);
	if (net >= 0)
		close(net);
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (done[0] >= 0)
		close(done[0]);
	if (done[1] >= 0)
		close(done[1]);
	munmap(r, sizeof(*r));
}

static void worker(unsigned int id)
{
	seed = id * 7919u + (unsigned int)time(NULL);
	setpgid(0, 0);
	while (!sh->stop) {
		enum op op = (enum op)rnd(OP_NR);

		switch (op) {
		case OP_CONTAINER:
			op_container();
			break;
		case OP_JOIN:
			op_join();
			break;
		case OP_STAGE:
			op_stage();
			break;
		case OP_CLAIM:
			op_claim();
			break;
		default:
			op_unshare();
			break;
		}
		__atomic_add_fetch(&sh->ops[op], 1, __ATOMIC_RELAXED);
		while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
			;
	}
	_exit(0);
}

static void flipper(int lo, int hi)
{
	char v[2] = { 0, 0 };

	seed = (unsigned int)time(NULL);
	setpgid(0, 0);
	while (!sh->stop) {
		v[0] = (char)('0' + lo + (int)rnd((unsigned int)(hi - lo + 1)));
		if (write_sysctl(v))
			sh->flip_errors++;
		sh->flips++;
		usleep(200 + rnd(2000));
	}
	_exit(0);
}

/* One phase: workers and a flipper for @secs; whether all ended in time. */
static bool run_phase(char name, int lo, int hi, unsigned int secs,
		      unsigned int workers)
{
	pid_t pids[65];
	unsigned int i, n = 0;
	bool ok = true;

	phase = name;
	sh->stop = 0;
	for (i = 0; i < SLOTS; i++)
		sh->slot[i] = 0;
	set_mode(hi);
	for (i = 0; i <= workers && i < 65; i++) {
		pids[n] = fork();
		if (pids[n] == 0) {
			if (i == workers)
				flipper(lo, hi);
			worker(i);
		}
		if (pids[n] > 0)
			n++;
	}
	sleep(secs);
	sh->stop = 1;
	/* A worker finishes its operation and exits; allow it 30 s. */
	for (i = 0; i < n; i++) {
		int waited = 0;

		while (waitpid(pids[i], NULL, WNOHANG) == 0 && waited < 300) {
			usleep(100000);
			waited++;
		}
		if (waited >= 300) {
			tap_diag("phase %c: process %d did not end", name, pids[i]);
			ok = false;
		}
		kill(-pids[i], SIGKILL);	/* its containers and helpers */
		waitpid(pids[i], NULL, WNOHANG);
	}
	sleep(1);
	return ok;
}

struct tally {
	long probes, in_container, foreign;
};

static struct tally read_records(char want)
{
	struct tally t = { 0, 0, 0 };
	unsigned long pidns, host_pid = strtoul(host_arg, NULL, 10);
	char ph, foreign[16];
	FILE *f = fopen(REC, "r");

	if (!f)
		return t;
	while (fscanf(f, " %c %lu %15s", &ph, &pidns, foreign) == 3) {
		if (ph != want)
			continue;
		t.probes++;
		if (pidns == host_pid)
			continue;
		t.in_container++;
		if (strcmp(foreign, "-"))
			t.foreign++;
	}
	fclose(f);
	return t;
}

int main(int argc, char **argv)
{
	unsigned int secs, workers, i;
	struct tally a, b, c;
	long ops = 0;
	pid_t pid;
	bool ok;

	if (argc == 5 && !strcmp(argv[1], "--probe"))
		return probe(argv[2], atoi(argv[3]), argv[4]);

	printf("TAP version 13\n");
	if (pidns_mode_read() == PIDNS_ABSENT) {
		printf("Bail out! no kernel.pidns_coupling\n");
		return 1;
	}
	secs = (unsigned int)cmdline_u64("pidns.stress_secs=", 20);
	workers = (unsigned int)cmdline_u64("pidns.stress_workers=", 6);
	printf("# %ld CPUs online, %u workers, %u s per phase\n",
	       sysconf(_SC_NPROCESSORS_ONLN), workers, secs);
	tap_case(sysconf(_SC_NPROCESSORS_ONLN) >= 2,
		 "the guest runs on more than one CPU (%ld)",
		 sysconf(_SC_NPROCESSORS_ONLN));
	exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	rec_fd = open(REC, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0666);
	host_net_fd = open("/proc/self/ns/net", O_RDONLY);
	if (exe_fd < 0 || rec_fd < 0 || host_net_fd < 0) {
		printf("Bail out! open: %s\n", strerror(errno));
		return 1;
	}
	snprintf(host_arg, sizeof(host_arg), "%lu:%lu:%lu:%lu",
		 (unsigned long)ns_ino("pid"), (unsigned long)ns_ino("mnt"),
		 (unsigned long)ns_ino("ipc"), (unsigned long)ns_ino("net"));
	sh = shared_alloc(sizeof(*sh));

	ok = run_phase('A', 0, 3, secs, workers);
	for (i = 0; i < OP_NR; i++) {
		printf("# phase A: %s %ld\n", op_names[i], sh->ops[i]);
		ops += sh->ops[i];
	}
	a = read_records('A');
	tap_case(ok && ops > 0 && sh->flip_errors == 0,
		 "phase A (mode flipping through 0..3): %ld operations, %ld probes ran (%ld in containers), %ld mode flips, every process ended",
		 ops, a.probes, a.in_container, sh->flips);

	memset(sh->ops, 0, sizeof(sh->ops));
	sh->flips = sh->flip_errors = 0;
	sh->setns_back = sh->setns_back_ok = 0;
	ok = run_phase('B', 2, 3, secs, workers);
	for (ops = 0, i = 0; i < OP_NR; i++) {
		printf("# phase B: %s %ld\n", op_names[i], sh->ops[i]);
		ops += sh->ops[i];
	}
	b = read_records('B');
	tap_case(ok && ops > 0 && sh->flip_errors == 0,
		 "phase B (mode flipping between 2 and 3): %ld operations, %ld probes ran, %ld mode flips, every process ended",
		 ops, b.probes, sh->flips);
	tap_case(b.in_container > 0,
		 "phase B: probes ran in containers (%ld), so the invariant below is about something",
		 b.in_container);
	tap_case(b.foreign == 0,
		 "state invariant: in phase B no probe in a container ran with the host's mount, IPC or network namespace (%ld of %ld)",
		 b.foreign, b.in_container);
	tap_case(sh->setns_back > 0 && sh->setns_back_ok == 0,
		 "in phase B no container's setns() back to the host's network namespace was accepted (%ld of %ld)",
		 sh->setns_back_ok, sh->setns_back);
	tap_case(sh->races > 0 && sh->races_both == 0 && sh->races_overlap > 0,
		 "claim race: in phase B two containers never both took one pinned network namespace (%ld of %ld races), and the race was reached: both setns() overlapped in time in %ld",
		 sh->races_both, sh->races, sh->races_overlap);

	/* The control: the same state in mode 0 is reported. */
	phase = 'C';
	set_mode(PIDNS_OFF);
	pid = raw_clone(true, CLONE_NEWPID | NS_COUPLED);
	if (pid == 0) {
		if (setns(host_net_fd, CLONE_NEWNET))
			_exit(1);
		exec_probe();
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	c = read_records('C');
	tap_case(c.foreign == 1,
		 "control: mode 0, a container's init that setns() back to the host's network and execs is reported (%ld)",
		 c.foreign);

	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
