/* SPDX-License-Identifier: MIT */
/*
 * idle_rule.h - when a sandbox's workload counts as idle on a GPU, from the
 * driver's utilization samples. Pure: no I/O, no clocks of its own, so that
 * tests/unit/test_idle_rule.c can check every rule with made-up times.
 *
 * Each sample names the process that was on the graphics engine at the
 * instant it was taken, and carries that instant on the GPU's clock
 * (PTIMER, ns). Two rules:
 *
 * - Timed (the instant can be put on CLOCK_MONOTONIC, gs_ts_map): a sample
 *   taken inside this tenant's OWN window of the coordinator's plan, while
 *   its channels were on, away from both edges by the switch guard and the
 *   mapping's error, and while the plan gave that window to it alone,
 *   names the tenant if it had work: nobody else may run there. One such
 *   sample naming none of its tasks (GS_IDLE_OWN_SAMPLES) makes it idle.
 *   False-idle cost: a tenant is called idle wrongly only when it left the
 *   engine idle at that instant of its own window, with probability q per
 *   such sample (q: the part of its own window it leaves the engine idle;
 *   ~0 for a compute-bound tenant). It then keeps running in its own
 *   window, shared with the borrowers (plan.h: lent time is shared, not
 *   taken), until a sample names it: busy is reported at the first one,
 *   and the next plan (100 ms lead) gives the window back alone. At a
 *   sample every s seconds that is about s / ((1 - q) w'/2) + 0.1 s of
 *   its window at half speed, w' the guarded part of the period its own
 *   window is; it happens once per 1 / (q w') samples. For w = 0.5 and
 *   q = 0.1 on a GPU (s = 0.2): ~1.0 s at half speed every ~5 s, about
 *   5 % of its window; q = 0 costs nothing. A tenant that left the plan
 *   (its plan went stale: it runs its own hard cap) may run in another's
 *   window meanwhile; a sample naming it there costs that owner the same.
 * - Counted (the fallback, and the only rule without a coordinator): idle
 *   after n samples in a row naming none of its tasks, n the fewest (at
 *   least GS_IDLE_SAMPLES_MIN) that a busy tenant on the engine a fraction
 *   w of the time goes unnamed with probability (1 - w)^n <
 *   GS_IDLE_FALSE_RATE, were the samples independent (they are not quite:
 *   docs/compute-share.md, Reports).
 * The timed rule is used alone where it can be (gs_idle_rule_idle); in
 * both, a sample naming one of its tasks makes the tenant busy at once.
 *
 * A naming sample whose instant falls where the tenant's channels were
 * surely off (no on-run of ours within the guard) contradicts the mapping:
 * after GS_TS_CONTRADICTIONS_MAX of them the timed rule is given up for the
 * counted one (gs_idle_rule_note). Only the tenant's own report depends on
 * this: a wrong idle lends only its own window, a wrong busy keeps only it.
 */
#ifndef GPUSANDBOX_IDLE_RULE_H
#define GPUSANDBOX_IDLE_RULE_H

#include <stdbool.h>
#include <stdint.h>

#define GS_IDLE_OWN_SAMPLES     1u
#define GS_IDLE_SAMPLES_MIN     5u
#define GS_IDLE_SAMPLES_MAX     100u
#define GS_IDLE_FALSE_RATE      0.01
#define GS_TS_CONTRADICTIONS_MAX 2u
/* Spans kept per ring: a period adds at most two to each (its on-runs,
 * its own window, cut in two where the rotated period wraps, plan.h). A
 * plan's period is at least 75 ms (100 ms - 25 %), so 256 cover over 9 s,
 * and samples are read every 50 ms while a plan is followed; alone, at
 * the shortest --sm-period (5 ms), 1.28 s of runs, against a read every
 * second. */
#define GS_SPAN_RING            256u

/* A GPU clock put on CLOCK_MONOTONIC: mono = gpu - offset, within err. */
struct gs_ts_map {
	bool     valid;
	int64_t  offset_ns;
	uint64_t err_ns;
};

/* One calibration reading: CLOCK_MONOTONIC before, the GPU's clock read
 * by a control, CLOCK_MONOTONIC after. The GPU read happened somewhere in
 * [before, after]: the middle, within half the bracket. The tightest
 * bracket of those given since gs_ts_map_reset wins. */
void gs_ts_map_reset(struct gs_ts_map *m);
void gs_ts_map_add(struct gs_ts_map *m, uint64_t mono_before, uint64_t gpu_ns, uint64_t mono_after);
/* The instant on CLOCK_MONOTONIC; false when there is no mapping. */
bool gs_ts_map_to_mono(const struct gs_ts_map *m, uint64_t gpu_ns, uint64_t *mono);

/* A ring of CLOCK_MONOTONIC spans [from, to), the newest last; an open
 * span (to == GS_SPAN_OPEN) runs until now. */
#define GS_SPAN_OPEN UINT64_MAX
struct gs_span_ring {
	uint64_t from[GS_SPAN_RING], to[GS_SPAN_RING];
	unsigned head, n;   /* head: where the next span goes */
};
void gs_span_open(struct gs_span_ring *r, uint64_t from);
/* Closes the newest span if open. */
void gs_span_close(struct gs_span_ring *r, uint64_t to);
/* Adds [from, to) unless it is one of the newest two spans already. */
void gs_span_add(struct gs_span_ring *r, uint64_t from, uint64_t to);
/* Is t inside a span, at least guard from both its ends (an open span's
 * end is now)? */
bool gs_span_inside(const struct gs_span_ring *r, uint64_t t, uint64_t guard, uint64_t now);
/* Is t surely outside every span: later than the oldest span's start and
 * at least guard from every span? */
bool gs_span_outside(const struct gs_span_ring *r, uint64_t t, uint64_t guard, uint64_t now);

/* What a sample says about the tenant. */
enum gs_sample_kind {
	GS_SAMPLE_NAMES_US,       /* the engine was busy with one of its tasks */
	GS_SAMPLE_QUIET_OWN,      /* it was not, in its own window, alone, on */
	GS_SAMPLE_QUIET,          /* it was not, anywhere else or at an unknown instant */
	GS_SAMPLE_NAMES_US_OFF,   /* names it where its channels were surely off */
};

struct gs_idle_rule {
	uint32_t quiet;          /* samples in a row not naming it */
	uint32_t quiet_own;      /* of those, GS_SAMPLE_QUIET_OWN */
	uint32_t contradictions; /* GS_SAMPLE_NAMES_US_OFF seen */
	uint64_t own_evidence;   /* figures: QUIET_OWN samples seen */
};

/* The fewest samples in a row that call a tenant with window w idle. */
uint32_t gs_idle_after_samples(double w);
void gs_idle_rule_note(struct gs_idle_rule *r, enum gs_sample_kind k);
/* Is the timed rule still trusted (no more contradictions than allowed)? */
bool gs_idle_rule_timed_ok(const struct gs_idle_rule *r);
/* Idle? With timed (the samples' instants are known and the tenant
 * follows a plan whose own window is wide enough to hold evidence) and
 * the timed rule trusted, by the timed rule alone: the counted rule's
 * false idles (samples outside our window, correlated with the period's
 * phase) would only add to its own. Otherwise by the counted rule. */
bool gs_idle_rule_idle(const struct gs_idle_rule *r, double w, bool timed);

/* Classifies a sample: names_us (one of the tenant's tasks on a busy
 * engine), and, when its instant is known (timed), where it fell: inside
 * an own window (own, guarded) the tenant held alone since at least
 * alone_since, inside one of its on-runs (runs, guarded), or surely
 * outside every on-run. */
struct gs_sample_place {
	bool     timed;
	uint64_t t;              /* the sample's instant, CLOCK_MONOTONIC */
	uint64_t guard;          /* switch guard + mapping error */
	uint64_t alone_since;    /* its window was its own alone from then */
	uint64_t now;
};
enum gs_sample_kind gs_sample_classify(bool names_us, const struct gs_sample_place *p,
                                       const struct gs_span_ring *own, const struct gs_span_ring *runs);

#endif
