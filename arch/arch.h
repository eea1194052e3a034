/* SPDX-License-Identifier: MIT */
/*
 * arch.h - per-architecture syscall facts, in the manner of libseccomp's
 * arch tables: which syscall ABIs a process on this machine can use, and the
 * ioctl number in each. The filter must cover every ABI the kernel accepts,
 * because a compat ioctl reaches the same driver handler (rm-abi.md 1.1).
 */
#ifndef GPUSANDBOX_ARCH_H
#define GPUSANDBOX_ARCH_H

#include <stdbool.h>
#include <stdint.h>

struct gs_abi {
	const char *name;
	uint32_t    scmp_arch;    /* SCMP_ARCH_* token for libseccomp */
	uint32_t    audit_arch;   /* AUDIT_ARCH_* as seen in seccomp_data.arch */
	bool        ptr32;        /* pointers (and ioctl arg) are 32-bit */
	int         ioctl_nr;     /* resolved at start-up from libseccomp */
	/* mmap in its forms (-1 where the ABI lacks it), resolved with
	 * ioctl_nr. "mmap" takes its six arguments in registers, the offset
	 * in bytes, except where old_mmap is set: i386's "mmap" is the old
	 * call whose arguments are a struct in the caller's memory. "mmap2"
	 * takes the offset in 4096-byte units. */
	int         mmap_nr;
	int         mmap2_nr;
	bool        old_mmap;
	/* remap_file_pages re-maps a shared file mapping through the file's
	 * own mmap handler (-1 where the ABI lacks it). */
	int         remap_file_pages_nr;
	/* clone and clone3 (-1 where the ABI lacks one): the command line's
	 * filter follows which tasks may come to share an fd table. */
	int         clone_nr;
	int         clone3_nr;
};

/* mmap2's offset unit on every ABI that has it (i386, arm). */
#define GS_MMAP2_UNIT 4096u

/* The ABIs of the build's native architecture, native first. */
unsigned gs_abi_count(void);
struct gs_abi *gs_abi_at(unsigned i);

/* Resolves ioctl_nr for every ABI; returns -1 if libseccomp cannot. */
int gs_abi_resolve(void);

/* Finds the ABI of a notification; NULL if unknown (fail closed). */
const struct gs_abi *gs_abi_find(uint32_t audit_arch);

#endif
