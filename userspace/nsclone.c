// SPDX-License-Identifier: GPL-2.0
/*
 * nsclone - run a command in new namespaces through clone3(), clone() or
 * unshare(), and explain kernel.pidns_coupling when the kernel refuses.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "nsflags.h"

#ifndef NSCLONE_VERSION
#define NSCLONE_VERSION "unknown"
#endif

enum syscall_kind { SYS_KIND_CLONE3, SYS_KIND_CLONE, SYS_KIND_UNSHARE };

static const char *const syscall_names[] = {
	[SYS_KIND_CLONE3] = "clone3",
	[SYS_KIND_CLONE] = "clone",
	[SYS_KIND_UNSHARE] = "unshare",
};

enum {
	OPT_MOUNT_PROC = CHAR_MAX + 1,
	OPT_POLICY,
	OPT_LIST_FLAGS,
	OPT_MATRIX,
	OPT_JSON,
	OPT_SHOW_IDS,
	OPT_OWNERS,
	OPT_SHARE,
	OPT_ROOT,
	OPT_FLAG_BASE,	/* + the index of a flag without a short option */
};

/*
 * What a container (the four namespaces of CLONE_NEWCONTAINER) gets fresh
 * by default, and --share keeps of the host's: a new mount namespace is a
 * copy of the host's mounts, so without these the container would still
 * share the host's /tmp, its POSIX shared memory and its message queues,
 * and see the host's processes in /proc.
 */
enum {
	SHARE_TMP = 1 << 0,	/* /tmp */
	SHARE_SHM = 1 << 1,	/* /dev/shm: POSIX shared memory */
	SHARE_MQUEUE = 1 << 2,	/* /dev/mqueue: the host IPC namespace's queues */
	SHARE_PROC = 1 << 3,	/* /proc */
};

static const struct {
	const char *name;
	unsigned int bit;
	const char *what;
} share_names[] = {
	{ "tmp", SHARE_TMP, "/tmp" },
	{ "shm", SHARE_SHM, "/dev/shm: POSIX shared memory" },
	{ "mqueue", SHARE_MQUEUE, "/dev/mqueue: the host's message queues" },
	{ "proc", SHARE_PROC, "/proc: the host's processes" },
	{ "all", SHARE_TMP | SHARE_SHM | SHARE_MQUEUE | SHARE_PROC, "all of these" },
};


static void __attribute__((noreturn)) usage(void)
{
	size_t i;

	printf("Usage:\n"
	       " %s [options] [--] [<program> [<argument>...]]\n\n"
	       "Run a program (default /bin/sh) in new namespaces.\n\n"
	       "Options:\n", program_invocation_short_name);
	for (i = 0; i < ns_flags_count; i++) {
		if (ns_flags[i].opt)
			printf(" -%c, ", ns_flags[i].opt);
		else
			printf("     ");
		printf("--%-20s %s\n", ns_flags[i].longopt, ns_flags[i].help);
	}
	printf(" -r, --map-root-user        map the current user to root (implies -U)\n"
	       "     --mount-proc           mount a new /proc (implies -m)\n"
	       "     --share=<list>         with --container, keep the host's instead of a\n"
	       "                              fresh one (a comma-separated list):\n");
	for (i = 0; i < sizeof(share_names) / sizeof(*share_names); i++)
		printf("                                %-7s %s\n", share_names[i].name,
		       share_names[i].what);
	printf("     --root=<dir>           pivot into <dir> as the new root (implies -m)\n"
	       " -s, --syscall=<name>       clone3 (default), clone or unshare\n"
	       "     --show-ids             print the child's PID at every level, its PID\n"
	       "                              namespace (device:inode) and its pidfd\n"
	       "     --policy               print kernel.pidns_coupling and exit\n"
	       "     --owners [<file>...]   print the PID namespace that each mount, IPC or\n"
	       "                              network namespace file belongs to (default: this\n"
	       "                              process's), and whether it was claimed, and exit\n"
	       "     --list-flags           print the namespace flag table and exit\n"
	       "     --matrix               print the kernel's verdict on each combination\n"
	       "                              of the coupled flags through --syscall, and exit\n"
	       "     --json                 with --matrix: JSON output\n"
	       "\n"
	       " -h, --help                 display this help\n"
	       " -V, --version              display version\n");
	exit(EXIT_SUCCESS);
}

static void __attribute__((noreturn)) bad_usage(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
	exit(EXIT_FAILURE);
}

static void print_policy(void)
{
	int mode = pidns_mode_read();
	char coupled[128];

	ns_flags_str(NS_COUPLED, ", ", " and ", coupled, sizeof(coupled));
	switch (mode) {
	case PIDNS_ABSENT:
		printf("kernel.pidns_coupling: absent: this kernel has no coupling policy; CLONE_NEWPID is accepted alone\n");
		break;
	case PIDNS_OFF:
		printf("kernel.pidns_coupling = 0 (off): CLONE_NEWPID is accepted without %s\n",
		       coupled);
		break;
	case PIDNS_WARN:
		printf("kernel.pidns_coupling = 1 (warn): CLONE_NEWPID without %s is accepted and logged\n",
		       coupled);
		break;
	case PIDNS_ENFORCE:
		printf("kernel.pidns_coupling = 2 (enforce): CLONE_NEWPID without %s is refused with EINVAL\n",
		       coupled);
		break;
	case PIDNS_STAGE:
		printf("kernel.pidns_coupling = 3 (stage): CLONE_NEWPID is accepted without %s; execve() is refused with EPERM while the task shares one of them with another PID namespace\n",
		       coupled);
		break;
	default:
		printf("kernel.pidns_coupling = %d (unknown mode)\n", mode);
		break;
	}
}

/*
 * nsclone --owners: what the state checks compare. Returns the exit status:
 * 1 if a file could not be read or the kernel does not say.
 */
static int print_owners(char **files, int nfiles)
{
	static char *self[] = {
		"/proc/self/ns/mnt", "/proc/self/ns/ipc", "/proc/self/ns/net",
	};
	int i, ret = EXIT_SUCCESS;

	if (!nfiles) {
		files = self;
		nfiles = 3;
	}
	for (i = 0; i < nfiles; i++) {
		struct ns_pidns_owner o;
		char link[64] = "";
		struct stat st;
		int fd = open(files[i], O_RDONLY | O_CLOEXEC), e;

		if (fd < 0 || fstat(fd, &st) < 0) {
			warn("cannot open %s", files[i]);
			ret = EXIT_FAILURE;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (readlink(files[i], link, sizeof(link) - 1) < 0)
			snprintf(link, sizeof(link), "[%lu]", (unsigned long)st.st_ino);
		e = pidns_owner_get(fd, &o);
		if (e < 0) {
			errno = -e;
			if (errno == ENOTTY)
				warnx("%s: this kernel does not report owners (no NS_GET_PIDNS_OWNER)",
				      files[i]);
			else if (errno == EINVAL)
				warnx("%s: not a mount, IPC or network namespace",
				      files[i]);
			else
				warn("%s: cannot read its owner", files[i]);
			ret = EXIT_FAILURE;
		} else {
			printf("%s: %s belongs to pid:[%llu]%s\n", files[i], link,
			       (unsigned long long)o.pidns,
			       o.flags & NS_PIDNS_OWNER_CLAIMED ? ", claimed" : "");
		}
		close(fd);
	}
	return ret;
}

static void list_flags(void)
{
	size_t i;

	printf("%-20s %-10s %-16s %s\n", "FLAG", "VALUE", "OPTION", "NSFILE");
	for (i = 0; i < ns_flags_count; i++) {
		char opt[32];

		if (ns_flags[i].opt)
			snprintf(opt, sizeof(opt), "-%c/--%s", ns_flags[i].opt,
				 ns_flags[i].longopt);
		else
			snprintf(opt, sizeof(opt), "--%s", ns_flags[i].longopt);
		printf("%-20s 0x%08llx %-16s %s\n", ns_flags[i].name,
		       (unsigned long long)ns_flags[i].bit, opt,
		       ns_flags[i].nsfile ? ns_flags[i].nsfile : "-");
	}
}

static pid_t do_clone(enum syscall_kind kind, uint64_t flags, int *pidfd)
{
	return ns_clone(kind == SYS_KIND_CLONE, flags, pidfd);
}

/* Short names of @flags' namespaces: "pid,mnt,ipc,net", "container". */
static char *short_names(uint64_t flags, char *buf, size_t len)
{
	size_t i, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < ns_flags_count; i++) {
		if (!(flags & ns_flags[i].bit))
			continue;
		pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0,
					"%s%s", pos ? "," : "",
					ns_flags[i].nsfile ? ns_flags[i].nsfile :
					ns_flags[i].longopt);
	}
	return buf;
}

/* In a throwaway child: make the request; 0 if the kernel took it, or errno. */
static int try_request(enum syscall_kind kind, uint64_t flags)
{
	pid_t pid, child;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		err(EXIT_FAILURE, "fork");
	if (pid == 0) {
		if (kind == SYS_KIND_UNSHARE)
			_exit(unshare((int)flags) < 0 ? errno : 0);
		child = do_clone(kind, flags, NULL);
		if (child == 0)
			_exit(0);
		if (child < 0)
			_exit(errno);
		waitpid(child, NULL, 0);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		errx(EXIT_FAILURE, "a --matrix probe died");
	return WEXITSTATUS(status);
}

/*
 * Every subset of CLONE_NEWPID and the coupled flags, and the alias, each
 * with @extra (the namespace options given with --matrix), through @kind.
 */
static int print_matrix(enum syscall_kind kind, uint64_t extra, int json)
{
	struct libscols_table *tb = scols_new_table();
	uint64_t set = (uint64_t)CLONE_NEWPID | NS_COUPLED, sub;
	char names[128], mask[24], mode[64];
	int m = pidns_mode_read();

	if (!tb)
		err(EXIT_FAILURE, "cannot create the table");
	scols_table_enable_json(tb, json);
	scols_table_set_name(tb, "matrix");
	if (!scols_table_new_column(tb, "FLAGS", 0, 0) ||
	    !scols_table_new_column(tb, "MASK", 0, SCOLS_FL_RIGHT) ||
	    !scols_table_new_column(tb, "SYSCALL", 0, 0) ||
	    !scols_table_new_column(tb, "RESULT", 0, 0) ||
	    !scols_table_new_column(tb, "ERRNO", 0, 0))
		err(EXIT_FAILURE, "cannot create the columns");

	/* Every subset of @set: walk the submasks, the whole set first. */
	for (sub = set;; sub = (sub - 1) & set) {
		uint64_t flags = sub | extra;
		struct libscols_line *ln;
		int e;

		e = try_request(kind, flags);
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			err(EXIT_FAILURE, "cannot add a line");
		snprintf(mask, sizeof(mask), "0x%08llx", (unsigned long long)flags);
		scols_line_set_data(ln, 0, flags ? short_names(flags, names, sizeof(names)) : "-");
		scols_line_set_data(ln, 1, mask);
		scols_line_set_data(ln, 2, syscall_names[kind]);
		scols_line_set_data(ln, 3, e ? "refused" : "accepted");
		scols_line_set_data(ln, 4, e ? strerrorname_np(e) : "-");
		if (!sub)
			break;
	}
	if (kind != SYS_KIND_CLONE) {
		uint64_t flags = CLONE_NEWCONTAINER | extra;
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		int e = try_request(kind, flags);

		if (!ln)
			err(EXIT_FAILURE, "cannot add a line");
		snprintf(mask, sizeof(mask), "0x%08llx", (unsigned long long)flags);
		scols_line_set_data(ln, 0, short_names(flags, names, sizeof(names)));
		scols_line_set_data(ln, 1, mask);
		scols_line_set_data(ln, 2, syscall_names[kind]);
		scols_line_set_data(ln, 3, e ? "refused" : "accepted");
		scols_line_set_data(ln, 4, e ? strerrorname_np(e) : "-");
	}
	if (!json) {
		snprintf(mode, sizeof(mode), "kernel.pidns_coupling = %s",
			 m == PIDNS_ABSENT ? "absent" : "");
		if (m != PIDNS_ABSENT)
			snprintf(mode, sizeof(mode), "kernel.pidns_coupling = %d (%s)",
				 m, pidns_mode_name(m));
		printf("%s\n", mode);
	}
	scols_print_table(tb);
	scols_unref_table(tb);
	return EXIT_SUCCESS;
}

/*
 * --show-ids: what identifies the child across PID namespaces. Its PID at
 * every level (NSpid), its PID namespace as device:inode, and a pidfd that
 * refers to it without a PID.
 */
static void show_ids(pid_t pid, int pidfd)
{
	char path[64], line[256];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		err(EXIT_FAILURE, "cannot open %s", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6))
			printf("nsclone: NSpid:%s", line + 6);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &st) < 0)
		err(EXIT_FAILURE, "cannot stat %s", path);
	printf("nsclone: pid namespace: %u:%u inode %llu (device:inode identifies it on this host)\n",
	       major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
	printf("nsclone: pidfd: %d (the parent waits on it, not on a PID)\n", pidfd);
	fflush(stdout);
}

/* Wait for the child through its pidfd: immune to PID reuse. */
static int wait_pidfd(int pidfd)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	while (waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED) < 0) {
		if (errno != EINTR)
			err(EXIT_FAILURE, "waitid");
	}
	if (info.si_code == CLD_EXITED)
		return info.si_status;
	return 128 + info.si_status;
}

/*
 * The mount, IPC and network namespaces of this process that belong to a
 * PID namespace other than its own (NS_GET_PIDNS_OWNER, which needs no
 * privilege), as CLONE_NEW* flags; @pid gets the inode of its PID
 * namespace and @owner that of the last foreign owner. 0 if the kernel
 * does not say.
 */
static uint64_t shared_outside(unsigned long long *pid,
			       unsigned long long *owner)
{
	static const struct {
		const char *file;
		uint64_t flag;
	} own[] = {
		{ "/proc/self/ns/mnt", CLONE_NEWNS },
		{ "/proc/self/ns/ipc", CLONE_NEWIPC },
		{ "/proc/self/ns/net", CLONE_NEWNET },
	};
	uint64_t shared = 0;
	struct stat st;
	size_t i;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return 0;
	*pid = (unsigned long long)st.st_ino;
	for (i = 0; i < sizeof(own) / sizeof(*own); i++) {
		struct ns_pidns_owner o;
		int fd = open(own[i].file, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (!ioctl(fd, NS_GET_PIDNS_OWNER, &o) && o.pidns != *pid) {
			shared |= own[i].flag;
			*owner = (unsigned long long)o.pidns;
		}
		close(fd);
	}
	return shared;
}

/* "mount, IPC and network namespaces", of the coupled flags in @flags */
static const char *ns_words(uint64_t flags, char *buf, size_t len)
{
	const char *w[3];
	int n = 0;

	if (flags & CLONE_NEWNS)
		w[n++] = "mount";
	if (flags & CLONE_NEWIPC)
		w[n++] = "IPC";
	if (flags & CLONE_NEWNET)
		w[n++] = "network";
	if (n == 3)
		snprintf(buf, len, "%s, %s and %s namespaces", w[0], w[1], w[2]);
	else if (n == 2)
		snprintf(buf, len, "%s and %s namespaces", w[0], w[1]);
	else
		snprintf(buf, len, "%s namespace", n ? w[0] : "no");
	return buf;
}

/* "kernel.pidns_coupling=2 (enforce)" */
static const char *mode_label(int mode, char *buf, size_t len)
{
	snprintf(buf, len, "kernel.pidns_coupling=%d (%s)", mode,
		 pidns_mode_name(mode));
	return buf;
}

/*
 * After a refusal with @err of a request for @flags (@what: "clone3",
 * "execve"), explain on a line of its own whether kernel.pidns_coupling
 * made it, and what to add. From what any user can read: the mode, the
 * call, the errno and the owners of this process's own namespaces.
 */
static void explain(const char *what, uint64_t flags, int err)
{
	int mode = pidns_mode_read();
	uint64_t f = ns_expand(flags), missing = ns_missing(f), shared;
	unsigned long long pid = 0, owner = 0;
	char label[64], names[128], opts[32];
	const char *verb;

	if (mode == PIDNS_ABSENT && err == EINVAL &&
	    (flags & CLONE_NEWCONTAINER)) {
		warnx("this kernel has no kernel.pidns_coupling, and so no --container (CLONE_NEWCONTAINER): use -p -m -i -n");
		return;
	}
	if (mode < PIDNS_ENFORCE)
		return;
	mode_label(mode, label, sizeof(label));
	if (err == EINVAL && (f & CLONE_NEWPID) && missing &&
	    mode == PIDNS_ENFORCE) {
		ns_flags_str(missing, ", ", " and ", names, sizeof(names));
		ns_flags_opts(missing, opts, sizeof(opts));
		warnx("%s refuses CLONE_NEWPID without %s in the same call: add %s, or use --container",
		      label, names, opts);
		return;
	}
	shared = shared_outside(&pid, &owner);
	if (!shared)
		return;	/* not the policy's: nothing of this process is shared */
	ns_words(shared, names, sizeof(names));
	ns_flags_opts(shared, opts, sizeof(opts));
	verb = shared & (shared - 1) ? "belong" : "belongs";
	if (err == EPERM && !strcmp(what, "execve"))
		warnx("%s refuses to run a program in pid:[%llu] while its %s %s to pid:[%llu], outside it: add %s, or use --container",
		      label, pid, names, verb, owner, opts);
	else if (err == EINVAL && (f & CLONE_NEWPID))
		warnx("%s refuses a new PID namespace's init forked by a process whose %s %s to pid:[%llu], outside its own pid:[%llu]: run nsclone from a process that shares none",
		      label, names, verb, owner, pid);
}

/* Report a refused request; explain it if the coupling policy refused it. */
static void __attribute__((noreturn))
refused(const char *call, uint64_t flags)
{
	int e = errno;

	warn("%s failed", call);
	explain(call, flags, e);
	exit(EXIT_FAILURE);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		err(EXIT_FAILURE, "cannot open %s", path);
	n = write(fd, text, strlen(text));
	if (n != (ssize_t)strlen(text))
		err(EXIT_FAILURE, "cannot write %s", path);
	close(fd);
}

/* Map root in the user namespace of @pid (0: self) to the caller's ids. */
static void map_root(pid_t pid, uid_t uid, gid_t gid)
{
	char path[64], map[64];
	const char *who = pid ? "" : "self";
	char num[16] = "";

	if (pid)
		snprintf(num, sizeof(num), "%d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%s%s/setgroups", who, num);
	write_file(path, "deny");
	snprintf(path, sizeof(path), "/proc/%s%s/uid_map", who, num);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%s%s/gid_map", who, num);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
	write_file(path, map);
}

/* --share's list: the SHARE_* bits it names, or exit on an unknown name. */
static unsigned int parse_share(const char *list)
{
	char *copy = strdup(list), *name, *save = NULL;
	unsigned int share = 0;
	size_t i;

	if (!copy)
		err(EXIT_FAILURE, "strdup");
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(share_names) / sizeof(*share_names); i++)
			if (!strcmp(name, share_names[i].name))
				break;
		if (i == sizeof(share_names) / sizeof(*share_names)) {
			warnx("unknown --share item: %s", name);
			bad_usage();
		}
		share |= share_names[i].bit;
	}
	free(copy);
	return share;
}

/*
 * Mount a fresh @type over @path, if @path is a directory: where there is
 * none, the container sees nothing of the host's there either.
 */
static void mount_fresh(const char *type, const char *path,
			unsigned long mflags, const char *data)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (mount(type, path, type, mflags, data) < 0)
		err(EXIT_FAILURE, "cannot mount a new %s on %s", type, path);
}

/* Make @dir the root: pivot_root(2) into it and detach the old root. */
static void enter_root(const char *dir)
{
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0)
		err(EXIT_FAILURE, "cannot bind-mount %s", dir);
	if (chdir(dir) < 0)
		err(EXIT_FAILURE, "cannot change directory to %s", dir);
	/* The old root is stacked on "." and detached at once. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		err(EXIT_FAILURE, "cannot pivot_root into %s", dir);
	if (umount2(".", MNT_DETACH) < 0)
		err(EXIT_FAILURE, "cannot detach the old root");
	if (chdir("/") < 0)
		err(EXIT_FAILURE, "cannot change directory to /");
}

static void __attribute__((noreturn))
run_child(uint64_t flags, int mount_proc, unsigned int share,
	  const char *root, char **argv)
{
	uint64_t f = ns_expand(flags);
	int e;

	if (f & CLONE_NEWNS) {
		/* Before any mount, so that none reaches the host's tree. */
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			err(EXIT_FAILURE, "cannot make / private");
	}
	if (root)
		enter_root(root);
	if ((f & NS_CONTAINER) == NS_CONTAINER) {
		if (!(share & SHARE_TMP))
			mount_fresh("tmpfs", "/tmp", MS_NOSUID | MS_NODEV,
				    "mode=1777");
		if (!(share & SHARE_SHM))
			mount_fresh("tmpfs", "/dev/shm", MS_NOSUID | MS_NODEV,
				    "mode=1777");
		if (!(share & SHARE_MQUEUE))
			mount_fresh("mqueue", "/dev/mqueue",
				    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
		if (!(share & SHARE_PROC) && !mount_proc)
			mount_fresh("proc", "/proc",
				    MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL);
	}
	if (mount_proc &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV,
		  NULL) < 0)
		err(EXIT_FAILURE, "cannot mount /proc");
	execvp(argv[0], argv);
	e = errno;
	warn("failed to execute %s", argv[0]);
	explain("execve", flags, e);
	_exit(e == ENOENT ? 127 : 126);
}

static int wait_child(pid_t pid)
{
	int status = ns_wait(pid);

	if (status < 0)
		err(EXIT_FAILURE, "waitpid");
	return status;
}

int main(int argc, char **argv)
{
	/* Options other than the namespace flags, which come from ns_flags. */
	static const struct option other_opts[] = {
		{ "map-root-user", no_argument, NULL, 'r' },
		{ "mount-proc", no_argument, NULL, OPT_MOUNT_PROC },
		{ "syscall", required_argument, NULL, 's' },
		{ "policy", no_argument, NULL, OPT_POLICY },
		{ "list-flags", no_argument, NULL, OPT_LIST_FLAGS },
		{ "matrix", no_argument, NULL, OPT_MATRIX },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "show-ids", no_argument, NULL, OPT_SHOW_IDS },
		{ "owners", no_argument, NULL, OPT_OWNERS },
		{ "share", required_argument, NULL, OPT_SHARE },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct option longopts[32];
	char optstring[32] = "+rs:hV";
	static char *default_argv[] = { "/bin/sh", NULL };
	enum syscall_kind kind = SYS_KIND_CLONE3;
	int c, mount_proc = 0, root = 0, sync_pipe[2] = { -1, -1 };
	int matrix = 0, json = 0, ids = 0, owners = 0, pidfd = -1;
	uid_t uid = getuid();
	gid_t gid = getgid();
	uint64_t flags = 0;
	unsigned int share = 0;
	int share_set = 0;
	const char *root_dir = NULL;
	char **cmd;
	pid_t pid;
	size_t i;

	if (ns_flags_count + sizeof(other_opts) / sizeof(*other_opts) >
	    sizeof(longopts) / sizeof(*longopts) ||
	    ns_flags_count + strlen(optstring) >= sizeof(optstring))
		errx(EXIT_FAILURE, "internal error: option tables too small");
	/* A flag without a short option is its index past CHAR_MAX's options. */
	for (i = 0; i < ns_flags_count; i++) {
		int val = ns_flags[i].opt ?: OPT_FLAG_BASE + (int)i;

		longopts[i] = (struct option){ ns_flags[i].longopt, no_argument,
					       NULL, val };
		if (ns_flags[i].opt)
			optstring[strlen(optstring)] = ns_flags[i].opt;
	}
	memcpy(longopts + i, other_opts, sizeof(other_opts));

	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		for (i = 0; i < ns_flags_count; i++)
			if (c == (ns_flags[i].opt ?: OPT_FLAG_BASE + (int)i))
				break;
		if (i < ns_flags_count) {
			flags |= ns_flags[i].bit;
			continue;
		}
		switch (c) {
		case 'r':
			root = 1;
			flags |= CLONE_NEWUSER;
			break;
		case OPT_MOUNT_PROC:
			mount_proc = 1;
			flags |= CLONE_NEWNS;
			break;
		case 's':
			for (i = 0; i < sizeof(syscall_names) / sizeof(*syscall_names); i++)
				if (!strcmp(optarg, syscall_names[i]))
					break;
			if (i == sizeof(syscall_names) / sizeof(*syscall_names)) {
				warnx("unknown syscall: %s", optarg);
				bad_usage();
			}
			kind = (enum syscall_kind)i;
			break;
		case OPT_POLICY:
			print_policy();
			return EXIT_SUCCESS;
		case OPT_LIST_FLAGS:
			list_flags();
			return EXIT_SUCCESS;
		case OPT_MATRIX:
			matrix = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SHOW_IDS:
			ids = 1;
			break;
		case OPT_OWNERS:
			owners = 1;
			break;
		case OPT_SHARE:
			share |= parse_share(optarg);
			share_set = 1;
			break;
		case OPT_ROOT:
			root_dir = optarg;
			flags |= CLONE_NEWNS;
			break;
		case 'h':
			usage();
		case 'V':
			printf("%s %s\n", program_invocation_short_name,
			       NSCLONE_VERSION);
			return EXIT_SUCCESS;
		default:
			bad_usage();
		}
	}

	/* Legacy clone() has no room for these: its low byte is the exit signal. */
	if (kind == SYS_KIND_CLONE && (flags & CLONE_NEWCONTAINER))
		errx(EXIT_FAILURE, "--container and --syscall=clone are mutually exclusive: use clone3 or unshare");
	if (kind == SYS_KIND_CLONE && (flags & CLONE_NEWTIME))
		errx(EXIT_FAILURE, "--time and --syscall=clone are mutually exclusive: use clone3 or unshare");

	if (share_set && (ns_expand(flags) & NS_CONTAINER) != NS_CONTAINER)
		errx(EXIT_FAILURE, "--share goes with --container (or --pid, --mount, --ipc and --net)");
	if (owners && (flags || matrix || ids || root))
		errx(EXIT_FAILURE, "--owners takes namespace files, not namespace options");
	if (owners)
		return print_owners(argv + optind, argc - optind);
	if (json && !matrix)
		errx(EXIT_FAILURE, "--json goes with --matrix");
	if (matrix && (flags & (CLONE_NEWPID | NS_COUPLED | CLONE_NEWCONTAINER)))
		errx(EXIT_FAILURE, "--matrix tries every combination of --pid, --mount, --ipc, --net and --container itself");
	if (matrix && root)
		errx(EXIT_FAILURE, "--matrix and --map-root-user are mutually exclusive: use --user");
	if (matrix)
		return print_matrix(kind, flags, json);

	cmd = optind < argc ? argv + optind : default_argv;

	/* The child waits for the parent to map its user namespace or print its ids. */
	if ((root || ids) && pipe2(sync_pipe, O_CLOEXEC) < 0)
		err(EXIT_FAILURE, "pipe");

	if (kind == SYS_KIND_UNSHARE) {
		if (unshare((int)flags) < 0)
			refused(syscall_names[kind], flags);
		if (root)
			map_root(0, uid, gid);
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			refused("fork", flags);
		if (pid > 0 && ids) {
			pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
			if (pidfd < 0)
				err(EXIT_FAILURE, "pidfd_open");
		}
	} else {
		fflush(NULL);
		pid = do_clone(kind, flags, ids ? &pidfd : NULL);
		if (pid < 0)
			refused(syscall_names[kind], flags);
		if (pid > 0 && root)
			map_root(pid, uid, gid);
	}
	if (pid == 0) {
		if (sync_pipe[0] >= 0) {
			char byte;

			close(sync_pipe[1]);
			if (read(sync_pipe[0], &byte, 1) != 1)
				errx(EXIT_FAILURE, "the parent did not release the child");
			close(sync_pipe[0]);
		}
		run_child(flags, mount_proc, share, root_dir, cmd);
	}
	if (ids)
		show_ids(pid, pidfd);
	if (sync_pipe[1] >= 0) {
		close(sync_pipe[0]);
		if (write(sync_pipe[1], "", 1) != 1)
			err(EXIT_FAILURE, "cannot release the child");
		close(sync_pipe[1]);
	}
	return ids ? wait_pidfd(pidfd) : wait_child(pid);
}
