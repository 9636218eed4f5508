// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestlib.h"

void ns_read(const char *pid, ino_t *ino)
{
	char path[64];
	struct stat st;
	size_t i;

	for (i = 0; i < ns_flags_count; i++) {
		ino[i] = 0;
		if (!ns_flags[i].nsfile)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid,
			 ns_flags[i].nsfile);
		if (stat(path, &st) == 0)
			ino[i] = st.st_ino;
	}
}

pid_t raw_clone(bool clone3, uint64_t flags)
{
	return ns_clone(!clone3, flags, NULL);
}

int write_sysctl(const char *value)
{
	return pidns_mode_write(value);
}

void set_mode(int mode)
{
	char v[4];

	snprintf(v, sizeof(v), "%d", mode);
	if (write_sysctl(v) < 0 || pidns_mode_read() != mode) {
		printf("Bail out! cannot set kernel.pidns_coupling to %d\n", mode);
		exit(1);
	}
}

long pidns_stats(const char *call, const char *verdict)
{
	return pidns_stats_read(call, verdict);
}

long pidns_judged(const char *call)
{
	return pidns_stats(call, "allowed") + pidns_stats(call, "refused");
}

void target_start(struct target *t, uint64_t flags, void (*setup)(void))
{
	char pid[16];
	int ready[2];
	char byte;

	if (pipe(ready) < 0) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	t->pid = ns_clone(0, flags, &t->pidfd);
	if (t->pid < 0) {
		printf("Bail out! clone3 for a target: %s\n", strerror(errno));
		exit(1);
	}
	if (t->pid == 0) {
		close(ready[0]);
		if (setup)
			setup();
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &byte, 1) != 1) {
		printf("Bail out! the target did not start\n");
		exit(1);
	}
	close(ready[0]);
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	ns_read(pid, t->ns);
}

void target_stop(struct target *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->pidfd);
}

/* Whether the BPF form's log lines (pidns-lsm record --log) hold @needle */
static bool bpf_log_has(const char *needle)
{
	const char *path = getenv("PIDNS_LSM_LOG");
	char line[1024];
	bool found = false;
	int tries;
	FILE *f;

	/* The loader drains the ring buffer every 100 ms */
	for (tries = 0; tries < 20 && !found; tries++) {
		if (tries)
			usleep(100 * 1000);
		f = fopen(path ? path : "/run/pidns-lsm.log", "re");
		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f))
			found = strstr(line, needle) != NULL;
		fclose(f);
	}
	return found;
}

bool klog_has(const char *needle)
{
	static char buf[1 << 18];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);

	if (n >= 0) {
		buf[n] = '\0';
		if (strstr(buf, needle))
			return true;
	}
	return pidns_is_bpf() && bpf_log_has(needle);
}

int wait_status(pid_t pid)
{
	return ns_wait(pid);
}

void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

uint64_t cmdline_u64(const char *key, uint64_t def)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/cmdline", "re");
	size_t n;

	if (!f)
		return def;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? strtoull(p + strlen(key), NULL, 0) : def;
}

void become_user(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		_exit(90);
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

bool timespans_overlap(const struct timespec *a0, const struct timespec *a1,
		       const struct timespec *b0, const struct timespec *b1)
{
	return ts_before(a0, b1) && ts_before(b0, a1);
}
