/* SPDX-License-Identifier: MIT */
/*
 * test_uvm_maps.c - the UVM external mappings a sandbox holds
 * (supervisor/core/ledger/uvm_maps.c) and the ledger pins they keep (issue #17
 * item 9).
 *
 * The rules are UVM's (uvm_map_external.c, 580.95.05): a mapping keeps
 * the memory it maps after its handle is freed; a mapping over it on the
 * same GPU takes away what it covers and splits a partly covered mapping
 * at its edges, each piece keeping the memory. The "UVM file" here is a
 * pipe: it refuses the unmap the supervisor makes when it takes a mapping
 * back, which must then keep the record (fail closed); the unmap that
 * works is tests/adv/uvm_hold's, on the fake driver. Each check reads the
 * ledger's own charge.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ledger.h"
#include "nvuvm_abi.h"
#include "uvm_maps.h"

#define MIB (1ull << 20)
#define CLIENT 0xc1d00001u
#define DEVICE 0x5c000001u
#define MEM_A 0x5c000002u
#define MEM_B 0x5c000003u
#define GPU 0
#define VA 0x7f0000000000ull

static const uint8_t gpu0[UVM_UUID_BYTES] = { 0xa0 }, gpu1[UVM_UUID_BYTES] = { 0xa1 };

/* A ledger with one client, a device on GPU 0 and two 64 MiB allocations. */
static void ledger_with_memory(struct ledger *l)
{
	CHECK(ledger_init(l) == 0);
	CHECK(ledger_note_client(l, CLIENT, -1) == 1);
	CHECK(ledger_add(l, CLIENT, CLIENT, DEVICE, RM_CLASS_DEVICE, NV01_DEVICE_0, GPU, 0) == 0);
	CHECK(ledger_add(l, CLIENT, DEVICE, MEM_A, RM_CLASS_VIDMEM, NV01_MEMORY_LOCAL_USER, LEDGER_NO_GPU,
	                 64 * MIB) == 0);
	CHECK(ledger_add(l, CLIENT, DEVICE, MEM_B, RM_CLASS_VIDMEM, NV01_MEMORY_LOCAL_USER, LEDGER_NO_GPU,
	                 64 * MIB) == 0);
	CHECK(ledger_used(l, GPU) == 128 * MIB);
}

static void map(struct gs_uvm_maps *m, struct ledger *l, int space, const uint8_t *uuid, uint32_t mem,
                uint64_t first, uint64_t len)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };

	CHECK(gs_uvm_maps_cut(m, l, (uint32_t)space, uuid, first, first + len - 1, released) == 0);
	uint32_t pin = ledger_pin(l, CLIENT, mem);
	CHECK(pin != LEDGER_NO_PIN);
	CHECK(gs_uvm_maps_add(m, l, (uint32_t)space, uuid, first, first + len - 1, pin, released) == 0);
}

static void cut(struct gs_uvm_maps *m, struct ledger *l, int space, const uint8_t *uuid,
                uint64_t first, uint64_t len)
{
	uint64_t released[GS_MAX_GPUS] = { 0 };
	CHECK(gs_uvm_maps_cut(m, l, (uint32_t)space, uuid, first, first + len - 1, released) == 0);
}

/* A mapping keeps the memory past its handle; its unmap lets it go. */
static void test_pin_outlives_handle(int space_fd)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };

	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int space = gs_uvm_space_of(&m, &l, space_fd);
	CHECK(space >= 0 && gs_uvm_space_of(&m, &l, space_fd) == space);
	map(&m, &l, space, gpu0, MEM_A, VA, 64 * MIB);
	ledger_free(&l, CLIENT, MEM_A, released);
	CHECK(released[GPU] == 0 && ledger_used(&l, GPU) == 128 * MIB);
	/* Another GPU's unmap of the range takes nothing. */
	cut(&m, &l, space, gpu1, VA, 64 * MIB);
	CHECK(ledger_used(&l, GPU) == 128 * MIB && gs_uvm_maps_live(&m) == 1);
	/* Half of it unmapped: the other half still maps the memory. */
	cut(&m, &l, space, gpu0, VA, 32 * MIB);
	CHECK(ledger_used(&l, GPU) == 128 * MIB && gs_uvm_maps_live(&m) == 1);
	cut(&m, &l, space, gpu0, VA + 32 * MIB, 32 * MIB);
	CHECK(ledger_used(&l, GPU) == 64 * MIB && gs_uvm_maps_live(&m) == 0);
	gs_uvm_maps_fini(&m, &l);
	ledger_fini(&l);
}

/* An unmap in the middle splits the mapping: both pieces keep the memory
 * until both are gone. */
static void test_split(int space_fd)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };

	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int space = gs_uvm_space_of(&m, &l, space_fd);
	map(&m, &l, space, gpu0, MEM_A, VA, 64 * MIB);
	ledger_free(&l, CLIENT, MEM_A, released);
	cut(&m, &l, space, gpu0, VA + 16 * MIB, 16 * MIB);
	CHECK(gs_uvm_maps_live(&m) == 2 && ledger_used(&l, GPU) == 128 * MIB);
	cut(&m, &l, space, gpu0, VA, 16 * MIB);
	CHECK(gs_uvm_maps_live(&m) == 1 && ledger_used(&l, GPU) == 128 * MIB);
	cut(&m, &l, space, gpu0, VA + 32 * MIB, 32 * MIB);
	CHECK(gs_uvm_maps_live(&m) == 0 && ledger_used(&l, GPU) == 64 * MIB);
	gs_uvm_maps_fini(&m, &l);
	ledger_fini(&l);
}

/* A mapping over another on the same GPU replaces it: the first memory
 * goes with its handle. */
static void test_replace(int space_fd)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };

	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int space = gs_uvm_space_of(&m, &l, space_fd);
	map(&m, &l, space, gpu0, MEM_A, VA, 64 * MIB);
	map(&m, &l, space, gpu0, MEM_B, VA, 64 * MIB);
	ledger_free(&l, CLIENT, MEM_A, released);
	CHECK(released[GPU] == 64 * MIB && ledger_used(&l, GPU) == 64 * MIB);
	ledger_free(&l, CLIENT, MEM_B, released);
	CHECK(ledger_used(&l, GPU) == 64 * MIB && gs_uvm_maps_live(&m) == 1);
	gs_uvm_maps_fini(&m, &l);
	CHECK(ledger_used(&l, GPU) == 0);
	ledger_fini(&l);
}

/* The last handle of mapped memory goes: the ledger says so once, the
 * take-back is tried, and a mapping the file does not let us unmap (a
 * pipe here) is kept, pinned, and tried again; memory that still has a
 * handle is not an orphan. */
static void test_orphans(int space_fd)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };

	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int space = gs_uvm_space_of(&m, &l, space_fd);
	map(&m, &l, space, gpu0, MEM_A, VA, 64 * MIB);
	map(&m, &l, space, gpu0, MEM_B, VA + 64 * MIB, 64 * MIB);
	CHECK(!l.orphaned_pins && gs_uvm_maps_take_back_orphans(&m, &l, released) == 0);
	ledger_free(&l, CLIENT, MEM_A, released);
	CHECK(l.orphaned_pins && released[GPU] == 0);
	CHECK(gs_uvm_maps_take_back_orphans(&m, &l, released) == 0);
	CHECK(l.orphaned_pins && gs_uvm_maps_live(&m) == 2 && ledger_used(&l, GPU) == 128 * MIB);
	gs_uvm_maps_fini(&m, &l);
	CHECK(ledger_used(&l, GPU) == 64 * MIB);
	ledger_fini(&l);
}

/* A child that waits to be killed, and its pidfd: a mapping process. */
static pid_t mapper(int *pidfd)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return pid;
}

/* Our dups hold the files: the workload's close changes nothing. When
 * every process that mapped through a file has exited, its mappings are
 * taken back through our dup; a pipe refuses the unmap, so they stay
 * pinned (fail closed) until the sandbox ends. A file whose mapper lives
 * is not touched. */
static void test_release(void)
{
	struct ledger l;
	struct gs_uvm_maps m;
	uint64_t released[GS_MAX_GPUS] = { 0 };
	int a[2], b[2], pa, pb;

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	pid_t ca = mapper(&pa), cb = mapper(&pb);
	CHECK(ca > 0 && cb > 0 && pa >= 0 && pb >= 0);
	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int sa = gs_uvm_space_of(&m, &l, a[1]), sb = gs_uvm_space_of(&m, &l, b[1]);
	CHECK(sa >= 0 && sb >= 0 && sa != sb);
	CHECK(gs_uvm_space_note_mapper(&m, (uint32_t)sa, ca, pa) == 0);
	CHECK(gs_uvm_space_note_mapper(&m, (uint32_t)sb, cb, pb) == 0);
	map(&m, &l, sa, gpu0, MEM_A, VA, 64 * MIB);
	map(&m, &l, sb, gpu0, MEM_B, VA, 64 * MIB);
	ledger_free(&l, CLIENT, MEM_A, released);
	ledger_free(&l, CLIENT, MEM_B, released);
	close(a[1]);
	close(b[1]);
	CHECK(gs_uvm_maps_reap(&m, &l, released) == 0 && ledger_used(&l, GPU) == 128 * MIB);
	kill(ca, SIGKILL);
	waitpid(ca, NULL, 0);
	CHECK(gs_uvm_maps_reap(&m, &l, released) == 0 && ledger_used(&l, GPU) == 128 * MIB);
	CHECK(gs_uvm_maps_live(&m) == 2 && m.spaces[sa].fd >= 0);
	gs_uvm_maps_fini(&m, &l);
	CHECK(ledger_used(&l, GPU) == 0);
	ledger_fini(&l);
	kill(cb, SIGKILL);
	waitpid(cb, NULL, 0);
	close(a[0]);
	close(b[0]);
}

/* A space without records lets its dup go; one with records keeps it. */
static void test_tidy(void)
{
	struct ledger l;
	struct gs_uvm_maps m;
	int p[2];

	CHECK(pipe(p) == 0);
	ledger_with_memory(&l);
	gs_uvm_maps_init(&m);
	int s = gs_uvm_space_of(&m, &l, p[1]);
	CHECK(s >= 0 && m.spaces[s].fd >= 0);
	map(&m, &l, s, gpu0, MEM_A, VA, 64 * MIB);
	gs_uvm_space_tidy(&m, (uint32_t)s);
	CHECK(m.spaces[s].fd >= 0);
	cut(&m, &l, s, NULL, VA, 64 * MIB);
	gs_uvm_space_tidy(&m, (uint32_t)s);
	CHECK(m.spaces[s].fd == -1 && gs_uvm_maps_live(&m) == 0);
	gs_uvm_maps_fini(&m, &l);
	ledger_fini(&l);
	close(p[0]);
	close(p[1]);
}

/* Memory the ledger does not hold, or a hardware object, takes no pin. */
static void test_no_pin(void)
{
	struct ledger l;

	ledger_with_memory(&l);
	CHECK(ledger_pin(&l, CLIENT, 0x5c0000ffu) == LEDGER_NO_PIN);
	CHECK(ledger_pin(&l, 0xc1d000ffu, MEM_A) == LEDGER_NO_PIN);
	ledger_fini(&l);
}

int main(void)
{
	int p[2];

	if (pipe(p) < 0)
		return 1;
	test_pin_outlives_handle(p[1]);
	test_split(p[1]);
	test_replace(p[1]);
	test_orphans(p[1]);
	test_release();
	test_tidy();
	test_no_pin();
	return check_summary();
}
