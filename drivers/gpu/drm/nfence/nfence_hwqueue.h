/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_HWQUEUE_H__
#define __NFENCE_HWQUEUE_H__

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "nfence_cmp.h"
#include "nfence_log.h"
#include "nfence_table.h"
#include "nfence_waitlist.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_adapter;
struct nfence_context;
struct nfence_device;
struct nfence_fence;
struct nfence_file;

struct nfence_submission;

/**
 * struct nfence_sub_fence - one fence of a legacy submission
 */
struct nfence_sub_fence {
	/** @waiter: the CPU waiter of a legacy wait */
	struct nfence_waiter waiter;
	/** @fence: the fence (a reference) */
	struct nfence_fence *fence;
	/** @value: value to wait for or signal */
	u64 value;
	/** @sub: the submission */
	struct nfence_submission *sub;
};

/**
 * struct nfence_submission - one entry of a hardware queue
 *
 * Owned by the queue's pending list; freed by whoever takes it off.
 */
struct nfence_submission {
	/** @entry: what the CMP knows of it; @entry.kind is its kind */
	struct nfence_cmp_entry entry;
	/** @started: legacy: the CMP reached it (waiters or worker started) */
	bool started;
	/** @remaining: legacy: fences not yet reached or signaled */
	atomic_t remaining;
	/** @work: SIGNAL: the worker that signals from the CPU */
	struct work_struct work;
	/** @cmp: legacy: the CMP to kick once the CPU is done */
	struct nfence_cmp *cmp;
	/** @count: legacy: entries in @fences */
	u32 count;
	/** @fences: legacy: the fences */
	struct nfence_sub_fence fences[] __counted_by(count);
};

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
int nfence_hwqueue_logs_recreate(struct nfence_hwqueue *q, u32 num_entries);
void nfence_submission_free(struct nfence_submission *sub);
void nfence_hwqueue_stop_locked(struct nfence_hwqueue *q, u32 state,
				struct list_head *dropped);
void nfence_submissions_drop(struct list_head *dropped);
bool nfence_submit_entry_step(struct nfence_cmp *cmp,
			      struct nfence_cmp_entry *entry);
void nfence_submit_entry_done(struct nfence_cmp_queue *hw,
			      struct nfence_cmp_entry *entry);
unsigned int nfence_logging_read_signals(struct nfence_adapter *adapter,
					 struct nfence_cmp_queue *hw);
void nfence_hwqueue_context_fault_locked(struct nfence_context *ctx, u64 va,
					 u32 reason, struct list_head *dropped);

void nfence_file_sched_init(struct nfence_file *nfile);
void nfence_file_drain(struct nfence_file *nfile);
int nfence_context_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
int nfence_log_read_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
int nfence_hwqueue_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int nfence_hwqueue_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
int nfence_doorbell_create_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
int nfence_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int nfence_submit_wait_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int nfence_submit_signal_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);

#endif /* __NFENCE_HWQUEUE_H__ */
