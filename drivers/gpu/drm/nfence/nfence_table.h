/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_TABLE_H__
#define __NFENCE_TABLE_H__

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct nfence_object;
struct nfence_registry;

/**
 * enum nfence_object_type - the kinds of objects a file names by handle
 *
 * Also the order in which nfence_registry_close_owned() closes them: see
 * DOC: object registry.
 */
enum nfence_object_type {
	/** @NFENCE_OBJ_DOORBELL: a doorbell; its owner is its queue */
	NFENCE_OBJ_DOORBELL,
	/** @NFENCE_OBJ_HWQUEUE: a hardware queue; its owner is its context */
	NFENCE_OBJ_HWQUEUE,
	/** @NFENCE_OBJ_CONTEXT: a context; its owner is its device */
	NFENCE_OBJ_CONTEXT,
	/** @NFENCE_OBJ_ALLOC: an allocation; its owner is its device */
	NFENCE_OBJ_ALLOC,
	/** @NFENCE_OBJ_FENCE: a local fence handle; its owner is its device */
	NFENCE_OBJ_FENCE,
	/** @NFENCE_OBJ_DEVICE: a device; it has no owner */
	NFENCE_OBJ_DEVICE,
	/** @NFENCE_OBJ_NUM: the number of kinds */
	NFENCE_OBJ_NUM,
};

/**
 * struct nfence_object_ops - what the registry does to one kind of object
 */
struct nfence_object_ops {
	/**
	 * @get: take a reference for a lookup, under the table's xarray
	 * lock; false if the object is going (then the lookup finds
	 * nothing). NULL for a kind that nfence_table_lookup() never finds.
	 */
	bool (*get)(struct nfence_object *obj);
	/**
	 * @close: destroy an object whose handle is out of its table, whose
	 * owned objects are closed already, with &nfence_registry.lock held;
	 * drops the table's reference
	 */
	void (*close)(struct nfence_registry *reg, struct nfence_object *obj);
};

/**
 * struct nfence_object - what every object a file names by handle embeds
 *
 * Set before the object is inserted in its table, constant after.
 */
struct nfence_object {
	/** @ops: its kind */
	const struct nfence_object_ops *ops;
	/**
	 * @owner: the object it belongs to and that closes it: its device
	 * (context, allocation, local fence), its context (queue), its queue
	 * (doorbell); NULL for a device. An owner outlives what it owns.
	 */
	struct nfence_object *owner;
	/** @handle: its handle in its table, from the insert on */
	u32 handle;
};

/**
 * struct nfence_table - a per-file handle table
 *
 * Handles are allocated cyclically from 1, so that a destroyed handle is
 * not reused at once, and their number is bounded. @count is under the
 * xarray's lock.
 */
struct nfence_table {
	/** @xa: handle -> &struct nfence_object */
	struct xarray xa;
	/** @next: cyclic allocation cursor */
	u32 next;
	/** @count: live handles */
	u32 count;
	/** @max: at most this many live handles */
	u32 max;
};

/**
 * struct nfence_registry - the handle tables of one file, by kind
 */
struct nfence_registry {
	/**
	 * @lock: serializes the close walks, and so every destroy that
	 * closes owned objects (&nfence_file.sched_lock)
	 */
	struct mutex *lock;
	/** @tables: the tables, by &enum nfence_object_type */
	struct nfence_table tables[NFENCE_OBJ_NUM];
};

void nfence_table_init(struct nfence_table *t, u32 max);
void nfence_table_fini(struct nfence_table *t);
int nfence_table_insert_locked(struct nfence_table *t,
			       struct nfence_object *obj, u32 *handle);
struct nfence_object *nfence_table_erase_locked(struct nfence_table *t,
						u32 handle);
struct nfence_object *nfence_table_find_locked(struct nfence_table *t,
					       u32 handle);
struct nfence_object *nfence_table_find_owned_locked(struct nfence_table *t,
						     u32 handle, u32 device);
struct nfence_object *nfence_table_lookup(struct nfence_table *t, u32 handle);
struct nfence_object *nfence_table_lookup_owned(struct nfence_table *t,
						u32 handle, u32 device);
struct nfence_object *nfence_table_remove_owned(struct nfence_table *t,
						u32 handle, u32 device);
struct nfence_object *nfence_object_device(struct nfence_object *obj);

/**
 * nfence_table_lock - take a table's lock (the xarray's)
 * @t: the table
 */
static inline void nfence_table_lock(struct nfence_table *t)
{
	xa_lock(&t->xa);
}

/**
 * nfence_table_unlock - drop a table's lock
 * @t: the table
 */
static inline void nfence_table_unlock(struct nfence_table *t)
{
	xa_unlock(&t->xa);
}

/**
 * nfence_table_for_each - iterate over the objects of a table
 * @t: the table
 * @index: unsigned long: the handle of @obj
 * @obj: struct nfence_object *: each object in turn
 *
 * As xa_for_each(): with or without the table's lock; without it, an
 * object seen may be being destroyed, so a caller that uses more than the
 * object's constant fields looks it up again (nfence_table_lookup()).
 */
#define nfence_table_for_each(t, index, obj) \
	xa_for_each(&(t)->xa, index, obj)

void nfence_registry_init(struct nfence_registry *reg, struct mutex *lock);
void nfence_registry_fini(struct nfence_registry *reg);
void nfence_registry_close_owned(struct nfence_registry *reg,
				 struct nfence_object *owner);
void nfence_registry_close_locked(struct nfence_registry *reg,
				  struct nfence_object *obj);
void nfence_registry_close(struct nfence_registry *reg,
			   struct nfence_object *obj);
void nfence_registry_close_all(struct nfence_registry *reg);

/**
 * nfence_registry_table - the table of one kind of object
 * @reg: the registry
 * @type: &enum nfence_object_type
 *
 * Return: the table.
 */
static inline struct nfence_table *
nfence_registry_table(struct nfence_registry *reg, enum nfence_object_type type)
{
	return &reg->tables[type];
}

#endif /* __NFENCE_TABLE_H__ */
