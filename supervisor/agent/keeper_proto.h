/* SPDX-License-Identifier: MIT */
/*
 * keeper_proto.h - the messages between `gpusandbox agent` and
 * `gpusandbox keeper` (keeper.c) on the keeper's socket: fixed-size
 * records on a SOCK_SEQPACKET unix socket, each with its fds in
 * SCM_RIGHTS. Only peers of the keeper's own uid are served (SO_PEERCRED).
 *
 *   agent -> keeper  HELLO      fds: the agent's pidfd; the keeper answers
 *                               with every container it holds (CONTAINER,
 *                               then its LISTENERs), then END carrying the
 *                               previous agent's pidfd when it knows one
 *                    CONTAINER  id; fds: the container's init pidfd, its
 *                               state memfd
 *                    LISTENER   id, index; fds: a listener of that container
 *                    DROP       id: the container is gone
 *                    WATCH      id, index (an RM client), aux (the fd number
 *                               it was added with); fds: the epoll set
 *                               that watches the client's file (it holds no
 *                               reference on the file: the file still
 *                               closes with the workload)
 *                    UNWATCH    id, index: the client is gone
 *                    OWN_CLIENT id, index (the handle of the sandbox's own
 *                               RM client, own_rm.h); fds: the control
 *                               file it lives on. Held so that the client,
 *                               and the handle a map's share names, outlive
 *                               an agent killed between the share and its
 *                               revoke: RM gives a free client handle to
 *                               whoever asks for it (rs_server.c, 580.95.05).
 *                               Each agent makes its own; all are held.
 * The keeper's answer to HELLO gives each container's WATCHes after its
 * LISTENERs, then its OWN_CLIENTs.
 */
#ifndef GPUSANDBOX_KEEPER_PROTO_H
#define GPUSANDBOX_KEEPER_PROTO_H

#include <stdint.h>

#include "agent_conn.h"

#define GS_KEEPER_MAGIC 0x6b707367u   /* "gspk" */
#define GS_KEEPER_MAX_FDS 2

enum gs_keeper_op {
	GS_KEEPER_HELLO = 1,
	GS_KEEPER_CONTAINER,
	GS_KEEPER_LISTENER,
	GS_KEEPER_DROP,
	GS_KEEPER_END,
	GS_KEEPER_WATCH,
	GS_KEEPER_UNWATCH,
	GS_KEEPER_OWN_CLIENT,
};

struct gs_keeper_msg {
	uint32_t magic, op, index, aux, nfds;
	char     id[GS_AGENT_ID_MAX];
};

/* Sends m with nfds fds (m->nfds is set). 0, or -1 (errno). */
int gs_keeper_send(int sock, struct gs_keeper_msg *m, const int *fds, unsigned nfds);
/* Receives one message: 1, 0 on end of stream, -1 on an error or a
 * malformed message (wrong size, magic, op, fd count, an id without its
 * NUL): every fd that came with it is closed then. fds has room for
 * GS_KEEPER_MAX_FDS; the op's own fd count is checked. */
int gs_keeper_recv(int sock, struct gs_keeper_msg *m, int *fds);
/* How many fds op carries (END: 0 or 1). */
int gs_keeper_op_fds(uint32_t op, unsigned nfds);

#endif
