/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the review tool's pure pieces (review.h): the times
 * --since and --until take, the cleaning of text a workload chose before
 * a view prints it, and the fix the denials view names for a refusal.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "idmap.h"
#include "review.h"

#define US 1000000ll
/* 2026-11-23T22:24:30Z */
#define T0 1795472670ll
#define NOW_US (T0 * US)
#define SMALL 8

static void test_times(void)
{
	static const struct {
		const char *in;
		enum review_time_kind kind;
		int64_t us;
	} ok[] = {
		{ "2026-11-23T22:24:30Z", REVIEW_TIME_ABS, T0 * US },
		{ "2026-11-23T22:24:30.5Z", REVIEW_TIME_ABS, T0 * US + US / 2 },
		{ "2026-11-23 22:24:30", REVIEW_TIME_ABS, T0 * US },
		{ "2026-11-23T23:24:30+01:00", REVIEW_TIME_ABS, T0 * US },
		{ "2026-11-23T22:24", REVIEW_TIME_ABS, (T0 - 30) * US },
		{ "2026-11-23", REVIEW_TIME_ABS, (T0 - 22 * 3600 - 24 * 60 - 30) * US },
		{ "1795472670", REVIEW_TIME_ABS, T0 * US },
		{ "@1795472670.25", REVIEW_TIME_ABS, T0 * US + US / 4 },
		{ "now", REVIEW_TIME_ABS, NOW_US },
		{ "-10m", REVIEW_TIME_ABS, NOW_US - 600 * US },
		{ "-1d", REVIEW_TIME_ABS, NOW_US - 86400 * US },
		{ "+30s", REVIEW_TIME_FROM_START, 30 * US },
		{ "+1.5m", REVIEW_TIME_FROM_START, 90 * US },
		/* Past what int64_t holds: as far as it goes, never wrapped. */
		{ "+1e9d", REVIEW_TIME_FROM_START, INT64_MAX },
		{ "-1e9d", REVIEW_TIME_ABS, NOW_US - INT64_MAX },
		{ "9999999999999", REVIEW_TIME_ABS, INT64_MAX },
	};
	static const char *const bad[] = {
		"", "yesterday", "2026-13-01", "2026-02-31", "2026-11-23T25:00", "2026-11-23T22:24:30Q",
		"-10x", "+", "@", "@-5", "1e400", "2026-11-23T22:24:30+24:00",
	};
	struct review_time t;

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(review_parse_time(ok[i].in, NOW_US, &t) == 0);
		CHECK(t.kind == ok[i].kind && t.us == ok[i].us);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(review_parse_time(bad[i], NOW_US, &t) < 0);
}

static void test_clean(void)
{
	static const struct { const char *in, *out; } v[] = {
		{ "python3", "python3" },
		{ "\x1b[31mred", "?[31mred" },
		{ "a\u202eb", "a?b" },           /* a bidi override */
		{ "a\u061cb", "a?b" },           /* the Arabic letter mark: a Bidi_Control too */
		{ "\u05d0\u05d1 1", "<U+05D0><U+05D1> 1" },   /* Hebrew: right to left */
		{ "x\u0627", "x<U+0627>" },      /* Arabic */
		{ "\xf0\x9e\xa4\x80", "<U+1E900>" },   /* Adlam, outside the BMP */
		{ "\u00e9\u4e2d", "\u00e9\u4e2d" },   /* left-to-right letters are kept */
		{ "\xc2\x9b" "2J", "?2J" },      /* C1 CSI */
		{ "\xff\xfe", "??" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "\xe2\x82", "??" },           /* a cut character */
		{ "a\nb\tc", "a b c" },
	};
	char buf[REVIEW_TEXT], small[SMALL];

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		review_clean(buf, sizeof(buf), v[i].in);
		CHECK(strcmp(buf, v[i].out) == 0);
	}
	review_clean(small, sizeof(small), "abcdefghij");
	CHECK(strcmp(small, "abcd...") == 0);
	/* A cut never splits a character: "é" is two bytes. */
	review_clean(small, sizeof(small), "abc\xc3\xa9\xc3\xa9\xc3\xa9");
	CHECK(strcmp(small, "abc...") == 0);
	review_clean(buf, sizeof(buf), NULL);
	CHECK(buf[0] == '\0');
	/* An escape is cut whole, never in its middle. */
	review_clean(small, sizeof(small), "a\u05d0");
	CHECK(strcmp(small, "a...") == 0);
}

static void init_sandbox(struct review_sandbox *sb, struct review_gpus *gpus)
{
	memset(sb, 0, sizeof(*sb));
	*gpus = review_gpus_unset;
	sb->gpus = gpus;
	sb->groups = "compute,memory,monitoring";
}

static void init_rec(struct review_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->event_name = r->comm = r->call = r->object = r->kind = r->verdict = r->outcome = "";
	r->status = r->resource = r->reason = r->group = r->stack = "";
}

static void test_fixes(void)
{
	struct review_sandbox sb;
	struct review_gpus gpus;
	struct review_rec r;
	char fix[256];

	init_sandbox(&sb, &gpus);
	init_rec(&r);
	r.outcome = "quota";
	r.resource = "vidmem";
	review_fix_text(&sb, &r, (5ull << 30) + 1, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --mem 6g (policy: mem = 6g)") == 0);
	review_fix_text(&sb, &r, 100ull << 20, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --mem 128m (policy: mem = 128m)") == 0);
	gpus.mem_gpu[0] = 1ull << 30;
	review_fix_text(&sb, &r, 3ull << 30, fix, sizeof(fix));
	CHECK(strcmp(fix, "gpu.0.mem = 3g (policy file)") == 0);
	r.resource = "channels";
	review_fix_text(&sb, &r, 9, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --channels 9 (policy: channels = 9)") == 0);
	r.resource = "video.jpeg";
	review_fix_text(&sb, &r, 2, fix, sizeof(fix));
	CHECK(strcmp(fix, "video.jpeg = 2 (policy file)") == 0);
	/* Every quota kind's fix names its row's option, or its key. */
	r.resource = "scheduled_channel_groups";
	review_fix_text(&sb, &r, 3, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --active-channel-groups 3 (policy: active-channel-groups = 3)") == 0);
	r.resource = "clients";
	review_fix_text(&sb, &r, 4, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --clients 4 (policy: clients = 4)") == 0);

	init_rec(&r);
	r.outcome = "policy";
	r.reason = "class not allowed by the policy";
	r.kind = "class";
	r.object = "NV04_DISPLAY_COMMON";
	r.group = "graphics";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strcmp(fix, "allow = compute,memory,monitoring,graphics (policy file; or "
	                  "allow.class = NV04_DISPLAY_COMMON for this one)") == 0);
	r.group = "compute";   /* its group is allowed: only the entry */
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strcmp(fix, "allow.class = NV04_DISPLAY_COMMON (policy file)") == 0);
	r.reason = "control unknown to gpusandbox";
	r.kind = "control";
	r.object = "0x2080014b";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none: gpusandbox does not know control 0x2080014b", 49) == 0);
	/* A bit-15 control has no row but a policy may name it; one with
	 * the administrator bit (0xc000) or a BinaryApi command may not. */
	r.object = "0x2080a618";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "allow.control = 0x2080a618 (policy file; opaque", 47) == 0);
	r.object = "0x2080e61b";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none: gpusandbox does not know control 0x2080e61b", 49) == 0);
	r.object = "0x20810110";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none: gpusandbox does not know control 0x20810110", 49) == 0);
	r.outcome = "device_full";
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none in gpusandbox: GPU 0 itself was full", 41) == 0);
}

/* SipHash-2-4's published vectors: key 00..0f, messages 00..(n-1). */
static void test_siphash(void)
{
	static const uint64_t key[GS_IDMAP_KEY_WORDS] = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
	static const struct { size_t len; uint64_t hash; } v[] = {
		{ 0, 0x726fdb47dd0e0e31ull }, { 1, 0x74f839c593dc67fdull },
		{ 8, 0x93f5f5799a932462ull }, { 15, 0xa129ca6149be45e5ull },
	};
	uint8_t msg[16];

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(gs_siphash24(key, msg, v[i].len) == v[i].hash);
}

/* Hash flooding (issue #32): ids chosen to collide under the readers' old
 * fixed FNV-1a hash. Judged by the probes a lookup walks, not the clock. */
#define FLOOD_IDS 2000u
#define FLOOD_BITS 12u               /* the table's size for FLOOD_IDS at half load */
#define FLOOD_ID_LEN 24
#define FLOOD_PROBE_BOUND 64u        /* a keyed table's longest run, with huge margin */
#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

static char flood[FLOOD_IDS][FLOOD_ID_LEN];

static const char *flood_id(const void *ctx, uint32_t i)
{
	(void)ctx;
	return flood[i];
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = FNV_OFFSET;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * FNV_PRIME;
	return h;
}

/* FLOOD_IDS ids whose FNV-1a agrees in the low FLOOD_BITS bits: the
 * bucket of every one of them in the old tables. */
static void make_flood(void)
{
	uint32_t want = fnv1a("a0") & ((1u << FLOOD_BITS) - 1);
	unsigned n = 0;

	for (unsigned long k = 0; n < FLOOD_IDS; k++) {
		char id[FLOOD_ID_LEN];
		snprintf(id, sizeof(id), "a%lu", k);
		if ((fnv1a(id) & ((1u << FLOOD_BITS) - 1)) == want)
			memcpy(flood[n++], id, sizeof(id));
	}
}

/* Inserts the flood; returns the longest probe run seen. */
static size_t flood_probes(bool fixed_hash)
{
	struct gs_idmap m;
	bool added;
	size_t worst;

	CHECK(gs_idmap_init(&m, flood_id, NULL) == 0);
	m.fixed_hash = fixed_hash;
	for (uint32_t i = 0; i < FLOOD_IDS; i++)
		CHECK(gs_idmap_get_or_add(&m, flood[i], i, &added) == (long)i && added);
	for (uint32_t i = 0; i < FLOOD_IDS; i++)
		CHECK(gs_idmap_get_or_add(&m, flood[i], FLOOD_IDS, &added) == (long)i && !added);
	CHECK(gs_idmap_find(&m, "not-there") == -1);
	CHECK(m.n == FLOOD_IDS && m.cap == 1u << FLOOD_BITS);
	worst = m.max_probe;
	gs_idmap_free(&m);
	return worst;
}

static void test_hash_flood(void)
{
	struct gs_idmap a, b;
	size_t fixed, keyed;
	unsigned same = 0;

	make_flood();
	/* Baseline: under the old hash every id walks past all before it. */
	fixed = flood_probes(true);
	CHECK(fixed >= FLOOD_IDS);
	keyed = flood_probes(false);
	printf("hash flood of %u ids: longest probe run %zu with the old fixed hash, %zu keyed\n",
	       FLOOD_IDS, fixed, keyed);
	CHECK(keyed <= FLOOD_PROBE_BOUND);
	/* Two maps draw two keys: the same ids land apart. */
	CHECK(gs_idmap_init(&a, flood_id, NULL) == 0 && gs_idmap_init(&b, flood_id, NULL) == 0);
	CHECK(memcmp(a.key, b.key, sizeof(a.key)) != 0);
	for (unsigned i = 0; i + 1 < FLOOD_IDS; i++)
		same += (gs_siphash24(a.key, flood[i], strlen(flood[i])) & ((1u << FLOOD_BITS) - 1)) ==
		        (gs_siphash24(a.key, flood[i + 1], strlen(flood[i + 1])) & ((1u << FLOOD_BITS) - 1));
	CHECK(same < FLOOD_IDS / 2);
}

/* Each distinct text is kept once: equal texts share one copy. */
static void test_pool(void)
{
	struct review_pool pool;
	const char *a, *b, *c;
	char text[SMALL];

	CHECK(review_pool_init(&pool) == 0);
	snprintf(text, sizeof(text), "%s", "python3");
	a = review_intern(&pool, text);
	snprintf(text, sizeof(text), "%s", "other");   /* the pool's copy, not the caller's */
	b = review_intern(&pool, "python3");
	c = review_intern(&pool, text);
	CHECK(a && b && c && a == b && a != c && strcmp(a, "python3") == 0 && strcmp(c, "other") == 0);
	CHECK(pool.n == 2);
	CHECK(review_intern(&pool, "")[0] == '\0' && review_intern(&pool, NULL)[0] == '\0' && pool.n == 2);
	review_pool_free(&pool);
}

int main(void)
{
	test_pool();
	test_siphash();
	test_hash_flood();
	test_times();
	test_clean();
	test_fixes();
	return check_summary();
}
