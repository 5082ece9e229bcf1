// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("The command processor: native GPU waits and "
		     "signals across engines and the interrupts they raise "
		     "(or not), CPU signals releasing GPU waits, legacy "
		     "SUBMIT_WAIT/SUBMIT_SIGNAL ordering, concurrent engines, "
		     "suspend, TDR and device loss, processes killed and "
		     "objects destroyed with work in flight, and lost-wakeup "
		     "stress loops.");

#define WATCHDOG_S	60
#define WAIT_MS		10000
#define QUIET_MS	200
#define STATE_MS	5000
#define GONE_MS		10000
#define MS		((uint64_t)1000000)
#define SYSTEM		NFENCE_SEGMENT_SYSTEM
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define TYPE_INTRA_GPU	DRM_NFENCE_FENCE_TYPE_INTRA_GPU
#define SHAREABLE	NFENCE_FENCE_SHAREABLE
#define NO_TDR		DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT
#define Q_NATIVE	DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE
#define ST_SUSPENDED	DRM_NFENCE_CONTEXT_STATE_SUSPENDED
#define ST_FAULTED	DRM_NFENCE_CONTEXT_STATE_FAULTED
#define ST_LOST		DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST
#define ALWAYS		NFENCE_ALWAYS_SIGNALED
#define INFINITE	DRM_NFENCE_TIMEOUT_INFINITE

/*
 * The stress loops run STRESS_MIN rounds whatever the time they take, then
 * on until STRESS_ITERATIONS or their time cap: a slow machine (a debug
 * kernel under TCG) runs fewer rounds, never too few to fail the check.
 */
#define STRESS_ITERATIONS	2000
#define STRESS_CAP_S		15
#define STRESS_MIN		500
#define STRESS_WAIT_MS		5000

static int fd = -1;
static int dbg = -1;
static struct drm_nfence_query_adapter adapter;
static uint64_t tdr_ms;

/* The debugfs files the subtests read (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_queues", "nfence_interrupts", "nfence_fences",
	"nfence_clients", "nfence_cmp",
};

static void require_engines(uint32_t n)
{
	igt_require_f(adapter.num_engines >= n, "needs %u engines\n", n);
}

/* A test device with a system-memory buffer for results. */
struct t {
	uint32_t dev;
	struct nfence_bo bo;
};

static void t_init(struct t *t)
{
	nfence_watchdog(WATCHDOG_S);
	t->dev = nfence_device_create(fd);
	nfence_bo_create(fd, t->dev, 64 * 1024, SYSTEM, 0, &t->bo);
}

static void t_fini(struct t *t)
{
	nfence_bo_destroy(&t->bo);
	nfence_device_destroy(fd, t->dev);
}

static volatile uint64_t *word(struct t *t, uint64_t off)
{
	return nfence_bo_u64(&t->bo, off);
}

static uint64_t va(struct t *t, uint64_t off)
{
	return t->bo.gpu_va + off;
}

static uint32_t fence(struct t *t, uint64_t initial,
		      struct drm_nfence_fence_mapping *m)
{
	return nfence_fence_create(fd, t->dev, TYPE_DEFAULT, 0, initial, m);
}

static void irq(struct nfence_interrupts *i)
{
	nfence_debugfs_interrupts(dbg, i);
}

static void log_irq(const char *when, const struct nfence_interrupts *i)
{
	igt_info("%s: signals %" PRIu64 " interrupts %" PRIu64
		 " suppressed %" PRIu64 " monitored %" PRIu64 " woken %" PRIu64
		 " spurious %" PRIu64 "\n", when, i->signals, i->interrupts,
		 i->suppressed, i->monitored, i->woken, i->spurious);
}

/* The queue's nfence_queues line reaches @state. */
static void assert_queue_state(const struct nfence_queue *q,
			       const char *state)
{
	struct nfence_debugfs_queue line;
	int ret;

	ret = nfence_debugfs_queue_wait_state(dbg, getpid(), q->device,
					      q->context, state, STATE_MS,
					      &line);
	igt_assert_f(ret == 0, "queue of context %u: state %s, expected %s "
		     "(%s)\n", q->context, ret == -ETIMEDOUT ? line.state :
		     "?", state, strerror(-ret));
}

/* Poll, without a CPU waiter, until the queue's progress reaches @v. */
static void poll_progress(const struct nfence_queue *q, uint64_t v)
{
	igt_assert_f(nfence_queue_poll(q, v, WAIT_MS),
		     "progress %" PRIu64 " after %u ms, expected %" PRIu64
		     "\n", *q->progress, WAIT_MS, v);
}

/*
 * A thread reading a fence's CPU mapping back to back until it is told to
 * stop: how many reads, how many value changes it saw (read by the test
 * meanwhile), and how many reads had halves that differ (the GPU only
 * writes k << 32 | k).
 */
struct torn_reader {
	pthread_t thread;
	const volatile uint64_t *v;
	uint64_t reads, changes, torn, torn_value;
	int started;
	int stop;
};

static void *torn_reader_fn(void *arg)
{
	struct torn_reader *r = arg;
	uint64_t v, prev = *r->v;

	__atomic_store_n(&r->started, 1, __ATOMIC_SEQ_CST);
	do {
		v = *r->v;
		r->reads++;
		if (v != prev)
			__atomic_fetch_add(&r->changes, 1, __ATOMIC_RELAXED);
		prev = v;
		if ((v >> 32) != (v & 0xffffffffu)) {
			r->torn++;
			r->torn_value = v;
		}
	} while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED));
	return NULL;
}

/*
 * 64-bit values are never torn: while the GPU signals a fence with values
 * whose two halves are equal and change together, a CPU thread reading
 * the fence's mapping back to back never sees halves that differ. At
 * least 8 rounds of signals, then more until the reads have seen the value
 * move 100 times, the proof that they raced the signals (under emulation
 * the reader may sit out whole rounds on a busy vCPU), at most 64.
 */
static void test_gpu_signal_never_torn(void)
{
	const uint64_t per = 4096, least = 8, most = 64, one = (1ull << 32) | 1;
	struct drm_nfence_fence_mapping m;
	struct torn_reader r = { 0 };
	struct drm_nfence_query_fence_caps caps;
	struct nfence_queue q;
	struct nfence_bo cmds;
	struct nfence_cs cs;
	bool ran = true;
	uint64_t k = 0;
	struct t t;

	/* A GPU without 64-bit atomics carries halves apart on purpose. */
	nfence_query_fence_caps(fd, &caps);
	igt_require_f(caps.value_bits == 64, "needs 64-bit fence values\n");
	t_init(&t);
	fence(&t, 0, &m);
	r.v = nfence_fence_map(fd, &m);
	nfence_queue_create(&q, fd, t.dev, 0, Q_NATIVE);
	/* A FENCE_SIGNAL is 32 bytes: a buffer of its own for @per. */
	nfence_bo_create(fd, t.dev, per * 32, SYSTEM, 0, &cmds);
	igt_assert_eq(nfence_thread_create(&r.thread, torn_reader_fn, &r), 0);
	while (!__atomic_load_n(&r.started, __ATOMIC_SEQ_CST))
		usleep(100);

	/* No assertion while the reader runs: it is stopped first. */
	for (uint64_t i = 0; i < most && ran &&
	     (i < least || __atomic_load_n(&r.changes, __ATOMIC_RELAXED) < 100);
	     i++) {
		nfence_cs_init(&cs, cmds.cpu, cmds.gpu_va, per * 32);
		for (uint64_t j = 0; j < per; j++) {
			k++;
			nfence_cs_signal_fence(&cs, &m, k * one);
		}
		ran = !__nfence_queue_submit(&q, &cs) &&
		      nfence_queue_poll(&q, i + 1, WAIT_MS);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	igt_assert_eq(nfence_thread_join(r.thread, WAIT_MS), 0);
	igt_assert_f(ran, "the GPU did not run the signals within %u ms\n",
		     WAIT_MS);
	igt_info("%" PRIu64 " reads, %" PRIu64 " changes seen, %" PRIu64
		 " torn\n", r.reads, r.changes, r.torn);
	igt_assert_f(r.torn == 0, "%" PRIu64 " reads with halves that differ, "
		     "the last %#" PRIx64 "\n", r.torn, r.torn_value);
	/* The reads raced the signals: they saw the value move many times. */
	igt_assert_lte_u64(100, r.changes);

	nfence_queue_destroy(&q);
	nfence_bo_destroy(&cmds);
	nfence_fence_unmap(r.v);
	t_fini(&t);
}

/* A thread doing one FENCE_WAIT. */
struct waiter {
	pthread_t thread;
	uint32_t device;
	uint32_t handle;
	uint64_t value;
	int64_t deadline;
	int result;
	int done;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->result = __nfence_fence_wait_one(fd, w->device, w->handle,
					    w->value, w->deadline);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void waiter_start(struct waiter *w, uint32_t device, uint32_t handle,
			 uint64_t value)
{
	memset(w, 0, sizeof(*w));
	w->device = device;
	w->handle = handle;
	w->value = value;
	w->deadline = nfence_deadline_ms(WAIT_MS);
	w->result = 1;
	igt_assert_eq(nfence_thread_create(&w->thread, waiter_fn, w), 0);
}

static int waiter_join(struct waiter *w)
{
	igt_assert_f(nfence_thread_join(w->thread, WAIT_MS + 2000) == 0,
		     "waiter did not return\n");
	return w->result;
}

/* Native GPU fences between engines */

static void test_native_engines_no_interrupt(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_interrupts before, after;
	struct nfence_queue a, b;
	struct nfence_cs cs;
	struct t t;

	require_engines(2);
	t_init(&t);
	fence(&t, 0, &m);
	nfence_queue_create(&a, fd, t.dev, 0, Q_NATIVE);
	nfence_queue_create(&b, fd, t.dev, 1, Q_NATIVE);

	irq(&before);
	log_irq("before", &before);
	/* B waits for the fence ... */
	nfence_queue_begin(&b, &cs);
	nfence_cs_wait_fence(&cs, &m, 1);
	nfence_cs_write64(&cs, va(&t, 0), 0xb);
	nfence_queue_submit(&b, &cs);
	assert_queue_state(&b, "wait-fence");
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq_u64(*b.progress, 0);

	/* ... that A signals, with the MonitoredValue check. */
	nfence_queue_begin(&a, &cs);
	nfence_cs_work(&cs, 20 * MS);
	nfence_cs_write64(&cs, va(&t, 8), 0xa);
	nfence_cs_signal_fence(&cs, &m, 1);
	nfence_queue_submit(&a, &cs);

	/* Watched through the mappings: no CPU waiter anywhere. */
	poll_progress(&a, 1);
	poll_progress(&b, 1);
	igt_assert_eq_u64(*word(&t, 0), 0xb);
	igt_assert_eq_u64(*word(&t, 8), 0xa);
	irq(&after);
	log_irq("after", &after);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	/* The fence signal and both progress fence signals. */
	igt_assert_lte_u64(before.signals + 3, after.signals);

	nfence_queue_destroy(&a);
	nfence_queue_destroy(&b);
	t_fini(&t);
}

static void test_interrupt_cpu_waiter_once(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_interrupts before, after;
	struct nfence_debugfs_fence line;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct waiter w;
	uint32_t h;
	struct t t;

	t_init(&t);
	h = fence(&t, 0, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);

	waiter_start(&w, t.dev, h, 10);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m, 1, STATE_MS, &line),
		      0);
	igt_assert_eq_u64(line.monitored, 9);

	irq(&before);
	log_irq("before", &before);
	/* 1..9 stay at or below MonitoredValue, 10 exceeds it. */
	nfence_queue_begin(&q, &cs);
	for (uint64_t v = 1; v <= 10; v++)
		nfence_cs_signal_fence(&cs, &m, v);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(waiter_join(&w), 0);
	/* The progress fence has no waiter: no interrupt for it. */
	poll_progress(&q, 1);
	irq(&after);
	log_irq("after", &after);
	igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
	igt_assert_lte_u64(before.woken + 1, after.woken);
	igt_assert_lte_u64(before.signals + 11, after.signals);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m, 0, STATE_MS, &line),
		      0);
	igt_assert_eq_u64(line.monitored, UINT64_MAX);
	igt_assert_eq_u64(line.current, 10);

	nfence_queue_destroy(&q);
	t_fini(&t);
}

static void test_interrupt_progress_fence(void)
{
	struct nfence_interrupts before, after;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct waiter w;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, Q_NATIVE);
	igt_assert_neq_u64(q.progress_mapping.monitored_value_gpu_va, 0);

	/* Progress signals nobody waits for raise no interrupt. */
	irq(&before);
	for (int i = 0; i < 20; i++) {
		nfence_queue_begin(&q, &cs);
		nfence_cs_write64(&cs, va(&t, 8 * i), i + 1);
		nfence_queue_submit(&q, &cs);
	}
	poll_progress(&q, 20);
	irq(&after);
	log_irq("no waiter", &after);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	igt_assert_lte_u64(before.signals + 20, after.signals);

	/* A CPU waiter on the progress fence gets exactly one. */
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait(&cs, va(&t, 0x400), 1);
	nfence_queue_submit(&q, &cs);
	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, va(&t, 0x408), 1);
	nfence_queue_submit(&q, &cs);
	waiter_start(&w, t.dev, q.progress_fence, 22);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &q.progress_mapping, 1,
						STATE_MS, NULL), 0);
	irq(&before);
	/* Release the queue by an engine write (another queue). */
	{
		struct nfence_queue r;

		nfence_queue_create(&r, fd, t.dev, 0, Q_NATIVE);
		nfence_queue_begin(&r, &cs);
		nfence_cs_write64(&cs, va(&t, 0x400), 1);
		nfence_queue_submit(&r, &cs);
		poll_progress(&r, 1);
		igt_assert_eq(waiter_join(&w), 0);
		irq(&after);
		log_irq("one waiter", &after);
		igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
		nfence_queue_destroy(&r);
	}
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * A queue's progress fence without NATIVE_PROGRESS_FENCE is a WDDM 2.x
 * monitored fence: no MonitoredValue in its mapping, and one monitored
 * fence interrupt per GPU signal whoever waits (the native counters do
 * not move); that interrupt is what wakes its CPU waiters.
 */
static void test_interrupt_monitored_progress(void)
{
	struct nfence_interrupts before, after;
	struct nfence_queue q, r;
	struct nfence_cs cs;
	struct waiter w;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	igt_assert_eq_u64(q.progress_mapping.monitored_value_gpu_va, 0);
	igt_assert_neq_u64(q.progress_mapping.current_value_gpu_va, 0);

	/* No waiter: an interrupt per signal all the same. */
	irq(&before);
	for (int i = 0; i < 20; i++) {
		nfence_queue_begin(&q, &cs);
		nfence_cs_write64(&cs, va(&t, 8 * i), i + 1);
		nfence_queue_submit(&q, &cs);
	}
	poll_progress(&q, 20);
	irq(&after);
	log_irq("monitored, no waiter", &after);
	igt_assert_eq_u64(after.monitored, before.monitored + 20);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	igt_assert_eq_u64(after.suppressed, before.suppressed);
	igt_assert_eq_u64(after.spurious, before.spurious);
	igt_assert_lte_u64(before.signals + 20, after.signals);

	/* A CPU waiter: the monitored interrupt wakes it. */
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait(&cs, va(&t, 0x400), 1);
	nfence_queue_submit(&q, &cs);
	waiter_start(&w, t.dev, q.progress_fence, 21);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &q.progress_mapping, 1,
						STATE_MS, NULL), 0);
	irq(&before);
	nfence_queue_create(&r, fd, t.dev, 0, 0);
	nfence_queue_begin(&r, &cs);
	nfence_cs_write64(&cs, va(&t, 0x400), 1);
	nfence_queue_submit(&r, &cs);
	poll_progress(&r, 1);
	igt_assert_eq(waiter_join(&w), 0);
	poll_progress(&q, 21);
	irq(&after);
	log_irq("monitored, one waiter", &after);
	/* r's progress signal and q's. */
	igt_assert_eq_u64(after.monitored, before.monitored + 2);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	igt_assert_lte_u64(before.woken + 1, after.woken);

	nfence_queue_destroy(&r);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/* GPUs without 64-bit atomics (the no_64bit_atomics module parameter) */

#define HALF	((uint64_t)UINT32_MAX / 2)

static void require_gpu32(void)
{
	struct drm_nfence_query_fence_caps caps;

	nfence_query_fence_caps(fd, &caps);
	igt_require_f(caps.value_bits == 32, "%u-bit fence values (load the "
		      "module with no_64bit_atomics=1)\n", caps.value_bits);
}

/* Tear down what a gpu32 subtest set up. */
static void gpu32_fini(struct t *t, struct nfence_queue *q, uint32_t h,
		       const volatile uint64_t *cv)
{
	nfence_queue_destroy(q);
	nfence_fence_unmap(cv);
	nfence_fence_destroy(fd, h);
	t_fini(t);
}

/* One FENCE_SIGNAL of @m to @value on @q, waited for through the mapping. */
static void gpu_signal(struct nfence_queue *q,
		       const struct drm_nfence_fence_mapping *m,
		       uint64_t value)
{
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_signal_fence(&cs, m, value);
	poll_progress(q, nfence_queue_submit(q, &cs));
}

/*
 * The GPU stores the low half within a high half, and raises no interrupt
 * without a waiter; crossing 2^32 takes one interrupt, with which the
 * driver stores the whole value, even with no waiter. Up and down, and a
 * waiter is released.
 */
static void test_gpu32_signal_carry(void)
{
	struct nfence_interrupts before, after;
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence line;
	const volatile uint64_t *cv;
	struct nfence_queue q;
	struct waiter w;
	uint32_t h;
	struct t t;

	require_gpu32();
	t_init(&t);
	h = fence(&t, 0xfffffff0ull - 100, &m);
	cv = nfence_fence_map(fd, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);

	irq(&before);
	for (uint64_t v = 0xfffffff0ull - 99; v <= 0xfffffff0ull; v++)
		gpu_signal(&q, &m, v);
	irq(&after);
	log_irq("within a high half", &after);
	igt_assert_eq_u64(*cv, 0xfffffff0ull);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	igt_assert_eq_u64(after.carries, before.carries);

	/* Across 2^32, nobody waiting: one interrupt, the value whole. */
	gpu_signal(&q, &m, 0x100000005ull);
	igt_assert_eq_u64(*cv, 0x100000005ull);
	irq(&after);
	log_irq("across 2^32", &after);
	igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
	igt_assert_eq_u64(after.carries, before.carries + 1);

	/*
	 * A queued waiter across the next 2^32 is released once the carry
	 * has stored the value (one interrupt: the carry and the
	 * MonitoredValue rule coincide).
	 */
	gpu_signal(&q, &m, 0x100000005ull + HALF);
	waiter_start(&w, t.dev, h, 0x200000000ull);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m, 1, STATE_MS, &line),
		      0);
	igt_assert_eq_u64(line.monitored, 0x1ffffffffull);
	irq(&before);
	gpu_signal(&q, &m, 0x200000003ull);
	igt_assert_eq(waiter_join(&w), 0);
	igt_assert_eq_u64(*cv, 0x200000003ull);
	irq(&after);
	igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
	igt_assert_eq_u64(after.carries, before.carries + 1);
	igt_assert_lte_u64(before.woken + 1, after.woken);

	/* Down across 2^32: a plain store, the high half follows. */
	irq(&before);
	gpu_signal(&q, &m, 0x1fffffff0ull);
	igt_assert_eq_u64(*cv, 0x1fffffff0ull);
	irq(&after);
	igt_assert_eq_u64(after.carries, before.carries + 1);

	gpu32_fini(&t, &q, h, cv);
}

/*
 * A GPU wait across 2^32 holds until the value gets there: the low halves
 * compare as serial numbers (0xfffffff0 is before 0x1_00000010, though its
 * low half is larger).
 */
static void test_gpu32_wait_across_wrap(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t done;
	uint32_t h;
	struct t t;

	require_gpu32();
	t_init(&t);
	h = fence(&t, 0xfffffff0ull, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);

	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &m, 0x100000010ull);
	nfence_cs_write64(&cs, va(&t, 0), 0xb);
	done = nfence_queue_submit(&q, &cs);
	assert_queue_state(&q, "wait-fence");
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);

	nfence_fence_signal(fd, t.dev, h, 0x10000000full);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	assert_queue_state(&q, "wait-fence");

	nfence_fence_signal(fd, t.dev, h, 0x100000010ull);
	poll_progress(&q, done);
	igt_assert_eq_u64(*word(&t, 0), 0xb);

	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
	t_fini(&t);
}

static int submit_progress(struct nfence_queue *q, uint64_t progress)
{
	struct drm_nfence_submit s = {
		.device = q->device,
		.hwqueue = q->handle,
		.progress_fence_value = progress,
	};
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_nop(&cs);
	s.commands_gpu_va = cs.gpu_va;
	s.size = cs.len;
	return __nfence_submit(fd, &s);
}

/*
 * Submission values more than UINT_MAX/2 above the fence's value are
 * refused (SUBMIT's progress value, SUBMIT_WAIT and SUBMIT_SIGNAL values),
 * the window moves with the fence, and the progress fence crosses 2^32
 * through the carry.
 */
static void test_gpu32_submit_window(void)
{
	struct nfence_interrupts before, after;
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *cv;
	struct nfence_queue q;
	uint32_t h;
	struct t t;

	require_gpu32();
	t_init(&t);
	h = fence(&t, 10, &m);
	cv = nfence_fence_map(fd, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);

	igt_assert_eq(__nfence_queue_submit_signal(&q, h, 10 + HALF + 1),
		      -EINVAL);
	igt_assert_eq(__nfence_queue_submit_wait(&q, h, 10 + HALF + 1),
		      -EINVAL);
	igt_assert_eq(__nfence_queue_submit_wait(&q, h, UINT64_MAX), -EINVAL);
	igt_assert_eq(__nfence_queue_submit_signal(&q, h, 10 + HALF), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, h, 10 + HALF,
					      nfence_deadline_ms(WAIT_MS)), 0);
	/* At or below the value is always fine. */
	igt_assert_eq(__nfence_queue_submit_wait(&q, h, 3), 0);
	igt_assert_eq(__nfence_queue_submit_signal(&q, h, 10 + 2 * HALF), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, h, 10 + 2 * HALF,
					      nfence_deadline_ms(WAIT_MS)), 0);
	igt_assert_eq_u64(*cv, 10 + 2 * HALF);

	/* The progress fence is at 0 here (SUBMIT_* do not signal it). */
	igt_assert_eq_u64(*q.progress, 0);
	igt_assert_eq(submit_progress(&q, HALF + 1), -EINVAL);
	igt_assert_eq(submit_progress(&q, HALF), 0);
	poll_progress(&q, HALF);
	igt_assert_eq(submit_progress(&q, 2 * HALF + 1), -EINVAL);
	igt_assert_eq(submit_progress(&q, 2 * HALF), 0);
	poll_progress(&q, 2 * HALF);

	irq(&before);
	igt_assert_eq(submit_progress(&q, 0x100000005ull), 0);
	poll_progress(&q, 0x100000005ull);
	igt_assert_eq_u64(*q.progress, 0x100000005ull);
	irq(&after);
	igt_assert_eq_u64(after.carries, before.carries + 1);

	gpu32_fini(&t, &q, h, cv);
}

static void test_intra_gpu_fence(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue a, b;
	struct nfence_cs cs;
	struct t t;

	require_engines(2);
	t_init(&t);
	nfence_fence_create(fd, t.dev, TYPE_INTRA_GPU, 0, 0, &m);
	nfence_queue_create(&a, fd, t.dev, 0, 0);
	nfence_queue_create(&b, fd, t.dev, 1, 0);
	nfence_queue_begin(&b, &cs);
	nfence_cs_fence_wait(&cs, m.current_value_gpu_va, 1);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&b, &cs);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	/* No CPU can wait on it: no MonitoredValue check (mv_va 0). */
	nfence_queue_begin(&a, &cs);
	nfence_cs_work(&cs, 10 * MS);
	nfence_cs_fence_signal(&cs, m.current_value_gpu_va, 0, 1);
	nfence_queue_submit(&a, &cs);
	nfence_queue_sync(&b);
	igt_assert_eq_u64(*word(&t, 0), 1);
	nfence_queue_destroy(&a);
	nfence_queue_destroy(&b);
	t_fini(&t);
}

static void test_gpu_write_releases_wait(void)
{
	struct nfence_queue a, b;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_queue_create(&a, fd, t.dev, 0, 0);
	nfence_queue_create(&b, fd, t.dev, adapter.num_engines - 1, 0);
	/* B waits for a plain memory word ... */
	nfence_queue_begin(&b, &cs);
	nfence_cs_fence_wait(&cs, va(&t, 0x100), 3);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&b, &cs);
	assert_queue_state(&b, "wait-fence");
	/* ... that an engine writes, too low first. */
	nfence_queue_begin(&a, &cs);
	nfence_cs_write64(&cs, va(&t, 0x100), 2);
	nfence_queue_submit(&a, &cs);
	nfence_queue_sync(&a);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq_u64(*b.progress, 0);
	nfence_queue_begin(&a, &cs);
	nfence_cs_write64(&cs, va(&t, 0x100), 3);
	nfence_queue_submit(&a, &cs);
	nfence_queue_sync(&b);
	igt_assert_eq_u64(*word(&t, 0), 1);
	nfence_queue_destroy(&a);
	nfence_queue_destroy(&b);
	t_fini(&t);
}

static void test_cpu_signal_releases_gpu_wait(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t h;
	struct t t;

	t_init(&t);
	h = fence(&t, 0, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &m, 5);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);
	assert_queue_state(&q, "wait-fence");

	/* A lower value does not release it. */
	nfence_fence_signal(fd, t.dev, h, 3);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq_u64(*q.progress, 0);
	assert_queue_state(&q, "wait-fence");

	nfence_fence_signal(fd, t.dev, h, 5);
	igt_assert_eq(nfence_queue_wait(&q, 1, WAIT_MS), 0);
	igt_assert_eq_u64(*word(&t, 0), 1);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/* Legacy SUBMIT_WAIT / SUBMIT_SIGNAL */

static void test_legacy_wait_holds_queue(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence line;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t h;
	struct t t;

	t_init(&t);
	h = fence(&t, 0, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	igt_assert_eq(__nfence_queue_submit_wait(&q, h, 3), 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);

	assert_queue_state(&q, "wait-cpu");
	/* The kernel waits as a CPU waiter: MonitoredValue 2. */
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m, 1, STATE_MS, &line),
		      0);
	igt_assert_eq_u64(line.monitored, 2);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq_u64(*q.progress, 0);

	nfence_fence_signal(fd, t.dev, h, 2);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	assert_queue_state(&q, "wait-cpu");

	nfence_fence_signal(fd, t.dev, h, 3);
	igt_assert_eq(nfence_queue_wait(&q, 1, WAIT_MS), 0);
	igt_assert_eq_u64(*word(&t, 0), 1);
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m, 0, STATE_MS, &line),
		      0);
	igt_assert_eq_u64(line.monitored, UINT64_MAX);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

static void test_legacy_signal_after_work(void)
{
	struct drm_nfence_fence_mapping pm, gm;
	const volatile uint64_t *g;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t park, h;
	struct t t;

	t_init(&t);
	park = fence(&t, 0, &pm);
	h = fence(&t, 0, &gm);
	g = nfence_fence_map(fd, &gm);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &pm, 1);
	nfence_cs_work(&cs, 50 * MS);
	nfence_cs_write64(&cs, va(&t, 0), 7);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(__nfence_queue_submit_signal(&q, h, 1), 0);

	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*g, 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, h, 1, 0), -ETIME);

	nfence_fence_signal(fd, t.dev, park, 1);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, h, 1,
					      nfence_deadline_ms(WAIT_MS)), 0);
	/* Signaled only after the earlier work completed. */
	igt_assert_eq_u64(*word(&t, 0), 7);
	igt_assert_lte_u64(1, *q.progress);
	igt_assert_eq_u64(*g, 1);
	nfence_fence_unmap(g);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * A WORK command keeps its engine busy until a deadline, and the CMP
 * sleeps on an hrtimer until then instead of polling the engine: while a
 * 1 s WORK runs, the adapter's CMP thread wakes at most twice in 700 ms
 * (its deadline, if the guest's clock ran ahead of the sleeps), where a
 * thread that looked at the busy engine every millisecond would wake
 * hundreds of times.
 */
static void test_work_no_polling(void)
{
	uint64_t w0, w1, p0, p1;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_work(&cs, 1000 * MS);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);
	/* The submission's kick and the pass that started the WORK are over. */
	usleep(100 * 1000);
	w0 = nfence_debugfs_get_u64(dbg, "nfence_cmp", "wakeups");
	p0 = nfence_debugfs_get_u64(dbg, "nfence_cmp", "passes");
	usleep(700 * 1000);
	w1 = nfence_debugfs_get_u64(dbg, "nfence_cmp", "wakeups");
	p1 = nfence_debugfs_get_u64(dbg, "nfence_cmp", "passes");
	igt_info("%" PRIu64 " wakeups and %" PRIu64 " passes in 700 ms of "
		 "a 1 s WORK\n", w1 - w0, p1 - p0);
	igt_assert_lte_u64(w1 - w0, 2);

	nfence_queue_sync(&q);
	igt_assert_eq_u64(*word(&t, 0), 1);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

static void test_legacy_signal_releases_gpu(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue a, b;
	struct nfence_cs cs;
	uint32_t h;
	struct t t;

	t_init(&t);
	h = fence(&t, 0, &m);
	nfence_queue_create(&a, fd, t.dev, 0, 0);
	nfence_queue_create(&b, fd, t.dev, adapter.num_engines - 1, 0);
	/* A native GPU wait released by a legacy (kernel worker) signal. */
	nfence_queue_begin(&b, &cs);
	nfence_cs_wait_fence(&cs, &m, 4);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&b, &cs);
	nfence_queue_begin(&a, &cs);
	nfence_cs_write64(&cs, va(&t, 8), 1);
	nfence_queue_submit(&a, &cs);
	igt_assert_eq(__nfence_queue_submit_signal(&a, h, 4), 0);
	nfence_queue_sync(&b);
	igt_assert_eq_u64(*word(&t, 0), 1);
	igt_assert_eq_u64(*word(&t, 8), 1);
	nfence_queue_destroy(&a);
	nfence_queue_destroy(&b);
	t_fini(&t);
}

/* Engines and suspend */

static void test_engines_concurrent(void)
{
	const uint64_t work = 300 * MS;
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q[2];
	uint64_t s[2], e[2], min_ticks;
	struct nfence_cs cs;
	uint32_t h;
	struct t t;

	require_engines(2);
	t_init(&t);
	h = fence(&t, 0, &m);
	/* Both parked on one fence, then released at once. */
	for (int i = 0; i < 2; i++) {
		nfence_queue_create(&q[i], fd, t.dev, i, 0);
		nfence_queue_begin(&q[i], &cs);
		nfence_cs_wait_fence(&cs, &m, 1);
		nfence_cs_timestamp(&cs, va(&t, 16 * i));
		nfence_cs_work(&cs, work);
		nfence_cs_timestamp(&cs, va(&t, 16 * i + 8));
		nfence_queue_submit(&q[i], &cs);
	}
	nfence_fence_signal(fd, t.dev, h, 1);
	for (int i = 0; i < 2; i++) {
		nfence_queue_sync(&q[i]);
		s[i] = *word(&t, 16 * i);
		e[i] = *word(&t, 16 * i + 8);
		igt_info("engine %d: %" PRIu64 " .. %" PRIu64 "\n", i, s[i],
			 e[i]);
	}
	min_ticks = work * adapter.timestamp_frequency / 1000000000ull;
	for (int i = 0; i < 2; i++)
		igt_assert_lte_u64(s[i] + min_ticks, e[i]);
	/* The intervals overlap. */
	igt_assert_f(s[0] < e[1] && s[1] < e[0],
		     "[%" PRIu64 ", %" PRIu64 "] and [%" PRIu64 ", %" PRIu64
		     "] do not overlap\n", s[0], e[0], s[1], e[1]);
	for (int i = 0; i < 2; i++)
		nfence_queue_destroy(&q[i]);
	t_fini(&t);
}

#define PRIO_ROUNDS	8

/*
 * Two queues of contexts of priorities @prio[0] and @prio[1] on engine 0,
 * both parked on one fence, each with PRIO_ROUNDS WORK commands, each
 * WORK preceded by a TIMESTAMP of its start, released at once. A WORK
 * keeps the engine for the rest of the turn, so each turn runs one. Returns
 * how many of queue 0's WORKs started before queue 1's last one did.
 */
static unsigned int priority_race(const int32_t prio[2])
{
	const uint64_t work = 2 * MS;
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q[2];
	unsigned int before = 0;
	struct nfence_cs cs;
	uint64_t last;
	uint32_t h;
	struct t t;

	t_init(&t);
	h = fence(&t, 0, &m);
	for (int i = 0; i < 2; i++) {
		nfence_queue_create(&q[i], fd, t.dev, 0, 0);
		nfence_context_set_priority(fd, t.dev, q[i].context, prio[i]);
		nfence_queue_begin(&q[i], &cs);
		nfence_cs_wait_fence(&cs, &m, 1);
		for (int r = 0; r < PRIO_ROUNDS; r++) {
			nfence_cs_timestamp(&cs, va(&t, 8 * (PRIO_ROUNDS * i + r)));
			nfence_cs_work(&cs, work);
		}
		nfence_queue_submit(&q[i], &cs);
	}
	nfence_fence_signal(fd, t.dev, h, 1);
	for (int i = 0; i < 2; i++)
		nfence_queue_sync(&q[i]);
	last = *word(&t, 8 * (2 * PRIO_ROUNDS - 1));
	for (int r = 0; r < PRIO_ROUNDS; r++)
		before += *word(&t, 8 * r) < last;
	igt_info("priorities %d and %d: %u of queue 0's %u WORKs started "
		 "before queue 1's last\n", prio[0], prio[1], before,
		 PRIO_ROUNDS);
	for (int i = 0; i < 2; i++)
		nfence_queue_destroy(&q[i]);
	t_fini(&t);
	return before;
}

static void test_priority_turns(void)
{
	static const int32_t equal[2] = { 0, 0 };
	static const int32_t high[2] = { 0, DRM_NFENCE_CONTEXT_PRIORITY_MAX };
	static const int32_t low[2] = { DRM_NFENCE_CONTEXT_PRIORITY_MIN, 0 };

	/* Equal priorities take turns: queue 0 runs 7 or 8 before 1's last. */
	igt_assert_lte(PRIO_ROUNDS - 1, priority_race(equal));
	/*
	 * Priority 7 against 0: queue 1 keeps the engine for its 8 WORKs in
	 * a row, so queue 0 starts at most the one it may have started
	 * first.
	 */
	igt_assert_lte(priority_race(high), 1);
	/*
	 * Priority -7 against 0: queue 0 yields until 8 turns of queue 1 have
	 * run since its last, so it starts at most the one WORK it may have
	 * started first before queue 1's eighth.
	 */
	igt_assert_lte(priority_race(low), 1);
}

static void test_priority_alone(void)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	nfence_context_set_priority(fd, t.dev, q.context,
				    DRM_NFENCE_CONTEXT_PRIORITY_MIN);
	/*
	 * With no other queue on the engine a queue of the lowest priority
	 * does not wait for turns that never come: each WORK takes a turn of
	 * its own, and all of them run.
	 */
	for (int i = 0; i < PRIO_ROUNDS; i++) {
		nfence_queue_begin(&q, &cs);
		nfence_cs_work(&cs, MS);
		nfence_cs_write64(&cs, va(&t, 8 * i), i + 1);
		nfence_queue_submit(&q, &cs);
	}
	igt_assert_eq(nfence_queue_wait(&q, PRIO_ROUNDS, WAIT_MS), 0);
	for (int i = 0; i < PRIO_ROUNDS; i++)
		igt_assert_eq_u64(*word(&t, 8 * i), i + 1);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

static void test_suspend_holds_work(void)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	igt_assert_eq_u32(nfence_context_control(fd, t.dev, q.context,
						 DRM_NFENCE_CONTEXT_OP_SUSPEND,
						 NULL), ST_SUSPENDED);
	/* Submissions are accepted, not run. */
	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);
	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, va(&t, 8), 2);
	nfence_queue_submit(&q, &cs);
	assert_queue_state(&q, "suspended");
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*q.progress, 0);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq(nfence_queue_wait(&q, 1, 0), -ETIME);

	igt_assert_eq_u32(nfence_context_control(fd, t.dev, q.context,
						 DRM_NFENCE_CONTEXT_OP_RESUME,
						 NULL), 0);
	igt_assert_eq(nfence_queue_wait(&q, 2, WAIT_MS), 0);
	igt_assert_eq_u64(*word(&t, 0), 1);
	igt_assert_eq_u64(*word(&t, 8), 2);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * Submit TIMESTAMP, WORK, TIMESTAMP, WRITE64 on @q and suspend its context
 * once the WORK has started. Returns whether the suspend came before the
 * second TIMESTAMP ran (seen in memory: the suspend takes the CMP's lock),
 * which is what the subtest needs; a WORK that ended first, on a slow
 * machine, says nothing about the driver.
 */
static bool suspend_during_work(struct t *t, struct nfence_queue *q,
				uint64_t work)
{
	struct nfence_cs cs;
	uint64_t start;

	nfence_queue_begin(q, &cs);
	nfence_cs_timestamp(&cs, va(t, 0));
	nfence_cs_work(&cs, work);
	nfence_cs_timestamp(&cs, va(t, 8));
	nfence_cs_write64(&cs, va(t, 16), 1);
	nfence_queue_submit(q, &cs);

	start = nfence_monotonic_ns();
	while (!*word(t, 0)) {
		igt_assert_f(nfence_monotonic_ns() - start < WAIT_MS * MS,
			     "the queue did not start\n");
		usleep(500);
	}
	nfence_context_control(fd, t->dev, q->context,
			       DRM_NFENCE_CONTEXT_OP_SUSPEND, NULL);
	return !*word(t, 8);
}

static void test_suspend_command_boundary(void)
{
	struct drm_nfence_query_timestamp resume;
	struct nfence_queue q, r;
	uint64_t work = 800 * MS, v;
	struct nfence_cs cs;
	int attempt;
	struct t t;

	t_init(&t);
	/* Another context on the same engine, never suspended. */
	nfence_queue_create(&r, fd, t.dev, 0, 0);
	/* No TDR: the WORK may grow past tdr_timeout_ms. */
	for (attempt = 0; attempt < 4; attempt++, work *= 2) {
		nfence_queue_create(&q, fd, t.dev, 0, NO_TDR);
		if (suspend_during_work(&t, &q, work))
			break;
		igt_info("the %" PRIu64 " ms WORK ended before the suspend: "
			 "again with one twice as long\n", work / MS);
		nfence_context_control(fd, t.dev, q.context,
				       DRM_NFENCE_CONTEXT_OP_RESUME, NULL);
		igt_assert_eq(nfence_queue_wait(&q, 1, WAIT_MS), 0);
		nfence_queue_destroy(&q);
		for (int i = 0; i < 3; i++)
			*word(&t, 8 * i) = 0;
	}
	igt_assert_f(attempt < 4, "could not suspend a context during a "
		     "WORK in %d attempts\n", attempt);

	/*
	 * The WORK keeps the engine: r's TIMESTAMP runs once it is over, so
	 * the WORK ran its whole length although its context was suspended.
	 */
	nfence_queue_begin(&r, &cs);
	nfence_cs_timestamp(&cs, va(&t, 24));
	v = nfence_queue_submit(&r, &cs);
	igt_assert_eq(nfence_queue_wait(&r, v, work / MS + WAIT_MS), 0);
	igt_info("WORK from %" PRIu64 ", engine free at %" PRIu64 "\n",
		 (uint64_t)*word(&t, 0), (uint64_t)*word(&t, 24));
	igt_assert_lte_u64(*word(&t, 0) + work * adapter.timestamp_frequency /
			   1000000000ull, *word(&t, 24));
	/*
	 * Once more on r: a whole later pass, in which q had its turn on the
	 * free engine, is over. The commands after the WORK have not run.
	 */
	nfence_queue_begin(&r, &cs);
	nfence_cs_nop(&cs);
	v = nfence_queue_submit(&r, &cs);
	igt_assert_eq(nfence_queue_wait(&r, v, WAIT_MS), 0);
	assert_queue_state(&q, "suspended");
	igt_assert_eq_u64(*word(&t, 8), 0);
	igt_assert_eq_u64(*word(&t, 16), 0);
	igt_assert_eq_u64(*q.progress, 0);

	nfence_query_timestamp(fd, &resume);
	nfence_context_control(fd, t.dev, q.context,
			       DRM_NFENCE_CONTEXT_OP_RESUME, NULL);
	igt_assert_eq(nfence_queue_wait(&q, 1, WAIT_MS), 0);
	igt_assert_eq_u64(*word(&t, 16), 1);
	/*
	 * The second TIMESTAMP ran after the resume: the GPU clock read
	 * before the RESUME call is not later than it.
	 */
	igt_info("next command at %" PRIu64 ", resumed at %" PRIu64 "\n",
		 (uint64_t)*word(&t, 8), (uint64_t)resume.gpu_timestamp);
	igt_assert_lte_u64(resume.gpu_timestamp, *word(&t, 8));
	nfence_queue_destroy(&q);
	nfence_queue_destroy(&r);
	t_fini(&t);
}

/* TDR */

static void require_tdr(void)
{
	igt_require_f(tdr_ms > 0 && tdr_ms <= 10000,
		      "tdr_timeout_ms is %" PRIu64 " (0: off; above 10 s: too "
		      "slow to test)\n", tdr_ms);
}

/* Some work on @q completes and the context is fine. */
static void assert_runs(struct nfence_queue *q, struct nfence_bo *bo,
			uint64_t off)
{
	struct nfence_cs cs;
	uint64_t v;

	nfence_queue_begin(q, &cs);
	nfence_cs_work(&cs, 10 * MS);
	nfence_cs_write64(&cs, bo->gpu_va + off, 0x600d);
	v = nfence_queue_submit(q, &cs);
	igt_assert_eq(nfence_queue_wait(q, v, WAIT_MS), 0);
	igt_assert_eq_u64(*q->progress, v);
	igt_assert_eq_u64(*nfence_bo_u64(bo, off), 0x600d);
	igt_assert_eq_u32(nfence_queue_state(q, NULL), 0);
}

static void test_hang_device_lost(void)
{
	struct drm_nfence_hwqueue_create qc = { 0 };
	struct drm_nfence_fence_mapping fm;
	struct nfence_queue lost, lost2, other, other_e0, far;
	struct nfence_bo obo, fbo;
	struct nfence_cs cs;
	uint32_t keep_dev, far_dev, f, kf;
	uint64_t start, elapsed;
	int fd1;
	struct t t;

	require_tdr();
	require_engines(2);
	fd1 = __nfence_open_adapter(1);
	igt_require_f(fd1 >= 0, "needs a second adapter\n");
	t_init(&t);
	nfence_watchdog(WATCHDOG_S + tdr_ms / 1000);
	keep_dev = nfence_device_create(fd);
	far_dev = nfence_device_create(fd1);
	nfence_bo_create(fd, keep_dev, 4096, SYSTEM, 0, &obo);
	nfence_bo_create(fd1, far_dev, 4096, SYSTEM, 0, &fbo);
	f = fence(&t, 0, &fm);
	kf = nfence_fence_create(fd, keep_dev, TYPE_DEFAULT, 0, 0, NULL);
	nfence_queue_create(&lost, fd, t.dev, 0, 0);
	nfence_queue_create(&lost2, fd, t.dev, 1, 0);
	nfence_queue_create(&other, fd, keep_dev, 1, 0);
	nfence_queue_create(&other_e0, fd, keep_dev, 0, 0);
	nfence_queue_create(&far, fd1, far_dev, 0, 0);

	/* A WORK far longer than the TDR timeout, then more work. */
	nfence_queue_begin(&lost2, &cs);
	nfence_cs_wait_fence(&cs, &fm, 1);
	nfence_cs_write64(&cs, va(&t, 8), 2);
	nfence_queue_submit(&lost2, &cs);
	nfence_queue_begin(&lost, &cs);
	nfence_cs_work(&cs, (tdr_ms + 5000) * MS);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	/*
	 * Read before the submission: the WORK starts after it, and the TDR
	 * counts from the WORK's start on the same clock (CLOCK_MONOTONIC).
	 */
	start = nfence_monotonic_ns();
	nfence_queue_submit(&lost, &cs);

	/* Meanwhile another device of the file and the other adapter run. */
	assert_runs(&other, &obo, 0);
	assert_runs(&far, &fbo, 0);

	igt_assert_eq(nfence_queue_wait(&lost, 1, tdr_ms + WAIT_MS), 0);
	elapsed = (nfence_monotonic_ns() - start) / MS;
	igt_info("device lost after %" PRIu64 " ms (tdr_timeout_ms %" PRIu64
		 ")\n", elapsed, tdr_ms);
	/*
	 * Not before the timeout. No upper bound: the WORK outlasts the
	 * timeout by 5 s, so a TDR that did not fire shows below as a
	 * completed queue (progress 1, not AlwaysSignaled, no DEVICE_LOST),
	 * and the watchdog catches a hang.
	 */
	igt_assert_lte_u64(tdr_ms, elapsed);

	/* Device lost: every context, every fence of the device. */
	igt_assert_eq_u32(nfence_device_control(fd, t.dev,
						DRM_NFENCE_DEVICE_OP_QUERY,
						NULL),
			  DRM_NFENCE_DEVICE_ERROR_HANG);
	igt_assert_eq_u32(nfence_device_control(fd, keep_dev,
						DRM_NFENCE_DEVICE_OP_QUERY,
						NULL),
			  DRM_NFENCE_DEVICE_ERROR_NONE);
	igt_assert(nfence_queue_state(&lost, NULL) & ST_LOST);
	igt_assert(nfence_queue_state(&lost2, NULL) & ST_LOST);
	igt_assert_eq_u64(*lost.progress, ALWAYS);
	igt_assert_eq_u64(*lost2.progress, ALWAYS);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, f, UINT64_MAX, 0), 0);
	assert_queue_state(&lost, "lost");
	nfence_queue_begin(&lost, &cs);
	nfence_cs_nop(&cs);
	igt_assert_eq(__nfence_queue_submit(&lost, &cs), -EIO);
	igt_assert_eq(__nfence_queue_submit_wait(&lost, f, 1), -EIO);
	igt_assert_eq(__nfence_queue_submit_signal(&lost, f, 1), -EIO);
	qc.device = t.dev;
	qc.context = lost.context;
	igt_assert_eq(__nfence_hwqueue_create(fd, &qc), -EIO);

	/* The others still run, on the hung engine too. */
	assert_runs(&other_e0, &obo, 8);
	assert_runs(&other, &obo, 16);
	assert_runs(&far, &fbo, 8);
	igt_assert_eq(__nfence_fence_wait_one(fd, keep_dev, kf, 1, 0), -ETIME);
	/* The work after the WORK and behind the wait never ran. */
	nfence_fence_signal(fd, t.dev, f, 1);
	usleep(QUIET_MS * 1000);
	igt_assert_eq_u64(*word(&t, 0), 0);
	igt_assert_eq_u64(*word(&t, 8), 0);

	nfence_queue_destroy(&lost);
	nfence_queue_destroy(&lost2);
	nfence_queue_destroy(&other);
	nfence_queue_destroy(&other_e0);
	nfence_queue_destroy(&far);
	nfence_bo_destroy(&obo);
	nfence_bo_destroy(&fbo);
	nfence_device_destroy(fd, keep_dev);
	nfence_device_destroy(fd1, far_dev);
	close(fd1);
	t_fini(&t);
}

static void test_disable_gpu_timeout(void)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t f;
	struct t t;

	require_tdr();
	t_init(&t);
	nfence_watchdog(WATCHDOG_S + tdr_ms / 1000);
	f = fence(&t, 0, NULL);
	nfence_queue_create(&q, fd, t.dev, 0, NO_TDR);
	nfence_queue_begin(&q, &cs);
	nfence_cs_work(&cs, (tdr_ms + 500) * MS);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);
	assert_queue_state(&q, "running");
	igt_assert_eq(nfence_queue_wait(&q, 1, tdr_ms + 500 + WAIT_MS), 0);
	/* Completed, not AlwaysSignaled. */
	igt_assert_eq_u64(*q.progress, 1);
	igt_assert_eq_u64(*word(&t, 0), 1);
	igt_assert_eq_u32(nfence_queue_state(&q, NULL), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, f, 1, 0), -ETIME);
	assert_runs(&q, &t.bo, 8);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * With TDR off (tdr_timeout_ms=0) nothing watches the engines: a WORK far
 * longer than the default timeout, on a queue that did not ask for
 * DISABLE_GPU_TIMEOUT, completes, and nothing is lost.
 */
static void test_tdr_off_long_work(void)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t f;
	struct t t;

	igt_require_f(tdr_ms == 0, "tdr_timeout_ms is %" PRIu64
		      " (load the module with tdr_timeout_ms=0)\n", tdr_ms);
	t_init(&t);
	nfence_watchdog(WATCHDOG_S + 4);
	f = fence(&t, 0, NULL);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	/* Twice the module's default tdr_timeout_ms. */
	nfence_cs_work(&cs, 4000 * MS);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&q, &cs);
	assert_queue_state(&q, "running");
	igt_assert_eq(nfence_queue_wait(&q, 1, 4000 + WAIT_MS), 0);
	/* Completed, not AlwaysSignaled; the device is not lost. */
	igt_assert_eq_u64(*q.progress, 1);
	igt_assert_eq_u64(*word(&t, 0), 1);
	igt_assert_eq_u32(nfence_queue_state(&q, NULL), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, t.dev, f, 1, 0), -ETIME);
	assert_runs(&q, &t.bo, 8);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/* Work in flight when things go away */

struct child_info {
	volatile int ready;
	volatile int error;
};

/* No igt_assert in there: it runs in a plain fork()ed child. */
static int child_queue(int cfd, uint32_t dev, uint32_t engine, uint32_t flags,
		       uint32_t *context, uint32_t *queue)
{
	struct drm_nfence_context_create c = { .device = dev, .engine = engine };
	struct drm_nfence_hwqueue_create q = { .device = dev, .flags = flags };
	int ret = __nfence_context_create(cfd, &c);

	if (ret)
		return ret;
	q.context = c.handle;
	ret = __nfence_hwqueue_create(cfd, &q);
	*context = c.handle;
	*queue = q.handle;
	return ret;
}

static int child_submit(int cfd, uint32_t dev, uint32_t queue, uint64_t va,
			uint32_t size)
{
	struct drm_nfence_submit s = {
		.device = dev,
		.hwqueue = queue,
		.commands_gpu_va = va,
		.size = size,
		.progress_fence_value = 1,
	};

	return __nfence_submit(cfd, &s);
}

static int child_main(void)
{
	struct drm_nfence_alloc_create a = {
		.size = 4096, .segment_id = SYSTEM,
	};
	struct drm_nfence_fence_create fc = { .type = TYPE_DEFAULT };
	struct drm_nfence_device_create d = { 0 };
	struct drm_nfence_alloc_lock l = { 0 };
	uint32_t ctx, q[3];
	struct nfence_cs cs;
	uint32_t off[3];
	char *cpu;
	int cfd;

	cfd = __nfence_open_adapter(0);
	if (cfd < 0 || __nfence_device_create(cfd, &d))
		return 2;
	a.device = fc.device = l.device = d.handle;
	if (__nfence_alloc_create(cfd, &a) || __nfence_fence_create(cfd, &fc))
		return 3;
	l.handle = a.handle;
	if (__nfence_alloc_lock(cfd, &l))
		return 4;
	cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
		   l.mmap_offset);
	if (cpu == MAP_FAILED)
		return 5;
	/* A long WORK, a GPU wait, a legacy wait: three queues. */
	if (child_queue(cfd, d.handle, adapter.num_engines - 1, NO_TDR, &ctx,
			&q[0]) ||
	    child_queue(cfd, d.handle, 0, 0, &ctx, &q[1]) ||
	    child_queue(cfd, d.handle, 0, 0, &ctx, &q[2]))
		return 6;
	nfence_cs_init(&cs, cpu, a.gpu_va, 4096);
	off[0] = cs.len;
	nfence_cs_work(&cs, 5000 * MS);
	off[1] = cs.len;
	nfence_cs_wait_fence(&cs, &fc.mapping, 1);
	off[2] = cs.len;
	nfence_cs_nop(&cs);
	if (child_submit(cfd, d.handle, q[0], a.gpu_va + off[0], 16) ||
	    child_submit(cfd, d.handle, q[1], a.gpu_va + off[1], 24) ||
	    __nfence_submit_wait_one(cfd, d.handle, q[2], fc.handle, 1) ||
	    child_submit(cfd, d.handle, q[2], a.gpu_va + off[2], 8))
		return 7;
	return 0;
}

static bool clients_lists(pid_t pid)
{
	char buf[16384], needle[64];
	int len = __nfence_debugfs_read(dbg, "nfence_clients", buf,
					sizeof(buf));

	igt_assert_f(len >= 0, "nfence_clients: %s\n", strerror(-len));
	snprintf(needle, sizeof(needle), "pid %d ", pid);
	return strstr(buf, needle);
}

static void test_killed_with_work_in_flight(void)
{
	struct child_info *info;
	struct nfence_queue q;
	int status = 0, ret;
	uint64_t start;
	pid_t pid;
	struct t t;

	t_init(&t);
	info = mmap(NULL, sizeof(*info), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(info != MAP_FAILED);
	pid = fork();
	igt_assert_lte(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		info->error = child_main();
		__atomic_store_n(&info->ready, 1, __ATOMIC_SEQ_CST);
		for (;;)
			pause();
	}
	start = nfence_monotonic_ns();
	while (!__atomic_load_n(&info->ready, __ATOMIC_SEQ_CST) &&
	       nfence_monotonic_ns() - start < WAIT_MS * MS)
		usleep(1000);
	if (!info->ready || info->error)
		kill(pid, SIGKILL);
	igt_assert_f(info->ready, "child not ready\n");
	igt_assert_f(!info->error, "child setup failed at step %d\n",
		     info->error);

	/* Its three queues: running, waiting on the GPU, on the CPU. */
	for (int i = 0; i < 100 && nfence_debugfs_count_queues(dbg, pid) < 3;
	     i++)
		usleep(10000);
	ret = nfence_debugfs_count_queues(dbg, pid);
	usleep(QUIET_MS * 1000);
	kill(pid, SIGKILL);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	igt_assert_eq(ret, 3);

	start = nfence_monotonic_ns();
	igt_assert_eq(nfence_debugfs_queues_wait_gone(dbg, pid, GONE_MS), 0);
	igt_info("queues gone %" PRIu64 " ms after the kill\n",
		 (nfence_monotonic_ns() - start) / MS);
	while (clients_lists(pid) &&
	       nfence_monotonic_ns() - start < GONE_MS * MS)
		usleep(1000);
	igt_assert_f(!clients_lists(pid), "pid %d still in nfence_clients\n",
		     pid);

	/* The engines serve others. */
	nfence_queue_create(&q, fd, t.dev, adapter.num_engines - 1, 0);
	assert_runs(&q, &t.bo, 0);
	nfence_queue_destroy(&q);
	munmap(info, sizeof(*info));
	t_fini(&t);
}

/* Queues parked on a fence with work behind, a CPU waiter on progress. */
struct inflight {
	struct t t;
	uint32_t park;
	struct drm_nfence_fence_mapping pm;
	struct nfence_queue q[2];
	struct waiter w[2];
	uint64_t work_start;
};

static void inflight_start(struct inflight *f, bool same_context)
{
	struct nfence_cs cs;

	t_init(&f->t);
	f->park = fence(&f->t, 0, &f->pm);
	nfence_queue_create(&f->q[0], fd, f->t.dev, 0, 0);
	if (same_context)
		nfence_queue_create_on(&f->q[1], fd, f->t.dev,
				       f->q[0].context, 0);
	else
		nfence_queue_create(&f->q[1], fd, f->t.dev,
				    adapter.num_engines - 1, NO_TDR);
	nfence_queue_begin(&f->q[0], &cs);
	nfence_cs_wait_fence(&cs, &f->pm, 1);
	nfence_queue_submit(&f->q[0], &cs);
	for (int i = 0; i < 4; i++) {
		nfence_queue_begin(&f->q[0], &cs);
		nfence_cs_write64(&cs, va(&f->t, 8 * i), 1);
		nfence_queue_submit(&f->q[0], &cs);
	}
	/* The other one busy in a WORK. */
	nfence_queue_begin(&f->q[1], &cs);
	nfence_cs_timestamp(&cs, va(&f->t, 0x100));
	nfence_cs_work(&cs, 1000 * MS);
	nfence_cs_write64(&cs, va(&f->t, 0x108), 1);
	nfence_queue_submit(&f->q[1], &cs);
	for (int i = 0; i < 2; i++)
		waiter_start(&f->w[i], f->t.dev, f->q[i].progress_fence,
			     f->q[i].submitted);
	assert_queue_state(&f->q[0], "wait-fence");
	while (!*word(&f->t, 0x100))
		usleep(1000);
	f->work_start = nfence_monotonic_ns();
}

/*
 * Whatever was in flight never ran; waiters came back with -ENOENT: the
 * progress fence's last handle went with its queue (Documentation/
 * fences.rst), or, had the wait not started yet, the handle was gone.
 */
static void inflight_check(struct inflight *f, int nqueues)
{
	for (int i = 0; i < nqueues; i++) {
		int ret = waiter_join(&f->w[i]);

		igt_info("waiter on destroyed queue %d: %d (%s)\n", i, ret,
			 strerror(-ret));
		igt_assert_eq(ret, -ENOENT);
	}
	/* Past the end of the WORK that was running. */
	while (nfence_monotonic_ns() < f->work_start + 1200 * MS)
		usleep(10 * 1000);
	for (int i = 0; i < 4; i++)
		igt_assert_eq_u64(*word(&f->t, 8 * i), 0);
	igt_assert_eq_u64(*word(&f->t, 0x108), 0);
	for (int i = 0; i < nqueues; i++)
		igt_assert_eq(__nfence_debugfs_queue(dbg, getpid(), f->t.dev,
						     f->q[i].context, NULL),
			      -ENOENT);
}

static void test_destroy_queue_in_flight(void)
{
	struct inflight f;
	uint64_t start;

	inflight_start(&f, false);
	start = nfence_monotonic_ns();
	nfence_hwqueue_destroy(fd, f.t.dev, f.q[0].handle);
	nfence_hwqueue_destroy(fd, f.t.dev, f.q[1].handle);
	igt_info("destroyed in %" PRIu64 " ms\n",
		 (nfence_monotonic_ns() - start) / MS);
	f.q[0].handle = f.q[1].handle = 0;
	/* Releasing the wait now runs nothing. */
	nfence_fence_signal(fd, f.t.dev, f.park, 1);
	inflight_check(&f, 2);
	igt_assert_eq(__nfence_fence_destroy_handle(fd,
						    f.q[0].progress_fence),
		      -ENOENT);
	/* The context takes new queues that run. */
	{
		struct nfence_queue q;

		nfence_queue_create_on(&q, fd, f.t.dev, f.q[0].context, 0);
		assert_runs(&q, &f.t.bo, 0x200);
		nfence_queue_destroy(&q);
	}
	for (int i = 0; i < 2; i++)
		nfence_queue_destroy(&f.q[i]);
	t_fini(&f.t);
}

static void test_destroy_context_in_flight(void)
{
	struct inflight f;

	inflight_start(&f, true);
	nfence_context_destroy(fd, f.t.dev, f.q[0].context);
	f.q[0].own_context = false;
	nfence_fence_signal(fd, f.t.dev, f.park, 1);
	inflight_check(&f, 2);
	for (int i = 0; i < 2; i++)
		igt_assert_eq(__nfence_hwqueue_destroy_handle(fd, f.t.dev,
							      f.q[i].handle),
			      -ENOENT);
	for (int i = 0; i < 2; i++) {
		f.q[i].handle = 0;
		nfence_queue_destroy(&f.q[i]);
	}
	t_fini(&f.t);
}

static void test_destroy_device_in_flight(void)
{
	struct drm_nfence_fence_mapping pm;
	struct inflight f;
	int base = nfence_debugfs_count_queues(dbg, getpid());

	inflight_start(&f, false);
	pm = f.pm;
	nfence_bo_unmap(&f.t.bo);
	for (int i = 0; i < 2; i++)
		nfence_queue_forget(&f.q[i]);
	nfence_device_destroy(fd, f.t.dev);
	/* The progress fences' handles went with the device: -ENOENT. */
	for (int i = 0; i < 2; i++) {
		int ret = waiter_join(&f.w[i]);

		igt_info("waiter on queue %d of the destroyed device: %d "
			 "(%s)\n", i, ret, strerror(-ret));
		igt_assert_eq(ret, -ENOENT);
	}
	igt_assert_eq(nfence_debugfs_count_queues(dbg, getpid()), base);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &pm, GONE_MS), 0);
	/* Other devices run on. */
	t_init(&f.t);
	{
		struct nfence_queue q;

		nfence_queue_create(&q, fd, f.t.dev, 0, 0);
		assert_runs(&q, &f.t.bo, 0);
		nfence_queue_destroy(&q);
	}
	t_fini(&f.t);
}

static void test_close_with_work_in_flight(void)
{
	struct drm_nfence_fence_mapping m;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	struct nfence_queue q[2];
	struct nfence_cs cs;
	uint64_t start;
	int base;
	struct t t;

	t_init(&t);
	base = nfence_debugfs_count_queues(dbg, getpid());
	nfence_fence_create(fd2, dev2, TYPE_DEFAULT, 0, 0, &m);
	nfence_queue_create(&q[0], fd2, dev2, 0, 0);
	nfence_queue_create(&q[1], fd2, dev2, adapter.num_engines - 1, NO_TDR);
	nfence_queue_begin(&q[0], &cs);
	nfence_cs_wait_fence(&cs, &m, 1);
	nfence_queue_submit(&q[0], &cs);
	nfence_queue_begin(&q[1], &cs);
	nfence_cs_work(&cs, 2000 * MS);
	nfence_queue_submit(&q[1], &cs);
	assert_queue_state(&q[0], "wait-fence");
	igt_assert_eq(nfence_debugfs_count_queues(dbg, getpid()), base + 2);
	/*
	 * Suspended, the contexts run nothing more (the running WORK goes
	 * on): the close's exit wait skips their queues, which nobody could
	 * resume. Otherwise it would take its whole bound (2 s) waiting for
	 * the parked wait nobody signals, then drop the work as here
	 * (nfence_exit@blocked-work-dropped-at-bound tests that).
	 */
	for (int i = 0; i < 2; i++) {
		igt_assert(nfence_context_control(fd2, dev2, q[i].context,
						  DRM_NFENCE_CONTEXT_OP_SUSPEND,
						  NULL) & ST_SUSPENDED);
		nfence_queue_forget(&q[i]);
	}
	start = nfence_monotonic_ns();
	close(fd2);
	igt_assert_f(nfence_monotonic_ns() - start < 1000 * MS,
		     "the close waited %" PRIu64 " ms\n",
		     (nfence_monotonic_ns() - start) / MS);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &m, GONE_MS), 0);
	/* The closed file's queues (of this process) are gone. */
	start = nfence_monotonic_ns();
	while (nfence_debugfs_count_queues(dbg, getpid()) != base &&
	       nfence_monotonic_ns() - start < GONE_MS * MS)
		usleep(1000);
	igt_assert_eq(nfence_debugfs_count_queues(dbg, getpid()), base);
	{
		struct nfence_queue mine;

		nfence_queue_create(&mine, fd, t.dev, 0, 0);
		assert_runs(&mine, &t.bo, 0);
		nfence_queue_destroy(&mine);
	}
	t_fini(&t);
}

static void test_fence_wait_other_device(void)
{
	struct drm_nfence_fence_mapping ma, mb;
	uint32_t devb, ha, hb;
	struct nfence_queue qa, qb;
	struct nfence_cs cs;
	int sfd;
	struct t t;

	t_init(&t);
	devb = nfence_device_create(fd);
	ha = nfence_fence_create(fd, t.dev, TYPE_DEFAULT, SHAREABLE, 0, &ma);
	sfd = nfence_fence_share(fd, ha);
	hb = nfence_fence_open(fd, devb, sfd, 0, &mb);
	close(sfd);
	nfence_queue_create(&qb, fd, devb, 0, 0);
	nfence_queue_create(&qa, fd, t.dev, adapter.num_engines - 1, 0);

	/* Device B's queue waits through both mappings and the handle. */
	nfence_queue_begin(&qb, &cs);
	nfence_cs_wait_fence(&cs, &mb, 3);
	nfence_cs_write64(&cs, va(&t, 0), 1);
	nfence_queue_submit(&qb, &cs);
	nfence_queue_begin(&qb, &cs);
	nfence_cs_wait_fence(&cs, &ma, 4);
	nfence_cs_write64(&cs, va(&t, 8), 1);
	nfence_queue_submit(&qb, &cs);
	igt_assert_eq(__nfence_queue_submit_wait(&qb, hb, 5), 0);
	nfence_queue_begin(&qb, &cs);
	nfence_cs_write64(&cs, va(&t, 16), 1);
	nfence_queue_submit(&qb, &cs);
	/* A's handle is not one of B's: -ENOENT. */
	igt_assert_eq(__nfence_queue_submit_wait(&qb, ha, 1), -ENOENT);

	for (uint64_t v = 3; v <= 5; v++) {
		usleep(QUIET_MS * 1000 / 2);
		igt_assert_eq_u64(*word(&t, 8 * (v - 3)), 0);
		nfence_fence_signal(fd, t.dev, ha, v);
		igt_assert_eq(nfence_queue_wait(&qb, v - 2, WAIT_MS), 0);
		igt_assert_eq_u64(*word(&t, 8 * (v - 3)), 1);
	}

	/* And the other way: A's queue signals, a CPU waits through B. */
	nfence_queue_begin(&qa, &cs);
	nfence_cs_work(&cs, 10 * MS);
	nfence_cs_signal_fence(&cs, &ma, 9);
	nfence_queue_submit(&qa, &cs);
	igt_assert_eq(__nfence_fence_wait_one(fd, devb, hb, 9,
					      nfence_deadline_ms(WAIT_MS)), 0);

	nfence_queue_destroy(&qa);
	nfence_queue_destroy(&qb);
	nfence_device_destroy(fd, devb);
	t_fini(&t);
}

/* Stress: lost wake-ups between the GPU and the CPU */

struct stress {
	uint64_t iterations;
	int stop;
	int error;
	uint64_t error_at;
	uint64_t done;
};

static void stress_fail(struct stress *s, uint64_t i, int err)
{
	int zero = 0;

	if (__atomic_compare_exchange_n(&s->error, &zero, err, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		s->error_at = i;
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
}

static void stress_report(struct stress *s, const char *what, uint64_t start)
{
	igt_info("%s: %" PRIu64 " of %" PRIu64 " rounds in %" PRIu64 " ms\n",
		 what, s->done, s->iterations,
		 (nfence_monotonic_ns() - start) / MS);
	igt_assert_f(!s->error, "round %" PRIu64 ": %d (%s)\n", s->error_at,
		     s->error, strerror(-s->error));
	igt_assert_lte_u64(STRESS_MIN, s->done);
}

static void test_stress_gpu_signal_cpu_wait(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct stress s;
	uint64_t start, cap;
	uint32_t h;
	struct t t;

	t_init(&t);
	nfence_watchdog(STRESS_CAP_S + STRESS_WAIT_MS / 1000 + 30);
	memset(&s, 0, sizeof(s));
	s.iterations = STRESS_ITERATIONS;
	h = fence(&t, 0, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S * 1000 * MS;

	/*
	 * The GPU signals i while this thread goes to sleep waiting for i:
	 * right away, or after a short WORK so that the signal lands while
	 * the wait is being set up or already sleeps.
	 */
	for (uint64_t i = 1; i <= s.iterations; i++) {
		struct nfence_cs cs;
		int ret;

		if (i > STRESS_MIN && nfence_monotonic_ns() > cap)
			break;
		nfence_queue_begin(&q, &cs);
		if (i % 4 == 0)
			nfence_cs_work(&cs, 50000);
		nfence_cs_signal_fence(&cs, &m, i);
		nfence_queue_submit(&q, &cs);
		/* Alternately the signaled fence and the progress fence. */
		ret = __nfence_fence_wait_one(fd, t.dev,
					      i % 2 ? h : q.progress_fence, i,
					      nfence_deadline_ms(STRESS_WAIT_MS));
		if (ret) {
			stress_fail(&s, i, ret);
			break;
		}
		s.done = i;
	}
	stress_report(&s, "GPU signals, CPU waits", start);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

static void test_stress_cpu_signal_gpu_wait(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct stress s;
	uint64_t start, cap;
	uint32_t h;
	struct t t;

	t_init(&t);
	nfence_watchdog(STRESS_CAP_S + STRESS_WAIT_MS / 1000 + 30);
	memset(&s, 0, sizeof(s));
	s.iterations = STRESS_ITERATIONS;
	h = fence(&t, 0, &m);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S * 1000 * MS;

	for (uint64_t i = 1; i <= s.iterations; i++) {
		struct nfence_cs cs;
		int ret;

		if (i > STRESS_MIN && nfence_monotonic_ns() > cap)
			break;
		nfence_queue_begin(&q, &cs);
		nfence_cs_wait_fence(&cs, &m, i);
		nfence_queue_submit(&q, &cs);
		/* Mostly right after the queue reaches the wait. */
		if (i % 8 == 0)
			sched_yield();
		nfence_fence_signal(fd, t.dev, h, i);
		ret = nfence_queue_wait(&q, i, STRESS_WAIT_MS);
		if (ret) {
			stress_fail(&s, i, ret);
			break;
		}
		s.done = i;
	}
	stress_report(&s, "CPU signals, GPU waits", start);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * The adversarial CMP load: one client with ADV_QUEUES queues
 * on engine 0, each fed DRM_NFENCE_MAX_SUBMIT_SIZE buffers of FENCE_SIGNAL
 * to memory that is not a fence, with a MonitoredValue below the value
 * (each signal needs the interrupt that scans every fence), and ADV_FENCES
 * fences to scan. Meanwhile a second client does submit/wait round trips on
 * engine 1. The goal is ADV_GOAL_MS for both the worst round trip and the
 * longest CMP lock hold; the subtest allows ADV_SLACK times that for the
 * lock hold, the longest CMP pass and the 99th percentile round trip. The
 * worst round trip is reported, not asserted: under TCG a vCPU of the
 * guest can lose 100 ms to the host, which no driver bound can prevent
 * (a 6.12 run measured 108 ms with a 5.7 ms longest hold).
 */
#define ADV_QUEUES	1024
#define ADV_FENCES	2000
#define ADV_SECONDS	10
/*
 * The adversary's setup (ADV_FENCES fences, ADV_QUEUES queues and their
 * first submissions, each waiting for the lock): not what is measured, so
 * bounded only against a hang. Under TCG it took from under 20 s to
 * 119 s (6.1 guest, 2-core host busy with builds).
 */
#define ADV_SETUP_S	300
#define ADV_GOAL_MS	10
#define ADV_SLACK	10
/*
 * What the CMP and the scan may look at under one hold of their locks
 * (Documentation/gpu-work.rst, "Bounded work under the lock"): queues
 * under the CMP lock, fences under the adapter's fence table lock.
 */
#define ADV_MAX_VISITS	64
#define ADV_MAX_SCAN	32
/* NFENCE_CMP_PASS_BUDGET: commands one engine runs in one pass, at most */
#define ADV_PASS_BUDGET	2048

static void adversary(int sock)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_bo cmds, data;
	uint32_t dev, ctx, *queues;
	uint64_t *queued, value = 1;
	struct nfence_cs cs;
	int afd;

	queues = calloc(ADV_QUEUES, sizeof(*queues));
	queued = calloc(ADV_QUEUES, sizeof(*queued));
	afd = nfence_open();
	dev = nfence_device_create(afd);
	ctx = nfence_context_create(afd, dev, 0);
	nfence_bo_create(afd, dev, DRM_NFENCE_MAX_SUBMIT_SIZE, SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &cmds);
	nfence_bo_create(afd, dev, 4096, SYSTEM, DRM_NFENCE_ALLOC_CPU_VISIBLE,
			 &data);
	for (int i = 0; i < ADV_FENCES; i++)
		nfence_fence_create(afd, dev, TYPE_DEFAULT, 0, 0, &m);
	/* MonitoredValue (word 1) stays 0: every signal raises the interrupt. */
	nfence_cs_init(&cs, cmds.cpu, cmds.gpu_va, cmds.size);
	while (cs.len + 32 <= cs.size)
		nfence_cs_fence_signal(&cs, data.gpu_va, data.gpu_va + 8,
				       value++);
	for (int i = 0; i < ADV_QUEUES; i++) {
		uint32_t progress;

		queues[i] = nfence_hwqueue_create(afd, dev, ctx, 0, &progress,
						  &m);
	}
	for (unsigned int round = 0;; round++) {
		for (int i = 0; i < ADV_QUEUES; i++) {
			struct drm_nfence_submit submit = {
				.device = dev,
				.hwqueue = queues[i],
				.commands_gpu_va = cs.gpu_va,
				.size = cs.len,
				.progress_fence_value = ++queued[i],
			};

			/* Blocks while the queue is full: fine for a flood. */
			if (__nfence_submit(afd, &submit))
				_exit(1);
		}
		if (round == 0 && write(sock, "r", 1) != 1)
			_exit(2);
	}
}

static uint64_t cmp_stat(const char *key)
{
	return nfence_debugfs_get_u64(dbg, "nfence_cmp", key);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What another client saw of the CMP while an adversary loaded it. */
struct adv_run {
	uint64_t trips, median_us, p99_us, worst_us;
	uint64_t pass_us, hold_us, visits, scan, pass_commands;
	uint64_t commands, irqs, spurious, passes, scans;
};

/* The adversary still running, if a failed assertion left one. */
static pid_t adv_pid;

static void adv_reap(void)
{
	int status;

	if (adv_pid <= 0)
		return;
	kill(adv_pid, SIGKILL);
	igt_assert_eq(waitpid(adv_pid, &status, 0), adv_pid);
	adv_pid = 0;
}

/*
 * Fork @adversary, wait up to @setup_s for its word that its load is in
 * place, then do submit/wait round trips on engine 1 for @seconds and read
 * the CMP's maxima, which count from the adversary's word on; kill it.
 */
static void adv_measure(void (*adversary_fn)(int sock), int setup_s,
			int seconds, struct adv_run *r)
{
	struct timeval tv = { .tv_sec = setup_s };
	static uint64_t rts[1 << 17];
	struct nfence_interrupts before, after;
	uint64_t end, worst = 0;
	struct nfence_queue q;
	struct nfence_cs cs;
	int sock, ret;
	size_t n;
	char c;
	struct t t;

	require_engines(2);
	adv_reap();
	t_init(&t);
	nfence_watchdog(WATCHDOG_S + 30 + setup_s + seconds);
	nfence_queue_create(&q, fd, t.dev, 1, 0);
	memset(r, 0, sizeof(*r));
	adv_pid = nfence_fork_child(adversary_fn, &sock);
	igt_assert_eq(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv,
				 sizeof(tv)), 0);
	/* A failed assertion does not leave the adversary loading the GPU. */
	end = nfence_monotonic_ns();
	if (read(sock, &c, 1) != 1)
		adv_reap();
	igt_assert_f(adv_pid, "the adversary did not set its load up "
		     "within %d s\n", setup_s);
	igt_info("adversary set up in %.1f s\n",
		 (nfence_monotonic_ns() - end) / 1e9);
	ret = __nfence_debugfs_write(dbg, "nfence_cmp_reset_max", "1");
	if (ret)
		adv_reap();
	igt_assert_eq(ret, 0);
	r->commands = cmp_stat("commands");
	r->passes = cmp_stat("passes");
	irq(&before);

	end = nfence_monotonic_ns() + seconds * 1000 * MS;
	while (nfence_monotonic_ns() < end) {
		uint64_t t0 = nfence_monotonic_ns(), rt;

		nfence_queue_begin(&q, &cs);
		nfence_cs_write64(&cs, va(&t, 0), r->trips);
		nfence_queue_submit(&q, &cs);
		ret = nfence_queue_wait(&q, q.submitted, WAIT_MS);
		if (ret)
			adv_reap();
		igt_assert_eq(ret, 0);
		rt = nfence_monotonic_ns() - t0;
		if (rt > worst)
			worst = rt;
		rts[r->trips % ARRAY_SIZE(rts)] = rt;
		r->trips++;
		if (q.head > NFENCE_QUEUE_CMDS_SIZE / 2)
			q.head = 0;
	}
	r->pass_us = cmp_stat("longest_pass_us");
	r->hold_us = cmp_stat("longest_hold_us");
	r->visits = cmp_stat("longest_visits");
	r->pass_commands = cmp_stat("most_pass_commands");
	r->scan = nfence_debugfs_get_u64(dbg, "nfence_interrupts",
					 "longest_scan");
	/*
	 * The scans before the passes: a pass counts itself when it starts
	 * and its scan after it, so every scan read here has its pass
	 * counted after it.
	 */
	irq(&after);
	r->commands = cmp_stat("commands") - r->commands;
	r->passes = cmp_stat("passes") - r->passes;
	r->irqs = after.interrupts - before.interrupts;
	r->scans = after.scans - before.scans;
	r->spurious = after.spurious - before.spurious;

	adv_reap();
	close(sock);
	n = r->trips < ARRAY_SIZE(rts) ? r->trips : ARRAY_SIZE(rts);
	qsort(rts, n, sizeof(rts[0]), cmp_u64);
	r->median_us = n ? rts[n / 2] / 1000 : 0;
	r->p99_us = n ? rts[n * 99 / 100] / 1000 : 0;
	r->worst_us = worst / 1000;
	igt_info("%" PRIu64 " round trips in %d s: median %" PRIu64 " us, "
		 "99th percentile %" PRIu64 " us, worst %" PRIu64 " us; "
		 "longest CMP pass %" PRIu64 " us, longest lock hold %" PRIu64
		 " us, most queues looked at under one hold %" PRIu64 ", "
		 "most fences a scan looked at under one hold %" PRIu64 ", "
		 "most commands one engine ran in one pass %" PRIu64 "; "
		 "adversary: %" PRIu64 " commands, %" PRIu64 " interrupts "
		 "raised, %" PRIu64 " spurious; %" PRIu64 " scans of every "
		 "fence in %" PRIu64 " passes\n", r->trips, seconds,
		 r->median_us, r->p99_us, r->worst_us, r->pass_us, r->hold_us,
		 r->visits, r->scan, r->pass_commands, r->commands, r->irqs,
		 r->spurious, r->scans, r->passes);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

/*
 * What one hold of a lock looked at, and one pass ran on an engine, stayed
 * within the driver's bounds.
 */
static void adv_assert_bounded(const struct adv_run *r)
{
	igt_assert_f(r->pass_commands <= ADV_PASS_BUDGET, "one engine ran %"
		     PRIu64 " commands in one pass, more than %d\n",
		     r->pass_commands, ADV_PASS_BUDGET);
	igt_assert_f(r->visits <= ADV_MAX_VISITS, "the CMP looked at %" PRIu64
		     " queues under one hold of its lock, more than %d\n",
		     r->visits, ADV_MAX_VISITS);
	igt_assert_f(r->scan <= ADV_MAX_SCAN, "a scan looked at %" PRIu64
		     " fences under one hold of the fence table's lock, more "
		     "than %d\n", r->scan, ADV_MAX_SCAN);
}

static void test_adversarial_cmp_load(void)
{
	struct adv_run r;

	adv_measure(adversary, ADV_SETUP_S, ADV_SECONDS, &r);
	/* The load was real: many buffers of scanning signals ran. */
	igt_assert_lte_u64(4 * DRM_NFENCE_MAX_SUBMIT_SIZE / 32, r.commands);
	igt_assert_lte_u64(4 * DRM_NFENCE_MAX_SUBMIT_SIZE / 32, r.irqs);
	igt_assert_lte_u64(100, r.trips);
	igt_assert_f(r.p99_us < ADV_GOAL_MS * ADV_SLACK * 1000,
		     "99th percentile round trip %" PRIu64 " us\n", r.p99_us);
	igt_assert_f(r.hold_us < ADV_GOAL_MS * ADV_SLACK * 1000,
		     "CMP lock held %" PRIu64 " us\n", r.hold_us);
	igt_assert_f(r.pass_us < ADV_GOAL_MS * ADV_SLACK * 1000,
		     "CMP pass took %" PRIu64 " us\n", r.pass_us);
	/*
	 * The signals that need a scan get one per pass, coalesced (one
	 * more: a pass under way when the count began scans after it; the
	 * end reads the scans first, so no pass started after it counts).
	 */
	igt_assert_f(r.scans <= r.passes + 1, "%" PRIu64 " scans of every "
		     "fence in %" PRIu64 " CMP passes\n", r.scans, r.passes);
	adv_assert_bounded(&r);
}

/*
 * The adversarial CMP load with queues that run nothing: PARK_FILES files
 * of PARK_QUEUES queues on engine 0, each parked on a FENCE_WAIT that
 * nothing satisfies, and PARK_FENCES fences in each file, the first
 * PARK_WAITED of them with an asynchronous CPU wait that nothing satisfies,
 * while one more queue keeps the passes coming with buffers of FENCE_SIGNAL
 * to memory that is not a fence (each pass ends with the interrupt that
 * scans the fences). Every pass gives every parked queue its turn again,
 * and every scan has the adapter's fences to go through; what they may do
 * under one hold of a lock is bounded (Documentation/gpu-work.rst,
 * "Bounded work under the lock"): ADV_MAX_VISITS queues looked at under
 * the CMP lock, ADV_MAX_SCAN fences under the fence table's lock.
 */
#define PARK_FILES	4
#define PARK_QUEUES	1000
#define PARK_FENCES	7000
#define PARK_WAITED	1000
#define PARK_SECONDS	5
/*
 * Creating the files' queues, fences and waits takes over 20 s on the
 * debug kernel under TCG; it is not what the subtest measures.
 */
#define PARK_SETUP_S	90

/* A file with PARK_QUEUES parked queues and PARK_FENCES idle fences. */
static void park_file(bool flood, struct nfence_queue *fq)
{
	struct drm_nfence_fence_mapping m;
	uint32_t dev, ctx, progress;
	uint64_t never = 1;
	struct nfence_bo cmds;
	struct nfence_cs cs;
	int afd, efd;

	afd = nfence_open();
	dev = nfence_device_create(afd);
	ctx = nfence_context_create(afd, dev, 0);
	/* The queue that floods comes first on the runlist. */
	if (flood)
		nfence_queue_create(fq, afd, dev, 0, 0);
	/* Nothing signals this one: a wait for 1 parks for good. */
	nfence_fence_create(afd, dev, TYPE_DEFAULT, 0, 0, &m);
	nfence_bo_create(afd, dev, 4096, SYSTEM, DRM_NFENCE_ALLOC_CPU_VISIBLE,
			 &cmds);
	nfence_cs_init(&cs, cmds.cpu, cmds.gpu_va, cmds.size);
	nfence_cs_wait_fence(&cs, &m, 1);
	for (int i = 0; i < PARK_QUEUES; i++) {
		struct drm_nfence_submit submit = {
			.device = dev,
			.commands_gpu_va = cs.gpu_va,
			.size = cs.len,
			.progress_fence_value = 1,
		};

		submit.hwqueue = nfence_hwqueue_create(afd, dev, ctx, 0,
						       &progress, &m);
		if (__nfence_submit(afd, &submit))
			_exit(1);
	}
	/* The first PARK_WAITED have a CPU waiter that is never satisfied. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		_exit(3);
	for (int i = 0; i < PARK_FENCES; i++) {
		uint32_t h = nfence_fence_create(afd, dev, TYPE_DEFAULT, 0, 0,
						 &m);
		struct drm_nfence_fence_wait w = {
			.device = dev,
			.count = 1,
			.flags = DRM_NFENCE_WAIT_ASYNC,
			.handles = (uint64_t)(uintptr_t)&h,
			.values = (uint64_t)(uintptr_t)&never,
			.eventfd = efd,
		};

		if (i < PARK_WAITED && __nfence_fence_wait(afd, &w))
			_exit(4);
	}
}

static void parked_adversary(int sock)
{
	struct nfence_queue fq;
	struct nfence_bo data;
	struct nfence_cs cs;
	uint64_t value = 1;

	for (int f = 0; f < PARK_FILES; f++)
		park_file(f == 0, &fq);
	nfence_bo_create(fq.fd, fq.device, 4096, SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &data);
	/* MonitoredValue (word 1) stays 0: every signal needs the scan. */
	nfence_cs_init(&cs, fq.cmds.cpu, fq.cmds.gpu_va, fq.cmds.size);
	while (cs.len + 32 <= cs.size)
		nfence_cs_fence_signal(&cs, data.gpu_va, data.gpu_va + 8,
				       value++);
	for (unsigned int round = 0;; round++) {
		nfence_queue_submit(&fq, &cs);
		if (round == 0 && write(sock, "r", 1) != 1)
			_exit(2);
	}
}

static void test_adversarial_parked_queues(void)
{
	struct adv_run r;

	adv_measure(parked_adversary, PARK_SETUP_S, PARK_SECONDS, &r);
	/*
	 * The load was real: passes ran, each ending with a scan, and the
	 * other client's ioctls took the CMP lock among them (each pass walks
	 * 4000 queues: 51 round trips in 5 s on the debug kernel under TCG).
	 */
	igt_assert_lte_u64(100, r.irqs);
	igt_assert_lte_u64(20, r.trips);
	adv_assert_bounded(&r);
	/* Enough parked queues and waited fences to fill every slice. */
	igt_assert_eq_u64(r.visits, ADV_MAX_VISITS);
	igt_assert_eq_u64(r.scan, ADV_MAX_SCAN);
}

/*
 * Writing nfence_cmp_reset_max restarts longest_pass_us and longest_hold_us.
 * First some work makes both at least 1 us (RESET_COMMANDS WRITE64s, a few
 * milliseconds under TCG). Then, the CMP idle, the write and the reads that
 * follow it. What is exact: the reset zeroes both under the CMP lock, and
 * only a pass (the "passes" count says whether one started) or a hold of
 * the lock can raise them again. With no pass since, longest_pass_us reads
 * 0. The lock's only holder since is the reset itself, whose hold is
 * recorded when it unlocks: longest_hold_us reads that hold, a few stores
 * between two clock reads, which under TCG (slow clock reads, a vCPU the
 * host can preempt) reads from 0 to a few microseconds. So the test asks
 * for less than the hold before the reset, which a reset that keeps the
 * old maximum cannot give. A try that sees a pass, or a hold as long as
 * the old one (the vCPU lost its time inside the reset), is tried again,
 * up to RESET_TRIES times.
 */
#define RESET_COMMANDS	1024
#define RESET_TRIES	5

static void test_cmp_reset_max(void)
{
	uint64_t pass_us, hold_us, held_us, passes;
	struct nfence_queue q;
	struct nfence_cs cs;
	int i, n = 0;
	struct t t;

	t_init(&t);
	nfence_queue_create(&q, fd, t.dev, 0, 0);
	while (n < RESET_COMMANDS) {
		nfence_queue_begin(&q, &cs);
		for (; n < RESET_COMMANDS && cs.len + 24 <= cs.size; n++)
			nfence_cs_write64(&cs, va(&t, 8 * (n % 64)), n);
		nfence_queue_submit(&q, &cs);
	}
	nfence_queue_sync(&q);
	pass_us = nfence_debugfs_get_u64(dbg, "nfence_cmp", "longest_pass_us");
	held_us = nfence_debugfs_get_u64(dbg, "nfence_cmp", "longest_hold_us");
	igt_info("before the reset: longest pass %" PRIu64 " us, hold %"
		 PRIu64 " us\n", pass_us, held_us);
	igt_assert_f(pass_us && held_us, "%d commands took under 1 us\n",
		     RESET_COMMANDS);
	usleep(QUIET_MS * 1000);

	for (i = 0; i < RESET_TRIES; i++) {
		passes = nfence_debugfs_get_u64(dbg, "nfence_cmp", "passes");
		igt_assert_eq(__nfence_debugfs_write(dbg, "nfence_cmp_reset_max",
						     "1"), 0);
		pass_us = nfence_debugfs_get_u64(dbg, "nfence_cmp",
						 "longest_pass_us");
		hold_us = nfence_debugfs_get_u64(dbg, "nfence_cmp",
						 "longest_hold_us");
		igt_info("after the reset: longest pass %" PRIu64 " us, hold %"
			 PRIu64 " us\n", pass_us, hold_us);
		if (nfence_debugfs_get_u64(dbg, "nfence_cmp", "passes") !=
		    passes)
			continue;
		igt_assert_eq_u64(pass_us, 0);
		if (hold_us < held_us)
			break;
	}
	igt_assert_f(i < RESET_TRIES, "no try with no pass since the reset "
		     "and longest_hold_us below %" PRIu64 " us (last %" PRIu64
		     ") in %d\n", held_us, hold_us, RESET_TRIES);
	nfence_queue_destroy(&q);
	t_fini(&t);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		igt_require_f(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE,
			      "adapter has no native fences\n");
		igt_assert_f(nfence_tdr_timeout_ms(&tdr_ms),
			     "module parameter tdr_timeout_ms unreadable\n");
		dbg = nfence_debugfs_dir(fd);
		for (unsigned int i = 0; i < ARRAY_SIZE(debugfs_files); i++)
			igt_assert_f(!faccessat(dbg, debugfs_files[i], R_OK, 0),
				     "no %s in debugfs: %s\n",
				     debugfs_files[i], strerror(errno));
	}

	igt_describe("Engine A signals a native fence (FENCE_SIGNAL with its "
		     "MonitoredValue VA), engine B waits for it: B runs after "
		     "A, and with no CPU waiter no interrupt is raised.");
	igt_subtest("native-engines-no-interrupt")
		test_native_engines_no_interrupt();

	igt_describe("64-bit values are never torn: a CPU thread reading a "
		     "fence's mapping back to back while the GPU signals "
		     "values whose halves change together never sees halves "
		     "that differ.");
	igt_subtest("gpu-signal-never-torn")
		test_gpu_signal_never_torn();

	igt_describe("A CPU waiting for 10 while the GPU signals 1..9 then "
		     "10 takes exactly one interrupt.");
	igt_subtest("interrupt-cpu-waiter-once")
		test_interrupt_cpu_waiter_once();

	igt_describe("Native progress fence signals count as signals but "
		     "raise no interrupt without a waiter, exactly one with "
		     "one.");
	igt_subtest("interrupt-progress-fence")
		test_interrupt_progress_fence();

	igt_describe("A monitored (WDDM 2.x) progress fence has no "
		     "MonitoredValue and raises a monitored fence interrupt "
		     "on every GPU signal, which wakes its CPU waiter; the "
		     "native counters do not move.");
	igt_subtest("interrupt-monitored-progress-fence")
		test_interrupt_monitored_progress();

	igt_describe("32-bit atomics: GPU signals store the low half; "
		     "crossing 2^32 (up or down) takes one interrupt with "
		     "which the driver stores the whole value, signals within "
		     "a high half take none.");
	igt_subtest("gpu32-signal-carry")
		test_gpu32_signal_carry();

	igt_describe("32-bit atomics: a GPU wait across 2^32 holds until the "
		     "value gets there.");
	igt_subtest("gpu32-wait-across-wrap")
		test_gpu32_wait_across_wrap();

	igt_describe("32-bit atomics: SUBMIT, SUBMIT_WAIT and SUBMIT_SIGNAL "
		     "values more than UINT_MAX/2 ahead are refused; the "
		     "progress fence crosses 2^32.");
	igt_subtest("gpu32-submit-window")
		test_gpu32_submit_window();

	igt_describe("An INTRA_GPU fence synchronizes two engines.");
	igt_subtest("intra-gpu-fence")
		test_intra_gpu_fence();

	igt_describe("A queue parked on FENCE_WAIT of a memory word is "
		     "released by another engine's write of a high enough "
		     "value.");
	igt_subtest("gpu-write-releases-wait")
		test_gpu_write_releases_wait();

	igt_describe("A CPU FENCE_SIGNAL releases a queue parked on "
		     "FENCE_WAIT (a lower value does not).");
	igt_subtest("cpu-signal-releases-gpu-wait")
		test_cpu_signal_releases_gpu_wait();

	igt_describe("A legacy SUBMIT_WAIT holds later work (state wait-cpu, "
		     "a kernel CPU waiter) until the CPU signals the value.");
	igt_subtest("legacy-wait-holds-queue")
		test_legacy_wait_holds_queue();

	igt_describe("A legacy SUBMIT_SIGNAL happens only after the earlier "
		     "work of its queue completed.");
	igt_subtest("legacy-signal-after-work")
		test_legacy_signal_after_work();

	igt_describe("A legacy SUBMIT_SIGNAL releases a native GPU wait on "
		     "another engine.");
	igt_subtest("legacy-signal-releases-gpu")
		test_legacy_signal_releases_gpu();

	igt_describe("While a WORK runs, the CMP sleeps until its deadline: "
		     "at most 2 wakeups in 700 ms of a 1 s WORK.");
	igt_subtest("work-no-polling")
		test_work_no_polling();

	igt_describe("Two engines each running WORK 300 ms: the timestamped "
		     "intervals overlap.");
	igt_subtest("engines-concurrent")
		test_engines_concurrent();

	igt_describe("Context scheduling priorities weigh turns on one "
		     "engine: two queues of equal priority alternate; "
		     "priority 7 against 0 runs 8 turns in a row; -7 against "
		     "0 yields until 8 of the other's turns have run.");
	igt_subtest("priority-turns")
		test_priority_turns();

	igt_describe("A queue of priority -7 alone on its engine runs all "
		     "its WORK, one turn each: yielding never leaves the "
		     "engine idle.");
	igt_subtest("priority-alone")
		test_priority_alone();

	igt_describe("A suspended context's queue accepts work and does not "
		     "run it (progress stays) until resumed.");
	igt_subtest("suspend-holds-work")
		test_suspend_holds_work();

	igt_describe("Suspend during a WORK: it finishes, the next command "
		     "waits for resume.");
	igt_subtest("suspend-command-boundary")
		test_suspend_command_boundary();

	igt_describe("A WORK longer than tdr_timeout_ms loses the device: "
		     "fences AlwaysSignaled, DEVICE_LOST, -EIO; another "
		     "device of the file and the other adapter keep running.");
	igt_subtest("hang-device-lost")
		test_hang_device_lost();

	igt_describe("A DISABLE_GPU_TIMEOUT queue survives a WORK longer than "
		     "the TDR timeout.");
	igt_subtest("disable-gpu-timeout")
		test_disable_gpu_timeout();

	igt_describe("With tdr_timeout_ms=0 a WORK twice the default timeout, "
		     "on a queue that did not ask for DISABLE_GPU_TIMEOUT, "
		     "completes and the device is not lost.");
	igt_subtest("tdr-off-long-work")
		test_tdr_off_long_work();

	igt_describe("A process killed with a long WORK, a GPU wait and a "
		     "legacy wait in flight: its file closes and its queues "
		     "leave nfence_queues; the engines serve others.");
	igt_subtest("killed-with-work-in-flight")
		test_killed_with_work_in_flight();

	igt_describe("One client floods engine 0 from 1024 queues with 1 MiB "
		     "buffers of FENCE_SIGNALs that each need a scan of 2000 "
		     "fences; for 10 s another client's submit/wait round "
		     "trips on engine 1 and the longest CMP lock hold stay "
		     "within 10x the 10 ms goal.");
	igt_subtest("adversarial-cmp-load")
		test_adversarial_cmp_load();

	igt_describe("Adversarial CMP load of idle work: 4000 queues parked "
		     "on a FENCE_WAIT that never passes and 28000 fences, "
		     "4000 of them with a CPU waiter that is never "
		     "satisfied, with one queue flooding engine 0 with "
		     "signals that need a scan; the CMP looks at most at 64 "
		     "queues under one hold of its lock, and a scan at most at "
		     "32 fences under one hold of the fence table's lock.");
	igt_subtest("adversarial-parked-queues")
		test_adversarial_parked_queues();

	igt_describe("Writing nfence_cmp_reset_max restarts the CMP's "
		     "longest_pass_us and longest_hold_us: right after, with "
		     "no pass since, the pass reads 0 and the hold only the "
		     "reset's own.");
	igt_subtest("cmp-reset-max")
		test_cmp_reset_max();

	igt_describe("Destroying queues with work parked or running drops "
		     "the work and returns their CPU waiters.");
	igt_subtest("destroy-queue-in-flight")
		test_destroy_queue_in_flight();

	igt_describe("Destroying a context with work in flight on its queues "
		     "drops it.");
	igt_subtest("destroy-context-in-flight")
		test_destroy_context_in_flight();

	igt_describe("Destroying a device with work in flight drops it and "
		     "its fences.");
	igt_subtest("destroy-device-in-flight")
		test_destroy_device_in_flight();

	igt_describe("Closing a file with work in flight on suspended "
		     "contexts does not wait for it, and frees its queues and "
		     "fences.");
	igt_subtest("close-with-work-in-flight")
		test_close_with_work_in_flight();

	igt_describe("Queues wait (natively and legacy) on a fence another "
		     "device of the file created, opened through share/open.");
	igt_subtest("fence-wait-other-device")
		test_fence_wait_other_device();

	igt_describe("Lost wake-ups: a queue signals while a CPU thread "
		     "waits, thousands of times.");
	igt_subtest("stress-gpu-signal-cpu-wait")
		test_stress_gpu_signal_cpu_wait();

	igt_describe("Lost wake-ups: CPU signals release a GPU wait "
		     "thousands of times.");
	igt_subtest("stress-cpu-signal-gpu-wait")
		test_stress_cpu_signal_gpu_wait();

	igt_fixture {
		adv_reap();
		nfence_watchdog(0);
		close(dbg);
		close(fd);
	}
}
