/* SPDX-License-Identifier: MIT */
/*
 * audit_verify.c - `gpusandbox audit verify [--head HASH]... FILE...`.
 *
 * Checks every sandbox's hash chain in the given logs (read in the order
 * given, as one stream, so a rotated log is checked across its files):
 * each line a strict JSON object in valid UTF-8; its "hash" the SHA-256 of
 * its own text up to that key; its "seq" one more than the sandbox's
 * record before it and its "prev" that record's hash; the first record of
 * a sandbox numbered 0 with no predecessor; nothing after the "seal"; and
 * a seal at the end. Every problem is reported with its file, line,
 * sandbox and record, and the reading goes on from the record found, so
 * one edit gives one message, not a cascade.
 *
 * What the chain cannot show, a log rewritten whole with a new valid
 * chain, --head catches: the seal's hash that the supervisor printed on
 * stderr when it closed the log.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "audit_verify.h"
#include "gpusandbox.h"
#include "idmap.h"
#include "sha256.h"
#include "utf8.h"

#define SANDBOX_MAX 64
/* The records that end a rotated file and begin the next (audit_rotate.h). */
#define EVENT_ROTATE "rotate"
#define EVENT_CONTINUED "continued"
#define MAX_HEADS 16
/* ,"hash":"<64 hex>"} closes every record. */
#define HASH_KEY ",\"hash\":\""
#define HASH_KEY_LEN (sizeof(HASH_KEY) - 1)
#define HASH_HEX_LEN (GS_SHA256_HEX - 1)
#define SUFFIX_LEN (HASH_KEY_LEN + HASH_HEX_LEN + 2)   /* the closing "} */

struct chain {
	char     sandbox[SANDBOX_MAX + 1];
	uint64_t next_seq;
	char     prev[GS_SHA256_HEX];
	bool     sealed;
	/* Rotation (audit_rotate.h): the chain began with "continued" (its
	 * start is in an earlier file, at first_seq), and its last record is
	 * a "rotate" (it goes on in the next file). */
	bool     continued, rotated;
	uint64_t first_seq;
	const char *file;      /* where its last record was */
	unsigned long line;
};

struct verifier {
	struct chain *chains;
	size_t        n, cap;
	/* Chains by sandbox id: a hostile log may hold any number of
	 * sandboxes, and a linear search per record would make it quadratic. */
	struct gs_idmap ids;
	unsigned long problems, records;
	const char   *file;
	unsigned long line;
};

/* The fields of one record that the chain needs. */
struct record {
	const char *sandbox, *prev, *event;
	char        hash[GS_SHA256_HEX];
	uint64_t    seq;
	bool        has_records;
	uint64_t    records;    /* the seal's count */
	int64_t     schema;     /* 0: absent */
};

static const char usage_text[] =
	"Usage: gpusandbox audit verify [--head HASH]... FILE|DIR...\n"
	"Check the hash chain of every sandbox in the audit logs FILE... (read in\n"
	"order, as one log): no record edited, inserted, deleted, reordered or\n"
	"forged, and each chain sealed. A rotated log's files are given oldest\n"
	"first (NAME.jsonl.2 NAME.jsonl.1 NAME.jsonl), or as the DIR holding them:\n"
	"its *.jsonl logs are read in that order. --head HASH also requires a sandbox whose\n"
	"seal has that hash (the one gpusandbox printed when it closed the log),\n"
	"which a log rewritten whole cannot match.\n"
	"Exit status: 0 verified, 1 a chain does not verify, 2 usage or I/O error.\n";

static void problem(struct verifier *v, const char *sandbox, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct verifier *v, const char *sandbox, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%lu: ", v->file, v->line);
	if (sandbox)
		fprintf(stderr, "sandbox %s: ", sandbox);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	v->problems++;
}

static bool is_hex(const char *s, size_t len)
{
	return strspn(s, "0123456789abcdef") >= len;
}

/* Names we print (a sandbox id, an event) are plain words: a hostile log
 * must not put terminal controls into the messages. */
static bool is_word(const char *s)
{
	return s[0] && !s[strspn(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-")];
}

#define CHAINS_INITIAL 16u

static const char *chain_id(const void *ctx, uint32_t i)
{
	return ((const struct verifier *)ctx)->chains[i].sandbox;
}

/* The sandbox's chain, made on first sight; NULL when out of memory. The
 * index's hash is keyed at random (idmap.h): a hostile log cannot choose
 * ids that collide. */
static struct chain *chain_of(struct verifier *v, const char *sandbox)
{
	bool added;
	long i;

	if (!GS_ROOM_FOR_ONE(v->chains, v->n, v->cap, CHAINS_INITIAL))
		return NULL;
	i = gs_idmap_get_or_add(&v->ids, sandbox, (uint32_t)v->n, &added);
	if (i < 0)
		return NULL;
	if (added) {
		memset(&v->chains[v->n], 0, sizeof(v->chains[0]));
		snprintf(v->chains[v->n].sandbox, sizeof(v->chains[0].sandbox), "%s", sandbox);
		v->n++;
	}
	return &v->chains[i];
}

/* The record's own hash against its text: the suffix must be the last
 * thing on the line, and the SHA-256 of everything before it, closed with
 * "}", must be what it says. */
bool gs_audit_hash_matches(const char *text, size_t len, char claimed[GS_SHA256_HEX])
{
	struct gs_sha256 s;
	uint8_t d[GS_SHA256_BYTES];
	char hex[GS_SHA256_HEX];
	size_t body = len - SUFFIX_LEN;

	if (len <= SUFFIX_LEN || memcmp(text + body, HASH_KEY, HASH_KEY_LEN) != 0 ||
	    memcmp(text + len - 2, "\"}", 2) != 0 || !is_hex(text + body + HASH_KEY_LEN, HASH_HEX_LEN))
		return false;
	memcpy(claimed, text + body + HASH_KEY_LEN, HASH_HEX_LEN);
	claimed[HASH_HEX_LEN] = '\0';
	gs_sha256_init(&s);
	gs_sha256_update(&s, text, body);
	gs_sha256_update(&s, "}", 1);
	gs_sha256_final(&s, d);
	for (unsigned i = 0; i < GS_SHA256_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return strcmp(hex, claimed) == 0;
}

static const char *string_field(json_object *o, const char *key)
{
	json_object *f;

	return json_object_object_get_ex(o, key, &f) && json_object_is_type(f, json_type_string)
	               ? json_object_get_string(f)
	               : NULL;
}

static bool u64_field(json_object *o, const char *key, uint64_t *out)
{
	json_object *f;

	if (!json_object_object_get_ex(o, key, &f) || !json_object_is_type(f, json_type_int))
		return false;
	errno = 0;
	*out = json_object_get_uint64(f);
	return errno == 0 && json_object_get_int64(f) >= 0;
}

/* Reads the chain's fields; says which is missing or malformed. */
static const char *read_fields(json_object *o, struct record *r)
{
	uint64_t schema = 0;

	r->sandbox = string_field(o, "sandbox");
	r->prev = string_field(o, "prev");
	r->event = string_field(o, "event");
	if (!r->sandbox || !is_word(r->sandbox) || strlen(r->sandbox) > SANDBOX_MAX) {
		r->sandbox = NULL;
		return "no \"sandbox\" (or not a sandbox id)";
	}
	if (!u64_field(o, "seq", &r->seq))
		return "no \"seq\" number";
	if (!r->prev || strlen(r->prev) != HASH_HEX_LEN || !is_hex(r->prev, HASH_HEX_LEN))
		return "no \"prev\" hash";
	if (!r->event || !is_word(r->event))
		return "no \"event\" (or not a word)";
	r->has_records = u64_field(o, "records", &r->records);
	r->schema = u64_field(o, "schema", &schema) ? (int64_t)schema : 0;
	return NULL;
}

/* One parsed, self-consistent record against its sandbox's chain. */
static void check_chain(struct verifier *v, const struct record *r)
{
	struct chain *c = chain_of(v, r->sandbox);
	static const char zeros[GS_SHA256_HEX] = "0000000000000000000000000000000000000000000000000000000000000000";

	if (!c) {
		problem(v, r->sandbox, "out of memory");
		return;
	}
	bool continues = strcmp(r->event, EVENT_CONTINUED) == 0;

	if (c->file && continues != c->rotated)
		problem(v, r->sandbox, "record %llu (%s) %s", (unsigned long long)r->seq, r->event,
		        continues ? "where no file ended (no \"rotate\" before it)"
		                  : "after a \"rotate\": the next file's first record should be \"continued\"");
	if (!c->file && continues) {
		/* A rotated log's file: its chain began in the file before
		 * (given first, that file's "rotate" is linked below). */
		c->continued = true;
		c->first_seq = r->seq;
	} else if (!c->file && (r->seq != 0 || strcmp(r->prev, zeros) != 0))
		problem(v, r->sandbox, "the first record found is record %llu: %s",
		        (unsigned long long)r->seq,
		        "the records before it are missing (deleted or the log truncated at its start)");
	else if (c->sealed)
		problem(v, r->sandbox, "record %llu (%s) after the seal: added later",
		        (unsigned long long)r->seq, r->event);
	else if (c->file && r->seq != c->next_seq)
		problem(v, r->sandbox, "record %llu where record %llu should be: %s",
		        (unsigned long long)r->seq, (unsigned long long)c->next_seq,
		        r->seq > c->next_seq ? "records deleted" : "a record inserted, repeated or reordered");
	else if (c->file && strcmp(r->prev, c->prev) != 0)
		problem(v, r->sandbox, "record %llu does not follow record %llu (its \"prev\" is another "
		        "hash): inserted, reordered or forged", (unsigned long long)r->seq,
		        (unsigned long long)r->seq - 1);
	if (r->schema > GS_AUDIT_SCHEMA)
		problem(v, r->sandbox, "record %llu: schema %lld is newer than this gpusandbox reads (%d)",
		        (unsigned long long)r->seq, (long long)r->schema, GS_AUDIT_SCHEMA);
	if (strcmp(r->event, "seal") == 0 && (!r->has_records || r->records != r->seq))
		problem(v, r->sandbox, "seal at record %llu counts %s records", (unsigned long long)r->seq,
		        r->has_records ? "another number of" : "no");
	/* Go on from this record: one problem, one message. */
	c->next_seq = r->seq + 1;
	memcpy(c->prev, r->hash, sizeof(c->prev));
	c->sealed = c->sealed || strcmp(r->event, "seal") == 0;
	c->rotated = strcmp(r->event, EVENT_ROTATE) == 0;
	c->file = v->file;
	c->line = v->line;
}

static void verify_line(struct verifier *v, json_tokener *tok, const char *text, size_t len)
{
	struct record r = { 0 };
	json_object *o;
	const char *why;
	bool intact;

	if (!gs_utf8_valid(text, len)) {
		problem(v, NULL, "not valid UTF-8");
		return;
	}
	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len || !json_object_is_type(o, json_type_object)) {
		problem(v, NULL, "not a JSON record%s", len && text[len - 1] != '}' ? " (cut short)" : "");
		json_object_put(o);
		return;
	}
	v->records++;
	why = read_fields(o, &r);
	if (why) {
		problem(v, r.sandbox, "%s", why);
		json_object_put(o);
		return;
	}
	intact = gs_audit_hash_matches(text, len, r.hash);
	if (!intact)
		problem(v, r.sandbox, "record %llu (%s): its hash does not match its text: edited or forged",
		        (unsigned long long)r.seq, r.event);
	if (intact || r.hash[0])
		check_chain(v, &r);
	json_object_put(o);
}

enum gs_audit_line gs_audit_read_line(FILE *f, char *buf, size_t *len)
{
	bool overlong = false;
	int c;

	*len = 0;
	while ((c = getc_unlocked(f)) != EOF) {
		if (c == '\n')
			return overlong ? GS_LINE_OVERLONG : GS_LINE_RECORD;
		if (*len < GS_AUDIT_LINE_MAX)
			buf[(*len)++] = (char)c;
		else
			overlong = true;
	}
	if (overlong)
		return GS_LINE_OVERLONG;
	return *len ? GS_LINE_UNENDED : GS_LINE_EOF;
}

static int verify_file(struct verifier *v, const char *path, json_tokener *tok, char *buf)
{
	FILE *f = fopen(path, "re");
	enum gs_audit_line kind;
	size_t len;

	if (!f) {
		fprintf(stderr, "gpusandbox audit verify: cannot open '%s': %m\n", path);
		return -1;
	}
	v->file = path;
	v->line = 0;
	while ((kind = gs_audit_read_line(f, buf, &len)) != GS_LINE_EOF) {
		v->line++;
		if (kind == GS_LINE_OVERLONG)
			problem(v, NULL, "a line longer than any record (" GS_AUDIT_LINE_MAX_TEXT ")");
		else if (kind == GS_LINE_UNENDED)
			problem(v, NULL, "the last line has no end: the log was cut short");
		else
			verify_line(v, tok, buf, len);
	}
	fclose(f);
	return 0;
}

/* A directory given to verify: its logs, each rotated log's files oldest
 * first (NAME.jsonl.K down to NAME.jsonl.1, then NAME.jsonl), logs by
 * name. Other files are not read. */
#define LOG_SUFFIX ".jsonl"
#define ROTATED_MAX_DIGITS 9

/* NAME.jsonl -> 0, NAME.jsonl.K -> K (1..); -1 for any other name. The
 * base is the name up to and including ".jsonl" (base_len). */
static long rotation_number(const char *name, size_t *base_len)
{
	const char *at = NULL;

	for (const char *p = strstr(name, LOG_SUFFIX); p; p = strstr(p + 1, LOG_SUFFIX))
		at = p;
	if (!at)
		return -1;
	*base_len = (size_t)(at - name) + strlen(LOG_SUFFIX);
	const char *rest = name + *base_len;
	if (!rest[0])
		return 0;
	size_t digits = strspn(rest + 1, "0123456789");
	if (rest[0] != '.' || digits == 0 || digits > ROTATED_MAX_DIGITS || rest[1 + digits] || rest[1] == '0')
		return -1;
	return strtol(rest + 1, NULL, 10);
}

static int log_order(const struct dirent **x, const struct dirent **y)
{
	size_t bx, by;
	long kx = rotation_number((*x)->d_name, &bx), ky = rotation_number((*y)->d_name, &by);
	int base = strncmp((*x)->d_name, (*y)->d_name, bx < by ? bx : by);

	if (base || bx != by)
		return base ? base : (bx < by ? -1 : 1);
	/* Older first: the higher number, and the file written (0) last. */
	if (kx == 0 || ky == 0)
		return kx == ky ? 0 : (kx == 0 ? 1 : -1);
	return kx > ky ? -1 : (kx < ky ? 1 : 0);
}

static int is_log(const struct dirent *d)
{
	size_t base;

	return d->d_type != DT_DIR && rotation_number(d->d_name, &base) >= 0;
}

/* Verifies the logs of directory dir; -1 on an I/O error. */
static int verify_dir(struct verifier *v, const char *dir, json_tokener *tok, char *buf)
{
	struct dirent **names;
	char path[PATH_MAX];
	int n = scandir(dir, &names, is_log, log_order), rc = 0;

	if (n < 0) {
		fprintf(stderr, "gpusandbox audit verify: cannot read '%s': %m\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		/* The verifier keeps each chain's file name: one lives to the end. */
		char *kept = NULL;
		if (rc == 0 && snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) &&
		    (kept = strdup(path)) && verify_file(v, kept, tok, buf) < 0)
			rc = -1;
		else if (rc == 0 && !kept)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Every chain sealed, every --head a seal; prints the chains. */
static void check_ends(struct verifier *v, char *const *heads, unsigned n_heads)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct chain *c = &v->chains[i];
		if (c->continued)
			printf("sandbox %s: continues a chain begun in an earlier file (its first record "
			       "here is record %llu)\n", c->sandbox, (unsigned long long)c->first_seq);
		if (c->rotated) {
			printf("sandbox %s: %llu records, rotated: goes on in the next file, last hash %s\n",
			       c->sandbox, (unsigned long long)c->next_seq, c->prev);
			continue;
		}
		if (!c->sealed) {
			v->file = c->file;
			v->line = c->line;
			problem(v, c->sandbox, "no seal after record %llu: the log was truncated, or its "
			        "supervisor killed", (unsigned long long)c->next_seq - 1);
			continue;
		}
		printf("sandbox %s: %llu records, sealed, last hash %s\n", c->sandbox,
		       (unsigned long long)c->next_seq, c->prev);
	}
	for (unsigned h = 0; h < n_heads; h++) {
		bool found = false;
		for (size_t i = 0; i < v->n && !found; i++)
			found = v->chains[i].sealed && strcmp(v->chains[i].prev, heads[h]) == 0;
		if (!found) {
			fprintf(stderr, "gpusandbox audit verify: no sandbox is sealed with hash %s\n", heads[h]);
			v->problems++;
		}
	}
}

int gs_audit_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "head", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *heads[MAX_HEADS];
	unsigned n_heads = 0;
	struct verifier v = { 0 };
	json_tokener *tok;
	char *buf;
	int c, rc = GS_AUDIT_VERIFIED;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (c != 'H' || n_heads == MAX_HEADS || strlen(optarg) != HASH_HEX_LEN ||
		    !is_hex(optarg, HASH_HEX_LEN)) {
			fprintf(stderr, "gpusandbox audit verify: bad option or --head (64 lower-case hex "
			                "digits, at most %d)\n%s", MAX_HEADS, usage_text);
			return GS_AUDIT_USAGE;
		}
		heads[n_heads++] = optarg;
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return GS_AUDIT_USAGE;
	}
	tok = json_tokener_new();
	buf = malloc(GS_AUDIT_LINE_MAX);
	if (!tok || !buf || gs_idmap_init(&v.ids, chain_id, &v) < 0) {
		fprintf(stderr, "gpusandbox audit verify: out of memory\n");
		if (tok)
			json_tokener_free(tok);
		free(buf);
		return GS_AUDIT_USAGE;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	for (int i = optind; i < argc && rc == GS_AUDIT_VERIFIED; i++) {
		struct stat st;
		bool dir = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode);
		if ((dir ? verify_dir(&v, argv[i], tok, buf) : verify_file(&v, argv[i], tok, buf)) < 0)
			rc = GS_AUDIT_USAGE;
	}
	json_tokener_free(tok);
	free(buf);
	if (rc == GS_AUDIT_VERIFIED) {
		if (!v.records) {
			fprintf(stderr, "gpusandbox audit verify: no records\n");
			v.problems++;
		}
		check_ends(&v, heads, n_heads);
		rc = v.problems ? GS_AUDIT_BROKEN : GS_AUDIT_VERIFIED;
		if (v.problems)
			fprintf(stderr, "gpusandbox audit verify: %lu problem%s: the log is not intact\n",
			        v.problems, v.problems == 1 ? "" : "s");
		else
			printf("verified: %zu sandbox%s, %lu records\n", v.n, v.n == 1 ? "" : "es", v.records);
	}
	free(v.chains);
	gs_idmap_free(&v.ids);
	return rc;
}
