/* SPDX-License-Identifier: MIT */
/*
 * test_verdict.h - what the verdict stage's unit test shares between its
 * two files: test_verdict.c (the alloc, control, schedule and escape rows,
 * the decode, and main) and test_verdict_sharing.c (memory handed beyond
 * its client: UVM maps, --p2p-register, export and import fds).
 */
#ifndef GPUSANDBOX_TEST_VERDICT_H
#define GPUSANDBOX_TEST_VERDICT_H

#include <stdbool.h>
#include <string.h>

/* A row states a base call and then what differs from it. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

#include "verdict.h"
#include "nvrm/rm_abi.h"

/* The tests decode with the newest tables, as a run without a driver does. */
#define ABI gs_rm_abi_default()

#define MIB (1ull << 20)

/* The base of an RM_CONTROL row's call; a row adds what differs. */
#define CONTROL(cmd_) .escape = NV_ESC_RM_CONTROL, .h_client = 0xc1, .h_object = 0xd0, \
	.cmd = (cmd_), .has_params = true, .params_size = 1028, .ctrl_known = true

static inline bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A row's call as the decoder would give it: with the tables it was
 * decoded with. */
static inline void decoded(struct gs_rm_call *d, const struct gs_rm_call *c)
{
	/* memcpy, so that padding is the row's too and memcmp compares. */
	memcpy(d, c, sizeof(*d));
	d->abi = ABI;
}

/* test_verdict_sharing.c, run by test_verdict.c's main. */
void check_uvm_rows(void);
void check_p2p_rows(void);
void check_decode_p2p(void);
void check_fd_export(void);
/* check.h counts each file apart: adds test_verdict_sharing.c's counts
 * to *passed and *failed, for main's one summary line. */
void sharing_add_counts(unsigned *passed, unsigned *failed);

#endif
