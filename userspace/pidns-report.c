// SPDX-License-Identifier: GPL-2.0
/*
 * pidns-report - the migration report: which programs made requests that
 * kernel.pidns_coupling judged, how often, when, and what they lacked,
 * from the kernel's pidns_coupling:pidns_coupling_verdict trace events.
 *
 * Input is trace text, as tracefs's "trace" and "trace_pipe" files and
 * "trace-cmd report" print it, or the kernel's audit records of the same
 * verdicts (type 1400, AVC), as the kernel log holds them without auditd
 * and as auditd's log does; one event a line:
 *
 *   unshare-93 [000] ..... 12.345678: pidns_coupling_verdict: call=unshare
 *   pid=93 uid=0 pidns=4026531836 target=0 flags=0x20000000
 *   missing=CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWNET mode=1 verdict=allowed
 *   comm="unshare" exe_dev=0:2 exe_ino=51 exe="/usr/bin/unshare"
 *
 * An audit record carries the same fields after "pidns_coupling_verdict:"
 * (and owners=, which is not read here); it is written when the verdict's
 * log line is, under the per-user rate limit, so a report from audit
 * records alone may miss verdicts that the trace and the counters have.
 *
 * The kernel writes the command and the path, which their owner chose, as
 * audit writes untrusted strings: "quoted" when they hold no space, quote
 * or control byte, in hex otherwise, so every field is one word.
 *
 * With --stats, the record is compared with the kernel's own counts
 * (kernel.pidns_coupling_stats), so that events the trace buffer dropped
 * do not go unnoticed.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libsmartcols.h>

#include "nsflags.h"

#ifndef NSCLONE_VERSION
#define NSCLONE_VERSION "unknown"
#endif

#define STATS_SYSCTL	"/proc/sys/kernel/pidns_coupling_stats"
#define EVENT_NAME	"pidns_coupling_verdict: "

/* The kernel's names for the calls (the event's call= and the counters). */
static const char *const call_names[] = {
	"clone", "unshare", "setns", "join", "exec", "enter",
};
#define NCALLS (sizeof(call_names) / sizeof(call_names[0]))

struct program {
	char *exe;		/* the path as the kernel saw it */
	char inode[48];		/* "dev:ino" of the executable */
	unsigned long count;
	unsigned long refused;
	double first, last;
	uint64_t missing;	/* union of what its requests lacked */
	unsigned int calls;	/* bit per call_names[] entry */
	unsigned int uids[8];	/* the first uids seen */
	size_t nuids;
	int more_uids;
};

struct report {
	struct program *progs;
	size_t nprogs, cap;
	/* What the record holds, by call and verdict (0 allowed, 1 refused). */
	unsigned long traced[NCALLS][2];
	unsigned long events, lost, unparsed;
	int lost_unknown;	/* "[LOST EVENTS]", with no number */
};

enum {
	OPT_STATS = CHAR_MAX + 1,
	OPT_BASELINE,
	OPT_JSON,
};

static void __attribute__((noreturn)) usage(void)
{
	printf("Usage:\n"
	       " %s [options] [<file>...]\n\n"
	       "Summarize the kernel's pidns_coupling trace events by program: how many\n"
	       "requests each executable made that lacked a namespace, when, refused or\n"
	       "allowed, and what they lacked. Reads trace text (tracefs's trace or\n"
	       "trace_pipe, or trace-cmd report) from the files, or standard input.\n\n"
	       "Options:\n"
	       "     --json                 JSON output\n"
	       "     --stats[=<file>]       compare with the kernel's counts (default\n"
	       "                              " STATS_SYSCTL ")\n"
	       "     --baseline=<file>      the counts as they were when the record started\n"
	       "                              (a copy of the stats file); implies --stats\n"
	       "\n"
	       " -h, --help                 display this help\n"
	       " -V, --version              display version\n",
	       program_invocation_short_name);
	exit(EXIT_SUCCESS);
}

static void __attribute__((noreturn)) bad_usage(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
	exit(EXIT_FAILURE);
}

static int call_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NCALLS; i++)
		if (strlen(call_names[i]) == len && !strncmp(name, call_names[i], len))
			return (int)i;
	return -1;
}

/* The value of " key=" in @s, up to the next space; its length in @len. */
static const char *field(const char *s, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p = s;

	while ((p = strstr(p, key))) {
		if ((p == s || p[-1] == ' ') && p[klen] == '=') {
			p += klen + 1;
			*len = strcspn(p, " \n");
			return p;
		}
		p += klen;
	}
	return NULL;
}

/* "CLONE_NEWNS|CLONE_NEWNET" as bits of the flag table; -1 if unknown. */
static int parse_flag_names(const char *s, size_t len, uint64_t *bits)
{
	*bits = 0;
	while (len) {
		size_t n = 0, i;

		while (n < len && s[n] != '|')
			n++;
		for (i = 0; i < ns_flags_count; i++)
			if (strlen(ns_flags[i].name) == n &&
			    !strncmp(s, ns_flags[i].name, n))
				break;
		if (i == ns_flags_count)
			return -1;
		*bits |= ns_flags[i].bit;
		s += n;
		len -= n;
		if (len) {
			s++;
			len--;
		}
	}
	return 0;
}

static struct program *program_get(struct report *r, const char *exe,
				   const char *inode)
{
	size_t i;

	for (i = 0; i < r->nprogs; i++)
		if (!strcmp(r->progs[i].exe, exe) &&
		    !strcmp(r->progs[i].inode, inode))
			return &r->progs[i];
	if (r->nprogs == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->progs = realloc(r->progs, r->cap * sizeof(*r->progs));
		if (!r->progs)
			err(EXIT_FAILURE, "cannot allocate");
	}
	memset(&r->progs[r->nprogs], 0, sizeof(*r->progs));
	r->progs[r->nprogs].exe = strdup(exe);
	if (!r->progs[r->nprogs].exe)
		err(EXIT_FAILURE, "cannot allocate");
	snprintf(r->progs[r->nprogs].inode, sizeof(r->progs[r->nprogs].inode),
		 "%s", inode);
	return &r->progs[r->nprogs++];
}

static void add_uid(struct program *p, unsigned int uid)
{
	size_t i;

	for (i = 0; i < p->nuids; i++)
		if (p->uids[i] == uid)
			return;
	if (p->nuids < sizeof(p->uids) / sizeof(p->uids[0]))
		p->uids[p->nuids++] = uid;
	else
		p->more_uids = 1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * An untrusted string of the event ("quoted", or hex, or empty) into @out,
 * as the bytes it was; -1 if malformed. (libsmartcols shows bytes that
 * are not printable as \xNN.)
 */
static int decode(const char *v, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	if (!size)
		return -1;
	if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		if (len - 2 >= size)
			return -1;
		memcpy(out, v + 1, len - 2);
		out[len - 2] = '\0';
		return 0;
	}
	if (len % 2)
		return -1;
	for (i = 0; i < len; i += 2) {
		int hi = hexval(v[i]), lo = hexval(v[i + 1]);
		unsigned char c;

		if (hi < 0 || lo < 0 || o + 1 >= size)
			return -1;
		c = (unsigned char)(hi << 4 | lo);
		if (!c)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* One line of trace text: an event, a lost-events note, or neither. */
static void parse_line(struct report *r, const char *line)
{
	const char *ev = strstr(line, EVENT_NAME), *v, *exe, *ts;
	size_t len;
	struct program *p;
	uint64_t missing;
	unsigned long lost;
	double t = 0;
	int call, refused;

	if (!ev) {
		unsigned long in, written;

		/*
		 * trace_pipe: "CPU:0 [LOST 12 EVENTS]", or "[LOST EVENTS]"
		 * when the count is not known; trace-cmd: "[LOST 12 EVENTS]".
		 */
		v = strstr(line, "[LOST ");
		if (v && sscanf(v, "[LOST %lu EVENTS]", &lost) == 1)
			r->lost += lost;
		else if (strstr(line, "[LOST EVENTS]"))
			r->lost_unknown = 1;
		/* The "trace" file's header: what the buffer overwrote. */
		v = strstr(line, "entries-in-buffer/entries-written: ");
		if (v && sscanf(v, "entries-in-buffer/entries-written: %lu/%lu",
				&in, &written) == 2 && written > in)
			r->lost += written - in;
		return;
	}
	/*
	 * The timestamp is the word before the event name: "12.345678:" in
	 * trace text; "audit(1733450000.123:45):" in an audit record, as the
	 * kernel prints it without auditd ("type=1400 audit(...):") and as
	 * auditd logs it ("type=AVC msg=audit(...):").
	 */
	for (ts = ev - 1; ts > line && ts[-1] == ' '; ts--)
		;
	while (ts > line && ts[-1] != ' ')
		ts--;
	if (!strncmp(ts, "msg=", 4))
		ts += 4;
	if (!strncmp(ts, "audit(", 6)) {
		if (sscanf(ts + 6, "%lf:", &t) != 1)
			goto bad;
	} else if (sscanf(ts, "%lf:", &t) != 1) {
		goto bad;
	}

	ev += strlen(EVENT_NAME);
	v = field(ev, "call", &len);
	if (!v || (call = call_index(v, len)) < 0)
		goto bad;
	v = field(ev, "verdict", &len);
	if (!v)
		goto bad;
	if (len == 7 && !strncmp(v, "refused", 7))
		refused = 1;
	else if (len == 7 && !strncmp(v, "allowed", 7))
		refused = 0;
	else
		goto bad;
	v = field(ev, "missing", &len);
	if (!v || parse_flag_names(v, len, &missing) < 0)
		goto bad;
	{
		char path[PATH_MAX + 1], inode[48] = "-";
		unsigned int uid;
		size_t dlen, ilen;
		const char *dev, *ino;

		exe = field(ev, "exe", &len);
		if (!exe || decode(exe, len, path, sizeof(path)) < 0)
			goto bad;
		dev = field(ev, "exe_dev", &dlen);
		ino = field(ev, "exe_ino", &ilen);
		if (!dev || !ino)
			goto bad;
		if (*path)
			snprintf(inode, sizeof(inode), "%.*s:%.*s", (int)dlen, dev,
				 (int)ilen, ino);
		p = program_get(r, *path ? path : "(no executable)", inode);
		v = field(ev, "uid", &len);
		if (!v || sscanf(v, "%u", &uid) != 1)
			goto bad;
		add_uid(p, uid);
	}
	if (!p->count || t < p->first)
		p->first = t;
	if (!p->count || t > p->last)
		p->last = t;
	p->count++;
	p->refused += (unsigned long)refused;
	p->missing |= missing;
	p->calls |= 1u << call;
	r->traced[call][refused]++;
	r->events++;
	return;
bad:
	r->unparsed++;
	warnx("cannot parse: %.*s", (int)strcspn(line, "\n"), line);
}

static void read_trace(struct report *r, FILE *f, const char *name)
{
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, f) >= 0)
		parse_line(r, line);
	if (ferror(f))
		err(EXIT_FAILURE, "cannot read %s", name);
	free(line);
}

/* kernel.pidns_coupling_stats: "CALL allowed|refused COUNT" lines. */
static void read_stats(const char *path, unsigned long counts[NCALLS][2])
{
	char call[16], verdict[16];
	unsigned long n;
	FILE *f = fopen(path, "re");
	int c, lines = 0;

	if (!f)
		err(EXIT_FAILURE, "cannot open %s", path);
	while (fscanf(f, "%15s %15s %lu", call, verdict, &n) == 3) {
		c = call_index(call, strlen(call));
		if (c < 0 || (strcmp(verdict, "allowed") && strcmp(verdict, "refused")))
			errx(EXIT_FAILURE, "%s: unknown line \"%s %s\"", path,
			     call, verdict);
		counts[c][!strcmp(verdict, "refused")] = n;
		lines++;
	}
	if (ferror(f) || !lines)
		errx(EXIT_FAILURE, "%s: no counts in it", path);
	fclose(f);
}

/* A table named @name (its key in JSON). */
static struct libscols_table *new_table(const char *name, int json)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb)
		err(EXIT_FAILURE, "cannot create the table");
	scols_table_enable_json(tb, json);
	if (scols_table_set_name(tb, name))
		err(EXIT_FAILURE, "cannot name the table");
	return tb;
}

/* A column; a right-aligned one holds numbers, also in JSON. */
static void add_column(struct libscols_table *tb, const char *name, int number)
{
	struct libscols_column *cl;

	cl = scols_table_new_column(tb, name, 0, number ? SCOLS_FL_RIGHT : 0);
	if (!cl)
		err(EXIT_FAILURE, "cannot create the columns");
	if (number && scols_column_set_json_type(cl, SCOLS_JSON_NUMBER))
		err(EXIT_FAILURE, "cannot set a column's type");
}

static void set_ulong(struct libscols_line *ln, size_t col, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	if (scols_line_set_data(ln, col, buf))
		err(EXIT_FAILURE, "cannot set a cell");
}

static void set_str(struct libscols_line *ln, size_t col, const char *s)
{
	if (scols_line_set_data(ln, col, s))
		err(EXIT_FAILURE, "cannot set a cell");
}

static int by_count(const void *a, const void *b)
{
	const struct program *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->exe, y->exe);
}

static void print_programs(struct report *r, int json)
{
	struct libscols_table *tb = new_table("programs", json);
	size_t i, j;

	add_column(tb, "EXE", 0);
	add_column(tb, "INODE", 0);
	add_column(tb, "COUNT", 1);
	add_column(tb, "REFUSED", 1);
	add_column(tb, "FIRST", 1);
	add_column(tb, "LAST", 1);
	add_column(tb, "CALLS", 0);
	add_column(tb, "UIDS", 0);
	add_column(tb, "MISSING", 0);

	qsort(r->progs, r->nprogs, sizeof(*r->progs), by_count);
	for (i = 0; i < r->nprogs; i++) {
		struct program *p = &r->progs[i];
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		char buf[160];
		size_t pos = 0;

		if (!ln)
			err(EXIT_FAILURE, "cannot add a line");
		set_str(ln, 0, p->exe);
		set_str(ln, 1, p->inode);
		set_ulong(ln, 2, p->count);
		set_ulong(ln, 3, p->refused);
		snprintf(buf, sizeof(buf), "%.6f", p->first);
		set_str(ln, 4, buf);
		snprintf(buf, sizeof(buf), "%.6f", p->last);
		set_str(ln, 5, buf);
		buf[0] = '\0';
		for (j = 0; j < NCALLS; j++)
			if (p->calls & (1u << j))
				pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos,
							"%s%s", pos ? "," : "",
							call_names[j]);
		set_str(ln, 6, buf);
		pos = 0;
		buf[0] = '\0';
		for (j = 0; j < p->nuids && pos < sizeof(buf); j++)
			pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos,
						"%s%u", pos ? "," : "",
						p->uids[j]);
		if (p->more_uids && pos < sizeof(buf))
			snprintf(buf + pos, sizeof(buf) - pos, ",...");
		set_str(ln, 7, buf);
		if (p->missing)
			ns_flags_str(p->missing, ",", ",", buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "-");
		set_str(ln, 8, buf);
	}
	scols_print_table(tb);
	scols_unref_table(tb);
}

/*
 * The record against the kernel's counts, per call and verdict; returns
 * how many counted events the record lacks, and in @extra how many it has
 * that the kernel did not count (a baseline taken after the record began,
 * or lines that are not the kernel's).
 */
static unsigned long print_stats(struct report *r, unsigned long now[NCALLS][2],
				 unsigned long base[NCALLS][2], int json,
				 unsigned long *extra)
{
	struct libscols_table *tb = new_table("counts", json);
	unsigned long lacking = 0;
	size_t c;
	int v;

	add_column(tb, "CALL", 0);
	add_column(tb, "VERDICT", 0);
	add_column(tb, "TRACED", 1);
	add_column(tb, "COUNTED", 1);
	add_column(tb, "NOT-TRACED", 1);
	for (c = 0; c < NCALLS; c++) {
		for (v = 0; v < 2; v++) {
			struct libscols_line *ln = scols_table_new_line(tb, NULL);
			unsigned long counted, gap = 0;

			if (base[c][v] > now[c][v])
				errx(EXIT_FAILURE, "the baseline counts more %s %s than the kernel does now: a baseline from another boot?",
				     call_names[c], v ? "refused" : "allowed");
			counted = now[c][v] - base[c][v];
			if (counted > r->traced[c][v])
				gap = counted - r->traced[c][v];
			else
				*extra += r->traced[c][v] - counted;

			if (!ln)
				err(EXIT_FAILURE, "cannot add a line");
			set_str(ln, 0, call_names[c]);
			set_str(ln, 1, v ? "refused" : "allowed");
			set_ulong(ln, 2, r->traced[c][v]);
			set_ulong(ln, 3, counted);
			set_ulong(ln, 4, gap);
			lacking += gap;
		}
	}
	scols_print_table(tb);
	scols_unref_table(tb);
	return lacking;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "stats", optional_argument, NULL, OPT_STATS },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long now[NCALLS][2] = { { 0 } }, base[NCALLS][2] = { { 0 } };
	const char *stats = NULL, *baseline = NULL;
	struct report r = { 0 };
	unsigned long lacking = 0, extra = 0;
	int c, json = 0;

	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = 1;
			break;
		case OPT_STATS:
			stats = optarg ? optarg : STATS_SYSCTL;
			break;
		case OPT_BASELINE:
			baseline = optarg;
			if (!stats)
				stats = STATS_SYSCTL;
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

	if (optind == argc) {
		read_trace(&r, stdin, "standard input");
	} else {
		for (; optind < argc; optind++) {
			FILE *f = strcmp(argv[optind], "-") ?
				  fopen(argv[optind], "re") : stdin;

			if (!f)
				err(EXIT_FAILURE, "cannot open %s", argv[optind]);
			read_trace(&r, f, argv[optind]);
			if (f != stdin)
				fclose(f);
		}
	}
	if (stats) {
		read_stats(stats, now);
		if (baseline)
			read_stats(baseline, base);
	}

	if (json)
		printf("{\"events\": %lu, \"lost\": %lu, \"lost-unknown\": %s, \"unparsed\": %lu,\n",
		       r.events, r.lost, r.lost_unknown ? "true" : "false",
		       r.unparsed);
	else
		printf("%lu events from %zu programs%s\n", r.events, r.nprogs,
		       r.lost || r.lost_unknown ? "" :
		       ", none reported lost by the trace buffer");
	if (!json && r.lost)
		printf("the trace buffer dropped %lu events: enlarge it (trace-cmd record -b, buffer_size_kb)\n",
		       r.lost);
	if (!json && r.lost_unknown)
		printf("the trace buffer dropped events (it does not say how many)\n");
	if (json)
		printf("\"report\": ");
	print_programs(&r, json);
	if (stats) {
		if (json)
			printf(",\n\"kernel\": ");
		lacking = print_stats(&r, now, base, json, &extra);
		if (!json && lacking)
			printf("the record lacks %lu of the events the kernel counted%s\n",
			       lacking, baseline ? "" :
			       " since boot (give --baseline for a record that started later)");
		else if (!json && !extra)
			printf("the record holds every event the kernel counted%s\n",
			       baseline ? " since the baseline" : " since boot");
		if (!json && extra)
			printf("the record holds %lu events more than the kernel counted: a baseline taken after the record began, or lines that are not the kernel's\n",
			       extra);
		if (json)
			printf(",\n\"lacking\": %lu, \"extra\": %lu", lacking,
			       extra);
	}
	if (json)
		printf("}\n");
	return r.unparsed || extra ? EXIT_FAILURE : EXIT_SUCCESS;
}
