/* SPDX-License-Identifier: MIT */
/*
 * uuid_text.h - a GPU's UUID as RM prints it ("GPU-xxxxxxxx-xxxx-...")
 * turned into the 16 raw bytes UVM's calls carry. Header-only: the fake
 * driver's self-test and the adversarial tests both use it, and link
 * nothing of each other.
 */
#ifndef GPUSANDBOX_TESTS_UUID_TEXT_H
#define GPUSANDBOX_TESTS_UUID_TEXT_H

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#define UUID_TEXT_RAW_BYTES 16u

/* 0, or -1 when text is not such a UUID (out is then partly written). */
static inline int uuid_from_text(const char *text, uint8_t out[UUID_TEXT_RAW_BYTES])
{
	size_t n = 0;

	memset(out, 0, UUID_TEXT_RAW_BYTES);
	if (strncmp(text, "GPU-", 4) != 0)
		return -1;
	for (const char *p = text + 4; *p && n < 2 * UUID_TEXT_RAW_BYTES; p++) {
		if (*p == '-')
			continue;
		if (!isxdigit((unsigned char)*p))
			return -1;
		unsigned v = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
		                                        : (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		out[n / 2] |= (uint8_t)(n % 2 ? v : v << 4);
		n++;
	}
	return n == 2 * UUID_TEXT_RAW_BYTES ? 0 : -1;
}

#endif
