/* SPDX-License-Identifier: MIT */
/*
 * ledger.h - the sandbox's account of its RM objects and the video memory
 * they hold, per GPU.
 *
 * The ledger mirrors the driver's object tree (client -> device/subdevice ->
 * memory, ...) for the objects the supervisor itself created, so that an
 * RM_FREE of any ancestor, or of the client, releases exactly what the
 * driver released. Memory is charged with the size the driver returned.
 * A dup is a second handle on the same allocation: the bytes are released
 * when the last handle goes, as in the driver. The same holds for
 * hardware objects (channels, channel groups, video engines): a dup that
 * outlives the counted handle takes the count over, and a GPFIFO_SCHEDULE
 * through a dup acts on the object it stands for.
 *
 * Clients die with their open file (RM frees a file's clients when its last
 * reference closes). The ledger learns of that without holding the file: it
 * registers the file in a private epoll set, which does not take a
 * reference, and the kernel drops that registration when the file is
 * released (ledger_reap_dead_clients).
 */
#ifndef GPUSANDBOX_LEDGER_H
#define GPUSANDBOX_LEDGER_H

#include "ledger_base.h"

int  ledger_init(struct ledger *l);
void ledger_fini(struct ledger *l);

/* Makes sure the client is known. fd_for_watch is a (temporary) fd on the
 * client's open file, used once to register the release watch. Returns 1 if
 * the client is new, 0 if known, -1 on allocation failure. */
int ledger_note_client(struct ledger *l, uint32_t h_client, int fd_for_watch);

/* Before a charge under a known client: makes sure the ledger's entry is
 * the client that lives on fd's open file. RM client handles can be reused
 * once a client dies with its file; if the entry still describes the dead
 * one (its file was released and not reaped yet), it is reaped now and the
 * client re-registered on this file, so new charges never hang under a
 * stale entry. Returns 1 when the entry is bound to fd's file (the same
 * kcmp answers both questions, so a charge costs one), 0 when it stays on
 * another live file, -1 on allocation failure. */
int ledger_bind_client(struct ledger *l, uint32_t h_client, int fd, uint64_t released[GS_MAX_GPUS]);
/* Moves whenever a client's entry comes, goes or gets its release watch
 * (never 0). A 1 from ledger_bind_client for a client and a file holds
 * for that pair while it has not moved: the entry, and so its watch, is
 * the same (the caller keeps the file the same: bind_client_for_charge). */
static inline uint64_t ledger_client_epoch(const struct ledger *l)
{
	return l->client_epoch;
}

bool ledger_has(const struct ledger *l, uint32_t h_client, uint32_t handle);

/* What the ledger recorded of one object: its class, kind (a dup has its
 * source's, but OTHER for hardware), GPU and, for memory, the bytes of
 * its allocation. */
struct ledger_facts {
	uint32_t           cls;
	enum rm_class_kind kind;
	int                gpu;
	uint64_t           bytes;
};
/* False when the ledger does not hold (h_client, handle). */
bool ledger_object_facts(const struct ledger *l, uint32_t h_client, uint32_t handle,
                         struct ledger_facts *out);

/* GPU index the object hangs under, or LEDGER_NO_GPU. */
int ledger_gpu_of(const struct ledger *l, uint32_t h_client, uint32_t handle);

/* Records an object the driver created. For RM_CLASS_DEVICE, gpu is the
 * deviceId; otherwise the parent's GPU is inherited when gpu is NO_GPU.
 * bytes > 0 charges video memory on that GPU. If the handle exists already
 * the driver has proven the old object gone, so it is purged first. */
int ledger_add(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
               enum rm_class_kind kind, uint32_t cls, int gpu, uint64_t bytes);

/* Records a dup: handle in h_client under h_parent now refers to the same
 * allocation as (src_client, src_handle), if the ledger knows that one. */
int ledger_dup(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
               uint32_t src_client, uint32_t src_handle);

/* Records a handle the driver made on memory that a pin holds (an import
 * from an export file, fd_exports.h): one more reference on the pin's
 * allocation, so its bytes stay charged once. cls: the exported object's.
 * -1 when pin holds nothing or there is no memory. */
int ledger_dup_pinned(struct ledger *l, uint32_t h_client, uint32_t h_parent, uint32_t handle,
                      uint32_t pin, uint32_t cls);

/* Does the ledger's client h_client live on fd's open file (its release
 * watch is that file)? false when unknown, unwatched or another file. */
bool ledger_client_on_file(struct ledger *l, uint32_t h_client, int fd);

/* A reference on the allocation of memory (h_client, handle) that is not
 * a handle: an external mapping UVM keeps (uvm_maps.h). Its bytes stay
 * charged until every handle and every pin is gone. LEDGER_NO_PIN when
 * the ledger does not hold the object or it charges nothing here (not
 * memory of ours).
 *
 * Pins are journalled (LEDGER_OP_PIN, LEDGER_OP_UNPIN, by the
 * allocation's serial), and a snapshot keeps those of live allocations,
 * those held by pins alone too (LEDGER_OP_HELD). A replayed pin is a
 * resumed pin: the process that replays has no record of its mapping and
 * no UVM file to unmap it through, so it cannot take the mapping back,
 * and nothing drops the pin: its memory stays charged until the ledger
 * goes (the container ends), even after every handle on it is freed.
 * Fail closed: memory mapped at a restart is charged too long rather
 * than not at all (SECURITY.md, "Memory that outlives its handle"). */
uint32_t ledger_pin(struct ledger *l, uint32_t h_client, uint32_t handle);
/* UVM's registrations of channels (uvm_maps.h). A registration keeps the
 * channel's ID and its group, whatever becomes of the handles, and the
 * supervisor does not know which pair a continued registration named.
 * So, once the sandbox has registered a channel, every handle of a
 * channel that goes (freed, or its client's file closed) is listed here
 * with pins on the channel's hardware record and its group's, which keep
 * their counts (--channels, --channel-groups) after their handles, until
 * the supervisor has unregistered that pair from every UVM file that may
 * hold it (ledger_unreg_done). */
struct ledger_unreg {
	uint32_t client, handle;
	uint32_t pins[2];   /* the channel's record; its group's (LEDGER_NO_PIN: none) */
};
/* From now on, list the handles of channels that go (journalled once:
 * LEDGER_OP_WATCH_CHANNELS). A replayed ledger that has it lists them,
 * but the files the registrations were made in are not known to the
 * process that replays (uvm_maps.h, spaces_unknown). */
void ledger_watch_channel_frees(struct ledger *l);
bool ledger_watches_channel_frees(const struct ledger *l);
/* Entry i of l->unreg is unregistered everywhere: its pins go, adding
 * what they released to released, and the entry with them. */
void ledger_unreg_done(struct ledger *l, uint32_t i, uint64_t released[GS_MAX_GPUS]);
/* Calls fn for every handle of a live channel (dups too); false as soon
 * as fn answers false. */
bool ledger_each_channel_handle(const struct ledger *l, bool (*fn)(void *ctx, uint32_t client, uint32_t handle),
                                void *ctx);
/* The GPU and bytes of what pin holds; false for LEDGER_NO_PIN. */
bool ledger_pin_facts(const struct ledger *l, uint32_t pin, int *gpu, uint64_t *bytes);

/* References the driver keeps of its own (docs/security/driver-refs.md).
 * Some objects make the driver dup memory of their client into its own
 * internal client, and free that dup only with the object: a semaphore
 * surface (NV_SEMAPHORE_SURFACE, _semsurfDupMemory, sem_surf.c) keeps
 * its hSemaphoreMem and hMaxSubmittedMem, a memory mapper
 * (NV_MEMORY_MAPPER, mem_mapper.c) keeps its semaphore surface and so
 * what that keeps. Freeing the workload's handle on such memory then
 * frees nothing in the driver, and must release no charge.
 *
 * ledger_keep, called at once after the keeper's ledger_add: the ledger's
 * object (h_client, h_keeper) keeps what handles[0..n) of h_client hold
 * (memory of ours, or what another keeper keeps: dups resolve to their
 * allocation) until its own last handle goes: its own free, its parent's,
 * its client's or its file's, and a dup of the keeper (RM shares one
 * record between the copies) keeps it too. Each reference is a pin
 * (journalled; a replayed one is a resumed pin: charged until the ledger
 * goes). Which handles a class keeps is the caller's to read from the
 * driver (exec_alloc.c): the ledger takes what it is told. A handle that
 * holds nothing of ours is skipped. 0, or -1 with nothing changed when
 * there is no memory for the record (the caller undoes the object). */
/* LEDGER_KEPT_HANDLES, LEDGER_KEPT_MAX: ledger_base.h. */
int ledger_keep(struct ledger *l, uint32_t h_client, uint32_t h_keeper, const uint32_t *handles, uint32_t n);
/* Allocations kept by the driver for live keepers (for tests). */
uint32_t ledger_kept_pins(const struct ledger *l);

/* Frees an object and its whole subtree (the client itself when
 * handle == h_client). Returns the bytes released on each GPU through
 * released (may be NULL). Unknown handles are ignored. */
void ledger_free(struct ledger *l, uint32_t h_client, uint32_t handle,
                 uint64_t released[GS_MAX_GPUS]);

/* Releases the clients whose open file was closed. Returns how many. */
unsigned ledger_reap_dead_clients(struct ledger *l, uint64_t released[GS_MAX_GPUS]);
/* The process (thread group) that created a client, credited with what
 * the driver frees when the client's file closes: its pid and command name
 * as read when the client was created (the process may be gone by then). */
/* Releases one client whose open file was closed, adding what it held to
 * released and naming its creator in *owner. False when none is left. */
bool ledger_reap_dead_client(struct ledger *l, uint64_t released[GS_MAX_GPUS],
                             struct ledger_owner *owner);
/* The same, looking at no more than max_checks watched clients, in turn
 * from where the last such call stopped (a round robin over calls).
 * LEDGER_REAP_SOME is the share a call that only tidies takes: 8 kcmps,
 * about 9 us; a dead client is met within n/8 such calls. */
#define LEDGER_REAP_SOME 8u
bool ledger_reap_dead_client_within(struct ledger *l, uint32_t max_checks,
                                    uint64_t released[GS_MAX_GPUS], struct ledger_owner *owner);
void  ledger_set_client_owner(struct ledger *l, uint32_t h_client, const struct ledger_owner *owner);
pid_t ledger_client_owner(const struct ledger *l, uint32_t h_client);

static inline uint64_t ledger_used(const struct ledger *l, int gpu)
{
	return (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS) ? l->used[gpu] : 0;
}

static inline uint64_t ledger_peak(const struct ledger *l, int gpu)
{
	return (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS) ? l->peak[gpu] : 0;
}

/* The workload's control file behind fd: its index in l->files, created
 * (with a release watch) if new, after dropping released ones. Returns -1
 * if the file cannot be identified (no kcmp or no epoll on it), and
 * LEDGER_FILES_FULL when it is new and max_files live files are known. */
#define LEDGER_FILES_FULL (-2)
int ledger_file_of(struct ledger *l, int fd);

/* Is this channel group scheduled now (its last GPFIFO_SCHEDULE enabled)? */
bool ledger_is_scheduled(const struct ledger *l, uint32_t h_client, uint32_t h_group);

/* Is handle a channel group (or a dup of one)? */
bool ledger_is_channel_group(const struct ledger *l, uint32_t h_client, uint32_t handle);

/* Is handle a channel outside any channel group? */
bool ledger_is_lone_channel(const struct ledger *l, uint32_t h_client, uint32_t handle);

/* Records a GPFIFO_SCHEDULE the driver accepted on a channel group, or on
 * a channel outside any group (counted like a group). */
void ledger_set_scheduled(struct ledger *l, uint32_t h_client, uint32_t h_group, bool on);

/* Highest GPU index that was ever charged, or -1. */
int ledger_max_gpu(const struct ledger *l);

/* ---- for the compute-share actuator (compute/actuator.c) ---- */

/* How the supervisor can reach a client's open file again: a workload task
 * and fd number that last used it, to be checked against the release
 * watch (ledger_fd_is_client_file) before use. */
struct ledger_route {
	pid_t tid;
	int   wfd;
};

struct ledger_channel {
	uint32_t client, handle;
	uint32_t parent;       /* its channel group (or device) */
	bool     sm_disabled;  /* the controller disabled it and has not re-enabled it */
	bool     settled;      /* its context is old enough to be toggled */
};

/* Records the task and fd number of a call that reached the driver
 * through h_client's file. */
void ledger_set_route(struct ledger *l, uint32_t h_client, pid_t tid, int wfd);
int  ledger_client_route(const struct ledger *l, uint32_t h_client, struct ledger_route *r);
/* Is fd (ours) the client's open file? 1 yes, 0 no, -1 cannot tell. */
int  ledger_fd_is_client_file(const struct ledger *l, uint32_t h_client, int fd);
/* The same for fd number wfd of task tid, without a dup (kcmp); -1 too
 * for a client without a release watch (resumed by the agent). */
int  ledger_task_fd_is_client_file(const struct ledger *l, uint32_t h_client, pid_t tid, int wfd);
/* Is the client's open file still open somewhere? */
bool ledger_client_file_alive(const struct ledger *l, uint32_t h_client);
/* Live hardware channels on GPU gpu; settled is judged at now_ns. */
uint32_t ledger_list_channels(const struct ledger *l, int gpu, uint64_t now_ns, uint64_t settle_ns,
                              struct ledger_channel *out, uint32_t max);
/* Live hardware channels per GPU. */
void ledger_count_channels(const struct ledger *l, uint32_t counts[GS_MAX_GPUS]);
void ledger_set_sm_disabled(struct ledger *l, uint32_t h_client, uint32_t h_channel, bool disabled);
/* A subdevice of GPU gpu under h_client, or 0. */
uint32_t ledger_subdevice_of(const struct ledger *l, uint32_t h_client, int gpu);

/* RM clients: those of the workload's control files that are still open
 * (a released file's clients are gone with it), live or being created:
 * one per file that holds one, and the file's second and later ones
 * (extra_clients, made by injection). A liveness check per known file; drops none, so indices into
 * files stay good. */
uint32_t ledger_client_files(const struct ledger *l);

/* Applies one journalled change (see struct ledger_change). 0, or -1
 * when it cannot: no memory, or a pin naming no allocation the ledger
 * holds (not a journal of this ledger's changes). The journal is not
 * told. */
int ledger_replay(struct ledger *l, const struct ledger_change *ch);

/* The release watch of client h_client: its epoll set (-1 when none) and,
 * in *tfd, the fd number the file was added with. */
int ledger_client_watch(const struct ledger *l, uint32_t h_client, int *tfd);
/* A client rebuilt by ledger_replay gets back the watch an earlier
 * process made (an epoll set holds no reference on the file, so one kept
 * elsewhere still tells whether the file was released). Takes epfd:
 * closed when the client is unknown or watched already. 0 or -1. */
int ledger_adopt_watch(struct ledger *l, uint32_t h_client, int epfd, int tfd);

/* May fd's file hold a client rebuilt from a journal? The files' index
 * (which file has a client: a client is continued only on a file that has
 * none, SECURITY.md) does not survive the agent. True when a rebuilt
 * client's handed-back watch is that file, or when some rebuilt client has
 * no watch yet (its file is unknown: every file may be it). */
bool ledger_file_may_hold_resumed_client(const struct ledger *l, int fd);

/* The changes that rebuild the ledger as it is now, parents before
 * children, a dup after the handle it shares with, and the pins last: a
 * snapshot that replaces a journal. 0, or -1 when there is no memory to
 * make it (nothing was emitted: the caller must not take it for an empty
 * ledger). */
int ledger_snapshot(const struct ledger *l, ledger_journal_fn emit, void *ctx);

/* Number of live objects (for tests). */
uint32_t ledger_live_objects(const struct ledger *l);

/* The video engine sessions of one engine kind (docs/security/
 * channels-and-clients.md, "Video engine sessions"). A session holds at
 * most P objects of the kind on one GPU, P = per_session(ctx, gpu), the
 * caller's count of them (its engines of the kind there, times the
 * contexts a session keeps on each; taken as 1 when it says 0), and its
 * objects are one group's: one client's (by_gpu false) or every client's
 * on the GPU (by_gpu true). A group holding n objects holds ceil(n / P)
 * sessions. Live engine objects whose
 * class match() accepts, each once: a dup is recorded as OTHER and counts
 * only after taking the engine over from a freed original, then under the
 * dup's client. */
struct ledger_engine_query {
	bool      (*match)(uint32_t cls, const void *arg);
	const void *match_arg;
	uint32_t  (*per_session)(void *ctx, int gpu);
	void       *ctx;
	bool        by_gpu;
	/* The group whose objects .held counts (the caller's): the client's
	 * on the GPU, or the GPU's when by_gpu. */
	uint32_t    client;
	int         gpu;
};
struct ledger_engine_count {
	uint32_t sessions;  /* over every group */
	uint32_t objects;   /* the live objects counted */
	uint32_t held;      /* objects of the caller's group */
};
/* Is handle (or the object a dup of it shares) a video engine object? */
bool ledger_is_engine(const struct ledger *l, uint32_t h_client, uint32_t handle);
/* Without memory to sort the pairs, every object is a session of its
 * own: a count never lower than the true one (fail closed). */
struct ledger_engine_count ledger_count_engine_sessions(const struct ledger *l,
                                                        const struct ledger_engine_query *q);

#endif
