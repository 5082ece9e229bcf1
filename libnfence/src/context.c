/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Contexts and hardware queues: D3DKMTCreateContextVirtual /
 * D3DKMTDestroyContext over DRM_IOCTL_NFENCE_CONTEXT_CREATE / _DESTROY,
 * D3DKMTCreateHwQueue / D3DKMTDestroyHwQueue over
 * DRM_IOCTL_NFENCE_HWQUEUE_CREATE / _DESTROY, and the context test hooks
 * over DRM_IOCTL_NFENCE_CONTEXT_CONTROL.
 *
 * A queue's progress fence is a sync object like a native fence (mapped by
 * the same code, fence.c), flagged so that only the queue closes it.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* D3DDDI_CREATECONTEXTFLAGS bits. */
#define NF_CTX_NULL_RENDERING		(1u << 0)
#define NF_CTX_DISABLE_GPU_TIMEOUT	(1u << 2)
#define NF_CTX_KNOWN_FLAGS		0x3fu

/* D3DDDI_CREATEHWQUEUEFLAGS has the uapi's bit layout. */
#define NF_HWQUEUE_KNOWN_FLAGS		0x3fu

_Static_assert(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT == 1u << 0 &&
	       DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL == 1u << 1 &&
	       DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT == 1u << 2 &&
	       DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS == 1u << 3 &&
	       DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION == 1u << 4 &&
	       DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE == 1u << 5,
	       "D3DDDI_CREATEHWQUEUEFLAGS bits are the uapi's");

static void nf_context_release(struct nf_object *obj)
{
	struct nf_context *ctx = (struct nf_context *)obj;

	nf_device_put(ctx->device);
	free(ctx);
}

static void nf_hwqueue_release(struct nf_object *obj)
{
	struct nf_hwqueue *queue = (struct nf_hwqueue *)obj;

	nf_syncobj_put(queue->progress);
	nf_object_put(&queue->context->base);
	free(queue);
}

static int nf_kernel_context_destroy(const struct nf_device *dev,
				     uint32_t kernel_handle)
{
	struct drm_nfence_context_destroy args = {
		.device = dev->kernel_handle,
		.handle = kernel_handle,
	};

	return nf_ioctl(dev->adapter->fd, DRM_IOCTL_NFENCE_CONTEXT_DESTROY,
			&args);
}

static int nf_kernel_hwqueue_destroy(const struct nf_device *dev,
				     uint32_t kernel_handle)
{
	struct drm_nfence_hwqueue_destroy args = {
		.device = dev->kernel_handle,
		.handle = kernel_handle,
	};

	return nf_ioctl(dev->adapter->fd, DRM_IOCTL_NFENCE_HWQUEUE_DESTROY,
			&args);
}

NTSTATUS nf_hwqueue_teardown(struct nf_object *obj)
{
	struct nf_hwqueue *queue = (struct nf_hwqueue *)obj;
	bool listed;
	int err = 0;

	/* The kernel destroys the queue's doorbell with it. */
	nf_hwqueue_close_doorbell(queue);
	pthread_mutex_lock(&nf_gpu_lock);
	listed = nf_link_del(&queue->link);
	pthread_mutex_unlock(&nf_gpu_lock);

	/* Off the list: its context or device is being destroyed with it. */
	if (listed)
		err = nf_kernel_hwqueue_destroy(queue->device,
						queue->kernel_handle);
	/* The kernel closed the progress fence with the queue. */
	nf_syncobj_forget(queue->progress);
	return NFenceStatusFromErrno(err);
}

NTSTATUS nf_context_teardown(struct nf_object *obj)
{
	size_t off = offsetof(struct nf_hwqueue, link);
	struct nf_context *ctx = (struct nf_context *)obj;
	struct nf_link *queues;
	bool listed;
	int err = 0;

	pthread_mutex_lock(&nf_gpu_lock);
	ctx->destroyed = true;
	queues = nf_gpu_take_list_locked(&ctx->queues, off);
	listed = nf_link_del(&ctx->link);
	pthread_mutex_unlock(&nf_gpu_lock);

	/* The kernel destroys the context's queues with it. */
	if (listed)
		err = nf_kernel_context_destroy(ctx->device,
						ctx->kernel_handle);
	nf_gpu_close_taken(queues, off, NF_HANDLE_HWQUEUE, nf_hwqueue_teardown);
	return NFenceStatusFromErrno(err);
}

void nf_device_close_contexts(struct nf_device *dev)
{
	size_t off = offsetof(struct nf_context, link);

	nf_gpu_close_taken(nf_gpu_close_list(dev, &dev->contexts, off),
			   off, NF_HANDLE_CONTEXT, nf_context_teardown);
}

NTSTATUS nf_context_sync_queue(struct nf_context *ctx, uint32_t *kernel_handle)
{
	struct drm_nfence_hwqueue_create args;
	struct nf_device *dev = ctx->device;
	uint32_t queue = 0;
	NTSTATUS st;

	pthread_mutex_lock(&nf_gpu_lock);
	if (!ctx->destroyed)
		queue = ctx->sync_queue;
	st = ctx->destroyed ? NF_STATUS_BAD_HANDLE : STATUS_SUCCESS;
	pthread_mutex_unlock(&nf_gpu_lock);
	if (!NT_SUCCESS(st) || queue) {
		*kernel_handle = queue;
		return st;
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

	pthread_mutex_lock(&nf_gpu_lock);
	if (ctx->destroyed) {
		/* The context's destruction takes the queue with it. */
		st = NF_STATUS_BAD_HANDLE;
	} else if (ctx->sync_queue) {
		/* Another thread made one first: use it, drop ours. */
		queue = ctx->sync_queue;
	} else {
		ctx->sync_queue = args.handle;
		queue = args.handle;
	}
	pthread_mutex_unlock(&nf_gpu_lock);
	if (NT_SUCCESS(st) && queue != args.handle)
		nf_kernel_hwqueue_destroy(dev, args.handle);
	*kernel_handle = queue;
	return st;
}

NTSTATUS D3DKMTCreateContextVirtual(D3DKMT_CREATECONTEXTVIRTUAL *pCreateContext)
{
	D3DKMT_CREATECONTEXTVIRTUAL *p = pCreateContext;
	struct drm_nfence_context_create args;
	struct nf_context *ctx;
	struct nf_device *dev;
	D3DKMT_HANDLE handle = 0;
	bool destroy_kernel = true;
	NTSTATUS st;

	if (!p || p->EngineAffinity > 1 ||
	    (p->Flags.Value & ~NF_CTX_KNOWN_FLAGS) ||
	    (p->PrivateDriverDataSize && !p->pPrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	if (p->Flags.Value & NF_CTX_NULL_RENDERING)
		return STATUS_NOT_SUPPORTED;

	dev = nf_device_lookup(p->hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.engine = p->NodeOrdinal;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_CONTEXT_CREATE,
			     &args);
	if (!NT_SUCCESS(st))
		goto out;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		nf_kernel_context_destroy(dev, args.handle);
		st = STATUS_NO_MEMORY;
		goto out;
	}
	nf_object_init(&ctx->base, NF_HANDLE_CONTEXT, nf_context_release);
	nf_object_get(&dev->base);
	ctx->device = dev;
	ctx->kernel_handle = args.handle;
	ctx->engine = p->NodeOrdinal;
	if (p->Flags.Value & NF_CTX_DISABLE_GPU_TIMEOUT)
		ctx->queue_flags |= DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;

	pthread_mutex_lock(&nf_gpu_lock);
	if (dev->gpu_closed) {
		/* Lost a race with D3DKMTDestroyDevice(), which destroys it. */
		st = NF_STATUS_BAD_HANDLE;
		destroy_kernel = false;
	} else {
		st = nf_handle_insert(&ctx->base, &handle);
	}
	if (NT_SUCCESS(st))
		nf_link_add(&dev->contexts, &ctx->link);
	pthread_mutex_unlock(&nf_gpu_lock);

	if (!NT_SUCCESS(st) && destroy_kernel)
		nf_kernel_context_destroy(dev, args.handle);
	/* On success the table holds the handle's reference. */
	nf_object_put(&ctx->base);
out:
	nf_device_put(dev);
	if (NT_SUCCESS(st))
		p->hContext = handle;
	return st;
}

NTSTATUS D3DKMTDestroyContext(const D3DKMT_DESTROYCONTEXT *pDestroyContext)
{
	struct nf_object *obj;
	NTSTATUS st;

	if (!pDestroyContext)
		return STATUS_INVALID_PARAMETER;

	/* Unlink first: of concurrent destroys exactly one reaches here. */
	obj = nf_handle_remove(pDestroyContext->hContext, NF_HANDLE_CONTEXT);
	if (!obj)
		return NF_STATUS_BAD_HANDLE;
	st = nf_context_teardown(obj);
	nf_object_put(obj);
	return st;
}

NTSTATUS D3DKMTCreateHwQueue(D3DKMT_CREATEHWQUEUE *pCreateHwQueue)
{
	D3DKMT_CREATEHWQUEUE *p = pCreateHwQueue;
	struct drm_nfence_hwqueue_create args;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0, fence_handle = 0;
	struct nf_syncobj *progress = NULL;
	struct nf_hwqueue *queue;
	struct nf_context *ctx;
	struct nf_device *dev;
	bool destroy_kernel = true;
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
	if (!NT_SUCCESS(st))
		goto out;

	/* The progress fence, mapped as a native fence is. */
	st = nf_syncobj_new(dev, args.progress_fence,
			    &args.progress_fence_mapping, true, &fence_handle,
			    &mapping, &progress);
	if (!NT_SUCCESS(st)) {
		nf_kernel_hwqueue_destroy(dev, args.handle);
		goto out;
	}

	queue = calloc(1, sizeof(*queue));
	if (!queue) {
		nf_kernel_hwqueue_destroy(dev, args.handle);
		nf_syncobj_forget(progress);
		nf_syncobj_put(progress);
		st = STATUS_NO_MEMORY;
		goto out;
	}
	nf_object_init(&queue->base, NF_HANDLE_HWQUEUE, nf_hwqueue_release);
	nf_object_get(&ctx->base);
	queue->context = ctx;
	queue->device = dev;
	queue->kernel_handle = args.handle;
	queue->progress = progress;	/* the reference nf_syncobj_new() gave */
	queue->user_mode = p->Flags.UserModeSubmission;

	pthread_mutex_lock(&nf_gpu_lock);
	if (ctx->destroyed) {
		/* Lost a race with the context's (or device's) destruction. */
		st = NF_STATUS_BAD_HANDLE;
		destroy_kernel = false;
	} else {
		st = nf_handle_insert(&queue->base, &handle);
	}
	if (NT_SUCCESS(st))
		nf_link_add(&ctx->queues, &queue->link);
	pthread_mutex_unlock(&nf_gpu_lock);

	if (!NT_SUCCESS(st)) {
		if (destroy_kernel)
			nf_kernel_hwqueue_destroy(dev, args.handle);
		nf_syncobj_forget(progress);
	}
	/* On success the table holds the handle's reference. */
	nf_object_put(&queue->base);
out:
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
	struct nf_object *obj;
	NTSTATUS st;

	if (!pDestroyHwQueue)
		return STATUS_INVALID_PARAMETER;

	/* Unlink first: of concurrent destroys exactly one reaches here. */
	obj = nf_handle_remove(pDestroyHwQueue->hHwQueue, NF_HANDLE_HWQUEUE);
	if (!obj)
		return NF_STATUS_BAD_HANDLE;
	st = nf_hwqueue_teardown(obj);
	nf_object_put(obj);
	return st;
}

/* DRM_IOCTL_NFENCE_CONTEXT_CONTROL @op on @hContext; *@out its answer. */
static NTSTATUS nf_context_control(D3DKMT_HANDLE hContext, uint32_t op,
				   struct drm_nfence_context_control *out)
{
	struct drm_nfence_context_control args;
	struct nf_context *ctx;
	NTSTATUS st;

	ctx = nf_context_lookup(hContext);
	if (!ctx)
		return NF_STATUS_BAD_HANDLE;
	memset(&args, 0, sizeof(args));
	args.device = ctx->device->kernel_handle;
	args.context = ctx->kernel_handle;
	args.op = op;
	st = nf_ioctl_status(ctx->device->adapter->fd,
			     DRM_IOCTL_NFENCE_CONTEXT_CONTROL, &args);
	nf_object_put(&ctx->base);
	if (NT_SUCCESS(st) && out)
		*out = args;
	return st;
}

NTSTATUS NFenceSuspendContext(D3DKMT_HANDLE hContext)
{
	return nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_SUSPEND,
				  NULL);
}

NTSTATUS NFenceResumeContext(D3DKMT_HANDLE hContext)
{
	return nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_RESUME,
				  NULL);
}

NTSTATUS NFenceQueryContextState(D3DKMT_HANDLE hContext,
				 D3DKMT_NFENCE_CONTEXT_STATE *pState)
{
	struct drm_nfence_context_control args;
	NTSTATUS st;

	if (!pState)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_QUERY, &args);
	if (!NT_SUCCESS(st))
		return st;
	memset(pState, 0, sizeof(*pState));
	pState->Flags.Suspended =
		!!(args.state & DRM_NFENCE_CONTEXT_STATE_SUSPENDED);
	pState->Flags.Faulted = !!(args.state & DRM_NFENCE_CONTEXT_STATE_FAULTED);
	pState->Flags.DeviceLost =
		!!(args.state & DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST);
	pState->FaultReason = (D3DKMT_NFENCE_FAULT_REASON)args.fault_reason;
	pState->FaultGpuVa = args.fault_va;
	return STATUS_SUCCESS;
}
