/* SPDX-License-Identifier: MIT */
/*
 * share_import - memory passed between two sandboxes with RM_SHARE and
 * RM_DUP_OBJECT (issue #17, item 3: one sandbox held 4 GiB under --mem 1g).
 *
 * Usage: share_import donor DIR   SHARE_ROUNDS times: allocate 768 MiB,
 *                                 RM_SHARE it with everyone (RS_SHARE_TYPE_
 *                                 ALL, DUP_OBJECT), offer it in DIR/offer.N
 *                                 ("client handle"), wait for DIR/taken.N,
 *                                 free it. Writes DIR/donor.done.
 *        share_import take DIR    dup each offered object into its own
 *                                 client (answering DIR/taken.N), keep the
 *                                 dups until the donor is done.
 *
 * The donor's sandbox credits each 768 MiB back on its RM_FREE, and the
 * taker's sandbox never charged the dup (the source is not one of its
 * objects): the driver ends up holding SHARE_ROUNDS × 768 MiB. Under
 * gpusandbox an import from a client outside the sandbox is refused with
 * NV_ERR_INSUFFICIENT_PERMISSIONS (what RM answers when the share policy
 * says no), and the driver's peak stays at one donor allocation.
 *
 * The donor prints alloc= share=; the taker dup= (statuses) and SUMMARY.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define SHARE_ROUNDS   4
#define SHARE_SIZE     (768ull * RMC_MIB)
#define WAIT_STEPS     1000   /* 10 s */
#define PATH_LEN       512

static void path_of(char *p, const char *dir, const char *what, int i)
{
	if (i >= 0)
		snprintf(p, PATH_LEN, "%s/%s.%d", dir, what, i);
	else
		snprintf(p, PATH_LEN, "%s/%s", dir, what);
}

static int wait_read(const char *path, unsigned *a, unsigned *b)
{
	return adv_wait_pair(path, a, b, WAIT_STEPS);
}

static void publish(const char *path, unsigned a, unsigned b)
{
	adv_publish_pair(path, a, b);
}

static void append(char *list, size_t cap, int i, rmc_status_t st)
{
	size_t n = strlen(list);
	snprintf(list + n, cap - n, "%s%s", i ? "," : "", rmc_status_str(st));
}

static int donor(const char *dir)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	char allocs[128] = "", shares[128] = "", p[PATH_LEN];
	unsigned x, y;

	adv_session_or_die(&s, -1, "share_import donor");
	for (int i = 0; i < SHARE_ROUNDS; i++) {
		nv_handle_t h = rmc_next_handle(&s);
		rmc_status_t a = adv_alloc_rm(&s, NULL, h, SHARE_SIZE), sh = NV_ERR_GENERIC;

		adv_count(&t, a);
		if (a == NV_OK) {
			struct nvos57 q = { .h_client = s.client, .h_object = h };
			q.policy.type = RS_SHARE_TYPE_ALL;
			q.policy.access_mask = RS_ACCESS_DUP_OBJECT_BIT;
			int r = rmc_escape(s.fd, NULL, NV_ESC_RM_SHARE, &q, sizeof(q));
			sh = r ? RMC_SYSERR(-r) : q.status;
		}
		path_of(p, dir, "offer", i);
		publish(p, s.client, a == NV_OK ? h : 0);
		path_of(p, dir, "taken", i);
		(void)wait_read(p, &x, &y);
		if (a == NV_OK)
			(void)adv_free_rm(&s, NULL, h);
		append(allocs, sizeof(allocs), i, a);
		append(shares, sizeof(shares), i, sh);
	}
	printf("alloc=%s\nshare=%s\n", allocs, shares);
	adv_print_summary(&t);
	fflush(stdout);
	path_of(p, dir, "donor.done", -1);
	publish(p, 1, 1);
	return 0;
}

static int take(const char *dir)
{
	struct rmc_session s;
	char dups[128] = "", p[PATH_LEN];
	unsigned client, handle, x, y;
	int ok = 0;

	adv_session_or_die(&s, -1, "share_import take");
	for (int i = 0; i < SHARE_ROUNDS; i++) {
		rmc_status_t st = NV_ERR_GENERIC;

		path_of(p, dir, "offer", i);
		if (wait_read(p, &client, &handle) == 0 && handle) {
			nv_handle_t h = rmc_next_handle(&s);
			st = rmc_dup(s.fd, NULL, s.client, s.device, &h, client, handle);
		}
		ok += st == NV_OK;
		path_of(p, dir, "taken", i);
		publish(p, st, 0);
		append(dups, sizeof(dups), i, st);
	}
	/* Hold the dups until the donor has freed everything. */
	path_of(p, dir, "donor.done", -1);
	(void)wait_read(p, &x, &y);
	printf("dup=%s\n", dups);
	printf("SUMMARY ok=%d nomem=0 other=0\n", ok);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "donor") == 0)
		return donor(argv[2]);
	if (argc == 3 && strcmp(argv[1], "take") == 0)
		return take(argv[2]);
	fprintf(stderr, "usage: share_import donor|take DIR\n");
	return ADV_EXIT_SETUP;
}
