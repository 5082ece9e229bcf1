// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_gem.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
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
 * nfence_fence_vram_demote() moves fence storage out of VRAM and the
 * allocation tries again: first the allocating file's own (its VRAM pool
 * pages, DOC: native fences, and the VRAM ranges of the shared fences
 * whose values are charged to it), then, if VRAM itself, not the file's
 * quota, is still short, every file's and every shared fence's, and it
 * tries once more. Values move with the fences alive: waited on by CPUs,
 * parked on by queues, signaled by engines. A pool page moves whole, to a
 * page of system memory; a shared fence's value, a VRAM range of its own,
 * moves to a page of its own that only the GPU maps (as a shared fence's
 * value that found no room in VRAM at creation has). One call moves at
 * most the pages each file had when the call reached it, and the shared
 * values of the fences that existed when it began, so a client that keeps
 * making fences cannot keep it going. It holds &nfence_adapter.clients_lock
 * throughout, which every open and close of a file of the adapter takes,
 * and waits for a grace period per batch of NFENCE_DEMOTE_BATCH (16) pool
 * pages or shared values moved, never per page. Finding the shared values
 * walks the adapter's fences, so it is done only while some are in VRAM:
 * the adapter and each file's usage count them (nfence_vram_shared_count()),
 * and an allocation that fails over and over at its quota, with no shared
 * value of its file in VRAM, costs no walk.
 *
 * What stays the same: every GPU VA (the pool page's mapping in its
 * file's address space, and every value map of a moved value: a shared
 * fence's in each file that opened it, closing files included, and the
 * NO_SIGNAL handles' read-only ones, nfence_value_maps_move(), are
 * pointed at the new memory), the values, MonitoredValue included, and
 * the absence of a CPU mapping (values in VRAM never have one). What
 * changes: the kernel address of each value (&nfence_fence_slot.value, and
 * the waitlist's pointers).
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
 *   one is made up for by a look at every waiter of the moved fences
 *   after that grace period;
 * - every other CPU read of CurrentValue (the waits' and the argument
 *   checks', nfence_fence_read()) is under RCU too, and finds the value
 *   in either storage; any other use of a value's address holds one of
 *   the locks above, or is of a value out of VRAM, which never moves
 *   again. &nfence_fence_slot.value is an RCU pointer: sparse refuses a
 *   plain use of it, and nfence_slot_value() has PROVE_RCU check the
 *   reason its caller gives;
 * - a handle being made or closed maps or unmaps a value holding
 *   &nfence_adapter.maps_lock for reading, which the move holds for
 *   writing from before it looks for the value's maps until they point at
 *   the new storage: a map is made either before (and moved) or after
 *   (of the new storage);
 * - a fence still being created has a slot but no entry in the page's
 *   &nfence_fence_page.fences yet (its values are written before it is
 *   published there): a page with such a slot is left where it is, and so
 *   is a shared fence not yet in &nfence_adapter.fences.
 *
 * A moved pool page then sits in its file's %NFENCE_POOL_DEMOTED list: no
 * new value is placed in it (new fences find VRAM again when there is
 * room), and it is freed when its last value goes (the trims of DOC: native
 * fences) or the file closes. A moved shared value stays in its page for
 * the fence's life. The system memory a move takes is charged to the
 * memory cgroup of the process whose allocation needed the room.
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
			complete = nfence_demote_page_complete(fp);
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
 * The NO_SIGNAL maps of @fp's values (only @nfile has handles on a fence
 * of its pool) point at their new place, @fp's memory now. Each key is
 * taken under the page's lock, which keeps the slot's fence; the map it
 * names cannot go, nor another come, while the maps lock is held (a key
 * whose fence went meanwhile names no map).
 */
static void nfence_demote_move_maps(struct nfence_adapter *adapter,
				    struct nfence_file *nfile,
				    struct nfence_fence_page *fp)
{
	struct rw_semaphore *maps_lock = &adapter->maps_lock;
	struct nfence_fence_slot *slot;
	struct nfence_fence *fence;
	unsigned long key = 0;
	unsigned int i;
	u64 *value;

	for (i = 0; i < NFENCE_FENCE_SLOTS; i++) {
		spin_lock(&fp->lock);
		fence = fp->fences[i];
		slot = fence ? nfence_demote_slot(fence, fp) : NULL;
		value = NULL;
		if (slot) {
			value = nfence_slot_value(slot, lockdep_is_held(maps_lock));
			key = nfence_value_map_key(fence, slot);
		}
		spin_unlock(&fp->lock);
		if (value)
			nfence_value_maps_move(adapter, nfile, key, value);
	}
}

/*
 * Move @fp, a VRAM pool page of @nfile, to @page, with every engine of
 * @adapter stopped and no value map made or dropped: the page's GPU
 * mapping, the NO_SIGNAL maps of its values, then each fence's values
 * under its waitlist lock. Returns the VRAM range to give back after a
 * grace period.
 */
static struct nfence_segment_node *
nfence_demote_move(struct nfence_adapter *adapter, struct nfence_file *nfile,
		   struct nfence_fence_page *fp, struct page *page)
{
	struct nfence_segment_node *node = fp->vram;
	void *from = fp->vaddr, *to = page_address(page);
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_fence_slot *slot;
	struct nfence_fence *fence;
	unsigned int i;

	down_write(&adapter->maps_lock);
	nfence_cmp_lock(cmp);
	/* The GPU sees the new page only once the values are in it. */
	spin_lock(&fp->lock);
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
	nfence_demote_move_maps(adapter, nfile, fp);
	nfence_cmp_unlock(cmp);
	up_write(&adapter->maps_lock);
	return node;
}

/*
 * After the grace period: the waiters of @fence, whose MonitoredValue a
 * CPU signal may have read from the old storage, get a look at
 * CurrentValue.
 */
static void nfence_demote_recheck(struct nfence_fence *fence)
{
	nfence_waitlist_process(&fence->waiters);
}

/* nfence_demote_recheck() for every fence of @fp. */
static void nfence_demote_recheck_page(struct nfence_fence_page *fp)
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
		nfence_demote_recheck(fence);
		nfence_fence_put(fence);
	}
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

/*
 * Pool pages, or shared values, moved between two grace periods: each
 * grace period is waited for with the adapter's clients_lock held, which
 * opening and closing a file of the adapter take.
 */
#define NFENCE_DEMOTE_BATCH	16

/**
 * nfence_demote_grace - wait until no lockless reader is on old storage
 *
 * One RCU grace period, after a batch of moves. Visible to KUnit, which
 * stubs it to count them.
 */
NFENCE_VISIBLE_IF_KUNIT void nfence_demote_grace(void)
{
	NFENCE_KUNIT_STUB(nfence_demote_grace);
	synchronize_rcu();
}

/* A batch of pool pages moved: each page, its old VRAM and old page. */
struct nfence_demote_pages {
	unsigned int count;
	struct nfence_fence_page *fp[NFENCE_DEMOTE_BATCH];
	struct nfence_segment_node *node[NFENCE_DEMOTE_BATCH];
	struct page *old[NFENCE_DEMOTE_BATCH];
};

/*
 * Move up to @max (at most NFENCE_DEMOTE_BATCH) pages of @nfile's, then
 * give their VRAM back after one grace period. Returns the number moved,
 * 0 if it has none left that can move.
 */
static unsigned int nfence_demote_pages(struct nfence_adapter *adapter,
					struct nfence_file *nfile,
					unsigned int max)
{
	struct nfence_demote_pages b = { .count = 0 };
	struct nfence_fence_page *fp;
	struct page *page;
	unsigned int i;

	max = min_t(unsigned int, max, NFENCE_DEMOTE_BATCH);
	while (b.count < max) {
		/*
		 * Before the pick: a picked page must move. Charged to the
		 * caller, whose allocation needs the room.
		 */
		page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page)
			break;
		fp = nfence_demote_pick(nfile);
		if (!fp) {
			__free_page(page);
			break;
		}
		b.old[b.count] = fp->page;
		b.node[b.count] = nfence_demote_move(adapter, nfile, fp, page);
		nfence_demote_moved(fp);
		b.fp[b.count++] = fp;
	}
	if (!b.count)
		return 0;
	nfence_demote_grace();
	for (i = 0; i < b.count; i++) {
		nfence_segment_free(b.node[i]);
		kfree(b.node[i]);
		put_page(b.old[i]);
		nfence_demote_recheck_page(b.fp[i]);
		drm_gem_object_put(&b.fp[i]->base);
	}
	return b.count;
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
	unsigned int n = nfence_demote_count(nfile), moved = 0, batch;

	while (moved < n) {
		batch = nfence_demote_pages(adapter, nfile, n - moved);
		if (!batch)
			break;
		moved += batch;
	}
	return moved;
}

/*
 * The shared values a batch moved: their fences (a reference each), and
 * the VRAM ranges to give back after the grace period.
 */
struct nfence_demote_batch {
	unsigned int count;
	struct nfence_fence *fences[NFENCE_DEMOTE_BATCH];
	struct nfence_segment_node *vram[2 * NFENCE_DEMOTE_BATCH];
	unsigned int num_vram;
};

/*
 * Whether @slot is a shared fence's VRAM range that the demotion moves:
 * any, or with @usage only one charged to that client. The demotion is the
 * only writer of a published fence's slots (under the adapter's
 * clients_lock), and the caller's reference keeps them.
 */
static bool nfence_demote_shared_slot(const struct nfence_fence_slot *slot,
				      struct nfence_segment_usage *usage)
{
	return slot->vram && (!usage || slot->vram->usage == usage);
}

/*
 * Move @slot, one of @fence's values in a VRAM range of its own, to @fp,
 * a page of its own: the value under the fence's waitlist lock, then every
 * value map of it. Under the CMP's lock and the maps lock. Returns the
 * VRAM range.
 */
static struct nfence_segment_node *
nfence_demote_shared_move(struct nfence_adapter *adapter,
			  struct nfence_fence *fence,
			  struct nfence_fence_slot *slot,
			  struct nfence_fence_page *fp)
{
	struct nfence_segment_node *node = slot->vram;
	u64 *from, *to = fp->vaddr;

	from = nfence_slot_value(slot, lockdep_is_held(&adapter->cmp.lock));
	nfence_waitlist_move_value(&fence->waiters, from, to, &slot->value);
	nfence_value_maps_move(adapter, NULL,
			       nfence_value_map_key(fence, slot), to);
	WRITE_ONCE(slot->page, fp);
	slot->offset = 0;
	WRITE_ONCE(slot->vram, NULL);
	nfence_vram_shared_count(adapter, node, -1);
	return node;
}

/*
 * Move @fence's values that are VRAM ranges of their own (charged to
 * @usage, if set) to pages of their own, recording what to give back in
 * @batch; false if memory for the pages is short.
 */
static bool nfence_demote_shared_fence(struct nfence_adapter *adapter,
				       struct nfence_fence *fence,
				       struct nfence_segment_usage *usage,
				       struct nfence_demote_batch *batch)
{
	struct nfence_fence_slot *slots[] = { &fence->cv, &fence->mv };
	struct nfence_fence_page *pages[ARRAY_SIZE(slots)] = { };
	unsigned int i;
	bool moved = false;

	for (i = 0; i < ARRAY_SIZE(slots); i++) {
		if (!nfence_demote_shared_slot(slots[i], usage))
			continue;
		pages[i] = nfence_fence_page_alone(adapter);
		if (IS_ERR(pages[i])) {
			pages[i] = NULL;
			break;
		}
	}
	if (i < ARRAY_SIZE(slots)) {
		for (i = 0; i < ARRAY_SIZE(slots); i++)
			if (pages[i])
				drm_gem_object_put(&pages[i]->base);
		return false;
	}

	down_write(&adapter->maps_lock);
	nfence_cmp_lock(&adapter->cmp);
	for (i = 0; i < ARRAY_SIZE(slots); i++) {
		if (!pages[i])
			continue;
		batch->vram[batch->num_vram++] =
			nfence_demote_shared_move(adapter, fence, slots[i],
						  pages[i]);
		moved = true;
	}
	nfence_cmp_unlock(&adapter->cmp);
	up_write(&adapter->maps_lock);
	if (moved)
		batch->fences[batch->count++] = fence;
	else
		nfence_fence_put(fence);
	return true;
}

/*
 * After a grace period, give back @batch's VRAM ranges and look at its
 * fences' waiters. Returns the number of fences it moved.
 */
static unsigned int nfence_demote_batch_end(struct nfence_demote_batch *batch)
{
	unsigned int i, n = batch->count;

	if (!n)
		return 0;
	nfence_demote_grace();
	for (i = 0; i < batch->num_vram; i++) {
		nfence_segment_free(batch->vram[i]);
		kfree(batch->vram[i]);
	}
	for (i = 0; i < n; i++) {
		nfence_demote_recheck(batch->fences[i]);
		nfence_fence_put(batch->fences[i]);
	}
	batch->count = 0;
	batch->num_vram = 0;
	return n;
}

/* Fences looked at per hold of the fence table's lock. */
#define NFENCE_DEMOTE_LOOK	64

/*
 * The next fence of @adapter from *@index up to @last with a value to move
 * (charged to @usage, if set), with a reference, and its id in *@index;
 * NULL when there is none. The table's lock, which the CMP and every
 * fence create and release take, is let go every NFENCE_DEMOTE_LOOK
 * fences: most fences have nothing to move.
 */
static struct nfence_fence *nfence_demote_next(struct nfence_adapter *adapter,
					       unsigned long *index,
					       unsigned long last,
					       struct nfence_segment_usage *usage)
{
	XA_STATE(xas, &adapter->fences, *index);
	struct nfence_fence *fence;
	unsigned int looked = 0;

	xas_lock(&xas);
	xas_for_each(&xas, fence, last) {
		/* Index 0, which an XA_FLAGS_ALLOC1 table keeps busy. */
		if (xa_is_zero(fence))
			continue;
		/* A fence being released is still in the table: skip it. */
		if ((nfence_demote_shared_slot(&fence->cv, usage) ||
		     nfence_demote_shared_slot(&fence->mv, usage)) &&
		    kref_get_unless_zero(&fence->ref))
			break;
		if (++looked % NFENCE_DEMOTE_LOOK == 0) {
			xas_pause(&xas);
			xas_unlock(&xas);
			cond_resched();
			xas_lock(&xas);
		}
	}
	*index = xas.xa_index;
	xas_unlock(&xas);
	return fence;
}

/**
 * nfence_demote_shared - move shared fence values out of VRAM
 * @adapter: the adapter
 * @usage: the usage the values are charged to, or NULL for every one
 *
 * Moves the shared fences' values in VRAM ranges of their own (those
 * charged to @usage, if set) to pages of their own; at most those of the
 * fences there are when it starts. It walks the adapter's fences: the
 * caller calls it only while such values exist (nfence_vram_shared_count()).
 *
 * Return: the number of fences moved.
 */
NFENCE_VISIBLE_IF_KUNIT unsigned int
nfence_demote_shared(struct nfence_adapter *adapter,
		     struct nfence_segment_usage *usage)
{
	struct nfence_demote_batch *batch;
	struct nfence_fence *fence;
	unsigned long index = 0, last = 0;
	unsigned int moved = 0;

	NFENCE_KUNIT_STUB(nfence_demote_shared, adapter, usage);

	/* The ids only: no entry is looked at. */
	xa_for_each(&adapter->fences, index, fence)
		last = index;
	if (!last)
		return 0;

	batch = kzalloc(sizeof(*batch), GFP_KERNEL);
	if (!batch)
		return 0;
	for (index = 0;
	     (fence = nfence_demote_next(adapter, &index, last, usage));
	     index++) {
		if (!nfence_demote_shared_fence(adapter, fence, usage, batch)) {
			nfence_fence_put(fence);
			break;
		}
		if (batch->count == NFENCE_DEMOTE_BATCH)
			moved += nfence_demote_batch_end(batch);
	}
	moved += nfence_demote_batch_end(batch);
	kfree(batch);
	return moved;
}

/**
 * nfence_fence_vram_demote - move fence storage out of VRAM
 * @adapter: the adapter whose VRAM (or a file's VRAM quota) is short
 * @nfile: the file whose storage to move, or NULL for every file's
 *
 * Moves to system memory (DOC: demoting fence storage) the VRAM pool pages
 * of @nfile and the shared fences' values in VRAM charged to it, or, with
 * no @nfile, the VRAM pool pages of every file of @adapter and every
 * shared fence's value in its VRAM, giving their VRAM back; at most the
 * pages each file has when this reaches it, and the values of the fences
 * there are when it starts.
 *
 * Context: process context, holding none of the driver's locks.
 *
 * Return: the number of pool pages and shared fences moved.
 */
unsigned int nfence_fence_vram_demote(struct nfence_adapter *adapter,
				      struct nfence_file *nfile)
{
	struct nfence_file *each;
	unsigned int moved = 0;

	mutex_lock(&adapter->clients_lock);
	/* The walk of every fence for shared values, only if there are some. */
	if (nfile) {
		moved = nfence_demote_file(adapter, nfile);
		if (atomic_read(&nfile->seg_usage->fence_values))
			moved += nfence_demote_shared(adapter,
						      nfile->seg_usage);
	} else {
		list_for_each_entry(each, &adapter->clients, link)
			moved += nfence_demote_file(adapter, each);
		if (atomic_read(&adapter->vram_shared_values))
			moved += nfence_demote_shared(adapter, NULL);
	}
	mutex_unlock(&adapter->clients_lock);
	return moved;
}
