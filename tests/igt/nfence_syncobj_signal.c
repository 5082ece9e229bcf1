// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL: a dma_fence (of a "
		     "drm_syncobj point or a sync_file, here another driver's: "
		     "vgem's) signals a native fence to a value; the "
		     "rejection of invalid input; lifetimes.");

#define TIMEOUT_MS	5000
/* How long a pending signal is watched not to happen. */
#define QUIET_MS	50

static int fd = -1;
static uint32_t dev;
static struct drm_nfence_query_adapter adapter;
static int vgem = -1;

static int __syncobj_signal(int dfd, struct drm_nfence_syncobj_signal *s)
{
	if (drmIoctl(dfd, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, s))
		return -errno;
	return 0;
}

static int __signal_point(int dfd, uint32_t device, uint32_t fence,
			  uint64_t value, uint32_t syncobj, uint64_t point)
{
	struct drm_nfence_syncobj_signal s = {
		.device = device,
		.fence = fence,
		.value = value,
		.syncobj = syncobj,
		.point = point,
	};

	return __syncobj_signal(dfd, &s);
}

static int __signal_sync_file(int dfd, uint32_t device, uint32_t fence,
			      uint64_t value, int sync_file)
{
	struct drm_nfence_syncobj_signal s = {
		.device = device,
		.fence = fence,
		.value = value,
		.fd = sync_file,
		.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE,
	};

	return __syncobj_signal(dfd, &s);
}

static uint32_t syncobj_create(int dfd)
{
	uint32_t h = 0;

	igt_assert_eq(drmSyncobjCreate(dfd, 0, &h), 0);
	return h;
}

/* A timeline syncobj whose @point exists, signaled. */
static uint32_t syncobj_signaled(int dfd, uint64_t point)
{
	uint32_t h = syncobj_create(dfd);

	igt_assert_eq(drmSyncobjTimelineSignal(dfd, &h, &point, 1), 0);
	return h;
}

static uint32_t fence_create(int dfd, uint32_t device, uint64_t initial)
{
	return nfence_fence_create(dfd, device, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				   0, initial, NULL);
}

static uint32_t fence_create_shared(int dfd, uint32_t device)
{
	return nfence_fence_create(dfd, device, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				   DRM_NFENCE_FENCE_SHARED |
				   DRM_NFENCE_FENCE_NT_SECURITY_SHARING, 0, NULL);
}

static bool reached(int dfd, uint32_t device, uint32_t fence, uint64_t value)
{
	return !__nfence_fence_wait_one(dfd, device, fence, value, 0);
}

/* The fence stays below @value for QUIET_MS. */
static void assert_not_reached(int dfd, uint32_t device, uint32_t fence,
			       uint64_t value)
{
	igt_assert_eq(__nfence_fence_wait_one(dfd, device, fence, value,
					      nfence_deadline_ms(QUIET_MS)),
		      -ETIME);
}

static void wait_reached(int dfd, uint32_t device, uint32_t fence,
			 uint64_t value)
{
	igt_assert_eq(__nfence_fence_wait_one(dfd, device, fence, value,
					      nfence_deadline_ms(TIMEOUT_MS)),
		      0);
}

/* ---- invalid input, each with everything else valid ---- */

static void expect_error(struct drm_nfence_syncobj_signal *s, int err)
{
	igt_assert_eq(__syncobj_signal(fd, s), err);
}

static void test_bad_flags(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 1);
	struct drm_nfence_syncobj_signal a = {
		.device = dev, .fence = f, .value = 1, .syncobj = s, .point = 1,
	};

	for (int bit = 1; bit < 32; bit++) {
		a.flags = 1u << bit;
		expect_error(&a, -EINVAL);
	}
	a.flags = 0;
	a.pad = 1;
	expect_error(&a, -EINVAL);
	igt_assert(!reached(fd, dev, f, 1));
	a.pad = 0;
	igt_assert_eq(__syncobj_signal(fd, &a), 0);
	igt_assert(reached(fd, dev, f, 1));
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* The fields of the other source must be 0. */
static void test_bad_source(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 1);
	struct drm_nfence_syncobj_signal a = {
		.device = dev, .fence = f, .value = 1, .syncobj = s, .point = 1,
	};
	struct nfence_vgem_fence v;
	int sf;

	/* A syncobj point and an fd. */
	nfence_vgem_fence_create(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	a.fd = sf;
	expect_error(&a, -EINVAL);
	/* A sync_file and a syncobj, or a point. */
	a.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	expect_error(&a, -EINVAL);
	a.syncobj = 0;
	expect_error(&a, -EINVAL);
	a.syncobj = s;
	a.point = 0;
	expect_error(&a, -EINVAL);
	igt_assert(!reached(fd, dev, f, 1));
	a.syncobj = 0;
	igt_assert_eq(__syncobj_signal(fd, &a), 0);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, f, 1);
	close(sf);
	nfence_vgem_fence_destroy(vgem, &v);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_not_sync_file(void)
{
	uint32_t f = fence_create(fd, dev, 0);
	int pipes[2];

	igt_assert_eq(pipe(pipes), 0);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 1, -1), -EINVAL);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 1, pipes[0]), -EINVAL);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 1, fd), -EINVAL);
	close(pipes[1]);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 1, pipes[1]), -EINVAL);
	close(pipes[0]);
	igt_assert(!reached(fd, dev, f, 1));
	nfence_fence_destroy(fd, f);
}

static void test_bad_device(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 1);
	uint32_t gone = nfence_device_create(fd), live;

	nfence_device_destroy(fd, gone);
	igt_assert_eq(__signal_point(fd, 0, f, 1, s, 1), -ENOENT);
	igt_assert_eq(__signal_point(fd, gone, f, 1, s, 1), -ENOENT);
	/* A live device of this file that does not own the fence. */
	live = nfence_device_create(fd);
	igt_assert_eq(__signal_point(fd, live, f, 1, s, 1), -ENOENT);
	nfence_device_destroy(fd, live);
	igt_assert(!reached(fd, dev, f, 1));
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_fence(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 1);
	int ofd = nfence_open();
	uint32_t odev = nfence_device_create(ofd);
	uint32_t of = fence_create(ofd, odev, 0);

	igt_assert_eq(__signal_point(fd, dev, 0, 1, s, 1), -ENOENT);
	nfence_fence_destroy(fd, f);
	igt_assert_eq(__signal_point(fd, dev, f, 1, s, 1), -ENOENT);
	/* Another file's handle names nothing here. */
	if (of != f)
		igt_assert_eq(__signal_point(fd, dev, of, 1, s, 1), -ENOENT);
	igt_assert(!reached(ofd, odev, of, 1));
	close(ofd);
	drmSyncobjDestroy(fd, s);
}

static void test_bad_syncobj(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 1);
	int ofd = nfence_open();
	uint32_t os = syncobj_signaled(ofd, 1);

	igt_assert_eq(__signal_point(fd, dev, f, 1, 0, 1), -ENOENT);
	igt_assert_eq(drmSyncobjDestroy(fd, s), 0);
	igt_assert_eq(__signal_point(fd, dev, f, 1, s, 1), -ENOENT);
	/* Another file's syncobj handle names nothing here. */
	if (os != s)
		igt_assert_eq(__signal_point(fd, dev, f, 1, os, 1), -ENOENT);
	igt_assert(!reached(fd, dev, f, 1));
	close(ofd);
	nfence_fence_destroy(fd, f);
}

/* A point nobody submitted, an empty binary syncobj: -EINVAL. */
static void test_point_not_submitted(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 2);
	uint32_t empty = syncobj_create(fd);

	igt_assert_eq(__signal_point(fd, dev, f, 1, s, 3), -EINVAL);
	igt_assert_eq(__signal_point(fd, dev, f, 1, empty, 0), -EINVAL);
	igt_assert(!reached(fd, dev, f, 1));
	/* Points 1 and 2 exist (1 below the last signaled one). */
	igt_assert_eq(__signal_point(fd, dev, f, 1, s, 1), 0);
	igt_assert(reached(fd, dev, f, 1));
	igt_assert_eq(__signal_point(fd, dev, f, 2, s, 2), 0);
	igt_assert(reached(fd, dev, f, 2));
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
	drmSyncobjDestroy(fd, empty);
}

static void test_no_signal_handle(void)
{
	uint32_t f = fence_create_shared(fd, dev), s = syncobj_signaled(fd, 1);
	int share = nfence_fence_share(fd, f);
	uint32_t ro = nfence_fence_open(fd, dev, share,
					DRM_NFENCE_FENCE_NO_SIGNAL, NULL);

	close(share);
	igt_assert_eq(__signal_point(fd, dev, ro, 1, s, 1), -EACCES);
	igt_assert(!reached(fd, dev, f, 1));
	nfence_fence_destroy(fd, ro);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_intra_gpu(void)
{
	struct drm_nfence_query_fence_caps caps;
	uint32_t f, s = syncobj_signaled(fd, 1);

	nfence_query_fence_caps(fd, &caps);
	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0, 0,
				NULL);
	igt_assert_eq(__signal_point(fd, dev, f, 1, s, 1), -EINVAL);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_value_outside_window(void)
{
	uint32_t f, s = syncobj_signaled(fd, 1);

	igt_require_f(adapter.flags & DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS,
		      "the adapter has 64-bit atomics\n");
	f = fence_create(fd, dev, 5);
	igt_assert_eq(__signal_point(fd, dev, f, 5 + (1ull << 31) + 1, s, 1),
		      -EINVAL);
	igt_assert(!reached(fd, dev, f, 6));
	igt_assert_eq(__signal_point(fd, dev, f, 5 + (1ull << 31) - 1, s, 1),
		      0);
	igt_assert(reached(fd, dev, f, 5 + (1ull << 31) - 1));
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

static void test_args_efault(void)
{
	static const unsigned long req[] = { DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL };

	nfence_assert_args_efault(fd, req, ARRAY_SIZE(req));
}

/*
 * DRM_NFENCE_MAX_SYNCOBJ_SIGNALS pending on one file: one more fails with
 * -ENOSPC, and succeeds again once they are done.
 */
static void test_too_many(void)
{
	int tfd = nfence_open();
	uint32_t tdev = nfence_device_create(tfd);
	uint32_t f = fence_create(tfd, tdev, 0), s = syncobj_signaled(tfd, 1);
	struct nfence_vgem_fence v, w;
	uint32_t pending, again;
	uint64_t deadline;
	unsigned int i;
	int ret;

	nfence_vgem_fence_create(vgem, &v);
	pending = nfence_vgem_fence_syncobj(tfd, &v, 1);
	for (i = 1; i <= DRM_NFENCE_MAX_SYNCOBJ_SIGNALS; i++)
		igt_assert_eq(__signal_point(tfd, tdev, f, i, pending, 1), 0);
	igt_assert_eq(__signal_point(tfd, tdev, f, i, pending, 1), -ENOSPC);
	/* A dma_fence already signaled takes no slot. */
	igt_assert_eq(__signal_point(tfd, tdev, f, 1, s, 1), 0);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(tfd, tdev, f, DRM_NFENCE_MAX_SYNCOBJ_SIGNALS);
	igt_assert(!reached(tfd, tdev, f, DRM_NFENCE_MAX_SYNCOBJ_SIGNALS + 1));
	/* The work frees the slots just after it signals: allow it that. */
	nfence_vgem_fence_create(vgem, &w);
	again = nfence_vgem_fence_syncobj(tfd, &w, 1);
	deadline = nfence_monotonic_ns() + (uint64_t)TIMEOUT_MS * 1000000;
	while ((ret = __signal_point(tfd, tdev, f, i, again, 1)) == -ENOSPC &&
	       nfence_monotonic_ns() < deadline)
		usleep(1000);
	igt_assert_eq(ret, 0);
	assert_not_reached(tfd, tdev, f, i);
	nfence_vgem_fence_signal(vgem, &w);
	wait_reached(tfd, tdev, f, i);
	nfence_vgem_fence_destroy(vgem, &w);
	nfence_vgem_fence_destroy(vgem, &v);
	close(tfd);
}

/* ---- what it does ---- */

/* A point signaled already: the fence is signaled before the call returns. */
static void test_already_signaled(void)
{
	uint32_t f = fence_create(fd, dev, 0), s = syncobj_signaled(fd, 4);
	struct nfence_vgem_fence v;
	int sf;

	igt_assert_eq(__signal_point(fd, dev, f, 7, s, 4), 0);
	igt_assert(reached(fd, dev, f, 7));
	/* Point 0 of a timeline: its last fence. */
	igt_assert_eq(__signal_point(fd, dev, f, 8, s, 0), 0);
	igt_assert(reached(fd, dev, f, 8));
	/* A signaled sync_file. */
	nfence_vgem_fence_create(vgem, &v);
	nfence_vgem_fence_signal(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 9, sf), 0);
	igt_assert(reached(fd, dev, f, 9));
	/* Never lowers it. */
	igt_assert_eq(__signal_point(fd, dev, f, 3, s, 4), 0);
	igt_assert(reached(fd, dev, f, 9));
	close(sf);
	nfence_vgem_fence_destroy(vgem, &v);
	nfence_fence_destroy(fd, f);
	drmSyncobjDestroy(fd, s);
}

/* Another driver's pending fence as a sync_file. */
static void test_sync_file(void)
{
	uint32_t f = fence_create(fd, dev, 0);
	struct nfence_vgem_fence v;
	int sf;

	nfence_vgem_fence_create(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 5, sf), 0);
	/* The sync_file is not taken over. */
	close(sf);
	assert_not_reached(fd, dev, f, 1);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, f, 5);
	igt_assert(!reached(fd, dev, f, 6));
	nfence_vgem_fence_destroy(vgem, &v);
	nfence_fence_destroy(fd, f);
}

/* The same fence at a timeline point, and in a binary syncobj. */
static void test_syncobj_point(void)
{
	uint32_t f = fence_create(fd, dev, 0), g = fence_create(fd, dev, 0);
	uint32_t s, bin = syncobj_create(fd);
	struct nfence_vgem_fence v;
	int sf;

	nfence_vgem_fence_create(vgem, &v);
	s = nfence_vgem_fence_syncobj(fd, &v, 3);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(drmSyncobjImportSyncFile(fd, bin, sf), 0);
	close(sf);
	igt_assert_eq(__signal_point(fd, dev, f, 11, s, 3), 0);
	igt_assert_eq(__signal_point(fd, dev, g, 12, bin, 0), 0);
	assert_not_reached(fd, dev, f, 1);
	igt_assert(!reached(fd, dev, g, 1));
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, f, 11);
	wait_reached(fd, dev, g, 12);
	nfence_vgem_fence_destroy(vgem, &v);
	nfence_fence_destroy(fd, f);
	nfence_fence_destroy(fd, g);
	drmSyncobjDestroy(fd, s);
	drmSyncobjDestroy(fd, bin);
}

/* Several signals of one dma_fence, to several fences and values. */
static void test_several(void)
{
	uint32_t f[4];
	struct nfence_vgem_fence v;
	uint32_t s;

	nfence_vgem_fence_create(vgem, &v);
	s = nfence_vgem_fence_syncobj(fd, &v, 1);
	for (int i = 0; i < 4; i++) {
		f[i] = fence_create(fd, dev, 0);
		igt_assert_eq(__signal_point(fd, dev, f[i], 10 + i, s, 1), 0);
		igt_assert_eq(__signal_point(fd, dev, f[i], 5, s, 1), 0);
	}
	assert_not_reached(fd, dev, f[0], 1);
	nfence_vgem_fence_signal(vgem, &v);
	for (int i = 0; i < 4; i++) {
		wait_reached(fd, dev, f[i], 10 + i);
		igt_assert(!reached(fd, dev, f[i], 11 + i));
		nfence_fence_destroy(fd, f[i]);
	}
	nfence_vgem_fence_destroy(vgem, &v);
	drmSyncobjDestroy(fd, s);
}

/* A GPU queue's FENCE_WAIT on the fence is released by the dma_fence. */
static void test_gpu_wait(void)
{
	struct drm_nfence_fence_mapping mf, mg;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct nfence_vgem_fence v;
	uint32_t f, g, s;

	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&mf);
	g = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&mg);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &mf, 3);
	nfence_cs_signal_fence(&cs, &mg, 1);
	nfence_queue_submit(&q, &cs);

	nfence_vgem_fence_create(vgem, &v);
	s = nfence_vgem_fence_syncobj(fd, &v, 1);
	igt_assert_eq(__signal_point(fd, dev, f, 3, s, 1), 0);
	assert_not_reached(fd, dev, g, 1);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, g, 1);
	nfence_queue_sync(&q);
	nfence_queue_destroy(&q);
	nfence_vgem_fence_destroy(vgem, &v);
	drmSyncobjDestroy(fd, s);
	nfence_fence_destroy(fd, f);
	nfence_fence_destroy(fd, g);
}

/* A WDDM 2.x monitored fence: the OS checks its waiters on the signal. */
static void test_monitored(void)
{
	struct nfence_vgem_fence v;
	uint32_t f, s;
	int sf;

	f = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				DRM_NFENCE_FENCE_MONITORED, 0, NULL);
	nfence_vgem_fence_create(vgem, &v);
	s = nfence_vgem_fence_syncobj(fd, &v, 2);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(__signal_point(fd, dev, f, 4, s, 2), 0);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 6, sf), 0);
	close(sf);
	assert_not_reached(fd, dev, f, 1);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, f, 6);
	nfence_vgem_fence_destroy(vgem, &v);
	drmSyncobjDestroy(fd, s);
	nfence_fence_destroy(fd, f);
}

/*
 * The fence's handle destroyed with a signal pending: the signal holds the
 * fence, which another handle (a shared fd, opened again) still sees.
 */
static void test_fence_destroy(void)
{
	uint32_t f = fence_create_shared(fd, dev), other;
	struct nfence_vgem_fence v;
	int share, sf;

	share = nfence_fence_share(fd, f);
	other = nfence_fence_open(fd, dev, share, 0, NULL);
	nfence_vgem_fence_create(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 5, sf), 0);
	close(sf);
	nfence_fence_destroy(fd, f);
	assert_not_reached(fd, dev, other, 5);
	nfence_vgem_fence_signal(vgem, &v);
	wait_reached(fd, dev, other, 5);
	nfence_fence_destroy(fd, other);

	nfence_vgem_fence_destroy(vgem, &v);
	close(share);

	/* The last handle gone: the signal still ends, on an orphan. */
	f = fence_create(fd, dev, 0);
	nfence_vgem_fence_create(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	igt_assert_eq(__signal_sync_file(fd, dev, f, 5, sf), 0);
	close(sf);
	nfence_fence_destroy(fd, f);
	nfence_vgem_fence_signal(vgem, &v);
	nfence_vgem_fence_destroy(vgem, &v);
}

/*
 * The signal's file closed first: the signal is dropped; the fence, shared
 * with this file, is not signaled when the dma_fence signals.
 */
static void test_file_close(void)
{
	int cfd = nfence_open();
	uint32_t cdev = nfence_device_create(cfd);
	uint32_t f = fence_create_shared(cfd, cdev), mine;
	struct nfence_vgem_fence v;
	int share, sf;

	share = nfence_fence_share(cfd, f);
	mine = nfence_fence_open(fd, dev, share, 0, NULL);
	close(share);
	nfence_vgem_fence_create(vgem, &v);
	sf = nfence_vgem_fence_sync_file(&v);
	for (uint64_t i = 1; i <= 16; i++)
		igt_assert_eq(__signal_sync_file(cfd, cdev, f, i, sf), 0);
	close(sf);
	close(cfd);
	nfence_vgem_fence_signal(vgem, &v);
	assert_not_reached(fd, dev, mine, 1);
	nfence_vgem_fence_destroy(vgem, &v);
	nfence_fence_destroy(fd, mine);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		igt_require_f(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE,
			      "adapter has no native fences\n");
		dev = nfence_device_create(fd);
		vgem = nfence_vgem_open();
		igt_require_f(vgem >= 0, "no vgem device (modprobe vgem)\n");
	}

	igt_describe("Any unknown flag bit, or a non-zero pad, fails with "
		     "-EINVAL; the fence is not signaled.");
	igt_subtest("bad-flags")
		test_bad_flags();

	igt_describe("An fd without SYNC_FILE, or a syncobj or point with it, "
		     "fails with -EINVAL.");
	igt_subtest("bad-source")
		test_bad_source();

	igt_describe("An fd that is no sync_file (-1, a pipe, a DRM file, a "
		     "closed fd) fails with -EINVAL.");
	igt_subtest("not-sync-file")
		test_not_sync_file();

	igt_describe("Device 0, a destroyed device or a device that does not "
		     "own the fence fails with -ENOENT.");
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

	igt_describe("A timeline point nobody submitted, or a binary syncobj "
		     "without a fence, fails with -EINVAL.");
	igt_subtest("point-not-submitted")
		test_point_not_submitted();

	igt_describe("A fence handle opened with NO_SIGNAL fails with -EACCES.");
	igt_subtest("no-signal-handle")
		test_no_signal_handle();

	igt_describe("An INTRA_GPU fence fails with -EINVAL.");
	igt_subtest("intra-gpu")
		test_intra_gpu();

	igt_describe("Without 64-bit atomics, a value more than UINT_MAX/2 "
		     "ahead of the fence fails with -EINVAL.");
	igt_subtest("value-outside-window")
		test_value_outside_window();

	igt_describe("A NULL or unmapped argument fails with -EFAULT.");
	igt_subtest("args-efault")
		test_args_efault();

	igt_describe("One signal past DRM_NFENCE_MAX_SYNCOBJ_SIGNALS pending "
		     "fails with -ENOSPC, and works once they are done.");
	igt_subtest("too-many")
		test_too_many();

	igt_describe("A dma_fence signaled already signals the fence before "
		     "the call returns, never lowering it.");
	igt_subtest("already-signaled")
		test_already_signaled();

	igt_describe("A pending vgem fence as a sync_file signals the fence "
		     "when vgem signals it, not before.");
	igt_subtest("sync-file")
		test_sync_file();

	igt_describe("The same at a timeline point and in a binary syncobj.");
	igt_subtest("syncobj-point")
		test_syncobj_point();

	igt_describe("Several signals of one dma_fence, to several fences.");
	igt_subtest("several")
		test_several();

	igt_describe("A GPU queue waiting on the fence runs once the "
		     "dma_fence signals.");
	igt_subtest("gpu-wait")
		test_gpu_wait();

	igt_describe("A WDDM 2.x monitored fence is signaled, its CPU waiter "
		     "woken.");
	igt_subtest("monitored")
		test_monitored();

	igt_describe("Destroying the fence's handle does not cancel the "
		     "signal; the last handle gone, it ends on the orphan.");
	igt_subtest("fence-destroy")
		test_fence_destroy();

	igt_describe("Closing the signal's file drops it: the fence is not "
		     "signaled when the dma_fence signals.");
	igt_subtest("file-close")
		test_file_close();

	igt_fixture {
		close(vgem);
		nfence_device_destroy(fd, dev);
		close(fd);
	}
}
