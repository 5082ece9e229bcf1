// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_cmp.h"
#include "nfence_context.h"
#include "nfence_cs.h"
#include "nfence_device.h"
#include "nfence_drv.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_wait.h"

/**
 * DOC: hardware queues and submission
 *
 * A hardware queue holds an ordered list of submissions that the CMP runs
 * on the queue's engine: command buffers (kernel-mode submission) and the
 * two legacy entries of WDDM 2.x monitored fences.
 *
 * A legacy wait is held by the CPU, not the GPU: when the CMP reaches it,
 * the driver queues a CPU waiter on each fence, which lowers MonitoredValue
 * so that the signal that releases it raises the native fence signaled
 * interrupt; the interrupt path runs the waiter, which kicks the CMP. A
 * legacy signal is run by a kernel worker through the update-from-CPU path
 * once the CMP reaches it. Each costs interrupts, a worker and CMP wakeups:
 * the round trip native GPU waits avoid.
 *
 * Ownership: a submission belongs to its queue's pending list. The CMP
 * frees it when it completes; a queue that stops (destroyed, faulted, lost)
 * hands its pending list to nfence_submissions_drop(), which first detaches
 * the CPU side (dequeues waiters, cancels the worker) and then frees.
 */

static void nfence_hwqueue_release(struct kref *ref)
{
	struct nfence_hwqueue *q = container_of(ref, struct nfence_hwqueue, ref);

	nfence_fence_put(q->progress);
	nfence_context_put(q->ctx);
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

static struct nfence_cmp *nfence_hwqueue_cmp(struct nfence_hwqueue *q)
{
	return &q->ctx->adapter->gpu.cmp;
}

/**
 * nfence_submission_free - free a submission no one else can reach
 * @sub: the submission
 */
void nfence_submission_free(struct nfence_submission *sub)
{
	u32 i;

	for (i = 0; i < sub->count; i++)
		nfence_fence_put(sub->fences[i].fence);
	kfree(sub);
}

/* Detach the CPU side of a legacy entry: after this no callback runs. */
static void nfence_submission_detach(struct nfence_submission *sub)
{
	u32 i;

	if (!sub->started)
		return;
	if (sub->kind == NFENCE_SUB_WAIT) {
		for (i = 0; i < sub->count; i++)
			nfence_waitlist_remove(&sub->fences[i].fence->waiters,
					       &sub->fences[i].waiter);
	} else if (sub->kind == NFENCE_SUB_SIGNAL) {
		cancel_work_sync(&sub->work);
	}
}

/**
 * nfence_submissions_drop - free submissions a stopped queue dropped
 * @dropped: list of &struct nfence_submission; emptied
 *
 * Must be called without &nfence_cmp.lock: it may wait for a worker.
 */
void nfence_submissions_drop(struct list_head *dropped)
{
	struct nfence_submission *sub, *next;

	list_for_each_entry_safe(sub, next, dropped, link) {
		list_del(&sub->link);
		nfence_submission_detach(sub);
		nfence_submission_free(sub);
	}
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
	struct nfence_cmp_engine *e = &cmp->engines[q->ctx->engine];

	lockdep_assert_held(&cmp->lock);
	list_splice_tail_init(&q->pending, dropped);
	q->num_pending = 0;
	/* A device lost is worse than a fault: it wins. */
	if (q->state != NFENCE_QUEUE_LOST)
		q->state = state;
	if (e->busy == q)
		e->busy = NULL;
	wake_up_all(&q->room);
}

/**
 * nfence_hwqueue_complete_locked - a submission has run
 * @q: the queue
 * @sub: its first submission
 *
 * Called by the CMP with &nfence_cmp.lock held.
 */
void nfence_hwqueue_complete_locked(struct nfence_hwqueue *q,
				    struct nfence_submission *sub)
{
	list_del(&sub->link);
	q->num_pending--;
	wake_up_all(&q->room);
	/* Waiters are done, but their waitlist may still hold its lock. */
	if (sub->kind == NFENCE_SUB_WAIT)
		nfence_submission_detach(sub);
	nfence_submission_free(sub);
}

static void nfence_sub_wait_done(struct nfence_waiter *waiter)
{
	struct nfence_sub_fence *f = container_of(waiter,
						  struct nfence_sub_fence,
						  waiter);
	struct nfence_submission *sub = f->sub;
	struct nfence_cmp *cmp = sub->cmp;
	struct nfence_adapter *adapter =
		container_of(cmp->gpu, struct nfence_adapter, gpu);

	/* Released without reaching the value (orphaned): let it go too. */
	if (nfence_fence_reached(f->fence, waiter->value))
		atomic64_inc(&adapter->irq_stats.woken);
	/* The CMP may free @sub once the count is zero: kick via @cmp. */
	if (atomic_dec_and_test(&sub->remaining))
		nfence_cmp_kick(cmp);
}

static void nfence_sub_signal_work(struct work_struct *work)
{
	struct nfence_submission *sub = container_of(work,
						     struct nfence_submission,
						     work);
	struct nfence_cmp *cmp = sub->cmp;
	u32 i;

	for (i = 0; i < sub->count; i++)
		nfence_fence_signal(sub->fences[i].fence,
				    sub->fences[i].value);
	/* The CMP may free @sub from here on. */
	atomic_set_release(&sub->remaining, 0);
	nfence_cmp_kick(cmp);
}

/**
 * nfence_submission_legacy_step - the CMP reached a legacy entry
 * @cmp: the CMP, whose lock is held
 * @sub: a WAIT or SIGNAL submission at the head of its queue
 *
 * The first call hands the entry to the CPU side (waiters or worker).
 *
 * Return: true once the CPU side is done and the queue may go on.
 */
bool nfence_submission_legacy_step(struct nfence_cmp *cmp,
				   struct nfence_submission *sub)
{
	struct nfence_adapter *adapter =
		container_of(cmp->gpu, struct nfence_adapter, gpu);
	u32 i;

	if (!sub->started) {
		sub->started = true;
		sub->cmp = cmp;
		if (sub->kind == NFENCE_SUB_WAIT) {
			atomic_set(&sub->remaining, sub->count);
			for (i = 0; i < sub->count; i++) {
				struct nfence_sub_fence *f = &sub->fences[i];

				f->waiter.value = f->value;
				f->waiter.done = nfence_sub_wait_done;
				nfence_waitlist_add(&f->fence->waiters,
						    &f->waiter);
			}
		} else {
			atomic_set(&sub->remaining, 1);
			queue_work(adapter->wait_wq, &sub->work);
		}
	}
	return atomic_read_acquire(&sub->remaining) == 0;
}

/* Look up a queue of @device with a reference. */
static struct nfence_hwqueue *nfence_hwqueue_lookup(struct nfence_file *nfile,
						    u32 device, u32 handle)
{
	struct nfence_hwqueue *q;

	xa_lock(&nfile->hwqueues);
	q = xa_load(&nfile->hwqueues, handle);
	if (q && q->ctx->device->handle == device)
		kref_get(&q->ref);
	else
		q = NULL;
	xa_unlock(&nfile->hwqueues);
	return q;
}

/* Append @sub to @q, waiting for room; the queue owns @sub on success. */
static int nfence_hwqueue_push(struct nfence_hwqueue *q,
			       struct nfence_submission *sub)
{
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	int ret;

	mutex_lock(&cmp->lock);
	for (;;) {
		if (q->dead) {
			ret = -ENOENT;
			break;
		}
		if (q->state == NFENCE_QUEUE_FAULTED ||
		    q->state == NFENCE_QUEUE_LOST ||
		    READ_ONCE(q->ctx->device->error)) {
			ret = -EIO;
			break;
		}
		if (sub->kind == NFENCE_SUB_COMMANDS &&
		    (sub->progress_value <= q->last_queued ||
		     !nfence_fence_value_allowed(q->progress,
						 sub->progress_value))) {
			ret = -EINVAL;
			break;
		}
		if (q->num_pending < DRM_NFENCE_MAX_QUEUED) {
			list_add_tail(&sub->link, &q->pending);
			q->num_pending++;
			if (sub->kind == NFENCE_SUB_COMMANDS)
				q->last_queued = sub->progress_value;
			if (q->state == NFENCE_QUEUE_IDLE)
				q->state = NFENCE_QUEUE_READY;
			ret = 0;
			break;
		}
		mutex_unlock(&cmp->lock);
		ret = wait_event_interruptible(q->room,
					       READ_ONCE(q->num_pending) <
					       DRM_NFENCE_MAX_QUEUED ||
					       READ_ONCE(q->dead) ||
					       READ_ONCE(q->state) ==
					       NFENCE_QUEUE_FAULTED ||
					       READ_ONCE(q->state) ==
					       NFENCE_QUEUE_LOST);
		mutex_lock(&cmp->lock);
		if (ret)
			break;
	}
	mutex_unlock(&cmp->lock);
	if (!ret)
		nfence_cmp_kick(cmp);
	return ret;
}

/**
 * nfence_submit_ioctl - DRM_IOCTL_NFENCE_SUBMIT
 * @drm: the DRM device
 * @data: &struct drm_nfence_submit
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct drm_nfence_submit *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_submission *sub;
	struct nfence_hwqueue *q;
	size_t bad_offset;
	u32 reason;
	void *buf;
	int ret;

	if (args->flags || !args->size ||
	    args->size > DRM_NFENCE_MAX_SUBMIT_SIZE ||
	    !IS_ALIGNED(args->size, 8) || !IS_ALIGNED(args->commands_gpu_va, 8))
		return -EINVAL;
	q = nfence_hwqueue_lookup(nfile, args->device, args->hwqueue);
	if (!q)
		return -ENOENT;

	/* Validate what is there now; the CMP checks again when it runs. */
	buf = kvmalloc(args->size, GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = nfence_vm_read(q->vm, args->commands_gpu_va, buf, args->size);
	if (!ret)
		ret = nfence_cs_validate(buf, args->size, &bad_offset, &reason);
	kvfree(buf);
	if (ret) {
		ret = -EINVAL;
		goto out;
	}

	sub = kzalloc(sizeof(*sub), GFP_KERNEL);
	if (!sub) {
		ret = -ENOMEM;
		goto out;
	}
	sub->kind = NFENCE_SUB_COMMANDS;
	sub->va = args->commands_gpu_va;
	sub->size = args->size;
	sub->progress_value = args->progress_fence_value;
	ret = nfence_hwqueue_push(q, sub);
	if (ret)
		nfence_submission_free(sub);
out:
	nfence_hwqueue_put(q);
	return ret;
}

static int nfence_submit_sync(struct drm_file *file,
			      struct drm_nfence_submit_sync *args, u32 kind)
{
	struct nfence_file *nfile = to_nfence_file(file);
	u32 __user *handles = u64_to_user_ptr(args->handles);
	u64 __user *values = u64_to_user_ptr(args->values);
	u32 forbidden = kind == NFENCE_SUB_WAIT ? DRM_NFENCE_FENCE_NO_WAIT :
						  DRM_NFENCE_FENCE_NO_SIGNAL;
	struct nfence_submission *sub;
	struct nfence_hwqueue *q;
	int ret = 0;
	u32 i;

	if (!args->count || args->count > DRM_NFENCE_MAX_WAIT_FENCES ||
	    args->flags)
		return -EINVAL;
	q = nfence_hwqueue_lookup(nfile, args->device, args->hwqueue);
	if (!q)
		return -ENOENT;

	sub = kzalloc(struct_size(sub, fences, args->count), GFP_KERNEL);
	if (!sub) {
		ret = -ENOMEM;
		goto out;
	}
	sub->kind = kind;
	sub->count = args->count;
	INIT_WORK(&sub->work, nfence_sub_signal_work);
	for (i = 0; i < args->count; i++) {
		struct nfence_sub_fence *f = &sub->fences[i];
		u32 handle, flags;

		f->sub = sub;
		RB_CLEAR_NODE(&f->waiter.node);
		if (get_user(handle, &handles[i]) ||
		    get_user(f->value, &values[i])) {
			ret = -EFAULT;
			break;
		}
		f->fence = nfence_fence_get(nfile, handle, args->device, &flags);
		if (!f->fence) {
			ret = -ENOENT;
			break;
		}
		if (flags & forbidden) {
			ret = -EACCES;
			break;
		}
		if (f->fence->type == DRM_NFENCE_FENCE_TYPE_INTRA_GPU ||
		    !nfence_fence_value_allowed(f->fence, f->value)) {
			ret = -EINVAL;
			break;
		}
	}
	if (!ret)
		ret = nfence_hwqueue_push(q, sub);
	if (ret)
		nfence_submission_free(sub);
out:
	nfence_hwqueue_put(q);
	return ret;
}

/**
 * nfence_submit_wait_ioctl - DRM_IOCTL_NFENCE_SUBMIT_WAIT
 * @drm: the DRM device
 * @data: &struct drm_nfence_submit_sync
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_submit_wait_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	return nfence_submit_sync(file, data, NFENCE_SUB_WAIT);
}

/**
 * nfence_submit_signal_ioctl - DRM_IOCTL_NFENCE_SUBMIT_SIGNAL
 * @drm: the DRM device
 * @data: &struct drm_nfence_submit_sync
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_submit_signal_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	return nfence_submit_sync(file, data, NFENCE_SUB_SIGNAL);
}

#define NFENCE_HWQUEUE_FLAGS \
	(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT | \
	 DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS | \
	 DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION | \
	 DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE)

/* Under sched_lock: take @q off the CMP and out of the file for good. */
static void nfence_hwqueue_close(struct nfence_file *nfile,
				 struct nfence_hwqueue *q)
{
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	struct nfence_cmp_engine *e = &cmp->engines[q->ctx->engine];
	LIST_HEAD(dropped);

	lockdep_assert_held(&nfile->sched_lock);
	mutex_lock(&cmp->lock);
	nfence_hwqueue_stop_locked(q, q->state, &dropped);
	q->dead = true;
	list_del(&q->engine_link);
	e->num_queues--;
	list_del(&q->ctx_link);
	mutex_unlock(&cmp->lock);

	nfence_submissions_drop(&dropped);
	nfence_fence_close_progress(nfile, q->progress_handle);
	/* The runlist's reference, then the table's. */
	nfence_hwqueue_put(q);
	nfence_hwqueue_put(q);
}

/**
 * nfence_context_close_hwqueues - destroy every queue of a context
 * @ctx: the context, being destroyed (its file's sched_lock is held)
 */
void nfence_context_close_hwqueues(struct nfence_context *ctx)
{
	struct nfence_file *nfile = ctx->device->file;
	struct nfence_hwqueue *q;
	unsigned long handle;

	xa_for_each(&nfile->hwqueues, handle, q) {
		if (q->ctx != ctx)
			continue;
		xa_lock(&nfile->hwqueues);
		__xa_erase(&nfile->hwqueues, handle);
		nfile->num_hwqueues--;
		xa_unlock(&nfile->hwqueues);
		nfence_hwqueue_close(nfile, q);
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
	struct nfence_cmp *cmp = &adapter->gpu.cmp;
	struct drm_nfence_fence_mapping mapping;
	struct nfence_context *ctx;
	struct nfence_hwqueue *q;
	struct nfence_fence *fence;
	u32 handle, fence_handle;
	int ret;

	if ((args->flags & ~NFENCE_HWQUEUE_FLAGS) || args->pad)
		return -EINVAL;

	mutex_lock(&nfile->sched_lock);
	ctx = nfence_context_lookup(nfile, args->device, args->context);
	if (!ctx) {
		ret = -ENOENT;
		goto out_unlock;
	}
	/* Input checks, then handles, then what the adapter or state allow. */
	if ((args->flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION) ||
	    ((args->flags & DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE) &&
	     !adapter->gpu.cfg.native_fence)) {
		ret = -EOPNOTSUPP;
		goto out_ctx;
	}
	if (READ_ONCE(ctx->device->error) || READ_ONCE(ctx->faulted)) {
		ret = -EIO;
		goto out_ctx;
	}

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q) {
		ret = -ENOMEM;
		goto out_ctx;
	}
	kref_init(&q->ref);
	q->flags = args->flags;
	q->vm = &nfile->vm;
	INIT_LIST_HEAD(&q->pending);
	init_waitqueue_head(&q->room);
	q->state = NFENCE_QUEUE_IDLE;

	fence = nfence_fence_create_progress(nfile, ctx->device, &fence_handle,
					     &mapping);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		kfree(q);
		goto out_ctx;
	}
	q->progress = fence;
	q->progress_handle = fence_handle;
	q->ctx = ctx;	/* takes over the lookup's reference */

	xa_lock(&nfile->hwqueues);
	if (nfile->num_hwqueues >= DRM_NFENCE_MAX_HWQUEUES_PER_FILE) {
		ret = -ENOSPC;
	} else {
		nfile->num_hwqueues++;
		ret = __xa_alloc_cyclic(&nfile->hwqueues, &handle, q,
					xa_limit_32b, &nfile->next_hwqueue,
					GFP_KERNEL);
		if (ret < 0)
			nfile->num_hwqueues--;
		else
			ret = 0;
	}
	xa_unlock(&nfile->hwqueues);
	if (ret) {
		nfence_fence_close_progress(nfile, fence_handle);
		nfence_hwqueue_put(q);
		goto out_unlock;
	}
	q->handle = handle;

	/* Destroy needs sched_lock, which we hold: nobody sees it half made. */
	kref_get(&q->ref);
	mutex_lock(&cmp->lock);
	q->id = ++cmp->next_id;
	list_add_tail(&q->engine_link, &cmp->engines[ctx->engine].runlist);
	cmp->engines[ctx->engine].num_queues++;
	list_add_tail(&q->ctx_link, &ctx->queues);
	mutex_unlock(&cmp->lock);

	args->handle = handle;
	args->progress_fence = fence_handle;
	args->progress_fence_mapping = mapping;
	mutex_unlock(&nfile->sched_lock);
	return 0;

out_ctx:
	nfence_context_put(ctx);
out_unlock:
	mutex_unlock(&nfile->sched_lock);
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
	struct nfence_hwqueue *q;

	mutex_lock(&nfile->sched_lock);
	xa_lock(&nfile->hwqueues);
	q = xa_load(&nfile->hwqueues, args->handle);
	if (q && q->ctx->device->handle == args->device) {
		__xa_erase(&nfile->hwqueues, args->handle);
		nfile->num_hwqueues--;
	} else {
		q = NULL;
	}
	xa_unlock(&nfile->hwqueues);
	if (q)
		nfence_hwqueue_close(nfile, q);
	mutex_unlock(&nfile->sched_lock);
	return q ? 0 : -ENOENT;
}

/**
 * nfence_hwqueue_print - describe a queue for debugfs
 * @q: the queue (&nfence_cmp.lock held)
 * @p: where to print
 */
void nfence_hwqueue_print(struct nfence_hwqueue *q, struct drm_printer *p)
{
	static const char * const names[] = {
		[NFENCE_QUEUE_IDLE] = "idle",
		[NFENCE_QUEUE_READY] = "ready",
		[NFENCE_QUEUE_RUNNING] = "running",
		[NFENCE_QUEUE_WAIT_FENCE] = "wait-fence",
		[NFENCE_QUEUE_WAIT_CPU] = "wait-cpu",
		[NFENCE_QUEUE_FAULTED] = "faulted",
		[NFENCE_QUEUE_LOST] = "lost",
	};
	const char *state = names[q->state];

	if (q->ctx->suspended && q->state != NFENCE_QUEUE_FAULTED &&
	    q->state != NFENCE_QUEUE_LOST)
		state = "suspended";
	drm_printf(p, "queue %u pid %d device %u context %u engine %u ",
		   q->id, q->ctx->device->file->tgid, q->ctx->device->handle,
		   q->ctx->handle, q->ctx->engine);
	drm_printf(p, "state %s pending %u progress %llu\n", state,
		   q->num_pending, nfence_fence_read(q->progress));
}

/**
 * nfence_file_hwqueues_init - set up the queue table of a new file
 * @nfile: the file
 */
void nfence_file_hwqueues_init(struct nfence_file *nfile)
{
	xa_init_flags(&nfile->hwqueues, XA_FLAGS_ALLOC1);
	nfile->next_hwqueue = 1;
}

/**
 * nfence_file_hwqueues_fini - tear down the queue table of a closing file
 * @nfile: the file; its contexts, and so its queues, are gone already
 */
void nfence_file_hwqueues_fini(struct nfence_file *nfile)
{
	WARN_ON(!xa_empty(&nfile->hwqueues));
	xa_destroy(&nfile->hwqueues);
}
