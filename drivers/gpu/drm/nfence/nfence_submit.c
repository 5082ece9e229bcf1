// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pm_runtime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_context.h"
#include "nfence_cs.h"
#include "nfence_device.h"
#include "nfence_doorbell.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_signal.h"
#include "nfence_submit.h"

/**
 * DOC: kernel-mode submission
 *
 * A hardware queue (DOC: hardware queues) holds an ordered list of
 * submissions that the CMP runs on the queue's engine: command buffers
 * (%DRM_IOCTL_NFENCE_SUBMIT) and the two legacy entries of WDDM 2.x
 * monitored fences (%DRM_IOCTL_NFENCE_SUBMIT_WAIT and
 * %DRM_IOCTL_NFENCE_SUBMIT_SIGNAL).
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
 *
 * Destroying a queue or its context drops its pending submissions. Closing
 * the file waits for them first (nfence_file_drain()), as Windows idles a
 * device before it destroys it at a normal process exit: the work that
 * the process queued before it exited or closed its file runs, with the
 * fence signals it makes. The exit wait has one deadline per file, for its
 * kernel-mode queues and its doorbells (DOC: doorbell objects) together:
 * the adapter's TDR timeout, and NFENCE_FILE_DRAIN_MS (2 s) in any case,
 * because the work may wait for a fence that nobody signals; what has not
 * run by then is dropped as at a destroy. A queue is done when it has
 * nothing pending (&nfence_cmp_queue.num_pending, under &nfence_cmp.lock,
 * counts the entry being run too) or when it is held: stopped (its context
 * faulted or its device lost; a killed process's devices are put in error
 * before its file is torn down, so nothing of it is waited for) or its
 * context suspended (CONTEXT_CONTROL: nobody can resume it once its file
 * is closing). Nothing is waited for once the adapter is unplugged. The
 * queues keep running meanwhile: work that waits for a fence that another
 * queue of the file, or another process, signals before the deadline
 * completes.
 */

static struct nfence_submission *to_nfence_submission(struct nfence_cmp_entry *e)
{
	return container_of(e, struct nfence_submission, entry);
}

/*
 * NFENCE_FILE_DRAIN_MS: the bound of a closing file's exit wait (all its
 * queues and doorbells together) without a TDR timeout
 */
#define NFENCE_FILE_DRAIN_MS	2000

/* How often the exit wait looks for an unplug, which wakes nothing. */
#define NFENCE_FILE_DRAIN_SLICE_MS	20

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
	if (sub->entry.kind == NFENCE_SUB_WAIT) {
		for (i = 0; i < sub->count; i++)
			nfence_waitlist_remove(&sub->fences[i].fence->waiters,
					       &sub->fences[i].waiter);
	} else if (sub->entry.kind == NFENCE_SUB_SIGNAL) {
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

	list_for_each_entry_safe(sub, next, dropped, entry.link) {
		list_del(&sub->entry.link);
		nfence_submission_detach(sub);
		nfence_submission_free(sub);
	}
}

/**
 * nfence_submit_entry_done - a submission has run and left its queue
 * @hw: the queue
 * @entry: the submission's entry
 *
 * &nfence_cmp_ops.entry_done: frees the submission.
 */
void nfence_submit_entry_done(struct nfence_cmp_queue *hw,
			      struct nfence_cmp_entry *entry)
{
	struct nfence_submission *sub = to_nfence_submission(entry);

	wake_up_all(&to_nfence_hwqueue(hw)->room);
	/* Waiters are done, but their waitlist may still hold its lock. */
	if (sub->entry.kind == NFENCE_SUB_WAIT)
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

	/* Released without reaching the value (orphaned): let it go too. */
	if (waiter->reached || nfence_fence_reached(f->fence, waiter->value))
		atomic64_inc(&cmp->gpu->irq_stats.woken);
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
 * nfence_submit_entry_step - the CMP reached a legacy submission
 * @cmp: the CMP
 * @entry: the WAIT or SIGNAL submission's entry, at the head of its queue
 *
 * &nfence_cmp_ops.entry_step. The first call hands the submission to the
 * CPU side (waiters or worker).
 *
 * Return: true once the CPU side is done and the queue may go on.
 */
bool nfence_submit_entry_step(struct nfence_cmp *cmp,
			      struct nfence_cmp_entry *entry)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);
	struct nfence_submission *sub = to_nfence_submission(entry);
	u32 i;

	if (!sub->started) {
		sub->started = true;
		sub->cmp = cmp;
		if (sub->entry.kind == NFENCE_SUB_WAIT) {
			atomic_set(&sub->remaining, sub->count);
			for (i = 0; i < sub->count; i++) {
				struct nfence_sub_fence *f = &sub->fences[i];

				f->waiter.value = f->value;
				f->waiter.done = nfence_sub_wait_done;
				nfence_fence_add_waiter(f->fence, &f->waiter);
			}
		} else {
			atomic_set(&sub->remaining, 1);
			queue_work(adapter->wait_wq, &sub->work);
		}
	}
	return atomic_read_acquire(&sub->remaining) == 0;
}

/*
 * Append @sub to @q if it has room (-EAGAIN if not); the queue owns @sub on
 * success.
 */
static int nfence_hwqueue_try_push_locked(struct nfence_cmp *cmp,
					  struct nfence_hwqueue *q,
					  struct nfence_submission *sub)
{
	lockdep_assert_held(&cmp->lock);
	if (q->dead)
		return -ENOENT;
	/* A user-mode queue takes work from its doorbell only. */
	if (q->flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION)
		return -EINVAL;
	if (q->hw.state == NFENCE_QUEUE_FAULTED ||
	    q->hw.state == NFENCE_QUEUE_LOST ||
	    READ_ONCE(q->ctx->device->error))
		return -EIO;
	if (sub->entry.kind == NFENCE_SUB_COMMANDS &&
	    (sub->entry.progress_value <= q->last_queued ||
	     !nfence_fence_value_allowed(q->hw.progress,
					 sub->entry.progress_value)))
		return -EINVAL;
	if (q->hw.num_pending >= DRM_NFENCE_MAX_QUEUED)
		return -EAGAIN;
	nfence_cmp_queue_push_locked(cmp, &q->hw, &sub->entry);
	if (sub->entry.kind == NFENCE_SUB_COMMANDS)
		q->last_queued = sub->entry.progress_value;
	/* Work for the engine brings it back from F1. */
	nfence_cmp_engine_f0_locked(cmp, q->hw.engine);
	return 0;
}

/*
 * Append @sub to @q, waiting for room; the queue owns @sub on success. The
 * GPU is entered (drm_dev_enter()) only while the CMP lock is held, never
 * across the wait, so that an unplug does not wait for a full queue. A
 * submission wakes the adapter from D3 first (runtime PM; see nfence_pm.c).
 */
static int nfence_hwqueue_push(struct nfence_hwqueue *q,
			       struct nfence_submission *sub)
{
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	struct drm_device *drm = &q->ctx->adapter->drm;
	int ret, idx;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = pm_runtime_resume_and_get(drm->dev);
	drm_dev_exit(idx);
	if (ret)
		return ret;
	for (;;) {
		if (!drm_dev_enter(drm, &idx)) {
			ret = -ENODEV;
			break;
		}
		nfence_cmp_lock(cmp);
		ret = nfence_hwqueue_try_push_locked(cmp, q, sub);
		nfence_cmp_unlock(cmp);
		drm_dev_exit(idx);
		if (ret != -EAGAIN)
			break;
		ret = wait_event_interruptible(q->room,
					       READ_ONCE(q->hw.num_pending) <
					       DRM_NFENCE_MAX_QUEUED ||
					       READ_ONCE(q->dead) ||
					       READ_ONCE(q->hw.state) ==
					       NFENCE_QUEUE_FAULTED ||
					       READ_ONCE(q->hw.state) ==
					       NFENCE_QUEUE_LOST);
		if (ret)
			break;
	}
	if (!ret)
		nfence_cmp_kick(cmp);
	pm_runtime_mark_last_busy(drm->dev);
	pm_runtime_put_autosuspend(drm->dev);
	return ret;
}

/*
 * Validate the commands at @va in @q's address space as they are now (the
 * CMP checks again when it runs them): -EINVAL if they cannot be read or
 * are not valid.
 */
static int nfence_submit_validate(struct nfence_hwqueue *q, u64 va, u32 size)
{
	size_t bad_offset;
	u32 reason;
	void *buf;
	int ret;

	buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	ret = nfence_vm_read(q->hw.vm, va, buf, size);
	if (!ret)
		ret = nfence_cs_validate(buf, size, &bad_offset, &reason);
	kvfree(buf);
	return ret ? -EINVAL : 0;
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
	int ret;

	if (args->flags || !args->size ||
	    args->size > DRM_NFENCE_MAX_SUBMIT_SIZE ||
	    !IS_ALIGNED(args->size, 8) || !IS_ALIGNED(args->commands_gpu_va, 8))
		return -EINVAL;
	q = nfence_hwqueue_lookup(nfile, args->device, args->hwqueue);
	if (!q)
		return -ENOENT;

	ret = nfence_submit_validate(q, args->commands_gpu_va, args->size);
	if (ret)
		goto out;

	sub = kzalloc(sizeof(*sub), GFP_KERNEL_ACCOUNT);
	if (!sub) {
		ret = -ENOMEM;
		goto out;
	}
	sub->entry.kind = NFENCE_SUB_COMMANDS;
	sub->entry.va = args->commands_gpu_va;
	sub->entry.size = args->size;
	sub->entry.progress_value = args->progress_fence_value;
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

	sub = kzalloc(struct_size(sub, fences, args->count),
		      GFP_KERNEL_ACCOUNT);
	if (!sub) {
		ret = -ENOMEM;
		goto out;
	}
	sub->entry.kind = kind;
	sub->count = args->count;
	INIT_WORK(&sub->work, nfence_sub_signal_work);
	for (i = 0; i < args->count; i++) {
		struct nfence_sub_fence *f = &sub->fences[i];
		u32 handle;

		f->sub = sub;
		RB_CLEAR_NODE(&f->waiter.node);
		if (get_user(handle, &handles[i]) ||
		    get_user(f->value, &values[i])) {
			ret = -EFAULT;
			break;
		}
		f->fence = nfence_fence_arg_get(nfile, args->device, handle,
						forbidden, f->value);
		if (IS_ERR(f->fence)) {
			ret = PTR_ERR(f->fence);
			f->fence = NULL;
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

/* Whether kernel-mode queue @q has run what it held, or is held itself. */
static bool nfence_hwqueue_drained(struct nfence_hwqueue *q)
{
	struct nfence_cmp *cmp = nfence_hwqueue_cmp(q);
	bool drained;

	nfence_cmp_lock(cmp);
	drained = !q->hw.num_pending || nfence_cmp_queue_held(&q->hw);
	nfence_cmp_unlock(cmp);
	return drained;
}

/*
 * Wait until kernel-mode queue @q is drained, @deadline (jiffies) passes
 * or the adapter is unplugged. Its submissions completing and its stop
 * wake &nfence_hwqueue.room; the lock-free look only ends a sleep, the
 * decision is nfence_hwqueue_drained()'s.
 */
static void nfence_hwqueue_drain(struct nfence_hwqueue *q,
				 unsigned long deadline)
{
	struct drm_device *drm = &q->ctx->adapter->drm;
	long left;

	while (!nfence_hwqueue_drained(q) && !drm_dev_is_unplugged(drm)) {
		left = (long)(deadline - jiffies);
		if (left <= 0)
			break;
		wait_event_timeout(q->room,
				   !READ_ONCE(q->hw.num_pending) ||
				   READ_ONCE(q->hw.state) ==
				   NFENCE_QUEUE_FAULTED ||
				   READ_ONCE(q->hw.state) == NFENCE_QUEUE_LOST,
				   min_t(long, left,
					 msecs_to_jiffies(NFENCE_FILE_DRAIN_SLICE_MS)));
	}
}

/**
 * nfence_file_drain - the exit wait of a closing file
 * @nfile: the file, in postclose (nothing else uses its tables)
 *
 * The work its queues and doorbells hold runs first, within the exit
 * wait's deadline (see DOC: kernel-mode submission); the registry
 * closes them after.
 */
void nfence_file_drain(struct nfence_file *nfile)
{
	struct nfence_adapter *adapter = nfile->adapter;
	u32 tdr = adapter->gpu.cfg.tdr_timeout_ms;
	u32 ms = tdr ? min(tdr, NFENCE_FILE_DRAIN_MS) : NFENCE_FILE_DRAIN_MS;
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);
	struct nfence_object *obj;
	struct nfence_hwqueue *q;
	unsigned long handle;

	/* After an unplug nothing is waited for (see DOC: unplug). */
	if (drm_dev_is_unplugged(&adapter->drm))
		return;
	nfence_file_doorbells_drain(nfile, deadline);
	nfence_table_for_each(nfence_file_table(nfile, NFENCE_OBJ_HWQUEUE),
			      handle, obj) {
		q = container_of(obj, struct nfence_hwqueue, obj);
		if (!(q->flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION))
			nfence_hwqueue_drain(q, deadline);
	}
}
