// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Hot unplug, in the manner of IGT's core_hotunplug: "
		     "adapter 0 is unbound from the nfence platform driver "
		     "with nothing open, or with a render fd, a fence "
		     "mapping, a blocked and an asynchronous CPU wait, queued "
		     "GPU work, a doorbell, a shared fence fd in another "
		     "process held open; every later call on the old fd "
		     "fails with -ENODEV, blocked waits return, everything "
		     "is closed late, and the adapter bound again works.");

#define WATCHDOG_S	60
#define DRIVER_DIR	"/sys/bus/platform/drivers/nfence"
#define RELEASE_MS	1000	/* the bound on releasing blocked waiters */
#define SETTLE_MS	5000	/* for the old adapter's nodes to go */
#define PAGE		4096u

/* The platform device name of adapter 0, "nfence.0". */
static char pdev_name[64];

/* The platform device name behind an nfence render fd. */
static void pdev_name_of(int f, char *name, size_t size)
{
	char link[PATH_MAX], target[PATH_MAX];
	struct stat st;
	const char *base;
	ssize_t len;

	igt_assert_eq(fstat(f, &st), 0);
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	len = readlink(link, target, sizeof(target) - 1);
	igt_assert_f(len > 0, "%s: %m\n", link);
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	igt_assert_f(!strncmp(base, "nfence.", 7), "%s is not an nfence "
		     "platform device\n", target);
	igt_assert_lt(strlen(base), size);
	memcpy(name, base, strlen(base) + 1);
}

static bool bound(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), DRIVER_DIR "/%s", pdev_name);
	return access(path, F_OK) == 0;
}

static int driver_write(const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), DRIVER_DIR "/%s", file);
	return nfence_sysfs_write(path, pdev_name);
}

static void unbind(void)
{
	igt_assert(bound());
	igt_assert_eq(driver_write("unbind"), 0);
	igt_assert(!bound());
	/* Its render node is gone: no nfence adapter 0 answers. */
	igt_assert_eq(__nfence_open_adapter(0), -ENODEV);
}

/* Bind adapter 0 again; its new render node, with index 0, is there. */
static void rebind(void)
{
	igt_assert(!bound());
	igt_assert_eq(driver_write("bind"), 0);
	igt_assert(bound());
}

static int power_write(const char *file, const char *value);

/* Leave adapter 0 bound, in D0, with runtime PM's defaults. */
static void rebind_on_exit(int sig __attribute__((unused)))
{
	if (!pdev_name[0])
		return;
	if (!bound())
		driver_write("bind");
	power_write("control", "on");
	power_write("autosuspend_delay_ms", "1000");
}

/* Each subtest starts bound, whatever the one before it left. */
static void start(void)
{
	nfence_watchdog(WATCHDOG_S);
	if (!bound())
		igt_assert_eq(driver_write("bind"), 0);
}

/*
 * Open adapter 0 (in *@f) with a device (*@dev) and a DEFAULT fence of it
 * at @initial, its mapping in *@m: what most subtests start with.
 */
static uint32_t open_with_fence(int *f, uint32_t *dev, uint64_t initial,
				struct drm_nfence_fence_mapping *m)
{
	*f = nfence_open_adapter(0);
	*dev = nfence_device_create(*f);
	return nfence_fence_create(*f, *dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				   initial, m);
}

/*
 * The adapter bound again works: a device, a fence, a GPU submission that
 * signals it, a CPU wait that sees it, and nothing left behind.
 */
static void rebind_and_use(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t done;
	uint32_t dev, h;
	int f;

	rebind();
	h = open_with_fence(&f, &dev, 0, &m);
	nfence_queue_create(&q, f, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &m, 3);
	done = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, done, 5000));
	igt_assert_eq(__nfence_fence_wait_one(f, dev, h, 3,
					      nfence_deadline_ms(5000)), 0);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(f, h);
	nfence_device_destroy(f, dev);
	igt_assert_eq(nfence_live_devices(f), 0);
	close(f);
}

/* Everything the old fd offers fails with -ENODEV. */
static void assert_calls_enodev(int f, uint32_t dev, uint32_t h,
				const struct drm_nfence_fence_mapping *m)
{
	struct drm_nfence_query_adapter adapter;
	struct drm_nfence_query qa = {
		.type = DRM_NFENCE_QUERY_ADAPTER,
		.size = sizeof(adapter),
		.data = (uintptr_t)&adapter,
	};
	struct drm_nfence_device_create dc = { 0 };
	struct drm_nfence_fence_create fc = {
		.device = dev, .type = DRM_NFENCE_FENCE_TYPE_DEFAULT,
	};
	struct drm_nfence_alloc_create ac = {
		.device = dev, .size = PAGE,
		.segment_id = NFENCE_SEGMENT_SYSTEM,
	};
	struct drm_nfence_context_create cc = { .device = dev };
	void *p;

	igt_assert_eq(__nfence_query(f, &qa), -ENODEV);
	igt_assert_eq(__nfence_device_create(f, &dc), -ENODEV);
	igt_assert_eq(__nfence_fence_create(f, &fc), -ENODEV);
	igt_assert_eq(__nfence_alloc_create(f, &ac), -ENODEV);
	igt_assert_eq(__nfence_context_create(f, &cc), -ENODEV);
	igt_assert_eq(__nfence_fence_signal_one(f, dev, h, 9), -ENODEV);
	igt_assert_eq(__nfence_fence_wait_one(f, dev, h, 1, 0), -ENODEV);
	igt_assert_eq(__nfence_fence_destroy_handle(f, h), -ENODEV);
	igt_assert_eq(__nfence_device_destroy_handle(f, dev), -ENODEV);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, f,
		 m->cpu_mmap_offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, ENODEV);
}

/* power/@file of adapter 0's platform device. */
static int power_write(const char *file, const char *value)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/devices/platform/%s/power/%s",
		 pdev_name, file);
	return nfence_sysfs_write(path, value);
}

static bool runtime_suspended(void)
{
	char path[PATH_MAX], buf[32];
	int ret;

	snprintf(path, sizeof(path),
		 "/sys/devices/platform/%s/power/runtime_status", pdev_name);
	ret = nfence_sysfs_read(path, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "%s: %s\n", path, strerror(-ret));
	return !strcmp(buf, "suspended");
}

static void test_unbind_rebind(void)
{
	start();
	unbind();
	rebind_and_use();
	/* Twice: the second adapter goes as cleanly as the first. */
	unbind();
	rebind_and_use();
}

/*
 * An adapter in D3 (runtime suspended, a doorbell-less queue and a fence
 * open) unbinds: the driver core resumes it first; the new adapter
 * starts in D0 with runtime PM forbidden again.
 */
static void test_unbind_suspended(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	uint32_t dev, h;
	uint64_t end;
	int f;

	start();
	h = open_with_fence(&f, &dev, 0, &m);
	nfence_queue_create(&q, f, dev, 0, 0);
	igt_assert_eq(power_write("autosuspend_delay_ms", "50"), 0);
	igt_assert_eq(power_write("control", "auto"), 0);
	end = nfence_monotonic_ns() + 5000 * 1000000ull;
	while (!runtime_suspended() && nfence_monotonic_ns() < end)
		usleep(2000);
	igt_assert(runtime_suspended());

	unbind();
	igt_assert_eq(__nfence_fence_wait_one(f, dev, h, 1, 0), -ENODEV);
	nfence_queue_forget(&q);
	close(f);
	rebind_and_use();
	igt_assert(!runtime_suspended());
	igt_assert_eq(power_write("autosuspend_delay_ms", "1000"), 0);
}

/*
 * An fd with a device and a fence open across the unbind: every call on
 * it fails with -ENODEV, and closing it late is clean.
 */
static void test_unbind_open_fd(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t dev, h;
	int f;

	start();
	h = open_with_fence(&f, &dev, 1, &m);
	unbind();
	assert_calls_enodev(f, dev, h, &m);
	close(f);
	rebind_and_use();
}

/*
 * A CPU mapping of a fence's CurrentValue stays readable after the
 * unbind; the fence's device was lost, so it reads AlwaysSignaled.
 */
static void test_unbind_mapped_fence(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *value;
	uint32_t dev, h;
	int f;

	start();
	h = open_with_fence(&f, &dev, 5, &m);
	value = nfence_fence_map(f, &m);
	igt_assert_eq_u64(*value, 5);
	unbind();
	igt_assert(*value >= NFENCE_ALWAYS_SIGNALED);
	close(f);
	/* The mapping outlives the fd, too. */
	igt_assert(*value >= NFENCE_ALWAYS_SIGNALED);
	nfence_fence_unmap(value);
	igt_assert_eq(__nfence_fence_destroy_handle(f, h), -EBADF);
	rebind_and_use();
}

/*
 * A fence whose creating handle was destroyed before the unplug belongs to
 * no device and is left as it is: it was shared, opened again on the same
 * device (a handle that did not create it) and its creating handle
 * destroyed; after the unbind it still reads 5, while a fence of the same
 * device whose creating handle is still there reads AlwaysSignaled.
 */
static void test_unbind_creator_destroyed(void)
{
	struct drm_nfence_fence_mapping m, m_opened, m_kept;
	const volatile uint64_t *value, *kept;
	uint32_t dev, h, kept_h;
	int f, sfd;

	start();
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				DRM_NFENCE_FENCE_SHARED |
				DRM_NFENCE_FENCE_NT_SECURITY_SHARING, 5, &m);
	kept_h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				     5, &m_kept);
	sfd = nfence_fence_share(f, h);
	nfence_fence_open(f, dev, sfd, 0, &m_opened);
	value = nfence_fence_map(f, &m_opened);
	kept = nfence_fence_map(f, &m_kept);
	nfence_fence_destroy(f, h);
	igt_assert_eq_u64(*value, 5);

	unbind();
	igt_assert_eq_u64(*kept, NFENCE_ALWAYS_SIGNALED);
	igt_assert_eq_u64(*value, 5);
	close(f);
	igt_assert_eq_u64(*value, 5);
	nfence_fence_unmap(value);
	nfence_fence_unmap(kept);
	close(sfd);
	igt_assert_eq(__nfence_fence_destroy_handle(f, kept_h), -EBADF);
	rebind_and_use();
}

/*
 * Allocations' CPU mappings outlive the unbind, which zaps them: every page
 * faults back in with what was written, VRAM (page frames, inserted at
 * fault time) as system memory (pages), even after the fd is closed.
 */
static void test_unbind_mapped_alloc(void)
{
	struct nfence_bo bo[2];
	uint32_t dev;
	int f;

	start();
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	nfence_bo_create(f, dev, 20 * PAGE, NFENCE_SEGMENT_SYSTEM, 0, &bo[0]);
	nfence_bo_create(f, dev, 20 * PAGE, NFENCE_SEGMENT_VRAM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &bo[1]);
	igt_assert_eq_u32(bo[1].segment_id, NFENCE_SEGMENT_VRAM);
	for (int i = 0; i < 2; i++)
		for (uint64_t off = 0; off < bo[i].size; off += 8)
			*nfence_bo_u64(&bo[i], off) = off ^ i;
	unbind();
	for (int i = 0; i < 2; i++) {
		for (uint64_t off = 0; off < bo[i].size; off += 8)
			igt_assert_eq_u64(*nfence_bo_u64(&bo[i], off), off ^ i);
		*nfence_bo_u64(&bo[i], PAGE) = ~0ull;
	}
	close(f);
	for (int i = 0; i < 2; i++) {
		igt_assert_eq_u64(*nfence_bo_u64(&bo[i], PAGE), ~0ull);
		bo[i].handle = 0;
		nfence_bo_unmap(&bo[i]);
	}
	rebind_and_use();
}

/* The waiter returned @ret within RELEASE_MS of @since_ns. */
static void waiter_released(struct nfence_cpu_waiter *w, uint64_t since_ns,
			    int ret)
{
	igt_assert_eq(nfence_cpu_waiter_join(w, 5000), ret);
	igt_assert_f(w->done_ns < since_ns + RELEASE_MS * 1000000ull,
		     "the waiter took %" PRIu64 " ms\n",
		     (w->done_ns - since_ns) / 1000000);
}

/*
 * A fence of adapter 1's device, opened on @f's @dev (CrossAdapter):
 * unplugging adapter 0 does not signal it. Its handle on adapter 0 is
 * returned, adapter 1's fd, device and handle in *@fx, *@devx, *@hx.
 */
static uint32_t cross_fence(int f, uint32_t dev, int *fx, uint32_t *devx,
			    uint32_t *hx)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h;
	int sfd;

	*fx = nfence_open_adapter(1);
	*devx = nfence_device_create(*fx);
	*hx = nfence_fence_create(*fx, *devx, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				  DRM_NFENCE_FENCE_SHARED |
				  DRM_NFENCE_FENCE_NT_SECURITY_SHARING |
				  DRM_NFENCE_FENCE_CROSS_ADAPTER, 0, &m);
	sfd = nfence_fence_share(*fx, *hx);
	h = nfence_fence_open(f, dev, sfd, 0, &m);
	close(sfd);
	return h;
}

static void cross_fence_untouched(int fx, uint32_t devx, uint32_t hx)
{
	/* Adapter 1's fence was not signaled by the unplug. */
	igt_assert_eq(__nfence_fence_wait_one(fx, devx, hx, 1, 0), -ETIME);
	nfence_fence_destroy(fx, hx);
	nfence_device_destroy(fx, devx);
	close(fx);
}

/*
 * Blocked CPU waits return -ENODEV at the unbind, within a second: one on
 * a fence of the unplugged adapter's own device, one on a fence another
 * adapter's device created (which the unplug does not signal), when there
 * is a second adapter.
 */
static void test_unbind_blocked_wait(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_cpu_waiter w, wx;
	uint64_t unbound_ns;
	uint32_t dev, h, hx = 0, devx = 0;
	int f, fx = -1;

	start();
	h = open_with_fence(&f, &dev, 0, &m);
	nfence_cpu_waiter_start(&w, f, dev, h, 1, nfence_deadline_ms(20000));
	if (nfence_count_adapters() > 1)
		nfence_cpu_waiter_start(&wx, f, dev,
					cross_fence(f, dev, &fx, &devx, &hx),
					1, nfence_deadline_ms(20000));

	unbind();
	unbound_ns = nfence_monotonic_ns();
	waiter_released(&w, unbound_ns, -ENODEV);
	if (fx >= 0) {
		waiter_released(&wx, unbound_ns, -ENODEV);
		cross_fence_untouched(fx, devx, hx);
	}
	close(f);
	rebind_and_use();
}

/*
 * An asynchronous wait signals its eventfd at the unbind. With a second
 * adapter the wait is on its fence, which the unbind does not signal: only
 * the abort of the wait can fire the eventfd.
 */
static void test_unbind_async_wait(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_wait wait = { 0 };
	uint32_t dev, h, hx = 0, devx = 0;
	uint64_t value = 1, count;
	struct pollfd pfd;
	int f, efd, fx = -1;

	start();
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	if (nfence_count_adapters() > 1)
		h = cross_fence(f, dev, &fx, &devx, &hx);
	else
		h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
					0, 0, &m);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	igt_assert(efd >= 0);
	wait.device = dev;
	wait.count = 1;
	wait.handles = (uintptr_t)&h;
	wait.values = (uintptr_t)&value;
	wait.flags = DRM_NFENCE_WAIT_ASYNC;
	wait.eventfd = efd;
	igt_assert_eq(__nfence_fence_wait(f, &wait), 0);
	pfd.fd = efd;
	pfd.events = POLLIN;
	igt_assert_eq(poll(&pfd, 1, 100), 0);

	unbind();
	igt_assert_eq(poll(&pfd, 1, RELEASE_MS), 1);
	igt_assert_eq(read(efd, &count, sizeof(count)), sizeof(count));
	igt_assert_eq_u64(count, 1);
	close(efd);
	if (fx >= 0)
		cross_fence_untouched(fx, devx, hx);
	close(f);
	rebind_and_use();
}

/* Write a pattern to pages 0 and 5 of @cpu and read it back. */
static void touch_pages(volatile uint32_t *cpu, uint32_t seed)
{
	cpu[0] = seed;
	cpu[5 * PAGE / 4 + 1] = ~seed;
	igt_assert_eq_u32(cpu[0], seed);
	igt_assert_eq_u32(cpu[5 * PAGE / 4 + 1], ~seed);
}

/*
 * GPU work queued at the unbind (a long WORK, then a wait on a fence
 * nobody signals, then more) is dropped with the queue: its device was
 * lost, so the fence and the progress fence read AlwaysSignaled. The
 * command buffer's mapping stays usable after the unbind and after the
 * fd is closed.
 */
static void test_unbind_queued_work(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *value;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t dev, h;
	uint64_t done;
	int f;

	start();
	h = open_with_fence(&f, &dev, 0, &m);
	value = nfence_fence_map(f, &m);
	nfence_queue_create(&q, f, dev, 0, 0);
	for (int i = 0; i < 4; i++) {
		nfence_queue_begin(&q, &cs);
		nfence_cs_work(&cs, 200 * 1000000ull);
		if (i == 1)
			nfence_cs_wait_fence(&cs, &m, 1);
		done = nfence_queue_submit(&q, &cs);
	}
	igt_assert(!nfence_queue_poll(&q, done, 50));
	igt_assert_eq_u64(*value, 0);

	unbind();
	igt_assert(*value >= NFENCE_ALWAYS_SIGNALED);
	igt_assert(*q.progress >= NFENCE_ALWAYS_SIGNALED);
	touch_pages((volatile uint32_t *)q.cmds.cpu, 0x5a5a0001);
	igt_assert_eq(__nfence_fence_signal_one(f, dev, h, 1), -ENODEV);
	close(f);
	usleep(100 * 1000);
	touch_pages((volatile uint32_t *)q.cmds.cpu, 0x5a5a0002);
	nfence_fence_unmap(value);
	nfence_queue_forget(&q);
	rebind_and_use();
}

/*
 * A connected doorbell reads DISCONNECTED_ABORT after the unbind; its
 * mappings stay, stores to the doorbell go nowhere; CONNECT and NOTIFY
 * fail with -ENODEV.
 */
static void test_unbind_doorbell(void)
{
	struct drm_nfence_doorbell_create db = { 0 };
	struct drm_nfence_doorbell_connect conn = { 0 };
	struct drm_nfence_doorbell_notify notify = { 0 };
	const volatile uint64_t *status;
	volatile uint64_t *bell, *last;
	struct nfence_bo ring, control;
	struct nfence_queue q;
	uint32_t dev;
	int f;

	start();
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	nfence_queue_create(&q, f, dev, 0,
			    DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION);
	nfence_bo_create(f, dev, PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &ring);
	nfence_bo_create(f, dev, PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &control);
	db.device = dev;
	db.hwqueue = q.handle;
	db.ring_alloc = ring.handle;
	db.ring_control_alloc = control.handle;
	igt_assert_eq(__nfence_doorbell_create(f, &db), 0);
	bell = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, f,
		    db.doorbell_offset);
	status = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, f, db.status_offset);
	igt_assert(bell != MAP_FAILED && status != MAP_FAILED);
	last = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, f,
		    db.last_queued_offset);
	igt_assert(last != MAP_FAILED);
	conn.device = dev;
	conn.handle = db.handle;
	igt_assert_eq(__nfence_doorbell_connect(f, &conn), 0);
	igt_assert_eq_u64(conn.status, DRM_NFENCE_DOORBELL_CONNECTED);
	/* The CMP goes quiet 20 ms after the connect: NOTIFY_KMD then. */
	igt_assert((*status & ~1ull) == DRM_NFENCE_DOORBELL_CONNECTED);

	unbind();
	igt_assert_eq_u64(*status, DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	*bell = 1;
	*last = 7;
	igt_assert_eq_u64(*last, 7);
	((volatile uint32_t *)ring.cpu)[3] = 0xdb;
	igt_assert_eq_u32(((volatile uint32_t *)ring.cpu)[3], 0xdb);
	igt_assert_eq(__nfence_doorbell_connect(f, &conn), -ENODEV);
	notify.device = conn.device;
	notify.handle = conn.handle;
	igt_assert_eq(__nfence_doorbell_notify(f, &notify), -ENODEV);
	close(f);
	igt_assert_eq_u64(*status, DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT);
	igt_assert_eq_u64(*last, 7);
	munmap((void *)last, PAGE);
	munmap((void *)bell, PAGE);
	munmap((void *)status, PAGE);
	nfence_bo_unmap(&ring);
	nfence_bo_unmap(&control);
	nfence_queue_forget(&q);
	rebind_and_use();
}

/*
 * Another process holds a shared fence's fd, and waits on the fence opened
 * on its own fd of the same adapter. The unbind releases its wait; it
 * closes everything only after the unbind.
 */
static void holder(int sock)
{
	struct drm_nfence_device_create dc = { 0 };
	struct drm_nfence_fence_open fo = { .fd = -1 };
	int hfd, sfd, ret;
	char byte;

	hfd = __nfence_open_adapter(0);
	sfd = nfence_recv_fd(sock);
	if (hfd < 0 || sfd < 0)
		_exit(10);
	if (__nfence_device_create(hfd, &dc))
		_exit(11);
	fo.fd = sfd;
	fo.device = dc.handle;
	if (__nfence_fence_open(hfd, &fo))
		_exit(12);
	byte = 0;
	if (write(sock, &byte, 1) != 1)
		_exit(13);
	ret = __nfence_fence_wait_one(hfd, dc.handle, fo.handle, 1,
				      nfence_deadline_ms(20000));
	if (ret != -ENODEV)
		_exit(14);
	/* Close late: after the parent says so. */
	if (read(sock, &byte, 1) != 1)
		_exit(15);
	close(sfd);
	close(hfd);
	_exit(0);
}

/*
 * A SYNCOBJ_BIND pending at the unbind: the point appears with -ENODEV,
 * seen through a second adapter's file that imported the syncobj.
 */
static void test_unbind_syncobj_binding(void)
{
	struct sync_fence_info fi[4];
	struct sync_file_info info;
	struct drm_nfence_syncobj_bind b = { 0 };
	uint32_t dev, h, s, s1 = 0, bin = 0;
	uint64_t point = 5, last = 0;
	int f, f1, sf = -1;

	start();
	igt_require(nfence_count_adapters() > 1);
	f = nfence_open_adapter(0);
	f1 = nfence_open_adapter(1);
	dev = nfence_device_create(f);
	h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				NULL);
	igt_assert_eq(drmSyncobjCreate(f, 0, &s), 0);
	s1 = nfence_syncobj_import(f, s, f1);
	b.device = dev;
	b.fence = h;
	b.value = 1;
	b.syncobj = s;
	b.point = point;
	igt_assert_eq(drmIoctl(f, DRM_IOCTL_NFENCE_SYNCOBJ_BIND, &b), 0);

	unbind();
	igt_assert_eq(drmSyncobjTimelineWait(f1, &s1, &point, 1,
					     nfence_deadline_ms(RELEASE_MS),
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					     NULL), 0);
	igt_assert_eq(drmSyncobjQuery(f1, &s1, &last, 1), 0);
	igt_assert_eq_u64(last, point);
	igt_assert_eq(drmSyncobjCreate(f1, 0, &bin), 0);
	igt_assert_eq(drmSyncobjTransfer(f1, bin, 0, s1, point, 0), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(f1, bin, &sf), 0);
	memset(&info, 0, sizeof(info));
	memset(fi, 0, sizeof(fi));
	info.num_fences = ARRAY_SIZE(fi);
	info.sync_fence_info = (uintptr_t)fi;
	igt_assert_eq(ioctl(sf, SYNC_IOC_FILE_INFO, &info), 0);
	igt_assert_lt(0, (int)info.num_fences);
	igt_assert_eq(strcmp(fi[0].driver_name, "nfence"), 0);
	igt_assert_eq(fi[0].status, -ENODEV);
	close(sf);
	close(f);
	close(f1);
	rebind_and_use();
}

/*
 * SYNCOBJ_SIGNALs pending at the unbind (on a sync_file and a syncobj
 * point of vgem's fence): the unbind does not wait for them, a new one
 * fails with -ENODEV, and the dma_fence signaling after the unbind, then
 * the late close, touch nothing of the gone adapter (the kernel-log check
 * and kmemleak judge that).
 */
static void test_unbind_syncobj_signal(void)
{
	struct drm_nfence_syncobj_signal a = { 0 };
	struct nfence_vgem_fence v;
	uint32_t dev, h, s;
	int f, vgem, sf;

	start();
	vgem = nfence_vgem_open();
	igt_require_f(vgem >= 0, "no vgem device (modprobe vgem)\n");
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				NULL);
	nfence_vgem_fence_create(vgem, &v);
	s = nfence_vgem_fence_syncobj(f, &v, 1);
	sf = nfence_vgem_fence_sync_file(&v);
	a.device = dev;
	a.fence = h;
	a.value = 1;
	a.syncobj = s;
	a.point = 1;
	igt_assert_eq(drmIoctl(f, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &a), 0);
	a.syncobj = 0;
	a.point = 0;
	a.fd = sf;
	a.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	igt_assert_eq(drmIoctl(f, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &a), 0);

	unbind();
	igt_assert_eq(drmIoctl(f, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &a), -1);
	igt_assert_eq(errno, ENODEV);
	nfence_vgem_fence_signal(vgem, &v);
	usleep(100 * 1000);
	close(sf);
	nfence_vgem_fence_destroy(vgem, &v);
	close(vgem);
	close(f);
	rebind_and_use();
}

static void test_unbind_shared_fd(void)
{
	struct drm_nfence_fence_mapping m;
	int f, sfd, sock, status;
	uint32_t dev, h;
	char byte;
	pid_t pid;

	start();
	f = nfence_open_adapter(0);
	dev = nfence_device_create(f);
	h = nfence_fence_create(f, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				DRM_NFENCE_FENCE_SHARED |
				DRM_NFENCE_FENCE_NT_SECURITY_SHARING, 0, &m);
	sfd = nfence_fence_share(f, h);
	pid = nfence_fork_child(holder, &sock);
	igt_assert_eq(nfence_send_fd(sock, sfd), 0);
	igt_assert_eq(read(sock, &byte, 1), 1);
	nfence_wait_in_ioctl(pid, pid, 5000);

	/* This process lets go first; the holder keeps fd and fence. */
	close(sfd);
	unbind();
	close(f);
	usleep(100 * 1000);
	igt_assert_eq(send(sock, &byte, 1, MSG_NOSIGNAL), 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	close(sock);
	igt_assert_f(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		     "holder status 0x%x\n", status);
	rebind_and_use();
}

/*
 * Submit to @q a command buffer of @n rounds of 1 ms of work and a signal
 * of @m, from *@v + 1 on; returns its progress value.
 */
static uint64_t slow_signals(struct nfence_queue *q,
			     const struct drm_nfence_fence_mapping *m,
			     unsigned int n, uint64_t *v)
{
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	for (unsigned int i = 0; i < n; i++) {
		nfence_cs_work(&cs, 1000000);
		nfence_cs_signal_fence(&cs, m, ++*v);
	}
	return nfence_queue_submit(q, &cs);
}

/* Adapter @fd's peer doorbell writes to other GPUs (debugfs). */
static uint64_t peer_rings(int fd)
{
	static const char * const files[] = { "nfence_interrupts" };
	struct nfence_interrupts irq;
	int dir = nfence_debugfs_dir_files(fd, files, 1);

	nfence_debugfs_interrupts(dir, &irq);
	close(dir);
	return irq.peer_rings;
}

/*
 * Peer signals (the peer load): adapter 1's GPU signals a cross-adapter
 * fence whose instance on adapter 0 it rings GPU to GPU, before adapter 0
 * is unbound (every signal rings it), after (no signal rings it: an
 * unplugged adapter's doorbell takes no more writes), while the instance
 * goes with adapter 0's file, and after that: adapter 1's work runs to
 * the end with every value, and adapter 0 bound again works.
 */
static void test_unbind_peer_signals(void)
{
	struct drm_nfence_query_fence_caps c0, c1;
	struct drm_nfence_fence_mapping m, mx;
	uint32_t dev, devx, h, hx;
	struct nfence_queue qx;
	uint64_t v = 0, done, rings;
	int f, fx, sfd;
	bool peers;

	start();
	f = nfence_open_adapter(0);
	fx = __nfence_open_adapter(1);
	peers = fx >= 0;
	if (peers) {
		nfence_query_fence_caps(f, &c0);
		nfence_query_fence_caps(fx, &c1);
		peers = c0.flags & c1.flags & DRM_NFENCE_FENCE_CAP_PEER_SIGNALS;
		if (!peers)
			close(fx);
	}
	if (!peers)
		close(f);
	igt_require_f(peers, "needs adapters 0 and 1 with peer signals\n");
	dev = nfence_device_create(f);
	devx = nfence_device_create(fx);
	hx = nfence_fence_create(fx, devx, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				 DRM_NFENCE_FENCE_SHARED |
				 DRM_NFENCE_FENCE_NT_SECURITY_SHARING |
				 DRM_NFENCE_FENCE_CROSS_ADAPTER, 0, &mx);
	sfd = nfence_fence_share(fx, hx);
	h = nfence_fence_open(f, dev, sfd, 0, &m);
	close(sfd);
	igt_assert_neq(h, 0);
	nfence_queue_create(&qx, fx, devx, 0, 0);

	rings = peer_rings(fx);
	done = slow_signals(&qx, &mx, 40, &v);
	igt_assert(nfence_queue_poll(&qx, done, 20000));
	igt_assert_eq_u64(peer_rings(fx), rings + 40);
	slow_signals(&qx, &mx, 40, &v);
	unbind();
	done = slow_signals(&qx, &mx, 40, &v);
	igt_assert(nfence_queue_poll(&qx, done, 20000));
	rings = peer_rings(fx);
	done = slow_signals(&qx, &mx, 40, &v);
	igt_assert(nfence_queue_poll(&qx, done, 20000));
	igt_assert_eq_u64(peer_rings(fx), rings);
	close(f);
	done = slow_signals(&qx, &mx, 40, &v);
	igt_assert(nfence_queue_poll(&qx, done, 20000));
	igt_assert_eq(__nfence_fence_wait_one(fx, devx, hx, v, 0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fx, devx, hx, v + 1, 0), -ETIME);

	nfence_queue_destroy(&qx);
	nfence_fence_destroy(fx, hx);
	nfence_device_destroy(fx, devx);
	close(fx);
	rebind_and_use();
}

igt_main
{
	igt_fixture {
		int f = nfence_open_adapter(0);

		pdev_name_of(f, pdev_name, sizeof(pdev_name));
		close(f);
		igt_require_f(geteuid() == 0, "unbinding needs root\n");
		igt_assert_f(access(DRIVER_DIR "/unbind", W_OK) == 0,
			     "no platform driver to unbind %s from\n",
			     pdev_name);
		igt_install_exit_handler(rebind_on_exit);
	}

	igt_describe("Unbind and bind again with nothing open, twice; the "
		     "new adapter works.");
	igt_subtest("unbind-rebind")
		test_unbind_rebind();

	igt_describe("Every call on an fd open across the unbind fails with "
		     "-ENODEV (queries, creates, signal, wait, destroy, "
		     "mmap); closing it late is clean.");
	igt_subtest("unbind-open-fd")
		test_unbind_open_fd();

	igt_describe("A fence's CPU mapping stays readable after the unbind "
		     "and reads AlwaysSignaled, even after the fd is closed.");
	igt_subtest("unbind-mapped-fence")
		test_unbind_mapped_fence();

	igt_describe("A fence whose creating handle was destroyed before the "
		     "unbind keeps its value; one whose creating handle is "
		     "held reads AlwaysSignaled.");
	igt_subtest("unbind-creator-destroyed")
		test_unbind_creator_destroyed();

	igt_describe("Allocations' CPU mappings (VRAM and system memory) "
		     "fault back in after the unbind zapped them, with what "
		     "was written, even after the fd is closed.");
	igt_subtest("unbind-mapped-alloc")
		test_unbind_mapped_alloc();

	igt_describe("Blocked CPU waits (on the adapter's own fence and on "
		     "a cross-adapter one) return -ENODEV within a second.");
	igt_subtest("unbind-blocked-wait")
		test_unbind_blocked_wait();

	igt_describe("An asynchronous wait signals its eventfd at the "
		     "unbind.");
	igt_subtest("unbind-async-wait")
		test_unbind_async_wait();

	igt_describe("Queued GPU work (running, blocked on a fence, behind) "
		     "is dropped; the fd closes late.");
	igt_subtest("unbind-queued-work")
		test_unbind_queued_work();

	igt_describe("A connected doorbell goes DISCONNECTED_ABORT; its "
		     "mappings stay valid until unmapped; CONNECT and NOTIFY "
		     "fail with -ENODEV.");
	igt_subtest("unbind-doorbell")
		test_unbind_doorbell();

	igt_describe("An adapter in D3 (runtime suspended) unbinds; the new "
		     "one starts in D0.");
	igt_subtest("unbind-suspended")
		test_unbind_suspended();

	igt_describe("Another process holding a shared fence's fd and "
		     "waiting on it is released, and closes late.");
	igt_subtest("unbind-shared-fd")
		test_unbind_shared_fd();

	igt_describe("Peer signals: another adapter's GPU rings adapter 0's "
		     "instance of a cross-adapter fence across the unbind and "
		     "the instance's release; its work runs to the end.");
	igt_subtest("unbind-peer-signals")
		test_unbind_peer_signals();

	igt_describe("A syncobj binding pending at the unbind: its point "
		     "appears with -ENODEV for a second adapter's file that "
		     "imported the syncobj.");
	igt_subtest("unbind-syncobj-binding")
		test_unbind_syncobj_binding();

	igt_describe("SYNCOBJ_SIGNALs pending at the unbind (a sync_file and "
		     "a syncobj point of vgem's fence) are dropped: the unbind "
		     "does not wait, a new one fails with -ENODEV, the "
		     "dma_fence signaling later is harmless.");
	igt_subtest("unbind-syncobj-signal")
		test_unbind_syncobj_signal();
}
