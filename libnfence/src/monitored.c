/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * WDDM 2.x monitored fences as sync objects:
 * D3DKMTCreateSynchronizationObject2 and D3DKMTOpenSyncObjectFromNtHandle2
 * over DRM_IOCTL_NFENCE_FENCE_CREATE (DRM_NFENCE_FENCE_MONITORED) and
 * _OPEN. The handle is a sync object as a native fence's is (fence.c), so
 * the CPU wait and signal calls, sharing, destruction and the hardware
 * queue calls take it unchanged.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "fence.h"

NTSTATUS D3DKMTCreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *pCreate)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *p = pCreate;
	struct drm_nfence_fence_create args;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	struct nf_device *dev;
	uint32_t kflags;
	NTSTATUS st;

	if (!p)
		return STATUS_INVALID_PARAMETER;
	switch (p->Info.Type) {
	case D3DDDI_MONITORED_FENCE:
		break;
	case D3DDDI_SYNCHRONIZATION_MUTEX:
	case D3DDDI_SEMAPHORE:
	case D3DDDI_FENCE:
	case D3DDDI_CPU_NOTIFICATION:
	case D3DDDI_PERIODIC_MONITORED_FENCE:
		return STATUS_NOT_SUPPORTED;
	default:
		return STATUS_INVALID_PARAMETER;
	}
	st = nf_fence_flags(p->Info.Flags, false, &kflags);
	if (!NT_SUCCESS(st))
		return st;
	/* A cross-adapter monitored fence is Windows'; nfence has none. */
	if (p->Info.Flags.CrossAdapter)
		return STATUS_NOT_SUPPORTED;

	dev = nf_device_lookup(p->hDevice);
	if (!dev)
		return STATUS_INVALID_HANDLE;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	args.flags = kflags | DRM_NFENCE_FENCE_MONITORED;
	args.engine_affinity = p->Info.MonitoredFence.EngineAffinity;
	args.initial_value = p->Info.MonitoredFence.InitialFenceValue;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_FENCE_CREATE,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_syncobj_new(dev, args.handle, &args.mapping, false,
				    &handle, &mapping, NULL);
	nf_device_put(dev);
	if (!NT_SUCCESS(st))
		return st;

	p->hSyncObject = handle;
	p->Info.MonitoredFence.FenceValueCPUVirtualAddress =
		mapping.CurrentValueCpuVa;
	p->Info.MonitoredFence.FenceValueGPUVirtualAddress =
		mapping.CurrentValueGpuVa;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTOpenSyncObjectFromNtHandle2(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *pOpen)
{
	struct drm_nfence_fence_open args;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	struct nf_device *dev;
	uint32_t kflags;
	intptr_t fd;
	NTSTATUS st;

	if (!pOpen)
		return STATUS_INVALID_PARAMETER;
	st = nf_fence_flags(pOpen->Flags, true, &kflags);
	if (!NT_SUCCESS(st))
		return st;
	/* NULL is "no handle"; anything else must be a file descriptor. */
	fd = (intptr_t)pOpen->hNtHandle;
	if (fd <= 0 || fd > INT_MAX)
		return STATUS_INVALID_HANDLE;

	dev = nf_device_lookup(pOpen->hDevice);
	if (!dev)
		return STATUS_INVALID_HANDLE;

	memset(&args, 0, sizeof(args));
	args.fd = (int32_t)fd;
	args.device = dev->kernel_handle;
	args.flags = kflags;
	args.engine_affinity = pOpen->MonitoredFence.EngineAffinity;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_FENCE_OPEN,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_syncobj_new(dev, args.handle, &args.mapping, false,
				    &handle, &mapping, NULL);
	nf_device_put(dev);
	if (!NT_SUCCESS(st))
		return st;

	pOpen->hSyncObject = handle;
	pOpen->MonitoredFence.FenceValueCPUVirtualAddress =
		mapping.CurrentValueCpuVa;
	pOpen->MonitoredFence.FenceValueGPUVirtualAddress =
		mapping.CurrentValueGpuVa;
	return STATUS_SUCCESS;
}
