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

/* The handles each call is given; @fd: an open file descriptor (NT handle). */
struct handle_set {
	D3DKMT_HANDLE adapter, device, sync, allocation, context, queue;
	D3DKMT_HANDLE doorbell;
	int fd;
};

/* A call; *@wrote is set if it changed one of its outputs. */
typedef NTSTATUS (*handle_call_fn)(const struct handle_set *h, bool *wrote);

static NTSTATUS hc_close_adapter(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CLOSEADAPTER c = { .hAdapter = h->adapter };

	*wrote = false;
	return D3DKMTCloseAdapter(&c);
}

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

static NTSTATUS hc_query_clock(const struct handle_set *h, bool *wrote)
{
	D3DKMT_QUERYCLOCKCALIBRATION c;
	NTSTATUS st;

	memset(&c, 0xa5, sizeof(c));
	c.hAdapter = h->adapter;
	c.NodeOrdinal = 0;
	c.PhysicalAdapterIndex = 0;
	st = D3DKMTQueryClockCalibration(&c);
	*wrote = c.ClockData.GpuFrequency != 0xa5a5a5a5a5a5a5a5ull;
	return st;
}

static NTSTATUS hc_set_logging_level(const struct handle_set *h, bool *wrote)
{
	NFENCE_SETLOGGINGLEVEL l = {
		.hAdapter = h->adapter,
		.LoggingLevel = D3DDDI_LOGGING_LEVEL_DEFAULT,
		.PreviousLevel = (D3DDDI_LOGGING_LEVEL)HC_POISON,
	};
	NTSTATUS st = NFenceSetLoggingLevel(&l);

	*wrote = l.PreviousLevel != (D3DDDI_LOGGING_LEVEL)HC_POISON;
	return st;
}

static NTSTATUS hc_create_device(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CREATEDEVICE c = { .hAdapter = h->adapter };
	NTSTATUS st;

	c.hDevice = HC_POISON;
	st = D3DKMTCreateDevice(&c);
	*wrote = c.hDevice != HC_POISON;
	return st;
}

static NTSTATUS hc_destroy_device(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROYDEVICE d = { .hDevice = h->device };

	*wrote = false;
	return D3DKMTDestroyDevice(&d);
}

static NTSTATUS hc_get_device_state(const struct handle_set *h, bool *wrote)
{
	D3DKMT_GETDEVICESTATE s = {
		.hDevice = h->device,
		.StateType = D3DKMT_DEVICESTATE_EXECUTION,
	};
	NTSTATUS st;

	s.ExecutionState = (D3DKMT_DEVICEEXECUTION_STATE)HC_POISON;
	st = D3DKMTGetDeviceState(&s);
	*wrote = s.ExecutionState != (D3DKMT_DEVICEEXECUTION_STATE)HC_POISON;
	return st;
}

static NTSTATUS hc_mark_device_as_error(const struct handle_set *h,
					bool *wrote)
{
	D3DKMT_MARKDEVICEASERROR m = {
		.hDevice = h->device,
		.Reason = D3DKMT_DEVICE_ERROR_REASON_GENERIC,
	};

	*wrote = false;
	return D3DKMTMarkDeviceAsError(&m);
}

static NTSTATUS hc_create_native_fence(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CREATENATIVEFENCE c;
	NTSTATUS st;

	memset(&c, 0, sizeof(c));
	c.hDevice = h->device;
	c.hSyncObject = HC_POISON;
	st = D3DKMTCreateNativeFence(&c);
	*wrote = c.hSyncObject != HC_POISON;
	return st;
}

static NTSTATUS hc_create_monitored_fence(const struct handle_set *h,
					  bool *wrote)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c;
	NTSTATUS st;

	memset(&c, 0, sizeof(c));
	c.hDevice = h->device;
	c.Info.Type = D3DDDI_MONITORED_FENCE;
	c.hSyncObject = HC_POISON;
	st = D3DKMTCreateSynchronizationObject2(&c);
	*wrote = c.hSyncObject != HC_POISON;
	return st;
}

static NTSTATUS hc_open_native_fence(const struct handle_set *h, bool *wrote)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE o;
	NTSTATUS st;

	memset(&o, 0, sizeof(o));
	o.hNtHandle = (HANDLE)(intptr_t)h->fd;
	o.hDevice = h->device;
	o.hSyncObject = HC_POISON;
	st = D3DKMTOpenNativeFenceFromNtHandle(&o);
	*wrote = o.hSyncObject != HC_POISON;
	return st;
}

static NTSTATUS hc_open_monitored_fence(const struct handle_set *h,
					bool *wrote)
{
	D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o;
	NTSTATUS st;

	memset(&o, 0, sizeof(o));
	o.hNtHandle = (HANDLE)(intptr_t)h->fd;
	o.hDevice = h->device;
	o.hSyncObject = HC_POISON;
	st = D3DKMTOpenSyncObjectFromNtHandle2(&o);
	*wrote = o.hSyncObject != HC_POISON;
	return st;
}

/* Waits are for 0: a wait that wrongly reaches the kernel returns at once. */
static NTSTATUS hc_cpu_wait(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 0;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = h->device,
		.ObjectCount = 1,
		.ObjectHandleArray = &h->sync,
		.FenceValueArray = &v,
	};

	*wrote = false;
	return D3DKMTWaitForSynchronizationObjectFromCpu(&w);
}

static NTSTATUS hc_cpu_wait_timeout(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 0;
	UINT first = HC_POISON;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = h->device,
		.ObjectCount = 1,
		.ObjectHandleArray = &h->sync,
		.FenceValueArray = &v,
	};
	NTSTATUS st = NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, 0,
								      &first);

	*wrote = first != HC_POISON;
	return st;
}

static NTSTATUS hc_cpu_signal(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 1;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = h->device,
		.ObjectCount = 1,
		.ObjectHandleArray = &h->sync,
		.FenceValueArray = &v,
	};

	*wrote = false;
	return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

static NTSTATUS hc_create_allocation(const struct handle_set *h, bool *wrote)
{
	NFENCE_ALLOCATION_DESC desc = {
		.Size = 4096,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DDDI_ALLOCATIONINFO2 ai;
	D3DKMT_CREATEALLOCATION ca;
	NTSTATUS st;

	memset(&ai, 0, sizeof(ai));
	ai.pPrivateDriverData = &desc;
	ai.PrivateDriverDataSize = sizeof(desc);
	ai.hAllocation = HC_POISON;
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = h->device;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &ai;
	st = D3DKMTCreateAllocation2(&ca);
	*wrote = ai.hAllocation != HC_POISON;
	return st;
}

static NTSTATUS hc_destroy_allocation(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROYALLOCATION2 d = {
		.hDevice = h->device,
		.phAllocationList = &h->allocation,
		.AllocationCount = 1,
	};

	*wrote = false;
	return D3DKMTDestroyAllocation2(&d);
}

static NTSTATUS hc_lock(const struct handle_set *h, bool *wrote)
{
	D3DKMT_LOCK2 l = { .hDevice = h->device, .hAllocation = h->allocation };
	NTSTATUS st;

	l.pData = (void *)(uintptr_t)HC_POISON;
	st = D3DKMTLock2(&l);
	*wrote = l.pData != (void *)(uintptr_t)HC_POISON;
	return st;
}

static NTSTATUS hc_unlock(const struct handle_set *h, bool *wrote)
{
	D3DKMT_UNLOCK2 u = { .hDevice = h->device, .hAllocation = h->allocation };

	*wrote = false;
	return D3DKMTUnlock2(&u);
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

static NTSTATUS hc_create_context(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CREATECONTEXTVIRTUAL c = {
		.hDevice = h->device,
		.ClientHint = D3DKMT_CLIENTHINT_DX12,
		.hContext = HC_POISON,
	};
	NTSTATUS st = D3DKMTCreateContextVirtual(&c);

	*wrote = c.hContext != HC_POISON;
	return st;
}

static NTSTATUS hc_bind_syncobj_point(const struct handle_set *h, bool *wrote)
{
	*wrote = false;
	return NFenceBindSyncobjPoint(h->device, h->sync, 1, 1, 1);
}

static NTSTATUS hc_signal_from_syncobj(const struct handle_set *h,
				       bool *wrote)
{
	*wrote = false;
	return NFenceSignalFromSyncobjPoint(h->device, h->sync, 1, 1, 1);
}

static NTSTATUS hc_signal_from_sync_file(const struct handle_set *h,
					 bool *wrote)
{
	*wrote = false;
	return NFenceSignalFromSyncFile(h->device, h->sync, 1, h->fd);
}

static NTSTATUS hc_destroy_sync(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h->sync };

	*wrote = false;
	return D3DKMTDestroySynchronizationObject(&d);
}

static NTSTATUS hc_share(const struct handle_set *h, bool *wrote)
{
	HANDLE nt = (HANDLE)(uintptr_t)HC_POISON;
	NTSTATUS st = D3DKMTShareObjects(1, &h->sync, NULL, 0, &nt);

	*wrote = nt != (HANDLE)(uintptr_t)HC_POISON;
	return st;
}

static NTSTATUS hc_destroy_context(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROYCONTEXT d = { .hContext = h->context };

	*wrote = false;
	return D3DKMTDestroyContext(&d);
}

static NTSTATUS hc_create_queue(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CREATEHWQUEUE q;
	NTSTATUS st;

	memset(&q, 0, sizeof(q));
	q.hHwContext = h->context;
	q.hHwQueue = HC_POISON;
	st = D3DKMTCreateHwQueue(&q);
	*wrote = q.hHwQueue != HC_POISON;
	return st;
}

static NTSTATUS hc_gpu_wait(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 0;
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w;

	memset(&w, 0, sizeof(w));
	w.hContext = h->context;
	w.ObjectCount = 1;
	w.ObjectHandleArray = &h->sync;
	w.MonitoredFenceValueArray = &v;
	*wrote = false;
	return D3DKMTWaitForSynchronizationObjectFromGpu(&w);
}

static NTSTATUS hc_gpu_signal(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 1;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s;

	memset(&s, 0, sizeof(s));
	s.hContext = h->context;
	s.ObjectCount = 1;
	s.ObjectHandleArray = &h->sync;
	s.MonitoredFenceValueArray = &v;
	*wrote = false;
	return D3DKMTSignalSynchronizationObjectFromGpu(&s);
}

static NTSTATUS hc_gpu_signal2(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 1;
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s;

	memset(&s, 0, sizeof(s));
	s.ObjectCount = 1;
	s.ObjectHandleArray = &h->sync;
	s.BroadcastContextCount = 1;
	s.BroadcastContextArray = &h->context;
	s.MonitoredFenceValueArray = &v;
	*wrote = false;
	return D3DKMTSignalSynchronizationObjectFromGpu2(&s);
}

static NTSTATUS hc_suspend_context(const struct handle_set *h, bool *wrote)
{
	*wrote = false;
	return NFenceSuspendContext(h->context);
}

static NTSTATUS hc_resume_context(const struct handle_set *h, bool *wrote)
{
	*wrote = false;
	return NFenceResumeContext(h->context);
}

static NTSTATUS hc_query_context_state(const struct handle_set *h,
				       bool *wrote)
{
	D3DKMT_NFENCE_CONTEXT_STATE s;
	NTSTATUS st;

	memset(&s, 0xa5, sizeof(s));
	st = NFenceQueryContextState(h->context, &s);
	*wrote = s.Flags.Value != HC_POISON;
	return st;
}

static NTSTATUS hc_destroy_queue(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROYHWQUEUE d = { .hHwQueue = h->queue };

	*wrote = false;
	return D3DKMTDestroyHwQueue(&d);
}

static NTSTATUS hc_submit(const struct handle_set *h, bool *wrote)
{
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s = {
		.hHwQueue = h->queue,
		.HwQueueProgressFenceId = 1,
		.CommandBuffer = 4096,
		.CommandLength = 8,
	};

	*wrote = false;
	return D3DKMTSubmitCommandToHwQueue(&s);
}

static NTSTATUS hc_queue_wait(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 0;
	D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE w = {
		.hHwQueue = h->queue,
		.ObjectCount = 1,
		.ObjectHandleArray = &h->sync,
		.FenceValueArray = &v,
	};

	*wrote = false;
	return D3DKMTSubmitWaitForSyncObjectsToHwQueue(&w);
}

static NTSTATUS hc_queue_signal(const struct handle_set *h, bool *wrote)
{
	UINT64 v = 1;
	D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE s = {
		.BroadcastHwQueueCount = 1,
		.BroadcastHwQueueArray = &h->queue,
		.ObjectCount = 1,
		.ObjectHandleArray = &h->sync,
		.FenceValueArray = &v,
	};

	*wrote = false;
	return D3DKMTSubmitSignalSyncObjectsToHwQueue(&s);
}

static NTSTATUS hc_read_log(const struct handle_set *h, bool *wrote)
{
	DXGK_NATIVE_FENCE_LOG_ENTRY e;
	NFENCE_READNATIVEFENCELOG r = {
		.hHwQueue = h->queue,
		.Type = DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS,
		.pEntries = &e,
		.NumEntries = 1,
	};
	NTSTATUS st = NFenceReadNativeFenceLog(&r);

	*wrote = r.NumEntries != 1;
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

static NTSTATUS hc_create_doorbell(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CREATE_DOORBELL d;
	NTSTATUS st;

	memset(&d, 0, sizeof(d));
	d.hHwQueue = h->queue;
	d.hRingBuffer = h->allocation;
	d.hDoorbell = HC_POISON;
	st = D3DKMTCreateDoorbell(&d);
	*wrote = d.hDoorbell != HC_POISON;
	return st;
}

static NTSTATUS hc_connect_doorbell(const struct handle_set *h, bool *wrote)
{
	D3DKMT_CONNECT_DOORBELL c = { .hDoorbell = h->doorbell };

	*wrote = false;
	return D3DKMTConnectDoorbell(&c);
}

static NTSTATUS hc_notify(const struct handle_set *h, bool *wrote)
{
	D3DKMT_NOTIFY_WORK_SUBMISSION n = { .hDoorbell = h->doorbell };

	*wrote = false;
	return D3DKMTNotifyWorkSubmission(&n);
}

static NTSTATUS hc_destroy_doorbell(const struct handle_set *h, bool *wrote)
{
	D3DKMT_DESTROY_DOORBELL d = { .hDoorbell = h->doorbell };

	*wrote = false;
	return D3DKMTDestroyDoorbell(&d);
}

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
	HC(hc_set_logging_level), HC(hc_create_device),
	HC(hc_get_device_state), HC(hc_create_native_fence),
	HC(hc_create_monitored_fence), HC(hc_open_native_fence),
	HC(hc_open_monitored_fence), HC(hc_cpu_wait), HC(hc_cpu_wait_timeout),
	HC(hc_cpu_signal), HC(hc_create_allocation), HC(hc_lock),
	HC(hc_unlock), HC(hc_query_allocation), HC(hc_create_context),
	HC(hc_bind_syncobj_point), HC(hc_signal_from_syncobj),
	HC(hc_signal_from_sync_file), HC(hc_share), HC(hc_create_queue),
	HC(hc_gpu_wait), HC(hc_gpu_signal), HC(hc_gpu_signal2),
	HC(hc_suspend_context), HC(hc_resume_context),
	HC(hc_query_context_state), HC(hc_submit), HC(hc_queue_wait),
	HC(hc_queue_signal), HC(hc_read_log), HC(hc_cs_signal_progress),
	HC(hc_create_doorbell), HC(hc_connect_doorbell), HC(hc_notify),
	HC(hc_destroy_doorbell), HC(hc_destroy_queue), HC(hc_destroy_context),
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
