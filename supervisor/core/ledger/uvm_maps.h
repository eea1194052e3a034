/* SPDX-License-Identifier: MIT */
/*
 * uvm_maps.h - the UVM external mappings the supervisor made for a
 * sandbox (issue #17 item 9), each holding a ledger pin on the memory it
 * maps, so that the memory stays charged for as long as UVM keeps it.
 *
 * UVM dups the RM memory it maps into its own client and keeps it until
 * the mapping goes: an unmap or a mapping over it on the same GPU (which
 * split a partly covered mapping at their edges, each piece keeping the
 * memory), the free of its range, or the teardown of the VA space when
 * the UVM file's last reference closes (uvm_map_external.c,
 * uvm_va_range.c, 580.95.05). The records follow the same rules on the
 * calls the supervisor performed and saw succeed; anything else (a GPU
 * unregistered, a call we did not see succeed) leaves a record in place,
 * the charge kept: the safe side.
 *
 * Only the map is trapped; UVM_UNMAP_EXTERNAL and UVM_FREE run in the
 * workload unseen (each would cost a round trip per cuMemFree). What
 * matters is the memory, not the mapping: a mapping may outlive its
 * memory's last handle only while we have not seen that handle go. So
 * when an allocation's last handle goes (an RM_FREE we perform, or its
 * client's file closed) and pins alone hold it, we unmap its mappings
 * ourselves, exactly where we made them, and only then drop the pins
 * (gs_uvm_maps_take_back_orphans): the memory is then really freed. An
 * unmap UVM refuses because the range or GPU went meant the mapping went
 * with it; a record whose unmap fails otherwise is kept and tried again.
 * A workload that frees a handle its GPU code still maps loses the
 * mapping, where the driver would have kept the memory.
 *
 * The file: a UVM file's release cannot be watched without a reference
 * (it has no poll, so it cannot sit in an epoll set as control files do,
 * ledger_watch.h; measured on an H200). So while a file has records, we
 * hold a dup of it: its VA space, and so its mappings, cannot go without
 * us, and we can reach them to unmap. When every process that mapped
 * through the file has exited (a pidfd each), we unmap what is left and
 * close our dup. Records over VA that a later mapping of ours covers are
 * cut then (that VA may be reused only through a map we perform).
 *
 * Channel registrations (issue #17 item 4). UVM_REGISTER_CHANNEL has RM
 * keep the channel's ID and instance block (a UVM_CHANNEL_RETAINER) and
 * dup its group into UVM's client, until the registration goes: an
 * unregister, the unregistration of its GPU VA space or GPU, or the VA
 * space's teardown (uvm_user_channel.c, nv_gpu_ops.c,
 * uvm_channel_retainer.c, 580.95.05). The supervisor cannot make the
 * registration itself: RM dups the group as the calling process, and the
 * driver's default policy lets only the client's own process do that
 * (cliresShareCallback, client_resource.c); under --uvm-map as-user the
 * worker makes it from our copy as the workload's uid instead
 * (exec_uvm.c, register_as_user: no quiesce). Otherwise the call is continued,
 * and what it names (the pair may be rewritten by any task sharing the
 * page) decides nothing. What the supervisor makes sure of instead:
 *  - the file: it holds a dup of the UVM file the call is on, with every
 *    task sharing the caller's fd table stopped and the caller seized
 *    until it has left the ioctl (quiesce.h), so the registration can only
 *    land in a file we hold (a "registrant" space);
 *  - the release: from then on every handle of a channel that goes is
 *    listed by the ledger with pins that keep the channel and its group
 *    counted (ledger.h, struct ledger_unreg), until we have unregistered
 *    that pair from every registrant space (gs_uvm_maps_take_back_orphans)
 *    while no registration is in flight (one still inside the kernel could
 *    land after our unregister found nothing);
 *  - a registrant space is let go (its registrants all exited) only after
 *    every live channel handle and every listed one has been unregistered
 *    from it.
 * An unregister answered NV_ERR_INVALID_CHANNEL found nothing registered
 * (never registered, unregistered by the workload, or taken with a GPU VA
 * space): done. A workload that frees a channel handle it registered under
 * another handle loses that registration: the channel is gone either way.
 *
 * Used under the sandbox lock, like the ledger.
 */
#ifndef GPUSANDBOX_UVM_MAPS_H
#define GPUSANDBOX_UVM_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"
#include "nvrm_abi.h"
#include "nvuvm_abi.h"
#include "quiesce.h"

struct gs_uvm_map {
	uint32_t space;                     /* index into spaces */
	uint8_t  gpu_uuid[UVM_UUID_BYTES];
	uint64_t first, last;               /* [first, last] of the VA space */
	uint32_t pin;                       /* ledger pin, or LEDGER_NO_PIN */
};

#define GS_UVM_MAPPERS 8u
struct gs_uvm_space {
	int      fd;                        /* our dup of the UVM file; -1: slot free */
	struct {
		pid_t tgid;
		int   pidfd;
	} mapper[GS_UVM_MAPPERS];           /* the processes that mapped through it */
	unsigned n_mappers;
	bool     registrant;                /* a channel registration was continued on it */
};

struct gs_uvm_maps {
	struct gs_uvm_space *spaces;
	uint32_t             n_spaces, cap_spaces;
	struct gs_uvm_map   *maps;
	uint32_t             n_maps, cap_maps;
	/* The driver's UVM_UNREGISTER_CHANNEL has no GPU (590 on). */
	bool                 unregister_short;
	/* Registrations continued whose caller may still be in the kernel,
	 * and those the worker makes off the session lock (made with the
	 * first one; NULL before). */
	struct gs_inflight  *registers;
	/* A ledger rebuilt by an agent restart: registrations made before it
	 * are in files we no longer hold, so nothing listed is ever
	 * unregistered (counted until the sandbox ends). */
	bool                 spaces_unknown;
	/* GPUSANDBOX_TEST_SETTLE_IN_FLIGHT in the supervisor's own
	 * environment (gs_session_init): what is listed is unregistered even
	 * while a registration is in flight, so that tests/adv uvm_channel
	 * stall's baseline shows what waiting for it prevents. Never for
	 * use. */
	bool                 test_settle_in_flight;
	/* GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT: no pin is taken while the
	 * driver maps (exec_uvm.c, pin_in_flight), so that tests/agent
	 * uvmkill-runc's baseline shows what it prevents. Never for use. */
	bool                 test_no_pin_in_flight;
	/* For GPUSANDBOX_PROFILE: registrations followed (continued, or
	 * made by us under --uvm-map as-user: n_registers_made of them),
	 * listed handles settled, and our unregisters by UVM's answer
	 * (NV_OK, none registered, anything else). */
	uint64_t             n_registers, n_registers_made, n_settled, n_unreg_ok, n_unreg_none, n_unreg_failed;
};

void gs_uvm_maps_init(struct gs_uvm_maps *m);
/* Unmaps or unregisters and drops every record (their pins too), closes
 * every dup. */
void gs_uvm_maps_fini(struct gs_uvm_maps *m, struct ledger *l);

/* The space whose UVM file task tid has at fd number wfd, when it is one
 * we hold (kcmp KCMP_FILE, by tid: a look the caller's ID_VALID must
 * confirm); -1 otherwise. The file is then known to be UVM's (it was
 * when we took it), with no look at it and no dup from the task, and a
 * dup of the space's own fd is the call's. */
int gs_uvm_space_held(const struct gs_uvm_maps *m, pid_t self, pid_t tid, int wfd);

/* The space of the UVM file behind fd (ours): a known one (kcmp), or a
 * new one holding a dup of it. -1 when the file cannot be told apart or
 * dup'ed (the caller then fails closed). */
int gs_uvm_space_of(struct gs_uvm_maps *m, struct ledger *l, int fd);
/* Process tgid mapped through space; takes pidfd (one of tgid's). -1 when
 * it cannot be remembered (the caller then fails closed). */
int gs_uvm_space_note_mapper(struct gs_uvm_maps *m, uint32_t space, pid_t tgid, int pidfd);
/* Is tid the leader of a live process that mapped through space? A live
 * process holds its leader's pid, so a live task with that tid is its
 * leader: no pidfd need be opened to know it (the caller checks the
 * notification after). */
bool gs_uvm_space_knows_leader(const struct gs_uvm_maps *m, uint32_t space, pid_t tid);
/* Lets go of a space that holds no record (closes our dup). */
void gs_uvm_space_tidy(struct gs_uvm_maps *m, uint32_t space);

/* What a mapping we made did to the records of space: [first, last]
 * leaves them on the GPU uuid (every GPU when uuid is NULL), a record
 * partly inside keeping its outside parts (a second pin for a second
 * part), as UVM splits a mapping the new one partly covers. Adds the
 * bytes released to released. -1 when a split could not be recorded:
 * the record then stays whole (charged longer, never less). */
int gs_uvm_maps_cut(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, uint64_t released[GS_MAX_GPUS]);
/* UVM_UNMAP_EXTERNAL of [first, last] on the GPU uuid, through fd (our
 * dup of the UVM file). True when nothing of ours is mapped there now:
 * unmapped, or gone before (UVM refuses a range that no longer lies in
 * one external range, or a GPU no longer registered, and both took their
 * mappings with them). Anything else (the ioctl failed: UVM's
 * power-management lock answers EAGAIN) leaves it mapped, as far as we
 * know. */
bool gs_uvm_unmap(int fd, const uint8_t *uuid, uint64_t first, uint64_t last);
/* Records a mapping; takes pin (released at once when it cannot be
 * recorded, with -1: the caller must then undo the mapping). */
int gs_uvm_maps_add(struct gs_uvm_maps *m, struct ledger *l, uint32_t space, const uint8_t *uuid,
                    uint64_t first, uint64_t last, uint32_t pin, uint64_t released[GS_MAX_GPUS]);
/* The mappings of memory whose last handle went, and the registrations
 * of channels whose (or whose group's) last handle went: unmapped or
 * unregistered through our dup, then their records and pins dropped (see
 * above). Does nothing unless the ledger saw such a handle go since the
 * last call. Returns how many records went. */
unsigned gs_uvm_maps_take_back_orphans(struct gs_uvm_maps *m, struct ledger *l,
                                       uint64_t released[GS_MAX_GPUS]);
/* The files every mapper of which has exited: what they map is unmapped,
 * and what they registered unregistered, through our dup, their records
 * and pins dropped and the dup closed. Returns how many files. (A
 * process that registers a channel is a mapper too.) */
unsigned gs_uvm_maps_reap(struct gs_uvm_maps *m, struct ledger *l, uint64_t released[GS_MAX_GPUS]);
/* Live records (for tests and metrics). */
uint32_t gs_uvm_maps_live(const struct gs_uvm_maps *m);

/* The channel handles the ledger lists, each unregistered from every
 * registrant space; its entry and pins go once all answered that none is
 * left, and not while a registration is in flight (uvm_maps.h, above).
 * The rest are kept for the next try. Returns how many went.
 * gs_uvm_maps_take_back_orphans does this first. */
unsigned gs_uvm_settle_unregisters(struct gs_uvm_maps *m, struct ledger *l);

/* UVM_UNREGISTER_CHANNEL of (h_client, h_channel) through fd (our dup of
 * the UVM file), in the form of the driver's branch (m), counted in m's
 * figures. True when no such registration is left: unregistered, or none
 * (UVM answers NV_ERR_INVALID_CHANNEL). Anything else leaves it
 * registered, as far as we know. */
bool gs_uvm_unregister_counted(struct gs_uvm_maps *m, int fd, uint32_t h_client, uint32_t h_channel);
/* A channel registration is about to be continued on space: the space
 * becomes a registrant and the ledger lists channel handles that go from
 * now on. -1 when there is no memory to track registrations (the caller
 * then refuses the call). */
int gs_uvm_space_note_registrant(struct gs_uvm_maps *m, struct ledger *l, uint32_t space);

#endif
