/* SPDX-License-Identifier: MIT */
/*
 * driver.h - which NVIDIA driver is loaded, and which RM tables serve it.
 *
 * The version comes from the kernel module itself (NV_ESC_CHECK_VERSION_STR,
 * query form, on /dev/nvidiactl): it is the module that will answer the
 * workload, and the ioctl ABI is always the module's, whatever libcuda
 * says. /sys/module/nvidia/version and /proc/driver/nvidia/version are read
 * as a cross-check where they exist; a disagreement is an error (a module
 * reloaded under us, a masked /proc).
 */
#ifndef GPUSANDBOX_DRIVER_H
#define GPUSANDBOX_DRIVER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "gs_error.h"
#include "nvrm_abi.h"
#include "nvrm/rm_abi.h"
#include "quota.h"

#define GS_DRIVER_CTL_PATH "/dev/nvidiactl"

/* A GPU as the driver lists it (CARD_INFO). */
struct gs_gpu_entry {
	uint32_t gpu_id;    /* RM's id in the listing controls */
	uint32_t minor;     /* /dev/nvidiaN: the index --gpus names */
};

struct gs_driver {
	bool present;            /* a driver answered on GS_DRIVER_CTL_PATH */
	char version[NV_RM_API_VERSION_STRING_LENGTH];
	/* The chosen tables, and how: NULL when they are the driver's own
	 * branch's, else the --driver-abi value that overrode the match. */
	const struct gs_rm_abi *rm_abi;
	const char *override;
	/* The GPUs, from CARD_INFO performed by the supervisor on its own
	 * control file at start: never from a workload's answer. */
	struct gs_gpu_entry gpus[GS_MAX_GPUS];
	unsigned n_gpus;
};

/* ---- which files are the driver (driver_nodes.c) ---- */
enum gs_node_kind { GS_NODE_NONE, GS_NODE_CTL, GS_NODE_GPU, GS_NODE_UVM };
/* A set of kinds, as a bit per kind. */
#define GS_NODE_BIT(kind) (1u << (unsigned)(kind))

/* Reads the driver's majors, and with GPUSANDBOX_FAKE_DRIVER=1 records the
 * stand-ins at /dev/nvidia*; removes the variable from the environment.
 * Call once at start, before any thread and before the workload. */
void gs_driver_nodes_init(void);

/* The nvidia-uvm character major gs_driver_nodes_init read from
 * /proc/devices; 0 if not loaded (or not read yet). */
unsigned gs_driver_uvm_major(void);
bool gs_driver_nodes_fake(void);

/* What st (of an open file) is to the driver; minor (may be NULL) gets
 * the GPU's minor. GS_NODE_NONE for anything that is not the driver. */
enum gs_node_kind gs_driver_node_kind(const struct stat *st, unsigned *minor);

/* Asks the driver for its version and cross-checks it. No driver at all is
 * not an error (present = false); a driver that does not answer, or files
 * that disagree with it, are. */
int gs_driver_detect(struct gs_driver *d, struct gs_error *err);

/* Chooses the RM tables: those of the driver's own branch, else (strict)
 * an error naming the version and the supported branches, unless override
 * ("nearest" or a branch, from --driver-abi) says which to use. Without a
 * driver, the newest tables (nothing can be called anyway). */
int gs_driver_choose_abi(struct gs_driver *d, const char *override, struct gs_error *err);

/* --gpus: every index names a GPU the driver listed at start (UUIDs were
 * resolved to indices already); an error names the GPUs there are. */
int gs_driver_check_gpus(const struct gs_driver *d, const struct gs_quota *q,
                         struct gs_error *err);
/* --gpus: the minors of the GPUs the driver listed at start that q hides
 * (bit N: /dev/nvidiaN); 0 without --gpus. */
uint64_t gs_driver_hidden_minors(const struct gs_driver *d, const struct gs_quota *q);

/* The device instance (NV0080 deviceId) of the GPU with this minor, asked
 * on the supervisor's own client; -1 when none of map is that minor or the
 * driver does not say. */
int gs_gpu_instance_of_minor(int ctl_fd, nv_handle_t client, const struct gs_gpu_entry *map,
                             unsigned n, unsigned minor, uint32_t *instance);

/* "580.95.05 (RM tables 580, open-gpu-kernel-modules 580.142)", or "none". */
void gs_driver_describe(const struct gs_driver *d, char *buf, size_t len);

/* --version's lines about the driver and the supported driver ABIs. */
void gs_driver_print_version(FILE *f);

#endif
