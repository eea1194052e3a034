/* SPDX-License-Identifier: MIT */
/*
 * audit_hostile - records the supervisor must write, and survive writing
 * (issue #17 items 6 and 12).
 *
 * A thread named with bytes that are not UTF-8 (0xff 0xfe), a control
 * character and an escape sequence allocates video memory, which the fake
 * driver (run with --alloc-errno 200) fails with an errno the C library has
 * no name for. The audit record of that call holds both: on main the
 * thread name made the record invalid JSON, and the errno crashed the
 * supervisor (json_object_new_string(NULL), SIGSEGV).
 *
 * Prints comm_hex= (the name as the kernel holds it), alloc= (the status
 * or errno the allocation got, as rmc_status_str writes it) and SUMMARY.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "adv.h"

#define CHUNK (256ull * RMC_MIB)
#define COMM_MAX 16
static const char hostile_name[] = "\xff\xfe\x01\x1b[31mx";

struct job {
	struct rmc_session *s;
	rmc_status_t st;
	char comm_hex[2 * COMM_MAX + 1];
};

static void *hostile_thread(void *arg)
{
	struct job *j = arg;
	char path[64], comm[COMM_MAX + 1] = { 0 };
	FILE *f;

	prctl(PR_SET_NAME, hostile_name);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)gettid());
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	for (size_t i = 0; comm[i]; i++)
		snprintf(j->comm_hex + 2 * i, 3, "%02x", (unsigned char)comm[i]);
	j->st = adv_alloc_rm(j->s, NULL, rmc_next_handle(j->s), CHUNK);
	return NULL;
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	struct job j = { .s = &s };
	pthread_t th;

	adv_session_or_die(&s, -1, "audit_hostile");
	if (pthread_create(&th, NULL, hostile_thread, &j) != 0 || pthread_join(th, NULL) != 0) {
		fprintf(stderr, "audit_hostile: no thread\n");
		return ADV_EXIT_SETUP;
	}
	adv_count(&t, j.st);
	printf("comm_hex=%s alloc=%s alloc_errno=%d\n", j.comm_hex, rmc_status_str(j.st),
	       RMC_IS_SYSERR(j.st) ? RMC_ERRNO(j.st) : 0);
	adv_print_summary(&t);
	return 0;
}
