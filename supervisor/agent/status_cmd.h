/* SPDX-License-Identifier: MIT */
/*
 * status_cmd.h - `gpusandbox status`: the sandboxes an agent serves, read
 * from its --status-socket.
 */
#ifndef GPUSANDBOX_STATUS_CMD_H
#define GPUSANDBOX_STATUS_CMD_H

/* The socket the DaemonSet gives the agent (deploy/daemonset.yaml). */
#define GS_STATUS_SOCKET_DEFAULT "/run/gpusandbox/status.sock"

/* `gpusandbox status ...`; does not return. */
_Noreturn void gs_status_main(int argc, char **argv);

#endif
