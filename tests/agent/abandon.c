/* SPDX-License-Identifier: MIT */
/*
 * abandon - a static client for the agent tier's abandon-runc case: a
 * signal interrupts a video memory RM_ALLOC while the agent performs it.
 *
 * runc 1.1 cannot ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, so the
 * task's wait for the agent's answer is interruptible: the kernel drops
 * the notification, the SA_RESTART handler runs, and the ioctl is issued
 * again. The agent has made (and charged) an object the task never
 * learns of; it must undo it. The fake is run with --alloc-sleep-ms, so
 * the first allocation lasts long enough for a child to signal us in it.
 *
 * Then more chunks until refused, then every handle the task was given
 * is freed, and it prints
 *   first=STATUS signals=N more=M freed=K
 * writes WAIT.ready and waits for WAIT: meanwhile the harness reads the
 * fake's vidmem_used, which is 0 when nothing the task does not know of
 * is left.
 *
 *   abandon WAIT SIGNAL_AFTER_MS
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"

#define MAX_HANDLES 64
#define WAIT_STEP_NS 20000000L       /* 20 ms */
#define WAIT_MAX_STEPS 1500          /* 30 s */
#define PATH_LEN 512
#define NS_PER_MS 1000000L
#define MS_PER_S 1000L

static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	(void)sig;
	signals++;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / MS_PER_S, (ms % MS_PER_S) * NS_PER_MS };

	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct sigaction sa;
	nv_handle_t held[MAX_HANDLES], next = 0xabad0000;
	int n_held = 0, more = 0, freed = 0, fd;
	rmc_status_t first;
	char ready[PATH_LEN];
	pid_t child;

	if (argc != 3) {
		fprintf(stderr, "usage: abandon WAIT SIGNAL_AFTER_MS\n");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "abandon");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	child = fork();
	if (child == 0) {
		sleep_ms(atol(argv[2]));
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	first = adv_alloc_rm(&s, NULL, next, ADV_CHUNK);
	if (first == NV_OK)
		held[n_held++] = next;
	next++;
	waitpid(child, NULL, 0);
	while (n_held < MAX_HANDLES && adv_alloc_rm(&s, NULL, next, ADV_CHUNK) == NV_OK) {
		held[n_held++] = next++;
		more++;
	}
	for (int i = 0; i < n_held; i++)
		freed += adv_free_rm(&s, NULL, held[i]) == NV_OK;
	printf("first=%s signals=%d more=%d freed=%d\n", rmc_status_str(first), (int)signals, more, freed);
	fflush(stdout);
	snprintf(ready, sizeof(ready), "%s.ready", argv[1]);
	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < WAIT_MAX_STEPS && access(argv[1], F_OK) != 0; i++)
		sleep_ms(WAIT_STEP_NS / NS_PER_MS);
	return 0;
}
