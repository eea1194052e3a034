/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - the Prometheus text exposition of the sandboxes (metrics.h).
 *
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/ -
 * each family once, its # HELP and # TYPE lines first, then its samples;
 * label values escaped (backslash, double quote, newline) and valid UTF-8;
 * names in base units (bytes, ratios) and counters ending in _total.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "metrics.h"
#include "utf8.h"

/* Readable by a node_exporter running as another user: the file holds
 * limits and counts, not the workload's data. */
#define METRICS_FILE_MODE 0644
#define LABEL_BUF 512
#define NUM_BUF 32

/* sb's figures; its lock held. */
static void snapshot_locked(struct gs_metrics_snap *out, struct gs_session *sb, const char *container)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->sandbox, sizeof(out->sandbox), "%s", sb->id);
	snprintf(out->container, sizeof(out->container), "%s", container ? container : "");
	int max = ledger_max_gpu(&sb->ledger);
	out->n_gpus = max < 0 ? 1 : (unsigned)max + 1;
	for (unsigned g = 0; g < out->n_gpus; g++) {
		out->used[g] = sb->ledger.used[g];
		out->peak[g] = sb->ledger.peak[g];
		out->quota[g] = gs_quota_mem(&sb->quota, (int)g);
	}
	for (uint32_t u = 0; u < sb->quota.n_uuids && u < GS_MAX_GPUS; u++)
		if (sb->quota.uuid_minor[u] < GS_MAX_GPUS)
			snprintf(out->gpu_uuid[sb->quota.uuid_minor[u]], sizeof(out->gpu_uuid[0]), "%s",
			         sb->quota.uuids[u]);
	out->channels = sb->ledger.channels;
	out->channels_peak = sb->ledger.channels_peak;
	out->channels_quota = sb->quota.channels;
	out->groups = sb->ledger.channel_groups;
	out->groups_peak = sb->ledger.channel_groups_peak;
	out->groups_quota = sb->quota.channel_groups;
	memcpy(out->decisions, sb->counts, sizeof(out->decisions));
	out->refusals = sb->refusals;
	out->has_sm = sb->sm != NULL;
	if (sb->sm)
		gs_sm_summary(sb->sm, &out->sm);
}

/* After the lock: the audit log has its own, and its counters need not
 * match the ledger's instant. */
static void snapshot_audit(struct gs_metrics_snap *out, const struct gs_session *sb)
{
	out->has_audit = sb->audit != NULL;
	if (sb->audit)
		gs_audit_counters(sb->audit, &out->audit_written, &out->audit_suppressed,
		                  &out->audit_below_level);
}

void gs_metrics_snapshot(struct gs_metrics_snap *out, struct gs_session *sb, const char *container)
{
	pthread_mutex_lock(&sb->lock);
	snapshot_locked(out, sb, container);
	pthread_mutex_unlock(&sb->lock);
	snapshot_audit(out, sb);
}

bool gs_metrics_snapshot_within(struct gs_metrics_snap *out, struct gs_session *sb,
                                const char *container, unsigned wait_ms)
{
	struct gs_metrics_snap snap;

	if (!gs_mutex_lock_within(&sb->lock, wait_ms))
		return false;
	snapshot_locked(&snap, sb, container);
	pthread_mutex_unlock(&sb->lock);
	/* Both or nothing: counters read as 0 would look like a reset. */
	snap.has_audit = sb->audit != NULL;
	if (sb->audit && !gs_audit_counters_within(sb->audit, &snap.audit_written, &snap.audit_suppressed,
	                                           &snap.audit_below_level, wait_ms))
		return false;
	*out = snap;
	return true;
}

/* ---- formatting ------------------------------------------------------------------ */

/* A growing text buffer; on allocation failure it stays failed. */
struct text {
	char  *buf;
	size_t len, cap;
	bool   failed;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)n;
		char *b = realloc(t->buf, cap);
		if (!b) {
			t->failed = true;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
}

/* A label value: valid UTF-8, with \\, \" and \n escaped. */
static const char *label_value(const char *v, char *out, size_t len)
{
	char *clean = gs_utf8_clean(v ? v : "");
	size_t o = 0;

	for (const char *p = clean ? clean : ""; *p && o + 3 < len; p++) {
		if (*p == '\\' || *p == '"') {
			out[o++] = '\\';
			out[o++] = *p;
		} else if (*p == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	free(clean);
	return out;
}

static void family(struct text *t, const char *name, const char *type, const char *help)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels every per-sandbox series starts with: the one place they are
 * written, so that a label added for the sandbox (its pod, its namespace)
 * reaches every family alike. */
static const char *sandbox_labels(const struct gs_metrics_snap *s, char *out, size_t len)
{
	char sb[LABEL_BUF];

	snprintf(out, len, "sandbox=\"%s\"", label_value(s->sandbox, sb, sizeof(sb)));
	return out;
}

/* ,gpu="N"[,uuid="GPU-..."]: the GPU's labels (its UUID where known). */
static const char *gpu_labels(const struct gs_metrics_snap *s, int gpu, char *out, size_t len)
{
	char uuid[LABEL_BUF];

	if (gpu < 0) {
		out[0] = '\0';
	} else if ((unsigned)gpu < GS_MAX_GPUS && s->gpu_uuid[gpu][0]) {
		snprintf(out, len, ",gpu=\"%d\",uuid=\"%s\"", gpu, label_value(s->gpu_uuid[gpu], uuid, sizeof(uuid)));
	} else {
		snprintf(out, len, ",gpu=\"%d\"", gpu);
	}
	return out;
}

/* name{SANDBOX_LABELS[,gpu="N"[,uuid="..."]]EXTRA} value: gpu < 0 leaves
 * the GPU's labels out; extra is "" or ",key=\"value\"..." (escaped by
 * the caller). */
static void sample_labelled(struct text *t, const char *name, const struct gs_metrics_snap *s, int gpu,
                            const char *extra, uint64_t v)
{
	char labels[LABEL_BUF * 2], g[LABEL_BUF + NUM_BUF];

	gpu_labels(s, gpu, g, sizeof(g));
	put(t, "%s{%s%s%s} %" PRIu64 "\n", name, sandbox_labels(s, labels, sizeof(labels)), g, extra, v);
}

static void sample_gpu(struct text *t, const char *name, const struct gs_metrics_snap *s, unsigned gpu,
                       uint64_t v)
{
	sample_labelled(t, name, s, (int)gpu, "", v);
}

static void sample(struct text *t, const char *name, const struct gs_metrics_snap *s, uint64_t v)
{
	sample_labelled(t, name, s, -1, "", v);
}

static void memory_families(struct text *t, const struct gs_metrics_snap *s, unsigned n)
{
	family(t, "gpusandbox_memory_used_bytes", "gauge", "Video memory the sandbox holds on the GPU.");
	for (unsigned i = 0; i < n; i++)
		for (unsigned g = 0; g < s[i].n_gpus; g++)
			sample_gpu(t, "gpusandbox_memory_used_bytes", &s[i], g, s[i].used[g]);
	family(t, "gpusandbox_memory_peak_bytes", "gauge", "The most video memory the sandbox held on the GPU.");
	for (unsigned i = 0; i < n; i++)
		for (unsigned g = 0; g < s[i].n_gpus; g++)
			sample_gpu(t, "gpusandbox_memory_peak_bytes", &s[i], g, s[i].peak[g]);
	family(t, "gpusandbox_memory_quota_bytes", "gauge",
	       "The sandbox's video memory quota on the GPU (absent: no quota).");
	for (unsigned i = 0; i < n; i++)
		for (unsigned g = 0; g < s[i].n_gpus; g++)
			if (s[i].quota[g] != GS_QUOTA_UNLIMITED)
				sample_gpu(t, "gpusandbox_memory_quota_bytes", &s[i], g, s[i].quota[g]);
}

/* Live, peak and quota of one counted resource. */
static void count_families(struct text *t, const struct gs_metrics_snap *s, unsigned n, const char *base,
                           const char *what, size_t live_off, size_t peak_off, size_t quota_off)
{
	char name[NUM_BUF * 2], help[LABEL_BUF];
	static const char *const suffix[] = { "", "_peak", "_quota" };
	static const char *const says[] = { "Live %s of the sandbox.", "The most live %s of the sandbox.",
	                                    "The sandbox's limit on %s (absent: none)." };
	const size_t off[] = { live_off, peak_off, quota_off };

	for (unsigned k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "%s%s", base, suffix[k]);
		snprintf(help, sizeof(help), says[k], what);
		family(t, name, "gauge", help);
		for (unsigned i = 0; i < n; i++) {
			uint32_t v;
			memcpy(&v, (const char *)&s[i] + off[k], sizeof(v));
			if (k < 2 || v != GS_COUNT_UNLIMITED)
				sample(t, name, &s[i], v);
		}
	}
}

static bool same_series(const struct gs_refusal_kind *a, const struct gs_refusal_kind *b)
{
	return a->outcome == b->outcome && a->gpu == b->gpu && strcmp(a->reason, b->reason) == 0;
}

/* The refusals of one sandbox, one sample per label set (gpu, outcome,
 * reason): the audit's kinds also differ by resource and limit, which are
 * not labels, so kinds that share the labels are summed into one sample.
 * Two samples with one label set make node_exporter's textfile collector
 * reject the whole file. */
static void refusal_samples(struct text *t, const struct gs_metrics_snap *s)
{
	const struct gs_refusals *r = &s->refusals;
	const unsigned n = r->n_kinds < GS_REFUSAL_KINDS ? r->n_kinds : GS_REFUSAL_KINDS;
	char extra[LABEL_BUF * 2], reason[LABEL_BUF];

	for (unsigned k = 0; k < n; k++) {
		bool seen = false;
		uint64_t total = 0;
		for (unsigned j = 0; j < k; j++)
			seen |= same_series(&r->kind[j], &r->kind[k]);
		if (seen)
			continue;
		for (unsigned j = k; j < n; j++)
			if (same_series(&r->kind[j], &r->kind[k]))
				total += r->kind[j].n;
		snprintf(extra, sizeof(extra), ",outcome=\"%s\",reason=\"%s\"", gs_outcome_name(r->kind[k].outcome),
		         label_value(r->kind[k].reason, reason, sizeof(reason)));
		sample_labelled(t, "gpusandbox_refusals_total", s, r->kind[k].gpu < 0 ? -1 : r->kind[k].gpu, extra,
		                total);
	}
	if (r->other)
		sample_labelled(t, "gpusandbox_refusals_total", s, -1, ",outcome=\"other\",reason=\"other\"",
		                r->other);
}

static void decision_families(struct text *t, const struct gs_metrics_snap *s, unsigned n)
{
	static const char *const verdict[GS_COUNT_N] = { "allowed", "denied", "continued", "refused" };
	char extra[NUM_BUF * 2];

	family(t, "gpusandbox_decisions_total", "counter",
	       "Trapped driver calls by verdict: allowed, denied (a limit), continued, refused (the policy).");
	for (unsigned i = 0; i < n; i++)
		for (unsigned v = 0; v < GS_COUNT_N; v++) {
			snprintf(extra, sizeof(extra), ",verdict=\"%s\"", verdict[v]);
			sample_labelled(t, "gpusandbox_decisions_total", &s[i], -1, extra, s[i].decisions[v]);
		}
	family(t, "gpusandbox_refusals_total", "counter",
	       "Refused calls by GPU (absent: no GPU), outcome (quota, policy, device_full) and reason.");
	for (unsigned i = 0; i < n; i++)
		refusal_samples(t, &s[i]);
}

#define PERCENT 100.0

static void share_families(struct text *t, const struct gs_metrics_snap *s, unsigned n)
{
	char sb[LABEL_BUF * 2], gl[LABEL_BUF + NUM_BUF];

	family(t, "gpusandbox_compute_share_target_ratio", "gauge", "The --sm share of the GPU's time.");
	for (unsigned i = 0; i < n; i++)
		if (s[i].has_sm)
			put(t, "gpusandbox_compute_share_target_ratio{%s} %.4f\n",
			    sandbox_labels(&s[i], sb, sizeof(sb)), s[i].sm.target_percent / PERCENT);
	family(t, "gpusandbox_compute_share_achieved_ratio", "gauge",
	       "The mean measured share over the windows the sandbox used the GPU.");
	for (unsigned i = 0; i < n; i++)
		for (unsigned g = 0; s[i].has_sm && g < s[i].sm.n && g < GS_MAX_GPUS; g++)
			if (s[i].sm.gpu[g].busy_windows)
				put(t, "gpusandbox_compute_share_achieved_ratio{%s%s} %.4f\n",
				    sandbox_labels(&s[i], sb, sizeof(sb)),
				    gpu_labels(&s[i], (int)s[i].sm.gpu[g].gpu, gl, sizeof(gl)),
				    s[i].sm.gpu[g].achieved_share);
}

static void audit_families(struct text *t, const struct gs_metrics_snap *s, unsigned n)
{
	static const struct { const char *name, *help; size_t off; } fam[] = {
		{ "gpusandbox_audit_records_written_total", "Audit records written.",
		  offsetof(struct gs_metrics_snap, audit_written) },
		{ "gpusandbox_audit_records_suppressed_total",
		  "Repeated refusals counted in a suppressed record instead of written.",
		  offsetof(struct gs_metrics_snap, audit_suppressed) },
		{ "gpusandbox_audit_records_below_level_total",
		  "Decisions the audit level left out (counted, not written).",
		  offsetof(struct gs_metrics_snap, audit_below_level) },
	};
	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(t, fam[f].name, "counter", fam[f].help);
		for (unsigned i = 0; i < n; i++) {
			uint64_t v;
			memcpy(&v, (const char *)&s[i] + fam[f].off, sizeof(v));
			if (s[i].has_audit)
				sample(t, fam[f].name, &s[i], v);
		}
	}
}

/* The writer's own samples, present with no sandbox at all: an idle agent's
 * file says "up, 0 sandboxes", which a dead agent's stale file (its mtime,
 * node_exporter's node_textfile_mtime_seconds) does not; a stopped agent's
 * says up 0. */
static void writer_families(struct text *t, unsigned n, bool up)
{
	family(t, "gpusandbox_build_info", "gauge", "The gpusandbox build writing this file.");
	put(t, "gpusandbox_build_info{version=\"%s\"} 1\n", GPUSANDBOX_VERSION);
	family(t, "gpusandbox_up", "gauge",
	       "1: the writer (gpusandbox agent, or a gpusandbox run) rewrites this file every second; "
	       "0: the agent stopped.");
	put(t, "gpusandbox_up %d\n", up ? 1 : 0);
	family(t, "gpusandbox_sandboxes", "gauge", "Sandboxes the writer serves now.");
	put(t, "gpusandbox_sandboxes %u\n", n);
}

static char *metrics_text(const struct gs_metrics_snap *s, unsigned n, bool up)
{
	struct text t = { 0 };
	char sb[LABEL_BUF * 2], ct[LABEL_BUF], pod[LABEL_BUF], ns[LABEL_BUF], cn[LABEL_BUF];

	writer_families(&t, n, up);
	family(&t, "gpusandbox_sandbox_info", "gauge",
	       "One per sandbox; its container under the agent, and its pod's names.");
	for (unsigned i = 0; i < n; i++)
		put(&t, "gpusandbox_sandbox_info{%s,container=\"%s\",pod=\"%s\",namespace=\"%s\",container_name=\"%s\"} 1\n",
		    sandbox_labels(&s[i], sb, sizeof(sb)), label_value(s[i].container, ct, sizeof(ct)),
		    label_value(s[i].pod, pod, sizeof(pod)), label_value(s[i].pod_namespace, ns, sizeof(ns)),
		    label_value(s[i].container_name, cn, sizeof(cn)));
	memory_families(&t, s, n);
	count_families(&t, s, n, "gpusandbox_channels", "GPU channels", offsetof(struct gs_metrics_snap, channels),
	               offsetof(struct gs_metrics_snap, channels_peak),
	               offsetof(struct gs_metrics_snap, channels_quota));
	count_families(&t, s, n, "gpusandbox_channel_groups", "channel groups",
	               offsetof(struct gs_metrics_snap, groups), offsetof(struct gs_metrics_snap, groups_peak),
	               offsetof(struct gs_metrics_snap, groups_quota));
	decision_families(&t, s, n);
	share_families(&t, s, n);
	audit_families(&t, s, n);
	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	return t.buf;
}

char *gs_metrics_text(const struct gs_metrics_snap *s, unsigned n)
{
	return metrics_text(s, n, true);
}

/* PATH.tmp, written whole, then renamed over PATH: a reader sees the old
 * file or the new one. O_EXCL after removing a stale one: a link planted
 * at the temporary name is not followed. Takes text. */
static int write_text(const char *path, char *text, struct gs_error *err)
{
	char *tmp = NULL;
	size_t len = text ? strlen(text) : 0;
	int fd = -1, rc = -1;

	if (!text || asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		gs_fail(err, ENOMEM, "--metrics-file %s", path);
		goto out;
	}
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, METRICS_FILE_MODE);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fchmod(fd, METRICS_FILE_MODE) < 0) {
		gs_fail(err, errno ? errno : EIO, "--metrics-file %s", tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		fd = -1;
		gs_fail(err, errno, "--metrics-file %s", path);
		goto out;
	}
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp)
		(void)unlink(tmp);
	free(tmp);
	free(text);
	return rc;
}

int gs_metrics_write(const char *path, const struct gs_metrics_snap *snaps, unsigned n,
                     struct gs_error *err)
{
	return write_text(path, gs_metrics_text(snaps, n), err);
}

int gs_metrics_write_stopped(const char *path, struct gs_error *err)
{
	return write_text(path, metrics_text(NULL, 0, false), err);
}
