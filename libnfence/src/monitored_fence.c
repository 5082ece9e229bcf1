/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * WDDM 2.x monitored fences as sync objects:
 * D3DKMTCreateSynchronizationObject2 and D3DKMTOpenSyncObjectFromNtHandle2
 * over DRM_IOCTL_NFENCE_FENCE_CREATE (DRM_NFENCE_FENCE_MONITORED) and
 * _OPEN. The handle is a sync object as a native fence's is (syncobj.c), so
 * the CPU wait and signal calls, sharing, destruction and the hardware
 * queue calls take it unchanged.
 */
#include <stdint.h>

#include "syncobj.h"

NTSTATUS D3DKMTCreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *pCreate)
{
	D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *p = pCreate;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
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
	/*
	 * CrossAdapter (with Shared) makes a fence that opens on every
	 * adapter: as a monitored fence on adapters without native fences,
	 * as a native fence on the others. The kernel checks the flags.
	 */
	st = nf_syncobj_flags(p->Info.Flags, false, &kflags);
	if (!NT_SUCCESS(st))
		return st;

	st = nf_syncobj_create(p->hDevice, DRM_NFENCE_FENCE_TYPE_DEFAULT,
			       kflags | DRM_NFENCE_FENCE_MONITORED,
			       p->Info.MonitoredFence.EngineAffinity,
			       p->Info.MonitoredFence.InitialFenceValue, &handle,
			       &mapping);
	if (!NT_SUCCESS(st))
		return st;

	p->hSyncObject = handle;
	p->Info.MonitoredFence.FenceValueCPUVirtualAddress =
		mapping.CurrentValueCpuVa;
	p->Info.MonitoredFence.FenceValueGPUVirtualAddress =
		mapping.CurrentValueGpuVa;
	/* No global share handles: sharing is through NT handles. */
	p->Info.SharedHandle = 0;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTOpenSyncObjectFromNtHandle2(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *pOpen)
{
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!pOpen)
		return STATUS_INVALID_PARAMETER;
	st = nf_syncobj_open(pOpen->hNtHandle, pOpen->hDevice, pOpen->Flags,
			     pOpen->MonitoredFence.EngineAffinity, false,
			     &handle, &mapping);
	if (!NT_SUCCESS(st))
		return st;

	pOpen->hSyncObject = handle;
	pOpen->MonitoredFence.FenceValueCPUVirtualAddress =
		mapping.CurrentValueCpuVa;
	pOpen->MonitoredFence.FenceValueGPUVirtualAddress =
		mapping.CurrentValueGpuVa;
	return STATUS_SUCCESS;
}
