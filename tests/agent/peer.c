/* SPDX-License-Identifier: MIT */
/*
 * peer - a hostile or slow peer of the agent's socket, for the agent
 * tier's "peers" case: connects to SOCKET as a runtime would, then
 *
 *   silent   sends nothing
 *   trickle  sends one byte of an endless JSON string every 100 ms
 *   garbage  sends bytes that are not JSON
 *   huge     sends an endless JSON string as fast as the agent reads it
 *
 * and reports, on its own clock, how long the agent kept the connection
 * open: "peer MODE held_ms=N sent=BYTES" when the agent hangs up. The
 * test judges by these numbers that the agent was really held by the
 * peer while another container started.
 *
 *   peer SOCKET MODE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TRICKLE_MS 100
#define GIVE_UP_MS 60000           /* an agent that never hangs up */
#define CHUNK 65536
#define MS_PER_S 1000
#define NS_PER_MS 1000000

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * MS_PER_S + t.tv_nsec / NS_PER_MS;
}

/* Has the agent hung up? Waits up to ms. */
static int hung_up(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };
	char c;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char chunk[CHUNK];
	const char *mode;
	long start, sent = 0;
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: peer SOCKET silent|trickle|garbage|huge\n");
		return 2;
	}
	mode = argv[2];
	signal(SIGPIPE, SIG_IGN);
	memcpy(sa.sun_path, argv[1], strlen(argv[1]) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("peer: connect");
		return 1;
	}
	start = now_ms();
	memset(chunk, 'a', sizeof(chunk));
	if (strcmp(mode, "garbage") == 0)
		sent = send(fd, "}{ not json", 11, 0);
	else if (strcmp(mode, "trickle") == 0 || strcmp(mode, "huge") == 0)
		sent = send(fd, "{\"ociVersion\":\"", 15, 0);
	else if (strcmp(mode, "silent") != 0) {
		fprintf(stderr, "peer: unknown mode %s\n", mode);
		return 2;
	}
	while (now_ms() - start < GIVE_UP_MS) {
		ssize_t n = 0;
		if (strcmp(mode, "trickle") == 0) {
			if (hung_up(fd, TRICKLE_MS))
				break;
			n = send(fd, "a", 1, 0);
		} else if (strcmp(mode, "huge") == 0) {
			if (hung_up(fd, 0))
				break;
			n = send(fd, chunk, sizeof(chunk), 0);
		} else if (hung_up(fd, GIVE_UP_MS)) {
			break;
		}
		if (n < 0)
			break;   /* EPIPE, ECONNRESET: the agent hung up */
		sent += n;
	}
	printf("peer %s held_ms=%ld sent=%ld\n", mode, now_ms() - start, sent);
	return 0;
}
