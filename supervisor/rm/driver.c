/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "driver.h"
#include "rm_own.h"

#define SYS_VERSION_PATH  "/sys/module/nvidia/version"
#define PROC_VERSION_PATH "/proc/driver/nvidia/version"
#define PROC_VERSION_TAG  "NVRM version:"
#define LINE_MAX_LEN      512

/* A driver version: digits and dots, starting with a digit, with a dot. */
static bool looks_like_version(const char *s, size_t n)
{
	bool dot = false;

	if (n == 0 || s[0] < '0' || s[0] > '9')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.')
			dot = true;
		else if (s[i] < '0' || s[i] > '9')
			return false;
	}
	return dot;
}

/* The query form of CHECK_VERSION_STR: the driver copies its version and
 * checks nothing (nvrm_abi.h). */
static int query_driver(int fd, char *out, struct gs_error *err)
{
	struct nv_ioctl_rm_api_version p = { .cmd = NV_RM_API_VERSION_CMD_QUERY };
	size_t n;

	if (ioctl(fd, NV_IOC_WORD(NV_ESC_CHECK_VERSION_STR, sizeof(p)), &p) < 0)
		return gs_fail(err, errno, "asking the NVIDIA driver for its version");
	n = strnlen(p.version_string, sizeof(p.version_string));
	if (p.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED || n == sizeof(p.version_string) ||
	    !looks_like_version(p.version_string, n))
		return gs_fail(err, 0, "the NVIDIA driver did not say its version "
		               "(a driver older than 530, or not an NVIDIA driver)");
	memcpy(out, p.version_string, n + 1);
	return 0;
}

/* The first version-shaped word of the first line of path that starts with
 * tag (or of its first line, without a tag); "" when unreadable. */
static void read_version_file(const char *path, const char *tag, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[LINE_MAX_LEN];

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		if (tag && strncmp(line, tag, strlen(tag)) != 0)
			continue;
		while (*p) {
			size_t w;
			p += strspn(p, " \t\n");
			w = strcspn(p, " \t\n");
			if (looks_like_version(p, w) && w < len) {
				memcpy(out, p, w);
				out[w] = '\0';
				fclose(f);
				return;
			}
			p += w;
		}
		break;
	}
	fclose(f);
}

/* The files must name the version the driver gave, where they exist. */
static int cross_check(const char *version, const char *path, const char *tag,
                       struct gs_error *err)
{
	char other[NV_RM_API_VERSION_STRING_LENGTH];

	read_version_file(path, tag, other, sizeof(other));
	if (other[0] && strcmp(other, version) != 0)
		return gs_fail(err, 0, "the NVIDIA driver says it is %s but %s says %s (a module "
		               "reloaded under a running process?); refusing to guess which ABI "
		               "answers", version, path, other);
	return 0;
}

#define CARD_INFO_ENTRIES NV0000_CTRL_GPU_MAX_IDS

/* The GPU map, gpuId -> minor, from CARD_INFO on our own control file:
 * the one listing no workload can answer. */
static int read_gpus(int fd, struct gs_driver *d, struct gs_error *err)
{
	struct nv_card_info cards[CARD_INFO_ENTRIES];

	memset(cards, 0, sizeof(cards));
	if (ioctl(fd, NV_IOC_WORD(NV_ESC_CARD_INFO, sizeof(cards)), cards) < 0)
		return gs_fail(err, errno, "listing the GPUs (CARD_INFO)");
	for (unsigned i = 0; i < CARD_INFO_ENTRIES && d->n_gpus < GS_MAX_GPUS; i++)
		if (cards[i].valid)
			d->gpus[d->n_gpus++] = (struct gs_gpu_entry){ .gpu_id = cards[i].gpu_id,
			                                              .minor = cards[i].minor_number };
	return 0;
}

/* Only the driver's own control device is asked (driver_nodes.c). */
static int open_control(int *fd, struct gs_error *err)
{
	struct stat st;

	*fd = open(GS_DRIVER_CTL_PATH, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0)
		return errno == ENOENT ? 0 : gs_fail(err, errno, "opening %s", GS_DRIVER_CTL_PATH);
	if (fstat(*fd, &st) < 0 || gs_driver_node_kind(&st, NULL) != GS_NODE_CTL) {
		close(*fd);
		*fd = -1;
		return gs_fail(err, 0, "%s is not the NVIDIA driver's control device (a character "
		               "device of the major /proc/devices names nvidia; a stand-in counts only "
		               "with GPUSANDBOX_FAKE_DRIVER=1)", GS_DRIVER_CTL_PATH);
	}
	return 0;
}

int gs_driver_detect(struct gs_driver *d, struct gs_error *err)
{
	int fd;

	memset(d, 0, sizeof(*d));
	if (open_control(&fd, err) < 0)
		return -1;
	if (fd < 0)
		return 0;
	if (query_driver(fd, d->version, err) < 0 || read_gpus(fd, d, err) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	d->present = true;
	if (cross_check(d->version, SYS_VERSION_PATH, NULL, err) < 0 ||
	    cross_check(d->version, PROC_VERSION_PATH, PROC_VERSION_TAG, err) < 0)
		return -1;
	return 0;
}

static void list_branches(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < gs_rm_abi_count() && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s.x", i ? ", " : "",
		                 gs_rm_abi_branch(gs_rm_abi_at(i)));
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

#define BRANCH_LIST_LEN 128
#define ABI_NEAREST "nearest"

/* The tables an override names (a branch, or the nearest to version). */
static const struct gs_rm_abi *abi_of_override(const char *override, const char *version)
{
	if (strcmp(override, ABI_NEAREST) == 0)
		return version ? gs_rm_abi_nearest(version) : gs_rm_abi_default();
	return gs_rm_abi_by_branch(override);
}

int gs_driver_choose_abi(struct gs_driver *d, const char *override, struct gs_error *err)
{
	char supported[BRANCH_LIST_LEN];

	list_branches(supported, sizeof(supported));
	if (override && !abi_of_override(override, NULL))
		return gs_fail(err, 0, "--driver-abi %s: gpusandbox has RM tables for %s only "
		               "(or use '" ABI_NEAREST "')", override, supported);
	/* Without a driver nothing is decoded: any tables do. */
	if (!d->present) {
		d->rm_abi = override ? abi_of_override(override, NULL) : gs_rm_abi_default();
		d->override = override;
		return 0;
	}
	/* The driver's own branch wins; an override that agrees is no override. */
	d->rm_abi = gs_rm_abi_for_version(d->version);
	if (d->rm_abi && (!override || strcmp(override, ABI_NEAREST) == 0 ||
	                  strcmp(override, gs_rm_abi_branch(d->rm_abi)) == 0))
		return 0;
	if (!override)
		return gs_fail(err, 0, "NVIDIA driver %s: gpusandbox has no RM tables for this "
		               "version (it has %s); it would decode the driver's calls with "
		               "layouts that may not be the driver's. --driver-abi " ABI_NEAREST
		               " (or a branch) runs anyway with the nearest tables, at your risk",
		               d->version, supported);
	d->rm_abi = abi_of_override(override, d->version);
	d->override = override;
	return d->rm_abi ? 0 : gs_fail(err, 0, "--driver-abi %s: no tables for %s", override,
	                               d->version);
}

#define GPU_LIST_LEN 256

uint64_t gs_driver_hidden_minors(const struct gs_driver *d, const struct gs_quota *q)
{
	uint64_t hidden = 0;

	if (!q->visible_set)
		return 0;
	for (unsigned i = 0; i < d->n_gpus; i++)
		if (d->gpus[i].minor < GS_MAX_GPUS && !((q->visible >> d->gpus[i].minor) & 1u))
			hidden |= 1ull << d->gpus[i].minor;
	return hidden;
}

int gs_driver_check_gpus(const struct gs_driver *d, const struct gs_quota *q,
                         struct gs_error *err)
{
	char have[GPU_LIST_LEN] = "";
	size_t used = 0;

	if (!q->visible_set)
		return 0;
	for (unsigned i = 0; i < d->n_gpus && used < sizeof(have); i++) {
		int n = snprintf(have + used, sizeof(have) - used, "%s%u", i ? ", " : "",
		                 d->gpus[i].minor);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		bool found = false;
		if (!((q->visible >> g) & 1u))
			continue;
		for (unsigned i = 0; i < d->n_gpus; i++)
			found |= d->gpus[i].minor == g;
		if (!found)
			return gs_fail(err, 0, "--gpus: there is no GPU %u (%s%s)", g,
			               d->n_gpus ? "the GPUs here are " : "no NVIDIA GPU was found",
			               have);
	}
	return 0;
}

int gs_gpu_instance_of_minor(int ctl_fd, nv_handle_t client, const struct gs_gpu_entry *map,
                             unsigned n, unsigned minor, uint32_t *instance)
{
	for (unsigned i = 0; i < n; i++) {
		struct nv0000_id_info_v2_params p = { .gpu_id = map[i].gpu_id };
		if (map[i].minor != minor)
			continue;
		if (rm_own_control(ctl_fd, client, client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &p,
		                   sizeof(p)) != NV_OK)
			return -1;
		*instance = p.device_instance;
		return 0;
	}
	return -1;
}

void gs_driver_describe(const struct gs_driver *d, char *buf, size_t len)
{
	const struct gs_rm_abi *abi = d->rm_abi ? d->rm_abi : gs_rm_abi_default();

	snprintf(buf, len, "%s (RM tables %s from %s%s%s)", d->present ? d->version : "none",
	         gs_rm_abi_branch(abi), gs_rm_abi_source(abi),
	         d->override ? ", chosen by --driver-abi " : "", d->override ? d->override : "");
}

void gs_driver_print_version(FILE *f)
{
	struct gs_driver d;
	struct gs_error err = { 0 };
	char buf[GS_ERROR_MSG_MAX];

	list_branches(buf, sizeof(buf));
	fprintf(f, "supported NVIDIA driver ABIs: %s\n", buf);
	if (gs_driver_detect(&d, &err) < 0) {
		fprintf(f, "NVIDIA driver: %s\n", gs_error_text(&err, buf, sizeof(buf)));
		return;
	}
	if (!d.present) {
		fprintf(f, "NVIDIA driver: none (%s not found)\n", GS_DRIVER_CTL_PATH);
		return;
	}
	fprintf(f, "NVIDIA driver: %s (%s)\n", d.version,
	        gs_rm_abi_for_version(d.version) ? "supported" : "not supported");
}
