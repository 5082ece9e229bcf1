// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/overflow.h>

#include "nfence_vm.h"

/**
 * DOC: GPU virtual address spaces
 *
 * Every open file has one GPU virtual address space, as every Windows
 * process has one on each adapter. Fence storage is mapped into it when a
 * fence is created or opened, and the simulated engines reach memory only by
 * translating GPU VAs through it: a VA outside every mapping, or a write to a
 * read-only mapping, translates to nothing and is a GPU page fault.
 *
 * Ranges are page-granular and never overlap; translation finds the one
 * mapping that contains the whole access.
 *
 * Mappings take ranges of the space from a &struct drm_mm, each with a
 * node of its own (168 bytes), except those made with %NFENCE_VM_SLOT: a
 * page or less, they take page slots, the top of the space
 * (%NFENCE_VM_SLOTS_START to %NFENCE_VM_END), one page each, allocated
 * lowest first and found by index in an xarray, a few bytes a mapping
 * while they are dense. The values of shared fences that a file maps (8
 * bytes each, two per opened fence) are mapped so: a process holding a
 * hundred thousand of them would otherwise pay a drm_mm node per value.
 * When every slot is taken, such a mapping takes a range instead. Nothing
 * translates across the border between ranges and slots: an access lies
 * in one mapping.
 */

/* The number of page slots. */
#define NFENCE_VM_SLOTS	((NFENCE_VM_END - NFENCE_VM_SLOTS_START) >> PAGE_SHIFT)

/**
 * struct nfence_vm_node - the range of a mapping that is not in a page slot
 */
struct nfence_vm_node {
	/** @node: the range in &nfence_vm.mm */
	struct drm_mm_node node;
	/** @map: its mapping */
	struct nfence_vm_mapping *map;
};

/**
 * nfence_vm_init - set up an empty address space
 * @vm: the address space
 */
void nfence_vm_init(struct nfence_vm *vm)
{
	mutex_init(&vm->lock);
	drm_mm_init(&vm->mm, NFENCE_VM_START,
		    NFENCE_VM_SLOTS_START - NFENCE_VM_START);
	xa_init_flags(&vm->slots, XA_FLAGS_ALLOC);
	vm->num_slots = NFENCE_VM_SLOTS;
}

/**
 * nfence_vm_fini - tear down an address space
 * @vm: the address space; every mapping must be gone
 */
void nfence_vm_fini(struct nfence_vm *vm)
{
	WARN_ON(!xa_empty(&vm->slots));
	xa_destroy(&vm->slots);
	drm_mm_takedown(&vm->mm);
	mutex_destroy(&vm->lock);
}

/**
 * nfence_vm_map - map memory at a new range of GPU VAs
 * @vm: the address space
 * @map: zeroed mapping to fill in
 * @vaddr: kernel address of the memory
 * @size: bytes, non-zero
 * @flags: NFENCE_VM_READ_ONLY to forbid GPU writes; NFENCE_VM_SLOT for a
 *	page slot (@size at most a page; a range when every slot is taken)
 *
 * @map->fence_at, if the memory holds fence values, must be set before.
 *
 * Return: 0, -EINVAL on bad arguments, -ENOSPC when the space (or its
 * page slots) is full, -ENOMEM.
 */
int nfence_vm_map(struct nfence_vm *vm, struct nfence_vm_mapping *map,
		  void *vaddr, u64 size, u32 flags)
{
	struct nfence_vm_node *vnode;
	int ret = -EBUSY;
	u32 slot;

	if (!vaddr || !size || size > NFENCE_VM_SLOTS_START - NFENCE_VM_START ||
	    (flags & ~(NFENCE_VM_READ_ONLY | NFENCE_VM_SLOT)) ||
	    ((flags & NFENCE_VM_SLOT) && size > PAGE_SIZE))
		return -EINVAL;

	/* Complete before the lock goes: translation may find it at once. */
	map->vaddr = vaddr;
	map->size = size;
	map->flags = flags;
	map->node = NULL;
	mutex_lock(&vm->lock);
	if (flags & NFENCE_VM_SLOT) {
		ret = xa_alloc(&vm->slots, &slot, map,
			       XA_LIMIT(0, vm->num_slots - 1),
			       GFP_KERNEL_ACCOUNT);
		if (!ret)
			map->start = NFENCE_VM_SLOTS_START +
				     ((u64)slot << PAGE_SHIFT);
	}
	/* Not a slot, or none left: a range. */
	if (ret == -EBUSY) {
		vnode = kzalloc(sizeof(*vnode), GFP_KERNEL_ACCOUNT);
		ret = vnode ? drm_mm_insert_node_generic(&vm->mm, &vnode->node,
							 round_up(size, PAGE_SIZE),
							 PAGE_SIZE, 0,
							 DRM_MM_INSERT_BEST) :
			      -ENOMEM;
		if (!ret) {
			vnode->map = map;
			map->node = vnode;
			map->start = vnode->node.start;
		} else {
			kfree(vnode);
		}
	}
	if (!ret)
		map->vm = vm;
	mutex_unlock(&vm->lock);
	return ret;
}

/**
 * nfence_vm_unmap - remove a mapping
 * @map: the mapping; unmapping one that is not mapped does nothing
 */
void nfence_vm_unmap(struct nfence_vm_mapping *map)
{
	struct nfence_vm *vm = map->vm;

	if (!vm)
		return;
	mutex_lock(&vm->lock);
	if (map->node)
		drm_mm_remove_node(&map->node->node);
	else
		xa_erase(&vm->slots,
			 (map->start - NFENCE_VM_SLOTS_START) >> PAGE_SHIFT);
	mutex_unlock(&vm->lock);
	kfree(map->node);
	map->node = NULL;
	map->vm = NULL;
}

/**
 * nfence_vm_move - point a mapping at other memory
 * @map: the mapping, mapped or not
 * @vaddr: kernel address of the memory that takes its place, as large
 *
 * GPU accesses translated after this reach @vaddr; its GPU VA does not
 * change. The caller keeps the old memory until no access can be using
 * it (the CMP's engines translate under &nfence_cmp.lock).
 */
void nfence_vm_move(struct nfence_vm_mapping *map, void *vaddr)
{
	struct nfence_vm *vm = READ_ONCE(map->vm);

	if (!vm) {
		map->vaddr = vaddr;
		return;
	}
	mutex_lock(&vm->lock);
	map->vaddr = vaddr;
	mutex_unlock(&vm->lock);
}

/**
 * nfence_vm_find_locked - translate a GPU access, address space locked
 * @vm: the address space, whose @lock the caller holds
 * @va: GPU virtual address
 * @len: bytes accessed, non-zero
 * @write: whether the access writes
 * @mapp: out, optional: the mapping that holds the access
 *
 * The result stays valid while the caller holds @vm->lock: unmapping takes
 * the lock, and memory is freed only after it is unmapped. This is how the
 * CMP touches memory that user space may free at any time.
 *
 * Return: the kernel address, or NULL for a GPU page fault.
 */
void *nfence_vm_find_locked(struct nfence_vm *vm, u64 va, u64 len, bool write,
			    struct nfence_vm_mapping **mapp)
{
	struct nfence_vm_mapping *map = NULL;
	struct drm_mm_node *node;
	u64 end;

	lockdep_assert_held(&vm->lock);
	if (!len || check_add_overflow(va, len, &end))
		return NULL;
	/* Outside the space the iterator yields drm_mm's head node. */
	if (va < NFENCE_VM_START || end > NFENCE_VM_END)
		return NULL;

	if (va >= NFENCE_VM_SLOTS_START) {
		map = xa_load(&vm->slots,
			      (va - NFENCE_VM_SLOTS_START) >> PAGE_SHIFT);
	} else {
		drm_mm_for_each_node_in_range(node, &vm->mm, va, va + 1) {
			if (node != &vm->mm.head_node)
				map = container_of(node, struct nfence_vm_node,
						   node)->map;
			break;
		}
	}
	if (!map || va < map->start || end > map->start + map->size)
		return NULL;
	if (write && (map->flags & NFENCE_VM_READ_ONLY))
		return NULL;
	if (mapp)
		*mapp = map;
	return map->vaddr + (va - map->start);
}

/**
 * nfence_vm_read_locked - copy memory out through GPU VAs, space locked
 * @vm: the address space, whose @lock the caller holds
 * @va: GPU virtual address
 * @buf: where to copy
 * @len: bytes
 *
 * The range may span several mappings, each of which must cover its part.
 *
 * Return: 0, or -EFAULT if any byte does not translate.
 */
int nfence_vm_read_locked(struct nfence_vm *vm, u64 va, void *buf, size_t len)
{
	struct nfence_vm_mapping *map;

	lockdep_assert_held(&vm->lock);
	while (len) {
		void *src = nfence_vm_find_locked(vm, va, 1, false, &map);
		u64 n;

		if (!src)
			return -EFAULT;
		n = min_t(u64, len, map->start + map->size - va);
		memcpy(buf, src, n);
		buf += n;
		va += n;
		len -= n;
	}
	return 0;
}

/**
 * nfence_vm_read - copy memory out through GPU VAs
 * @vm: the address space
 * @va: GPU virtual address
 * @buf: where to copy
 * @len: bytes
 *
 * Return: 0, or -EFAULT if any byte does not translate.
 */
int nfence_vm_read(struct nfence_vm *vm, u64 va, void *buf, size_t len)
{
	int ret;

	mutex_lock(&vm->lock);
	ret = nfence_vm_read_locked(vm, va, buf, len);
	mutex_unlock(&vm->lock);
	return ret;
}

/* Only KUnit looks at an address space or a segment this way. */
#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)

/**
 * nfence_vm_translate - translate a GPU access to a kernel address
 * @vm: the address space
 * @va: GPU virtual address
 * @len: bytes accessed, non-zero
 * @write: whether the access writes
 *
 * The caller must keep the mapping alive while it uses the result (for the
 * CMP: the queue it executes holds what its command stream references).
 *
 * Return: the kernel address, or NULL for a GPU page fault.
 */
void *nfence_vm_translate(struct nfence_vm *vm, u64 va, u64 len, bool write)
{
	void *vaddr;

	mutex_lock(&vm->lock);
	vaddr = nfence_vm_find_locked(vm, va, len, write, NULL);
	mutex_unlock(&vm->lock);
	return vaddr;
}

/**
 * nfence_vm_range_mapped - whether every byte of a range translates
 * @vm: the address space
 * @va: GPU virtual address
 * @len: bytes, non-zero
 *
 * Return: true if a read of the whole range would not fault now.
 */
bool nfence_vm_range_mapped(struct nfence_vm *vm, u64 va, u64 len)
{
	struct nfence_vm_mapping *map;
	bool ok = true;
	u64 end;

	if (!len || check_add_overflow(va, len, &end))
		return false;
	mutex_lock(&vm->lock);
	while (va < end) {
		if (!nfence_vm_find_locked(vm, va, 1, false, &map)) {
			ok = false;
			break;
		}
		va = map->start + map->size;
	}
	mutex_unlock(&vm->lock);
	return ok;
}

#endif
