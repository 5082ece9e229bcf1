// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include <drm/drm_gem.h>

#include "nfence_adapter.h"
#include "nfence_compat.h"
#include "nfence_fence.h"
#include "nfence_segment.h"
#include "nfence_vm.h"
#include "nfence_waitlist.h"

/**
 * DOC: demoting fence storage
 *
 * The seed lets the storage of a native fence placed in local memory (an
 * INTRA_GPU fence's values, an optimized DEFAULT fence's MonitoredValue) be
 * demoted to system memory under local memory pressure. When an
 * allocation finds no room in VRAM (or in its file's VRAM quota),
 * nfence_fence_vram_demote() moves the VRAM pool pages of the allocating
 * file (DOC: native fences, the pools) to system memory and the
 * allocation tries again; if VRAM itself, not the file's quota, is still
 * short, the pages of every other file of the adapter follow, and it
 * tries once more. A page moves whole, with the fences in it alive:
 * waited on by CPUs, parked on by queues, signaled by engines. One call
 * moves at most the pages each file had when the call reached it, so a
 * client that keeps making pages cannot keep it going.
 *
 * What stays the same: every GPU VA (the page's mapping in its file's
 * address space is pointed at the new memory, nfence_vm_move()), the
 * values, MonitoredValue included, and the absence of a CPU mapping (VRAM
 * pool pages never have one). What changes: the kernel address of each
 * value (&nfence_fence_slot.value, and the waitlist's pointers).
 *
 * Who can touch a value while it moves, and why none of it is lost:
 *
 * - the engines, the driver's carries and AlwaysSignaled raises run under
 *   &nfence_cmp.lock, which the move holds throughout;
 * - CPU writes of MonitoredValue, and the CurrentValue raise of a fence
 *   born AlwaysSignaled (nfence_waitlist_raise_cv()), hold the fence's
 *   waitlist lock, under which nfence_waitlist_move_value() copies each
 *   value and repoints the fence at its new storage;
 * - the CPU signal's interrupt check reads MonitoredValue without a lock,
 *   under RCU: the old VRAM is given back only after a grace period, and
 *   a check that read the old storage after a new waiter bound the new
 *   one is made up for by a look at every waiter of the page's fences
 *   after that grace period;
 * - a fence still being created has a slot but no entry in the page's
 *   &nfence_fence_page.fences yet (its values are written before it is
 *   published there): a page with such a slot is left where it is;
 * - a NO_SIGNAL handle of an INTRA_GPU fence maps the CurrentValue alone,
 *   read-only, outside the page's mapping: such a mapping pins the page
 *   (&nfence_fence_page.pinned, taken under the page's lock, which the
 *   move holds while it checks it and moves), and a pinned page stays.
 *
 * The page then sits in its file's %NFENCE_POOL_DEMOTED list: no new value
 * is placed in it (new fences find VRAM again when there is room), and it
 * is freed when its last value goes (the trims of DOC: native fences) or
 * the file closes. A shared fence's value in VRAM, a range of its own
 * mapped into every file that opened the fence, is not moved. The system
 * memory a moved page takes is charged to the memory cgroup of the
 * process whose allocation needed the room.
 *
 * The locks it takes, and in what order, are those of DOC: lock order.
 */

/* The pools whose pages move. */
static const enum nfence_pool_kind nfence_demote_kinds[] = {
	NFENCE_POOL_VRAM_CV, NFENCE_POOL_VRAM_MV,
};

/* Whether every used slot of @fp has its fence published (fp->lock held). */
static bool nfence_demote_page_complete(struct nfence_fence_page *fp)
{
	unsigned int i;

	lockdep_assert_held(&fp->lock);
	for_each_set_bit(i, fp->used, NFENCE_FENCE_SLOTS)
		if (!fp->fences[i])
			return false;
	return true;
}

/*
 * A VRAM pool page of @nfile that can move, taken off its pool into the
 * demoted list (so that no new value is placed in it), with a reference;
 * NULL if there is none.
 */
static struct nfence_fence_page *nfence_demote_pick(struct nfence_file *nfile)
{
	struct nfence_fence_page *fp;
	unsigned int i;
	bool complete;

	mutex_lock(&nfile->pool_lock);
	for (i = 0; i < ARRAY_SIZE(nfence_demote_kinds); i++) {
		struct list_head *pool = &nfile->pools[nfence_demote_kinds[i]];

		list_for_each_entry(fp, pool, link) {
			spin_lock(&fp->lock);
			complete = !fp->pinned &&
				   nfence_demote_page_complete(fp);
			spin_unlock(&fp->lock);
			if (!complete)
				continue;
			list_move(&fp->link, &nfile->pools[NFENCE_POOL_DEMOTED]);
			drm_gem_object_get(&fp->base);
			mutex_unlock(&nfile->pool_lock);
			return fp;
		}
	}
	mutex_unlock(&nfile->pool_lock);
	return NULL;
}

/* The slot of @fence whose value is in @fp, or NULL. */
static struct nfence_fence_slot *nfence_demote_slot(struct nfence_fence *fence,
						    struct nfence_fence_page *fp)
{
	if (fence->cv.page == fp)
		return &fence->cv;
	if (fence->mv.page == fp)
		return &fence->mv;
	return NULL;
}

/*
 * Move @fp's values to @page, with every engine of @cmp stopped: the
 * page's GPU mapping first, then each fence's values under its waitlist
 * lock. Returns the VRAM range to give back after a grace period, or NULL
 * if the page was pinned since it was picked (nothing moved).
 */
static struct nfence_segment_node *
nfence_demote_move(struct nfence_cmp *cmp, struct nfence_fence_page *fp,
		   struct page *page)
{
	struct nfence_segment_node *node = fp->vram;
	void *from = fp->vaddr, *to = page_address(page);
	struct nfence_fence_slot *slot;
	struct nfence_fence *fence;
	unsigned int i;

	nfence_cmp_lock(cmp);
	/* The GPU sees the new page only once the values are in it. */
	spin_lock(&fp->lock);
	if (fp->pinned) {
		spin_unlock(&fp->lock);
		nfence_cmp_unlock(cmp);
		return NULL;
	}
	for_each_set_bit(i, fp->used, NFENCE_FENCE_SLOTS) {
		/*
		 * Every used slot has its fence (the pick checked, and no
		 * slot is taken from a page off its pool); a fence being
		 * released is still here, and intact, until its slot is
		 * given back under the page's lock.
		 */
		fence = fp->fences[i];
		slot = fence ? nfence_demote_slot(fence, fp) : NULL;
		if (WARN_ON_ONCE(!slot))
			continue;
		nfence_waitlist_move_value(&fence->waiters, from + slot->offset,
					   to + slot->offset, &slot->value);
	}
	fp->vaddr = to;
	fp->page = page;
	WRITE_ONCE(fp->demoted, true);
	/* @demoted before @vram: nfence_vram_pool_page_get()'s read pairs. */
	smp_wmb();
	WRITE_ONCE(fp->vram, NULL);
	spin_unlock(&fp->lock);
	nfence_vm_move(&fp->map, to);
	nfence_cmp_unlock(cmp);
	return node;
}

/*
 * After the grace period: the waiters of @fp's fences, whose MonitoredValue
 * a CPU signal may have read from the old storage, get a look at
 * CurrentValue.
 */
static void nfence_demote_recheck(struct nfence_fence_page *fp)
{
	struct nfence_fence *fence;
	unsigned int i;

	for (i = 0; i < NFENCE_FENCE_SLOTS; i++) {
		spin_lock(&fp->lock);
		fence = fp->fences[i];
		if (fence && !kref_get_unless_zero(&fence->ref))
			fence = NULL;
		spin_unlock(&fp->lock);
		if (!fence)
			continue;
		nfence_waitlist_process(&fence->waiters);
		nfence_fence_put(fence);
	}
}

/* Put @fp, picked but pinned since, back in the VRAM pool it came from. */
static void nfence_demote_unpick(struct nfence_file *nfile,
				 struct nfence_fence_page *fp)
{
	/* Only a CurrentValue page can be pinned (a NO_SIGNAL mapping). */
	mutex_lock(&nfile->pool_lock);
	if (!list_empty(&fp->link))
		list_move(&fp->link, &nfile->pools[NFENCE_POOL_VRAM_CV]);
	mutex_unlock(&nfile->pool_lock);
}

/**
 * nfence_demote_picked - a page was picked to move, and is not moved yet
 * @fp: the page
 *
 * Called between the pick and the move, where a NO_SIGNAL handle made
 * for a fence of the page may pin it (the move then puts it back).
 * Does nothing; visible to KUnit, which stubs it to pin the page there.
 */
NFENCE_VISIBLE_IF_KUNIT void nfence_demote_picked(struct nfence_fence_page *fp)
{
	NFENCE_KUNIT_STUB(nfence_demote_picked, fp);
}

/**
 * nfence_demote_moved - a page's values moved, its old storage still there
 * @fp: the page
 *
 * Called between the move and the grace period after it, where a CPU
 * signal that read the old MonitoredValue may still be running. Does
 * nothing; visible to KUnit, which stubs it to run such a signal there.
 */
NFENCE_VISIBLE_IF_KUNIT void nfence_demote_moved(struct nfence_fence_page *fp)
{
	NFENCE_KUNIT_STUB(nfence_demote_moved, fp);
}

/* Move one page of @nfile's; false if it has none left that can move. */
static bool nfence_demote_one(struct nfence_adapter *adapter,
			      struct nfence_file *nfile)
{
	struct nfence_segment_node *node;
	struct nfence_fence_page *fp;
	struct page *page, *old;

	/*
	 * Before the pick: a picked page must move. Charged to the caller,
	 * whose allocation needs the room.
	 */
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return false;
	fp = nfence_demote_pick(nfile);
	if (!fp) {
		__free_page(page);
		return false;
	}
	nfence_demote_picked(fp);
	old = fp->page;
	node = nfence_demote_move(&adapter->cmp, fp, page);
	if (!node) {
		nfence_demote_unpick(nfile, fp);
		__free_page(page);
		drm_gem_object_put(&fp->base);
		return true;
	}
	nfence_demote_moved(fp);
	/* No lockless reader is left on the old storage. */
	synchronize_rcu();
	nfence_segment_free(node);
	kfree(node);
	put_page(old);
	nfence_demote_recheck(fp);
	drm_gem_object_put(&fp->base);
	return true;
}

/* The VRAM pool pages @nfile has now. */
static unsigned int nfence_demote_count(struct nfence_file *nfile)
{
	unsigned int i, n = 0;

	mutex_lock(&nfile->pool_lock);
	for (i = 0; i < ARRAY_SIZE(nfence_demote_kinds); i++)
		n += list_count_nodes(&nfile->pools[nfence_demote_kinds[i]]);
	mutex_unlock(&nfile->pool_lock);
	return n;
}

/* Move @nfile's pages, at most as many as it has now. */
static unsigned int nfence_demote_file(struct nfence_adapter *adapter,
				       struct nfence_file *nfile)
{
	unsigned int n = nfence_demote_count(nfile), moved = 0;

	while (moved < n && nfence_demote_one(adapter, nfile))
		moved++;
	return moved;
}

/**
 * nfence_fence_vram_demote - move fence storage out of VRAM
 * @adapter: the adapter whose VRAM (or a file's VRAM quota) is short
 * @nfile: the file whose pages to move, or NULL for every file's
 *
 * Moves the VRAM pool pages of @nfile (or of every file of @adapter) that
 * can move to system memory (DOC: demoting fence storage), giving their
 * VRAM back; at most the pages each file has when this reaches it.
 *
 * Context: process context, holding none of the driver's locks.
 *
 * Return: the number of pages looked at to move (a page pinned meanwhile
 * counts, without moving).
 */
unsigned int nfence_fence_vram_demote(struct nfence_adapter *adapter,
				      struct nfence_file *nfile)
{
	struct nfence_file *each;
	unsigned int moved = 0;

	mutex_lock(&adapter->clients_lock);
	if (nfile)
		moved = nfence_demote_file(adapter, nfile);
	else
		list_for_each_entry(each, &adapter->clients, link)
			moved += nfence_demote_file(adapter, each);
	mutex_unlock(&adapter->clients_lock);
	return moved;
}
