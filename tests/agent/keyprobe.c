/* SPDX-License-Identifier: MIT */
/*
 * keyprobe - a system call every runtime's default seccomp profile refuses
 * (add_key: the kernel's keyrings are not namespaced, so a container could
 * reach the host's), made once from a container. Prints
 *   add_key=ok            the kernel ran it (a key was added)
 *   add_key=errno N       refused or failed with errno N
 * tests/agent/run.sh judges it: a container with the profile of
 * `gpusandbox profile` (no --base: the runtimes' default underneath) must
 * see EPERM (the default's refusal) or ENOSYS (podman's), never ok.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_PAYLOAD "gpusandbox"

int main(void)
{
	long r = syscall(SYS_add_key, "user", "gpusandbox-keyprobe", KEY_PAYLOAD, sizeof(KEY_PAYLOAD) - 1,
	                 KEY_SPEC_PROCESS_KEYRING);

	if (r >= 0)
		printf("add_key=ok\n");
	else
		printf("add_key=errno %d\n", errno);
	return 0;
}
