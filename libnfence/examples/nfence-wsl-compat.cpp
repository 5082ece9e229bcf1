// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-wsl-compat: a D3DKMT program written the way programs for WSL's
 * Linux D3DKMT are written (C++, Windows names, one include), to show that
 * such code runs on libnfence with its include line changed. It:
 *
 *  1. enumerates adapters with D3DKMTEnumAdapters3 and asks each what a
 *     runtime asks at startup (adapter type, device ids, WDDM caps, driver
 *     description, nodes, segment sizes, unique GUID);
 *  2. opens the first native-fence adapter again from its LUID on another
 *     thread, creates a device, a context and a hardware queue there;
 *  3. creates a WDDM 2.x monitored fence and a native fence, signals and
 *     waits on both from the CPU and from the GPU (queued waits and
 *     signals, and a command buffer that signals the native fence);
 *  4. reads the device state, and a clock calibration that must predict
 *     a GPU timestamp;
 *  5. bridges the native fence to a Linux drm_syncobj: where WSL's
 *     D3DKMTCreateSyncFile (refused by libnfence: a fence user space
 *     signals must not become a dma_fence) would be used, a fence value is
 *     bound to a syncobj point, which appears once the GPU signals the
 *     value, and a syncobj point signals the fence back;
 *  6. waits and signals on the context itself (WaitForSynchronization-
 *     ObjectFromGpu, SignalSynchronizationObjectFromGpu);
 *  7. makes the rest of WSL's calls that libnfence implements: a WDDM 1.x
 *     context (D3DKMTCreateContext) in a broadcast GPU signal, a shared
 *     monitored fence opened from its NT handle, a device marked as error,
 *     the teardown of the command buffer, D3DKMTCloseDxCoreDevice and
 *     D3DKMTEnumAdapters2, and D3DKMTQueryVideoMemoryInfo (the command
 *     buffer in the non-local segment group's usage).
 *
 * It prints one "ok ..." line per check, or "not ok ..." and exits with 1.
 * The command buffer is in the simulated GPU's instruction set (NFenceCs*),
 * as every real runtime has its GPU's own, and the syncobj bridge
 * (NFenceBindSyncobjPoint, NFenceSignalFromSyncobjPoint, NFenceGetAdapterFd)
 * with the kernel's own drm_syncobj ioctls: the only nfence names used.
 */
#include <nfence/d3dkmthk.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <drm/drm.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <time.h>

namespace {

int failures;

bool Check(bool ok, const char *what)
{
	std::printf("%s %s\n", ok ? "ok" : "not ok", what);
	if (!ok)
		failures++;
	return ok;
}

bool Expect(NTSTATUS st, const char *what)
{
	if (st != STATUS_SUCCESS)
		std::printf("# %s: status 0x%08x\n", what, (unsigned)st);
	return Check(st == STATUS_SUCCESS, what);
}

NTSTATUS Query(D3DKMT_HANDLE hAdapter, KMTQUERYADAPTERINFOTYPE type,
	       void *data, UINT size)
{
	D3DKMT_QUERYADAPTERINFO q;

	std::memset(&q, 0, sizeof(q));
	q.hAdapter = hAdapter;
	q.Type = type;
	q.pPrivateDriverData = data;
	q.PrivateDriverDataSize = size;
	return D3DKMTQueryAdapterInfo(&q);
}

/* A WCHAR string (wchar_t, as in WSL) as ASCII, for printing. */
std::string Narrow(const WCHAR *s, size_t max)
{
	std::string out;

	for (size_t i = 0; i < max && s[i]; i++)
		out += (s[i] > 0 && s[i] < 0x7f) ? (char)s[i] : '?';
	return out;
}

UINT64 Read(const volatile void *p)
{
	return *static_cast<const volatile UINT64 *>(p);
}

NTSTATUS CpuSignal(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s;

	std::memset(&s, 0, sizeof(s));
	s.hDevice = hDevice;
	s.ObjectCount = 1;
	s.ObjectHandleArray = &h;
	s.FenceValueArray = &value;
	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

NTSTATUS CpuWait(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;

	std::memset(&w, 0, sizeof(w));
	w.hDevice = hDevice;
	w.ObjectCount = 1;
	w.ObjectHandleArray = &h;
	w.FenceValueArray = &value;
	return D3DKMTWaitForSynchronizationObjectFromCpu(&w);
}

NTSTATUS QueueWait(D3DKMT_HANDLE hQueue, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w;

	std::memset(&w, 0, sizeof(w));
	w.hHwQueue = hQueue;
	w.ObjectCount = 1;
	w.ObjectHandleArray = &h;
	w.FenceValueArray = &value;
	return D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w);
}

NTSTATUS QueueSignal(D3DKMT_HANDLE hQueue, D3DKMT_HANDLE h, UINT64 value)
{
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s;

	std::memset(&s, 0, sizeof(s));
	s.BroadcastHwQueueCount = 1;
	s.BroadcastHwQueueArray = &hQueue;
	s.ObjectCount = 1;
	s.ObjectHandleArray = &h;
	s.FenceValueArray = &value;
	return D3DKMTSubmitSignalSyncObjectsToHwQueue(&s);
}

/* The startup queries of one adapter; whether it has native fences. */
bool DescribeAdapter(const D3DKMT_ADAPTERINFO &info, UINT index)
{
	D3DKMT_ADAPTERTYPE type;
	D3DKMT_QUERY_DEVICE_IDS ids;
	D3DKMT_WDDM_2_7_CAPS caps27;
	D3DKMT_WDDM_3_1_CAPS caps31;
	D3DKMT_PHYSICAL_ADAPTER_COUNT count;
	D3DKMT_SEGMENTSIZEINFO segments;
	D3DKMT_NODEMETADATA node;
	GUID guid;
	static D3DKMT_DRIVER_DESCRIPTION desc;

	std::memset(&type, 0, sizeof(type));
	if (Expect(Query(info.hAdapter, KMTQAITYPE_ADAPTERTYPE_RENDER, &type,
			 sizeof(type)), "KMTQAITYPE_ADAPTERTYPE_RENDER"))
		std::printf("adapter %u: render %u software %u display %u\n",
			    index, type.RenderSupported, type.SoftwareDevice,
			    type.DisplaySupported);

	std::memset(&count, 0, sizeof(count));
	if (Expect(Query(info.hAdapter, KMTQAITYPE_PHYSICALADAPTERCOUNT,
			 &count, sizeof(count)),
		   "KMTQAITYPE_PHYSICALADAPTERCOUNT"))
		std::printf("adapter %u: physical adapters %u\n", index,
			    count.Count);

	std::memset(&ids, 0, sizeof(ids));
	ids.PhysicalAdapterIndex = 0;
	if (Expect(Query(info.hAdapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS,
			 &ids, sizeof(ids)),
		   "KMTQAITYPE_PHYSICALADAPTERDEVICEIDS"))
		std::printf("adapter %u: vendor 0x%04x device 0x%04x\n", index,
			    ids.DeviceIds.VendorID, ids.DeviceIds.DeviceID);

	std::memset(&caps27, 0, sizeof(caps27));
	if (Expect(Query(info.hAdapter, KMTQAITYPE_WDDM_2_7_CAPS, &caps27,
			 sizeof(caps27)), "KMTQAITYPE_WDDM_2_7_CAPS"))
		std::printf("adapter %u: hardware scheduling supported %u "
			    "enabled %u\n", index, caps27.HwSchSupported,
			    caps27.HwSchEnabled);

	std::memset(&caps31, 0, sizeof(caps31));
	Expect(Query(info.hAdapter, KMTQAITYPE_WDDM_3_1_CAPS, &caps31,
		     sizeof(caps31)), "KMTQAITYPE_WDDM_3_1_CAPS");
	std::printf("adapter %u: native fences %u\n", index,
		    caps31.NativeGpuFenceSupported);

	std::memset(&desc, 0, sizeof(desc));
	if (Expect(Query(info.hAdapter, KMTQAITYPE_DRIVER_DESCRIPTION, &desc,
			 sizeof(desc)), "KMTQAITYPE_DRIVER_DESCRIPTION"))
		std::printf("adapter %u: driver \"%s\"\n", index,
			    Narrow(desc.DriverDescription, 4096).c_str());

	std::memset(&node, 0, sizeof(node));
	node.NodeOrdinalAndAdapterIndex = 0;
	if (Expect(Query(info.hAdapter, KMTQAITYPE_NODEMETADATA, &node,
			 sizeof(node)), "KMTQAITYPE_NODEMETADATA")) {
		/* Byte-packed, as in Microsoft's header: copy the name out. */
		WCHAR name[DXGK_MAX_METADATA_NAME_LENGTH];

		std::memcpy(name, node.NodeData.FriendlyName, sizeof(name));
		std::printf("adapter %u: node 0 type %d \"%s\"\n", index,
			    (int)node.NodeData.EngineType,
			    Narrow(name, DXGK_MAX_METADATA_NAME_LENGTH).c_str());
	}

	std::memset(&segments, 0, sizeof(segments));
	if (Expect(Query(info.hAdapter, KMTQAITYPE_GETSEGMENTSIZE, &segments,
			 sizeof(segments)), "KMTQAITYPE_GETSEGMENTSIZE"))
		std::printf("adapter %u: video memory %" PRIu64 " MiB, shared "
			    "system memory %" PRIu64 " MiB\n", index,
			    (uint64_t)segments.DedicatedVideoMemorySize >> 20,
			    (uint64_t)segments.SharedSystemMemorySize >> 20);

	std::memset(&guid, 0, sizeof(guid));
	Expect(Query(info.hAdapter, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
		     &guid, sizeof(guid)),
	       "KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID");
	return caps31.NativeGpuFenceSupported;
}

/* What one context on node 0 of the device runs through. */
struct Gpu {
	D3DKMT_HANDLE hContext = 0;
	D3DKMT_CREATEHWQUEUE queue{};
	D3DKMT_HANDLE hCommands = 0;
	D3DGPU_VIRTUAL_ADDRESS commandsVa = 0;
	VOID *commands = nullptr;
	UINT64 progress = 0;
};

bool CreateGpu(D3DKMT_HANDLE hDevice, Gpu &gpu)
{
	D3DKMT_CREATECONTEXTVIRTUAL cc;
	D3DKMT_CREATEALLOCATION ca;
	D3DDDI_ALLOCATIONINFO2 info;
	NFENCE_ALLOCATION_DESC desc;
	D3DKMT_LOCK2 lock;

	std::memset(&cc, 0, sizeof(cc));
	cc.hDevice = hDevice;
	cc.NodeOrdinal = 0;
	cc.ClientHint = D3DKMT_CLIENTHINT_UNKNOWN;
	if (!Expect(D3DKMTCreateContextVirtual(&cc),
		    "D3DKMTCreateContextVirtual"))
		return false;
	gpu.hContext = cc.hContext;

	gpu.queue.hHwContext = gpu.hContext;
	if (!Expect(D3DKMTCreateHwQueue(&gpu.queue), "D3DKMTCreateHwQueue"))
		return false;

	/* A CPU-visible command buffer in system memory. */
	std::memset(&desc, 0, sizeof(desc));
	desc.Size = 4096;
	desc.SegmentId = NFENCE_SEGMENT_ID_SYSTEM;
	desc.Flags.CpuVisible = 1;
	std::memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	std::memset(&ca, 0, sizeof(ca));
	ca.hDevice = hDevice;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	if (!Expect(D3DKMTCreateAllocation2(&ca), "D3DKMTCreateAllocation2"))
		return false;
	gpu.hCommands = info.hAllocation;
	gpu.commandsVa = info.GpuVirtualAddress;
	std::memset(&lock, 0, sizeof(lock));
	lock.hDevice = hDevice;
	lock.hAllocation = gpu.hCommands;
	if (!Expect(D3DKMTLock2(&lock), "D3DKMTLock2"))
		return false;
	gpu.commands = lock.pData;
	return true;
}

/*
 * Submit a command buffer that signals the native fence @hFence to @value,
 * logged when the queue has log buffers.
 */
bool GpuSignalNative(Gpu &gpu, D3DKMT_HANDLE hFence,
		     const D3DDDI_NATIVEFENCEMAPPING &mapping, UINT64 value)
{
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s;
	NFENCE_CS cs;
	NTSTATUS st;

	if (!Expect(NFenceCsInit(&cs, gpu.commands, 2048, gpu.commandsVa),
		    "command buffer"))
		return false;
	if (gpu.queue.NativeFenceLogBufferNumberOfEntries)
		st = NFenceCsSignalNativeFence(&cs, &mapping, value, hFence);
	else
		st = NFenceCsSignalNativeFenceUnlogged(&cs, &mapping, value);
	if (!Expect(st, "encode a native fence signal"))
		return false;
	std::memset(&s, 0, sizeof(s));
	s.hHwQueue = gpu.queue.hHwQueue;
	s.HwQueueProgressFenceId = ++gpu.progress;
	s.CommandBuffer = NFenceCsGpuVa(&cs);
	s.CommandLength = NFenceCsSize(&cs);
	return Expect(D3DKMTSubmitCommandToHwQueue(&s),
		      "D3DKMTSubmitCommandToHwQueue");
}

UINT64 MonotonicNs()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

/* DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT for one point: 0 or an errno. */
int PointWait(int fd, UINT syncobj, UINT64 point, UINT64 timeoutNs)
{
	struct drm_syncobj_timeline_wait w;

	std::memset(&w, 0, sizeof(w));
	w.handles = (uintptr_t)&syncobj;
	w.points = (uintptr_t)&point;
	w.count_handles = 1;
	w.timeout_nsec = (int64_t)(MonotonicNs() + timeoutNs);
	w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
	return ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w) ? errno : 0;
}

/*
 * 5. The Linux side: a syncobj point that appears when the GPU signals a
 * native fence value, and a point that signals the fence back.
 */
void SyncobjBridge(D3DKMT_HANDLE hAdapter, D3DKMT_HANDLE hDevice, Gpu &gpu,
		   D3DKMT_HANDLE hFence,
		   const D3DDDI_NATIVEFENCEMAPPING &mapping)
{
	D3DKMT_CREATESYNCFILE createSyncFile;
	struct drm_syncobj_create create;
	struct drm_syncobj_destroy destroy;
	int fd = NFenceGetAdapterFd(hAdapter);

	std::memset(&createSyncFile, 0, sizeof(createSyncFile));
	createSyncFile.hDevice = hDevice;
	createSyncFile.hMonitoredFence = hFence;
	createSyncFile.FenceValue = 13;
	Check(D3DKMTCreateSyncFile(&createSyncFile) == STATUS_NOT_SUPPORTED,
	      "D3DKMTCreateSyncFile is refused");
	std::memset(&create, 0, sizeof(create));
	if (fd >= 0 && ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &create) &&
	    (errno == EOPNOTSUPP || errno == ENOTTY)) {
		std::printf("# syncobj: the driver offers no drm_syncobj\n");
		return;
	}
	if (!Check(fd >= 0 && create.handle,
		   "a drm_syncobj on the adapter's render node"))
		return;
	Expect(NFenceBindSyncobjPoint(hDevice, hFence, 13, create.handle, 1),
	       "NFenceBindSyncobjPoint: value 13 to point 1");
	Check(PointWait(fd, create.handle, 1, 20000000) == ETIME,
	      "syncobj: point 1 absent before the value");
	if (GpuSignalNative(gpu, hFence, mapping, 13))
		Check(PointWait(fd, create.handle, 1, 10000000000ull) == 0,
		      "syncobj: point 1 appears when the GPU signals 13");
	Expect(NFenceSignalFromSyncobjPoint(hDevice, hFence, 14,
					    create.handle, 1),
	       "NFenceSignalFromSyncobjPoint: point 1 signals 14");
	Expect(CpuWait(hDevice, hFence, 14), "native fence: CPU wait for 14");
	std::printf("syncobj: native fence value %" PRIu64 "\n",
		    (uint64_t)Read(mapping.CurrentValueCpuVa));
	std::memset(&destroy, 0, sizeof(destroy));
	destroy.handle = create.handle;
	Check(!ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &destroy),
	      "syncobj destroyed");
}

/*
 * 6. Context-level GPU calls, as a WDDM 2.x runtime without hardware
 * queues makes them: the context waits for the native fence, then signals
 * the monitored fence.
 */
void ContextLevel(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hContext,
		  D3DKMT_HANDLE hNative, D3DKMT_HANDLE hMonitored,
		  const VOID *monitoredCpu)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU wait;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU signal;
	const UINT64 waitValue = 15, signalValue = 6;

	std::memset(&wait, 0, sizeof(wait));
	wait.hContext = hContext;
	wait.ObjectCount = 1;
	wait.ObjectHandleArray = &hNative;
	wait.MonitoredFenceValueArray = &waitValue;
	Expect(D3DKMTWaitForSynchronizationObjectFromGpu(&wait),
	       "D3DKMTWaitForSynchronizationObjectFromGpu: native fence 15");
	std::memset(&signal, 0, sizeof(signal));
	signal.hContext = hContext;
	signal.ObjectCount = 1;
	signal.ObjectHandleArray = &hMonitored;
	signal.MonitoredFenceValueArray = &signalValue;
	Expect(D3DKMTSignalSynchronizationObjectFromGpu(&signal),
	       "D3DKMTSignalSynchronizationObjectFromGpu: monitored fence 6");
	Check(Read(monitoredCpu) == 5,
	      "context: the GPU signal waits behind the context's GPU wait");
	Expect(CpuSignal(hDevice, hNative, 15), "native fence: CPU signal 15");
	Expect(CpuWait(hDevice, hMonitored, 6),
	       "monitored fence: CPU wait for the context's 6");
	std::printf("context: monitored fence value %" PRIu64 "\n",
		    (uint64_t)Read(monitoredCpu));
}

/*
 * 7. The rest of WSL's D3DKMT that libnfence implements: a WDDM 1.x
 * context (D3DKMTCreateContext) in a broadcast GPU signal with the
 * virtual one, a shared monitored fence opened from its NT handle, a
 * device marked as error, and a call libnfence refuses.
 */
void WslCalls(D3DKMT_HANDLE hAdapter, D3DKMT_HANDLE hDevice,
	      D3DKMT_HANDLE hContext, D3DKMT_HANDLE hMonitored,
	      const VOID *monitoredCpu)
{
	D3DKMT_CREATECONTEXT cc;
	D3DKMT_DESTROYCONTEXT dc;

	std::memset(&cc, 0, sizeof(cc));
	cc.hDevice = hDevice;
	cc.NodeOrdinal = 0;
	cc.ClientHint = D3DKMT_CLIENTHINT_OPENGL;
	if (Expect(D3DKMTCreateContext(&cc), "D3DKMTCreateContext")) {
		D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 signal;
		const D3DKMT_HANDLE contexts[2] = { hContext, cc.hContext };
		const UINT64 value = 7;

		Check(!cc.pCommandBuffer && !cc.CommandBufferSize &&
		      !cc.pAllocationList && !cc.AllocationListSize &&
		      !cc.pPatchLocationList && !cc.PatchLocationListSize &&
		      !cc.CommandBuffer,
		      "D3DKMTCreateContext: no WDDM 1.x buffers");
		std::memset(&signal, 0, sizeof(signal));
		signal.ObjectCount = 1;
		signal.ObjectHandleArray = &hMonitored;
		signal.BroadcastContextCount = 2;
		signal.BroadcastContextArray = contexts;
		signal.MonitoredFenceValueArray = &value;
		Expect(D3DKMTSignalSynchronizationObjectFromGpu2(&signal),
		       "D3DKMTSignalSynchronizationObjectFromGpu2 on both contexts");
		Expect(CpuWait(hDevice, hMonitored, 7),
		       "monitored fence: CPU wait for the broadcast 7");
		std::printf("broadcast: monitored fence value %" PRIu64 "\n",
			    (uint64_t)Read(monitoredCpu));
		dc.hContext = cc.hContext;
		Expect(D3DKMTDestroyContext(&dc),
		       "D3DKMTDestroyContext (WDDM 1.x context)");
	}

	/* A shared monitored fence, opened again from its NT handle. */
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 shared;
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 opened;
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT destroy;
	HANDLE nt = nullptr;

	std::memset(&shared, 0, sizeof(shared));
	shared.hDevice = hDevice;
	shared.Info.Type = D3DDDI_MONITORED_FENCE;
	shared.Info.Flags.Shared = 1;
	shared.Info.Flags.NtSecuritySharing = 1;
	if (Expect(D3DKMTCreateSynchronizationObject2(&shared),
		   "D3DKMTCreateSynchronizationObject2 (shared)") &&
	    Expect(D3DKMTShareObjects(1, &shared.hSyncObject, nullptr,
				      0, &nt),
		   "D3DKMTShareObjects")) {
		std::memset(&opened, 0, sizeof(opened));
		opened.hNtHandle = nt;
		opened.hDevice = hDevice;
		if (Expect(D3DKMTOpenSyncObjectFromNtHandle2(&opened),
			   "D3DKMTOpenSyncObjectFromNtHandle2")) {
			Expect(CpuSignal(hDevice, opened.hSyncObject, 9),
			       "shared monitored fence: CPU signal 9 through the opened handle");
			Check(Read(shared.Info.MonitoredFence.FenceValueCPUVirtualAddress) == 9 &&
			      Read(opened.MonitoredFence.FenceValueCPUVirtualAddress) == 9,
			      "shared monitored fence: one value behind both handles");
			destroy.hSyncObject = opened.hSyncObject;
			Expect(D3DKMTDestroySynchronizationObject(&destroy),
			       "destroy the opened fence");
		}
		::close((int)(intptr_t)nt);
	}
	destroy.hSyncObject = shared.hSyncObject;
	Expect(D3DKMTDestroySynchronizationObject(&destroy),
	       "destroy the shared fence");

	/* The budget and usage of each segment group: the command buffer. */
	D3DKMT_QUERYVIDEOMEMORYINFO budget;

	std::memset(&budget, 0, sizeof(budget));
	budget.hAdapter = hAdapter;
	budget.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
	if (Expect(D3DKMTQueryVideoMemoryInfo(&budget),
		   "D3DKMTQueryVideoMemoryInfo (NON_LOCAL)"))
		Check(budget.CurrentUsage >= 4096 &&
		      budget.CurrentUsage <= budget.Budget &&
		      !budget.CurrentReservation &&
		      !budget.AvailableForReservation,
		      "NON_LOCAL: the command buffer counts, within the budget");
	budget.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
	if (Expect(D3DKMTQueryVideoMemoryInfo(&budget),
		   "D3DKMTQueryVideoMemoryInfo (LOCAL)"))
		Check(budget.Budget > 0 && budget.CurrentUsage <= budget.Budget,
		      "LOCAL: usage within the budget");

	/* A device of its own, marked as error: it stops. */
	D3DKMT_CREATEDEVICE cd;
	D3DKMT_MARKDEVICEASERROR mark;
	D3DKMT_GETDEVICESTATE state;
	D3DKMT_DESTROYDEVICE dd;

	std::memset(&cd, 0, sizeof(cd));
	cd.hAdapter = hAdapter;
	if (!Expect(D3DKMTCreateDevice(&cd), "D3DKMTCreateDevice (to mark)"))
		return;
	std::memset(&mark, 0, sizeof(mark));
	mark.hDevice = cd.hDevice;
	mark.Reason = D3DKMT_DEVICE_ERROR_REASON_GENERIC;
	NTSTATUS marked = D3DKMTMarkDeviceAsError(&mark);

	if (marked == STATUS_NOT_SUPPORTED) {
		/* The host's fake driver does not model device errors. */
		std::printf("# D3DKMTMarkDeviceAsError: not on this driver\n");
	} else if (Expect(marked, "D3DKMTMarkDeviceAsError")) {
		std::memset(&state, 0, sizeof(state));
		state.hDevice = cd.hDevice;
		state.StateType = D3DKMT_DEVICESTATE_EXECUTION;
		if (Expect(D3DKMTGetDeviceState(&state),
			   "D3DKMTGetDeviceState (marked device)"))
			Check(state.ExecutionState ==
			      D3DKMT_DEVICEEXECUTION_STOPPED,
			      "device marked as error: stopped");
	}
	dd.hDevice = cd.hDevice;
	Expect(D3DKMTDestroyDevice(&dd), "D3DKMTDestroyDevice (marked device)");
}

/* The GPU timestamp a calibration predicts for CLOCK_MONOTONIC @t. */
double Predict(const DXGK_GPUCLOCKDATA &c, UINT64 t)
{
	return (double)c.GpuClockCounter + ((double)t - (double)c.CpuClockCounter) *
	       (double)c.GpuFrequency / 1e9;
}

/*
 * Calibrate node 0, then have the engine write its timestamp (TIMESTAMP,
 * into the second half of the command buffer): it must lie between the
 * predictions for before the submission and after its completion.
 */
void CheckClock(D3DKMT_HANDLE hAdapter, D3DKMT_HANDLE hDevice, Gpu &gpu)
{
	D3DKMT_QUERYCLOCKCALIBRATION q;
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s;
	volatile UINT64 *out;
	UINT64 before, after;
	NFENCE_CS cs;

	std::memset(&q, 0, sizeof(q));
	q.hAdapter = hAdapter;
	q.NodeOrdinal = 0;
	if (!Expect(D3DKMTQueryClockCalibration(&q),
		    "D3DKMTQueryClockCalibration"))
		return;
	std::printf("clock: GPU frequency %" PRIu64 " Hz\n",
		    (uint64_t)q.ClockData.GpuFrequency);
	out = reinterpret_cast<volatile UINT64 *>(
		static_cast<char *>(gpu.commands) + 4000);
	*out = 0;
	if (!Expect(NFenceCsInit(&cs, static_cast<char *>(gpu.commands) + 2048,
				 1024, gpu.commandsVa + 2048),
		    "command buffer") ||
	    !Expect(NFenceCsTimestamp(&cs, gpu.commandsVa + 4000),
		    "encode a TIMESTAMP"))
		return;
	std::memset(&s, 0, sizeof(s));
	s.hHwQueue = gpu.queue.hHwQueue;
	s.HwQueueProgressFenceId = ++gpu.progress;
	s.CommandBuffer = NFenceCsGpuVa(&cs);
	s.CommandLength = NFenceCsSize(&cs);
	before = MonotonicNs();
	if (!Expect(D3DKMTSubmitCommandToHwQueue(&s), "submit the TIMESTAMP") ||
	    !Expect(CpuWait(hDevice, gpu.queue.hHwQueueProgressFence,
			    gpu.progress), "wait for the TIMESTAMP"))
		return;
	after = MonotonicNs();
	Check(Predict(q.ClockData, before) - 1 <= (double)*out &&
	      (double)*out <= Predict(q.ClockData, after) + 1,
	      "clock calibration predicts the GPU's TIMESTAMP");
}

int Run()
{
	D3DKMT_ENUMADAPTERS3 enumerate;
	std::vector<D3DKMT_ADAPTERINFO> adapters;
	D3DKMT_CLOSEADAPTER close;
	LUID luid{};
	bool found = false;

	/* 1. Enumerate: the count first, then the adapters. */
	std::memset(&enumerate, 0, sizeof(enumerate));
	if (!Expect(D3DKMTEnumAdapters3(&enumerate),
		    "D3DKMTEnumAdapters3 (count)") || !enumerate.NumAdapters) {
		Check(false, "an adapter");
		return 1;
	}
	adapters.resize(enumerate.NumAdapters);
	enumerate.pAdapters = adapters.data();
	if (!Expect(D3DKMTEnumAdapters3(&enumerate), "D3DKMTEnumAdapters3"))
		return 1;
	std::printf("adapters: %u\n", (unsigned)enumerate.NumAdapters);
	for (UINT i = 0; i < enumerate.NumAdapters; i++) {
		if (DescribeAdapter(adapters[i], i) && !found) {
			luid = adapters[i].AdapterLuid;
			found = true;
		}
		close.hAdapter = adapters[i].hAdapter;
		Expect(D3DKMTCloseAdapter(&close), "D3DKMTCloseAdapter");
	}
	if (!Check(found, "an adapter with native fences"))
		return 1;

	/* 2. Open it from its LUID on another thread. */
	D3DKMT_OPENADAPTERFROMLUID open;
	NTSTATUS openStatus = STATUS_UNSUCCESSFUL;

	std::memset(&open, 0, sizeof(open));
	open.AdapterLuid = luid;
	std::thread opener([&] { openStatus = D3DKMTOpenAdapterFromLuid(&open); });
	opener.join();
	if (!Expect(openStatus, "D3DKMTOpenAdapterFromLuid on another thread"))
		return 1;

	D3DKMT_CREATEDEVICE createDevice;

	std::memset(&createDevice, 0, sizeof(createDevice));
	createDevice.hAdapter = open.hAdapter;
	if (!Expect(D3DKMTCreateDevice(&createDevice), "D3DKMTCreateDevice"))
		return 1;
	const D3DKMT_HANDLE hDevice = createDevice.hDevice;
	Gpu gpu;

	if (!CreateGpu(hDevice, gpu))
		return 1;

	/* 3a. A monitored fence. */
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 monitored;

	std::memset(&monitored, 0, sizeof(monitored));
	monitored.hDevice = hDevice;
	monitored.Info.Type = D3DDDI_MONITORED_FENCE;
	monitored.Info.MonitoredFence.InitialFenceValue = 1;
	if (!Expect(D3DKMTCreateSynchronizationObject2(&monitored),
		    "D3DKMTCreateSynchronizationObject2 (monitored fence)"))
		return 1;
	const D3DKMT_HANDLE hMonitored = monitored.hSyncObject;
	const VOID *monitoredCpu =
		monitored.Info.MonitoredFence.FenceValueCPUVirtualAddress;

	Check(monitoredCpu && Read(monitoredCpu) == 1,
	      "monitored fence: initial value 1 through its CPU VA");
	Expect(CpuSignal(hDevice, hMonitored, 2),
	       "monitored fence: CPU signal 2");
	Expect(CpuWait(hDevice, hMonitored, 2), "monitored fence: CPU wait 2");
	/* The GPU waits for 3 (the kernel resolves it), then signals 4. */
	Expect(QueueWait(gpu.queue.hHwQueue, hMonitored, 3),
	       "monitored fence: queued GPU wait 3");
	Expect(QueueSignal(gpu.queue.hHwQueue, hMonitored, 4),
	       "monitored fence: queued GPU signal 4");
	Check(Read(monitoredCpu) == 2,
	      "monitored fence: the queue waits for the CPU");
	Expect(CpuSignal(hDevice, hMonitored, 3),
	       "monitored fence: CPU signal 3");
	Expect(CpuWait(hDevice, hMonitored, 4),
	       "monitored fence: CPU wait for the GPU's 4");
	std::printf("monitored fence: value %" PRIu64 "\n",
		    (uint64_t)Read(monitoredCpu));

	/* 3b. A native fence: a command buffer signals it. */
	D3DKMT_CREATENATIVEFENCE native;

	std::memset(&native, 0, sizeof(native));
	native.hDevice = hDevice;
	native.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	native.Info.InitialFenceValue = 10;
	if (!Expect(D3DKMTCreateNativeFence(&native),
		    "D3DKMTCreateNativeFence"))
		return 1;
	const D3DDDI_NATIVEFENCEMAPPING &mapping =
		native.Info.NativeFenceMapping;

	Check(Read(mapping.CurrentValueCpuVa) == 10,
	      "native fence: initial value 10 through its CPU VA");
	/* Behind the monitored fence: the queue waits for 5 first. */
	Expect(QueueWait(gpu.queue.hHwQueue, hMonitored, 5),
	       "native fence: queue waits for the monitored fence's 5");
	if (GpuSignalNative(gpu, native.hSyncObject, mapping, 11)) {
		Check(Read(mapping.CurrentValueCpuVa) == 10,
		      "native fence: the GPU signal waits behind the queue");
		Expect(CpuSignal(hDevice, hMonitored, 5),
		       "monitored fence: CPU signal 5");
		Expect(CpuWait(hDevice, native.hSyncObject, 11),
		       "native fence: CPU wait for the GPU's 11");
	}
	Expect(CpuSignal(hDevice, native.hSyncObject, 12),
	       "native fence: CPU signal 12");
	Expect(CpuWait(hDevice, gpu.queue.hHwQueueProgressFence, gpu.progress),
	       "progress fence: CPU wait");
	std::printf("native fence: value %" PRIu64 "\n",
		    (uint64_t)Read(mapping.CurrentValueCpuVa));

	/* 4. The device state, and a clock calibration. */
	D3DKMT_GETDEVICESTATE state;

	std::memset(&state, 0, sizeof(state));
	state.hDevice = hDevice;
	state.StateType = D3DKMT_DEVICESTATE_EXECUTION;
	if (Expect(D3DKMTGetDeviceState(&state), "D3DKMTGetDeviceState"))
		Check(state.ExecutionState == D3DKMT_DEVICEEXECUTION_ACTIVE,
		      "device state: active");
	CheckClock(open.hAdapter, hDevice, gpu);
	SyncobjBridge(open.hAdapter, hDevice, gpu, native.hSyncObject, mapping);
	ContextLevel(hDevice, gpu.hContext, native.hSyncObject, hMonitored,
		     monitoredCpu);
	WslCalls(open.hAdapter, hDevice, gpu.hContext, hMonitored,
		 monitoredCpu);

	/* Tear down in the Windows order. */
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT destroySync;
	D3DKMT_DESTROYHWQUEUE destroyQueue;
	D3DKMT_DESTROYCONTEXT destroyContext;
	D3DKMT_DESTROYDEVICE destroyDevice;

	destroySync.hSyncObject = native.hSyncObject;
	Expect(D3DKMTDestroySynchronizationObject(&destroySync),
	       "destroy the native fence");
	destroySync.hSyncObject = hMonitored;
	Expect(D3DKMTDestroySynchronizationObject(&destroySync),
	       "destroy the monitored fence");
	D3DKMT_UNLOCK2 unlock;
	D3DKMT_DESTROYALLOCATION2 destroyAllocation;

	unlock.hDevice = hDevice;
	unlock.hAllocation = gpu.hCommands;
	Expect(D3DKMTUnlock2(&unlock), "D3DKMTUnlock2");
	std::memset(&destroyAllocation, 0, sizeof(destroyAllocation));
	destroyAllocation.hDevice = hDevice;
	destroyAllocation.phAllocationList = &gpu.hCommands;
	destroyAllocation.AllocationCount = 1;
	Expect(D3DKMTDestroyAllocation2(&destroyAllocation),
	       "D3DKMTDestroyAllocation2");
	destroyQueue.hHwQueue = gpu.queue.hHwQueue;
	Expect(D3DKMTDestroyHwQueue(&destroyQueue), "D3DKMTDestroyHwQueue");
	destroyContext.hContext = gpu.hContext;
	Expect(D3DKMTDestroyContext(&destroyContext), "D3DKMTDestroyContext");
	destroyDevice.hDevice = hDevice;
	Expect(D3DKMTDestroyDevice(&destroyDevice), "D3DKMTDestroyDevice");
	close.hAdapter = open.hAdapter;
	Expect(D3DKMTCloseAdapter(&close), "D3DKMTCloseAdapter");

	/* The end of a WSL program; adapters still enumerate after it. */
	D3DKMT_ENUMADAPTERS2 count;

	D3DKMTCloseDxCoreDevice();
	std::memset(&count, 0, sizeof(count));
	if (Expect(D3DKMTEnumAdapters2(&count),
		   "D3DKMTEnumAdapters2 (count) after D3DKMTCloseDxCoreDevice"))
		Check(count.NumAdapters == enumerate.NumAdapters,
		      "D3DKMTEnumAdapters2 counts the adapters D3DKMTEnumAdapters3 did");
	return failures ? 1 : 0;
}

} // namespace

int main()
{
	int ret = Run();

	std::printf("%s: %d failed check%s\n", ret ? "not ok" : "ok", failures,
		    failures == 1 ? "" : "s");
	return ret;
}
