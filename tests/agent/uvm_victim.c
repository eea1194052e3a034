/* SPDX-License-Identifier: MIT */
/*
 * uvm_victim - a tenant whose video memory is mapped through UVM, for the
 * agent tier's stalehandle-runc (static: it runs in a busybox container).
 *
 * Allocates VICTIM_SIZE of video memory, maps it through UVM (the agent
 * performs the map through its own client, after sharing the memory with
 * that client: own_rm.h), writes "client=0x.. memory=0x.. map=0x.." to
 * WAIT.ready for the host (the handles an attacker outside is told, so
 * that the test judges the share and not a guess of the handles; the
 * same handles go to WAIT.pre before the map, for stalekill-runc, whose
 * attacker strikes while the map is unanswered), waits
 * until the file WAIT exists (the agent is restarted meanwhile), then
 * frees its handle and closes the UVM file, so that the memory is the
 * driver's to free unless someone else holds it. Prints
 * "first= map= free=" (hex RM status).
 *
 *   uvm_victim WAIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adv.h"
#include "nvuvm_abi.h"

#define VICTIM_SIZE ADV_CHUNK
/* Where the range lies in the VA space (UVM wants 4 KiB alignment; the
 * fake wants the mapping on the memory's page size, 2 MiB). */
#define RANGE_BASE 0x7f6000000000ull
#define MAX_GPUS UVM_MAX_GPUS_570 /* the fake plays 580 */
#define WAIT_STEP_NS 20000000L    /* 20 ms */
#define WAIT_MAX_STEPS 1500       /* 30 s: the case's own timeout ends it sooner */
#define PATH_LEN 512

static uint8_t map_bytes[UVM_MAP_EXTERNAL_SIZE(MAX_GPUS)];

static struct uvm_map_external_tail *tail(void)
{
	return (struct uvm_map_external_tail *)(map_bytes + UVM_MAP_EXTERNAL_TAIL_OFF(MAX_GPUS));
}

/* Maps (client, mem) at RANGE_BASE on the fake's first GPU through a
 * fresh UVM file with an external range there; the file is returned in
 * *uvm_out (the mapping lives while it is open). */
static rmc_status_t map_through_uvm(int ctl, nv_handle_t client, nv_handle_t mem, int *uvm_out)
{
	struct uvm_initialize_params init = { 0 };
	struct uvm_create_external_range_params range = { .base = RANGE_BASE, .length = VICTIM_SIZE };
	struct uvm_map_external_head head = { .base = RANGE_BASE, .length = VICTIM_SIZE };
	struct uvm_gpu_mapping_attrs gpu = { .gpu_uuid = { 0x11 } };
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);

	*uvm_out = fd;
	if (fd < 0 || syscall(SYS_ioctl, fd, UVM_INITIALIZE, &init) < 0 ||
	    syscall(SYS_ioctl, fd, UVM_CREATE_EXTERNAL_RANGE, &range) < 0 || range.rm_status != NV_OK)
		return RMC_SYSERR(fd < 0 ? errno : EIO);
	memcpy(map_bytes, &head, sizeof(head));
	memcpy(map_bytes + sizeof(head), &gpu, sizeof(gpu));
	*tail() = (struct uvm_map_external_tail){ .gpu_count = 1, .rm_ctrl_fd = ctl, .h_client = client,
	                                          .h_memory = mem, .rm_status = NV_ERR_GENERIC };
	if (syscall(SYS_ioctl, fd, UVM_MAP_EXTERNAL_ALLOCATION, map_bytes) < 0)
		return RMC_SYSERR(errno);
	return tail()->rm_status;
}

/* WAIT.SUFFIX appears whole: written aside, then renamed. The map's
 * status is left out before the map (mapped NULL). */
static void tell_host(const char *wait, const char *suffix, nv_handle_t client, nv_handle_t mem,
                      const rmc_status_t *mapped)
{
	char ready[PATH_LEN], tmp[PATH_LEN];

	snprintf(ready, sizeof(ready), "%s.%s", wait, suffix);
	snprintf(tmp, sizeof(tmp), "%s.%s.tmp", wait, suffix);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "client=0x%x memory=0x%x", client, mem);
	if (mapped)
		fprintf(f, " map=0x%x", *mapped);
	fputc('\n', f);
	if (fclose(f) == 0)
		(void)rename(tmp, ready);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct timespec step = { 0, WAIT_STEP_NS };
	rmc_status_t first, mapped, freed;
	int uvm = -1;

	if (argc != 2) {
		fprintf(stderr, "usage: uvm_victim WAIT\n");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "uvm_victim");
	nv_handle_t mem = rmc_next_handle(&s);
	first = adv_alloc_rm(&s, NULL, mem, VICTIM_SIZE);
	tell_host(argv[1], "pre", s.client, mem, NULL);
	mapped = first == NV_OK ? map_through_uvm(s.fd, s.client, mem, &uvm) : first;
	tell_host(argv[1], "ready", s.client, mem, &mapped);
	for (int i = 0; i < WAIT_MAX_STEPS && access(argv[1], F_OK) != 0; i++)
		nanosleep(&step, NULL);
	freed = adv_free_rm(&s, NULL, mem);
	if (uvm >= 0)
		close(uvm);
	printf("first=0x%x map=0x%x free=0x%x\n", first, mapped, freed);
	return 0;
}
