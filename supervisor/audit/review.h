/* SPDX-License-Identifier: MIT */
/*
 * review.h - `gpusandbox audit VIEW [OPTIONS] FILE...`: the reader side of
 * the audit log (issue #15).
 *
 * The logs a reviewer reads may have been cut short by a crash, rotated,
 * concatenated, edited, or written by an older gpusandbox (schema 1 had
 * no chain and no outcome). The reader (review_read.c) never trusts them:
 * each line is read into a bounded buffer, parsed strictly, and only a
 * compact digest of it is kept (struct review_rec, its texts cut to
 * bounded lengths and kept once per log in a pool), and only by the views
 * that show it: summary keeps none; text is cleaned
 * of terminal controls before it is stored, so no view can print what a
 * hostile log wrote. A malformed line is reported with its file and line
 * and the reading goes on.
 *
 * The views (review_views.c, review_denials.c, review_plot.c) read only
 * these digests; review_out.c writes their tables as text, JSON or CSV.
 */
#ifndef GPUSANDBOX_REVIEW_H
#define GPUSANDBOX_REVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "idmap.h"
#include "sha256.h"

/* Exit statuses of the views (man/gpusandbox-audit.1, EXIT STATUS), like
 * ausearch's: finding nothing is not success. `verify` keeps its own
 * (audit_verify.h). */
enum gs_review_exit {
	GS_REVIEW_FOUND      = 0,   /* the view showed something */
	GS_REVIEW_NOTHING    = 1,   /* nothing matched: no sandbox, refusal, row or panel */
	GS_REVIEW_USAGE      = 2,   /* bad option, view or time */
	GS_REVIEW_UNREADABLE = 3,   /* a FILE could not be opened or read */
	GS_REVIEW_DENIED     = 4,   /* --fail-on deny: a matching record is a refusal */
	/* Lines were skipped (malformed, longer than any record, cut short, or
	 * no memory left to keep them): the view is shown but is not the
	 * whole log, which a script must not take for a clean pass. */
	GS_REVIEW_SKIPPED    = 5,
};

/* Text kept from one field; longer text is cut (with "..."). A record's
 * digest is about 300 bytes whatever the line held, its texts shared. */
#define REVIEW_TEXT 96
#define REVIEW_NAME 48      /* a call, class, control, resource or group name */
#define REVIEW_WORD 24      /* a verdict, outcome or event */
#define REVIEW_LONG_TEXT 320
#define REVIEW_ID 65
#define REVIEW_GPUS 64u
#define REVIEW_NO_GPU (-1)
#define REVIEW_UNSET UINT64_MAX

enum review_event {
	REVIEW_EV_START, REVIEW_EV_DECISION, REVIEW_EV_SUPPRESSED, REVIEW_EV_SUMMARY,
	REVIEW_EV_SM_ADJUST, REVIEW_EV_SEAL, REVIEW_EV_ERROR, REVIEW_EV_USAGE, REVIEW_EV_OTHER,
};

/* Each distinct text of a log, kept once (review_pool.c). */
struct review_pool {
	struct gs_idmap map;       /* text -> index into strings (keyed) */
	char          **strings;
	size_t          n, cap;
};
int  review_pool_init(struct review_pool *p);
void review_pool_free(struct review_pool *p);
/* The pool's copy of s ("" for NULL or empty); NULL when out of memory. */
const char *review_intern(struct review_pool *p, const char *s);

/* A digest of one record: what the views read. Its texts, cleaned and
 * cut to the lengths above, point into the log's pool (or at literals):
 * never written through, freed with the pool. */
struct review_rec {
	uint32_t sandbox;        /* index into review_log.sandboxes */
	uint32_t file, line;     /* where it was read */
	uint64_t order;          /* read order, to keep sorting stable */
	uint64_t seq;
	int64_t  time_us;        /* microseconds since the epoch; INT64_MIN unknown */
	enum review_event event;
	int64_t  pid, tid;       /* -1: absent */
	int      gpu;            /* REVIEW_NO_GPU: none */
	char     time_text[32];
	const char *event_name;  /* REVIEW_WORD */
	const char *comm, *call; /* REVIEW_NAME */
	const char *object;      /* class or control name, or its number */
	const char *kind;        /* "class", "control", "escape" or "" */
	const char *verdict;
	const char *outcome;     /* from the record, or derived (schema 1) */
	const char *status;      /* NV status name or number, errno */
	const char *resource;
	const char *reason;      /* REVIEW_TEXT */
	const char *group;
	const char *stack;       /* a refusal's call stack, innermost first */
	uint64_t size, usage_before, usage_after, quota;  /* REVIEW_UNSET: absent */
	uint64_t peak;                  /* a usage record's peak since the last one */
	uint64_t count, first_seq;      /* suppressed records */
	double   share;                 /* sm_adjust: measured share; <0 absent */
	bool     refusal;               /* deny/refuse, or a failed or repeated refusal */
	bool     matched;               /* passes the filters */
};
#define REVIEW_STACK_TEXT (2 * REVIEW_TEXT)
#define REVIEW_OBJECT_TEXT (REVIEW_NAME + 16)

/* The texts of one record while it is digested, before they are kept
 * once each in the pool, or, when a view streams, where they stay until
 * the next record (review_log.scratch_text): a streaming view does not
 * keep the texts of every record either. */
struct review_rec_text {
	char event[REVIEW_WORD];   /* first: review_digest_fields clears the rest */
	char comm[REVIEW_NAME], call[REVIEW_NAME], object[REVIEW_OBJECT_TEXT];
	char verdict[REVIEW_WORD], outcome[REVIEW_WORD], status[REVIEW_NAME];
	char resource[REVIEW_NAME], reason[REVIEW_TEXT], group[REVIEW_NAME];
	char stack[REVIEW_STACK_TEXT];
};

/* What a sandbox's start and summary records say per GPU. Most sandboxes
 * say nothing per GPU: they share review_gpus_unset (all unset) and get
 * their own only when a record sets one, so that a log of many sandboxes
 * does not cost 1.5 KiB each for nothing. */
struct review_gpus {
	uint64_t mem_gpu[REVIEW_GPUS];          /* gpu.N.mem, REVIEW_UNSET unset */
	uint64_t peak[REVIEW_GPUS];             /* the summary record's; REVIEW_UNSET */
	double   share_achieved[REVIEW_GPUS];   /* <0: not measured */
};
extern const struct review_gpus review_gpus_unset;

struct review_sandbox {
	char     id[REVIEW_ID];
	/* From the start record, in the log's pool ("" when not said). */
	const char *command, *labels, *policy;  /* REVIEW_LONG_TEXT */
	const char *driver;                     /* REVIEW_TEXT */
	const char *level;                      /* the audit level (schema 3), "stacks" */
	const char *groups;                     /* the policy's groups, "a,b,c" */
	char     start_text[32];                /* the start record's time */
	int64_t  schema;                        /* 0: not said (schema 1) */
	int64_t  start_us, end_us;              /* INT64_MIN unknown */
	bool     has_start, has_summary;
	uint64_t mem_quota;                     /* REVIEW_UNSET: none */
	const struct review_gpus *gpus;         /* never NULL */
	int64_t  exit_status, signal;           /* -1: none */
	double   share_target;                  /* <0: no --sm */
	/* The chain, checked as the records are read (audit_verify.c is the
	 * full report; this is its verdict per sandbox). */
	bool     chained, sealed;
	uint64_t next_seq;
	char     prev[GS_SHA256_HEX];
	uint64_t chain_problems, records;
};
/* The sandbox's own per-GPU facts, to write (NULL when out of memory). */
struct review_gpus *review_sandbox_gpus(struct review_sandbox *sb);

struct review_log {
	struct review_rec     *recs;
	size_t                 n, cap;
	struct review_sandbox *sandboxes;
	size_t                 n_sandboxes, cap_sandboxes;
	const char *const     *files;
	unsigned long          malformed;   /* lines reported and skipped */
	bool                   unreadable;  /* a file could not be read */
	struct gs_idmap        ids;         /* sandbox id -> index (keyed: idmap.h) */
	struct review_pool     pool;        /* the records' and sandboxes' texts */
	/* When set, each record goes to sink as it is read and is not kept
	 * (recs stays empty): a view that streams. */
	void                 (*sink)(struct review_log *log, struct review_rec *r, void *ctx);
	void                  *sink_ctx;
	struct review_rec      scratch;     /* the record being read, when streaming */
	struct review_rec_text scratch_text;   /* and its texts */
	/* When set, only the records it accepts, and every refusal, are
	 * kept: a view that reads few of them does not hold the whole log. */
	bool                 (*keep)(const struct review_rec *r);
};

/* Figures read from a log are the log's to choose: a count or a size
 * near 2^64 must not wrap a total (issue #32). Sums saturate. */
static inline uint64_t review_add_count(uint64_t total, uint64_t n)
{
	uint64_t sum;

	return __builtin_add_overflow(total, n, &sum) ? UINT64_MAX : sum;
}

/* How many refusals a record stands for: a suppressed one its count. */
static inline uint64_t review_refusals_of(const struct review_rec *r)
{
	return r->event == REVIEW_EV_SUPPRESSED && r->count != REVIEW_UNSET ? r->count : 1;
}

/* Reads every file ("-" is standard input) into log. Malformed lines are
 * reported on stderr as FILE:LINE: and skipped. Returns 0, or -1 when out
 * of memory; an unreadable file sets log->unreadable and the others are
 * still read. */
int  review_read(struct review_log *log, const char *const *files, unsigned n_files);
void review_free(struct review_log *log);
/* Sorts the records by time, then read order (a record of unknown time
 * keeps its place after the record read before it). */
void review_sort(struct review_log *log);
/* Copies the fields a suppressed record does not repeat (GPU, comm,
 * resource, limit, object) from the record it repeats. */
void review_link_suppressed(struct review_log *log);

/* Filters (all given ones must hold; a record without the field does not
 * match a filter on it). */
#define REVIEW_MAX_VALUES 16
enum review_time_kind { REVIEW_TIME_NONE, REVIEW_TIME_ABS, REVIEW_TIME_FROM_START };
struct review_time {
	enum review_time_kind kind;
	int64_t us;          /* ABS: epoch µs; FROM_START: offset from the sandbox's start */
};
struct review_filter {
	const char *sandbox[REVIEW_MAX_VALUES]; unsigned n_sandbox;   /* id or a prefix */
	int64_t     pid[REVIEW_MAX_VALUES];     unsigned n_pid;
	const char *comm[REVIEW_MAX_VALUES];    unsigned n_comm;
	int         gpu[REVIEW_MAX_VALUES];     unsigned n_gpu;
	const char *verdict[REVIEW_MAX_VALUES]; unsigned n_verdict;
	struct review_time since, until;
	bool        record_filters;   /* pid, comm, gpu or verdict given */
};
/* Parses a --since/--until argument: seconds since the epoch (123 or
 * @123.5), ISO-8601 (2026-11-23, 2026-11-23T22:24:30[.123][Z|+01:00],
 * with a blank for the T), relative to now (now, -10m, -2h, -1d) or to
 * each sandbox's start (+30s). Returns 0 or -1. */
int  review_parse_time(const char *s, int64_t now_us, struct review_time *t);
/* Parses an RFC 3339 time as the supervisor writes it. */
bool review_parse_rfc3339(const char *s, int64_t *us);
/* Marks the records that pass; returns how many. */
uint64_t review_apply_filter(struct review_log *log, const struct review_filter *f);
bool review_record_matches(const struct review_filter *f, const struct review_log *log,
                           const struct review_rec *r);
bool review_sandbox_matches(const struct review_filter *f, const char *id);

/* Output: every view but plot builds a table, written as text, JSON or
 * CSV by one writer, so the formats cannot disagree. */
enum review_format { REVIEW_TEXT_FORMAT, REVIEW_JSON, REVIEW_CSV };
enum review_cell_type { CELL_NULL, CELL_TEXT, CELL_INT, CELL_BYTES, CELL_RATIO };
struct review_cell {
	enum review_cell_type type;
	bool     owned;      /* text is the cell's to free */
	char    *text;       /* CELL_TEXT */
	union {
		int64_t i;       /* CELL_INT, CELL_BYTES */
		double  ratio;   /* CELL_RATIO: 0.25 is 25 % */
	};
};
struct review_table {
	const char *const *columns;
	unsigned           n_columns;
	struct review_cell *cells;   /* rows * n_columns */
	size_t             rows, cap;
};
int  review_table_init(struct review_table *t, const char *const *columns, unsigned n);
/* Adds a row of CELL_NULLs; returns its first cell or NULL (no memory). */
struct review_cell *review_table_row(struct review_table *t);
void review_cell_text(struct review_cell *c, const char *s);   /* copied */
/* Borrowed: s outlives the table (the log's pool, a sandbox id, a
 * record's time, a literal), so no copy per row. */
void review_cell_ref(struct review_cell *c, const char *s);
void review_cell_int(struct review_cell *c, int64_t v);
void review_cell_count(struct review_cell *c, uint64_t v);   /* past INT64_MAX: INT64_MAX */
void review_cell_bytes(struct review_cell *c, uint64_t v);   /* REVIEW_UNSET: null */
void review_cell_ratio(struct review_cell *c, double v);     /* <0: null */
int  review_table_write(const struct review_table *t, enum review_format fmt, FILE *out);
/* Rows made on demand: fill(ctx, row, cells) fills the cells of row
 * (0 .. n_rows-1, in order, possibly twice: text format sizes its columns
 * first); the writer frees what they own. Nothing is held between rows. */
struct review_rows {
	const char *const *columns;
	unsigned           n_columns;
	size_t             n_rows;
	int              (*fill)(void *ctx, size_t row, struct review_cell *cells);
	void              *ctx;
};
int  review_rows_write(const struct review_rows *rs, enum review_format fmt, FILE *out);
void review_table_free(struct review_table *t);
/* Text safe for a terminal, CSV and SVG alike: controls and invalid
 * UTF-8 replaced, cut to len - 1 bytes at a character boundary. */
void review_clean(char *dst, size_t len, const char *src);

/* Views. Each returns how many things it showed (sandboxes, groups,
 * rows, panels), or -1 on an output or memory error. */
struct review_opts {
	enum review_format format;
	const struct review_filter *filter;
	struct review_facts *facts;   /* summary: gathered while reading; NULL: from the records */
	double interval_s;        /* usage: bucket width */
	FILE  *out;
};
long review_summary(const struct review_log *log, const struct review_opts *o);
long review_denials(const struct review_log *log, const struct review_opts *o);
/* The records denials can show (whatever the filters): refusals and
 * device_full decisions and their folded repeats. */
bool review_denials_keeps(const struct review_rec *r);
/* The records usage and plot can show: those that move video memory on
 * a GPU (and, for all views, every refusal: --fail-on deny reads them). */
bool review_usage_keeps(const struct review_rec *r);
bool review_plot_keeps(const struct review_rec *r);
long review_timeline(const struct review_log *log, const struct review_opts *o);
long review_usage(const struct review_log *log, const struct review_opts *o);
long review_plot(const struct review_log *log, const struct review_opts *o);

/* summary's facts per sandbox: all it keeps of the records. When no
 * filter needs the whole log first (review_summary_streams), they are
 * gathered as the records are read (review_facts_sink as the log's sink)
 * and no record is kept, so a summary of a 1 GB log holds its sandboxes,
 * not its records (issue #32). */
struct review_facts;
bool review_summary_streams(const struct review_filter *f);
struct review_facts *review_facts_new(const struct review_filter *filter);
void review_facts_free(struct review_facts *facts);
void review_facts_sink(struct review_log *log, struct review_rec *r, void *ctx);
bool review_facts_refused(const struct review_facts *facts);

/* The option or policy line that would allow a refusal (review_denials.c). */
void review_fix_text(const struct review_sandbox *sb, const struct review_rec *r, uint64_t needed,
                     char *buf, size_t len);

/* `gpusandbox audit VIEW ...`: argv[0] is "audit". Returns the exit status. */
int gs_audit_command(int argc, char **argv);

#endif
