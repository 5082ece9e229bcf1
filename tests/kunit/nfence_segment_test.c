// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the segment allocator (nfence_segment.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#include <drm/nfence_drm.h>

#include "../nfence_segment.h"

#define SEG_SIZE	SZ_1M
#define SEG_VISIBLE	SZ_256K

struct segment_test {
	struct nfence_segment seg;
	u8 *backing;
};

static int segment_test_init(struct kunit *test)
{
	struct segment_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->backing = vzalloc(SEG_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, t->backing);
	KUNIT_ASSERT_EQ(test, 0,
			nfence_segment_init(&t->seg, 2, DRM_NFENCE_SEGMENT_LOCAL,
					    SEG_SIZE, SEG_VISIBLE, t->backing));
	test->priv = t;
	return 0;
}

static void segment_test_exit(struct kunit *test)
{
	struct segment_test *t = test->priv;

	nfence_segment_fini(&t->seg);
	vfree(t->backing);
}

static struct nfence_segment *test_seg(struct kunit *test)
{
	return &((struct segment_test *)test->priv)->seg;
}

static struct nfence_segment_node *test_nodes(struct kunit *test, int count)
{
	struct nfence_segment_node *n;

	n = kunit_kcalloc(test, count, sizeof(*n), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, n);
	return n;
}

static void segment_init_rejects_bad_geometry(struct kunit *test)
{
	struct nfence_segment seg;

	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_init(&seg, 1, 0, 0, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_init(&seg, 0, 0, SZ_1M, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_init(&seg, 1, 0, SZ_1M + 1, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_init(&seg, 1, 0, SZ_1M, SZ_2M, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_init(&seg, 1, 0, SZ_1M, 100, NULL));
}

static void segment_alloc_free_accounting(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	struct nfence_segment_node a = {}, b = {};

	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(seg, &a, SZ_4K, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(seg, &b, 100, 8, 0));
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), (u64)SZ_4K + 100);
	KUNIT_EXPECT_PTR_EQ(test, a.seg, seg);
	/* The two ranges do not overlap. */
	KUNIT_EXPECT_TRUE(test, a.node.start + a.node.size <= b.node.start ||
			  b.node.start + b.node.size <= a.node.start);

	nfence_segment_free(&a);
	KUNIT_EXPECT_NULL(test, a.seg);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), 100ull);
	/* A second free of the same node is harmless. */
	nfence_segment_free(&a);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), 100ull);
	nfence_segment_free(&b);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), 0ull);
}

static void segment_alloc_rejects_bad_args(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	struct nfence_segment_node n = {};

	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_segment_alloc(seg, &n, 0, 0, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_segment_alloc(seg, &n, 8, 3, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_alloc(seg, &n, 8, 0, BIT(7)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			nfence_segment_alloc(seg, &n, 8, 0,
					     NFENCE_SEGMENT_ALLOC_CPU_VISIBLE |
					     NFENCE_SEGMENT_ALLOC_INVISIBLE));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			nfence_segment_alloc(seg, &n, SEG_SIZE + 1, 0, 0));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			nfence_segment_alloc(seg, &n, U64_MAX, 0, 0));
	KUNIT_EXPECT_NULL(test, n.seg);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), 0ull);
}

static void segment_alignment(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	struct nfence_segment_node a = {}, b = {};

	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(seg, &a, 24, 0, 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(seg, &b, 8, SZ_64K, 0));
	KUNIT_EXPECT_EQ(test, b.node.start % SZ_64K, 0ull);
	nfence_segment_free(&a);
	nfence_segment_free(&b);
}

static void segment_cpu_visible_placement(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	const int count = SEG_VISIBLE / SZ_64K + 1;
	struct nfence_segment_node *n = test_nodes(test, count);
	int i;

	/* Fill the visible part exactly; one more visible node cannot fit. */
	for (i = 0; i < SEG_VISIBLE / SZ_64K; i++) {
		int ret = nfence_segment_alloc(seg, &n[i], SZ_64K, 0,
					       NFENCE_SEGMENT_ALLOC_CPU_VISIBLE);

		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_EXPECT_TRUE(test, nfence_segment_node_cpu_visible(&n[i]));
		KUNIT_EXPECT_LE(test, n[i].node.start + n[i].node.size,
				(u64)SEG_VISIBLE);
	}
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			nfence_segment_alloc(seg, &n[i], SZ_64K, 0,
					     NFENCE_SEGMENT_ALLOC_CPU_VISIBLE));
	/* The invisible part is still free for unconstrained allocations. */
	KUNIT_EXPECT_EQ(test, 0, nfence_segment_alloc(seg, &n[i], SZ_64K, 0, 0));
	KUNIT_EXPECT_FALSE(test, nfence_segment_node_cpu_visible(&n[i]));
	for (i = 0; i < count; i++)
		nfence_segment_free(&n[i]);
}

static void segment_invisible_preference(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	const int invisible = (SEG_SIZE - SEG_VISIBLE) / SZ_64K;
	struct nfence_segment_node *n = test_nodes(test, invisible + 1);
	int i;

	for (i = 0; i < invisible; i++) {
		int ret = nfence_segment_alloc(seg, &n[i], SZ_64K, 0,
					       NFENCE_SEGMENT_ALLOC_INVISIBLE);

		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_EXPECT_FALSE(test, nfence_segment_node_cpu_visible(&n[i]));
		KUNIT_EXPECT_GE(test, n[i].node.start, (u64)SEG_VISIBLE);
	}
	/* Invisible part full: fall back to the visible part. */
	KUNIT_ASSERT_EQ(test, 0,
			nfence_segment_alloc(seg, &n[i], SZ_64K, 0,
					     NFENCE_SEGMENT_ALLOC_INVISIBLE));
	KUNIT_EXPECT_TRUE(test, nfence_segment_node_cpu_visible(&n[i]));
	for (i = 0; i <= invisible; i++)
		nfence_segment_free(&n[i]);
}

static void segment_exhaustion_and_reuse(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	const int count = SEG_SIZE / SZ_128K;
	struct nfence_segment_node *n = test_nodes(test, count);
	struct nfence_segment_node extra = {};
	u64 hole;
	int i;

	for (i = 0; i < count; i++)
		KUNIT_ASSERT_EQ(test, 0,
				nfence_segment_alloc(seg, &n[i], SZ_128K, 0, 0));
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), (u64)SEG_SIZE);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			nfence_segment_alloc(seg, &extra, 8, 0, 0));

	/* Freeing one hole lets exactly that much back in. */
	hole = n[3].node.start;
	nfence_segment_free(&n[3]);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			nfence_segment_alloc(seg, &extra, SZ_128K + 8, 0, 0));
	KUNIT_EXPECT_EQ(test, 0,
			nfence_segment_alloc(seg, &extra, SZ_128K, 0, 0));
	KUNIT_EXPECT_EQ(test, extra.node.start, hole);
	nfence_segment_free(&extra);
	for (i = 0; i < count; i++)
		nfence_segment_free(&n[i]);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), 0ull);
}

static void segment_vaddr_is_backing(struct kunit *test)
{
	struct segment_test *t = test->priv;
	struct nfence_segment_node n = {};
	u64 *p;

	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(&t->seg, &n, 64, 64, 0));
	p = nfence_segment_node_vaddr(&n);
	KUNIT_ASSERT_PTR_EQ(test, (void *)p, (void *)(t->backing + n.node.start));
	WRITE_ONCE(*p, 0x1122334455667788ull);
	KUNIT_EXPECT_EQ(test, *(u64 *)(t->backing + n.node.start),
			0x1122334455667788ull);
	nfence_segment_free(&n);
}

static void segment_aperture_has_no_vaddr(struct kunit *test)
{
	struct nfence_segment seg;
	struct nfence_segment_node n = {};

	KUNIT_ASSERT_EQ(test, 0,
			nfence_segment_init(&seg, 1, DRM_NFENCE_SEGMENT_SYSTEM,
					    SZ_1M, SZ_1M, NULL));
	KUNIT_ASSERT_EQ(test, 0, nfence_segment_alloc(&seg, &n, SZ_4K, 0, 0));
	KUNIT_EXPECT_NULL(test, nfence_segment_node_vaddr(&n));
	KUNIT_EXPECT_TRUE(test, nfence_segment_node_cpu_visible(&n));
	nfence_segment_free(&n);
	nfence_segment_fini(&seg);
}

static int charge(struct nfence_segment *seg, struct nfence_segment_node *n,
		  u64 size, struct nfence_segment_usage *usage)
{
	return nfence_segment_alloc_charged(seg, n, size, 0, 0, usage);
}

/*
 * Per-client quota: a client's charged nodes count against the segment's
 * client_quota and fail with -ENOSPC past it (the segment still has room);
 * another client is not held back; freeing uncharges, and a node keeps
 * the usage alive after the client dropped its reference.
 */
static void segment_client_quota(struct kunit *test)
{
	struct nfence_segment *seg = test_seg(test);
	struct nfence_segment_node *n = test_nodes(test, 4);
	struct nfence_segment_usage *a, *b;

	a = nfence_segment_usage_create();
	b = nfence_segment_usage_create();
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	seg->client_quota = SZ_64K;

	KUNIT_EXPECT_EQ(test, 0, charge(seg, &n[0], SZ_32K, a));
	KUNIT_EXPECT_EQ(test, 0, charge(seg, &n[1], SZ_32K, a));
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(a, 2), SZ_64K);
	/* One byte more is over the quota, with the segment far from full. */
	KUNIT_EXPECT_EQ(test, -ENOSPC, charge(seg, &n[2], 1, a));
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(a, 2), SZ_64K);
	KUNIT_EXPECT_EQ(test, nfence_segment_used(seg), SZ_64K);
	KUNIT_EXPECT_NULL(test, n[2].seg);
	/* Another client. */
	KUNIT_EXPECT_EQ(test, 0, charge(seg, &n[3], SZ_64K, b));
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(b, 2), SZ_64K);
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(b, 1), 0);

	/* Freeing uncharges. */
	nfence_segment_free(&n[0]);
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(a, 2), SZ_32K);
	KUNIT_EXPECT_EQ(test, 0, charge(seg, &n[2], 1, a));
	/* The client goes; its nodes hold the usage until they are freed. */
	KUNIT_EXPECT_EQ(test, kref_read(&a->ref), 3);
	nfence_segment_usage_put(a);
	nfence_segment_free(&n[1]);
	nfence_segment_free(&n[2]);
	nfence_segment_free(&n[3]);
	KUNIT_EXPECT_EQ(test, kref_read(&b->ref), 1);
	nfence_segment_usage_put(b);

	/* No quota: only the segment's size limits a client. */
	seg->client_quota = 0;
	a = nfence_segment_usage_create();
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, 0, charge(seg, &n[0], SEG_SIZE, a));
	nfence_segment_free(&n[0]);
	KUNIT_EXPECT_EQ(test, nfence_segment_usage_read(a, 2), 0);
	nfence_segment_usage_put(a);
}

static struct kunit_case nfence_segment_cases[] = {
	KUNIT_CASE(segment_init_rejects_bad_geometry),
	KUNIT_CASE(segment_alloc_free_accounting),
	KUNIT_CASE(segment_alloc_rejects_bad_args),
	KUNIT_CASE(segment_alignment),
	KUNIT_CASE(segment_cpu_visible_placement),
	KUNIT_CASE(segment_invisible_preference),
	KUNIT_CASE(segment_exhaustion_and_reuse),
	KUNIT_CASE(segment_vaddr_is_backing),
	KUNIT_CASE(segment_aperture_has_no_vaddr),
	KUNIT_CASE(segment_client_quota),
	{}
};

static struct kunit_suite nfence_segment_suite = {
	.name = "nfence_segment",
	.init = segment_test_init,
	.exit = segment_test_exit,
	.test_cases = nfence_segment_cases,
};

kunit_test_suite(nfence_segment_suite);
