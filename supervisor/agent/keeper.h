/* SPDX-License-Identifier: MIT */
/*
 * keeper.h - `gpusandbox keeper`: holds the agent's listeners and state
 * across agent restarts (keeper.c).
 */
#ifndef GPUSANDBOX_KEEPER_H
#define GPUSANDBOX_KEEPER_H

/* `gpusandbox keeper ...`; does not return. */
_Noreturn void gs_keeper_main(int argc, char **argv);

#endif
