/* SPDX-License-Identifier: MIT */
/*
 * agent_inject.h - who receives an injected ioctl in the agent
 * (docs/security/client-allocation.md, "A second client on a control
 * file"; inject.h).
 *
 * A second client on a control file is made by its caller from a page of
 * ours: the caller is made to run the ioctl, which the container's own
 * filter traps, so someone must receive it and continue it while the
 * worker that injects holds the session lock and waits in ptrace. The
 * command line hands its listener to another worker of its pool; the
 * agent has one worker per listener, so for the injection's duration a
 * receiver thread of that worker's listener runs: it continues the
 * injected ioctl (gs_execute_continue_injected: the tid we hold stopped,
 * our page) and keeps every other notification, unanswered, for the
 * worker to serve after its call, in order, each recorded in a state
 * slot of its own like a received call (so that a restarted agent
 * answers it). It decides nothing and touches neither the session nor
 * the ledger.
 */
#ifndef GPUSANDBOX_AGENT_INJECT_H
#define GPUSANDBOX_AGENT_INJECT_H

#include <stdbool.h>

struct worker;
struct gs_agent_container;

/* A new worker's receiver, none running, its scratch's hook set. */
void agent_inject_init(struct worker *w);

/* The scratch's inject_receiver hook (ctx: the worker), called by the
 * worker with the session lock held: on starts the receiver (false when
 * it cannot), off stops it and waits for it. */
bool agent_inject_receiver(void *ctx, bool on);

/* After the worker's own call: each notification the receiver kept,
 * in order, copied into the worker's scratch->req and served by serve
 * (the worker's serve_received) with its own state slot, which is let go
 * after it. serve's first non-zero return, or 0. */
int agent_inject_serve_kept(struct worker *w, int (*serve)(struct worker *w));

/* Says at teardown how many calls the container's injections kept. */
void agent_inject_log(struct gs_agent_container *c);

/* The worker leaves: kept notifications' slots and the buffers go (the
 * container is being killed or its listener hung up: nothing is left to
 * answer them). */
void agent_inject_fini(struct worker *w);

#endif
