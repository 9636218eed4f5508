// SPDX-License-Identifier: GPL-2.0
/*
 * pidns-lsm.bpf.c - kernel.pidns_coupling's policy as a BPF LSM, for
 * kernels without the series (Debian's stock 6.1 and 6.12 among them).
 *
 * The same rule, the same owners, claims and members as the patch
 * (docs/policy.md), where the hooks of a stock kernel reach:
 *
 *  - a fork is judged at lsm/task_alloc, before copy_namespaces() and
 *    alloc_pid(), with the parent's namespaces in place: the same-call
 *    rule of clone() and clone3() and the state check of a fork (EINVAL);
 *  - execve() at lsm/bprm_creds_for_exec, before the binary loaders (EPERM);
 *  - unshare() and setns() have no hook that sees their request: the
 *    syscall's entry (fentry) judges it and marks the task, and the
 *    call's first CAP_SYS_ADMIN check (lsm/capable: in
 *    unshare_nsproxy_namespaces() and each namespace's install()) refuses
 *    it, with EPERM where the patch gives EINVAL for the same-call rule;
 *  - owners are recorded where create_new_namespaces() returns; members
 *    are counted per nsproxy (copy_namespaces(), switch_task_namespaces(),
 *    free_nsproxy()) for each PID namespace above the nsproxy's
 *    pid_ns_for_children, so that "is a task outside P a member of N" is
 *    two lookups, never a walk; records end where the namespaces are
 *    freed (free_mnt_ns(), mq_clear_sbinfo(), net_ns_net_exit(),
 *    delayed_free_pidns(), which hands what a PID namespace owns to its
 *    parent).
 *
 * A claim is compare-and-swap on the owner: of two PID namespaces racing
 * for one namespace, one wins. A fork's, setns()'s and execve()'s claims
 * are made at its check and undone if the call fails afterwards (fexit of
 * copy_process() and of the syscalls).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pidns-lsm.h"

char LICENSE[] SEC("license") = "GPL";

#define CLONE_VM	0x00000100
#define CLONE_THREAD	0x00010000
#define CLONE_NEWNS	0x00020000
#define CLONE_SYSVSEM	0x00040000
#define CLONE_NEWCGROUP	0x02000000
#define CLONE_NEWUTS	0x04000000
#define CLONE_NEWIPC	0x08000000
#define CLONE_NEWUSER	0x10000000
#define CLONE_NEWPID	0x20000000
#define CLONE_NEWNET	0x40000000
#define CLONE_NEWTIME	0x00000080
#define COUPLED		(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET)
#define NEW_NS		(COUPLED | CLONE_NEWPID | CLONE_NEWUTS | \
			 CLONE_NEWCGROUP | CLONE_NEWTIME)

#define PIDNS_ADDING	(1U << 31)
#define MAX_LEVEL	33	/* MAX_PID_NS_LEVEL + 1 */
#define CAP_SYS_ADMIN	21
#define EINVAL		22
#define EPERM		1
#define EEXIST		17
#define MAX_ERRNO	4095
#define NSFS_MAGIC	0x6e736673
#define PIDFS_MAGIC	0x50494446	/* 6.9 and later: pidfds on pidfs */
#define ANON_INODE_FS_MAGIC 0x09041934	/* before: an anon inode, "[pidfd]" */

enum { MODE_OFF, MODE_WARN, MODE_ENFORCE, MODE_STAGE };
enum { T_MNT, T_IPC, T_NET, T_NR };

static const __u64 type_flag[T_NR] = { CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET };

extern const void init_pid_ns __ksym;
extern const void init_ipc_ns __ksym;
extern const void init_net __ksym;
extern const void init_nsproxy __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pidns_lsm_config);
} pidns_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PIDNS_LSM_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} events SEC(".maps");

#define owner_rec pidns_lsm_owner
#define pidns_rec pidns_lsm_pidns

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct owner_rec);
} owners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct pidns_rec);
} pidnss SEC(".maps");

/* An nsproxy that a task has had, and what it was counted under */
struct nsp_rec {
	__u64 ns[T_NR];		/* 0: an initial namespace, not counted */
	__u64 pidc;		/* its pid_ns_for_children */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct nsp_rec);
} nsps SEC(".maps");

/*
 * Members: for namespace @ns and PID namespace @pidns, how many nsproxies
 * hold @ns with a pid_ns_for_children at or below @pidns. A task outside
 * P that is not a builder of P has a pid_ns_for_children outside P, so N
 * has such a member exactly when its count under the initial PID
 * namespace exceeds its count under P.
 */
#define member_key pidns_lsm_member

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, struct member_key);
	__type(value, __u64);
} members SEC(".maps");

/* What a task carries from a check to its call's end */
struct task_state {
	__u32 joined;		/* new to a PID namespace: judged in full */
	__u32 mark;		/* refuse the call's CAP_SYS_ADMIN check */
	__u32 pend_call;	/* a verdict recorded at the call's end */
	__s32 pend_mode;
	__u64 pend_flags;
	__u64 pend_missing;
	__u64 pend_target;
	__u32 claims;		/* T_* bits: claims to undo if the call fails */
	__u32 has_pend;
	__u64 claim_by;		/* the PID namespace that claimed them */
	__u64 claim_ns[T_NR];
	__u64 claim_old[T_NR];	/* the live owner before: what an undo restores */
	__u32 claim_was[T_NR];
	__u32 exec_ns;		/* in exec_task_namespaces() (6.2 on) */
	__u32 setns_check;	/* in a setns() whose target was judged: */
	__u64 setns_ns[T_NR];	/* what it judged the call to install */
	__u64 log_ns[T_NR];	/* for the record: the namespaces judged */
	__u64 log_file;		/* and what execve() was asked to run */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} tasks SEC(".maps");

__u64 last_id;		/* ids after the initial ones (IPC 1, PID 4, NET 7, MNT 8) */
__u64 marks;		/* tasks with a mark set: lsm/capable's fast path */

#define INIT_PID	((__u64)&init_pid_ns)

static __always_inline int get_mode(void)
{
	__u32 k = 0;
	struct pidns_lsm_config *c = bpf_map_lookup_elem(&pidns_config, &k);

	return c ? c->mode : MODE_OFF;
}

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline __u64 next_id(void)
{
	return __sync_add_and_fetch(&last_id, 1) + 8;
}

__noinline __u64 init_mnt(void)
{
	return (__u64)BPF_CORE_READ((struct nsproxy *)&init_nsproxy, mnt_ns);
}

__noinline int is_initial(__u64 ns, int type)
{
	if (type == T_MNT)
		return ns == init_mnt();
	if (type == T_IPC)
		return ns == (__u64)&init_ipc_ns;
	return ns == (__u64)&init_net;
}

__noinline __u64 pid_level(__u64 p)
{
	return p ? BPF_CORE_READ((struct pid_namespace *)p, level) : 0;
}

__noinline __u64 pid_parent(__u64 p)
{
	return p ? (__u64)BPF_CORE_READ((struct pid_namespace *)p, parent) : 0;
}

__noinline __u32 pid_inum(__u64 p)
{
	return p ? BPF_CORE_READ((struct pid_namespace *)p, ns.inum) : 0;
}

/* Whether PID namespace @p is @top or nested in it */
__noinline int below(__u64 p, __u64 top)
{
	__u64 tl = pid_level(top);
	int i;

	for (i = 0; i < MAX_LEVEL && p; i++) {
		if (pid_level(p) <= tl)
			break;
		p = pid_parent(p);
	}
	return p && p == top;
}

/* Whether @p has a task left or can still get one */
__noinline int live(__u64 p)
{
	if (p == INIT_PID)
		return 1;
	return !!(BPF_CORE_READ((struct pid_namespace *)p, pid_allocated) &
		  PIDNS_ADDING);
}

__noinline __u64 owner_of(__u64 ns)
{
	struct owner_rec *rec = bpf_map_lookup_elem(&owners, &ns);

	return rec && rec->owner ? rec->owner : INIT_PID;
}

/* A dead owner stands for its nearest live ancestor */
__noinline __u64 live_owner(__u64 ns)
{
	__u64 o = owner_of(ns);
	int i;

	for (i = 0; i < MAX_LEVEL && o; i++) {
		if (live(o))
			return o;
		o = pid_parent(o);
	}
	return INIT_PID;
}

/*
 * The mode PID namespace @p was made in: 0 for one that ran before the
 * program was attached (seeded so); one without a record (a full map) is
 * judged strictly, never exempted
 */
__noinline int born(__u64 p)
{
	struct pidns_rec *rec;

	if (p == INIT_PID)
		return MODE_OFF;
	rec = bpf_map_lookup_elem(&pidnss, &p);
	return rec ? rec->born : MODE_ENFORCE;
}

/* The PID namespace @task is in */
static __always_inline __u64 task_pidns(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	struct upid up = {};
	unsigned int level;

	if (!pid)
		return 0;
	level = BPF_CORE_READ(pid, level);
	if (level >= MAX_LEVEL)
		return 0;
	bpf_probe_read_kernel(&up, sizeof(up), (void *)pid +
			      bpf_core_field_offset(struct pid, numbers) +
			      (__u64)level * bpf_core_type_size(struct upid));
	return (__u64)up.ns;
}

/* The PID namespace that the current task is in */
__noinline __u64 active_pidns(void)
{
	return task_pidns((void *)bpf_get_current_task());
}

/*
 * A pointer the verifier knows (a hook's argument) as a plain number, which
 * global functions take
 */
static __always_inline __u64 scalar(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

static __always_inline void read_nsp(__u64 nsp, __u64 *ns)
{
	struct nsproxy *n = (struct nsproxy *)nsp;

	ns[T_MNT] = (__u64)BPF_CORE_READ(n, mnt_ns);
	ns[T_IPC] = (__u64)BPF_CORE_READ(n, ipc_ns);
	ns[T_NET] = (__u64)BPF_CORE_READ(n, net_ns);
}

/* The inode number of namespace @ns of @type */
__noinline __u32 ns_inum(__u64 ns, int type)
{
	if (!ns)
		return 0;
	if (type == T_MNT)
		return BPF_CORE_READ((struct mnt_namespace *)ns, ns.inum);
	if (type == T_IPC)
		return BPF_CORE_READ((struct ipc_namespace *)ns, ns.inum);
	return BPF_CORE_READ((struct net *)ns, ns.inum);
}

/* CLONE_NEW* of each of @ns that @p neither owns nor has below it */
static __always_inline __u64 foreign(__u64 p, __u64 *ns)
{
	__u64 f = 0;
	int t;

	for (t = 0; t < T_NR; t++)
		if (ns[t] && !below(owner_of(ns[t]), p))
			f |= type_flag[t];
	return f;
}

/* Member counts */
__noinline int member_add(__u64 ns, __u64 pidns, long d)
{
	struct member_key k = { .ns = ns, .pidns = pidns };
	struct owner_rec *rec;
	__u64 zero = 0, *v;
	__u32 i;

	v = bpf_map_lookup_elem(&members, &k);
	if (!v && d > 0) {
		if (bpf_map_update_elem(&members, &k, &zero, BPF_NOEXIST) == 0) {
			rec = bpf_map_lookup_elem(&owners, &ns);
			if (rec) {
				i = __sync_fetch_and_add(&rec->ncounted, 1);
				if (i < 4)
					rec->counted[i] = pidns;
			}
		}
		v = bpf_map_lookup_elem(&members, &k);
	}
	if (!v) {
		if (d > 0) {
			rec = bpf_map_lookup_elem(&owners, &ns);
			if (rec)
				rec->uncounted = 1;
			count(PIDNS_LSM_UNCOUNTED);
		}
		return 0;
	}
	__sync_fetch_and_add(v, d);
	return 0;
}

__noinline __u64 members_under(__u64 ns, __u64 pidns)
{
	struct member_key k = { .ns = ns, .pidns = pidns };
	__u64 *v = bpf_map_lookup_elem(&members, &k);

	return v ? *v : 0;
}

/*
 * Count one nsproxy holding @ns, with @pidc for its children, in (@d 1) or
 * out (-1), under @pidc and every PID namespace above it. The record's
 * busy and gen tell a claim reading the counts (has_outsider()) that they
 * changed under it: a half-done change can show, under the claimer's PID
 * namespace, a member that the initial one's count does not have yet.
 */
__noinline int members_change(__u64 ns, __u64 pidc, long d)
{
	struct owner_rec *o = bpf_map_lookup_elem(&owners, &ns);
	__u64 p = pidc;
	int i;

	if (o)
		__sync_fetch_and_add(&o->busy, 1);
	for (i = 0; i < MAX_LEVEL && p; i++) {
		member_add(ns, p, d);
		p = pid_parent(p);
	}
	if (o) {
		__sync_fetch_and_add(&o->gen, 1);
		__sync_fetch_and_sub(&o->busy, 1);
	}
	return 0;
}

/* Record a namespace seen for the first time (owner: the initial PID ns) */
__noinline int owner_seen(__u64 ns, int type)
{
	struct owner_rec rec = {};

	if (!ns || is_initial(ns, type))
		return 0;
	rec.id = next_id();
	rec.type = type;
	rec.inum = ns_inum(ns, type);
	bpf_map_update_elem(&owners, &ns, &rec, BPF_NOEXIST);
	return 0;
}

/*
 * Count @nsp's members, once: for each of its namespaces but the initial
 * ones, under its pid_ns_for_children and every PID namespace above it.
 */
__noinline int nsp_add(__u64 nsp)
{
	struct nsp_rec rec = {};
	__u64 ns[T_NR];
	long err;
	int t;

	if (!nsp)
		return 0;
	read_nsp(nsp, ns);
	for (t = 0; t < T_NR; t++)
		if (ns[t] && !is_initial(ns[t], t))
			rec.ns[t] = ns[t];
	if (!rec.ns[T_MNT] && !rec.ns[T_IPC] && !rec.ns[T_NET])
		return 0;
	rec.pidc = (__u64)BPF_CORE_READ((struct nsproxy *)nsp, pid_ns_for_children);
	err = bpf_map_update_elem(&nsps, &nsp, &rec, BPF_NOEXIST);
	if (err == -EEXIST)
		return 0;
	if (err) {
		/* A full map: these members go uncounted, and no claim of
		 * their namespaces can succeed */
		for (t = 0; t < T_NR; t++) {
			struct owner_rec *o;

			if (!rec.ns[t])
				continue;
			owner_seen(rec.ns[t], t);
			o = bpf_map_lookup_elem(&owners, &rec.ns[t]);
			if (o)
				o->uncounted = 1;
		}
		count(PIDNS_LSM_UNCOUNTED);
		return 0;
	}
	for (t = 0; t < T_NR; t++) {
		if (!rec.ns[t])
			continue;
		owner_seen(rec.ns[t], t);
		members_change(rec.ns[t], rec.pidc, 1);
	}
	return 0;
}

__noinline int nsp_del(__u64 nsp)
{
	struct nsp_rec *r = bpf_map_lookup_elem(&nsps, &nsp), rec;
	int t;

	if (!r)
		return 0;
	rec = *r;
	if (bpf_map_delete_elem(&nsps, &nsp))
		return 0;
	for (t = 0; t < T_NR; t++)
		if (rec.ns[t])
			members_change(rec.ns[t], rec.pidc, -1);
	return 0;
}

/*
 * Whether a task outside @p, not a builder of it, is a member of @ns: the
 * two counts, read while no change of them was under way or ended (a
 * few tries, then yes: a claim refused, never one allowed on counts that
 * were changing).
 */
__noinline int has_outsider(__u64 p, __u64 ns)
{
	struct owner_rec *rec = bpf_map_lookup_elem(&owners, &ns);
	__u64 all, mine;
	__u32 gen;
	int i;

	if (!rec || rec->uncounted)
		return 1;
	for (i = 0; i < 4; i++) {
		gen = __sync_fetch_and_add(&rec->gen, 0);
		if (__sync_fetch_and_add(&rec->busy, 0) == 0) {
			all = members_under(ns, INIT_PID);
			mine = members_under(ns, p);
			if (__sync_fetch_and_add(&rec->busy, 0) == 0 &&
			    __sync_fetch_and_add(&rec->gen, 0) == gen)
				return all != mine;
		}
		count(PIDNS_LSM_CONTENDED);
	}
	return 1;
}

enum { CLAIM_NO, CLAIM_YES, CLAIM_OWNED };

__noinline int claimable(__u64 p, __u64 ns, int type)
{
	__u64 o;

	if (!p || is_initial(ns, type))
		return CLAIM_NO;
	o = live_owner(ns);
	if (below(o, p))
		return CLAIM_OWNED;
	if (below(p, o) && !has_outsider(p, ns))
		return CLAIM_YES;
	return CLAIM_NO;
}

/*
 * What of @f (of @ns) @p neither owns nor can claim; the claims are made
 * if that is nothing, and kept in @st to be undone if the call fails.
 */
static __always_inline __u64 decide(__u64 p, __u64 *ns, __u64 f,
				    struct task_state *st)
{
	__u32 claims = 0, done = 0;
	struct owner_rec *rec;
	__u64 old[T_NR] = {}, undo[T_NR] = {}, lo;
	int t;

	for (t = 0; t < T_NR; t++) {
		if (!(f & type_flag[t]))
			continue;
		rec = bpf_map_lookup_elem(&owners, &ns[t]);
		if (rec)
			old[t] = rec->owner;
		switch (claimable(p, ns[t], t)) {
		case CLAIM_OWNED:
			f &= ~type_flag[t];
			break;
		case CLAIM_YES:
			claims |= 1U << t;
			/*
			 * An undo restores the live owner, an ancestor of
			 * @p that outlives the call, never a dead PID
			 * namespace whose address a new one may take.
			 */
			lo = live_owner(ns[t]);
			undo[t] = lo == INIT_PID ? 0 : lo;
			break;
		}
	}
	for (t = 0; t < T_NR; t++)
		if (claims & (1U << t))
			f &= ~type_flag[t];
	if (f || !claims)
		return f;
	for (t = 0; t < T_NR; t++) {
		if (!(claims & (1U << t)))
			continue;
		rec = bpf_map_lookup_elem(&owners, &ns[t]);
		if (!rec ||
		    __sync_val_compare_and_swap(&rec->owner, old[t], p) != old[t])
			break;
		done |= 1U << t;
		if (st) {
			st->claim_ns[t] = ns[t];
			st->claim_old[t] = undo[t];
			st->claim_was[t] = rec->claimed;
		}
		rec->claimed = 1;
	}
	if (done == claims) {
		if (st) {
			st->claims = claims;
			st->claim_by = p;
		}
		return 0;
	}
	/* Another PID namespace won a race for one of them: undo ours */
	for (t = 0; t < T_NR; t++) {
		if (!(done & (1U << t)))
			continue;
		rec = bpf_map_lookup_elem(&owners, &ns[t]);
		if (rec &&
		    __sync_val_compare_and_swap(&rec->owner, p, undo[t]) == p &&
		    st)
			rec->claimed = st->claim_was[t];
	}
	if (st)
		st->claims = 0;
	for (t = 0; t < T_NR; t++)
		if (claims & (1U << t))
			f |= type_flag[t];
	return f;
}

/* Undo the claims of a call that failed after its check */
static __always_inline void claims_end(struct task_state *st, int failed)
{
	struct owner_rec *rec;
	int t;

	if (!st || !st->claims)
		return;
	for (t = 0; t < T_NR; t++) {
		if (!failed || !(st->claims & (1U << t)))
			continue;
		rec = bpf_map_lookup_elem(&owners, &st->claim_ns[t]);
		if (!rec)
			continue;
		/* Only a claim still ours: the namespace may have ended */
		if (__sync_val_compare_and_swap(&rec->owner, st->claim_by,
						st->claim_old[t]) == st->claim_by)
			rec->claimed = st->claim_was[t];
	}
	st->claims = 0;
}

/* Whether every namespace of @ns in @f belongs to a PID namespace made
 * in mode 0 or 1, or to the initial one */
static __always_inline int old_owners(__u64 *ns, __u64 f)
{
	int t;

	for (t = 0; t < T_NR; t++)
		if ((f & type_flag[t]) && born(owner_of(ns[t])) >= MODE_ENFORCE)
			return 0;
	return 1;
}

/* The mode that judges a state check (definition 8, old PID namespaces) */
static __always_inline int state_mode(int call, __u64 p, int mode, __u64 *ns,
				      __u64 f, int joiner, int joined)
{
	if (mode >= MODE_ENFORCE && !joiner && call != PIDNS_LSM_ENTER &&
	    born(p) < MODE_ENFORCE && !joined && (!ns || old_owners(ns, f)))
		return MODE_WARN;
	return mode;
}

/* @what: the call, | refused << 8, | the mode << 16 (five arguments at most) */
__noinline int record_what(__u32 what, __u64 flags, __u64 missing,
			    __u64 target)
{
	struct task_struct *task = bpf_get_current_task_btf();
	int call = what & 0xff, refused = (what >> 8) & 1, mode = what >> 16;
	struct task_state *st;
	int t;
	struct pidns_lsm_event *e;
	struct file *exe;

	if (call >= PIDNS_LSM_NCALLS)
		return 0;
	count(call * 2 + refused);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PIDNS_LSM_LOST);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->call = call;
	e->flags = flags;
	e->missing = missing;
	e->mode = mode;
	e->refused = refused;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->pidns = pid_inum(active_pidns());
	e->target = pid_inum(target);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	exe = BPF_CORE_READ(task, mm, exe_file);
	e->exe_dev = exe ? BPF_CORE_READ(exe, f_inode, i_sb, s_dev) : 0;
	e->exe_ino = exe ? BPF_CORE_READ(exe, f_inode, i_ino) : 0;
	e->predates = (what >> 9) & 1;
	e->file[0] = 0;
	st = bpf_task_storage_get(&tasks, task, 0, 0);
	for (t = 0; t < T_NR; t++) {
		e->ns[t] = 0;
		e->owner[t] = 0;
		if (st && (missing & type_flag[t]) && call >= PIDNS_LSM_JOIN) {
			e->ns[t] = ns_inum(st->log_ns[t], t);
			e->owner[t] = pid_inum(owner_of(st->log_ns[t]));
		}
	}
	if (st && call == PIDNS_LSM_EXEC && st->log_file)
		bpf_probe_read_kernel_str(e->file, sizeof(e->file),
					  (void *)st->log_file);
	e->exe[0] = 0;
	if (exe)
		bpf_probe_read_kernel_str(e->exe, sizeof(e->exe),
					  BPF_CORE_READ(exe, f_path.dentry, d_name.name));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * Count and record a verdict; what the mode makes of it: 0, or the errno
 * (positive) of a refusal. @judge is the mode that judges it.
 */
#define record(call, flags, missing, mode, refused, target) \
	record_what((call) | (!!(refused) << 8) | ((mode) << 16), flags, \
		    missing, target)
#define record_judged(call, flags, missing, mode, judge, target) \
	record_what((call) | ((judge) >= MODE_ENFORCE) << 8 | \
		    ((judge) != (mode)) << 9 | ((mode) << 16), flags, \
		    missing, target)

static __always_inline int verdict(int call, __u64 flags, __u64 missing,
				   int mode, int judge, __u64 target)
{
	int refused = judge >= MODE_ENFORCE;

	record_judged(call, flags, missing, mode, judge, target);
	if (!refused)
		return 0;
	return call == PIDNS_LSM_EXEC || call == PIDNS_LSM_ENTER ? EPERM : EINVAL;
}

/*
 * What an LSM program returns for a verdict's errno: the verifier (6.12)
 * wants a value it can see is 0 or a negative errno
 */
static __always_inline int lsm_ret(int e)
{
	if (e == EINVAL)
		return -EINVAL;
	if (e == EPERM)
		return -EPERM;
	return 0;
}

static __always_inline struct task_state *state_of(struct task_struct *t,
						   int create)
{
	return bpf_task_storage_get(&tasks, t, 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* What the record of a state check names: the namespaces judged */
static __always_inline void log_ns(struct task_state *st, __u64 *ns)
{
	int t;

	if (!st)
		return;
	for (t = 0; t < T_NR; t++)
		st->log_ns[t] = ns[t];
}

/* Whether the current task is in the initial PID namespace, or has only
 * namespaces of its own PID namespace */
static __always_inline int parent_clean(__u64 active, __u64 *ns)
{
	return active == INIT_PID || !foreign(active, ns);
}

/*
 * A fork's state check: the child, born into @p, has the parent's
 * namespaces @ns but those @flags makes anew (which are @p's own).
 */
static __always_inline int judge_fork(__u64 flags, __u64 p, __u64 *pns,
				      int mode, int staged, int joiner,
				      struct task_state *st)
{
	__u64 ns[T_NR], f;
	int t, joined = st ? st->joined : 0;

	for (t = 0; t < T_NR; t++)
		ns[t] = flags & type_flag[t] ? 0 : pns[t];
	f = foreign(p, ns);
	if (!f)
		return 0;
	f = decide(p, ns, f, st);
	if (!f || staged)
		return 0;
	log_ns(st, ns);
	return verdict(PIDNS_LSM_JOIN, flags, f, mode,
		       state_mode(PIDNS_LSM_JOIN, p, mode, ns, f, joiner, joined),
		       p);
}

static __always_inline int has_cap_sys_admin(struct task_struct *t)
{
	const struct cred *c = BPF_CORE_READ(t, cred);
	__u64 v = 0;

	/* 6.1: a struct of two u32 words; 6.12: one u64 */
	bpf_probe_read_kernel(&v, sizeof(v), (void *)c +
			      bpf_core_field_offset(struct cred, cap_effective));
	return !!(v & (1ULL << CAP_SYS_ADMIN));
}

SEC("lsm/task_alloc")
int BPF_PROG(pidns_task_alloc, struct task_struct *task,
	     unsigned long clone_flags)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 active, pc, nsp, ns[T_NR], missing;
	struct task_state *st, *cst;
	int mode = get_mode(), ret = 0;

	st = state_of(cur, 0);
	if (st && st->joined) {
		cst = state_of(task, 1);
		if (cst)
			cst->joined = 1;
	}
	if (mode == MODE_OFF)
		return 0;
	/* What the kernel refuses anyway gets no verdict */
	if ((clone_flags & NEW_NS) && !(clone_flags & CLONE_NEWUSER) &&
	    !has_cap_sys_admin(cur))
		return 0;
	if ((clone_flags & (CLONE_NEWIPC | CLONE_SYSVSEM)) ==
	    (CLONE_NEWIPC | CLONE_SYSVSEM))
		return 0;

	nsp = (__u64)BPF_CORE_READ(cur, nsproxy);
	if (!nsp)
		return 0;
	read_nsp(nsp, ns);
	active = active_pidns();
	pc = (__u64)BPF_CORE_READ(cur, nsproxy, pid_ns_for_children);
	if (!st)
		st = state_of(cur, 1);
	if (st)
		st->claims = 0;

	if (clone_flags & CLONE_NEWPID) {
		/* A parent in the shared state gives its init no window */
		if (active != INIT_PID && !parent_clean(active, ns)) {
			__u64 cns[T_NR], f = 0;
			int t;

			for (t = 0; t < T_NR; t++) {
				cns[t] = clone_flags & type_flag[t] ? 0 : ns[t];
				if (cns[t])
					f |= type_flag[t];
			}
			log_ns(st, cns);
			if (f)
				ret = verdict(PIDNS_LSM_JOIN, clone_flags, f, mode,
					      state_mode(PIDNS_LSM_JOIN, pc, mode,
							 cns, f, 0,
							 st ? st->joined : 0),
					      0);
		}
	} else if (pc == active) {
		if (active != INIT_PID && !(clone_flags & CLONE_THREAD))
			ret = judge_fork(clone_flags, active, ns, mode, 0, 0, st);
	} else {
		/* A joiner: marked, and judged in full from then on */
		if (mode >= MODE_ENFORCE) {
			cst = state_of(task, 1);
			if (cst)
				cst->joined = 1;
		}
		if (mode == MODE_STAGE) {
			/* The fork that gives the PID namespace its init */
			int init = BPF_CORE_READ((struct pid_namespace *)pc,
						 pid_allocated) == PIDNS_ADDING;

			ret = judge_fork(clone_flags, pc, ns, mode,
					 init && parent_clean(active, ns), 1, st);
		} else {
			ret = judge_fork(clone_flags, pc, ns, mode, 0, 1, st);
		}
	}
	if (ret)
		return lsm_ret(ret);

	/* The same-call rule, after the state check as in the patch */
	if ((clone_flags & CLONE_NEWPID) &&
	    (mode == MODE_WARN || mode == MODE_ENFORCE)) {
		missing = COUPLED & ~clone_flags;
		if (missing)
			ret = verdict(PIDNS_LSM_CLONE, clone_flags, missing, mode,
				      mode, 0);
	}
	if (ret && st)
		claims_end(st, 1);
	return lsm_ret(ret);
}

SEC("fexit/copy_process")
int BPF_PROG(pidns_copy_process_end, struct pid *pid, int trace, int node,
	     struct kernel_clone_args *args, struct task_struct *ret)
{
	struct task_state *st = state_of(bpf_get_current_task_btf(), 0);

	claims_end(st, (unsigned long)ret >= (unsigned long)-MAX_ERRNO);
	return 0;
}

SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(pidns_exec, struct linux_binprm *bprm)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 active, built, nsp, ns[T_NR], f, shared = 0;
	int mode = get_mode(), ret, t, joined;
	struct task_state *st;

	if (mode == MODE_OFF)
		return 0;
	nsp = (__u64)BPF_CORE_READ(cur, nsproxy);
	if (!nsp)
		return 0;
	read_nsp(nsp, ns);
	active = active_pidns();
	built = (__u64)BPF_CORE_READ(cur, nsproxy, pid_ns_for_children);
	st = state_of(cur, 1);
	joined = st ? st->joined : 0;
	log_ns(st, ns);
	if (st)
		st->log_file = (__u64)BPF_CORE_READ(bprm, filename);

	/* A builder: none of the namespaces of what it builds */
	if (built != active) {
		__u64 al = pid_level(active);

		for (t = 0; t < T_NR; t++) {
			__u64 o = owner_of(ns[t]);

			if (pid_level(o) > al && below(built, o))
				shared |= type_flag[t];
		}
		if (shared) {
			ret = verdict(PIDNS_LSM_EXEC, CLONE_NEWPID, shared, mode,
				      state_mode(PIDNS_LSM_EXEC, built, mode, 0,
						 shared, 0, joined), built);
			if (ret)
				return lsm_ret(ret);
		}
	}
	if (active == INIT_PID)
		return 0;
	f = foreign(active, ns);
	if (!f)
		return 0;
	if (st)
		st->claims = 0;
	f = decide(active, ns, f, st);
	if (!f)
		return 0;
	return lsm_ret(verdict(PIDNS_LSM_EXEC, 0, f, mode,
			state_mode(PIDNS_LSM_EXEC, active, mode, ns, f, 0, joined),
			active));
}

static __always_inline int exec_end(long ret)
{
	claims_end(state_of(bpf_get_current_task_btf(), 0), ret != 0);
	return 0;
}

SEC("fexit/__x64_sys_execve")
int BPF_PROG(pidns_execve_end, struct pt_regs *regs, long ret)
{
	return exec_end(ret);
}

SEC("fexit/__x64_sys_execveat")
int BPF_PROG(pidns_execveat_end, struct pt_regs *regs, long ret)
{
	return exec_end(ret);
}

/* 32-bit execve(): the loader leaves these out where they do not exist */
SEC("fexit/__ia32_compat_sys_execve")
int BPF_PROG(pidns_execve32_end, struct pt_regs *regs, long ret)
{
	return exec_end(ret);
}

SEC("fexit/__ia32_compat_sys_execveat")
int BPF_PROG(pidns_execveat32_end, struct pt_regs *regs, long ret)
{
	return exec_end(ret);
}

/*
 * From 6.2 on, execve() gives a task the time namespace it unshared:
 * exec_task_namespaces() makes an nsproxy and installs it, and 6.12
 * inlines switch_task_namespaces() there, so the new nsproxy is counted
 * where it is made (pidns_created), before the old one is freed. The
 * loader leaves these out on a kernel without the function (6.1).
 */
SEC("fentry/exec_task_namespaces")
int BPF_PROG(pidns_exec_ns)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_state *st;

	if (BPF_CORE_READ(cur, nsproxy, time_ns_for_children) ==
	    BPF_CORE_READ(cur, nsproxy, time_ns))
		return 0;
	st = state_of(cur, 1);
	if (st)
		st->exec_ns = 1;
	return 0;
}

SEC("fexit/exec_task_namespaces")
int BPF_PROG(pidns_exec_ns_end, int ret)
{
	struct task_state *st = state_of(bpf_get_current_task_btf(), 0);

	if (st)
		st->exec_ns = 0;
	return 0;
}

/* Set a mark: the call's first CAP_SYS_ADMIN check refuses it */
static __always_inline void mark(struct task_state *st, int call, __u64 flags,
				 __u64 missing, int mode, __u64 target)
{
	if (!st->mark)
		__sync_fetch_and_add(&marks, 1);
	st->mark = 1;
	st->pend_call = call;
	st->pend_flags = flags;
	st->pend_missing = missing;
	st->pend_mode = mode;
	st->pend_target = target;
}

static __always_inline void pend(struct task_state *st, int call, __u64 flags,
				 __u64 missing, int mode, __u64 target)
{
	st->has_pend = 1;
	st->pend_call = call;
	st->pend_flags = flags;
	st->pend_missing = missing;
	st->pend_mode = mode;
	st->pend_target = target;
}

/* The end of unshare() or setns(): what the mark did not record */
static __always_inline int call_end(long ret)
{
	struct task_state *st = state_of(bpf_get_current_task_btf(), 0);

	if (!st)
		return 0;
	if (st->mark) {
		st->mark = 0;
		__sync_fetch_and_sub(&marks, 1);
	}
	if (st->has_pend && ret == 0)
		record(st->pend_call, st->pend_flags, st->pend_missing,
		       st->pend_mode, 0, st->pend_target);
	st->has_pend = 0;
	st->setns_check = 0;
	claims_end(st, ret != 0);
	return 0;
}

static __always_inline int unshare_start(__u64 flags)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	int mode = get_mode();
	struct task_state *st;
	__u64 missing;

	/* No claim of an earlier call is this one's to undo */
	st = state_of(cur, 0);
	if (st)
		st->claims = 0;
	if ((mode != MODE_WARN && mode != MODE_ENFORCE) ||
	    !(flags & CLONE_NEWPID))
		return 0;
	missing = COUPLED & ~flags;
	if (!missing)
		return 0;
	st = state_of(cur, 1);
	if (!st)
		return 0;
	if (mode == MODE_ENFORCE)
		mark(st, PIDNS_LSM_UNSHARE, flags, missing, mode, 0);
	else
		pend(st, PIDNS_LSM_UNSHARE, flags, missing, mode, 0);
	return 0;
}

SEC("fentry/__x64_sys_unshare")
int BPF_PROG(pidns_unshare, struct pt_regs *regs)
{
	return unshare_start(BPF_CORE_READ(regs, di));
}

SEC("fexit/__x64_sys_unshare")
int BPF_PROG(pidns_unshare_end, struct pt_regs *regs, long ret)
{
	return call_end(ret);
}

SEC("fentry/__ia32_sys_unshare")
int BPF_PROG(pidns_unshare32, struct pt_regs *regs)
{
	return unshare_start((__u32)BPF_CORE_READ(regs, bx));
}

SEC("fexit/__ia32_sys_unshare")
int BPF_PROG(pidns_unshare32_end, struct pt_regs *regs, long ret)
{
	return call_end(ret);
}

/* The file behind the current task's descriptor @fd */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(cur, files, fdt);
	struct file **fds, *f = 0;

	if (fd < 0 || !fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/*
 * The struct pid of @file if it is a pidfd, or NULL: on pidfs (6.9 on) the
 * inode's i_private, before it an anon inode "[pidfd]"'s private_data.
 */
static __always_inline struct pid *pidfd_pid(struct file *file)
{
	unsigned long magic = BPF_CORE_READ(file, f_inode, i_sb, s_magic);
	char name[8] = {};

	if (magic == PIDFS_MAGIC)
		return BPF_CORE_READ(file, f_inode, i_private);
	if (magic != ANON_INODE_FS_MAGIC)
		return 0;
	bpf_probe_read_kernel_str(name, sizeof(name),
				  BPF_CORE_READ(file, f_path.dentry, d_name.name));
	if (__builtin_memcmp(name, "[pidfd]", 8))
		return 0;
	return BPF_CORE_READ(file, private_data);
}

static __always_inline __u64 ns_from_common(__u64 nsc, int type)
{
	switch (type) {
	case T_MNT:
		return nsc - bpf_core_field_offset(struct mnt_namespace, ns);
	case T_IPC:
		return nsc - bpf_core_field_offset(struct ipc_namespace, ns);
	default:
		return nsc - bpf_core_field_offset(struct net, ns);
	}
}

/*
 * setns(): judged at its entry, on the namespaces its descriptor names
 * then. The kernel looks the descriptor and a pidfd's target up again, so
 * each namespace it installs is checked against what was judged
 * (install_check): a descriptor swapped by a thread that shares the file
 * table, or a target that changed namespaces in between, is refused there.
 */
static __always_inline int setns_start(int fd, __u64 nstype)
{
	struct task_struct *cur = bpf_get_current_task_btf(), *target;
	__u64 active, ns[T_NR], nns[T_NR], tns[T_NR], f, changed = 0;
	int mode = get_mode(), t, judged = 0;
	struct task_state *st;
	struct file *file;
	__u64 missing = 0;
	struct pid *pid = 0;

	if (mode == MODE_OFF)
		return 0;
	read_nsp((__u64)BPF_CORE_READ(cur, nsproxy), ns);
	for (t = 0; t < T_NR; t++)
		nns[t] = ns[t];

	file = fd_file(fd);
	if (file)
		pid = pidfd_pid(file);
	if (pid) {
		struct hlist_node *first;
		__u64 tnsp = 0;

		first = BPF_CORE_READ(pid, tasks[0].first);
		if (first) {
			target = (void *)first -
				 bpf_core_field_offset(struct task_struct,
						       pid_links);
			tnsp = (__u64)BPF_CORE_READ(target, nsproxy);
		}
		if (tnsp) {
			judged = 1;
			read_nsp(tnsp, tns);
			for (t = 0; t < T_NR; t++)
				if (nstype & type_flag[t])
					nns[t] = tns[t];
			/* The same-call rule on the state the call produces */
			if ((nstype & CLONE_NEWPID) &&
			    (mode == MODE_WARN || mode == MODE_ENFORCE))
				for (t = 0; t < T_NR; t++)
					if (nns[t] != tns[t])
						missing |= type_flag[t];
		}
	} else if (file &&
		   BPF_CORE_READ(file, f_inode, i_sb, s_magic) == NSFS_MAGIC) {
		struct ns_common *nsc = BPF_CORE_READ(file, f_inode, i_private);
		__u64 type = (__u32)BPF_CORE_READ(nsc, ops, type);

		if (!nstype || nstype == type) {
			judged = 1;
			for (t = 0; t < T_NR; t++)
				if (type == type_flag[t])
					nns[t] = ns_from_common((__u64)nsc, t);
		}
	}

	active = active_pidns();
	if (!judged && active == INIT_PID)
		return 0;
	st = state_of(cur, 1);
	if (!st)
		return 0;
	st->claims = 0;
	st->has_pend = 0;
	/*
	 * What the verdict below depends on: the caller's PID namespace, or
	 * for the same-call rule the target's namespaces. A descriptor that
	 * named no namespace here may install none.
	 */
	if (active != INIT_PID || missing) {
		st->setns_check = 1;
		for (t = 0; t < T_NR; t++)
			st->setns_ns[t] = nns[t];
	}
	if (!judged)
		return 0;
	log_ns(st, nns);
	if (missing) {
		if (mode == MODE_ENFORCE) {
			mark(st, PIDNS_LSM_SETNS, nstype, missing, mode, 0);
			return 0;
		}
		/* Warn mode records it, and goes on to the state check */
		record(PIDNS_LSM_SETNS, nstype, missing, mode, 0, 0);
	}

	if (active == INIT_PID)
		return 0;
	for (t = 0; t < T_NR; t++)
		if (nns[t] != ns[t])
			changed |= type_flag[t];
	if (!changed)
		return 0;
	f = foreign(active, nns) & changed;
	if (!f)
		return 0;
	f = decide(active, nns, f, st);
	if (!f)
		return 0;
	if (mode >= MODE_ENFORCE)
		mark(st, PIDNS_LSM_ENTER, 0, f, mode, active);
	else
		pend(st, PIDNS_LSM_ENTER, 0, f, mode, active);
	return 0;
}

/*
 * A namespace's install() in setns(), before its CAP_SYS_ADMIN check: one
 * other than the call was judged to install is refused by that check in
 * modes 2 and 3, and recorded in mode 1, as the entry would have judged a
 * namespace it did not see.
 */
static __always_inline int install_check(struct ns_common *nsc, int t)
{
	struct task_state *st = state_of(bpf_get_current_task_btf(), 0);
	int mode = get_mode();
	__u64 ns;

	if (!st || !st->setns_check || mode == MODE_OFF)
		return 0;
	ns = ns_from_common(scalar(nsc), t);
	if (ns == st->setns_ns[t])
		return 0;
	count(PIDNS_LSM_RETARGETED);
	st->log_ns[t] = ns;
	if (mode >= MODE_ENFORCE)
		mark(st, PIDNS_LSM_ENTER, 0, type_flag[t], mode, active_pidns());
	else
		pend(st, PIDNS_LSM_ENTER, 0, type_flag[t], mode, active_pidns());
	return 0;
}

SEC("fentry/mntns_install")
int BPF_PROG(pidns_mnt_install, struct nsset *nsset, struct ns_common *ns)
{
	return install_check(ns, T_MNT);
}

SEC("fentry/ipcns_install")
int BPF_PROG(pidns_ipc_install, struct nsset *nsset, struct ns_common *ns)
{
	return install_check(ns, T_IPC);
}

SEC("fentry/netns_install")
int BPF_PROG(pidns_net_install, struct nsset *nsset, struct ns_common *ns)
{
	return install_check(ns, T_NET);
}

SEC("fentry/__x64_sys_setns")
int BPF_PROG(pidns_setns, struct pt_regs *regs)
{
	return setns_start((int)BPF_CORE_READ(regs, di), BPF_CORE_READ(regs, si));
}

SEC("fexit/__x64_sys_setns")
int BPF_PROG(pidns_setns_end, struct pt_regs *regs, long ret)
{
	return call_end(ret);
}

SEC("fentry/__ia32_sys_setns")
int BPF_PROG(pidns_setns32, struct pt_regs *regs)
{
	return setns_start((int)BPF_CORE_READ(regs, bx),
			   (__u32)BPF_CORE_READ(regs, cx));
}

SEC("fexit/__ia32_sys_setns")
int BPF_PROG(pidns_setns32_end, struct pt_regs *regs, long ret)
{
	return call_end(ret);
}

/* The refusal of a marked unshare() or setns() */
SEC("lsm/capable")
int BPF_PROG(pidns_capable, const struct cred *cred, struct user_namespace *ns,
	     int cap, unsigned int opts, int ret)
{
	struct task_state *st;

	if (ret)	/* another program on this hook refused it */
		return ret < 0 && ret >= -MAX_ERRNO ? ret : -EPERM;
	if (cap != CAP_SYS_ADMIN || !marks)
		return 0;
	st = state_of(bpf_get_current_task_btf(), 0);
	if (!st || !st->mark)
		return 0;
	st->mark = 0;
	__sync_fetch_and_sub(&marks, 1);
	record(st->pend_call, st->pend_flags, st->pend_missing, st->pend_mode,
	       1, st->pend_target);
	return -EPERM;
}

/* Owners: the PID namespace the creator's children are born into */
SEC("fexit/create_new_namespaces")
int BPF_PROG(pidns_created, unsigned long flags, struct task_struct *tsk,
	     struct user_namespace *user_ns, struct fs_struct *new_fs,
	     struct nsproxy *ret)
{
	__u64 ns[T_NR], old[T_NR], pidc, oldpc;
	struct owner_rec rec = {};
	int t;

	if (!ret || (unsigned long)ret >= (unsigned long)-MAX_ERRNO)
		return 0;
	if (tsk == bpf_get_current_task_btf()) {
		struct task_state *st = state_of(tsk, 0);

		if (st && st->exec_ns)
			nsp_add(scalar(ret));
	}
	read_nsp((__u64)ret, ns);
	read_nsp((__u64)BPF_CORE_READ(tsk, nsproxy), old);
	pidc = (__u64)BPF_CORE_READ(ret, pid_ns_for_children);
	oldpc = (__u64)BPF_CORE_READ(tsk, nsproxy, pid_ns_for_children);
	if (pidc != oldpc) {
		struct pidns_rec prec = { .id = next_id(), .born = get_mode(),
					  .inum = pid_inum(pidc) };

		bpf_map_update_elem(&pidnss, &pidc, &prec, BPF_ANY);
	}
	for (t = 0; t < T_NR; t++) {
		if (ns[t] == old[t] || is_initial(ns[t], t))
			continue;
		__builtin_memset(&rec, 0, sizeof(rec));
		rec.owner = pidc == INIT_PID ? 0 : pidc;
		rec.id = next_id();
		rec.type = t;
		rec.inum = ns_inum(ns[t], t);
		bpf_map_update_elem(&owners, &ns[t], &rec, BPF_ANY);
	}
	return 0;
}

SEC("fexit/copy_namespaces")
int BPF_PROG(pidns_copied, unsigned long flags, struct task_struct *tsk,
	     int ret)
{
	__u64 nsp = (__u64)BPF_CORE_READ(tsk, nsproxy);

	if (ret == 0 &&
	    nsp != (__u64)BPF_CORE_READ(bpf_get_current_task_btf(), nsproxy))
		nsp_add(nsp);
	return 0;
}

SEC("fentry/switch_task_namespaces")
int BPF_PROG(pidns_switch, struct task_struct *p, struct nsproxy *new)
{
	if (new)
		nsp_add(scalar(new));
	return 0;
}

SEC("fentry/free_nsproxy")
int BPF_PROG(pidns_free_nsproxy, struct nsproxy *ns)
{
	nsp_del(scalar(ns));
	return 0;
}

static long sweep_member(struct bpf_map *map, struct member_key *k,
			 __u64 *v, __u64 *ns)
{
	if (k->ns == *ns)
		bpf_map_delete_elem(map, k);
	return 0;
}

/*
 * A namespace's end: its record and its member counts, found in the
 * record's list or, for one counted under more PID namespaces than the
 * list holds, by a sweep of the map.
 */
__noinline int owner_drop(__u64 ns)
{
	struct owner_rec *rec = bpf_map_lookup_elem(&owners, &ns);
	struct member_key k = { .ns = ns };
	__u32 i, n;

	if (!rec)
		return 0;
	n = rec->ncounted;
	for (i = 0; i < 4 && i < n; i++) {
		k.pidns = rec->counted[i];
		bpf_map_delete_elem(&members, &k);
	}
	if (n > 4)
		bpf_for_each_map_elem(&members, sweep_member, &ns, 0);
	bpf_map_delete_elem(&owners, &ns);
	return 0;
}

SEC("fentry/free_mnt_ns")
int BPF_PROG(pidns_free_mnt, struct mnt_namespace *ns)
{
	owner_drop(scalar(ns));
	return 0;
}

SEC("fentry/mq_clear_sbinfo")
int BPF_PROG(pidns_free_ipc, struct ipc_namespace *ns)
{
	owner_drop(scalar(ns));
	return 0;
}

/*
 * Not __put_net(): net_namespace.c inlines it into netns_put(), so a
 * network namespace whose last reference was a file would keep its record
 * (tests/guest/stock.sh, "no record outlives its namespace"). The pernet
 * exit that frees its inode number is called through a pointer, once per
 * namespace, in both versions; the patch disowns there too.
 */
SEC("fentry/net_ns_net_exit")
int BPF_PROG(pidns_free_net, struct net *net)
{
	owner_drop(scalar(net));
	return 0;
}

struct reparent_ctx {
	__u64 dead;
	__u64 parent;
};

static long reparent(struct bpf_map *map, __u64 *key, struct owner_rec *rec,
		     struct reparent_ctx *ctx)
{
	if (rec->owner == ctx->dead) {
		rec->owner = ctx->parent == INIT_PID ? 0 : ctx->parent;
		rec->claimed = 0;
	}
	return 0;
}

/* A PID namespace's end: what it owns goes to its parent, unclaimed */
SEC("fentry/delayed_free_pidns")
int BPF_PROG(pidns_free_pidns, struct callback_head *rcu)
{
	struct reparent_ctx rc;

	rc.dead = scalar(rcu) - bpf_core_field_offset(struct pid_namespace, rcu);
	rc.parent = pid_parent(rc.dead);
	bpf_for_each_map_elem(&owners, reparent, &rc, 0);
	bpf_map_delete_elem(&pidnss, &rc.dead);
	return 0;
}

/* A PID namespace seen for the first time: made before the program */
static __always_inline void pidns_seen(__u64 p)
{
	struct pidns_rec rec = {};

	if (!p || p == INIT_PID)
		return;
	rec.id = next_id();
	rec.inum = pid_inum(p);
	bpf_map_update_elem(&pidnss, &p, &rec, BPF_NOEXIST);
}

/* At load: the nsproxies and namespaces of the tasks already running */
SEC("iter/task")
int pidns_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 nsp, ns[T_NR];
	int t;

	if (!task)
		return 0;
	nsp = (__u64)BPF_CORE_READ(task, nsproxy);
	if (!nsp)
		return 0;
	read_nsp(nsp, ns);
	for (t = 0; t < T_NR; t++)
		owner_seen(ns[t], t);
	pidns_seen((__u64)BPF_CORE_READ(task, nsproxy, pid_ns_for_children));
	pidns_seen(task_pidns(task));
	nsp_add(nsp);
	return 0;
}
