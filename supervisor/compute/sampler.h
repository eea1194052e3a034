/* SPDX-License-Identifier: MIT */
/*
 * sampler.h - one reader of a GPU's utilization samples per supervisor
 * process, shared by every session of the process that caps a workload on
 * that GPU (the agent runs many sessions; each used to open its own RM
 * client and read the same ring).
 *
 * The sampler reads PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2 through its own
 * RM client, at most once per GS_SAMPLER_FRESH_MS whoever asks, and keeps
 * the last ring read. Each session asks for the samples newer than the
 * last one it took and decides itself which name its tasks: the sampler
 * knows no session. It also puts the samples' GPU timestamps on
 * CLOCK_MONOTONIC (gs_ts_map), calibrated with TIMER_GET_TIME on the same
 * client every GS_SAMPLER_CALIBRATE_MS.
 *
 * Thread-safe: each sampler has its own lock, taken under a session's lock
 * and never the other way round.
 */
#ifndef GPUSANDBOX_SAMPLER_H
#define GPUSANDBOX_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "driver.h"
#include "nvrm/rm_abi.h"

#define GS_SAMPLER_FRESH_MS     10u
#define GS_SAMPLER_CALIBRATE_MS 1000u

struct gs_util_sample {
	uint64_t ts;      /* the GPU's clock (PTIMER, ns) */
	uint64_t mono;    /* the same instant on CLOCK_MONOTONIC, when timed */
	bool     timed;
	uint32_t util;    /* graphics engine, 0.01 % */
	uint32_t pid;     /* the process on the engine when it was taken */
};

struct gs_sampler;

/* The process's sampler for the GPU with RM id gpu_id, which is minor in
 * map; opened (and counted) on first use. NULL if the driver gives no
 * samples there: the caller then runs open-loop. */
struct gs_sampler *gs_sampler_get(uint32_t gpu_id, unsigned minor, const struct gs_gpu_entry *map,
                                  unsigned n_map, const struct gs_rm_abi *abi);
/* Drops one use; the last closes the sampler's RM client. */
void gs_sampler_put(struct gs_sampler *s);
/* The samples newer than after_ts (GPU clock), oldest first, at most max;
 * *err_ns gets the timestamp mapping's error. -1 when the driver stopped
 * giving samples. */
int gs_sampler_read(struct gs_sampler *s, uint64_t after_ts, struct gs_util_sample *out, unsigned max,
                    uint64_t *err_ns);
/* How many samplers (and so RM clients) the process holds: for tests. */
unsigned gs_sampler_count(void);

#endif
