/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Every libnfence call that takes a D3DKMT handle, made with the handles of
 * a struct handle_set and otherwise valid arguments, for the tests of
 * handles that must name nothing: bad values (api_test.c) and the handles
 * a forked child inherited (gpu_test.c). handle_calls_check() makes each
 * call, expects the status it is given, and checks that the call wrote
 * none of its outputs.
 */
#ifndef NFENCE_TEST_HANDLE_CALLS_H
#define NFENCE_TEST_HANDLE_CALLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nfence/d3dkmthk.h>

#define HC_POISON	0xa5a5a5a5u

/*
 * Fence values: waits are for 0, so that a wait that wrongly reaches the
 * kernel returns at once; signals are to 1.
 */
static const UINT64 hc_zero, hc_one = 1;

/* The handles each call is given; @fd: an open file descriptor (NT handle). */
struct handle_set {
	D3DKMT_HANDLE adapter, device, sync, allocation, context, queue;
	D3DKMT_HANDLE doorbell;
	int fd;
};

/*
 * A call; it sets *@wrote (false before the call) if it changed one of its
 * outputs.
 */
typedef NTSTATUS (*handle_call_fn)(const struct handle_set *h, bool *wrote);

/*
 * HC_ARGS_CALL() - @name, a call of @fn on one @type made of the
 * designated initializers that follow (the rest zero; outputs are given
 * HC_POISON where a 0 would be a plausible answer): *wrote is set if any
 * byte of it changed.
 */
#define HC_ARGS_CALL(name, fn, type, ...)				\
static NTSTATUS name(const struct handle_set *h, bool *wrote)		\
{									\
	type a_ = { __VA_ARGS__ }, before_;				\
	NTSTATUS st_;							\
									\
	memcpy(&before_, &a_, sizeof(a_));				\
	st_ = fn(&a_);							\
	*wrote = memcmp(&a_, &before_, sizeof(a_)) != 0;		\
	return st_;							\
}

/* HC_ARGS_CALL() of a call on one sync object, h->sync. */
#define HC_OBJECT_CALL(name, fn, type, ...)				\
	HC_ARGS_CALL(name, fn, type, .ObjectCount = 1,			\
		     .ObjectHandleArray = &h->sync, __VA_ARGS__)

/* Where NFenceReadNativeFenceLog() would put an entry. */
static DXGK_NATIVE_FENCE_LOG_ENTRY hc_log_entry;

HC_ARGS_CALL(hc_close_adapter, D3DKMTCloseAdapter, D3DKMT_CLOSEADAPTER,
	     .hAdapter = h->adapter)
HC_ARGS_CALL(hc_query_clock, D3DKMTQueryClockCalibration,
	     D3DKMT_QUERYCLOCKCALIBRATION, .hAdapter = h->adapter,
	     .ClockData.GpuFrequency = HC_POISON)
HC_ARGS_CALL(hc_query_video_memory, D3DKMTQueryVideoMemoryInfo,
	     D3DKMT_QUERYVIDEOMEMORYINFO, .hAdapter = h->adapter,
	     .MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL,
	     .Budget = HC_POISON, .CurrentUsage = HC_POISON)
HC_ARGS_CALL(hc_set_logging_level, NFenceSetLoggingLevel,
	     NFENCE_SETLOGGINGLEVEL, .hAdapter = h->adapter,
	     .LoggingLevel = D3DDDI_LOGGING_LEVEL_DEFAULT,
	     .PreviousLevel = (D3DDDI_LOGGING_LEVEL)HC_POISON)
HC_ARGS_CALL(hc_create_device, D3DKMTCreateDevice, D3DKMT_CREATEDEVICE,
	     .hAdapter = h->adapter, .hDevice = HC_POISON)
HC_ARGS_CALL(hc_destroy_device, D3DKMTDestroyDevice, D3DKMT_DESTROYDEVICE,
	     .hDevice = h->device)
HC_ARGS_CALL(hc_get_device_state, D3DKMTGetDeviceState,
	     D3DKMT_GETDEVICESTATE, .hDevice = h->device,
	     .StateType = D3DKMT_DEVICESTATE_EXECUTION,
	     .ExecutionState = (D3DKMT_DEVICEEXECUTION_STATE)HC_POISON)
HC_ARGS_CALL(hc_mark_device_as_error, D3DKMTMarkDeviceAsError,
	     D3DKMT_MARKDEVICEASERROR, .hDevice = h->device,
	     .Reason = D3DKMT_DEVICE_ERROR_REASON_GENERIC)
HC_ARGS_CALL(hc_create_native_fence, D3DKMTCreateNativeFence,
	     D3DKMT_CREATENATIVEFENCE, .hDevice = h->device,
	     .hSyncObject = HC_POISON)
HC_ARGS_CALL(hc_create_monitored_fence, D3DKMTCreateSynchronizationObject2,
	     D3DKMT_CREATESYNCHRONIZATIONOBJECT2, .hDevice = h->device,
	     .Info.Type = D3DDDI_MONITORED_FENCE, .hSyncObject = HC_POISON)
HC_ARGS_CALL(hc_open_native_fence, D3DKMTOpenNativeFenceFromNtHandle,
	     D3DKMT_OPENNATIVEFENCEFROMNTHANDLE,
	     .hNtHandle = (HANDLE)(intptr_t)h->fd, .hDevice = h->device,
	     .hSyncObject = HC_POISON)
HC_ARGS_CALL(hc_open_monitored_fence, D3DKMTOpenSyncObjectFromNtHandle2,
	     D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2,
	     .hNtHandle = (HANDLE)(intptr_t)h->fd, .hDevice = h->device,
	     .hSyncObject = HC_POISON)
HC_OBJECT_CALL(hc_cpu_wait, D3DKMTWaitForSynchronizationObjectFromCpu,
	       D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU, .hDevice = h->device,
	       .FenceValueArray = &hc_zero)
HC_ARGS_CALL(hc_destroy_allocation, D3DKMTDestroyAllocation2,
	     D3DKMT_DESTROYALLOCATION2, .hDevice = h->device,
	     .phAllocationList = &h->allocation, .AllocationCount = 1)
HC_OBJECT_CALL(hc_cpu_signal, D3DKMTSignalSynchronizationObjectFromCpu,
	       D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU, .hDevice = h->device,
	       .FenceValueArray = &hc_one)
HC_ARGS_CALL(hc_lock, D3DKMTLock2, D3DKMT_LOCK2, .hDevice = h->device,
	     .hAllocation = h->allocation,
	     .pData = (void *)(uintptr_t)HC_POISON)
HC_ARGS_CALL(hc_unlock, D3DKMTUnlock2, D3DKMT_UNLOCK2, .hDevice = h->device,
	     .hAllocation = h->allocation)
HC_ARGS_CALL(hc_create_context, D3DKMTCreateContextVirtual,
	     D3DKMT_CREATECONTEXTVIRTUAL, .hDevice = h->device,
	     .ClientHint = D3DKMT_CLIENTHINT_DX12, .hContext = HC_POISON)
HC_ARGS_CALL(hc_destroy_sync, D3DKMTDestroySynchronizationObject,
	     D3DKMT_DESTROYSYNCHRONIZATIONOBJECT, .hSyncObject = h->sync)
HC_ARGS_CALL(hc_create_hw_context, D3DKMTCreateHwContext,
	     D3DKMT_CREATEHWCONTEXT, .hDevice = h->device,
	     .hHwContext = HC_POISON)
HC_ARGS_CALL(hc_destroy_context, D3DKMTDestroyContext,
	     D3DKMT_DESTROYCONTEXT, .hContext = h->context)
HC_ARGS_CALL(hc_destroy_hw_context, D3DKMTDestroyHwContext,
	     D3DKMT_DESTROYHWCONTEXT, .hHwContext = h->context)
HC_ARGS_CALL(hc_create_queue, D3DKMTCreateHwQueue, D3DKMT_CREATEHWQUEUE,
	     .hHwContext = h->context, .hHwQueue = HC_POISON)
HC_OBJECT_CALL(hc_gpu_wait, D3DKMTWaitForSynchronizationObjectFromGpu,
	       D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU,
	       .hContext = h->context, .MonitoredFenceValueArray = &hc_zero)
HC_OBJECT_CALL(hc_gpu_signal, D3DKMTSignalSynchronizationObjectFromGpu,
	       D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU,
	       .hContext = h->context, .MonitoredFenceValueArray = &hc_one)
HC_OBJECT_CALL(hc_gpu_signal2, D3DKMTSignalSynchronizationObjectFromGpu2,
	       D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2,
	       .BroadcastContextCount = 1, .BroadcastContextArray = &h->context,
	       .MonitoredFenceValueArray = &hc_one)
HC_ARGS_CALL(hc_destroy_queue, D3DKMTDestroyHwQueue, D3DKMT_DESTROYHWQUEUE,
	     .hHwQueue = h->queue)
HC_ARGS_CALL(hc_submit, D3DKMTSubmitCommandToHwQueue,
	     D3DKMT_SUBMITCOMMANDTOHWQUEUE, .hHwQueue = h->queue,
	     .HwQueueProgressFenceId = 1, .CommandBuffer = 4096,
	     .CommandLength = 8)
HC_ARGS_CALL(hc_submit_command, D3DKMTSubmitCommand, D3DKMT_SUBMITCOMMAND,
	     .Commands = 4096, .CommandLength = 8,
	     .BroadcastContextCount = 1, .BroadcastContext = { h->context })
HC_OBJECT_CALL(hc_queue_wait, D3DKMTSubmitWaitForSyncObjectsToHwQueue,
	       D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE, .hHwQueue = h->queue,
	       .FenceValueArray = &hc_zero)
HC_OBJECT_CALL(hc_queue_signal, D3DKMTSubmitSignalSyncObjectsToHwQueue,
	       D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE,
	       .BroadcastHwQueueCount = 1, .BroadcastHwQueueArray = &h->queue,
	       .FenceValueArray = &hc_one)
HC_ARGS_CALL(hc_read_log, NFenceReadNativeFenceLog, NFENCE_READNATIVEFENCELOG,
	     .hHwQueue = h->queue, .Type = DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS,
	     .pEntries = &hc_log_entry, .NumEntries = 1)
HC_ARGS_CALL(hc_create_doorbell, D3DKMTCreateDoorbell, D3DKMT_CREATE_DOORBELL,
	     .hHwQueue = h->queue, .hRingBuffer = h->allocation,
	     .hDoorbell = HC_POISON)
HC_ARGS_CALL(hc_connect_doorbell, D3DKMTConnectDoorbell,
	     D3DKMT_CONNECT_DOORBELL, .hDoorbell = h->doorbell)
HC_ARGS_CALL(hc_notify, D3DKMTNotifyWorkSubmission,
	     D3DKMT_NOTIFY_WORK_SUBMISSION, .hDoorbell = h->doorbell)
HC_ARGS_CALL(hc_destroy_doorbell, D3DKMTDestroyDoorbell,
	     D3DKMT_DESTROY_DOORBELL, .hDoorbell = h->doorbell)

/* The calls that take more than one struct. */

static NTSTATUS hc_query_adapter_info(const struct handle_set *h, bool *wrote)
{
	D3DKMT_WDDM_3_1_CAPS caps = { .Value = HC_POISON };
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = h->adapter,
		.Type = KMTQAITYPE_WDDM_3_1_CAPS,
		.pPrivateDriverData = &caps,
		.PrivateDriverDataSize = sizeof(caps),
	};
	NTSTATUS st = D3DKMTQueryAdapterInfo(&q);

	*wrote = caps.Value != HC_POISON;
	return st;
}

static NTSTATUS hc_cpu_wait_timeout(const struct handle_set *h, bool *wrote)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { .hDevice = h->device,
		.ObjectCount = 1, .ObjectHandleArray = &h->sync,
		.FenceValueArray = &hc_zero };
	UINT first = HC_POISON;
	NTSTATUS st = NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0,
								      &first);

	*wrote = first != HC_POISON;
	return st;
}

static NTSTATUS hc_create_allocation(const struct handle_set *h, bool *wrote)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = 4096,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DDDI_ALLOCATIONINFO2 ai = {
		.hAllocation = HC_POISON,
		.pPrivateDriverData = &desc,
		.PrivateDriverDataSize = sizeof(desc),
	};
	D3DKMT_CREATEALLOCATION ca = {
		.hDevice = h->device,
		.NumAllocations = 1,
		.pAllocationInfo2 = &ai,
	};
	NTSTATUS st = D3DKMTCreateAllocation2(&ca);

	*wrote = ai.hAllocation != HC_POISON;
	return st;
}

static NTSTATUS hc_query_allocation(const struct handle_set *h, bool *wrote)
{
	D3DKMT_NFENCE_ALLOCATION_INFO info;
	NTSTATUS st;

	memset(&info, 0xa5, sizeof(info));
	st = NFenceQueryAllocation(h->device, h->allocation, &info);
	*wrote = info.GpuVirtualAddress != 0xa5a5a5a5a5a5a5a5ull;
	return st;
}

static NTSTATUS hc_query_context_state(const struct handle_set *h,
				       bool *wrote)
{
	D3DKMT_NFENCE_CONTEXT_STATE s;
	NTSTATUS st;

	memset(&s, 0xa5, sizeof(s));
	st = NFenceQueryContextState(h->context, &s);
	*wrote = s.FaultGpuVa != 0xa5a5a5a5a5a5a5a5ull;
	return st;
}

static NTSTATUS hc_share(const struct handle_set *h, bool *wrote)
{
	HANDLE nt = (HANDLE)(uintptr_t)HC_POISON;
	NTSTATUS st = D3DKMTShareObjects(1, &h->sync, NULL, 0, &nt);

	*wrote = nt != (HANDLE)(uintptr_t)HC_POISON;
	return st;
}

static NTSTATUS hc_cs_signal_progress(const struct handle_set *h, bool *wrote)
{
	UINT64 buf[16];
	NFENCE_CS cs;
	NTSTATUS st;

	NFenceCsInit(&cs, buf, sizeof(buf), 4096);
	st = NFenceCsSignalHwQueueProgress(&cs, h->queue, 1);
	*wrote = NFenceCsSize(&cs) != 0;
	return st;
}

/* The calls that take their arguments one by one, with no output. */
#define HC_PLAIN_CALL(name, call)					\
static NTSTATUS name(const struct handle_set *h, bool *wrote)		\
{									\
	(void)wrote;							\
	return call;							\
}

HC_PLAIN_CALL(hc_bind_syncobj_point,
	      NFenceBindSyncobjPoint(h->device, h->sync, 1, 1, 1))
HC_PLAIN_CALL(hc_signal_from_syncobj,
	      NFenceSignalFromSyncobjPoint(h->device, h->sync, 1, 1, 1))
HC_PLAIN_CALL(hc_signal_from_sync_file,
	      NFenceSignalFromSyncFile(h->device, h->sync, 1, h->fd))
HC_PLAIN_CALL(hc_suspend_context, NFenceSuspendContext(h->context))
HC_PLAIN_CALL(hc_resume_context, NFenceResumeContext(h->context))

/*
 * Every call, the destroying ones last in each group, so that a call that
 * wrongly succeeds leaves the objects for the next one.
 */
static const struct {
	const char *name;
	handle_call_fn fn;
} handle_calls[] = {
#define HC(fn)	{ #fn, fn }
	HC(hc_query_adapter_info), HC(hc_query_clock),
	HC(hc_query_video_memory),
	HC(hc_set_logging_level), HC(hc_create_device),
	HC(hc_get_device_state), HC(hc_create_native_fence),
	HC(hc_create_monitored_fence), HC(hc_open_native_fence),
	HC(hc_open_monitored_fence), HC(hc_cpu_wait), HC(hc_cpu_wait_timeout),
	HC(hc_cpu_signal), HC(hc_create_allocation), HC(hc_lock),
	HC(hc_unlock), HC(hc_query_allocation), HC(hc_create_context),
	HC(hc_create_hw_context),
	HC(hc_bind_syncobj_point), HC(hc_signal_from_syncobj),
	HC(hc_signal_from_sync_file), HC(hc_share), HC(hc_create_queue),
	HC(hc_gpu_wait), HC(hc_gpu_signal), HC(hc_gpu_signal2),
	HC(hc_suspend_context), HC(hc_resume_context),
	HC(hc_query_context_state), HC(hc_submit), HC(hc_submit_command),
	HC(hc_queue_wait),
	HC(hc_queue_signal), HC(hc_read_log), HC(hc_cs_signal_progress),
	HC(hc_create_doorbell), HC(hc_connect_doorbell), HC(hc_notify),
	HC(hc_destroy_doorbell), HC(hc_destroy_queue), HC(hc_destroy_hw_context),
	HC(hc_destroy_context),
	HC(hc_destroy_sync), HC(hc_destroy_allocation),
	HC(hc_mark_device_as_error), HC(hc_destroy_device),
	HC(hc_close_adapter),
#undef HC
};

/*
 * handle_calls_check() - make every call of handle_calls[] with @h; each
 * must return @want and write nothing. Returns the number of calls that did
 * not, each reported on stderr.
 */
static inline unsigned int handle_calls_check(const struct handle_set *h,
					      NTSTATUS want)
{
	unsigned int i, bad = 0;
	bool wrote;
	NTSTATUS st;

	for (i = 0; i < sizeof(handle_calls) / sizeof(handle_calls[0]); i++) {
		wrote = false;
		st = handle_calls[i].fn(h, &wrote);
		if (st != want || wrote) {
			fprintf(stderr, "# %s: status 0x%08x (want 0x%08x)%s\n",
				handle_calls[i].name, (unsigned int)st,
				(unsigned int)want, wrote ? ", wrote" : "");
			bad++;
		}
	}
	return bad;
}

#endif /* NFENCE_TEST_HANDLE_CALLS_H */
