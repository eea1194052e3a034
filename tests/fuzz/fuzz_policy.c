/* SPDX-License-Identifier: MIT */
/*
 * fuzz_policy.c - fuzz target for the policy parser.
 *
 * Built as a libFuzzer target when clang is available (make fuzz), and
 * linked with replay_main.c into a plain corpus-replay program that CI runs
 * (tests/fuzz/run.sh). Besides not crashing, the parser must keep its
 * contract on any input: a failure leaves the policy untouched and gives a
 * diagnostic that starts with the file's name; a success is reproducible.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define FUZZ_NAME "fuzz"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gs_policy p, again, fresh;
	static char diag[GS_POLICY_DIAG_MAX];

	if (size > GS_POLICY_MAX_BYTES)
		return 0;
	gs_policy_init(&p);
	gs_policy_init(&fresh);
	if (gs_policy_parse(FUZZ_NAME, (const char *)data, size, &p, diag, sizeof(diag)) < 0) {
		if (strncmp(diag, FUZZ_NAME ":", strlen(FUZZ_NAME ":")) != 0 ||
		    memcmp(&p, &fresh, sizeof(p)) != 0)
			abort();
		return 0;
	}
	gs_policy_init(&again);
	if (gs_policy_parse(FUZZ_NAME, (const char *)data, size, &again, diag, sizeof(diag)) < 0 ||
	    memcmp(&p, &again, sizeof(p)) != 0)
		abort();
	return 0;
}
