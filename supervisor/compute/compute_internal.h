/* SPDX-License-Identifier: MIT */
/*
 * compute_internal.h - what the parts of one session's compute share call
 * of each other: the duty-cycle thread (compute_share.c), the actuator
 * (actuator.c: the channel switch and failing closed) and the idle report
 * (idle_report.c: the samples that name the session's tasks, and the busy
 * or idle report to the coordinator). Not for use outside
 * supervisor/compute.
 */
#ifndef GPUSANDBOX_COMPUTE_INTERNAL_H
#define GPUSANDBOX_COMPUTE_INTERNAL_H

#include "compute_state.h"

#define NS_PER_MS 1000000ull

/* actuator.c. Each with the sandbox lock held. */
/* Turns GPU gpu's channels off (the settled ones) or on (the ones we
 * turned off); an off pass of the duty cycle's own records what it turned
 * off in record (off_cache.h). False when the cap cannot be kept. */
bool cs_set_gpu_channels(struct gs_compute_share *cs, int gpu, bool disable, struct gs_off_cache *record);
/* Best effort, on the way out: every channel we turned off goes back on. */
void cs_enable_everything(struct gs_compute_share *cs);
/* The cap can no longer be kept: channels on, error record, workload killed. */
void cs_fail(struct gs_compute_share *cs);
/* The session's observer event (gs_session_observer.channels_may_resume). */
void cs_reassert_off_phase(void *ctx, int gpu);
/* The session's observer event (gs_session_observer.resume_call). */
void cs_resume_call(void *ctx, bool begin);

/* idle_report.c. */
/* Sets up GPU gpu's measuring: the process's sampler of that GPU (RM id
 * gpu_id when id_known; otherwise none, and the loop runs open). */
void cs_idle_start(struct gs_compute_share *cs, int gpu, bool id_known, uint32_t gpu_id);
void cs_idle_stop(struct gs_compute_share *cs, int gpu);
/* Our channels on gpu went off (t: before the switch) or on (t: after). */
void cs_idle_note_switch(struct gs_compute_share *cs, int gpu, bool off, uint64_t t);
/* While a plan is followed: notes the current period's own window. */
void cs_idle_note_plan(struct gs_compute_share *cs, int gpu, uint64_t now);
/* Adds the samples taken since the last read to the window. Lock held. */
void cs_read_samples(struct gs_compute_share *cs, int gpu);
/* At every window's edge: tells the coordinator busy or idle. Lock held. */
void cs_report_busy(struct gs_compute_share *cs, int gpu, bool has_channels);
/* Between windows, while a plan is followed: reads the samples and
 * reports a change at once. Lock held. */
void cs_poll_busy(struct gs_compute_share *cs, int gpu, bool has_channels);
/* For the figures at stop: quiet samples seen inside our own window (the
 * timed rule's evidence), samples that contradicted the clock mapping,
 * and whether the newest sample was timed. */
struct cs_idle_figures {
	uint64_t own_evidence;
	uint32_t contradictions;
	bool     timed;
};
struct cs_idle_figures cs_idle_figures(const struct gs_compute_share *cs, int gpu);

/* sm_figures.c: the benchmark's figures (tests/gpu/coord_bench.sh): each
 * switch's cost and the off phases' length, printed at stop under
 * GPUSANDBOX_SM_DEBUG=1. */
void gs_sm_note_switch(struct gs_sm_gpu *s, uint64_t t0, uint64_t t1, bool off);
void gs_sm_print_figures(const struct gs_compute_share *cs);

#endif
