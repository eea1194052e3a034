/* SPDX-License-Identifier: MIT */
/*
 * quick_return - a continued call that returns before the supervisor's
 * interrupt reaches its caller (issue #16's quiesce hand-off). A client
 * allocation is continued with the caller's fd table held: its threads
 * stopped, the caller seized, the caller interrupted after the answer so
 * that it stops once out of the ioctl. On the H200 a client allocation
 * takes about 35 us, and the caller was back in its next trap first;
 * there the interrupt does not stop it (a received seccomp wait is
 * killable only), so the quiesce held its threads until its deadline and
 * the next call's quiesce could not seize them: PyTorch's init refused.
 *
 * run.sh makes the order certain with GPUSANDBOX_TEST_QUIESCE_INTERRUPT_DELAY_US
 * (the interrupt 50 ms late). This program keeps SLEEPERS threads (so
 * each client allocation is a quiesce of them) and makes CLIENTS clients
 * back to back, each on a control file of its own (kept open), until one
 * is refused. Prints clients_ok= of CLIENTS, the fake's clients_rise=
 * (how far its peak of live clients rose meanwhile), slowest_ms= (the
 * longest client allocation: a figure, not judged) and SUMMARY.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define SLEEPERS 3
#define CLIENTS 20

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	struct adv_tally t = { 0 };
	int fds[CLIENTS], ok = 0;
	double slowest = 0;
	pthread_t th;
	uint64_t before = 0, after = 0;

	for (int i = 0; i < SLEEPERS; i++)
		if (pthread_create(&th, NULL, sleeper, NULL) != 0)
			return ADV_EXIT_SETUP;
	(void)rmc_fake_stat("clients_peak", &before);
	for (int i = 0; i < CLIENTS; i++) {
		nv_handle_t h = 0;
		fds[i] = rmc_open_ctl();
		if (fds[i] < 0)
			return ADV_EXIT_SETUP;
		double t0 = now_ms();
		rmc_status_t st = rmc_alloc_client(fds[i], NULL, &h);
		double took = now_ms() - t0;
		slowest = took > slowest ? took : slowest;
		ok += st == NV_OK;
		adv_count(&t, st);
		if (st != NV_OK) {
			printf("client %d: %s after %.1f ms\n", i, rmc_status_str(st), took);
			close(fds[i]);
			break;
		}
	}
	(void)rmc_fake_stat("clients_peak", &after);
	printf("clients_ok=%d of %d clients_rise=%llu slowest_ms=%.0f\n", ok, CLIENTS,
	       (unsigned long long)(after - before), slowest);
	for (int i = 0; i < ok; i++)
		close(fds[i]);
	adv_print_summary(&t);
	return 0;
}
