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

NTSTATUS NFenceBindSyncobjPoint(D3DKMT_HANDLE hDevice,
				D3DKMT_HANDLE hSyncObject, UINT64 Value,
				UINT SyncobjHandle, UINT64 Point)
{
	struct drm_nfence_syncobj_bind args;
	struct nf_device *dev;
	uint32_t fence;
	NTSTATUS st;

	if (!Point)
		return STATUS_INVALID_PARAMETER;
	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(dev, 1, &hSyncObject, &fence);
	if (NT_SUCCESS(st)) {
		memset(&args, 0, sizeof(args));
		args.device = dev->kernel_handle;
		args.fence = fence;
		args.value = Value;
		args.syncobj = SyncobjHandle;
		args.point = Point;
		st = nf_ioctl_status(dev->adapter->fd,
				     DRM_IOCTL_NFENCE_SYNCOBJ_BIND, &args);
	}
	nf_device_put(dev);
	return st;
}

/* DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL with @args' source; fills in the rest. */
static NTSTATUS nf_syncobj_signal(D3DKMT_HANDLE hDevice,
				  D3DKMT_HANDLE hSyncObject, UINT64 Value,
				  struct drm_nfence_syncobj_signal *args)
{
	struct nf_device *dev;
	uint32_t fence;
	NTSTATUS st;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sync_handles(dev, 1, &hSyncObject, &fence);
	if (NT_SUCCESS(st)) {
		args->device = dev->kernel_handle;
		args->fence = fence;
		args->value = Value;
		st = nf_ioctl_status(dev->adapter->fd,
				     DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, args);
	}
	nf_device_put(dev);
	return st;
}

NTSTATUS NFenceSignalFromSyncobjPoint(D3DKMT_HANDLE hDevice,
				      D3DKMT_HANDLE hSyncObject, UINT64 Value,
				      UINT SyncobjHandle, UINT64 Point)
{
	struct drm_nfence_syncobj_signal args;

	memset(&args, 0, sizeof(args));
	args.syncobj = SyncobjHandle;
	args.point = Point;
	return nf_syncobj_signal(hDevice, hSyncObject, Value, &args);
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
	args.fd = SyncFileFd;
	args.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	return nf_syncobj_signal(hDevice, hSyncObject, Value, &args);
}

NTSTATUS D3DKMTCreateSyncFile(D3DKMT_CREATESYNCFILE *pCreateSyncFile)
{
	(void)pCreateSyncFile;
	return STATUS_NOT_SUPPORTED;
}
