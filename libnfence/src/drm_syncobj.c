/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The syncobj bridge: NFenceBindSyncobjPoint over
 * DRM_IOCTL_NFENCE_SYNCOBJ_BIND, NFenceSignalFromSyncobjPoint and
 * NFenceSignalFromSyncFile over DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, and
 * D3DKMTCreateSyncFile, which the kernel's rule on indefinite DMA fences
 * rules out (Documentation/fences.rst).
 */
#include <string.h>

#include "syncobj.h"

_Static_assert(NFENCE_MAX_SYNCOBJ_BINDINGS == DRM_NFENCE_MAX_SYNCOBJ_BINDINGS,
	       "the public limit is the kernel's");
_Static_assert(NFENCE_MAX_SYNCOBJ_SIGNALS == DRM_NFENCE_MAX_SYNCOBJ_SIGNALS,
	       "the public limit is the kernel's");

/*
 * nf_bridge_ioctl() - @request with @args, once *@device and *@fence (both
 * fields of @args) are the kernel handles of the device @hDevice names and
 * of its sync object @hSyncObject.
 */
static NTSTATUS nf_bridge_ioctl(D3DKMT_HANDLE hDevice,
				D3DKMT_HANDLE hSyncObject, unsigned long request,
				void *args, uint32_t *device, uint32_t *fence)
{
	struct nf_device *dev;
	NTSTATUS st;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(dev, 1, &hSyncObject, fence);
	if (NT_SUCCESS(st)) {
		*device = dev->kernel_handle;
		st = nf_ioctl_status(dev->adapter->fd, request, args);
	}
	nf_device_put(dev);
	return st;
}

NTSTATUS NFenceBindSyncobjPoint(D3DKMT_HANDLE hDevice,
				D3DKMT_HANDLE hSyncObject, UINT64 Value,
				UINT SyncobjHandle, UINT64 Point)
{
	struct drm_nfence_syncobj_bind args;

	if (!Point)
		return STATUS_INVALID_PARAMETER;
	memset(&args, 0, sizeof(args));
	args.value = Value;
	args.syncobj = SyncobjHandle;
	args.point = Point;
	return nf_bridge_ioctl(hDevice, hSyncObject,
			       DRM_IOCTL_NFENCE_SYNCOBJ_BIND, &args,
			       &args.device, &args.fence);
}

NTSTATUS NFenceSignalFromSyncobjPoint(D3DKMT_HANDLE hDevice,
				      D3DKMT_HANDLE hSyncObject, UINT64 Value,
				      UINT SyncobjHandle, UINT64 Point)
{
	struct drm_nfence_syncobj_signal args;

	memset(&args, 0, sizeof(args));
	args.value = Value;
	args.syncobj = SyncobjHandle;
	args.point = Point;
	return nf_bridge_ioctl(hDevice, hSyncObject,
			       DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &args,
			       &args.device, &args.fence);
}

NTSTATUS NFenceSignalFromSyncFile(D3DKMT_HANDLE hDevice,
				  D3DKMT_HANDLE hSyncObject, UINT64 Value,
				  int SyncFileFd)
{
	struct drm_nfence_syncobj_signal args;

	/* No file at all: the kernel would say the same. */
	if (SyncFileFd < 0)
		return STATUS_INVALID_PARAMETER;
	memset(&args, 0, sizeof(args));
	args.value = Value;
	args.fd = SyncFileFd;
	args.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	return nf_bridge_ioctl(hDevice, hSyncObject,
			       DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &args,
			       &args.device, &args.fence);
}

NTSTATUS D3DKMTCreateSyncFile(D3DKMT_CREATESYNCFILE *pCreateSyncFile)
{
	(void)pCreateSyncFile;
	return STATUS_NOT_SUPPORTED;
}
