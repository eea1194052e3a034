/* SPDX-License-Identifier: MIT */
/*
 * uvm_maps.h - the UVM external mappings the supervisor made for a
 * sandbox (issue #17 item 9), each holding a ledger pin on the memory it
 * maps, so that the memory stays charged for as long as UVM keeps it.
 *
 * UVM dups the RM memory it maps into its own client and keeps it until
 * the mapping goes: an unmap or a mapping over it on the same GPU (which
 * split a partly covered mapping at their edges, each piece keeping the
 * memory), the free of its range, or the teardown of the VA space when
 * the UVM file's last reference closes (uvm_map_external.c,
 * uvm_va_range.c, 580.95.05). The records follow the same rules on the
 * calls the supervisor performed and saw succeed; anything else (a GPU
 * unregistered, a call we did not see succeed) leaves a record in place,
 * the charge kept: the safe side.
 *
 * When the mappings go with the file: a UVM file's release cannot be
 * watched without a reference (it has no poll, so it cannot sit in an
 * epoll set as control files do, ledger_watch.h; measured on an H200).
 * So while a file has records, we hold a dup of it: its VA space, and so
 * its mappings, cannot go without us. The records go when the calls we
 * perform take them away, or when every process that mapped through the
 * file has exited (a pidfd each): then we unmap what they mapped
 * ourselves, through our dup, before the pins go, and close it. A file a
 * live process still holds without having mapped through it loses those
 * mappings: never memory the ledger does not pin.
 *
 * Used under the sandbox lock, like the ledger.
 */
#ifndef GPUSANDBOX_UVM_MAPS_H
#define GPUSANDBOX_UVM_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"
#include "nvrm_abi.h"

struct gs_uvm_map {
	uint32_t space;                     /* index into spaces */
	uint8_t  gpu_uuid[UVM_UUID_BYTES];
	uint64_t first, last;               /* [first, last] of the VA space */
	uint32_t pin;                       /* ledger pin, or LEDGER_NO_PIN */
};

#define GS_UVM_MAPPERS 8u
struct gs_uvm_space {
	int      fd;                        /* our dup of the UVM file; -1: slot free */
	struct {
		pid_t tgid;
		int   pidfd;
	} mapper[GS_UVM_MAPPERS];           /* the processes that mapped through it */
	unsigned n_mappers;
};

struct gs_uvm_maps {
	struct gs_uvm_space *spaces;
	uint32_t             n_spaces, cap_spaces;
	struct gs_uvm_map   *maps;
	uint32_t             n_maps, cap_maps;
};

void gs_uvm_maps_init(struct gs_uvm_maps *m);
/* Unmaps and drops every record (their pins too), closes every dup. */
void gs_uvm_maps_fini(struct gs_uvm_maps *m, struct ledger *l);

/* The space of the UVM file behind fd (ours): a known one (kcmp), or a
 * new one holding a dup of it. -1 when the file cannot be told apart or
 * dup'ed (the caller then fails closed). */
int gs_uvm_space_of(struct gs_uvm_maps *m, struct ledger *l, int fd);
/* Process tgid mapped through space; takes pidfd (one of tgid's). -1 when
 * it cannot be remembered (the caller then fails closed). */
int gs_uvm_space_note_mapper(struct gs_uvm_maps *m, uint32_t space, pid_t tgid, int pidfd);
/* Lets go of a space that holds no record (closes our dup). */
void gs_uvm_space_tidy(struct gs_uvm_maps *m, uint32_t space);

/* What a successful mapping, unmap or free did to the records of space:
 * [first, last] leaves them on the GPU uuid (every GPU when uuid is
 * NULL), a record partly inside keeping its outside parts (a second pin
 * for a second part). contained_only: only records wholly inside go (a
 * range freed whole: its mappings lie inside it). Adds the bytes
 * released to released. -1 when a split could not be recorded: the
 * record then stays whole (charged longer, never less). */
int gs_uvm_maps_cut(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, bool contained_only, uint64_t released[GS_MAX_GPUS]);
/* UVM_FREE from 590 on frees the range that starts at base, its end
 * unknown to us: records that start there go (UVM mappings lie inside
 * one range, and CUDA's fill it); others stay until their file goes. */
void gs_uvm_maps_cut_starting(struct gs_uvm_maps *m, struct ledger *l, uint32_t space,
                              uint64_t base, uint64_t released[GS_MAX_GPUS]);
/* Records a mapping; takes pin (released at once when it cannot be
 * recorded, with -1: the caller must then undo the mapping). */
int gs_uvm_maps_add(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, uint32_t pin, uint64_t released[GS_MAX_GPUS]);
/* The files every mapper of which has exited: what they map is unmapped
 * through our dup, their records and pins dropped and the dup closed.
 * Returns how many files. */
unsigned gs_uvm_maps_reap(struct gs_uvm_maps *m, struct ledger *l, uint64_t released[GS_MAX_GPUS]);
/* Live records (for tests and metrics). */
uint32_t gs_uvm_maps_live(const struct gs_uvm_maps *m);

#endif
