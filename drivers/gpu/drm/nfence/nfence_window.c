// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_compat.h"
#include "nfence_mmap.h"
#include "nfence_window.h"

/*
 * The uapi counts a window's pages and offsets, and a fence page's
 * mapping, in pages of 4096 bytes: the kernel's pages must be those.
 */
static_assert(PAGE_SIZE == 4096);

/**
 * DOC: CPU window
 *
 * A shared fence's CurrentValue is a page of its own, so that the files
 * that open the fence see no other fence's value; mapped one by one, each
 * such page costs the process a VMA (about 200 bytes of kernel memory,
 * more than the handle). %DRM_IOCTL_NFENCE_FENCE_WINDOW gives a file one
 * GEM object, the window, of up to %DRM_NFENCE_FENCE_WINDOW_MAX_PAGES
 * pages, which the process maps once; the handles of shared fences the
 * file creates or opens afterwards each take a page index of it, and their
 * mmap offset is the window's plus that index. The window's pages are
 * inserted at fault time from its xarray (index -> the CurrentValue's
 * page), as normal refcounted pages (VM_MIXEDMAP).
 *
 * An index is the handle's from its create or open until it is destroyed.
 * Under &nfence_fence_window.lock: nfence_window_add() takes the lowest
 * free index; the fault handler looks an index up and inserts its page;
 * nfence_window_remove() erases the index and zaps that page of every
 * mapping of the window before it lets the lock go. So no fault inserts
 * an erased page, and an index is given again only once no page table
 * entry shows its old page: a later handle given it never shows another
 * fence's value through an old mapping (a process that unmapped nothing
 * and keeps reading a destroyed handle's address gets SIGBUS). The lock
 * is taken under the mm's mmap lock by a fault, and under
 * &nfence_file.sched_lock by the close walks that destroy handles; the
 * zap's locks (the file mapping's i_mmap lock, the page table locks)
 * nest inside it.
 *
 * A window reserves its size in the DRM device's mmap offset space, which
 * every GEM object of the device shares, whether or not anything is
 * mapped: the windows of an adapter together may take a quarter of it
 * (NFENCE_WINDOW_BUDGET pages, 2^26 on 64-bit kernels, 256 windows of the
 * largest size), so that no number of open files can leave the fences and
 * allocations of others without offsets. A window past that is refused
 * with -ENOSPC; windows only save memory, and a file without one maps
 * each shared fence's page on its own.
 *
 * The window holds a reference to the DRM device (its mmap offset is in
 * the device's offset manager) and lives until the file has closed and
 * the last mapping of it is gone.
 */

/* NFENCE_WINDOW_BUDGET: the pages of mmap offset space an adapter's windows may take */
#define NFENCE_WINDOW_BUDGET	(DRM_FILE_PAGE_OFFSET_SIZE / 4)

/**
 * struct nfence_fence_window - a file's CPU window
 */
struct nfence_fence_window {
	/** @base: the GEM object (mmap offset, references) */
	struct drm_gem_object base;
	/** @lock: orders a fault's lookup and insert against an erase */
	struct mutex lock;
	/** @pages: page index -> the &struct page it shows (allocating) */
	struct xarray pages;
	/** @npages: the window's size in pages */
	u32 npages;
};

static struct nfence_fence_window *to_window(struct drm_gem_object *obj)
{
	return container_of(obj, struct nfence_fence_window, base);
}

static void nfence_window_free(struct drm_gem_object *obj)
{
	struct nfence_fence_window *w = to_window(obj);
	struct drm_device *drm = obj->dev;

	atomic_long_sub(w->npages, &to_nfence_adapter(drm)->window_pages);
	/* Every handle removed its index before the file let go. */
	WARN_ON(!xa_empty(&w->pages));
	xa_destroy(&w->pages);
	mutex_destroy(&w->lock);
	drm_gem_object_release(obj);
	kfree(w);
	nfence_adapter_put(to_nfence_adapter(drm));
}

static int nfence_window_mmap(struct drm_gem_object *obj,
			      struct vm_area_struct *vma)
{
	/* CurrentValue is read-only for user space, as in a fence's page. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	/*
	 * VM_MIXEDMAP now: vm_insert_page() sets it itself only when the
	 * mmap lock is held for writing, and a fault holds it for reading.
	 */
	nfence_vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
			    VM_MAYWRITE);
	return 0;
}

static vm_fault_t nfence_window_fault(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;
	struct nfence_fence_window *w = to_window(obj);
	unsigned long index = vmf->pgoff - drm_vma_node_start(&obj->vma_node);
	struct page *page;
	vm_fault_t ret;

	mutex_lock(&w->lock);
	page = xa_load(&w->pages, index);
	ret = page ? nfence_vmf_insert_page(vmf, page) : VM_FAULT_SIGBUS;
	mutex_unlock(&w->lock);
	return ret;
}

static const struct vm_operations_struct nfence_window_vm_ops = {
	.fault = nfence_window_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nfence_window_funcs = {
	.free = nfence_window_free,
	.mmap = nfence_window_mmap,
	.vm_ops = &nfence_window_vm_ops,
};

static struct nfence_fence_window *
nfence_window_create(struct nfence_file *nfile, u32 npages)
{
	struct nfence_adapter *adapter = nfile->adapter;
	struct drm_device *drm = &adapter->drm;
	struct nfence_fence_window *w;
	int ret;

	/* Given back by nfence_window_free(), or here. */
	if (atomic_long_add_return(npages, &adapter->window_pages) >
	    NFENCE_WINDOW_BUDGET) {
		atomic_long_sub(npages, &adapter->window_pages);
		return ERR_PTR(-ENOSPC);
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w) {
		atomic_long_sub(npages, &adapter->window_pages);
		return ERR_PTR(-ENOMEM);
	}
	mutex_init(&w->lock);
	xa_init_flags(&w->pages, XA_FLAGS_ALLOC | XA_FLAGS_ACCOUNT);
	w->npages = npages;
	drm_dev_get(drm);
	w->base.funcs = &nfence_window_funcs;
	drm_gem_private_object_init(drm, &w->base, (size_t)npages << PAGE_SHIFT);
	ret = drm_gem_create_mmap_offset(&w->base);
	if (!ret)
		ret = drm_vma_node_allow(&w->base.vma_node, nfile->drm_file);
	if (ret) {
		drm_gem_object_put(&w->base);
		return ERR_PTR(ret);
	}
	return w;
}

/**
 * nfence_window_ioctl - DRM_IOCTL_NFENCE_FENCE_WINDOW
 * @drm: the DRM device
 * @data: &struct drm_nfence_fence_window
 * @file: the DRM file
 *
 * Return: 0; -EINVAL for bad flags or size, -EEXIST if the file has a
 * window, -ENOSPC past the adapter's budget of windows, -ENODEV after an
 * unplug, -ENOMEM.
 */
int nfence_window_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct nfence_file *nfile = to_nfence_file(file);
	struct drm_nfence_fence_window *args = data;
	struct nfence_fence_window *w;
	int idx, ret = 0;

	if (args->flags || !args->pages ||
	    args->pages > DRM_NFENCE_FENCE_WINDOW_MAX_PAGES)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	if (READ_ONCE(nfile->window)) {
		ret = -EEXIST;
		goto out;
	}

	w = nfence_window_create(nfile, args->pages);
	if (IS_ERR(w)) {
		ret = PTR_ERR(w);
		goto out;
	}
	/* Two racing calls: one window, the other -EEXIST. */
	if (cmpxchg(&nfile->window, NULL, w)) {
		drm_vma_node_revoke(&w->base.vma_node, file);
		drm_gem_object_put(&w->base);
		ret = -EEXIST;
		goto out;
	}
	args->mmap_offset = drm_vma_node_offset_addr(&w->base.vma_node);
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * nfence_window_add - show @page at a free page of @nfile's window
 * @nfile: the file
 * @page: the page, which the caller keeps alive until it removes it
 * @index: out: its page index, for nfence_window_remove()
 * @mmap_offset: out: the mmap offset of that page of the window
 *
 * Return: 0; -ENOENT when the file has no window, -EBUSY when it is full
 * (the caller then gives the page's own offset), -ENOMEM.
 */
int nfence_window_add(struct nfence_file *nfile, struct page *page,
		      u32 *index, u64 *mmap_offset)
{
	struct nfence_fence_window *w = READ_ONCE(nfile->window);
	int ret;

	if (!w)
		return -ENOENT;
	mutex_lock(&w->lock);
	ret = xa_alloc(&w->pages, index, page, XA_LIMIT(0, w->npages - 1),
		       GFP_KERNEL_ACCOUNT);
	mutex_unlock(&w->lock);
	if (ret)
		return ret;
	*mmap_offset = drm_vma_node_offset_addr(&w->base.vma_node) +
		       ((u64)*index << PAGE_SHIFT);
	return 0;
}

/**
 * nfence_window_remove - stop showing a page of @nfile's window
 * @nfile: the file, whose window gave @index
 * @index: from nfence_window_add()
 *
 * Afterwards no mapping of the window shows the page at @index, and the
 * index may be given again. Sleeps.
 */
void nfence_window_remove(struct nfence_file *nfile, u32 index)
{
	struct nfence_fence_window *w = nfile->window;
	struct drm_device *drm = w->base.dev;

	mutex_lock(&w->lock);
	xa_erase(&w->pages, index);
	/* Before the index can be given again (DOC: CPU window). */
	unmap_mapping_range(drm->anon_inode->i_mapping,
			    drm_vma_node_offset_addr(&w->base.vma_node) +
			    ((loff_t)index << PAGE_SHIFT), PAGE_SIZE, 1);
	mutex_unlock(&w->lock);
}

/**
 * nfence_file_window_fini - a closing file lets its window go
 * @nfile: the file, every handle of which removed its index
 *
 * Mappings of the window keep it until they go; they show nothing.
 */
void nfence_file_window_fini(struct nfence_file *nfile)
{
	struct nfence_fence_window *w = nfile->window;

	if (!w)
		return;
	drm_vma_node_revoke(&w->base.vma_node, nfile->drm_file);
	drm_gem_object_put(&w->base);
	nfile->window = NULL;
}
