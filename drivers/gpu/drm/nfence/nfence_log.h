/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_LOG_H
#define NFENCE_LOG_H

#include <linux/types.h>

#include <drm/nfence_drm.h>

#include "nfence_vm.h"

/*
 * NFENCE_LOG_ENTRIES_ALL: entries of a log buffer while the adapter's
 * logging level is %DRM_NFENCE_LOGGING_LEVEL_ALL (16 KiB), against
 * %DRM_NFENCE_LOG_ENTRIES (4 KiB) at the default level
 */
#define NFENCE_LOG_ENTRIES_ALL	340

/**
 * enum nfence_log_kind - a log's place in a queue's pair of logs
 * @NFENCE_LOG_WAITS: the wait log (%DRM_NFENCE_LOG_TYPE_WAITS)
 * @NFENCE_LOG_SIGNALS: the signal log (%DRM_NFENCE_LOG_TYPE_SIGNALS)
 * @NFENCE_NUM_LOGS: logs per queue
 */
enum nfence_log_kind {
	NFENCE_LOG_WAITS,
	NFENCE_LOG_SIGNALS,
	NFENCE_NUM_LOGS
};

/* The uapi log type (the Windows DXGK_NATIVE_FENCE_LOG_TYPE) of a kind. */
static inline u32 nfence_log_type(enum nfence_log_kind kind)
{
	return kind == NFENCE_LOG_WAITS ? DRM_NFENCE_LOG_TYPE_WAITS :
					  DRM_NFENCE_LOG_TYPE_SIGNALS;
}

/**
 * struct nfence_log_buffer - the memory of a native fence log
 *
 * A &struct drm_nfence_log_header, then @num_entries &struct
 * drm_nfence_log_entry, mapped read-only into the queue's GPU address
 * space. Lifetime: its log's, until nfence_log_replace() hands it back.
 */
struct nfence_log_buffer {
	/** @vaddr: kernel address of the buffer, @size bytes */
	void *vaddr;
	/** @size: bytes, a whole number of pages */
	size_t size;
	/** @num_entries: entries after the header */
	u32 num_entries;
	/**
	 * @wraps_high: times the header's 32-bit WraparoundCount went back
	 * to 0: the high half of the wraps the buffer has counted. Written
	 * by nfence_log_append() under the writer's lock.
	 */
	u32 wraps_high;
	/** @map: its read-only mapping in the queue's GPU address space */
	struct nfence_vm_mapping map;
};

/**
 * struct nfence_log - one native fence log of a hardware queue
 *
 * The GPU writes @buf under &nfence_cmp.lock, which readers take to copy
 * it and under which nfence_log_replace() gives the log a new buffer.
 */
struct nfence_log {
	/** @buf: the buffer the GPU writes now */
	struct nfence_log_buffer *buf;
	/** @base: entries written to the log's earlier buffers */
	u64 base;
};

size_t nfence_log_size(u32 num_entries);
int nfence_log_init(struct nfence_log *log, u32 type, u32 num_entries);
void nfence_log_fini(struct nfence_log *log);
int nfence_log_map(struct nfence_log *log, struct nfence_vm *vm);
void nfence_log_unmap(struct nfence_log *log);
u64 nfence_log_gpu_va(const struct nfence_log *log);
struct nfence_log_buffer *nfence_log_buffer_alloc(u32 type, u32 num_entries);
int nfence_log_buffer_map(struct nfence_log_buffer *buf, struct nfence_vm *vm);
void nfence_log_buffer_free(struct nfence_log_buffer *buf);
struct nfence_log_buffer *nfence_log_replace(struct nfence_log *log,
					     struct nfence_log_buffer *buf);
void nfence_log_append(struct nfence_log *log,
		       const struct drm_nfence_log_entry *entry);
u64 nfence_log_position(const struct nfence_log *log);
void nfence_log_copy(struct nfence_log *copy, const struct nfence_log *log);
int nfence_log_read(const struct nfence_log *log, u64 *cursor,
		    struct drm_nfence_log_entry *out, u32 *count, u32 *status);

#endif /* NFENCE_LOG_H */
