// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/rcupdate.h>

#include <drm/nfence_drm.h>

#include "nfence_cmp_types.h"
#include "nfence_cs.h"
#include "nfence_engine.h"
#include "nfence_log.h"
#include "nfence_peer.h"
#include "nfence_trace.h"
#include "nfence_gpu.h"
#include "nfence_vm.h"

/**
 * DOC: engines
 *
 * The CMP runs a queue's commands on the queue's engine. Every memory
 * access goes through the queue's GPU address space under its lock, so
 * memory that user space frees meanwhile is either still mapped (and
 * alive) or a GPU page fault; 64-bit reads and writes are single accesses
 * (READ_ONCE()/WRITE_ONCE() of naturally aligned u64), never torn, unless
 * the GPU has no 64-bit atomics (below).
 *
 * FENCE_SIGNAL follows the order WDDM prescribes: a full barrier so
 * that everything the queue wrote before is visible first, the
 * CurrentValue store, a full barrier, then the MonitoredValue load and the
 * conditional interrupt. When the CurrentValue address is fence storage the
 * engine knows which fence it is (the hardware's view of its own fence
 * table) and passes it in the interrupt's signaled-fence array. For any
 * other memory the interrupt has no array and the driver scans every fence
 * with waiters; the engine coalesces those, as an interrupt controller does
 * with a line already pending: however many such signals a pass runs, the
 * CMP raises one interrupt after it, with &nfence_cmp.lock released
 * (nfence_engine_flush()). A client cannot make a pass scan the fences once
 * per command. Waking GPU waiters takes no interrupt: the CMP re-checks
 * parked queues itself after any engine write.
 *
 * A GPU without 64-bit atomics (No64BitAtomics, the adapter's
 * no_64bit_atomics) stores 32 bits at a time and compares fence values
 * 32 bits wide. FENCE_SIGNAL of a fence stores the low half of the value
 * when the high half already is the value's. When the high half must change
 * (the value crosses a multiple of 2^32, either way) the GPU cannot make the
 * update atomic: it stores nothing and raises the native fence signaled
 * interrupt, with which the driver stores the whole value
 * (nfence_interrupt_carry()): the OS handles the wrap, as
 * WDDM's context monitoring says, and no reader ever sees half a value.
 * Memory that is not a fence's CurrentValue, and WRITE64 and TIMESTAMP, get
 * two stores, low half first. WRITE64 and TIMESTAMP to the CurrentValue of
 * an AlwaysSignaled fence store nothing, as FENCE_SIGNAL does; a store to
 * an instance of a cross-adapter fence, which another adapter may make
 * AlwaysSignaled while this one stores, is followed by a full barrier and
 * &nfence_cmp_ops.fence_settle, which puts the value back up if that
 * happened (see DOC: fence signals, the interrupt path and AlwaysSignaled
 * in nfence_signal.c). FENCE_WAIT
 * compares the low halves as serial numbers, which is exact within
 * UINT_MAX/2 of the fence's value, the window the driver enforces for every
 * value it is given.
 */

/* The low (@high false) or high 32-bit half of an aligned u64 in memory. */
static u32 *nfence_half(u64 *p, bool high)
{
	return (u32 *)p + (high != IS_ENABLED(CONFIG_CPU_BIG_ENDIAN));
}

/*
 * A 64-bit store as a GPU without 64-bit atomics makes it to memory the
 * driver does not track: two 32-bit stores, low half first, so that counting
 * up a reader in between sees a value below the final one.
 */
static void nfence_engine_store_halves(u64 *p, u64 value)
{
	WRITE_ONCE(*nfence_half(p, false), lower_32_bits(value));
	/* The low half is visible before the high half. */
	smp_wmb();
	WRITE_ONCE(*nfence_half(p, true), upper_32_bits(value));
}

/*
 * A GPU without 64-bit atomics stores a fence's CurrentValue: the low half,
 * provided the high half already is @value's; false, with nothing stored,
 * when the high half must change. The compare-and-exchange stands for "a
 * 32-bit store into a word whose high half only the driver changes": a CPU
 * signal landing between the look at the high half and the store must not
 * leave a mix of both values.
 */
static bool nfence_engine_store_low(u64 *cv, u64 value)
{
	u64 old = READ_ONCE(*cv);

	while (upper_32_bits(old) == upper_32_bits(value)) {
		u64 prev = cmpxchg64(cv, old, value);

		if (prev == old)
			return true;
		old = prev;
	}
	return false;
}

/*
 * The fence whose CurrentValue is at @va, @p in the kernel, with a
 * reference; NULL for memory that is not one. A pool page's fence_at
 * answers for the whole stride of a slot: only its first word is the value.
 */
static struct nfence_fence *nfence_engine_fence_at(struct nfence_cmp *cmp,
						   struct nfence_vm_mapping *map,
						   u64 va, u64 *p,
						   struct nfence_cmp_fence *view)
{
	struct nfence_fence *fence;

	if (!map->fence_at)
		return NULL;
	fence = map->fence_at(map, va - map->start);
	if (!fence)
		return NULL;
	cmp->ops->fence_view(fence, view);
	if (view->cv != p) {
		cmp->ops->fence_put(fence);
		fence = NULL;
	}
	return fence;
}

/* Give back the reference nfence_engine_fence_at() took. */
static void nfence_engine_fence_put(struct nfence_cmp *cmp,
				    struct nfence_fence *fence)
{
	if (fence)
		cmp->ops->fence_put(fence);
}

/*
 * The id of the fence whose CurrentValue is at @va in @q's address space
 * (locked), for the trace: 0 for memory that is not a fence.
 */
static u32 nfence_engine_fence_id(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q, u64 va)
{
	struct nfence_vm_mapping *map;
	struct nfence_cmp_fence view;
	struct nfence_fence *fence;
	u64 *p;
	u32 id;

	p = nfence_vm_find_locked(q->vm, va, sizeof(u64), false, &map);
	if (!p)
		return 0;
	fence = nfence_engine_fence_at(cmp, map, va, p, &view);
	if (!fence)
		return 0;
	id = view.id;
	cmp->ops->fence_put(fence);
	return id;
}

/*
 * Log a fence operation the engine has just done in @q's log of @kind
 * (the command's payload, the GPU's timestamps). A wait's @observed is
 * when the engine first found it unresolved, 0 if it never did (then the
 * entry says it was observed when it ended); a signal's is 0, as the
 * WDDM signal entry has no FenceObservedGpuTimestamp.
 */
static void nfence_engine_log(struct nfence_cmp *cmp,
			      struct nfence_cmp_queue *q,
			      enum nfence_log_kind kind,
			      const struct nfence_cs_cmd *cmd, u64 observed)
{
	struct drm_nfence_log_entry entry = {
		.fence_value = cmd->value,
		.fence_handle = cmd->log_handle,
		.operation = cmd->log_op,
	};

	entry.end_gpu_timestamp = nfence_gpu_timestamp(cmp->gpu, NULL);
	if (kind == NFENCE_LOG_WAITS)
		entry.observed_gpu_timestamp = observed ?: entry.end_gpu_timestamp;
	nfence_log_append(&q->logs[kind], &entry);
	if (trace_nfence_log_entry_enabled())
		trace_nfence_log_entry(cmp->gpu->index, q->engine, q->id,
				       nfence_log_type(kind),
				       nfence_engine_fence_id(cmp, q, cmd->va),
				       &entry);
}

/*
 * The optimized interrupt (%NFENCE_IRQ_QUEUE) for a signal @q ran: one per
 * engine per pass, naming @q, or no queue if another queue of the engine
 * needs it too; raised at the end of the pass (nfence_engine_raise_queue_irq()).
 */
static void nfence_engine_queue_irq(struct nfence_cmp *cmp,
				    struct nfence_cmp_queue *q)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	if (!e->irq_queue)
		e->irq_queue = q;
	else if (e->irq_queue != q)
		e->irq_queues = true;
}

/*
 * Raise the native fence signaled interrupt for a signal that needs it,
 * with the payload the adapter's GPU gives it (&enum nfence_irq_payload).
 * The optimized interrupt names the queue only for a signal the queue's
 * signal log names truly (@log, naming @fence) or of the queue's progress
 * fence; the GPU cannot name the others, and raises the interrupt without
 * a payload for them, as for a signal of memory that is not a fence.
 */
static void nfence_engine_irq(struct nfence_cmp *cmp,
			      struct nfence_fence *fence, u64 value,
			      struct nfence_cmp_queue *q,
			      const struct nfence_cs_cmd *log)
{
	switch (cmp->gpu->cfg.irq_payload) {
	case NFENCE_IRQ_QUEUE:
		if (fence && q && (fence == q->progress ||
				   (log && cmp->ops->log_names(q, log->log_handle,
							       fence)))) {
			nfence_engine_queue_irq(cmp, q);
			return;
		}
		break;
	case NFENCE_IRQ_FENCES:
		if (fence) {
			cmp->ops->interrupt(cmp, fence, value, false);
			return;
		}
		break;
	}
	/* Coalesced: one scan for the pass (nfence_engine_flush()). */
	set_bit(NFENCE_CMP_SCAN, &cmp->pending);
}

/*
 * A GPU with a peer doorbell signaled @fence, an instance of a cross-adapter
 * fence, its value stored and followed by a full barrier: write the
 * fence's id into the peer doorbell of every other instance's GPU (DOC:
 * peer signals). Whether the fence has instances only the CPU can tell,
 * which the interrupt must reach whatever MonitoredValue says.
 */
static bool nfence_engine_ring_peers(struct nfence_cmp *cmp,
				     struct nfence_fence *fence,
				     const struct nfence_cmp_fence *view)
{
	struct nfence_irq_stats *stats = &cmp->gpu->irq_stats;
	const struct nfence_peer_table *table;
	bool cpu = true;
	u32 i, id;

	rcu_read_lock();
	table = cmp->ops->fence_peers(fence);
	if (table) {
		cpu = READ_ONCE(table->cpu_instances);
		for (i = 0; i < table->count; i++) {
			id = READ_ONCE(table->peer[i].id);
			if (!id || (table->peer[i].bell == cmp->gpu->bell &&
				    id == view->id))
				continue;
			if (nfence_peer_ring(table->peer[i].bell, id))
				atomic64_inc(&stats->peer_rings);
		}
	}
	rcu_read_unlock();
	return cpu;
}

/**
 * nfence_engine_peer_wakes - the CMP looks at its GPU's peer doorbell
 * @cmp: the CMP, whose lock is held
 *
 * For every fence id other GPUs wrote (DOC: peer signals), the instance's
 * MonitoredValue check; if any CPU waiter is satisfied, or the doorbell
 * overflowed, the native fence signaled interrupt without a payload,
 * raised once after the pass: the ids name fences this GPU holds no
 * reference to, and the driver's scan takes its own. The pass that
 * follows gives the queues parked on a FENCE_WAIT their look; while one
 * is parked (and the adapter is in D0), the CMP watches the doorbell for
 * %NFENCE_CMP_SPIN_NS more.
 */
void nfence_engine_peer_wakes(struct nfence_cmp *cmp)
{
	struct nfence_irq_stats *stats = &cmp->gpu->irq_stats;
	u32 ids[NFENCE_PEER_BELL_IDS], i, n, writes;
	bool irq, overflow;

	lockdep_assert_held(&cmp->lock);
	if (!cmp->gpu->bell)
		return;
	n = nfence_peer_drain(cmp->gpu->bell, ids, &writes, &overflow);
	if (!writes)
		return;
	atomic64_add(writes, &stats->peer_taken);
	if (overflow)
		atomic64_inc(&stats->peer_overflows);
	if (atomic_read(&cmp->num_parked) && !cmp->d3)
		cmp->peer_until_ns = ktime_get_ns() + NFENCE_CMP_SPIN_NS;
	irq = overflow;
	for (i = 0; i < n && !irq; i++)
		irq = cmp->ops->fence_id_exceeds(cmp, ids[i]);
	if (irq) {
		atomic64_inc(&stats->interrupts);
		/* Coalesced with the pass's others (nfence_engine_flush()). */
		set_bit(NFENCE_CMP_SCAN, &cmp->pending);
	}
}

/*
 * Signal through resolved pointers: @fence is the fence whose CurrentValue
 * @cv is and @view what the GPU saw of it, both NULL for other memory; @mv
 * NULL for no MonitoredValue. A monitored fence (WDDM 2.x) raises its
 * interrupt on every signal. With @log, the FENCE_SIGNAL @log is logged in
 * @q's signal log between the store and the barrier before the
 * MonitoredValue check, WDDM's order. @q is the queue that ran the
 * signal, NULL for none.
 */
static void nfence_engine_store_signal(struct nfence_cmp *cmp,
				       struct nfence_fence *fence,
				       const struct nfence_cmp_fence *view,
				       u64 *cv, u64 *mv, u64 value,
				       struct nfence_cmp_queue *q,
				       const struct nfence_cs_cmd *log)
{
	struct nfence_irq_stats *stats = &cmp->gpu->irq_stats;
	bool carry = false, cpu = false, irq;

	atomic64_inc(&stats->signals);
	/* Everything written before the signal is visible before it. */
	smp_mb();
	if (!cmp->gpu->cfg.no_64bit_atomics)
		WRITE_ONCE(*cv, value);
	else if (!fence)
		nfence_engine_store_halves(cv, value);
	else
		carry = !nfence_engine_store_low(cv, value);
	if (log)
		nfence_engine_log(cmp, q, NFENCE_LOG_SIGNALS, log, 0);
	/*
	 * Order the stores (value, log) before the MonitoredValue load, and
	 * before a cross-adapter fence's second look at AlwaysSignaled.
	 */
	smp_mb();
	if (view && view->cross_adapter && !carry) {
		cmp->ops->fence_settle(fence);
		if (cmp->gpu->bell)
			cpu = nfence_engine_ring_peers(cmp, fence, view);
	}
	irq = mv && (cpu || value > READ_ONCE(*mv));
	if (view && view->monitored) {
		atomic64_inc(&stats->monitored);
		cmp->ops->interrupt(cmp, fence, value, carry);
	} else if (carry) {
		/* Whatever the payload: the driver must store the value. */
		atomic64_inc(&stats->interrupts);
		cmp->ops->interrupt(cmp, fence, value, true);
	} else if (irq) {
		atomic64_inc(&stats->interrupts);
		nfence_engine_irq(cmp, fence, value, q, log);
	} else if (mv) {
		atomic64_inc(&stats->suppressed);
	}
}

/**
 * nfence_engine_signal_fence - the GPU signals a fence it knows
 * @cmp: the CMP
 * @q: the queue that runs the signal, NULL for none
 * @fence: the fence (@q's progress fence)
 * @value: the new CurrentValue
 *
 * A fence that is AlwaysSignaled is not written.
 */
void nfence_engine_signal_fence(struct nfence_cmp *cmp,
				struct nfence_cmp_queue *q,
				struct nfence_fence *fence, u64 value)
{
	struct nfence_cmp_fence view;

	cmp->ops->fence_view(fence, &view);
	if (!view.always_signaled) {
		trace_nfence_fence_signal(cmp->gpu->index, view.id, value, true);
		nfence_engine_store_signal(cmp, fence, &view, view.cv, view.mv,
					   value, q, NULL);
	}
}

/* FENCE_SIGNAL of @q, address space locked: 0, or a fault reason. */
static int nfence_engine_fence_signal(struct nfence_cmp *cmp,
				      struct nfence_cmp_queue *q,
				      const struct nfence_cs_cmd *cmd,
				      u64 *fault_va)
{
	const struct nfence_cs_cmd *log = cmd->log ? cmd : NULL;
	struct nfence_vm *vm = q->vm;
	struct nfence_vm_mapping *map;
	struct nfence_cmp_fence view;
	struct nfence_fence *fence;
	u64 *cv, *mv = NULL;

	cv = nfence_vm_find_locked(vm, cmd->va, sizeof(u64), true, &map);
	if (!cv) {
		*fault_va = cmd->va;
		return DRM_NFENCE_FAULT_PAGE;
	}
	if (cmd->va2) {
		mv = nfence_vm_find_locked(vm, cmd->va2, sizeof(u64), false,
					   NULL);
		if (!mv) {
			*fault_va = cmd->va2;
			return DRM_NFENCE_FAULT_PAGE;
		}
	}
	fence = nfence_engine_fence_at(cmp, map, cmd->va, cv, &view);
	if (fence && !view.always_signaled)
		trace_nfence_fence_signal(cmp->gpu->index, view.id, cmd->value,
					  true);
	if (!fence || !view.always_signaled)
		nfence_engine_store_signal(cmp, fence, fence ? &view : NULL, cv,
					   mv, cmd->value, q, log);
	else if (log)
		/* An AlwaysSignaled fence is not written; the command ran. */
		nfence_engine_log(cmp, q, NFENCE_LOG_SIGNALS, log, 0);
	nfence_engine_fence_put(cmp, fence);
	return 0;
}

/*
 * A 64-bit GPU write, address space locked; false for a page fault. The
 * CurrentValue of an AlwaysSignaled fence is not written: nothing lowers it
 * once it is (on this adapter the flag is set under the CMP lock, held
 * here; a cross-adapter fence's store is settled, see DOC: engines).
 */
static bool nfence_engine_write64(struct nfence_cmp *cmp, struct nfence_vm *vm,
				  u64 va, u64 value)
{
	struct nfence_vm_mapping *map;
	struct nfence_cmp_fence view;
	struct nfence_fence *fence;
	u64 *p;

	p = nfence_vm_find_locked(vm, va, sizeof(u64), true, &map);
	if (!p)
		return false;
	fence = nfence_engine_fence_at(cmp, map, va, p, &view);
	if (fence && view.always_signaled)
		goto out;
	if (cmp->gpu->cfg.no_64bit_atomics)
		nfence_engine_store_halves(p, value);
	else
		WRITE_ONCE(*p, value);
	if (fence && view.cross_adapter) {
		/* The store before the second look at AlwaysSignaled. */
		smp_mb();
		cmp->ops->fence_settle(fence);
	}
out:
	nfence_engine_fence_put(cmp, fence);
	return true;
}

/*
 * FENCE_WAIT, address space locked: whether the value at @va has reached
 * @value (64 bits wide, or the low halves as serial numbers on a GPU without
 * 64-bit atomics). The CurrentValue of an AlwaysSignaled fence has, whatever
 * its storage holds (values above 0xFFFFFFFF too). False with *@fault set
 * for a page fault.
 */
static bool nfence_engine_wait_done(struct nfence_cmp *cmp, struct nfence_vm *vm,
				    u64 va, u64 value, bool *fault)
{
	struct nfence_vm_mapping *map;
	struct nfence_cmp_fence view;
	struct nfence_fence *fence;
	bool done;
	u64 *p;

	p = nfence_vm_find_locked(vm, va, sizeof(u64), false, &map);
	*fault = !p;
	if (!p)
		return false;
	if (cmp->gpu->cfg.no_64bit_atomics ?
	    nfence_value32_reached(READ_ONCE(*p), value) :
	    READ_ONCE(*p) >= value)
		return true;
	fence = nfence_engine_fence_at(cmp, map, va, p, &view);
	done = fence && view.always_signaled;
	nfence_engine_fence_put(cmp, fence);
	return done;
}

/**
 * nfence_engine_queue_unpark_locked - a queue no longer waits on a FENCE_WAIT
 * @cmp: the CMP, whose lock is held
 * @q: the queue: its FENCE_WAIT was resolved, or it will never run it (it
 *	stopped, its ring went, or the command at its head is another now)
 *
 * Takes @q out of &nfence_cmp.num_parked if it was counted there, and
 * forgets when its engine first found the wait unresolved.
 */
void nfence_engine_queue_unpark_locked(struct nfence_cmp *cmp,
				       struct nfence_cmp_queue *q)
{
	lockdep_assert_held(&cmp->lock);
	q->wait_seen_ts = 0;
	if (!q->parked)
		return;
	q->parked = false;
	atomic_dec(&cmp->num_parked);
}

/*
 * @q found its FENCE_WAIT @cmd unresolved: count it as parked, the first
 * time, and look again. From the count on, a CPU signal kicks the CMP
 * (nfence_cmp_kick_waiters()); one that came before it is seen by this
 * look, the barrier pairing with the signaller's. Whether the wait is
 * resolved now; *@fault as nfence_engine_wait_done().
 */
static bool nfence_engine_park(struct nfence_cmp *cmp,
			       struct nfence_cmp_queue *q,
			       const struct nfence_cs_cmd *cmd, bool *fault)
{
	if (*fault || q->parked)
		return false;
	q->parked = true;
	atomic_inc(&cmp->num_parked);
	/* Order the count's store before the fence's load. */
	smp_mb__after_atomic();
	return nfence_engine_wait_done(cmp, q->vm, cmd->va, cmd->value, fault);
}

/*
 * Fetch and decode the command at @va, address space locked. @base is the
 * kernel address of @va when the whole rest of the buffer translates in
 * one mapping (the common case: one lookup per turn), NULL otherwise.
 */
static int nfence_engine_fetch(struct nfence_vm *vm, u64 va, const u8 *base,
			       u64 left, struct nfence_cs_cmd *cmd)
{
	u8 buf[NFENCE_CS_MAX_CMD_BYTES];
	const u8 *p = base ? base : buf;
	u32 bytes, reason;
	__le32 header;

	if (left < 8)
		return DRM_NFENCE_FAULT_BAD_COMMAND;
	if (!base && nfence_vm_read_locked(vm, va, buf, 8))
		return DRM_NFENCE_FAULT_PAGE;
	memcpy(&header, p, sizeof(header));
	bytes = nfence_cs_cmd_bytes(le32_to_cpu(header));
	if (!bytes || bytes > left)
		return DRM_NFENCE_FAULT_BAD_COMMAND;
	if (!base && bytes > 8 &&
	    nfence_vm_read_locked(vm, va + 8, buf + 8, bytes - 8))
		return DRM_NFENCE_FAULT_PAGE;
	if (nfence_cs_decode(p, bytes, cmd, &reason) < 0)
		return reason;
	return 0;
}

/*
 * Run one command, address space locked; 0, or a fault reason. *@fault_va
 * comes in as the command's address, which an invalid command keeps; a
 * page fault sets it to the operand.
 */
static int nfence_engine_exec(struct nfence_cmp *cmp,
			      struct nfence_cmp_engine *e,
			      struct nfence_cmp_queue *q,
			      const struct nfence_cs_cmd *cmd, u64 now,
			      int *result, u64 *fault_va)
{
	bool fault;

	/* A log payload needs log buffers: an invalid command. */
	if (cmd->log && !q->logs)
		return DRM_NFENCE_FAULT_BAD_COMMAND;
	*fault_va = cmd->va;
	switch (cmd->opcode) {
	case DRM_NFENCE_CS_FENCE_WAIT:
		if (!nfence_engine_wait_done(cmp, q->vm, cmd->va, cmd->value,
					     &fault) &&
		    !nfence_engine_park(cmp, q, cmd, &fault)) {
			if (fault)
				return DRM_NFENCE_FAULT_PAGE;
			/*
			 * When the engine first found it unresolved: this
			 * wait, not another the CPU wrote over at its place.
			 */
			if (!q->wait_seen_ts || q->wait_va != cmd->va ||
			    q->wait_value != cmd->value)
				q->wait_seen_ts =
					nfence_gpu_timestamp(cmp->gpu, NULL);
			nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_WAIT_FENCE);
			q->wait_va = cmd->va;
			q->wait_value = cmd->value;
			*result = NFENCE_RUN_BLOCKED;
			return 0;
		}
		/* The caller unparks the queue after it. */
		if (cmd->log)
			nfence_engine_log(cmp, q, NFENCE_LOG_WAITS, cmd,
					  q->wait_seen_ts);
		return 0;
	case DRM_NFENCE_CS_FENCE_SIGNAL:
		return nfence_engine_fence_signal(cmp, q, cmd, fault_va);
	case DRM_NFENCE_CS_WRITE64:
		if (!nfence_engine_write64(cmp, q->vm, cmd->va, cmd->value))
			return DRM_NFENCE_FAULT_PAGE;
		return 0;
	case DRM_NFENCE_CS_TIMESTAMP:
		if (!nfence_engine_write64(cmp, q->vm, cmd->va,
					   nfence_gpu_timestamp(cmp->gpu, NULL)))
			return DRM_NFENCE_FAULT_PAGE;
		return 0;
	case DRM_NFENCE_CS_WORK:
		if (cmd->value) {
			/*
			 * From when it runs, not from the pass's start: the
			 * commands before it in this pass took time, and a
			 * TIMESTAMP just before it must see it last its time.
			 */
			now = ktime_get_ns();
			trace_nfence_work(cmp->gpu->index, q->engine, q->id,
					  nfence_gpu_timestamp(cmp->gpu, NULL),
					  cmd->value);
			e->busy = q;
			e->busy_until_ns = now + cmd->value;
			nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_RUNNING);
			q->work_start_ns = now;
			*result = NFENCE_RUN_BUSY;
		}
		return 0;
	default:
		return 0;
	}
}

/* The head entry of @q has run: off the queue, to the driver. */
static void nfence_engine_complete(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q,
				   struct nfence_cmp_entry *sub)
{
	list_del(&sub->link);
	q->num_pending--;
	cmp->ops->entry_done(q, sub);
}

/*
 * A user-mode queue with nothing pending: put the next entry of its ring
 * on its pending list, if its doorbell named one. 0, or a fault reason
 * with *@fault_va.
 */
static int nfence_engine_ring_next(struct nfence_cmp_queue *q, u64 *fault_va)
{
	struct nfence_cmp_ring *ring = q->ring;
	struct {
		__le64 commands_gpu_va;
		__le32 size;
		__le32 flags;
	} re;
	u64 va, cmds;
	u32 idx, size;

	if (!ring || ring->queued || ring->read_index == ring->seen)
		return 0;
	div_u64_rem(ring->read_index, ring->num_entries, &idx);
	va = ring->ring_va + (u64)idx * sizeof(re);
	*fault_va = va;
	if (nfence_vm_read_locked(q->vm, va, &re, sizeof(re)))
		return DRM_NFENCE_FAULT_PAGE;
	cmds = le64_to_cpu(re.commands_gpu_va);
	size = le32_to_cpu(re.size);
	if (re.flags || !size || size > DRM_NFENCE_MAX_SUBMIT_SIZE ||
	    !IS_ALIGNED(size, 8) || !IS_ALIGNED(cmds, 8))
		return DRM_NFENCE_FAULT_BAD_RING;
	ring->entry.va = cmds;
	ring->entry.size = size;
	ring->entry.offset = 0;
	list_add_tail(&ring->entry.link, &q->pending);
	q->num_pending++;
	ring->queued = true;
	return 0;
}

/*
 * The ring entry at the head of @q has run: off the queue, and the read
 * index advanced (and stored in the ring control). 0, or a fault reason
 * with *@fault_va.
 */
static int nfence_engine_ring_done(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q, u64 *fault_va)
{
	struct nfence_cmp_ring *ring = q->ring;

	list_del(&ring->entry.link);
	q->num_pending--;
	ring->queued = false;
	ring->read_index++;
	if (!ring->control_va)
		return 0;
	*fault_va = ring->control_va + offsetof(struct drm_nfence_ring_control,
						read_index);
	if (!nfence_engine_write64(cmp, q->vm, *fault_va, ring->read_index))
		return DRM_NFENCE_FAULT_PAGE;
	return 0;
}

/* A queue's turn, with its address space locked. */
static int nfence_engine_turn(struct nfence_cmp *cmp,
			      struct nfence_cmp_engine *e,
			      struct nfence_cmp_queue *q, u64 now,
			      unsigned int max, unsigned int *ran,
			      struct list_head *dropped)
{
	struct nfence_cmp_entry *sub, *mapped = NULL;
	const u8 *base = NULL;
	struct nfence_cs_cmd cmd;
	int result = NFENCE_RUN_YIELD;
	u64 fault_va = 0;
	int reason;

	nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_READY);
	while (*ran < max) {
		if (list_empty(&q->pending)) {
			reason = nfence_engine_ring_next(q, &fault_va);
			if (reason)
				goto fault;
		}
		sub = list_first_entry_or_null(&q->pending,
					       struct nfence_cmp_entry, link);
		if (!sub) {
			nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_IDLE);
			return NFENCE_RUN_IDLE;
		}
		if (sub->kind == NFENCE_SUB_WAIT ||
		    sub->kind == NFENCE_SUB_SIGNAL) {
			if (!cmp->ops->entry_step(cmp, sub)) {
				nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_WAIT_CPU);
				return NFENCE_RUN_BLOCKED;
			}
			nfence_engine_complete(cmp, q, sub);
			(*ran)++;
			continue;
		}
		if (sub->offset >= sub->size) {
			mapped = NULL;
			(*ran)++;
			if (sub->kind == NFENCE_SUB_RING) {
				reason = nfence_engine_ring_done(cmp, q,
								 &fault_va);
				if (reason)
					goto fault;
				continue;
			}
			nfence_engine_signal_fence(cmp, q, q->progress,
						   sub->progress_value);
			nfence_engine_complete(cmp, q, sub);
			continue;
		}

		fault_va = sub->va + sub->offset;
		if (sub != mapped) {
			mapped = sub;
			base = nfence_vm_find_locked(q->vm, sub->va, sub->size,
						     false, NULL);
		}
		reason = nfence_engine_fetch(q->vm, fault_va,
					     base ? base + sub->offset : NULL,
					     sub->size - sub->offset, &cmd);
		if (reason == DRM_NFENCE_FAULT_MISALIGNED)
			/* The decoder filled in the operands: blame the bad one. */
			fault_va = IS_ALIGNED(cmd.va, 8) ? cmd.va2 : cmd.va;
		else if (!reason)
			reason = nfence_engine_exec(cmp, e, q, &cmd, now,
						    &result, &fault_va);
		if (reason)
			goto fault;
		if (result == NFENCE_RUN_BLOCKED)
			return result;
		/*
		 * The head ran: the queue waits on nothing, whether it was
		 * its FENCE_WAIT, resolved, or a command the CPU wrote over
		 * the FENCE_WAIT it had parked on.
		 */
		nfence_engine_queue_unpark_locked(cmp, q);
		sub->offset += cmd.bytes;
		atomic64_inc(&cmp->commands);
		(*ran)++;
		if (result == NFENCE_RUN_BUSY)
			return result;
	}
	return NFENCE_RUN_YIELD;

fault:
	atomic64_inc(&cmp->faults);
	cmp->ops->queue_fault(cmp, q, fault_va, reason, dropped);
	return NFENCE_RUN_FAULT;
}

/**
 * nfence_engine_flush - raise the interrupt the engines coalesced
 * @cmp: the CMP, whose lock is not held
 *
 * FENCE_SIGNALs to memory that is not a fence, which need the interrupt
 * without a signaled-fence array (a scan of every fence), raise it once
 * here for all of them since the last flush.
 */
void nfence_engine_flush(struct nfence_cmp *cmp)
{
	if (test_and_clear_bit(NFENCE_CMP_SCAN, &cmp->pending))
		cmp->ops->interrupt(cmp, NULL, 0, false);
}

/**
 * nfence_engine_raise_queue_irq - raise the optimized interrupt of an engine
 * @cmp: the CMP, whose lock is held
 * @e: the engine
 *
 * With %NFENCE_IRQ_QUEUE, the signals that needed the driver since the
 * last call made the engine note the queue that ran them; this raises one
 * interrupt for them: naming that queue, or no queue when there were
 * several. The queue is alive: a queue leaves the runlist through
 * nfence_cmp_queue_remove_locked(), which raises it first.
 */
void nfence_engine_raise_queue_irq(struct nfence_cmp *cmp,
				   struct nfence_cmp_engine *e)
{
	struct nfence_cmp_queue *q = e->irq_queues ? NULL : e->irq_queue;

	lockdep_assert_held(&cmp->lock);
	if (!e->irq_queue)
		return;
	e->irq_queue = NULL;
	e->irq_queues = false;
	cmp->ops->interrupt_queue(cmp, e - cmp->engines, q);
}

/**
 * nfence_engine_run - give a queue a turn on its engine
 * @cmp: the CMP, whose lock is held
 * @e: the queue's engine, not busy
 * @q: a runnable queue
 * @now: the current CLOCK_MONOTONIC time in ns
 * @max: the most commands and completed submissions the turn may count
 *	(the rest of the engine's budget in this pass); at most
 *	%NFENCE_ENGINE_BUDGET are run whatever @max says
 * @ran: out: commands and submissions completed, at most @max
 * @dropped: where the submissions of a faulting context go
 *
 * Runs commands until @ran reaches @max (or %NFENCE_ENGINE_BUDGET), then
 * yields with the queue still ready. A FENCE_WAIT that is not
 * satisfied leaves the queue parked at that command; it runs again when the
 * CMP gives the queue its next turn.
 *
 * Return: &enum nfence_run_result.
 */
int nfence_engine_run(struct nfence_cmp *cmp, struct nfence_cmp_engine *e,
		      struct nfence_cmp_queue *q, u64 now, unsigned int max,
		      unsigned int *ran, struct list_head *dropped)
{
	int ret;

	lockdep_assert_held(&cmp->lock);
	*ran = 0;
	/* One address space lock for the whole turn. */
	mutex_lock(&q->vm->lock);
	ret = nfence_engine_turn(cmp, e, q, now,
				 min(max, NFENCE_ENGINE_BUDGET), ran, dropped);
	mutex_unlock(&q->vm->lock);
	return ret;
}
