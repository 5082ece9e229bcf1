// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nfence_log.h"

/**
 * DOC: native fence log buffers
 *
 * Each hardware queue of an adapter with native fences has a wait log and
 * a signal log (the uapi's "native fence log buffers" has the layout).
 * This file is the log itself, with no driver object: the buffer, its
 * read-only GPU mapping, the GPU's append (entry, then the index word with
 * its wraparound count, as the seed orders them) and the reader's view of
 * a copy: which entries a cursor has not seen and whether some were
 * overwritten before it saw them. The queue owns its logs
 * (nfence_hwqueue.c); the engine appends under &nfence_cmp.lock, and a
 * reader copies the buffer under the same lock, then reads the copy.
 */

static_assert(sizeof(struct drm_nfence_log_header) == 40);
static_assert(sizeof(struct drm_nfence_log_entry) == 48);
static_assert(sizeof(struct drm_nfence_log_header) +
	      DRM_NFENCE_LOG_ENTRIES * sizeof(struct drm_nfence_log_entry) <=
	      NFENCE_LOG_SIZE);

static struct drm_nfence_log_header *nfence_log_header(const void *vaddr)
{
	return (struct drm_nfence_log_header *)vaddr;
}

static struct drm_nfence_log_entry *nfence_log_entries(const void *vaddr)
{
	return (struct drm_nfence_log_entry *)
		((char *)vaddr + sizeof(struct drm_nfence_log_header));
}

/**
 * nfence_log_init - allocate an empty log buffer
 * @log: the log, zeroed
 * @type: DRM_NFENCE_LOG_TYPE_*
 *
 * Return: 0 or -ENOMEM (charged to the caller's memory cgroup).
 */
int nfence_log_init(struct nfence_log *log, u32 type)
{
	struct drm_nfence_log_header *h;

	log->vaddr = kzalloc(NFENCE_LOG_SIZE, GFP_KERNEL_ACCOUNT);
	if (!log->vaddr)
		return -ENOMEM;
	h = nfence_log_header(log->vaddr);
	h->type = type;
	h->num_entries = DRM_NFENCE_LOG_ENTRIES;
	return 0;
}

/**
 * nfence_log_fini - free a log buffer
 * @log: the log, unmapped (or never initialised: nothing happens)
 */
void nfence_log_fini(struct nfence_log *log)
{
	kfree(log->vaddr);
	log->vaddr = NULL;
}

/**
 * nfence_log_map - map a log buffer read-only into a GPU address space
 * @log: the log
 * @vm: the queue's address space
 *
 * Its GPU VA is then @log->map.node.start.
 *
 * Return: 0, or -ENOSPC when the address space is full.
 */
int nfence_log_map(struct nfence_log *log, struct nfence_vm *vm)
{
	return nfence_vm_map(vm, &log->map, log->vaddr, NFENCE_LOG_SIZE,
			     NFENCE_VM_READ_ONLY);
}

/**
 * nfence_log_unmap - remove a log buffer's GPU mapping
 * @log: the log; nothing happens if it is not mapped
 */
void nfence_log_unmap(struct nfence_log *log)
{
	nfence_vm_unmap(&log->map);
}

/**
 * nfence_log_append - the GPU logs a fence operation
 * @log: the log
 * @entry: what to log
 *
 * Writes the entry at FirstFreeEntryIndex, then, after a barrier, advances
 * the index (to 0 past the last entry, counting WraparoundCount) in one
 * 64-bit store, so that whoever sees the new index sees the entry.
 *
 * Context: the writer's lock held (&nfence_cmp.lock for the engines).
 */
void nfence_log_append(struct nfence_log *log,
		       const struct drm_nfence_log_entry *entry)
{
	struct drm_nfence_log_header *h = nfence_log_header(log->vaddr);
	u32 index = h->first_free_entry_index, wraps = h->wraparound_count;
	u64 word;

	nfence_log_entries(log->vaddr)[index] = *entry;
	if (++index == DRM_NFENCE_LOG_ENTRIES) {
		index = 0;
		wraps++;
	}
	word = (u64)wraps << 32 | index;
	/* The entry before the index that publishes it. */
	smp_wmb();
	WRITE_ONCE(*(u64 *)h, word);
}

/* The entries a log has had written since it was made. */
static u64 nfence_log_position(const struct drm_nfence_log_header *h)
{
	return (u64)h->wraparound_count * DRM_NFENCE_LOG_ENTRIES +
	       h->first_free_entry_index;
}

/**
 * nfence_log_read - read the entries of a log copy past a cursor
 * @snapshot: a copy of a whole log buffer (%NFENCE_LOG_SIZE bytes)
 * @cursor: in: entries the reader has seen (see &struct
 *	drm_nfence_log_read); out: past the last entry copied
 * @out: room for *@count entries
 * @count: in: entries @out holds (0 reads nothing); out: entries copied
 * @status: out: %DRM_NFENCE_LOG_READ_OVERRUN if entries past the cursor
 *	were overwritten (the copy then starts at the oldest one left)
 *
 * A header out of range (an index past the last entry: not something the
 * engines write) counts as an overrun of everything, and nothing is
 * copied.
 *
 * Return: 0, or -EINVAL if @cursor is ahead of the log (nothing changed).
 */
int nfence_log_read(const void *snapshot, u64 *cursor,
		    struct drm_nfence_log_entry *out, u32 *count, u32 *status)
{
	const struct drm_nfence_log_header *h = nfence_log_header(snapshot);
	const struct drm_nfence_log_entry *e = nfence_log_entries(snapshot);
	u64 end = nfence_log_position(h), from = *cursor;
	u32 n, i;

	if (h->first_free_entry_index >= DRM_NFENCE_LOG_ENTRIES) {
		*status = DRM_NFENCE_LOG_READ_OVERRUN;
		*cursor = end;
		*count = 0;
		return 0;
	}
	if (from > end)
		return -EINVAL;
	*status = 0;
	if (end - from > DRM_NFENCE_LOG_ENTRIES) {
		*status = DRM_NFENCE_LOG_READ_OVERRUN;
		from = end - DRM_NFENCE_LOG_ENTRIES;
	}
	n = min_t(u64, end - from, *count);
	for (i = 0; i < n; i++)
		out[i] = e[(from + i) % DRM_NFENCE_LOG_ENTRIES];
	*cursor = from + n;
	*count = n;
	return 0;
}
