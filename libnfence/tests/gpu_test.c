/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Allocations, contexts, hardware queues and submission through the
 * public API against the fake driver (mock_drm.c), whose "GPU" runs
 * submitted command buffers synchronously: argument checks, errno to
 * NTSTATUS, Lock2 counting and unmapping, which device each context,
 * queue and allocation belongs to, the teardown of children with their
 * parent, broadcast signals, and command buffers built with NFENCE_CS
 * running as expected.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"
#include "test_helpers.h"
#include "handle_calls.h"
#include "kselftest_harness.h"

/*
 * Adapter 0: the defaults; adapter 1: no native fences; adapter 2: 2 MiB
 * of VRAM of which 1 MiB is CPU-visible, 4 MiB of system memory.
 */
#define NADAPTERS	3
#define PAGE		4096u

FIXTURE(gpu) {
	char dir[64];
	D3DKMT_ADAPTERINFO adapters[NADAPTERS];
	D3DKMT_HANDLE dev, dev_b;	/* two devices on adapter 0 */
	D3DKMT_HANDLE dev1, dev2;	/* on adapters 1 and 2 */
};

FIXTURE_SETUP(gpu)
{
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = NADAPTERS };
	struct mock_adapter a[NADAPTERS];
	char name[32];
	int i;

	strcpy(self->dir, "/tmp/nfence-gpu-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	for (i = 0; i < NADAPTERS; i++) {
		a[i] = mock_default_adapter(i);
		if (i == 1)
			a[i].native_fences = false;
		if (i == 2) {
			a[i].vram_mb = 2;
			a[i].vram_visible_mb = 1;
			a[i].sysmem_mb = 4;
		}
		snprintf(name, sizeof(name), "renderD%d", 128 + i);
		ASSERT_EQ(0, mock_add_node(self->dir, name, &a[i]));
	}
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));

	e.pAdapters = self->adapters;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(NADAPTERS, e.NumAdapters);
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&self->dev));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[0].hAdapter,
						&self->dev_b));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[1].hAdapter,
						&self->dev1));
	ASSERT_EQ(STATUS_SUCCESS, create_device(self->adapters[2].hAdapter,
						&self->dev2));
}

FIXTURE_TEARDOWN(gpu)
{
	D3DKMT_CLOSEADAPTER c;
	char cmd[128];
	int i;

	/* Devices a test destroyed already fail; that is fine. */
	destroy_device(self->dev);
	destroy_device(self->dev_b);
	destroy_device(self->dev1);
	destroy_device(self->dev2);
	for (i = 0; i < NADAPTERS; i++) {
		c.hAdapter = self->adapters[i].hAdapter;
		EXPECT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&c));
	}
	EXPECT_EQ(0u, mock_live_allocations());
	EXPECT_EQ(0u, mock_live_contexts());
	EXPECT_EQ(0u, mock_live_queues());
	EXPECT_EQ(0u, mock_live_fences());
	EXPECT_EQ(0u, mock_open_files());
	mock_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ---- helpers ------------------------------------------------------- */

struct alloc {
	D3DKMT_HANDLE h;
	D3DGPU_VIRTUAL_ADDRESS va;
};

static NTSTATUS create_alloc(D3DKMT_HANDLE dev, UINT64 size, UINT segment,
			     UINT flags, struct alloc *out)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = size,
		.SegmentId = segment,
	};
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
	out->h = info.hAllocation;
	out->va = info.GpuVirtualAddress;
	return st;
}

static NTSTATUS destroy_alloc(D3DKMT_HANDLE dev, D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYALLOCATION2 d = {
		.hDevice = dev,
		.phAllocationList = &h,
		.AllocationCount = 1,
	};

	return D3DKMTDestroyAllocation2(&d);
}

static NTSTATUS lock(D3DKMT_HANDLE dev, D3DKMT_HANDLE h, void **p)
{
	D3DKMT_LOCK2 l = { .hDevice = dev, .hAllocation = h };
	NTSTATUS st = D3DKMTLock2(&l);

	*p = l.pData;
	return st;
}

static NTSTATUS unlock(D3DKMT_HANDLE dev, D3DKMT_HANDLE h)
{
	D3DKMT_UNLOCK2 u = { .hDevice = dev, .hAllocation = h };

	return D3DKMTUnlock2(&u);
}

static NTSTATUS create_context(D3DKMT_HANDLE dev, UINT node,
			       D3DKMT_HANDLE *h)
{
	D3DKMT_CREATECONTEXTVIRTUAL c = {
		.hDevice = dev,
		.NodeOrdinal = node,
		.ClientHint = D3DKMT_CLIENTHINT_DX12,
	};
	NTSTATUS st = D3DKMTCreateContextVirtual(&c);

	*h = c.hContext;
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

static NTSTATUS destroy_sync(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h };

	return D3DKMTDestroySynchronizationObject(&d);
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

	return D3DKMTSubmitCommandToHwQueue(&s);
}

static NTSTATUS queue_wait(D3DKMT_HANDLE queue, D3DKMT_HANDLE fence,
			   UINT64 value)
{
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = queue,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = &value,
	};

	return D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w);
}

static NTSTATUS queue_signal(const D3DKMT_HANDLE *queues, UINT nqueues,
			     D3DKMT_HANDLE fence, UINT64 value)
{
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s = {
		.BroadcastHwQueueCount = nqueues,
		.BroadcastHwQueueArray = queues,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = &value,
	};

	return D3DKMTSubmitSignalSyncObjectsToHwQueue(&s);
}

static NTSTATUS cpu_signal(D3DKMT_HANDLE dev, D3DKMT_HANDLE fence,
			   UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = &value,
	};

	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

static NTSTATUS cpu_wait(D3DKMT_HANDLE dev, D3DKMT_HANDLE fence,
			 UINT64 value, UINT64 timeout_ns)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = &value,
	};

	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ns,
								NULL);
}

/* A native DEFAULT fence; *@m its mapping. */
static D3DKMT_HANDLE create_fence(struct __test_metadata *_metadata,
				  D3DKMT_HANDLE dev, UINT64 initial,
				  D3DDDI_NATIVEFENCEMAPPING *m)
{
	D3DKMT_CREATENATIVEFENCE cf;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = dev;
	cf.Info.InitialFenceValue = initial;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCreateNativeFence(&cf));
	if (m)
		*m = cf.Info.NativeFenceMapping;
	return cf.hSyncObject;
}

static UINT64 rd(const volatile void *p)
{
	return __atomic_load_n((const UINT64 *)p, __ATOMIC_ACQUIRE);
}

/* Is the page holding @p mapped in this process? */
static bool mapped(const volatile void *p)
{
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
	unsigned char vec;

	return mincore((void *)page, PAGE, &vec) == 0;
}

/* ---- structures ---------------------------------------------------- */

TEST(flags_have_windows_bit_order)
{
	D3DDDI_CREATEHWQUEUEFLAGS q;
	D3DDDI_CREATECONTEXTFLAGS c;
	D3DKMT_CREATEALLOCATIONFLAGS a;
	D3DDDICB_DESTROYALLOCATION2FLAGS d;
	NFENCE_ALLOCATION_FLAGS n;
	D3DKMT_NFENCE_CONTEXT_STATE_FLAGS s;

#define BIT_IS(var, field, bit) do {				\
		memset(&var, 0, sizeof(var));			\
		var.field = 1;					\
		EXPECT_EQ(1u << (bit), var.Value) TH_LOG(#field); \
	} while (0)

	/* WDDM's D3DDDI_CREATEHWQUEUEFLAGS, which the uapi mirrors. */
	BIT_IS(q, DisableGpuTimeout, 0);
	BIT_IS(q, NoBroadcastSignal, 1);
	BIT_IS(q, NoBroadcastWait, 2);
	BIT_IS(q, NoKmdAccess, 3);
	BIT_IS(q, UserModeSubmission, 4);
	BIT_IS(q, NativeProgressFence, 5);
	BIT_IS(q, Reserved, 6);
	EXPECT_EQ(DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE, 1u << 5);
	BIT_IS(c, NullRendering, 0);
	BIT_IS(c, InitialData, 1);
	BIT_IS(c, DisableGpuTimeout, 2);
	BIT_IS(c, SynchronizationOnly, 3);
	BIT_IS(c, HwQueueSupported, 4);
	BIT_IS(c, NoKmdAccess, 5);
	BIT_IS(a, CreateResource, 0);
	BIT_IS(a, NtSecuritySharing, 6);
	BIT_IS(a, Zeroed, 14);
	BIT_IS(a, AllowNotZeroed, 18);
	BIT_IS(a, NoKmdAccess, 20);
	BIT_IS(a, SharedDisplayable, 21);
	BIT_IS(a, Reserved, 22);
	BIT_IS(d, AssumeNotInUse, 0);
	BIT_IS(d, SynchronousDestroy, 1);
	BIT_IS(d, SystemUseOnly, 31);
	BIT_IS(n, CpuVisible, 0);
	BIT_IS(n, AllowDemote, 1);
	BIT_IS(s, Suspended, 0);
	BIT_IS(s, Faulted, 1);
	BIT_IS(s, DeviceLost, 2);
#undef BIT_IS
	EXPECT_EQ(16u, sizeof(NFENCE_ALLOCATION_DESC));
	EXPECT_EQ(DRM_NFENCE_FAULT_BAD_COMMAND, D3DKMT_NFENCE_FAULT_BAD_COMMAND);
}

/* ---- allocations --------------------------------------------------- */

TEST_F(gpu, allocation_create_lock_write_destroy)
{
	D3DKMT_NFENCE_ALLOCATION_INFO info;
	struct alloc a, b;
	UINT64 *p, *p2;
	void *v;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, 5000, 1, 0, &a));
	EXPECT_NE(0u, a.h);
	EXPECT_NE(0u, a.va);
	EXPECT_EQ(0u, a.va % PAGE);
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 2, 1, &b));
	EXPECT_NE(a.va, b.va);
	EXPECT_EQ(2u, mock_live_allocations());

	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryAllocation(self->dev, a.h, &info));
	EXPECT_EQ(a.va, info.GpuVirtualAddress);
	EXPECT_EQ(2 * PAGE, info.Size);
	EXPECT_EQ(1u, info.SegmentId);
	EXPECT_EQ(1u, info.PlacedSegmentId);
	EXPECT_EQ(0u, info.LockCount);

	/* Zeroed memory, read/write, shared with the GPU. */
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &v));
	p = v;
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0u, p[0]);
	EXPECT_EQ(0u, p[2 * PAGE / 8 - 1]);
	p[1] = 0x1234;

	/* Nested locks: same pointer, one kernel lock and one mapping. */
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &v));
	EXPECT_EQ(p, v);
	EXPECT_EQ(1u, mock_ioctl_calls(DRM_NFENCE_ALLOC_LOCK));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryAllocation(self->dev, a.h, &info));
	EXPECT_EQ(2u, info.LockCount);
	EXPECT_EQ(STATUS_SUCCESS, unlock(self->dev, a.h));
	EXPECT_TRUE(mapped(p));
	EXPECT_EQ(0x1234u, p[1]);
	EXPECT_EQ(STATUS_SUCCESS, unlock(self->dev, a.h));
	EXPECT_FALSE(mapped(p));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(self->dev, a.h));

	/* Locked again: a new mapping, the same memory. */
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &v));
	p2 = v;
	EXPECT_EQ(0x1234u, p2[1]);
	EXPECT_EQ(2u, mock_ioctl_calls(DRM_NFENCE_ALLOC_LOCK));

	/* Destroying unmaps whatever the lock count. */
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &v));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, a.h));
	EXPECT_FALSE(mapped(p2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_alloc(self->dev, a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->dev, a.h, &v));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(self->dev, a.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, b.h));
	EXPECT_EQ(0u, mock_live_allocations());
}

TEST_F(gpu, allocation_belongs_to_its_device)
{
	struct alloc a;
	void *v = NULL;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 1, 0, &a));
	/* Another device of the same adapter does not own it. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->dev_b, a.h, &v));
	EXPECT_EQ(NULL, v);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, unlock(self->dev_b, a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_alloc(self->dev_b, a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_alloc(self->dev1, a.h));
	/* Handles of other kinds are not allocations. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->dev, self->dev, &v));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(a.h, a.h, &v));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(a.h));
	EXPECT_EQ(1u, mock_live_allocations());
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, a.h));
}

TEST_F(gpu, allocation_argument_checks)
{
	NFENCE_ALLOCATION_DESC desc = { .Size = PAGE, .SegmentId = 1 };
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	struct alloc a;
	void *v;

#define RESET() do {						\
		memset(&info, 0, sizeof(info));			\
		info.pPrivateDriverData = &desc;		\
		info.PrivateDriverDataSize = sizeof(desc);	\
		memset(&ca, 0, sizeof(ca));			\
		ca.hDevice = self->dev;				\
		ca.NumAllocations = 1;				\
		ca.pAllocationInfo2 = &info;			\
	} while (0)

	RESET();
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(1u, (UINT)ca.Flags.Zeroed);
	EXPECT_EQ(0u, ca.hGlobalShare);
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, info.hAllocation));

	RESET();
	info.PrivateDriverDataSize = sizeof(desc) - 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	info.pPrivateDriverData = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.NumAllocations = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.pAllocationInfo2 = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.hResource = 5;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.Flags.CreateShared = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.Flags.CreateResource = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateAllocation2(&ca));
	RESET();
	info.Flags.Primary = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateAllocation2(&ca));
	RESET();
	info.pSystemMem = &desc;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	RESET();
	ca.hDevice = self->adapters[0].hAdapter;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(0u, info.hAllocation);
	EXPECT_EQ(0u, info.GpuVirtualAddress);
	/* Hints that change nothing are accepted. */
	RESET();
	ca.Flags.AllowNotZeroed = 1;
	ca.Flags.NoKmdAccess = 1;
	info.Flags.OverridePriority = 1;
	info.Priority = 7;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, info.hAllocation));
#undef RESET

	/* What the kernel refuses. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_alloc(self->dev, 0, 1, 0, &a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(self->dev, (256ull << 20) + 1, 1, 0, &a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_alloc(self->dev, PAGE, 3, 0, &a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_alloc(self->dev, PAGE, 0, 0, &a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(self->dev, PAGE, 1, 2, &a));	/* demote */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_alloc(self->dev, PAGE, 1, 4, &a));	/* reserved */
	mock_fail_next(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_alloc(self->dev, PAGE, 1, 0, &a));
	EXPECT_EQ(0u, mock_live_allocations());

	/* VRAM made without CpuVisible cannot be locked. */
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 2, 0, &a));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->dev, a.h, &v));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, a.h));

	/* Lock2 flags, Destroy2 arguments. */
	{
		D3DKMT_LOCK2 l = { .hDevice = self->dev };
		D3DKMT_DESTROYALLOCATION2 d = { .hDevice = self->dev };
		D3DKMT_HANDLE h = 1;

		l.Flags.Value = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTLock2(&l));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.phAllocationList = &h;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.AllocationCount = 1;
		d.Flags.SystemUseOnly = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
		d.Flags.Value = 0;
		d.hResource = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTDestroyAllocation2(&d));
	}
}

TEST_F(gpu, allocations_all_or_nothing)
{
	NFENCE_ALLOCATION_DESC d[3] = {
		{ .Size = PAGE, .SegmentId = 1 },
		{ .Size = 3 * PAGE, .SegmentId = 2 },
		{ .Size = 0, .SegmentId = 1 },		/* refused */
	};
	D3DDDI_ALLOCATIONINFO2 info[3];
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_DESTROYALLOCATION2 da;
	D3DKMT_HANDLE hs[3];
	int i;

	memset(info, 0, sizeof(info));
	for (i = 0; i < 3; i++) {
		info[i].pPrivateDriverData = &d[i];
		info[i].PrivateDriverDataSize = sizeof(d[i]);
	}
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = self->dev;
	ca.NumAllocations = 3;
	ca.pAllocationInfo2 = info;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(0u, mock_live_allocations());
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0u, info[i].hAllocation);

	d[2].Size = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateAllocation2(&ca));
	EXPECT_EQ(3u, mock_live_allocations());
	for (i = 0; i < 3; i++) {
		EXPECT_NE(0u, info[i].hAllocation);
		EXPECT_NE(0u, info[i].GpuVirtualAddress);
		hs[i] = info[i].hAllocation;
	}

	/* One bad handle in the list: nothing is destroyed. */
	memset(&da, 0, sizeof(da));
	da.hDevice = self->dev;
	da.phAllocationList = hs;
	da.AllocationCount = 3;
	hs[1] = self->dev;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyAllocation2(&da));
	EXPECT_EQ(3u, mock_live_allocations());
	/* A handle twice: the others go, the call says so. */
	hs[1] = hs[0];
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyAllocation2(&da));
	EXPECT_EQ(1u, mock_live_allocations());
	hs[0] = info[1].hAllocation;
	da.AllocationCount = 1;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTDestroyAllocation2(&da));
	EXPECT_EQ(0u, mock_live_allocations());
}

TEST_F(gpu, allocation_demotes_when_vram_is_full)
{
	D3DKMT_NFENCE_ALLOCATION_INFO info;
	struct alloc vis, inv, dem, x;
	void *p;

	/* Adapter 2: 1 MiB invisible VRAM, 1 MiB visible, 4 MiB system. */
	ASSERT_EQ(STATUS_SUCCESS,
		  create_alloc(self->dev2, 1u << 20, 2, 1, &vis));
	ASSERT_EQ(STATUS_SUCCESS,
		  create_alloc(self->dev2, 1u << 20, 2, 0, &inv));
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_alloc(self->dev2, PAGE, 2, 0, &x));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev2, PAGE, 2, 2, &dem));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryAllocation(self->dev2, dem.h,
							&info));
	EXPECT_EQ(2u, info.SegmentId);
	EXPECT_EQ(1u, info.PlacedSegmentId);
	EXPECT_EQ(2u, info.Flags.Value);
	/* Demoted to system memory, but not asked to be CPU-visible. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, lock(self->dev2, dem.h, &p));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryAllocation(self->dev2, vis.h,
							&info));
	EXPECT_EQ(2u, info.PlacedSegmentId);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceQueryAllocation(self->dev, vis.h, &info));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceQueryAllocation(self->dev2, vis.h, NULL));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev2, vis.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev2, inv.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev2, dem.h));
}

/* ---- contexts and queues ------------------------------------------- */

TEST_F(gpu, context_arguments)
{
	D3DKMT_CREATECONTEXTVIRTUAL c;
	D3DKMT_HANDLE ctx;
	char pdd[8];

	memset(&c, 0, sizeof(c));
	c.hDevice = self->dev;
	c.NodeOrdinal = 3;	/* the adapter has 3 engines */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.NodeOrdinal = 2;
	c.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.EngineAffinity = 1;
	c.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.Flags.Value = 0;
	c.Flags.NullRendering = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateContextVirtual(&c));
	c.Flags.Value = 0;
	c.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	c.pPrivateDriverData = pdd;
	c.hDevice = self->adapters[0].hAdapter;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(&c));
	EXPECT_EQ(0u, c.hContext);
	EXPECT_EQ(0u, mock_live_contexts());

	/* Flags without effect, private data, any hint. */
	c.hDevice = self->dev;
	c.Flags.HwQueueSupported = 1;
	c.Flags.InitialData = 1;
	c.Flags.SynchronizationOnly = 1;
	c.Flags.NoKmdAccess = 1;
	c.ClientHint = (D3DKMT_CLIENTHINT)99;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContextVirtual(&c));
	EXPECT_NE(0u, c.hContext);
	EXPECT_EQ(1u, mock_live_contexts());
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(c.hContext));

	mock_fail_next(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_context(self->dev, 0, &ctx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyContext(NULL));
}

TEST_F(gpu, queue_and_progress_fence)
{
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx;
	UINT64 *cpu;

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));
	EXPECT_NE(0u, q.hHwQueue);
	EXPECT_NE(0u, q.hHwQueueProgressFence);
	EXPECT_NE(q.hHwQueue, q.hHwQueueProgressFence);
	cpu = q.HwQueueProgressFenceCPUVirtualAddress;
	ASSERT_NE(NULL, cpu);
	EXPECT_NE(0u, q.HwQueueProgressFenceGPUVirtualAddress);
	/* The fake driver's adapter has native fences: two log buffers. */
	EXPECT_NE(0u, q.NativeFenceWaitLogBufferGpuVa);
	EXPECT_NE(0u, q.NativeFenceSignalLogBufferGpuVa);
	EXPECT_NE(q.NativeFenceWaitLogBufferGpuVa,
		  q.NativeFenceSignalLogBufferGpuVa);
	EXPECT_EQ(84u, q.NativeFenceLogBufferNumberOfEntries);
	EXPECT_EQ(0u, rd(cpu));
	EXPECT_EQ(1u, mock_live_queues());
	EXPECT_EQ(1u, mock_live_fences());

	/* A sync object of the queue's device: waitable, signalable. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->dev, q.hHwQueueProgressFence,
					   0, 0));
	EXPECT_EQ(STATUS_TIMEOUT, cpu_wait(self->dev, q.hHwQueueProgressFence,
					   1, 0));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev,
					     q.hHwQueueProgressFence, 3));
	EXPECT_EQ(3u, rd(cpu));
	/* ... but destroyed only with the queue. */
	EXPECT_EQ(STATUS_DEVICE_BUSY, destroy_sync(q.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->dev, q.hHwQueueProgressFence,
					   3, 0));

	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q.hHwQueue));
	EXPECT_EQ(0u, mock_live_queues());
	EXPECT_EQ(0u, mock_live_fences());
	EXPECT_FALSE(mapped(cpu));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(q.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  cpu_wait(self->dev, q.hHwQueueProgressFence, 0, 0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

/*
 * A logged fence command carries the kernel's handle of the sync object it
 * names (what the kernel's optimized interrupt looks up), and any other
 * value as it is.
 */
TEST_F(gpu, logged_command_carries_kernel_handle)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	UINT64 buf[16];
	D3DKMT_HANDLE first, h;
	uint32_t k;
	NFENCE_CS cs;

	first = create_fence(_metadata, self->dev, 0, NULL);
	h = create_fence(_metadata, self->dev, 0, &m);
	k = mock_last_fence_handle();
	ASSERT_NE(0u, k);
	/* Two handle spaces: the check below must tell them apart. */
	ASSERT_NE((uint32_t)h, k);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), 0x10000));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsSignalNativeFence(&cs, &m, 1, h));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWaitNativeFence(&cs, &m, 1, h));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceSignal(&cs, 0x5000, 0x5008, 1, 0x7777));
	/* FENCE_SIGNAL: header, cv, mv, value, then handle | op << 32 */
	EXPECT_EQ((UINT64)k, buf[4] & 0xffffffffu);
	/* FENCE_WAIT: header, va, value, then handle | op << 32 */
	EXPECT_EQ((UINT64)k, buf[8] & 0xffffffffu);
	EXPECT_EQ(0x7777u, buf[13] & 0xffffffffu);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(first));
}

/* NFenceReadNativeFenceLog(): the layouts, the header, the argument checks. */
TEST_F(gpu, read_native_fence_log)
{
	DXGK_NATIVE_FENCE_LOG_ENTRY e[2];
	NFENCE_READNATIVEFENCELOG r;
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx;

	EXPECT_EQ(40u, sizeof(DXGK_NATIVE_FENCE_LOG_HEADER));
	EXPECT_EQ(48u, sizeof(DXGK_NATIVE_FENCE_LOG_ENTRY));
	EXPECT_EQ(8u, offsetof(DXGK_NATIVE_FENCE_LOG_HEADER, Type));
	EXPECT_EQ(16u, offsetof(DXGK_NATIVE_FENCE_LOG_HEADER, NumberOfEntries));
	EXPECT_EQ(8u, offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY, hNativeFence));
	EXPECT_EQ(12u, offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY, OperationType));
	EXPECT_EQ(24u, offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY,
				FenceObservedGpuTimestamp));
	EXPECT_EQ(40u, offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY,
				FenceEndGpuTimestamp));
	/* WDDM's values (section 15.1), pinned one by one. */
	EXPECT_EQ(4u, sizeof(DXGK_NATIVE_FENCE_LOG_TYPE));
	EXPECT_EQ(1, DXGK_NATIVE_FENCE_LOG_TYPE_WAITS);
	EXPECT_EQ(2, DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS);
	EXPECT_EQ(0, DXGK_NATIVE_FENCE_LOG_OPERATION_SIGNAL_EXECUTED);
	EXPECT_EQ(1, DXGK_NATIVE_FENCE_LOG_OPERATION_WAIT_UNBLOCKED);

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &q));
	memset(&r, 0, sizeof(r));
	r.hHwQueue = q.hHwQueue;
	r.Type = DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS;
	r.pEntries = e;
	r.NumEntries = 2;
	r.Flags = 7;
	ASSERT_EQ(STATUS_SUCCESS, NFenceReadNativeFenceLog(&r));
	EXPECT_EQ(0u, r.NumEntries);
	EXPECT_EQ(0u, r.Cursor);
	EXPECT_EQ(0u, r.Flags);
	EXPECT_EQ((UINT)DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS, r.Header.Type);
	EXPECT_EQ(84u, r.Header.NumberOfEntries);
	EXPECT_EQ(0u, r.Header.FirstFreeEntryIndex);

	/* Bad arguments, each with the rest valid. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(NULL));
	r.Type = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	r.Type = 3;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	r.Type = DXGK_NATIVE_FENCE_LOG_TYPE_WAITS;
	r.NumEntries = 2;
	r.pEntries = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	r.pEntries = e;
	r.Cursor = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	EXPECT_EQ(1u, r.Cursor);	/* nothing written back */
	r.Cursor = 0;
	r.hHwQueue = ctx;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	r.hHwQueue = q.hHwQueue;
	EXPECT_EQ(STATUS_SUCCESS, NFenceReadNativeFenceLog(&r));
	EXPECT_EQ((UINT)DXGK_NATIVE_FENCE_LOG_TYPE_WAITS, r.Header.Type);

	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q.hHwQueue));
	r.hHwQueue = q.hHwQueue;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceReadNativeFenceLog(&r));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

/*
 * The log header's index and wraparound count are the two halves of one
 * ULARGE_INTEGER, as in d3dukmdt.h: the index is the low half, read as
 * LowPart, u.LowPart or the low 32 bits of QuadPart.
 */
TEST(log_header_index_is_low_half)
{
	DXGK_NATIVE_FENCE_LOG_HEADER h;

	EXPECT_EQ(8u, sizeof(ULARGE_INTEGER));
	EXPECT_EQ(8u, _Alignof(ULARGE_INTEGER));
	EXPECT_EQ(0u, offsetof(ULARGE_INTEGER, LowPart));
	EXPECT_EQ(4u, offsetof(ULARGE_INTEGER, HighPart));
	EXPECT_EQ(0u, offsetof(ULARGE_INTEGER, u.LowPart));
	EXPECT_EQ(4u, offsetof(ULARGE_INTEGER, u.HighPart));
	EXPECT_EQ(0u, offsetof(DXGK_NATIVE_FENCE_LOG_HEADER,
			       AtomicWraparoundAndEntryIndex));

	memset(&h, 0, sizeof(h));
	h.AtomicWraparoundAndEntryIndex.QuadPart = (3ull << 32) | 5;
	EXPECT_EQ(5u, h.FirstFreeEntryIndex);
	EXPECT_EQ(3u, h.WraparoundCount);
	EXPECT_EQ(5u, h.AtomicWraparoundAndEntryIndex.LowPart);
	EXPECT_EQ(3u, h.AtomicWraparoundAndEntryIndex.HighPart);
	EXPECT_EQ(5u, h.AtomicWraparoundAndEntryIndex.u.LowPart);
	EXPECT_EQ(3u, h.AtomicWraparoundAndEntryIndex.u.HighPart);
	h.WraparoundCount = 7;
	EXPECT_EQ((7ull << 32) | 5, h.AtomicWraparoundAndEntryIndex.QuadPart);
}

/* NFenceSetLoggingLevel(): the values, the previous level, the checks. */
TEST_F(gpu, set_logging_level)
{
	NFENCE_SETLOGGINGLEVEL l;

	EXPECT_EQ(0, D3DDDI_LOGGING_LEVEL_DEFAULT);
	EXPECT_EQ(1, D3DDDI_LOGGING_LEVEL_ALL);
	memset(&l, 0, sizeof(l));
	l.hAdapter = self->adapters[0].hAdapter;
	l.LoggingLevel = D3DDDI_LOGGING_LEVEL_ALL;
	l.PreviousLevel = (D3DDDI_LOGGING_LEVEL)7;
	ASSERT_EQ(STATUS_SUCCESS, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_DEFAULT, l.PreviousLevel);
	l.LoggingLevel = D3DDDI_LOGGING_LEVEL_DEFAULT;
	l.Flags = NFENCE_LOGGING_RECREATE;
	ASSERT_EQ(STATUS_SUCCESS, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_ALL, l.PreviousLevel);

	/* Bad arguments, each with the rest valid; nothing written. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSetLoggingLevel(NULL));
	l.PreviousLevel = (D3DDDI_LOGGING_LEVEL)7;
	l.LoggingLevel = (D3DDDI_LOGGING_LEVEL)2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSetLoggingLevel(&l));
	l.LoggingLevel = D3DDDI_LOGGING_LEVEL_DEFAULT;
	l.Flags = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSetLoggingLevel(&l));
	l.Flags = 0;
	l.hAdapter = self->dev;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSetLoggingLevel(&l));
	/* No native fences, no logs. */
	l.hAdapter = self->adapters[1].hAdapter;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(7, (int)l.PreviousLevel);

	/*
	 * A queue's new buffers not made: the level is set all the same,
	 * and the previous one is there to put it back.
	 */
	l.hAdapter = self->adapters[0].hAdapter;
	l.LoggingLevel = D3DDDI_LOGGING_LEVEL_ALL;
	mock_fail_logging_buffers(ENOMEM);
	EXPECT_EQ(STATUS_NO_MEMORY, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_DEFAULT, l.PreviousLevel);
	l.LoggingLevel = D3DDDI_LOGGING_LEVEL_DEFAULT;
	l.PreviousLevel = (D3DDDI_LOGGING_LEVEL)7;
	mock_fail_logging_buffers(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(D3DDDI_LOGGING_LEVEL_ALL, l.PreviousLevel);
	/* Any other failure writes nothing. */
	l.PreviousLevel = (D3DDDI_LOGGING_LEVEL)7;
	mock_fail_next(EIO);
	EXPECT_NE(STATUS_SUCCESS, NFenceSetLoggingLevel(&l));
	EXPECT_EQ(7, (int)l.PreviousLevel);
}

TEST_F(gpu, queue_arguments)
{
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx, ctx1;
	char pdd[4];

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev1, 0, &ctx1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(ctx, 1u << 6, &q));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, create_queue(ctx, 1u << 4, &q));
	/* No native fences on adapter 1: a monitored progress fence only. */
	EXPECT_EQ(STATUS_NOT_SUPPORTED, create_queue(ctx1, 1u << 5, &q));
	EXPECT_EQ(0u, q.hHwQueue);
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx1, 0, &q));
	EXPECT_NE(NULL, q.HwQueueProgressFenceCPUVirtualAddress);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(self->dev, 0, &q));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_queue(0, 0, &q));
	memset(&q, 0, sizeof(q));
	q.hHwContext = ctx;
	q.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwQueue(&q));
	q.pPrivateDriverData = pdd;
	q.Flags.NoBroadcastSignal = 1;
	q.Flags.NoBroadcastWait = 1;
	q.Flags.NoKmdAccess = 1;
	q.Flags.DisableGpuTimeout = 1;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCreateHwQueue(&q));
	mock_fail_next(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, create_queue(ctx, 0, &q));
	mock_fail_next(EIO);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, create_queue(ctx, 0, &q));
	EXPECT_EQ(2u, mock_live_queues());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwQueue(NULL));
	/* Destroying the contexts destroys their queues. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx1));
	EXPECT_EQ(0u, mock_live_queues());
}

TEST_F(gpu, context_destroy_closes_its_queues)
{
	D3DKMT_CREATEHWQUEUE q1, q2, q3;
	D3DKMT_HANDLE c1, c2;

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &c2));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c1, 0, &q1));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c1, 1u << 5, &q2));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c2, 0, &q3));
	EXPECT_EQ(3u, mock_live_queues());

	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c1));
	EXPECT_EQ(1u, mock_live_queues());
	EXPECT_EQ(1u, mock_live_fences());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q1.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q2.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(q1.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  cpu_wait(self->dev, q2.hHwQueueProgressFence, 0, 0));
	/* The other context's queue is untouched. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev,
					     q3.hHwQueueProgressFence, 1));
	EXPECT_EQ(1u, rd(q3.HwQueueProgressFenceCPUVirtualAddress));
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(q3.hHwQueue));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c2));
}

/* nfence ioctls made so far by this process, of every number. */
static unsigned int all_ioctl_calls(void)
{
	unsigned int nr, n = 0;

	for (nr = 0; nr < 0x20; nr++)
		n += mock_ioctl_calls(nr);
	return n;
}

/*
 * The child of gpu.fork_child_gets_no_handle: every inherited handle names
 * nothing (no ioctl made, nothing written); the NT handle still opens the
 * parent's fence on files of the child's own, where it signals 5.
 * Returns the number of failures.
 */
static int fork_child(const struct handle_set *inherited,
		      const D3DKMT_HANDLE *parent_adapters)
{
	D3DKMT_ADAPTERINFO mine[NADAPTERS];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = NADAPTERS, .pAdapters = mine };
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	unsigned int calls = all_ioctl_calls(), files = mock_open_files();
	D3DKMT_HANDLE dev = 0;
	int bad, i, j;

	bad = (int)handle_calls_check(inherited, STATUS_INVALID_PARAMETER);
	for (i = 0; i < NADAPTERS; i++)
		bad += NFenceGetAdapterFd(parent_adapters[i]) != -1;
	if (all_ioctl_calls() != calls) {
		fprintf(stderr, "# the child's calls reached the kernel\n");
		bad++;
	}

	/* The child enumerates again: new handles, files of its own. */
	if (D3DKMTEnumAdapters2(&e) != STATUS_SUCCESS ||
	    e.NumAdapters != NADAPTERS)
		return bad + 1;
	for (i = 0; i < NADAPTERS; i++)
		for (j = 0; j < NADAPTERS; j++)
			bad += mine[i].hAdapter == parent_adapters[j];
	bad += mock_open_files() != files + NADAPTERS;
	bad += create_device(mine[0].hAdapter, &dev) != STATUS_SUCCESS;
	memset(&o, 0, sizeof(o));
	o.hNtHandle = (HANDLE)(intptr_t)inherited->fd;
	o.hDevice = dev;
	bad += D3DKMTOpenNativeFenceFromNtHandle(&o) != STATUS_SUCCESS;
	bad += cpu_signal(dev, o.hSyncObject, 5) != STATUS_SUCCESS;
	bad += destroy_device(dev) != STATUS_SUCCESS;
	for (i = 0; i < NADAPTERS; i++) {
		D3DKMT_CLOSEADAPTER c = { .hAdapter = mine[i].hAdapter };

		bad += D3DKMTCloseAdapter(&c) != STATUS_SUCCESS;
	}
	return bad;
}

/*
 * After fork() the child gets no D3DKMT handle (WSL's rule): every call
 * with one it inherited (handle_calls.h) is STATUS_INVALID_PARAMETER and
 * reaches no ioctl. The fake driver has no doorbells: an inherited handle
 * of another kind stands for one (the kselftest has a real one). The
 * parent's objects are untouched and the NT handle (an fd) stays valid.
 */
TEST_F(gpu, fork_child_gets_no_handle)
{
	D3DKMT_HANDLE parent_adapters[NADAPTERS];
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_CREATENATIVEFENCE cf;
	D3DKMT_CREATEHWQUEUE q;
	struct handle_set hs;
	struct alloc a;
	HANDLE nt;
	int i, status;
	pid_t pid;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = self->dev;
	cf.Info.Flags.Shared = 1;
	cf.Info.Flags.NtSecuritySharing = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateNativeFence(&cf));
	m = cf.Info.NativeFenceMapping;
	ASSERT_EQ(STATUS_SUCCESS,
		  D3DKMTShareObjects(1, &cf.hSyncObject, NULL, 0, &nt));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE,
					       NFENCE_SEGMENT_ID_SYSTEM, 0, &a));
	hs.adapter = self->adapters[0].hAdapter;
	hs.device = self->dev;
	hs.sync = cf.hSyncObject;
	hs.allocation = a.h;
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &hs.context));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(hs.context, 0, &q));
	hs.queue = q.hHwQueue;
	hs.doorbell = q.hHwQueueProgressFence;
	hs.fd = (int)(intptr_t)nt;
	for (i = 0; i < NADAPTERS; i++)
		parent_adapters[i] = self->adapters[i].hAdapter;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fork_child(&hs, parent_adapters));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->dev, hs.sync, 5, 5000000000ull));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* The parent's handles all still work. */
	EXPECT_EQ(5ull, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, hs.sync, 6));
	EXPECT_NE(-1, NFenceGetAdapterFd(hs.adapter));
	EXPECT_EQ(STATUS_SUCCESS, destroy_queue(hs.queue));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(hs.context));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, hs.allocation));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(hs.sync));
	close(hs.fd);
}

TEST_F(gpu, device_destroy_closes_everything)
{
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx, ctxb, fence;
	struct alloc a, ab;
	void *p, *pb;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 1, 0, &a));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev_b, PAGE, 1, 0, &ab));
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &p));
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev_b, ab.h, &pb));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev_b, 0, &ctxb));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));
	fence = create_fence(_metadata, self->dev, 0, NULL);

	ASSERT_EQ(STATUS_SUCCESS, destroy_device(self->dev));
	EXPECT_FALSE(mapped(p));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_alloc(self->dev, a.h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(ctx));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(q.hHwQueueProgressFence));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_sync(fence));
	EXPECT_EQ(1u, mock_live_allocations());
	EXPECT_EQ(1u, mock_live_contexts());
	EXPECT_EQ(0u, mock_live_queues());
	EXPECT_EQ(0u, mock_live_fences());

	/* The other device of the adapter keeps its objects. */
	EXPECT_TRUE(mapped(pb));
	EXPECT_EQ(STATUS_SUCCESS, unlock(self->dev_b, ab.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctxb));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev_b, ab.h));
}

/* ---- submission ----------------------------------------------------- */

/* A CPU-visible system allocation locked for the CPU. */
struct buf {
	struct alloc a;
	UINT64 *cpu;
};

static void make_buf(struct __test_metadata *_metadata, D3DKMT_HANDLE dev,
		     UINT64 size, struct buf *b)
{
	void *p = NULL;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, size, 1, 1, &b->a));
	ASSERT_EQ(STATUS_SUCCESS, lock(dev, b->a.h, &p));
	b->cpu = p;
}

TEST_F(gpu, submit_runs_commands_and_signals_progress)
{
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx;
	struct buf cmd, data;
	NFENCE_CS cs;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));

	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, cmd.cpu, PAGE, cmd.a.va));
	NFenceCsWork(&cs, 1000);
	NFenceCsTimestamp(&cs, data.a.va);
	NFenceCsWrite64(&cs, data.a.va + 8, 0xfeedull);
	NFenceCsNop(&cs);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 5));
	EXPECT_EQ(0xfeedu, rd(&data.cpu[1]));
	EXPECT_NE(0u, rd(&data.cpu[0]));
	EXPECT_EQ(5u, rd(q.HwQueueProgressFenceCPUVirtualAddress));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->dev, q.hHwQueueProgressFence,
					   5, 0));

	/* The progress value must grow. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, submit(q.hHwQueue, &cs, 5));
	/* Kernel-side checks of the buffer. */
	{
		D3DKMT_SUBMITCOMMANDTOHWQUEUE s = {
			.hHwQueue = q.hHwQueue,
			.HwQueueProgressFenceId = 6,
			.CommandBuffer = cmd.a.va,
			.CommandLength = 12,
		};

		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		s.CommandLength = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		s.CommandLength = 8;
		s.CommandBuffer = 0x10;		/* no allocation there */
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		s.CommandBuffer = cmd.a.va;
		s.PrivateDriverDataSize = 4;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		s.PrivateDriverDataSize = 0;
		s.NumPrimaries = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		s.NumPrimaries = 0;
		s.hHwQueue = ctx;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(NULL));
	}
	/* An invalid command is refused at submission. */
	cmd.cpu[0] = 0x00030000;	/* NOP with a length of 3 */
	{
		D3DKMT_SUBMITCOMMANDTOHWQUEUE s = {
			.hHwQueue = q.hHwQueue,
			.HwQueueProgressFenceId = 6,
			.CommandBuffer = cmd.a.va,
			.CommandLength = 8,
		};

		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitCommandToHwQueue(&s));
	}
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, cmd.a.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, data.a.h));
}

TEST_F(gpu, native_fence_between_queues)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_CREATEHWQUEUE q0, q1;
	D3DKMT_HANDLE c0, c1, f;
	struct buf cmd0, cmd1, data;
	NFENCE_CS cs0, cs1;

	make_buf(_metadata, self->dev, PAGE, &cmd0);
	make_buf(_metadata, self->dev, PAGE, &cmd1);
	make_buf(_metadata, self->dev, PAGE, &data);
	f = create_fence(_metadata, self->dev, 0, &m);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c0));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c0, 1u << 5, &q0));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c1, 1u << 5, &q1));

	/* Engine 1 waits for the fence the CPU, then engine 0, signals. */
	NFenceCsInit(&cs1, cmd1.cpu, PAGE, cmd1.a.va);
	NFenceCsWaitNativeFenceUnlogged(&cs1, &m, 2);
	NFenceCsWrite64(&cs1, data.a.va, 7);
	ASSERT_EQ(STATUS_SUCCESS, submit(q1.hHwQueue, &cs1, 1));
	EXPECT_EQ(0u, rd(&data.cpu[0]));
	EXPECT_EQ(1u, mock_pending());
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 1));
	EXPECT_EQ(0u, rd(&data.cpu[0]));

	NFenceCsInit(&cs0, cmd0.cpu, PAGE, cmd0.a.va);
	NFenceCsSignalNativeFenceUnlogged(&cs0, &m, 2);
	ASSERT_EQ(STATUS_SUCCESS, submit(q0.hHwQueue, &cs0, 1));
	EXPECT_EQ(2u, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(7u, rd(&data.cpu[0]));
	EXPECT_EQ(1u, rd(q1.HwQueueProgressFenceCPUVirtualAddress));
	EXPECT_EQ(0u, mock_pending());

	/* Engine 1 waits on engine 0's progress fence by its GPU VA. */
	NFenceCsReset(&cs1);
	NFenceCsFenceWaitUnlogged(&cs1, q0.HwQueueProgressFenceGPUVirtualAddress, 2);
	NFenceCsWrite64(&cs1, data.a.va, 8);
	ASSERT_EQ(STATUS_SUCCESS, submit(q1.hHwQueue, &cs1, 2));
	EXPECT_EQ(7u, rd(&data.cpu[0]));
	NFenceCsReset(&cs0);
	NFenceCsNop(&cs0);
	ASSERT_EQ(STATUS_SUCCESS, submit(q0.hHwQueue, &cs0, 2));
	EXPECT_EQ(8u, rd(&data.cpu[0]));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c1));
}

/* An asynchronous CPU wait for @value of @fence; returns its eventfd. */
static int async_wait(struct __test_metadata *_metadata, D3DKMT_HANDLE dev,
		      D3DKMT_HANDLE fence, const UINT64 *value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = dev,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.FenceValueArray = value,
	};
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	EXPECT_LE(0, efd);
	w.hAsyncEvent = (HANDLE)(intptr_t)efd;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	return efd;
}

static bool fired(int efd)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/*
 * MonitoredValue, as an engine reads it with a FENCE_WAIT at its GPU VA:
 * the least value a CPU waiter (or a legacy queue wait the queue has
 * reached) waits for, minus 1; UINT64_MAX without a waiter.
 */
TEST_F(gpu, monitored_value_follows_cpu_waiters)
{
	static const UINT64 v5 = 5, v10 = 10;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_CREATEHWQUEUE q, ql;
	D3DKMT_HANDLE ctx, ctxl, f;
	struct buf cmd, data;
	NFENCE_CS cs;
	int e10, e5;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	f = create_fence(_metadata, self->dev, 0, &m);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &ctxl));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctxl, 1u << 5, &ql));

/* Submission @n: wait for MonitoredValue >= @mv, then write @n. */
#define MV_AT_LEAST(n, mv) do {						\
		NFenceCsInit(&cs, (char *)cmd.cpu + (n) * 64, 64,	\
			     cmd.a.va + (n) * 64);			\
		NFenceCsFenceWaitUnlogged(&cs, m.MonitoredValueGpuVa, (mv)); \
		NFenceCsWrite64(&cs, data.a.va, (n));			\
		ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, (n)));\
	} while (0)

	MV_AT_LEAST(1, UINT64_MAX);
	EXPECT_EQ(1u, rd(&data.cpu[0]));

	e10 = async_wait(_metadata, self->dev, f, &v10);
	MV_AT_LEAST(2, 9);
	EXPECT_EQ(2u, rd(&data.cpu[0]));
	MV_AT_LEAST(3, 10);
	EXPECT_EQ(2u, rd(&data.cpu[0]));

	/* A second waiter, for less: 4; it leaves at 5, back to 9. */
	e5 = async_wait(_metadata, self->dev, f, &v5);
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 5));
	EXPECT_TRUE(fired(e5));
	EXPECT_FALSE(fired(e10));
	EXPECT_EQ(2u, rd(&data.cpu[0]));

	/* The last waiter leaves: UINT64_MAX, the GPU wait passes. */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 10));
	EXPECT_TRUE(fired(e10));
	EXPECT_EQ(3u, rd(&data.cpu[0]));
	EXPECT_EQ(3u, rd(q.HwQueueProgressFenceCPUVirtualAddress));

	/* A legacy queue wait for 20, once reached, is a waiter too. */
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(ql.hHwQueue, f, 20));
	MV_AT_LEAST(4, 19);
	EXPECT_EQ(4u, rd(&data.cpu[0]));
	MV_AT_LEAST(5, 20);
	EXPECT_EQ(4u, rd(&data.cpu[0]));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 20));
	EXPECT_EQ(5u, rd(&data.cpu[0]));
#undef MV_AT_LEAST

	close(e5);
	close(e10);
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctxl));
}

TEST_F(gpu, legacy_wait_and_broadcast_signal)
{
	D3DKMT_CREATEHWQUEUE q0, q1, qb;
	D3DKMT_HANDLE c0, c1, cb, f, fb, qs[3];
	UINT64 v[2] = { 4, 5 };
	D3DKMT_HANDLE fs[2];
	D3DDDI_NATIVEFENCEMAPPING m;
	unsigned int calls;

	f = create_fence(_metadata, self->dev, 0, &m);
	fb = create_fence(_metadata, self->dev_b, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c0));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev_b, 1, &cb));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c0, 0, &q0));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c1, 0, &q1));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(cb, 0, &qb));

	/* q1 waits for 3, the CPU signals 3: the queue moves on. */
	ASSERT_EQ(STATUS_SUCCESS, queue_wait(q1.hHwQueue, f, 3));
	EXPECT_EQ(1u, mock_pending());
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 3));
	EXPECT_EQ(0u, mock_pending());

	/* One SUBMIT_SIGNAL per broadcast queue, in order. */
	qs[0] = q0.hHwQueue;
	qs[1] = q1.hHwQueue;
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL);
	ASSERT_EQ(STATUS_SUCCESS, queue_signal(qs, 2, f, 4));
	EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
	EXPECT_EQ(4u, rd(m.CurrentValueCpuVa));

	/* A bad queue or object anywhere: nothing is queued. */
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL);
	qs[1] = c1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(qs, 2, f, 9));
	qs[1] = q1.hHwQueue;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(qs, 2, c0, 9));
	EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
	EXPECT_EQ(4u, rd(m.CurrentValueCpuVa));
	/* The kernel refuses on the third queue (another device's fence). */
	qs[2] = qb.hHwQueue;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_signal(qs, 3, f, 6));
	EXPECT_EQ(calls + 3, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
	EXPECT_EQ(6u, rd(m.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, queue_signal(&qb.hHwQueue, 1, fb, 1));
	/* A fence of another device, for a wait. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q0.hHwQueue, fb, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, queue_wait(q0.hHwQueue, c0, 1));

	/* Several objects. */
	fs[0] = f;
	fs[1] = q0.hHwQueueProgressFence;
	{
		D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s = {
			.BroadcastHwQueueCount = 1,
			.BroadcastHwQueueArray = &q1.hHwQueue,
			.ObjectCount = 2,
			.ObjectHandleArray = fs,
			.FenceValueArray = v,
		};
		D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
			.hHwQueue = q1.hHwQueue,
			.ObjectCount = 2,
			.ObjectHandleArray = fs,
			.FenceValueArray = v,
		};

		v[0] = 7;
		EXPECT_EQ(STATUS_SUCCESS,
			  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
		EXPECT_EQ(7u, rd(m.CurrentValueCpuVa));
		EXPECT_EQ(5u, rd(q0.HwQueueProgressFenceCPUVirtualAddress));
		EXPECT_EQ(STATUS_SUCCESS,
			  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
		EXPECT_EQ(0u, mock_pending());

		/* Argument checks. */
		s.Flags.SignalAtSubmission = 1;
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
		s.BroadcastHwQueueCount = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
		s.BroadcastHwQueueCount = 1;
		s.ObjectCount = 65;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitSignalSyncObjectsToHwQueue(&s));
		w.ObjectCount = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
		w.ObjectCount = 1;
		w.FenceValueArray = NULL;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
		w.FenceValueArray = v;
		w.hHwQueue = f;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w));
	}
	mock_fail_next(EACCES);
	EXPECT_EQ(STATUS_ACCESS_DENIED, queue_wait(q0.hHwQueue, f, 1));

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(fb));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(cb));
}

static NTSTATUS context_wait(D3DKMT_HANDLE ctx, D3DKMT_HANDLE fence,
			     UINT64 value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = {
		.hContext = ctx,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.MonitoredFenceValueArray = &value,
	};

	return D3DKMTWaitForSynchronizationObjectFromGpu(&w);
}

static NTSTATUS context_signal(D3DKMT_HANDLE ctx, D3DKMT_HANDLE fence,
			       UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = {
		.hContext = ctx,
		.ObjectCount = 1,
		.ObjectHandleArray = &fence,
		.MonitoredFenceValueArray = &value,
	};

	return D3DKMTSignalSynchronizationObjectFromGpu(&s);
}

/*
 * The context-level GPU calls: a wait holds the context's own queue (one
 * kernel queue, made on the first call and destroyed with the context), a
 * signal behind it runs once the wait is satisfied; FromGpu2 signals on
 * every broadcast context in order; a bad context or object queues
 * nothing.
 */
TEST_F(gpu, context_level_wait_and_signal)
{
	D3DKMT_HANDLE c0, c1, c2, cb, f, g, gb, ctxs[3];
	D3DDDI_NATIVEFENCEMAPPING mf, mg;
	UINT64 v = 3;
	unsigned int calls, queues;

	f = create_fence(_metadata, self->dev, 0, &mf);
	g = create_fence(_metadata, self->dev, 0, &mg);
	gb = create_fence(_metadata, self->dev_b, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c0));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev_b, 1, &cb));

	/* No queue until the first context-level call; one per context. */
	queues = mock_live_queues();
	ASSERT_EQ(STATUS_SUCCESS, context_wait(c0, f, 2));
	EXPECT_EQ(queues + 1, mock_live_queues());
	ASSERT_EQ(STATUS_SUCCESS, context_signal(c0, g, 1));
	EXPECT_EQ(queues + 1, mock_live_queues());
	EXPECT_EQ(0u, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 2));
	EXPECT_EQ(1u, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(0u, mock_pending());

	/* FromGpu2 on two contexts, in order, one SUBMIT_SIGNAL each. */
	{
		D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s = {
			.ObjectCount = 1,
			.ObjectHandleArray = &g,
			.BroadcastContextCount = 2,
			.BroadcastContextArray = ctxs,
			.MonitoredFenceValueArray = &v,
		};
		D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = {
			.hContext = c0,
			.ObjectCount = 1,
			.ObjectHandleArray = &f,
			.MonitoredFenceValueArray = &v,
		};

		ctxs[0] = c0;
		ctxs[1] = c1;
		calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL);
		ASSERT_EQ(STATUS_SUCCESS,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
		EXPECT_EQ(3u, rd(mg.CurrentValueCpuVa));
		EXPECT_EQ(queues + 2, mock_live_queues());

		/* A bad context or object anywhere: nothing is queued. */
		calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL);
		v = 9;
		ctxs[1] = f;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		ctxs[1] = c1;
		ctxs[0] = g;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
		EXPECT_EQ(3u, rd(mg.CurrentValueCpuVa));
		/* ... nor makes the first context's own queue. */
		ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c2));
		ctxs[0] = c2;
		ctxs[1] = f;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		EXPECT_EQ(queues + 2, mock_live_queues());
		EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
		/*
		 * The kernel refuses on the second context (g is no fence of
		 * dev_b, whose context cb is): the first signal stays queued
		 * (and ran), and cb got its queue.
		 */
		ctxs[0] = c0;
		ctxs[1] = cb;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));
		EXPECT_EQ(9u, rd(mg.CurrentValueCpuVa));
		EXPECT_EQ(queues + 3, mock_live_queues());
		calls += 2;

		/* Argument checks. */
		ctxs[1] = c1;
		s.Flags.SignalAtSubmission = 1;
		EXPECT_EQ(STATUS_NOT_SUPPORTED,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		s.Flags.Value = 0;
		s.Flags.EnqueueCpuEvent = 1;
		EXPECT_EQ(STATUS_NOT_SUPPORTED,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		s.Flags.Value = 0;
		s.Flags.Reserved = 1;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		s.Flags.Value = 0;
		s.BroadcastContextCount = 0;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		s.BroadcastContextCount = 2;
		s.MonitoredFenceValueArray = NULL;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(&s));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu2(NULL));
		EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_SUBMIT_SIGNAL));

		w.ObjectCount = 65;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTWaitForSynchronizationObjectFromGpu(&w));
		w.ObjectCount = 1;
		w.ObjectHandleArray = NULL;
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTWaitForSynchronizationObjectFromGpu(&w));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTWaitForSynchronizationObjectFromGpu(NULL));
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSignalSynchronizationObjectFromGpu(NULL));
	}
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_wait(f, f, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_signal(c0, gb, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_signal(c0, c1, 1));
	EXPECT_EQ(queues + 3, mock_live_queues());
	mock_fail_next(EACCES);
	EXPECT_EQ(STATUS_ACCESS_DENIED, context_wait(c0, f, 1));

	/* The contexts' queues go with them. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(cb));
	EXPECT_EQ(queues, mock_live_queues());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_signal(c0, g, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(g));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(gb));
}

static NTSTATUS create_hw_context(D3DKMT_HANDLE dev, UINT node, UINT flags,
				  D3DKMT_HANDLE *h)
{
	D3DKMT_CREATEHWCONTEXT c = {
		.hDevice = dev,
		.NodeOrdinal = node,
		.hHwContext = 0xa5a5a5a5u,
	};
	NTSTATUS st;

	c.Flags.Value = flags;
	st = D3DKMTCreateHwContext(&c);
	*h = c.hHwContext;
	return st;
}

static NTSTATUS destroy_hw_context(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYHWCONTEXT d = { .hHwContext = h };

	return D3DKMTDestroyHwContext(&d);
}

/*
 * A hardware context is a context (Documentation/libnfence.rst, "Hardware
 * contexts and context-level submission"): the parent of hardware queues,
 * taken by the context-level calls, destroyed by either destroy call;
 * what D3DKMTCreateHwContext refuses, before any ioctl.
 */
TEST_F(gpu, hw_context_is_a_context)
{
	D3DKMT_HANDLE hc, vc, f, g;
	D3DDDI_NATIVEFENCEMAPPING mg;
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_CREATEHWCONTEXT c;
	struct buf cmd, data;
	unsigned int calls, contexts;
	NFENCE_CS cs;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	f = create_fence(_metadata, self->dev, 0, NULL);
	g = create_fence(_metadata, self->dev, 0, &mg);
	contexts = mock_live_contexts();

	ASSERT_EQ(STATUS_SUCCESS, create_hw_context(self->dev, 1, 0, &hc));
	EXPECT_EQ(contexts + 1, mock_live_contexts());
	EXPECT_EQ(0u, hc & 0x3f);
	EXPECT_EQ(0xc0000000u, hc & 0xc0000000u);

	/* The parent of a hardware queue, which runs work. */
	ASSERT_EQ(STATUS_SUCCESS, create_queue(hc, 1u << 5, &q));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, cmd.cpu, PAGE, cmd.a.va));
	NFenceCsWrite64(&cs, data.a.va, 0x4c);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 1));
	EXPECT_EQ(0x4cu, rd(&data.cpu[0]));
	/* A context to the context-level calls and the test hooks. */
	ASSERT_EQ(STATUS_SUCCESS, context_wait(hc, f, 1));
	ASSERT_EQ(STATUS_SUCCESS, context_signal(hc, g, 1));
	EXPECT_EQ(0u, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 1));
	EXPECT_EQ(1u, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_SUCCESS, NFenceSuspendContext(hc));
	EXPECT_EQ(STATUS_SUCCESS, NFenceResumeContext(hc));

	/* D3DKMTDestroyContext destroys it, with its queue. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(hc));
	EXPECT_EQ(contexts, mock_live_contexts());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_hw_context(hc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(hc));

	/* D3DKMTDestroyHwContext destroys a virtual context. */
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &vc));
	EXPECT_EQ(STATUS_SUCCESS, destroy_hw_context(vc));
	EXPECT_EQ(contexts, mock_live_contexts());
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_context(vc));
	/* ... and a hardware context, on any adapter. */
	ASSERT_EQ(STATUS_SUCCESS, create_hw_context(self->dev1, 0, 0, &hc));
	EXPECT_EQ(STATUS_SUCCESS, destroy_hw_context(hc));
	EXPECT_EQ(contexts, mock_live_contexts());

	/* What is refused before any ioctl; nothing is written. */
	calls = mock_ioctl_calls(DRM_NFENCE_CONTEXT_CREATE);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_hw_context(self->dev, 0, 1, &hc));
	EXPECT_EQ(0xa5a5a5a5u, hc);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_hw_context(self->dev, 0, 0x80000000u, &hc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_hw_context(f, 0, 0, &hc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_hw_context(0, 0, 0, &hc));
	memset(&c, 0, sizeof(c));
	c.hDevice = self->dev;
	c.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(&c));
	c.EngineAffinity = 1;
	c.PrivateDriverDataSize = 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(&c));
	EXPECT_EQ(0u, c.hHwContext);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(NULL));
	EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_CONTEXT_CREATE));
	/* The kernel's: no such engine. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  create_hw_context(self->dev, 99, 0, &hc));
	EXPECT_EQ(0xa5a5a5a5u, hc);
	/* With private data, which means nothing to nfence. */
	c.pPrivateDriverData = &calls;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateHwContext(&c));
	EXPECT_EQ(STATUS_SUCCESS, destroy_hw_context(c.hHwContext));

	/* What D3DKMTDestroyHwContext refuses. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_hw_context(0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_hw_context(f));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_hw_context(self->dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwContext(NULL));
	EXPECT_EQ(contexts, mock_live_contexts());

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(g));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, cmd.a.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, data.a.h));
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

/*
 * D3DKMTSubmitCommand: the buffer goes to each broadcast context's own
 * queue, behind the context-level wait queued before it and ahead of the
 * signal queued after it; libnfence numbers the submissions (the kernel
 * wants growing values); the context's hardware queues are not held.
 */
TEST_F(gpu, submit_command_on_contexts)
{
	D3DKMT_HANDLE c0, c1, f, f1, g, ctxs[2];
	D3DDDI_NATIVEFENCEMAPPING mg;
	D3DKMT_CREATEHWQUEUE q;
	struct buf cmd, data;
	unsigned int queues, calls, i;
	NFENCE_CS cs, other;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	f = create_fence(_metadata, self->dev, 0, NULL);
	f1 = create_fence(_metadata, self->dev, 0, NULL);
	g = create_fence(_metadata, self->dev, 0, &mg);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c0));
	ASSERT_EQ(STATUS_SUCCESS, create_hw_context(self->dev, 1, 0, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c0, 1u << 5, &q));
	queues = mock_live_queues();
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, cmd.cpu, 256, cmd.a.va));
	NFenceCsWrite64(&cs, data.a.va, 0x5c);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));

	/* Held by the context-level wait; the signal behind it waits too. */
	ASSERT_EQ(STATUS_SUCCESS, context_wait(c0, f, 1));
	EXPECT_EQ(queues + 1, mock_live_queues());
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);
	ASSERT_EQ(STATUS_SUCCESS, submit_command(&c0, 1, &cs));
	EXPECT_EQ(calls + 1, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(queues + 1, mock_live_queues());
	ASSERT_EQ(STATUS_SUCCESS, context_signal(c0, g, 1));
	EXPECT_EQ(0u, rd(&data.cpu[0]));
	EXPECT_EQ(0u, rd(mg.CurrentValueCpuVa));
	/* The context's hardware queue is not held. */
	ASSERT_EQ(STATUS_SUCCESS,
		  NFenceCsInit(&other, cmd.cpu + 64, 256, cmd.a.va + 512));
	NFenceCsWrite64(&other, data.a.va + 8, 0x6d);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &other, 1));
	EXPECT_EQ(0x6du, rd(&data.cpu[1]));
	EXPECT_EQ(0u, rd(&data.cpu[0]));
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 1));
	EXPECT_EQ(0x5cu, rd(&data.cpu[0]));
	EXPECT_EQ(1u, rd(mg.CurrentValueCpuVa));
	EXPECT_EQ(0u, mock_pending());

	/* One submission after the other: each takes the next value. */
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(STATUS_SUCCESS, submit_command(&c0, 1, &cs));
	EXPECT_EQ(calls + 5, mock_ioctl_calls(DRM_NFENCE_SUBMIT));

	/* Broadcast: each context in order, each on its own queue. */
	ctxs[0] = c0;
	ctxs[1] = c1;
	data.cpu[0] = 0;
	ASSERT_EQ(STATUS_SUCCESS, context_wait(c1, f1, 1));
	EXPECT_EQ(queues + 2, mock_live_queues());
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);
	ASSERT_EQ(STATUS_SUCCESS, submit_command(ctxs, 2, &cs));
	EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(0x5cu, rd(&data.cpu[0]));
	data.cpu[0] = 0;
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f1, 1));
	EXPECT_EQ(0x5cu, rd(&data.cpu[0]));
	EXPECT_EQ(0u, mock_pending());
	/* A context named twice gets the buffer twice. */
	ctxs[1] = c0;
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);
	ASSERT_EQ(STATUS_SUCCESS, submit_command(ctxs, 2, &cs));
	EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT));

	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_hw_context(c1));
	EXPECT_EQ(queues - 1, mock_live_queues());
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(g));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, cmd.a.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, data.a.h));
}

/*
 * What D3DKMTSubmitCommand refuses: its own checks queue nothing and make
 * no context's own queue; the kernel's refusal of the buffer queues
 * nothing either.
 */
TEST_F(gpu, submit_command_arguments)
{
	D3DKMT_HANDLE c0, c1, cb, c_other, f, gone;
	D3DKMT_SUBMITCOMMAND s;
	struct buf cmd, data;
	unsigned int queues, calls;
	D3DKMT_HANDLE history = 0;
	char pdd[4];
	NFENCE_CS cs;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	f = create_fence(_metadata, self->dev, 0, NULL);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &c0));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 1, &c1));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev_b, 0, &cb));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev1, 0, &c_other));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &gone));
	ASSERT_EQ(STATUS_SUCCESS, destroy_context(gone));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, cmd.cpu, 256, cmd.a.va));
	NFenceCsWrite64(&cs, data.a.va, 0x7e);
	queues = mock_live_queues();
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);

	memset(&s, 0, sizeof(s));
	s.Commands = NFenceCsGpuVa(&cs);
	s.CommandLength = NFenceCsSize(&cs);
	s.BroadcastContextCount = 2;
	s.BroadcastContext[0] = c0;
	s.BroadcastContext[1] = c1;

	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(NULL));
	s.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.Flags.Value = 0x80000000u;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.Flags.Value = 0;
	s.BroadcastContextCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContextCount = D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContextCount = 2;
	s.CommandLength = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.CommandLength = 12;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.CommandLength = DRM_NFENCE_MAX_SUBMIT_SIZE + 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.CommandLength = NFenceCsSize(&cs);
	s.Commands += 4;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.Commands -= 4;
	s.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.PrivateDriverDataSize = 0;
	s.NumPrimaries = 17;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.NumPrimaries = 0;
	s.NumHistoryBuffers = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.NumHistoryBuffers = 0;

	/* A handle that is no context, anywhere in the array. */
	s.BroadcastContext[1] = f;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = gone;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = 0xc0000000u | 0x40u * 0xffffu;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[0] = self->dev;
	s.BroadcastContext[1] = c1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	/* Contexts of two devices, of one adapter or two. */
	s.BroadcastContext[0] = c0;
	s.BroadcastContext[1] = cb;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContext[1] = c_other;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	/* A count that reaches past the contexts given (handle 0). */
	s.BroadcastContext[1] = c1;
	s.BroadcastContextCount = 3;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	s.BroadcastContextCount = 2;
	EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(queues, mock_live_queues());
	EXPECT_EQ(0u, rd(&data.cpu[0]));

	/* The kernel's checks: a buffer in no allocation, a bad command. */
	s.Commands = 0x10;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	cmd.cpu[32] = 0x00030000;	/* NOP with a length of 3 */
	s.Commands = cmd.a.va + 256;
	s.CommandLength = 8;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(&s));
	EXPECT_EQ(calls + 2, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(0u, mock_pending());

	/* Then the good buffer, with the members nfence ignores. */
	s.Commands = NFenceCsGpuVa(&cs);
	s.CommandLength = NFenceCsSize(&cs);
	s.PresentHistoryToken = 0x1234;
	s.pPrivateDriverData = pdd;
	s.PrivateDriverDataSize = sizeof(pdd);
	s.NumPrimaries = 16;
	s.NumHistoryBuffers = 1;
	s.HistoryBufferArray = &history;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTSubmitCommand(&s));
	EXPECT_EQ(calls + 4, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(0x7eu, rd(&data.cpu[0]));

	/* The kernel's -EIO (the context faulted) is STATUS_DEVICE_REMOVED. */
	mock_fail_next(EIO);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, submit_command(&c0, 1, &cs));

	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c0));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(cb));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c_other));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, cmd.a.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, data.a.h));
}

TEST_F(gpu, suspend_resume_and_fault)
{
	D3DKMT_NFENCE_CONTEXT_STATE state;
	D3DKMT_CREATEHWQUEUE q, q2, qo;
	D3DKMT_HANDLE ctx, other;
	struct buf cmd, data;
	NFENCE_CS cs;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	make_buf(_metadata, self->dev, PAGE, &data);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 2, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 2, &other));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q2));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(other, 1u << 5, &qo));

	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(ctx, &state));
	EXPECT_EQ(0u, state.Flags.Value);

	/* Suspended: submissions are accepted, not run. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(ctx, &state));
	EXPECT_EQ(1u, (UINT)state.Flags.Suspended);
	EXPECT_EQ(STATUS_SUCCESS, NFenceSuspendContext(ctx));
	NFenceCsInit(&cs, cmd.cpu, PAGE / 2, cmd.a.va);
	NFenceCsWrite64(&cs, data.a.va, 1);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 1));
	EXPECT_EQ(0u, rd(&data.cpu[0]));
	ASSERT_EQ(STATUS_SUCCESS, NFenceResumeContext(ctx));
	EXPECT_EQ(1u, rd(&data.cpu[0]));
	EXPECT_EQ(1u, rd(q.HwQueueProgressFenceCPUVirtualAddress));

	/* A write to an unmapped VA faults the context, not the other one. */
	NFenceCsInit(&cs, (char *)cmd.cpu + PAGE / 2, PAGE / 2,
		     cmd.a.va + PAGE / 2);
	NFenceCsWrite64(&cs, 0x7770000ull, 1);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 2));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(ctx, &state));
	EXPECT_EQ(1u, (UINT)state.Flags.Faulted);
	EXPECT_EQ(0u, (UINT)state.Flags.Suspended);
	EXPECT_EQ(D3DKMT_NFENCE_FAULT_PAGE, state.FaultReason);
	EXPECT_EQ(0x7770000ull, state.FaultGpuVa);
	/* Its progress fences are AlwaysSignaled; submissions fail. */
	EXPECT_LE(0xffffffffull, rd(q2.HwQueueProgressFenceCPUVirtualAddress));
	EXPECT_EQ(STATUS_SUCCESS, cpu_wait(self->dev, q.hHwQueueProgressFence,
					   100, 0));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, submit(q2.hHwQueue, &cs, 3));
	EXPECT_EQ(STATUS_DEVICE_REMOVED,
		  queue_wait(q.hHwQueue, q2.hHwQueueProgressFence, 1));
	EXPECT_EQ(STATUS_DEVICE_REMOVED, create_queue(ctx, 0, &q2));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(other, &state));
	EXPECT_EQ(0u, state.Flags.Value);
	EXPECT_EQ(0u, state.FaultGpuVa);
	NFenceCsReset(&cs);
	NFenceCsWrite64(&cs, data.a.va, 2);
	EXPECT_EQ(STATUS_SUCCESS, submit(qo.hHwQueue, &cs, 1));
	EXPECT_EQ(2u, rd(&data.cpu[0]));

	/* Argument checks and errno mapping. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryContextState(ctx, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceSuspendContext(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceResumeContext(0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryContextState(self->dev,
								 &state));
	mock_fail_next(EBUSY);
	EXPECT_EQ(STATUS_DEVICE_BUSY, NFenceSuspendContext(ctx));

	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(other));
}

TEST_F(gpu, context_scheduling_priority)
{
	D3DKMT_SETCONTEXTSCHEDULINGPRIORITY set;
	D3DKMT_GETCONTEXTSCHEDULINGPRIORITY get;
	D3DKMT_CREATEHWCONTEXT hw;
	D3DKMT_HANDLE ctx, other;
	/* Out of -7..7, Windows' absolute priorities (bit 30 set) too. */
	static const INT bad[] = { -8, 8, 31, 0x40000000, 0x40000001,
				   0x4000001e, INT32_MIN, INT32_MAX };

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &other));
	/* A new context has 0. */
	get.hContext = ctx;
	get.Priority = 99;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(0, get.Priority);
	for (INT p = -7; p <= 7; p++) {
		set.hContext = ctx;
		set.Priority = p;
		ASSERT_EQ(STATUS_SUCCESS,
			  D3DKMTSetContextSchedulingPriority(&set));
		get.Priority = 99;
		ASSERT_EQ(STATUS_SUCCESS,
			  D3DKMTGetContextSchedulingPriority(&get));
		EXPECT_EQ(p, get.Priority);
	}
	/* Per context. */
	get.hContext = other;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(0, get.Priority);

	/* Refused values change nothing, and reach no ioctl. */
	set.hContext = ctx;
	set.Priority = -3;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSetContextSchedulingPriority(&set));
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned int calls = all_ioctl_calls();

		set.Priority = bad[i];
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTSetContextSchedulingPriority(&set));
		EXPECT_EQ(calls, all_ioctl_calls());
	}
	get.hContext = ctx;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(-3, get.Priority);

	/* A hardware context is a context. */
	memset(&hw, 0, sizeof(hw));
	hw.hDevice = self->dev;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateHwContext(&hw));
	set.hContext = hw.hHwContext;
	set.Priority = 7;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTSetContextSchedulingPriority(&set));
	get.hContext = hw.hHwContext;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(7, get.Priority);

	/* NULL, handles of nothing or of another kind; nothing written. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTGetContextSchedulingPriority(NULL));
	set.Priority = 1;
	set.hContext = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	set.hContext = self->dev;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	get.hContext = self->dev;
	get.Priority = 99;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(99, get.Priority);
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(other));
	get.hContext = other;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTGetContextSchedulingPriority(&get));
	EXPECT_EQ(99, get.Priority);
	set.hContext = other;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSetContextSchedulingPriority(&set));
	/* The kernel's errors are mapped. */
	mock_fail_next(EBUSY);
	set.hContext = ctx;
	EXPECT_EQ(STATUS_DEVICE_BUSY, D3DKMTSetContextSchedulingPriority(&set));

	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(hw.hHwContext));
}

TEST_F(gpu, bad_command_at_run_time_faults)
{
	D3DKMT_NFENCE_CONTEXT_STATE state;
	D3DKMT_CREATEHWQUEUE q;
	D3DDDI_NATIVEFENCEMAPPING m;
	D3DKMT_HANDLE ctx, f;
	struct buf cmd;
	NFENCE_CS cs;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	f = create_fence(_metadata, self->dev, 0, &m);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 1u << 5, &q));

	/* Waits for the CPU; the CPU then rewrites the next command. */
	NFenceCsInit(&cs, cmd.cpu, PAGE, cmd.a.va);
	NFenceCsWaitNativeFenceUnlogged(&cs, &m, 1);
	NFenceCsNop(&cs);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 1));
	cmd.cpu[3] = 0x000200ffull;		/* opcode 0xff */
	EXPECT_EQ(STATUS_SUCCESS, cpu_signal(self->dev, f, 1));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(ctx, &state));
	EXPECT_EQ(1u, (UINT)state.Flags.Faulted);
	EXPECT_EQ(D3DKMT_NFENCE_FAULT_BAD_COMMAND, state.FaultReason);
	EXPECT_EQ(cmd.a.va + 24, state.FaultGpuVa);

	/* A GPU write to a MonitoredValue (read-only) faults too. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &q));
	NFenceCsReset(&cs);
	NFenceCsWrite64(&cs, m.MonitoredValueGpuVa, 1);
	ASSERT_EQ(STATUS_SUCCESS, submit(q.hHwQueue, &cs, 1));
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryContextState(ctx, &state));
	EXPECT_EQ(D3DKMT_NFENCE_FAULT_PAGE, state.FaultReason);
	EXPECT_EQ(m.MonitoredValueGpuVa, state.FaultGpuVa);

	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

TEST_F(gpu, kernel_errors_are_mapped)
{
	static const struct {
		int err;
		NTSTATUS st;
	} map[] = {
		{ EIO, STATUS_DEVICE_REMOVED },
		{ EBUSY, STATUS_DEVICE_BUSY },
		{ ENOSPC, STATUS_INSUFFICIENT_RESOURCES },
		{ EOPNOTSUPP, STATUS_NOT_SUPPORTED },
		{ EFAULT, STATUS_ACCESS_VIOLATION },
		{ ENOENT, STATUS_INVALID_PARAMETER },
		{ ENOMEM, STATUS_NO_MEMORY },
	};
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx;
	struct buf cmd;
	NFENCE_CS cs;
	struct alloc a;
	void *p;
	size_t i;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 1, 0, &a));
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(ctx, 0, &q));
	NFenceCsInit(&cs, cmd.cpu, PAGE, cmd.a.va);
	NFenceCsNop(&cs);

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		mock_fail_next(map[i].err);
		EXPECT_EQ(map[i].st, submit(q.hHwQueue, &cs, 1))
			TH_LOG("errno %d", map[i].err);
		mock_fail_next(map[i].err);
		EXPECT_EQ(map[i].st, lock(self->dev, a.h, &p));
		mock_fail_next(map[i].err);
		EXPECT_EQ(map[i].st, create_context(self->dev, 0, &ctx));
	}
	/* Kernel destroy errors are reported, the handle is gone anyway. */
	mock_fail_next(EIO);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, a.h));
}

TEST_F(gpu, disable_gpu_timeout_context_flag_reaches_queues)
{
	D3DKMT_CREATECONTEXTVIRTUAL c = { .hDevice = self->dev };
	D3DKMT_CREATEHWQUEUE q;

	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContextVirtual(&c));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c.hContext, 1u << 5, &q));
	EXPECT_EQ(DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE,
		  mock_last_hwqueue_flags());
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));

	/* A context's DisableGpuTimeout is every one of its queues'. */
	c.Flags.DisableGpuTimeout = 1;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContextVirtual(&c));
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c.hContext, 1u << 5, &q));
	EXPECT_EQ(DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE |
		  DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT,
		  mock_last_hwqueue_flags());
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));
}

/*
 * D3DKMTCreateContext makes the context D3DKMTCreateContextVirtual makes,
 * with its checks, and hands out no WDDM 1.x buffers: every output of
 * those is 0 on success, nothing is written on failure, and the context
 * takes hardware queues and context-level GPU signals.
 */
TEST_F(gpu, wddm1_create_context)
{
	D3DKMT_CREATECONTEXT c, before;
	D3DDDI_NATIVEFENCEMAPPING mf;
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE f;
	char pdd[8];

	memset(&c, 0, sizeof(c));
	c.hDevice = self->dev;
	c.hContext = 0x1234;
	c.pCommandBuffer = pdd;
	c.CommandBufferSize = 7;
	c.pAllocationList = (D3DDDI_ALLOCATIONLIST *)pdd;
	c.AllocationListSize = 7;
	c.pPatchLocationList = (D3DDDI_PATCHLOCATIONLIST *)pdd;
	c.PatchLocationListSize = 7;
	c.CommandBuffer = 0xdead000;

	/* The checks of D3DKMTCreateContextVirtual; nothing written. */
	c.NodeOrdinal = 3;	/* the adapter has 3 engines */
	before = c;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));
	c.NodeOrdinal = 0;
	c.EngineAffinity = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));
	c.EngineAffinity = 0;
	c.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));
	c.Flags.Value = 0;
	c.Flags.NullRendering = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateContext(&c));
	c.Flags.Value = 0;
	c.PrivateDriverDataSize = sizeof(pdd);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));
	c.pPrivateDriverData = pdd;
	c.hDevice = self->adapters[0].hAdapter;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(&c));
	c.hDevice = self->dev;
	mock_fail_next(ENOSPC);
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, D3DKMTCreateContext(&c));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContext(NULL));
	EXPECT_EQ(before.hContext, c.hContext);
	EXPECT_EQ(before.pCommandBuffer, c.pCommandBuffer);
	EXPECT_EQ(before.CommandBufferSize, c.CommandBufferSize);
	EXPECT_EQ(before.CommandBuffer, c.CommandBuffer);
	EXPECT_EQ(0u, mock_live_contexts());

	/* Success: a context, and no WDDM 1.x buffers. */
	c.NodeOrdinal = 1;
	c.Flags.DisableGpuTimeout = 1;
	c.ClientHint = D3DKMT_CLIENTHINT_OPENGL;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateContext(&c));
	EXPECT_NE(0u, c.hContext);
	EXPECT_NE(0x1234u, c.hContext);
	EXPECT_EQ(NULL, c.pCommandBuffer);
	EXPECT_EQ(0u, c.CommandBufferSize);
	EXPECT_EQ(NULL, c.pAllocationList);
	EXPECT_EQ(0u, c.AllocationListSize);
	EXPECT_EQ(NULL, c.pPatchLocationList);
	EXPECT_EQ(0u, c.PatchLocationListSize);
	EXPECT_EQ(0u, c.CommandBuffer);
	EXPECT_EQ(1u, mock_live_contexts());

	/* It is a context like any: queues (with its flags), GPU signals. */
	ASSERT_EQ(STATUS_SUCCESS, create_queue(c.hContext, 0, &q));
	EXPECT_EQ(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT,
		  mock_last_hwqueue_flags());
	f = create_fence(_metadata, self->dev, 0, &mf);
	EXPECT_EQ(STATUS_SUCCESS, context_signal(c.hContext, f, 4));
	EXPECT_EQ(4u, rd(mf.CurrentValueCpuVa));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, context_signal(c.hContext + 0x40,
							   f, 5));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(c.hContext));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_queue(q.hHwQueue));
	EXPECT_EQ(0u, mock_live_contexts());
	EXPECT_EQ(0u, mock_live_queues());
}

/*
 * D3DKMTCloseDxCoreDevice closes nothing: no ioctl, no file closed, and
 * the open adapters, devices and contexts go on working.
 */
TEST_F(gpu, close_dxcore_device_closes_nothing)
{
	unsigned int calls = all_ioctl_calls(), files = mock_open_files();
	D3DKMT_PHYSICAL_ADAPTER_COUNT count = { 0 };
	D3DKMT_QUERYADAPTERINFO qa = {
		.hAdapter = self->adapters[0].hAdapter,
		.Type = KMTQAITYPE_PHYSICALADAPTERCOUNT,
		.pPrivateDriverData = &count,
		.PrivateDriverDataSize = sizeof(count),
	};
	D3DKMT_HANDLE ctx;

	D3DKMTCloseDxCoreDevice();
	D3DKMTCloseDxCoreDevice();
	EXPECT_EQ(calls, all_ioctl_calls());
	EXPECT_EQ(files, mock_open_files());
	EXPECT_LE(0, NFenceGetAdapterFd(self->adapters[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTQueryAdapterInfo(&qa));
	EXPECT_EQ(1u, count.Count);
	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

/* D3DKMTQueryVideoMemoryInfo of @group on @adapter; poisoned outputs. */
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

static UINT64 usage_of(D3DKMT_HANDLE adapter, D3DKMT_MEMORY_SEGMENT_GROUP g)
{
	D3DKMT_QUERYVIDEOMEMORYINFO q;

	if (video_memory(adapter, g, &q) != STATUS_SUCCESS)
		return ~0ull;
	return q.CurrentUsage;
}

/*
 * D3DKMTQueryVideoMemoryInfo on the fake driver: LOCAL is the VRAM
 * segment, NON_LOCAL the system segment, each budget the segment's size
 * without quotas; an allocation raises its group's usage by its
 * page-aligned size and no other group's or adapter's, its destroy gives
 * it back; no reservations.
 */
TEST_F(gpu, video_memory_info)
{
	const D3DKMT_HANDLE a0 = self->adapters[0].hAdapter;
	const D3DKMT_HANDLE a2 = self->adapters[2].hAdapter;
	const D3DKMT_MEMORY_SEGMENT_GROUP L = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
	const D3DKMT_MEMORY_SEGMENT_GROUP N =
		D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
	D3DKMT_QUERYVIDEOMEMORYINFO q;
	UINT64 local, sys, local2;
	struct alloc v, s;

	ASSERT_EQ(STATUS_SUCCESS, video_memory(a0, L, &q));
	EXPECT_EQ(64ull << 20, q.Budget);
	EXPECT_EQ(0u, q.CurrentReservation);
	EXPECT_EQ(0u, q.AvailableForReservation);
	local = q.CurrentUsage;
	ASSERT_EQ(STATUS_SUCCESS, video_memory(a0, N, &q));
	EXPECT_EQ(256ull << 20, q.Budget);
	EXPECT_EQ(0u, q.CurrentReservation);
	EXPECT_EQ(0u, q.AvailableForReservation);
	sys = q.CurrentUsage;
	ASSERT_EQ(STATUS_SUCCESS, video_memory(a2, L, &q));
	EXPECT_EQ(2ull << 20, q.Budget);
	local2 = q.CurrentUsage;
	ASSERT_EQ(STATUS_SUCCESS, video_memory(a2, N, &q));
	EXPECT_EQ(4ull << 20, q.Budget);

	/* VRAM, CPU-visible or not, is LOCAL; sizes count page-aligned. */
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, 3 * PAGE + 1, 2, 0,
					       &v));
	EXPECT_EQ(local + 4 * PAGE, usage_of(a0, L));
	EXPECT_EQ(sys, usage_of(a0, N));
	EXPECT_EQ(local2, usage_of(a2, L));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev_b, PAGE, 1, 0, &s));
	EXPECT_EQ(sys + PAGE, usage_of(a0, N));
	EXPECT_EQ(local + 4 * PAGE, usage_of(a0, L));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, v.h));
	EXPECT_EQ(local, usage_of(a0, L));
	EXPECT_EQ(sys + PAGE, usage_of(a0, N));
	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 2, 1, &v));
	EXPECT_EQ(local + PAGE, usage_of(a0, L));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, v.h));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev_b, s.h));
	EXPECT_EQ(local, usage_of(a0, L));
	EXPECT_EQ(sys, usage_of(a0, N));
}

/*
 * Each invalid input alone, with a valid adapter handle, is
 * STATUS_INVALID_PARAMETER without an ioctl and without a byte written; a
 * driver that does not know the query type is STATUS_NOT_SUPPORTED, other
 * kernel errors map as everywhere.
 */
TEST_F(gpu, video_memory_info_errors)
{
	const D3DKMT_HANDLE a0 = self->adapters[0].hAdapter;
	D3DKMT_QUERYVIDEOMEMORYINFO good, q;
	unsigned int calls;
	int i;

	memset(&good, 0xa5, sizeof(good));
	good.hProcess = NULL;
	good.hAdapter = a0;
	good.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
	good.PhysicalAdapterIndex = 0;
	calls = mock_ioctl_calls(DRM_NFENCE_QUERY);
	for (i = 0; i < 6; i++) {
		q = good;
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
			q.MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)-1;
			break;
		case 5:
			q.hAdapter = self->dev;	/* a device, not an adapter */
			break;
		}
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTQueryVideoMemoryInfo(&q)) TH_LOG("case %d", i);
		q.hProcess = good.hProcess;
		q.PhysicalAdapterIndex = good.PhysicalAdapterIndex;
		q.MemorySegmentGroup = good.MemorySegmentGroup;
		q.hAdapter = good.hAdapter;
		EXPECT_EQ(0, memcmp(&q, &good, sizeof(q))) TH_LOG("case %d", i);
	}
	EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_QUERY));

	/* The kernel refusing the type: a driver without it. */
	q = good;
	mock_fail_next(EINVAL);
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTQueryVideoMemoryInfo(&q));
	EXPECT_EQ(0, memcmp(&q, &good, sizeof(q)));
	mock_fail_next(ENODEV);
	EXPECT_EQ(STATUS_DEVICE_REMOVED, D3DKMTQueryVideoMemoryInfo(&q));
	EXPECT_EQ(0, memcmp(&q, &good, sizeof(q)));
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTQueryVideoMemoryInfo(&q));
}

/*
 * With per-client quotas (an adapter added for the test): each budget is
 * the quota bounded by the segment's size, and a file filled to its VRAM
 * quota reports its budget as its usage.
 */
TEST_F(gpu, video_memory_info_quota)
{
	struct mock_adapter m = mock_default_adapter(NADAPTERS);
	D3DKMT_OPENADAPTERFROMLUID open = { 0 };
	D3DKMT_QUERYVIDEOMEMORYINFO q;
	D3DKMT_CLOSEADAPTER close_adapter;
	D3DKMT_HANDLE dev;
	struct alloc a[4], x;
	int i;

	m.vram_mb = 8;
	m.vram_visible_mb = 4;
	m.sysmem_mb = 16;
	m.client_vram_mb = 2;
	m.client_sysmem_mb = 32;	/* more than the segment */
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD131", &m));
	open.AdapterLuid.LowPart = m.luid_low;
	open.AdapterLuid.HighPart = (LONG)m.luid_high;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&open));
	ASSERT_EQ(STATUS_SUCCESS, create_device(open.hAdapter, &dev));

	ASSERT_EQ(STATUS_SUCCESS, video_memory(open.hAdapter,
			D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL, &q));
	EXPECT_EQ(2ull << 20, q.Budget);
	EXPECT_EQ(0u, q.CurrentUsage);
	ASSERT_EQ(STATUS_SUCCESS, video_memory(open.hAdapter,
			D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL, &q));
	EXPECT_EQ(16ull << 20, q.Budget);

	for (i = 0; i < 4; i++)
		ASSERT_EQ(STATUS_SUCCESS, create_alloc(dev, 512u << 10, 2, 0,
						       &a[i]));
	EXPECT_EQ(2ull << 20, usage_of(open.hAdapter,
				       D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL));
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES,
		  create_alloc(dev, PAGE, 2, 0, &x));
	EXPECT_EQ(2ull << 20, usage_of(open.hAdapter,
				       D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(dev, a[i].h));
	EXPECT_EQ(0u, usage_of(open.hAdapter,
			       D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL));

	destroy_device(dev);
	close_adapter.hAdapter = open.hAdapter;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&close_adapter));
}

/*
 * Every call of WSL's library that nfence refuses returns
 * STATUS_NOT_SUPPORTED whatever it is given - NULL, or a struct naming
 * live objects - makes no ioctl and writes nothing.
 */
TEST_F(gpu, libdxg_calls_not_supported)
{
	D3DKMT_HANDLE ctx, f;
	unsigned int calls;
	union {
		D3DKMT_CREATEPAGINGQUEUE cpq;
		D3DKMT_CREATESYNCHRONIZATIONOBJECT cso;
		D3DKMT_ESCAPE esc;
		D3DKMT_EVICT ev;
		D3DKMT_OPENSYNCHRONIZATIONOBJECT oso;
		D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE qri;
		D3DKMT_SIGNALSYNCHRONIZATIONOBJECT sig;
		D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 sig2;
		D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w;
		D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 w2;
		unsigned char bytes[512];
	} a, b;
	int n = 0;

	ASSERT_EQ(STATUS_SUCCESS, create_context(self->dev, 0, &ctx));
	f = create_fence(_metadata, self->dev, 0, NULL);
	calls = all_ioctl_calls();

	/* A struct naming the live device, context and fence. */
	memset(&a, 0, sizeof(a));
#define NF_FILL(m)							\
	do {								\
		memset(&a, 0, sizeof(a));				\
		m;							\
		b = a;							\
	} while (0)
#define NF_REFUSED(call, arg)						\
	do {								\
		EXPECT_EQ(STATUS_NOT_SUPPORTED, call(arg));		\
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));		\
		EXPECT_EQ(STATUS_NOT_SUPPORTED, call(NULL));		\
		n++;							\
	} while (0)
	NF_FILL(a.cpq.hDevice = self->dev);
	NF_REFUSED(D3DKMTCreatePagingQueue, &a.cpq);
	NF_FILL(a.cso.hDevice = self->dev);
	NF_REFUSED(D3DKMTCreateSynchronizationObject, &a.cso);
	NF_FILL((a.esc.hAdapter = self->adapters[0].hAdapter,
		 a.esc.hDevice = self->dev));
	NF_REFUSED(D3DKMTEscape, &a.esc);
	NF_FILL((a.ev.hDevice = self->dev, a.ev.NumAllocations = 0));
	NF_REFUSED(D3DKMTEvict, &a.ev);
	NF_FILL(a.oso.hSharedHandle = f);
	NF_REFUSED(D3DKMTOpenSynchronizationObject, &a.oso);
	NF_FILL(a.qri.hDevice = self->dev);
	NF_REFUSED(D3DKMTQueryResourceInfoFromNtHandle, &a.qri);
	NF_FILL((a.sig.hContext = ctx, a.sig.ObjectCount = 1,
		 a.sig.ObjectHandleArray[0] = f));
	NF_REFUSED(D3DKMTSignalSynchronizationObject, &a.sig);
	NF_FILL((a.sig2.hContext = ctx, a.sig2.ObjectCount = 1,
		 a.sig2.ObjectHandleArray[0] = f));
	NF_REFUSED(D3DKMTSignalSynchronizationObject2, &a.sig2);
	NF_FILL((a.w.hContext = ctx, a.w.ObjectCount = 1,
		 a.w.ObjectHandleArray[0] = f));
	NF_REFUSED(D3DKMTWaitForSynchronizationObject, &a.w);
	NF_FILL((a.w2.hContext = ctx, a.w2.ObjectCount = 1,
		 a.w2.ObjectHandleArray[0] = f));
	NF_REFUSED(D3DKMTWaitForSynchronizationObject2, &a.w2);

	/* The calls whose argument type is incomplete: any pointer. */
	NF_FILL(a.bytes[0] = 1);
#define NF_OPAQUE(call, type)	NF_REFUSED(call, (type *)(void *)&a)
	NF_OPAQUE(D3DKMTChangeVideoMemoryReservation,
		  const D3DKMT_CHANGEVIDEOMEMORYRESERVATION);
	NF_OPAQUE(D3DKMTDestroyAllocation, const D3DKMT_DESTROYALLOCATION);
	NF_OPAQUE(D3DKMTDestroyPagingQueue, D3DDDI_DESTROYPAGINGQUEUE);
	NF_OPAQUE(D3DKMTFlushHeapTransitions, const D3DKMT_FLUSHHEAPTRANSITIONS);
	NF_OPAQUE(D3DKMTFreeGpuVirtualAddress,
		  const D3DKMT_FREEGPUVIRTUALADDRESS);
	NF_OPAQUE(D3DKMTGetAllocationPriority,
		  const D3DKMT_GETALLOCATIONPRIORITY);
	NF_OPAQUE(D3DKMTGetContextInProcessSchedulingPriority,
		  D3DKMT_GETCONTEXTINPROCESSSCHEDULINGPRIORITY);
	NF_OPAQUE(D3DKMTGetSharedResourceAdapterLuid,
		  D3DKMT_GETSHAREDRESOURCEADAPTERLUID);
	NF_OPAQUE(D3DKMTInvalidateCache, const D3DKMT_INVALIDATECACHE);
	NF_OPAQUE(D3DKMTMakeResident, D3DDDI_MAKERESIDENT);
	NF_OPAQUE(D3DKMTMapGpuVirtualAddress, D3DDDI_MAPGPUVIRTUALADDRESS);
	NF_OPAQUE(D3DKMTOfferAllocations, const D3DKMT_OFFERALLOCATIONS);
	NF_OPAQUE(D3DKMTOpenResource, D3DKMT_OPENRESOURCE);
	NF_OPAQUE(D3DKMTOpenResourceFromNtHandle,
		  D3DKMT_OPENRESOURCEFROMNTHANDLE);
	NF_OPAQUE(D3DKMTQueryAllocationResidency,
		  const D3DKMT_QUERYALLOCATIONRESIDENCY);
	NF_OPAQUE(D3DKMTQueryResourceInfo, D3DKMT_QUERYRESOURCEINFO);
	NF_OPAQUE(D3DKMTQueryStatistics, const D3DKMT_QUERYSTATISTICS);
	NF_OPAQUE(D3DKMTReclaimAllocations2, D3DKMT_RECLAIMALLOCATIONS2);
	NF_OPAQUE(D3DKMTRender, D3DKMT_RENDER);
	NF_OPAQUE(D3DKMTReserveGpuVirtualAddress,
		  D3DDDI_RESERVEGPUVIRTUALADDRESS);
	NF_OPAQUE(D3DKMTSetAllocationPriority,
		  const D3DKMT_SETALLOCATIONPRIORITY);
	NF_OPAQUE(D3DKMTSetContextInProcessSchedulingPriority,
		  const D3DKMT_SETCONTEXTINPROCESSSCHEDULINGPRIORITY);
	NF_OPAQUE(D3DKMTShareObjectWithHost, D3DKMT_SHAREOBJECTWITHHOST);
	NF_OPAQUE(D3DKMTUpdateAllocationProperty, D3DDDI_UPDATEALLOCPROPERTY);
	NF_OPAQUE(D3DKMTUpdateGpuVirtualAddress,
		  const D3DKMT_UPDATEGPUVIRTUALADDRESS);
#undef NF_OPAQUE
#undef NF_REFUSED
#undef NF_FILL
	/* All of them: Documentation/libnfence.rst's refused and needs driver. */
	EXPECT_EQ(35, n);
	EXPECT_EQ(calls, all_ioctl_calls());

	/* The objects they named are untouched. */
	EXPECT_EQ(STATUS_SUCCESS, context_signal(ctx, f, 1));
	EXPECT_EQ(STATUS_SUCCESS, destroy_sync(f));
	EXPECT_EQ(STATUS_SUCCESS, destroy_context(ctx));
}

/* ---- threads ------------------------------------------------------- */

#define THREADS	4

struct locker {
	D3DKMT_HANDLE dev, alloc;
	void *first;		/* the pointer every lock must return */
	int failures;
};

static void *lock_unlock(void *p)
{
	struct locker *l = p;
	void *v;
	int i;

	for (i = 0; i < 500; i++) {
		if (lock(l->dev, l->alloc, &v) != STATUS_SUCCESS)
			l->failures++;
		/* Someone always holds a lock: the mapping never moves. */
		else if (v != l->first)
			l->failures++;
		else
			((volatile UINT64 *)v)[1]++;
		if (unlock(l->dev, l->alloc) != STATUS_SUCCESS)
			l->failures++;
	}
	return NULL;
}

TEST_F(gpu, concurrent_lock_unlock)
{
	struct locker l[THREADS];
	D3DKMT_NFENCE_ALLOCATION_INFO info;
	pthread_t th[THREADS];
	struct alloc a;
	void *first;
	int i;

	ASSERT_EQ(STATUS_SUCCESS, create_alloc(self->dev, PAGE, 1, 0, &a));
	ASSERT_EQ(STATUS_SUCCESS, lock(self->dev, a.h, &first));
	for (i = 0; i < THREADS; i++) {
		l[i] = (struct locker){ .dev = self->dev, .alloc = a.h,
					.first = first };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, lock_unlock, &l[i]));
	}
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, l[i].failures);
	}
	ASSERT_EQ(STATUS_SUCCESS, NFenceQueryAllocation(self->dev, a.h, &info));
	EXPECT_EQ(1u, info.LockCount);
	EXPECT_EQ(1u, mock_ioctl_calls(DRM_NFENCE_ALLOC_LOCK));
	EXPECT_EQ(STATUS_SUCCESS, unlock(self->dev, a.h));
	EXPECT_FALSE(mapped(first));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, a.h));
}

struct submitter {
	D3DKMT_HANDLE ctx;
	const NFENCE_CS *cs;
	int failures;
};

static void *submit_commands(void *p)
{
	struct submitter *sm = p;
	int i;

	for (i = 0; i < 200; i++)
		if (submit_command(&sm->ctx, 1, sm->cs) != STATUS_SUCCESS)
			sm->failures++;
	return NULL;
}

/*
 * Threads submitting on one context at once: every submission is queued
 * (libnfence hands out the context queue's progress values in the order
 * the kernel queues the buffers).
 */
TEST_F(gpu, concurrent_submit_command)
{
	struct submitter sm[THREADS];
	pthread_t th[THREADS];
	struct buf cmd;
	D3DKMT_HANDLE ctx;
	unsigned int calls;
	NFENCE_CS cs;
	int i;

	make_buf(_metadata, self->dev, PAGE, &cmd);
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, cmd.cpu, PAGE, cmd.a.va));
	NFenceCsNop(&cs);
	ASSERT_EQ(STATUS_SUCCESS, create_hw_context(self->dev, 0, 0, &ctx));
	calls = mock_ioctl_calls(DRM_NFENCE_SUBMIT);
	for (i = 0; i < THREADS; i++) {
		sm[i] = (struct submitter){ .ctx = ctx, .cs = &cs };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, submit_commands,
					    &sm[i]));
	}
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, sm[i].failures);
	}
	EXPECT_EQ(calls + THREADS * 200, mock_ioctl_calls(DRM_NFENCE_SUBMIT));
	EXPECT_EQ(STATUS_SUCCESS, destroy_hw_context(ctx));
	EXPECT_EQ(STATUS_SUCCESS, destroy_alloc(self->dev, cmd.a.h));
}

static D3DKMT_HANDLE race_dev;

static void *create_gpu_objects_until_gone(void *p)
{
	int *created = p;
	D3DKMT_CREATEHWQUEUE q;
	D3DKMT_HANDLE ctx;
	struct alloc a;
	void *v;
	int i;

	/* Create (and sometimes destroy) until the device is gone. */
	for (i = 0; i < 2000; i++) {
		if (create_context(race_dev, i % 3, &ctx) != STATUS_SUCCESS ||
		    create_alloc(race_dev, PAGE, 1, 0, &a) != STATUS_SUCCESS)
			break;
		lock(race_dev, a.h, &v);
		if (create_queue(ctx, i % 2 ? 1u << 5 : 0, &q) != STATUS_SUCCESS)
			break;
		__atomic_add_fetch(created, 1, __ATOMIC_RELAXED);
		if (i % 4 == 1)
			destroy_queue(q.hHwQueue);
		if (i % 4 == 2)
			destroy_context(ctx);
		if (i % 4 == 3)
			destroy_alloc(race_dev, a.h);
	}
	if (!i)	/* let the main thread go on */
		__atomic_store_n(created, -1, __ATOMIC_RELAXED);
	return NULL;
}

TEST_F(gpu, destroy_device_races_gpu_objects)
{
	pthread_t th[THREADS];
	int created[THREADS] = { 0 };
	int i;

	race_dev = self->dev;
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL,
					    create_gpu_objects_until_gone,
					    &created[i]));
	/* Once every thread is under way. */
	for (i = 0; i < THREADS; i++)
		while (!__atomic_load_n(&created[i], __ATOMIC_RELAXED))
			usleep(100);
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(self->dev));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	/* The other devices' nothing; this one's everything is gone. */
	EXPECT_EQ(0u, mock_live_allocations());
	EXPECT_EQ(0u, mock_live_contexts());
	EXPECT_EQ(0u, mock_live_queues());
	EXPECT_EQ(0u, mock_live_fences());
}

TEST_HARNESS_MAIN
