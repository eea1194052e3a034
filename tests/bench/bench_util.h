/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the in-process benchmarks share: a monotonic clock
 * and sorting a run's samples for their median and percentiles.
 */
#ifndef GPUSANDBOX_BENCH_UTIL_H
#define GPUSANDBOX_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double bench_now_us(void)
{
	return bench_now_ns() / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v ascending; v[n / 2] is then the median. */
static inline void bench_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
}

#endif
