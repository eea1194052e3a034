/* SPDX-License-Identifier: MIT */
/*
 * holder - a static client for the agent tier (it runs inside a busybox
 * container, so no dynamic loader): allocates FIRST chunks of video memory
 * (256 MiB each, raw RM_ALLOC) and holds them, writes "ready" to WAIT.ready,
 * waits until the file WAIT exists, then tries THEN chunks more. Prints
 * each phase's results, and the status of the first refusal in each
 * ("status:0x51" for the driver-shaped NO_MEMORY, "errno:ENOSYS" once the
 * listener is gone).
 *
 *   holder FIRST WAIT THEN
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define WAIT_STEP_NS 20000000L       /* 20 ms */
#define WAIT_MAX_STEPS 1500          /* 30 s */
#define PATH_LEN 512

static int phase(struct rmc_session *s, int n, nv_handle_t *next, const char *label)
{
	int ok = 0;
	rmc_status_t first_refusal = NV_OK;

	for (int i = 0; i < n; i++) {
		rmc_status_t st = adv_alloc_rm(s, NULL, (*next)++, ADV_CHUNK);
		if (st == NV_OK)
			ok++;
		else if (first_refusal == NV_OK)
			first_refusal = st;
	}
	printf("%s ok=%d refused=%d first_refusal=%s\n", label, ok, n - ok,
	       first_refusal == NV_OK ? "none" : rmc_status_str(first_refusal));
	fflush(stdout);
	return ok;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct timespec step = { 0, WAIT_STEP_NS };
	char ready[PATH_LEN];
	nv_handle_t next = 0xcafe0000;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: holder FIRST WAIT THEN\n");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "holder");
	phase(&s, atoi(argv[1]), &next, "first");
	snprintf(ready, sizeof(ready), "%s.ready", argv[2]);
	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < WAIT_MAX_STEPS && access(argv[2], F_OK) != 0; i++)
		nanosleep(&step, NULL);
	phase(&s, atoi(argv[3]), &next, "then");
	return 0;
}
