// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include <drm/drm_print.h>

#include "nfence_segment.h"

/**
 * DOC: memory segments
 *
 * The simulated GPU has two segments, as a discrete WDDM adapter does:
 * a system memory (aperture) segment and a local (VRAM) segment. The local
 * segment is "memory-backed": one vmalloc'ed range stands for the whole of
 * VRAM, and what the simulated engines read and write at a VRAM address is
 * that memory. Only the first cpu_visible_size bytes of it are CPU-visible;
 * objects that must never be reached from the CPU (INTRA_GPU fences, the
 * MonitoredValue of an optimized DEFAULT fence) ask to be placed above it.
 *
 * Space in a segment is managed with &struct drm_mm, under the segment's
 * own lock. The allocator knows nothing about what the ranges hold.
 *
 * Per-client quotas: the allocations a client (an open file) creates, and
 * the fence values placed in VRAM for the fences it creates or opens, are
 * charged to its &struct nfence_segment_usage, and one that would take the
 * client past the segment's client_quota (module parameters
 * client_vram_mb and client_sysmem_mb, 0 for no limit) fails with -ENOSPC,
 * as if the segment were full: a VRAM request that allows demotion then
 * lands in system memory, as an optimized DEFAULT fence's MonitoredValue
 * does. Fence values in system memory pages are kernel memory, charged to
 * the memory cgroup (GFP_KERNEL_ACCOUNT), not to the aperture quota.
 */

/**
 * nfence_segment_init - set up a segment
 * @seg: segment to initialize
 * @id: WDDM segment id (1-based)
 * @flags: DRM_NFENCE_SEGMENT_* bits
 * @size: bytes in the segment, non-zero and page-aligned
 * @cpu_visible_size: CPU-visible bytes from offset 0, at most @size and
 *	page-aligned
 * @backing: kernel address of the memory behind the segment, or NULL for an
 *	aperture segment
 *
 * Return: 0, or -EINVAL on bad geometry.
 */
int nfence_segment_init(struct nfence_segment *seg, u32 id, u32 flags,
			u64 size, u64 cpu_visible_size, void *backing)
{
	if (!id || !size || !PAGE_ALIGNED(size) ||
	    cpu_visible_size > size || !PAGE_ALIGNED(cpu_visible_size))
		return -EINVAL;

	seg->id = id;
	seg->flags = flags;
	seg->size = size;
	seg->cpu_visible_size = cpu_visible_size;
	seg->backing = backing;
	seg->used = 0;
	mutex_init(&seg->lock);
	drm_mm_init(&seg->mm, 0, size);
	return 0;
}

/**
 * nfence_segment_fini - tear down a segment
 * @seg: segment set up with nfence_segment_init()
 *
 * Every node must have been freed; drm_mm warns otherwise.
 */
void nfence_segment_fini(struct nfence_segment *seg)
{
	drm_mm_takedown(&seg->mm);
	mutex_destroy(&seg->lock);
}

static int nfence_segment_insert(struct nfence_segment *seg,
				 struct nfence_segment_node *node, u64 size,
				 u64 alignment, u64 start, u64 end,
				 enum drm_mm_insert_mode mode)
{
	if (start >= end || size > end - start)
		return -ENOSPC;
	return drm_mm_insert_node_in_range(&seg->mm, &node->node, size,
					   alignment, 0, start, end, mode);
}

/**
 * nfence_segment_alloc - allocate a range of a segment
 * @seg: the segment
 * @node: zeroed node to fill in
 * @size: bytes, non-zero
 * @alignment: 0, or a power of two
 * @flags: NFENCE_SEGMENT_ALLOC_CPU_VISIBLE to require a range the CPU can
 *	reach, or NFENCE_SEGMENT_ALLOC_INVISIBLE to prefer one it cannot (falling
 *	back to the visible part when the invisible part is full); not both.
 *
 * Return: 0, -EINVAL on bad arguments, -ENOSPC when no range fits.
 */
int nfence_segment_alloc(struct nfence_segment *seg,
			 struct nfence_segment_node *node, u64 size,
			 u64 alignment, u32 flags)
{
	const u32 valid = NFENCE_SEGMENT_ALLOC_CPU_VISIBLE |
			  NFENCE_SEGMENT_ALLOC_INVISIBLE;
	int ret;

	if (!size || (flags & ~valid) || (flags & valid) == valid ||
	    (alignment && !is_power_of_2(alignment)))
		return -EINVAL;
	if (size > seg->size)
		return -ENOSPC;

	mutex_lock(&seg->lock);
	if (flags & NFENCE_SEGMENT_ALLOC_CPU_VISIBLE) {
		ret = nfence_segment_insert(seg, node, size, alignment, 0,
					    seg->cpu_visible_size,
					    DRM_MM_INSERT_LOW);
	} else if (flags & NFENCE_SEGMENT_ALLOC_INVISIBLE) {
		ret = nfence_segment_insert(seg, node, size, alignment,
					    seg->cpu_visible_size, seg->size,
					    DRM_MM_INSERT_HIGH);
		if (ret == -ENOSPC)
			ret = nfence_segment_insert(seg, node, size, alignment,
						    0, seg->size,
						    DRM_MM_INSERT_HIGH);
	} else {
		ret = nfence_segment_insert(seg, node, size, alignment, 0,
					    seg->size, DRM_MM_INSERT_BEST);
	}
	if (!ret) {
		node->seg = seg;
		seg->used += size;
	}
	mutex_unlock(&seg->lock);
	return ret;
}

/* The slot of @usage that counts segment @id. */
static atomic64_t *nfence_segment_usage_slot(struct nfence_segment_usage *usage,
					     u32 id)
{
	if (WARN_ON(!id || id > NFENCE_SEGMENT_USAGE_SLOTS))
		return NULL;
	return &usage->used[id - 1];
}

/**
 * nfence_segment_alloc_charged - nfence_segment_alloc() for a client
 * @seg: the segment
 * @node: zeroed node to fill in
 * @size: bytes, non-zero
 * @alignment: as for nfence_segment_alloc()
 * @flags: as for nfence_segment_alloc()
 * @usage: the client to charge; nfence_segment_free() uncharges
 *
 * Return: 0, -EINVAL on bad arguments, -ENOSPC when no range fits or the
 * client would hold more than the segment's client quota.
 */
int nfence_segment_alloc_charged(struct nfence_segment *seg,
				 struct nfence_segment_node *node, u64 size,
				 u64 alignment, u32 flags,
				 struct nfence_segment_usage *usage)
{
	atomic64_t *used = nfence_segment_usage_slot(usage, seg->id);
	u64 quota = READ_ONCE(seg->client_quota);
	int ret;

	if (!used)
		return -EINVAL;
	if ((u64)atomic64_add_return(size, used) > quota && quota) {
		atomic64_sub(size, used);
		return -ENOSPC;
	}
	ret = nfence_segment_alloc(seg, node, size, alignment, flags);
	if (ret) {
		atomic64_sub(size, used);
		return ret;
	}
	kref_get(&usage->ref);
	node->usage = usage;
	return 0;
}

/**
 * nfence_segment_free - free a range allocated with nfence_segment_alloc()
 * @node: the node; freeing a node that is not allocated does nothing
 *
 * A node charged to a client (nfence_segment_alloc_charged()) is uncharged.
 */
void nfence_segment_free(struct nfence_segment_node *node)
{
	struct nfence_segment *seg = node->seg;
	u64 size;

	if (!seg)
		return;

	size = node->node.size;
	mutex_lock(&seg->lock);
	seg->used -= size;
	drm_mm_remove_node(&node->node);
	mutex_unlock(&seg->lock);
	node->seg = NULL;
	if (node->usage) {
		atomic64_sub(size, nfence_segment_usage_slot(node->usage,
							     seg->id));
		nfence_segment_usage_put(node->usage);
		node->usage = NULL;
	}
}

/**
 * nfence_segment_usage_create - a new client's segment usage, all zero
 *
 * Return: the usage with one reference, or NULL without memory.
 */
struct nfence_segment_usage *nfence_segment_usage_create(void)
{
	struct nfence_segment_usage *usage;

	usage = kzalloc(sizeof(*usage), GFP_KERNEL_ACCOUNT);
	if (usage)
		kref_init(&usage->ref);
	return usage;
}

static void nfence_segment_usage_release(struct kref *ref)
{
	kfree(container_of(ref, struct nfence_segment_usage, ref));
}

/**
 * nfence_segment_usage_put - drop a reference to a client's usage
 * @usage: the usage, or NULL
 */
void nfence_segment_usage_put(struct nfence_segment_usage *usage)
{
	if (usage)
		kref_put(&usage->ref, nfence_segment_usage_release);
}

/**
 * nfence_segment_usage_read - bytes a client holds of a segment
 * @usage: the client's usage
 * @id: the segment id
 *
 * Return: the bytes charged.
 */
u64 nfence_segment_usage_read(struct nfence_segment_usage *usage, u32 id)
{
	atomic64_t *used = nfence_segment_usage_slot(usage, id);

	return used ? atomic64_read(used) : 0;
}

/**
 * nfence_segment_node_vaddr - kernel address of a node's memory
 * @node: an allocated node
 *
 * This is how the simulated GPU reaches VRAM: its engines see the same bytes.
 *
 * Return: the kernel address, or NULL for a node in an aperture segment.
 */
void *nfence_segment_node_vaddr(const struct nfence_segment_node *node)
{
	if (!node->seg->backing)
		return NULL;
	return node->seg->backing + node->node.start;
}

/**
 * nfence_segment_print - describe a segment for debugfs
 * @seg: the segment
 * @p: where to print
 */
void nfence_segment_print(struct nfence_segment *seg, struct drm_printer *p)
{
	mutex_lock(&seg->lock);
	drm_printf(p, "id: %u\n", seg->id);
	drm_printf(p, "flags: 0x%x\n", seg->flags);
	drm_printf(p, "size: %llu\n", seg->size);
	drm_printf(p, "cpu_visible_size: %llu\n", seg->cpu_visible_size);
	drm_printf(p, "used: %llu\n", seg->used);
	mutex_unlock(&seg->lock);
}

/* Only KUnit looks at an address space or a segment this way. */
#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)

/**
 * nfence_segment_used - bytes allocated in a segment
 * @seg: the segment
 *
 * Return: the number of bytes covered by live nodes.
 */
u64 nfence_segment_used(struct nfence_segment *seg)
{
	u64 used;

	mutex_lock(&seg->lock);
	used = seg->used;
	mutex_unlock(&seg->lock);
	return used;
}

/**
 * nfence_segment_node_cpu_visible - whether the CPU can reach a whole node
 * @node: an allocated node
 *
 * Return: true if the node lies entirely in the CPU-visible part.
 */
bool nfence_segment_node_cpu_visible(const struct nfence_segment_node *node)
{
	u64 end;

	if (check_add_overflow(node->node.start, node->node.size, &end))
		return false;
	return end <= node->seg->cpu_visible_size;
}

#endif
