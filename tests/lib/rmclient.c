/* SPDX-License-Identifier: MIT */
/*
 * rmclient.c - raw-ioctl NVIDIA RM client used by gpusandbox's adversarial
 * tests and trace replayer. See rmclient.h for the conventions.
 */
#define _GNU_SOURCE
#include "rmclient.h"
#include "rm_tables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* i386 syscall number of ioctl, used with int $0x80. */
#define RMC_I386_NR_IOCTL      54
/* x32 syscalls are the x86-64 entry with bit 30 set. 16 is the 64-bit-only
 * ioctl slot (x32 callers get ENOSYS there); 514 is x32's compat ioctl. */
#define RMC_X32_SYSCALL_BIT    0x40000000L
#define RMC_X32_NR_IOCTL_64    16L
#define RMC_X32_NR_IOCTL_COMPAT 514L

/* Scratch below 4 GiB for compat-ABI calls: room for an XFER header and the
 * largest top-level struct we send (NVOS32, 184 bytes) with margin. */
#define RMC_LOW_SCRATCH_SIZE   4096u
#define RMC_LOW_INNER_OFFSET   64u

/* NV0000_ALLOC_PARAMETERS is 108 bytes in 580; RM writes the new client
 * handle into its first word. A larger zeroed buffer is harmless. */
#define RMC_CLIENT_PARAMS_SIZE 128u

/* Owner tag for vidheap allocations: must be nonzero and not ~0. */
#define RMC_VIDHEAP_OWNER      0x67736e64u /* "gsnd" */

int rmc_open_ctl(void)
{
	int fd = open(RMC_CTL_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

void *rmc_alloc_low(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* One scratch area per thread, so the race test's threads do not share. */
static __thread uint8_t *low_scratch;

static uint8_t *get_low_scratch(void)
{
	if (!low_scratch)
		low_scratch = rmc_alloc_low(RMC_LOW_SCRATCH_SIZE);
	return low_scratch;
}

/* int $0x80 from 64-bit code runs the i386 syscall table. Only the low 32
 * bits of each argument register are seen, hence the low-memory rule. The
 * kernel preserves r8-r11 on modern kernels, older ones zeroed them: declare
 * them clobbered either way. */
static long i386_ioctl(uint32_t fd, uint32_t word, uint32_t arg)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"((long)RMC_I386_NR_IOCTL), "b"(fd), "c"(word), "d"(arg)
			 : "memory", "cc", "r8", "r9", "r10", "r11");
	return (int)ret; /* eax, sign-extended: -errno on failure */
}

static int issue(int fd, enum rmc_abi abi, uint32_t word, void *arg)
{
	long r;

	switch (abi) {
	case RMC_ABI_I386:
		r = i386_ioctl((uint32_t)fd, word, (uint32_t)(uintptr_t)arg);
		return r < 0 ? (int)r : 0;
	case RMC_ABI_X32_16:
		r = syscall(RMC_X32_SYSCALL_BIT | RMC_X32_NR_IOCTL_64, fd,
			    (unsigned long)word, arg);
		break;
	case RMC_ABI_X32_514:
		r = syscall(RMC_X32_SYSCALL_BIT | RMC_X32_NR_IOCTL_COMPAT, fd,
			    (unsigned long)word, arg);
		break;
	case RMC_ABI_NATIVE:
	default:
		/* The word is zero-extended: the kernel takes an unsigned int. */
		r = syscall(SYS_ioctl, fd, (unsigned long)word, arg);
		break;
	}
	return r < 0 ? -errno : 0;
}

int rmc_escape(int fd, const struct rmc_how *how, uint32_t nr, void *arg, uint32_t size)
{
	static const struct rmc_how canonical;
	struct nv_ioctl_xfer xfer_stack;
	struct nv_ioctl_xfer *xfer = &xfer_stack;
	uint8_t *scratch = NULL;
	void *inner = arg;
	void *top;
	uint32_t top_nr, top_size, word;
	int r;

	if (!how)
		how = &canonical;

	if (how->abi != RMC_ABI_NATIVE) {
		/* Compat ABIs carry 32-bit pointers: stage the top-level
		 * struct (and the XFER header) in low memory. */
		scratch = get_low_scratch();
		if (!scratch)
			return -ENOMEM;
		if (size > RMC_LOW_SCRATCH_SIZE - RMC_LOW_INNER_OFFSET)
			return -E2BIG;
		inner = scratch + RMC_LOW_INNER_OFFSET;
		memcpy(inner, arg, size);
		xfer = (struct nv_ioctl_xfer *)scratch;
	}

	if (how->xfer) {
		/* The inner cmd is the bare escape number, not an _IOC word. */
		xfer->cmd = nr;
		xfer->size = size;
		xfer->ptr = (uint64_t)(uintptr_t)inner;
		top = xfer;
		top_nr = NV_ESC_IOCTL_XFER_CMD;
		top_size = sizeof(*xfer);
	} else {
		top = inner;
		top_nr = nr;
		top_size = size;
	}

	word = how->req_word ? how->req_word : NV_IOC_WORD(top_nr, top_size);
	r = issue(fd, how->abi, word, top);
	if (scratch)
		memcpy(arg, inner, size);
	return r;
}

rmc_status_t rmc_alloc(int fd, const struct rmc_how *how, nv_handle_t h_root,
		       nv_handle_t h_parent, nv_handle_t *h_new, uint32_t h_class,
		       void *params, uint32_t params_size)
{
	int r;

	if (how && how->nvos21) {
		struct nvos21 a = {
			.h_root = h_root,
			.h_object_parent = h_parent,
			.h_object_new = *h_new,
			.h_class = h_class,
			.p_alloc_parms = (uint64_t)(uintptr_t)params,
			.params_size = params_size,
		};
		r = rmc_escape(fd, how, NV_ESC_RM_ALLOC, &a, sizeof(a));
		if (r < 0)
			return RMC_SYSERR(-r);
		*h_new = a.h_object_new;
		return a.status;
	} else {
		struct nvos64 a = {
			.h_root = h_root,
			.h_object_parent = h_parent,
			.h_object_new = *h_new,
			.h_class = h_class,
			.p_alloc_parms = (uint64_t)(uintptr_t)params,
			.params_size = params_size,
		};
		r = rmc_escape(fd, how, NV_ESC_RM_ALLOC, &a, sizeof(a));
		if (r < 0)
			return RMC_SYSERR(-r);
		*h_new = a.h_object_new;
		return a.status;
	}
}

rmc_status_t rmc_alloc_client(int fd, const struct rmc_how *how, nv_handle_t *h_client)
{
	uint8_t params_stack[RMC_CLIENT_PARAMS_SIZE] = { 0 };
	uint8_t *params = params_stack;

	/* Compat ABIs need the nested params below 4 GiB as well. */
	if (how && how->abi != RMC_ABI_NATIVE) {
		params = rmc_alloc_low(RMC_CLIENT_PARAMS_SIZE);
		if (!params)
			return RMC_SYSERR(ENOMEM);
	}
	*h_client = 0; /* hRoot 0 and hObjectNew 0: RM picks the handle */
	return rmc_alloc(fd, how, 0, 0, h_client, NV01_ROOT_CLIENT, params, 0);
}

rmc_status_t rmc_alloc_device(int fd, nv_handle_t h_client, nv_handle_t h_device)
{
	struct nv0080_alloc_params p = { .device_id = 0 };
	nv_handle_t h = h_device;

	return rmc_alloc(fd, NULL, h_client, h_client, &h, NV01_DEVICE_0, &p, sizeof(p));
}

rmc_status_t rmc_alloc_subdevice(int fd, nv_handle_t h_client, nv_handle_t h_device,
				 nv_handle_t h_subdevice)
{
	struct nv2080_alloc_params p = { .sub_device_id = 0 };
	nv_handle_t h = h_subdevice;

	return rmc_alloc(fd, NULL, h_client, h_device, &h, NV20_SUBDEVICE_0, &p, sizeof(p));
}

void rmc_fill_vidmem_params(struct nv_memory_allocation_params *p, uint32_t owner,
			    uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->owner = owner ? owner : RMC_VIDHEAP_OWNER;
	p->size = size;
	/* attr 0 means LOCATION_VIDMEM, flags 0: a plain cuMemAlloc shape. */
}

rmc_status_t rmc_alloc_vidmem(int fd, const struct rmc_how *how, nv_handle_t h_client,
			      nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size)
{
	struct nv_memory_allocation_params stack_params;
	struct nv_memory_allocation_params *p = &stack_params;
	nv_handle_t h = h_mem;

	if (how && how->abi != RMC_ABI_NATIVE) {
		p = rmc_alloc_low(sizeof(*p));
		if (!p)
			return RMC_SYSERR(ENOMEM);
	}
	rmc_fill_vidmem_params(p, h_client, size);
	/* paramsSize 0, as CUDA sends it: the driver sizes the copy itself. */
	return rmc_alloc(fd, how, h_client, h_parent, &h, NV01_MEMORY_LOCAL_USER, p, 0);
}

rmc_status_t rmc_free(int fd, const struct rmc_how *how, nv_handle_t h_root,
		      nv_handle_t h_parent, nv_handle_t h_old)
{
	struct nvos00 a = { .h_root = h_root, .h_object_parent = h_parent,
			    .h_object_old = h_old };
	int r = rmc_escape(fd, how, NV_ESC_RM_FREE, &a, sizeof(a));

	return r < 0 ? RMC_SYSERR(-r) : a.status;
}

rmc_status_t rmc_dup(int fd, const struct rmc_how *how, nv_handle_t h_client,
		     nv_handle_t h_parent, nv_handle_t *h_object,
		     nv_handle_t h_client_src, nv_handle_t h_object_src)
{
	struct nvos55 a = {
		.h_client = h_client,
		.h_parent = h_parent,
		.h_object = *h_object,
		.h_client_src = h_client_src,
		.h_object_src = h_object_src,
	};
	int r = rmc_escape(fd, how, NV_ESC_RM_DUP_OBJECT, &a, sizeof(a));

	if (r < 0)
		return RMC_SYSERR(-r);
	*h_object = a.h_object;
	return a.status;
}

rmc_status_t rmc_control(int fd, const struct rmc_how *how, nv_handle_t h_client,
			 nv_handle_t h_object, uint32_t cmd, void *params,
			 uint32_t params_size)
{
	struct nvos54 a = {
		.h_client = h_client,
		.h_object = h_object,
		.cmd = cmd,
		.params = (uint64_t)(uintptr_t)params,
		.params_size = params_size,
	};
	int r = rmc_escape(fd, how, NV_ESC_RM_CONTROL, &a, sizeof(a));

	return r < 0 ? RMC_SYSERR(-r) : a.status;
}

rmc_status_t rmc_vidheap_alloc(int fd, const struct rmc_how *how, nv_handle_t h_client,
			       nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size)
{
	return rmc_vidheap_alloc_attr2(fd, how, h_client, h_parent, h_mem, size, 0);
}

rmc_status_t rmc_vidheap_alloc_attr2(int fd, const struct rmc_how *how, nv_handle_t h_client,
				     nv_handle_t h_parent, nv_handle_t h_mem, uint64_t size,
				     uint32_t attr2)
{
	struct nvos32 a;
	int r;

	memset(&a, 0, sizeof(a));
	a.h_root = h_client;
	a.h_object_parent = h_parent;
	a.function = NVOS32_FUNCTION_ALLOC_SIZE;
	a.data.alloc_size.owner = RMC_VIDHEAP_OWNER;
	a.data.alloc_size.h_memory = h_mem;
	/* attr location VIDMEM (0) and no VIRTUAL flag: RM turns this into a
	 * class-0x40 allocation (rm-abi.md 2, NVOS32). */
	a.data.alloc_size.attr = NVOS32_ATTR_LOCATION_VIDMEM << NVOS32_ATTR_LOCATION_SHIFT;
	a.data.alloc_size.attr2 = attr2;
	a.data.alloc_size.size = size;
	r = rmc_escape(fd, how, NV_ESC_RM_VID_HEAP_CONTROL, &a, sizeof(a));
	return r < 0 ? RMC_SYSERR(-r) : a.status;
}

rmc_status_t rmc_vidheap_free(int fd, const struct rmc_how *how, nv_handle_t h_client,
			      nv_handle_t h_parent, nv_handle_t h_mem)
{
	struct nvos32 a;
	int r;

	memset(&a, 0, sizeof(a));
	a.h_root = h_client;
	a.h_object_parent = h_parent;
	a.function = NVOS32_FUNCTION_FREE;
	a.data.free.owner = RMC_VIDHEAP_OWNER;
	a.data.free.h_memory = h_mem;
	r = rmc_escape(fd, how, NV_ESC_RM_VID_HEAP_CONTROL, &a, sizeof(a));
	return r < 0 ? RMC_SYSERR(-r) : a.status;
}

rmc_status_t rmc_session_open_client(struct rmc_session *s, int fd, nv_handle_t h_client)
{
	rmc_status_t st;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	if (s->fd < 0) {
		s->fd = rmc_open_ctl();
		if (s->fd < 0)
			return RMC_SYSERR(-s->fd);
	}
	s->device = RMC_H_DEVICE;
	s->subdevice = RMC_H_SUBDEVICE;
	s->next_mem = RMC_H_MEM_BASE;
	if (h_client) {
		/* A client handle of our choosing (handle re-use tests). */
		uint8_t params[RMC_CLIENT_PARAMS_SIZE] = { 0 };
		/* RM takes the handle asked for from hRoot (fake_rm.c says
		 * where the driver does). */
		s->client = 0;
		st = rmc_alloc(s->fd, NULL, h_client, 0, &s->client, NV01_ROOT_CLIENT, params, 0);
	} else {
		st = rmc_alloc_client(s->fd, NULL, &s->client);
	}
	if (st != NV_OK)
		return st;
	st = rmc_alloc_device(s->fd, s->client, s->device);
	if (st != NV_OK)
		return st;
	return rmc_alloc_subdevice(s->fd, s->client, s->device, s->subdevice);
}

void rmc_session_close(struct rmc_session *s)
{
	if (s->fd < 0)
		return;
	if (s->client)
		(void)rmc_free(s->fd, NULL, s->client, s->client, s->client);
	close(s->fd);
	s->fd = -1;
	s->client = 0;
}

nv_handle_t rmc_next_handle(struct rmc_session *s)
{
	return s->next_mem++;
}

rmc_status_t rmc_vidmem_pairs(struct rmc_session *s, int n, uint64_t bytes, int *done)
{
	rmc_status_t st = NV_OK;

	for (*done = 0; *done < n && st == NV_OK; ++*done) {
		nv_handle_t h = rmc_next_handle(s);
		st = rmc_alloc_vidmem(s->fd, NULL, s->client, s->device, h, bytes);
		if (st == NV_OK)
			st = rmc_free(s->fd, NULL, s->client, s->device, h);
	}
	return st;
}

const char *rmc_status_str(rmc_status_t st)
{
	static char buf[48];

	if (RMC_IS_SYSERR(st)) {
		int e = RMC_ERRNO(st);
		const char *name = strerrorname_np(e);

		snprintf(buf, sizeof(buf), "errno:%s", name ? name : "?");
		return buf;
	}
	switch (st) {
	case NV_OK: return "NV_OK";
	case NV_ERR_NO_MEMORY: return "NO_MEMORY";
	case NV_ERR_INSUFFICIENT_RESOURCES: return "INSUFFICIENT_RESOURCES";
	case NV_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case NV_ERR_INVALID_PARAM_STRUCT: return "INVALID_PARAM_STRUCT";
	case NV_ERR_INVALID_PARAMETER: return "INVALID_PARAMETER";
	case NV_ERR_INVALID_CLASS: return "INVALID_CLASS";
	case NV_ERR_INVALID_CLIENT: return "INVALID_CLIENT";
	case NV_ERR_INVALID_OBJECT_HANDLE: return "INVALID_OBJECT_HANDLE";
	case NV_ERR_NOT_SUPPORTED: return "NOT_SUPPORTED";
	case NV_ERR_OBJECT_NOT_FOUND: return "OBJECT_NOT_FOUND";
	case NV_ERR_STATE_IN_USE: return "STATE_IN_USE";
	default:
		snprintf(buf, sizeof(buf), "status:0x%x", st);
		return buf;
	}
}

int rmc_fake_stat(const char *key, uint64_t *val)
{
	const char *path = getenv("GS_FAKE_STATS");
	char line[256];
	size_t klen = strlen(key);
	FILE *f;
	int found = -1;

	if (!path || !*path)
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '\t')) {
			*val = strtoull(line + klen + 1, NULL, 0);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

int rmc_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024ull; end++; break;
	case 'm': case 'M': v *= RMC_MIB; end++; break;
	case 'g': case 'G': v *= RMC_GIB; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

rmc_status_t rmc_session_open(struct rmc_session *s, int fd)
{
	return rmc_session_open_client(s, fd, 0);
}

/* The tables of the branch the fake plays, or NULL. */
static const struct gs_rm_abi *fake_branch_abi(void)
{
	const char *version = getenv("GS_FAKE_DRIVER_VERSION");

	return version ? gs_rm_abi_for_version(version) : NULL;
}

uint32_t rmc_ctrl_size(uint32_t cmd, uint32_t ours)
{
	const struct gs_rm_abi *abi = fake_branch_abi();
	const struct rm_ctrl_info *ci = abi ? rm_ctrl_lookup(abi, cmd) : NULL;

	return ci && ci->params_size ? ci->params_size : ours;
}

uint32_t rmc_class_size(uint32_t cls, uint32_t ours)
{
	const struct gs_rm_abi *abi = fake_branch_abi();
	const struct rm_class_info *ci = abi ? rm_class_lookup(abi, cls) : NULL;

	return ci && ci->params_size ? ci->params_size : ours;
}
