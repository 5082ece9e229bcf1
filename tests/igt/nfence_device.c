// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("DRM_IOCTL_NFENCE_DEVICE_CREATE/DESTROY: handles, "
		     "per-file scope, the per-file limit, cleanup on close, "
		     "concurrency and the rejection of invalid input.");

#define MAX_DEVICES	DRM_NFENCE_MAX_DEVICES_PER_FILE
#define POISON		0xdeadbeefu
#define NUM_THREADS	4
#define THREAD_LOOPS	2000
#define THREAD_HOLD	64
#define WATCHDOG_S	60

static int fd = -1;
static const char * const debugfs_files[] = { "nfence_adapter" };

/* Live devices on the adapter according to debugfs nfence_adapter. */
static int64_t live_devices(int dfd)
{
	int64_t n = nfence_live_devices(dfd);

	igt_assert_f(n >= 0, "debugfs nfence_adapter \"devices\" "
		     "unreadable\n");
	return n;
}

static void assert_devices(int dfd, int64_t base, int64_t delta)
{
	igt_assert_eq_s64(live_devices(dfd), base + delta);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void assert_unique(const uint32_t *handles, int n)
{
	uint32_t *sorted = malloc(n * sizeof(*sorted));

	igt_assert(sorted);
	memcpy(sorted, handles, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	for (int i = 0; i < n; i++) {
		igt_assert_neq_u32(sorted[i], 0);
		if (i)
			igt_assert_f(sorted[i] != sorted[i - 1],
				     "handle %u handed out twice\n", sorted[i]);
	}
	free(sorted);
}

/* A failed create leaves the struct as it was and no device behind. */
static void expect_create_error(int dfd, uint32_t flags, int err)
{
	struct drm_nfence_device_create c = {
		.flags = flags,
		.handle = POISON,
	};

	igt_assert_eq(__nfence_device_create(dfd, &c), err);
	igt_assert_eq_u32(c.flags, flags);
	igt_assert_eq_u32(c.handle, POISON);
}

/* A failed destroy leaves the struct as it was. */
static void expect_destroy_error(int dfd, uint32_t handle, uint32_t pad,
				 int err)
{
	struct drm_nfence_device_destroy d = { .handle = handle, .pad = pad };

	igt_assert_eq(__nfence_device_destroy(dfd, &d), err);
	igt_assert_eq_u32(d.handle, handle);
	igt_assert_eq_u32(d.pad, pad);
}

static void test_create_destroy(void)
{
	int64_t base = live_devices(fd);
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	assert_devices(fd, base, 1);
	nfence_device_destroy(fd, h);
	assert_devices(fd, base, 0);
}

static void test_create_many(void)
{
	const int n = 256;
	int64_t base = live_devices(fd);
	uint32_t handles[256];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++)
		handles[i] = nfence_device_create(fd);
	assert_unique(handles, n);
	assert_devices(fd, base, n);

	/* Destroy in an order unrelated to creation. */
	for (int i = 0; i < n; i++)
		nfence_device_destroy(fd, handles[(i * 37) % n]);
	assert_devices(fd, base, 0);
}

static void test_handles_not_reused(void)
{
	const int n = 64;
	uint32_t handles[64];

	nfence_watchdog(WATCHDOG_S);
	/* Cyclic allocation: a handle just freed does not come back. */
	for (int i = 0; i < n; i++) {
		handles[i] = nfence_device_create(fd);
		nfence_device_destroy(fd, handles[i]);
	}
	assert_unique(handles, n);
}

static void test_destroy_twice(void)
{
	int64_t base = live_devices(fd);
	uint32_t other = nfence_device_create(fd);
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	nfence_device_destroy(fd, h);
	expect_destroy_error(fd, h, 0, -ENOENT);
	expect_destroy_error(fd, h, 0, -ENOENT);
	/* The failed destroys did not take another device with them. */
	assert_devices(fd, base, 1);
	nfence_device_destroy(fd, other);
	assert_devices(fd, base, 0);
}

static void test_destroy_handle_zero(void)
{
	int64_t base = live_devices(fd);
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	expect_destroy_error(fd, 0, 0, -ENOENT);
	assert_devices(fd, base, 1);
	nfence_device_destroy(fd, h);
	expect_destroy_error(fd, 0, 0, -ENOENT);
}

static void test_destroy_unknown_handle(void)
{
	int dfd = nfence_open();
	int64_t base = live_devices(dfd);
	uint32_t h = nfence_device_create(dfd);
	const uint32_t fixed[] = {
		UINT32_MAX, INT32_MAX, 0x80000000u, 0x10000u, POISON,
	};

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t i = 1; i <= 16; i++)
		expect_destroy_error(dfd, h + i, 0, -ENOENT);
	for (unsigned int i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i] != h)
			expect_destroy_error(dfd, fixed[i], 0, -ENOENT);

	srandom(getpid());
	for (int i = 0; i < 1000; i++) {
		uint32_t r = (uint32_t)random() ^ ((uint32_t)random() << 16);

		if (r != h)
			expect_destroy_error(dfd, r, 0, -ENOENT);
	}

	/* Nothing above touched the one live device. */
	assert_devices(dfd, base, 1);
	nfence_device_destroy(dfd, h);
	assert_devices(dfd, base, 0);
	close(dfd);
}

static void test_destroy_other_fd(void)
{
	int a = nfence_open(), b = nfence_open();
	int64_t base = live_devices(a);
	uint32_t h = nfence_device_create(a);

	nfence_watchdog(WATCHDOG_S);
	/* b holds no device at all, so h means nothing there. */
	expect_destroy_error(b, h, 0, -ENOENT);
	assert_devices(a, base, 1);
	nfence_device_destroy(a, h);
	expect_destroy_error(b, h, 0, -ENOENT);
	close(b);
	close(a);
}

static void test_per_file_handles(void)
{
	int a = nfence_open(), b = nfence_open();
	int64_t base = live_devices(a);
	uint32_t ha[8], hb[8];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 8; i++) {
		ha[i] = nfence_device_create(a);
		hb[i] = nfence_device_create(b);
	}
	assert_devices(a, base, 16);

	for (int i = 0; i < 8; i++)
		nfence_device_destroy(a, ha[i]);
	assert_devices(a, base, 8);
	/* a has none left: b's handles mean nothing on a. */
	for (int i = 0; i < 8; i++)
		expect_destroy_error(a, hb[i], 0, -ENOENT);
	/* ... and b's devices are all still there. */
	for (int i = 0; i < 8; i++)
		nfence_device_destroy(b, hb[i]);
	assert_devices(a, base, 0);
	close(b);
	close(a);
}

static void test_destroy_other_adapter(void)
{
	int count = nfence_count_adapters();
	int a, b;
	int64_t base_a, base_b;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(count >= 2, "needs 2 adapters, have %d\n", count);
	a = nfence_open_adapter(0);
	b = nfence_open_adapter(1);
	base_a = live_devices(a);
	base_b = live_devices(b);

	h = nfence_device_create(a);
	assert_devices(a, base_a, 1);
	assert_devices(b, base_b, 0);
	expect_destroy_error(b, h, 0, -ENOENT);
	assert_devices(a, base_a, 1);
	nfence_device_destroy(a, h);
	assert_devices(a, base_a, 0);
	close(b);
	close(a);
}

static void test_create_bad_flags(void)
{
	int64_t base = live_devices(fd);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++)
		expect_create_error(fd, 1u << bit, -EINVAL);
	expect_create_error(fd, UINT32_MAX, -EINVAL);
	assert_devices(fd, base, 0);
}

static void test_destroy_bad_pad(void)
{
	const uint32_t pads[] = { 1, 0x80000000u, UINT32_MAX };
	int64_t base = live_devices(fd);
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < 3; i++)
		expect_destroy_error(fd, h, pads[i], -EINVAL);
	for (int bit = 0; bit < 32; bit++)
		expect_destroy_error(fd, h, 1u << bit, -EINVAL);

	/* The device survived. */
	assert_devices(fd, base, 1);
	nfence_device_destroy(fd, h);
	assert_devices(fd, base, 0);
}

static void test_destroy_bad_pad_bad_handle(void)
{
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	/* Fields are validated before the handle is looked up. */
	expect_destroy_error(fd, 0, 1, -EINVAL);
	expect_destroy_error(fd, h + 1000, 1, -EINVAL);
	expect_destroy_error(fd, UINT32_MAX, UINT32_MAX, -EINVAL);
	nfence_device_destroy(fd, h);
	expect_destroy_error(fd, h, 1, -EINVAL);
}

static void fill(int dfd, uint32_t *handles, int n)
{
	for (int i = 0; i < n; i++)
		handles[i] = nfence_device_create(dfd);
}

static void test_max_devices(void)
{
	static uint32_t handles[MAX_DEVICES];
	int dfd = nfence_open();
	int64_t base = live_devices(dfd);
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	fill(dfd, handles, MAX_DEVICES);
	assert_unique(handles, MAX_DEVICES);
	assert_devices(dfd, base, MAX_DEVICES);

	expect_create_error(dfd, 0, -ENOSPC);
	expect_create_error(dfd, 0, -ENOSPC);
	assert_devices(dfd, base, MAX_DEVICES);

	/* Freeing one allows exactly one more. */
	nfence_device_destroy(dfd, handles[MAX_DEVICES / 2]);
	h = nfence_device_create(dfd);
	handles[MAX_DEVICES / 2] = h;
	assert_unique(handles, MAX_DEVICES);
	expect_create_error(dfd, 0, -ENOSPC);

	/* Invalid flags still win over a full table. */
	expect_create_error(dfd, 1, -EINVAL);

	for (int i = 0; i < MAX_DEVICES; i++)
		nfence_device_destroy(dfd, handles[i]);
	assert_devices(dfd, base, 0);
	fill(dfd, handles, MAX_DEVICES);
	expect_create_error(dfd, 0, -ENOSPC);

	/* Closing a full file releases everything. */
	close(dfd);
	assert_devices(fd, base, 0);
}

static void test_max_devices_per_file(void)
{
	static uint32_t handles[MAX_DEVICES];
	int a = nfence_open(), b = nfence_open();
	int64_t base = live_devices(a);

	nfence_watchdog(WATCHDOG_S);
	fill(a, handles, MAX_DEVICES);
	expect_create_error(a, 0, -ENOSPC);

	/* The limit is per file: another file still has room. */
	nfence_device_destroy(b, nfence_device_create(b));
	fill(b, handles, 16);
	assert_devices(a, base, MAX_DEVICES + 16);
	for (int i = 0; i < 16; i++)
		nfence_device_destroy(b, handles[i]);

	close(a);
	assert_devices(b, base, 0);
	close(b);
}

static void test_close_with_devices(void)
{
	int64_t base = live_devices(fd);
	uint32_t handles[16];
	int dfd;

	nfence_watchdog(WATCHDOG_S);
	for (int round = 0; round < 4; round++) {
		dfd = nfence_open();
		fill(dfd, handles, 16);
		assert_devices(fd, base, 16);
		igt_assert_eq(close(dfd), 0);
		assert_devices(fd, base, 0);
	}

	/* A partially destroyed set too. */
	dfd = nfence_open();
	fill(dfd, handles, 16);
	for (int i = 0; i < 16; i += 2)
		nfence_device_destroy(dfd, handles[i]);
	assert_devices(fd, base, 8);
	igt_assert_eq(close(dfd), 0);
	assert_devices(fd, base, 0);
}

struct thread_data {
	pthread_t thread;
	pthread_barrier_t *barrier;
	int fd;
	int failures;
	int first_error;
	uint32_t held[THREAD_HOLD];
};

static void thread_error(struct thread_data *t, int err)
{
	if (!t->failures++)
		t->first_error = err;
}

static void *create_destroy_thread(void *arg)
{
	struct thread_data *t = arg;
	int err;

	for (int i = 0; i < THREAD_LOOPS; i++) {
		struct drm_nfence_device_create c = { 0 };

		err = __nfence_device_create(t->fd, &c);
		if (err || !c.handle) {
			thread_error(t, err ?: -EBADMSG);
			continue;
		}
		err = __nfence_device_destroy_handle(t->fd, c.handle);
		if (err)
			thread_error(t, err);
	}

	/* Hold some while every thread does, so the main thread can look. */
	for (int i = 0; i < THREAD_HOLD; i++) {
		struct drm_nfence_device_create c = { 0 };

		err = __nfence_device_create(t->fd, &c);
		if (err || !c.handle)
			thread_error(t, err ?: -EBADMSG);
		t->held[i] = c.handle;
	}
	pthread_barrier_wait(t->barrier);
	pthread_barrier_wait(t->barrier);
	for (int i = 0; i < THREAD_HOLD; i++) {
		if (!t->held[i])
			continue;
		err = __nfence_device_destroy_handle(t->fd, t->held[i]);
		if (err)
			thread_error(t, err);
	}
	return NULL;
}

static void test_concurrent_create_destroy(void)
{
	static uint32_t all[NUM_THREADS * THREAD_HOLD];
	struct thread_data t[NUM_THREADS];
	pthread_barrier_t barrier;
	int dfd = nfence_open();
	int64_t base = live_devices(dfd), held = -1;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(pthread_barrier_init(&barrier, NULL, NUM_THREADS + 1),
		      0);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < NUM_THREADS; i++) {
		t[i].fd = dfd;
		t[i].barrier = &barrier;
		igt_assert_eq(nfence_thread_create(&t[i].thread,
						   create_destroy_thread,
						   &t[i]), 0);
	}

	/*
	 * No assertion between the barriers: the threads must get past
	 * (held stays -1 if debugfs cannot be read, and fails below).
	 */
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < NUM_THREADS; i++)
		memcpy(&all[i * THREAD_HOLD], t[i].held, sizeof(t[i].held));
	held = nfence_live_devices(dfd);
	pthread_barrier_wait(&barrier);

	for (int i = 0; i < NUM_THREADS; i++)
		pthread_join(t[i].thread, NULL);
	pthread_barrier_destroy(&barrier);

	for (int i = 0; i < NUM_THREADS; i++)
		igt_assert_f(!t[i].failures,
			     "thread %d: %d failures, first %d\n", i,
			     t[i].failures, t[i].first_error);
	assert_unique(all, NUM_THREADS * THREAD_HOLD);
	igt_assert_eq_s64(held, base + NUM_THREADS * THREAD_HOLD);
	assert_devices(dfd, base, 0);
	close(dfd);
}

struct race_data {
	pthread_t thread;
	pthread_barrier_t *barrier;
	int fd;
	volatile uint32_t *handle;
	int result;
};

static void *destroy_race_thread(void *arg)
{
	struct race_data *r = arg;

	pthread_barrier_wait(r->barrier);
	r->result = __nfence_device_destroy_handle(r->fd, *r->handle);
	return NULL;
}

static void test_concurrent_destroy_same(void)
{
	struct race_data r[NUM_THREADS];
	pthread_barrier_t barrier;
	volatile uint32_t handle;
	int64_t base = live_devices(fd);

	nfence_watchdog(WATCHDOG_S);
	for (int round = 0; round < 200; round++) {
		int ok = 0, enoent = 0;

		handle = nfence_device_create(fd);
		igt_assert_eq(pthread_barrier_init(&barrier, NULL,
						   NUM_THREADS), 0);
		for (int i = 0; i < NUM_THREADS; i++) {
			r[i].fd = fd;
			r[i].barrier = &barrier;
			r[i].handle = &handle;
			r[i].result = 1;
			igt_assert_eq(nfence_thread_create(&r[i].thread,
							   destroy_race_thread,
							   &r[i]), 0);
		}
		for (int i = 0; i < NUM_THREADS; i++) {
			pthread_join(r[i].thread, NULL);
			if (r[i].result == 0)
				ok++;
			else if (r[i].result == -ENOENT)
				enoent++;
		}
		pthread_barrier_destroy(&barrier);

		igt_assert_eq(ok, 1);
		igt_assert_eq(enoent, NUM_THREADS - 1);
	}
	assert_devices(fd, base, 0);
}

static void test_fork_shares_handles(void)
{
	int64_t base = live_devices(fd);
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	/* After fork() the child shares the drm_file, hence the handles. */
	igt_fork(child, 1) {
		nfence_device_destroy(fd, h);
		expect_destroy_error(fd, h, 0, -ENOENT);
	}
	igt_waitchildren();

	expect_destroy_error(fd, h, 0, -ENOENT);
	assert_devices(fd, base, 0);
}

static void test_fork_child_creates(void)
{
	int64_t base = live_devices(fd);
	volatile uint32_t *shared;

	nfence_watchdog(WATCHDOG_S);
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(shared != MAP_FAILED);

	igt_fork(child, 4)
		shared[child] = nfence_device_create(fd);
	igt_waitchildren();

	/* The children are gone; their devices live on in the shared file. */
	assert_devices(fd, base, 4);
	for (int i = 0; i < 4; i++)
		nfence_device_destroy(fd, shared[i]);
	assert_devices(fd, base, 0);
	munmap((void *)shared, 4096);
}

/*
 * A thread creating fences and allocations on one device while the main
 * thread destroys it (issue 17 point 3): every handle a create returned
 * is closed with the device, however the two interleave (creators check
 * the device after publishing, since the insert may drop the table lock).
 */
#define RACE_OBJECTS	400

struct create_race {
	uint32_t device;
	uint32_t fences[RACE_OBJECTS];
	uint32_t allocs[RACE_OBJECTS];
	unsigned int nfences, nallocs;
	int go;
};

static void *create_race_thread(void *data)
{
	struct create_race *r = data;

	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		;
	for (unsigned int i = 0; i < RACE_OBJECTS; i++) {
		struct drm_nfence_fence_create fc = {
			.device = r->device,
			.type = DRM_NFENCE_FENCE_TYPE_DEFAULT,
		};
		struct drm_nfence_alloc_create ac = {
			.device = r->device,
			.size = 4096,
			.segment_id = NFENCE_SEGMENT_SYSTEM,
		};

		if (__nfence_fence_create(fd, &fc))
			break;
		r->fences[r->nfences++] = fc.handle;
		if (__nfence_alloc_create(fd, &ac))
			break;
		r->allocs[r->nallocs++] = ac.handle;
	}
	return NULL;
}

/* Fence handles and allocations of this process's files (nfence_clients). */
static unsigned int client_objects(int dir)
{
	char buf[16384], prefix[32], *line, *save, *p;
	unsigned int fences, allocs, total = 0;

	igt_assert_lte(0, __nfence_debugfs_read(dir, "nfence_clients", buf,
						sizeof(buf)));
	snprintf(prefix, sizeof(prefix), "pid %d ", getpid());
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		p = strstr(line, " fences ");
		igt_assert_f(p && sscanf(p, " fences %u allocs %u", &fences,
					 &allocs) == 2,
			     "nfence_clients: %s\n", line);
		total += fences + allocs;
	}
	return total;
}

static void test_destroy_create_race(void)
{
	struct create_race *r = calloc(1, sizeof(*r));
	int dir = nfence_debugfs_dir_files(fd, (const char * const[]){
						   "nfence_clients" }, 1);
	pthread_t thread;

	nfence_watchdog(WATCHDOG_S);
	igt_assert(r);
	igt_assert_eq(client_objects(dir), 0);
	for (unsigned int round = 0; round < 20; round++) {
		memset(r, 0, sizeof(*r));
		r->device = nfence_device_create(fd);
		igt_assert_eq(nfence_thread_create(&thread,
						   create_race_thread, r), 0);
		__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
		usleep(round * 500);
		nfence_device_destroy(fd, r->device);
		igt_assert_eq(nfence_thread_join(thread, 20000), 0);
		for (unsigned int i = 0; i < r->nfences; i++)
			igt_assert_f(__nfence_fence_destroy_handle(fd,
								   r->fences[i]) == -ENOENT,
				     "round %u: fence %u outlived its "
				     "device\n", round, r->fences[i]);
		for (unsigned int i = 0; i < r->nallocs; i++)
			igt_assert_f(__nfence_alloc_destroy_handle(fd,
								   r->device,
								   r->allocs[i]) == -ENOENT,
				     "round %u: allocation %u outlived its "
				     "device\n", round, r->allocs[i]);
		/* Allocation handles need their device: count them all. */
		igt_assert_f(client_objects(dir) == 0, "round %u: objects "
			     "outlived their device\n", round);
	}
	close(dir);
	free(r);
}

/* DEVICE_CONTROL invalid input: the call fails and writes nothing. */
static void expect_control_error(int dfd, uint32_t device, uint32_t op,
				 uint32_t flags, int err)
{
	struct drm_nfence_device_control c = {
		.device = device,
		.op = op,
		.flags = flags,
		.error = POISON,
		.fault_va = POISON,
		.fault_reason = POISON,
		.fault_context = POISON,
	};

	igt_assert_eq(__nfence_device_control(dfd, &c), err);
	igt_assert_eq_u32(c.device, device);
	igt_assert_eq_u32(c.op, op);
	igt_assert_eq_u32(c.flags, flags);
	igt_assert_eq_u32(c.error, POISON);
	igt_assert_eq_u64(c.fault_va, POISON);
	igt_assert_eq_u32(c.fault_reason, POISON);
	igt_assert_eq_u32(c.fault_context, POISON);
}

/* @device of @dfd is not in error: QUERY says so, and it creates fences. */
static void assert_not_in_error(int dfd, uint32_t device)
{
	struct drm_nfence_device_control c;
	uint32_t h;

	igt_assert_eq_u32(nfence_device_control(dfd, device,
						DRM_NFENCE_DEVICE_OP_QUERY, &c),
			  DRM_NFENCE_DEVICE_ERROR_NONE);
	igt_assert_eq_u64(c.fault_va, 0);
	igt_assert_eq_u32(c.fault_reason, DRM_NFENCE_FAULT_NONE);
	igt_assert_eq_u32(c.fault_context, 0);
	/* Not AlwaysSignaled from birth: a wait for 1 times out. */
	h = nfence_fence_create(dfd, device, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				0, NULL);
	igt_assert_eq(__nfence_fence_wait_one(dfd, device, h, 1, 0), -ETIME);
	nfence_fence_destroy(dfd, h);
}

static void test_control_query(void)
{
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	assert_not_in_error(fd, h);
	/* Querying changes nothing. */
	assert_not_in_error(fd, h);
	nfence_device_destroy(fd, h);
}

static void test_control_bad_op(void)
{
	const uint32_t ops[] = { 2, 3, 0x100, 0x80000000u, UINT32_MAX };
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++)
		expect_control_error(fd, h, ops[i], 0, -EINVAL);
	assert_not_in_error(fd, h);
	nfence_device_destroy(fd, h);
}

static void test_control_bad_flags(void)
{
	uint32_t h = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	/* With MARK_ERROR: a refused call must not mark the device. */
	for (int bit = 0; bit < 32; bit++)
		expect_control_error(fd, h, DRM_NFENCE_DEVICE_OP_MARK_ERROR,
				     1u << bit, -EINVAL);
	assert_not_in_error(fd, h);
	nfence_device_destroy(fd, h);
}

static void test_control_bad_handle(void)
{
	int count = nfence_count_adapters();
	int other = nfence_open();
	uint32_t mine = nfence_device_create(fd);
	uint32_t theirs = nfence_device_create(other);
	uint32_t gone = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	nfence_device_destroy(fd, gone);
	/* Handles are per file: make sure the two differ. */
	if (theirs == mine)
		theirs = nfence_device_create(other);
	igt_assert_neq_u32(theirs, mine);
	for (uint32_t op = 0; op <= DRM_NFENCE_DEVICE_OP_MARK_ERROR; op++) {
		expect_control_error(fd, 0, op, 0, -ENOENT);
		expect_control_error(fd, 0xfffffff0u, op, 0, -ENOENT);
		expect_control_error(fd, gone, op, 0, -ENOENT);
		/* Another file's device. */
		expect_control_error(fd, theirs, op, 0, -ENOENT);
		expect_control_error(other, mine, op, 0, -ENOENT);
	}
	/* Nobody was marked by the refused calls. */
	assert_not_in_error(fd, mine);
	assert_not_in_error(other, theirs);
	if (count >= 2) {
		int b = nfence_open_adapter(1);

		/* Another adapter's file: its own (empty) handle space. */
		expect_control_error(b, mine, DRM_NFENCE_DEVICE_OP_MARK_ERROR,
				     0, -ENOENT);
		close(b);
		assert_not_in_error(fd, mine);
	}
	nfence_device_destroy(fd, mine);
	close(other);
}

igt_main
{
	igt_fixture {
		int dir;

		fd = nfence_open();
		/* Every subtest counts live devices in nfence_adapter. */
		dir = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
		close(dir);
	}

	igt_describe("Create a device, get a non-zero handle, destroy it.");
	igt_subtest("create-destroy")
		test_create_destroy();

	igt_describe("Many live devices on one file have distinct non-zero "
		     "handles and can be destroyed in any order.");
	igt_subtest("create-many")
		test_create_many();

	igt_describe("A destroyed handle is not handed out again right away.");
	igt_subtest("handles-not-reused")
		test_handles_not_reused();

	igt_describe("Destroying a device twice fails with -ENOENT and "
		     "leaves other devices alone.");
	igt_subtest("destroy-twice")
		test_destroy_twice();

	igt_describe("Handle 0 never names a device: -ENOENT.");
	igt_subtest("destroy-handle-zero")
		test_destroy_handle_zero();

	igt_describe("Handles that were never created fail with -ENOENT and "
		     "do not disturb the live device.");
	igt_subtest("destroy-unknown-handle")
		test_destroy_unknown_handle();

	igt_describe("A handle used on another open file fails with -ENOENT.");
	igt_subtest("destroy-other-fd")
		test_destroy_other_fd();

	igt_describe("Two files' handle spaces are independent.");
	igt_subtest("per-file-handles")
		test_per_file_handles();

	igt_describe("A handle from another adapter fails with -ENOENT.");
	igt_subtest("destroy-other-adapter")
		test_destroy_other_adapter();

	igt_describe("Every non-zero create flag bit fails with -EINVAL, "
		     "writes no handle and creates nothing.");
	igt_subtest("create-bad-flags")
		test_create_bad_flags();

	igt_describe("Non-zero destroy pad fails with -EINVAL and the device "
		     "survives.");
	igt_subtest("destroy-bad-pad")
		test_destroy_bad_pad();

	igt_describe("Non-zero pad is -EINVAL even when the handle is bad.");
	igt_subtest("destroy-bad-pad-bad-handle")
		test_destroy_bad_pad_bad_handle();

	igt_describe("1024 devices per file, the next fails with -ENOSPC, "
		     "freeing one allows exactly one more; close frees all.");
	igt_subtest("max-devices")
		test_max_devices();

	igt_describe("The device limit is per file, not per adapter.");
	igt_subtest("max-devices-per-file")
		test_max_devices_per_file();

	igt_describe("Closing a file with live devices destroys them "
		     "(debugfs devices count drops back).");
	igt_subtest("close-with-devices")
		test_close_with_devices();

	igt_describe("Threads create and destroy devices on one file at "
		     "once: no failure, no handle handed out twice.");
	igt_subtest("concurrent-create-destroy")
		test_concurrent_create_destroy();

	igt_describe("Threads racing to destroy one device: exactly one "
		     "succeeds, the others get -ENOENT.");
	igt_subtest("concurrent-destroy-same")
		test_concurrent_destroy_same();

	igt_describe("Fences and allocations created while their device is "
		     "destroyed never outlive it.");
	igt_subtest("destroy-create-race")
		test_destroy_create_race();

	igt_describe("A forked child shares the file and its handles.");
	igt_subtest("fork-shares-handles")
		test_fork_shares_handles();

	igt_describe("DEVICE_CONTROL QUERY on a new device: not in error, no "
		     "fault; it changes nothing.");
	igt_subtest("control-query")
		test_control_query();

	igt_describe("DEVICE_CONTROL with an unknown op fails with -EINVAL "
		     "and writes nothing.");
	igt_subtest("control-bad-op")
		test_control_bad_op();

	igt_describe("DEVICE_CONTROL MARK_ERROR with any flag bit set fails "
		     "with -EINVAL, writes nothing and leaves the device "
		     "alone.");
	igt_subtest("control-bad-flags")
		test_control_bad_flags();

	igt_describe("DEVICE_CONTROL on handle 0, an unknown or destroyed "
		     "handle, another file's or another adapter's device fails "
		     "with -ENOENT and marks nobody.");
	igt_subtest("control-bad-handle")
		test_control_bad_handle();

	igt_describe("Devices created by forked children outlive them.");
	igt_subtest("fork-child-creates")
		test_fork_child_creates();

	igt_fixture {
		nfence_watchdog(0);
		close(fd);
	}
}
