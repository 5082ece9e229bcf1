/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The handle table (src/handle.c), through its internal interface:
 * Windows' format (0xc0000000 set, low 6 bits zero, 0x40 apart), never 0,
 * not reused, wraps safely, typed, reference counted, thread-safe; and
 * the object registry: closing an object closes what it owns, each object
 * torn down once, told whether its owner's destruction destroys it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

/* The ops of the test's objects, one per type. */
static const struct nf_object_ops test_ops[NF_HANDLE_TYPE_MAX] = {
	[NF_HANDLE_ADAPTER] = {
		.type = NF_HANDLE_ADAPTER,
		.release = test_release,
	},
	[NF_HANDLE_DEVICE] = {
		.type = NF_HANDLE_DEVICE,
		.release = test_release,
	},
};

static struct test_obj *test_new(enum nf_handle_type type, int *released)
{
	struct test_obj *t = calloc(1, sizeof(*t));

	if (t) {
		nf_object_init(&t->base, &test_ops[type], NULL);
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
	EXPECT_EQ(NF_HANDLE_ADAPTER, obj->ops->type);
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

/* ---- the registry: owners, children, closing ------------------------ */

/*
 * An owned object of the registry tests: its teardowns are counted, and
 * the last one's place in the sequence of teardowns and its
 * owner_destroys are kept.
 */
struct owned_obj {
	struct nf_object base;
	atomic_int *released;
	atomic_int teardowns;
	int order;			/* of the last teardown */
	bool owner_destroys;		/* of the last teardown */
};

static atomic_int teardown_seq;

static void owned_release(struct nf_object *obj)
{
	struct owned_obj *o = (struct owned_obj *)obj;

	atomic_fetch_add(o->released, 1);
	free(o);
}

static NTSTATUS owned_teardown(struct nf_object *obj, bool owner_destroys)
{
	struct owned_obj *o = (struct owned_obj *)obj;

	o->order = atomic_fetch_add(&teardown_seq, 1);
	o->owner_destroys = owner_destroys;
	atomic_fetch_add(&o->teardowns, 1);
	/* A status to tell the teardown's from the registry's. */
	return owner_destroys ? STATUS_SUCCESS : STATUS_DEVICE_BUSY;
}

/* Devices own contexts own queues own doorbells, one each at most. */
static const struct nf_object_ops owned_ops[NF_HANDLE_TYPE_MAX] = {
	[NF_HANDLE_DEVICE] = {
		.type = NF_HANDLE_DEVICE,
		.release = owned_release,
		.teardown = owned_teardown,
	},
	[NF_HANDLE_CONTEXT] = {
		.type = NF_HANDLE_CONTEXT,
		.release = owned_release,
		.teardown = owned_teardown,
	},
	[NF_HANDLE_HWQUEUE] = {
		.type = NF_HANDLE_HWQUEUE,
		.release = owned_release,
		.teardown = owned_teardown,
	},
	[NF_HANDLE_DOORBELL] = {
		.type = NF_HANDLE_DOORBELL,
		.one_per_owner = true,
		.release = owned_release,
		.teardown = owned_teardown,
	},
};

/*
 * A new object of @type owned by @owner (NULL: none) with a reference of
 * the caller's, inserted (its status in *@st, its handle in *@h).
 */
static struct owned_obj *owned_insert(enum nf_handle_type type,
				      struct owned_obj *owner,
				      atomic_int *released, NTSTATUS *st,
				      D3DKMT_HANDLE *h)
{
	struct owned_obj *o = calloc(1, sizeof(*o));

	if (!o)
		abort();
	nf_object_init(&o->base, &owned_ops[type], owner ? &owner->base : NULL);
	o->released = released;
	*h = 0;
	*st = nf_handle_insert(&o->base, h);
	return o;
}

FIXTURE(registry) {
	atomic_int released;
	NTSTATUS st;
	D3DKMT_HANDLE hdev, hctx, hctx2, hq, hdb;
	struct owned_obj *dev, *ctx, *ctx2, *q, *db;
};

/* A device with two contexts; the first has a queue with a doorbell. */
FIXTURE_SETUP(registry)
{
	atomic_init(&self->released, 0);
	atomic_store(&teardown_seq, 0);
	self->dev = owned_insert(NF_HANDLE_DEVICE, NULL, &self->released,
				 &self->st, &self->hdev);
	ASSERT_EQ(STATUS_SUCCESS, self->st);
	self->ctx = owned_insert(NF_HANDLE_CONTEXT, self->dev, &self->released,
				 &self->st, &self->hctx);
	ASSERT_EQ(STATUS_SUCCESS, self->st);
	self->ctx2 = owned_insert(NF_HANDLE_CONTEXT, self->dev,
				  &self->released, &self->st, &self->hctx2);
	ASSERT_EQ(STATUS_SUCCESS, self->st);
	self->q = owned_insert(NF_HANDLE_HWQUEUE, self->ctx, &self->released,
			       &self->st, &self->hq);
	ASSERT_EQ(STATUS_SUCCESS, self->st);
	self->db = owned_insert(NF_HANDLE_DOORBELL, self->q, &self->released,
				&self->st, &self->hdb);
	ASSERT_EQ(STATUS_SUCCESS, self->st);
	EXPECT_EQ(5u, nf_handle_count());
}

/* Every object was released: the test dropped its references. */
FIXTURE_TEARDOWN(registry)
{
	EXPECT_EQ(0u, nf_handle_count());
}

/* Drop the test's references: @released objects in all are freed. */
static void put_all(struct __test_metadata *_metadata,
		    FIXTURE_DATA(registry) *self, int released)
{
	nf_object_put(&self->db->base);
	nf_object_put(&self->q->base);
	nf_object_put(&self->ctx2->base);
	nf_object_put(&self->ctx->base);
	nf_object_put(&self->dev->base);
	EXPECT_EQ(released, atomic_load(&self->released));
}

/*
 * Closing a device closes what it owns, recursively: the device is torn
 * down first, destroying its kernel object; then each object it owns, its
 * owner's destruction standing for its own.
 */
TEST_F(registry, close_closes_what_it_owns)
{
	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	EXPECT_EQ(0u, nf_handle_count());
	EXPECT_EQ(NULL, nf_handle_lookup(self->hctx, NF_HANDLE_CONTEXT));
	EXPECT_EQ(NULL, nf_handle_lookup(self->hdb, NF_HANDLE_DOORBELL));
	EXPECT_EQ(1, atomic_load(&self->dev->teardowns));
	EXPECT_EQ(1, atomic_load(&self->ctx->teardowns));
	EXPECT_EQ(1, atomic_load(&self->ctx2->teardowns));
	EXPECT_EQ(1, atomic_load(&self->q->teardowns));
	EXPECT_EQ(1, atomic_load(&self->db->teardowns));
	EXPECT_FALSE(self->dev->owner_destroys);
	EXPECT_TRUE(self->ctx->owner_destroys);
	EXPECT_TRUE(self->ctx2->owner_destroys);
	EXPECT_TRUE(self->q->owner_destroys);
	EXPECT_TRUE(self->db->owner_destroys);
	/* An owner before what it owns. */
	EXPECT_EQ(0, self->dev->order);
	EXPECT_LT(self->ctx->order, self->q->order);
	EXPECT_LT(self->q->order, self->db->order);
	/* Closed twice: the second names nothing. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  nf_handle_close(self->hq, NF_HANDLE_HWQUEUE));
	EXPECT_EQ(0, atomic_load(&self->released));	/* the test's refs */
	put_all(_metadata, self, 5);
}

/* An object closed alone destroys its kernel object; its owner's close
 * later does not close it again. Its owner's other children stay open. */
TEST_F(registry, closed_alone_destroys_itself)
{
	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hctx, NF_HANDLE_CONTEXT));
	EXPECT_FALSE(self->ctx->owner_destroys);
	EXPECT_TRUE(self->q->owner_destroys);
	EXPECT_TRUE(self->db->owner_destroys);
	EXPECT_EQ(2u, nf_handle_count());
	EXPECT_EQ(0, atomic_load(&self->ctx2->teardowns));

	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	EXPECT_EQ(1, atomic_load(&self->ctx->teardowns));
	EXPECT_EQ(1, atomic_load(&self->q->teardowns));
	EXPECT_EQ(1, atomic_load(&self->ctx2->teardowns));
	EXPECT_TRUE(self->ctx2->owner_destroys);
	put_all(_metadata, self, 5);
}

/*
 * Once an object has left the table (closing), it takes no new child: the
 * child is refused and torn down, its owner's destruction standing for
 * its own; a child that leaves the table meanwhile is torn down the same
 * way, and only once.
 */
TEST_F(registry, closing_owner_takes_no_child)
{
	struct nf_object *obj = nf_handle_remove(self->hctx, NF_HANDLE_CONTEXT);
	struct owned_obj *late;
	D3DKMT_HANDLE h;
	NTSTATUS st;

	ASSERT_NE(NULL, obj);
	EXPECT_FALSE(nf_object_is_open(obj));
	EXPECT_TRUE(nf_object_is_open(&self->ctx2->base));
	late = owned_insert(NF_HANDLE_HWQUEUE, self->ctx, &self->released,
			    &st, &h);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, st);
	EXPECT_EQ(0u, h);
	EXPECT_EQ(1, atomic_load(&late->teardowns));
	EXPECT_TRUE(late->owner_destroys);
	EXPECT_FALSE(nf_object_is_open(&late->base));
	nf_object_put(&late->base);

	/* The queue leaves on its own: its owner is closing, so no destroy. */
	EXPECT_EQ(STATUS_SUCCESS, nf_handle_close(self->hq, NF_HANDLE_HWQUEUE));
	EXPECT_TRUE(self->q->owner_destroys);
	EXPECT_TRUE(self->db->owner_destroys);

	EXPECT_EQ(STATUS_DEVICE_BUSY, nf_object_close(obj));
	EXPECT_EQ(1, atomic_load(&self->q->teardowns));
	EXPECT_EQ(1, atomic_load(&self->db->teardowns));
	EXPECT_EQ(1, atomic_load(&self->ctx->teardowns));
	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	put_all(_metadata, self, 6);
}

/* A child of an owner never inserted is refused, and destroys itself. */
TEST_F(registry, new_owner_takes_no_child)
{
	struct owned_obj *loose, *child;
	D3DKMT_HANDLE h;
	NTSTATUS st;

	loose = calloc(1, sizeof(*loose));
	ASSERT_NE(NULL, loose);
	nf_object_init(&loose->base, &owned_ops[NF_HANDLE_HWQUEUE], NULL);
	loose->released = &self->released;
	child = owned_insert(NF_HANDLE_DOORBELL, loose, &self->released, &st,
			     &h);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, st);
	EXPECT_EQ(1, atomic_load(&child->teardowns));
	EXPECT_FALSE(child->owner_destroys);
	nf_object_put(&child->base);
	EXPECT_EQ(1, atomic_load(&self->released));
	nf_object_put(&loose->base);
	EXPECT_EQ(2, atomic_load(&self->released));

	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	put_all(_metadata, self, 7);
}

/* A type of one child per owner: a second is refused until the first goes. */
TEST_F(registry, one_child_of_a_type_per_owner)
{
	struct owned_obj *db2, *db3;
	D3DKMT_HANDLE h2, h3;
	NTSTATUS st;

	db2 = owned_insert(NF_HANDLE_DOORBELL, self->q, &self->released, &st,
			   &h2);
	EXPECT_EQ(STATUS_DEVICE_BUSY, st);
	EXPECT_EQ(1, atomic_load(&db2->teardowns));
	EXPECT_FALSE(db2->owner_destroys);
	nf_object_put(&db2->base);
	/* Another owner may have one. */
	db3 = owned_insert(NF_HANDLE_DOORBELL, self->ctx2, &self->released,
			   &st, &h3);
	EXPECT_EQ(STATUS_SUCCESS, st);
	nf_object_put(&db3->base);

	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdb, NF_HANDLE_DOORBELL));
	db2 = owned_insert(NF_HANDLE_DOORBELL, self->q, &self->released, &st,
			   &h2);
	EXPECT_EQ(STATUS_SUCCESS, st);
	EXPECT_NE(self->hdb, h2);
	EXPECT_EQ(STATUS_DEVICE_BUSY,
		  nf_handle_close(self->hdev, NF_HANDLE_DEVICE));
	EXPECT_EQ(1, atomic_load(&db2->teardowns));
	EXPECT_TRUE(db2->owner_destroys);
	nf_object_put(&db2->base);
	put_all(_metadata, self, 8);
}

#define RACERS		4
#define RACE_ROUNDS	5000

struct racer {
	struct owned_obj *owner;
	atomic_int *released;
	atomic_int *started;
	struct owned_obj *made[RACE_ROUNDS];
	int n;
};

/*
 * Make children of an owner until one is refused, closing every other one
 * at once; keep a reference on each, to check it afterwards.
 */
static void *race_children(void *p)
{
	struct racer *r = p;
	D3DKMT_HANDLE h;
	NTSTATUS st;

	for (r->n = 0; r->n < RACE_ROUNDS; r->n++) {
		r->made[r->n] = owned_insert(NF_HANDLE_CONTEXT, r->owner,
					     r->released, &st, &h);
		if (!r->n)
			atomic_fetch_add(r->started, 1);
		if (!NT_SUCCESS(st)) {
			r->n++;
			break;
		}
		if (r->n % 2)
			nf_handle_close(h, NF_HANDLE_CONTEXT);
	}
	return NULL;
}

/*
 * Children made and closed while their owner closes: each one, refused or
 * closed by its own close or its owner's, is torn down exactly once, none
 * is left in the table, and every object is released.
 */
TEST(owner_close_races_children)
{
	static struct racer r[RACERS];
	pthread_t th[RACERS];
	atomic_int released, started;
	struct owned_obj *dev;
	int i, j, made = 0;
	D3DKMT_HANDLE h;
	NTSTATUS st;

	atomic_init(&released, 0);
	atomic_init(&started, 0);
	dev = owned_insert(NF_HANDLE_DEVICE, NULL, &released, &st, &h);
	ASSERT_EQ(STATUS_SUCCESS, st);
	for (i = 0; i < RACERS; i++) {
		r[i].owner = dev;
		r[i].released = &released;
		r[i].started = &started;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, race_children,
					    &r[i]));
	}
	while (atomic_load(&started) < RACERS)
		sched_yield();
	EXPECT_EQ(STATUS_DEVICE_BUSY, nf_handle_close(h, NF_HANDLE_DEVICE));
	for (i = 0; i < RACERS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(0u, nf_handle_count());
	for (i = 0; i < RACERS; i++) {
		for (j = 0; j < r[i].n; j++) {
			EXPECT_EQ(1, atomic_load(&r[i].made[j]->teardowns));
			nf_object_put(&r[i].made[j]->base);
		}
		made += r[i].n;
	}
	EXPECT_EQ(made, atomic_load(&released));
	nf_object_put(&dev->base);
	EXPECT_EQ(made + 1, atomic_load(&released));
}

TEST_HARNESS_MAIN
