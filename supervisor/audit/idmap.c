/* SPDX-License-Identifier: MIT */
/*
 * idmap.c - a keyed open-addressing map from sandbox ids to indices
 * (idmap.h says why the key is random).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "idmap.h"

#define IDMAP_INITIAL 64u
#define LOAD_DENOMINATOR 2u       /* grow before the table is half full */
#define SIP_C_ROUNDS 2
#define SIP_D_ROUNDS 4
#define SIP_FINAL_XOR 0xffu
#define BYTE_BITS 8u
#define WORD_BYTES 8u
#define LEN_SHIFT 56u
/* SipHash's initial state: "somepseudorandomlygeneratedbytes". */
#define SIP_V0 0x736f6d6570736575ull
#define SIP_V1 0x646f72616e646f6dull
#define SIP_V2 0x6c7967656e657261ull
#define SIP_V3 0x7465646279746573ull
#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

static inline uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64u - b));
}

/* SipRound, as the paper defines it: its rotation counts are part of
 * the function, not tunables. */
static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32);
}

/* Little-endian, whatever the host: the same key gives the same hash. */
static uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (BYTE_BITS * i);
	return w;
}

static void sip_compress(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	for (int r = 0; r < SIP_C_ROUNDS; r++)
		sip_round(v);
	v[0] ^= m;
}

uint64_t gs_siphash24(const uint64_t key[GS_IDMAP_KEY_WORDS], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v[4] = { SIP_V0 ^ key[0], SIP_V1 ^ key[1], SIP_V2 ^ key[0], SIP_V3 ^ key[1] };
	size_t whole = len - len % WORD_BYTES;

	for (size_t i = 0; i < whole; i += WORD_BYTES)
		sip_compress(v, load_le(p + i, WORD_BYTES));
	sip_compress(v, load_le(p + whole, len - whole) | ((uint64_t)len << LEN_SHIFT));
	v[2] ^= SIP_FINAL_XOR;
	for (int r = 0; r < SIP_D_ROUNDS; r++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static uint64_t hash_of(const struct gs_idmap *m, const char *id)
{
	uint32_t h = FNV_OFFSET;

	if (!m->fixed_hash)
		return gs_siphash24(m->key, id, strlen(id));
	for (const char *p = id; *p; p++)
		h = (h ^ (uint8_t)*p) * FNV_PRIME;
	return h;
}

int gs_idmap_init(struct gs_idmap *m, gs_idmap_id_fn id_of, const void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->id_of = id_of;
	m->ctx = ctx;
	if (getrandom(m->key, sizeof(m->key), 0) != (ssize_t)sizeof(m->key))
		return -1;
	return 0;
}

void gs_idmap_free(struct gs_idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

/* The slot holding id, or the empty one where it would go. */
static size_t slot_of(struct gs_idmap *m, const char *id)
{
	size_t mask = m->cap - 1, probes = 1;

	for (size_t i = (size_t)hash_of(m, id) & mask;; i = (i + 1) & mask, probes++) {
		if (!m->slots[i] || strcmp(m->id_of(m->ctx, m->slots[i] - 1), id) == 0) {
			m->max_probe = probes > m->max_probe ? probes : m->max_probe;
			return i;
		}
	}
}

static int grow(struct gs_idmap *m)
{
	size_t old_cap = m->cap, cap = m->cap ? m->cap * 2 : IDMAP_INITIAL;
	uint32_t *old = m->slots;

	if (cap < old_cap || cap > SIZE_MAX / sizeof(*m->slots))
		return -1;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -1;
	}
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			m->slots[slot_of(m, m->id_of(m->ctx, old[i] - 1))] = old[i];
	free(old);
	return 0;
}

long gs_idmap_get_or_add(struct gs_idmap *m, const char *id, uint32_t next, bool *added)
{
	size_t slot;

	*added = false;
	if (next == UINT32_MAX)
		return -1;   /* value + 1 must fit a slot */
	if ((m->n + 1) * LOAD_DENOMINATOR > m->cap && grow(m) < 0)
		return -1;
	slot = slot_of(m, id);
	if (m->slots[slot])
		return (long)m->slots[slot] - 1;
	m->slots[slot] = next + 1;
	m->n++;
	*added = true;
	return (long)next;
}

long gs_idmap_find(struct gs_idmap *m, const char *id)
{
	size_t slot;

	if (!m->cap)
		return -1;
	slot = slot_of(m, id);
	return m->slots[slot] ? (long)m->slots[slot] - 1 : -1;
}
