// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_device.h"
#include "nfence_device_state.h"
#include "nfence_hwqueue.h"

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
 */

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
