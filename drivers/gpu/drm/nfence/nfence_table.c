// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/lockdep.h>

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
 * nfence_table_insert_locked - give an object a handle
 * @t: the table, whose xarray lock is held (it may be dropped and retaken)
 * @obj: the object
 * @handle: out: its handle
 *
 * Return: 0; -ENOSPC when the table holds @t->max handles; -ENOMEM, or
 * -EBUSY if no 32-bit handle is free.
 */
int nfence_table_insert_locked(struct nfence_table *t, void *obj, u32 *handle)
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
	return 0;
}

/**
 * nfence_table_erase_locked - take a handle out of its table
 * @t: the table, whose xarray lock is held
 * @handle: the handle
 *
 * Return: the object the handle named, or NULL if it named none.
 */
void *nfence_table_erase_locked(struct nfence_table *t, u32 handle)
{
	void *obj;

	lockdep_assert_held(&t->xa.xa_lock);
	obj = __xa_erase(&t->xa, handle);
	if (obj)
		t->count--;
	return obj;
}
