/* SPDX-License-Identifier: MIT */
/*
 * detached.c - a thread nobody joins (detached.h).
 */
#include <pthread.h>
#include <signal.h>

#include "detached.h"

int gs_spawn_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc = pthread_attr_init(&attr);

	if (rc)
		return rc;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc;
}
