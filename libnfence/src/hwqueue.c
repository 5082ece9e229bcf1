/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Hardware queues: D3DKMTCreateHwQueue / D3DKMTDestroyHwQueue over
 * DRM_IOCTL_NFENCE_HWQUEUE_CREATE / _DESTROY, and the kernel-mode queue a
 * context has of its own for the context-level GPU waits and signals
 * (submit.c).
 *
 * A queue's progress fence is a sync object like a native fence (mapped by
 * the same code, syncobj.c), owned by the queue and flagged so that only
 * the queue's destruction closes it.
 */
#include <stdlib.h>
#include <string.h>

#include "hwqueue.h"
#include "syncobj.h"

/* D3DDDI_CREATEHWQUEUEFLAGS has the uapi's bit layout. */
#define NF_HWQUEUE_KNOWN_FLAGS		0x3fu

_Static_assert(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT == 1u << 0 &&
	       DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL == 1u << 1 &&
	       DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT == 1u << 2 &&
	       DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS == 1u << 3 &&
	       DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION == 1u << 4 &&
	       DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE == 1u << 5,
	       "D3DDDI_CREATEHWQUEUEFLAGS bits are the uapi's");

/* The kernel destroys the queue's doorbell and progress fence with it. */
static NTSTATUS nf_hwqueue_teardown(struct nf_object *obj, bool owner_destroys)
{
	struct nf_hwqueue *queue = (struct nf_hwqueue *)obj;

	return nf_device_destroy_object(queue->device,
					DRM_IOCTL_NFENCE_HWQUEUE_DESTROY,
					queue->kernel_handle, owner_destroys);
}

static const struct nf_object_ops nf_hwqueue_ops = {
	.type = NF_HANDLE_HWQUEUE,
	.teardown = nf_hwqueue_teardown,
};

struct nf_hwqueue *nf_hwqueue_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_hwqueue *)nf_handle_lookup(handle, NF_HANDLE_HWQUEUE);
}

NTSTATUS nf_hwqueue_of_context(struct nf_context *ctx, uint32_t *kernel_handle)
{
	struct drm_nfence_hwqueue_create args;
	struct nf_device *dev = ctx->device;
	unsigned int queue;
	NTSTATUS st;

	if (!nf_object_is_open(&ctx->base))
		return NF_STATUS_BAD_HANDLE;
	queue = atomic_load(&ctx->sync_queue);
	if (queue) {
		*kernel_handle = queue;
		return STATUS_SUCCESS;
	}

	/* A kernel-mode queue; its progress fence is closed with it. */
	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.context = ctx->kernel_handle;
	args.flags = ctx->queue_flags;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_HWQUEUE_CREATE,
			     &args);
	if (!NT_SUCCESS(st))
		return st;

	/* Closing: the context's destruction takes the queue with it. */
	if (!nf_object_is_open(&ctx->base))
		return NF_STATUS_BAD_HANDLE;
	if (atomic_compare_exchange_strong(&ctx->sync_queue, &queue,
					   args.handle)) {
		queue = args.handle;
	} else {
		/* Another thread made one first: use it, drop ours. */
		nf_device_destroy_object(dev, DRM_IOCTL_NFENCE_HWQUEUE_DESTROY,
					 args.handle, false);
	}
	*kernel_handle = queue;
	return STATUS_SUCCESS;
}

/*
 * nf_hwqueue_new() - wrap the kernel queue @args made on @ctx in a new
 * queue handle, then its progress fence in a sync object handle owned by
 * the queue: *@handle, *@fence_handle and *@mapping on success. On failure
 * the kernel queue is destroyed (unless @ctx's destruction does).
 */
static NTSTATUS nf_hwqueue_new(struct nf_context *ctx, bool user_mode,
			       const struct drm_nfence_hwqueue_create *args,
			       D3DKMT_HANDLE *handle,
			       D3DKMT_HANDLE *fence_handle,
			       D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	const struct drm_nfence_fence_mapping *km;
	struct nf_device *dev = ctx->device;
	struct nf_hwqueue *queue;
	NTSTATUS st;

	queue = calloc(1, sizeof(*queue));
	if (!queue) {
		nf_device_destroy_object(dev, DRM_IOCTL_NFENCE_HWQUEUE_DESTROY,
					 args->handle, false);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&queue->base, &nf_hwqueue_ops, &ctx->base);
	queue->context = ctx;
	queue->device = dev;
	queue->kernel_handle = args->handle;
	km = &args->progress_fence_mapping;
	queue->progress.CurrentValueGpuVa = km->current_value_gpu_va;
	queue->progress.MonitoredValueGpuVa = km->monitored_value_gpu_va;
	queue->user_mode = user_mode;

	/* Refused, it is destroyed (by its context's close if under way). */
	st = nf_handle_insert(&queue->base, handle);
	/* The progress fence, mapped as a native fence is, the queue's. */
	if (NT_SUCCESS(st)) {
		st = nf_syncobj_new(&queue->base, dev, args->progress_fence, km,
				    true, fence_handle, mapping);
		if (!NT_SUCCESS(st))
			nf_handle_close(*handle, NF_HANDLE_HWQUEUE);
	}
	/* On success the table holds the handle's reference. */
	nf_object_put(&queue->base);
	return st;
}

NTSTATUS D3DKMTCreateHwQueue(D3DKMT_CREATEHWQUEUE *pCreateHwQueue)
{
	D3DKMT_CREATEHWQUEUE *p = pCreateHwQueue;
	struct drm_nfence_hwqueue_create args;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0, fence_handle = 0;
	struct nf_context *ctx;
	struct nf_device *dev;
	NTSTATUS st;

	if (!p || (p->Flags.Value & ~NF_HWQUEUE_KNOWN_FLAGS) ||
	    (p->PrivateDriverDataSize && !p->pPrivateDriverData))
		return STATUS_INVALID_PARAMETER;

	ctx = nf_context_lookup(p->hHwContext);
	if (!ctx)
		return NF_STATUS_BAD_HANDLE;
	dev = ctx->device;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.context = ctx->kernel_handle;
	args.flags = p->Flags.Value | ctx->queue_flags;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_HWQUEUE_CREATE,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_hwqueue_new(ctx, p->Flags.UserModeSubmission, &args,
				    &handle, &fence_handle, &mapping);
	nf_object_put(&ctx->base);
	if (!NT_SUCCESS(st))
		return st;

	p->hHwQueue = handle;
	p->hHwQueueProgressFence = fence_handle;
	p->HwQueueProgressFenceCPUVirtualAddress = mapping.CurrentValueCpuVa;
	p->HwQueueProgressFenceGPUVirtualAddress = mapping.CurrentValueGpuVa;
	/* The queue's native fence log buffers (none without native fences). */
	p->NativeFenceWaitLogBufferGpuVa = args.wait_log_gpu_va;
	p->NativeFenceSignalLogBufferGpuVa = args.signal_log_gpu_va;
	p->NativeFenceLogBufferNumberOfEntries = args.log_entries;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTDestroyHwQueue(const D3DKMT_DESTROYHWQUEUE *pDestroyHwQueue)
{
	if (!pDestroyHwQueue)
		return STATUS_INVALID_PARAMETER;
	return nf_handle_close(pDestroyHwQueue->hHwQueue, NF_HANDLE_HWQUEUE);
}
