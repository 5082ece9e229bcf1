/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Devices: D3DKMTCreateDevice over DRM_IOCTL_NFENCE_DEVICE_CREATE, and the
 * device object the other objects hang off. D3DKMTDestroyDevice, which
 * closes everything a device has, is in device_destroy.c.
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "fence.h"
#include "gpu.h"

static void nf_device_release(struct nf_object *obj)
{
	struct nf_device *dev = (struct nf_device *)obj;

	nf_adapter_put(dev->adapter);
	free(dev);
}

NTSTATUS nf_device_new(struct nf_adapter *adapter, uint32_t kernel_handle,
		       D3DKMT_HANDLE *handle)
{
	struct nf_device *dev;
	NTSTATUS st;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return STATUS_NO_MEMORY;
	nf_object_init(&dev->base, NF_HANDLE_DEVICE, nf_device_release);
	nf_adapter_get(adapter);
	dev->adapter = adapter;
	dev->kernel_handle = kernel_handle;

	st = nf_handle_insert(&dev->base, handle);
	/* On success the table holds the handle's reference. */
	nf_object_put(&dev->base);
	return st;
}

struct nf_device *nf_device_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_device *)nf_handle_lookup(handle, NF_HANDLE_DEVICE);
}

static void nf_kernel_device_destroy(int fd, uint32_t kernel_handle)
{
	struct drm_nfence_device_destroy args = { .handle = kernel_handle };

	nf_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_DESTROY, &args);
}

NTSTATUS D3DKMTCreateDevice(D3DKMT_CREATEDEVICE *pCreateDevice)
{
	struct drm_nfence_device_create args;
	struct nf_adapter *adapter;
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!pCreateDevice || pCreateDevice->Flags.Reserved)
		return STATUS_INVALID_PARAMETER;
	if (pCreateDevice->Flags.LegacyMode)
		return STATUS_NOT_SUPPORTED;

	adapter = nf_adapter_lookup(pCreateDevice->hAdapter);
	if (!adapter)
		return STATUS_INVALID_HANDLE;

	memset(&args, 0, sizeof(args));
	st = nf_ioctl_status(adapter->fd, DRM_IOCTL_NFENCE_DEVICE_CREATE,
			     &args);
	if (NT_SUCCESS(st)) {
		st = nf_device_new(adapter, args.handle, &handle);
		if (!NT_SUCCESS(st))
			nf_kernel_device_destroy(adapter->fd, args.handle);
	}
	nf_adapter_put(adapter);
	if (!NT_SUCCESS(st))
		return st;

	pCreateDevice->hDevice = handle;
	pCreateDevice->pCommandBuffer = NULL;
	pCreateDevice->CommandBufferSize = 0;
	pCreateDevice->pAllocationList = NULL;
	pCreateDevice->AllocationListSize = 0;
	pCreateDevice->pPatchLocationList = NULL;
	pCreateDevice->PatchLocationListSize = 0;
	return STATUS_SUCCESS;
}
