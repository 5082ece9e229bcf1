/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * d3dkmthk.h - the D3DKMT thunk interface of libnfence.
 *
 * Code written against Microsoft's d3dkmthk.h for the features nfence
 * implements ports by changing includes: functions, structs, fields, enums
 * and status codes carry Microsoft's names and, where Windows has them,
 * Microsoft's numeric values. Additions specific to nfence use the prefix
 * NFence (functions), D3DKMT_NFENCE_ (types) or KMTQAITYPE_NFENCE_ (query
 * types); what a UMD would own rather than the thunk (the allocation
 * description passed as private driver data, the command encoder) uses
 * NFENCE_.
 *
 * Linux conventions:
 * - D3DKMT_HANDLE values are per process and look like Windows' local
 *   handles: bits 0xC0000000 set, the low 6 bits zero, handles made one
 *   after the other 0x40 apart. So 0 is never valid and no file
 *   descriptor's value ever is. A closed handle is not handed out again
 *   until 2^24 more handles have been issued.
 * - HANDLE carries a file descriptor as (HANDLE)(intptr_t)fd, NULL meaning
 *   "none"; closing an NT handle is close(fd).
 * - Every entry point is thread-safe and returns an NTSTATUS; a NULL
 *   argument pointer is STATUS_INVALID_PARAMETER, never a crash.
 * - A D3DKMT handle that names nothing the call can use (0, closed, of
 *   another kind, device or adapter, another process's, a file
 *   descriptor's value) is STATUS_INVALID_PARAMETER, as on Windows;
 *   STATUS_INVALID_HANDLE is for a bad NT handle (a closed or foreign file
 *   descriptor).
 * - All handles opened through one adapter (one LUID) in a process share
 *   one open file of that adapter's render node, as all D3DKMT objects of a
 *   Windows process share one per-process adapter state.
 * - D3DKMT handles do not survive fork(), as in WSL: in the child every
 *   inherited handle names nothing (STATUS_INVALID_PARAMETER, nothing
 *   reaches the kernel); the child enumerates or opens its adapters again
 *   and gets render node files, and so objects, of its own. NT handles
 *   (file descriptors) stay valid.
 */
#ifndef _NFENCE_D3DKMTHK_H_
#define _NFENCE_D3DKMTHK_H_

#include <stddef.h>
#include <stdint.h>

/*
 * The layouts below are those WSL's D3DKMT headers give on 64-bit
 * little-endian Linux (LP64: pointers and 64-bit fields 8 bytes, the low
 * half of a 64-bit word first). A 32-bit build would align UINT64 fields
 * to 4 bytes and a big-endian one swap the halves of
 * AtomicWraparoundAndEntryIndex: neither matches Windows or the kernel.
 */
#if !defined(__LP64__) || !defined(__BYTE_ORDER__) || \
	__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "<nfence/d3dkmthk.h> is for 64-bit little-endian (LP64) machines only"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* NFENCE_EXPORT marks the functions the shared library exports. */
#define NFENCE_EXPORT __attribute__((visibility("default")))

/*
 * Windows base types, with their Windows sizes (LLP64: LONG is 32-bit), as
 * WSL's headers define them on Linux. WCHAR is wchar_t: 4 bytes on Linux,
 * as in WSL, so a WCHAR string holds UTF-32 code points, not UTF-16.
 */
typedef uint8_t BYTE;
typedef unsigned char BOOLEAN;
typedef uint32_t UINT;
typedef uint64_t UINT64;
typedef uint64_t ULONGLONG;
typedef uint32_t DWORD;
typedef uint32_t ULONG;
typedef int32_t LONG;
typedef int32_t BOOL;
typedef int32_t INT;
typedef wchar_t WCHAR;
typedef void VOID;
typedef void *HANDLE;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* LUID: locally unique identifier of an adapter. */
typedef struct _LUID {
	DWORD LowPart;
	LONG HighPart;
} LUID;

/*
 * ULARGE_INTEGER: an unsigned 64-bit value that also names its halves, as
 * Windows' winnt.h declares it (LowPart is the low half: offset 0 on the
 * little-endian machines nfence runs on).
 */
typedef union _ULARGE_INTEGER {
	struct {
		DWORD LowPart;
		DWORD HighPart;
	};
	struct {
		DWORD LowPart;
		DWORD HighPart;
	} u;
	ULONGLONG QuadPart;
} ULARGE_INTEGER;

/*
 * GUID: 16 bytes, Data1 to Data4 in this order. GUID_DEFINED, as in
 * Windows' guiddef.h, lets another header's GUID of the same layout win.
 */
#ifndef GUID_DEFINED
#define GUID_DEFINED
typedef struct _GUID {
	uint32_t Data1;
	uint16_t Data2;
	uint16_t Data3;
	uint8_t Data4[8];
} GUID;
#endif

/* D3DKMT_HANDLE: a kernel-mode thunk object handle, 0 is never valid. */
typedef UINT D3DKMT_HANDLE;

/* D3DGPU_VIRTUAL_ADDRESS: an address in a GPU virtual address space. */
typedef UINT64 D3DGPU_VIRTUAL_ADDRESS;

/*
 * NTSTATUS and the status codes libnfence returns, with the values of
 * Windows' ntstatus.h. Severity is in the top two bits: success (00),
 * informational (01), warning (10), error (11). NT_SUCCESS() is true for
 * success and informational codes only, so STATUS_TIMEOUT and
 * STATUS_PENDING count as success, exactly as on Windows.
 */
typedef int32_t NTSTATUS;

#define NT_SUCCESS(Status)	(((NTSTATUS)(Status)) >= 0)

#define STATUS_SUCCESS				((NTSTATUS)0x00000000)
#define STATUS_WAIT_0				((NTSTATUS)0x00000000)
#define STATUS_USER_APC				((NTSTATUS)0x000000C0)
#define STATUS_ALERTED				((NTSTATUS)0x00000101)
#define STATUS_TIMEOUT				((NTSTATUS)0x00000102)
#define STATUS_PENDING				((NTSTATUS)0x00000103)
#define STATUS_BUFFER_OVERFLOW			((NTSTATUS)0x80000005)
#define STATUS_DEVICE_BUSY			((NTSTATUS)0x80000011)
#define STATUS_UNSUCCESSFUL			((NTSTATUS)0xC0000001)
#define STATUS_NOT_IMPLEMENTED			((NTSTATUS)0xC0000002)
#define STATUS_ACCESS_VIOLATION			((NTSTATUS)0xC0000005)
#define STATUS_INVALID_HANDLE			((NTSTATUS)0xC0000008)
#define STATUS_INVALID_PARAMETER		((NTSTATUS)0xC000000D)
#define STATUS_INVALID_DEVICE_REQUEST		((NTSTATUS)0xC0000010)
#define STATUS_NO_MEMORY			((NTSTATUS)0xC0000017)
#define STATUS_ACCESS_DENIED			((NTSTATUS)0xC0000022)
#define STATUS_BUFFER_TOO_SMALL			((NTSTATUS)0xC0000023)
#define STATUS_OBJECT_TYPE_MISMATCH		((NTSTATUS)0xC0000024)
#define STATUS_INTEGER_OVERFLOW			((NTSTATUS)0xC0000095)
#define STATUS_INSUFFICIENT_RESOURCES		((NTSTATUS)0xC000009A)
#define STATUS_NOT_SUPPORTED			((NTSTATUS)0xC00000BB)
#define STATUS_CANCELLED			((NTSTATUS)0xC0000120)
#define STATUS_INVALID_DEVICE_STATE		((NTSTATUS)0xC0000184)
#define STATUS_NOT_FOUND			((NTSTATUS)0xC0000225)
#define STATUS_DEVICE_REMOVED			((NTSTATUS)0xC00002B6)
#define STATUS_GRAPHICS_NO_VIDEO_MEMORY		((NTSTATUS)0xC01E0100)
#define STATUS_GRAPHICS_CANT_LOCK_MEMORY	((NTSTATUS)0xC01E0101)
#define STATUS_GRAPHICS_ALLOCATION_BUSY		((NTSTATUS)0xC01E0102)
#define STATUS_GRAPHICS_TOO_MANY_REFERENCES	((NTSTATUS)0xC01E0103)
#define STATUS_GRAPHICS_TRY_AGAIN_LATER		((NTSTATUS)0xC01E0104)
#define STATUS_GRAPHICS_TRY_AGAIN_NOW		((NTSTATUS)0xC01E0105)
#define STATUS_GRAPHICS_ALLOCATION_INVALID	((NTSTATUS)0xC01E0106)

/* ------------------------------------------------------------------ */
/* Adapters                                                           */
/* ------------------------------------------------------------------ */

/* D3DKMT_ADAPTERINFO: one adapter returned by D3DKMTEnumAdapters2. */
typedef struct _D3DKMT_ADAPTERINFO {
	D3DKMT_HANDLE hAdapter;		/* out: open adapter handle */
	LUID AdapterLuid;		/* out: the adapter's LUID */
	ULONG NumOfSources;		/* out: 0, nfence has no display */
	BOOL bPrecisePresentRegionsPreferred; /* out: FALSE */
} D3DKMT_ADAPTERINFO;

/* D3DKMT_ENUMADAPTERS2: argument of D3DKMTEnumAdapters2. */
typedef struct _D3DKMT_ENUMADAPTERS2 {
	ULONG NumAdapters;		/* in: entries at pAdapters; out: adapters */
	D3DKMT_ADAPTERINFO *pAdapters;	/* out: NULL to only count */
} D3DKMT_ENUMADAPTERS2;

/**
 * D3DKMTEnumAdapters2() - enumerate the nfence adapters
 * @pEnumAdapters: in/out arguments
 *
 * Scans the render nodes (/dev/dri/renderD*, or the directory named by the
 * environment variable NFENCE_DRI_DIR) for nfence adapters, ordered by
 * adapter index. With @pAdapters NULL, only sets @NumAdapters to the
 * number of adapters present (Windows answers the size of its adapter
 * table instead, a number nfence's references do not give): an array of
 * that many entries is what the next call needs. Otherwise fills
 * @pAdapters and sets @NumAdapters; every returned hAdapter is open and
 * must be closed with D3DKMTCloseAdapter().
 *
 * The scan skips a node that is not nfence's, that cannot be opened (it
 * is gone, has no driver, may not be opened by this process, another
 * driver refuses it) or whose adapter cannot be queried (it is lost),
 * unless the reason is the process's: out of file descriptors (EMFILE,
 * ENFILE) or memory, the call fails, with nothing opened, rather than
 * leave an adapter out.
 *
 * Return: STATUS_SUCCESS (also with no adapter at all);
 * STATUS_BUFFER_TOO_SMALL if @NumAdapters is smaller than the number of
 * adapters, @NumAdapters then set to that number and nothing opened;
 * STATUS_INVALID_PARAMETER if @pEnumAdapters is NULL; STATUS_NO_MEMORY;
 * STATUS_INSUFFICIENT_RESOURCES if the process or the system has no file
 * descriptor left; otherwise see NFenceStatusFromErrno() (the DRI
 * directory cannot be read).
 */
NFENCE_EXPORT NTSTATUS D3DKMTEnumAdapters2(D3DKMT_ENUMADAPTERS2 *pEnumAdapters);

/*
 * D3DKMT_ENUMADAPTERS_FILTER: which kinds of adapter D3DKMTEnumAdapters3
 * adds to the render adapters it always returns.
 */
typedef union _D3DKMT_ENUMADAPTERS_FILTER {
	struct {
		ULONGLONG IncludeComputeOnly	: 1; /* compute-only adapters */
		ULONGLONG IncludeDisplayOnly	: 1; /* display-only adapters */
		ULONGLONG Reserved		: 62; /* must be 0 */
	};
	ULONGLONG Value;
} D3DKMT_ENUMADAPTERS_FILTER;

/* D3DKMT_ENUMADAPTERS3: argument of D3DKMTEnumAdapters3. */
typedef struct _D3DKMT_ENUMADAPTERS3 {
	D3DKMT_ENUMADAPTERS_FILTER Filter; /* in */
	ULONG NumAdapters;		/* in: entries at pAdapters; out: adapters */
	D3DKMT_ADAPTERINFO *pAdapters;	/* out: NULL to only count */
} D3DKMT_ENUMADAPTERS3;

/**
 * D3DKMTEnumAdapters3() - enumerate the nfence adapters, with a filter
 * @pEnumAdapters: in/out arguments
 *
 * D3DKMTEnumAdapters2() with a filter. Every nfence adapter renders and
 * computes (neither compute-only nor display-only), so IncludeComputeOnly
 * and IncludeDisplayOnly change nothing: the same adapters as
 * D3DKMTEnumAdapters2(), in the same order, with the same count-only and
 * too-small rules.
 *
 * Return: as D3DKMTEnumAdapters2(); STATUS_INVALID_PARAMETER, with nothing
 * written, also when a reserved bit of @Filter is set.
 */
NFENCE_EXPORT NTSTATUS D3DKMTEnumAdapters3(D3DKMT_ENUMADAPTERS3 *pEnumAdapters);

/* D3DKMT_OPENADAPTERFROMLUID: argument of D3DKMTOpenAdapterFromLuid. */
typedef struct _D3DKMT_OPENADAPTERFROMLUID {
	LUID AdapterLuid;		/* in: the adapter's LUID */
	D3DKMT_HANDLE hAdapter;		/* out: open adapter handle */
} D3DKMT_OPENADAPTERFROMLUID;

/**
 * D3DKMTOpenAdapterFromLuid() - open the adapter with a given LUID
 * @pAdapter: in: AdapterLuid; out: hAdapter
 *
 * Each successful call returns a new handle, to be closed with
 * D3DKMTCloseAdapter(). An adapter not yet open in the process is looked
 * for with the scan of D3DKMTEnumAdapters2(), which fails this call as it
 * fails that one.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pAdapter is NULL or
 * no nfence adapter has that LUID; STATUS_NO_MEMORY;
 * STATUS_INSUFFICIENT_RESOURCES if the process or the system has no file
 * descriptor left; otherwise as D3DKMTEnumAdapters2()'s scan.
 */
NFENCE_EXPORT NTSTATUS D3DKMTOpenAdapterFromLuid(D3DKMT_OPENADAPTERFROMLUID *pAdapter);

/* D3DKMT_CLOSEADAPTER: argument of D3DKMTCloseAdapter. */
typedef struct _D3DKMT_CLOSEADAPTER {
	D3DKMT_HANDLE hAdapter;		/* in: adapter handle to close */
} D3DKMT_CLOSEADAPTER;

/**
 * D3DKMTCloseAdapter() - close an adapter handle
 * @pAdapter: in: hAdapter
 *
 * Devices created on the adapter stay valid until destroyed; the adapter's
 * render node file is closed when its last handle and device are gone.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pAdapter is NULL;
 * STATUS_INVALID_PARAMETER if hAdapter is not an open adapter handle.
 */
NFENCE_EXPORT NTSTATUS D3DKMTCloseAdapter(const D3DKMT_CLOSEADAPTER *pAdapter);

/* ------------------------------------------------------------------ */
/* Adapter queries                                                    */
/* ------------------------------------------------------------------ */

/*
 * KMTQUERYADAPTERINFOTYPE: what D3DKMTQueryAdapterInfo returns. Only the
 * types listed here are implemented; Windows types not listed are not
 * provided by nfence (KMTQAITYPE_DRIVERVERSION, 13, among them: its answer
 * is a D3DKMT_DRIVERVERSION, an enum of WDDM versions whose numeric values
 * Microsoft's published documentation does not give). The Windows
 * types carry the WDK's values. The KMTQAITYPE_NFENCE_* values are
 * nfence's own, far above the Windows range ('N' 'F' in the high half).
 */
typedef enum _KMTQUERYADAPTERINFOTYPE {
	/* D3DKMT_SEGMENTSIZEINFO */
	KMTQAITYPE_GETSEGMENTSIZE			= 3,
	/* D3DKMT_ADAPTERTYPE */
	KMTQAITYPE_ADAPTERTYPE				= 15,
	/* D3DKMT_NODEMETADATA */
	KMTQAITYPE_NODEMETADATA				= 25,
	/* D3DKMT_PHYSICAL_ADAPTER_COUNT */
	KMTQAITYPE_PHYSICALADAPTERCOUNT			= 30,
	/* D3DKMT_QUERY_DEVICE_IDS */
	KMTQAITYPE_PHYSICALADAPTERDEVICEIDS		= 31,
	/* D3DKMT_ADAPTERTYPE */
	KMTQAITYPE_ADAPTERTYPE_RENDER			= 57,
	/* GUID */
	KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID		= 60,
	/* D3DKMT_DRIVER_DESCRIPTION */
	KMTQAITYPE_DRIVER_DESCRIPTION			= 65,
	/* D3DKMT_DRIVER_DESCRIPTION */
	KMTQAITYPE_DRIVER_DESCRIPTION_RENDER		= 66,
	/* D3DKMT_WDDM_2_7_CAPS */
	KMTQAITYPE_WDDM_2_7_CAPS			= 70,
	/* D3DKMT_WDDM_2_9_CAPS */
	KMTQAITYPE_WDDM_2_9_CAPS			= 75,
	/* D3DKMT_WDDM_3_0_CAPS */
	KMTQAITYPE_WDDM_3_0_CAPS			= 77,
	/* D3DKMT_WDDM_3_1_CAPS */
	KMTQAITYPE_WDDM_3_1_CAPS			= 80,

	/* D3DKMT_NFENCE_ADAPTER */
	KMTQAITYPE_NFENCE_ADAPTER			= 0x4E460000,
	/* D3DKMT_NFENCE_SEGMENTS (variable size) */
	KMTQAITYPE_NFENCE_SEGMENTS			= 0x4E460001,
	/* D3DKMT_NFENCE_ENGINES (variable size) */
	KMTQAITYPE_NFENCE_ENGINES			= 0x4E460002,
	/* D3DKMT_NFENCE_NATIVE_FENCE_CAPS */
	KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS		= 0x4E460003,
	/* D3DKMT_NFENCE_USERMODESUBMISSION_CAPS */
	KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS	= 0x4E460004,
	/* D3DKMT_NFENCE_TIMESTAMP */
	KMTQAITYPE_NFENCE_TIMESTAMP			= 0x4E460005,
} KMTQUERYADAPTERINFOTYPE;

/* D3DKMT_WDDM_3_1_CAPS: KMTQAITYPE_WDDM_3_1_CAPS. */
typedef struct _D3DKMT_WDDM_3_1_CAPS {
	union {
		struct {
			UINT NativeGpuFenceSupported	: 1;
			UINT Reserved			: 31;
		};
		UINT Value;
	};
} D3DKMT_WDDM_3_1_CAPS;

/*
 * D3DKMT_SEGMENTSIZEINFO: KMTQAITYPE_GETSEGMENTSIZE, from the segments the
 * kernel reports: DedicatedVideoMemorySize is the local (VRAM) segment,
 * SharedSystemMemorySize the system memory (aperture) segment, whose pages
 * are ordinary system memory; nfence reserves no system memory for the GPU
 * alone, so DedicatedSystemMemorySize is 0.
 */
typedef struct _D3DKMT_SEGMENTSIZEINFO {
	ULONGLONG DedicatedVideoMemorySize;	/* bytes */
	ULONGLONG DedicatedSystemMemorySize;	/* bytes */
	ULONGLONG SharedSystemMemorySize;	/* bytes */
} D3DKMT_SEGMENTSIZEINFO;

/*
 * D3DKMT_ADAPTERTYPE: KMTQAITYPE_ADAPTERTYPE and KMTQAITYPE_ADAPTERTYPE_RENDER.
 * An nfence adapter is RenderSupported and SoftwareDevice (a simulated GPU,
 * no hardware), with no display; every other bit is 0.
 */
typedef struct _D3DKMT_ADAPTERTYPE {
	union {
		struct {
			UINT RenderSupported		: 1;
			UINT DisplaySupported		: 1;
			UINT SoftwareDevice		: 1;
			UINT PostDevice			: 1;
			UINT HybridDiscrete		: 1;
			UINT HybridIntegrated		: 1;
			UINT IndirectDisplayDevice	: 1;
			UINT Paravirtualized		: 1;
			UINT ACGSupported		: 1;
			UINT SupportSetTimingsFromVidPn	: 1;
			UINT Detachable			: 1;
			UINT ComputeOnly		: 1;
			UINT Prototype			: 1;
			UINT RuntimePowerManagement	: 1;
			UINT Reserved			: 18;
		};
		UINT Value;
	};
} D3DKMT_ADAPTERTYPE;

/*
 * DXGK_ENGINE_TYPE: what a node (engine) executes. nfence's 3D and copy
 * engines are DXGK_ENGINE_TYPE_3D and DXGK_ENGINE_TYPE_COPY; this list has
 * no compute type, so its compute engines are DXGK_ENGINE_TYPE_OTHER (their
 * FriendlyName says "Compute").
 */
typedef enum _DXGK_ENGINE_TYPE {
	DXGK_ENGINE_TYPE_OTHER			= 0,
	DXGK_ENGINE_TYPE_3D			= 1,
	DXGK_ENGINE_TYPE_VIDEO_DECODE		= 2,
	DXGK_ENGINE_TYPE_VIDEO_ENCODE		= 3,
	DXGK_ENGINE_TYPE_VIDEO_PROCESSING	= 4,
	DXGK_ENGINE_TYPE_SCENE_ASSEMBLY		= 5,
	DXGK_ENGINE_TYPE_COPY			= 6,
	DXGK_ENGINE_TYPE_OVERLAY		= 7,
	DXGK_ENGINE_TYPE_CRYPTO			= 8,
} DXGK_ENGINE_TYPE;

/* DXGK_MAX_METADATA_NAME_LENGTH: WCHARs of DXGK_NODEMETADATA.FriendlyName */
#define DXGK_MAX_METADATA_NAME_LENGTH	32

/*
 * DXGK_NODEMETADATA_FLAGS: node properties. nfence sets UserModeSubmission
 * on the nodes whose engine takes user-mode submission (doorbells: the
 * engine's UserModeSubmissionSupported in KMTQAITYPE_NFENCE_ENGINES) and
 * no other bit: it makes no claim about the scheduling details the others
 * describe.
 */
typedef struct _DXGK_NODEMETADATA_FLAGS {
	union {
		struct {
			UINT ContextSchedulingSupported	: 1;
			UINT RingBufferFenceRelease	: 1;
			UINT SupportTrackedWorkload	: 1;
			/* the engine takes user-mode submission */
			UINT UserModeSubmission		: 1;
			UINT SupportBuildTestCommandBuffer : 1;
			UINT Reserved			: 11;
			UINT MaxInFlightHwQueueBuffers	: 16;
		};
		UINT Value;
	};
} DXGK_NODEMETADATA_FLAGS;

/*
 * The WDDM 2.7, 2.9 and 3.0 caps words, DXGK_NODEMETADATA,
 * D3DKMT_NODEMETADATA, DXGK_GPUCLOCKDATA and D3DKMT_QUERYCLOCKCALIBRATION
 * are byte-packed (#pragma pack(1)), as in Microsoft's headers, in WSL's
 * kernel uapi and in Windows' own metadata: their alignment is 1 and no
 * member is padded. Taking the address of one of their members whose type
 * is more aligned than 1 (a WCHAR of FriendlyName, the flags words) gives
 * a pointer the compiler cannot assume aligned; copy the member instead.
 */
#pragma pack(push, 1)

/* DXGK_NODEMETADATA: one node (engine), 138 bytes. */
typedef struct _DXGK_NODEMETADATA {
	DXGK_ENGINE_TYPE EngineType;
	/* NUL-terminated: "3D_0", "Compute_0", "Copy_0", "3D_1", ... */
	WCHAR FriendlyName[DXGK_MAX_METADATA_NAME_LENGTH];
	DXGK_NODEMETADATA_FLAGS Flags;
	BOOLEAN GpuMmuSupported;	/* TRUE: per-process GPU VA spaces */
	BOOLEAN IoMmuSupported;		/* FALSE */
} DXGK_NODEMETADATA;

/*
 * D3DKMT_NODEMETADATA: KMTQAITYPE_NODEMETADATA, 142 bytes.
 * NodeOrdinalAndAdapterIndex (in) holds the physical adapter index in its
 * high 16 bits (0: an nfence adapter is one physical adapter) and the node
 * ordinal in its low 16 (0 .. NumEngines - 1); anything else is
 * STATUS_INVALID_PARAMETER.
 */
typedef struct _D3DKMT_NODEMETADATA {
	UINT NodeOrdinalAndAdapterIndex;	/* in */
	DXGK_NODEMETADATA NodeData;		/* out */
} D3DKMT_NODEMETADATA;

#pragma pack(pop)

/* D3DKMT_PHYSICAL_ADAPTER_COUNT: KMTQAITYPE_PHYSICALADAPTERCOUNT, 1. */
typedef struct _D3DKMT_PHYSICAL_ADAPTER_COUNT {
	UINT Count;
} D3DKMT_PHYSICAL_ADAPTER_COUNT;

/*
 * D3DKMT_NFENCE_VENDOR_ID, D3DKMT_NFENCE_DEVICE_ID: the VendorID and
 * DeviceID of every nfence adapter. nfence is a platform device with no PCI
 * identity, and must not pass for a real vendor's GPU: 0xFFFF is the value
 * PCI reserves as "no vendor" (what a read of an absent function returns),
 * so no vendor has it; 0x4E46 is "NF", the prefix of nfence's own query
 * types. The other D3DKMT_DEVICE_IDS fields are 0.
 */
#define D3DKMT_NFENCE_VENDOR_ID		0xFFFFu
#define D3DKMT_NFENCE_DEVICE_ID		0x4E46u

/* D3DKMT_DEVICE_IDS: the PCI-style identity of a physical adapter. */
typedef struct _D3DKMT_DEVICE_IDS {
	UINT VendorID;			/* D3DKMT_NFENCE_VENDOR_ID */
	UINT DeviceID;			/* D3DKMT_NFENCE_DEVICE_ID */
	UINT SubVendorID;		/* 0 */
	UINT SubSystemID;		/* 0 */
	UINT RevisionID;		/* 0 */
	UINT BusType;			/* 0: no bus */
} D3DKMT_DEVICE_IDS;

/*
 * D3DKMT_QUERY_DEVICE_IDS: KMTQAITYPE_PHYSICALADAPTERDEVICEIDS.
 * PhysicalAdapterIndex (in) must be 0; DeviceIds is written.
 */
typedef struct _D3DKMT_QUERY_DEVICE_IDS {
	UINT PhysicalAdapterIndex;	/* in */
	D3DKMT_DEVICE_IDS DeviceIds;	/* out */
} D3DKMT_QUERY_DEVICE_IDS;

/*
 * D3DKMT_DRIVER_DESCRIPTION: KMTQAITYPE_DRIVER_DESCRIPTION and
 * KMTQAITYPE_DRIVER_DESCRIPTION_RENDER. A NUL-terminated wide string, the
 * rest zero: "nfence <major>.<minor>.<patchlevel> (<description>)", from
 * the kernel driver's DRM version, e.g.
 * L"nfence 0.10.0 (WDDM native fence model over a simulated GPU)".
 */
typedef struct _D3DKMT_DRIVER_DESCRIPTION {
	WCHAR DriverDescription[4096];
} D3DKMT_DRIVER_DESCRIPTION;

/* DXGK_FEATURE_SUPPORT_*: the support state of an optional WDDM feature. */
#define DXGK_FEATURE_SUPPORT_ALWAYS_OFF		0
#define DXGK_FEATURE_SUPPORT_EXPERIMENTAL	1
#define DXGK_FEATURE_SUPPORT_STABLE		2
#define DXGK_FEATURE_SUPPORT_ALWAYS_ON		3

/* Byte-packed, as DXGK_NODEMETADATA (see there). */
#pragma pack(push, 1)

/*
 * D3DKMT_WDDM_2_7_CAPS: KMTQAITYPE_WDDM_2_7_CAPS. nfence's hardware queues
 * are scheduled by the GPU's context management processor (the CMP), with
 * no other scheduler to fall back to: HwSchSupported, HwSchEnabled and
 * HwSchEnabledByDefault are 1, IndependentVidPnVSyncControl 0 (no display).
 */
typedef struct _D3DKMT_WDDM_2_7_CAPS {
	union {
		struct {
			UINT HwSchSupported		: 1;
			UINT HwSchEnabled		: 1;
			UINT HwSchEnabledByDefault	: 1;
			UINT IndependentVidPnVSyncControl : 1;
			UINT Reserved			: 28;
		};
		UINT Value;
	};
} D3DKMT_WDDM_2_7_CAPS;

/*
 * D3DKMT_WDDM_2_9_CAPS: KMTQAITYPE_WDDM_2_9_CAPS. HwSchSupportState is
 * DXGK_FEATURE_SUPPORT_ALWAYS_ON (the CMP cannot be turned off),
 * HwSchEnabled 1, SelfRefreshMemorySupported 0.
 */
typedef struct _D3DKMT_WDDM_2_9_CAPS {
	union {
		struct {
			UINT HwSchSupportState		: 2; /* DXGK_FEATURE_SUPPORT_* */
			UINT HwSchEnabled		: 1;
			UINT SelfRefreshMemorySupported	: 1;
			UINT Reserved			: 28;
		};
		UINT Value;
	};
} D3DKMT_WDDM_2_9_CAPS;

/*
 * D3DKMT_WDDM_3_0_CAPS: KMTQAITYPE_WDDM_3_0_CAPS. No display, so no flip
 * queue: HwFlipQueueSupportState is DXGK_FEATURE_SUPPORT_ALWAYS_OFF, the
 * other bits 0.
 */
typedef struct _D3DKMT_WDDM_3_0_CAPS {
	union {
		struct {
			UINT HwFlipQueueSupportState	: 2; /* DXGK_FEATURE_SUPPORT_* */
			UINT HwFlipQueueEnabled		: 1;
			UINT DisplayableSupported	: 1;
			UINT Reserved			: 28;
		};
		UINT Value;
	};
} D3DKMT_WDDM_3_0_CAPS;

#pragma pack(pop)

/*
 * KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID answers a GUID made from the
 * adapter's LUID and index, so it is the same for an adapter through one
 * module load and differs between adapters (their LUIDs do); a reload
 * gives new LUIDs, so new GUIDs. It is an RFC 9562 version 8 ("custom")
 * UUID in GUID byte order: Data1 = AdapterLuid.LowPart, Data2 = 0x4E46,
 * Data3 = 0x8000 | (adapter index & 0xFFF), Data4 = { 0x80, 0, 0, 0, then
 * AdapterLuid.HighPart's 4 bytes, most significant first }.
 */

/* D3DKMT_NFENCE_ADAPTER_FLAGS: adapter capability bits. */
typedef struct _D3DKMT_NFENCE_ADAPTER_FLAGS {
	union {
		struct {
			/* native GPU fences (NativeGpuFenceSupported) */
			UINT NativeGpuFence		: 1;
			/* doorbells on some engine */
			UINT UserModeSubmission		: 1;
			/* GPU updates only 32 bits of a fence atomically */
			UINT No64BitAtomics		: 1;
			UINT Reserved			: 29;
		};
		UINT Value;
	};
} D3DKMT_NFENCE_ADAPTER_FLAGS;

/* D3DKMT_NFENCE_ADAPTER: KMTQAITYPE_NFENCE_ADAPTER. */
typedef struct _D3DKMT_NFENCE_ADAPTER {
	LUID AdapterLuid;		/* the adapter's LUID */
	UINT AdapterIndex;		/* 0 .. number of adapters - 1 */
	D3DKMT_NFENCE_ADAPTER_FLAGS Flags;
	UINT NumEngines;		/* engines (WDDM nodes) */
	UINT NumSegments;		/* memory segments */
	UINT64 TimestampFrequency;	/* GPU timestamp ticks per second */
} D3DKMT_NFENCE_ADAPTER;

/* D3DKMT_NFENCE_SEGMENT_FLAGS: memory segment properties. */
typedef struct _D3DKMT_NFENCE_SEGMENT_FLAGS {
	union {
		struct {
			UINT Local			: 1; /* VRAM */
			UINT System			: 1; /* system memory */
			UINT CpuVisible			: 1; /* some is CPU-visible */
			UINT Reserved			: 29;
		};
		UINT Value;
	};
} D3DKMT_NFENCE_SEGMENT_FLAGS;

/* D3DKMT_NFENCE_SEGMENT_INFO: one memory segment. */
typedef struct _D3DKMT_NFENCE_SEGMENT_INFO {
	UINT SegmentId;			/* 1-based, as WDDM segment ids */
	D3DKMT_NFENCE_SEGMENT_FLAGS Flags;
	UINT64 Size;			/* bytes */
	UINT64 CpuVisibleSize;		/* bytes from the start the CPU can map */
} D3DKMT_NFENCE_SEGMENT_INFO;

/*
 * D3DKMT_NFENCE_SEGMENTS: KMTQAITYPE_NFENCE_SEGMENTS. Variable size: the
 * caller passes D3DKMT_NFENCE_SEGMENTS_SIZE(n) bytes for room for n entries.
 */
typedef struct _D3DKMT_NFENCE_SEGMENTS {
	UINT NumSegments;		/* out: segments of the adapter */
	UINT Reserved;			/* out: 0 */
	D3DKMT_NFENCE_SEGMENT_INFO Segments[];
} D3DKMT_NFENCE_SEGMENTS;

#define D3DKMT_NFENCE_SEGMENTS_SIZE(n) \
	(offsetof(D3DKMT_NFENCE_SEGMENTS, Segments) + \
	 (size_t)(n) * sizeof(D3DKMT_NFENCE_SEGMENT_INFO))

/* D3DKMT_NFENCE_ENGINE_TYPE: what an engine executes. */
typedef enum _D3DKMT_NFENCE_ENGINE_TYPE {
	D3DKMT_NFENCE_ENGINE_TYPE_3D		= 0,
	D3DKMT_NFENCE_ENGINE_TYPE_COMPUTE	= 1,
	D3DKMT_NFENCE_ENGINE_TYPE_COPY		= 2,
} D3DKMT_NFENCE_ENGINE_TYPE;

/* D3DKMT_NFENCE_ENGINE_FLAGS: engine properties. */
typedef struct _D3DKMT_NFENCE_ENGINE_FLAGS {
	union {
		struct {
			/* hardware queues may use doorbells */
			UINT UserModeSubmissionSupported : 1;
			UINT Reserved			: 31;
		};
		UINT Value;
	};
} D3DKMT_NFENCE_ENGINE_FLAGS;

/* D3DKMT_NFENCE_ENGINE_INFO: one engine (WDDM node). */
typedef struct _D3DKMT_NFENCE_ENGINE_INFO {
	UINT NodeOrdinal;		/* 0 .. NumEngines - 1 */
	D3DKMT_NFENCE_ENGINE_TYPE EngineType;
	D3DKMT_NFENCE_ENGINE_FLAGS Flags;
	UINT Reserved;			/* 0 */
} D3DKMT_NFENCE_ENGINE_INFO;

/*
 * D3DKMT_NFENCE_ENGINES: KMTQAITYPE_NFENCE_ENGINES. Variable size: the
 * caller passes D3DKMT_NFENCE_ENGINES_SIZE(n) bytes for room for n entries.
 */
typedef struct _D3DKMT_NFENCE_ENGINES {
	UINT NumEngines;		/* out: engines of the adapter */
	UINT Reserved;			/* out: 0 */
	D3DKMT_NFENCE_ENGINE_INFO Engines[];
} D3DKMT_NFENCE_ENGINES;

#define D3DKMT_NFENCE_ENGINES_SIZE(n) \
	(offsetof(D3DKMT_NFENCE_ENGINES, Engines) + \
	 (size_t)(n) * sizeof(D3DKMT_NFENCE_ENGINE_INFO))

/* D3DKMT_NFENCE_NATIVE_FENCE_CAPS_FLAGS: native fence features. */
typedef struct _D3DKMT_NFENCE_NATIVE_FENCE_CAPS_FLAGS {
	union {
		struct {
			/* DEFAULT fences may keep MonitoredValue in VRAM */
			UINT SupportOptimizedDefaultFenceType : 1;
			/* D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU */
			UINT SupportIntraGpuFenceType	: 1;
			/* cross-adapter fences */
			UINT SupportCrossAdapterFence	: 1;
			/* native fence log buffers */
			UINT SupportLogBuffers		: 1;
			/*
			 * the GPU signals cross-adapter fences to other
			 * GPUs with this capability without the CPU
			 * (nfence's simulation of the seed's future
			 * GPU-to-GPU signal)
			 */
			UINT SupportPeerSignals		: 1;
			UINT Reserved			: 27;
		};
		UINT Value;
	};
} D3DKMT_NFENCE_NATIVE_FENCE_CAPS_FLAGS;

/*
 * D3DKMT_NFENCE_NATIVE_FENCE_CAPS: KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS.
 * All zero when the adapter has no native fences.
 */
typedef struct _D3DKMT_NFENCE_NATIVE_FENCE_CAPS {
	D3DKMT_NFENCE_NATIVE_FENCE_CAPS_FLAGS Flags;
	UINT ValueStride;		/* bytes between packed CurrentValues */
	UINT ValueBits;			/* 64, or 32 without 64-bit atomics */
	UINT MaxLogEntries;		/* largest log buffer entry count */
	UINT LogBufferHeaderSize;	/* bytes of a log buffer header */
	UINT LogBufferEntrySize;	/* bytes of a log buffer entry */
} D3DKMT_NFENCE_NATIVE_FENCE_CAPS;

/* D3DKMT_NFENCE_DOORBELL_MODEL: how doorbells reach the scheduler. */
typedef enum _D3DKMT_NFENCE_DOORBELL_MODEL {
	/* no user-mode submission */
	D3DKMT_NFENCE_DOORBELL_MODEL_NONE	= 0,
	/* one physical doorbell per connected queue, virtualized (LRU) */
	D3DKMT_NFENCE_DOORBELL_MODEL_DEDICATED	= 1,
	/* one doorbell shared by every queue */
	D3DKMT_NFENCE_DOORBELL_MODEL_GLOBAL	= 2,
} D3DKMT_NFENCE_DOORBELL_MODEL;

/*
 * D3DKMT_NFENCE_USERMODESUBMISSION_CAPS:
 * KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS (DXGK_USERMODESUBMISSION_CAPS).
 * All zero without user-mode submission.
 */
typedef struct _D3DKMT_NFENCE_USERMODESUBMISSION_CAPS {
	UINT DoorbellSize;		/* bytes of one doorbell */
	D3DKMT_NFENCE_DOORBELL_MODEL DoorbellModel;
	UINT NumPhysicalDoorbells;	/* physical doorbells */
	UINT Reserved;			/* 0 */
} D3DKMT_NFENCE_USERMODESUBMISSION_CAPS;

/*
 * D3DKMT_NFENCE_TIMESTAMP: KMTQAITYPE_NFENCE_TIMESTAMP, a correlated pair
 * of the GPU timestamp clock and CLOCK_MONOTONIC.
 */
typedef struct _D3DKMT_NFENCE_TIMESTAMP {
	UINT64 GpuTimestamp;		/* GPU ticks, non-decreasing */
	UINT64 CpuMonotonicNs;		/* CLOCK_MONOTONIC at the same instant */
	UINT64 GpuFrequency;		/* GPU ticks per second */
} D3DKMT_NFENCE_TIMESTAMP;

/* D3DKMT_QUERYADAPTERINFO: argument of D3DKMTQueryAdapterInfo. */
typedef struct _D3DKMT_QUERYADAPTERINFO {
	D3DKMT_HANDLE hAdapter;		/* in: adapter handle */
	KMTQUERYADAPTERINFOTYPE Type;	/* in: what to return */
	VOID *pPrivateDriverData;	/* out: the answer */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
} D3DKMT_QUERYADAPTERINFO;

/**
 * D3DKMTQueryAdapterInfo() - query adapter information
 * @pQueryAdapterInfo: hAdapter, Type, and the answer buffer
 *
 * Fixed-size types need PrivateDriverDataSize equal to the size of their
 * struct. The variable-size types (KMTQAITYPE_NFENCE_SEGMENTS and
 * KMTQAITYPE_NFENCE_ENGINES) need at least the size of the struct header
 * (D3DKMT_NFENCE_*_SIZE(0)); if the buffer holds fewer entries than the
 * adapter has, the count field is set to the number of entries and the call
 * fails with STATUS_BUFFER_TOO_SMALL, so a caller can size its buffer with
 * a first call of D3DKMT_NFENCE_*_SIZE(0) bytes. The arguments are checked
 * before the handle, the input fields of KMTQAITYPE_PHYSICALADAPTERDEVICEIDS
 * (PhysicalAdapterIndex) and KMTQAITYPE_NODEMETADATA
 * (NodeOrdinalAndAdapterIndex) after it. A call that fails with
 * STATUS_INVALID_PARAMETER writes nothing.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if an argument pointer
 * is NULL, Type is not one of KMTQUERYADAPTERINFOTYPE, the size is wrong
 * or an input field names a physical adapter or node the adapter lacks;
 * STATUS_BUFFER_TOO_SMALL as above; STATUS_INVALID_PARAMETER if hAdapter is
 * not an open adapter handle; otherwise the status of the kernel's error
 * (see NFenceStatusFromErrno()).
 */
NFENCE_EXPORT NTSTATUS D3DKMTQueryAdapterInfo(const D3DKMT_QUERYADAPTERINFO *pQueryAdapterInfo);

/*
 * DXGK_GPUCLOCKDATA_FLAGS: how a clock calibration was made. The bit's
 * name and place are the WDK's (d3dkmddi.h); the D3DKMT reference gives
 * only "a UINT of flags". ContextManagementProcessor says that the GPU's context
 * management processor read the pair; on nfence the kernel reads it on the
 * CPU, so nfence always reports 0 (see D3DKMTQueryClockCalibration()).
 */
typedef struct _DXGK_GPUCLOCKDATA_FLAGS {
	union {
		struct {
			UINT ContextManagementProcessor	: 1;
			UINT Reserved			: 31;
		};
		UINT Value;
	};
} DXGK_GPUCLOCKDATA_FLAGS;

/* Byte-packed, as DXGK_NODEMETADATA (see there). */
#pragma pack(push, 1)

/*
 * DXGK_GPUCLOCKDATA: a GPU timestamp and a CPU clock reading taken at the
 * same instant, 28 bytes. On nfence CpuClockCounter is CLOCK_MONOTONIC in
 * nanoseconds (the clock of the CPU waits), not a QueryPerformanceCounter
 * value, and GpuClockCounter is in the unit of the TIMESTAMP command and
 * of the native fence logs' GPU timestamps.
 */
typedef struct _DXGK_GPUCLOCKDATA {
	ULONGLONG GpuFrequency;		/* GPU clock ticks per second */
	ULONGLONG GpuClockCounter;	/* the GPU clock, in ticks */
	ULONGLONG CpuClockCounter;	/* CLOCK_MONOTONIC, in ns */
	DXGK_GPUCLOCKDATA_FLAGS Flags;	/* 0 on nfence */
} DXGK_GPUCLOCKDATA;

/*
 * D3DKMT_QUERYCLOCKCALIBRATION: argument of D3DKMTQueryClockCalibration,
 * 40 bytes, ClockData at 12. Fields documented as UINT32 are UINT here,
 * the same 32-bit type, as in DXGK_NATIVE_FENCE_LOG_HEADER.
 */
typedef struct _D3DKMT_QUERYCLOCKCALIBRATION {
	D3DKMT_HANDLE hAdapter;		/* in: adapter handle */
	UINT NodeOrdinal;		/* in: engine, 0 .. NumEngines - 1 */
	UINT PhysicalAdapterIndex;	/* in: 0 */
	DXGK_GPUCLOCKDATA ClockData;	/* out */
} D3DKMT_QUERYCLOCKCALIBRATION;

#pragma pack(pop)

/**
 * D3DKMTQueryClockCalibration() - correlate a node's GPU clock with the CPU's
 * @pClockCalibration: hAdapter, NodeOrdinal, PhysicalAdapterIndex in;
 *	ClockData out
 *
 * Fills ClockData with the GPU timestamp clock of the node (every engine
 * of an nfence adapter shares one clock) and CLOCK_MONOTONIC, read
 * together by the kernel (DRM_NFENCE_QUERY_TIMESTAMP): GpuFrequency is
 * D3DKMT_NFENCE_ADAPTER::TimestampFrequency (100 MHz), GpuClockCounter the
 * GPU clock in ticks, CpuClockCounter CLOCK_MONOTONIC in nanoseconds.
 * Flags is 0: ContextManagementProcessor would say the GPU's context
 * management processor read the pair, but nfence's CMP has no part in it,
 * the kernel reads both clocks on the CPU in the calling thread.
 *
 * Both counters come from one clock read in the kernel, the GPU clock
 * being CLOCK_MONOTONIC since the GPU's power-up counted down to whole
 * ticks, so the pair is exact to within one GPU tick (10 ns): for any
 * CLOCK_MONOTONIC time t, the GPU timestamp at t differs from
 * GpuClockCounter + (t - CpuClockCounter) * GpuFrequency / 10^9 by less
 * than one tick. Being derived from CLOCK_MONOTONIC, the GPU clock does
 * not drift from it, so one calibration holds as long as the adapter
 * exists. It does not say when the kernel read the clocks within the call.
 *
 * PhysicalAdapterIndex is checked before the handle, NodeOrdinal after it.
 * A call that fails writes nothing.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pClockCalibration
 * is NULL, PhysicalAdapterIndex is not 0 (an nfence adapter is one
 * physical adapter) or NodeOrdinal is not below the adapter's engine count;
 * STATUS_INVALID_PARAMETER if hAdapter is not an open adapter handle;
 * otherwise the status of the kernel's error (see NFenceStatusFromErrno()).
 */
NFENCE_EXPORT NTSTATUS D3DKMTQueryClockCalibration(D3DKMT_QUERYCLOCKCALIBRATION *pClockCalibration);

/*
 * D3DKMT_MEMORY_SEGMENT_GROUP: the segments D3DKMTQueryVideoMemoryInfo
 * reports on (Microsoft's d3dkmthk.h, whose enumerators take 0 and 1 in
 * this order). LOCAL is nfence's local (VRAM) segment, CPU-visible part
 * and invisible part together, NON_LOCAL its system memory (aperture)
 * segment, as KMTQAITYPE_GETSEGMENTSIZE splits them.
 */
typedef enum _D3DKMT_MEMORY_SEGMENT_GROUP {
	D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL = 0,
	D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL = 1,
} D3DKMT_MEMORY_SEGMENT_GROUP;

/* D3DKMT_QUERYVIDEOMEMORYINFO: argument of D3DKMTQueryVideoMemoryInfo. */
typedef struct _D3DKMT_QUERYVIDEOMEMORYINFO {
	HANDLE hProcess;			/* in: NULL */
	D3DKMT_HANDLE hAdapter;			/* in: adapter handle */
	D3DKMT_MEMORY_SEGMENT_GROUP MemorySegmentGroup;	/* in */
	UINT64 Budget;				/* out: bytes */
	UINT64 CurrentUsage;			/* out: bytes */
	UINT64 CurrentReservation;		/* out: 0 */
	UINT64 AvailableForReservation;		/* out: 0 */
	UINT PhysicalAdapterIndex;		/* in: 0 */
} D3DKMT_QUERYVIDEOMEMORYINFO;

/**
 * D3DKMTQueryVideoMemoryInfo() - this process's budget and usage of a
 *	segment group of an adapter
 * @pData: hProcess, hAdapter, MemorySegmentGroup, PhysicalAdapterIndex in;
 *	Budget, CurrentUsage, CurrentReservation, AvailableForReservation out
 *
 * Answered from the kernel's own accounting (DRM_NFENCE_QUERY_SEGMENT_USAGE
 * on the adapter's file), which is per open file. libnfence opens one
 * file per adapter in a process, which every handle of that adapter
 * shares, so the numbers are the process's: the allocations made through
 * the devices of any of its handles of the adapter (and, in the local
 * segment, the values of the fences they created or opened). A forked
 * child's own file, or one the process opened on the render node itself,
 * counts apart. Budget is the file's per-client quota of
 * the group's segments (module parameters client_vram_mb and
 * client_sysmem_mb), bounded by their size, or their size without a
 * quota: an allocation that would take CurrentUsage past Budget fails, or
 * is demoted to system memory when it allows that. CurrentUsage is what is
 * charged now: allocations count with their page-aligned size until freed
 * (an allocation destroyed while a CPU mapping of it remains counts until
 * that mapping goes). nfence has no video memory reservations
 * (D3DKMTChangeVideoMemoryReservation is STATUS_NOT_SUPPORTED):
 * CurrentReservation and AvailableForReservation are 0.
 *
 * The checks, in order: @pData not NULL, hProcess NULL (WSL's driver only
 * answers for the calling process and refuses any process handle),
 * PhysicalAdapterIndex 0 (an nfence adapter is one physical adapter),
 * MemorySegmentGroup LOCAL or NON_LOCAL, then the adapter handle. A call
 * that fails writes nothing.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if one of the checks
 * fails or hAdapter is not an open adapter handle; STATUS_NOT_SUPPORTED if
 * the kernel driver does not know DRM_NFENCE_QUERY_SEGMENT_USAGE (an older
 * driver); otherwise the status of the kernel's error (see
 * NFenceStatusFromErrno()).
 */
NFENCE_EXPORT NTSTATUS D3DKMTQueryVideoMemoryInfo(D3DKMT_QUERYVIDEOMEMORYINFO *pData);

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

/*
 * D3DKMT_CREATEDEVICEFLAGS: device creation flags, as WSL's headers have
 * them (Reserved from bit 3). LegacyMode (a D3D9-style device with command
 * buffers) is not supported; RequestVSync and DisableGpuTimeout have no
 * effect on nfence; Reserved must be zero.
 */
typedef struct _D3DKMT_CREATEDEVICEFLAGS {
	UINT LegacyMode				: 1;
	UINT RequestVSync			: 1;
	UINT DisableGpuTimeout			: 1;
	UINT Reserved				: 29;
} D3DKMT_CREATEDEVICEFLAGS;

/* D3D10-era command buffer lists; never returned by nfence (always NULL). */
typedef struct _D3DDDI_ALLOCATIONLIST D3DDDI_ALLOCATIONLIST;
typedef struct _D3DDDI_PATCHLOCATIONLIST D3DDDI_PATCHLOCATIONLIST;

/* D3DKMT_CREATEDEVICE: argument of D3DKMTCreateDevice. */
typedef struct _D3DKMT_CREATEDEVICE {
	union {
		D3DKMT_HANDLE hAdapter;	/* in: adapter handle */
		VOID *pAdapter;		/* kernel-mode callers only; unused */
	};
	D3DKMT_CREATEDEVICEFLAGS Flags;	/* in */
	D3DKMT_HANDLE hDevice;		/* out: device handle */
	VOID *pCommandBuffer;		/* out: NULL */
	UINT CommandBufferSize;		/* out: 0 */
	D3DDDI_ALLOCATIONLIST *pAllocationList;	/* out: NULL */
	UINT AllocationListSize;	/* out: 0 */
	D3DDDI_PATCHLOCATIONLIST *pPatchLocationList; /* out: NULL */
	UINT PatchLocationListSize;	/* out: 0 */
} D3DKMT_CREATEDEVICE;

/**
 * D3DKMTCreateDevice() - create a device on an adapter
 * @pCreateDevice: in: hAdapter, Flags; out: hDevice (and the D3D10
 *	compatibility fields, all NULL/0)
 *
 * A device is the container of contexts, allocations and synchronization
 * objects. It keeps its adapter open: closing the adapter handle does not
 * affect it. At most 1024 devices per adapter can exist in a process.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateDevice is
 * NULL or Flags.Reserved is not zero; STATUS_NOT_SUPPORTED for
 * Flags.LegacyMode; STATUS_INVALID_PARAMETER if hAdapter is not an open
 * adapter handle; STATUS_INSUFFICIENT_RESOURCES when the adapter's device
 * limit is reached; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateDevice(D3DKMT_CREATEDEVICE *pCreateDevice);

/* D3DKMT_DESTROYDEVICE: argument of D3DKMTDestroyDevice. */
typedef struct _D3DKMT_DESTROYDEVICE {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
} D3DKMT_DESTROYDEVICE;

/**
 * D3DKMTDestroyDevice() - destroy a device and everything it owns
 * @pDestroyDevice: in: hDevice
 *
 * hDevice is invalid after the call whatever it returns, and so are the
 * handles of the sync objects created or opened on the device and their
 * CPU mappings (NT handles of shared fences stay valid).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroyDevice is
 * NULL; STATUS_INVALID_PARAMETER if hDevice is not a device handle (or the
 * kernel no longer knows the device).
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *pDestroyDevice);

/* ------------------------------------------------------------------ */
/* Device state and errors                                            */
/* ------------------------------------------------------------------ */

/* D3DKMT_DEVICESTATE_TYPE: what D3DKMTGetDeviceState reports. */
typedef enum _D3DKMT_DEVICESTATE_TYPE {
	D3DKMT_DEVICESTATE_EXECUTION = 1,
	D3DKMT_DEVICESTATE_PRESENT = 2,
	D3DKMT_DEVICESTATE_RESET = 3,
	D3DKMT_DEVICESTATE_PRESENT_DWM = 4,
	D3DKMT_DEVICESTATE_PAGE_FAULT = 5,
	D3DKMT_DEVICESTATE_PRESENT_QUEUE = 6,
} D3DKMT_DEVICESTATE_TYPE;

/* D3DKMT_DEVICEEXECUTION_STATE: a device's execution state. */
typedef enum _D3DKMT_DEVICEEXECUTION_STATE {
	D3DKMT_DEVICEEXECUTION_ACTIVE = 1,
	D3DKMT_DEVICEEXECUTION_RESET = 2,
	D3DKMT_DEVICEEXECUTION_HUNG = 3,
	D3DKMT_DEVICEEXECUTION_STOPPED = 4,
	D3DKMT_DEVICEEXECUTION_ERROR_OUTOFMEMORY = 5,
	D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT = 6,
	D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT = 7,
} D3DKMT_DEVICEEXECUTION_STATE;

/*
 * DXGK_RENDER_PIPELINE_STAGE and DXGK_PAGE_FAULT_FLAGS are enums in the
 * Windows headers whose values are not in nfence's ABI reference; nfence
 * reports 0 in both, so they are plain UINTs here.
 */
typedef UINT DXGK_RENDER_PIPELINE_STAGE;
typedef UINT DXGK_PAGE_FAULT_FLAGS;

/*
 * DXGK_FAULT_ERROR_CODE: why the GPU faulted. nfence always reports a
 * device-specific code: IsDeviceSpecificCode = 1 and DeviceSpecificCode a
 * D3DKMT_NFENCE_FAULT_REASON (declared with NFenceQueryContextState()).
 */
typedef struct _DXGK_FAULT_ERROR_CODE {
	union {
		struct {
			UINT IsDeviceSpecificCode : 1;
			UINT GeneralErrorCode : 31;
		};
		struct {
			UINT IsDeviceSpecificCodeReservedBit : 1;
			UINT DeviceSpecificCode : 31;
		};
	};
} DXGK_FAULT_ERROR_CODE;

/* D3DKMT_DEVICEPAGEFAULT_STATE: the first GPU fault of a device's contexts. */
typedef struct _D3DKMT_DEVICEPAGEFAULT_STATE {
	UINT64 FaultedPrimitiveAPISequenceNumber;	/* out: 0 */
	DXGK_RENDER_PIPELINE_STAGE FaultedPipelineStage; /* out: 0 */
	UINT FaultedBindTableEntry;			/* out: 0 */
	DXGK_PAGE_FAULT_FLAGS PageFaultFlags;		/* out: 0 */
	DXGK_FAULT_ERROR_CODE FaultErrorCode;		/* out */
	D3DGPU_VIRTUAL_ADDRESS FaultedVirtualAddress;	/* out */
} D3DKMT_DEVICEPAGEFAULT_STATE;

/*
 * D3DKMT_GETDEVICESTATE: argument of D3DKMTGetDeviceState, 56 bytes as
 * Windows'. Windows' union also has the present and reset states
 * (PresentState, ResetState, PresentStateDWM, PresentQueueState), which
 * belong to display: nfence has none, and their layouts are not in its
 * references, so they are not declared; PresentStateSpace gives the union
 * Windows' size (48 bytes) in their place.
 */
typedef struct _D3DKMT_GETDEVICESTATE {
	D3DKMT_HANDLE hDevice;			/* in: device handle */
	D3DKMT_DEVICESTATE_TYPE StateType;	/* in */
	union {
		D3DKMT_DEVICEEXECUTION_STATE ExecutionState;	/* out */
		D3DKMT_DEVICEPAGEFAULT_STATE PageFaultState;	/* out */
		UINT64 PresentStateSpace[6];	/* never written */
	};
} D3DKMT_GETDEVICESTATE;

/**
 * D3DKMTGetDeviceState() - a device's execution state, or its first fault
 * @pGetDeviceState: in: hDevice, StateType; out: the state
 *
 * D3DKMT_DEVICESTATE_EXECUTION: ExecutionState is
 * D3DKMT_DEVICEEXECUTION_RESET once a queue of the device hung (the TDR),
 * D3DKMT_DEVICEEXECUTION_STOPPED once D3DKMTMarkDeviceAsError or another
 * device-lost event put it in error; otherwise
 * D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT once one of its contexts took
 * a GPU page fault (or a misaligned operand),
 * D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT once one ran an invalid command or
 * ring, and D3DKMT_DEVICEEXECUTION_ACTIVE otherwise. A fault stops only its
 * context; the device's other contexts run on.
 *
 * D3DKMT_DEVICESTATE_PAGE_FAULT: PageFaultState describes the first fault
 * of any of the device's contexts: FaultedVirtualAddress (the operand, or
 * the command's address for an invalid command) and FaultErrorCode (a
 * device-specific D3DKMT_NFENCE_FAULT_REASON); the other fields are 0. With no
 * fault, everything is 0.
 *
 * Return: STATUS_SUCCESS (also for a device in error: that is what the
 * call is for); STATUS_INVALID_PARAMETER if @pGetDeviceState is NULL or
 * StateType is not a D3DKMT_DEVICESTATE_TYPE; STATUS_NOT_SUPPORTED for the
 * present states (nfence has no display); STATUS_INVALID_PARAMETER if hDevice
 * is not a device handle; STATUS_DEVICE_REMOVED after the adapter's
 * unplug. Nothing is written on failure.
 */
NFENCE_EXPORT NTSTATUS D3DKMTGetDeviceState(D3DKMT_GETDEVICESTATE *pGetDeviceState);

/*
 * D3DKMT_DEVICE_ERROR_REASON: why a runtime marks its device in error.
 * The Windows values are 0x80000000 and 0x80000006; ISO C enumerators are
 * ints, so they are written as the ints with those 32 bits.
 */
typedef enum _D3DKMT_DEVICE_ERROR_REASON {
	D3DKMT_DEVICE_ERROR_REASON_GENERIC = -0x7fffffff - 1,
	D3DKMT_DEVICE_ERROR_REASON_DRIVER_ERROR = -0x7fffffff - 1 + 6,
} D3DKMT_DEVICE_ERROR_REASON;

/* D3DKMT_MARKDEVICEASERROR: argument of D3DKMTMarkDeviceAsError. */
typedef struct _D3DKMT_MARKDEVICEASERROR {
	D3DKMT_HANDLE hDevice;			/* in: device handle */
	D3DKMT_DEVICE_ERROR_REASON Reason;	/* in */
} D3DKMT_MARKDEVICEASERROR;

/**
 * D3DKMTMarkDeviceAsError() - put a device in error
 * @pMarkDeviceAsError: in: hDevice, Reason
 *
 * The device goes into error exactly as after a TDR or the abnormal end
 * of its process: every fence it created becomes AlwaysSignaled for every
 * holder (CurrentValue raised to 0xFFFFFFFF, every CPU and GPU wait on it
 * satisfied, signals ignored), its queues stop and drop their work, its
 * doorbells are disconnected for good, and creating contexts, queues or
 * submitting work on it returns STATUS_DEVICE_REMOVED from then on (fences
 * it creates are AlwaysSignaled from birth). Destroying it still works.
 * D3DKMTGetDeviceState then reports D3DKMT_DEVICEEXECUTION_STOPPED (or
 * RESET if a TDR came first). Marking it again succeeds.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pMarkDeviceAsError
 * is NULL or Reason is not a D3DKMT_DEVICE_ERROR_REASON;
 * STATUS_INVALID_PARAMETER if hDevice is not a device handle;
 * STATUS_DEVICE_REMOVED after the adapter's unplug.
 */
NFENCE_EXPORT NTSTATUS D3DKMTMarkDeviceAsError(const D3DKMT_MARKDEVICEASERROR *pMarkDeviceAsError);

/* D3DKMT_CREATESYNCFILE: argument of D3DKMTCreateSyncFile (WSL's extension). */
typedef struct _D3DKMT_CREATESYNCFILE {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hMonitoredFence;	/* in: a monitored or native fence */
	UINT64 FenceValue;		/* in */
	UINT64 hSyncFile;		/* out: never written by libnfence */
} D3DKMT_CREATESYNCFILE;

/**
 * D3DKMTCreateSyncFile() - refused: a sync_file for a fence value
 * @pCreateSyncFile: as WSL's libdxg takes it; not read
 *
 * WSL turns (fence, value) into a sync_file whose dma_fence signals when
 * the fence reaches the value. A fence that user space signals must never
 * become a dma_fence that the kernel or another driver waits on
 * (Documentation/driver-api/dma-buf.rst, "Indefinite DMA Fences"), so
 * libnfence declares the call for source compatibility and never
 * implements it. NFenceBindSyncobjPoint() bridges the other way, which
 * the kernel allows.
 *
 * Return: STATUS_NOT_SUPPORTED, always; nothing is written.
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateSyncFile(D3DKMT_CREATESYNCFILE *pCreateSyncFile);

/* ------------------------------------------------------------------ */
/* Synchronization objects: native GPU fences                         */
/* ------------------------------------------------------------------ */

/*
 * A native fence is a synchronization object (a D3DKMT_HANDLE named
 * hSyncObject) of a device: a 64-bit CurrentValue that GPU engines signal
 * and wait on through GPU virtual addresses and that the CPU reads through
 * a read-only mapping, plus a MonitoredValue only the kernel and the GPU
 * see. A CPU signal never lowers CurrentValue; a GPU signal stores its
 * value as given (a lower one lowers it), except into an AlwaysSignaled
 * fence, which nothing lowers.
 *
 * Sync object handles are per process like every D3DKMT handle. A sync
 * object belongs to the device it was created or opened on: destroying the
 * device destroys its sync objects (their handles become invalid and their
 * CPU mappings go away). CurrentValueCpuVa stays valid until the sync
 * object is destroyed; several fences may share one mapped page.
 */

/* D3DDDI_NATIVE_FENCE_PDD_SIZE: bytes of private driver data of a fence */
#define D3DDDI_NATIVE_FENCE_PDD_SIZE	64

/* D3DDDI_NATIVEFENCE_TYPE: where a native fence keeps its values. */
typedef enum _D3DDDI_NATIVEFENCE_TYPE {
	/* full CPU and GPU interoperability; CurrentValue CPU-readable */
	D3DDDI_NATIVEFENCE_TYPE_DEFAULT		= 0,
	/* engine-to-engine only: no CPU mapping, no CPU wait or signal */
	D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU	= 1,
} D3DDDI_NATIVEFENCE_TYPE;

/*
 * D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS: sync object flags, in the bit order
 * of Windows' d3dukmdt.h. For native fences:
 *
 *   Shared                 the fence can be shared (needed to share it)
 *   NtSecuritySharing      shared as an NT handle (a file descriptor);
 *                          needs Shared
 *   CrossAdapter           the fence can be opened on every adapter (its
 *                          NT handle): as a native fence on adapters with
 *                          native fences, as a monitored fence on the
 *                          others; needs Shared and the DEFAULT type
 *                          (STATUS_INVALID_PARAMETER otherwise); fixed at
 *                          creation, so STATUS_NOT_SUPPORTED on open
 *   TopOfPipeline          STATUS_NOT_SUPPORTED (a signal semantics of
 *                          packet-based sync objects, not of native fences)
 *   NoSignal               this handle never signals (signals through it
 *                          fail with STATUS_ACCESS_DENIED; its
 *                          CurrentValueGpuVa is read-only for the GPU:
 *                          a GPU signal there faults the context)
 *   NoWait                 this handle never waits (STATUS_ACCESS_DENIED);
 *                          not together with NoSignal
 *   NoSignalMaxValueOnTdr  STATUS_NOT_SUPPORTED: nfence does not recover
 *                          a device after a TDR, so its fences become
 *                          AlwaysSignaled (Documentation/fences.rst)
 *   NoGPUAccess            STATUS_NOT_SUPPORTED: a native fence always has
 *                          GPU virtual addresses
 *   SignalByKmd            STATUS_INVALID_PARAMETER (for CPU notification
 *                          objects only, as on Windows)
 *   Reserved, Reserved0    must be zero: STATUS_INVALID_PARAMETER
 *
 * Invalid bits are reported before unsupported ones.
 * D3DKMTOpenNativeFenceFromNtHandle() ignores Shared and NtSecuritySharing
 * (the object's sharing was fixed when it was created) and treats the
 * other bits as above.
 *
 * The top bit's member is spelt D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0
 * in Microsoft's header, a macro that makes it Reserved0: both spellings
 * name it here too.
 */
#define D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0	Reserved0

typedef struct _D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS {
	union {
		struct {
			UINT Shared			: 1;
			UINT NtSecuritySharing		: 1;
			UINT CrossAdapter		: 1;
			UINT TopOfPipeline		: 1;
			UINT NoSignal			: 1;
			UINT NoWait			: 1;
			UINT NoSignalMaxValueOnTdr	: 1;
			UINT NoGPUAccess		: 1;
			UINT SignalByKmd		: 1;
			UINT Reserved			: 22;
			UINT D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0 : 1;
		};
		UINT Value;
	};
} D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS;

/* D3DDDI_NATIVEFENCEMAPPING: where a fence's values are in this process. */
typedef struct _D3DDDI_NATIVEFENCEMAPPING {
	/* read-only CPU view of CurrentValue (a UINT64); NULL for INTRA_GPU */
	VOID *CurrentValueCpuVa;
	/* GPU read/write address of CurrentValue */
	D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa;
	/* GPU address of MonitoredValue (read-only for GPU engines) */
	D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa;
	BYTE Reserved[32];		/* ignored */
} D3DDDI_NATIVEFENCEMAPPING;

/* D3DDDI_NATIVEFENCEINFO: attributes of a native fence. */
typedef struct _D3DDDI_NATIVEFENCEINFO {
	UINT64 InitialFenceValue;	/* in: CurrentValue at creation */
	/*
	 * in: the physical adapters where the GPU VAs are mapped, a bit per
	 * physical adapter, 0 for all; an nfence adapter has one: 0 or 1
	 */
	UINT EngineAffinity;
	D3DDDI_NATIVEFENCE_TYPE Type;	/* in */
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS Flags;	/* in */
	D3DDDI_NATIVEFENCEMAPPING NativeFenceMapping;	/* out */
	BYTE Reserved[28];		/* ignored */
} D3DDDI_NATIVEFENCEINFO;

/* D3DKMT_CREATENATIVEFENCE_FLAGS: no flag is defined; Value must be 0. */
typedef struct _D3DKMT_CREATENATIVEFENCE_FLAGS {
	union {
		struct {
			UINT Reserved			: 32;
		};
		UINT Value;
	};
} D3DKMT_CREATENATIVEFENCE_FLAGS;

/* D3DKMT_CREATENATIVEFENCE: argument of D3DKMTCreateNativeFence. */
typedef struct _D3DKMT_CREATENATIVEFENCE {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hSyncObject;	/* out: the new sync object */
	/*
	 * in/out: all zero (the nfence kernel driver takes no private data:
	 * anything else is STATUS_INVALID_PARAMETER); left unchanged
	 */
	BYTE PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE];
	D3DDDI_NATIVEFENCEINFO Info;	/* in: attributes; out: mapping */
	D3DKMT_CREATENATIVEFENCE_FLAGS Flags;	/* in: must be 0 */
	BYTE Reserved[28];		/* ignored */
} D3DKMT_CREATENATIVEFENCE;

/**
 * D3DKMTCreateNativeFence() - create a native GPU fence on a device
 * @pCreateNativeFence: in: hDevice, Info (InitialFenceValue,
 *	EngineAffinity, Type, Flags), Flags; out: hSyncObject and
 *	Info.NativeFenceMapping
 *
 * CurrentValue starts at Info.InitialFenceValue. For a DEFAULT fence,
 * Info.NativeFenceMapping.CurrentValueCpuVa points at CurrentValue in a
 * read-only mapping (writing through it faults), valid until the sync
 * object is destroyed; for an INTRA_GPU fence it is NULL. The outputs are
 * written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if
 * @pCreateNativeFence is NULL, Flags.Value is not 0, PrivateDriverData is
 * not all zero, Info.Type is unknown, Info.Flags is invalid (see
 * D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, also NoSignal with NoWait or
 * NtSecuritySharing without Shared) or Info.EngineAffinity is not 0 or 1
 * (one physical adapter);
 * STATUS_NOT_SUPPORTED for unsupported Info.Flags bits or an adapter
 * without native fences; STATUS_INVALID_PARAMETER if hDevice is not a device
 * handle; STATUS_INSUFFICIENT_RESOURCES past the kernel's fence limit;
 * STATUS_NO_MEMORY; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateNativeFence(D3DKMT_CREATENATIVEFENCE *pCreateNativeFence);

/**
 * D3DKMTShareObjects() - make an NT handle for a shared object
 * @cObjects: number of handles at @hObjects; must be 1
 * @hObjects: the sync object to share
 * @pObjectAttributes: ignored, may be NULL (Windows security attributes)
 * @dwDesiredAccess: ignored, any value (Windows access rights)
 * @phSharedNtHandle: out: the NT handle
 *
 * Only native fences created with Shared and NtSecuritySharing can be
 * shared. Each call makes a new NT handle: a close-on-exec file descriptor
 * returned as (HANDLE)(intptr_t)fd, owned by the caller and closed with
 * close(). It keeps the fence alive after every sync object handle of it
 * is destroyed, can be passed to another process (fork, a unix socket) and
 * is opened there with D3DKMTOpenNativeFenceFromNtHandle().
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @cObjects is not 1,
 * @hObjects or @phSharedNtHandle is NULL, or the fence was not created
 * shareable as an NT handle; STATUS_INVALID_PARAMETER if the handle is not a
 * sync object; STATUS_INSUFFICIENT_RESOURCES when the process is out of
 * file descriptors; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTShareObjects(UINT cObjects, const D3DKMT_HANDLE *hObjects, void *pObjectAttributes, DWORD dwDesiredAccess, HANDLE *phSharedNtHandle);

/*
 * D3DKMT_OPENNATIVEFENCEFROMNTHANDLE: argument of
 * D3DKMTOpenNativeFenceFromNtHandle.
 */
typedef struct _D3DKMT_OPENNATIVEFENCEFROMNTHANDLE {
	HANDLE hNtHandle;		/* in: NT handle (fd) of the fence */
	D3DKMT_HANDLE hDevice;		/* in: device to open the fence on */
	UINT EngineAffinity;		/* in: as in D3DDDI_NATIVEFENCEINFO */
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS Flags;	/* in: NoSignal, NoWait */
	D3DKMT_HANDLE hSyncObject;	/* out: the new sync object */
	D3DDDI_NATIVEFENCEMAPPING NativeFenceMapping;	/* out */
	/* in/out: all zero, as for D3DKMT_CREATENATIVEFENCE; left unchanged */
	BYTE PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE];
	BYTE Reserved[32];		/* ignored */
} D3DKMT_OPENNATIVEFENCEFROMNTHANDLE;

/**
 * D3DKMTOpenNativeFenceFromNtHandle() - open a shared native fence
 * @pOpen: in: hNtHandle, hDevice, EngineAffinity, Flags; out: hSyncObject,
 *	NativeFenceMapping
 *
 * Opens the fence an NT handle from D3DKMTShareObjects() names, in this or
 * another process, on a device of the same adapter (a CrossAdapter fence:
 * of any adapter with native fences). The new sync object shares
 * CurrentValue with every other handle of the fence; its mapping is as for
 * D3DKMTCreateNativeFence(). A CrossAdapter fence created as a monitored
 * fence (D3DKMTCreateSynchronizationObject2()) opens on another adapter as
 * a native fence with a MonitoredValue of its own; on its own adapter a
 * monitored fence stays one (MonitoredValueGpuVa 0). @hNtHandle is not
 * consumed: the caller still closes it. The outputs are written only on
 * success.
 *
 * A native fence handle cannot exist on an adapter without native fences:
 * there the call fails, checking neither the NT handle's file nor the
 * kernel, and D3DKMTOpenSyncObjectFromNtHandle2() opens the fence (a
 * CrossAdapter native fence as a monitored fence).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pOpen is NULL,
 * PrivateDriverData is not all zero, Flags is invalid (see
 * D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS), EngineAffinity is not 0 or 1, or
 * hNtHandle is a fence of another adapter that is not a CrossAdapter
 * fence; STATUS_NOT_SUPPORTED for unsupported Flags bits;
 * STATUS_INVALID_HANDLE if hNtHandle is NULL, not an open file
 * descriptor, or an open file that is not a fence (a pipe, a render node,
 * an eventfd), even with a bad EngineAffinity too (what the file is, is
 * checked only on an adapter with native fences);
 * STATUS_INVALID_PARAMETER if hDevice is not a device handle;
 * STATUS_NOT_SUPPORTED if its adapter has no native fences;
 * STATUS_NO_MEMORY; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTOpenNativeFenceFromNtHandle(D3DKMT_OPENNATIVEFENCEFROMNTHANDLE *pOpen);

/*
 * D3DKMT_DESTROYSYNCHRONIZATIONOBJECT: argument of
 * D3DKMTDestroySynchronizationObject.
 */
typedef struct _D3DKMT_DESTROYSYNCHRONIZATIONOBJECT {
	D3DKMT_HANDLE hSyncObject;	/* in: sync object to destroy */
} D3DKMT_DESTROYSYNCHRONIZATIONOBJECT;

/**
 * D3DKMTDestroySynchronizationObject() - destroy a sync object handle
 * @pDestroy: in: hSyncObject
 *
 * hSyncObject and its CurrentValueCpuVa are invalid after the call
 * whatever it returns. A shared fence lives on while other handles or NT
 * handles of it exist.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroy is NULL;
 * STATUS_INVALID_PARAMETER if hSyncObject is not a sync object handle (or the
 * kernel no longer knows the fence).
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *pDestroy);

/* ------------------------------------------------------------------ */
/* Synchronization objects: WDDM 2.x monitored fences                 */
/* ------------------------------------------------------------------ */

/*
 * A monitored fence (WDDM 2.x context monitoring) is a sync object of the
 * same handle space: a 64-bit fence value the CPU reads through a
 * read-only mapping and GPU engines write through a GPU VA, with no
 * MonitoredValue: the kernel checks its waiters on every GPU signal, and
 * a GPU wait on it (D3DKMTSubmitWaitForSyncObjectsToHwQueue) is resolved
 * by the kernel. D3DKMTWaitForSynchronizationObjectFromCpu,
 * D3DKMTSignalSynchronizationObjectFromCpu, D3DKMTShareObjects,
 * D3DKMTDestroySynchronizationObject and the hardware queue wait and
 * signal calls take it as they take a native fence. It exists on every
 * nfence adapter, with or without native fences.
 */

/* D3DDDI_SYNCHRONIZATIONOBJECT_TYPE: the kinds of WDDM sync object. */
typedef enum _D3DDDI_SYNCHRONIZATIONOBJECT_TYPE {
	D3DDDI_SYNCHRONIZATION_MUTEX = 1,
	D3DDDI_SEMAPHORE = 2,
	D3DDDI_FENCE = 3,
	D3DDDI_CPU_NOTIFICATION = 4,
	D3DDDI_MONITORED_FENCE = 5,
	D3DDDI_PERIODIC_MONITORED_FENCE = 6,
} D3DDDI_SYNCHRONIZATIONOBJECT_TYPE;

/*
 * D3DDDI_SYNCHRONIZATIONOBJECTINFO2: what to create, 80 bytes as Windows'.
 * Of Windows' union, only MonitoredFence (the one type nfence creates) and
 * Reserved (its size, 8 x UINT64) are declared: the members of the other
 * types (SynchronizationMutex, Semaphore, Fence, CPUNotification,
 * PeriodicMonitoredFence) lie within those 64 bytes, but their fields are
 * not in nfence's references. SharedHandle is the global (pre-NT-handle)
 * share handle Windows returns for a Shared object without
 * NtSecuritySharing; nfence shares through NT handles only and sets it to
 * 0.
 */
typedef struct _D3DDDI_SYNCHRONIZATIONOBJECTINFO2 {
	D3DDDI_SYNCHRONIZATIONOBJECT_TYPE Type;		/* in */
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS Flags;	/* in */
	union {
		struct {
			UINT64 InitialFenceValue;		/* in */
			VOID *FenceValueCPUVirtualAddress;	/* out, read-only */
			D3DGPU_VIRTUAL_ADDRESS FenceValueGPUVirtualAddress; /* out */
			UINT EngineAffinity;	/* in: physical adapters, 0 or 1 */
			UINT Padding;
		} MonitoredFence;
		struct {
			UINT64 Reserved[8];
		} Reserved;
	};
	D3DKMT_HANDLE SharedHandle;			/* out: 0 */
} D3DDDI_SYNCHRONIZATIONOBJECTINFO2;

/* D3DKMT_CREATESYNCHRONIZATIONOBJECT2: argument of D3DKMTCreateSynchronizationObject2. */
typedef struct _D3DKMT_CREATESYNCHRONIZATIONOBJECT2 {
	D3DKMT_HANDLE hDevice;			/* in: device handle */
	D3DDDI_SYNCHRONIZATIONOBJECTINFO2 Info;	/* in/out */
	D3DKMT_HANDLE hSyncObject;		/* out: sync object handle */
} D3DKMT_CREATESYNCHRONIZATIONOBJECT2;

/**
 * D3DKMTCreateSynchronizationObject2() - create a monitored fence
 * @pCreate: in: hDevice, Info.Type (D3DDDI_MONITORED_FENCE), Info.Flags,
 *	Info.MonitoredFence.InitialFenceValue and .EngineAffinity; out:
 *	hSyncObject, Info.MonitoredFence.FenceValueCPUVirtualAddress (a
 *	read-only mapping: a store faults) and .FenceValueGPUVirtualAddress,
 *	Info.SharedHandle (0)
 *
 * Info.Flags as for D3DKMTCreateNativeFence: Shared (with
 * NtSecuritySharing: D3DKMTShareObjects gives an NT handle), CrossAdapter
 * (with Shared), NoSignal and NoWait; TopOfPipeline, NoSignalMaxValueOnTdr
 * and NoGPUAccess are STATUS_NOT_SUPPORTED, SignalByKmd and reserved bits
 * STATUS_INVALID_PARAMETER. A CrossAdapter monitored fence, on an adapter
 * with or without native fences, opens on every adapter: as a native fence
 * (D3DKMTOpenNativeFenceFromNtHandle(), with a MonitoredValue of its own)
 * on another adapter with native fences, as a monitored fence
 * (D3DKMTOpenSyncObjectFromNtHandle2()) on one without; all share its
 * value. EngineAffinity is a mask of physical adapters: 0 or 1 on nfence.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreate is NULL,
 * Info.Type is not a D3DDDI_SYNCHRONIZATIONOBJECT_TYPE, or for bad flags
 * (CrossAdapter or NtSecuritySharing without Shared too) or
 * EngineAffinity; STATUS_NOT_SUPPORTED for the other sync object types
 * (mutexes, semaphores, fences, CPU notifications and periodic monitored
 * fences belong to WDDM 1.x and display); STATUS_INVALID_PARAMETER if hDevice
 * is not a device handle; otherwise see NFenceStatusFromErrno(). Nothing
 * is written on failure.
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *pCreate);

/* D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2: argument of D3DKMTOpenSyncObjectFromNtHandle2. */
typedef struct _D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 {
	HANDLE hNtHandle;			/* in: the NT handle (an fd) */
	D3DKMT_HANDLE hDevice;			/* in: device to open it on */
	D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS Flags; /* in: NoSignal, NoWait */
	D3DKMT_HANDLE hSyncObject;		/* out: sync object handle */
	union {
		struct {
			VOID *FenceValueCPUVirtualAddress;	/* out, read-only */
			D3DGPU_VIRTUAL_ADDRESS FenceValueGPUVirtualAddress; /* out */
			UINT EngineAffinity;	/* in: physical adapters, 0 or 1 */
		} MonitoredFence;
		UINT64 Reserved[8];
	};
} D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2;

/**
 * D3DKMTOpenSyncObjectFromNtHandle2() - open a shared monitored fence
 * @pOpen: in: hNtHandle, hDevice, Flags, MonitoredFence.EngineAffinity;
 *	out: hSyncObject, MonitoredFence.FenceValueCPUVirtualAddress and
 *	.FenceValueGPUVirtualAddress
 *
 * The fence opens on a device of its own adapter, a CrossAdapter fence on
 * a device of any adapter. The NT handle of a native fence opens too: on
 * an adapter with native fences as D3DKMTOpenNativeFenceFromNtHandle would
 * open it (its MonitoredValue not returned); a CrossAdapter native fence
 * opened on an adapter without native fences is a monitored fence there,
 * sharing CurrentValue with its other adapters. Flags: NoSignal and NoWait
 * as for native fences; the sharing flags belong to the creator
 * (CrossAdapter is STATUS_NOT_SUPPORTED here).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pOpen is NULL, for
 * bad flags or EngineAffinity, or if the NT handle is a fence of another
 * adapter that is not a CrossAdapter fence, or if hDevice is not a device
 * handle; STATUS_INVALID_HANDLE if hNtHandle is NULL, not open, or an
 * open file that is not a fence (even with a bad EngineAffinity too);
 * otherwise see NFenceStatusFromErrno(). Nothing is written on failure.
 */
NFENCE_EXPORT NTSTATUS D3DKMTOpenSyncObjectFromNtHandle2(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *pOpen);

/* D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS: CPU wait flags. */
typedef struct _D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS {
	union {
		struct {
			/* satisfied when any one object reaches its value */
			UINT WaitAny			: 1;
			UINT Reserved			: 31;
		};
		UINT Value;
	};
} D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS;

/* D3DKMT_NFENCE_MAX_SYNC_OBJECTS: objects one CPU wait or signal names */
#define D3DKMT_NFENCE_MAX_SYNC_OBJECTS	64

/*
 * D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU: argument of
 * D3DKMTWaitForSynchronizationObjectFromCpu.
 */
typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	const UINT64 *FenceValueArray;	/* in: value to wait for, per object */
	/* in: NULL to block; else an eventfd (HANDLE)(intptr_t)fd */
	HANDLE hAsyncEvent;
	D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS Flags;	/* in */
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU;

/**
 * D3DKMTWaitForSynchronizationObjectFromCpu() - wait for fence values
 * @pWait: hDevice, the objects and their values, hAsyncEvent, Flags
 *
 * Waits until every object (with Flags.WaitAny, one object) has a
 * CurrentValue of at least its value. The sync objects must be of the
 * adapter of hDevice. With hAsyncEvent NULL the call blocks, without
 * timeout, until the wait is satisfied. A blocking wait is interruptible by
 * signals at the kernel level: signal handlers run, and libnfence then
 * resumes the wait. With hAsyncEvent an eventfd, the call returns at once
 * and the kernel adds 1 to the eventfd's counter (making it readable) when
 * the wait is satisfied, immediately if it already is.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pWait or an array is
 * NULL, ObjectCount is 0 or above 64, Flags.Reserved is not 0, or an
 * object is an INTRA_GPU fence; STATUS_INVALID_PARAMETER also if hDevice
 * is not a device handle or an object is not a sync object of the
 * device's adapter; STATUS_INVALID_HANDLE if hAsyncEvent is not an open
 * file descriptor, or an open file that is not an eventfd (then also with
 * an INTRA_GPU fence);
 * STATUS_ACCESS_DENIED for an object opened with NoWait;
 * otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTWaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *pWait);

/*
 * D3DDDICB_SIGNALFLAGS: signal flags, in the bit order of Windows'
 * d3dukmdt.h. For a CPU signal: SignalAtSubmission is ignored (a CPU signal
 * happens when it is submitted); EnqueueCpuEvent and AllowFenceRewind are
 * STATUS_NOT_SUPPORTED (a CPU signal never lowers CurrentValue); Reserved
 * and DXGK_SIGNAL_FLAG_INTERNAL0 must be zero (STATUS_INVALID_PARAMETER).
 */
typedef struct _D3DDDICB_SIGNALFLAGS {
	union {
		struct {
			UINT SignalAtSubmission		: 1;
			UINT EnqueueCpuEvent		: 1;
			UINT AllowFenceRewind		: 1;
			UINT Reserved			: 28;
			UINT DXGK_SIGNAL_FLAG_INTERNAL0	: 1;
		};
		UINT Value;
	};
} D3DDDICB_SIGNALFLAGS;

/* D3DDDI_SIGNALSYNCHRONIZATIONOBJECTFROMCPU_FLAGS: the CPU signal flags */
typedef D3DDDICB_SIGNALFLAGS D3DDDI_SIGNALSYNCHRONIZATIONOBJECTFROMCPU_FLAGS;

/*
 * D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU: argument of
 * D3DKMTSignalSynchronizationObjectFromCpu.
 */
typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	const UINT64 *FenceValueArray;	/* in: value to signal, per object */
	D3DDDICB_SIGNALFLAGS Flags;	/* in */
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU;

/**
 * D3DKMTSignalSynchronizationObjectFromCpu() - signal fences from the CPU
 * @pSignal: hDevice, the objects and their values, Flags
 *
 * Sets each object's CurrentValue to its value, unless it already is at
 * least that (a lower value changes nothing and succeeds); the same object
 * twice takes the larger value. Every object is checked before any is
 * signaled. CPU waiters and GPU queues the new values satisfy are released.
 * The sync objects must be of the adapter of hDevice.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pSignal or an array
 * is NULL, ObjectCount is 0 or above 64, Flags is invalid (see
 * D3DDDICB_SIGNALFLAGS) or an object is an INTRA_GPU fence;
 * STATUS_NOT_SUPPORTED for unsupported Flags; STATUS_INVALID_PARAMETER if
 * hDevice is not a device handle or an object is not a sync object of the
 * device's adapter; STATUS_ACCESS_DENIED for an object opened with
 * NoSignal; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObjectFromCpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU *pSignal);

/* ------------------------------------------------------------------ */
/* Allocations                                                        */
/* ------------------------------------------------------------------ */

/*
 * An allocation is memory of one segment (system memory or VRAM) mapped at
 * a GPU virtual address in the process's GPU address space, which is where
 * the engines reach it. Its GPU VA is an output of D3DKMTCreateAllocation2()
 * (D3DDDI_ALLOCATIONINFO2::GpuVirtualAddress), as if
 * D3DKMTMapGpuVirtualAddress() had been called at creation:
 * D3DKMTMapGpuVirtualAddress is not provided. Allocations belong to the
 * device they were created on; destroying the device destroys them.
 * Resources (hResource) and the D3D9-era D3DKMTCreateAllocation (with
 * D3DDDI_ALLOCATIONINFO) are not provided either.
 *
 * What the allocation is made of is driver-private data on Windows; on
 * nfence it is an NFENCE_ALLOCATION_DESC passed as the pPrivateDriverData
 * of each D3DDDI_ALLOCATIONINFO2.
 */

/* D3DDDI_VIDEO_PRESENT_SOURCE_ID: a display source; nfence has none */
typedef UINT D3DDDI_VIDEO_PRESENT_SOURCE_ID;

/* ULONG_PTR: an unsigned integer of pointer size */
typedef uintptr_t ULONG_PTR;

/* NFENCE_SEGMENT_ID_*: the SegmentId of NFENCE_ALLOCATION_DESC */
#define NFENCE_SEGMENT_ID_SYSTEM	1u	/* system memory (aperture) */
#define NFENCE_SEGMENT_ID_LOCAL		2u	/* VRAM */

/* NFENCE_ALLOCATION_FLAGS: how an allocation may be placed and used. */
typedef struct _NFENCE_ALLOCATION_FLAGS {
	union {
		struct {
			/*
			 * the CPU may map it with D3DKMTLock2(); implied
			 * for system memory; VRAM comes from the
			 * CPU-visible part of the segment
			 */
			UINT CpuVisible			: 1;
			/* a full VRAM segment falls back to system memory */
			UINT AllowDemote		: 1;
			UINT Reserved			: 30;
		};
		UINT Value;
	};
} NFENCE_ALLOCATION_FLAGS;

/*
 * NFENCE_ALLOCATION_DESC: nfence's private driver data of one allocation,
 * at D3DDDI_ALLOCATIONINFO2::pPrivateDriverData with PrivateDriverDataSize
 * sizeof(NFENCE_ALLOCATION_DESC). Read only.
 */
typedef struct _NFENCE_ALLOCATION_DESC {
	UINT64 Size;			/* bytes, 1 .. 256 MiB; page rounded */
	UINT SegmentId;			/* NFENCE_SEGMENT_ID_SYSTEM or _LOCAL */
	NFENCE_ALLOCATION_FLAGS Flags;
} NFENCE_ALLOCATION_DESC;

/*
 * D3DDDI_ALLOCATIONINFO2: one allocation of D3DKMTCreateAllocation2().
 * hSection/pSystemMem (existing memory) must be NULL; VidPnSourceId,
 * Priority and Flags.OverridePriority are ignored; Flags.Primary and
 * Flags.Stereo are STATUS_NOT_SUPPORTED (nfence has no display); Reserved
 * is ignored.
 */
typedef struct _D3DDDI_ALLOCATIONINFO2 {
	D3DKMT_HANDLE hAllocation;	/* out: allocation handle */
	union {
		HANDLE hSection;	/* in: must be NULL */
		const VOID *pSystemMem;	/* in: must be NULL */
	};
	/* in: an NFENCE_ALLOCATION_DESC */
	const VOID *pPrivateDriverData;
	UINT PrivateDriverDataSize;	/* in: sizeof(NFENCE_ALLOCATION_DESC) */
	D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;	/* in: ignored */
	union {
		struct {
			UINT Primary		: 1;
			UINT Stereo		: 1;
			UINT OverridePriority	: 1;
			UINT Reserved		: 29;
		};
		UINT Value;
	} Flags;			/* in */
	/* out: GPU VA of the first byte, page aligned */
	D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress;
	union {
		UINT Priority;		/* in: ignored */
		ULONG_PTR Unused;
	};
	ULONG_PTR Reserved[5];		/* ignored */
} D3DDDI_ALLOCATIONINFO2;

/*
 * D3DKMT_CREATEALLOCATIONFLAGS: in the bit order of Windows' d3dkmthk.h.
 * Accepted and without effect: NonSecure, RestrictSharedAccess,
 * SwapChainBackBuffer, AllowNotZeroed, NoKmdAccess. Zeroed is an output:
 * set, as nfence memory always starts zeroed. Reserved must be zero
 * (STATUS_INVALID_PARAMETER). Every other bit (resources, sharing,
 * protected, existing memory, cache attributes, cross-adapter, write
 * watch, standard allocations, read-only, physically contiguous,
 * displayable) is STATUS_NOT_SUPPORTED.
 */
typedef struct _D3DKMT_CREATEALLOCATIONFLAGS {
	union {
		struct {
			UINT CreateResource		: 1;
			UINT CreateShared		: 1;
			UINT NonSecure			: 1;
			UINT CreateProtected		: 1;
			UINT RestrictSharedAccess	: 1;
			UINT ExistingSysMem		: 1;
			UINT NtSecuritySharing		: 1;
			UINT ReadOnly			: 1;
			UINT CreateWriteCombined	: 1;
			UINT CreateCached		: 1;
			UINT SwapChainBackBuffer	: 1;
			UINT CrossAdapter		: 1;
			UINT OpenCrossAdapter		: 1;
			UINT PartialSharedCreation	: 1;
			UINT Zeroed			: 1;
			UINT WriteWatch			: 1;
			UINT StandardAllocation		: 1;
			UINT ExistingSection		: 1;
			UINT AllowNotZeroed		: 1;
			UINT PhysicallyContiguous	: 1;
			UINT NoKmdAccess		: 1;
			UINT SharedDisplayable		: 1;
			UINT Reserved			: 10;
		};
		UINT Value;
	};
} D3DKMT_CREATEALLOCATIONFLAGS;

/*
 * The standard allocation description and the WDDM 1.x allocation entry:
 * named by D3DKMT_CREATEALLOCATION's unions, never read by nfence
 * (Flags.StandardAllocation is STATUS_NOT_SUPPORTED, and
 * D3DKMTCreateAllocation2() reads pAllocationInfo2), so left incomplete.
 */
typedef struct _D3DKMT_CREATESTANDARDALLOCATION D3DKMT_CREATESTANDARDALLOCATION;
typedef struct _D3DDDI_ALLOCATIONINFO D3DDDI_ALLOCATIONINFO;

/*
 * D3DKMT_CREATEALLOCATION: argument of D3DKMTCreateAllocation2. The
 * resource-level fields (hResource, pPrivateRuntimeData,
 * pPrivateDriverData) are for runtimes that group allocations in
 * resources; nfence has no resources: hResource must be 0, the private
 * data are ignored, hGlobalShare is set to 0.
 */
typedef struct _D3DKMT_CREATEALLOCATION {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hResource;	/* in: must be 0 */
	D3DKMT_HANDLE hGlobalShare;	/* out: 0 (no sharing) */
	const VOID *pPrivateRuntimeData;	/* in: ignored */
	UINT PrivateRuntimeDataSize;	/* in: ignored */
	union {
		/* with Flags.StandardAllocation: not supported */
		D3DKMT_CREATESTANDARDALLOCATION *pStandardAllocation;
		const VOID *pPrivateDriverData;	/* in: ignored (resource data) */
	};
	UINT PrivateDriverDataSize;	/* in: ignored */
	UINT NumAllocations;		/* in: entries at pAllocationInfo2, >= 1 */
	union {
		D3DDDI_ALLOCATIONINFO *pAllocationInfo;	/* WDDM 1.x: unused */
		D3DDDI_ALLOCATIONINFO2 *pAllocationInfo2;	/* in/out */
	};
	D3DKMT_CREATEALLOCATIONFLAGS Flags;	/* in/out */
	HANDLE hPrivateRuntimeResourceHandle;	/* in: ignored */
} D3DKMT_CREATEALLOCATION;

/**
 * D3DKMTCreateAllocation2() - create allocations on a device
 * @pCreateAllocation: in: hDevice, NumAllocations, pAllocationInfo2 (each
 *	with an NFENCE_ALLOCATION_DESC), Flags; out: in each
 *	pAllocationInfo2 entry hAllocation and GpuVirtualAddress, and
 *	Flags.Zeroed
 *
 * Creates NumAllocations allocations, each as its NFENCE_ALLOCATION_DESC
 * says: Size bytes (rounded up to whole pages) of segment SegmentId, mapped
 * for the GPU at GpuVirtualAddress and zeroed. A VRAM request with
 * Flags.AllowDemote lands in system memory when VRAM (or, with CpuVisible,
 * its CPU-visible part) is full; NFenceQueryAllocation() tells where it
 * went. Either every allocation is created or none is; the outputs are
 * written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateAllocation
 * or pAllocationInfo2 is NULL, NumAllocations is 0, hResource is not 0,
 * Flags.Reserved is not 0, an entry's private data is not an
 * NFENCE_ALLOCATION_DESC (NULL or of another size), has Flags.Reserved set,
 * or its Size, SegmentId or Flags are refused by the kernel (a size of 0 or
 * above 256 MiB, a segment other than 1 or 2, AllowDemote for system
 * memory, CpuVisible VRAM on an adapter without CPU-visible VRAM), or an
 * entry has hSection/pSystemMem set; STATUS_NOT_SUPPORTED for unsupported
 * Flags or entry flags; STATUS_INVALID_PARAMETER if hDevice is not a device
 * handle; STATUS_INSUFFICIENT_RESOURCES when the segment is full or the
 * kernel's allocation limit is reached; STATUS_NO_MEMORY; otherwise see
 * NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateAllocation2(D3DKMT_CREATEALLOCATION *pCreateAllocation);

/* D3DDDICB_DESTROYALLOCATION2FLAGS: AssumeNotInUse, SynchronousDestroy */
typedef struct _D3DDDICB_DESTROYALLOCATION2FLAGS {
	union {
		struct {
			UINT AssumeNotInUse		: 1;
			UINT SynchronousDestroy		: 1;
			UINT Reserved			: 29;
			UINT SystemUseOnly		: 1;
		};
		UINT Value;
	};
} D3DDDICB_DESTROYALLOCATION2FLAGS;

/* D3DKMT_DESTROYALLOCATION2: argument of D3DKMTDestroyAllocation2. */
typedef struct _D3DKMT_DESTROYALLOCATION2 {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hResource;	/* in: must be 0 */
	const D3DKMT_HANDLE *phAllocationList;	/* in: allocations */
	UINT AllocationCount;		/* in: entries at phAllocationList */
	D3DDDICB_DESTROYALLOCATION2FLAGS Flags;	/* in */
} D3DKMT_DESTROYALLOCATION2;

/**
 * D3DKMTDestroyAllocation2() - destroy allocations
 * @pDestroyAllocation: in: hDevice, phAllocationList, AllocationCount,
 *	Flags
 *
 * Every handle is checked before any allocation is destroyed. Destroying an
 * allocation unmaps it from the GPU at once (later GPU accesses fault the
 * context that makes them; nfence does not wait for work in flight, so
 * Flags.AssumeNotInUse and Flags.SynchronousDestroy change nothing) and
 * unmaps its D3DKMTLock2() CPU mapping whatever its lock count.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroyAllocation
 * or phAllocationList is NULL, AllocationCount is 0, hResource is not 0 or
 * Flags.Reserved or Flags.SystemUseOnly is set; STATUS_INVALID_PARAMETER if
 * hDevice is not a device handle or a handle is not an allocation of it
 * (nothing destroyed), or a handle is listed twice (the others are
 * destroyed).
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyAllocation2(const D3DKMT_DESTROYALLOCATION2 *pDestroyAllocation);

/* D3DDDICB_LOCK2FLAGS: no flag is defined; Value must be 0. */
typedef struct _D3DDDICB_LOCK2FLAGS {
	union {
		struct {
			UINT Reserved			: 32;
		};
		UINT Value;
	};
} D3DDDICB_LOCK2FLAGS;

/* D3DKMT_LOCK2: argument of D3DKMTLock2. */
typedef struct _D3DKMT_LOCK2 {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hAllocation;	/* in: allocation handle */
	D3DDDICB_LOCK2FLAGS Flags;	/* in: must be 0 */
	VOID *pData;			/* out: CPU address of the first byte */
} D3DKMT_LOCK2;

/**
 * D3DKMTLock2() - map an allocation for the CPU
 * @pLock: in: hDevice, hAllocation, Flags; out: pData
 *
 * Maps the whole allocation read/write, shared with the GPU: what the CPU
 * writes the engines read and the reverse (no cache flush is needed). The
 * allocation must be CPU-visible (system memory, or VRAM created with
 * CpuVisible). Locks nest: while an allocation is locked, D3DKMTLock2()
 * returns the same pData and counts one more lock; the mapping goes with the
 * last D3DKMTUnlock2(), or when the allocation or its device is destroyed.
 * The count is per process, not per thread.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pLock is NULL,
 * Flags is not 0 or the allocation is not CPU-visible;
 * STATUS_INVALID_PARAMETER if hDevice is not a device handle or hAllocation
 * is not an allocation of it; otherwise the status of the kernel's or of
 * mmap()'s errno (see NFenceStatusFromErrno()).
 */
NFENCE_EXPORT NTSTATUS D3DKMTLock2(D3DKMT_LOCK2 *pLock);

/* D3DKMT_UNLOCK2: argument of D3DKMTUnlock2. */
typedef struct _D3DKMT_UNLOCK2 {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	D3DKMT_HANDLE hAllocation;	/* in: allocation handle */
} D3DKMT_UNLOCK2;

/**
 * D3DKMTUnlock2() - drop one lock of an allocation
 * @pUnlock: in: hDevice, hAllocation
 *
 * The last unlock unmaps the allocation from the CPU: the pData of
 * D3DKMTLock2() is invalid from then on.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pUnlock is NULL or
 * the allocation is not locked; STATUS_INVALID_PARAMETER if hDevice is not a
 * device handle or hAllocation is not an allocation of it.
 */
NFENCE_EXPORT NTSTATUS D3DKMTUnlock2(const D3DKMT_UNLOCK2 *pUnlock);

/* ------------------------------------------------------------------ */
/* Contexts                                                           */
/* ------------------------------------------------------------------ */

/*
 * A context runs on one engine (node) of the adapter; it is the parent of
 * hardware queues. The context handle alone names it: libnfence remembers
 * its device. Destroying a context destroys its hardware queues;
 * destroying its device destroys it.
 */

/*
 * D3DDDI_CREATECONTEXTFLAGS: in the bit order of Windows' d3dukmdt.h.
 * DisableGpuTimeout applies to every hardware queue of the context (as
 * D3DDDI_CREATEHWQUEUEFLAGS::DisableGpuTimeout); InitialData,
 * SynchronizationOnly, HwQueueSupported (nfence contexts always have
 * hardware queues) and NoKmdAccess are accepted without effect;
 * NullRendering is STATUS_NOT_SUPPORTED; Reserved must be zero.
 */
typedef struct _D3DDDI_CREATECONTEXTFLAGS {
	union {
		struct {
			UINT NullRendering		: 1;
			UINT InitialData		: 1;
			UINT DisableGpuTimeout		: 1;
			UINT SynchronizationOnly	: 1;
			UINT HwQueueSupported		: 1;
			UINT NoKmdAccess		: 1;
			UINT Reserved			: 26;
		};
		UINT Value;
	};
} D3DDDI_CREATECONTEXTFLAGS;

/* D3DKMT_CLIENTHINT: which runtime creates a context; only a hint. */
typedef enum _D3DKMT_CLIENTHINT {
	D3DKMT_CLIENTHINT_UNKNOWN	= 0,
	D3DKMT_CLIENTHINT_OPENGL	= 1,
	D3DKMT_CLIENTHINT_CDD		= 2,
	D3DKMT_CLIENTHINT_OPENCL	= 3,
	D3DKMT_CLIENTHINT_VULKAN	= 4,
	D3DKMT_CLIENTHINT_CUDA		= 5,
	D3DKMT_CLIENTHINT_RESERVED	= 6,
	D3DKMT_CLIENTHINT_DX7		= 7,
	D3DKMT_CLIENTHINT_DX8		= 8,
	D3DKMT_CLIENTHINT_DX9		= 9,
	D3DKMT_CLIENTHINT_DX10		= 10,
	D3DKMT_CLIENTHINT_DX11		= 11,
	D3DKMT_CLIENTHINT_DX12		= 12,
	D3DKMT_CLIENTHINT_9ON12		= 13,
	D3DKMT_CLIENTHINT_11ON12	= 14,
	D3DKMT_CLIENTHINT_MFT_ENCODE	= 15,
	D3DKMT_CLIENTHINT_GLON12	= 16,
	D3DKMT_CLIENTHINT_CLON12	= 17,
} D3DKMT_CLIENTHINT;

/* D3DKMT_CREATECONTEXTVIRTUAL: argument of D3DKMTCreateContextVirtual. */
typedef struct _D3DKMT_CREATECONTEXTVIRTUAL {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	UINT NodeOrdinal;		/* in: engine, 0 .. NumEngines - 1 */
	/* in: physical adapters of a linked adapter: 0 or 1 (one adapter) */
	UINT EngineAffinity;
	D3DDDI_CREATECONTEXTFLAGS Flags;	/* in */
	/* in: ignored, the nfence kernel driver takes none */
	VOID *pPrivateDriverData;
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	D3DKMT_CLIENTHINT ClientHint;	/* in: ignored */
	D3DKMT_HANDLE hContext;		/* out: context handle */
} D3DKMT_CREATECONTEXTVIRTUAL;

/**
 * D3DKMTCreateContextVirtual() - create a context on an engine
 * @pCreateContext: in: hDevice, NodeOrdinal, EngineAffinity, Flags,
 *	pPrivateDriverData, PrivateDriverDataSize, ClientHint; out: hContext
 *
 * The outputs are written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateContext is
 * NULL, EngineAffinity is above 1, Flags.Reserved is set,
 * PrivateDriverDataSize is not 0 with pPrivateDriverData NULL, or the
 * adapter has no engine NodeOrdinal; STATUS_NOT_SUPPORTED for
 * Flags.NullRendering; STATUS_INVALID_PARAMETER if hDevice is not a device
 * handle; STATUS_INSUFFICIENT_RESOURCES past the kernel's context limit;
 * STATUS_NO_MEMORY; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateContextVirtual(D3DKMT_CREATECONTEXTVIRTUAL *pCreateContext);

/*
 * D3DKMT_CREATECONTEXT: argument of D3DKMTCreateContext, 96 bytes as
 * Windows'. The first eight members are D3DKMT_CREATECONTEXTVIRTUAL's;
 * the rest are the outputs of the WDDM 1.x context: the command buffer,
 * allocation list and patch location list that D3DKMTRender submits.
 */
typedef struct _D3DKMT_CREATECONTEXT {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	UINT NodeOrdinal;		/* in: engine, 0 .. NumEngines - 1 */
	UINT EngineAffinity;		/* in: 0 or 1 (one adapter) */
	D3DDDI_CREATECONTEXTFLAGS Flags;	/* in */
	VOID *pPrivateDriverData;	/* in: ignored */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	D3DKMT_CLIENTHINT ClientHint;	/* in: ignored */
	D3DKMT_HANDLE hContext;		/* out: context handle */
	VOID *pCommandBuffer;		/* out: NULL */
	UINT CommandBufferSize;		/* out: 0 */
	D3DDDI_ALLOCATIONLIST *pAllocationList;	/* out: NULL */
	UINT AllocationListSize;	/* out: 0 */
	D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;	/* out: NULL */
	UINT PatchLocationListSize;	/* out: 0 */
	D3DGPU_VIRTUAL_ADDRESS CommandBuffer;	/* out: 0 */
} D3DKMT_CREATECONTEXT;

/**
 * D3DKMTCreateContext() - create a context, as D3DKMTCreateContextVirtual
 * @pCreateContext: in: hDevice, NodeOrdinal, EngineAffinity, Flags,
 *	pPrivateDriverData, PrivateDriverDataSize, ClientHint; out: hContext
 *	and the WDDM 1.x submission buffers
 *
 * The context is the one D3DKMTCreateContextVirtual() makes, with the same
 * inputs and checks, and every call that takes a context takes it. nfence
 * has no WDDM 1.x submission (D3DKMTRender is refused), so the call hands
 * out no command buffer, allocation list or patch location list: their
 * pointers, sizes and CommandBuffer are 0, as D3DKMTCreateDevice()'s are.
 * The outputs are written only on success.
 *
 * Return: as D3DKMTCreateContextVirtual().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateContext(D3DKMT_CREATECONTEXT *pCreateContext);

/* D3DKMT_DESTROYCONTEXT: argument of D3DKMTDestroyContext. */
typedef struct _D3DKMT_DESTROYCONTEXT {
	D3DKMT_HANDLE hContext;		/* in: context handle */
} D3DKMT_DESTROYCONTEXT;

/**
 * D3DKMTDestroyContext() - destroy a context and its hardware queues
 * @pDestroyContext: in: hContext
 *
 * Work still queued on the context's hardware queues is dropped. hContext,
 * the handles of its queues and of their progress fences, and the progress
 * fences' CPU mappings are invalid after the call whatever it returns.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroyContext is
 * NULL; STATUS_INVALID_PARAMETER if hContext is not a context handle.
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyContext(const D3DKMT_DESTROYCONTEXT *pDestroyContext);

/*
 * D3DDDI_CREATEHWCONTEXTFLAGS: Windows' flag word of
 * D3DKMT_CREATEHWCONTEXT. nfence's references name none of its bits, so
 * only the word is declared, and it must be 0.
 */
typedef struct _D3DDDI_CREATEHWCONTEXTFLAGS {
	union {
		UINT Value;
	};
} D3DDDI_CREATEHWCONTEXTFLAGS;

/* D3DKMT_CREATEHWCONTEXT: argument of D3DKMTCreateHwContext, as Windows'. */
typedef struct _D3DKMT_CREATEHWCONTEXT {
	D3DKMT_HANDLE hDevice;		/* in: device handle */
	UINT NodeOrdinal;		/* in: engine, 0 .. NumEngines - 1 */
	UINT EngineAffinity;		/* in: 0 or 1 (one adapter) */
	D3DDDI_CREATEHWCONTEXTFLAGS Flags;	/* in: Value 0 */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	VOID *pPrivateDriverData;	/* in: ignored */
	D3DKMT_HANDLE hHwContext;	/* out: context handle */
} D3DKMT_CREATEHWCONTEXT;

/**
 * D3DKMTCreateHwContext() - create a hardware context: a context
 * @pCreateHwContext: in: hDevice, NodeOrdinal, EngineAffinity, Flags,
 *	pPrivateDriverData, PrivateDriverDataSize; out: hHwContext
 *
 * A hardware context is the parent of hardware queues
 * (D3DKMT_CREATEHWQUEUE.hHwContext); on nfence that is a context, so the
 * call makes the context D3DKMTCreateContextVirtual() makes, with no
 * context flag, and hHwContext is a context handle: every call that takes
 * a context takes it, and D3DKMTDestroyHwContext() and
 * D3DKMTDestroyContext() both destroy it (Documentation/libnfence.rst,
 * "Hardware contexts and context-level submission"). hHwContext is
 * written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateHwContext is
 * NULL, Flags.Value is not 0 (no bit of it is known), EngineAffinity is
 * above 1, PrivateDriverDataSize is not 0 with pPrivateDriverData NULL, or
 * the adapter has no engine NodeOrdinal; otherwise as
 * D3DKMTCreateContextVirtual().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateHwContext(D3DKMT_CREATEHWCONTEXT *pCreateHwContext);

/* D3DKMT_DESTROYHWCONTEXT: argument of D3DKMTDestroyHwContext. */
typedef struct _D3DKMT_DESTROYHWCONTEXT {
	D3DKMT_HANDLE hHwContext;	/* in: context handle */
} D3DKMT_DESTROYHWCONTEXT;

/**
 * D3DKMTDestroyHwContext() - destroy a hardware context: a context
 * @pDestroyHwContext: in: hHwContext
 *
 * As D3DKMTDestroyContext(): hHwContext may name any context, made by
 * D3DKMTCreateHwContext(), D3DKMTCreateContextVirtual() or
 * D3DKMTCreateContext().
 *
 * Return: as D3DKMTDestroyContext().
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyHwContext(const D3DKMT_DESTROYHWCONTEXT *pDestroyHwContext);

/* D3DKMT_SETCONTEXTSCHEDULINGPRIORITY: argument of D3DKMTSetContextSchedulingPriority, as Windows'. */
typedef struct _D3DKMT_SETCONTEXTSCHEDULINGPRIORITY {
	D3DKMT_HANDLE hContext;		/* in: context handle */
	INT Priority;			/* in: -7 .. 7 */
} D3DKMT_SETCONTEXTSCHEDULINGPRIORITY;

/**
 * D3DKMTSetContextSchedulingPriority() - set a context's scheduling priority
 * @pData: in: hContext, Priority
 *
 * Priority is relative to the other contexts on the same engine, -7 (the
 * lowest) to 7; a new context has 0. The simulated GPU's scheduler gives
 * a context of priority p > 0 up to p more turns in a row on its engine,
 * and has one of priority p < 0 yield its turn until 1 - p turns of others
 * have run; none is starved (Documentation/libnfence.rst, "Scheduling
 * priorities"). It applies to every queue of the context, from their next
 * turns on. Windows' absolute priorities (a flag bit ORed into Priority)
 * are outside -7..7 and refused.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pData is NULL,
 * Priority is outside -7..7 or hContext names no context.
 */
NFENCE_EXPORT NTSTATUS D3DKMTSetContextSchedulingPriority(const D3DKMT_SETCONTEXTSCHEDULINGPRIORITY *pData);

/* D3DKMT_GETCONTEXTSCHEDULINGPRIORITY: argument of D3DKMTGetContextSchedulingPriority, as Windows'. */
typedef struct _D3DKMT_GETCONTEXTSCHEDULINGPRIORITY {
	D3DKMT_HANDLE hContext;		/* in: context handle */
	INT Priority;			/* out: -7 .. 7 */
} D3DKMT_GETCONTEXTSCHEDULINGPRIORITY;

/**
 * D3DKMTGetContextSchedulingPriority() - a context's scheduling priority
 * @pData: in: hContext; out: Priority
 *
 * The priority D3DKMTSetContextSchedulingPriority() last set, 0 if none.
 * Priority is written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pData is NULL or
 * hContext names no context.
 */
NFENCE_EXPORT NTSTATUS D3DKMTGetContextSchedulingPriority(D3DKMT_GETCONTEXTSCHEDULINGPRIORITY *pData);

/* ------------------------------------------------------------------ */
/* Hardware queues and submission                                     */
/* ------------------------------------------------------------------ */

/*
 * A hardware queue of a context is what the scheduler (the simulated GPU's
 * context management processor) runs. Each has a progress fence: a sync
 * object of the queue's device, created with the queue, that the scheduler
 * signals with a submission's HwQueueProgressFenceId once the submission
 * has run. It can be read through HwQueueProgressFenceCPUVirtualAddress,
 * waited for (D3DKMTWaitForSynchronizationObjectFromCpu() on its device,
 * or a GPU wait at HwQueueProgressFenceGPUVirtualAddress) and, as any
 * fence, signaled; it is destroyed with the queue only:
 * D3DKMTDestroySynchronizationObject() refuses it with STATUS_DEVICE_BUSY.
 *
 * A GPU page fault or an invalid command on a queue faults its context:
 * the context's queues drop their pending work, their progress fences
 * become AlwaysSignaled (CurrentValue at least 0xFFFFFFFF) and every
 * submission to them fails with STATUS_DEVICE_REMOVED;
 * NFenceQueryContextState() tells what faulted where. A command running
 * longer than the adapter's timeout (TDR) on a queue without
 * DisableGpuTimeout loses the whole device, with the same effects on all
 * its queues and fences.
 */

/*
 * D3DDDI_CREATEHWQUEUEFLAGS: hardware queue flags, in the bit order of
 * Windows' d3dukmdt.h. NoBroadcastSignal, NoBroadcastWait and NoKmdAccess
 * are accepted without effect; UserModeSubmission makes a queue fed by its
 * doorbell (D3DKMTCreateDoorbell()) that takes no kernel-mode submission
 * (STATUS_NOT_SUPPORTED on an engine without
 * UserModeSubmissionSupported); NativeProgressFence
 * makes the progress fence a native fence (STATUS_NOT_SUPPORTED on an
 * adapter without native fences), otherwise it is a monitored fence with
 * the same CPU and GPU view; DisableGpuTimeout (a queue the TDR never stops
 * can hold its engine for as long as it likes) needs CAP_SYS_NICE, else
 * STATUS_ACCESS_DENIED; Reserved must be zero.
 */
typedef struct _D3DDDI_CREATEHWQUEUEFLAGS {
	union {
		struct {
			UINT DisableGpuTimeout		: 1;
			UINT NoBroadcastSignal		: 1;
			UINT NoBroadcastWait		: 1;
			UINT NoKmdAccess		: 1;
			UINT UserModeSubmission		: 1;
			UINT NativeProgressFence	: 1;
			UINT Reserved			: 26;
		};
		UINT Value;
	};
} D3DDDI_CREATEHWQUEUEFLAGS;

/*
 * D3DKMT_CREATEHWQUEUE: argument of D3DKMTCreateHwQueue. The native fence
 * log buffer fields are WDDM 3.2's, after Microsoft's own members at their
 * offsets: 64-bit GPU VAs of the queue's logs, 0 on an adapter without
 * SupportLogBuffers.
 */
typedef struct _D3DKMT_CREATEHWQUEUE {
	D3DKMT_HANDLE hHwContext;	/* in: context handle */
	D3DDDI_CREATEHWQUEUEFLAGS Flags;	/* in */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	/* in: ignored, the nfence kernel driver takes none */
	VOID *pPrivateDriverData;
	D3DKMT_HANDLE hHwQueue;		/* out: queue handle */
	D3DKMT_HANDLE hHwQueueProgressFence;	/* out: its progress fence */
	/* out: read-only CPU view of the progress fence's value (a UINT64) */
	VOID *HwQueueProgressFenceCPUVirtualAddress;
	/* out: GPU VA of the progress fence's value */
	D3DGPU_VIRTUAL_ADDRESS HwQueueProgressFenceGPUVirtualAddress;
	/*
	 * out: GPU VA of the queue's native fence wait log buffer (read-only
	 * to the GPU); 0 on an adapter without SupportLogBuffers
	 */
	D3DGPU_VIRTUAL_ADDRESS NativeFenceWaitLogBufferGpuVa;
	/* out: GPU VA of its signal log buffer; 0 as the wait log's */
	D3DGPU_VIRTUAL_ADDRESS NativeFenceSignalLogBufferGpuVa;
	/* out: entries of each log buffer (84); 0 without log buffers */
	UINT NativeFenceLogBufferNumberOfEntries;
} D3DKMT_CREATEHWQUEUE;

/**
 * D3DKMTCreateHwQueue() - create a hardware queue on a context
 * @pCreateHwQueue: in: hHwContext, Flags, PrivateDriverDataSize,
 *	pPrivateDriverData; out: hHwQueue, hHwQueueProgressFence and its
 *	CPU and GPU addresses, the native fence log buffers' GPU VAs and
 *	entry count
 *
 * The progress fence starts at 0. Its CPU view is mapped read-only as a
 * native fence's CurrentValueCpuVa is, and stays valid until the queue is
 * destroyed. Without NativeProgressFence it is a WDDM 2.x monitored fence:
 * every GPU signal of it interrupts the CPU. The queue's two log buffers
 * (with SupportLogBuffers) receive the entries of the logged fence
 * commands (NFenceCsFenceWait(), NFenceCsFenceSignal()). The
 * outputs are written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateHwQueue is
 * NULL, Flags.Reserved is set or PrivateDriverDataSize is not 0 with
 * pPrivateDriverData NULL; STATUS_NOT_SUPPORTED for UserModeSubmission on
 * an engine without UserModeSubmissionSupported, or NativeProgressFence
 * without native fences; STATUS_INVALID_PARAMETER if
 * hHwContext is not a context handle; STATUS_DEVICE_REMOVED if the context
 * faulted or its device is lost; STATUS_INSUFFICIENT_RESOURCES past the
 * kernel's queue limit; STATUS_NO_MEMORY; otherwise see
 * NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateHwQueue(D3DKMT_CREATEHWQUEUE *pCreateHwQueue);

/* D3DKMT_DESTROYHWQUEUE: argument of D3DKMTDestroyHwQueue. */
typedef struct _D3DKMT_DESTROYHWQUEUE {
	D3DKMT_HANDLE hHwQueue;		/* in: queue handle */
} D3DKMT_DESTROYHWQUEUE;

/**
 * D3DKMTDestroyHwQueue() - destroy a hardware queue
 * @pDestroyHwQueue: in: hHwQueue
 *
 * Work still queued is dropped. hHwQueue, its progress fence handle and
 * the progress fence's CPU view are invalid after the call whatever it
 * returns.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroyHwQueue is
 * NULL; STATUS_INVALID_PARAMETER if hHwQueue is not a queue handle.
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyHwQueue(const D3DKMT_DESTROYHWQUEUE *pDestroyHwQueue);

/*
 * D3DKMT_SUBMITCOMMANDTOHWQUEUE: argument of D3DKMTSubmitCommandToHwQueue.
 * The primaries (NumPrimaries, WrittenPrimaries) are for display and are
 * ignored; so is the private driver data.
 */
typedef struct _D3DKMT_SUBMITCOMMANDTOHWQUEUE {
	D3DKMT_HANDLE hHwQueue;		/* in: queue handle */
	/* in: progress fence value once this submission has run */
	UINT64 HwQueueProgressFenceId;
	D3DGPU_VIRTUAL_ADDRESS CommandBuffer;	/* in: GPU VA, 8-byte aligned */
	UINT CommandLength;		/* in: bytes, a multiple of 8 */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	VOID *pPrivateDriverData;	/* in: ignored */
	UINT NumPrimaries;		/* in: ignored */
	const D3DKMT_HANDLE *WrittenPrimaries;	/* in: ignored */
} D3DKMT_SUBMITCOMMANDTOHWQUEUE;

/**
 * D3DKMTSubmitCommandToHwQueue() - kernel-mode submission of a command buffer
 * @pSubmit: in: hHwQueue, HwQueueProgressFenceId, CommandBuffer,
 *	CommandLength (the rest is ignored)
 *
 * Queues the commands at CommandBuffer (see NFENCE_CS for how to write
 * them) behind the queue's earlier submissions; once they have all run,
 * the queue's progress fence is signaled with HwQueueProgressFenceId. The
 * commands are read when they run, so the CPU must not rewrite the buffer
 * before the progress fence says so. The commands are checked now and
 * again when they run (an invalid command then faults the context). When
 * the queue holds 256 pending submissions the call waits for room.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pSubmit is NULL, a
 * pointer whose size is not 0 is NULL, CommandLength is 0, above 1 MiB or
 * not a multiple of 8, CommandBuffer is not 8-byte aligned or not inside
 * one allocation for CommandLength bytes, a command is invalid, or
 * HwQueueProgressFenceId is not above the queue's previous one;
 * STATUS_INVALID_PARAMETER if hHwQueue is not a queue handle;
 * STATUS_DEVICE_REMOVED if the context faulted or the device is lost;
 * otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSubmitCommandToHwQueue(const D3DKMT_SUBMITCOMMANDTOHWQUEUE *pSubmit);

/*
 * D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE: argument of
 * D3DKMTSubmitWaitForSyncObjectsToHwQueue.
 */
typedef struct _D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE {
	D3DKMT_HANDLE hHwQueue;		/* in: queue handle */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	const UINT64 *FenceValueArray;	/* in: value to wait for, per object */
} D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE;

/**
 * D3DKMTSubmitWaitForSyncObjectsToHwQueue() - queue a wait, WDDM 2.x style
 * @pWait: in: hHwQueue, the objects and their values
 *
 * The queue stops at this point, behind its earlier submissions, until
 * every object has reached its value. As WDDM 2.x monitored fences do it,
 * the wait is resolved by the kernel through the CPU (its waiter and the
 * fence signaled interrupt), not by the GPU: it is the baseline that
 * native GPU waits (NFenceCsFenceWait()) are measured against. The objects
 * must be sync objects of the queue's device.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pWait or an array is
 * NULL, ObjectCount is 0 or above 64, or an object is an INTRA_GPU fence;
 * STATUS_INVALID_PARAMETER if hHwQueue is not a queue handle or an object is
 * not a sync object of the queue's device; STATUS_ACCESS_DENIED for an
 * object opened with NoWait; STATUS_DEVICE_REMOVED if the context faulted
 * or the device is lost; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSubmitWaitForSyncObjectsToHwQueue(const D3DKMT_SUBMITWAITFORSYNCOBJECTSTOHWQUEUE *pWait);

/*
 * D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE: argument of
 * D3DKMTSubmitSignalSyncObjectsToHwQueue. Flags are D3DDDICB_SIGNALFLAGS:
 * SignalAtSubmission, EnqueueCpuEvent and AllowFenceRewind are
 * STATUS_NOT_SUPPORTED (the signal happens when the queue reaches it and
 * never lowers a fence); Reserved and DXGK_SIGNAL_FLAG_INTERNAL0 must be 0.
 */
typedef struct _D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE {
	D3DDDICB_SIGNALFLAGS Flags;	/* in */
	UINT BroadcastHwQueueCount;	/* in: queues at BroadcastHwQueueArray */
	const D3DKMT_HANDLE *BroadcastHwQueueArray;	/* in: >= 1 queue */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	const UINT64 *FenceValueArray;	/* in: value to signal, per object */
} D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE;

/**
 * D3DKMTSubmitSignalSyncObjectsToHwQueue() - queue a signal, WDDM 2.x style
 * @pSignal: in: Flags, the queues, the objects and their values
 *
 * Queues, on each queue of BroadcastHwQueueArray in order, a signal of the
 * objects that runs once the queue reaches it: a kernel worker signals them
 * as a CPU signal would (never lowering a value), without GPU fence
 * commands. The objects must be sync objects of each queue's device. Every
 * queue and object is checked before anything is queued; if the kernel
 * then refuses the signal on one queue, the call returns that status and
 * the signals queued on the queues before it stay queued.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pSignal or an array
 * is NULL, BroadcastHwQueueCount is 0, ObjectCount is 0 or above 64, Flags
 * is invalid or an object is an INTRA_GPU fence; STATUS_NOT_SUPPORTED for
 * unsupported Flags; STATUS_INVALID_PARAMETER if a queue is not a queue handle
 * or an object is not a sync object of the queue's device;
 * STATUS_ACCESS_DENIED for an object opened with NoSignal;
 * STATUS_DEVICE_REMOVED if a context faulted or a device is lost;
 * STATUS_NO_MEMORY, also, with nothing queued, for a BroadcastHwQueueCount
 * too large for the BroadcastHwQueueCount * ObjectCount kernel handles the
 * call keeps (beyond memory, or beyond size_t in a 32-bit process);
 * otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSubmitSignalSyncObjectsToHwQueue(const D3DKMT_SUBMITSIGNALSYNCOBJECTSTOHWQUEUE *pSignal);

/*
 * Context-level submission, GPU waits and signals (WDDM 2.x): each context
 * has, besides the hardware queues made on it, a queue of its own that
 * only D3DKMTSubmitCommand() and these calls feed. Its entries run in the
 * order they were made; they are not ordered with the work of the
 * context's hardware queues. libnfence makes that queue on the context's
 * first such call; it goes with the context.
 */

/*
 * D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU: argument of
 * D3DKMTWaitForSynchronizationObjectFromGpu, with Windows' union: nfence's
 * sync objects (monitored and native fences) take MonitoredFenceValueArray;
 * FenceValue is the WDDM 1.x fence's.
 */
typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU {
	D3DKMT_HANDLE hContext;		/* in: context handle */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	union {
		const UINT64 *MonitoredFenceValueArray;	/* in: per object */
		UINT64 FenceValue;		/* WDDM 1.x fences: not used */
		UINT64 Reserved[8];
	};
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU;

/**
 * D3DKMTWaitForSynchronizationObjectFromGpu() - queue a wait on a context
 * @pWait: in: hContext, the objects and their values
 *
 * Queues on the context's own queue a wait that holds it until every
 * object reaches its value; the OS resolves it (WDDM 2.x: the kernel's CPU
 * waiters, not a GPU wait command), and the call returns at once. What the
 * context's queue holds behind it (context-level signals) runs after it.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pWait or an array
 * is NULL, ObjectCount is 0 or above 64, or an object is an INTRA_GPU
 * fence; STATUS_INVALID_PARAMETER if hContext is not a context or an object
 * not a sync object of its device; STATUS_ACCESS_DENIED for an object
 * opened NoWait; STATUS_DEVICE_REMOVED if the context faulted or the
 * device is lost; STATUS_INSUFFICIENT_RESOURCES if the context's own
 * queue cannot be made (the context has as many queues as the kernel
 * allows); otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTWaitForSynchronizationObjectFromGpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU *pWait);

/*
 * D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU: argument of
 * D3DKMTSignalSynchronizationObjectFromGpu.
 */
typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU {
	D3DKMT_HANDLE hContext;		/* in: context handle */
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	union {
		const UINT64 *MonitoredFenceValueArray;	/* in: per object */
		UINT64 Reserved[8];
	};
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU;

/**
 * D3DKMTSignalSynchronizationObjectFromGpu() - queue a signal on a context
 * @pSignal: in: hContext, the objects and their values
 *
 * Queues on the context's own queue a signal of the objects that runs
 * once the queue reaches it (after the context-level waits queued before
 * it): a kernel worker signals them as a CPU signal would, never lowering
 * a value. The call returns at once.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pSignal or an array
 * is NULL, ObjectCount is 0 or above 64, or an object is an INTRA_GPU
 * fence; STATUS_INVALID_PARAMETER if hContext is not a context or an object
 * not a sync object of its device; STATUS_ACCESS_DENIED for an object
 * opened NoSignal; STATUS_DEVICE_REMOVED if the context faulted or the
 * device is lost; STATUS_INSUFFICIENT_RESOURCES if the context's own
 * queue cannot be made; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObjectFromGpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU *pSignal);

/*
 * D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2: argument of
 * D3DKMTSignalSynchronizationObjectFromGpu2. Flags as for
 * D3DKMTSubmitSignalSyncObjectsToHwQueue(); of the union, nfence's sync
 * objects take MonitoredFenceValueArray (FenceValue is the WDDM 1.x
 * fence's, CpuEventHandle EnqueueCpuEvent's).
 */
typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 {
	UINT ObjectCount;		/* in: 1 .. D3DKMT_NFENCE_MAX_SYNC_OBJECTS */
	const D3DKMT_HANDLE *ObjectHandleArray;	/* in: sync objects */
	D3DDDICB_SIGNALFLAGS Flags;	/* in */
	ULONG BroadcastContextCount;	/* in: contexts at BroadcastContextArray */
	const D3DKMT_HANDLE *BroadcastContextArray;	/* in: >= 1 context */
	union {
		UINT64 FenceValue;		/* WDDM 1.x fences: not used */
		HANDLE CpuEventHandle;		/* EnqueueCpuEvent: not used */
		const UINT64 *MonitoredFenceValueArray;	/* in: per object */
		UINT64 Reserved[8];
	};
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2;

/**
 * D3DKMTSignalSynchronizationObjectFromGpu2() - queue a signal on contexts
 * @pSignal: in: the objects, Flags, the contexts, the values
 *
 * As D3DKMTSignalSynchronizationObjectFromGpu(), on each context of
 * BroadcastContextArray in order (the objects must be sync objects of each
 * context's device): every context and object is checked before anything
 * is queued; if the kernel then refuses the signal on one context, the
 * call returns that status and the signals queued before it stay queued.
 * Each context's signal runs when that context's queue reaches it, as
 * D3DKMTSubmitSignalSyncObjectsToHwQueue() does for broadcast queues.
 * The checks make each context's own queue if it has none yet, so a call
 * refused for a later context may leave earlier ones with theirs (which
 * later calls use).
 *
 * Return: as D3DKMTSubmitSignalSyncObjectsToHwQueue(), with contexts for
 * queues (STATUS_INVALID_PARAMETER for a BroadcastContextCount of 0,
 * STATUS_NOT_SUPPORTED for SignalAtSubmission, EnqueueCpuEvent or
 * AllowFenceRewind).
 */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObjectFromGpu2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *pSignal);

/* D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS: contexts one D3DKMTSubmitCommand takes */
#define D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS	64

/*
 * D3DKMT_SUBMITCOMMANDFLAGS: Windows' flag word of D3DKMT_SUBMITCOMMAND.
 * nfence's references name none of its bits, so only the word is
 * declared, and it must be 0.
 */
typedef struct _D3DKMT_SUBMITCOMMANDFLAGS {
	union {
		UINT Value;
	};
} D3DKMT_SUBMITCOMMANDFLAGS;

/*
 * D3DKMT_SUBMITCOMMAND: argument of D3DKMTSubmitCommand, 384 bytes as
 * Windows'. The present and history members mean nothing to nfence, which
 * has no display: they are only checked.
 */
typedef struct _D3DKMT_SUBMITCOMMAND {
	D3DGPU_VIRTUAL_ADDRESS Commands;	/* in: GPU VA, 8-byte aligned */
	UINT CommandLength;		/* in: bytes, a multiple of 8 */
	D3DKMT_SUBMITCOMMANDFLAGS Flags;	/* in: Value 0 */
	ULONGLONG PresentHistoryToken;	/* in: ignored */
	UINT BroadcastContextCount;	/* in: 1 .. 64 */
	/* in: BroadcastContextCount contexts, all of one device */
	D3DKMT_HANDLE BroadcastContext[D3DKMT_NFENCE_MAX_BROADCAST_CONTEXTS];
	VOID *pPrivateDriverData;	/* in: ignored */
	UINT PrivateDriverDataSize;	/* in: bytes at pPrivateDriverData */
	UINT NumPrimaries;		/* in: 0 .. 16, ignored */
	D3DKMT_HANDLE WrittenPrimaries[16];	/* in: ignored */
	UINT NumHistoryBuffers;		/* in: handles at HistoryBufferArray */
	D3DKMT_HANDLE *HistoryBufferArray;	/* in: ignored */
} D3DKMT_SUBMITCOMMAND;

/**
 * D3DKMTSubmitCommand() - queue a command buffer on contexts
 * @pSubmit: in: Commands, CommandLength, Flags, the broadcast contexts
 *
 * Queues the command buffer on each context of BroadcastContext in order,
 * on the context's own queue: behind the context-level waits and signals
 * queued before it (D3DKMTWaitForSynchronizationObjectFromGpu() holds it),
 * and ahead of those queued after it; not ordered with the work of the
 * context's hardware queues. The call returns at once; to learn that the
 * buffer ran, queue a D3DKMTSignalSynchronizationObjectFromGpu() on the
 * context after it and wait for the object. libnfence numbers the
 * submissions of each context's own queue itself (its progress fence is
 * not handed out). The buffer is checked by the kernel as
 * D3DKMTSubmitCommandToHwQueue()'s is; one found invalid when it runs
 * faults the context. Every argument and context is checked before
 * anything is queued; if the kernel then refuses the buffer on one
 * context, the call returns that status and the submissions queued before
 * it stay queued.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pSubmit is NULL,
 * Flags.Value is not 0 (no bit of it is known), BroadcastContextCount is 0
 * or above 64, CommandLength is 0, above 1 MiB or not
 * a multiple of 8, Commands is not 8-byte aligned, NumPrimaries is above
 * 16, a size or count is not 0 with its pointer NULL, a BroadcastContext
 * is not a context handle or the contexts are not all of one device, or
 * the kernel finds the buffer invalid (not mapped, or an invalid command);
 * STATUS_DEVICE_REMOVED if a context faulted or the device is lost;
 * STATUS_INSUFFICIENT_RESOURCES if a context's own queue cannot be made;
 * otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSubmitCommand(const D3DKMT_SUBMITCOMMAND *pSubmit);

/* ------------------------------------------------------------------ */
/* nfence extensions                                                  */
/* ------------------------------------------------------------------ */

/**
 * NFenceWaitForSynchronizationObjectFromCpuTimeout() - CPU wait with timeout
 * @pWait: as for D3DKMTWaitForSynchronizationObjectFromCpu()
 * @TimeoutNs: relative timeout in nanoseconds; 0 polls; UINT64_MAX never
 *	expires (nor does a timeout so long that the deadline would pass
 *	INT64_MAX ns of CLOCK_MONOTONIC, some 292 years of uptime)
 * @pFirstSignaled: NULL, or out: on STATUS_SUCCESS of a blocking wait, the
 *	index in ObjectHandleArray of a satisfied object (with WaitAny the
 *	lowest satisfied index, otherwise 0); untouched otherwise
 *
 * D3DKMTWaitForSynchronizationObjectFromCpu() with a timeout. The deadline
 * is computed once, on CLOCK_MONOTONIC, when the call starts; a wait
 * interrupted by a signal handler resumes with that same deadline, so
 * signals never make the wait longer. With hAsyncEvent set, @TimeoutNs must
 * be UINT64_MAX (an asynchronous wait has no timeout).
 *
 * Return: as D3DKMTWaitForSynchronizationObjectFromCpu(), plus
 * STATUS_TIMEOUT (an NT_SUCCESS code, as on Windows: test for
 * STATUS_SUCCESS) when the deadline passed before the wait was satisfied,
 * and STATUS_INVALID_PARAMETER for a timeout with hAsyncEvent.
 */
NFENCE_EXPORT NTSTATUS NFenceWaitForSynchronizationObjectFromCpuTimeout(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *pWait, UINT64 TimeoutNs, UINT *pFirstSignaled);

/**
 * NFenceStatusFromErrno() - the NTSTATUS libnfence reports for an errno
 * @err: an errno value; a negative (kernel-style) value is taken as -@err
 *
 * This is the one mapping libnfence applies to every kernel error:
 *
 *   0                                  STATUS_SUCCESS
 *   EINVAL, ERANGE, EOVERFLOW, E2BIG   STATUS_INVALID_PARAMETER
 *   ENOENT                             STATUS_INVALID_PARAMETER
 *   EBADF                              STATUS_INVALID_HANDLE
 *   ENOMEM                             STATUS_NO_MEMORY
 *   ENOSPC, EMFILE, ENFILE, ENOBUFS    STATUS_INSUFFICIENT_RESOURCES
 *   EOPNOTSUPP, ENOTTY, ENOSYS         STATUS_NOT_SUPPORTED
 *   ETIME, ETIMEDOUT                   STATUS_TIMEOUT (an NT_SUCCESS code)
 *   ENODEV, ENXIO, EIO                 STATUS_DEVICE_REMOVED
 *   EFAULT                             STATUS_ACCESS_VIOLATION
 *   EACCES, EPERM                      STATUS_ACCESS_DENIED
 *   EBUSY                              STATUS_DEVICE_BUSY
 *   EAGAIN                             STATUS_GRAPHICS_TRY_AGAIN_LATER
 *   ECANCELED                          STATUS_CANCELLED
 *   anything else                      STATUS_UNSUCCESSFUL
 *
 * Return: the NTSTATUS for @err.
 */
NFENCE_EXPORT NTSTATUS NFenceStatusFromErrno(int err);

/**
 * NFenceGetAdapterFd() - the render node file behind an adapter handle
 * @hAdapter: an open adapter handle
 *
 * The file is owned by libnfence and shared by every handle and device of
 * that adapter in the process: do not close it. It stays open as long as
 * @hAdapter (or a device created on the adapter) does. Meant for tests and
 * tools that issue nfence ioctls directly.
 *
 * Return: the file descriptor, or -1 with errno set to EBADF if @hAdapter
 * is not an open adapter handle.
 */
NFENCE_EXPORT int NFenceGetAdapterFd(D3DKMT_HANDLE hAdapter);

/* NFENCE_MAX_SYNCOBJ_BINDINGS: NFenceBindSyncobjPoint() calls pending per adapter */
#define NFENCE_MAX_SYNCOBJ_BINDINGS	1024

/**
 * NFenceBindSyncobjPoint() - make a drm_syncobj point appear when a fence
 *	reaches a value
 * @hDevice: the device of @hSyncObject
 * @hSyncObject: a native or monitored fence of @hDevice, not opened NoWait
 *	and not INTRA_GPU
 * @Value: the fence value
 * @SyncobjHandle: a DRM syncobj handle on the adapter's render node file
 *	(NFenceGetAdapterFd() of the device's adapter, then drmSyncobjCreate()
 *	or drmSyncobjFDToHandle() on it)
 * @Point: the timeline point, not 0
 *
 * Nothing is attached to the syncobj until the fence's CurrentValue
 * reaches @Value; then the kernel adds an already-signaled fence at
 * @Point, so consumers (Vulkan timeline semaphores, other drivers, a
 * sync_file exported from the point) wait for it with
 * DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT or WAIT_AVAILABLE. A value
 * already reached attaches the point before the call returns. If the
 * fence can no longer reach the value, the point still appears, with a
 * fence signaled with an error: -EIO when the fence's device went into
 * error, -ENOENT when its last handle was closed, -ECANCELED when the
 * adapter's file closed (the process's last adapter handle went),
 * -ENODEV when the adapter was unplugged. Documentation/fences.rst ("The
 * syncobj bridge") says why no dma_fence ever waits on a native fence.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER for @Point 0, an
 * INTRA_GPU fence or a value outside a 32-bit GPU's window;
 * STATUS_INVALID_PARAMETER if @hDevice is not a device, @hSyncObject not a
 * sync object of it, or @SyncobjHandle no syncobj of the adapter's file;
 * STATUS_ACCESS_DENIED for a fence opened NoWait;
 * STATUS_INSUFFICIENT_RESOURCES with %NFENCE_MAX_SYNCOBJ_BINDINGS
 * bindings pending on the adapter's file; otherwise see
 * NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS NFenceBindSyncobjPoint(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hSyncObject, UINT64 Value, UINT SyncobjHandle, UINT64 Point);

/* NFENCE_MAX_SYNCOBJ_SIGNALS: NFenceSignalFrom*() calls pending per adapter */
#define NFENCE_MAX_SYNCOBJ_SIGNALS	1024

/**
 * NFenceSignalFromSyncobjPoint() - signal a fence when a drm_syncobj point
 *	signals
 * @hDevice: the device of @hSyncObject
 * @hSyncObject: a native or monitored fence of @hDevice, not opened
 *	NoSignal and not INTRA_GPU
 * @Value: the value @hSyncObject is signaled to
 * @SyncobjHandle: a DRM syncobj handle on the adapter's render node file
 *	(NFenceGetAdapterFd() of the device's adapter)
 * @Point: the timeline point; 0 for a binary syncobj's fence (or a
 *	timeline's last one)
 *
 * The other direction of NFenceBindSyncobjPoint(): the point's dma_fence
 * (another driver's work, a Vulkan semaphore signaled by another process,
 * DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL) signals @hSyncObject to @Value, as
 * D3DKMTSignalSynchronizationObjectFromCpu() would, with the GPU queues
 * and CPU waiters it releases. The point must exist when the call is made
 * (submitted: it may still be unsignaled). A point signaled already
 * signals the fence before the call returns. The fence is signaled even if
 * the dma_fence carries an error. A pending signal is dropped, unsignaled,
 * when the adapter's file closes (the process's last adapter handle goes)
 * or the adapter is unplugged; destroying @hSyncObject does not cancel it.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER for a point that does
 * not exist yet, an INTRA_GPU fence or a value outside a 32-bit GPU's
 * window; STATUS_INVALID_PARAMETER if @hDevice is not a device, @hSyncObject
 * not a sync object of it, or @SyncobjHandle no syncobj of the adapter's
 * file; STATUS_ACCESS_DENIED for a fence opened NoSignal;
 * STATUS_INSUFFICIENT_RESOURCES with %NFENCE_MAX_SYNCOBJ_SIGNALS signals
 * pending on the adapter's file; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS NFenceSignalFromSyncobjPoint(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hSyncObject, UINT64 Value, UINT SyncobjHandle, UINT64 Point);

/**
 * NFenceSignalFromSyncFile() - signal a fence when a sync_file signals
 * @hDevice: the device of @hSyncObject
 * @hSyncObject: a native or monitored fence of @hDevice, not opened
 *	NoSignal and not INTRA_GPU
 * @Value: the value @hSyncObject is signaled to
 * @SyncFileFd: a sync_file file descriptor (any driver's; the call does
 *	not take it over: close it when you like)
 *
 * As NFenceSignalFromSyncobjPoint(), with the sync_file's fence.
 *
 * Return: as NFenceSignalFromSyncobjPoint(); STATUS_INVALID_PARAMETER if
 * @SyncFileFd is not a sync_file.
 */
NFENCE_EXPORT NTSTATUS NFenceSignalFromSyncFile(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hSyncObject, UINT64 Value, int SyncFileFd);

/* D3DKMT_NFENCE_ALLOCATION_INFO: what NFenceQueryAllocation() returns. */
typedef struct _D3DKMT_NFENCE_ALLOCATION_INFO {
	D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress;	/* first byte */
	UINT64 Size;			/* bytes, page rounded */
	UINT SegmentId;			/* segment asked for */
	UINT PlacedSegmentId;		/* segment the memory came from */
	NFENCE_ALLOCATION_FLAGS Flags;	/* as created */
	UINT LockCount;			/* D3DKMTLock2() locks held */
} D3DKMT_NFENCE_ALLOCATION_INFO;

/**
 * NFenceQueryAllocation() - where an allocation is
 * @hDevice: the allocation's device
 * @hAllocation: the allocation
 * @pInfo: out: its GPU VA, size, segments, flags and lock count
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pInfo is NULL;
 * STATUS_INVALID_PARAMETER if @hDevice is not a device handle or
 * @hAllocation is not an allocation of it.
 */
NFENCE_EXPORT NTSTATUS NFenceQueryAllocation(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hAllocation, D3DKMT_NFENCE_ALLOCATION_INFO *pInfo);

/* ------------------------------------------------------------------ */
/* The command encoder                                                */
/* ------------------------------------------------------------------ */

/*
 * NFENCE_CS builds a command buffer for the simulated engines, as a UMD
 * would, into memory the caller provides: typically a CPU-visible
 * allocation mapped with D3DKMTLock2(), whose GpuVirtualAddress is passed
 * as GpuVa so that the buffer can be submitted with
 * D3DKMTSubmitCommandToHwQueue(CommandBuffer = NFenceCsGpuVa(),
 * CommandLength = NFenceCsSize()).
 *
 * Every command is a whole number of 8-byte units, little endian: a 32-bit
 * header (opcode in bits 0-7, flags in bits 8-15, length in 32-bit words
 * in bits 16-31; DRM_NFENCE_CS_HEADER() of the uapi), a zero 32-bit word,
 * then the 64-bit operands:
 *
 *   NFenceCsNop            NOP            2 words
 *   NFenceCsFenceWait      FENCE_WAIT with the log flag (header bit 8),
 *                          8 words: va, value, hNativeFence | op << 32
 *   NFenceCsFenceSignal    FENCE_SIGNAL with the log flag, 10 words:
 *                          cv_va, mv_va, value, hNativeFence | op << 32
 *   NFenceCsFenceWaitUnlogged   FENCE_WAIT   6 words: va, value
 *   NFenceCsFenceSignalUnlogged FENCE_SIGNAL 8 words: cv_va, mv_va, value
 *   NFenceCsWrite64        WRITE64        6 words: va, value
 *   NFenceCsTimestamp      TIMESTAMP      4 words: va
 *   NFenceCsWork           WORK           4 words: duration_ns
 *
 * Errors are sticky: the first failing call records its status in Status,
 * writes nothing, and every later call (but NFenceCsInit() and
 * NFenceCsReset()) returns that status without writing anything, so a
 * buffer can be built without checking each call and checked once with
 * NFenceCsStatus(). A command that does not fit in the rest of the buffer
 * is STATUS_BUFFER_TOO_SMALL; a GPU VA operand that is not 8-byte aligned
 * (except a MonitoredValue VA of 0) and a WORK longer than 60 s are
 * STATUS_INVALID_PARAMETER. The fields are for reading; change them only
 * through the functions.
 */
typedef struct _NFENCE_CS {
	BYTE *pBuffer;			/* the commands, as the CPU writes them */
	D3DGPU_VIRTUAL_ADDRESS GpuVa;	/* GPU VA of pBuffer[0] */
	UINT Capacity;			/* bytes at pBuffer, a multiple of 8 */
	UINT Size;			/* bytes written so far */
	NTSTATUS Status;		/* STATUS_SUCCESS, or the first error */
	UINT Reserved;			/* 0 */
} NFENCE_CS;

/**
 * NFenceCsInit() - start a command buffer
 * @pCs: the encoder to set up
 * @pBuffer: where the commands go (CPU address); 8-byte aligned
 * @BufferSize: bytes at @pBuffer; only whole 8-byte units are used
 * @GpuVa: the GPU VA the engines read @pBuffer at; 8-byte aligned
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCs is NULL, or
 * @pBuffer is NULL or misaligned or @GpuVa misaligned (then also recorded
 * in @pCs, which gets no buffer: every later call fails with it).
 */
NFENCE_EXPORT NTSTATUS NFenceCsInit(NFENCE_CS *pCs, VOID *pBuffer, UINT BufferSize, D3DGPU_VIRTUAL_ADDRESS GpuVa);

/**
 * NFenceCsReset() - empty a command buffer to write it again
 * @pCs: an encoder set up by NFenceCsInit()
 *
 * Size becomes 0 and Status STATUS_SUCCESS, unless NFenceCsInit() failed
 * (Status stays). Only once the GPU is done with the old commands.
 */
NFENCE_EXPORT VOID NFenceCsReset(NFENCE_CS *pCs);

/* NFenceCsNop() - append a NOP */
NFENCE_EXPORT NTSTATUS NFenceCsNop(NFENCE_CS *pCs);

/**
 * NFenceCsFenceWait() - append a logged FENCE_WAIT
 * @pCs: the encoder
 * @GpuVa: GPU VA of a 64-bit value, e.g. a fence's CurrentValueGpuVa
 * @Value: the value to wait for
 * @hNativeFence: the fence's handle, as the log entry names it. The
 *	command carries the kernel's handle of that sync object, which
 *	NFenceReadNativeFenceLog() turns back into @hNativeFence, and with
 *	which an adapter with the optimized native fence signaled interrupt
 *	finds the fence's waiters; any other value is written as it is (the
 *	GPU does not check it)
 *
 * The queue stops until the 64-bit value at @GpuVa is at least @Value;
 * the GPU resolves the wait itself, without the CPU. When the wait passes,
 * the engine logs it in the queue's wait log (WAIT_UNBLOCKED, the value,
 * @hNativeFence, when it first found the wait unresolved and when it
 * passed): the seed makes logging every native fence wait and signal the
 * UMD's duty (section 15.8, "Optional and Mandatory Logging"). 8 words.
 * Only on an adapter with SupportLogBuffers: elsewhere the command faults
 * the context (use NFenceCsFenceWaitUnlogged() there). Fires the USDT
 * probe libnfence:fence_wait_queued (the seed's FENCE_WAIT_QUEUED; see
 * Documentation/tracing.rst) when the command is written.
 */
NFENCE_EXPORT NTSTATUS NFenceCsFenceWait(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/**
 * NFenceCsFenceSignal() - append a logged FENCE_SIGNAL
 * @pCs: the encoder
 * @CurrentValueGpuVa: GPU VA of the fence's CurrentValue
 * @MonitoredValueGpuVa: GPU VA of its MonitoredValue; 0 skips the
 *	interrupt check (no CPU can wait, e.g. an INTRA_GPU fence)
 * @Value: the value to write
 * @hNativeFence: the fence's handle, as the log entry names it (as for
 *	NFenceCsFenceWait(); a signal logged under the fence's own handle is
 *	the one the optimized interrupt finds without a scan)
 *
 * Writes @Value to CurrentValue (a plain store: a lower value lowers the
 * fence), logs the signal in the queue's signal log (SIGNAL_EXECUTED),
 * then raises the CPU interrupt only if @Value is above MonitoredValue,
 * i.e. only if a CPU waiter needs it. 10 words. Only on an adapter with
 * SupportLogBuffers (elsewhere: NFenceCsFenceSignalUnlogged()). Fires the
 * USDT probe libnfence:fence_signal_queued when the command is written.
 */
NFENCE_EXPORT NTSTATUS NFenceCsFenceSignal(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa, D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/* NFenceCsWaitNativeFence() - NFenceCsFenceWait() on a native fence */
NFENCE_EXPORT NTSTATUS NFenceCsWaitNativeFence(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/*
 * NFenceCsSignalNativeFence() - NFenceCsFenceSignal() on a native fence,
 * with its CurrentValueGpuVa and MonitoredValueGpuVa
 */
NFENCE_EXPORT NTSTATUS NFenceCsSignalNativeFence(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/**
 * NFenceCsFenceWaitUnlogged() - append a FENCE_WAIT without a log payload
 * @pCs: the encoder
 * @GpuVa: as NFenceCsFenceWait()
 * @Value: as NFenceCsFenceWait()
 *
 * As NFenceCsFenceWait(), but the engine logs nothing and no probe fires:
 * for adapters without SupportLogBuffers, and for a wait on memory that a
 * tool has no use for. 6 words. Builds linked against libnfence before
 * 0.10 call this under the name NFenceCsFenceWait (symbol version
 * LIBNFENCE_0.2).
 */
NFENCE_EXPORT NTSTATUS NFenceCsFenceWaitUnlogged(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa, UINT64 Value);

/**
 * NFenceCsFenceSignalUnlogged() - append a FENCE_SIGNAL without a log payload
 * @pCs: the encoder
 * @CurrentValueGpuVa: as NFenceCsFenceSignal()
 * @MonitoredValueGpuVa: as NFenceCsFenceSignal()
 * @Value: as NFenceCsFenceSignal()
 *
 * As NFenceCsFenceSignal(), but the engine logs nothing and no probe
 * fires. 8 words. The pre-0.10 NFenceCsFenceSignal (LIBNFENCE_0.2).
 */
NFENCE_EXPORT NTSTATUS NFenceCsFenceSignalUnlogged(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa, D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa, UINT64 Value);

/* NFenceCsWaitNativeFenceUnlogged() - NFenceCsFenceWaitUnlogged() on a native fence */
NFENCE_EXPORT NTSTATUS NFenceCsWaitNativeFenceUnlogged(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value);

/* NFenceCsSignalNativeFenceUnlogged() - NFenceCsFenceSignalUnlogged() on a native fence */
NFENCE_EXPORT NTSTATUS NFenceCsSignalNativeFenceUnlogged(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value);

/* NFenceCsFenceWaitLogged() - NFenceCsFenceWait(), under its 0.4 name */
NFENCE_EXPORT NTSTATUS NFenceCsFenceWaitLogged(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/* NFenceCsFenceSignalLogged() - NFenceCsFenceSignal(), under its 0.4 name */
NFENCE_EXPORT NTSTATUS NFenceCsFenceSignalLogged(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS CurrentValueGpuVa, D3DGPU_VIRTUAL_ADDRESS MonitoredValueGpuVa, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/* NFenceCsWaitNativeFenceLogged() - NFenceCsWaitNativeFence(), under its 0.4 name */
NFENCE_EXPORT NTSTATUS NFenceCsWaitNativeFenceLogged(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/* NFenceCsSignalNativeFenceLogged() - NFenceCsSignalNativeFence(), under its 0.4 name */
NFENCE_EXPORT NTSTATUS NFenceCsSignalNativeFenceLogged(NFENCE_CS *pCs, const D3DDDI_NATIVEFENCEMAPPING *pMapping, UINT64 Value, D3DKMT_HANDLE hNativeFence);

/* NFenceCsWrite64() - append a WRITE64 of @Value at @GpuVa */
NFENCE_EXPORT NTSTATUS NFenceCsWrite64(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa, UINT64 Value);

/*
 * NFenceCsTimestamp() - append a TIMESTAMP: the engine writes the GPU
 * timestamp (ticks of D3DKMT_NFENCE_ADAPTER::TimestampFrequency) at @GpuVa
 */
NFENCE_EXPORT NTSTATUS NFenceCsTimestamp(NFENCE_CS *pCs, D3DGPU_VIRTUAL_ADDRESS GpuVa);

/*
 * NFenceCsWork() - append a WORK: the engine is busy for @DurationNs ns
 * (at most 60 s; a command longer than the adapter's TDR timeout loses the
 * device unless the queue has DisableGpuTimeout)
 */
NFENCE_EXPORT NTSTATUS NFenceCsWork(NFENCE_CS *pCs, UINT64 DurationNs);

/* NFenceCsSize() - bytes written so far: the CommandLength to submit */
NFENCE_EXPORT UINT NFenceCsSize(const NFENCE_CS *pCs);

/* NFenceCsGpuVa() - GPU VA of the first command: the CommandBuffer */
NFENCE_EXPORT D3DGPU_VIRTUAL_ADDRESS NFenceCsGpuVa(const NFENCE_CS *pCs);

/* NFenceCsStatus() - STATUS_SUCCESS, or the first error (sticky) */
NFENCE_EXPORT NTSTATUS NFenceCsStatus(const NFENCE_CS *pCs);

/* ------------------------------------------------------------------ */
/* User-mode submission: doorbells (WDDM 3.2)                         */
/* ------------------------------------------------------------------ */

/*
 * A hardware queue created with UserModeSubmission takes its work from a
 * ring in the process's memory: the UMD writes command buffers, appends
 * an NFENCE_RING_ENTRY naming each to the ring buffer allocation, bumps
 * WriteIndex in the ring buffer control allocation (NFENCE_RING_CONTROL
 * at offset 0) and rings the doorbell by storing that write index at
 * DoorbellCPUVirtualAddress, with no system call. The scheduler runs the
 * entries in order and advances ReadIndex; the UMD's command buffers
 * signal the queue's progress fence (NFenceCsSignalHwQueueProgress()).
 * Before appending, the UMD stores the entry's progress fence value at
 * HwQueueProgressFenceLastQueuedValueCPUVirtualAddress.
 *
 * After ringing, the UMD reads the status word at
 * DoorbellStatusCPUVirtualAddress (a UINT64 D3DDDI_DOORBELLSTATUS):
 * CONNECTED, done; CONNECTED_NOTIFY_KMD, call
 * D3DKMTNotifyWorkSubmission(); DISCONNECTED_RETRY, call
 * D3DKMTConnectDoorbell() and ring again; DISCONNECTED_ABORT, the queue
 * is lost: destroy and recreate it. NFenceRingSubmit() does all of this.
 * A doorbell is created disconnected. Its mappings stay valid until it is
 * destroyed; while disconnected, stores to the doorbell go nowhere.
 */

/*
 * D3DDDI_DOORBELLSTATUS: the status word. Values as in Windows'
 * d3dukmdt.h; the D3DDDI_DOORBELL_STATUS_* spellings of the WDDM 3.2 user
 * mode submission documentation are aliases.
 */
typedef enum _D3DDDI_DOORBELLSTATUS {
	D3DDDI_DOORBELLSTATUS_CONNECTED			= 0,
	D3DDDI_DOORBELLSTATUS_CONNECTED_NOTIFY_KMD	= 1,
	D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY	= 2,
	D3DDDI_DOORBELLSTATUS_DISCONNECTED_ABORT	= 3,
} D3DDDI_DOORBELLSTATUS;

#define D3DDDI_DOORBELL_STATUS_CONNECTED \
	D3DDDI_DOORBELLSTATUS_CONNECTED
#define D3DDDI_DOORBELL_STATUS_CONNECTED_NOTIFY_KMD \
	D3DDDI_DOORBELLSTATUS_CONNECTED_NOTIFY_KMD
#define D3DDDI_DOORBELL_STATUS_CONNECTED_NOTIFY \
	D3DDDI_DOORBELLSTATUS_CONNECTED_NOTIFY_KMD
#define D3DDDI_DOORBELL_STATUS_DISCONNECTED_RETRY \
	D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY
#define D3DDDI_DOORBELL_STATUS_DISCONNECTED_ABORT \
	D3DDDI_DOORBELLSTATUS_DISCONNECTED_ABORT

/* D3DKMT_CREATE_DOORBELL_FLAGS: flags of D3DKMTCreateDoorbell(). */
typedef struct _D3DKMT_CREATE_DOORBELL_FLAGS {
	union {
		struct {
			/* a second CPU VA of the doorbell, valid as long */
			UINT RequireSecondaryCpuVA	: 1;
			/* not supported: STATUS_NOT_SUPPORTED */
			UINT ResizeRingBufferOperation	: 1;
			UINT Reserved			: 30;
		};
		UINT Value;
	};
} D3DKMT_CREATE_DOORBELL_FLAGS;

/* D3DKMT_CREATE_DOORBELL: argument of D3DKMTCreateDoorbell. */
typedef struct _D3DKMT_CREATE_DOORBELL {
	D3DKMT_HANDLE hHwQueue;		/* in: a UserModeSubmission queue */
	D3DKMT_HANDLE hRingBuffer;	/* in: the ring buffer allocation */
	D3DKMT_HANDLE hRingBufferControl;	/* in: its control, or 0 */
	D3DKMT_CREATE_DOORBELL_FLAGS Flags;	/* in */
	UINT PrivateDriverDataSize;	/* in: must be 0 (the KMD takes none) */
	VOID *PrivateDriverData;	/* in/out: unused */
	VOID *DoorbellCPUVirtualAddress;	/* out: the doorbell (UINT64) */
	/* out: a second mapping, with RequireSecondaryCpuVA; else NULL */
	VOID *DoorbellSecondaryCPUVirtualAddress;
	/* out: read-only UINT64 D3DDDI_DOORBELLSTATUS */
	VOID *DoorbellStatusCPUVirtualAddress;
	/* out: read/write: the last queued progress fence value */
	UINT64 *HwQueueProgressFenceLastQueuedValueCPUVirtualAddress;
	D3DKMT_HANDLE hDoorbell;	/* out */
} D3DKMT_CREATE_DOORBELL;

/**
 * D3DKMTCreateDoorbell() - create the doorbell of a user-mode queue
 * @pCreateDoorbell: in: hHwQueue, hRingBuffer, hRingBufferControl, Flags,
 *	PrivateDriverDataSize; out: the CPU addresses and hDoorbell
 *
 * The ring buffer holds its size / sizeof(NFENCE_RING_ENTRY) entries. The
 * ring buffer and control allocations must belong to the queue's device;
 * while the doorbell lives they cannot be destroyed
 * (D3DKMTDestroyAllocation2() fails with STATUS_DEVICE_BUSY). One doorbell
 * per queue. The outputs are written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pCreateDoorbell is
 * NULL, Flags.Reserved is set, PrivateDriverDataSize is not 0, hHwQueue
 * was not created with UserModeSubmission, or the allocations are too
 * small (or the control is missing with the global doorbell model);
 * STATUS_NOT_SUPPORTED for ResizeRingBufferOperation;
 * STATUS_INVALID_PARAMETER for a handle that names no object of the right
 * kind or device; STATUS_DEVICE_BUSY if the queue has a doorbell;
 * STATUS_DEVICE_REMOVED if the queue's context faulted or its device is
 * lost; STATUS_NO_MEMORY; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTCreateDoorbell(D3DKMT_CREATE_DOORBELL *pCreateDoorbell);

/* D3DKMT_CONNECT_DOORBELL_FLAGS: all reserved. */
typedef struct _D3DKMT_CONNECT_DOORBELL_FLAGS {
	union {
		struct {
			UINT Reserved			: 32;
		};
		UINT Value;
	};
} D3DKMT_CONNECT_DOORBELL_FLAGS;

/* D3DKMT_CONNECT_DOORBELL: argument of D3DKMTConnectDoorbell. */
typedef struct _D3DKMT_CONNECT_DOORBELL {
	D3DKMT_HANDLE hDoorbell;	/* in */
	D3DKMT_CONNECT_DOORBELL_FLAGS Flags;	/* in: 0 */
} D3DKMT_CONNECT_DOORBELL;

/**
 * D3DKMTConnectDoorbell() - connect a doorbell to a physical doorbell
 * @pConnectDoorbell: in: hDoorbell, Flags
 *
 * Moves the doorbell's CPU mappings to a physical doorbell (taking one
 * from the ring rung least recently if all are in use) and sets the
 * status to CONNECTED (or CONNECTED_NOTIFY_KMD). Connecting a connected
 * doorbell changes nothing.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pConnectDoorbell is
 * NULL or Flags is not 0; STATUS_INVALID_PARAMETER if hDoorbell is not a
 * doorbell handle; STATUS_DEVICE_REMOVED if the status is
 * DISCONNECTED_ABORT; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTConnectDoorbell(const D3DKMT_CONNECT_DOORBELL *pConnectDoorbell);

/* D3DKMT_DESTROY_DOORBELL: argument of D3DKMTDestroyDoorbell. */
typedef struct _D3DKMT_DESTROY_DOORBELL {
	D3DKMT_HANDLE hDoorbell;	/* in */
} D3DKMT_DESTROY_DOORBELL;

/**
 * D3DKMTDestroyDoorbell() - destroy a doorbell
 * @pDestroyDoorbell: in: hDoorbell
 *
 * Ring entries not yet run are dropped (wait for the progress fence
 * first). The doorbell's CPU addresses are invalid after the call; the
 * ring allocations can be destroyed. Destroying the queue destroys its
 * doorbell.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pDestroyDoorbell is
 * NULL; STATUS_INVALID_PARAMETER if hDoorbell is not a doorbell handle.
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyDoorbell(const D3DKMT_DESTROY_DOORBELL *pDestroyDoorbell);

/* D3DKMT_NOTIFY_WORK_SUBMISSION_FLAGS: all reserved. */
typedef struct _D3DKMT_NOTIFY_WORK_SUBMISSION_FLAGS {
	union {
		struct {
			UINT Reserved			: 32;
		};
		UINT Value;
	};
} D3DKMT_NOTIFY_WORK_SUBMISSION_FLAGS;

/* D3DKMT_NOTIFY_WORK_SUBMISSION: argument of D3DKMTNotifyWorkSubmission. */
typedef struct _D3DKMT_NOTIFY_WORK_SUBMISSION {
	D3DKMT_HANDLE hDoorbell;	/* in */
	D3DKMT_NOTIFY_WORK_SUBMISSION_FLAGS Flags;	/* in: 0 */
} D3DKMT_NOTIFY_WORK_SUBMISSION;

/**
 * D3DKMTNotifyWorkSubmission() - tell the scheduler a doorbell was rung
 * @pNotify: in: hDoorbell, Flags
 *
 * For a status of CONNECTED_NOTIFY_KMD: the scheduler stopped watching the
 * doorbells while idle, and looks again.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pNotify is NULL or
 * Flags is not 0; STATUS_INVALID_PARAMETER if hDoorbell is not a doorbell
 * handle; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTNotifyWorkSubmission(const D3DKMT_NOTIFY_WORK_SUBMISSION *pNotify);

/* NFENCE_RING_ENTRY: one entry of a ring buffer (the uapi's layout). */
typedef struct _NFENCE_RING_ENTRY {
	D3DGPU_VIRTUAL_ADDRESS CommandBuffer;	/* GPU VA, 8-byte aligned */
	UINT CommandLength;		/* bytes, a multiple of 8, non-zero */
	UINT Flags;			/* 0 */
} NFENCE_RING_ENTRY;

/* NFENCE_RING_CONTROL: the ring buffer control, at offset 0. */
typedef struct _NFENCE_RING_CONTROL {
	UINT64 WriteIndex;		/* entries written: the UMD's */
	UINT64 ReadIndex;		/* entries finished: the engine's */
} NFENCE_RING_CONTROL;

/*
 * NFENCE_RING: a ring writer over a doorbell, for NFenceRingSubmit(). Set
 * up by NFenceRingInit(); the fields are for reading.
 */
typedef struct _NFENCE_RING {
	D3DKMT_HANDLE hDoorbell;
	volatile NFENCE_RING_ENTRY *pEntries;
	UINT NumEntries;
	volatile NFENCE_RING_CONTROL *pControl;
	volatile UINT64 *pDoorbell;
	const volatile UINT64 *pStatus;
	volatile UINT64 *pLastQueued;
	UINT64 WriteIndex;		/* entries appended */
	UINT64 Connects;		/* D3DKMTConnectDoorbell() calls made */
	UINT64 Notifies;		/* D3DKMTNotifyWorkSubmission() calls */
} NFENCE_RING;

/**
 * NFenceRingInit() - set up a ring writer
 * @pRing: out: the writer
 * @pDoorbell: a doorbell D3DKMTCreateDoorbell() created (its outputs)
 * @pRingBuffer: the CPU mapping of its ring buffer (D3DKMTLock2())
 * @RingBufferSize: the ring buffer allocation's size in bytes, as created
 *	or rounded up to whole pages
 * @pRingControl: the CPU mapping of its ring buffer control
 *
 * The writer counts the entries the engine reads: as many as the ring
 * buffer allocation's whole pages hold (NumEntries).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER for a NULL pointer, a
 * doorbell handle not open in the calling process, or a RingBufferSize
 * smaller than one entry or not the ring buffer allocation's size.
 */
NFENCE_EXPORT NTSTATUS NFenceRingInit(NFENCE_RING *pRing, const D3DKMT_CREATE_DOORBELL *pDoorbell, VOID *pRingBuffer, UINT RingBufferSize, VOID *pRingControl);

/**
 * NFenceRingSubmit() - append a command buffer to the ring and ring
 * @pRing: the writer
 * @CommandBuffer: GPU VA of the command buffer, which signals the queue's
 *	progress fence with @ProgressFenceValue last
 * @CommandLength: its size in bytes
 * @ProgressFenceValue: the value it signals
 *
 * WDDM's sequence: the last queued value, the entry, the write index,
 * the ring, then the status: CONNECTED_NOTIFY_KMD notifies,
 * DISCONNECTED_RETRY connects and rings again. Nothing is written unless
 * the ring's doorbell handle is open in this process: not once the
 * doorbell (or its queue, context or device) is destroyed, whose pages
 * are unmapped then, nor in a fork()ed child, whose writes would go to
 * the parent's doorbell and ring. The handle is looked at when the call
 * starts: destroying the doorbell on another thread while the call runs
 * is the caller's error, as writing to a Windows doorbell's mappings
 * while destroying it is (the pages may go from under the writes).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER for a NULL @pRing, a
 * doorbell handle that names no open doorbell, a zero, unaligned or too
 * long command buffer; STATUS_DEVICE_BUSY if the
 * ring is full (ReadIndex is NumEntries behind: wait for the progress
 * fence and try again); STATUS_DEVICE_REMOVED if the status is
 * DISCONNECTED_ABORT; an error of D3DKMTConnectDoorbell() or
 * D3DKMTNotifyWorkSubmission().
 */
NFENCE_EXPORT NTSTATUS NFenceRingSubmit(NFENCE_RING *pRing, D3DGPU_VIRTUAL_ADDRESS CommandBuffer, UINT CommandLength, UINT64 ProgressFenceValue);

/**
 * NFenceCsSignalHwQueueProgress() - append a FENCE_SIGNAL of a queue's
 * progress fence, with its interrupt check
 * @pCs: the encoder
 * @hHwQueue: the queue
 * @Value: the value
 *
 * What a user-mode queue's command buffer ends with. The signal is not
 * logged (NFenceCsSignalNativeFenceUnlogged()): the kernel does not log
 * the progress signals of kernel-mode submissions either, and a queue's
 * progress is its ring's ReadIndex.
 *
 * Return: as NFenceCsFenceSignal(); STATUS_INVALID_PARAMETER if @hHwQueue is
 * not a queue handle (nothing is written, and the encoder records it in
 * Status, as it does every error).
 */
NFENCE_EXPORT NTSTATUS NFenceCsSignalHwQueueProgress(NFENCE_CS *pCs, D3DKMT_HANDLE hHwQueue, UINT64 Value);

/* ------------------------------------------------------------------ */
/* Test hooks: OS-initiated context events                            */
/* ------------------------------------------------------------------ */

/* D3DKMT_NFENCE_CONTEXT_STATE_FLAGS: what a context is going through. */
typedef struct _D3DKMT_NFENCE_CONTEXT_STATE_FLAGS {
	union {
		struct {
			/* suspended: its queues are not scheduled */
			UINT Suspended			: 1;
			/* a GPU page fault or invalid command */
			UINT Faulted			: 1;
			/* its device is lost (TDR or device error) */
			UINT DeviceLost			: 1;
			UINT Reserved			: 29;
		};
		UINT Value;
	};
} D3DKMT_NFENCE_CONTEXT_STATE_FLAGS;

/* D3DKMT_NFENCE_FAULT_REASON: why a context faulted. */
typedef enum _D3DKMT_NFENCE_FAULT_REASON {
	D3DKMT_NFENCE_FAULT_NONE		= 0,
	/* a GPU VA with no mapping, or a write to a read-only one */
	D3DKMT_NFENCE_FAULT_PAGE		= 1,
	/* a GPU VA operand not 8-byte aligned */
	D3DKMT_NFENCE_FAULT_MISALIGNED		= 2,
	/* unknown opcode, wrong length or reserved bits set */
	D3DKMT_NFENCE_FAULT_BAD_COMMAND		= 3,
	/* a user-mode queue's ring: bad write index or bad entry */
	D3DKMT_NFENCE_FAULT_BAD_RING		= 4,
} D3DKMT_NFENCE_FAULT_REASON;

/* D3DKMT_NFENCE_CONTEXT_STATE: what NFenceQueryContextState() returns. */
typedef struct _D3DKMT_NFENCE_CONTEXT_STATE {
	D3DKMT_NFENCE_CONTEXT_STATE_FLAGS Flags;
	D3DKMT_NFENCE_FAULT_REASON FaultReason;	/* of the first fault */
	D3DGPU_VIRTUAL_ADDRESS FaultGpuVa;	/* of the first fault, or 0 */
} D3DKMT_NFENCE_CONTEXT_STATE;

/**
 * NFenceSuspendContext() - suspend a context, as the OS would
 * @hContext: the context
 *
 * Its queues stop at the next command boundary (a WORK command already
 * running finishes); submissions are still accepted. Suspending a
 * suspended context changes nothing.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @hContext is not a
 * context handle; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS NFenceSuspendContext(D3DKMT_HANDLE hContext);

/**
 * NFenceResumeContext() - resume a suspended context
 * @hContext: the context
 *
 * Return: as NFenceSuspendContext().
 */
NFENCE_EXPORT NTSTATUS NFenceResumeContext(D3DKMT_HANDLE hContext);

/**
 * NFenceQueryContextState() - whether a context is suspended, faulted or lost
 * @hContext: the context
 * @pState: out: the state flags and, after a fault, where and why
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pState is NULL;
 * STATUS_INVALID_PARAMETER if @hContext is not a context handle; otherwise
 * see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS NFenceQueryContextState(D3DKMT_HANDLE hContext, D3DKMT_NFENCE_CONTEXT_STATE *pState);

/*
 * Native fence log buffers (WDDM 3.2): the layouts of d3dukmdt.h, and the
 * values of the log types and operations as WDDM's native fence
 * documentation gives them.
 */
typedef enum _DXGK_NATIVE_FENCE_LOG_TYPE {
	DXGK_NATIVE_FENCE_LOG_TYPE_WAITS = 1,	/* a queue's wait log */
	DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS = 2,	/* its signal log */
} DXGK_NATIVE_FENCE_LOG_TYPE;

typedef enum _DXGK_NATIVE_FENCE_LOG_OPERATION {
	DXGK_NATIVE_FENCE_LOG_OPERATION_SIGNAL_EXECUTED = 0,
	DXGK_NATIVE_FENCE_LOG_OPERATION_WAIT_UNBLOCKED = 1,
} DXGK_NATIVE_FENCE_LOG_OPERATION;

/* DXGK_NATIVE_FENCE_LOG_HEADER: the head of a log buffer (40 bytes). */
typedef struct _DXGK_NATIVE_FENCE_LOG_HEADER {
	union {
		struct {
			UINT FirstFreeEntryIndex;	/* the next entry written */
			UINT WraparoundCount;	/* times the index went to 0 */
		};
		ULARGE_INTEGER AtomicWraparoundAndEntryIndex;	/* both */
	};
	DXGK_NATIVE_FENCE_LOG_TYPE Type;	/* DXGK_NATIVE_FENCE_LOG_TYPE_* */
	UINT64 NumberOfEntries;		/* entries after the header */
	UINT64 Reserved[2];
} DXGK_NATIVE_FENCE_LOG_HEADER;

/* DXGK_NATIVE_FENCE_LOG_ENTRY: one logged fence operation (48 bytes). */
typedef struct _DXGK_NATIVE_FENCE_LOG_ENTRY {
	UINT64 FenceValue;		/* the value signaled or waited for */
	D3DKMT_HANDLE hNativeFence;	/* as the logged command named it */
	UINT OperationType;		/* DXGK_NATIVE_FENCE_LOG_OPERATION_* */
	UINT64 Reserved0;
	UINT64 FenceObservedGpuTimestamp;	/* a wait: first seen unresolved */
	UINT64 Reserved1;
	UINT64 FenceEndGpuTimestamp;	/* when it completed */
} DXGK_NATIVE_FENCE_LOG_ENTRY;

/* Earlier names of the log types and operations, the same values. */
#define NFENCE_NATIVE_FENCE_LOG_WAITS	DXGK_NATIVE_FENCE_LOG_TYPE_WAITS
#define NFENCE_NATIVE_FENCE_LOG_SIGNALS	DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS
#define NFENCE_NATIVE_FENCE_LOG_OP_SIGNAL_EXECUTED \
	DXGK_NATIVE_FENCE_LOG_OPERATION_SIGNAL_EXECUTED
#define NFENCE_NATIVE_FENCE_LOG_OP_WAIT_UNBLOCKED \
	DXGK_NATIVE_FENCE_LOG_OPERATION_WAIT_UNBLOCKED

/* NFENCE_NATIVE_FENCE_LOG_OVERRUN: entries past the cursor were lost */
#define NFENCE_NATIVE_FENCE_LOG_OVERRUN			0x1

/* NFENCE_READNATIVEFENCELOG: argument of NFenceReadNativeFenceLog(). */
typedef struct _NFENCE_READNATIVEFENCELOG {
	D3DKMT_HANDLE hHwQueue;		/* in: the queue */
	UINT Type;			/* in: DXGK_NATIVE_FENCE_LOG_TYPE_* */
	UINT64 Cursor;			/* in/out: entries seen so far (start 0) */
	DXGK_NATIVE_FENCE_LOG_ENTRY *pEntries;	/* out: room for NumEntries */
	UINT NumEntries;		/* in: room; out: entries read */
	UINT Flags;			/* out: NFENCE_NATIVE_FENCE_LOG_OVERRUN */
	DXGK_NATIVE_FENCE_LOG_HEADER Header;	/* out: the log's header */
	D3DGPU_VIRTUAL_ADDRESS GpuVa;	/* out: where the log is now */
} NFENCE_READNATIVEFENCELOG;

/**
 * NFenceReadNativeFenceLog() - read a queue's native fence log
 * @pRead: in: hHwQueue, Type, Cursor, pEntries, NumEntries; out: Cursor,
 *	NumEntries, Flags, Header, GpuVa
 *
 * Copies the log's header and the entries the GPU wrote from @Cursor on
 * (a count of every entry written to that log since the queue was made),
 * oldest first, at most NumEntries of them, and advances Cursor past them.
 * When more than a log's worth was written since Cursor, the oldest are
 * gone: Flags says NFENCE_NATIVE_FENCE_LOG_OVERRUN and the copy starts at
 * the oldest entry left. NumEntries 0 copies no entry: Cursor comes back
 * where a read would start (after an overrun, at the oldest entry left,
 * with the overrun in this call's Flags). A tool needs no GPU VA: this is
 * the kernel's DRM_IOCTL_NFENCE_LOG_READ. GpuVa is the
 * log's GPU VA now: NativeFence*LogBufferGpuVa of D3DKMTCreateHwQueue
 * until a new logging level gives the queue new buffers (see
 * NFenceSetLoggingLevel()); entries of the old buffer not read by then
 * are gone (an overrun for the reader). Each entry's
 * hNativeFence is the D3DKMT handle of the sync object it names (the
 * logged command's handle), or, if no open sync object of this process on
 * the adapter has that kernel handle (closed since, or a value that named
 * none), the value the command carried.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pRead is NULL, Type
 * is unknown, pEntries is NULL with NumEntries not 0, or Cursor is ahead
 * of the log; STATUS_INVALID_PARAMETER if hHwQueue is not a queue handle;
 * STATUS_NOT_SUPPORTED on an adapter without SupportLogBuffers; STATUS_NO_MEMORY;
 * otherwise see NFenceStatusFromErrno(). The outputs are written only on
 * success.
 */
NFENCE_EXPORT NTSTATUS NFenceReadNativeFenceLog(NFENCE_READNATIVEFENCELOG *pRead);

/*
 * D3DDDI_LOGGING_LEVEL: whether a tool traces the native fence operations
 * (WDDM's UpdateLoggingLevel, with WDDM's values). After
 * D3DKMTConnectDoorbell the doorbell status storage holds it in the UINT64
 * after the status word (DoorbellStatusCPUVirtualAddress + 8): a level
 * change disconnects every doorbell (DISCONNECTED_RETRY), so a UMD that
 * reconnects reads the new level there and logs accordingly.
 */
typedef enum _D3DDDI_LOGGING_LEVEL {
	D3DDDI_LOGGING_LEVEL_DEFAULT = 0,
	D3DDDI_LOGGING_LEVEL_ALL = 1,
} D3DDDI_LOGGING_LEVEL;

/* NFENCE_LOGGING_RECREATE: new log buffers even at the same level */
#define NFENCE_LOGGING_RECREATE		0x1

/* NFENCE_SETLOGGINGLEVEL: argument of NFenceSetLoggingLevel(). */
typedef struct _NFENCE_SETLOGGINGLEVEL {
	D3DKMT_HANDLE hAdapter;		/* in: the adapter */
	D3DDDI_LOGGING_LEVEL LoggingLevel;	/* in: the new level */
	UINT Flags;			/* in: NFENCE_LOGGING_RECREATE or 0 */
	D3DDDI_LOGGING_LEVEL PreviousLevel;	/* out: the level before */
} NFENCE_SETLOGGINGLEVEL;

/**
 * NFenceSetLoggingLevel() - turn an adapter's detailed fence logging on or off
 * @pLevel: in: hAdapter, LoggingLevel, Flags; out: PreviousLevel
 *
 * What Dxgkrnl does when a tool turns verbose logging on or off, for every
 * process on the adapter: at a new level every hardware queue gets new
 * native fence log buffers (MaxLogEntries entries at
 * D3DDDI_LOGGING_LEVEL_ALL, so that a trace does not overrun them; 84 at
 * the default) at new GPU VAs, then every connected doorbell is
 * disconnected (DISCONNECTED_RETRY) so that each UMD reconnects and reads
 * the new level. NFENCE_LOGGING_RECREATE makes new buffers even when the
 * level does not change (WDDM's "Dxgkrnl may destroy and recreate the
 * log buffers"). Off by default; for tools such as nfence-trace, and a
 * test hook (the kernel's DRM_IOCTL_NFENCE_LOGGING_LEVEL).
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pLevel is NULL, the
 * level is unknown or Flags has an unknown bit; STATUS_INVALID_PARAMETER if
 * hAdapter is not an adapter handle; STATUS_ACCESS_DENIED without
 * CAP_SYS_ADMIN; STATUS_NOT_SUPPORTED on an adapter without
 * SupportLogBuffers; STATUS_NO_MEMORY or STATUS_INSUFFICIENT_RESOURCES
 * if a queue's new buffers could not be made (the level is set, that
 * queue keeps its buffers, and PreviousLevel is written: a tool puts the
 * level back with it); otherwise see NFenceStatusFromErrno().
 * PreviousLevel is written on success too, and on no other failure.
 */
NFENCE_EXPORT NTSTATUS NFenceSetLoggingLevel(NFENCE_SETLOGGINGLEVEL *pLevel);


/* ------------------------------------------------------------------ */
/* WSL's other D3DKMT calls                                           */
/* ------------------------------------------------------------------ */

/*
 * The rest of libdxg's entry points (Documentation/libnfence.rst, "Entry
 * points of WSL's D3DKMT"), so that a program written for WSL links. Each
 * returns STATUS_NOT_SUPPORTED and reads nothing of its argument (NULL
 * included): nfence has no such object or service, or its kernel driver
 * does not have it yet (GPU virtual address management, paging queues,
 * residency, WDDM 1.x submission and sync objects). An argument struct whose layout is in nfence's
 * references (libnfence/tests/windows-layouts.txt) is declared with that
 * layout; the others are incomplete types. A member whose type is a
 * Windows enum or flag word whose values are in none of those references
 * is a UINT in the same place.
 */

/* The arguments whose layouts nfence's references do not give. */
typedef struct _D3DKMT_CHANGEVIDEOMEMORYRESERVATION D3DKMT_CHANGEVIDEOMEMORYRESERVATION;
typedef struct _D3DKMT_DESTROYALLOCATION D3DKMT_DESTROYALLOCATION;
typedef struct _D3DDDI_DESTROYPAGINGQUEUE D3DDDI_DESTROYPAGINGQUEUE;
typedef struct _D3DKMT_FLUSHHEAPTRANSITIONS D3DKMT_FLUSHHEAPTRANSITIONS;
typedef struct _D3DKMT_FREEGPUVIRTUALADDRESS D3DKMT_FREEGPUVIRTUALADDRESS;
typedef struct _D3DKMT_GETALLOCATIONPRIORITY D3DKMT_GETALLOCATIONPRIORITY;
typedef struct _D3DKMT_GETCONTEXTINPROCESSSCHEDULINGPRIORITY D3DKMT_GETCONTEXTINPROCESSSCHEDULINGPRIORITY;
typedef struct _D3DKMT_GETSHAREDRESOURCEADAPTERLUID D3DKMT_GETSHAREDRESOURCEADAPTERLUID;
typedef struct _D3DKMT_INVALIDATECACHE D3DKMT_INVALIDATECACHE;
typedef struct _D3DDDI_MAKERESIDENT D3DDDI_MAKERESIDENT;
typedef struct _D3DDDI_MAPGPUVIRTUALADDRESS D3DDDI_MAPGPUVIRTUALADDRESS;
typedef struct _D3DKMT_OFFERALLOCATIONS D3DKMT_OFFERALLOCATIONS;
typedef struct _D3DKMT_OPENRESOURCE D3DKMT_OPENRESOURCE;
typedef struct _D3DKMT_OPENRESOURCEFROMNTHANDLE D3DKMT_OPENRESOURCEFROMNTHANDLE;
typedef struct _D3DKMT_QUERYALLOCATIONRESIDENCY D3DKMT_QUERYALLOCATIONRESIDENCY;
typedef struct _D3DKMT_QUERYRESOURCEINFO D3DKMT_QUERYRESOURCEINFO;
typedef struct _D3DKMT_QUERYSTATISTICS D3DKMT_QUERYSTATISTICS;
typedef struct _D3DKMT_RECLAIMALLOCATIONS2 D3DKMT_RECLAIMALLOCATIONS2;
typedef struct _D3DKMT_RENDER D3DKMT_RENDER;
typedef struct _D3DDDI_RESERVEGPUVIRTUALADDRESS D3DDDI_RESERVEGPUVIRTUALADDRESS;
typedef struct _D3DKMT_SETALLOCATIONPRIORITY D3DKMT_SETALLOCATIONPRIORITY;
typedef struct _D3DKMT_SETCONTEXTINPROCESSSCHEDULINGPRIORITY D3DKMT_SETCONTEXTINPROCESSSCHEDULINGPRIORITY;
typedef struct _D3DKMT_SHAREOBJECTWITHHOST D3DKMT_SHAREOBJECTWITHHOST;
typedef struct _D3DDDI_UPDATEALLOCPROPERTY D3DDDI_UPDATEALLOCPROPERTY;
typedef struct _D3DKMT_UPDATEGPUVIRTUALADDRESS D3DKMT_UPDATEGPUVIRTUALADDRESS;

/* D3DKMT_CREATEPAGINGQUEUE: argument of D3DKMTCreatePagingQueue. */
typedef struct _D3DKMT_CREATEPAGINGQUEUE {
	D3DKMT_HANDLE hDevice;
	UINT Priority;			/* a D3DDDI_PAGINGQUEUE_PRIORITY */
	D3DKMT_HANDLE hPagingQueue;
	D3DKMT_HANDLE hSyncObject;
	VOID *FenceValueCPUVirtualAddress;
	UINT PhysicalAdapterIndex;
} D3DKMT_CREATEPAGINGQUEUE;

/*
 * D3DKMT_CREATESYNCHRONIZATIONOBJECT: argument of
 * D3DKMTCreateSynchronizationObject. The layout of its Info
 * (D3DDDI_SYNCHRONIZATIONOBJECTINFO) is in none of nfence's references:
 * InfoSpace holds its 68 bytes.
 */
typedef struct _D3DKMT_CREATESYNCHRONIZATIONOBJECT {
	D3DKMT_HANDLE hDevice;
	UINT InfoSpace[17];
	D3DKMT_HANDLE hSyncObject;
} D3DKMT_CREATESYNCHRONIZATIONOBJECT;

/* D3DKMT_ESCAPE: argument of D3DKMTEscape. */
typedef struct _D3DKMT_ESCAPE {
	D3DKMT_HANDLE hAdapter;
	D3DKMT_HANDLE hDevice;
	UINT Type;			/* a D3DKMT_ESCAPETYPE */
	UINT Flags;			/* a D3DDDI_ESCAPEFLAGS word */
	VOID *pPrivateDriverData;
	UINT PrivateDriverDataSize;
	D3DKMT_HANDLE hContext;
} D3DKMT_ESCAPE;

/* D3DKMT_EVICT: argument of D3DKMTEvict. */
typedef struct _D3DKMT_EVICT {
	D3DKMT_HANDLE hDevice;
	UINT NumAllocations;
	const D3DKMT_HANDLE *AllocationList;
	UINT Flags;			/* a D3DDDI_EVICT_FLAGS word */
	UINT64 NumBytesToTrim;
} D3DKMT_EVICT;

/* D3DKMT_OPENSYNCHRONIZATIONOBJECT: argument of D3DKMTOpenSynchronizationObject. */
typedef struct _D3DKMT_OPENSYNCHRONIZATIONOBJECT {
	D3DKMT_HANDLE hSharedHandle;
	D3DKMT_HANDLE hSyncObject;
	UINT64 Reserved[8];
} D3DKMT_OPENSYNCHRONIZATIONOBJECT;

/* D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE: argument of D3DKMTQueryResourceInfoFromNtHandle. */
typedef struct _D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE {
	D3DKMT_HANDLE hDevice;
	HANDLE hNtHandle;
	VOID *pPrivateRuntimeData;
	UINT PrivateRuntimeDataSize;
	UINT TotalPrivateDriverDataSize;
	UINT ResourcePrivateDriverDataSize;
	UINT NumAllocations;
} D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE;


/* D3DKMT_SIGNALSYNCHRONIZATIONOBJECT: argument of D3DKMTSignalSynchronizationObject. */
typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECT {
	D3DKMT_HANDLE hContext;
	UINT ObjectCount;
	D3DKMT_HANDLE ObjectHandleArray[32];
	D3DDDICB_SIGNALFLAGS Flags;
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECT;

/*
 * D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2: argument of
 * D3DKMTSignalSynchronizationObject2. Windows' union also has Fence, the
 * value for a WDDM 1.x fence, whose layout is not in nfence's references;
 * Reserved gives the union its size.
 */
typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 {
	D3DKMT_HANDLE hContext;
	UINT ObjectCount;
	D3DKMT_HANDLE ObjectHandleArray[32];
	D3DDDICB_SIGNALFLAGS Flags;
	ULONG BroadcastContextCount;
	D3DKMT_HANDLE BroadcastContext[64];
	union {
		HANDLE CpuEventHandle;
		UINT64 Reserved[8];
	};
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2;

/* D3DKMT_WAITFORSYNCHRONIZATIONOBJECT: argument of D3DKMTWaitForSynchronizationObject. */
typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECT {
	D3DKMT_HANDLE hContext;
	UINT ObjectCount;
	D3DKMT_HANDLE ObjectHandleArray[32];
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECT;

/*
 * D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2: argument of
 * D3DKMTWaitForSynchronizationObject2. As in ..._SIGNALSYNCHRONIZATIONOBJECT2,
 * the union's Fence is not declared; Reserved gives it its size.
 */
typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 {
	D3DKMT_HANDLE hContext;
	UINT ObjectCount;
	D3DKMT_HANDLE ObjectHandleArray[32];
	union {
		UINT64 Reserved[8];
	};
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2;

/**
 * D3DKMTCloseDxCoreDevice() - close the process's D3DKMT device: nothing
 *
 * "Reserved for system use", Microsoft's reference says; by its name,
 * libdxg closes there the /dev/dxg file its calls go through. libnfence
 * keeps no such file: each open adapter has a render node file of its own,
 * which D3DKMTCloseAdapter() closes. So the call does nothing; open
 * adapters and their objects stay usable.
 */
NFENCE_EXPORT VOID D3DKMTCloseDxCoreDevice(VOID);

/* D3DKMTChangeVideoMemoryReservation() - STATUS_NOT_SUPPORTED; needs driver support: per-process video memory budgets and reservations */
NFENCE_EXPORT NTSTATUS D3DKMTChangeVideoMemoryReservation(const D3DKMT_CHANGEVIDEOMEMORYRESERVATION *pData);

/* D3DKMTCreatePagingQueue() - STATUS_NOT_SUPPORTED; needs driver support: paging queues */
NFENCE_EXPORT NTSTATUS D3DKMTCreatePagingQueue(D3DKMT_CREATEPAGINGQUEUE *pData);

/* D3DKMTCreateSynchronizationObject() - STATUS_NOT_SUPPORTED; needs driver support: WDDM 1.x/2.x non-monitored sync objects */
NFENCE_EXPORT NTSTATUS D3DKMTCreateSynchronizationObject(D3DKMT_CREATESYNCHRONIZATIONOBJECT *pData);

/* D3DKMTDestroyAllocation() - STATUS_NOT_SUPPORTED; refused: its argument's layout is not in nfence's references; D3DKMTDestroyAllocation2() does the same */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyAllocation(const D3DKMT_DESTROYALLOCATION *pData);

/* D3DKMTDestroyPagingQueue() - STATUS_NOT_SUPPORTED; needs driver support: paging queues */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyPagingQueue(D3DDDI_DESTROYPAGINGQUEUE *pData);

/* D3DKMTEscape() - STATUS_NOT_SUPPORTED; refused: the nfence driver takes no driver-private escapes */
NFENCE_EXPORT NTSTATUS D3DKMTEscape(const D3DKMT_ESCAPE *pData);

/* D3DKMTEvict() - STATUS_NOT_SUPPORTED; needs driver support: residency (allocations are resident while they exist) */
NFENCE_EXPORT NTSTATUS D3DKMTEvict(D3DKMT_EVICT *pData);

/* D3DKMTFlushHeapTransitions() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTFlushHeapTransitions(const D3DKMT_FLUSHHEAPTRANSITIONS *pData);

/* D3DKMTFreeGpuVirtualAddress() - STATUS_NOT_SUPPORTED; needs driver support: GPU virtual address management */
NFENCE_EXPORT NTSTATUS D3DKMTFreeGpuVirtualAddress(const D3DKMT_FREEGPUVIRTUALADDRESS *pData);

/* D3DKMTGetAllocationPriority() - STATUS_NOT_SUPPORTED; needs driver support: residency priorities */
NFENCE_EXPORT NTSTATUS D3DKMTGetAllocationPriority(const D3DKMT_GETALLOCATIONPRIORITY *pData);

/* D3DKMTGetContextInProcessSchedulingPriority() - STATUS_NOT_SUPPORTED; refused: its argument's layout is not in nfence's references; D3DKMTGetContextSchedulingPriority() reports a context's priority */
NFENCE_EXPORT NTSTATUS D3DKMTGetContextInProcessSchedulingPriority(D3DKMT_GETCONTEXTINPROCESSSCHEDULINGPRIORITY *pData);

/* D3DKMTGetSharedResourceAdapterLuid() - STATUS_NOT_SUPPORTED; refused: allocations are not shared between processes */
NFENCE_EXPORT NTSTATUS D3DKMTGetSharedResourceAdapterLuid(D3DKMT_GETSHAREDRESOURCEADAPTERLUID *pData);

/* D3DKMTInvalidateCache() - STATUS_NOT_SUPPORTED; refused: its argument's layout is not in nfence's references */
NFENCE_EXPORT NTSTATUS D3DKMTInvalidateCache(const D3DKMT_INVALIDATECACHE *pData);

/* D3DKMTMakeResident() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTMakeResident(D3DDDI_MAKERESIDENT *pData);

/* D3DKMTMapGpuVirtualAddress() - STATUS_NOT_SUPPORTED; needs driver support: GPU virtual address management */
NFENCE_EXPORT NTSTATUS D3DKMTMapGpuVirtualAddress(D3DDDI_MAPGPUVIRTUALADDRESS *pData);

/* D3DKMTOfferAllocations() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTOfferAllocations(const D3DKMT_OFFERALLOCATIONS *pData);

/* D3DKMTOpenResource() - STATUS_NOT_SUPPORTED; refused: allocations are not shared between processes */
NFENCE_EXPORT NTSTATUS D3DKMTOpenResource(D3DKMT_OPENRESOURCE *pData);

/* D3DKMTOpenResourceFromNtHandle() - STATUS_NOT_SUPPORTED; refused: allocations are not shared between processes */
NFENCE_EXPORT NTSTATUS D3DKMTOpenResourceFromNtHandle(D3DKMT_OPENRESOURCEFROMNTHANDLE *pData);

/* D3DKMTOpenSynchronizationObject() - STATUS_NOT_SUPPORTED; refused: nfence shares sync objects through NT handles, not global handles */
NFENCE_EXPORT NTSTATUS D3DKMTOpenSynchronizationObject(D3DKMT_OPENSYNCHRONIZATIONOBJECT *pData);

/* D3DKMTQueryAllocationResidency() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTQueryAllocationResidency(const D3DKMT_QUERYALLOCATIONRESIDENCY *pData);

/* D3DKMTQueryResourceInfo() - STATUS_NOT_SUPPORTED; refused: allocations are not shared between processes */
NFENCE_EXPORT NTSTATUS D3DKMTQueryResourceInfo(D3DKMT_QUERYRESOURCEINFO *pData);

/* D3DKMTQueryResourceInfoFromNtHandle() - STATUS_NOT_SUPPORTED; refused: allocations are not shared between processes */
NFENCE_EXPORT NTSTATUS D3DKMTQueryResourceInfoFromNtHandle(D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE *pData);

/* D3DKMTQueryStatistics() - STATUS_NOT_SUPPORTED; refused: its argument's unions are not in nfence's references */
NFENCE_EXPORT NTSTATUS D3DKMTQueryStatistics(const D3DKMT_QUERYSTATISTICS *pData);

/* D3DKMTReclaimAllocations2() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTReclaimAllocations2(D3DKMT_RECLAIMALLOCATIONS2 *pData);

/* D3DKMTRender() - STATUS_NOT_SUPPORTED; refused: WDDM 1.x submission of command buffers with allocation and patch lists */
NFENCE_EXPORT NTSTATUS D3DKMTRender(D3DKMT_RENDER *pData);

/* D3DKMTReserveGpuVirtualAddress() - STATUS_NOT_SUPPORTED; needs driver support: GPU virtual address management */
NFENCE_EXPORT NTSTATUS D3DKMTReserveGpuVirtualAddress(D3DDDI_RESERVEGPUVIRTUALADDRESS *pData);

/* D3DKMTSetAllocationPriority() - STATUS_NOT_SUPPORTED; needs driver support: residency priorities */
NFENCE_EXPORT NTSTATUS D3DKMTSetAllocationPriority(const D3DKMT_SETALLOCATIONPRIORITY *pData);

/* D3DKMTSetContextInProcessSchedulingPriority() - STATUS_NOT_SUPPORTED; refused: its argument's layout is not in nfence's references; D3DKMTSetContextSchedulingPriority() sets a context's priority */
NFENCE_EXPORT NTSTATUS D3DKMTSetContextInProcessSchedulingPriority(const D3DKMT_SETCONTEXTINPROCESSSCHEDULINGPRIORITY *pData);

/* D3DKMTShareObjectWithHost() - STATUS_NOT_SUPPORTED; refused: there is no host; this is WSL's call to the Windows side */
NFENCE_EXPORT NTSTATUS D3DKMTShareObjectWithHost(D3DKMT_SHAREOBJECTWITHHOST *pData);

/* D3DKMTSignalSynchronizationObject() - STATUS_NOT_SUPPORTED; needs driver support: WDDM 1.x/2.x non-monitored sync objects */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObject(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT *pData);

/* D3DKMTSignalSynchronizationObject2() - STATUS_NOT_SUPPORTED; needs driver support: WDDM 1.x/2.x non-monitored sync objects */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObject2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *pData);

/* D3DKMTUpdateAllocationProperty() - STATUS_NOT_SUPPORTED; needs driver support: residency */
NFENCE_EXPORT NTSTATUS D3DKMTUpdateAllocationProperty(D3DDDI_UPDATEALLOCPROPERTY *pData);

/* D3DKMTUpdateGpuVirtualAddress() - STATUS_NOT_SUPPORTED; needs driver support: GPU virtual address management */
NFENCE_EXPORT NTSTATUS D3DKMTUpdateGpuVirtualAddress(const D3DKMT_UPDATEGPUVIRTUALADDRESS *pData);

/* D3DKMTWaitForSynchronizationObject() - STATUS_NOT_SUPPORTED; needs driver support: WDDM 1.x/2.x non-monitored sync objects */
NFENCE_EXPORT NTSTATUS D3DKMTWaitForSynchronizationObject(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT *pData);

/* D3DKMTWaitForSynchronizationObject2() - STATUS_NOT_SUPPORTED; needs driver support: WDDM 1.x/2.x non-monitored sync objects */
NFENCE_EXPORT NTSTATUS D3DKMTWaitForSynchronizationObject2(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 *pData);

#ifdef __cplusplus
}
#endif

#endif /* _NFENCE_D3DKMTHK_H_ */
