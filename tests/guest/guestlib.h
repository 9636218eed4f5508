/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the guest test programs. */
#ifndef GUESTLIB_H
#define GUESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "nsflags.h"

#define NS_MAX 16

/* A process in new namespaces that waits to be killed. */
struct target {
	pid_t pid;
	int pidfd;
	ino_t ns[NS_MAX];	/* indexed like ns_flags[] */
};

/* Inode of each ns_flags[] entry's /proc/@pid/ns file ("self" works). */
void ns_read(const char *pid, ino_t *ino);

/* fork()-like clone() or clone3() with @flags; the child returns 0. */
pid_t raw_clone(bool clone3, uint64_t flags);

/* Write @value to kernel.pidns_coupling: 0 or -errno. */
int write_sysctl(const char *value);

/* Set kernel.pidns_coupling or bail out of the TAP run. */
void set_mode(int mode);

/*
 * kernel.pidns_coupling_stats's count of @call's @verdict ("clone",
 * "allowed"), or -1 if the kernel has none.
 */
long pidns_stats(const char *call, const char *verdict);

/* The verdicts on @call counted so far, allowed and refused */
long pidns_judged(const char *call);

/*
 * Start a target with clone3(@flags | CLONE_PIDFD); @setup, if not NULL,
 * runs in it before it waits. Bails out on failure.
 */
void target_start(struct target *t, uint64_t flags, void (*setup)(void));
void target_stop(struct target *t);

/* Whether the kernel log (or the BPF form's, pidns-lsm record --log) holds @needle. */
bool klog_has(const char *needle);

/* Wait for @pid; its exit status, or 128 + signal. */
int wait_status(pid_t pid);

/* Memory shared with the children to come (zeroed); bails out on failure. */
void *shared_alloc(size_t size);

/* The number after @key ("pidns.fuzz_seed=") on the kernel command line. */
uint64_t cmdline_u64(const char *key, uint64_t def);

/*
 * Become an ordinary, dumpable process of @uid (and gid) with no
 * supplementary groups and no capabilities; _exit(90) if that fails.
 * Changing uids makes a process non-dumpable, which one that the user
 * started is not, and which fails ptrace access checks such as setns()'s.
 */
void become_user(uid_t uid);

/* Whether the interval [a0, a1] and the interval [b0, b1] overlap. */
bool timespans_overlap(const struct timespec *a0, const struct timespec *a1,
		       const struct timespec *b0, const struct timespec *b1);

#endif /* GUESTLIB_H */
