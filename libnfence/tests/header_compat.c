/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Compiled, not run, as C11 (-pedantic) and as C++17: startup code written
 * the way a WSL D3DKMT program is (Windows names only, no designated
 * initializers, which C++17 lacks), with every Windows layout
 * (windows_layouts.h, which the build makes from windows-layouts.txt) and
 * the Windows values asserted at compile time in both languages. "make
 * check" builds it; a name missing from <nfence/d3dkmthk.h> or a layout
 * that differs from Windows' fails the build.
 */
#include <nfence/d3dkmthk.h>

#include "windows_layouts.h"

#define NF_ASSERT(e, m)	NF_WIN_ASSERT(e, m)

NF_ASSERT(sizeof(BOOLEAN) == 1, "BOOLEAN");
NF_ASSERT(sizeof(WCHAR) == 4, "WCHAR is wchar_t, as in WSL");
NF_ASSERT(sizeof(ULONGLONG) == 8, "ULONGLONG");
NF_ASSERT(sizeof(GUID) == 16, "GUID");
NF_ASSERT(sizeof(D3DKMT_WDDM_3_1_CAPS) == 4, "3.1 caps");
/* Flag words whose bits no reference gives: the word alone, as a UINT. */
NF_ASSERT(sizeof(D3DDDI_CREATEHWCONTEXTFLAGS) == 4, "hw context flags");
NF_ASSERT(NF_WIN_ALIGNOF(D3DDDI_CREATEHWCONTEXTFLAGS) == 4,
	  "hw context flags");
NF_ASSERT(sizeof(D3DKMT_SUBMITCOMMANDFLAGS) == 4, "submit command flags");
NF_ASSERT(NF_WIN_ALIGNOF(D3DKMT_SUBMITCOMMANDFLAGS) == 4,
	  "submit command flags");
NF_ASSERT(D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS == 64, "broadcast contexts");
NF_ASSERT(sizeof(D3DKMT_MEMORY_SEGMENT_GROUP) == 4, "an enum, as Windows'");
NF_ASSERT(D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL == 0, "LOCAL");
NF_ASSERT(D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL == 1, "NON_LOCAL");
NF_ASSERT(KMTQAITYPE_GETSEGMENTSIZE == 3, "3");
NF_ASSERT(KMTQAITYPE_ADAPTERTYPE == 15, "15");
NF_ASSERT(KMTQAITYPE_NODEMETADATA == 25, "25");
NF_ASSERT(KMTQAITYPE_PHYSICALADAPTERCOUNT == 30, "30");
NF_ASSERT(KMTQAITYPE_PHYSICALADAPTERDEVICEIDS == 31, "31");
NF_ASSERT(KMTQAITYPE_ADAPTERTYPE_RENDER == 57, "57");
NF_ASSERT(KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID == 60, "60");
NF_ASSERT(KMTQAITYPE_DRIVER_DESCRIPTION == 65, "65");
NF_ASSERT(KMTQAITYPE_DRIVER_DESCRIPTION_RENDER == 66, "66");
NF_ASSERT(KMTQAITYPE_WDDM_2_7_CAPS == 70, "70");
NF_ASSERT(KMTQAITYPE_WDDM_2_9_CAPS == 75, "75");
NF_ASSERT(KMTQAITYPE_WDDM_3_0_CAPS == 77, "77");
NF_ASSERT(KMTQAITYPE_WDDM_3_1_CAPS == 80, "80");
NF_ASSERT(sizeof(D3DKMT_DEVICE_ERROR_REASON) == 4, "error reason");
NF_ASSERT((UINT)D3DKMT_DEVICE_ERROR_REASON_GENERIC == 0x80000000u, "generic");
NF_ASSERT((UINT)D3DKMT_DEVICE_ERROR_REASON_DRIVER_ERROR == 0x80000006u,
	  "driver error");
NF_ASSERT(D3DKMT_DEVICESTATE_PAGE_FAULT == 5, "page fault state");
NF_ASSERT(D3DDDI_MONITORED_FENCE == 5, "monitored fence");
NF_ASSERT(D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT == 7, "dma page fault");

static NTSTATUS query(D3DKMT_HANDLE hAdapter, KMTQUERYADAPTERINFOTYPE Type,
		      void *pData, UINT Size)
{
	D3DKMT_QUERYADAPTERINFO q;

	q.hAdapter = hAdapter;
	q.Type = Type;
	q.pPrivateDriverData = pData;
	q.PrivateDriverDataSize = Size;
	return D3DKMTQueryAdapterInfo(&q);
}

/* What a runtime asks each adapter at startup; returns how many answered. */
int startup(void);

int startup(void)
{
	D3DKMT_ADAPTERINFO adapters[16];
	D3DKMT_ENUMADAPTERS3 e;
	D3DKMT_ADAPTERTYPE type;
	D3DKMT_QUERY_DEVICE_IDS ids;
	D3DKMT_WDDM_2_7_CAPS caps27;
	D3DKMT_WDDM_2_9_CAPS caps29;
	D3DKMT_WDDM_3_0_CAPS caps30;
	D3DKMT_PHYSICAL_ADAPTER_COUNT count;
	D3DKMT_NODEMETADATA node;
	D3DKMT_SEGMENTSIZEINFO sizes;
	static D3DKMT_DRIVER_DESCRIPTION desc;
	GUID guid;
	BOOLEAN render;
	WCHAR first;
	ULONG i;
	int answered = 0;

	e.Filter.Value = 0;
	e.Filter.IncludeComputeOnly = 1;
	e.NumAdapters = 16;
	e.pAdapters = adapters;
	if (!NT_SUCCESS(D3DKMTEnumAdapters3(&e)))
		return -1;
	for (i = 0; i < e.NumAdapters; i++) {
		D3DKMT_HANDLE h = adapters[i].hAdapter;

		if (NT_SUCCESS(query(h, KMTQAITYPE_ADAPTERTYPE_RENDER, &type,
				     sizeof(type)))) {
			render = type.RenderSupported && !type.ComputeOnly;
			answered += render;
		}
		if (NT_SUCCESS(query(h, KMTQAITYPE_ADAPTERTYPE, &type,
				     sizeof(type))))
			answered += type.SoftwareDevice;
		ids.PhysicalAdapterIndex = 0;
		if (NT_SUCCESS(query(h, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids,
				     sizeof(ids))))
			answered += ids.DeviceIds.VendorID != 0;
		if (NT_SUCCESS(query(h, KMTQAITYPE_WDDM_2_7_CAPS, &caps27,
				     sizeof(caps27))))
			answered += caps27.HwSchEnabled;
		if (NT_SUCCESS(query(h, KMTQAITYPE_WDDM_2_9_CAPS, &caps29,
				     sizeof(caps29))))
			answered += caps29.HwSchSupportState ==
				    DXGK_FEATURE_SUPPORT_ALWAYS_ON;
		if (NT_SUCCESS(query(h, KMTQAITYPE_WDDM_3_0_CAPS, &caps30,
				     sizeof(caps30))))
			answered += caps30.HwFlipQueueSupportState ==
				    DXGK_FEATURE_SUPPORT_ALWAYS_OFF;
		if (NT_SUCCESS(query(h, KMTQAITYPE_PHYSICALADAPTERCOUNT, &count,
				     sizeof(count))))
			answered += count.Count == 1;
		node.NodeOrdinalAndAdapterIndex = 0;
		if (NT_SUCCESS(query(h, KMTQAITYPE_NODEMETADATA, &node,
				     sizeof(node))))
			answered += node.NodeData.EngineType == DXGK_ENGINE_TYPE_3D;
		if (NT_SUCCESS(query(h, KMTQAITYPE_GETSEGMENTSIZE, &sizes,
				     sizeof(sizes))))
			answered += sizes.DedicatedVideoMemorySize != 0;
		{
			/* A runtime's budget check, as DXGI's QueryVideoMemoryInfo. */
			D3DKMT_QUERYVIDEOMEMORYINFO vm;

			vm.hProcess = NULL;
			vm.hAdapter = h;
			vm.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
			vm.Budget = vm.CurrentUsage = 0;
			vm.CurrentReservation = vm.AvailableForReservation = 0;
			vm.PhysicalAdapterIndex = 0;
			if (NT_SUCCESS(D3DKMTQueryVideoMemoryInfo(&vm)))
				answered += vm.CurrentUsage <= vm.Budget;
		}
		if (NT_SUCCESS(query(h, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
				     &guid, sizeof(guid))))
			answered += guid.Data1 != 0;
		if (NT_SUCCESS(query(h, KMTQAITYPE_DRIVER_DESCRIPTION, &desc,
				     sizeof(desc)))) {
			first = desc.DriverDescription[0];
			answered += first == L'n';
		}
		{
			D3DKMT_CLOSEADAPTER c;

			c.hAdapter = h;
			D3DKMTCloseAdapter(&c);
		}
	}
	return answered;
}

/*
 * A hardware context and a context-level submission, written the way a
 * WSL program fills the structs (no designated initializers, the flag
 * words through Value).
 */
NTSTATUS submit_on_hw_context(D3DKMT_HANDLE hDevice,
			      D3DGPU_VIRTUAL_ADDRESS Commands, UINT Length);

NTSTATUS submit_on_hw_context(D3DKMT_HANDLE hDevice,
			      D3DGPU_VIRTUAL_ADDRESS Commands, UINT Length)
{
	D3DKMT_CREATEHWCONTEXT c;
	D3DKMT_DESTROYHWCONTEXT d;
	D3DKMT_SUBMITCOMMAND s;
	NTSTATUS st;

	c.hDevice = hDevice;
	c.NodeOrdinal = 0;
	c.EngineAffinity = 0;
	c.Flags.Value = 0;
	c.PrivateDriverDataSize = 0;
	c.pPrivateDriverData = NULL;
	st = D3DKMTCreateHwContext(&c);
	if (!NT_SUCCESS(st))
		return st;
	s.Commands = Commands;
	s.CommandLength = Length;
	s.Flags.Value = 0;
	s.PresentHistoryToken = 0;
	s.BroadcastContextCount = 1;
	s.BroadcastContext[0] = c.hHwContext;
	s.pPrivateDriverData = NULL;
	s.PrivateDriverDataSize = 0;
	s.NumPrimaries = 0;
	s.NumHistoryBuffers = 0;
	s.HistoryBufferArray = NULL;
	st = D3DKMTSubmitCommand(&s);
	d.hHwContext = c.hHwContext;
	D3DKMTDestroyHwContext(&d);
	return st;
}
