// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_context.h"
#include "nfence_device.h"

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
 *
 * %DRM_IOCTL_NFENCE_CONTEXT_DESTROY removes the handle and has the file's
 * registry close the context's queues and their doorbells first (DOC:
 * object registry). A fault is recorded here (nfence_context_fault_locked():
 * the first one of the context, and of its device); stopping the context's
 * queues is nfence_hwqueue.c's, which knows them: this file knows nothing
 * of queues.
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

/* &nfence_object_ops.get: a lookup's reference. */
static bool nfence_context_obj_get(struct nfence_object *obj)
{
	kref_get(&container_of(obj, struct nfence_context, obj)->ref);
	return true;
}

/*
 * &nfence_object_ops.close, under the file's sched_lock: its queues are
 * closed already; drop the table's reference.
 */
static void nfence_context_obj_close(struct nfence_registry *reg,
				     struct nfence_object *obj)
{
	struct nfence_context *ctx = container_of(obj, struct nfence_context,
						  obj);

	lockdep_assert_held(reg->lock);
	ctx->dead = true;
	nfence_context_put(ctx);
}

static const struct nfence_object_ops nfence_context_obj_ops = {
	.get = nfence_context_obj_get,
	.close = nfence_context_obj_close,
};

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
	struct nfence_object *obj;

	obj = nfence_table_lookup_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_CONTEXT),
					handle, device);
	return obj ? container_of(obj, struct nfence_context, obj) : NULL;
}

/* A new context of @wdev on @engine; takes over the reference on @wdev. */
static struct nfence_context *
nfence_context_new(struct nfence_adapter *adapter, struct nfence_device *wdev,
		   u32 engine)
{
	struct nfence_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		nfence_device_put(wdev);
		return NULL;
	}
	kref_init(&ctx->ref);
	ctx->device = wdev;
	ctx->adapter = adapter;
	ctx->engine = engine;
	INIT_LIST_HEAD(&ctx->queues);
	ctx->obj.ops = &nfence_context_obj_ops;
	ctx->obj.owner = &wdev->obj;
	return ctx;
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
	struct nfence_table *table;
	u32 handle;
	int ret, idx;

	if (args->flags || args->engine >= adapter->gpu.cfg.num_engines)
		return -EINVAL;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	/* Unplugged first: the unplug puts every device in error too. */
	if (!drm_dev_enter(drm, &idx)) {
		nfence_device_put(wdev);
		return -ENODEV;
	}
	if (READ_ONCE(wdev->error)) {
		drm_dev_exit(idx);
		nfence_device_put(wdev);
		return -EIO;
	}

	ctx = nfence_context_new(adapter, wdev, args->engine);
	if (!ctx) {
		drm_dev_exit(idx);
		return -ENOMEM;
	}

	table = nfence_file_table(nfile, NFENCE_OBJ_CONTEXT);
	mutex_lock(&nfile->sched_lock);
	nfence_table_lock(table);
	if (wdev->dead)
		ret = -ENOENT;
	else
		ret = nfence_table_insert_locked(table, &ctx->obj, &handle);
	if (!ret)
		args->handle = handle;
	nfence_table_unlock(table);
	mutex_unlock(&nfile->sched_lock);
	drm_dev_exit(idx);
	if (ret)
		nfence_context_put(ctx);
	return ret;
}

/*
 * Carry out CONTEXT_CONTROL's checked @args->op on @ctx, its CMP's lock
 * held, and fill in the state it reports after it.
 */
static void nfence_context_control_locked(struct nfence_context *ctx,
					  struct drm_nfence_context_control *args)
{
	u32 state = 0;

	switch (args->op) {
	case DRM_NFENCE_CONTEXT_OP_SUSPEND:
		ctx->hw.suspended = true;
		break;
	case DRM_NFENCE_CONTEXT_OP_RESUME:
		ctx->hw.suspended = false;
		break;
	case DRM_NFENCE_CONTEXT_OP_SET_PRIORITY:
		/* It applies from its queues' next turns on. */
		ctx->hw.priority = args->priority;
		break;
	case DRM_NFENCE_CONTEXT_OP_GET_PRIORITY:
		args->priority = ctx->hw.priority;
		break;
	}
	if (ctx->hw.suspended)
		state |= DRM_NFENCE_CONTEXT_STATE_SUSPENDED;
	if (ctx->faulted)
		state |= DRM_NFENCE_CONTEXT_STATE_FAULTED;
	if (READ_ONCE(ctx->device->error))
		state |= DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST;
	args->state = state;
	args->fault_va = ctx->fault_va;
	args->fault_reason = ctx->fault_reason;
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

	if (args->op > DRM_NFENCE_CONTEXT_OP_GET_PRIORITY)
		return -EINVAL;
	if (args->op == DRM_NFENCE_CONTEXT_OP_SET_PRIORITY ?
	    args->priority < DRM_NFENCE_CONTEXT_PRIORITY_MIN ||
	    args->priority > DRM_NFENCE_CONTEXT_PRIORITY_MAX :
	    args->priority)
		return -EINVAL;
	ctx = nfence_context_lookup(nfile, args->device, args->context);
	if (!ctx)
		return -ENOENT;

	nfence_cmp_lock(cmp);
	nfence_context_control_locked(ctx, args);
	nfence_cmp_unlock(cmp);

	if (args->op == DRM_NFENCE_CONTEXT_OP_RESUME)
		nfence_cmp_kick(cmp);
	nfence_context_put(ctx);
	return 0;
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
	struct nfence_object *obj;

	mutex_lock(&nfile->sched_lock);
	obj = nfence_table_remove_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_CONTEXT),
					args->handle, args->device);
	/* Its queues and their doorbells first (DOC: object registry). */
	if (obj)
		nfence_registry_close_locked(&nfile->objects, obj);
	mutex_unlock(&nfile->sched_lock);
	return obj ? 0 : -ENOENT;
}

/**
 * nfence_context_fault_locked - record a GPU fault of a context
 * @ctx: the context
 * @va: the faulting GPU VA (or the command's address)
 * @reason: &enum drm_nfence_fault_reason
 *
 * The context keeps its first fault, and its device the first fault of
 * any of its contexts. Stopping the context's queues is
 * nfence_hwqueue_context_fault_locked()'s, which calls this first.
 *
 * Called with &nfence_cmp.lock held.
 */
void nfence_context_fault_locked(struct nfence_context *ctx, u64 va,
				 u32 reason)
{
	lockdep_assert_held(&ctx->adapter->cmp.lock);
	if (!ctx->faulted) {
		ctx->faulted = true;
		ctx->fault_va = va;
		ctx->fault_reason = reason;
	}
	if (!ctx->device->fault_reason) {
		ctx->device->fault_va = va;
		ctx->device->fault_reason = reason;
		ctx->device->fault_context = ctx->obj.handle;
	}
}
