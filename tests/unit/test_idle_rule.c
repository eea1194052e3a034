/* SPDX-License-Identifier: MIT */
/*
 * test_idle_rule.c - the compute share's idle rule and sample clock
 * (supervisor/compute/idle_rule.c): the mapping of a GPU timestamp onto
 * CLOCK_MONOTONIC, the span rings, the classification of a sample, the
 * timed and counted rules, and simulations of the shared plan (its
 * period's jitter and rotation): how long the timed rule takes to see a
 * tenant stop, and how often the counted rule calls a busy one idle
 * (printed, and bounded).
 */
#include <stdlib.h>

#include "check.h"
#include "idle_rule.h"
#include "plan.h"

#define MS 1000000ull
#define US 1000ull
#define PTIMER_BASE 1795485319455885536ull   /* a wall clock in ns, as RM loads PTIMER */

static void test_ts_map(void)
{
	struct gs_ts_map m;
	uint64_t mono = 0;

	gs_ts_map_reset(&m);
	CHECK(!gs_ts_map_to_mono(&m, PTIMER_BASE, &mono));
	/* A 40 us bracket: the middle, within 20 us. */
	gs_ts_map_add(&m, 1000 * MS, PTIMER_BASE, 1000 * MS + 40 * US);
	CHECK(m.valid && m.err_ns == 20 * US);
	CHECK(gs_ts_map_to_mono(&m, PTIMER_BASE + 5 * MS, &mono) && mono == 1005 * MS + 20 * US);
	/* A wider bracket does not replace it; a tighter one does. */
	gs_ts_map_add(&m, 2000 * MS, PTIMER_BASE + 999 * MS, 2000 * MS + 100 * US);
	CHECK(m.err_ns == 20 * US);
	gs_ts_map_add(&m, 3000 * MS, PTIMER_BASE + 2000 * MS + 3 * US, 3000 * MS + 6 * US);
	CHECK(m.err_ns == 3 * US);
	CHECK(gs_ts_map_to_mono(&m, PTIMER_BASE + 2000 * MS + 3 * US, &mono) && mono == 3000 * MS + 3 * US);
	/* A bracket running backwards or a zero GPU time is no reading. */
	gs_ts_map_reset(&m);
	gs_ts_map_add(&m, 10 * MS, PTIMER_BASE, 9 * MS);
	gs_ts_map_add(&m, 10 * MS, 0, 11 * MS);
	CHECK(!m.valid);
	/* An unset timestamp is never mapped. */
	gs_ts_map_add(&m, 10 * MS, PTIMER_BASE, 11 * MS);
	CHECK(!gs_ts_map_to_mono(&m, 0, &mono));
}

static void test_spans(void)
{
	static struct gs_span_ring r;
	const uint64_t g = 2 * MS;

	CHECK(!gs_span_inside(&r, 10 * MS, 0, 100 * MS) && !gs_span_outside(&r, 10 * MS, 0, 100 * MS));
	gs_span_add(&r, 100 * MS, 120 * MS);
	gs_span_add(&r, 100 * MS, 120 * MS);   /* the same window twice is one */
	CHECK(r.n == 1);
	CHECK(gs_span_inside(&r, 110 * MS, g, 500 * MS));
	CHECK(gs_span_inside(&r, 102 * MS, g, 500 * MS) && !gs_span_inside(&r, 101 * MS, g, 500 * MS));
	CHECK(gs_span_inside(&r, 118 * MS, g, 500 * MS) && !gs_span_inside(&r, 119 * MS, g, 500 * MS));
	/* Outside: after the history starts, clear of every span by the guard. */
	CHECK(gs_span_outside(&r, 130 * MS, g, 500 * MS) && !gs_span_outside(&r, 121 * MS, g, 500 * MS));
	CHECK(!gs_span_outside(&r, 90 * MS, g, 500 * MS));   /* before what we know */
	CHECK(!gs_span_outside(&r, 600 * MS, g, 500 * MS));  /* after now */
	/* An open span runs until now. */
	gs_span_open(&r, 200 * MS);
	CHECK(gs_span_inside(&r, 250 * MS, g, 300 * MS) && !gs_span_inside(&r, 299 * MS, g, 300 * MS));
	CHECK(!gs_span_outside(&r, 250 * MS, g, 300 * MS));
	gs_span_close(&r, 210 * MS);
	CHECK(!gs_span_inside(&r, 250 * MS, g, 300 * MS) && gs_span_outside(&r, 250 * MS, g, 300 * MS));
	/* The ring keeps the newest GS_SPAN_RING spans. */
	for (uint64_t k = 0; k < 2 * GS_SPAN_RING; k++)
		gs_span_add(&r, (1000 + 10 * k) * MS, (1005 + 10 * k) * MS);
	CHECK(r.n == GS_SPAN_RING);
	CHECK(!gs_span_inside(&r, 1002 * MS, 0, 1000000 * MS));
	uint64_t last = 1000 + 10 * (2 * GS_SPAN_RING - 1);
	CHECK(gs_span_inside(&r, (last + 2) * MS, 0, 1000000 * MS));
}

/* Our own window [100, 125) ms alone since 0, channels on [100.5, 125). */
static void place_setup(struct gs_span_ring *own, struct gs_span_ring *runs)
{
	gs_span_add(own, 100 * MS, 125 * MS);
	gs_span_add(runs, 100 * MS + 500 * US, 125 * MS);
}

static void test_classify(void)
{
	static struct gs_span_ring own, runs;
	struct gs_sample_place p = { .timed = true, .guard = 2 * MS, .alone_since = 0, .now = 400 * MS };

	place_setup(&own, &runs);
	p.t = 110 * MS;
	CHECK(gs_sample_classify(false, &p, &own, &runs) == GS_SAMPLE_QUIET_OWN);
	CHECK(gs_sample_classify(true, &p, &own, &runs) == GS_SAMPLE_NAMES_US);
	p.t = 101 * MS;   /* within the guard of the switch */
	CHECK(gs_sample_classify(false, &p, &own, &runs) == GS_SAMPLE_QUIET);
	p.t = 150 * MS;   /* someone else's window */
	CHECK(gs_sample_classify(false, &p, &own, &runs) == GS_SAMPLE_QUIET);
	CHECK(gs_sample_classify(true, &p, &own, &runs) == GS_SAMPLE_NAMES_US_OFF);
	p.t = 126 * MS;   /* our drain after the off */
	CHECK(gs_sample_classify(true, &p, &own, &runs) == GS_SAMPLE_NAMES_US);
	/* Before the window was ours alone (a borrower may run in it). */
	p.t = 110 * MS;
	p.alone_since = 120 * MS;
	CHECK(gs_sample_classify(false, &p, &own, &runs) == GS_SAMPLE_QUIET);
	/* Untimed: only whether it names us. */
	p.timed = false;
	p.alone_since = 0;
	CHECK(gs_sample_classify(false, &p, &own, &runs) == GS_SAMPLE_QUIET);
	CHECK(gs_sample_classify(true, &p, &own, &runs) == GS_SAMPLE_NAMES_US);
	/* Our own window but channels not on (our switch came late). */
	static struct gs_span_ring late;
	gs_span_add(&late, 115 * MS, 125 * MS);
	p.timed = true;
	CHECK(gs_sample_classify(false, &p, &own, &late) == GS_SAMPLE_QUIET);
}

static void test_rules(void)
{
	struct gs_idle_rule r = { 0 };

	/* The counted rule: 5 samples at least, 7 for a 50 % window
	 * (0.5^7 < 1 %), 13 for 30 %, and the ceiling for a sliver. */
	CHECK(gs_idle_after_samples(1.0) == GS_IDLE_SAMPLES_MIN);
	CHECK(gs_idle_after_samples(0.5) == 7);
	CHECK(gs_idle_after_samples(0.3) == 13);
	CHECK(gs_idle_after_samples(0.001) == GS_IDLE_SAMPLES_MAX);
	for (unsigned i = 0; i < 6; i++)
		gs_idle_rule_note(&r, GS_SAMPLE_QUIET);
	CHECK(!gs_idle_rule_idle(&r, 0.5, false));
	gs_idle_rule_note(&r, GS_SAMPLE_QUIET);
	CHECK(gs_idle_rule_idle(&r, 0.5, false));
	/* Where the timed rule applies, quiet samples elsewhere prove nothing. */
	CHECK(!gs_idle_rule_idle(&r, 0.5, true));
	gs_idle_rule_note(&r, GS_SAMPLE_NAMES_US);   /* busy at once */
	CHECK(!gs_idle_rule_idle(&r, 0.5, false) && r.quiet == 0);
	/* The timed rule: one quiet sample in our own window. */
	gs_idle_rule_note(&r, GS_SAMPLE_QUIET);
	CHECK(!gs_idle_rule_idle(&r, 0.5, true));
	gs_idle_rule_note(&r, GS_SAMPLE_QUIET_OWN);
	CHECK(gs_idle_rule_idle(&r, 0.5, true) && r.own_evidence == 1);
	CHECK(!gs_idle_rule_idle(&r, 0.5, false));   /* 2 quiet of 7 */
	gs_idle_rule_note(&r, GS_SAMPLE_NAMES_US);
	CHECK(!gs_idle_rule_idle(&r, 0.5, true) && r.quiet_own == 0);
	/* Contradictions (named while surely off) give the timed rule up,
	 * and still count as busy. */
	gs_idle_rule_note(&r, GS_SAMPLE_NAMES_US_OFF);
	CHECK(gs_idle_rule_timed_ok(&r) && r.quiet == 0);
	gs_idle_rule_note(&r, GS_SAMPLE_NAMES_US_OFF);
	CHECK(!gs_idle_rule_timed_ok(&r));
	gs_idle_rule_note(&r, GS_SAMPLE_QUIET_OWN);
	CHECK(!gs_idle_rule_idle(&r, 0.5, true));   /* only the counted rule now */
	for (unsigned i = 0; i < 6; i++)
		gs_idle_rule_note(&r, GS_SAMPLE_QUIET_OWN);
	CHECK(gs_idle_rule_idle(&r, 0.5, true));
}

/* The coordinator's jitter (coord_server.c JITTER_PPM). Wider jitter
 * (+-37.5 %, +-50 %) was tried here: at a sample every 200 ms it moved
 * the mean and p95 by under 10 %, as the samples 4 periods apart are
 * already nearly independent of the phase; the sample rate, not their
 * correlation, sets the time. */
static const uint32_t sim_jitter = 250000;
/* The shared plan's shortest period (coord_server.c). */
static const uint64_t sim_base = 100 * MS;

/* Our own window (a fraction w of a two-tenant plan, from its start) in
 * the period starting at k_start, rotated as gs_coord_schedule rotates it
 * (at one of the plan's two starts), or not; our channels go on 0.3 ms
 * after each piece opens. */
static void add_period(struct gs_span_ring *own, struct gs_span_ring *runs, uint64_t seed, uint64_t k,
                       uint64_t k_start, uint64_t k_len, double w, bool rotate)
{
	const uint32_t len = (uint32_t)(w * GS_PLAN_PPM), starts[2] = { 0, len };
	struct gs_plan_window win = { 0, len }, piece[2];
	unsigned n = gs_plan_window_raw(win, rotate ? gs_plan_rotation_ppm(seed, k, starts, 2) : 0, piece);

	for (unsigned i = 0; i < n; i++) {
		uint64_t from = k_start + (uint64_t)((unsigned __int128)piece[i].offset * k_len / GS_PLAN_PPM);
		uint64_t to = k_start + (uint64_t)((unsigned __int128)(piece[i].offset + piece[i].len) * k_len /
		                                   GS_PLAN_PPM);
		gs_span_add(own, from, to);
		gs_span_add(runs, from + 300 * US, to);
	}
}

/* A 50/50 plan with the coordinator's period (+-25 % from a seed, rotated),
 * samples every interval_ms at a random phase. We stop at a random
 * instant; returns the ms from the stop to the instant of the first
 * sample the timed rule calls idle on, or -1 if none came within 10 s. */
static long detect_ms(uint64_t seed, unsigned interval_ms, double w)
{
	static struct gs_span_ring own, runs;
	const uint64_t horizon = 20000 * MS;
	struct gs_idle_rule r = { 0 };
	uint64_t stop = 5000 * MS + (uint64_t)(rand() % 1000) * MS;
	uint64_t t = (uint64_t)(rand() % (int)interval_ms) * MS;
	uint64_t k = 0, k_start = 0, k_len = gs_plan_period_ns(sim_base, sim_jitter, seed, 0);

	own = (struct gs_span_ring){ 0 };
	runs = (struct gs_span_ring){ 0 };
	for (; t < horizon; t += (uint64_t)interval_ms * MS) {
		while (k_start + k_len <= t) {
			add_period(&own, &runs, seed, k, k_start, k_len, w, true);
			k_start += k_len;
			k_len = gs_plan_period_ns(sim_base, sim_jitter, seed, ++k);
		}
		add_period(&own, &runs, seed, k, k_start, k_len, w, true);
		struct gs_sample_place p = { .timed = true, .t = t, .guard = 2 * MS + 20 * US,
		                             .alone_since = 0, .now = t };
		/* Busy until the stop: in our window a sample names us. */
		bool ours = t < stop && gs_span_inside(&runs, t, 0, t);
		gs_idle_rule_note(&r, gs_sample_classify(ours, &p, &own, &runs));
		if (t < stop && gs_idle_rule_idle(&r, w, true))
			return -2;   /* called idle while busy: never, for a busy tenant */
		if (t >= stop && gs_idle_rule_idle(&r, w, true))
			return (long)((t - stop) / MS);
	}
	return -1;
}

/* The counted rule's false idles: a tenant always busy in its own window
 * (a fraction w of a base_ms plan, rotated or not), a sample every
 * interval_ms at a random phase naming it when it falls in its window;
 * how many times per simulated hour the rule calls it idle (the streak
 * then starts again). Were the samples independent, a call comes once
 * per 1 / (w (1 - w)^n) samples in a row. */
static double false_idles_per_hour(uint64_t base_ms, unsigned interval_ms, double w, bool rotate)
{
	static struct gs_span_ring own, runs;
	const unsigned runs_n = 40;
	const uint64_t horizon = 90000 * MS;
	unsigned calls = 0;

	for (unsigned run = 0; run < runs_n; run++) {
		uint64_t seed = 77 + run, k = 0, k_start = 0;
		uint64_t k_len = gs_plan_period_ns(base_ms * MS, sim_jitter, seed, 0);
		struct gs_idle_rule r = { 0 };

		own = (struct gs_span_ring){ 0 };
		runs = (struct gs_span_ring){ 0 };
		for (uint64_t t = (uint64_t)(rand() % (int)interval_ms) * MS; t < horizon;
		     t += (uint64_t)interval_ms * MS) {
			while (k_start + k_len <= t) {
				k_start += k_len;
				k_len = gs_plan_period_ns(base_ms * MS, sim_jitter, seed, ++k);
			}
			add_period(&own, &runs, seed, k, k_start, k_len, w, rotate);
			bool ours = gs_span_inside(&runs, t, 0, t);
			gs_idle_rule_note(&r, ours ? GS_SAMPLE_NAMES_US : GS_SAMPLE_QUIET);
			if (gs_idle_rule_idle(&r, w, false)) {
				calls++;
				r = (struct gs_idle_rule){ 0 };
			}
		}
	}
	return calls * 3600.0 / (runs_n * (double)(horizon / MS) / 1000.0);
}

static void simulate_counted(void)
{
	const unsigned interval = 100;   /* the fake's FAKE_SAMPLE_MS */
	const double w = 0.5;
	uint32_t n = gs_idle_after_samples(w);
	double miss = 1.0;
	for (uint32_t i = 0; i < n; i++)
		miss *= 1.0 - w;
	double indep = 3600.0 * 1000.0 / interval * w * miss;

	srand(11);
	double fixed100 = false_idles_per_hour(100, interval, w, false);
	double rot100 = false_idles_per_hour(100, interval, w, true);
	double fixed50 = false_idles_per_hour(50, interval, w, false);
	double rot50 = false_idles_per_hour(50, interval, w, true);
	double fixed30 = false_idles_per_hour(100, interval, 0.3, false);
	double rot30 = false_idles_per_hour(100, interval, 0.3, true);
	printf("counted idle rule, busy 50 %% tenant, a sample every %u ms: false idles per hour: "
	       "independent samples %.0f; 100 ms plan fixed %.0f, rotated %.0f; 50 ms fixed %.0f, rotated %.0f; "
	       "30 %% tenant, 100 ms: fixed %.0f, rotated %.0f\n",
	       interval, indep, fixed100, rot100, fixed50, rot50, fixed30, rot30);
	/* Rotated, a 50/50 plan's samples are as good as independent; fixed,
	 * a period near the sample interval makes misses come in long runs.
	 * A 30 % window rotated at the plan's starts is not met evenly (a
	 * sample in the middle 40 % of a 30/70 period never meets it), but
	 * still far better than fixed. */
	CHECK(rot100 < indep * 1.5 && rot50 < indep * 1.5);
	CHECK(fixed100 > rot100 * 2 && fixed30 > rot30 * 2);
}

static void simulate(unsigned interval_ms, double w, long mean_max, long p95_max)
{
	enum { RUNS = 400 };
	long d[RUNS], sum = 0;
	unsigned bad = 0;

	srand(7);
	for (unsigned i = 0; i < RUNS; i++) {
		d[i] = detect_ms(1000 + i, interval_ms, w);
		bad += d[i] < 0;
		sum += d[i] > 0 ? d[i] : 0;
	}
	for (unsigned i = 1; i < RUNS; i++)
		for (unsigned j = i; j > 0 && d[j] < d[j - 1]; j--) {
			long x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	long mean = sum / RUNS, p95 = d[RUNS * 95 / 100];
	printf("timed idle rule, samples every %u ms, window %.0f %% of 100 ms +-25 %%, rotated: stop to evidence "
	       "mean %ld ms, median %ld, p95 %ld, max %ld\n", interval_ms, w * 100, mean, d[RUNS / 2], p95,
	       d[RUNS - 1]);
	CHECK(bad == 0);
	CHECK(mean <= mean_max && p95 <= p95_max);
}

int main(void)
{
	test_ts_map();
	test_spans();
	test_classify();
	test_rules();
	/* The fake's 100 ms and a GPU's ~200 ms. Deterministic (fixed
	 * seeds). With a 50 ms plan whose windows stood still it printed
	 * (2026-11-24) means 284, 423 and 885 ms, p95 1050, 1391 and 2609;
	 * with the 100 ms plan rotated at its starts, means 148, 323 and
	 * 787, p95 436, 943 and 2607: the bounds are those with room,
	 * against a regression. Independent samples would give a geometric count in
	 * the guarded part of the window (~0.46 of the period for 50 %,
	 * ~0.26 for 30 %). */
	simulate_counted();
	simulate(100, 0.5, 300, 900);
	simulate(200, 0.5, 550, 1600);
	simulate(200, 0.3, 1000, 2800);
	return check_summary();
}
