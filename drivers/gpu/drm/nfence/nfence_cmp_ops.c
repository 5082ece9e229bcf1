// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/pm_runtime.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_cmp_ops.h"
#include "nfence_context.h"
#include "nfence_device.h"
#include "nfence_device_state.h"
#include "nfence_doorbell.h"
#include "nfence_fence.h"
#include "nfence_hwqueue.h"
#include "nfence_logging.h"
#include "nfence_signal.h"
#include "nfence_submit.h"

/**
 * DOC: CMP callbacks
 *
 * This is what the simulated GPU calls: the &struct nfence_cmp_ops the
 * driver registers with the CMP, as a GPU raises interrupts. Each callback
 * turns what the CMP knows of an object (a &struct nfence_cmp_queue, a
 * &struct nfence_cmp_entry, a fence pointer) back into the driver's object
 * and hands the event to the file that owns it: fence interrupts and what
 * the GPU sees of a fence to nfence_signal.c and nfence_fence.c, legacy
 * entries to nfence_submit.c, the optimized interrupt's log reads to
 * nfence_logging.c, a fault to the queue's context (nfence_hwqueue.c stops
 * its queues), a hang to the device-lost policy (nfence_device_state.c),
 * an idle engine to nfence_doorbell.c and an idle adapter to runtime PM.
 * &struct nfence_cmp_ops says which of them run under &nfence_cmp.lock.
 */

/* &nfence_cmp_ops.queue_print: describe a queue for debugfs, lock held. */
static void nfence_cmp_ops_queue_print(struct nfence_cmp_queue *hw,
				       struct drm_printer *p)
{
	struct nfence_hwqueue *q = to_nfence_hwqueue(hw);
	static const char * const names[] = {
		[NFENCE_QUEUE_IDLE] = "idle",
		[NFENCE_QUEUE_READY] = "ready",
		[NFENCE_QUEUE_RUNNING] = "running",
		[NFENCE_QUEUE_WAIT_FENCE] = "wait-fence",
		[NFENCE_QUEUE_WAIT_CPU] = "wait-cpu",
		[NFENCE_QUEUE_FAULTED] = "faulted",
		[NFENCE_QUEUE_LOST] = "lost",
	};
	const char *state = names[q->hw.state];

	if (q->ctx->hw.suspended && q->hw.state != NFENCE_QUEUE_FAULTED &&
	    q->hw.state != NFENCE_QUEUE_LOST)
		state = "suspended";
	drm_printf(p, "queue %u pid %d device %u context %u engine %u ",
		   q->hw.id, q->ctx->device->file->tgid, q->ctx->device->obj.handle,
		   q->ctx->obj.handle, q->ctx->engine);
	drm_printf(p, "state %s pending %u progress %llu\n", state,
		   q->hw.num_pending, nfence_fence_read(q->hw.progress));
}

/*
 * &nfence_cmp_ops.interrupt: the native fence signaled interrupt, or a
 * monitored fence's.
 */
static void nfence_cmp_ops_interrupt(struct nfence_cmp *cmp,
				     struct nfence_fence *fence, u64 value,
				     bool carry)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);

	if (carry)
		nfence_interrupt_carry(adapter, fence, value);
	else if (fence && fence->monitored)
		nfence_interrupt_monitored(fence);
	else
		nfence_interrupt(adapter, fence ? &fence : NULL, fence ? 1 : 0);
}

/*
 * &nfence_cmp_ops.interrupt_queue: the optimized native fence signaled
 * interrupt. Only adapters with native fences raise it, whose queues all
 * have their logs.
 */
static void nfence_cmp_ops_interrupt_queue(struct nfence_cmp *cmp, u32 engine,
					   struct nfence_cmp_queue *hw)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);
	u64 start = nfence_interrupt_queue_start(adapter, !hw);
	unsigned int woken = 0, queues = 0;
	struct nfence_cmp_queue *each;
	bool scanned = false;

	if (hw) {
		woken = nfence_logging_read_signals(adapter, hw, &scanned);
		queues = 1;
	} else {
		list_for_each_entry(each, &cmp->engines[engine].runlist,
				    engine_link) {
			woken += nfence_logging_read_signals(adapter, each,
							     &scanned);
			queues++;
		}
	}
	nfence_interrupt_queue_done(adapter, !hw, queues, woken, start);
}

/*
 * &nfence_cmp_ops.log_names: whether a FENCE_SIGNAL's log payload names,
 * in the queue's file, the fence it signaled.
 */
static bool nfence_cmp_ops_log_names(struct nfence_cmp_queue *hw, u32 handle,
				     struct nfence_fence *fence)
{
	struct nfence_file *nfile = to_nfence_hwqueue(hw)->ctx->device->file;
	struct nfence_table *fences = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_object *obj;
	bool names;

	nfence_table_lock(fences);
	obj = nfence_table_find_locked(fences, handle);
	names = obj && container_of(obj, struct nfence_fence_local,
				    obj)->fence == fence;
	nfence_table_unlock(fences);
	return names;
}

/* The address of @slot's value, which the CMP's lock keeps from moving. */
static u64 *nfence_cmp_ops_value(struct nfence_cmp *cmp,
				 struct nfence_fence_slot *slot)
{
	return nfence_slot_value(slot, lockdep_is_held(&cmp->lock));
}

/* &nfence_cmp_ops.fence_view: what the GPU sees of a fence. */
static void nfence_cmp_ops_fence_view(struct nfence_fence *fence,
				      struct nfence_cmp_fence *view)
{
	struct nfence_cmp *cmp = &fence->adapter->cmp;

	view->cv = nfence_cmp_ops_value(cmp, &fence->cv);
	view->mv = nfence_cmp_ops_value(cmp, &fence->mv);
	view->always_signaled = READ_ONCE(fence->always_signaled);
	view->cross_adapter = !!fence->xgroup;
	view->monitored = fence->monitored;
	view->id = fence->id;
}

/* &nfence_cmp_ops.fence_peers: a cross-adapter fence's peer table. */
static const struct nfence_peer_table *
nfence_cmp_ops_fence_peers(struct nfence_fence *fence)
{
	return fence->xgroup ? rcu_dereference(fence->xgroup->peers) : NULL;
}

/*
 * &nfence_cmp_ops.fence_id_exceeds: a fence of the adapter's table, by id,
 * above its MonitoredValue. Its storage lives while it is in the table
 * (its release erases it first); the CMP lock keeps a demotion from
 * moving it meanwhile.
 */
static bool nfence_cmp_ops_fence_id_exceeds(struct nfence_cmp *cmp, u32 id)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);
	struct nfence_fence *fence;
	bool exceeds = false;

	xa_lock(&adapter->fences);
	fence = xa_load(&adapter->fences, id);
	if (fence && !READ_ONCE(fence->always_signaled))
		exceeds = READ_ONCE(*nfence_cmp_ops_value(cmp, &fence->cv)) >
			  READ_ONCE(*nfence_cmp_ops_value(cmp, &fence->mv));
	xa_unlock(&adapter->fences);
	return exceeds;
}

/* &nfence_cmp_ops.queue_fault: a GPU fault stops the queue's context. */
static void nfence_cmp_ops_queue_fault(struct nfence_cmp *cmp,
				       struct nfence_cmp_queue *hw, u64 va,
				       u32 reason, struct list_head *dropped)
{
	nfence_hwqueue_context_fault_locked(to_nfence_hwqueue(hw)->ctx, va,
					    reason, dropped);
}

/* &nfence_cmp_ops.queue_hang: a hang (TDR) loses the queue's device. */
static void nfence_cmp_ops_queue_hang(struct nfence_cmp *cmp,
				      struct nfence_cmp_queue *hw,
				      struct list_head *dropped)
{
	struct nfence_hwqueue *q = to_nfence_hwqueue(hw);
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);

	drm_dbg_driver(&adapter->drm, "queue %u hung: device %u lost\n",
		       hw->id, q->ctx->device->obj.handle);
	nfence_device_lost_locked(cmp, q->ctx->device,
				  DRM_NFENCE_DEVICE_ERROR_HANG, dropped);
}

/* &nfence_cmp_ops.stopped: the F1 work the thread's last ask queued. */
static void nfence_cmp_ops_stopped(struct nfence_cmp *cmp)
{
	nfence_doorbell_adapter_fini(container_of(cmp, struct nfence_adapter,
						  cmp));
}

/*
 * &nfence_cmp_ops.adapter_idle: nothing runs, nothing is watched. Ask
 * runtime PM for a suspend once the autosuspend delay has passed since
 * now (nfence_pm.c decides whether it can still happen then).
 */
static void nfence_cmp_ops_adapter_idle(struct nfence_cmp *cmp)
{
	struct nfence_adapter *adapter =
		container_of(cmp, struct nfence_adapter, cmp);
	struct device *dev = adapter->drm.dev;

	if (drm_dev_is_unplugged(&adapter->drm))
		return;
	pm_runtime_mark_last_busy(dev);
	pm_request_autosuspend(dev);
}

/*
 * How the CMP reports to the driver: registered with the CMP by
 * nfence_adapter_create(), and by KUnit with nfence_cmp_init().
 */
const struct nfence_cmp_ops nfence_driver_cmp_ops = {
	.interrupt = nfence_cmp_ops_interrupt,
	.interrupt_queue = nfence_cmp_ops_interrupt_queue,
	.log_names = nfence_cmp_ops_log_names,
	.fence_view = nfence_cmp_ops_fence_view,
	.fence_settle = nfence_fence_settle,
	.fence_put = nfence_fence_put,
	.fence_peers = nfence_cmp_ops_fence_peers,
	.fence_id_exceeds = nfence_cmp_ops_fence_id_exceeds,
	.entry_step = nfence_submit_entry_step,
	.entry_done = nfence_submit_entry_done,
	.queue_fault = nfence_cmp_ops_queue_fault,
	.queue_hang = nfence_cmp_ops_queue_hang,
	.entries_drop = nfence_submissions_drop,
	.queue_print = nfence_cmp_ops_queue_print,
	.engine_idle = nfence_doorbell_engine_idle,
	.adapter_idle = nfence_cmp_ops_adapter_idle,
	.stopped = nfence_cmp_ops_stopped,
};
