// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include <drm/nfence_drm.h>

#include "nfence_cmp_doorbell.h"
#include "nfence_engine.h"
#include "nfence_gpu.h"
#include "nfence_trace.h"
#include "nfence_vm.h"

/**
 * DOC: doorbells
 *
 * A user-mode queue's ring (&struct nfence_cmp_ring) is bound to a physical
 * doorbell while its doorbell is connected: a page of the doorbell BAR
 * (&nfence_gpu.doorbell_pages), which the process maps and stores its
 * write index to. Memory writes raise no interrupt, so the CMP watches:
 * each pass starts by reading every bound doorbell and taking the rings
 * it finds (a write index it has not seen makes the queue runnable), and
 * while doorbells are connected the thread polls instead of sleeping until
 * kicked: every %NFENCE_CMP_POLL_NS, and back to back (rescheduling
 * between looks: a spin) for %NFENCE_CMP_SPIN_NS once it has run the work
 * of a ring it found spinning or at its first poll after it last ran out
 * of work (nfence_cmp_spinning()): a process that rings again as soon as
 * its work is done finds the CMP looking. A hardware doorbell reaches its
 * scheduler at once; the spin is what keeps such a ring's latency below a
 * system call's here.
 *
 * The spin costs a CPU while it lasts, charged to no process, so only
 * rings that come back to back buy it: not a ring that came later than
 * the first poll, not a connect, not a DOORBELL_NOTIFY. What remains: a
 * process that keeps ringing work (a NOP is enough) within a poll period
 * of the last ring's work being done keeps the CMP spinning, up to a CPU,
 * at most %NFENCE_CMP_SPIN_NS per ring; any ring, connect or notify costs
 * a look every %NFENCE_CMP_POLL_NS for %NFENCE_CMP_WATCH_NS after it. The
 * spin starts when the CMP first finds nothing to run after the ring, a
 * WORK command still running on an engine or not: a process whose work
 * keeps an engine busy for longer than %NFENCE_CMP_SPIN_NS gets no spin,
 * its next ring waits for a poll. A wake-up for anything else (a kick)
 * counts as a poll.
 *
 * An idle CMP must cost nothing, so after %NFENCE_CMP_WATCH_NS without a
 * ring it goes quiet: it sets every connected doorbell's status to
 * CONNECTED_NOTIFY_KMD, issues a full barrier, looks at every doorbell
 * once more and only then sleeps until kicked. The process stores its ring,
 * issues a full barrier and loads the status; if it reads
 * CONNECTED_NOTIFY_KMD it calls DOORBELL_NOTIFY, which makes the CMP watch
 * again (nfence_cmp_watch_locked()) and kicks it. Both sides store then
 * load with a full barrier between, so at least one sees the other's
 * store: the CMP's last look sees the ring, or the process sees the status
 * and notifies. A connect watches again as a notify does.
 *
 * Dedicated model: each physical doorbell is bound to at most one ring
 * (&nfence_cmp.doorbells), and the value stored is that ring's write
 * index. Global model: one physical doorbell for every ring; a ring is any
 * non-zero store, which the CMP takes and clears with one exchange, then
 * reads every bound ring's write index from its ring control. Every
 * process maps that one page, so another one can store 0 over a ring: the
 * last look before going quiet (and the last look at a ring that loses
 * its doorbell) reads the controls whatever the doorbell says, so such a
 * ring is late, by at most the watch period, never lost.
 *
 * A physical doorbell is given to another ring only once no CPU mapping
 * of its previous ring points at it: the driver unbinds the ring, moves
 * its mappings to a dummy page, takes a last look at the doorbell for it
 * (nfence_cmp_doorbell_take_locked()), and only then binds the new ring.
 * A dedicated doorbell's page is ordinary memory that the CMP reads only
 * the first word of; a bind zeroes the rest, so that nothing one process
 * stored there reaches the next process the doorbell goes to. The global
 * doorbell's page is every connected process's at once, by design.
 * A ring whose queue stopped (fault, device lost) stays bound, its status
 * DISCONNECTED_ABORT, until its doorbell goes or is taken, so the stopped
 * process never stores to a doorbell that another queue owns.
 *
 * Engine power states: an engine with connected doorbells and nothing to
 * run (no WORK, every queue idle) for the adapter's f1_idle_ms raises the
 * WDDM's engine state change interrupt (&nfence_cmp_ops.engine_idle); the
 * driver then disconnects the engine's doorbells (DISCONNECTED_RETRY) and
 * puts it in F1 (nfence_cmp_engine_f1_locked()), unless the engine was
 * active in between (nfence_cmp_engine_f1_due_locked()). A connect of one
 * of its doorbells, or a kernel-mode submission to one of its queues,
 * brings it back to F0.
 */

/* NFENCE_CMP_POLL_NS: how often the CMP reads the doorbells while watching */
#define NFENCE_CMP_POLL_NS	(100 * NSEC_PER_USEC)
/* NFENCE_CMP_WATCH_NS: how long the CMP watches without seeing a ring */
#define NFENCE_CMP_WATCH_NS	(20 * NSEC_PER_MSEC)

static bool nfence_cmp_global(struct nfence_cmp *cmp)
{
	return cmp->gpu->cfg.doorbell_model == DRM_NFENCE_DOORBELL_GLOBAL;
}

static void nfence_ring_set_status(struct nfence_cmp_ring *ring, u32 status)
{
	WRITE_ONCE(*ring->status, status);
}

/* Take @q's ring entry off its pending list: its work is dropped. */
static void nfence_cmp_ring_unqueue(struct nfence_cmp_queue *q)
{
	struct nfence_cmp_ring *ring = q->ring;

	if (!ring->queued)
		return;
	list_del(&ring->entry.link);
	q->num_pending--;
	ring->queued = false;
}

/* Fault @q for its ring at @va. */
static void nfence_cmp_ring_fault(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q, u64 va, u32 reason,
				  struct list_head *dropped)
{
	atomic64_inc(&cmp->faults);
	cmp->ops->queue_fault(cmp, q, va, reason, dropped);
}

/*
 * A ring of @q's doorbell with write index @v. Returns true if it was new
 * (a ring taken, or a bad one that faulted the queue).
 */
static bool nfence_cmp_ring_take(struct nfence_cmp *cmp,
				 struct nfence_cmp_queue *q, u64 v, u64 now,
				 struct list_head *dropped)
{
	struct nfence_cmp_ring *ring = q->ring;

	if (v == ring->seen || nfence_cmp_queue_stopped(q))
		return false;
	/* Unsigned: a write index behind the read index is far ahead. */
	if (v - ring->read_index > ring->num_entries ||
	    v - ring->seen > v - ring->read_index) {
		nfence_cmp_ring_fault(cmp, q, ring->ring_va,
				      DRM_NFENCE_FAULT_BAD_RING, dropped);
		return true;
	}
	ring->seen = v;
	trace_nfence_doorbell_ring(cmp->gpu->index, q->id, v);
	ring->rung_ns = now;
	cmp->rung_ns = now;
	cmp->engines[q->engine].active_ns = now;
	atomic64_inc(&cmp->rings);
	if (q->state == NFENCE_QUEUE_IDLE)
		nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_READY);
	return true;
}

/* Global model: read the write index of a ring from its control. */
static bool nfence_cmp_ring_take_control(struct nfence_cmp *cmp,
					 struct nfence_cmp_queue *q, u64 now,
					 struct list_head *dropped)
{
	struct nfence_cmp_ring *ring = q->ring;
	__le64 v;
	int ret;

	if (!ring || nfence_cmp_queue_stopped(q))
		return false;
	mutex_lock(&q->vm->lock);
	ret = nfence_vm_read_locked(q->vm, ring->control_va, &v, sizeof(v));
	mutex_unlock(&q->vm->lock);
	if (ret) {
		nfence_cmp_ring_fault(cmp, q, ring->control_va,
				      DRM_NFENCE_FAULT_PAGE, dropped);
		return true;
	}
	return nfence_cmp_ring_take(cmp, q, le64_to_cpu(v), now, dropped);
}

/*
 * Look at every bound doorbell; true if a ring was taken. In the global
 * model the doorbell only says "look": @all reads every bound ring's
 * control even when it says nothing, as the last look before going quiet
 * does (another process may have stored 0 over a ring). The bound rings
 * are a list of their own: no other queue is looked at.
 */
static bool nfence_cmp_watch_doorbells(struct nfence_cmp *cmp, u64 now,
				       bool all, struct list_head *dropped)
{
	struct nfence_cmp_queue *q;
	bool rung = false;
	u32 i;

	if (!cmp->num_connected)
		return false;
	if (nfence_cmp_global(cmp)) {
		if (!xchg(nfence_gpu_doorbell(cmp->gpu, 0), 0) && !all)
			return false;
		list_for_each_entry(q, &cmp->bound, bound_link)
			rung |= nfence_cmp_ring_take_control(cmp, q, now,
							     dropped);
		return rung;
	}
	for (i = 0; i < cmp->gpu->cfg.num_doorbells; i++) {
		u64 *doorbell = nfence_gpu_doorbell(cmp->gpu, i);

		q = cmp->doorbells[i];
		if (q)
			rung |= nfence_cmp_ring_take(cmp, q, READ_ONCE(*doorbell),
						     now, dropped);
	}
	return rung;
}

/**
 * nfence_cmp_doorbell_look_locked - a pass's look at the doorbells
 * @cmp: the CMP, whose lock is held
 * @now: the time (ktime_get_ns())
 * @dropped: where the entries of a queue a bad ring faults go
 *
 * Takes the rings of every bound doorbell; a ring taken keeps the CMP
 * watching for %NFENCE_CMP_WATCH_NS more.
 *
 * Return: true if a ring was taken.
 */
bool nfence_cmp_doorbell_look_locked(struct nfence_cmp *cmp, u64 now,
				     struct list_head *dropped)
{
	lockdep_assert_held(&cmp->lock);
	if (!nfence_cmp_watch_doorbells(cmp, now, false, dropped))
		return false;
	cmp->watch_until_ns = now + NFENCE_CMP_WATCH_NS;
	return true;
}

/* Set the status of every bound ring whose queue runs. */
static void nfence_cmp_set_statuses(struct nfence_cmp *cmp, u32 status)
{
	struct nfence_cmp_queue *q;

	list_for_each_entry(q, &cmp->bound, bound_link)
		if (!nfence_cmp_queue_stopped(q))
			nfence_ring_set_status(q->ring, status);
}

/**
 * nfence_cmp_watch_locked - make the CMP watch the doorbells again
 * @cmp: the CMP, whose lock is held
 *
 * For a connect and DOORBELL_NOTIFY: the CMP polls the doorbells for
 * %NFENCE_CMP_WATCH_NS (it does not spin: only rings buy a spin). The
 * caller kicks the CMP once it has dropped the lock.
 */
void nfence_cmp_watch_locked(struct nfence_cmp *cmp)
{
	lockdep_assert_held(&cmp->lock);
	if (cmp->quiet) {
		cmp->quiet = false;
		nfence_cmp_set_statuses(cmp, DRM_NFENCE_DOORBELL_CONNECTED);
	}
	cmp->watch_until_ns = ktime_get_ns() + NFENCE_CMP_WATCH_NS;
}

/*
 * Whether the CMP, out of work while watching, looks at the doorbells
 * again at once (see DOC: doorbells), or polls (counted in
 * &nfence_cmp.polls). The first time it runs out of work after taking a
 * ring, it spins for %NFENCE_CMP_SPIN_NS if it found that ring spinning
 * or at its first poll after running out of work the time before (the
 * process rang again as soon as its work was done), and not at all
 * otherwise. Counting polls rather than time keeps a back-to-back process
 * spun for however late a poll wakes up.
 */
static bool nfence_cmp_spinning(struct nfence_cmp *cmp, u64 now)
{
	lockdep_assert_held(&cmp->lock);
	if (cmp->rung_ns > cmp->dry_ns) {
		cmp->spin_until_ns = cmp->polls < 2 ?
				     now + NFENCE_CMP_SPIN_NS : 0;
		cmp->dry_ns = now;
		cmp->polls = 0;
	}
	if (now < cmp->spin_until_ns)
		return true;
	cmp->polls++;
	atomic64_inc(&cmp->polls_total);
	return false;
}

/**
 * nfence_cmp_doorbell_idle_locked - after passes that found nothing to do
 * @cmp: the CMP, whose lock is held
 * @deadline: when the thread must look again; lowered to the next poll
 *	while the CMP watches
 * @dropped: where the entries of a queue a bad ring faults go
 *
 * Polls the doorbells until the watch ends, then goes quiet (see DOC:
 * doorbells).
 *
 * Return: true if the last look before going quiet found a ring, and
 * another pass is due.
 */
bool nfence_cmp_doorbell_idle_locked(struct nfence_cmp *cmp, u64 *deadline,
				     struct list_head *dropped)
{
	u64 now = ktime_get_ns();

	lockdep_assert_held(&cmp->lock);
	if (!cmp->num_connected || cmp->quiet)
		return false;
	if (now < cmp->watch_until_ns) {
		u64 poll = nfence_cmp_spinning(cmp, now) ? now :
			   now + NFENCE_CMP_POLL_NS;

		if (poll == now)
			atomic64_inc(&cmp->spins);
		if (!*deadline || poll < *deadline)
			*deadline = poll;
		return false;
	}
	nfence_cmp_set_statuses(cmp, DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD);
	/* The statuses before the last look; pairs with the process's ring. */
	smp_mb();
	if (nfence_cmp_watch_doorbells(cmp, now, true, dropped)) {
		nfence_cmp_set_statuses(cmp, DRM_NFENCE_DOORBELL_CONNECTED);
		cmp->watch_until_ns = now + NFENCE_CMP_WATCH_NS;
		return true;
	}
	cmp->quiet = true;
	atomic64_inc(&cmp->quiets);
	return false;
}

/**
 * nfence_cmp_ring_attach_locked - give a user-mode queue its ring
 * @cmp: the CMP, whose lock is held
 * @q: the queue, without a ring
 * @ring: the ring, its @ring_va, @control_va, @num_entries and @status set
 *
 * The ring starts disconnected, its status DISCONNECTED_RETRY.
 */
void nfence_cmp_ring_attach_locked(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q,
				   struct nfence_cmp_ring *ring)
{
	lockdep_assert_held(&cmp->lock);
	ring->slot = -1;
	ring->seen = 0;
	ring->read_index = 0;
	ring->rung_ns = 0;
	ring->bound_ns = 0;
	ring->queued = false;
	ring->entry.kind = NFENCE_SUB_RING;
	nfence_ring_set_status(ring, DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	q->ring = ring;
}

/**
 * nfence_cmp_ring_stop_locked - the ring of a queue that stops for good
 * @q: the queue, which has a ring; its CMP's lock is held
 *
 * The ring's entry is dropped if it was pending (it is the CMP's, not the
 * driver's to free), and its status becomes DISCONNECTED_ABORT.
 */
void nfence_cmp_ring_stop_locked(struct nfence_cmp_queue *q)
{
	nfence_cmp_ring_unqueue(q);
	nfence_ring_set_status(q->ring, DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
}

/**
 * nfence_cmp_ring_detach_locked - take a queue's ring away
 * @cmp: the CMP, whose lock is held
 * @q: the queue, whose ring is unbound
 *
 * Ring entries not yet run are dropped; one the engine is running ends
 * at the current command. The ring's status becomes DISCONNECTED_ABORT:
 * it will never be connected again.
 */
void nfence_cmp_ring_detach_locked(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q)
{
	lockdep_assert_held(&cmp->lock);
	if (!q->ring)
		return;
	WARN_ON(q->ring->slot >= 0);
	nfence_cmp_ring_unqueue(q);
	/* Parked on nothing now; a miss would only cost a kick too many. */
	if (list_empty(&q->pending))
		nfence_engine_queue_unpark_locked(cmp, q);
	nfence_ring_set_status(q->ring, DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	/* Still bound if the warning above fired: the counts must follow. */
	nfence_cmp_queue_uncount_locked(cmp, q);
	list_del_init(&q->bound_link);
	q->ring = NULL;
	nfence_cmp_queue_count_locked(cmp, q);
}

/**
 * nfence_cmp_doorbell_free_slot_locked - a physical doorbell to bind
 * @cmp: the CMP, whose lock is held
 *
 * Return: a free physical doorbell (with the global model, the one
 * doorbell), or -ENOSPC if every one is bound.
 */
int nfence_cmp_doorbell_free_slot_locked(struct nfence_cmp *cmp)
{
	u32 i;

	lockdep_assert_held(&cmp->lock);
	if (nfence_cmp_global(cmp))
		return 0;
	for (i = 0; i < cmp->gpu->cfg.num_doorbells; i++)
		if (!cmp->doorbells[i])
			return i;
	return -ENOSPC;
}

/**
 * nfence_cmp_doorbell_victim_locked - the ring to take a doorbell from
 * @cmp: the CMP, whose lock is held, with every physical doorbell bound
 * @now: the time (ktime_get_ns())
 * @wait_ns: out, when there is none to take yet: how long until there is
 *
 * A ring connected less than %NFENCE_DOORBELL_GRACE_NS ago that has not
 * rung since is not taken: its process is on its way from the connect to
 * the store that rings, and taking the doorbell back from it there would
 * let two processes sharing one doorbell take it from each other forever
 * without either ringing.
 *
 * Return: a ring whose queue stopped if there is one, else the ring rung
 * least recently among those past their grace; NULL if every ring is
 * within it.
 */
struct nfence_cmp_queue *nfence_cmp_doorbell_victim_locked(struct nfence_cmp *cmp,
							   u64 now,
							   u64 *wait_ns)
{
	struct nfence_cmp_queue *q, *victim = NULL;
	u64 wait = U64_MAX;
	u32 i;

	lockdep_assert_held(&cmp->lock);
	for (i = 0; i < cmp->gpu->cfg.num_doorbells; i++) {
		struct nfence_cmp_ring *ring;

		q = cmp->doorbells[i];
		if (!q)
			continue;
		if (nfence_cmp_queue_stopped(q))
			return q;
		ring = q->ring;
		if (ring->rung_ns == ring->bound_ns &&
		    now - ring->bound_ns < NFENCE_DOORBELL_GRACE_NS) {
			wait = min(wait, ring->bound_ns +
				   NFENCE_DOORBELL_GRACE_NS - now);
			continue;
		}
		if (!victim || ring->rung_ns < victim->ring->rung_ns)
			victim = q;
	}
	if (!victim)
		*wait_ns = min(wait, NFENCE_DOORBELL_GRACE_NS);
	return victim;
}

/* Bind @q's ring to physical doorbell @slot, or unbind it (-1). */
static void nfence_cmp_ring_set_slot_locked(struct nfence_cmp *cmp,
					    struct nfence_cmp_queue *q,
					    int slot)
{
	nfence_cmp_queue_uncount_locked(cmp, q);
	if (slot < 0)
		list_del_init(&q->bound_link);
	else if (q->ring->slot < 0)
		list_add_tail(&q->bound_link, &cmp->bound);
	q->ring->slot = slot;
	nfence_cmp_queue_count_locked(cmp, q);
}

/**
 * nfence_cmp_doorbell_unbind_locked - disconnect a ring from its doorbell
 * @cmp: the CMP, whose lock is held
 * @q: the queue; nothing happens if its ring is not bound
 * @status: its new status, unless it is DISCONNECTED_ABORT already
 *
 * The physical doorbell is free for nfence_cmp_doorbell_bind_locked() once
 * no CPU mapping of the ring points at it any more.
 */
void nfence_cmp_doorbell_unbind_locked(struct nfence_cmp *cmp,
				       struct nfence_cmp_queue *q, u32 status)
{
	struct nfence_cmp_ring *ring = q->ring;

	lockdep_assert_held(&cmp->lock);
	if (!ring || ring->slot < 0)
		return;
	if (!nfence_cmp_global(cmp))
		cmp->doorbells[ring->slot] = NULL;
	nfence_cmp_ring_set_slot_locked(cmp, q, -1);
	cmp->num_connected--;
	if (READ_ONCE(*ring->status) != DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT)
		nfence_ring_set_status(ring, status);
}

/**
 * nfence_cmp_doorbell_take_locked - a last look at a doorbell for a ring
 * @cmp: the CMP, whose lock is held
 * @q: the queue whose ring was unbound from @slot
 * @slot: the physical doorbell, which no mapping of the ring reaches now
 * @dropped: where the entries of a queue a bad ring faults go
 *
 * A ring stored before the ring's mappings moved away runs.
 */
void nfence_cmp_doorbell_take_locked(struct nfence_cmp *cmp,
				     struct nfence_cmp_queue *q, u32 slot,
				     struct list_head *dropped)
{
	u64 *doorbell = nfence_gpu_doorbell(cmp->gpu, slot);

	lockdep_assert_held(&cmp->lock);
	if (!q->ring)
		return;
	/* Global: the ring's own write index is in its control. */
	if (nfence_cmp_global(cmp))
		nfence_cmp_ring_take_control(cmp, q, ktime_get_ns(), dropped);
	else
		nfence_cmp_ring_take(cmp, q, READ_ONCE(*doorbell),
				     ktime_get_ns(), dropped);
}

/**
 * nfence_cmp_doorbell_bind_locked - connect a ring to a physical doorbell
 * @cmp: the CMP, whose lock is held
 * @q: the queue, whose ring is not bound
 * @slot: a physical doorbell from nfence_cmp_doorbell_free_slot_locked()
 *
 * The dedicated doorbell starts at the ring's last write index, the rest
 * of its page zeroed; the status becomes CONNECTED (the caller makes the
 * CMP watch).
 */
void nfence_cmp_doorbell_bind_locked(struct nfence_cmp *cmp,
				     struct nfence_cmp_queue *q, u32 slot)
{
	struct nfence_cmp_ring *ring = q->ring;

	lockdep_assert_held(&cmp->lock);
	if (!nfence_cmp_global(cmp)) {
		u64 *doorbell = nfence_gpu_doorbell(cmp->gpu, slot);

		cmp->doorbells[slot] = q;
		/* Nothing the last ring stored reaches this one's process. */
		memset(doorbell + 1, 0, PAGE_SIZE - sizeof(*doorbell));
		WRITE_ONCE(*doorbell, ring->seen);
	}
	nfence_cmp_ring_set_slot_locked(cmp, q, slot);
	ring->rung_ns = ktime_get_ns();
	ring->bound_ns = ring->rung_ns;
	cmp->engines[q->engine].active_ns = ring->rung_ns;
	cmp->num_connected++;
	nfence_ring_set_status(ring, cmp->quiet ?
			       DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD :
			       DRM_NFENCE_DOORBELL_CONNECTED);
}
