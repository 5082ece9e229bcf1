/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_ASYNC_H__
#define __NFENCE_ASYNC_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct mutex;

/**
 * struct nfence_async_list - a file's bounded list of pending asynchronous
 * entries, and the work item that ends them
 *
 * Locking: @entries, and every increment of @count, under @lock (the
 * file's &nfence_file.async_lock); @ready and @work from any context. See
 * DOC: bounded asynchronous lists in nfence_async.c.
 */
struct nfence_async_list {
	/** @lock: protects @entries; the file's async_lock */
	struct mutex *lock;
	/** @entries: the pending entries (a &list_head in each), under @lock */
	struct list_head entries;
	/**
	 * @count: the entries that count against @max: incremented under
	 * @lock by nfence_async_list_add_locked(), decremented by
	 * nfence_async_list_uncount() (under @lock or not)
	 */
	atomic_t count;
	/** @max: the uapi limit of @count (a DRM_NFENCE_MAX_* value) */
	u32 max;
	/** @ready: entries decided, for @work, in LIFO order */
	struct llist_head ready;
	/** @work: the function given to nfence_async_list_init(), on @wq */
	struct work_struct work;
	/** @wq: where @work runs (&nfence_adapter.wait_wq) */
	struct workqueue_struct *wq;
};

void nfence_async_list_init(struct nfence_async_list *al, struct mutex *lock,
			    u32 max, struct workqueue_struct *wq,
			    work_func_t func);
int nfence_async_list_add_locked(struct nfence_async_list *al,
				 struct list_head *link);
bool nfence_async_list_unlink_locked(struct nfence_async_list *al,
				     struct list_head *link);
void nfence_async_list_uncount(struct nfence_async_list *al);
void nfence_async_list_remove(struct nfence_async_list *al,
			      struct list_head *link);
void nfence_async_list_ready(struct nfence_async_list *al,
			     struct llist_node *node);
struct llist_node *nfence_async_list_take(struct nfence_async_list *al);
void nfence_async_list_drain(struct nfence_async_list *al);

#endif /* __NFENCE_ASYNC_H__ */
