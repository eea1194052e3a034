/* SPDX-License-Identifier: MIT */
/*
 * compute_state.h - the state of one session's compute share (--sm), per
 * GPU and whole: what compute_share.h's callers hold by value and what the
 * parts of the share (compute_internal.h) work on. Only types, so that the
 * share's own modules include it without including the share's API.
 */
#ifndef GPUSANDBOX_COMPUTE_STATE_H
#define GPUSANDBOX_COMPUTE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "coord.h"
#include "gs_error.h"
#include "ledger.h"
#include "off_cache.h"
#include "sm_clock.h"
#include "nvrm_abi.h"
#include "quota.h"
#include "sm_controller.h"

struct gs_session;
struct cs_idle;

struct gs_sm_gpu {
	bool                 seen;        /* had channels at some point */
	atomic_bool          off;         /* our phase: its channels are disabled now */
	/* Turned off without the lock (off_cache.h): the next locked pass
	 * tells the ledger. */
	bool                 off_without_lock;
	uint64_t             lockless_offs;
	struct gs_off_cache  off_cache;
	struct sm_controller ctl;
	/* The samples of this GPU that name our tasks, and the idle report
	 * (idle_report.c); the process's sampler of the GPU is in there. */
	struct cs_idle      *idle;
	bool                 no_samples;  /* the driver gave none: open loop */
	uint64_t             last_sample_ts;
	uint64_t             contended_until; /* another process was seen on the GPU */
	double               win_util;    /* sum of our samples' util (0..1) */
	unsigned             win_n;       /* samples in the window */
	/* Figures for the summary. */
	double               share_sum;
	unsigned             share_n, windows;
	double               last_busy_share; /* left out of the summary's mean */
	uint64_t             toggles;
	double               audited_duty;
	uint64_t             audited_ns;
	/* The host's coordinator for this GPU (coord.h), and whether its plan
	 * was followed at the last decision; otherwise our own period. */
	struct gs_coord      coord;
	bool                 coordinated;
	uint64_t             period_start, period_len;
	uint32_t             audited_plan_tenants, audited_plan_asked;
	/* For the benchmark (GPUSANDBOX_SM_DEBUG=1, printed at stop): what a
	 * switch of all our channels costs, and the longest off phase, the
	 * longest a tenant waited for its window. */
	uint64_t             switch_ns_sum, switch_ns_max, switches;
	uint64_t             off_since_ns, off_max_ns;
	/* The settling grace of this GPU's new channel groups (sm_controller.h):
	 * a budget of off-phase time, not a right of every group. */
	struct sm_grace      grace;
};

/* How the off phase is made. Only FIFO_DISABLE_CHANNELS caps anything;
 * the others exist to measure that (docs/compute-share.md), selected with
 * GPUSANDBOX_SM_MECHANISM, and are not for production use. */
enum gs_sm_mechanism {
	GS_SM_DISABLE_CHANNELS,   /* default */
	GS_SM_GROUP_SCHEDULE,     /* NVA06C GPFIFO_SCHEDULE off/on per group */
	GS_SM_GROUP_PREEMPT,      /* NVA06C PREEMPT per group at each off */
	GS_SM_CHANNEL_SCHEDULE,   /* NVA06F GPFIFO_SCHEDULE off/on per channel */
};

struct gs_compute_share {
	enum gs_sm_mechanism mechanism;
	struct gs_session   *sb;
	uint32_t             percent, period_ms;
	enum gs_sm_mode      mode;
	const char          *coord_dir;   /* NULL: no coordinator (coord.h) */
	pthread_t            thread;
	bool                 started;
	atomic_bool          stop;
	struct gs_error      err;
	uint64_t             unreachable_since_ns;
	bool                 debug;       /* GPUSANDBOX_SM_DEBUG=1: one line per window */
	/* Test switches, the baselines of tests/sm/escape.sh (read once, in
	 * gs_sm_start): GPUSANDBOX_TEST_SM_SETTLE_UNBOUNDED, every new group
	 * settles unswitched whatever the budget (before the grace was a
	 * budget); GPUSANDBOX_TEST_SM_REASSERT_KNOWN_GPU, a scheduling call
	 * on an object of no known GPU is not followed by an off pass. */
	bool                 test_settle_unbounded;
	bool                 test_reassert_known_gpu;
	/* The test build's shared clock is held over a workload call that
	 * may let channels run (cs_resume_call); sandbox lock. */
	bool                 clock_held;
	/* The duty thread's part in the test's clock (sm_clock.h). */
	struct gs_sm_clock_part clock;
	uint64_t             rng;         /* period jitter */
	struct gs_sm_gpu     gpu[GS_MAX_GPUS];
	struct ledger_channel *chans;
	uint32_t             cap_chans;
};

#endif
