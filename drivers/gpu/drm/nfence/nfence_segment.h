/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_SEGMENT_H__
#define __NFENCE_SEGMENT_H__

#include <linux/atomic.h>
#include <linux/kref.h>
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
	/** @client_quota: bytes one client may hold, 0 for no limit */
	u64 client_quota;
};

/*
 * NFENCE_SEGMENT_USAGE_SLOTS: segment ids a &struct nfence_segment_usage
 * counts (1..this)
 */
#define NFENCE_SEGMENT_USAGE_SLOTS	2

/**
 * struct nfence_segment_usage - what one client holds of each segment
 *
 * Checked against &nfence_segment.client_quota by
 * nfence_segment_alloc_charged(). The client holds a reference, and so
 * does every node charged to it: memory that outlives its handle (behind a
 * CPU mapping) stays charged until it is freed, after the client is gone
 * if need be.
 */
struct nfence_segment_usage {
	/** @ref: the client's and its charged nodes' references */
	struct kref ref;
	/** @used: bytes held, by segment id - 1 */
	atomic64_t used[NFENCE_SEGMENT_USAGE_SLOTS];
	/**
	 * @fence_values: shared fence values in VRAM ranges of their own
	 * charged to it (nfence_vram_shared_count())
	 */
	atomic_t fence_values;
};

/**
 * struct nfence_segment_node - one allocation in a segment
 */
struct nfence_segment_node {
	/** @node: the drm_mm node; @node.start is the segment offset */
	struct drm_mm_node node;
	/** @seg: the segment the node lives in, NULL when not allocated */
	struct nfence_segment *seg;
	/** @usage: the client it is charged to, or NULL */
	struct nfence_segment_usage *usage;
};

int nfence_segment_init(struct nfence_segment *seg, u32 id, u32 flags,
			u64 size, u64 cpu_visible_size, void *backing);
void nfence_segment_fini(struct nfence_segment *seg);
int nfence_segment_alloc(struct nfence_segment *seg,
			 struct nfence_segment_node *node, u64 size,
			 u64 alignment, u32 flags);
int nfence_segment_alloc_charged(struct nfence_segment *seg,
				 struct nfence_segment_node *node, u64 size,
				 u64 alignment, u32 flags,
				 struct nfence_segment_usage *usage);
void nfence_segment_free(struct nfence_segment_node *node);
struct nfence_segment_usage *nfence_segment_usage_create(void);
void nfence_segment_usage_put(struct nfence_segment_usage *usage);
u64 nfence_segment_usage_read(struct nfence_segment_usage *usage, u32 id);
void *nfence_segment_node_vaddr(const struct nfence_segment_node *node);
void nfence_segment_print(struct nfence_segment *seg, struct drm_printer *p);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
u64 nfence_segment_used(struct nfence_segment *seg);
bool nfence_segment_node_cpu_visible(const struct nfence_segment_node *node);
#endif

#endif /* __NFENCE_SEGMENT_H__ */
