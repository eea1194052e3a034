/* SPDX-License-Identifier: MIT */
/*
 * stack.h - the user-space call stack of a refused thread (issue #15), as
 * `strace -k` shows it: where in the workload a refused call came from.
 *
 * The thread is blocked in its seccomp notification while we look, so
 * /proc/TID/syscall gives its stack pointer and pc without stopping it,
 * and its stack is read with process_vm_readv. libdw (elfutils) unwinds by
 * the binaries' CFI and names each frame; where CFI runs out, the frame
 * pointer chain is followed. Everything read is the workload's and may be
 * hostile: the result is only recorded, never decided upon, and the
 * parsing (libdw on the workload's ELF files) runs in a short-lived child
 * of the supervisor confined by a seccomp filter, killed past
 * GS_STACK_TIMEOUT_MS.
 */
#ifndef GPUSANDBOX_STACK_H
#define GPUSANDBOX_STACK_H

#include <stdbool.h>
#include <sys/types.h>

#include "audit.h"

/* The longest a refusal waits for its stack (the sandbox's lock is held). */
#define GS_STACK_TIMEOUT_MS 200

/* Was gpusandbox built with libdw? Without it there are no stacks. */
bool gs_stack_available(void);
/* Fills out with tid's stack (out->error says why there is none). */
void gs_stack_read(pid_t tid, struct gs_stack *out);

#endif
