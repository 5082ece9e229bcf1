// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the runlist state machine: hardware queues run on their
 * engine by nfence_engine_run() (nfence_engine.c), stopped by
 * nfence_hwqueue_stop_locked() (nfence_hwqueue.c), faulted with their
 * context (nfence_hwqueue_context_fault_locked(), nfence_context.c) and
 * lost with their device (nfence_device_state.c).
 *
 * The CMP is set up with nfence_cmp_init(), without its thread, and the test
 * gives queues their turns itself, with the CMP lock held as the thread
 * does. There is no DRM device and no open file: the adapter, the device,
 * the contexts, the queues and their progress fences are built by hand, and
 * queued submissions are put on the queues as nfence_hwqueue_push()
 * (nfence_submit.c) would.
 * References are never dropped to zero (the release paths need the DRM
 * device and the file); the exit function checks that every count is back
 * where it started and frees the submissions left over.
 *
 * Commands are encoded in little endian as the ISA in nfence_drm.h
 * ("DOC: command stream") defines them.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/xarray.h>
#include <asm/byteorder.h>

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

/* Pages of command buffer; one more page is mapped right after them. */
#define SCHED_CMD_PAGES		4
#define SCHED_CMD_BYTES		(SCHED_CMD_PAGES * PAGE_SIZE)
#define SCHED_QUEUES		3
#define SCHED_DOORBELLS		3
#define SCHED_RING_ENTRIES	(PAGE_SIZE / sizeof(struct drm_nfence_ring_entry))
/* The time the tests pretend it is, for WORK. */
#define SCHED_NOW		1000000000ull
/* An aligned GPU VA inside the address space that nothing maps. */
#define SCHED_UNMAPPED		(NFENCE_VM_END - PAGE_SIZE)
/* 64-bit values with both halves non-zero. */
#define SCHED_VALUE		0x0123456789abcdefull
#define SCHED_WAIT_VALUE	0x0000000100000005ull

/**
 * struct sched_fix - everything a test runs on
 * @test: the test
 * @adapter: the adapter (no DRM device); @adapter->cmp is the CMP
 * @cmp: the CMP
 * @vm: the address space all queues use
 * @cmd_map: @cmds, SCHED_CMD_PAGES pages
 * @cmd_tail_map: the page after @cmds, mapped right after @cmd_map
 * @data_map: @data, one writable page
 * @ro_map: @ro, one read-only page
 * @fence_map: @fvals, fence storage: its fence_at finds @fence
 * @alias_map: @fvals again, as ordinary memory (no fence_at)
 * @cmds: command memory (SCHED_CMD_PAGES + 1 pages)
 * @cmd_va: GPU VA of @cmds
 * @cmd_used: bytes of @cmds emitted so far
 * @data: writable data
 * @data_va: its GPU VA
 * @ro: read-only data
 * @ro_va: its GPU VA
 * @fvals: @fence's CurrentValue at [0], MonitoredValue at [1]
 * @fence_va: GPU VA of @fvals in @fence_map
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
 * @vm_ready: @vm is initialized
 * @race_ops: the driver's CMP callbacks, with a fence_view that runs
 *	@race_peer's error after it looked (sched_view_raced())
 * @race_peer: the instance, on another adapter, of the cross-adapter
 *	fence @fence is made part of, whose device goes into error when the
 *	engine next looks at @fence; NULL once it did
 */
struct sched_fix {
	struct kunit *test;
	struct nfence_adapter *adapter;
	struct nfence_cmp *cmp;
	struct nfence_vm vm;
	struct nfence_vm_mapping cmd_map;
	struct nfence_vm_mapping cmd_tail_map;
	struct nfence_vm_mapping data_map;
	struct nfence_vm_mapping ro_map;
	struct nfence_vm_mapping fence_map;
	struct nfence_vm_mapping alias_map;
	u8 *cmds;
	u64 cmd_va;
	size_t cmd_used;
	u64 *data;
	u64 data_va;
	u64 *ro;
	u64 ro_va;
	u64 *fvals;
	u64 fence_va;
	struct nfence_fence *fence;
	unsigned int fence_at_calls;
	u64 fence_at_offset;
	bool fence_at_stride;
	struct nfence_device *wdev;
	struct nfence_device *wdev2;
	struct nfence_context *ctx[SCHED_QUEUES];
	struct nfence_hwqueue *q[SCHED_QUEUES];
	u64 pv[SCHED_QUEUES][2];
	struct list_head dropped;
	bool cmp_ready;
	bool vm_ready;
	struct nfence_cmp_ops race_ops;
	struct nfence_fence *race_peer;
	/* user-mode queues: a ring, its control and fake doorbell pages */
	struct nfence_vm_mapping ring_map;
	struct nfence_vm_mapping control_map;
	struct drm_nfence_ring_entry *ring;
	u64 ring_va;
	struct drm_nfence_ring_control *control;
	u64 control_va;
	struct page *doorbells[SCHED_DOORBELLS];
};

/* A CPU waiter that counts its completions. */
struct sched_waiter {
	struct nfence_waiter w;
	unsigned int fired;
};

static void sched_waiter_done(struct nfence_waiter *w)
{
	container_of(w, struct sched_waiter, w)->fired++;
}

static void sched_wait_on(struct kunit *test, struct nfence_fence *fence,
			  struct sched_waiter *sw, u64 value)
{
	memset(sw, 0, sizeof(*sw));
	RB_CLEAR_NODE(&sw->w.node);
	sw->w.value = value;
	sw->w.done = sched_waiter_done;
	KUNIT_ASSERT_FALSE(test, nfence_fence_add_waiter(fence, &sw->w));
	KUNIT_ASSERT_EQ(test, *fence->mv.value, value - 1);
}

/* The hardware's view of its fence table: offset 0 of @fence_map. */
static struct nfence_fence *sched_fence_at(struct nfence_vm_mapping *map,
					   u64 offset)
{
	struct sched_fix *f = container_of(map, struct sched_fix, fence_map);

	lockdep_assert_held(&map->vm->lock);
	f->fence_at_calls++;
	f->fence_at_offset = offset;
	if (offset >= (f->fence_at_stride ? 64 : 1))
		return NULL;
	kref_get(&f->fence->ref);
	return f->fence;
}

static struct nfence_fence *sched_fence(struct sched_fix *f, u64 *cv, u64 *mv)
{
	struct nfence_fence *fence;

	fence = kunit_kzalloc(f->test, sizeof(*fence), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, fence);
	kref_init(&fence->ref);
	atomic_set(&fence->handles, 1);
	fence->adapter = f->adapter;
	fence->type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	*cv = 0;
	fence->cv.value = cv;
	fence->mv.value = mv;
	nfence_waitlist_init(&fence->waiters, cv, mv);
	return fence;
}

static struct nfence_device *sched_device(struct sched_fix *f, u32 handle)
{
	struct nfence_device *wdev;

	wdev = kunit_kzalloc(f->test, sizeof(*wdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, wdev);
	kref_init(&wdev->ref);
	wdev->obj.handle = handle;
	wdev->error = false;
	return wdev;
}

static struct nfence_context *sched_context(struct sched_fix *f,
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
static struct nfence_hwqueue *sched_queue(struct sched_fix *f,
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
	q->hw.vm = &f->vm;
	q->obj.handle = i + 1;
	init_waitqueue_head(&q->room);
	q->hw.progress = sched_fence(f, &f->pv[i][0], &f->pv[i][1]);

	mutex_lock(&f->cmp->lock);
	nfence_cmp_queue_add_locked(f->cmp, &q->hw);
	list_add_tail(&q->ctx_link, &ctx->queues);
	mutex_unlock(&f->cmp->lock);
	return q;
}

static u64 sched_map(struct sched_fix *f, struct nfence_vm_mapping *map,
		     void *vaddr, u64 size, u32 flags)
{
	KUNIT_ASSERT_EQ(f->test, 0, nfence_vm_map(&f->vm, map, vaddr, size,
						  flags));
	return map->node.start;
}

static int sched_init(struct kunit *test)
{
	struct nfence_adapter *adapter;
	struct sched_fix *f;
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

	f->cmds = kunit_kzalloc(test, SCHED_CMD_BYTES + PAGE_SIZE, GFP_KERNEL);
	f->data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	f->ro = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	f->fvals = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->cmds);
	KUNIT_ASSERT_NOT_NULL(test, f->data);
	KUNIT_ASSERT_NOT_NULL(test, f->ro);
	KUNIT_ASSERT_NOT_NULL(test, f->fvals);

	nfence_vm_init(&f->vm);
	f->vm_ready = true;
	f->cmd_va = sched_map(f, &f->cmd_map, f->cmds, SCHED_CMD_BYTES, 0);
	/* The tail page follows: commands may straddle the two mappings. */
	KUNIT_ASSERT_EQ(test, sched_map(f, &f->cmd_tail_map,
					f->cmds + SCHED_CMD_BYTES, PAGE_SIZE, 0),
			f->cmd_va + SCHED_CMD_BYTES);
	f->data_va = sched_map(f, &f->data_map, f->data, PAGE_SIZE, 0);
	f->ro_va = sched_map(f, &f->ro_map, f->ro, PAGE_SIZE,
			     NFENCE_VM_READ_ONLY);
	f->fence_map.fence_at = sched_fence_at;
	f->fence_va = sched_map(f, &f->fence_map, f->fvals, PAGE_SIZE, 0);
	f->fence = sched_fence(f, &f->fvals[0], &f->fvals[1]);
	f->ring = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	f->control = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->ring);
	KUNIT_ASSERT_NOT_NULL(test, f->control);
	f->ring_va = sched_map(f, &f->ring_map, f->ring, PAGE_SIZE, 0);
	f->control_va = sched_map(f, &f->control_map, f->control, PAGE_SIZE,
				  0);

	f->wdev = sched_device(f, 1);
	f->wdev2 = sched_device(f, 2);
	f->ctx[0] = sched_context(f, f->wdev, 1, 0);
	f->ctx[1] = sched_context(f, f->wdev, 2, 0);
	f->ctx[2] = sched_context(f, f->wdev2, 3, 1);
	f->q[0] = sched_queue(f, f->ctx[0], 0);
	f->q[1] = sched_queue(f, f->ctx[0], 1);
	f->q[2] = sched_queue(f, f->ctx[2], 2);
	for (i = 0; i < SCHED_QUEUES; i++)
		KUNIT_ASSERT_EQ(test, f->pv[i][1], U64_MAX);
	return 0;
}

static void sched_exit(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	LIST_HEAD(left);
	unsigned int i;

	if (!f)
		return;
	if (f->cmp_ready) {
		mutex_lock(&f->cmp->lock);
		for (i = 0; i < SCHED_QUEUES; i++) {
			if (!f->q[i])
				continue;
			/* A ring's entry is the CMP's: off before the rest. */
			nfence_cmp_doorbell_unbind_locked(f->cmp, &f->q[i]->hw,
							  0);
			nfence_cmp_ring_detach_locked(f->cmp, &f->q[i]->hw);
			list_splice_tail_init(&f->q[i]->hw.pending, &left);
			f->q[i]->hw.num_pending = 0;
		}
		list_splice_tail_init(&f->dropped, &left);
		mutex_unlock(&f->cmp->lock);
		nfence_submissions_drop(&left);

		/* Nothing took a reference it did not give back. */
		for (i = 0; i < SCHED_QUEUES; i++) {
			if (!f->q[i])
				continue;
			KUNIT_EXPECT_EQ(test, kref_read(&f->q[i]->ref), 1);
			KUNIT_EXPECT_EQ(test, kref_read(&f->q[i]->hw.progress->ref),
					1);
		}
		for (i = 0; i < SCHED_QUEUES; i++)
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
	if (f->vm_ready) {
		nfence_vm_unmap(&f->cmd_map);
		nfence_vm_unmap(&f->cmd_tail_map);
		nfence_vm_unmap(&f->data_map);
		nfence_vm_unmap(&f->ro_map);
		nfence_vm_unmap(&f->fence_map);
		nfence_vm_unmap(&f->alias_map);
		nfence_vm_unmap(&f->ring_map);
		nfence_vm_unmap(&f->control_map);
		nfence_vm_fini(&f->vm);
	}
	for (i = 0; i < SCHED_DOORBELLS; i++)
		if (f->doorbells[i])
			__free_page(f->doorbells[i]);
}

/* ---- Command emission ---- */

static u64 sched_cursor(struct sched_fix *f)
{
	return f->cmd_va + f->cmd_used;
}

static void *sched_cmd_ptr(struct sched_fix *f, u64 va)
{
	return f->cmds + (va - f->cmd_va);
}

static void sched_put64(void *p, u64 v)
{
	__le64 le = cpu_to_le64(v);

	memcpy(p, &le, sizeof(le));
}

/* Header with @flags, the zero word, @nops operands; returns the VA. */
static u64 sched_emit_raw(struct sched_fix *f, u32 opcode, u32 flags,
			  u32 words, const u64 *ops, u32 nops)
{
	u64 va = sched_cursor(f);
	u8 *p = f->cmds + f->cmd_used;
	__le32 word[2] = {
		cpu_to_le32(DRM_NFENCE_CS_HEADER(opcode, words) | flags << 8),
		0,
	};
	u32 i;

	KUNIT_ASSERT_LE(f->test, f->cmd_used + 8 + 8 * nops,
			SCHED_CMD_BYTES + PAGE_SIZE);
	memcpy(p, word, sizeof(word));
	for (i = 0; i < nops; i++)
		sched_put64(p + 8 + 8 * i, ops[i]);
	f->cmd_used += 8 + 8 * nops;
	return va;
}

static u64 sched_emit(struct sched_fix *f, u32 opcode, u32 words,
		      const u64 *ops, u32 nops)
{
	return sched_emit_raw(f, opcode, 0, words, ops, nops);
}

static u64 sched_nop(struct sched_fix *f)
{
	return sched_emit(f, DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS, NULL, 0);
}

static u64 sched_wait(struct sched_fix *f, u64 va, u64 value)
{
	const u64 ops[] = { va, value };

	return sched_emit(f, DRM_NFENCE_CS_FENCE_WAIT,
			  DRM_NFENCE_CS_FENCE_WAIT_WORDS, ops, 2);
}

static u64 sched_signal(struct sched_fix *f, u64 cv_va, u64 mv_va, u64 value)
{
	const u64 ops[] = { cv_va, mv_va, value };

	return sched_emit(f, DRM_NFENCE_CS_FENCE_SIGNAL,
			  DRM_NFENCE_CS_FENCE_SIGNAL_WORDS, ops, 3);
}

static u64 sched_write64(struct sched_fix *f, u64 va, u64 value)
{
	const u64 ops[] = { va, value };

	return sched_emit(f, DRM_NFENCE_CS_WRITE64, DRM_NFENCE_CS_WRITE64_WORDS,
			  ops, 2);
}

static u64 sched_timestamp(struct sched_fix *f, u64 va)
{
	return sched_emit(f, DRM_NFENCE_CS_TIMESTAMP,
			  DRM_NFENCE_CS_TIMESTAMP_WORDS, &va, 1);
}

static u64 sched_work(struct sched_fix *f, u64 ns)
{
	return sched_emit(f, DRM_NFENCE_CS_WORK, DRM_NFENCE_CS_WORK_WORDS,
			  &ns, 1);
}

static u64 sched_data_va(struct sched_fix *f, unsigned int i)
{
	return f->data_va + 8 * i;
}

/* ---- Submission and turns ---- */

/*
 * Queue [@va, @end) on @q with @progress, as nfence_hwqueue_push() does
 * once the ioctl has validated it.
 */
static struct nfence_submission *sched_submit(struct sched_fix *f,
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
static int sched_run_at(struct sched_fix *f, struct nfence_hwqueue *q,
			u64 now, unsigned int *ran)
{
	struct nfence_cmp_engine *e = &f->cmp->engines[q->ctx->engine];
	int ret;

	*ran = 12345;
	mutex_lock(&f->cmp->lock);
	ret = nfence_engine_run(f->cmp, e, &q->hw, now, ran, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	/* The interrupt the turn coalesced, as the CMP raises it after a pass. */
	nfence_engine_flush(f->cmp);
	return ret;
}

static int sched_run(struct sched_fix *f, struct nfence_hwqueue *q,
		     unsigned int *ran)
{
	return sched_run_at(f, q, SCHED_NOW, ran);
}

static unsigned int sched_count(struct list_head *list)
{
	struct list_head *pos;
	unsigned int n = 0;

	list_for_each(pos, list)
		n++;
	return n;
}

static s64 sched_commands(struct sched_fix *f)
{
	return atomic64_read(&f->cmp->commands);
}

#define SCHED_IRQ(f, field)	atomic64_read(&(f)->adapter->gpu.irq_stats.field)

/* ---- Tests ---- */

/*
 * NOP-only submissions run to completion in one turn: every command is
 * counted, the progress fence reaches each submission's value in order, and
 * the queue goes idle. The progress signal follows the interrupt rule.
 */
static void sched_nop_runs_to_idle(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct sched_waiter sw;
	unsigned int ran, i;
	u64 start;

	/* A CPU waiter for progress 2 lowers MonitoredValue to 1. */
	sched_wait_on(test, q->hw.progress, &sw, 2);

	start = sched_cursor(f);
	for (i = 0; i < 5; i++)
		sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 1);
	start = sched_cursor(f);
	for (i = 0; i < 3; i++)
		sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 2);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q->hw.num_pending, 2);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	/* Eight commands and two completed submissions. */
	KUNIT_EXPECT_EQ(test, ran, 10);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 8);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 2);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, q->hw.num_pending, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->hw.pending));
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 0);

	/* Progress 1 did not pass MonitoredValue 1; progress 2 did. */
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][1], U64_MAX);

	/* Nothing left: idle again, nothing run. */
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 0);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * FENCE_WAIT on a value not reached parks the queue at that command; turns
 * re-run it until the value is written, then the queue goes on.
 */
static void sched_fence_wait_blocks(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_submission *sub;
	u64 start, wait_cmd;
	unsigned int ran;

	f->data[0] = SCHED_WAIT_VALUE - 1;
	start = sched_cursor(f);
	sched_nop(f);
	/* Already reached: passes. */
	sched_wait(f, sched_data_va(f, 0), 0);
	wait_cmd = sched_wait(f, sched_data_va(f, 0), SCHED_WAIT_VALUE);
	sched_write64(f, sched_data_va(f, 1), SCHED_VALUE);
	sub = sched_submit(f, q, start, sched_cursor(f), 1);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 2);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, q->hw.wait_va, sched_data_va(f, 0));
	KUNIT_EXPECT_EQ(test, q->hw.wait_value, SCHED_WAIT_VALUE);
	/* Parked at the FENCE_WAIT itself, not past it. */
	KUNIT_EXPECT_EQ(test, sub->entry.offset, wait_cmd - start);
	KUNIT_EXPECT_EQ(test, q->hw.num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->data[1], 0);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);

	/* Still not reached (the low 32 bits alone would be): parked again. */
	f->data[0] = SCHED_WAIT_VALUE - 0x100000000ull;
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, ran, 0);
	KUNIT_EXPECT_EQ(test, sub->entry.offset, wait_cmd - start);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 2);

	/* Reached exactly: the wait, the write, the completion. */
	f->data[0] = SCHED_WAIT_VALUE;
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 4);
	KUNIT_EXPECT_EQ(test, f->data[1], SCHED_VALUE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, q->hw.num_pending, 0);
}

/* Whether a kick is pending, cleared as the CMP thread clears it. */
static bool sched_kicked(struct sched_fix *f)
{
	return test_and_clear_bit(NFENCE_CMP_KICK, &f->cmp->pending);
}

/*
 * A CPU signal kicks the CMP (nfence_cmp_kick_waiters()) only while a
 * queue is parked on a FENCE_WAIT: counted once per queue however often
 * it is found unresolved again, no longer once its wait is resolved or
 * the queue stopped.
 */
static void sched_fence_wait_parked_kicks(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q0 = f->q[0], *q1 = f->q[1];
	unsigned int ran;
	u64 start;

	sched_kicked(f);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, sched_kicked(f));

	f->data[0] = 0;
	start = sched_cursor(f);
	sched_wait(f, sched_data_va(f, 0), 1);
	sched_submit(f, q0, start, sched_cursor(f), 1);
	sched_submit(f, q1, start, sched_cursor(f), 1);
	/* Runs and ends without parking: nothing to kick for. */
	start = sched_cursor(f);
	sched_wait(f, sched_data_va(f, 0), 0);
	sched_submit(f, f->q[2], start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 0);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, sched_kicked(f));

	KUNIT_EXPECT_EQ(test, sched_run(f, q0, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_TRUE(test, q0->hw.parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_TRUE(test, sched_kicked(f));
	/* Found unresolved again: still counted once. */
	KUNIT_EXPECT_EQ(test, sched_run(f, q0, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q1, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 2);

	/* q1 stops with its wait unresolved, q0's is resolved. */
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_stop_locked(q1, NFENCE_QUEUE_FAULTED, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, q1->hw.parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 1);
	f->data[0] = 1;
	KUNIT_EXPECT_EQ(test, sched_run(f, q0, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_FALSE(test, q0->hw.parked);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->cmp->num_parked), 0);
	nfence_cmp_kick_waiters(f->cmp);
	KUNIT_EXPECT_FALSE(test, sched_kicked(f));
	nfence_submissions_drop(&f->dropped);
}

/*
 * FENCE_SIGNAL to ordinary memory: the store, and the interrupt check
 * against the MonitoredValue at mv_va. The interrupt scans the adapter's
 * fences (none here), so it is spurious. Each submission's progress signal
 * adds a signal, suppressed (its MonitoredValue is U64_MAX).
 */
static void sched_fence_signal_memory(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	u64 cv_va = sched_data_va(f, 2), mv_va = sched_data_va(f, 3);
	unsigned int ran;
	u64 start;

	/* MonitoredValue below the value: interrupt. */
	f->data[3] = 0;
	start = sched_cursor(f);
	sched_signal(f, cv_va, mv_va, 7);
	sched_submit(f, q, start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->data[2], 7);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 1);

	/* MonitoredValue U64_MAX: suppressed. */
	f->data[3] = U64_MAX;
	start = sched_cursor(f);
	sched_signal(f, cv_va, mv_va, 8);
	sched_submit(f, q, start, sched_cursor(f), 2);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[2], 8);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 4);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 3);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 1);

	/* Equal to MonitoredValue: not above it, suppressed. */
	f->data[3] = 9;
	start = sched_cursor(f);
	sched_signal(f, cv_va, mv_va, 9);
	sched_submit(f, q, start, sched_cursor(f), 3);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[2], 9);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 6);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 5);

	/* mv_va 0: no check at all, neither interrupt nor suppressed. */
	f->data[3] = 0;
	start = sched_cursor(f);
	sched_signal(f, cv_va, 0, 10);
	sched_submit(f, q, start, sched_cursor(f), 4);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[2], 10);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 8);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 6);

	/* A plain store: a lower value lowers it. */
	f->data[3] = 2;
	start = sched_cursor(f);
	sched_signal(f, cv_va, mv_va, 3);
	sched_submit(f, q, start, sched_cursor(f), 5);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[2], 3);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 10);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 7);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, woken), 0);

	KUNIT_EXPECT_EQ(test, sched_commands(f), 5);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 5);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 0);
}

/*
 * FENCE_SIGNALs to ordinary memory each raise the interrupt, but the
 * engine coalesces them: one scan of the adapter's fences after the turn
 * (nfence_engine_flush()), not one per command, and none before the flush.
 * A signal of a fence the engine knows is not coalesced.
 */
static void sched_fence_signal_memory_coalesced(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	u64 cv_va = sched_data_va(f, 2), mv_va = sched_data_va(f, 3);
	struct nfence_cmp_engine *e = &f->cmp->engines[q->ctx->engine];
	unsigned int ran, i;
	u64 start;

	f->data[3] = 0;
	start = sched_cursor(f);
	for (i = 1; i <= 5; i++)
		sched_signal(f, cv_va, mv_va, i);
	sched_submit(f, q, start, sched_cursor(f), 1);
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, nfence_engine_run(f->cmp, e, &q->hw, SCHED_NOW,
						&ran, &f->dropped),
			NFENCE_RUN_IDLE);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, f->data[2], 5);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 5);
	/* Raised, not handled yet. */
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	nfence_engine_flush(f->cmp);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 1);
	/* Nothing left to raise. */
	nfence_engine_flush(f->cmp);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 1);
}

/*
 * FENCE_SIGNAL to fence storage: the engine asks the mapping's fence_at
 * which fence it is, at the offset of cv_va in the mapping, and the
 * interrupt processes that fence's waiters (not spurious). The engine
 * gives back the reference fence_at took.
 */
static void sched_fence_signal_fence_at(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct sched_waiter sw;
	unsigned int ran;
	u64 start;

	sched_wait_on(test, f->fence, &sw, 5);
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 5);
	sched_submit(f, q, start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 5);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&f->fence->waiters), 0);
	KUNIT_EXPECT_EQ(test, f->fvals[1], U64_MAX);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);

	/* Another offset of the mapping: fence_at finds nothing there. */
	f->fvals[3] = 0;
	start = sched_cursor(f);
	sched_signal(f, f->fence_va + 16, f->fence_va + 24, 1);
	sched_submit(f, q, start, sched_cursor(f), 2);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->fvals[2], 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 2);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 16);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
}

/*
 * FENCE_SIGNAL to memory without fence_at that holds a fence's values
 * anyway: the interrupt has no fence array and scans the adapter's fences,
 * which finds the fence's waiter.
 */
static void sched_fence_signal_scan(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct sched_waiter sw;
	unsigned int ran;
	u64 start, alias;

	alias = sched_map(f, &f->alias_map, f->fvals, PAGE_SIZE, 0);
	f->fence->id = 1;
	KUNIT_ASSERT_EQ(test, 0, xa_err(xa_store(&f->adapter->fences, 1,
						 f->fence, GFP_KERNEL)));
	sched_wait_on(test, f->fence, &sw, 5);

	start = sched_cursor(f);
	sched_signal(f, alias, alias + 8, 6);
	sched_submit(f, q, start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 6);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	xa_erase(&f->adapter->fences, 1);
	f->fence->id = 0;
	if (!sw.fired)
		nfence_waitlist_remove(&f->fence->waiters, &sw.w);
}

#define SCHED_SCAN_FENCES	100
#define SCHED_SCAN_WAITED	40

/*
 * The interrupt without a payload looks only at fences marked as having
 * waiters, at most 32 under one hold of the fence table's lock: 100
 * fences, 40 of them with a waiter, the value of all reached. The scan
 * wakes the 40, the next one finds them without waiters and clears their
 * marks, and the one after that looks at nothing. A waiter added later
 * marks its fence again.
 */
static void sched_scan_marked(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_irq_stats *st = &f->adapter->gpu.irq_stats;
	struct xarray *xa = &f->adapter->fences;
	struct nfence_fence *fence[SCHED_SCAN_FENCES];
	struct sched_waiter *sw;
	unsigned int i, woken;
	u64 *vals;

	vals = kunit_kcalloc(test, 2 * SCHED_SCAN_FENCES, sizeof(*vals),
			     GFP_KERNEL);
	sw = kunit_kcalloc(test, SCHED_SCAN_FENCES, sizeof(*sw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vals);
	KUNIT_ASSERT_NOT_NULL(test, sw);
	for (i = 0; i < SCHED_SCAN_FENCES; i++) {
		fence[i] = sched_fence(f, &vals[2 * i], &vals[2 * i + 1]);
		fence[i]->id = i + 1;
		KUNIT_ASSERT_EQ(test, 0, xa_err(xa_store(xa, i + 1, fence[i],
							 GFP_KERNEL)));
	}
	KUNIT_EXPECT_FALSE(test, xa_marked(xa, NFENCE_FENCE_WATCHED));
	for (i = 0; i < SCHED_SCAN_WAITED; i++) {
		sched_wait_on(test, fence[2 * i], &sw[i], 1);
		KUNIT_EXPECT_TRUE(test, xa_get_mark(xa, i * 2 + 1,
						    NFENCE_FENCE_WATCHED));
	}
	for (i = 0; i < SCHED_SCAN_FENCES; i++)
		WRITE_ONCE(vals[2 * i], 1);

	WRITE_ONCE(st->max_scan, 0);
	nfence_interrupt(f->adapter, NULL, 0);
	for (i = 0, woken = 0; i < SCHED_SCAN_WAITED; i++)
		woken += sw[i].fired;
	KUNIT_EXPECT_EQ(test, woken, SCHED_SCAN_WAITED);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 32);
	/* Woken, so without waiters: the next scan clears their marks. */
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_FALSE(test, xa_marked(xa, NFENCE_FENCE_WATCHED));
	WRITE_ONCE(st->max_scan, 0);
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 0);

	/* A new waiter marks its fence again; the scan finds it. */
	sched_wait_on(test, fence[1], &sw[0], 2);
	KUNIT_EXPECT_TRUE(test, xa_get_mark(xa, 2, NFENCE_FENCE_WATCHED));
	WRITE_ONCE(vals[2], 2);
	nfence_interrupt(f->adapter, NULL, 0);
	KUNIT_EXPECT_EQ(test, sw[0].fired, 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(st->max_scan), 1);

	for (i = 0; i < SCHED_SCAN_FENCES; i++) {
		xa_erase(xa, i + 1);
		KUNIT_EXPECT_EQ(test, kref_read(&fence[i]->ref), 1);
	}
}

/*
 * A fence whose device is in error (AlwaysSignaled) is not written, by a
 * FENCE_SIGNAL through fence_at or by the engine's own progress signal.
 */
static void sched_fence_signal_always_signaled(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;

	nfence_fence_set_always_signaled(f->fence);
	KUNIT_EXPECT_EQ(test, f->fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);

	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0x100000000ull);
	sched_submit(f, q, start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	/* Only the progress signal was counted. */
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);

	nfence_engine_signal_fence(f->cmp, NULL, f->fence, 0x200000000ull);
	KUNIT_EXPECT_EQ(test, f->fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 1);

	/* The progress fence itself, AlwaysSignaled: not written either. */
	nfence_fence_set_always_signaled(q->hw.progress);
	start = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 0x100000000ull);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 1);
}

/*
 * A GPU wait on an AlwaysSignaled fence is satisfied at once, as every
 * wait on it is (Documentation/fences.rst, "Device error"), whatever the
 * value: its CurrentValue was raised to 0xFFFFFFFF only, so the value in
 * memory alone does not say so for 64-bit values above that.
 */
static void sched_fence_wait_always_signaled(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;
	int ret;

	nfence_fence_set_always_signaled(f->fence);
	start = sched_cursor(f);
	sched_wait(f, f->fence_va, NFENCE_ALWAYS_SIGNALED_VALUE);
	sched_wait(f, f->fence_va, SCHED_WAIT_VALUE);
	sched_submit(f, q, start, sched_cursor(f), 1);
	ret = sched_run(f, q, &ran);
	KUNIT_ASSERT_EQ_MSG(test, ret, NFENCE_RUN_IDLE,
			    "state %u: parked on an AlwaysSignaled fence",
			    q->hw.state);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
}

/* Run @q's one pending submission to the end. */
static void sched_run_idle(struct sched_fix *f, struct nfence_hwqueue *q)
{
	unsigned int ran;

	KUNIT_EXPECT_EQ(f->test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
}

/* ---- A cross-adapter fence's error racing this adapter's GPU ---- */

/**
 * struct sched_race_case - a GPU store racing the other adapter's error
 * @name: the case
 * @opcode: the command that stores to the fence's CurrentValue
 * @gpu32: the GPU has no 64-bit atomics
 */
struct sched_race_case {
	const char *name;
	u32 opcode;
	bool gpu32;
};

static const struct sched_race_case sched_race_cases[] = {
	{ "fence_signal", DRM_NFENCE_CS_FENCE_SIGNAL, false },
	{ "write64", DRM_NFENCE_CS_WRITE64, false },
	{ "timestamp", DRM_NFENCE_CS_TIMESTAMP, false },
	{ "fence_signal_32bit", DRM_NFENCE_CS_FENCE_SIGNAL, true },
	{ "write64_32bit", DRM_NFENCE_CS_WRITE64, true },
};

static void sched_race_desc(const struct sched_race_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sched_race, sched_race_cases, sched_race_desc);

/*
 * &nfence_cmp_ops.fence_view with the race forced into it: the engine has
 * looked at @fence (not AlwaysSignaled), and before it stores, the other
 * adapter's device goes into error. The other adapter's raise holds only
 * that adapter's CMP lock, which nothing else takes here.
 */
static void sched_view_raced(struct nfence_fence *fence,
			     struct nfence_cmp_fence *view)
{
	struct sched_fix *f = kunit_get_current_test()->priv;
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
 * look at @fence. Undone by sched_cross_unpair().
 */
static struct nfence_fence *sched_cross_pair(struct sched_fix *f)
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
	peer = sched_fence(f, &f->fvals[0], mv);
	peer->adapter = other;
	peer->xgroup = xg;
	f->fence->xgroup = xg;
	list_add_tail(&f->fence->xlink, &xg->instances);
	list_add_tail(&peer->xlink, &xg->instances);

	f->race_ops = nfence_driver_cmp_ops;
	f->race_ops.fence_view = sched_view_raced;
	f->cmp->ops = &f->race_ops;
	f->race_peer = peer;
	return peer;
}

static void sched_cross_unpair(struct sched_fix *f, struct nfence_fence *peer)
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
static void sched_cross_error_race(struct kunit *test)
{
	const struct sched_race_case *c = test->param_value;
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_fence *peer;
	u64 start, i;

	f->adapter->gpu.cfg.no_64bit_atomics = c->gpu32;
	peer = sched_cross_pair(f);
	start = sched_cursor(f);
	for (i = 0; i < 2; i++) {
		if (c->opcode == DRM_NFENCE_CS_FENCE_SIGNAL)
			sched_signal(f, f->fence_va, 0, 5 + i);
		else if (c->opcode == DRM_NFENCE_CS_WRITE64)
			sched_write64(f, f->fence_va, 5 + i);
		else
			sched_timestamp(f, f->fence_va);
	}
	sched_submit(f, q, start, sched_cursor(f), 1);
	sched_run_idle(f, q);

	KUNIT_EXPECT_NULL_MSG(test, f->race_peer, "the error did not run");
	KUNIT_EXPECT_TRUE(test, READ_ONCE(f->fence->always_signaled));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(peer->always_signaled));
	/* Not lowered below 0xFFFFFFFF by the store that raced the error. */
	KUNIT_EXPECT_EQ(test, f->fvals[0], NFENCE_ALWAYS_SIGNALED_VALUE);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
	sched_cross_unpair(f, peer);
}

/*
 * A GPU without 64-bit atomics: FENCE_SIGNAL stores the low half; a value
 * whose high half differs from memory's raises the interrupt, with which
 * the driver completes the value (one carry), whether or not a waiter
 * wants it, up or down, for the progress fence as for fence storage.
 * Ordinary memory gets both halves from the GPU. A later signal's low half
 * is never overwritten by the completion of an earlier one.
 */
static void sched_32bit_signal_carry(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct sched_waiter sw;
	u64 start;

	f->adapter->gpu.cfg.no_64bit_atomics = true;
	f->fvals[0] = 0xfffffff0ull;

	/* Same high half, no waiter: one store, no interrupt. */
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0xfffffff8ull);
	sched_submit(f, q, start, sched_cursor(f), 1);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 0);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, suppressed), 2);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 0);

	/* Across 2^32 below the waiter: the carry interrupt alone. */
	sched_wait_on(test, f->fence, &sw, 0x100000010ull);
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0x100000005ull);
	sched_submit(f, q, start, sched_cursor(f), 2);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0x100000005ull);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, sw.fired, 0);
	KUNIT_EXPECT_EQ(test, f->fvals[1], 0x10000000full);

	/* Past the waiter within the high half: the MonitoredValue rule. */
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0x100000010ull);
	sched_submit(f, q, start, sched_cursor(f), 3);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0x100000010ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 2);
	KUNIT_EXPECT_EQ(test, f->fvals[1], U64_MAX);

	/* Down across 2^32 (a plain store lowers): completed as well. */
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0xfffffffeull);
	sched_submit(f, q, start, sched_cursor(f), 4);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0xfffffffeull);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 2);

	/* Ordinary memory: no fence to complete, the GPU writes both. */
	f->data[2] = 0xffffffffull;
	f->data[4] = U64_MAX;
	start = sched_cursor(f);
	sched_signal(f, sched_data_va(f, 2), 0, 0x200000001ull);
	sched_write64(f, sched_data_va(f, 4), SCHED_VALUE);
	sched_submit(f, q, start, sched_cursor(f), 5);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->data[2], 0x200000001ull);
	KUNIT_EXPECT_EQ(test, f->data[4], SCHED_VALUE);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 2);

	/* The progress fence crosses 2^32 too (within the window). */
	f->pv[0][0] = 0xfffffff0ull;
	start = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 0x100000000ull);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0x100000000ull);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 3);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);

	/*
	 * A CPU signal of a lower value got in first: the GPU's value, stored
	 * whole by the carry, still lands (the CPU never saw half of it).
	 */
	f->fvals[0] = 0xfffffff0ull;
	sched_wait_on(test, f->fence, &sw, 0x100000000ull);
	nfence_fence_signal(f->fence, 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0xfffffff8ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 0);
	start = sched_cursor(f);
	sched_signal(f, f->fence_va, f->fence_va + 8, 0x100000000ull);
	sched_submit(f, q, start, sched_cursor(f), 0x100000001ull);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 0x100000000ull);
	KUNIT_EXPECT_EQ(test, sw.fired, 1);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 4);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, spurious), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
}

/*
 * A pool page's fence_at answers for a slot's whole stride, but only the
 * slot's first word is the fence's CurrentValue: a FENCE_SIGNAL of another
 * word of the stride is ordinary memory. On a 32-bit GPU it gets both
 * halves and no carry, and the fence itself is left alone (in any mode, its
 * waiters are not in the interrupt's signaled-fence array).
 */
static void sched_32bit_signal_in_stride(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	u64 start;

	f->adapter->gpu.cfg.no_64bit_atomics = true;
	f->fence_at_stride = true;
	f->fvals[0] = 5;
	f->fvals[2] = 5;
	start = sched_cursor(f);
	sched_signal(f, f->fence_va + 16, 0, 0x100000005ull);
	sched_submit(f, q, start, sched_cursor(f), 1);
	sched_run_idle(f, q);
	KUNIT_EXPECT_EQ(test, f->fence_at_calls, 1);
	KUNIT_EXPECT_EQ(test, f->fence_at_offset, 16);
	KUNIT_EXPECT_EQ(test, f->fvals[2], 0x100000005ull);
	KUNIT_EXPECT_EQ(test, f->fvals[0], 5);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, carries), 0);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&f->fence->ref), 1);
}

/*
 * A GPU without 64-bit atomics compares the low halves as serial numbers:
 * a wait across 2^32 holds until the value gets there (an unsigned 32-bit
 * compare would pass at once), and beyond the UINT_MAX/2 window the low
 * halves alone decide.
 */
static void sched_32bit_wait_serial(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;

	f->adapter->gpu.cfg.no_64bit_atomics = true;
	f->data[0] = 0xfffffff0ull;
	start = sched_cursor(f);
	sched_wait(f, sched_data_va(f, 0), 0x100000010ull);
	sched_write64(f, sched_data_va(f, 1), 1);
	sched_wait(f, sched_data_va(f, 0), 0x200000003ull);
	sched_write64(f, sched_data_va(f, 1), 2);
	sched_submit(f, q, start, sched_cursor(f), 1);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, f->data[1], 0);
	f->data[0] = 0x10000000full;
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, f->data[1], 0);
	/*
	 * Reached. 0x2_00000003 is more than UINT_MAX/2 ahead, out of the
	 * window: low 0x10 is past low 3, so the GPU passes it too.
	 */
	f->data[0] = 0x100000010ull;
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[1], 2);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
}

/* WRITE64 and TIMESTAMP store 64-bit values through the address space. */
static void sched_write64_timestamp(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start, before, after;

	f->data[4] = U64_MAX;
	f->data[5] = U64_MAX;
	start = sched_cursor(f);
	sched_write64(f, sched_data_va(f, 4), SCHED_VALUE);
	sched_timestamp(f, sched_data_va(f, 5));
	sched_write64(f, sched_data_va(f, 6), 0);
	sched_submit(f, q, start, sched_cursor(f), 1);

	before = nfence_gpu_timestamp(&f->adapter->gpu, NULL);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	after = nfence_gpu_timestamp(&f->adapter->gpu, NULL);
	KUNIT_EXPECT_EQ(test, ran, 4);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 3);
	KUNIT_EXPECT_EQ(test, f->data[4], SCHED_VALUE);
	KUNIT_EXPECT_GE(test, f->data[5], before);
	KUNIT_EXPECT_LE(test, f->data[5], after);
	KUNIT_EXPECT_EQ(test, f->data[6], 0);
	/* Nothing else in the page was touched. */
	KUNIT_EXPECT_EQ(test, f->data[3], 0);
	KUNIT_EXPECT_EQ(test, f->data[7], 0);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 1);
}

/*
 * WORK occupies the queue's engine until now + duration; the queue is
 * RUNNING, past the WORK command, and the progress fence waits for the
 * rest. WORK 0 takes no time. The other engine stays free.
 */
static void sched_work_busy(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_engine *e0 = &f->cmp->engines[0];
	struct nfence_cmp_engine *e1 = &f->cmp->engines[1];
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_submission *sub;
	u64 start, work_cmd, before, after;
	unsigned int ran;

	start = sched_cursor(f);
	sched_nop(f);
	work_cmd = sched_work(f, 1500000);
	sched_write64(f, sched_data_va(f, 0), 1);
	sub = sched_submit(f, q, start, sched_cursor(f), 1);

	/* WORK starts when it runs, on the clock, not at the turn's start. */
	before = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, sched_run_at(f, q, SCHED_NOW, &ran),
			NFENCE_RUN_BUSY);
	after = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, sched_commands(f), 2);
	KUNIT_EXPECT_PTR_EQ(test, e0->busy, &q->hw);
	KUNIT_EXPECT_EQ(test, e0->busy_until_ns, q->hw.work_start_ns + 1500000);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_RUNNING);
	KUNIT_EXPECT_GE(test, q->hw.work_start_ns, before);
	KUNIT_EXPECT_LE(test, q->hw.work_start_ns, after);
	KUNIT_EXPECT_EQ(test, sub->entry.offset, work_cmd + 16 - start);
	KUNIT_EXPECT_EQ(test, f->data[0], 0);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_NULL(test, e1->busy);

	/*
	 * What the CMP does once the deadline passed (nfence_cmp_engine_busy()
	 * is static): free the engine, make the queue ready. The queue goes
	 * on after the WORK.
	 */
	mutex_lock(&f->cmp->lock);
	e0->busy = NULL;
	q->hw.state = NFENCE_QUEUE_READY;
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, sched_run_at(f, q, SCHED_NOW + 1500000, &ran),
			NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->data[0], 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_NULL(test, e0->busy);

	/* WORK 0: no time, no busy engine. */
	start = sched_cursor(f);
	sched_work(f, 0);
	sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 2);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_NULL(test, e0->busy);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);

	/* The longest WORK, on engine 1: engine 0 is not involved. */
	start = sched_cursor(f);
	sched_work(f, DRM_NFENCE_CS_MAX_WORK_NS);
	sched_submit(f, f->q[2], start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run_at(f, f->q[2], SCHED_NOW + 7, &ran),
			NFENCE_RUN_BUSY);
	KUNIT_EXPECT_EQ(test, ran, 1);
	KUNIT_EXPECT_PTR_EQ(test, e1->busy, &f->q[2]->hw);
	KUNIT_EXPECT_EQ(test, e1->busy_until_ns,
			f->q[2]->hw.work_start_ns + DRM_NFENCE_CS_MAX_WORK_NS);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.state, NFENCE_QUEUE_RUNNING);
	KUNIT_EXPECT_NULL(test, e0->busy);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
}

/*
 * A turn runs at most NFENCE_ENGINE_BUDGET commands, then yields with the
 * queue still ready; the next turn finishes.
 */
static void sched_budget_yields(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	struct nfence_submission *sub;
	unsigned int ran, i;
	u64 start;

	start = sched_cursor(f);
	for (i = 0; i < NFENCE_ENGINE_BUDGET + 10; i++)
		sched_nop(f);
	sub = sched_submit(f, q, start, sched_cursor(f), 1);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_YIELD);
	KUNIT_EXPECT_EQ(test, ran, NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, sched_commands(f), NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, sub->entry.offset, 8 * NFENCE_ENGINE_BUDGET);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q->hw.num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 11);
	KUNIT_EXPECT_EQ(test, sched_commands(f), NFENCE_ENGINE_BUDGET + 10);
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 1);
	KUNIT_EXPECT_EQ(test, q->hw.state, NFENCE_QUEUE_IDLE);
}

/* A command whose operands cross from one mapping into the next runs. */
static void sched_command_straddles_mappings(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	unsigned int ran;
	u64 start;

	f->cmd_used = SCHED_CMD_BYTES - 16;
	f->data[3] = 0;
	start = sched_signal(f, sched_data_va(f, 2), sched_data_va(f, 3),
			     SCHED_VALUE);
	KUNIT_ASSERT_GT(test, sched_cursor(f), f->cmd_tail_map.node.start);
	sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 3);
	KUNIT_EXPECT_EQ(test, f->data[2], SCHED_VALUE);
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, interrupts), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->faults), 0);
}

/* What a fault leaves behind, for the faulting queue's context. */
static void sched_expect_fault(struct kunit *test, struct sched_fix *f,
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
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), dropped);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[0].busy);
	/* The other context, on the other engine, is untouched. */
	KUNIT_EXPECT_FALSE(test, f->ctx[1]->faulted);
	KUNIT_EXPECT_FALSE(test, f->ctx[2]->faulted);
	KUNIT_EXPECT_FALSE(test, f->q[2]->hw.progress->always_signaled);
}

enum sched_fault_kind {
	SCHED_FAULT_WRITE64_UNMAPPED,
	SCHED_FAULT_WRITE64_READ_ONLY,
	SCHED_FAULT_WAIT_UNMAPPED,
	SCHED_FAULT_WAIT_BEYOND_SPACE,
	SCHED_FAULT_SIGNAL_CV_READ_ONLY,
	SCHED_FAULT_SIGNAL_MV_UNMAPPED,
	SCHED_FAULT_TIMESTAMP_READ_ONLY,
	SCHED_FAULT_UNKNOWN_OPCODE,
	SCHED_FAULT_FLAGS,
	SCHED_FAULT_PAST_END,
	SCHED_FAULT_MISALIGNED,
	SCHED_FAULT_COMMANDS_UNMAPPED,
};

struct sched_fault_case {
	const char *name;
	enum sched_fault_kind kind;
	u32 reason;
};

static const struct sched_fault_case sched_fault_cases[] = {
	{ "WRITE64_unmapped", SCHED_FAULT_WRITE64_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "WRITE64_read_only", SCHED_FAULT_WRITE64_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_WAIT_unmapped", SCHED_FAULT_WAIT_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_WAIT_beyond_space", SCHED_FAULT_WAIT_BEYOND_SPACE,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_SIGNAL_cv_read_only", SCHED_FAULT_SIGNAL_CV_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "FENCE_SIGNAL_mv_unmapped", SCHED_FAULT_SIGNAL_MV_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
	{ "TIMESTAMP_read_only", SCHED_FAULT_TIMESTAMP_READ_ONLY,
	  DRM_NFENCE_FAULT_PAGE },
	{ "unknown_opcode", SCHED_FAULT_UNKNOWN_OPCODE,
	  DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "header_flags", SCHED_FAULT_FLAGS, DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "command_past_end", SCHED_FAULT_PAST_END,
	  DRM_NFENCE_FAULT_BAD_COMMAND },
	{ "misaligned_operand", SCHED_FAULT_MISALIGNED,
	  DRM_NFENCE_FAULT_MISALIGNED },
	{ "commands_unmapped", SCHED_FAULT_COMMANDS_UNMAPPED,
	  DRM_NFENCE_FAULT_PAGE },
};

static void sched_fault_desc(const struct sched_fault_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sched_fault, sched_fault_cases, sched_fault_desc);

/*
 * Each run-time fault stops the context with its VA and reason: the
 * operand for a page fault, the command's address for a command the
 * decoder rejects. The command before it ran; nothing after it did, and
 * a page fault stores nothing.
 */
static void sched_fault_reasons(struct kunit *test)
{
	const struct sched_fault_case *c = test->param_value;
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	u64 start, end, va = 0, cmd;
	unsigned int ran, ran_before = 1;
	const u64 ops[] = { sched_data_va(f, 0), 1 };
	int ret;

	start = sched_cursor(f);
	sched_nop(f);
	switch (c->kind) {
	case SCHED_FAULT_WRITE64_UNMAPPED:
		va = SCHED_UNMAPPED;
		sched_write64(f, va, 1);
		break;
	case SCHED_FAULT_WRITE64_READ_ONLY:
		va = f->ro_va;
		sched_write64(f, va, 1);
		break;
	case SCHED_FAULT_WAIT_UNMAPPED:
		va = SCHED_UNMAPPED;
		sched_wait(f, va, 1);
		break;
	case SCHED_FAULT_WAIT_BEYOND_SPACE:
		/*
		 * The end of the address space. Only a read, and for a value
		 * any u64 reaches: see vm_find_beyond_space in
		 * nfence_vm_test.c for what may come back for such a VA.
		 */
		va = NFENCE_VM_END;
		sched_wait(f, va, 0);
		break;
	case SCHED_FAULT_SIGNAL_CV_READ_ONLY:
		va = f->ro_va;
		sched_signal(f, va, sched_data_va(f, 3), 1);
		break;
	case SCHED_FAULT_SIGNAL_MV_UNMAPPED:
		va = SCHED_UNMAPPED;
		sched_signal(f, sched_data_va(f, 0), va, 1);
		break;
	case SCHED_FAULT_TIMESTAMP_READ_ONLY:
		va = f->ro_va + 8;
		sched_timestamp(f, va);
		break;
	case SCHED_FAULT_UNKNOWN_OPCODE:
		va = sched_emit(f, DRM_NFENCE_CS_WORK + 1,
				DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		break;
	case SCHED_FAULT_FLAGS:
		va = sched_emit_raw(f, DRM_NFENCE_CS_WRITE64, 1,
				    DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		break;
	case SCHED_FAULT_PAST_END:
		va = sched_write64(f, sched_data_va(f, 0), 1);
		break;
	case SCHED_FAULT_MISALIGNED:
		cmd = sched_emit(f, DRM_NFENCE_CS_WRITE64,
				 DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
		/* The fault names the misaligned operand. */
		va = sched_data_va(f, 0) + 4;
		sched_put64(sched_cmd_ptr(f, cmd) + 8, va);
		break;
	case SCHED_FAULT_COMMANDS_UNMAPPED:
		break;
	}
	sched_nop(f);
	end = sched_cursor(f);
	if (c->kind == SCHED_FAULT_PAST_END)
		end = va + 16;
	if (c->kind == SCHED_FAULT_COMMANDS_UNMAPPED) {
		start = SCHED_UNMAPPED;
		end = start + 16;
		va = start;
		ran_before = 0;
	}
	sched_submit(f, q, start, end, 1);
	cmd = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, q, cmd, sched_cursor(f), 2);
	/* Queue 1 of the same context has work too; queue 2 is elsewhere. */
	sched_submit(f, f->q[1], cmd, sched_cursor(f), 1);
	sched_submit(f, f->q[2], cmd, sched_cursor(f), 1);

	ret = sched_run(f, q, &ran);
	KUNIT_ASSERT_EQ_MSG(test, ret, NFENCE_RUN_FAULT, "no fault at %#llx",
			    va);
	KUNIT_EXPECT_EQ(test, ran, ran_before);
	KUNIT_EXPECT_EQ(test, sched_commands(f), ran_before);
	sched_expect_fault(test, f, va, c->reason, 3);
	KUNIT_EXPECT_EQ(test, f->data[0], 0);
	KUNIT_EXPECT_EQ(test, f->ro[0], 0);
	KUNIT_EXPECT_EQ(test, f->ro[1], 0);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.num_pending, 1);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.state, NFENCE_QUEUE_READY);
	/* Nothing was signaled: the progress fences were given up instead. */
	KUNIT_EXPECT_EQ(test, SCHED_IRQ(f, signals), 0);

	nfence_submissions_drop(&f->dropped);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * A context fault, in full: every queue of the context stops and drops
 * its work, CPU waiters on the progress fences are released, the first
 * fault's VA and reason stay, and other contexts run on.
 */
static void sched_fault_stops_context(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct sched_waiter sw0, sw1;
	u64 start, bad;
	unsigned int ran;

	sched_wait_on(test, f->q[0]->hw.progress, &sw0, 2);
	sched_wait_on(test, f->q[1]->hw.progress, &sw1, 1);

	start = sched_cursor(f);
	sched_nop(f);
	sched_nop(f);
	bad = SCHED_UNMAPPED + 8;
	sched_write64(f, bad, 1);
	sched_nop(f);
	sched_submit(f, f->q[0], start, sched_cursor(f), 1);
	start = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, f->q[0], start, sched_cursor(f), 2);
	sched_submit(f, f->q[0], start, sched_cursor(f), 3);
	sched_submit(f, f->q[1], start, sched_cursor(f), 1);
	sched_submit(f, f->q[2], start, sched_cursor(f), 1);

	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[0], &ran), NFENCE_RUN_FAULT);
	KUNIT_EXPECT_EQ(test, ran, 2);
	sched_expect_fault(test, f, bad, DRM_NFENCE_FAULT_PAGE, 4);
	KUNIT_EXPECT_EQ(test, sw0.fired, 1);
	KUNIT_EXPECT_EQ(test, sw1.fired, 1);

	/* A later fault of the same context does not replace the first. */
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->data_va,
					    DRM_NFENCE_FAULT_BAD_COMMAND,
					    &f->dropped);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_va, bad);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_reason, DRM_NFENCE_FAULT_PAGE);
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 4);

	nfence_submissions_drop(&f->dropped);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));

	/* The queue of the other context runs. */
	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, ran, 2);
	KUNIT_EXPECT_EQ(test, f->pv[2][0], 1);
}

/*
 * The command buffer is read again when it runs: a valid command rewritten
 * after submission with a misaligned operand is a MISALIGNED fault, at the
 * misaligned operand.
 */
static void sched_misaligned_after_submit(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q = f->q[0];
	u64 start, cmd;
	unsigned int ran;

	start = sched_cursor(f);
	sched_write64(f, sched_data_va(f, 0), 1);
	cmd = sched_write64(f, sched_data_va(f, 1), 2);
	sched_nop(f);
	sched_submit(f, q, start, sched_cursor(f), 1);

	/* As user space would, through its CPU mapping. */
	sched_put64(sched_cmd_ptr(f, cmd) + 8, sched_data_va(f, 1) + 4);

	KUNIT_EXPECT_EQ(test, sched_run(f, q, &ran), NFENCE_RUN_FAULT);
	KUNIT_EXPECT_EQ(test, ran, 1);
	KUNIT_EXPECT_EQ(test, f->data[0], 1);
	KUNIT_EXPECT_EQ(test, f->data[1], 0);
	sched_expect_fault(test, f, sched_data_va(f, 1) + 4,
			   DRM_NFENCE_FAULT_MISALIGNED, 1);
	nfence_submissions_drop(&f->dropped);
}

/*
 * nfence_hwqueue_stop_locked(): the pending list moves to the dropped list,
 * the queue takes the given state unless it is LOST (a device lost is worse
 * than a fault), and an engine busy with the queue is freed.
 */
static void sched_stop_locked(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_hwqueue *q0 = f->q[0], *q1 = f->q[1], *q2 = f->q[2];
	unsigned int ran;
	u64 start;

	start = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, q0, start, sched_cursor(f), 1);
	sched_submit(f, q0, start, sched_cursor(f), 2);
	sched_submit(f, q1, start, sched_cursor(f), 1);
	start = sched_cursor(f);
	sched_work(f, 1000);
	sched_submit(f, q2, start, sched_cursor(f), 1);
	sched_submit(f, q2, start, sched_cursor(f), 2);
	KUNIT_ASSERT_EQ(test, sched_run(f, q2, &ran), NFENCE_RUN_BUSY);
	KUNIT_ASSERT_PTR_EQ(test, f->cmp->engines[1].busy, &q2->hw);

	mutex_lock(&f->cmp->lock);
	/* FAULTED, then LOST: LOST. */
	nfence_hwqueue_stop_locked(q0, NFENCE_QUEUE_FAULTED, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_FAULTED);
	KUNIT_EXPECT_EQ(test, q0->hw.num_pending, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&q0->hw.pending));
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 2);
	nfence_hwqueue_stop_locked(q0, NFENCE_QUEUE_LOST, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 2);

	/* Destroyed with its own state: kept; then LOST, then FAULTED: LOST. */
	nfence_hwqueue_stop_locked(q1, q1->hw.state, &f->dropped);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, q1->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 3);
	nfence_hwqueue_stop_locked(q1, NFENCE_QUEUE_LOST, &f->dropped);
	nfence_hwqueue_stop_locked(q1, NFENCE_QUEUE_FAULTED, &f->dropped);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_LOST);

	/* A context fault does not turn LOST queues into FAULTED ones. */
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->data_va,
					    DRM_NFENCE_FAULT_PAGE, &f->dropped);
	KUNIT_EXPECT_EQ(test, q0->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, q1->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_TRUE(test, f->ctx[0]->faulted);

	/* The running queue: its engine is free again. */
	nfence_hwqueue_stop_locked(q2, NFENCE_QUEUE_LOST, &f->dropped);
	KUNIT_EXPECT_EQ(test, q2->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_NULL(test, f->cmp->engines[1].busy);
	KUNIT_EXPECT_EQ(test, q2->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 5);
	mutex_unlock(&f->cmp->lock);

	nfence_submissions_drop(&f->dropped);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));
}

/*
 * nfence_device_lost_locked() stops every queue of the device, on
 * every engine, as LOST, a FAULTED one included; other devices run on.
 * The device is put in error beforehand: making its fences AlwaysSignaled
 * goes through its file, which this setup does not have.
 */
static void sched_device_lost(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	unsigned int ran;
	u64 start;

	start = sched_cursor(f);
	sched_nop(f);
	sched_submit(f, f->q[0], start, sched_cursor(f), 1);
	sched_submit(f, f->q[1], start, sched_cursor(f), 1);
	sched_submit(f, f->q[2], start, sched_cursor(f), 1);

	WRITE_ONCE(f->wdev->error, true);
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_stop_locked(f->q[1], NFENCE_QUEUE_FAULTED, &f->dropped);
	nfence_device_lost_locked(f->cmp, f->wdev,
				  DRM_NFENCE_DEVICE_ERROR_HANG, &f->dropped);
	mutex_unlock(&f->cmp->lock);

	KUNIT_EXPECT_EQ(test, f->q[0]->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, f->q[1]->hw.state, NFENCE_QUEUE_LOST);
	KUNIT_EXPECT_EQ(test, f->q[0]->hw.num_pending, 0);
	KUNIT_EXPECT_EQ(test, sched_count(&f->dropped), 2);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, f->q[2]->hw.num_pending, 1);
	KUNIT_EXPECT_FALSE(test, f->wdev2->error);
	nfence_submissions_drop(&f->dropped);

	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[2], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->pv[2][0], 1);
}

/*
 * A device records the first fault of any of its contexts (VA, reason,
 * context); each context keeps its own; the device stays out of error and
 * another device records nothing.
 */
static void sched_device_first_fault(struct kunit *test)
{
	struct sched_fix *f = test->priv;

	KUNIT_EXPECT_EQ(test, f->wdev->fault_reason, DRM_NFENCE_FAULT_NONE);
	mutex_lock(&f->cmp->lock);
	nfence_hwqueue_context_fault_locked(f->ctx[1], f->data_va + 8,
					    DRM_NFENCE_FAULT_BAD_COMMAND,
					    &f->dropped);
	nfence_hwqueue_context_fault_locked(f->ctx[0], f->data_va,
					    DRM_NFENCE_FAULT_PAGE, &f->dropped);
	mutex_unlock(&f->cmp->lock);
	nfence_submissions_drop(&f->dropped);

	KUNIT_EXPECT_EQ(test, f->wdev->fault_reason,
			DRM_NFENCE_FAULT_BAD_COMMAND);
	KUNIT_EXPECT_EQ(test, f->wdev->fault_va, f->data_va + 8);
	KUNIT_EXPECT_EQ(test, f->wdev->fault_context, f->ctx[1]->obj.handle);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_reason, DRM_NFENCE_FAULT_PAGE);
	KUNIT_EXPECT_EQ(test, f->ctx[0]->fault_va, f->data_va);
	KUNIT_EXPECT_FALSE(test, f->wdev->error);
	KUNIT_EXPECT_EQ(test, f->wdev2->fault_reason, DRM_NFENCE_FAULT_NONE);
	KUNIT_EXPECT_EQ(test, f->wdev2->fault_context, 0);
}

/* ---- User-mode queues: rings and doorbells ---- */

/* Give @q a ring over the fixture's ring buffer and control. */
static void sched_ring_attach(struct sched_fix *f, struct nfence_hwqueue *q,
			      struct nfence_cmp_ring *ring, u64 *status)
{
	memset(ring, 0, sizeof(*ring));
	ring->ring_va = f->ring_va;
	ring->control_va = f->control_va;
	ring->num_entries = SCHED_RING_ENTRIES;
	ring->status = status;
	mutex_lock(&f->cmp->lock);
	nfence_cmp_ring_attach_locked(f->cmp, &q->hw, ring);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(f->test, *status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
}

static void sched_ring_detach(struct sched_fix *f, struct nfence_hwqueue *q)
{
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_unbind_locked(f->cmp, &q->hw, 0);
	nfence_cmp_ring_detach_locked(f->cmp, &q->hw);
	mutex_unlock(&f->cmp->lock);
}

/* Entry @i of the ring: [@va, @end), @flags. */
static void sched_ring_put(struct sched_fix *f, u64 i, u64 va, u64 end,
			   u32 flags)
{
	struct drm_nfence_ring_entry *e = &f->ring[i % SCHED_RING_ENTRIES];

	e->commands_gpu_va = va;
	e->size = end - va;
	e->flags = flags;
}

/* What a ring taken from a doorbell does: the write index @v is seen. */
static void sched_ring_seen(struct sched_fix *f, struct nfence_hwqueue *q,
			    u64 v)
{
	mutex_lock(&f->cmp->lock);
	q->hw.ring->seen = v;
	if (q->hw.state == NFENCE_QUEUE_IDLE)
		q->hw.state = NFENCE_QUEUE_READY;
	mutex_unlock(&f->cmp->lock);
}

static void sched_ring_runs_entries(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	unsigned int ran, i;
	u64 status, start;

	sched_ring_attach(f, f->q[0], &ring, &status);
	/* More than once around the ring. */
	for (i = 0; i < SCHED_RING_ENTRIES + 3; i++) {
		start = sched_cursor(f);
		sched_write64(f, sched_data_va(f, 0), i + 1);
		sched_ring_put(f, i, start, sched_cursor(f), 0);
		sched_ring_seen(f, f->q[0], i + 1);
		KUNIT_ASSERT_EQ(test, sched_run(f, f->q[0], &ran),
				NFENCE_RUN_IDLE);
		KUNIT_EXPECT_EQ(test, f->data[0], i + 1);
		KUNIT_EXPECT_EQ(test, ring.read_index, i + 1);
		KUNIT_EXPECT_EQ(test, f->control->read_index, i + 1);
	}
	/* Entries rung together run in one turn, in order. */
	for (i = 0; i < 3; i++) {
		start = sched_cursor(f);
		sched_write64(f, sched_data_va(f, i + 1), ring.read_index + i);
		sched_ring_put(f, ring.read_index + i, start, sched_cursor(f),
			       0);
	}
	sched_ring_seen(f, f->q[0], ring.read_index + 3);
	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[0], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[3] - f->data[1], 2);
	KUNIT_EXPECT_EQ(test, f->control->read_index, ring.seen);
	/* No progress signal: the command buffers signal it themselves. */
	KUNIT_EXPECT_EQ(test, f->pv[0][0], 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->dropped));

	sched_ring_detach(f, f->q[0]);
	KUNIT_EXPECT_NULL(test, f->q[0]->hw.ring);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
}

enum sched_ring_bad {
	SCHED_RING_FLAGS,
	SCHED_RING_SIZE_ZERO,
	SCHED_RING_SIZE_MISALIGNED,
	SCHED_RING_SIZE_TOO_BIG,
	SCHED_RING_VA_MISALIGNED,
	SCHED_RING_UNMAPPED,
	SCHED_RING_CONTROL_UNMAPPED,
	SCHED_RING_COMMANDS_UNMAPPED,
};

static const char * const sched_ring_bad_names[] = {
	"flags", "size-zero", "size-misaligned", "size-too-big",
	"va-misaligned", "ring-unmapped", "control-unmapped",
	"commands-unmapped",
};

static void sched_ring_bad_desc(const enum sched_ring_bad *c, char *desc)
{
	strscpy(desc, sched_ring_bad_names[*c], KUNIT_PARAM_DESC_SIZE);
}

static const enum sched_ring_bad sched_ring_bad_cases[] = {
	SCHED_RING_FLAGS, SCHED_RING_SIZE_ZERO, SCHED_RING_SIZE_MISALIGNED,
	SCHED_RING_SIZE_TOO_BIG, SCHED_RING_VA_MISALIGNED, SCHED_RING_UNMAPPED,
	SCHED_RING_CONTROL_UNMAPPED, SCHED_RING_COMMANDS_UNMAPPED,
};

KUNIT_ARRAY_PARAM(sched_ring_bad, sched_ring_bad_cases, sched_ring_bad_desc);

/*
 * Every way a ring entry can be bad faults the context as a bad command
 * does, with the ring's status DISCONNECTED_ABORT and its entry never
 * handed to the driver.
 */
static void sched_ring_bad_entry(struct kunit *test)
{
	const enum sched_ring_bad *c = test->param_value;
	struct sched_fix *f = test->priv;
	u64 status, start, end, va, fault_va = f->ring_va;
	u32 flags = 0, reason = DRM_NFENCE_FAULT_BAD_RING;
	struct nfence_cmp_ring ring;
	unsigned int ran;

	start = sched_cursor(f);
	sched_nop(f);
	end = sched_cursor(f);
	va = start;
	sched_ring_attach(f, f->q[0], &ring, &status);
	switch (*c) {
	case SCHED_RING_FLAGS:
		flags = 1;
		break;
	case SCHED_RING_SIZE_ZERO:
		end = start;
		break;
	case SCHED_RING_SIZE_MISALIGNED:
		end = start + 4;
		break;
	case SCHED_RING_SIZE_TOO_BIG:
		end = start + DRM_NFENCE_MAX_SUBMIT_SIZE + 8;
		break;
	case SCHED_RING_VA_MISALIGNED:
		va = start + 4;
		end = va + 8;
		break;
	case SCHED_RING_UNMAPPED:
		ring.ring_va = SCHED_UNMAPPED;
		fault_va = SCHED_UNMAPPED;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	case SCHED_RING_CONTROL_UNMAPPED:
		ring.control_va = SCHED_UNMAPPED;
		fault_va = SCHED_UNMAPPED + 8;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	case SCHED_RING_COMMANDS_UNMAPPED:
		va = SCHED_UNMAPPED;
		end = va + 8;
		fault_va = va;
		reason = DRM_NFENCE_FAULT_PAGE;
		break;
	}
	f->ring[0].commands_gpu_va = va;
	f->ring[0].size = end - va;
	f->ring[0].flags = flags;
	sched_ring_seen(f, f->q[0], 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[0], &ran), NFENCE_RUN_FAULT);
	sched_expect_fault(test, f, fault_va, reason, 0);
	KUNIT_EXPECT_FALSE(test, ring.queued);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	sched_ring_detach(f, f->q[0]);
}

/* Fake physical doorbells for the ring and LRU tests. */
static void sched_doorbells(struct sched_fix *f, u32 model)
{
	unsigned int i;

	for (i = 0; i < SCHED_DOORBELLS; i++) {
		f->doorbells[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(f->test, f->doorbells[i]);
	}
	f->adapter->gpu.doorbell_pages = f->doorbells;
	f->adapter->gpu.cfg.num_doorbells = SCHED_DOORBELLS;
	f->adapter->gpu.cfg.doorbell_model = model;
}

/* A write index stored to a doorbell, as the CMP takes it. */
static void sched_ring(struct sched_fix *f, u32 slot, u64 v)
{
	WRITE_ONCE(*nfence_gpu_doorbell(&f->adapter->gpu, slot), v);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_take_locked(f->cmp, &f->q[0]->hw, slot,
					&f->dropped);
	mutex_unlock(&f->cmp->lock);
}

/* Dedicated doorbells, and queue 0's @ring connected to doorbell @slot. */
static void sched_ring_connected(struct sched_fix *f,
				 struct nfence_cmp_ring *ring, u64 *status,
				 u32 slot)
{
	sched_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	sched_ring_attach(f, f->q[0], ring, status);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, &f->q[0]->hw, slot);
	mutex_unlock(&f->cmp->lock);
}

static void sched_doorbell_take(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	unsigned int ran, i;
	u64 status, start;

	sched_ring_connected(f, &ring, &status, 1);
	KUNIT_EXPECT_EQ(test, status, (u64)DRM_NFENCE_DOORBELL_CONNECTED);
	KUNIT_EXPECT_EQ(test, ring.slot, 1);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 1);
	/* Bound, the doorbell starts at the ring's last write index. */
	KUNIT_EXPECT_EQ(test, *nfence_gpu_doorbell(&f->adapter->gpu, 1), 0);

	for (i = 0; i < 2; i++) {
		start = sched_cursor(f);
		sched_write64(f, sched_data_va(f, i), 7 + i);
		sched_ring_put(f, i, start, sched_cursor(f), 0);
	}
	sched_ring(f, 1, 2);
	KUNIT_EXPECT_EQ(test, ring.seen, 2);
	KUNIT_EXPECT_EQ(test, f->q[0]->hw.state, NFENCE_QUEUE_READY);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	KUNIT_EXPECT_EQ(test, sched_run(f, f->q[0], &ran), NFENCE_RUN_IDLE);
	KUNIT_EXPECT_EQ(test, f->data[1], 8);
	/* The same value again is no ring. */
	sched_ring(f, 1, 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	KUNIT_EXPECT_EQ(test, f->q[0]->hw.state, NFENCE_QUEUE_IDLE);
	/* As many entries ahead as the ring holds is fine; one more faults. */
	sched_ring(f, 1, 2 + SCHED_RING_ENTRIES);
	KUNIT_EXPECT_EQ(test, ring.seen, 2 + SCHED_RING_ENTRIES);
	sched_ring(f, 1, 3 + SCHED_RING_ENTRIES + SCHED_RING_ENTRIES);
	sched_expect_fault(test, f, f->ring_va, DRM_NFENCE_FAULT_BAD_RING, 0);
	KUNIT_EXPECT_EQ(test, status,
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	/* A stopped queue keeps its doorbell and takes no more rings. */
	KUNIT_EXPECT_EQ(test, ring.slot, 1);
	sched_ring(f, 1, 3);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 2);
	sched_ring_detach(f, f->q[0]);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 0);
	KUNIT_EXPECT_NULL(test, f->cmp->doorbells[1]);
}

static void sched_doorbell_behind(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_ring ring;
	u64 status;

	sched_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	sched_ring_attach(f, f->q[0], &ring, &status);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_bind_locked(f->cmp, &f->q[0]->hw, 0);
	ring.seen = 5;
	ring.read_index = 3;
	mutex_unlock(&f->cmp->lock);
	/* Behind the last write index taken, though ahead of the reads. */
	sched_ring(f, 0, 4);
	sched_expect_fault(test, f, f->ring_va, DRM_NFENCE_FAULT_BAD_RING, 0);
	sched_ring_detach(f, f->q[0]);
}

static void sched_doorbell_victim(struct kunit *test)
{
	static const u64 rung[] = { 30, 10, 20 };
	struct sched_fix *f = test->priv;
	struct nfence_cmp_ring ring[SCHED_QUEUES];
	u64 status[SCHED_QUEUES], now, wait;
	unsigned int i;

	sched_doorbells(f, DRM_NFENCE_DOORBELL_DEDICATED);
	mutex_lock(&f->cmp->lock);
	KUNIT_EXPECT_EQ(test, nfence_cmp_doorbell_free_slot_locked(f->cmp), 0);
	mutex_unlock(&f->cmp->lock);
	for (i = 0; i < SCHED_QUEUES; i++) {
		int slot;

		sched_ring_attach(f, f->q[i], &ring[i], &status[i]);
		mutex_lock(&f->cmp->lock);
		slot = nfence_cmp_doorbell_free_slot_locked(f->cmp);
		nfence_cmp_doorbell_bind_locked(f->cmp, &f->q[i]->hw, slot);
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
			    &f->q[1]->hw);
	/* A stopped queue's doorbell goes first, whenever it was rung. */
	f->q[2]->hw.state = NFENCE_QUEUE_FAULTED;
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait),
			    &f->q[2]->hw);
	f->q[2]->hw.state = NFENCE_QUEUE_IDLE;

	/* Connected just now and not rung since: kept through its grace. */
	ring[1].bound_ns = now;
	ring[1].rung_ns = now;
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait),
			    &f->q[2]->hw);
	/* Every ring in its grace: none, and how long until the first leaves. */
	for (i = 0; i < SCHED_QUEUES; i++) {
		ring[i].bound_ns = now - 1000 * i;
		ring[i].rung_ns = ring[i].bound_ns;
	}
	wait = 0;
	KUNIT_EXPECT_NULL(test,
			  nfence_cmp_doorbell_victim_locked(f->cmp, now, &wait));
	KUNIT_EXPECT_EQ(test, wait,
			NFENCE_DOORBELL_GRACE_NS - 1000 * (SCHED_QUEUES - 1));
	/* Past it, the least recently rung again. */
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp,
							      now + NFENCE_DOORBELL_GRACE_NS,
							      &wait),
			    &f->q[SCHED_QUEUES - 1]->hw);
	/* A ring since the connect ends the grace at once. */
	ring[0].rung_ns = now + 1;
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_cmp_doorbell_victim_locked(f->cmp, now + 2,
							      &wait),
			    &f->q[0]->hw);
	nfence_cmp_doorbell_unbind_locked(f->cmp, &f->q[1]->hw,
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, status[1],
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, nfence_cmp_doorbell_free_slot_locked(f->cmp), 1);
	/* An aborted status stays so. */
	status[0] = DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT;
	nfence_cmp_doorbell_unbind_locked(f->cmp, &f->q[0]->hw,
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	KUNIT_EXPECT_EQ(test, status[0],
			(u64)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 1);
	mutex_unlock(&f->cmp->lock);
	for (i = 0; i < SCHED_QUEUES; i++)
		sched_ring_detach(f, f->q[i]);
}

static void sched_doorbell_global(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_ring ring[2];
	u64 status[2];
	unsigned int i;

	sched_doorbells(f, DRM_NFENCE_DOORBELL_GLOBAL);
	/* One physical doorbell, shared: never full, never taken. */
	for (i = 0; i < 2; i++) {
		sched_ring_attach(f, f->q[i], &ring[i], &status[i]);
		mutex_lock(&f->cmp->lock);
		KUNIT_EXPECT_EQ(test,
				nfence_cmp_doorbell_free_slot_locked(f->cmp), 0);
		nfence_cmp_doorbell_bind_locked(f->cmp, &f->q[i]->hw, 0);
		mutex_unlock(&f->cmp->lock);
		KUNIT_EXPECT_EQ(test, ring[i].slot, 0);
	}
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 2);
	KUNIT_EXPECT_NULL(test, f->cmp->doorbells[0]);
	for (i = 0; i < 2; i++)
		sched_ring_detach(f, f->q[i]);
	KUNIT_EXPECT_EQ(test, f->cmp->num_connected, 0);
}

/* F1 and back, each counted once; a connect or a push asks for F0. */
static void sched_engine_f1(struct kunit *test)
{
	struct sched_fix *f = test->priv;
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
static void sched_ask_f1(struct sched_fix *f)
{
	struct nfence_cmp_engine *e = &f->cmp->engines[0];

	/* Idle before the ask; whatever comes next is at the ask or after. */
	mutex_lock(&f->cmp->lock);
	e->f1_asked_ns = ktime_get_ns() - 1;
	e->active_ns = e->f1_asked_ns - 1;
	mutex_unlock(&f->cmp->lock);
}

static bool sched_f1_due(struct sched_fix *f)
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
static void sched_engine_f1_due(struct kunit *test)
{
	struct sched_fix *f = test->priv;
	struct nfence_cmp_engine *e = &f->cmp->engines[0];
	struct nfence_cmp_ring ring;
	u64 status, start;

	sched_ring_connected(f, &ring, &status, 0);
	/* Not asked: not due. */
	KUNIT_EXPECT_FALSE(test, sched_f1_due(f));

	sched_ask_f1(f);
	KUNIT_EXPECT_TRUE(test, sched_f1_due(f));
	KUNIT_EXPECT_NE(test, e->f1_asked_ns, 0);

	/* A connect or a kernel-mode submission asks for F0. */
	mutex_lock(&f->cmp->lock);
	nfence_cmp_engine_f0_locked(f->cmp, 0);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, sched_f1_due(f));
	KUNIT_EXPECT_EQ(test, e->f1_asked_ns, 0);
	KUNIT_EXPECT_FALSE(test, sched_f1_due(f));

	/*
	 * A store of the same write index is no ring; a ring run to the
	 * end leaves the engine idle again, but active since the ask.
	 */
	sched_ask_f1(f);
	sched_ring(f, 0, 0);
	KUNIT_EXPECT_TRUE(test, sched_f1_due(f));
	start = sched_cursor(f);
	sched_nop(f);
	sched_ring_put(f, 0, start, sched_cursor(f), 0);
	sched_ring(f, 0, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->cmp->rings), 1);
	sched_run_idle(f, f->q[0]);
	KUNIT_EXPECT_FALSE(test, sched_f1_due(f));

	/* Its doorbell gone, the engine has nothing to put in F1. */
	sched_ask_f1(f);
	mutex_lock(&f->cmp->lock);
	nfence_cmp_doorbell_unbind_locked(f->cmp, &f->q[0]->hw,
					  DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	mutex_unlock(&f->cmp->lock);
	KUNIT_EXPECT_FALSE(test, sched_f1_due(f));
	KUNIT_EXPECT_FALSE(test, e->f1);
	sched_ring_detach(f, f->q[0]);
}

static struct kunit_case nfence_sched_cases[] = {
	KUNIT_CASE(sched_nop_runs_to_idle),
	KUNIT_CASE(sched_fence_wait_blocks),
	KUNIT_CASE(sched_fence_wait_parked_kicks),
	KUNIT_CASE(sched_fence_signal_memory),
	KUNIT_CASE(sched_fence_signal_memory_coalesced),
	KUNIT_CASE(sched_fence_signal_fence_at),
	KUNIT_CASE(sched_fence_signal_scan),
	KUNIT_CASE(sched_scan_marked),
	KUNIT_CASE(sched_fence_signal_always_signaled),
	KUNIT_CASE(sched_fence_wait_always_signaled),
	KUNIT_CASE_PARAM(sched_cross_error_race, sched_race_gen_params),
	KUNIT_CASE(sched_32bit_signal_carry),
	KUNIT_CASE(sched_32bit_signal_in_stride),
	KUNIT_CASE(sched_32bit_wait_serial),
	KUNIT_CASE(sched_write64_timestamp),
	KUNIT_CASE(sched_work_busy),
	KUNIT_CASE(sched_budget_yields),
	KUNIT_CASE(sched_command_straddles_mappings),
	KUNIT_CASE_PARAM(sched_fault_reasons, sched_fault_gen_params),
	KUNIT_CASE(sched_fault_stops_context),
	KUNIT_CASE(sched_misaligned_after_submit),
	KUNIT_CASE(sched_stop_locked),
	KUNIT_CASE(sched_device_lost),
	KUNIT_CASE(sched_device_first_fault),
	KUNIT_CASE(sched_ring_runs_entries),
	KUNIT_CASE_PARAM(sched_ring_bad_entry, sched_ring_bad_gen_params),
	KUNIT_CASE(sched_doorbell_take),
	KUNIT_CASE(sched_doorbell_behind),
	KUNIT_CASE(sched_doorbell_victim),
	KUNIT_CASE(sched_doorbell_global),
	KUNIT_CASE(sched_engine_f1),
	KUNIT_CASE(sched_engine_f1_due),
	{}
};

static struct kunit_suite nfence_sched_suite = {
	.name = "nfence_sched",
	.init = sched_init,
	.exit = sched_exit,
	.test_cases = nfence_sched_cases,
};

kunit_test_suite(nfence_sched_suite);
