/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_VM_H__
#define __NFENCE_VM_H__

#include <linux/bits.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <drm/drm_mm.h>

struct nfence_fence;
struct nfence_vm_mapping;
struct nfence_vm_node;

/**
 * typedef nfence_vm_fence_at_t - which fence a GPU VA of a mapping holds
 * @map: the mapping
 * @offset: byte offset of the access in the mapping
 *
 * Called with the address space's lock held.
 *
 * Return: the fence whose value lives there with a new reference, or NULL.
 */
typedef struct nfence_fence *(*nfence_vm_fence_at_t)(struct nfence_vm_mapping *map,
						       u64 offset);

/* The range of GPU virtual addresses handed out: [4 GiB, 1 TiB). */
#define NFENCE_VM_START		BIT_ULL(32)
#define NFENCE_VM_END		BIT_ULL(40)
/*
 * Its top 64 GiB are page slots: one page of VA per mapping of a page or
 * less, found by index (DOC: GPU virtual address spaces).
 */
#define NFENCE_VM_SLOTS_START	(NFENCE_VM_END - BIT_ULL(36))

/* Mapping flags. */
#define NFENCE_VM_READ_ONLY	BIT(0)
/* In a page slot (a page or less), not a range of the address space. */
#define NFENCE_VM_SLOT		BIT(1)

/**
 * struct nfence_vm - one GPU virtual address space (per open file)
 */
struct nfence_vm {
	/** @lock: protects @mm, @slots and every mapping's place in them */
	struct mutex lock;
	/**
	 * @mm: the ranges of mappings made without %NFENCE_VM_SLOT, below
	 * %NFENCE_VM_SLOTS_START; each node is a &struct nfence_vm_node
	 */
	struct drm_mm mm;
	/** @slots: page slot index -> &struct nfence_vm_mapping (%NFENCE_VM_SLOT) */
	struct xarray slots;
	/**
	 * @num_slots: page slots it hands out, all those of the space (KUnit
	 * sets fewer, to run out)
	 */
	u32 num_slots;
};

/**
 * struct nfence_vm_mapping - memory mapped at a range of GPU VAs
 *
 * The simulated GPU reaches memory only through mappings: the range
 * [@start, @start + @size) translates to [@vaddr, @vaddr + @size).
 * The VA range itself is page-granular.
 */
struct nfence_vm_mapping {
	/** @start: its first GPU VA, while mapped */
	u64 start;
	/** @node: its range in &nfence_vm.mm; NULL for a page slot */
	struct nfence_vm_node *node;
	/** @vm: the address space, NULL when not mapped */
	struct nfence_vm *vm;
	/** @vaddr: kernel address of the memory behind the range */
	void *vaddr;
	/** @size: bytes of memory behind the range */
	u64 size;
	/** @flags: NFENCE_VM_* */
	u32 flags;
	/** @fence_at: for fence storage: finds the fence at an offset */
	nfence_vm_fence_at_t fence_at;
};

void nfence_vm_init(struct nfence_vm *vm);
void nfence_vm_fini(struct nfence_vm *vm);
int nfence_vm_map(struct nfence_vm *vm, struct nfence_vm_mapping *map,
		  void *vaddr, u64 size, u32 flags);
void nfence_vm_unmap(struct nfence_vm_mapping *map);
void nfence_vm_move(struct nfence_vm_mapping *map, void *vaddr);
void *nfence_vm_find_locked(struct nfence_vm *vm, u64 va, u64 len, bool write,
			    struct nfence_vm_mapping **mapp);
int nfence_vm_read_locked(struct nfence_vm *vm, u64 va, void *buf, size_t len);
int nfence_vm_read(struct nfence_vm *vm, u64 va, void *buf, size_t len);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
void *nfence_vm_translate(struct nfence_vm *vm, u64 va, u64 len, bool write);
bool nfence_vm_range_mapped(struct nfence_vm *vm, u64 va, u64 len);
#endif

#endif /* __NFENCE_VM_H__ */
