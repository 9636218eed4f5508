// SPDX-License-Identifier: GPL-2.0
/*
 * pidns-lsm - kernel.pidns_coupling's policy as a BPF LSM, for a kernel
 * without the series: load and attach it, pin it so that it outlives the
 * loader, set its mode, read its counters and its record, detach it.
 *
 * The record is printed in the text of the patched kernel's trace event
 * pidns_coupling:pidns_coupling_verdict, so that pidns-report reads it.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pidns-lsm.h"
#include "pidns-lsm.skel.h"

#ifndef NSCLONE_VERSION
#define NSCLONE_VERSION "unknown"
#endif

#define PIN_LINKS	PIDNS_LSM_PIN "/links"

static const char *const call_names[PIDNS_LSM_NCALLS] = {
	"clone", "unshare", "setns", "join", "exec", "enter",
};

static volatile sig_atomic_t stop;
static FILE *log_file;		/* record --log FILE: the kernel log's lines */

static void __attribute__((noreturn)) usage(void)
{
	fputs("Usage:\n"
	      " pidns-lsm [options] attach|detach|mode [N]|stats|record|records|status\n"
	      "\n"
	      "kernel.pidns_coupling's policy as a BPF LSM, for kernels without the series.\n"
	      "\n"
	      "Commands:\n"
	      " attach        load, attach and pin the program (--mode, default 1)\n"
	      " detach        unpin it: the policy ends\n"
	      " mode [N]      print the mode, or set it: 0 off, 1 warn, 2 enforce, 3 stage\n"
	      " stats         the count of every verdict, as kernel.pidns_coupling_stats\n"
	      " record        the verdicts not read yet, as trace text (pidns-report reads it)\n"
	      " records       every namespace, PID namespace and member count it keeps\n"
	      " status        whether it is attached, its mode, its maps and programs\n"
	      "\n"
	      "Options:\n"
	      " -m, --mode N  the mode attach sets\n"
	      " -f, --follow  record: wait for more verdicts until interrupted\n"
	      " -l, --log FILE  record: also write the patched kernel's log lines to FILE\n"
	      " -h, --help    display this help\n"
	      " -V, --version display version\n"
	      "\n"
	      "For more details see pidns-lsm(8).\n", stdout);
	exit(EXIT_SUCCESS);
}

static int pinned_map(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", PIDNS_LSM_PIN, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		err(EXIT_FAILURE, "%s (is pidns-lsm attached?)", path);
	return fd;
}

static int parse_mode(const char *s)
{
	char *end;
	long m;

	errno = 0;
	m = strtol(s, &end, 10);
	if (errno || *end || end == s || m < 0 || m > 3)
		errx(EXIT_FAILURE, "invalid mode: '%s' (0 to 3)", s);
	return (int)m;
}

static void set_mode(int fd, int mode)
{
	struct pidns_lsm_config c = { .mode = (__u32)mode };
	__u32 k = 0;

	if (bpf_map_update_elem(fd, &k, &c, BPF_ANY))
		err(EXIT_FAILURE, "cannot set the mode");
}

static int get_mode(int fd)
{
	struct pidns_lsm_config c;
	__u32 k = 0;

	if (bpf_map_lookup_elem(fd, &k, &c))
		err(EXIT_FAILURE, "cannot read the mode");
	return (int)c.mode;
}

/* Print each program's name, instruction count and the verifier's figure */
static void print_prog(int prog_fd, const char *prefix)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return;
	/* recursion_misses: runs skipped, the program already running on
	 * that CPU (what it keeps would then miss a change) */
	printf("%sprogram %s: id %u, %u instructions, verifier processed %u, "
	       "%llu runs skipped\n", prefix, info.name, info.id,
	       info.xlated_prog_len / 8, info.verified_insns,
	       (unsigned long long)info.recursion_misses);
}

/* Load @prog only if the kernel has the function @fn it attaches to */
static void optional(struct bpf_program *prog, const char *fn,
		     enum bpf_attach_type type)
{
	if (libbpf_find_vmlinux_btf_id(fn, type) < 0)
		bpf_program__set_autoload(prog, false);
}

static int do_attach(int mode)
{
	struct pidns_lsm *skel;
	struct bpf_program *prog;
	struct bpf_link *link, *iter;
	char path[512], buf[64];
	int fd, n, ret, i;

	if (access(PIN_LINKS, F_OK) == 0)
		errx(EXIT_FAILURE, "already attached (%s); detach first", PIN_LINKS);
	skel = pidns_lsm__open();
	if (!skel)
		err(EXIT_FAILURE, "cannot open the BPF object");
	/* What only some kernels have: left out where the function is not */
	optional(skel->progs.pidns_execve32_end, "__ia32_compat_sys_execve",
		 BPF_TRACE_FEXIT);
	optional(skel->progs.pidns_execveat32_end, "__ia32_compat_sys_execveat",
		 BPF_TRACE_FEXIT);
	optional(skel->progs.pidns_exec_ns, "exec_task_namespaces",
		 BPF_TRACE_FENTRY);
	optional(skel->progs.pidns_exec_ns_end, "exec_task_namespaces",
		 BPF_TRACE_FEXIT);
	ret = pidns_lsm__load(skel);
	if (ret)
		errx(EXIT_FAILURE, "the kernel refused the program: %s "
		     "(needs BTF, CONFIG_BPF_LSM and \"bpf\" in the lsm= list)",
		     strerror(-ret));
	set_mode(bpf_map__fd(skel->maps.pidns_config), mode);
	ret = pidns_lsm__attach(skel);
	if (ret)
		errx(EXIT_FAILURE, "cannot attach: %s", strerror(-ret));

	/* The members of what runs already; the hooks count what comes */
	iter = bpf_program__attach_iter(skel->progs.pidns_seed, NULL);
	if (!iter)
		err(EXIT_FAILURE, "cannot attach the task iterator");
	fd = bpf_iter_create(bpf_link__fd(iter));
	if (fd < 0)
		err(EXIT_FAILURE, "cannot create the task iterator");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err(EXIT_FAILURE, "cannot run the task iterator");
	close(fd);
	bpf_link__destroy(iter);

	if (mkdir(PIDNS_LSM_PIN, 0700) && errno != EEXIST)
		err(EXIT_FAILURE, "mkdir %s (is bpffs mounted on /sys/fs/bpf?)",
		    PIDNS_LSM_PIN);
	if (mkdir(PIN_LINKS, 0700) && errno != EEXIST)
		err(EXIT_FAILURE, "mkdir %s", PIN_LINKS);
#define PIN_MAP(m) do {							\
		snprintf(path, sizeof(path), "%s/%s", PIDNS_LSM_PIN, #m);	\
		if (bpf_map__pin(skel->maps.m, path))			\
			err(EXIT_FAILURE, "cannot pin %s", path);	\
	} while (0)
	PIN_MAP(pidns_config);
	PIN_MAP(stats);
	PIN_MAP(events);
	PIN_MAP(owners);
	PIN_MAP(pidnss);
	PIN_MAP(nsps);
	PIN_MAP(members);
	/* Each program's link, as the skeleton attached it */
	for (i = 0; i < skel->skeleton->prog_cnt; i++) {
		prog = *skel->skeleton->progs[i].prog;
		link = *skel->skeleton->progs[i].link;
		if (prog == skel->progs.pidns_seed ||
		    !bpf_program__autoload(prog))
			continue;
		if (!link)
			errx(EXIT_FAILURE, "program %s has no link",
			     bpf_program__name(prog));
		snprintf(path, sizeof(path), "%s/%s", PIN_LINKS,
			 bpf_program__name(prog));
		if (bpf_link__pin(link, path))
			err(EXIT_FAILURE, "cannot pin %s", path);
		print_prog(bpf_program__fd(prog), "");
	}
	printf("attached in mode %d, pinned in %s\n", mode, PIDNS_LSM_PIN);
	/* The pinned links and maps keep it; the loader's copies go */
	pidns_lsm__destroy(skel);
	return EXIT_SUCCESS;
}

/*
 * Call @fn with the path of each link pinned in PIN_LINKS and the id of
 * the program it attaches.
 */
static void link_each(void (*fn)(const char *path, __u32 prog_id, void *ctx),
		      void *ctx)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(PIN_LINKS);
	int fd;

	if (!d)
		err(EXIT_FAILURE, "%s (is pidns-lsm attached?)", PIN_LINKS);
	while ((de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", PIN_LINKS, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			err(EXIT_FAILURE, "%s", path);
		close(fd);
		fn(path, info.prog_id, ctx);
	}
	closedir(d);
}

struct detached {
	__u32 progs[64];
	int n;
};

/* Unpin a link, keeping its program's id to wait for */
static void unpin_link(const char *path, __u32 prog_id, void *ctx)
{
	struct detached *dt = ctx;

	if (dt->n == (int)(sizeof(dt->progs) / sizeof(dt->progs[0])))
		errx(EXIT_FAILURE, "more links in %s than %d", PIN_LINKS, dt->n);
	dt->progs[dt->n++] = prog_id;
	if (unlink(path))
		err(EXIT_FAILURE, "unlink %s", path);
}

/*
 * Unpinning a link does not detach it: 6.12 releases it from a
 * workqueue, one trampoline update after another, seconds later under
 * TCG, and until then the programs still attached judge with the state
 * the detached ones no longer keep. So the mode goes to 0 first, and
 * detach returns only when every program is gone (its id freed: no
 * trampoline calls it any more).
 */
#define DETACH_WAIT_MS	60000

static int do_detach(void)
{
	static const char *const maps[] = {
		"pidns_config", "stats", "events", "owners", "pidnss", "nsps",
		"members",
	};
	struct detached dt = { .n = 0 };
	char path[512];
	size_t i;
	int left, ms, fd;

	if (access(PIN_LINKS, F_OK))
		err(EXIT_FAILURE, "%s (is pidns-lsm attached?)", PIN_LINKS);
	fd = pinned_map("pidns_config");
	set_mode(fd, 0);
	close(fd);
	link_each(unpin_link, &dt);
	if (rmdir(PIN_LINKS))
		err(EXIT_FAILURE, "rmdir %s", PIN_LINKS);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", PIDNS_LSM_PIN, maps[i]);
		if (unlink(path) && errno != ENOENT)
			err(EXIT_FAILURE, "unlink %s", path);
	}
	if (rmdir(PIDNS_LSM_PIN))
		err(EXIT_FAILURE, "rmdir %s", PIDNS_LSM_PIN);
	for (ms = 0;; ms += 10) {
		left = 0;
		for (i = 0; i < (size_t)dt.n; i++) {
			fd = bpf_prog_get_fd_by_id(dt.progs[i]);
			if (fd >= 0) {
				close(fd);
				left++;
			} else if (errno != ENOENT) {
				err(EXIT_FAILURE, "program %u", dt.progs[i]);
			}
		}
		if (!left)
			break;
		if (ms >= DETACH_WAIT_MS)
			errx(EXIT_FAILURE, "%d of %d programs still loaded after %d s",
			     left, dt.n, DETACH_WAIT_MS / 1000);
		usleep(10000);
	}
	printf("detached: %d links unpinned, every program gone after %d ms\n",
	       dt.n, ms);
	return EXIT_SUCCESS;
}

static int do_stats(void)
{
	int fd = pinned_map("stats"), i;
	__u64 v[PIDNS_LSM_NSTATS];
	__u32 k;

	for (k = 0; k < PIDNS_LSM_NSTATS; k++)
		if (bpf_map_lookup_elem(fd, &k, &v[k]))
			err(EXIT_FAILURE, "cannot read the counters");
	for (i = 0; i < PIDNS_LSM_NCALLS; i++) {
		printf("%s allowed %llu\n", call_names[i],
		       (unsigned long long)v[i * 2]);
		printf("%s refused %llu\n", call_names[i],
		       (unsigned long long)v[i * 2 + 1]);
	}
	printf("lost %llu\n", (unsigned long long)v[PIDNS_LSM_LOST]);
	printf("uncounted %llu\n", (unsigned long long)v[PIDNS_LSM_UNCOUNTED]);
	printf("retargeted %llu\n", (unsigned long long)v[PIDNS_LSM_RETARGETED]);
	printf("contended %llu\n", (unsigned long long)v[PIDNS_LSM_CONTENDED]);
	close(fd);
	return EXIT_SUCCESS;
}

/* @s as audit writes an untrusted string, as the patched kernel does */
static void untrusted(FILE *f, const char *s, size_t max)
{
	size_t i, n = strnlen(s, max);
	int quote = 1;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c <= ' ' || c >= 0x7f)
			quote = 0;
	}
	if (quote) {
		fprintf(f, "\"%.*s\"", (int)n, s);
		return;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%02X", (unsigned char)s[i]);
}

static const char *missing_names(__u64 m, char *buf, size_t len)
{
	static const struct { __u64 bit; const char *name; } f[] = {
		{ 0x00020000, "CLONE_NEWNS" },
		{ 0x08000000, "CLONE_NEWIPC" },
		{ 0x40000000, "CLONE_NEWNET" },
	};
	size_t i, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (m & f[i].bit)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%s",
						pos ? "|" : "", f[i].name);
	return buf;
}

/* The verdict as the patched kernel's log line (docs/policy.md, "The log") */
static void print_log(FILE *f, const struct pidns_lsm_event *e)
{
	static const char *const types[] = { "mnt", "ipc", "net" };
	static const char *const flags[] = {
		" CLONE_NEWNS", " CLONE_NEWIPC", " CLONE_NEWNET",
	};
	static const __u64 bits[] = { 0x00020000, 0x08000000, 0x40000000 };
	const char *verdict = e->refused ? "refused" : "allowed";
	int i;

	fprintf(f, "pidns_coupling: %.*s[%u]: ", (int)strnlen(e->comm, sizeof(e->comm)),
	       e->comm, e->pid);
	if (e->call <= PIDNS_LSM_SETNS) {
		fprintf(f, "CLONE_NEWPID without");
		for (i = 0; i < 3; i++)
			if (e->missing & bits[i])
				fputs(flags[i], f);
		fprintf(f, ": %s (kernel.pidns_coupling=%d)\n", verdict, e->mode);
		return;
	}
	if (e->call == PIDNS_LSM_EXEC) {
		fprintf(f, "execve ");
		untrusted(f, e->file, sizeof(e->file));
		fprintf(f, " %s", e->flags & 0x20000000 ? "outside" : "in");
	} else {
		fprintf(f, "%s", e->call == PIDNS_LSM_JOIN ? "fork into" : "setns in");
	}
	fprintf(f, " pid:[%u] with", e->target);
	for (i = 0; i < 3; i++)
		if (e->missing & bits[i])
			fprintf(f, " %s:[%u] of pid:[%u]", types[i], e->ns[i],
			       e->owner[i]);
	fprintf(f, ": %s (kernel.pidns_coupling=%d%s)\n", verdict, e->mode,
	       e->predates ? ", its PID namespace predates it" : "");
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct pidns_lsm_event *e = data;
	char miss[64];

	(void)ctx;
	if (size < sizeof(*e) || e->call >= PIDNS_LSM_NCALLS)
		return 0;
	if (log_file) {
		print_log(log_file, e);
		fflush(log_file);
	}
	printf("%.*s-%u [000] ..... %llu.%06llu: pidns_coupling_verdict: "
	       "call=%s pid=%u uid=%u pidns=%u target=%u flags=%#llx "
	       "missing=%s mode=%d verdict=%s comm=",
	       (int)strnlen(e->comm, sizeof(e->comm)), e->comm, e->pid,
	       (unsigned long long)(e->ts / 1000000000),
	       (unsigned long long)(e->ts % 1000000000 / 1000),
	       call_names[e->call], e->pid, e->uid, e->pidns, e->target,
	       (unsigned long long)e->flags,
	       missing_names(e->missing, miss, sizeof(miss)), e->mode,
	       e->refused ? "refused" : "allowed");
	untrusted(stdout, e->comm, sizeof(e->comm));
	printf(" exe_dev=%u:%u exe_ino=%llu exe=", e->exe_dev >> 20,
	       e->exe_dev & 0xfffff, (unsigned long long)e->exe_ino);
	untrusted(stdout, e->exe, sizeof(e->exe));
	putchar('\n');
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int do_record(int follow)
{
	int fd = pinned_map("events");
	struct ring_buffer *rb = ring_buffer__new(fd, print_event, NULL, NULL);

	if (!rb)
		err(EXIT_FAILURE, "cannot read the ring buffer");
	if (ring_buffer__consume(rb) < 0)
		errx(EXIT_FAILURE, "cannot read the ring buffer");
	if (follow) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		setvbuf(stdout, NULL, _IOLBF, 0);
		while (!stop)
			if (ring_buffer__poll(rb, 100) < 0 && errno != EINTR)
				break;
	}
	ring_buffer__free(rb);
	close(fd);
	return EXIT_SUCCESS;
}

/*
 * Call @fn with each key of map @fd (16 bytes at most) and its value
 * (@vsize bytes, 128 at most); the number of keys. @fn may be NULL.
 */
static unsigned long map_each(int fd, size_t vsize,
			      void (*fn)(const void *key, const void *value,
					 void *ctx),
			      void *ctx)
{
	__u64 key[2], next[2], value[16];
	unsigned long n = 0;
	void *prev = NULL;

	if (vsize > sizeof(value))
		errx(EXIT_FAILURE, "a map value of %zu bytes", vsize);
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
		if (fn && bpf_map_lookup_elem(fd, key, value) == 0)
			fn(key, value, ctx);
	}
	return n;
}

static unsigned long map_count(const char *name)
{
	int fd = pinned_map(name);
	unsigned long n = map_each(fd, 0, NULL, NULL);

	close(fd);
	return n;
}

static const char *const ns_types[] = { "mnt", "ipc", "net" };

/* The maps that the records' lines look up */
struct records {
	int owners, pidnss;
};

/* The inode number of PID namespace @p (its address); 0: the initial */
static __u32 pidns_inum(const struct records *r, __u64 p)
{
	struct pidns_lsm_pidns rec;

	if (!p)
		return PROC_PID_INIT_INO;
	return bpf_map_lookup_elem(r->pidnss, &p, &rec) ? 0 : rec.inum;
}

static void print_owner(const void *key, const void *value, void *ctx)
{
	const struct pidns_lsm_owner *rec = value;

	(void)key;
	printf("%s %u %llu owner pid:[%u]%s\n",
	       rec->type < 3 ? ns_types[rec->type] : "?", rec->inum,
	       (unsigned long long)rec->id, pidns_inum(ctx, rec->owner),
	       rec->claimed ? " claimed" : "");
}

static void print_pidns(const void *key, const void *value, void *ctx)
{
	const struct pidns_lsm_pidns *p = value;

	(void)key;
	(void)ctx;
	printf("pid %u %llu born %u\n", p->inum, (unsigned long long)p->id,
	       p->born);
}

/* A member count whose namespace has no record is an "orphan" */
static void print_member(const void *key, const void *value, void *ctx)
{
	const struct pidns_lsm_member *mk = key;
	const __u64 *n = value;
	const struct records *r = ctx;
	struct pidns_lsm_owner rec;
	__u32 inum;

	if (bpf_map_lookup_elem(r->owners, &mk->ns, &rec)) {
		printf("orphan member count %llu\n", (unsigned long long)*n);
		return;
	}
	/* A PID namespace without a record: the initial one */
	inum = pidns_inum(r, mk->pidns);
	printf("count %s %u under pid:[%u] %llu\n",
	       rec.type < 3 ? ns_types[rec.type] : "?", rec.inum,
	       inum ? inum : PROC_PID_INIT_INO, (unsigned long long)*n);
}

/*
 * One line per record: "TYPE INODE ID" and, for a mount, IPC or network
 * namespace, its owner ("pid:[INODE]", claimed or not); for a PID
 * namespace, the mode it was made in; then the member counts.
 */
static int do_records(void)
{
	struct records r = { pinned_map("owners"), pinned_map("pidnss") };
	int mfd = pinned_map("members");

	map_each(r.owners, sizeof(struct pidns_lsm_owner), print_owner, &r);
	map_each(r.pidnss, sizeof(struct pidns_lsm_pidns), print_pidns, &r);
	map_each(mfd, sizeof(__u64), print_member, &r);
	close(mfd);
	close(r.owners);
	close(r.pidnss);
	return EXIT_SUCCESS;
}

/* A link's program, as status prints it */
static void show_link(const char *path, __u32 prog_id, void *ctx)
{
	int fd = bpf_prog_get_fd_by_id(prog_id);

	(void)ctx;
	if (fd < 0)
		err(EXIT_FAILURE, "%s: program %u", path, prog_id);
	print_prog(fd, "  ");
	close(fd);
}

static int do_status(void)
{
	int fd;

	if (access(PIN_LINKS, F_OK)) {
		printf("not attached\n");
		return 3;
	}
	fd = pinned_map("pidns_config");
	printf("attached, mode %d\n", get_mode(fd));
	close(fd);
	printf("records: %lu namespaces, %lu PID namespaces, %lu nsproxies, "
	       "%lu member counts\n", map_count("owners"), map_count("pidnss"),
	       map_count("nsps"), map_count("members"));
	link_each(show_link, NULL);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "follow", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, mode = 1, follow = 0, fd;
	const char *cmd;

	while ((c = getopt_long(argc, argv, "m:fl:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = parse_mode(optarg);
			break;
		case 'f':
			follow = 1;
			break;
		case 'l':
			log_file = fopen(optarg, "ae");
			if (!log_file)
				err(EXIT_FAILURE, "%s", optarg);
			break;
		case 'h':
			usage();
		case 'V':
			printf("pidns-lsm %s\n", NSCLONE_VERSION);
			return EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try 'pidns-lsm --help' for more information.\n");
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc)
		errx(EXIT_FAILURE, "no command (try --help)");
	cmd = argv[optind++];
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);

	if (!strcmp(cmd, "attach"))
		return do_attach(mode);
	if (!strcmp(cmd, "detach"))
		return do_detach();
	if (!strcmp(cmd, "stats"))
		return do_stats();
	if (!strcmp(cmd, "record"))
		return do_record(follow);
	if (!strcmp(cmd, "records"))
		return do_records();
	if (!strcmp(cmd, "status"))
		return do_status();
	if (!strcmp(cmd, "mode")) {
		fd = pinned_map("pidns_config");
		if (optind < argc)
			set_mode(fd, parse_mode(argv[optind]));
		else
			printf("%d\n", get_mode(fd));
		close(fd);
		return EXIT_SUCCESS;
	}
	errx(EXIT_FAILURE, "unknown command '%s' (try --help)", cmd);
}
