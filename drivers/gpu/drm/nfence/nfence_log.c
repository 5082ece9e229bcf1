// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/mm.h>
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
 * its wraparound count, as WDDM orders them) and the reader's view of
 * a copy: which entries a cursor has not seen and whether some were
 * overwritten before it saw them. A log may get a new buffer (a larger one
 * while the adapter's logging level is ALL, see nfence_logging.c): its
 * position, the count of entries ever written that cursors are measured
 * in, carries on across buffers. The queue owns its logs
 * (nfence_hwqueue.c); the engine appends under &nfence_cmp.lock, and a
 * reader copies the buffer under the same lock, then reads the copy.
 */

static_assert(sizeof(struct drm_nfence_log_header) == 40);
static_assert(sizeof(struct drm_nfence_log_entry) == 48);
/* The default geometry fills one 4 KiB page, as WDDM's buffers do. */
static_assert(sizeof(struct drm_nfence_log_header) +
	      DRM_NFENCE_LOG_ENTRIES * sizeof(struct drm_nfence_log_entry) <=
	      4096);
static_assert(sizeof(struct drm_nfence_log_header) +
	      (DRM_NFENCE_LOG_ENTRIES + 1) *
	      sizeof(struct drm_nfence_log_entry) > 4096);
static_assert(sizeof(struct drm_nfence_log_header) +
	      NFENCE_LOG_ENTRIES_ALL * sizeof(struct drm_nfence_log_entry) <=
	      16384);

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
 * nfence_log_size - bytes of a log buffer
 * @num_entries: its entries
 *
 * Return: the header and the entries, rounded up to whole pages.
 */
size_t nfence_log_size(u32 num_entries)
{
	return PAGE_ALIGN(sizeof(struct drm_nfence_log_header) +
			  (size_t)num_entries *
			  sizeof(struct drm_nfence_log_entry));
}

/**
 * nfence_log_buffer_alloc - allocate an empty log buffer
 * @type: DRM_NFENCE_LOG_TYPE_*
 * @num_entries: its entries, at most %NFENCE_LOG_ENTRIES_ALL
 *
 * Return: the buffer, not mapped, or NULL without memory (charged to the
 * caller's memory cgroup).
 */
struct nfence_log_buffer *nfence_log_buffer_alloc(u32 type, u32 num_entries)
{
	struct nfence_log_buffer *buf;
	struct drm_nfence_log_header *h;

	if (WARN_ON(!num_entries || num_entries > NFENCE_LOG_ENTRIES_ALL))
		return NULL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return NULL;
	buf->size = nfence_log_size(num_entries);
	buf->num_entries = num_entries;
	buf->vaddr = kzalloc(buf->size, GFP_KERNEL_ACCOUNT);
	if (!buf->vaddr) {
		kfree(buf);
		return NULL;
	}
	h = nfence_log_header(buf->vaddr);
	h->type = type;
	h->num_entries = num_entries;
	return buf;
}

/**
 * nfence_log_buffer_map - map a log buffer read-only into a GPU address space
 * @buf: the buffer
 * @vm: the queue's address space
 *
 * Its GPU VA is then @buf->map.start.
 *
 * Return: 0, -ENOSPC when the address space is full, or -ENOMEM.
 */
int nfence_log_buffer_map(struct nfence_log_buffer *buf, struct nfence_vm *vm)
{
	return nfence_vm_map(vm, &buf->map, buf->vaddr, buf->size,
			     NFENCE_VM_READ_ONLY);
}

/**
 * nfence_log_buffer_free - unmap and free a log buffer
 * @buf: the buffer, mapped or not; NULL does nothing
 */
void nfence_log_buffer_free(struct nfence_log_buffer *buf)
{
	if (!buf)
		return;
	nfence_vm_unmap(&buf->map);
	kfree(buf->vaddr);
	kfree(buf);
}

/**
 * nfence_log_init - give a log its first, empty buffer
 * @log: the log, zeroed
 * @type: DRM_NFENCE_LOG_TYPE_*
 * @num_entries: entries of the buffer
 *
 * Return: 0 or -ENOMEM.
 */
int nfence_log_init(struct nfence_log *log, u32 type, u32 num_entries)
{
	log->buf = nfence_log_buffer_alloc(type, num_entries);
	log->base = 0;
	return log->buf ? 0 : -ENOMEM;
}

/**
 * nfence_log_fini - free a log's buffer
 * @log: the log, unmapped (or never initialised: nothing happens)
 */
void nfence_log_fini(struct nfence_log *log)
{
	nfence_log_buffer_free(log->buf);
	log->buf = NULL;
}

/**
 * nfence_log_map - map a log's buffer read-only into a GPU address space
 * @log: the log
 * @vm: the queue's address space
 *
 * Return: 0, -ENOSPC when the address space is full, or -ENOMEM.
 */
int nfence_log_map(struct nfence_log *log, struct nfence_vm *vm)
{
	return nfence_log_buffer_map(log->buf, vm);
}

/**
 * nfence_log_unmap - remove the GPU mapping of a log's buffer
 * @log: the log; nothing happens if it has no buffer or it is not mapped
 */
void nfence_log_unmap(struct nfence_log *log)
{
	if (log->buf)
		nfence_vm_unmap(&log->buf->map);
}

/**
 * nfence_log_gpu_va - where the GPU finds a log
 * @log: the log, mapped
 *
 * Context: &nfence_cmp.lock held, or the queue's file's
 * &nfence_file.sched_lock (a logging level change replaces the buffers
 * holding both), or the log not yet visible to anyone.
 * Return: the GPU VA of its buffer.
 */
u64 nfence_log_gpu_va(const struct nfence_log *log)
{
	return log->buf->map.start;
}

/*
 * The entries written to @buf since it was made: its WraparoundCount
 * whole buffers (with the wraps past 32 bits) and FirstFreeEntryIndex.
 */
static u64 nfence_log_buffer_position(const struct nfence_log_buffer *buf)
{
	const struct drm_nfence_log_header *h = nfence_log_header(buf->vaddr);
	u64 wraps = (u64)buf->wraps_high << 32 | h->wraparound_count;

	return wraps * buf->num_entries + h->first_free_entry_index;
}

/**
 * nfence_log_position - the entries a log has had written
 * @log: the log
 *
 * Counted since the queue was made, across its buffers: what a reader's
 * cursor reaches when it has seen everything.
 *
 * Context: the writer's lock held (&nfence_cmp.lock).
 * Return: the count.
 */
u64 nfence_log_position(const struct nfence_log *log)
{
	return log->base + nfence_log_buffer_position(log->buf);
}

/**
 * nfence_log_replace - give a log a new buffer (SetNativeFenceLogBuffer)
 * @log: the log
 * @buf: its new buffer, empty and mapped
 *
 * WDDM's "Dxgkrnl may destroy and recreate the log buffers": the GPU
 * writes @buf from now on, from its first entry. Entries of the old buffer
 * count in the log's position, so a reader's cursor stays valid; those it
 * had not read are gone (an overrun for it).
 *
 * Context: the writer's lock held (&nfence_cmp.lock).
 * Return: the old buffer, for nfence_log_buffer_free() once the lock is
 * dropped.
 */
struct nfence_log_buffer *nfence_log_replace(struct nfence_log *log,
					     struct nfence_log_buffer *buf)
{
	struct nfence_log_buffer *old = log->buf;

	log->base += nfence_log_buffer_position(old);
	log->buf = buf;
	return old;
}

/**
 * nfence_log_append - the GPU logs a fence operation
 * @log: the log
 * @entry: what to log
 *
 * Writes the entry at FirstFreeEntryIndex, then, after a barrier, advances
 * the index (to 0 past the last entry, counting WraparoundCount) in one
 * 64-bit store, so that whoever sees the new index sees the entry. The
 * 32-bit WraparoundCount goes back to 0 after 2^32 wraps; the log's
 * position goes on (&nfence_log_buffer.wraps_high), so that cursors stay
 * valid.
 *
 * Context: the writer's lock held (&nfence_cmp.lock for the engines).
 */
void nfence_log_append(struct nfence_log *log,
		       const struct drm_nfence_log_entry *entry)
{
	struct nfence_log_buffer *buf = log->buf;
	struct drm_nfence_log_header *h = nfence_log_header(buf->vaddr);
	u32 index = h->first_free_entry_index, wraps = h->wraparound_count;
	/* The header's first two fields, in their memory order. */
	union {
		struct {
			u32 index;
			u32 wraps;
		} f;
		u64 word;
	} next;

	BUILD_BUG_ON(offsetof(struct drm_nfence_log_header,
			      first_free_entry_index) != 0 ||
		     offsetof(struct drm_nfence_log_header,
			      wraparound_count) != sizeof(u32));
	/* Only the engines write the header, and only in range. */
	if (WARN_ON_ONCE(index >= buf->num_entries))
		return;
	nfence_log_entries(buf->vaddr)[index] = *entry;
	if (++index == buf->num_entries) {
		index = 0;
		if (++wraps == 0)
			buf->wraps_high++;
	}
	next.f.index = index;
	next.f.wraps = wraps;
	/* The entry before the index that publishes it. */
	smp_wmb();
	WRITE_ONCE(*(u64 *)h, next.word);
}

/**
 * nfence_log_copy - copy a log, for reading it without the writer's lock
 * @copy: the copy: its @buf has a @vaddr of at least
 *	nfence_log_size(%NFENCE_LOG_ENTRIES_ALL) bytes
 * @log: the log
 *
 * Context: the writer's lock held (&nfence_cmp.lock).
 */
void nfence_log_copy(struct nfence_log *copy, const struct nfence_log *log)
{
	memcpy(copy->buf->vaddr, log->buf->vaddr, log->buf->size);
	copy->buf->size = log->buf->size;
	copy->buf->num_entries = log->buf->num_entries;
	copy->buf->wraps_high = log->buf->wraps_high;
	copy->base = log->base;
}

/**
 * nfence_log_read - read the entries of a log past a cursor
 * @log: the log: a copy (nfence_log_copy()), or the log under the
 *	writer's lock
 * @cursor: in: entries the reader has seen (see &struct
 *	drm_nfence_log_read); out: past the last entry copied
 * @out: room for *@count entries
 * @count: in: entries @out holds (0 copies nothing, and @cursor comes back
 *	where a read would start: past an overrun, at the oldest entry left);
 *	out: entries copied
 * @status: out: %DRM_NFENCE_LOG_READ_OVERRUN if entries past the cursor
 *	were overwritten, or were in a buffer the log has replaced since
 *	(the copy then starts at the oldest one left)
 *
 * A header out of range (an index past the last entry: not something the
 * engines write) counts as an overrun of everything, and nothing is
 * copied.
 *
 * Return: 0, or -EINVAL if @cursor is ahead of the log (nothing changed).
 */
int nfence_log_read(const struct nfence_log *log, u64 *cursor,
		    struct drm_nfence_log_entry *out, u32 *count, u32 *status)
{
	const struct nfence_log_buffer *buf = log->buf;
	const struct drm_nfence_log_header *h = nfence_log_header(buf->vaddr);
	const struct drm_nfence_log_entry *e = nfence_log_entries(buf->vaddr);
	u64 end = nfence_log_position(log), from = *cursor, oldest;
	u32 n, i;

	if (h->first_free_entry_index >= buf->num_entries) {
		*status = DRM_NFENCE_LOG_READ_OVERRUN;
		*cursor = end;
		*count = 0;
		return 0;
	}
	if (from > end)
		return -EINVAL;
	*status = 0;
	oldest = end - min_t(u64, end - log->base, buf->num_entries);
	if (from < oldest) {
		*status = DRM_NFENCE_LOG_READ_OVERRUN;
		from = oldest;
	}
	n = min_t(u64, end - from, *count);
	for (i = 0; i < n; i++)
		out[i] = e[(from - log->base + i) % buf->num_entries];
	*cursor = from + n;
	*count = n;
	return 0;
}
