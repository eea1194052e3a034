/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <string.h>

#include "nvrm_abi.h"
#include "refusals.h"

#define SIZE_BUF 32
#define LIMIT_BUF 96

static bool same_kind(const struct gs_refusal_kind *k, enum gs_outcome o, const char *reason,
                      const char *resource, int gpu, uint64_t limit)
{
	return k->outcome == o && k->resource == resource && k->gpu == gpu && k->limit == limit &&
	       strncmp(k->reason, reason, sizeof(k->reason) - 1) == 0;
}

void gs_refusals_note(struct gs_refusals *r, const struct gs_decision *d)
{
	const enum gs_outcome o = gs_decision_outcome(d);
	const char *reason = d->reason ? d->reason : "GPU out of memory";
	/* A count's resource is named; a byte quota is video memory. */
	const char *resource = d->resource ? d->resource : d->has_usage ? "vidmem" : NULL;
	const uint64_t limit = d->has_usage ? d->quota : 0;
	struct gs_refusal_kind *k;

	if (o != GS_OUTCOME_QUOTA && o != GS_OUTCOME_POLICY && o != GS_OUTCOME_DEVICE_FULL)
		return;
	r->total++;
	for (unsigned i = 0; i < r->n_kinds; i++) {
		if (same_kind(&r->kind[i], o, reason, resource, d->gpu, limit)) {
			r->kind[i].n++;
			return;
		}
	}
	if (r->n_kinds == GS_REFUSAL_KINDS) {
		r->other++;
		return;
	}
	k = &r->kind[r->n_kinds++];
	k->outcome = o;
	snprintf(k->reason, sizeof(k->reason), "%s", reason);
	k->resource = resource;
	k->gpu = d->gpu;
	k->limit = limit;
	k->n = 1;
}

/* A quota kind's limit: its option, or its policy key where it has none
 * (the video engine caps: "video.decoders = 1"). */
static void count_limit_text(const struct gs_refusal_kind *k, char *buf, size_t len)
{
	int kind = gs_quota_kind_by_resource(k->resource);
	const struct gs_quota_kind_row *row = kind < 0 ? NULL : gs_quota_kind_row((enum gs_quota_kind)kind);

	if (row && row->option)
		snprintf(buf, len, " (--%s %" PRIu64 ")", row->option, k->limit);
	else
		snprintf(buf, len, " (%s = %" PRIu64 ")", row ? row->key : k->resource, k->limit);
}

/* The option or policy line that set the limit a kind ran into. */
static void limit_text(const struct gs_refusal_kind *k, const struct gs_quota *q, char *buf,
                       size_t len)
{
	char size[SIZE_BUF];

	buf[0] = '\0';
	if (k->outcome == GS_OUTCOME_DEVICE_FULL) {
		snprintf(buf, len, " (the GPU itself was full, not the quota)");
	} else if (!k->resource) {
		snprintf(buf, len, " (policy)");
	} else if (strcmp(k->resource, "vidmem") == 0) {
		bool own = k->gpu >= 0 && (unsigned)k->gpu < GS_MAX_GPUS &&
		           q->mem_gpu[k->gpu] != GS_MEM_GPU_UNSET;
		gs_option_size(k->limit, size, sizeof(size));
		if (own)
			snprintf(buf, len, " (gpu.%d.mem = %s)", k->gpu, size);
		else
			snprintf(buf, len, " (--mem %s, GPU %d)", size, k->gpu);
	} else if (strcmp(k->resource, "managed") == 0) {
		snprintf(buf, len, " (--managed deny)");
	} else {
		count_limit_text(k, buf, len);
	}
}

uint64_t gs_refusals_print(const struct gs_refusals *r, const struct gs_quota *q, FILE *f)
{
	char limit[LIMIT_BUF];

	if (!r->total)
		return 0;
	fprintf(f, "gpusandbox: %" PRIu64 " call%s refused:", r->total, r->total == 1 ? "" : "s");
	for (unsigned i = 0; i < r->n_kinds; i++) {
		const struct gs_refusal_kind *k = &r->kind[i];
		limit_text(k, q, limit, sizeof(limit));
		fprintf(f, "%s %s%s x%" PRIu64, i ? ";" : "", k->reason, limit, k->n);
	}
	if (r->other)
		fprintf(f, "; other x%" PRIu64, r->other);
	fprintf(f, "\n");
	return r->total;
}
