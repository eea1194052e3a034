/* SPDX-License-Identifier: MIT */
/*
 * agent_uvm_map.h - which containers an agent started with --uvm-map
 * as-user maps as their own uid (own_rm.h, gs_own_rm_share_token).
 */
#ifndef GPUSANDBOX_AGENT_UVM_MAP_H
#define GPUSANDBOX_AGENT_UVM_MAP_H

#include <stdbool.h>
#include <sys/types.h>

/* Does the container whose init is init (init_pidfd its pidfd) run in a
 * user namespace other than the agent's, with an effective uid, as the
 * host sees it, other than 0? Then *uid is that uid. False with *why set
 * to a phrase otherwise, or when the init could not be read (or exited
 * while it was: the pid may have named another process by then). */
bool agent_container_map_uid(pid_t init, int init_pidfd, uid_t *uid, const char **why);

#endif
