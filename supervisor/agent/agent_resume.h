/* SPDX-License-Identifier: MIT */
/*
 * agent_resume.h - resuming the containers a keeper held (agent_resume.c).
 */
#ifndef GPUSANDBOX_AGENT_RESUME_H
#define GPUSANDBOX_AGENT_RESUME_H

#include "agent_sandbox.h"
#include "keeper_link.h"

/* Waits for the previous agent (old_agent, a pidfd or -1; closed) to be
 * gone, then resumes every container of held, or kills it. Takes held. */
void gs_agent_resume(struct gs_agent *a, struct gs_kept_container *held, int old_agent);

#endif
