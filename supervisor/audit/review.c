/* SPDX-License-Identifier: MIT */
/*
 * review.c - `gpusandbox audit VIEW [OPTIONS] FILE...`: the dispatch, the
 * options every view shares, and the exit status (review.h,
 * man/gpusandbox-audit.1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_verify.h"
#include "review.h"

#define US_PER_S 1000000ll
#define INTERVAL_DEFAULT_S 1.0
#define INTERVAL_MIN_S 0.001
#define INTERVAL_MAX_S 1e6
#define MAX_FILES 4096

static const char usage_text[] =
	"Usage: gpusandbox audit VIEW [OPTIONS] FILE...\n"
	"Review gpusandbox audit logs (FILE may be - for standard input).\n"
	"Views:\n"
	"  summary    per sandbox: policy, peak against quota per GPU and resource,\n"
	"             compute share achieved, how it ended, whether the chain verifies\n"
	"  denials    refusals grouped by reason, each with the option or policy\n"
	"             line that would allow it\n"
	"  timeline   the matching records in time order\n"
	"  usage      video memory per process and GPU over time (--interval)\n"
	"  plot       an SVG of usage against quota per GPU, refusals marked\n"
	"  verify     check the hash chain (gpusandbox audit verify --help)\n"
	"Options:\n"
	"  --sandbox ID       only this sandbox (an id or its prefix; repeatable)\n"
	"  --pid PID          only records of this process (repeatable)\n"
	"  --comm NAME        only records of processes named NAME (repeatable)\n"
	"  --gpu N            only records about GPU N (repeatable)\n"
	"  --verdict V        only this verdict (allow, deny, refuse, continue,\n"
	"                     release) or outcome (quota, policy, device_full,\n"
	"                     driver, ok, ...); repeatable\n"
	"  --since TIME       only records at or after TIME: seconds since 1970\n"
	"                     (@1763935470), ISO-8601 (2026-11-23T22:24:30Z; UTC\n"
	"                     without a zone), now, -10m (before now: s, m, h, d)\n"
	"                     or +30s (after each sandbox's start)\n"
	"  --until TIME       only records at or before TIME\n"
	"  --format FMT       text (default), json or csv\n"
	"  --fail-on deny     exit 4 when a matching record is a refusal\n"
	"  --interval SEC     usage: width of a time window (default 1)\n"
	"  -o, --output FILE  write the view to FILE instead of standard output\n"
	"  -h, --help         show this help and exit\n"
	"Exit status: 0 the view showed something; 1 nothing matched; 2 usage\n"
	"error; 3 a FILE could not be read; 4 --fail-on deny and a refusal\n"
	"matched; 5 lines were skipped (each reported as FILE:LINE: malformed,\n"
	"longer than 4 MiB, cut short or out of memory), the view shown without them.\n";

typedef long (*view_fn)(const struct review_log *, const struct review_opts *);

static const struct {
	const char *name;
	view_fn     fn;
} views[] = {
	{ "summary", review_summary },   { "denials", review_denials }, { "timeline", review_timeline },
	{ "usage", review_usage },       { "plot", review_plot },
};

struct parsed {
	struct review_filter filter;
	struct review_opts   opts;
	const char          *output;
	bool                 fail_on_deny;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpusandbox audit: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gpusandbox audit --help'.\n");
	return GS_REVIEW_USAGE;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * US_PER_S + ts.tv_nsec / 1000;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return s[0] && !*end && errno == 0 && *out >= min && *out <= max;
}

/* One option into p; GS_REVIEW_FOUND or GS_REVIEW_USAGE. */
static int take_option(struct parsed *p, int c, const char *arg)
{
	struct review_filter *f = &p->filter;
	long v;
	char *end;

#define ADD(list, n, value, what)                                                       \
	do {                                                                             \
		if (f->n == REVIEW_MAX_VALUES)                                           \
			return usage_error("too many " what " (at most 16): %s", arg);   \
		f->list[f->n++] = (value);                                               \
	} while (0)
	switch (c) {
	case 'S': ADD(sandbox, n_sandbox, arg, "--sandbox"); return 0;
	case 'c': ADD(comm, n_comm, arg, "--comm"); f->record_filters = true; return 0;
	case 'V': ADD(verdict, n_verdict, arg, "--verdict"); f->record_filters = true; return 0;
	case 'p':
		if (!parse_long(arg, 0, INT32_MAX, &v))
			return usage_error("--pid: not a process id: %s", arg);
		ADD(pid, n_pid, v, "--pid");
		f->record_filters = true;
		return 0;
	case 'g':
		if (!parse_long(arg, 0, REVIEW_GPUS - 1, &v))
			return usage_error("--gpu: not a GPU index (0-63): %s", arg);
		ADD(gpu, n_gpu, (int)v, "--gpu");
		f->record_filters = true;
		return 0;
	case 's':
	case 'u':
		if (review_parse_time(arg, now_us(), c == 's' ? &f->since : &f->until) < 0)
			return usage_error("not a time (epoch, ISO-8601, now, -10m or +30s): %s", arg);
		return 0;
	case 'f':
		p->opts.format = strcmp(arg, "json") == 0 ? REVIEW_JSON
		               : strcmp(arg, "csv") == 0  ? REVIEW_CSV
		                                          : REVIEW_TEXT_FORMAT;
		if (p->opts.format == REVIEW_TEXT_FORMAT && strcmp(arg, "text") != 0)
			return usage_error("--format: text, json or csv, not %s", arg);
		return 0;
	case 'F':
		if (strcmp(arg, "deny") != 0)
			return usage_error("--fail-on: the one condition is deny, not %s", arg);
		p->fail_on_deny = true;
		return 0;
	case 'i':
		p->opts.interval_s = strtod(arg, &end);
		if (end == arg || *end || !(p->opts.interval_s >= INTERVAL_MIN_S) ||
		    p->opts.interval_s > INTERVAL_MAX_S)
			return usage_error("--interval: seconds, 0.001 to 1000000: %s", arg);
		return 0;
	case 'o':
		p->output = arg;
		return 0;
	}
#undef ADD
	return usage_error("%s", "unknown option");
}

static int parse(struct parsed *p, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sandbox", required_argument, NULL, 'S' }, { "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },    { "gpu", required_argument, NULL, 'g' },
		{ "verdict", required_argument, NULL, 'V' }, { "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },   { "format", required_argument, NULL, 'f' },
		{ "fail-on", required_argument, NULL, 'F' }, { "interval", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(p, 0, sizeof(*p));
	p->opts.interval_s = INTERVAL_DEFAULT_S;
	p->opts.filter = &p->filter;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return -1;
		}
		if (c == '?' || c == ':')
			return usage_error("bad option or missing argument: %s", argv[optind - 1]);
		if ((rc = take_option(p, c, optarg)) != 0)
			return rc;
	}
	if (optind >= argc)
		return usage_error("%s", "no FILE given");
	if (argc - optind > MAX_FILES)
		return usage_error("%s", "too many files (at most 4096)");
	return 0;
}

static bool any_refusal(const struct review_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		if (log->recs[i].matched && log->recs[i].refusal)
			return true;
	return false;
}

static int run_view(view_fn fn, bool plot, int argc, char **argv)
{
	struct parsed p;
	struct review_log log = { 0 };
	long shown = 0;
	int rc = parse(&p, argc, argv);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (plot && p.opts.format != REVIEW_TEXT_FORMAT)
		return usage_error("%s", "plot writes SVG: --format is for the other views");
	if (fn == review_summary && review_summary_streams(&p.filter)) {
		/* summary keeps its facts per sandbox, not the records. */
		p.opts.facts = review_facts_new(&p.filter);
		if (!p.opts.facts) {
			fprintf(stderr, "gpusandbox audit: out of memory\n");
			return GS_REVIEW_UNREADABLE;
		}
		log.sink = review_facts_sink;
		log.sink_ctx = p.opts.facts;
	}
	/* The records each view reads; every refusal is kept besides, for
	 * --fail-on deny. timeline shows every record: it keeps them all. */
	log.keep = fn == review_denials ? review_denials_keeps
	         : fn == review_usage   ? review_usage_keeps
	         : fn == review_plot    ? review_plot_keeps
	                                : NULL;
	if (review_read(&log, (const char *const *)argv + optind, (unsigned)(argc - optind)) < 0) {
		fprintf(stderr, "gpusandbox audit: out of memory, or no random key (getrandom)\n");
		rc = GS_REVIEW_UNREADABLE;
		goto out;
	}
	review_link_suppressed(&log);
	review_sort(&log);
	review_apply_filter(&log, &p.filter);
	/* Opened after the logs are read: --output naming one of them must
	 * not empty it before it is read. */
	p.opts.out = p.output ? fopen(p.output, "we") : stdout;
	if (!p.opts.out) {
		fprintf(stderr, "gpusandbox audit: cannot create '%s': %m\n", p.output);
		rc = GS_REVIEW_UNREADABLE;
		goto out;
	}
	shown = fn(&log, &p.opts);
	if (shown < 0 || fflush(p.opts.out) != 0) {
		fprintf(stderr, "gpusandbox audit: cannot write the view: %m\n");
		rc = GS_REVIEW_UNREADABLE;
	} else if (log.unreadable) {
		rc = GS_REVIEW_UNREADABLE;
	} else if (p.fail_on_deny && (any_refusal(&log) || review_facts_refused(p.opts.facts))) {
		rc = GS_REVIEW_DENIED;
	} else if (log.malformed) {
		rc = GS_REVIEW_SKIPPED;
	} else {
		rc = shown ? GS_REVIEW_FOUND : GS_REVIEW_NOTHING;
	}
	if (log.malformed)
		fprintf(stderr, "gpusandbox audit: %lu malformed line%s skipped\n", log.malformed,
		        log.malformed == 1 ? "" : "s");
	if (shown == 0)
		fprintf(stderr, "gpusandbox audit: nothing matched\n");
out:
	if (p.output && p.opts.out && fclose(p.opts.out) != 0 &&
	    (rc == GS_REVIEW_FOUND || rc == GS_REVIEW_SKIPPED))
		rc = GS_REVIEW_UNREADABLE;
	review_free(&log);
	review_facts_free(p.opts.facts);
	return rc;
}

int gs_audit_command(int argc, char **argv)
{
	const char *view = argc >= 2 ? argv[1] : "";

	if (strcmp(view, "verify") == 0)
		return gs_audit_verify(argc - 1, argv + 1);
	if (strcmp(view, "--help") == 0 || strcmp(view, "-h") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	for (unsigned i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (strcmp(view, views[i].name) == 0)
			return run_view(views[i].fn, views[i].fn == review_plot, argc - 1, argv + 1);
	fprintf(stderr, "gpusandbox audit: unknown or missing view%s%s (summary, denials, timeline, "
	        "usage, plot, verify)\n%s", view[0] ? " " : "", view, usage_text);
	return GS_REVIEW_USAGE;
}
