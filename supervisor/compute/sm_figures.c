/* SPDX-License-Identifier: MIT */
/*
 * sm_figures.c - what tests/gpu/coord_bench.sh reads of the duty cycle:
 * how long a switch of all a GPU's channels takes, and the longest off
 * phase (the longest the tenant waited for its window), and what the idle
 * rule saw (idle_report.c: whether the samples' instants were known, the
 * quiet samples inside our own window, the clock's contradictions).
 */
#include <stdio.h>

#include "compute_internal.h"

/* The benchmark's figures: the switch's cost, the off phase's length. */
void gs_sm_note_switch(struct gs_sm_gpu *s, uint64_t t0, uint64_t t1, bool off)
{
	s->switch_ns_sum += t1 - t0;
	s->switches++;
	if (t1 - t0 > s->switch_ns_max)
		s->switch_ns_max = t1 - t0;
	if (off) {
		s->off_since_ns = t1;
	} else if (s->off_since_ns) {
		if (t0 - s->off_since_ns > s->off_max_ns)
			s->off_max_ns = t0 - s->off_since_ns;
		s->off_since_ns = 0;
	}
}

/* GPUSANDBOX_SM_DEBUG=1: one line per GPU at stop, for tests/gpu/coord_bench.sh. */
void gs_sm_print_figures(const struct gs_compute_share *cs)
{
	for (unsigned g = 0; cs->debug && g < GS_MAX_GPUS; g++) {
		const struct gs_sm_gpu *s = &cs->gpu[g];
		if (!s->seen || !s->switches)
			continue;
		struct cs_idle_figures idle = cs_idle_figures(cs, (int)g);
		fprintf(stderr, "[gpusandbox sm] gpu%u switches %llu switch_us_mean %.1f switch_us_max %.1f "
		        "longest_off_ms %.2f plans %u hosted %u lockless_offs %llu samples_timed %s "
		        "idle_own_evidence %llu clock_contradictions %u\n", g,
		        (unsigned long long)s->switches, (double)s->switch_ns_sum / (double)s->switches / 1e3,
		        (double)s->switch_ns_max / 1e3, (double)s->off_max_ns / 1e6, s->coord.plans_received,
		        s->coord.hosted_times, (unsigned long long)s->lockless_offs, idle.timed ? "yes" : "no",
		        (unsigned long long)idle.own_evidence, idle.contradictions);
	}
}
