// SPDX-License-Identifier: GPL-2.0
/*
 * threats: what a container that passes the policy still shares with the
 * host, and which of it the 2007 hazard can use.
 *
 * The coupling makes a new PID namespace come with new mount, IPC and
 * network namespaces. A new mount namespace is a copy of the host's mount
 * tree: whatever the host has mounted is still there, shared. For each way
 * of making a container in the guest (util-linux's "unshare -p -m -i -n
 * -f", the same with the host's propagation kept, nsclone --container with its
 * defaults, nsclone --container --share=all, which keeps
 * the host's mounts as nsclone did before, and nsclone --container --root=DIR), in
 * enforce mode, where all of them are accepted, each channel is tried:
 *  - a PID lock file in /tmp, /run, /var/lock and $HOME (/root): the
 *    container writes getpid() and its PID namespace's inode; the host
 *    reads it;
 *  - a robust futex in POSIX shared memory (/dev/shm): the container
 *    stores its TID in the lock word, as the kernel and glibc do for a
 *    robust or PI mutex; the host opens the same object;
 *  - a POSIX message queue of the host's IPC namespace, reached through
 *    the copied /dev/mqueue mount: the container opens the queue's file
 *    and sends; the host receives;
 *  - mount propagation, with the host's / made shared first (as systemd
 *    does): a mount made inside appearing on the host, and one made on
 *    the host after the start appearing inside.
 * A channel is "shared" if the other side sees it. Where a PID or TID
 * crosses, the hazard is shown: the host looks the number up in its own
 * PID namespace and finds a task of another PID namespace (the PID the
 * container's init writes is 1: the host's init). Every case has its
 * expected verdict; the unshare(1) and --share=all rows are the positive
 * controls that show each channel can be seen at all. Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#define SELF		"/tests/threats"
#define NEWROOT		"/tmp/threat-root"
#define SHM_NAME	"/threat-futex"
#define MQ_NAME		"/threat-q"
#define MNT_IN		"/mnt/threat-in"
#define MNT_OUT		"/mnt/threat-out"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* How the container is made */
enum kind { K_UNSHARE, K_UNCHANGED, K_NSCLONE, K_SHARED, K_ROOT, K_NR };

static const char *const kind_names[K_NR] = {
	"unshare -p -m -i -n -f",
	"unshare ... --propagation unchanged",
	"nsclone --container",
	"nsclone --container --share=all",
	"nsclone --container --root=" NEWROOT,
};

static const char *const launchers[K_NR][10] = {
	{ "/usr/bin/unshare", "-p", "-m", "-i", "-n", "-f", "--", NULL },
	{ "/usr/bin/unshare", "-p", "-m", "-i", "-n", "-f",
	  "--propagation=unchanged", "--", NULL },
	{ "/bin/nsclone", "--container", "--", NULL },
	{ "/bin/nsclone", "--container", "--share=all", "--", NULL },
	{ "/bin/nsclone", "--container", "--root=" NEWROOT, "--", NULL },
};

enum channel {
	C_TMP, C_RUN, C_LOCK, C_HOME, C_SHM, C_MQ, C_PROP_OUT, C_PROP_IN, C_NR
};

static const struct {
	const char *name;	/* for --inside and the TAP line */
	const char *path;	/* the lock file, for the four lock channels */
	bool pids;		/* a PID or TID crosses when it is shared */
	bool shared[K_NR];	/* expected, per kind */
} channels[C_NR] = {
	[C_TMP] = { "lock file in /tmp", "/tmp/threat.pid", true,
		    { true, true, false, true, false } },
	[C_RUN] = { "lock file in /run", "/run/threat.pid", true,
		    { true, true, true, true, false } },
	[C_LOCK] = { "lock file in /var/lock", "/var/lock/threat.pid", true,
		     { true, true, true, true, false } },
	[C_HOME] = { "lock file in $HOME (/root)", "/root/threat.pid", true,
		     { true, true, true, true, false } },
	[C_SHM] = { "robust futex in POSIX shared memory (/dev/shm)", NULL,
		    true, { true, true, false, true, false } },
	[C_MQ] = { "POSIX message queue of the host's IPC namespace (/dev/mqueue)",
		   NULL, false, { true, true, false, true, false } },
	/*
	 * util-linux's unshare makes propagation private unless told not
	 * to; "--propagation unchanged" keeps the host's shared /, the
	 * positive control of these two.
	 */
	[C_PROP_OUT] = { "a mount made inside propagates to the host", NULL,
			 false, { false, true, false, false, false } },
	[C_PROP_IN] = { "a mount made on the host propagates inside", NULL,
			false, { false, true, false, false, false } },
};

/* What the inside wrote: its PID or TID and its PID namespace's inode */
struct mark {
	long id;
	unsigned long pidns;
};

static unsigned long self_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long)st.st_ino;
}

/* Whether @path is a mount point in this mount namespace: 1, 0, or -1 */
static int mount_point(const char *path)
{
	char line[512], needle[128];
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	snprintf(needle, sizeof(needle), " %s ", path);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			found = 1;
	fclose(f);
	return found;
}

/* Whether @path is a mount point in this mount namespace */
static bool mounted(const char *path)
{
	return mount_point(path) > 0;
}

/* The inside: act on @c; exit 0 if it could, 1 if not, 2 on a setup error. */
static int inside(enum channel c)
{
	char buf[64];
	struct mark m = { .id = getpid(), .pidns = self_pidns() };
	int fd, n;

	switch (c) {
	case C_TMP:
	case C_RUN:
	case C_LOCK:
	case C_HOME:
		fd = open(channels[c].path, O_WRONLY | O_CREAT | O_TRUNC |
			  O_CLOEXEC, 0644);
		if (fd < 0)
			return 1;
		n = snprintf(buf, sizeof(buf), "%ld %lu\n", m.id, m.pidns);
		return write(fd, buf, (size_t)n) == n ? 0 : 2;
	case C_SHM: {
		struct mark *word;

		fd = shm_open(SHM_NAME, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, 4096) < 0)
			return 1;
		word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (word == MAP_FAILED)
			return 2;
		/* The owner's TID in the lock word, as a robust mutex holds it */
		word->pidns = m.pidns;
		__atomic_store_n(&word->id, (long)syscall(SYS_gettid),
				 __ATOMIC_SEQ_CST);
		return 0;
	}
	case C_MQ:
		/* The host's queue, through the mount the copy kept */
		fd = open("/dev/mqueue" MQ_NAME, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 1;
		return mq_send(fd, "x", 1, 0) ? 2 : 0;
	case C_PROP_OUT:
	case C_PROP_IN: {
		char byte = 0;
		int seen;

		/* fd 3: to the host; fd 4: from it */
		if (mount("tmpfs", MNT_IN, "tmpfs", 0, NULL) < 0 ||
		    write(3, "", 1) != 1 || read(4, &byte, 1) != 1)
			return 2;
		seen = mount_point(MNT_OUT);
		if (seen < 0)
			return 2;
		/* C_PROP_IN is the question here: 0 if the host's mount came in */
		return seen ? 0 : 1;
	}
	default:
		return 2;
	}
}


/*
 * Whether @id, looked up in the host's PID namespace, names a task whose
 * PID namespace is not @pidns: the number means something else here.
 */
static bool misread(long id, unsigned long pidns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld/ns/pid", id);
	if (stat(path, &st) < 0)
		return true;	/* nobody, or a task we cannot see: not the writer */
	return (unsigned long)st.st_ino != pidns;
}

/*
 * Run the container of @k with the inside acting on @c. For the
 * propagation channels, the host's side of the exchange runs here;
 * *@out is set to whether the inside's mount reached the host. Returns
 * the inside's exit status.
 */
static int run(enum kind k, enum channel c, bool *out)
{
	int to_host[2] = { -1, -1 }, to_inside[2] = { -1, -1 };
	const char *argv[16];
	char byte;
	pid_t pid;
	int i = 0, st;

	while (launchers[k][i]) {
		argv[i] = launchers[k][i];
		i++;
	}
	argv[i++] = SELF;
	argv[i++] = "--inside";
	argv[i++] = channels[c].name;
	argv[i] = NULL;
	if ((c == C_PROP_OUT || c == C_PROP_IN) &&
	    (pipe(to_host) < 0 || pipe(to_inside) < 0))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (to_host[1] >= 0 &&
		    (dup2(to_host[1], 3) < 0 || dup2(to_inside[0], 4) < 0))
			_exit(2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (to_host[1] >= 0) {
		close(to_host[1]);
		close(to_inside[0]);
		if (read(to_host[0], &byte, 1) == 1) {
			*out = mounted(MNT_IN);
			if (mount("tmpfs", MNT_OUT, "tmpfs", 0, NULL) < 0)
				tap_diag("cannot mount %s: %s", MNT_OUT, strerror(errno));
			(void)!write(to_inside[1], "", 1);
		}
		close(to_host[0]);
		close(to_inside[1]);
	}
	st = wait_status(pid);
	if (to_host[0] >= 0) {
		umount2(MNT_OUT, MNT_DETACH);
		umount2(MNT_IN, MNT_DETACH);
	}
	return st;
}

/* Read back what the inside left for the host: shared, and the mark. */
static bool host_sees(enum channel c, struct mark *m, mqd_t q)
{
	char buf[64];
	FILE *f;

	switch (c) {
	case C_TMP:
	case C_RUN:
	case C_LOCK:
	case C_HOME:
		f = fopen(channels[c].path, "re");
		if (!f)
			return false;
		if (!fgets(buf, sizeof(buf), f) ||
		    sscanf(buf, "%ld %lu", &m->id, &m->pidns) != 2)
			m->id = 0;
		fclose(f);
		unlink(channels[c].path);
		return true;
	case C_SHM: {
		int fd = shm_open(SHM_NAME, O_RDONLY, 0);
		struct mark *word;

		if (fd < 0)
			return false;
		word = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (word != MAP_FAILED) {
			*m = *word;
			munmap(word, 4096);
		}
		close(fd);
		shm_unlink(SHM_NAME);
		return true;
	}
	case C_MQ:
		return mq_receive(q, buf, sizeof(buf), NULL) == 1;
	default:
		return false;
	}
}

/* A root for nsclone --root: this program and nothing of the host's. */
static void make_root(void)
{
	static const char *const dirs[] = {
		NEWROOT, NEWROOT "/tests", NEWROOT "/proc", NEWROOT "/tmp",
		NEWROOT "/dev", NEWROOT "/dev/shm", NEWROOT "/dev/mqueue",
		NEWROOT "/run", NEWROOT "/var", NEWROOT "/var/lock",
		NEWROOT "/root", NEWROOT "/mnt", NEWROOT MNT_IN,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		mkdir(dirs[i], 0755);
	if (mount("/tests", NEWROOT "/tests", NULL, MS_BIND, NULL) < 0) {
		printf("Bail out! bind /tests into %s: %s\n", NEWROOT, strerror(errno));
		exit(1);
	}
}

/* The host as a systemd system has it: / shared, /run and /dev/mqueue */
static void host_setup(void)
{
	static const char *const dirs[] = {
		"/run", "/var", "/var/lock", "/root", "/mnt", MNT_IN, MNT_OUT,
		"/dev/mqueue",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		mkdir(dirs[i], 0755);
	if (!mounted("/dev/mqueue") &&
	    mount("mqueue", "/dev/mqueue", "mqueue", 0, NULL) < 0) {
		printf("Bail out! mount mqueue on /dev/mqueue: %s\n", strerror(errno));
		exit(1);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SHARED, NULL) < 0) {
		printf("Bail out! make / shared: %s\n", strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 16 };
	char table[K_NR][C_NR];
	unsigned int k, c;
	mqd_t q;

	if (argc == 3 && !strcmp(argv[1], "--inside")) {
		for (c = 0; c < C_NR; c++)
			if (!strcmp(argv[2], channels[c].name))
				return inside((enum channel)c);
		return 2;
	}

	printf("TAP version 13\n");
	if (pidns_mode_read() != PIDNS_ABSENT)
		set_mode(PIDNS_ENFORCE);
	host_setup();
	make_root();
	q = mq_open(MQ_NAME, O_RDWR | O_CREAT | O_NONBLOCK, 0666, &attr);
	if (q == (mqd_t)-1) {
		printf("Bail out! mq_open %s: %s\n", MQ_NAME, strerror(errno));
		return 1;
	}

	for (k = 0; k < K_NR; k++) {
		for (c = 0; c < C_NR; c++) {
			bool want = channels[c].shared[k], shared = false;
			bool out = false, wrong_pid = false;
			struct mark m = { 0, 0 };
			int st = run(k, c, &out);

			if (c == C_PROP_OUT)
				shared = out;
			else if (c == C_PROP_IN)
				shared = st == 0;
			else
				shared = host_sees(c, &m, q);
			if (shared && channels[c].pids)
				wrong_pid = m.id > 0 && misread(m.id, m.pidns);
			table[k][c] = !shared ? '-' : wrong_pid ? 'P' : 'S';
			tap_case(shared == want && st >= 0 && st <= 1 &&
				 (!shared || !channels[c].pids || wrong_pid),
				 "%s: %s: %s%s (expected %s; the inside exited %d)",
				 kind_names[k], channels[c].name,
				 shared ? "shared" : "not shared",
				 wrong_pid ? ", and the PID it carries names another task on the host" : "",
				 want ? "shared" : "not shared", st);
		}
	}
	/* The table for docs/policy.md: S shared, P shared with a PID misread */
	tap_diag("%-36s tmp run lck hom shm mq  out in", "");
	for (k = 0; k < K_NR; k++)
		tap_diag("%-36s  %c   %c   %c   %c   %c   %c   %c   %c",
			 kind_names[k], table[k][0], table[k][1], table[k][2],
			 table[k][3], table[k][4], table[k][5], table[k][6],
			 table[k][7]);
	mq_close(q);
	mq_unlink(MQ_NAME);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
