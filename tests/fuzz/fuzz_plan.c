/* SPDX-License-Identifier: MIT */
/*
 * fuzz_plan.c - fuzz target for the compute-share planner
 * (supervisor/compute/plan.c). Each input is up to GS_PLAN_MAX_TENANTS
 * tenants of three bytes (percent, mode, busy) and then a period seed; the
 * plan must satisfy tests/lib/plan_invariants.h (own windows disjoint and
 * inside the period, caps never exceeded, shares met, scaled in proportion
 * when oversubscribed), invalid tenants must be refused, and the jittered
 * period must stay within its bounds.
 *
 * Built as a libFuzzer target by `make fuzz` and linked with replay_main.c
 * into build/tests/fuzz/plan_replay, which CI runs over the committed
 * corpus (tests/fuzz/corpus/plan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/plan_invariants.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TENANT_BYTES 3u
#define PERIOD_NS    20000000ull
#define JITTER_PPM   250000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_plan_tenant t[GS_PLAN_MAX_TENANTS] = { { 0 } };
	uint32_t n = 0;
	bool valid = true;
	size_t i = 0;
	struct gs_plan p;

	for (; i + TENANT_BYTES <= size && n < GS_PLAN_MAX_TENANTS; i += TENANT_BYTES, n++) {
		t[n] = (struct gs_plan_tenant){ .id = n, .percent = data[i] % 128u,
		                                .mode = (enum gs_sm_mode)(data[i + 1] % 3u),
		                                .busy = data[i + 2] & 1u };
		valid &= t[n].percent >= 1 && t[n].percent <= 100 && t[n].mode != 2;
	}
	int rc = gs_plan_make(t, n, &p);
	if (valid != (rc == 0))
		abort();
	if (rc == 0 && plan_invariant_violation(t, n, &p))
		abort();
	uint64_t seed = 0;
	for (; i < size; i++)
		seed = seed * 131u + data[i];
	for (uint64_t k = 0; k < 8; k++) {
		uint64_t len = gs_plan_period_ns(PERIOD_NS, JITTER_PPM, seed, k);
		if (len < PERIOD_NS * 3 / 4 || len > PERIOD_NS * 5 / 4)
			abort();
		/* The rotation is one of the plan's starts. */
		if (rc == 0) {
			uint32_t r = gs_plan_rotation_ppm(seed, k, p.starts, p.n_starts), m = 0;
			while (m < p.n_starts && p.starts[m] != r)
				m++;
			if (m == p.n_starts)
				abort();
		}
	}
	return 0;
}
