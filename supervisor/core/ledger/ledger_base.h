/* SPDX-License-Identifier: MIT */
/*
 * ledger_base.h - what the ledger's API and its parts share: struct ledger
 * and what it is made of, the journal's change record, a client's owner,
 * and the pins (ledger_pins.c). The ledger's API
 * (ledger.h) and its private parts (ledger_obj.h, ledger_pins.h,
 * ledger_watch.h) both include this, so that the parts need not include
 * the API whose file includes them (scripts/check-layers.sh: no module
 * circle). ledger.h says what the ledger is for.
 */
#ifndef GPUSANDBOX_LEDGER_BASE_H
#define GPUSANDBOX_LEDGER_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "quota.h"
#include "rm_tables.h"

#define LEDGER_NO_GPU (-1)

struct ledger_obj;
struct ledger_alloc;
struct ledger_kept;

/* One change of the ledger, as a journal outside the process records it
 * (the agent's state memfd, agent_state.c): replaying the changes in order
 * on an empty ledger (ledger_replay) rebuilds its objects, charges, counts
 * and pins, without release watches (a watch is a file of this process).
 *
 * A pin names its allocation by the allocation's serial: a number the
 * ledger gives each allocation when it is made, carried by its ADD (a
 * snapshot's too), never given twice in one ledger's life, and continued
 * past the highest replayed by a resumed ledger. Not a handle: a pin
 * outlives every handle on its memory (a UVM mapping keeps the memory
 * past RM_FREE), and RM lets the client reuse a freed handle value while
 * the old memory is still held, so by the time the pin is dropped
 * (client, handle) may name another allocation. Not the allocation's
 * index either: that is this process's slot, reused after a free, and a
 * replay or a snapshot makes other ones. 64 bits do not wrap. */
enum ledger_op {
	LEDGER_OP_NOTE_CLIENT = 1,   /* client */
	LEDGER_OP_ADD,               /* client, parent, handle, kind, cls, gpu, bytes, serial */
	LEDGER_OP_DUP,               /* client, parent, handle, src_client, src_handle */
	LEDGER_OP_FREE,              /* client, handle (and its subtree) */
	LEDGER_OP_SCHEDULED,         /* client, handle (a group), on */
	LEDGER_OP_PIN,               /* serial, pins: taken on the allocation */
	LEDGER_OP_UNPIN,             /* serial: one pin dropped */
	/* A snapshot's allocation held by pins alone (every handle on it
	 * freed): serial, gpu, bytes, pins; kind: for hardware, the counts
	 * it carries (LEDGER_HELD_*, ledger_pins.h), 0 for memory. */
	LEDGER_OP_HELD,
	/* The sandbox registered a UVM channel: handles of channels that
	 * go are listed from now on (ledger_watch_channel_frees). No
	 * fields. */
	LEDGER_OP_WATCH_CHANNELS,
};
struct ledger_change {
	uint32_t op, kind;
	union {
		uint32_t on;         /* SCHEDULED */
		uint32_t pins;       /* PIN (1 but in a snapshot), HELD */
	};
	uint32_t client, parent, handle, cls;
	int32_t  gpu;
	/* Only a dup names a source; the others that name an allocation
	 * name it by its serial. */
	union {
		struct {
			uint32_t src_client, src_handle;
		};
		uint64_t serial;
	};
	uint64_t bytes;
};
/* With a seq and a crc it makes the journal's 64-byte record
 * (agent_state.h); a change of its layout is a new GS_STATE_FORMAT. */
#define LEDGER_CHANGE_BYTES 48u
_Static_assert(sizeof(struct ledger_change) == LEDGER_CHANGE_BYTES, "a ledger change is 48 bytes");
_Static_assert(offsetof(struct ledger_change, serial) == offsetof(struct ledger_change, src_client) &&
               offsetof(struct ledger_change, src_handle) == offsetof(struct ledger_change, serial) + 4,
               "the serial shares the dup's source fields, nothing else");
typedef void (*ledger_journal_fn)(void *ctx, const struct ledger_change *ch);

/* An open control file of the workload, known by a release watch. */
struct ledger_file {
	int  epfd;       /* epoll set holding the file (no reference) */
	int  tfd;        /* fd number it was added with */
	bool has_client; /* a client lives, or is being created, on it */
	/* Clients made on it after the first (by injection, exec_inject.c),
	 * live or being created: RM_FREE of a client on the file takes one of
	 * these before has_client, so the file is clientless only once all
	 * are freed. */
	unsigned extra_clients;
};

struct ledger {
	struct ledger_obj   *objs;
	uint32_t             n_objs, cap_objs;
	uint32_t             free_obj;      /* head of the free list, or NONE */
	uint32_t            *table;         /* open-addressing hash -> obj index */
	uint32_t             table_cap;
	uint32_t             table_used;
	struct ledger_alloc *allocs;
	uint32_t             n_allocs, cap_allocs, free_alloc;
	uint64_t             used[GS_MAX_GPUS];
	uint64_t             peak[GS_MAX_GPUS];
	uint32_t             live_clients;
	/* The quota kinds counted as objects come and go, by enum
	 * gs_quota_kind (the others are counted when asked: count_of_kind,
	 * exec_policy.c):
	 * live hardware channels and channel groups (dups not counted; a
	 * channel outside any group counts the group RM makes for it), and
	 * the groups last scheduled on; with their peaks. The names are the
	 * same numbers. */
	union {
		uint32_t         count[GS_QK_N];
		struct {
			uint32_t channels, channel_groups;
			uint32_t scheduled_groups;  /* TSGs last scheduled on */
		};
	};
	union {
		uint32_t         count_peak[GS_QK_N];
		struct {
			uint32_t channels_peak, channel_groups_peak;
		};
	};
	bool                 watch_unsupported; /* epoll refused a file once */
	/* Set when an allocation's last handle went while pins hold it
	 * (uvm_maps.c takes those mappings back, and clears it). */
	bool                 orphaned_pins;
	/* Sorted by the kernel's order of open files (ledger_file_of). An
	 * index is good until the next ledger_file_of. */
	struct ledger_file  *files;
	uint32_t             n_files, cap_files;
	uint32_t             files_swept;   /* n_files after the last sweep */
	/* At most this many live files known at once (gs_quota.files; each
	 * costs this process a descriptor): ledger_file_of refuses a new
	 * one past it. UINT32_MAX: no bound. */
	uint32_t             max_files;
	/* The clients with a release watch, so that reaping walks clients,
	 * not every object (issue #16: a new client cost time linear in all
	 * live objects). Each such client knows its position (watch_pos). */
	uint32_t            *watched;
	uint32_t             n_watched, cap_watched;
	uint32_t             reap_cursor;  /* ledger_reap_dead_client_within */
	/* Head of the list of hardware objects (channels, channel groups,
	 * video engines), or UINT32_MAX: what --sm and the engine caps count. */
	uint32_t             hw_head, hw_tail;
	/* Our pid, for kcmp: the ledger is used only by the process that
	 * made it (the supervisor does not fork once a sandbox runs). */
	pid_t                self;
	/* Told of every change after it is made (NULL: nobody listens). */
	ledger_journal_fn    journal;
	void                *journal_ctx;
	/* Clients rebuilt by ledger_replay: still without a release watch
	 * (n_resumed), and with one handed back (n_adopted). */
	uint32_t             n_resumed, n_adopted;
	/* Pins rebuilt by ledger_replay: held until the ledger goes. */
	uint32_t             n_resumed_pins;
	/* The serial the next allocation gets (ledger.h, struct ledger_change). */
	uint64_t             next_serial;
	/* Moves whenever a client's entry comes, goes or gets its release
	 * watch (never 0): an answer about a client's file learned at one
	 * value holds while it has not moved (ledger_client_epoch). */
	uint64_t             client_epoch;
	/* Set by ledger_watch_channel_frees: told of each handle of a
	 * channel that goes, before its count moves (ledger_holds.c). */
	void               (*channel_freed)(struct ledger *l, uint32_t obj);
	/* The clock channels and groups are dated on for their settling
	 * time (ledger_obj since_ns), NULL: CLOCK_MONOTONIC. The compute
	 * share sets its own (gs_sm_start: gs_sm_now, the clock its settling
	 * decisions read), so that both ends of a settling time are read on
	 * one clock, the test's included (tests/sm/escape.sh). */
	uint64_t           (*clock_ns)(void);
	struct ledger_unreg *unreg;
	uint32_t             n_unreg, cap_unreg;
	/* What keepers keep (ledger_keep): one entry per keeper's record. */
	struct ledger_kept  *kept;
	uint32_t             n_kept, cap_kept;
};

#define LEDGER_NAME_IS_ROW(name, array, k) \
	_Static_assert(offsetof(struct ledger, name) == offsetof(struct ledger, array[k]), \
	               #name " is not the row " #k)
LEDGER_NAME_IS_ROW(channels, count, GS_QK_CHANNELS);
LEDGER_NAME_IS_ROW(channel_groups, count, GS_QK_CHANNEL_GROUPS);
LEDGER_NAME_IS_ROW(scheduled_groups, count, GS_QK_ACTIVE_CHANNEL_GROUPS);
LEDGER_NAME_IS_ROW(channels_peak, count_peak, GS_QK_CHANNELS);
LEDGER_NAME_IS_ROW(channel_groups_peak, count_peak, GS_QK_CHANNEL_GROUPS);

/* A pin that names no allocation (ledger_pin). */
#define LEDGER_NO_PIN UINT32_MAX

/* The process (thread group) that created a client (ledger.h,
 * ledger_reap_dead_client). */
#define LEDGER_COMM_LEN 16
struct ledger_owner {
	pid_t pid;                    /* 0 if unknown */
	char  comm[LEDGER_COMM_LEN];
};

/* What a keeper's record holds (ledger.h, ledger_keep): at most two
 * handles of one object, each memory of ours. */
#define LEDGER_KEPT_HANDLES 2u
#define LEDGER_KEPT_MAX     (2u * LEDGER_KEPT_HANDLES)

/* A second pin on what pin holds (a mapping split in two). */
uint32_t ledger_pin_again(struct ledger *l, uint32_t pin);
/* Drops a pin, adding what the allocation released to released. A
 * resumed pin is never dropped: with none but resumed pins on the
 * allocation, nothing happens. */
void ledger_unpin(struct ledger *l, uint32_t pin, uint64_t released[GS_MAX_GPUS]);
/* Is what pin holds held by pins alone (every handle on it freed)? */
bool ledger_pin_orphaned(const struct ledger *l, uint32_t pin);

#endif
