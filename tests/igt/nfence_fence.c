// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Native fences: DRM_IOCTL_NFENCE_FENCE_CREATE/DESTROY/"
		     "SHARE/OPEN, the read-only CPU mapping of CurrentValue, "
		     "the GPU addresses, sharing across files and processes, "
		     "lifetimes and the rejection of every invalid input.");

#define POISON		0xdeadbeefu
#define WATCHDOG_S	60
#define GONE_MS		2000
#define FENCE_PAGE	NFENCE_FENCE_PAGE_SIZE
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define TYPE_INTRA_GPU	DRM_NFENCE_FENCE_TYPE_INTRA_GPU
#define SHAREABLE	NFENCE_FENCE_SHAREABLE
#define NO_SIGNAL	DRM_NFENCE_FENCE_NO_SIGNAL
#define NO_WAIT		DRM_NFENCE_FENCE_NO_WAIT
#define MAX_FENCES	DRM_NFENCE_MAX_FENCES_PER_FILE
static int fd = -1;
static uint32_t dev;
static int dbg = -1;
static bool native;
static struct drm_nfence_query_adapter adapter;
static struct drm_nfence_query_fence_caps caps;

/* Global fences on the adapter according to debugfs nfence_fences. */
static int64_t live_fences(void)
{
	return nfence_debugfs_count_fences(dbg);
}

/* Freeing may be deferred a little: poll for the expected count. */
/* The fences adapter debugfs directory @dir lists: @base + @delta, soon. */
static void assert_fences_in(int dir, int64_t base, int64_t delta)
{
	uint64_t end = nfence_monotonic_ns() + GONE_MS * 1000000ull;

	while (nfence_debugfs_count_fences(dir) != base + delta &&
	       nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_eq_s64(nfence_debugfs_count_fences(dir), base + delta);
}

static void assert_fences(int64_t base, int64_t delta)
{
	assert_fences_in(dbg, base, delta);
}

static void assert_alive(const struct drm_nfence_fence_mapping *m)
{
	nfence_debugfs_fence(dbg, m, NULL);
}

static void assert_gone(const struct drm_nfence_fence_mapping *m)
{
	int ret;

	ret = nfence_debugfs_fence_wait_gone(dbg, m, GONE_MS);
	igt_assert_f(ret == 0, "fence %" PRIu64 ":%u still listed: %s\n",
		     (uint64_t)m->cpu_mmap_offset, m->cpu_value_offset,
		     strerror(-ret));
}

static uint32_t create(uint32_t flags, uint64_t initial,
		       struct drm_nfence_fence_mapping *m)
{
	return nfence_fence_create(fd, dev, TYPE_DEFAULT, flags, initial, m);
}

static uint64_t read_value(int rfd, const struct drm_nfence_fence_mapping *m)
{
	const volatile uint64_t *v = nfence_fence_map(rfd, m);
	uint64_t value = *v;

	nfence_fence_unmap(v);
	return value;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void assert_unique_u32(const uint32_t *v, int n)
{
	uint32_t *sorted = malloc(n * sizeof(*sorted));

	igt_assert(sorted);
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	for (int i = 1; i < n; i++)
		igt_assert_f(sorted[i] != sorted[i - 1],
			     "%u handed out twice\n", sorted[i]);
	free(sorted);
}

static void assert_unique_u64(const uint64_t *v, int n)
{
	uint64_t *sorted = malloc(n * sizeof(*sorted));

	igt_assert(sorted);
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (int i = 1; i < n; i++)
		igt_assert_f(sorted[i] != sorted[i - 1],
			     "%#" PRIx64 " handed out twice\n", sorted[i]);
	free(sorted);
}

/* The mapping of a DEFAULT fence as the contract describes it. */
static void assert_default_mapping(const struct drm_nfence_fence_mapping *m)
{
	igt_assert_neq_u64(m->cpu_mmap_offset, 0);
	igt_assert_eq_u64(m->cpu_mmap_offset % FENCE_PAGE, 0);
	igt_assert_lt_u64(m->cpu_value_offset, FENCE_PAGE);
	igt_assert_eq_u32(m->cpu_value_offset % caps.value_stride, 0);
	igt_assert_eq_u32(m->pad, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, 0);
	igt_assert_neq_u64(m->monitored_value_gpu_va, 0);
	igt_assert_eq_u64(m->current_value_gpu_va % 8, 0);
	igt_assert_eq_u64(m->monitored_value_gpu_va % 8, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, m->monitored_value_gpu_va);
}

/*
 * A failed create returns @err and leaves the struct exactly as it was (no
 * handle, no mapping written).
 */
static void __expect_create_error(int cfd,
				  const struct drm_nfence_fence_create *in,
				  int err)
{
	struct drm_nfence_fence_create c = *in, orig;

	c.handle = POISON;
	memset(&c.mapping, 0xa5, sizeof(c.mapping));
	orig = c;
	igt_assert_eq(__nfence_fence_create(cfd, &c), err);
	igt_assert_f(!memcmp(&c, &orig, sizeof(c)),
		     "create struct changed on failure (handle %#x)\n",
		     c.handle);
}

/* ... and leaves no fence behind. */
static void expect_create_error(int cfd,
				const struct drm_nfence_fence_create *in,
				int err)
{
	int64_t base = live_fences();

	__expect_create_error(cfd, in, err);
	assert_fences(base, 0);
}

static struct drm_nfence_fence_create create_args(uint32_t type,
						  uint32_t flags)
{
	struct drm_nfence_fence_create c = {
		.device = dev,
		.type = type,
		.flags = flags,
		.initial_value = 1,
	};

	return c;
}

static void expect_destroy_error(int dfd, uint32_t handle, uint32_t pad,
				 int err)
{
	struct drm_nfence_fence_destroy d = { .handle = handle, .pad = pad };

	igt_assert_eq(__nfence_fence_destroy(dfd, &d), err);
	igt_assert_eq_u32(d.handle, handle);
	igt_assert_eq_u32(d.pad, pad);
}

static void expect_share_error(int sfd, uint32_t handle, uint32_t flags,
			       uint32_t pad, int err)
{
	struct drm_nfence_fence_share s = {
		.handle = handle,
		.flags = flags,
		.fd = -1,
		.pad = pad,
	};

	igt_assert_eq(__nfence_fence_share(sfd, &s), err);
	igt_assert_eq(s.fd, -1);
}

/* A failed open returns @err and writes neither handle nor mapping. */
static void expect_open_error(int ofd, const struct drm_nfence_fence_open *in,
			      int err)
{
	struct drm_nfence_fence_open o = *in, orig;

	o.handle = POISON;
	memset(&o.mapping, 0xa5, sizeof(o.mapping));
	orig = o;
	igt_assert_eq(__nfence_fence_open(ofd, &o), err);
	igt_assert_f(!memcmp(&o, &orig, sizeof(o)),
		     "open struct changed on failure (handle %#x)\n",
		     o.handle);
}

/* A shared fence and an fd for it. */
static uint32_t create_shared(uint64_t initial,
			      struct drm_nfence_fence_mapping *m, int *sfd)
{
	uint32_t h = create(SHAREABLE, initial, m);

	*sfd = nfence_fence_share(fd, h);
	return h;
}

static void test_create_destroy(void)
{
	struct drm_nfence_fence_mapping m;
	int64_t base = live_fences();
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);
	assert_default_mapping(&m);
	assert_fences(base, 1);
	{
		struct nfence_debugfs_fence f;

		nfence_debugfs_fence(dbg, &m, &f);
		igt_assert_eq_u32(f.type, TYPE_DEFAULT);
		igt_assert_eq_u64(f.current, 0);
		igt_assert_eq_u64(f.monitored, UINT64_MAX);
		igt_assert_eq_u64(f.waiters, 0);
	}
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
	assert_fences(base, 0);
	expect_destroy_error(fd, h, 0, -ENOENT);
}

static void test_create_many(void)
{
	const int n = 256;
	struct drm_nfence_fence_mapping m[256];
	uint32_t handles[256];
	uint64_t where[256];
	int64_t base = live_fences();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++) {
		handles[i] = create(i % 4 == 3 ? SHAREABLE : 0, i, &m[i]);
		assert_default_mapping(&m[i]);
		where[i] = m[i].cpu_mmap_offset + m[i].cpu_value_offset;
	}
	assert_unique_u32(handles, n);
	/* Every fence has its own CurrentValue. */
	assert_unique_u64(where, n);
	assert_fences(base, n);
	for (int i = 0; i < n; i += 17)
		igt_assert_eq_u64(read_value(fd, &m[i]), i);

	for (int i = 0; i < n; i++)
		nfence_fence_destroy(fd, handles[(i * 37) % n]);
	assert_fences(base, 0);
}

static void test_handles_not_reused(void)
{
	const int n = 64;
	uint32_t handles[64];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++) {
		handles[i] = create(0, 0, NULL);
		nfence_fence_destroy(fd, handles[i]);
	}
	assert_unique_u32(handles, n);
}

static void test_create_flags(void)
{
	const uint32_t flags[] = {
		0,
		DRM_NFENCE_FENCE_SHARED,
		SHAREABLE,
		NO_SIGNAL,
		NO_WAIT,
		DRM_NFENCE_FENCE_SHARED | NO_SIGNAL,
		SHAREABLE | NO_SIGNAL,
		SHAREABLE | NO_WAIT,
		DRM_NFENCE_FENCE_CROSS_ADAPTER | DRM_NFENCE_FENCE_SHARED,
		DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE | NO_WAIT,
	};
	int64_t base = live_fences();

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++) {
		struct drm_nfence_fence_mapping m;
		uint32_t h = create(flags[i], 1000 + i, &m);

		assert_default_mapping(&m);
		if (flags[i] & DRM_NFENCE_FENCE_SHARED)
			igt_assert_eq_u32(m.cpu_value_offset, 0);
		igt_assert_eq_u64(read_value(fd, &m), 1000 + i);
		nfence_fence_destroy(fd, h);
	}
	assert_fences(base, 0);
}

static void test_create_bad_pad(void)
{
	const uint32_t pads[] = { 1, 0x80000000u, UINT32_MAX };
	struct drm_nfence_fence_create c = create_args(TYPE_DEFAULT, 0);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(pads); i++) {
		c.pad = pads[i];
		expect_create_error(fd, &c, -EINVAL);
	}
	for (int bit = 0; bit < 32; bit++) {
		c.pad = 1u << bit;
		expect_create_error(fd, &c, -EINVAL);
	}
}

static void test_create_bad_flags(void)
{
	const uint32_t valid[] = { 0, SHAREABLE, NO_SIGNAL, NO_WAIT };

	nfence_watchdog(WATCHDOG_S);
	/* Bits 0-5 are SHARED .. MONITORED. */
	for (int bit = 6; bit < 32; bit++) {
		for (unsigned int i = 0; i < ARRAY_SIZE(valid); i++) {
			struct drm_nfence_fence_create c =
				create_args(TYPE_DEFAULT, valid[i] | 1u << bit);

			expect_create_error(fd, &c, -EINVAL);
		}
	}
	{
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, ~NFENCE_FENCE_VALID_FLAGS);

		expect_create_error(fd, &c, -EINVAL);
		c.flags = UINT32_MAX;
		expect_create_error(fd, &c, -EINVAL);
	}
}

static void test_create_bad_type(void)
{
	const uint32_t types[] = {
		2, 3, 4, 0x100, 0x10000, 0x80000000u, UINT32_MAX - 1,
		UINT32_MAX,
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(types); i++) {
		struct drm_nfence_fence_create c = create_args(types[i], 0);

		expect_create_error(fd, &c, -EINVAL);
	}
}

static void test_create_bad_flag_combos(void)
{
	const uint32_t combos[] = {
		NO_SIGNAL | NO_WAIT,
		DRM_NFENCE_FENCE_SHARED | NO_SIGNAL | NO_WAIT,
		SHAREABLE | NO_SIGNAL | NO_WAIT,
		DRM_NFENCE_FENCE_NT_SECURITY_SHARING,
		DRM_NFENCE_FENCE_NT_SECURITY_SHARING | NO_SIGNAL,
		DRM_NFENCE_FENCE_NT_SECURITY_SHARING | NO_WAIT,
		/* CROSS_ADAPTER needs SHARED. */
		DRM_NFENCE_FENCE_CROSS_ADAPTER,
		DRM_NFENCE_FENCE_CROSS_ADAPTER | NO_SIGNAL,
		DRM_NFENCE_FENCE_CROSS_ADAPTER |
			DRM_NFENCE_FENCE_NT_SECURITY_SHARING,
		DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE | NO_SIGNAL |
			NO_WAIT,
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(combos); i++) {
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, combos[i]);

		expect_create_error(fd, &c, -EINVAL);
		if (caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU) {
			c.type = TYPE_INTRA_GPU;
			expect_create_error(fd, &c, -EINVAL);
		}
	}
}

/*
 * engine_affinity is the seeds' EngineAffinity: the physical adapters
 * where the GPU VAs are mapped, a bit each. An nfence adapter is one
 * physical adapter: every bit but bit 0 names one it does not have, engine
 * masks included.
 */
static void test_create_bad_engine_affinity(void)
{
	const uint32_t engines = adapter.num_engines < 32 ?
				 (1u << adapter.num_engines) - 1 : UINT32_MAX;

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t bit = 1; bit < 32; bit++) {
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, 0);

		c.engine_affinity = 1u << bit;
		expect_create_error(fd, &c, -EINVAL);
		c.engine_affinity |= DRM_NFENCE_FENCE_AFFINITY_ALL;
		expect_create_error(fd, &c, -EINVAL);
	}
	{
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, 0);

		c.engine_affinity = UINT32_MAX;
		expect_create_error(fd, &c, -EINVAL);
		if (engines > 1) {
			c.engine_affinity = engines;
			expect_create_error(fd, &c, -EINVAL);
		}
	}
}

static void test_create_engine_affinity(void)
{
	int64_t base = live_fences();

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t aff = 0; aff <= DRM_NFENCE_FENCE_AFFINITY_ALL; aff++) {
		/* 0 (every physical adapter) and the one there is. */
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, 0);

		c.engine_affinity = aff;
		igt_assert_eq(__nfence_fence_create(fd, &c), 0);
		igt_assert_neq_u32(c.handle, 0);
		assert_default_mapping(&c.mapping);
		nfence_fence_destroy(fd, c.handle);
	}
	assert_fences(base, 0);
}

static void test_create_cross_adapter(void)
{
	const uint32_t cross = DRM_NFENCE_FENCE_CROSS_ADAPTER;
	const uint32_t shared = DRM_NFENCE_FENCE_SHARED;
	const uint32_t nt = DRM_NFENCE_FENCE_NT_SECURITY_SHARING;
	const uint32_t valid[] = {
		cross | shared,
		cross | SHAREABLE,
		cross | shared | NO_SIGNAL,
		cross | shared | NO_WAIT,
		cross | SHAREABLE | NO_SIGNAL,
		cross | SHAREABLE | NO_WAIT,
	};
	/* Not shared, or not shareable at all: -EINVAL. */
	const uint32_t unshared[] = {
		cross,
		cross | NO_SIGNAL,
		cross | NO_WAIT,
		cross | nt,
		cross | nt | NO_SIGNAL,
		cross | nt | NO_WAIT,
	};
	int64_t base = live_fences();

	nfence_watchdog(WATCHDOG_S);
	igt_assert_f(caps.flags & DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER,
		     "native fences without the CROSS_ADAPTER capability "
		     "(caps %#x)\n", caps.flags);

	for (unsigned int i = 0; i < ARRAY_SIZE(unshared); i++) {
		struct drm_nfence_fence_create c =
			create_args(TYPE_DEFAULT, unshared[i]);

		expect_create_error(fd, &c, -EINVAL);
		c.type = TYPE_INTRA_GPU;
		expect_create_error(fd, &c, -EINVAL);
	}

	for (unsigned int i = 0; i < ARRAY_SIZE(valid); i++) {
		struct drm_nfence_fence_create c =
			create_args(TYPE_INTRA_GPU, valid[i]);
		struct drm_nfence_fence_mapping m;
		uint64_t initial = 100 + i;
		uint32_t h;
		int ret;

		/* DEFAULT only: INTRA_GPU is -EINVAL. */
		expect_create_error(fd, &c, -EINVAL);

		h = create(valid[i], initial, &m);
		assert_default_mapping(&m);
		/* Shared: a page of its own. */
		igt_assert_eq_u32(m.cpu_value_offset, 0);
		igt_assert_eq_u64(read_value(fd, &m), initial);
		assert_fences(base, 1);
		{
			struct nfence_debugfs_fence f;

			nfence_debugfs_fence(dbg, &m, &f);
			igt_assert_eq_u32(f.type, TYPE_DEFAULT);
			igt_assert_eq_u64(f.current, initial);
			/* Every signal must interrupt: MonitoredValue 0. */
			igt_assert_eq_u64(f.monitored, 0);
		}

		/* The creator's NO_SIGNAL and NO_WAIT hold. */
		ret = __nfence_fence_signal_one(fd, dev, h, initial + 1);
		igt_assert_eq(ret, valid[i] & NO_SIGNAL ? -EACCES : 0);
		igt_assert_eq_u64(read_value(fd, &m), valid[i] & NO_SIGNAL ?
				  initial : initial + 1);
		ret = __nfence_fence_wait_one(fd, dev, h, initial, 0);
		igt_assert_eq(ret, valid[i] & NO_WAIT ? -EACCES : 0);

		/* Only with NT_SECURITY_SHARING can it become an fd. */
		if (valid[i] & nt) {
			struct drm_nfence_fence_mapping om;
			int sfd = nfence_fence_share(fd, h);
			uint32_t o = nfence_fence_open(fd, dev, sfd, 0, &om);

			nfence_fence_signal(fd, dev, o, initial + 5);
			igt_assert_eq_u64(read_value(fd, &m), initial + 5);
			nfence_fence_destroy(fd, o);
			close(sfd);
		} else {
			expect_share_error(fd, h, 0, 0, -EINVAL);
		}
		nfence_fence_destroy(fd, h);
		assert_gone(&m);
		assert_fences(base, 0);
	}
}

static void test_create_check_order(void)
{
	const uint32_t cross = DRM_NFENCE_FENCE_CROSS_ADAPTER;
	const uint32_t xs = cross | DRM_NFENCE_FENCE_SHARED;
	struct drm_nfence_fence_create c;

	nfence_watchdog(WATCHDOG_S);
	/*
	 * Every -EINVAL check comes before the device lookup: each case is
	 * a valid cross-adapter create but for one defect, on device 0.
	 */
	c = create_args(TYPE_DEFAULT, xs);
	c.device = 0;
	c.pad = 1;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_DEFAULT, xs | 1u << 6);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(2, xs);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_DEFAULT, xs | NO_SIGNAL | NO_WAIT);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_DEFAULT,
			cross | DRM_NFENCE_FENCE_NT_SECURITY_SHARING);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	/* CROSS_ADAPTER without SHARED ... */
	c = create_args(TYPE_DEFAULT, cross);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	/* ... or with INTRA_GPU. */
	c = create_args(TYPE_INTRA_GPU, xs);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_INTRA_GPU, xs |
			DRM_NFENCE_FENCE_NT_SECURITY_SHARING);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_DEFAULT, xs);
	c.device = 0;
	c.engine_affinity = 2;
	expect_create_error(fd, &c, -EINVAL);

	/* A valid cross-adapter create on no device: -ENOENT. */
	c = create_args(TYPE_DEFAULT, xs);
	c.device = 0;
	expect_create_error(fd, &c, -ENOENT);
	c.device = dev + 1000;
	expect_create_error(fd, &c, -ENOENT);
	c = create_args(TYPE_DEFAULT, cross | SHAREABLE | NO_WAIT);
	c.device = 0;
	expect_create_error(fd, &c, -ENOENT);

	/* And every other -EINVAL check comes first as well. */
	c = create_args(TYPE_DEFAULT, 0);
	c.device = 0;
	c.pad = 1;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(UINT32_MAX, 0);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(TYPE_DEFAULT, NO_SIGNAL | NO_WAIT);
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
}

static void test_create_bad_device(void)
{
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	uint32_t gone = nfence_device_create(fd2);
	struct drm_nfence_fence_create c = create_args(TYPE_DEFAULT, 0);
	const uint32_t fixed[] = { 0, UINT32_MAX, 0x80000000u, POISON };

	nfence_watchdog(WATCHDOG_S);
	nfence_device_destroy(fd2, gone);

	for (unsigned int i = 0; i < ARRAY_SIZE(fixed); i++) {
		if (fixed[i] == dev2)
			continue;
		c.device = fixed[i];
		expect_create_error(fd2, &c, -ENOENT);
	}
	for (uint32_t i = 1; i <= 16; i++) {
		c.device = gone + i;
		if (c.device != dev2)
			expect_create_error(fd2, &c, -ENOENT);
	}
	c.device = gone;
	expect_create_error(fd2, &c, -ENOENT);

	/* The device belongs to fd; a file without devices knows none. */
	close(fd2);
	fd2 = nfence_open();
	c.device = dev;
	expect_create_error(fd2, &c, -ENOENT);
	close(fd2);
}

static void test_create_no_native_fences(void)
{
	/* Input a native adapter accepts: each type with its valid flags. */
	static const struct {
		uint32_t type;
		uint32_t flags;
	} valid[] = {
		{ TYPE_DEFAULT, 0 },
		{ TYPE_DEFAULT, DRM_NFENCE_FENCE_SHARED },
		{ TYPE_DEFAULT, SHAREABLE },
		{ TYPE_DEFAULT, NO_SIGNAL },
		{ TYPE_DEFAULT, NO_WAIT },
		{ TYPE_DEFAULT, SHAREABLE | NO_WAIT },
		{ TYPE_DEFAULT, DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE },
		{ TYPE_INTRA_GPU, 0 },
		{ TYPE_INTRA_GPU, NO_SIGNAL },
		{ TYPE_INTRA_GPU, NO_WAIT },
	};
	const uint64_t initial[] = { 0, 1, 100 };
	struct drm_nfence_fence_create c;
	int64_t base;
	uint32_t d;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(!native, "adapter has native fences\n");
	base = live_fences();
	d = nfence_device_create(fd);
	for (unsigned int i = 0; i < ARRAY_SIZE(valid); i++) {
		for (unsigned int v = 0; v < ARRAY_SIZE(initial); v++) {
			/* Affinity 0 (every engine) and engine 0 alone. */
			for (uint32_t aff = 0; aff < 2; aff++) {
				c = (struct drm_nfence_fence_create){
					.device = d,
					.type = valid[i].type,
					.flags = valid[i].flags,
					.engine_affinity = aff,
					.initial_value = initial[v],
				};
				expect_create_error(fd, &c, -EOPNOTSUPP);
			}
		}
	}
	/* Device 0: -EOPNOTSUPP comes before the device lookup. */
	c = (struct drm_nfence_fence_create){
		.type = TYPE_DEFAULT,
		.flags = DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE,
	};
	expect_create_error(fd, &c, -EOPNOTSUPP);
	c.flags = 0;
	expect_create_error(fd, &c, -EOPNOTSUPP);
	/* An invalid one: -EINVAL first. */
	c.flags = DRM_NFENCE_FENCE_CROSS_ADAPTER;
	expect_create_error(fd, &c, -EINVAL);
	c.flags = DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE;
	c.type = TYPE_INTRA_GPU;
	expect_create_error(fd, &c, -EINVAL);
	assert_fences(base, 0);
	nfence_device_destroy(fd, d);
}

/*
 * The fence handle limit of adapter 0's files (module parameter
 * client_fences), if it is one this test can fill.
 */
static uint32_t fillable_fence_limit(void)
{
	uint64_t max = nfence_param_get_u64_at("client_fences", adapter.index);

	igt_require_f(max && max <= 4 * MAX_FENCES,
		      "needs adapter %u to limit fence handles per file to at most %u (client_fences is %" PRIu64 ")\n",
		      adapter.index, 4 * MAX_FENCES, max);
	igt_assert_lte_u64(MAX_FENCES, max);
	return max;
}

/* @n fences as @c describes on @cfd, all created, their handles distinct. */
static void create_n(int cfd, struct drm_nfence_fence_create *c,
		     uint32_t *handles, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		igt_assert_f(__nfence_fence_create(cfd, c) == 0,
			     "fence %u of %u failed\n", i, n);
		handles[i] = c->handle;
	}
	assert_unique_u32(handles, n);
}

static void test_create_max_fences(void)
{
	uint32_t max = fillable_fence_limit();
	uint32_t *handles = calloc(max, sizeof(*handles));
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	struct drm_nfence_fence_create c = {
		.device = dev2,
		.type = TYPE_DEFAULT,
	};
	int64_t base = live_fences();
	struct drm_nfence_fence_open o = {};
	struct drm_nfence_hwqueue_create q = {};
	uint32_t shared, ctx;
	int sfd;

	igt_assert(handles);
	nfence_watchdog(110);
	create_n(fd2, &c, handles, max);

	__expect_create_error(fd2, &c, -ENOSPC);
	c.flags = SHAREABLE;
	__expect_create_error(fd2, &c, -ENOSPC);
	c.flags = 0;

	/* Freeing one allows exactly one more. */
	nfence_fence_destroy(fd2, handles[max / 2]);
	handles[max / 2] = nfence_fence_create(fd2, dev2, TYPE_DEFAULT,
					       0, 0, NULL);
	__expect_create_error(fd2, &c, -ENOSPC);

	/* Invalid input still wins over a full table. */
	c.pad = 1;
	__expect_create_error(fd2, &c, -EINVAL);
	c.pad = 0;

	/* An open takes a local handle too, as does a queue's progress fence. */
	shared = create_shared(0, NULL, &sfd);
	o.fd = sfd;
	o.device = dev2;
	expect_open_error(fd2, &o, -ENOSPC);
	ctx = nfence_context_create(fd2, dev2, 0);
	q.device = dev2;
	q.context = ctx;
	igt_assert_eq(__nfence_hwqueue_create(fd2, &q), -ENOSPC);
	/* Each succeeds once a handle is free. */
	nfence_fence_destroy(fd2, handles[0]);
	handles[0] = nfence_fence_open(fd2, dev2, sfd, 0, NULL);
	nfence_fence_destroy(fd2, handles[1]);
	nfence_hwqueue_destroy(fd2, dev2,
			       nfence_hwqueue_create(fd2, dev2, ctx, 0, NULL,
						     NULL));
	close(sfd);
	nfence_fence_destroy(fd, shared);

	/* The limit is per file: fd still has room. */
	nfence_fence_destroy(fd, create(0, 0, NULL));

	close(fd2);
	free(handles);
	assert_fences(base, 0);
}

/*
 * An adapter with no fence handle limit but memory (client_fences=0, the
 * default): one file holds more fences than the fewest a limit may allow,
 * and gives them all back when it closes.
 */
static void test_create_past_fewest_limit(void)
{
	const uint32_t n = MAX_FENCES + MAX_FENCES / 8;
	uint32_t *handles = calloc(n, sizeof(*handles));
	int count = nfence_count_adapters(), i, afd = -1, adir;
	struct drm_nfence_fence_create c = { .type = TYPE_DEFAULT };
	int64_t base;

	igt_assert(handles);
	for (i = 0; i < count && afd < 0; i++)
		if (!nfence_param_get_u64_at("client_fences", i))
			afd = nfence_open_adapter(i);
	igt_require_f(afd >= 0,
		      "needs an adapter with no fence handle limit (client_fences=0)\n");
	adir = nfence_debugfs_dir(afd);
	base = nfence_debugfs_count_fences(adir);
	c.device = nfence_device_create(afd);

	nfence_watchdog(110);
	create_n(afd, &c, handles, n);
	assert_fences_in(adir, base, n);

	close(afd);
	assert_fences_in(adir, base, 0);
	close(adir);
	free(handles);
}

static void test_device_destroy_closes_fences(void)
{
	struct drm_nfence_fence_mapping m1, m2;
	uint32_t d = nfence_device_create(fd);
	int64_t base = live_fences();
	uint32_t h1, h2, h3;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h1 = nfence_fence_create(fd, d, TYPE_DEFAULT, 0, 0, &m1);
	h2 = nfence_fence_create(fd, d, TYPE_DEFAULT, SHAREABLE, 5, &m2);
	sfd = nfence_fence_share(fd, h2);
	assert_fences(base, 2);

	nfence_device_destroy(fd, d);
	expect_destroy_error(fd, h1, 0, -ENOENT);
	expect_destroy_error(fd, h2, 0, -ENOENT);
	assert_gone(&m1);
	/* The fd still holds the shared one. */
	assert_fences(base, 1);
	assert_alive(&m2);

	h3 = nfence_fence_open(fd, dev, sfd, 0, NULL);
	close(sfd);
	nfence_fence_destroy(fd, h3);
	assert_gone(&m2);
	assert_fences(base, 0);
}

static void test_close_frees_fences(void)
{
	struct drm_nfence_fence_mapping m[8];
	int64_t base = live_fences();
	uint32_t h[8];

	nfence_watchdog(WATCHDOG_S);
	for (int round = 0; round < 4; round++) {
		int fd2 = nfence_open();
		uint32_t d = nfence_device_create(fd2);

		for (int i = 0; i < 8; i++)
			h[i] = nfence_fence_create(fd2, d, TYPE_DEFAULT,
						   i == 7 ? SHAREABLE : 0, i,
						   &m[i]);
		/* Odd rounds: a partially destroyed set. */
		if (round % 2)
			nfence_fence_destroy(fd2, h[0]);
		assert_fences(base, round % 2 ? 7 : 8);
		igt_assert_eq(close(fd2), 0);
		for (int i = 0; i < 8; i++)
			assert_gone(&m[i]);
		assert_fences(base, 0);
	}
}

static void test_destroy_bad_pad(void)
{
	const uint32_t pads[] = { 1, 0x80000000u, UINT32_MAX };
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 3, &m);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(pads); i++)
		expect_destroy_error(fd, h, pads[i], -EINVAL);
	for (int bit = 0; bit < 32; bit++)
		expect_destroy_error(fd, h, 1u << bit, -EINVAL);
	/* Still there and working. */
	assert_alive(&m);
	nfence_fence_signal(fd, dev, h, 4);
	igt_assert_eq_u64(read_value(fd, &m), 4);
	nfence_fence_destroy(fd, h);
}

static void test_destroy_bad_handle(void)
{
	struct drm_nfence_fence_mapping m;
	int fd2 = nfence_open();
	uint32_t gone = create(0, 0, NULL);
	uint32_t h = create(0, 0, &m);

	nfence_watchdog(WATCHDOG_S);
	nfence_fence_destroy(fd, gone);
	expect_destroy_error(fd, 0, 0, -ENOENT);
	expect_destroy_error(fd, gone, 0, -ENOENT);
	expect_destroy_error(fd, gone, 0, -ENOENT);
	for (uint32_t i = 1; i <= 16; i++)
		expect_destroy_error(fd, h + i, 0, -ENOENT);
	expect_destroy_error(fd, UINT32_MAX, 0, -ENOENT);
	expect_destroy_error(fd, 0x80000000u, 0, -ENOENT);
	/* fd2 holds no fence: fd's handle means nothing there. */
	expect_destroy_error(fd2, h, 0, -ENOENT);
	/* Pad is checked before the handle. */
	expect_destroy_error(fd, 0, 1, -EINVAL);

	assert_alive(&m);
	nfence_fence_destroy(fd, h);
	close(fd2);
}

static void test_share_cloexec(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(SHAREABLE, 0, &m);
	int a, b, flags;
	struct stat sa, sb;

	nfence_watchdog(WATCHDOG_S);
	a = nfence_fence_share(fd, h);
	b = nfence_fence_share(fd, h);
	igt_assert_neq(a, b);
	for (int i = 0; i < 2; i++) {
		int sfd = i ? b : a;

		flags = fcntl(sfd, F_GETFD);
		igt_assert_f(flags >= 0 && (flags & FD_CLOEXEC),
			     "shared fd %d is not close-on-exec (%#x)\n",
			     sfd, flags);
	}
	/* Two fds of the same fence. */
	igt_assert_eq(fstat(a, &sa), 0);
	igt_assert_eq(fstat(b, &sb), 0);

	/* Both open the same fence. */
	for (int i = 0; i < 2; i++) {
		struct drm_nfence_fence_mapping om;
		uint32_t o = nfence_fence_open(fd, dev, i ? b : a, 0, &om);

		nfence_fence_signal(fd, dev, o, 10 + i);
		igt_assert_eq_u64(read_value(fd, &m), 10 + i);
		nfence_fence_destroy(fd, o);
	}
	close(a);
	close(b);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
}

static void test_share_not_shareable(void)
{
	const uint32_t flags[] = {
		0, DRM_NFENCE_FENCE_SHARED, NO_SIGNAL, NO_WAIT,
		DRM_NFENCE_FENCE_SHARED | NO_WAIT,
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++) {
		uint32_t h = create(flags[i], 0, NULL);

		expect_share_error(fd, h, 0, 0, -EINVAL);
		nfence_fence_destroy(fd, h);
	}
}

static void test_share_bad_flags(void)
{
	uint32_t h = create(SHAREABLE, 0, NULL);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++)
		expect_share_error(fd, h, 1u << bit, 0, -EINVAL);
	expect_share_error(fd, h, UINT32_MAX, 0, -EINVAL);
	close(nfence_fence_share(fd, h));
	nfence_fence_destroy(fd, h);
}

static void test_share_bad_pad(void)
{
	uint32_t h = create(SHAREABLE, 0, NULL);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++)
		expect_share_error(fd, h, 0, 1u << bit, -EINVAL);
	expect_share_error(fd, h, 0, UINT32_MAX, -EINVAL);
	close(nfence_fence_share(fd, h));
	nfence_fence_destroy(fd, h);
}

static void test_share_bad_handle(void)
{
	int fd2 = nfence_open();
	uint32_t gone = create(SHAREABLE, 0, NULL);
	uint32_t h = create(SHAREABLE, 0, NULL);

	nfence_watchdog(WATCHDOG_S);
	nfence_fence_destroy(fd, gone);
	expect_share_error(fd, 0, 0, 0, -ENOENT);
	expect_share_error(fd, gone, 0, 0, -ENOENT);
	for (uint32_t i = 1; i <= 16; i++)
		expect_share_error(fd, h + i, 0, 0, -ENOENT);
	expect_share_error(fd, UINT32_MAX, 0, 0, -ENOENT);
	/* fd2 holds no fence: fd's handle means nothing there. */
	expect_share_error(fd2, h, 0, 0, -ENOENT);
	close(fd2);
	nfence_fence_destroy(fd, h);
}

static void test_open_same_file(void)
{
	struct drm_nfence_fence_mapping m, om;
	int64_t base = live_fences();
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(21, &m, &sfd);
	o = nfence_fence_open(fd, dev, sfd, 0, &om);
	igt_assert_neq_u32(o, h);
	assert_default_mapping(&om);
	/* One global fence, two local handles. */
	assert_fences(base, 1);
	igt_assert_eq_u64(read_value(fd, &om), 21);

	nfence_fence_signal(fd, dev, o, 22);
	igt_assert_eq_u64(read_value(fd, &m), 22);
	nfence_fence_signal(fd, dev, h, 23);
	igt_assert_eq_u64(read_value(fd, &om), 23);

	/* Each handle is closed on its own. */
	nfence_fence_destroy(fd, h);
	close(sfd);
	assert_alive(&m);
	nfence_fence_signal(fd, dev, o, 24);
	igt_assert_eq_u64(read_value(fd, &om), 24);
	nfence_fence_destroy(fd, o);
	assert_gone(&m);
	assert_fences(base, 0);
}

static void test_open_other_file(void)
{
	struct drm_nfence_fence_mapping m, om;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(100, &m, &sfd);
	o = nfence_fence_open(fd2, dev2, sfd, 0, &om);
	assert_default_mapping(&om);
	igt_assert_eq_u64(read_value(fd2, &om), 100);

	nfence_fence_signal(fd, dev, h, 101);
	igt_assert_eq_u64(read_value(fd2, &om), 101);
	nfence_fence_signal(fd2, dev2, o, 102);
	igt_assert_eq_u64(read_value(fd, &m), 102);
	igt_assert_eq(__nfence_fence_wait_one(fd2, dev2, o, 102, 0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, 102, 0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd2, dev2, o, 103, 0), -ETIME);

	/* Closing the creator's file leaves the fence to the other. */
	nfence_fence_destroy(fd, h);
	close(sfd);
	assert_alive(&m);
	nfence_fence_signal(fd2, dev2, o, 103);
	igt_assert_eq_u64(read_value(fd2, &om), 103);
	close(fd2);
	assert_gone(&m);
}

static void test_open_other_device(void)
{
	struct drm_nfence_fence_mapping m, om;
	uint32_t d = nfence_device_create(fd);
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(7, &m, &sfd);
	o = nfence_fence_open(fd, d, sfd, 0, &om);
	nfence_fence_signal(fd, d, o, 8);
	igt_assert_eq_u64(read_value(fd, &m), 8);

	/* The opened handle belongs to d and goes with it. */
	nfence_device_destroy(fd, d);
	expect_destroy_error(fd, o, 0, -ENOENT);
	nfence_fence_signal(fd, dev, h, 9);
	igt_assert_eq_u64(read_value(fd, &m), 9);
	close(sfd);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
}

static void test_open_forked_child(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(50, &m, &sfd);

	/* The child inherits sfd (close-on-exec is not close-on-fork). */
	igt_fork(child, 1) {
		struct drm_nfence_fence_mapping om;
		int cfd = nfence_open();
		uint32_t cdev = nfence_device_create(cfd);
		uint32_t o = nfence_fence_open(cfd, cdev, sfd, 0, &om);

		igt_assert_eq_u64(read_value(cfd, &om), 50);
		nfence_fence_signal(cfd, cdev, o, 51);
		igt_assert_eq_u64(read_value(cfd, &om), 51);
		close(cfd);
	}
	igt_waitchildren();

	igt_assert_eq_u64(read_value(fd, &m), 51);
	close(sfd);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
}

static void test_open_scm_rights(void)
{
	struct drm_nfence_fence_mapping m;
	struct timeval tv = { .tv_sec = 20 };
	int sv[2], sfd, ret;
	ssize_t got = -1;
	char ack = 0;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		      0);
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	/* The child exists before the fd does: only the socket carries it. */
	igt_fork(child, 1) {
		struct drm_nfence_fence_mapping om;
		int cfd = nfence_open();
		uint32_t cdev = nfence_device_create(cfd);
		const char yes = 'A';
		int rfd;
		uint32_t o;

		close(sv[0]);
		rfd = nfence_recv_fd(sv[1]);
		igt_assert_f(rfd >= 0, "recvmsg: %s\n", strerror(-rfd));
		o = nfence_fence_open(cfd, cdev, rfd, 0, &om);
		igt_assert_eq_u64(read_value(cfd, &om), 70);
		nfence_fence_signal(cfd, cdev, o, 77);
		close(rfd);
		igt_assert_eq(write(sv[1], &yes, 1), 1);
		close(cfd);
	}

	close(sv[1]);
	h = create_shared(70, &m, &sfd);
	ret = nfence_send_fd(sv[0], sfd);
	close(sfd);
	/* The child acks (or dies and closes the socket: EOF). */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!ret)
		got = read(sv[0], &ack, 1);
	igt_waitchildren();
	close(sv[0]);
	igt_assert_f(ret == 0, "sendmsg: %s\n", strerror(-ret));
	igt_assert_eq(got, 1);
	igt_assert_eq(ack, 'A');

	igt_assert_eq_u64(read_value(fd, &m), 77);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, 77, 0), 0);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
}

static void test_open_after_creator_destroy(void)
{
	struct drm_nfence_fence_mapping m, om;
	int64_t base = live_fences();
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(0, &m, &sfd);
	nfence_fence_signal(fd, dev, h, 42);
	nfence_fence_destroy(fd, h);

	/* Only the fd is left and it keeps the fence alive. */
	assert_alive(&m);
	assert_fences(base, 1);
	o = nfence_fence_open(fd, dev, sfd, 0, &om);
	igt_assert_eq_u64(read_value(fd, &om), 42);
	nfence_fence_signal(fd, dev, o, 43);
	igt_assert_eq_u64(read_value(fd, &om), 43);
	nfence_fence_destroy(fd, o);
	assert_alive(&m);

	/* Still openable as long as the fd lives. */
	o = nfence_fence_open(fd, dev, sfd, 0, &om);
	igt_assert_eq_u64(read_value(fd, &om), 43);
	nfence_fence_destroy(fd, o);
	close(sfd);
	assert_gone(&m);
	assert_fences(base, 0);
}

static void test_open_after_creator_close(void)
{
	struct drm_nfence_fence_mapping m, om;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, SHAREABLE, 0, &m);
	nfence_fence_signal(fd2, dev2, h, 1234);
	sfd = nfence_fence_share(fd2, h);
	close(fd2);

	assert_alive(&m);
	o = nfence_fence_open(fd, dev, sfd, 0, &om);
	close(sfd);
	igt_assert_eq_u64(read_value(fd, &om), 1234);
	nfence_fence_destroy(fd, o);
	assert_gone(&m);
}

static void test_share_fd_lifetime(void)
{
	struct drm_nfence_fence_mapping m;
	int64_t base = live_fences();
	uint32_t h, o;
	int sfd, fd2;

	nfence_watchdog(WATCHDOG_S);

	/* Handle first, then the fd. */
	h = create_shared(0, &m, &sfd);
	nfence_fence_destroy(fd, h);
	assert_alive(&m);
	close(sfd);
	assert_gone(&m);

	/* The fd first, then the handle. */
	h = create_shared(0, &m, &sfd);
	close(sfd);
	assert_alive(&m);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);

	/* Several fds and a handle on another file: the last one frees. */
	fd2 = nfence_open();
	h = create_shared(0, &m, &sfd);
	o = nfence_fence_open(fd2, nfence_device_create(fd2), sfd, 0, NULL);
	{
		int sfd2 = nfence_fence_share(fd, h);

		nfence_fence_destroy(fd, h);
		close(sfd);
		assert_alive(&m);
		close(sfd2);
		assert_alive(&m);
	}
	nfence_fence_destroy(fd2, o);
	assert_gone(&m);

	/* Closing the file instead of destroying the handle. */
	h = create_shared(0, &m, &sfd);
	o = nfence_fence_open(fd2, nfence_device_create(fd2), sfd, 0, NULL);
	close(sfd);
	nfence_fence_destroy(fd, h);
	assert_alive(&m);
	close(fd2);
	assert_gone(&m);
	assert_fences(base, 0);
}

static struct drm_nfence_fence_open open_args(int sfd)
{
	struct drm_nfence_fence_open o = { .fd = sfd, .device = dev };

	return o;
}

static void test_open_bad_pad(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_open o;
	int64_t base;
	uint32_t h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(0, &m, &sfd);
	base = live_fences();
	o = open_args(sfd);
	for (int bit = 0; bit < 32; bit++) {
		o.pad = 1u << bit;
		expect_open_error(fd, &o, -EINVAL);
	}
	o.pad = UINT32_MAX;
	expect_open_error(fd, &o, -EINVAL);
	assert_fences(base, 0);
	close(sfd);
	nfence_fence_destroy(fd, h);
	assert_gone(&m);
}

static void test_open_bad_flags(void)
{
	struct drm_nfence_fence_open o;
	uint32_t h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(0, NULL, &sfd);
	o = open_args(sfd);
	for (int bit = 0; bit < 32; bit++) {
		uint32_t flag = 1u << bit;

		if (flag == NO_SIGNAL || flag == NO_WAIT)
			continue;
		o.flags = flag;
		expect_open_error(fd, &o, -EINVAL);
		o.flags = flag | NO_SIGNAL;
		expect_open_error(fd, &o, -EINVAL);
	}
	o.flags = NO_SIGNAL | NO_WAIT;
	expect_open_error(fd, &o, -EINVAL);
	o.flags = SHAREABLE;
	expect_open_error(fd, &o, -EINVAL);
	o.flags = UINT32_MAX;
	expect_open_error(fd, &o, -EINVAL);
	close(sfd);
	nfence_fence_destroy(fd, h);
}

static void test_open_bad_engine_affinity(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_open o;
	uint32_t h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(0, &m, &sfd);
	o = open_args(sfd);
	/* One physical adapter: only bit 0 names one. */
	for (uint32_t bit = 1; bit < 32; bit++) {
		o.engine_affinity = 1u << bit;
		expect_open_error(fd, &o, -EINVAL);
		o.engine_affinity |= DRM_NFENCE_FENCE_AFFINITY_ALL;
		expect_open_error(fd, &o, -EINVAL);
	}
	o.engine_affinity = UINT32_MAX;
	expect_open_error(fd, &o, -EINVAL);

	/* 0 and bit 0 open. */
	for (uint32_t aff = 0; aff <= DRM_NFENCE_FENCE_AFFINITY_ALL; aff++) {
		uint32_t oh;

		o = open_args(sfd);
		o.engine_affinity = aff;
		igt_assert_eq(__nfence_fence_open(fd, &o), 0);
		oh = o.handle;
		nfence_fence_destroy(fd, oh);
	}
	close(sfd);
	nfence_fence_destroy(fd, h);
}

/* Both mappings at the same GPU VAs. */
static void assert_same_vas(const struct drm_nfence_fence_mapping *a,
			    const struct drm_nfence_fence_mapping *b)
{
	igt_assert_eq_u64(a->current_value_gpu_va, b->current_value_gpu_va);
	igt_assert_eq_u64(a->monitored_value_gpu_va, b->monitored_value_gpu_va);
}

/* A GPU FENCE_SIGNAL of @m to @value on @q, waited for. */
static void queue_signal(struct nfence_queue *q,
			 const struct drm_nfence_fence_mapping *m,
			 uint64_t value)
{
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_signal_fence(&cs, m, value);
	nfence_queue_submit(q, &cs);
	nfence_queue_sync(q);
}

/* A queue of @device signals @value through @m's CurrentValue VA. */
static void gpu_signal(uint32_t device, const struct drm_nfence_fence_mapping *m,
		       uint64_t value)
{
	struct nfence_queue q;

	nfence_queue_create(&q, fd, device, 0, 0);
	queue_signal(&q, m, value);
	nfence_queue_destroy(&q);
}

/*
 * The seeds: "If the native fence is being opened on a different device of
 * the same process, then the NativeFenceMapping will contain the same VAs
 * as the original native fence." libnfence opens an adapter once per
 * process, so one file: the creator's handle and opens on a second device
 * and on the first device share both GPU VAs; a NO_SIGNAL handle has a
 * read-only CurrentValue of its own. The VAs outlive the creator's handle:
 * a queue of the second device signals through them.
 */
static void test_open_same_process_same_vas(void)
{
	struct drm_nfence_fence_mapping m, mb, ma, mn;
	uint32_t h, hb, ha, hn, devb;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	devb = nfence_device_create(fd);
	h = create_shared(0, &m, &sfd);
	hb = nfence_fence_open(fd, devb, sfd, 0, &mb);
	ha = nfence_fence_open(fd, dev, sfd, 0, &ma);
	hn = nfence_fence_open(fd, devb, sfd, NO_SIGNAL, &mn);
	assert_same_vas(&mb, &m);
	assert_same_vas(&ma, &m);
	igt_assert_neq_u64(mn.current_value_gpu_va, m.current_value_gpu_va);
	igt_assert_eq_u64(mn.monitored_value_gpu_va, m.monitored_value_gpu_va);

	nfence_fence_destroy(fd, h);
	gpu_signal(devb, &mb, 5);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, ha, 5, 0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, devb, hn, 5, 0), 0);
	/* Opened again once more: the same VAs still. */
	h = nfence_fence_open(fd, dev, sfd, 0, &m);
	assert_same_vas(&m, &mb);
	nfence_fence_destroy(fd, h);
	nfence_fence_destroy(fd, hb);
	nfence_fence_destroy(fd, ha);
	nfence_fence_destroy(fd, hn);
	close(sfd);
	nfence_device_destroy(fd, devb);
}

/*
 * Thousands of another file's shared fences opened here: each value gets a
 * GPU VA of its own in this file's space (a page slot), none shared with
 * another fence's, and signals through them reach the right fences. Half
 * are closed and opened again: their new VAs collide with no live one.
 */
static void test_open_many_shared(void)
{
	enum { N = 3000, STEP = 97 };
	struct drm_nfence_fence_mapping *m = calloc(N, sizeof(*m));
	uint32_t *h2 = calloc(N, sizeof(*h2)), *h = calloc(N, sizeof(*h));
	uint64_t *va = calloc(2 * N, sizeof(*va));
	int fd2 = nfence_open(), sfd, i;
	uint32_t dev2 = nfence_device_create(fd2);
	int64_t base = live_fences();
	struct nfence_queue q;
	struct nfence_cs cs;

	igt_assert(m && h2 && h && va);
	nfence_watchdog(110);
	for (i = 0; i < N; i++) {
		h2[i] = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, SHAREABLE,
					    0, NULL);
		sfd = nfence_fence_share(fd2, h2[i]);
		h[i] = nfence_fence_open(fd, dev, sfd, 0, &m[i]);
		close(sfd);
	}
	assert_fences(base, N);

	/* Every other one closed and opened again. */
	for (i = 0; i < N; i += 2)
		nfence_fence_destroy(fd, h[i]);
	for (i = 0; i < N; i += 2) {
		sfd = nfence_fence_share(fd2, h2[i]);
		h[i] = nfence_fence_open(fd, dev, sfd, 0, &m[i]);
		close(sfd);
	}
	for (i = 0; i < N; i++) {
		va[2 * i] = m[i].current_value_gpu_va;
		va[2 * i + 1] = m[i].monitored_value_gpu_va;
	}
	assert_unique_u64(va, 2 * N);

	/* A signal through every STEP-th CurrentValue VA, in one stream. */
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	for (i = 0; i < N; i += STEP)
		nfence_cs_signal_fence(&cs, &m[i], i + 1);
	nfence_queue_submit(&q, &cs);
	nfence_queue_sync(&q);
	nfence_queue_destroy(&q);
	for (i = 0; i < N; i++) {
		/* The signaled ones reached i + 1 exactly; the others 0. */
		uint64_t reached = i % STEP ? 0 : i + 1;

		if (reached) {
			igt_assert_eq(__nfence_fence_wait_one(fd, dev, h[i],
							      reached, 0), 0);
			igt_assert_eq(__nfence_fence_wait_one(fd2, dev2, h2[i],
							      reached, 0), 0);
		}
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h[i],
						      reached + 1, 0), -ETIME);
		igt_assert_eq(__nfence_fence_wait_one(fd2, dev2, h2[i],
						      reached + 1, 0), -ETIME);
	}

	close(fd2);
	for (i = 0; i < N; i++)
		nfence_fence_destroy(fd, h[i]);
	assert_fences(base, 0);
	free(va);
	free(h);
	free(h2);
	free(m);
}

/*
 * A fence of another process (another file), opened here on two devices:
 * one mapping in this file, at the same VAs for both handles, in this
 * file's own GPU VA space, through which this file's queues signal it.
 */
static void test_open_other_process_same_vas(void)
{
	struct drm_nfence_fence_mapping m2, ma, mb;
	uint32_t d2, h2, ha, hb, devb;
	int fd2, sfd;

	nfence_watchdog(WATCHDOG_S);
	fd2 = nfence_open();
	d2 = nfence_device_create(fd2);
	h2 = nfence_fence_create(fd2, d2, TYPE_DEFAULT, SHAREABLE, 0, &m2);
	sfd = nfence_fence_share(fd2, h2);
	devb = nfence_device_create(fd);
	ha = nfence_fence_open(fd, dev, sfd, 0, &ma);
	hb = nfence_fence_open(fd, devb, sfd, 0, &mb);
	assert_same_vas(&ma, &mb);
	gpu_signal(devb, &ma, 9);
	igt_assert_eq(__nfence_fence_wait_one(fd2, d2, h2, 9, 0), 0);
	nfence_fence_destroy(fd, ha);
	gpu_signal(devb, &mb, 10);
	igt_assert_eq(__nfence_fence_wait_one(fd2, d2, h2, 10, 0), 0);
	nfence_fence_destroy(fd, hb);
	close(sfd);
	nfence_device_destroy(fd, devb);
	close(fd2);
}

/*
 * Kernel memory a process makes the driver allocate is charged to its
 * memory cgroup (GFP_KERNEL_ACCOUNT): a child in a cgroup of its own
 * creates CHARGED_FENCES shared fences, each with a CurrentValue page of
 * its own (alloc_page(GFP_KERNEL_ACCOUNT), nfence_fence_page_create()),
 * and its cgroup's memory.current grows by at least those pages.
 */
#define CHARGED_FENCES	512

struct charged_fences {
	int fd;
	uint32_t device;
};

static int charged_fences_setup(void *data)
{
	struct charged_fences *cf = data;
	struct drm_nfence_device_create dc = { 0 };

	cf->fd = __nfence_open_adapter(0);
	if (cf->fd < 0 || __nfence_device_create(cf->fd, &dc))
		return 11;
	cf->device = dc.handle;
	return 0;
}

static int charged_fences_create(void *data)
{
	struct charged_fences *cf = data;

	for (int i = 0; i < CHARGED_FENCES; i++) {
		struct drm_nfence_fence_create c = {
			.device = cf->device,
			.type = TYPE_DEFAULT,
			.flags = SHAREABLE,
		};

		if (__nfence_fence_create(cf->fd, &c))
			return 12;
	}
	return 0;
}

static void test_kernel_memory_charged(void)
{
	struct charged_fences cf = { .fd = -1 };
	int64_t grown;

	nfence_watchdog(WATCHDOG_S);
	grown = nfence_cgroup_charge(charged_fences_setup,
				     charged_fences_create, &cf);
	nfence_assert_charged(grown, CHARGED_FENCES, 4096, "shared fences");
}

static void test_open_bad_fd(void)
{
	struct drm_nfence_fence_open o;
	int p[2];

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	close(p[1]);

	/* p[0] is closed now; nobody else opens files in this process. */
	o = open_args(p[0]);
	expect_open_error(fd, &o, -EBADF);
	o.fd = -1;
	expect_open_error(fd, &o, -EBADF);
	o.fd = INT_MIN;
	expect_open_error(fd, &o, -EBADF);
	o.fd = INT_MAX;
	expect_open_error(fd, &o, -EBADF);
}

static void test_open_not_fence_fd(void)
{
	struct drm_nfence_fence_open o;
	int p[2], efd, nfd, sv[2], fd2;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(pipe2(p, O_CLOEXEC), 0);
	efd = eventfd(0, EFD_CLOEXEC);
	igt_assert_fd(efd);
	nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	igt_assert_fd(nfd);
	igt_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		      0);
	fd2 = nfence_open();

	{
		const int fds[] = { p[0], p[1], efd, nfd, sv[0], fd, fd2 };

		for (unsigned int i = 0; i < ARRAY_SIZE(fds); i++) {
			o = open_args(fds[i]);
			expect_open_error(fd, &o, -EINVAL);
		}
	}
	close(fd2);
	close(sv[0]);
	close(sv[1]);
	close(nfd);
	close(efd);
	close(p[0]);
	close(p[1]);
}

static void test_open_other_adapter(void)
{
	int count = nfence_count_adapters();
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_open o;
	uint32_t h, d1, h1;
	int fd1, sfd, sfd1;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(count >= 2, "needs 2 adapters, have %d\n", count);
	fd1 = nfence_open_adapter(1);
	igt_require(nfence_has_native_fences(fd1));
	d1 = nfence_device_create(fd1);

	/* Adapter 0's fence on adapter 1 ... */
	h = create_shared(0, &m, &sfd);
	o = (struct drm_nfence_fence_open){ .fd = sfd, .device = d1 };
	expect_open_error(fd1, &o, -EINVAL);

	/* ... and adapter 1's on adapter 0. */
	h1 = nfence_fence_create(fd1, d1, TYPE_DEFAULT, SHAREABLE, 0, NULL);
	sfd1 = nfence_fence_share(fd1, h1);
	o = open_args(sfd1);
	expect_open_error(fd, &o, -EINVAL);

	/* Both are fine on their own adapter. */
	nfence_fence_destroy(fd, nfence_fence_open(fd, dev, sfd, 0, NULL));
	nfence_fence_destroy(fd1, nfence_fence_open(fd1, d1, sfd1, 0, NULL));

	close(sfd1);
	close(sfd);
	close(fd1);
	nfence_fence_destroy(fd, h);
}

/*
 * On an adapter without native fences: a native fence of another adapter
 * is -EINVAL unless it is CROSS_ADAPTER, after the input checks and before
 * the device lookup, and nothing is made there; a CROSS_ADAPTER one opens
 * as a monitored fence (no MonitoredValue) over the same CurrentValue,
 * and goes when both sides let go of it.
 */
static void test_open_non_native_adapter(void)
{
	int count = nfence_count_adapters();
	struct drm_nfence_fence_mapping m, xm, om;
	struct drm_nfence_fence_open o;
	int64_t base = live_fences(), base1;
	uint32_t h, xh, d1, oh;
	int fd1, dbg1, sfd, xsfd;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(count >= 2, "needs 2 adapters, have %d\n", count);
	fd1 = nfence_open_adapter(1);
	igt_require_f(!nfence_has_native_fences(fd1),
		      "adapter 1 has native fences\n");
	dbg1 = nfence_debugfs_fences_dir(fd1);
	base1 = nfence_debugfs_count_fences(dbg1);
	d1 = nfence_device_create(fd1);

	h = create_shared(3, &m, &sfd);
	xh = create(DRM_NFENCE_FENCE_CROSS_ADAPTER | SHAREABLE, 5, &xm);
	xsfd = nfence_fence_share(fd, xh);

	/* Bad input is still -EINVAL there. */
	o = (struct drm_nfence_fence_open){ .fd = xsfd, .device = d1,
					    .pad = 1 };
	expect_open_error(fd1, &o, -EINVAL);
	o = (struct drm_nfence_fence_open){ .fd = xsfd, .device = d1,
					    .engine_affinity = 2 };
	expect_open_error(fd1, &o, -EINVAL);
	o = (struct drm_nfence_fence_open){ .fd = -1, .device = d1 };
	expect_open_error(fd1, &o, -EBADF);
	/* Not CROSS_ADAPTER: another adapter's, before the device lookup. */
	o = (struct drm_nfence_fence_open){ .fd = sfd, .device = d1 };
	expect_open_error(fd1, &o, -EINVAL);
	o = (struct drm_nfence_fence_open){ .fd = sfd, .device = d1 + 100 };
	expect_open_error(fd1, &o, -EINVAL);
	o = (struct drm_nfence_fence_open){ .fd = xsfd, .device = d1 + 100 };
	expect_open_error(fd1, &o, -ENOENT);
	igt_assert_eq_s64(nfence_debugfs_count_fences(dbg1), base1);

	/* CROSS_ADAPTER: a monitored fence over the same CurrentValue. */
	oh = nfence_fence_open(fd1, d1, xsfd, 0, &om);
	igt_assert_neq_u64(om.cpu_mmap_offset, 0);
	igt_assert_neq_u64(om.current_value_gpu_va, 0);
	igt_assert_eq_u64(om.monitored_value_gpu_va, 0);
	igt_assert_eq_s64(nfence_debugfs_count_fences(dbg1), base1 + 1);
	igt_assert_eq_u64(read_value(fd1, &om), 5);
	nfence_fence_signal(fd1, d1, oh, 7);
	igt_assert_eq_u64(read_value(fd, &xm), 7);
	nfence_fence_signal(fd, dev, xh, 8);
	igt_assert_eq_u64(read_value(fd1, &om), 8);
	igt_assert_eq_u64(read_value(fd, &m), 3);
	nfence_fence_destroy(fd1, oh);
	assert_fences_in(dbg1, base1, 0);

	close(sfd);
	close(xsfd);
	nfence_fence_destroy(fd, h);
	nfence_fence_destroy(fd, xh);
	assert_fences(base, 0);
	nfence_device_destroy(fd1, d1);
	close(dbg1);
	close(fd1);
}

static void test_open_bad_device(void)
{
	struct drm_nfence_fence_open o;
	uint32_t h, gone;
	int sfd, fd2;

	nfence_watchdog(WATCHDOG_S);
	h = create_shared(0, NULL, &sfd);
	gone = nfence_device_create(fd);
	nfence_device_destroy(fd, gone);

	o = open_args(sfd);
	o.device = 0;
	expect_open_error(fd, &o, -ENOENT);
	o.device = gone;
	expect_open_error(fd, &o, -ENOENT);
	o.device = UINT32_MAX;
	expect_open_error(fd, &o, -ENOENT);

	/* fd's device on a file without devices. */
	fd2 = nfence_open();
	o.device = dev;
	expect_open_error(fd2, &o, -ENOENT);
	close(fd2);

	close(sfd);
	nfence_fence_destroy(fd, h);
}

static uint64_t vram_used(void)
{
	uint64_t v = 0;

	igt_assert_eq(__nfence_debugfs_segment_used(dbg, NFENCE_SEGMENT_VRAM,
						    &v), 0);
	return v;
}

static bool count_in_vram(const struct nfence_debugfs_fence *f, void *data)
{
	if (f->cv_vram || f->mv_vram)
		++*(int *)data;
	return false;
}

/* The fences of the adapter with a value in VRAM (debugfs). */
static int fences_in_vram(void)
{
	int n = 0;

	igt_assert_lte(0, __nfence_debugfs_fences(dbg, count_in_vram, &n));
	return n;
}

/*
 * With VRAM full, an INTRA_GPU fence's values go to system memory: it
 * takes no VRAM, still has no CPU mapping and refuses CPU waits and
 * signals, and the GPU signals it and waits for it through both VAs (a
 * queue parked on it is released by another queue's signal, and signals
 * a DEFAULT fence the CPU reads).
 */
static void vram_full_intra_gpu(int vfd, uint32_t vdev, struct nfence_queue *q)
{
	struct drm_nfence_fence_mapping mi, md;
	struct nfence_queue q2;
	struct nfence_cs cs;
	uint64_t before;
	uint32_t hi, hd;
	int in_vram;

	before = vram_used();
	in_vram = fences_in_vram();
	hi = nfence_fence_create(vfd, vdev, TYPE_INTRA_GPU, 0, 1, &mi);
	igt_assert_eq_u64(vram_used(), before);
	igt_assert_eq(fences_in_vram(), in_vram);
	igt_assert_eq_u64(mi.cpu_mmap_offset, 0);
	igt_assert_eq_u32(mi.cpu_value_offset, 0);
	igt_assert_neq_u64(mi.current_value_gpu_va, 0);
	igt_assert_neq_u64(mi.monitored_value_gpu_va, 0);
	igt_assert_eq(__nfence_fence_wait_one(vfd, vdev, hi, 1,
					      nfence_deadline_ms(1000)),
		      -EINVAL);
	igt_assert_eq(__nfence_fence_signal_one(vfd, vdev, hi, 2), -EINVAL);

	hd = nfence_fence_create(vfd, vdev, TYPE_DEFAULT, 0, 0, &md);
	nfence_queue_create(&q2, vfd, vdev, 0, 0);
	nfence_queue_begin(&q2, &cs);
	nfence_cs_wait_fence(&cs, &mi, 5);
	nfence_cs_signal_fence(&cs, &md, 1);
	nfence_queue_submit(&q2, &cs);
	nfence_queue_begin(q, &cs);
	nfence_cs_signal_fence(&cs, &mi, 5);
	nfence_queue_submit(q, &cs);
	nfence_queue_sync(q);
	nfence_queue_sync(&q2);
	igt_assert_eq_u64(read_value(vfd, &md), 1);
	igt_assert_eq(nfence_queue_state(q, NULL), 0);
	igt_assert_eq(nfence_queue_state(&q2, NULL), 0);

	nfence_queue_destroy(&q2);
	nfence_fence_destroy(vfd, hd);
	nfence_fence_destroy(vfd, hi);
}

/* Allocate VRAM in @size chunks on @vfd until none fits; the last one. */
static uint32_t fill_vram(int vfd, uint32_t vdev, uint64_t size,
			  uint64_t *last_va)
{
	uint32_t last = 0;

	for (;;) {
		struct drm_nfence_alloc_create a = {
			.device = vdev,
			.size = size,
			.segment_id = NFENCE_SEGMENT_VRAM,
		};
		int ret = __nfence_alloc_create(vfd, &a);

		if (ret == -ENOSPC)
			return last;
		igt_assert_eq(ret, 0);
		last = a.handle;
		*last_va = a.gpu_va;
	}
}

/*
 * A file of its own for a VRAM test (its close gives back all it took),
 * with a device in *@vdev; skips without the optimized DEFAULT fence,
 * which puts MonitoredValues in VRAM.
 */
static int vram_client(uint32_t *vdev)
{
	int vfd;

	igt_require_f(nfence_param_get_bool_at("optimized_default_fence",
					       adapter.index),
		      "needs the optimized DEFAULT fence\n");
	nfence_watchdog(WATCHDOG_S);
	vfd = nfence_open();
	*vdev = nfence_device_create(vfd);
	return vfd;
}

/*
 * VRAM full (Documentation/fences.rst, "Storage"): a fence value that
 * finds no room in VRAM goes to system memory and the fence works the
 * same. DEFAULT fences fill the free slots of the file's MonitoredValue
 * VRAM pool page (its queue's progress fence made it) until one has its
 * MonitoredValue outside VRAM (debugfs says where each value is); then
 * an INTRA_GPU fence works from
 * system memory (vram_full_intra_gpu()), and an optimized DEFAULT fence's
 * MonitoredValue is demoted: a CPU waiter sets it to the value - 1, a GPU
 * FENCE_SIGNAL through both VAs (the interrupt check reads the demoted
 * MonitoredValue) wakes the waiter. Everything lives on a file of its
 * own, whose close gives VRAM back.
 */
static void test_vram_full(void)
{
	static const uint64_t chunks[] = { 4 << 20, 256 << 10, FENCE_PAGE };
	struct drm_nfence_fence_mapping m[2];
	struct nfence_debugfs_fence line;
	struct nfence_queue q;
	uint64_t last_va;
	int vfd, filled = 0;
	uint32_t vdev, h[2];

	vfd = vram_client(&vdev);
	/* Made first: its command buffer is in system memory anyway. */
	nfence_queue_create(&q, vfd, vdev, 0, 0);

	/* Every page of VRAM taken by allocations ... */
	for (unsigned int i = 0; i < ARRAY_SIZE(chunks); i++)
		fill_vram(vfd, vdev, chunks[i], &last_va);
	/*
	 * ... and the free slots of the file's VRAM pool page (the queue's
	 * progress fence made it) by DEFAULT fences, kept until the file
	 * closes, until one's MonitoredValue is not in VRAM. None takes more
	 * VRAM: no new pool page fits.
	 */
	for (;;) {
		struct drm_nfence_fence_mapping md;
		uint64_t before = vram_used();

		nfence_fence_create(vfd, vdev, TYPE_DEFAULT, 0, 1, &md);
		igt_assert_eq_u64(vram_used(), before);
		nfence_debugfs_fence(dbg, &md, &line);
		if (!line.mv_vram)
			break;
		igt_assert_lt(++filled, MAX_FENCES / 2);
	}
	igt_debug("%d DEFAULT fences filled the last slots\n", filled);

	vram_full_intra_gpu(vfd, vdev, &q);

	/* No slot is left: both DEFAULT fences have MonitoredValue demoted. */
	for (int i = 0; i < 2; i++)
		h[i] = nfence_fence_create(vfd, vdev, TYPE_DEFAULT, 0, 1, &m[i]);
	for (int i = 0; i < 2; i++) {
		struct nfence_cpu_waiter w;
		struct nfence_cs cs;

		assert_default_mapping(&m[i]);
		nfence_cpu_waiter_start(&w, vfd, vdev, h[i], 5,
					nfence_deadline_ms(10000));
		igt_assert_eq(nfence_debugfs_fence_wait(dbg, &m[i], 1, 5000,
							&line), 0);
		igt_assert_eq_u64(line.monitored, 4);
		igt_assert(!line.mv_vram);
		nfence_queue_begin(&q, &cs);
		nfence_cs_signal_fence(&cs, &m[i], 5);
		nfence_queue_submit(&q, &cs);
		nfence_queue_sync(&q);
		igt_assert_eq(nfence_cpu_waiter_join(&w, 5000), 0);
		igt_assert_eq_u64(read_value(vfd, &m[i]), 5);
		igt_assert_eq(nfence_queue_state(&q, NULL), 0);
	}

	nfence_queue_destroy(&q);
	close(vfd);
}

/*
 * A moved MonitoredValue kept its CPU waiter's bound (4, for @w waiting
 * for 5 through @rfd): a GPU signal of @m to 3 raises no interrupt, one
 * to 5 does and releases @w.
 */
static void assert_monitored_kept(struct nfence_queue *q,
				  const struct drm_nfence_fence_mapping *m,
				  int rfd, struct nfence_cpu_waiter *w)
{
	struct nfence_interrupts before, after;

	nfence_debugfs_interrupts(dbg, &before);
	queue_signal(q, m, 3);
	nfence_debugfs_interrupts(dbg, &after);
	igt_assert_eq_u64(after.interrupts, before.interrupts);
	igt_assert_eq_u64(read_value(rfd, m), 3);
	queue_signal(q, m, 5);
	igt_assert_eq(nfence_cpu_waiter_join(w, 5000), 0);
	nfence_debugfs_interrupts(dbg, &after);
	igt_assert_lt_u64(before.interrupts, after.interrupts);
}

/*
 * Live fence storage leaves VRAM when an allocation needs the room
 * (Documentation/fences.rst, "Demoting fence storage"): a DEFAULT fence
 * with a CPU waiter for 5 (MonitoredValue 4 in VRAM) and an INTRA_GPU
 * fence at 2 (both values in VRAM) with a queue parked on it for 3; VRAM
 * is then filled with allocations, which succeed past the point where the
 * fences' pages held VRAM. Afterwards no fence value of the adapter is in
 * VRAM, and nothing was lost: MonitoredValue is still 4 (a GPU signal to
 * 3 raises no interrupt; one to 5 does and wakes the waiter), the
 * INTRA_GPU value is still 2 (a GPU wait for 2 passes at once), and a GPU
 * signal to 3 through the same GPU VA releases the parked queue.
 */
static void test_vram_demote_live(void)
{
	static const uint64_t chunks[] = { 4 << 20, 256 << 10, FENCE_PAGE };
	struct drm_nfence_fence_mapping md, mi;
	struct nfence_debugfs_fence line;
	struct nfence_debugfs_queue qline;
	struct nfence_cpu_waiter w;
	struct nfence_queue q, q2;
	uint64_t full = 0, freed = 0;
	struct nfence_bo flag;
	struct nfence_cs cs;
	uint32_t vdev, hd;
	int vfd;

	vfd = vram_client(&vdev);
	nfence_queue_create(&q, vfd, vdev, 0, 0);
	nfence_queue_create(&q2, vfd, vdev, 0, 0);
	nfence_bo_create(vfd, vdev, FENCE_PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &flag);

	/* A CPU waits on a DEFAULT fence for 5: MonitoredValue 4, in VRAM. */
	hd = nfence_fence_create(vfd, vdev, TYPE_DEFAULT, 0, 1, &md);
	nfence_cpu_waiter_start(&w, vfd, vdev, hd, 5,
				nfence_deadline_ms(60000));
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &md, 1, 5000, &line), 0);
	igt_assert(line.mv_vram);
	igt_assert_eq_u64(line.monitored, 4);

	/* An INTRA_GPU fence signaled to 2; q2 parks on it for 3. */
	nfence_fence_create(vfd, vdev, TYPE_INTRA_GPU, 0, 1, &mi);
	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &mi, 2);
	nfence_queue_submit(&q, &cs);
	nfence_queue_sync(&q);
	nfence_queue_begin(&q2, &cs);
	nfence_cs_wait_fence(&cs, &mi, 3);
	nfence_cs_write64(&cs, flag.gpu_va, 1);
	nfence_queue_submit(&q2, &cs);
	igt_assert_eq(nfence_debugfs_queue_wait_state(dbg, getpid(), vdev,
						      q2.context, "wait-fence",
						      10000, &qline), 0);
	igt_assert_lt(0, fences_in_vram());

	/*
	 * VRAM filled. The first allocation that finds no room moves the
	 * fences' pages out, giving their VRAM back at once; the
	 * allocations that follow take it.
	 */
	for (unsigned int i = 0; i < ARRAY_SIZE(chunks); i++) {
		for (;;) {
			struct drm_nfence_alloc_create a = {
				.device = vdev,
				.size = chunks[i],
				.segment_id = NFENCE_SEGMENT_VRAM,
			};
			int in_vram = fences_in_vram();
			uint64_t used = vram_used();
			int ret = __nfence_alloc_create(vfd, &a);

			if (in_vram && !fences_in_vram()) {
				igt_assert_eq_u64(full, 0);
				full = used;
				freed = used + (ret ? 0 : chunks[i]) - vram_used();
			}
			if (ret == -ENOSPC)
				break;
			igt_assert_eq(ret, 0);
			igt_assert_eq_u32(a.placed_segment_id,
					  NFENCE_SEGMENT_VRAM);
		}
	}
	igt_info("VRAM full at %" PRIu64 " bytes; the fences gave back %"
		 PRIu64 "\n", full, freed);
	igt_assert_lt_u64(0, freed);
	igt_assert_eq_u64(freed % FENCE_PAGE, 0);
	igt_assert_lte_u64(full, vram_used());
	igt_assert_eq(fences_in_vram(), 0);
	nfence_debugfs_fence(dbg, &md, &line);
	igt_assert(!line.mv_vram);
	igt_assert_eq_u64(line.monitored, 4);
	igt_assert_eq_u64(line.current, 1);
	igt_assert_eq_u64(line.waiters, 1);

	/* MonitoredValue kept: no interrupt below it, one at it. */
	assert_monitored_kept(&q, &md, vfd, &w);

	/* The INTRA_GPU value kept, its GPU VA valid: q2 is released. */
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &mi, 2);
	nfence_cs_write64(&cs, flag.gpu_va + 8, 2);
	nfence_cs_signal_fence(&cs, &mi, 3);
	nfence_queue_submit(&q, &cs);
	nfence_queue_sync(&q);
	nfence_queue_sync(&q2);
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 8), 2);
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 1);
	igt_assert_eq(nfence_queue_state(&q, NULL), 0);
	igt_assert_eq(nfence_queue_state(&q2, NULL), 0);

	nfence_bo_destroy(&flag);
	nfence_queue_destroy(&q2);
	nfence_queue_destroy(&q);
	close(vfd);
}

static bool count_cv_in_vram(const struct nfence_debugfs_fence *f, void *data)
{
	if (f->cv_vram)
		++*(int *)data;
	return false;
}

/*
 * A NO_SIGNAL handle maps its INTRA_GPU fence's CurrentValue read-only at
 * a GPU VA of its own, outside the VRAM pool page's mapping: that mapping
 * moves with the page when VRAM is filled. Afterwards no CurrentValue is
 * in VRAM, a GPU wait through that VA for the fence's value (7) passes,
 * and a GPU signal through it still faults the context at that VA.
 */
static void test_vram_demote_no_signal(void)
{
	struct drm_nfence_context_control ctl;
	struct drm_nfence_fence_mapping mj;
	struct nfence_queue q, qs;
	struct nfence_bo flag;
	struct nfence_cs cs;
	uint64_t last_va;
	uint32_t vdev;
	int vfd, n = 0;

	vfd = vram_client(&vdev);
	nfence_queue_create(&q, vfd, vdev, 0, 0);
	nfence_queue_create(&qs, vfd, vdev, 0, 0);
	nfence_bo_create(vfd, vdev, FENCE_PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &flag);
	nfence_fence_create(vfd, vdev, TYPE_INTRA_GPU,
			    DRM_NFENCE_FENCE_NO_SIGNAL, 7, &mj);
	igt_assert_lte(0, __nfence_debugfs_fences(dbg, count_cv_in_vram, &n));
	igt_assert_lt(0, n);

	fill_vram(vfd, vdev, 4 << 20, &last_va);
	fill_vram(vfd, vdev, 256 << 10, &last_va);
	fill_vram(vfd, vdev, FENCE_PAGE, &last_va);
	n = 0;
	igt_assert_lte(0, __nfence_debugfs_fences(dbg, count_cv_in_vram, &n));
	igt_assert_eq(n, 0);

	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &mj, 7);
	nfence_cs_write64(&cs, flag.gpu_va, 1);
	nfence_queue_submit(&q, &cs);
	nfence_queue_sync(&q);
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 1);
	igt_assert_eq(nfence_queue_state(&q, NULL), 0);

	/* Still read-only for the GPU where it now is. */
	nfence_queue_begin(&qs, &cs);
	nfence_cs_signal_fence(&cs, &mj, 9);
	nfence_queue_submit(&qs, &cs);
	igt_assert_eq(nfence_queue_wait(&qs, UINT64_MAX, 10000), 0);
	nfence_queue_state(&qs, &ctl);
	igt_assert(ctl.state & DRM_NFENCE_CONTEXT_STATE_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, mj.current_value_gpu_va);

	nfence_bo_destroy(&flag);
	nfence_queue_destroy(&qs);
	nfence_queue_destroy(&q);
	close(vfd);
}

/*
 * A VRAM request that could not fit even in an empty segment (larger than
 * VRAM; with CPU_VISIBLE, larger than its visible part) moves no fence
 * storage (Documentation/fences.rst, "Demoting fence storage"): it fails
 * with -ENOSPC and another client's fence values stay in VRAM.
 */
static void test_vram_demote_impossible(void)
{
	struct drm_nfence_fence_mapping md;
	struct nfence_debugfs_fence line;
	uint64_t size, visible;
	uint32_t vdev, cdev, hd;
	struct nfence_queue q;
	int vfd, cfd, n;

	nfence_query_segment_sizes(fd, NFENCE_SEGMENT_VRAM, &size, &visible);
	igt_require_f(size && size + FENCE_PAGE <= DRM_NFENCE_MAX_ALLOC_SIZE,
		      "needs VRAM smaller than the largest allocation\n");
	vfd = vram_client(&vdev);
	nfence_queue_create(&q, vfd, vdev, 0, 0);
	hd = nfence_fence_create(vfd, vdev, TYPE_DEFAULT, 0, 1, &md);
	nfence_debugfs_fence(dbg, &md, &line);
	igt_assert(line.mv_vram);
	n = fences_in_vram();
	cfd = nfence_open();
	cdev = nfence_device_create(cfd);

	{
		struct drm_nfence_alloc_create a = {
			.device = cdev,
			.size = size + FENCE_PAGE,
			.segment_id = NFENCE_SEGMENT_VRAM,
		};

		igt_assert_eq(__nfence_alloc_create(cfd, &a), -ENOSPC);
		igt_assert_eq(fences_in_vram(), n);
		if (visible && visible < size) {
			a.size = visible + FENCE_PAGE;
			a.flags = DRM_NFENCE_ALLOC_CPU_VISIBLE;
			igt_assert_eq(__nfence_alloc_create(cfd, &a), -ENOSPC);
			igt_assert_eq(fences_in_vram(), n);
		}
	}
	nfence_debugfs_fence(dbg, &md, &line);
	igt_assert(line.mv_vram);
	close(cfd);
	nfence_fence_destroy(vfd, hd);
	nfence_queue_destroy(&q);
	close(vfd);
}

/*
 * Shared fences' values in VRAM, ranges of their own mapped by every file
 * that opened the fence, leave VRAM too when an allocation needs the
 * room. Client A creates a shared INTRA_GPU fence at 2 and a shared
 * DEFAULT fence (MonitoredValue in VRAM); client B opens both, and the
 * INTRA_GPU one once more as a NO_SIGNAL handle; a CPU in B waits on the
 * DEFAULT fence for 5 (MonitoredValue 4), and a queue of B is parked on
 * the INTRA_GPU fence for 3. A third client then fills VRAM. Afterwards
 * no value of the adapter is in VRAM and every VA works on the values
 * where they are now: B's NO_SIGNAL VA reads 2, A's GPU signal to 3
 * releases B's queue, a signal to 3 of the DEFAULT fence raises no
 * interrupt and one to 5 does and wakes B's waiter.
 */
static void test_vram_demote_shared(void)
{
	static const uint64_t chunks[] = { 4 << 20, 256 << 10, FENCE_PAGE };
	struct drm_nfence_fence_mapping ai, ad, bi, bd, br;
	struct nfence_debugfs_fence line;
	struct nfence_debugfs_queue qline;
	struct nfence_cpu_waiter w;
	struct nfence_queue qa, qb, qr;
	uint32_t adev, bdev, cdev, hi, hd, hbd;
	uint64_t used, last_va, quota = 0;
	int afd, bfd, cfd, sfd;
	struct nfence_bo flag;
	struct nfence_cs cs;

	/* A quota would stop the third client before VRAM is full. */
	igt_require_f(!nfence_param_u64("client_vram_mb", &quota) || !quota,
		      "needs VRAM without a per-client quota\n");
	afd = vram_client(&adev);
	bfd = nfence_open();
	nfence_device_create(bfd);
	bdev = nfence_device_create(bfd);
	cfd = nfence_open();
	cdev = nfence_device_create(cfd);
	nfence_queue_create(&qa, afd, adev, 0, 0);
	nfence_queue_create(&qb, bfd, bdev, 0, 0);
	nfence_bo_create(bfd, bdev, FENCE_PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &flag);

	hi = nfence_fence_create(afd, adev, TYPE_INTRA_GPU, SHAREABLE, 2, &ai);
	hd = nfence_fence_create(afd, adev, TYPE_DEFAULT, SHAREABLE, 1, &ad);
	nfence_debugfs_fence(dbg, &ad, &line);
	igt_assert(line.mv_vram);
	sfd = nfence_fence_share(afd, hi);
	nfence_fence_open(bfd, bdev, sfd, 0, &bi);
	nfence_fence_open(bfd, bdev, sfd, NO_SIGNAL, &br);
	close(sfd);
	sfd = nfence_fence_share(afd, hd);
	hbd = nfence_fence_open(bfd, bdev, sfd, 0, &bd);
	close(sfd);

	nfence_cpu_waiter_start(&w, bfd, bdev, hbd, 5,
				nfence_deadline_ms(60000));
	igt_assert_eq(nfence_debugfs_fence_wait(dbg, &ad, 1, 5000, &line), 0);
	igt_assert_eq_u64(line.monitored, 4);
	nfence_queue_begin(&qb, &cs);
	nfence_cs_wait_fence(&cs, &bi, 3);
	nfence_cs_write64(&cs, flag.gpu_va, 1);
	nfence_queue_submit(&qb, &cs);
	igt_assert_eq(nfence_debugfs_queue_wait_state(dbg, getpid(), bdev,
						      qb.context, "wait-fence",
						      10000, &qline), 0);

	/* A third client takes every page of VRAM. */
	used = vram_used();
	for (unsigned int i = 0; i < ARRAY_SIZE(chunks); i++)
		fill_vram(cfd, cdev, chunks[i], &last_va);
	igt_assert_lt_u64(used, vram_used());
	igt_assert_eq(fences_in_vram(), 0);
	nfence_debugfs_fence(dbg, &ad, &line);
	igt_assert_eq_u64(line.monitored, 4);
	igt_assert_eq_u64(line.waiters, 1);

	/*
	 * MonitoredValue kept: a signal to 3 raises no interrupt, one to 5
	 * does and wakes B's waiter.
	 */
	assert_monitored_kept(&qa, &ad, bfd, &w);

	/* B's NO_SIGNAL VA reads the value where it is now. */
	nfence_queue_create(&qr, bfd, bdev, 0, 0);
	nfence_queue_begin(&qr, &cs);
	nfence_cs_wait_fence(&cs, &br, 2);
	nfence_cs_write64(&cs, flag.gpu_va + 16, 2);
	nfence_queue_submit(&qr, &cs);
	nfence_queue_sync(&qr);
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 16), 2);
	igt_assert_eq(nfence_queue_state(&qr, NULL), 0);

	/* A's signal through its VA releases B's queue. */
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 0);
	queue_signal(&qa, &ai, 3);
	nfence_queue_sync(&qb);
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 1);
	igt_assert_eq(nfence_queue_state(&qa, NULL), 0);
	igt_assert_eq(nfence_queue_state(&qb, NULL), 0);

	nfence_bo_destroy(&flag);
	nfence_queue_destroy(&qr);
	nfence_queue_destroy(&qb);
	nfence_queue_destroy(&qa);
	close(cfd);
	close(bfd);
	close(afd);
}

/*
 * A VRAM pool page is zeroed when it is made: VRAM another client freed
 * keeps what it held, and the page is mapped whole into the GPU VA space
 * of the file whose fence made it. Client A fills VRAM, writes a pattern
 * over a page-sized allocation from the GPU and frees it: the only free
 * page of VRAM becomes client B's MonitoredValue pool page, and a GPU wait
 * in B for the pattern in a slot of that page no fence uses parks.
 */
static void test_vram_pool_page_zeroed(void)
{
	const uint64_t pattern = 0xa5a5a5a5a5a5a5a5ull;
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence line;
	struct nfence_debugfs_queue qline;
	struct nfence_queue qa, qb;
	uint64_t victim_va = 0, before, page_va, check_va, quota = 0;
	uint32_t deva, devb, victim, big, h, slot, slots;
	struct nfence_bo flag;
	struct nfence_cs cs;
	int fda, fdb, ret;

	igt_require_f(nfence_param_get_bool_at("optimized_default_fence",
					       adapter.index),
		      "needs the optimized DEFAULT fence\n");
	/* A quota would stop A before VRAM is full. */
	igt_require_f(!nfence_param_u64("client_vram_mb", &quota) || !quota,
		      "needs VRAM without a per-client quota\n");
	nfence_watchdog(WATCHDOG_S);
	fda = nfence_open();
	deva = nfence_device_create(fda);
	fdb = nfence_open();
	/*
	 * B's second device: debugfs names a queue by process, device and
	 * context handle, and both files are this process's.
	 */
	nfence_device_create(fdb);
	devb = nfence_device_create(fdb);
	igt_assert_neq_u32(devb, deva);
	nfence_queue_create(&qa, fda, deva, 0, 0);
	nfence_bo_create(fdb, devb, FENCE_PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &flag);

	/*
	 * All of VRAM A's, the last of it in page-sized allocations (if
	 * none fitted after the larger ones, the last larger one is made
	 * into pages).
	 */
	fill_vram(fda, deva, 4 << 20, &victim_va);
	big = fill_vram(fda, deva, 256 << 10, &victim_va);
	victim = fill_vram(fda, deva, FENCE_PAGE, &victim_va);
	if (!victim) {
		igt_assert_neq_u32(big, 0);
		igt_assert_eq(__nfence_alloc_destroy_handle(fda, deva, big),
			      0);
		victim = fill_vram(fda, deva, FENCE_PAGE, &victim_va);
	}
	igt_assert_neq_u32(victim, 0);

	/* 64 stores a command buffer. */
	for (unsigned int i = 0; i < FENCE_PAGE / 8; i += 64) {
		nfence_queue_begin(&qa, &cs);
		for (unsigned int j = i; j < i + 64; j++)
			nfence_cs_write64(&cs, victim_va + 8 * j, pattern);
		nfence_queue_submit(&qa, &cs);
	}
	nfence_queue_sync(&qa);
	igt_assert_eq(nfence_queue_state(&qa, NULL), 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fda, deva, victim), 0);

	/* B's queue and fence take that page, and no more. */
	before = vram_used();
	nfence_queue_create(&qb, fdb, devb, 0, 0);
	h = nfence_fence_create(fdb, devb, TYPE_DEFAULT, 0, 0, &m);
	nfence_debugfs_fence(dbg, &m, &line);
	igt_assert(line.mv_vram);
	igt_assert_eq_u64(vram_used(), before + FENCE_PAGE);

	/*
	 * The slot half a page from the fence's (GPU VA ranges are page
	 * aligned): B's only other value there is its queue's.
	 */
	slots = FENCE_PAGE / caps.value_stride;
	slot = (m.monitored_value_gpu_va % FENCE_PAGE) / caps.value_stride;
	page_va = m.monitored_value_gpu_va - slot * caps.value_stride;
	check_va = page_va + ((slot + slots / 2) % slots) * caps.value_stride;
	nfence_queue_begin(&qb, &cs);
	nfence_cs_fence_wait(&cs, check_va, 1);
	nfence_cs_write64(&cs, flag.gpu_va, 1);
	nfence_queue_submit(&qb, &cs);
	ret = nfence_debugfs_queue_wait_state(dbg, getpid(), devb, qb.context,
					      "wait-fence", 10000, &qline);
	igt_assert_f(ret == 0,
		     "a wait for another client's old VRAM contents did not "
		     "park: %d, state %s, flag %" PRIu64 "\n", ret,
		     qline.state, *nfence_bo_u64(&flag, 0));
	igt_assert_eq_u64(*nfence_bo_u64(&flag, 0), 0);

	/*
	 * The queue's progress fence goes after its handle, with the queue:
	 * the page goes back once the queue is destroyed.
	 */
	nfence_fence_destroy(fdb, h);
	igt_assert_eq_u64(vram_used(), before + FENCE_PAGE);
	nfence_queue_destroy(&qb);
	igt_assert_eq_u64(vram_used(), before);
	nfence_bo_destroy(&flag);
	nfence_queue_destroy(&qa);
	close(fdb);
	close(fda);
}

static void test_open_intra_gpu(void)
{
	struct drm_nfence_fence_mapping m, om;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	uint32_t h, o;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	igt_require(caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
	h = nfence_fence_create(fd, dev, TYPE_INTRA_GPU, SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);
	o = nfence_fence_open(fd2, dev2, sfd, 0, &om);
	igt_assert_eq_u64(om.cpu_mmap_offset, 0);
	igt_assert_eq_u32(om.cpu_value_offset, 0);
	igt_assert_neq_u64(om.current_value_gpu_va, 0);
	igt_assert_neq_u64(om.monitored_value_gpu_va, 0);
	nfence_fence_destroy(fd2, o);
	close(sfd);
	nfence_fence_destroy(fd, h);
	close(fd2);
}

static void test_mapping_initial_value(void)
{
	const uint64_t values[] = {
		0, 1, 0x12345678, 0x7fffffff, 0x80000000u, 0xffffffffu,
		0x100000000ull, 0x123456789abcdefull, 1ull << 63,
		UINT64_MAX - 1, UINT64_MAX,
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		for (int shared = 0; shared < 2; shared++) {
			struct drm_nfence_fence_mapping m;
			uint32_t h;

			if (caps.value_bits < 64 && values[i] > UINT32_MAX)
				continue;
			h = create(shared ? SHAREABLE : 0, values[i], &m);
			igt_assert_eq_u64(read_value(fd, &m), values[i]);
			{
				struct nfence_debugfs_fence f;

				nfence_debugfs_fence(dbg, &m, &f);
				igt_assert_eq_u64(f.current, values[i]);
			}
			nfence_fence_destroy(fd, h);
		}
	}
}

static void test_mapping_follows_signal(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *v;
	uint32_t h = create(0, 0, &m);
	uint64_t value = 0;

	nfence_watchdog(WATCHDOG_S);
	v = nfence_fence_map(fd, &m);
	for (int i = 1; i <= 1000; i++) {
		nfence_fence_signal(fd, dev, h, i);
		igt_assert_eq_u64(*v, i);
	}
	for (int shift = 10; shift < (int)caps.value_bits; shift++) {
		value = 1ull << shift | 1;
		nfence_fence_signal(fd, dev, h, value);
		igt_assert_eq_u64(*v, value);
	}
	/* A second mapping of the same page sees the same. */
	igt_assert_eq_u64(read_value(fd, &m), value);
	nfence_fence_unmap(v);
	nfence_fence_destroy(fd, h);
}

static void test_mapping_packed(void)
{
	const int n = 64;
	struct drm_nfence_fence_mapping m[64];
	const volatile uint64_t *v[64];
	uint32_t h[64];
	uint64_t pages[64];
	int npages = 0;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq_u32(caps.value_stride, 64);
	for (int i = 0; i < n; i++) {
		h[i] = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, 0,
					   1000 + i, &m[i]);
		assert_default_mapping(&m[i]);
	}

	/* Fences on one page have distinct slots at the value stride. */
	for (int i = 0; i < n; i++) {
		int j;

		for (j = 0; j < npages; j++)
			if (pages[j] == m[i].cpu_mmap_offset)
				break;
		if (j == npages)
			pages[npages++] = m[i].cpu_mmap_offset;
		for (int k = 0; k < i; k++)
			if (m[k].cpu_mmap_offset == m[i].cpu_mmap_offset)
				igt_assert_neq_u32(m[k].cpu_value_offset,
						   m[i].cpu_value_offset);
	}
	igt_info("%d non-shared fences on %d pages\n", n, npages);
	/* A fresh file packs: the first two share a page, 64 fit in two. */
	igt_assert_eq_u64(m[0].cpu_mmap_offset, m[1].cpu_mmap_offset);
	igt_assert_lte(npages, 2);

	/* Each slot is its own fence's CurrentValue. */
	for (int i = 0; i < n; i++)
		v[i] = nfence_fence_map(fd2, &m[i]);
	for (int i = 0; i < n; i++)
		igt_assert_eq_u64(*v[i], 1000 + i);
	nfence_fence_signal(fd2, dev2, h[5], 5555);
	for (int i = 0; i < n; i++)
		igt_assert_eq_u64(*v[i], i == 5 ? 5555 : 1000 + i);

	/* A destroyed fence's slot does not disturb its neighbours. */
	nfence_fence_destroy(fd2, h[6]);
	nfence_fence_signal(fd2, dev2, h[7], 7777);
	igt_assert_eq_u64(*v[5], 5555);
	igt_assert_eq_u64(*v[7], 7777);
	for (int i = 0; i < n; i++)
		nfence_fence_unmap(v[i]);
	close(fd2);
}

static void test_mapping_shared_own_page(void)
{
	const int n = 16;
	struct drm_nfence_fence_mapping m[16];
	uint32_t h[16];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++)
		h[i] = create(i % 2 ? SHAREABLE : 0, i, &m[i]);
	for (int i = 1; i < n; i += 2) {
		igt_assert_eq_u32(m[i].cpu_value_offset, 0);
		for (int j = 0; j < n; j++)
			if (j != i)
				igt_assert_neq_u64(m[i].cpu_mmap_offset,
						   m[j].cpu_mmap_offset);
		igt_assert_eq_u64(read_value(fd, &m[i]), i);
	}
	for (int i = 0; i < n; i++)
		nfence_fence_destroy(fd, h[i]);
}

static void test_mapping_no_write_mmap(void)
{
	const int prots[] = { PROT_READ | PROT_WRITE, PROT_WRITE };

	nfence_watchdog(WATCHDOG_S);
	for (int shared = 0; shared < 2; shared++) {
		struct drm_nfence_fence_mapping m;
		uint32_t h = create(shared ? SHAREABLE : 0, 9, &m);

		for (unsigned int i = 0; i < ARRAY_SIZE(prots); i++) {
			void *p = NULL;
			int ret = __nfence_fence_mmap(fd, m.cpu_mmap_offset,
						      prots[i], &p);

			igt_assert_f(ret == -EACCES || ret == -EPERM,
				     "writable mmap: %d\n", ret);
		}
		/* Read-only still works and the value is untouched. */
		igt_assert_eq_u64(read_value(fd, &m), 9);
		nfence_fence_destroy(fd, h);
	}
}

static void test_mapping_no_mprotect_write(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (int shared = 0; shared < 2; shared++) {
		struct drm_nfence_fence_mapping m;
		uint32_t h = create(shared ? SHAREABLE : 0, 11, &m);
		void *p = NULL;

		igt_assert_eq(__nfence_fence_mmap(fd, m.cpu_mmap_offset,
						  PROT_READ, &p), 0);
		igt_assert_eq(mprotect(p, FENCE_PAGE, PROT_READ | PROT_WRITE),
			      -1);
		igt_assert_eq(errno, EACCES);
		igt_assert_eq(mprotect(p, FENCE_PAGE, PROT_WRITE), -1);
		igt_assert_eq(errno, EACCES);
		/* Still readable. */
		igt_assert_eq_u64(*(volatile uint64_t *)((char *)p +
							 m.cpu_value_offset),
				  11);
		munmap(p, FENCE_PAGE);
		nfence_fence_destroy(fd, h);
	}
}

static void test_mapping_write_faults(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (int shared = 0; shared < 2; shared++) {
		struct drm_nfence_fence_mapping m;
		uint32_t h = create(shared ? SHAREABLE : 0, 13, &m);
		const volatile uint64_t *v = nfence_fence_map(fd, &m);
		uint64_t bad = 0xbad;
		int signo;

		igt_assert_f(nfence_access_faults((volatile uint64_t *)v, true,
						  &bad, &signo),
			     "a write through the mapping worked\n");
		igt_assert_eq(signo, SIGSEGV);
		igt_assert_eq_u64(*v, 13);
		/* The fence is unharmed. */
		nfence_fence_signal(fd, dev, h, 14);
		igt_assert_eq_u64(*v, 14);
		nfence_fence_unmap(v);
		nfence_fence_destroy(fd, h);
	}
}

static void test_mapping_other_file(void)
{
	struct drm_nfence_fence_mapping m;
	int fd2 = nfence_open();
	uint32_t h = create(0, 15, &m);
	void *p = NULL;
	int ret;

	nfence_watchdog(WATCHDOG_S);
	ret = __nfence_fence_mmap(fd2, m.cpu_mmap_offset, PROT_READ, &p);
	igt_assert_f(ret == -EACCES || ret == -EINVAL,
		     "mmap of another file's fence page: %d\n", ret);

	/* Also when fd2 has fences of its own. */
	nfence_fence_create(fd2, nfence_device_create(fd2), TYPE_DEFAULT, 0,
			    0, NULL);
	ret = __nfence_fence_mmap(fd2, m.cpu_mmap_offset, PROT_READ, &p);
	igt_assert_f(ret == -EACCES || ret == -EINVAL,
		     "mmap of another file's fence page: %d\n", ret);

	igt_assert_eq_u64(read_value(fd, &m), 15);
	close(fd2);
	nfence_fence_destroy(fd, h);
}

static void test_mapping_intra_gpu(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	igt_require(caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
	h = nfence_fence_create(fd, dev, TYPE_INTRA_GPU, 0, 5, &m);
	igt_assert_eq_u64(m.cpu_mmap_offset, 0);
	igt_assert_eq_u32(m.cpu_value_offset, 0);
	igt_assert_neq_u64(m.current_value_gpu_va, 0);
	igt_assert_neq_u64(m.monitored_value_gpu_va, 0);
	igt_assert_eq_u64(m.current_value_gpu_va % 8, 0);
	igt_assert_eq_u64(m.monitored_value_gpu_va % 8, 0);
	igt_assert_neq_u64(m.current_value_gpu_va, m.monitored_value_gpu_va);
	nfence_fence_destroy(fd, h);
}

static void test_mapping_gpu_va(void)
{
	const int n = 96;
	struct drm_nfence_fence_mapping m[96];
	uint64_t va[2 * 96];
	uint32_t h[96];
	bool intra = caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < n; i++) {
		uint32_t type = intra && i % 3 == 2 ? TYPE_INTRA_GPU :
						      TYPE_DEFAULT;

		h[i] = nfence_fence_create(fd, dev, type,
					   i % 3 == 1 ? SHAREABLE : 0, 0,
					   &m[i]);
		igt_assert_neq_u64(m[i].current_value_gpu_va, 0);
		igt_assert_neq_u64(m[i].monitored_value_gpu_va, 0);
		igt_assert_eq_u64(m[i].current_value_gpu_va % 8, 0);
		igt_assert_eq_u64(m[i].monitored_value_gpu_va % 8, 0);
		va[2 * i] = m[i].current_value_gpu_va;
		va[2 * i + 1] = m[i].monitored_value_gpu_va;
	}
	/* Distinct values of distinct fences have distinct addresses. */
	assert_unique_u64(va, 2 * n);
	for (int i = 0; i < n; i++)
		nfence_fence_destroy(fd, h[i]);
}

/* ---- WDDM 2.x monitored fences (DRM_NFENCE_FENCE_MONITORED) ---- */

#define MONITORED	DRM_NFENCE_FENCE_MONITORED

/*
 * On every adapter, native fences or not: CurrentValue mapped read-only
 * with the initial value, a GPU VA, no MonitoredValue; FENCE_DESTROY frees
 * it.
 */
static void test_monitored_create(void)
{
	const uint32_t flags[] = { 0, SHAREABLE, NO_SIGNAL, NO_WAIT };
	struct drm_nfence_fence_mapping m;
	int64_t base = live_fences();
	uint32_t d = nfence_device_create(fd), h;

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++) {
		h = nfence_fence_create(fd, d, TYPE_DEFAULT,
					MONITORED | flags[i], 5 + i, &m);
		igt_assert_neq_u32(h, 0);
		igt_assert_neq_u64(m.cpu_mmap_offset, 0);
		igt_assert_neq_u64(m.current_value_gpu_va, 0);
		igt_assert_eq_u64(m.current_value_gpu_va % 8, 0);
		igt_assert_eq_u64(m.monitored_value_gpu_va, 0);
		igt_assert_eq_u64(read_value(fd, &m), 5 + i);
		assert_fences(base, 1);
		nfence_fence_destroy(fd, h);
		assert_fences(base, 0);
	}
	nfence_device_destroy(fd, d);
}

/*
 * MONITORED with INTRA_GPU, or CROSS_ADAPTER without SHARED: -EINVAL, on
 * any adapter; MONITORED with CROSS_ADAPTER and SHARED is a monitored
 * fence too.
 */
static void test_monitored_create_bad(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_create c;
	uint32_t d = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	c = (struct drm_nfence_fence_create){
		.device = d, .type = TYPE_DEFAULT,
		.flags = MONITORED | DRM_NFENCE_FENCE_CROSS_ADAPTER,
	};
	expect_create_error(fd, &c, -EINVAL);
	nfence_fence_destroy(fd, nfence_fence_create(fd, d, TYPE_DEFAULT,
						     MONITORED | SHAREABLE |
						     DRM_NFENCE_FENCE_CROSS_ADAPTER,
						     0, &m));
	igt_assert_eq_u64(m.monitored_value_gpu_va, 0);
	c.flags = MONITORED;
	c.type = TYPE_INTRA_GPU;
	expect_create_error(fd, &c, -EINVAL);
	/* The -EINVAL checks come before the device lookup. */
	c.device = 0;
	expect_create_error(fd, &c, -EINVAL);
	c.type = TYPE_DEFAULT;
	expect_create_error(fd, &c, -ENOENT);
	nfence_device_destroy(fd, d);
}

/*
 * CPU waits and signals: a blocked waiter is released by the signal that
 * reaches its value and not before; a lower signal changes nothing.
 */
static void test_monitored_cpu(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_cpu_waiter w;
	uint32_t d = nfence_device_create(fd), h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, d, TYPE_DEFAULT, MONITORED, 1, &m);
	igt_assert_eq(__nfence_fence_wait_one(fd, d, h, 1, 0), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, d, h, 2, 0), -ETIME);
	nfence_cpu_waiter_start(&w, fd, d, h, 10, nfence_deadline_ms(10000));
	nfence_fence_signal(fd, d, h, 9);
	usleep(100 * 1000);
	igt_assert_eq(__atomic_load_n(&w.ret, __ATOMIC_ACQUIRE), 1);
	nfence_fence_signal(fd, d, h, 10);
	igt_assert_eq(nfence_cpu_waiter_join(&w, 5000), 0);
	nfence_fence_signal(fd, d, h, 3);
	igt_assert_eq_u64(read_value(fd, &m), 10);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, d);
}

/*
 * A GPU FENCE_SIGNAL (no MonitoredValue: mv_va 0) releases a CPU waiter
 * through the monitored fence signaled interrupt, which every GPU signal
 * of it raises, waiters or not; a SUBMIT_WAIT on it holds a queue until a
 * CPU signal, as WDDM 2.x resolves GPU waits in the kernel.
 */
static void test_monitored_gpu(void)
{
	struct nfence_interrupts before, after;
	struct drm_nfence_fence_mapping m;
	struct nfence_cpu_waiter w;
	uint32_t d = nfence_device_create(fd), h;
	struct nfence_queue q, q2;
	struct nfence_bo bo;
	struct nfence_cs cs;
	uint64_t v;
	int idir = nfence_debugfs_dir(fd);

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, d, TYPE_DEFAULT, MONITORED, 0, &m);
	nfence_queue_create(&q, fd, d, 0, 0);
	nfence_queue_create(&q2, fd, d, 0, 0);
	nfence_bo_create(fd, d, 4096, NFENCE_SEGMENT_SYSTEM, 0, &bo);

	nfence_debugfs_interrupts(idir, &before);
	nfence_cpu_waiter_start(&w, fd, d, h, 2, nfence_deadline_ms(10000));
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_signal(&cs, m.current_value_gpu_va, 0, 1);
	nfence_cs_fence_signal(&cs, m.current_value_gpu_va, 0, 2);
	v = nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, v, 10000), 0);
	igt_assert_eq(nfence_cpu_waiter_join(&w, 5000), 0);
	igt_assert_eq_u64(read_value(fd, &m), 2);
	nfence_debugfs_interrupts(idir, &after);
	igt_assert_lte_u64(before.monitored + 2, after.monitored);

	/* A queued (kernel-resolved) wait for 5, then a write. */
	igt_assert_eq(__nfence_queue_submit_wait(&q2, h, 5), 0);
	nfence_queue_begin(&q2, &cs);
	nfence_cs_write64(&cs, bo.gpu_va, 0x77);
	v = nfence_queue_submit(&q2, &cs);
	usleep(100 * 1000);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 0), 0);
	nfence_fence_signal(fd, d, h, 5);
	igt_assert_eq(nfence_queue_wait(&q2, v, 10000), 0);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 0), 0x77);
	/* And a queued signal. */
	igt_assert_eq(__nfence_queue_submit_signal(&q2, h, 6), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, d, h, 6,
					      nfence_deadline_ms(10000)), 0);

	nfence_bo_destroy(&bo);
	nfence_queue_destroy(&q);
	nfence_queue_destroy(&q2);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, d);
	close(idir);
}

/*
 * Shared as an fd: another process opens it on the same adapter and sees
 * the same value, with no MonitoredValue either; another adapter's file
 * refuses it (-EINVAL); the device's error makes it AlwaysSignaled.
 */
static void test_monitored_share(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t d = nfence_device_create(fd), h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, d, TYPE_DEFAULT, MONITORED | SHAREABLE, 4,
				&m);
	sfd = nfence_fence_share(fd, h);
	igt_fork(child, 1) {
		struct drm_nfence_fence_mapping cm;
		int cfd = nfence_open();
		uint32_t cd = nfence_device_create(cfd);
		uint32_t o = nfence_fence_open(cfd, cd, sfd, 0, &cm);

		igt_assert_eq_u64(cm.monitored_value_gpu_va, 0);
		igt_assert_eq_u64(read_value(cfd, &cm), 4);
		nfence_fence_signal(cfd, cd, o, 8);
		close(cfd);
	}
	igt_waitchildren();
	igt_assert_eq_u64(read_value(fd, &m), 8);
	if (nfence_count_adapters() >= 2) {
		struct drm_nfence_fence_open o = {
			.fd = sfd, .handle = POISON,
		};
		int b = nfence_open_adapter(1);

		o.device = nfence_device_create(b);
		igt_assert_eq(__nfence_fence_open(b, &o), -EINVAL);
		igt_assert_eq_u32(o.handle, POISON);
		close(b);
	}
	close(sfd);
	nfence_device_control(fd, d, DRM_NFENCE_DEVICE_OP_MARK_ERROR, NULL);
	igt_assert_eq(__nfence_fence_wait_one(fd, d, h, UINT64_MAX, 0), 0);
	igt_assert_eq_u64(read_value(fd, &m), 0xffffffffull);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, d);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		native = adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
		nfence_query_fence_caps(fd, &caps);
		dbg = nfence_debugfs_fences_dir(fd);
	}

	igt_describe("Without native fences, create fails with -EOPNOTSUPP "
		     "for every type and flag (CROSS_ADAPTER too), after the "
		     "-EINVAL checks and before the device lookup.");
	igt_subtest("create-no-native-fences")
		test_create_no_native_fences();

	igt_describe("MONITORED on any adapter: CurrentValue mapped with the "
		     "initial value and a GPU VA, no MonitoredValue; with "
		     "SHAREABLE, NO_SIGNAL, NO_WAIT too.");
	igt_subtest("monitored-create")
		test_monitored_create();

	igt_describe("MONITORED with INTRA_GPU, or with CROSS_ADAPTER "
		     "without SHARED, fails with -EINVAL before the device "
		     "lookup; with CROSS_ADAPTER and SHARED it is a "
		     "monitored fence.");
	igt_subtest("monitored-create-bad")
		test_monitored_create_bad();

	igt_describe("CPU waits on a monitored fence are released by the "
		     "CPU signal that reaches them; lower signals are no-ops.");
	igt_subtest("monitored-cpu")
		test_monitored_cpu();

	igt_describe("GPU signals of a monitored fence raise the monitored "
		     "interrupt and release CPU waiters; SUBMIT_WAIT and "
		     "SUBMIT_SIGNAL take it.");
	igt_subtest("monitored-gpu")
		test_monitored_gpu();

	igt_describe("A shared monitored fence opens in another process on "
		     "its adapter only, and becomes AlwaysSignaled when its "
		     "device is marked in error.");
	igt_subtest("monitored-share")
		test_monitored_share();

	igt_subtest_group {
		igt_fixture {
			igt_require_f(native, "adapter has no native fences\n");
			igt_assert_f(caps.value_stride && caps.value_bits,
				     "native fences without caps\n");
			dev = nfence_device_create(fd);
		}

		igt_describe("Create a DEFAULT fence: handle, mapping as "
			     "documented, a debugfs line; destroy removes it.");
		igt_subtest("create-destroy")
			test_create_destroy();

		igt_describe("Many fences: distinct handles and distinct "
			     "CurrentValue locations.");
		igt_subtest("create-many")
			test_create_many();

		igt_describe("A destroyed fence handle is not handed out "
			     "again right away.");
		igt_subtest("handles-not-reused")
			test_handles_not_reused();

		igt_describe("Every valid flag combination creates a fence "
			     "reading its initial value.");
		igt_subtest("create-flags")
			test_create_flags();

		igt_describe("Non-zero create pad fails with -EINVAL and "
			     "creates nothing.");
		igt_subtest("create-bad-pad")
			test_create_bad_pad();

		igt_describe("Every unknown flag bit fails with -EINVAL.");
		igt_subtest("create-bad-flags")
			test_create_bad_flags();

		igt_describe("A type other than DEFAULT and INTRA_GPU fails "
			     "with -EINVAL.");
		igt_subtest("create-bad-type")
			test_create_bad_type();

		igt_describe("NO_SIGNAL with NO_WAIT, and NT_SECURITY_SHARING "
			     "or CROSS_ADAPTER without SHARED, fail with "
			     "-EINVAL.");
		igt_subtest("create-bad-flag-combos")
			test_create_bad_flag_combos();

		igt_describe("engine_affinity (the seeds' EngineAffinity, "
			     "physical adapters) with any bit but bit 0, "
			     "engine masks included, fails with -EINVAL.");
		igt_subtest("create-bad-engine-affinity")
			test_create_bad_engine_affinity();

		igt_describe("engine_affinity 0 (every physical adapter) "
			     "and 1 (the only one) are valid.");
		igt_subtest("create-engine-affinity")
			test_create_engine_affinity();

		igt_describe("CROSS_ADAPTER needs SHARED and type DEFAULT "
			     "(else -EINVAL); it creates a fence with "
			     "MonitoredValue 0, shareable only with "
			     "NT_SECURITY_SHARING.");
		igt_subtest("create-cross-adapter")
			test_create_cross_adapter();

		igt_describe("The create checks run in the documented order: "
			     "every -EINVAL (CROSS_ADAPTER without SHARED or "
			     "with INTRA_GPU included) before -ENOENT.");
		igt_subtest("create-check-order")
			test_create_check_order();

		igt_describe("Device 0, unknown, destroyed and other-file "
			     "devices fail with -ENOENT.");
		igt_subtest("create-bad-device")
			test_create_bad_device();

		igt_describe("As many fences per file as the adapter's "
			     "client_fences allows, the next fails with "
			     "-ENOSPC, as do an open and a queue's progress "
			     "fence; freeing one allows one more.");
		igt_subtest("create-max-fences")
			test_create_max_fences();

		igt_describe("Without a fence handle limit, a file holds "
			     "more fences than the fewest a limit may allow.");
		igt_subtest("create-past-fewest-limit")
			test_create_past_fewest_limit();

		igt_describe("Destroying a device closes its fence handles; a "
			     "shared fd keeps its fence alive.");
		igt_subtest("device-destroy-closes-fences")
			test_device_destroy_closes_fences();

		igt_describe("Closing a file frees its fences (debugfs lines "
			     "disappear).");
		igt_subtest("close-frees-fences")
			test_close_frees_fences();

		igt_describe("Non-zero destroy pad fails with -EINVAL and the "
			     "fence survives.");
		igt_subtest("destroy-bad-pad")
			test_destroy_bad_pad();

		igt_describe("Handle 0, unknown, destroyed and other-file "
			     "fence handles fail with -ENOENT.");
		igt_subtest("destroy-bad-handle")
			test_destroy_bad_handle();

		igt_describe("Share returns a new close-on-exec fd per call; "
			     "each opens the fence.");
		igt_subtest("share-cloexec")
			test_share_cloexec();

		igt_describe("Sharing a fence not created SHARED | "
			     "NT_SECURITY_SHARING fails with -EINVAL.");
		igt_subtest("share-not-shareable")
			test_share_not_shareable();

		igt_describe("Every share flag bit fails with -EINVAL.");
		igt_subtest("share-bad-flags")
			test_share_bad_flags();

		igt_describe("Non-zero share pad fails with -EINVAL.");
		igt_subtest("share-bad-pad")
			test_share_bad_pad();

		igt_describe("Sharing handle 0, unknown, destroyed or "
			     "other-file handles fails with -ENOENT.");
		igt_subtest("share-bad-handle")
			test_share_bad_handle();

		igt_describe("Opening on the same file gives a second handle "
			     "to the same CurrentValue.");
		igt_subtest("open-same-file")
			test_open_same_file();

		igt_describe("Opening on another file: signals through either "
			     "handle show in both mappings.");
		igt_subtest("open-other-file")
			test_open_other_file();

		igt_describe("An opened handle belongs to the device it was "
			     "opened on and goes with it.");
		igt_subtest("open-other-device")
			test_open_other_device();

		igt_describe("A forked child opens the inherited fd on its own "
			     "file and signals the parent's fence.");
		igt_subtest("open-forked-child")
			test_open_forked_child();

		igt_describe("The fd passed over a unix socket (SCM_RIGHTS) "
			     "opens in another process, which signals.");
		igt_subtest("open-scm-rights")
			test_open_scm_rights();

		igt_describe("The fd keeps the fence, and its value, alive "
			     "after the creator destroys its handle.");
		igt_subtest("open-after-creator-destroy")
			test_open_after_creator_destroy();

		igt_describe("The fd keeps the fence alive after the creating "
			     "file is closed.");
		igt_subtest("open-after-creator-close")
			test_open_after_creator_close();

		igt_describe("The global fence lives until its last handle and "
			     "last fd are gone, in any order.");
		igt_subtest("share-fd-lifetime")
			test_share_fd_lifetime();

		igt_describe("Non-zero open pad fails with -EINVAL.");
		igt_subtest("open-bad-pad")
			test_open_bad_pad();

		igt_describe("Open flags other than NO_SIGNAL/NO_WAIT, or "
			     "both, fail with -EINVAL.");
		igt_subtest("open-bad-flags")
			test_open_bad_flags();

		igt_describe("Open engine_affinity with any bit but bit 0 "
			     "fails with -EINVAL; 0 and 1 open.");
		igt_subtest("open-bad-engine-affinity")
			test_open_bad_engine_affinity();

		igt_describe("A fence opened on another device of the same "
			     "process has the same GPU VAs (a NO_SIGNAL "
			     "handle's CurrentValue excepted), which outlive "
			     "the creator's handle.");
		igt_subtest("open-same-process-same-vas")
			test_open_same_process_same_vas();

		igt_describe("Another process's fence opened on two devices "
			     "here: one mapping at the same VAs, in this "
			     "file's address space, usable by its queues.");
		igt_subtest("open-other-process-same-vas")
			test_open_other_process_same_vas();

		igt_describe("Thousands of another file's shared fences "
			     "opened here, half of them again: distinct VAs, "
			     "and GPU signals through them reach their fences.");
		igt_subtest("open-many-shared")
			test_open_many_shared();

		igt_describe("A process's fences are charged to its memory "
			     "cgroup: 512 shared fences grow it by at least "
			     "their CurrentValue pages.");
		igt_subtest("kernel-memory-charged")
			test_kernel_memory_charged();

		igt_describe("Open of a closed or negative fd fails with "
			     "-EBADF.");
		igt_subtest("open-bad-fd")
			test_open_bad_fd();

		igt_describe("Open of a pipe, eventfd, socket, /dev/null or a "
			     "render node fd fails with -EINVAL.");
		igt_subtest("open-not-fence-fd")
			test_open_not_fence_fd();

		igt_describe("A fence fd of another adapter fails with "
			     "-EINVAL.");
		igt_subtest("open-other-adapter")
			test_open_other_adapter();

		igt_describe("On an adapter without native fences, another "
			     "adapter's fence is -EINVAL unless CROSS_ADAPTER "
			     "(before the device lookup, nothing made); a "
			     "CROSS_ADAPTER one opens as a monitored fence "
			     "over the same value.");
		igt_subtest("open-non-native-adapter")
			test_open_non_native_adapter();

		igt_describe("Open on device 0, destroyed or other-file "
			     "devices fails with -ENOENT.");
		igt_subtest("open-bad-device")
			test_open_bad_device();

		igt_describe("A shared INTRA_GPU fence opens without a CPU "
			     "mapping.");
		igt_subtest("open-intra-gpu")
			test_open_intra_gpu();

		igt_describe("With VRAM full, INTRA_GPU fences keep their "
			     "values in system memory (no CPU mapping, no CPU "
			     "wait or signal, GPU signal and wait through "
			     "both VAs) and optimized DEFAULT fences their "
			     "MonitoredValue, and both work the same.");
		igt_subtest("vram-full")
			test_vram_full();

		igt_describe("A VRAM pool page of fence values is zeroed when "
			     "made: a GPU wait in another client for what "
			     "the freed VRAM held parks.");
		igt_subtest("vram-pool-page-zeroed")
			test_vram_pool_page_zeroed();

		igt_describe("An allocation that finds VRAM full moves the "
			     "fences' VRAM pool pages to system memory and "
			     "takes their room: a CPU waiter's MonitoredValue "
			     "and an INTRA_GPU value survive the move, GPU VAs "
			     "stay valid, a parked queue is released.");
		igt_subtest("vram-demote-live")
			test_vram_demote_live();

		igt_describe("A NO_SIGNAL handle's read-only mapping of an "
			     "INTRA_GPU CurrentValue moves with its VRAM pool "
			     "page: a GPU wait through it sees the value, a "
			     "signal through it still faults.");
		igt_subtest("vram-demote-no-signal")
			test_vram_demote_no_signal();

		igt_describe("Shared fences' values leave VRAM when an "
			     "allocation of another client needs the room: "
			     "every file's mappings follow them, a CPU "
			     "waiter's MonitoredValue and a parked queue "
			     "survive the move.");
		igt_subtest("vram-demote-shared")
			test_vram_demote_shared();

		igt_describe("A VRAM request larger than VRAM (or, CPU-visible, "
			     "than its visible part) fails without moving "
			     "another client's fence values out of VRAM.");
		igt_subtest("vram-demote-impossible")
			test_vram_demote_impossible();

		igt_describe("The CPU mapping reads initial_value, up to "
			     "UINT64_MAX.");
		igt_subtest("mapping-initial-value")
			test_mapping_initial_value();

		igt_describe("The CPU mapping follows every signal.");
		igt_subtest("mapping-follows-signal")
			test_mapping_follows_signal();

		igt_describe("Non-shared fences share pages, each at its own "
			     "64-byte slot.");
		igt_subtest("mapping-packed")
			test_mapping_packed();

		igt_describe("A shared fence has a page of its own at offset "
			     "0.");
		igt_subtest("mapping-shared-own-page")
			test_mapping_shared_own_page();

		igt_describe("mmap with PROT_WRITE fails.");
		igt_subtest("mapping-no-write-mmap")
			test_mapping_no_write_mmap();

		igt_describe("mprotect to PROT_WRITE fails with EACCES.");
		igt_subtest("mapping-no-mprotect-write")
			test_mapping_no_mprotect_write();

		igt_describe("A write through the mapping raises SIGSEGV and "
			     "changes nothing.");
		igt_subtest("mapping-write-faults")
			test_mapping_write_faults();

		igt_describe("Another file cannot mmap this file's "
			     "non-shared fence page.");
		igt_subtest("mapping-other-file")
			test_mapping_other_file();

		igt_describe("INTRA_GPU fences have no CPU mapping but GPU "
			     "addresses.");
		igt_subtest("mapping-intra-gpu")
			test_mapping_intra_gpu();

		igt_describe("GPU VAs are non-zero, 8-byte aligned and "
			     "distinct.");
		igt_subtest("mapping-gpu-va")
			test_mapping_gpu_va();

		igt_fixture {
			nfence_device_destroy(fd, dev);
		}
	}

	igt_fixture {
		nfence_watchdog(0);
		close(dbg);
		close(fd);
	}
}
