/* SPDX-License-Identifier: MIT */
/*
 * agent_state.h - a container's state in a memfd that outlives the agent
 * (the keeper holds it): who the container is, its ledger as a journal of
 * changes, and the calls in flight. A restarted agent resumes the
 * container from it (agent_resume.c; docs/agent.md "Restart survival").
 *
 * Layout of the memfd, every part at a fixed offset:
 *   header      the container (id, init pid, policy name and hash of its
 *               text, trap set) and the journal's bookkeeping
 *   slots       one call in flight per worker: the notification (id, tid,
 *               seccomp_data) written after it is received, the handle
 *               being made written before an RM_ALLOC is performed, cleared
 *               after the answer
 *   two areas   the journal: records {seq, change, crc} appended in the
 *               commit stage, before the answer; when the active area is
 *               full, a snapshot of the live ledger is written into the
 *               other one (as the changes that rebuild it), which then
 *               becomes the active one (one aligned store)
 *
 * Writes are memory copies into a shared mapping: no system call per
 * call. The state has to survive the process, not the machine.
 */
#ifndef GPUSANDBOX_AGENT_STATE_H
#define GPUSANDBOX_AGENT_STATE_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent_conn.h"
#include "gs_error.h"
#include "ledger.h"
#include "profile.h"
#include "scratch.h"
#include "session.h"

#define GS_STATE_MAGIC 0x74736773u          /* "gsst" */
#define GS_STATE_FORMAT 3u                  /* 2: pins journalled, the serial in struct ledger_change;
                                               3: the quota request in the ident */
#define GS_STATE_SLOTS 128u                 /* workers (listeners) per container with a slot */
#define GS_STATE_TOP_MAX 128u               /* our copy of the top-level struct */
#define GS_STATE_AREA_BYTES (1u << 20)      /* one journal area: 16384 records */
#define GS_STATE_NO_SLOT (-1)

/* Who the container is: written once, when its sandbox is made. */
struct gs_state_ident {
	uint32_t magic, format;
	char     id[GS_AGENT_ID_MAX];
	char     sandbox_id[GS_SANDBOX_ID_LEN];
	int32_t  init_pid;
	char     policy_name[GS_PROFILE_POLICY_NAME_MAX];  /* "" for --policy */
	uint64_t policy_hash;                                /* FNV-1a of the policy's text */
	uint64_t trap_version;
	uint32_t uvm_mmap_traps;
	struct gs_agent_k8s k8s;
	/* The container's quota request: a restarted agent applies it again,
	 * or the container would resume under the node's default. */
	struct gs_agent_request request;
	uint32_t crc;
};

/* The layout is pinned: a test (tests/agent/run.sh restartstale-runc)
 * edits the trap set of a held state as an older agent would have written
 * it, and the crc is CRC-32 (IEEE, as zlib's crc32) of the bytes before it. */
#define GS_STATE_IDENT_TRAPS_AT 248u
#define GS_STATE_IDENT_CRC_AT 1660u
_Static_assert(offsetof(struct gs_state_ident, trap_version) == GS_STATE_IDENT_TRAPS_AT,
               "the ident's trap set is where tests/agent/run.sh edits it");
_Static_assert(offsetof(struct gs_state_ident, crc) == GS_STATE_IDENT_CRC_AT,
               "the ident's crc is where tests/agent/run.sh rewrites it");

struct gs_state_header {
	struct gs_state_ident ident;
	/* The journal: which area is read, and the seq of its first record. */
	uint32_t active_area;
	uint32_t unresumable;            /* a snapshot did not fit: resume refuses */
	uint64_t area_base_seq[2];
	uint32_t next_listener_index;    /* the keeper's name for the next listener */
};

/* A slot's call: received; an RM_ALLOC being performed; being answered
 * (the commit made). */
enum gs_slot_phase { GS_SLOT_FREE = 0, GS_SLOT_RECEIVED, GS_SLOT_PERFORMING, GS_SLOT_ANSWERING };

struct gs_state_slot {
	uint32_t phase;
	uint32_t listener_index;
	uint64_t id;                     /* the notification */
	uint32_t pid;                    /* the trapped task (tid) */
	uint32_t preexisting;            /* PERFORMING: the ledger had the handle before */
	struct seccomp_data data;
	uint32_t made;                   /* an RM_ALLOC was performed: */
	uint32_t client, parent, object; /* its handles */
	uint32_t top_len;
	uint8_t  top[GS_STATE_TOP_MAX];
	uint32_t crc;
};

struct gs_state_rec {
	uint64_t seq;
	struct ledger_change ch;
	uint32_t crc;
	uint32_t pad;
};

struct gs_agent_state {
	int      memfd;
	uint8_t *map;
	size_t   size;
	struct gs_state_header *hdr;
	struct gs_state_slot   *slots;
	struct gs_state_rec    *areas[2];
	uint64_t next_seq;
	uint32_t n_in_area;              /* records in the active area */
	const struct ledger *ledger;     /* for snapshots */
	/* Told when a client is noted (gone: false) or freed (true), so that
	 * its release watch is kept outside the agent too; NULL: nobody. */
	void   (*on_client)(void *ctx, uint32_t client, bool gone);
	void    *on_client_ctx;
	bool     taken[GS_STATE_SLOTS];  /* this agent's workers (under the container's lock) */
};

uint32_t gs_state_crc(const void *p, size_t len);
uint64_t gs_state_hash_file(const char *path);

/* Makes the memfd of a new container. Returns 0 or -1 (err). */
int gs_state_create(struct gs_agent_state *st, const struct gs_state_ident *ident,
                    struct gs_error *err);
/* Maps the memfd a keeper held (takes memfd). Checks its magic, format
 * and the ident's crc. Returns 0 or -1 (err). */
int gs_state_open(struct gs_agent_state *st, int memfd, struct gs_error *err);
void gs_state_close(struct gs_agent_state *st);

/* Rebuilds the ledger from the active area (a record out of sequence or
 * with a bad crc ends it). Returns 0 or -1 (err). */
int gs_state_replay(struct gs_agent_state *st, struct ledger *l, struct gs_error *err);
/* From now on every change of l is journalled. */
void gs_state_attach(struct gs_agent_state *st, struct ledger *l);

/* A worker's slot (GS_STATE_NO_SLOT when all are taken); the caller
 * holds the container's lock. */
int  gs_state_slot_claim(struct gs_agent_state *st, uint32_t listener_index);
void gs_state_slot_release(struct gs_agent_state *st, int slot);
void gs_state_received(struct gs_agent_state *st, int slot, const struct seccomp_notif *req);
void gs_state_answered(struct gs_agent_state *st, int slot);
/* The scratch's before_alloc hook; ctx is a struct gs_state_worker. */
struct gs_state_worker {
	struct gs_agent_state *st;
	int slot;
};
void gs_state_before_alloc(void *ctx, const struct gs_alloc_note *note);
void gs_state_before_answer(void *ctx);
/* Is the slot's record whole (its crc)? */
bool gs_state_slot_valid(const struct gs_state_slot *s);

#endif
