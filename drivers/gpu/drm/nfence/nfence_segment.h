/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_SEGMENT_H__
#define __NFENCE_SEGMENT_H__

#include <linux/mutex.h>
#include <linux/types.h>

#include <drm/drm_mm.h>

struct drm_printer;

/* Allocation placement flags for nfence_segment_alloc(). */
#define NFENCE_SEGMENT_ALLOC_CPU_VISIBLE	BIT(0)
#define NFENCE_SEGMENT_ALLOC_INVISIBLE		BIT(1)

/**
 * struct nfence_segment - one memory segment of the simulated GPU
 *
 * A segment is a range of GPU physical addresses [0, @size). For a local
 * (VRAM) segment, @backing is the kernel mapping of the memory that backs it,
 * and the first @cpu_visible_size bytes are what a CPU could reach through
 * the BAR. For the system segment @backing is NULL: the segment is an
 * aperture and the pages come from the objects placed in it.
 */
struct nfence_segment {
	/** @id: WDDM segment id, 1-based */
	u32 id;
	/** @flags: DRM_NFENCE_SEGMENT_* bits as reported to user space */
	u32 flags;
	/** @size: bytes in the segment */
	u64 size;
	/** @cpu_visible_size: bytes from offset 0 the CPU can map */
	u64 cpu_visible_size;
	/** @backing: kernel address of the memory behind offset 0, or NULL */
	void *backing;
	/** @lock: protects @mm and @used */
	struct mutex lock;
	/** @mm: the range allocator */
	struct drm_mm mm;
	/** @used: bytes currently allocated */
	u64 used;
};

/**
 * struct nfence_segment_node - one allocation in a segment
 */
struct nfence_segment_node {
	/** @node: the drm_mm node; @node.start is the segment offset */
	struct drm_mm_node node;
	/** @seg: the segment the node lives in, NULL when not allocated */
	struct nfence_segment *seg;
};

int nfence_segment_init(struct nfence_segment *seg, u32 id, u32 flags,
			u64 size, u64 cpu_visible_size, void *backing);
void nfence_segment_fini(struct nfence_segment *seg);
int nfence_segment_alloc(struct nfence_segment *seg,
			 struct nfence_segment_node *node, u64 size,
			 u64 alignment, u32 flags);
void nfence_segment_free(struct nfence_segment_node *node);
void *nfence_segment_node_vaddr(const struct nfence_segment_node *node);
void nfence_segment_print(struct nfence_segment *seg, struct drm_printer *p);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
u64 nfence_segment_used(struct nfence_segment *seg);
bool nfence_segment_node_cpu_visible(const struct nfence_segment_node *node);
#endif

#endif /* __NFENCE_SEGMENT_H__ */
