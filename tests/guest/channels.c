// SPDX-License-Identifier: GPL-2.0
/*
 * channels: what crosses a PID namespace boundary, channel by channel, on
 * the kernel under test, in the state the policy exists to prevent: a
 * process in a new PID namespace that shares the mount, IPC and network
 * namespaces with the outside (kernel.pidns_coupling=0, clone3 with
 * CLONE_NEWPID alone).
 *
 * The 2007 argument named SysV IPC and SCM_CREDENTIALS. Kernels since then
 * keep those PIDs as struct pid and translate them for the reader:
 * SCM_CREDENTIALS when received, shm_cpid, msg_lspid and the semaphores'
 * pids at IPC_STAT and GETPID, and F_GETLK's l_pid; a process the reader
 * cannot see reads as 0. What crosses as a raw, foreign number is what is
 * stored as a number: a PID in a file (lock files) or in shared memory
 * (futex owner TIDs). Each case checks one direction of one channel and
 * says which of the three ("translated", "0", "raw") it is. Prints TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestlib.h"
#include "tap.h"

#define LOCKFILE	"/tmp/channels.lock"
#define PIDFILE		"/tmp/channels.pid"
#define KEY_BASE	0x70696e00	/* "pin\0" */

/* What one side saw of the other's process. */
struct seen {
	long scm_pid;		/* SCM_CREDENTIALS pid received */
	long shm_cpid;		/* shmctl(IPC_STAT).shm_cpid */
	long msg_lspid;		/* msgctl(IPC_STAT).msg_lspid */
	long sem_pid;		/* semctl(GETPID) */
	long lock_pid;		/* fcntl(F_GETLK).l_pid */
	long file_pid;		/* the number in PIDFILE */
	long shared_tid;	/* the number in shared memory (a futex word) */
	int file_pid_alive;	/* kill(file_pid, 0) == 0 */
	int err;		/* a step failed: which (line number) */
};

static int sock[2];
static long *shared_word;	/* MAP_SHARED: a futex word's owner TID */

static void cleanup(int set);

/* Make the IPC objects of @set and leave a trace of the caller in each. */
static int act(int set)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };
	struct { long type; char text[4]; } msg = { 1, "pid" };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char buf[32], cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { .iov_base = buf, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	struct ucred uc = { getpid(), getuid(), getgid() };
	int id, fd, len;

	/* Fresh objects: a leftover's pids would be another run's. */
	cleanup(set);
	id = shmget(KEY_BASE + set, 4096, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0)
		return __LINE__;
	id = msgget(KEY_BASE + set, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0 || msgsnd(id, &msg, sizeof(msg.text), 0) < 0)
		return __LINE__;
	id = semget(KEY_BASE + set, 1, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0 || semop(id, &op, 1) < 0)
		return __LINE__;
	fd = open(LOCKFILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
		return __LINE__;
	/* A lock file, as daemons write theirs: the writer's own PID. */
	fd = open(PIDFILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		return __LINE__;
	close(fd);
	/* A futex word, as glibc's mutexes store it: the owner's TID. */
	*shared_word = (long)syscall(SYS_gettid);
	/* SCM_CREDENTIALS, with the sender's own PID, as its namespace has it. */
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(uc));
	memcpy(CMSG_DATA(cm), &uc, sizeof(uc));
	buf[0] = 'c';
	if (sendmsg(sock[set], &mh, 0) != 1)
		return __LINE__;
	return 0;
}

/* Read what the other side left, from the objects of @set. */
static void observe(int set, struct seen *s)
{
	char buf[32], cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { .iov_base = buf, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct shmid_ds shm;
	struct msqid_ds mq;
	struct cmsghdr *cm;
	struct ucred uc;
	int id, fd, one = 1;
	ssize_t n;
	FILE *f;

	memset(s, 0, sizeof(*s));
	id = shmget(KEY_BASE + set, 0, 0);
	if (id < 0 || shmctl(id, IPC_STAT, &shm) < 0) {
		s->err = __LINE__;
		return;
	}
	s->shm_cpid = shm.shm_cpid;
	id = msgget(KEY_BASE + set, 0);
	if (id < 0 || msgctl(id, IPC_STAT, &mq) < 0) {
		s->err = __LINE__;
		return;
	}
	s->msg_lspid = mq.msg_lspid;
	id = semget(KEY_BASE + set, 1, 0);
	if (id < 0) {
		s->err = __LINE__;
		return;
	}
	s->sem_pid = semctl(id, 0, GETPID);
	fd = open(LOCKFILE, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type != F_WRLCK) {
		s->err = __LINE__;
		return;
	}
	s->lock_pid = fl.l_pid;
	close(fd);
	f = fopen(PIDFILE, "re");
	if (!f || fscanf(f, "%ld", &s->file_pid) != 1) {
		s->err = __LINE__;
		return;
	}
	fclose(f);
	s->file_pid_alive = kill((pid_t)s->file_pid, 0) == 0;
	s->shared_tid = *shared_word;
	if (setsockopt(sock[!set], SOL_SOCKET, SO_PASSCRED, &one,
		       sizeof(one)) < 0) {
		s->err = __LINE__;
		return;
	}
	n = recvmsg(sock[!set], &mh, 0);
	cm = CMSG_FIRSTHDR(&mh);
	if (n != 1 || !cm || cm->cmsg_type != SCM_CREDENTIALS) {
		s->err = __LINE__;
		return;
	}
	memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
	s->scm_pid = uc.pid;
}

static void cleanup(int set)
{
	int id;

	id = shmget(KEY_BASE + set, 0, 0);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	id = msgget(KEY_BASE + set, 0);
	if (id >= 0)
		msgctl(id, IPC_RMID, NULL);
	id = semget(KEY_BASE + set, 1, 0);
	if (id >= 0)
		semctl(id, 0, IPC_RMID);
	unlink(LOCKFILE);
	unlink(PIDFILE);
}

static const char *kind(long got, long translated)
{
	if (got == translated)
		return "translated";
	return got ? "raw" : "0";
}

/* One TAP case: what @who saw through @channel, against @want. */
static void report(const char *who, const char *channel, long got,
		   long translated, const char *want)
{
	char writer[64] = "not visible";

	if (translated > 0)
		snprintf(writer, sizeof(writer), "%ld", translated);
	tap_case(!strcmp(kind(got, translated), want),
		 "%s: %s: %s (read %ld; the writer is %s to the reader)",
		 who, channel, want, got, writer);
}

/* A child in a new PID namespace, sharing everything else (mode 0). */
static pid_t newpid_child(void)
{
	pid_t pid;

	fflush(stdout);
	pid = raw_clone(true, CLONE_NEWPID);
	if (pid < 0) {
		printf("Bail out! clone3(CLONE_NEWPID) in mode 0: %s\n",
		       strerror(errno));
		exit(1);
	}
	return pid;
}

/* The container's process writes, the outside reads. */
static void container_to_outside(void)
{
	int ready[2], release[2];
	struct seen s;
	pid_t pid;
	char byte;

	if (pipe(ready) < 0 || pipe(release) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sock) < 0) {
		printf("Bail out! pipe/socketpair: %s\n", strerror(errno));
		exit(1);
	}
	pid = newpid_child();
	if (pid == 0) {
		int e;

		close(release[1]);
		e = act(0);

		byte = (char)(e ? 'x' : 'r');
		if (write(ready[1], &byte, 1) != 1)
			_exit(1);
		if (read(release[0], &byte, 1) < 0)
			_exit(1);
		_exit(e ? 1 : 0);
	}
	close(release[0]);
	if (read(ready[0], &byte, 1) != 1 || byte != 'r') {
		printf("Bail out! the container's writer failed\n");
		exit(1);
	}
	observe(0, &s);
	if (s.err) {
		printf("Bail out! the outside's reader failed at line %d: %s\n",
		       s.err, strerror(errno));
		exit(1);
	}
	report("outside reads container", "SCM_CREDENTIALS pid", s.scm_pid, pid,
	       "translated");
	report("outside reads container", "shm_cpid", s.shm_cpid, pid,
	       "translated");
	report("outside reads container", "msg_lspid", s.msg_lspid, pid,
	       "translated");
	report("outside reads container", "semctl(GETPID)", s.sem_pid, pid,
	       "translated");
	report("outside reads container", "F_GETLK l_pid", s.lock_pid, pid,
	       "translated");
	report("outside reads container", "PID in a lock file", s.file_pid, pid,
	       "raw");
	tap_case(s.file_pid == 1 && s.file_pid_alive,
		 "outside reads container: the lock file's %ld names a live process here (the guest's init), not the writer",
		 s.file_pid);
	report("outside reads container", "TID in shared memory (a futex word)",
	       s.shared_tid, pid, "raw");
	close(release[1]);
	wait_status(pid);
	cleanup(0);
	close(sock[0]);
	close(sock[1]);
}

/* The outside writes, the container's process reads. */
static void outside_to_container(void)
{
	struct seen *s = shared_alloc(sizeof(*s));
	pid_t pid;
	int e;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock) < 0) {
		printf("Bail out! socketpair: %s\n", strerror(errno));
		exit(1);
	}
	e = act(1);
	if (e) {
		printf("Bail out! the outside's writer failed at line %d: %s\n",
		       e, strerror(errno));
		exit(1);
	}
	pid = newpid_child();
	if (pid == 0) {
		observe(1, s);
		_exit(0);
	}
	wait_status(pid);
	if (s->err) {
		printf("Bail out! the container's reader failed at line %d\n",
		       s->err);
		exit(1);
	}
	/* The outside is invisible from inside: nothing translates to it. */
	report("container reads outside", "SCM_CREDENTIALS pid", s->scm_pid, -1,
	       "0");
	report("container reads outside", "shm_cpid", s->shm_cpid, -1, "0");
	report("container reads outside", "msg_lspid", s->msg_lspid, -1, "0");
	report("container reads outside", "semctl(GETPID)", s->sem_pid, -1, "0");
	report("container reads outside", "F_GETLK l_pid", s->lock_pid, -1, "0");
	report("container reads outside", "PID in a lock file", s->file_pid, -1,
	       "raw");
	tap_case(s->file_pid == getpid() && !s->file_pid_alive,
		 "container reads outside: the lock file's %ld names no process there",
		 s->file_pid);
	report("container reads outside", "TID in shared memory (a futex word)",
	       s->shared_tid, -1, "raw");
	cleanup(1);
}

int main(void)
{
	printf("TAP version 13\n");
	set_mode(PIDNS_OFF);
	shared_word = shared_alloc(sizeof(*shared_word));
	container_to_outside();
	outside_to_container();
	set_mode(PIDNS_ENFORCE);
	tap_plan_end();
	return tap_failed ? 1 : 0;
}
