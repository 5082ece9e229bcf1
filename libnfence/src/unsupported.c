/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The entry points of WSL's D3DKMT library that nfence does not have:
 * each returns STATUS_NOT_SUPPORTED and reads nothing of its argument, so
 * that a program written for WSL links and learns at run time what it
 * cannot do. Documentation/libnfence.rst ("Entry points of WSL's D3DKMT")
 * says for each why: nfence has no such service, or its kernel driver
 * does not have it yet.
 */
#include <nfence/d3dkmthk.h>

NTSTATUS D3DKMTChangeVideoMemoryReservation(const D3DKMT_CHANGEVIDEOMEMORYRESERVATION *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTCreatePagingQueue(D3DKMT_CREATEPAGINGQUEUE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTCreateSynchronizationObject(D3DKMT_CREATESYNCHRONIZATIONOBJECT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTDestroyAllocation(const D3DKMT_DESTROYALLOCATION *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTDestroyPagingQueue(D3DDDI_DESTROYPAGINGQUEUE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTEscape(const D3DKMT_ESCAPE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTEvict(D3DKMT_EVICT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTFlushHeapTransitions(const D3DKMT_FLUSHHEAPTRANSITIONS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTFreeGpuVirtualAddress(const D3DKMT_FREEGPUVIRTUALADDRESS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTGetAllocationPriority(const D3DKMT_GETALLOCATIONPRIORITY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTGetContextInProcessSchedulingPriority(D3DKMT_GETCONTEXTINPROCESSSCHEDULINGPRIORITY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTGetSharedResourceAdapterLuid(D3DKMT_GETSHAREDRESOURCEADAPTERLUID *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTInvalidateCache(const D3DKMT_INVALIDATECACHE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTMakeResident(D3DDDI_MAKERESIDENT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTMapGpuVirtualAddress(D3DDDI_MAPGPUVIRTUALADDRESS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTOfferAllocations(const D3DKMT_OFFERALLOCATIONS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTOpenResource(D3DKMT_OPENRESOURCE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTOpenResourceFromNtHandle(D3DKMT_OPENRESOURCEFROMNTHANDLE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTOpenSynchronizationObject(D3DKMT_OPENSYNCHRONIZATIONOBJECT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTQueryAllocationResidency(const D3DKMT_QUERYALLOCATIONRESIDENCY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTQueryResourceInfo(D3DKMT_QUERYRESOURCEINFO *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTQueryResourceInfoFromNtHandle(D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTQueryStatistics(const D3DKMT_QUERYSTATISTICS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTReclaimAllocations2(D3DKMT_RECLAIMALLOCATIONS2 *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTRender(D3DKMT_RENDER *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTReserveGpuVirtualAddress(D3DDDI_RESERVEGPUVIRTUALADDRESS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTSetAllocationPriority(const D3DKMT_SETALLOCATIONPRIORITY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTSetContextInProcessSchedulingPriority(const D3DKMT_SETCONTEXTINPROCESSSCHEDULINGPRIORITY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTShareObjectWithHost(D3DKMT_SHAREOBJECTWITHHOST *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTSignalSynchronizationObject(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTSignalSynchronizationObject2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTUpdateAllocationProperty(D3DDDI_UPDATEALLOCPROPERTY *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTUpdateGpuVirtualAddress(const D3DKMT_UPDATEGPUVIRTUALADDRESS *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTWaitForSynchronizationObject(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}

NTSTATUS D3DKMTWaitForSynchronizationObject2(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 *pData)
{
	(void)pData;
	return STATUS_NOT_SUPPORTED;
}
