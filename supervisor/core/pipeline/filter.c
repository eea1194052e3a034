/* SPDX-License-Identifier: MIT */
/*
 * The filter traps ioctl by the escape number in the low byte of the request
 * word, never by the exact word and never by path:
 *  - the driver looks only at _IOC_NR and _IOC_SIZE, so a filter keyed on
 *    0xC030462B is bypassed by forging the direction or type bits
 *    (design.md 1.12);
 *  - fds can be duplicated, passed over sockets or reopened through /proc,
 *    so the path tells nothing.
 * Everything else runs at kernel speed. The supervisor then looks at the size
 * bits and the fd to decide what the call is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "filter.h"
#include "nvuvm_abi.h"
#include "rm_decode.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* Masks the request word down to _IOC_NR. */
#define IOCTL_NR_MASK GS_FILTER_IOCTL_NR_MASK

/* The shape of an mmap that /dev/nvidia-uvm accepts (uvm_mmap in the 580
 * driver): a shared mapping (VM_SHARED) with read and write access, at an
 * offset equal to its own address. Its address can never be 0 for the
 * workload (below mmap_min_addr, which needs CAP_SYS_RAWIO), so neither can
 * the offset. RM's own mmaps of /dev/nvidia* always use offset 0, and
 * anonymous mappings never look at the fd, so neither is trapped. The
 * offset must not be compared with the address: without MAP_FIXED the
 * kernel picks the address, and a workload can predict where.
 * PROT_WRITE alone is enough to trap (VM_READ is tested by the driver, not
 * by us), which errs towards trapping. */
#define MMAP_TYPE_AND_ANON GS_FILTER_MMAP_TYPE_MASK

static int add_uvm_mmap_rules(scmp_filter_ctx ctx, int syscall, struct gs_error *err)
{
	static const unsigned shared_types[] = { MAP_SHARED, MAP_SHARED_VALIDATE };

	for (size_t i = 0; i < sizeof(shared_types) / sizeof(shared_types[0]); i++) {
		int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, syscall, 3,
		                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE, PROT_WRITE),
		                          SCMP_A3(SCMP_CMP_MASKED_EQ, MMAP_TYPE_AND_ANON, shared_types[i]),
		                          SCMP_A5(SCMP_CMP_NE, 0));
		if (rc < 0)
			return gs_fail(err, -rc, "seccomp_rule_add(mmap shape %zu)", i);
	}
	return 0;
}

/* managed = deny: every mmap form the ABI has. i386's old mmap passes its
 * arguments in memory, where the filter cannot see them: it is trapped
 * whole (and refused, see exec_managed.c). So is remap_file_pages, which
 * calls the file's mmap handler again: over a UVM mapping whose range was
 * freed, that would create a managed range with no mmap at all. */
static int add_mmap_rules(scmp_filter_ctx ctx, const struct gs_abi *abi, struct gs_error *err)
{
	int rc;

	if (abi->remap_file_pages_nr >= 0) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(remap_file_pages), 0);
		if (rc < 0)
			return gs_fail(err, -rc, "seccomp_rule_add(remap_file_pages)");
	}
	if (abi->mmap_nr >= 0) {
		if (abi->old_mmap) {
			rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mmap), 0);
			if (rc < 0)
				return gs_fail(err, -rc, "seccomp_rule_add(old mmap)");
		} else if (add_uvm_mmap_rules(ctx, SCMP_SYS(mmap), err) < 0) {
			return -1;
		}
	}
	if (abi->mmap2_nr >= 0 && add_uvm_mmap_rules(ctx, SCMP_SYS(mmap2), err) < 0)
		return -1;
	return 0;
}

/* The kernel allows one listener per filter chain, but only while that
 * listener is open: once the supervisor is gone, a surviving task could
 * install its own, answer CONTINUE to itself and reach the driver
 * unchecked. So the filter itself refuses, the way the kernel does while
 * our listener lives (EBUSY), every seccomp(SET_MODE_FILTER) that asks
 * for a listener. That is the only way to get one: prctl(PR_SET_SECCOMP)
 * takes no flags. Filters without a listener stay allowed: they can only
 * restrict (the strictest action of all filters wins, and USER_NOTIF
 * outranks every action they could use to let a call through), and
 * browsers, language runtimes and sandboxes in a workload install them.
 * The kernel reads op as 32 bits: the mask keeps a forged upper half from
 * slipping past. Answered in BPF, so it holds without the supervisor. */
#define SECCOMP_OP_MASK GS_FILTER_SECCOMP_OP_MASK

static int add_listener_refusal(scmp_filter_ctx ctx, struct gs_error *err)
{
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EBUSY), SCMP_SYS(seccomp), 2,
	                          SCMP_A0(SCMP_CMP_MASKED_EQ, SECCOMP_OP_MASK, SECCOMP_SET_MODE_FILTER),
	                          SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
	                                  SECCOMP_FILTER_FLAG_NEW_LISTENER));

	if (rc < 0)
		return gs_fail(err, -rc, "seccomp_rule_add(seccomp new listener)");
	return 0;
}

/* io_uring runs a task's requests on io-wq worker threads that act on its
 * fd table (IORING_OP_CLOSE, fixed files, ...) and cannot be stopped with
 * ptrace: the quiesce that holds the fd table still while a client
 * allocation is continued (quiesce.c) could not hold them. Nothing
 * gpusandbox runs needs it (CUDA does not use it). */
const char *const gs_filter_iouring_names[GS_FILTER_IOURING_N] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register",
};

static int add_iouring_refusal(scmp_filter_ctx ctx, struct gs_error *err)
{
	for (int i = 0; i < GS_FILTER_IOURING_N; i++) {
		int nr = seccomp_syscall_resolve_name(gs_filter_iouring_names[i]);
		int rc = nr == __NR_SCMP_ERROR ? -ENOSYS
		                               : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(GS_FILTER_IOURING_ERRNO),
		                                                  nr, 0);
		if (rc < 0)
			return gs_fail(err, -rc, "seccomp_rule_add(%s)", gs_filter_iouring_names[i]);
	}
	return 0;
}

/* UVM_MAP_EXTERNAL_ALLOCATION, which the supervisor performs,
 * UVM_ALLOC_DEVICE_P2P, which it refuses (exec_uvm.c, issue #17 item 9),
 * and UVM_REGISTER_CHANNEL, which it follows (uvm_maps.h, item 4).
 * UVM's commands are plain integers; they are trapped by their low byte,
 * as the RM escapes are, so that the agent's OCI
 * profile can say the same (profile.c: a rule allowing the byte's other
 * words back would overlap the word's trap, and libseccomp lets such an
 * ALLOW swallow a NOTIFY). The supervisor compares the whole word
 * (gs_uvm_cmd_trapped) and continues every other one: another device's
 * FIONBIO (0x5421), a socket's FIONREAD (0x541b, REGISTER_CHANNEL's byte),
 * and RM_MAP_MEMORY, which shares ALLOC_DEVICE_P2P's byte (0x4e, about 30
 * calls per CUDA context), cost a round trip. */
const uint32_t gs_filter_uvm_cmds[GS_FILTER_UVM_N] = {
	UVM_MAP_EXTERNAL_ALLOCATION, UVM_ALLOC_DEVICE_P2P, UVM_REGISTER_CHANNEL,
};

bool gs_filter_is_rm_byte(const struct gs_rm_abi *abi, unsigned nr)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(abi, &n);

	for (size_t i = 0; i < n; i++)
		if (escapes[i] == nr)
			return true;
	return false;
}

bool gs_filter_is_uvm_byte(const struct gs_rm_abi *abi, unsigned nr)
{
	if (gs_filter_is_rm_byte(abi, nr))
		return false; /* trapped as an RM escape already */
	for (int i = 0; i < GS_FILTER_UVM_N; i++)
		if ((gs_filter_uvm_cmds[i] & IOCTL_NR_MASK) == nr)
			return true;
	return false;
}

static int add_uvm_map_rules(scmp_filter_ctx ctx, const struct gs_rm_abi *abi, struct gs_error *err)
{
	for (unsigned nr = 0; nr <= IOCTL_NR_MASK; nr++) {
		if (!gs_filter_is_uvm_byte(abi, nr))
			continue;
		int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
		                          SCMP_A1(SCMP_CMP_MASKED_EQ, IOCTL_NR_MASK, nr));
		if (rc < 0)
			return gs_fail(err, -rc, "seccomp_rule_add(ioctl UVM nr 0x%02x)", nr);
	}
	return 0;
}

/* follow_shared_tables (filter.h): clone3 refused with ENOSYS, as a
 * kernel without it would (glibc, musl and the Go and Rust runtimes then
 * use clone); a clone with CLONE_FILES and without CLONE_THREAD trapped
 * (the supervisor notes it and continues it). */
static int add_clone_rules(scmp_filter_ctx ctx, const struct gs_abi *abi, struct gs_error *err)
{
	int rc = 0;

	/* By name, as the other rules: the context is this ABI's, and
	 * libseccomp numbers the call for it (x32's carry their bit). */
	if (abi->clone3_nr >= 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc == 0 && abi->clone_nr >= 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
		                      SCMP_A0(SCMP_CMP_MASKED_EQ, GS_FILTER_CLONE_MASK, GS_FILTER_CLONE_SHARING));
	if (rc < 0)
		return gs_fail(err, -rc, "seccomp_rule_add(clone, %s)", abi->name);
	return 0;
}

/* One ABI's rules in a context of its own: libseccomp adds a rule to every
 * architecture of a context, and i386's "mmap" needs other rules than
 * x86_64's. The contexts are merged afterwards. */
static scmp_filter_ctx build_abi_filter(const struct gs_abi *abi, bool native,
                                        const struct gs_filter_opts *opts, struct gs_error *err)
{
	scmp_filter_ctx ctx;
	size_t n;
	const uint8_t *escapes;
	int rc;

	/* No tables, no trapped escapes: a filter that traps nothing must
	 * never be installed. */
	if (!opts->rm_abi) {
		gs_fail(err, EINVAL, "the seccomp filter needs the driver's RM tables");
		return NULL;
	}
	escapes = rm_trapped_escapes(opts->rm_abi, &n);
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		gs_fail(err, ENOMEM, "seccomp_init");
		return NULL;
	}
	if (!native) {
		rc = seccomp_arch_add(ctx, abi->scmp_arch);
		if (rc == 0)
			rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
		if (rc < 0) {
			gs_fail(err, -rc, "seccomp_arch_add(%s)", abi->name);
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (opts->test_free_untrapped && escapes[i] == NV_ESC_RM_FREE)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
		                      SCMP_A1(SCMP_CMP_MASKED_EQ, IOCTL_NR_MASK, escapes[i]));
		if (rc < 0) {
			gs_fail(err, -rc, "seccomp_rule_add(ioctl nr 0x%02x)", escapes[i]);
			goto fail;
		}
	}
	if (add_uvm_map_rules(ctx, opts->rm_abi, err) < 0)
		goto fail;
	if (add_listener_refusal(ctx, err) < 0 || add_iouring_refusal(ctx, err) < 0)
		goto fail;
	if (opts->trap_uvm_mmap && add_mmap_rules(ctx, abi, err) < 0)
		goto fail;
	if (opts->follow_shared_tables && add_clone_rules(ctx, abi, err) < 0)
		goto fail;
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

static scmp_filter_ctx build_filter(const struct gs_filter_opts *opts, struct gs_error *err)
{
	scmp_filter_ctx ctx = NULL;

	/* A syscall from an ABI we did not add is killed (libseccomp's default
	 * bad-arch action), so adding every ABI is what keeps compat ioctls
	 * from slipping past. The first ABI is the native one. */
	for (unsigned i = 0; i < gs_abi_count(); i++) {
		scmp_filter_ctx one = build_abi_filter(gs_abi_at(i), i == 0, opts, err);
		int rc;

		if (!one)
			goto fail;
		if (!ctx) {
			ctx = one;
			continue;
		}
		rc = seccomp_merge(ctx, one); /* consumes one on success */
		if (rc < 0) {
			seccomp_release(one);
			gs_fail(err, -rc, "seccomp_merge(%s)", gs_abi_at(i)->name);
			goto fail;
		}
	}
	return ctx;
fail:
	if (ctx)
		seccomp_release(ctx);
	return NULL;
}

/* libseccomp 2.5 cannot ask for WAIT_KILLABLE_RECV, so we export the BPF and
 * load it ourselves. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog, struct gs_error *err)
{
	int fd = memfd_create("gpusandbox-bpf", MFD_CLOEXEC);
	off_t len;
	int rc;

	if (fd < 0)
		return gs_fail(err, errno, "memfd_create");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		close(fd);
		return gs_fail(err, -rc, "seccomp_export_bpf");
	}
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % (off_t)sizeof(struct sock_filter) != 0) {
		close(fd);
		return gs_fail(err, EINVAL, "exported BPF has a bad length %lld", (long long)len);
	}
	prog->filter = malloc((size_t)len);
	prog->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
	if (!prog->filter || pread(fd, prog->filter, (size_t)len, 0) != len) {
		free(prog->filter);
		close(fd);
		return gs_fail(err, errno ? errno : EIO, "reading exported BPF");
	}
	close(fd);
	return 0;
}

int gs_filter_install(const struct gs_filter_opts *opts, struct gs_error *err)
{
	struct sock_fprog prog = { 0 };
	scmp_filter_ctx ctx = build_filter(opts, err);
	long fd;

	if (!ctx)
		return -1;
	if (export_bpf(ctx, &prog, err) < 0) {
		seccomp_release(ctx);
		return -1;
	}
	seccomp_release(ctx);
	/* WAIT_KILLABLE_RECV: once the supervisor has received a notification,
	 * only a fatal signal may interrupt the trapped call. Otherwise a
	 * signal would restart the syscall after the supervisor had already
	 * performed it, and an allocation would be done twice. */
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	             SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		             SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	free(prog.filter);
	if (fd < 0)
		return gs_fail(err, errno, "loading the seccomp filter");
	return (int)fd;
}

int gs_filter_dump(int fd, const struct gs_filter_opts *opts, struct gs_error *err)
{
	scmp_filter_ctx ctx = build_filter(opts, err);
	int rc;

	if (!ctx)
		return -1;
	rc = seccomp_export_pfc(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		return gs_fail(err, -rc, "seccomp_export_pfc");
	return 0;
}

/* The kernel validates the flags before it reads the program: with a NULL
 * program a kernel that knows the flag says EFAULT, one that does not says
 * EINVAL, and nothing is installed either way. Anything else (seccomp
 * itself forbidden, say) answers nothing about the flag. */
int gs_probe_wait_killable_recv(void)
{
	long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, NULL);

	if (rc < 0 && errno == EFAULT)
		return 1;
	return rc < 0 && errno == EINVAL ? 0 : -1;
}
