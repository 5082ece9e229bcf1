// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_vma_manager.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_alloc.h"
#include "nfence_compat.h"
#include "nfence_device.h"
#include "nfence_fence.h"
#include "nfence_mmap.h"

/**
 * DOC: allocations
 *
 * An allocation is a GEM object whose memory comes from one segment: a
 * vmalloc'ed buffer accounted in the system-memory aperture, or a range
 * of the memory-backed VRAM (from its CPU-visible part when the CPU must
 * reach it). It is mapped into the file's GPU address space at creation,
 * and the simulated engines reach it only through that VA.
 *
 * D3DKMTLock2 is the GEM mmap offset: the CPU mapping is the same memory
 * the GPU sees. A CPU mapping holds a GEM reference, so destroying the
 * allocation removes its handle and its GPU VA at once while the memory
 * stays valid for the CPU until munmap().
 *
 * The two segments are mapped as their memory is on real hardware:
 *
 * - System memory is ordinary pages of the allocation's own, inserted at
 *   mmap time (VM_MIXEDMAP). get_user_pages() works on them, so they can
 *   be handed to I/O (O_DIRECT, vmsplice(), io_uring fixed buffers); a page
 *   reference taken that way keeps the page after munmap() and destroy,
 *   and the page is never another allocation's while it is referenced
 *   (vfree() only drops the allocation's own reference).
 * - VRAM is device memory: a range of the adapter's one VRAM pool, which
 *   the segment hands to the next allocation as soon as this one is
 *   freed. It is mapped as drivers map a BAR, VM_IO | VM_PFNMAP, its page
 *   frames inserted at fault time (nfence_alloc_vram_fault()) as special
 *   entries that carry no page reference, so get_user_pages() refuses the
 *   mapping (EFAULT) and no reference to a VRAM page can outlive it. The
 *   mapping is readable and writable by the process itself (loads, stores,
 *   read() and write() into it); a debugger reaches it through
 *   &vm_operations_struct.access (ptrace(), /proc/PID/mem).
 *
 * VRAM pressure: a VRAM request that finds no room (in VRAM or in the
 * file's quota) first has the fences' VRAM pool pages of every file moved
 * to system memory (DOC: demoting fence storage) and tries again. Made
 * with %DRM_NFENCE_ALLOC_ALLOW_DEMOTE, it then
 * lands in system memory when VRAM is full, as WDDM demotes allocations
 * whose preferred segment has no room. nfence does not evict resident
 * allocations: what WDDM allows to be evicted (VRAM behind a CPU
 * mapping, under the OS's control) it keeps, and the caller sees -ENOSPC
 * or the demotion instead.
 *
 * Why not GEM handles: an allocation's handle belongs to a WDDM device, of
 * which a file has many; every call names the device and the handle, and
 * destroying the device destroys its allocations. A GEM handle belongs to
 * the file, and DRM_IOCTL_GEM_CLOSE would let user space drop an
 * allocation behind its device's back (its GPU VA still mapped). So the
 * objects are GEM objects (mmap offsets, references, the DRM core's
 * lifetime rules), but their handles live in the file's allocation table
 * (in &nfence_file.objects), and the mmap offset is allowed to the file
 * explicitly (drm_vma_node_allow()), as drm_gem_handle_create() would
 * have.
 */

static struct nfence_alloc *to_nfence_alloc(struct drm_gem_object *obj)
{
	return container_of(obj, struct nfence_alloc, base);
}

static void nfence_alloc_free(struct drm_gem_object *obj)
{
	struct nfence_alloc *alloc = to_nfence_alloc(obj);

	nfence_vm_unmap(&alloc->map);
	nfence_segment_free(&alloc->node);
	if (alloc->sysmem)
		vfree(alloc->vaddr);
	drm_gem_object_release(obj);
	kfree(alloc);
}

/*
 * NFENCE_ALLOC_PREFAULT: page frames a VRAM fault inserts at once, the one
 * that faulted and those after it, so that a CPU walking a mapping takes a
 * fault per 64 KiB rather than per page (TTM does the same).
 */
#define NFENCE_ALLOC_PREFAULT	16

/* The allocation's page index a CPU address of @vma maps. */
static unsigned long nfence_alloc_pgoff(struct vm_area_struct *vma,
					unsigned long addr)
{
	struct drm_gem_object *obj = vma->vm_private_data;

	return vma->vm_pgoff - drm_vma_node_start(&obj->vma_node) +
	       ((addr - vma->vm_start) >> PAGE_SHIFT);
}

static int nfence_alloc_mmap(struct drm_gem_object *obj,
			     struct vm_area_struct *vma)
{
	struct nfence_alloc *alloc = to_nfence_alloc(obj);
	unsigned long pgoff = vma->vm_pgoff - drm_vma_node_start(&obj->vma_node);
	unsigned long addr;
	void *vaddr;
	int ret;

	/*
	 * Shared mappings only: a private copy-on-write page would be
	 * dropped without notice when an unplug zaps the mapping.
	 */
	if (!alloc->cpu_visible || is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	if (!alloc->sysmem) {
		/* Device memory: see DOC: allocations. */
		nfence_vm_flags_mod(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
				    VM_DONTDUMP, 0);
		return 0;
	}
	nfence_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, 0);
	vaddr = alloc->vaddr + (pgoff << PAGE_SHIFT);
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, vmalloc_to_page(vaddr));
		if (ret)
			return ret;
		vaddr += PAGE_SIZE;
	}
	return 0;
}

/*
 * A VRAM mapping's fault: the page frames of the faulting page and of up
 * to NFENCE_ALLOC_PREFAULT - 1 pages after it, as special entries (no page
 * reference). The memory is the allocation's until its GEM object is
 * freed, which the mapping prevents; an unplug zaps the mapping and the
 * next access faults the same memory back in.
 */
static vm_fault_t nfence_alloc_vram_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nfence_alloc *alloc = to_nfence_alloc(vma->vm_private_data);
	unsigned long npages = alloc->base.size >> PAGE_SHIFT;
	unsigned long addr = vmf->address & PAGE_MASK;
	unsigned long pgoff = nfence_alloc_pgoff(vma, addr);
	vm_fault_t ret, first = VM_FAULT_NOPAGE;
	unsigned int i;

	if (pgoff >= npages)
		return VM_FAULT_SIGBUS;
	for (i = 0; i < NFENCE_ALLOC_PREFAULT && addr < vma->vm_end &&
	     pgoff < npages; i++, addr += PAGE_SIZE, pgoff++) {
		ret = vmf_insert_pfn(vma, addr,
				     vmalloc_to_pfn(alloc->vaddr +
						    (pgoff << PAGE_SHIFT)));
		/* Only the faulting page must make it; the rest may wait. */
		if (!i)
			first = ret;
		if (ret != VM_FAULT_NOPAGE)
			break;
	}
	return first;
}

/*
 * A system-memory mapping's pages are inserted at mmap time; this puts one
 * back after the mapping was zapped (an unplug zaps every mapping of the
 * DRM device, MADV_DONTNEED does too).
 */
static vm_fault_t nfence_alloc_fault(struct vm_fault *vmf)
{
	struct nfence_alloc *alloc = to_nfence_alloc(vmf->vma->vm_private_data);
	unsigned long pgoff = nfence_alloc_pgoff(vmf->vma, vmf->address);

	if (!alloc->sysmem)
		return nfence_alloc_vram_fault(vmf);
	if (pgoff >= alloc->base.size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	return nfence_vmf_insert_page(vmf, vmalloc_to_page(alloc->vaddr +
							   (pgoff << PAGE_SHIFT)));
}

/*
 * ptrace() and /proc/PID/mem on a mapping get_user_pages() refuses (VRAM):
 * copy to or from the memory directly, as TTM's access callback does, but
 * only what the mapping shows (up to its end) and as it shows it (no
 * write through a read-only mapping: get_user_pages() cannot force one on
 * a shared mapping either).
 */
static int nfence_alloc_access(struct vm_area_struct *vma, unsigned long addr,
			       void *buf, int len, int write)
{
	struct nfence_alloc *alloc = to_nfence_alloc(vma->vm_private_data);
	u64 offset = ((u64)nfence_alloc_pgoff(vma, addr) << PAGE_SHIFT) +
		     offset_in_page(addr);

	if (len < 1 || offset >= alloc->base.size ||
	    (write && !(vma->vm_flags & VM_WRITE)))
		return -EIO;
	len = min3((u64)len, alloc->base.size - offset,
		   (u64)(vma->vm_end - addr));
	if (write)
		memcpy(alloc->vaddr + offset, buf, len);
	else
		memcpy(buf, alloc->vaddr + offset, len);
	return len;
}

static const struct vm_operations_struct nfence_alloc_vm_ops = {
	.fault = nfence_alloc_fault,
	.access = nfence_alloc_access,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nfence_alloc_funcs = {
	.free = nfence_alloc_free,
	.mmap = nfence_alloc_mmap,
	.vm_ops = &nfence_alloc_vm_ops,
};

/* Whether @size more bytes of @seg fit in @nfile's quota of it. */
static bool nfence_alloc_quota_fits(struct nfence_file *nfile,
				    struct nfence_segment *seg, u64 size)
{
	u64 quota = READ_ONCE(seg->client_quota);

	return !quota ||
	       nfence_segment_usage_read(nfile->seg_usage, seg->id) + size <=
	       quota;
}

/*
 * Whether @size could fit in @seg for @alloc at all: in its CPU-visible
 * part if @alloc needs one. A request larger than that makes no demotion
 * of fence storage worth its cost.
 */
static bool nfence_alloc_vram_could_fit(const struct nfence_alloc *alloc,
					const struct nfence_segment *seg,
					u64 size)
{
	return size <= (alloc->cpu_visible ? seg->cpu_visible_size :
			seg->size);
}

/* A range of VRAM for @alloc, charged to @nfile: -ENOSPC if none fits. */
static int nfence_alloc_vram(struct nfence_file *nfile,
			     struct nfence_alloc *alloc,
			     struct nfence_segment *seg, u64 size)
{
	return nfence_segment_alloc_charged(seg, &alloc->node, size, PAGE_SIZE,
					    alloc->cpu_visible ?
					    NFENCE_SEGMENT_ALLOC_CPU_VISIBLE :
					    NFENCE_SEGMENT_ALLOC_INVISIBLE,
					    nfile->seg_usage);
}

/*
 * A range of VRAM for @alloc, once fence storage has made room if need be
 * (DOC: demoting fence storage): the file's own, then, if VRAM rather than
 * the file's quota is short, every file's. None moves for a request that
 * could not fit even in an empty segment.
 */
static int nfence_alloc_vram_room(struct nfence_file *nfile,
				  struct nfence_alloc *alloc,
				  struct nfence_segment *seg, u64 size)
{
	struct nfence_adapter *adapter = nfile->adapter;
	int ret = nfence_alloc_vram(nfile, alloc, seg, size);

	if (ret != -ENOSPC || !nfence_alloc_vram_could_fit(alloc, seg, size))
		return ret;
	if (nfence_fence_vram_demote(adapter, nfile)) {
		ret = nfence_alloc_vram(nfile, alloc, seg, size);
		if (ret != -ENOSPC)
			return ret;
	}
	if (nfence_alloc_quota_fits(nfile, seg, size) &&
	    nfence_fence_vram_demote(adapter, NULL))
		ret = nfence_alloc_vram(nfile, alloc, seg, size);
	return ret;
}

/*
 * Take memory for @alloc: VRAM, once fence storage has left it if need be,
 * or system memory (a demoted allocation).
 */
static int nfence_alloc_place(struct nfence_file *nfile,
			      struct nfence_alloc *alloc, u64 size,
			      u32 segment_id, u32 flags)
{
	struct nfence_adapter *adapter = nfile->adapter;
	struct nfence_gpu *gpu = &adapter->gpu;
	struct nfence_segment *seg;
	int ret;

	if (segment_id == NFENCE_SEGMENT_ID_LOCAL) {
		seg = nfence_gpu_segment(gpu, NFENCE_SEGMENT_ID_LOCAL);
		ret = nfence_alloc_vram_room(nfile, alloc, seg, size);
		if (!ret) {
			alloc->segment_id = NFENCE_SEGMENT_ID_LOCAL;
			alloc->vaddr = nfence_segment_node_vaddr(&alloc->node);
			memset(alloc->vaddr, 0, size);
			return 0;
		}
		if (ret != -ENOSPC || !(flags & DRM_NFENCE_ALLOC_ALLOW_DEMOTE))
			return ret;
	}

	seg = nfence_gpu_segment(gpu, NFENCE_SEGMENT_ID_SYSTEM);
	ret = nfence_segment_alloc_charged(seg, &alloc->node, size, PAGE_SIZE,
					   0, nfile->seg_usage);
	if (ret)
		return ret;
	alloc->vaddr = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!alloc->vaddr) {
		nfence_segment_free(&alloc->node);
		return -ENOMEM;
	}
	alloc->sysmem = true;
	alloc->segment_id = NFENCE_SEGMENT_ID_SYSTEM;
	return 0;
}

static struct nfence_alloc *nfence_alloc_of(struct nfence_object *obj)
{
	return container_of(obj, struct nfence_alloc, obj);
}

/*
 * Remove @handle of @device from the table: the allocation, NULL if it
 * names nothing, or -EBUSY if a doorbell pins it.
 */
static struct nfence_alloc *nfence_alloc_remove(struct nfence_file *nfile,
						u32 device, u32 handle)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);
	struct nfence_alloc *alloc = NULL;
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_owned_locked(table, handle, device);
	if (obj) {
		alloc = nfence_alloc_of(obj);
		if (alloc->pins)
			alloc = ERR_PTR(-EBUSY);
		else
			nfence_table_erase_locked(table, handle);
	}
	nfence_table_unlock(table);
	return alloc;
}

/**
 * nfence_alloc_pin - keep an allocation from being destroyed
 * @nfile: the file
 * @device: the device handle it must belong to
 * @handle: the allocation handle
 *
 * For a doorbell's ring buffer and control: until nfence_alloc_unpin(),
 * DRM_IOCTL_NFENCE_ALLOC_DESTROY on it fails with -EBUSY (destroying its
 * device or closing its file still destroys it, after its doorbells).
 *
 * Return: the allocation, with a reference, or NULL if @handle names no
 * allocation of @device.
 */
struct nfence_alloc *nfence_alloc_pin(struct nfence_file *nfile, u32 device,
				      u32 handle)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);
	struct nfence_alloc *alloc = NULL;
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_find_owned_locked(table, handle, device);
	if (obj) {
		alloc = nfence_alloc_of(obj);
		alloc->pins++;
		drm_gem_object_get(&alloc->base);
	}
	nfence_table_unlock(table);
	return alloc;
}

/**
 * nfence_alloc_unpin - undo nfence_alloc_pin()
 * @nfile: the file the allocation was pinned in
 * @alloc: the allocation, or NULL
 */
void nfence_alloc_unpin(struct nfence_file *nfile, struct nfence_alloc *alloc)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);

	if (!alloc)
		return;
	nfence_table_lock(table);
	alloc->pins--;
	nfence_table_unlock(table);
	drm_gem_object_put(&alloc->base);
}

/* Tear down a removed allocation: GPU VA and handle now, memory later. */
static void nfence_alloc_close(struct nfence_file *nfile,
			       struct nfence_alloc *alloc)
{
	nfence_vm_unmap(&alloc->map);
	if (alloc->cpu_visible)
		drm_vma_node_revoke(&alloc->base.vma_node, nfile->drm_file);
	nfence_device_put(alloc->device);
	alloc->device = NULL;
	drm_gem_object_put(&alloc->base);
}

/*
 * &nfence_object_ops.close: a device's or a closing file's allocation,
 * whose doorbells, the only pins, are closed already.
 */
static void nfence_alloc_obj_close(struct nfence_registry *reg,
				   struct nfence_object *obj)
{
	struct nfence_alloc *alloc = nfence_alloc_of(obj);

	WARN_ON(alloc->pins);
	nfence_alloc_close(nfence_registry_file(reg), alloc);
}

static const struct nfence_object_ops nfence_alloc_obj_ops = {
	.close = nfence_alloc_obj_close,
};

#define NFENCE_ALLOC_FLAGS \
	(DRM_NFENCE_ALLOC_CPU_VISIBLE | DRM_NFENCE_ALLOC_ALLOW_DEMOTE)

static int nfence_alloc_check(struct nfence_adapter *adapter,
			      const struct drm_nfence_alloc_create *args)
{
	if ((args->flags & ~NFENCE_ALLOC_FLAGS) || args->pad)
		return -EINVAL;
	if (!args->size || args->size > DRM_NFENCE_MAX_ALLOC_SIZE)
		return -EINVAL;
	switch (args->segment_id) {
	case NFENCE_SEGMENT_ID_SYSTEM:
		if (args->flags & DRM_NFENCE_ALLOC_ALLOW_DEMOTE)
			return -EINVAL;
		break;
	case NFENCE_SEGMENT_ID_LOCAL:
		if ((args->flags & DRM_NFENCE_ALLOC_CPU_VISIBLE) &&
		    !adapter->gpu.cfg.vram_visible_size)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/*
 * The allocation ALLOC_CREATE asks for: placed in its segment, mappable if
 * CPU-visible, mapped in the file's GPU address space; or an ERR_PTR. Takes
 * over the reference on @wdev either way.
 */
static struct nfence_alloc *
nfence_alloc_new(struct drm_file *file, struct nfence_device *wdev,
		 const struct drm_nfence_alloc_create *args)
{
	struct nfence_file *nfile = to_nfence_file(file);
	u64 size = PAGE_ALIGN(args->size);
	struct nfence_alloc *alloc;
	int ret;

	alloc = kzalloc(sizeof(*alloc), GFP_KERNEL_ACCOUNT);
	if (!alloc) {
		nfence_device_put(wdev);
		return ERR_PTR(-ENOMEM);
	}
	alloc->device = wdev;
	alloc->obj.ops = &nfence_alloc_obj_ops;
	alloc->obj.owner = &wdev->obj;
	alloc->cpu_visible = args->segment_id == NFENCE_SEGMENT_ID_SYSTEM ||
			     (args->flags & DRM_NFENCE_ALLOC_CPU_VISIBLE);
	alloc->base.funcs = &nfence_alloc_funcs;
	drm_gem_private_object_init(file->minor->dev, &alloc->base, size);

	ret = nfence_alloc_place(nfile, alloc, size, args->segment_id,
				 args->flags);
	if (!ret && alloc->cpu_visible) {
		ret = drm_gem_create_mmap_offset(&alloc->base);
		if (!ret)
			ret = drm_vma_node_allow(&alloc->base.vma_node, file);
		if (ret)
			alloc->cpu_visible = false;
	}
	if (!ret)
		ret = nfence_vm_map(&nfile->vm, &alloc->map, alloc->vaddr,
				    size, 0);
	if (ret) {
		nfence_alloc_close(nfile, alloc);
		return ERR_PTR(ret);
	}
	return alloc;
}

/*
 * Give @alloc a handle and fill in the outputs of ALLOC_CREATE, unless its
 * device is closed (-ENOENT) or the file has its limit of allocations.
 */
static int nfence_alloc_publish(struct nfence_file *nfile,
				struct nfence_alloc *alloc,
				struct drm_nfence_alloc_create *args)
{
	struct nfence_device *wdev = alloc->device;
	struct nfence_table *table;
	u32 handle;
	int ret;

	table = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);
	nfence_table_lock(table);
	if (wdev->dead)
		ret = -ENOENT;
	else
		ret = nfence_table_insert_locked(table, &alloc->obj, &handle);
	/* As for fences: the insert may have let a device close slip by. */
	if (!ret && wdev->dead) {
		nfence_table_erase_locked(table, handle);
		ret = -ENOENT;
	}
	if (!ret) {
		/* Visible now: fill in everything before unlocking. */
		args->handle = handle;
		args->gpu_va = alloc->map.start;
		args->placed_segment_id = alloc->segment_id;
	}
	nfence_table_unlock(table);
	return ret;
}

/**
 * nfence_alloc_create_ioctl - DRM_IOCTL_NFENCE_ALLOC_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_alloc_create
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_alloc_create_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_alloc_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_device *wdev;
	struct nfence_alloc *alloc;
	int ret, idx;

	ret = nfence_alloc_check(adapter, args);
	if (ret)
		return ret;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		nfence_device_put(wdev);
		return -ENODEV;
	}

	alloc = nfence_alloc_new(file, wdev, args);
	if (IS_ERR(alloc)) {
		ret = PTR_ERR(alloc);
	} else {
		ret = nfence_alloc_publish(nfile, alloc, args);
		if (ret)
			nfence_alloc_close(nfile, alloc);
	}
	drm_dev_exit(idx);
	return ret;
}

/**
 * nfence_alloc_destroy_ioctl - DRM_IOCTL_NFENCE_ALLOC_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_alloc_destroy
 * @file: the caller's file
 *
 * Return: 0, -ENOENT if the handle names no allocation of the device, or
 * -EBUSY while a doorbell uses it.
 */
int nfence_alloc_destroy_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_nfence_alloc_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_alloc *alloc;

	alloc = nfence_alloc_remove(nfile, args->device, args->handle);
	if (!alloc)
		return -ENOENT;
	if (IS_ERR(alloc))
		return PTR_ERR(alloc);
	nfence_alloc_close(nfile, alloc);
	return 0;
}

/**
 * nfence_alloc_lock_ioctl - DRM_IOCTL_NFENCE_ALLOC_LOCK
 * @drm: the DRM device
 * @data: &struct drm_nfence_alloc_lock
 * @file: the caller's file
 *
 * Return: 0, -EINVAL for bad input or an allocation the CPU cannot map,
 * -ENOENT if the handle names no allocation of the device.
 */
int nfence_alloc_lock_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_nfence_alloc_lock *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);
	struct nfence_alloc *alloc = NULL;
	struct nfence_object *obj;
	int ret = 0;

	if (args->flags || args->pad)
		return -EINVAL;

	nfence_table_lock(table);
	obj = nfence_table_find_owned_locked(table, args->handle, args->device);
	if (obj)
		alloc = nfence_alloc_of(obj);
	if (!alloc) {
		ret = -ENOENT;
	} else if (!alloc->cpu_visible) {
		ret = -EINVAL;
	} else {
		args->mmap_offset = drm_vma_node_offset_addr(&alloc->base.vma_node);
		args->size = alloc->base.size;
	}
	nfence_table_unlock(table);
	return ret;
}

/**
 * nfence_file_allocs_init - set up the allocation table of a new file
 * @nfile: the file
 */
void nfence_file_allocs_init(struct nfence_file *nfile)
{
	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_ALLOC),
			  DRM_NFENCE_MAX_ALLOCS_PER_FILE);
}
