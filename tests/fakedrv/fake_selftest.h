/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest.h - the self-test's helpers (fake_selftest.c), shared with
 * the checks kept in files of their own (fake_selftest_uvmmap.c,
 * fake_selftest_uvmchan.c and the others below).
 */
#ifndef GPUSANDBOX_FAKE_SELFTEST_H
#define GPUSANDBOX_FAKE_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "fake_rm.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* Prints "ok - ..." or "FAIL - ..." and counts it. */
void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A key of the fake's live stats, or -1. */
int64_t stat_get(const char *key);
/* The same, polled until it is want (releases come asynchronously). */
int64_t stat_wait(const char *key, int64_t want);
int nv_ioctl(int fd, uint32_t nr, void *arg, size_t size);
/* NVOS64 alloc with paramsSize 0, as CUDA does. */
nv_status_t alloc64(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn, uint32_t cls, void *params);
nv_status_t rm_free(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t h);
nv_status_t control(int fd, nv_handle_t hc, nv_handle_t ho, uint32_t cmd, uint32_t flags, void *params,
                    uint32_t size);
int open_ctl(void);
/* A client and a device on GPU 0 through ctl file fd. */
nv_handle_t make_client(int fd, nv_handle_t *hdev);
/* The branch the fake plays ($GS_FAKE_DRIVER_VERSION, else 580). */
int driver_branch(void);
/* UVM's external mappings (fake_uvm.c), checked in
 * fake_selftest_uvmmap.c and used by the share checks. */
#define UVM_RANGE_BASE   (1ull << 40)  /* a 2 MiB aligned VA, far from anything */
#define UVM_RANGE_BYTES  (128 * MIB)
#define UVM_MAP_BYTES    (64 * MIB)
#define UVM_GPU_A        0x11          /* UUIDs: 16 raw bytes of this value */
#define UVM_GPU_B        0x22
#define NV_ERR_INVALID_OFFSET     0x37u  /* nvstatuscodes.h */
#define NV_ERR_UVM_ADDRESS_IN_USE 0x68u
#define UVM_BIG_GPU_ARRAY_BRANCH  570
#define UVM_FREE_BASE_ONLY_BRANCH 590
/* UVM_MAX_GPUS on the branch the fake plays. */
uint32_t uvm_max_gpus(void);
/* A UVM call: rmStatus preset to GENERIC, so an untouched struct shows. */
nv_status_t uvm_call(int ufd, uint32_t cmd, void *p, size_t status_off);
/* /dev/nvidia-uvm, initialized; exits on failure. */
int open_uvm(void);
nv_status_t dup_obj(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn, nv_handle_t hcs, nv_handle_t hos);
nv_status_t alloc_vidmem(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn, uint64_t size);
nv_status_t uvm_create(int ufd, uint64_t base, uint64_t len);
nv_status_t uvm_free(int ufd, uint64_t base, uint64_t len);
/* Maps [base, base+len) of (hc, hm) on one GPU. */
nv_status_t uvm_map(int ufd, uint64_t base, uint64_t len, nv_handle_t hc, nv_handle_t hm);
/* The same at offset off on count GPUs, the first being gpu, the next
 * ones gpu+1... */
nv_status_t uvm_map_n(int ufd, uint64_t base, uint64_t len, uint64_t off, nv_handle_t hc,
                      nv_handle_t hm, int gpu, uint64_t count);

/* Another process making a client and 64 MiB on GPU 0, alive until
 * other_stop: with its thread's euid set to euid first ((uid_t)-1: as
 * is), and its client (whole_client) or memory shared with pol (NULL:
 * not shared). hc and hm are 0 when it failed. */
struct other { pid_t pid; int go; nv_handle_t hc, hm; };
/* The calling thread's euid alone (the raw setresuid, as the
 * supervisor's worker takes a workload's uid: rm_own.c). */
bool selftest_set_euid(uid_t euid);
void other_start_as(struct other *o, uid_t euid, const struct rs_share_policy *pol, bool whole_client);
/* The same with our euid, its memory (or, whole_client, its client)
 * shared with our client share_to (0: not shared). */
void other_start(struct other *o, nv_handle_t share_to, bool whole_client);
/* Lets it end; did it exit 0? */
bool other_stop(struct other *o);

/* fake_selftest_uvmmap.c */
void uvm_checks(void);
/* fake_selftest_uvmchan.c */
void uvm_chan_checks(void);
void uvm_gpu_checks(void);
/* fake_selftest_semsurf.c */
void semsurf_checks(void);
/* fake_selftest_engines.c */
void engine_checks(void);
/* fake_selftest_token.c */
void token_checks(void);

#endif
