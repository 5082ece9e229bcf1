// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/refcount.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"

/**
 * DOC: the device's last reference
 *
 * Every open file, and every object that keeps an adapter's simulated GPU
 * (a global fence, a doorbell and its pages, a CPU window), holds a
 * reference on the adapter's DRM device. The last one released takes the
 * GPU with it: the CMP thread is stopped (kthread_stop(), which waits for
 * the thread to end) and the adapter's wait_wq is destroyed (which waits
 * for its work items). So the last reference must not be dropped on the
 * CMP thread, which would wait for itself.
 *
 * The CMP thread holds fences while it runs: the scan of every fence with
 * waiters that follows a pass, outside &nfence_cmp.lock, and an engine's
 * look at the fence a GPU address names. After an unplug and the close of
 * every file, the last other holder of such a fence (a shared fence's fd)
 * may let go meanwhile, and the CMP's put is then the device's last. So an
 * object drops its reference with nfence_adapter_put(), which on the CMP
 * thread hands the last reference to a work item of the module's own
 * workqueue instead: the release runs there. Module exit waits until every
 * adapter it made has been released, then for that workqueue
 * (nfence_adapters_fini()).
 *
 * A work item of the adapter's wait_wq (an asynchronous wait, a syncobj
 * binding, a legacy signal) belongs to an open file, whose postclose ends
 * it (flushing or cancelling the work) before the file lets go of the
 * device: such a work item never holds the last reference.
 */

/* How long module exit waits for the last adapter before saying so. */
#define NFENCE_EXIT_WAIT	(10 * HZ)

/* Where the last references nfence_adapter_put() hands on are dropped. */
static struct workqueue_struct *nfence_put_wq;

/* Adapters made and not yet released; module exit waits for 0. */
static atomic_t nfence_live_adapters = ATOMIC_INIT(0);

/* Drop the last reference the CMP thread handed on: release the device. */
static void nfence_adapter_put_work(struct work_struct *work)
{
	struct nfence_adapter *adapter = container_of(work,
						      struct nfence_adapter,
						      put_work);

	/* Frees @adapter, @work with it: queued once, never again. */
	drm_dev_put(&adapter->drm);
}

/**
 * nfence_adapter_put - drop an object's reference on its adapter's device
 * @adapter: the adapter
 *
 * drm_dev_put(), except for the last reference on the adapter's CMP
 * thread, which is handed to a work item that drops it (DOC: the device's
 * last reference). Only the last one is handed on, found with
 * refcount_dec_not_one() on &drm_device.ref (DRM core has no put that
 * refuses to be the last): the caller held the only reference, so nothing
 * else can queue the work, which then runs once. A work item that took
 * every reference handed on would not do: one queued again while it runs
 * would run after it freed the adapter.
 */
void nfence_adapter_put(struct nfence_adapter *adapter)
{
	if (!nfence_cmp_current(&adapter->cmp))
		drm_dev_put(&adapter->drm);
	else if (!refcount_dec_not_one(&adapter->drm.ref.refcount))
		queue_work(nfence_put_wq, &adapter->put_work);
}

/* The last step of an adapter's release: nothing of it runs after this. */
static void nfence_adapter_gone(struct drm_device *drm, void *data)
{
	if (atomic_dec_and_test(&nfence_live_adapters))
		wake_up_var(&nfence_live_adapters);
}

/**
 * nfence_adapter_track - count an adapter being made
 * @adapter: the adapter, just allocated, before any managed action of the
 *	driver's
 *
 * Sets up what nfence_adapter_put() uses, and counts the adapter until
 * the release of its DRM device ends: the managed action added here is
 * the driver's first, and so its last to run. What follows it is DRM
 * core's part of the release (its own actions, then the freeing of the
 * adapter's memory), which module exit need not wait for.
 *
 * Return: 0, or -errno if the action could not be added (the adapter is
 * then not counted).
 */
int nfence_adapter_track(struct nfence_adapter *adapter)
{
	INIT_WORK(&adapter->put_work, nfence_adapter_put_work);
	atomic_inc(&nfence_live_adapters);
	return drmm_add_action_or_reset(&adapter->drm, nfence_adapter_gone,
					NULL);
}

/**
 * nfence_adapters_init - set up what adapters need at module load
 *
 * Return: 0 or -ENOMEM.
 */
int nfence_adapters_init(void)
{
	nfence_put_wq = alloc_workqueue("nfence-put", WQ_UNBOUND, 0);
	return nfence_put_wq ? 0 : -ENOMEM;
}

/**
 * nfence_adapters_fini - wait for every adapter to be released
 *
 * Module exit, once every adapter is unbound: a CMP thread may still hold
 * a fence of an unplugged adapter, whose device then goes in
 * nfence_put_wq. Returns when every adapter is released and the work that
 * released it has returned.
 */
void nfence_adapters_fini(void)
{
	int live;

	/* Unloading with one alive would free its code: say why, and wait. */
	while (!wait_var_event_timeout(&nfence_live_adapters,
				       !atomic_read(&nfence_live_adapters),
				       NFENCE_EXIT_WAIT)) {
		live = atomic_read(&nfence_live_adapters);
		if (live)
			pr_warn("nfence: %d adapter(s) still referenced, waiting\n",
				live);
	}
	destroy_workqueue(nfence_put_wq);
}
