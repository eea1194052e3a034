/* SPDX-License-Identifier: MIT */
#include <linux/audit.h>
#include <seccomp.h>
#include <stddef.h>

#include "arch.h"

/* Why each compat ABI is listed: the kernel routes compat ioctls to the same
 * nvidia handler (compat_ioctl == unlocked_ioctl), and RM structs have the
 * same layout in 32-bit processes (NvP64 is always 64-bit), so a compat
 * ioctl must be trapped and decoded like a native one. */
static struct gs_abi abis[] = {
#if defined(__x86_64__)
	{ "x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, false, -1, -1, -1, false, -1, -1, -1 },
	{ "i386",   SCMP_ARCH_X86,    AUDIT_ARCH_I386,   true,  -1, -1, -1, true, -1, -1, -1 },
	/* x32 shares AUDIT_ARCH_X86_64 and marks its syscall numbers with
	 * __X32_SYSCALL_BIT; libseccomp only generates x32 rules if asked. */
	{ "x32",    SCMP_ARCH_X32,    AUDIT_ARCH_X86_64, true,  -1, -1, -1, false, -1, -1, -1 },
#elif defined(__aarch64__)
	{ "aarch64", SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64, false, -1, -1, -1, false, -1, -1, -1 },
	{ "arm",     SCMP_ARCH_ARM,     AUDIT_ARCH_ARM,     true,  -1, -1, -1, false, -1, -1, -1 },
#else
#error "gpusandbox: add this architecture's ABIs to arch/arch.c"
#endif
};

unsigned gs_abi_count(void)
{
	return sizeof(abis) / sizeof(abis[0]);
}

struct gs_abi *gs_abi_at(unsigned i)
{
	return i < gs_abi_count() ? &abis[i] : NULL;
}

/* A syscall the ABI does not have resolves to a negative pseudo number. */
static int resolve_optional(uint32_t arch, const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(arch, name);
	return nr < 0 ? -1 : nr;
}

int gs_abi_resolve(void)
{
	for (unsigned i = 0; i < gs_abi_count(); i++) {
		abis[i].ioctl_nr = seccomp_syscall_resolve_name_arch(abis[i].scmp_arch, "ioctl");
		if (abis[i].ioctl_nr == __NR_SCMP_ERROR)
			return -1;
		abis[i].mmap_nr = resolve_optional(abis[i].scmp_arch, "mmap");
		abis[i].mmap2_nr = resolve_optional(abis[i].scmp_arch, "mmap2");
		abis[i].remap_file_pages_nr = resolve_optional(abis[i].scmp_arch, "remap_file_pages");
		abis[i].clone_nr = resolve_optional(abis[i].scmp_arch, "clone");
		abis[i].clone3_nr = resolve_optional(abis[i].scmp_arch, "clone3");
	}
	return 0;
}

const struct gs_abi *gs_abi_find(uint32_t audit_arch)
{
	/* x32 and x86_64 share an audit arch; the caller tells them apart by
	 * the syscall number, so return the first (native) match here. */
	for (unsigned i = 0; i < gs_abi_count(); i++)
		if (abis[i].audit_arch == audit_arch)
			return &abis[i];
	return NULL;
}
