/* SPDX-License-Identifier: MIT */
/*
 * exec_managed.h - managed (UVM) memory under "managed = deny"
 * (exec_managed.c).
 */
#ifndef GPUSANDBOX_EXEC_MANAGED_H
#define GPUSANDBOX_EXEC_MANAGED_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "gs_error.h"

struct call;
struct seccomp_data;

/* Is nr one of the ABI's mmap forms, or remap_file_pages? */
bool gs_abi_is_mmap(const struct gs_abi *abi, uint32_t nr);

/* Decides a trapped mmap: continued unless it would create a managed range
 * (refused with EPERM and audited). */
struct answer handle_uvm_mmap(struct call *c, const struct seccomp_data *data);

/* Before the workload starts under managed = deny: fails if the UVM driver
 * lets GPUs reach pageable memory (HMM, ATS), or cannot be asked. */
int gs_managed_check_host(unsigned uvm_major, struct gs_error *err);

#endif
