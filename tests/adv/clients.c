/* SPDX-License-Identifier: MIT */
/*
 * clients - the client quota (--clients), the quota kind added as one row
 * of the kind table (policy/quota.c) to show what a new kind takes.
 *
 * run.sh passes --clients CAP (3) to this program's sandboxed run only.
 * Phases, each client on a control file of its own (the sandbox allows
 * one per file):
 *  1. fill: clients on new files until refused (at most MAX_FILES):
 *     CAP, then INSUFFICIENT_RESOURCES; bare, all MAX_FILES;
 *  2. close: the file of one goes, and with it its client in the driver
 *     (RmFreeUnusedClients): one more fits;
 *  3. free: RM_FREE of another client, its file kept open: that file may
 *     host a new one;
 *  4. race: RACE_THREADS threads at once each open a file and make a
 *     client, RACE_ROUNDS times; only CAP may live at once.
 * Between phases every file is closed and the program waits for the
 * fake driver to have seen the releases (FUSE sends them after close
 * returns; the real driver frees a file's clients inside the last close).
 * Prints fill_ok= fill_stop= after_close= after_free= race_ok=
 * race_refused= and SUMMARY. The driver's own clients_peak judges it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define MAX_FILES 8
#define RACE_THREADS 8
#define RACE_ROUNDS 20
#define RELEASE_WAIT_MS 5000
#define POLL_MS 2

struct held {
	int fd[MAX_FILES];
	nv_handle_t h[MAX_FILES];
	int n;
};

static struct adv_tally tally;
static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t race_start, race_hold;

static void count(rmc_status_t st)
{
	pthread_mutex_lock(&tally_lock);
	adv_count(&tally, st);
	pthread_mutex_unlock(&tally_lock);
}

/* A client on a new control file; the file stays open on success. */
static rmc_status_t client_on_new_file(int *fd, nv_handle_t *h)
{
	rmc_status_t st;

	*fd = rmc_open_ctl();
	if (*fd < 0) {
		fprintf(stderr, "clients: cannot open %s\n", RMC_CTL_PATH);
		exit(ADV_EXIT_SETUP);
	}
	st = rmc_alloc_client(*fd, NULL, h);
	count(st);
	if (st != NV_OK) {
		close(*fd);
		*fd = -1;
	}
	return st;
}

/* The fake driver has freed the clients of the files closed so far:
 * clients_live is at most want. Without the fake's stats (bare runs of
 * other fakes), a fixed pause. */
static void wait_released(uint64_t want)
{
	struct timespec pause = { 0, POLL_MS * 1000000L };
	uint64_t live;

	for (int waited = 0; waited < RELEASE_WAIT_MS; waited += POLL_MS) {
		if (rmc_fake_stat("clients_live", &live) == 0 && live <= want)
			return;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "clients: the driver kept its clients after their files closed\n");
	exit(ADV_EXIT_SETUP);
}

static void close_all(struct held *k)
{
	for (int i = 0; i < k->n; i++)
		if (k->fd[i] >= 0)
			close(k->fd[i]);
	k->n = 0;
	wait_released(0);
}

static int fill(struct held *k, rmc_status_t *stop)
{
	int ok = 0;

	*stop = NV_OK;
	while (k->n < MAX_FILES) {
		int fd;
		nv_handle_t h;
		*stop = client_on_new_file(&fd, &h);
		if (*stop != NV_OK)
			break;
		k->fd[k->n] = fd;
		k->h[k->n++] = h;
		ok++;
	}
	return ok;
}

static void *racer(void *arg)
{
	int *won = arg;

	for (int r = 0; r < RACE_ROUNDS; r++) {
		int fd;
		nv_handle_t h;
		pthread_barrier_wait(&race_start);
		if (client_on_new_file(&fd, &h) == NV_OK)
			won[r] = fd;
		/* Everyone holds theirs until all have tried. */
		pthread_barrier_wait(&race_hold);
	}
	return NULL;
}

/* Returns the clients made; *refused the attempts refused. */
static int race(int *refused)
{
	static int won[RACE_THREADS][RACE_ROUNDS];
	pthread_t th[RACE_THREADS];
	int ok = 0;

	for (int t = 0; t < RACE_THREADS; t++)
		for (int r = 0; r < RACE_ROUNDS; r++)
			won[t][r] = -1;
	pthread_barrier_init(&race_start, NULL, RACE_THREADS + 1);
	pthread_barrier_init(&race_hold, NULL, RACE_THREADS + 1);
	for (int t = 0; t < RACE_THREADS; t++)
		pthread_create(&th[t], NULL, racer, won[t]);
	for (int r = 0; r < RACE_ROUNDS; r++) {
		pthread_barrier_wait(&race_start);
		pthread_barrier_wait(&race_hold);
		for (int t = 0; t < RACE_THREADS; t++)
			if (won[t][r] >= 0) {
				close(won[t][r]);
				ok++;
			}
		wait_released(0);
	}
	for (int t = 0; t < RACE_THREADS; t++)
		pthread_join(th[t], NULL);
	*refused = RACE_ROUNDS * RACE_THREADS - ok;
	return ok;
}

int main(void)
{
	struct held k = { .n = 0 };
	rmc_status_t stop, st;
	int fill_ok, after_close = 0, after_free = 0, race_ok, race_refused;
	nv_handle_t h;

	fill_ok = fill(&k, &stop);
	printf("fill_ok=%d fill_stop=%s\n", fill_ok, rmc_status_str(stop));
	if (k.n < 2) {
		fprintf(stderr, "clients: fewer than 2 clients to work with\n");
		return ADV_EXIT_SETUP;
	}

	/* Phase 2: the last file goes; one more fits where the cap held. */
	close(k.fd[--k.n]);
	wait_released((uint64_t)k.n);
	after_close = fill(&k, &stop);

	/* Phase 3: RM_FREE of client 0 keeps its file; a client on it again. */
	st = rmc_free(k.fd[0], NULL, k.h[0], k.h[0], k.h[0]);
	count(st);
	if (st == NV_OK) {
		st = rmc_alloc_client(k.fd[0], NULL, &h);
		count(st);
		after_free = st == NV_OK;
	}
	printf("after_close=%d after_free=%d\n", after_close, after_free);
	close_all(&k);

	race_ok = race(&race_refused);
	printf("race_ok=%d race_refused=%d\n", race_ok, race_refused);
	adv_print_summary(&tally);
	return 0;
}
