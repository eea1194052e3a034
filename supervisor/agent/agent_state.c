/* SPDX-License-Identifier: MIT */
/*
 * agent_state.c - a container's state memfd (layout and reasons in
 * agent_state.h).
 *
 * Every write here is made under the container's sandbox lock (the
 * journal: ledger changes are made under it) or by the one worker that
 * owns a slot, so the memfd has one writer per part. A reader is a later
 * agent, after this one is dead: nothing reads the memfd concurrently.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_state.h"

#define PAGE 4096u
#define ROUND_UP(x) (((x) + PAGE - 1) / PAGE * PAGE)
#define HEADER_BYTES ROUND_UP(sizeof(struct gs_state_header))
#define SLOTS_BYTES ROUND_UP(sizeof(struct gs_state_slot) * GS_STATE_SLOTS)
#define AREA_RECS (GS_STATE_AREA_BYTES / sizeof(struct gs_state_rec))
#define STATE_BYTES (HEADER_BYTES + SLOTS_BYTES + 2u * GS_STATE_AREA_BYTES)
#define CRC_POLY 0xedb88320u          /* CRC-32 (IEEE), reflected */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define POLICY_READ_MAX (1u << 20)

_Static_assert(sizeof(struct gs_state_rec) == 64, "a journal record is 64 bytes");
_Static_assert(GS_STATE_AREA_BYTES % sizeof(struct gs_state_rec) == 0, "whole records per area");

/* Slicing by 8 (issue #31): a slot is sealed twice per trapped call and
 * a journal record per ledger change, on the workload's path; eight
 * bytes a step take about a third of the byte-wise table's time (123
 * against 342 ns for a slot's 108 fixed bytes on the 2-core VM). The
 * value is the same CRC-32 (IEEE) as the byte-wise loop's, which is what
 * a state memfd written by an older agent was sealed with; big-endian
 * hosts keep the byte-wise loop. */
#define CRC_SLICES 8
static uint32_t crc_table[CRC_SLICES][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? CRC_POLY ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < CRC_SLICES; s++)
			crc_table[s][i] = (crc_table[s - 1][i] >> 8) ^ crc_table[0][crc_table[s - 1][i] & 0xff];
}

static uint32_t crc_bytes(uint32_t c, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		c = crc_table[0][(c ^ b[i]) & 0xff] ^ (c >> 8);
	return c;
}

uint32_t gs_state_crc(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t c = 0xffffffffu;

	pthread_once(&crc_once, crc_init);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; len >= CRC_SLICES; b += CRC_SLICES, len -= CRC_SLICES) {
		uint32_t lo, hi;
		memcpy(&lo, b, sizeof(lo));
		memcpy(&hi, b + sizeof(lo), sizeof(hi));
		lo ^= c;
		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		    crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		    crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
#endif
	return crc_bytes(c, b, len) ^ 0xffffffffu;
}

/* Tells a changed policy file from the one the container started with;
 * not a defence (the file is root's, on the node). 0 when unreadable. */
uint64_t gs_state_hash_file(const char *path)
{
	uint8_t buf[PAGE];
	uint64_t h = FNV_OFFSET;
	size_t total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (total < POLICY_READ_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * FNV_PRIME;
		total += (size_t)n;
	}
	close(fd);
	return h;
}

static int map_state(struct gs_agent_state *st, int memfd, struct gs_error *err)
{
	void *m = mmap(NULL, STATE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	if (m == MAP_FAILED)
		return gs_fail(err, errno, "mapping the container's state");
	memset(st, 0, sizeof(*st));
	st->memfd = memfd;
	st->map = m;
	st->size = STATE_BYTES;
	st->hdr = (struct gs_state_header *)st->map;
	st->slots = (struct gs_state_slot *)(st->map + HEADER_BYTES);
	st->areas[0] = (struct gs_state_rec *)(st->map + HEADER_BYTES + SLOTS_BYTES);
	st->areas[1] = (struct gs_state_rec *)(st->map + HEADER_BYTES + SLOTS_BYTES + GS_STATE_AREA_BYTES);
	return 0;
}

int gs_state_create(struct gs_agent_state *st, const struct gs_state_ident *ident,
                    struct gs_error *err)
{
	/* Pages are made as they are written: an idle container costs the
	 * header and the slots it uses. */
	int fd = memfd_create("gpusandbox-state", MFD_CLOEXEC);

	if (fd < 0)
		return gs_fail(err, errno, "memfd_create for the container's state");
	if (ftruncate(fd, STATE_BYTES) < 0) {
		gs_fail(err, errno, "sizing the container's state");
		close(fd);
		return -1;
	}
	if (map_state(st, fd, err) < 0) {
		close(fd);
		return -1;
	}
	st->hdr->ident = *ident;
	st->hdr->ident.magic = GS_STATE_MAGIC;
	st->hdr->ident.format = GS_STATE_FORMAT;
	st->hdr->ident.crc = gs_state_crc(&st->hdr->ident, offsetof(struct gs_state_ident, crc));
	st->next_seq = 1;
	st->hdr->area_base_seq[0] = 1;
	return 0;
}

int gs_state_open(struct gs_agent_state *st, int memfd, struct gs_error *err)
{
	struct stat sb;
	const struct gs_state_ident *id;

	if (fstat(memfd, &sb) < 0 || (size_t)sb.st_size != STATE_BYTES) {
		close(memfd);
		return gs_fail(err, EPROTO, "the keeper's state memfd is not one of this agent's format");
	}
	if (map_state(st, memfd, err) < 0) {
		close(memfd);
		return -1;
	}
	id = &st->hdr->ident;
	if (id->magic != GS_STATE_MAGIC || id->format != GS_STATE_FORMAT ||
	    id->crc != gs_state_crc(id, offsetof(struct gs_state_ident, crc)) ||
	    memchr(id->id, '\0', sizeof(id->id)) == NULL ||
	    memchr(id->policy_name, '\0', sizeof(id->policy_name)) == NULL ||
	    memchr(id->sandbox_id, '\0', sizeof(id->sandbox_id)) == NULL || st->hdr->active_area > 1) {
		gs_state_close(st);
		return gs_fail(err, EPROTO, "the container's state header is damaged or of another format");
	}
	return 0;
}

void gs_state_close(struct gs_agent_state *st)
{
	if (st->map)
		munmap(st->map, st->size);
	if (st->memfd >= 0)
		close(st->memfd);
	st->map = NULL;
	st->memfd = -1;
}

static void rec_crc(struct gs_state_rec *r)
{
	r->crc = gs_state_crc(r, offsetof(struct gs_state_rec, crc));
}

static bool rec_ok(const struct gs_state_rec *r, uint64_t want_seq)
{
	return r->seq == want_seq && r->crc == gs_state_crc(r, offsetof(struct gs_state_rec, crc));
}

int gs_state_replay(struct gs_agent_state *st, struct ledger *l, struct gs_error *err)
{
	uint32_t area = st->hdr->active_area;
	uint64_t seq = st->hdr->area_base_seq[area];
	const struct gs_state_rec *r = st->areas[area];
	uint32_t n = 0;

	/* A record whose crc is bad was being written when the agent died:
	 * its call was not answered, and the journal ends before it. */
	while (n < AREA_RECS && rec_ok(&r[n], seq + n)) {
		if (ledger_replay(l, &r[n].ch) < 0)
			return gs_fail(err, EPROTO, "the ledger cannot be rebuilt at record %llu (no memory, or "
			               "a pin on an allocation the journal never made)",
			               (unsigned long long)(seq + n));
		n++;
	}
	st->n_in_area = n;
	st->next_seq = seq + n;
	return 0;
}

/* ---- the journal ------------------------------------------------------------ */

struct snap_ctx {
	struct gs_agent_state *st;
	struct gs_state_rec *area;
	uint64_t seq;
	uint32_t n;
	bool overflow;
};

static void snap_emit(void *ctx, const struct ledger_change *ch)
{
	struct snap_ctx *s = ctx;
	struct gs_state_rec *r;

	if (s->n >= AREA_RECS) {
		s->overflow = true;
		return;
	}
	r = &s->area[s->n];
	memset(r, 0, sizeof(*r));
	r->seq = s->seq + s->n;
	r->ch = *ch;
	rec_crc(r);
	s->n++;
}

/* The active area is full: the live ledger (which already holds the change
 * that filled it) is written into the other area, which becomes active
 * with one aligned store. Until then the old area is what a restart reads. */
static void compact(struct gs_agent_state *st)
{
	uint32_t other = 1u - st->hdr->active_area;
	struct snap_ctx s = { st, st->areas[other], st->next_seq, 0, false };

	/* No memory for the snapshot (nothing written: an empty area would
	 * rebuild an empty ledger, every charge lost), or no room for one
	 * more change: a restart could not rebuild this ledger, and must not
	 * pretend to (fail closed then). */
	if (ledger_snapshot(st->ledger, snap_emit, &s) < 0 || s.overflow || s.n >= AREA_RECS) {
		atomic_store((_Atomic uint32_t *)&st->hdr->unresumable, 1u);
		return;
	}
	/* Records after the snapshot's end may be an older generation's:
	 * their seqs do not follow, so they end the journal. */
	st->hdr->area_base_seq[other] = st->next_seq;
	atomic_thread_fence(memory_order_release);
	atomic_store((_Atomic uint32_t *)&st->hdr->active_area, other);
	st->next_seq += s.n;
	st->n_in_area = s.n;
}

static void journal_change(void *ctx, const struct ledger_change *ch)
{
	struct gs_agent_state *st = ctx;
	struct gs_state_rec *r;

	if (st->on_client && ch->op == LEDGER_OP_NOTE_CLIENT)
		st->on_client(st->on_client_ctx, ch->client, false);
	else if (st->on_client && ch->op == LEDGER_OP_FREE && ch->client == ch->handle)
		st->on_client(st->on_client_ctx, ch->client, true);

	if (st->hdr->unresumable)
		return;
	if (st->n_in_area >= AREA_RECS) {
		compact(st);
		return;
	}
	r = &st->areas[st->hdr->active_area][st->n_in_area];
	r->seq = st->next_seq;
	r->ch = *ch;
	r->pad = 0;
	rec_crc(r);
	st->n_in_area++;
	st->next_seq++;
}

void gs_state_attach(struct gs_agent_state *st, struct ledger *l)
{
	st->ledger = l;
	l->journal = journal_change;
	l->journal_ctx = st;
}

/* ---- calls in flight ---------------------------------------------------------- */

int gs_state_slot_claim(struct gs_agent_state *st, uint32_t listener_index)
{
	for (unsigned i = 0; i < GS_STATE_SLOTS; i++)
		if (!st->taken[i]) {
			st->taken[i] = true;
			memset(&st->slots[i], 0, sizeof(st->slots[i]));
			st->slots[i].listener_index = listener_index;
			return (int)i;
		}
	return GS_STATE_NO_SLOT;
}

void gs_state_slot_release(struct gs_agent_state *st, int slot)
{
	if (slot == GS_STATE_NO_SLOT)
		return;
	st->slots[slot].phase = GS_SLOT_FREE;
	st->taken[slot] = false;
}

/* The crc covers the fixed fields and the part of top in use (kept short:
 * it is computed twice per call). */
static uint32_t slot_crc(const struct gs_state_slot *s)
{
	uint32_t len = s->top_len <= GS_STATE_TOP_MAX ? s->top_len : GS_STATE_TOP_MAX;

	return gs_state_crc(s, offsetof(struct gs_state_slot, top) + len);
}

static void slot_seal(struct gs_state_slot *s)
{
	s->crc = slot_crc(s);
}

bool gs_state_slot_valid(const struct gs_state_slot *s)
{
	return s->top_len <= GS_STATE_TOP_MAX && s->crc == slot_crc(s);
}

void gs_state_received(struct gs_agent_state *st, int slot, const struct seccomp_notif *req)
{
	struct gs_state_slot *s;

	if (slot == GS_STATE_NO_SLOT)
		return;
	s = &st->slots[slot];
	s->phase = GS_SLOT_RECEIVED;
	s->id = req->id;
	s->pid = req->pid;
	s->data = req->data;
	s->preexisting = 0;
	s->made = 0;
	s->client = s->parent = s->object = 0;
	s->top_len = 0;
	slot_seal(s);
}

void gs_state_before_alloc(void *ctx, const struct gs_alloc_note *note)
{
	struct gs_state_worker *w = ctx;
	struct gs_state_slot *s;
	size_t len = note->top_len < GS_STATE_TOP_MAX ? note->top_len : GS_STATE_TOP_MAX;

	if (w->slot == GS_STATE_NO_SLOT)
		return;
	s = &w->st->slots[w->slot];
	s->phase = GS_SLOT_PERFORMING;
	s->made = 1;
	s->client = note->client;
	s->parent = note->parent;
	s->object = note->object;
	s->preexisting = note->preexisting;
	memcpy(s->top, note->top, len);
	s->top_len = (uint32_t)len;
	slot_seal(s);
}

void gs_state_before_answer(void *ctx)
{
	struct gs_state_worker *w = ctx;

	if (w->slot == GS_STATE_NO_SLOT)
		return;
	w->st->slots[w->slot].phase = GS_SLOT_ANSWERING;
	slot_seal(&w->st->slots[w->slot]);
}

void gs_state_answered(struct gs_agent_state *st, int slot)
{
	if (slot == GS_STATE_NO_SLOT)
		return;
	/* One aligned store: a FREE slot is never read, whatever its crc. */
	st->slots[slot].phase = GS_SLOT_FREE;
}
