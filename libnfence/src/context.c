/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Contexts: D3DKMTCreateContextVirtual, D3DKMTCreateContext,
 * D3DKMTCreateHwContext, D3DKMTDestroyContext and D3DKMTDestroyHwContext
 * over DRM_IOCTL_NFENCE_CONTEXT_CREATE / _DESTROY (a hardware context is a
 * context), and the scheduling priority calls and the context test hooks
 * over DRM_IOCTL_NFENCE_CONTEXT_CONTROL. A context owns its hardware queues
 * (hwqueue.c): destroying it closes them.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"

/* D3DDDI_CREATECONTEXTFLAGS bits. */
#define NF_CTX_NULL_RENDERING		(1u << 0)
#define NF_CTX_DISABLE_GPU_TIMEOUT	(1u << 2)
#define NF_CTX_KNOWN_FLAGS		0x3fu

/* The kernel destroys the context's queues with it. */
static NTSTATUS nf_context_teardown(struct nf_object *obj, bool owner_destroys)
{
	struct nf_context *ctx = (struct nf_context *)obj;

	return nf_device_destroy_object(ctx->device,
					DRM_IOCTL_NFENCE_CONTEXT_DESTROY,
					ctx->kernel_handle, owner_destroys);
}

static void nf_context_release(struct nf_object *obj)
{
	struct nf_context *ctx = (struct nf_context *)obj;

	pthread_mutex_destroy(&ctx->submit_lock);
	free(ctx);
}

static const struct nf_object_ops nf_context_ops = {
	.type = NF_HANDLE_CONTEXT,
	.release = nf_context_release,
	.teardown = nf_context_teardown,
};

struct nf_context *nf_context_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_context *)nf_handle_lookup(handle, NF_HANDLE_CONTEXT);
}

/*
 * The context of D3DKMTCreateContextVirtual and D3DKMTCreateContext, from
 * the members the two structs share; *@handle is written on success.
 */
static NTSTATUS nf_context_create(D3DKMT_HANDLE hDevice, UINT NodeOrdinal,
				  UINT EngineAffinity,
				  D3DDDI_CREATECONTEXTFLAGS Flags,
				  const VOID *pPrivateDriverData,
				  UINT PrivateDriverDataSize,
				  D3DKMT_HANDLE *handle)
{
	struct drm_nfence_context_create args;
	struct nf_context *ctx;
	struct nf_device *dev;
	NTSTATUS st;

	if (EngineAffinity > 1 || (Flags.Value & ~NF_CTX_KNOWN_FLAGS) ||
	    (PrivateDriverDataSize && !pPrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	if (Flags.Value & NF_CTX_NULL_RENDERING)
		return STATUS_NOT_SUPPORTED;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.engine = NodeOrdinal;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_CONTEXT_CREATE,
			     &args);
	if (!NT_SUCCESS(st))
		goto out;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		nf_device_destroy_object(dev, DRM_IOCTL_NFENCE_CONTEXT_DESTROY,
					 args.handle, false);
		st = STATUS_NO_MEMORY;
		goto out;
	}
	pthread_mutex_init(&ctx->submit_lock, NULL);
	nf_object_init(&ctx->base, &nf_context_ops, &dev->base);
	ctx->device = dev;
	ctx->kernel_handle = args.handle;
	ctx->engine = NodeOrdinal;
	if (Flags.Value & NF_CTX_DISABLE_GPU_TIMEOUT)
		ctx->queue_flags |= DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;

	/* Refused, it is destroyed (by D3DKMTDestroyDevice() if under way). */
	st = nf_handle_insert(&ctx->base, handle);
	/* On success the table holds the handle's reference. */
	nf_object_put(&ctx->base);
out:
	nf_device_put(dev);
	return st;
}

NTSTATUS D3DKMTCreateContextVirtual(D3DKMT_CREATECONTEXTVIRTUAL *pCreateContext)
{
	D3DKMT_CREATECONTEXTVIRTUAL *p = pCreateContext;
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!p)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_create(p->hDevice, p->NodeOrdinal, p->EngineAffinity,
			       p->Flags, p->pPrivateDriverData,
			       p->PrivateDriverDataSize, &handle);
	if (NT_SUCCESS(st))
		p->hContext = handle;
	return st;
}

/*
 * A WDDM 1.x context is the same context: nfence has no D3DKMTRender, so
 * there is no command buffer, allocation list or patch location list to
 * hand out (D3DKMTCreateDevice() hands out none either).
 */
NTSTATUS D3DKMTCreateContext(D3DKMT_CREATECONTEXT *pCreateContext)
{
	D3DKMT_CREATECONTEXT *p = pCreateContext;
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!p)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_create(p->hDevice, p->NodeOrdinal, p->EngineAffinity,
			       p->Flags, p->pPrivateDriverData,
			       p->PrivateDriverDataSize, &handle);
	if (!NT_SUCCESS(st))
		return st;
	p->hContext = handle;
	p->pCommandBuffer = NULL;
	p->CommandBufferSize = 0;
	p->pAllocationList = NULL;
	p->AllocationListSize = 0;
	p->pPatchLocationList = NULL;
	p->PatchLocationListSize = 0;
	p->CommandBuffer = 0;
	return STATUS_SUCCESS;
}

/*
 * A hardware context is the parent of hardware queues, which on nfence is
 * a context: the same context, with no context flag (no bit of
 * D3DDDI_CREATEHWCONTEXTFLAGS is known, so none is taken).
 */
NTSTATUS D3DKMTCreateHwContext(D3DKMT_CREATEHWCONTEXT *pCreateHwContext)
{
	D3DKMT_CREATEHWCONTEXT *p = pCreateHwContext;
	D3DDDI_CREATECONTEXTFLAGS none = { .Value = 0 };
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!p || p->Flags.Value)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_create(p->hDevice, p->NodeOrdinal, p->EngineAffinity,
			       none, p->pPrivateDriverData,
			       p->PrivateDriverDataSize, &handle);
	if (NT_SUCCESS(st))
		p->hHwContext = handle;
	return st;
}

NTSTATUS D3DKMTDestroyContext(const D3DKMT_DESTROYCONTEXT *pDestroyContext)
{
	if (!pDestroyContext)
		return STATUS_INVALID_PARAMETER;
	return nf_handle_close(pDestroyContext->hContext, NF_HANDLE_CONTEXT);
}

NTSTATUS D3DKMTDestroyHwContext(const D3DKMT_DESTROYHWCONTEXT *pDestroyHwContext)
{
	if (!pDestroyHwContext)
		return STATUS_INVALID_PARAMETER;
	return nf_handle_close(pDestroyHwContext->hHwContext,
			       NF_HANDLE_CONTEXT);
}

/*
 * DRM_IOCTL_NFENCE_CONTEXT_CONTROL @op on @hContext, with @priority (0 but
 * for SET_PRIORITY); *@out its answer.
 */
static NTSTATUS nf_context_control(D3DKMT_HANDLE hContext, uint32_t op,
				   int32_t priority,
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
	args.priority = priority;
	st = nf_ioctl_status(ctx->device->adapter->fd,
			     DRM_IOCTL_NFENCE_CONTEXT_CONTROL, &args);
	nf_object_put(&ctx->base);
	if (NT_SUCCESS(st) && out)
		*out = args;
	return st;
}

NTSTATUS NFenceSuspendContext(D3DKMT_HANDLE hContext)
{
	return nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_SUSPEND, 0,
				  NULL);
}

NTSTATUS NFenceResumeContext(D3DKMT_HANDLE hContext)
{
	return nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_RESUME, 0,
				  NULL);
}

NTSTATUS NFenceQueryContextState(D3DKMT_HANDLE hContext,
				 D3DKMT_NFENCE_CONTEXT_STATE *pState)
{
	struct drm_nfence_context_control args;
	NTSTATUS st;

	if (!pState)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_control(hContext, DRM_NFENCE_CONTEXT_OP_QUERY, 0,
				&args);
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

NTSTATUS D3DKMTSetContextSchedulingPriority(const D3DKMT_SETCONTEXTSCHEDULINGPRIORITY *pData)
{
	if (!pData)
		return STATUS_INVALID_PARAMETER;
	/* Windows' absolute priorities (a flag bit set) land out of range. */
	if (pData->Priority < DRM_NFENCE_CONTEXT_PRIORITY_MIN ||
	    pData->Priority > DRM_NFENCE_CONTEXT_PRIORITY_MAX)
		return STATUS_INVALID_PARAMETER;
	return nf_context_control(pData->hContext,
				  DRM_NFENCE_CONTEXT_OP_SET_PRIORITY,
				  pData->Priority, NULL);
}

NTSTATUS D3DKMTGetContextSchedulingPriority(D3DKMT_GETCONTEXTSCHEDULINGPRIORITY *pData)
{
	struct drm_nfence_context_control args;
	NTSTATUS st;

	if (!pData)
		return STATUS_INVALID_PARAMETER;
	st = nf_context_control(pData->hContext,
				DRM_NFENCE_CONTEXT_OP_GET_PRIORITY, 0, &args);
	if (NT_SUCCESS(st))
		pData->Priority = args.priority;
	return st;
}
