/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_SUBMIT_H__
#define __NFENCE_SUBMIT_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "nfence_cmp_types.h"
#include "nfence_waitlist.h"

struct drm_device;
struct drm_file;
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

void nfence_submission_free(struct nfence_submission *sub);
void nfence_submissions_drop(struct list_head *dropped);
bool nfence_submit_entry_step(struct nfence_cmp *cmp,
			      struct nfence_cmp_entry *entry);
void nfence_submit_entry_done(struct nfence_cmp_queue *hw,
			      struct nfence_cmp_entry *entry);

void nfence_file_drain(struct nfence_file *nfile);
int nfence_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int nfence_submit_wait_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int nfence_submit_signal_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);

#endif /* __NFENCE_SUBMIT_H__ */
