// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("DRM_IOCTL_NFENCE_QUERY: the answer of every query "
		     "type, the size negotiation protocol and the rejection "
		     "of every invalid input without side effects.");

#define CANARY		0xa5
#define SLACK		64
#define MIB		(1024ull * 1024ull)
#define TS_FREQUENCY	100000000ull
#define WATCHDOG_S	60

#define ADAPTER_FLAGS	(DRM_NFENCE_ADAPTER_NATIVE_FENCE | \
			 DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION | \
			 DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS)
#define FENCE_CAPS	(DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT | \
			 DRM_NFENCE_FENCE_CAP_INTRA_GPU | \
			 DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER | \
			 DRM_NFENCE_FENCE_CAP_LOG_BUFFERS | \
			 DRM_NFENCE_FENCE_CAP_PEER_SIGNALS)

static int fd = -1;
static struct drm_nfence_query_adapter adapter;

/* The size the contract says each answer has on this adapter. */
static uint32_t expected_size(uint32_t type)
{
	switch (type) {
	case DRM_NFENCE_QUERY_ADAPTER:
		return sizeof(struct drm_nfence_query_adapter);
	case DRM_NFENCE_QUERY_SEGMENTS:
		return sizeof(struct drm_nfence_query_segments) +
			adapter.num_segments *
			sizeof(struct drm_nfence_segment_info);
	case DRM_NFENCE_QUERY_ENGINES:
		return sizeof(struct drm_nfence_query_engines) +
			adapter.num_engines *
			sizeof(struct drm_nfence_engine_info);
	case DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS:
		return sizeof(struct drm_nfence_query_fence_caps);
	case DRM_NFENCE_QUERY_UMS_CAPS:
		return sizeof(struct drm_nfence_query_ums_caps);
	case DRM_NFENCE_QUERY_TIMESTAMP:
		return sizeof(struct drm_nfence_query_timestamp);
	case DRM_NFENCE_QUERY_SEGMENT_USAGE:
		return sizeof(struct drm_nfence_query_segment_usage) +
			adapter.num_segments *
			sizeof(struct drm_nfence_segment_usage);
	}
	igt_assert_f(false, "no query type %u\n", type);
	return 0;
}

static uint8_t *canary_alloc(size_t len)
{
	uint8_t *p = malloc(len);

	igt_assert(p);
	memset(p, CANARY, len);
	return p;
}

static void assert_canary(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		igt_assert_f(p[i] == CANARY,
			     "byte %zu of the answer buffer was written (%#x)\n",
			     i, p[i]);
}

static void assert_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		igt_assert_f(!p[i], "byte %zu is %#x\n", i, p[i]);
}

/*
 * Run @in against a canary buffer of in->size + SLACK bytes and expect
 * -EINVAL, the struct exactly as passed in (drm_ioctl copies it back even
 * on failure) and not one byte of the buffer written.
 */
static void expect_einval(const struct drm_nfence_query *in)
{
	struct drm_nfence_query q = *in, orig;
	uint8_t *buf = canary_alloc((size_t)in->size + SLACK);

	q.data = (uintptr_t)buf;
	orig = q;
	igt_assert_eq(__nfence_query(fd, &q), -EINVAL);
	igt_assert_f(!memcmp(&q, &orig, sizeof(q)),
		     "query struct changed on failure: type %u size %u -> %u\n",
		     orig.type, orig.size, q.size);
	assert_canary(buf, 0, (size_t)in->size + SLACK);
	free(buf);
}

/*
 * Expect -EFAULT for @in (whose data the kernel cannot write). Every input
 * field must come back unchanged; @size may come back as given or as the
 * needed size (the contract does not say which on -EFAULT).
 */
static void expect_efault(const struct drm_nfence_query *in)
{
	struct drm_nfence_query q = *in;

	igt_assert_eq(__nfence_query(fd, &q), -EFAULT);
	igt_assert_eq_u32(q.type, in->type);
	igt_assert_eq_u64(q.data, in->data);
	igt_assert_eq_u32(q.flags, in->flags);
	igt_assert_eq_u32(q.pad, in->pad);
	igt_assert_eq_u64(q.reserved[0], in->reserved[0]);
	igt_assert_eq_u64(q.reserved[1], in->reserved[1]);
	igt_assert_f(q.size == in->size || q.size == expected_size(in->type),
		     "size %u -> %u on -EFAULT\n", in->size, q.size);
}

/* The sizes invalid-field tests run with: asking, and a complete buffer. */
static uint32_t probe_size(uint32_t type, int i)
{
	return i == 0 ? 0 : expected_size(type);
}

/* The adapter under test's value of a per-adapter module parameter. */
static uint64_t param_u64(const char *name)
{
	return nfence_param_get_u64_at(name, adapter.index);
}

static bool param_bool(const char *name)
{
	return nfence_param_get_bool_at(name, adapter.index);
}

/*
 * Run @check against every adapter in turn, as if the subtest had opened
 * it: the per-adapter module parameters may configure each differently.
 */
static void on_every_adapter(void (*check)(void))
{
	struct drm_nfence_query_adapter saved = adapter;
	int count = nfence_count_adapters(), saved_fd = fd;

	for (int i = 0; i < count; i++) {
		fd = nfence_open_adapter(i);
		nfence_query_adapter(fd, &adapter);
		igt_assert_eq_u32(adapter.index, i);
		check();
		close(fd);
	}
	fd = saved_fd;
	adapter = saved;
}

static void test_adapter(void)
{
	struct drm_nfence_query_adapter a;

	nfence_watchdog(WATCHDOG_S);
	nfence_query_adapter(fd, &a);

	igt_assert_neq_u64((uint64_t)a.luid_high << 32 | a.luid_low, 0);
	igt_assert_lt(a.index, nfence_count_adapters());
	/* Documentation/architecture.rst: high part 0, index in the low byte. */
	igt_assert_eq_u32(a.luid_high, 0);
	igt_assert_eq_u32(a.luid_low & 0xff, a.index);
	igt_assert_eq_u32(a.flags & ~ADAPTER_FLAGS, 0);
	igt_assert_lte(1, a.num_engines);
	igt_assert_lte(a.num_engines, 8);
	igt_assert_eq_u32(a.num_segments, 2);
	igt_assert_eq_u64(a.timestamp_frequency, TS_FREQUENCY);

	/*
	 * NO_64BIT_ATOMICS is a property of the GPU (DXGK_VIDSCHCAPS::
	 * No64BitAtomics, a WDDM 2.0 monitored fence cap), reported with or
	 * without native fences: it is checked against the parameter below.
	 */
	igt_assert_eq(!!(a.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE),
		      param_bool("native_fences"));
	igt_assert_eq(!!(a.flags & DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION),
		      param_bool("user_mode_submission"));
	igt_assert_eq(!!(a.flags & DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS),
		      param_bool("no_64bit_atomics"));
	igt_assert_eq_u64(a.num_engines, param_u64("num_engines"));
}

static void test_segments(void)
{
	struct drm_nfence_query_segments *s;
	struct drm_nfence_segment_info *sys, *vram;
	uint32_t size;

	nfence_watchdog(WATCHDOG_S);
	s = nfence_query_alloc(fd, DRM_NFENCE_QUERY_SEGMENTS, &size);
	igt_assert_eq_u32(size, expected_size(DRM_NFENCE_QUERY_SEGMENTS));
	igt_assert_eq_u32(s->num_segments, adapter.num_segments);
	igt_assert_eq_u32(s->num_segments, 2);
	igt_assert_eq_u32(s->pad, 0);

	sys = &s->segments[0];
	igt_assert_eq_u32(sys->id, 1);
	igt_assert_eq_u32(sys->flags, DRM_NFENCE_SEGMENT_SYSTEM |
				      DRM_NFENCE_SEGMENT_CPU_VISIBLE);
	igt_assert_neq_u64(sys->size, 0);
	igt_assert_eq_u64(sys->size % MIB, 0);
	igt_assert_eq_u64(sys->cpu_visible_size, sys->size);
	igt_assert_eq_u64(sys->size, param_u64("sysmem_mb") * MIB);

	vram = &s->segments[1];
	igt_assert_eq_u32(vram->id, 2);
	igt_assert_eq_u32(vram->flags & ~DRM_NFENCE_SEGMENT_CPU_VISIBLE,
			  DRM_NFENCE_SEGMENT_LOCAL);
	igt_assert_neq_u64(vram->size, 0);
	igt_assert_eq_u64(vram->size % MIB, 0);
	igt_assert_lte_u64(vram->cpu_visible_size, vram->size);
	igt_assert_eq_u64(vram->cpu_visible_size % MIB, 0);
	igt_assert_eq(!!(vram->flags & DRM_NFENCE_SEGMENT_CPU_VISIBLE),
		      vram->cpu_visible_size > 0);
	igt_assert_eq_u64(vram->size, param_u64("vram_mb") * MIB);
	igt_assert_eq_u64(vram->cpu_visible_size,
			  param_u64("vram_visible_mb") * MIB);

	free(s);
}

#define PAGE	4096ull

/* The answer to SEGMENT_USAGE on @afd, checked for shape. */
static struct drm_nfence_query_segment_usage *segment_usage(int afd)
{
	struct drm_nfence_query_segment_usage *u;
	uint32_t size;

	u = nfence_query_alloc(afd, DRM_NFENCE_QUERY_SEGMENT_USAGE, &size);
	igt_assert_eq_u32(size, expected_size(DRM_NFENCE_QUERY_SEGMENT_USAGE));
	igt_assert_eq_u32(u->num_segments, adapter.num_segments);
	igt_assert_eq_u32(u->pad, 0);
	for (uint32_t i = 0; i < u->num_segments; i++) {
		igt_assert_eq_u32(u->segments[i].id, i + 1);
		igt_assert_eq_u32(u->segments[i].pad, 0);
		igt_assert_lte_u64(u->segments[i].usage,
				   u->segments[i].budget);
	}
	return u;
}

/* Bytes @afd holds of segment @id now. */
static uint64_t usage_of(int afd, uint32_t id)
{
	struct drm_nfence_query_segment_usage *u = segment_usage(afd);
	uint64_t used = u->segments[id - 1].usage;

	free(u);
	return used;
}

/* The budget the contract gives: the quota if set and smaller, else size. */
static uint64_t expected_budget(const char *quota_param, uint64_t size)
{
	uint64_t quota = param_u64(quota_param) * MIB;

	return quota && quota < size ? quota : size;
}

static void check_segment_budgets(void)
{
	struct drm_nfence_query_segment_usage *u;
	struct drm_nfence_query_segments *s;
	int afd = nfence_open_adapter(adapter.index);

	s = nfence_query_alloc(afd, DRM_NFENCE_QUERY_SEGMENTS, NULL);
	u = segment_usage(afd);
	for (uint32_t i = 0; i < u->num_segments; i++)
		igt_assert_eq_u32(u->segments[i].id, s->segments[i].id);
	igt_assert_eq_u64(u->segments[0].budget,
			  expected_budget("client_sysmem_mb",
					  s->segments[0].size));
	igt_assert_eq_u64(u->segments[1].budget,
			  expected_budget("client_vram_mb",
					  s->segments[1].size));
	/* A new file holds nothing. */
	igt_assert_eq_u64(u->segments[0].usage, 0);
	igt_assert_eq_u64(u->segments[1].usage, 0);
	free(u);
	free(s);
	close(afd);
}

static void test_segment_usage(void)
{
	nfence_watchdog(WATCHDOG_S);
	on_every_adapter(check_segment_budgets);
}

/*
 * Each allocation raises its file's usage of the segment it was placed in
 * by its page-aligned size and no other segment's; destroying it gives the
 * bytes back.
 */
static void test_segment_usage_alloc(void)
{
	static const struct {
		uint32_t segment, flags;
		uint64_t size, charged;
	} cases[] = {
		{ NFENCE_SEGMENT_SYSTEM, 0, 3 * PAGE + 1, 4 * PAGE },
		{ NFENCE_SEGMENT_SYSTEM, DRM_NFENCE_ALLOC_CPU_VISIBLE, PAGE,
		  PAGE },
		{ NFENCE_SEGMENT_VRAM, 0, 5 * PAGE, 5 * PAGE },
		{ NFENCE_SEGMENT_VRAM, DRM_NFENCE_ALLOC_CPU_VISIBLE, 1,
		  PAGE },
	};
	int afd = nfence_open();
	uint32_t dev = nfence_device_create(afd);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t sys = usage_of(afd, NFENCE_SEGMENT_SYSTEM);
		uint64_t vram = usage_of(afd, NFENCE_SEGMENT_VRAM);
		uint32_t other, handle;
		struct drm_nfence_alloc_create c = {
			.device = dev,
			.flags = cases[i].flags,
			.size = cases[i].size,
			.segment_id = cases[i].segment,
		};

		if (cases[i].segment == NFENCE_SEGMENT_VRAM &&
		    (cases[i].flags & DRM_NFENCE_ALLOC_CPU_VISIBLE) &&
		    !param_u64("vram_visible_mb"))
			continue;
		other = cases[i].segment == NFENCE_SEGMENT_SYSTEM ?
			NFENCE_SEGMENT_VRAM : NFENCE_SEGMENT_SYSTEM;
		igt_assert_eq(__nfence_alloc_create(afd, &c), 0);
		igt_assert_eq_u32(c.placed_segment_id, cases[i].segment);
		handle = c.handle;
		igt_assert_eq_u64(usage_of(afd, cases[i].segment),
				  (cases[i].segment == NFENCE_SEGMENT_SYSTEM ?
				   sys : vram) + cases[i].charged);
		igt_assert_eq_u64(usage_of(afd, other),
				  other == NFENCE_SEGMENT_SYSTEM ? sys : vram);
		nfence_alloc_destroy(afd, dev, handle);
		igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_SYSTEM), sys);
		igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_VRAM), vram);
	}
	nfence_device_destroy(afd, dev);
	close(afd);
}

/*
 * Another file's allocations, in the same process, do not count in this
 * file's usage, nor this file's in the other's; a mapped allocation stays
 * charged after its destroy until it is unmapped.
 */
static void test_segment_usage_other_file(void)
{
	int fda = nfence_open(), fdb = nfence_open();
	uint32_t deva = nfence_device_create(fda);
	uint32_t devb = nfence_device_create(fdb);
	uint64_t a_sys, a_vram, b_sys, b_vram;
	struct nfence_bo ba, bb, bv;

	nfence_watchdog(WATCHDOG_S);
	a_sys = usage_of(fda, NFENCE_SEGMENT_SYSTEM);
	a_vram = usage_of(fda, NFENCE_SEGMENT_VRAM);
	b_sys = usage_of(fdb, NFENCE_SEGMENT_SYSTEM);
	b_vram = usage_of(fdb, NFENCE_SEGMENT_VRAM);

	nfence_bo_create(fdb, devb, 8 * PAGE, NFENCE_SEGMENT_SYSTEM, 0, &bb);
	nfence_bo_create(fdb, devb, 2 * PAGE, NFENCE_SEGMENT_VRAM, 0, &bv);
	igt_assert_eq_u64(usage_of(fdb, NFENCE_SEGMENT_SYSTEM),
			  b_sys + 8 * PAGE);
	igt_assert_eq_u64(usage_of(fdb, NFENCE_SEGMENT_VRAM),
			  b_vram + 2 * PAGE);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_SYSTEM), a_sys);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_VRAM), a_vram);

	nfence_bo_create(fda, deva, PAGE, NFENCE_SEGMENT_SYSTEM, 0, &ba);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_SYSTEM), a_sys + PAGE);
	igt_assert_eq_u64(usage_of(fdb, NFENCE_SEGMENT_SYSTEM),
			  b_sys + 8 * PAGE);

	/* Destroyed while mapped: still B's until the mapping goes. */
	nfence_alloc_destroy(fdb, devb, bb.handle);
	igt_assert_eq_u64(usage_of(fdb, NFENCE_SEGMENT_SYSTEM),
			  b_sys + 8 * PAGE);
	nfence_bo_unmap(&bb);
	igt_assert_eq_u64(usage_of(fdb, NFENCE_SEGMENT_SYSTEM), b_sys);

	/* B's file closing does not touch A's count. */
	nfence_bo_destroy(&bv);
	close(fdb);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_SYSTEM), a_sys + PAGE);
	nfence_bo_destroy(&ba);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_SYSTEM), a_sys);
	igt_assert_eq_u64(usage_of(fda, NFENCE_SEGMENT_VRAM), a_vram);
	close(fda);
}

/*
 * Under per-client quotas: the budgets are the quotas, and a file filled
 * to its VRAM quota reports usage equal to its budget, the next page
 * refused without changing it.
 */
static void test_segment_usage_quota(void)
{
	struct drm_nfence_query_segment_usage *u;
	uint64_t vram_quota, sys_quota, used, before;
	struct drm_nfence_alloc_create c;
	uint32_t dev, handles[64];
	unsigned int n = 0;
	int afd;

	igt_require_f(nfence_param_u64("client_vram_mb", &vram_quota) &&
		      nfence_param_u64("client_sysmem_mb", &sys_quota) &&
		      vram_quota && sys_quota,
		      "needs per-client quotas (client_vram_mb, "
		      "client_sysmem_mb)\n");
	vram_quota *= MIB;
	sys_quota *= MIB;
	igt_require_f(vram_quota < param_u64("vram_mb") * MIB &&
		      sys_quota < param_u64("sysmem_mb") * MIB,
		      "needs quotas smaller than the segments\n");
	nfence_watchdog(WATCHDOG_S);
	afd = nfence_open();
	dev = nfence_device_create(afd);

	u = segment_usage(afd);
	igt_assert_eq_u64(u->segments[0].budget, sys_quota);
	igt_assert_eq_u64(u->segments[1].budget, vram_quota);
	free(u);

	before = usage_of(afd, NFENCE_SEGMENT_VRAM);
	used = before;
	while (used + MIB <= vram_quota) {
		igt_assert_lt(n, ARRAY_SIZE(handles));
		handles[n++] = nfence_alloc_create(afd, dev, MIB,
						   NFENCE_SEGMENT_VRAM, 0,
						   NULL);
		used += MIB;
		igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_VRAM), used);
	}
	while (used < vram_quota) {
		igt_assert_lt(n, ARRAY_SIZE(handles));
		handles[n++] = nfence_alloc_create(afd, dev, PAGE,
						   NFENCE_SEGMENT_VRAM, 0,
						   NULL);
		used += PAGE;
	}
	igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_VRAM), vram_quota);
	c = (struct drm_nfence_alloc_create){
		.device = dev,
		.size = PAGE,
		.segment_id = NFENCE_SEGMENT_VRAM,
	};
	igt_assert_eq(__nfence_alloc_create(afd, &c), -ENOSPC);
	igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_VRAM), vram_quota);

	while (n)
		nfence_alloc_destroy(afd, dev, handles[--n]);
	igt_assert_eq_u64(usage_of(afd, NFENCE_SEGMENT_VRAM), before);
	nfence_device_destroy(afd, dev);
	close(afd);
}

static void test_engines(void)
{
	struct drm_nfence_query_engines *e;
	bool ums = adapter.flags & DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION;
	uint32_t size;

	nfence_watchdog(WATCHDOG_S);
	e = nfence_query_alloc(fd, DRM_NFENCE_QUERY_ENGINES, &size);
	igt_assert_eq_u32(size, expected_size(DRM_NFENCE_QUERY_ENGINES));
	igt_assert_eq_u32(e->num_engines, adapter.num_engines);
	igt_assert_eq_u32(e->pad, 0);

	for (uint32_t i = 0; i < e->num_engines; i++) {
		struct drm_nfence_engine_info *info = &e->engines[i];

		igt_assert_eq_u32(info->ordinal, i);
		igt_assert_eq_u32(info->engine_class, i % 3);
		igt_assert_eq_u32(info->flags,
				  ums ? DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION :
					0);
		igt_assert_eq_u32(info->pad, 0);
	}
	free(e);
}

static void test_native_fence_caps(void)
{
	struct drm_nfence_query_fence_caps c;

	nfence_watchdog(WATCHDOG_S);
	memset(&c, CANARY, sizeof(c));
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS,
				       &c, sizeof(c)), sizeof(c));

	if (!(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE)) {
		assert_zero((const uint8_t *)&c, sizeof(c));
		return;
	}

	igt_assert_eq_u32(c.flags & ~FENCE_CAPS, 0);
	/* INTRA_GPU and cross-adapter fences and log buffers exist. */
	igt_assert_eq_u32(c.flags & (DRM_NFENCE_FENCE_CAP_INTRA_GPU |
				     DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
				     DRM_NFENCE_FENCE_CAP_LOG_BUFFERS),
			  DRM_NFENCE_FENCE_CAP_INTRA_GPU |
			  DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
			  DRM_NFENCE_FENCE_CAP_LOG_BUFFERS);
	igt_assert_eq(!!(c.flags & DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT),
		      param_bool("optimized_default_fence"));
	igt_assert_eq(!!(c.flags & DRM_NFENCE_FENCE_CAP_PEER_SIGNALS),
		      param_bool("peer_signals"));
	igt_assert_eq_u32(c.value_stride, 64);
	igt_assert_eq_u32(c.value_bits,
			  adapter.flags & DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS ?
			  32 : 64);
	/* A queue's at logging level ALL; DRM_NFENCE_LOG_ENTRIES otherwise. */
	igt_assert_eq_u32(c.max_log_entries, 340);
	igt_assert_eq_u32(c.log_header_size, 40);
	igt_assert_eq_u32(c.log_entry_size, 48);
}

static void test_ums_caps(void)
{
	struct drm_nfence_query_ums_caps c;

	nfence_watchdog(WATCHDOG_S);
	memset(&c, CANARY, sizeof(c));
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_UMS_CAPS,
				       &c, sizeof(c)), sizeof(c));

	if (!(adapter.flags & DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION)) {
		assert_zero((const uint8_t *)&c, sizeof(c));
		return;
	}

	igt_assert_eq_u32(c.doorbell_size, 4096);
	igt_assert_f(c.doorbell_model == DRM_NFENCE_DOORBELL_DEDICATED ||
		     c.doorbell_model == DRM_NFENCE_DOORBELL_GLOBAL,
		     "doorbell model %u\n", c.doorbell_model);
	igt_assert_lte(1, c.num_doorbells);
	igt_assert_lte(c.num_doorbells, 1024);
	igt_assert_eq_u32(c.pad, 0);
	igt_assert_eq_u64(c.doorbell_model,
			  param_u64("doorbell_model"));
	igt_assert_eq_u64(c.num_doorbells,
			  param_u64("num_doorbells"));
}

/* Caps walk: every engine runs a command buffer. */
static void exercise_engines(uint32_t dev)
{
	for (uint32_t e = 0; e < adapter.num_engines; e++) {
		struct nfence_queue q;
		struct nfence_cs cs;
		uint64_t v;

		nfence_queue_create(&q, fd, dev, e, 0);
		nfence_queue_begin(&q, &cs);
		nfence_cs_nop(&cs);
		v = nfence_queue_submit(&q, &cs);
		igt_assert_f(nfence_queue_poll(&q, v, 10000),
			     "engine %u ran nothing\n", e);
		nfence_queue_destroy(&q);
	}
}

/* Caps walk: both segments take an allocation, the visible part a CPU map. */
static void exercise_segments(uint32_t dev)
{
	struct drm_nfence_query_segments *s;
	struct nfence_bo bo;

	s = nfence_query_alloc(fd, DRM_NFENCE_QUERY_SEGMENTS, NULL);
	nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &bo);
	*nfence_bo_u64(&bo, 0) = 1;
	nfence_bo_destroy(&bo);
	nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_VRAM,
			 s->segments[1].cpu_visible_size ?
			 DRM_NFENCE_ALLOC_CPU_VISIBLE : 0, &bo);
	if (s->segments[1].cpu_visible_size) {
		*nfence_bo_u64(&bo, 8) = 2;
		igt_assert_eq_u64(*nfence_bo_u64(&bo, 8), 2);
	}
	nfence_bo_destroy(&bo);
	free(s);
}

/*
 * Caps walk: each native fence cap does what it says, the log buffers
 * are the size the caps give and a queue fills one.
 */
static void exercise_fences(uint32_t dev)
{
	struct drm_nfence_query_fence_caps c;
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_create fc;
	uint32_t h;

	nfence_query_fence_caps(fd, &c);
	if (!(adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE)) {
		fc = (struct drm_nfence_fence_create){ .device = dev };
		igt_assert_eq(__nfence_fence_create(fd, &fc), -EOPNOTSUPP);
		return;
	}
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_fence_signal(fd, dev, h, 5);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, 5, 0), 0);
	/* value_bits: how far ahead a value may go. */
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, h, 1ull << 40),
		      c.value_bits == 32 ? -EINVAL : 0);
	nfence_fence_destroy(fd, h);
	if (c.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU)
		nfence_fence_destroy(fd, nfence_fence_create(fd, dev,
				DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0, 0, NULL));
	if (c.flags & DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER) {
		h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
					DRM_NFENCE_FENCE_CROSS_ADAPTER |
					NFENCE_FENCE_SHAREABLE, 0, NULL);
		close(nfence_fence_share(fd, h));
		nfence_fence_destroy(fd, h);
	}
	if (c.flags & DRM_NFENCE_FENCE_CAP_LOG_BUFFERS) {
		struct drm_nfence_log_read r;
		struct nfence_queue q;
		struct nfence_cs cs;
		uint64_t v = 0;

		h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
					0, 0, &m);
		nfence_queue_create(&q, fd, dev, 0, 0);
		igt_assert_eq_u32(q.log_entries, DRM_NFENCE_LOG_ENTRIES);
		nfence_queue_destroy(&q);
		/* The largest log: a queue's while a tool traces. */
		igt_assert_eq_u32(nfence_logging_level(fd,
				DRM_NFENCE_LOGGING_LEVEL_ALL, 0),
				DRM_NFENCE_LOGGING_LEVEL_DEFAULT);
		nfence_queue_create(&q, fd, dev, 0, 0);
		igt_assert_eq_u32(q.log_entries, c.max_log_entries);
		/* 64 logged signals to a command buffer. */
		for (uint32_t i = 1; i <= c.max_log_entries; i++) {
			if (i % 64 == 1)
				nfence_queue_begin(&q, &cs);
			nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
						   m.monitored_value_gpu_va, i,
						   h, DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED);
			if (i % 64 == 0 || i == c.max_log_entries)
				v = nfence_queue_submit(&q, &cs);
		}
		igt_assert(nfence_queue_poll(&q, v, 10000));
		/* Filled exactly: the index back at 0, one wraparound. */
		r = (struct drm_nfence_log_read){
			.device = dev, .hwqueue = q.handle,
			.type = DRM_NFENCE_LOG_TYPE_SIGNALS,
		};
		igt_assert_eq(__nfence_log_read(fd, &r), 0);
		igt_assert_eq_u64(r.header.num_entries, c.max_log_entries);
		igt_assert_eq_u32(r.header.first_free_entry_index, 0);
		igt_assert_eq_u32(r.header.wraparound_count, 1);
		igt_assert_lte(c.log_header_size +
			       (uint64_t)c.max_log_entries * c.log_entry_size,
			       16384);
		nfence_queue_destroy(&q);
		nfence_logging_level(fd, DRM_NFENCE_LOGGING_LEVEL_DEFAULT, 0);
		nfence_fence_destroy(fd, h);
	}
}

/* A user-mode queue with its ring, ring control and doorbell. */
struct ums_queue {
	uint32_t context, handle, db;
	struct nfence_bo ring, ctl;
	const volatile uint64_t *status;
};

/* A user-mode queue on @engine with a doorbell: 0 or the create's error. */
static int ums_queue(uint32_t dev, uint32_t engine, struct ums_queue *u)
{
	struct drm_nfence_doorbell_create c = { .device = dev };
	struct drm_nfence_hwqueue_create qc = {
		.device = dev,
		.flags = DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION,
	};
	struct drm_nfence_query_ums_caps caps;
	void *p;
	int ret;

	memset(u, 0, sizeof(*u));
	qc.context = nfence_context_create(fd, dev, engine);
	ret = __nfence_hwqueue_create(fd, &qc);
	if (ret) {
		nfence_context_destroy(fd, dev, qc.context);
		return ret;
	}
	u->context = qc.context;
	u->handle = qc.handle;
	nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &u->ring);
	nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &u->ctl);
	c.hwqueue = qc.handle;
	c.ring_alloc = u->ring.handle;
	c.ring_control_alloc = u->ctl.handle;
	igt_assert_eq(__nfence_doorbell_create(fd, &c), 0);
	u->db = c.handle;
	/* The doorbell page is doorbell_size bytes: it maps whole. */
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_UMS_CAPS, &caps,
				       sizeof(caps)), sizeof(caps));
	p = mmap(NULL, caps.doorbell_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, c.doorbell_offset);
	igt_assert(p != MAP_FAILED);
	munmap(p, caps.doorbell_size);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, c.status_offset);
	igt_assert(p != MAP_FAILED);
	u->status = p;
	return 0;
}

static void ums_queue_destroy(uint32_t dev, struct ums_queue *u)
{
	munmap((void *)u->status, 4096);
	igt_assert_eq(__nfence_doorbell_destroy(fd, dev, u->db), 0);
	nfence_bo_destroy(&u->ring);
	nfence_bo_destroy(&u->ctl);
	nfence_hwqueue_destroy(fd, dev, u->handle);
	nfence_context_destroy(fd, dev, u->context);
}

static uint32_t ums_connect(uint32_t dev, const struct ums_queue *u)
{
	struct drm_nfence_doorbell_connect c = {
		.device = dev, .handle = u->db,
	};

	igt_assert_eq(__nfence_doorbell_connect(fd, &c), 0);
	return c.status;
}

/*
 * Caps walk: user-mode queues on exactly the engines that say so, and as
 * many connected doorbells as the adapter has; one more takes one of them
 * (dedicated model) or shares the one (global model).
 */
static void exercise_ums(uint32_t dev)
{
	enum { MAX_DB = 32 };
	struct drm_nfence_query_engines *e;
	struct drm_nfence_query_ums_caps c;
	struct ums_queue u[MAX_DB + 1];
	uint32_t n, taken = 0;

	e = nfence_query_alloc(fd, DRM_NFENCE_QUERY_ENGINES, NULL);
	for (uint32_t i = 0; i < e->num_engines; i++) {
		bool ums = e->engines[i].flags &
			   DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION;
		int ret = ums_queue(dev, i, &u[0]);

		igt_assert_eq(ret, ums ? 0 : -EOPNOTSUPP);
		if (!ret)
			ums_queue_destroy(dev, &u[0]);
	}
	free(e);
	if (!(adapter.flags & DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION))
		return;

	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_UMS_CAPS, &c,
				       sizeof(c)), sizeof(c));
	n = c.doorbell_model == DRM_NFENCE_DOORBELL_GLOBAL ? 2 :
	    c.num_doorbells;
	igt_require_f(n <= MAX_DB, "%u doorbells\n", n);
	/* n connect without taking any; the (n + 1)th takes one, or not. */
	for (uint32_t i = 0; i <= n; i++) {
		igt_assert_eq(ums_queue(dev, 0, &u[i]), 0);
		igt_assert_neq_u32(ums_connect(dev, &u[i]),
				   DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
		if (i == n - 1)
			for (uint32_t j = 0; j < n; j++)
				igt_assert_neq_u64(*u[j].status,
						   DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY);
	}
	for (uint32_t i = 0; i < n; i++)
		taken += *u[i].status == DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY;
	igt_assert_eq_u32(taken, c.doorbell_model ==
			  DRM_NFENCE_DOORBELL_GLOBAL ? 0 : 1);
	for (uint32_t i = 0; i <= n; i++)
		ums_queue_destroy(dev, &u[i]);
}

/* Every capability the adapter advertises, exercised. */
static void test_caps_exercised(void)
{
	uint32_t dev;

	nfence_watchdog(WATCHDOG_S);
	dev = nfence_device_create(fd);
	exercise_engines(dev);
	exercise_segments(dev);
	exercise_fences(dev);
	exercise_ums(dev);
	nfence_device_destroy(fd, dev);
}

static void test_timestamp(void)
{
	struct drm_nfence_query_timestamp ts;
	uint64_t before, after;

	nfence_watchdog(WATCHDOG_S);
	before = nfence_monotonic_ns();
	nfence_query_timestamp(fd, &ts);
	after = nfence_monotonic_ns();

	igt_assert_lte_u64(before, ts.cpu_monotonic_ns);
	igt_assert_lte_u64(ts.cpu_monotonic_ns, after);
	igt_assert_neq_u64(ts.gpu_timestamp, 0);
}

static void test_timestamp_correlated(void)
{
	struct drm_nfence_query_timestamp t0, t1;
	uint64_t dcpu, dgpu_ns, slack;

	nfence_watchdog(WATCHDOG_S);
	nfence_query_timestamp(fd, &t0);
	usleep(50 * 1000);
	nfence_query_timestamp(fd, &t1);

	igt_assert_lt_u64(t0.gpu_timestamp, t1.gpu_timestamp);
	igt_assert_lt_u64(t0.cpu_monotonic_ns, t1.cpu_monotonic_ns);

	dcpu = t1.cpu_monotonic_ns - t0.cpu_monotonic_ns;
	dgpu_ns = (t1.gpu_timestamp - t0.gpu_timestamp) * 1000000000ull /
		  adapter.timestamp_frequency;
	slack = dcpu / 20 + 1000000;
	igt_info("cpu %" PRIu64 " ns, gpu %" PRIu64 " ns\n", dcpu, dgpu_ns);
	igt_assert_f(dgpu_ns + slack >= dcpu && dgpu_ns <= dcpu + slack,
		     "GPU clock advanced %" PRIu64 " ns over %" PRIu64
		     " ns of CLOCK_MONOTONIC\n", dgpu_ns, dcpu);
}

static void test_size_zero(void)
{
	size_t ro_size;
	void *ro = nfence_readonly_page(&ro_size);
	const uint64_t datas[] = {
		0,				/* may be NULL when asking */
		(uintptr_t)ro,			/* not writable */
		0xffff800000000000ull,		/* kernel address */
		~0ull,
	};

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		for (unsigned int i = 0; i < sizeof(datas) / sizeof(datas[0]);
		     i++) {
			struct drm_nfence_query q = {
				.type = type,
				.data = datas[i],
			};

			igt_assert_eq(__nfence_query(fd, &q), 0);
			igt_assert_eq_u32(q.size, expected_size(type));
			igt_assert_eq_u32(q.type, type);
			igt_assert_eq_u64(q.data, datas[i]);
			igt_assert_eq_u32(q.flags, 0);
			igt_assert_eq_u32(q.pad, 0);
			igt_assert_eq_u64(q.reserved[0], 0);
			igt_assert_eq_u64(q.reserved[1], 0);
		}

		{
			/* Asking writes nothing at data. */
			uint8_t *buf = canary_alloc(SLACK);
			struct drm_nfence_query q = {
				.type = type,
				.data = (uintptr_t)buf,
			};

			igt_assert_eq(__nfence_query(fd, &q), 0);
			igt_assert_eq_u32(q.size, expected_size(type));
			assert_canary(buf, 0, SLACK);
			free(buf);
		}
	}
	assert_zero(ro, ro_size);
	munmap(ro, ro_size);
}

/* Query @type with a buffer of @size, check what came back. */
static void query_with_size(uint32_t type, uint32_t size, size_t alloc)
{
	uint32_t needed = expected_size(type);
	uint8_t *buf = canary_alloc(alloc + SLACK);
	uint8_t *ref = calloc(1, needed);
	struct drm_nfence_query q = {
		.type = type,
		.size = size,
		.data = (uintptr_t)buf,
	};

	igt_assert(ref);
	igt_assert_eq(__nfence_query(fd, &q), 0);
	igt_assert_eq_u32(q.size, needed);
	igt_assert_eq_u64(q.data, (uintptr_t)buf);
	/* Exactly the needed bytes are written, nothing after them. */
	assert_canary(buf, needed, alloc + SLACK);

	if (type != DRM_NFENCE_QUERY_TIMESTAMP) {
		igt_assert_eq_u32(nfence_query(fd, type, ref, needed), needed);
		igt_assert(!memcmp(buf, ref, needed));
	}
	free(ref);
	free(buf);
}

static void test_exact_size(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++)
		query_with_size(type, expected_size(type), expected_size(type));
}

static void test_larger_size(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		uint32_t needed = expected_size(type);

		query_with_size(type, needed + 1, needed + 1);
		query_with_size(type, needed + 8, needed + 8);
		query_with_size(type, 4096, 4096);
	}
}

static void test_size_u32_max(void)
{
	nfence_watchdog(WATCHDOG_S);
	/*
	 * The kernel must write (and check) only the needed bytes, not try
	 * to validate or clear 4 GiB.
	 */
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++)
		query_with_size(type, UINT32_MAX, expected_size(type));
}

static void test_short_size(uint32_t type)
{
	uint32_t needed = expected_size(type);

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t size = 1; size < needed; size++) {
		struct drm_nfence_query q = { .type = type, .size = size };

		expect_einval(&q);
	}
}

static void test_bad_flags(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		for (int i = 0; i < 2; i++) {
			for (int bit = 0; bit < 32; bit++) {
				struct drm_nfence_query q = {
					.type = type,
					.size = probe_size(type, i),
					.flags = 1u << bit,
				};

				expect_einval(&q);
			}
		}
	}
}

static void test_bad_pad(void)
{
	const uint32_t pads[] = { 1, 0x80000000u, UINT32_MAX };

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		for (int i = 0; i < 2; i++) {
			for (unsigned int p = 0; p < 3; p++) {
				struct drm_nfence_query q = {
					.type = type,
					.size = probe_size(type, i),
					.pad = pads[p],
				};

				expect_einval(&q);
			}
		}
	}
}

static void test_bad_reserved(int word)
{
	const uint64_t values[] = { 1, 1ull << 32, 1ull << 63, UINT64_MAX };

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		for (int i = 0; i < 2; i++) {
			for (unsigned int v = 0; v < 4; v++) {
				struct drm_nfence_query q = {
					.type = type,
					.size = probe_size(type, i),
				};

				q.reserved[word] = values[v];
				expect_einval(&q);
			}
		}
	}
}

static void expect_bad_type(uint32_t type)
{
	const uint32_t sizes[] = { 0, 1, 4096 };

	for (unsigned int i = 0; i < 3; i++) {
		struct drm_nfence_query q = { .type = type, .size = sizes[i] };

		expect_einval(&q);
	}
}

static void test_bad_type(uint32_t type)
{
	nfence_watchdog(WATCHDOG_S);
	expect_bad_type(type);
}

static void test_bad_type_range(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = DRM_NFENCE_QUERY_COUNT;
	     type < DRM_NFENCE_QUERY_COUNT + 64; type++)
		expect_bad_type(type);
	for (int bit = 3; bit < 32; bit++)
		expect_bad_type(1u << bit);
	expect_bad_type(INT32_MAX);
}

static void test_null_data(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		struct drm_nfence_query q = {
			.type = type,
			.size = expected_size(type),
		};

		expect_efault(&q);
		q.size = 4096;
		expect_efault(&q);
	}
}

static void test_readonly_data(void)
{
	size_t ro_size;
	uint8_t *ro = nfence_readonly_page(&ro_size);

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		struct drm_nfence_query q = {
			.type = type,
			.size = expected_size(type),
			.data = (uintptr_t)ro,
		};

		expect_efault(&q);
		q.data = (uintptr_t)(ro + ro_size - expected_size(type));
		expect_efault(&q);
	}
	assert_zero(ro, ro_size);
	munmap(ro, ro_size);
}

static void test_straddle_readonly(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint8_t *map;

	nfence_watchdog(WATCHDOG_S);
	/* A writable page followed by a read-only one. */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(map != MAP_FAILED);
	igt_assert_eq(mprotect(map + page, page, PROT_READ), 0);

	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		uint32_t needed = expected_size(type);
		struct drm_nfence_query q = {
			.type = type,
			.size = needed,
			.data = (uintptr_t)(map + page - needed / 2),
		};

		expect_efault(&q);
	}
	assert_zero(map + page, page);
	munmap(map, 2 * page);
}

static void test_unmapped_data(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint8_t *map;

	nfence_watchdog(WATCHDOG_S);
	map = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(map != MAP_FAILED);

	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		struct drm_nfence_query q = {
			.type = type,
			.size = expected_size(type),
			.data = (uintptr_t)map,
		};

		/* PROT_NONE, then not mapped at all. */
		expect_efault(&q);
	}
	munmap(map, page);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		struct drm_nfence_query q = {
			.type = type,
			.size = expected_size(type),
			.data = (uintptr_t)map,
		};

		expect_efault(&q);
	}
}

static void test_kernel_data(void)
{
	const uint64_t datas[] = {
		0xffff800000000000ull,	/* kernel half */
		0xffffffff81000000ull,	/* kernel text */
		UINT64_MAX - 7,		/* data + size wraps around */
		1ull << 63,		/* non-canonical */
	};

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		for (unsigned int i = 0; i < 4; i++) {
			struct drm_nfence_query q = {
				.type = type,
				.size = expected_size(type),
				.data = datas[i],
			};

			expect_efault(&q);
		}
	}
}

static void test_stable(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++) {
		uint32_t s0, s1;
		void *a, *b;

		if (type == DRM_NFENCE_QUERY_TIMESTAMP)
			continue;
		a = nfence_query_alloc(fd, type, &s0);
		b = nfence_query_alloc(fd, type, &s1);
		igt_assert_eq_u32(s0, s1);
		igt_assert_f(!memcmp(a, b, s0), "%s answer changed\n",
			     nfence_query_name(type));
		free(a);
		free(b);
	}
}

static void test_every_adapter(void)
{
	int count = nfence_count_adapters();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < count; i++) {
		struct drm_nfence_query_adapter a;
		int afd = nfence_open_adapter(i);

		nfence_query_adapter(afd, &a);
		igt_assert_eq_u32(a.index, i);
		for (uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT; type++)
			free(nfence_query_alloc(afd, type, NULL));
		close(afd);
	}
}

/*
 * Four children query through the file they inherited, interleaved. Since
 * 6.8 the DRM core records which process uses a file and, each time that
 * changes, waits for an RCU grace period inside the ioctl
 * (drm_file_update_pid()): interleaved callers pay one per call, about
 * 17 ms under emulation; 50 rounds each still hand the file over
 * hundreds of times.
 */
static void test_forked(void)
{
	nfence_watchdog(WATCHDOG_S);
	igt_fork(child, 4) {
		struct drm_nfence_query_timestamp prev, cur;
		struct drm_nfence_query_adapter a;

		nfence_query_timestamp(fd, &prev);
		for (int i = 0; i < 50; i++) {
			nfence_query_adapter(fd, &a);
			igt_assert(!memcmp(&a, &adapter, sizeof(a)));
			nfence_query_timestamp(fd, &cur);
			igt_assert_lte_u64(prev.gpu_timestamp,
					   cur.gpu_timestamp);
			prev = cur;
		}
	}
	igt_waitchildren();
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
	}

	igt_describe("ADAPTER: LUID, index, capability flags, engine and "
		     "segment counts and the timestamp frequency match the "
		     "contract and the module parameters, on every adapter.");
	igt_subtest("adapter")
		on_every_adapter(test_adapter);

	igt_describe("SEGMENTS: a system segment (id 1) and a local one "
		     "(id 2) sized by the module parameters.");
	igt_subtest("segments")
		on_every_adapter(test_segments);

	igt_describe("SEGMENT_USAGE: one entry per segment with the ids of "
		     "SEGMENTS, budgets the client quotas bounded by the "
		     "segment sizes, usage 0 for a new file, on every "
		     "adapter.");
	igt_subtest("segment-usage")
		test_segment_usage();

	igt_describe("SEGMENT_USAGE: an allocation raises its segment's usage "
		     "by its page-aligned size, no other segment's, and its "
		     "destroy gives the bytes back.");
	igt_subtest("segment-usage-alloc")
		test_segment_usage_alloc();

	igt_describe("SEGMENT_USAGE: another file's allocations do not count, "
		     "and a destroyed allocation still mapped counts until "
		     "unmapped.");
	igt_subtest("segment-usage-other-file")
		test_segment_usage_other_file();

	igt_describe("SEGMENT_USAGE under per-client quotas: the budgets are "
		     "the quotas; filled to its VRAM quota a file's usage "
		     "equals its budget and stays there when one page more "
		     "is refused.");
	igt_subtest("segment-usage-quota")
		test_segment_usage_quota();

	igt_describe("ENGINES: one entry per engine, ordinals in order, "
		     "classes 3D/COMPUTE/COPY round robin.");
	igt_subtest("engines")
		on_every_adapter(test_engines);

	igt_describe("NATIVE_FENCE_CAPS: the documented capabilities, or all "
		     "zero without native fences.");
	igt_subtest("native-fence-caps")
		on_every_adapter(test_native_fence_caps);

	igt_describe("UMS_CAPS: doorbell size, model and count, or all zero "
		     "without user-mode submission.");
	igt_subtest("ums-caps")
		on_every_adapter(test_ums_caps);

	igt_describe("Every advertised capability, exercised on every "
		     "adapter: each engine runs work, both segments take an "
		     "allocation, each native fence cap creates its fence "
		     "(and value_bits bounds a signal), a queue fills a log "
		     "buffer of max_log_entries exactly, user-mode queues "
		     "exist on the engines that say so and num_doorbells "
		     "doorbells connect before one is taken.");
	igt_subtest("caps-exercised")
		on_every_adapter(test_caps_exercised);

	igt_describe("TIMESTAMP: cpu_monotonic_ns lies between two "
		     "CLOCK_MONOTONIC reads around the call.");
	igt_subtest("timestamp")
		test_timestamp();

	igt_describe("TIMESTAMP: over a sleep, the GPU clock advances as much "
		     "as CLOCK_MONOTONIC at timestamp_frequency.");
	igt_subtest("timestamp-correlated")
		test_timestamp_correlated();

	igt_describe("size 0 asks: returns the needed size for every type, "
		     "data may be NULL or unwritable and is not touched.");
	igt_subtest("size-zero")
		test_size_zero();

	igt_describe("A buffer of exactly the needed size is filled and "
		     "nothing past it is written.");
	igt_subtest("exact-size")
		test_exact_size();

	igt_describe("A larger buffer works; size is written back as the "
		     "needed size and the rest is untouched.");
	igt_subtest("larger-size")
		test_larger_size();

	igt_describe("size = UINT32_MAX only writes the needed bytes.");
	igt_subtest("size-u32-max")
		test_size_u32_max();

	/* volatile: the loop variables survive the subtests' siglongjmp. */
	for (volatile uint32_t type = 0; type < DRM_NFENCE_QUERY_COUNT;
	     type++) {
		igt_describe("Every size from 1 to one byte short of the "
			     "answer fails with -EINVAL and writes nothing.");
		igt_subtest_f("short-size-%s", nfence_query_name(type))
			test_short_size(type);
	}

	igt_describe("Each non-zero flags bit fails with -EINVAL for every "
		     "type, asking or not, and changes nothing.");
	igt_subtest("bad-flags")
		test_bad_flags();

	igt_describe("Non-zero pad fails with -EINVAL and changes nothing.");
	igt_subtest("bad-pad")
		test_bad_pad();

	for (volatile int word = 0; word < 2; word++) {
		igt_describe("A non-zero reserved word fails with -EINVAL and "
			     "changes nothing.");
		igt_subtest_f("bad-reserved-%d", word)
			test_bad_reserved(word);
	}

	igt_describe("type DRM_NFENCE_QUERY_COUNT is not a query: -EINVAL, "
		     "also when only asking for the size.");
	igt_subtest("bad-type-count")
		test_bad_type(DRM_NFENCE_QUERY_COUNT);

	igt_describe("type 0xffffffff fails with -EINVAL.");
	igt_subtest("bad-type-max")
		test_bad_type(UINT32_MAX);

	igt_describe("Types past the last one and with high bits set fail "
		     "with -EINVAL.");
	igt_subtest("bad-type-range")
		test_bad_type_range();

	igt_describe("NULL data with a large enough size fails with -EFAULT.");
	igt_subtest("null-data")
		test_null_data();

	igt_describe("data in a read-only mapping fails with -EFAULT.");
	igt_subtest("readonly-data")
		test_readonly_data();

	igt_describe("An answer crossing from a writable into a read-only "
		     "page fails with -EFAULT.");
	igt_subtest("straddle-readonly")
		test_straddle_readonly();

	igt_describe("data in a PROT_NONE or unmapped page fails with "
		     "-EFAULT.");
	igt_subtest("unmapped-data")
		test_unmapped_data();

	igt_describe("Kernel, non-canonical and wrapping data pointers fail "
		     "with -EFAULT.");
	igt_subtest("kernel-data")
		test_kernel_data();

	igt_describe("Repeated queries give identical answers.");
	igt_subtest("stable")
		test_stable();

	igt_describe("Every adapter answers every query type.");
	igt_subtest("every-adapter")
		test_every_adapter();

	igt_describe("Forked children sharing the file query concurrently.");
	igt_subtest("forked")
		test_forked();

	igt_fixture {
		nfence_watchdog(0);
		close(fd);
	}
}
