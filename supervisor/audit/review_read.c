/* SPDX-License-Identifier: MIT */
/*
 * review_read.c - reads audit logs for `gpusandbox audit VIEW`.
 *
 * Every line is one record or one message on stderr (FILE:LINE: why) and
 * nothing else: a line longer than GS_AUDIT_LINE_MAX (audit_verify.h: the
 * limit `verify` reads by too, so the two cannot disagree about a log) is
 * skipped without being held whole, a line that is not a strict JSON
 * object in valid UTF-8 is skipped, and the reading goes on, so a log
 * cut short or edited still shows what it holds. What is kept of a record
 * is a compact digest (struct review_rec, review.h; its texts in the
 * log's pool), filled from the fields by name, and only when the view
 * can show it (log->keep; summary's sink keeps none); a field of
 * the wrong type is as good as absent. The chain (prev, hash, seq) is
 * checked here in the order read, with audit_verify.c's hash, so that the
 * summary can say whether each sandbox's records are intact.
 */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "audit_verify.h"
#include "gpusandbox.h"
#include "review.h"
#include "review_json.h"

/* Nesting deeper than any record we write is refused by the parser
 * before it recurses on hostile input. */
#define REVIEW_JSON_DEPTH 16
#define INDEX_INITIAL 64u

static const char zero_hash[GS_SHA256_HEX] =
	"0000000000000000000000000000000000000000000000000000000000000000";

struct reader {
	struct review_log *log;
	json_tokener      *tok;
	const char        *path;
	uint32_t           file;
	unsigned long      line;
	unsigned long      malformed_here;   /* in this file */
};

/* A file of something else (another tool's JSON Lines) would bury the
 * messages about the logs: ten per file are shown, then a count. */
#define MALFORMED_SHOWN 10

static void malformed(struct reader *rd, const char *why)
{
	if (rd->malformed_here < MALFORMED_SHOWN)
		fprintf(stderr, "gpusandbox audit: %s:%lu: %s: skipped\n", rd->path, rd->line, why);
	rd->malformed_here++;
	rd->log->malformed++;
}

/* A sandbox id is a plain word: it is printed and used as a key. */
static bool is_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-");
	return n && !s[n] && n < REVIEW_ID;
}

static const char *sandbox_id(const void *ctx, uint32_t i)
{
	return ((const struct review_log *)ctx)->sandboxes[i].id;
}

static void sandbox_init(struct review_sandbox *sb, const char *id)
{
	memset(sb, 0, sizeof(*sb));
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	sb->start_us = sb->end_us = INT64_MIN;
	sb->mem_quota = REVIEW_UNSET;
	sb->exit_status = sb->signal = -1;
	sb->share_target = -1;
	sb->command = sb->labels = sb->policy = sb->driver = sb->level = sb->groups = "";
	sb->gpus = &review_gpus_unset;
}

/* The sandbox's index, made on first sight; -1 when out of memory. The
 * map's hash is keyed at random (idmap.h): no log can choose ids that
 * collide. */
static long sandbox_of(struct review_log *log, const char *id)
{
	bool added;
	long sb;

	if (!GS_ROOM_FOR_ONE(log->sandboxes, log->n_sandboxes, log->cap_sandboxes, INDEX_INITIAL))
		return -1;
	sb = gs_idmap_get_or_add(&log->ids, id, (uint32_t)log->n_sandboxes, &added);
	if (sb >= 0 && added)
		sandbox_init(&log->sandboxes[log->n_sandboxes++], id);
	return sb;
}

/* The chain's verdict on one record, in the order read: the full account
 * of what is wrong is `gpusandbox audit verify`'s. */
static void check_chain(struct review_sandbox *sb, const char *text, size_t len, json_object *o,
                        const struct review_rec *r)
{
	const char *prev = review_json_str(o, "prev"), *event = review_json_str(o, "event");
	char hash[GS_SHA256_HEX] = "";
	/* A rotated log's file may begin with "continued": its chain began in
	 * the file before (audit_rotate.h), whatever its seq and prev. */
	bool first = sb->records == 0, continued = first && event && strcmp(event, "continued") == 0;

	sb->records++;
	if (!prev && !review_json_str(o, "hash")) {
		if (sb->chained)
			sb->chain_problems++;   /* a record without a link in a chained log */
		return;
	}
	if (!first && !sb->chained)
		sb->chain_problems++;       /* links that start after unlinked records */
	sb->chained = true;
	if (!gs_audit_hash_matches(text, len, hash) || !prev || sb->sealed ||
	    (!continued && (r->seq != (first ? 0 : sb->next_seq) ||
	                    strcmp(prev, first ? zero_hash : sb->prev) != 0)))
		sb->chain_problems++;
	sb->next_seq = r->seq + 1;
	snprintf(sb->prev, sizeof(sb->prev), "%s", hash);
	sb->sealed = sb->sealed || r->event == REVIEW_EV_SEAL;
}

static enum review_event event_of(const char *name)
{
	static const char *const names[] = {
		[REVIEW_EV_START] = "start",           [REVIEW_EV_DECISION] = "decision",
		[REVIEW_EV_SUPPRESSED] = "suppressed", [REVIEW_EV_SUMMARY] = "summary",
		[REVIEW_EV_SM_ADJUST] = "sm_adjust",   [REVIEW_EV_SEAL] = "seal",
		[REVIEW_EV_ERROR] = "error",           [REVIEW_EV_USAGE] = "usage",
	};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return (enum review_event)i;
	return REVIEW_EV_OTHER;
}

static struct review_rec *rec_new(struct review_log *log)
{
	struct review_rec *r;

	if (log->sink) {
		r = &log->scratch;   /* handed to the sink, then forgotten */
		memset(r, 0, sizeof(*r));
	} else {
		if (!GS_ROOM_FOR_ONE(log->recs, log->n, log->cap, INDEX_INITIAL))
			return NULL;
		r = &log->recs[log->n];
		memset(r, 0, sizeof(*r));
		r->order = log->n++;
	}
	r->pid = r->tid = -1;
	r->gpu = REVIEW_NO_GPU;
	r->time_us = INT64_MIN;
	r->size = r->usage_before = r->usage_after = r->quota = REVIEW_UNSET;
	r->count = r->first_seq = r->peak = REVIEW_UNSET;
	r->share = -1;
	r->event_name = r->comm = r->call = r->object = r->kind = r->verdict = r->outcome = "";
	r->status = r->resource = r->reason = r->group = r->stack = "";
	return r;
}

/* One parsed record into the log; NULL or a reason it was skipped. */
static const char *take_record(struct reader *rd, json_object *o, const char *text, size_t len)
{
	struct review_log *log = rd->log;
	const char *id = review_json_str(o, "sandbox"), *event = review_json_str(o, "event");
	struct review_rec *r;
	char word[REVIEW_WORD];
	long sb;

	if (!id || !is_id(id))
		return "no \"sandbox\" id";
	if (!event)
		return "no \"event\"";
	sb = sandbox_of(log, id);
	r = sb < 0 ? NULL : rec_new(log);
	if (!r)
		return "out of memory";
	r->sandbox = (uint32_t)sb;
	r->file = rd->file;
	r->line = (uint32_t)(rd->line > UINT32_MAX ? UINT32_MAX : rd->line);
	r->event = event_of(event);
	if (log->sink) {   /* streamed: the texts live until the next record */
		review_clean(log->scratch_text.event, sizeof(log->scratch_text.event), event);
		r->event_name = log->scratch_text.event;
	} else {
		review_clean(word, sizeof(word), event);
		if (!(r->event_name = review_intern(&log->pool, word)))
			return "out of memory";
	}
	if (!review_json_u64(o, "seq", &r->seq))
		r->seq = REVIEW_UNSET;
	review_clean(r->time_text, sizeof(r->time_text), review_json_str(o, "time"));
	if (!review_parse_rfc3339(r->time_text, &r->time_us))
		r->time_us = INT64_MIN;
	if (review_digest_fields(r, o, log->sink ? NULL : &log->pool, &log->scratch_text) < 0 ||
	    review_digest_sandbox(&log->sandboxes[sb], r, o, &log->pool) < 0)
		return "out of memory";
	if (r->event == REVIEW_EV_START && log->sandboxes[sb].schema > GS_AUDIT_SCHEMA)
		fprintf(stderr, "gpusandbox audit: %s:%lu: sandbox %s: schema %lld is newer than this "
		        "gpusandbox reads (%d): the fields it does not know are not shown\n", rd->path,
		        rd->line, id, (long long)log->sandboxes[sb].schema, GS_AUDIT_SCHEMA);
	check_chain(&log->sandboxes[sb], text, len, o, r);
	if (log->sink)
		log->sink(log, r, log->sink_ctx);
	else if (log->keep && !log->keep(r) && !r->refusal)
		log->n--;   /* the last record added: its sandbox and chain are counted */
	return NULL;
}

static void read_record(struct reader *rd, const char *text, size_t len)
{
	json_object *o;
	const char *why;

	json_tokener_reset(rd->tok);
	o = json_tokener_parse_ex(rd->tok, text, (int)len);
	if (!o || json_tokener_get_error(rd->tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(rd->tok) != len || !json_object_is_type(o, json_type_object)) {
		malformed(rd, len && text[len - 1] != '}' ? "not a JSON record (cut short)"
		                                          : "not a JSON record");
		json_object_put(o);
		return;
	}
	why = take_record(rd, o, text, len);
	if (why)
		malformed(rd, why);
	json_object_put(o);
}

static void read_stream(struct reader *rd, FILE *f, char *buf)
{
	enum gs_audit_line kind;
	size_t len;

	while ((kind = gs_audit_read_line(f, buf, &len)) != GS_LINE_EOF) {
		rd->line++;
		if (kind == GS_LINE_OVERLONG)
			malformed(rd, "a line longer than any record (" GS_AUDIT_LINE_MAX_TEXT ")");
		else if (kind == GS_LINE_UNENDED)
			malformed(rd, "the last line has no end: the log was cut short");
		else if (len)
			read_record(rd, buf, len);
	}
	if (ferror(f)) {
		fprintf(stderr, "gpusandbox audit: %s: read error\n", rd->path);
		rd->log->unreadable = true;
	}
}

int review_read(struct review_log *log, const char *const *files, unsigned n_files)
{
	struct reader rd = { .log = log };
	char *buf = malloc(GS_AUDIT_LINE_MAX);

	rd.tok = json_tokener_new_ex(REVIEW_JSON_DEPTH);
	if (!buf || !rd.tok || gs_idmap_init(&log->ids, sandbox_id, log) < 0 ||
	    review_pool_init(&log->pool) < 0) {
		free(buf);
		if (rd.tok)
			json_tokener_free(rd.tok);
		return -1;
	}
	json_tokener_set_flags(rd.tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	log->files = files;
	for (unsigned i = 0; i < n_files; i++) {
		bool std_in = strcmp(files[i], "-") == 0;
		FILE *f = std_in ? stdin : fopen(files[i], "re");

		if (!f) {
			fprintf(stderr, "gpusandbox audit: cannot open '%s': %m\n", files[i]);
			log->unreadable = true;
			continue;
		}
		rd.path = std_in ? "(stdin)" : files[i];
		rd.file = i;
		rd.line = 0;
		rd.malformed_here = 0;
		read_stream(&rd, f, buf);
		if (rd.malformed_here > MALFORMED_SHOWN)
			fprintf(stderr, "gpusandbox audit: %s: %lu more malformed lines not shown\n", rd.path,
			        rd.malformed_here - MALFORMED_SHOWN);
		if (!std_in)
			fclose(f);
	}
	json_tokener_free(rd.tok);
	free(buf);
	return 0;
}

void review_free(struct review_log *log)
{
	for (size_t i = 0; i < log->n_sandboxes; i++)
		if (log->sandboxes[i].gpus != &review_gpus_unset)
			free((struct review_gpus *)log->sandboxes[i].gpus);
	review_pool_free(&log->pool);
	free(log->recs);
	free(log->sandboxes);
	gs_idmap_free(&log->ids);
	memset(log, 0, sizeof(*log));
}

static int by_time(const void *a, const void *b)
{
	const struct review_rec *x = a, *y = b;

	if (x->time_us != INT64_MIN && y->time_us != INT64_MIN && x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void review_sort(struct review_log *log)
{
	/* A record of unknown time takes the time of the one read before it,
	 * for sorting only, so it stays beside its neighbours. */
	int64_t last = INT64_MIN;
	for (size_t i = 0; i < log->n; i++) {
		if (log->recs[i].time_us == INT64_MIN && last != INT64_MIN)
			log->recs[i].time_us = last;
		last = log->recs[i].time_us;
	}
	if (log->n)   /* recs is NULL for an empty log: qsort wants a pointer */
		qsort(log->recs, log->n, sizeof(*log->recs), by_time);
}

static const struct review_log *link_log;   /* qsort has no context argument */

static int by_sandbox_seq(const void *a, const void *b)
{
	const struct review_rec *x = &link_log->recs[*(const size_t *)a];
	const struct review_rec *y = &link_log->recs[*(const size_t *)b];

	if (x->sandbox != y->sandbox)
		return x->sandbox < y->sandbox ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void copy_repeated(struct review_rec *s, const struct review_rec *r)
{
	s->gpu = r->gpu;
	s->comm = r->comm;
	if (!s->resource[0])
		s->resource = r->resource;
	if (!s->object[0] || strncmp(s->object, "0x", 2) == 0) {
		s->object = r->object;
		s->kind = r->kind;
	}
	s->size = r->size;
	s->usage_before = r->usage_before;
	s->quota = r->quota;
	s->group = r->group;
	s->stack = r->stack;
}

/* The decisions sorted by sandbox and seq, searched once per suppressed
 * record: a hostile log of many of both stays n log n. */
void review_link_suppressed(struct review_log *log)
{
	size_t *idx = malloc((log->n ? log->n : 1) * sizeof(*idx)), n = 0;

	if (!idx)
		return;   /* the suppressed records keep what they say themselves */
	for (size_t i = 0; i < log->n; i++)
		if (log->recs[i].event == REVIEW_EV_DECISION && log->recs[i].seq != REVIEW_UNSET)
			idx[n++] = i;
	link_log = log;
	qsort(idx, n, sizeof(*idx), by_sandbox_seq);
	for (size_t i = 0; i < log->n; i++) {
		struct review_rec *s = &log->recs[i];
		size_t lo = 0, hi = n;
		if (s->event != REVIEW_EV_SUPPRESSED || s->first_seq == REVIEW_UNSET)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct review_rec *r = &log->recs[idx[mid]];
			if (r->sandbox < s->sandbox || (r->sandbox == s->sandbox && r->seq < s->first_seq))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && log->recs[idx[lo]].sandbox == s->sandbox &&
		    log->recs[idx[lo]].seq == s->first_seq)
			copy_repeated(s, &log->recs[idx[lo]]);
	}
	free(idx);
}
