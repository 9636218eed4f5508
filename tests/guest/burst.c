// SPDX-License-Identifier: GPL-2.0
/*
 * burst COUNT UID [pid]: COUNT requests for CLONE_NEWUSER|CLONE_NEWPID, or
 * with "pid" for CLONE_NEWPID alone, which a user without CAP_SYS_ADMIN
 * is refused (EPERM) with or without the series (one a
 * vfork()ed child: no copy of the address space, so that the flood
 * outruns the log's budget of 100 lines a second even on the SMP debug
 * kernel, where a fork() a request did not) as UID; prints how many the kernel
 * accepted and how many it refused. The report suite uses it to flood
 * the kernel log's rate limit from one user and to see that another's
 * lines still get through and that the trace holds every request.
 */
#include <err.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guestlib.h"

static unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID;

/* One request in a vfork()ed child: 0 or the errno it got. */
static int __attribute__((noinline)) request(void)
{
	/* The child only makes one system call and _exit()s. */
	pid_t pid = vfork();

	if (pid < 0)
		err(1, "vfork");
	if (pid == 0)
		_exit(unshare((int)flags) < 0 ? errno : 0);
	return wait_status(pid);
}

int main(int argc, char **argv)
{
	unsigned long count, i, accepted = 0, refused = 0, eperm = 0;
	uid_t uid;
	int e;

	if (argc == 4 && !strcmp(argv[3], "pid")) {
		flags = CLONE_NEWPID;
	} else if (argc != 3) {
		fprintf(stderr, "usage: burst COUNT UID [pid]\n");
		return 2;
	}
	count = strtoul(argv[1], NULL, 0);
	uid = (uid_t)strtoul(argv[2], NULL, 0);
	if (uid)
		become_user(uid);
	for (i = 0; i < count; i++) {
		e = request();
		if (e == 0)
			accepted++;
		else
			refused++;
		eperm += e == EPERM;
	}
	printf("%lu accepted, %lu refused", accepted, refused);
	if (flags == CLONE_NEWPID)
		printf(", %lu with EPERM", eperm);
	printf("\n");
	return 0;
}
