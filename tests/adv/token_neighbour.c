/* SPDX-License-Identifier: MIT */
/*
 * token_neighbour - what --uvm-map as-user's token share opens, and what
 * the supervisor still closes (docs/security/per-call-cost.md section 12).
 *
 * Usage: token_neighbour owner DIR   a client with 2 MiB of video memory,
 *                                    mapped through UVM (under --uvm-map
 *                                    as-user the supervisor shares the
 *                                    client by token at that map); offers
 *                                    "client memory" in DIR/offer, waits
 *                                    for DIR/taken, frees and exits.
 *        token_neighbour take DIR    a client of its own dups the offered
 *                                    memory, answers DIR/taken.
 *
 * Under as-user the driver lets any client whose creator had the owner's
 * euid dup the owner's memory. A taker in another sandbox of the same uid
 * is still refused: its RM_DUP_OBJECT names a client outside its sandbox
 * (verdict.c). Outside every sandbox, a taker of the owner's uid is let in
 * by the driver itself: the reason the mode is only for a uid that is the
 * sandbox's alone. run.sh judges by the fake's count of dups it made.
 *
 * The owner prints alloc= map=; the taker dup= (hex RM statuses).
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

#define MEM_SIZE     (2ull * RMC_MIB)
#define WAIT_STEPS   3000   /* 30 s */
#define PATH_LEN     512

static int wait_read(const char *path, unsigned *a, unsigned *b)
{
	return adv_wait_pair(path, a, b, WAIT_STEPS);
}

static void publish(const char *dir, const char *what, unsigned a, unsigned b)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s/%s", dir, what);
	adv_publish_pair(path, a, b);
}

static int owner(const char *dir)
{
	struct rmc_session s;
	static struct adv_uvm_map m;
	char path[PATH_LEN];
	unsigned x, y;

	adv_session_or_die(&s, -1, "token_neighbour owner");
	int uvm = adv_uvm_with_range(MEM_SIZE, "token_neighbour");
	nv_handle_t h = rmc_next_handle(&s);
	rmc_status_t alloc = adv_alloc_rm(&s, NULL, h, MEM_SIZE), map = NV_ERR_GENERIC;

	if (alloc == NV_OK) {
		adv_uvm_fill_map(&m, s.fd, s.client, h, MEM_SIZE);
		map = adv_uvm_map(uvm, &m);
	}
	publish(dir, "offer", s.client, alloc == NV_OK ? h : 0);
	snprintf(path, sizeof(path), "%s/taken", dir);
	(void)wait_read(path, &x, &y);
	if (alloc == NV_OK)
		(void)adv_free_rm(&s, NULL, h);
	close(uvm);
	printf("alloc=0x%x map=0x%x\n", alloc, map);
	return 0;
}

static int take(const char *dir)
{
	struct rmc_session s;
	char path[PATH_LEN];
	unsigned client, mem;
	rmc_status_t st = NV_ERR_GENERIC;

	adv_session_or_die(&s, -1, "token_neighbour take");
	snprintf(path, sizeof(path), "%s/offer", dir);
	if (wait_read(path, &client, &mem) == 0 && mem) {
		nv_handle_t h = rmc_next_handle(&s);
		st = rmc_dup(s.fd, NULL, s.client, s.device, &h, client, mem);
		if (st == NV_OK)
			(void)adv_free_rm(&s, NULL, h);
	}
	publish(dir, "taken", st, 0);
	printf("dup=0x%x\n", st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && argv[1][0] == 'o')
		return owner(argv[2]);
	if (argc == 3 && argv[1][0] == 't')
		return take(argv[2]);
	fprintf(stderr, "usage: token_neighbour owner|take DIR\n");
	return 2;
}
