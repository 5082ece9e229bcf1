// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_context.h"
#include "nfence_device.h"
#include "nfence_doorbell.h"
#include "nfence_hwqueue.h"
#include "nfence_log.h"
#include "nfence_logging.h"
#include "nfence_signal.h"

/**
 * DOC: logging level
 *
 * WDDM's "detailed logging" switch: when a tool (GPUView on Windows;
 * nfence-trace here) turns verbose logging on, Dxgkrnl tells the KMD
 * (UpdateLoggingLevel), gives every hardware queue larger log buffers so
 * that the trace does not overrun them, and disconnects every doorbell so
 * that each UMD reconnects and reads the new level from its doorbell
 * status storage, and logs more (or less) from then on.
 * %DRM_IOCTL_NFENCE_LOGGING_LEVEL is that switch, one per adapter, for
 * CAP_SYS_ADMIN. It is off (%DRM_NFENCE_LOGGING_LEVEL_DEFAULT) at load and
 * costs nothing while it stays off: no path of the driver looks at it but
 * queue creation (the size of new logs), doorbell connects and this ioctl.
 *
 * A level change walks every open file of the adapter (&nfence_adapter.
 * clients_lock), and each file's queues under its &nfence_file.sched_lock,
 * so no queue is created or destroyed meanwhile, and a queue created after
 * the walk passed its file already sees the new level.
 *
 * This file also holds what the driver does with a queue's logs once they
 * exist (nfence_hwqueue.c makes, maps and frees them with the queue; the
 * buffer format and its reader are nfence_log.c's): %DRM_IOCTL_NFENCE_LOG_READ,
 * which reads a copy taken under &nfence_cmp.lock, where the engines write
 * the logs; the recreation of a queue's buffers at a level change or on
 * %DRM_NFENCE_LOGGING_RECREATE; and the read of a queue's signal log for
 * the optimized native fence signaled interrupt
 * (nfence_logging_read_signals()).
 */

/**
 * nfence_logging_read_signals - read a queue's signal log for the
 *	optimized interrupt
 * @adapter: the queue's adapter
 * @hw: the queue, which has its logs
 * @scanned: in/out: as nfence_interrupt_log()'s, for one interrupt
 *
 * Called with &nfence_cmp.lock held.
 *
 * Return: the waiters the logged signals released.
 */
unsigned int nfence_logging_read_signals(struct nfence_adapter *adapter,
					 struct nfence_cmp_queue *hw,
					 bool *scanned)
{
	struct nfence_hwqueue *q = to_nfence_hwqueue(hw);

	return nfence_interrupt_log(adapter, q->ctx->device->file,
				    &hw->logs[NFENCE_LOG_SIGNALS],
				    &q->irq_cursor, hw->progress, scanned);
}

/**
 * nfence_logging_recreate_queue - give a queue new log buffers
 * @q: a queue of its file's table (&nfence_file.sched_lock held)
 * @num_entries: entries of each new buffer
 *
 * WDDM's "Dxgkrnl may destroy and recreate the log buffers"
 * (SetNativeFenceLogBuffer): the GPU logs into new buffers, at new GPU VAs
 * (&struct drm_nfence_log_read returns them), and the old ones are
 * unmapped and freed. A command still naming an old VA faults, unless a
 * later mapping of the same file (an allocation) took that range: GPU
 * VAs are reused as after ALLOC_DESTROY. Under the
 * optimized interrupt the driver first reads what the signal log holds
 * that it has not read, so no waiter a logged signal satisfied is missed.
 * A queue without logs has nothing to do.
 *
 * Return: 0, -ENOMEM or -ENOSPC (the queue then keeps its buffers).
 */
static int nfence_logging_recreate_queue(struct nfence_hwqueue *q,
					 u32 num_entries)
{
	struct nfence_adapter *adapter = q->ctx->adapter;
	struct nfence_log_buffer *bufs[NFENCE_NUM_LOGS] = {};
	struct nfence_cmp *cmp = &adapter->cmp;
	int ret = 0;
	u32 kind;

	lockdep_assert_held(&q->ctx->device->file->sched_lock);
	if (!q->hw.logs)
		return 0;
	for (kind = 0; kind < ARRAY_SIZE(bufs); kind++) {
		bufs[kind] = nfence_log_buffer_alloc(nfence_log_type(kind),
						     num_entries);
		if (!bufs[kind]) {
			ret = -ENOMEM;
			goto out;
		}
		ret = nfence_log_buffer_map(bufs[kind], q->hw.vm);
		if (ret)
			goto out;
	}
	nfence_cmp_lock(cmp);
	if (adapter->gpu.cfg.irq_payload == NFENCE_IRQ_QUEUE) {
		bool scanned = false;

		nfence_logging_read_signals(adapter, &q->hw, &scanned);
	}
	for (kind = 0; kind < ARRAY_SIZE(bufs); kind++)
		bufs[kind] = nfence_log_replace(&q->logs[kind], bufs[kind]);
	nfence_cmp_unlock(cmp);
out:
	/* The old buffers, or the new ones that were not used. */
	for (kind = 0; kind < ARRAY_SIZE(bufs); kind++)
		nfence_log_buffer_free(bufs[kind]);
	return ret;
}

/* Give every queue of @nfile new logs of @num_entries; the first error. */
static int nfence_logging_recreate_file(struct nfence_file *nfile,
					u32 num_entries)
{
	struct nfence_object *obj;
	struct nfence_hwqueue *q;
	unsigned long handle;
	int ret = 0, err;

	mutex_lock(&nfile->sched_lock);
	nfence_table_for_each(nfence_file_table(nfile, NFENCE_OBJ_HWQUEUE),
			      handle, obj) {
		q = container_of(obj, struct nfence_hwqueue, obj);
		err = nfence_logging_recreate_queue(q, num_entries);
		if (err && !ret)
			ret = err;
	}
	mutex_unlock(&nfile->sched_lock);
	return ret;
}

/**
 * nfence_logging_level_ioctl - DRM_IOCTL_NFENCE_LOGGING_LEVEL
 * @drm: the DRM device
 * @data: &struct drm_nfence_logging_level
 * @file: the caller's file (DRM_ROOT_ONLY: CAP_SYS_ADMIN)
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_logging_level_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_logging_level *args = data;
	struct nfence_file *nfile;
	u32 num_entries, previous;
	bool change;
	int ret = 0, err, idx;

	if (args->level > DRM_NFENCE_LOGGING_LEVEL_ALL ||
	    (args->flags & ~DRM_NFENCE_LOGGING_RECREATE) || args->pad)
		return -EINVAL;
	if (!adapter->gpu.cfg.native_fence)
		return -EOPNOTSUPP;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	num_entries = args->level == DRM_NFENCE_LOGGING_LEVEL_ALL ?
		      NFENCE_LOG_ENTRIES_ALL : DRM_NFENCE_LOG_ENTRIES;
	mutex_lock(&adapter->clients_lock);
	previous = adapter->logging_level;
	change = previous != args->level;
	WRITE_ONCE(adapter->logging_level, args->level);
	if (change || (args->flags & DRM_NFENCE_LOGGING_RECREATE)) {
		list_for_each_entry(nfile, &adapter->clients, link) {
			err = nfence_logging_recreate_file(nfile, num_entries);
			if (err && !ret)
				ret = err;
		}
	}
	mutex_unlock(&adapter->clients_lock);
	/* Every UMD reconnects and reads the new level. */
	if (change)
		nfence_doorbell_disconnect_all(adapter);

	drm_dev_exit(idx);
	args->previous = previous;
	return ret;
}

/*
 * Copy @q's log of @type (DRM_NFENCE_LOG_TYPE_*) into @copy, whose buffer
 * holds a whole log, under &nfence_cmp.lock, where the engines write it.
 *
 * Return: the log's GPU VA.
 */
static u64 nfence_log_snapshot(struct nfence_hwqueue *q, u32 type,
			       struct nfence_log *copy)
{
	const struct nfence_log *log;
	u64 gpu_va;

	log = &q->logs[type == DRM_NFENCE_LOG_TYPE_WAITS ?
		       NFENCE_LOG_WAITS : NFENCE_LOG_SIGNALS];
	nfence_cmp_lock(nfence_hwqueue_cmp(q));
	nfence_log_copy(copy, log);
	gpu_va = nfence_log_gpu_va(log);
	nfence_cmp_unlock(nfence_hwqueue_cmp(q));
	return gpu_va;
}

/*
 * Read @count entries at most of the log @copy from @args->cursor, copy
 * them to user space and fill in the outputs of LOG_READ.
 */
static int nfence_log_read_out(const struct nfence_log *copy, u64 gpu_va,
			       struct drm_nfence_log_entry *entries, u32 count,
			       struct drm_nfence_log_read *args)
{
	u64 cursor = args->cursor;
	u32 status;
	int ret;

	ret = nfence_log_read(copy, &cursor, entries, &count, &status);
	if (ret)
		return ret;
	if (count && copy_to_user(u64_to_user_ptr(args->entries_ptr), entries,
				  count * sizeof(*entries)))
		return -EFAULT;
	memcpy(&args->header, copy->buf->vaddr, sizeof(args->header));
	args->gpu_va = gpu_va;
	args->cursor = cursor;
	args->num_entries = count;
	args->status = status;
	return 0;
}

/**
 * nfence_log_read_ioctl - DRM_IOCTL_NFENCE_LOG_READ
 * @drm: the DRM device
 * @data: &struct drm_nfence_log_read
 * @file: the caller's file
 *
 * Copies the log under &nfence_cmp.lock, where the engines write it, then
 * reads the copy (nfence_log_read()).
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_log_read_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_nfence_log_read *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct drm_nfence_log_entry *entries = NULL;
	struct nfence_log_buffer buf = {};
	struct nfence_log copy = { .buf = &buf };
	struct nfence_hwqueue *q;
	u64 gpu_va;
	u32 count;
	int ret;

	if (args->flags ||
	    (args->type != DRM_NFENCE_LOG_TYPE_WAITS &&
	     args->type != DRM_NFENCE_LOG_TYPE_SIGNALS))
		return -EINVAL;
	q = nfence_hwqueue_lookup(nfile, args->device, args->hwqueue);
	if (!q)
		return -ENOENT;
	if (!q->hw.logs) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	count = min_t(u32, args->num_entries, NFENCE_LOG_ENTRIES_ALL);
	/*
	 * Zeroed, though only what the snapshot copied is read and only the
	 * entries read are copied out: no byte of an earlier allocation can
	 * reach user space if that ever changes.
	 */
	buf.vaddr = kzalloc(nfence_log_size(NFENCE_LOG_ENTRIES_ALL),
			    GFP_KERNEL_ACCOUNT);
	if (count)
		entries = kcalloc(count, sizeof(*entries), GFP_KERNEL_ACCOUNT);
	if (!buf.vaddr || (count && !entries)) {
		ret = -ENOMEM;
		goto out_free;
	}
	gpu_va = nfence_log_snapshot(q, args->type, &copy);
	ret = nfence_log_read_out(&copy, gpu_va, entries, count, args);
out_free:
	kfree(entries);
	kfree(buf.vaddr);
out:
	nfence_hwqueue_put(q);
	return ret;
}
