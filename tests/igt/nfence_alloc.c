// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Allocations: DRM_IOCTL_NFENCE_ALLOC_CREATE/DESTROY/"
		     "LOCK, placement in system memory and VRAM (visible, "
		     "invisible, demotion), the Lock2 mapping, lifetimes, "
		     "limits and the rejection of every invalid input.");

#define POISON		0xdeadbeefu
#define POISON64	0xdeadbeefcafef00dull
#define WATCHDOG_S	60
#define PAGE		4096ull
#define MIB		(1ull << 20)
#define SYSTEM		NFENCE_SEGMENT_SYSTEM
#define VRAM		NFENCE_SEGMENT_VRAM
#define CPU_VISIBLE	DRM_NFENCE_ALLOC_CPU_VISIBLE
#define ALLOW_DEMOTE	DRM_NFENCE_ALLOC_ALLOW_DEMOTE
#define MAX_SIZE	DRM_NFENCE_MAX_ALLOC_SIZE
#define MAX_ALLOCS	DRM_NFENCE_MAX_ALLOCS_PER_FILE

static int fd = -1;
static int dbg = -1;
/* The debugfs files the subtests read (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_segments", "nfence_clients",
};
static struct drm_nfence_query_adapter adapter;
static uint64_t vram_size, vram_visible;

static void query_segments(void)
{
	nfence_query_segment_sizes(fd, VRAM, &vram_size, &vram_visible);
}

/* Bytes used in segment @id according to debugfs nfence_segments. */
static int64_t used(uint32_t id)
{
	uint64_t v = 0;
	int ret = __nfence_debugfs_segment_used(dbg, id, &v);

	igt_assert_f(ret == 0, "nfence_segments: no \"used\" of segment %u: "
		     "%s\n", id, strerror(-ret));
	return v;
}

static void assert_used(uint32_t id, int64_t base, int64_t delta)
{
	igt_assert_eq_s64(used(id), base + delta);
}

static struct drm_nfence_alloc_create create_args(uint32_t device,
						  uint64_t size,
						  uint32_t segment,
						  uint32_t flags)
{
	struct drm_nfence_alloc_create c = {
		.device = device,
		.flags = flags,
		.size = size,
		.segment_id = segment,
	};

	return c;
}

/*
 * A create that must fail with @err: the struct comes back exactly as it
 * went in (no handle, VA or segment written) and no segment use changes.
 */
static void expect_create_error(int cfd,
				const struct drm_nfence_alloc_create *in,
				int err)
{
	struct drm_nfence_alloc_create c = *in, orig;
	/* Every file these tests open is on adapter 0, as dbg. */
	int64_t sys = used(SYSTEM);
	int64_t vram = used(VRAM);

	c.handle = POISON;
	c.gpu_va = POISON64;
	c.placed_segment_id = POISON;
	orig = c;
	igt_assert_eq(__nfence_alloc_create(cfd, &c), err);
	igt_assert_f(!memcmp(&c, &orig, sizeof(c)),
		     "create struct changed on failure (handle %#x, va %#"
		     PRIx64 ", segment %#x)\n", c.handle, (uint64_t)c.gpu_va,
		     c.placed_segment_id);
	assert_used(SYSTEM, sys, 0);
	assert_used(VRAM, vram, 0);
}

/* The same request without the mistake works. */
static void expect_create_ok(const struct drm_nfence_alloc_create *in)
{
	struct drm_nfence_alloc_create c = *in;

	igt_assert_eq(__nfence_alloc_create(fd, &c), 0);
	nfence_alloc_destroy(fd, c.device, c.handle);
}

static void expect_lock_error(const struct drm_nfence_alloc_lock *in, int err)
{
	struct drm_nfence_alloc_lock l = *in, orig;

	l.mmap_offset = POISON64;
	l.size = POISON64;
	orig = l;
	igt_assert_eq(__nfence_alloc_lock(fd, &l), err);
	igt_assert_f(!memcmp(&l, &orig, sizeof(l)),
		     "lock struct changed on failure (offset %#" PRIx64
		     ", size %#" PRIx64 ")\n", (uint64_t)l.mmap_offset,
		     (uint64_t)l.size);
}

static void expect_destroy_error(const struct drm_nfence_alloc_destroy *in,
				 int err)
{
	struct drm_nfence_alloc_destroy d = *in;

	igt_assert_eq(__nfence_alloc_destroy(fd, &d), err);
	igt_assert_eq_u32(d.device, in->device);
	igt_assert_eq_u32(d.handle, in->handle);
}

/*
 * Run @fn in a child process with a file of its own, so that what it
 * fills (VRAM) is given back when it exits, also when it fails.
 */
static void in_child(void (*fn)(void))
{
	nfence_watchdog(WATCHDOG_S);
	igt_fork(child, 1) {
		fd = nfence_open();
		fn();
	}
	igt_waitchildren();
}

/* ALLOC_CREATE semantics */

static void test_create_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	int64_t base = used(SYSTEM);
	struct drm_nfence_alloc_create c = create_args(dev, PAGE, SYSTEM, 0);

	nfence_watchdog(WATCHDOG_S);
	c.handle = POISON;
	igt_assert_eq(__nfence_alloc_create(fd, &c), 0);
	igt_assert_neq_u32(c.handle, 0);
	igt_assert_neq_u32(c.handle, POISON);
	igt_assert_neq_u64(c.gpu_va, 0);
	igt_assert_eq_u64(c.gpu_va % PAGE, 0);
	/* Documentation/gpu-work.rst: the GPU VA space is [4 GiB, 1 TiB). */
	igt_assert_lte_u64(1ull << 32, c.gpu_va);
	igt_assert_lte_u64(c.gpu_va + PAGE, 1ull << 40);
	igt_assert_eq_u32(c.placed_segment_id, SYSTEM);
	igt_assert_eq_u32(c.pad, 0);
	assert_used(SYSTEM, base, PAGE);

	nfence_alloc_destroy(fd, dev, c.handle);
	assert_used(SYSTEM, base, 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, c.handle),
		      -ENOENT);
	nfence_device_destroy(fd, dev);
}

static void test_create_vram(void)
{
	uint32_t dev = nfence_device_create(fd);
	int64_t base = used(VRAM);
	struct drm_nfence_alloc_create c = create_args(dev, 64 * 1024, VRAM,
						       0);

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(__nfence_alloc_create(fd, &c), 0);
	igt_assert_eq_u32(c.placed_segment_id, VRAM);
	igt_assert_eq_u64(c.gpu_va % PAGE, 0);
	assert_used(VRAM, base, 64 * 1024);
	nfence_alloc_destroy(fd, dev, c.handle);
	assert_used(VRAM, base, 0);
	nfence_device_destroy(fd, dev);
}

static void test_create_vram_cpu_visible(void)
{
	uint32_t dev;
	struct nfence_bo bo;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	dev = nfence_device_create(fd);
	nfence_bo_create(fd, dev, 3 * PAGE, VRAM, CPU_VISIBLE, &bo);
	igt_assert_eq_u32(bo.segment_id, VRAM);
	igt_assert(bo.cpu);
	igt_assert_eq_u64(bo.size, 3 * PAGE);
	for (uint64_t off = 0; off < bo.size; off += 8)
		*nfence_bo_u64(&bo, off) = off ^ POISON64;
	for (uint64_t off = 0; off < bo.size; off += 8)
		igt_assert_eq_u64(*nfence_bo_u64(&bo, off), off ^ POISON64);
	nfence_bo_destroy(&bo);
	nfence_device_destroy(fd, dev);
}

static void test_system_always_visible(void)
{
	uint32_t dev = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	for (int visible = 0; visible < 2; visible++) {
		struct nfence_bo bo;

		nfence_bo_create(fd, dev, PAGE, SYSTEM,
				 visible ? CPU_VISIBLE : 0, &bo);
		igt_assert_eq_u32(bo.segment_id, SYSTEM);
		igt_assert(bo.cpu);
		*nfence_bo_u64(&bo, 8) = 42;
		igt_assert_eq_u64(*nfence_bo_u64(&bo, 8), 42);
		nfence_bo_destroy(&bo);
	}
	nfence_device_destroy(fd, dev);
}

static void test_size_rounded(void)
{
	const uint64_t sizes[] = { 1, 8, PAGE - 1, PAGE, PAGE + 1,
				   16 * PAGE + 17 };
	uint32_t dev = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint64_t rounded = (sizes[i] + PAGE - 1) & ~(PAGE - 1);
		int64_t base = used(SYSTEM);
		uint64_t lock_size;
		uint32_t h;

		h = nfence_alloc_create(fd, dev, sizes[i], SYSTEM, 0, NULL);
		nfence_alloc_lock(fd, dev, h, &lock_size);
		igt_assert_eq_u64(lock_size, rounded);
		assert_used(SYSTEM, base, rounded);
		nfence_alloc_destroy(fd, dev, h);
		assert_used(SYSTEM, base, 0);
	}
	nfence_device_destroy(fd, dev);
}

static void test_max_size(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_alloc_create c = create_args(dev, MAX_SIZE, SYSTEM,
						       0);
	int ret;

	nfence_watchdog(WATCHDOG_S);
	/* The largest size is valid: it fits, or the segment is full. */
	ret = __nfence_alloc_create(fd, &c);
	igt_assert_f(ret == 0 || ret == -ENOSPC,
		     "%llu bytes: %s\n", MAX_SIZE, strerror(-ret));
	if (!ret)
		nfence_alloc_destroy(fd, dev, c.handle);
	nfence_device_destroy(fd, dev);
}

static void test_memory_zeroed(void)
{
	uint32_t dev = nfence_device_create(fd);

	nfence_watchdog(WATCHDOG_S);
	/* Dirty memory, free it, allocate again: whatever comes is zero. */
	for (int round = 0; round < 3; round++) {
		struct nfence_bo bo;

		nfence_bo_create(fd, dev, 64 * PAGE, SYSTEM, 0, &bo);
		for (uint64_t off = 0; off < bo.size; off += 8)
			igt_assert_f(*nfence_bo_u64(&bo, off) == 0,
				     "round %d: byte %" PRIu64 " of a new "
				     "allocation is not zero\n", round, off);
		memset(bo.cpu, 0xa5, bo.size);
		nfence_bo_destroy(&bo);
	}
	if (vram_visible) {
		for (int round = 0; round < 2; round++) {
			struct nfence_bo bo;

			nfence_bo_create(fd, dev, 16 * PAGE, VRAM,
					 CPU_VISIBLE, &bo);
			for (uint64_t off = 0; off < bo.size; off += 8)
				igt_assert_eq_u64(*nfence_bo_u64(&bo, off), 0);
			memset(bo.cpu, 0x5a, bo.size);
			nfence_bo_destroy(&bo);
		}
	}
	nfence_device_destroy(fd, dev);
}

struct range {
	uint64_t start, end;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void test_gpu_va_distinct(void)
{
	const int n = 64;
	uint32_t dev = nfence_device_create(fd), dev2 = nfence_device_create(fd);
	struct range r[64];
	uint32_t h[64];

	nfence_watchdog(WATCHDOG_S);
	/* Both devices of the file share its GPU address space. */
	for (int i = 0; i < n; i++) {
		uint64_t size = PAGE * (1 + i % 5);
		uint32_t d = i % 2 ? dev2 : dev;

		h[i] = nfence_alloc_create(fd, d, size,
					   i % 3 == 2 ? VRAM : SYSTEM, 0,
					   &r[i].start);
		igt_assert_eq_u64(r[i].start % PAGE, 0);
		r[i].end = r[i].start + size;
	}
	qsort(r, n, sizeof(r[0]), cmp_range);
	for (int i = 1; i < n; i++)
		igt_assert_f(r[i].start >= r[i - 1].end,
			     "[%#" PRIx64 ", %#" PRIx64 ") overlaps [%#"
			     PRIx64 ", %#" PRIx64 ")\n", r[i].start, r[i].end,
			     r[i - 1].start, r[i - 1].end);
	for (int i = 0; i < n; i++)
		nfence_alloc_destroy(fd, i % 2 ? dev2 : dev, h[i]);
	nfence_device_destroy(fd, dev);
	nfence_device_destroy(fd, dev2);
}

static void test_handles_not_reused(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t h[32];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 32; i++) {
		h[i] = nfence_alloc_create(fd, dev, PAGE, SYSTEM, 0, NULL);
		igt_assert_neq_u32(h[i], 0);
		nfence_alloc_destroy(fd, dev, h[i]);
		for (int j = 0; j < i; j++)
			igt_assert_f(h[j] != h[i], "handle %u handed out "
				     "twice\n", h[i]);
	}
	nfence_device_destroy(fd, dev);
}

static void test_map_twice(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t s1, s2;
	volatile uint64_t *a, *b;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_alloc_create(fd, dev, 2 * PAGE, SYSTEM, 0, NULL);
	a = nfence_alloc_map(fd, dev, h, &s1);
	b = nfence_alloc_map(fd, dev, h, &s2);
	igt_assert_eq_u64(s1, s2);
	a[0] = 1;
	b[PAGE / 8] = 2;
	igt_assert_eq_u64(b[0], 1);
	igt_assert_eq_u64(a[PAGE / 8], 2);
	munmap((void *)a, s1);
	igt_assert_eq_u64(b[0], 1);
	munmap((void *)b, s2);
	nfence_alloc_destroy(fd, dev, h);
	nfence_device_destroy(fd, dev);
}

/* Lock2 mappings are shared: a private (copy-on-write) one is refused. */
static void test_map_private(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset;
	uint32_t h;
	void *p;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_alloc_create(fd, dev, PAGE, SYSTEM, 0, NULL);
	offset = nfence_alloc_lock(fd, dev, h, NULL);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EINVAL);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EINVAL);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
	igt_assert(p != MAP_FAILED);
	munmap(p, PAGE);
	nfence_alloc_destroy(fd, dev, h);
	nfence_device_destroy(fd, dev);
}

static void test_destroyed_while_mapped(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_bo bo;

	nfence_watchdog(WATCHDOG_S);
	nfence_bo_create(fd, dev, 4 * PAGE, SYSTEM, 0, &bo);
	for (uint64_t off = 0; off < bo.size; off += 8)
		*nfence_bo_u64(&bo, off) = off + 1;

	/* Destroy: the handle is gone, the CPU mapping keeps the memory. */
	nfence_alloc_destroy(fd, dev, bo.handle);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, bo.handle),
		      -ENOENT);
	for (uint64_t off = 0; off < bo.size; off += 8)
		igt_assert_eq_u64(*nfence_bo_u64(&bo, off), off + 1);
	for (uint64_t off = 0; off < bo.size; off += 8)
		*nfence_bo_u64(&bo, off) = ~off;
	for (uint64_t off = 0; off < bo.size; off += 8)
		igt_assert_eq_u64(*nfence_bo_u64(&bo, off), ~off);

	/* Also after the device and a new allocation reusing memory. */
	nfence_device_destroy(fd, dev);
	dev = nfence_device_create(fd);
	{
		struct nfence_bo other;

		nfence_bo_create(fd, dev, 4 * PAGE, SYSTEM, 0, &other);
		memset(other.cpu, 0x77, other.size);
		for (uint64_t off = 0; off < bo.size; off += 8)
			igt_assert_eq_u64(*nfence_bo_u64(&bo, off), ~off);
		nfence_bo_destroy(&other);
	}
	bo.handle = 0;
	nfence_bo_unmap(&bo);
	nfence_device_destroy(fd, dev);
}

static void test_device_destroy_frees(void)
{
	int64_t sys = used(SYSTEM), vram = used(VRAM);
	uint32_t dev = nfence_device_create(fd);
	uint32_t h[8];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 8; i++)
		h[i] = nfence_alloc_create(fd, dev, PAGE * (i + 1),
					   i % 2 ? VRAM : SYSTEM, 0, NULL);
	igt_assert_lt_s64(sys, used(SYSTEM));
	igt_assert_lt_s64(vram, used(VRAM));
	nfence_device_destroy(fd, dev);
	assert_used(SYSTEM, sys, 0);
	assert_used(VRAM, vram, 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, h[0]), -ENOENT);
}

static void test_close_frees(void)
{
	int64_t sys = used(SYSTEM), vram = used(VRAM);
	int fd2 = nfence_open();
	uint32_t dev = nfence_device_create(fd2);
	void *p;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 8; i++)
		nfence_alloc_create(fd2, dev, 8 * PAGE, i % 2 ? VRAM : SYSTEM,
				    0, NULL);
	/* One still mapped when the file is closed. */
	p = nfence_alloc_map(fd2, dev,
			     nfence_alloc_create(fd2, dev, PAGE, SYSTEM, 0,
						 NULL), NULL);
	close(fd2);
	munmap(p, PAGE);
	assert_used(VRAM, vram, 0);
	assert_used(SYSTEM, sys, 0);
}

/*
 * Fill @segment (with @flags) until -ENOSPC with ever smaller pieces; the
 * handles go to @h (room for @max), their number is returned.
 */
static int fill(uint32_t dev, uint32_t segment, uint32_t flags, uint32_t *h,
		int max)
{
	const uint64_t chunks[] = { 4 * MIB, 256 * 1024, PAGE };
	int n = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(chunks); i++) {
		for (;;) {
			struct drm_nfence_alloc_create c =
				create_args(dev, chunks[i], segment, flags);
			int ret = __nfence_alloc_create(fd, &c);

			if (ret == -ENOSPC)
				break;
			igt_assert_eq(ret, 0);
			igt_assert_eq_u32(c.placed_segment_id, segment);
			igt_assert_lt(n, max);
			h[n++] = c.handle;
		}
	}
	return n;
}

static void __test_vram_full_demote(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_alloc_create c;
	uint32_t h[512];
	struct nfence_bo bo;
	int n;

	nfence_watchdog(WATCHDOG_S);
	n = fill(dev, VRAM, 0, h, ARRAY_SIZE(h));
	igt_assert_lt(0, n);

	/* Full: a page fails without ALLOW_DEMOTE ... */
	c = create_args(dev, PAGE, VRAM, 0);
	expect_create_error(fd, &c, -ENOSPC);
	/* ... and lands in system memory with it. */
	nfence_bo_create(fd, dev, 2 * PAGE, VRAM, ALLOW_DEMOTE, &bo);
	igt_assert_eq_u32(bo.segment_id, SYSTEM);
	nfence_bo_destroy(&bo);
	/* With CPU_VISIBLE too, and then it is mappable there. */
	if (vram_visible) {
		nfence_bo_create(fd, dev, 2 * PAGE, VRAM,
				 ALLOW_DEMOTE | CPU_VISIBLE, &bo);
		igt_assert_eq_u32(bo.segment_id, SYSTEM);
		igt_assert(bo.cpu);
		*nfence_bo_u64(&bo, 0) = 5;
		igt_assert_eq_u64(*nfence_bo_u64(&bo, 0), 5);
		nfence_bo_destroy(&bo);
	}

	/* Room again: VRAM it is. */
	nfence_alloc_destroy(fd, dev, h[0]);
	c = create_args(dev, PAGE, VRAM, ALLOW_DEMOTE);
	igt_assert_eq(__nfence_alloc_create(fd, &c), 0);
	igt_assert_eq_u32(c.placed_segment_id, VRAM);
	nfence_device_destroy(fd, dev);
}

/*
 * Allocate @size pieces (then pages) of @segment on @cfd until -ENOSPC; the
 * bytes taken. Handles go nowhere: closing @cfd frees them.
 */
static uint64_t fill_client(int cfd, uint32_t dev, uint32_t segment,
			    uint64_t size)
{
	uint64_t total = 0;

	for (uint64_t piece = size; piece >= PAGE; piece = piece == PAGE ?
	     0 : PAGE) {
		for (;;) {
			struct drm_nfence_alloc_create c =
				create_args(dev, piece, segment, 0);
			int ret = __nfence_alloc_create(cfd, &c);

			if (ret == -ENOSPC)
				break;
			igt_assert_eq(ret, 0);
			igt_assert_eq_u32(c.placed_segment_id, segment);
			total += piece;
		}
	}
	return total;
}

/*
 * Per-client quotas (module parameters client_vram_mb, client_sysmem_mb):
 * one file fills its quota of each segment and gets -ENOSPC (a VRAM
 * request that allows demotion goes to system memory instead) while the
 * segments still have room, which a second file gets. Destroying an
 * allocation gives its bytes back, but only once its memory is freed: a
 * CPU mapping keeps it charged.
 */
static void test_client_quota(void)
{
	uint64_t vram_quota, sys_quota, taken;
	struct drm_nfence_alloc_create c;
	struct nfence_bo bo, demoted;
	uint32_t deva, devb;
	int fda, fdb;

	igt_require_f(nfence_param_u64("client_vram_mb", &vram_quota) &&
		      nfence_param_u64("client_sysmem_mb", &sys_quota) &&
		      vram_quota && sys_quota,
		      "needs per-client quotas (client_vram_mb, "
		      "client_sysmem_mb)\n");
	vram_quota *= MIB;
	sys_quota *= MIB;
	igt_require_f(vram_quota + 4 * MIB <= vram_size,
		      "needs VRAM beyond the quota\n");
	nfence_watchdog(WATCHDOG_S);
	fda = nfence_open();
	fdb = nfence_open();
	deva = nfence_device_create(fda);
	devb = nfence_device_create(fdb);

	/* A mapped allocation, destroyed below while still mapped. */
	nfence_bo_create(fda, deva, MIB, SYSTEM, CPU_VISIBLE, &bo);

	/* A takes exactly its quota of each segment, not the segment. */
	taken = fill_client(fda, deva, VRAM, MIB);
	igt_assert_eq_u64(taken, vram_quota);
	c = create_args(deva, PAGE, VRAM, ALLOW_DEMOTE);
	igt_assert_eq(__nfence_alloc_create(fda, &c), 0);
	igt_assert_eq_u32(c.placed_segment_id, SYSTEM);
	taken = fill_client(fda, deva, SYSTEM, MIB);
	igt_assert_eq_u64(taken + MIB + PAGE, sys_quota);
	c = create_args(deva, PAGE, SYSTEM, 0);
	expect_create_error(fda, &c, -ENOSPC);

	/* B is not held back by A. */
	nfence_bo_create(fdb, devb, 4 * MIB, VRAM, 0, &demoted);
	igt_assert_eq_u32(demoted.segment_id, VRAM);
	nfence_bo_destroy(&demoted);
	nfence_bo_create(fdb, devb, 4 * MIB, SYSTEM, 0, &demoted);
	nfence_bo_destroy(&demoted);

	/* Destroyed but mapped: still A's, until unmapped. */
	nfence_alloc_destroy(fda, deva, bo.handle);
	expect_create_error(fda, &c, -ENOSPC);
	igt_assert_eq(munmap(bo.cpu, bo.size), 0);
	c = create_args(deva, MIB, SYSTEM, 0);
	igt_assert_eq(__nfence_alloc_create(fda, &c), 0);
	c = create_args(deva, PAGE, SYSTEM, 0);
	expect_create_error(fda, &c, -ENOSPC);

	/* Closing A gives all of it back. */
	close(fda);
	igt_assert_eq_u64(fill_client(fdb, devb, VRAM, MIB), vram_quota);
	close(fdb);
}

/*
 * This process's lines of debugfs nfence_clients ("pid P comm C devices D
 * fences F allocs A sysmem S vram V") with @allocs allocations, @sysmem
 * bytes of system memory and @vram bytes of VRAM; all of them shown.
 */
static int client_lines(uint64_t allocs, uint64_t sysmem, uint64_t vram)
{
	char buf[16384], *line, *save;
	int n = 0, len;

	len = __nfence_debugfs_read(dbg, "nfence_clients", buf, sizeof(buf));
	igt_assert_f(len >= 0, "nfence_clients: %s\n", strerror(-len));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, s, v;
		unsigned int d, f;
		char comm[32];
		int pid;

		igt_assert_f(sscanf(line, "pid %d comm %31s devices %u fences "
				    "%u allocs %llu sysmem %llu vram %llu",
				    &pid, comm, &d, &f, &a, &s, &v) == 7,
			     "nfence_clients: bad line \"%s\"\n", line);
		if (pid != getpid())
			continue;
		igt_info("nfence_clients: %s\n", line);
		n += a == allocs && s == sysmem && v == vram;
	}
	return n;
}

/*
 * Memory counts until it is freed, even after its file is closed, and
 * debugfs nfence_clients shows each file's bytes (Documentation/
 * gpu-work.rst, "Who pays"). File A holds two mapped system-memory
 * allocations, one destroyed while mapped, and a VRAM one; file B holds
 * one of each. Each file's nfence_clients line has its bytes of each
 * segment, the destroyed allocation's included. Closing A's fd releases
 * nothing while A has mappings (each one holds the open file): its line
 * and nfence_segments keep all of its bytes, and each munmap() gives back
 * that allocation's; the last one releases the file, whose line goes and
 * whose VRAM is freed. B's line never changes.
 */
static void test_close_mapped_counts(void)
{
	const uint64_t b_sys = 512 * 1024, b_vram = 256 * 1024;
	struct nfence_bo a1, a2, av, b1, bv;
	int64_t sys, vram;
	uint32_t deva, devb;
	int fda, fdb;

	nfence_watchdog(WATCHDOG_S);
	sys = used(SYSTEM);
	vram = used(VRAM);
	fda = nfence_open();
	fdb = nfence_open();
	deva = nfence_device_create(fda);
	devb = nfence_device_create(fdb);
	nfence_bo_create(fda, deva, MIB, SYSTEM, 0, &a1);
	nfence_bo_create(fda, deva, 2 * MIB, SYSTEM, 0, &a2);
	nfence_bo_create(fda, deva, 3 * MIB, VRAM, 0, &av);
	nfence_bo_create(fdb, devb, b_sys, SYSTEM, 0, &b1);
	nfence_bo_create(fdb, devb, b_vram, VRAM, 0, &bv);
	igt_assert(a1.cpu && a2.cpu && b1.cpu);
	igt_assert_eq_u32(av.segment_id, VRAM);
	igt_assert_eq_u32(bv.segment_id, VRAM);
	assert_used(SYSTEM, sys, 3 * MIB + b_sys);
	assert_used(VRAM, vram, 3 * MIB + b_vram);
	igt_assert_eq(client_lines(3, 3 * MIB, 3 * MIB), 1);
	igt_assert_eq(client_lines(2, b_sys, b_vram), 1);

	/* Destroyed but mapped: its handle is gone, not its bytes. */
	nfence_alloc_destroy(fda, deva, a1.handle);
	igt_assert_eq(client_lines(2, 3 * MIB, 3 * MIB), 1);
	assert_used(SYSTEM, sys, 3 * MIB + b_sys);

	/* A's fd closed: the mappings hold the file, nothing is freed. */
	close(fda);
	igt_assert_eq(client_lines(2, 3 * MIB, 3 * MIB), 1);
	assert_used(SYSTEM, sys, 3 * MIB + b_sys);
	assert_used(VRAM, vram, 3 * MIB + b_vram);

	/* Each munmap() frees its allocation's memory. */
	nfence_bo_unmap(&a1);
	igt_assert_eq(client_lines(2, 2 * MIB, 3 * MIB), 1);
	assert_used(SYSTEM, sys, 2 * MIB + b_sys);
	assert_used(VRAM, vram, 3 * MIB + b_vram);

	/* The last one releases the file: its line and its VRAM go. */
	nfence_bo_unmap(&a2);
	igt_assert_eq(client_lines(2, 2 * MIB, 3 * MIB), 0);
	igt_assert_eq(client_lines(2, 0, 3 * MIB), 0);
	assert_used(SYSTEM, sys, b_sys);
	assert_used(VRAM, vram, b_vram);
	igt_assert_eq(client_lines(2, b_sys, b_vram), 1);

	nfence_bo_unmap(&b1);
	close(fdb);
	assert_used(SYSTEM, sys, 0);
	assert_used(VRAM, vram, 0);
}

/*
 * Fence values placed in VRAM count against the quota of the file that
 * made the fence (Documentation/fences.rst, "Storage"), and go back when
 * the fences are destroyed, until an allocation of that file needs the
 * room: its INTRA_GPU fences' VRAM pool
 * pages then move to system memory ("Demoting fence storage") and its
 * allocations get its whole VRAM quota. At the quota an INTRA_GPU fence
 * and an optimized DEFAULT fence are still made, their values in system
 * memory, charging no VRAM. A second file still gets its whole quota of
 * VRAM, and the moved fences hold none of A's any more.
 */
#define QUOTA_FENCES	2048

static void test_client_quota_fences(void)
{
	struct drm_nfence_fence_create c;
	uint64_t vram_quota, per_fence, taken;
	static uint32_t h[QUOTA_FENCES];
	uint32_t deva, devb, hd, hi;
	int fda, fdb;
	int64_t base;

	igt_require_f(nfence_param_u64("client_vram_mb", &vram_quota) &&
		      vram_quota, "needs a per-client VRAM quota "
		      "(client_vram_mb)\n");
	vram_quota *= MIB;
	igt_require_f(2 * vram_quota <= vram_size,
		      "needs VRAM for two quotas\n");
	nfence_watchdog(WATCHDOG_S);
	fda = nfence_open();
	fdb = nfence_open();
	deva = nfence_device_create(fda);
	devb = nfence_device_create(fdb);

	/* INTRA_GPU fences keep both values in VRAM. */
	base = used(VRAM);
	for (unsigned int i = 0; i < QUOTA_FENCES; i++)
		h[i] = nfence_fence_create(fda, deva,
					   DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0,
					   1, NULL);
	per_fence = (used(VRAM) - base) / QUOTA_FENCES;
	igt_assert_lt_u64(0, per_fence);
	assert_used(VRAM, base, QUOTA_FENCES * per_fence);

	/* Destroyed while in VRAM, they give their pages back; made again. */
	for (unsigned int i = 0; i < QUOTA_FENCES; i++)
		nfence_fence_destroy(fda, h[i]);
	assert_used(VRAM, base, 0);
	for (unsigned int i = 0; i < QUOTA_FENCES; i++)
		h[i] = nfence_fence_create(fda, deva,
					   DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0,
					   1, NULL);
	assert_used(VRAM, base, QUOTA_FENCES * per_fence);

	/*
	 * They are A's, until its allocations need the room: those get the
	 * whole quota, the fences' pages moving out of VRAM.
	 */
	taken = fill_client(fda, deva, VRAM, MIB);
	igt_assert_f(taken == vram_quota,
		     "allocations of %" PRIu64 " bytes beside %u INTRA_GPU "
		     "fences of %" PRIu64 " bytes each, quota %" PRIu64 "\n",
		     taken, QUOTA_FENCES, per_fence, vram_quota);
	assert_used(VRAM, base, vram_quota);

	/* At its quota: an INTRA_GPU fence is made, in system memory. */
	c = (struct drm_nfence_fence_create) {
		.device = deva,
		.type = DRM_NFENCE_FENCE_TYPE_INTRA_GPU,
		.initial_value = 1,
	};
	base = used(VRAM);
	igt_assert_eq(__nfence_fence_create(fda, &c), 0);
	hi = c.handle;
	igt_assert_neq_u32(hi, 0);
	igt_assert_eq_u64(c.mapping.cpu_mmap_offset, 0);
	assert_used(VRAM, base, 0);
	/* A DEFAULT fence too, its MonitoredValue in system memory. */
	hd = nfence_fence_create(fda, deva, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				 1, NULL);
	assert_used(VRAM, base, 0);

	/* B is not held back by A. */
	igt_assert_eq_u64(fill_client(fdb, devb, VRAM, MIB), vram_quota);

	/* The moved fences held no VRAM: destroying them gives A none. */
	for (unsigned int i = 0; i < QUOTA_FENCES; i++)
		nfence_fence_destroy(fda, h[i]);
	igt_assert_eq_u64(fill_client(fda, deva, VRAM, PAGE), 0);
	nfence_fence_destroy(fda, hd);
	nfence_fence_destroy(fda, hi);
	close(fda);
	close(fdb);
}

/*
 * Kernel memory a process makes the driver allocate is charged to its
 * memory cgroup (Documentation/gpu-work.rst, "Who pays"), kind by kind: a
 * child in a cgroup of its own makes what the objects need, then count
 * objects of the kind, and memory.current must grow by at least count x
 * a lower bound of what each takes, less nfence_cgroup_lag(). The bound
 * is the sum of the structures the driver allocates for one object with
 * GFP_KERNEL_ACCOUNT (sizes as pahole prints them for nfence.ko built for
 * 6.1 and 6.12, the smaller where they differ): kmalloc() rounds a size up
 * and charges at least it, a page is charged whole. What else an object
 * takes (handle table nodes, a queue's progress fence) comes on top, not
 * counted. The counts stay within the per-file limits of
 * include/uapi/drm/nfence_drm.h (several files where one file's would not
 * do) and make the bound several times the lag, so that losing the charge
 * of the kind's largest allocation fails the subtest; a small structure
 * beside bigger ones (a queue's beside its log buffers, a doorbell's
 * beside its pages) is within the rounding of the others, and its loss
 * alone would not show. The fences' own charge is
 * nfence_fence@kernel-memory-charged. Not charged to the cgroup, so not
 * asserted: VRAM itself (a range of the segment's preallocated backing,
 * counted by the per-client quota instead), and the GPU VA nodes and GEM
 * mmap offsets, which drm_mm keeps inside the structures above.
 */
#define CHARGE_FILES		64
#define CHARGE_QUEUES		256
#define CHARGE_DOORBELLS	512
#define CHARGE_CONTEXTS		4
#define CHARGE_FENCES		DRM_NFENCE_MAX_WAIT_FENCES
#define CHARGE_SYSMEM_ALLOCS	64
#define CHARGE_SYSMEM_SIZE	(64 * 1024)
#define CHARGE_VRAM_ALLOCS	2048
#define CHARGE_SUBMISSIONS	128	/* per queue, below DRM_NFENCE_MAX_QUEUED */
#define CHARGE_SUBMIT_QUEUES	4
#define CHARGE_WAITS		512

/* What the child makes before the first reading, and the objects' count. */
static struct charge {
	unsigned int files;
	int fds[CHARGE_FILES];
	uint32_t devs[CHARGE_FILES];
	uint32_t contexts[CHARGE_CONTEXTS];
	uint32_t queues[CHARGE_DOORBELLS];
	uint32_t rings[CHARGE_DOORBELLS];
	uint32_t controls[CHARGE_DOORBELLS];
	uint32_t fences[CHARGE_FENCES];
	uint64_t values[CHARGE_FENCES];
	int efd;
} charge_state;

/* Exit codes of the child (nfence_cgroup_charge()). */
enum {
	CHARGE_EXIT_OPEN = 20,
	CHARGE_EXIT_SETUP,
	CHARGE_EXIT_CREATE,
};

/* @files open files of adapter 0 with a device each. */
static int charge_open(struct charge *ch, unsigned int files)
{
	ch->files = files;
	for (unsigned int i = 0; i < files; i++) {
		struct drm_nfence_device_create dc = { 0 };

		ch->fds[i] = __nfence_open_adapter(0);
		if (ch->fds[i] < 0 ||
		    __nfence_device_create(ch->fds[i], &dc))
			return CHARGE_EXIT_OPEN;
		ch->devs[i] = dc.handle;
	}
	return 0;
}

static int charge_contexts_on(struct charge *ch, int f, uint32_t dev)
{
	for (unsigned int i = 0; i < CHARGE_CONTEXTS; i++) {
		struct drm_nfence_context_create c = { .device = dev };

		if (__nfence_context_create(f, &c))
			return CHARGE_EXIT_SETUP;
		ch->contexts[i] = c.handle;
	}
	return 0;
}

/* @n queues with @flags over the contexts of file 0. */
static int charge_queues_on(struct charge *ch, unsigned int n,
			    uint32_t flags)
{
	for (unsigned int i = 0; i < n; i++) {
		struct drm_nfence_hwqueue_create c = {
			.device = ch->devs[0],
			.context = ch->contexts[i % CHARGE_CONTEXTS],
			.flags = flags,
		};

		if (__nfence_hwqueue_create(ch->fds[0], &c))
			return CHARGE_EXIT_SETUP;
		ch->queues[i] = c.handle;
	}
	return 0;
}

/* CHARGE_FENCES unsignaled fences of file 0, to wait for value 1. */
static int charge_fences_on(struct charge *ch)
{
	for (unsigned int i = 0; i < CHARGE_FENCES; i++) {
		struct drm_nfence_fence_create c = {
			.device = ch->devs[0],
			.type = DRM_NFENCE_FENCE_TYPE_DEFAULT,
		};

		if (__nfence_fence_create(ch->fds[0], &c))
			return CHARGE_EXIT_SETUP;
		ch->fences[i] = c.handle;
		ch->values[i] = 1;
	}
	return 0;
}

/*
 * Devices: struct nfence_device (72 bytes), kzalloc() in
 * nfence_device_create_ioctl(); DRM_NFENCE_MAX_DEVICES_PER_FILE per
 * file, in CHARGE_FILES / 4 files.
 */
static int charge_devices_setup(void *data)
{
	struct charge *ch = data;

	return charge_open(ch, CHARGE_FILES / 4);
}

static int charge_devices(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < ch->files; i++) {
		/* Each file has one device already. */
		for (unsigned int j = 1; j < DRM_NFENCE_MAX_DEVICES_PER_FILE;
		     j++) {
			struct drm_nfence_device_create dc = { 0 };

			if (__nfence_device_create(ch->fds[i], &dc))
				return CHARGE_EXIT_CREATE;
		}
	}
	return 0;
}

/*
 * Contexts: struct nfence_context (96 bytes), kzalloc() in
 * nfence_context_new(); DRM_NFENCE_MAX_CONTEXTS_PER_FILE in each of
 * CHARGE_FILES files.
 */
static int charge_contexts_setup(void *data)
{
	struct charge *ch = data;

	return charge_open(ch, CHARGE_FILES);
}

static int charge_contexts(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < ch->files; i++) {
		for (unsigned int j = 0; j < DRM_NFENCE_MAX_CONTEXTS_PER_FILE;
		     j++) {
			struct drm_nfence_context_create c = {
				.device = ch->devs[i],
			};

			if (__nfence_context_create(ch->fds[i], &c))
				return CHARGE_EXIT_CREATE;
		}
	}
	return 0;
}

/*
 * Hardware queues: struct nfence_hwqueue (280 bytes, kzalloc() in
 * nfence_hwqueue_alloc()) and, on an adapter with native fences, its two
 * native fence log buffers (nfence_log_buffer_alloc(): at least the page
 * of DRM_NFENCE_LOG_ENTRIES entries each); the progress fence's own
 * structures come on top, not counted. CHARGE_QUEUES queues over
 * CHARGE_CONTEXTS contexts of one file.
 */
static int charge_hwqueues_setup(void *data)
{
	struct charge *ch = data;
	int ret = charge_open(ch, 1);

	return ret ?: charge_contexts_on(ch, ch->fds[0], ch->devs[0]);
}

static int charge_hwqueues(void *data)
{
	struct charge *ch = data;

	return charge_queues_on(ch, CHARGE_QUEUES, 0) ? CHARGE_EXIT_CREATE : 0;
}

/*
 * System-memory allocations: struct nfence_alloc (784 bytes, kzalloc() in
 * nfence_alloc_create_ioctl()) and the memory itself (__vmalloc() in
 * nfence_alloc_place()).
 */
static int charge_sysmem_setup(void *data)
{
	struct charge *ch = data;

	return charge_open(ch, 1);
}

static int charge_sysmem(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < CHARGE_SYSMEM_ALLOCS; i++) {
		struct drm_nfence_alloc_create c =
			create_args(ch->devs[0], CHARGE_SYSMEM_SIZE, SYSTEM,
				    0);

		if (__nfence_alloc_create(ch->fds[0], &c))
			return CHARGE_EXIT_CREATE;
	}
	return 0;
}

/*
 * VRAM allocations: struct nfence_alloc (784 bytes) only; the VRAM is a
 * range of the segment's preallocated backing, not charged to anyone's
 * cgroup (the per-client quota counts it).
 */
static int charge_vram(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < CHARGE_VRAM_ALLOCS; i++) {
		struct drm_nfence_alloc_create c =
			create_args(ch->devs[0], PAGE, VRAM, 0);

		if (__nfence_alloc_create(ch->fds[0], &c))
			return CHARGE_EXIT_CREATE;
	}
	return 0;
}

/*
 * Pending kernel-mode submissions: a SUBMIT_WAIT for CHARGE_FENCES fences
 * that nobody signals is a struct nfence_submission (104 bytes) with a
 * struct nfence_sub_fence (72 bytes) per fence, one kzalloc() in
 * nfence_submit_sync(), kept while it is pending; CHARGE_SUBMISSIONS
 * on each of CHARGE_SUBMIT_QUEUES queues. (A SUBMIT's commands are copied
 * only to be checked, and freed before it returns: its pending memory is
 * the 104-byte submission alone.)
 */
static int charge_submissions_setup(void *data)
{
	struct charge *ch = data;
	int ret = charge_open(ch, 1);

	ret = ret ?: charge_contexts_on(ch, ch->fds[0], ch->devs[0]);
	ret = ret ?: charge_queues_on(ch, CHARGE_SUBMIT_QUEUES, 0);
	return ret ?: charge_fences_on(ch);
}

static int charge_submissions(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < CHARGE_SUBMISSIONS; i++) {
		for (unsigned int q = 0; q < CHARGE_SUBMIT_QUEUES; q++) {
			struct drm_nfence_submit_sync s = {
				.device = ch->devs[0],
				.hwqueue = ch->queues[q],
				.handles = (uintptr_t)(ch->fences),
				.values = (uintptr_t)(ch->values),
				.count = CHARGE_FENCES,
			};

			if (__nfence_submit_wait(ch->fds[0], &s))
				return CHARGE_EXIT_CREATE;
		}
	}
	return 0;
}

/*
 * Asynchronous waits: struct nfence_wait (96 bytes) with a struct
 * nfence_wait_entry (64 bytes) per fence, one kzalloc() in
 * nfence_wait_prepare(), kept while pending; CHARGE_WAITS of them for
 * CHARGE_FENCES fences nobody signals.
 */
static int charge_waits_setup(void *data)
{
	struct charge *ch = data;
	int ret = charge_open(ch, 1);

	ret = ret ?: charge_fences_on(ch);
	ch->efd = eventfd(0, EFD_CLOEXEC);
	return ret ?: (ch->efd < 0 ? CHARGE_EXIT_SETUP : 0);
}

static int charge_waits(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < CHARGE_WAITS; i++) {
		struct drm_nfence_fence_wait w = {
			.device = ch->devs[0],
			.count = CHARGE_FENCES,
			.handles = (uintptr_t)(ch->fences),
			.values = (uintptr_t)(ch->values),
			.flags = DRM_NFENCE_WAIT_ASYNC,
			.eventfd = ch->efd,
		};

		if (__nfence_fence_wait(ch->fds[0], &w))
			return CHARGE_EXIT_CREATE;
	}
	return 0;
}

/*
 * Doorbells: struct nfence_doorbell (568 bytes, kzalloc() in
 * nfence_doorbell_create()), its dummy page (nfence_doorbell_init()) and
 * its status and last-queued pages, each a struct nfence_doorbell_page
 * (352 bytes) and a page (nfence_doorbell_page_create()). One per
 * user-mode queue, CHARGE_DOORBELLS of them (more than the other kinds:
 * the three pages outweigh the lag with room to spare, so that the loss
 * of one page's charge shows), each queue with a one-page ring and ring
 * control.
 */
static int charge_doorbells_setup(void *data)
{
	struct charge *ch = data;
	int ret = charge_open(ch, 1);

	ret = ret ?: charge_contexts_on(ch, ch->fds[0], ch->devs[0]);
	ret = ret ?: charge_queues_on(ch, CHARGE_DOORBELLS,
				      DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION);
	for (unsigned int i = 0; !ret && i < CHARGE_DOORBELLS; i++) {
		struct drm_nfence_alloc_create r =
			create_args(ch->devs[0], PAGE, SYSTEM, 0);
		struct drm_nfence_alloc_create c = r;

		if (__nfence_alloc_create(ch->fds[0], &r) ||
		    __nfence_alloc_create(ch->fds[0], &c))
			return CHARGE_EXIT_SETUP;
		ch->rings[i] = r.handle;
		ch->controls[i] = c.handle;
	}
	return ret;
}

static int charge_doorbells(void *data)
{
	struct charge *ch = data;

	for (unsigned int i = 0; i < CHARGE_DOORBELLS; i++) {
		struct drm_nfence_doorbell_create c = {
			.device = ch->devs[0],
			.hwqueue = ch->queues[i],
			.ring_alloc = ch->rings[i],
			.ring_control_alloc = ch->controls[i],
		};

		if (__nfence_doorbell_create(ch->fds[0], &c))
			return CHARGE_EXIT_CREATE;
	}
	return 0;
}

static const struct charge_kind {
	const char *name;
	const char *what;
	int (*setup)(void *data);
	int (*charge)(void *data);
} charge_kinds[] = {
	{ "devices", "devices", charge_devices_setup, charge_devices },
	{ "contexts", "contexts", charge_contexts_setup, charge_contexts },
	{ "hwqueues", "hardware queues", charge_hwqueues_setup,
	  charge_hwqueues },
	{ "sysmem-allocs", "system-memory allocations", charge_sysmem_setup,
	  charge_sysmem },
	{ "vram-allocs", "VRAM allocations", charge_sysmem_setup,
	  charge_vram },
	{ "submissions", "pending SUBMIT_WAITs", charge_submissions_setup,
	  charge_submissions },
	{ "async-waits", "asynchronous waits", charge_waits_setup,
	  charge_waits },
	{ "doorbells", "doorbells", charge_doorbells_setup,
	  charge_doorbells },
};

/* The count of each kind and the lower bound of one object, in bytes. */
static void charge_bound(const struct charge_kind *k, uint64_t *count,
			 uint64_t *each)
{
	const uint64_t log_page = (sizeof(struct drm_nfence_log_header) +
				   DRM_NFENCE_LOG_ENTRIES *
				   sizeof(struct drm_nfence_log_entry) +
				   PAGE - 1) & ~(PAGE - 1);
	const char *n = k->name;

	if (!strcmp(n, "devices")) {
		*count = CHARGE_FILES / 4 *
			 (DRM_NFENCE_MAX_DEVICES_PER_FILE - 1);
		*each = 72;
	} else if (!strcmp(n, "contexts")) {
		*count = CHARGE_FILES * DRM_NFENCE_MAX_CONTEXTS_PER_FILE;
		*each = 96;
	} else if (!strcmp(n, "hwqueues")) {
		*count = CHARGE_QUEUES;
		*each = 280 + 2 * log_page;
	} else if (!strcmp(n, "sysmem-allocs")) {
		*count = CHARGE_SYSMEM_ALLOCS;
		*each = 784 + CHARGE_SYSMEM_SIZE;
	} else if (!strcmp(n, "vram-allocs")) {
		*count = CHARGE_VRAM_ALLOCS;
		*each = 784;
	} else if (!strcmp(n, "submissions")) {
		*count = CHARGE_SUBMISSIONS * CHARGE_SUBMIT_QUEUES;
		*each = 104 + CHARGE_FENCES * 72;
	} else if (!strcmp(n, "async-waits")) {
		*count = CHARGE_WAITS;
		*each = 96 + CHARGE_FENCES * 64;
	} else {
		*count = CHARGE_DOORBELLS;
		*each = 568 + 3 * PAGE + 2 * 352;
	}
}

static void test_kernel_memory_charged(const struct charge_kind *k)
{
	uint64_t count, each;
	int64_t grown;

	if (!strcmp(k->name, "hwqueues"))
		igt_require_f(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE,
			      "the log buffers make a queue's bulk: needs "
			      "native fences\n");
	if (!strcmp(k->name, "doorbells"))
		igt_require_f(adapter.flags &
			      DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION,
			      "no user-mode submission on this adapter\n");
	if (!strcmp(k->name, "vram-allocs"))
		igt_require_f(vram_size - used(VRAM) >=
			      CHARGE_VRAM_ALLOCS * PAGE + 4 * MIB,
			      "needs %llu MiB of VRAM free\n",
			      CHARGE_VRAM_ALLOCS * PAGE / MIB + 4);
	nfence_watchdog(WATCHDOG_S);
	charge_bound(k, &count, &each);
	grown = nfence_cgroup_charge(k->setup, k->charge, &charge_state);
	nfence_assert_charged(grown, count, each, k->what);
}

static void test_vram_full_demote(void)
{
	in_child(__test_vram_full_demote);
}

static void __test_visible_full_demote(void)
{
	uint32_t dev;
	struct drm_nfence_alloc_create c;
	uint32_t h[512];
	struct nfence_bo bo;
	int n;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	dev = nfence_device_create(fd);
	n = fill(dev, VRAM, CPU_VISIBLE, h, ARRAY_SIZE(h));
	igt_assert_lt(0, n);
	igt_assert_lte_u64((uint64_t)n * PAGE, vram_visible);

	c = create_args(dev, PAGE, VRAM, CPU_VISIBLE);
	expect_create_error(fd, &c, -ENOSPC);
	nfence_bo_create(fd, dev, PAGE, VRAM, CPU_VISIBLE | ALLOW_DEMOTE, &bo);
	igt_assert_eq_u32(bo.segment_id, SYSTEM);
	igt_assert(bo.cpu);
	nfence_bo_destroy(&bo);

	/* The invisible part still has room. */
	if (vram_size > vram_visible) {
		c = create_args(dev, PAGE, VRAM, 0);
		igt_assert_eq(__nfence_alloc_create(fd, &c), 0);
		igt_assert_eq_u32(c.placed_segment_id, VRAM);
	}
	nfence_device_destroy(fd, dev);
}

static void test_visible_full_demote(void)
{
	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	in_child(__test_visible_full_demote);
}

/* ALLOC_CREATE invalid input */

static void test_create_bad_flags(void)
{
	struct nfence_env env;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	for (int bit = 2; bit < 32; bit++) {
		struct drm_nfence_alloc_create c =
			create_args(env.dev, PAGE, VRAM, 1u << bit);

		expect_create_error(fd, &c, -EINVAL);
		c.flags |= ALLOW_DEMOTE;
		expect_create_error(fd, &c, -EINVAL);
	}
	{
		struct drm_nfence_alloc_create c =
			create_args(env.dev, PAGE, VRAM, ~0u);

		expect_create_error(fd, &c, -EINVAL);
		c.flags = ~NFENCE_ALLOC_VALID_FLAGS;
		expect_create_error(fd, &c, -EINVAL);
		c.flags = 0;
		expect_create_ok(&c);
	}
	nfence_env_fini(&env);
}

static void test_create_bad_pad(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = create_args(env.dev, PAGE, SYSTEM, 0);
	for (int bit = 0; bit < 32; bit++) {
		c.pad = 1u << bit;
		expect_create_error(fd, &c, -EINVAL);
	}
	c.pad = 0;
	expect_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_create_size_zero(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	for (int seg = SYSTEM; seg <= VRAM; seg++) {
		c = create_args(env.dev, 0, seg, 0);
		expect_create_error(fd, &c, -EINVAL);
		c.size = 1;
		expect_create_ok(&c);
	}
	nfence_env_fini(&env);
}

static void test_create_size_too_big(void)
{
	const uint64_t sizes[] = {
		MAX_SIZE + 1, MAX_SIZE + PAGE, 2 * MAX_SIZE, 1ull << 32,
		1ull << 63, UINT64_MAX - PAGE + 2, UINT64_MAX,
	};
	struct nfence_env env;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	for (unsigned int i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (int seg = SYSTEM; seg <= VRAM; seg++) {
			struct drm_nfence_alloc_create c =
				create_args(env.dev, sizes[i], seg, 0);

			/* -EINVAL, not -ENOSPC: a size check. */
			expect_create_error(fd, &c, -EINVAL);
			c.flags = seg == VRAM ? ALLOW_DEMOTE : 0;
			expect_create_error(fd, &c, -EINVAL);
		}
	}
	nfence_env_fini(&env);
}

static void test_create_bad_segment(void)
{
	const uint32_t segments[] = { 0, 3, 4, 0x100, 0x80000000u, UINT32_MAX };
	struct nfence_env env;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	for (unsigned int i = 0; i < ARRAY_SIZE(segments); i++) {
		struct drm_nfence_alloc_create c =
			create_args(env.dev, PAGE, segments[i], 0);

		expect_create_error(fd, &c, -EINVAL);
		c.flags = ALLOW_DEMOTE;
		expect_create_error(fd, &c, -EINVAL);
	}
	nfence_env_fini(&env);
}

static void test_create_demote_system(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = create_args(env.dev, PAGE, SYSTEM, ALLOW_DEMOTE);
	expect_create_error(fd, &c, -EINVAL);
	c.flags |= CPU_VISIBLE;
	expect_create_error(fd, &c, -EINVAL);
	c.flags = CPU_VISIBLE;
	expect_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_create_cpu_visible_no_visible_vram(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(!vram_visible, "the adapter has CPU-visible VRAM\n");
	nfence_env_init(&env, fd);
	c = create_args(env.dev, PAGE, VRAM, CPU_VISIBLE);
	expect_create_error(fd, &c, -EINVAL);
	c.flags |= ALLOW_DEMOTE;
	expect_create_error(fd, &c, -EINVAL);
	c.flags = 0;
	expect_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_create_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	c = create_args(nfence_bad_device(&env, bad), PAGE, SYSTEM, 0);
	expect_create_error(fd, &c, -ENOENT);
	c.segment_id = VRAM;
	expect_create_error(fd, &c, -ENOENT);
	c.device = env.dev;
	expect_create_ok(&c);
	nfence_env_fini(&env);
}

static void test_create_max_allocs(void)
{
	int fd2 = nfence_open();
	uint32_t dev = nfence_device_create(fd2);
	uint32_t dev2 = nfence_device_create(fd2);
	struct drm_nfence_alloc_create c;
	uint32_t *h = calloc(MAX_ALLOCS, sizeof(*h));

	nfence_watchdog(WATCHDOG_S);
	igt_assert(h);
	/* The limit is per file, over all its devices. */
	for (int i = 0; i < MAX_ALLOCS; i++)
		h[i] = nfence_alloc_create(fd2, i % 2 ? dev2 : dev, PAGE,
					   SYSTEM, 0, NULL);
	c = create_args(dev, PAGE, SYSTEM, 0);
	expect_create_error(fd2, &c, -ENOSPC);
	c.device = dev2;
	expect_create_error(fd2, &c, -ENOSPC);

	/* Freeing one makes room for one. */
	nfence_alloc_destroy(fd2, dev, h[0]);
	c.device = dev;
	igt_assert_eq(__nfence_alloc_create(fd2, &c), 0);
	c = create_args(dev, PAGE, SYSTEM, 0);
	expect_create_error(fd2, &c, -ENOSPC);

	/* Another file has its own budget. */
	{
		uint32_t d = nfence_device_create(fd);
		uint32_t a = nfence_alloc_create(fd, d, PAGE, SYSTEM, 0, NULL);

		nfence_alloc_destroy(fd, d, a);
		nfence_device_destroy(fd, d);
	}
	close(fd2);
	free(h);
}

static void __test_create_vram_full(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_alloc_create c;
	uint32_t h[512];

	nfence_watchdog(WATCHDOG_S);
	/* Larger than the whole segment. */
	c = create_args(dev, vram_size + PAGE, VRAM, 0);
	expect_create_error(fd, &c, -ENOSPC);
	/* Full. */
	igt_assert_lt(0, fill(dev, VRAM, 0, h, ARRAY_SIZE(h)));
	c = create_args(dev, PAGE, VRAM, 0);
	expect_create_error(fd, &c, -ENOSPC);
	if (vram_visible) {
		c.flags = CPU_VISIBLE;
		expect_create_error(fd, &c, -ENOSPC);
	}
	nfence_device_destroy(fd, dev);
}

static void test_create_vram_full(void)
{
	in_child(__test_create_vram_full);
}

static void __test_create_visible_full(void)
{
	uint32_t dev;
	struct drm_nfence_alloc_create c;
	uint32_t h[512];

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	dev = nfence_device_create(fd);
	c = create_args(dev, vram_visible + PAGE, VRAM, CPU_VISIBLE);
	expect_create_error(fd, &c, -ENOSPC);
	igt_assert_lt(0, fill(dev, VRAM, CPU_VISIBLE, h, ARRAY_SIZE(h)));
	c = create_args(dev, PAGE, VRAM, CPU_VISIBLE);
	expect_create_error(fd, &c, -ENOSPC);
	nfence_device_destroy(fd, dev);
}

static void test_create_visible_full(void)
{
	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	in_child(__test_create_visible_full);
}

static void __test_create_check_order(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_create c;
	uint32_t h[512];

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	/* -EINVAL before -ENOENT. */
	c = create_args(0, PAGE, SYSTEM, 1u << 7);
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(0, 0, SYSTEM, 0);
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(0, PAGE, 7, 0);
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(0, PAGE, SYSTEM, ALLOW_DEMOTE);
	expect_create_error(fd, &c, -EINVAL);
	c = create_args(0, PAGE, SYSTEM, 0);
	c.pad = 1;
	expect_create_error(fd, &c, -EINVAL);
	/* -ENOENT before -ENOSPC. */
	igt_assert_lt(0, fill(env.dev, VRAM, 0, h, ARRAY_SIZE(h)));
	c = create_args(env.dev, PAGE, VRAM, 0);
	expect_create_error(fd, &c, -ENOSPC);
	c.device = UINT32_MAX;
	expect_create_error(fd, &c, -ENOENT);
	nfence_env_fini(&env);
}

static void test_create_check_order(void)
{
	in_child(__test_create_check_order);
}

/* ALLOC_DESTROY invalid input */

static void test_destroy_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_alloc_destroy d;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	h = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	d.device = nfence_bad_device(&env, bad);
	d.handle = h;
	expect_destroy_error(&d, -ENOENT);
	/* The allocation is still there. */
	igt_assert(nfence_alloc_exists(fd, env.dev, h));
	nfence_alloc_destroy(fd, env.dev, h);
	nfence_env_fini(&env);
}

static void test_destroy_bad_handle(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_alloc_destroy d;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	h = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	d.device = env.dev;
	d.handle = nfence_bad_handle(&env, NFENCE_KIND_ALLOC, bad, &h, 1);
	expect_destroy_error(&d, -ENOENT);
	igt_assert(nfence_alloc_exists(fd, env.dev, h));
	nfence_alloc_destroy(fd, env.dev, h);
	nfence_env_fini(&env);
}

static void test_destroy_twice(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_alloc_destroy d = { .device = dev };

	nfence_watchdog(WATCHDOG_S);
	d.handle = nfence_alloc_create(fd, dev, PAGE, VRAM, 0, NULL);
	igt_assert_eq(__nfence_alloc_destroy(fd, &d), 0);
	expect_destroy_error(&d, -ENOENT);
	nfence_device_destroy(fd, dev);
}

/* ALLOC_LOCK */

static void test_lock_bad_flags(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	l.device = env.dev;
	l.handle = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	for (int bit = 0; bit < 32; bit++) {
		l.flags = 1u << bit;
		expect_lock_error(&l, -EINVAL);
	}
	l.flags = 0;
	igt_assert_eq(__nfence_alloc_lock(fd, &l), 0);
	nfence_env_fini(&env);
}

static void test_lock_bad_pad(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	l.device = env.dev;
	l.handle = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	for (int bit = 0; bit < 32; bit++) {
		l.pad = 1u << bit;
		expect_lock_error(&l, -EINVAL);
	}
	l.pad = 0;
	igt_assert_eq(__nfence_alloc_lock(fd, &l), 0);
	nfence_env_fini(&env);
}

static void test_lock_not_cpu_visible(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	l.device = env.dev;
	l.handle = nfence_alloc_create(fd, env.dev, PAGE, VRAM, 0, NULL);
	expect_lock_error(&l, -EINVAL);
	/* ALLOW_DEMOTE alone does not make VRAM visible either. */
	l.handle = nfence_alloc_create(fd, env.dev, PAGE, VRAM, ALLOW_DEMOTE,
				       NULL);
	expect_lock_error(&l, -EINVAL);
	nfence_env_fini(&env);
}

static void test_lock_bad_device(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	l.handle = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	l.device = nfence_bad_device(&env, bad);
	expect_lock_error(&l, -ENOENT);
	l.device = env.dev;
	igt_assert_eq(__nfence_alloc_lock(fd, &l), 0);
	nfence_env_fini(&env);
}

static void test_lock_bad_handle(enum nfence_bad bad)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	h = nfence_alloc_create(fd, env.dev, PAGE, SYSTEM, 0, NULL);
	l.device = env.dev;
	l.handle = nfence_bad_handle(&env, NFENCE_KIND_ALLOC, bad, &h, 1);
	expect_lock_error(&l, -ENOENT);
	l.handle = h;
	igt_assert_eq(__nfence_alloc_lock(fd, &l), 0);
	nfence_env_fini(&env);
}

static void test_lock_check_order(void)
{
	struct nfence_env env;
	struct drm_nfence_alloc_lock l = { 0 };

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	/* -EINVAL (flags, pad) before -ENOENT. */
	l.device = UINT32_MAX;
	l.handle = UINT32_MAX;
	l.flags = 1;
	expect_lock_error(&l, -EINVAL);
	l.flags = 0;
	l.pad = 1;
	expect_lock_error(&l, -EINVAL);
	nfence_env_fini(&env);
}

/* The ioctl argument itself unreadable. */
static void test_bad_arg_pointer(void)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_ALLOC_CREATE,
		DRM_IOCTL_NFENCE_ALLOC_DESTROY,
		DRM_IOCTL_NFENCE_ALLOC_LOCK,
	};

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

/*
 * Mappings and get_user_pages(): a VRAM mapping is device memory, which the
 * segment recycles as soon as it is freed, so nothing may keep a reference
 * to its pages; system memory and fence pages are the mapping's own, which
 * I/O may keep using after munmap().
 */

#define PATTERN_A	0x41u
#define PATTERN_B	0x42u

/* The pages at @p pinned into a pipe: 0 or -errno, the pipe in @pipefd. */
static int vmsplice_to_pipe(void *p, size_t len, int pipefd[2])
{
	struct iovec iov = { .iov_base = p, .iov_len = len };
	ssize_t n;

	igt_assert_eq(pipe(pipefd), 0);
	/* Room for the whole range: a full pipe would block, not fail. */
	igt_assert_lte(0, fcntl(pipefd[1], F_SETPIPE_SZ, (int)len));
	n = vmsplice(pipefd[1], &iov, 1, SPLICE_F_NONBLOCK);
	if (n < 0)
		return -errno;
	igt_assert_eq_u64((uint64_t)n, len);
	return 0;
}

/* How many bytes of @buf are @byte. */
static size_t count_bytes(const uint8_t *buf, size_t len, uint8_t byte)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == byte;
	return n;
}

/*
 * In a child with a file of its own: a CPU-visible allocation of @size in
 * @segment (@flags), filled with PATTERN_B, held until the parent writes to
 * @go[1]; the child writes to @ready[1] once it is filled.
 */
static void other_client_fills(uint64_t size, uint32_t segment, uint32_t flags,
			       int ready[2], int go[2])
{
	igt_fork(child, 1) {
		int cfd = nfence_open();
		uint32_t dev = nfence_device_create(cfd);
		struct nfence_bo bo;
		char c = 1;

		nfence_bo_create(cfd, dev, size, segment, flags, &bo);
		memset(bo.cpu, PATTERN_B, bo.size);
		igt_assert_eq(write(ready[1], &c, 1), 1);
		igt_assert_eq(read(go[0], &c, 1), 1);
		nfence_bo_destroy(&bo);
		nfence_device_destroy(cfd, dev);
		close(cfd);
	}
}

/*
 * Map an allocation of @segment, fill it with PATTERN_A and pin its pages
 * into a pipe with vmsplice(); then unmap and destroy it, let another
 * client allocate the same amount and fill it with PATTERN_B, and read the
 * pipe. Returns vmsplice()'s result; when it took the pages, what the pipe
 * gave back is in @out.
 */
static int vmsplice_then_reuse(uint32_t segment, uint32_t flags, uint8_t *out,
			       size_t size)
{
	uint32_t dev = nfence_device_create(fd);
	int pipefd[2], ready[2], go[2], ret;
	struct nfence_bo bo;
	char c = 1;

	nfence_bo_create(fd, dev, size, segment, flags, &bo);
	igt_assert_eq_u32(bo.segment_id, segment);
	memset(bo.cpu, PATTERN_A, bo.size);
	ret = vmsplice_to_pipe(bo.cpu, size, pipefd);
	nfence_bo_destroy(&bo);
	nfence_device_destroy(fd, dev);
	if (ret) {
		close(pipefd[0]);
		close(pipefd[1]);
		return ret;
	}

	igt_assert_eq(pipe(ready), 0);
	igt_assert_eq(pipe(go), 0);
	other_client_fills(size, segment, flags, ready, go);
	igt_assert_eq(read(ready[0], &c, 1), 1);
	igt_assert_eq(read(pipefd[0], out, size), (ssize_t)size);
	igt_assert_eq(write(go[1], &c, 1), 1);
	igt_waitchildren();
	for (int i = 0; i < 2; i++) {
		close(pipefd[i]);
		close(ready[i]);
		close(go[i]);
	}
	return 0;
}

static void test_vram_vmsplice_refused(void)
{
	const size_t size = 16 * PAGE;
	uint8_t *out = malloc(size);
	int ret;

	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	nfence_watchdog(WATCHDOG_S);
	igt_assert(out);
	ret = vmsplice_then_reuse(VRAM, CPU_VISIBLE, out, size);
	if (!ret) {
		size_t theirs = count_bytes(out, size, PATTERN_B);

		igt_assert_f(!theirs, "%zu of %zu bytes read through pages "
			     "pinned from a destroyed VRAM allocation are "
			     "another client's\n", theirs, size);
		igt_assert_f(false, "vmsplice() of a VRAM mapping pinned its "
			     "pages\n");
	}
	igt_assert_eq(ret, -EFAULT);
	free(out);
}

static void test_sysmem_vmsplice_keeps_pages(void)
{
	const size_t size = 16 * PAGE;
	uint8_t *out = malloc(size);

	nfence_watchdog(WATCHDOG_S);
	igt_assert(out);
	igt_assert_eq(vmsplice_then_reuse(SYSTEM, 0, out, size), 0);
	/* The pinned pages are still the destroyed allocation's. */
	igt_assert_eq_u64(count_bytes(out, size, PATTERN_A), size);
	free(out);
}

static int io_uring_setup_or_skip(void)
{
	struct io_uring_params params = {};
	int ring = syscall(__NR_io_uring_setup, 4, &params);

	igt_require_f(ring >= 0, "io_uring_setup: %s\n", strerror(errno));
	return ring;
}

static int io_uring_register_buffer(int ring, void *p, size_t len)
{
	struct iovec iov = { .iov_base = p, .iov_len = len };

	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		    &iov, 1) < 0)
		return -errno;
	igt_assert_eq(syscall(__NR_io_uring_register, ring,
			      IORING_UNREGISTER_BUFFERS, NULL, 0), 0);
	return 0;
}

static void test_io_uring_buffers(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_bo sys, vram;
	int ring, ret;

	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	nfence_watchdog(WATCHDOG_S);
	ring = io_uring_setup_or_skip();
	nfence_bo_create(fd, dev, 4 * PAGE, SYSTEM, 0, &sys);
	nfence_bo_create(fd, dev, 4 * PAGE, VRAM, CPU_VISIBLE, &vram);
	igt_assert_eq_u32(vram.segment_id, VRAM);
	/*
	 * Before 6.3 io_uring refuses every file-backed buffer but shmem and
	 * hugetlbfs (EOPNOTSUPP), after pinning its pages; VRAM fails the
	 * pin itself.
	 */
	ret = io_uring_register_buffer(ring, sys.cpu, sys.size);
	igt_assert_f(ret == 0 || ret == -EOPNOTSUPP, "registering a system "
		     "memory mapping: %s\n", strerror(-ret));
	igt_assert_eq(io_uring_register_buffer(ring, vram.cpu, vram.size),
		      -EFAULT);
	close(ring);
	nfence_bo_destroy(&vram);
	nfence_bo_destroy(&sys);
	nfence_device_destroy(fd, dev);
}

/* The CPU still reads and writes VRAM, and so does a debugger. */
static void test_vram_mapping_access(void)
{
	uint32_t dev = nfence_device_create(fd);
	const uint64_t size = 40 * PAGE;	/* more than one prefault */
	int mem = open("/proc/self/mem", O_RDWR);
	static char page[PAGE];
	uint64_t v, off;
	struct nfence_bo bo;
	char buf[64];
	void *view;

	igt_require_f(vram_visible, "no CPU-visible VRAM\n");
	igt_assert_lte(0, mem);
	nfence_watchdog(WATCHDOG_S);
	nfence_bo_create(fd, dev, size, VRAM, CPU_VISIBLE, &bo);
	igt_assert_eq_u32(bo.segment_id, VRAM);
	/* Backwards, so that faults do not only come in prefault order. */
	for (off = size; off; off -= 8)
		*nfence_bo_u64(&bo, off - 8) = POISON64 ^ (off - 8);
	for (off = 0; off < size; off += 8)
		igt_assert_eq_u64(*nfence_bo_u64(&bo, off), POISON64 ^ off);

	/* read() and write() into the mapping copy without pinning it. */
	igt_assert_eq(pread(mem, &v, 8, (uintptr_t)bo.cpu + 3 * PAGE + 16), 8);
	igt_assert_eq_u64(v, POISON64 ^ (3 * PAGE + 16));
	v = POISON;
	igt_assert_eq(pwrite(mem, &v, 8, (uintptr_t)bo.cpu + 33 * PAGE), 8);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 33 * PAGE), POISON);
	/* A range across a page boundary. */
	igt_assert_eq(pread(mem, buf, sizeof(buf),
			    (uintptr_t)bo.cpu + 2 * PAGE - 32),
		      (ssize_t)sizeof(buf));
	igt_assert_eq(memcmp(buf, (char *)bo.cpu + 2 * PAGE - 32,
			     sizeof(buf)), 0);

	/*
	 * Through a read-only view of the first page, with nothing mapped
	 * after it: reads, but no write, and a read from its middle stops
	 * at its end rather than going on into the allocation's next page.
	 */
	view = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	igt_assert(view != MAP_FAILED);
	igt_assert(mmap(view, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
			nfence_alloc_lock(fd, dev, bo.handle, NULL)) == view);
	/* A hole: /proc/PID/mem reads PROT_NONE memory too. */
	igt_assert_eq(munmap((char *)view + PAGE, PAGE), 0);
	igt_assert_eq(pread(mem, &v, 8, (uintptr_t)view + 8), 8);
	igt_assert_eq_u64(v, POISON64 ^ 8);
	v = POISON;
	igt_assert_eq(pwrite(mem, &v, 8, (uintptr_t)view + 8), -1);
	igt_assert_eq(errno, EIO);
	igt_assert_eq_u64(*nfence_bo_u64(&bo, 8), POISON64 ^ 8);
	igt_assert_eq(pread(mem, page, PAGE, (uintptr_t)view + PAGE / 2),
		      (ssize_t)(PAGE / 2));
	munmap(view, PAGE);

	close(mem);
	nfence_bo_destroy(&bo);
	nfence_device_destroy(fd, dev);
}

/* A shared fence's CurrentValue page: pinned, it stays the fence's. */
static void test_fence_page_vmsplice_keeps_page(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *cv;
	uint32_t dev, h;
	int pipefd[2];
	uint64_t v[PAGE / 8];

	igt_require(nfence_has_native_fences(fd));
	nfence_watchdog(WATCHDOG_S);
	dev = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				NFENCE_FENCE_SHAREABLE, 0x1234, &m);
	cv = nfence_fence_map(fd, &m);
	igt_assert_eq(vmsplice_to_pipe((void *)((uintptr_t)cv & ~(PAGE - 1)),
				       PAGE, pipefd), 0);
	nfence_fence_unmap(cv);
	nfence_fence_destroy(fd, h);

	/* New fences, with other values, on a file of their own. */
	igt_fork(child, 1) {
		int cfd = nfence_open();
		uint32_t cdev = nfence_device_create(cfd);

		for (int i = 0; i < 8; i++)
			nfence_fence_create(cfd, cdev,
					    DRM_NFENCE_FENCE_TYPE_DEFAULT,
					    NFENCE_FENCE_SHAREABLE, 0x5678,
					    NULL);
		igt_assert_eq(read(pipefd[0], v, PAGE), (ssize_t)PAGE);
		igt_assert_eq_u64(v[m.cpu_value_offset / 8], 0x1234);
		close(cfd);
	}
	igt_waitchildren();
	close(pipefd[0]);
	close(pipefd[1]);
	nfence_device_destroy(fd, dev);
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
		query_segments();
		dbg = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
	}

	igt_describe("Create a system-memory allocation: non-zero handle, "
		     "page-aligned VA, placed in segment 1, counted in "
		     "nfence_segments; destroy gives the memory back.");
	igt_subtest("create-destroy")
		test_create_destroy();

	igt_describe("A VRAM allocation is placed in segment 2.");
	igt_subtest("create-vram")
		test_create_vram();

	igt_describe("A CPU_VISIBLE VRAM allocation maps read/write through "
		     "Lock2.");
	igt_subtest("create-vram-cpu-visible")
		test_create_vram_cpu_visible();

	igt_describe("System allocations are CPU-mappable with or without "
		     "CPU_VISIBLE.");
	igt_subtest("system-always-visible")
		test_system_always_visible();

	igt_describe("Sizes are rounded up to whole pages (Lock2 size and "
		     "segment use).");
	igt_subtest("size-rounded")
		test_size_rounded();

	igt_describe("DRM_NFENCE_MAX_ALLOC_SIZE itself is a valid size.");
	igt_subtest("max-size")
		test_max_size();

	igt_describe("New allocations read zero, also when they reuse memory "
		     "an earlier one dirtied.");
	igt_subtest("memory-zeroed")
		test_memory_zeroed();

	igt_describe("Allocations of both devices of a file get "
		     "non-overlapping page-aligned VA ranges.");
	igt_subtest("gpu-va-distinct")
		test_gpu_va_distinct();

	igt_describe("A destroyed allocation handle is not handed out again "
		     "right away.");
	igt_subtest("handles-not-reused")
		test_handles_not_reused();

	igt_describe("Two Lock2 mappings of an allocation share its memory.");
	igt_subtest("map-twice")
		test_map_twice();

	igt_describe("A private (copy-on-write) mapping of an allocation is "
		     "refused.");
	igt_subtest("map-private")
		test_map_private();

	igt_describe("An allocation destroyed while the CPU has it mapped "
		     "keeps the memory valid for the CPU until munmap.");
	igt_subtest("destroyed-while-mapped")
		test_destroyed_while_mapped();

	igt_describe("Destroying a device frees its allocations.");
	igt_subtest("device-destroy-frees")
		test_device_destroy_frees();

	igt_describe("Closing the file (and unmapping what was still mapped) "
		     "frees its allocations.");
	igt_subtest("close-frees")
		test_close_frees();

	igt_describe("With per-client quotas, one file fills its quota of "
		     "VRAM and of system memory and gets -ENOSPC (or "
		     "demotion), a second file still allocates, and "
		     "destroyed memory is uncharged once unmapped.");
	igt_subtest("client-quota")
		test_client_quota();

	igt_describe("nfence_clients shows each file's bytes of each "
		     "segment; a file's fd closed while two of its "
		     "system-memory allocations are mapped, one destroyed "
		     "before: each counts in nfence_segments and the file's "
		     "line until its munmap(), the last of which releases "
		     "the file and its VRAM.");
	igt_subtest("close-mapped-counts")
		test_close_mapped_counts();

	igt_describe("INTRA_GPU fences count against their file's VRAM "
		     "quota: its allocations get the rest, past it INTRA_GPU "
		     "and DEFAULT fences are still made, their values in "
		     "system memory, a second file still gets its quota, "
		     "and destroying the fences gives their bytes back.");
	igt_subtest("client-quota-fences")
		test_client_quota_fences();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(charge_kinds); i++) {
		igt_describe("Kernel memory a process makes the driver "
			     "allocate is charged to its memory cgroup: a "
			     "child in a cgroup of its own makes many objects "
			     "of one kind, and memory.current grows by at "
			     "least the structures each takes.");
		igt_subtest_f("kernel-memory-charged-%s", charge_kinds[i].name)
			test_kernel_memory_charged(&charge_kinds[i]);
	}

	igt_describe("With VRAM full, ALLOW_DEMOTE places a VRAM request in "
		     "system memory; with room again, in VRAM.");
	igt_subtest("vram-full-demote")
		test_vram_full_demote();

	igt_describe("With the CPU-visible part of VRAM full, CPU_VISIBLE | "
		     "ALLOW_DEMOTE lands in system memory; the invisible part "
		     "is still usable.");
	igt_subtest("visible-full-demote")
		test_visible_full_demote();

	igt_describe("VRAM is device memory: vmsplice() of a CPU-visible "
		     "VRAM mapping fails with EFAULT, so no page reference "
		     "outlives the allocation; if it took the pages, nothing "
		     "another client later writes to the recycled range comes "
		     "back through them.");
	igt_subtest("vram-vmsplice-refused")
		test_vram_vmsplice_refused();

	igt_describe("System memory is ordinary pages: vmsplice() of a mapping "
		     "works, and after munmap and destroy the pinned pages "
		     "still hold what was written, never another client's "
		     "data.");
	igt_subtest("sysmem-vmsplice-keeps-pages")
		test_sysmem_vmsplice_keeps_pages();

	igt_describe("io_uring buffer registration fails with EFAULT on a VRAM "
		     "mapping; on a system-memory mapping it works (from 6.3; "
		     "before, io_uring refuses file-backed buffers).");
	igt_subtest("io-uring-buffers")
		test_io_uring_buffers();

	igt_describe("A VRAM mapping is read and written by the CPU (faults in "
		     "any order, across the prefault window) and through "
		     "/proc/self/mem (the mapping's access callback), which "
		     "writes no read-only view and reads no further than a "
		     "view's end.");
	igt_subtest("vram-mapping-access")
		test_vram_mapping_access();

	igt_describe("A shared fence's CurrentValue page pinned by vmsplice() "
		     "keeps the destroyed fence's value while other fences are "
		     "created.");
	igt_subtest("fence-page-vmsplice-keeps-page")
		test_fence_page_vmsplice_keeps_page();

	igt_describe("Unknown ALLOC_CREATE flag bits fail with -EINVAL.");
	igt_subtest("create-bad-flags")
		test_create_bad_flags();

	igt_describe("Non-zero ALLOC_CREATE pad fails with -EINVAL.");
	igt_subtest("create-bad-pad")
		test_create_bad_pad();

	igt_describe("Size 0 fails with -EINVAL.");
	igt_subtest("create-size-zero")
		test_create_size_zero();

	igt_describe("Sizes above DRM_NFENCE_MAX_ALLOC_SIZE fail with -EINVAL "
		     "(not -ENOSPC), also with ALLOW_DEMOTE.");
	igt_subtest("create-size-too-big")
		test_create_size_too_big();

	igt_describe("Segment ids other than 1 and 2 fail with -EINVAL.");
	igt_subtest("create-bad-segment")
		test_create_bad_segment();

	igt_describe("ALLOW_DEMOTE on a system-memory request fails with "
		     "-EINVAL.");
	igt_subtest("create-demote-system")
		test_create_demote_system();

	igt_describe("CPU_VISIBLE VRAM on an adapter without CPU-visible "
		     "VRAM fails with -EINVAL.");
	igt_subtest("create-cpu-visible-no-visible-vram")
		test_create_cpu_visible_no_visible_vram();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("ALLOC_CREATE on a %s device handle fails with "
			       "-ENOENT.", nfence_bad_name(bad_devices[i]));
		igt_subtest_f("create-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_create_bad_device(bad_devices[i]);
	}

	igt_describe("4096 allocations per file over all its devices; the "
		     "next fails with -ENOSPC; freeing one makes room.");
	igt_subtest("create-max-allocs")
		test_create_max_allocs();

	igt_describe("A full VRAM segment (or a request larger than it) "
		     "fails with -ENOSPC without ALLOW_DEMOTE.");
	igt_subtest("create-vram-full")
		test_create_vram_full();

	igt_describe("A full CPU-visible VRAM part fails CPU_VISIBLE requests "
		     "with -ENOSPC.");
	igt_subtest("create-visible-full")
		test_create_visible_full();

	igt_describe("ALLOC_CREATE checks in order: -EINVAL, -ENOENT, "
		     "-ENOSPC.");
	igt_subtest("create-check-order")
		test_create_check_order();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("ALLOC_DESTROY with a %s device handle fails "
			       "with -ENOENT and destroys nothing.",
			       nfence_bad_name(bad_devices[i]));
		igt_subtest_f("destroy-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_destroy_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("ALLOC_DESTROY of a %s allocation handle fails "
			       "with -ENOENT.", nfence_bad_name(b));
		igt_subtest_f("destroy-handle-%s", nfence_bad_name(b))
			test_destroy_bad_handle(b);
	}

	igt_describe("Destroying an allocation twice fails with -ENOENT.");
	igt_subtest("destroy-twice")
		test_destroy_twice();

	igt_describe("Any ALLOC_LOCK flag bit fails with -EINVAL, nothing "
		     "written.");
	igt_subtest("lock-bad-flags")
		test_lock_bad_flags();

	igt_describe("Non-zero ALLOC_LOCK pad fails with -EINVAL.");
	igt_subtest("lock-bad-pad")
		test_lock_bad_pad();

	igt_describe("Lock of VRAM made without CPU_VISIBLE fails with "
		     "-EINVAL.");
	igt_subtest("lock-not-cpu-visible")
		test_lock_not_cpu_visible();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("ALLOC_LOCK with a %s device handle fails with "
			       "-ENOENT.", nfence_bad_name(bad_devices[i]));
		igt_subtest_f("lock-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_lock_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("ALLOC_LOCK of a %s allocation handle fails "
			       "with -ENOENT.", nfence_bad_name(b));
		igt_subtest_f("lock-handle-%s", nfence_bad_name(b))
			test_lock_bad_handle(b);
	}

	igt_describe("ALLOC_LOCK checks flags and pad before handles.");
	igt_subtest("lock-check-order")
		test_lock_check_order();

	igt_describe("An unreadable ioctl argument fails with -EFAULT.");
	igt_subtest("bad-arg-pointer")
		test_bad_arg_pointer();

	igt_fixture {
		nfence_watchdog(0);
		close(dbg);
		close(fd);
	}
}
