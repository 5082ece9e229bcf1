/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_HWQUEUE_H__
#define __NFENCE_HWQUEUE_H__

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "nfence_cmp_types.h"
#include "nfence_log.h"
#include "nfence_table.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_adapter;
struct nfence_context;
struct nfence_device;
struct nfence_fence;
struct nfence_file;

/**
 * struct nfence_hwqueue - a hardware queue (D3DKMTCreateHwQueue)
 *
 * Lifetime: kref-counted; the file's queue table holds one reference, and
 * the CMP's runlist another until the queue is destroyed. Everything marked
 * "CMP" is under &nfence_cmp.lock.
 */
struct nfence_hwqueue {
	/** @ref: reference count */
	struct kref ref;
	/**
	 * @hw: what the CMP knows of the queue: its engine, address space
	 * (alive while the queue is listed), progress fence (a reference),
	 * pending submissions and scheduling state
	 */
	struct nfence_cmp_queue hw;
	/** @ctx: the context (a reference) */
	struct nfence_context *ctx;
	/**
	 * @obj: its handle, kind and owner (its context) in the file's registry
	 */
	struct nfence_object obj;
	/** @flags: DRM_NFENCE_HWQUEUE_* */
	u32 flags;
	/** @progress_handle: the progress fence's local handle */
	u32 progress_handle;
	/** @last_queued: CMP: progress value of the last submission */
	u64 last_queued;
	/** @room: submitters wait here for @hw.num_pending to drop */
	wait_queue_head_t room;
	/** @ctx_link: CMP: entry in &nfence_context.queues */
	struct list_head ctx_link;
	/** @dead: CMP: destroyed, off the runlist */
	bool dead;
	/**
	 * @logs: native fence log buffers, by &enum nfence_log_kind, on an
	 * adapter with native fences (then @hw.logs points here): mapped
	 * while the queue is in its file, freed with the queue
	 */
	struct nfence_log logs[NFENCE_NUM_LOGS];
	/**
	 * @irq_cursor: CMP: how far the optimized interrupt has read the
	 * signal log (see nfence_interrupt_log())
	 */
	u64 irq_cursor;
};

static inline struct nfence_hwqueue *
to_nfence_hwqueue(struct nfence_cmp_queue *hw)
{
	return container_of(hw, struct nfence_hwqueue, hw);
}

void nfence_hwqueue_put(struct nfence_hwqueue *q);
struct nfence_hwqueue *nfence_hwqueue_lookup(struct nfence_file *nfile,
					     u32 device, u32 handle);
struct nfence_cmp *nfence_hwqueue_cmp(struct nfence_hwqueue *q);
void nfence_hwqueue_stop_locked(struct nfence_hwqueue *q, u32 state,
				struct list_head *dropped);
void nfence_hwqueue_context_fault_locked(struct nfence_context *ctx, u64 va,
					 u32 reason, struct list_head *dropped);

void nfence_file_sched_init(struct nfence_file *nfile);
int nfence_hwqueue_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int nfence_hwqueue_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);

#endif /* __NFENCE_HWQUEUE_H__ */
