// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "nfence_compat.h"
#include "nfence_table.h"

/**
 * DOC: handle tables
 *
 * Every object a file names by handle (devices, local fence handles,
 * allocations, contexts, hardware queues) lives in a &struct nfence_table:
 * an allocating xarray whose handles start at 1 and advance cyclically, so
 * that a handle just destroyed names nothing for a long while instead of
 * the next object, and a count bounded by the uapi's per-file limit.
 *
 * Creators insert under the xarray lock and finish the object (its handle,
 * the ioctl's outputs) before they drop it: once inserted, another thread
 * may look the object up or destroy it. The insert reserves its place in
 * the count before __xa_alloc_cyclic(), which may drop the lock to allocate
 * memory, so a concurrent creator sees the reservation and the bound holds.
 *
 * Lookups go through the table too: nfence_table_lookup() and
 * nfence_table_lookup_owned() take a reference (&nfence_object_ops.get)
 * under the xarray lock; callers that do more under that lock (a pin, a
 * check before an erase) use nfence_table_lock(),
 * nfence_table_find_locked() or nfence_table_find_owned_locked(), and
 * nfence_table_unlock(); nfence_table_for_each() walks a table. Nothing
 * outside this file touches a table's xarray.
 */

/**
 * DOC: object registry
 *
 * Every object a file names by handle embeds a &struct nfence_object: its
 * kind (&struct nfence_object_ops) and its owner, the object it belongs to
 * and that closes it: a device owns its contexts, allocations and local
 * fence handles, a context its hardware queues, a queue its doorbell. A
 * file's tables form its &struct nfence_registry, one table per kind.
 *
 * A parent does not name its children. Destroying an object (an ioctl,
 * the file's close) takes its handle out of its table, then
 * nfence_registry_close() closes everything it owns, directly or through
 * others, and at last the object itself, each through its kind's
 * &nfence_object_ops.close. The walk goes kind by kind in the order of
 * &enum nfence_object_type, which is the teardown order of the driver:
 *
 * 1. doorbells, before their queue: a doorbell unbinds its physical
 *    doorbell and takes its ring off the queue, and unpins the ring's
 *    allocations;
 * 2. hardware queues, before their context: a queue leaves the runlist
 *    (the CMP stops using its memory and fences), drops its work and
 *    closes its progress fence's handle, and drops its context;
 * 3. contexts, before the allocations their queues ran from;
 * 4. allocations, once no doorbell pins them;
 * 5. local fence handles, once no queue signals or waits on them;
 * 6. devices, last (only when the whole file closes: a device being
 *    destroyed is out of its table already).
 *
 * Within a kind, objects close in handle order. The walk holds
 * &nfence_registry.lock (the file's sched_lock, which creators of
 * contexts, queues and doorbells hold, and which a device's destroy takes
 * once after marking it dead) from the first kind to the last, so nothing
 * can join an owner between two kinds. Each object is found and erased
 * under its table's lock; a concurrent destroy of the same handle, which
 * may not hold &nfence_registry.lock (fences, allocations), takes it
 * either before the walk sees it or not at all.
 */

/**
 * nfence_table_init - set up an empty handle table
 * @t: the table
 * @max: at most this many live handles
 */
void nfence_table_init(struct nfence_table *t, u32 max)
{
	xa_init_flags(&t->xa, XA_FLAGS_ALLOC1);
	t->next = 1;
	t->count = 0;
	t->max = max;
}

/**
 * nfence_table_fini - tear down a table that holds nothing any more
 * @t: the table
 */
void nfence_table_fini(struct nfence_table *t)
{
	WARN_ON(!xa_empty(&t->xa));
	xa_destroy(&t->xa);
	t->count = 0;
}

/**
 * nfence_table_insert_locked - give an object a handle
 * @t: the table, whose xarray lock is held (it may be dropped and retaken)
 * @obj: the object; &nfence_object.handle is set to the handle
 * @handle: out: its handle
 *
 * Return: 0; -ENOSPC when the table holds @t->max handles; -ENOMEM, or
 * -EBUSY if no 32-bit handle is free.
 */
int nfence_table_insert_locked(struct nfence_table *t,
			       struct nfence_object *obj, u32 *handle)
{
	int ret;

	/* KUnit: what may happen while the allocation drops the lock. */
	NFENCE_KUNIT_STUB(nfence_table_insert_locked, t, obj, handle);
	lockdep_assert_held(&t->xa.xa_lock);
	if (t->count >= t->max)
		return -ENOSPC;
	t->count++;
	ret = __xa_alloc_cyclic(&t->xa, handle, obj, xa_limit_32b, &t->next,
				GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		t->count--;
		return ret;
	}
	obj->handle = *handle;
	return 0;
}

/**
 * nfence_table_erase_locked - take a handle out of its table
 * @t: the table, whose xarray lock is held
 * @handle: the handle
 *
 * Return: the object the handle named, or NULL if it named none.
 */
struct nfence_object *nfence_table_erase_locked(struct nfence_table *t,
						u32 handle)
{
	struct nfence_object *obj;

	lockdep_assert_held(&t->xa.xa_lock);
	obj = __xa_erase(&t->xa, handle);
	if (obj)
		t->count--;
	return obj;
}

/**
 * nfence_table_find_locked - the object a handle names
 * @t: the table, whose lock is held
 * @handle: the handle
 *
 * Return: the object, or NULL; valid while the lock is held.
 */
struct nfence_object *nfence_table_find_locked(struct nfence_table *t,
					       u32 handle)
{
	NFENCE_KUNIT_STUB(nfence_table_find_locked, t, handle);
	lockdep_assert_held(&t->xa.xa_lock);
	return xa_load(&t->xa, handle);
}

/**
 * nfence_object_device - the device an object belongs to
 * @obj: the object
 *
 * Return: the end of its chain of owners (@obj itself for a device).
 */
struct nfence_object *nfence_object_device(struct nfence_object *obj)
{
	while (obj->owner)
		obj = obj->owner;
	return obj;
}

/**
 * nfence_table_find_owned_locked - the object a handle names, of one device
 * @t: the table, whose lock is held
 * @handle: the handle
 * @device: the handle of the device the object must belong to
 *
 * Return: the object, or NULL if @handle names none or one of another
 * device; valid while the lock is held.
 */
struct nfence_object *nfence_table_find_owned_locked(struct nfence_table *t,
						     u32 handle, u32 device)
{
	struct nfence_object *obj = nfence_table_find_locked(t, handle);

	if (obj && nfence_object_device(obj)->handle != device)
		obj = NULL;
	return obj;
}

/* @obj (found in @t under its lock) with a reference, or NULL if going. */
static struct nfence_object *nfence_table_get_locked(struct nfence_table *t,
						     struct nfence_object *obj)
{
	lockdep_assert_held(&t->xa.xa_lock);
	return obj && obj->ops->get(obj) ? obj : NULL;
}

/**
 * nfence_table_lookup - find an object by handle and take a reference
 * @t: the table, whose objects have &nfence_object_ops.get
 * @handle: the handle
 *
 * Return: the object with a reference, or NULL.
 */
struct nfence_object *nfence_table_lookup(struct nfence_table *t, u32 handle)
{
	struct nfence_object *obj;

	nfence_table_lock(t);
	obj = nfence_table_find_locked(t, handle);
	obj = nfence_table_get_locked(t, obj);
	nfence_table_unlock(t);
	return obj;
}

/**
 * nfence_table_lookup_owned - find an object of a device and take a reference
 * @t: the table, whose objects have &nfence_object_ops.get
 * @handle: the handle
 * @device: the handle of the device the object must belong to
 *
 * Return: the object with a reference, or NULL.
 */
struct nfence_object *nfence_table_lookup_owned(struct nfence_table *t,
						u32 handle, u32 device)
{
	struct nfence_object *obj;

	nfence_table_lock(t);
	obj = nfence_table_find_owned_locked(t, handle, device);
	obj = nfence_table_get_locked(t, obj);
	nfence_table_unlock(t);
	return obj;
}

/**
 * nfence_table_remove_owned - take an object of a device out of its table
 * @t: the table
 * @handle: the handle
 * @device: the handle of the device the object must belong to
 *
 * Return: the object, with the table's reference, for the caller to close
 * (nfence_registry_close()); NULL if @handle names no object of @device.
 */
struct nfence_object *nfence_table_remove_owned(struct nfence_table *t,
						u32 handle, u32 device)
{
	struct nfence_object *obj;

	nfence_table_lock(t);
	obj = nfence_table_find_owned_locked(t, handle, device);
	if (obj)
		nfence_table_erase_locked(t, handle);
	nfence_table_unlock(t);
	return obj;
}

/**
 * nfence_registry_init - set up the registry of a new file
 * @reg: the registry; its tables are set up by their kinds
 * @lock: the lock of the close walks
 */
void nfence_registry_init(struct nfence_registry *reg, struct mutex *lock)
{
	reg->lock = lock;
}

/**
 * nfence_registry_fini - tear down the registry of a closed file
 * @reg: the registry, emptied by nfence_registry_close_all()
 */
void nfence_registry_fini(struct nfence_registry *reg)
{
	int type;

	for (type = 0; type < NFENCE_OBJ_NUM; type++)
		nfence_table_fini(&reg->tables[type]);
}

/* Whether @owner is @obj's owner, or its owner's, and so on; NULL owns all. */
static bool nfence_object_owned_by(struct nfence_object *obj,
				   struct nfence_object *owner)
{
	if (!owner)
		return true;
	for (obj = obj->owner; obj; obj = obj->owner)
		if (obj == owner)
			return true;
	return false;
}

/* Objects of other owners a close walk passes in one hold of the lock. */
#define NFENCE_TABLE_SKIP_BATCH	64

/*
 * Take the next object of @t that @owner owns out of the table. The walk
 * past other owners' objects drops the table's lock every
 * NFENCE_TABLE_SKIP_BATCH of them (the caller holds the registry's lock).
 */
static struct nfence_object *
nfence_table_take_owned(struct nfence_table *t, struct nfence_object *owner,
			unsigned long *index)
{
	unsigned int skipped = 0;
	struct nfence_object *obj;

	nfence_table_lock(t);
	obj = xa_find(&t->xa, index, ULONG_MAX, XA_PRESENT);
	while (obj && !nfence_object_owned_by(obj, owner)) {
		/* Another owner's by the hundred thousand: not in one hold. */
		if (!(++skipped % NFENCE_TABLE_SKIP_BATCH)) {
			nfence_table_unlock(t);
			cond_resched();
			nfence_table_lock(t);
		}
		obj = xa_find_after(&t->xa, index, ULONG_MAX, XA_PRESENT);
	}
	if (obj)
		nfence_table_erase_locked(t, *index);
	nfence_table_unlock(t);
	return obj;
}

/**
 * nfence_registry_close_owned - close everything an object owns
 * @reg: the registry, whose lock is held
 * @owner: the owner, out of its table already; NULL for every object
 *
 * Kind by kind, in the order of DOC: object registry.
 */
void nfence_registry_close_owned(struct nfence_registry *reg,
				 struct nfence_object *owner)
{
	struct nfence_object *obj;
	unsigned long index;
	int type;

	lockdep_assert_held(reg->lock);
	for (type = 0; type < NFENCE_OBJ_NUM; type++) {
		index = 0;
		while ((obj = nfence_table_take_owned(&reg->tables[type],
						      owner, &index))) {
			obj->ops->close(reg, obj);
			/* A file may hold fences by the hundred thousand. */
			cond_resched();
		}
	}
}

/**
 * nfence_registry_close_locked - close an object and everything it owns
 * @reg: the registry, whose lock is held
 * @obj: the object, whose handle is out of its table
 */
void nfence_registry_close_locked(struct nfence_registry *reg,
				  struct nfence_object *obj)
{
	nfence_registry_close_owned(reg, obj);
	obj->ops->close(reg, obj);
}

/**
 * nfence_registry_close - close an object and everything it owns
 * @reg: the registry
 * @obj: the object, whose handle is out of its table
 */
void nfence_registry_close(struct nfence_registry *reg,
			   struct nfence_object *obj)
{
	mutex_lock(reg->lock);
	nfence_registry_close_locked(reg, obj);
	mutex_unlock(reg->lock);
}

/**
 * nfence_registry_close_all - close every object of a closing file
 * @reg: the registry; nothing else uses the file any more
 */
void nfence_registry_close_all(struct nfence_registry *reg)
{
	mutex_lock(reg->lock);
	nfence_registry_close_owned(reg, NULL);
	mutex_unlock(reg->lock);
}
