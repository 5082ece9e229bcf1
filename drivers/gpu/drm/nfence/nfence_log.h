/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_LOG_H
#define NFENCE_LOG_H

#include <linux/types.h>

#include <drm/nfence_drm.h>

#include "nfence_vm.h"

/* NFENCE_LOG_SIZE: bytes of one log buffer: header and entries */
#define NFENCE_LOG_SIZE		PAGE_SIZE

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
 * struct nfence_log - one native fence log buffer of a hardware queue
 *
 * @vaddr holds a &struct drm_nfence_log_header and
 * %DRM_NFENCE_LOG_ENTRIES &struct drm_nfence_log_entry; the GPU writes it
 * under &nfence_cmp.lock, which readers take to copy it.
 */
struct nfence_log {
	/** @vaddr: kernel address of the buffer, %NFENCE_LOG_SIZE bytes */
	void *vaddr;
	/** @map: its read-only mapping in the queue's GPU address space */
	struct nfence_vm_mapping map;
};

int nfence_log_init(struct nfence_log *log, u32 type);
void nfence_log_fini(struct nfence_log *log);
int nfence_log_map(struct nfence_log *log, struct nfence_vm *vm);
void nfence_log_unmap(struct nfence_log *log);
void nfence_log_append(struct nfence_log *log,
		       const struct drm_nfence_log_entry *entry);
int nfence_log_read(const void *snapshot, u64 *cursor,
		    struct drm_nfence_log_entry *out, u32 *count, u32 *status);

#endif /* NFENCE_LOG_H */
