/* SPDX-License-Identifier: MIT */
/*
 * fork_both - a quota is per sandbox, not per process or per client.
 *
 * The program forks; parent and child each open their own /dev/nvidiactl,
 * create their own client, wait for each other, and then both allocate
 * 256 MiB chunks concurrently until refused. Both hold what they got until
 * both are done, so the driver's peak is the sum. Together they must stay
 * under the quota; each must end on NV_ERR_NO_MEMORY.
 *
 * Prints parent_ok= parent_nomem= child_ok= child_nomem= and SUMMARY.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"

/* Pipe ends, named for readability. */
#define RD 0
#define WR 1

static void write_all(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		_exit(ADV_EXIT_SETUP);
}

static int read_all(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/* Both sides run this: set up, rendezvous, fill. The child says "ready"
 * and waits for "go"; the parent waits for "ready" and says "go", so both
 * start filling at about the same time. A negative fd skips that step. */
static void side(const char *who, int ready_out, int ready_in, int go_out, int go_in,
		 struct adv_fill *f)
{
	struct rmc_session s;
	char c = 'r';

	adv_session_or_die(&s, -1, who);
	if (ready_out >= 0)
		write_all(ready_out, &c, 1);
	if (ready_in >= 0 && read_all(ready_in, &c, 1) < 0) {
		printf("%s: peer failed before allocating\n", who);
		exit(ADV_EXIT_SETUP);
	}
	if (go_out >= 0)
		write_all(go_out, &c, 1);
	if (go_in >= 0 && read_all(go_in, &c, 1) < 0)
		_exit(ADV_EXIT_SETUP);
	adv_fill(&s, NULL, adv_alloc_rm, adv_free_rm, ADV_CHUNK, who, f);
}

int main(void)
{
	int p2c[2], c2p[2], tally_pipe[2], release[2];
	struct adv_fill pf = { 0 }, cf = { 0 };
	struct adv_tally total = { 0 }, child_tally = { 0 };
	int status;
	pid_t pid;
	char c = 0;

	if (pipe(p2c) || pipe(c2p) || pipe(tally_pipe) || pipe(release)) {
		perror("pipe");
		return ADV_EXIT_SETUP;
	}
	fflush(stdout); /* no duplicated stdio buffers after fork */
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return ADV_EXIT_SETUP;
	}
	if (pid == 0) {
		/* The child signals readiness, then waits for the parent's go. */
		side("child", c2p[WR], -1, -1, p2c[RD], &cf);
		write_all(tally_pipe[WR], &cf.tally, sizeof(cf.tally));
		close(release[WR]);
		/* Hold the chunks until the parent has finished too: the read
		 * returns (EOF) when the parent closes its end. */
		if (read(release[RD], &c, 1) < 0)
			_exit(ADV_EXIT_SETUP);
		_exit(0);
	}

	/* Parent: drop the child's pipe ends so a dead child reads as EOF,
	 * wait for it to be ready, release it, and race it. */
	close(release[RD]);
	close(c2p[WR]);
	close(p2c[RD]);
	close(tally_pipe[WR]);
	side("parent", -1, c2p[RD], p2c[WR], -1, &pf);
	if (read_all(tally_pipe[RD], &child_tally, sizeof(child_tally)) < 0)
		printf("child did not report\n");
	close(release[WR]);
	waitpid(pid, &status, 0);

	printf("parent_ok=%d parent_nomem=%d child_ok=%d child_nomem=%d\n", pf.tally.ok,
	       pf.tally.nomem, child_tally.ok, child_tally.nomem);
	adv_add(&total, &pf.tally);
	adv_add(&total, &child_tally);
	adv_print_summary(&total);
	return 0;
}
