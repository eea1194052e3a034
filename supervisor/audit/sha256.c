/* SPDX-License-Identifier: MIT */
/* sha256.c - SHA-256 as FIPS 180-4 section 6.2 describes it. */
#include <stdio.h>
#include <string.h>

#include "sha256.h"

#define ROUNDS 64
#define WORD_BITS 32
#define LENGTH_BYTES 8            /* the message length ends the last block */
#define PAD_FIRST 0x80

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4 4.2.2). */
static const uint32_t k[ROUNDS] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* The first 32 bits of the fractional parts of the square roots of the
 * first 8 primes (FIPS 180-4 5.3.3). */
static const uint32_t initial[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (WORD_BITS - n));
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void compress(uint32_t h[8], const uint8_t block[GS_SHA256_BLOCK])
{
	uint32_t w[ROUNDS], v[8];

	for (unsigned t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (unsigned t = 16; t < ROUNDS; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	memcpy(v, h, sizeof(v));
	for (unsigned t = 0; t < ROUNDS; t++) {
		uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
		uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
		uint32_t t1 = v[7] + s1 + ch + k[t] + w[t];
		uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
		uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + s0 + maj;
	}
	for (unsigned i = 0; i < 8; i++)
		h[i] += v[i];
}

void gs_sha256_init(struct gs_sha256 *s)
{
	memcpy(s->h, initial, sizeof(s->h));
	s->total = 0;
	s->used = 0;
}

void gs_sha256_update(struct gs_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->total += len;
	while (len) {
		size_t n = GS_SHA256_BLOCK - s->used;
		if (n > len)
			n = len;
		memcpy(s->block + s->used, p, n);
		s->used += n;
		p += n;
		len -= n;
		if (s->used == GS_SHA256_BLOCK) {
			compress(s->h, s->block);
			s->used = 0;
		}
	}
}

void gs_sha256_final(struct gs_sha256 *s, uint8_t out[GS_SHA256_BYTES])
{
	uint64_t bits = s->total * 8;
	uint8_t pad = PAD_FIRST, zero = 0, len[LENGTH_BYTES];

	gs_sha256_update(s, &pad, 1);
	while (s->used != GS_SHA256_BLOCK - LENGTH_BYTES)
		gs_sha256_update(s, &zero, 1);
	for (unsigned i = 0; i < LENGTH_BYTES; i++)
		len[i] = (uint8_t)(bits >> (8 * (LENGTH_BYTES - 1 - i)));
	gs_sha256_update(s, len, sizeof(len));
	for (unsigned i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void gs_sha256_hex(const void *data, size_t len, char out[GS_SHA256_HEX])
{
	struct gs_sha256 s;
	uint8_t d[GS_SHA256_BYTES];

	gs_sha256_init(&s);
	gs_sha256_update(&s, data, len);
	gs_sha256_final(&s, d);
	for (unsigned i = 0; i < GS_SHA256_BYTES; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}
