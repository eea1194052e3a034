/* SPDX-License-Identifier: MIT */
/*
 * keeper_link.h - the agent's side of the keeper (keeper.c): hands it each
 * container's fds as they come, and takes back what it holds at start.
 */
#ifndef GPUSANDBOX_KEEPER_LINK_H
#define GPUSANDBOX_KEEPER_LINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_conn.h"
#include "gs_error.h"

struct gs_keeper_link {
	int fd;
	pthread_mutex_t lock;
	bool lost;                 /* said once: restart survival is gone */
};

/* A container the keeper held: its init's pidfd, its state memfd and its
 * listeners (with the index the agent gave each). */
struct gs_kept_container {
	struct gs_kept_container *next;
	char id[GS_AGENT_ID_MAX];
	int pidfd, memfd;
	unsigned n, cap;
	int *fds;
	uint32_t *index;
	/* The clients' release watches: epoll sets, -1 where taken. */
	unsigned n_w, cap_w;
	struct gs_kept_watch {
		int epfd;
		uint32_t client, tfd;
	} *w;
	/* The sandbox's own RM clients, one per agent that made one: each
	 * control file and handle. */
	unsigned n_own, cap_own;
	struct gs_kept_own {
		int fd;
		uint32_t client;
	} *own;
};

/* Connects to the keeper at path, says HELLO and takes back every
 * container it holds (*held, a list) and the previous agent's pidfd
 * (*old_agent, -1 if none). Returns 0 or -1 (err). */
int gs_keeper_link_open(struct gs_keeper_link *k, const char *path, struct gs_kept_container **held,
                        int *old_agent, struct gs_error *err);
/* Frees the list, closing every fd still in it (-1 where taken). */
void gs_kept_free(struct gs_kept_container *held);

/* Hands a container's fds to the keeper (it keeps copies; ours stay
 * ours). A failure is said once; the container goes on without restart
 * survival. */
void gs_keeper_link_container(struct gs_keeper_link *k, const char *id, int init_pidfd, int memfd);
void gs_keeper_link_listener(struct gs_keeper_link *k, const char *id, uint32_t index, int listener);
void gs_keeper_link_drop(struct gs_keeper_link *k, const char *id);
/* A client's release watch (the epoll set, which holds no reference on
 * the client's file), or its end. */
void gs_keeper_link_watch(struct gs_keeper_link *k, const char *id, uint32_t client, int tfd, int epfd);
void gs_keeper_link_unwatch(struct gs_keeper_link *k, const char *id, uint32_t client);
/* The control file of the sandbox's own RM client (own_rm.h), so that
 * the client outlives the agent (keeper_proto.h says why). */
void gs_keeper_link_own_client(struct gs_keeper_link *k, const char *id, uint32_t client, int ctl_fd);

#endif
