// SPDX-License-Identifier: GPL-2.0
/*
 * libnfence on the nfence driver: every function libnfence exports
 * (libnfence/libnfence.map), called through its public header
 * <nfence/d3dkmthk.h> as a runtime would, with what each returns checked:
 * handles, exact NTSTATUS codes, query answers against the module's
 * parameters, fence values read through their CPU mappings after CPU and
 * GPU signals, allocations written by the engines and read through
 * D3DKMTLock2(), waits that time out and waits that are satisfied.
 *
 * The expected configuration is read from /sys/module/nfence/parameters;
 * without it (the host's fake driver, libnfence/tests/mock_drm.c) the
 * module's defaults with two adapters are assumed, as "make check" loads
 * the module. Tests the fake driver cannot play (a submission that blocks,
 * WORK that takes time) skip when NFENCE_MOCK_DIR says it is in use.
 *
 * Nothing here blocks without a bound: CPU waits go through
 * NFenceWaitForSynchronizationObjectFromCpuTimeout(), or run in a thread
 * joined with a timeout, as does a submission expected to block; eventfds
 * are polled with a timeout.
 *
 * Copyright (C) 2026 The nfence authors
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <xf86drm.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

/*
 * As in nfence_process_test.c: kselftest_harness.h's macros expand into
 * code with unused parameters, and gcc reports -Wclobbered on the TEST_F()
 * wrapper's "child" around its setjmp() or not, depending on inlining.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wclobbered"
#endif
#include "kselftest_harness.h"

#define MS		1000000ull
#define WAIT_NS		(10000 * MS)	/* what must happen does within this */
#define QUIET_NS	(150 * MS)	/* what must not happen, for this long */
#define PAGE		4096u
#define MiB		(1ull << 20)
#define MAX_ADAPTERS	8
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define GPU_HZ		100000000ull	/* the adapters' timestamp frequency */
#define ALWAYS_SIGNALED	0xffffffffull
#define POISON		0xdeadbeefu

/* ---- the module's configuration ------------------------------------ */

struct nf_config {
	unsigned int num_adapters, num_engines;
	unsigned int vram_mb, vram_visible_mb, sysmem_mb;
	unsigned int client_vram_mb, client_sysmem_mb;	/* 0: no quota */
	bool native_fences, optimized_default_fence, user_mode_submission;
	bool no_64bit_atomics;
	unsigned int doorbell_model, num_doorbells;
	bool from_sysfs;	/* read from /sys/module/nfence/parameters */
};

static bool param(const char *name, char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/nfence/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

static bool param_uint(const char *name, unsigned int *v)
{
	char buf[32];

	if (!param(name, buf, sizeof(buf)))
		return false;
	*v = (unsigned int)strtoul(buf, NULL, 0);
	return true;
}

static void param_bool(const char *name, bool *v)
{
	char buf[8];

	if (param(name, buf, sizeof(buf)))
		*v = buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
}

/*
 * The module's defaults, with num_adapters=2, unless sysfs says otherwise.
 * Per-adapter parameters read back as "v0,v1,...": this reads adapter 0's
 * (strtoul and the first letter stop before the comma). The kselftests run
 * where every adapter is built alike.
 */
static struct nf_config read_config(void)
{
	struct nf_config c = {
		.num_adapters = 2, .num_engines = 3,
		.vram_mb = 64, .vram_visible_mb = 16, .sysmem_mb = 256,
		.native_fences = true, .optimized_default_fence = true,
		.user_mode_submission = true, .no_64bit_atomics = false,
		.doorbell_model = 1, .num_doorbells = 16,
	};

	c.from_sysfs = param_uint("num_adapters", &c.num_adapters);
	if (!c.from_sysfs)
		return c;
	param_uint("num_engines", &c.num_engines);
	param_uint("vram_mb", &c.vram_mb);
	param_uint("vram_visible_mb", &c.vram_visible_mb);
	param_uint("sysmem_mb", &c.sysmem_mb);
	param_uint("client_vram_mb", &c.client_vram_mb);
	param_uint("client_sysmem_mb", &c.client_sysmem_mb);
	param_bool("native_fences", &c.native_fences);
	param_bool("optimized_default_fence", &c.optimized_default_fence);
	param_bool("user_mode_submission", &c.user_mode_submission);
	param_bool("no_64bit_atomics", &c.no_64bit_atomics);
	param_uint("doorbell_model", &c.doorbell_model);
	param_uint("num_doorbells", &c.num_doorbells);
	return c;
}

/* The host's fake driver (libnfence/tests/mock_drm.c, preloaded). */
static bool on_fake_driver(void)
{
	return getenv("NFENCE_MOCK_DIR") != NULL;
}

/* ---- small helpers --------------------------------------------------- */

static UINT64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

static UINT64 rd(const volatile void *p)
{
	return __atomic_load_n((const volatile UINT64 *)p, __ATOMIC_ACQUIRE);
}

/* Is the page holding @p mapped in this process? */
static bool mapped(const volatile void *p)
{
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
	unsigned char vec;

	return mincore((void *)page, PAGE, &vec) == 0;
}

/* Join @t within @ns; 0 or an errno (ETIMEDOUT: it is still running). */
static int join_within(pthread_t t, UINT64 ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec += (long)(ns % 1000000000ull);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &ts);
}

/* Whether eventfd @efd becomes readable within @ns. */
static bool fired_within(int efd, UINT64 ns)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };

	return poll(&p, 1, (int)(ns / MS)) == 1;
}

/* Read (and reset) the counter of eventfd @efd; 0 if it is not readable. */
static uint64_t efd_take(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Sum the counter of eventfd @efd until it reaches @want or @ns pass. */
static uint64_t efd_collect(int efd, uint64_t want, UINT64 ns)
{
	UINT64 end = now_ns() + ns;
	uint64_t sum = 0;

	while (sum < want && now_ns() < end) {
		if (fired_within(efd, 10 * MS))
			sum += efd_take(efd);
	}
	return sum;
}

static int new_eventfd(void)
{
	return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/* ---- adapters, devices, queries ------------------------------------- */

static NTSTATUS close_adapter(D3DKMT_HANDLE h)
{
	D3DKMT_CLOSEADAPTER c = { .hAdapter = h };

	return D3DKMTCloseAdapter(&c);
}

static NTSTATUS create_device(D3DKMT_HANDLE adapter, D3DKMT_HANDLE *dev)
{
	D3DKMT_CREATEDEVICE cd;
	NTSTATUS st;

	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapter;
	st = D3DKMTCreateDevice(&cd);
	*dev = NT_SUCCESS(st) ? cd.hDevice : 0;
	return st;
}

static NTSTATUS destroy_device(D3DKMT_HANDLE dev)
{
	D3DKMT_DESTROYDEVICE d = { .hDevice = dev };

	return D3DKMTDestroyDevice(&d);
}

static NTSTATUS query(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type,
		      void *data, size_t size)
{
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = adapter,
		.Type = type,
		.pPrivateDriverData = data,
		.PrivateDriverDataSize = (UINT)size,
	};

	return D3DKMTQueryAdapterInfo(&q);
}

/* DRM_IOCTL_NFENCE_QUERY ADAPTER straight on a render node fd. */
static int kquery_adapter(int fd, struct drm_nfence_query_adapter *out)
{
	struct drm_nfence_query q;

	memset(&q, 0, sizeof(q));
	memset(out, 0, sizeof(*out));
	q.type = DRM_NFENCE_QUERY_ADAPTER;
	q.size = sizeof(*out);
	q.data = (uintptr_t)out;
	return ioctl(fd, DRM_IOCTL_NFENCE_QUERY, &q) ? -errno : 0;
}

static bool luid_eq(LUID a, LUID b)
{
	return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

/* ---- sync objects ---------------------------------------------------- */

/* Flags of D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, by Windows bit. */
#define SO_SHARED	(1u << 0)
#define SO_NT		(1u << 1)
#define SO_CROSS	(1u << 2)
#define SO_TOP_OF_PIPE	(1u << 3)
#define SO_NO_SIGNAL	(1u << 4)
#define SO_NO_WAIT	(1u << 5)
#define SO_SHAREABLE	(SO_SHARED | SO_NT)

static NTSTATUS create_fence_ex(D3DKMT_HANDLE dev, UINT64 initial,
				D3DDDI_NATIVEFENCE_TYPE type, UINT flags,
				UINT affinity, D3DKMT_HANDLE *h,
				D3DDDI_NATIVEFENCEMAPPING *m)
{
	D3DKMT_CREATENATIVEFENCE cf;
	NTSTATUS st;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = dev;
	cf.Info.InitialFenceValue = initial;
	cf.Info.Type = type;
	cf.Info.Flags.Value = flags;
	cf.Info.EngineAffinity = affinity;
	st = D3DKMTCreateNativeFence(&cf);
	if (h)
		*h = NT_SUCCESS(st) ? cf.hSyncObject : 0;
	if (m)
		*m = cf.Info.NativeFenceMapping;
	return st;
}

/* A DEFAULT fence of @dev at @initial, asserted to exist. */
static D3DKMT_HANDLE fence(struct __test_metadata *_metadata,
			   D3DKMT_HANDLE dev, UINT64 initial, UINT flags,
			   D3DDDI_NATIVEFENCEMAPPING *m)
{
	D3DDDI_NATIVEFENCEMAPPING mm;
	D3DKMT_HANDLE h = 0;

	EXPECT_EQ(STATUS_SUCCESS,
		  create_fence_ex(dev, initial, D3DDDI_NATIVEFENCE_TYPE_DEFAULT,
				  flags, 0, &h, &mm));
	EXPECT_NE(0u, h);
	EXPECT_NE(NULL, mm.CurrentValueCpuVa);
	if (m)
		*m = mm;
	return h;
}

static NTSTATUS destroy_sync(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h };

	return D3DKMTDestroySynchronizationObject(&d);
}

static NTSTATUS cpu_signal(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

static NTSTATUS cpu_wait(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v,
			 UINT64 timeout_ns)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ns,
								 NULL);
}

/* An asynchronous wait of @dev for @v of @h that signals eventfd @efd. */
static NTSTATUS async_wait(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, UINT64 v,
			   int efd)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
		.hAsyncEvent = (HANDLE)(intptr_t)efd,
	};

	return D3DKMTWaitForSynchronizationObjectFromCpu(&w);
}

static NTSTATUS share(D3DKMT_HANDLE h, int *fd)
{
	HANDLE nt = (HANDLE)(intptr_t)-1;
	NTSTATUS st;

	st = D3DKMTShareObjects(1, &h, NULL, 0, &nt);
	*fd = NT_SUCCESS(st) ? (int)(intptr_t)nt : -1;
	return st;
}

static NTSTATUS open_fence(int fd, D3DKMT_HANDLE dev, UINT flags,
			   D3DKMT_HANDLE *h, D3DDDI_NATIVEFENCEMAPPING *m)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	NTSTATUS st;

	memset(&o, 0, sizeof(o));
	o.hNtHandle = (HANDLE)(intptr_t)fd;
	o.hDevice = dev;
	o.Flags.Value = flags;
	o.hSyncObject = POISON;
	st = D3DKMTOpenNativeFenceFromNtHandle(&o);
	if (!NT_SUCCESS(st) && o.hSyncObject != POISON)
		return STATUS_UNSUCCESSFUL;	/* wrote an output on failure */
	if (h)
		*h = NT_SUCCESS(st) ? o.hSyncObject : 0;
	if (m)
		*m = o.NativeFenceMapping;
	return st;
}

/* ---- GPU objects ----------------------------------------------------- */

static NTSTATUS create_alloc(D3DKMT_HANDLE dev, UINT64 size, UINT segment,
			     UINT flags, D3DKMT_HANDLE *h,
			     D3DGPU_VIRTUAL_ADDRESS *va)
{
	NFENCE_ALLOCATION_DESC desc = { .Size = size, .SegmentId = segment };
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	NTSTATUS st;

	desc.Flags.Value = flags;
	memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = dev;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	st = D3DKMTCreateAllocation2(&ca);
	*h = info.hAllocation;
	if (va)
		*va = info.GpuVirtualAddress;
	return st;
}

static NTSTATUS destroy_allocs(D3DKMT_HANDLE dev, const D3DKMT_HANDLE *h,
			       UINT n)
{
	D3DKMT_DESTROYALLOCATION2 d = {
		.hDevice = dev,
		.phAllocationList = h,
		.AllocationCount = n,
	};

	return D3DKMTDestroyAllocation2(&d);
}

static NTSTATUS lock(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, void **p)
{
	D3DKMT_LOCK2 l = { .hDevice = dev, .hAllocation = h };
	NTSTATUS st = D3DKMTLock2(&l);

	*p = NT_SUCCESS(st) ? l.pData : NULL;
	return st;
}

static NTSTATUS unlock(D3DKMT_HANDLE dev, D3DKMT_HANDLE h)
{
	D3DKMT_UNLOCK2 u = { .hDevice = dev, .hAllocation = h };

	return D3DKMTUnlock2(&u);
}

static NTSTATUS query_alloc(D3DKMT_HANDLE dev, D3DKMT_HANDLE h,
			    D3DKMT_NFENCE_ALLOCATION_INFO *ai)
{
	memset(ai, 0, sizeof(*ai));
	return NFenceQueryAllocation(dev, h, ai);
}

/* A locked allocation. */
struct buf {
	D3DKMT_HANDLE h;
	D3DGPU_VIRTUAL_ADDRESS va;
	UINT64 *cpu;
};

static void make_buf(struct __test_metadata *_metadata, D3DKMT_HANDLE dev,
		     UINT64 size, struct buf *b)
{
	void *p;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, size,
					       NFENCE_SEGMENT_ID_SYSTEM, 0,
					       &b->h, &b->va));
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, b->h, &p));
	b->cpu = p;
}

static NTSTATUS create_context(D3DKMT_HANDLE dev, UINT node, UINT flags,
			       D3DKMT_HANDLE *h)
{
	D3DKMT_CREATECONTEXTVIRTUAL c = {
		.hDevice = dev,
		.NodeOrdinal = node,
		.ClientHint = D3DKMT_CLIENTHINT_DX12,
		.hContext = POISON,
	};
	NTSTATUS st;

	c.Flags.Value = flags;
	st = D3DKMTCreateContextVirtual(&c);
	if (!NT_SUCCESS(st) && c.hContext != POISON)
		return STATUS_UNSUCCESSFUL;	/* wrote an output on failure */
	*h = NT_SUCCESS(st) ? c.hContext : 0;
	return st;
}

static NTSTATUS destroy_context(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYCONTEXT d = { .hContext = h };

	return D3DKMTDestroyContext(&d);
}

static NTSTATUS create_queue(D3DKMT_HANDLE ctx, UINT flags,
			     D3DKMT_CREATEHWQUEUE *q)
{
	memset(q, 0, sizeof(*q));
	q->hHwContext = ctx;
	q->Flags.Value = flags;
	return D3DKMTCreateHwQueue(q);
}

static NTSTATUS destroy_queue(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYHWQUEUE d = { .hHwQueue = h };

	return D3DKMTDestroyHwQueue(&d);
}

static NTSTATUS submit(D3DKMT_HANDLE queue, const NFENCE_CS *cs,
		       UINT64 progress)
{
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s = {
		.hHwQueue = queue,
		.HwQueueProgressFenceId = progress,
		.CommandBuffer = NFenceCsGpuVa(cs),
		.CommandLength = NFenceCsSize(cs),
	};

	/* A buffer the encoder refused is never submitted. */
	if (NFenceCsStatus(cs) != STATUS_SUCCESS)
		return NFenceCsStatus(cs);
	return D3DKMTSubmitCommandToHwQueue(&s);
}

static NTSTATUS queue_wait(D3DKMT_HANDLE queue, D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = queue,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	return D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w);
}

static NTSTATUS queue_signal(const D3DKMT_HANDLE *queues, UINT n,
			     D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s = {
		.BroadcastHwQueueCount = n,
		.BroadcastHwQueueArray = queues,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	return D3DKMTSubmitSignalSyncObjectsToHwQueue(&s);
}

static NTSTATUS context_state(D3DKMT_HANDLE ctx, D3DKMT_NFENCE_CONTEXT_STATE *s)
{
	memset(s, 0xa5, sizeof(*s));
	return NFenceQueryContextState(ctx, s);
}

/* ---- fixtures -------------------------------------------------------- */

/* Every adapter, a device on each of the first two, a second on the first. */
struct env {
	struct nf_config cfg;
	UINT nadapters;
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_HANDLE dev[2];	/* dev[1] is 0 with a single adapter */
	D3DKMT_HANDLE devb;	/* another device of adapter 0 */
};

/* NULL, or why the tests cannot run here; a failure fails the test. */
static const char *env_setup(struct __test_metadata *_metadata,
			     struct env *e)
{
	D3DKMT_ENUMADAPTERS2 en = {
		.NumAdapters = MAX_ADAPTERS,
		.pAdapters = e->adapters,
	};

	e->cfg = read_config();
	if (D3DKMTEnumAdapters2(&en) != STATUS_SUCCESS || !en.NumAdapters)
		return "no nfence adapter";
	e->nadapters = en.NumAdapters;
	if (!e->cfg.native_fences)
		return "nfence loaded without native fences";
	if (e->cfg.from_sysfs) {
		EXPECT_EQ(e->cfg.num_adapters, e->nadapters);
	} else {
		e->cfg.num_adapters = e->nadapters;
	}
	EXPECT_LE(2u, e->cfg.num_engines);
	if (e->cfg.num_engines < 2)
		return "fewer than 2 engines";
	EXPECT_EQ(STATUS_SUCCESS,
		  create_device(e->adapters[0].hAdapter, &e->dev[0]));
	EXPECT_EQ(STATUS_SUCCESS,
		  create_device(e->adapters[0].hAdapter, &e->devb));
	if (e->nadapters > 1) {
		EXPECT_EQ(STATUS_SUCCESS,
			  create_device(e->adapters[1].hAdapter, &e->dev[1]));
	}
	return NULL;
}

static void env_teardown(struct __test_metadata *_metadata, struct env *e)
{
	UINT i;

	/* Devices a test destroyed already fail; that is fine. */
	destroy_device(e->dev[0]);
	destroy_device(e->dev[1]);
	destroy_device(e->devb);
	for (i = 0; i < e->nadapters; i++) {
		EXPECT_EQ(STATUS_SUCCESS, close_adapter(e->adapters[i].hAdapter));
	}
}

FIXTURE(nf) {
	struct env e;
};

FIXTURE_SETUP(nf)
{
	const char *why = env_setup(_metadata, &self->e);

	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(nf)
{
	env_teardown(_metadata, &self->e);
}

/*
 * GPU work on adapter 0: a context on engine 0 with a queue whose progress
 * fence is native, a context on engine 1 with a queue whose progress fence
 * is a monitored fence, command buffers and a data page, both locked.
 * Each submission takes a command slot of its own (g.slot): the engines
 * read a buffer when they run it.
 */
#define CMD_SIZE	(64 * 1024u)
#define SLOT		256u

struct gpu {
	D3DKMT_HANDLE ctx[2];
	D3DKMT_CREATEHWQUEUE q[2];
	struct buf cmd, data;
	unsigned int slot;
};

FIXTURE(gpu) {
	struct env e;
	struct gpu g;
};

FIXTURE_SETUP(gpu)
{
	const char *why = env_setup(_metadata, &self->e);
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &g->ctx[0]));
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 1, 0, &g->ctx[1]));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(g->ctx[0], 1u << 5, &g->q[0]));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(g->ctx[1], 0, &g->q[1]));
	make_buf(_metadata, dev, CMD_SIZE, &g->cmd);
	make_buf(_metadata, dev, PAGE, &g->data);
}

FIXTURE_TEARDOWN(gpu)
{
	/* Destroying the device destroys its contexts, queues, allocations. */
	env_teardown(_metadata, &self->e);
}

/* Start a command buffer in the next free slot. */
static void cs_begin(struct __test_metadata *_metadata, struct gpu *g,
		     NFENCE_CS *cs)
{
	unsigned int s = g->slot++;

	ASSERT_LT(s, CMD_SIZE / SLOT);
	ASSERT_EQ(STATUS_SUCCESS,
		  NFenceCsInit(cs, (char *)g->cmd.cpu + s * SLOT, SLOT,
			       g->cmd.va + s * SLOT));
}

/* Wait for a queue's progress fence to reach @v. */
static NTSTATUS progress_wait(D3DKMT_HANDLE dev, const D3DKMT_CREATEHWQUEUE *q,
			      UINT64 v, UINT64 timeout_ns)
{
	return cpu_wait(dev, q->hHwQueueProgressFence, v, timeout_ns);
}

static UINT64 progress(const D3DKMT_CREATEHWQUEUE *q)
{
	return rd(q->HwQueueProgressFenceCPUVirtualAddress);
}

/* ==================================================================== */
/* NTSTATUS and the command encoder: no driver involved                 */
/* ==================================================================== */

/* NFenceStatusFromErrno() is the table d3dkmthk.h documents. */
TEST(status_from_errno)
{
	static const struct {
		int err;
		NTSTATUS st;
	} map[] = {
		{ 0, STATUS_SUCCESS },
		{ EINVAL, STATUS_INVALID_PARAMETER },
		{ ERANGE, STATUS_INVALID_PARAMETER },
		{ EOVERFLOW, STATUS_INVALID_PARAMETER },
		{ E2BIG, STATUS_INVALID_PARAMETER },
		{ ENOENT, STATUS_INVALID_PARAMETER },
		{ EBADF, STATUS_INVALID_HANDLE },
		{ ENOMEM, STATUS_NO_MEMORY },
		{ ENOSPC, STATUS_INSUFFICIENT_RESOURCES },
		{ EMFILE, STATUS_INSUFFICIENT_RESOURCES },
		{ ENFILE, STATUS_INSUFFICIENT_RESOURCES },
		{ ENOBUFS, STATUS_INSUFFICIENT_RESOURCES },
		{ EOPNOTSUPP, STATUS_NOT_SUPPORTED },
		{ ENOTTY, STATUS_NOT_SUPPORTED },
		{ ENOSYS, STATUS_NOT_SUPPORTED },
		{ ETIME, STATUS_TIMEOUT },
		{ ETIMEDOUT, STATUS_TIMEOUT },
		{ ENODEV, STATUS_DEVICE_REMOVED },
		{ ENXIO, STATUS_DEVICE_REMOVED },
		{ EIO, STATUS_DEVICE_REMOVED },
		{ EFAULT, STATUS_ACCESS_VIOLATION },
		{ EACCES, STATUS_ACCESS_DENIED },
		{ EPERM, STATUS_ACCESS_DENIED },
		{ EBUSY, STATUS_DEVICE_BUSY },
		{ EAGAIN, STATUS_GRAPHICS_TRY_AGAIN_LATER },
		{ ECANCELED, STATUS_CANCELLED },
		{ EXDEV, STATUS_UNSUCCESSFUL },
		{ 100000, STATUS_UNSUCCESSFUL },
	};
	size_t i;

	for (i = 0; i < NELEM(map); i++) {
		EXPECT_EQ(map[i].st, NFenceStatusFromErrno(map[i].err))
			TH_LOG("errno %d", map[i].err);
		/* Kernel style, negative. */
		EXPECT_EQ(map[i].st, NFenceStatusFromErrno(-map[i].err))
			TH_LOG("errno -%d", map[i].err);
	}
	EXPECT_EQ(STATUS_UNSUCCESSFUL, NFenceStatusFromErrno(INT_MIN));
	/* Windows' values, and STATUS_TIMEOUT is a success code. */
	EXPECT_EQ(0x102, STATUS_TIMEOUT);
	EXPECT_EQ((NTSTATUS)0xC0000008, STATUS_INVALID_HANDLE);
	EXPECT_TRUE(NT_SUCCESS(NFenceStatusFromErrno(ETIME)));
	EXPECT_FALSE(NT_SUCCESS(NFenceStatusFromErrno(ENOENT)));
}

static uint32_t w32(const void *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)buf + off, sizeof(v));
	return le32toh(v);
}

static uint64_t w64(const void *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)buf + off, sizeof(v));
	return le64toh(v);
}

/* Every NFenceCs* call writes the command the uapi's ISA defines. */
TEST(encoder_writes_the_isa)
{
	D3DDDI_NATIVEFENCEMAPPING m = {
		.CurrentValueGpuVa = 0x6000,
		.MonitoredValueGpuVa = 0x6040,
	};
	UINT64 buf[32];
	NFENCE_CS cs;

	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), 0x10000));
	EXPECT_EQ(0x10000ull, NFenceCsGpuVa(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));

	EXPECT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	EXPECT_EQ(8u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, 0x2000,
						  0x1122334455667788ull));
	EXPECT_EQ(32u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsTimestamp(&cs, 0x3000));
	EXPECT_EQ(48u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWork(&cs, 5000));
	EXPECT_EQ(64u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceWaitUnlogged(&cs, 0x4000, 7));
	EXPECT_EQ(88u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceSignalUnlogged(&cs, 0x5000, 0x5008, 9));
	EXPECT_EQ(120u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWaitNativeFenceUnlogged(&cs, &m, 11));
	EXPECT_EQ(144u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsSignalNativeFenceUnlogged(&cs, &m, 12));
	EXPECT_EQ(176u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_EQ(0x10000ull, NFenceCsGpuVa(&cs));

#define HDR(op)	DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_##op, DRM_NFENCE_CS_##op##_WORDS)
	EXPECT_EQ(HDR(NOP), w32(buf, 0));
	EXPECT_EQ(0u, w32(buf, 4));
	EXPECT_EQ(HDR(WRITE64), w32(buf, 8));
	EXPECT_EQ(0u, w32(buf, 12));
	EXPECT_EQ(0x2000ull, w64(buf, 16));
	EXPECT_EQ(0x1122334455667788ull, w64(buf, 24));
	EXPECT_EQ(HDR(TIMESTAMP), w32(buf, 32));
	EXPECT_EQ(0x3000ull, w64(buf, 40));
	EXPECT_EQ(HDR(WORK), w32(buf, 48));
	EXPECT_EQ(5000ull, w64(buf, 56));
	EXPECT_EQ(HDR(FENCE_WAIT), w32(buf, 64));
	EXPECT_EQ(0x4000ull, w64(buf, 72));
	EXPECT_EQ(7ull, w64(buf, 80));
	EXPECT_EQ(HDR(FENCE_SIGNAL), w32(buf, 88));
	EXPECT_EQ(0x5000ull, w64(buf, 96));
	EXPECT_EQ(0x5008ull, w64(buf, 104));
	EXPECT_EQ(9ull, w64(buf, 112));
	/* The native fence helpers take the mapping's VAs. */
	EXPECT_EQ(HDR(FENCE_WAIT), w32(buf, 120));
	EXPECT_EQ(0x6000ull, w64(buf, 128));
	EXPECT_EQ(11ull, w64(buf, 136));
	EXPECT_EQ(HDR(FENCE_SIGNAL), w32(buf, 144));
	EXPECT_EQ(0x6000ull, w64(buf, 152));
	EXPECT_EQ(0x6040ull, w64(buf, 160));
	EXPECT_EQ(12ull, w64(buf, 168));
	EXPECT_EQ(0xeeeeeeeeu, w32(buf, 176));	/* nothing past the end */
#undef HDR

	/* Reset empties it for rewriting. */
	NFenceCsReset(&cs);
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	EXPECT_EQ(8u, NFenceCsSize(&cs));

	/* The default, logged commands: the log flag, two more words, the payload. */
	memset(buf, 0xee, sizeof(buf));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceWait(&cs, 0x4000, 7, 0x40));
	EXPECT_EQ(32u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceSignal(&cs, 0x5000, 0x5008, 9, 0x41));
	EXPECT_EQ(72u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsWaitNativeFence(&cs, &m, 11, 0x42));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsSignalNativeFence(&cs, &m, 12, 0x43));
	EXPECT_EQ(144u, NFenceCsSize(&cs));
#define LHDR(op) DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_##op, \
	DRM_NFENCE_CS_FLAG_LOG, DRM_NFENCE_CS_##op##_WORDS + DRM_NFENCE_CS_LOG_WORDS)
	EXPECT_EQ(LHDR(FENCE_WAIT), w32(buf, 0));
	EXPECT_EQ(0x4000ull, w64(buf, 8));
	EXPECT_EQ(7ull, w64(buf, 16));
	EXPECT_EQ((UINT64)DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED << 32 | 0x40,
		  w64(buf, 24));
	EXPECT_EQ(LHDR(FENCE_SIGNAL), w32(buf, 32));
	EXPECT_EQ(0x5008ull, w64(buf, 48));
	EXPECT_EQ(9ull, w64(buf, 56));
	EXPECT_EQ((UINT64)DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED << 32 | 0x41,
		  w64(buf, 64));
	EXPECT_EQ(LHDR(FENCE_WAIT), w32(buf, 72));
	EXPECT_EQ(0x6000ull, w64(buf, 80));
	EXPECT_EQ(LHDR(FENCE_SIGNAL), w32(buf, 104));
	EXPECT_EQ(0x6040ull, w64(buf, 120));
	EXPECT_EQ((UINT64)DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED << 32 | 0x43,
		  w64(buf, 136));
#undef LHDR
	/* The 0.4 names of the logged commands encode the same bytes. */
	{
		UINT64 again[32];
		NFENCE_CS cs2;

		memset(again, 0xee, sizeof(again));
		ASSERT_EQ(STATUS_SUCCESS,
			  NFenceCsInit(&cs2, again, sizeof(again), 0x10000));
		NFenceCsFenceWaitLogged(&cs2, 0x4000, 7, 0x40);
		NFenceCsFenceSignalLogged(&cs2, 0x5000, 0x5008, 9, 0x41);
		NFenceCsWaitNativeFenceLogged(&cs2, &m, 11, 0x42);
		NFenceCsSignalNativeFenceLogged(&cs2, &m, 12, 0x43);
		EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs2));
		EXPECT_EQ(144u, NFenceCsSize(&cs2));
		EXPECT_EQ(0, memcmp(buf, again, 144));
	}
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsWaitNativeFence(&cs, NULL, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalNativeFence(&cs, NULL, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceWait(&cs, 0x4004, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceSignal(&cs, 0x5000, 0x5004, 1, 1));
}

/* Errors are sticky, write nothing, and only NFenceCsReset() clears them. */
TEST(encoder_errors_are_sticky)
{
	UINT64 buf[4];
	NFENCE_CS cs;

	/* A command that does not fit: STATUS_BUFFER_TOO_SMALL. */
	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, 20, 0x1000));
	EXPECT_EQ(16u, cs.Capacity);	/* whole 8-byte units only */
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsWrite64(&cs, 0x2000, 1));
	EXPECT_EQ(8u, NFenceCsSize(&cs));
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeull, buf[1]);
	/* Sticky: even a NOP that fits fails now. */
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsNop(&cs));
	EXPECT_EQ(8u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsStatus(&cs));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));

	/* Misaligned GPU VAs and too long a WORK: STATUS_INVALID_PARAMETER. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsWrite64(&cs, 0x2004, 1));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsFenceWaitUnlogged(&cs, 0x4001, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsTimestamp(&cs, 0x3002));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceSignalUnlogged(&cs, 0x5000, 0x5004, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsWork(&cs, DRM_NFENCE_CS_MAX_WORK_NS + 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsWaitNativeFenceUnlogged(&cs, NULL, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(&cs));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalNativeFenceUnlogged(&cs, NULL, 1));
	/* A MonitoredValue VA of 0 skips the interrupt check: accepted. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), 0x1000));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceSignalUnlogged(&cs, 0x5000, 0, 1));
	EXPECT_EQ(32u, NFenceCsSize(&cs));	/* exactly full */
	EXPECT_EQ(0ull, w64(buf, 16));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsNop(&cs));
	NFenceCsReset(&cs);
	/* The longest WORK is accepted. */
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWork(&cs, DRM_NFENCE_CS_MAX_WORK_NS));
	EXPECT_EQ(DRM_NFENCE_CS_MAX_WORK_NS, w64(buf, 8));

	/* A failed init leaves no buffer: Reset cannot clear it. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsInit(&cs, (char *)buf + 4, 16, 0x1000));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(&cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsInit(&cs, buf, 16, 0x1004));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsInit(&cs, NULL, 16, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsInit(NULL, buf, 16, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(NULL));
	EXPECT_EQ(0u, NFenceCsSize(NULL));
	EXPECT_EQ(0ull, NFenceCsGpuVa(NULL));
	NFenceCsReset(NULL);	/* no crash */
}

/* A NULL argument pointer is STATUS_INVALID_PARAMETER, never a crash. */
TEST(null_arguments)
{
	D3DKMT_HANDLE h = 1;

	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTOpenAdapterFromLuid(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCloseAdapter(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryClockCalibration(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyDevice(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenNativeFenceFromNtHandle(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &h, NULL, 0, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTDestroySynchronizationObject(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(NULL, 0, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyAllocation2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTLock2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTUnlock2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryAllocation(1, 1, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitWaitForSyncObjectsToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryContextState(1, NULL));
}

/* ==================================================================== */
/* Adapters                                                              */
/* ==================================================================== */

/*
 * D3DKMTEnumAdapters2: the count alone, a buffer too small, then every
 * adapter open, in index order, with distinct LUIDs and handles.
 */
TEST(enumerate_adapters)
{
	struct nf_config cfg = read_config();
	D3DKMT_ADAPTERINFO a[MAX_ADAPTERS], b[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 e;
	D3DKMT_NFENCE_ADAPTER info;
	UINT n, i, j;

	memset(&e, 0, sizeof(e));
	e.NumAdapters = POISON;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	n = e.NumAdapters;
	if (!n)
		SKIP(return, "no nfence adapter");
	if (cfg.from_sysfs) {
		EXPECT_EQ(cfg.num_adapters, n);
	}
	ASSERT_LE(n, (UINT)MAX_ADAPTERS);

	/* Too small: the count, STATUS_BUFFER_TOO_SMALL, nothing opened. */
	memset(a, 0xa5, sizeof(a));
	e.NumAdapters = n - 1;
	e.pAdapters = a;
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(n, e.NumAdapters);
	EXPECT_EQ(0xa5a5a5a5u, a[0].hAdapter);

	e.NumAdapters = MAX_ADAPTERS;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(n, e.NumAdapters);
	for (i = 0; i < n; i++) {
		EXPECT_NE(0u, a[i].hAdapter);
		/* Windows' local handles: made in a row, 0x40 apart. */
		EXPECT_EQ(0xc0000000u, a[i].hAdapter & 0xc000003fu);
		if (i)
			EXPECT_EQ(a[i - 1].hAdapter + 0x40, a[i].hAdapter);
		EXPECT_TRUE(a[i].AdapterLuid.LowPart || a[i].AdapterLuid.HighPart);
		EXPECT_EQ(0u, a[i].NumOfSources);
		EXPECT_EQ(FALSE, a[i].bPrecisePresentRegionsPreferred);
		for (j = 0; j < i; j++) {
			EXPECT_NE(a[j].hAdapter, a[i].hAdapter);
			EXPECT_FALSE(luid_eq(a[j].AdapterLuid, a[i].AdapterLuid));
		}
		/* In adapter index order, the LUID the adapter reports. */
		ASSERT_EQ(STATUS_SUCCESS, query(a[i].hAdapter,
						KMTQAITYPE_NFENCE_ADAPTER,
						&info, sizeof(info)));
		EXPECT_EQ(i, info.AdapterIndex);
		EXPECT_TRUE(luid_eq(a[i].AdapterLuid, info.AdapterLuid));
	}

	/* Again: new handles, the same adapters, each on the same file. */
	e.NumAdapters = MAX_ADAPTERS;
	e.pAdapters = b;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(n, e.NumAdapters);
	for (i = 0; i < n; i++) {
		EXPECT_NE(a[i].hAdapter, b[i].hAdapter);
		EXPECT_TRUE(luid_eq(a[i].AdapterLuid, b[i].AdapterLuid));
		EXPECT_EQ(NFenceGetAdapterFd(a[i].hAdapter),
			  NFenceGetAdapterFd(b[i].hAdapter));
	}

	for (i = 0; i < n; i++) {
		EXPECT_EQ(STATUS_SUCCESS, close_adapter(a[i].hAdapter));
		EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(a[i].hAdapter));
		/* The other handle keeps the adapter open. */
		EXPECT_LE(0, NFenceGetAdapterFd(b[i].hAdapter));
		EXPECT_EQ(STATUS_SUCCESS, close_adapter(b[i].hAdapter));
	}
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(0));
}

/*
 * D3DKMTEnumAdapters3: every filter nfence accepts returns what
 * D3DKMTEnumAdapters2 does (nfence adapters are render + compute, so
 * IncludeComputeOnly and IncludeDisplayOnly add nothing), with the same
 * count-only and too-small rules; reserved filter bits are refused with
 * nothing written and nothing opened.
 */
TEST(enumerate_adapters3)
{
	static const UINT64 good[] = { 0, 1, 2, 3 };
	static const UINT64 bad[] = {
		1ull << 2, 1ull << 31, 1ull << 32, 1ull << 63, ~0ull, ~3ull,
	};
	D3DKMT_ADAPTERINFO a[MAX_ADAPTERS], b[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 e2;
	D3DKMT_ENUMADAPTERS3 e3;
	UINT n, i, f;

	memset(&e2, 0, sizeof(e2));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e2));
	n = e2.NumAdapters;
	if (!n)
		SKIP(return, "no nfence adapter");
	ASSERT_LE(n, (UINT)MAX_ADAPTERS);
	e2.NumAdapters = MAX_ADAPTERS;
	e2.pAdapters = a;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e2));
	ASSERT_EQ(n, e2.NumAdapters);

	for (f = 0; f < NELEM(good); f++) {
		/* The count alone. */
		memset(&e3, 0, sizeof(e3));
		e3.Filter.Value = good[f];
		e3.NumAdapters = POISON;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters3(&e3));
		EXPECT_EQ(n, e3.NumAdapters);

		/* Too small: the count, nothing written. */
		memset(b, 0xa5, sizeof(b));
		e3.NumAdapters = n - 1;
		e3.pAdapters = b;
		EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, D3DKMTEnumAdapters3(&e3));
		EXPECT_EQ(n, e3.NumAdapters);
		EXPECT_EQ(0xa5a5a5a5u, b[0].hAdapter);

		/* The adapters of D3DKMTEnumAdapters2, in the same order. */
		e3.NumAdapters = MAX_ADAPTERS;
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters3(&e3));
		ASSERT_EQ(n, e3.NumAdapters);
		for (i = 0; i < n; i++) {
			EXPECT_NE(0u, b[i].hAdapter);
			EXPECT_NE(a[i].hAdapter, b[i].hAdapter);
			EXPECT_TRUE(luid_eq(a[i].AdapterLuid, b[i].AdapterLuid));
			EXPECT_EQ(0u, b[i].NumOfSources);
			EXPECT_EQ(FALSE, b[i].bPrecisePresentRegionsPreferred);
			EXPECT_EQ(NFenceGetAdapterFd(a[i].hAdapter),
				  NFenceGetAdapterFd(b[i].hAdapter));
			EXPECT_EQ(STATUS_SUCCESS, close_adapter(b[i].hAdapter));
		}
	}

	for (f = 0; f < NELEM(bad); f++) {
		memset(b, 0xa5, sizeof(b));
		memset(&e3, 0, sizeof(e3));
		e3.Filter.Value = bad[f];
		e3.NumAdapters = MAX_ADAPTERS;
		e3.pAdapters = b;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(&e3))
			TH_LOG("filter 0x%llx", (unsigned long long)bad[f]);
		EXPECT_EQ((UINT)MAX_ADAPTERS, e3.NumAdapters);
		EXPECT_EQ(0xa5a5a5a5u, b[0].hAdapter);
		e3.pAdapters = NULL;
		e3.NumAdapters = POISON;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(&e3));
		EXPECT_EQ(POISON, e3.NumAdapters);
	}

	for (i = 0; i < n; i++) {
		EXPECT_EQ(STATUS_SUCCESS, close_adapter(a[i].hAdapter));
	}
}

/*
 * D3DKMTOpenAdapterFromLuid gives a new handle on the same file;
 * NFenceGetAdapterFd is that file, a render node of the adapter.
 */
TEST_F(nf, open_adapter_from_luid)
{
	struct drm_nfence_query_adapter ka;
	D3DKMT_OPENADAPTERFROMLUID o;
	D3DKMT_HANDLE enumerated;
	UINT i;
	int fd, fd0 = -1;

	for (i = 0; i < self->e.nadapters; i++) {
		enumerated = self->e.adapters[i].hAdapter;
		memset(&o, 0, sizeof(o));
		o.AdapterLuid = self->e.adapters[i].AdapterLuid;
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&o));
		EXPECT_NE(0u, o.hAdapter);
		EXPECT_NE(enumerated, o.hAdapter);

		fd = NFenceGetAdapterFd(o.hAdapter);
		ASSERT_LE(0, fd);
		EXPECT_EQ(fd, NFenceGetAdapterFd(enumerated));
		EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		/* An nfence node of that adapter: its ioctls answer. */
		ASSERT_EQ(0, kquery_adapter(fd, &ka));
		EXPECT_EQ(self->e.adapters[i].AdapterLuid.LowPart, ka.luid_low);
		EXPECT_EQ((uint32_t)self->e.adapters[i].AdapterLuid.HighPart,
			  ka.luid_high);
		EXPECT_EQ(i, ka.index);
		if (i == 0) {
			fd0 = fd;
		} else {
			EXPECT_NE(fd0, fd);	/* a file per adapter */
		}

		EXPECT_EQ(STATUS_SUCCESS, close_adapter(o.hAdapter));
		errno = 0;
		EXPECT_EQ(-1, NFenceGetAdapterFd(o.hAdapter));
		EXPECT_EQ(EBADF, errno);
		/* The enumerated handle keeps the file open. */
		EXPECT_EQ(fd, NFenceGetAdapterFd(enumerated));
		EXPECT_EQ(0, kquery_adapter(fd, &ka));
	}

	/* A LUID no adapter has (both halves count). */
	memset(&o, 0, sizeof(o));
	o.AdapterLuid = self->e.adapters[0].AdapterLuid;
	o.AdapterLuid.HighPart ^= 0x40000000;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTOpenAdapterFromLuid(&o));
	EXPECT_EQ(0u, o.hAdapter);
	errno = 0;
	EXPECT_EQ(-1, NFenceGetAdapterFd(self->e.dev[0]));	/* a device */
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, NFenceGetAdapterFd(0));
}

/* KMTQAITYPE_NFENCE_ADAPTER and KMTQAITYPE_WDDM_3_1_CAPS: the module's. */
TEST_F(nf, query_adapter)
{
	const struct nf_config *c = &self->e.cfg;
	D3DKMT_NFENCE_ADAPTER a;
	D3DKMT_WDDM_3_1_CAPS caps;
	UINT i;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		memset(&a, 0xa5, sizeof(a));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_ADAPTER,
						&a, sizeof(a)));
		EXPECT_TRUE(luid_eq(self->e.adapters[i].AdapterLuid,
				    a.AdapterLuid));
		EXPECT_EQ(i, a.AdapterIndex);
		EXPECT_EQ((UINT)c->native_fences, (UINT)a.Flags.NativeGpuFence);
		EXPECT_EQ((UINT)c->user_mode_submission,
			  (UINT)a.Flags.UserModeSubmission);
		EXPECT_EQ((UINT)c->no_64bit_atomics,
			  (UINT)a.Flags.No64BitAtomics);
		EXPECT_EQ(0u, (UINT)a.Flags.Reserved);
		EXPECT_EQ(c->num_engines, a.NumEngines);
		EXPECT_EQ(2u, a.NumSegments);
		EXPECT_EQ(GPU_HZ, a.TimestampFrequency);

		memset(&caps, 0xa5, sizeof(caps));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_3_1_CAPS,
						&caps, sizeof(caps)));
		EXPECT_EQ((UINT)c->native_fences,
			  (UINT)caps.NativeGpuFenceSupported);
		EXPECT_EQ(0u, (UINT)caps.Reserved);
	}
}

/* KMTQAITYPE_NFENCE_SEGMENTS: sized by a first call, then the module's. */
TEST_F(nf, query_segments)
{
	const struct nf_config *c = &self->e.cfg;
	char buf[D3DKMT_NFENCE_SEGMENTS_SIZE(3)];
	D3DKMT_NFENCE_SEGMENTS *s = (D3DKMT_NFENCE_SEGMENTS *)buf;
	const D3DKMT_NFENCE_SEGMENT_INFO *sys, *vram;
	D3DKMT_HANDLE h = self->e.adapters[0].hAdapter;

	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, buf,
			D3DKMT_NFENCE_SEGMENTS_SIZE(0)));
	EXPECT_EQ(2u, s->NumSegments);
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, buf,
			D3DKMT_NFENCE_SEGMENTS_SIZE(1)));
	EXPECT_EQ(2u, s->NumSegments);

	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_SEGMENTS, buf,
					D3DKMT_NFENCE_SEGMENTS_SIZE(2)));
	ASSERT_EQ(2u, s->NumSegments);
	EXPECT_EQ(0u, s->Reserved);
	sys = &s->Segments[0];
	vram = &s->Segments[1];
	EXPECT_EQ(NFENCE_SEGMENT_ID_SYSTEM, sys->SegmentId);
	EXPECT_EQ(1u, (UINT)sys->Flags.System);
	EXPECT_EQ(0u, (UINT)sys->Flags.Local);
	EXPECT_EQ(1u, (UINT)sys->Flags.CpuVisible);
	EXPECT_EQ(c->sysmem_mb * MiB, sys->Size);
	EXPECT_EQ(sys->Size, sys->CpuVisibleSize);
	EXPECT_EQ(NFENCE_SEGMENT_ID_LOCAL, vram->SegmentId);
	EXPECT_EQ(0u, (UINT)vram->Flags.System);
	EXPECT_EQ(1u, (UINT)vram->Flags.Local);
	EXPECT_EQ(c->vram_visible_mb ? 1u : 0u, (UINT)vram->Flags.CpuVisible);
	EXPECT_EQ(c->vram_mb * MiB, vram->Size);
	EXPECT_EQ(c->vram_visible_mb * MiB, vram->CpuVisibleSize);

	/* Room for more is fine. */
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_SEGMENTS, buf,
					sizeof(buf)));
	EXPECT_EQ(2u, s->NumSegments);
}

/* KMTQAITYPE_NFENCE_ENGINES: num_engines engines, 3D, compute, copy, ... */
TEST_F(nf, query_engines)
{
	const struct nf_config *c = &self->e.cfg;
	char buf[D3DKMT_NFENCE_ENGINES_SIZE(8)];
	D3DKMT_NFENCE_ENGINES *en = (D3DKMT_NFENCE_ENGINES *)buf;
	UINT a, i;

	for (a = 0; a < self->e.nadapters; a++) {
		D3DKMT_HANDLE h = self->e.adapters[a].hAdapter;

		memset(buf, 0xa5, sizeof(buf));
		EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
			  query(h, KMTQAITYPE_NFENCE_ENGINES, buf,
				D3DKMT_NFENCE_ENGINES_SIZE(0)));
		EXPECT_EQ(c->num_engines, en->NumEngines);
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_NFENCE_ENGINES, buf,
				D3DKMT_NFENCE_ENGINES_SIZE(c->num_engines)));
		ASSERT_EQ(c->num_engines, en->NumEngines);
		EXPECT_EQ(0u, en->Reserved);
		for (i = 0; i < en->NumEngines; i++) {
			EXPECT_EQ(i, en->Engines[i].NodeOrdinal);
			EXPECT_EQ((D3DKMT_NFENCE_ENGINE_TYPE)(i % 3),
				  en->Engines[i].EngineType);
			EXPECT_EQ((UINT)c->user_mode_submission,
				  (UINT)en->Engines[i].Flags.UserModeSubmissionSupported);
			EXPECT_EQ(0u, en->Engines[i].Reserved);
		}
	}
}

/* Native fence and user-mode submission capabilities. */
TEST_F(nf, query_fence_and_submission_caps)
{
	const struct nf_config *c = &self->e.cfg;
	D3DKMT_NFENCE_NATIVE_FENCE_CAPS fc;
	D3DKMT_NFENCE_USERMODESUBMISSION_CAPS uc;
	UINT i;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		memset(&fc, 0xa5, sizeof(fc));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS,
				&fc, sizeof(fc)));
		EXPECT_EQ((UINT)c->optimized_default_fence,
			  (UINT)fc.Flags.SupportOptimizedDefaultFenceType);
		EXPECT_EQ(1u, (UINT)fc.Flags.SupportIntraGpuFenceType);
		EXPECT_EQ(1u, (UINT)fc.Flags.SupportCrossAdapterFence);
		EXPECT_EQ(1u, (UINT)fc.Flags.SupportLogBuffers);
		EXPECT_EQ(0u, (UINT)fc.Flags.Reserved);
		EXPECT_EQ(64u, fc.ValueStride);
		EXPECT_EQ(c->no_64bit_atomics ? 32u : 64u, fc.ValueBits);
		EXPECT_EQ(340u, fc.MaxLogEntries);
		EXPECT_EQ(40u, fc.LogBufferHeaderSize);
		EXPECT_EQ(48u, fc.LogBufferEntrySize);

		memset(&uc, 0xa5, sizeof(uc));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS,
				&uc, sizeof(uc)));
		if (c->user_mode_submission) {
			EXPECT_EQ(4096u, uc.DoorbellSize);
			EXPECT_EQ((D3DKMT_NFENCE_DOORBELL_MODEL)c->doorbell_model,
				  uc.DoorbellModel) TH_LOG("adapter %u", i);
			EXPECT_EQ(c->num_doorbells, uc.NumPhysicalDoorbells)
				TH_LOG("adapter %u", i);
		} else {
			EXPECT_EQ(0u, uc.DoorbellSize);
		}
		EXPECT_EQ(0u, uc.Reserved);
	}
}

/* KMTQAITYPE_NFENCE_TIMESTAMP: a correlated GPU / CLOCK_MONOTONIC pair. */
TEST_F(nf, query_timestamp)
{
	D3DKMT_HANDLE h = self->e.adapters[0].hAdapter;
	D3DKMT_NFENCE_TIMESTAMP t1, t2;
	UINT64 before, after, dgpu, dcpu;

	before = now_ns();
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_TIMESTAMP,
					&t1, sizeof(t1)));
	after = now_ns();
	EXPECT_EQ(GPU_HZ, t1.GpuFrequency);
	EXPECT_LE(before, t1.CpuMonotonicNs);
	EXPECT_GE(after, t1.CpuMonotonicNs);

	usleep(20 * 1000);
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_TIMESTAMP,
					&t2, sizeof(t2)));
	EXPECT_GT(t2.GpuTimestamp, t1.GpuTimestamp);
	EXPECT_LE(t1.CpuMonotonicNs + 20 * MS, t2.CpuMonotonicNs);
	/* The GPU clock runs at GpuFrequency against the CPU's. */
	dgpu = t2.GpuTimestamp - t1.GpuTimestamp;
	dcpu = t2.CpuMonotonicNs - t1.CpuMonotonicNs;
	EXPECT_LE(dgpu, dcpu * GPU_HZ / 1000000000ull + 2);
	EXPECT_GE(dgpu + 2, dcpu * GPU_HZ / 1000000000ull);
}

/* ---- D3DKMTQueryClockCalibration --------------------------------------- */

/* A calibration of @node, the struct poisoned first. */
static NTSTATUS calibrate(D3DKMT_HANDLE adapter, UINT node, UINT phys,
			  D3DKMT_QUERYCLOCKCALIBRATION *c)
{
	memset(c, 0xa5, sizeof(*c));
	c->hAdapter = adapter;
	c->NodeOrdinal = node;
	c->PhysicalAdapterIndex = phys;
	return D3DKMTQueryClockCalibration(c);
}

/*
 * The GPU timestamp a calibration predicts for CLOCK_MONOTONIC time @t:
 * GpuClockCounter + (t - CpuClockCounter) * GpuFrequency / 10^9, rounded
 * down; @t may be before the calibration.
 */
static int64_t clock_predict(const DXGK_GPUCLOCKDATA *d, UINT64 t)
{
	__int128 dt = (__int128)(int64_t)(t - d->CpuClockCounter);
	__int128 ticks = dt * (__int128)d->GpuFrequency;
	__int128 q = ticks / 1000000000;

	if (ticks % 1000000000 < 0)
		q--;	/* toward minus infinity, as for t >= the calibration */
	return (int64_t)((__int128)d->GpuClockCounter + q);
}

/* What D3DKMTQueryClockCalibration documents: the pair is exact to a tick. */
#define CLOCK_UNCERTAINTY_TICKS	1

/*
 * D3DKMTQueryClockCalibration on every node of every adapter: the
 * adapter's timestamp frequency, CLOCK_MONOTONIC read within the call, no
 * flag, the inputs untouched. Two in a row are monotonic in both counters,
 * and the second lies where the first predicts, within the documented
 * tick: both come from the one clock.
 */
TEST_F(nf, clock_calibration)
{
	D3DKMT_QUERYCLOCKCALIBRATION c1, c2;
	D3DKMT_NFENCE_ADAPTER na;
	UINT64 before, after;
	int64_t off, worst = 0;
	UINT i, n;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_ADAPTER,
						&na, sizeof(na)));
		EXPECT_EQ(self->e.cfg.num_engines, na.NumEngines);
		for (n = 0; n < na.NumEngines; n++) {
			before = now_ns();
			ASSERT_EQ(STATUS_SUCCESS, calibrate(h, n, 0, &c1))
				TH_LOG("adapter %u node %u", i, n);
			after = now_ns();
			ASSERT_EQ(STATUS_SUCCESS, calibrate(h, n, 0, &c2));
			EXPECT_EQ(h, c1.hAdapter);
			EXPECT_EQ(n, c1.NodeOrdinal);
			EXPECT_EQ(0u, c1.PhysicalAdapterIndex);
			EXPECT_EQ(na.TimestampFrequency,
				  c1.ClockData.GpuFrequency);
			EXPECT_EQ(GPU_HZ, c1.ClockData.GpuFrequency);
			EXPECT_LE(before, c1.ClockData.CpuClockCounter);
			EXPECT_GE(after, c1.ClockData.CpuClockCounter);
			EXPECT_EQ(0u, c1.ClockData.Flags.Value);
			EXPECT_EQ(0u, c2.ClockData.Flags.Value);

			EXPECT_LE(c1.ClockData.CpuClockCounter,
				  c2.ClockData.CpuClockCounter);
			EXPECT_LE(c1.ClockData.GpuClockCounter,
				  c2.ClockData.GpuClockCounter);
			off = (int64_t)c2.ClockData.GpuClockCounter -
			      clock_predict(&c1.ClockData,
					    c2.ClockData.CpuClockCounter);
			EXPECT_LE(off, CLOCK_UNCERTAINTY_TICKS)
				TH_LOG("adapter %u node %u", i, n);
			EXPECT_GE(off, -CLOCK_UNCERTAINTY_TICKS)
				TH_LOG("adapter %u node %u", i, n);
			if (off < 0 ? -off > worst : off > worst)
				worst = off < 0 ? -off : off;
		}
	}
	TH_LOG("one calibration predicts the next within %lld tick(s)",
	       (long long)worst);
}

/*
 * D3DKMTQueryClockCalibration's refusals, each with otherwise valid input:
 * a node past the last, a physical adapter other than 0, a handle that is
 * no adapter's. Nothing is written.
 */
TEST_F(nf, clock_calibration_errors)
{
	const UINT nodes[] = {
		self->e.cfg.num_engines, self->e.cfg.num_engines + 1, 0xffff,
		0x10000, 0xffffffffu,
	};
	static const UINT phys[] = { 1, 2, 0x80000000u, 0xffffffffu };
	const D3DKMT_HANDLE handles[] = { 0, 0x7fffffff, self->e.dev[0] };
	D3DKMT_HANDLE h = self->e.adapters[0].hAdapter;
	D3DKMT_QUERYCLOCKCALIBRATION c, ref;
	UINT i;

	for (i = 0; i < NELEM(nodes); i++) {
		memset(&ref, 0xa5, sizeof(ref));
		ref.hAdapter = h;
		ref.NodeOrdinal = nodes[i];
		ref.PhysicalAdapterIndex = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  calibrate(h, nodes[i], 0, &c))
			TH_LOG("node 0x%x", nodes[i]);
		EXPECT_EQ(0, memcmp(&ref, &c, sizeof(c)));
	}
	for (i = 0; i < NELEM(phys); i++) {
		memset(&ref, 0xa5, sizeof(ref));
		ref.hAdapter = h;
		ref.NodeOrdinal = 0;
		ref.PhysicalAdapterIndex = phys[i];
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  calibrate(h, 0, phys[i], &c))
			TH_LOG("physical adapter 0x%x", phys[i]);
		EXPECT_EQ(0, memcmp(&ref, &c, sizeof(c)));
	}
	for (i = 0; i < NELEM(handles); i++) {
		memset(&ref, 0xa5, sizeof(ref));
		ref.hAdapter = handles[i];
		ref.NodeOrdinal = 0;
		ref.PhysicalAdapterIndex = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  calibrate(handles[i], 0, 0, &c))
			TH_LOG("handle 0x%x", handles[i]);
		EXPECT_EQ(0, memcmp(&ref, &c, sizeof(c)));
	}
}

/* ---- the Windows startup queries -------------------------------------- */

/* True if @n bytes at @p are all @byte. */
static bool all_bytes(const void *p, size_t n, unsigned char byte)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != byte)
			return false;
	return true;
}

/*
 * ADAPTERTYPE and _RENDER, PHYSICALADAPTERCOUNT, PHYSICALADAPTERDEVICEIDS,
 * WDDM_2_7 / 2_9 / 3_0 / 3_1_CAPS on every adapter: what every nfence
 * adapter is (a software render adapter, one physical adapter, the
 * documented ids, queues scheduled by the CMP, no display); 3_1 as the
 * kernel's adapter flags say.
 */
TEST_F(nf, startup_adapter_caps)
{
	D3DKMT_ADAPTERTYPE t;
	D3DKMT_PHYSICAL_ADAPTER_COUNT c;
	D3DKMT_QUERY_DEVICE_IDS ids, ref;
	D3DKMT_WDDM_2_7_CAPS c27;
	D3DKMT_WDDM_2_9_CAPS c29;
	D3DKMT_WDDM_3_0_CAPS c30;
	D3DKMT_WDDM_3_1_CAPS c31;
	D3DKMT_NFENCE_ADAPTER na;
	UINT i;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		memset(&t, 0xa5, sizeof(t));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_ADAPTERTYPE,
						&t, sizeof(t)));
		EXPECT_EQ(1u, (UINT)t.RenderSupported);
		EXPECT_EQ(1u, (UINT)t.SoftwareDevice);
		EXPECT_EQ(0u, (UINT)t.DisplaySupported);
		EXPECT_EQ(0u, (UINT)t.ComputeOnly);
		EXPECT_EQ(0x5u, t.Value);
		memset(&t, 0xa5, sizeof(t));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_ADAPTERTYPE_RENDER,
						&t, sizeof(t)));
		EXPECT_EQ(0x5u, t.Value);

		memset(&c, 0xa5, sizeof(c));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_PHYSICALADAPTERCOUNT, &c,
				sizeof(c)));
		EXPECT_EQ(1u, c.Count);

		memset(&ids, 0xa5, sizeof(ids));
		ids.PhysicalAdapterIndex = 0;
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids,
				sizeof(ids)));
		EXPECT_EQ(0u, ids.PhysicalAdapterIndex);
		EXPECT_EQ(D3DKMT_NFENCE_VENDOR_ID, ids.DeviceIds.VendorID);
		EXPECT_EQ(0xFFFFu, ids.DeviceIds.VendorID);
		EXPECT_EQ(D3DKMT_NFENCE_DEVICE_ID, ids.DeviceIds.DeviceID);
		EXPECT_EQ(0u, ids.DeviceIds.SubVendorID);
		EXPECT_EQ(0u, ids.DeviceIds.SubSystemID);
		EXPECT_EQ(0u, ids.DeviceIds.RevisionID);
		EXPECT_EQ(0u, ids.DeviceIds.BusType);
		/* One physical adapter: index 1 is refused, nothing written. */
		memset(&ids, 0xa5, sizeof(ids));
		ids.PhysicalAdapterIndex = 1;
		ref = ids;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query(h, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids,
				sizeof(ids)));
		EXPECT_EQ(0, memcmp(&ref, &ids, sizeof(ids)));

		memset(&c27, 0xa5, sizeof(c27));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_2_7_CAPS,
						&c27, sizeof(c27)));
		EXPECT_EQ(1u, (UINT)c27.HwSchSupported);
		EXPECT_EQ(1u, (UINT)c27.HwSchEnabled);
		EXPECT_EQ(1u, (UINT)c27.HwSchEnabledByDefault);
		EXPECT_EQ(0x7u, c27.Value);
		memset(&c29, 0xa5, sizeof(c29));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_2_9_CAPS,
						&c29, sizeof(c29)));
		EXPECT_EQ((UINT)DXGK_FEATURE_SUPPORT_ALWAYS_ON,
			  (UINT)c29.HwSchSupportState);
		EXPECT_EQ(1u, (UINT)c29.HwSchEnabled);
		EXPECT_EQ(0x7u, c29.Value);
		memset(&c30, 0xa5, sizeof(c30));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_3_0_CAPS,
						&c30, sizeof(c30)));
		EXPECT_EQ(0u, c30.Value);

		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_ADAPTER,
						&na, sizeof(na)));
		memset(&c31, 0xa5, sizeof(c31));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_3_1_CAPS,
						&c31, sizeof(c31)));
		EXPECT_EQ((UINT)na.Flags.NativeGpuFence, c31.Value);
	}
}

/*
 * DRIVER_DESCRIPTION and _RENDER: "nfence M.m.p (desc)" from the driver's
 * DRM version, NUL-terminated, the rest of the 4096 WCHARs zero.
 */
TEST_F(nf, startup_driver_description)
{
	static D3DKMT_DRIVER_DESCRIPTION d;
	static const KMTQUERYADAPTERINFOTYPE types[] = {
		KMTQAITYPE_DRIVER_DESCRIPTION,
		KMTQAITYPE_DRIVER_DESCRIPTION_RENDER,
	};
	wchar_t want[512];
	drmVersionPtr v;
	size_t len;
	UINT i, j;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		v = drmGetVersion(NFenceGetAdapterFd(h));
		ASSERT_NE(NULL, v);
		EXPECT_STREQ("nfence", v->name);
		swprintf(want, NELEM(want), L"nfence %d.%d.%d (%.*s)",
			 v->version_major, v->version_minor,
			 v->version_patchlevel, v->desc_len, v->desc);
		drmFreeVersion(v);
		len = wcslen(want);
		for (j = 0; j < NELEM(types); j++) {
			memset(&d, 0xa5, sizeof(d));
			ASSERT_EQ(STATUS_SUCCESS,
				  query(h, types[j], &d, sizeof(d)));
			EXPECT_EQ(0, wcscmp(want, d.DriverDescription))
				TH_LOG("got \"%ls\", want \"%ls\"",
				       d.DriverDescription, want);
			EXPECT_TRUE(all_bytes(&d.DriverDescription[len],
					      sizeof(d) - len * sizeof(WCHAR), 0));
		}
	}
}

/*
 * NODEMETADATA for every node, against KMTQAITYPE_NFENCE_ENGINES: 3D and
 * copy engines as DXGK_ENGINE_TYPE_3D and _COPY, compute as _OTHER, named
 * "<class>_<n>", UserModeSubmission (bit 3, the only flag) where the engine
 * takes it; past the last node, or another physical adapter: refused,
 * nothing written.
 */
TEST_F(nf, startup_node_metadata)
{
	static const char *const names[] = { "3D", "Compute", "Copy" };
	static const DXGK_ENGINE_TYPE types[] = {
		DXGK_ENGINE_TYPE_3D, DXGK_ENGINE_TYPE_OTHER, DXGK_ENGINE_TYPE_COPY,
	};
	char buf[D3DKMT_NFENCE_ENGINES_SIZE(8)];
	D3DKMT_NFENCE_ENGINES *en = (D3DKMT_NFENCE_ENGINES *)buf;
	D3DKMT_NODEMETADATA m, ref;
	UINT a, i, k, nth[3];
	wchar_t want[DXGK_MAX_METADATA_NAME_LENGTH];
	WCHAR name[DXGK_MAX_METADATA_NAME_LENGTH];
	DXGK_NODEMETADATA_FLAGS flags;
	UINT bad[4];

	for (a = 0; a < self->e.nadapters; a++) {
		D3DKMT_HANDLE h = self->e.adapters[a].hAdapter;

		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_ENGINES,
						buf, sizeof(buf)));
		ASSERT_LE(en->NumEngines, 8u);
		memset(nth, 0, sizeof(nth));
		for (i = 0; i < en->NumEngines; i++) {
			D3DKMT_NFENCE_ENGINE_TYPE et = en->Engines[i].EngineType;

			ASSERT_LT((UINT)et, 3u);
			swprintf(want, NELEM(want), L"%s_%u", names[et],
				 nth[et]++);
			memset(&m, 0xa5, sizeof(m));
			m.NodeOrdinalAndAdapterIndex = en->Engines[i].NodeOrdinal;
			ASSERT_EQ(STATUS_SUCCESS,
				  query(h, KMTQAITYPE_NODEMETADATA, &m,
					sizeof(m)));
			EXPECT_EQ(en->Engines[i].NodeOrdinal,
				  m.NodeOrdinalAndAdapterIndex);
			EXPECT_EQ(types[et], m.NodeData.EngineType);
			/* Byte-packed: copy the name out before using it. */
			memcpy(name, m.NodeData.FriendlyName, sizeof(name));
			EXPECT_EQ(0, wcscmp(want, name))
				TH_LOG("node %u: \"%ls\", want \"%ls\"", i,
				       name, want);
			EXPECT_TRUE(all_bytes(&name[wcslen(want)],
					      (DXGK_MAX_METADATA_NAME_LENGTH -
					       wcslen(want)) * sizeof(WCHAR), 0));
			flags = m.NodeData.Flags;
			EXPECT_EQ(en->Engines[i].Flags.UserModeSubmissionSupported ?
				  1u << 3 : 0u, flags.Value);
			EXPECT_EQ(TRUE, m.NodeData.GpuMmuSupported);
			EXPECT_EQ(FALSE, m.NodeData.IoMmuSupported);
		}

		bad[0] = en->NumEngines;
		bad[1] = 0xffff;
		bad[2] = 1u << 16;
		bad[3] = (1u << 16) | (en->NumEngines - 1);
		for (k = 0; k < NELEM(bad); k++) {
			memset(&m, 0xa5, sizeof(m));
			m.NodeOrdinalAndAdapterIndex = bad[k];
			ref = m;
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(h, KMTQAITYPE_NODEMETADATA, &m,
					sizeof(m)))
				TH_LOG("input 0x%x", bad[k]);
			EXPECT_EQ(0, memcmp(&ref, &m, sizeof(m)));
		}
	}
}

/*
 * GETSEGMENTSIZE against KMTQAITYPE_NFENCE_SEGMENTS and the module's
 * sizes: VRAM is dedicated video memory, the aperture shared system
 * memory.
 */
TEST_F(nf, startup_segment_size)
{
	const struct nf_config *c = &self->e.cfg;
	char buf[D3DKMT_NFENCE_SEGMENTS_SIZE(4)];
	D3DKMT_NFENCE_SEGMENTS *segs = (D3DKMT_NFENCE_SEGMENTS *)buf;
	D3DKMT_SEGMENTSIZEINFO s;
	UINT64 local, system;
	UINT a, i;

	for (a = 0; a < self->e.nadapters; a++) {
		D3DKMT_HANDLE h = self->e.adapters[a].hAdapter;

		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_SEGMENTS,
						buf, sizeof(buf)));
		local = system = 0;
		for (i = 0; i < segs->NumSegments; i++) {
			if (segs->Segments[i].Flags.Local)
				local += segs->Segments[i].Size;
			else if (segs->Segments[i].Flags.System)
				system += segs->Segments[i].Size;
		}
		memset(&s, 0xa5, sizeof(s));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_GETSEGMENTSIZE,
						&s, sizeof(s)));
		EXPECT_EQ(local, s.DedicatedVideoMemorySize);
		EXPECT_EQ(0u, s.DedicatedSystemMemorySize);
		EXPECT_EQ(system, s.SharedSystemMemorySize);
		EXPECT_EQ(c->vram_mb * MiB, s.DedicatedVideoMemorySize);
		EXPECT_EQ(c->sysmem_mb * MiB, s.SharedSystemMemorySize);
	}
}

/*
 * QUERY_ADAPTER_UNIQUE_GUID: the documented rule over the LUID and index
 * the kernel reports, the same on every call and handle, distinct between
 * adapters.
 */
TEST_F(nf, startup_unique_guid)
{
	GUID g[MAX_ADAPTERS], again;
	struct drm_nfence_query_adapter ka;
	D3DKMT_OPENADAPTERFROMLUID o;
	UINT i, j;

	for (i = 0; i < self->e.nadapters; i++) {
		D3DKMT_HANDLE h = self->e.adapters[i].hAdapter;

		ASSERT_EQ(0, kquery_adapter(NFenceGetAdapterFd(h), &ka));
		memset(&g[i], 0xa5, sizeof(g[i]));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
				&g[i], sizeof(g[i])));
		EXPECT_EQ(ka.luid_low, g[i].Data1);
		EXPECT_EQ(0x4E46, g[i].Data2);
		EXPECT_EQ(0x8000 | (ka.index & 0xfff), g[i].Data3);
		EXPECT_EQ(0x80, g[i].Data4[0]);
		EXPECT_EQ(0, g[i].Data4[1]);
		EXPECT_EQ(0, g[i].Data4[2]);
		EXPECT_EQ(0, g[i].Data4[3]);
		EXPECT_EQ((ka.luid_high >> 24) & 0xff, g[i].Data4[4]);
		EXPECT_EQ((ka.luid_high >> 16) & 0xff, g[i].Data4[5]);
		EXPECT_EQ((ka.luid_high >> 8) & 0xff, g[i].Data4[6]);
		EXPECT_EQ(ka.luid_high & 0xff, g[i].Data4[7]);

		ASSERT_EQ(STATUS_SUCCESS,
			  query(h, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
				&again, sizeof(again)));
		EXPECT_EQ(0, memcmp(&g[i], &again, sizeof(again)));
		memset(&o, 0, sizeof(o));
		o.AdapterLuid = self->e.adapters[i].AdapterLuid;
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&o));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(o.hAdapter, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
				&again, sizeof(again)));
		EXPECT_EQ(0, memcmp(&g[i], &again, sizeof(again)));
		EXPECT_EQ(STATUS_SUCCESS, close_adapter(o.hAdapter));
		for (j = 0; j < i; j++) {
			EXPECT_NE(0, memcmp(&g[i], &g[j], sizeof(g[i])));
		}
	}
}

/* Wrong sizes and unanswered Windows types: refused, nothing written. */
TEST_F(nf, startup_query_errors)
{
	static const struct {
		KMTQUERYADAPTERINFOTYPE type;
		UINT size;
	} types[] = {
		{ KMTQAITYPE_GETSEGMENTSIZE, sizeof(D3DKMT_SEGMENTSIZEINFO) },
		{ KMTQAITYPE_ADAPTERTYPE, sizeof(D3DKMT_ADAPTERTYPE) },
		{ KMTQAITYPE_NODEMETADATA, sizeof(D3DKMT_NODEMETADATA) },
		{ KMTQAITYPE_PHYSICALADAPTERCOUNT,
		  sizeof(D3DKMT_PHYSICAL_ADAPTER_COUNT) },
		{ KMTQAITYPE_PHYSICALADAPTERDEVICEIDS,
		  sizeof(D3DKMT_QUERY_DEVICE_IDS) },
		{ KMTQAITYPE_ADAPTERTYPE_RENDER, sizeof(D3DKMT_ADAPTERTYPE) },
		{ KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, sizeof(GUID) },
		{ KMTQAITYPE_DRIVER_DESCRIPTION,
		  sizeof(D3DKMT_DRIVER_DESCRIPTION) },
		{ KMTQAITYPE_DRIVER_DESCRIPTION_RENDER,
		  sizeof(D3DKMT_DRIVER_DESCRIPTION) },
		{ KMTQAITYPE_WDDM_2_7_CAPS, sizeof(D3DKMT_WDDM_2_7_CAPS) },
		{ KMTQAITYPE_WDDM_2_9_CAPS, sizeof(D3DKMT_WDDM_2_9_CAPS) },
		{ KMTQAITYPE_WDDM_3_0_CAPS, sizeof(D3DKMT_WDDM_3_0_CAPS) },
	};
	/* Windows types nfence does not answer (13: DRIVERVERSION). */
	static const int unknown[] = { 1, 2, 4, 13, 58, 61, 67, 76, 78 };
	static unsigned char buf[sizeof(D3DKMT_DRIVER_DESCRIPTION) + 16];
	D3DKMT_HANDLE h = self->e.adapters[0].hAdapter;
	UINT i, k;

	for (i = 0; i < NELEM(types); i++) {
		const UINT bad[] = { 0, types[i].size - 1, types[i].size + 1 };

		for (k = 0; k < NELEM(bad); k++) {
			memset(buf, 0xa5, sizeof(buf));
			memset(buf, 0, sizeof(UINT));	/* a valid input part */
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(h, types[i].type, buf, bad[k]))
				TH_LOG("type %d size %u", types[i].type, bad[k]);
			EXPECT_EQ(0u, *(const UINT *)buf);
			EXPECT_TRUE(all_bytes(buf + sizeof(UINT),
					      sizeof(buf) - sizeof(UINT), 0xa5));
		}
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query(self->e.dev[0], types[i].type, buf,
				types[i].size));
	}
	for (i = 0; i < NELEM(unknown); i++) {
		memset(buf, 0xa5, sizeof(buf));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query(h, (KMTQUERYADAPTERINFOTYPE)unknown[i], buf, 4))
			TH_LOG("type %d", unknown[i]);
		EXPECT_TRUE(all_bytes(buf, sizeof(buf), 0xa5));
	}
}

/* The arguments are checked, then the handle. */
TEST_F(nf, query_errors)
{
	D3DKMT_HANDLE h = self->e.adapters[0].hAdapter;
	D3DKMT_NFENCE_ADAPTER a;
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = h,
		.Type = KMTQAITYPE_NFENCE_ADAPTER,
		.pPrivateDriverData = NULL,
		.PrivateDriverDataSize = sizeof(a),
	};

	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h, KMTQAITYPE_NFENCE_ADAPTER, &a, sizeof(a) - 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h, KMTQAITYPE_NFENCE_ADAPTER, &a, sizeof(a) + 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h, (KMTQUERYADAPTERINFOTYPE)74, &a, sizeof(a)));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, &a, 4));
	/* Bad arguments win over a bad handle. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(0, KMTQAITYPE_NFENCE_ADAPTER, &a, sizeof(a) - 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(0, KMTQAITYPE_NFENCE_ADAPTER, &a, sizeof(a)));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(self->e.dev[0], KMTQAITYPE_NFENCE_ADAPTER, &a,
			sizeof(a)));
}

/* ==================================================================== */
/* Devices                                                               */
/* ==================================================================== */


/* D3DKMTCreateDevice's outputs, flags and errors; D3DKMTDestroyDevice. */
TEST_F(nf, device_create_and_destroy)
{
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter, d, d2, f;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_OPENADAPTERFROMLUID o;
	D3DKMT_CREATEDEVICE cd;

	/* The D3D10 compatibility outputs come back NULL and 0. */
	memset(&cd, 0xa5, sizeof(cd));
	memset(&cd.Flags, 0, sizeof(cd.Flags));
	cd.hAdapter = adapter;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateDevice(&cd));
	d = cd.hDevice;
	EXPECT_NE(0u, d);
	EXPECT_NE(self->e.dev[0], d);
	EXPECT_NE(self->e.devb, d);
	EXPECT_NE(adapter, d);
	EXPECT_EQ(NULL, cd.pCommandBuffer);
	EXPECT_EQ(0u, cd.CommandBufferSize);
	EXPECT_EQ(NULL, cd.pAllocationList);
	EXPECT_EQ(0u, cd.AllocationListSize);
	EXPECT_EQ(NULL, cd.pPatchLocationList);
	EXPECT_EQ(0u, cd.PatchLocationListSize);

	/* Flags without effect on nfence are accepted. */
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapter;
	cd.Flags.RequestVSync = 1;
	cd.Flags.DisableGpuTimeout = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateDevice(&cd));
	d2 = cd.hDevice;
	EXPECT_NE(0u, d2);
	EXPECT_NE(d, d2);

	/* Errors; hDevice is left alone. */
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapter;
	cd.hDevice = POISON;
	cd.Flags.LegacyMode = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateDevice(&cd));
	cd.Flags.LegacyMode = 0;
	cd.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(&cd));
	cd.Flags.Reserved = 0;
	cd.hAdapter = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(&cd));
	cd.hAdapter = d;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(&cd));
	EXPECT_EQ(POISON, cd.hDevice);

	EXPECT_EQ(STATUS_SUCCESS, destroy_device(d2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(d2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(adapter));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_fence_ex(d2, 0, D3DDDI_NATIVEFENCE_TYPE_DEFAULT, 0, 0,
				  NULL, NULL));

	/* A device keeps its adapter open after the adapter handle closes. */
	memset(&o, 0, sizeof(o));
	o.AdapterLuid = self->e.adapters[0].AdapterLuid;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&o));
	ASSERT_EQ(STATUS_SUCCESS, create_device(o.hAdapter, &d2));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(o.hAdapter));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_device(o.hAdapter, &f));
	f = fence(_metadata, d2, 1, 0, &m);
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(d2, f, 2));
	EXPECT_EQ(2ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(d2));
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(d));
}

/* At most 1024 devices of an adapter in a process. */
TEST_F(nf, device_limit)
{
	static D3DKMT_HANDLE d[DRM_NFENCE_MAX_DEVICES_PER_FILE];
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter, extra;
	/* The fixture holds two devices of adapter 0. */
	const UINT room = DRM_NFENCE_MAX_DEVICES_PER_FILE - 2;
	NTSTATUS st = STATUS_SUCCESS;
	UINT i, made = 0;

	for (i = 0; i < room; i++) {
		st = create_device(adapter, &d[i]);
		if (st != STATUS_SUCCESS)
			break;
		made++;
	}
	EXPECT_EQ(STATUS_SUCCESS, st);
	EXPECT_EQ(room, made);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, create_device(adapter, &extra));
	EXPECT_EQ(0u, extra);
	/* Another adapter is another file. */
	if (self->e.nadapters > 1) {
		EXPECT_EQ(STATUS_SUCCESS,
			  create_device(self->e.adapters[1].hAdapter, &extra));
		EXPECT_EQ(STATUS_SUCCESS, destroy_device(extra));
	}
	/* Room again once one is gone. */
	if (made) {
		EXPECT_EQ(STATUS_SUCCESS, destroy_device(d[0]));
		EXPECT_EQ(STATUS_SUCCESS, create_device(adapter, &d[0]));
	}
	for (i = 0; i < made; i++) {
		EXPECT_EQ(STATUS_SUCCESS, destroy_device(d[i]));
	}
}

/* Destroying a device closes every handle of what it owns. */
TEST_F(nf, device_destroy_closes_children)
{
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter;
	D3DKMT_HANDLE d, f, a, ctx;
	D3DKMT_NFENCE_ALLOCATION_INFO ai;
	D3DKMT_NFENCE_CONTEXT_STATE cs;
	D3DKMT_CREATEHWQUEUE q;
	void *p;

	ASSERT_EQ(STATUS_SUCCESS, create_device(adapter, &d));
	f = fence(_metadata, d, 0, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(d, PAGE, NFENCE_SEGMENT_ID_SYSTEM,
					       0, &a, NULL));
	ASSERT_EQ(STATUS_SUCCESS, lock(d, a, &p));
	ASSERT_EQ(STATUS_SUCCESS, create_context(d, 0, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &q));

	ASSERT_EQ(STATUS_SUCCESS, destroy_device(d));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(f));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(d, a, &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_allocs(d, &a, 1));
	EXPECT_FALSE(mapped(p));	/* its Lock2 mapping went too */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_state(ctx, &cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(q.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(ctx));
	/* Other devices of the adapter are untouched. */
	f = fence(_metadata, self->e.devb, 3, 0, NULL);
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->e.devb, f, 3, 0));
}

/* ==================================================================== */
/* Native fences from the CPU                                            */
/* ==================================================================== */

/* Create, read through the mapping, signal (never lowering), destroy. */
TEST_F(nf, fence_create_signal_read)
{
	D3DKMT_HANDLE dev = self->e.dev[0], f, g, hs[2];
	UINT64 vs[2];
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = dev, .ObjectCount = 2,
		.ObjectHandleArray = hs, .FenceValueArray = vs,
	};
	D3DDDI_NATIVEFENCEMAPPING m, mg;
	D3DKMT_CREATENATIVEFENCE cf;
	UINT i;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = dev;
	cf.Info.InitialFenceValue = 5;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	/* Private data for a driver that reads it: refused, not dropped. */
	memset(cf.PrivateDriverData, 0x5a, sizeof(cf.PrivateDriverData));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	EXPECT_EQ(0u, cf.hSyncObject);
	memset(cf.PrivateDriverData, 0, sizeof(cf.PrivateDriverData));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateNativeFence(&cf));
	f = cf.hSyncObject;
	m = cf.Info.NativeFenceMapping;
	EXPECT_NE(0u, f);
	EXPECT_NE(dev, f);
	ASSERT_NE(NULL, m.CurrentValueCpuVa);
	EXPECT_EQ(0u, (uintptr_t)m.CurrentValueCpuVa % 8);
	EXPECT_NE(0ull, m.CurrentValueGpuVa);
	EXPECT_NE(0ull, m.MonitoredValueGpuVa);
	EXPECT_EQ(0ull, m.CurrentValueGpuVa % 8);
	EXPECT_EQ(0ull, m.MonitoredValueGpuVa % 8);
	EXPECT_NE(m.CurrentValueGpuVa, m.MonitoredValueGpuVa);
	for (i = 0; i < sizeof(cf.PrivateDriverData); i++) {
		EXPECT_EQ(0, cf.PrivateDriverData[i]);
	}
	EXPECT_EQ(5ull, rd(m.CurrentValueCpuVa));

	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 9));
	EXPECT_EQ(9ull, rd(m.CurrentValueCpuVa));
	/* A lower value succeeds and changes nothing. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 3));
	EXPECT_EQ(9ull, rd(m.CurrentValueCpuVa));
	/* The same fence twice: the larger value. */
	hs[0] = hs[1] = f;
	vs[0] = 12;
	vs[1] = 11;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromCpu(&s));
	EXPECT_EQ(12ull, rd(m.CurrentValueCpuVa));
	/* Two fences at once. */
	g = fence(_metadata, dev, 0, 0, &mg);
	hs[1] = g;
	vs[0] = 13;
	vs[1] = 1;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromCpu(&s));
	EXPECT_EQ(13ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(1ull, rd(mg.CurrentValueCpuVa));
	/* All 64 bits. */
	if (!self->e.cfg.no_64bit_atomics) {
		EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, g, 0x123456789aull));
		EXPECT_EQ(0x123456789aull, rd(mg.CurrentValueCpuVa));
	}

	/* Flags: SignalAtSubmission means nothing for the CPU; the rest fail. */
	hs[0] = f;
	hs[1] = g;
	vs[0] = 14;
	vs[1] = 0;
	s.Flags.SignalAtSubmission = 1;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromCpu(&s));
	EXPECT_EQ(14ull, rd(m.CurrentValueCpuVa));
	vs[0] = 15;
	s.Flags.Value = 0;
	s.Flags.EnqueueCpuEvent = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.AllowFenceRewind = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.ObjectCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.ObjectCount = 2;
	s.FenceValueArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.FenceValueArray = vs;
	/* An unknown handle anywhere: nothing is signaled. */
	hs[1] = POISON;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	EXPECT_EQ(14ull, rd(m.CurrentValueCpuVa));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(f));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(dev, f, 20));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_wait(dev, f, 0, 0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(g));
}

/* D3DKMTCreateNativeFence's argument and flag checks; INTRA_GPU fences. */
TEST_F(nf, fence_create_errors)
{
	const UINT engines = self->e.cfg.num_engines;
	D3DKMT_HANDLE dev = self->e.dev[0], h;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_CREATENATIVEFENCE cf;
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS fl;

#define CREATE(type, flags, aff) \
	create_fence_ex(dev, 0, (type), (flags), (aff), &h, &m)
#define DEF	D3DDDI_NATIVEFENCE_TYPE_DEFAULT
#define INTRA	D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = dev;
	cf.hSyncObject = POISON;
	cf.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	cf.Flags.Value = 0;
	cf.Info.Type = (D3DDDI_NATIVEFENCE_TYPE)2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	cf.Info.Type = DEF;
	cf.hDevice = self->e.adapters[0].hAdapter;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	cf.hDevice = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&cf));
	EXPECT_EQ(POISON, cf.hSyncObject);	/* outputs only on success */

	memset(&fl, 0, sizeof(fl));
	fl.SignalByKmd = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, fl.Value, 0));
	memset(&fl, 0, sizeof(fl));
	fl.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, fl.Value, 0));
	memset(&fl, 0, sizeof(fl));
	fl.D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0 = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, fl.Value, 0));
	memset(&fl, 0, sizeof(fl));
	fl.TopOfPipeline = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, CREATE(DEF, fl.Value, 0));
	memset(&fl, 0, sizeof(fl));
	fl.NoSignalMaxValueOnTdr = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, CREATE(DEF, fl.Value, 0));
	memset(&fl, 0, sizeof(fl));
	fl.NoGPUAccess = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, CREATE(DEF, fl.Value, 0));
	/* Invalid bits are reported before unsupported ones. */
	fl.SignalByKmd = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, fl.Value, 0));
	/* What the kernel refuses. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  CREATE(DEF, SO_NO_SIGNAL | SO_NO_WAIT, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, SO_NT, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, SO_CROSS, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  CREATE(INTRA, SO_SHAREABLE | SO_CROSS, 0));
	/*
	 * EngineAffinity is a mask of physical adapters, and an nfence
	 * adapter is one: 0 (all) and 1 are valid, whatever its engines.
	 */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, 0, 2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, 0, 3));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, CREATE(DEF, 0, 1u << 31));
	if (engines > 1)
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  CREATE(DEF, 0, (1u << engines) - 1));
	EXPECT_EQ(STATUS_SUCCESS, CREATE(DEF, 0, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));

	/* INTRA_GPU: GPU addresses only, no CPU access at all. */
	ASSERT_EQ(STATUS_SUCCESS, CREATE(INTRA, 0, 0));
	EXPECT_NE(0u, h);
	EXPECT_EQ(NULL, m.CurrentValueCpuVa);
	EXPECT_NE(0ull, m.CurrentValueGpuVa);
	EXPECT_NE(0ull, m.MonitoredValueGpuVa);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_wait(dev, h, 0, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(dev, h, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));

	/* NoSignal and NoWait at creation. */
	ASSERT_EQ(STATUS_SUCCESS, CREATE(DEF, SO_NO_SIGNAL, 0));
	EXPECT_EQ(STATUS_ACCESS_DENIED, cpu_signal(dev, h, 1));
	EXPECT_EQ(0ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, h, 0, 0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
	ASSERT_EQ(STATUS_SUCCESS, CREATE(DEF, SO_NO_WAIT, 0));
	EXPECT_EQ(STATUS_ACCESS_DENIED, cpu_wait(dev, h, 0, 0));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, h, 1));
	EXPECT_EQ(1ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
#undef CREATE
#undef DEF
#undef INTRA
}

/* Polls and timed waits: STATUS_TIMEOUT, then STATUS_SUCCESS; WaitAny. */
TEST_F(nf, wait_timeout_and_success)
{
	D3DKMT_HANDLE dev = self->e.dev[0], hs[D3DKMT_NFENCE_MAX_SYNC_OBJECTS];
	UINT64 vs[D3DKMT_NFENCE_MAX_SYNC_OBJECTS];
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev, .ObjectCount = 2,
		.ObjectHandleArray = hs, .FenceValueArray = vs,
	};
	D3DKMT_HANDLE f1, f2;
	UINT64 t0, elapsed;
	UINT first, i;
	NTSTATUS st;

	f1 = fence(_metadata, dev, 1, 0, NULL);
	f2 = fence(_metadata, dev, 1, 0, NULL);

	/* Polls. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f1, 1, 0));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f1, 0, 0));
	st = cpu_wait(dev, f1, 2, 0);
	EXPECT_EQ(STATUS_TIMEOUT, st);
	EXPECT_TRUE(NT_SUCCESS(st));	/* a success code, as on Windows */

	/* A timed wait that expires, after its timeout and not before. */
	t0 = now_ns();
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, f1, 2, 100 * MS));
	elapsed = now_ns() - t0;
	EXPECT_LE(100 * MS, elapsed);
	EXPECT_GT(WAIT_NS, elapsed);

	/* WaitAll: every object; pFirstSignaled is 0, untouched on timeout. */
	hs[0] = f1;
	hs[1] = f2;
	vs[0] = 1;
	vs[1] = 2;
	first = POISON;
	EXPECT_EQ(STATUS_TIMEOUT,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 10 * MS,
								   &first));
	EXPECT_EQ(POISON, first);
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f2, 2));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								   &first));
	EXPECT_EQ(0u, first);

	/* WaitAny: the lowest satisfied index. */
	w.Flags.WaitAny = 1;
	vs[0] = 5;
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								   &first));
	EXPECT_EQ(1u, first);
	vs[0] = 1;
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								   &first));
	EXPECT_EQ(0u, first);
	vs[0] = 5;
	vs[1] = 5;
	EXPECT_EQ(STATUS_TIMEOUT,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 10 * MS,
								   &first));
	/* The blocking call, on a satisfied wait, returns at once. */
	vs[1] = 2;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromCpu(&w));

	/* The most objects one wait names. */
	w.Flags.WaitAny = 0;
	for (i = 0; i < D3DKMT_NFENCE_MAX_SYNC_OBJECTS; i++) {
		hs[i] = i % 2 ? f1 : f2;
		vs[i] = 1;
	}
	w.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS;
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));

	/* Argument checks. */
	w.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));
	w.ObjectCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));
	w.ObjectCount = 1;
	w.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));
	w.Flags.Value = 0;
	w.ObjectHandleArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	w.ObjectHandleArray = hs;
	w.hDevice = f1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));
}

struct blocked_wait {
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
	D3DKMT_HANDLE h[2];
	UINT64 v[2];
	bool timed;		/* through the timeout extension */
	UINT first;
	NTSTATUS st;
	int done;
};

static void *blocked_wait_thread(void *arg)
{
	struct blocked_wait *b = arg;

	if (b->timed)
		b->st = NFenceWaitForSynchronizationObjectFromCpuTimeout(
				&b->w, WAIT_NS, &b->first);
	else
		b->st = D3DKMTWaitForSynchronizationObjectFromCpu(&b->w);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool wait_done(struct blocked_wait *b)
{
	return __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
}

/* A one-object wait of @dev for @h to reach @v (@timed: the extension). */
static void blocked_wait_init(struct blocked_wait *b, D3DKMT_HANDLE dev,
			      D3DKMT_HANDLE h, UINT64 v, bool timed)
{
	memset(b, 0, sizeof(*b));
	b->timed = timed;
	b->h[0] = h;
	b->v[0] = v;
	b->w.hDevice = dev;
	b->w.ObjectCount = 1;
	b->w.ObjectHandleArray = b->h;
	b->w.FenceValueArray = b->v;
}

/* A blocked CPU wait sleeps until a signal satisfies it, then returns. */
TEST_F(nf, blocking_wait_released_by_signal)
{
	D3DKMT_HANDLE dev = self->e.dev[0], f1, f2;
	struct blocked_wait b;
	pthread_t t;

	f1 = fence(_metadata, dev, 0, 0, NULL);
	f2 = fence(_metadata, dev, 0, 0, NULL);

	/* D3DKMTWaitForSynchronizationObjectFromCpu: no timeout of its own. */
	blocked_wait_init(&b, dev, f1, 3, false);
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_thread, &b));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&b));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f1, 2));	/* not enough */
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&b));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f1, 3));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, b.st);

	/* The timeout extension, WaitAny, released by the second object. */
	memset(&b, 0, sizeof(b));
	b.timed = true;
	b.first = POISON;
	b.h[0] = f1;
	b.h[1] = f2;
	b.v[0] = 10;
	b.v[1] = 1;
	b.w.hDevice = dev;
	b.w.ObjectCount = 2;
	b.w.ObjectHandleArray = b.h;
	b.w.FenceValueArray = b.v;
	b.w.Flags.WaitAny = 1;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_thread, &b));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&b));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f2, 1));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, b.st);
	EXPECT_EQ(1u, b.first);
}

/* hAsyncEvent: the call returns at once, the eventfd fires when satisfied. */
TEST_F(nf, async_wait_signals_eventfd)
{
	D3DKMT_HANDLE dev = self->e.dev[0], f, g, hs[2];
	UINT64 vs[2];
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev, .ObjectCount = 2,
		.ObjectHandleArray = hs, .FenceValueArray = vs,
	};
	UINT first = POISON;
	int efd, pfd[2], closed;

	f = fence(_metadata, dev, 0, 0, NULL);
	g = fence(_metadata, dev, 0, 0, NULL);
	efd = new_eventfd();
	ASSERT_LE(0, efd);

	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev, f, 4, efd));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 3));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 4));
	EXPECT_TRUE(fired_within(efd, WAIT_NS));
	EXPECT_EQ(1ull, efd_take(efd));

	/* Already satisfied: at once. */
	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev, f, 4, efd));
	EXPECT_TRUE(fired_within(efd, WAIT_NS));
	EXPECT_EQ(1ull, efd_take(efd));

	/* Two waits on one eventfd count twice; WaitAny through the extension. */
	hs[0] = f;
	hs[1] = g;
	vs[0] = 9;
	vs[1] = 2;
	w.Flags.WaitAny = 1;
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, UINT64_MAX,
								   &first));
	EXPECT_EQ(POISON, first);	/* nothing to say for an async wait */
	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev, g, 2, efd));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, g, 2));
	/* Both waits are satisfied by the same signal. */
	EXPECT_EQ(2ull, efd_collect(efd, 2, WAIT_NS));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));

	/* An asynchronous wait has no timeout. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								   NULL));
	/* Not an eventfd; not an open file: both bad event handles. */
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	EXPECT_EQ(STATUS_INVALID_HANDLE, async_wait(dev, f, 100, pfd[0]));
	closed = dup(pfd[0]);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(STATUS_INVALID_HANDLE, async_wait(dev, f, 100, closed));
	close(pfd[0]);
	close(pfd[1]);
	close(efd);
}

/* ==================================================================== */
/* Sharing                                                               */
/* ==================================================================== */

/* NT handles, opening them on another device, NoSignal / NoWait opens. */
TEST_F(nf, share_and_open)
{
	D3DKMT_HANDLE dev = self->e.dev[0], devb = self->e.devb;
	D3DKMT_HANDLE f, plain, fb, ro, wo, again, hs[2];
	D3DDDI_NATIVEFENCEMAPPING m, mb, mro, mwo, ma;
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS fl;
	HANDLE nt = (HANDLE)(intptr_t)-7;
	int fd, fd2, pfd[2], closed;

	f = fence(_metadata, dev, 7, SO_SHAREABLE, &m);
	ASSERT_EQ(STATUS_SUCCESS, share(f, &fd));
	ASSERT_LT(0, fd);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* The NT handle's value is no D3DKMT handle: nothing is destroyed. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync((D3DKMT_HANDLE)fd));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, 7, 0));
	/* Each call makes a new NT handle. */
	ASSERT_EQ(STATUS_SUCCESS, share(f, &fd2));
	EXPECT_NE(fd, fd2);
	close(fd2);

	/* Opened on another device of the adapter: one CurrentValue. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, devb, 0, &fb, &mb));
	EXPECT_NE(0u, fb);
	EXPECT_NE(f, fb);
	ASSERT_NE(NULL, mb.CurrentValueCpuVa);
	EXPECT_NE(0ull, mb.CurrentValueGpuVa);
	EXPECT_NE(0ull, mb.MonitoredValueGpuVa);
	EXPECT_EQ(7ull, rd(mb.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(devb, fb, 9));
	EXPECT_EQ(9ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, 9, 0));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 10));
	EXPECT_EQ(10ull, rd(mb.CurrentValueCpuVa));

	/* NoSignal and NoWait opens. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, devb, SO_NO_SIGNAL, &ro, &mro));
	EXPECT_EQ(STATUS_ACCESS_DENIED, cpu_signal(devb, ro, 11));
	EXPECT_EQ(10ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(devb, ro, 10, 0));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev, SO_NO_WAIT, &wo, &mwo));
	EXPECT_EQ(STATUS_ACCESS_DENIED, cpu_wait(dev, wo, 0, 0));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, wo, 11));
	EXPECT_EQ(11ull, rd(mro.CurrentValueCpuVa));
	/* One denied object denies the whole call. */
	hs[0] = f;
	hs[1] = wo;
	{
		UINT64 vs[2] = { 0, 0 };
		D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
			.hDevice = dev, .ObjectCount = 2,
			.ObjectHandleArray = hs, .FenceValueArray = vs,
		};

		EXPECT_EQ(STATUS_ACCESS_DENIED,
			  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0,
									   NULL));
	}

	/* Open errors; no output is written. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  open_fence(fd, dev, SO_NO_SIGNAL | SO_NO_WAIT, NULL, NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  open_fence(fd, dev, SO_TOP_OF_PIPE, NULL, NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, open_fence(fd, dev, SO_CROSS, NULL, NULL));
	memset(&fl, 0, sizeof(fl));
	fl.SignalByKmd = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  open_fence(fd, dev, fl.Value, NULL, NULL));
	/* Private driver data: refused, with a valid handle and device. */
	{
		D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;

		memset(&o, 0, sizeof(o));
		o.hNtHandle = (HANDLE)(intptr_t)fd;
		o.hDevice = dev;
		o.hSyncObject = POISON;
		o.PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE - 1] = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTOpenNativeFenceFromNtHandle(&o));
		EXPECT_EQ(POISON, o.hSyncObject);
	}
	/* Shared and NtSecuritySharing are the object's: ignored on open. */
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev, SO_SHAREABLE, &again,
					     &ma));
	EXPECT_EQ(11ull, rd(ma.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(again));
	EXPECT_EQ(STATUS_INVALID_HANDLE, open_fence(0, dev, 0, NULL, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_fence(fd, 0, 0, NULL, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_fence(fd, f, 0, NULL, NULL));
	/* An open file that is no fence is a bad NT handle. */
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(pfd[0], dev, 0, NULL, NULL));
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  open_fence(NFenceGetAdapterFd(self->e.adapters[0].hAdapter),
			     dev, 0, NULL, NULL));
	closed = pfd[0];
	close(pfd[0]);
	close(pfd[1]);
	EXPECT_EQ(STATUS_INVALID_HANDLE, open_fence(closed, dev, 0, NULL, NULL));

	/* Share errors; no NT handle is written. */
	plain = fence(_metadata, dev, 0, 0, NULL);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &plain, NULL, 0, &nt));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(plain));
	plain = fence(_metadata, dev, 0, SO_SHARED, NULL);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &plain, NULL, 0, &nt));
	hs[0] = f;
	hs[1] = f;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(2, hs, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(0, hs, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, NULL, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, &dev, NULL, 0, &nt));
	EXPECT_EQ((HANDLE)(intptr_t)-7, nt);

	/* The NT handle keeps the fence alive after its every handle is gone. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(fb));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(ro));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(wo));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, devb, 0, &again, &ma));
	EXPECT_EQ(11ull, rd(ma.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(devb, again, 12));
	EXPECT_EQ(12ull, rd(ma.CurrentValueCpuVa));
	/* hNtHandle is not consumed by opening: the caller closes it. */
	EXPECT_EQ(0, close(fd));
}

/* The lines of /proc/self/maps, and the one that holds @addr (or NULL). */
static int count_maps(const volatile void *addr, unsigned long *lo,
		      unsigned long *hi)
{
	unsigned long a, b;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (addr && sscanf(line, "%lx-%lx", &a, &b) == 2 &&
		    (unsigned long)(uintptr_t)addr >= a &&
		    (unsigned long)(uintptr_t)addr < b) {
			*lo = a;
			*hi = b;
		}
	}
	fclose(f);
	return n;
}

/*
 * Shared fences, created or opened, are read through the adapter's CPU
 * window: one mapping for all of them, so the process's mappings do not
 * grow with its shared fences (DRM_IOCTL_NFENCE_FENCE_WINDOW). Each handle
 * has a page of its own; a destroyed handle's page goes to the next one.
 */
TEST_F(nf, shared_fences_one_mapping)
{
	enum { N = 64 };
	D3DKMT_HANDLE dev = self->e.dev[0], devb = self->e.devb;
	D3DKMT_HANDLE f[N], o[N], again;
	D3DDDI_NATIVEFENCEMAPPING m[N], mo[N], ma;
	unsigned long lo = 0, hi = 0, lo2 = 0, hi2 = 0;
	int before, after, i, fd;

	f[0] = fence(_metadata, dev, 100, SO_SHAREABLE, &m[0]);
	ASSERT_NE(NULL, m[0].CurrentValueCpuVa);
	before = count_maps(m[0].CurrentValueCpuVa, &lo, &hi);
	ASSERT_LT(0, before);
	/* The window: 64 MiB of address space, or what the process had. */
	EXPECT_LE(64ul * 4096, hi - lo);
	for (i = 1; i < N; i++)
		f[i] = fence(_metadata, dev, 100 + i, SO_SHAREABLE, &m[i]);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(STATUS_SUCCESS, share(f[i], &fd));
		ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, devb, 0, &o[i],
						     &mo[i]));
		close(fd);
	}
	after = count_maps(NULL, NULL, NULL);
	EXPECT_EQ(before, after);
	for (i = 0; i < N; i++) {
		uintptr_t a = (uintptr_t)m[i].CurrentValueCpuVa;
		uintptr_t b = (uintptr_t)mo[i].CurrentValueCpuVa;

		EXPECT_TRUE(a >= lo && a < hi);
		EXPECT_TRUE(b >= lo && b < hi);
		/* A page of its own for each handle, one value. */
		EXPECT_NE(a / 4096, b / 4096);
		EXPECT_EQ(100ull + i, rd(m[i].CurrentValueCpuVa));
		EXPECT_EQ(100ull + i, rd(mo[i].CurrentValueCpuVa));
	}
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(devb, o[5], 555));
	EXPECT_EQ(555ull, rd(m[5].CurrentValueCpuVa));

	/* A page given back goes to the next handle. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o[7]));
	again = fence(_metadata, dev, 77, SO_SHAREABLE, &ma);
	EXPECT_EQ((uintptr_t)mo[7].CurrentValueCpuVa / 4096,
		  (uintptr_t)ma.CurrentValueCpuVa / 4096);
	EXPECT_EQ(77ull, rd(ma.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(again));
	for (i = 0; i < N; i++) {
		EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f[i]));
		if (i != 7)
			EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o[i]));
	}
	/* The window stays, one mapping, for the adapter's life. */
	EXPECT_EQ(before, count_maps(m[0].CurrentValueCpuVa, &lo2, &hi2));
	EXPECT_EQ(lo, lo2);
	EXPECT_EQ(hi, hi2);
}

/* A CrossAdapter fence opened on the second adapter: one CurrentValue. */
TEST_F(nf, cross_adapter_cpu)
{
	D3DKMT_HANDLE dev0 = self->e.dev[0], dev1 = self->e.dev[1];
	D3DKMT_HANDLE x0, x1, plain;
	D3DDDI_NATIVEFENCEMAPPING m0, m1;
	int fd, pfd, efd;

	if (self->e.nadapters < 2)
		SKIP(return, "needs two adapters");
	x0 = fence(_metadata, dev0, 3, SO_SHAREABLE | SO_CROSS, &m0);
	ASSERT_EQ(STATUS_SUCCESS, share(x0, &fd));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev1, 0, &x1, &m1));
	EXPECT_NE(0u, x1);
	ASSERT_NE(NULL, m1.CurrentValueCpuVa);
	EXPECT_NE(0ull, m1.CurrentValueGpuVa);
	EXPECT_EQ(3ull, rd(m1.CurrentValueCpuVa));

	/* Signals through either adapter are seen through both mappings. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev0, x0, 5));
	EXPECT_EQ(5ull, rd(m1.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev1, x1, 5, 0));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev1, x1, 6, 10 * MS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev1, x1, 8));
	EXPECT_EQ(8ull, rd(m0.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev0, x0, 8, 0));

	/* A waiter on adapter 1 is released by a signal on adapter 0. */
	efd = new_eventfd();
	ASSERT_LE(0, efd);
	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev1, x1, 10, efd));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev0, x0, 10));
	EXPECT_TRUE(fired_within(efd, WAIT_NS));
	close(efd);

	/* Each handle belongs to its adapter's device. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(dev1, x0, 11));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_wait(dev0, x1, 0, 0));
	EXPECT_EQ(10ull, rd(m0.CurrentValueCpuVa));

	/* Only a CrossAdapter fence opens on another adapter. */
	plain = fence(_metadata, dev0, 0, SO_SHAREABLE, NULL);
	ASSERT_EQ(STATUS_SUCCESS, share(plain, &pfd));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_fence(pfd, dev1, 0, NULL, NULL));
	EXPECT_EQ(STATUS_SUCCESS, open_fence(pfd, self->e.devb, 0, NULL, NULL));
	close(pfd);

	/* The second adapter's handle outlives the creator's and the fd. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(x0));
	close(fd);
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev1, x1, 12));
	EXPECT_EQ(12ull, rd(m1.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(x1));
}

/* A sync object used with a device it does not belong to. */
TEST_F(nf, sync_object_of_another_device)
{
	D3DKMT_HANDLE dev = self->e.dev[0], devb = self->e.devb, f, g, hs[2];
	D3DDDI_NATIVEFENCEMAPPING m;
	UINT64 vs[2] = { 5, 5 };
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = dev, .ObjectCount = 2,
		.ObjectHandleArray = hs, .FenceValueArray = vs,
	};

	f = fence(_metadata, dev, 1, 0, &m);
	g = fence(_metadata, devb, 1, 0, NULL);

	/* Another device of the same adapter. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(devb, f, 5));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_wait(devb, f, 0, 0));
	/* Another adapter's device. */
	if (self->e.nadapters > 1) {
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  cpu_signal(self->e.dev[1], f, 5));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  cpu_wait(self->e.dev[1], f, 0, 0));
	}
	/* One foreign object: nothing is signaled. */
	hs[0] = f;
	hs[1] = g;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	EXPECT_EQ(1ull, rd(m.CurrentValueCpuVa));
	/* Handles of other kinds. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(dev, dev, 5));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(f, f, 5));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, cpu_signal(dev, 0, 5));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  destroy_sync(self->e.adapters[0].hAdapter));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(f));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(f));
	EXPECT_EQ(1ull, rd(m.CurrentValueCpuVa));
	/* Its own device still works. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 5));
	EXPECT_EQ(5ull, rd(m.CurrentValueCpuVa));
}

/* ==================================================================== */
/* Allocations                                                           */
/* ==================================================================== */

/*
 * Two allocations at once; NFenceQueryAllocation; nested Lock2 and
 * Unlock2; the engines read what the CPU wrote and write what it reads.
 */
TEST_F(gpu, allocation_lock_and_gpu_write)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], hs[2];
	NFENCE_ALLOCATION_DESC desc[2];
	D3DDDI_ALLOCATIONINFO2 info[2];
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_NFENCE_ALLOCATION_INFO ai;
	UINT64 *p0, *p1, *again;
	D3DKMT_LOCK2 l2;
	void *p;
	NFENCE_CS cs;
	UINT i;

	memset(desc, 0, sizeof(desc));
	desc[0].Size = PAGE + 1;	/* rounded up to two pages */
	desc[0].SegmentId = NFENCE_SEGMENT_ID_SYSTEM;
	desc[1].Size = 64 * 1024;
	desc[1].SegmentId = NFENCE_SEGMENT_ID_LOCAL;
	desc[1].Flags.CpuVisible = 1;
	memset(info, 0, sizeof(info));
	for (i = 0; i < 2; i++) {
		info[i].pPrivateDriverData = &desc[i];
		info[i].PrivateDriverDataSize = sizeof(desc[i]);
	}
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = dev;
	ca.NumAllocations = 2;
	ca.pAllocationInfo2 = info;
	ca.hGlobalShare = POISON;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(1u, (UINT)ca.Flags.Zeroed);
	EXPECT_EQ(0u, ca.hGlobalShare);
	for (i = 0; i < 2; i++) {
		EXPECT_NE(0u, info[i].hAllocation);
		EXPECT_NE(0ull, info[i].GpuVirtualAddress);
		EXPECT_EQ(0ull, info[i].GpuVirtualAddress % PAGE);
	}
	EXPECT_NE(info[0].hAllocation, info[1].hAllocation);
	EXPECT_TRUE(info[0].GpuVirtualAddress + 2 * PAGE <=
		    info[1].GpuVirtualAddress ||
		    info[1].GpuVirtualAddress + desc[1].Size <=
		    info[0].GpuVirtualAddress);
	hs[0] = info[0].hAllocation;
	hs[1] = info[1].hAllocation;

	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, hs[0], &ai));
	EXPECT_EQ(info[0].GpuVirtualAddress, ai.GpuVirtualAddress);
	EXPECT_EQ(2ull * PAGE, ai.Size);
	EXPECT_EQ(NFENCE_SEGMENT_ID_SYSTEM, ai.SegmentId);
	EXPECT_EQ(NFENCE_SEGMENT_ID_SYSTEM, ai.PlacedSegmentId);
	EXPECT_EQ(0u, ai.Flags.Value);
	EXPECT_EQ(0u, ai.LockCount);
	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, hs[1], &ai));
	EXPECT_EQ(info[1].GpuVirtualAddress, ai.GpuVirtualAddress);
	EXPECT_EQ(64ull * 1024, ai.Size);
	EXPECT_EQ(NFENCE_SEGMENT_ID_LOCAL, ai.SegmentId);
	EXPECT_EQ(NFENCE_SEGMENT_ID_LOCAL, ai.PlacedSegmentId);
	EXPECT_EQ(1u, (UINT)ai.Flags.CpuVisible);
	EXPECT_EQ(0u, (UINT)ai.Flags.AllowDemote);

	/* Locks nest: the same pData, counted. */
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, hs[0], &p));
	p0 = p;
	ASSERT_NE(NULL, p0);
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, hs[0], &p));
	EXPECT_EQ(p0, (UINT64 *)p);
	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, hs[0], &ai));
	EXPECT_EQ(2u, ai.LockCount);
	EXPECT_EQ(STATUS_SUCCESS, unlock(dev, hs[0]));
	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, hs[0], &ai));
	EXPECT_EQ(1u, ai.LockCount);
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, hs[1], &p));
	p1 = p;
	ASSERT_NE(NULL, p1);
	/* Zeroed, both pages. */
	for (i = 0; i < 2 * PAGE / 8; i++)
		if (p0[i])
			break;
	EXPECT_EQ(2u * PAGE / 8, i);
	for (i = 0; i < 64 * 1024 / 8; i++)
		if (p1[i])
			break;
	EXPECT_EQ(64u * 1024 / 8, i);

	/* The GPU waits for what the CPU wrote, then writes back. */
	p0[1] = 42;
	cs_begin(_metadata, g, &cs);
	NFenceCsFenceWaitUnlogged(&cs, info[0].GpuVirtualAddress + 8, 42);
	NFenceCsWrite64(&cs, info[0].GpuVirtualAddress, 0x1111);
	NFenceCsWrite64(&cs, info[0].GpuVirtualAddress + PAGE, 0x3333);
	NFenceCsWrite64(&cs, info[1].GpuVirtualAddress + 32 * 1024, 0x2222);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_EQ(0x1111ull, rd(&p0[0]));
	EXPECT_EQ(0x3333ull, rd(&p0[PAGE / 8]));
	EXPECT_EQ(0x2222ull, rd(&p1[32 * 1024 / 8]));

	/* The last unlock unmaps; the memory stays. */
	EXPECT_EQ(STATUS_SUCCESS, unlock(dev, hs[0]));
	EXPECT_FALSE(mapped(p0));
	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, hs[0], &ai));
	EXPECT_EQ(0u, ai.LockCount);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(dev, hs[0]));
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, hs[0], &p));
	again = p;
	EXPECT_EQ(0x1111ull, rd(&again[0]));
	EXPECT_EQ(42ull, rd(&again[1]));
	EXPECT_EQ(0x3333ull, rd(&again[PAGE / 8]));

	/* Lock2 flags must be 0. */
	memset(&l2, 0, sizeof(l2));
	l2.hDevice = dev;
	l2.hAllocation = hs[0];
	l2.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTLock2(&l2));
	EXPECT_EQ(NULL, l2.pData);

	/* Destroying unmaps whatever the lock count. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, hs, 2));
	EXPECT_FALSE(mapped(again));
	EXPECT_FALSE(mapped(p1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(dev, hs[0], &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(dev, hs[1], &p));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(dev, hs[1]));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_allocs(dev, hs, 1));
}

/* Where allocations land with the module's segment sizes, and refusals. */
TEST_F(gpu, allocation_placement_and_errors)
{
	const struct nf_config *c = &self->e.cfg;
	const UINT cpu_visible = 1u << 0, demote = 1u << 1;
	D3DKMT_HANDLE dev = self->e.dev[0], h, h2;
	D3DKMT_NFENCE_ALLOCATION_INFO ai;
	NFENCE_ALLOCATION_DESC desc[2];
	D3DDDI_ALLOCATIONINFO2 info[2];
	D3DKMT_CREATEALLOCATION ca;
	UINT64 *p;
	void *v;

	/* VRAM without CpuVisible: placed in VRAM, not lockable. */
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, MiB, NFENCE_SEGMENT_ID_LOCAL,
					       0, &h, NULL));
	ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, h, &ai));
	EXPECT_EQ(NFENCE_SEGMENT_ID_LOCAL, ai.PlacedSegmentId);
	EXPECT_EQ(0u, (UINT)ai.Flags.CpuVisible);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(dev, h, &v));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &h, 1));

	/* More CPU-visible VRAM than there is. */
	if (c->vram_visible_mb) {
		UINT64 size = (c->vram_visible_mb + 1) * MiB;

		EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
			  create_alloc(dev, size, NFENCE_SEGMENT_ID_LOCAL,
				       cpu_visible, &h, NULL));
		/* Outputs only on success: the entry's 0 stays. */
		EXPECT_EQ(0u, h);
		/* AllowDemote: system memory instead. */
		ASSERT_EQ(STATUS_SUCCESS,
			  create_alloc(dev, size, NFENCE_SEGMENT_ID_LOCAL,
				       cpu_visible | demote, &h, NULL));
		ASSERT_EQ(STATUS_SUCCESS, query_alloc(dev, h, &ai));
		EXPECT_EQ(NFENCE_SEGMENT_ID_LOCAL, ai.SegmentId);
		EXPECT_EQ(NFENCE_SEGMENT_ID_SYSTEM, ai.PlacedSegmentId);
		EXPECT_EQ(size, ai.Size);
		EXPECT_EQ(1u, (UINT)ai.Flags.AllowDemote);
		ASSERT_EQ(STATUS_SUCCESS, lock(dev, h, &v));
		p = v;
		p[size / 8 - 1] = 5;
		EXPECT_EQ(5ull, rd(&p[size / 8 - 1]));
		EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &h, 1));
	}
	/* More VRAM than there is. */
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_alloc(dev, (c->vram_mb + 1) * MiB,
			       NFENCE_SEGMENT_ID_LOCAL, 0, &h, NULL));

	/* What the kernel refuses. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(dev, 0, NFENCE_SEGMENT_ID_SYSTEM, 0, &h, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(dev, DRM_NFENCE_MAX_ALLOC_SIZE + 1,
			       NFENCE_SEGMENT_ID_SYSTEM, 0, &h, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(dev, PAGE, 3, 0, &h, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(dev, PAGE, NFENCE_SEGMENT_ID_SYSTEM, demote, &h,
			       NULL));
	/* What libnfence refuses. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(dev, PAGE, NFENCE_SEGMENT_ID_SYSTEM, 1u << 5, &h,
			       NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(self->e.adapters[0].hAdapter, PAGE,
			       NFENCE_SEGMENT_ID_SYSTEM, 0, &h, NULL));

	memset(desc, 0, sizeof(desc));
	memset(info, 0, sizeof(info));
	desc[0].Size = PAGE;
	desc[0].SegmentId = NFENCE_SEGMENT_ID_SYSTEM;
	desc[1] = desc[0];
	info[0].pPrivateDriverData = &desc[0];
	info[0].PrivateDriverDataSize = sizeof(desc[0]);
	info[1].pPrivateDriverData = &desc[1];
	info[1].PrivateDriverDataSize = sizeof(desc[1]);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = dev;
	ca.NumAllocations = 2;
	ca.pAllocationInfo2 = info;
	info[1].PrivateDriverDataSize = 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	info[1].PrivateDriverDataSize = sizeof(desc[1]);
	info[1].Flags.Primary = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateAllocation2(&ca));
	info[1].Flags.Value = 0;
	ca.Flags.CreateShared = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateAllocation2(&ca));
	ca.Flags.Value = 0;
	ca.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	ca.Flags.Value = 0;
	ca.hResource = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	ca.hResource = 0;
	ca.NumAllocations = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	ca.NumAllocations = 2;
	/* All or nothing: the kernel refuses the second, the first goes. */
	desc[1].Size = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(0u, info[0].hAllocation);
	EXPECT_EQ(0ull, info[0].GpuVirtualAddress);
	desc[1].Size = PAGE;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateAllocation2(&ca));
	h = info[0].hAllocation;
	h2 = info[1].hAllocation;
	/* Listed twice: STATUS_INVALID_PARAMETER, the allocation is gone. */
	{
		D3DKMT_HANDLE twice[2] = { h, h };

		EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_allocs(dev, twice, 2));
		EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(dev, h, &ai));
	}
	{
		D3DKMT_DESTROYALLOCATION2 d = {
			.hDevice = dev, .phAllocationList = &h2,
			.AllocationCount = 1,
		};

		d.Flags.SystemUseOnly = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.Flags.Value = 0;
		d.hResource = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.hResource = 0;
		d.AllocationCount = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.AllocationCount = 1;
		/* Accepted without effect. */
		d.Flags.AssumeNotInUse = 1;
		d.Flags.SynchronousDestroy = 1;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTDestroyAllocation2(&d));
	}
}

/* D3DKMTQueryVideoMemoryInfo of @group on @adapter, outputs poisoned. */
static NTSTATUS video_memory(D3DKMT_HANDLE adapter,
			     D3DKMT_MEMORY_SEGMENT_GROUP group,
			     D3DKMT_QUERYVIDEOMEMORYINFO *q)
{
	memset(q, 0xa5, sizeof(*q));
	q->hProcess = NULL;
	q->hAdapter = adapter;
	q->MemorySegmentGroup = group;
	q->PhysicalAdapterIndex = 0;
	return D3DKMTQueryVideoMemoryInfo(q);
}

static UINT64 vm_usage(D3DKMT_HANDLE adapter, D3DKMT_MEMORY_SEGMENT_GROUP g)
{
	D3DKMT_QUERYVIDEOMEMORYINFO q;

	return video_memory(adapter, g, &q) == STATUS_SUCCESS ?
	       q.CurrentUsage : ~0ull;
}

/* The budget the module's parameters give: the quota bounded by the size. */
static UINT64 vm_budget(unsigned int quota_mb, unsigned int size_mb)
{
	return (quota_mb && quota_mb < size_mb ? quota_mb : size_mb) * MiB;
}

/*
 * D3DKMTQueryVideoMemoryInfo: LOCAL is the VRAM segment, NON_LOCAL the
 * system segment, each budget the client quota bounded by the segment's
 * size; an allocation of any device of the adapter raises its group's
 * usage by its page-aligned size, and no other group's or adapter's, and
 * its destroy gives the bytes back; no reservations. Each invalid input
 * alone is refused and writes nothing.
 */
TEST_F(gpu, video_memory_info)
{
	const struct nf_config *c = &self->e.cfg;
	const D3DKMT_HANDLE a0 = self->e.adapters[0].hAdapter;
	const D3DKMT_MEMORY_SEGMENT_GROUP L = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
	const D3DKMT_MEMORY_SEGMENT_GROUP N =
		D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
	D3DKMT_QUERYVIDEOMEMORYINFO q, before;
	UINT64 local, sys, local1 = 0;
	D3DKMT_HANDLE v, s;
	int i;

	ASSERT_EQ(STATUS_SUCCESS, video_memory(a0, L, &q));
	EXPECT_EQ(vm_budget(c->client_vram_mb, c->vram_mb), q.Budget);
	EXPECT_LE(q.CurrentUsage, q.Budget);
	EXPECT_EQ(0u, q.CurrentReservation);
	EXPECT_EQ(0u, q.AvailableForReservation);
	local = q.CurrentUsage;
	ASSERT_EQ(STATUS_SUCCESS, video_memory(a0, N, &q));
	EXPECT_EQ(vm_budget(c->client_sysmem_mb, c->sysmem_mb), q.Budget);
	EXPECT_LE(q.CurrentUsage, q.Budget);
	EXPECT_EQ(0u, q.CurrentReservation);
	EXPECT_EQ(0u, q.AvailableForReservation);
	sys = q.CurrentUsage;
	/* The fixture's command buffer and data page are system memory. */
	EXPECT_LE((UINT64)CMD_SIZE + PAGE, sys);
	if (self->e.nadapters > 1)
		local1 = vm_usage(self->e.adapters[1].hAdapter, L);

	/* VRAM is LOCAL, counted page-aligned; another device's counts too. */
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->e.dev[0], 3 * PAGE + 1,
					       NFENCE_SEGMENT_ID_LOCAL, 0, &v,
					       NULL));
	EXPECT_EQ(local + 4 * PAGE, vm_usage(a0, L));
	EXPECT_EQ(sys, vm_usage(a0, N));
	if (self->e.nadapters > 1)
		EXPECT_EQ(local1, vm_usage(self->e.adapters[1].hAdapter, L));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->e.devb, PAGE,
					       NFENCE_SEGMENT_ID_SYSTEM, 0, &s,
					       NULL));
	EXPECT_EQ(sys + PAGE, vm_usage(a0, N));
	EXPECT_EQ(local + 4 * PAGE, vm_usage(a0, L));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(self->e.dev[0], &v, 1));
	EXPECT_EQ(local, vm_usage(a0, L));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(self->e.devb, &s, 1));
	EXPECT_EQ(sys, vm_usage(a0, N));

	/* Each invalid input alone: refused, nothing written. */
	ASSERT_EQ(STATUS_SUCCESS, video_memory(a0, L, &before));
	memset(&before.Budget, 0xa5, 4 * sizeof(UINT64));
	for (i = 0; i < 5; i++) {
		q = before;
		switch (i) {
		case 0:
			q.hProcess = (HANDLE)(uintptr_t)getpid();
			break;
		case 1:
			q.hProcess = (HANDLE)(uintptr_t)-1;
			break;
		case 2:
			q.PhysicalAdapterIndex = 1;
			break;
		case 3:
			q.MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)2;
			break;
		case 4:
			q.hAdapter = self->e.dev[0];
			break;
		}
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTQueryVideoMemoryInfo(&q)) TH_LOG("case %d", i);
		q.hProcess = before.hProcess;
		q.PhysicalAdapterIndex = before.PhysicalAdapterIndex;
		q.MemorySegmentGroup = before.MemorySegmentGroup;
		q.hAdapter = before.hAdapter;
		EXPECT_EQ(0, memcmp(&q, &before, sizeof(q))) TH_LOG("case %d", i);
	}
}

/* An allocation is its device's: every other device is refused. */
TEST_F(gpu, allocation_of_another_device)
{
	D3DKMT_HANDLE dev = self->e.dev[0], devb = self->e.devb, a, b, both[2];
	D3DKMT_NFENCE_ALLOCATION_INFO ai;
	void *p;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, PAGE, NFENCE_SEGMENT_ID_SYSTEM,
					       0, &a, NULL));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(devb, PAGE,
					       NFENCE_SEGMENT_ID_SYSTEM, 0, &b,
					       NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(devb, a, &p));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(devb, a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(devb, a, &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_allocs(devb, &a, 1));
	if (self->e.nadapters > 1) {
		EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->e.dev[1], a, &p));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query_alloc(self->e.dev[1], a, &ai));
	}
	/* One foreign handle: nothing destroyed. */
	both[0] = a;
	both[1] = b;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_allocs(dev, both, 2));
	EXPECT_EQ(STATUS_SUCCESS, query_alloc(dev, a, &ai));
	EXPECT_EQ(STATUS_SUCCESS, query_alloc(devb, b, &ai));
	/* Handles of other kinds. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(dev, self->g.ctx[0], &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(a, a, &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, query_alloc(dev, 0, &ai));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(dev, 0, &p));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &a, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(devb, &b, 1));
}

/* ==================================================================== */
/* Contexts and hardware queues                                          */
/* ==================================================================== */

TEST_F(gpu, context_create_and_destroy)
{
	const UINT engines = self->e.cfg.num_engines;
	D3DKMT_HANDLE dev = self->e.dev[0], ctx[8], h;
	D3DDDI_CREATECONTEXTFLAGS fl;
	D3DKMT_NFENCE_CONTEXT_STATE st;
	D3DKMT_CREATECONTEXTVIRTUAL c;
	char pdd[16] = { 0 };
	UINT i, j;

	ASSERT_LE(engines, (UINT)NELEM(ctx));
	for (i = 0; i < engines; i++) {
		ASSERT_EQ(STATUS_SUCCESS, create_context(dev, i, 0, &ctx[i]));
		EXPECT_NE(0u, ctx[i]);
		for (j = 0; j < i; j++) {
			EXPECT_NE(ctx[j], ctx[i]);
		}
		ASSERT_EQ(STATUS_SUCCESS, context_state(ctx[i], &st));
		EXPECT_EQ(0u, st.Flags.Value);
		EXPECT_EQ((UINT)D3DKMT_NFENCE_FAULT_NONE, (UINT)st.FaultReason);
		EXPECT_EQ(0ull, st.FaultGpuVa);
	}
	/* No engine NodeOrdinal: the kernel's EINVAL. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_context(dev, engines, 0, &h));

	/* Flags accepted without effect; NullRendering is not. */
	memset(&fl, 0, sizeof(fl));
	fl.InitialData = 1;
	fl.SynchronizationOnly = 1;
	fl.HwQueueSupported = 1;
	fl.NoKmdAccess = 1;
	fl.DisableGpuTimeout = 1;
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, fl.Value, &h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(h));
	memset(&fl, 0, sizeof(fl));
	fl.NullRendering = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, create_context(dev, 0, fl.Value, &h));
	memset(&fl, 0, sizeof(fl));
	fl.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_context(dev, 0, fl.Value, &h));

	memset(&c, 0, sizeof(c));
	c.hDevice = dev;
	c.hContext = POISON;
	c.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.EngineAffinity = 1;
	c.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.hDevice = self->g.ctx[0];
	c.pPrivateDriverData = pdd;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	EXPECT_EQ(POISON, c.hContext);
	/* Private data and the client hint are ignored. */
	c.hDevice = dev;
	c.ClientHint = D3DKMT_CLIENTHINT_VULKAN;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContextVirtual(&c));
	EXPECT_NE(0u, c.hContext);
	EXPECT_NE(POISON, c.hContext);
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));

	for (i = 0; i < engines; i++) {
		EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx[i]));
		EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(ctx[i]));
		EXPECT_EQ(STATUS_INVALID_PARAMETER, context_state(ctx[i], &st));
	}
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(0));
}

/* Hardware queues and their progress fences. */
TEST_F(gpu, queue_create_and_destroy)
{
	D3DKMT_HANDLE dev = self->e.dev[0], ctx;
	D3DDDI_CREATEHWQUEUEFLAGS fl;
	D3DKMT_CREATEHWQUEUE q, qn, qx;
	char pdd[8] = { 0 };

	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 2 % self->e.cfg.num_engines,
						 0, &ctx));
	/* A monitored progress fence, then a native one: both start at 0. */
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &q));
	memset(&fl, 0, sizeof(fl));
	fl.NativeProgressFence = 1;
	fl.NoBroadcastSignal = 1;
	fl.NoBroadcastWait = 1;
	fl.NoKmdAccess = 1;
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, fl.Value, &qn));
	EXPECT_NE(0u, q.hHwQueue);
	EXPECT_NE(0u, q.hHwQueueProgressFence);
	EXPECT_NE(q.hHwQueue, q.hHwQueueProgressFence);
	EXPECT_NE(q.hHwQueue, qn.hHwQueue);
	EXPECT_NE(q.hHwQueueProgressFence, qn.hHwQueueProgressFence);
	ASSERT_NE(NULL, q.HwQueueProgressFenceCPUVirtualAddress);
	ASSERT_NE(NULL, qn.HwQueueProgressFenceCPUVirtualAddress);
	EXPECT_EQ(0ull, progress(&q));
	EXPECT_EQ(0ull, progress(&qn));
	EXPECT_NE(0ull, q.HwQueueProgressFenceGPUVirtualAddress);
	EXPECT_EQ(0ull, q.HwQueueProgressFenceGPUVirtualAddress % 8);
	EXPECT_NE(0ull, qn.HwQueueProgressFenceGPUVirtualAddress);
	/* Each queue's own two log buffers, with native fences. */
	if (self->e.cfg.native_fences) {
		EXPECT_NE(0ull, q.NativeFenceWaitLogBufferGpuVa);
		EXPECT_NE(0ull, q.NativeFenceSignalLogBufferGpuVa);
		EXPECT_NE(q.NativeFenceWaitLogBufferGpuVa,
			  q.NativeFenceSignalLogBufferGpuVa);
		EXPECT_NE(q.NativeFenceWaitLogBufferGpuVa,
			  qn.NativeFenceWaitLogBufferGpuVa);
		EXPECT_EQ(84u, q.NativeFenceLogBufferNumberOfEntries);
	} else {
		EXPECT_EQ(0ull, q.NativeFenceWaitLogBufferGpuVa);
		EXPECT_EQ(0ull, q.NativeFenceSignalLogBufferGpuVa);
		EXPECT_EQ(0u, q.NativeFenceLogBufferNumberOfEntries);
	}
	/* A progress fence is a fence of the device: it can be waited for. */
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 0, 0));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &qn, 1, 0));
	/* It goes with its queue only. */
	EXPECT_EQ(STATUS_DEVICE_BUSY, destroy_sync(q.hHwQueueProgressFence));
	EXPECT_EQ(NFenceStatusFromErrno(EBUSY),
		  destroy_sync(qn.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 0, 0));

	/* Errors; no output is written. */
	memset(&fl, 0, sizeof(fl));
	fl.UserModeSubmission = 1;
	if (self->e.cfg.user_mode_submission) {
		EXPECT_EQ(STATUS_SUCCESS, create_queue(ctx, fl.Value, &qx));
		EXPECT_EQ(STATUS_SUCCESS, destroy_queue(qx.hHwQueue));
		memset(&qx, 0, sizeof(qx));
	} else {
		EXPECT_EQ(STATUS_NOT_SUPPORTED, create_queue(ctx, fl.Value, &qx));
		EXPECT_EQ(0u, qx.hHwQueue);
	}
	memset(&fl, 0, sizeof(fl));
	fl.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(ctx, fl.Value, &qx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(q.hHwQueue, 0, &qx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(dev, 0, &qx));
	EXPECT_EQ(0u, qx.hHwQueueProgressFence);
	memset(&qx, 0, sizeof(qx));
	qx.hHwContext = ctx;
	qx.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwQueue(&qx));
	qx.pPrivateDriverData = pdd;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCreateHwQueue(&qx));

	/* Destroying a queue closes its progress fence. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, progress_wait(dev, &q, 0, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(ctx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(0));
	/* Destroying a context destroys its queues. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(qn.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, progress_wait(dev, &qn, 0, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(qx.hHwQueue));
}

/* ==================================================================== */
/* Submission                                                            */
/* ==================================================================== */

/* Command buffers run; the progress fence tells; what is refused. */
TEST_F(gpu, submit_and_progress)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], q = g->q[0].hHwQueue, gone;
	D3DGPU_VIRTUAL_ADDRESS gone_va;
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s;
	NFENCE_CS cs, good;
	UINT64 *bad;

	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0xfeed);
	NFenceCsNop(&cs);
	ASSERT_EQ(STATUS_SUCCESS, submit(q, &cs, 3));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 3, WAIT_NS));
	EXPECT_EQ(0xfeedull, rd(&g->data.cpu[0]));
	EXPECT_EQ(3ull, progress(&g->q[0]));

	/* The monitored progress fence of the other queue works the same. */
	cs_begin(_metadata, g, &good);
	NFenceCsWrite64(&good, g->data.va + 8, 0xbeef);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &good, 7));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 7, WAIT_NS));
	EXPECT_EQ(0xbeefull, rd(&g->data.cpu[1]));
	EXPECT_EQ(7ull, progress(&g->q[1]));

	/* The progress value must grow. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, submit(q, &cs, 3));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, submit(q, &cs, 2));

	/* The buffer's checks. */
	memset(&s, 0, sizeof(s));
	s.hHwQueue = q;
	s.HwQueueProgressFenceId = 10;
	s.CommandBuffer = NFenceCsGpuVa(&cs);
	s.CommandLength = 12;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.CommandLength = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.CommandLength = DRM_NFENCE_MAX_SUBMIT_SIZE + 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.CommandLength = 8;
	s.CommandBuffer = NFenceCsGpuVa(&cs) + 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	/* In no allocation: one that was destroyed. */
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, PAGE, NFENCE_SEGMENT_ID_SYSTEM,
					       0, &gone, &gone_va));
	ASSERT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &gone, 1));
	s.CommandBuffer = gone_va;
	s.CommandLength = 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	/* An invalid command (a NOP three words long). */
	bad = (UINT64 *)((char *)g->cmd.cpu + g->slot * SLOT);
	s.CommandBuffer = g->cmd.va + g->slot * SLOT;
	g->slot++;
	bad[0] = DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_NOP, 3);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	/* Reserved flag bits in a header. */
	bad[0] = DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_NOP,
				      DRM_NFENCE_CS_NOP_WORDS) | 0x100;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	/* Pointers with a size must be there. */
	s.CommandBuffer = NFenceCsGpuVa(&cs);
	s.PrivateDriverDataSize = 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.PrivateDriverDataSize = 0;
	s.NumPrimaries = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.NumPrimaries = 0;
	/* Not a queue. */
	s.hHwQueue = g->ctx[0];
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));
	s.hHwQueue = g->q[0].hHwQueueProgressFence;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommandToHwQueue(&s));

	/* Nothing refused was queued: the next value runs as the next one. */
	EXPECT_EQ(3ull, progress(&g->q[0]));
	NFenceCsReset(&cs);
	NFenceCsWrite64(&cs, g->data.va, 0xfeed2);
	ASSERT_EQ(STATUS_SUCCESS, submit(q, &cs, 4));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 4, WAIT_NS));
	EXPECT_EQ(0xfeed2ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(4ull, progress(&g->q[0]));
}

/* TIMESTAMP writes the GPU clock the query reads; WORK moves it. */
TEST_F(gpu, gpu_timestamp_and_work)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter;
	D3DKMT_NFENCE_TIMESTAMP before, after;
	const UINT64 work_ns = 20 * MS;
	UINT64 t0, t1;
	NFENCE_CS cs;

	ASSERT_EQ(STATUS_SUCCESS, query(adapter, KMTQAITYPE_NFENCE_TIMESTAMP,
					&before, sizeof(before)));
	cs_begin(_metadata, g, &cs);
	NFenceCsTimestamp(&cs, g->data.va);
	NFenceCsWork(&cs, work_ns);
	NFenceCsTimestamp(&cs, g->data.va + 8);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	ASSERT_EQ(STATUS_SUCCESS, query(adapter, KMTQAITYPE_NFENCE_TIMESTAMP,
					&after, sizeof(after)));
	t0 = rd(&g->data.cpu[0]);
	t1 = rd(&g->data.cpu[1]);
	EXPECT_LE(before.GpuTimestamp, t0);
	EXPECT_GE(after.GpuTimestamp, t0);
	/*
	 * The WORK lies between the two. The kernel times a WORK from the
	 * start of the CMP's pass, not from the TIMESTAMP before it in the
	 * same pass: allow it 2 ms less.
	 */
	EXPECT_LE(t0 + (work_ns - 2 * MS) * GPU_HZ / 1000000000ull, t1);
}

/*
 * A calibration of each queue's node predicts the TIMESTAMP the engine
 * writes: for CLOCK_MONOTONIC read before the submission and after its
 * completion, the timestamp lies between the two predictions, widened by
 * the documented uncertainty. The submission comes 20 ms after the
 * calibration, so that a wrong frequency or a wrong counter shows.
 */
TEST_F(gpu, clock_calibration_predicts_timestamp)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter;
	D3DKMT_QUERYCLOCKCALIBRATION c;
	D3DKMT_NFENCE_ADAPTER na;
	int64_t lo, hi, ts;
	UINT64 t_before, t_after;
	NFENCE_CS cs;
	UINT i;

	ASSERT_EQ(STATUS_SUCCESS, query(adapter, KMTQAITYPE_NFENCE_ADAPTER,
					&na, sizeof(na)));
	for (i = 0; i < 2; i++) {
		/* g->q[i] is a queue of node i (FIXTURE_SETUP(gpu)). */
		ASSERT_EQ(STATUS_SUCCESS, calibrate(adapter, i, 0, &c));
		EXPECT_EQ(na.TimestampFrequency, c.ClockData.GpuFrequency);
		usleep(20 * 1000);

		cs_begin(_metadata, g, &cs);
		NFenceCsTimestamp(&cs, g->data.va + 8 * i);
		t_before = now_ns();
		ASSERT_EQ(STATUS_SUCCESS, submit(g->q[i].hHwQueue, &cs, 1));
		ASSERT_EQ(STATUS_SUCCESS,
			  progress_wait(dev, &g->q[i], 1, WAIT_NS));
		t_after = now_ns();

		ts = (int64_t)rd(&g->data.cpu[i]);
		lo = clock_predict(&c.ClockData, t_before) -
		     CLOCK_UNCERTAINTY_TICKS;
		hi = clock_predict(&c.ClockData, t_after) +
		     CLOCK_UNCERTAINTY_TICKS;
		EXPECT_LE(lo, ts) TH_LOG("node %u", i);
		EXPECT_GE(hi, ts) TH_LOG("node %u", i);
		TH_LOG("node %u: %lld ticks past pred(before), %lld short of pred(after), window %llu ns",
		       i, (long long)(ts - lo - CLOCK_UNCERTAINTY_TICKS),
		       (long long)(hi - CLOCK_UNCERTAINTY_TICKS - ts),
		       (unsigned long long)(t_after - t_before));
	}
}

/* WORK occupies the engine for its duration (the kernel's GPU only). */
TEST_F(gpu, gpu_work_takes_time)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter;
	const UINT64 work_ns = 50 * MS;
	D3DKMT_NFENCE_TIMESTAMP before, after;
	UINT64 start, t1;
	NFENCE_CS cs;

	if (on_fake_driver())
		SKIP(return, "the fake driver's WORK takes no time");
	cs_begin(_metadata, g, &cs);
	NFenceCsWork(&cs, work_ns);
	NFenceCsTimestamp(&cs, g->data.va);
	ASSERT_EQ(STATUS_SUCCESS, query(adapter, KMTQAITYPE_NFENCE_TIMESTAMP,
					&before, sizeof(before)));
	start = now_ns();
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_LE(start + work_ns, now_ns());
	ASSERT_EQ(STATUS_SUCCESS, query(adapter, KMTQAITYPE_NFENCE_TIMESTAMP,
					&after, sizeof(after)));
	/* The timestamp after the WORK: at least its length later. */
	t1 = rd(&g->data.cpu[0]);
	EXPECT_LE(before.GpuTimestamp + work_ns * GPU_HZ / 1000000000ull, t1);
	EXPECT_GE(after.GpuTimestamp, t1);
}

/*
 * The logged fence commands run where log buffers exist: engine 1 waits
 * (logged) for A, engine 0 signals it (logged); the values and progress
 * are as without the log. IGT nfence_log reads the entries.
 */
TEST_F(gpu, logged_fence_commands)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], a;
	DXGK_NATIVE_FENCE_LOG_ENTRY e[4];
	NFENCE_READNATIVEFENCELOG r;
	D3DDDI_NATIVEFENCEMAPPING ma;
	NFENCE_CS cs;

	if (!self->e.cfg.native_fences)
		SKIP(return, "no native fences, no log buffers");
	a = fence(_metadata, dev, 0, 0, &ma);
	cs_begin(_metadata, g, &cs);
	NFenceCsWaitNativeFence(&cs, &ma, 3, a);
	NFenceCsFenceWait(&cs, ma.CurrentValueGpuVa, 2, a);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	cs_begin(_metadata, g, &cs);
	NFenceCsFenceSignal(&cs, ma.CurrentValueGpuVa,
				  ma.MonitoredValueGpuVa, 2, a);
	NFenceCsSignalNativeFence(&cs, &ma, 3, a);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_EQ(3ull, rd(ma.CurrentValueCpuVa));

	/* The entries, read back through NFenceReadNativeFenceLog(). */
	memset(&r, 0, sizeof(r));
	r.hHwQueue = g->q[0].hHwQueue;
	r.Type = DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS;
	r.pEntries = e;
	r.NumEntries = 4;
	ASSERT_EQ(STATUS_SUCCESS, NFenceReadNativeFenceLog(&r));
	ASSERT_EQ(2u, r.NumEntries);
	EXPECT_EQ(2ull, r.Cursor);
	EXPECT_EQ(0u, r.Flags);
	EXPECT_EQ(2ull, e[0].FenceValue);
	EXPECT_EQ(3ull, e[1].FenceValue);
	EXPECT_EQ(a, e[0].hNativeFence);
	EXPECT_EQ((UINT)DXGK_NATIVE_FENCE_LOG_OPERATION_SIGNAL_EXECUTED,
		  e[1].OperationType);
	EXPECT_LE(e[0].FenceEndGpuTimestamp, e[1].FenceEndGpuTimestamp);
	r.hHwQueue = g->q[1].hHwQueue;
	r.Type = DXGK_NATIVE_FENCE_LOG_TYPE_WAITS;
	r.Cursor = 0;
	r.NumEntries = 4;
	ASSERT_EQ(STATUS_SUCCESS, NFenceReadNativeFenceLog(&r));
	ASSERT_EQ(2u, r.NumEntries);
	EXPECT_EQ(3ull, e[0].FenceValue);
	EXPECT_EQ((UINT)DXGK_NATIVE_FENCE_LOG_OPERATION_WAIT_UNBLOCKED,
		  e[0].OperationType);
	EXPECT_LE(e[0].FenceObservedGpuTimestamp, e[0].FenceEndGpuTimestamp);
	EXPECT_EQ(84ull, r.Header.NumberOfEntries);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(a));
}

/* Set adapter 0's logging level; the previous one, or -1 on failure. */
static int set_level(D3DKMT_HANDLE adapter, D3DDDI_LOGGING_LEVEL level,
		     UINT flags, NTSTATUS *st)
{
	NFENCE_SETLOGGINGLEVEL l = {
		.hAdapter = adapter,
		.LoggingLevel = level,
		.Flags = flags,
	};

	*st = NFenceSetLoggingLevel(&l);
	return NT_SUCCESS(*st) ? (int)l.PreviousLevel : -1;
}

/*
 * Read a queue's signal log from its start (up to 4 entries): the header,
 * where the log is now, and its position in r->Cursor.
 */
static void signal_log(struct __test_metadata *_metadata, D3DKMT_HANDLE q,
		       NFENCE_READNATIVEFENCELOG *r)
{
	static DXGK_NATIVE_FENCE_LOG_ENTRY e[4];

	memset(r, 0, sizeof(*r));
	r->hHwQueue = q;
	r->Type = DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS;
	r->pEntries = e;
	r->NumEntries = 4;
	ASSERT_EQ(STATUS_SUCCESS, NFenceReadNativeFenceLog(r));
}

/*
 * The logging level (root only): ALL gives every queue, and new ones,
 * larger logs at new GPU VAs, with the log's cursor carrying on; back to
 * DEFAULT, and NFENCE_LOGGING_RECREATE at the same level, new buffers
 * again.
 */
TEST_F(gpu, logging_level_recreates_logs)
{
	D3DKMT_HANDLE adapter = self->e.adapters[0].hAdapter;
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], a;
	NFENCE_READNATIVEFENCELOG r;
	D3DDDI_NATIVEFENCEMAPPING ma;
	D3DKMT_CREATEHWQUEUE q2;
	D3DGPU_VIRTUAL_ADDRESS va;
	NFENCE_CS cs;
	NTSTATUS st;

	if (!self->e.cfg.native_fences)
		SKIP(return, "no native fences, no log buffers");
	if (geteuid()) {
		EXPECT_EQ(-1, set_level(adapter, D3DDDI_LOGGING_LEVEL_ALL, 0,
					&st));
		EXPECT_EQ(STATUS_ACCESS_DENIED, st);
		SKIP(return, "not root: only the refusal was checked");
	}
	signal_log(_metadata, g->q[0].hHwQueue, &r);
	EXPECT_EQ(g->q[0].NativeFenceSignalLogBufferGpuVa, r.GpuVa);
	EXPECT_EQ(84ull, r.Header.NumberOfEntries);
	va = r.GpuVa;

	ASSERT_EQ(D3DDDI_LOGGING_LEVEL_DEFAULT,
		  set_level(adapter, D3DDDI_LOGGING_LEVEL_ALL, 0, &st));
	signal_log(_metadata, g->q[0].hHwQueue, &r);
	EXPECT_EQ(340ull, r.Header.NumberOfEntries);
	EXPECT_NE(va, r.GpuVa);
	EXPECT_EQ(0ull, r.Cursor);
	/* A queue made now gets the larger logs too. */
	EXPECT_EQ(STATUS_SUCCESS, create_queue(g->ctx[0], 0, &q2));
	EXPECT_EQ(340u, q2.NativeFenceLogBufferNumberOfEntries);
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q2.hHwQueue));

	/* The GPU logs into the new buffer. */
	a = fence(_metadata, dev, 0, 0, &ma);
	cs_begin(_metadata, g, &cs);
	NFenceCsFenceSignal(&cs, ma.CurrentValueGpuVa,
				  ma.MonitoredValueGpuVa, 5, a);
	EXPECT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	signal_log(_metadata, g->q[0].hHwQueue, &r);
	EXPECT_EQ(1ull, r.Cursor);
	EXPECT_EQ(1u, r.Header.FirstFreeEntryIndex);

	/* The same level again, with new buffers: the cursor carries on. */
	va = r.GpuVa;
	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_ALL,
		  set_level(adapter, D3DDDI_LOGGING_LEVEL_ALL,
			    NFENCE_LOGGING_RECREATE, &st));
	signal_log(_metadata, g->q[0].hHwQueue, &r);
	EXPECT_NE(va, r.GpuVa);
	EXPECT_EQ(1ull, r.Cursor);
	EXPECT_EQ(0u, r.Header.FirstFreeEntryIndex);

	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_ALL,
		  set_level(adapter, D3DDDI_LOGGING_LEVEL_DEFAULT, 0, &st));
	signal_log(_metadata, g->q[0].hHwQueue, &r);
	EXPECT_EQ(84ull, r.Header.NumberOfEntries);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(a));
}

/*
 * Native fences between engines and the CPU: a GPU wait released by a GPU
 * signal, CPU waiters woken by GPU signals, values read through the CPU
 * mapping after GPU signals, a GPU wait on a progress fence's GPU VA.
 */
TEST_F(gpu, native_fence_gpu_signal_and_wait)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], a, b;
	D3DDDI_NATIVEFENCEMAPPING ma, mb;
	struct blocked_wait bw;
	pthread_t t;
	NFENCE_CS cs;
	int efd;

	a = fence(_metadata, dev, 0, 0, &ma);
	b = fence(_metadata, dev, 0, 0, &mb);
	efd = new_eventfd();
	ASSERT_LE(0, efd);

	/* Engine 1 waits for A >= 2, writes, then signals B = 5. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWaitNativeFenceUnlogged(&cs, &ma, 2);
	NFenceCsWrite64(&cs, g->data.va, 0xb1);
	NFenceCsSignalNativeFenceUnlogged(&cs, &mb, 5);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev, b, 5, efd));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	/* A CPU signal below what the GPU waits for releases nothing. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, a, 1));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, b, 5, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(0ull, progress(&g->q[1]));

	/* Engine 0 signals A = 2: engine 1 runs, the CPU waiter wakes. */
	cs_begin(_metadata, g, &cs);
	NFenceCsSignalNativeFenceUnlogged(&cs, &ma, 2);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_TRUE(fired_within(efd, WAIT_NS));
	EXPECT_EQ(5ull, rd(mb.CurrentValueCpuVa));
	EXPECT_EQ(2ull, rd(ma.CurrentValueCpuVa));
	EXPECT_EQ(0xb1ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));

	/*
	 * By raw VAs: engine 0 waits for engine 1's progress fence to reach
	 * 2, then signals A = 9, which a blocked CPU waiter wants.
	 */
	blocked_wait_init(&bw, dev, a, 9, true);
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_thread, &bw));
	cs_begin(_metadata, g, &cs);
	NFenceCsFenceWaitUnlogged(&cs, g->q[1].HwQueueProgressFenceGPUVirtualAddress, 2);
	NFenceCsFenceSignalUnlogged(&cs, ma.CurrentValueGpuVa, ma.MonitoredValueGpuVa, 9);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 2));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&bw));
	EXPECT_EQ(2ull, rd(ma.CurrentValueCpuVa));
	cs_begin(_metadata, g, &cs);
	NFenceCsNop(&cs);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 2));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, bw.st);
	EXPECT_EQ(9ull, rd(ma.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 2, WAIT_NS));
	close(efd);
}

/* A CrossAdapter fence between the GPU of adapter 0 and adapter 1's CPU. */
TEST_F(gpu, cross_adapter_gpu)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev0 = self->e.dev[0], dev1 = self->e.dev[1], x0, x1;
	D3DDDI_NATIVEFENCEMAPPING m0, m1;
	NFENCE_CS cs;
	int fd, efd;

	if (self->e.nadapters < 2)
		SKIP(return, "needs two adapters");
	x0 = fence(_metadata, dev0, 1, SO_SHAREABLE | SO_CROSS, &m0);
	ASSERT_EQ(STATUS_SUCCESS, share(x0, &fd));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev1, 0, &x1, &m1));
	close(fd);
	efd = new_eventfd();
	ASSERT_LE(0, efd);

	/* Adapter 0's engine signals 4: adapter 1's CPU waiter wakes. */
	EXPECT_EQ(STATUS_SUCCESS, async_wait(dev1, x1, 4, efd));
	EXPECT_FALSE(fired_within(efd, QUIET_NS));
	cs_begin(_metadata, g, &cs);
	NFenceCsSignalNativeFenceUnlogged(&cs, &m0, 4);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_TRUE(fired_within(efd, WAIT_NS));
	EXPECT_EQ(4ull, rd(m1.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev1, x1, 4, WAIT_NS));

	/* Adapter 0's engine waits for 6; adapter 1's CPU signals it. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWaitNativeFenceUnlogged(&cs, &m0, 6);
	NFenceCsWrite64(&cs, g->data.va, 0x66);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 2));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev0, &g->q[0], 2, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev1, x1, 6));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev0, &g->q[0], 2, WAIT_NS));
	EXPECT_EQ(0x66ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(6ull, rd(m0.CurrentValueCpuVa));
	close(efd);
}

/* ==================================================================== */
/* WDDM 2.x-style queued waits and signals                               */
/* ==================================================================== */

/*
 * Queued waits hold a queue until the CPU signals; queued signals run in
 * queue order, after the work before them, and release other queues.
 */
TEST_F(gpu, queued_wait_and_signal_order_work)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], q0 = g->q[0].hHwQueue;
	D3DKMT_HANDLE q1 = g->q[1].hHwQueue, f, gf, a, b, hs[2];
	D3DDDI_NATIVEFENCEMAPPING mg;
	UINT64 vs[2] = { 1, 1 };
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = q1, .ObjectCount = 2,
		.ObjectHandleArray = hs, .FenceValueArray = vs,
	};
	NFENCE_CS cs;

	f = fence(_metadata, dev, 0, 0, NULL);
	gf = fence(_metadata, dev, 0, 0, &mg);

	/* Queue 0: wait F >= 1, write, signal G = 2, write. */
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(q0, f, 1));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0xa1);
	ASSERT_EQ(STATUS_SUCCESS, submit(q0, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, queue_signal(&q0, 1, gf, 2));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 8, 0xa2);
	ASSERT_EQ(STATUS_SUCCESS, submit(q0, &cs, 2));
	/* Queue 1: wait G >= 2 (queue 0's signal), write. */
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(q1, gf, 2));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 16, 0xb1);
	ASSERT_EQ(STATUS_SUCCESS, submit(q1, &cs, 1));

	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &g->q[0], 1, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(0ull, rd(&g->data.cpu[2]));
	EXPECT_EQ(0ull, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(0ull, progress(&g->q[1]));

	ASSERT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 1));
	ASSERT_EQ(STATUS_SUCCESS, cpu_wait(dev, gf, 2, WAIT_NS));
	/* The write queued before the signal ran before it. */
	EXPECT_EQ(0xa1ull, rd(&g->data.cpu[0]));
	EXPECT_LE(1ull, progress(&g->q[0]));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(0xb1ull, rd(&g->data.cpu[2]));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 2, WAIT_NS));
	EXPECT_EQ(0xa2ull, rd(&g->data.cpu[1]));
	EXPECT_EQ(2ull, rd(mg.CurrentValueCpuVa));

	/* A queued wait for two objects needs both. */
	a = fence(_metadata, dev, 0, 0, NULL);
	b = fence(_metadata, dev, 0, 0, NULL);
	hs[0] = a;
	hs[1] = b;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 24, 0xb2);
	ASSERT_EQ(STATUS_SUCCESS, submit(q1, &cs, 2));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, a, 1));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &g->q[1], 2, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[3]));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, b, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 2, WAIT_NS));
	EXPECT_EQ(0xb2ull, rd(&g->data.cpu[3]));
}

/* What queued waits and signals refuse, with the documented status. */
TEST_F(gpu, queued_wait_and_signal_errors)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], q = g->q[0].hHwQueue;
	D3DKMT_HANDLE f, other, intra, ro, wo, notq;
	D3DDDI_NATIVEFENCEMAPPING m;
	UINT64 v = 1;
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = q, .ObjectCount = 1,
		.ObjectHandleArray = &f, .FenceValueArray = &v,
	};
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s = {
		.BroadcastHwQueueCount = 1, .BroadcastHwQueueArray = &q,
		.ObjectCount = 1, .ObjectHandleArray = &f, .FenceValueArray = &v,
	};
	int fd;

	f = fence(_metadata, dev, 0, SO_SHAREABLE, &m);
	other = fence(_metadata, self->e.devb, 0, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS,
		  create_fence_ex(dev, 0, D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU, 0,
				  0, &intra, NULL));
	ASSERT_EQ(STATUS_SUCCESS, share(f, &fd));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev, SO_NO_SIGNAL, &ro, NULL));
	ASSERT_EQ(STATUS_SUCCESS, open_fence(fd, dev, SO_NO_WAIT, &wo, NULL));
	close(fd);

	/* Objects. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q, other, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(&q, 1, other, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q, g->ctx[0], 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q, intra, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(&q, 1, intra, 1));
	EXPECT_EQ(STATUS_ACCESS_DENIED, queue_wait(q, wo, 1));
	EXPECT_EQ(STATUS_ACCESS_DENIED, queue_signal(&q, 1, ro, 1));
	if (self->e.nadapters > 1) {
		D3DKMT_HANDLE f1 = fence(_metadata, self->e.dev[1], 0, 0, NULL);

		EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q, f1, 1));
	}
	/* Queues. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(g->ctx[0], f, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(0, f, 1));
	notq = g->ctx[1];
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(&notq, 1, f, 1));
	/* Counts and arrays. */
	w.ObjectCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
	w.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
	w.ObjectCount = 1;
	w.FenceValueArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
	s.BroadcastHwQueueCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.BroadcastHwQueueCount = 1;
	s.BroadcastHwQueueArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.BroadcastHwQueueArray = &q;
	s.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.ObjectCount = 1;
	/* Flags. */
	s.Flags.SignalAtSubmission = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.Flags.Value = 0;
	s.Flags.EnqueueCpuEvent = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.Flags.Value = 0;
	s.Flags.AllowFenceRewind = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.Flags.Value = 0;
	s.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	s.Flags.Value = 0;

	/* None of it was queued: the fence is still 0 after a good one. */
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, 1, WAIT_NS));
	EXPECT_EQ(1ull, rd(m.CurrentValueCpuVa));
}

/*
 * D3DKMTSubmitSignalSyncObjectsToHwQueue to several queues: each queue
 * signals when it gets there; a bad queue or object queues nothing; a
 * refusal by the kernel on one queue leaves the earlier queues' signals.
 */
TEST_F(gpu, queued_signal_broadcast)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], qs[2], bad[2], ctxb;
	D3DKMT_HANDLE f0, f1, h, k, k2;
	D3DDDI_NATIVEFENCEMAPPING mh, mk, mk2;
	D3DKMT_CREATEHWQUEUE qb;
	NFENCE_CS cs;

	f0 = fence(_metadata, dev, 0, 0, NULL);
	f1 = fence(_metadata, dev, 0, 0, NULL);
	h = fence(_metadata, dev, 0, 0, &mh);
	k = fence(_metadata, dev, 0, 0, &mk);
	k2 = fence(_metadata, dev, 0, 0, &mk2);
	qs[0] = g->q[0].hHwQueue;
	qs[1] = g->q[1].hHwQueue;
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(qs[0], f0, 1));
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(qs[1], f1, 1));

	/* A bad queue anywhere: nothing queued (K stays 0, checked below). */
	bad[0] = qs[0];
	bad[1] = g->ctx[1];
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(bad, 2, k, 9));
	if (self->e.nadapters > 1) {
		D3DKMT_CREATEHWQUEUE q1;
		D3DKMT_HANDLE c1;

		ASSERT_EQ(STATUS_SUCCESS,
			  create_context(self->e.dev[1], 0, 0, &c1));
		ASSERT_EQ(STATUS_SUCCESS, create_queue(c1, 0, &q1));
		bad[1] = q1.hHwQueue;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(bad, 2, k, 9));
	}

	/* To both queues. */
	ASSERT_EQ(STATUS_SUCCESS, queue_signal(qs, 2, h, 5));
	/* The kernel refuses the second queue (another device's): the first
	 * queue's signal stays queued. */
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->e.devb, 0, 0, &ctxb));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctxb, 0, &qb));
	bad[1] = qb.hHwQueue;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(bad, 2, k2, 3));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 1);
	ASSERT_EQ(STATUS_SUCCESS, submit(qs[0], &cs, 1));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 8, 2);
	ASSERT_EQ(STATUS_SUCCESS, submit(qs[1], &cs, 1));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, h, 5, QUIET_NS));

	/* Queue 1 gets there first. */
	ASSERT_EQ(STATUS_SUCCESS, cpu_signal(dev, f1, 1));
	ASSERT_EQ(STATUS_SUCCESS, cpu_wait(dev, h, 5, WAIT_NS));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(2ull, rd(&g->data.cpu[1]));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(0ull, progress(&g->q[0]));
	EXPECT_EQ(0ull, rd(mk2.CurrentValueCpuVa));
	/* Then queue 0: its signals, then its work. */
	ASSERT_EQ(STATUS_SUCCESS, cpu_signal(dev, f0, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_EQ(1ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(5ull, rd(mh.CurrentValueCpuVa));
	EXPECT_EQ(3ull, rd(mk2.CurrentValueCpuVa));
	EXPECT_EQ(0ull, rd(mk.CurrentValueCpuVa));
}

/* ==================================================================== */
/* Context test hooks: suspend, resume, faults                           */
/* ==================================================================== */

/* A suspended context runs nothing until resumed; others keep running. */
/* User-mode submission: a queue fed by its doorbell. */
static NTSTATUS create_doorbell(D3DKMT_HANDLE queue, D3DKMT_HANDLE ring,
				D3DKMT_HANDLE control, UINT flags,
				D3DKMT_CREATE_DOORBELL *db)
{
	memset(db, 0, sizeof(*db));
	db->hHwQueue = queue;
	db->hRingBuffer = ring;
	db->hRingBufferControl = control;
	db->Flags.Value = flags;
	return D3DKMTCreateDoorbell(db);
}

static NTSTATUS destroy_doorbell(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROY_DOORBELL d = { .hDoorbell = h };

	return D3DKMTDestroyDoorbell(&d);
}

/* A command buffer that writes @v to @va and signals progress @p. */
static void ring_cs(struct __test_metadata *_metadata, struct gpu *g,
		    D3DKMT_HANDLE queue, D3DGPU_VIRTUAL_ADDRESS va, UINT64 v,
		    UINT64 p, NFENCE_CS *cs)
{
	cs_begin(_metadata, g, cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsWrite64(cs, va, v));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsSignalHwQueueProgress(cs, queue, p));
}

TEST_F(gpu, doorbell)
{
	D3DKMT_HANDLE dev = self->e.dev[0], ctx;
	D3DKMT_CREATEHWQUEUE q, kq;
	D3DKMT_CREATE_DOORBELL db, dbx;
	D3DKMT_CONNECT_DOORBELL c = { 0 };
	D3DKMT_NOTIFY_WORK_SUBMISSION n = { 0 };
	struct gpu *g = &self->g;
	struct buf ring, control;
	NFENCE_RING r, r2;
	NFENCE_CS cs;
	UINT64 i;

	if (!self->e.cfg.user_mode_submission)
		SKIP(return, "no user-mode submission");
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 4, &q));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &kq));
	make_buf(_metadata, dev, PAGE, &ring);
	make_buf(_metadata, dev, PAGE, &control);

	/* Errors first; no output is written. */
	memset(&dbx, 0, sizeof(dbx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDoorbell(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_doorbell(q.hHwQueue, ring.h, control.h, 1u << 2, &dbx));
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  create_doorbell(q.hHwQueue, ring.h, control.h, 1u << 1, &dbx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_doorbell(kq.hHwQueue, ring.h, control.h, 0, &dbx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_doorbell(ctx, ring.h, control.h, 0, &dbx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_doorbell(q.hHwQueue, ctx, control.h, 0, &dbx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_doorbell(q.hHwQueue, ring.h, ctx, 0, &dbx));
	dbx.hHwQueue = q.hHwQueue;
	dbx.hRingBuffer = ring.h;
	dbx.PrivateDriverDataSize = 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDoorbell(&dbx));
	EXPECT_EQ(0u, dbx.hDoorbell);
	EXPECT_EQ(NULL, dbx.DoorbellCPUVirtualAddress);

	ASSERT_EQ(STATUS_SUCCESS, create_doorbell(q.hHwQueue, ring.h, control.h,
						  1u << 0, &db));
	EXPECT_NE(0u, db.hDoorbell);
	ASSERT_NE(NULL, db.DoorbellCPUVirtualAddress);
	ASSERT_NE(NULL, db.DoorbellSecondaryCPUVirtualAddress);
	ASSERT_NE(NULL, db.DoorbellStatusCPUVirtualAddress);
	ASSERT_NE(NULL, db.HwQueueProgressFenceLastQueuedValueCPUVirtualAddress);
	EXPECT_EQ((UINT64)D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY,
		  *(volatile UINT64 *)db.DoorbellStatusCPUVirtualAddress);
	/* One doorbell per queue; the ring is pinned while it lives. */
	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  create_doorbell(q.hHwQueue, ring.h, control.h, 0, &dbx));
	EXPECT_EQ(STATUS_DEVICE_BUSY, destroy_allocs(dev, &ring.h, 1));
	EXPECT_EQ(STATUS_DEVICE_BUSY, destroy_allocs(dev, &control.h, 1));

	/* A user-mode queue takes no kernel-mode submission. */
	ring_cs(_metadata, g, q.hHwQueue, g->data.va, 1, 1, &cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, submit(q.hHwQueue, &cs, 1));

	/* The ring writer connects, rings and notifies as needed. */
	ASSERT_EQ(STATUS_SUCCESS,
		  NFenceRingInit(&r, &db, ring.cpu, PAGE, control.cpu));
	EXPECT_EQ(PAGE / sizeof(NFENCE_RING_ENTRY), r.NumEntries);
	ASSERT_EQ(STATUS_SUCCESS, NFenceRingSubmit(&r, NFenceCsGpuVa(&cs),
						   NFenceCsSize(&cs), 1));
	EXPECT_EQ(1u, r.Connects);
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 1, 5000000000ull));
	EXPECT_EQ(1ull, g->data.cpu[0]);
	EXPECT_EQ(1ull, *db.HwQueueProgressFenceLastQueuedValueCPUVirtualAddress);
	/* Stored after the entry's last command, the progress signal too. */
	for (i = 0; i < 1000 &&
	     __atomic_load_n(&((NFENCE_RING_CONTROL *)control.cpu)->ReadIndex,
			     __ATOMIC_ACQUIRE) != 1; i++)
		usleep(1000);
	EXPECT_EQ(1ull, ((NFENCE_RING_CONTROL *)control.cpu)->ReadIndex);
	for (i = 2; i <= 5; i++) {
		ring_cs(_metadata, g, q.hHwQueue, g->data.va, i, i, &cs);
		ASSERT_EQ(STATUS_SUCCESS, NFenceRingSubmit(&r, NFenceCsGpuVa(&cs),
							   NFenceCsSize(&cs), i));
	}
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 5, 5000000000ull));
	EXPECT_EQ(5ull, g->data.cpu[0]);

	/* The calls themselves, and their errors. */
	c.hDoorbell = db.hDoorbell;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTConnectDoorbell(&c));
	n.hDoorbell = db.hDoorbell;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTNotifyWorkSubmission(&n));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTConnectDoorbell(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTNotifyWorkSubmission(NULL));
	c.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTConnectDoorbell(&c));
	n.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTNotifyWorkSubmission(&n));
	c.Flags.Value = 0;
	n.Flags.Value = 0;
	c.hDoorbell = q.hHwQueue;
	n.hDoorbell = q.hHwQueue;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTConnectDoorbell(&c));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTNotifyWorkSubmission(&n));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceRingSubmit(&r, 8, 4, 6));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalHwQueueProgress(&cs, ctx, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceRingInit(&r, &db, ring.cpu,
							   8, control.cpu));
	/*
	 * The writer counts the entries the engine reads, as many as the
	 * allocation's whole pages hold, whatever size within them it is
	 * given; a size beyond them is refused.
	 */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceRingInit(&r2, &db, ring.cpu, PAGE + 1, control.cpu));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceRingInit(&r2, &db, ring.cpu, 2 * PAGE, control.cpu));
	ASSERT_EQ(STATUS_SUCCESS,
		  NFenceRingInit(&r2, &db, ring.cpu, PAGE - 100, control.cpu));
	EXPECT_EQ(PAGE / sizeof(NFENCE_RING_ENTRY), r2.NumEntries);

	/* A full ring: suspended, the entries cannot run. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	ring_cs(_metadata, g, q.hHwQueue, g->data.va, 6, 6, &cs);
	for (i = 0; i < r.NumEntries; i++)
		ASSERT_EQ(STATUS_SUCCESS,
			  NFenceRingSubmit(&r, NFenceCsGpuVa(&cs),
					   NFenceCsSize(&cs), 6));
	EXPECT_EQ(STATUS_DEVICE_BUSY, NFenceRingSubmit(&r, NFenceCsGpuVa(&cs),
						       NFenceCsSize(&cs), 6));
	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 6, 5000000000ull));
	/* Every entry runs; the engine's read index catches up. */
	for (i = 0; i < 5000 && r.WriteIndex !=
	     __atomic_load_n(&((NFENCE_RING_CONTROL *)control.cpu)->ReadIndex,
			     __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	EXPECT_EQ(r.WriteIndex, ((NFENCE_RING_CONTROL *)control.cpu)->ReadIndex);

	/* Destroy: the handle goes, the ring can be destroyed. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_doorbell(db.hDoorbell));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_doorbell(db.hDoorbell));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceRingInit(&r2, &db, ring.cpu, PAGE, control.cpu));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyDoorbell(NULL));
	/* A queue's destruction destroys its doorbell. */
	ASSERT_EQ(STATUS_SUCCESS, create_doorbell(q.hHwQueue, ring.h, 0, 0,
						  &db));
	EXPECT_EQ(NULL, db.DoorbellSecondaryCPUVirtualAddress);
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_doorbell(db.hDoorbell));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &ring.h, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &control.h, 1));
}

/*
 * A doorbell whose pages cannot be mapped: the thread that creates it
 * runs under a seccomp filter that refuses every shared mmap() with
 * ENODEV (what a mapping of an unplugged device gets), so the kernel's
 * doorbell is made and its mapping fails. The status is the errno's
 * (STATUS_DEVICE_REMOVED), nothing is written back, and the kernel's
 * doorbell is gone: the queue takes another one and the ring is free.
 * Private mappings (malloc's) are left alone.
 */
struct refused_doorbell {
	D3DKMT_HANDLE queue, ring;
	D3DKMT_CREATE_DOORBELL db;
	NTSTATUS st;
	int filter_err;
};

static void *create_doorbell_mmap_refused(void *arg)
{
	struct refused_doorbell *r = arg;
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENODEV),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	/* Only this thread: no SECCOMP_FILTER_FLAG_TSYNC. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		r->filter_err = errno;
		return NULL;
	}
	r->st = create_doorbell(r->queue, r->ring, 0, 0, &r->db);
	return NULL;
}

TEST_F(gpu, doorbell_map_refused)
{
	D3DKMT_HANDLE dev = self->e.dev[0], ctx;
	struct refused_doorbell r = { 0 };
	D3DKMT_CREATE_DOORBELL db;
	D3DKMT_CREATEHWQUEUE q;
	struct buf ring;
	pthread_t t;

	if (!self->e.cfg.user_mode_submission)
		SKIP(return, "no user-mode submission");
	if (on_fake_driver())
		SKIP(return, "the fake driver has no doorbells");
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 4, &q));
	make_buf(_metadata, dev, PAGE, &ring);
	r.queue = q.hHwQueue;
	r.ring = ring.h;
	ASSERT_EQ(0, pthread_create(&t, NULL, create_doorbell_mmap_refused,
				    &r));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, r.filter_err);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, r.st);
	EXPECT_EQ(0u, r.db.hDoorbell);
	EXPECT_EQ(NULL, r.db.DoorbellCPUVirtualAddress);
	EXPECT_EQ(NULL, r.db.DoorbellStatusCPUVirtualAddress);

	/* The kernel's doorbell went with the failure. */
	ASSERT_EQ(STATUS_SUCCESS, create_doorbell(q.hHwQueue, ring.h, 0, 0,
						  &db));
	ASSERT_NE(NULL, db.DoorbellCPUVirtualAddress);
	EXPECT_EQ(STATUS_SUCCESS, destroy_doorbell(db.hDoorbell));
	EXPECT_EQ(STATUS_SUCCESS, destroy_allocs(dev, &ring.h, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

TEST_F(gpu, suspend_and_resume)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], ctx = g->ctx[0], f;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_NFENCE_CONTEXT_STATE st;
	NFENCE_CS cs;

	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(0u, st.Flags.Value);
	EXPECT_EQ((UINT)D3DKMT_NFENCE_FAULT_NONE, (UINT)st.FaultReason);
	EXPECT_EQ(0ull, st.FaultGpuVa);

	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(1u, (UINT)st.Flags.Suspended);
	EXPECT_EQ(0u, (UINT)st.Flags.Faulted);
	EXPECT_EQ(0u, (UINT)st.Flags.DeviceLost);
	/* Suspending a suspended context changes nothing. */
	EXPECT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(1u, (UINT)st.Flags.Suspended);

	/* Submissions are accepted, not run. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 1);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &g->q[0], 1, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	/* The other context runs. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 8, 2);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(2ull, rd(&g->data.cpu[1]));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));

	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(0u, st.Flags.Value);
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_EQ(1ull, rd(&g->data.cpu[0]));
	/* Resuming a running context changes nothing. */
	EXPECT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));

	/* Suspended while its queue waits on a fence: stays stopped after. */
	f = fence(_metadata, dev, 0, 0, &m);
	cs_begin(_metadata, g, &cs);
	NFenceCsWaitNativeFenceUnlogged(&cs, &m, 1);
	NFenceCsWrite64(&cs, g->data.va + 16, 3);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 2));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &g->q[0], 2, QUIET_NS));
	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 1));
	EXPECT_EQ(STATUS_TIMEOUT, progress_wait(dev, &g->q[0], 2, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[2]));
	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 2, WAIT_NS));
	EXPECT_EQ(3ull, rd(&g->data.cpu[2]));

	/* Not a context. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSuspendContext(g->q[0].hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceResumeContext(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceResumeContext(0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_state(f, &st));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryContextState(ctx, NULL));
}

struct blocked_submit {
	D3DKMT_HANDLE queue;
	const NFENCE_CS *cs;
	UINT64 progress;
	NTSTATUS st;
	pid_t tid;
	int done;
};

static void *blocked_submit_thread(void *arg)
{
	struct blocked_submit *b = arg;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->st = submit(b->queue, b->cs, b->progress);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Context 0 suspended, its queue filled with DRM_NFENCE_MAX_QUEUED
 * submissions of @cs, and a thread @t submitting one more (@b), which
 * must wait for room.
 */
static void submit_until_blocked(struct __test_metadata *_metadata,
				 struct gpu *g, const NFENCE_CS *cs,
				 struct blocked_submit *b, pthread_t *t)
{
	D3DKMT_HANDLE q = g->q[0].hHwQueue;
	UINT64 i;

	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(g->ctx[0]));
	for (i = 1; i <= DRM_NFENCE_MAX_QUEUED; i++)
		ASSERT_EQ(STATUS_SUCCESS, submit(q, cs, i));
	memset(b, 0, sizeof(*b));
	b->queue = q;
	b->cs = cs;
	b->progress = DRM_NFENCE_MAX_QUEUED + 1;
	ASSERT_EQ(0, pthread_create(t, NULL, blocked_submit_thread, b));
}

/* A queue holding 256 pending submissions makes the next one wait. */
TEST_F(gpu, submit_waits_for_room)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	struct blocked_submit b;
	pthread_t t;
	NFENCE_CS cs;

	if (on_fake_driver())
		SKIP(return, "the fake driver cannot block a submission");
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0x77);
	submit_until_blocked(_metadata, g, &cs, &b, &t);
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0ull, progress(&g->q[0]));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));

	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(g->ctx[0]));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, b.st);
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0],
						DRM_NFENCE_MAX_QUEUED + 1,
						WAIT_NS));
	EXPECT_EQ(0x77ull, rd(&g->data.cpu[0]));
}

static int restart_signals;

static void count_restart_signal(int sig)
{
	(void)sig;
	__atomic_add_fetch(&restart_signals, 1, __ATOMIC_RELAXED);
}

/* Whether thread @tid of this process is asleep (state S in its stat). */
static bool thread_sleeping(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * A submission waiting for room is restarted after a signal whose handler
 * was installed without SA_RESTART (the ioctl returns -EINTR; libnfence,
 * through drmIoctl(), issues it again): the handler runs, the submission
 * goes on waiting, and succeeds once there is room.
 */
TEST_F(gpu, submit_waiting_for_room_restarts_after_signal)
{
	struct sigaction sa = { .sa_handler = count_restart_signal }, old;
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	struct blocked_submit b;
	pid_t tid = 0;
	pthread_t t;
	NFENCE_CS cs;
	int tries;

	if (on_fake_driver())
		SKIP(return, "the fake driver cannot block a submission");
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
	__atomic_store_n(&restart_signals, 0, __ATOMIC_RELAXED);
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0x78);
	submit_until_blocked(_metadata, g, &cs, &b, &t);
	/* Asleep in the ioctl, waiting for room: then the signal. */
	for (tries = 0; tries < 500; tries++) {
		tid = __atomic_load_n(&b.tid, __ATOMIC_ACQUIRE);
		if (tid && thread_sleeping(tid))
			break;
		usleep(10000);
	}
	ASSERT_TRUE(tid && thread_sleeping(tid));
	usleep(QUIET_NS / 1000);
	ASSERT_EQ(0, pthread_kill(t, SIGUSR1));
	for (tries = 0; tries < 500 &&
	     !__atomic_load_n(&restart_signals, __ATOMIC_RELAXED); tries++)
		usleep(10000);
	EXPECT_EQ(1, __atomic_load_n(&restart_signals, __ATOMIC_RELAXED));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE));
	EXPECT_TRUE(thread_sleeping(tid));

	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(g->ctx[0]));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, b.st);
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0],
						DRM_NFENCE_MAX_QUEUED + 1,
						WAIT_NS));
	EXPECT_EQ(0x78ull, rd(&g->data.cpu[0]));
	sigaction(SIGUSR1, &old, NULL);
}

/*
 * A GPU write to a read-only VA (a MonitoredValue) faults the context:
 * NFenceQueryContextState says where and why, pending work is dropped,
 * progress fences are AlwaysSignaled, and everything submitted to it after
 * is STATUS_DEVICE_REMOVED. Other contexts keep running.
 */
TEST_F(gpu, fault_stops_the_context)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], ctx = g->ctx[0];
	D3DKMT_HANDLE q = g->q[0].hHwQueue, f;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_NFENCE_CONTEXT_STATE st;
	D3DKMT_CREATEHWQUEUE q2;
	NFENCE_CS cs, later;

	f = fence(_metadata, dev, 0, 0, &m);
	/* Queue the faulting buffer and one behind it, then let them run. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 1);
	NFenceCsWrite64(&cs, m.MonitoredValueGpuVa, 5);
	NFenceCsWrite64(&cs, g->data.va + 8, 2);
	ASSERT_EQ(STATUS_SUCCESS, submit(q, &cs, 1));
	cs_begin(_metadata, g, &later);
	NFenceCsWrite64(&later, g->data.va + 16, 3);
	ASSERT_EQ(STATUS_SUCCESS, submit(q, &later, 2));
	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));

	/* Its progress fence is AlwaysSignaled: any value is reached. */
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1000, WAIT_NS));
	EXPECT_LE(ALWAYS_SIGNALED, progress(&g->q[0]));
	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(1u, (UINT)st.Flags.Faulted);
	EXPECT_EQ(0u, (UINT)st.Flags.Suspended);
	EXPECT_EQ(0u, (UINT)st.Flags.DeviceLost);
	EXPECT_EQ((UINT)D3DKMT_NFENCE_FAULT_PAGE, (UINT)st.FaultReason);
	EXPECT_EQ(m.MonitoredValueGpuVa, st.FaultGpuVa);
	EXPECT_EQ(1ull, rd(&g->data.cpu[0]));	/* before the fault */
	EXPECT_EQ(0ull, rd(&g->data.cpu[1]));	/* after it */
	EXPECT_EQ(0ull, rd(&g->data.cpu[2]));	/* dropped */
	EXPECT_EQ(0ull, rd(m.CurrentValueCpuVa));

	EXPECT_EQ(STATUS_DEVICE_REMOVED, submit(q, &later, 3));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, queue_wait(q, f, 1));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, queue_signal(&q, 1, f, 1));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, create_queue(ctx, 0, &q2));
	EXPECT_EQ(0u, q2.hHwQueue);
	/* Suspending or resuming it does not clear the fault. */
	EXPECT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, context_state(ctx, &st));
	EXPECT_EQ(1u, (UINT)st.Flags.Faulted);

	/* The other context of the device is fine. */
	ASSERT_EQ(STATUS_SUCCESS, context_state(g->ctx[1], &st));
	EXPECT_EQ(0u, st.Flags.Value);
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 24, 4);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(4ull, rd(&g->data.cpu[3]));
	EXPECT_EQ(1ull, progress(&g->q[1]));

	/* A faulted context is destroyed like any other. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

static NTSTATUS device_state(D3DKMT_HANDLE dev, D3DKMT_DEVICESTATE_TYPE type,
			     D3DKMT_GETDEVICESTATE *out)
{
	memset(out, 0x55, sizeof(*out));
	out->hDevice = dev;
	out->StateType = type;
	return D3DKMTGetDeviceState(out);
}

static NTSTATUS mark_error(D3DKMT_HANDLE dev, D3DKMT_DEVICE_ERROR_REASON r)
{
	D3DKMT_MARKDEVICEASERROR m = { .hDevice = dev, .Reason = r };

	return D3DKMTMarkDeviceAsError(&m);
}

/* drmSyncobjTimelineWait for one point: 0 or -errno. */
static int point_wait(int fd, uint32_t syncobj, uint64_t point, UINT64 ns)
{
	if (drmSyncobjTimelineWait(fd, &syncobj, &point, 1,
				   (int64_t)(now_ns() + ns),
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return -errno;
	return 0;
}

/*
 * NFenceBindSyncobjPoint: the point of a syncobj on the adapter's file
 * does not exist until a CPU signal reaches the value, then it is there,
 * signaled (a WAIT_FOR_SUBMIT wait returns, SYNCOBJ_QUERY says so); a
 * value already reached attaches at once; the fence's device put in error
 * makes a pending point appear. D3DKMTCreateSyncFile is always refused.
 */
TEST_F(nf, bind_syncobj_point)
{
	D3DKMT_HANDLE dev = self->e.dev[0], devb = self->e.devb, f, fb;
	D3DKMT_CREATESYNCFILE csf;
	uint32_t s = 0, sb = 0;
	uint64_t last = 0;
	int fd;

	memset(&csf, 0, sizeof(csf));
	csf.hDevice = dev;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateSyncFile(&csf));
	EXPECT_EQ(0u, csf.hSyncFile);
	if (on_fake_driver())
		SKIP(return, "the fake driver has no drm_syncobj");

	fd = NFenceGetAdapterFd(self->e.adapters[0].hAdapter);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &s));
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &sb));
	f = fence(_metadata, dev, 0, 0, NULL);

	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceBindSyncobjPoint(dev, f, 5, s, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceBindSyncobjPoint(dev, f, 5, 0, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceBindSyncobjPoint(dev, 0, 5, s, 1));

	ASSERT_EQ(STATUS_SUCCESS, NFenceBindSyncobjPoint(dev, f, 5, s, 2));
	EXPECT_EQ(-ETIME, point_wait(fd, s, 2, QUIET_NS));
	ASSERT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 4));
	EXPECT_EQ(-ETIME, point_wait(fd, s, 2, QUIET_NS));
	ASSERT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 5));
	EXPECT_EQ(0, point_wait(fd, s, 2, WAIT_NS));
	EXPECT_EQ(0, drmSyncobjQuery(fd, &s, &last, 1));
	EXPECT_EQ(2u, last);

	/* Reached already: attached before the call returns. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceBindSyncobjPoint(dev, f, 5, s, 3));
	EXPECT_EQ(0, drmSyncobjQuery(fd, &s, &last, 1));
	EXPECT_EQ(3u, last);

	/* The device in error: the pending point appears. */
	fb = fence(_metadata, devb, 0, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, NFenceBindSyncobjPoint(devb, fb, 9, sb, 1));
	EXPECT_EQ(-ETIME, point_wait(fd, sb, 1, QUIET_NS));
	ASSERT_EQ(STATUS_SUCCESS,
		  mark_error(devb, D3DKMT_DEVICE_ERROR_REASON_GENERIC));
	EXPECT_EQ(0, point_wait(fd, sb, 1, WAIT_NS));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(0, drmSyncobjDestroy(fd, s));
	EXPECT_EQ(0, drmSyncobjDestroy(fd, sb));
}

/*
 * NFenceSignalFromSyncobjPoint / NFenceSignalFromSyncFile: a point that
 * exists signals the fence to the value (a point already signaled, before
 * the call returns; one signaled later from the CPU through
 * DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL of another file that imported the
 * syncobj, once it signals); a sync_file exported from a point does the
 * same. A point nobody submitted, a fence opened NoSignal and an fd that
 * is no sync_file are refused.
 */
TEST_F(nf, signal_from_syncobj)
{
	D3DKMT_HANDLE dev = self->e.dev[0], f;
	uint32_t s = 0, bin = 0;
	uint64_t point = 2;
	int fd, sf = -1;

	if (on_fake_driver())
		SKIP(return, "the fake driver has no drm_syncobj");
	fd = NFenceGetAdapterFd(self->e.adapters[0].hAdapter);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &s));
	f = fence(_metadata, dev, 0, 0, NULL);

	/* Point 2 does not exist yet. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncobjPoint(dev, f, 5, s, 2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncobjPoint(dev, f, 5, 0, 2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncobjPoint(0, f, 5, s, 2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncFile(dev, f, 5, -1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceSignalFromSyncFile(dev, f, 5, fd));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, f, 1, QUIET_NS));

	ASSERT_EQ(0, drmSyncobjTimelineSignal(fd, &s, &point, 1));
	ASSERT_EQ(STATUS_SUCCESS, NFenceSignalFromSyncobjPoint(dev, f, 5, s, 2));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, 5, WAIT_NS));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, f, 6, QUIET_NS));

	/* The point as a sync_file. */
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &bin));
	ASSERT_EQ(0, drmSyncobjTransfer(fd, bin, 0, s, point, 0));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(fd, bin, &sf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceSignalFromSyncFile(dev, f, 7, sf));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, 7, WAIT_NS));
	close(sf);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(0, drmSyncobjDestroy(fd, s));
	EXPECT_EQ(0, drmSyncobjDestroy(fd, bin));
}

/* A failed D3DKMTGetDeviceState writes nothing. */
static void expect_state_error(struct __test_metadata *_metadata,
			       D3DKMT_HANDLE dev, int type, NTSTATUS want)
{
	D3DKMT_GETDEVICESTATE s, before;

	device_state(dev, (D3DKMT_DEVICESTATE_TYPE)type, &s);
	before = s;
	EXPECT_EQ(want, D3DKMTGetDeviceState(&s)) TH_LOG("type %d", type);
	EXPECT_EQ(0, memcmp(&s, &before, sizeof(s))) TH_LOG("type %d", type);
}

/*
 * D3DKMTGetDeviceState and D3DKMTMarkDeviceAsError: ACTIVE, then the first
 * GPU fault of a context (ERROR_DMAPAGEFAULT, the VA and the reason, the
 * other context running on), then the device marked in error (STOPPED):
 * its fences AlwaysSignaled with a blocked CPU waiter released, its calls
 * refused with STATUS_DEVICE_REMOVED.
 */
TEST_F(gpu, device_state_and_mark_error)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], f, ctx;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_GETDEVICESTATE s;
	D3DKMT_CREATEHWQUEUE q2;
	struct blocked_wait b;
	NFENCE_CS cs;
	pthread_t t;
	int type;

	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ACTIVE, (UINT)s.ExecutionState);
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_PAGE_FAULT, &s));
	EXPECT_EQ(0ull, s.PageFaultState.FaultedVirtualAddress);
	EXPECT_EQ(0u, (UINT)s.PageFaultState.FaultErrorCode.IsDeviceSpecificCode);
	EXPECT_EQ(0u, (UINT)s.PageFaultState.FaultErrorCode.DeviceSpecificCode);
	EXPECT_EQ(0ull, s.PageFaultState.FaultedPrimitiveAPISequenceNumber);

	/* Invalid input, each with an otherwise valid call. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTGetDeviceState(NULL));
	for (type = -1; type <= 8; type++) {
		if (type == D3DKMT_DEVICESTATE_EXECUTION ||
		    type == D3DKMT_DEVICESTATE_PAGE_FAULT)
			continue;
		expect_state_error(_metadata, dev, type,
				   type >= D3DKMT_DEVICESTATE_EXECUTION &&
				   type <= D3DKMT_DEVICESTATE_PRESENT_QUEUE ?
				   STATUS_NOT_SUPPORTED :
				   STATUS_INVALID_PARAMETER);
	}
	expect_state_error(_metadata, 0, D3DKMT_DEVICESTATE_EXECUTION,
			   STATUS_INVALID_PARAMETER);
	expect_state_error(_metadata, g->ctx[0], D3DKMT_DEVICESTATE_EXECUTION,
			   STATUS_INVALID_PARAMETER);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTMarkDeviceAsError(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  mark_error(dev, (D3DKMT_DEVICE_ERROR_REASON)0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  mark_error(dev, (D3DKMT_DEVICE_ERROR_REASON)0x80000001u));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  mark_error(g->ctx[0], D3DKMT_DEVICE_ERROR_REASON_GENERIC));
	/* None of them marked the device. */
	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ACTIVE, (UINT)s.ExecutionState);

	/* A page fault on context 0: a write to a read-only MonitoredValue. */
	f = fence(_metadata, dev, 0, 0, &m);
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, m.MonitoredValueGpuVa, 5);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT, (UINT)s.ExecutionState);
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_PAGE_FAULT, &s));
	EXPECT_EQ(m.MonitoredValueGpuVa, s.PageFaultState.FaultedVirtualAddress);
	EXPECT_EQ(1u, (UINT)s.PageFaultState.FaultErrorCode.IsDeviceSpecificCode);
	EXPECT_EQ((UINT)D3DKMT_NFENCE_FAULT_PAGE,
		  (UINT)s.PageFaultState.FaultErrorCode.DeviceSpecificCode);
	EXPECT_EQ(0u, s.PageFaultState.FaultedPipelineStage);
	EXPECT_EQ(0u, s.PageFaultState.PageFaultFlags);
	/* The device is not in error: context 1 runs, contexts are created. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 7);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(7ull, rd(&g->data.cpu[0]));
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 1, 0, &ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));

	/* A CPU waiter on the device's fence, released by the error. */
	blocked_wait_init(&b, dev, f, 100, false);
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_thread, &b));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&b));
	EXPECT_EQ(STATUS_SUCCESS,
		  mark_error(dev, D3DKMT_DEVICE_ERROR_REASON_GENERIC));
	ASSERT_EQ(0, join_within(t, 1000 * MS));
	EXPECT_EQ(STATUS_SUCCESS, b.st);
	EXPECT_EQ(ALWAYS_SIGNALED, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, f, UINT64_MAX, 0));

	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_STOPPED, (UINT)s.ExecutionState);
	/* The fault is still reported. */
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_PAGE_FAULT, &s));
	EXPECT_EQ(m.MonitoredValueGpuVa, s.PageFaultState.FaultedVirtualAddress);

	/* Later calls on the device: STATUS_DEVICE_REMOVED. */
	EXPECT_EQ(STATUS_DEVICE_REMOVED, create_context(dev, 1, 0, &ctx));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, create_queue(g->ctx[1], 0, &q2));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va + 8, 8);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, submit(g->q[1].hHwQueue, &cs, 2));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, queue_wait(g->q[1].hHwQueue, f, 1));
	/* Its queues' progress fences are AlwaysSignaled too. */
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], UINT64_MAX, 0));

	/* Marking it again succeeds and changes nothing. */
	EXPECT_EQ(STATUS_SUCCESS,
		  mark_error(dev, D3DKMT_DEVICE_ERROR_REASON_DRIVER_ERROR));
	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_STOPPED, (UINT)s.ExecutionState);

	/* The other device of the process is not affected. */
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(self->e.devb, D3DKMT_DEVICESTATE_EXECUTION, &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ACTIVE, (UINT)s.ExecutionState);
}

/*
 * An invalid command first: ERROR_DMAFAULT, the command's address and the
 * BAD_COMMAND code; the device is not in error.
 */
TEST_F(gpu, device_state_after_bad_command)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	D3DKMT_GETDEVICESTATE s;
	D3DGPU_VIRTUAL_ADDRESS va;
	NFENCE_CS cs;
	UINT *word;

	/*
	 * The submission checks the commands: break one while the context
	 * is suspended, after the submission and before it runs.
	 */
	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(g->ctx[0]));
	cs_begin(_metadata, g, &cs);
	va = NFenceCsGpuVa(&cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	/* Opcode 0x7f does not exist. */
	word = (UINT *)((char *)g->cmd.cpu + (va - g->cmd.va));
	__atomic_store_n(&word[0], 0x7fu | (DRM_NFENCE_CS_NOP_WORDS << 16),
			 __ATOMIC_RELEASE);
	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(g->ctx[0]));
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));

	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT,
		  (UINT)s.ExecutionState);
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_PAGE_FAULT, &s));
	EXPECT_EQ(va, s.PageFaultState.FaultedVirtualAddress);
	EXPECT_EQ(1u, (UINT)s.PageFaultState.FaultErrorCode.IsDeviceSpecificCode);
	EXPECT_EQ((UINT)D3DKMT_NFENCE_FAULT_BAD_COMMAND,
		  (UINT)s.PageFaultState.FaultErrorCode.DeviceSpecificCode);
	/* Context 1 of the device still runs. */
	cs_begin(_metadata, g, &cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
}

/* A queue that hangs past the TDR timeout: the device reports RESET. */
TEST_F(gpu, device_state_after_hang)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0];
	unsigned int tdr_ms = 2000;
	D3DKMT_GETDEVICESTATE s;
	NFENCE_CS cs;

	if (on_fake_driver())
		SKIP(return, "the fake driver has no TDR");
	param_uint("tdr_timeout_ms", &tdr_ms);
	if (!tdr_ms)
		SKIP(return, "tdr_timeout_ms=0: no TDR");
	cs_begin(_metadata, g, &cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsWork(&cs, (tdr_ms + 2000ull) * MS));
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	/* The TDR makes the progress fence AlwaysSignaled. */
	ASSERT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], UINT64_MAX,
						tdr_ms * MS + WAIT_NS));
	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_RESET, (UINT)s.ExecutionState);
	/* A hang is no page fault. */
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_PAGE_FAULT, &s));
	EXPECT_EQ(0ull, s.PageFaultState.FaultedVirtualAddress);
	/* Marking it afterwards keeps the first cause. */
	EXPECT_EQ(STATUS_SUCCESS,
		  mark_error(dev, D3DKMT_DEVICE_ERROR_REASON_GENERIC));
	ASSERT_EQ(STATUS_SUCCESS, device_state(dev, D3DKMT_DEVICESTATE_EXECUTION,
					       &s));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_RESET, (UINT)s.ExecutionState);
}

/*
 * A WDDM 2.x monitored fence through D3DKMTCreateSynchronizationObject2
 * and D3DKMTOpenSyncObjectFromNtHandle2: a GPU signal by raw VA (no
 * MonitoredValue) releases a CPU waiter, a queued wait holds engine 1
 * until the CPU signals it, and another device of the adapter opens it
 * from its NT handle with the same value.
 */
TEST_F(gpu, monitored_fence_through_d3dkmt)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], f;
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o;
	const volatile UINT64 *cpu;
	struct blocked_wait bw;
	HANDLE nt = NULL;
	NFENCE_CS cs;
	pthread_t t;

	memset(&c, 0, sizeof(c));
	c.hDevice = dev;
	c.Info.Type = D3DDDI_MONITORED_FENCE;
	c.Info.Flags.Shared = 1;
	c.Info.Flags.NtSecuritySharing = 1;
	c.Info.MonitoredFence.InitialFenceValue = 3;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateSynchronizationObject2(&c));
	f = c.hSyncObject;
	cpu = c.Info.MonitoredFence.FenceValueCPUVirtualAddress;
	ASSERT_NE(NULL, cpu);
	ASSERT_NE(0ull, c.Info.MonitoredFence.FenceValueGPUVirtualAddress);
	EXPECT_EQ(3ull, rd(cpu));

	/* Engine 0 signals it to 4 by its GPU VA: the CPU waiter wakes. */
	blocked_wait_init(&bw, dev, f, 4, true);
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_thread, &bw));
	usleep(QUIET_NS / 1000);
	EXPECT_FALSE(wait_done(&bw));
	cs_begin(_metadata, g, &cs);
	NFenceCsFenceSignalUnlogged(&cs, c.Info.MonitoredFence.FenceValueGPUVirtualAddress,
			    0, 4);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	ASSERT_EQ(0, join_within(t, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, bw.st);
	EXPECT_EQ(4ull, rd(cpu));

	/* Engine 1: a queued wait for 6, then a write. */
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(g->q[1].hHwQueue, f, 6));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0x66);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[1].hHwQueue, &cs, 1));
	usleep(QUIET_NS / 1000);
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));

	/* Another device opens it and signals 6 from the CPU. */
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTShareObjects(1, &f, NULL, 0, &nt));
	memset(&o, 0, sizeof(o));
	o.hNtHandle = nt;
	o.hDevice = self->e.devb;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenSyncObjectFromNtHandle2(&o));
	close((int)(intptr_t)nt);
	ASSERT_NE(NULL, o.MonitoredFence.FenceValueCPUVirtualAddress);
	EXPECT_EQ(4ull, rd(o.MonitoredFence.FenceValueCPUVirtualAddress));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->e.devb, o.hSyncObject, 6));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[1], 1, WAIT_NS));
	EXPECT_EQ(0x66ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(6ull, rd(cpu));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(o.hSyncObject));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
}

/*
 * The context-level GPU calls: a WaitForSynchronizationObjectFromGpu on a
 * monitored fence holds the context's own queue, so a
 * SignalSynchronizationObjectFromGpu of a native fence behind it happens
 * only once the CPU signals the monitored fence; the context's hardware
 * queues are not held. FromGpu2 signals on both contexts.
 */
TEST_F(gpu, context_level_wait_and_signal)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], m, n;
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s2;
	UINT64 wv = 5, sv = 1, sv2 = 2;
	NFENCE_CS cs;

	memset(&c, 0, sizeof(c));
	c.hDevice = dev;
	c.Info.Type = D3DDDI_MONITORED_FENCE;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateSynchronizationObject2(&c));
	m = c.hSyncObject;
	n = fence(_metadata, dev, 0, 0, NULL);

	memset(&w, 0, sizeof(w));
	w.hContext = g->ctx[0];
	w.ObjectCount = 1;
	w.ObjectHandleArray = &m;
	w.MonitoredFenceValueArray = &wv;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromGpu(&w));
	memset(&s, 0, sizeof(s));
	s.hContext = g->ctx[0];
	s.ObjectCount = 1;
	s.ObjectHandleArray = &n;
	s.MonitoredFenceValueArray = &sv;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromGpu(&s));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, n, 1, QUIET_NS));

	/* The context's hardware queue runs on meanwhile. */
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0x77);
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1, WAIT_NS));
	EXPECT_EQ(0x77ull, rd(&g->data.cpu[0]));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, n, 1, QUIET_NS));

	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, m, 5));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 1, WAIT_NS));

	/* FromGpu2 on both contexts. */
	memset(&s2, 0, sizeof(s2));
	s2.ObjectCount = 1;
	s2.ObjectHandleArray = &n;
	s2.BroadcastContextCount = 2;
	s2.BroadcastContextArray = g->ctx;
	s2.MonitoredFenceValueArray = &sv2;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromGpu2(&s2));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 2, WAIT_NS));
	s2.Flags.AllowFenceRewind = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSignalSynchronizationObjectFromGpu2(&s2));

	/*
	 * The other context's own queue: a signal of the monitored fence
	 * behind its wait for the native one; a fence is no context.
	 */
	w.ObjectHandleArray = &n;
	w.hContext = g->ctx[1];
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromGpu(&w));
	s.hContext = g->ctx[1];
	s.ObjectHandleArray = &m;
	sv = 7;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromGpu(&s));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, m, 7, QUIET_NS));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, n, 5));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, m, 7, WAIT_NS));
	w.hContext = n;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromGpu(&w));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(m));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(n));
}

/* D3DKMTSubmitCommand of the @cs buffer on the @n contexts at @ctxs. */
static NTSTATUS submit_command(const D3DKMT_HANDLE *ctxs, UINT n,
			       const NFENCE_CS *cs)
{
	D3DKMT_SUBMITCOMMAND s;

	memset(&s, 0, sizeof(s));
	s.Commands = NFenceCsGpuVa(cs);
	s.CommandLength = NFenceCsSize(cs);
	s.BroadcastContextCount = n;
	memcpy(s.BroadcastContext, ctxs, n * sizeof(*ctxs));
	return D3DKMTSubmitCommand(&s);
}

static NTSTATUS context_gpu_wait(D3DKMT_HANDLE ctx, D3DKMT_HANDLE object,
				 UINT64 value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = {
		.hContext = ctx,
		.ObjectCount = 1,
		.ObjectHandleArray = &object,
		.MonitoredFenceValueArray = &value,
	};

	return D3DKMTWaitForSynchronizationObjectFromGpu(&w);
}

static NTSTATUS context_gpu_signal(D3DKMT_HANDLE ctx, D3DKMT_HANDLE object,
				   UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = {
		.hContext = ctx,
		.ObjectCount = 1,
		.ObjectHandleArray = &object,
		.MonitoredFenceValueArray = &value,
	};

	return D3DKMTSignalSynchronizationObjectFromGpu(&s);
}

/*
 * D3DKMTSubmitCommand on the kernel's CMP: the command buffer goes to the
 * context's own queue behind a WaitForSynchronizationObjectFromGpu, so it
 * does not run before the CPU signals the awaited fence; a
 * SignalSynchronizationObjectFromGpu queued after it tells when it ran.
 * A broadcast runs the buffer on each context; a context of
 * D3DKMTCreateHwContext takes it too; what is refused.
 */
TEST_F(gpu, submit_command_after_context_wait)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], m, n, hc, cb, ctxs[2];
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	D3DKMT_CREATEHWCONTEXT chc;
	D3DKMT_DESTROYHWCONTEXT dhc;
	D3DKMT_SUBMITCOMMAND s;
	NFENCE_CS cs, bc;
	int i;

	memset(&c, 0, sizeof(c));
	c.hDevice = dev;
	c.Info.Type = D3DDDI_MONITORED_FENCE;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateSynchronizationObject2(&c));
	m = c.hSyncObject;
	n = fence(_metadata, dev, 0, 0, NULL);

	/* Held: neither the buffer nor the signal behind it runs. */
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_wait(g->ctx[0], m, 5));
	cs_begin(_metadata, g, &cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, g->data.va, 0x5c));
	ASSERT_EQ(STATUS_SUCCESS, submit_command(&g->ctx[0], 1, &cs));
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_signal(g->ctx[0], n, 1));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, n, 1, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[0]));
	/* More buffers queue behind it, each with the next progress value. */
	for (i = 1; i <= 3; i++) {
		cs_begin(_metadata, g, &bc);
		NFenceCsWrite64(&bc, g->data.va + 8 * i, 0x60 + i);
		ASSERT_EQ(STATUS_SUCCESS, submit_command(&g->ctx[0], 1, &bc));
	}
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_signal(g->ctx[0], n, 2));
	EXPECT_EQ(0ull, rd(&g->data.cpu[3]));

	/* Released by the CPU signal: the buffers ran, then the signals. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, m, 5));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 2, WAIT_NS));
	EXPECT_EQ(0x5cull, rd(&g->data.cpu[0]));
	for (i = 1; i <= 3; i++) {
		EXPECT_EQ((UINT64)(0x60 + i), rd(&g->data.cpu[i]));
	}

	/*
	 * Broadcast to a hardware context and ctx[1]: the first runs it at
	 * once, the second once its own wait is released.
	 */
	memset(&chc, 0, sizeof(chc));
	chc.hDevice = dev;
	chc.NodeOrdinal = 0;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateHwContext(&chc));
	hc = chc.hHwContext;
	ctxs[0] = hc;
	ctxs[1] = g->ctx[1];
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_wait(g->ctx[1], m, 6));
	cs_begin(_metadata, g, &bc);
	NFenceCsWrite64(&bc, g->data.va + 64, 0x7a);
	ASSERT_EQ(STATUS_SUCCESS, submit_command(ctxs, 2, &bc));
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_signal(hc, n, 3));
	ASSERT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 3, WAIT_NS));
	EXPECT_EQ(0x7aull, rd(&g->data.cpu[8]));
	g->data.cpu[8] = 0;
	ASSERT_EQ(STATUS_SUCCESS, context_gpu_signal(g->ctx[1], n, 4));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(dev, n, 4, QUIET_NS));
	EXPECT_EQ(0ull, rd(&g->data.cpu[8]));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, m, 6));
	ASSERT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 4, WAIT_NS));
	EXPECT_EQ(0x7aull, rd(&g->data.cpu[8]));

	/* What is refused: flags, counts, lengths, contexts. */
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->e.devb, 0, 0, &cb));
	memset(&s, 0, sizeof(s));
	s.Commands = NFenceCsGpuVa(&bc);
	s.CommandLength = NFenceCsSize(&bc);
	s.BroadcastContextCount = 2;
	s.BroadcastContext[0] = hc;
	s.BroadcastContext[1] = cb;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = n;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = g->ctx[1];
	s.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.Flags.Value = 0;
	s.BroadcastContextCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContextCount = 65;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContextCount = 2;
	s.CommandLength = 12;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.CommandLength = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	/* The kernel's check: a buffer in no allocation. */
	s.CommandLength = 8;
	s.Commands = 0x10;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	chc.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(&chc));

	/* Either destroy call destroys either kind of context. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(hc));
	dhc.hHwContext = cb;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTDestroyHwContext(&dhc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwContext(&dhc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, submit_command(&hc, 1, &bc));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(m));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(n));
}

/*
 * WSL's other entry points: D3DKMTCreateContext makes a context that runs
 * GPU work (a hardware queue submission and a context-level GPU signal)
 * and hands out no WDDM 1.x buffers; D3DKMTCloseDxCoreDevice leaves
 * adapters and devices usable; every other call of WSL's library that
 * nfence lacks returns STATUS_NOT_SUPPORTED.
 */
TEST_F(gpu, libdxg_entry_points)
{
	struct gpu *g = &self->g;
	D3DKMT_HANDLE dev = self->e.dev[0], n;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s;
	D3DKMT_CREATECONTEXT c;
	D3DKMT_CREATEHWQUEUE q;
	UINT64 sv = 3;
	NFENCE_CS cs;

	memset(&c, 0, sizeof(c));
	c.hDevice = dev;
	c.NodeOrdinal = 1;
	c.CommandBufferSize = 7;
	c.CommandBuffer = 0x1000;
	c.ClientHint = D3DKMT_CLIENTHINT_OPENGL;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContext(&c));
	EXPECT_NE(0u, c.hContext);
	EXPECT_EQ(NULL, c.pCommandBuffer);
	EXPECT_EQ(0u, c.CommandBufferSize);
	EXPECT_EQ(NULL, c.pAllocationList);
	EXPECT_EQ(0u, c.AllocationListSize);
	EXPECT_EQ(NULL, c.pPatchLocationList);
	EXPECT_EQ(0u, c.PatchLocationListSize);
	EXPECT_EQ(0u, c.CommandBuffer);
	c.NodeOrdinal = self->e.cfg.num_engines;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));

	/* Its hardware queue runs work; its own queue signals. */
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c.hContext, 1u << 5, &q));
	cs_begin(_metadata, g, &cs);
	NFenceCsWrite64(&cs, g->data.va, 0x5a);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &q, 1, WAIT_NS));
	EXPECT_EQ(0x5aull, rd(&g->data.cpu[0]));
	n = fence(_metadata, dev, 0, 0, NULL);
	memset(&s, 0, sizeof(s));
	s.hContext = c.hContext;
	s.ObjectCount = 1;
	s.ObjectHandleArray = &n;
	s.MonitoredFenceValueArray = &sv;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromGpu(&s));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 3, WAIT_NS));

	/* Nothing to close: the adapter, device and context go on. */
	D3DKMTCloseDxCoreDevice();
	EXPECT_LE(0, NFenceGetAdapterFd(self->e.adapters[0].hAdapter));
	sv = 4;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSignalSynchronizationObjectFromGpu(&s));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(dev, n, 4, WAIT_NS));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(n));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));

	/* The hardware context calls and context-level submission. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(NULL));
	/* Implemented: NULL is an invalid parameter (gpu.video_memory_info). */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTGetContextSchedulingPriority(NULL));

	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTChangeVideoMemoryReservation(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreatePagingQueue(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateSynchronizationObject(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTDestroyAllocation(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTDestroyPagingQueue(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTEscape(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTEvict(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTFlushHeapTransitions(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTFreeGpuVirtualAddress(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTGetAllocationPriority(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTGetContextInProcessSchedulingPriority(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTGetSharedResourceAdapterLuid(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTInvalidateCache(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTMakeResident(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTMapGpuVirtualAddress(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTOfferAllocations(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTOpenResource(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTOpenResourceFromNtHandle(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTOpenSynchronizationObject(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTQueryAllocationResidency(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTQueryResourceInfo(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTQueryResourceInfoFromNtHandle(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTQueryStatistics(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTReclaimAllocations2(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTRender(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTReserveGpuVirtualAddress(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTSetAllocationPriority(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTSetContextInProcessSchedulingPriority(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTShareObjectWithHost(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTSignalSynchronizationObject(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTSignalSynchronizationObject2(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTUpdateAllocationProperty(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTUpdateGpuVirtualAddress(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTWaitForSynchronizationObject(NULL));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTWaitForSynchronizationObject2(NULL));
}

/*
 * D3DKMTSetContextSchedulingPriority and D3DKMTGetContextSchedulingPriority
 * through the kernel: -7..7 set and read back per context, a new context
 * at 0, out-of-range values (Windows' absolute ones too) and handles of
 * nothing refused with nothing changed. The effect on scheduling is IGT
 * nfence_sched@priority-turns'.
 */
TEST_F(gpu, context_scheduling_priority)
{
	D3DKMT_HANDLE dev = self->e.dev[0], ctx, other;
	D3DKMT_SETCONTEXTSCHEDULINGPRIORITY set = { 0 };
	D3DKMT_GETCONTEXTSCHEDULINGPRIORITY get = { 0 };

	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &other));
	get.hContext = ctx;
	get.Priority = 99;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(0, get.Priority);
	set.hContext = ctx;
	for (INT p = -7; p <= 7; p++) {
		set.Priority = p;
		ASSERT_EQ(STATUS_SUCCESS,
			  D3DKMTSetContextSchedulingPriority(&set));
		ASSERT_EQ(STATUS_SUCCESS,
			  D3DKMTGetContextSchedulingPriority(&get));
		EXPECT_EQ(p, get.Priority);
	}
	set.Priority = 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	set.Priority = 0x40000000 | 30;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(7, get.Priority);
	get.hContext = other;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(0, get.Priority);
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(other));
	get.Priority = 99;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(99, get.Priority);
	set.hContext = other;
	set.Priority = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

/* The Windows values of the device state and error enums. */
TEST(device_state_values)
{
	EXPECT_EQ(1, D3DKMT_DEVICESTATE_EXECUTION);
	EXPECT_EQ(5, D3DKMT_DEVICESTATE_PAGE_FAULT);
	EXPECT_EQ(6, D3DKMT_DEVICESTATE_PRESENT_QUEUE);
	EXPECT_EQ(1, D3DKMT_DEVICEEXECUTION_ACTIVE);
	EXPECT_EQ(2, D3DKMT_DEVICEEXECUTION_RESET);
	EXPECT_EQ(4, D3DKMT_DEVICEEXECUTION_STOPPED);
	EXPECT_EQ(6, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
	EXPECT_EQ(7, D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
	EXPECT_EQ(0x80000000u, (UINT)D3DKMT_DEVICE_ERROR_REASON_GENERIC);
	EXPECT_EQ(0x80000006u, (UINT)D3DKMT_DEVICE_ERROR_REASON_DRIVER_ERROR);
}

/* ==================================================================== */
/* fork()                                                                */
/* ==================================================================== */

/*
 * The child of gpu.fork_child_gets_no_handle: with the handles it
 * inherited, the calls that destroy, mark, create or submit each name
 * nothing (STATUS_INVALID_PARAMETER). Returns the number that did not.
 */
static int fork_child_calls(D3DKMT_HANDLE adapter, D3DKMT_HANDLE dev,
			    const struct gpu *g, D3DKMT_HANDLE fence,
			    D3DKMT_HANDLE queue, D3DKMT_HANDLE doorbell)
{
	D3DKMT_CONNECT_DOORBELL c = { .hDoorbell = doorbell };
	D3DKMT_NOTIFY_WORK_SUBMISSION n = { .hDoorbell = doorbell };
	D3DKMT_CREATEDEVICE cd = { .hAdapter = adapter };
	D3DKMT_CREATE_DOORBELL db;
	D3DKMT_HANDLE ctx;
	NFENCE_CS cs;
	UINT64 buf[8];
	int bad = 0;

	NFenceCsInit(&cs, buf, sizeof(buf), g->cmd.va);
	NFenceCsNop(&cs);
	bad += submit(g->q[1].hHwQueue, &cs, 1) != STATUS_INVALID_PARAMETER;
	bad += cpu_signal(dev, fence, 1) != STATUS_INVALID_PARAMETER;
	bad += create_context(dev, 0, 0, &ctx) != STATUS_INVALID_PARAMETER;
	bad += D3DKMTCreateDevice(&cd) != STATUS_INVALID_PARAMETER;
	if (doorbell) {
		bad += D3DKMTConnectDoorbell(&c) != STATUS_INVALID_PARAMETER;
		bad += D3DKMTNotifyWorkSubmission(&n) !=
		       STATUS_INVALID_PARAMETER;
		bad += destroy_doorbell(doorbell) != STATUS_INVALID_PARAMETER;
		bad += create_doorbell(queue, g->data.h, 0, 0, &db) !=
		       STATUS_INVALID_PARAMETER;
	}
	bad += destroy_queue(queue) != STATUS_INVALID_PARAMETER;
	bad += destroy_context(g->ctx[0]) != STATUS_INVALID_PARAMETER;
	bad += destroy_allocs(dev, &g->data.h, 1) != STATUS_INVALID_PARAMETER;
	bad += destroy_sync(fence) != STATUS_INVALID_PARAMETER;
	bad += mark_error(dev, D3DKMT_DEVICE_ERROR_REASON_GENERIC) !=
	       STATUS_INVALID_PARAMETER;
	bad += destroy_device(dev) != STATUS_INVALID_PARAMETER;
	bad += close_adapter(adapter) != STATUS_INVALID_PARAMETER;
	return bad;
}

/*
 * A forked child gets no D3DKMT handle (WSL's rule): with the handles it
 * inherited, on the parent's render node files, it can destroy, mark or
 * create nothing, and the parent's device, queues, doorbell, allocations
 * and fences all still work once it has tried.
 */
TEST_F(gpu, fork_child_gets_no_handle)
{
	D3DKMT_HANDLE dev = self->e.dev[0], ctx = 0, f, doorbell = 0;
	D3DKMT_CREATEHWQUEUE uq;
	D3DKMT_CREATE_DOORBELL db;
	D3DKMT_CONNECT_DOORBELL c = { 0 };
	D3DKMT_GETDEVICESTATE state;
	struct gpu *g = &self->g;
	struct buf ring;
	NFENCE_CS cs;
	int status;
	pid_t pid;

	f = fence(_metadata, dev, 0, 0, NULL);
	uq.hHwQueue = g->q[0].hHwQueue;
	if (self->e.cfg.user_mode_submission) {
		ASSERT_EQ(STATUS_SUCCESS, create_context(dev, 0, 0, &ctx));
		ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 4, &uq));
		make_buf(_metadata, dev, PAGE, &ring);
		ASSERT_EQ(STATUS_SUCCESS,
			  create_doorbell(uq.hHwQueue, ring.h, 0, 0, &db));
		doorbell = db.hDoorbell;
	}

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fork_child_calls(self->e.adapters[0].hAdapter, dev, g,
				       f, uq.hHwQueue, doorbell));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Everything of the parent's is as it was. */
	ASSERT_EQ(STATUS_SUCCESS,
		  device_state(dev, D3DKMT_DEVICESTATE_EXECUTION, &state));
	EXPECT_EQ((UINT)D3DKMT_DEVICEEXECUTION_ACTIVE,
		  (UINT)state.ExecutionState);
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(dev, f, 3));
	cs_begin(_metadata, g, &cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, g->data.va, 77));
	ASSERT_EQ(STATUS_SUCCESS, submit(g->q[0].hHwQueue, &cs, 1));
	EXPECT_EQ(STATUS_SUCCESS, progress_wait(dev, &g->q[0], 1,
						5000000000ull));
	EXPECT_EQ(77ull, rd(&g->data.cpu[0]));
	if (doorbell) {
		c.hDoorbell = doorbell;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTConnectDoorbell(&c));
		EXPECT_EQ(STATUS_SUCCESS, destroy_doorbell(doorbell));
		EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	}
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
}

TEST_HARNESS_MAIN
