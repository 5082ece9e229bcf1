// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/list_sort.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sync_file.h>
#include <linux/workqueue.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_async.h"
#include "nfence_cmp.h"
#include "nfence_compat.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_signal.h"
#include "nfence_syncobj.h"

/**
 * DOC: the syncobj bridge
 *
 * DRM_IOCTL_NFENCE_SYNCOBJ_BIND binds (native fence, value) to (drm_syncobj,
 * point). A native fence is one that user space signals (from the CPU, or
 * from a queue it fills), so by the rule of "Indefinite DMA Fences"
 * (Documentation/driver-api/dma-buf.rst) it never becomes a dma_fence that
 * anyone waits on. The bridge goes the other way: a binding is a CPU waiter
 * on the fence's &struct nfence_waitlist, like one of an asynchronous wait
 * (so MonitoredValue and the interrupt rules hold), and only when it is
 * released does the driver make a dma_fence, already signaled, and add it
 * at the point with drm_syncobj_add_point(). Until then the point does not
 * exist; consumers wait for it with DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
 * or WAIT_AVAILABLE, as for a Vulkan timeline semaphore's host signal.
 *
 * A binding's end is decided once, by the first of: the waiter's release
 * (under the waitlist lock: the value was reached, or the fence went
 * AlwaysSignaled, or lost its last handle), an unplug
 * (nfence_file_bindings_abort()) or the file's close, after its exit wait
 * ran the file's queued work (nfence_file_bindings_fini()). Whoever
 * decides pushes the binding on its file's &nfence_file.bindings ready
 * list (DOC: bounded asynchronous lists: no lock inside the waitlist
 * lock), whose work runs on the adapter's wait_wq. The work takes
 * bindings in the order they were decided, dequeues the waiter if it
 * still is queued, and attaches the point: the fence is signaled, with an
 * error (dma_fence_set_error() before dma_fence_signal()) unless the value
 * was reached. Every binding therefore ends with its point attached exactly
 * once; &struct drm_nfence_syncobj_bind lists the errors. The attached
 * fence and its dma_fence_chain node are allocated at bind time, so the
 * work cannot fail.
 *
 * Lifetimes: a pending binding holds a reference on the native fence (not a
 * handle: destroying the last handle and fd, a cross-adapter fence's on
 * every adapter, orphans the fence and ends the binding with -ENOENT) and
 * one on the syncobj (drm_syncobj_find()), both dropped by the work after
 * the point is attached. The attached fence belongs to
 * the syncobj's timeline, which may outlive the file and be exported to
 * other processes and drivers; its &dma_fence_ops live in this module, so
 * each such fence holds a reference on the module until it is released.
 *
 * The other direction, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, is what the kernel
 * allows: a native fence waits on a dma_fence (of a syncobj point or a
 * sync_file). The ioctl adds a callback to the dma_fence; the callback,
 * which runs in the dma_fence's signalling path (any context, under its
 * lock), only pushes the signal on its file's &nfence_file.dma_signals
 * ready list, whose work then signals the native fence through the CPU
 * signal path, nfence_fence_signal(), and kicks the CMP. A pending signal
 * holds the dma_fence and the native fence. An unplug drops it without
 * signaling, and so does the file's close once its exit wait has run the
 * file's queued work (a signal that work waits for still releases it):
 * both remove the callback; if dma_fence_remove_callback() finds it gone,
 * the callback has run (it runs under the fence's lock, as the removal
 * does) and the work owns the signal: a flush waits for it.
 */

/**
 * struct nfence_bridge_fence - the dma_fence a binding attaches
 *
 * Signaled, with or without an error, before anyone but its creator sees
 * it. Lifetime: dma_fence reference counting; holds a reference on the
 * module (its ops), dropped by its release.
 */
struct nfence_bridge_fence {
	/** @base: the dma_fence */
	struct dma_fence base;
	/** @lock: the fence's lock (dma_fence_init() needs one) */
	spinlock_t lock;
};

/**
 * struct nfence_binding - a pending DRM_IOCTL_NFENCE_SYNCOBJ_BIND
 *
 * Lifetime: from the ioctl until its file's bind work has attached the
 * point; on its file's &nfence_file.bindings list all that time.
 */
struct nfence_binding {
	/** @waiter: the CPU waiter on @fence */
	struct nfence_waiter waiter;
	/** @fence: the native fence (a reference) */
	struct nfence_fence *fence;
	/** @syncobj: the syncobj (a reference) */
	struct drm_syncobj *syncobj;
	/** @point: the timeline point */
	u64 point;
	/** @file: the file that made it */
	struct nfence_file *file;
	/** @link: entry in &nfence_file.bindings, under &nfence_file.async_lock */
	struct list_head link;
	/**
	 * @listed: on &nfence_file.bindings (and counted there); false for a
	 * binding reached at the call, handed to the bind work at once
	 */
	bool listed;
	/** @ready: entry in &nfence_file.bindings' ready list once decided */
	struct llist_node ready;
	/** @result: 0 while pending, then 1 (reached) or the -errno */
	atomic_t result;
	/** @chain: the chain node the point is added with */
	struct dma_fence_chain *chain;
	/** @attach: the fence the point gets */
	struct nfence_bridge_fence *attach;
};

static const char *nfence_bridge_driver_name(struct dma_fence *fence)
{
	return "nfence";
}

static const char *nfence_bridge_timeline_name(struct dma_fence *fence)
{
	return "syncobj-bridge";
}

static void nfence_bridge_release(struct dma_fence *fence)
{
	dma_fence_free(fence);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops nfence_bridge_fence_ops = {
	.get_driver_name = nfence_bridge_driver_name,
	.get_timeline_name = nfence_bridge_timeline_name,
	.release = nfence_bridge_release,
};

/* Attach @b's point: its fence, signaled with @error unless it is 0. */
static void nfence_binding_attach(struct nfence_binding *b, int error)
{
	struct nfence_bridge_fence *bf = b->attach;

	spin_lock_init(&bf->lock);
	/* Dropped by nfence_bridge_release(); we run in this module. */
	__module_get(THIS_MODULE);
	dma_fence_init(&bf->base, &nfence_bridge_fence_ops, &bf->lock,
		       dma_fence_context_alloc(1), 1);
	if (error)
		dma_fence_set_error(&bf->base, error);
	dma_fence_signal(&bf->base);
	/* Takes its own reference on the fence, and the chain node. */
	drm_syncobj_add_point(b->syncobj, b->chain, &bf->base, b->point);
	dma_fence_put(&bf->base);
	b->chain = NULL;
	b->attach = NULL;
}

static void nfence_binding_free(struct nfence_binding *b)
{
	dma_fence_chain_free(b->chain);
	kfree(b->attach);
	if (b->syncobj)
		drm_syncobj_put(b->syncobj);
	nfence_fence_put(b->fence);
	kfree(b);
}

/**
 * nfence_binding_outcome - what a released binding's point carries
 * @fence: the native fence
 * @value: the value bound
 * @reached: its waiter was released because CurrentValue reached @value
 *	(&nfence_waiter.reached), whatever CurrentValue says now
 *
 * AlwaysSignaled comes first: it raises CurrentValue, which then says
 * nothing about the value having been signaled.
 *
 * Return: 0 if @fence reached @value, -EIO if its device is in error,
 * -ENOENT if it was released unreached (the fence lost its last handle).
 */
static int nfence_binding_outcome(struct nfence_fence *fence, u64 value,
				  bool reached)
{
	if (READ_ONCE(fence->always_signaled))
		return -EIO;
	if (reached || nfence_fence_read(fence) >= value)
		return 0;
	return -ENOENT;
}

/*
 * Between deciding a binding and handing it to the bind work: nothing,
 * but visible to KUnit, which stalls a signal's decision here (under the
 * fence's waitlist lock) to race the file's close against it.
 */
NFENCE_VISIBLE_IF_KUNIT void nfence_binding_decided(struct nfence_binding *b)
{
	NFENCE_KUNIT_STUB(nfence_binding_decided, b);
}

/*
 * Decide @b's end, once: the first caller wins. May run under the fence's
 * waitlist lock: only atomics, an llist and queue_work(). A release
 * decides under that lock, so taking it (nfence_waitlist_remove()) waits
 * until a decision in progress has reached the bind work.
 */
static void nfence_binding_decide(struct nfence_binding *b, int error)
{
	struct nfence_file *nfile = b->file;

	if (atomic_cmpxchg(&b->result, 0, error ?: 1))
		return;
	nfence_binding_decided(b);
	nfence_async_list_ready(&nfile->bindings, &b->ready);
}

static void nfence_binding_done(struct nfence_waiter *waiter)
{
	struct nfence_binding *b = container_of(waiter, struct nfence_binding,
						waiter);

	nfence_binding_decide(b, nfence_binding_outcome(b->fence,
							waiter->value,
							waiter->reached));
}

/* Attach the points of the decided bindings, in the order decided. */
static void nfence_bind_work(struct work_struct *work)
{
	struct nfence_file *nfile = container_of(work, struct nfence_file,
						 bindings.work);
	struct nfence_binding *b, *next;
	struct llist_node *list;

	list = nfence_async_list_take(&nfile->bindings);
	llist_for_each_entry_safe(b, next, list, ready) {
		int result = atomic_read(&b->result);

		/* An abort decided it: the waiter may still be queued. */
		nfence_waitlist_remove(&b->fence->waiters, &b->waiter);
		nfence_binding_attach(b, result > 0 ? 0 : result);
		if (b->listed)
			nfence_async_list_remove(&nfile->bindings, &b->link);
		nfence_binding_free(b);
	}
}

/*
 * The binding SYNCOBJ_BIND asks for, its fence and syncobj checked and
 * held, and what attaching its point needs allocated; or an ERR_PTR.
 */
static struct nfence_binding *
nfence_binding_create(struct drm_file *file,
		      const struct drm_nfence_syncobj_bind *args)
{
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_binding *b;
	int ret;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	b->file = nfile;
	b->point = args->point;
	b->waiter.value = args->value;
	b->waiter.done = nfence_binding_done;
	RB_CLEAR_NODE(&b->waiter.node);
	INIT_LIST_HEAD(&b->link);

	b->fence = nfence_fence_arg_get(nfile, args->device, args->fence,
					DRM_NFENCE_FENCE_NO_WAIT, args->value);
	if (IS_ERR(b->fence)) {
		ret = PTR_ERR(b->fence);
		b->fence = NULL;
		goto err;
	}
	b->syncobj = drm_syncobj_find(file, args->syncobj);
	if (!b->syncobj) {
		ret = -ENOENT;
		goto err;
	}
	b->chain = dma_fence_chain_alloc();
	b->attach = kzalloc(sizeof(*b->attach), GFP_KERNEL);
	if (!b->chain || !b->attach) {
		ret = -ENOMEM;
		goto err;
	}
	return b;

err:
	nfence_binding_free(b);
	return ERR_PTR(ret);
}

/*
 * Make @b pending: on its file's list, its waiter queued. -ENODEV after an
 * unplug, -ENOSPC if the file has its limit of bindings; @b is the
 * caller's then. With @reached (its value reached at the ioctl's look), it
 * takes no room: its point is attached now if no other binding is
 * pending, else by the bind work, after those of the bindings decided
 * before it. A value reached after the look is the waiter's at once, and
 * goes to the bind work too.
 *
 * Return: 0 (pending), 1 (attached and freed), 2 (decided: the bind work
 * attaches it and frees it; flush it), or -errno.
 */
static int nfence_binding_start(struct drm_device *drm,
				struct nfence_binding *b, bool reached)
{
	struct nfence_file *nfile = b->file;
	int ret, idx;

	/* On the list before an unplug looks at it, or not at all. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&nfile->async_lock);
	/* Already there: no waiter, no MonitoredValue change. */
	if (reached && list_empty(&nfile->bindings.entries)) {
		mutex_unlock(&nfile->async_lock);
		drm_dev_exit(idx);
		nfence_binding_attach(b, nfence_binding_outcome(b->fence,
								b->waiter.value,
								true));
		nfence_binding_free(b);
		return 1;
	}
	if (reached) {
		nfence_binding_decide(b, nfence_binding_outcome(b->fence,
								b->waiter.value,
								true));
		mutex_unlock(&nfile->async_lock);
		drm_dev_exit(idx);
		return 2;
	}
	ret = nfence_async_list_add_locked(&nfile->bindings, &b->link);
	b->listed = !ret;
	/*
	 * Queued with the lock held, as an asynchronous wait: the bind work
	 * takes it off the list under the lock, so not before this is done.
	 */
	if (!ret && nfence_fence_add_waiter(b->fence, &b->waiter))
		ret = 2;
	mutex_unlock(&nfile->async_lock);
	drm_dev_exit(idx);
	return ret;
}

/**
 * nfence_syncobj_bind_ioctl - DRM_IOCTL_NFENCE_SYNCOBJ_BIND
 * @drm: the DRM device
 * @data: &struct drm_nfence_syncobj_bind
 * @file: the caller's file
 *
 * Return: 0 (the binding is pending, or its point already attached), or
 * -errno as &struct drm_nfence_syncobj_bind documents.
 */
int nfence_syncobj_bind_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct drm_nfence_syncobj_bind *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_device *wdev;
	struct nfence_binding *b;
	int ret;

	if (args->flags || !args->point)
		return -EINVAL;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	nfence_device_put(wdev);

	b = nfence_binding_create(file, args);
	if (IS_ERR(b))
		return PTR_ERR(b);
	ret = nfence_binding_start(drm, b,
				   nfence_fence_reached(b->fence, args->value));
	if (ret < 0) {
		nfence_binding_free(b);
		return ret;
	}
	/* A value reached: the point is there before the call returns. */
	if (ret == 2)
		flush_work(&nfile->bindings.work);
	return 0;
}

/**
 * struct nfence_dma_signal - a pending DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL
 *
 * Lifetime: from the ioctl until its file's signal work has signaled the
 * fence, or its file's close or unplug removed the callback; on its file's
 * &nfence_file.dma_signals list all that time. One whose dma_fence has
 * signaled already is signaled and freed by the ioctl, never listed.
 */
struct nfence_dma_signal {
	/** @cb: the callback on @dma */
	struct dma_fence_cb cb;
	/** @dma: the dma_fence waited for (a reference) */
	struct dma_fence *dma;
	/** @fence: the native fence (a reference) */
	struct nfence_fence *fence;
	/** @value: the value @fence is signaled to */
	u64 value;
	/** @file: the file that made it */
	struct nfence_file *file;
	/** @link: entry in &nfence_file.dma_signals, under &nfence_file.async_lock */
	struct list_head link;
	/** @ready: entry in &nfence_file.dma_signals' ready list once @dma signaled */
	struct llist_node ready;
};

static void nfence_dma_signal_free(struct nfence_dma_signal *s)
{
	dma_fence_put(s->dma);
	nfence_fence_put(s->fence);
	kfree(s);
}

/*
 * Signal the native fence: the CPU signal path, then the queues. Not after
 * an unplug, which ended the fence's waiters and stopped the CMP.
 */
static void nfence_dma_signal_fire(struct nfence_dma_signal *s)
{
	struct nfence_adapter *adapter = s->fence->adapter;
	int idx;

	if (!drm_dev_enter(&adapter->drm, &idx))
		return;
	nfence_fence_signal(s->fence, s->value);
	nfence_cmp_kick_waiters(&adapter->cmp);
	drm_dev_exit(idx);
}

/* The dma_fence signaled: any context, under its lock. */
static void nfence_dma_signal_cb(struct dma_fence *dma,
				 struct dma_fence_cb *cb)
{
	struct nfence_dma_signal *s = container_of(cb, struct nfence_dma_signal,
						   cb);
	nfence_async_list_ready(&s->file->dma_signals, &s->ready);
}

/* Signal the fences of the signals whose dma_fence signaled, in order. */
static void nfence_dma_signal_work(struct work_struct *work)
{
	struct nfence_file *nfile = container_of(work, struct nfence_file,
						 dma_signals.work);
	struct nfence_dma_signal *s, *next;
	struct llist_node *list;

	list = nfence_async_list_take(&nfile->dma_signals);
	llist_for_each_entry_safe(s, next, list, ready) {
		nfence_dma_signal_fire(s);
		nfence_async_list_remove(&nfile->dma_signals, &s->link);
		nfence_dma_signal_free(s);
	}
}

/* The dma_fence of @args: a reference, or an ERR_PTR. */
static struct dma_fence *
nfence_dma_signal_source(struct drm_file *file,
			 const struct drm_nfence_syncobj_signal *args)
{
	struct dma_fence *dma;
	int ret;

	if (args->flags & DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE) {
		dma = sync_file_get_fence(args->fd);
		return dma ?: ERR_PTR(-EINVAL);
	}
	ret = drm_syncobj_find_fence(file, args->syncobj, args->point, 0, &dma);
	return ret ? ERR_PTR(ret) : dma;
}

/*
 * The signal SYNCOBJ_SIGNAL asks for, its native fence checked and held,
 * and the dma_fence it waits for; or an ERR_PTR.
 */
static struct nfence_dma_signal *
nfence_dma_signal_create(struct drm_file *file,
			 const struct drm_nfence_syncobj_signal *args)
{
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_dma_signal *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->file = nfile;
	s->value = args->value;
	INIT_LIST_HEAD(&s->link);

	s->fence = nfence_fence_arg_get(nfile, args->device, args->fence,
					DRM_NFENCE_FENCE_NO_SIGNAL,
					args->value);
	if (IS_ERR(s->fence)) {
		ret = PTR_ERR(s->fence);
		s->fence = NULL;
		goto err;
	}
	s->dma = nfence_dma_signal_source(file, args);
	if (IS_ERR(s->dma)) {
		ret = PTR_ERR(s->dma);
		s->dma = NULL;
		goto err;
	}
	return s;

err:
	nfence_dma_signal_free(s);
	return ERR_PTR(ret);
}

/*
 * Make @s pending: on its file's list, its callback added; if its
 * dma_fence signaled meanwhile, signal now instead and free @s. -ENODEV
 * after an unplug, -ENOSPC if the file has its limit of signals; @s is the
 * caller's then.
 */
static int nfence_dma_signal_start(struct drm_device *drm,
				   struct nfence_dma_signal *s)
{
	struct nfence_file *nfile = s->file;
	bool signaled = false;
	int ret, idx;

	/* On the list before an unplug looks at it, or not at all. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&nfile->async_lock);
	/*
	 * The callback may run (and the work take it off the list) as soon
	 * as it is added: on the list first, both under the lock.
	 */
	ret = nfence_async_list_add_locked(&nfile->dma_signals, &s->link);
	if (!ret &&
	    dma_fence_add_callback(s->dma, &s->cb, nfence_dma_signal_cb)) {
		/* Signaled since: signal now. */
		nfence_async_list_unlink_locked(&nfile->dma_signals, &s->link);
		nfence_async_list_uncount(&nfile->dma_signals);
		signaled = true;
	}
	mutex_unlock(&nfile->async_lock);
	drm_dev_exit(idx);
	if (signaled) {
		nfence_dma_signal_fire(s);
		nfence_dma_signal_free(s);
	}
	return ret;
}

/**
 * nfence_syncobj_signal_ioctl - DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL
 * @drm: the DRM device
 * @data: &struct drm_nfence_syncobj_signal
 * @file: the caller's file
 *
 * Return: 0 (the signal is pending, or done if the dma_fence had
 * signaled), or -errno as &struct drm_nfence_syncobj_signal documents.
 */
int nfence_syncobj_signal_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct drm_nfence_syncobj_signal *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_dma_signal *s;
	struct nfence_device *wdev;
	int ret;

	if (args->pad || args->flags & ~DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE)
		return -EINVAL;
	if (args->flags & DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE ?
	    args->syncobj || args->point : args->fd)
		return -EINVAL;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	nfence_device_put(wdev);

	s = nfence_dma_signal_create(file, args);
	if (IS_ERR(s))
		return PTR_ERR(s);
	if (dma_fence_is_signaled(s->dma)) {
		/* Signaled already: signal now, taking no slot. */
		nfence_dma_signal_fire(s);
		nfence_dma_signal_free(s);
		return 0;
	}
	ret = nfence_dma_signal_start(drm, s);
	if (ret)
		nfence_dma_signal_free(s);
	return ret;
}

/*
 * Drop the pending signals of @nfile whose callback has not run. Those
 * whose callback ran are the work's: the caller flushes it.
 */
static void nfence_file_dma_signals_drop(struct nfence_file *nfile)
{
	struct nfence_dma_signal *s, *next;
	LIST_HEAD(dropped);

	mutex_lock(&nfile->async_lock);
	list_for_each_entry_safe(s, next, &nfile->dma_signals.entries, link) {
		if (!dma_fence_remove_callback(s->dma, &s->cb))
			continue;
		nfence_async_list_unlink_locked(&nfile->dma_signals, &s->link);
		nfence_async_list_uncount(&nfile->dma_signals);
		list_add(&s->link, &dropped);
	}
	mutex_unlock(&nfile->async_lock);
	list_for_each_entry_safe(s, next, &dropped, link)
		nfence_dma_signal_free(s);
}

/**
 * nfence_file_bindings_init - set up the syncobj bindings of a new file
 * @nfile: the file; &nfence_file.async_lock is set up by
 *	nfence_file_waits_init()
 */
void nfence_file_bindings_init(struct nfence_file *nfile)
{
	struct workqueue_struct *wq = nfile->adapter->wait_wq;

	nfence_async_list_init(&nfile->bindings, &nfile->async_lock,
			       DRM_NFENCE_MAX_SYNCOBJ_BINDINGS, wq,
			       nfence_bind_work);
	nfence_async_list_init(&nfile->dma_signals, &nfile->async_lock,
			       DRM_NFENCE_MAX_SYNCOBJ_SIGNALS, wq,
			       nfence_dma_signal_work);
}

/* For list_sort(): pending bindings by value bound, lowest first. */
static int nfence_binding_cmp(void *priv, const struct list_head *a,
			      const struct list_head *b)
{
	u64 va = list_entry(a, struct nfence_binding, link)->waiter.value;
	u64 vb = list_entry(b, struct nfence_binding, link)->waiter.value;

	return va > vb ? 1 : va < vb ? -1 : 0;
}

/*
 * End @nfile's pending bindings with @error, or, with @settle, with what
 * the fence says already where it has one: a value reached (whose
 * interrupt has not released the waiter yet) or a device error. They are
 * decided in value order, as the fence would have released them, so that
 * the points of one fence's bindings are attached in that order.
 */
static void nfence_file_bindings_end(struct nfence_file *nfile, int error,
				     bool settle)
{
	struct nfence_binding *b;
	int end;

	mutex_lock(&nfile->async_lock);
	list_sort(NULL, &nfile->bindings.entries, nfence_binding_cmp);
	list_for_each_entry(b, &nfile->bindings.entries, link) {
		end = error;
		if (settle) {
			end = nfence_binding_outcome(b->fence, b->waiter.value,
						     false);
			if (end == -ENOENT)
				end = error;
		}
		nfence_binding_decide(b, end);
		/*
		 * If a release decided first, it may not have handed the
		 * binding on yet: its waitlist lock waits for that, so that
		 * a drain after this finds every binding on the ready list.
		 */
		nfence_waitlist_remove(&b->fence->waiters, &b->waiter);
	}
	mutex_unlock(&nfile->async_lock);
	nfence_file_dma_signals_drop(nfile);
}

/**
 * nfence_file_bindings_abort - end every pending binding and signal of a file
 * @nfile: the file
 * @error: what the points carry (-ENODEV on unplug)
 *
 * A binding already decided keeps its result. The points are attached by
 * the bind work, soon after. Pending DRM_IOCTL_NFENCE_SYNCOBJ_SIGNALs are
 * dropped unsignaled; those whose callback ran already are the signal
 * work's, which signals them unless the adapter is unplugged. The caller
 * makes sure no new binding or signal starts (drm_dev_unplug()), or that
 * the file is closing.
 */
void nfence_file_bindings_abort(struct nfence_file *nfile, int error)
{
	nfence_file_bindings_end(nfile, error, false);
}

/**
 * nfence_file_bindings_fini - end the bindings and signals of a closing file
 * @nfile: the file
 *
 * Called after the file's exit wait (nfence_file_drain()), during which
 * its bindings and signals still act (a killed opener's: before it too).
 * Every binding still pending gets its point: signaled if its fence has
 * reached the value (the exit wait can end before the interrupt that
 * releases the waiter), -EIO if the fence's device is in error, else
 * -ECANCELED (-ENODEV once the adapter is unplugged: an unplug does not
 * reach a closing file). Every signal whose dma_fence has not signaled is
 * dropped; those whose dma_fence has are applied before the bindings are
 * decided. Returns once every point of the file is attached and every
 * binding and signal freed; may be called again. Called before
 * nfence_file_waits_fini(), which destroys &nfence_file.async_lock.
 */
void nfence_file_bindings_fini(struct nfence_file *nfile)
{
	/*
	 * Signals first: one whose callback ran may reach the value of a
	 * binding, which is then signaled rather than cancelled. Every
	 * signal left has run its callback, so is on the ready list.
	 */
	nfence_file_dma_signals_drop(nfile);
	nfence_async_list_drain(&nfile->dma_signals);
	nfence_file_bindings_end(nfile,
				 drm_dev_is_unplugged(&nfile->adapter->drm) ?
				 -ENODEV : -ECANCELED, true);
	/* Every binding is decided, so on the ready list: one pass does. */
	nfence_async_list_drain(&nfile->bindings);
}
