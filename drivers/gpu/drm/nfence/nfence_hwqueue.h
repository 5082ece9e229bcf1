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

#include "nfence_waitlist.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_cmp;
struct nfence_context;
struct nfence_device;
struct nfence_fence;
struct nfence_file;
struct nfence_vm;

/**
 * enum nfence_queue_state - where a hardware queue is, for the CMP
 * @NFENCE_QUEUE_IDLE: nothing pending
 * @NFENCE_QUEUE_READY: runnable
 * @NFENCE_QUEUE_RUNNING: running a WORK command on its engine
 * @NFENCE_QUEUE_WAIT_FENCE: parked on a FENCE_WAIT command
 * @NFENCE_QUEUE_WAIT_CPU: held by the kernel at a legacy wait or signal
 * @NFENCE_QUEUE_FAULTED: its context faulted; runs nothing again
 * @NFENCE_QUEUE_LOST: its device is in error; runs nothing again
 */
enum nfence_queue_state {
	NFENCE_QUEUE_IDLE,
	NFENCE_QUEUE_READY,
	NFENCE_QUEUE_RUNNING,
	NFENCE_QUEUE_WAIT_FENCE,
	NFENCE_QUEUE_WAIT_CPU,
	NFENCE_QUEUE_FAULTED,
	NFENCE_QUEUE_LOST,
};

/**
 * enum nfence_sub_kind - kinds of queued submissions
 * @NFENCE_SUB_COMMANDS: a command buffer (kernel-mode submission)
 * @NFENCE_SUB_WAIT: a legacy wait held by CPU waiters
 * @NFENCE_SUB_SIGNAL: a legacy signal done by a kernel worker
 */
enum nfence_sub_kind {
	NFENCE_SUB_COMMANDS,
	NFENCE_SUB_WAIT,
	NFENCE_SUB_SIGNAL,
};

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
	/** @link: entry in &nfence_hwqueue.pending */
	struct list_head link;
	/** @kind: &enum nfence_sub_kind */
	u32 kind;
	/** @size: COMMANDS: bytes of commands */
	u32 size;
	/** @va: COMMANDS: GPU VA of the commands */
	u64 va;
	/** @offset: COMMANDS: bytes already run */
	u64 offset;
	/** @progress_value: COMMANDS: progress fence value when done */
	u64 progress_value;
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
	/** @ctx: the context (a reference) */
	struct nfence_context *ctx;
	/** @vm: the file's GPU address space, alive while the queue is listed */
	struct nfence_vm *vm;
	/** @id: adapter-wide id for debugfs */
	u32 id;
	/** @handle: handle in the file's queue table */
	u32 handle;
	/** @flags: DRM_NFENCE_HWQUEUE_* */
	u32 flags;
	/** @progress: the progress fence (a reference) */
	struct nfence_fence *progress;
	/** @progress_handle: its local handle */
	u32 progress_handle;
	/** @last_queued: CMP: progress value of the last submission */
	u64 last_queued;
	/** @pending: CMP: queued &struct nfence_submission, oldest first */
	struct list_head pending;
	/** @num_pending: CMP: entries in @pending */
	u32 num_pending;
	/** @room: submitters wait here for @num_pending to drop */
	wait_queue_head_t room;
	/** @engine_link: CMP: entry in the engine's runlist */
	struct list_head engine_link;
	/** @ctx_link: CMP: entry in &nfence_context.queues */
	struct list_head ctx_link;
	/** @state: CMP: &enum nfence_queue_state */
	u32 state;
	/** @wait_va: CMP: WAIT_FENCE: the address waited on */
	u64 wait_va;
	/** @wait_value: CMP: WAIT_FENCE: the value waited for */
	u64 wait_value;
	/** @work_start_ns: CMP: RUNNING: when the WORK command started */
	u64 work_start_ns;
	/** @dead: CMP: destroyed, off the runlist */
	bool dead;
};

void nfence_hwqueue_put(struct nfence_hwqueue *q);
void nfence_submission_free(struct nfence_submission *sub);
void nfence_hwqueue_stop_locked(struct nfence_hwqueue *q, u32 state,
				struct list_head *dropped);
void nfence_submissions_drop(struct list_head *dropped);
bool nfence_submission_legacy_step(struct nfence_cmp *cmp,
				   struct nfence_submission *sub);
void nfence_hwqueue_complete_locked(struct nfence_hwqueue *q,
				    struct nfence_submission *sub);
void nfence_hwqueue_print(struct nfence_hwqueue *q, struct drm_printer *p);
void nfence_context_close_hwqueues(struct nfence_context *ctx);
bool nfence_fence_is_progress(struct nfence_file *nfile, u32 handle);

void nfence_file_hwqueues_init(struct nfence_file *nfile);
void nfence_file_hwqueues_fini(struct nfence_file *nfile);
int nfence_hwqueue_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int nfence_hwqueue_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
int nfence_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int nfence_submit_wait_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int nfence_submit_signal_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);

#endif /* __NFENCE_HWQUEUE_H__ */
