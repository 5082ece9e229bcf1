// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/slab.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_device.h"

/**
 * DOC: devices
 *
 * A device (D3DKMTCreateDevice) is per open file. Its handle comes from the
 * file's xarray, allocated cyclically in [1, UINT_MAX] so that a destroyed
 * handle is not handed out again at once; at most
 * %DRM_NFENCE_MAX_DEVICES_PER_FILE devices live at a time, counted under the
 * xarray's lock.
 * Objects created later on a device (contexts, fences, queues) take a
 * reference on it; destroying the device removes its handle at once, the
 * file's registry closes what it owns (DOC: object registry), and the
 * memory goes with the last reference.
 *
 * A device's life: %DRM_IOCTL_NFENCE_DEVICE_CREATE and
 * %DRM_IOCTL_NFENCE_DEVICE_DESTROY are here; its state (errors and faults,
 * %DRM_IOCTL_NFENCE_DEVICE_CONTROL, the device-lost policy that stops its
 * queues) is in nfence_device_state.c (DOC: device state), which sits
 * above the queues it stops, as this file sits below every object that
 * references a device.
 */

static void nfence_device_release(struct kref *ref)
{
	struct nfence_device *wdev = container_of(ref, struct nfence_device, ref);

	atomic_dec(&wdev->file->adapter->num_devices);
	kfree(wdev);
}

static struct nfence_device *to_nfence_device(struct nfence_object *obj)
{
	return container_of(obj, struct nfence_device, obj);
}

/* &nfence_object_ops.get: a lookup's reference, unless it is going. */
static bool nfence_device_obj_get(struct nfence_object *obj)
{
	return kref_get_unless_zero(&to_nfence_device(obj)->ref);
}

/*
 * &nfence_object_ops.close: what it owns is closed already; drop the
 * table's reference.
 */
static void nfence_device_obj_close(struct nfence_registry *reg,
				    struct nfence_object *obj)
{
	nfence_device_put(to_nfence_device(obj));
}

static const struct nfence_object_ops nfence_device_obj_ops = {
	.get = nfence_device_obj_get,
	.close = nfence_device_obj_close,
};

/**
 * nfence_device_put - drop a reference to a device
 * @wdev: the device, or NULL
 */
void nfence_device_put(struct nfence_device *wdev)
{
	if (wdev)
		kref_put(&wdev->ref, nfence_device_release);
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
	struct nfence_object *obj;

	obj = nfence_table_lookup(nfence_file_table(nfile, NFENCE_OBJ_DEVICE),
				  handle);
	return obj ? to_nfence_device(obj) : NULL;
}

/*
 * No object may join @wdev from now on. Creators check @dead under the lock
 * of the table they publish in, after publishing (the insert may drop and
 * retake that lock), and take the handle back if it is set; taking each
 * lock once after setting it makes every creator either see it or finish
 * publishing before the close functions scan the tables.
 */
static void nfence_device_mark_dead(struct nfence_device *wdev)
{
	struct nfence_file *nfile = wdev->file;
	struct nfence_table *fences = nfence_file_table(nfile, NFENCE_OBJ_FENCE);
	struct nfence_table *allocs = nfence_file_table(nfile, NFENCE_OBJ_ALLOC);

	nfence_table_lock(fences);
	wdev->dead = true;
	nfence_table_unlock(fences);
	nfence_table_lock(allocs);
	nfence_table_unlock(allocs);
	mutex_lock(&nfile->sched_lock);
	mutex_unlock(&nfile->sched_lock);
}

/**
 * nfence_file_devices_init - set up the device table of a new file
 * @nfile: the file
 */
void nfence_file_devices_init(struct nfence_file *nfile)
{
	nfence_table_init(nfence_file_table(nfile, NFENCE_OBJ_DEVICE),
			  DRM_NFENCE_MAX_DEVICES_PER_FILE);
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
	struct nfence_device *wdev;
	struct nfence_table *table;
	int ret, idx;
	u32 handle;

	if (args->flags)
		return -EINVAL;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	wdev = kzalloc(sizeof(*wdev), GFP_KERNEL_ACCOUNT);
	if (!wdev) {
		ret = -ENOMEM;
		goto out;
	}
	kref_init(&wdev->ref);
	wdev->file = nfile;
	wdev->obj.ops = &nfence_device_obj_ops;
	INIT_LIST_HEAD(&wdev->fences);

	table = nfence_file_table(nfile, NFENCE_OBJ_DEVICE);
	nfence_table_lock(table);
	ret = nfence_table_insert_locked(table, &wdev->obj, &handle);
	/*
	 * The device is visible now: finish it before the lock goes, another
	 * thread may destroy it at once.
	 */
	if (!ret)
		atomic_inc(&nfile->adapter->num_devices);
	nfence_table_unlock(table);
	if (ret < 0) {
		kfree(wdev);
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
 * any more (nfence_device_mark_dead()). The caller closes the device and
 * what it still owns with nfence_registry_close().
 *
 * Return: the device, or NULL if @handle names no device of @nfile.
 */
static struct nfence_device *nfence_device_remove(struct nfence_file *nfile,
						  u32 handle)
{
	struct nfence_table *table = nfence_file_table(nfile, NFENCE_OBJ_DEVICE);
	struct nfence_device *wdev = NULL;
	struct nfence_object *obj;

	nfence_table_lock(table);
	obj = nfence_table_erase_locked(table, handle);
	nfence_table_unlock(table);
	if (obj) {
		wdev = to_nfence_device(obj);
		nfence_device_mark_dead(wdev);
	}
	return wdev;
}

/**
 * nfence_device_destroy_ioctl - DRM_IOCTL_NFENCE_DEVICE_DESTROY
 * @drm: the DRM device
 * @data: &struct drm_nfence_device_destroy
 * @file: the caller's file
 *
 * The registry closes what the device owns, in its order (DOC: object
 * registry): doorbells and queues first (the CMP stops using its memory
 * and fences), then contexts, allocations and fences, then the device.
 *
 * Return: 0, -EINVAL on non-zero padding, -ENOENT if the handle names no
 * device of this file.
 */
int nfence_device_destroy_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct drm_nfence_device_destroy *args = data;
	struct nfence_file *nfile = to_nfence_file(file);
	struct nfence_device *wdev;

	if (args->pad)
		return -EINVAL;
	wdev = nfence_device_remove(nfile, args->handle);
	if (!wdev)
		return -ENOENT;
	nfence_registry_close(&nfile->objects, &wdev->obj);
	return 0;
}
