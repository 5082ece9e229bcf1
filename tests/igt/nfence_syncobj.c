// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("DRM_IOCTL_NFENCE_SYNCOBJ_BIND: a native fence value "
		     "makes a signaled drm_syncobj timeline point appear, "
		     "with an error when the fence can no longer get there; "
		     "the rejection of invalid input; lifetimes.");

#define TIMEOUT_MS	5000
#define POISON64	0xdeadbeefcafef00dull

static int fd = -1;
static uint32_t dev;
static struct drm_nfence_query_adapter adapter;

static int __syncobj_bind(int dfd, struct drm_nfence_syncobj_bind *b)
{
	if (drmIoctl(dfd, DRM_IOCTL_NFENCE_SYNCOBJ_BIND, b))
		return -errno;
	return 0;
}

static int __bind(int dfd, uint32_t device, uint32_t fence, uint64_t value,
		  uint32_t syncobj, uint64_t point)
{
	struct drm_nfence_syncobj_bind b = {
		.device = device,
		.fence = fence,
		.value = value,
		.syncobj = syncobj,
		.point = point,
	};

	return __syncobj_bind(dfd, &b);
}

static void bind(int dfd, uint32_t device, uint32_t fence, uint64_t value,
		 uint32_t syncobj, uint64_t point)
{
	igt_assert_eq(__bind(dfd, device, fence, value, syncobj, point), 0);
}

static uint32_t syncobj_create(int dfd)
{
	uint32_t h = 0;

	igt_assert_eq(drmSyncobjCreate(dfd, 0, &h), 0);
	igt_assert_neq_u32(h, 0);
	return h;
}

static uint32_t fence_create(int dfd, uint32_t device, uint64_t initial)
{
	return nfence_fence_create(dfd, device, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				   0, initial, NULL);
}

/* The syncobj's payload: its last signaled point. */
static uint64_t syncobj_query(int dfd, uint32_t syncobj)
{
	uint64_t point = POISON64;

	igt_assert_eq(drmSyncobjQuery(dfd, &syncobj, &point, 1), 0);
	return point;
}

static int __point_wait(int dfd, uint32_t syncobj, uint64_t point,
			unsigned int ms, uint32_t flags)
{
	int64_t deadline = nfence_monotonic_ns() + (int64_t)ms * 1000000;

	if (drmSyncobjTimelineWait(dfd, &syncobj, &point, 1, deadline, flags,
				   NULL))
		return -errno;
	return 0;
}

static void point_wait(int dfd, uint32_t syncobj, uint64_t point)
{
	igt_assert_eq(__point_wait(dfd, syncobj, point, TIMEOUT_MS,
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT), 0);
}

/* The point does not exist: a WAIT_FOR_SUBMIT wait times out. */
static void assert_no_point(int dfd, uint32_t syncobj, uint64_t point)
{
	igt_assert_eq(__point_wait(dfd, syncobj, point, 20,
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT),
		      -ETIME);
	igt_assert_eq(__point_wait(dfd, syncobj, point, 0,
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE),
		      -ETIME);
}

/*
 * Wait for the point, then check what its fence carries. The timeline's
 * last point keeps the driver's fence; a signaled point below it may have
 * become a stub (no error to read), which drm_syncobj is free to do.
 */
static void assert_point(int dfd, uint32_t syncobj, uint64_t point,
			 int status)
{
	uint64_t last;
	int sf, got;

	point_wait(dfd, syncobj, point);
	last = syncobj_query(dfd, syncobj);
	igt_assert_lte_u64(point, last);
	sf = nfence_syncobj_point_sync_file(dfd, syncobj, point);
	got = nfence_sync_file_bridge_status(sf);
	close(sf);
	if (point == last)
		igt_assert_eq(got, status);
	else
		igt_assert_f(got == 0 || got == status,
			     "point %llu: status %d, expected %d\n",
			     (unsigned long long)point, got, status);
}

static void expect_bind_error(uint32_t device, uint32_t fence, uint64_t value,
			      uint32_t syncobj, uint64_t point, uint32_t flags,
			      int err)
{
	struct drm_nfence_syncobj_bind b = {
		.device = device,
		.fence = fence,
		.value = value,
		.syncobj = syncobj,
		.flags = flags,
		.point = point,
	};

	uint64_t last = POISON64;

	igt_assert_eq(__syncobj_bind(fd, &b), err);
	/* Nothing was attached to a syncobj that exists. */
	if (!drmSyncobjQuery(fd, &syncobj, &last, 1))
		igt_assert_eq_u64(last, 0);
}

/* Invalid inputs: each with everything else valid. */
static void test_bad_flags(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);

	for (unsigned int bit = 0; bit < 32; bit++)
		expect_bind_error(dev, f, 1, s, 1, 1u << bit, -EINVAL);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_point(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);

	expect_bind_error(dev, f, 1, s, 0, 0, -EINVAL);
	/* Nor when the value is already reached. */
	expect_bind_error(dev, f, 0, s, 0, 0, -EINVAL);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_device(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	uint32_t other = nfence_device_create(fd);
	uint32_t gone = nfence_device_create(fd);

	nfence_device_destroy(fd, gone);
	expect_bind_error(0, f, 1, s, 1, 0, -ENOENT);
	expect_bind_error(gone, f, 1, s, 1, 0, -ENOENT);
	/* A device of the file, but not the fence's. */
	expect_bind_error(other, f, 1, s, 1, 0, -ENOENT);
	nfence_device_destroy(fd, other);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_fence(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	int ofd = nfence_open();
	uint32_t odev = nfence_device_create(ofd);
	uint32_t of = fence_create(ofd, odev, 0);

	expect_bind_error(dev, 0, 1, s, 1, 0, -ENOENT);
	nfence_fence_destroy(fd, f);
	expect_bind_error(dev, f, 1, s, 1, 0, -ENOENT);
	/* Another file's handle names nothing here. */
	if (of != f)
		expect_bind_error(dev, of, 1, s, 1, 0, -ENOENT);
	close(ofd);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_syncobj(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	int ofd = nfence_open();
	uint32_t os = syncobj_create(ofd), probe = syncobj_create(fd);

	expect_bind_error(dev, f, 1, 0, 1, 0, -ENOENT);
	igt_assert_eq(drmSyncobjDestroy(fd, s), 0);
	expect_bind_error(dev, f, 1, s, 1, 0, -ENOENT);
	expect_bind_error(dev, f, 0, s, 1, 0, -ENOENT);
	/* Another file's syncobj handle names nothing here. */
	if (os != probe)
		expect_bind_error(dev, f, 1, os, 1, 0, -ENOENT);
	close(ofd);
	drmSyncobjDestroy(fd, probe);
	nfence_fence_destroy(fd, f);
}

static void test_no_wait_handle(void)
{
	uint32_t f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
					 DRM_NFENCE_FENCE_NO_WAIT, 0, NULL);
	uint32_t s = syncobj_create(fd);

	expect_bind_error(dev, f, 1, s, 1, 0, -EACCES);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_intra_gpu(void)
{
	struct drm_nfence_query_fence_caps caps;
	uint32_t f, s = syncobj_create(fd);

	nfence_query_fence_caps(fd, &caps);
	igt_require(caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0, 0,
				NULL);
	expect_bind_error(dev, f, 1, s, 1, 0, -EINVAL);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/*
 * No 64-bit atomics: a value more than UINT_MAX/2 ahead of CurrentValue
 * fails with -EINVAL and nothing is bound; the last value in the window
 * binds.
 */
static void test_value_outside_window(void)
{
	struct drm_nfence_query_fence_caps caps;
	uint32_t f, s = syncobj_create(fd);

	nfence_query_fence_caps(fd, &caps);
	igt_require_f(caps.value_bits == 32, "%u-bit fence values\n",
		      caps.value_bits);
	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 5,
				NULL);
	expect_bind_error(dev, f, 5 + (UINT32_MAX / 2) + 1, s, 1, 0, -EINVAL);
	expect_bind_error(dev, f, UINT64_MAX, s, 1, 0, -EINVAL);
	/* The window's edge is fine: the binding is pending. */
	igt_assert_eq(__bind(fd, dev, f, 5 + UINT32_MAX / 2, s, 1), 0);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_args_efault(void)
{
	static const unsigned long req[] = { DRM_IOCTL_NFENCE_SYNCOBJ_BIND };

	nfence_assert_args_efault(fd, req, ARRAY_SIZE(req));
}

/*
 * Bindings pending per file are capped; the points then attach. On a file
 * of its own, so that a failure leaves no binding behind for the others.
 */
static void test_too_many(void)
{
	int tfd = nfence_open();
	uint32_t tdev = nfence_device_create(tfd);
	uint32_t f = fence_create(tfd, tdev, 0), s = syncobj_create(tfd);
	uint32_t s2 = syncobj_create(tfd);
	uint64_t n = DRM_NFENCE_MAX_SYNCOBJ_BINDINGS;

	for (uint64_t i = 1; i <= n; i++)
		bind(tfd, tdev, f, i, s, i);
	igt_assert_eq(__bind(tfd, tdev, f, n + 1, s2, 1), -ENOSPC);
	igt_assert_eq_u64(syncobj_query(tfd, s2), 0);
	/* A value already reached needs no room. */
	bind(tfd, tdev, f, 0, s2, 1);
	igt_assert_eq_u64(syncobj_query(tfd, s2), 1);
	/* Another file has room of its own. */
	{
		uint32_t g = fence_create(fd, dev, 0), gs = syncobj_create(fd);

		bind(fd, dev, g, 1, gs, 1);
		nfence_fence_signal(fd, dev, g, 1);
		assert_point(fd, gs, 1, 1);
		nfence_fence_destroy(fd, g);
		drmSyncobjDestroy(fd, gs);
	}

	nfence_fence_signal(tfd, tdev, f, n);
	assert_point(tfd, s, n, 1);
	igt_assert_eq_u64(syncobj_query(tfd, s), n);
	/* The work item frees the room after it attaches; give it time. */
	for (int i = 0; i < 1000; i++) {
		if (!__bind(tfd, tdev, f, n + 1, s2, 2))
			break;
		usleep(1000);
	}
	nfence_fence_signal(tfd, tdev, f, n + 1);
	assert_point(tfd, s2, 2, 1);
	close(tfd);
}

/* Bind, then signal from the CPU: the point appears, signaled. */
static void test_cpu_signal(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);

	bind(fd, dev, f, 5, s, 3);
	assert_no_point(fd, s, 3);
	igt_assert_eq_u64(syncobj_query(fd, s), 0);
	nfence_fence_signal(fd, dev, f, 4);
	assert_no_point(fd, s, 3);
	nfence_fence_signal(fd, dev, f, 5);
	point_wait(fd, s, 3);
	igt_assert_eq(__point_wait(fd, s, 3, 0,
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE), 0);
	/* Signaled, not only available: a plain wait passes at once. */
	igt_assert_eq(__point_wait(fd, s, 3, 0, 0), 0);
	igt_assert_eq_u64(syncobj_query(fd, s), 3);
	assert_point(fd, s, 3, 1);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

struct point_waiter {
	int fd;
	uint32_t syncobj;
	uint64_t point;
	int ret;
};

static void *point_waiter_main(void *data)
{
	struct point_waiter *w = data;

	w->ret = __point_wait(w->fd, w->syncobj, w->point, TIMEOUT_MS,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
	return NULL;
}

/* A waiter asleep before the bind's value is reached is woken by it. */
static void test_cpu_signal_sleeping(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	struct point_waiter w = { .fd = fd, .syncobj = s, .point = 7,
				  .ret = 1 };
	pthread_t t;

	bind(fd, dev, f, 1, s, 7);
	igt_assert_eq(nfence_thread_create(&t, point_waiter_main, &w), 0);
	usleep(50 * 1000);
	igt_assert_eq(w.ret, 1);
	nfence_fence_signal(fd, dev, f, 1);
	igt_assert_eq(nfence_thread_join(t, TIMEOUT_MS), 0);
	igt_assert_eq(w.ret, 0);
	igt_assert_eq_u64(syncobj_query(fd, s), 7);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* A GPU FENCE_SIGNAL reaching the value makes the point appear. */
static void test_gpu_signal(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t f, s = syncobj_create(fd);

	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	bind(fd, dev, f, 10, s, 2);
	assert_no_point(fd, s, 2);

	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &m, 9);
	nfence_queue_submit(&q, &cs);
	nfence_queue_sync(&q);
	assert_no_point(fd, s, 2);

	nfence_queue_begin(&q, &cs);
	nfence_cs_work(&cs, 20 * 1000 * 1000);
	nfence_cs_signal_fence(&cs, &m, 10);
	nfence_queue_submit(&q, &cs);
	point_wait(fd, s, 2);
	igt_assert_eq_u64(syncobj_query(fd, s), 2);
	assert_point(fd, s, 2, 1);
	nfence_queue_sync(&q);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* A value already reached attaches the point before the call returns. */
static void test_already_reached(void)
{
	uint32_t f = fence_create(fd, dev, 8), s = syncobj_create(fd);

	bind(fd, dev, f, 8, s, 4);
	igt_assert_eq_u64(syncobj_query(fd, s), 4);
	bind(fd, dev, f, 0, s, 5);
	igt_assert_eq_u64(syncobj_query(fd, s), 5);
	assert_point(fd, s, 5, 1);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* Several bindings on one fence at different points appear in turn. */
static void test_several_points(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	uint32_t s2 = syncobj_create(fd);

	bind(fd, dev, f, 10, s, 1);
	bind(fd, dev, f, 20, s, 2);
	bind(fd, dev, f, 30, s, 3);
	/* Same value, another syncobj. */
	bind(fd, dev, f, 20, s2, 100);

	nfence_fence_signal(fd, dev, f, 15);
	point_wait(fd, s, 1);
	assert_no_point(fd, s, 2);
	igt_assert_eq_u64(syncobj_query(fd, s), 1);

	nfence_fence_signal(fd, dev, f, 25);
	point_wait(fd, s, 2);
	point_wait(fd, s2, 100);
	assert_no_point(fd, s, 3);
	igt_assert_eq_u64(syncobj_query(fd, s), 2);

	nfence_fence_signal(fd, dev, f, 30);
	point_wait(fd, s, 3);
	igt_assert_eq_u64(syncobj_query(fd, s), 3);
	for (uint64_t p = 1; p <= 3; p++)
		assert_point(fd, s, p, 1);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
	drmSyncobjDestroy(fd, s2);
}

/* The point exported as a sync_file: poll() says it is signaled. */
static void test_sync_file(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	struct pollfd p = { .events = POLLIN };

	bind(fd, dev, f, 1, s, 9);
	nfence_fence_signal(fd, dev, f, 1);
	point_wait(fd, s, 9);
	p.fd = nfence_syncobj_point_sync_file(fd, s, 9);
	igt_assert_eq(poll(&p, 1, 0), 1);
	igt_assert(p.revents & POLLIN);
	igt_assert_eq(nfence_sync_file_bridge_status(p.fd), 1);
	close(p.fd);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* The syncobj imported by a second adapter's file: waited on there. */
static void test_second_adapter(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);
	struct point_waiter w = { .point = 6, .ret = 1 };
	pthread_t t;
	int ofd;

	igt_require(nfence_count_adapters() >= 2);
	ofd = nfence_open_adapter(1);
	w.syncobj = nfence_syncobj_import(fd, s, ofd);
	w.fd = ofd;

	bind(fd, dev, f, 3, s, 6);
	igt_assert_eq(nfence_thread_create(&t, point_waiter_main, &w), 0);
	usleep(50 * 1000);
	igt_assert_eq(w.ret, 1);
	nfence_fence_signal(fd, dev, f, 3);
	igt_assert_eq(nfence_thread_join(t, TIMEOUT_MS), 0);
	igt_assert_eq(w.ret, 0);
	igt_assert_eq_u64(syncobj_query(ofd, w.syncobj), 6);
	assert_point(ofd, w.syncobj, 6, 1);
	close(ofd);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* The fence's device put in error: the point appears with -EIO. */
static void test_device_error(void)
{
	uint32_t d = nfence_device_create(fd);
	uint32_t f = fence_create(fd, d, 0), s = syncobj_create(fd);

	bind(fd, d, f, 10, s, 1);
	nfence_fence_signal(fd, d, f, 5);
	assert_no_point(fd, s, 1);
	nfence_device_control(fd, d, DRM_NFENCE_DEVICE_OP_MARK_ERROR, NULL);
	assert_point(fd, s, 1, -EIO);
	/* Bound afterwards: the fence is AlwaysSignaled, -EIO at once. */
	bind(fd, d, f, 20, s, 2);
	igt_assert_eq_u64(syncobj_query(fd, s), 2);
	assert_point(fd, s, 2, -EIO);
	nfence_device_destroy(fd, d);
	drmSyncobjDestroy(fd, s);
}

/* A value reached before the device error keeps its success. */
static void test_device_error_after_reached(void)
{
	uint32_t d = nfence_device_create(fd);
	uint32_t f = fence_create(fd, d, 0), s = syncobj_create(fd);

	bind(fd, d, f, 1, s, 1);
	nfence_fence_signal(fd, d, f, 1);
	point_wait(fd, s, 1);
	nfence_device_control(fd, d, DRM_NFENCE_DEVICE_OP_MARK_ERROR, NULL);
	assert_point(fd, s, 1, 1);
	nfence_device_destroy(fd, d);
	drmSyncobjDestroy(fd, s);
}

/* The native fence's last handle destroyed: the point gets -ENOENT. */
static void test_fence_destroy(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_create(fd);

	bind(fd, dev, f, 1, s, 1);
	bind(fd, dev, f, 2, s, 2);
	nfence_fence_destroy(fd, f);
	assert_point(fd, s, 2, -ENOENT);
	assert_point(fd, s, 1, -ENOENT);
	drmSyncobjDestroy(fd, s);
}

/* The binding's file closed: the point appears with -ECANCELED. */
static void test_file_close(void)
{
	int bfd = nfence_open();
	uint32_t bdev = nfence_device_create(bfd);
	uint32_t f = fence_create(bfd, bdev, 0), bs = syncobj_create(bfd);
	uint32_t s = 0;
	int sfd = -1;

	igt_assert_eq(drmSyncobjHandleToFD(bfd, bs, &sfd), 0);
	igt_assert_eq(drmSyncobjFDToHandle(fd, sfd, &s), 0);
	close(sfd);
	for (uint64_t p = 1; p <= 16; p++)
		bind(bfd, bdev, f, p, bs, p);
	assert_no_point(fd, s, 1);
	close(bfd);
	assert_point(fd, s, 16, -ECANCELED);
	assert_point(fd, s, 1, -ECANCELED);
	drmSyncobjDestroy(fd, s);
}

/* A node with timeline syncobjs. */
static bool has_timeline_syncobj(int vfd)
{
	uint64_t cap = 0;

	return !drmGetCap(vfd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) && cap;
}

/*
 * Another driver: the syncobj imported on a virtio-gpu file (a VM started
 * with a virtio-gpu device, scripts/virtio-gpu-check.sh), a WAIT_FOR_SUBMIT
 * waiter asleep there released by a GPU FENCE_SIGNAL reaching the value;
 * the point exported there as a sync_file polls signaled. The reverse: a
 * point virtio-gpu's syncobj gets from the CPU (TIMELINE_SIGNAL), exported
 * as a sync_file, signals a native fence through SYNCOBJ_SIGNAL.
 */
static void test_virtio_gpu(void)
{
	struct point_waiter w = { .point = 4, .ret = 1 };
	struct drm_nfence_syncobj_signal sig = {};
	struct drm_nfence_fence_mapping m;
	struct pollfd p = { .events = POLLIN };
	uint32_t f, g, s = syncobj_create(fd), vs = 0, bin = 0;
	uint64_t point = 3;
	struct nfence_queue q;
	struct nfence_cs cs;
	int vfd, sfd = -1;
	pthread_t t;

	vfd = nfence_drm_open_driver("/dev/dri/renderD", 128, "virtio_gpu",
				     has_timeline_syncobj);
	igt_require_f(vfd >= 0,
		      "no virtio-gpu render node with timeline syncobjs\n");

	/* native -> syncobj, waited for on virtio-gpu's file. */
	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	w.syncobj = nfence_syncobj_import(fd, s, vfd);
	w.fd = vfd;
	bind(fd, dev, f, 5, s, 4);
	igt_assert_eq(nfence_thread_create(&t, point_waiter_main, &w), 0);
	usleep(50 * 1000);
	igt_assert_eq(w.ret, 1);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &m, 5);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_thread_join(t, TIMEOUT_MS), 0);
	igt_assert_eq(w.ret, 0);
	p.fd = nfence_syncobj_point_sync_file(vfd, w.syncobj, 4);
	igt_assert_eq(poll(&p, 1, 0), 1);
	igt_assert(p.revents & POLLIN);
	igt_assert_eq(nfence_sync_file_bridge_status(p.fd), 1);
	close(p.fd);
	nfence_queue_sync(&q);
	nfence_queue_destroy(&q);

	/* virtio-gpu's CPU-signaled point -> sync_file -> native fence. */
	g = fence_create(fd, dev, 0);
	igt_assert_eq(drmSyncobjCreate(vfd, 0, &vs), 0);
	igt_assert_eq(drmSyncobjCreate(vfd, 0, &bin), 0);
	igt_assert_eq(drmSyncobjTimelineSignal(vfd, &vs, &point, 1), 0);
	igt_assert_eq(drmSyncobjTransfer(vfd, bin, 0, vs, point, 0), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(vfd, bin, &sfd), 0);
	sig.device = dev;
	sig.fence = g;
	sig.value = 7;
	sig.fd = sfd;
	sig.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &sig), 0);
	close(sfd);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, g, 7,
					      nfence_deadline_ms(TIMEOUT_MS)),
		      0);

	drmSyncobjDestroy(vfd, vs);
	drmSyncobjDestroy(vfd, bin);
	drmSyncobjDestroy(vfd, w.syncobj);
	close(vfd);
	nfence_fence_destroy(fd, f);
	nfence_fence_destroy(fd, g);
	drmSyncobjDestroy(fd, s);
}

static int kill_syncobj_fd = -1;

/* The child: its own file, device and fence, bound to the inherited syncobj. */
static void killed_child(int sock)
{
	struct drm_nfence_device_create dc = {};
	struct drm_nfence_fence_create fc = {};
	uint32_t s;
	char c = 1;
	int cfd = __nfence_open_adapter(0);

	if (cfd < 0 || __nfence_device_create(cfd, &dc))
		_exit(1);
	fc.device = dc.handle;
	fc.type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	if (__nfence_fence_create(cfd, &fc) ||
	    drmSyncobjFDToHandle(cfd, kill_syncobj_fd, &s))
		_exit(2);
	for (uint64_t p = 1; p <= 4; p++)
		if (__bind(cfd, dc.handle, fc.handle, p, s, p))
			_exit(3);
	if (write(sock, &c, 1) != 1)
		_exit(4);
	for (;;)
		pause();
}

/* The binding's process killed: its device is lost, the point gets -EIO. */
static void test_process_killed(void)
{
	uint32_t s = syncobj_create(fd);
	int sock, status;
	pid_t pid;
	char c = 0;

	igt_assert_eq(drmSyncobjHandleToFD(fd, s, &kill_syncobj_fd), 0);
	pid = nfence_fork_child(killed_child, &sock);
	close(kill_syncobj_fd);
	kill_syncobj_fd = -1;
	igt_assert_eq(read(sock, &c, 1), 1);
	assert_no_point(fd, s, 1);
	igt_assert_eq(kill(pid, SIGKILL), 0);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFSIGNALED(status));
	close(sock);
	assert_point(fd, s, 4, -EIO);
	assert_point(fd, s, 1, -EIO);
	drmSyncobjDestroy(fd, s);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		igt_require_f(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE,
			      "adapter has no native fences\n");
		dev = nfence_device_create(fd);
	}

	igt_describe("Any flag bit set fails with -EINVAL; nothing attached.");
	igt_subtest("bad-flags")
		test_bad_flags();

	igt_describe("Point 0 fails with -EINVAL, reached value or not.");
	igt_subtest("bad-point")
		test_bad_point();

	igt_describe("Device 0, a destroyed device or a device that is not the "
		     "fence's fails with -ENOENT.");
	igt_subtest("bad-device")
		test_bad_device();

	igt_describe("Fence handle 0, a destroyed one or another file's fails "
		     "with -ENOENT.");
	igt_subtest("bad-fence")
		test_bad_fence();

	igt_describe("Syncobj handle 0, a destroyed one or another file's "
		     "fails with -ENOENT.");
	igt_subtest("bad-syncobj")
		test_bad_syncobj();

	igt_describe("A fence handle opened with NO_WAIT fails with -EACCES.");
	igt_subtest("no-wait-handle")
		test_no_wait_handle();

	igt_describe("An INTRA_GPU fence fails with -EINVAL.");
	igt_subtest("intra-gpu")
		test_intra_gpu();

	igt_describe("Without 64-bit atomics, a value more than UINT_MAX/2 "
		     "ahead of CurrentValue fails with -EINVAL.");
	igt_subtest("value-outside-window")
		test_value_outside_window();

	igt_describe("A NULL or unmapped argument fails with -EFAULT.");
	igt_subtest("args-efault")
		test_args_efault();

	igt_describe("One binding past DRM_NFENCE_MAX_SYNCOBJ_BINDINGS pending "
		     "fails with -ENOSPC; the room comes back once the points "
		     "attach.");
	igt_subtest("too-many")
		test_too_many();

	igt_describe("Bind, then a CPU signal reaching the value: the point "
		     "appears signaled (WAIT_FOR_SUBMIT, WAIT_AVAILABLE, "
		     "SYNCOBJ_QUERY); not before.");
	igt_subtest("cpu-signal")
		test_cpu_signal();

	igt_describe("A WAIT_FOR_SUBMIT waiter asleep before the point exists "
		     "is woken when the value is reached.");
	igt_subtest("cpu-signal-sleeping")
		test_cpu_signal_sleeping();

	igt_describe("A GPU FENCE_SIGNAL reaching the value makes the point "
		     "appear; one below it does not.");
	igt_subtest("gpu-signal")
		test_gpu_signal();

	igt_describe("A value already reached attaches the point before the "
		     "call returns.");
	igt_subtest("already-reached")
		test_already_reached();

	igt_describe("Several bindings of one fence at different points and "
		     "syncobjs appear as the fence reaches each value.");
	igt_subtest("several-points")
		test_several_points();

	igt_describe("The point exported as a sync_file polls signaled.");
	igt_subtest("sync-file")
		test_sync_file();

	igt_describe("The syncobj imported as an fd on a second adapter's file "
		     "is waited on there with WAIT_FOR_SUBMIT.");
	igt_subtest("second-adapter")
		test_second_adapter();

	igt_describe("Another driver's file (virtio-gpu) waits on the imported "
		     "syncobj until a GPU FENCE_SIGNAL reaches the value; a "
		     "point it gets from the CPU signals a native fence "
		     "through a sync_file (needs a virtio-gpu device).");
	igt_subtest("virtio-gpu")
		test_virtio_gpu();

	igt_describe("MARK_ERROR on the fence's device with a binding pending: "
		     "the point appears with -EIO; a later bind attaches -EIO "
		     "at once.");
	igt_subtest("device-error")
		test_device_error();

	igt_describe("A point attached before the device error stays "
		     "signaled without error.");
	igt_subtest("device-error-after-reached")
		test_device_error_after_reached();

	igt_describe("Destroying the fence's last handle with bindings "
		     "pending: the points appear with -ENOENT.");
	igt_subtest("fence-destroy")
		test_fence_destroy();

	igt_describe("Closing the binding's file with bindings pending: the "
		     "points appear with -ECANCELED in the syncobj's other "
		     "holders.");
	igt_subtest("file-close")
		test_file_close();

	igt_describe("Killing the binding's process with bindings pending: its "
		     "device is lost, the points appear with -EIO.");
	igt_subtest("process-killed")
		test_process_killed();

	igt_fixture {
		nfence_device_destroy(fd, dev);
		close(fd);
	}
}
