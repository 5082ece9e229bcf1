// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/rcupdate.h>

#include "nfence_waitlist.h"

/**
 * DOC: CPU waiters and MonitoredValue
 *
 * WDDM's contract for DxgkDdiUpdateMonitoredValues: write the new
 * MonitoredValue, execute a full barrier, re-sample CurrentValue and satisfy
 * any waiter the new value releases. The signal side is the mirror image:
 * write CurrentValue, full barrier, read MonitoredValue and take the
 * interrupt path if CurrentValue exceeds it. Each side stores and then loads
 * the other's location with a full barrier in between, so at least one of
 * them sees the other's store: either the waiter sees the new CurrentValue,
 * or the signaller sees the new MonitoredValue and raises the interrupt. No
 * wakeup is lost.
 *
 * Every change of the waiter set goes through nfence_waitlist_settle(),
 * which loops until the least queued value is above CurrentValue as
 * re-sampled after the barrier.
 */

static bool nfence_waiter_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct nfence_waiter, node)->value <
	       rb_entry(b, struct nfence_waiter, node)->value;
}

/*
 * Satisfy the waiters CurrentValue has reached, then publish the new
 * MonitoredValue and re-check. Called with the lock held.
 */
static unsigned int nfence_waitlist_settle(struct nfence_waitlist *wl)
{
	unsigned int woken = 0;

	lockdep_assert_held(&wl->lock);
	for (;;) {
		u64 cv = READ_ONCE(*wl->cv);
		struct nfence_waiter *least = NULL;
		struct rb_node *first;

		while ((first = rb_first_cached(&wl->tree))) {
			least = rb_entry(first, struct nfence_waiter, node);
			if (least->value > cv)
				break;
			rb_erase_cached(first, &wl->tree);
			RB_CLEAR_NODE(first);
			least->queued = false;
			least->reached = true;
			wl->count--;
			least->done(least);
			woken++;
			least = NULL;
		}

		WRITE_ONCE(*wl->mv, least ? least->value - 1 : U64_MAX);
		/* Order the MonitoredValue store before the re-sample. */
		smp_mb();
		if (!least || READ_ONCE(*wl->cv) < least->value)
			return woken;
	}
}

/**
 * nfence_waitlist_init - set up the waitlist of a fence
 * @wl: the waitlist
 * @cv: the fence's CurrentValue
 * @mv: the fence's MonitoredValue, set to U64_MAX (no waiter)
 */
void nfence_waitlist_init(struct nfence_waitlist *wl, u64 *cv, u64 *mv)
{
	spin_lock_init(&wl->lock);
	wl->tree = RB_ROOT_CACHED;
	wl->count = 0;
	wl->closed = false;
	wl->cv = cv;
	wl->mv = mv;
	WRITE_ONCE(*mv, U64_MAX);
}

/**
 * nfence_waitlist_move_value - move a word of the fence to new storage
 * @wl: the fence's waitlist
 * @from: the word's storage now: the fence's CurrentValue or
 *	MonitoredValue, or a word the waitlist does not use
 * @to: its new storage
 * @value: the fence's pointer to the word (&nfence_fence_slot.value),
 *	pointed at @to
 *
 * Under the waitlist's lock, which every CPU write of MonitoredValue and
 * nfence_waitlist_raise_cv() hold: the word is copied, and the waitlist
 * and the fence use @to from then on. Writers that hold neither this lock
 * nor &nfence_cmp.lock must not exist for @from (see DOC: demoting fence
 * storage).
 */
void nfence_waitlist_move_value(struct nfence_waitlist *wl, const u64 *from,
				u64 *to, u64 __rcu **value)
{
	spin_lock(&wl->lock);
	WRITE_ONCE(*to, READ_ONCE(*from));
	if (wl->cv == from)
		wl->cv = to;
	if (wl->mv == from)
		wl->mv = to;
	/* The copy before the address: an RCU reader of @to finds the value. */
	rcu_assign_pointer(*value, to);
	spin_unlock(&wl->lock);
}

/**
 * nfence_waitlist_raise_cv - raise CurrentValue outside the CMP
 * @wl: the fence's waitlist
 * @value: the value CurrentValue is raised to, if it is below
 *
 * For the one CPU store to a value the CPU cannot signal (a fence born
 * AlwaysSignaled): under the waitlist's lock, so that it lands in the
 * storage nfence_waitlist_move_value() left.
 */
void nfence_waitlist_raise_cv(struct nfence_waitlist *wl, u64 value)
{
	spin_lock(&wl->lock);
	if (READ_ONCE(*wl->cv) < value)
		WRITE_ONCE(*wl->cv, value);
	spin_unlock(&wl->lock);
}

/**
 * nfence_waitlist_add - queue a waiter
 * @wl: the waitlist
 * @waiter: the waiter, with @value and @done set
 *
 * If CurrentValue already reached the value, @done runs before this returns
 * and the waiter is not queued.
 *
 * Return: true if the waiter was satisfied at once.
 */
bool nfence_waitlist_add(struct nfence_waitlist *wl,
			 struct nfence_waiter *waiter)
{
	bool satisfied;

	spin_lock(&wl->lock);
	if (wl->closed) {
		/* The fence can never change again: release at once. */
		waiter->queued = false;
		waiter->reached = false;
		waiter->done(waiter);
		spin_unlock(&wl->lock);
		return true;
	}
	rb_add_cached(&waiter->node, &wl->tree, nfence_waiter_less);
	waiter->queued = true;
	wl->count++;
	nfence_waitlist_settle(wl);
	satisfied = !waiter->queued;
	spin_unlock(&wl->lock);
	return satisfied;
}

/**
 * nfence_waitlist_remove - dequeue a waiter that is no longer interested
 * @wl: the waitlist
 * @waiter: the waiter; nothing happens if it is not queued
 *
 * MonitoredValue moves up to the next least value. Other waiters that
 * CurrentValue has reached meanwhile are satisfied.
 */
void nfence_waitlist_remove(struct nfence_waitlist *wl,
			    struct nfence_waiter *waiter)
{
	spin_lock(&wl->lock);
	if (waiter->queued) {
		rb_erase_cached(&waiter->node, &wl->tree);
		RB_CLEAR_NODE(&waiter->node);
		waiter->queued = false;
		wl->count--;
		nfence_waitlist_settle(wl);
	}
	spin_unlock(&wl->lock);
}

/**
 * nfence_waitlist_process - the interrupt path for one fence
 * @wl: the waitlist
 *
 * Satisfies every waiter CurrentValue has reached and advances
 * MonitoredValue.
 *
 * Return: the number of waiters satisfied.
 */
unsigned int nfence_waitlist_process(struct nfence_waitlist *wl)
{
	unsigned int woken;

	spin_lock(&wl->lock);
	woken = nfence_waitlist_settle(wl);
	spin_unlock(&wl->lock);
	return woken;
}

/**
 * nfence_waitlist_flush - release every waiter, reached or not, for good
 * @wl: the waitlist
 *
 * For a fence that can no longer change: the device is in error
 * (AlwaysSignaled) or nobody holds it any more. MonitoredValue becomes
 * U64_MAX, and waiters added afterwards are released at once.
 *
 * Return: the number of waiters released.
 */
unsigned int nfence_waitlist_flush(struct nfence_waitlist *wl)
{
	struct rb_node *first;
	unsigned int woken = 0;

	spin_lock(&wl->lock);
	wl->closed = true;
	while ((first = rb_first_cached(&wl->tree))) {
		struct nfence_waiter *w = rb_entry(first, struct nfence_waiter,
						   node);

		rb_erase_cached(first, &wl->tree);
		RB_CLEAR_NODE(first);
		w->queued = false;
		w->reached = false;
		wl->count--;
		w->done(w);
		woken++;
	}
	WRITE_ONCE(*wl->mv, U64_MAX);
	spin_unlock(&wl->lock);
	return woken;
}

/**
 * nfence_waitlist_count - number of queued waiters
 * @wl: the waitlist
 *
 * Return: the count, a snapshot.
 */
u32 nfence_waitlist_count(struct nfence_waitlist *wl)
{
	return READ_ONCE(wl->count);
}

/**
 * nfence_waitlist_snapshot - the waiter count and a MonitoredValue, together
 * @wl: the waitlist
 * @mv: where the MonitoredValue to read is (&nfence_fence_slot.value of the
 *      fence's own, which is the waitlist's bound except on a
 *      cross-adapter instance without peer signals, where it stays 0)
 * @monitored: out: the MonitoredValue
 *
 * Read under the lock that orders MonitoredValue updates with the waiter
 * set, so the two agree: a reader never sees a new waiter counted before
 * MonitoredValue has moved for it. A demotion moves the value under the
 * same lock (nfence_waitlist_move_value()), so the address is looked at
 * there too.
 *
 * Return: the number of queued waiters.
 */
u32 nfence_waitlist_snapshot(struct nfence_waitlist *wl,
			     u64 __rcu *const *mv, u64 *monitored)
{
	u32 count;

	spin_lock(&wl->lock);
	*monitored = READ_ONCE(*rcu_dereference_check(*mv,
						      lockdep_is_held(&wl->lock)));
	count = wl->count;
	spin_unlock(&wl->lock);
	return count;
}
