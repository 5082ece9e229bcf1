/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * CPU waits and signals of sync objects:
 * D3DKMTWaitForSynchronizationObjectFromCpu (and its timeout extension)
 * over DRM_IOCTL_NFENCE_FENCE_WAIT, D3DKMTSignalSynchronizationObjectFromCpu
 * over DRM_IOCTL_NFENCE_FENCE_SIGNAL.
 *
 * A blocking wait takes an absolute CLOCK_MONOTONIC deadline, computed
 * once. It is interruptible in the kernel (signal handlers run), so it is
 * issued with ioctl() itself rather than drmIoctl(), and reissued after
 * EINTR with the same deadline: an interrupted wait continues, it does not
 * start over.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "syncobj.h"

#define NF_MAX_SYNC_OBJECTS	DRM_NFENCE_MAX_WAIT_FENCES

_Static_assert(D3DKMT_NFENCE_MAX_SYNC_OBJECTS == DRM_NFENCE_MAX_WAIT_FENCES,
	       "the public limit is the kernel's");

/* The absolute CLOCK_MONOTONIC deadline @timeout_ns from now. */
static int64_t nf_deadline(UINT64 timeout_ns)
{
	const uint64_t infinite = (uint64_t)DRM_NFENCE_TIMEOUT_INFINITE;
	struct timespec ts;
	uint64_t now;

	if (timeout_ns >= infinite)
		return DRM_NFENCE_TIMEOUT_INFINITE;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (timeout_ns >= infinite - now)
		return DRM_NFENCE_TIMEOUT_INFINITE;
	return (int64_t)(now + timeout_ns);
}

NTSTATUS NFenceWaitForSynchronizationObjectFromCpuTimeout(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *pWait,
							  UINT64 TimeoutNs,
							  UINT *pFirstSignaled)
{
	uint32_t handles[NF_MAX_SYNC_OBJECTS];
	struct drm_nfence_fence_wait args, kargs;
	struct nf_device *dev;
	intptr_t eventfd = 0;
	NTSTATUS st;
	int err;

	if (!pWait || !pWait->ObjectHandleArray || !pWait->FenceValueArray ||
	    !pWait->ObjectCount || pWait->ObjectCount > NF_MAX_SYNC_OBJECTS ||
	    pWait->Flags.Reserved)
		return STATUS_INVALID_PARAMETER;
	if (pWait->hAsyncEvent) {
		/* An asynchronous wait has no timeout. */
		if (TimeoutNs != UINT64_MAX)
			return STATUS_INVALID_PARAMETER;
		eventfd = (intptr_t)pWait->hAsyncEvent;
		if (eventfd < 0 || eventfd > INT_MAX)
			return STATUS_INVALID_HANDLE;
	}

	dev = nf_device_lookup(pWait->hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(dev, pWait->ObjectCount, pWait->ObjectHandleArray,
			     handles);
	if (!NT_SUCCESS(st))
		goto out;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.count = pWait->ObjectCount;
	args.handles = (uintptr_t)handles;
	args.values = (uintptr_t)pWait->FenceValueArray;
	if (pWait->Flags.WaitAny)
		args.flags |= DRM_NFENCE_WAIT_ANY;
	if (eventfd) {
		args.flags |= DRM_NFENCE_WAIT_ASYNC;
		args.eventfd = (int32_t)eventfd;
	} else {
		args.timeout_ns = nf_deadline(TimeoutNs);
	}

	/* Resume an interrupted wait with the same absolute deadline. */
	do {
		kargs = args;
		err = nf_ioctl_once(dev->adapter->fd,
				    DRM_IOCTL_NFENCE_FENCE_WAIT, &kargs);
	} while (err == EINTR);
	/*
	 * The kernel says EINVAL for an event that is no eventfd as for an
	 * INTRA_GPU fence; a foreign file is a bad event handle.
	 */
	if (err == EINVAL && eventfd &&
	    nf_fd_is_other((int)eventfd, NF_FD_KIND_EVENTFD))
		st = STATUS_INVALID_HANDLE;
	else
		st = NFenceStatusFromErrno(err);

	if (st == STATUS_SUCCESS && !eventfd && pFirstSignaled)
		*pFirstSignaled = kargs.first_signaled;
out:
	nf_device_put(dev);
	return st;
}

NTSTATUS D3DKMTWaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *pWait)
{
	return NFenceWaitForSynchronizationObjectFromCpuTimeout(pWait,
								UINT64_MAX,
								NULL);
}

NTSTATUS D3DKMTSignalSynchronizationObjectFromCpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU *pSignal)
{
	uint32_t handles[NF_MAX_SYNC_OBJECTS];
	struct drm_nfence_fence_signal args;
	struct nf_device *dev;
	NTSTATUS st;

	if (!pSignal || !pSignal->ObjectHandleArray ||
	    !pSignal->FenceValueArray || !pSignal->ObjectCount ||
	    pSignal->ObjectCount > NF_MAX_SYNC_OBJECTS ||
	    pSignal->Flags.Reserved || pSignal->Flags.DXGK_SIGNAL_FLAG_INTERNAL0)
		return STATUS_INVALID_PARAMETER;
	/* SignalAtSubmission: a CPU signal happens when submitted anyway. */
	if (pSignal->Flags.EnqueueCpuEvent || pSignal->Flags.AllowFenceRewind)
		return STATUS_NOT_SUPPORTED;

	dev = nf_device_lookup(pSignal->hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(dev, pSignal->ObjectCount,
			     pSignal->ObjectHandleArray, handles);
	if (NT_SUCCESS(st)) {
		memset(&args, 0, sizeof(args));
		args.device = dev->kernel_handle;
		args.count = pSignal->ObjectCount;
		args.handles = (uintptr_t)handles;
		args.values = (uintptr_t)pSignal->FenceValueArray;
		st = nf_ioctl_status(dev->adapter->fd,
				     DRM_IOCTL_NFENCE_FENCE_SIGNAL, &args);
	}
	nf_device_put(dev);
	return st;
}
