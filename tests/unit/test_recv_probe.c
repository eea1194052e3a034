/* SPDX-License-Identifier: MIT */
/*
 * test_recv_probe.c - the agent's probe (recv_probe.c) says what this
 * kernel does with a RECV blocked when the filter's last user exits.
 *
 * What the agent relies on when the probe says yes: a worker blocked in
 * SECCOMP_IOCTL_NOTIF_RECV (its listener's only notification received
 * already, unanswered) returns once every task of the filter is gone, so
 * that the worker learns of the hang-up without a poll. Here a child
 * traps one call (tests/lib/trap_child.h); its notification is received;
 * a checker process blocks in a second RECV under an alarm; the child is
 * killed and reaped. The checker's RECV must return (ENOENT) before the
 * alarm exactly when the probe said yes: were the probe to say yes on a
 * kernel that leaves the RECV blocked, the agent's workers would never
 * see a container go, and this fails. Needs neither root nor FUSE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/trap_child.h"
#include "check.h"
#include "recv_probe.h"

#define CHECKER_ALARM_S 3u
#define BLOCKED_US 200000   /* the checker is in its RECV by then */
#define ENDED 0
#define NOT_ENDED 1

/* The checker: a RECV that blocks (nothing is pending), ended by the
 * kernel (ENOENT) or by the alarm's default action. */
static _Noreturn void checker(int listener)
{
	struct seccomp_notif req;

	alarm(CHECKER_ALARM_S);
	memset(&req, 0, sizeof(req));
	_exit(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0 && errno == ENOENT ? ENDED : NOT_ENDED);
}

/* Does a RECV blocked at the hang-up return? -1 if the set-up failed. */
static int blocked_recv_ends(void)
{
	struct seccomp_notif req;
	int sv[2], st;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	pid_t user = fork();
	if (user == 0)
		trap_child_and_wait(sv[1]);
	int l = fdpass_recv(sv[0]);
	memset(&req, 0, sizeof(req));
	if (l < 0 || ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return -1;
	pid_t k = fork();
	if (k == 0)
		checker(l);
	usleep(BLOCKED_US);
	kill(user, SIGKILL);
	waitpid(user, NULL, 0);
	if (waitpid(k, &st, 0) != k)
		return -1;
	close(l);
	return WIFEXITED(st) && WEXITSTATUS(st) == ENDED;
}

int main(void)
{
	bool said = gs_recv_ends_at_hangup();
	int seen = blocked_recv_ends();

	printf("probe: %s; a blocked RECV at the hang-up: %s\n", said ? "ends" : "does not end",
	       seen < 0 ? "set-up failed" : seen ? "ended" : "did not end");
	CHECK(seen >= 0);
	CHECK(seen == (int)said);
	return check_summary();
}
