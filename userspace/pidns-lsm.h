/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF form of kernel.pidns_coupling (pidns-lsm.bpf.c) and its
 * loader (pidns-lsm.c) share: the maps' values and the record.
 */
#ifndef PIDNS_LSM_H
#define PIDNS_LSM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>

/* The initial PID namespace's inode number (the kernel's, not in uapi) */
#define PROC_PID_INIT_INO	0xEFFFFFFCU
#endif

/* Where the loader pins the maps and links (bpffs) */
#define PIDNS_LSM_PIN		"/sys/fs/bpf/pidns-coupling"

/* The calls, as kernel.pidns_coupling_stats and the trace event name them */
enum pidns_lsm_call {
	PIDNS_LSM_CLONE,	/* clone(), clone3(): the same-call rule */
	PIDNS_LSM_UNSHARE,	/* unshare(): the same-call rule */
	PIDNS_LSM_SETNS,	/* setns() with a pidfd: the same-call rule */
	PIDNS_LSM_JOIN,		/* a fork judged by a state check */
	PIDNS_LSM_EXEC,		/* execve(), execveat() */
	PIDNS_LSM_ENTER,	/* setns() into a mount, IPC or net namespace */
	PIDNS_LSM_NCALLS
};

/* The "config" map's one value */
struct pidns_lsm_config {
	__u32 mode;		/* 0 off, 1 warn, 2 enforce, 3 stage */
	__u32 unused;
};

/*
 * The "stats" map: an array of PIDNS_LSM_NCALLS * 2 counters, call * 2
 * for allowed, call * 2 + 1 for refused; the last counters follow.
 */
enum {
	PIDNS_LSM_LOST = PIDNS_LSM_NCALLS * 2,	/* events the ring buffer lost */
	PIDNS_LSM_UNCOUNTED,	/* members a full map could not count */
	PIDNS_LSM_RETARGETED,	/* setns() installing other than was judged */
	PIDNS_LSM_CONTENDED,	/* member counts read again: they changed */
	PIDNS_LSM_NSTATS
};

/*
 * The "owners" map: a mount, IPC or network namespace made or seen since
 * the program was attached, keyed by its address
 */
struct pidns_lsm_owner {
	__u64 owner;		/* its PID namespace's address; 0: the initial */
	__u64 id;		/* never reused (NS_GET_PIDNS_OWNER's ids) */
	__u64 counted[4];	/* PID namespaces it has member counts under */
	__u32 ncounted;
	__u32 claimed;
	__u32 uncounted;	/* a member could not be counted: no claim */
	__u32 type;		/* 0 mnt, 1 ipc, 2 net */
	__u32 inum;		/* its inode number, for pidns-lsm's readers */
	__u32 busy;		/* member counts being changed, and how often */
	__u32 gen;		/* they were: what a claim reads them against */
	__u32 unused;
};

/* The "pidnss" map: a PID namespace made or seen since then */
struct pidns_lsm_pidns {
	__u64 id;
	__u32 born;		/* the mode it was made in; 0: before */
	__u32 inum;
};

/*
 * The "members" map's key: for namespace @ns and PID namespace @pidns
 * (addresses), how many nsproxies hold @ns with a pid_ns_for_children at
 * or below @pidns (a __u64 value). It ends with @ns's record.
 */
struct pidns_lsm_member {
	__u64 ns;
	__u64 pidns;
};

/* The initial namespaces' ids, as the patched kernel gives them */
enum {
	PIDNS_LSM_IPC_INIT_ID = 1,
	PIDNS_LSM_PID_INIT_ID = 4,
	PIDNS_LSM_NET_INIT_ID = 7,
	PIDNS_LSM_MNT_INIT_ID = 8,
};

/* One verdict, with the fields of pidns_coupling:pidns_coupling_verdict */
struct pidns_lsm_event {
	__u64 ts;		/* CLOCK_MONOTONIC, ns */
	__u64 flags;
	__u64 missing;
	__u64 exe_ino;
	__u32 call;
	__u32 pid;		/* the caller's thread, in the initial PID ns */
	__u32 uid;		/* in the initial user namespace */
	__u32 pidns;		/* inode number of the caller's PID namespace */
	__u32 target;		/* of the PID namespace judged; 0: same-call */
	__u32 exe_dev;		/* the executable's device, as the kernel's */
	__s32 mode;		/* the mode that judged it (1: an old PID ns) */
	__u32 refused;
	__u32 predates;		/* judged as in mode 1: an old PID namespace */
	__u32 ns[3];		/* for a state check: the inode numbers of the */
	__u32 owner[3];		/* namespaces in @missing, and of their owners */
	__u32 unused;
	char comm[16];
	char exe[64];		/* the executable's name (its last component) */
	char file[64];		/* what execve() was asked to run (its start) */
};

#endif /* PIDNS_LSM_H */
