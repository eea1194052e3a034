/* SPDX-License-Identifier: MIT */
/*
 * quota.h - the limits a sandbox enforces and how they are parsed.
 */
#ifndef GPUSANDBOX_QUOTA_H
#define GPUSANDBOX_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#define GS_MAX_GPUS 64u
#define GS_QUOTA_UNLIMITED UINT64_MAX

#define GS_COUNT_UNLIMITED UINT32_MAX
#define GS_SM_UNLIMITED 100u   /* a 100 % share is no cap */
#define GS_SM_PERIOD_DEFAULT_MS 20u
#define GS_SM_PERIOD_MIN_MS 5u
#define GS_SM_PERIOD_MAX_MS 1000u
#define GS_GPU_UUID_MAX 64   /* "GPU-" and 36 characters, with room */

struct gs_quota {
	/* Bytes of video memory per GPU; GS_QUOTA_UNLIMITED when not set. */
	uint64_t mem_per_gpu;
	/* Live GPFIFO channels and channel groups (TSGs) across the sandbox;
	 * GS_COUNT_UNLIMITED when not set. */
	uint32_t channels;
	uint32_t channel_groups;
	/* Channel groups scheduled (GPFIFO_SCHEDULE enabled) at once. */
	uint32_t active_channel_groups;
	/* --sm: the workload's share of GPU time on each of its GPUs, in
	 * percent (1..100); GS_SM_UNLIMITED when not set. sm_period_ms is the
	 * duty-cycle period (compute_share.c explains the trade-off). */
	uint32_t sm_percent;
	uint32_t sm_period_ms;
	/* GPUs the workload may see and use, by RM device instance (the
	 * nvidia-smi index); all when visible_set is false. */
	bool     visible_set;
	uint64_t visible;      /* bit per /dev/nvidiaN minor */
	/* GPUs named by UUID, resolved to minors at start-up
	 * (gs_resolve_gpu_uuids). */
	uint32_t n_uuids;
	char     uuids[GS_MAX_GPUS][GS_GPU_UUID_MAX];
};

/* Is the GPU with this RM device instance visible in the sandbox? */
static inline bool gs_gpu_visible(const struct gs_quota *q, uint32_t instance)
{
	return !q->visible_set || (instance < GS_MAX_GPUS && (q->visible >> instance) & 1u);
}

/* Parses "0,2,GPU-5d1e..." into q->visible and q->uuids. Returns 0, or -1
 * with *why set. */
int gs_parse_gpus(const char *s, struct gs_quota *q, const char **why);

void gs_quota_init(struct gs_quota *q);

/* Parses SIZE: a plain byte count or a number with a binary suffix k, m, g,
 * t (upper or lower case, optional trailing "b"/"ib"). Rejects zero,
 * negative numbers, garbage and overflow. Returns 0 or -1. */
int gs_parse_size(const char *s, uint64_t *out);

/* Parses a positive decimal count (1..GS_COUNT_UNLIMITED-1). */
int gs_parse_count(const char *s, uint32_t *out);

/* Parses a percentage 1..100 ("50" or "50%"). */
int gs_parse_percent(const char *s, uint32_t *out);

/* Parses a duty-cycle period in milliseconds (GS_SM_PERIOD_MIN_MS ..
 * GS_SM_PERIOD_MAX_MS), "ms" suffix optional. */
int gs_parse_period_ms(const char *s, uint32_t *out);

/* Formats bytes for humans ("4.00 GiB"). */
const char *gs_format_size(uint64_t bytes, char *buf, unsigned len);

#endif
