// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_compat.h"
#include "nfence_context.h"
#include "nfence_device.h"
#include "nfence_device_state.h"
#include "nfence_hwqueue.h"
#include "nfence_signal.h"
#include "nfence_submit.h"
#include "nfence_table.h"

/**
 * DOC: device state
 *
 * A device is in error once any of these happened to it, and the first
 * one is its &nfence_device.error_cause: a queue of it hung (the TDR), its
 * user marked it (%DRM_NFENCE_DEVICE_OP_MARK_ERROR,
 * D3DKMTMarkDeviceAsError), or a device-lost event (the debugfs hook, the
 * abnormal end of its process, the adapter's unplug). All of them go
 * through nfence_device_lost(), so they do the same thing: the device's
 * fences become AlwaysSignaled, its queues stop, and creating or
 * submitting on it fails with -EIO. A GPU fault stops only the faulting
 * context; the device records the first one (VA, reason, context), which
 * D3DKMTGetDeviceState reports with or without the device in error.
 * %DRM_IOCTL_NFENCE_DEVICE_CONTROL reads both under the CMP lock, which
 * is where they are set.
 *
 * The device-lost policy lives once, here, in nfence_device_lost_locked():
 * the TDR reaches it through &nfence_cmp_ops.queue_hang (nfence_cmp_ops.c)
 * under the CMP lock, every other cause through nfence_device_lost(). It
 * stops the device's queues, so this file sits above nfence_hwqueue.c;
 * creating and destroying a device are in nfence_device.c (DOC: devices).
 */

/* What nfence_device_lost_locked() does to each queue on the runlists. */
struct nfence_device_lost {
	struct nfence_device *wdev;
	struct list_head *dropped;
};

static void nfence_device_lost_queue(struct nfence_cmp_queue *hw, void *data)
{
	struct nfence_hwqueue *q = to_nfence_hwqueue(hw);
	struct nfence_device_lost *lost = data;

	if (q->ctx->device == lost->wdev)
		nfence_hwqueue_stop_locked(q, NFENCE_QUEUE_LOST, lost->dropped);
}

/*
 * Stop every queue of @wdev on the runlists as LOST, a FAULTED one
 * included, their pending submissions to @dropped. Visible to KUnit,
 * whose fixture of queues has no file to put the device's fences in error
 * through.
 */
NFENCE_VISIBLE_IF_KUNIT void
nfence_device_stop_queues_locked(struct nfence_cmp *cmp,
				 struct nfence_device *wdev,
				 struct list_head *dropped)
{
	struct nfence_device_lost lost = { .wdev = wdev, .dropped = dropped };

	nfence_cmp_walk_queues_locked(cmp, nfence_device_lost_queue, &lost);
}

/**
 * nfence_device_lost_locked - put a device in error and stop its queues
 * @cmp: the CMP of the device's adapter, whose lock is held
 * @wdev: the device, whose file is alive
 * @cause: &enum drm_nfence_device_error: why; the first cause is kept
 * @dropped: where the queues' pending submissions go, for
 *	nfence_submissions_drop() once the CMP lock is released
 *
 * What a GPU hang or a device-lost event does to a device, in one place:
 * the fences it created become AlwaysSignaled, and new fences it creates
 * are born so; its queues stop and refuse new work. The device's queues
 * are on the runlists, and they leave them only under the lock held here.
 *
 * A device already in error has nothing left to do: the hold that put it
 * in error stopped every queue it had, and a queue it creates since stops
 * as it is put on the runlists (nfence_hwqueue_stop_born_locked()), so
 * that a repeated DEVICE_CONTROL(MARK_ERROR) walks no runlist.
 *
 * Return: true if this call put the device in error.
 */
bool nfence_device_lost_locked(struct nfence_cmp *cmp,
			       struct nfence_device *wdev, u32 cause,
			       struct list_head *dropped)
{
	struct nfence_table *fences = nfence_file_table(wdev->file,
							NFENCE_OBJ_FENCE);

	lockdep_assert_held(&cmp->lock);
	if (READ_ONCE(wdev->error))
		return false;
	wdev->error_cause = cause;
	/* Under the lock that publishes its new fences: see fence.c. */
	nfence_table_lock(fences);
	WRITE_ONCE(wdev->error, true);
	nfence_table_unlock(fences);
	nfence_device_fences_error(wdev);
	nfence_device_stop_queues_locked(cmp, wdev, dropped);
	return true;
}

/**
 * nfence_device_lost - put a device in error and stop its queues
 * @cmp: the CMP of the device's adapter
 * @wdev: the device, whose file is alive (the caller holds it open)
 * @cause: &enum drm_nfence_device_error: why; the first cause is kept
 */
void nfence_device_lost(struct nfence_cmp *cmp, struct nfence_device *wdev,
			u32 cause)
{
	LIST_HEAD(dropped);
	bool lost;

	nfence_cmp_lock(cmp);
	lost = nfence_device_lost_locked(cmp, wdev, cause, &dropped);
	nfence_cmp_unlock(cmp);
	if (!lost)
		return;
	nfence_submissions_drop(&dropped);
	nfence_cmp_kick(cmp);
}

/**
 * nfence_device_control_ioctl - DRM_IOCTL_NFENCE_DEVICE_CONTROL
 * @drm: the DRM device
 * @data: &struct drm_nfence_device_control
 * @file: the caller's file
 *
 * Return: 0, or -errno as the uapi documents.
 */
int nfence_device_control_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_device_control *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_cmp *cmp = &adapter->cmp;
	struct nfence_device *wdev;
	int idx;

	if (args->flags || args->op > DRM_NFENCE_DEVICE_OP_MARK_ERROR)
		return -EINVAL;
	wdev = nfence_device_lookup(nfile, args->device);
	if (!wdev)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		nfence_device_put(wdev);
		return -ENODEV;
	}

	if (args->op == DRM_NFENCE_DEVICE_OP_MARK_ERROR)
		nfence_device_lost(cmp, wdev, DRM_NFENCE_DEVICE_ERROR_MARKED);

	nfence_cmp_lock(cmp);
	args->error = READ_ONCE(wdev->error) ? wdev->error_cause :
		      DRM_NFENCE_DEVICE_ERROR_NONE;
	args->fault_va = wdev->fault_va;
	args->fault_reason = wdev->fault_reason;
	args->fault_context = wdev->fault_context;
	nfence_cmp_unlock(cmp);

	drm_dev_exit(idx);
	nfence_device_put(wdev);
	return 0;
}
