/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_ALLOC_H__
#define __NFENCE_ALLOC_H__

#include <linux/types.h>

#include <drm/drm_gem.h>

#include "nfence_segment.h"
#include "nfence_table.h"
#include "nfence_vm.h"

struct drm_file;
struct nfence_device;
struct nfence_file;

/**
 * struct nfence_alloc - an allocation: memory of one segment at a GPU VA
 *
 * Lifetime: the GEM reference count. The file's allocation table holds one
 * reference from create until destroy; every CPU mapping holds one, so the
 * memory outlives a destroy for as long as user space keeps it mapped.
 * The GPU VA goes away at destroy.
 */
struct nfence_alloc {
	/** @base: the GEM object (size page-rounded, mmap offset for Lock2) */
	struct drm_gem_object base;
	/** @vaddr: kernel address of the memory */
	void *vaddr;
	/** @sysmem: @vaddr is a vmalloc'ed buffer of its own */
	bool sysmem;
	/** @cpu_visible: the CPU may map it */
	bool cpu_visible;
	/** @segment_id: the segment the memory came from */
	u32 segment_id;
	/** @node: the range of the segment it takes */
	struct nfence_segment_node node;
	/** @device: the device (a reference), until destroy */
	struct nfence_device *device;
	/**
	 * @obj: its handle, kind and owner (its device) in the file's registry
	 */
	struct nfence_object obj;
	/** @map: the memory in the file's GPU address space */
	struct nfence_vm_mapping map;
	/** @pins: doorbells using it; under the allocation table's lock */
	u32 pins;
};

struct nfence_alloc *nfence_alloc_pin(struct nfence_file *nfile, u32 device,
				      u32 handle);
void nfence_alloc_unpin(struct nfence_file *nfile, struct nfence_alloc *alloc);
void nfence_file_allocs_init(struct nfence_file *nfile);
int nfence_alloc_create_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);
int nfence_alloc_destroy_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);
int nfence_alloc_lock_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);

#endif /* __NFENCE_ALLOC_H__ */
