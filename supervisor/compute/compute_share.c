/* SPDX-License-Identifier: MIT */
/*
 * compute_share.c - --sm PCT: the workload's share of GPU time, capped from
 * outside the process.
 *
 * Kernel launches make no system calls (work goes through mapped
 * doorbells), so nothing can be throttled at launch time. Instead a thread
 * of the supervisor runs a duty cycle on the workload's hardware channels
 * with the driver's own control, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS:
 * every period the channels are on for duty * period and off (disabled
 * and preempted) for the rest. The workload cannot undo it: the control is
 * refused to the workload itself, and a workload call that may put a
 * channel back on the runlist is followed by our own disable while the
 * phase is off (reassert_off_phase, told by the sandbox's observer event).
 *
 * The duty is closed-loop. Once a second the thread takes the driver's
 * engine-utilization samples (PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, the
 * source of NVML's per-process utilization) from the process's sampler of
 * the GPU (sampler.c), keeps the samples of this sandbox (idle_report.c),
 * and feeds the measured share to sm_controller.c, which moves the duty
 * until the share meets the target. With several sandboxes on a GPU, a
 * coordinator's plan (coord.h) sets the windows instead, and the samples
 * also say whether the workload is idle (idle_rule.h).
 *
 * This file is the thread and its life; the channel switch and failing
 * closed are actuator.c's.
 *
 * Safety rules, each from a measured failure or from the threat model:
 * - A channel is toggled only after its group was scheduled and had
 *   SETTLE_MS to finish setting up: toggling during CUDA's context set-up
 *   hung it (design.md 1.6). That grace is a budget of off-phase time per
 *   GPU (sm_controller.h, struct sm_grace), so that a workload making new
 *   groups faster than they settle is switched all the same.
 * - bOnlyDisableScheduling stays 0: with 1 the work never resumed.
 * - Every toggle runs under the sandbox lock, so the notify thread cannot
 *   free a channel while we name it, and after reaping clients whose file
 *   was closed, so we never name a dead client whose handle the driver may
 *   have given to someone else.
 * - The call is made through our own dup of the client's open file, taken
 *   afresh each time and checked (kcmp) to be that file. While we hold it
 *   the file, and so the client, cannot be released under us.
 * - Everything we disabled is enabled again when the thread stops, and
 *   before the workload is killed on a controller error. If channels
 *   cannot be reached (their file is held where we cannot see it) the cap
 *   cannot be kept, and the workload is killed: fail closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compute_internal.h"
#include "gpusandbox.h"
#include "session.h"
#include "sm_clock.h"
#include "test_switch.h"
#include "workload.h"

/* Each period's length is drawn from period * (1 +- PERIOD_JITTER). The
 * driver takes a utilization sample every ~200 ms, a multiple of the
 * usual periods: with a fixed period every sample would land at the same
 * phase of the cycle and see the same tenant on the engine (measured on
 * the H200 with two sandboxes sharing it). */
#define PERIOD_JITTER 0.25
/* Samples naming another process mean the GPU is shared. Each sample
 * credits the whole interval to one process, so a shared GPU needs many
 * samples per measurement: CONTENDED_WINDOW_SAMPLES, for a while after
 * the last foreign sample (idle_report.c). */
#define CONTENDED_WINDOW_SAMPLES 25u
/* How often the duty is re-tuned, and the fewest samples that make a
 * measurement. */
#define WINDOW_MS 1000u
#define MIN_WINDOW_SAMPLES 3u
/* Adjustments are audited at most this often per GPU, unless the duty
 * moved by more than AUDIT_DUTY_STEP. */
#define AUDIT_MIN_INTERVAL_MS 5000u
#define AUDIT_DUTY_STEP 0.05
/* Windows left out of the achieved-share figure while the loop settles. */
#define WARMUP_WINDOWS 3u
/* While a coordinator's plan is followed, the samples are read this often
 * between windows (idle_report.c cs_poll_busy), so that a tenant that
 * wakes is reported busy at the first sample that names it (one every
 * ~200 ms on a GPU, FAKE_SAMPLE_MS on the fake), and one whose own window
 * went unused is reported idle at the first sample that shows it, not at
 * the next window's edge. */
#define IDLE_POLL_MS 50u
/* How long the duty cycle waits for the sandbox lock before it turns
 * channels off without it, and how often it tries again. */
#define LOCK_WAIT_MS 1u
#define LOCK_RETRY_MS 1u
#define PERCENT 100.0

/* A period length with jitter (xorshift: no need for a good generator, only
 * for phases that do not repeat). */
static uint64_t jittered_period(struct gs_compute_share *cs, uint64_t period)
{
	uint64_t x = cs->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	cs->rng = x;
	double u = (double)(x >> 11) / (double)(1ull << 53);  /* [0, 1) */
	return (uint64_t)((double)period * (1.0 + PERIOD_JITTER * (2.0 * u - 1.0)));
}

/* Audits the plan we follow when its shape changes, and warns once when
 * the GPU is oversubscribed. Lock held. */
static void note_plan(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	const struct gs_coord_plan *p = &g->coord.cur;

	if (!g->coordinated || (p->tenants == g->audited_plan_tenants &&
	                        p->asked_percent == g->audited_plan_asked))
		return;
	if (p->asked_percent > PERCENT && g->audited_plan_asked <= PERCENT)
		fprintf(stderr, "gpusandbox: warning: GPU %d is oversubscribed: %u tenants ask for %u %% "
		        "of its time; every share is scaled by 100/%u\n", gpu, p->tenants,
		        p->asked_percent, p->asked_percent);
	g->audited_plan_tenants = p->tenants;
	g->audited_plan_asked = p->asked_percent;
	struct gs_sm_plan_info info = { .gpu = (unsigned)gpu, .tenants = p->tenants,
	                                .asked_percent = p->asked_percent,
	                                .oversubscribed = p->asked_percent > PERCENT,
	                                .own_share = p->slot.own.len / (double)GS_PLAN_PPM,
	                                .on_share = p->slot.on_ppm / (double)GS_PLAN_PPM };
	if (cs->sb->audit && gs_audit_sm_plan(cs->sb->audit, &info) < 0)
		cs->sb->audit_failed = true;
}

/* Closes a window: the measured share re-tunes the duty, unless a plan
 * set our windows (the duty is then kept for when we run alone again: a
 * share another tenant's window limited must not raise our own cap).
 * Lock held. */
static void close_window(struct gs_compute_share *cs, int gpu, uint64_t t, bool has_channels)
{
	struct gs_session *sb = cs->sb;
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	cs_read_samples(cs, gpu);
	cs_report_busy(cs, gpu, has_channels);
	note_plan(cs, gpu);
	if (g->coordinated) {
		g->win_util = 0;
		g->win_n = 0;
		return;
	}
	unsigned need = t < g->contended_until ? CONTENDED_WINDOW_SAMPLES : MIN_WINDOW_SAMPLES;
	if (g->no_samples || g->win_n < need)
		return;
	double share = g->win_util / g->win_n;
	double before = g->ctl.duty;
	double after = sm_ctl_update(&g->ctl, share);
	unsigned n = g->win_n;

	g->win_util = 0;
	g->win_n = 0;
	g->windows++;
	if (g->windows > WARMUP_WINDOWS && share >= SM_IDLE_SHARE) {
		g->share_sum += share;
		g->share_n++;
		g->last_busy_share = share;
	}
	if (cs->debug)
		fprintf(stderr, "[gpusandbox sm] gpu%d window %u: share %.3f duty %.3f -> %.3f (%u samples%s)\n",
		        gpu, g->windows, share, before, after, n, t < g->contended_until ? ", shared" : "");
	bool moved = after - g->audited_duty > AUDIT_DUTY_STEP || g->audited_duty - after > AUDIT_DUTY_STEP;
	if (sb->audit && (moved || t - g->audited_ns >= AUDIT_MIN_INTERVAL_MS * NS_PER_MS)) {
		struct gs_sm_adjust adj = { .gpu = (unsigned)gpu, .target_percent = cs->percent,
		                            .measured_share = share, .duty_before = before,
		                            .duty_after = after, .samples = n };
		if (gs_audit_sm_adjust(sb->audit, &adj) < 0)
			sb->audit_failed = true;
		g->audited_duty = after;
		g->audited_ns = t;
	}
}

/* ---- the thread ------------------------------------------------------------ */

/* Should GPU g's channels be off at now, and when may that next change?
 * A plan from the GPU's coordinator decides when there is one to follow;
 * otherwise our own hard-cap duty cycle does (coord.h: failing closed). */
static bool want_off(struct gs_compute_share *cs, struct gs_sm_gpu *g, uint64_t now, uint64_t *edge)
{
	bool on;

	g->coordinated = gs_coord_schedule(&g->coord, now, &on, edge);
	if (g->coordinated)
		return !on;
	if (now >= g->period_start + g->period_len) {
		g->period_start = now;
		g->period_len = jittered_period(cs, (uint64_t)cs->period_ms * NS_PER_MS);
	}
	const uint64_t end = g->period_start + g->period_len;
	const uint64_t off_at = g->period_start + (uint64_t)(g->ctl.duty * (double)g->period_len);
	if (!sm_ctl_throttling(&g->ctl) || now < off_at) {
		*edge = sm_ctl_throttling(&g->ctl) ? off_at : end;
		return false;
	}
	*edge = end;
	return true;
}

/* The GPU's RM id, which names it to the coordinator host-wide. */
static bool gpu_id_of_minor(const struct gs_session *sb, unsigned minor, uint32_t *id)
{
	for (unsigned i = 0; i < sb->n_gpu_map; i++)
		if (sb->gpu_map[i].minor == minor) {
			*id = sb->gpu_map[i].gpu_id;
			return true;
		}
	return false;
}

static void start_gpu(struct gs_compute_share *cs, unsigned gpu)
{
	struct gs_sm_gpu *s = &cs->gpu[gpu];
	uint32_t id = 0;
	bool known = gpu_id_of_minor(cs->sb, gpu, &id);

	s->seen = true;
	sm_ctl_init(&s->ctl, cs->percent / PERCENT);
	sm_grace_init(&s->grace, gs_sm_now());
	s->audited_duty = s->ctl.duty;
	gs_coord_init(&s->coord, known ? cs->coord_dir : NULL, id, cs->percent, cs->mode, cs->period_ms);
	cs_idle_start(cs, (int)gpu, known, id);
	/* The workload's channels run until our first off. */
	cs_idle_note_switch(cs, (int)gpu, false, gs_sm_now());
}

/* One pass: every GPU's channels are switched to what its schedule says
 * now. Returns the earliest time anything changes. Lock held. */
static uint64_t switch_gpus(struct gs_compute_share *cs, uint64_t now, const uint32_t counts[])
{
	uint64_t next = now + WINDOW_MS * NS_PER_MS;
	bool ok = true;

	for (unsigned g = 0; g < GS_MAX_GPUS && ok; g++) {
		struct gs_sm_gpu *s = &cs->gpu[g];
		uint64_t edge = next;
		if (counts[g] && !s->seen)
			start_gpu(cs, g);
		if (!s->seen)
			continue;
		bool off = counts[g] && want_off(cs, s, now, &edge);
		cs_idle_note_plan(cs, (int)g, now);
		if (off != s->off) {
			uint64_t t0 = gs_sm_now();
			ok = cs_set_gpu_channels(cs, (int)g, off, off ? &s->off_cache : NULL);
			uint64_t t1 = gs_sm_now();
			gs_sm_note_switch(s, t0, t1, off);
			/* Surely off only from the switch's start, surely on
			 * only from its end. */
			cs_idle_note_switch(cs, (int)g, off, off ? t0 : t1);
			s->off = off;
		}
		if (edge < next)
			next = edge;
	}
	if (!ok)
		cs_fail(cs);
	return next;
}

/* The sandbox lock, if it comes within LOCK_WAIT_MS: a notify worker may
 * hold it in a read the workload keeps waiting (off_cache.h). */
static bool lock_soon(pthread_mutex_t *m)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(LOCK_WAIT_MS * NS_PER_MS);
	if (ts.tv_nsec >= (long)GS_NS_PER_S) {
		ts.tv_sec++;
		ts.tv_nsec -= (long)GS_NS_PER_S;
	}
	return pthread_mutex_timedlock(m, &ts) == 0;
}

/* Without the lock: every GPU whose schedule says off and whose channels
 * are on is turned off from its cache. Nothing is turned on (that waits
 * for the lock, LOCK_RETRY_MS from now). Returns the earliest time any
 * GPU's schedule changes. */
static uint64_t off_without_lock(struct gs_compute_share *cs, uint64_t now)
{
	uint64_t next = now + WINDOW_MS * NS_PER_MS;

	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		struct gs_sm_gpu *s = &cs->gpu[g];
		uint64_t edge = next;
		if (!s->seen)
			continue;
		bool off = want_off(cs, s, now, &edge);
		if (edge < next)
			next = edge;
		if (!s->off_cache.n || !off || s->off)
			continue;
		cs_idle_note_switch(cs, (int)g, true, gs_sm_now());
		(void)gs_off_cache_disable(&s->off_cache);
		s->off_since_ns = gs_sm_now();
		s->off = true;
		s->off_without_lock = true;
		s->lockless_offs++;
	}
	return next;
}

/* The wait before the next try for the lock, after an off pass made
 * without it. On the test's clock, which otherwise moves only under the
 * lock (a workload call happens at one instant of it), time passes while
 * the lock's holder waits on the workload's memory (the workload's own
 * stall, tests/sm/run.sh stall): the clock goes on to the schedule's next
 * edge, where this pass runs again; so a stall the workload makes lasts
 * on the clock the GPU time it would, and the off edges inside it are
 * kept without the lock. Otherwise LOCK_RETRY_MS of real time, the
 * clock standing still. */
static void lockless_wait(struct gs_compute_share *cs, uint64_t now, uint64_t edge)
{
	if (!gs_sm_on_test_clock() || !gs_workload_mem_in_flight()) {
		gs_sm_wait_ms(LOCK_RETRY_MS);
		return;
	}
	gs_sm_sleep_until(&cs->clock, edge > now ? edge : now + LOCK_RETRY_MS * NS_PER_MS);
	(void)gs_sm_catch_up(&cs->clock);
}

/* After an off made without the lock, the ledger does not know what is
 * off: a locked off pass says it again, so that the on pass finds it. */
static bool resync_lockless(struct gs_compute_share *cs)
{
	bool ok = true;

	for (unsigned g = 0; g < GS_MAX_GPUS && ok; g++)
		if (cs->gpu[g].off_without_lock) {
			ok = cs_set_gpu_channels(cs, (int)g, true, &cs->gpu[g].off_cache);
			cs->gpu[g].off_without_lock = false;
		}
	return ok;
}

/* Does any GPU follow a coordinator's plan (and so poll for busy)? */
static bool any_coordinated(const struct gs_compute_share *cs)
{
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen && cs->gpu[g].coordinated)
			return true;
	return false;
}

static void *duty_cycle_thread(void *arg)
{
	struct gs_compute_share *cs = arg;
	struct gs_session *sb = cs->sb;
	uint64_t next_window = gs_sm_now() + WINDOW_MS * NS_PER_MS;
	uint64_t next_poll = next_window;

	while (!atomic_load(&cs->stop)) {
		uint32_t counts[GS_MAX_GPUS];
		uint64_t t = gs_sm_now();

		/* The coordinator first, without the sandbox lock: it never
		 * blocks, and it needs nothing of the sandbox. */
		for (unsigned g = 0; g < GS_MAX_GPUS; g++)
			if (cs->gpu[g].seen)
				gs_coord_tick(&cs->gpu[g].coord, t);
		if (!lock_soon(&sb->lock)) {
			lockless_wait(cs, t, off_without_lock(cs, t));
			continue;
		}
		/* The test's clock moves here, under the lock: a workload call
		 * (which holds it) happens at one instant of it; or in
		 * lockless_wait, while the call waits on the workload. */
		if (gs_sm_catch_up(&cs->clock))
			t = gs_sm_now();
		if (!resync_lockless(cs))
			cs_fail(cs);
		ledger_count_channels(&sb->ledger, counts);
		uint64_t wake = atomic_load(&cs->stop) ? t : switch_gpus(cs, t, counts);
		if (t >= next_window && !atomic_load(&cs->stop)) {
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				if (cs->gpu[g].seen)
					close_window(cs, (int)g, t, counts[g] != 0);
			next_window = t + WINDOW_MS * NS_PER_MS;
			next_poll = t + IDLE_POLL_MS * NS_PER_MS;
		} else if (t >= next_poll && !atomic_load(&cs->stop)) {
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				if (cs->gpu[g].seen)
					cs_poll_busy(cs, (int)g, counts[g] != 0);
			next_poll = t + IDLE_POLL_MS * NS_PER_MS;
		}
		pthread_mutex_unlock(&sb->lock);
		uint64_t until = wake < next_window ? wake : next_window;
		if (any_coordinated(cs) && next_poll < until)
			until = next_poll;
		gs_sm_sleep_until(&cs->clock, until);
	}
	return NULL;
}

static enum gs_sm_mechanism mechanism_from_env(void)
{
	static const struct {
		const char *name;
		enum gs_sm_mechanism m;
	} names[] = {
		{ "group-schedule", GS_SM_GROUP_SCHEDULE },
		{ "group-preempt", GS_SM_GROUP_PREEMPT },
		{ "channel-schedule", GS_SM_CHANNEL_SCHEDULE },
	};
	const char *v = getenv("GPUSANDBOX_SM_MECHANISM");

	for (size_t i = 0; v && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i].name) == 0)
			return names[i].m;
	return GS_SM_DISABLE_CHANNELS;
}

int gs_sm_start(struct gs_compute_share *cs, struct gs_session *sb, struct gs_error *err)
{
	sigset_t all, old;
	const char *dbg = getenv("GPUSANDBOX_SM_DEBUG");
	int rc;

	memset(cs, 0, sizeof(*cs));
	cs->sb = sb;
	cs->percent = sb->quota.sm_percent;
	cs->period_ms = sb->quota.sm_period_ms;
	cs->mode = sb->quota.sm_mode;
	/* A directory we cannot trust (not ours, open to others) is not
	 * used: this sandbox then keeps its own hard cap. */
	cs->coord_dir = gs_coord_dir();
	if (cs->coord_dir && gs_coord_dir_ready(cs->coord_dir) < 0) {
		fprintf(stderr, "gpusandbox: warning: --sm: the coordinator directory %s cannot be used "
		        "(not a directory of ours closed to others); this sandbox runs its own duty "
		        "cycle\n", cs->coord_dir);
		cs->coord_dir = NULL;
	}
	cs->debug = dbg && *dbg == '1';
	cs->rng = gs_monotonic_ns() | 1u;
	cs->mechanism = mechanism_from_env();
	cs->test_settle_unbounded = gs_test_switch("GPUSANDBOX_TEST_SM_SETTLE_UNBOUNDED") != NULL;
	cs->test_reassert_known_gpu = gs_test_switch("GPUSANDBOX_TEST_SM_REASSERT_KNOWN_GPU") != NULL;
	/* The clock the tests of the share keep (sm_clock.h); the first
	 * session of the process decides, before any sampler is opened. */
	if (gs_sm_clock_start(gs_test_switch("GPUSANDBOX_TEST_SM_CLOCK")) < 0)
		return gs_fail(err, errno, "--sm: mapping the test's clock");
	/* This session's duty thread is a participant of its own: the
	 * agent's containers each run one in one process. */
	if (gs_sm_clock_join(&cs->clock) < 0)
		return gs_fail(err, EAGAIN, "--sm: no participant's slot left on the test's clock");
	/* The samples come from the process's sampler of each GPU, opened
	 * when the GPU is first seen (idle_report.c); without one the loop
	 * runs open (duty = target), which still caps, less exactly. */
	/* The notify thread already runs and reads these with the lock held
	 * (gs_session_emit_channels_may_resume). */
	pthread_mutex_lock(&sb->lock);
	sb->sm = cs;
	/* Channels are dated on the clock their settling is judged on (the
	 * actuator's now): on the test's clock too, so that a channel's
	 * settling time is that clock's. Those dated before (on
	 * CLOCK_MONOTONIC) lie far in the test clock's past (test_clock.h):
	 * settled, switched like any other. */
	sb->ledger.clock_ns = gs_sm_now;
	sb->observer = (struct gs_session_observer){ .channels_may_resume = cs_reassert_off_phase,
	                                             .resume_call = cs_resume_call,
	                                             .ctx = cs };
	pthread_mutex_unlock(&sb->lock);
	/* The thread must not take the workload's signals (signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&cs->thread, NULL, duty_cycle_thread, cs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_mutex_lock(&sb->lock);
		sb->sm = NULL;
		sb->observer = (struct gs_session_observer){ 0 };
		pthread_mutex_unlock(&sb->lock);
		gs_sm_clock_stop(&cs->clock);
		return gs_fail(err, rc, "--sm: starting the duty-cycle thread");
	}
	cs->started = true;
	return 0;
}

void gs_sm_stop(struct gs_compute_share *cs)
{
	if (!cs->started)
		return;
	atomic_store(&cs->stop, true);
	pthread_join(cs->thread, NULL);
	gs_sm_clock_stop(&cs->clock);
	cs->started = false;
	pthread_mutex_lock(&cs->sb->lock);
	cs_enable_everything(cs);
	pthread_mutex_unlock(&cs->sb->lock);
	gs_sm_print_figures(cs);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen) {
			gs_coord_close(&cs->gpu[g].coord);
			gs_off_cache_fini(&cs->gpu[g].off_cache);
			cs_idle_stop(cs, (int)g);
		}
	free(cs->chans);
	cs->chans = NULL;
	cs->cap_chans = 0;
}

/* The mean measured share over the busy windows after the warm-up. The
 * last one is left out when there are others: the workload's exit cuts it
 * short (measured on two H200s: 0.09 against 0.49 before it). */
static double achieved_share(const struct gs_sm_gpu *s)
{
	if (s->share_n > 1)
		return (s->share_sum - s->last_busy_share) / (s->share_n - 1);
	return s->share_n ? s->share_sum : 0;
}

void gs_sm_summary(const struct gs_compute_share *cs, struct gs_sm_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->target_percent = cs->percent;
	out->period_ms = cs->period_ms;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		const struct gs_sm_gpu *s = &cs->gpu[g];
		if (!s->seen)
			continue;
		out->gpu[out->n++] = (struct gs_sm_gpu_summary){
			.gpu = g,
			.achieved_share = achieved_share(s),
			.busy_windows = s->share_n > 1 ? s->share_n - 1 : s->share_n,
			.windows = s->windows,
			.duty = s->ctl.duty,
			.toggles = s->toggles,
			.open_loop = s->no_samples,
		};
	}
}
