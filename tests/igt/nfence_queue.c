// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Contexts and hardware queues: DRM_IOCTL_NFENCE_"
		     "CONTEXT_CREATE/DESTROY/CONTROL and HWQUEUE_CREATE/"
		     "DESTROY, progress fences, suspend/resume states, "
		     "lifetimes, limits and the rejection of every invalid "
		     "input.");

#define POISON		0xdeadbeefu
#define POISON64	0xdeadbeefcafef00dull
#define WATCHDOG_S	60
#define GONE_MS		2000
#define SYSTEM		NFENCE_SEGMENT_SYSTEM
#define OP_QUERY	DRM_NFENCE_CONTEXT_OP_QUERY
#define OP_SUSPEND	DRM_NFENCE_CONTEXT_OP_SUSPEND
#define OP_RESUME	DRM_NFENCE_CONTEXT_OP_RESUME
#define OP_SET_PRIO	DRM_NFENCE_CONTEXT_OP_SET_PRIORITY
#define OP_GET_PRIO	DRM_NFENCE_CONTEXT_OP_GET_PRIORITY
#define PRIO_MIN	DRM_NFENCE_CONTEXT_PRIORITY_MIN
#define PRIO_MAX	DRM_NFENCE_CONTEXT_PRIORITY_MAX
#define ST_SUSPENDED	DRM_NFENCE_CONTEXT_STATE_SUSPENDED
#define ST_FAULTED	DRM_NFENCE_CONTEXT_STATE_FAULTED
#define ST_LOST		DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST
#define Q_UMS		DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION
#define Q_NATIVE	DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE
#define MAX_CONTEXTS	DRM_NFENCE_MAX_CONTEXTS_PER_FILE
#define MAX_HWQUEUES	DRM_NFENCE_MAX_HWQUEUES_PER_FILE
static int fd = -1;
static int dbg = -1;
/* The debugfs files the subtests use (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_queues", "nfence_device_error",
};
static bool native;
static struct drm_nfence_query_adapter adapter;

/* Queues of this process in nfence_queues. */
static int queues(void)
{
	return nfence_debugfs_count_queues(dbg, getpid());
}

static void assert_queues(int base, int delta)
{
	uint64_t end = nfence_monotonic_ns() + GONE_MS * 1000000ull;

	while (queues() != base + delta && nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_eq(queues(), base + delta);
}

/* The layout of a DEFAULT fence's mapping. */
/*
 * A progress fence's mapping; a @monitored (WDDM 2.x) one has no
 * MonitoredValue.
 */
static void assert_fence_mapping(const struct drm_nfence_fence_mapping *m,
				 bool monitored)
{
	igt_assert_neq_u64(m->cpu_mmap_offset, 0);
	igt_assert_eq_u64(m->cpu_mmap_offset % 4096, 0);
	igt_assert_lt_u64(m->cpu_value_offset, 4096);
	igt_assert_eq_u32(m->cpu_value_offset % 8, 0);
	igt_assert_eq_u32(m->pad, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, 0);
	igt_assert_eq_u64(m->current_value_gpu_va % 8, 0);
	if (monitored) {
		igt_assert_eq_u64(m->monitored_value_gpu_va, 0);
		return;
	}
	igt_assert_neq_u64(m->monitored_value_gpu_va, 0);
	igt_assert_eq_u64(m->monitored_value_gpu_va % 8, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, m->monitored_value_gpu_va);
}

/* CONTEXT_CREATE that must fail: nothing written. */
static void expect_ctx_create_error(int cfd,
				    const struct drm_nfence_context_create *in,
				    int err)
{
	struct drm_nfence_context_create c = *in, orig;

	c.handle = POISON;
	orig = c;
	igt_assert_eq(__nfence_context_create(cfd, &c), err);
	igt_assert_f(!memcmp(&c, &orig, sizeof(c)),
		     "context create struct changed on failure (handle %#x)\n",
		     c.handle);
}

static void expect_ctx_destroy_error(const struct drm_nfence_context_destroy *in,
				     int err)
{
	struct drm_nfence_context_destroy d = *in;

	igt_assert_eq(__nfence_context_destroy(fd, &d), err);
	igt_assert(!memcmp(&d, in, sizeof(d)));
}

static void expect_control_error(const struct drm_nfence_context_control *in,
				 int err)
{
	struct drm_nfence_context_control c = *in, orig;

	c.state = POISON;
	c.fault_va = POISON64;
	c.fault_reason = POISON;
	orig = c;
	igt_assert_eq(__nfence_context_control(fd, &c), err);
	igt_assert_f(!memcmp(&c, &orig, sizeof(c)),
		     "control struct changed on failure (state %#x, va %#"
		     PRIx64 ", reason %#x)\n", c.state, (uint64_t)c.fault_va,
		     c.fault_reason);
}

/* HWQUEUE_CREATE that must fail: nothing written, no queue listed. */
static void expect_q_create_error(int cfd,
				  const struct drm_nfence_hwqueue_create *in,
				  int err)
{
	struct drm_nfence_hwqueue_create c = *in, orig;
	int base = queues();

	c.handle = POISON;
	c.progress_fence = POISON;
	memset(&c.progress_fence_mapping, 0xa5,
	       sizeof(c.progress_fence_mapping));
	orig = c;
	igt_assert_eq(__nfence_hwqueue_create(cfd, &c), err);
	igt_assert_f(!memcmp(&c, &orig, sizeof(c)),
		     "hwqueue create struct changed on failure (handle %#x, "
		     "fence %#x)\n", c.handle, c.progress_fence);
	assert_queues(base, 0);
}

static void expect_q_destroy_error(const struct drm_nfence_hwqueue_destroy *in,
				   int err)
{
	struct drm_nfence_hwqueue_destroy d = *in;

	igt_assert_eq(__nfence_hwqueue_destroy(fd, &d), err);
	igt_assert(!memcmp(&d, in, sizeof(d)));
}

static struct drm_nfence_hwqueue_create q_args(uint32_t device,
					       uint32_t context,
					       uint32_t flags)
{
	struct drm_nfence_hwqueue_create c = {
		.device = device,
		.context = context,
		.flags = flags,
	};

	return c;
}

/* The valid version of @in creates a queue (destroyed again). */
static void expect_q_create_ok(const struct drm_nfence_hwqueue_create *in)
{
	struct drm_nfence_hwqueue_create c = *in;

	igt_assert_eq(__nfence_hwqueue_create(fd, &c), 0);
	nfence_hwqueue_destroy(fd, c.device, c.handle);
}

/* Contexts */

static void test_context_create_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t e = 0; e < adapter.num_engines; e++) {
		struct drm_nfence_context_control ctl;
		uint32_t c = nfence_context_create(fd, dev, e);

		igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_QUERY,
							 &ctl), 0);
		igt_assert_eq_u64(ctl.fault_va, 0);
		igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_NONE);
		igt_assert_eq(ctl.priority, 0);
		/* A new context has the normal priority. */
		nfence_context_control(fd, dev, c, OP_GET_PRIO, &ctl);
		igt_assert_eq(ctl.priority, 0);
		nfence_context_destroy(fd, dev, c);
		igt_assert_eq(__nfence_context_destroy_handle(fd, dev, c),
			      -ENOENT);
		igt_assert(!nfence_context_exists(fd, dev, c));
	}
	nfence_device_destroy(fd, dev);
}

static void test_context_handles_not_reused(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t h[32];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 32; i++) {
		h[i] = nfence_context_create(fd, dev, i % adapter.num_engines);
		nfence_context_destroy(fd, dev, h[i]);
		for (int j = 0; j < i; j++)
			igt_assert_f(h[j] != h[i], "handle %u handed out "
				     "twice\n", h[i]);
	}
	nfence_device_destroy(fd, dev);
}

static void test_context_suspend_resume(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	uint32_t other = nfence_context_create(fd, dev, 0);

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_SUSPEND, NULL),
			  ST_SUSPENDED);
	igt_assert_eq_u32(nfence_context_state(fd, dev, c), ST_SUSPENDED);
	/* Suspending a suspended context succeeds and changes nothing. */
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_SUSPEND, NULL),
			  ST_SUSPENDED);
	/* Per context. */
	igt_assert_eq_u32(nfence_context_state(fd, dev, other), 0);
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_RESUME, NULL),
			  0);
	igt_assert_eq_u32(nfence_context_state(fd, dev, c), 0);
	/* Resuming a running one too. */
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_RESUME, NULL),
			  0);
	igt_assert_eq_u32(nfence_context_control(fd, dev, other, OP_RESUME,
						 NULL), 0);
	/* A suspended context can be destroyed. */
	nfence_context_control(fd, dev, other, OP_SUSPEND, NULL);
	nfence_context_destroy(fd, dev, other);
	nfence_device_destroy(fd, dev);
}

/* GET_PRIORITY of @c of @dev. */
static int32_t get_priority(uint32_t dev, uint32_t c)
{
	struct drm_nfence_context_control ctl;

	nfence_context_control(fd, dev, c, OP_GET_PRIO, &ctl);
	return ctl.priority;
}

/* SET_PRIORITY @prio on @c of @dev; returns GET_PRIORITY's answer after. */
static int32_t set_get_priority(uint32_t dev, uint32_t c, int32_t prio)
{
	nfence_context_set_priority(fd, dev, c, prio);
	return get_priority(dev, c);
}

static void test_context_priority(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	uint32_t other = nfence_context_create(fd, dev, 0);
	struct drm_nfence_context_control ctl;

	nfence_watchdog(WATCHDOG_S);
	for (int32_t p = PRIO_MIN; p <= PRIO_MAX; p++)
		igt_assert_eq(set_get_priority(dev, c, p), p);
	/* Per context. */
	igt_assert_eq(get_priority(dev, other), 0);
	/* The priority is not the state, and survives suspend and resume. */
	igt_assert_eq(set_get_priority(dev, c, PRIO_MIN), PRIO_MIN);
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_SUSPEND, NULL),
			  ST_SUSPENDED);
	igt_assert_eq_u32(nfence_context_control(fd, dev, c, OP_RESUME, &ctl),
			  0);
	/* The other ops do not write it. */
	igt_assert_eq(ctl.priority, 0);
	nfence_context_control(fd, dev, c, OP_GET_PRIO, &ctl);
	igt_assert_eq(ctl.priority, PRIO_MIN);
	igt_assert_eq_u32(ctl.state, 0);
	/* A context with queues takes it too. */
	igt_assert_eq(set_get_priority(dev, other, PRIO_MAX), PRIO_MAX);
	nfence_context_destroy(fd, dev, c);
	nfence_context_destroy(fd, dev, other);
	nfence_device_destroy(fd, dev);
}

static void test_context_destroy_queues(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	uint32_t keep = nfence_context_create(fd, dev, 0);
	struct drm_nfence_fence_mapping m[4];
	uint32_t q[4], pf[4], kq;
	int base = queues();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 4; i++)
		q[i] = nfence_hwqueue_create(fd, dev, c, 0, &pf[i], &m[i]);
	kq = nfence_hwqueue_create(fd, dev, keep, 0, NULL, NULL);
	assert_queues(base, 5);

	nfence_context_destroy(fd, dev, c);
	assert_queues(base, 1);
	for (int i = 0; i < 4; i++) {
		igt_assert_eq(__nfence_hwqueue_destroy_handle(fd, dev, q[i]),
			      -ENOENT);
		/* The progress fence handle went with its queue. */
		igt_assert_eq(__nfence_fence_destroy_handle(fd, pf[i]),
			      -ENOENT);
	}
	/* Queues of other contexts stay. */
	nfence_hwqueue_destroy(fd, dev, kq);
	assert_queues(base, 0);
	nfence_device_destroy(fd, dev);
}

static void test_device_destroy_contexts(void)
{
	uint32_t dev = nfence_device_create(fd);
	int base = queues();
	uint32_t c[3], pf;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 3; i++) {
		c[i] = nfence_context_create(fd, dev, i % adapter.num_engines);
		nfence_hwqueue_create(fd, dev, c[i], 0, &pf, NULL);
	}
	assert_queues(base, 3);
	nfence_device_destroy(fd, dev);
	assert_queues(base, 0);
	igt_assert_eq(__nfence_fence_destroy_handle(fd, pf), -ENOENT);
}

static void test_close_frees_queues(void)
{
	int fd2 = nfence_open();
	uint32_t dev = nfence_device_create(fd2);
	int64_t base;

	nfence_watchdog(WATCHDOG_S);
	base = queues();
	for (int i = 0; i < 4; i++)
		nfence_hwqueue_create(fd2, dev, nfence_context_create(fd2, dev,
								      0),
				      0, NULL, NULL);
	assert_queues(base, 4);
	close(fd2);
	assert_queues(base, 0);
}

/* Hardware queues */

static void test_hwqueue_create_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t e = adapter.num_engines - 1;
	uint32_t c = nfence_context_create(fd, dev, e);
	struct drm_nfence_hwqueue_create qc = q_args(dev, c, 0);
	struct nfence_debugfs_queue line;
	const volatile uint64_t *cv;
	int base = queues();

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(__nfence_hwqueue_create(fd, &qc), 0);
	igt_assert_neq_u32(qc.handle, 0);
	igt_assert_neq_u32(qc.progress_fence, 0);
	igt_assert_eq_u32(qc.pad, 0);
	assert_fence_mapping(&qc.progress_fence_mapping, true);

	/* The progress fence starts at 0 and is a waitable fence. */
	cv = nfence_fence_map(fd, &qc.progress_fence_mapping);
	igt_assert_eq_u64(*cv, 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, qc.progress_fence, 0,
					      0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, qc.progress_fence, 1,
					      0), -ETIME);

	assert_queues(base, 1);
	igt_assert_eq(__nfence_debugfs_queue(dbg, getpid(), dev, c, &line), 0);
	igt_assert_eq_u32(line.engine, e);
	igt_assert_f(!strcmp(line.state, "idle"), "state %s\n", line.state);
	igt_assert_eq_u64(line.pending, 0);
	igt_assert_eq_u64(line.progress, 0);

	nfence_hwqueue_destroy(fd, dev, qc.handle);
	assert_queues(base, 0);
	igt_assert_eq(__nfence_hwqueue_destroy_handle(fd, dev, qc.handle),
		      -ENOENT);
	igt_assert_eq(__nfence_fence_destroy_handle(fd, qc.progress_fence),
		      -ENOENT);
	nfence_fence_unmap(cv);
	nfence_device_destroy(fd, dev);
}

static void test_hwqueue_flags(void)
{
	uint32_t flags[] = {
		0,
		DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT,
		DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL,
		DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT,
		DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS,
		DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT |
		DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL |
		DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT |
		DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS,
		Q_NATIVE,
		Q_NATIVE | DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT,
	};
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++) {
		struct drm_nfence_fence_mapping m;
		uint32_t pf, q;

		if ((flags[i] & Q_NATIVE) && !native)
			continue;
		q = nfence_hwqueue_create(fd, dev, c, flags[i], &pf, &m);
		assert_fence_mapping(&m, !(flags[i] & Q_NATIVE));
		nfence_hwqueue_destroy(fd, dev, q);
	}
	nfence_device_destroy(fd, dev);
}

/*
 * DISABLE_GPU_TIMEOUT lets a queue hold its engine without bound, so it
 * needs CAP_SYS_NICE: a child that dropped every capability gets -EPERM
 * for it (on the parent's file, with valid handles) and still creates
 * queues without it; the parent (root) still may.
 */
static void test_q_create_no_timeout_cap(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	struct drm_nfence_hwqueue_create qc = {
		.device = dev,
		.context = c,
		.flags = DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT,
	};

	nfence_watchdog(WATCHDOG_S);
	igt_fork(child, 1) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct caps[2];

		memset(caps, 0, sizeof(caps));
		igt_assert_eq(syscall(SYS_capset, &hdr, caps), 0);
		igt_assert_eq(__nfence_hwqueue_create(fd, &qc), -EPERM);
		qc.flags = 0;
		igt_assert_eq(__nfence_hwqueue_create(fd, &qc), 0);
		nfence_hwqueue_destroy(fd, dev, qc.handle);
	}
	igt_waitchildren();
	igt_require_f(geteuid() == 0, "the privileged half needs root\n");
	igt_assert_eq(__nfence_hwqueue_create(fd, &qc), 0);
	nfence_hwqueue_destroy(fd, dev, qc.handle);
	nfence_device_destroy(fd, dev);
}

static void test_hwqueue_many(void)
{
	const int n = 16;
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	struct drm_nfence_fence_mapping m[16];
	uint32_t q[16], pf[16];
	int base = queues();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++) {
		q[i] = nfence_hwqueue_create(fd, dev, c, 0, &pf[i], &m[i]);
		for (int j = 0; j < i; j++) {
			igt_assert_neq_u32(q[i], q[j]);
			igt_assert_neq_u32(pf[i], pf[j]);
			igt_assert(m[i].current_value_gpu_va !=
				   m[j].current_value_gpu_va);
			igt_assert(m[i].cpu_mmap_offset !=
				   m[j].cpu_mmap_offset ||
				   m[i].cpu_value_offset !=
				   m[j].cpu_value_offset);
		}
	}
	assert_queues(base, n);
	for (int i = 0; i < n; i++)
		nfence_hwqueue_destroy(fd, dev, q[i]);
	assert_queues(base, 0);
	nfence_device_destroy(fd, dev);
}

static void test_progress_fence_busy(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t c = nfence_context_create(fd, dev, 0);
	struct drm_nfence_fence_destroy d = { 0 };
	uint32_t q;

	nfence_watchdog(WATCHDOG_S);
	q = nfence_hwqueue_create(fd, dev, c, 0, &d.handle, NULL);
	igt_assert_eq(__nfence_fence_destroy(fd, &d), -EBUSY);
	igt_assert_eq(__nfence_fence_destroy(fd, &d), -EBUSY);
	/* Still there and waitable. */
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, d.handle, 0, 0), 0);
	nfence_hwqueue_destroy(fd, dev, q);
	igt_assert_eq(__nfence_fence_destroy(fd, &d), -ENOENT);
	nfence_device_destroy(fd, dev);
}

static void test_progress_fence_cpu_signal(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, native ? Q_NATIVE : 0);
	nfence_fence_signal(fd, dev, q.progress_fence, 7);
	igt_assert_eq_u64(*q.progress, 7);
	igt_assert_eq(nfence_queue_wait(&q, 7, 0), 0);
	nfence_queue_destroy(&q);
	nfence_device_destroy(fd, dev);
}

/* Work on a queue: a WRITE64 lands, the progress fence reaches 1. */
static void check_progress(uint32_t flags)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_queue q;
	struct nfence_bo bo;
	struct nfence_cs cs;

	nfence_queue_create(&q, fd, dev, 0, flags);
	/* A monitored (WDDM 2.x) progress fence has no MonitoredValue. */
	igt_assert_neq_u64(q.progress_mapping.current_value_gpu_va, 0);
	igt_assert_eq(q.progress_mapping.monitored_value_gpu_va != 0,
		      !!(flags & Q_NATIVE));
	nfence_bo_create(fd, dev, 4096, SYSTEM, 0, &bo);
	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, bo.gpu_va + 8, 0x1234);
	igt_assert_eq_u64(nfence_queue_submit(&q, &cs), 1);
	igt_assert_eq(nfence_queue_wait(&q, 1, 10000), 0);
	igt_assert_eq_u64(*q.progress, 1);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 8), 0x1234);

	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, bo.gpu_va + 16, 0x5678);
	igt_assert_eq_u64(nfence_queue_submit(&q, &cs), 2);
	igt_assert_eq(nfence_queue_wait(&q, 2, 10000), 0);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 16), 0x5678);
	nfence_bo_destroy(&bo);
	nfence_queue_destroy(&q);
	nfence_device_destroy(fd, dev);
}

static void test_monitored_progress(void)
{
	nfence_watchdog(WATCHDOG_S);
	check_progress(0);
}

static void test_native_progress(void)
{
	nfence_watchdog(WATCHDOG_S);
	igt_require_f(native, "adapter has no native fences\n");
	check_progress(Q_NATIVE);
}

/*
 * A device put in error through the debugfs hook (@marked false) or by
 * DEVICE_CONTROL's MARK_ERROR (true): the same path, the cause reported.
 */
static void test_device_error_queues(bool marked)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t ok_dev = nfence_device_create(fd);
	struct drm_nfence_context_create cc = { .device = dev };
	struct drm_nfence_device_control dc;
	struct drm_nfence_hwqueue_create qc;
	struct nfence_queue q, ok;
	struct nfence_cs cs;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_create(&ok, fd, ok_dev, 0, 0);
	if (marked)
		igt_assert_eq_u32(nfence_device_control(fd, dev,
							DRM_NFENCE_DEVICE_OP_MARK_ERROR,
							NULL),
				  DRM_NFENCE_DEVICE_ERROR_MARKED);
	else
		nfence_device_error(fd, dev);

	nfence_device_control(fd, dev, DRM_NFENCE_DEVICE_OP_QUERY, &dc);
	igt_assert_eq_u32(dc.error, marked ? DRM_NFENCE_DEVICE_ERROR_MARKED :
					     DRM_NFENCE_DEVICE_ERROR_LOST);
	igt_assert_eq_u32(dc.fault_reason, DRM_NFENCE_FAULT_NONE);
	igt_assert_eq_u64(dc.fault_va, 0);
	igt_assert_eq_u32(dc.fault_context, 0);
	/* Marking it again succeeds and keeps the first cause. */
	igt_assert_eq_u32(nfence_device_control(fd, dev,
						DRM_NFENCE_DEVICE_OP_MARK_ERROR,
						NULL), dc.error);
	igt_assert_eq(__nfence_context_create(fd, &cc), -EIO);

	igt_assert(nfence_context_state(fd, dev, q.context) & ST_LOST);
	igt_assert_eq_u64(*q.progress, NFENCE_ALWAYS_SIGNALED);
	igt_assert_eq(nfence_queue_wait(&q, NFENCE_ALWAYS_SIGNALED, 0), 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_nop(&cs);
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EIO);
	qc = q_args(dev, q.context, 0);
	expect_q_create_error(fd, &qc, -EIO);

	/* The other device is unaffected. */
	igt_assert_eq_u32(nfence_device_control(fd, ok_dev,
						DRM_NFENCE_DEVICE_OP_QUERY,
						NULL),
			  DRM_NFENCE_DEVICE_ERROR_NONE);
	igt_assert_eq_u32(nfence_context_state(fd, ok_dev, ok.context), 0);
	nfence_queue_begin(&ok, &cs);
	nfence_cs_nop(&cs);
	nfence_queue_submit(&ok, &cs);
	nfence_queue_sync(&ok);
	igt_assert_eq_u64(*ok.progress, 1);

	nfence_queue_destroy(&ok);
	nfence_queue_forget(&q);
	nfence_device_destroy(fd, dev);
	nfence_device_destroy(fd, ok_dev);
}

/* CONTEXT_CREATE invalid input */

static void test_ctx_create_bad_flags(void)
{
	struct nfence_env env;
	struct drm_nfence_context_create c = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c.device = env.dev;
	for (int bit = 0; bit < 32; bit++) {
		c.flags = 1u << bit;
		expect_ctx_create_error(fd, &c, -EINVAL);
	}
	c.flags = 0;
	igt_assert_eq(__nfence_context_create(fd, &c), 0);
	nfence_env_fini(&env);
}

static void test_ctx_create_bad_engine(void)
{
	const uint32_t engines[] = {
		adapter.num_engines, adapter.num_engines + 1, 8, 9, 0x100,
		0x80000000u, UINT32_MAX,
	};
	struct nfence_env env;
	struct drm_nfence_context_create c = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c.device = env.dev;
	for (unsigned int i = 0; i < ARRAY_SIZE(engines); i++) {
		if (engines[i] < adapter.num_engines)
			continue;
		c.engine = engines[i];
		expect_ctx_create_error(fd, &c, -EINVAL);
	}
	c.engine = adapter.num_engines - 1;
	igt_assert_eq(__nfence_context_create(fd, &c), 0);
	nfence_env_fini(&env);
}

static void test_ctx_create_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_context_create c = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c.device = nfence_bad_device(&env, bad);
	expect_ctx_create_error(fd, &c, -ENOENT);
	c.device = env.dev;
	igt_assert_eq(__nfence_context_create(fd, &c), 0);
	nfence_env_fini(&env);
}

static void test_ctx_create_max(void)
{
	int fd2 = nfence_open();
	uint32_t dev = nfence_device_create(fd2);
	uint32_t dev2 = nfence_device_create(fd2);
	struct drm_nfence_context_create c = { .device = dev };
	uint32_t first = 0;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < MAX_CONTEXTS; i++) {
		uint32_t h = nfence_context_create(fd2, i % 2 ? dev2 : dev,
						   i % adapter.num_engines);

		if (!i)
			first = h;
	}
	expect_ctx_create_error(fd2, &c, -ENOSPC);
	c.device = dev2;
	expect_ctx_create_error(fd2, &c, -ENOSPC);
	nfence_context_destroy(fd2, dev, first);
	c.device = dev;
	igt_assert_eq(__nfence_context_create(fd2, &c), 0);
	c.handle = 0;
	expect_ctx_create_error(fd2, &c, -ENOSPC);
	/* Another file has its own budget. */
	{
		uint32_t d = nfence_device_create(fd);

		nfence_context_create(fd, d, 0);
		nfence_device_destroy(fd, d);
	}
	close(fd2);
}

static void test_ctx_create_check_order(void)
{
	struct drm_nfence_context_create c = { .device = UINT32_MAX };

	nfence_watchdog(WATCHDOG_S);
	c.flags = 1;
	expect_ctx_create_error(fd, &c, -EINVAL);
	c.flags = 0;
	c.engine = UINT32_MAX;
	expect_ctx_create_error(fd, &c, -EINVAL);
	c.engine = 0;
	expect_ctx_create_error(fd, &c, -ENOENT);
}

/* CONTEXT_DESTROY invalid input */

static void test_ctx_destroy_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_context_destroy d;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	d.handle = nfence_context_create(fd, env.dev, 0);
	d.device = nfence_bad_device(&env, bad);
	expect_ctx_destroy_error(&d, -ENOENT);
	igt_assert(nfence_context_exists(fd, env.dev, d.handle));
	d.device = env.dev;
	igt_assert_eq(__nfence_context_destroy(fd, &d), 0);
	nfence_env_fini(&env);
}

static void test_ctx_destroy_bad_handle(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_context_destroy d;
	uint32_t c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = nfence_context_create(fd, env.dev, 0);
	d.device = env.dev;
	d.handle = nfence_bad_handle(&env, NFENCE_KIND_CONTEXT, bad, &c, 1);
	expect_ctx_destroy_error(&d, -ENOENT);
	igt_assert(nfence_context_exists(fd, env.dev, c));
	d.handle = c;
	igt_assert_eq(__nfence_context_destroy(fd, &d), 0);
	nfence_env_fini(&env);
}

/* CONTEXT_CONTROL invalid input */

/* A fresh environment and @c naming a new context of its device. */
static void control_setup(struct nfence_env *env,
			  struct drm_nfence_context_control *c)
{
	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(env, fd);
	memset(c, 0, sizeof(*c));
	c->device = env->dev;
	c->context = nfence_context_create(fd, env->dev, 0);
}

static void test_control_bad_op(void)
{
	const uint32_t ops[] = { 5, 6, 0x100, 0x80000000u, UINT32_MAX };
	struct nfence_env env;
	struct drm_nfence_context_control c;

	control_setup(&env, &c);
	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		c.op = ops[i];
		expect_control_error(&c, -EINVAL);
	}
	/* Nothing was suspended by accident. */
	igt_assert_eq_u32(nfence_context_state(fd, env.dev, c.context), 0);
	nfence_env_fini(&env);
}

/* Every op but SET_PRIORITY takes @priority zero. */
static void test_control_nonzero_priority(void)
{
	struct nfence_env env;
	struct drm_nfence_context_control c;

	control_setup(&env, &c);
	for (uint32_t op = OP_QUERY; op <= OP_GET_PRIO; op++) {
		if (op == OP_SET_PRIO)
			continue;
		for (int bit = 0; bit < 32; bit++) {
			c.op = op;
			c.priority = (int32_t)(1u << bit);
			expect_control_error(&c, -EINVAL);
		}
		/* Even a priority SET_PRIORITY would take. */
		c.priority = PRIO_MIN;
		expect_control_error(&c, -EINVAL);
	}
	igt_assert_eq_u32(nfence_context_state(fd, env.dev, c.context), 0);
	nfence_env_fini(&env);
}

static void test_control_bad_priority(void)
{
	/*
	 * Out of -7..7, including Windows' absolute priorities (bit 30 set
	 * with a level in bits 0-4), which nfence does not take.
	 */
	const int32_t bad[] = { PRIO_MIN - 1, PRIO_MAX + 1, 8, 31, 0x100,
				0x40000000, 0x40000001, 0x4000001e,
				INT32_MIN, INT32_MAX, -0x40000000 };
	struct nfence_env env;
	struct drm_nfence_context_control c;

	control_setup(&env, &c);
	igt_assert_eq(set_get_priority(env.dev, c.context, 3), 3);
	c.op = OP_SET_PRIO;
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		c.priority = bad[i];
		expect_control_error(&c, -EINVAL);
	}
	/* Nothing changed. */
	igt_assert_eq(get_priority(env.dev, c.context), 3);
	nfence_env_fini(&env);
}

static void test_control_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_context_control c = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c.context = nfence_context_create(fd, env.dev, 0);
	c.device = nfence_bad_device(&env, bad);
	for (uint32_t op = OP_QUERY; op <= OP_GET_PRIO; op++) {
		c.op = op;
		/* A valid priority, so that only the handle is wrong. */
		c.priority = op == OP_SET_PRIO ? PRIO_MAX : 0;
		expect_control_error(&c, -ENOENT);
	}
	c.priority = 0;
	c.op = OP_SUSPEND;
	c.device = env.dev;
	igt_assert_eq(__nfence_context_control(fd, &c), 0);
	igt_assert_eq_u32(c.state, ST_SUSPENDED);
	nfence_env_fini(&env);
}

static void test_control_bad_context(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_context_control c = { 0 };
	uint32_t ctx;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	ctx = nfence_context_create(fd, env.dev, 0);
	c.device = env.dev;
	c.context = nfence_bad_handle(&env, NFENCE_KIND_CONTEXT, bad, &ctx, 1);
	for (uint32_t op = OP_QUERY; op <= OP_GET_PRIO; op++) {
		c.op = op;
		c.priority = op == OP_SET_PRIO ? PRIO_MAX : 0;
		expect_control_error(&c, -ENOENT);
	}
	igt_assert_eq_u32(nfence_context_state(fd, env.dev, ctx), 0);
	igt_assert_eq(get_priority(env.dev, ctx), 0);
	nfence_env_fini(&env);
}

static void test_control_check_order(void)
{
	struct drm_nfence_context_control c = {
		.device = UINT32_MAX,
		.context = UINT32_MAX,
	};

	nfence_watchdog(WATCHDOG_S);
	c.op = 5;
	expect_control_error(&c, -EINVAL);
	c.op = OP_QUERY;
	c.priority = 1;
	expect_control_error(&c, -EINVAL);
	c.op = OP_SET_PRIO;
	c.priority = PRIO_MAX + 1;
	expect_control_error(&c, -EINVAL);
	c.priority = PRIO_MAX;
	expect_control_error(&c, -ENOENT);
	c.op = OP_QUERY;
	c.priority = 0;
	expect_control_error(&c, -ENOENT);
}

/* HWQUEUE_CREATE invalid input */

static void test_q_create_bad_flags(void)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = q_args(env.dev, nfence_context_create(fd, env.dev, 0), 0);
	for (int bit = 6; bit < 32; bit++) {
		c.flags = 1u << bit;
		expect_q_create_error(fd, &c, -EINVAL);
		/* Also with valid bits next to it. */
		c.flags |= DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;
		expect_q_create_error(fd, &c, -EINVAL);
	}
	c.flags = ~NFENCE_HWQUEUE_VALID_FLAGS;
	expect_q_create_error(fd, &c, -EINVAL);
	/* Unknown bits win over USER_MODE_SUBMISSION's -EOPNOTSUPP. */
	c.flags = Q_UMS | 1u << 6;
	expect_q_create_error(fd, &c, -EINVAL);
	c.flags = 0;
	expect_q_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_q_create_bad_pad(void)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = q_args(env.dev, nfence_context_create(fd, env.dev, 0), 0);
	for (int bit = 0; bit < 32; bit++) {
		c.pad = 1u << bit;
		expect_q_create_error(fd, &c, -EINVAL);
	}
	c.pad = 0;
	expect_q_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_q_create_ums(void)
{
	struct drm_nfence_query_engines *engines;
	struct drm_nfence_hwqueue_create c;
	struct nfence_env env;
	uint32_t size, ctx;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	engines = nfence_query_alloc(fd, DRM_NFENCE_QUERY_ENGINES, &size);
	igt_assert_eq(engines->num_engines, adapter.num_engines);
	for (uint32_t e = 0; e < engines->num_engines; e++) {
		bool ums = engines->engines[e].flags &
			   DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION;

		/* The engine's cap and the queue agree. */
		ctx = nfence_context_create(fd, env.dev, e);
		c = q_args(env.dev, ctx, Q_UMS);
		if (ums)
			expect_q_create_ok(&c);
		else
			expect_q_create_error(fd, &c, -EOPNOTSUPP);
		c.flags = Q_UMS | DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;
		if (ums)
			expect_q_create_ok(&c);
		else
			expect_q_create_error(fd, &c, -EOPNOTSUPP);
		if (native) {
			c.flags = Q_UMS | Q_NATIVE;
			if (ums)
				expect_q_create_ok(&c);
			else
				expect_q_create_error(fd, &c, -EOPNOTSUPP);
		}
		c.flags = 0;
		expect_q_create_ok(&c);
	}
	free(engines);
	nfence_env_fini(&env);
}

static void test_q_create_native_unsupported(void)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(!native, "the adapter has native fences\n");
	nfence_env_init(&env, fd);
	c = q_args(env.dev, nfence_context_create(fd, env.dev, 0), Q_NATIVE);
	expect_q_create_error(fd, &c, -EOPNOTSUPP);
	c.flags = Q_NATIVE | DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT;
	expect_q_create_error(fd, &c, -EOPNOTSUPP);
	c.flags = 0;
	expect_q_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_q_create_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = q_args(nfence_bad_device(&env, bad),
		   nfence_context_create(fd, env.dev, 0), 0);
	expect_q_create_error(fd, &c, -ENOENT);
	c.device = env.dev;
	expect_q_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_q_create_bad_context(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;
	uint32_t ctx;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	ctx = nfence_context_create(fd, env.dev, 0);
	c = q_args(env.dev,
		   nfence_bad_handle(&env, NFENCE_KIND_CONTEXT, bad, &ctx, 1),
		   0);
	expect_q_create_error(fd, &c, -ENOENT);
	c.context = ctx;
	expect_q_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_q_create_max(void)
{
	int fd2 = nfence_open();
	uint32_t dev = nfence_device_create(fd2);
	uint32_t dev2 = nfence_device_create(fd2);
	uint32_t c = nfence_context_create(fd2, dev, 0);
	uint32_t c2 = nfence_context_create(fd2, dev2, 1 % adapter.num_engines);
	struct drm_nfence_hwqueue_create qc;
	uint32_t first = 0;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < MAX_HWQUEUES; i++) {
		uint32_t q = nfence_hwqueue_create(fd2, i % 2 ? dev2 : dev,
						   i % 2 ? c2 : c, 0, NULL,
						   NULL);

		if (!i)
			first = q;
	}
	qc = q_args(dev, c, 0);
	expect_q_create_error(fd2, &qc, -ENOSPC);
	qc = q_args(dev2, c2, 0);
	expect_q_create_error(fd2, &qc, -ENOSPC);
	nfence_hwqueue_destroy(fd2, dev, first);
	qc = q_args(dev, c, 0);
	igt_assert_eq(__nfence_hwqueue_create(fd2, &qc), 0);
	qc = q_args(dev, c, 0);
	expect_q_create_error(fd2, &qc, -ENOSPC);
	close(fd2);
}

static void test_q_create_check_order(void)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	/* -EINVAL before -ENOENT ... */
	c = q_args(UINT32_MAX, UINT32_MAX, 1u << 6);
	expect_q_create_error(fd, &c, -EINVAL);
	c = q_args(UINT32_MAX, UINT32_MAX, 0);
	c.pad = 1;
	expect_q_create_error(fd, &c, -EINVAL);
	/* ... -ENOENT before -EOPNOTSUPP. */
	c = q_args(UINT32_MAX, UINT32_MAX, Q_UMS);
	expect_q_create_error(fd, &c, -ENOENT);
	c = q_args(env.dev, UINT32_MAX, Q_UMS);
	expect_q_create_error(fd, &c, -ENOENT);
	if (!native) {
		c = q_args(env.dev, UINT32_MAX, Q_NATIVE);
		expect_q_create_error(fd, &c, -ENOENT);
	}
	nfence_env_fini(&env);
}

/* HWQUEUE_DESTROY invalid input */

static void test_q_destroy_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_destroy d;
	int base;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	d.handle = nfence_make(fd, env.dev, NFENCE_KIND_HWQUEUE);
	base = queues();
	d.device = nfence_bad_device(&env, bad);
	expect_q_destroy_error(&d, -ENOENT);
	assert_queues(base, 0);
	d.device = env.dev;
	igt_assert_eq(__nfence_hwqueue_destroy(fd, &d), 0);
	nfence_env_fini(&env);
}

static void test_q_destroy_bad_handle(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_hwqueue_destroy d;
	uint32_t q;
	int base;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	q = nfence_make(fd, env.dev, NFENCE_KIND_HWQUEUE);
	d.device = env.dev;
	d.handle = nfence_bad_handle(&env, NFENCE_KIND_HWQUEUE, bad, &q, 1);
	base = queues();
	expect_q_destroy_error(&d, -ENOENT);
	assert_queues(base, 0);
	d.handle = q;
	igt_assert_eq(__nfence_hwqueue_destroy(fd, &d), 0);
	nfence_env_fini(&env);
}

static void test_bad_arg_pointer(void)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_CONTEXT_CREATE,
		DRM_IOCTL_NFENCE_CONTEXT_DESTROY,
		DRM_IOCTL_NFENCE_CONTEXT_CONTROL,
		DRM_IOCTL_NFENCE_HWQUEUE_CREATE,
		DRM_IOCTL_NFENCE_HWQUEUE_DESTROY,
	};

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

igt_main
{
	static const enum nfence_bad bad_devices[] = {
		NFENCE_BAD_ZERO, NFENCE_BAD_UNKNOWN, NFENCE_BAD_DESTROYED,
		NFENCE_BAD_OTHER_FD, NFENCE_BAD_WRONG_KIND,
	};

	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		native = adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
		dbg = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
	}

	igt_describe("A context on every engine: state 0, no fault; destroy "
		     "makes the handle unknown.");
	igt_subtest("context-create-destroy")
		test_context_create_destroy();

	igt_describe("A destroyed context handle is not handed out again "
		     "right away.");
	igt_subtest("context-handles-not-reused")
		test_context_handles_not_reused();

	igt_describe("SUSPEND/RESUME set and clear the SUSPENDED state, "
		     "idempotently and per context.");
	igt_subtest("context-suspend-resume")
		test_context_suspend_resume();

	igt_describe("SET_PRIORITY takes every priority from -7 to 7 and "
		     "GET_PRIORITY reports it; a new context has 0; the "
		     "priority is per context and survives suspend and "
		     "resume, and the other ops neither take nor write it.");
	igt_subtest("context-priority")
		test_context_priority();

	igt_describe("Destroying a context destroys its queues and their "
		     "progress fence handles, not other contexts' queues.");
	igt_subtest("context-destroy-queues")
		test_context_destroy_queues();

	igt_describe("Destroying a device destroys its contexts and queues.");
	igt_subtest("device-destroy-contexts")
		test_device_destroy_contexts();

	igt_describe("Closing the file removes its queues from "
		     "nfence_queues.");
	igt_subtest("close-frees-queues")
		test_close_frees_queues();

	igt_describe("Create a queue: handle, progress fence with a DEFAULT "
		     "fence mapping at 0, an idle nfence_queues line on the "
		     "context's engine; destroy closes both handles.");
	igt_subtest("hwqueue-create-destroy")
		test_hwqueue_create_destroy();

	igt_describe("Every accepted queue flag combination creates a queue.");
	igt_subtest("hwqueue-flags")
		test_hwqueue_flags();

	igt_describe("Many queues on one context: distinct handles and "
		     "progress fences.");
	igt_subtest("hwqueue-many")
		test_hwqueue_many();

	igt_describe("FENCE_DESTROY on a progress fence fails with -EBUSY; "
		     "the handle closes with the queue.");
	igt_subtest("progress-fence-busy")
		test_progress_fence_busy();

	igt_describe("The CPU may signal a progress fence.");
	igt_subtest("progress-fence-cpu-signal")
		test_progress_fence_cpu_signal();

	igt_describe("A queue with a monitored (non-native) progress fence "
		     "runs work and signals it.");
	igt_subtest("hwqueue-monitored-progress")
		test_monitored_progress();

	igt_describe("A queue with NATIVE_PROGRESS_FENCE runs work and "
		     "signals it.");
	igt_subtest("hwqueue-native-progress")
		test_native_progress();

	igt_describe("A device put in error (debugfs hook): its contexts show "
		     "DEVICE_LOST, progress fences AlwaysSignaled, SUBMIT and "
		     "HWQUEUE_CREATE fail with -EIO; other devices run.");
	igt_subtest("device-error-queues")
		test_device_error_queues(false);

	igt_describe("DEVICE_CONTROL MARK_ERROR does what the device-lost "
		     "path does (as device-error-queues), and CONTEXT_CREATE "
		     "fails with -EIO; marking twice keeps the cause.");
	igt_subtest("mark-error-queues")
		test_device_error_queues(true);

	igt_describe("Any CONTEXT_CREATE flag bit fails with -EINVAL.");
	igt_subtest("context-create-bad-flags")
		test_ctx_create_bad_flags();

	igt_describe("An engine the adapter does not have fails with "
		     "-EINVAL.");
	igt_subtest("context-create-bad-engine")
		test_ctx_create_bad_engine();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("CONTEXT_CREATE on a %s device handle fails "
			       "with -ENOENT.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("context-create-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_ctx_create_bad_device(bad_devices[i]);
	}

	igt_describe("256 contexts per file over its devices; the next fails "
		     "with -ENOSPC; destroying one makes room.");
	igt_subtest("context-create-max")
		test_ctx_create_max();

	igt_describe("CONTEXT_CREATE checks flags and engine before the "
		     "device.");
	igt_subtest("context-create-check-order")
		test_ctx_create_check_order();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("CONTEXT_DESTROY with a %s device handle fails "
			       "with -ENOENT.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("context-destroy-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_ctx_destroy_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("CONTEXT_DESTROY of a %s context handle fails "
			       "with -ENOENT.", nfence_bad_name(b));
		igt_subtest_f("context-destroy-handle-%s", nfence_bad_name(b))
			test_ctx_destroy_bad_handle(b);
	}

	igt_describe("An unknown CONTEXT_CONTROL op fails with -EINVAL, "
		     "nothing written.");
	igt_subtest("control-bad-op")
		test_control_bad_op();

	igt_describe("A non-zero CONTEXT_CONTROL priority with another op "
		     "than SET_PRIORITY fails with -EINVAL, nothing written.");
	igt_subtest("control-nonzero-priority")
		test_control_nonzero_priority();

	igt_describe("SET_PRIORITY outside -7..7 (Windows' absolute "
		     "priorities included) fails with -EINVAL, nothing "
		     "written, the priority unchanged.");
	igt_subtest("control-bad-priority")
		test_control_bad_priority();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("CONTEXT_CONTROL with a %s device handle fails "
			       "with -ENOENT for every op.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("control-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_control_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("CONTEXT_CONTROL of a %s context handle fails "
			       "with -ENOENT for every op.",
			       nfence_bad_name(b));
		igt_subtest_f("control-context-%s", nfence_bad_name(b))
			test_control_bad_context(b);
	}

	igt_describe("CONTEXT_CONTROL checks op and priority before "
		     "handles.");
	igt_subtest("control-check-order")
		test_control_check_order();

	igt_describe("Unknown HWQUEUE_CREATE flag bits fail with -EINVAL.");
	igt_subtest("hwqueue-create-bad-flags")
		test_q_create_bad_flags();

	igt_describe("Non-zero HWQUEUE_CREATE pad fails with -EINVAL.");
	igt_subtest("hwqueue-create-bad-pad")
		test_q_create_bad_pad();

	igt_describe("USER_MODE_SUBMISSION succeeds on every engine that "
		     "reports UserModeSubmissionSupported and fails with "
		     "-EOPNOTSUPP on the others.");
	igt_subtest("hwqueue-create-user-mode-submission")
		test_q_create_ums();

	igt_describe("DISABLE_GPU_TIMEOUT needs CAP_SYS_NICE: -EPERM without "
		     "it, and a queue without the flag is still created.");
	igt_subtest("hwqueue-create-no-timeout-unprivileged")
		test_q_create_no_timeout_cap();

	igt_describe("NATIVE_PROGRESS_FENCE on an adapter without native "
		     "fences fails with -EOPNOTSUPP.");
	igt_subtest("hwqueue-create-native-progress-unsupported")
		test_q_create_native_unsupported();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("HWQUEUE_CREATE on a %s device handle fails "
			       "with -ENOENT.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("hwqueue-create-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_q_create_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("HWQUEUE_CREATE on a %s context handle fails "
			       "with -ENOENT.", nfence_bad_name(b));
		igt_subtest_f("hwqueue-create-context-%s", nfence_bad_name(b))
			test_q_create_bad_context(b);
	}

	igt_describe("1024 queues per file over its devices; the next fails "
		     "with -ENOSPC; destroying one makes room.");
	igt_subtest("hwqueue-create-max")
		test_q_create_max();

	igt_describe("HWQUEUE_CREATE checks: -EINVAL, then -ENOENT, then "
		     "-EOPNOTSUPP.");
	igt_subtest("hwqueue-create-check-order")
		test_q_create_check_order();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("HWQUEUE_DESTROY with a %s device handle fails "
			       "with -ENOENT, destroying nothing.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("hwqueue-destroy-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_q_destroy_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("HWQUEUE_DESTROY of a %s queue handle fails "
			       "with -ENOENT.", nfence_bad_name(b));
		igt_subtest_f("hwqueue-destroy-handle-%s", nfence_bad_name(b))
			test_q_destroy_bad_handle(b);
	}

	igt_describe("An unreadable ioctl argument fails with -EFAULT.");
	igt_subtest("bad-arg-pointer")
		test_bad_arg_pointer();

	igt_fixture {
		nfence_watchdog(0);
		close(dbg);
		close(fd);
	}
}
