/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * D3DKMTDestroyDevice over DRM_IOCTL_NFENCE_DEVICE_DESTROY: the one place
 * that closes everything a device has, the handles of its allocations
 * (allocation.c), contexts and queues (context.c) and sync objects
 * (fence.c), above the objects themselves.
 */
#include <string.h>

#include "device.h"
#include "fence.h"
#include "gpu.h"

NTSTATUS D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *pDestroyDevice)
{
	struct drm_nfence_device_destroy args;
	struct nf_object *obj;
	struct nf_device *dev;
	NTSTATUS st;

	if (!pDestroyDevice)
		return STATUS_INVALID_PARAMETER;

	/* Unlink first: of concurrent destroys exactly one reaches here. */
	obj = nf_handle_remove(pDestroyDevice->hDevice, NF_HANDLE_DEVICE);
	if (!obj)
		return NF_STATUS_BAD_HANDLE;
	dev = (struct nf_device *)obj;

	/*
	 * The kernel destroys the device's allocations, contexts, queues and
	 * fences; close their handles (queues close their progress fences).
	 */
	nf_device_close_allocations(dev);
	nf_device_close_contexts(dev);
	nf_device_close_syncobjs(dev);

	memset(&args, 0, sizeof(args));
	args.handle = dev->kernel_handle;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_DEVICE_DESTROY,
			     &args);
	nf_device_put(dev);
	return st;
}
