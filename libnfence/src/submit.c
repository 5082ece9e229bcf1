/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Submission to hardware queues: D3DKMTSubmitCommandToHwQueue over
 * DRM_IOCTL_NFENCE_SUBMIT, D3DKMTSubmitWaitForSyncObjectsToHwQueue over
 * DRM_IOCTL_NFENCE_SUBMIT_WAIT, and D3DKMTSubmitSignalSyncObjectsToHwQueue
 * over DRM_IOCTL_NFENCE_SUBMIT_SIGNAL, one ioctl per broadcast queue.
 *
 * A submission may wait in the kernel for room in the queue; drmIoctl()
 * restarts it if a signal handler interrupts the wait.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define NF_MAX_SYNC_OBJECTS	DRM_NFENCE_MAX_WAIT_FENCES

NTSTATUS D3DKMTSubmitCommandToHwQueue(const D3DKMT_SUBMITCOMMANDTOHWQUEUE *pSubmit)
{
	struct drm_nfence_submit args;
	struct nf_hwqueue *queue;
	NTSTATUS st;

	/* The private data and the primaries mean nothing to nfence. */
	if (!pSubmit ||
	    (pSubmit->PrivateDriverDataSize && !pSubmit->pPrivateDriverData) ||
	    (pSubmit->NumPrimaries && !pSubmit->WrittenPrimaries))
		return STATUS_INVALID_PARAMETER;

	queue = nf_hwqueue_lookup(pSubmit->hHwQueue);
	if (!queue)
		return STATUS_INVALID_HANDLE;
	memset(&args, 0, sizeof(args));
	args.device = queue->device->kernel_handle;
	args.hwqueue = queue->kernel_handle;
	args.commands_gpu_va = pSubmit->CommandBuffer;
	args.size = pSubmit->CommandLength;
	args.progress_fence_value = pSubmit->HwQueueProgressFenceId;
	st = nf_ioctl_status(queue->device->adapter->fd,
			     DRM_IOCTL_NFENCE_SUBMIT, &args);
	nf_object_put(&queue->base);
	return st;
}

/* Checks shared by queued waits and signals. */
static bool nf_sync_args_ok(UINT count, const D3DKMT_HANDLE *handles,
			    const UINT64 *values)
{
	return count && count <= NF_MAX_SYNC_OBJECTS && handles && values;
}

/*
 * nf_submit_sync() - queue a wait or (@request) signal of the @count
 * objects at @handles on @queue; @khandles are their kernel handles.
 */
static NTSTATUS nf_submit_sync(const struct nf_hwqueue *queue,
			       unsigned long request, UINT count,
			       const uint32_t *khandles, const UINT64 *values)
{
	struct drm_nfence_submit_sync args;

	memset(&args, 0, sizeof(args));
	args.device = queue->device->kernel_handle;
	args.hwqueue = queue->kernel_handle;
	args.handles = (uintptr_t)khandles;
	args.values = (uintptr_t)values;
	args.count = count;
	return nf_ioctl_status(queue->device->adapter->fd, request, &args);
}

NTSTATUS D3DKMTSubmitWaitForSyncObjectsToHwQueue(const D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE *pWait)
{
	uint32_t handles[NF_MAX_SYNC_OBJECTS];
	struct nf_hwqueue *queue;
	NTSTATUS st;

	if (!pWait || !nf_sync_args_ok(pWait->ObjectCount,
				       pWait->ObjectHandleArray,
				       pWait->FenceValueArray))
		return STATUS_INVALID_PARAMETER;

	queue = nf_hwqueue_lookup(pWait->hHwQueue);
	if (!queue)
		return STATUS_INVALID_HANDLE;
	st = nf_sync_handles(queue->device, pWait->ObjectCount,
			     pWait->ObjectHandleArray, handles);
	if (NT_SUCCESS(st))
		st = nf_submit_sync(queue, DRM_IOCTL_NFENCE_SUBMIT_WAIT,
				    pWait->ObjectCount, handles,
				    pWait->FenceValueArray);
	nf_object_put(&queue->base);
	return st;
}

NTSTATUS D3DKMTSubmitSignalSyncObjectsToHwQueue(const D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE *pSignal)
{
	const D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE *p = pSignal;
	struct nf_hwqueue **queues;
	uint32_t *handles;
	NTSTATUS st = STATUS_SUCCESS;
	UINT i, n = 0;

	if (!p || !p->BroadcastHwQueueCount || !p->BroadcastHwQueueArray ||
	    !nf_sync_args_ok(p->ObjectCount, p->ObjectHandleArray,
			     p->FenceValueArray) ||
	    p->Flags.Reserved || p->Flags.DXGK_SIGNAL_FLAG_INTERNAL0)
		return STATUS_INVALID_PARAMETER;
	/* The signal happens when the queue gets to it, never lowering. */
	if (p->Flags.SignalAtSubmission || p->Flags.EnqueueCpuEvent ||
	    p->Flags.AllowFenceRewind)
		return STATUS_NOT_SUPPORTED;

	queues = calloc(p->BroadcastHwQueueCount, sizeof(*queues));
	handles = calloc((size_t)p->BroadcastHwQueueCount * p->ObjectCount,
			 sizeof(*handles));
	if (!queues || !handles) {
		st = STATUS_NO_MEMORY;
		goto out;
	}

	/* Every queue and object first: a bad one queues nothing. */
	for (n = 0; n < p->BroadcastHwQueueCount; n++) {
		queues[n] = nf_hwqueue_lookup(p->BroadcastHwQueueArray[n]);
		if (!queues[n]) {
			st = STATUS_INVALID_HANDLE;
			goto out;
		}
		st = nf_sync_handles(queues[n]->device, p->ObjectCount,
				     p->ObjectHandleArray,
				     &handles[(size_t)n * p->ObjectCount]);
		if (!NT_SUCCESS(st)) {
			n++;
			goto out;
		}
	}

	/* One signal per queue, in order; stop at the first refusal. */
	for (i = 0; i < n && NT_SUCCESS(st); i++)
		st = nf_submit_sync(queues[i], DRM_IOCTL_NFENCE_SUBMIT_SIGNAL,
				    p->ObjectCount,
				    &handles[(size_t)i * p->ObjectCount],
				    p->FenceValueArray);
out:
	if (queues)
		for (i = 0; i < n; i++)
			nf_object_put(&queues[i]->base);
	free(queues);
	free(handles);
	return st;
}
