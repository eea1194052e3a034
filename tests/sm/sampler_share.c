/* SPDX-License-Identifier: MIT */
/*
 * sampler_share.c - one utilization sampler per GPU per supervisor process
 * (supervisor/compute/sampler.h), judged by the fake driver's own account
 * of live RM clients (its stats file, clients_live): the agent runs many
 * sessions in one process, and each used to open its own client to read
 * the same samples.
 *
 * Run under tests/fakedrv/with-fake-nvidia (tests/sm/run.sh sampler-share):
 * SESSIONS "sessions" take the sampler of GPU 0, as their compute shares
 * do, and read samples from it; the fake must see one client, the
 * sampler's, until the last one lets go, and none after. Every read must
 * carry samples stamped on the fake's PTIMER that the sampler could put on
 * CLOCK_MONOTONIC, none of them in the future. Prints "N passed, M failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/check.h"
#include "driver.h"
#include "gpusandbox.h"
#include "sampler.h"

#define SESSIONS 4
#define SAMPLE_WAIT_US 350000   /* the fake's samples come every 100 ms */

/* A "key value" line of the fake's stats file; -1 when missing. */
static long fake_stat(const char *key)
{
	const char *path = getenv("GS_FAKE_STATS");
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = path ? fopen(path, "r") : NULL;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ' ')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

static void check_samples(struct gs_sampler *s, const char *who)
{
	struct gs_util_sample buf[NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL];
	uint64_t err = 0, now;
	int n = gs_sampler_read(s, 0, buf, NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL, &err);
	unsigned timed = 0, future = 0;

	now = gs_monotonic_ns();
	for (int i = 0; i < n; i++) {
		timed += buf[i].timed;
		future += buf[i].timed && buf[i].mono > now + err;
	}
	printf("%s: %d samples, %u timed, mapping error %llu ns\n", who, n, timed, (unsigned long long)err);
	CHECK(n > 0);
	CHECK(timed == (unsigned)n && future == 0);
}

int main(void)
{
	struct gs_driver drv;
	struct gs_error err;
	struct gs_sampler *s[SESSIONS];

	gs_driver_nodes_init();
	if (gs_driver_detect(&drv, &err) < 0 || !drv.present || gs_driver_choose_abi(&drv, NULL, &err) < 0 ||
	    !drv.n_gpus) {
		fprintf(stderr, "sampler_share: no (fake) driver to test against\n");
		return 2;
	}
	long before = fake_stat("clients_live");
	for (unsigned i = 0; i < SESSIONS; i++)
		s[i] = gs_sampler_get(drv.gpus[0].gpu_id, drv.gpus[0].minor, drv.gpus, drv.n_gpus, drv.rm_abi);
	CHECK(s[0] != NULL);
	for (unsigned i = 1; i < SESSIONS; i++)
		CHECK(s[i] == s[0]);
	CHECK(gs_sampler_count() == 1);
	CHECK(fake_stat("clients_live") == before + 1);
	usleep(SAMPLE_WAIT_US);
	for (unsigned i = 0; s[0] && i < SESSIONS; i++)
		check_samples(s[i], "session");
	for (unsigned i = 0; i + 1 < SESSIONS; i++)
		gs_sampler_put(s[i]);
	CHECK(gs_sampler_count() == 1 && fake_stat("clients_live") == before + 1);
	gs_sampler_put(s[SESSIONS - 1]);
	CHECK(gs_sampler_count() == 0 && fake_stat("clients_live") == before);
	printf("fake clients_live: %ld before, %ld after\n", before, fake_stat("clients_live"));
	return check_summary();
}
