/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The namespace flags, in one table, for nsclone, the tests and the docs.
 */
#ifndef NSFLAGS_H
#define NSFLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/sched.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif
#ifndef CLONE_NEWCONTAINER
#define CLONE_NEWCONTAINER	0x00000040
#endif

/*
 * NS_GET_PIDNS_OWNER, for headers older than the series: the PID namespace
 * a mount, IPC or network namespace file belongs to (of a PID namespace's
 * file, itself), by inode number and by an id that is never reused.
 */
#include <linux/nsfs.h>
#ifndef NS_GET_PIDNS_OWNER
struct ns_pidns_owner {
	uint64_t pidns;
	uint64_t flags;
	uint64_t pidns_id;
	uint64_t ns_id;
};

#define NS_PIDNS_OWNER_CLAIMED	(1ULL << 0)
#define NS_GET_PIDNS_OWNER	_IOR(0xb7, 0x20, struct ns_pidns_owner)
#endif

/* What a request for CLONE_NEWPID must also ask for in enforce mode. */
#define NS_COUPLED	((uint64_t)(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET))
/* What CLONE_NEWCONTAINER stands for. */
#define NS_CONTAINER	((uint64_t)CLONE_NEWPID | NS_COUPLED)

#define PIDNS_COUPLING_SYSCTL	"/proc/sys/kernel/pidns_coupling"

enum pidns_mode {
	PIDNS_ABSENT = -1,	/* kernel without the coupling patches */
	PIDNS_OFF = 0,
	PIDNS_WARN = 1,
	PIDNS_ENFORCE = 2,
	PIDNS_STAGE = 3,	/* the state is enforced, not the same call */
};

struct ns_flag {
	const char *name;	/* CLONE_NEWPID */
	uint64_t bit;
	char opt;		/* nsclone's short option, 0 for none */
	const char *longopt;	/* nsclone's long option */
	const char *nsfile;	/* entry in /proc/PID/ns, NULL for the alias */
	const char *help;	/* nsclone --help text */
};

extern const struct ns_flag ns_flags[];
extern const size_t ns_flags_count;

/* CLONE_NEWCONTAINER replaced by the four flags it stands for. */
uint64_t ns_expand(uint64_t flags);

/* The coupled flags that a CLONE_NEWPID request lacks (0 if none). */
uint64_t ns_missing(uint64_t flags);

/*
 * Names of the table's flags set in @flags, in table order, joined by @sep
 * and by @last between the last two ("CLONE_NEWNS, CLONE_NEWIPC and ...").
 * Bits outside the table are printed in hex. Returns @buf.
 */
char *ns_flags_str(uint64_t flags, const char *sep, const char *last,
		   char *buf, size_t len);

/* nsclone's short options for @flags: "-i -n". Returns @buf. */
char *ns_flags_opts(uint64_t flags, char *buf, size_t len);

/*
 * fork()-like clone3() (or legacy clone() with @legacy) with @flags and no
 * new stack: the child returns 0. With @pidfd, the parent also gets a
 * pidfd for the child (CLONE_PIDFD).
 */
pid_t ns_clone(int legacy, uint64_t flags, int *pidfd);

/*
 * Wait for @pid: its exit status, 128 + the signal that killed it, or -1
 * if waitpid() failed.
 */
int ns_wait(pid_t pid);

/*
 * The current kernel.pidns_coupling, or PIDNS_ABSENT. On a kernel without
 * the series, the mode of the BPF form (pidns-lsm) if it is attached: the
 * adapter through which the same tests run on both.
 */
int pidns_mode_read(void);

/*
 * Write @value to kernel.pidns_coupling, or set the BPF form's mode to it
 * (0 to 3); 0 or -errno (-EINVAL: not a mode the BPF form has).
 */
int pidns_mode_write(const char *value);

/*
 * The count of @call's @verdict ("clone", "allowed") from
 * kernel.pidns_coupling_stats, or from the BPF form's counters; -1 if
 * neither exists.
 */
long pidns_stats_read(const char *call, const char *verdict);

/*
 * The BPF form's counter @idx of its "stats" map (PIDNS_LSM_RETARGETED,
 * ...), or -1 where it is not attached.
 */
long pidns_lsm_stat(unsigned int idx);

/* Whether the policy is the BPF form on a kernel without the series */
int pidns_is_bpf(void);

/*
 * NS_GET_PIDNS_OWNER of the namespace file @fd, or, on a kernel without
 * the series, what the BPF form records of it: 0 or -errno.
 */
int pidns_owner_get(int fd, struct ns_pidns_owner *o);

/* "off", "warn", "enforce", "stage", or "absent". */
const char *pidns_mode_name(int mode);

#endif /* NSFLAGS_H */
