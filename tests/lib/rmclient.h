/* SPDX-License-Identifier: MIT */
/*
 * rmclient.h - a tiny NVIDIA RM client for gpusandbox's tests.
 *
 * Every call here is a raw ioctl (syscall(SYS_ioctl, ...) or an explicit
 * compat-ABI trap), never a libc or CUDA wrapper, so that the tests exercise
 * exactly what a hostile static binary could send. Struct layouts come from
 * include/nvrm_abi.h.
 *
 * Return convention: the helpers return an rmc_status_t. A value below
 * RMC_SYSERR_BASE is the RM status the driver (or a supervisor imitating it)
 * wrote into the params, with the ioctl returning 0. A value with
 * RMC_SYSERR_BASE set means the syscall itself failed; the low bits hold the
 * errno. This lets a test tell NV_OK, NV_ERR_NO_MEMORY (0x51) and ENOSYS
 * (supervisor gone) apart with one comparison.
 */
#ifndef GPUSANDBOX_TESTS_RMCLIENT_H
#define GPUSANDBOX_TESTS_RMCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "nvrm_abi.h"

typedef uint32_t rmc_status_t;

#define RMC_SYSERR_BASE      0xE0000000u
#define RMC_SYSERR(e)        (RMC_SYSERR_BASE | (uint32_t)(e))
#define RMC_IS_SYSERR(s)     (((s) & RMC_SYSERR_BASE) == RMC_SYSERR_BASE)
#define RMC_ERRNO(s)         ((int)((s) & ~RMC_SYSERR_BASE))

#define RMC_MIB              (1024ull * 1024ull)
#define RMC_GIB              (1024ull * RMC_MIB)

/* Device node paths. The fake driver mounts its FUSE files over these. */
#define RMC_CTL_PATH         "/dev/nvidiactl"

/* Object handles we choose ourselves (clients are chosen by RM). The 0x5c
 * prefix mirrors what CUDA uses in the traces; any nonzero value works. */
#define RMC_H_DEVICE         0x5c000001u
#define RMC_H_SUBDEVICE      0x5c000002u
#define RMC_H_MEM_BASE       0x5c001000u

/* Which syscall ABI carries the ioctl. The i386 and x32 forms require every
 * pointer reachable from the arg (top-level struct and nested params) to lie
 * below 4 GiB: use rmc_alloc_low() for those buffers. */
enum rmc_abi {
	RMC_ABI_NATIVE = 0,   /* x86-64 syscall, __NR_ioctl 16 */
	RMC_ABI_I386,         /* int $0x80, eax = 54 */
	RMC_ABI_X32_16,       /* x32 bit | 16 (64-bit-only entry: ENOSYS from x32) */
	RMC_ABI_X32_514,      /* x32 bit | 514, the real x32 compat ioctl */
};

/* How one escape is issued. A NULL pointer means "canonical": native ABI,
 * _IOWR('F', nr, size), no XFER, NVOS64 for RM_ALLOC. */
struct rmc_how {
	uint32_t     req_word;   /* 0: build NV_IOC_WORD(nr, size) */
	bool         xfer;       /* wrap in NV_ESC_IOCTL_XFER_CMD */
	bool         nvos21;     /* RM_ALLOC: 32-byte NVOS21 instead of NVOS64 */
	enum rmc_abi abi;
};

/* A client with one device and subdevice on one open ctl file. */
struct rmc_session {
	int          fd;
	nv_handle_t  client;
	nv_handle_t  device;
	nv_handle_t  subdevice;
	nv_handle_t  next_mem;   /* next handle rmc_next_handle() hands out */
};

/* ---- raw transport ----------------------------------------------------- */

/* open(2) of the ctl node; returns the fd or -errno. */
int rmc_open_ctl(void);

/* Issue escape `nr` with `size` bytes at `arg` as `how` says. Returns 0 or
 * -errno; does not look at any RM status. */
int rmc_escape(int fd, const struct rmc_how *how, uint32_t nr, void *arg, uint32_t size);

/* Memory below 4 GiB (MAP_32BIT), zeroed, for the compat ABIs. NULL on
 * failure. Never freed by the tests (they are short-lived). */
void *rmc_alloc_low(size_t size);

/* ---- RM operations ----------------------------------------------------- */

/* Generic RM_ALLOC. *h_new is in/out (for clients pass 0 and get RM's
 * choice back). `params` may be NULL. */
rmc_status_t rmc_alloc(int fd, const struct rmc_how *how, nv_handle_t h_root,
		       nv_handle_t h_parent, nv_handle_t *h_new, uint32_t h_class,
		       void *params, uint32_t params_size);

rmc_status_t rmc_alloc_client(int fd, const struct rmc_how *how, nv_handle_t *h_client);
rmc_status_t rmc_alloc_device(int fd, nv_handle_t h_client, nv_handle_t h_device);
rmc_status_t rmc_alloc_subdevice(int fd, nv_handle_t h_client, nv_handle_t h_device,
				 nv_handle_t h_subdevice);

/* Fill `p` for a class-0x40 allocation of `size` bytes the way CUDA does:
 * owner nonzero, type/flags/attr 0 (attr location VIDMEM). */
void rmc_fill_vidmem_params(struct nv_memory_allocation_params *p, uint32_t owner,
			    uint64_t size);

/* Class 0x40 of `size` bytes under `h_parent` (the device), paramsSize 0. */
rmc_status_t rmc_alloc_vidmem(int fd, const struct rmc_how *how, nv_handle_t h_client,
			      nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size);

rmc_status_t rmc_free(int fd, const struct rmc_how *how, nv_handle_t h_root,
		      nv_handle_t h_parent, nv_handle_t h_old);

/* RM_DUP_OBJECT: *h_object is in/out (the destination handle). */
rmc_status_t rmc_dup(int fd, const struct rmc_how *how, nv_handle_t h_client,
		     nv_handle_t h_parent, nv_handle_t *h_object,
		     nv_handle_t h_client_src, nv_handle_t h_object_src);

rmc_status_t rmc_control(int fd, const struct rmc_how *how, nv_handle_t h_client,
			 nv_handle_t h_object, uint32_t cmd, void *params,
			 uint32_t params_size);

/* The params size of control cmd on the driver the fake plays
 * (GS_FAKE_DRIVER_VERSION, from with-fake-nvidia), from gpusandbox's
 * per-version tables: what that branch's CUDA would send. Our struct's
 * size (the 580 layout, the largest) when the version has no tables.
 * Buffers stay our structs; only paramsSize changes. */
uint32_t rmc_ctrl_size(uint32_t cmd, uint32_t ours);
/* The same for the params of an allocation of class cls. */
uint32_t rmc_class_size(uint32_t cls, uint32_t ours);

/* RM_VID_HEAP_CONTROL ALLOC_SIZE with attr location VIDMEM, and FREE. */
rmc_status_t rmc_vidheap_alloc(int fd, const struct rmc_how *how, nv_handle_t h_client,
			       nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size);
/* The same with attr2 (NVOS32_ATTR2_USE_EGM, ...). */
rmc_status_t rmc_vidheap_alloc_attr2(int fd, const struct rmc_how *how, nv_handle_t h_client,
				     nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size,
				     uint32_t attr2);
rmc_status_t rmc_vidheap_free(int fd, const struct rmc_how *how, nv_handle_t h_client,
			      nv_handle_t h_parent, nv_handle_t h_mem);

/* ---- sessions ---------------------------------------------------------- */

/* Open the ctl node (or use `fd` >= 0), allocate a client, device 0 and
 * subdevice 0. Returns NV_OK or the first failing status; on failure the
 * fd is left open (s->fd) so the caller can report and close it. */
rmc_status_t rmc_session_open(struct rmc_session *s, int fd);
/* The same with a client handle of the caller's choosing (0: RM picks). */
rmc_status_t rmc_session_open_client(struct rmc_session *s, int fd, nv_handle_t h_client);
/* Free the client (RM frees its subtree) and close the fd. */
void rmc_session_close(struct rmc_session *s);
nv_handle_t rmc_next_handle(struct rmc_session *s);
/* n video memory allocations of bytes on the session's device, each freed
 * at once (a cuMemAlloc + cuMemFree loop); stops at the first failure.
 * *done: the pairs tried, a failed one included. Returns NV_OK or that
 * failure's status. */
rmc_status_t rmc_vidmem_pairs(struct rmc_session *s, int n, uint64_t bytes, int *done);

/* ---- reporting --------------------------------------------------------- */

/* Short text without spaces for a status ("NV_OK", "NO_MEMORY",
 * "errno:ENOSYS", "status:0x1f"). The
 * result lives in a static buffer for errno forms: not thread-safe, fine
 * for printing from one thread. */
const char *rmc_status_str(rmc_status_t st);

/* Read `key` from the fake driver's live stats file ($GS_FAKE_STATS).
 * Returns 0 and sets *val, or -1 if the variable, file or key is missing. */
int rmc_fake_stat(const char *key, uint64_t *val);

/* Parse "256m", "1g", "4096" (bytes). Returns 0 on success. */
int rmc_parse_size(const char *s, uint64_t *out);

#endif /* GPUSANDBOX_TESTS_RMCLIENT_H */
