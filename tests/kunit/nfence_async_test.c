// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the bounded asynchronous lists (nfence_async.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "../nfence_async.h"

#define ASYNC_MAX	3
#define ASYNC_ENTRIES	(ASYNC_MAX + 1)

struct async_entry {
	struct list_head link;
	struct llist_node ready;
	int id;
};

struct async_fixture {
	/* The lock of the list's entries (a file's async_lock). */
	struct mutex lock;
	struct workqueue_struct *wq;
	struct nfence_async_list al;
	struct async_entry entries[ASYNC_ENTRIES];
	/* What the work took, in the order it took it. */
	int taken[ASYNC_ENTRIES];
	int num_taken;
};

/* Takes every ready entry off the list, as the driver's works do. */
static void async_work(struct work_struct *work)
{
	struct async_fixture *f = container_of(work, struct async_fixture,
					       al.work);
	struct async_entry *e, *next;
	struct llist_node *list;

	list = nfence_async_list_take(&f->al);
	llist_for_each_entry_safe(e, next, list, ready) {
		if (f->num_taken < ASYNC_ENTRIES)
			f->taken[f->num_taken++] = e->id;
		nfence_async_list_remove(&f->al, &e->link);
	}
}

static int async_test_init(struct kunit *test)
{
	struct async_fixture *f;
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	mutex_init(&f->lock);
	f->wq = alloc_workqueue("nfence-async-test", WQ_UNBOUND, 0);
	KUNIT_ASSERT_NOT_NULL(test, f->wq);
	nfence_async_list_init(&f->al, &f->lock, ASYNC_MAX, f->wq, async_work);
	for (i = 0; i < ASYNC_ENTRIES; i++) {
		INIT_LIST_HEAD(&f->entries[i].link);
		f->entries[i].id = i;
	}
	test->priv = f;
	return 0;
}

static void async_test_exit(struct kunit *test)
{
	struct async_fixture *f = test->priv;

	destroy_workqueue(f->wq);
	mutex_destroy(&f->lock);
}

static int async_add(struct async_fixture *f, int i)
{
	int ret;

	mutex_lock(&f->lock);
	ret = nfence_async_list_add_locked(&f->al, &f->entries[i].link);
	mutex_unlock(&f->lock);
	return ret;
}

static bool async_unlink(struct async_fixture *f, int i)
{
	bool ret;

	mutex_lock(&f->lock);
	ret = nfence_async_list_unlink_locked(&f->al, &f->entries[i].link);
	mutex_unlock(&f->lock);
	return ret;
}

/* At most @max entries count; an uncount gives a place back. */
static void async_limit(struct kunit *test)
{
	struct async_fixture *f = test->priv;
	int i;

	for (i = 0; i < ASYNC_MAX; i++)
		KUNIT_ASSERT_EQ(test, async_add(f, i), 0);
	KUNIT_EXPECT_EQ(test, async_add(f, ASYNC_MAX), -ENOSPC);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->al.count), ASYNC_MAX);
	/* A refused entry is not on the list. */
	KUNIT_EXPECT_TRUE(test, list_empty(&f->entries[ASYNC_MAX].link));

	/* Uncounted but still listed (a completed wait): room again. */
	nfence_async_list_uncount(&f->al);
	KUNIT_EXPECT_EQ(test, async_add(f, ASYNC_MAX), 0);
	KUNIT_EXPECT_EQ(test, async_add(f, ASYNC_MAX), -ENOSPC);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&f->al.entries), ASYNC_ENTRIES);

	/* Clean up as a close would. */
	for (i = 0; i < ASYNC_ENTRIES; i++)
		KUNIT_EXPECT_TRUE(test, async_unlink(f, i));
	for (i = 0; i < ASYNC_MAX; i++)
		nfence_async_list_uncount(&f->al);
	nfence_async_list_drain(&f->al);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->al.count), 0);
}

/* Only the first of two unlinks owns the entry; neither changes the count. */
static void async_unlink_once(struct kunit *test)
{
	struct async_fixture *f = test->priv;

	KUNIT_ASSERT_EQ(test, async_add(f, 0), 0);
	KUNIT_EXPECT_TRUE(test, async_unlink(f, 0));
	KUNIT_EXPECT_FALSE(test, async_unlink(f, 0));
	KUNIT_EXPECT_TRUE(test, list_empty(&f->al.entries));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->al.count), 1);
	nfence_async_list_uncount(&f->al);
	nfence_async_list_drain(&f->al);
}

/*
 * The work takes the entries in the order they were made ready, removes
 * and uncounts them; the drain returns once it has, with nothing left.
 */
static void async_ready_order(struct kunit *test)
{
	static const int order[] = { 2, 0, 1 };
	struct async_fixture *f = test->priv;
	int i;

	for (i = 0; i < ASYNC_MAX; i++)
		KUNIT_ASSERT_EQ(test, async_add(f, i), 0);
	/* The work may run between two pushes: it takes what is there. */
	for (i = 0; i < ARRAY_SIZE(order); i++)
		nfence_async_list_ready(&f->al, &f->entries[order[i]].ready);
	nfence_async_list_drain(&f->al);

	KUNIT_EXPECT_EQ(test, f->num_taken, ARRAY_SIZE(order));
	for (i = 0; i < ARRAY_SIZE(order); i++)
		KUNIT_EXPECT_EQ(test, f->taken[i], order[i]);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->al.entries));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->al.count), 0);
	/* The room is back. */
	KUNIT_EXPECT_EQ(test, async_add(f, ASYNC_MAX), 0);
	KUNIT_EXPECT_TRUE(test, async_unlink(f, ASYNC_MAX));
	nfence_async_list_uncount(&f->al);
}

static struct kunit_case nfence_async_cases[] = {
	KUNIT_CASE(async_limit),
	KUNIT_CASE(async_unlink_once),
	KUNIT_CASE(async_ready_order),
	{}
};

static struct kunit_suite nfence_async_suite = {
	.name = "nfence_async",
	.init = async_test_init,
	.exit = async_test_exit,
	.test_cases = nfence_async_cases,
};

kunit_test_suite(nfence_async_suite);
