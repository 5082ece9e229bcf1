/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Devices: D3DKMTCreateDevice / D3DKMTDestroyDevice over
 * DRM_IOCTL_NFENCE_DEVICE_CREATE / _DESTROY, D3DKMTGetDeviceState and
 * D3DKMTMarkDeviceAsError over DRM_IOCTL_NFENCE_DEVICE_CONTROL, and the
 * device object, which owns its allocations, contexts and sync objects
 * (handle.h): destroying it closes them.
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"

static void nf_device_release(struct nf_object *obj)
{
	struct nf_device *dev = (struct nf_device *)obj;

	nf_adapter_put(dev->adapter);
	free(dev);
}

static NTSTATUS nf_kernel_device_destroy(int fd, uint32_t kernel_handle)
{
	struct drm_nfence_device_destroy args = { .handle = kernel_handle };

	return nf_ioctl_status(fd, DRM_IOCTL_NFENCE_DEVICE_DESTROY, &args);
}

/*
 * A device has no owner: its kernel destroy is always its own, and
 * destroys everything it owns.
 */
static NTSTATUS nf_device_teardown(struct nf_object *obj, bool owner_destroys)
{
	struct nf_device *dev = (struct nf_device *)obj;

	(void)owner_destroys;
	return nf_kernel_device_destroy(dev->adapter->fd, dev->kernel_handle);
}

static const struct nf_object_ops nf_device_ops = {
	.type = NF_HANDLE_DEVICE,
	.release = nf_device_release,
	.teardown = nf_device_teardown,
};

/*
 * nf_device_new() - wrap kernel device @kernel_handle of @adapter in a new
 * device handle; takes a reference on @adapter. On failure the kernel
 * device is destroyed.
 */
static NTSTATUS nf_device_new(struct nf_adapter *adapter,
			      uint32_t kernel_handle, D3DKMT_HANDLE *handle)
{
	struct nf_device *dev;
	NTSTATUS st;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		nf_kernel_device_destroy(adapter->fd, kernel_handle);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&dev->base, &nf_device_ops, NULL);
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

#define NF_SAME_DESTROY_ARGS(type)					\
	(sizeof(struct type) == sizeof(struct drm_nfence_alloc_destroy) && \
	 offsetof(struct type, device) ==				\
	 offsetof(struct drm_nfence_alloc_destroy, device) &&		\
	 offsetof(struct type, handle) ==				\
	 offsetof(struct drm_nfence_alloc_destroy, handle))

_Static_assert(NF_SAME_DESTROY_ARGS(drm_nfence_context_destroy) &&
	       NF_SAME_DESTROY_ARGS(drm_nfence_hwqueue_destroy) &&
	       NF_SAME_DESTROY_ARGS(drm_nfence_doorbell_destroy),
	       "a device's objects' destroy ioctls take the same arguments");

NTSTATUS nf_device_destroy_object(const struct nf_device *dev,
				  unsigned long request, uint32_t kernel_handle,
				  bool owner_destroys)
{
	struct drm_nfence_alloc_destroy args;

	if (owner_destroys)
		return STATUS_SUCCESS;
	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.handle = kernel_handle;
	return nf_ioctl_status(dev->adapter->fd, request, &args);
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
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	st = nf_ioctl_status(adapter->fd, DRM_IOCTL_NFENCE_DEVICE_CREATE,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_device_new(adapter, args.handle, &handle);
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

/* DRM_IOCTL_NFENCE_DEVICE_CONTROL on the device @hDevice names. */
static NTSTATUS nf_device_control(D3DKMT_HANDLE hDevice, uint32_t op,
				  struct drm_nfence_device_control *args)
{
	struct nf_device *dev;
	NTSTATUS st;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	memset(args, 0, sizeof(*args));
	args->device = dev->kernel_handle;
	args->op = op;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_DEVICE_CONTROL,
			     args);
	nf_device_put(dev);
	return st;
}

/* The execution state that the kernel's answer @args means. */
static D3DKMT_DEVICEEXECUTION_STATE
nf_execution_state(const struct drm_nfence_device_control *args)
{
	switch (args->error) {
	case DRM_NFENCE_DEVICE_ERROR_NONE:
		break;
	case DRM_NFENCE_DEVICE_ERROR_HANG:
		return D3DKMT_DEVICEEXECUTION_RESET;
	default:
		return D3DKMT_DEVICEEXECUTION_STOPPED;
	}
	switch (args->fault_reason) {
	case DRM_NFENCE_FAULT_NONE:
		return D3DKMT_DEVICEEXECUTION_ACTIVE;
	case DRM_NFENCE_FAULT_PAGE:
	case DRM_NFENCE_FAULT_MISALIGNED:
		return D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT;
	default:
		return D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT;
	}
}

NTSTATUS D3DKMTGetDeviceState(D3DKMT_GETDEVICESTATE *pGetDeviceState)
{
	struct drm_nfence_device_control args;
	D3DKMT_DEVICEPAGEFAULT_STATE fault;
	NTSTATUS st;

	if (!pGetDeviceState)
		return STATUS_INVALID_PARAMETER;
	switch (pGetDeviceState->StateType) {
	case D3DKMT_DEVICESTATE_EXECUTION:
	case D3DKMT_DEVICESTATE_PAGE_FAULT:
		break;
	case D3DKMT_DEVICESTATE_PRESENT:
	case D3DKMT_DEVICESTATE_RESET:
	case D3DKMT_DEVICESTATE_PRESENT_DWM:
	case D3DKMT_DEVICESTATE_PRESENT_QUEUE:
		return STATUS_NOT_SUPPORTED;
	default:
		return STATUS_INVALID_PARAMETER;
	}

	st = nf_device_control(pGetDeviceState->hDevice,
			       DRM_NFENCE_DEVICE_OP_QUERY, &args);
	if (!NT_SUCCESS(st))
		return st;

	if (pGetDeviceState->StateType == D3DKMT_DEVICESTATE_EXECUTION) {
		pGetDeviceState->ExecutionState = nf_execution_state(&args);
		return STATUS_SUCCESS;
	}
	memset(&fault, 0, sizeof(fault));
	if (args.fault_reason != DRM_NFENCE_FAULT_NONE) {
		fault.FaultErrorCode.IsDeviceSpecificCode = 1;
		fault.FaultErrorCode.DeviceSpecificCode = args.fault_reason;
		fault.FaultedVirtualAddress = args.fault_va;
	}
	pGetDeviceState->PageFaultState = fault;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTMarkDeviceAsError(const D3DKMT_MARKDEVICEASERROR *pMarkDeviceAsError)
{
	struct drm_nfence_device_control args;

	if (!pMarkDeviceAsError)
		return STATUS_INVALID_PARAMETER;
	if (pMarkDeviceAsError->Reason != D3DKMT_DEVICE_ERROR_REASON_GENERIC &&
	    pMarkDeviceAsError->Reason != D3DKMT_DEVICE_ERROR_REASON_DRIVER_ERROR)
		return STATUS_INVALID_PARAMETER;
	return nf_device_control(pMarkDeviceAsError->hDevice,
				 DRM_NFENCE_DEVICE_OP_MARK_ERROR, &args);
}

NTSTATUS D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *pDestroyDevice)
{
	if (!pDestroyDevice)
		return STATUS_INVALID_PARAMETER;
	/*
	 * The kernel destroys the device's allocations, contexts, queues and
	 * fences with it; the registry closes their handles.
	 */
	return nf_handle_close(pDestroyDevice->hDevice, NF_HANDLE_DEVICE);
}
