/* SPDX-License-Identifier: MIT */
/*
 * adv.h - shared pieces of the adversarial quota tests.
 *
 * Every adversarial program tries to get more GPU memory than the sandbox's
 * quota (run.sh uses --mem 1g on a 16 GiB fake GPU), prints what it got and
 * exits 0. The programs' own counts are only used to show a run was not
 * vacuous; the verdict on the quota comes from the fake driver's stats.
 *
 * Output contract (parsed by tests/adv/run.sh): any number of free-form
 * lines, `key=value` tokens that run.sh looks up by key, and a final
 *   SUMMARY ok=N nomem=M other=K
 * counting vidmem allocation attempts: NV_OK, NV_ERR_NO_MEMORY (0x51),
 * anything else (other RM status or a failed syscall).
 */
#ifndef GPUSANDBOX_TESTS_ADV_H
#define GPUSANDBOX_TESTS_ADV_H

#include "nvuvm_abi.h"
#include "rmclient.h"

/* Allocation unit of the tests: a cuMemAlloc-sized chunk that divides the
 * 1 GiB quota exactly, so a correct supervisor allows 4 of them. */
#define ADV_CHUNK          (256ull * RMC_MIB)
/* Enough chunks to exceed the fake's 16 GiB, so an unsandboxed run always
 * ends on the fake's own refusal instead of looping forever. */
#define ADV_MAX_CHUNKS     80
/* Exit status for "could not even set up a client": not a quota verdict. */
#define ADV_EXIT_SETUP     2

struct adv_tally {
	int ok;
	int nomem;
	int other;
};

/* Classify one attempt. */
void adv_count(struct adv_tally *t, rmc_status_t st);
void adv_add(struct adv_tally *into, const struct adv_tally *t);
void adv_print_summary(const struct adv_tally *t);

/* Open a session or exit(ADV_EXIT_SETUP) with a message. `fd` as for
 * rmc_session_open. */
void adv_session_or_die(struct rmc_session *s, int fd, const char *who);

/* How one allocation path allocates and frees a chunk. */
typedef rmc_status_t (*adv_alloc_fn)(struct rmc_session *s, const struct rmc_how *how,
				     nv_handle_t h, uint64_t size);
typedef rmc_status_t (*adv_free_fn)(struct rmc_session *s, const struct rmc_how *how,
				    nv_handle_t h);

/* The RM_ALLOC class-0x40 path (NVOS64/NVOS21/XFER/forged per `how`). */
rmc_status_t adv_alloc_rm(struct rmc_session *s, const struct rmc_how *how,
			  nv_handle_t h, uint64_t size);
rmc_status_t adv_free_rm(struct rmc_session *s, const struct rmc_how *how, nv_handle_t h);

struct adv_fill {
	struct adv_tally tally;
	int held;                 /* chunks currently allocated */
	nv_handle_t h[ADV_MAX_CHUNKS];
	rmc_status_t stop;        /* status that ended the fill */
	rmc_status_t refree;      /* free of one chunk after the refusal */
	rmc_status_t realloc;     /* allocation right after that free */
};

/* Allocate `chunk`-byte pieces until one is refused (or ADV_MAX_CHUNKS),
 * then, if at least one is held, free one and allocate again: a refusal
 * must be driver-shaped and recoverable. Prints a line tagged `label`. The
 * chunks stay allocated (see adv_fill_release). */
/* Up to max ADV_CHUNK allocations under s's device, each counted in t,
 * until one fails; returns how many succeeded (held until freed). */
int adv_hold_chunks(struct rmc_session *s, int max, struct adv_tally *t);

/* Another tenant's end of a harness handshake: creates file (the
 * harness's "ready") and waits, bounded (about a minute), for file.done.
 * 0 when file could be made. */
int adv_ready_then_wait(const char *file);

/* Two processes' handshake through a file of two hex numbers: written
 * whole and renamed into place, so the reader never sees half a line;
 * read once it exists, polled every 10 ms for up to steps polls. 0 when
 * read. */
void adv_publish_pair(const char *path, unsigned a, unsigned b);
int  adv_wait_pair(const char *path, unsigned *a, unsigned *b, int steps);
#define ADV_PAIR_POLL_US 10000

void adv_fill(struct rmc_session *s, const struct rmc_how *how, adv_alloc_fn alloc,
	      adv_free_fn free_fn, uint64_t chunk, const char *label, struct adv_fill *f);
void adv_fill_release(struct rmc_session *s, const struct rmc_how *how, adv_free_fn free_fn,
		      struct adv_fill *f);

/* Allocates `tries` times through one NVOS64 that another thread keeps
 * rewriting (class, parent), with new handles from `base` and `params` as
 * pAllocParms; counts the NV_OK and NV_ERR_INSUFFICIENT_RESOURCES answers.
 * A quota must hold whatever the call held when the supervisor read it. */
void adv_race_allocs(int fd, volatile struct nvos64 *call, nv_handle_t client, nv_handle_t base,
		     uint64_t params, int tries, int *ok, int *refused);

/* Wait (bounded) until the fake driver reports no vidmem in use, e.g. after
 * closing a file whose release FUSE delivers asynchronously. Returns 0 if it
 * got there, -1 on timeout or when $GS_FAKE_STATS is unavailable. */
int adv_wait_fake_idle(int timeout_ms);

/* Sends fd over a unix socket (SCM_RIGHTS) with len bytes of msg; 0 or
 * -1. adv_recv_fd receives them: the fd (close-on-exec), or -1. */
int adv_send_fd(int sock, int fd, const void *msg, size_t len);
int adv_recv_fd(int sock, void *msg, size_t len);

/* ---- UVM external mappings (uvm_hold, uvm_ctlfd) ---- */

/* Where the tests' external range lies in the VA space (UVM wants 4 KiB
 * alignment; the fake wants a mapping on the memory's page size, 2 MiB),
 * and the GPU slots of the map's struct: the fake plays 580. */
#define ADV_UVM_RANGE_BASE 0x7f2000000000ull
#define ADV_UVM_MAX_GPUS   UVM_MAX_GPUS_570

struct adv_uvm_map {
	uint8_t bytes[UVM_MAP_EXTERNAL_SIZE(ADV_UVM_MAX_GPUS)];
};

struct uvm_map_external_tail *adv_uvm_tail(struct adv_uvm_map *m);
/* A map of len bytes of client's memory mem at the range's base, on one
 * GPU, naming ctl as rmCtrlFd. */
void adv_uvm_fill_map(struct adv_uvm_map *m, int ctl, nv_handle_t client, nv_handle_t mem,
		      uint64_t len);
/* /dev/nvidia-uvm, initialized, with an external range of len bytes at
 * the base; exits ADV_EXIT_SETUP (saying so as who) when it cannot. */
int adv_uvm_with_range(uint64_t len, const char *who);
/* UVM_MAP_EXTERNAL_ALLOCATION: its rmStatus, or RMC_SYSERR(errno). */
rmc_status_t adv_uvm_map(int uvm, struct adv_uvm_map *m);

#endif /* GPUSANDBOX_TESTS_ADV_H */
