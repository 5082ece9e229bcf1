/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Native fences (WDDM 3.1): D3DKMTCreateNativeFence and
 * D3DKMTOpenNativeFenceFromNtHandle over DRM_IOCTL_NFENCE_FENCE_CREATE and
 * _OPEN. The handle is a sync object (syncobj.c), which the sync object
 * calls take: sharing, destruction, CPU and GPU waits and signals. A
 * native fence handle cannot exist on an adapter without native fences:
 * the open refuses one before asking the kernel (nf_syncobj_open()).
 */
#include <stddef.h>

#include "syncobj.h"

/*
 * nf_fence_pdd_ok() - whether a native fence's PrivateDriverData is all
 * zero: the nfence kernel driver takes none, and data meant for a driver
 * that would read it must not be dropped without a word.
 */
static bool nf_fence_pdd_ok(const BYTE *pdd)
{
	for (size_t i = 0; i < D3DDDI_NATIVE_FENCE_PDD_SIZE; i++)
		if (pdd[i])
			return false;
	return true;
}

NTSTATUS D3DKMTCreateNativeFence(D3DKMT_CREATENATIVEFENCE *pCreateNativeFence)
{
	D3DKMT_CREATENATIVEFENCE *p = pCreateNativeFence;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	uint32_t kflags;
	NTSTATUS st;

	if (!p || p->Flags.Value || !nf_fence_pdd_ok(p->PrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	if ((UINT)p->Info.Type != D3DDDI_NATIVEFENCE_TYPE_DEFAULT &&
	    (UINT)p->Info.Type != D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU)
		return STATUS_INVALID_PARAMETER;
	st = nf_syncobj_flags(p->Info.Flags, false, &kflags);
	if (!NT_SUCCESS(st))
		return st;

	st = nf_syncobj_create(p->hDevice,
			       (UINT)p->Info.Type == D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU ?
			       DRM_NFENCE_FENCE_TYPE_INTRA_GPU :
			       DRM_NFENCE_FENCE_TYPE_DEFAULT,
			       kflags, p->Info.EngineAffinity,
			       p->Info.InitialFenceValue, &handle, &mapping);
	if (!NT_SUCCESS(st))
		return st;

	p->hSyncObject = handle;
	p->Info.NativeFenceMapping.CurrentValueCpuVa = mapping.CurrentValueCpuVa;
	p->Info.NativeFenceMapping.CurrentValueGpuVa = mapping.CurrentValueGpuVa;
	p->Info.NativeFenceMapping.MonitoredValueGpuVa =
		mapping.MonitoredValueGpuVa;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTOpenNativeFenceFromNtHandle(D3DKMT_OPENNATIVEFENCEFROMNTHANDLE *pOpen)
{
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!pOpen || !nf_fence_pdd_ok(pOpen->PrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	st = nf_syncobj_open(pOpen->hNtHandle, pOpen->hDevice, pOpen->Flags,
			     pOpen->EngineAffinity, true, &handle, &mapping);
	if (!NT_SUCCESS(st))
		return st;

	pOpen->hSyncObject = handle;
	pOpen->NativeFenceMapping.CurrentValueCpuVa = mapping.CurrentValueCpuVa;
	pOpen->NativeFenceMapping.CurrentValueGpuVa = mapping.CurrentValueGpuVa;
	pOpen->NativeFenceMapping.MonitoredValueGpuVa =
		mapping.MonitoredValueGpuVa;
	return STATUS_SUCCESS;
}
