/* SPDX-License-Identifier: MIT */
/*
 * exec_managed.c - managed (UVM) memory under "managed = deny".
 *
 * RM never sees managed memory: cudaMallocManaged creates a managed range by
 * mmap() of /dev/nvidia-uvm, and UVM takes GPU pages for it on fault or
 * migration, outside every per-process account (rm-abi.md section 7). The
 * only system call that creates such a range is that mmap, so that is where
 * "deny" acts. The filter traps the mmap calls shaped like one (filter.c);
 * this file decides them, and checks at start-up that the driver cannot
 * give GPUs access to pageable memory, which would be a second way in.
 *
 * CUDA itself maps /dev/nvidia-uvm once per context, over a semaphore pool
 * it created with UVM_ALLOC_SEMAPHORE_POOL (system memory, measured on the
 * H200 in docs/managed-memory.md). Such an mmap attaches to the existing
 * range and creates nothing; the driver's own state tells it apart
 * (UVM_VALIDATE_VA_RANGE), never the workload's memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "exec_int.h"
#include "exec_managed.h"
#include "nvuvm_abi.h"
#include "rm_own.h"

#define PAGE_BYTES 4096ull

/* mmap's arguments by position, for every register form. */
enum { MMAP_ARG_ADDR, MMAP_ARG_LEN, MMAP_ARG_PROT, MMAP_ARG_FLAGS, MMAP_ARG_FD, MMAP_ARG_OFF };
/* remap_file_pages(start, size, prot, pgoff, flags). */
enum { REMAP_ARG_START, REMAP_ARG_SIZE };

bool gs_abi_is_mmap(const struct gs_abi *abi, uint32_t nr)
{
	return (abi->mmap_nr >= 0 && nr == (uint32_t)abi->mmap_nr) ||
	       (abi->mmap2_nr >= 0 && nr == (uint32_t)abi->mmap2_nr) ||
	       (abi->remap_file_pages_nr >= 0 && nr == (uint32_t)abi->remap_file_pages_nr);
}

/* Does the UVM VA space behind fd hold a range of exactly [base, base+len)?
 * Asked of the driver through our dup: the answer is the kernel's state,
 * which the workload cannot rewrite under us. A stand-in that answers
 * nothing leaves the status at "no such range". */
static bool uvm_range_exists(int fd, uint64_t base, uint64_t len)
{
	struct uvm_validate_va_range_params p = {
		.base = base,
		.length = len,
		.rm_status = NV_ERR_INVALID_ADDRESS,
	};

	return gs_driver_ioctl(fd, UVM_VALIDATE_VA_RANGE, &p, true) == 0 && p.rm_status == NV_OK;
}

static struct answer refuse_mmap(struct call *c, uint64_t len, const char *why)
{
	c->d.has_size = true;
	c->d.size = len;
	c->d.verdict = GS_VERDICT_REFUSE;
	c->d.resource = "managed";
	c->d.reason = why;
	c->d.errnum = EPERM;
	c->audit = true;
	/* A refusal by policy, said as one: CUDA reports EPERM from this mmap
	 * as cudaErrorNotPermitted, and the context stays usable. Measured on
	 * the H200 (docs/managed-memory.md): ENOMEM, EACCES, EAGAIN and ENODEV
	 * all become cudaErrorUnknown, and no errno gives
	 * cudaErrorMemoryAllocation. */
	return answer_errno(EPERM);
}

struct answer handle_uvm_mmap(struct call *c, const struct seccomp_data *data)
{
	const struct gs_abi *abi = c->abi;
	uint64_t len = data->args[MMAP_ARG_LEN], off = data->args[MMAP_ARG_OFF];
	uint64_t vma_len;

	c->d.call = "mmap";
	if (data->nr == abi->remap_file_pages_nr) {
		/* Deprecated since Linux 3.16 and emulated with mmap of the
		 * mapping's own file. UVM lets a device-P2P range be freed
		 * while its VMA stays mapped (a semaphore pool it does not:
		 * measured, docs/managed-memory.md); re-mapping that VMA would
		 * create a managed range with no mmap call. Its arguments name
		 * no file, so it is refused whole. */
		c->d.call = "remap_file_pages";
		return refuse_mmap(c, data->args[REMAP_ARG_SIZE],
		                   "remap_file_pages can re-map a UVM file into a managed range");
	}
	if (abi->old_mmap && data->nr == abi->mmap_nr)
		/* i386's old mmap reads its arguments from the caller's memory,
		 * which a second thread can rewrite after we looked. It has had
		 * no use since mmap2 (2.4 kernels), so it is refused whole. */
		return refuse_mmap(c, 0, "old i386 mmap: its arguments are in memory the workload can change");
	/* The registers as the kernel will use them: compat ABIs' arguments
	 * arrive zero-extended, x32's are 64-bit. mmap2 counts in pages. */
	if (abi->mmap2_nr >= 0 && data->nr == abi->mmap2_nr)
		off = (off & PTR32_MASK) * GS_MMAP2_UNIT;
	/* The kernel refuses an empty mapping before any driver sees it. */
	if (len == 0)
		return answer_continue();
	c->wfd = (int)data->args[MMAP_ARG_FD];
	/* No dup of a file that is not UVM's (dup_workload_fd_kind: our close
	 * of a dup of a FUSE file the workload serves would wait for its
	 * server). */
	enum gs_node_kind kind;
	c->dup = dup_workload_fd_kind(&c->sb->pidfds, c->tid, c->wfd, GS_NODE_BIT(GS_NODE_UVM), &kind);
	if (c->dup < 0 && errno == ENODEV) {
		c->d.reason = "not nvidia-uvm";
		return answer_continue();
	}
	if (c->dup < 0)
		return answer_errno(errno == EBADF ? EBADF : EPERM);
	if (!fd_is_uvm(c->sb->uvm_major, c->dup)) {
		/* A shared writable file mapping that is not UVM's.
		 * SECURITY.md: a descriptor swapped between this look and the
		 * kernel's own is one of the two races left open. */
		c->d.reason = "not nvidia-uvm";
		return answer_continue();
	}
	/* The kernel rounds the length up to pages; the range must match
	 * the VMA exactly to be attached to. */
	vma_len = gs_round_up(len, PAGE_BYTES);
	/* The other open race: the range freed (UVM_FREE) between this
	 * question and the mapping. */
	if (uvm_range_exists(c->dup, off, vma_len)) {
		c->d.reason = "attaches to an existing UVM range";
		return answer_continue();
	}
	return refuse_mmap(c, len, "managed = deny: the mapping would create a managed (UVM) range");
}

/* ---- start-up: can the driver give GPUs pageable memory? ---------------- */

int gs_managed_check_host(unsigned uvm_major, struct gs_error *err)
{
	struct uvm_initialize_params init = { .flags = 0, .rm_status = NV_ERR_GENERIC };
	struct uvm_pageable_mem_access_params pma = { .pageable_mem_access = 1,
	                                              .rm_status = NV_ERR_GENERIC };
	struct stat st;
	int fd;

	/* No UVM driver: no managed memory and no pageable access. A node the
	 * supervisor cannot open, the workload (same user, fewer privileges,
	 * same mounts) cannot open either. */
	if (!uvm_major)
		return 0;
	fd = open(UVM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != uvm_major) {
		close(fd); /* a stand-in, not the driver */
		return 0;
	}
	/* A VA space of our own with flags 0 has the most the driver grants:
	 * the flags only take HMM or the mm association away. */
	if (ioctl(fd, UVM_INITIALIZE, &init) < 0 || init.rm_status != NV_OK ||
	    ioctl(fd, UVM_PAGEABLE_MEM_ACCESS, &pma) < 0 || pma.rm_status != NV_OK) {
		close(fd);
		return gs_fail(err, EIO,
		               "managed = deny: cannot ask nvidia-uvm whether GPUs reach pageable memory");
	}
	close(fd);
	if (pma.pageable_mem_access)
		return gs_fail(err, EOPNOTSUPP,
		               "managed = deny cannot be enforced here: nvidia-uvm lets GPUs use pageable "
		               "memory (HMM or ATS), which UVM can move into GPU memory without any "
		               "system call; load nvidia-uvm with uvm_disable_hmm=1 (uvm_ats_mode=0 "
		               "with ATS) or use managed = allow-unaccounted");
	return 0;
}
