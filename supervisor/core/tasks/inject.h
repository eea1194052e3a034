/* SPDX-License-Identifier: MIT */
/*
 * inject.h - a trapped task made to perform one ioctl from a private page
 * of its own (docs/security/client-allocation.md, "A second client on a
 * control file").
 *
 * A second client on a control file must be made by the workload (the
 * client carries the process id of its maker), and from a struct that no
 * writer can change between our look and the kernel's copy. The task is
 * stopped in ptrace, its trapped ioctl answered -ERESTARTNOINTR so that it
 * stops before the kernel restarts it, and there it is made to run: an
 * anonymous private mmap of one page, the ioctl on its same fd number with
 * the page (written by us, with our pointers), and a munmap. Its registers
 * are then given back with the original ioctl's return.
 *
 * Every function here runs on the thread that traces the task (ptrace
 * requests must come from the tracer). x86-64 only: elsewhere
 * gs_inject_supported is false and the callers keep the refusal.
 */
#ifndef GPUSANDBOX_INJECT_H
#define GPUSANDBOX_INJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The page's bytes, as we write them and read them back. */
#define GS_INJECT_PAGE 4096u
/* Pointer fields of the image set to the page's address + an offset. */
#define GS_INJECT_MAX_PTRS 4u
/* Signals that came during one injection, given back at its end. */
#define GS_INJECT_MAX_SIGNALS 8u

struct gs_inject_plan {
	int           fd;                         /* the caller's fd number */
	unsigned long cmd;                        /* the ioctl's request */
	uint64_t      argp;                       /* the trapped call's pointer (checked at the stop) */
	uint8_t       image[GS_INJECT_PAGE];      /* the struct at 0, what it points to after */
	size_t        len;                        /* bytes of image used */
	uint32_t      ptr_at[GS_INJECT_MAX_PTRS]; /* a u64 field of image ... */
	uint32_t      ptr_to[GS_INJECT_MAX_PTRS]; /* ... set to page + this offset */
	unsigned      nptr;
};

/* Injections in flight in one sandbox: their ioctl is trapped by the
 * sandbox's own filter, and the worker that receives it continues it
 * without the session lock (the worker that began the injection may hold
 * it). Told apart by the tid, which is stopped in our ptrace and can make
 * no call but ours, and by the page's address, which the kernel chose. */
#define GS_INJECT_MARKS 16u
struct gs_inject_marks {
	pthread_mutex_t m;
	/* Marks set, changed under m: a receiving worker that reads 0 takes
	 * no lock (every notification passes through the match). A mark is
	 * set before the task is let run into its ioctl, and the notification
	 * reaches a worker only after the kernel queued it (its locks and the
	 * tracee's wake-up order the store before the worker's RECV), so an
	 * injection of ours is never read as 0. */
	atomic_uint     live;
	struct {
		pid_t         tid; /* 0: free */
		int           fd;
		unsigned long cmd;
		uint64_t      page;
	} e[GS_INJECT_MARKS];
};

void gs_inject_marks_init(struct gs_inject_marks *k);
void gs_inject_marks_fini(struct gs_inject_marks *k);
/* Is this trapped call (tid, syscall number, arch and args as the
 * notification has them) an injection of ours in flight? */
bool gs_inject_marks_match(struct gs_inject_marks *k, pid_t tid, int nr, uint32_t arch,
                           const uint64_t args[6]);

enum gs_inject_outcome {
	GS_INJECT_DONE,      /* the ioctl ran: out->ioctl_ret, image read back, page unmapped */
	GS_INJECT_UNTOUCHED, /* not the stop expected, nothing changed: let go as it is,
	                      * the kernel restarts the ioctl and it is judged afresh */
	GS_INJECT_FAILED,    /* failed, nothing left mapped (out->ioctl_ran: the ioctl may
	                      * have made its object): give the registers back
	                      * (gs_inject_finish) and answer a refusal */
	GS_INJECT_LOST,      /* the task is gone, or in a state we cannot restore: kill it */
};

struct gs_inject_out {
	long        ioctl_ret;                   /* the injected ioctl's return (-errno) */
	bool        ioctl_ran;                   /* it was entered: its effect may exist */
	int         sigs[GS_INJECT_MAX_SIGNALS]; /* signals that came, to be given back */
	unsigned    nsig;
	/* GS_INJECT_UNTOUCHED: the stop shows the ioctl ended by our
	 * interrupt, not by the answer (-ERESTARTSYS): the task's seccomp
	 * wait was interruptible. */
	bool        wait_interrupted;
	const char *why;
};

/* Registers as they were at the restart stop (opaque). */
struct gs_inject_regs {
	uint64_t w[32];
};

/* Is injection built for this architecture? */
bool gs_inject_supported(void);

/* tid is at its first stop after its trapped ioctl was answered
 * -ERESTARTNOINTR with an interrupt pending (stop_status: waitid's
 * si_status of that stop). Checks the stop is that one (the ioctl's
 * number and fd, argp, the restart code), then maps, writes, runs the
 * ioctl (marked in k while it runs), reads the image back into plan,
 * unmaps. *saved: the registers to give back. The task is left stopped. */
enum gs_inject_outcome gs_inject_ioctl(pid_t tid, int stop_status, struct gs_inject_plan *plan,
                                       struct gs_inject_marks *k, struct gs_inject_regs *saved,
                                       struct gs_inject_out *out);

/* Gives the task its registers back, its ioctl returning ret (0 or
 * -errno), and re-sends the signals that came meanwhile (out). false
 * when they cannot be set: the task is then killed (fail closed). */
bool gs_inject_finish(pid_t tid, const struct gs_inject_regs *saved, long ret,
                      const struct gs_inject_out *out);

#endif
