// SPDX-License-Identifier: GPL-2.0
/*
 * Two processes share a native fence through libnfence, as a runtime would:
 * one creates it and hands its NT handle (an fd) to the other over a unix
 * socket; each signals and waits for the other. A forked child that is
 * killed leaves the fences of its own devices AlwaysSignaled for the
 * parent waiting on them.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#define WAIT_NS	(20ull * 1000 * 1000 * 1000)

struct side {
	D3DKMT_HANDLE adapter, device;
};

static NTSTATUS side_open(struct side *s)
{
	D3DKMT_ADAPTERINFO info[8];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 8, .pAdapters = info };
	D3DKMT_CREATEDEVICE cd = {};
	NTSTATUS st;
	UINT i;

	st = D3DKMTEnumAdapters2(&e);
	if (!NT_SUCCESS(st))
		return st;
	if (!e.NumAdapters)
		return STATUS_NOT_FOUND;
	s->adapter = info[0].hAdapter;
	for (i = 1; i < e.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER c = { .hAdapter = info[i].hAdapter };

		D3DKMTCloseAdapter(&c);
	}
	cd.hAdapter = s->adapter;
	st = D3DKMTCreateDevice(&cd);
	s->device = cd.hDevice;
	return st;
}

static void side_close(struct side *s)
{
	D3DKMT_DESTROYDEVICE dd = { .hDevice = s->device };
	D3DKMT_CLOSEADAPTER ca = { .hAdapter = s->adapter };

	D3DKMTDestroyDevice(&dd);
	D3DKMTCloseAdapter(&ca);
}

static NTSTATUS fence_signal(struct side *s, D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU sig = {
		.hDevice = s->device, .ObjectCount = 1,
		.ObjectHandleArray = &h, .FenceValueArray = &v,
	};

	return D3DKMTSignalSynchronizationObjectFromCpu(&sig);
}

static NTSTATUS fence_wait_ns(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v,
			      UINT64 timeout_ns)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev, .ObjectCount = 1,
		.ObjectHandleArray = &h, .FenceValueArray = &v,
	};

	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ns,
								 NULL);
}

static NTSTATUS fence_wait(struct side *s, D3DKMT_HANDLE h, UINT64 v)
{
	return fence_wait_ns(s->device, h, v, WAIT_NS);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The child: open the fence from the fd it receives, check the value it
 * sees through its own mapping, wait for the parent's signal, signal back.
 * Exit codes name the step that failed.
 */
static int child(int sock)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE open = {};
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = {};
	struct side s;
	char go;
	int fd;

	if (!NT_SUCCESS(side_open(&s)))
		return 10;
	fd = recv_fd(sock);
	if (fd < 0)
		return 11;
	open.hNtHandle = (HANDLE)(intptr_t)fd;
	open.hDevice = s.device;
	if (!NT_SUCCESS(D3DKMTOpenNativeFenceFromNtHandle(&open)))
		return 12;
	close(fd);
	if (!open.NativeFenceMapping.CurrentValueCpuVa ||
	    *(volatile UINT64 *)open.NativeFenceMapping.CurrentValueCpuVa != 7)
		return 13;
	/* Tell the parent we are about to wait. */
	if (write(sock, "w", 1) != 1)
		return 14;
	if (fence_wait(&s, open.hSyncObject, 8) != STATUS_SUCCESS)
		return 15;
	if (fence_signal(&s, open.hSyncObject, 9) != STATUS_SUCCESS)
		return 16;
	if (read(sock, &go, 1) != 1)
		return 17;
	d.hSyncObject = open.hSyncObject;
	if (!NT_SUCCESS(D3DKMTDestroySynchronizationObject(&d)))
		return 18;
	side_close(&s);
	return 0;
}

FIXTURE(share) {
	struct side s;
	D3DKMT_HANDLE fence;
	volatile UINT64 *cpu_value;
	int sock[2];
	pid_t child;
};

FIXTURE_SETUP(share)
{
	D3DKMT_CREATENATIVEFENCE cf = {};

	self->child = -1;
	if (side_open(&self->s) == STATUS_NOT_FOUND)
		SKIP(return, "no nfence adapter");
	cf.hDevice = self->s.device;
	cf.Info.InitialFenceValue = 7;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	cf.Info.Flags.Shared = 1;
	cf.Info.Flags.NtSecuritySharing = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateNativeFence(&cf));
	self->fence = cf.hSyncObject;
	self->cpu_value = cf.Info.NativeFenceMapping.CurrentValueCpuVa;
	ASSERT_NE(NULL, self->cpu_value);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				self->sock));
}

FIXTURE_TEARDOWN(share)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->s.device)
		side_close(&self->s);
}

static void share_handle(struct __test_metadata *_metadata,
			 FIXTURE_DATA(share) *self, int *nt)
{
	D3DKMT_HANDLE h = self->fence;
	HANDLE handle = NULL;

	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &h, NULL, 0, &handle));
	*nt = (int)(intptr_t)handle;
	ASSERT_GE(*nt, 0);
	/* NT handles are close-on-exec. */
	ASSERT_TRUE(fcntl(*nt, F_GETFD) & FD_CLOEXEC);
}

/* Create, share over a unix socket, signal in one, wait in the other. */
TEST_F(share, signal_one_wait_other)
{
	int nt, status;
	char c;

	share_handle(_metadata, self, &nt);
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child)
		_exit(child(self->sock[1]));

	ASSERT_EQ(0, send_fd(self->sock[0], nt));
	close(nt);
	/* The child waits for 8; release it, then wait for its 9. */
	ASSERT_EQ(1, read(self->sock[0], &c, 1));
	ASSERT_EQ(STATUS_SUCCESS, fence_signal(&self->s, self->fence, 8));
	ASSERT_EQ(STATUS_SUCCESS, fence_wait(&self->s, self->fence, 9));
	EXPECT_EQ(9ull, *self->cpu_value);
	ASSERT_EQ(1, write(self->sock[0], "x", 1));

	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The NT handle keeps the fence alive after the creator destroys it. */
TEST_F(share, nt_handle_outlives_creator)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = self->fence };
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE open = {};
	int nt, status;
	char c;

	share_handle(_metadata, self, &nt);
	ASSERT_EQ(STATUS_SUCCESS, fence_signal(&self->s, self->fence, 7));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTDestroySynchronizationObject(&d));

	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child)
		_exit(child(self->sock[1]));
	ASSERT_EQ(0, send_fd(self->sock[0], nt));

	/* Re-open in this process too, to signal the child's 8. */
	open.hNtHandle = (HANDLE)(intptr_t)nt;
	open.hDevice = self->s.device;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenNativeFenceFromNtHandle(&open));
	close(nt);
	ASSERT_EQ(1, read(self->sock[0], &c, 1));
	ASSERT_EQ(STATUS_SUCCESS, fence_signal(&self->s, open.hSyncObject, 8));
	ASSERT_EQ(STATUS_SUCCESS, fence_wait(&self->s, open.hSyncObject, 9));
	ASSERT_EQ(1, write(self->sock[0], "x", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A waiter killed while blocked leaves the fence usable by the other. */
TEST_F(share, waiter_killed)
{
	D3DKMT_HANDLE h = self->fence;
	int nt, status;
	char c;

	share_handle(_metadata, self, &nt);
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child)
		_exit(child(self->sock[1]));
	ASSERT_EQ(0, send_fd(self->sock[0], nt));
	close(nt);
	ASSERT_EQ(1, read(self->sock[0], &c, 1));
	/* Give it time to block, then kill it mid-wait. */
	usleep(100 * 1000);
	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	ASSERT_TRUE(WIFSIGNALED(status));

	/* The survivor still signals and waits. */
	ASSERT_EQ(STATUS_SUCCESS, fence_signal(&self->s, h, 100));
	ASSERT_EQ(STATUS_SUCCESS, fence_wait(&self->s, h, 100));
	EXPECT_EQ(100ull, *self->cpu_value);
}

/*
 * A killed child's devices go into error: their fences become
 * AlwaysSignaled for every holder. Here on two adapters (the VM's main
 * load has two): the child makes a device and a shared fence on each and
 * hands the NT handles over; the parent opens both on devices of its own,
 * waits on one blocking and on the other through an eventfd, and kills the
 * child from a timer signal while it waits. Both waits return: the fences
 * were the child's, on render node files of its own.
 *
 * The child first tries the adapter handle it inherited, as a program
 * written for a single process might; a forked child gets no D3DKMT
 * handle (WSL's rule), so that is STATUS_INVALID_PARAMETER, and the child
 * enumerates the adapters again, as WSL's programs do. Were inherited
 * handles usable, the devices and fences would be on the parent's files,
 * outlive the child, and the waits would time out.
 */
#define KILL_ADAPTERS	2
#define KILL_WAIT_NS	(10ull * 1000 * 1000 * 1000)

static pid_t kill_victim;

static void kill_victim_handler(int sig)
{
	(void)sig;
	kill(kill_victim, SIGKILL);
}

/* The child: exits (with the step that failed) only if something fails. */
static int killed_child(int sock, const D3DKMT_ADAPTERINFO *inherited)
{
	D3DKMT_ADAPTERINFO mine[8];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 8, .pAdapters = mine };
	D3DKMT_CREATEDEVICE cd = { .hAdapter = inherited[0].hAdapter };
	const D3DKMT_ADAPTERINFO *use = inherited;
	NTSTATUS st;
	UINT i;

	st = D3DKMTCreateDevice(&cd);
	if (write(sock, &st, sizeof(st)) != sizeof(st))
		return 20;
	if (st != STATUS_SUCCESS) {
		if (D3DKMTEnumAdapters2(&e) != STATUS_SUCCESS ||
		    e.NumAdapters < KILL_ADAPTERS)
			return 21;
		use = mine;
	}
	for (i = 0; i < KILL_ADAPTERS; i++) {
		D3DKMT_CREATENATIVEFENCE cf = {};
		HANDLE nt;

		memset(&cd, 0, sizeof(cd));
		cd.hAdapter = use[i].hAdapter;
		if (D3DKMTCreateDevice(&cd) != STATUS_SUCCESS)
			return 22;
		cf.hDevice = cd.hDevice;
		cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
		cf.Info.Flags.Shared = 1;
		cf.Info.Flags.NtSecuritySharing = 1;
		if (D3DKMTCreateNativeFence(&cf) != STATUS_SUCCESS ||
		    D3DKMTShareObjects(1, &cf.hSyncObject, NULL, 0, &nt) !=
		    STATUS_SUCCESS ||
		    send_fd(sock, (int)(intptr_t)nt))
			return 23;
	}
	/* Killed here. */
	for (;;)
		pause();
}

TEST(killed_child_fences_always_signaled)
{
	D3DKMT_ADAPTERINFO info[8];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 8, .pAdapters = info };
	D3DKMT_HANDLE dev[KILL_ADAPTERS] = {}, fence[KILL_ADAPTERS];
	volatile UINT64 *cpu[KILL_ADAPTERS];
	struct sigaction sa = { .sa_handler = kill_victim_handler };
	struct itimerval it = { .it_value = { .tv_usec = 300 * 1000 } };
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {};
	D3DKMT_GETDEVICESTATE ds = {};
	UINT64 far = 1000;
	struct pollfd pfd;
	struct timespec t0, t1;
	NTSTATUS st;
	int sock[2], status, efd, fd;
	pid_t pid;
	UINT i;

	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	if (e.NumAdapters < KILL_ADAPTERS)
		SKIP(return, "fewer than %d nfence adapters", KILL_ADAPTERS);
	for (i = 0; i < KILL_ADAPTERS; i++) {
		D3DKMT_CREATEDEVICE cd = { .hAdapter = info[i].hAdapter };

		ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateDevice(&cd));
		dev[i] = cd.hDevice;
	}
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(killed_child(sock[1], info));
	kill_victim = pid;

	/* Inherited adapter handles name nothing in the child. */
	ASSERT_EQ((ssize_t)sizeof(st), read(sock[0], &st, sizeof(st)));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, st);
	for (i = 0; i < KILL_ADAPTERS; i++) {
		D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o = {};

		fd = recv_fd(sock[0]);
		ASSERT_LE(0, fd);
		o.hNtHandle = (HANDLE)(intptr_t)fd;
		o.hDevice = dev[i];
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenNativeFenceFromNtHandle(&o));
		close(fd);
		fence[i] = o.hSyncObject;
		cpu[i] = o.NativeFenceMapping.CurrentValueCpuVa;
		ASSERT_NE(NULL, cpu[i]);
		EXPECT_EQ(0ull, *cpu[i]);
	}

	/* Adapter 1: an asynchronous wait, quiet while the child lives. */
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	w.hDevice = dev[1];
	w.ObjectCount = 1;
	w.ObjectHandleArray = &fence[1];
	w.FenceValueArray = &far;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	pfd.fd = efd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 100));

	/* Adapter 0: a blocking wait, during which the timer kills the child. */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(STATUS_SUCCESS, fence_wait_ns(dev[0], fence[0], far,
						KILL_WAIT_NS));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(KILL_WAIT_NS / 1000000000, (UINT64)(t1.tv_sec - t0.tv_sec));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	/* Released with the blocking wait: no need to wait long. */
	EXPECT_EQ(1, poll(&pfd, 1, 5000));

	/* AlwaysSignaled: at least 0xFFFFFFFF, and every wait passes. */
	for (i = 0; i < KILL_ADAPTERS; i++) {
		EXPECT_LE(0xffffffffull, *cpu[i]) TH_LOG("adapter %u", i);
		EXPECT_EQ(STATUS_SUCCESS,
			  fence_wait_ns(dev[i], fence[i], 0xffffffffull, 0));
		/* The parent's own device is not in error. */
		ds.hDevice = dev[i];
		ds.StateType = D3DKMT_DEVICESTATE_EXECUTION;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTGetDeviceState(&ds));
		EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ACTIVE,
			  (UINT)ds.ExecutionState);
	}

	close(efd);
	close(sock[0]);
	close(sock[1]);
	for (i = 0; i < KILL_ADAPTERS; i++) {
		D3DKMT_DESTROYDEVICE dd = { .hDevice = dev[i] };

		EXPECT_EQ(STATUS_SUCCESS, D3DKMTDestroyDevice(&dd));
	}
	for (i = 0; i < e.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER c = { .hAdapter = info[i].hAdapter };

		D3DKMTCloseAdapter(&c);
	}
}

TEST_HARNESS_MAIN
