// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the syncobj bridge (nfence_syncobj.c): which of the
 * events that can end a binding decides it, and that its point is attached
 * exactly once with that outcome, the waiter dequeued. The interleavings
 * here (an abort before or after the value is reached) are the ones a VM
 * test cannot order. For DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, with a dma_fence
 * of the test's own in the syncobj: a close or an abort before the
 * dma_fence signals drops the signal and removes the callback, one after
 * it still signals by the time the close returns; a dma_fence signaled
 * with an error signals the native fence all the same.
 *
 * Each test makes an adapter of its own and opens a DRM file on its render
 * node with mock_drm_getfile(); ioctls go through drm_ioctl_kernel(), CPU
 * signals through nfence_fence_signal(), and the bind work is waited for
 * with flush_workqueue() on the adapter's wait_wq.
 *
 * Copyright (C) 2026 The nfence authors
 */

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
#include <kunit/static_stub.h>
#endif
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/sizes.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_syncobj.h>
#include <drm/nfence_drm.h>

#include "../nfence_device.h"
#include "../nfence_drv.h"
#include "../nfence_fence.h"
#include "../nfence_signal.h"
#include "../nfence_syncobj.h"
#include "../nfence_waitlist.h"
#include "nfence_kunit_fence.h"

static const struct nfence_gpu_config sob_cfg = {
	.num_engines = 2,
	.vram_size = SZ_4M,
	.vram_visible_size = SZ_1M,
	.sysmem_size = SZ_16M,
	.native_fence = true,
	.tdr_timeout_ms = 2000,
};

/* Platform device ids: past the module's and the other suites' adapters. */
static u32 sob_next_index = 200;

/**
 * struct sob_fix - what a test runs on
 * @adapter: its adapter
 * @filp: the DRM file; NULL once closed
 * @wdev: a device of the file
 * @handle: a DEFAULT fence of @wdev at 0
 * @fence: the global fence (a reference)
 * @syncobj_handle: a syncobj of the file
 * @syncobj: the syncobj (a reference, so that it outlives the file)
 */
struct sob_fix {
	struct nfence_adapter *adapter;
	struct file *filp;
	u32 wdev;
	u32 handle;
	struct nfence_fence *fence;
	u32 syncobj_handle;
	struct drm_syncobj *syncobj;
};

static int sob_ioctl(struct sob_fix *f, drm_ioctl_t *func, void *args)
{
	return drm_ioctl_kernel(f->filp, func, args, DRM_RENDER_ALLOW);
}

static struct drm_file *sob_drm_file(struct sob_fix *f)
{
	return f->filp->private_data;
}

static int sob_bind(struct sob_fix *f, u64 value, u64 point)
{
	struct drm_nfence_syncobj_bind args = {
		.device = f->wdev,
		.fence = f->handle,
		.value = value,
		.syncobj = f->syncobj_handle,
		.point = point,
	};

	return sob_ioctl(f, nfence_syncobj_bind_ioctl, &args);
}

/* Close the file: postclose (and the bindings' end) runs now. */
static void sob_close(struct sob_fix *f)
{
	struct file *filp = f->filp;

	f->filp = NULL;
	__fput_sync(filp);
}

/*
 * The driver's fence at the syncobj's last point, which must be @point:
 * signaled, and its error (0 if none) in *@error. False if there is none.
 */
static bool sob_point(struct kunit *test, struct sob_fix *f, u64 point,
		      int *error)
{
	struct dma_fence *head = drm_syncobj_fence_get(f->syncobj);
	struct dma_fence *inner;
	bool ok = false;

	if (!head)
		return false;
	KUNIT_EXPECT_EQ(test, head->seqno, point);
	inner = dma_fence_chain_contained(head);
	if (inner && inner != head) {
		KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(inner));
		KUNIT_EXPECT_STREQ(test, inner->ops->get_driver_name(inner),
				   "nfence");
		*error = inner->error;
		ok = true;
	}
	dma_fence_put(head);
	return ok;
}

static int sob_init(struct kunit *test)
{
	struct drm_nfence_device_create dc = {};
	struct drm_nfence_fence_create fc = {};
	struct nfence_adapter *adapter;
	struct drm_syncobj *syncobj;
	struct sob_fix *f;
	u32 flags;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	adapter = nfence_adapter_create(sob_next_index++, &sob_cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, adapter);
	f->adapter = adapter;
	f->filp = mock_drm_getfile(adapter->drm.render, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->filp);

	KUNIT_ASSERT_EQ(test, sob_ioctl(f, nfence_device_create_ioctl, &dc), 0);
	f->wdev = dc.handle;
	fc.device = f->wdev;
	fc.type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	KUNIT_ASSERT_EQ(test, sob_ioctl(f, nfence_fence_create_ioctl, &fc), 0);
	f->handle = fc.handle;
	f->fence = nfence_fence_get(to_nfence_file(sob_drm_file(f)), f->handle,
				    f->wdev, &flags);
	KUNIT_ASSERT_NOT_NULL(test, f->fence);

	KUNIT_ASSERT_EQ(test, drm_syncobj_create(&syncobj, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, drm_syncobj_get_handle(sob_drm_file(f), syncobj,
						     &f->syncobj_handle), 0);
	f->syncobj = syncobj;	/* the creation's reference */
	return 0;
}

static void sob_exit(struct kunit *test)
{
	struct sob_fix *f = test->priv;

	if (!f || !f->adapter)
		return;
	if (f->filp)
		sob_close(f);
	nfence_fence_put(f->fence);
	if (f->syncobj)
		drm_syncobj_put(f->syncobj);
	nfence_adapter_destroy(f->adapter);
}

/* A pending binding: queued on the fence, MonitoredValue just below it. */
static void sob_expect_pending(struct kunit *test, struct sob_fix *f,
			       u64 value)
{
	u64 mv;

	KUNIT_EXPECT_EQ(test, nfence_waitlist_snapshot(&f->fence->waiters,
						       &f->fence->mv.value, &mv),
			1);
	KUNIT_EXPECT_EQ(test, mv, value - 1);
	KUNIT_EXPECT_NULL(test, drm_syncobj_fence_get(f->syncobj));
}

/* No waiter left: MonitoredValue back to U64_MAX. */
static void sob_expect_dequeued(struct kunit *test, struct sob_fix *f)
{
	u64 mv;

	KUNIT_EXPECT_EQ(test, nfence_waitlist_snapshot(&f->fence->waiters,
						       &f->fence->mv.value, &mv),
			0);
	KUNIT_EXPECT_EQ(test, mv, U64_MAX);
}

/* The value reached: the point appears without error, the waiter is gone. */
static void sob_reached(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	int error = 1;

	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 3), 0);
	sob_expect_pending(test, f, 5);
	nfence_fence_signal(f->fence, 4);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_EXPECT_NULL(test, drm_syncobj_fence_get(f->syncobj));
	nfence_fence_signal(f->fence, 5);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 3, &error));
	KUNIT_EXPECT_EQ(test, error, 0);
	sob_expect_dequeued(test, f);
}

/* A waiter whose release comes with the GPU writing a lower value. */
struct sob_lowering {
	struct nfence_waiter w;
	struct nfence_fence *fence;
};

static void sob_lowering_done(struct nfence_waiter *w)
{
	struct sob_lowering *l = container_of(w, struct sob_lowering, w);

	WRITE_ONCE(*nfence_kunit_value(&l->fence->cv), 1);
}

/*
 * The value reached, then a lower one written (a WRITE64) before the
 * binding's waiter, released by the same signal, decides: the point still
 * appears without error, not as an orphaned fence's (-ENOENT).
 */
static void sob_reached_then_lowered(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	/* Not on the stack: a failed assert leaves it for the exit's flush. */
	struct sob_lowering *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	int error = 1;

	KUNIT_ASSERT_NOT_NULL(test, l);
	l->fence = f->fence;
	l->w.value = 5;
	l->w.done = sob_lowering_done;
	RB_CLEAR_NODE(&l->w.node);
	/* First in the list: released before the binding's waiter. */
	KUNIT_ASSERT_FALSE(test, nfence_fence_add_waiter(f->fence, &l->w));
	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 3), 0);
	nfence_fence_signal(f->fence, 5);
	KUNIT_EXPECT_FALSE(test, l->w.queued);
	KUNIT_EXPECT_EQ(test, nfence_fence_read(f->fence), 1);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 3, &error));
	KUNIT_EXPECT_EQ(test, error, 0);
	sob_expect_dequeued(test, f);
}

/*
 * An abort (an unplug's) decides first: the point carries its error, the
 * waiter is dequeued by the bind work, and reaching the value afterwards
 * changes nothing.
 */
static void sob_abort_first(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	int error = 0;

	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 1), 0);
	sob_expect_pending(test, f, 5);
	nfence_file_bindings_abort(to_nfence_file(sob_drm_file(f)), -ENODEV);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 1, &error));
	KUNIT_EXPECT_EQ(test, error, -ENODEV);
	sob_expect_dequeued(test, f);
	nfence_fence_signal(f->fence, 5);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 1, &error));
	KUNIT_EXPECT_EQ(test, error, -ENODEV);
}

/*
 * The value reached first: a later abort finds the binding decided (or
 * gone) and the point keeps its success.
 */
static void sob_reached_then_abort(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	int error = 1;

	KUNIT_ASSERT_EQ(test, sob_bind(f, 2, 4), 0);
	nfence_fence_signal(f->fence, 2);
	nfence_file_bindings_abort(to_nfence_file(sob_drm_file(f)), -ENODEV);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 4, &error));
	KUNIT_EXPECT_EQ(test, error, 0);
	sob_expect_dequeued(test, f);
}

/*
 * The file closes with a binding pending: the point carries -ECANCELED by
 * the time postclose returns, for the syncobj's other holders.
 */
static void sob_close_cancels(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	int error = 0;

	KUNIT_ASSERT_EQ(test, sob_bind(f, 9, 2), 0);
	sob_expect_pending(test, f, 9);
	sob_close(f);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 2, &error));
	KUNIT_EXPECT_EQ(test, error, -ECANCELED);
	sob_expect_dequeued(test, f);
}

#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
/**
 * struct sob_race - a signal's decision stalled while the file aborts
 * @test: the test, for the stub in the signalling thread
 * @f: the fixture
 * @decided: completed by the stall, the binding decided
 * @signaled: completed when the signal returned
 * @aborted: set once the abort returned, ending the stall
 */
struct sob_race {
	struct kunit *test;
	struct sob_fix *f;
	struct completion decided;
	struct completion signaled;
	bool aborted;
};

static struct sob_race *sob_race_now;

/*
 * nfence_binding_decided()'s stub: under the fence's waitlist lock, with
 * the binding decided and not yet handed to the bind work. Stalls until
 * the abort returned without waiting for it, or for a second (an abort
 * that waits: a guest's spinlocks do not show that they are contended).
 */
static void sob_race_stall(struct nfence_binding *b)
{
	struct sob_race *r = sob_race_now;
	int i;

	complete(&r->decided);
	for (i = 0; i < 1000 && !READ_ONCE(r->aborted); i++)
		mdelay(1);
}

static int sob_race_signal(void *data)
{
	struct sob_race *r = data;

	/* Static stubs redirect only in the test's own task otherwise. */
	current->kunit_test = r->test;
	nfence_fence_signal(r->f->fence, 5);
	current->kunit_test = NULL;
	complete(&r->signaled);
	return 0;
}

/*
 * A signal decides a binding while its file ends its bindings (a close, or
 * an unplug): the abort returns only once that decision has reached the
 * bind work, so the close's drain that follows finds every binding handed
 * on, and no bind work of the freed file runs after it. The signal runs
 * on another CPU and stalls right after deciding, while this task aborts;
 * the point then carries the signal's success.
 */
static void sob_release_races_abort(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct task_struct *t;
	struct sob_race *r;
	bool attached;
	int error = 1;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs a second CPU to abort on");
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	r->f = f;
	init_completion(&r->decided);
	init_completion(&r->signaled);
	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 1), 0);

	t = kthread_create(sob_race_signal, r, "nfence-sob-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* The two on different CPUs, so that the abort runs during the stall. */
	migrate_disable();
	kthread_bind(t, cpumask_any_but(cpu_online_mask, smp_processor_id()));
	sob_race_now = r;
	kunit_activate_static_stub(test, nfence_binding_decided,
				   sob_race_stall);
	wake_up_process(t);
	wait_for_completion(&r->decided);
	nfence_file_bindings_abort(to_nfence_file(sob_drm_file(f)), -ENODEV);
	/* What the close's drain does next: the bind work, if handed any. */
	flush_workqueue(f->adapter->wait_wq);
	attached = sob_point(test, f, 1, &error);
	WRITE_ONCE(r->aborted, true);
	wait_for_completion(&r->signaled);
	migrate_enable();
	kunit_deactivate_static_stub(test, nfence_binding_decided);
	flush_workqueue(f->adapter->wait_wq);

	KUNIT_EXPECT_TRUE_MSG(test, attached,
			      "the abort returned before the decision reached the bind work");
	KUNIT_EXPECT_EQ(test, error, 0);
	sob_expect_dequeued(test, f);
}
#endif /* NFENCE_HAVE_KUNIT_STATIC_STUB */

/* A value already reached attaches before the ioctl returns; no waiter. */
static void sob_already_reached(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	int error = 1;

	nfence_fence_signal(f->fence, 7);
	KUNIT_ASSERT_EQ(test, sob_bind(f, 7, 6), 0);
	KUNIT_ASSERT_TRUE(test, sob_point(test, f, 6, &error));
	KUNIT_EXPECT_EQ(test, error, 0);
	sob_expect_dequeued(test, f);
	KUNIT_EXPECT_EQ(test, sob_bind(f, 7, 0), -EINVAL);
}

/* ---- DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL ---- */

static const char *sob_dma_name(struct dma_fence *fence)
{
	return "nfence-kunit";
}

static const struct dma_fence_ops sob_dma_ops = {
	.get_driver_name = sob_dma_name,
	.get_timeline_name = sob_dma_name,
};

/**
 * struct sob_dma - a dma_fence of the test's (freed by dma_fence_free())
 * @base: the fence, first: dma_fence_free() frees the whole struct
 * @lock: its lock
 */
struct sob_dma {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's lock */
};

/* A new unsignaled dma_fence, put in the binary syncobj. */
static struct dma_fence *sob_dma_fence(struct kunit *test, struct sob_fix *f)
{
	struct sob_dma *d = kzalloc(sizeof(*d), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, d);
	spin_lock_init(&d->lock);
	dma_fence_init(&d->base, &sob_dma_ops, &d->lock,
		       dma_fence_context_alloc(1), 1);
	drm_syncobj_replace_fence(f->syncobj, &d->base);
	return &d->base;
}

static int sob_signal(struct sob_fix *f, u64 value)
{
	struct drm_nfence_syncobj_signal args = {
		.device = f->wdev,
		.fence = f->handle,
		.value = value,
		.syncobj = f->syncobj_handle,
	};

	return sob_ioctl(f, nfence_syncobj_signal_ioctl, &args);
}

/* Pending until the dma_fence signals, then signaled by the work. */
static void sob_signal_pending(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct dma_fence *dma;

	dma = sob_dma_fence(test, f);
	KUNIT_ASSERT_EQ(test, sob_signal(f, 5), 0);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(f->fence, 1));
	KUNIT_EXPECT_FALSE(test, list_empty(&dma->cb_list));
	dma_fence_signal(dma);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(f->fence, 5));
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(f->fence, 6));
	dma_fence_put(dma);
}

/* A dma_fence signaled with an error signals the native fence too. */
static void sob_signal_error(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct dma_fence *dma;

	dma = sob_dma_fence(test, f);
	KUNIT_ASSERT_EQ(test, sob_signal(f, 3), 0);
	dma_fence_set_error(dma, -EIO);
	dma_fence_signal(dma);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(f->fence, 3));
	/* Already signaled with an error: at once. */
	KUNIT_ASSERT_EQ(test, sob_signal(f, 4), 0);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(f->fence, 4));
	dma_fence_put(dma);
}

/*
 * The file closes (or the adapter is unplugged: @abort) before the
 * dma_fence signals: the callback is removed, the fence never signaled.
 */
static void sob_signal_dropped(struct kunit *test, bool abort)
{
	struct sob_fix *f = test->priv;
	struct dma_fence *dma;

	dma = sob_dma_fence(test, f);
	KUNIT_ASSERT_EQ(test, sob_signal(f, 5), 0);
	if (abort)
		nfence_file_bindings_abort(to_nfence_file(sob_drm_file(f)),
					   -ENODEV);
	else
		sob_close(f);
	KUNIT_EXPECT_TRUE(test, list_empty(&dma->cb_list));
	dma_fence_signal(dma);
	flush_workqueue(f->adapter->wait_wq);
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(f->fence, 1));
	dma_fence_put(dma);
}

static void sob_signal_close_drops(struct kunit *test)
{
	sob_signal_dropped(test, false);
}

static void sob_signal_abort_drops(struct kunit *test)
{
	sob_signal_dropped(test, true);
}

/*
 * The dma_fence signals just before the close: whether its work ran before
 * the close or the close waits for it (which of the two is not under the
 * test's control), the fence is signaled by the time the close returns,
 * and nothing is left (postclose's WARN_ONs, kmemleak).
 */
static void sob_signal_then_close(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct dma_fence *dma;

	dma = sob_dma_fence(test, f);
	KUNIT_ASSERT_EQ(test, sob_signal(f, 8), 0);
	dma_fence_signal(dma);
	sob_close(f);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(f->fence, 8));
	dma_fence_put(dma);
}

/* A work item that holds an ordered queue until @go completes. */
struct sob_blocker {
	struct work_struct work;
	struct delayed_work release;
	struct completion go;
};

static void sob_blocker_work(struct work_struct *work)
{
	wait_for_completion(&container_of(work, struct sob_blocker,
					  work)->go);
}

static void sob_blocker_release(struct work_struct *work)
{
	complete(&container_of(to_delayed_work(work), struct sob_blocker,
			       release)->go);
}

/*
 * Hold @wq, an ordered queue, for 500 ms from now, behind a blocker that
 * lives as long as the test (its work items are not on the stack); the
 * test flushes it before it ends.
 */
static struct sob_blocker *sob_hold_queue(struct kunit *test,
					  struct workqueue_struct *wq)
{
	struct sob_blocker *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	init_completion(&b->go);
	INIT_WORK(&b->work, sob_blocker_work);
	INIT_DELAYED_WORK(&b->release, sob_blocker_release);
	queue_work(wq, &b->work);
	schedule_delayed_work(&b->release, msecs_to_jiffies(500));
	return b;
}

/*
 * A signal whose dma_fence signaled before the close, its work not run
 * yet, reaches the value of a pending binding: the close applies the
 * signal before it decides the bindings, so the point is signaled, not
 * cancelled. The signal's work waits on a queue of the test's behind a
 * blocker released 500 ms later, well into the close.
 */
static void sob_signal_reaches_binding_at_close(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct workqueue_struct *wq;
	struct sob_blocker *b;
	struct dma_fence *dma;
	int error = 1;

	wq = alloc_ordered_workqueue("nfence-kunit-held", 0);
	KUNIT_ASSERT_NOT_NULL(test, wq);
	dma = sob_dma_fence(test, f);
	KUNIT_ASSERT_EQ(test, sob_signal(f, 8), 0);
	KUNIT_ASSERT_EQ(test, sob_bind(f, 8, 2), 0);
	/* No assert from here on: the blocker is flushed at the end. */
	b = sob_hold_queue(test, wq);
	KUNIT_ASSERT_NOT_NULL(test, b);
	to_nfence_file(sob_drm_file(f))->dma_signals.wq = wq;
	dma_fence_signal(dma);
	KUNIT_EXPECT_FALSE(test, nfence_fence_reached(f->fence, 8));
	sob_close(f);
	KUNIT_EXPECT_TRUE(test, nfence_fence_reached(f->fence, 8));
	KUNIT_EXPECT_TRUE(test, sob_point(test, f, 2, &error));
	KUNIT_EXPECT_EQ(test, error, 0);
	flush_delayed_work(&b->release);
	destroy_workqueue(wq);
	dma_fence_put(dma);
}

/* The last point is @point, and the point before it @prev. */
static void sob_expect_last_two(struct kunit *test, struct sob_fix *f,
				u64 point, u64 prev)
{
	struct dma_fence *head = drm_syncobj_fence_get(f->syncobj);
	struct dma_fence_chain *chain = to_dma_fence_chain(head);

	/* No assert: a held queue's blocker must still be flushed. */
	KUNIT_EXPECT_NOT_NULL(test, chain);
	if (!chain) {
		dma_fence_put(head);
		return;
	}
	KUNIT_EXPECT_EQ(test, head->seqno, point);
	/* Set only when the point was added after a lower one. */
	KUNIT_EXPECT_EQ(test, chain->prev_seqno, prev);
	dma_fence_put(head);
}

/*
 * Two bindings pending when the file closes, bound in the other order
 * than their values: they are decided in value order, so the points of
 * the fence's values are added in order (5, then 6).
 */
static void sob_close_attaches_in_value_order(struct kunit *test)
{
	struct sob_fix *f = test->priv;

	KUNIT_ASSERT_EQ(test, sob_bind(f, 6, 6), 0);
	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 5), 0);
	sob_close(f);
	sob_expect_last_two(test, f, 6, 5);
}

/*
 * A binding whose value is reached at the call while an earlier one,
 * decided already, waits for the bind work (held here behind a blocker
 * released 500 ms later): the new point is attached after the earlier
 * one, and before the call returns.
 */
static void sob_reached_waits_for_decided(struct kunit *test)
{
	struct sob_fix *f = test->priv;
	struct workqueue_struct *wq;
	struct sob_blocker *b;

	wq = alloc_ordered_workqueue("nfence-kunit-held", 0);
	KUNIT_ASSERT_NOT_NULL(test, wq);
	KUNIT_ASSERT_EQ(test, sob_bind(f, 5, 5), 0);
	/* No assert from here on: the blocker is flushed at the end. */
	b = sob_hold_queue(test, wq);
	KUNIT_ASSERT_NOT_NULL(test, b);
	to_nfence_file(sob_drm_file(f))->bindings.wq = wq;
	nfence_fence_signal(f->fence, 10);
	KUNIT_EXPECT_EQ(test, sob_bind(f, 6, 6), 0);
	sob_expect_last_two(test, f, 6, 5);
	flush_delayed_work(&b->release);
	flush_workqueue(wq);
	/* The file's close (the suite's exit) may queue its work again. */
	to_nfence_file(sob_drm_file(f))->bindings.wq = f->adapter->wait_wq;
	destroy_workqueue(wq);
}

static struct kunit_case nfence_syncobj_cases[] = {
	KUNIT_CASE(sob_reached),
	KUNIT_CASE(sob_reached_then_lowered),
	KUNIT_CASE(sob_abort_first),
	KUNIT_CASE(sob_reached_then_abort),
	KUNIT_CASE(sob_close_cancels),
#ifdef NFENCE_HAVE_KUNIT_STATIC_STUB
	KUNIT_CASE(sob_release_races_abort),
#endif
	KUNIT_CASE(sob_already_reached),
	KUNIT_CASE(sob_signal_pending),
	KUNIT_CASE(sob_signal_error),
	KUNIT_CASE(sob_signal_close_drops),
	KUNIT_CASE(sob_signal_abort_drops),
	KUNIT_CASE(sob_signal_then_close),
	KUNIT_CASE(sob_signal_reaches_binding_at_close),
	KUNIT_CASE(sob_close_attaches_in_value_order),
	KUNIT_CASE(sob_reached_waits_for_decided),
	{}
};

static struct kunit_suite nfence_syncobj_suite = {
	.name = "nfence_syncobj",
	.init = sob_init,
	.exit = sob_exit,
	.test_cases = nfence_syncobj_cases,
};

kunit_test_suite(nfence_syncobj_suite);
