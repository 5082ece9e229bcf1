/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Submission to hardware queues: D3DKMTSubmitCommandToHwQueue over
 * DRM_IOCTL_NFENCE_SUBMIT, D3DKMTSubmitWaitForSyncObjectsToHwQueue over
 * DRM_IOCTL_NFENCE_SUBMIT_WAIT, and D3DKMTSubmitSignalSyncObjectsToHwQueue
 * over DRM_IOCTL_NFENCE_SUBMIT_SIGNAL, one ioctl per broadcast queue; and
 * the context-level D3DKMTSubmitCommand,
 * D3DKMTWaitForSynchronizationObjectFromGpu and
 * D3DKMTSignalSynchronizationObjectFromGpu/2, the same ioctls on the
 * context's own queue (nf_hwqueue_of_context()). The progress fence of a
 * context's own queue is libnfence's: each D3DKMTSubmitCommand takes the
 * next value of it (struct nf_context.submit_progress), so the kernel's
 * rule that a queue's values grow holds whatever the callers do.
 *
 * A submission may wait in the kernel for room in the queue; drmIoctl()
 * restarts it if a signal handler interrupts the wait.
 */
#include <stdlib.h>
#include <string.h>

#include "hwqueue.h"
#include "syncobj.h"

#define NF_MAX_SYNC_OBJECTS	DRM_NFENCE_MAX_WAIT_FENCES
#define NF_MAX_PRIMARIES	16	/* D3DKMT_SUBMITCOMMAND.WrittenPrimaries */

_Static_assert(D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS ==
	       sizeof(((D3DKMT_SUBMITCOMMAND *)0)->BroadcastContext) /
	       sizeof(D3DKMT_HANDLE), "one handle per broadcast context");
_Static_assert(NF_MAX_PRIMARIES ==
	       sizeof(((D3DKMT_SUBMITCOMMAND *)0)->WrittenPrimaries) /
	       sizeof(D3DKMT_HANDLE), "one handle per primary");

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
		return NF_STATUS_BAD_HANDLE;
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

/*
 * nf_calloc_rows() - calloc() of @rows rows of @cols elements of @size
 * bytes, NULL (as calloc() for a product it cannot allocate) if @rows *
 * @cols overflows size_t, which the callers' 32-bit counts can with a
 * 32-bit size_t.
 */
static void *nf_calloc_rows(size_t rows, size_t cols, size_t size)
{
	size_t n;

	if (__builtin_mul_overflow(rows, cols, &n))
		return NULL;
	return calloc(n, size);
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
static NTSTATUS nf_submit_sync_to(const struct nf_device *dev,
				  uint32_t kernel_queue, unsigned long request,
				  UINT count, const uint32_t *khandles,
				  const UINT64 *values)
{
	struct drm_nfence_submit_sync args;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.hwqueue = kernel_queue;
	args.handles = (uintptr_t)khandles;
	args.values = (uintptr_t)values;
	args.count = count;
	return nf_ioctl_status(dev->adapter->fd, request, &args);
}

static NTSTATUS nf_submit_sync(const struct nf_hwqueue *queue,
			       unsigned long request, UINT count,
			       const uint32_t *khandles, const UINT64 *values)
{
	return nf_submit_sync_to(queue->device, queue->kernel_handle, request,
				 count, khandles, values);
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
		return NF_STATUS_BAD_HANDLE;
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
	handles = nf_calloc_rows(p->BroadcastHwQueueCount, p->ObjectCount,
				 sizeof(*handles));
	if (!queues || !handles) {
		st = STATUS_NO_MEMORY;
		goto out;
	}

	/* Every queue and object first: a bad one queues nothing. */
	for (n = 0; n < p->BroadcastHwQueueCount; n++) {
		queues[n] = nf_hwqueue_lookup(p->BroadcastHwQueueArray[n]);
		if (!queues[n]) {
			st = NF_STATUS_BAD_HANDLE;
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

/* ---- Context-level GPU waits and signals: the context's own queue ---- */

/* Queue a wait or (@request) signal of the objects on @hContext's queue. */
static NTSTATUS nf_context_sync(D3DKMT_HANDLE hContext, unsigned long request,
				UINT count, const D3DKMT_HANDLE *objects,
				const UINT64 *values)
{
	uint32_t handles[NF_MAX_SYNC_OBJECTS], queue;
	struct nf_context *ctx;
	NTSTATUS st;

	ctx = nf_context_lookup(hContext);
	if (!ctx)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(ctx->device, count, objects, handles);
	if (NT_SUCCESS(st))
		st = nf_hwqueue_of_context(ctx, &queue);
	if (NT_SUCCESS(st))
		st = nf_submit_sync_to(ctx->device, queue, request, count,
				       handles, values);
	nf_object_put(&ctx->base);
	return st;
}

NTSTATUS D3DKMTWaitForSynchronizationObjectFromGpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU *pWait)
{
	if (!pWait || !nf_sync_args_ok(pWait->ObjectCount,
				       pWait->ObjectHandleArray,
				       pWait->MonitoredFenceValueArray))
		return STATUS_INVALID_PARAMETER;
	return nf_context_sync(pWait->hContext, DRM_IOCTL_NFENCE_SUBMIT_WAIT,
			       pWait->ObjectCount, pWait->ObjectHandleArray,
			       pWait->MonitoredFenceValueArray);
}

NTSTATUS D3DKMTSignalSynchronizationObjectFromGpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU *pSignal)
{
	if (!pSignal || !nf_sync_args_ok(pSignal->ObjectCount,
					 pSignal->ObjectHandleArray,
					 pSignal->MonitoredFenceValueArray))
		return STATUS_INVALID_PARAMETER;
	return nf_context_sync(pSignal->hContext,
			       DRM_IOCTL_NFENCE_SUBMIT_SIGNAL,
			       pSignal->ObjectCount, pSignal->ObjectHandleArray,
			       pSignal->MonitoredFenceValueArray);
}

NTSTATUS D3DKMTSignalSynchronizationObjectFromGpu2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *pSignal)
{
	const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *p = pSignal;
	struct nf_context **ctxs;
	uint32_t *handles, *queues;
	NTSTATUS st = STATUS_SUCCESS;
	ULONG i, n = 0;

	if (!p || !p->BroadcastContextCount || !p->BroadcastContextArray ||
	    !nf_sync_args_ok(p->ObjectCount, p->ObjectHandleArray,
			     p->MonitoredFenceValueArray) ||
	    p->Flags.Reserved || p->Flags.DXGK_SIGNAL_FLAG_INTERNAL0)
		return STATUS_INVALID_PARAMETER;
	if (p->Flags.SignalAtSubmission || p->Flags.EnqueueCpuEvent ||
	    p->Flags.AllowFenceRewind)
		return STATUS_NOT_SUPPORTED;

	ctxs = calloc(p->BroadcastContextCount, sizeof(*ctxs));
	queues = calloc(p->BroadcastContextCount, sizeof(*queues));
	handles = nf_calloc_rows(p->BroadcastContextCount, p->ObjectCount,
				 sizeof(*handles));
	if (!ctxs || !queues || !handles) {
		st = STATUS_NO_MEMORY;
		goto out;
	}

	/*
	 * Every context and object first: a bad one queues nothing, and
	 * makes no context's own queue.
	 */
	for (n = 0; n < p->BroadcastContextCount; n++) {
		ctxs[n] = nf_context_lookup(p->BroadcastContextArray[n]);
		if (!ctxs[n]) {
			st = NF_STATUS_BAD_HANDLE;
			goto out;
		}
		st = nf_sync_handles(ctxs[n]->device, p->ObjectCount,
				     p->ObjectHandleArray,
				     &handles[(size_t)n * p->ObjectCount]);
		if (!NT_SUCCESS(st)) {
			n++;
			goto out;
		}
	}
	for (i = 0; i < n && NT_SUCCESS(st); i++)
		st = nf_hwqueue_of_context(ctxs[i], &queues[i]);

	/* One signal per context, in order; stop at the first refusal. */
	for (i = 0; i < n && NT_SUCCESS(st); i++)
		st = nf_submit_sync_to(ctxs[i]->device, queues[i],
				       DRM_IOCTL_NFENCE_SUBMIT_SIGNAL,
				       p->ObjectCount,
				       &handles[(size_t)i * p->ObjectCount],
				       p->MonitoredFenceValueArray);
out:
	if (ctxs)
		for (i = 0; i < n; i++)
			nf_object_put(&ctxs[i]->base);
	free(ctxs);
	free(queues);
	free(handles);
	return st;
}

/* ---- Context-level submission: the context's own queue ---- */

/*
 * nf_context_submit() - queue the @size bytes of commands at @va on
 * @ctx's own queue @kernel_queue, with the next progress value of that
 * queue; the value is taken only if the kernel queued the buffer.
 */
static NTSTATUS nf_context_submit(struct nf_context *ctx,
				  uint32_t kernel_queue,
				  D3DGPU_VIRTUAL_ADDRESS va, UINT size)
{
	struct drm_nfence_submit args;
	NTSTATUS st;

	memset(&args, 0, sizeof(args));
	args.device = ctx->device->kernel_handle;
	args.hwqueue = kernel_queue;
	args.commands_gpu_va = va;
	args.size = size;
	pthread_mutex_lock(&ctx->submit_lock);
	args.progress_fence_value = ctx->submit_progress + 1;
	st = nf_ioctl_status(ctx->device->adapter->fd, DRM_IOCTL_NFENCE_SUBMIT,
			     &args);
	if (NT_SUCCESS(st))
		ctx->submit_progress = args.progress_fence_value;
	pthread_mutex_unlock(&ctx->submit_lock);
	return st;
}

/*
 * The checks of D3DKMTSubmitCommand's arguments that need no object: the
 * present, primaries and history members are only checked (nfence has no
 * display); the buffer's own checks are the kernel's SUBMIT's, made here
 * too so that a bad buffer makes no context's own queue.
 */
static bool nf_submit_command_args_ok(const D3DKMT_SUBMITCOMMAND *p)
{
	return !p->Flags.Value && p->BroadcastContextCount &&
	       p->BroadcastContextCount <= D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS &&
	       p->CommandLength && !(p->CommandLength % 8) &&
	       p->CommandLength <= DRM_NFENCE_MAX_SUBMIT_SIZE &&
	       !(p->Commands % 8) &&
	       (!p->PrivateDriverDataSize || p->pPrivateDriverData) &&
	       p->NumPrimaries <= NF_MAX_PRIMARIES &&
	       (!p->NumHistoryBuffers || p->HistoryBufferArray);
}

NTSTATUS D3DKMTSubmitCommand(const D3DKMT_SUBMITCOMMAND *pSubmit)
{
	struct nf_context *ctxs[D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS];
	uint32_t queues[D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS];
	const D3DKMT_SUBMITCOMMAND *p = pSubmit;
	NTSTATUS st = STATUS_SUCCESS;
	UINT i, n;

	if (!p || !nf_submit_command_args_ok(p))
		return STATUS_INVALID_PARAMETER;

	/* Every context first, all of one device: a bad one queues nothing. */
	for (n = 0; n < p->BroadcastContextCount; n++) {
		ctxs[n] = nf_context_lookup(p->BroadcastContext[n]);
		if (!ctxs[n]) {
			st = NF_STATUS_BAD_HANDLE;
			break;
		}
		if (ctxs[n]->device != ctxs[0]->device) {
			st = STATUS_INVALID_PARAMETER;
			n++;
			break;
		}
	}
	for (i = 0; i < n && NT_SUCCESS(st); i++)
		st = nf_hwqueue_of_context(ctxs[i], &queues[i]);

	/* One submission per context, in order; stop at the first refusal. */
	for (i = 0; i < n && NT_SUCCESS(st); i++)
		st = nf_context_submit(ctxs[i], queues[i], p->Commands,
				       p->CommandLength);
	for (i = 0; i < n; i++)
		nf_object_put(&ctxs[i]->base);
	return st;
}
