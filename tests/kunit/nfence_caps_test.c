// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for capability encoding (nfence_caps.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/sizes.h>

#include <drm/nfence_drm.h>

#include "../nfence_caps.h"
#include "../nfence_gpu.h"
#include "../nfence_log.h"

static const struct nfence_gpu_config base_cfg = {
	.num_engines = 3,
	.doorbell_model = DRM_NFENCE_DOORBELL_DEDICATED,
	.num_doorbells = 16,
	.vram_size = SZ_4M,
	.vram_visible_size = SZ_1M,
	.sysmem_size = SZ_8M,
	.native_fence = true,
	.optimized_default_fence = true,
	.user_mode_submission = true,
};

/*
 * A GPU described but not powered up: the caps only read its description,
 * so no VRAM and no CMP thread are needed.
 */
static struct nfence_gpu *caps_gpu(struct kunit *test,
				   const struct nfence_gpu_config *cfg)
{
	struct nfence_gpu *gpu;

	KUNIT_ASSERT_EQ(test, 0, nfence_gpu_config_validate(cfg));
	gpu = kunit_kzalloc(test, sizeof(*gpu), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpu);
	gpu->cfg = *cfg;
	gpu->index = 5;
	gpu->luid_low = 0xabcd0005;
	gpu->luid_high = 0x12;
	nfence_gpu_setup_engines(gpu);
	gpu->segments[0] = (struct nfence_segment) {
		.id = NFENCE_SEGMENT_ID_SYSTEM,
		.flags = DRM_NFENCE_SEGMENT_SYSTEM |
			 DRM_NFENCE_SEGMENT_CPU_VISIBLE,
		.size = cfg->sysmem_size,
		.cpu_visible_size = cfg->sysmem_size,
	};
	gpu->segments[1] = (struct nfence_segment) {
		.id = NFENCE_SEGMENT_ID_LOCAL,
		.flags = DRM_NFENCE_SEGMENT_LOCAL,
		.size = cfg->vram_size,
		.cpu_visible_size = cfg->vram_visible_size,
	};
	return gpu;
}

/* The answer to @type for a file whose segment usage is @usage. */
static void *caps_query_usage(struct kunit *test, struct nfence_gpu *gpu,
			      struct nfence_segment_usage *usage, u32 type)
{
	size_t size = nfence_caps_size(gpu, type);
	void *buf;

	KUNIT_ASSERT_GT(test, size, 0);
	buf = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	nfence_caps_fill(gpu, usage, type, buf);
	return buf;
}

/* The answer to @type for a file that holds nothing. */
static void *caps_query(struct kunit *test, struct nfence_gpu *gpu, u32 type)
{
	struct nfence_segment_usage *usage;

	usage = kunit_kzalloc(test, sizeof(*usage), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, usage);
	return caps_query_usage(test, gpu, usage, type);
}

static void caps_sizes(struct kunit *test)
{
	struct nfence_gpu_config cfg = base_cfg;
	struct nfence_gpu *gpu;
	u32 n;

	for (n = 1; n <= NFENCE_MAX_ENGINES; n++) {
		cfg.num_engines = n;
		gpu = caps_gpu(test, &cfg);
		KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_ENGINES),
				8 + n * sizeof(struct drm_nfence_engine_info));
	}
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_ADAPTER),
			sizeof(struct drm_nfence_query_adapter));
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_SEGMENTS),
			8 + 2 * sizeof(struct drm_nfence_segment_info));
	KUNIT_EXPECT_EQ(test,
			nfence_caps_size(gpu, DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS),
			sizeof(struct drm_nfence_query_fence_caps));
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_UMS_CAPS),
			sizeof(struct drm_nfence_query_ums_caps));
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_TIMESTAMP),
			sizeof(struct drm_nfence_query_timestamp));
	KUNIT_EXPECT_EQ(test,
			nfence_caps_size(gpu, DRM_NFENCE_QUERY_SEGMENT_USAGE),
			8 + 2 * sizeof(struct drm_nfence_segment_usage));
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, DRM_NFENCE_QUERY_COUNT), 0);
	KUNIT_EXPECT_EQ(test, nfence_caps_size(gpu, U32_MAX), 0);
}

/* The uapi layout is ABI: sizes and offsets must never change. */
static void caps_uapi_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query), 40);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query_adapter), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_segment_info), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_engine_info), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query_fence_caps), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query_ums_caps), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query_timestamp), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_segment_usage), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_nfence_segment_usage, budget),
			8);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_nfence_segment_usage, usage),
			16);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_query_segment_usage), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_device_create), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_nfence_device_destroy), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_nfence_query, data), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_nfence_query, reserved), 24);
	KUNIT_EXPECT_EQ(test,
			offsetof(struct drm_nfence_query_adapter,
				 timestamp_frequency), 24);
}

static void caps_adapter(struct kunit *test)
{
	struct nfence_gpu_config cfg = base_cfg;
	struct drm_nfence_query_adapter *a;

	a = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_ADAPTER);
	KUNIT_EXPECT_EQ(test, a->luid_low, 0xabcd0005);
	KUNIT_EXPECT_EQ(test, a->luid_high, 0x12);
	KUNIT_EXPECT_EQ(test, a->index, 5);
	KUNIT_EXPECT_EQ(test, a->num_engines, 3);
	KUNIT_EXPECT_EQ(test, a->num_segments, NFENCE_NUM_SEGMENTS);
	KUNIT_EXPECT_EQ(test, a->timestamp_frequency, NFENCE_TIMESTAMP_FREQUENCY);
	KUNIT_EXPECT_EQ(test, a->flags, DRM_NFENCE_ADAPTER_NATIVE_FENCE |
			DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION);

	cfg.native_fence = false;
	cfg.optimized_default_fence = false;
	cfg.user_mode_submission = false;
	cfg.no_64bit_atomics = true;
	a = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_ADAPTER);
	KUNIT_EXPECT_EQ(test, a->flags, DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS);
}

static void caps_segments(struct kunit *test)
{
	struct drm_nfence_query_segments *s;

	s = caps_query(test, caps_gpu(test, &base_cfg),
		       DRM_NFENCE_QUERY_SEGMENTS);
	KUNIT_ASSERT_EQ(test, s->num_segments, 2);
	KUNIT_EXPECT_EQ(test, s->segments[0].id, NFENCE_SEGMENT_ID_SYSTEM);
	KUNIT_EXPECT_EQ(test, s->segments[0].size, (u64)SZ_8M);
	KUNIT_EXPECT_EQ(test, s->segments[0].cpu_visible_size, (u64)SZ_8M);
	KUNIT_EXPECT_TRUE(test, s->segments[0].flags & DRM_NFENCE_SEGMENT_SYSTEM);
	KUNIT_EXPECT_EQ(test, s->segments[1].id, NFENCE_SEGMENT_ID_LOCAL);
	KUNIT_EXPECT_EQ(test, s->segments[1].size, (u64)SZ_4M);
	KUNIT_EXPECT_EQ(test, s->segments[1].cpu_visible_size, (u64)SZ_1M);
	KUNIT_EXPECT_TRUE(test, s->segments[1].flags & DRM_NFENCE_SEGMENT_LOCAL);
}

/*
 * SEGMENT_USAGE: each segment's budget is its client quota bounded by its
 * size (no quota: the size), its usage the asking file's counter of that
 * segment id, never another segment's.
 */
static void caps_segment_usage(struct kunit *test)
{
	struct nfence_gpu *gpu = caps_gpu(test, &base_cfg);
	struct drm_nfence_query_segment_usage *u;
	struct nfence_segment_usage *usage;

	usage = kunit_kzalloc(test, sizeof(*usage), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, usage);
	atomic64_set(&usage->used[NFENCE_SEGMENT_ID_SYSTEM - 1], 3 * SZ_4K);
	atomic64_set(&usage->used[NFENCE_SEGMENT_ID_LOCAL - 1], 5 * SZ_4K);

	u = caps_query_usage(test, gpu, usage, DRM_NFENCE_QUERY_SEGMENT_USAGE);
	KUNIT_ASSERT_EQ(test, u->num_segments, 2);
	KUNIT_EXPECT_EQ(test, u->pad, 0);
	KUNIT_EXPECT_EQ(test, u->segments[0].id, NFENCE_SEGMENT_ID_SYSTEM);
	KUNIT_EXPECT_EQ(test, u->segments[0].pad, 0);
	KUNIT_EXPECT_EQ(test, u->segments[0].budget, (u64)SZ_8M);
	KUNIT_EXPECT_EQ(test, u->segments[0].usage, (u64)3 * SZ_4K);
	KUNIT_EXPECT_EQ(test, u->segments[1].id, NFENCE_SEGMENT_ID_LOCAL);
	KUNIT_EXPECT_EQ(test, u->segments[1].pad, 0);
	KUNIT_EXPECT_EQ(test, u->segments[1].budget, (u64)SZ_4M);
	KUNIT_EXPECT_EQ(test, u->segments[1].usage, (u64)5 * SZ_4K);

	/* Quotas below the sizes are the budgets; above, the sizes are. */
	gpu->segments[0].client_quota = SZ_2M;
	gpu->segments[1].client_quota = SZ_1M;
	u = caps_query_usage(test, gpu, usage, DRM_NFENCE_QUERY_SEGMENT_USAGE);
	KUNIT_EXPECT_EQ(test, u->segments[0].budget, (u64)SZ_2M);
	KUNIT_EXPECT_EQ(test, u->segments[1].budget, (u64)SZ_1M);
	gpu->segments[0].client_quota = SZ_16M;
	gpu->segments[1].client_quota = SZ_4M;
	u = caps_query_usage(test, gpu, usage, DRM_NFENCE_QUERY_SEGMENT_USAGE);
	KUNIT_EXPECT_EQ(test, u->segments[0].budget, (u64)SZ_8M);
	KUNIT_EXPECT_EQ(test, u->segments[1].budget, (u64)SZ_4M);

	/* Another file's counters are its own. */
	u = caps_query(test, gpu, DRM_NFENCE_QUERY_SEGMENT_USAGE);
	KUNIT_EXPECT_EQ(test, u->segments[0].usage, 0);
	KUNIT_EXPECT_EQ(test, u->segments[1].usage, 0);
}

static void caps_engines(struct kunit *test)
{
	static const u32 classes[] = {
		DRM_NFENCE_ENGINE_CLASS_3D, DRM_NFENCE_ENGINE_CLASS_COMPUTE,
		DRM_NFENCE_ENGINE_CLASS_COPY,
	};
	struct nfence_gpu_config cfg = base_cfg;
	struct drm_nfence_query_engines *e;
	u32 i;

	cfg.num_engines = NFENCE_MAX_ENGINES;
	e = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_ENGINES);
	KUNIT_ASSERT_EQ(test, e->num_engines, NFENCE_MAX_ENGINES);
	for (i = 0; i < NFENCE_MAX_ENGINES; i++) {
		KUNIT_EXPECT_EQ(test, e->engines[i].ordinal, i);
		KUNIT_EXPECT_EQ(test, e->engines[i].engine_class, classes[i % 3]);
		KUNIT_EXPECT_EQ(test, e->engines[i].flags,
				DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION);
		KUNIT_EXPECT_EQ(test, e->engines[i].pad, 0);
	}

	cfg.user_mode_submission = false;
	e = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_ENGINES);
	for (i = 0; i < NFENCE_MAX_ENGINES; i++)
		KUNIT_EXPECT_EQ(test, e->engines[i].flags, 0);
}

static void caps_native_fence(struct kunit *test)
{
	struct nfence_gpu_config cfg = base_cfg;
	struct drm_nfence_query_fence_caps *f;
	static const struct drm_nfence_query_fence_caps zero;

	f = caps_query(test, caps_gpu(test, &cfg),
		       DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS);
	KUNIT_EXPECT_EQ(test, f->flags, DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT |
			DRM_NFENCE_FENCE_CAP_INTRA_GPU |
			DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
			DRM_NFENCE_FENCE_CAP_LOG_BUFFERS);
	KUNIT_EXPECT_EQ(test, f->value_stride, NFENCE_FENCE_VALUE_STRIDE);
	KUNIT_EXPECT_EQ(test, f->value_bits, 64);
	KUNIT_EXPECT_EQ(test, f->log_header_size, NFENCE_LOG_HEADER_SIZE);
	KUNIT_EXPECT_EQ(test, f->log_entry_size, NFENCE_LOG_ENTRY_SIZE);
	KUNIT_EXPECT_EQ(test, f->max_log_entries, NFENCE_LOG_ENTRIES_ALL);

	cfg.optimized_default_fence = false;
	cfg.no_64bit_atomics = true;
	f = caps_query(test, caps_gpu(test, &cfg),
		       DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS);
	KUNIT_EXPECT_FALSE(test, f->flags & DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT);
	KUNIT_EXPECT_EQ(test, f->value_bits, 32);

	cfg.native_fence = false;
	f = caps_query(test, caps_gpu(test, &cfg),
		       DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS);
	KUNIT_EXPECT_MEMEQ(test, f, &zero, sizeof(zero));
}

static void caps_ums(struct kunit *test)
{
	struct nfence_gpu_config cfg = base_cfg;
	struct drm_nfence_query_ums_caps *u;
	static const struct drm_nfence_query_ums_caps zero;

	cfg.doorbell_model = DRM_NFENCE_DOORBELL_GLOBAL;
	cfg.num_doorbells = 3;
	u = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_UMS_CAPS);
	KUNIT_EXPECT_EQ(test, u->doorbell_size, NFENCE_DOORBELL_SIZE);
	KUNIT_EXPECT_EQ(test, u->doorbell_model, DRM_NFENCE_DOORBELL_GLOBAL);
	KUNIT_EXPECT_EQ(test, u->num_doorbells, 3);

	cfg.user_mode_submission = false;
	u = caps_query(test, caps_gpu(test, &cfg), DRM_NFENCE_QUERY_UMS_CAPS);
	KUNIT_EXPECT_MEMEQ(test, u, &zero, sizeof(zero));
}

static void caps_timestamp(struct kunit *test)
{
	struct nfence_gpu *gpu = caps_gpu(test, &base_cfg);
	struct drm_nfence_query_timestamp *a, *b;

	gpu->timestamp_base_ns = ktime_get_ns();
	a = caps_query(test, gpu, DRM_NFENCE_QUERY_TIMESTAMP);
	b = caps_query(test, gpu, DRM_NFENCE_QUERY_TIMESTAMP);
	/* The pair is taken at one instant: the GPU clock is derived from it. */
	KUNIT_EXPECT_EQ(test, a->gpu_timestamp,
			nfence_gpu_ns_to_ticks(a->cpu_monotonic_ns -
					       gpu->timestamp_base_ns));
	KUNIT_EXPECT_LE(test, a->gpu_timestamp, b->gpu_timestamp);
	KUNIT_EXPECT_LE(test, a->cpu_monotonic_ns, b->cpu_monotonic_ns);
}

static struct kunit_case nfence_caps_cases[] = {
	KUNIT_CASE(caps_sizes),
	KUNIT_CASE(caps_uapi_layout),
	KUNIT_CASE(caps_adapter),
	KUNIT_CASE(caps_segments),
	KUNIT_CASE(caps_segment_usage),
	KUNIT_CASE(caps_engines),
	KUNIT_CASE(caps_native_fence),
	KUNIT_CASE(caps_ums),
	KUNIT_CASE(caps_timestamp),
	{}
};

static struct kunit_suite nfence_caps_suite = {
	.name = "nfence_caps",
	.test_cases = nfence_caps_cases,
};

kunit_test_suite(nfence_caps_suite);
