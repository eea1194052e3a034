/* SPDX-License-Identifier: MIT */
/*
 * ledger_obj.h - the ledger's object and its lookups, private to the
 * ledger's files: ledger.c keeps the objects, ledger_sm.c answers what the
 * compute-share controller and the per-call checks ask of them. Nothing
 * outside the ledger includes this.
 */
#ifndef GPUSANDBOX_LEDGER_OBJ_H
#define GPUSANDBOX_LEDGER_OBJ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ledger_base.h"
#include "ledger_pins.h"

struct ledger_obj {
	uint32_t client, handle, parent;
	/* Handles are the workload's choice and 0 is a valid one: "no
	 * parent" cannot be a handle value (issue #17 item 12, a handle 0
	 * sent free_subtree round a cycle for ever). */
	bool     has_parent;
	uint32_t cls;
	int      gpu;
	uint32_t alloc;                     /* index or NONE */
	uint32_t first_child, next_sibling, prev_sibling;
	int      watch_epfd;               /* clients only; -1 otherwise */
	int      watch_tfd;                /* fd number the watch was added with */
	uint32_t watch_pos;                /* index in l->watched while watched */
	/* Hardware objects (channels, groups, video engines) are also on a
	 * list of their own, so that counting or listing them does not scan
	 * every object (issue #16: --sm at a million objects). */
	uint32_t hw_prev, hw_next;
	bool     on_hw_list;
	uint8_t  kind;
	bool     used;
	bool     counted;    /* a live channel or channel group we count */
	bool     implicit_group; /* channel: counts the group RM made for it */
	bool     scheduled;  /* channel group: last GPFIFO_SCHEDULE enabled */
	bool     sm_disabled; /* channel: disabled by the compute-share controller */
	bool     resumed;    /* client: rebuilt from a journal, no release watch yet */
	bool     adopted;    /* client: rebuilt, its watch handed back (ledger_adopt_watch) */
	uint64_t since_ns;   /* channel: created; group: first scheduled (ledger_now) */
	/* Clients: the workload task and fd number of the last call that
	 * reached the driver through this client's file. */
	pid_t    route_tid;
	int      route_wfd;
	/* Clients: the process that created it, credited with what the
	 * driver frees when its file closes. */
	struct ledger_owner owner;
};
/* The object (client, handle), or LEDGER_NONE. */
uint32_t ledger_obj_find(const struct ledger *l, uint32_t client, uint32_t handle);
/* The same, a dup resolved to the object whose allocation it shares. */
uint32_t ledger_obj_find_resolved(const struct ledger *l, uint32_t client, uint32_t handle);
/* The (client, handle) table's entry for the object idx: added (0, or -1
 * when the table cannot grow, nothing changed), or taken out. */
int  ledger_table_insert(struct ledger *l, uint32_t idx);
void ledger_table_remove(struct ledger *l, uint32_t client, uint32_t handle);
/* A client's release watch: still on a live file? Is fd that file? */
bool ledger_obj_watch_alive(const struct ledger *l, const struct ledger_obj *o);
int  ledger_obj_watch_is_file(const struct ledger *l, const struct ledger_obj *o, int fd);

#endif
