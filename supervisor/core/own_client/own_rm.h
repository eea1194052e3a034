/* SPDX-License-Identifier: MIT */
/*
 * own_rm.h - the sandbox's own RM client, with a device on each GPU it
 * needs, through which the supervisor makes a workload's UVM external
 * mappings (exec_uvm.c).
 *
 * Why one of our own: UVM dups the memory it maps as the calling process
 * (nvGpuOpsDupMemory passes NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_
 * PRIVILEGE; cliresShareCallback then wants, for the default
 * RS_SHARE_TYPE_PID policy, the source client's ProcID to be the current
 * process: nv_gpu_ops.c, client_resource.c, 580.95.05). Naming the
 * workload's client from the supervisor was refused with
 * NV_ERR_INSUFFICIENT_PERMISSIONS on an H200 (580.159.04, 2026-11-29), even
 * as root; naming a dup in a client of our own, after the workload's
 * memory was shared with that client alone (RS_SHARE_TYPE_CLIENT), was
 * mapped, and the workload used it (docs/gpu-results/
 * 2026-11-29-h200-write-back, tests/gpu/uvm_perform_probe.c).
 */
#ifndef GPUSANDBOX_OWN_RM_H
#define GPUSANDBOX_OWN_RM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver.h"
#include "nvrm/groups.h"
#include "nvrm_abi.h"

/* Workload clients remembered as shared (struct gs_own_rm). */
#define GS_OWN_SHARED_CLIENTS 64u

struct gs_own_rm {
	int         ctl_fd;   /* our control file; -1: no client yet */
	nv_handle_t client;
	uint64_t    devices;  /* bit g: our device on the GPU of minor g exists */
	/* The parent of the dup at GS_OWN_TEMP_DUP while one lives (0:
	 * none): freed after the workload's answer is sent
	 * (gs_own_rm_drop_temp), not before it. */
	nv_handle_t temp_parent;
	/* The share that let us dup it, revoked then too: our dup of the
	 * workload's control file it was made through (-1: none), and the
	 * workload's client and memory. */
	int         shared_fd;
	nv_handle_t shared_client, shared_object;
	/* The workload clients whose client object we shared with our
	 * client (gs_own_rm_share_client), by handle: a record says only
	 * that a share was made, never that it is in force (the workload
	 * may have replaced the list since, or freed the client and made
	 * another at its handle); a dup it refuses is shared again
	 * (exec_uvm.c). Emptied when full: each client forgotten is shared
	 * again at its next map (equal policies merge, rsShareListInsert,
	 * so the driver's list does not grow). */
	nv_handle_t shared_clients[GS_OWN_SHARED_CLIENTS];
	unsigned    n_shared_clients;
	/* Shared clients whose memory was refused to our dup all the same
	 * (its own list, or an ancestor's, was edited: it does not inherit
	 * the client's): their maps share each memory, as before, without
	 * trying the client's share first (gs_own_rm_note_no_inherit). */
	nv_handle_t per_memory_clients[GS_OWN_SHARED_CLIENTS];
	unsigned    n_per_memory_clients;
	/* Whether maps share the workload's client (above) rather than each
	 * memory: only where our client's handle stays held as long as a
	 * workload client can live (gs_own_rm_share_client says why). The
	 * command line's session, whose workload dies with the supervisor
	 * (its PID namespace, PR_SET_PDEATHSIG), and an agent's container
	 * whose client the keeper holds (own_client_of, agent_sandbox.c);
	 * not an agent without a keeper, whose death frees our client while
	 * its containers live on. */
	bool        share_clients;
	/* GPUSANDBOX_TEST_SHARE_PER_MAP (read by gs_session_init): every map
	 * shares its memory and revokes the share after the answer, as
	 * before issue #31's client share; GPUSANDBOX_TEST_NO_RESHARE: a dup
	 * refused after a client share is not shared again (the baseline of
	 * tests/adv uvm_share:replace). Never for use. */
	bool        test_share_per_map, test_no_reshare;
	/* GPUSANDBOX_TEST_KEEP_SHARE in the supervisor's own environment
	 * (read by gs_session_init): the share is never revoked, as before
	 * c15c8fd, so that tests/agent stalehandle-runc's baseline shows
	 * what the revoke prevents. Never for use. */
	bool        test_keep_share;
	/* --uvm-map as-user: the uid every process of the sandbox runs as,
	 * which the operator says is the sandbox's alone; GS_OWN_NO_UID
	 * (the default): maps go through our own client. Then maps name the
	 * workload's own client and memory, made by a worker whose euid is
	 * this uid for the length of the ioctl (gs_own_rm_share_token says
	 * why that works and what it opens). */
	uid_t       map_uid;
	/* The workload clients shared by token (gs_own_rm_share_token): a
	 * record, never a proof, as shared_clients. */
	nv_handle_t token_clients[GS_OWN_SHARED_CLIENTS];
	unsigned    n_token_clients;
	/* Told once our client exists, before any share names it (NULL:
	 * nobody): the agent hands the control file to its keeper, so that
	 * the client, and so its handle, outlives an agent killed between
	 * a share and its revoke (gs_own_rm_drop_temp says why a handle
	 * left free is a way in). */
	void      (*on_client)(void *ctx, int ctl_fd, nv_handle_t client);
	void       *on_client_ctx;
};
#define GS_OWN_NO_UID ((uid_t)-1)
#define GS_OWN_RM_INIT { .ctl_fd = -1, .shared_fd = -1, .share_clients = true, .map_uid = GS_OWN_NO_UID }

/* Our device handle on the GPU of minor gpu (a fixed handle per GPU). */
#define GS_OWN_DEVICE_BASE 0x0a0de000u
#define GS_OWN_DEVICE(gpu) (GS_OWN_DEVICE_BASE + (nv_handle_t)(gpu))
/* Our subdevice under it, for the length of one question (gs_own_rm_engines). */
#define GS_OWN_SUBDEVICE_BASE 0x0a0de800u
#define GS_OWN_SUBDEVICE(gpu) (GS_OWN_SUBDEVICE_BASE + (nv_handle_t)(gpu))
/* The handle a dup is made at for the length of one call. */
#define GS_OWN_TEMP_DUP    0x0a0df000u
#define GS_OWN_MAX_GPUS    64u

/* Makes sure our client and our device on the GPU of minor gpu exist
 * (the ledger's key, map the driver's list of GPUs). The device is made
 * on that GPU's device instance, asked of the driver on our client: RM
 * numbers instances in attach order, so an instance is not a minor
 * (exec_visibility.c says more), and a dup under another GPU's device is
 * refused across MIG instances (vidmemCheckCopyPermissions, video_mem.c,
 * 580.95.05). The driver lets a device be made only by a thread that
 * holds the GPU's node: ours are opened around the allocation, as the
 * sampler's are (sampler.c), in the shared table, where no workload's
 * device allocation is made (private_table.h). NV_OK or the driver's
 * status (NV_ERR_OPERATING_SYSTEM when our files cannot be opened,
 * NV_ERR_INVALID_DEVICE when the driver names no instance for it). */
nv_status_t gs_own_rm_device(struct gs_own_rm *o, int gpu, const struct gs_gpu_entry *map, unsigned n_map);

/* The engine instances of each video engine kind (enum gs_engine) the GPU
 * of minor gpu has, asked of the driver through our client: our device's
 * subdevice, made for the question and freed after it, and
 * NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 sent with params_size bytes (the
 * running branch's size of it, from the tables). Each engine type is
 * counted once, whatever the answer repeats. NV_OK with counts[] filled,
 * or the driver's status (NV_ERR_NOT_SUPPORTED for a size we cannot send,
 * NV_ERR_INVALID_STATE for an answer longer than its list); counts[] is
 * then left alone. Nothing the workload can reach is read. */
nv_status_t gs_own_rm_engines(struct gs_own_rm *o, int gpu, const struct gs_gpu_entry *map, unsigned n_map,
                              uint32_t params_size, uint32_t counts[GS_ENGINE_N]);

/* Lets our client dup the workload's memory (h_client, h_object) and
 * dups it at GS_OWN_TEMP_DUP under our device on gpu, after dropping a
 * temporary dup still held. ctl is our dup of the client's own control
 * file (checked by the caller); the share is made through it, composed
 * with the policies in force (the driver's default stays), and taken
 * ownership of: closed by gs_own_rm_drop_temp, or here on failure.
 * NV_OK or the driver's status. */
nv_status_t gs_own_rm_dup_temp(struct gs_own_rm *o, int gpu, int ctl, nv_handle_t h_client,
                               nv_handle_t h_object);
/* Issue #31: one share per workload client instead of one per map.
 *
 * gs_own_rm_share_client lets our client dup every object of the
 * workload's client h_client that inherits the client object's policy
 * list: RM_SHARE of the client object itself, RS_SHARE_TYPE_CLIENT naming
 * our client, RS_ACCESS_DUP_OBJECT only, composed with the policies in
 * force. An object whose own list (and whose ancestors' lists) was never
 * edited takes its client's (rsAccessGetActiveShareList,
 * src/nvidia/src/libraries/resserv/src/rs_access_map.c, 580.95.05), so
 * the workload's memory is dup'able by our client from then on without a
 * share per map. Made through ctl, our dup of the client's own control
 * file (RM takes a share only through the client's file: rmclientValidate,
 * client.c); ctl stays the caller's. NV_OK or the driver's status.
 *
 * Why a share kept for the client's life is sound (docs/security/
 * per-call-cost.md, section 4): the policy names our client's handle, and
 * it gives a right to whoever holds a client at that handle. Ours is held
 * as long as the sandbox can use the workload's client: on the command
 * line until the session ends, which is after every task of the workload
 * has been reaped (its PID namespace's init waits for them), so every
 * file of its clients is closed and RM has freed them with their lists;
 * in the agent the keeper holds our client until the container is
 * dropped (8e8c91a), across agent restarts. What it adds to the per-map
 * share: the window where our handle is free and a shared client lives
 * is now the teardown for every object, not one map at a time for one
 * memory (a file of the workload passed to a process outside the
 * sandbox keeps its client, and the share, past the teardown). The right
 * is to dup only, and only our client uses it, for memory the verdict
 * judged. */
nv_status_t gs_own_rm_share_client(struct gs_own_rm *o, int ctl, nv_handle_t h_client);
/* Does a map share its client (share_clients, not the test switch)? */
bool gs_own_rm_shares_clients(const struct gs_own_rm *o);
/* Was h_client shared (a record, not a proof: above)? */
bool gs_own_rm_client_shared(const struct gs_own_rm *o, nv_handle_t h_client);
/* h_client's records go (its client was freed: a client made later at
 * its handle starts with the driver's default list). */
void gs_own_rm_forget_client(struct gs_own_rm *o, nv_handle_t h_client);
/* h_client's memory did not inherit its client's share: its maps go per
 * memory from now on (a cost, never a right: the per-memory share is
 * the one made before issue #31). Is it so marked? */
void gs_own_rm_note_no_inherit(struct gs_own_rm *o, nv_handle_t h_client);
bool gs_own_rm_no_inherit(const struct gs_own_rm *o, nv_handle_t h_client);
/* Dups the workload's memory (h_client, h_object) at GS_OWN_TEMP_DUP under
 * our device on gpu, through a share already in force, after dropping a
 * temporary dup still held; freed after the answer (gs_own_rm_drop_temp).
 * NV_OK or the driver's status (NV_ERR_INSUFFICIENT_PERMISSIONS: no
 * policy lets our client dup it). */
nv_status_t gs_own_rm_dup_shared(struct gs_own_rm *o, int gpu, nv_handle_t h_client, nv_handle_t h_object);

/* --uvm-map as-user (map_uid set): lets a thread whose effective uid is
 * the workload's have UVM dup the workload's memory, so that the map can
 * name the workload's own client and memory, with no dup of ours and no
 * free of it (issue #31: those two were 15.8 us of a 2 MiB pair on the
 * H200, docs/perf.md).
 *
 * UVM dups the memory it maps into its own kernel client; for a kernel
 * client cliresShareCallback judges an RS_SHARE_TYPE_OS_SECURITY_TOKEN
 * policy by the calling thread's token, which matches the client's when
 * the effective uid or the process is the same (osGetSecurityToken,
 * osValidateClientTokens, os.c; client_resource.c, 580.95.05; measured on
 * an H200, tests/gpu/token_map_probe.c: 0x0 from a thread with the
 * workload's euid after this share, 0x1b from root). RM_SHARE of the
 * client object itself, RS_ACCESS_DUP_OBJECT only, composed with the
 * policies in force, through ctl (our dup of the client's own control
 * file; it stays the caller's); inherited by every object whose list was
 * never edited, as the client share above is. NV_OK or the driver's
 * status.
 *
 * What it opens (docs/security/per-call-cost.md, section 12): any client
 * whose creator had that euid may dup the workload's objects from then
 * on, for the client's life. Sandboxed processes still cannot (their
 * RM_DUP_OBJECT and maps are trapped and judged), but a process of that
 * uid outside every sandbox could read and hold the sandbox's memory:
 * sound only where the uid is the sandbox's alone, which the operator
 * says by asking for the mode (the command line refuses it for uid 0,
 * and without --user). */
nv_status_t gs_own_rm_share_token(struct gs_own_rm *o, int ctl, nv_handle_t h_client);
/* Is the mode on? Was h_client shared by token (a record, not a proof)? */
bool gs_own_rm_maps_as_user(const struct gs_own_rm *o);
bool gs_own_rm_token_shared(const struct gs_own_rm *o, nv_handle_t h_client);
/* h_client's token share was refused (the workload replaced its list):
 * it is shared again at the next map. */
void gs_own_rm_forget_token(struct gs_own_rm *o, nv_handle_t h_client);

/* Frees the temporary dup and revokes the share, if they are held. UVM
 * holds its own reference to what it mapped, so ours is needed only
 * until the map returns. The share is revoked because a policy naming
 * our client would outlive it: an agent restarted while its containers
 * live frees our client, and RM lets any process ask for a client by a
 * handle of its choice (serverCreateEntryAndLockForNewClient,
 * rs_server.c, 580.95.05), so a client made with our old handle could
 * dup the workload's memory. The executor calls this after the answer
 * is sent (issue #16: off the workload's path), still under the session
 * lock, so no other call of the sandbox runs in between. */
void gs_own_rm_drop_temp(struct gs_own_rm *o);
void gs_own_rm_close(struct gs_own_rm *o);
/* Frees what a previous agent's own client (client, on our copy ctl_fd
 * of the file the keeper holds) may still hold: that agent may have died
 * holding a temporary dup, and which devices it made is not known, so
 * every device handle of ours is freed (the dup goes with its device).
 * The client itself stays, held by the keeper: a share that agent had not
 * revoked still names its handle. It cannot serve our maps: UVM dups the
 * memory as the calling process, and RM's default policy wants the
 * client's maker to be that process (cliresShareCallback,
 * client_resource.c, 580.95.05), so each agent makes a client of its own.
 * RM takes the call through the client's file alone (rmclientValidate,
 * client.c: the strict check compares files, not processes). */
void gs_own_rm_retire(int ctl_fd, nv_handle_t client);

#endif
