/* SPDX-License-Identifier: MIT */
/*
 * review_filter.c - which records a view shows: --sandbox, --pid, --comm,
 * --gpu, --verdict, --since and --until, and the times they take.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "review.h"

#define US_PER_S 1000000ll
#define FRACTION_DIGITS 6
#define MINUTE_S 60ll
#define HOUR_S 3600ll
#define DAY_S 86400ll
#define YEAR_MIN 1970
#define YEAR_MAX 9999

/* 2^63 as a double: the first value an int64_t cannot hold. */
#define INT64_LIMIT 0x1p63

/* Times from the command line go up to far beyond the years a log can
 * hold (--until +1e9d, or 9999999999999 s): a bound past what int64_t
 * holds is as far as it goes, not a wrapped one that passes every record
 * or none (issue #32: --fail-on deny then passed a log with refusals). */
static int64_t saturate_us(double us)
{
	if (us >= INT64_LIMIT)
		return INT64_MAX;
	if (us <= -INT64_LIMIT)
		return INT64_MIN + 1;   /* INT64_MIN means "unknown" in a record */
	return (int64_t)us;
}

static int64_t add_saturated(int64_t a, int64_t b)
{
	int64_t sum;

	if (!__builtin_add_overflow(a, b, &sum))
		return sum;
	return b > 0 ? INT64_MAX : INT64_MIN + 1;
}

/* Reads exactly n digits. */
static bool digits(const char **p, unsigned n, int *out)
{
	*out = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		*out = *out * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

/* ".123456": the fraction of a second, in µs (more digits are cut). */
static int64_t fraction_us(const char **p)
{
	int64_t us = 0;
	unsigned n = 0;

	if (**p != '.')
		return 0;
	for ((*p)++; isdigit((unsigned char)**p); (*p)++)
		if (n++ < FRACTION_DIGITS)
			us = us * 10 + (**p - '0');
	for (; n < FRACTION_DIGITS; n++)
		us *= 10;
	return us;
}

/* "Z", "+01:00", "-0530" or nothing (UTC): the offset east of UTC, in s. */
static bool zone_offset(const char **p, int64_t *offset)
{
	int sign, h, m;

	*offset = 0;
	if (**p == 'Z' || **p == 'z') {
		(*p)++;
		return true;
	}
	if (**p != '+' && **p != '-')
		return true;
	sign = **p == '-' ? -1 : 1;
	(*p)++;
	if (!digits(p, 2, &h))
		return false;
	if (**p == ':')
		(*p)++;
	if (!digits(p, 2, &m) || h > 23 || m > 59)
		return false;
	*offset = sign * (h * HOUR_S + m * MINUTE_S);
	return true;
}

/* YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][zone]; a time without a zone is UTC. */
static bool iso_time(const char *s, int64_t *us)
{
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, sec = 0;
	int64_t frac = 0, offset = 0;
	time_t t;

	if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' || !digits(&s, 2, &d))
		return false;
	if (*s == 'T' || *s == 't' || *s == ' ') {
		s++;
		if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi))
			return false;
		if (*s == ':') {
			s++;
			if (!digits(&s, 2, &sec))
				return false;
			frac = fraction_us(&s);
		}
	}
	if (!zone_offset(&s, &offset) || *s || y < YEAR_MIN || y > YEAR_MAX || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1 || tm.tm_mday != d)   /* timegm normalised 2026-02-31 */
		return false;
	*us = ((int64_t)t - offset) * US_PER_S + frac;
	return true;
}

bool review_parse_rfc3339(const char *s, int64_t *us)
{
	return s && s[0] && iso_time(s, us);
}

/* "90", "1.5", "10s", "10m", "2h", "1d": a duration in µs. */
static bool duration_us(const char *s, int64_t *us)
{
	char *end;
	double v = strtod(s, &end);
	int64_t unit = 1;

	if (end == s || !(v >= 0) || v > 1e9)
		return false;
	if (*end) {
		static const struct { char c; int64_t s; } units[] = {
			{ 's', 1 }, { 'm', MINUTE_S }, { 'h', HOUR_S }, { 'd', DAY_S },
		};
		unit = 0;
		for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (end[0] == units[i].c && !end[1])
				unit = units[i].s;
		if (!unit)
			return false;
	}
	*us = saturate_us(v * (double)(unit * US_PER_S));
	return true;
}

int review_parse_time(const char *s, int64_t now_us, struct review_time *t)
{
	int64_t us;
	char *end;
	double epoch;

	t->kind = REVIEW_TIME_ABS;
	if (strcmp(s, "now") == 0) {
		t->us = now_us;
		return 0;
	}
	if ((s[0] == '-' || s[0] == '+') && duration_us(s + 1, &us)) {
		t->kind = s[0] == '-' ? REVIEW_TIME_ABS : REVIEW_TIME_FROM_START;
		t->us = s[0] == '-' ? add_saturated(now_us, -us) : us;
		return 0;
	}
	if (iso_time(s, &t->us))
		return 0;
	epoch = strtod(s + (s[0] == '@'), &end);
	if (end != s + (s[0] == '@') && !*end && epoch >= 0 && epoch < 1e13 &&
	    isdigit((unsigned char)s[s[0] == '@'])) {
		t->us = saturate_us(epoch * US_PER_S);
		return 0;
	}
	return -1;
}

bool review_sandbox_matches(const struct review_filter *f, const char *id)
{
	if (!f->n_sandbox)
		return true;
	for (unsigned i = 0; i < f->n_sandbox; i++)
		if (strncmp(id, f->sandbox[i], strlen(f->sandbox[i])) == 0)
			return true;
	return false;
}

static bool time_holds(const struct review_time *t, const struct review_sandbox *sb, int64_t us,
                       bool since)
{
	int64_t bound;

	if (t->kind == REVIEW_TIME_NONE)
		return true;
	if (us == INT64_MIN)
		return false;
	if (t->kind == REVIEW_TIME_FROM_START) {
		if (sb->start_us == INT64_MIN)
			return false;
		bound = add_saturated(sb->start_us, t->us);
	} else {
		bound = t->us;
	}
	return since ? us >= bound : us <= bound;
}

static bool in_list_str(const char *const *list, unsigned n, const char *v)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(list[i], v) == 0)
			return true;
	return !n;
}

bool review_record_matches(const struct review_filter *f, const struct review_log *log,
                           const struct review_rec *r)
{
	const struct review_sandbox *sb = &log->sandboxes[r->sandbox];
	bool pid = !f->n_pid, gpu = !f->n_gpu;

	for (unsigned i = 0; i < f->n_pid; i++)
		pid = pid || r->pid == f->pid[i];
	for (unsigned i = 0; i < f->n_gpu; i++)
		gpu = gpu || r->gpu == f->gpu[i];
	return pid && gpu && review_sandbox_matches(f, sb->id) &&
	       in_list_str(f->comm, f->n_comm, r->comm) &&
	       (in_list_str(f->verdict, f->n_verdict, r->verdict) ||
	        in_list_str(f->verdict, f->n_verdict, r->outcome)) &&
	       time_holds(&f->since, sb, r->time_us, true) && time_holds(&f->until, sb, r->time_us, false);
}

uint64_t review_apply_filter(struct review_log *log, const struct review_filter *f)
{
	uint64_t n = 0;

	for (size_t i = 0; i < log->n; i++) {
		log->recs[i].matched = review_record_matches(f, log, &log->recs[i]);
		n += log->recs[i].matched;
	}
	return n;
}
