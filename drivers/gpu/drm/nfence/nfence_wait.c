// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_async.h"
#include "nfence_compat.h"
#include "nfence_fence.h"
#include "nfence_signal.h"
#include "nfence_trace.h"
#include "nfence_wait.h"

/**
 * DOC: CPU waits
 *
 * A wait call becomes a &struct nfence_wait with one waiter per fence, each
 * queued on its fence's &struct nfence_waitlist (which keeps MonitoredValue
 * right; see nfence_waitlist.c). A blocking wait sleeps interruptibly until
 * the wait completes, its absolute CLOCK_MONOTONIC deadline passes, or a
 * signal arrives (-ERESTARTSYS: the restarted call has the same deadline),
 * then dequeues whatever is still queued. An asynchronous wait stays on its
 * file's &nfence_file.waits list (DOC: bounded asynchronous lists) and
 * signals its eventfd when it completes; the list's work then dequeues and
 * frees it. Closing the file cancels the asynchronous waits it still has.
 *
 * A blocking wait lives on its ioctl's stack (its entries too when it
 * waits for one fence, the common case, which then allocates nothing):
 * everything that can reach it lets go of it before the ioctl returns. The
 * file's list of blocked waits does under &nfence_file.async_lock. Its
 * completion wakes the sleeping task itself (wake_up_process()): a wait
 * has one sleeper and needs no wait queue. The task is still in the ioctl
 * then: a done callback wakes it before it marks its entry finished, an
 * unplug under &nfence_file.async_lock, and before it returns the task
 * takes that lock and, for each entry, sees it finished or takes its
 * waitlist's lock (below). A
 * waitlist reaches an entry until the entry's done callback returns, which
 * runs under the waitlist's lock and whose last act is to mark the entry
 * finished (release); a woken waiter that sees its entry finished
 * (acquire) has nothing to dequeue, and does not take the waitlist's lock,
 * which its waker may still hold while it wakes the others (a fan-out)
 * and looks at the waiters left. An entry not finished is dequeued under
 * the lock, which waits for a done callback in progress. An asynchronous
 * wait is allocated and counted by a kref: its file's list and its
 * completion work outlive the ioctl.
 *
 * One fence named more than once in a wait gets one waiter: the entry with
 * the highest value for WAIT_ALL (reaching it reaches the others), the
 * lowest for WAIT_ANY (the first of them reached), the earliest of equal
 * ones (nfence_wait_merge()). So a waitlist holds at most one waiter per
 * wait, and what one signal releases under its lock is bounded by the
 * waits, not by the handles repeated in them.
 *
 * A fence whose last local handle and last fd are gone (a cross-adapter
 * fence's, on every adapter) can never be signaled again: its waiters are
 * released and their waits fail with -ENOENT. Signals from the CPU
 * (%DRM_IOCTL_NFENCE_FENCE_SIGNAL) are nfence_signal.c's.
 */

struct nfence_wait;

struct nfence_wait_entry {
	struct nfence_waiter waiter;
	struct nfence_fence *fence;
	struct nfence_wait *wait;
	/* set last by the done callback: its waitlist lets go of the entry */
	bool finished;
	/* another entry of the same fence is queued for it: never queued */
	bool merged;
};

struct nfence_wait {
	/*
	 * Asynchronous waits only (nfence_wait_put()): the ioctl's, the file
	 * list's and the work's references. A blocking wait, on its ioctl's
	 * stack, is never put.
	 */
	struct kref ref;
	struct nfence_file *file;
	struct list_head link;
	/* blocking waits: the task asleep in the ioctl, woken at completion */
	struct task_struct *task;
	atomic_t remaining;
	atomic_t completed;
	/* 1 while it counts in &nfence_file.waits (asynchronous waits) */
	atomic_t counted;
	struct eventfd_ctx *eventfd;
	/* on &nfence_file.waits' ready list once completed (asynchronous) */
	struct llist_node ready;
	/* the entry whose waiter completed it, written before it completes */
	u32 first;
	u32 count;
	/* @one, or an array of @count of its own */
	struct nfence_wait_entry *entries;
	struct nfence_wait_entry one;
};

/* Let go of what @wait holds: its fences, its eventfd, its entries. */
static void nfence_wait_fini(struct nfence_wait *wait)
{
	u32 i;

	for (i = 0; i < wait->count; i++)
		nfence_fence_put(wait->entries[i].fence);
	if (wait->eventfd)
		eventfd_ctx_put(wait->eventfd);
	if (wait->entries != &wait->one)
		kfree(wait->entries);
}

static void nfence_wait_release(struct kref *ref)
{
	struct nfence_wait *wait = container_of(ref, struct nfence_wait, ref);

	nfence_wait_fini(wait);
	kfree(wait);
}

static void nfence_wait_put(struct nfence_wait *wait)
{
	kref_put(&wait->ref, nfence_wait_release);
}

static bool nfence_wait_completed(struct nfence_wait *wait)
{
	return atomic_read(&wait->completed);
}

/* Trace the end of @wait, with its first fence and value. */
static void nfence_wait_trace_end(struct nfence_wait *wait, int result)
{
	const struct nfence_wait_entry *e = &wait->entries[0];

	trace_nfence_wait_end(wait->file->adapter->gpu.index, e->fence->id,
			      e->waiter.value, result);
}

/* What a completed wait returns: 0, or the -errno it completed with. */
static int nfence_wait_result(struct nfence_wait *wait)
{
	int completed = atomic_read(&wait->completed);

	return completed > 0 ? 0 : completed;
}

/* @wait no longer counts against its file's limit; once only. */
static void nfence_wait_uncount(struct nfence_wait *wait)
{
	if (atomic_xchg(&wait->counted, 0))
		nfence_async_list_uncount(&wait->file->waits);
}

/*
 * Called under the lock of the waitlist that completes the wait, or by an
 * unplug; only the first completion counts, so a satisfied wait keeps its
 * result. @completed holds the result itself (1, or the -errno), so that
 * whoever sees the wait completed sees why.
 */
static void nfence_wait_complete(struct nfence_wait *wait, int error)
{
	if (atomic_cmpxchg(&wait->completed, 0, error ?: 1))
		return;
	if (wait->eventfd) {
		/* A blocking wait's end is traced by its ioctl. */
		nfence_wait_trace_end(wait, error);
		/* Whoever the eventfd wakes may wait again at once. */
		nfence_wait_uncount(wait);
		nfence_eventfd_signal(wait->eventfd);
		/* The work's reference. */
		kref_get(&wait->ref);
		nfence_async_list_ready(&wait->file->waits, &wait->ready);
	} else {
		wake_up_process(wait->task);
	}
}

static void nfence_wait_entry_done(struct nfence_waiter *waiter)
{
	struct nfence_wait_entry *e = container_of(waiter,
						   struct nfence_wait_entry,
						   waiter);
	struct nfence_wait *wait = e->wait;

	if (!waiter->reached &&
	    !nfence_fence_reached(e->fence, waiter->value)) {
		/* Released without reaching the value: orphaned fence. */
		nfence_wait_complete(wait, -ENOENT);
	} else {
		atomic64_inc(&wait->file->adapter->gpu.irq_stats.woken);
		if (atomic_dec_and_test(&wait->remaining)) {
			WRITE_ONCE(wait->first, e - wait->entries);
			/* Its atomic_cmpxchg() orders the write first. */
			nfence_wait_complete(wait, 0);
		}
	}
	/* The last touch of @wait: its owner may free it once it sees this. */
	smp_store_release(&e->finished, true);
}

/*
 * Dequeue every waiter still queued; safe to call more than once. An entry
 * its done callback has finished with is out of its waitlist already.
 */
static void nfence_wait_dequeue(struct nfence_wait *wait)
{
	u32 i;

	for (i = 0; i < wait->count; i++) {
		struct nfence_wait_entry *e = &wait->entries[i];

		/* Pairs with the done callback's release: see DOC. */
		if (!smp_load_acquire(&e->finished))
			nfence_waitlist_remove(&e->fence->waiters, &e->waiter);
	}
}

/* End the completed asynchronous waits of a file, in the order completed. */
static void nfence_wait_work(struct work_struct *work)
{
	struct nfence_file *nfile = container_of(work, struct nfence_file,
						 waits.work);
	struct nfence_wait *wait, *next;
	struct llist_node *list;
	bool owner;

	list = nfence_async_list_take(&nfile->waits);
	llist_for_each_entry_safe(wait, next, list, ready) {
		/* A close may have taken it off (and dequeued it) first. */
		mutex_lock(&nfile->async_lock);
		owner = nfence_async_list_unlink_locked(&nfile->waits,
							&wait->link);
		mutex_unlock(&nfile->async_lock);
		if (owner) {
			nfence_wait_dequeue(wait);
			nfence_wait_put(wait);
		}
		nfence_wait_put(wait);
	}
}

/*
 * Index of the first fence that reached its value, for a satisfied wait.
 * None may have it any more: a GPU can write a lower value to a
 * CurrentValue (a WRITE64) after the signal that satisfied the wait. The
 * answer is then the entry whose waiter completed the wait (0 when it was
 * satisfied before any waiter was queued), never the count.
 */
static u32 nfence_wait_first_reached(struct nfence_wait *wait)
{
	u32 i;

	for (i = 0; i < wait->count; i++) {
		struct nfence_wait_entry *e = &wait->entries[i];

		if (nfence_fence_reached(e->fence, e->waiter.value))
			return i;
	}
	/* Seen completed: pairs with the completion's atomic_cmpxchg(). */
	smp_rmb();
	return READ_ONCE(wait->first);
}

static bool nfence_wait_satisfied(struct nfence_wait *wait, bool any)
{
	u32 i, reached = 0;

	for (i = 0; i < wait->count; i++) {
		struct nfence_wait_entry *e = &wait->entries[i];

		if (nfence_fence_reached(e->fence, e->waiter.value))
			reached++;
	}
	return any ? reached > 0 : reached == wait->count;
}

/*
 * Give each fence of @wait one waiter (DOC: CPU waits): mark the other
 * entries of a fence merged, and finished, so that nothing queues or
 * dequeues them. Returns the entries left to queue.
 */
static u32 nfence_wait_merge(struct nfence_wait *wait, bool any)
{
	u32 i, j, queued = 0;

	for (i = 0; i < wait->count; i++) {
		struct nfence_wait_entry *e = &wait->entries[i], *loser = e;

		for (j = 0; j < i; j++) {
			struct nfence_wait_entry *p = &wait->entries[j];

			if (p->merged || p->fence != e->fence)
				continue;
			if (any ? e->waiter.value < p->waiter.value :
				  e->waiter.value > p->waiter.value)
				loser = p;
			break;
		}
		if (j == i) {
			queued++;
			continue;
		}
		loser->merged = true;
		loser->finished = true;
	}
	return queued;
}

/*
 * Set up @wait, zeroed by the caller, for the FENCE_WAIT @args: copy in
 * handles and values and take the fences, all checked before use. On an
 * error the caller still calls nfence_wait_fini() (or puts the wait).
 */
static int nfence_wait_prepare(struct nfence_wait *wait,
			       struct nfence_file *nfile,
			       const struct drm_nfence_fence_wait *args)
{
	u32 __user *handles = u64_to_user_ptr(args->handles);
	u64 __user *values = u64_to_user_ptr(args->values);
	bool any = args->flags & DRM_NFENCE_WAIT_ANY;
	u32 count = args->count;
	int ret = 0;
	u32 i;

	kref_init(&wait->ref);
	wait->file = nfile;
	INIT_LIST_HEAD(&wait->link);
	if (count == 1) {
		wait->entries = &wait->one;
	} else {
		wait->entries = kcalloc(count, sizeof(*wait->entries),
					GFP_KERNEL_ACCOUNT);
		if (!wait->entries)
			return -ENOMEM;
	}
	/* Only now: nfence_wait_fini() puts what the entries hold. */
	wait->count = count;

	for (i = 0; i < count; i++) {
		struct nfence_wait_entry *e = &wait->entries[i];
		u32 handle;
		u64 value;

		if (get_user(handle, &handles[i]) || get_user(value, &values[i])) {
			ret = -EFAULT;
			break;
		}
		e->wait = wait;
		e->waiter.value = value;
		e->waiter.done = nfence_wait_entry_done;
		RB_CLEAR_NODE(&e->waiter.node);
		e->fence = nfence_fence_arg_get(nfile, args->device, handle,
						DRM_NFENCE_FENCE_NO_WAIT, value);
		if (IS_ERR(e->fence)) {
			ret = PTR_ERR(e->fence);
			e->fence = NULL;
			break;
		}
	}
	if (!ret) {
		u32 queued = nfence_wait_merge(wait, any);

		atomic_set(&wait->remaining, any ? 1 : queued);
	}
	return ret;
}

static int nfence_wait_async(struct nfence_file *nfile,
			     struct nfence_wait *wait, int fd)
{
	struct eventfd_ctx *ev;
	int ret, idx;
	u32 i;

	ev = eventfd_ctx_fdget(fd);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	wait->eventfd = ev;

	/* On the list before an unplug looks at it, or not at all. */
	if (!drm_dev_enter(&nfile->adapter->drm, &idx))
		return -ENODEV;
	mutex_lock(&nfile->async_lock);
	ret = nfence_async_list_add_locked(&nfile->waits, &wait->link);
	if (ret) {
		mutex_unlock(&nfile->async_lock);
		drm_dev_exit(idx);
		return ret;
	}
	/* The list's reference. */
	kref_get(&wait->ref);
	atomic_set(&wait->counted, 1);
	/*
	 * Queue the waiters with the lock held: the wait may complete as soon
	 * as one is queued, and its work item must not dequeue (and free)
	 * it before every waiter that will be queued is.
	 */
	for (i = 0; i < wait->count && !nfence_wait_completed(wait); i++)
		if (!wait->entries[i].merged)
			nfence_fence_add_waiter(wait->entries[i].fence,
						&wait->entries[i].waiter);
	mutex_unlock(&nfile->async_lock);
	drm_dev_exit(idx);
	return 0;
}

/*
 * Put a blocking wait on its file's list, where an unplug finds it, and
 * queue its waiters. -ENODEV if the adapter is already unplugged: a wait
 * that got past that check is on the list before the unplug walks it.
 */
static int nfence_wait_block_start(struct nfence_wait *wait)
{
	struct nfence_file *nfile = wait->file;
	int idx;
	u32 i;

	if (!drm_dev_enter(&nfile->adapter->drm, &idx))
		return -ENODEV;
	mutex_lock(&nfile->async_lock);
	list_add_tail(&wait->link, &nfile->blocked_waits);
	mutex_unlock(&nfile->async_lock);
	drm_dev_exit(idx);

	for (i = 0; i < wait->count && !nfence_wait_completed(wait); i++)
		if (!wait->entries[i].merged)
			nfence_fence_add_waiter(wait->entries[i].fence,
						&wait->entries[i].waiter);
	return 0;
}

static void nfence_wait_block_end(struct nfence_wait *wait)
{
	struct nfence_file *nfile = wait->file;

	nfence_wait_dequeue(wait);
	mutex_lock(&nfile->async_lock);
	list_del_init(&wait->link);
	mutex_unlock(&nfile->async_lock);
}

static int nfence_wait_block(struct nfence_wait *wait, s64 timeout_ns)
{
	ktime_t deadline = ns_to_ktime(timeout_ns);
	int ret;

	/* A deadline already past polls: the caller found it unsatisfied. */
	if (timeout_ns != DRM_NFENCE_TIMEOUT_INFINITE &&
	    timeout_ns <= (s64)ktime_get_ns())
		return -ETIME;

	wait->task = current;
	ret = nfence_wait_block_start(wait);
	if (ret)
		return ret;

	for (;;) {
		/*
		 * A full barrier before the look at the result; the
		 * completion's atomic_cmpxchg() is one before its wake-up:
		 * either this sees the wait completed or the wake-up sees
		 * the task asleep.
		 */
		set_current_state(TASK_INTERRUPTIBLE);
		if (nfence_wait_completed(wait))
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (timeout_ns == DRM_NFENCE_TIMEOUT_INFINITE) {
			schedule();
		} else if (!schedule_hrtimeout_range(&deadline,
						     current->timer_slack_ns,
						     HRTIMER_MODE_ABS)) {
			ret = -ETIME;
			break;
		}
	}
	__set_current_state(TASK_RUNNING);

	nfence_wait_block_end(wait);
	if (nfence_wait_completed(wait))
		return nfence_wait_result(wait);
	return ret;
}

/* An asynchronous wait satisfied already: signal the eventfd @fd now. */
static int nfence_wait_async_satisfied(struct nfence_wait *wait, int fd)
{
	int ret;

	wait->eventfd = eventfd_ctx_fdget(fd);
	if (IS_ERR(wait->eventfd)) {
		ret = PTR_ERR(wait->eventfd);
		wait->eventfd = NULL;
		return ret;
	}
	nfence_eventfd_signal(wait->eventfd);
	nfence_wait_trace_end(wait, 0);
	return 0;
}

#define NFENCE_WAIT_FLAGS (DRM_NFENCE_WAIT_ANY | DRM_NFENCE_WAIT_ASYNC)

/**
 * nfence_fence_wait_ioctl - DRM_IOCTL_NFENCE_FENCE_WAIT
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_wait
 * @file: the caller's file
 *
 * Return: 0 when satisfied (or queued, for an asynchronous wait), -ETIME,
 * -ERESTARTSYS, or -errno for bad input as the uapi documents.
 */
int nfence_fence_wait_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_nfence_fence_wait *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	bool async = args->flags & DRM_NFENCE_WAIT_ASYNC;
	bool any = args->flags & DRM_NFENCE_WAIT_ANY;
	struct nfence_wait onstack = {}, *wait = &onstack;
	int ret;

	if (args->pad || (args->flags & ~NFENCE_WAIT_FLAGS) || !args->count ||
	    args->count > DRM_NFENCE_MAX_WAIT_FENCES ||
	    (async ? args->timeout_ns != 0 : args->eventfd != 0))
		return -EINVAL;

	/* A blocking wait lives on the stack (DOC: CPU waits). */
	if (async) {
		wait = kzalloc(sizeof(*wait), GFP_KERNEL_ACCOUNT);
		if (!wait)
			return -ENOMEM;
	}
	ret = nfence_wait_prepare(wait, nfile, args);
	if (ret)
		goto out;
	trace_nfence_wait_begin(nfile->adapter->gpu.index,
				wait->entries[0].fence->id,
				wait->entries[0].waiter.value, wait->count, async);

	if (nfence_wait_satisfied(wait, any)) {
		/* Already there: no waiter, no MonitoredValue change. */
		if (async)
			ret = nfence_wait_async_satisfied(wait, args->eventfd);
	} else if (async) {
		ret = nfence_wait_async(nfile, wait, args->eventfd);
	} else {
		ret = nfence_wait_block(wait, args->timeout_ns);
	}

	if (!ret && !async)
		args->first_signaled = any ? nfence_wait_first_reached(wait) : 0;
	if (!async)
		nfence_wait_trace_end(wait, ret);
out:
	if (wait == &onstack)
		nfence_wait_fini(wait);
	else
		nfence_wait_put(wait);
	return ret;
}

/**
 * nfence_file_waits_init - set up the asynchronous waits of a new file
 * @nfile: the file
 */
void nfence_file_waits_init(struct nfence_file *nfile)
{
	mutex_init(&nfile->async_lock);
	INIT_LIST_HEAD(&nfile->blocked_waits);
	nfence_async_list_init(&nfile->waits, &nfile->async_lock,
			       DRM_NFENCE_MAX_ASYNC_WAITS,
			       nfile->adapter->wait_wq, nfence_wait_work);
}

/**
 * nfence_file_waits_abort - end every wait of a file with an error
 * @nfile: the file, whose adapter is being unplugged
 * @error: what the waits return (-ENODEV)
 *
 * Blocking waits wake and return @error; asynchronous waits signal their
 * eventfd and go, as if completed. A wait already completed keeps its
 * result. The caller makes sure no new wait starts (drm_dev_unplug()).
 */
void nfence_file_waits_abort(struct nfence_file *nfile, int error)
{
	struct nfence_wait *wait;

	mutex_lock(&nfile->async_lock);
	list_for_each_entry(wait, &nfile->blocked_waits, link)
		nfence_wait_complete(wait, error);
	list_for_each_entry(wait, &nfile->waits.entries, link)
		nfence_wait_complete(wait, error);
	mutex_unlock(&nfile->async_lock);
}

/**
 * nfence_file_waits_cancel - cancel the asynchronous waits of a closing file
 * @nfile: the file
 *
 * Each pending wait goes without signaling its event. &nfence_file.async_lock
 * stays for the file's syncobj bindings and signals, which its exit wait
 * may still decide, until nfence_file_waits_fini().
 */
void nfence_file_waits_cancel(struct nfence_file *nfile)
{
	struct nfence_wait *wait;

	/*
	 * Take each wait off the list under the lock, as the completion work
	 * does: whoever unlinks a wait owns its dequeue and the list's
	 * reference.
	 */
	mutex_lock(&nfile->async_lock);
	while ((wait = list_first_entry_or_null(&nfile->waits.entries,
						struct nfence_wait, link))) {
		nfence_async_list_unlink_locked(&nfile->waits, &wait->link);
		nfence_wait_uncount(wait);
		mutex_unlock(&nfile->async_lock);
		nfence_wait_dequeue(wait);
		nfence_wait_put(wait);
		mutex_lock(&nfile->async_lock);
	}
	mutex_unlock(&nfile->async_lock);
	/* The completion work may still look at this file's list. */
	nfence_async_list_drain(&nfile->waits);
}

/**
 * nfence_file_waits_fini - the end of a closing file's asynchronous state
 * @nfile: the file, after nfence_file_waits_cancel() and
 *	nfence_file_bindings_fini()
 */
void nfence_file_waits_fini(struct nfence_file *nfile)
{
	mutex_destroy(&nfile->async_lock);
}
