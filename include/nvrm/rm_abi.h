/* SPDX-License-Identifier: MIT */
/*
 * nvrm/rm_abi.h - which driver versions gpusandbox has RM tables for, and
 * the choice of one at start-up.
 *
 * A struct gs_rm_abi is the identity rows (nvrm/classes.def, controls.def, escapes.def) joined with one
 * driver branch's parameter rows (nvrm/v<branch>/). A branch's rows
 * may name a base branch and list only what differs from it, so adding a
 * driver version is a table of differences. Every lookup in rm_tables.h
 * takes the chosen struct gs_rm_abi; nothing else hard-codes a driver fact.
 */
#ifndef GPUSANDBOX_NVRM_RM_ABI_H
#define GPUSANDBOX_NVRM_RM_ABI_H

#include <stddef.h>
#include <stdint.h>

struct gs_rm_abi;

/* The branch ("580") and where its rows were read ("open-gpu-kernel-modules
 * 580.142"). */
const char *gs_rm_abi_branch(const struct gs_rm_abi *abi);
const char *gs_rm_abi_source(const struct gs_rm_abi *abi);

/* The branches gpusandbox has tables for, oldest first. */
size_t gs_rm_abi_count(void);
const struct gs_rm_abi *gs_rm_abi_at(size_t i);

/* The tables for branch 580 (the one run on a GPU): for what runs without a
 * driver (a policy check, the unit tests, --list-groups). */
const struct gs_rm_abi *gs_rm_abi_default(void);

/* The tables for a driver version ("580.95.05"), or NULL when gpusandbox
 * has none for its branch. */
const struct gs_rm_abi *gs_rm_abi_for_version(const char *version);

/* The tables whose branch is nearest to the version's (the newest one at or
 * below it, else the oldest); NULL for a string that is not a version. */
const struct gs_rm_abi *gs_rm_abi_nearest(const char *version);

/* The tables of a branch named exactly ("580"), or NULL. */
const struct gs_rm_abi *gs_rm_abi_by_branch(const char *branch);

/*
 * Layouts the supervisor reads beyond a params size, per branch
 * (nvrm/v<branch>/facts.def, generated; bytes). The utilization samples
 * --sm measures with: 34000 bytes of 472-byte samples (gr at 124) on 535,
 * 50704 / 704 on 550, 55888 / 776 (gr at 136) from 570 on.
 */
enum gs_rm_fact {
	GS_FACT_UTIL_SAMPLES_SIZE,      /* UTIL_SAMPLES_V2 params */
	GS_FACT_UTIL_SAMPLES_OFF,       /* .samples[] */
	GS_FACT_UTIL_SAMPLE_COUNT,      /* entries of .samples[] */
	GS_FACT_UTIL_BUFFER_SIZE,       /* what .bufSize must say */
	GS_FACT_UTIL_SAMPLE_SIZE,       /* one sample */
	GS_FACT_UTIL_SAMPLE_TS_OFF,     /* its timestamp (u64) */
	GS_FACT_UTIL_SAMPLE_GR_OFF,     /* its graphics engine sample */
	GS_FACT_UTIL_ENGINE_UTIL_OFF,   /* an engine sample's util (u32) */
	GS_FACT_UTIL_ENGINE_PROC_ID_OFF, /* an engine sample's procId (u32) */
	GS_FACT_COUNT
};
uint32_t gs_rm_abi_fact(const struct gs_rm_abi *abi, enum gs_rm_fact fact);

#endif
