// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the simulated GPU (nfence_gpu.c) and its CMP thread
 * (nfence_cmp.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include <drm/nfence_drm.h>

#include "../nfence_cmp.h"
#include "../nfence_cmp_ops.h"
#include "../nfence_gpu.h"
#include "../nfence_hwqueue.h"

static const struct nfence_gpu_config good_cfg = {
	.num_engines = 3,
	.doorbell_model = DRM_NFENCE_DOORBELL_DEDICATED,
	.num_doorbells = 16,
	.vram_size = SZ_1M,
	.vram_visible_size = SZ_256K,
	.sysmem_size = SZ_4M,
	.native_fence = true,
	.optimized_default_fence = true,
	.user_mode_submission = true,
};

enum config_field {
	CFG_NONE,
	CFG_ENGINES,
	CFG_VRAM,
	CFG_VISIBLE,
	CFG_SYSMEM,
	CFG_MODEL,
	CFG_DOORBELLS,
	CFG_NO_UMS,
	CFG_NO_NATIVE,
	CFG_FENCES,
};

struct config_case {
	const char *name;
	enum config_field field;
	u64 value;
	int expected;
};

static const struct config_case config_cases[] = {
	{ "valid", CFG_NONE, 0, 0 },
	{ "no engines", CFG_ENGINES, 0, -EINVAL },
	{ "too many engines", CFG_ENGINES, NFENCE_MAX_ENGINES + 1, -EINVAL },
	{ "max engines", CFG_ENGINES, NFENCE_MAX_ENGINES, 0 },
	{ "no vram", CFG_VRAM, 0, -EINVAL },
	{ "unaligned vram", CFG_VRAM, SZ_1M + 8, -EINVAL },
	{ "visible above vram", CFG_VISIBLE, SZ_1M + PAGE_SIZE, -EINVAL },
	{ "unaligned visible", CFG_VISIBLE, 12, -EINVAL },
	{ "no visible vram", CFG_VISIBLE, 0, 0 },
	{ "all vram visible", CFG_VISIBLE, SZ_1M, 0 },
	{ "no sysmem", CFG_SYSMEM, 0, -EINVAL },
	{ "unaligned sysmem", CFG_SYSMEM, SZ_4M - 1, -EINVAL },
	{ "unknown doorbell model", CFG_MODEL, 3, -EINVAL },
	{ "zero doorbell model", CFG_MODEL, 0, -EINVAL },
	{ "global doorbell model", CFG_MODEL, DRM_NFENCE_DOORBELL_GLOBAL, 0 },
	{ "no doorbells", CFG_DOORBELLS, 0, -EINVAL },
	{ "too many doorbells", CFG_DOORBELLS, NFENCE_MAX_DOORBELLS + 1, -EINVAL },
	{ "max doorbells", CFG_DOORBELLS, NFENCE_MAX_DOORBELLS, 0 },
	{ "doorbells unused without ums", CFG_NO_UMS, 0, 0 },
	{ "optimized fence needs native", CFG_NO_NATIVE, 0, -EINVAL },
	{ "no fence limit", CFG_FENCES, 0, 0 },
	{ "fewest fences", CFG_FENCES, DRM_NFENCE_MAX_FENCES_PER_FILE, 0 },
	{ "too few fences", CFG_FENCES, DRM_NFENCE_MAX_FENCES_PER_FILE - 1,
	  -EINVAL },
	{ "one fence", CFG_FENCES, 1, -EINVAL },
	{ "most fences", CFG_FENCES, U32_MAX, 0 },
};

static void config_apply(struct nfence_gpu_config *cfg,
			 const struct config_case *c)
{
	switch (c->field) {
	case CFG_NONE:
		break;
	case CFG_ENGINES:
		cfg->num_engines = c->value;
		break;
	case CFG_VRAM:
		cfg->vram_size = c->value;
		cfg->vram_visible_size = 0;
		break;
	case CFG_VISIBLE:
		cfg->vram_visible_size = c->value;
		break;
	case CFG_SYSMEM:
		cfg->sysmem_size = c->value;
		break;
	case CFG_MODEL:
		cfg->doorbell_model = c->value;
		break;
	case CFG_DOORBELLS:
		cfg->num_doorbells = c->value;
		break;
	case CFG_NO_UMS:
		/* Doorbell settings do not matter without doorbells. */
		cfg->user_mode_submission = false;
		cfg->doorbell_model = 0;
		cfg->num_doorbells = 0;
		break;
	case CFG_NO_NATIVE:
		cfg->native_fence = false;
		break;
	case CFG_FENCES:
		cfg->client_fences = c->value;
		break;
	}
}

static void config_case_desc(const struct config_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(config, config_cases, config_case_desc);

static void gpu_config_validate(struct kunit *test)
{
	const struct config_case *c = test->param_value;
	struct nfence_gpu_config cfg = good_cfg;

	config_apply(&cfg, c);
	KUNIT_EXPECT_EQ(test, nfence_gpu_config_validate(&cfg), c->expected);
}

static void gpu_ns_to_ticks(struct kunit *test)
{
	const u64 ns_per_tick = NSEC_PER_SEC / NFENCE_TIMESTAMP_FREQUENCY;

	KUNIT_EXPECT_EQ(test, nfence_gpu_ns_to_ticks(0), 0);
	KUNIT_EXPECT_EQ(test, nfence_gpu_ns_to_ticks(ns_per_tick - 1), 0);
	KUNIT_EXPECT_EQ(test, nfence_gpu_ns_to_ticks(ns_per_tick), 1);
	KUNIT_EXPECT_EQ(test, nfence_gpu_ns_to_ticks(NSEC_PER_SEC),
			NFENCE_TIMESTAMP_FREQUENCY);
	KUNIT_EXPECT_EQ(test, nfence_gpu_ns_to_ticks(U64_MAX),
			div64_u64(U64_MAX, ns_per_tick));
}

static struct nfence_gpu *gpu_up(struct kunit *test, u32 index)
{
	struct nfence_gpu *gpu;

	gpu = kunit_kzalloc(test, sizeof(*gpu), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpu);
	KUNIT_ASSERT_EQ(test, 0, nfence_gpu_init(gpu, &good_cfg, index));
	return gpu;
}

/*
 * A CMP thread on @gpu, as nfence_adapter_create() starts one, but with no
 * adapter around it, and so no device whose runtime PM an idle CMP asks.
 */
static struct nfence_cmp_ops bare_cmp_ops;

static struct nfence_cmp *cmp_up(struct kunit *test, struct nfence_gpu *gpu)
{
	struct nfence_cmp *cmp;

	bare_cmp_ops = nfence_driver_cmp_ops;
	bare_cmp_ops.adapter_idle = NULL;
	bare_cmp_ops.stopped = NULL;
	cmp = kunit_kzalloc(test, sizeof(*cmp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmp);
	KUNIT_ASSERT_EQ(test, 0, nfence_cmp_start(cmp, gpu, &bare_cmp_ops,
						  "kunit"));
	return cmp;
}

static void gpu_init_rejects_bad_config(struct kunit *test)
{
	struct nfence_gpu_config cfg = good_cfg;
	struct nfence_gpu *gpu;

	gpu = kunit_kzalloc(test, sizeof(*gpu), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpu);
	cfg.num_engines = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_gpu_init(gpu, &cfg, 0));
	KUNIT_EXPECT_NULL(test, gpu->vram);
}

static void gpu_segments(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	struct nfence_segment *sys, *local;

	sys = nfence_gpu_segment(gpu, NFENCE_SEGMENT_ID_SYSTEM);
	local = nfence_gpu_segment(gpu, NFENCE_SEGMENT_ID_LOCAL);
	KUNIT_EXPECT_NULL(test, nfence_gpu_segment(gpu, 0));
	KUNIT_EXPECT_NULL(test, nfence_gpu_segment(gpu, NFENCE_NUM_SEGMENTS + 1));
	KUNIT_ASSERT_NOT_NULL(test, sys);
	KUNIT_ASSERT_NOT_NULL(test, local);
	KUNIT_EXPECT_NULL(test, sys->backing);
	KUNIT_EXPECT_PTR_EQ(test, local->backing, gpu->vram);
	KUNIT_EXPECT_EQ(test, local->size, good_cfg.vram_size);
	KUNIT_EXPECT_EQ(test, local->cpu_visible_size, good_cfg.vram_visible_size);
	KUNIT_EXPECT_EQ(test, sys->size, good_cfg.sysmem_size);
	nfence_gpu_fini(gpu);
}

static void gpu_luids_differ(struct kunit *test)
{
	struct nfence_gpu *a = gpu_up(test, 0), *b = gpu_up(test, 1);

	KUNIT_EXPECT_NE(test, a->luid_low, b->luid_low);
	KUNIT_EXPECT_NE(test, (u64)a->luid_high << 32 | a->luid_low, 0);
	KUNIT_EXPECT_EQ(test, a->luid_low & 0xff, 0);
	KUNIT_EXPECT_EQ(test, b->luid_low & 0xff, 1);
	nfence_gpu_fini(b);
	nfence_gpu_fini(a);
}

static void gpu_timestamp_advances(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	u64 cpu0, cpu1, t0, t1;

	t0 = nfence_gpu_timestamp(gpu, &cpu0);
	usleep_range(100, 200);
	t1 = nfence_gpu_timestamp(gpu, &cpu1);
	KUNIT_EXPECT_GT(test, t1, t0);
	/* Both clocks moved by the same amount, give or take one tick. */
	KUNIT_EXPECT_GE(test, t1 - t0 + 1, nfence_gpu_ns_to_ticks(cpu1 - cpu0));
	KUNIT_EXPECT_LE(test, t1 - t0, nfence_gpu_ns_to_ticks(cpu1 - cpu0) + 1);
	nfence_gpu_fini(gpu);
}

/* Waits for the CMP to account for @n wakeups; false if it never does. */
static bool cmp_wait_wakeups(struct nfence_cmp *cmp, s64 n)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (atomic64_read(&cmp->wakeups) >= n && !READ_ONCE(cmp->busy))
			return true;
		usleep_range(5000, 10000);
	}
	return false;
}

static void cmp_sleeps_until_kicked(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	struct nfence_cmp *cmp = cmp_up(test, gpu);

	KUNIT_ASSERT_NOT_NULL(test, cmp->thread);
	KUNIT_EXPECT_GT(test, nfence_cmp_pid(cmp), 0);
	/* Nothing kicked it: it has not run a single pass. */
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic64_read(&cmp->wakeups), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&cmp->passes), 0);

	nfence_cmp_kick(cmp);
	KUNIT_EXPECT_TRUE(test, cmp_wait_wakeups(cmp, 1));
	KUNIT_EXPECT_GE(test, atomic64_read(&cmp->passes), 1);

	nfence_cmp_kick(cmp);
	KUNIT_EXPECT_TRUE(test, cmp_wait_wakeups(cmp, 2));
	nfence_cmp_stop(cmp);
	KUNIT_EXPECT_NULL(test, cmp->thread);
	KUNIT_EXPECT_EQ(test, nfence_cmp_pid(cmp), 0);
	nfence_gpu_fini(gpu);
}

static void cmp_stop_is_idempotent(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	struct nfence_cmp *cmp = cmp_up(test, gpu);

	nfence_cmp_kick(cmp);
	nfence_cmp_stop(cmp);
	nfence_cmp_stop(cmp);
	KUNIT_EXPECT_NULL(test, cmp->thread);
	nfence_gpu_fini(gpu);
}

/* What cmp_stop_cleans_up_after_thread's &nfence_cmp_ops.stopped saw. */
static struct {
	unsigned int calls;
	bool thread_gone;
	bool lock_usable;
} cmp_stopped_seen;

static void cmp_record_stopped(struct nfence_cmp *cmp)
{
	cmp_stopped_seen.calls++;
	cmp_stopped_seen.thread_gone = !cmp->thread;
	/* The F1 work it cancels takes the lock: not destroyed yet. */
	cmp_stopped_seen.lock_usable = mutex_trylock(&cmp->lock);
	if (cmp_stopped_seen.lock_usable)
		mutex_unlock(&cmp->lock);
}

/*
 * The stop's cleanup runs once, after the thread (which queues the work it
 * cancels) has ended and before the CMP's lock goes.
 */
static void cmp_stop_cleans_up_after_thread(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	struct nfence_cmp *cmp = cmp_up(test, gpu);

	memset(&cmp_stopped_seen, 0, sizeof(cmp_stopped_seen));
	bare_cmp_ops.stopped = cmp_record_stopped;
	nfence_cmp_kick(cmp);
	KUNIT_EXPECT_TRUE(test, cmp_wait_wakeups(cmp, 1));
	KUNIT_EXPECT_EQ(test, cmp_stopped_seen.calls, 0);
	nfence_cmp_stop(cmp);
	nfence_cmp_stop(cmp);
	KUNIT_EXPECT_EQ(test, cmp_stopped_seen.calls, 1);
	KUNIT_EXPECT_TRUE(test, cmp_stopped_seen.thread_gone);
	KUNIT_EXPECT_TRUE(test, cmp_stopped_seen.lock_usable);
	nfence_gpu_fini(gpu);
}

/* What cmp_knows_its_thread's &nfence_cmp_ops.adapter_idle saw. */
static struct {
	unsigned int calls;
	bool on_thread;
} cmp_thread_seen;

static void cmp_record_thread(struct nfence_cmp *cmp)
{
	cmp_thread_seen.calls++;
	cmp_thread_seen.on_thread = nfence_cmp_current(cmp);
}

/*
 * nfence_cmp_current() is true on the CMP thread (in a callback it
 * makes), false on any other and once the thread is stopped.
 */
static void cmp_knows_its_thread(struct kunit *test)
{
	struct nfence_gpu *gpu = gpu_up(test, 0);
	struct nfence_cmp *cmp = cmp_up(test, gpu);

	memset(&cmp_thread_seen, 0, sizeof(cmp_thread_seen));
	bare_cmp_ops.adapter_idle = cmp_record_thread;
	KUNIT_EXPECT_FALSE(test, nfence_cmp_current(cmp));
	nfence_cmp_kick(cmp);
	KUNIT_EXPECT_TRUE(test, cmp_wait_wakeups(cmp, 1));
	nfence_cmp_stop(cmp);
	KUNIT_EXPECT_GE(test, cmp_thread_seen.calls, 1);
	KUNIT_EXPECT_TRUE(test, cmp_thread_seen.on_thread);
	KUNIT_EXPECT_FALSE(test, nfence_cmp_current(cmp));
	nfence_gpu_fini(gpu);
}

static struct kunit_case nfence_gpu_cases[] = {
	KUNIT_CASE_PARAM(gpu_config_validate, config_gen_params),
	KUNIT_CASE(gpu_ns_to_ticks),
	KUNIT_CASE(gpu_init_rejects_bad_config),
	KUNIT_CASE(gpu_segments),
	KUNIT_CASE(gpu_luids_differ),
	KUNIT_CASE(gpu_timestamp_advances),
	KUNIT_CASE(cmp_sleeps_until_kicked),
	KUNIT_CASE(cmp_stop_is_idempotent),
	KUNIT_CASE(cmp_stop_cleans_up_after_thread),
	KUNIT_CASE(cmp_knows_its_thread),
	{}
};

static struct kunit_suite nfence_gpu_suite = {
	.name = "nfence_gpu",
	.test_cases = nfence_gpu_cases,
};

kunit_test_suite(nfence_gpu_suite);
