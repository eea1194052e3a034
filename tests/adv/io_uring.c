/* SPDX-License-Identifier: MIT */
/*
 * io_uring - the sandbox refuses io_uring's system calls.
 *
 * io-wq workers act on a task's fd table and cannot be stopped with
 * ptrace, so the quiesce that holds the table still while a client
 * allocation is continued could not hold them (quiesce.c): the filter
 * answers io_uring_setup, io_uring_enter and io_uring_register with
 * ENOSYS, as a kernel without io_uring would. Bare, setup gives a ring and
 * enter a plain EBADF for fd -1. Prints setup= enter= register=
 * (OK or the errno's name) and SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "adv.h"

#define RING_ENTRIES 4

static const char *result(long rc)
{
	if (rc >= 0)
		return "OK";
	return errno == ENOSYS ? "ENOSYS" : errno == EBADF ? "EBADF" : errno == EPERM ? "EPERM"
	                                                                               : strerror(errno);
}

int main(void)
{
	struct io_uring_params p;
	struct adv_tally t = { 0 };
	long ring;

	memset(&p, 0, sizeof(p));
	ring = syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
	printf("setup=%s ", result(ring));
	if (ring >= 0)
		close((int)ring);
	printf("enter=%s ", result(syscall(__NR_io_uring_enter, -1, 0, 0, 0, NULL, 0)));
	printf("register=%s\n", result(syscall(__NR_io_uring_register, -1, 0, NULL, 0)));
	adv_print_summary(&t);
	return 0;
}
