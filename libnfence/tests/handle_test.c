/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The handle table (src/handle.c), through its internal interface:
 * Windows' format (0xc0000000 set, low 6 bits zero, 0x40 apart), never 0,
 * not reused, wraps safely, typed, reference counted, thread-safe.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "handle.h"

#include "kselftest_harness.h"

struct test_obj {
	struct nf_object base;
	int *released;
};

static void test_release(struct nf_object *obj)
{
	struct test_obj *t = (struct test_obj *)obj;

	(*t->released)++;
	free(t);
}

static struct test_obj *test_new(enum nf_handle_type type, int *released)
{
	struct test_obj *t = calloc(1, sizeof(*t));

	if (t) {
		nf_object_init(&t->base, type, test_release);
		t->released = released;
	}
	return t;
}

/* Insert a new object and drop the creation reference. */
static D3DKMT_HANDLE test_insert(enum nf_handle_type type, int *released)
{
	struct test_obj *t = test_new(type, released);
	D3DKMT_HANDLE h = 0;

	if (!t)
		return 0;
	if (!NT_SUCCESS(nf_handle_insert(&t->base, &h)))
		h = 0;
	nf_object_put(&t->base);
	return h;
}

static int test_close(D3DKMT_HANDLE h, enum nf_handle_type type)
{
	struct nf_object *obj = nf_handle_remove(h, type);

	if (!obj)
		return -1;
	nf_object_put(obj);
	return 0;
}

/* Windows' local handle format; consecutive handles 0x40 apart. */
TEST(handles_look_like_windows_and_are_not_reused)
{
	D3DKMT_HANDLE prev = 0, h;
	int released = 0;
	int i;

	for (i = 0; i < 1000; i++) {
		h = test_insert(NF_HANDLE_DEVICE, &released);
		ASSERT_NE(0u, h);
		EXPECT_EQ(0xc0000000u, h & 0xc000003fu) TH_LOG("0x%x", h);
		/* Above every file descriptor, a non-negative int. */
		EXPECT_LT((uint64_t)INT32_MAX, (uint64_t)h);
		if (i)
			EXPECT_EQ(prev + 0x40, h);
		ASSERT_EQ(0, test_close(h, NF_HANDLE_DEVICE));
		prev = h;
	}
	EXPECT_EQ(1000, released);
	EXPECT_EQ(0u, nf_handle_count());
}

TEST(wrap_skips_open_handles)
{
	D3DKMT_HANDLE a, b, c, d;
	int released = 0;

	nf_handle_set_next(0);
	a = test_insert(NF_HANDLE_DEVICE, &released);	/* index 0, stays open */
	EXPECT_EQ(0xc0000000u, a);

	nf_handle_set_next(NF_HANDLE_INDEXES - 2);
	b = test_insert(NF_HANDLE_DEVICE, &released);
	c = test_insert(NF_HANDLE_DEVICE, &released);
	d = test_insert(NF_HANDLE_DEVICE, &released);
	EXPECT_EQ(0xffffff80u, b);
	EXPECT_EQ(0xffffffc0u, c);
	EXPECT_EQ(0xc0000040u, d);	/* index 0 is open */

	EXPECT_EQ(0, test_close(a, NF_HANDLE_DEVICE));
	EXPECT_EQ(0, test_close(b, NF_HANDLE_DEVICE));
	EXPECT_EQ(0, test_close(c, NF_HANDLE_DEVICE));
	EXPECT_EQ(0, test_close(d, NF_HANDLE_DEVICE));
	EXPECT_EQ(4, released);
}

TEST(zero_and_unknown_handles)
{
	int released = 0;
	D3DKMT_HANDLE h = test_insert(NF_HANDLE_ADAPTER, &released);

	EXPECT_EQ(NULL, nf_handle_lookup(0, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_remove(0, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_lookup(h + 1, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_lookup(h + 0x40, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_lookup(0xffffffff, NF_HANDLE_ADAPTER));
	/* The index alone, without the format's bits, names nothing. */
	EXPECT_EQ(NULL, nf_handle_lookup(h & ~0xc0000000u, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_lookup(h & ~0x80000000u, NF_HANDLE_ADAPTER));
	EXPECT_EQ(NULL, nf_handle_remove(h | 1, NF_HANDLE_ADAPTER));
	EXPECT_EQ(0, test_close(h, NF_HANDLE_ADAPTER));
	/* Closed: gone for lookup and for a second close. */
	EXPECT_EQ(NULL, nf_handle_lookup(h, NF_HANDLE_ADAPTER));
	EXPECT_EQ(-1, test_close(h, NF_HANDLE_ADAPTER));
	EXPECT_EQ(1, released);
}

TEST(types_are_checked)
{
	int released = 0;
	D3DKMT_HANDLE h = test_insert(NF_HANDLE_ADAPTER, &released);
	struct nf_object *obj;

	EXPECT_EQ(NULL, nf_handle_lookup(h, NF_HANDLE_DEVICE));
	EXPECT_EQ(-1, test_close(h, NF_HANDLE_DEVICE));
	obj = nf_handle_lookup(h, NF_HANDLE_ADAPTER);
	ASSERT_NE(NULL, obj);
	EXPECT_EQ(h, obj->handle);
	EXPECT_EQ(NF_HANDLE_ADAPTER, obj->type);
	nf_object_put(obj);
	EXPECT_EQ(0, test_close(h, NF_HANDLE_ADAPTER));
	EXPECT_EQ(1, released);
}

TEST(lookup_reference_outlives_close)
{
	int released = 0;
	D3DKMT_HANDLE h = test_insert(NF_HANDLE_DEVICE, &released);
	struct nf_object *obj = nf_handle_lookup(h, NF_HANDLE_DEVICE);

	ASSERT_NE(NULL, obj);
	EXPECT_EQ(0, test_close(h, NF_HANDLE_DEVICE));
	EXPECT_EQ(0, released);		/* still referenced */
	nf_object_put(obj);
	EXPECT_EQ(1, released);
}

TEST(many_open_handles)
{
	static D3DKMT_HANDLE hs[20000];
	int released = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hs); i++) {
		hs[i] = test_insert(NF_HANDLE_DEVICE, &released);
		ASSERT_NE(0u, hs[i]);
	}
	EXPECT_EQ(ARRAY_SIZE(hs), nf_handle_count());
	for (i = 0; i < ARRAY_SIZE(hs); i++) {
		struct nf_object *obj = nf_handle_lookup(hs[i], NF_HANDLE_DEVICE);

		ASSERT_NE(NULL, obj);
		EXPECT_EQ(hs[i], obj->handle);
		nf_object_put(obj);
	}
	for (i = 0; i < ARRAY_SIZE(hs); i++)
		ASSERT_EQ(0, test_close(hs[i], NF_HANDLE_DEVICE));
	EXPECT_EQ((int)ARRAY_SIZE(hs), released);
	EXPECT_EQ(0u, nf_handle_count());
}

#define THREADS		8
#define PER_THREAD	4000

struct thread_arg {
	D3DKMT_HANDLE handles[PER_THREAD];
	int released;
	int failures;
};

static void *thread_fn(void *p)
{
	struct thread_arg *arg = p;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		arg->handles[i] = test_insert(NF_HANDLE_DEVICE, &arg->released);
		if (!arg->handles[i])
			arg->failures++;
		/* Close every other one at once, the rest at the end. */
		if (i & 1 && test_close(arg->handles[i], NF_HANDLE_DEVICE))
			arg->failures++;
	}
	for (i = 0; i < PER_THREAD; i += 2)
		if (test_close(arg->handles[i], NF_HANDLE_DEVICE))
			arg->failures++;
	return NULL;
}

static int cmp_handle(const void *a, const void *b)
{
	D3DKMT_HANDLE x = *(const D3DKMT_HANDLE *)a;
	D3DKMT_HANDLE y = *(const D3DKMT_HANDLE *)b;

	return (x > y) - (x < y);
}

TEST(concurrent_handles_are_unique)
{
	static struct thread_arg args[THREADS];
	static D3DKMT_HANDLE all[THREADS * PER_THREAD];
	pthread_t th[THREADS];
	int i, n = 0;

	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &args[i]));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));

	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ(0, args[i].failures);
		EXPECT_EQ(PER_THREAD, args[i].released);
		memcpy(&all[n], args[i].handles, sizeof(args[i].handles));
		n += PER_THREAD;
	}
	qsort(all, n, sizeof(all[0]), cmp_handle);
	for (i = 1; i < n; i++)
		ASSERT_NE(all[i - 1], all[i]);
	EXPECT_EQ(0u, nf_handle_count());
}

TEST_HARNESS_MAIN
