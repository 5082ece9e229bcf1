// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "nfence_adapter.h"
#include "nfence_doorbell.h"
#include "nfence_hwqueue.h"
#include "nfence_log.h"
#include "nfence_logging.h"

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
 */

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
		err = nfence_hwqueue_logs_recreate(q, num_entries);
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
