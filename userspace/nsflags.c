// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <linux/bpf.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsflags.h"
#include "pidns-lsm.h"

const struct ns_flag ns_flags[] = {
	{ "CLONE_NEWPID", CLONE_NEWPID, 'p', "pid", "pid",
	  "new PID namespace" },
	{ "CLONE_NEWNS", CLONE_NEWNS, 'm', "mount", "mnt",
	  "new mount namespace" },
	{ "CLONE_NEWIPC", CLONE_NEWIPC, 'i', "ipc", "ipc",
	  "new IPC namespace" },
	{ "CLONE_NEWNET", CLONE_NEWNET, 'n', "net", "net",
	  "new network namespace" },
	{ "CLONE_NEWUTS", CLONE_NEWUTS, 'u', "uts", "uts",
	  "new UTS namespace" },
	{ "CLONE_NEWUSER", CLONE_NEWUSER, 'U', "user", "user",
	  "new user namespace" },
	{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP, 'C', "cgroup", "cgroup",
	  "new cgroup namespace" },
	{ "CLONE_NEWTIME", CLONE_NEWTIME, 'T', "time", "time",
	  "new time namespace (not with --syscall=clone)" },
	{ "CLONE_NEWCONTAINER", CLONE_NEWCONTAINER, 0, "container", NULL,
	  "CLONE_NEWCONTAINER: new PID, mount, IPC and network namespaces" },
};

const size_t ns_flags_count = sizeof(ns_flags) / sizeof(ns_flags[0]);

uint64_t ns_expand(uint64_t flags)
{
	if (flags & CLONE_NEWCONTAINER)
		flags = (flags & ~(uint64_t)CLONE_NEWCONTAINER) | NS_CONTAINER;
	return flags;
}

uint64_t ns_missing(uint64_t flags)
{
	flags = ns_expand(flags);
	if (!(flags & CLONE_NEWPID))
		return 0;
	return NS_COUPLED & ~flags;
}

static void append(char *buf, size_t len, size_t *pos, const char *s)
{
	int n;

	if (*pos >= len)
		return;
	n = snprintf(buf + *pos, len - *pos, "%s", s);
	if (n > 0)
		*pos += (size_t)n;
}

char *ns_flags_str(uint64_t flags, const char *sep, const char *last,
		   char *buf, size_t len)
{
	size_t pos = 0, i, left = 0, done = 0;
	uint64_t rest = flags;
	char hex[24];

	for (i = 0; i < ns_flags_count; i++) {
		if (flags & ns_flags[i].bit)
			left++;
		rest &= ~ns_flags[i].bit;
	}
	if (rest)
		left++;
	buf[0] = '\0';
	if (!flags) {
		append(buf, len, &pos, "0");
		return buf;
	}
	for (i = 0; i < ns_flags_count; i++) {
		if (!(flags & ns_flags[i].bit))
			continue;
		if (done)
			append(buf, len, &pos, done + 1 == left ? last : sep);
		append(buf, len, &pos, ns_flags[i].name);
		done++;
	}
	if (rest) {
		if (done)
			append(buf, len, &pos, last);
		snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)rest);
		append(buf, len, &pos, hex);
	}
	return buf;
}

char *ns_flags_opts(uint64_t flags, char *buf, size_t len)
{
	size_t pos = 0, i;
	char opt[4];

	buf[0] = '\0';
	for (i = 0; i < ns_flags_count; i++) {
		if (!(flags & ns_flags[i].bit))
			continue;
		snprintf(opt, sizeof(opt), "%s-%c", pos ? " " : "",
			 ns_flags[i].opt);
		append(buf, len, &pos, opt);
	}
	return buf;
}

pid_t ns_clone(int legacy, uint64_t flags, int *pidfd)
{
	struct clone_args args = {
		.flags = flags | (pidfd ? CLONE_PIDFD : 0),
		.pidfd = (uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	if (legacy)
		return (pid_t)syscall(SYS_clone, (unsigned long)args.flags | SIGCHLD,
				      NULL, pidfd, NULL, 0UL);
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

int ns_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* The BPF form's map pinned as @name, or -1 */
static int bpf_pinned(const char *name)
{
	char path[128];
	union bpf_attr a;

	snprintf(path, sizeof(path), "%s/%s", PIDNS_LSM_PIN, name);
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)path;
	return (int)syscall(SYS_bpf, BPF_OBJ_GET, &a, sizeof(a));
}

/* Look up (@update: set) @key of the pinned map @name: 0 or -errno */
static int bpf_elem(const char *name, uint32_t key, void *value, int update)
{
	int fd = bpf_pinned(name), ret;
	union bpf_attr a;

	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)value;
	ret = (int)syscall(SYS_bpf, update ? BPF_MAP_UPDATE_ELEM :
			   BPF_MAP_LOOKUP_ELEM, &a, sizeof(a));
	ret = ret < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * The first element of the pinned map @name whose value @match accepts:
 * its key in @key and value in @value; 0 or -errno (-ENOENT: none).
 */
static int bpf_find(const char *name, void *key, void *value,
		    int (*match)(const void *value, const void *arg),
		    const void *arg)
{
	int fd = bpf_pinned(name), ret = -ENOENT;
	uint64_t k[2], next[2];
	union bpf_attr a;
	void *prev = NULL;

	if (fd < 0)
		return -errno;
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.key = (uintptr_t)prev;
		a.next_key = (uintptr_t)next;
		if (syscall(SYS_bpf, BPF_MAP_GET_NEXT_KEY, &a, sizeof(a)))
			break;
		memcpy(k, next, sizeof(k));
		prev = k;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.key = (uintptr_t)k;
		a.value = (uintptr_t)value;
		if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) == 0 &&
		    match(value, arg)) {
			memcpy(key, k, sizeof(uint64_t));
			ret = 0;
			break;
		}
	}
	close(fd);
	return ret;
}

/* @arg: { inode number, type (0 mnt, 1 ipc, 2 net) } */
static int owner_inum_is(const void *value, const void *arg)
{
	const struct pidns_lsm_owner *rec = value;
	const uint32_t *want = arg;

	return rec->inum == want[0] && rec->type == want[1];
}

static int pidns_inum_is(const void *value, const void *arg)
{
	return ((const struct pidns_lsm_pidns *)value)->inum ==
	       *(const uint32_t *)arg;
}

/* The BPF form's record of PID namespace @addr (0: the initial one) */
static int bpf_pidns(uint64_t addr, struct pidns_lsm_pidns *p)
{
	uint64_t key = addr;
	int fd, ret;
	union bpf_attr a;

	if (!addr) {
		p->id = PIDNS_LSM_PID_INIT_ID;
		p->inum = PROC_PID_INIT_INO;
		return 0;
	}
	fd = bpf_pinned("pidnss");
	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)p;
	ret = syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) ? -errno : 0;
	close(fd);
	return ret;
}

int pidns_owner_get(int fd, struct ns_pidns_owner *o)
{
	static const struct { int type; const char *file; uint64_t id; } init[] = {
		{ CLONE_NEWNS, "mnt", PIDNS_LSM_MNT_INIT_ID },
		{ CLONE_NEWIPC, "ipc", PIDNS_LSM_IPC_INIT_ID },
		{ CLONE_NEWNET, "net", PIDNS_LSM_NET_INIT_ID },
	};
	struct pidns_lsm_owner rec;
	struct pidns_lsm_pidns p;
	char path[32];
	struct stat st, ist;
	uint64_t key;
	uint32_t ino;
	int type, ret;
	size_t i;

	if (ioctl(fd, NS_GET_PIDNS_OWNER, o) == 0)
		return 0;
	if (errno != ENOTTY || !pidns_is_bpf())
		return -errno;
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0 || fstat(fd, &st))
		return -errno;
	ino = (uint32_t)st.st_ino;
	memset(o, 0, sizeof(*o));
	if (type == CLONE_NEWPID) {
		if (ino == PROC_PID_INIT_INO) {
			p.id = PIDNS_LSM_PID_INIT_ID;
		} else {
			ret = bpf_find("pidnss", &key, &p, pidns_inum_is, &ino);
			if (ret)
				return ret;
		}
		o->pidns = ino;
		o->pidns_id = o->ns_id = p.id;
		return 0;
	}
	for (i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		if (init[i].type == type)
			break;
	if (i == sizeof(init) / sizeof(init[0]))
		return -EINVAL;
	/* The initial namespaces have no record: PID 1's are they */
	snprintf(path, sizeof(path), "/proc/1/ns/%s", init[i].file);
	if (stat(path, &ist) == 0 && ist.st_ino == st.st_ino) {
		o->pidns = PROC_PID_INIT_INO;
		o->pidns_id = PIDNS_LSM_PID_INIT_ID;
		o->ns_id = init[i].id;
		return 0;
	}
	{
		uint32_t want[2] = { ino, (uint32_t)i };

		ret = bpf_find("owners", &key, &rec, owner_inum_is, want);
	}
	if (ret)
		return ret;
	ret = bpf_pidns(rec.owner, &p);
	if (ret)
		return ret;
	o->pidns = p.inum;
	o->pidns_id = p.id;
	o->ns_id = rec.id;
	o->flags = rec.claimed ? NS_PIDNS_OWNER_CLAIMED : 0;
	return 0;
}

int pidns_is_bpf(void)
{
	struct pidns_lsm_config c;

	return access(PIDNS_COUPLING_SYSCTL, F_OK) != 0 &&
	       bpf_elem("pidns_config", 0, &c, 0) == 0;
}

int pidns_mode_write(const char *value)
{
	struct pidns_lsm_config c = { 0 };
	int fd = open(PIDNS_COUPLING_SYSCTL, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	char *end;
	long m;

	if (fd >= 0) {
		n = write(fd, value, strlen(value));
		n = n < 0 ? -errno : 0;
		close(fd);
		return (int)n;
	}
	if (errno != ENOENT)
		return -errno;
	errno = 0;
	m = strtol(value, &end, 10);
	if (errno || end == value || (*end && *end != '\n') || m < 0 || m > 3)
		return -EINVAL;
	c.mode = (uint32_t)m;
	return bpf_elem("pidns_config", 0, &c, 1);
}

long pidns_lsm_stat(unsigned int idx)
{
	uint64_t count;

	if (idx >= PIDNS_LSM_NSTATS || bpf_elem("stats", idx, &count, 0))
		return -1;
	return (long)count;
}

long pidns_stats_read(const char *call, const char *verdict)
{
	static const char *const calls[] = {
		"clone", "unshare", "setns", "join", "exec", "enter",
	};
	FILE *f = fopen("/proc/sys/kernel/pidns_coupling_stats", "re");
	char c[16], v[16];
	long n, found = -1;
	uint32_t i;

	if (f) {
		while (fscanf(f, "%15s %15s %ld", c, v, &n) == 3)
			if (!strcmp(c, call) && !strcmp(v, verdict))
				found = n;
		fclose(f);
		return found;
	}
	for (i = 0; i < PIDNS_LSM_NCALLS; i++)
		if (!strcmp(calls[i], call))
			return pidns_lsm_stat(i * 2 + !strcmp(verdict, "refused"));
	return -1;
}

int pidns_mode_read(void)
{
	FILE *f = fopen(PIDNS_COUPLING_SYSCTL, "re");
	struct pidns_lsm_config c;
	int mode;

	if (!f)
		return bpf_elem("pidns_config", 0, &c, 0) ? PIDNS_ABSENT :
		       (int)c.mode;
	if (fscanf(f, "%d", &mode) != 1)
		mode = PIDNS_ABSENT;
	fclose(f);
	return mode;
}

const char *pidns_mode_name(int mode)
{
	switch (mode) {
	case PIDNS_OFF:
		return "off";
	case PIDNS_WARN:
		return "warn";
	case PIDNS_ENFORCE:
		return "enforce";
	case PIDNS_STAGE:
		return "stage";
	default:
		return "absent";
	}
}
