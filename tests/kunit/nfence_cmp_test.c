// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the CMP, the simulated GPU's scheduler, on its own:
 * hardware queues run on their engine by nfence_engine_run()
 * (nfence_engine.c), commands decoded and executed, interrupts raised and
 * coalesced, faults found, user-mode queues' rings taken from their
 * doorbells and decoded, physical doorbells shared out and engines put in
 * F1 (nfence_cmp.c).
 *
 * The CMP reports upward only through &struct nfence_cmp_ops. Here it gets
 * a recording table (cmp_rec_ops): each callback writes down what it was
 * called with and does nothing else, and the tests assert on those calls:
 * which interrupts were raised and for which fence, which queue faulted at
 * which address and why, which entries completed. The driver's reaction to
 * the same calls (waking waiters, stopping a context, losing a device) is
 * the nfence_cmp_ops suite (nfence_cmp_ops_test.c).
 *
 * The fixture is the CMP's own objects, built bare: a &struct nfence_gpu,
 * the &struct nfence_cmp (nfence_cmp_init(), without its thread: the test
 * gives queues their turns itself, with the CMP lock held as the thread
 * does), three &struct nfence_cmp_queue on two &struct nfence_cmp_context
 * and two engines, and queued &struct nfence_cmp_entry. A fence is a name
 * to the CMP, which never looks inside one: the fixture's fences are
 * &struct nfence_fence allocations that nothing initializes, and the
 * recording fence_view answers for them from the fixture's table
 * (&struct cmp_fence). Where a test needs what the driver would have done
 * in answer to a call (a faulted queue stopped, a CPU waiter's lower
 * MonitoredValue), it does that itself through the CMP's functions.
 *
 * Commands are written with nfence_kunit_cs.h, in little endian as the ISA
 * in nfence_drm.h ("DOC: command stream") defines them.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ktime.h>

#include <drm/nfence_drm.h>

#include "../nfence_cmp.h"
#include "../nfence_cmp_doorbell.h"
#include "../nfence_engine.h"
#include "../nfence_fence.h"
#include "../nfence_gpu.h"
#include "../nfence_peer.h"
#include "../nfence_vm.h"

#include "nfence_kunit_cs.h"

/* Pages of command buffer; one more page is mapped right after them. */
#define CMP_CMD_PAGES		4
#define CMP_CMD_BYTES		(CMP_CMD_PAGES * PAGE_SIZE)
#define CMP_QUEUES		3
#define CMP_DOORBELLS		3
#define CMP_RING_ENTRIES	(PAGE_SIZE / sizeof(struct drm_nfence_ring_entry))
/* The time the tests pretend it is, for WORK. */
#define CMP_NOW			1000000000ull
/* An aligned GPU VA inside the address space that nothing maps. */
#define CMP_UNMAPPED		(NFENCE_VM_END - PAGE_SIZE)
/* 64-bit values with both halves non-zero. */
#define CMP_VALUE		0x0123456789abcdefull
#define CMP_WAIT_VALUE		0x0000000100000005ull
/* Calls a test may record; more is a test's mistake. */
#define CMP_CALLS		64

/**
 * enum cmp_call_kind - the recorded callbacks of &struct nfence_cmp_ops
 * @CMP_CALL_INTERRUPT: &nfence_cmp_ops.interrupt
 * @CMP_CALL_INTERRUPT_QUEUE: &nfence_cmp_ops.interrupt_queue
 * @CMP_CALL_QUEUE_FAULT: &nfence_cmp_ops.queue_fault
 * @CMP_CALL_QUEUE_HANG: &nfence_cmp_ops.queue_hang
 * @CMP_CALL_ENTRY_DONE: &nfence_cmp_ops.entry_done
 * @CMP_CALL_ENTRIES_DROP: &nfence_cmp_ops.entries_drop
 * @CMP_CALL_FENCE_SETTLE: &nfence_cmp_ops.fence_settle
 * @CMP_CALL_ENGINE_IDLE: &nfence_cmp_ops.engine_idle
 * @CMP_CALL_ADAPTER_IDLE: &nfence_cmp_ops.adapter_idle
 *
 * fence_view, fence_put, log_names, entry_step and queue_print are not in
 * the record: the first two are counted (&struct cmp_fix), the others are
 * for legacy entries, native logs and debugfs, which no test here uses,
 * and fail the test if called.
 */
enum cmp_call_kind {
	CMP_CALL_INTERRUPT,
	CMP_CALL_INTERRUPT_QUEUE,
	CMP_CALL_QUEUE_FAULT,
	CMP_CALL_QUEUE_HANG,
	CMP_CALL_ENTRY_DONE,
	CMP_CALL_ENTRIES_DROP,
	CMP_CALL_FENCE_SETTLE,
	CMP_CALL_ENGINE_IDLE,
	CMP_CALL_ADAPTER_IDLE,
};

/**
 * struct cmp_call - one recorded call
 * @kind: &enum cmp_call_kind
 * @q: the queue named (interrupt_queue, queue_fault, queue_hang,
 *	entry_done), NULL for none
 * @fence: the fence named (interrupt, fence_settle), NULL for none
 * @entry: the entry (entry_done)
 * @value: interrupt: the value; queue_fault: the VA
 * @reason: queue_fault: the reason; interrupt_queue, engine_idle: the
 *	engine; entries_drop: the entries on the list
 * @carry: interrupt: the carry flag
 */
struct cmp_call {
	enum cmp_call_kind kind;
	struct nfence_cmp_queue *q;
	struct nfence_fence *fence;
	struct nfence_cmp_entry *entry;
	u64 value;
	u32 reason;
	bool carry;
};

/**
 * struct cmp_fence - a fence, as the recording fence_view shows it
 * @fence: the name the CMP knows it by
 * @view: what fence_view answers for it
 */
struct cmp_fence {
	struct nfence_fence *fence;
	struct nfence_cmp_fence view;
};

/* The fixture's fences: the progress fences of the queues, then @fence. */
#define CMP_FENCES		(CMP_QUEUES + 1)
#define CMP_STORAGE		CMP_QUEUES

/**
 * struct cmp_fix - everything a test runs on
 * @test: the test
 * @gpu: the GPU the CMP schedules
 * @cmp_obj: the CMP's storage
 * @cmp: the CMP, with cmp_rec_ops (&@cmp_obj)
 * @sp: the address space all queues use and its pages (its @fvals hold
 *	@fence's CurrentValue at [0], MonitoredValue at [1]; its @fence_map's
 *	fence_at finds @fence)
 * @fence: the fence in fence storage
 * @fences: every fence and its view; [CMP_STORAGE] is @fence
 * @fence_at_calls: calls of @fence_map's fence_at
 * @fence_at_offset: the offset of the last call
 * @fence_gets: the calls that found @fence, each a reference the CMP
 *	must give back with fence_put
 * @fence_at_stride: fence_at finds @fence at offsets 0-63 (a pool slot's
 *	stride), not only at 0
 * @fence_views: calls of fence_view
 * @fence_puts: calls of fence_put, each giving a reference back
 * @ctx: context 0 on engine 0 (queues 0 and 1), context 1 on engine 1
 *	(queue 2)
 * @queue: the queues
 * @q: pointers to them, as the tests name them
 * @pv: the progress fences' CurrentValue and MonitoredValue
 * @dropped: entries dropped by stopped queues
 * @calls: the recorded calls, oldest first
 * @num_calls: entries of @calls
 * @spare: where calls past CMP_CALLS go (the test fails)
 * @cmp_ready: @cmp is initialized
 * @ring_map: @ring, a user-mode queue's ring buffer
 * @control_map: @control, its ring control
 * @ring: the ring buffer
 * @ring_va: its GPU VA
 * @control: the ring control
 * @control_va: its GPU VA
 * @doorbells: fake physical doorbell pages
 * @other_bell: another GPU's peer doorbell (peer signals)
 * @peers: @fence's peer table, what fence_peers answers
 * @peer_wakes: wakes of a CMP by a peer doorbell write
 * @peer_looks: calls of fence_id_exceeds
 */
struct cmp_fix {
	struct kunit *test;
	struct nfence_gpu gpu;
	struct nfence_cmp cmp_obj;
	struct nfence_cmp *cmp;
	struct nfence_kspace sp;
	struct nfence_fence *fence;
	struct cmp_fence fences[CMP_FENCES];
	unsigned int fence_at_calls;
	u64 fence_at_offset;
	unsigned int fence_gets;
	bool fence_at_stride;
	unsigned int fence_views;
	unsigned int fence_puts;
	struct nfence_cmp_context ctx[2];
	struct nfence_cmp_queue queue[CMP_QUEUES];
	struct nfence_cmp_queue *q[CMP_QUEUES];
	u64 pv[CMP_QUEUES][2];
	struct list_head dropped;
	struct cmp_call calls[CMP_CALLS];
	unsigned int num_calls;
	struct cmp_call spare;
	bool cmp_ready;
	struct nfence_vm_mapping ring_map;
	struct nfence_vm_mapping control_map;
	struct drm_nfence_ring_entry *ring;
	u64 ring_va;
	struct drm_nfence_ring_control *control;
	u64 control_va;
	struct page *doorbells[CMP_DOORBELLS];
	struct nfence_peer_bell *other_bell;
	struct nfence_peer_table *peers;
	unsigned int peer_wakes;
	unsigned int peer_looks;
};

/* ---- The recording callbacks ---- */

static struct cmp_fix *cmp_current(void)
{
	return kunit_get_current_test()->priv;
}

/*
 * A new record of @kind. The callbacks may run with the CMP lock held: a
 * full record fails the test without aborting it, into a spare slot.
 */
static struct cmp_call *cmp_record(enum cmp_call_kind kind)
{
	struct cmp_fix *f = cmp_current();
	struct cmp_call *c = &f->spare;

	if (f->num_calls < CMP_CALLS)
		c = &f->calls[f->num_calls++];
	else
		KUNIT_FAIL(f->test, "more than %u calls", CMP_CALLS);
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	return c;
}

static void cmp_rec_interrupt(struct nfence_cmp *cmp,
			      struct nfence_fence *fence, u64 value, bool carry)
{
	struct cmp_call *c = cmp_record(CMP_CALL_INTERRUPT);

	c->fence = fence;
	c->value = value;
	c->carry = carry;
}

static void cmp_rec_interrupt_queue(struct nfence_cmp *cmp, u32 engine,
				    struct nfence_cmp_queue *q)
{
	struct cmp_call *c = cmp_record(CMP_CALL_INTERRUPT_QUEUE);

	lockdep_assert_held(&cmp->lock);
	c->q = q;
	c->reason = engine;
}

static bool cmp_rec_log_names(struct nfence_cmp_queue *q, u32 handle,
			      struct nfence_fence *fence)
{
	KUNIT_FAIL(cmp_current()->test, "log_names without native logs");
	return false;
}

/* The view of a fixture fence; a fence the fixture does not have fails. */
static void cmp_rec_fence_view(struct nfence_fence *fence,
			       struct nfence_cmp_fence *view)
{
	struct cmp_fix *f = cmp_current();
	unsigned int i;

	f->fence_views++;
	for (i = 0; i < CMP_FENCES; i++) {
		if (f->fences[i].fence == fence) {
			*view = f->fences[i].view;
			return;
		}
	}
	KUNIT_FAIL(f->test, "fence_view of an unknown fence");
	memset(view, 0, sizeof(*view));
}

static void cmp_rec_fence_settle(struct nfence_fence *fence)
{
	cmp_record(CMP_CALL_FENCE_SETTLE)->fence = fence;
}

static void cmp_rec_fence_put(struct nfence_fence *fence)
{
	cmp_current()->fence_puts++;
}

static bool cmp_rec_entry_step(struct nfence_cmp *cmp,
			       struct nfence_cmp_entry *entry)
{
	KUNIT_FAIL(cmp_current()->test, "entry_step without legacy entries");
	return true;
}

static void cmp_rec_entry_done(struct nfence_cmp_queue *q,
			       struct nfence_cmp_entry *entry)
{
	struct cmp_call *c = cmp_record(CMP_CALL_ENTRY_DONE);

	c->q = q;
	c->entry = entry;
}

static void cmp_rec_queue_fault(struct nfence_cmp *cmp,
				struct nfence_cmp_queue *q, u64 va, u32 reason,
				struct list_head *dropped)
{
	struct cmp_call *c = cmp_record(CMP_CALL_QUEUE_FAULT);

	lockdep_assert_held(&cmp->lock);
	c->q = q;
	c->value = va;
	c->reason = reason;
}

static void cmp_rec_queue_hang(struct nfence_cmp *cmp,
			       struct nfence_cmp_queue *q,
			       struct list_head *dropped)
{
	lockdep_assert_held(&cmp->lock);
	cmp_record(CMP_CALL_QUEUE_HANG)->q = q;
}

static unsigned int cmp_count(struct list_head *list);

/* The entries are the fixture's (kunit memory): only taken off the list. */
static void cmp_rec_entries_drop(struct list_head *dropped)
{
	struct cmp_call *c = cmp_record(CMP_CALL_ENTRIES_DROP);

	c->reason = cmp_count(dropped);
	INIT_LIST_HEAD(dropped);
}

static void cmp_rec_queue_print(struct nfence_cmp_queue *q,
				struct drm_printer *p)
{
	KUNIT_FAIL(cmp_current()->test, "queue_print without debugfs");
}

static void cmp_rec_engine_idle(struct nfence_cmp *cmp, u32 engine)
{
	cmp_record(CMP_CALL_ENGINE_IDLE)->reason = engine;
}

static void cmp_rec_adapter_idle(struct nfence_cmp *cmp)
{
	cmp_record(CMP_CALL_ADAPTER_IDLE);
}

/* &nfence_cmp_ops.fence_peers: the fixture's table, for @fence only. */
static const struct nfence_peer_table *
cmp_rec_fence_peers(struct nfence_fence *fence)
{
	struct cmp_fix *f = cmp_current();

	KUNIT_EXPECT_PTR_EQ(f->test, fence, f->fence);
	return f->peers;
}

/* &nfence_cmp_ops.fence_id_exceeds: @fence by its id, read as the driver. */
static bool cmp_rec_fence_id_exceeds(struct nfence_cmp *cmp, u32 id)
{
	struct cmp_fix *f = cmp_current();
	const struct nfence_cmp_fence *view = &f->fences[CMP_STORAGE].view;

	lockdep_assert_held(&cmp->lock);
	f->peer_looks++;
	return id == view->id && !view->always_signaled &&
	       *view->cv > *view->mv;
}

static const struct nfence_cmp_ops cmp_rec_ops = {
	.interrupt = cmp_rec_interrupt,
	.interrupt_queue = cmp_rec_interrupt_queue,
	.log_names = cmp_rec_log_names,
	.fence_view = cmp_rec_fence_view,
	.fence_settle = cmp_rec_fence_settle,
	.fence_put = cmp_rec_fence_put,
	.fence_peers = cmp_rec_fence_peers,
	.fence_id_exceeds = cmp_rec_fence_id_exceeds,
	.entry_step = cmp_rec_entry_step,
	.entry_done = cmp_rec_entry_done,
	.queue_fault = cmp_rec_queue_fault,
	.queue_hang = cmp_rec_queue_hang,
	.entries_drop = cmp_rec_entries_drop,
	.queue_print = cmp_rec_queue_print,
	.engine_idle = cmp_rec_engine_idle,
	.adapter_idle = cmp_rec_adapter_idle,
};

/* Recorded calls of @kind. */
static unsigned int cmp_calls(struct cmp_fix *f, enum cmp_call_kind kind)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->num_calls; i++)
		n += f->calls[i].kind == kind;
	return n;
}

/*
 * The last recorded call of @kind. If there is none, the test fails and
 * gets an empty call (not aborted: the exit function must find the rings
 * the test attached still attached, and detach them).
 */
static const struct cmp_call *cmp_last(struct cmp_fix *f,
				       enum cmp_call_kind kind)
{
	static const struct cmp_call none;
	unsigned int i;

	for (i = f->num_calls; i > 0; i--)
		if (f->calls[i - 1].kind == kind)
			return &f->calls[i - 1];
	KUNIT_FAIL(f->test, "no call of kind %u recorded", kind);
	return &none;
}

/* Interrupts recorded with @fence (NULL: without a payload). */
static unsigned int cmp_irqs(struct cmp_fix *f, struct nfence_fence *fence)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->num_calls; i++)
		n += f->calls[i].kind == CMP_CALL_INTERRUPT &&
		     f->calls[i].fence == fence;
	return n;
}

/* Interrupts recorded with the carry flag. */
static unsigned int cmp_carries(struct cmp_fix *f)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->num_calls; i++)
		n += f->calls[i].kind == CMP_CALL_INTERRUPT &&
		     f->calls[i].carry;
	return n;
}

/* What the driver does to a faulted context: its queues stop. */
static void cmp_stop_context(struct cmp_fix *f, struct nfence_cmp_context *ctx)
{
	unsigned int i;

	mutex_lock(&f->cmp->lock);
	for (i = 0; i < CMP_QUEUES; i++)
		if (f->q[i]->ctx == ctx)
			nfence_cmp_queue_stop_locked(f->cmp, f->q[i],
						     NFENCE_QUEUE_FAULTED,
						     &f->dropped);
	mutex_unlock(&f->cmp->lock);
}

/*
 * What a fault of queue 0 leaves behind: one queue_fault, of queue 0, at
 * @va for @reason, counted once. Then the driver's answer, done here as
 * nfence_hwqueue_context_fault_locked() does it: both queues of context 0
 * stop and drop their work (@dropped entries) and the engine is free; the
 * queue of the other context is not stopped.
 */
static void cmp_expect_fault(struct kunit *test, struct cmp_fix *f, u64 va,
			     u32 reason, unsigned int dropped)
{
	const struct cmp_call *c;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_QUEUE_FAULT), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 1);
	c = cmp_last(f, CMP_CALL_QUEUE_FAULT);
	KUNIT_EXPECT_PTR_EQ(test, c->q, f->q[0]);
	KUNIT_EXPECT_EQ(test, c->value, va);
	KUNIT_EXPECT_EQ(test, c->reason, reason);

	cmp_stop_context(f, &f->ctx[0]);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, f->q[i]->state, NFENCE_QUEUE_FAULTED);
		KUNIT_EXPECT_EQ(test, f->q[i]->num_pending, 0);
		KUNIT_EXPECT_TRUE(test, list_empty(&f->q[i]->pending));
	}
	KUNIT_EXPECT_EQ(test, cmp_count(&f->dropped), dropped);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);
	KUNIT_EXPECT_FALSE(test, nfence_cmp_queue_stopped(f->q[2]));
}

/* The hardware's view of its fence table: offset 0 of @fence_map. */
static struct nfence_fence *cmp_fence_at(struct nfence_vm_mapping *map,
					 u64 offset)
{
	struct cmp_fix *f = container_of(map, struct cmp_fix, sp.fence_map);

	lockdep_assert_held(&map->vm->lock);
	f->fence_at_calls++;
	f->fence_at_offset = offset;
	if (offset >= (f->fence_at_stride ? 64 : 1))
		return NULL;
	f->fence_gets++;
	return f->fence;
}

/*
 * A fence of the fixture: a name for the CMP, slot @i of the table, whose
 * view shows @cv and @mv. The CurrentValue starts at 0, the
 * MonitoredValue at U64_MAX (no waiter).
 */
static struct nfence_fence *cmp_fence(struct cmp_fix *f, unsigned int i,
				      u64 *cv, u64 *mv)
{
	struct cmp_fence *cf = &f->fences[i];

	cf->fence = kunit_kzalloc(f->test, sizeof(*cf->fence), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, cf->fence);
	*cv = 0;
	*mv = U64_MAX;
	cf->view.cv = cv;
	cf->view.mv = mv;
	cf->view.id = i + 1;
	return cf->fence;
}

/* Queue @i of @ctx on @engine, on the CMP's runlist. */
static struct nfence_cmp_queue *cmp_queue(struct cmp_fix *f,
					  struct nfence_cmp_context *ctx,
					  u32 engine, unsigned int i)
{
	struct nfence_cmp_queue *q = &f->queue[i];

	nfence_cmp_queue_init(q);
	q->engine = engine;
	q->ctx = ctx;
	q->vm = &f->sp.vm;
	q->progress = cmp_fence(f, i, &f->pv[i][0], &f->pv[i][1]);

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_add_locked(f->cmp, q);
	mutex_unlock(&f->cmp->lock);
	return q;
}

static u64 cmp_map(struct cmp_fix *f, struct nfence_vm_mapping *map,
		   void *vaddr, u64 size, u32 flags)
{
	KUNIT_ASSERT_EQ(f->test, 0, nfence_vm_map(&f->sp.vm, map, vaddr, size,
						  flags));
	return map->start;
}

static int cmp_init(struct kunit *test)
{
	struct cmp_fix *f;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	INIT_LIST_HEAD(&f->dropped);
	test->priv = f;

	f->gpu.cfg.num_engines = 2;
	f->gpu.cfg.tdr_timeout_ms = 2000;
	f->gpu.timestamp_base_ns = ktime_get_ns();
	f->cmp = &f->cmp_obj;
	nfence_cmp_init(f->cmp, &f->gpu, &cmp_rec_ops);
	f->cmp_ready = true;

	nfence_kspace_init(test, &f->sp, CMP_CMD_BYTES, cmp_fence_at);
	f->ring = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	f->control = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->ring);
	KUNIT_ASSERT_NOT_NULL(test, f->control);
	f->fence = cmp_fence(f, CMP_STORAGE, &f->sp.fvals[0], &f->sp.fvals[1]);
	f->ring_va = cmp_map(f, &f->ring_map, f->ring, PAGE_SIZE, 0);
	f->control_va = cmp_map(f, &f->control_map, f->control, PAGE_SIZE,
				0);

	f->q[0] = cmp_queue(f, &f->ctx[0], 0, 0);
	f->q[1] = cmp_queue(f, &f->ctx[0], 0, 1);
	f->q[2] = cmp_queue(f, &f->ctx[1], 1, 2);
	return 0;
}

static void cmp_exit(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	unsigned int i;

	if (!f)
		return;
	if (f->cmp_ready) {
		mutex_lock(&f->cmp->lock);
		for (i = 0; i < CMP_QUEUES; i++) {
			if (!f->q[i])
				continue;
			/* A ring's entry is the CMP's: off before the rest. */
			nfence_cmp_doorbell_unbind_locked(f->cmp, f->q[i], 0);
			nfence_cmp_ring_detach_locked(f->cmp, f->q[i]);
		}
		mutex_unlock(&f->cmp->lock);
		/* Every reference fence_at gave the CMP came back. */
		KUNIT_EXPECT_EQ(test, f->fence_puts, f->fence_gets);
		mutex_destroy(&f->cmp->lock);
	}
	/* Safe on a mapping never made. */
	nfence_vm_unmap(&f->ring_map);
	nfence_vm_unmap(&f->control_map);
	nfence_kspace_fini(&f->sp);
	for (i = 0; i < CMP_DOORBELLS; i++)
		if (f->doorbells[i])
			__free_page(f->doorbells[i]);
	nfence_peer_table_free(f->peers);
	nfence_peer_bell_put(f->other_bell);
	nfence_peer_bell_put(f->gpu.bell);
}

/* ---- Command emission (nfence_kunit_cs.h) ---- */

static u64 cmp_data_va(struct cmp_fix *f, unsigned int i)
{
	return f->sp.data_va + 8 * i;
}

/* ---- Submission and turns ---- */

/*
 * Queue [@va, @end) on @q with @progress, as the driver pushes a
 * kernel-mode submission once the ioctl has validated it.
 */
static struct nfence_cmp_entry *cmp_submit(struct cmp_fix *f,
					   struct nfence_cmp_queue *q,
					   u64 va, u64 end, u64 progress)
{
	struct nfence_cmp_entry *sub;

	sub = kunit_kzalloc(f->test, sizeof(*sub), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, sub);
	sub->kind = NFENCE_SUB_COMMANDS;
	sub->va = va;
	sub->size = end - va;
	sub->progress_value = progress;

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_push_locked(f->cmp, q, sub);
	mutex_unlock(&f->cmp->lock);
	return sub;
}

/*
 * Give @q a turn on its engine at time @now, as a CMP pass does, of at most
 * @max commands and completed submissions.
 */
static int cmp_run_max(struct cmp_fix *f, struct nfence_cmp_queue *q,
		       u64 now, unsigned int max, unsigned int *ran)
{
	struct nfence_cmp_engine *e = &f->cmp->engines[q->engine];
	int ret;

	*ran = 12345;
	mutex_lock(&f->cmp->lock);
	ret = nfence_engine_run(f->cmp, e, q, now, max, ran, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	/* The interrupt the turn coalesced, as the CMP raises it after a pass. */
	nfence_engine_flush(f->cmp);
	return ret;
}

static int cmp_run_at(struct cmp_fix *f, struct nfence_cmp_queue *q,
		      u64 now, unsigned int *ran)
{
	return cmp_run_max(f, q, now, NFENCE_ENGINE_BUDGET, ran);
}

static int cmp_run(struct cmp_fix *f, struct nfence_cmp_queue *q,
		   unsigned int *ran)
{
	return cmp_run_at(f, q, CMP_NOW, ran);
}

/* Write @n NOPs; returns the GPU VA of the first. */
static u64 cmp_nops(struct cmp_fix *f, unsigned int n)
{
	u64 start = nfence_kcs_cursor(&f->sp.cs);

	while (n--)
		nfence_kcs_nop(&f->sp.cs);
	return start;
}

static unsigned int cmp_count(struct list_head *list)
{
	struct list_head *pos;
	unsigned int n = 0;

	list_for_each(pos, list)
		n++;
	return n;
}

static s64 cmp_commands(struct cmp_fix *f)
{
	return atomic64_read(&f->cmp->commands);
}

/* The GPU's own interrupt counters (the driver's are not kept here). */
#define CMP_IRQ(f, field)	atomic64_read(&(f)->gpu.irq_stats.field)

/* Take what stopped queues dropped off the list (the entries are kunit's). */
static void cmp_drop(struct cmp_fix *f)
{
	INIT_LIST_HEAD(&f->dropped);
}

/* ---- Tests ---- */

/*
 * NOP-only submissions run to completion in one turn: every command is
 * counted, the progress fence reaches each submission's value in order, and
 * the queue goes idle. The progress signal follows the interrupt rule.
 */
static void cmp_nop_runs_to_idle(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	const struct cmp_call *c;
	unsigned int ran;
	u64 start;

	/* As a CPU waiter for progress 2 leaves it: MonitoredValue 1. */
	f->pv[0][1] = 1;

	start = cmp_nops(f, 5);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	start = cmp_nops(f, 3);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q->num_pending, 2);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	/* Eight commands and two completed submissions. */
	KUNIT_EXPECT_EQ(test, ran, 10);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 8);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 2);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, q->num_pending, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->pending));
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 0);

	/* Progress 1 did not pass MonitoredValue 1; progress 2 did. */
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 2);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	/* The interrupt names the progress fence and its value. */
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 1);
	c = cmp_last(f, CMP_CALL_INTERRUPT);
	KUNIT_EXPECT_PTR_EQ(test, c->fence, q->progress);
	KUNIT_EXPECT_EQ(test, c->value, 2);
	KUNIT_EXPECT_FALSE(test, c->carry);
	/* Both entries went back to the driver, in order. */
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_ENTRY_DONE), 2);

	/* Nothing left: idle again, nothing run. */
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 0);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * FENCE_WAIT on a value not reached parks the queue at that command; turns
 * re-run it until the value is written, then the queue goes on.
 */
static void cmp_fence_wait_blocks(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	struct nfence_cmp_entry *sub;
	u64 start, wait_cmd;
	unsigned int ran;

	f->sp.data[0] = CMP_WAIT_VALUE - 1;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	/* Already reached: passes. */
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 0);
	wait_cmd = nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0),
				   CMP_WAIT_VALUE);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 1), CMP_VALUE);
	sub = cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 2);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, q->wait_va, cmp_data_va(f, 0));
	KUNIT_EXPECT_EQ(test, q->wait_value, CMP_WAIT_VALUE);
	/* Parked at the FENCE_WAIT itself, not past it. */
	KUNIT_EXPECT_EQ(test, sub->offset, wait_cmd - start);
	KUNIT_EXPECT_EQ(test, q->num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 0);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);

	/* Still not reached (the low 32 bits alone would be): parked again. */
	f->sp.data[0] = CMP_WAIT_VALUE - 0x100000000ull;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, ran, 0);
	KUNIT_EXPECT_EQ(test, sub->offset, wait_cmd - start);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 2);

	/* Reached exactly: the wait, the write, the completion. */
	f->sp.data[0] = CMP_WAIT_VALUE;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 4);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], CMP_VALUE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, q->num_pending, 0);
}

/*
 * The CPU may write over a command buffer between two passes: a FENCE_WAIT
 * the queue parked on, overwritten with NOPs, is no wait any more. Once the
 * NOPs run, the queue is neither counted as parked (every CPU signal would
 * kick the CMP for it) nor remembers when the engine first found that wait
 * unresolved (a later logged wait would report it as its own). Another
 * FENCE_WAIT written over it is found unresolved anew, at its own time.
 */
static void cmp_fence_wait_overwritten(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 start, wait_cmd, end, nops, other, seen;
	unsigned int ran;

	f->sp.data[0] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	wait_cmd = nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 1);
	end = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 1), CMP_VALUE);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	/* As many NOPs as the FENCE_WAIT's bytes, past what was submitted. */
	nops = nfence_kcs_cursor(&f->sp.cs);
	while (nfence_kcs_cursor(&f->sp.cs) - nops < end - wait_cmd)
		nfence_kcs_nop(&f->sp.cs);
	KUNIT_ASSERT_EQ(test, nfence_kcs_cursor(&f->sp.cs) - nops,
			end - wait_cmd);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_TRUE(test, q->parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	seen = q->wait_seen_ts;
	KUNIT_EXPECT_NE(test, seen, 0);

	/* Another FENCE_WAIT written over it: seen unresolved anew. */
	other = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 2), 1);
	memcpy(nfence_kcs_ptr(&f->sp.cs, wait_cmd),
	       nfence_kcs_ptr(&f->sp.cs, other), end - wait_cmd);
	f->sp.data[2] = 0;
	/* Ticks of 10 ns apart, whatever the clock's resolution. */
	usleep_range(100, 200);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	KUNIT_EXPECT_GT(test, q->wait_seen_ts, seen);

	memcpy(nfence_kcs_ptr(&f->sp.cs, wait_cmd),
	       nfence_kcs_ptr(&f->sp.cs, nops), end - wait_cmd);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], CMP_VALUE);
	KUNIT_EXPECT_FALSE(test, q->parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 0);
	KUNIT_EXPECT_EQ(test, q->wait_seen_ts, 0);
}

/* Whether a kick is pending, cleared as the CMP thread clears it. */
static bool cmp_kicked(struct cmp_fix *f)
{
	return test_and_clear_bit(NFENCE_CMP_KICK, &f->cmp->pending);
}

/*
 * A CPU signal kicks the CMP (nfence_cmp_kick_waiters()) only while a
 * queue is parked on a FENCE_WAIT: counted once per queue however often
 * it is found unresolved again, no longer once its wait is resolved or
 * the queue stopped.
 */
static void cmp_fence_wait_parked_kicks(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q0 = f->q[0], *q1 = f->q[1];
	unsigned int ran;
	u64 start;

	cmp_kicked(f);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, cmp_kicked(f));

	f->sp.data[0] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 1);
	cmp_submit(f, q0, start, nfence_kcs_cursor(&f->sp.cs), 1);
	cmp_submit(f, q1, start, nfence_kcs_cursor(&f->sp.cs), 1);
	/* Runs and ends without parking: nothing to kick for. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 0);
	cmp_submit(f, f->q[2], start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 0);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, cmp_kicked(f));

	KUNIT_EXPECT_EQ(test, cmp_run(f, q0, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_TRUE(test, q0->parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_TRUE(test, cmp_kicked(f));
	/* Found unresolved again: still counted once. */
	KUNIT_EXPECT_EQ(test, cmp_run(f, q0, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q1, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 2);

	/* q1 stops with its wait unresolved, q0's is resolved. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_stop_locked(f->cmp, q1, NFENCE_QUEUE_FAULTED,
				     &f->dropped);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, q1->parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	f->sp.data[0] = 1;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q0, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_FALSE(test, q0->parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 0);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, cmp_kicked(f));
	cmp_drop(f);
}

/*
 * FENCE_SIGNAL to ordinary memory: the store, and the interrupt check
 * against the MonitoredValue at mv_va. Memory the GPU does not know as a
 * fence raises the interrupt without a payload (the driver scans its
 * fences, coalesced after the turn). Each submission's progress signal
 * adds a signal, suppressed (its MonitoredValue is U64_MAX).
 */
static void cmp_fence_signal_memory(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 cv_va = cmp_data_va(f, 2), mv_va = cmp_data_va(f, 3);
	unsigned int ran;
	u64 start;

	/* MonitoredValue below the value: interrupt. */
	f->sp.data[3] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, cv_va, mv_va, 7);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 7);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 2);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);

	/* MonitoredValue U64_MAX: suppressed. */
	f->sp.data[3] = U64_MAX;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, cv_va, mv_va, 8);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 8);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 4);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 3);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);

	/* Equal to MonitoredValue: not above it, suppressed. */
	f->sp.data[3] = 9;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, cv_va, mv_va, 9);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 3);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 9);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 6);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 5);

	/* mv_va 0: no check at all, neither interrupt nor suppressed. */
	f->sp.data[3] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, cv_va, 0, 10);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 4);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 10);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 8);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 6);

	/* A plain store: a lower value lowers it. */
	f->sp.data[3] = 2;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, cv_va, mv_va, 3);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 5);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 3);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 10);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, suppressed), 7);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 2);
	/* None named a fence: the progress signals were all suppressed. */
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 2);

	KUNIT_EXPECT_EQ(test, cmp_commands(f), 5);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 5);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 0);
}

/*
 * FENCE_SIGNALs to ordinary memory each raise the interrupt, but the
 * engine coalesces them: one interrupt without a payload (for the driver,
 * one scan of the adapter's fences) after the turn (nfence_engine_flush()),
 * not one per command, and none before the flush.
 * A signal of a fence the engine knows is not coalesced.
 */
static void cmp_fence_signal_memory_coalesced(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 cv_va = cmp_data_va(f, 2), mv_va = cmp_data_va(f, 3);
	struct nfence_cmp_engine *e = &f->cmp->engines[q->engine];
	unsigned int ran, i;
	u64 start;

	f->sp.data[3] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	for (i = 1; i <= 5; i++)
		nfence_kcs_signal(&f->sp.cs, cv_va, mv_va, i);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, nfence_engine_run(f->cmp, e, q, CMP_NOW,
						NFENCE_ENGINE_BUDGET, &ran,
						&f->dropped),
			NFENCE_RUN_IDLE);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 5);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 5);
	/* Raised, not handed to the driver yet. */
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 0);
	nfence_engine_flush(f->cmp);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);
	/* Nothing left to raise. */
	nfence_engine_flush(f->cmp);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 1);
}

/*
 * FENCE_SIGNAL to fence storage: the engine asks the mapping's fence_at
 * which fence it is, at the offset of cv_va in the mapping, and the
 * interrupt names that fence and the value (the driver wakes its waiters).
 * The engine gives back the reference fence_at took.
 */
static void cmp_fence_signal_fence_at(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	const struct cmp_call *c;
	unsigned int ran;
	u64 start;

	/* As a CPU waiter for 5 leaves it: MonitoredValue 4. */
	f->sp.fvals[1] = 4;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8, 5);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 5);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 0);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 1);
	c = cmp_last(f, CMP_CALL_INTERRUPT);
	KUNIT_EXPECT_PTR_EQ(test, c->fence, f->fence);
	KUNIT_EXPECT_EQ(test, c->value, 5);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 0);
	KUNIT_EXPECT_EQ(test, f->fence_puts, f->fence_gets);

	/* Another offset of the mapping: fence_at finds nothing there. */
	f->sp.fvals[3] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va + 16, f->sp.fence_va + 24,
			  1);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[2], 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 2);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 16);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 1);
	KUNIT_EXPECT_EQ(test, f->fence_puts, f->fence_gets);
}

/* Run @q's one pending submission to the end. */
static void cmp_run_idle(struct cmp_fix *f, struct nfence_cmp_queue *q)
{
	unsigned int ran;

	KUNIT_EXPECT_EQ(f->test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
}

/*
 * A pool page's fence_at answers for a slot's whole stride, but only the
 * slot's first word is the fence's CurrentValue: a FENCE_SIGNAL of another
 * word of the stride is ordinary memory. On a 32-bit GPU it gets both
 * halves and no carry, and the fence itself is left alone (no interrupt
 * names it).
 */
static void cmp_32bit_signal_in_stride(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 start;

	f->gpu.cfg.no_64bit_atomics = true;
	f->fence_at_stride = true;
	f->sp.fvals[0] = 5;
	f->sp.fvals[2] = 5;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va + 16, 0, 0x100000005ull);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	cmp_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 16);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[2], 0x100000005ull);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 5);
	KUNIT_EXPECT_EQ(test, cmp_carries(f), 0);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 0);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT), 0);
	KUNIT_EXPECT_EQ(test, f->fence_puts, f->fence_gets);
}

/*
 * A GPU without 64-bit atomics compares the low halves as serial numbers:
 * a wait across 2^32 holds until the value gets there (an unsigned 32-bit
 * compare would pass at once), and beyond the UINT_MAX/2 window the low
 * halves alone decide.
 */
static void cmp_32bit_wait_serial(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	unsigned int ran;
	u64 start;

	f->gpu.cfg.no_64bit_atomics = true;
	f->sp.data[0] = 0xfffffff0ull;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 0x100000010ull);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 1), 1);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 0x200000003ull);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 1), 2);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 0);
	f->sp.data[0] = 0x10000000full;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 0);
	/*
	 * Reached. 0x2_00000003 is more than UINT_MAX/2 ahead, out of the
	 * window: low 0x10 is past low 3, so the GPU passes it too.
	 */
	f->sp.data[0] = 0x100000010ull;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 2);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
}

/* WRITE64 and TIMESTAMP store 64-bit values through the address space. */
static void cmp_write64_timestamp(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	unsigned int ran;
	u64 start, before, after;

	f->sp.data[4] = U64_MAX;
	f->sp.data[5] = U64_MAX;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 4), CMP_VALUE);
	nfence_kcs_timestamp(&f->sp.cs, cmp_data_va(f, 5));
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 6), 0);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	before = nfence_gpu_timestamp(&f->gpu, NULL);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	after = nfence_gpu_timestamp(&f->gpu, NULL);
	KUNIT_EXPECT_EQ(test, ran, 4);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 3);
	KUNIT_EXPECT_EQ(test, f->sp.data[4], CMP_VALUE);
	KUNIT_EXPECT_GE(test, f->sp.data[5], before);
	KUNIT_EXPECT_LE(test, f->sp.data[5], after);
	KUNIT_EXPECT_EQ(test, f->sp.data[6], 0);
	/* Nothing else in the page was touched. */
	KUNIT_EXPECT_EQ(test, f->sp.data[3], 0);
	KUNIT_EXPECT_EQ(test, f->sp.data[7], 0);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 1);
}

/*
 * WORK occupies the queue's engine until now + duration; the queue is
 * RUNNING, past the WORK command, and the progress fence waits for the
 * rest. WORK 0 takes no time. The other engine stays free.
 */
static void cmp_work_busy(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_engine *e0 = &f->cmp->engines[0];
	struct nfence_cmp_engine *e1 = &f->cmp->engines[1];
	struct nfence_cmp_queue *q = f->q[0];
	struct nfence_cmp_entry *sub;
	u64 start, work_cmd, before, after;
	unsigned int ran;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	work_cmd = nfence_kcs_work(&f->sp.cs, 1500000);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 0), 1);
	sub = cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	/* WORK starts when it runs, on the clock, not at the turn's start. */
	before = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, cmp_run_at(f, q, CMP_NOW, &ran),
			NFENCE_RUN_BUSY);
	after = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 2);
	KUNIT_EXPECT_PTR_EQ(test, e0->busy, q);
	KUNIT_EXPECT_EQ(test, e0->busy_until_ns, q->work_start_ns + 1500000);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_RUNNING);
	KUNIT_EXPECT_GE(test, q->work_start_ns, before);
	KUNIT_EXPECT_LE(test, q->work_start_ns, after);
	KUNIT_EXPECT_EQ(test, sub->offset, work_cmd + 16 - start);
	KUNIT_EXPECT_EQ(test, f->sp.data[0], 0);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_NULL(test, e1->busy);

	/*
	 * What the CMP does once the deadline passed (nfence_cmp_engine_busy()
	 * is static): free the engine, make the queue ready. The queue goes
	 * on after the WORK.
	 */
	mutex_lock(&f->cmp->lock);
	e0->busy = NULL;
	nfence_cmp_queue_set_state_locked(f->cmp, q, NFENCE_QUEUE_READY);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, cmp_run_at(f, q, CMP_NOW + 1500000, &ran),
			NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->sp.data[0], 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_NULL(test, e0->busy);

	/* WORK 0: no time, no busy engine. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_work(&f->sp.cs, 0);
	nfence_kcs_nop(&f->sp.cs);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_NULL(test, e0->busy);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);

	/* The longest WORK, on engine 1: engine 0 is not involved. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_work(&f->sp.cs, DRM_NFENCE_CS_MAX_WORK_NS);
	cmp_submit(f, f->q[2], start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run_at(f, f->q[2], CMP_NOW + 7, &ran),
			NFENCE_RUN_BUSY);
	KUNIT_EXPECT_EQ(test, ran, 1);
	KUNIT_EXPECT_PTR_EQ(test, e1->busy, f->q[2]);
	KUNIT_EXPECT_EQ(test, e1->busy_until_ns,
			f->q[2]->work_start_ns + DRM_NFENCE_CS_MAX_WORK_NS);
	KUNIT_EXPECT_EQ(test, f->q[2]->state, NFENCE_QUEUE_RUNNING);
	KUNIT_EXPECT_NULL(test, e0->busy);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);
}

/*
 * A turn runs at most NFENCE_ENGINE_BUDGET commands, then yields with the
 * queue still ready; the next turn finishes.
 */
static void cmp_budget_yields(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	struct nfence_cmp_entry *sub;
	unsigned int ran;
	u64 start;

	start = cmp_nops(f, NFENCE_ENGINE_BUDGET + 10);
	sub = cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_YIELD);
	KUNIT_EXPECT_EQ(test, ran, NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, sub->offset, 8 * NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q->num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 11);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), NFENCE_ENGINE_BUDGET + 10);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_IDLE);
}

/*
 * A turn given less than NFENCE_ENGINE_BUDGET stops there and yields with
 * the queue ready, as a whole-budget turn does.
 */
static void cmp_turn_max(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	struct nfence_cmp_entry *sub;
	unsigned int ran;
	u64 start;

	start = cmp_nops(f, 10);
	sub = cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	KUNIT_EXPECT_EQ(test, cmp_run_max(f, q, CMP_NOW, 3, &ran),
			NFENCE_RUN_YIELD);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 3);
	KUNIT_EXPECT_EQ(test, sub->offset, 8 * 3);
	KUNIT_EXPECT_EQ(test, q->state, NFENCE_QUEUE_READY);

	/* The completion counts too: 7 commands and the submission. */
	KUNIT_EXPECT_EQ(test, cmp_run_max(f, q, CMP_NOW, 7, &ran),
			NFENCE_RUN_YIELD);
	KUNIT_EXPECT_EQ(test, ran, 7);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_EQ(test, cmp_run_max(f, q, CMP_NOW, 7, &ran),
			NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 1);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), 10);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
}

/*
 * The optimized interrupt (NFENCE_IRQ_QUEUE) a turn noted for the end of
 * its pass goes out first when the queue leaves the runlist before that,
 * naming the queue while it is still alive.
 */
static void cmp_remove_raises_queue_irq(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	const struct cmp_call *c;
	unsigned int ran;
	u64 start;

	f->gpu.cfg.irq_payload = NFENCE_IRQ_QUEUE;
	/* As a CPU waiter for progress 1 leaves it: MonitoredValue 0. */
	f->pv[0][1] = 0;
	start = cmp_nops(f, 1);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	/* Noted for the end of the pass, not raised yet. */
	KUNIT_EXPECT_PTR_EQ(test, f->cmp->engines[0].irq_queue, q);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT_QUEUE), 0);

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_remove_locked(f->cmp, q);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_INTERRUPT_QUEUE), 1);
	c = cmp_last(f, CMP_CALL_INTERRUPT_QUEUE);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_PTR_EQ(test, c->q, q);
	KUNIT_EXPECT_EQ(test, c->reason, 0);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].irq_queue);

	/* Back on its runlist, as the fixture made it. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_add_locked(f->cmp, q);
	mutex_unlock(&f->cmp->lock);
}

/* NOPs a queue of cmp_pass_budget runs; the first queue runs fewer. */
#define CMP_PASS_NOPS		1500
#define CMP_PASS_FIRST_NOPS	1000

/*
 * A pass runs at most NFENCE_CMP_PASS_BUDGET commands and completed
 * submissions on an engine, however its queues' turns divide them: with
 * three queues on engine 0, the first turn completes 1000 NOPs and its
 * submission (1001), the second runs a whole turn (1024) and the third only
 * what is left (23), not another whole turn. The next passes run the rest,
 * each queue one turn per pass.
 */
static void cmp_pass_budget(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_entry *sub[CMP_QUEUES];
	unsigned int first, i, passes;
	u64 start, end, deadline;
	s64 total;

	/* q[2] moves to engine 0: three queues share its budget. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_remove_locked(f->cmp, f->q[2]);
	f->q[2]->engine = 0;
	nfence_cmp_queue_add_locked(f->cmp, f->q[2]);
	mutex_unlock(&f->cmp->lock);

	/* One buffer of NOPs, submitted to every queue (nothing writes it). */
	start = cmp_nops(f, CMP_PASS_NOPS);
	end = nfence_kcs_cursor(&f->sp.cs);
	sub[0] = cmp_submit(f, f->q[0], start, start + 8 * CMP_PASS_FIRST_NOPS,
			    1);
	sub[1] = cmp_submit(f, f->q[1], start, end, 1);
	sub[2] = cmp_submit(f, f->q[2], start, end, 1);

	KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	first = NFENCE_CMP_PASS_BUDGET - (CMP_PASS_FIRST_NOPS + 1) -
		NFENCE_ENGINE_BUDGET;
	KUNIT_EXPECT_EQ(test, cmp_commands(f),
			NFENCE_CMP_PASS_BUDGET - 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, sub[1]->offset, 8 * NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, sub[2]->offset, 8 * first);
	KUNIT_EXPECT_EQ(test, f->q[1]->state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, f->q[2]->state, NFENCE_QUEUE_READY);

	/* The rest, in passes that each stay within the budget. */
	total = cmp_commands(f);
	for (passes = 1; passes < 10; passes++) {
		if (!nfence_cmp_run_pass(f->cmp, &deadline))
			break;
		KUNIT_EXPECT_LE(test, cmp_commands(f) - total,
				NFENCE_CMP_PASS_BUDGET);
		total = cmp_commands(f);
	}
	/* 477 + 1024, then 453 + 1, then a pass that finds nothing to run. */
	KUNIT_EXPECT_EQ(test, passes, 3);
	KUNIT_EXPECT_EQ(test, cmp_commands(f),
			CMP_PASS_FIRST_NOPS + 2 * CMP_PASS_NOPS);
	for (i = 0; i < CMP_QUEUES; i++) {
		KUNIT_EXPECT_EQ(test, f->pv[i][0], 1);
		KUNIT_EXPECT_EQ(test, f->q[i]->state, NFENCE_QUEUE_IDLE);
	}
	KUNIT_EXPECT_EQ(test, deadline, 0);
}

/*
 * Scheduling priorities weigh turns on one engine. q[0] and q[1] share
 * engine 0, in contexts of their own, each with more NOPs than the passes
 * below run; a pass gives engine 0 two visits (one per queue). Each pass's
 * turns are read back from the engine's turn count and the queues' last
 * turns.
 */
static void cmp_priority_turns(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_engine *e = &f->cmp->engines[0];
	struct nfence_cmp_queue *q0 = f->q[0], *q1 = f->q[1];
	unsigned int i, yield_pass;
	u64 start, end, deadline;
	u32 base;

	mutex_lock(&f->cmp->lock);
	q1->ctx = &f->ctx[1];
	f->ctx[1].priority = 1;
	mutex_unlock(&f->cmp->lock);
	start = cmp_nops(f, CMP_PASS_NOPS);
	end = nfence_kcs_cursor(&f->sp.cs);
	for (i = 1; i <= 8; i++) {
		cmp_submit(f, q0, start, end, i);
		cmp_submit(f, q1, start, end, i);
	}

	/* Priority 1 against 0: q0 q1 | q1 q0 | q1 q1. */
	base = e->turns;
	KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	KUNIT_EXPECT_EQ(test, e->turns - base, 2);
	KUNIT_EXPECT_EQ(test, q0->last_turn - base, 1);
	KUNIT_EXPECT_EQ(test, q1->last_turn - base, 2);
	KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	KUNIT_EXPECT_EQ(test, q1->last_turn - base, 3);
	KUNIT_EXPECT_EQ(test, q0->last_turn - base, 4);
	KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	KUNIT_EXPECT_EQ(test, e->turns - base, 6);
	KUNIT_EXPECT_EQ(test, q1->last_turn - base, 6);
	KUNIT_EXPECT_EQ(test, q0->last_turn - base, 4);

	/*
	 * Priority -1 for q0 against 0: it runs once two turns of q1 have run
	 * since its own, yielding its visit in every other pass.
	 */
	mutex_lock(&f->cmp->lock);
	f->ctx[0].priority = -1;
	f->ctx[1].priority = 0;
	mutex_unlock(&f->cmp->lock);
	base = e->turns;
	yield_pass = 0;
	for (i = 0; i < 4; i++) {
		u32 before = q0->last_turn;

		KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
		if (q0->last_turn == before)
			yield_pass++;
		else
			KUNIT_EXPECT_GE(test, q0->last_turn - before, 3);
	}
	KUNIT_EXPECT_EQ(test, yield_pass, 2);
	KUNIT_EXPECT_EQ(test, e->turns - base, 6);
	KUNIT_EXPECT_TRUE(test, !e->no_yield);
}

/*
 * A queue of priority -7 alone on its engine: a pass in which it yields
 * and the engine runs nothing reports progress, and in the next pass
 * nobody yields, so it runs every other pass.
 */
static void cmp_priority_alone(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_engine *e = &f->cmp->engines[0];
	struct nfence_cmp_queue *q0 = f->q[0];
	u64 start, end, deadline;
	unsigned int i;
	u32 before;

	mutex_lock(&f->cmp->lock);
	f->ctx[0].priority = DRM_NFENCE_CONTEXT_PRIORITY_MIN;
	mutex_unlock(&f->cmp->lock);
	start = cmp_nops(f, CMP_PASS_NOPS);
	end = nfence_kcs_cursor(&f->sp.cs);
	for (i = 1; i <= 8; i++)
		cmp_submit(f, q0, start, end, i);

	/* Its first turn: a new queue never yields it. */
	before = e->turns;
	KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	KUNIT_EXPECT_EQ(test, q0->last_turn, before + 1);
	for (i = 0; i < 3; i++) {
		before = e->turns;
		/* Yielded, nothing ran: another pass must follow. */
		KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
		KUNIT_EXPECT_EQ(test, e->turns, before);
		KUNIT_EXPECT_TRUE(test, e->no_yield);
		KUNIT_EXPECT_TRUE(test, nfence_cmp_run_pass(f->cmp, &deadline));
		KUNIT_EXPECT_EQ(test, q0->last_turn, before + 1);
		KUNIT_EXPECT_TRUE(test, !e->no_yield);
	}
}

/* A command whose operands cross from one mapping into the next runs. */
static void cmp_command_straddles_mappings(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	unsigned int ran;
	u64 start;

	f->sp.cs.used = CMP_CMD_BYTES - 16;
	f->sp.data[3] = 0;
	start = nfence_kcs_signal(&f->sp.cs, cmp_data_va(f, 2),
				  cmp_data_va(f, 3), CMP_VALUE);
	KUNIT_ASSERT_GT(test, nfence_kcs_cursor(&f->sp.cs),
			f->sp.cmd_tail_map.start);
	nfence_kcs_nop(&f->sp.cs);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], CMP_VALUE);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 0);
}

enum cmp_fault_kind {
	CMP_FAULT_WRITE64_UNMAPPED,
	CMP_FAULT_WRITE64_READ_ONLY,
	CMP_FAULT_WAIT_UNMAPPED,
	CMP_FAULT_WAIT_BEYOND_SPACE,
	CMP_FAULT_SIGNAL_CV_READ_ONLY,
	CMP_FAULT_SIGNAL_MV_UNMAPPED,
	CMP_FAULT_TIMESTAMP_READ_ONLY,
	CMP_FAULT_UNKNOWN_OPCODE,
	CMP_FAULT_FLAGS,
	CMP_FAULT_PAST_END,
	CMP_FAULT_MISALIGNED,
	CMP_FAULT_COMMANDS_UNMAPPED,
};

struct cmp_fault_case {
	const char *name;
	enum cmp_fault_kind kind;
	u32 reason;
};

static const struct cmp_fault_case cmp_fault_cases[] = {
	{ "WRITE64_unmapped", CMP_FAULT_WRITE64_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "WRITE64_read_only", CMP_FAULT_WRITE64_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_WAIT_unmapped", CMP_FAULT_WAIT_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_WAIT_beyond_space", CMP_FAULT_WAIT_BEYOND_SPACE,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_SIGNAL_cv_read_only", CMP_FAULT_SIGNAL_CV_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_SIGNAL_mv_unmapped", CMP_FAULT_SIGNAL_MV_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "TIMESTAMP_read_only", CMP_FAULT_TIMESTAMP_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "unknown_opcode", CMP_FAULT_UNKNOWN_OPCODE,
	  DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "header_flags", CMP_FAULT_FLAGS, DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "command_past_end", CMP_FAULT_PAST_END,
	  DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "misaligned_operand", CMP_FAULT_MISALIGNED,
	  DRM_NFENCE_FAULT_MISALIGNED },
	{ "commands_unmapped", CMP_FAULT_COMMANDS_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
};

static void cmp_fault_desc(const struct cmp_fault_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cmp_fault, cmp_fault_cases, cmp_fault_desc);

/*
 * Each run-time fault is reported for its queue with its VA and reason:
 * the operand for a page fault, the command's address for a command the
 * decoder rejects. The command before it ran; nothing after it did, and
 * a page fault stores nothing. Stopped as the driver stops a faulted
 * context, its queues drop their work; the other context's queue keeps
 * its own.
 */
static void cmp_fault_reasons(struct kunit *test)
{
	const struct cmp_fault_case *c = test->param_value;
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 start, end, va = 0, cmd;
	unsigned int ran, ran_before = 1;
	const u64 ops[] = { cmp_data_va(f, 0), 1 };
	int ret;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	switch (c->kind) {
	case CMP_FAULT_WRITE64_UNMAPPED:
		va = CMP_UNMAPPED;
		nfence_kcs_write64(&f->sp.cs, va, 1);
		break;
	case CMP_FAULT_WRITE64_READ_ONLY:
		va = f->sp.ro_va;
		nfence_kcs_write64(&f->sp.cs, va, 1);
		break;
	case CMP_FAULT_WAIT_UNMAPPED:
		va = CMP_UNMAPPED;
		nfence_kcs_wait(&f->sp.cs, va, 1);
		break;
	case CMP_FAULT_WAIT_BEYOND_SPACE:
		/*
		 * The end of the address space. Only a read, and for a value
		 * any u64 reaches: see vm_find_beyond_space in
		 * nfence_vm_test.c for what may come back for such a VA.
		 */
		va = NFENCE_VM_END;
		nfence_kcs_wait(&f->sp.cs, va, 0);
		break;
	case CMP_FAULT_SIGNAL_CV_READ_ONLY:
		va = f->sp.ro_va;
		nfence_kcs_signal(&f->sp.cs, va, cmp_data_va(f, 3), 1);
		break;
	case CMP_FAULT_SIGNAL_MV_UNMAPPED:
		va = CMP_UNMAPPED;
		nfence_kcs_signal(&f->sp.cs, cmp_data_va(f, 0), va, 1);
		break;
	case CMP_FAULT_TIMESTAMP_READ_ONLY:
		va = f->sp.ro_va + 8;
		nfence_kcs_timestamp(&f->sp.cs, va);
		break;
	case CMP_FAULT_UNKNOWN_OPCODE:
		va = nfence_kcs_emit(&f->sp.cs, DRM_NFENCE_CS_WORK + 1,
				     DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		break;
	case CMP_FAULT_FLAGS:
		va = nfence_kcs_emit_raw(&f->sp.cs, DRM_NFENCE_CS_WRITE64, 1,
					 DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		break;
	case CMP_FAULT_PAST_END:
		va = nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 0), 1);
		break;
	case CMP_FAULT_MISALIGNED:
		cmd = nfence_kcs_emit(&f->sp.cs, DRM_NFENCE_CS_WRITE64,
				      DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		/* The fault names the misaligned operand. */
		va = cmp_data_va(f, 0) + 4;
		nfence_kcs_put64(nfence_kcs_ptr(&f->sp.cs, cmd) + 8, va);
		break;
	case CMP_FAULT_COMMANDS_UNMAPPED:
		break;
	}
	nfence_kcs_nop(&f->sp.cs);
	end = nfence_kcs_cursor(&f->sp.cs);
	if (c->kind == CMP_FAULT_PAST_END)
		end = va + 16;
	if (c->kind == CMP_FAULT_COMMANDS_UNMAPPED) {
		start = CMP_UNMAPPED;
		end = start + 16;
		va = start;
		ran_before = 0;
	}
	cmp_submit(f, q, start, end, 1);
	cmd = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	cmp_submit(f, q, cmd, nfence_kcs_cursor(&f->sp.cs), 2);
	/* Queue 1 of the same context has work too; queue 2 is elsewhere. */
	cmp_submit(f, f->q[1], cmd, nfence_kcs_cursor(&f->sp.cs), 1);
	cmp_submit(f, f->q[2], cmd, nfence_kcs_cursor(&f->sp.cs), 1);

	ret = cmp_run(f, q, &ran);
	KUNIT_ASSERT_EQ_MSG(test, ret, NFENCE_RUN_FAULT, "no fault at %#llx",
			    va);
	KUNIT_EXPECT_EQ(test, ran, ran_before);
	KUNIT_EXPECT_EQ(test, cmp_commands(f), ran_before);
	cmp_expect_fault(test, f, va, c->reason, 3);
	KUNIT_EXPECT_EQ(test, f->sp.data[0], 0);
	KUNIT_EXPECT_EQ(test, f->sp.ro[0], 0);
	KUNIT_EXPECT_EQ(test, f->sp.ro[1], 0);
	KUNIT_EXPECT_EQ(test, f->q[2]->num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->q[2]->state, NFENCE_QUEUE_READY);
	/* Nothing was signaled: the progress fences were given up instead. */
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, signals), 0);

	cmp_drop(f);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * The command buffer is read again when it runs: a valid command rewritten
 * after submission with a misaligned operand is a MISALIGNED fault, at the
 * misaligned operand.
 */
static void cmp_misaligned_after_submit(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q = f->q[0];
	u64 start, cmd;
	unsigned int ran;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 0), 1);
	cmd = nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 1), 2);
	nfence_kcs_nop(&f->sp.cs);
	cmp_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);

	/* As user space would, through its CPU mapping. */
	nfence_kcs_put64(nfence_kcs_ptr(&f->sp.cs, cmd) + 8,
			 cmp_data_va(f, 1) + 4);

	KUNIT_EXPECT_EQ(test, cmp_run(f, q, &ran), NFENCE_RUN_FAULT);
	KUNIT_EXPECT_EQ(test, ran, 1);
	KUNIT_EXPECT_EQ(test, f->sp.data[0], 1);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 0);
	cmp_expect_fault(test, f, cmp_data_va(f, 1) + 4,
			 DRM_NFENCE_FAULT_MISALIGNED, 1);
	cmp_drop(f);
}

/* ---- User-mode queues: rings and doorbells ---- */

/* Give @q a ring over the fixture's ring buffer and control. */
static void cmp_ring_attach(struct cmp_fix *f, struct nfence_cmp_queue *q,
			    struct nfence_cmp_ring *ring, u64 *status)
{
	memset(ring, 0, sizeof(*ring));
	ring->ring_va = f->ring_va;
	ring->control_va = f->control_va;
	ring->num_entries = CMP_RING_ENTRIES;
	ring->status = status;
	mutex_lock(&f->cmp->lock);
	nfence_cmp_ring_attach_locked(f->cmp, q, ring);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(f->test, *status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
}

static void cmp_ring_detach(struct cmp_fix *f, struct nfence_cmp_queue *q)
{
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_unbind_locked(f->cmp, q, 0);
	nfence_cmp_ring_detach_locked(f->cmp, q);
	mutex_unlock(&f->cmp->lock);
}

/* Entry @i of the ring: [@va, @end), @flags. */
static void cmp_ring_put(struct cmp_fix *f, u64 i, u64 va, u64 end,
			 u32 flags)
{
	struct drm_nfence_ring_entry *e = &f->ring[i % CMP_RING_ENTRIES];

	e->commands_gpu_va = va;
	e->size = end - va;
	e->flags = flags;
}

/* What a ring taken from a doorbell does: the write index @v is seen. */
static void cmp_ring_seen(struct cmp_fix *f, struct nfence_cmp_queue *q,
			  u64 v)
{
	mutex_lock(&f->cmp->lock);
	q->ring->seen = v;
	if (q->state == NFENCE_QUEUE_IDLE)
		nfence_cmp_queue_set_state_locked(f->cmp, q,
						  NFENCE_QUEUE_READY);
	mutex_unlock(&f->cmp->lock);
}

static void cmp_ring_runs_entries(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	unsigned int ran, i;
	u64 status, start;

	cmp_ring_attach(f, f->q[0], &ring, &status);
	/* More than once around the ring. */
	for (i = 0; i < CMP_RING_ENTRIES + 3; i++) {
		start = nfence_kcs_cursor(&f->sp.cs);
		nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, 0), i + 1);
		cmp_ring_put(f, i, start, nfence_kcs_cursor(&f->sp.cs), 0);
		cmp_ring_seen(f, f->q[0], i + 1);
		/*
		 * Not an assertion: the ring lives on this stack frame, and
		 * an aborted case would leave it attached to the queue.
		 */
		if (cmp_run(f, f->q[0], &ran) != NFENCE_RUN_IDLE) {
			KUNIT_FAIL(test, "turn %u did not end idle", i);
			cmp_ring_detach(f, f->q[0]);
			return;
		}
		KUNIT_EXPECT_EQ(test, f->sp.data[0], i + 1);
		KUNIT_EXPECT_EQ(test, ring.read_index, i + 1);
		KUNIT_EXPECT_EQ(test, f->control->read_index, i + 1);
	}
	/* Entries rung together run in one turn, in order. */
	for (i = 0; i < 3; i++) {
		start = nfence_kcs_cursor(&f->sp.cs);
		nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, i + 1),
				   ring.read_index + i);
		cmp_ring_put(f, ring.read_index + i, start,
			     nfence_kcs_cursor(&f->sp.cs), 0);
	}
	cmp_ring_seen(f, f->q[0], ring.read_index + 3);
	KUNIT_EXPECT_EQ(test, cmp_run(f, f->q[0], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[3] - f->sp.data[1], 2);
	KUNIT_EXPECT_EQ(test, f->control->read_index, ring.seen);
	/* No progress signal: the command buffers signal it themselves. */
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));

	cmp_ring_detach(f, f->q[0]);
	KUNIT_EXPECT_NULL(test, f->q[0]->ring);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
}

enum cmp_ring_bad {
	CMP_RING_FLAGS,
	CMP_RING_SIZE_ZERO,
	CMP_RING_SIZE_MISALIGNED,
	CMP_RING_SIZE_TOO_BIG,
	CMP_RING_VA_MISALIGNED,
	CMP_RING_UNMAPPED,
	CMP_RING_CONTROL_UNMAPPED,
	CMP_RING_COMMANDS_UNMAPPED,
};

static const char * const cmp_ring_bad_names[] = {
	"flags", "size-zero", "size-misaligned", "size-too-big",
	"va-misaligned", "ring-unmapped", "control-unmapped",
	"commands-unmapped",
};

static void cmp_ring_bad_desc(const enum cmp_ring_bad *c, char *desc)
{
	strscpy(desc, cmp_ring_bad_names[*c], KUNIT_PARAM_DESC_SIZE);
}

static const enum cmp_ring_bad cmp_ring_bad_cases[] = {
	CMP_RING_FLAGS, CMP_RING_SIZE_ZERO, CMP_RING_SIZE_MISALIGNED,
	CMP_RING_SIZE_TOO_BIG, CMP_RING_VA_MISALIGNED, CMP_RING_UNMAPPED,
	CMP_RING_CONTROL_UNMAPPED, CMP_RING_COMMANDS_UNMAPPED,
};

KUNIT_ARRAY_PARAM(cmp_ring_bad, cmp_ring_bad_cases, cmp_ring_bad_desc);

/*
 * Every way a ring entry can be bad is reported as a fault of its queue,
 * as a bad command is; stopped, the ring's status is DISCONNECTED_ABORT,
 * and its entry was never handed to the driver.
 */
static void cmp_ring_bad_entry(struct kunit *test)
{
	const enum cmp_ring_bad *c = test->param_value;
	struct cmp_fix *f = test->priv;
	u64 status, start, end, va, fault_va = f->ring_va;
	u32 flags = 0, reason = DRM_NFENCE_FAULT_BAD_RING;
	struct nfence_cmp_ring ring;
	unsigned int ran;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	end = nfence_kcs_cursor(&f->sp.cs);
	va = start;
	cmp_ring_attach(f, f->q[0], &ring, &status);
	switch (*c) {
	case CMP_RING_FLAGS:
		flags = 1;
		break;
	case CMP_RING_SIZE_ZERO:
		end = start;
		break;
	case CMP_RING_SIZE_MISALIGNED:
		end = start + 4;
		break;
	case CMP_RING_SIZE_TOO_BIG:
		end = start + DRM_NFENCE_MAX_SUBMIT_SIZE + 8;
		break;
	case CMP_RING_VA_MISALIGNED:
		va = start + 4;
		end = va + 8;
		break;
	case CMP_RING_UNMAPPED:
		ring.ring_va = CMP_UNMAPPED;
		fault_va = CMP_UNMAPPED;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	case CMP_RING_CONTROL_UNMAPPED:
		ring.control_va = CMP_UNMAPPED;
		fault_va = CMP_UNMAPPED + 8;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	case CMP_RING_COMMANDS_UNMAPPED:
		va = CMP_UNMAPPED;
		end = va + 8;
		fault_va = va;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	}
	f->ring[0].commands_gpu_va = va;
	f->ring[0].size = end - va;
	f->ring[0].flags = flags;
	cmp_ring_seen(f, f->q[0], 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, f->q[0], &ran), NFENCE_RUN_FAULT);
	cmp_expect_fault(test, f, fault_va, reason, 0);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_ENTRY_DONE), 0);
	KUNIT_EXPECT_FALSE(test, ring.queued);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	cmp_ring_detach(f, f->q[0]);
}

/* Fake physical doorbells for the ring and LRU tests. */
static void cmp_doorbells(struct cmp_fix *f, u32 model)
{
	unsigned int i;

	for (i = 0; i < CMP_DOORBELLS; i++) {
		f->doorbells[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(f->test, f->doorbells[i]);
	}
	f->gpu.doorbell_pages = f->doorbells;
	f->gpu.cfg.num_doorbells = CMP_DOORBELLS;
	f->gpu.cfg.doorbell_model = model;
}

/* A write index stored to a doorbell, as the CMP takes it. */
static void cmp_ring(struct cmp_fix *f, u32 slot, u64 v)
{
	WRITE_ONCE(*nfence_gpu_doorbell(&f->gpu, slot), v);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_take_locked(f->cmp, f->q[0], slot,
					&f->dropped);
	mutex_unlock(&f->cmp->lock);
}

/* Dedicated doorbells, and queue 0's @ring connected to doorbell @slot. */
static void cmp_ring_connected(struct cmp_fix *f,
			       struct nfence_cmp_ring *ring, u64 *status,
				 u32 slot)
{
	cmp_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	cmp_ring_attach(f, f->q[0], ring, status);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, f->q[0], slot);
	mutex_unlock(&f->cmp->lock);
}

static void cmp_doorbell_take(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	unsigned int ran, i;
	u64 status, start;

	cmp_ring_connected(f, &ring, &status, 1);
	KUNIT_EXPECT_EQ(test, status, (u64)DRM_NFENCE_DOORBELL_CONNECTED);
	KUNIT_EXPECT_EQ(test, ring.slot, 1);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 1);
	/* Bound, the doorbell starts at the ring's last write index. */
	KUNIT_EXPECT_EQ(test, *nfence_gpu_doorbell(&f->gpu, 1), 0);

	for (i = 0; i < 2; i++) {
		start = nfence_kcs_cursor(&f->sp.cs);
		nfence_kcs_write64(&f->sp.cs, cmp_data_va(f, i), 7 + i);
		cmp_ring_put(f, i, start, nfence_kcs_cursor(&f->sp.cs), 0);
	}
	cmp_ring(f, 1, 2);
	KUNIT_EXPECT_EQ(test, ring.seen, 2);
	KUNIT_EXPECT_EQ(test, f->q[0]->state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	KUNIT_EXPECT_EQ(test, cmp_run(f, f->q[0], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.data[1], 8);
	/* The same value again is no ring. */
	cmp_ring(f, 1, 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	KUNIT_EXPECT_EQ(test, f->q[0]->state, NFENCE_QUEUE_IDLE);
	/* As many entries ahead as the ring holds is fine; one more faults. */
	cmp_ring(f, 1, 2 + CMP_RING_ENTRIES);
	KUNIT_EXPECT_EQ(test, ring.seen, 2 + CMP_RING_ENTRIES);
	cmp_ring(f, 1, 3 + CMP_RING_ENTRIES + CMP_RING_ENTRIES);
	cmp_expect_fault(test, f, f->ring_va, DRM_NFENCE_FAULT_BAD_RING, 0);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	/* A stopped queue keeps its doorbell and takes no more rings. */
	KUNIT_EXPECT_EQ(test, ring.slot, 1);
	cmp_ring(f, 1, 3);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 2);
	cmp_ring_detach(f, f->q[0]);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 0);
	KUNIT_EXPECT_NULL(test, f->cmp->doorbells[1]);
}

static void cmp_doorbell_behind(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	u64 status;

	cmp_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	cmp_ring_attach(f, f->q[0], &ring, &status);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, f->q[0], 0);
	ring.seen = 5;
	ring.read_index = 3;
	mutex_unlock(&f->cmp->lock);
	/* Behind the last write index taken, though ahead of the reads. */
	cmp_ring(f, 0, 4);
	cmp_expect_fault(test, f, f->ring_va, DRM_NFENCE_FAULT_BAD_RING, 0);
	cmp_ring_detach(f, f->q[0]);
}

static void cmp_doorbell_victim(struct kunit *test)
{
	static const u64 rung[] = { 30, 10, 20 };
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_ring ring[CMP_QUEUES];
	u64 status[CMP_QUEUES], now, wait;
	unsigned int i;

	cmp_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, nfence_cmp_doorbell_free_slot_locked(f->cmp), 0);
	mutex_unlock(&f->cmp->lock);
	for (i = 0; i < CMP_QUEUES; i++) {
		int slot;

		cmp_ring_attach(f, f->q[i], &ring[i], &status[i]);
		mutex_lock(&f->cmp->lock);
		slot = nfence_cmp_doorbell_free_slot_locked(f->cmp);
		nfence_cmp_doorbell_bind_locked(f->cmp, f->q[i], slot);
		ring[i].rung_ns = rung[i];
		mutex_unlock(&f->cmp->lock);
		KUNIT_EXPECT_EQ(test, ring[i].slot, i);
	}
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, nfence_cmp_doorbell_free_slot_locked(f->cmp),
			-ENOSPC);
	now = ktime_get_ns();
	/* The least recently rung. */
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait),
			    f->q[1]);
	/* A stopped queue's doorbell goes first, whenever it was rung. */
	nfence_cmp_queue_set_state_locked(f->cmp, f->q[2],
					  NFENCE_QUEUE_FAULTED);
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait),
			    f->q[2]);
	nfence_cmp_queue_set_state_locked(f->cmp, f->q[2], NFENCE_QUEUE_IDLE);

	/* Connected just now and not rung since: kept through its grace. */
	ring[1].bound_ns = now;
	ring[1].rung_ns = now;
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait),
			    f->q[2]);
	/* Every ring in its grace: none, and how long until the first leaves. */
	for (i = 0; i < CMP_QUEUES; i++) {
		ring[i].bound_ns = now - 1000 * i;
		ring[i].rung_ns = ring[i].bound_ns;
	}
	wait = 0;
	KUNIT_EXPECT_NULL(test,
			  nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait));
	KUNIT_EXPECT_EQ(test, wait,
			NFENCE_DOORBELL_GRACE_NS - 1000 * (CMP_QUEUES - 1));
	/* Past it, the least recently rung again. */
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp,
							      now + NFENCE_DOORBELL_GRACE_NS,
							      &wait),
			    f->q[CMP_QUEUES - 1]);
	/* A ring since the connect ends the grace at once. */
	ring[0].rung_ns = now + 1;
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now + 2,
							      &wait),
			    f->q[0]);
	nfence_cmp_doorbell_unbind_locked(f->cmp, f->q[1],
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, status[1],
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, nfence_cmp_doorbell_free_slot_locked(f->cmp), 1);
	/* An aborted status stays so. */
	status[0] = DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT;
	nfence_cmp_doorbell_unbind_locked(f->cmp, f->q[0],
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, status[0],
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 1);
	mutex_unlock(&f->cmp->lock);
	for (i = 0; i < CMP_QUEUES; i++)
		cmp_ring_detach(f, f->q[i]);
}

static void cmp_doorbell_global(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_ring ring[2];
	u64 status[2];
	unsigned int i;

	cmp_doorbells(f, DRM_NFENCE_DOORBELL_GLOBAL);
	/* One physical doorbell, shared: never full, never taken. */
	for (i = 0; i < 2; i++) {
		cmp_ring_attach(f, f->q[i], &ring[i], &status[i]);
		mutex_lock(&f->cmp->lock);
		KUNIT_EXPECT_EQ(test,
				nfence_cmp_doorbell_free_slot_locked(f->cmp), 0);
		nfence_cmp_doorbell_bind_locked(f->cmp, f->q[i], 0);
		mutex_unlock(&f->cmp->lock);
		KUNIT_EXPECT_EQ(test, ring[i].slot, 0);
	}
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 2);
	KUNIT_EXPECT_NULL(test, f->cmp->doorbells[0]);

	/*
	 * The doorbell says "look": every bound ring's control is read (both
	 * rings' write index is 1), and the queues have work; the queue
	 * without a ring is not looked at.
	 */
	*(__le64 *)f->control = cpu_to_le64(1);
	WRITE_ONCE(*nfence_gpu_doorbell(&f->gpu, 0), 1);
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_TRUE(test, nfence_cmp_doorbell_look_locked(f->cmp,
								ktime_get_ns(),
								&f->dropped));
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*nfence_gpu_doorbell(&f->gpu, 0)), 0);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, f->q[i]->state, NFENCE_QUEUE_READY);
		KUNIT_EXPECT_EQ(test, ring[i].seen, 1);
	}
	KUNIT_EXPECT_EQ(test, f->q[2]->state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));

	for (i = 0; i < 2; i++)
		cmp_ring_detach(f, f->q[i]);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 0);
}

/*
 * What an engine's counts stand for, found the long way: the listed
 * queues that can still run and are not idle, and those of them whose
 * ring is bound to a physical doorbell.
 */
static void cmp_walk_counts(struct cmp_fix *f, u32 engine, u32 *active,
			    u32 *bound)
{
	struct nfence_cmp_queue *q;

	*active = 0;
	*bound = 0;
	list_for_each_entry(q, &f->cmp->engines[engine].runlist, engine_link) {
		if (nfence_cmp_queue_stopped(q))
			continue;
		*active += q->state != NFENCE_QUEUE_IDLE;
		*bound += q->ring && q->ring->slot >= 0;
	}
}

/*
 * The counts match the walk on both engines, and the adapter and each
 * engine are idle (for D3, for F1) as @idle, @f1_0 and @f1_1 say.
 */
static void cmp_expect_idle(struct cmp_fix *f, bool idle, bool f1_0,
			    bool f1_1)
{
	struct kunit *test = f->test;
	u32 i, active, bound;

	mutex_lock(&f->cmp->lock);
	for (i = 0; i < 2; i++) {
		cmp_walk_counts(f, i, &active, &bound);
		KUNIT_EXPECT_EQ(test, f->cmp->engines[i].num_not_idle, active);
		KUNIT_EXPECT_EQ(test, f->cmp->engines[i].num_bound, bound);
	}
	/* The list of bound rings has every bound one, stopped or not. */
	bound = 0;
	for (i = 0; i < CMP_QUEUES; i++)
		bound += f->q[i]->ring && f->q[i]->ring->slot >= 0;
	KUNIT_EXPECT_EQ(test, (u32)list_count_nodes(&f->cmp->bound), bound);
	KUNIT_EXPECT_EQ(test, nfence_cmp_idle_locked(f->cmp), idle);
	KUNIT_EXPECT_EQ(test,
			nfence_cmp_engine_idle_locked(f->cmp,
						      &f->cmp->engines[0]),
			f1_0);
	KUNIT_EXPECT_EQ(test,
			nfence_cmp_engine_idle_locked(f->cmp,
						      &f->cmp->engines[1]),
			f1_1);
	mutex_unlock(&f->cmp->lock);
}

/*
 * The end of every CMP cycle asks whether the adapter is idle and which
 * engines may go to F1, from counts kept as queues change state, join or
 * leave a runlist and connect their rings: no runlist is walked under the
 * lock, however many idle queues the clients keep. Each step of a queue's
 * life leaves the counts where a walk finds them.
 */
static void cmp_idle_from_counts(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_queue *q0 = f->q[0], *q1 = f->q[1], *q2 = f->q[2];
	struct nfence_cmp_ring ring;
	u64 start, status, deadline;
	unsigned int ran, i;

	cmp_expect_idle(f, true, false, false);

	/* Work queued, parked on a FENCE_WAIT, then done. */
	f->sp.data[0] = 0;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, cmp_data_va(f, 0), 1);
	cmp_submit(f, q0, start, nfence_kcs_cursor(&f->sp.cs), 1);
	cmp_expect_idle(f, false, false, false);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q0, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, q0->state, NFENCE_QUEUE_WAIT_FENCE);
	cmp_expect_idle(f, false, false, false);
	f->sp.data[0] = 1;
	KUNIT_EXPECT_EQ(test, cmp_run(f, q0, &ran), NFENCE_RUN_IDLE);
	cmp_expect_idle(f, true, false, false);

	/* A queue stopped with work queued counts no more. */
	start = cmp_nops(f, 1);
	cmp_submit(f, q1, start, nfence_kcs_cursor(&f->sp.cs), 1);
	cmp_expect_idle(f, false, false, false);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_stop_locked(f->cmp, q1, NFENCE_QUEUE_FAULTED,
				     &f->dropped);
	mutex_unlock(&f->cmp->lock);
	cmp_drop(f);
	cmp_expect_idle(f, true, false, false);

	/*
	 * A destroyed queue stops in the state it had (ready here) and leaves
	 * its runlist, the last of engine 1's; put back, it counts again.
	 */
	start = cmp_nops(f, 1);
	cmp_submit(f, q2, start, nfence_kcs_cursor(&f->sp.cs), 1);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_stop_locked(f->cmp, q2, q2->state, &f->dropped);
	nfence_cmp_queue_remove_locked(f->cmp, q2);
	mutex_unlock(&f->cmp->lock);
	cmp_drop(f);
	KUNIT_EXPECT_EQ(test, q2->state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, f->cmp->engines[1].num_queues, 0);
	cmp_expect_idle(f, true, false, false);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_add_locked(f->cmp, q2);
	mutex_unlock(&f->cmp->lock);
	cmp_expect_idle(f, false, false, false);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q2, &ran), NFENCE_RUN_IDLE);
	cmp_expect_idle(f, true, false, false);

	/*
	 * A WORK command occupies engine 1 for 1 us; once that is over, a CMP
	 * pass frees the engine and runs the queue to idle.
	 */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_work(&f->sp.cs, 1000);
	cmp_submit(f, q2, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_EXPECT_EQ(test, cmp_run(f, q2, &ran), NFENCE_RUN_BUSY);
	KUNIT_EXPECT_EQ(test, q2->state, NFENCE_QUEUE_RUNNING);
	cmp_expect_idle(f, false, false, false);
	for (i = 0; ktime_get_ns() < f->cmp->engines[1].busy_until_ns; i++) {
		KUNIT_ASSERT_LT(test, i, 1000);
		usleep_range(100, 200);
	}
	nfence_cmp_run_pass(f->cmp, &deadline);
	KUNIT_EXPECT_EQ(test, q2->state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[1].busy);
	cmp_expect_idle(f, true, false, false);

	/*
	 * A connected doorbell: the adapter watches it, so it is not idle,
	 * and engine 0 may go to F1 while its queue has nothing to run, and
	 * not once the doorbell is gone.
	 */
	cmp_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	cmp_ring_attach(f, q0, &ring, &status);
	cmp_expect_idle(f, true, false, false);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, q0, 0);
	mutex_unlock(&f->cmp->lock);
	cmp_expect_idle(f, false, true, false);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_unbind_locked(f->cmp, q0, 0);
	mutex_unlock(&f->cmp->lock);
	cmp_expect_idle(f, true, false, false);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, q0, 0);
	mutex_unlock(&f->cmp->lock);
	cmp_expect_idle(f, false, true, false);

	/* Rung: the queue has work (its ring's entry is not looked at). */
	cmp_ring(f, 0, 1);
	KUNIT_EXPECT_EQ(test, q0->state, NFENCE_QUEUE_READY);
	cmp_expect_idle(f, false, false, false);

	/* Stopped, its bound ring no longer counts; unbound, nothing does. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_stop_locked(f->cmp, q0, NFENCE_QUEUE_LOST,
				     &f->dropped);
	mutex_unlock(&f->cmp->lock);
	cmp_drop(f);
	cmp_expect_idle(f, false, false, false);
	cmp_ring_detach(f, q0);
	cmp_expect_idle(f, true, false, false);
}

/* F1 and back, each counted once; a connect or a push asks for F0. */
static void cmp_engine_f1(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_engine *e = &f->cmp->engines[0];

	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, e->f1);
	nfence_cmp_engine_f0_locked(f->cmp, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->f0s), 0);
	e->f1_asked_ns = ktime_get_ns();
	nfence_cmp_engine_f1_locked(f->cmp, 0);
	KUNIT_EXPECT_TRUE(test, e->f1);
	KUNIT_EXPECT_EQ(test, e->f1_asked_ns, 0);
	nfence_cmp_engine_f1_locked(f->cmp, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->f1s), 1);
	KUNIT_EXPECT_FALSE(test, f->cmp->engines[1].f1);
	nfence_cmp_engine_f0_locked(f->cmp, 0);
	nfence_cmp_engine_f0_locked(f->cmp, 0);
	KUNIT_EXPECT_FALSE(test, e->f1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->f0s), 1);
	KUNIT_EXPECT_NE(test, e->active_ns, 0);
	mutex_unlock(&f->cmp->lock);
}

/* The CMP's ask for F1 on engine 0, as nfence_cmp_f1_check() makes it. */
static void cmp_ask_f1(struct cmp_fix *f)
{
	struct nfence_cmp_engine *e = &f->cmp->engines[0];

	/* Idle before the ask; whatever comes next is at the ask or after. */
	mutex_lock(&f->cmp->lock);
	e->f1_asked_ns = ktime_get_ns() - 1;
	e->active_ns = e->f1_asked_ns - 1;
	mutex_unlock(&f->cmp->lock);
}

static bool cmp_f1_due(struct cmp_fix *f)
{
	bool due;

	mutex_lock(&f->cmp->lock);
	due = nfence_cmp_engine_f1_due_locked(f->cmp, 0);
	mutex_unlock(&f->cmp->lock);
	return due;
}

/*
 * An ask for F1 stands until the driver acts on it, unless the engine was
 * active since (a connect or a submission: F0 asked for; a ring taken) or
 * is no longer idle with connected doorbells; a cancelled ask is gone.
 */
static void cmp_engine_f1_due(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	struct nfence_cmp_engine *e = &f->cmp->engines[0];
	struct nfence_cmp_ring ring;
	u64 status, start;

	cmp_ring_connected(f, &ring, &status, 0);
	/* Not asked: not due. */
	KUNIT_EXPECT_FALSE(test, cmp_f1_due(f));

	cmp_ask_f1(f);
	KUNIT_EXPECT_TRUE(test, cmp_f1_due(f));
	KUNIT_EXPECT_NE(test, e->f1_asked_ns, 0);

	/* A connect or a kernel-mode submission asks for F0. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_engine_f0_locked(f->cmp, 0);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, cmp_f1_due(f));
	KUNIT_EXPECT_EQ(test, e->f1_asked_ns, 0);
	KUNIT_EXPECT_FALSE(test, cmp_f1_due(f));

	/*
	 * A store of the same write index is no ring; a ring run to the
	 * end leaves the engine idle again, but active since the ask.
	 */
	cmp_ask_f1(f);
	cmp_ring(f, 0, 0);
	KUNIT_EXPECT_TRUE(test, cmp_f1_due(f));
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	cmp_ring_put(f, 0, start, nfence_kcs_cursor(&f->sp.cs), 0);
	cmp_ring(f, 0, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	cmp_run_idle(f, f->q[0]);
	KUNIT_EXPECT_FALSE(test, cmp_f1_due(f));

	/* Its doorbell gone, the engine has nothing to put in F1. */
	cmp_ask_f1(f);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_unbind_locked(f->cmp, f->q[0],
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, cmp_f1_due(f));
	KUNIT_EXPECT_FALSE(test, e->f1);
	cmp_ring_detach(f, f->q[0]);
}

/* ---- Peer signals ---- */

/* A peer doorbell's wake: counted, the CMP is the test's to run. */
static void cmp_peer_wake(struct nfence_cmp *cmp)
{
	cmp_current()->peer_wakes++;
}

/*
 * The GPU gets a peer doorbell, @fence becomes a cross-adapter instance,
 * and another GPU has a doorbell of its own (@other_bell, watched by a
 * stand-in CMP that only counts its wakes).
 */
static void cmp_peer_setup(struct cmp_fix *f)
{
	f->gpu.bell = nfence_peer_bell_create();
	f->other_bell = nfence_peer_bell_create();
	KUNIT_ASSERT_NOT_NULL(f->test, f->gpu.bell);
	KUNIT_ASSERT_NOT_NULL(f->test, f->other_bell);
	nfence_peer_bell_attach(f->gpu.bell, f->cmp, cmp_peer_wake);
	nfence_peer_bell_attach(f->other_bell, f->cmp, cmp_peer_wake);
	f->fences[CMP_STORAGE].view.cross_adapter = true;
}

/* Replace the fixture's table by one more entry (@bell, @id). */
static void cmp_peer_add(struct cmp_fix *f, struct nfence_peer_bell *bell,
			 u32 id)
{
	struct nfence_peer_table *table;

	table = nfence_peer_table_alloc(f->peers ? f->peers->count + 1 : 1);
	KUNIT_ASSERT_NOT_NULL(f->test, table);
	nfence_peer_table_fill(table, f->peers, bell, id);
	nfence_peer_table_free(f->peers);
	f->peers = table;
}

/* FENCE_SIGNAL of @fence to @value on queue 0, run to the end. */
static void cmp_peer_signal(struct cmp_fix *f, u64 value)
{
	u64 start = nfence_kcs_cursor(&f->sp.cs);

	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8, value);
	cmp_submit(f, f->q[0], start, nfence_kcs_cursor(&f->sp.cs), value);
	cmp_run_idle(f, f->q[0]);
}

/*
 * A GPU signal of a cross-adapter instance writes its id into the peer
 * doorbell of every other instance's GPU (not its own entry, not one
 * whose instance is gone) and wakes that GPU's CMP; it interrupts only
 * when its own MonitoredValue is exceeded or while an instance only the
 * CPU can tell is counted.
 */
static void cmp_peer_signal_rings(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	u32 own = f->fences[CMP_STORAGE].view.id, ids[NFENCE_PEER_BELL_IDS];
	bool overflow;
	u32 writes;

	cmp_peer_setup(f);
	cmp_peer_add(f, f->gpu.bell, own);
	cmp_peer_add(f, f->other_bell, 7);
	cmp_peer_add(f, f->other_bell, 9);
	cmp_peer_add(f, f->gpu.bell, own + 1);
	nfence_peer_table_remove(f->peers, f->other_bell, 9);
	KUNIT_EXPECT_EQ(test, f->peers->count, 4);

	/* Nobody waits on the CPU (MonitoredValue U64_MAX): no interrupt. */
	cmp_peer_signal(f, 1);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 0);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_rings), 2);
	KUNIT_EXPECT_EQ(test, f->peer_wakes, 2);
	KUNIT_EXPECT_EQ(test, nfence_peer_drain(f->other_bell, ids, &writes,
						&overflow), 1);
	KUNIT_EXPECT_EQ(test, ids[0], 7);
	KUNIT_EXPECT_EQ(test, writes, 1);
	KUNIT_EXPECT_FALSE(test, overflow);
	/* Its own GPU's other instance, not the one that signaled. */
	KUNIT_EXPECT_EQ(test, nfence_peer_drain(f->gpu.bell, ids, &writes,
						&overflow), 1);
	KUNIT_EXPECT_EQ(test, ids[0], own + 1);
	KUNIT_EXPECT_EQ(test, cmp_calls(f, CMP_CALL_FENCE_SETTLE), 1);

	/* A CPU waiter for 3 on this instance: 2 rings, 3 interrupts too. */
	f->sp.fvals[1] = 2;
	cmp_peer_signal(f, 2);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 0);
	cmp_peer_signal(f, 3);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_rings), 6);

	/* An instance only the CPU can tell: every signal interrupts. */
	f->sp.fvals[1] = U64_MAX;
	f->peers->cpu_instances = 1;
	cmp_peer_signal(f, 4);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 2);
	KUNIT_EXPECT_EQ(test, cmp_last(f, CMP_CALL_INTERRUPT)->value, 4);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_rings), 8);
	/* Written three times before a look: kept once, counted thrice. */
	KUNIT_EXPECT_EQ(test, nfence_peer_drain(f->other_bell, ids, &writes,
						&overflow), 1);
	KUNIT_EXPECT_EQ(test, ids[0], 7);
	KUNIT_EXPECT_EQ(test, writes, 3);
	KUNIT_EXPECT_EQ(test, f->fence_puts, f->fence_gets);
}

/*
 * The CMP empties its peer doorbell at the start of a pass: if an id's
 * fence has a value above its MonitoredValue, or the doorbell overflowed,
 * it raises the interrupt without a payload, once, after the pass; an id
 * whose fence does not (or of no fence, or AlwaysSignaled) raises none.
 * Every write is counted, an id written twice before a look kept once.
 * Ids buy a watch of the doorbell only while a queue is parked.
 */
static void cmp_peer_wakes(struct kunit *test)
{
	struct cmp_fix *f = test->priv;
	u32 id = f->fences[CMP_STORAGE].view.id, i;
	u64 deadline;

	cmp_peer_setup(f);
	KUNIT_EXPECT_FALSE(test, nfence_cmp_run_pass(f->cmp, &deadline));
	KUNIT_EXPECT_EQ(test, f->peer_looks, 0);

	f->sp.fvals[0] = 10;
	f->sp.fvals[1] = 9;
	KUNIT_EXPECT_TRUE(test, nfence_peer_ring(f->gpu.bell, id + 5));
	KUNIT_EXPECT_TRUE(test, nfence_peer_ring(f->gpu.bell, id));
	KUNIT_EXPECT_TRUE(test, nfence_peer_ring(f->gpu.bell, id));
	KUNIT_EXPECT_EQ(test, f->peer_wakes, 3);
	nfence_cmp_run_pass(f->cmp, &deadline);
	/* One interrupt for the pass, a scan, however many ids asked. */
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, f->fence), 0);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_taken), 3);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, f->cmp->peer_until_ns, 0);

	/* Not above MonitoredValue, then AlwaysSignaled: no interrupt. */
	f->sp.fvals[1] = 10;
	nfence_peer_ring(f->gpu.bell, id);
	nfence_cmp_run_pass(f->cmp, &deadline);
	f->sp.fvals[1] = 0;
	f->fences[CMP_STORAGE].view.always_signaled = true;
	nfence_peer_ring(f->gpu.bell, id);
	nfence_cmp_run_pass(f->cmp, &deadline);
	f->fences[CMP_STORAGE].view.always_signaled = false;
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_taken), 5);

	/* A queue parked: the ids buy a watch. */
	atomic_inc(&f->cmp->num_parked);
	f->sp.fvals[1] = U64_MAX;
	nfence_peer_ring(f->gpu.bell, id);
	nfence_cmp_run_pass(f->cmp, &deadline);
	atomic_dec(&f->cmp->num_parked);
	KUNIT_EXPECT_GT(test, f->cmp->peer_until_ns, 0);

	/* One distinct id more than the doorbell holds: a scan. */
	for (i = 1; i <= NFENCE_PEER_BELL_IDS + 1; i++)
		nfence_peer_ring(f->gpu.bell, id + i);
	nfence_cmp_run_pass(f->cmp, &deadline);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_overflows), 1);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_taken),
			6 + NFENCE_PEER_BELL_IDS + 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 2);

	/* Detached (its adapter going away): writes are dropped. */
	nfence_peer_bell_attach(f->gpu.bell, NULL, NULL);
	KUNIT_EXPECT_FALSE(test, nfence_peer_ring(f->gpu.bell, id));
	nfence_cmp_run_pass(f->cmp, &deadline);
	KUNIT_EXPECT_EQ(test, CMP_IRQ(f, peer_taken),
			6 + NFENCE_PEER_BELL_IDS + 1);
	KUNIT_EXPECT_EQ(test, cmp_irqs(f, NULL), 2);
}

static struct kunit_case nfence_cmp_cases[] = {
	KUNIT_CASE(cmp_nop_runs_to_idle),
	KUNIT_CASE(cmp_fence_wait_blocks),
	KUNIT_CASE(cmp_fence_wait_parked_kicks),
	KUNIT_CASE(cmp_fence_wait_overwritten),
	KUNIT_CASE(cmp_fence_signal_memory),
	KUNIT_CASE(cmp_fence_signal_memory_coalesced),
	KUNIT_CASE(cmp_fence_signal_fence_at),
	KUNIT_CASE(cmp_32bit_signal_in_stride),
	KUNIT_CASE(cmp_32bit_wait_serial),
	KUNIT_CASE(cmp_write64_timestamp),
	KUNIT_CASE(cmp_work_busy),
	KUNIT_CASE(cmp_budget_yields),
	KUNIT_CASE(cmp_turn_max),
	KUNIT_CASE(cmp_pass_budget),
	KUNIT_CASE(cmp_priority_turns),
	KUNIT_CASE(cmp_priority_alone),
	KUNIT_CASE(cmp_peer_signal_rings),
	KUNIT_CASE(cmp_peer_wakes),
	KUNIT_CASE(cmp_remove_raises_queue_irq),
	KUNIT_CASE(cmp_command_straddles_mappings),
	KUNIT_CASE_PARAM(cmp_fault_reasons, cmp_fault_gen_params),
	KUNIT_CASE(cmp_misaligned_after_submit),
	KUNIT_CASE(cmp_ring_runs_entries),
	KUNIT_CASE_PARAM(cmp_ring_bad_entry, cmp_ring_bad_gen_params),
	KUNIT_CASE(cmp_doorbell_take),
	KUNIT_CASE(cmp_doorbell_behind),
	KUNIT_CASE(cmp_doorbell_victim),
	KUNIT_CASE(cmp_doorbell_global),
	KUNIT_CASE(cmp_idle_from_counts),
	KUNIT_CASE(cmp_engine_f1),
	KUNIT_CASE(cmp_engine_f1_due),
	{}
};

static struct kunit_suite nfence_cmp_suite = {
	.name = "nfence_cmp",
	.init = cmp_init,
	.exit = cmp_exit,
	.test_cases = nfence_cmp_cases,
};

kunit_test_suite(nfence_cmp_suite);
