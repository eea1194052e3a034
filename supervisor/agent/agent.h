/* SPDX-License-Identifier: MIT */
/*
 * agent.h - `gpusandbox agent`: the OCI seccomp listener of a node.
 */
#ifndef GPUSANDBOX_AGENT_H
#define GPUSANDBOX_AGENT_H

/* `gpusandbox agent ...`; does not return. */
_Noreturn void gs_agent_main(int argc, char **argv);

#endif
