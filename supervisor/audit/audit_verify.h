/* SPDX-License-Identifier: MIT */
/*
 * audit_verify.h - `gpusandbox audit ...`: reading audit logs.
 */
#ifndef GPUSANDBOX_AUDIT_VERIFY_H
#define GPUSANDBOX_AUDIT_VERIFY_H

/* Exit statuses of `gpusandbox audit verify`. */
enum gs_audit_verify_exit {
	GS_AUDIT_VERIFIED = 0,   /* every chain complete, sealed and intact */
	GS_AUDIT_BROKEN   = 1,   /* a chain does not verify: see the messages */
	GS_AUDIT_USAGE    = 2,   /* bad usage or an unreadable file */
};

/* argv[0] is "audit"; argv[1] the action ("verify"). Returns the exit
 * status. */
int gs_audit_command(int argc, char **argv);

#endif
