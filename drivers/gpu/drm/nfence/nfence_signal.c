// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>

#include <drm/drm_print.h>

#include "nfence_adapter.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_signal.h"
#include "nfence_trace.h"

/**
 * DOC: fence signals, the interrupt path and AlwaysSignaled
 *
 * Every change of a fence's state on the driver's side is here. A signal
 * from the CPU (DRM_IOCTL_NFENCE_FENCE_SIGNAL, the "update current values
 * from CPU" path, a legacy signal's worker) follows the seed: full
 * barrier, 64-bit store of CurrentValue (which never moves backwards), full
 * barrier, then the conditional interrupt check: only if CurrentValue now
 * exceeds MonitoredValue is the interrupt path taken. The GPU's signals
 * follow the same order in the engine (nfence_engine.c) and raise the same
 * interrupt through the CMP's callbacks. The interrupt path, given the
 * signaled fences or none (scan every fence), satisfies the waiters their
 * values reached and advances MonitoredValue; a GPU without 64-bit atomics
 * raises it with a carry for the value it could not store.
 *
 * On an adapter without 64-bit atomics (the context-monitoring seed's
 * No64BitAtomics), a wait or signal value more than UINT_MAX/2 ahead of the
 * fence's current value is refused with -EINVAL.
 *
 * When the device that created a fence is put in error, the fence becomes
 * AlwaysSignaled as the seed describes: CurrentValue is raised to the
 * seed's 0xFFFFFFFF (never lowered), every wait on it is satisfied at once,
 * and signals no longer touch its storage.
 */

/* Raise *@p to @value if it is below; never lower it. */
static void nfence_value_raise(u64 *p, u64 value)
{
	u64 old = READ_ONCE(*p);

	while (old < value) {
		u64 prev = cmpxchg64(p, old, value);

		if (prev == old)
			break;
		old = prev;
	}
}

/**
 * nfence_fence_value_allowed - whether a value may be waited for or signaled
 * @fence: the fence
 * @value: the value
 *
 * On an adapter whose GPU has no 64-bit atomics, values more than
 * UINT_MAX/2 ahead of the fence's CurrentValue are refused
 * (nfence_value32_in_window()), unless the fence is AlwaysSignaled (every
 * value is reached); anything goes on the others.
 *
 * Return: true if @value may be used with @fence.
 */
bool nfence_fence_value_allowed(struct nfence_fence *fence, u64 value)
{
	return !fence->adapter->gpu.cfg.no_64bit_atomics ||
	       READ_ONCE(fence->always_signaled) ||
	       nfence_value32_in_window(nfence_fence_read(fence), value);
}

/**
 * nfence_fence_signal - signal a fence: the CPU path and the GPU's
 * @fence: the fence
 * @value: the new CurrentValue; ignored unless above the current one
 *
 * Barrier, 64-bit store, barrier, then the conditional interrupt check
 * against MonitoredValue.
 */
void nfence_fence_signal(struct nfence_fence *fence, u64 value)
{
	struct nfence_irq_stats *stats = &fence->adapter->gpu.irq_stats;

	/* AlwaysSignaled: the storage is not touched any more. */
	if (READ_ONCE(fence->always_signaled))
		return;
	atomic64_inc(&stats->signals);
	trace_nfence_fence_signal(fence->adapter->gpu.index, fence->id, value,
				  false);
	/* Whatever was written before the signal is visible before it. */
	smp_mb();
	nfence_value_raise(fence->cv.value, value);
	/* Order the CurrentValue store before the MonitoredValue load. */
	smp_mb();
	if (fence->monitored) {
		/* No MonitoredValue: the OS checks the waiters itself. */
		nfence_interrupt_monitored(fence);
	} else if (READ_ONCE(*fence->cv.value) > READ_ONCE(*fence->mv.value)) {
		atomic64_inc(&stats->interrupts);
		nfence_interrupt(fence->adapter, &fence, 1);
	} else {
		atomic64_inc(&stats->suppressed);
	}
}

/* Wake what the signaled fences satisfy; returns the waiters woken. */
static unsigned int nfence_interrupt_process(struct nfence_adapter *adapter,
					     struct nfence_fence **fences,
					     unsigned int count)
{
	unsigned int i, woken = 0;
	struct nfence_fence *fence;
	unsigned long id;

	if (fences) {
		for (i = 0; i < count; i++) {
			woken += nfence_waitlist_process(&fences[i]->waiters);
			woken += nfence_fence_propagate(fences[i]);
		}
	} else {
		xa_lock(&adapter->fences);
		xa_for_each(&adapter->fences, id, fence) {
			if (nfence_waitlist_count(&fence->waiters))
				woken += nfence_waitlist_process(&fence->waiters);
			woken += nfence_fence_propagate(fence);
		}
		xa_unlock(&adapter->fences);
	}
	return woken;
}

/**
 * nfence_interrupt - the native fence signaled interrupt
 * @adapter: the adapter
 * @fences: the signaled fences, or NULL to scan every fence with waiters
 * @count: entries in @fences
 */
void nfence_interrupt(struct nfence_adapter *adapter,
		      struct nfence_fence **fences, unsigned int count)
{
	unsigned int woken = nfence_interrupt_process(adapter, fences, count);

	trace_nfence_interrupt(adapter->gpu.index,
			       fences ? NFENCE_TRACE_IRQ_FENCES :
					NFENCE_TRACE_IRQ_SCAN, count, woken);
	if (!woken)
		atomic64_inc(&adapter->gpu.irq_stats.spurious);
}

/**
 * nfence_interrupt_monitored - a monitored fence was signaled
 * @fence: the fence, a WDDM 2.x monitored fence
 *
 * The GPU raises the monitored fence signaled interrupt after every signal
 * of a monitored fence, and the CPU path comes here after every CPU
 * signal: with no MonitoredValue, only the OS can tell whether a waiter is
 * satisfied. Wakes those that are; waking nobody is not spurious here.
 *
 * Context: the CMP thread or a CPU signal, as nfence_interrupt().
 */
void nfence_interrupt_monitored(struct nfence_fence *fence)
{
	unsigned int woken = nfence_interrupt_process(fence->adapter, &fence, 1);

	trace_nfence_interrupt(fence->adapter->gpu.index,
			       NFENCE_TRACE_IRQ_MONITORED, 1, woken);
}

/**
 * nfence_interrupt_carry - the interrupt of a GPU that could not store a value
 * @adapter: the adapter, whose GPU has no 64-bit atomics
 * @fence: the fence the GPU signaled
 * @value: the value it signaled
 *
 * A GPU without 64-bit atomics cannot store a fence value whose high half
 * differs from the one in memory (a signal across a multiple of 2^32, up or
 * down); it raises the native fence signaled interrupt for the fence
 * instead, whatever MonitoredValue says, and the OS handles the wrap: this
 * stores the whole value in one 64-bit store, as the GPU would have (a
 * plain store, like every GPU signal), then wakes the waiters it satisfies
 * as nfence_interrupt() does. Not spurious even if it wakes nobody.
 *
 * Context: the CMP thread, where nfence_interrupt() is called from.
 */
void nfence_interrupt_carry(struct nfence_adapter *adapter,
			    struct nfence_fence *fence, u64 value)
{
	if (!READ_ONCE(fence->always_signaled)) {
		WRITE_ONCE(*fence->cv.value, value);
		atomic64_inc(&adapter->gpu.irq_stats.carries);
	}
	/* The CurrentValue store before the waiters' MonitoredValue. */
	smp_mb();
	trace_nfence_interrupt(adapter->gpu.index, NFENCE_TRACE_IRQ_CARRY, 1,
			       nfence_interrupt_process(adapter, &fence, 1));
}

/**
 * nfence_fence_set_always_signaled - the parent device of a fence is in error
 * @fence: the fence
 *
 * A cross-adapter fence is AlwaysSignaled on every adapter where it is
 * opened: its instances share CurrentValue, and they share this state too
 * (an instance opened afterwards inherits it, see nfence_xgroup_join()).
 */
void nfence_fence_set_always_signaled(struct nfence_fence *fence)
{
	struct nfence_xgroup *xg = fence->xgroup;
	struct nfence_fence *f;

	nfence_value_raise(fence->cv.value, NFENCE_ALWAYS_SIGNALED_VALUE);
	if (!xg) {
		nfence_instance_set_always_signaled(fence);
		return;
	}
	spin_lock(&xg->lock);
	list_for_each_entry(f, &xg->instances, xlink)
		nfence_instance_set_always_signaled(f);
	spin_unlock(&xg->lock);
}

/**
 * nfence_device_fences_error - make the fences a device created AlwaysSignaled
 * @wdev: the device, just put in error
 */
void nfence_device_fences_error(struct nfence_device *wdev)
{
	struct nfence_file *nfile = wdev->file;
	struct nfence_fence_local *local;
	struct nfence_fence *fence;
	unsigned long handle;

	xa_for_each(&nfile->fences.xa, handle, local) {
		fence = NULL;
		xa_lock(&nfile->fences.xa);
		local = xa_load(&nfile->fences.xa, handle);
		if (local && local->device == wdev && local->creator) {
			fence = local->fence;
			kref_get(&fence->ref);
		}
		xa_unlock(&nfile->fences.xa);
		if (fence) {
			nfence_fence_set_always_signaled(fence);
			nfence_fence_put(fence);
		}
	}
}

/**
 * nfence_irq_stats_print - interrupt path counters for debugfs
 * @adapter: the adapter
 * @p: where to print
 */
void nfence_irq_stats_print(struct nfence_adapter *adapter,
			    struct drm_printer *p)
{
	struct nfence_irq_stats *s = &adapter->gpu.irq_stats;

	drm_printf(p, "signals: %lld\n", (long long)atomic64_read(&s->signals));
	drm_printf(p, "interrupts: %lld\n",
		   (long long)atomic64_read(&s->interrupts));
	drm_printf(p, "suppressed: %lld\n",
		   (long long)atomic64_read(&s->suppressed));
	drm_printf(p, "monitored: %lld\n",
		   (long long)atomic64_read(&s->monitored));
	drm_printf(p, "woken: %lld\n", (long long)atomic64_read(&s->woken));
	drm_printf(p, "spurious: %lld\n",
		   (long long)atomic64_read(&s->spurious));
	drm_printf(p, "carries: %lld\n",
		   (long long)atomic64_read(&s->carries));
}
