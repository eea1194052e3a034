/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4), for the audit log's hash chain.
 *
 * Small and self-contained so that the supervisor and the verifier need no
 * crypto library; tests/unit/test_audit.c checks it against the FIPS 180-2
 * example vectors.
 */
#ifndef GPUSANDBOX_SHA256_H
#define GPUSANDBOX_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GS_SHA256_BYTES 32
#define GS_SHA256_BLOCK 64
/* Lower-case hex and a terminating NUL. */
#define GS_SHA256_HEX (2 * GS_SHA256_BYTES + 1)

struct gs_sha256 {
	uint32_t h[8];
	uint64_t total;                 /* bytes hashed so far */
	uint8_t  block[GS_SHA256_BLOCK];
	size_t   used;                  /* bytes waiting in block */
};

void gs_sha256_init(struct gs_sha256 *s);
void gs_sha256_update(struct gs_sha256 *s, const void *data, size_t len);
void gs_sha256_final(struct gs_sha256 *s, uint8_t out[GS_SHA256_BYTES]);

/* One call: the hex digest of data. */
void gs_sha256_hex(const void *data, size_t len, char out[GS_SHA256_HEX]);

#endif
