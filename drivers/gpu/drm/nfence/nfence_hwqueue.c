// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/capability.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pm_runtime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_context.h"
#include "nfence_cs.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_signal.h"
#include "nfence_hwqueue.h"

/**
 * DOC: hardware queues
 *
 * A hardware queue is what the CMP schedules on its context's engine: a
 * &struct nfence_cmp_queue with its progress fence, its native fence log
 * buffers (on an adapter with native fences; DOC: logging level) and the
 * submissions it holds (DOC: kernel-mode submission), or the ring of its
 * doorbell (DOC: doorbell objects).
 *
 * A queue holds a reference to its context; the context owns its queues
 * and a queue its doorbell in the file's registry, which closes a queue's
 * doorbell before the queue and a context's queues before the context
 * (DOC: object registry). Stopping the queues of a faulted context and
 * the context and queue tables of a file live here, above
 * nfence_context.c, which knows nothing of queues. A queue that is
 * destroyed hands what its stop dropped to &nfence_cmp_ops.entries_drop,
 * as the CMP does with what it drops: the entries are submissions, which
 * nfence_submit.c makes and frees.
 */

/* Entries of a new log buffer on @adapter: more while it is traced. */
static u32 nfence_hwqueue_log_entries(struct nfence_adapter *adapter)
{
	return READ_ONCE(adapter->logging_level) == DRM_NFENCE_LOGGING_LEVEL_ALL ?
	       NFENCE_LOG_ENTRIES_ALL : DRM_NFENCE_LOG_ENTRIES;
}

/* Make @q's log buffers and map them into @vm (undone by the two below). */
static int nfence_hwqueue_logs_init(struct nfence_hwqueue *q,
				    struct nfence_vm *vm, u32 num_entries)
{
	u32 kind;
	int ret;

	for (kind = 0; kind < ARRAY_SIZE(q->logs); kind++) {
		ret = nfence_log_init(&q->logs[kind], nfence_log_type(kind),
				      num_entries);
		if (!ret)
			ret = nfence_log_map(&q->logs[kind], vm);
		if (ret)
			return ret;
	}
	q->hw.logs = q->logs;
	return 0;
}

/* Unmap @q's log buffers (any of them mapped, or none). */
static void nfence_hwqueue_logs_unmap(struct nfence_hwqueue *q)
{
	u32 kind;

	for (kind = 0; kind < ARRAY_SIZE(q->logs); kind++)
		nfence_log_unmap(&q->logs[kind]);
}

/* Free @q's log buffers, unmapped. */
static void nfence_hwqueue_logs_fini(struct nfence_hwqueue *q)
{
	u32 kind;

	for (kind = 0; kind < ARRAY_SIZE(q->logs); kind++)
		nfence_log_fini(&q->logs[kind]);
}

static void nfence_hwqueue_release(struct kref *ref)
{
	struct nfence_hwqueue *q = container_of(ref, struct nfence_hwqueue, ref);

	nfence_fence_put(q->hw.progress);
	nfence_context_put(q->ctx);
	nfence_hwqueue_logs_fini(q);
	kfree(q);
}

/**
 * nfence_hwqueue_put - drop a reference to a queue
 * @q: the queue, or NULL
 */
void nfence_hwqueue_put(struct nfence_hwqueue *q)
{
	if (q)
		kref_put(&q->ref, nfence_hwqueue_release);
}

/**
 * nfence_hwqueue_cmp - the CMP that runs a queue
 * @q: the queue
 *
 * Return: the CMP of the queue's adapter.
 */
struct nfence_cmp *nfence_hwqueue_cmp(struct nfence_hwqueue *q)
{
	return &q->ctx->adapter->cmp;
}

/**
 * nfence_hwqueue_stop_locked - stop a queue for good
 * @q: the queue
 * @state: %NFENCE_QUEUE_FAULTED or %NFENCE_QUEUE_LOST (for a destroyed
 *	queue, the state it had)
 * @dropped: its pending submissions are moved here
 *
 * Called with &nfence_cmp.lock held.
 */
void nfence_hwqueue_stop_locked(struct nfence_hwqueue *q, u32 state,
				struct list_head *dropped)
{
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);

	lockdep_assert_held(&cmp->lock);
	nfence_cmp_queue_stop_locked(cmp, &q->hw, state, dropped);
	wake_up_all(&q->room);
}

/**
 * nfence_hwqueue_lookup - look up a queue of a device with a reference
 * @nfile: the file
 * @device: the device handle the queue must belong to
 * @handle: the queue handle
 *
 * Return: the queue (nfence_hwqueue_put()), or NULL if @handle names no
 * queue of @device.
 */
struct nfence_hwqueue *nfence_hwqueue_lookup(struct nfence_file *nfile,
					     u32 device, u32 handle)
{
	struct nfence_object *obj;

	obj = nfence_table_lookup_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_HWQUEUE),
					handle, device);
	return obj ? container_of(obj, struct nfence_hwqueue, obj) : NULL;
}

#define NFENCE_HWQUEUE_FLAGS \
	(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT | \
	 DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS | \
	 DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION | \
	 DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE)

/*
 * &nfence_object_ops.close, under sched_lock: take @q off the CMP and out
 * of the file for good; its doorbell is closed already.
 */
static void nfence_hwqueue_obj_close(struct nfence_registry *reg,
				     struct nfence_object *obj)
{
	struct nfence_hwqueue *q = container_of(obj, struct nfence_hwqueue, obj);
	struct nfence_file *nfile = nfence_registry_file(reg);
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	LIST_HEAD(dropped);

	lockdep_assert_held(&nfile->sched_lock);
	WARN_ON(q->hw.ring);
	nfence_cmp_lock(cmp);
	nfence_hwqueue_stop_locked(q, q->hw.state, &dropped);
	q->dead = true;
	nfence_cmp_queue_remove_locked(cmp, &q->hw);
	list_del(&q->ctx_link);
	nfence_cmp_unlock(cmp);

	/* The entries are submissions: the driver's ops free them. */
	cmp->ops->entries_drop(&dropped);
	nfence_fence_close_progress(nfile, q->progress_handle);
	/* Off the runlist: no engine writes them; their memory stays. */
	nfence_hwqueue_logs_unmap(q);
	/* The runlist's reference, then the table's. */
	nfence_hwqueue_put(q);
	nfence_hwqueue_put(q);
	/* Its progress fence went with its last reference, most likely. */
	nfence_fence_pools_trim(nfile);
}

/* &nfence_object_ops.get: a lookup's reference. */
static bool nfence_hwqueue_obj_get(struct nfence_object *obj)
{
	kref_get(&container_of(obj, struct nfence_hwqueue, obj)->ref);
	return true;
}

static const struct nfence_object_ops nfence_hwqueue_obj_ops = {
	.get = nfence_hwqueue_obj_get,
	.close = nfence_hwqueue_obj_close,
};

/* Stop @q of a faulted context; nobody may wait for work that never runs. */
static void nfence_hwqueue_fault_locked(struct nfence_hwqueue *q,
					struct list_head *dropped)
{
	nfence_hwqueue_stop_locked(q, NFENCE_QUEUE_FAULTED, dropped);
	nfence_fence_set_always_signaled(q->hw.progress);
}

/**
 * nfence_hwqueue_context_fault_locked - a GPU fault stops a context
 * @ctx: the context
 * @va: the faulting GPU VA (or the command's address)
 * @reason: &enum drm_nfence_fault_reason
 * @dropped: where the queues' dropped submissions go, for
 *	nfence_submissions_drop() once the CMP lock is released
 *
 * Records the fault (nfence_context_fault_locked()), then stops every
 * queue of the context. Called with &nfence_cmp.lock held.
 */
void nfence_hwqueue_context_fault_locked(struct nfence_context *ctx, u64 va,
					 u32 reason, struct list_head *dropped)
{
	struct nfence_hwqueue *q;

	lockdep_assert_held(&ctx->adapter->cmp.lock);
	nfence_context_fault_locked(ctx, va, reason);
	list_for_each_entry(q, &ctx->queues, ctx_link)
		nfence_hwqueue_fault_locked(q, dropped);
}

/*
 * A new queue of @ctx with its progress fence (a handle of @nfile, whose
 * mapping goes to @mapping) and, on an adapter with native fences, its log
 * buffers; not yet in any table or on a runlist.
 */
static struct nfence_hwqueue *
nfence_hwqueue_alloc(struct nfence_file *nfile, struct nfence_context *ctx,
		     u32 flags, struct drm_nfence_fence_mapping *mapping)
{
	struct nfence_hwqueue *q;
	struct nfence_fence *fence;
	int ret = 0;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);
	kref_init(&q->ref);
	q->flags = flags;
	nfence_cmp_queue_init(&q->hw);
	q->hw.engine = ctx->engine;
	q->hw.no_timeout = flags & DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;
	q->hw.ctx = &ctx->hw;
	q->hw.vm = &nfile->vm;
	init_waitqueue_head(&q->room);

	if (nfile->adapter->gpu.cfg.native_fence)
		ret = nfence_hwqueue_logs_init(q, &nfile->vm,
					       nfence_hwqueue_log_entries(nfile->adapter));
	if (!ret) {
		bool native = flags & DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE;

		fence = nfence_fence_create_progress(nfile, ctx->device, native,
						     &q->progress_handle,
						     mapping);
		ret = PTR_ERR_OR_ZERO(fence);
	}
	if (ret) {
		nfence_hwqueue_logs_unmap(q);
		nfence_hwqueue_logs_fini(q);
		kfree(q);
		return ERR_PTR(ret);
	}
	q->hw.progress = fence;
	return q;
}

/* What the adapter and the state of @ctx allow of a queue with @flags. */
static int nfence_hwqueue_create_allowed(struct nfence_adapter *adapter,
					 struct nfence_context *ctx, u32 flags)
{
	if (((flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION) &&
	     !(adapter->gpu.engines[ctx->engine].flags &
	       DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION)) ||
	    ((flags & DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE) &&
	     !adapter->gpu.cfg.native_fence))
		return -EOPNOTSUPP;
	/* The TDR never stops such a queue: it could keep its engine. */
	if ((flags & DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT) &&
	    !capable(CAP_SYS_NICE))
		return -EPERM;
	if (READ_ONCE(ctx->device->error) || READ_ONCE(ctx->faulted))
		return -EIO;
	return 0;
}

/*
 * The new queue @q, just put on its context's list: if its context faulted
 * or its device was lost since nfence_hwqueue_create_allowed() looked,
 * that stop walked the lists without it, so it stops here as it would
 * have there. The CMP lock, held, orders this look after such a stop or
 * the stop after @q is on the lists.
 */
static void nfence_hwqueue_stop_born_locked(struct nfence_hwqueue *q,
					    struct list_head *dropped)
{
	struct nfence_context *ctx = q->ctx;

	if (READ_ONCE(ctx->device->error)) {
		/* Its progress fence is the device's: AlwaysSignaled. */
		nfence_hwqueue_stop_locked(q, NFENCE_QUEUE_LOST, dropped);
	} else if (ctx->faulted) {
		nfence_hwqueue_fault_locked(q, dropped);
	}
}

/*
 * Give the new queue @q a handle and put it on the CMP and its context;
 * if the file has its limit of queues, free @q (and what it holds).
 */
static int nfence_hwqueue_publish_locked(struct nfence_file *nfile,
					 struct nfence_hwqueue *q)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_HWQUEUE);
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	LIST_HEAD(dropped);
	u32 handle;
	int ret;

	lockdep_assert_held(&nfile->sched_lock);
	nfence_table_lock(table);
	ret = nfence_table_insert_locked(table, &q->obj, &handle);
	nfence_table_unlock(table);
	if (ret) {
		nfence_fence_close_progress(nfile, q->progress_handle);
		nfence_hwqueue_logs_unmap(q);
		nfence_hwqueue_put(q);
		nfence_fence_pools_trim(nfile);
		return ret;
	}

	/* Destroy needs sched_lock, which we hold: nobody sees it half made. */
	kref_get(&q->ref);
	nfence_cmp_lock(cmp);
	nfence_cmp_queue_add_locked(cmp, &q->hw);
	list_add_tail(&q->ctx_link, &q->ctx->queues);
	nfence_hwqueue_stop_born_locked(q, &dropped);
	nfence_cmp_unlock(cmp);
	/* What a SUBMIT through the new handle pushed meanwhile. */
	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
	return 0;
}

/* The outputs of HWQUEUE_CREATE for the new queue @q. */
static void nfence_hwqueue_create_out(struct nfence_file *nfile,
				      struct nfence_hwqueue *q,
				      const struct drm_nfence_fence_mapping *mapping,
				      struct drm_nfence_hwqueue_create *args)
{
	/* Under sched_lock: no new logging level replaces the logs. */
	lockdep_assert_held(&nfile->sched_lock);
	args->handle = q->obj.handle;
	args->progress_fence = q->progress_handle;
	args->progress_fence_mapping = *mapping;
	args->wait_log_gpu_va = 0;
	args->signal_log_gpu_va = 0;
	args->log_entries = 0;
	if (q->hw.logs) {
		args->wait_log_gpu_va =
			nfence_log_gpu_va(&q->logs[NFENCE_LOG_WAITS]);
		args->signal_log_gpu_va =
			nfence_log_gpu_va(&q->logs[NFENCE_LOG_SIGNALS]);
		args->log_entries = q->logs[NFENCE_LOG_WAITS].buf->num_entries;
	}
}

/**
 * nfence_hwqueue_create_ioctl - DRM_IOCTL_NFENCE_HWQUEUE_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_hwqueue_create
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_hwqueue_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_hwqueue_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct drm_nfence_fence_mapping mapping;
	struct nfence_context *ctx;
	struct nfence_hwqueue *q;
	int ret, idx;

	if ((args->flags & ~NFENCE_HWQUEUE_FLAGS) || args->pad || args->pad2)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	mutex_lock(&nfile->sched_lock);
	ctx = nfence_context_lookup(nfile, args->device, args->context);
	if (!ctx) {
		ret = -ENOENT;
		goto out_unlock;
	}
	/* Input checks, then handles, then what the adapter or state allow. */
	ret = nfence_hwqueue_create_allowed(adapter, ctx, args->flags);
	if (ret)
		goto out_ctx;

	q = nfence_hwqueue_alloc(nfile, ctx, args->flags, &mapping);
	if (IS_ERR(q)) {
		ret = PTR_ERR(q);
		goto out_ctx;
	}
	q->ctx = ctx;	/* takes over the lookup's reference */
	q->obj.ops = &nfence_hwqueue_obj_ops;
	q->obj.owner = &ctx->obj;
	ret = nfence_hwqueue_publish_locked(nfile, q);
	if (!ret)
		nfence_hwqueue_create_out(nfile, q, &mapping, args);
	goto out_unlock;

out_ctx:
	nfence_context_put(ctx);
out_unlock:
	mutex_unlock(&nfile->sched_lock);
	drm_dev_exit(idx);
	return ret;
}

/**
 * nfence_hwqueue_destroy_ioctl - DRM_IOCTL_NFENCE_HWQUEUE_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_hwqueue_destroy
 * @file: the caller's file
 *
 * Return: 0, or -ENOENT if the handle names no queue of the device.
 */
int nfence_hwqueue_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct drm_nfence_hwqueue_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_object *obj;

	mutex_lock(&nfile->sched_lock);
	obj = nfence_table_remove_owned(nfence_file_table(nfile,
							  NFENCE_OBJ_HWQUEUE),
					args->handle, args->device);
	/* Its doorbell first (DOC: object registry). */
	if (obj)
		nfence_registry_close_locked(&nfile->objects, obj);
	mutex_unlock(&nfile->sched_lock);
	return obj ? 0 : -ENOENT;
}

/**
 * nfence_file_sched_init - set up the context and queue tables of a new file
 * @nfile: the file
 */
void nfence_file_sched_init(struct nfence_file *nfile)
{
	mutex_init(&nfile->sched_lock);
	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_CONTEXT),
			  DRM_NFENCE_MAX_CONTEXTS_PER_FILE);
	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_HWQUEUE),
			  DRM_NFENCE_MAX_HWQUEUES_PER_FILE);
}
