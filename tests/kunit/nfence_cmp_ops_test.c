// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the driver's side of the CMP seam: what the driver does
 * when the simulated GPU reports through nfence_driver_cmp_ops
 * (nfence_cmp_ops.c). A fault reaches the queue's context
 * (nfence_hwqueue_context_fault_locked(), nfence_context.c), which stops
 * its queues (nfence_hwqueue_stop_locked(), nfence_hwqueue.c) and gives up
 * their progress fences; a device is lost with every queue it has
 * (nfence_device_state.c); the native fence signaled interrupt wakes
 * waiters, scans the fences marked as watched and completes the value a
 * GPU without 64-bit atomics could not store (nfence_signal.c); a fence
 * made AlwaysSignaled (nfence_fence.c), here or by another adapter, is
 * seen so by the GPU. The scheduler itself, against a recording table of
 * callbacks, is the nfence_cmp suite (nfence_cmp_test.c).
 *
 * The callbacks find the driver's objects with container_of() from the
 * CMP's (&struct nfence_cmp_queue in &struct nfence_hwqueue, &struct
 * nfence_cmp in &struct nfence_adapter), so the fixture builds those: the
 * adapter, the devices, the contexts, the queues and their progress
 * fences, by hand (nfence_adapter_create() would start the CMP thread,
 * which would run the queues behind the tests' back, and the driver's
 * create paths need a DRM device and an open file). The CMP is set up
 * with nfence_cmp_init() and the real nfence_driver_cmp_ops, without its
 * thread, and the test gives queues their turns itself, with the CMP lock
 * held as the thread does; queued submissions are put on the queues as
 * nfence_hwqueue_push() (nfence_submit.c) would.
 * References are never dropped to zero (the release paths need the DRM
 * device and the file); the exit function checks that every count is back
 * where it started and frees the submissions left over.
 *
 * Commands are written with nfence_kunit_cs.h, in little endian as the ISA
 * in nfence_drm.h ("DOC: command stream") defines them.
 *
 * Copyright (C) 2026 The nfence authors
 */

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
#include <kunit/static_stub.h>
#endif
#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/xarray.h>

#include <drm/nfence_drm.h>

#include "../nfence_adapter.h"
#include "../nfence_cmp.h"
#include "../nfence_cmp_ops.h"
#include "../nfence_context.h"
#include "../nfence_device.h"
#include "../nfence_device_state.h"
#include "../nfence_engine.h"
#include "../nfence_fence.h"
#include "../nfence_signal.h"
#include "../nfence_submit.h"
#include "../nfence_hwqueue.h"
#include "../nfence_vm.h"
#include "../nfence_wait.h"
#include "../nfence_waitlist.h"

#include "nfence_kunit_cs.h"
#include "nfence_kunit_fence.h"

/* Pages of command buffer; one more page is mapped right after them. */
#define OPS_CMD_PAGES		4
#define OPS_CMD_BYTES		(OPS_CMD_PAGES * PAGE_SIZE)
#define OPS_QUEUES		3
/* The time the tests pretend it is, for WORK. */
#define OPS_NOW			1000000000ull
/* An aligned GPU VA inside the address space that nothing maps. */
#define OPS_UNMAPPED		(NFENCE_VM_END - PAGE_SIZE)
/* 64-bit values with both halves non-zero. */
#define OPS_VALUE		0x0123456789abcdefull
#define OPS_WAIT_VALUE		0x0000000100000005ull

/**
 * struct ops_fix - everything a test runs on
 * @test: the test
 * @adapter: the adapter (no DRM device); @adapter->cmp is the CMP
 * @cmp: the CMP
 * @sp: the address space all queues use and its pages (its @fvals hold
 *	@fence's CurrentValue at [0], MonitoredValue at [1]; its @fence_map's
 *	fence_at finds @fence)
 * @alias_map: @fvals again, as ordinary memory (no fence_at)
 * @fence: the fence in fence storage
 * @fence_at_calls: calls of @fence_map's fence_at
 * @fence_at_offset: the offset of the last call
 * @fence_at_stride: fence_at finds @fence at offsets 0-63 (a pool slot's
 *	stride), not only at 0
 * @wdev: the device of contexts 0 and 1
 * @wdev2: another device, of context 2
 * @ctx: contexts 0 and 1 on engine 0, context 2 on engine 1
 * @q: queues 0 and 1 of context 0, queue 2 of context 2
 * @pv: the progress fences' CurrentValue and MonitoredValue
 * @dropped: submissions dropped by stopped queues
 * @cmp_ready: @cmp and @adapter->fences are initialized
 * @race_ops: the driver's CMP callbacks, with a fence_view that runs
 *	@race_peer's error after it looked (ops_view_raced())
 * @race_peer: the instance, on another adapter, of the cross-adapter
 *	fence @fence is made part of, whose device goes into error when the
 *	engine next looks at @fence; NULL once it did
 */
struct ops_fix {
	struct kunit *test;
	struct nfence_adapter *adapter;
	struct nfence_cmp *cmp;
	struct nfence_kspace sp;
	struct nfence_vm_mapping alias_map;
	struct nfence_fence *fence;
	unsigned int fence_at_calls;
	u64 fence_at_offset;
	bool fence_at_stride;
	struct nfence_device *wdev;
	struct nfence_device *wdev2;
	struct nfence_context *ctx[OPS_QUEUES];
	struct nfence_hwqueue *q[OPS_QUEUES];
	u64 pv[OPS_QUEUES][2];
	struct list_head dropped;
	bool cmp_ready;
	struct nfence_cmp_ops race_ops;
	struct nfence_fence *race_peer;
};

/* A CPU waiter that counts its completions. */
struct ops_waiter {
	struct nfence_waiter w;
	unsigned int fired;
};

static void ops_waiter_done(struct nfence_waiter *w)
{
	container_of(w, struct ops_waiter, w)->fired++;
}

static void ops_wait_on(struct kunit *test, struct nfence_fence *fence,
			struct ops_waiter *sw, u64 value)
{
	memset(sw, 0, sizeof(*sw));
	RB_CLEAR_NODE(&sw->w.node);
	sw->w.value = value;
	sw->w.done = ops_waiter_done;
	KUNIT_ASSERT_FALSE(test, nfence_fence_add_waiter(fence, &sw->w));
	KUNIT_ASSERT_EQ(test, *nfence_kunit_value(&fence->mv), value - 1);
}

/* The hardware's view of its fence table: offset 0 of @fence_map. */
static struct nfence_fence *ops_fence_at(struct nfence_vm_mapping *map,
					 u64 offset)
{
	struct ops_fix *f = container_of(map, struct ops_fix, sp.fence_map);

	lockdep_assert_held(&map->vm->lock);
	f->fence_at_calls++;
	f->fence_at_offset = offset;
	if (offset >= (f->fence_at_stride ? 64 : 1))
		return NULL;
	kref_get(&f->fence->ref);
	return f->fence;
}

static struct nfence_fence *ops_fence(struct ops_fix *f, u64 *cv, u64 *mv)
{
	struct nfence_fence *fence;

	fence = kunit_kzalloc(f->test, sizeof(*fence), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, fence);
	kref_init(&fence->ref);
	atomic_set(&fence->handles, 1);
	fence->adapter = f->adapter;
	fence->type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	*cv = 0;
	RCU_INIT_POINTER(fence->cv.value, cv);
	RCU_INIT_POINTER(fence->mv.value, mv);
	nfence_waitlist_init(&fence->waiters, cv, mv);
	return fence;
}

static struct nfence_device *ops_device(struct ops_fix *f, u32 handle)
{
	struct nfence_device *wdev;

	wdev = kunit_kzalloc(f->test, sizeof(*wdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, wdev);
	kref_init(&wdev->ref);
	wdev->obj.handle = handle;
	wdev->error = false;
	return wdev;
}

static struct nfence_context *ops_context(struct ops_fix *f,
					  struct nfence_device *wdev,
					    u32 handle, u32 engine)
{
	struct nfence_context *ctx;

	ctx = kunit_kzalloc(f->test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, ctx);
	kref_init(&ctx->ref);
	ctx->adapter = f->adapter;
	ctx->device = wdev;
	ctx->obj.handle = handle;
	ctx->engine = engine;
	INIT_LIST_HEAD(&ctx->queues);
	return ctx;
}

/* What nfence_hwqueue_create_ioctl() sets up, minus the file. */
static struct nfence_hwqueue *ops_queue(struct ops_fix *f,
					struct nfence_context *ctx,
					  unsigned int i)
{
	struct nfence_hwqueue *q;

	q = kunit_kzalloc(f->test, sizeof(*q), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, q);
	kref_init(&q->ref);
	q->ctx = ctx;
	nfence_cmp_queue_init(&q->hw);
	q->hw.engine = ctx->engine;
	q->hw.ctx = &ctx->hw;
	q->hw.vm = &f->sp.vm;
	q->obj.handle = i + 1;
	init_waitqueue_head(&q->room);
	q->hw.progress = ops_fence(f, &f->pv[i][0], &f->pv[i][1]);

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_add_locked(f->cmp, &q->hw);
	list_add_tail(&q->ctx_link, &ctx->queues);
	mutex_unlock(&f->cmp->lock);
	return q;
}

static u64 ops_map(struct ops_fix *f, struct nfence_vm_mapping *map,
		   void *vaddr, u64 size, u32 flags)
{
	KUNIT_ASSERT_EQ(f->test, 0, nfence_vm_map(&f->sp.vm, map, vaddr, size,
						  flags));
	return map->start;
}

static int ops_init(struct kunit *test)
{
	struct nfence_adapter *adapter;
	struct ops_fix *f;
	unsigned int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	INIT_LIST_HEAD(&f->dropped);
	test->priv = f;

	adapter = kunit_kzalloc(test, sizeof(*adapter), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adapter);
	f->adapter = adapter;
	adapter->gpu.cfg.num_engines = 2;
	adapter->gpu.cfg.tdr_timeout_ms = 2000;
	adapter->gpu.timestamp_base_ns = ktime_get_ns();
	atomic64_set(&adapter->gpu.irq_stats.signals, 0);
	atomic64_set(&adapter->gpu.irq_stats.interrupts, 0);
	atomic64_set(&adapter->gpu.irq_stats.suppressed, 0);
	atomic64_set(&adapter->gpu.irq_stats.woken, 0);
	atomic64_set(&adapter->gpu.irq_stats.spurious, 0);
	atomic64_set(&adapter->gpu.irq_stats.carries, 0);
	xa_init(&adapter->fences);
	nfence_cmp_init(&adapter->cmp, &adapter->gpu, &nfence_driver_cmp_ops);
	f->cmp = &adapter->cmp;
	f->cmp_ready = true;

	nfence_kspace_init(test, &f->sp, OPS_CMD_BYTES, ops_fence_at);
	f->fence = ops_fence(f, &f->sp.fvals[0], &f->sp.fvals[1]);

	f->wdev = ops_device(f, 1);
	f->wdev2 = ops_device(f, 2);
	f->ctx[0] = ops_context(f, f->wdev, 1, 0);
	f->ctx[1] = ops_context(f, f->wdev, 2, 0);
	f->ctx[2] = ops_context(f, f->wdev2, 3, 1);
	f->q[0] = ops_queue(f, f->ctx[0], 0);
	f->q[1] = ops_queue(f, f->ctx[0], 1);
	f->q[2] = ops_queue(f, f->ctx[2], 2);
	for (i = 0; i < OPS_QUEUES; i++)
		KUNIT_ASSERT_EQ(test, f->pv[i][1], U64_MAX);
	return 0;
}

static void ops_exit(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	LIST_HEAD(left);
	unsigned int i;

	if (!f)
		return;
	if (f->cmp_ready) {
		mutex_lock(&f->cmp->lock);
		for (i = 0; i < OPS_QUEUES; i++) {
			if (!f->q[i])
				continue;
			list_splice_tail_init(&f->q[i]->hw.pending, &left);
			f->q[i]->hw.num_pending = 0;
		}
		list_splice_tail_init(&f->dropped, &left);
		mutex_unlock(&f->cmp->lock);
		nfence_submissions_drop(&left);

		/* Nothing took a reference it did not give back. */
		for (i = 0; i < OPS_QUEUES; i++) {
			if (!f->q[i])
				continue;
			KUNIT_EXPECT_EQ(test, kref_read(&f->q[i]->ref), 1);
			KUNIT_EXPECT_EQ(test, kref_read(&f->q[i]->hw.progress->ref),
					1);
		}
		for (i = 0; i < OPS_QUEUES; i++)
			if (f->ctx[i])
				KUNIT_EXPECT_EQ(test, kref_read(&f->ctx[i]->ref),
						1);
		if (f->wdev)
			KUNIT_EXPECT_EQ(test, kref_read(&f->wdev->ref), 1);
		if (f->fence)
			KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);

		mutex_destroy(&f->cmp->lock);
		xa_destroy(&f->adapter->fences);
	}
	/* Safe on a mapping never made. */
	nfence_vm_unmap(&f->alias_map);
	nfence_kspace_fini(&f->sp);
}

/* ---- Command emission (nfence_kunit_cs.h) ---- */

static u64 ops_data_va(struct ops_fix *f, unsigned int i)
{
	return f->sp.data_va + 8 * i;
}

/* ---- Submission and turns ---- */

/*
 * Queue [@va, @end) on @q with @progress, as nfence_hwqueue_push() does
 * once the ioctl has validated it.
 */
static struct nfence_submission *ops_submit(struct ops_fix *f,
					    struct nfence_hwqueue *q,
					      u64 va, u64 end, u64 progress)
{
	struct nfence_submission *sub;

	sub = kzalloc(sizeof(*sub), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, sub);
	sub->entry.kind = NFENCE_SUB_COMMANDS;
	sub->entry.va = va;
	sub->entry.size = end - va;
	sub->entry.progress_value = progress;

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_push_locked(f->cmp, &q->hw, &sub->entry);
	q->last_queued = progress;
	mutex_unlock(&f->cmp->lock);
	return sub;
}

/* Give @q a turn on its engine at time @now, as a CMP pass does. */
static int ops_run_at(struct ops_fix *f, struct nfence_hwqueue *q,
		      u64 now, unsigned int *ran)
{
	struct nfence_cmp_engine *e = &f->cmp->engines[q->ctx->engine];
	int ret;

	*ran = 12345;
	mutex_lock(&f->cmp->lock);
	ret = nfence_engine_run(f->cmp, e, &q->hw, now, NFENCE_ENGINE_BUDGET,
				ran, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	/* The interrupt the turn coalesced, as the CMP raises it after a pass. */
	nfence_engine_flush(f->cmp);
	return ret;
}

static int ops_run(struct ops_fix *f, struct nfence_hwqueue *q,
		   unsigned int *ran)
{
	return ops_run_at(f, q, OPS_NOW, ran);
}

static unsigned int ops_count(struct list_head *list)
{
	struct list_head *pos;
	unsigned int n = 0;

	list_for_each(pos, list)
		n++;
	return n;
}

#define OPS_IRQ(f, field)	atomic64_read(&(f)->adapter->gpu.irq_stats.field)

/*
 * FENCE_SIGNAL to memory without fence_at that holds a fence's values
 * anyway: the interrupt has no fence array and scans the adapter's fences,
 * which finds the fence's waiter.
 */
static void ops_fence_signal_scan(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct ops_waiter sw;
	unsigned int ran;
	u64 start, alias;

	alias = ops_map(f, &f->alias_map, f->sp.fvals, PAGE_SIZE, 0);
	f->fence->id = 1;
	KUNIT_ASSERT_EQ(test, 0, xa_err(xa_store(&f->adapter->fences, 1,
						 f->fence, GFP_KERNEL)));
	ops_wait_on(test, f->fence, &sw, 5);

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, alias, alias + 8, 6);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, ops_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 6);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, spurious), 0);
	xa_erase(&f->adapter->fences, 1);
	f->fence->id = 0;
	if (!sw.fired)
		nfence_waitlist_remove(&f->fence->waiters, &sw.w);
}

#define OPS_SCAN_FENCES	100
#define OPS_SCAN_WAITED	40

/*
 * The interrupt without a payload looks only at fences marked as having
 * waiters, at most 32 under one hold of the fence table's lock: 100
 * fences, 40 of them with a waiter, the value of all reached. The scan
 * wakes the 40, the next one finds them without waiters and clears their
 * marks, and the one after that looks at nothing. A waiter added later
 * marks its fence again.
 */
static void ops_scan_marked(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_irq_stats *st = &f->adapter->gpu.irq_stats;
	struct xarray *xa = &f->adapter->fences;
	struct nfence_fence *fence[OPS_SCAN_FENCES];
	struct ops_waiter *sw;
	unsigned int i, woken;
	u64 *vals;

	vals = kunit_kcalloc(test, 2 * OPS_SCAN_FENCES, sizeof(*vals),
			     GFP_KERNEL);
	sw = kunit_kcalloc(test, OPS_SCAN_FENCES, sizeof(*sw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vals);
	KUNIT_ASSERT_NOT_NULL(test, sw);
	for (i = 0; i < OPS_SCAN_FENCES; i++) {
		fence[i] = ops_fence(f, &vals[2 * i], &vals[2 * i + 1]);
		fence[i]->id = i + 1;
		KUNIT_ASSERT_EQ(test, 0, xa_err(xa_store(xa, i + 1, fence[i],
							 GFP_KERNEL)));
	}
	KUNIT_EXPECT_FALSE(test, xa_marked(xa, NFENCE_FENCE_WATCHED));
	for (i = 0; i < OPS_SCAN_WAITED; i++) {
		ops_wait_on(test, fence[2 * i], &sw[i], 1);
		KUNIT_EXPECT_TRUE(test, xa_get_mark(xa, i * 2 + 1,
						    NFENCE_FENCE_WATCHED));
	}
	for (i = 0; i < OPS_SCAN_FENCES; i++)
		WRITE_ONCE(vals[2 * i], 1);

	WRITE_ONCE(st->max_scan, 0);
	nfence_interrupt(f->adapter, NULL, 0);
	for (i = 0, woken = 0; i < OPS_SCAN_WAITED; i++)
		woken += sw[i].fired;
	KUNIT_EXPECT_EQ(test, woken, OPS_SCAN_WAITED);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 32);
	/* Woken, so without waiters: the next scan clears their marks. */
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_FALSE(test, xa_marked(xa, NFENCE_FENCE_WATCHED));
	WRITE_ONCE(st->max_scan, 0);
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 0);

	/* A new waiter marks its fence again; the scan finds it. */
	ops_wait_on(test, fence[1], &sw[0], 2);
	KUNIT_EXPECT_TRUE(test, xa_get_mark(xa, 2, NFENCE_FENCE_WATCHED));
	WRITE_ONCE(vals[2], 2);
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_EQ(test, sw[0].fired, 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 1);

	for (i = 0; i < OPS_SCAN_FENCES; i++) {
		xa_erase(xa, i + 1);
		KUNIT_EXPECT_EQ(test, kref_read(&fence[i]->ref), 1);
	}
}

/*
 * A fence whose device is in error (AlwaysSignaled) is not written, by a
 * FENCE_SIGNAL through fence_at or by the engine's own progress signal.
 */
static void ops_fence_signal_always_signaled(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;

	nfence_fence_set_always_signaled(f->fence);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0x100000000ull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	KUNIT_EXPECT_EQ(test, ops_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	/* Only the progress signal was counted. */
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, signals), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);

	nfence_engine_signal_fence(f->cmp, NULL, f->fence, 0x200000000ull);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, signals), 1);

	/* The progress fence itself, AlwaysSignaled: not written either. */
	nfence_fence_set_always_signaled(q->hw.progress);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 0x100000000ull);
	KUNIT_EXPECT_EQ(test, ops_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, signals), 1);
}

/*
 * A GPU wait on an AlwaysSignaled fence is satisfied at once, as every
 * wait on it is (Documentation/fences.rst, "Device error"), whatever the
 * value: its CurrentValue was raised to 0xFFFFFFFF only, so the value in
 * memory alone does not say so for 64-bit values above that.
 */
static void ops_fence_wait_always_signaled(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;
	int ret;

	nfence_fence_set_always_signaled(f->fence);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_wait(&f->sp.cs, f->sp.fence_va,
			NFENCE_ALWAYS_SIGNALED_VALUE);
	nfence_kcs_wait(&f->sp.cs, f->sp.fence_va, OPS_WAIT_VALUE);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ret = ops_run(f, q, &ran);
	KUNIT_ASSERT_EQ_MSG(test, ret, NFENCE_RUN_IDLE,
			    "state %u: parked on an AlwaysSignaled fence",
			    q->hw.state);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
}

/* Run @q's one pending submission to the end. */
static void ops_run_idle(struct ops_fix *f, struct nfence_hwqueue *q)
{
	unsigned int ran;

	KUNIT_EXPECT_EQ(f->test, ops_run(f, q, &ran), NFENCE_RUN_IDLE);
}

/* ---- A cross-adapter fence's error racing this adapter's GPU ---- */

/**
 * struct ops_race_case - a GPU store racing the other adapter's error
 * @name: the case
 * @opcode: the command that stores to the fence's CurrentValue
 * @gpu32: the GPU has no 64-bit atomics
 */
struct ops_race_case {
	const char *name;
	u32 opcode;
	bool gpu32;
};

static const struct ops_race_case ops_race_cases[] = {
	{ "fence_signal", DRM_NFENCE_CS_FENCE_SIGNAL, false },
	{ "write64", DRM_NFENCE_CS_WRITE64, false },
	{ "timestamp", DRM_NFENCE_CS_TIMESTAMP, false },
	{ "fence_signal_32bit", DRM_NFENCE_CS_FENCE_SIGNAL, true },
	{ "write64_32bit", DRM_NFENCE_CS_WRITE64, true },
};

static void ops_race_desc(const struct ops_race_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ops_race, ops_race_cases, ops_race_desc);

/*
 * &nfence_cmp_ops.fence_view with the race forced into it: the engine has
 * looked at @fence (not AlwaysSignaled), and before it stores, the other
 * adapter's device goes into error. The other adapter's raise holds only
 * that adapter's CMP lock, which nothing else takes here.
 */
static void ops_view_raced(struct nfence_fence *fence,
			   struct nfence_cmp_fence *view)
{
	struct ops_fix *f = kunit_get_current_test()->priv;
	struct nfence_fence *peer = f->race_peer;

	nfence_driver_cmp_ops.fence_view(fence, view);
	if (fence != f->fence || !peer)
		return;
	f->race_peer = NULL;
	nfence_fence_set_always_signaled(peer);
}

/*
 * Make @fence an instance of a cross-adapter fence, whose other instance
 * (returned) is on another adapter and shares its CurrentValue, and give
 * the CMP the callbacks that run that instance's error inside the next
 * look at @fence. Undone by ops_cross_unpair().
 */
static struct nfence_fence *ops_cross_pair(struct ops_fix *f)
{
	struct nfence_adapter *other;
	struct nfence_xgroup *xg;
	struct nfence_fence *peer;
	u64 *mv;

	other = kunit_kzalloc(f->test, sizeof(*other), GFP_KERNEL);
	xg = kunit_kzalloc(f->test, sizeof(*xg), GFP_KERNEL);
	mv = kunit_kzalloc(f->test, sizeof(*mv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, other);
	KUNIT_ASSERT_NOT_NULL(f->test, xg);
	KUNIT_ASSERT_NOT_NULL(f->test, mv);
	other->gpu.cfg = f->adapter->gpu.cfg;
	nfence_cmp_init(&other->cmp, &other->gpu, &nfence_driver_cmp_ops);

	kref_init(&xg->ref);
	spin_lock_init(&xg->lock);
	INIT_LIST_HEAD(&xg->instances);
	peer = ops_fence(f, &f->sp.fvals[0], mv);
	peer->adapter = other;
	peer->xgroup = xg;
	f->fence->xgroup = xg;
	list_add_tail(&f->fence->xlink, &xg->instances);
	list_add_tail(&peer->xlink, &xg->instances);

	f->race_ops = nfence_driver_cmp_ops;
	f->race_ops.fence_view = ops_view_raced;
	f->cmp->ops = &f->race_ops;
	f->race_peer = peer;
	return peer;
}

static void ops_cross_unpair(struct ops_fix *f, struct nfence_fence *peer)
{
	f->cmp->ops = &nfence_driver_cmp_ops;
	list_del(&f->fence->xlink);
	list_del(&peer->xlink);
	f->fence->xgroup = NULL;
	mutex_destroy(&peer->adapter->cmp.lock);
}

/*
 * A cross-adapter fence's creating device, on another adapter, goes into
 * error between this adapter's look at AlwaysSignaled and its store of a
 * value below 0xFFFFFFFF: the store lands after the raise, and the second
 * look after it (Documentation/fences.rst, "Cross-adapter fences") puts
 * the value back at 0xFFFFFFFF. The next store sees AlwaysSignaled and
 * stores nothing.
 */
static void ops_cross_error_race(struct kunit *test)
{
	const struct ops_race_case *c = test->param_value;
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_fence *peer;
	u64 start, i;

	f->adapter->gpu.cfg.no_64bit_atomics = c->gpu32;
	peer = ops_cross_pair(f);
	start = nfence_kcs_cursor(&f->sp.cs);
	for (i = 0; i < 2; i++) {
		if (c->opcode == DRM_NFENCE_CS_FENCE_SIGNAL)
			nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, 0, 5 + i);
		else if (c->opcode == DRM_NFENCE_CS_WRITE64)
			nfence_kcs_write64(&f->sp.cs, f->sp.fence_va, 5 + i);
		else
			nfence_kcs_timestamp(&f->sp.cs, f->sp.fence_va);
	}
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_run_idle(f, q);

	KUNIT_EXPECT_NULL_MSG(test, f->race_peer, "the error did not run");
	KUNIT_EXPECT_TRUE(test, READ_ONCE(f->fence->always_signaled));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(peer->always_signaled));
	/* Not lowered below 0xFFFFFFFF by the store that raced the error. */
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
	ops_cross_unpair(f, peer);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/*
 * In nfence_interrupt_carry(), after its look at AlwaysSignaled and before
 * its store: the other adapter's device goes into error.
 */
static void ops_carry_raced(struct nfence_fence *fence)
{
	struct ops_fix *f = kunit_get_current_test()->priv;
	struct nfence_fence *peer = f->race_peer;

	if (fence != f->fence || !peer)
		return;
	f->race_peer = NULL;
	nfence_fence_set_always_signaled(peer);
}

/*
 * The carry's second look: a 32-bit GPU signals a cross-adapter instance
 * down across 2^32 (the carry stores a value below 0xFFFFFFFF), and the
 * creator's device on the other adapter goes into error between the
 * carry's look at AlwaysSignaled and its store. The store lands after the
 * raise; the look after it puts the value back at 0xFFFFFFFF.
 */
static void ops_carry_error_race(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_fence *peer;
	u64 start;

	f->adapter->gpu.cfg.no_64bit_atomics = true;
	peer = ops_cross_pair(f);
	/* The race is in the carry, not in the engine's look. */
	f->cmp->ops = &nfence_driver_cmp_ops;
	f->sp.fvals[0] = 0x100000005ull;
	kunit_activate_static_stub(test, nfence_interrupt_carry_checked,
				   ops_carry_raced);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, 0, 0xfffffffeull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_run_idle(f, q);
	kunit_deactivate_static_stub(test, nfence_interrupt_carry_checked);

	KUNIT_EXPECT_NULL_MSG(test, f->race_peer, "the error did not run");
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(f->fence->always_signaled));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(peer->always_signaled));
	/* Not left at the carried 0xfffffffe. */
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	ops_cross_unpair(f, peer);
}
#endif /* NFENCE_HAVE_KUNIT_STATIC_STUB */

/*
 * A GPU without 64-bit atomics: FENCE_SIGNAL stores the low half; a value
 * whose high half differs from memory's raises the interrupt, with which
 * the driver completes the value (one carry), whether or not a waiter
 * wants it, up or down, for the progress fence as for fence storage.
 * Ordinary memory gets both halves from the GPU. A later signal's low half
 * is never overwritten by the completion of an earlier one.
 */
static void ops_32bit_signal_carry(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct ops_waiter sw;
	u64 start;

	f->adapter->gpu.cfg.no_64bit_atomics = true;
	f->sp.fvals[0] = 0xfffffff0ull;

	/* Same high half, no waiter: one store, no interrupt. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0xfffffff8ull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, interrupts), 0);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, suppressed), 2);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 0);

	/* Across 2^32 below the waiter: the carry interrupt alone. */
	ops_wait_on(test, f->fence, &sw, 0x100000010ull);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0x100000005ull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 2);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0x100000005ull);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 0);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[1], 0x10000000full);

	/* Past the waiter within the high half: the MonitoredValue rule. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0x100000010ull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 3);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0x100000010ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[1], U64_MAX);

	/* Down across 2^32 (a plain store lowers): completed as well. */
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0xfffffffeull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 4);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0xfffffffeull);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 2);

	/* Ordinary memory: no fence to complete, the GPU writes both. */
	f->sp.data[2] = 0xffffffffull;
	f->sp.data[4] = U64_MAX;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, ops_data_va(f, 2), 0, 0x200000001ull);
	nfence_kcs_write64(&f->sp.cs, ops_data_va(f, 4), OPS_VALUE);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 5);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.data[2], 0x200000001ull);
	KUNIT_EXPECT_EQ(test, f->sp.data[4], OPS_VALUE);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 2);

	/* The progress fence crosses 2^32 too (within the window). */
	f->pv[0][0] = 0xfffffff0ull;
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 0x100000000ull);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0x100000000ull);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 3);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, spurious), 0);

	/*
	 * A CPU signal of a lower value got in first: the GPU's value, stored
	 * whole by the carry, still lands (the CPU never saw half of it).
	 */
	f->sp.fvals[0] = 0xfffffff0ull;
	ops_wait_on(test, f->fence, &sw, 0x100000000ull);
	nfence_fence_signal(f->fence, 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 0);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_signal(&f->sp.cs, f->sp.fence_va, f->sp.fence_va + 8,
			  0x100000000ull);
	ops_submit(f, q, start, nfence_kcs_cursor(&f->sp.cs), 0x100000001ull);
	ops_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->sp.fvals[0], 0x100000000ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, carries), 4);
	KUNIT_EXPECT_EQ(test, OPS_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
}

/* What a fault leaves behind, for the faulting queue's context. */
static void ops_expect_fault(struct kunit *test, struct ops_fix *f,
			     u64 va, u32 reason, unsigned int dropped)
{
	struct nfence_context *ctx = f->ctx[0];
	unsigned int i;

	KUNIT_EXPECT_TRUE(test, ctx->faulted);
	KUNIT_EXPECT_EQ(test, ctx->fault_va, va);
	KUNIT_EXPECT_EQ(test, ctx->fault_reason, reason);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 1);
	/* Both queues of the context stop; their progress fences give up. */
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, f->q[i]->hw.state, NFENCE_QUEUE_FAULTED);
		KUNIT_EXPECT_EQ(test, f->q[i]->hw.num_pending, 0);
		KUNIT_EXPECT_TRUE(test, list_empty(&f->q[i]->hw.pending));
		KUNIT_EXPECT_TRUE(test, f->q[i]->hw.progress->always_signaled);
		KUNIT_EXPECT_EQ(test, f->pv[i][0], NFENCE_ALWAYS_SIGNALED_VALUE);
	}
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), dropped);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);
	/* The other context, on the other engine, is untouched. */
	KUNIT_EXPECT_FALSE(test, f->ctx[1]->faulted);
	KUNIT_EXPECT_FALSE(test, f->ctx[2]->faulted);
	KUNIT_EXPECT_FALSE(test, f->q[2]->hw.progress->always_signaled);
}

/*
 * A context fault, in full: every queue of the context stops and drops
 * its work, CPU waiters on the progress fences are released, the first
 * fault's VA and reason stay, and other contexts run on.
 */
static void ops_fault_stops_context(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct ops_waiter sw0, sw1;
	u64 start, bad;
	unsigned int ran;

	ops_wait_on(test, f->q[0]->hw.progress, &sw0, 2);
	ops_wait_on(test, f->q[1]->hw.progress, &sw1, 1);

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	bad = OPS_UNMAPPED + 8;
	nfence_kcs_write64(&f->sp.cs, bad, 1);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, f->q[0], start, nfence_kcs_cursor(&f->sp.cs), 1);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, f->q[0], start, nfence_kcs_cursor(&f->sp.cs), 2);
	ops_submit(f, f->q[0], start, nfence_kcs_cursor(&f->sp.cs), 3);
	ops_submit(f, f->q[1], start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_submit(f, f->q[2], start, nfence_kcs_cursor(&f->sp.cs), 1);

	KUNIT_EXPECT_EQ(test, ops_run(f, f->q[0], &ran), NFENCE_RUN_FAULT);
	KUNIT_EXPECT_EQ(test, ran, 2);
	ops_expect_fault(test, f, bad, DRM_NFENCE_FAULT_PAGE, 4);
	KUNIT_EXPECT_EQ(test, sw0.fired, 1);
	KUNIT_EXPECT_EQ(test, sw1.fired, 1);

	/* A later fault of the same context does not replace the first. */
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->sp.data_va,
					    DRM_NFENCE_FAULT_BAD_COMMAND,
					    &f->dropped);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_va, bad);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_reason, DRM_NFENCE_FAULT_PAGE);
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 4);

	nfence_submissions_drop(&f->dropped);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));

	/* The queue of the other context runs. */
	KUNIT_EXPECT_EQ(test, ops_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->pv[2][0], 1);
}

/*
 * nfence_hwqueue_stop_locked(): the pending list moves to the dropped list,
 * the queue takes the given state unless it is LOST (a device lost is worse
 * than a fault), and an engine busy with the queue is freed.
 */
static void ops_stop_locked(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	struct nfence_hwqueue *q0 = f->q[0], *q1 = f->q[1], *q2 = f->q[2];
	unsigned int ran;
	u64 start;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, q0, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_submit(f, q0, start, nfence_kcs_cursor(&f->sp.cs), 2);
	ops_submit(f, q1, start, nfence_kcs_cursor(&f->sp.cs), 1);
	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_work(&f->sp.cs, 1000);
	ops_submit(f, q2, start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_submit(f, q2, start, nfence_kcs_cursor(&f->sp.cs), 2);
	KUNIT_ASSERT_EQ(test, ops_run(f, q2, &ran), NFENCE_RUN_BUSY);
	KUNIT_ASSERT_PTR_EQ(test, f->cmp->engines[1].busy, &q2->hw);

	mutex_lock(&f->cmp->lock);
	/* FAULTED, then LOST: LOST. */
	nfence_hwqueue_stop_locked(q0, NFENCE_QUEUE_FAULTED, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_FAULTED);
	KUNIT_EXPECT_EQ(test, q0->hw.num_pending, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&q0->hw.pending));
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 2);
	nfence_hwqueue_stop_locked(q0, NFENCE_QUEUE_LOST, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 2);

	/* Destroyed with its own state: kept; then LOST, then FAULTED: LOST. */
	nfence_hwqueue_stop_locked(q1, q1->hw.state, &f->dropped);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q1->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 3);
	nfence_hwqueue_stop_locked(q1, NFENCE_QUEUE_LOST, &f->dropped);
	nfence_hwqueue_stop_locked(q1, NFENCE_QUEUE_FAULTED, &f->dropped);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_LOST);

	/* A context fault does not turn LOST queues into FAULTED ones. */
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->sp.data_va,
					    DRM_NFENCE_FAULT_PAGE, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_TRUE(test, f->ctx[0]->faulted);

	/* The running queue: its engine is free again. */
	nfence_hwqueue_stop_locked(q2, NFENCE_QUEUE_LOST, &f->dropped);
	KUNIT_EXPECT_EQ(test, q2->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[1].busy);
	KUNIT_EXPECT_EQ(test, q2->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 5);
	mutex_unlock(&f->cmp->lock);

	nfence_submissions_drop(&f->dropped);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * A device lost (nfence_device_lost_locked(), through
 * nfence_device_stop_queues_locked()) stops every queue of the device, on
 * every engine, as LOST, a FAULTED one included; other devices run on.
 * The walk is called alone: making the device's fences AlwaysSignaled
 * goes through its file, which this setup does not have.
 */
static void ops_device_lost(struct kunit *test)
{
	struct ops_fix *f = test->priv;
	unsigned int ran;
	u64 start;

	start = nfence_kcs_cursor(&f->sp.cs);
	nfence_kcs_nop(&f->sp.cs);
	ops_submit(f, f->q[0], start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_submit(f, f->q[1], start, nfence_kcs_cursor(&f->sp.cs), 1);
	ops_submit(f, f->q[2], start, nfence_kcs_cursor(&f->sp.cs), 1);

	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_stop_locked(f->q[1], NFENCE_QUEUE_FAULTED, &f->dropped);
	nfence_device_stop_queues_locked(f->cmp, f->wdev, &f->dropped);
	mutex_unlock(&f->cmp->lock);

	KUNIT_EXPECT_EQ(test, f->q[0]->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, f->q[1]->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, f->q[0]->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, ops_count(&f->dropped), 2);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.num_pending, 1);
	KUNIT_EXPECT_FALSE(test, f->wdev2->error);
	nfence_submissions_drop(&f->dropped);

	KUNIT_EXPECT_EQ(test, ops_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[2][0], 1);
}

/*
 * A device records the first fault of any of its contexts (VA, reason,
 * context); each context keeps its own; the device stays out of error and
 * another device records nothing.
 */
static void ops_device_first_fault(struct kunit *test)
{
	struct ops_fix *f = test->priv;

	KUNIT_EXPECT_EQ(test, f->wdev->fault_reason, DRM_NFENCE_FAULT_NONE);
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_context_fault_locked(f->ctx[1], f->sp.data_va + 8,
					    DRM_NFENCE_FAULT_BAD_COMMAND,
					    &f->dropped);
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->sp.data_va,
					    DRM_NFENCE_FAULT_PAGE, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	nfence_submissions_drop(&f->dropped);

	KUNIT_EXPECT_EQ(test, f->wdev->fault_reason,
			DRM_NFENCE_FAULT_BAD_COMMAND);
	KUNIT_EXPECT_EQ(test, f->wdev->fault_va, f->sp.data_va + 8);
	KUNIT_EXPECT_EQ(test, f->wdev->fault_context, f->ctx[1]->obj.handle);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_reason, DRM_NFENCE_FAULT_PAGE);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_va, f->sp.data_va);
	KUNIT_EXPECT_FALSE(test, f->wdev->error);
	KUNIT_EXPECT_EQ(test, f->wdev2->fault_reason, DRM_NFENCE_FAULT_NONE);
	KUNIT_EXPECT_EQ(test, f->wdev2->fault_context, 0);
}

static struct kunit_case nfence_cmp_ops_cases[] = {
	KUNIT_CASE(ops_fence_signal_scan),
	KUNIT_CASE(ops_scan_marked),
	KUNIT_CASE(ops_fence_signal_always_signaled),
	KUNIT_CASE(ops_fence_wait_always_signaled),
	KUNIT_CASE_PARAM(ops_cross_error_race, ops_race_gen_params),
	KUNIT_CASE(ops_32bit_signal_carry),
#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
	KUNIT_CASE(ops_carry_error_race),
#endif
	KUNIT_CASE(ops_fault_stops_context),
	KUNIT_CASE(ops_stop_locked),
	KUNIT_CASE(ops_device_lost),
	KUNIT_CASE(ops_device_first_fault),
	{}
};

static struct kunit_suite nfence_cmp_ops_suite = {
	.name = "nfence_cmp_ops",
	.init = ops_init,
	.exit = ops_exit,
	.test_cases = nfence_cmp_ops_cases,
};

kunit_test_suite(nfence_cmp_ops_suite);
