/* SPDX-License-Identifier: MIT */
/*
 * agent_limits.h - what one container may cost the agent, and the
 * agent's (and keeper's) own descriptor limit (issue #32 section 1;
 * docs/security/tenants.md).
 *
 * One agent process serves every container of a node, and the keeper
 * holds a copy of each container's release watches. Each RM client a
 * container makes costs the agent a descriptor (its release watch,
 * ledger_note_client) and each control file it presents one more (the
 * files' index, ledger_file_of): a container left unbounded could fill
 * the one fd table every container shares, and then the agent could not
 * read a new container's policy nor watch another's next client. Each
 * RM object costs it a ledger entry, memory every container shares. So
 * every container gets a bound on all three, refused the way the driver
 * refuses an exhausted handle space (NV_ERR_INSUFFICIENT_RESOURCES), and
 * the agent runs with its soft descriptor limit raised to its hard one.
 */
#ifndef GPUSANDBOX_AGENT_LIMITS_H
#define GPUSANDBOX_AGENT_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "taskset.h"

/* RM clients a container may hold at once, unless its policy says
 * (key clients). A CUDA process makes three (the H200 traces of
 * /work/shared/traces: PyTorch 2.11 and a driver-API program, one per
 * open of /dev/nvidiactl); PyTorch with 16 DataLoader workers that all
 * touch CUDA makes about 51, eight NCCL ranks about 24 plus their
 * peers'. 1024 leaves a wide margin and bounds the agent's cost. */
#define GS_AGENT_DEFAULT_CLIENTS 1024u
/* Control files known at once (key files): each client needs a file of
 * its own (one client per open control file, verdict.c), and a file
 * outlives its client while the program keeps it open, so twice the
 * clients. */
#define GS_AGENT_DEFAULT_FILES (2u * GS_AGENT_DEFAULT_CLIENTS)
/* RM objects a container may hold at once (key objects): the agent's
 * memory, about 170 bytes of ledger each (ledgerbench's resident memory
 * at a million, docs/perf-rounds.md "Round 5"). A CUDA process holds
 * about 140 after init and a tensor (the PyTorch trace), a few more per
 * cached segment of its allocator; 2^19 leaves room for dozens of large
 * processes and bounds a container's entries near 90 MiB. */
#define GS_AGENT_DEFAULT_OBJECTS (1u << 19)
/* Descriptors of the agent a container at those bounds may hold: a
 * release watch per client and per file. */
#define GS_AGENT_FDS_PER_CONTAINER (GS_AGENT_DEFAULT_CLIENTS + GS_AGENT_DEFAULT_FILES)

/* Gives a container's policy the agent's bounds before its file is
 * parsed: a key the file sets (a number or "unlimited") wins. */
void gs_agent_policy_defaults(struct gs_policy *p);

/* The keeper holds a copy of each client's watch, not the files'. */
#define GS_KEEPER_FDS_PER_CONTAINER GS_AGENT_DEFAULT_CLIENTS

/* Raises RLIMIT_NOFILE's soft limit to the hard one, and says on stderr
 * ("gpusandbox WHO: ...") what this process has and how many containers
 * at the default bounds that holds, each costing per_container
 * descriptors. Returns the soft limit now. */
uint64_t gs_raise_nofile(const char *who, unsigned per_container);

/* May a search for a container's fd-table sharers look at its cgroup
 * subtree alone (taskset_cgroup.c)? Only while no task of it can move a
 * task out of that subtree: the mounts the runtime made it (its init's
 * mount table) hold no writable cgroupfs, checked here, and no task of it
 * holds CAP_SYS_ADMIN in its bounding set (it could mount a cgroupfs of
 * the host's), which the searches ask of every task (may_leave, set as
 * the taskset's walk_may_leave)
 * until none does, and again after each exec. A mount a task makes in a
 * user namespace of its own shows only its own cgroup namespace, inside
 * the subtree. Sets ts->walk_bounded, and says why not in *why when it
 * stays unbounded. */
bool gs_agent_bound_walk(struct gs_taskset *ts, pid_t init, bool (*may_leave)(pid_t tid),
                         const char **why);

#endif
