/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_WAITLIST_H__
#define __NFENCE_WAITLIST_H__

#include <linux/compiler_types.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct nfence_waiter;

/**
 * struct nfence_waitlist - the CPU waiters of one native fence
 *
 * Keeps MonitoredValue equal to (least waited-on value) - 1, or U64_MAX
 * with no waiter. Waiters sit in an rbtree ordered by value, so adding or
 * removing one costs O(log n) and finding the least is O(1).
 */
struct nfence_waitlist {
	/**
	 * @lock: protects @tree, @count, the pointers @cv and @mv, and CPU
	 * writes of *@mv
	 */
	spinlock_t lock;
	/** @tree: queued waiters by value, leftmost cached */
	struct rb_root_cached tree;
	/** @count: queued waiters */
	u32 count;
	/** @closed: flushed for good: waiters added later complete at once */
	bool closed;
	/** @cv: CurrentValue; written by the GPU and the CPU signal path */
	u64 *cv;
	/** @mv: MonitoredValue; read by the GPU */
	u64 *mv;
};

/**
 * struct nfence_waiter - one CPU wait for one fence reaching one value
 */
struct nfence_waiter {
	/** @node: entry in &nfence_waitlist.tree while queued */
	struct rb_node node;
	/** @value: the value waited for */
	u64 value;
	/** @queued: in a waitlist's tree */
	bool queued;
	/**
	 * @reached: set before @done is called: true if CurrentValue had
	 * reached @value when the waiter was released, false if the
	 * waitlist was flushed or closed when it was added. When true,
	 * @done must not check CurrentValue again: a GPU may have written a
	 * lower value since. When false, @done tells AlwaysSignaled from an
	 * orphaned fence.
	 */
	bool reached;
	/**
	 * @done: called under the waitlist lock when the value is reached,
	 * when the waitlist is flushed, or at once when it is added to a
	 * flushed (closed) waitlist, once the waiter is out of the tree; the
	 * waitlist does not touch the waiter after it returns
	 */
	void (*done)(struct nfence_waiter *waiter);
};

void nfence_waitlist_init(struct nfence_waitlist *wl, u64 *cv, u64 *mv);
void nfence_waitlist_move_value(struct nfence_waitlist *wl, const u64 *from,
				u64 *to, u64 __rcu **value);
void nfence_waitlist_raise_cv(struct nfence_waitlist *wl, u64 value);
bool nfence_waitlist_add(struct nfence_waitlist *wl,
			 struct nfence_waiter *waiter);
void nfence_waitlist_remove(struct nfence_waitlist *wl,
			    struct nfence_waiter *waiter);
unsigned int nfence_waitlist_process(struct nfence_waitlist *wl);
unsigned int nfence_waitlist_flush(struct nfence_waitlist *wl);
u32 nfence_waitlist_count(struct nfence_waitlist *wl);
u32 nfence_waitlist_snapshot(struct nfence_waitlist *wl,
			     u64 __rcu *const *mv, u64 *monitored);

#endif /* __NFENCE_WAITLIST_H__ */
