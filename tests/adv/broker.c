/* SPDX-License-Identifier: MIT */
/*
 * broker - a stand-in for the MPS server, or any broker that allocates GPU
 * memory on a client's behalf outside the sandbox (issue #17, 14).
 *
 * Usage: broker serve DIR    listen on DIR/control (as MPS's pipe
 *                            directory holds its control socket); for each
 *                            byte a client sends, allocate 256 MiB through
 *                            the driver from this process, answer the
 *                            status (4 bytes). Writes DIR/ready when
 *                            listening; runs until killed.
 *        broker ask DIR      connect to DIR/control and ask for
 *                            BROKER_CHUNKS chunks (3 GiB).
 *
 * `ask` prints connect=OK|ERRNO, then granted=N and SUMMARY. Judged from
 * the fake driver's account: run as a client without gpusandbox, the
 * broker's grants pass the quota; under gpusandbox the pipe directory is
 * masked, so connect fails and the driver's account stays within it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "adv.h"

#define BROKER_CHUNKS 12
#define BROKER_SOCKET "control"
#define BROKER_BACKLOG 4

static int socket_path(struct sockaddr_un *a, const char *dir)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	return snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", dir, BROKER_SOCKET) <
	       (int)sizeof(a->sun_path) ? 0 : -1;
}

static void serve_client(int c, struct rmc_session *s)
{
	char req;

	while (read(c, &req, 1) == 1) {
		rmc_status_t st = adv_alloc_rm(s, NULL, rmc_next_handle(s), ADV_CHUNK);

		if (write(c, &st, sizeof(st)) != (ssize_t)sizeof(st))
			break;
	}
	close(c);
}

static int serve(const char *dir)
{
	struct rmc_session s;
	struct sockaddr_un a;
	char ready[PATH_MAX];
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;

	adv_session_or_die(&s, -1, "broker");
	if (l < 0 || socket_path(&a, dir) < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, BROKER_BACKLOG) < 0) {
		perror("broker: listen");
		return ADV_EXIT_SETUP;
	}
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return ADV_EXIT_SETUP;
	close(fd);
	for (;;) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			serve_client(c, &s);
	}
}

static int ask(const char *dir)
{
	struct sockaddr_un a;
	struct adv_tally t = { 0 };
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), granted = 0;

	if (c < 0 || socket_path(&a, dir) < 0)
		return ADV_EXIT_SETUP;
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("connect=%s\n", strerrorname_np(errno));
		printf("granted=0\n");
		adv_print_summary(&t);
		return 0;
	}
	printf("connect=OK\n");
	for (int i = 0; i < BROKER_CHUNKS; i++) {
		rmc_status_t st;
		char req = 'a';

		if (write(c, &req, 1) != 1 || read(c, &st, sizeof(st)) != (ssize_t)sizeof(st))
			break;
		adv_count(&t, st);
		granted += st == NV_OK;
	}
	printf("granted=%d\n", granted);
	adv_print_summary(&t);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2]);
	if (argc == 3 && strcmp(argv[1], "ask") == 0)
		return ask(argv[2]);
	fprintf(stderr, "usage: broker serve|ask DIR\n");
	return ADV_EXIT_SETUP;
}
