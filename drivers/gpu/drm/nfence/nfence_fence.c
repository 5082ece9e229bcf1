// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_compat.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_mmap.h"
#include "nfence_peer.h"
#include "nfence_window.h"

/*
 * A fence value is one 64-bit load or store (DOC: native fences): a 32-bit
 * kernel would tear them.
 */
static_assert(IS_ENABLED(CONFIG_64BIT));

/**
 * DOC: native fence objects
 *
 * WDDM's "global and local handles for shared fences", in Linux terms:
 *
 * - &struct nfence_fence is the global object (hGlobalNativeFence). It owns
 *   the storage of CurrentValue and MonitoredValue and the CPU waiters.
 * - &struct nfence_fence_local is a local handle (hLocalNativeFence): one
 *   per create or open, in the file's ``fences`` xarray, with the GPU VA
 *   mappings and the CPU mmap permission of that file.
 * - Sharing gives a file descriptor (the NT handle) of an anonymous inode
 *   whose private data is a reference to the global object; opening it
 *   checks the file operations, so an fd of any other kind is refused.
 *
 * Storage follows WDDM: a non-shared DEFAULT fence packs its
 * CurrentValue into a CPU-mappable pool page of its file and its
 * MonitoredValue into a kernel-only pool page (or into a VRAM pool page the
 * CPU cannot see when the adapter has the optimized DEFAULT fence, falling
 * back to the system memory pool when VRAM is short); a shared fence gets
 * pages of its own, and a VRAM range of its own for a value in VRAM; an
 * INTRA_GPU fence keeps both values in invisible VRAM and has no CPU
 * mapping (when VRAM or the file's VRAM quota is short, its CurrentValue
 * gets a page of its own that only the GPU maps, and its MonitoredValue
 * goes where a DEFAULT fence's would). CurrentValue pages are mapped
 * read-only: the mmap callback refuses VM_WRITE and clears VM_MAYWRITE, so
 * mprotect() cannot add it.
 *
 * A pool page holds 64 values of one file and is mapped whole into that
 * file's GPU VA space, once: a value in it needs no mapping of its own. A
 * VRAM pool page is charged to the file's VRAM quota when it is made, and
 * goes back to VRAM when the handle close that frees its last value ends;
 * a system memory pool page stays with its file until the file closes.
 *
 * 64-bit values are written with single 64-bit stores (WRITE_ONCE on a
 * naturally aligned u64, or cmpxchg64), never torn.
 *
 * Memory: the global fences, the local handles and the value maps come
 * from slab caches of their own (nfence_fence_caches_init()), sized to the
 * structure rather than to the next kmalloc size. Only a shared fence's
 * value placed in VRAM gets a segment node (a drm_mm node) of its own, and
 * only NO_SIGNAL handles need a GPU VA of their own for a pool page's value
 * (their file's read-only map of CurrentValue), so that the common cases
 * carry neither: a non-shared
 * native fence is one &struct nfence_fence and a share of pool pages, in
 * VRAM or not; a handle one &struct nfence_fence_local.
 * Documentation/cpu-bench.rst has the sizes.
 */

static const struct file_operations nfence_fence_fops;

static struct kmem_cache *nfence_fence_cache;
static struct kmem_cache *nfence_local_cache;
static struct kmem_cache *nfence_value_map_cache;

/**
 * nfence_fence_caches_init - create the slab caches of fence objects
 *
 * Called once, from the module's init, before any adapter exists.
 *
 * Return: 0 or -ENOMEM.
 */
int nfence_fence_caches_init(void)
{
	nfence_fence_cache = KMEM_CACHE(nfence_fence, SLAB_ACCOUNT);
	nfence_local_cache = KMEM_CACHE(nfence_fence_local, SLAB_ACCOUNT);
	nfence_value_map_cache = KMEM_CACHE(nfence_value_map, SLAB_ACCOUNT);
	if (nfence_fence_cache && nfence_local_cache && nfence_value_map_cache)
		return 0;
	nfence_fence_caches_fini();
	return -ENOMEM;
}

/**
 * nfence_fence_caches_fini - destroy the slab caches of fence objects
 *
 * Called from the module's exit (or a failed init), once no fence, handle
 * or value map is left: every one is freed synchronously (none by RCU),
 * and each holds what keeps the module loaded (a DRM file or a shared
 * fence's fd).
 */
void nfence_fence_caches_fini(void)
{
	kmem_cache_destroy(nfence_value_map_cache);
	kmem_cache_destroy(nfence_local_cache);
	kmem_cache_destroy(nfence_fence_cache);
	nfence_value_map_cache = NULL;
	nfence_local_cache = NULL;
	nfence_fence_cache = NULL;
}

static struct nfence_fence_page *to_fence_page(struct drm_gem_object *obj)
{
	return container_of(obj, struct nfence_fence_page, base);
}

static void nfence_fence_page_free(struct drm_gem_object *obj)
{
	struct nfence_fence_page *fp = to_fence_page(obj);

	nfence_vm_unmap(&fp->map);
	drm_gem_object_release(obj);
	/* An alias of a cross-adapter fence's page shares it. */
	put_page(fp->page);
	if (fp->vram) {
		/* Uncharged from the file that made it, wherever it is. */
		nfence_segment_free(fp->vram);
		kfree(fp->vram);
	}
	kfree(fp);
}

static int nfence_fence_page_mmap(struct drm_gem_object *obj,
				  struct vm_area_struct *vma)
{
	struct nfence_fence_page *fp = to_fence_page(obj);

	/* CurrentValue is read-only for user space, now and forever. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	nfence_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
	return vm_insert_page(vma, vma->vm_start, fp->page);
}

/*
 * The page is inserted at mmap time; this puts it back after the mapping
 * was zapped (an unplug zaps every mapping of the DRM device).
 */
static vm_fault_t nfence_fence_page_fault(struct vm_fault *vmf)
{
	struct nfence_fence_page *fp = to_fence_page(vmf->vma->vm_private_data);

	return nfence_vmf_insert_page(vmf, fp->page);
}

static const struct vm_operations_struct nfence_fence_page_vm_ops = {
	.fault = nfence_fence_page_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nfence_fence_page_funcs = {
	.free = nfence_fence_page_free,
	.mmap = nfence_fence_page_mmap,
	.vm_ops = &nfence_fence_page_vm_ops,
};

/*
 * A page of fence values; @mappable gives it a CPU mmap offset. With @page,
 * a GEM object of this adapter for another adapter's page (a cross-adapter
 * fence's CurrentValue), otherwise a new zeroed page.
 */
static struct nfence_fence_page *
nfence_fence_page_create(struct nfence_adapter *adapter, bool mappable,
			 struct page *page)
{
	struct nfence_fence_page *fp;
	int ret;

	fp = kzalloc(sizeof(*fp), GFP_KERNEL_ACCOUNT);
	if (!fp)
		return ERR_PTR(-ENOMEM);
	if (page) {
		get_page(page);
		fp->page = page;
	} else {
		fp->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	}
	if (!fp->page) {
		kfree(fp);
		return ERR_PTR(-ENOMEM);
	}
	fp->vaddr = page_address(fp->page);
	spin_lock_init(&fp->lock);
	INIT_LIST_HEAD(&fp->link);
	fp->base.funcs = &nfence_fence_page_funcs;
	drm_gem_private_object_init(&adapter->drm, &fp->base, PAGE_SIZE);

	if (mappable) {
		ret = drm_gem_create_mmap_offset(&fp->base);
		if (ret) {
			drm_gem_object_put(&fp->base);
			return ERR_PTR(ret);
		}
	}
	return fp;
}

/* Whether @fp has a CPU mmap offset (it was created mappable). */
static bool nfence_fence_page_mappable(struct nfence_fence_page *fp)
{
	return drm_mm_node_allocated(&fp->base.vma_node.vm_node);
}

/* Take a free slot of @fp; -ENOSPC when full. */
static int nfence_fence_page_take(struct nfence_fence_page *fp)
{
	unsigned long slot;

	spin_lock(&fp->lock);
	slot = find_first_zero_bit(fp->used, NFENCE_FENCE_SLOTS);
	if (slot < NFENCE_FENCE_SLOTS)
		__set_bit(slot, fp->used);
	spin_unlock(&fp->lock);
	return slot < NFENCE_FENCE_SLOTS ? (int)slot : -ENOSPC;
}

static void nfence_fence_page_give(struct nfence_fence_page *fp, u32 slot)
{
	spin_lock(&fp->lock);
	__clear_bit(slot, fp->used);
	fp->fences[slot] = NULL;
	spin_unlock(&fp->lock);
}

static void nfence_page_publish(struct nfence_fence_page *fp, u32 offset,
				struct nfence_fence *fence)
{
	spin_lock(&fp->lock);
	fp->fences[offset / NFENCE_FENCE_VALUE_STRIDE] = fence;
	spin_unlock(&fp->lock);
}

static void nfence_slot_set(struct nfence_fence_slot *slot,
			    struct nfence_fence_page *fp, u32 index)
{
	slot->page = fp;
	slot->offset = index * NFENCE_FENCE_VALUE_STRIDE;
	RCU_INIT_POINTER(slot->value, fp->vaddr + slot->offset);
}

/* &nfence_vm_mapping.fence_at of a CurrentValue pool page. */
static struct nfence_fence *nfence_pool_fence_at(struct nfence_vm_mapping *map,
						 u64 offset)
{
	struct nfence_fence_page *fp = container_of(map, struct nfence_fence_page,
						    map);
	struct nfence_fence *fence;

	if (offset >= PAGE_SIZE)
		return NULL;
	spin_lock(&fp->lock);
	fence = fp->fences[offset / NFENCE_FENCE_VALUE_STRIDE];
	/* A fence being released is still in its slot: skip it. */
	if (fence && !kref_get_unless_zero(&fence->ref))
		fence = NULL;
	spin_unlock(&fp->lock);
	return fence;
}

/*
 * A page of VRAM (the invisible part first) for one of @nfile's pools,
 * charged to @nfile: -ENOSPC when VRAM or the file's VRAM quota is short.
 * Zeroed: the range may have held another client's allocation, and the
 * whole page is mapped into the file's GPU VA space.
 */
static struct nfence_fence_page *nfence_vram_page_create(struct nfence_file *nfile)
{
	struct nfence_segment_node *node;
	struct nfence_fence_page *fp;
	void *vaddr;
	int ret;

	node = kzalloc(sizeof(*node), GFP_KERNEL_ACCOUNT);
	if (!node)
		return ERR_PTR(-ENOMEM);
	ret = nfence_segment_alloc_charged(nfence_gpu_segment(&nfile->adapter->gpu,
							      NFENCE_SEGMENT_ID_LOCAL),
					   node, PAGE_SIZE, PAGE_SIZE,
					   NFENCE_SEGMENT_ALLOC_INVISIBLE,
					   nfile->seg_usage);
	if (ret) {
		kfree(node);
		return ERR_PTR(ret);
	}
	vaddr = nfence_segment_node_vaddr(node);
	memset(vaddr, 0, PAGE_SIZE);
	fp = nfence_fence_page_create(nfile->adapter, false,
				      vmalloc_to_page(vaddr));
	if (IS_ERR(fp)) {
		nfence_segment_free(node);
		kfree(node);
		return fp;
	}
	/* VRAM is vmalloc'ed: use the address the GPU's accesses use. */
	fp->vaddr = vaddr;
	fp->vram = node;
	return fp;
}

/*
 * A slot from the file's pool @kind; pool pages are mapped into the file's
 * GPU VA space once, CurrentValue pages GPU-writable. -ENOSPC from a VRAM
 * pool whose pages are full when VRAM or the file's quota is.
 */
static int nfence_pool_take(struct nfence_file *nfile,
			    struct nfence_fence_slot *slot,
			    enum nfence_pool_kind kind)
{
	bool cv = kind == NFENCE_POOL_CV || kind == NFENCE_POOL_VRAM_CV;
	struct list_head *pool = &nfile->pools[kind];
	struct nfence_fence_page *fp;
	int index, ret;

	mutex_lock(&nfile->pool_lock);
	list_for_each_entry(fp, pool, link) {
		index = nfence_fence_page_take(fp);
		if (index >= 0)
			goto found;
	}

	if (kind == NFENCE_POOL_VRAM_CV || kind == NFENCE_POOL_VRAM_MV)
		fp = nfence_vram_page_create(nfile);
	else
		fp = nfence_fence_page_create(nfile->adapter, cv, NULL);
	if (IS_ERR(fp)) {
		ret = PTR_ERR(fp);
		goto out;
	}
	if (cv)
		fp->map.fence_at = nfence_pool_fence_at;
	ret = nfence_vm_map(&nfile->vm, &fp->map, fp->vaddr, PAGE_SIZE,
			    cv ? 0 : NFENCE_VM_READ_ONLY);
	if (!ret && nfence_fence_page_mappable(fp))
		ret = drm_vma_node_allow(&fp->base.vma_node, nfile->drm_file);
	if (ret) {
		drm_gem_object_put(&fp->base);
		goto out;
	}
	/*
	 * The pool's reference; dropped when the file closes, or when a
	 * VRAM page is given back empty (nfence_vram_pool_trim()).
	 */
	list_add(&fp->link, pool);
	index = nfence_fence_page_take(fp);
found:
	drm_gem_object_get(&fp->base);
	nfence_slot_set(slot, fp, index);
	ret = 0;
out:
	mutex_unlock(&nfile->pool_lock);
	return ret;
}

/* A page of its own, for a shared fence, with its first slot taken. */
static struct nfence_fence_page *
nfence_page_alone(struct nfence_adapter *adapter, bool mappable)
{
	struct nfence_fence_page *fp;

	fp = nfence_fence_page_create(adapter, mappable, NULL);
	if (!IS_ERR(fp))
		WARN_ON(nfence_fence_page_take(fp));
	return fp;
}

/**
 * nfence_fence_page_alone - a page for one value that only the GPU maps
 * @adapter: the adapter
 *
 * Where a shared fence's value goes when it leaves VRAM (DOC: demoting
 * fence storage), as one that found no room there at creation does: a
 * zeroed page of system memory with no CPU mmap offset, charged to the
 * memory cgroup of the caller, whose first slot (offset 0) is taken.
 *
 * Return: the page, with the reference its slot keeps, or an ERR_PTR.
 */
struct nfence_fence_page *nfence_fence_page_alone(struct nfence_adapter *adapter)
{
	return nfence_page_alone(adapter, false);
}

static int nfence_page_take(struct nfence_adapter *adapter,
			    struct nfence_fence_slot *slot, bool mappable)
{
	struct nfence_fence_page *fp = nfence_page_alone(adapter, mappable);

	if (IS_ERR(fp))
		return PTR_ERR(fp);
	nfence_slot_set(slot, fp, 0);
	return 0;
}

/**
 * nfence_vram_shared_count - count a shared value's VRAM range in or out
 * @adapter: the adapter whose VRAM it is
 * @node: the range, charged to its file's usage
 * @n: 1 when the value takes it, -1 when the value leaves it (freed or
 *	moved by a demotion)
 *
 * The counts let a demotion skip its walk of the adapter's fences when
 * no shared value (of the file it demotes for) is in VRAM.
 */
void nfence_vram_shared_count(struct nfence_adapter *adapter,
			      struct nfence_segment_node *node, int n)
{
	atomic_add(n, &adapter->vram_shared_values);
	if (node->usage)
		atomic_add(n, &node->usage->fence_values);
}

/*
 * A shared fence's value in VRAM: a range of its own, since other files
 * map it and must not see the values beside it. It takes a whole
 * NFENCE_FENCE_VALUE_STRIDE: an 8-byte node
 * at that alignment would leave a 56-byte hole next to it that no later
 * value fits (its alignment), and drm_mm would walk every such hole on
 * each allocation, O(n) per fence (minutes at 100,000 fences under TCG).
 * The stride is charged to @nfile's VRAM quota, as its allocations are;
 * the charge goes with the node, whoever frees it (nfence_segment_free()),
 * after @nfile is closed if the fence outlives it. -ENOSPC when VRAM or
 * the quota is short.
 */
static int nfence_vram_take(struct nfence_file *nfile,
			    struct nfence_fence_slot *slot)
{
	struct nfence_segment_node *node;
	struct nfence_segment *vram;
	int ret;

	node = kzalloc(sizeof(*node), GFP_KERNEL_ACCOUNT);
	if (!node)
		return -ENOMEM;
	vram = nfence_gpu_segment(&nfile->adapter->gpu,
				  NFENCE_SEGMENT_ID_LOCAL);
	ret = nfence_segment_alloc_charged(vram, node,
					   NFENCE_FENCE_VALUE_STRIDE,
					   NFENCE_FENCE_VALUE_STRIDE,
					   NFENCE_SEGMENT_ALLOC_INVISIBLE,
					   nfile->seg_usage);
	if (ret) {
		kfree(node);
		return ret;
	}
	/*
	 * The value uses 8 bytes of the stride and only they are mapped:
	 * clear the rest too, so that no earlier allocation's VRAM stays in
	 * it.
	 */
	memset(nfence_segment_node_vaddr(node), 0, NFENCE_FENCE_VALUE_STRIDE);
	slot->page = NULL;
	slot->vram = node;
	RCU_INIT_POINTER(slot->value, nfence_segment_node_vaddr(node));
	nfence_vram_shared_count(nfile->adapter, node, 1);
	return 0;
}

/*
 * A value of @fence in VRAM: a slot of the file's VRAM pool @kind (a
 * non-shared fence: only this file maps it) or a range of its own (a
 * shared one). -ENOSPC when VRAM or the file's VRAM quota is short.
 */
static int nfence_vram_value_take(struct nfence_file *nfile,
				  struct nfence_fence *fence,
				  struct nfence_fence_slot *slot,
				  enum nfence_pool_kind kind)
{
	if (fence->flags & DRM_NFENCE_FENCE_SHARED)
		return nfence_vram_take(nfile, slot);
	return nfence_pool_take(nfile, slot, kind);
}

/**
 * nfence_slot_in_vram - whether a value is in VRAM
 * @slot: the value's slot
 *
 * Only a value in VRAM moves (DOC: demoting fence storage); one out of it
 * stays where it is for the fence's life.
 *
 * Return: true if @slot holds its value in VRAM.
 */
bool nfence_slot_in_vram(const struct nfence_fence_slot *slot)
{
	struct nfence_fence_page *fp = READ_ONCE(slot->page);

	return READ_ONCE(slot->vram) || (fp && READ_ONCE(fp->vram));
}

/*
 * @slot's page if it is one of @nfile's VRAM pool pages, with a reference
 * for nfence_vram_pool_trim(). The slot keeps the page in the pool, and
 * mapped, while the caller's fence reference keeps the slot: only a trim
 * of an empty page or the file's close (after every handle) unmaps it, so
 * the look at its address space needs no lock.
 */
static struct nfence_fence_page *
nfence_vram_pool_page_get(struct nfence_file *nfile,
			  const struct nfence_fence_slot *slot)
{
	struct nfence_fence_page *fp = READ_ONCE(slot->page);

	if (!fp || READ_ONCE(fp->map.vm) != &nfile->vm)
		return NULL;
	if (!READ_ONCE(fp->vram)) {
		/* @vram before @demoted: pairs with nfence_demote_move()'s. */
		smp_rmb();
		if (!READ_ONCE(fp->demoted))
			return NULL;
	}
	drm_gem_object_get(&fp->base);
	return fp;
}

/*
 * Give @fp, a page of @nfile's VRAM pool (or NULL), back to VRAM if no
 * fence uses it any more; drop nfence_vram_pool_page_get()'s reference.
 * Slots are taken under &nfence_file.pool_lock, so a page found empty
 * there stays empty. A page emptied later, by a fence that outlived its
 * last handle, stays in the pool for the file's next fences until
 * nfence_fence_pools_trim() or the file's close.
 */
static void nfence_vram_pool_trim(struct nfence_file *nfile,
				  struct nfence_fence_page *fp)
{
	bool empty;

	if (!fp)
		return;
	mutex_lock(&nfile->pool_lock);
	spin_lock(&fp->lock);
	empty = bitmap_empty(fp->used, NFENCE_FENCE_SLOTS);
	spin_unlock(&fp->lock);
	if (empty && !list_empty(&fp->link))
		list_del_init(&fp->link);
	else
		empty = false;
	mutex_unlock(&nfile->pool_lock);
	if (empty) {
		nfence_vm_unmap(&fp->map);
		/* The pool's reference: the page and its VRAM go. */
		drm_gem_object_put(&fp->base);
	}
	drm_gem_object_put(&fp->base);
}

static void nfence_slot_release(struct nfence_adapter *adapter,
				struct nfence_fence_slot *slot)
{
	if (slot->page) {
		nfence_fence_page_give(slot->page,
				       slot->offset / NFENCE_FENCE_VALUE_STRIDE);
		drm_gem_object_put(&slot->page->base);
		slot->page = NULL;
	} else {
		nfence_vram_shared_count(adapter, slot->vram, -1);
		nfence_segment_free(slot->vram);
		kfree(slot->vram);
		slot->vram = NULL;
	}
	RCU_INIT_POINTER(slot->value, NULL);
}

static void nfence_xgroup_release(struct kref *ref)
{
	struct nfence_xgroup *xg = container_of(ref, struct nfence_xgroup,
						ref);

	nfence_peer_table_retire(rcu_dereference_protected(xg->peers, true));
	kfree(xg);
}

/*
 * Whether @fence, an instance of a cross-adapter fence, takes GPU-to-GPU
 * signals (DOC: peer signals): a native instance on a GPU with a peer
 * doorbell. The others only the CPU can tell.
 */
static bool nfence_fence_takes_peers(const struct nfence_fence *fence)
{
	return fence->adapter->gpu.bell && !fence->monitored;
}

/* @fence leaves its cross-adapter group's lists and its peer table. */
static void nfence_xgroup_leave(struct nfence_fence *fence)
{
	struct nfence_xgroup *xg = fence->xgroup;
	struct nfence_peer_table *table;

	spin_lock(&xg->lock);
	list_del(&fence->xlink);
	xg->num_instances--;
	table = rcu_dereference_protected(xg->peers,
					  lockdep_is_held(&xg->lock));
	if (fence->xpeer) {
		nfence_peer_table_remove(table, fence->adapter->gpu.bell,
					 fence->id);
		xg->num_peers--;
	} else if (fence->xcpu) {
		xg->cpu_instances--;
		if (table)
			WRITE_ONCE(table->cpu_instances, xg->cpu_instances);
	}
	spin_unlock(&xg->lock);
}

/*
 * @fence, an instance that takes peer signals, has its id: give it an
 * entry in its group's peer table, a new table that replaces the old one
 * (DOC: peer signals).
 */
static int nfence_xgroup_add_peer(struct nfence_fence *fence)
{
	struct nfence_peer_table *old, *table = NULL;
	struct nfence_xgroup *xg = fence->xgroup;
	u32 size;

	spin_lock(&xg->lock);
	while (!table || table->size <= xg->num_peers) {
		size = xg->num_peers + 1;
		spin_unlock(&xg->lock);
		nfence_peer_table_free(table);
		table = nfence_peer_table_alloc(size);
		if (!table)
			return -ENOMEM;
		spin_lock(&xg->lock);
	}
	old = rcu_dereference_protected(xg->peers, lockdep_is_held(&xg->lock));
	nfence_peer_table_fill(table, old, fence->adapter->gpu.bell,
			       fence->id);
	table->cpu_instances = xg->cpu_instances;
	rcu_assign_pointer(xg->peers, table);
	xg->num_peers++;
	fence->xpeer = true;
	spin_unlock(&xg->lock);
	nfence_peer_table_retire(old);
	return 0;
}

static void nfence_fence_release(struct kref *ref)
{
	struct nfence_fence *fence = container_of(ref, struct nfence_fence,
						  ref);
	struct nfence_adapter *adapter = fence->adapter;

	/* Out of its group first: gone from debugfs means gone from there. */
	if (fence->xgroup)
		nfence_xgroup_leave(fence);
	if (fence->id)
		xa_erase(&adapter->fences, fence->id);
	if (fence->xgroup)
		kref_put(&fence->xgroup->ref, nfence_xgroup_release);
	if (rcu_access_pointer(fence->cv.value))
		nfence_slot_release(adapter, &fence->cv);
	if (rcu_access_pointer(fence->mv.value))
		nfence_slot_release(adapter, &fence->mv);
	kmem_cache_free(nfence_fence_cache, fence);
	nfence_adapter_put(adapter);
}

/**
 * nfence_fence_put - drop a reference to a global fence
 * @fence: the fence, or NULL
 */
void nfence_fence_put(struct nfence_fence *fence)
{
	if (fence)
		kref_put(&fence->ref, nfence_fence_release);
}

/**
 * nfence_fence_pools_trim - give a file's empty VRAM pool pages back
 * @nfile: the file
 *
 * For the pages whose last value went after its handle: a queue's progress
 * fence is held by the queue until its last reference, after the handle.
 * Called once a queue is destroyed; walks the file's VRAM pool pages and
 * its demoted ones.
 */
void nfence_fence_pools_trim(struct nfence_file *nfile)
{
	static const enum nfence_pool_kind vram[] = {
		NFENCE_POOL_VRAM_CV, NFENCE_POOL_VRAM_MV, NFENCE_POOL_DEMOTED,
	};
	struct nfence_fence_page *fp, *tmp;
	unsigned int i;
	bool empty;

	mutex_lock(&nfile->pool_lock);
	for (i = 0; i < ARRAY_SIZE(vram); i++) {
		list_for_each_entry_safe(fp, tmp, &nfile->pools[vram[i]], link) {
			spin_lock(&fp->lock);
			empty = bitmap_empty(fp->used, NFENCE_FENCE_SLOTS);
			spin_unlock(&fp->lock);
			if (!empty)
				continue;
			list_del_init(&fp->link);
			nfence_vm_unmap(&fp->map);
			drm_gem_object_put(&fp->base);
		}
	}
	mutex_unlock(&nfile->pool_lock);
}

/*
 * nfence_fence_put() of a reference @nfile's create or handle held, maybe
 * the last one: the VRAM pool pages of @nfile that it empties go back to
 * VRAM.
 */
static void nfence_fence_put_in_file(struct nfence_file *nfile,
				     struct nfence_fence *fence)
{
	struct nfence_fence_page *cv, *mv;

	cv = nfence_vram_pool_page_get(nfile, &fence->cv);
	mv = nfence_vram_pool_page_get(nfile, &fence->mv);
	nfence_fence_put(fence);
	nfence_vram_pool_trim(nfile, cv);
	nfence_vram_pool_trim(nfile, mv);
}

/*
 * The count of @fence's holders that can still signal it: its own, or its
 * cross-adapter group's, whose instances are one fence.
 */
static atomic_t *nfence_fence_handles(struct nfence_fence *fence)
{
	return fence->xgroup ? &fence->xgroup->handles : &fence->handles;
}

/* A new local handle or fd of @fence. */
static void nfence_fence_take_handle(struct nfence_fence *fence)
{
	atomic_inc(nfence_fence_handles(fence));
}

/* Nobody can signal @fence any more: its waiters are released. */
static void nfence_fence_orphan(struct nfence_fence *fence)
{
	WRITE_ONCE(fence->orphaned, true);
	/* Its waiters see they were not reached and fail with -ENOENT. */
	nfence_waitlist_flush(&fence->waiters);
}

/*
 * A local handle or an fd is gone; the last one orphans the fence. An
 * instance of a cross-adapter fence with no handle left on its adapter
 * can still be signaled through another adapter's: the last handle or fd
 * of the group orphans every instance.
 */
static void nfence_fence_drop_handle(struct nfence_fence *fence)
{
	struct nfence_xgroup *xg = fence->xgroup;
	struct nfence_fence *instance;

	if (!atomic_dec_and_test(nfence_fence_handles(fence)))
		return;
	if (!xg) {
		nfence_fence_orphan(fence);
		return;
	}
	spin_lock(&xg->lock);
	list_for_each_entry(instance, &xg->instances, xlink)
		nfence_fence_orphan(instance);
	spin_unlock(&xg->lock);
}

/**
 * nfence_fence_read - read CurrentValue
 * @fence: the fence
 *
 * Under RCU: a demotion may be moving the value (DOC: demoting fence
 * storage), and the storage read stays until a grace period after it.
 *
 * Context: any.
 * Return: the value, read with one 64-bit load.
 */
u64 nfence_fence_read(struct nfence_fence *fence)
{
	u64 value;

	rcu_read_lock();
	value = READ_ONCE(*rcu_dereference(fence->cv.value));
	rcu_read_unlock();
	return value;
}

/* Take @fence's CurrentValue: its own storage, or @peer's page (cross-adapter). */
static int nfence_fence_take_cv(struct nfence_file *nfile,
				struct nfence_fence *fence,
				struct nfence_fence *peer)
{
	struct nfence_adapter *adapter = nfile->adapter;
	struct nfence_fence_page *fp;

	if (peer) {
		/* Same memory, a GEM object (mmap offset) of this adapter. */
		fp = nfence_fence_page_create(adapter, true, peer->cv.page->page);
		if (IS_ERR(fp))
			return PTR_ERR(fp);
		fence->cv.page = fp;
		fence->cv.offset = peer->cv.offset;
		RCU_INIT_POINTER(fence->cv.value, fp->vaddr + fence->cv.offset);
		return 0;
	}
	if (fence->type == DRM_NFENCE_FENCE_TYPE_INTRA_GPU) {
		int ret = nfence_vram_value_take(nfile, fence, &fence->cv,
						 NFENCE_POOL_VRAM_CV);

		/*
		 * Demoted when VRAM or the quota is short: a page of its
		 * own, which the GPU may write and the CPU cannot map (a
		 * pool page would be GPU read-only or CPU-mappable).
		 */
		if (ret != -ENOSPC)
			return ret;
		return nfence_page_take(adapter, &fence->cv, false);
	}
	if (fence->flags & DRM_NFENCE_FENCE_SHARED)
		return nfence_page_take(adapter, &fence->cv, true);
	return nfence_pool_take(nfile, &fence->cv, NFENCE_POOL_CV);
}

static int nfence_fence_take_mv(struct nfence_file *nfile,
				struct nfence_fence *fence)
{
	struct nfence_adapter *adapter = nfile->adapter;
	int ret;

	/*
	 * INTRA_GPU and optimized DEFAULT: MonitoredValue in VRAM when there
	 * is room in VRAM and in the file's quota, demoted to system memory
	 * (the kernel-only pool, GPU read-only) when not.
	 */
	if (fence->type == DRM_NFENCE_FENCE_TYPE_INTRA_GPU ||
	    adapter->gpu.cfg.optimized_default_fence) {
		ret = nfence_vram_value_take(nfile, fence, &fence->mv,
					     NFENCE_POOL_VRAM_MV);
		if (ret != -ENOSPC)
			return ret;
	}
	if (fence->flags & DRM_NFENCE_FENCE_SHARED)
		return nfence_page_take(adapter, &fence->mv, false);
	return nfence_pool_take(nfile, &fence->mv, NFENCE_POOL_MV);
}

/**
 * nfence_instance_set_always_signaled - AlwaysSignaled for one instance
 * @fence: the instance, on its adapter, of a fence whose CurrentValue is
 *	already raised
 *
 * Every CPU wait on it is released, now and later, and its adapter's CMP
 * lets the GPU waits on it pass.
 */
void nfence_instance_set_always_signaled(struct nfence_fence *fence)
{
	WRITE_ONCE(fence->always_signaled, true);
	/* Publish the flag before releasing the waiters that test it. */
	smp_mb();
	nfence_waitlist_flush(&fence->waiters);
	nfence_cmp_kick(&fence->adapter->cmp);
}

/*
 * Join @fence to @peer's cross-adapter group, or start one. -ENOSPC if the
 * group has %DRM_NFENCE_MAX_FENCE_INSTANCES instances: every signal of one
 * is passed on to each of the others, under the group's lock and, for a
 * GPU signal, the CMP's.
 */
static int nfence_xgroup_join(struct nfence_fence *fence,
			      struct nfence_fence *peer)
{
	struct nfence_xgroup *xg;

	if (peer) {
		xg = peer->xgroup;
		kref_get(&xg->ref);
	} else {
		xg = kzalloc(sizeof(*xg), GFP_KERNEL_ACCOUNT);
		if (!xg)
			return -ENOMEM;
		kref_init(&xg->ref);
		spin_lock_init(&xg->lock);
		INIT_LIST_HEAD(&xg->instances);
	}
	spin_lock(&xg->lock);
	if (xg->num_instances >= DRM_NFENCE_MAX_FENCE_INSTANCES) {
		spin_unlock(&xg->lock);
		kref_put(&xg->ref, nfence_xgroup_release);
		return -ENOSPC;
	}
	xg->num_instances++;
	list_add_tail(&fence->xlink, &xg->instances);
	/*
	 * Counted before it can have a waiter: the other GPUs' signals
	 * interrupt from now on (DOC: peer signals).
	 */
	if (!nfence_fence_takes_peers(fence)) {
		struct nfence_peer_table *table;

		fence->xcpu = true;
		xg->cpu_instances++;
		table = rcu_dereference_protected(xg->peers,
						  lockdep_is_held(&xg->lock));
		if (table)
			WRITE_ONCE(table->cpu_instances, xg->cpu_instances);
	}
	/* Opened after its creator's device went into error: so is this. */
	if (peer && READ_ONCE(peer->always_signaled))
		nfence_instance_set_always_signaled(fence);
	spin_unlock(&xg->lock);
	fence->xgroup = xg;
	return 0;
}

/*
 * A new global fence in @nfile's adapter. With @peer, the instance of the
 * cross-adapter fence @peer on this adapter: same CurrentValue page, and
 * @initial is not written. @monitored makes a WDDM 2.x monitored fence.
 */
static struct nfence_fence *
nfence_fence_alloc(struct nfence_file *nfile, u32 type, u32 flags, u64 initial,
		   struct nfence_fence *peer, bool monitored)
{
	struct nfence_adapter *adapter = nfile->adapter;
	bool cross = flags & DRM_NFENCE_FENCE_CROSS_ADAPTER;
	struct nfence_fence *fence;
	u64 *cv, *mv;
	u32 id;
	int ret;

	fence = kmem_cache_zalloc(nfence_fence_cache, GFP_KERNEL);
	if (!fence)
		return ERR_PTR(-ENOMEM);
	kref_init(&fence->ref);
	atomic_set(&fence->handles, 0);
	INIT_LIST_HEAD(&fence->xlink);
	fence->adapter = adapter;
	fence->type = type;
	fence->flags = flags;
	fence->monitored = monitored;
	drm_dev_get(&adapter->drm);

	ret = nfence_fence_take_cv(nfile, fence, peer);
	if (!ret)
		ret = nfence_fence_take_mv(nfile, fence);
	if (!ret) {
		/*
		 * Not in a page's fences nor in the adapter's table yet: no
		 * demotion moves its values (DOC: demoting fence storage).
		 */
		cv = rcu_dereference_protected(fence->cv.value, true);
		if (!peer)
			WRITE_ONCE(*cv, initial);
		/*
		 * A cross-adapter fence's MonitoredValue is 0 for good, so
		 * that every signal interrupts, unless its GPU tells the other
		 * GPUs itself (DOC: peer signals); its waiters keep their
		 * bound in @cpu_mv instead. A monitored fence has none to
		 * show: its word stays 0 and unmapped, and the waiters use
		 * @cpu_mv.
		 */
		mv = rcu_dereference_protected(fence->mv.value, true);
		if (monitored || (cross && !nfence_fence_takes_peers(fence))) {
			WRITE_ONCE(*mv, 0);
			mv = &fence->cpu_mv;
		}
		nfence_waitlist_init(&fence->waiters, cv, mv);
		/* Other adapters' signals reach it once it is complete. */
		if (cross)
			ret = nfence_xgroup_join(fence, peer);
	}
	if (!ret) {
		/*
		 * The engines may find it by GPU VA from now on, and a
		 * demotion of its VRAM pool page moves its value.
		 */
		if (fence->cv.page)
			nfence_page_publish(fence->cv.page, fence->cv.offset,
					    fence);
		if (fence->mv.page && fence->mv.page->vram)
			nfence_page_publish(fence->mv.page, fence->mv.offset,
					    fence);
		/*
		 * Visible to debugfs and interrupts only once complete. An
		 * instance of a cross-adapter fence enters the table marked:
		 * the scan passes its signals on (nfence_signal.c).
		 */
		xa_lock(&adapter->fences);
		ret = __xa_alloc(&adapter->fences, &id, fence, xa_limit_32b,
				 GFP_KERNEL_ACCOUNT);
		/* Before the lock is dropped: a walk of the table reads it. */
		if (!ret)
			fence->id = id;
		if (!ret && cross)
			__xa_set_mark(&adapter->fences, id,
				      NFENCE_FENCE_WATCHED);
		xa_unlock(&adapter->fences);
	}
	if (ret) {
		nfence_fence_put_in_file(nfile, fence);
		return ERR_PTR(ret);
	}
	if (cross && nfence_fence_takes_peers(fence)) {
		ret = nfence_xgroup_add_peer(fence);
		if (ret) {
			nfence_fence_put_in_file(nfile, fence);
			return ERR_PTR(ret);
		}
	}
	return fence;
}

/*
 * Pass @fence's signal on to the other instances of its group @xg, whose
 * lock is held: each releases the CPU waiters it satisfies, and its
 * adapter's CMP is kicked. With @scan, the instances on @fence's adapter
 * are left to the scan, which takes them itself; their CMP is kicked once.
 */
static unsigned int nfence_xgroup_pass_locked(struct nfence_xgroup *xg,
					      struct nfence_fence *fence,
					      bool scan)
{
	struct nfence_fence *other;
	unsigned int woken = 0;
	bool here = false;

	lockdep_assert_held(&xg->lock);
	list_for_each_entry(other, &xg->instances, xlink) {
		if (other == fence)
			continue;
		if (scan && other->adapter == fence->adapter) {
			here = true;
			continue;
		}
		woken += nfence_waitlist_process(&other->waiters);
		nfence_cmp_kick(&other->adapter->cmp);
	}
	if (here)
		nfence_cmp_kick(&fence->adapter->cmp);
	return woken;
}

/**
 * nfence_fence_propagate - pass a cross-adapter fence's signal on
 * @fence: the instance that was signaled (by its GPU or the CPU)
 *
 * WDDM's NotificationOnly update: the CurrentValue they share has
 * changed, so every other instance releases the CPU waiters it satisfies
 * and its adapter's CMP re-checks the queues parked on it.
 *
 * Return: the number of CPU waiters released.
 */
unsigned int nfence_fence_propagate(struct nfence_fence *fence)
{
	struct nfence_xgroup *xg = fence->xgroup;
	unsigned int woken;

	if (!xg)
		return 0;
	spin_lock(&xg->lock);
	woken = nfence_xgroup_pass_locked(xg, fence, false);
	spin_unlock(&xg->lock);
	return woken;
}

/**
 * nfence_fence_propagate_scan - nfence_fence_propagate() for a scan
 * @fence: an instance the scan of its adapter took
 * @pass: the scan's number, unique among every adapter's scans
 *
 * A scan takes every instance on its adapter (they keep their mark), so it
 * passes a group's signal on once, at the first instance of the group it
 * takes, and only to the other adapters' instances: a group with many
 * instances on the scanned adapter costs the scan one look at each, not
 * one at each pair. Scans of two adapters that meet a group at once may
 * each find the other's number there and pass it on again: a pass too
 * many, never one too few.
 *
 * Return: the number of CPU waiters released.
 */
unsigned int nfence_fence_propagate_scan(struct nfence_fence *fence, u64 pass)
{
	struct nfence_xgroup *xg = fence->xgroup;
	unsigned int woken = 0;

	if (!xg)
		return 0;
	spin_lock(&xg->lock);
	if (xg->scanned != pass) {
		xg->scanned = pass;
		woken = nfence_xgroup_pass_locked(xg, fence, true);
	}
	spin_unlock(&xg->lock);
	return woken;
}

/*
 * The key of a file's value map: the storage of a fence value, and whether
 * the map is a NO_SIGNAL one (read-only). A value one fence owns (every
 * value but a cross-adapter fence's CurrentValue) is known by the address
 * of its &struct nfence_fence_slot, which stays when a demotion moves the
 * value (DOC: demoting fence storage). The instances of a cross-adapter
 * fence have page objects of their own over one CurrentValue page, which
 * never moves: it is known by its page frame and place in the page, so
 * that every instance a file opens shares one map. Slot addresses are
 * aligned to 8 and page frame keys have bit 0 set, so the two never meet;
 * bit 1 is the read-only one. A file maps the values of shared fences,
 * each stored apart, so its keys are far apart: &nfence_file.value_maps
 * is a hash table, in which a value takes a bucket's share of the table,
 * where an xarray would take a leaf node (584 bytes) per opened fence.
 */
static const struct rhashtable_params nfence_value_map_params = {
	.key_len = sizeof(unsigned long),
	.key_offset = offsetof(struct nfence_value_map, key),
	.head_offset = offsetof(struct nfence_value_map, hnode),
	.automatic_shrinking = true,
};

#define NFENCE_VMAP_KEY_PFN	BIT(0)
#define NFENCE_VMAP_KEY_RO	BIT(1)

static_assert(__alignof__(struct nfence_fence_slot) >= 4);

static unsigned long nfence_vmap_key(const struct nfence_fence *fence,
				     const struct nfence_fence_slot *slot,
				     bool ro)
{
	unsigned long key = ro ? NFENCE_VMAP_KEY_RO : 0;

	if ((fence->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER) &&
	    slot == &fence->cv)
		return key | NFENCE_VMAP_KEY_PFN |
		       (page_to_pfn(slot->page->page) * NFENCE_FENCE_SLOTS +
			slot->offset / NFENCE_FENCE_VALUE_STRIDE) << 2;
	return key | (unsigned long)slot;
}

/*
 * &nfence_vm_mapping.fence_at of a CurrentValue value map: the fence of
 * one of its users. Called under the address space's lock, which
 * nfence_value_map_put() takes to change it, so that user holds it.
 */
static struct nfence_fence *nfence_value_map_fence_at(struct nfence_vm_mapping *map,
						      u64 offset)
{
	struct nfence_value_map *vmap =
		container_of(map, struct nfence_value_map, map);

	if (!vmap->fence)
		return NULL;
	kref_get(&vmap->fence->ref);
	return vmap->fence;
}

/*
 * @local's mapping of @slot (its fence's CurrentValue if @cv, else its
 * MonitoredValue; @ro for a NO_SIGNAL handle's read-only CurrentValue) in
 * the file's GPU VA space, at *@va: the file's pool page when the value is
 * in one and the map is not @ro, else the file's value map of that storage,
 * made on first use and shared by every handle that needs it (*@out, NULL
 * for a pool page).
 */
static int nfence_local_map_value(struct nfence_file *nfile,
				  struct nfence_fence_local *local,
				  struct nfence_fence_slot *slot, bool cv,
				  bool ro, struct nfence_value_map **out,
				  u64 *va)
{
	struct rw_semaphore *maps_lock = &nfile->adapter->maps_lock;
	struct nfence_fence_page *fp = READ_ONCE(slot->page);
	struct nfence_value_map *vmap;
	unsigned long key;
	int ret = 0;

	*out = NULL;
	/* A pool page's slot stays in its page, wherever the page goes. */
	if (!ro && fp && fp->map.vm == &nfile->vm) {
		*va = fp->map.start + slot->offset;
		return 0;
	}
	/* Neither the value nor the file's maps of it move meanwhile. */
	down_read(maps_lock);
	key = nfence_vmap_key(local->fence, slot, ro);
	mutex_lock(&nfile->pool_lock);
	vmap = rhashtable_lookup_fast(&nfile->value_maps, &key,
				      nfence_value_map_params);
	if (!vmap) {
		vmap = kmem_cache_zalloc(nfence_value_map_cache, GFP_KERNEL);
		if (!vmap) {
			ret = -ENOMEM;
			goto out;
		}
		vmap->key = key;
		INIT_LIST_HEAD(&vmap->users);
		if (cv) {
			vmap->fence = local->fence;
			vmap->map.fence_at = nfence_value_map_fence_at;
		}
		ret = nfence_vm_map(&nfile->vm, &vmap->map,
				    nfence_slot_value(slot, lockdep_is_held(maps_lock)),
				    sizeof(u64), NFENCE_VM_SLOT |
				    (cv && !ro ? 0 : NFENCE_VM_READ_ONLY));
		if (!ret) {
			ret = rhashtable_insert_fast(&nfile->value_maps,
						     &vmap->hnode,
						     nfence_value_map_params);
			/* A table it could not grow at once: memory. */
			if (ret)
				ret = -ENOMEM;
			if (ret)
				nfence_vm_unmap(&vmap->map);
		}
		if (ret) {
			kmem_cache_free(nfence_value_map_cache, vmap);
			goto out;
		}
	}
	list_add_tail(cv ? &local->cv_link : &local->mv_link, &vmap->users);
	*out = vmap;
	*va = vmap->map.start;
out:
	mutex_unlock(&nfile->pool_lock);
	up_read(maps_lock);
	return ret;
}

/*
 * @local no longer uses @vmap (through @link): the last user unmaps it; a
 * CurrentValue map whose fence was @local's takes another user's.
 */
static void nfence_value_map_put(struct nfence_file *nfile,
				 struct nfence_value_map *vmap,
				 struct nfence_fence_local *local,
				 struct list_head *link)
{
	struct rw_semaphore *maps_lock = &nfile->adapter->maps_lock;
	struct nfence_fence_local *next;

	if (!vmap)
		return;
	down_read(maps_lock);
	mutex_lock(&nfile->pool_lock);
	list_del(link);
	if (list_empty(&vmap->users)) {
		rhashtable_remove_fast(&nfile->value_maps, &vmap->hnode,
				       nfence_value_map_params);
		mutex_unlock(&nfile->pool_lock);
		/*
		 * Unmapped before the maps lock goes: a demotion no longer
		 * finds the map, and must not leave it mapped on the old
		 * storage it gives back.
		 */
		nfence_vm_unmap(&vmap->map);
		up_read(maps_lock);
		kmem_cache_free(nfence_value_map_cache, vmap);
		return;
	}
	if (vmap->fence == local->fence) {
		/* Only CurrentValue maps have a fence, and cv_link users. */
		next = list_first_entry(&vmap->users, struct nfence_fence_local,
					cv_link);
		mutex_lock(&nfile->vm.lock);
		vmap->fence = next->fence;
		mutex_unlock(&nfile->vm.lock);
	}
	mutex_unlock(&nfile->pool_lock);
	up_read(maps_lock);
}

/* Point @nfile's map of @key, if it has one, at @to. */
static void nfence_value_map_move(struct nfence_file *nfile,
				  unsigned long key, u64 *to)
{
	struct nfence_value_map *vmap;

	vmap = rhashtable_lookup_fast(&nfile->value_maps, &key,
				      nfence_value_map_params);
	if (vmap)
		nfence_vm_move(&vmap->map, to);
}

/**
 * nfence_value_map_key - the key of the value maps of a fence value
 * @fence: the fence
 * @slot: the value's slot (&nfence_fence.cv or .mv)
 *
 * Context: the caller keeps @fence alive.
 *
 * Return: the key nfence_value_maps_move() takes, which stays the same
 * when the value moves.
 */
unsigned long nfence_value_map_key(const struct nfence_fence *fence,
				   const struct nfence_fence_slot *slot)
{
	return nfence_vmap_key(fence, slot, false);
}

/**
 * nfence_value_maps_move - point the value maps of a value at new storage
 * @adapter: the fence's adapter
 * @nfile: the one file that can map the value (a non-shared fence's
 *	creator), or NULL for every file of @adapter, closing ones included
 * @key: the value's nfence_value_map_key()
 * @to: the value's new storage
 *
 * For a demotion of fence storage (DOC: demoting fence storage): every
 * value map of the value (a shared fence's, in each file that opened it,
 * and the NO_SIGNAL handles' read-only ones) translates GPU accesses to
 * @to from now on, at the same GPU VAs.
 *
 * Context: &nfence_adapter.clients_lock held, &nfence_adapter.maps_lock
 * held for writing (no map of the adapter is made or dropped meanwhile),
 * and &nfence_cmp.lock (no engine translates meanwhile).
 */
void nfence_value_maps_move(struct nfence_adapter *adapter,
			    struct nfence_file *nfile, unsigned long key,
			    u64 *to)
{
	unsigned long ro = key | NFENCE_VMAP_KEY_RO;
	struct nfence_file *each;

	lockdep_assert_held(&adapter->clients_lock);
	lockdep_assert_held_write(&adapter->maps_lock);
	if (nfile) {
		nfence_value_map_move(nfile, key, to);
		nfence_value_map_move(nfile, ro, to);
		return;
	}
	list_for_each_entry(each, &adapter->clients, link) {
		nfence_value_map_move(each, key, to);
		nfence_value_map_move(each, ro, to);
	}
	list_for_each_entry(each, &adapter->closing, link) {
		nfence_value_map_move(each, key, to);
		nfence_value_map_move(each, ro, to);
	}
}

/*
 * Where @local's file maps CurrentValue's page @fp: a pool page of the
 * file at its own mmap offset; another page (a shared fence's) at a page
 * of the file's CPU window (DOC: CPU window) when it has one with room,
 * else at the page's own offset, which the file is then allowed to map.
 */
static int nfence_local_allow_mmap(struct nfence_file *nfile,
				   struct nfence_fence_local *local,
				   struct nfence_fence_page *fp)
{
	u64 *offset = &local->mapping.cpu_mmap_offset;
	int ret;

	if (fp->map.vm != &nfile->vm) {
		ret = nfence_window_add(nfile, fp->page, &local->window_index,
					offset);
		if (!ret) {
			local->in_window = true;
			return 0;
		}
		if (ret != -ENOENT && ret != -EBUSY)
			return ret;
		ret = drm_vma_node_allow(&fp->base.vma_node, nfile->drm_file);
		if (ret)
			return ret;
		local->mmap_allowed = true;
	}
	*offset = drm_vma_node_offset_addr(&fp->base.vma_node);
	return 0;
}

static void nfence_local_free(struct nfence_file *nfile,
			      struct nfence_fence_local *local)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence *fence = local->fence;

	if (local->creator) {
		nfence_table_lock(table);
		list_del_init(&local->dev_link);
		nfence_table_unlock(table);
	}
	nfence_value_map_put(nfile, local->cv_vmap, local, &local->cv_link);
	nfence_value_map_put(nfile, local->mv_vmap, local, &local->mv_link);
	if (local->in_window)
		nfence_window_remove(nfile, local->window_index);
	if (local->mmap_allowed)
		drm_vma_node_revoke(&fence->cv.page->base.vma_node,
				    nfile->drm_file);
	nfence_fence_drop_handle(fence);
	nfence_fence_put_in_file(nfile, fence);
	nfence_device_put(local->device);
	kmem_cache_free(nfence_local_cache, local);
}

static struct nfence_fence_local *nfence_local_of(struct nfence_object *obj)
{
	return container_of(obj, struct nfence_fence_local, obj);
}

/* &nfence_object_ops.close: a handle of a device or of a closing file. */
static void nfence_local_obj_close(struct nfence_registry *reg,
				   struct nfence_object *obj)
{
	nfence_local_free(nfence_registry_file(reg), nfence_local_of(obj));
}

static const struct nfence_object_ops nfence_local_obj_ops = {
	.close = nfence_local_obj_close,
};

/*
 * A device in error creates fences that are AlwaysSignaled from birth. No
 * waiter or queue can be looking at the fence yet (its handle is not
 * published), but a demotion may find it in its storage page already:
 * CurrentValue is raised under the fence's waitlist lock. Called
 * under the fence table's lock, which nfence_device_lost_locked() takes to
 * set &nfence_device.error: either the new handle joins the device's
 * &nfence_device.fences, which its error then walks, or it is published
 * seeing the error.
 */
static void nfence_fence_born_signaled(struct nfence_fence *fence)
{
	/* Not under the CMP's lock: where a demotion leaves the value. */
	nfence_waitlist_raise_cv(&fence->waiters,
				 NFENCE_ALWAYS_SIGNALED_VALUE);
	/* Its waitlist closed too, as for any AlwaysSignaled instance. */
	nfence_instance_set_always_signaled(fence);
}

/*
 * Make a local handle for @fence (whose reference it takes over) in @nfile,
 * with mappings, and install it.
 */
static int nfence_local_create(struct nfence_file *nfile,
			       struct nfence_device *wdev,
			       struct nfence_fence *fence, u32 flags,
			       u32 engine_affinity, bool creator,
			       bool progress, u32 *out_handle,
			       struct drm_nfence_fence_mapping *out_mapping)
{
	bool no_signal = flags & DRM_NFENCE_FENCE_NO_SIGNAL;
	struct nfence_fence_local *local;
	struct nfence_fence_page *cv_page = READ_ONCE(fence->cv.page);
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	u32 handle;
	int ret;

	local = kmem_cache_zalloc(nfence_local_cache, GFP_KERNEL);
	if (!local) {
		nfence_fence_put_in_file(nfile, fence);
		return -ENOMEM;
	}
	local->fence = fence;
	kref_get(&wdev->ref);
	local->device = wdev;
	local->obj.ops = &nfence_local_obj_ops;
	local->obj.owner = &wdev->obj;
	local->flags = flags;
	local->engine_affinity = engine_affinity;
	INIT_LIST_HEAD(&local->dev_link);
	nfence_fence_take_handle(fence);

	/*
	 * A NO_SIGNAL handle cannot signal from the GPU either: its
	 * CurrentValue gets the file's read-only map of it, which the
	 * file's NO_SIGNAL handles of the fence share, never the writable
	 * one (so its GPU VA differs from the other handles').
	 */
	ret = nfence_local_map_value(nfile, local, &fence->cv, true, no_signal,
				     &local->cv_vmap,
				     &local->mapping.current_value_gpu_va);
	/* A monitored fence has no MonitoredValue to show: VA 0. */
	if (!ret && !fence->monitored)
		ret = nfence_local_map_value(nfile, local, &fence->mv, false,
					     false, &local->mv_vmap,
					     &local->mapping.monitored_value_gpu_va);
	if (ret)
		goto err;

	/* An INTRA_GPU CurrentValue demoted to a page has no CPU mapping. */
	if (cv_page && nfence_fence_page_mappable(cv_page)) {
		ret = nfence_local_allow_mmap(nfile, local, cv_page);
		if (ret)
			goto err;
		local->mapping.cpu_value_offset = fence->cv.offset;
	}

	local->creator = creator;
	local->progress = progress;
	nfence_table_lock(table);
	if (wdev->dead)
		ret = -ENOENT;
	else
		ret = nfence_table_insert_locked(table, &local->obj, &handle);
	/*
	 * The insert may drop the lock to allocate: a device closing
	 * meanwhile may have scanned the table without this handle.
	 */
	if (!ret && wdev->dead) {
		nfence_table_erase_locked(table, handle);
		ret = -ENOENT;
	}
	if (!ret && creator) {
		/* Where the device's error finds its fences (below). */
		if (READ_ONCE(wdev->error))
			nfence_fence_born_signaled(fence);
		else
			list_add_tail(&local->dev_link, &wdev->fences);
	}
	if (!ret) {
		/*
		 * Visible now: another thread may destroy it as soon as the
		 * lock goes, so fill in the outputs here.
		 */
		*out_handle = handle;
		*out_mapping = local->mapping;
	}
	nfence_table_unlock(table);
	if (ret < 0)
		goto err;
	return 0;

err:
	nfence_local_free(nfile, local);
	return ret;
}

/**
 * nfence_fence_get - look up a local handle
 * @nfile: the file
 * @handle: local fence handle
 * @device: the device the handle must belong to
 * @local_flags: out: the handle's NO_SIGNAL / NO_WAIT flags
 *
 * Return: the global fence with a reference, or NULL if @handle names no
 * fence of @device in @nfile.
 */
struct nfence_fence *nfence_fence_get(struct nfence_file *nfile, u32 handle,
				      u32 device, u32 *local_flags)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence_local *local;
	struct nfence_fence *fence = NULL;
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_owned_locked(table, handle, device);
	if (obj) {
		local = nfence_local_of(obj);
		fence = local->fence;
		kref_get(&fence->ref);
		*local_flags = local->flags;
	}
	nfence_table_unlock(table);
	return fence;
}

/*
 * EngineAffinity is, as in WDDM, the physical adapters (nodes of a
 * linked adapter) where the fence's GPU VAs are mapped: 0 for all of them,
 * else a bit per physical adapter. An nfence adapter is one physical
 * adapter, so 0 and bit 0 are the only valid masks; engines are chosen by
 * contexts, not by fences.
 */
static int nfence_check_affinity(u32 affinity)
{
	return (affinity & ~DRM_NFENCE_FENCE_AFFINITY_ALL) ? -EINVAL : 0;
}

#define NFENCE_FENCE_FLAGS (DRM_NFENCE_FENCE_SHARED | \
			    DRM_NFENCE_FENCE_NT_SECURITY_SHARING | \
			    DRM_NFENCE_FENCE_CROSS_ADAPTER | \
			    DRM_NFENCE_FENCE_NO_SIGNAL | \
			    DRM_NFENCE_FENCE_NO_WAIT | \
			    DRM_NFENCE_FENCE_MONITORED)
#define NFENCE_LOCAL_FLAGS (DRM_NFENCE_FENCE_NO_SIGNAL | \
			    DRM_NFENCE_FENCE_NO_WAIT)

/* Check the fields of FENCE_CREATE, then what the adapter allows. */
static int nfence_fence_create_check(struct nfence_adapter *adapter,
				     const struct drm_nfence_fence_create *args)
{
	if (args->pad || (args->flags & ~NFENCE_FENCE_FLAGS) ||
	    args->type > DRM_NFENCE_FENCE_TYPE_INTRA_GPU)
		return -EINVAL;
	if ((args->flags & NFENCE_LOCAL_FLAGS) == NFENCE_LOCAL_FLAGS)
		return -EINVAL;
	if ((args->flags & DRM_NFENCE_FENCE_NT_SECURITY_SHARING) &&
	    !(args->flags & DRM_NFENCE_FENCE_SHARED))
		return -EINVAL;
	/* CrossAdapter: shared DEFAULT fences only. */
	if ((args->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER) &&
	    (!(args->flags & DRM_NFENCE_FENCE_SHARED) ||
	     args->type != DRM_NFENCE_FENCE_TYPE_DEFAULT))
		return -EINVAL;
	/* Monitored: DEFAULT storage; native fences not needed. */
	if ((args->flags & DRM_NFENCE_FENCE_MONITORED) &&
	    args->type != DRM_NFENCE_FENCE_TYPE_DEFAULT)
		return -EINVAL;
	if (nfence_check_affinity(args->engine_affinity))
		return -EINVAL;
	if (!adapter->gpu.cfg.native_fence &&
	    !(args->flags & DRM_NFENCE_FENCE_MONITORED))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * nfence_fence_create_ioctl - DRM_IOCTL_NFENCE_FENCE_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_create
 * @file: the caller's file
 *
 * Return: 0 or -errno as the uapi documents.
 */
int nfence_fence_create_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_fence_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_fence *fence;
	struct nfence_device *wdev;
	int ret, idx;

	ret = nfence_fence_create_check(adapter, args);
	if (ret)
		return ret;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_dev;
	}

	fence = nfence_fence_alloc(nfile, args->type, args->flags,
				   args->initial_value, NULL,
				   args->flags & DRM_NFENCE_FENCE_MONITORED);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		goto out_exit;
	}
	/* Outputs are written under the lock that publishes the handle. */
	ret = nfence_local_create(nfile, wdev, fence,
				  args->flags & NFENCE_LOCAL_FLAGS,
				  args->engine_affinity, true, false,
				  &args->handle, &args->mapping);
out_exit:
	drm_dev_exit(idx);
out_dev:
	nfence_device_put(wdev);
	return ret;
}

/**
 * nfence_fence_destroy_ioctl - DRM_IOCTL_NFENCE_FENCE_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_destroy
 * @file: the caller's file
 *
 * Return: 0, -EINVAL on non-zero padding, -ENOENT for an unknown handle.
 */
int nfence_fence_destroy_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_nfence_fence_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence_local *local = NULL;
	struct nfence_object *obj;

	if (args->pad)
		return -EINVAL;
	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, args->handle);
	if (obj)
		local = nfence_local_of(obj);
	if (local && local->progress) {
		/* A queue's progress fence goes with the queue. */
		local = ERR_PTR(-EBUSY);
	} else if (local) {
		nfence_table_erase_locked(table, args->handle);
	}
	nfence_table_unlock(table);
	if (IS_ERR(local))
		return PTR_ERR(local);
	if (!local)
		return -ENOENT;
	nfence_local_free(nfile, local);
	return 0;
}

/**
 * nfence_fence_create_progress - create the progress fence of a queue
 * @nfile: the file
 * @wdev: the queue's device
 * @native: a native fence (NativeProgressFence); else a WDDM 2.x monitored
 *	fence (see "monitored fences")
 * @handle: out: the local handle (which FENCE_DESTROY refuses to close)
 * @mapping: out: where its values are
 *
 * Return: the fence with a reference for the queue, or an ERR_PTR.
 */
struct nfence_fence *nfence_fence_create_progress(struct nfence_file *nfile,
						  struct nfence_device *wdev,
						  bool native, u32 *handle,
						  struct drm_nfence_fence_mapping *mapping)
{
	struct nfence_fence *fence;
	int ret;

	fence = nfence_fence_alloc(nfile, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				   NULL, !native);
	if (IS_ERR(fence))
		return fence;
	kref_get(&fence->ref);
	ret = nfence_local_create(nfile, wdev, fence, 0, 0, true, true, handle,
				  mapping);
	if (ret) {
		nfence_fence_put_in_file(nfile, fence);
		return ERR_PTR(ret);
	}
	return fence;
}

/**
 * nfence_fence_close_progress - close the handle of a queue's progress fence
 * @nfile: the file
 * @handle: the handle nfence_fence_create_progress() returned
 *
 * Nothing happens if the handle is gone already (its device was destroyed).
 */
void nfence_fence_close_progress(struct nfence_file *nfile, u32 handle)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence_local *local = NULL;
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, handle);
	if (obj && nfence_local_of(obj)->progress) {
		local = nfence_local_of(obj);
		nfence_table_erase_locked(table, handle);
	}
	nfence_table_unlock(table);
	if (local)
		nfence_local_free(nfile, local);
}

static int nfence_fence_fd_release(struct inode *inode, struct file *filp)
{
	struct nfence_fence *fence = filp->private_data;

	nfence_fence_drop_handle(fence);
	nfence_fence_put(fence);
	return 0;
}

static const struct file_operations nfence_fence_fops = {
	.owner = THIS_MODULE,
	.release = nfence_fence_fd_release,
};

/*
 * A new close-on-exec fd for @fence, which takes over the caller's
 * reference and handle, in @args; or -errno, and the caller keeps them.
 */
static int nfence_fence_share_fd(struct nfence_fence *fence,
				 struct drm_nfence_fence_share *args)
{
	struct file *filp;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	filp = anon_inode_getfile("nfence-fence", &nfence_fence_fops, fence,
				  O_RDWR);
	if (IS_ERR(filp)) {
		put_unused_fd(fd);
		return PTR_ERR(filp);
	}
	/*
	 * Install last: once the fd is visible user space may close it. (As
	 * with PRIME, if the DRM core then fails to copy the args back, the
	 * process has an fd it was not told about.)
	 */
	args->fd = fd;
	fd_install(fd, filp);
	return 0;
}

/**
 * nfence_fence_share_ioctl - DRM_IOCTL_NFENCE_FENCE_SHARE
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_share
 * @file: the caller's file
 *
 * Return: 0 with a new close-on-exec fd, or -errno.
 */
int nfence_fence_share_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	const u32 nt = DRM_NFENCE_FENCE_SHARED |
		       DRM_NFENCE_FENCE_NT_SECURITY_SHARING;
	struct drm_nfence_fence_share *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_fence *fence = NULL;
	struct nfence_object *obj;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;

	/*
	 * The fd's reference and handle, taken while the local handle still
	 * holds one, so that the fence cannot be orphaned in between.
	 */
	nfence_table_lock(table);
	obj = nfence_table_find_locked(table, args->handle);
	if (obj) {
		fence = nfence_local_of(obj)->fence;
		kref_get(&fence->ref);
		nfence_fence_take_handle(fence);
	}
	nfence_table_unlock(table);
	if (!fence)
		return -ENOENT;
	if ((fence->flags & nt) != nt)
		ret = -EINVAL;
	else
		ret = nfence_fence_share_fd(fence, args);
	if (ret) {
		nfence_fence_drop_handle(fence);
		nfence_fence_put(fence);
	}
	return ret;
}

/*
 * The fence behind the fd FENCE_OPEN names, if this adapter may open it,
 * with a reference and a handle taken while the fd still holds one, so
 * that it cannot be orphaned before the new local handle exists; or an
 * ERR_PTR.
 */
static struct nfence_fence *nfence_fence_from_fd(struct nfence_adapter *adapter,
						 int fd)
{
	struct nfence_fence *fence;
	struct file *filp;

	filp = fget(fd);
	if (!filp)
		return ERR_PTR(-EBADF);
	if (filp->f_op != &nfence_fence_fops) {
		fput(filp);
		return ERR_PTR(-EINVAL);
	}
	fence = filp->private_data;
	if (fence->adapter != adapter &&
	    !(fence->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER)) {
		fput(filp);
		return ERR_PTR(-EINVAL);
	}
	kref_get(&fence->ref);
	nfence_fence_take_handle(fence);
	fput(filp);
	return fence;
}

/*
 * What a new local handle of @fence in @nfile names, with a reference of
 * its own: @fence, or this adapter's instance of a cross-adapter fence.
 */
static struct nfence_fence *nfence_fence_open_instance(struct nfence_file *nfile,
						       struct nfence_fence *fence)
{
	/*
	 * A cross-adapter fence: this adapter's instance of it, a native
	 * fence where the adapter has them and a monitored one where it
	 * does not, whichever the fence was made as (fences.rst,
	 * "Cross-adapter fences").
	 */
	if (fence->adapter != nfile->adapter)
		return nfence_fence_alloc(nfile, fence->type, fence->flags,
					  0, fence,
					  !nfile->adapter->gpu.cfg.native_fence);
	/* The local handle takes a reference of its own. */
	kref_get(&fence->ref);
	return fence;
}

/**
 * nfence_fence_open_ioctl - DRM_IOCTL_NFENCE_FENCE_OPEN
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_open
 * @file: the caller's file
 *
 * Return: 0 or -errno as the uapi documents.
 */
int nfence_fence_open_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_fence_open *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_fence *fence, *instance;
	struct nfence_device *wdev;
	int ret, idx;

	if (args->pad || (args->flags & ~NFENCE_LOCAL_FLAGS) ||
	    (args->flags & NFENCE_LOCAL_FLAGS) == NFENCE_LOCAL_FLAGS)
		return -EINVAL;
	if (nfence_check_affinity(args->engine_affinity))
		return -EINVAL;
	fence = nfence_fence_from_fd(adapter, args->fd);
	if (IS_ERR(fence))
		return PTR_ERR(fence);

	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev) {
		ret = -ENOENT;
		goto out;
	}
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_dev;
	}
	instance = nfence_fence_open_instance(nfile, fence);
	if (IS_ERR(instance)) {
		ret = PTR_ERR(instance);
		goto out_exit;
	}
	ret = nfence_local_create(nfile, wdev, instance, args->flags,
				  args->engine_affinity, false, false,
				  &args->handle, &args->mapping);
out_exit:
	drm_dev_exit(idx);
out_dev:
	nfence_device_put(wdev);
out:
	nfence_fence_drop_handle(fence);
	nfence_fence_put(fence);
	return ret;
}

/**
 * nfence_file_fences_init - set up the fence state of a new file
 * @nfile: the file, whose adapter is set
 *
 * The file may hold as many local fence handles as its adapter's
 * client_fences parameter says; with no limit there (0), as many as memory
 * allows, charged to the memory cgroup (all but the buckets of the
 * value maps' hash table, which the kernel's rhashtable allocates
 * unaccounted, a few bytes per opened shared fence's value).
 *
 * Return: 0 or -ENOMEM.
 */
int nfence_file_fences_init(struct nfence_file *nfile)
{
	u32 max = nfile->adapter->gpu.cfg.client_fences;
	unsigned int kind;
	int ret;

	ret = rhashtable_init(&nfile->value_maps, &nfence_value_map_params);
	if (ret)
		return ret;

	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_FENCE),
			  max ?: U32_MAX);
	mutex_init(&nfile->pool_lock);
	for (kind = 0; kind < NFENCE_POOL_KINDS; kind++)
		INIT_LIST_HEAD(&nfile->pools[kind]);
	nfence_vm_init(&nfile->vm);
	return 0;
}

static void nfence_pool_fini(struct nfence_file *nfile, struct list_head *pool)
{
	struct nfence_fence_page *fp, *tmp;

	list_for_each_entry_safe(fp, tmp, pool, link) {
		list_del_init(&fp->link);
		if (drm_mm_node_allocated(&fp->base.vma_node.vm_node))
			drm_vma_node_revoke(&fp->base.vma_node, nfile->drm_file);
		/* No fence uses the page any more: unmap it from this file. */
		nfence_vm_unmap(&fp->map);
		drm_gem_object_put(&fp->base);
	}
}

/**
 * nfence_file_fences_fini - tear down the fence state of a closing file
 * @nfile: the file, whose registry closed every fence handle
 */
void nfence_file_fences_fini(struct nfence_file *nfile)
{
	unsigned int kind;

	for (kind = 0; kind < NFENCE_POOL_KINDS; kind++)
		nfence_pool_fini(nfile, &nfile->pools[kind]);
	/* Every handle is gone, and its value maps with it. */
	WARN_ON(atomic_read(&nfile->value_maps.nelems));
	rhashtable_destroy(&nfile->value_maps);
	nfence_vm_fini(&nfile->vm);
	mutex_destroy(&nfile->pool_lock);
}

/* Fences debugfs prints per hold of the fence table's lock. */
#define NFENCE_PRINT_BATCH	64

/**
 * nfence_fences_print - list an adapter's fences for debugfs
 * @adapter: the adapter
 * @p: where to print
 *
 * Each fence is printed under the fence table's lock, which keeps it, and
 * the lock, which the CMP and every fence create and release take, is let
 * go every NFENCE_PRINT_BATCH fences: a fence created or released
 * meanwhile may be listed or not.
 *
 * Context: process context.
 */
void nfence_fences_print(struct nfence_adapter *adapter, struct drm_printer *p)
{
	XA_STATE(xas, &adapter->fences, 0);
	struct nfence_fence *fence;
	unsigned int printed = 0;

	xas_lock(&xas);
	xas_for_each(&xas, fence, ULONG_MAX) {
		u64 offset = 0, monitored, current_value;
		u32 waiters;

		/* Index 0, which an XA_FLAGS_ALLOC1 table keeps busy. */
		if (xa_is_zero(fence))
			continue;

		waiters = nfence_waitlist_snapshot(&fence->waiters,
						   &fence->mv.value,
						   &monitored);
		current_value = nfence_fence_read(fence);
		if (fence->cv.page &&
		    nfence_fence_page_mappable(fence->cv.page))
			offset = drm_vma_node_offset_addr(&fence->cv.page->base.vma_node);
		drm_printf(p, "fence %u type %u cpu %llu:%u ", fence->id,
			   fence->type, offset,
			   fence->cv.page ? fence->cv.offset : 0);
		drm_printf(p, "current %llu monitored %llu waiters %u%s%s%s\n",
			   current_value, monitored,
			   waiters,
			   READ_ONCE(fence->always_signaled) ?
			   " always_signaled" : "",
			   nfence_slot_in_vram(&fence->cv) ? " cv_vram" : "",
			   nfence_slot_in_vram(&fence->mv) ? " mv_vram" : "");
		if (++printed % NFENCE_PRINT_BATCH == 0) {
			xas_pause(&xas);
			xas_unlock(&xas);
			cond_resched();
			xas_lock(&xas);
		}
	}
	xas_unlock(&xas);
}
