/* SPDX-License-Identifier: MIT */
/*
 * trap_one.h - the smallest user-notify filter: system call SYSNO goes to
 * the filter's listener, every other one is allowed. For what installs a
 * filter only to look at the listener's behaviour (the agent's RECV
 * probe, recv_probe.c; the tests' trapped children, tests/lib/trap_child.h).
 */
#ifndef GPUSANDBOX_TRAP_ONE_H
#define GPUSANDBOX_TRAP_ONE_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

/* The program, as an initializer of a struct sock_filter array. */
#define GS_TRAP_ONE_FILTER(sysno)                                                      \
	{                                                                             \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (sysno), 0, 1),                   \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),                    \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                         \
	}

#endif
