/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CMP_TYPES_H__
#define __NFENCE_CMP_TYPES_H__

/*
 * The state of the context management processor: its queues, rings,
 * engines and ops table, as the engines that run them and the objects that
 * own them see it. nfence_cmp.h declares what the CMP does with it.
 */

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "nfence_gpu.h"

/* &nfence_cmp.pending: a kick (more to look at) */
#define NFENCE_CMP_KICK	0
/* &nfence_cmp.pending: an interrupt without fences to raise after the pass */
#define NFENCE_CMP_SCAN	1

/*
 * NFENCE_CMP_PASS_BUDGET: commands (and completed submissions) one engine
 * may run in one pass, over all its queues' turns
 */
#define NFENCE_CMP_PASS_BUDGET	2048

/*
 * NFENCE_CMP_VISIT_BUDGET: queues a pass looks at under one hold of
 * &nfence_cmp.lock, over all engines: given a turn, whether it runs anything
 * or not (a queue parked on a FENCE_WAIT looks at its fence and runs
 * nothing), or passed over (idle, suspended, stopped)
 */
#define NFENCE_CMP_VISIT_BUDGET	64

/*
 * NFENCE_CMP_SPIN_NS: once it has run the work of a ring that came back to
 * back (nfence_cmp_spinning()), the CMP reads the doorbells back to back
 * for this long instead of every %NFENCE_CMP_POLL_NS: two poll periods,
 * for a process's turnaround between its work done and its next ring. It
 * watches its peer doorbell as long after finding ids there.
 */
#define NFENCE_CMP_SPIN_NS	(200 * NSEC_PER_USEC)

struct drm_printer;
struct nfence_cmp;
struct nfence_fence;
struct nfence_peer_table;
struct nfence_log;
struct nfence_gpu;
struct nfence_vm;
struct task_struct;

/**
 * enum nfence_queue_state - where a hardware queue is, for the CMP
 * @NFENCE_QUEUE_IDLE: nothing pending
 * @NFENCE_QUEUE_READY: runnable
 * @NFENCE_QUEUE_RUNNING: running a WORK command on its engine
 * @NFENCE_QUEUE_WAIT_FENCE: parked on a FENCE_WAIT command
 * @NFENCE_QUEUE_WAIT_CPU: held by the kernel at a legacy wait or signal
 * @NFENCE_QUEUE_FAULTED: its context faulted; runs nothing again
 * @NFENCE_QUEUE_LOST: its device is in error; runs nothing again
 */
enum nfence_queue_state {
	NFENCE_QUEUE_IDLE,
	NFENCE_QUEUE_READY,
	NFENCE_QUEUE_RUNNING,
	NFENCE_QUEUE_WAIT_FENCE,
	NFENCE_QUEUE_WAIT_CPU,
	NFENCE_QUEUE_FAULTED,
	NFENCE_QUEUE_LOST,
};

/**
 * enum nfence_sub_kind - kinds of queued entries
 * @NFENCE_SUB_COMMANDS: a command buffer (kernel-mode submission)
 * @NFENCE_SUB_WAIT: a legacy wait held by CPU waiters
 * @NFENCE_SUB_SIGNAL: a legacy signal done by a kernel worker
 * @NFENCE_SUB_RING: a command buffer a user-mode queue's ring named
 *	(&nfence_cmp_ring.entry); the CMP's own, never the driver's
 */
enum nfence_sub_kind {
	NFENCE_SUB_COMMANDS,
	NFENCE_SUB_WAIT,
	NFENCE_SUB_SIGNAL,
	NFENCE_SUB_RING,
};

/**
 * struct nfence_cmp_entry - what the CMP knows of one entry of a queue
 *
 * Embedded in the driver's submission. The CMP runs a COMMANDS entry
 * itself and hands the legacy kinds to &nfence_cmp_ops.entry_step.
 */
struct nfence_cmp_entry {
	/** @link: entry in &nfence_cmp_queue.pending */
	struct list_head link;
	/** @kind: &enum nfence_sub_kind */
	u32 kind;
	/** @size: COMMANDS: bytes of commands */
	u32 size;
	/** @va: COMMANDS: GPU VA of the commands */
	u64 va;
	/** @offset: COMMANDS: bytes already run */
	u64 offset;
	/** @progress_value: COMMANDS: progress fence value when done */
	u64 progress_value;
};

/**
 * struct nfence_cmp_context - what the CMP knows of a context
 *
 * Embedded in the driver's context; under &nfence_cmp.lock.
 */
struct nfence_cmp_context {
	/** @suspended: not scheduled */
	bool suspended;
	/**
	 * @priority: scheduling priority, %DRM_NFENCE_CONTEXT_PRIORITY_MIN
	 * to %DRM_NFENCE_CONTEXT_PRIORITY_MAX (see DOC: context management
	 * processor)
	 */
	s8 priority;
};

/**
 * struct nfence_cmp_ring - what the CMP knows of a user-mode queue's ring
 *
 * Embedded in the driver's doorbell; &nfence_cmp_queue.ring points to it
 * while the doorbell lives. @ring_va, @control_va, @num_entries and
 * @status are set before nfence_cmp_ring_attach_locked() and fixed after;
 * the rest is under &nfence_cmp.lock.
 */
struct nfence_cmp_ring {
	/** @ring_va: GPU VA of the ring buffer */
	u64 ring_va;
	/** @control_va: GPU VA of the ring control, 0 for none */
	u64 control_va;
	/** @num_entries: entries in the ring buffer */
	u32 num_entries;
	/** @slot: the physical doorbell it is connected to, -1 for none */
	int slot;
	/** @status: kernel address of the doorbell status word */
	u64 *status;
	/** @seen: the last write index the CMP took from the doorbell */
	u64 seen;
	/** @read_index: entries finished */
	u64 read_index;
	/** @rung_ns: when the CMP last saw a ring (or connect), for the LRU */
	u64 rung_ns;
	/**
	 * @bound_ns: when it was connected to its physical doorbell: until
	 * it rings or %NFENCE_DOORBELL_GRACE_NS pass, no connect takes it
	 */
	u64 bound_ns;
	/** @entry: the command buffer being run, while @queued */
	struct nfence_cmp_entry entry;
	/** @queued: @entry is on the queue's pending list */
	bool queued;
};

/**
 * struct nfence_cmp_queue - what the CMP knows of a hardware queue
 *
 * Embedded in the driver's queue. @engine, @ctx, @vm, @progress and
 * @no_timeout are set before nfence_cmp_queue_add_locked() and fixed
 * after; the rest is under &nfence_cmp.lock.
 */
struct nfence_cmp_queue {
	/** @engine: engine ordinal */
	u32 engine;
	/** @id: adapter-wide id, for debugfs */
	u32 id;
	/** @no_timeout: DisableGpuTimeout: the hang timeout does not apply */
	bool no_timeout;
	/** @ctx: the context's CMP state */
	struct nfence_cmp_context *ctx;
	/** @vm: the GPU address space the queue's commands run in */
	struct nfence_vm *vm;
	/** @progress: the progress fence, signaled as COMMANDS entries end */
	struct nfence_fence *progress;
	/** @engine_link: entry in the engine's runlist */
	struct list_head engine_link;
	/**
	 * @bound_link: entry in &nfence_cmp.bound while its ring is bound to
	 * a physical doorbell
	 */
	struct list_head bound_link;
	/** @pending: queued &struct nfence_cmp_entry, oldest first */
	struct list_head pending;
	/** @num_pending: entries in @pending */
	u32 num_pending;
	/** @state: &enum nfence_queue_state */
	u32 state;
	/** @wait_va: WAIT_FENCE: the address waited on */
	u64 wait_va;
	/** @wait_value: WAIT_FENCE: the value waited for */
	u64 wait_value;
	/** @work_start_ns: RUNNING: when the WORK command started */
	u64 work_start_ns;
	/** @ring: a user-mode queue's ring while it has a doorbell, or NULL */
	struct nfence_cmp_ring *ring;
	/**
	 * @logs: its native fence log buffers, by &enum nfence_log_kind;
	 * NULL for none. Set before the queue is added, fixed after.
	 */
	struct nfence_log *logs;
	/**
	 * @wait_seen_ts: GPU timestamp when the engine first found the
	 * FENCE_WAIT it is parked on unresolved; 0 when it is not parked
	 */
	u64 wait_seen_ts;
	/**
	 * @parked: counted in &nfence_cmp.num_parked: the engine found a
	 * FENCE_WAIT of this queue unresolved, and nothing has resolved it
	 * or stopped the queue since
	 */
	bool parked;
	/**
	 * @streak: turns in a row it has had at the head of its runlist (a
	 * positive priority keeps it there for that many more)
	 */
	u8 streak;
	/** @last_turn: &nfence_cmp_engine.turns after its last turn */
	u32 last_turn;
};

/**
 * nfence_cmp_queue_stopped - whether a queue stopped for good
 * @q: the queue, its CMP's lock held
 *
 * Return: true once its context faulted or its device is lost.
 */
static inline bool nfence_cmp_queue_stopped(const struct nfence_cmp_queue *q)
{
	return q->state == NFENCE_QUEUE_FAULTED || q->state == NFENCE_QUEUE_LOST;
}

/**
 * nfence_cmp_queue_held - whether a queue runs nothing until told to
 * @q: the queue, its CMP's lock held
 *
 * Return: true once it stopped for good, and while its context is
 * suspended (only its process resumes it).
 */
static inline bool nfence_cmp_queue_held(const struct nfence_cmp_queue *q)
{
	return nfence_cmp_queue_stopped(q) || q->ctx->suspended;
}

/**
 * typedef nfence_cmp_queue_fn_t - what nfence_cmp_walk_queues_locked() calls
 * @q: the queue
 * @data: the caller's data
 */
typedef void (*nfence_cmp_queue_fn_t)(struct nfence_cmp_queue *q, void *data);

/**
 * struct nfence_cmp_fence - a fence as the GPU sees it
 */
struct nfence_cmp_fence {
	/** @cv: kernel address of its CurrentValue */
	u64 *cv;
	/** @mv: kernel address of its MonitoredValue */
	u64 *mv;
	/** @always_signaled: AlwaysSignaled: the GPU does not write it */
	bool always_signaled;
	/**
	 * @cross_adapter: an instance of a cross-adapter fence: another
	 * adapter can make it AlwaysSignaled without this CMP's lock, so a
	 * store to its CurrentValue is followed by a full barrier and
	 * &nfence_cmp_ops.fence_settle
	 */
	bool cross_adapter;
	/** @id: the fence's adapter-wide id (for tracing) */
	u32 id;
	/**
	 * @monitored: a WDDM 2.x monitored fence: every signal raises the
	 * monitored fence signaled interrupt, whatever @mv holds
	 */
	bool monitored;
};

/**
 * struct nfence_cmp_ops - how the CMP reports to the driver
 *
 * The driver registers these with nfence_cmp_start() (KUnit with
 * nfence_cmp_init()); with the &nfence_vm_mapping.fence_at of fence
 * storage (the hardware's view of its own fence table), they are the only
 * way the simulated GPU calls up into the driver, as a GPU raises
 * interrupts. The ones that take
 * @dropped run with &nfence_cmp.lock held and move stopped entries there;
 * the CMP hands the list to @entries_drop once it has dropped the lock.
 */
struct nfence_cmp_ops {
	/**
	 * @interrupt: the native fence signaled interrupt. @fence is the
	 * fence signaled, NULL for memory the GPU does not know as a fence.
	 * @carry: a GPU without 64-bit atomics could not store @value (its
	 * high half changed) and stored nothing; the driver stores it.
	 */
	void (*interrupt)(struct nfence_cmp *cmp, struct nfence_fence *fence,
			  u64 value, bool carry);
	/**
	 * @interrupt_queue: the optimized native fence signaled interrupt
	 * (%NFENCE_IRQ_QUEUE): @q ran signals that need the driver, whose
	 * signal log names them (and its progress fence); NULL when several
	 * queues of @engine did: read the logs of every queue on it. Called
	 * with &nfence_cmp.lock held.
	 */
	void (*interrupt_queue)(struct nfence_cmp *cmp, u32 engine,
				struct nfence_cmp_queue *q);
	/**
	 * @log_names: whether log payload @handle of a FENCE_SIGNAL that
	 * @q ran names @fence, the fence it signaled (the optimized interrupt
	 * can only name signals its log names truly)
	 */
	bool (*log_names)(struct nfence_cmp_queue *q, u32 handle,
			  struct nfence_fence *fence);
	/**
	 * @fence_view: what the GPU sees of @fence, read now. Called with
	 * &nfence_cmp.lock held, which keeps the value addresses it gives
	 * valid (no demotion moves a value meanwhile).
	 */
	void (*fence_view)(struct nfence_fence *fence,
			   struct nfence_cmp_fence *view);
	/**
	 * @fence_settle: the GPU stored to the CurrentValue of @fence, a
	 * &nfence_cmp_fence.cross_adapter fence, then issued a full barrier:
	 * if the fence became AlwaysSignaled meanwhile, its value goes back
	 * up (see DOC: fence signals, the interrupt path and AlwaysSignaled)
	 */
	void (*fence_settle)(struct nfence_fence *fence);
	/** @fence_put: drop a reference that a mapping's fence_at took */
	void (*fence_put)(struct nfence_fence *fence);
	/**
	 * @fence_peers: the peer table of @fence, a
	 * &nfence_cmp_fence.cross_adapter instance (DOC: peer signals), NULL
	 * while it has none. Called under rcu_read_lock() by GPUs with a
	 * peer doorbell.
	 */
	const struct nfence_peer_table *(*fence_peers)(struct nfence_fence *fence);
	/**
	 * @fence_id_exceeds: whether the fence whose id on this adapter is
	 * @id (a peer doorbell's payload) is alive, not AlwaysSignaled, and
	 * has a CurrentValue above its MonitoredValue: the GPU's look at its
	 * own fence table, under the lock that keeps the values' storage.
	 * Called with &nfence_cmp.lock held.
	 */
	bool (*fence_id_exceeds)(struct nfence_cmp *cmp, u32 id);
	/**
	 * @entry_step: the CMP reached a legacy entry at the head of its
	 * queue; true once the CPU side is done and the queue may go on
	 */
	bool (*entry_step)(struct nfence_cmp *cmp,
			   struct nfence_cmp_entry *entry);
	/** @entry_done: an entry has run and left its queue */
	void (*entry_done)(struct nfence_cmp_queue *q,
			   struct nfence_cmp_entry *entry);
	/** @queue_fault: a command of @q faulted at @va for @reason */
	void (*queue_fault)(struct nfence_cmp *cmp, struct nfence_cmp_queue *q,
			    u64 va, u32 reason, struct list_head *dropped);
	/** @queue_hang: @q's WORK command ran past the hang timeout */
	void (*queue_hang)(struct nfence_cmp *cmp, struct nfence_cmp_queue *q,
			   struct list_head *dropped);
	/** @entries_drop: free the entries stopped queues dropped */
	void (*entries_drop)(struct list_head *dropped);
	/** @queue_print: describe @q for debugfs, lock held */
	void (*queue_print)(struct nfence_cmp_queue *q, struct drm_printer *p);
	/**
	 * @engine_idle: DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE to
	 * TRANSITION_TO_F1: @engine has had connected doorbells and nothing
	 * to run for the adapter's f1_idle_ms; called without the CMP lock.
	 * The driver acts later, under the lock, if
	 * nfence_cmp_engine_f1_due_locked() says the ask still stands.
	 */
	void (*engine_idle)(struct nfence_cmp *cmp, u32 engine);
	/**
	 * @adapter_idle: the CMP found the whole adapter idle (see
	 * nfence_cmp_d3_enter()) and is about to sleep; called without the
	 * CMP lock, each time the thread goes to sleep that way
	 */
	void (*adapter_idle)(struct nfence_cmp *cmp);
	/**
	 * @stopped: the thread has ended (nfence_cmp_stop()), so no callback
	 * above is called again; what they left queued elsewhere (the F1
	 * work of @engine_idle) is cancelled or waited for here, while the
	 * CMP lock still exists. Optional.
	 */
	void (*stopped)(struct nfence_cmp *cmp);
};

/**
 * struct nfence_cmp_engine - what the CMP knows of one engine
 */
struct nfence_cmp_engine {
	/** @runlist: the engine's hardware queues, round-robin order */
	struct list_head runlist;
	/** @busy: the queue whose WORK command occupies the engine, or NULL */
	struct nfence_cmp_queue *busy;
	/** @busy_until_ns: when that WORK command ends (CLOCK_MONOTONIC) */
	u64 busy_until_ns;
	/** @num_queues: entries in @runlist */
	u32 num_queues;
	/**
	 * @num_not_idle: queues in @runlist neither idle nor stopped for good
	 * (nfence_queue_state_active())
	 */
	u32 num_not_idle;
	/**
	 * @num_bound: queues in @runlist, not stopped for good, whose ring is
	 * bound to a physical doorbell
	 */
	u32 num_bound;
	/** @f1: in the F1 power state: its doorbells are disconnected */
	bool f1;
	/**
	 * @f1_asked_ns: when the CMP asked the driver for F1
	 * (&nfence_cmp_ops.engine_idle), 0 if it has not or the driver has
	 * answered (nfence_cmp_engine_f1_due_locked())
	 */
	u64 f1_asked_ns;
	/** @active_ns: when it last ran a command or took a ring */
	u64 active_ns;
	/**
	 * @irq_queue: %NFENCE_IRQ_QUEUE: the queue whose signals need the
	 * optimized interrupt, raised at the end of the pass
	 * (nfence_engine_raise_queue_irq()); NULL for none
	 */
	struct nfence_cmp_queue *irq_queue;
	/** @irq_queues: more than one queue did: the interrupt names none */
	bool irq_queues;
	/** @turns: turns that ran something, wrapping */
	u32 turns;
	/** @yielded: a queue of negative priority yielded in this pass */
	bool yielded;
	/**
	 * @no_yield: the last pass ran nothing on the engine but had a queue
	 * yield: in this one none yields
	 */
	bool no_yield;
};

/**
 * struct nfence_cmp - the context management processor of one adapter
 *
 * A kernel thread that sleeps on @wq until someone kicks it or a WORK
 * command ends, then makes passes over the engines' runlists until a pass
 * finds nothing to do.
 */
struct nfence_cmp {
	/** @gpu: the GPU it schedules */
	struct nfence_gpu *gpu;
	/** @ops: the driver's callbacks */
	const struct nfence_cmp_ops *ops;
	/** @thread: the CMP thread, NULL when stopped */
	struct task_struct *thread;
	/** @wq: where the thread sleeps while idle */
	wait_queue_head_t wq;
	/** @pending: NFENCE_CMP_* request bits */
	unsigned long pending;
	/** @busy: true while the thread is making passes */
	bool busy;
	/**
	 * @num_parked: queues parked on a FENCE_WAIT (&nfence_cmp_queue.parked);
	 * a CPU signal kicks the CMP only while it is not 0
	 * (nfence_cmp_kick_waiters())
	 */
	atomic_t num_parked;
	/** @lock: protects @engines, the queues' scheduling state, @next_id */
	struct mutex lock;
	/** @engines: per-engine state */
	struct nfence_cmp_engine engines[NFENCE_MAX_ENGINES];
	/** @next_id: id of the next queue */
	u32 next_id;
	/** @tdr_ns: TDR timeout in ns, 0 for none */
	u64 tdr_ns;
	/** @doorbells: the queue each physical doorbell is bound to, or NULL */
	struct nfence_cmp_queue *doorbells[NFENCE_MAX_DOORBELLS];
	/** @num_connected: bound physical doorbells */
	u32 num_connected;
	/**
	 * @bound: the queues whose ring is bound to a physical doorbell
	 * (&nfence_cmp_queue.bound_link), which the global doorbell model
	 * looks at
	 */
	struct list_head bound;
	/** @watch_until_ns: the CMP watches the doorbells until then */
	u64 watch_until_ns;
	/** @rung_ns: when the CMP last took a ring, of any doorbell */
	u64 rung_ns;
	/**
	 * @peer_until_ns: the CMP watches its peer doorbell (a spin) until
	 * then: it found ids there, and more may follow (DOC: peer signals)
	 */
	u64 peer_until_ns;
	/** @dry_ns: when the CMP last ran out of work after taking a ring */
	u64 dry_ns;
	/** @spin_until_ns: the CMP reads the doorbells back to back until then */
	u64 spin_until_ns;
	/** @polls: polls of the doorbells since @dry_ns */
	u32 polls;
	/** @quiet: not watching; connected doorbells say CONNECTED_NOTIFY_KMD */
	bool quiet;
	/** @d3: the adapter is in D3: no queue runs, no doorbell is watched */
	bool d3;
	/** @locked_ns: when @lock was last taken (nfence_cmp_lock()) */
	u64 locked_ns;
	/** @max_hold_ns: longest hold of @lock since the last reset */
	u64 max_hold_ns;
	/** @max_pass_ns: longest pass (nfence_cmp_pass()) since the last reset */
	u64 max_pass_ns;
	/**
	 * @max_visits: most queues a pass looked at under one hold of @lock
	 * (given a turn, whether it ran anything or not, or passed over)
	 * since the last reset
	 */
	u32 max_visits;
	/**
	 * @max_pass_commands: most commands one engine ran in one pass
	 * (at most %NFENCE_CMP_PASS_BUDGET) since the last reset; under
	 * @lock, read without it
	 */
	u32 max_pass_commands;
	/** @wakeups: times the thread woke up to work */
	atomic64_t wakeups;
	/** @passes: passes made over the runlists */
	atomic64_t passes;
	/** @commands: commands executed */
	atomic64_t commands;
	/** @faults: contexts faulted */
	atomic64_t faults;
	/** @hangs: hangs detected (TDR) */
	atomic64_t hangs;
	/** @rings: doorbell rings taken */
	atomic64_t rings;
	/** @quiets: times the CMP stopped watching the doorbells */
	atomic64_t quiets;
	/**
	 * @spins: looks at the doorbells the idle CMP made at once, without
	 * sleeping (spinning: see DOC: doorbells in nfence_cmp.c)
	 */
	atomic64_t spins;
	/**
	 * @polls_total: the times the idle, watching CMP chose to poll the
	 * doorbells rather than spin (what @polls counts, but never reset
	 * by a ring)
	 */
	atomic64_t polls_total;
	/** @f1s: engine transitions to F1 */
	atomic64_t f1s;
	/** @f0s: engine transitions back to F0 */
	atomic64_t f0s;
	/** @d3s: adapter transitions to D3 */
	atomic64_t d3s;
	/** @d0s: adapter transitions back to D0 */
	atomic64_t d0s;
};

/**
 * nfence_queue_state_active - whether a queue's state keeps its engine busy
 * @state: the queue's &enum nfence_queue_state
 *
 * Return: true unless the queue is idle or stopped for good. A queue of a
 * suspended context with work queued counts: resuming it must not need a
 * wake-up.
 */
static inline bool nfence_queue_state_active(u32 state)
{
	return state != NFENCE_QUEUE_IDLE && state != NFENCE_QUEUE_FAULTED &&
	       state != NFENCE_QUEUE_LOST;
}

/* Whether @q counts in its engine's &nfence_cmp_engine.num_bound. */
static inline bool nfence_cmp_queue_bound(const struct nfence_cmp_queue *q)
{
	return !nfence_cmp_queue_stopped(q) && q->ring && q->ring->slot >= 0;
}

/**
 * nfence_cmp_queue_count_locked - count a queue in its engine's totals
 * @cmp: the queue's CMP, whose lock is held
 * @q: the queue
 *
 * &nfence_cmp_engine.num_not_idle and &nfence_cmp_engine.num_bound let the
 * CMP tell an idle engine or adapter without walking a runlist. Whatever
 * changes what a listed queue counts for (its state, its ring's doorbell,
 * its ring) uncounts it before the change (nfence_cmp_queue_uncount_locked())
 * and counts it after; a queue on no runlist counts for nothing.
 */
static inline void nfence_cmp_queue_count_locked(struct nfence_cmp *cmp,
						 struct nfence_cmp_queue *q)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	lockdep_assert_held(&cmp->lock);
	if (list_empty(&q->engine_link))
		return;
	e->num_not_idle += nfence_queue_state_active(q->state);
	e->num_bound += nfence_cmp_queue_bound(q);
}

/**
 * nfence_cmp_queue_uncount_locked - take a queue out of its engine's totals
 * @cmp: the queue's CMP, whose lock is held
 * @q: the queue, counted with nfence_cmp_queue_count_locked()
 */
static inline void nfence_cmp_queue_uncount_locked(struct nfence_cmp *cmp,
						   struct nfence_cmp_queue *q)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	lockdep_assert_held(&cmp->lock);
	if (list_empty(&q->engine_link))
		return;
	if (nfence_queue_state_active(q->state) && !WARN_ON_ONCE(!e->num_not_idle))
		e->num_not_idle--;
	if (nfence_cmp_queue_bound(q) && !WARN_ON_ONCE(!e->num_bound))
		e->num_bound--;
}

/**
 * nfence_cmp_queue_set_state_locked - change a queue's state
 * @cmp: the queue's CMP, whose lock is held
 * @q: the queue
 * @state: its new &enum nfence_queue_state
 *
 * After nfence_cmp_queue_init(), a queue's state changes only here.
 */
static inline void nfence_cmp_queue_set_state_locked(struct nfence_cmp *cmp,
						     struct nfence_cmp_queue *q,
						     u32 state)
{
	nfence_cmp_queue_uncount_locked(cmp, q);
	q->state = state;
	nfence_cmp_queue_count_locked(cmp, q);
}

#endif /* __NFENCE_CMP_TYPES_H__ */
