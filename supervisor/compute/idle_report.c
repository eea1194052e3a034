/* SPDX-License-Identifier: MIT */
/*
 * idle_report.c - what the driver's utilization samples say about one
 * session's workload on one GPU: its measured share of the window (for the
 * closed loop), and whether it uses the GPU at all (the busy or idle report
 * to the coordinator, which lends an idle guarantee tenant's window).
 *
 * The samples come from the process's sampler of the GPU (sampler.h),
 * shared with the other sessions of the process; this file decides which
 * of them name this session's tasks. The idle rule is idle_rule.h's: a
 * sample whose instant falls inside our own window, while our channels
 * were on and the plan gave us the window alone, and names none of our
 * tasks, says we had no work; without a usable instant, n samples in a row
 * must not name us.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "compute_internal.h"
#include "gpusandbox.h"
#include "idle_rule.h"
#include "sampler.h"
#include "session.h"
#include "sm_clock.h"

/* Samples naming another process mean the GPU is shared: for
 * CONTENDED_HOLD_MS after the last one, a measurement needs more samples
 * (compute_share.c close_window). */
#define CONTENDED_HOLD_MS 30000u
/* Around each switch, the instant of a sample says nothing: the previous
 * owner's work drains after its disable (about 1.1 ms measured on an H100,
 * 580.159: docs/compute-share.md; the fake's --busy-lag-ms is 1 ms in
 * tests/sm), and the supervisors' clocks are one, but their threads wake a
 * little apart. */
#define SWITCH_GUARD_NS (2 * NS_PER_MS)
/* After a busy report, our window is ours alone once the coordinator has
 * re-planned (at once on a changed report, coord_server.c) and the plan's
 * 100 ms lead has passed; the rest is slack for its poll and a loaded
 * host. Samples before that may name a borrower in our window. */
#define ALONE_AFTER_MS 250u
/* The timed rule needs an own window that can hold an instant clear of
 * both guards in its shortest period (the plan's jitter below its base):
 * at least this many guards long. Narrower windows use the counted rule. */
#define TIMED_MIN_GUARDS 3u

struct cs_idle {
	struct gs_sampler  *sampler;
	struct gs_idle_rule rule;
	struct gs_span_ring own;     /* our own windows of the plans followed */
	struct gs_span_ring runs;    /* our channels on */
	uint64_t            alone_since;
	bool                reported_busy;
	bool                last_timed;  /* the newest sample's instant was known */
	struct gs_util_sample buf[NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL];
};

void cs_idle_start(struct gs_compute_share *cs, int gpu, bool id_known, uint32_t gpu_id)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	struct gs_session *sb = cs->sb;

	g->idle = calloc(1, sizeof(*g->idle));
	if (g->idle && id_known)
		g->idle->sampler = gs_sampler_get(gpu_id, (unsigned)gpu, sb->gpu_map, sb->n_gpu_map, sb->rm_abi);
	if (!g->idle || !g->idle->sampler)
		g->no_samples = true;
	if (g->idle) {
		/* The coordinator takes a new tenant as busy (coord.c). */
		g->idle->reported_busy = true;
		g->idle->alone_since = gs_sm_now() + ALONE_AFTER_MS * NS_PER_MS;
	}
}

void cs_idle_stop(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	if (!g->idle)
		return;
	gs_sampler_put(g->idle->sampler);
	free(g->idle);
	g->idle = NULL;
}

void cs_idle_note_switch(struct gs_compute_share *cs, int gpu, bool off, uint64_t t)
{
	struct cs_idle *d = cs->gpu[gpu].idle;

	if (!d)
		return;
	if (off)
		gs_span_close(&d->runs, t);
	else
		gs_span_open(&d->runs, t);
}

void cs_idle_note_plan(struct gs_compute_share *cs, int gpu, uint64_t now)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	const struct gs_coord *c = &g->coord;
	const struct gs_plan_window *own = &c->cur.slot.own;

	if (!g->idle || !g->coordinated || !own->len || now < c->k_start)
		return;
	/* The period is rotated (plan.h); at a start, so the own window comes
	 * whole, but the pieces are taken as they come. */
	struct gs_plan_window piece[2];
	unsigned n = gs_plan_window_raw(*own, gs_plan_rotation_ppm(c->cur.seed, c->k, c->cur.starts,
	                                                              c->cur.n_starts), piece);
	for (unsigned i = 0; i < n; i++) {
		uint64_t from = c->k_start + (uint64_t)((unsigned __int128)piece[i].offset * c->k_len / GS_PLAN_PPM);
		uint64_t to = c->k_start +
		              (uint64_t)((unsigned __int128)(piece[i].offset + piece[i].len) * c->k_len / GS_PLAN_PPM);
		/* A plan adopted inside the period rules only from then. */
		if (from < c->cur.from_ns)
			from = c->cur.from_ns;
		gs_span_add(&g->idle->own, from, to);
	}
}

/* Did a process of this sandbox make the work a sample names? A creator
 * of one of its clients, or any task of the sandbox now. The creators are
 * a ring the workload can flush by churning processes that each make a
 * client (issue #17 item 13: 1100 of them took a --sm 25 workload to
 * 0.34 on the fake, 0.58 on a GPU); the taskset cannot be flushed, and a
 * process on the engine is alive. */
static bool pid_is_sandbox(const struct gs_session *sb, pid_t pid)
{
	return pid > 0 && (gs_session_is_creator(sb, pid) || gs_taskset_contains(&sb->tasks, pid));
}

/* Is this sample's time ours? A sample names the process that was on the
 * engine when it was taken. A sample taken while the engine was idle
 * names no process; its busy time counts as ours, which can only
 * over-throttle this sandbox, never let it take more. */
static bool sample_is_ours(const struct gs_session *sb, uint32_t proc_id)
{
	return proc_id == NV2080_GPUMON_PID_INVALID || proc_id == 0 || pid_is_sandbox(sb, (pid_t)proc_id);
}

/* Busy: the engine was working with one of ours on it. A sample naming
 * no process says nothing about who. */
static bool names_us(const struct gs_session *sb, const struct gs_util_sample *s)
{
	return s->util && s->pid != NV2080_GPUMON_PID_INVALID && pid_is_sandbox(sb, (pid_t)s->pid);
}

/* The wall clock, seconds: the debug lines are lined up with a
 * workload's time.time() by the GPU benchmarks. */
static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One sample into the window's figures and the idle rule. */
static void take_sample(struct gs_compute_share *cs, int gpu, const struct gs_util_sample *s,
                        uint64_t err_ns, uint64_t now)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	struct cs_idle *d = g->idle;
	const struct gs_sample_place place = { .timed = s->timed, .t = s->mono,
	                                       .guard = SWITCH_GUARD_NS + err_ns,
	                                       .alone_since = d->alone_since, .now = now };
	bool ours = names_us(cs->sb, s);
	enum gs_sample_kind kind = gs_sample_classify(ours, &place, &d->own, &d->runs);

	g->win_n++;
	if (!sample_is_ours(cs->sb, s->pid) && s->util)
		g->contended_until = now + CONTENDED_HOLD_MS * NS_PER_MS;
	gs_idle_rule_note(&d->rule, kind);
	if (sample_is_ours(cs->sb, s->pid))
		g->win_util += (double)(s->util > NV2080_GPUMON_UTIL_FULL ? NV2080_GPUMON_UTIL_FULL : s->util) /
		               NV2080_GPUMON_UTIL_FULL;
	if (cs->debug)
		fprintf(stderr, "[gpusandbox sm] gpu%d sample ts=%llu gr.util=%u gr.pid=%u at=%lld ms wall=%.3f %s\n",
		        gpu, (unsigned long long)s->ts, s->util, s->pid,
		        s->timed ? (long long)(now - s->mono) / (long long)NS_PER_MS : -1ll, wall_s(),
		        kind == GS_SAMPLE_QUIET_OWN ? "quiet-own" : kind == GS_SAMPLE_NAMES_US_OFF ? "names-us-off"
		        : ours ? "names-us" : "quiet");
}

void cs_read_samples(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	struct cs_idle *d = g->idle;
	uint64_t err_ns = 0, newest = g->last_sample_ts;

	if (g->no_samples || !d)
		return;
	int n = gs_sampler_read(d->sampler, g->last_sample_ts, d->buf,
	                        NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL, &err_ns);
	if (n < 0) {
		g->no_samples = true;
		return;
	}
	uint64_t now = gs_sm_now();
	for (int i = 0; i < n; i++) {
		/* The first read only marks where we start: older samples
		 * predate the window and this session. */
		if (g->last_sample_ts)
			take_sample(cs, gpu, &d->buf[i], err_ns, now);
		if (d->buf[i].ts > newest) {
			newest = d->buf[i].ts;
			d->last_timed = d->buf[i].timed;
		}
	}
	g->last_sample_ts = newest ? newest : 1;
}

/* Can the timed rule judge us: the samples' instants known, a plan
 * followed, and our own window wide enough for an instant clear of both
 * guards? */
static bool timed_rule_applies(const struct gs_sm_gpu *g)
{
	if (!g->idle || !g->idle->last_timed || !g->coordinated)
		return false;
	const struct gs_coord_plan *p = &g->coord.cur;
	double shortest = (double)p->period_ns * (GS_PLAN_PPM - p->jitter_ppm) / GS_PLAN_PPM;
	double own_ns = shortest * gs_coord_own_ppm(&g->coord) / (double)GS_PLAN_PPM;
	return own_ns >= (double)(TIMED_MIN_GUARDS * SWITCH_GUARD_NS);
}

/* Does the workload use the GPU? Busy unless the samples say otherwise
 * (without samples we cannot tell, and a busy claim only keeps our own
 * window, never takes another's). Lock held. */
static bool workload_busy(const struct gs_compute_share *cs, int gpu, bool has_channels)
{
	const struct gs_sm_gpu *g = &cs->gpu[gpu];
	double w = g->coordinated ? gs_coord_own_ppm(&g->coord) / (double)GS_PLAN_PPM : g->ctl.duty;

	return has_channels && (g->no_samples || !g->idle ||
	                        !gs_idle_rule_idle(&g->idle->rule, w, timed_rule_applies(g)));
}

static void report(struct gs_compute_share *cs, int gpu, bool busy)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	if (g->idle && busy && !g->idle->reported_busy)
		g->idle->alone_since = gs_sm_now() + ALONE_AFTER_MS * NS_PER_MS;
	/* Which rule called it, for tests/sm/multi.sh: the counted one only
	 * after its n quiet samples in a row, however they fell around the
	 * workload's stop. */
	if (cs->debug && g->idle && !busy && g->idle->reported_busy)
		fprintf(stderr, "[gpusandbox sm] gpu%d reported idle: rule %s quiet %u quiet_own %u wall=%.3f\n",
		        gpu, timed_rule_applies(g) && gs_idle_rule_timed_ok(&g->idle->rule) ? "timed" : "counted",
		        g->idle->rule.quiet, g->idle->rule.quiet_own, wall_s());
	if (g->idle)
		g->idle->reported_busy = busy;
	gs_coord_report(&g->coord, busy);
}

void cs_report_busy(struct gs_compute_share *cs, int gpu, bool has_channels)
{
	report(cs, gpu, workload_busy(cs, gpu, has_channels));
}

/* Between windows, while a plan is followed: the samples read so far are
 * added to the window (cs_read_samples skips those already counted, so
 * the window's figures are the same as if read at its edge). A tenant
 * reported idle is reported busy again at once when a sample names it:
 * until the next plan it runs in its own window, which is never lent away
 * from it (plan.h: lent time is shared, not taken). A busy tenant is
 * reported idle at once only on the timed rule's evidence (a quiet sample
 * inside its own window); the counted rule waits for the window's edge,
 * as before: its samples are not independent of the period's phase
 * (docs/compute-share.md, Reports). */
void cs_poll_busy(struct gs_compute_share *cs, int gpu, bool has_channels)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	if (!g->coordinated)
		return;
	cs_read_samples(cs, gpu);
	bool busy = workload_busy(cs, gpu, has_channels);
	if (busy && !g->coord.busy)
		report(cs, gpu, true);
	else if (!busy && g->coord.busy && has_channels && timed_rule_applies(g) &&
	         gs_idle_rule_timed_ok(&g->idle->rule))
		report(cs, gpu, false);
}

struct cs_idle_figures cs_idle_figures(const struct gs_compute_share *cs, int gpu)
{
	const struct cs_idle *d = cs->gpu[gpu].idle;

	if (!d)
		return (struct cs_idle_figures){ 0 };
	return (struct cs_idle_figures){ .own_evidence = d->rule.own_evidence,
	                                 .contradictions = d->rule.contradictions,
	                                 .timed = d->last_timed };
}
