// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the object registry (nfence_table.c, DOC: object
 * registry): owners, lookups with an owner, the close walks and their
 * order.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

#include "../nfence_table.h"

#define REG_TABLE_MAX	4

static int table_insert(struct nfence_table *t, struct nfence_object *obj,
			u32 *handle)
{
	int ret;

	nfence_table_lock(t);
	ret = nfence_table_insert_locked(t, obj, handle);
	nfence_table_unlock(t);
	return ret;
}

/* An object of the registry test: its kind's table and a close record. */
struct reg_obj {
	struct nfence_object obj;
	enum nfence_object_type type;
	int refs;
	int closed_at;
};

struct reg_fix {
	/* the registry's lock, as &nfence_file.sched_lock is the driver's */
	struct mutex lock;
	struct nfence_registry reg;
	int closes;
};

static struct reg_fix *reg_fix_of(struct nfence_registry *reg)
{
	return container_of(reg, struct reg_fix, reg);
}

static bool reg_obj_get(struct nfence_object *obj)
{
	struct reg_obj *o = container_of(obj, struct reg_obj, obj);

	/* A dying object (no reference left) is not found. */
	if (!o->refs)
		return false;
	o->refs++;
	return true;
}

static void reg_obj_close(struct nfence_registry *reg,
			  struct nfence_object *obj)
{
	struct reg_obj *o = container_of(obj, struct reg_obj, obj);

	lockdep_assert_held(reg->lock);
	o->closed_at = ++reg_fix_of(reg)->closes;
}

static const struct nfence_object_ops reg_obj_ops = {
	.get = reg_obj_get,
	.close = reg_obj_close,
};

static int reg_test_init(struct kunit *test)
{
	struct reg_fix *f;
	int type;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	mutex_init(&f->lock);
	nfence_registry_init(&f->reg, &f->lock);
	for (type = 0; type < NFENCE_OBJ_NUM; type++)
		nfence_table_init(&f->reg.tables[type], REG_TABLE_MAX);
	test->priv = f;
	return 0;
}

static void reg_test_exit(struct kunit *test)
{
	struct reg_fix *f = test->priv;
	int type;

	for (type = 0; type < NFENCE_OBJ_NUM; type++)
		xa_destroy(&f->reg.tables[type].xa);
}

/* Make an object of @type owned by @owner (NULL: a device) and insert it. */
static struct reg_obj *reg_add(struct kunit *test,
			       enum nfence_object_type type,
			       struct reg_obj *owner)
{
	struct reg_fix *f = test->priv;
	struct reg_obj *o;
	u32 h;

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->obj.ops = &reg_obj_ops;
	o->obj.owner = owner ? &owner->obj : NULL;
	o->type = type;
	o->refs = 1;
	KUNIT_ASSERT_EQ(test, table_insert(&f->reg.tables[type], &o->obj, &h),
			0);
	KUNIT_EXPECT_EQ(test, o->obj.handle, h);
	return o;
}

/*
 * A lookup with an owner finds only an object of that device, however
 * deep (a doorbell through its queue and context), and takes a reference.
 */
static void reg_lookup_owned(struct kunit *test)
{
	struct reg_fix *f = test->priv;
	struct nfence_table *q = &f->reg.tables[NFENCE_OBJ_HWQUEUE];
	struct nfence_table *dbs = &f->reg.tables[NFENCE_OBJ_DOORBELL];
	struct reg_obj *d1, *d2, *c1, *q1, *db1;

	d1 = reg_add(test, NFENCE_OBJ_DEVICE, NULL);
	d2 = reg_add(test, NFENCE_OBJ_DEVICE, NULL);
	c1 = reg_add(test, NFENCE_OBJ_CONTEXT, d1);
	q1 = reg_add(test, NFENCE_OBJ_HWQUEUE, c1);
	db1 = reg_add(test, NFENCE_OBJ_DOORBELL, q1);

	KUNIT_EXPECT_PTR_EQ(test, nfence_object_device(&db1->obj), &d1->obj);
	KUNIT_EXPECT_PTR_EQ(test, nfence_object_device(&d2->obj), &d2->obj);
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_table_lookup_owned(dbs, db1->obj.handle,
						      d1->obj.handle),
			    &db1->obj);
	KUNIT_EXPECT_EQ(test, db1->refs, 2);
	KUNIT_EXPECT_NULL(test, nfence_table_lookup_owned(dbs, db1->obj.handle,
							  d2->obj.handle));
	KUNIT_EXPECT_NULL(test, nfence_table_lookup_owned(q, q1->obj.handle + 1,
							  d1->obj.handle));
	KUNIT_EXPECT_EQ(test, db1->refs, 2);
	/* An object whose last reference went is not found. */
	q1->refs = 0;
	KUNIT_EXPECT_NULL(test, nfence_table_lookup(q, q1->obj.handle));
	/* A remove for another device leaves the handle where it is. */
	KUNIT_EXPECT_NULL(test, nfence_table_remove_owned(q, q1->obj.handle,
							  d2->obj.handle));
	KUNIT_EXPECT_PTR_EQ(test, nfence_table_remove_owned(q, q1->obj.handle,
							    d1->obj.handle),
			    &q1->obj);
	KUNIT_EXPECT_EQ(test, q->count, 0);
	KUNIT_EXPECT_EQ(test, dbs->count, 1);
	mutex_lock(&f->lock);
	nfence_registry_close_owned(&f->reg, NULL);
	mutex_unlock(&f->lock);
}

/*
 * Closing a device closes what it owns, kind by kind (doorbells, queues,
 * contexts, allocations, fences), then the device; another device's
 * objects stay.
 */
static void reg_close_order(struct kunit *test)
{
	struct reg_fix *f = test->priv;
	struct reg_obj *d1, *d2, *c1, *c2, *q1, *q2, *db1, *a1, *l1, *other;
	int type;

	d1 = reg_add(test, NFENCE_OBJ_DEVICE, NULL);
	d2 = reg_add(test, NFENCE_OBJ_DEVICE, NULL);
	/* Made in the opposite order to the close order. */
	l1 = reg_add(test, NFENCE_OBJ_FENCE, d1);
	a1 = reg_add(test, NFENCE_OBJ_ALLOC, d1);
	c1 = reg_add(test, NFENCE_OBJ_CONTEXT, d1);
	c2 = reg_add(test, NFENCE_OBJ_CONTEXT, d1);
	q1 = reg_add(test, NFENCE_OBJ_HWQUEUE, c1);
	q2 = reg_add(test, NFENCE_OBJ_HWQUEUE, c2);
	db1 = reg_add(test, NFENCE_OBJ_DOORBELL, q2);
	other = reg_add(test, NFENCE_OBJ_CONTEXT, d2);

	nfence_table_lock(&f->reg.tables[NFENCE_OBJ_DEVICE]);
	nfence_table_erase_locked(&f->reg.tables[NFENCE_OBJ_DEVICE],
				  d1->obj.handle);
	nfence_table_unlock(&f->reg.tables[NFENCE_OBJ_DEVICE]);
	nfence_registry_close(&f->reg, &d1->obj);

	KUNIT_EXPECT_EQ(test, db1->closed_at, 1);
	KUNIT_EXPECT_EQ(test, q1->closed_at, 2);
	KUNIT_EXPECT_EQ(test, q2->closed_at, 3);
	KUNIT_EXPECT_EQ(test, c1->closed_at, 4);
	KUNIT_EXPECT_EQ(test, c2->closed_at, 5);
	KUNIT_EXPECT_EQ(test, a1->closed_at, 6);
	KUNIT_EXPECT_EQ(test, l1->closed_at, 7);
	KUNIT_EXPECT_EQ(test, d1->closed_at, 8);
	KUNIT_EXPECT_EQ(test, other->closed_at, 0);
	KUNIT_EXPECT_EQ(test, d2->closed_at, 0);
	for (type = 0; type < NFENCE_OBJ_NUM; type++)
		KUNIT_EXPECT_EQ(test, f->reg.tables[type].count,
				type == NFENCE_OBJ_CONTEXT ||
				type == NFENCE_OBJ_DEVICE ? 1 : 0);

	/* A queue's close walk closes its doorbell only, then the queue. */
	q1 = reg_add(test, NFENCE_OBJ_HWQUEUE, other);
	db1 = reg_add(test, NFENCE_OBJ_DOORBELL, q1);
	q2 = reg_add(test, NFENCE_OBJ_HWQUEUE, other);
	KUNIT_ASSERT_PTR_EQ(test,
			    nfence_table_remove_owned(&f->reg.tables[NFENCE_OBJ_HWQUEUE],
						      q1->obj.handle,
						      d2->obj.handle),
			    &q1->obj);
	nfence_registry_close(&f->reg, &q1->obj);
	KUNIT_EXPECT_EQ(test, db1->closed_at, 9);
	KUNIT_EXPECT_EQ(test, q1->closed_at, 10);
	KUNIT_EXPECT_EQ(test, q2->closed_at, 0);

	/* A closing file: everything, devices last. */
	nfence_registry_close_all(&f->reg);
	KUNIT_EXPECT_EQ(test, q2->closed_at, 11);
	KUNIT_EXPECT_EQ(test, other->closed_at, 12);
	KUNIT_EXPECT_EQ(test, d2->closed_at, 13);
	nfence_registry_fini(&f->reg);
}

static struct kunit_case nfence_registry_cases[] = {
	KUNIT_CASE(reg_lookup_owned),
	KUNIT_CASE(reg_close_order),
	{}
};

static struct kunit_suite nfence_registry_suite = {
	.name = "nfence_registry",
	.init = reg_test_init,
	.exit = reg_test_exit,
	.test_cases = nfence_registry_cases,
};

kunit_test_suite(nfence_registry_suite);
