/* SPDX-License-Identifier: MIT */
/*
 * sem_surf - memory kept by the driver for a semaphore surface (issue #32
 * section 2, attack (a); docs/security/driver-refs.md).
 *
 * A semaphore surface (NV_SEMAPHORE_SURFACE, class 0xda) makes the driver
 * dup its hSemaphoreMem and hMaxSubmittedMem into its own internal client,
 * freed only with the surface (_semsurfDupMemory, sem_surf.c, 580.95.05).
 * Freeing the workload's handles on that memory then frees nothing in the
 * driver. The attack, ROUNDS times: allocate two 512 MiB video memory
 * objects, wrap them in a surface (semaphore and max-submitted memory),
 * free both memory handles. A supervisor that releases the charge at
 * those frees lets every round through: 3 GiB held under --mem 1g. With
 * the charge kept while the surface lives, round 2's first allocation is
 * refused.
 *
 * Then the release: the charge must go when the driver frees the memory.
 * Freeing round 1's surface must let a 768 MiB allocation through (then
 * freed); a last surface made the same way and freed with an ancestor
 * (the device above its subdevice) must let one through again.
 *
 * Real drivers refuse a surface over video memory (sysmem only, an "XXX"
 * limit of sem_surf.c): this runs on a fake that plays a driver without
 * that limit on a GPU with 32-bit semaphores (--semsurf-any-memory
 * --semaphores-32bit); with "sysmem" as argument it runs on the faithful
 * fake and only checks that the surface is refused there.
 *
 * Prints rounds= (rounds whose allocations and surface all succeeded),
 * surf= (the first surface's status), refused= (the first refused
 * allocation's status), after_free= after_parent= (the allocations after
 * each release) and SUMMARY. Judged by the fake driver's stats (run.sh).
 */
#include <stdio.h>
#include <string.h>

#include "adv.h"

#define ROUNDS      3
#define HALF        (512ull * RMC_MIB)
#define AFTER_SIZE  (768ull * RMC_MIB)
/* Handles of our own for the surfaces. */
#define H_SURF_BASE  0x5e000000u

static rmc_status_t make_surface(struct rmc_session *s, nv_handle_t parent, nv_handle_t h,
                                 nv_handle_t sem, nv_handle_t max)
{
	struct nv00da_alloc_params p;
	nv_handle_t out = h;

	memset(&p, 0, sizeof(p));
	p.h_semaphore_mem = sem;
	p.h_max_submitted_mem = max;
	return rmc_alloc(s->fd, NULL, s->client, parent, &out, NV_SEMAPHORE_SURFACE, &p, sizeof(p));
}

/* One round: two memory objects, a surface over them, both handles freed.
 * NV_OK when all of it worked; else the first failure. */
static rmc_status_t one_round(struct rmc_session *s, struct adv_tally *t, nv_handle_t surf,
                              rmc_status_t *surf_st)
{
	nv_handle_t a = rmc_next_handle(s), b = rmc_next_handle(s);
	rmc_status_t st = adv_alloc_rm(s, NULL, a, HALF);

	adv_count(t, st);
	if (st != NV_OK)
		return st;
	st = adv_alloc_rm(s, NULL, b, HALF);
	adv_count(t, st);
	if (st != NV_OK) {
		(void)adv_free_rm(s, NULL, a);
		return st;
	}
	*surf_st = make_surface(s, s->subdevice, surf, a, b);
	(void)adv_free_rm(s, NULL, a);
	(void)adv_free_rm(s, NULL, b);
	return *surf_st;
}

/* An allocation the released charge must let through (then freed). */
static rmc_status_t alloc_after(struct rmc_session *s, struct adv_tally *t)
{
	nv_handle_t h = rmc_next_handle(s);
	rmc_status_t st = adv_alloc_rm(s, NULL, h, AFTER_SIZE);

	adv_count(t, st);
	if (st == NV_OK)
		(void)adv_free_rm(s, NULL, h);
	return st;
}

/* The faithful fake: a surface over video memory is the driver's
 * NV_ERR_INVALID_PARAMETER, and nothing is kept. */
static int sysmem_only(struct rmc_session *s, struct adv_tally *t)
{
	nv_handle_t a = rmc_next_handle(s);
	rmc_status_t st = adv_alloc_rm(s, NULL, a, HALF), surf = NV_ERR_GENERIC;

	adv_count(t, st);
	if (st == NV_OK)
		surf = make_surface(s, s->subdevice, H_SURF_BASE, a, 0);
	(void)adv_free_rm(s, NULL, a);
	printf("surf=%s after_free=%s\n", rmc_status_str(surf), rmc_status_str(alloc_after(s, t)));
	adv_print_summary(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	rmc_status_t st = NV_OK, first_surf = NV_ERR_GENERIC, refused = NV_OK, after_free, after_parent;
	int rounds = 0;

	adv_session_or_die(&s, -1, "sem_surf");
	if (argc > 1 && strcmp(argv[1], "sysmem") == 0)
		return sysmem_only(&s, &t);
	for (int r = 0; r < ROUNDS; r++) {
		rmc_status_t surf = NV_ERR_GENERIC;
		st = one_round(&s, &t, H_SURF_BASE + (nv_handle_t)r, &surf);
		if (r == 0)
			first_surf = surf;
		if (st != NV_OK) {
			refused = st;
			break;
		}
		rounds++;
	}
	/* Release by the surface's own free: round 1's surface. */
	(void)rmc_free(s.fd, NULL, s.client, s.subdevice, H_SURF_BASE);
	after_free = alloc_after(&s, &t);

	/* Release by an ancestor's free: a last surface, its memory's handle
	 * freed, then the device above its subdevice (RM allows one
	 * subdevice per GPU under a device), made again after. */
	rmc_status_t last = NV_ERR_GENERIC;
	nv_handle_t a = rmc_next_handle(&s);
	if (adv_alloc_rm(&s, NULL, a, HALF) == NV_OK) {
		last = make_surface(&s, s.subdevice, H_SURF_BASE + ROUNDS, a, 0);
		(void)adv_free_rm(&s, NULL, a);
	}
	(void)rmc_free(s.fd, NULL, s.client, s.client, s.device);
	if (rmc_alloc_device(s.fd, s.client, s.device) != NV_OK ||
	    rmc_alloc_subdevice(s.fd, s.client, s.device, s.subdevice) != NV_OK)
		fprintf(stderr, "sem_surf: device not made again\n");
	after_parent = alloc_after(&s, &t);

	printf("rounds=%d surf=%s refused=%s last=%s after_free=%s after_parent=%s\n", rounds,
	       rmc_status_str(first_surf), rmc_status_str(refused), rmc_status_str(last),
	       rmc_status_str(after_free), rmc_status_str(after_parent));
	adv_print_summary(&t);
	return 0;
}
