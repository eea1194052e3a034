/* SPDX-License-Identifier: MIT */
/*
 * ledger_watch.h - the release-watch primitives ledger.c uses
 * (ledger_files.c). Private to the ledger.
 */
#ifndef GPUSANDBOX_LEDGER_WATCH_H
#define GPUSANDBOX_LEDGER_WATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "ledger_base.h"

/* An epoll set watching fd's open file, or -1 (no poll support: from then
 * on the ledger keeps charges until RM_FREE, the safe side). */
int  ledger_watch_file(struct ledger *l, int fd);
/* Is the file the watch (epfd, tfd) was made on still open? Fails closed
 * (true) when it cannot tell. */
bool ledger_watch_alive_at(pid_t self, int epfd, int tfd);
/* Is fd's open file the watched one? 1 yes, 0 no or gone, -1 cannot tell. */
int  ledger_watch_is_file_at(pid_t self, int epfd, int tfd, int fd);
/* The same for fd number wfd of task tid (kcmp reads its fd table; no dup
 * is taken). */
int  ledger_watch_is_task_file_at(pid_t self, int epfd, int tfd, pid_t tid, int wfd);

#endif
