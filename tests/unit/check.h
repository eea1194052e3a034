/* SPDX-License-Identifier: MIT */
/* A minimal assertion harness: counts and prints "N passed, M failed". */
#ifndef GPUSANDBOX_TEST_CHECK_H
#define GPUSANDBOX_TEST_CHECK_H

#include <stdio.h>

static unsigned check_passed, check_failed;

#define CHECK(cond) do { \
	if (cond) { check_passed++; } \
	else { check_failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

static inline int check_summary(void)
{
	printf("%u passed, %u failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
