/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - the sandboxes' figures in the Prometheus text exposition
 * format (issue #15), for --metrics-file and the agent's --metrics-file.
 *
 * A snapshot of each sandbox is taken under its lock; the file is then
 * written beside PATH and renamed over it, as node_exporter's textfile
 * collector expects, so a scrape never reads half a file. The names and
 * what each counts are in man/gpusandbox.1, METRICS.
 */
#ifndef GPUSANDBOX_METRICS_H
#define GPUSANDBOX_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "compute_share.h"
#include "gs_error.h"
#include "refusals.h"
#include "session.h"

/* How often the runners rewrite the file (and flush usage records). */
#define GS_METRICS_INTERVAL_MS 1000
#define GS_METRICS_ID_MAX 72
/* A Kubernetes name: a pod's is a DNS subdomain, at most 253. */
#define GS_METRICS_K8S_MAX 254

/* One sandbox, as the metrics show it. */
struct gs_metrics_snap {
	char     sandbox[GS_METRICS_ID_MAX];   /* its id */
	char     container[GS_METRICS_ID_MAX]; /* the agent's container id, or "" */
	/* Who the container is to Kubernetes (the agent's, from its runtime's
	 * annotations; "" when unknown): the labels of gpusandbox_sandbox_info,
	 * which a query joins on sandbox to label any other series. Set by
	 * the caller after each snapshot, which leaves them empty. */
	char     pod[GS_METRICS_K8S_MAX], pod_namespace[GS_METRICS_K8S_MAX];
	char     container_name[GS_METRICS_K8S_MAX];
	unsigned n_gpus;
	/* Each GPU's UUID where the sandbox named it by UUID (its policy or
	 * --gpus), else "": the uuid label of its per-GPU samples. */
	char     gpu_uuid[GS_MAX_GPUS][GS_GPU_UUID_MAX];
	uint64_t used[GS_MAX_GPUS], peak[GS_MAX_GPUS], quota[GS_MAX_GPUS]; /* UINT64_MAX: none */
	uint32_t channels, channels_peak, channels_quota;       /* GS_COUNT_UNLIMITED: none */
	uint32_t groups, groups_peak, groups_quota;
	uint64_t decisions[GS_COUNT_N];
	struct gs_refusals refusals;
	bool     has_sm;
	struct gs_sm_summary sm;
	bool     has_audit;
	uint64_t audit_written, audit_suppressed, audit_below_level;
};

/* Takes sb's figures under its lock (the compute share's too, which the
 * lock covers). container NULL or "" outside the agent. */
void gs_metrics_snapshot(struct gs_metrics_snap *out, struct gs_session *sb, const char *container);
/* The same, waiting at most wait_ms for sb's lock: a worker holds it while
 * it reads the workload's memory, a read the workload can make wait as long
 * as it likes. False (out untouched) when the lock did not come. */
bool gs_metrics_snapshot_within(struct gs_metrics_snap *out, struct gs_session *sb,
                                const char *container, unsigned wait_ms);
/* Writes the exposition of n snapshots to path: PATH.tmp then rename. */
int gs_metrics_write(const char *path, const struct gs_metrics_snap *snaps, unsigned n,
                     struct gs_error *err);
/* The file of a stopped agent: gpusandbox_up 0 and no sandbox (its
 * containers, held by a keeper, are served by nobody until the next). */
int gs_metrics_write_stopped(const char *path, struct gs_error *err);
/* The exposition of n snapshots into a malloc'd string (tests). */
char *gs_metrics_text(const struct gs_metrics_snap *snaps, unsigned n);

#endif
