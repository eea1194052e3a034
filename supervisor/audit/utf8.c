/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
static const char replacement[] = "\xef\xbf\xbd";
#define REPLACEMENT_LEN (sizeof(replacement) - 1)

/* Length of the valid sequence at s (at most left bytes), or 0. The
 * bounds of the second byte are RFC 3629's table: they exclude overlong
 * forms, surrogates (ED A0..BF) and code points above U+10FFFF. */
static size_t sequence_len(const uint8_t *s, size_t left)
{
	uint8_t lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool gs_utf8_valid(const char *s, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;

	for (size_t i = 0; i < len;) {
		size_t n = sequence_len(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

char *gs_utf8_clean(const char *s)
{
	size_t len = strlen(s), o = 0;
	const uint8_t *p = (const uint8_t *)s;
	/* At worst every byte becomes a three-byte replacement. */
	char *out = malloc(len * REPLACEMENT_LEN + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = sequence_len(p + i, len - i);
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, REPLACEMENT_LEN);
			o += REPLACEMENT_LEN;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}
