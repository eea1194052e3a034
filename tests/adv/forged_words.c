/* SPDX-License-Identifier: MIT */
/*
 * forged_words - RM_ALLOC with request words whose direction and type bits
 * are forged. The real 580 driver looks only at _IOC_NR and _IOC_SIZE and
 * executes all of these (design.md 1.12), so a filter matching the exact
 * word 0xC030462B is bypassed. For each word the program fills the quota
 * with 256 MiB chunks (the whole call sequence, client included, uses the
 * forged word), then releases them before trying the next word.
 *
 * Prints per word: word=0x... ok= nomem= other= and finally
 *   words=N words_refused=M
 * where a word counts as refused if its fill ended on NV_ERR_NO_MEMORY.
 */
#include <stdio.h>
#include <unistd.h>

#include "adv.h"

static const uint32_t forged[] = {
	0x0030002Bu, /* no direction, type 0 */
	0x80307A2Bu, /* read-only, type 'z' */
	0x4030002Bu, /* write-only, type 0 */
	0xC030462Bu, /* the canonical word, as a control */
};

#define N_WORDS (sizeof(forged) / sizeof(forged[0]))

/* A forged word names escape 0x2B with size 48: it is only right for an
 * NVOS64 RM_ALLOC. Frees therefore ignore `how` and go canonically. */
static rmc_status_t free_canonical(struct rmc_session *s, const struct rmc_how *how,
				   nv_handle_t h)
{
	(void)how;
	return adv_free_rm(s, NULL, h);
}

int main(void)
{
	struct adv_tally total = { 0 };
	unsigned refused = 0;

	for (unsigned i = 0; i < N_WORDS; i++) {
		const struct rmc_how how = { .req_word = forged[i] };
		struct rmc_session s = { .fd = -1 };
		struct adv_fill f = { 0 };
		char label[32];
		int fd = rmc_open_ctl();
		rmc_status_t st;

		if (fd < 0) {
			printf("open failed: %s\n", rmc_status_str(RMC_SYSERR(-fd)));
			return ADV_EXIT_SETUP;
		}
		/* The client, too, is allocated with the forged word (the real
		 * driver accepted that); device and subdevice go the normal way,
		 * they carry no quota. */
		s.fd = fd;
		s.device = RMC_H_DEVICE;
		s.subdevice = RMC_H_SUBDEVICE;
		s.next_mem = RMC_H_MEM_BASE;
		st = rmc_alloc_client(fd, &how, &s.client);
		if (st != NV_OK) {
			printf("word=0x%08x client alloc: %s, retrying canonically\n",
			       forged[i], rmc_status_str(st));
			st = rmc_alloc_client(fd, NULL, &s.client);
		}
		if (st == NV_OK)
			st = rmc_alloc_device(fd, s.client, s.device);
		if (st != NV_OK) {
			printf("word=0x%08x setup failed: %s\n", forged[i], rmc_status_str(st));
			close(fd);
			continue;
		}
		snprintf(label, sizeof(label), "word_0x%08x", forged[i]);
		adv_fill(&s, &how, adv_alloc_rm, free_canonical, ADV_CHUNK, label, &f);
		adv_fill_release(&s, NULL, free_canonical, &f);
		printf("word=0x%08x ok=%d nomem=%d other=%d\n", forged[i], f.tally.ok,
		       f.tally.nomem, f.tally.other);
		if (f.stop == NV_ERR_NO_MEMORY)
			refused++;
		adv_add(&total, &f.tally);
		rmc_session_close(&s);
	}
	printf("words=%zu words_refused=%u\n", N_WORDS, refused);
	adv_print_summary(&total);
	return 0;
}
