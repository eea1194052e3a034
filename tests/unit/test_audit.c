/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the audit log's pieces: SHA-256 against the FIPS 180-2
 * example vectors, the UTF-8 cleaning of workload-named text, the record
 * of an errno the C library has no name for (issue #17 item 12: a SIGSEGV),
 * a thread named with bytes 0xff 0xfe (item 6: invalid JSON), --audit-fd's
 * checks, and a log written here verifying, and failing once edited.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "audit.h"
#include "driver.h"
#include "metrics.h"
#include "nvrm/rm_abi.h"
#include "audit_verify.h"
#include "review.h"
#include "check.h"
#include "sha256.h"
#include "utf8.h"

#define LINE_MAX_BYTES 4096
#define MILLION 1000000u
/* An errno glibc has no name for (it names up to EHWPOISON, 133). */
#define UNNAMED_ERRNO 200
/* A byte inside the first record's "time" value: {"time":"2026-... */
#define EDIT_OFFSET 30

static void test_sha256(void)
{
	static const struct { const char *in, *hex; } v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	char hex[GS_SHA256_HEX];
	struct gs_sha256 s;
	uint8_t d[GS_SHA256_BYTES];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		gs_sha256_hex(v[i].in, strlen(v[i].in), hex);
		CHECK(strcmp(hex, v[i].hex) == 0);
	}
	/* One million 'a', fed in uneven pieces across block boundaries. */
	gs_sha256_init(&s);
	for (unsigned n = 0, step = 1; n < MILLION; n += step, step = step % 97 + 1) {
		char a[128];
		unsigned k = n + step > MILLION ? MILLION - n : step;
		memset(a, 'a', k);
		gs_sha256_update(&s, a, k);
	}
	gs_sha256_final(&s, d);
	CHECK(d[0] == 0xcd && d[1] == 0xc7 && d[2] == 0x6e && d[31] == 0xd0);
}

static void test_utf8(void)
{
	static const struct { const char *in, *out; } v[] = {
		{ "plain", "plain" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* overlong "/" */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* a surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* > U+10FFFF */
		{ "a\xe2\x82", "a\xef\xbf\xbd\xef\xbf\xbd" },               /* cut short */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *c = gs_utf8_clean(v[i].in);
		CHECK(c && strcmp(c, v[i].out) == 0);
		CHECK(c && gs_utf8_valid(c, strlen(c)));
		CHECK(gs_utf8_valid(v[i].in, strlen(v[i].in)) == (strcmp(v[i].in, v[i].out) == 0));
		free(c);
	}
}

/* Every line of path a strict JSON object in valid UTF-8; returns the
 * number of lines, or -1. */
static int strict_lines(const char *path, json_object **decision)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fopen(path, "re");
	json_tokener *tok = json_tokener_new();
	int n = 0;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	while (f && fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");
		json_object *o;
		json_object *ev;
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, line, (int)len);
		if (!o || json_tokener_get_error(tok) != json_tokener_success || strstr(line, "\\/")) {
			n = -1;
			break;
		}
		n++;
		if (json_object_object_get_ex(o, "event", &ev) &&
		    strcmp(json_object_get_string(ev), "decision") == 0 && !*decision)
			*decision = json_object_get(o);
		json_object_put(o);
	}
	json_tokener_free(tok);
	if (f)
		fclose(f);
	return n;
}

static int run_verify(const char *path)
{
	char *argv[] = { "audit", "verify", (char *)path, NULL };
	int saved = dup(STDERR_FILENO), quiet = open("/dev/null", O_WRONLY | O_CLOEXEC), rc;

	/* The verifier's messages are its business; the status is ours. */
	dup2(quiet, STDERR_FILENO);
	rc = gs_audit_command(3, argv);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(quiet);
	return rc;
}

static void test_hostile_record(void)
{
	char path[] = "/tmp/gs-test-audit-XXXXXX";
	struct gs_audit a = { .fd = -1 };
	struct gs_error err = { 0 };
	struct gs_decision d = { .call = "RM_ALLOC", .gpu = -1, .verdict = GS_VERDICT_ALLOW,
	                         .errnum = UNNAMED_ERRNO, .reason = "a/b" };
	char *argv[] = { "work\xff", "--x=/y", NULL };
	char old_name[16] = { 0 };
	json_object *dec = NULL, *f;
	int tmp = mkstemp(path);

	CHECK(tmp >= 0);
	close(tmp);
	unlink(path);
	CHECK(gs_audit_open(&a, path, "0123456789abcdef", &err) == 0);
	prctl(PR_GET_NAME, old_name);
	prctl(PR_SET_NAME, "\xff\xfe\x01name");
	d.pid = getpid();
	d.tid = gettid();
	/* No driver here: the newest tables, as a run without one takes. */
	struct gs_driver drv = { .present = false, .rm_abi = gs_rm_abi_default() };
	struct gs_quota q;
	gs_quota_init(&q);
	const struct gs_audit_start start = {
		.child = getpid(), .argv = argv, .quota = &q, .rules = gs_rules_builtin(), .driver = &drv,
	};
	CHECK(gs_audit_start(&a, &start) == 0);
	CHECK(gs_audit_decision(&a, &d) == 0);
	prctl(PR_SET_NAME, old_name);
	gs_audit_close(&a);
	CHECK(strict_lines(path, &dec) == 3);
	CHECK(dec && json_object_object_get_ex(dec, "comm", &f) &&
	      strcmp(json_object_get_string(f), "\xef\xbf\xbd\xef\xbf\xbd\x01name") == 0);
	CHECK(dec && json_object_object_get_ex(dec, "errno", &f) &&
	      strcmp(json_object_get_string(f), "200") == 0);
	json_object_put(dec);
	CHECK(run_verify(path) == GS_AUDIT_VERIFIED);
	/* One digit of the first record's time changed (to another digit,
	 * whatever it was): the verifier must say no. */
	{
		FILE *fp = fopen(path, "r+e");
		int was = fp && fseek(fp, EDIT_OFFSET, SEEK_SET) == 0 ? fgetc(fp) : EOF;
		CHECK(was >= '0' && was <= '9');
		CHECK(fp && fseek(fp, EDIT_OFFSET, SEEK_SET) == 0 && fputc(was == '0' ? '1' : '0', fp) != EOF);
		if (fp)
			fclose(fp);
	}
	CHECK(run_verify(path) == GS_AUDIT_BROKEN);
	unlink(path);
}

static void test_audit_fd(void)
{
	struct gs_audit a = { .fd = -1 };
	struct gs_error err = { 0 };
	int fd = -1, ro = open("/dev/null", O_RDONLY | O_CLOEXEC), wo;

	CHECK(gs_parse_audit_fd("3", &fd) == 0 && fd == 3);
	CHECK(gs_parse_audit_fd("2", &fd) < 0 && gs_parse_audit_fd("0", &fd) < 0);
	CHECK(gs_parse_audit_fd("-4", &fd) < 0 && gs_parse_audit_fd("4x", &fd) < 0);
	CHECK(gs_parse_audit_fd("", &fd) < 0 && gs_parse_audit_fd("99999999999", &fd) < 0);
	CHECK(gs_audit_open_fd(&a, 1, "x", &err) < 0);
	CHECK(gs_audit_open_fd(&a, 1000, "x", &err) < 0);   /* not open */
	CHECK(gs_audit_open_fd(&a, ro, "x", &err) < 0);     /* not for writing */
	close(ro);
	wo = open("/dev/null", O_WRONLY);
	CHECK(wo > STDERR_FILENO && gs_audit_open_fd(&a, wo, "x", &err) == 0);
	/* Moved to a close-on-exec descriptor, the number given closed. */
	CHECK(fcntl(wo, F_GETFD) < 0 || a.fd == wo);
	CHECK(a.fd > STDERR_FILENO && (fcntl(a.fd, F_GETFD) & FD_CLOEXEC));
	gs_audit_close(&a);
}

/* outcome beside the verdict: a quota's refusal and a full GPU differ. */
static void test_outcome(void)
{
	struct gs_decision d = { .verdict = GS_VERDICT_ALLOW, .has_status = true, .status = NV_OK };

	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_OK);
	d.status = NV_ERR_NO_MEMORY;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_DEVICE_FULL);
	CHECK(strcmp(gs_outcome_name(GS_OUTCOME_DEVICE_FULL), "device_full") == 0);
	d.status = NV_ERR_INVALID_ARGUMENT;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_DRIVER);
	/* Answered by a configured mode (p2p-register none): not the driver's
	 * failure, and not a refusal. */
	d.answered = true;
	d.status = NV_ERR_NOT_SUPPORTED;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_ANSWERED);
	CHECK(!gs_outcome_is_refusal(GS_OUTCOME_ANSWERED));
	CHECK(strcmp(gs_outcome_name(GS_OUTCOME_ANSWERED), "answered") == 0);
	d.answered = false;
	d.has_status = false;
	d.errnum = 22;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_DRIVER);
	d.status = NV_ERR_NO_MEMORY;
	d.has_status = true;
	d.verdict = GS_VERDICT_DENY;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_QUOTA);
	d.verdict = GS_VERDICT_REFUSE;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_POLICY);
	d.verdict = GS_VERDICT_RELEASE;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_RELEASED);
	d.verdict = GS_VERDICT_CONTINUE;
	CHECK(gs_decision_outcome(&d) == GS_OUTCOME_CONTINUED);
}

/* --label: keys of one shape, values of readable UTF-8, no key twice. */
static void test_labels(void)
{
	struct gs_audit_labels l = { 0 };
	const char *why = NULL;
	char key[GS_LABEL_KEY_MAX + 8];

	CHECK(gs_audit_label_add(&l, "team=ml", &why) == 0);
	CHECK(gs_audit_label_add(&l, "run.id-2_x=\xc3\xa9 t", &why) == 0);
	CHECK(gs_audit_label_add(&l, "empty=", &why) == 0 && l.n == 3 && !l.value[2][0]);
	CHECK(gs_audit_label_add(&l, "team=other", &why) < 0 && strstr(why, "twice"));
	CHECK(gs_audit_label_add(&l, "Team=x", &why) < 0);
	CHECK(gs_audit_label_add(&l, "1x=x", &why) < 0);
	CHECK(gs_audit_label_add(&l, "a b=x", &why) < 0);
	CHECK(gs_audit_label_add(&l, "novalue", &why) < 0);
	CHECK(gs_audit_label_add(&l, "=x", &why) < 0);
	CHECK(gs_audit_label_add(&l, "k=\xff", &why) < 0 && strstr(why, "UTF-8"));
	CHECK(gs_audit_label_add(&l, "k=a\nb", &why) < 0);
	memset(key, 'a', sizeof(key));
	snprintf(key + GS_LABEL_KEY_MAX - 1, 8, "=v");   /* a 63-byte key */
	CHECK(gs_audit_label_add(&l, key, &why) == 0);
	snprintf(key + GS_LABEL_KEY_MAX, 8, "=v");       /* 64 bytes: too long */
	key[GS_LABEL_KEY_MAX - 1] = 'a';
	CHECK(gs_audit_label_add(&l, key, &why) < 0);
	for (unsigned i = l.n; i < GS_LABELS_MAX; i++) {
		snprintf(key, sizeof(key), "k%u=v", i);
		CHECK(gs_audit_label_add(&l, key, &why) == 0);
	}
	CHECK(gs_audit_label_add(&l, "last=v", &why) < 0 && strstr(why, "16"));
}

/* The start record's policy names every limit, per GPU. */
static void test_policy_json(void)
{
	struct gs_quota q;
	struct gs_rules r;
	json_object *o, *f, *g;

	gs_quota_init(&q);
	gs_rules_default(&r);
	q.mem_per_gpu = 1ull << 30;
	q.mem_gpu[3] = 2ull << 30;
	q.channels = 8;
	q.engines[GS_ENGINE_NVDEC] = 0;
	q.visible_set = true;
	q.visible = 0x9;
	q.sm_percent = 50;
	q.sm_period_ms = 20;
	o = gs_audit_policy_json(&q, &r);
	CHECK(json_object_object_get_ex(o, "mem", &f) && json_object_get_uint64(f) == 1ull << 30);
	CHECK(json_object_object_get_ex(o, "mem_gpu", &f) && json_object_object_get_ex(f, "3", &g) &&
	      json_object_get_uint64(g) == 2ull << 30 && json_object_object_length(f) == 1);
	CHECK(json_object_object_get_ex(o, "channels", &f) && json_object_get_int(f) == 8);
	/* The default cap is a limit like any other; "unlimited" is null. */
	CHECK(json_object_object_get_ex(o, "channel_groups", &f) &&
	      json_object_get_int(f) == (int)GS_DEFAULT_CHANNEL_GROUPS);
	CHECK(json_object_object_get_ex(o, "active_channel_groups", &f) && f == NULL);
	CHECK(json_object_object_get_ex(o, "engines", &f) &&
	      json_object_object_get_ex(f, "video.decoders", &g) && g && json_object_get_int(g) == 0);
	CHECK(json_object_object_get_ex(o, "gpus", &f) && json_object_array_length(f) == 2 &&
	      json_object_get_int(json_object_array_get_idx(f, 1)) == 3);
	CHECK(json_object_object_get_ex(o, "groups", &f) && json_object_array_length(f) == 3);
	CHECK(json_object_object_get_ex(o, "sm", &f) && json_object_object_get_ex(f, "period_ms", &g) &&
	      json_object_get_int(g) == 20);
	json_object_put(o);
}

/* Counts a log's records by event, and sums the suppressed counts. */
static void count_events(const char *path, unsigned *decisions, unsigned *suppressed,
                         uint64_t *folded)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fopen(path, "re");

	*decisions = *suppressed = 0;
	*folded = 0;
	while (f && fgets(line, sizeof(line), f)) {
		json_object *o = json_tokener_parse(line), *ev, *n;
		if (!o || !json_object_object_get_ex(o, "event", &ev)) {
			json_object_put(o);
			continue;
		}
		if (strcmp(json_object_get_string(ev), "decision") == 0)
			(*decisions)++;
		if (strcmp(json_object_get_string(ev), "suppressed") == 0 &&
		    json_object_object_get_ex(o, "count", &n)) {
			(*suppressed)++;
			*folded += json_object_get_uint64(n);
		}
		json_object_put(o);
	}
	if (f)
		fclose(f);
}

#define REPEAT_TRIES 10u
#define WINDOW_PASSED_US 1100000u

/* Repeated refusals: two processes retrying side by side are each one
 * record and one count; more keys than runs end the oldest run early; a
 * repeat after the window is written again; nothing is lost; the chain
 * verifies. */
static void test_repeats(void)
{
	char path[] = "/tmp/gs-test-repeats-XXXXXX";
	struct gs_audit a;
	struct gs_error err = { 0 };
	struct gs_decision d = { .call = "RM_ALLOC", .has_class = true, .cls = 0x40,
	                         .verdict = GS_VERDICT_DENY, .reason = "video memory quota exceeded",
	                         .tid = gettid(), .gpu = -1 };
	unsigned dec, sup;
	uint64_t folded;
	int tmp = mkstemp(path);

	CHECK(tmp >= 0);
	close(tmp);
	unlink(path);
	CHECK(gs_audit_open(&a, path, "00000000000000aa", &err) == 0);
	for (unsigned i = 0; i < REPEAT_TRIES; i++) {
		d.pid = 100;
		CHECK(gs_audit_decision(&a, &d) == 0);
		d.pid = 200;
		CHECK(gs_audit_decision(&a, &d) == 0);
	}
	/* GS_AUDIT_REPEAT_RUNS more keys: the two runs above are ended. */
	for (unsigned i = 0; i < GS_AUDIT_REPEAT_RUNS; i++) {
		d.pid = (pid_t)(300 + i);
		CHECK(gs_audit_decision(&a, &d) == 0);
	}
	count_events(path, &dec, &sup, &folded);
	CHECK(dec == 2 + GS_AUDIT_REPEAT_RUNS && sup == 2 && folded == 2 * (REPEAT_TRIES - 1));
	/* After the window, the same refusal is a record again. */
	usleep(WINDOW_PASSED_US);
	d.pid = 300;
	CHECK(gs_audit_decision(&a, &d) == 0);
	CHECK(gs_audit_decision(&a, &d) == 0);
	gs_audit_close(&a);
	count_events(path, &dec, &sup, &folded);
	CHECK(dec == 3 + GS_AUDIT_REPEAT_RUNS && sup == 3 && folded == 2 * (REPEAT_TRIES - 1) + 1);
	CHECK(run_verify(path) == GS_AUDIT_VERIFIED);
	unlink(path);
}

/* Metrics label values are the exposition's escapes of valid UTF-8:
 * backslash, double quote and newline escaped, a stray byte U+FFFD; the
 * file is replaced whole (no temporary left). */
static void test_metrics_labels(void)
{
	static struct gs_metrics_snap s;
	char dir[] = "/tmp/gs-metrics-XXXXXX", path[64], tmp[80];
	struct gs_error err = { 0 };
	char *text;

	snprintf(s.sandbox, sizeof(s.sandbox), "0123456789abcdef");
	snprintf(s.container, sizeof(s.container), "a\"b\\c\nd\xff");
	s.n_gpus = 1;
	s.quota[0] = GS_QUOTA_UNLIMITED;
	s.refusals.n_kinds = 1;
	s.refusals.kind[0].outcome = GS_OUTCOME_POLICY;
	s.refusals.kind[0].n = 3;
	snprintf(s.refusals.kind[0].reason, sizeof(s.refusals.kind[0].reason), "say \"no\"");
	text = gs_metrics_text(&s, 1);
	CHECK(text && strstr(text, "container=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",pod=\"\",namespace=\"\","
	                           "container_name=\"\"} 1\n"));
	CHECK(text && strstr(text, "outcome=\"policy\",reason=\"say \\\"no\\\"\"} 3\n"));
	CHECK(text && !strstr(text, "gpusandbox_memory_quota_bytes{")); /* no quota: no sample */
	free(text);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(gs_metrics_write(path, &s, 1, &err) == 0);
	CHECK(access(path, R_OK) == 0 && access(tmp, F_OK) < 0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_metrics_labels();
	test_repeats();
	test_outcome();
	test_labels();
	test_policy_json();
	test_sha256();
	test_utf8();
	test_hostile_record();
	test_audit_fd();
	return check_summary();
}
