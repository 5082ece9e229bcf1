// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the per-file handle tables (nfence_table.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/xarray.h>

#include "../nfence_table.h"

#define TABLE_MAX	4

static int table_test_init(struct kunit *test)
{
	struct nfence_table *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	nfence_table_init(t, TABLE_MAX);
	test->priv = t;
	return 0;
}

static void table_test_exit(struct kunit *test)
{
	struct nfence_table *t = test->priv;

	xa_destroy(&t->xa);
}

static int table_insert(struct nfence_table *t, struct nfence_object *obj,
			u32 *handle)
{
	int ret;

	xa_lock(&t->xa);
	ret = nfence_table_insert_locked(t, obj, handle);
	xa_unlock(&t->xa);
	return ret;
}

static struct nfence_object *table_erase(struct nfence_table *t, u32 handle)
{
	struct nfence_object *obj;

	xa_lock(&t->xa);
	obj = nfence_table_erase_locked(t, handle);
	xa_unlock(&t->xa);
	return obj;
}

/* Handles start at 1 and name what was inserted. */
static void table_insert_lookup(struct kunit *test)
{
	struct nfence_table *t = test->priv;
	struct nfence_object objs[2];
	u32 h0, h1;

	KUNIT_ASSERT_EQ(test, table_insert(t, &objs[0], &h0), 0);
	KUNIT_ASSERT_EQ(test, table_insert(t, &objs[1], &h1), 0);
	KUNIT_EXPECT_EQ(test, h0, 1);
	KUNIT_EXPECT_EQ(test, h1, 2);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&t->xa, h0), &objs[0]);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&t->xa, h1), &objs[1]);
	KUNIT_EXPECT_NULL(test, xa_load(&t->xa, 0));
	KUNIT_EXPECT_EQ(test, t->count, 2);
}

/* At most @max live handles; an erase gives a place back. */
static void table_limit(struct kunit *test)
{
	struct nfence_table *t = test->priv;
	struct nfence_object objs[TABLE_MAX + 1];
	u32 handles[TABLE_MAX], h;
	int i;

	for (i = 0; i < TABLE_MAX; i++)
		KUNIT_ASSERT_EQ(test, table_insert(t, &objs[i], &handles[i]), 0);
	KUNIT_EXPECT_EQ(test, table_insert(t, &objs[TABLE_MAX], &h), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t->count, TABLE_MAX);
	/* A refused insert leaves nothing behind. */
	KUNIT_EXPECT_NULL(test, xa_load(&t->xa, handles[TABLE_MAX - 1] + 1));

	KUNIT_EXPECT_PTR_EQ(test, table_erase(t, handles[1]), &objs[1]);
	KUNIT_EXPECT_EQ(test, t->count, TABLE_MAX - 1);
	KUNIT_EXPECT_EQ(test, table_insert(t, &objs[TABLE_MAX], &h), 0);
	KUNIT_EXPECT_EQ(test, t->count, TABLE_MAX);
	KUNIT_EXPECT_EQ(test, table_insert(t, &objs[1], &h), -ENOSPC);
}

/* Erasing what is not there changes nothing. */
static void table_erase_unknown(struct kunit *test)
{
	struct nfence_table *t = test->priv;
	struct nfence_object obj = {};
	u32 h;

	KUNIT_EXPECT_NULL(test, table_erase(t, 1));
	KUNIT_EXPECT_EQ(test, t->count, 0);
	KUNIT_ASSERT_EQ(test, table_insert(t, &obj, &h), 0);
	KUNIT_EXPECT_NULL(test, table_erase(t, h + 1));
	KUNIT_EXPECT_PTR_EQ(test, table_erase(t, h), &obj);
	KUNIT_EXPECT_NULL(test, table_erase(t, h));
	KUNIT_EXPECT_EQ(test, t->count, 0);
}

/* A destroyed handle is not handed out again at once; the cursor wraps. */
static void table_cyclic(struct kunit *test)
{
	struct nfence_table *t = test->priv;
	struct nfence_object obj = {};
	u32 h0, h1;

	KUNIT_ASSERT_EQ(test, table_insert(t, &obj, &h0), 0);
	table_erase(t, h0);
	KUNIT_ASSERT_EQ(test, table_insert(t, &obj, &h1), 0);
	KUNIT_EXPECT_NE(test, h1, h0);
	table_erase(t, h1);

	/* At the top of the range the next handle is U32_MAX, then 1 again. */
	t->next = U32_MAX;
	KUNIT_ASSERT_EQ(test, table_insert(t, &obj, &h0), 0);
	KUNIT_EXPECT_EQ(test, h0, U32_MAX);
	KUNIT_ASSERT_EQ(test, table_insert(t, &obj, &h1), 0);
	KUNIT_EXPECT_EQ(test, h1, 1);
	KUNIT_EXPECT_EQ(test, t->count, 2);
}

static struct kunit_case nfence_table_cases[] = {
	KUNIT_CASE(table_insert_lookup),
	KUNIT_CASE(table_limit),
	KUNIT_CASE(table_erase_unknown),
	KUNIT_CASE(table_cyclic),
	{}
};

static struct kunit_suite nfence_table_suite = {
	.name = "nfence_table",
	.init = table_test_init,
	.exit = table_test_exit,
	.test_cases = nfence_table_cases,
};

kunit_test_suite(nfence_table_suite);
