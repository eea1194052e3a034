/* SPDX-License-Identifier: MIT */
/*
 * smi_views - what nvidia-smi's views ask of the driver, in a sandbox with
 * the default policy (issue #29 item 3: the default view, -q and dmon were
 * refused further objects and queries on an H200, 580.159.04).
 *
 *   smi_views views
 *       allocates the objects nvidia-smi allocates (the InfoROM object,
 *       NV04_DISPLAY_COMMON, NV20_SUBDEVICE_DIAG, then a second diag
 *       object under the same subdevice), asks the diagnostics object's
 *       InfoROM check and the queries added for -q (NVENC and NvFBC session
 *       statistics, retired pages, the two ECC repair flags), then every control of the monitoring group the
 *       running branch has, each at its size from gpusandbox's tables, with
 *       zeroed params, on the object of its class. Prints KEY=STATUS per
 *       step, nvenc_sessions= and offlined_valid= as answered, and
 *       sweep_sent= (how many monitoring controls were sent).
 *   smi_views setters
 *       what an administrator's nvidia-smi sends and a sandbox must not:
 *       GPU_SET_COMPUTE_MODE_RULES (nvidia-smi -c) on the subdevice, and
 *       BIF_CONFIG_REG_WRITE on a diagnostics object it allocates (allowed
 *       itself: its controls are what must stay refused). Prints
 *       compute_mode=, diag=, diag_write=.
 *   smi_views opaque
 *       two of nvidia-smi's commands whose handlers are closed GSP
 *       firmware, at their native sizes (H200, 580.159.04): BinaryApi
 *       0x20810110 (1 byte) on a BinaryApi object and the GSS-legacy
 *       0x2080a618 (8620 bytes) on the subdevice. In monitoring (the
 *       driver answers them to an unprivileged user as to root): allowed
 *       by the default policy, refused by one without monitoring
 *       (docs/security/monitoring.md).
 *       Prints binapi=, gss=.
 *   smi_views hold FILE
 *       another tenant: makes an NVENC_SW_SESSION (an encoder session
 *       record) under its subdevice, creates FILE and holds until
 *       FILE.done exists (bounded). Prints held=.
 *   smi_views sessions
 *       asks the NVENC session statistics: nvenc=, nvenc_sessions=.
 * The statuses are the program's account; the run is judged by the audit
 * log and stderr (tests/adv/run.sh check_smi_views) and, for the setters,
 * by the fake driver's own count of what reached it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"
#include "nvrm/rm_abi.h"
#include "nvrm_monitoring.h"
#include "rm_tables.h"

#define H_INFOROM 0x5c00e000u
#define H_DISPCMN 0x5c00e001u
#define H_DIAG    0x5c00e002u
#define H_DIAG2   0x5c00e003u
#define H_BINAPI  0x5c00e004u
/* nvidia-smi's own sizes for them (the native log, H200, 580.159.04). */
#define BINAPI_0110_SIZE 1u
#define GSS_A618_SIZE    8620u
#define NV2080_CTRL_GSS_A618 0x2080a618u
#define H_SESSION 0x5c00e005u
/* NVA0BC_ALLOC_PARAMETERS: 20 bytes (nvrm/v580/classes.def), zeroed. */
#define SESSION_PARAMS 20u
/* The largest monitoring control's params (GET_PID_INFO, 14408 on 580). */
#define SWEEP_BUF (64u * 1024u)
#define DEFAULT_DRIVER "580.95.05"

static uint8_t buf[SWEEP_BUF];

/* The tables of the branch the fake plays (what gpusandbox uses too). */
static const struct gs_rm_abi *played_abi(void)
{
	const char *version = getenv("GS_FAKE_DRIVER_VERSION");
	return gs_rm_abi_for_version(version ? version : DEFAULT_DRIVER);
}

static rmc_status_t alloc_obj(const struct rmc_session *s, nv_handle_t parent, nv_handle_t h, uint32_t cls)
{
	nv_handle_t want = h;
	return rmc_alloc(s->fd, NULL, s->client, parent, &want, cls, NULL, 0);
}

static rmc_status_t ask(const struct rmc_session *s, nv_handle_t obj, uint32_t cmd, void *p, uint32_t size)
{
	return rmc_control(s->fd, NULL, s->client, obj, cmd, p, size);
}

static void session_stats(const struct rmc_session *s, const char *key, uint32_t cmd)
{
	struct nv2080_sw_session_stats st;
	memset(&st, 0xff, sizeof(st));
	rmc_status_t r = ask(s, s->subdevice, cmd, &st, sizeof(st));
	printf("%s=%s %s_sessions=%u\n", key, rmc_status_str(r), key, r == NV_OK ? st.session_count : 0);
}

static void queries(const struct rmc_session *s)
{
	static struct nv2080_fb_get_offlined_pages off;
	struct nv2080_ecc_repair_status rep;
	struct nv2080_ecc_unrepairable_memory unrep;

	session_stats(s, "nvenc", NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS);
	session_stats(s, "nvfbc", NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS);
	memset(&off, 0xff, sizeof(off));
	rmc_status_t r = ask(s, s->subdevice, NV2080_CTRL_CMD_FB_GET_OFFLINED_PAGES, &off, sizeof(off));
	printf("offlined=%s offlined_valid=%u\n", rmc_status_str(r), r == NV_OK ? off.valid_entries : 0);
	memset(&rep, 0xff, sizeof(rep));
	/* Not exported before 580: nvidia-smi of those branches does not
	 * send it, and gpusandbox refuses it there as unknown. */
	const struct rm_ctrl_info *ci = played_abi() ? rm_ctrl_lookup(played_abi(), NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS) : NULL;
	if (ci && ci->known)
		printf("repair=%s\n",
		       rmc_status_str(ask(s, s->subdevice, NV2080_CTRL_CMD_ECC_GET_REPAIR_STATUS, &rep, sizeof(rep))));
	else
		printf("repair=absent\n");
	printf("unrepairable=%s\n",
	       rmc_status_str(ask(s, s->subdevice, NV2080_CTRL_CMD_ECC_GET_UNREPAIRABLE_MEMORY_FLAG, &unrep,
	                          sizeof(unrep))));
}

/* The object a control of class cmd >> 16 is sent to. */
static nv_handle_t target_of(const struct rmc_session *s, uint32_t cmd)
{
	switch (NV_CTRL_CMD_CLASS(cmd)) {
	case NV01_ROOT:
		return s->client;
	case NV01_DEVICE_0:
		return s->device;
	case GF100_SUBDEVICE_INFOROM:
		return H_INFOROM;
	case NV20_SUBDEVICE_DIAG:
		return H_DIAG;
	default:
		/* The subdevice, and 0x00de's data poll: the fake checks no
		 * object class for it. */
		return s->subdevice;
	}
}

/* Every monitoring control this branch has, at its size, params zeroed. */
static void sweep(const struct rmc_session *s)
{
	const struct gs_rm_abi *abi = played_abi();
	unsigned sent = 0;

	if (!abi) {
		printf("sweep_sent=none (no tables for the played driver)\n");
		return;
	}
	for (size_t i = 0; i < rm_ctrl_table_size(abi); i++) {
		const struct rm_ctrl_info *ci = rm_ctrl_table_at(abi, i);
		if (!ci->known || (ci->group != GS_GROUP_MONITORING && ci->also != GS_GROUP_MONITORING))
			continue;
		if (ci->params_size > sizeof(buf))
			continue;
		memset(buf, 0, sizeof(buf));
		rmc_status_t r = ask(s, target_of(s, ci->cmd), ci->cmd, ci->params_size ? buf : NULL, ci->params_size);
		printf("sweep %#x %s\n", ci->cmd, rmc_status_str(r));
		sent++;
	}
	printf("sweep_sent=%u\n", sent);
}

static int views(void)
{
	struct rmc_session s;

	adv_session_or_die(&s, -1, "smi_views views");
	printf("inforom=%s\n", rmc_status_str(alloc_obj(&s, s.subdevice, H_INFOROM, GF100_SUBDEVICE_INFOROM)));
	printf("dispcmn=%s\n", rmc_status_str(alloc_obj(&s, s.device, H_DISPCMN, NV04_DISPLAY_COMMON)));
	printf("diag=%s\n", rmc_status_str(alloc_obj(&s, s.subdevice, H_DIAG, NV20_SUBDEVICE_DIAG)));
	printf("diag_again=%s\n", rmc_status_str(alloc_obj(&s, s.subdevice, H_DIAG2, NV20_SUBDEVICE_DIAG)));
	struct nv208f_verify_inforom vi = { 0, 0 };
	printf("verify_inforom=%s\n",
	       rmc_status_str(ask(&s, H_DIAG, NV208F_CTRL_CMD_GPU_VERIFY_INFOROM, &vi, sizeof(vi))));
	queries(&s);
	sweep(&s);
	rmc_session_close(&s);
	return 0;
}

static int setters(void)
{
	struct nv2080_set_compute_mode_rules rules = { 0, 0 };
	struct nv208f_bif_config_reg_write reg = { 0, 0 };
	struct rmc_session s;

	adv_session_or_die(&s, -1, "smi_views setters");
	printf("compute_mode=%s\n", rmc_status_str(ask(&s, s.subdevice, NV2080_CTRL_CMD_GPU_SET_COMPUTE_MODE_RULES,
	                                               &rules, sizeof(rules))));
	printf("diag=%s\n", rmc_status_str(alloc_obj(&s, s.subdevice, H_DIAG, NV20_SUBDEVICE_DIAG)));
	printf("diag_write=%s\n",
	       rmc_status_str(ask(&s, H_DIAG, NV208F_CTRL_CMD_BIF_CONFIG_REG_WRITE, &reg, sizeof(reg))));
	rmc_session_close(&s);
	return 0;
}

static int opaque(void)
{
	struct rmc_session s;

	adv_session_or_die(&s, -1, "smi_views opaque");
	rmc_status_t st = alloc_obj(&s, s.subdevice, H_BINAPI, NV2081_BINAPI);
	if (st != NV_OK) {
		printf("binapi_object=%s\n", rmc_status_str(st));
		return 1;
	}
	memset(buf, 0, sizeof(buf));
	printf("binapi=%s\n",
	       rmc_status_str(ask(&s, H_BINAPI, NV2081_BINAPI_CTRL_0x20810110, buf, BINAPI_0110_SIZE)));
	printf("gss=%s\n", rmc_status_str(ask(&s, s.subdevice, NV2080_CTRL_GSS_A618, buf, GSS_A618_SIZE)));
	rmc_session_close(&s);
	return 0;
}

static int hold(const char *file)
{
	static uint8_t params[SESSION_PARAMS];
	struct rmc_session s;
	nv_handle_t h = H_SESSION;

	adv_session_or_die(&s, -1, "smi_views hold");
	rmc_status_t st = rmc_alloc(s.fd, NULL, s.client, s.subdevice, &h, NVENC_SW_SESSION, params, 0);
	printf("held=%s\n", rmc_status_str(st));
	fflush(stdout);
	if (adv_ready_then_wait(file) != 0)
		return 1;
	return st == NV_OK ? 0 : 1;
}

static int sessions(void)
{
	struct rmc_session s;

	adv_session_or_die(&s, -1, "smi_views sessions");
	session_stats(&s, "nvenc", NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS);
	rmc_session_close(&s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "views") == 0)
		return views();
	if (argc == 2 && strcmp(argv[1], "setters") == 0)
		return setters();
	if (argc == 2 && strcmp(argv[1], "opaque") == 0)
		return opaque();
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc == 2 && strcmp(argv[1], "sessions") == 0)
		return sessions();
	fprintf(stderr, "usage: smi_views views|setters|opaque|sessions|hold FILE\n");
	return 2;
}
