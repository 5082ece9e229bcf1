/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The public API without any nfence adapter: argument checks, invalid
 * handles, and enumeration of directories with no nfence node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>

#include "handle_calls.h"
#include "kselftest_harness.h"

/*
 * Handles no call has issued (no adapter exists in these tests): small
 * integers (file descriptors' values), and handles of Windows' format.
 */
static const D3DKMT_HANDLE bad_handles[] = {
	0, 1, 2, 0x40000000, 0xc0000000, 0xc0000040, 0xdeadbeef, 0xffffffc0,
	0xffffffff,
};

TEST(null_arguments)
{
	D3DKMT_QUERYADAPTERINFO q = { 0 };

	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTOpenAdapterFromLuid(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCloseAdapter(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryClockCalibration(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyDevice(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenNativeFenceFromNtHandle(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTDestroySynchronizationObject(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(NULL, 0,
								   NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(NULL));

	/* A NULL answer buffer, whatever the type and size. */
	q.Type = KMTQAITYPE_WDDM_3_1_CAPS;
	q.PrivateDriverDataSize = sizeof(D3DKMT_WDDM_3_1_CAPS);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = KMTQAITYPE_NFENCE_SEGMENTS;
	q.PrivateDriverDataSize = 4096;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
}

TEST(query_arguments_checked_before_handle)
{
	union {
		D3DKMT_WDDM_3_1_CAPS caps;
		D3DKMT_NFENCE_SEGMENTS segs;
		char raw[256];
	} buf;
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = 0,
		.pPrivateDriverData = &buf,
	};

	/* Unknown types: Windows values nfence does not provide, and junk. */
	q.PrivateDriverDataSize = sizeof(buf.caps);
	q.Type = (KMTQUERYADAPTERINFOTYPE)0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = (KMTQUERYADAPTERINFOTYPE)74;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	/* KMTQAITYPE_DRIVERVERSION: a Windows type nfence does not answer. */
	q.Type = (KMTQUERYADAPTERINFOTYPE)13;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = (KMTQUERYADAPTERINFOTYPE)76;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = (KMTQUERYADAPTERINFOTYPE)0x4E460006;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = (KMTQUERYADAPTERINFOTYPE)-1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));

	/* Fixed-size types want their exact size. */
	q.Type = KMTQAITYPE_WDDM_3_1_CAPS;
	q.PrivateDriverDataSize = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.PrivateDriverDataSize = sizeof(buf.caps) + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = KMTQAITYPE_NFENCE_TIMESTAMP;
	q.PrivateDriverDataSize = sizeof(D3DKMT_NFENCE_TIMESTAMP) - 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));

	/* Arrays want at least their header. */
	q.Type = KMTQAITYPE_NFENCE_SEGMENTS;
	q.PrivateDriverDataSize = D3DKMT_NFENCE_SEGMENTS_SIZE(0) - 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = KMTQAITYPE_NFENCE_ENGINES;
	q.PrivateDriverDataSize = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));

	/* Good arguments: now the handle is looked at. */
	q.Type = KMTQAITYPE_WDDM_3_1_CAPS;
	q.PrivateDriverDataSize = sizeof(buf.caps);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	/* KMTQAITYPE_WDDM_2_9_CAPS: once taken for WDDM_3_1_CAPS by mistake. */
	q.Type = KMTQAITYPE_WDDM_2_9_CAPS;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
	q.Type = KMTQAITYPE_NFENCE_SEGMENTS;
	q.PrivateDriverDataSize = D3DKMT_NFENCE_SEGMENTS_SIZE(0);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryAdapterInfo(&q));
}

/*
 * D3DKMTQueryVideoMemoryInfo without an adapter: a process handle (any,
 * Windows' GetCurrentProcess() pseudo-handle included), a physical adapter
 * other than 0, an unknown segment group and then the handle are refused,
 * and a refusal writes nothing. gpu_test.c refuses each with a valid
 * handle.
 */
TEST(video_memory_arguments)
{
	D3DKMT_QUERYVIDEOMEMORYINFO q, before;
	static const D3DKMT_MEMORY_SEGMENT_GROUP bad_groups[] = {
		(D3DKMT_MEMORY_SEGMENT_GROUP)2, (D3DKMT_MEMORY_SEGMENT_GROUP)3,
		(D3DKMT_MEMORY_SEGMENT_GROUP)0x7fffffff,
		(D3DKMT_MEMORY_SEGMENT_GROUP)-1,
	};
	size_t i;

	memset(&q, 0, sizeof(q));
	q.Budget = q.CurrentUsage = q.CurrentReservation = 0xa5a5a5a5u;
	q.AvailableForReservation = 0xa5a5a5a5u;
	q.hProcess = (HANDLE)(uintptr_t)1;
	before = q;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(&q));
	EXPECT_EQ(0, memcmp(&q, &before, sizeof(q)));
	q.hProcess = (HANDLE)(uintptr_t)-1;	/* Windows' GetCurrentProcess() */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(&q));
	q.hProcess = NULL;
	q.PhysicalAdapterIndex = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(&q));
	q.PhysicalAdapterIndex = 0;
	for (i = 0; i < ARRAY_SIZE(bad_groups); i++) {
		q.MemorySegmentGroup = bad_groups[i];
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  D3DKMTQueryVideoMemoryInfo(&q));
	}
	/* Good arguments: the handle (none open) is what fails now. */
	q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
	before = q;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTQueryVideoMemoryInfo(&q));
	EXPECT_EQ(0, memcmp(&q, &before, sizeof(q)));
}

TEST(create_device_flags)
{
	D3DKMT_CREATEDEVICE c;

	memset(&c, 0, sizeof(c));
	c.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(&c));
	memset(&c, 0, sizeof(c));
	c.Flags.LegacyMode = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateDevice(&c));
	/* Flags without effect pass; then the handle fails. */
	memset(&c, 0, sizeof(c));
	c.Flags.RequestVSync = 1;
	c.Flags.DisableGpuTimeout = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateDevice(&c));
	EXPECT_EQ(0u, c.hDevice);
}

TEST(share_objects_arguments)
{
	D3DKMT_HANDLE h[2] = { 1, 2 };
	HANDLE nt = (HANDLE)(intptr_t)77;

	/* Exactly one object, and somewhere to put its NT handle. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(0, h, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(2, h, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, NULL, NULL, 0, &nt));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, h, NULL, 0, NULL));
	EXPECT_EQ((HANDLE)(intptr_t)77, nt);
	/* Attributes and access rights are ignored; then the handle fails. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTShareObjects(1, h, &nt, 0x1f0003, &nt));
	EXPECT_EQ((HANDLE)(intptr_t)77, nt);
}

TEST(fence_arguments_checked_before_handles)
{
	D3DKMT_HANDLE objs[D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1] = { 0 };
	UINT64 values[D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1] = { 0 };
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.ObjectCount = 1,
		.ObjectHandleArray = objs,
		.FenceValueArray = values,
	};
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.ObjectCount = 1,
		.ObjectHandleArray = objs,
		.FenceValueArray = values,
	};
	D3DKMT_CREATENATIVEFENCE c;
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;

	/* Good arguments reach the (bad) device handle. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));

	/* Object counts: 1 .. 64. */
	w.ObjectCount = s.ObjectCount = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	w.ObjectCount = s.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS + 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	w.ObjectCount = s.ObjectCount = D3DKMT_NFENCE_MAX_SYNC_OBJECTS;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));

	/* NULL arrays. */
	w.ObjectHandleArray = NULL;
	s.FenceValueArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	w.ObjectHandleArray = objs;
	w.FenceValueArray = NULL;
	s.FenceValueArray = values;
	s.ObjectHandleArray = NULL;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	w.FenceValueArray = values;
	s.ObjectHandleArray = objs;

	/* Flags. */
	w.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	w.Flags.Value = 0;
	w.Flags.WaitAny = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));
	s.Flags.Reserved = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.DXGK_SIGNAL_FLAG_INTERNAL0 = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.AllowFenceRewind = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.EnqueueCpuEvent = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));
	s.Flags.Value = 0;
	s.Flags.SignalAtSubmission = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSignalSynchronizationObjectFromCpu(&s));

	/* An asynchronous wait has no timeout; its event is an fd. */
	w.hAsyncEvent = (HANDLE)(intptr_t)3;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0,
								   NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 1000,
								   NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceWaitForSynchronizationObjectFromCpuTimeout(&w,
								   UINT64_MAX,
								   NULL));
	w.hAsyncEvent = (HANDLE)(intptr_t)-1;
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTWaitForSynchronizationObjectFromCpu(&w));

	/* Create: Flags, PDD, Type and Info.Flags before the device. */
	memset(&c, 0, sizeof(c));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE - 1] = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE - 1] = 0;
	c.PrivateDriverData[0] = 0x80;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.PrivateDriverData[0] = 0;
	c.Flags.Value = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.Flags.Value = 0;
	c.Info.Type = (D3DDDI_NATIVEFENCE_TYPE)2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.Info.Type = (D3DDDI_NATIVEFENCE_TYPE)-1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.Info.Type = D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	c.Info.Flags.TopOfPipeline = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateNativeFence(&c));
	c.Info.Flags.SignalByKmd = 1;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateNativeFence(&c));
	EXPECT_EQ(0u, c.hSyncObject);

	/* Open: PDD and Flags, then the NT handle, then the device. */
	memset(&o, 0, sizeof(o));
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	o.PrivateDriverData[7] = 2;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	o.PrivateDriverData[7] = 0;
	o.Flags.NoGPUAccess = 1;
	EXPECT_EQ(STATUS_NOT_SUPPORTED,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	o.Flags.Value = 1u << 31;
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	o.Flags.Value = 0;
	o.hNtHandle = (HANDLE)(intptr_t)-5;
	EXPECT_EQ(STATUS_INVALID_HANDLE,
		  D3DKMTOpenNativeFenceFromNtHandle(&o));
	EXPECT_EQ(0u, o.hSyncObject);
}

/*
 * Every call that takes a D3DKMT handle, with a handle no call issued and
 * otherwise valid arguments: STATUS_INVALID_PARAMETER, nothing written
 * (handle_calls.h). A pipe stands for the NT handle the open calls take.
 */
TEST(invalid_handles)
{
	struct handle_set hs;
	int pfd[2];
	size_t i;

	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	for (i = 0; i < ARRAY_SIZE(bad_handles); i++) {
		D3DKMT_HANDLE h = bad_handles[i];

		hs.adapter = hs.device = hs.sync = hs.allocation = h;
		hs.context = hs.queue = hs.doorbell = h;
		hs.fd = pfd[0];
		EXPECT_EQ(0u, handle_calls_check(&hs, STATUS_INVALID_PARAMETER))
			TH_LOG("handle 0x%x", h);
		errno = 0;
		EXPECT_EQ(-1, NFenceGetAdapterFd(h));
		EXPECT_EQ(EBADF, errno);
		/* Point 0 is refused before any handle is looked at. */
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  NFenceBindSyncobjPoint(h, h, 1, 1, 0))
			TH_LOG("handle 0x%x", h);
		/* No fd: refused before any handle is looked at. */
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  NFenceSignalFromSyncFile(h, h, 1, -1))
			TH_LOG("handle 0x%x", h);
	}
	close(pfd[0]);
	close(pfd[1]);
}

/* The process's address space in bytes (/proc/self/statm). */
static unsigned long long vm_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/*
 * Broadcast counts whose arrays the process cannot allocate:
 * STATUS_NO_MEMORY, before any queue or context handle is looked at (the
 * handles given are 0, which would be STATUS_INVALID_PARAMETER). 2^22
 * queues or contexts of 64 objects need 1 GiB of kernel handles but only
 * 32 MiB for the rest, under an address space limit 256 MiB above the
 * process's size; UINT_MAX of them, not even the rest.
 */
TEST(broadcast_counts_beyond_memory)
{
	static const UINT counts[] = { 1u << 22, 0xffffffffu };
	D3DKMT_HANDLE objects[64] = { 0 };
	UINT64 values[64] = { 0 };
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE q = {
		.ObjectCount = 64,
		.ObjectHandleArray = objects,
		.FenceValueArray = values,
	};
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 c = {
		.ObjectCount = 64,
		.ObjectHandleArray = objects,
		.MonitoredFenceValueArray = values,
	};
	NTSTATUS st[2][2];
	struct rlimit old, r;
	size_t len = (size_t)(1u << 22) * sizeof(D3DKMT_HANDLE);
	D3DKMT_HANDLE *zeros;
	unsigned int i;

	/* Readable zeros (no handle) for the first count's arrays. */
	zeros = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, zeros);
	q.BroadcastHwQueueArray = zeros;
	c.BroadcastContextArray = zeros;

	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &old));
	r = old;
	r.rlim_cur = vm_bytes() + (256ull << 20);
	ASSERT_LT(256ull << 20, r.rlim_cur);
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &r));
	for (i = 0; i < 2; i++) {
		q.BroadcastHwQueueCount = counts[i];
		c.BroadcastContextCount = counts[i];
		st[i][0] = D3DKMTSubmitSignalSyncObjectsToHwQueue(&q);
		st[i][1] = D3DKMTSignalSynchronizationObjectFromGpu2(&c);
	}
	setrlimit(RLIMIT_AS, &old);
	munmap(zeros, len);

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(STATUS_NO_MEMORY, st[i][0])
			TH_LOG("%u queues", counts[i]);
		EXPECT_EQ(STATUS_NO_MEMORY, st[i][1])
			TH_LOG("%u contexts", counts[i]);
	}
}

TEST(gpu_null_arguments)
{
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateAllocation2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyAllocation2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTLock2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTUnlock2(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateContextVirtual(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwContext(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTSubmitCommand(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTCreateHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTDestroyHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitCommandToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitWaitForSyncObjectsToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  D3DKMTSubmitSignalSyncObjectsToHwQueue(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryContextState(1, NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceQueryAllocation(1, 1, NULL));
}

FIXTURE(dri_dir) {
	char dir[64];
};

FIXTURE_SETUP(dri_dir)
{
	strcpy(self->dir, "/tmp/nfence-api-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));
}

FIXTURE_TEARDOWN(dri_dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

static void enum_expect_none(struct __test_metadata *_metadata)
{
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 77, .pAdapters = NULL };
	D3DKMT_OPENADAPTERFROMLUID o = {
		.AdapterLuid = { .LowPart = 0x1000, .HighPart = 0 },
		.hAdapter = 0x1234,
	};

	EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(0u, e.NumAdapters);

	memset(infos, 0xa5, sizeof(infos));
	e.NumAdapters = ARRAY_SIZE(infos);
	e.pAdapters = infos;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(0u, e.NumAdapters);
	EXPECT_EQ(0xa5a5a5a5u, infos[0].hAdapter);

	e.NumAdapters = 0;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(0u, e.NumAdapters);

	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTOpenAdapterFromLuid(&o));
	EXPECT_EQ(0x1234u, o.hAdapter);
}

TEST_F(dri_dir, empty_dir_has_no_adapter)
{
	enum_expect_none(_metadata);
}

TEST_F(dri_dir, missing_dir_has_no_adapter)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/missing", self->dir);
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", path, 1));
	enum_expect_none(_metadata);
}

TEST_F(dri_dir, other_nodes_are_skipped)
{
	char path[128];
	int fd;

	/* A regular file, a character device that is not DRM, a directory. */
	snprintf(path, sizeof(path), "%s/renderD128", self->dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(4, write(fd, "junk", 4));
	close(fd);
	snprintf(path, sizeof(path), "%s/renderD129", self->dir);
	ASSERT_EQ(0, symlink("/dev/null", path));
	snprintf(path, sizeof(path), "%s/renderD130", self->dir);
	ASSERT_EQ(0, mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/renderD131", self->dir);
	ASSERT_EQ(0, symlink("/nonexistent", path));
	snprintf(path, sizeof(path), "%s/card0", self->dir);
	ASSERT_EQ(0, symlink("/dev/null", path));

	enum_expect_none(_metadata);
}

TEST_HARNESS_MAIN
