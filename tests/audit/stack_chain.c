/* SPDX-License-Identifier: MIT */
/*
 * stack_chain - a refused call from a known place: main -> level1 ->
 * level2 -> level3, which asks for STACK_ASK of video memory (more than
 * the --mem 1g tests/audit/run.sh gives). Built with -g, no inlining and
 * frame pointers, so the refusal's recorded stack must name the four
 * functions in order. Prints refused=1 when the call was refused.
 */
#include <stdio.h>

#include "adv.h"

#define STACK_ASK (2048ull * RMC_MIB)
#define STACK_HANDLE 0xa1200001u

static struct rmc_session s;

__attribute__((noinline)) static int level3(void)
{
	return adv_alloc_rm(&s, NULL, STACK_HANDLE, STACK_ASK) == NV_ERR_NO_MEMORY;
}

__attribute__((noinline)) static int level2(void)
{
	int r = level3();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return r;
}

__attribute__((noinline)) static int level1(void)
{
	int r = level2();
	__asm__ volatile("" ::: "memory");
	return r;
}

int main(void)
{
	int refused;

	adv_session_or_die(&s, -1, "stack_chain");
	refused = level1();
	printf("refused=%d\n", refused);
	rmc_session_close(&s);
	return 0;
}
