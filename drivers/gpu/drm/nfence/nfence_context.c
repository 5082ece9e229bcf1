// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_context.h"
#include "nfence_device.h"
#include "nfence_drv.h"
#include "nfence_fence.h"
#include "nfence_signal.h"
#include "nfence_hwqueue.h"

/**
 * DOC: contexts
 *
 * A context belongs to one device and runs on one engine; the CMP schedules
 * its hardware queues. Creating and destroying contexts and queues is
 * serialized per file by &nfence_file.sched_lock; their scheduling state is
 * under &nfence_cmp.lock.
 *
 * Errors have two scopes, as on Windows:
 *
 * - A GPU page fault or an invalid command faults the *context*: its queues
 *   stop and drop their work, their progress fences become AlwaysSignaled
 *   so nobody waits for work that will never run, and submitting to them
 *   fails with -EIO. The rest of the device runs on.
 * - A hang (TDR) or a device-lost event puts the whole *device* in error:
 *   every fence it created becomes AlwaysSignaled, every queue of every
 *   context stops, and submissions fail with -EIO. Other devices, and other
 *   adapters, run on.
 */

static void nfence_context_release(struct kref *ref)
{
	struct nfence_context *ctx = container_of(ref, struct nfence_context,
						  ref);

	nfence_device_put(ctx->device);
	kfree(ctx);
}

/**
 * nfence_context_put - drop a reference to a context
 * @ctx: the context, or NULL
 */
void nfence_context_put(struct nfence_context *ctx)
{
	if (ctx)
		kref_put(&ctx->ref, nfence_context_release);
}

/**
 * nfence_context_lookup - find a context of a device and take a reference
 * @nfile: the file
 * @device: the device handle the context must belong to
 * @handle: the context handle
 *
 * Return: the context, or NULL if @handle names no context of @device.
 */
struct nfence_context *nfence_context_lookup(struct nfence_file *nfile,
					     u32 device, u32 handle)
{
	struct nfence_context *ctx;

	xa_lock(&nfile->contexts.xa);
	ctx = xa_load(&nfile->contexts.xa, handle);
	if (ctx && ctx->device->handle == device)
		kref_get(&ctx->ref);
	else
		ctx = NULL;
	xa_unlock(&nfile->contexts.xa);
	return ctx;
}

/* Under sched_lock: take @ctx out of the table and destroy its queues. */
static void nfence_context_close(struct nfence_file *nfile,
				 struct nfence_context *ctx)
{
	lockdep_assert_held(&nfile->sched_lock);
	ctx->dead = true;
	nfence_context_close_hwqueues(ctx);
	nfence_context_put(ctx);
}

/**
 * nfence_context_fault_locked - a GPU fault stops a context
 * @ctx: the context
 * @va: the faulting GPU VA (or the command's address)
 * @reason: &enum drm_nfence_fault_reason
 * @dropped: where the queues' dropped submissions go, for
 *	nfence_submissions_drop() once the CMP lock is released
 *
 * Called with &nfence_cmp.lock held.
 */
void nfence_context_fault_locked(struct nfence_context *ctx, u64 va,
				 u32 reason, struct list_head *dropped)
{
	struct nfence_hwqueue *q;

	lockdep_assert_held(&ctx->adapter->cmp.lock);
	if (!ctx->faulted) {
		ctx->faulted = true;
		ctx->fault_va = va;
		ctx->fault_reason = reason;
	}
	list_for_each_entry(q, &ctx->queues, ctx_link) {
		nfence_hwqueue_stop_locked(q, NFENCE_QUEUE_FAULTED, dropped);
		/* Nobody may wait for work that will never run. */
		nfence_fence_set_always_signaled(q->hw.progress);
	}
}

/**
 * nfence_device_close_contexts - destroy the contexts of a destroyed device
 * @wdev: the device
 */
void nfence_device_close_contexts(struct nfence_device *wdev)
{
	struct nfence_file *nfile = wdev->file;
	struct nfence_context *ctx;
	unsigned long handle;

	mutex_lock(&nfile->sched_lock);
	xa_for_each(&nfile->contexts.xa, handle, ctx) {
		if (ctx->device != wdev)
			continue;
		xa_lock(&nfile->contexts.xa);
		nfence_table_erase_locked(&nfile->contexts, handle);
		xa_unlock(&nfile->contexts.xa);
		nfence_context_close(nfile, ctx);
	}
	mutex_unlock(&nfile->sched_lock);
}

/**
 * nfence_file_contexts_init - set up the context table of a new file
 * @nfile: the file
 */
void nfence_file_contexts_init(struct nfence_file *nfile)
{
	mutex_init(&nfile->sched_lock);
	nfence_table_init(&nfile->contexts, DRM_NFENCE_MAX_CONTEXTS_PER_FILE);
}

/**
 * nfence_file_contexts_fini - destroy every context a closing file holds
 * @nfile: the file
 */
void nfence_file_contexts_fini(struct nfence_file *nfile)
{
	struct nfence_context *ctx;
	unsigned long handle;

	mutex_lock(&nfile->sched_lock);
	xa_for_each(&nfile->contexts.xa, handle, ctx) {
		xa_erase(&nfile->contexts.xa, handle);
		nfence_context_close(nfile, ctx);
	}
	nfile->contexts.count = 0;
	mutex_unlock(&nfile->sched_lock);
	xa_destroy(&nfile->contexts.xa);
}

/**
 * nfence_context_create_ioctl - DRM_IOCTL_NFENCE_CONTEXT_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_context_create
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_context_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_context_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_context *ctx;
	struct nfence_device *wdev;
	u32 handle;
	int ret;

	if (args->flags || args->engine >= adapter->gpu.cfg.num_engines)
		return -EINVAL;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	if (READ_ONCE(wdev->error)) {
		nfence_device_put(wdev);
		return -EIO;
	}

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		nfence_device_put(wdev);
		return -ENOMEM;
	}
	kref_init(&ctx->ref);
	ctx->device = wdev;
	ctx->adapter = adapter;
	ctx->engine = args->engine;
	INIT_LIST_HEAD(&ctx->queues);

	mutex_lock(&nfile->sched_lock);
	xa_lock(&nfile->contexts.xa);
	if (wdev->dead)
		ret = -ENOENT;
	else
		ret = nfence_table_insert_locked(&nfile->contexts, ctx,
						 &handle);
	if (!ret) {
		ctx->handle = handle;
		args->handle = handle;
	}
	xa_unlock(&nfile->contexts.xa);
	mutex_unlock(&nfile->sched_lock);
	if (ret)
		nfence_context_put(ctx);
	return ret;
}

/**
 * nfence_context_destroy_ioctl - DRM_IOCTL_NFENCE_CONTEXT_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_context_destroy
 * @file: the caller's file
 *
 * Return: 0, or -ENOENT if the handle names no context of the device.
 */
int nfence_context_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct drm_nfence_context_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_context *ctx;

	mutex_lock(&nfile->sched_lock);
	xa_lock(&nfile->contexts.xa);
	ctx = xa_load(&nfile->contexts.xa, args->handle);
	if (ctx && ctx->device->handle == args->device)
		nfence_table_erase_locked(&nfile->contexts, args->handle);
	else
		ctx = NULL;
	xa_unlock(&nfile->contexts.xa);
	if (ctx)
		nfence_context_close(nfile, ctx);
	mutex_unlock(&nfile->sched_lock);
	return ctx ? 0 : -ENOENT;
}

/**
 * nfence_context_control_ioctl - DRM_IOCTL_NFENCE_CONTEXT_CONTROL
 * @drm: the DRM device
 * @data: &struct drm_nfence_context_control
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_context_control_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_context_control *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_context *ctx;
	u32 state = 0;

	if (args->pad || args->op > DRM_NFENCE_CONTEXT_OP_RESUME)
		return -EINVAL;
	ctx = nfence_context_lookup(nfile, args->device, args->context);
	if (!ctx)
		return -ENOENT;

	mutex_lock(&cmp->lock);
	if (args->op == DRM_NFENCE_CONTEXT_OP_SUSPEND)
		ctx->hw.suspended = true;
	else if (args->op == DRM_NFENCE_CONTEXT_OP_RESUME)
		ctx->hw.suspended = false;
	if (ctx->hw.suspended)
		state |= DRM_NFENCE_CONTEXT_STATE_SUSPENDED;
	if (ctx->faulted)
		state |= DRM_NFENCE_CONTEXT_STATE_FAULTED;
	if (READ_ONCE(ctx->device->error))
		state |= DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST;
	args->state = state;
	args->fault_va = ctx->fault_va;
	args->fault_reason = ctx->fault_reason;
	mutex_unlock(&cmp->lock);

	if (args->op == DRM_NFENCE_CONTEXT_OP_RESUME)
		nfence_cmp_kick(cmp);
	nfence_context_put(ctx);
	return 0;
}
