/* SPDX-License-Identifier: MIT */
/*
 * driver_nodes.c - which open files are the NVIDIA driver.
 *
 * Only the driver's own character devices are: major 195 (nvidia.ko's
 * frontend, named in /proc/devices) and the uvm module's major. The kernel
 * dispatches an open of a character device by its device number to the
 * driver that registered it, so whatever file system holds the node, its
 * ioctls reach that driver (an unprivileged FUSE mount is nodev: its device
 * nodes cannot be opened at all). A regular file, or a character device of
 * another major, is not the driver, whatever it is called and however it
 * answers: a workload that mounts FUSE in a user namespace can serve
 * look-alike files anywhere, and trusting their answers would let it
 * rewrite the ledger and the GPU map (issue #17 item 10).
 *
 * For the fake driver (tests/fakedrv), GPUSANDBOX_FAKE_DRIVER=1 in the
 * supervisor's own environment makes the stand-ins found at /dev/nvidia*
 * when it starts count as the driver, and only those: they are recorded by
 * device and inode, so a FUSE file mounted later, anywhere, is still not a
 * driver. The variable is read once, before the workload exists, and
 * removed from the environment the workload inherits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "driver.h"

#define DEVICES_PATH    "/proc/devices"
#define DEVICES_LINE    128
#define DEV_DIR         "/dev"
#define NODE_PREFIX     "nvidia"
#define CTL_NODE        "nvidiactl"
#define UVM_NODE        "nvidia-uvm"
#define FAKE_ENV        "GPUSANDBOX_FAKE_DRIVER"
#define MAX_STAND_INS   (GS_MAX_GPUS + 2)

struct stand_in {
	dev_t dev;
	ino_t ino;
	enum gs_node_kind kind;
	unsigned minor;
};

/* Set once by gs_driver_nodes_init, before any other thread exists; read
 * only afterwards. */
static struct {
	unsigned frontend_major, uvm_major;   /* 0: not loaded */
	bool fake;
	struct stand_in stand_in[MAX_STAND_INS];
	unsigned n_stand_ins;
} nodes;

static void read_majors(void)
{
	FILE *f = fopen(DEVICES_PATH, "re");
	char line[DEVICES_LINE], name[DEVICES_LINE];
	unsigned major;
	bool chars = false;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* Only the "Character devices:" block: block majors are
		 * another number space. */
		if (strncmp(line, "Character", strlen("Character")) == 0)
			chars = true;
		else if (strncmp(line, "Block", strlen("Block")) == 0)
			chars = false;
		if (!chars || sscanf(line, "%u %127s", &major, name) != 2)
			continue;
		if (strcmp(name, "nvidia-frontend") == 0 || strcmp(name, "nvidia") == 0)
			nodes.frontend_major = major;
		else if (strcmp(name, UVM_NODE) == 0)
			nodes.uvm_major = major;
	}
	fclose(f);
}

/* nvidiactl, nvidia-uvm, nvidiaN: the stand-in's kind, or NONE. */
static enum gs_node_kind kind_of_name(const char *name, unsigned *minor)
{
	const char *p = name + strlen(NODE_PREFIX);
	char *end;
	unsigned long n;

	if (strcmp(name, CTL_NODE) == 0)
		return GS_NODE_CTL;
	if (strcmp(name, UVM_NODE) == 0)
		return GS_NODE_UVM;
	if (strncmp(name, NODE_PREFIX, strlen(NODE_PREFIX)) != 0 || *p < '0' || *p > '9')
		return GS_NODE_NONE;
	n = strtoul(p, &end, 10);
	if (*end || n >= GS_MAX_GPUS)
		return GS_NODE_NONE;
	*minor = (unsigned)n;
	return GS_NODE_GPU;
}

static void record_stand_ins(void)
{
	DIR *d = opendir(DEV_DIR);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && nodes.n_stand_ins < MAX_STAND_INS) {
		struct stat st;
		unsigned minor = 0;
		enum gs_node_kind k = kind_of_name(de->d_name, &minor);
		if (k == GS_NODE_NONE || fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue;
		nodes.stand_in[nodes.n_stand_ins++] =
			(struct stand_in){ st.st_dev, st.st_ino, k, minor };
	}
	closedir(d);
}

unsigned gs_driver_uvm_major(void)
{
	return nodes.uvm_major;
}

void gs_driver_nodes_init(void)
{
	const char *fake = getenv(FAKE_ENV);

	memset(&nodes, 0, sizeof(nodes));
	read_majors();
	nodes.fake = fake && strcmp(fake, "1") == 0;
	if (nodes.fake)
		record_stand_ins();
	/* Whatever it said, the workload does not inherit it. */
	unsetenv(FAKE_ENV);
}

bool gs_driver_nodes_fake(void)
{
	return nodes.fake;
}

enum gs_node_kind gs_driver_node_kind(const struct stat *st, unsigned *minor)
{
	unsigned m = 0;

	if (!minor)
		minor = &m;
	if (S_ISCHR(st->st_mode)) {
		unsigned maj = major(st->st_rdev);
		*minor = minor(st->st_rdev);
		if (nodes.frontend_major && maj == nodes.frontend_major)
			return *minor == NV_CTL_DEVICE_MINOR ? GS_NODE_CTL : GS_NODE_GPU;
		if (nodes.uvm_major && maj == nodes.uvm_major)
			return GS_NODE_UVM;
	}
	for (unsigned i = 0; i < nodes.n_stand_ins; i++)
		if (nodes.stand_in[i].dev == st->st_dev && nodes.stand_in[i].ino == st->st_ino) {
			*minor = nodes.stand_in[i].minor;
			return nodes.stand_in[i].kind;
		}
	return GS_NODE_NONE;
}
