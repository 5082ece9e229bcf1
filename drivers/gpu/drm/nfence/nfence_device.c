// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/slab.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_device.h"
#include "nfence_drv.h"

/**
 * DOC: devices
 *
 * A device (D3DKMTCreateDevice) is per open file. Its handle comes from the
 * file's xarray, allocated cyclically in [1, UINT_MAX] so that a destroyed
 * handle is not handed out again at once; at most
 * %DRM_NFENCE_MAX_DEVICES_PER_FILE devices live at a time, counted under the
 * xarray's lock.
 * Objects created later on a device (contexts, fences, queues) take a
 * reference on it; destroying the device removes its handle at once, and the
 * memory goes with the last reference.
 */

static void nfence_device_release(struct kref *ref)
{
	struct nfence_device *dev = container_of(ref, struct nfence_device, ref);

	atomic_dec(&dev->file->adapter->num_devices);
	kfree(dev);
}

/**
 * nfence_device_put - drop a reference to a device
 * @dev: the device, or NULL
 */
void nfence_device_put(struct nfence_device *dev)
{
	if (dev)
		kref_put(&dev->ref, nfence_device_release);
}

/**
 * nfence_device_lookup - find a device by handle and take a reference
 * @nfile: the file
 * @handle: the device handle
 *
 * Return: the device with a reference the caller must drop with
 * nfence_device_put(), or NULL if @handle names no live device of @nfile.
 */
struct nfence_device *nfence_device_lookup(struct nfence_file *nfile,
					   u32 handle)
{
	struct nfence_device *dev;

	xa_lock(&nfile->devices.xa);
	dev = xa_load(&nfile->devices.xa, handle);
	if (dev && !kref_get_unless_zero(&dev->ref))
		dev = NULL;
	xa_unlock(&nfile->devices.xa);
	return dev;
}

/*
 * No object may join @dev from now on. Creators check @dead under the lock
 * of the table they publish in; taking each lock once after setting it
 * makes every creator either see it or finish publishing before the
 * close functions scan the tables.
 */
static void nfence_device_mark_dead(struct nfence_device *dev)
{
	struct nfence_file *nfile = dev->file;

	xa_lock(&nfile->fences.xa);
	dev->dead = true;
	xa_unlock(&nfile->fences.xa);
	xa_lock(&nfile->allocs.xa);
	xa_unlock(&nfile->allocs.xa);
	mutex_lock(&nfile->sched_lock);
	mutex_unlock(&nfile->sched_lock);
}

/**
 * nfence_file_devices_init - set up the device table of a new file
 * @nfile: the file
 */
void nfence_file_devices_init(struct nfence_file *nfile)
{
	nfence_table_init(&nfile->devices, DRM_NFENCE_MAX_DEVICES_PER_FILE);
}

/**
 * nfence_file_devices_fini - destroy every device a closing file still holds
 * @nfile: the file
 */
void nfence_file_devices_fini(struct nfence_file *nfile)
{
	struct nfence_device *dev;
	unsigned long handle;

	xa_for_each(&nfile->devices.xa, handle, dev) {
		xa_erase(&nfile->devices.xa, handle);
		nfence_device_put(dev);
	}
	nfile->devices.count = 0;
	xa_destroy(&nfile->devices.xa);
}

/**
 * nfence_device_create_ioctl - DRM_IOCTL_NFENCE_DEVICE_CREATE
 * @drm: the DRM device
 * @data: &struct drm_nfence_device_create
 * @file: the caller's file
 *
 * Return: 0, -EINVAL on bad flags, -ENOSPC when the file holds
 * %DRM_NFENCE_MAX_DEVICES_PER_FILE devices, -ENOMEM, -ENODEV after unplug.
 */
int nfence_device_create_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_nfence_device_create *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_device *dev;
	int ret, idx;
	u32 handle;

	if (args->flags)
		return -EINVAL;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		ret = -ENOMEM;
		goto out;
	}
	kref_init(&dev->ref);
	dev->file = nfile;

	xa_lock(&nfile->devices.xa);
	ret = nfence_table_insert_locked(&nfile->devices, dev, &handle);
	if (!ret) {
		/*
		 * The device is visible now: finish it before the lock goes,
		 * another thread may destroy it at once.
		 */
		dev->handle = handle;
		atomic_inc(&nfile->adapter->num_devices);
	}
	xa_unlock(&nfile->devices.xa);
	if (ret < 0) {
		kfree(dev);
		goto out;
	}

	args->handle = handle;
	ret = 0;
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * nfence_device_remove - take a device out of its file for destruction
 * @nfile: the file
 * @handle: the device handle
 *
 * The handle names nothing from now on, and no object can join the device
 * any more (nfence_device_mark_dead()). The caller closes what the device
 * still has, then drops the reference returned, the table's.
 *
 * Return: the device, or NULL if @handle names no device of @nfile.
 */
struct nfence_device *nfence_device_remove(struct nfence_file *nfile,
					   u32 handle)
{
	struct nfence_device *dev;

	xa_lock(&nfile->devices.xa);
	dev = nfence_table_erase_locked(&nfile->devices, handle);
	xa_unlock(&nfile->devices.xa);
	if (dev)
		nfence_device_mark_dead(dev);
	return dev;
}
