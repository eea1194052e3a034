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
};

/* The ABIs of the build's native architecture, native first. */
unsigned gs_abi_count(void);
struct gs_abi *gs_abi_at(unsigned i);

/* Resolves ioctl_nr for every ABI; returns -1 if libseccomp cannot. */
int gs_abi_resolve(void);

/* Finds the ABI of a notification; NULL if unknown (fail closed). */
const struct gs_abi *gs_abi_find(uint32_t audit_arch);

#endif
