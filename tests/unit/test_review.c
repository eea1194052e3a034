/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the review tool's pure pieces (review.h): the times
 * --since and --until take, the cleaning of text a workload chose before
 * a view prints it, and the fix the denials view names for a refusal.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "check.h"
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
}

static void init_sandbox(struct review_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	for (unsigned g = 0; g < REVIEW_GPUS; g++)
		sb->mem_gpu[g] = REVIEW_UNSET;
	strcpy(sb->groups, "compute,memory,monitoring");
}

static void test_fixes(void)
{
	struct review_sandbox sb;
	struct review_rec r = { .gpu = 0 };
	char fix[256];

	init_sandbox(&sb);
	strcpy(r.outcome, "quota");
	strcpy(r.resource, "vidmem");
	review_fix_text(&sb, &r, (5ull << 30) + 1, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --mem 6g (policy: mem = 6g)") == 0);
	review_fix_text(&sb, &r, 100ull << 20, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --mem 128m (policy: mem = 128m)") == 0);
	sb.mem_gpu[0] = 1ull << 30;
	review_fix_text(&sb, &r, 3ull << 30, fix, sizeof(fix));
	CHECK(strcmp(fix, "gpu.0.mem = 3g (policy file)") == 0);
	strcpy(r.resource, "channels");
	review_fix_text(&sb, &r, 9, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --channels 9 (policy: channels = 9)") == 0);
	strcpy(r.resource, "video.jpeg");
	review_fix_text(&sb, &r, 2, fix, sizeof(fix));
	CHECK(strcmp(fix, "video.jpeg = 2 (policy file)") == 0);
	/* Every quota kind's fix names its row's option, or its key. */
	strcpy(r.resource, "scheduled_channel_groups");
	review_fix_text(&sb, &r, 3, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --active-channel-groups 3 (policy: active-channel-groups = 3)") == 0);
	strcpy(r.resource, "clients");
	review_fix_text(&sb, &r, 4, fix, sizeof(fix));
	CHECK(strcmp(fix, "option --clients 4 (policy: clients = 4)") == 0);

	memset(&r, 0, sizeof(r));
	strcpy(r.outcome, "policy");
	strcpy(r.reason, "class not allowed by the policy");
	strcpy(r.kind, "class");
	strcpy(r.object, "NV04_DISPLAY_COMMON");
	strcpy(r.group, "graphics");
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strcmp(fix, "allow = compute,memory,monitoring,graphics (policy file; or "
	                  "allow.class = NV04_DISPLAY_COMMON for this one)") == 0);
	strcpy(r.group, "compute");   /* its group is allowed: only the entry */
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strcmp(fix, "allow.class = NV04_DISPLAY_COMMON (policy file)") == 0);
	strcpy(r.reason, "control unknown to gpusandbox");
	strcpy(r.kind, "control");
	strcpy(r.object, "0x2080014b");
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none: gpusandbox does not know control 0x2080014b", 49) == 0);
	strcpy(r.outcome, "device_full");
	review_fix_text(&sb, &r, 0, fix, sizeof(fix));
	CHECK(strncmp(fix, "none in gpusandbox: GPU 0 itself was full", 41) == 0);
}

int main(void)
{
	test_times();
	test_clean();
	test_fixes();
	return check_summary();
}
