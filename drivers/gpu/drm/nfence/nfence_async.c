// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>

#include "nfence_async.h"

/**
 * DOC: bounded asynchronous lists
 *
 * A file keeps three kinds of work that outlive the ioctl that started it:
 * asynchronous waits (nfence_wait.c), syncobj bindings and syncobj signals
 * (nfence_syncobj.c). Each kind lives on a &struct nfence_async_list: the
 * pending entries, a count the uapi bounds (%DRM_NFENCE_MAX_ASYNC_WAITS,
 * %DRM_NFENCE_MAX_SYNCOBJ_BINDINGS, %DRM_NFENCE_MAX_SYNCOBJ_SIGNALS), a
 * lock-free list of the entries whose end is decided, and a work item on
 * the adapter's wait_wq that ends them.
 *
 * The rules, which the three users follow:
 *
 * - An entry goes on the list under the lock, with
 *   nfence_async_list_add_locked(), which refuses it with -ENOSPC when the
 *   count is at its limit. The caller then starts whatever may decide the
 *   entry's end (queues a waiter, adds a dma_fence callback) with the lock
 *   still held, so that the work, which takes an entry off the list under
 *   the lock, cannot take it before it is fully started.
 * - Whatever decides an entry's end, in any context (under a waitlist's
 *   spinlock, in a dma_fence callback), pushes it with
 *   nfence_async_list_ready(): an llist_add() and a queue_work(), no lock.
 *   It is pushed once: the user decides once (an atomic compare and
 *   exchange, or a callback that runs once).
 * - The work takes the decided entries with nfence_async_list_take(), in
 *   the order they were decided, and takes each off the list with
 *   nfence_async_list_remove() or nfence_async_list_unlink_locked().
 * - The count is decremented with nfence_async_list_uncount(), once per
 *   entry the add counted: when the entry leaves the list (bindings,
 *   signals), or earlier, when it completes (an asynchronous wait stops
 *   counting before its eventfd is signaled, so that whoever it wakes may
 *   wait again at once).
 * - Whoever takes an entry off the list (the work, a close, an unplug)
 *   owns what the list held of it; nfence_async_list_unlink_locked() tells
 *   which caller that is when more than one may try.
 * - Once the user has ended every entry (decided them all, or taken them
 *   off), nfence_async_list_drain() waits for the work and checks that
 *   nothing is left.
 *
 * The lock is the file's &nfence_file.async_lock, shared by the three
 * lists; it nests outside the waitlist locks (a waiter is queued under
 * it) and is never taken under them.
 */

/**
 * nfence_async_list_init - set up an empty list
 * @al: the list
 * @lock: the lock of its entries (the file's async_lock, set up already)
 * @max: the most entries it counts at once
 * @wq: where its work runs
 * @func: its work, which finds @al with container_of() on its argument
 */
void nfence_async_list_init(struct nfence_async_list *al, struct mutex *lock,
			    u32 max, struct workqueue_struct *wq,
			    work_func_t func)
{
	al->lock = lock;
	INIT_LIST_HEAD(&al->entries);
	atomic_set(&al->count, 0);
	al->max = max;
	init_llist_head(&al->ready);
	INIT_WORK(&al->work, func);
	al->wq = wq;
}

/**
 * nfence_async_list_add_locked - put an entry on the list if it has room
 * @al: the list
 * @link: the entry's link
 *
 * Called with @al's lock held. The entry counts until
 * nfence_async_list_uncount().
 *
 * Return: 0, or -ENOSPC if @al already counts its limit of entries.
 */
int nfence_async_list_add_locked(struct nfence_async_list *al,
				 struct list_head *link)
{
	lockdep_assert_held(al->lock);
	/* Decrements only lower the count meanwhile: no overshoot. */
	if (atomic_read(&al->count) >= al->max)
		return -ENOSPC;
	list_add_tail(link, &al->entries);
	atomic_inc(&al->count);
	return 0;
}

/**
 * nfence_async_list_unlink_locked - take an entry off the list, if it is on
 * @al: the list
 * @link: the entry's link, on @al or off it (empty)
 *
 * Called with @al's lock held. Leaves @link empty; does not change the
 * count.
 *
 * Return: true if this call took the entry off: the caller owns what the
 * list held of it.
 */
bool nfence_async_list_unlink_locked(struct nfence_async_list *al,
				     struct list_head *link)
{
	lockdep_assert_held(al->lock);
	if (list_empty(link))
		return false;
	list_del_init(link);
	return true;
}

/**
 * nfence_async_list_uncount - an entry stops counting against the limit
 * @al: the list
 *
 * Once per entry nfence_async_list_add_locked() counted; any context.
 */
void nfence_async_list_uncount(struct nfence_async_list *al)
{
	atomic_dec(&al->count);
}

/**
 * nfence_async_list_remove - take a counted entry off the list
 * @al: the list
 * @link: the entry's link, on @al
 *
 * Takes @al's lock: takes the entry off and uncounts it. An entry already
 * off the list was uncounted by whoever took it off: a WARN, and the count
 * is left alone.
 */
void nfence_async_list_remove(struct nfence_async_list *al,
			      struct list_head *link)
{
	mutex_lock(al->lock);
	if (!WARN_ON_ONCE(!nfence_async_list_unlink_locked(al, link)))
		nfence_async_list_uncount(al);
	mutex_unlock(al->lock);
}

/**
 * nfence_async_list_ready - hand a decided entry to the list's work
 * @al: the list
 * @node: the entry's ready node, pushed once
 *
 * Any context (no lock, no sleep): an llist_add() and a queue_work().
 */
void nfence_async_list_ready(struct nfence_async_list *al,
			     struct llist_node *node)
{
	llist_add(node, &al->ready);
	queue_work(al->wq, &al->work);
}

/**
 * nfence_async_list_take - the decided entries, for the list's work
 * @al: the list
 *
 * Return: the entries pushed since the last take, oldest first
 * (llist_for_each_entry_safe() walks them).
 */
struct llist_node *nfence_async_list_take(struct nfence_async_list *al)
{
	return llist_reverse_order(llist_del_all(&al->ready));
}

/**
 * nfence_async_list_drain - wait for the work of a list whose entries ended
 * @al: the list
 *
 * The caller has ended every entry: each is decided (pushed with
 * nfence_async_list_ready()) or taken off, and none can be added. Returns
 * when the work has run for every entry pushed; warns if an entry or a
 * count is left.
 */
void nfence_async_list_drain(struct nfence_async_list *al)
{
	flush_work(&al->work);
	WARN_ON(!list_empty(&al->entries) || atomic_read(&al->count));
}
