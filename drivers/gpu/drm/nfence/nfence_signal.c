// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_compat.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_log.h"
#include "nfence_signal.h"
#include "nfence_trace.h"

/**
 * DOC: fence signals, the interrupt path and AlwaysSignaled
 *
 * Every change of a fence's state on the driver's side is here, and the
 * CPU's signal ioctl with it. A signal from the CPU
 * (%DRM_IOCTL_NFENCE_FENCE_SIGNAL, the "update current values from CPU"
 * path, a legacy signal's worker) follows WDDM: full
 * barrier, 64-bit store of CurrentValue (which never moves backwards), full
 * barrier, then the conditional interrupt check: only if CurrentValue now
 * exceeds MonitoredValue is the interrupt path taken. The GPU's signals
 * follow the same order in the engine (nfence_engine.c) and raise the same
 * interrupt through the CMP's callbacks. The interrupt path, given the
 * signaled fences or none (scan every fence), satisfies the waiters their
 * values reached and advances MonitoredValue; a GPU without 64-bit atomics
 * raises it with a carry for the value it could not store.
 *
 * What the GPU's interrupt carries is the adapter's interrupt_payload
 * (&enum nfence_irq_payload): the signaled fence (nfence_interrupt() with
 * it), nothing (a scan of every fence), or, with the optimized interrupt
 * (OptimizedNativeFenceSignaledInterrupt, %NFENCE_IRQ_QUEUE), the hardware
 * queue that ran the signals: nfence_interrupt_log() then reads that
 * queue's signal log since its last read and wakes what the fences the
 * entries name (and the queue's progress fence) satisfy, or scans every
 * fence with waiters when the log overran. An interrupt naming no
 * queue reads the logs of every queue on the engine. Each payload wakes
 * the same waiters; they differ in what the driver reads to find them.
 *
 * On an adapter without 64-bit atomics (WDDM context monitoring's
 * No64BitAtomics), a wait or signal value more than UINT_MAX/2 ahead of the
 * fence's current value is refused with -EINVAL.
 *
 * When the device that created a fence is put in error, the fence becomes
 * AlwaysSignaled as WDDM describes: CurrentValue is raised to WDDM's
 * 0xFFFFFFFF (never lowered), every wait on it is satisfied at once,
 * and signals no longer touch its storage.
 *
 * Nothing leaves the value below 0xFFFFFFFF afterwards. The CPU's signals
 * only ever raise it (a compare-and-exchange loop). The GPU's stores
 * (FENCE_SIGNAL, WRITE64, TIMESTAMP, a carry the driver completes) are
 * plain stores, which may lower a value, made only after a look at
 * AlwaysSignaled. On the fence's own adapter the look and the store run
 * under &nfence_cmp.lock, which the raise holds too: they cannot
 * interleave. The instances of a cross-adapter fence share CurrentValue
 * with other adapters, whose engines look and store under their own CMP's
 * lock, so a store there can look before the raise and land after it.
 * The two sides pair as store buffering, as a parked queue pairs with a
 * CPU signal (nfence_cmp_kick_waiters()): the raise sets AlwaysSignaled on
 * every instance, issues a full barrier, then raises the value; a GPU
 * store to a cross-adapter instance is followed by a full barrier and a
 * second look (nfence_fence_settle()), which raises the value again if the
 * fence became AlwaysSignaled. Either the raise reads the value after the
 * store, or the second look sees the flag: the value ends at 0xFFFFFFFF or
 * above. A CPU reading it in between can see the stored value for that
 * moment, as if the store had landed just before the error; no wait is
 * released by it, as AlwaysSignaled releases them all. An ordinary fence's
 * GPU store makes no second look, and a FENCE_SIGNAL's barrier is the one
 * before its MonitoredValue check, which every signal has: only WRITE64
 * and TIMESTAMP to a cross-adapter instance pay a barrier more.
 */

/*
 * NFENCE_SCAN_BATCH: marked fences the interrupt without a payload looks at
 * under one hold of the adapter's fence table lock
 */
#define NFENCE_SCAN_BATCH	32

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

/*
 * The address of @fence's CurrentValue, for a store: the GPU's and the
 * driver's stores hold &nfence_cmp.lock, which keeps a demotion from moving
 * the value; the CPU's are to a fence the CPU may signal, whose
 * CurrentValue is never in VRAM.
 */
static u64 *nfence_signal_cv(struct nfence_fence *fence)
{
	return nfence_slot_value(&fence->cv,
				 lockdep_is_held(&fence->adapter->cmp.lock));
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
 * nfence_fence_arg_get - check a (fence handle, value) argument of an ioctl
 * @nfile: the caller's file
 * @device: the device handle the fence handle must belong to
 * @handle: the local fence handle
 * @forbidden: the access flag of the handle that refuses the use:
 *	%DRM_NFENCE_FENCE_NO_WAIT for a wait (a CPU wait, a queue's wait, a
 *	syncobj binding), %DRM_NFENCE_FENCE_NO_SIGNAL for a signal (a CPU
 *	signal, a queue's signal, a syncobj signal)
 * @value: the value the caller waits for or signals
 *
 * The one check of a fence argument, for every ioctl that takes one
 * (FENCE_WAIT, FENCE_SIGNAL, SUBMIT_WAIT, SUBMIT_SIGNAL, SYNCOBJ_BIND,
 * SYNCOBJ_SIGNAL). The checks run in this order, the first that fails
 * decides the error: the handle names a fence of @device in @nfile
 * (-ENOENT), the handle does not carry @forbidden (-EACCES), the fence is
 * not an INTRA_GPU one, which the CPU cannot see, and @value is within the
 * 32-bit window of an adapter without 64-bit atomics
 * (nfence_fence_value_allowed()) (-EINVAL for either).
 *
 * Return: the fence with a reference (nfence_fence_put()), or an ERR_PTR
 * of the -errno above.
 */
struct nfence_fence *nfence_fence_arg_get(struct nfence_file *nfile,
					  u32 device, u32 handle,
					  u32 forbidden, u64 value)
{
	struct nfence_fence *fence;
	u32 flags;
	int ret;

	fence = nfence_fence_get(nfile, handle, device, &flags);
	if (!fence)
		return ERR_PTR(-ENOENT);
	if (flags & forbidden)
		ret = -EACCES;
	else if (fence->type == DRM_NFENCE_FENCE_TYPE_INTRA_GPU ||
		 !nfence_fence_value_allowed(fence, value))
		ret = -EINVAL;
	else
		return fence;
	nfence_fence_put(fence);
	return ERR_PTR(ret);
}

/**
 * nfence_fence_signal_needs_irq - the interrupt check of a CPU signal
 * @fence: the fence signaled
 *
 * MonitoredValue may be moving out of VRAM (DOC: demoting fence storage):
 * read under RCU, so the old storage is not given away before the read,
 * and a read of the old storage that misses a new waiter's bound is
 * caught by the demotion's look at the waiters after the grace period.
 * Visible to KUnit, which stubs it to read the old storage.
 *
 * Return: true if CurrentValue is above MonitoredValue.
 */
NFENCE_VISIBLE_IF_KUNIT bool
nfence_fence_signal_needs_irq(struct nfence_fence *fence)
{
	bool irq;

	NFENCE_KUNIT_STUB(nfence_fence_signal_needs_irq, fence);
	rcu_read_lock();
	irq = READ_ONCE(*rcu_dereference(fence->cv.value)) >
	      READ_ONCE(*rcu_dereference(fence->mv.value));
	rcu_read_unlock();
	return irq;
}

/**
 * nfence_fence_signal - signal a fence from the CPU
 * @fence: the fence, one the CPU may signal (nfence_fence_arg_get()): its
 *	CurrentValue is never in VRAM, so no demotion moves it
 * @value: the new CurrentValue; ignored unless above the current one
 *
 * Barrier, 64-bit store, barrier, then the conditional interrupt check
 * against MonitoredValue. The signal ioctl, a submission's signal and the
 * syncobj bridge's signal come here; the engines store through their own
 * path (nfence_engine.c).
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
	nfence_value_raise(nfence_signal_cv(fence), value);
	/* Order the CurrentValue store before the MonitoredValue load. */
	smp_mb();
	if (fence->monitored) {
		/* No MonitoredValue: the OS checks the waiters itself. */
		nfence_interrupt_monitored(fence);
	} else if (fence->xgroup || nfence_fence_signal_needs_irq(fence)) {
		/*
		 * A cross-adapter fence's CPU signal reaches the other
		 * instances through the CPU, whatever its MonitoredValue
		 * (which is 0 unless its GPU takes peer signals).
		 */
		atomic64_inc(&stats->interrupts);
		nfence_interrupt(fence->adapter, &fence, 1);
	} else {
		atomic64_inc(&stats->suppressed);
	}
}

/* A fence FENCE_SIGNAL names, with a reference, and the value it signals. */
struct nfence_signal_arg {
	struct nfence_fence *fence;
	u64 value;
};

/* FENCE_SIGNAL of up to this many fences allocates nothing (128 bytes). */
#define NFENCE_SIGNAL_ONSTACK	8

/*
 * Copy in the @args->count handles and values of FENCE_SIGNAL into @out and
 * take their fences, each checked by nfence_fence_arg_get(); on an error
 * the fences taken are put again.
 */
static int nfence_signal_args_get(struct nfence_file *nfile,
				  const struct drm_nfence_fence_signal *args,
				  struct nfence_signal_arg *out)
{
	u32 __user *handles = u64_to_user_ptr(args->handles);
	u64 __user *values = u64_to_user_ptr(args->values);
	int ret = 0;
	u32 i, handle;

	for (i = 0; i < args->count; i++) {
		if (get_user(handle, &handles[i]) ||
		    get_user(out[i].value, &values[i])) {
			ret = -EFAULT;
			break;
		}
		out[i].fence = nfence_fence_arg_get(nfile, args->device, handle,
						    DRM_NFENCE_FENCE_NO_SIGNAL,
						    out[i].value);
		if (IS_ERR(out[i].fence)) {
			ret = PTR_ERR(out[i].fence);
			break;
		}
	}
	if (ret)
		while (i--)
			nfence_fence_put(out[i].fence);
	return ret;
}

/**
 * nfence_fence_signal_ioctl - DRM_IOCTL_NFENCE_FENCE_SIGNAL
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_signal
 * @file: the caller's file
 *
 * Return: 0, or -errno for bad input as the uapi documents; nothing is
 * signaled unless every handle is valid.
 */
int nfence_fence_signal_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_fence_signal *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_signal_arg onstack[NFENCE_SIGNAL_ONSTACK];
	struct nfence_signal_arg *fences = onstack;
	int ret;
	u32 i;

	if (args->pad || args->flags || !args->count ||
	    args->count > DRM_NFENCE_MAX_WAIT_FENCES)
		return -EINVAL;
	if (args->count > ARRAY_SIZE(onstack)) {
		fences = kcalloc(args->count, sizeof(*fences),
				 GFP_KERNEL_ACCOUNT);
		if (!fences)
			return -ENOMEM;
	}
	ret = nfence_signal_args_get(nfile, args, fences);
	if (!ret) {
		for (i = 0; i < args->count; i++)
			nfence_fence_signal(fences[i].fence, fences[i].value);
		/* Queues parked on these fences may run again. */
		nfence_cmp_kick_waiters(&adapter->cmp);
		for (i = 0; i < args->count; i++)
			nfence_fence_put(fences[i].fence);
	}
	if (fences != onstack)
		kfree(fences);
	return ret;
}

/* Wake what @fence's value satisfies, here and on other adapters. */
static unsigned int nfence_fence_process(struct nfence_fence *fence)
{
	return nfence_waitlist_process(&fence->waiters) +
	       nfence_fence_propagate(fence);
}

/**
 * nfence_fence_add_waiter - queue a CPU waiter on a fence
 * @fence: the fence
 * @w: the waiter, as nfence_waitlist_add() takes it
 *
 * nfence_waitlist_add(), then the fence gets the mark the interrupt
 * without a payload looks for (%NFENCE_FENCE_WATCHED) if it does not have
 * it: see nfence_interrupt_scan(). Every CPU waiter is queued through
 * here.
 *
 * Return: true if @w was satisfied at once (and not queued); false if it
 * was queued, which it may have left again by the time this returns.
 */
bool nfence_fence_add_waiter(struct nfence_fence *fence,
			     struct nfence_waiter *w)
{
	struct xarray *xa = &fence->adapter->fences;

	if (nfence_waitlist_add(&fence->waiters, w))
		return true;
	/* The waiter's count before the look at the mark. */
	smp_mb();
	if (!xa_get_mark(xa, fence->id, NFENCE_FENCE_WATCHED)) {
		xa_set_mark(xa, fence->id, NFENCE_FENCE_WATCHED);
		/* A scan that ran without the mark did not look: look now. */
		nfence_waitlist_process(&fence->waiters);
	}
	return false;
}

/*
 * Whether the scan takes @fence, the entry at @xas (table locked): a fence
 * without waiters loses its mark, unless it is a cross-adapter instance.
 */
static bool nfence_scan_keep(struct xa_state *xas, struct nfence_fence *fence)
{
	lockdep_assert_held(&xas->xa->xa_lock);
	if (fence->xgroup || nfence_waitlist_count(&fence->waiters))
		return true;
	xas_clear_mark(xas, NFENCE_FENCE_WATCHED);
	/* The clear before the second look at the count. */
	smp_mb();
	if (!nfence_waitlist_count(&fence->waiters))
		return false;
	xas_set_mark(xas, NFENCE_FENCE_WATCHED);
	return true;
}

/* Scans of every adapter, counted: a scan's number is unique. */
static atomic64_t nfence_scan_passes = ATOMIC64_INIT(0);

/*
 * The interrupt without a payload, and the optimized one that found a
 * signal log overrun: wake what the value of any fence satisfies. Only
 * marked fences (%NFENCE_FENCE_WATCHED) are looked at, NFENCE_SCAN_BATCH
 * under one hold of the fence table's lock: each batch is taken with
 * references, then processed with the lock dropped.
 *
 * A waiter whose fence has no mark is never missed. The adder counts the
 * waiter, issues a full barrier, then looks at the mark, and if it is
 * clear sets it and looks at the fence's value once more; the scan clears
 * the mark of a fence it finds without waiters, issues a full barrier,
 * then looks at the count again, and sets the mark back if it is not 0.
 * With full barriers on both sides, either the adder sees the mark clear
 * or the scan sees the count. A scan that missed the mark (it ran before
 * the adder set it, under the table's lock) is followed by the adder's
 * look at the value, which sees what the signal that raised that scan
 * stored.
 */
static unsigned int nfence_interrupt_scan(struct nfence_adapter *adapter)
{
	struct nfence_irq_stats *stats = &adapter->gpu.irq_stats;
	u64 pass = atomic64_inc_return(&nfence_scan_passes);
	struct nfence_fence *batch[NFENCE_SCAN_BATCH];
	XA_STATE(xas, &adapter->fences, 0);
	unsigned int i, n, woken = 0;
	struct nfence_fence *fence;
	u32 looked;
	bool more;

	do {
		n = 0;
		looked = 0;
		more = false;
		xas_lock(&xas);
		xas_for_each_marked(&xas, fence, ULONG_MAX,
				    NFENCE_FENCE_WATCHED) {
			/* A fence being released is still in the table. */
			if (nfence_scan_keep(&xas, fence) &&
			    kref_get_unless_zero(&fence->ref))
				batch[n++] = fence;
			if (++looked == NFENCE_SCAN_BATCH) {
				xas_pause(&xas);
				more = true;
				break;
			}
		}
		xas_unlock(&xas);
		if (looked > READ_ONCE(stats->max_scan))
			WRITE_ONCE(stats->max_scan, looked);
		/* A group's signal is passed on once per scan. */
		for (i = 0; i < n; i++) {
			woken += nfence_waitlist_process(&batch[i]->waiters) +
				 nfence_fence_propagate_scan(batch[i], pass);
			nfence_fence_put(batch[i]);
		}
	} while (more);
	return woken;
}

/* Wake what the signaled fences satisfy; returns the waiters woken. */
static unsigned int nfence_interrupt_process(struct nfence_adapter *adapter,
					     struct nfence_fence **fences,
					     unsigned int count)
{
	unsigned int i, woken = 0;

	if (!fences) {
		atomic64_inc(&adapter->gpu.irq_stats.scans);
		return nfence_interrupt_scan(adapter);
	}
	for (i = 0; i < count; i++)
		woken += nfence_fence_process(fences[i]);
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
	u64 start = ktime_get_ns();
	unsigned int woken = nfence_interrupt_process(adapter, fences, count);

	atomic64_add(ktime_get_ns() - start, &adapter->gpu.irq_stats.handler_ns);
	trace_nfence_interrupt(adapter->gpu.index,
			       fences ? NFENCE_TRACE_IRQ_FENCES :
					NFENCE_TRACE_IRQ_SCAN, count, woken);
	if (!woken)
		atomic64_inc(&adapter->gpu.irq_stats.spurious);
}

/*
 * Wake what the fence that @handle names in @nfile satisfies: the waiters
 * woken, or -ENOENT if @handle names no fence (any more).
 */
static int nfence_interrupt_handle(struct nfence_file *nfile, u32 handle)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence *fence = NULL;
	struct nfence_object *obj;
	unsigned int woken;

	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, handle);
	if (obj) {
		fence = container_of(obj, struct nfence_fence_local, obj)->fence;
		kref_get(&fence->ref);
	}
	nfence_table_unlock(table);
	if (!fence)
		return -ENOENT;
	woken = nfence_fence_process(fence);
	nfence_fence_put(fence);
	return woken;
}

/* The scan of nfence_interrupt_log(), made once per interrupt. */
static unsigned int nfence_interrupt_scan_once(struct nfence_adapter *adapter,
					       bool *scanned_all)
{
	if (*scanned_all)
		return 0;
	*scanned_all = true;
	return nfence_interrupt_scan(adapter);
}

/**
 * nfence_interrupt_log - the optimized interrupt's work for one queue
 * @adapter: the adapter
 * @nfile: the queue's file, whose fence handles the log entries name
 * @log: the queue's signal log, written by the GPU under &nfence_cmp.lock
 * @cursor: in/out: how far the interrupt path has read @log
 * @progress: the queue's progress fence
 * @scanned_all: in/out: this interrupt made the scan below already (for
 *	another queue of an engine-wide interrupt); false to begin with
 *
 * WDDM's UpdateNativeFenceLogs (a barrier, so that every entry the
 * GPU wrote is visible), then the entries logged since *@cursor: each
 * names a fence (by the handle the UMD gave the command) whose waiters its
 * value may satisfy now; they and the progress fence's are woken. If the
 * log overran since the last read (entries lost, WraparoundCount moved
 * past what was read), the interrupt without a payload's scan is made
 * instead: every fence of the adapter that has waiters, in batches (the
 * lost entries may have named any fence of @nfile, and a fence without
 * waiters has nothing to wake), once per interrupt: the GPU does not run
 * while the interrupt holds the CMP lock, so a second scan would find
 * nothing the first did not. So is an entry whose handle names no fence
 * any more: the handle was closed after the GPU logged the signal, but the
 * fence may live on through another handle, whose waiters the signal may
 * satisfy.
 *
 * Context: &nfence_cmp.lock held (the GPU does not write @log meanwhile).
 * Return: CPU waiters woken.
 */
unsigned int nfence_interrupt_log(struct nfence_adapter *adapter,
				  struct nfence_file *nfile,
				  struct nfence_log *log, u64 *cursor,
				  struct nfence_fence *progress, bool *scanned_all)
{
	struct nfence_irq_stats *stats = &adapter->gpu.irq_stats;
	struct drm_nfence_log_entry entries[8];
	unsigned int woken = nfence_fence_process(progress);
	bool scanned = false, overran = false;
	u32 count, status, i;
	u64 prev = U64_MAX;
	int ret;

	/* UpdateNativeFenceLogs: the GPU's log writes before our reads. */
	smp_mb();
	do {
		count = ARRAY_SIZE(entries);
		if (nfence_log_read(log, cursor, entries, &count,
				    &status)) {
			/* Ahead of the log: not ours to trust; read it anew. */
			*cursor = 0;
			status = DRM_NFENCE_LOG_READ_OVERRUN;
			count = 0;
		}
		if ((status & DRM_NFENCE_LOG_READ_OVERRUN) && !overran) {
			overran = true;
			atomic64_inc(&stats->overruns);
			woken += nfence_interrupt_scan_once(adapter,
							    scanned_all);
			scanned = true;
		}
		atomic64_add(count, &stats->log_entries);
		for (i = 0; i < count && !scanned; i++) {
			/* A run of signals of one fence: one look is enough. */
			if (entries[i].fence_handle == prev)
				continue;
			prev = entries[i].fence_handle;
			ret = nfence_interrupt_handle(nfile, prev);
			if (ret >= 0) {
				woken += ret;
				continue;
			}
			atomic64_inc(&stats->unnamed);
			woken += nfence_interrupt_scan_once(adapter,
							    scanned_all);
			scanned = true;
		}
	} while (count == ARRAY_SIZE(entries));
	return woken;
}

/**
 * nfence_interrupt_queue_start - count an optimized interrupt as it begins
 * @adapter: the adapter
 * @engine_wide: it names no queue: every queue of the engine is read
 *
 * Counted before any log is read, so that a waiter the interrupt wakes
 * finds it counted (the counters of debugfs nfence_interrupts).
 *
 * Return: the start of its handling, for nfence_interrupt_queue_done().
 */
u64 nfence_interrupt_queue_start(struct nfence_adapter *adapter,
				 bool engine_wide)
{
	struct nfence_irq_stats *stats = &adapter->gpu.irq_stats;

	atomic64_inc(engine_wide ? &stats->engine_irqs : &stats->queue_irqs);
	return ktime_get_ns();
}

/**
 * nfence_interrupt_queue_done - account for an optimized interrupt's end
 * @adapter: the adapter
 * @engine_wide: it named no queue: every queue of the engine was read
 * @queues: queues whose logs it read
 * @woken: CPU waiters it woke
 * @start: nfence_interrupt_queue_start()'s return
 */
void nfence_interrupt_queue_done(struct nfence_adapter *adapter,
				 bool engine_wide, unsigned int queues,
				 unsigned int woken, u64 start)
{
	struct nfence_irq_stats *stats = &adapter->gpu.irq_stats;

	atomic64_add(ktime_get_ns() - start, &stats->handler_ns);
	trace_nfence_interrupt(adapter->gpu.index,
			       engine_wide ? NFENCE_TRACE_IRQ_ENGINE :
					     NFENCE_TRACE_IRQ_QUEUE,
			       queues, woken);
	if (!woken)
		atomic64_inc(&stats->spurious);
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
	struct nfence_irq_stats *stats = &fence->adapter->gpu.irq_stats;
	u64 start = ktime_get_ns();
	unsigned int woken = nfence_interrupt_process(fence->adapter, &fence, 1);

	atomic64_add(ktime_get_ns() - start, &stats->handler_ns);

	trace_nfence_interrupt(fence->adapter->gpu.index,
			       NFENCE_TRACE_IRQ_MONITORED, 1, woken);
}

/**
 * nfence_interrupt_carry_checked - a carry found its fence not AlwaysSignaled
 * @fence: the fence
 *
 * Called between the carry's look at AlwaysSignaled and its store, where
 * the error of a cross-adapter fence's device on another adapter may land.
 * Does nothing; visible to KUnit, which stubs it to run such an error
 * there.
 */
NFENCE_VISIBLE_IF_KUNIT void
nfence_interrupt_carry_checked(struct nfence_fence *fence)
{
	NFENCE_KUNIT_STUB(nfence_interrupt_carry_checked, fence);
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
 * Context: the CMP thread, where nfence_interrupt() is called from, with
 * &nfence_cmp.lock held (no demotion moves CurrentValue meanwhile).
 */
void nfence_interrupt_carry(struct nfence_adapter *adapter,
			    struct nfence_fence *fence, u64 value)
{
	struct nfence_irq_stats *stats = &adapter->gpu.irq_stats;
	u64 start = ktime_get_ns();
	unsigned int woken;

	if (!READ_ONCE(fence->always_signaled)) {
		nfence_interrupt_carry_checked(fence);
		WRITE_ONCE(*nfence_signal_cv(fence), value);
		atomic64_inc(&stats->carries);
	}
	/*
	 * The CurrentValue store before the waiters' MonitoredValue, and
	 * before the second look at AlwaysSignaled (see DOC).
	 */
	smp_mb();
	if (fence->xgroup)
		nfence_fence_settle(fence);
	woken = nfence_interrupt_process(adapter, &fence, 1);
	atomic64_add(ktime_get_ns() - start, &stats->handler_ns);
	trace_nfence_interrupt(adapter->gpu.index, NFENCE_TRACE_IRQ_CARRY, 1,
			       woken);
}

/**
 * nfence_fence_settle - the second look after a GPU store to a fence
 * @fence: an instance of a cross-adapter fence, whose CurrentValue the GPU
 *	(or the driver, for a carry) has just stored, followed by a full
 *	barrier
 *
 * If the fence became AlwaysSignaled, the store may have landed after the
 * raise and lowered the value: raise it again (see DOC: fence signals, the
 * interrupt path and AlwaysSignaled). &nfence_cmp_ops.fence_settle.
 *
 * Context: &nfence_cmp.lock held.
 */
void nfence_fence_settle(struct nfence_fence *fence)
{
	if (READ_ONCE(fence->always_signaled))
		nfence_value_raise(nfence_signal_cv(fence),
				   NFENCE_ALWAYS_SIGNALED_VALUE);
}

/**
 * nfence_fence_set_always_signaled - the parent device of a fence is in error
 * @fence: the fence
 *
 * A cross-adapter fence is AlwaysSignaled on every adapter where it is
 * opened: its instances share CurrentValue, and they share this state too
 * (an instance opened afterwards inherits it, see nfence_xgroup_join()).
 * Every instance's flag is set before the value is raised, the order
 * nfence_fence_settle() pairs with; the waiters are released after.
 *
 * Context: &nfence_cmp.lock of @fence's adapter held: its engine does not
 * store to the fence meanwhile.
 */
void nfence_fence_set_always_signaled(struct nfence_fence *fence)
{
	struct nfence_xgroup *xg = fence->xgroup;
	struct nfence_fence *f;

	if (!xg) {
		nfence_value_raise(nfence_signal_cv(fence),
				   NFENCE_ALWAYS_SIGNALED_VALUE);
		nfence_instance_set_always_signaled(fence);
		return;
	}
	spin_lock(&xg->lock);
	list_for_each_entry(f, &xg->instances, xlink)
		WRITE_ONCE(f->always_signaled, true);
	/* The flags before the raise: pairs with nfence_fence_settle()'s. */
	smp_mb();
	nfence_value_raise(nfence_signal_cv(fence),
			   NFENCE_ALWAYS_SIGNALED_VALUE);
	list_for_each_entry(f, &xg->instances, xlink)
		nfence_instance_set_always_signaled(f);
	spin_unlock(&xg->lock);
}

/**
 * nfence_device_fences_error - make the fences a device created AlwaysSignaled
 * @wdev: the device, just put in error (&nfence_device.error set under its
 *	file's fence table lock: no handle joins &nfence_device.fences after)
 *
 * Walks the device's own list of the handles that created its fences, each
 * taken off it, never the file's other handles: the CMP lock, which its
 * caller holds, is held for as many steps as the device created fences,
 * however many the file has (a device that goes into error with none, as
 * %DRM_NFENCE_DEVICE_OP_MARK_ERROR of a new device does, costs nothing).
 */
void nfence_device_fences_error(struct nfence_device *wdev)
{
	struct nfence_table *table = nfence_file_table(wdev->file,
						       NFENCE_OBJ_FENCE);
	struct nfence_fence_local *local;
	struct nfence_fence *fence;

	for (;;) {
		nfence_table_lock(table);
		local = list_first_entry_or_null(&wdev->fences,
						 struct nfence_fence_local,
						 dev_link);
		if (local) {
			list_del_init(&local->dev_link);
			fence = local->fence;
			kref_get(&fence->ref);
		}
		nfence_table_unlock(table);
		if (!local)
			break;
		nfence_fence_set_always_signaled(fence);
		nfence_fence_put(fence);
		/* A device may create fences by the hundred thousand. */
		cond_resched();
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
	drm_printf(p, "scans: %lld\n", (long long)atomic64_read(&s->scans));
	drm_printf(p, "longest_scan: %u\n", READ_ONCE(s->max_scan));
	drm_printf(p, "queue_irqs: %lld\n",
		   (long long)atomic64_read(&s->queue_irqs));
	drm_printf(p, "engine_irqs: %lld\n",
		   (long long)atomic64_read(&s->engine_irqs));
	drm_printf(p, "log_entries: %lld\n",
		   (long long)atomic64_read(&s->log_entries));
	drm_printf(p, "overruns: %lld\n",
		   (long long)atomic64_read(&s->overruns));
	drm_printf(p, "unnamed: %lld\n",
		   (long long)atomic64_read(&s->unnamed));
	drm_printf(p, "peer_rings: %lld\n",
		   (long long)atomic64_read(&s->peer_rings));
	drm_printf(p, "peer_taken: %lld\n", (long long)atomic64_read(&s->peer_taken));
	drm_printf(p, "peer_overflows: %lld\n",
		   (long long)atomic64_read(&s->peer_overflows));
	drm_printf(p, "handler_ns: %lld\n",
		   (long long)atomic64_read(&s->handler_ns));
}
