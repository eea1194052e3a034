/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - the metrics exposition holds one sample per (name,
 * label set), as a Prometheus client registry insists (and node_exporter's
 * textfile collector, which rejects the whole file otherwise): the
 * refusals of one reason on two GPUs, and kinds that differ only by what is
 * not a label (the limit), each checked by a parser that compares label
 * sets as sets. Also: the writer's own samples with no sandbox.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpusandbox.h"
#include "metrics.h"

#define MAX_SERIES 512
#define MAX_LABELS 16
#define KEY_LEN 1024

/* "name{b="2",a="1"}" -> "name|a="1"|b="2"": the labels sorted, so two
 * spellings of one label set compare equal. Returns 0, -1 if malformed. */
static int series_key(const char *line, size_t len, char *key, size_t keylen)
{
	char buf[KEY_LEN], *labels[MAX_LABELS];
	unsigned n = 0;
	size_t used;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	char *brace = strchr(buf, '{');
	if (brace) {
		char *end = strrchr(brace, '}'), *p = brace + 1;
		if (!end)
			return -1;
		*brace = *end = '\0';
		/* Split at commas outside quotes. */
		while (*p && n < MAX_LABELS) {
			bool quoted = false;
			labels[n++] = p;
			for (; *p && (quoted || *p != ','); p++) {
				if (*p == '\\' && p[1])
					p++;
				else if (*p == '"')
					quoted = !quoted;
			}
			if (*p)
				*p++ = '\0';
		}
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; j < n; j++)
				if (strcmp(labels[j], labels[i]) < 0) {
					char *x = labels[i];
					labels[i] = labels[j];
					labels[j] = x;
				}
	}
	used = (size_t)snprintf(key, keylen, "%s", buf);
	for (unsigned i = 0; i < n && used < keylen; i++)
		used += (size_t)snprintf(key + used, keylen - used, "|%s", labels[i]);
	return used < keylen ? 0 : -1;
}

/* Counts the (name, label set) pairs met more than once in text; -1 if a
 * sample line cannot be read. */
static int duplicate_series(const char *text)
{
	static char keys[MAX_SERIES][KEY_LEN];
	unsigned n = 0;
	int dups = 0;

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (line[0] != '#' && len > 0) {
			sp = memrchr(line, ' ', len);
			if (!sp || n >= MAX_SERIES || series_key(line, (size_t)(sp - line), keys[n], KEY_LEN) < 0)
				return -1;
			for (unsigned i = 0; i < n; i++)
				if (strcmp(keys[i], keys[n]) == 0) {
					fprintf(stderr, "  duplicate series: %s\n", keys[n]);
					dups++;
				}
			n++;
		}
		line = nl ? nl + 1 : NULL;
	}
	return dups;
}

static void refusal(struct gs_refusals *r, enum gs_outcome o, const char *reason, int gpu, uint64_t limit,
                    uint64_t n)
{
	struct gs_refusal_kind *k = &r->kind[r->n_kinds++];

	k->outcome = o;
	snprintf(k->reason, sizeof(k->reason), "%s", reason);
	k->gpu = gpu;
	k->limit = limit;
	k->n = n;
	r->total += n;
}

/* The parser itself: it finds a duplicate written in another label order. */
static void test_checker(void)
{
	CHECK(duplicate_series("# HELP x x\nx{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 2\n") == 1);
	CHECK(duplicate_series("x{a=\"1,\\\"\",b=\"2\"} 1\nx{a=\"1\",b=\"2\"} 2\n") == 0);
	CHECK(duplicate_series("x 1\nx 2\n") == 1);
}

/* The same refusal on GPUs 0 and 1 (what 8b5caf6 wrote twice with the
 * same labels), and two kinds on GPU 0 differing only by the limit. */
static void test_two_gpus(void)
{
	static struct gs_metrics_snap s[2];
	char *text;

	for (unsigned i = 0; i < 2; i++) {
		snprintf(s[i].sandbox, sizeof(s[i].sandbox), "%016x", i + 1);
		s[i].n_gpus = 2;
		s[i].quota[0] = s[i].quota[1] = GS_QUOTA_UNLIMITED;
		refusal(&s[i].refusals, GS_OUTCOME_QUOTA, "video memory quota exceeded", 0, 1 << 30, 2);
		refusal(&s[i].refusals, GS_OUTCOME_QUOTA, "video memory quota exceeded", 1, 1 << 30, 3);
		refusal(&s[i].refusals, GS_OUTCOME_QUOTA, "video memory quota exceeded", 0, 2u << 30, 4);
		refusal(&s[i].refusals, GS_OUTCOME_POLICY, "class not allowed", -1, 0, 1);
		/* GPU 1 named by UUID: its samples carry it. */
		snprintf(s[i].gpu_uuid[1], sizeof(s[i].gpu_uuid[1]), "GPU-00000000-0000-0000-0000-000000000001");
		s[i].used[1] = 5;
		s[i].refusals.other = 5;
	}
	text = gs_metrics_text(s, 2);
	CHECK(text != NULL);
	CHECK(text && duplicate_series(text) == 0);
	CHECK(text && strstr(text, "gpusandbox_refusals_total{sandbox=\"0000000000000001\",gpu=\"0\","
	                           "outcome=\"quota\",reason=\"video memory quota exceeded\"} 6\n"));
	CHECK(text && strstr(text, "gpusandbox_refusals_total{sandbox=\"0000000000000001\",gpu=\"1\","
	                           "uuid=\"GPU-00000000-0000-0000-0000-000000000001\","
	                           "outcome=\"quota\",reason=\"video memory quota exceeded\"} 3\n"));
	CHECK(text && strstr(text, "gpusandbox_memory_used_bytes{sandbox=\"0000000000000002\",gpu=\"1\","
	                           "uuid=\"GPU-00000000-0000-0000-0000-000000000001\"} 5\n"));
	CHECK(text && strstr(text, "gpusandbox_memory_used_bytes{sandbox=\"0000000000000002\",gpu=\"0\"} 0\n"));
	CHECK(text && strstr(text, "gpusandbox_refusals_total{sandbox=\"0000000000000002\","
	                           "outcome=\"policy\",reason=\"class not allowed\"} 1\n"));
	CHECK(text && strstr(text, "gpusandbox_refusals_total{sandbox=\"0000000000000002\","
	                           "outcome=\"other\",reason=\"other\"} 5\n"));
	free(text);
}

/* A container's pod names label its info sample, escaped as any label
 * value (a runtime's word: a quote in it must not end the value). */
static void test_pod_labels(void)
{
	static struct gs_metrics_snap s;
	char *text;

	snprintf(s.sandbox, sizeof(s.sandbox), "00000000000000aa");
	snprintf(s.container, sizeof(s.container), "ctr-1");
	snprintf(s.pod, sizeof(s.pod), "trainer-7f9c");
	snprintf(s.pod_namespace, sizeof(s.pod_namespace), "ml");
	snprintf(s.container_name, sizeof(s.container_name), "cu\"da");
	s.n_gpus = 1;
	text = gs_metrics_text(&s, 1);
	CHECK(text && strstr(text, "gpusandbox_sandbox_info{sandbox=\"00000000000000aa\",container=\"ctr-1\","
	                           "pod=\"trainer-7f9c\",namespace=\"ml\",container_name=\"cu\\\"da\"} 1\n"));
	CHECK(text && duplicate_series(text) == 0);
	free(text);
}

/* No sandbox: the writer's samples alone, still one each. */
static void test_idle(void)
{
	char *text = gs_metrics_text(NULL, 0);

	CHECK(text && strstr(text, "gpusandbox_build_info{version=\"" GPUSANDBOX_VERSION "\"} 1\n"));
	CHECK(text && strstr(text, "\ngpusandbox_up 1\n"));
	CHECK(text && strstr(text, "\ngpusandbox_sandboxes 0\n"));
	CHECK(text && duplicate_series(text) == 0);
	free(text);
}

/* A stopped agent's file: up 0, no sandbox. */
static void test_stopped(void)
{
	char dir[] = "/tmp/gs-metrics-XXXXXX", path[64], buf[4096] = "";
	struct gs_error err = { 0 };
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	CHECK(gs_metrics_write_stopped(path, &err) == 0);
	f = fopen(path, "r");
	CHECK(f && fread(buf, 1, sizeof(buf) - 1, f) > 0);
	if (f)
		fclose(f);
	CHECK(strstr(buf, "\ngpusandbox_up 0\n") && strstr(buf, "\ngpusandbox_sandboxes 0\n"));
	CHECK(duplicate_series(buf) == 0);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_checker();
	test_stopped();
	test_two_gpus();
	test_pod_labels();
	test_idle();
	return check_summary();
}
