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
 * types).
 *
 * Linux conventions:
 * - D3DKMT_HANDLE values are per process, 0 is never valid, and a closed
 *   handle is never handed out again (until 2^32 handles have been issued).
 * - HANDLE carries a file descriptor as (HANDLE)(intptr_t)fd, NULL meaning
 *   "none"; closing an NT handle is close(fd).
 * - Every entry point is thread-safe and returns an NTSTATUS; a NULL
 *   argument pointer is STATUS_INVALID_PARAMETER, never a crash.
 * - All handles opened through one adapter (one LUID) in a process share
 *   one open file of that adapter's render node, as all D3DKMT objects of a
 *   Windows process share one per-process adapter state.
 */
#ifndef _NFENCE_D3DKMTHK_H_
#define _NFENCE_D3DKMTHK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NFENCE_EXPORT marks the functions the shared library exports. */
#define NFENCE_EXPORT __attribute__((visibility("default")))

/* Windows base types, with their Windows sizes (LLP64: LONG is 32-bit). */
typedef uint8_t BYTE;
typedef uint32_t UINT;
typedef uint64_t UINT64;
typedef uint32_t DWORD;
typedef uint32_t ULONG;
typedef int32_t LONG;
typedef int32_t BOOL;
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
 * adapter index. With @pAdapters NULL, only sets @NumAdapters to their
 * number. Otherwise fills @pAdapters and sets @NumAdapters; every returned
 * hAdapter is open and must be closed with D3DKMTCloseAdapter().
 *
 * Return: STATUS_SUCCESS (also with no adapter at all);
 * STATUS_BUFFER_TOO_SMALL if @NumAdapters is smaller than the number of
 * adapters, @NumAdapters then set to that number and nothing opened;
 * STATUS_INVALID_PARAMETER if @pEnumAdapters is NULL; STATUS_NO_MEMORY.
 */
NFENCE_EXPORT NTSTATUS D3DKMTEnumAdapters2(D3DKMT_ENUMADAPTERS2 *pEnumAdapters);

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
 * D3DKMTCloseAdapter().
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pAdapter is NULL or
 * no nfence adapter has that LUID; STATUS_NO_MEMORY.
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
 * STATUS_INVALID_HANDLE if hAdapter is not an open adapter handle.
 */
NFENCE_EXPORT NTSTATUS D3DKMTCloseAdapter(const D3DKMT_CLOSEADAPTER *pAdapter);

/* ------------------------------------------------------------------ */
/* Adapter queries                                                    */
/* ------------------------------------------------------------------ */

/*
 * KMTQUERYADAPTERINFOTYPE: what D3DKMTQueryAdapterInfo returns. Only the
 * types listed here are implemented; Windows types not listed are not
 * provided by nfence. The KMTQAITYPE_NFENCE_* values are nfence's own,
 * far above the Windows range ('N' 'F' in the high half).
 */
typedef enum _KMTQUERYADAPTERINFOTYPE {
	/* D3DKMT_WDDM_3_1_CAPS; 75 is the value in the WDK's d3dkmthk.h */
	KMTQAITYPE_WDDM_3_1_CAPS			= 75,

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
			UINT Reserved			: 28;
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
 * before the handle.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if an argument pointer
 * is NULL, Type is not one of KMTQUERYADAPTERINFOTYPE or the size is wrong;
 * STATUS_BUFFER_TOO_SMALL as above; STATUS_INVALID_HANDLE if hAdapter is
 * not an open adapter handle; otherwise the status of the kernel's error
 * (see NFenceStatusFromErrno()).
 */
NFENCE_EXPORT NTSTATUS D3DKMTQueryAdapterInfo(const D3DKMT_QUERYADAPTERINFO *pQueryAdapterInfo);

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

/*
 * D3DKMT_CREATEDEVICEFLAGS: device creation flags. LegacyMode (a D3D9-style
 * device with command buffers) is not supported; RequestVSync,
 * DisableGpuTimeout and TestDevice have no effect on nfence; Reserved must
 * be zero.
 */
typedef struct _D3DKMT_CREATEDEVICEFLAGS {
	UINT LegacyMode				: 1;
	UINT RequestVSync			: 1;
	UINT DisableGpuTimeout			: 1;
	UINT TestDevice				: 1;
	UINT Reserved				: 28;
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
 * Flags.LegacyMode; STATUS_INVALID_HANDLE if hAdapter is not an open
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
 * NULL; STATUS_INVALID_HANDLE if hDevice is not a device handle (or the
 * kernel no longer knows the device, e.g. a child process destroyed it
 * through the file it shares with its parent).
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *pDestroyDevice);

/* ------------------------------------------------------------------ */
/* Synchronization objects: native GPU fences                         */
/* ------------------------------------------------------------------ */

/*
 * A native fence is a synchronization object (a D3DKMT_HANDLE named
 * hSyncObject) of a device: a 64-bit CurrentValue that GPU engines signal
 * and wait on through GPU virtual addresses and that the CPU reads through
 * a read-only mapping, plus a MonitoredValue only the kernel and the GPU
 * see. CurrentValue never decreases.
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
 *   CrossAdapter           STATUS_NOT_SUPPORTED while the kernel does not
 *                          implement cross-adapter fences
 *   TopOfPipeline          STATUS_NOT_SUPPORTED (a signal semantics of
 *                          packet-based sync objects, not of native fences)
 *   NoSignal               this handle never signals (signals through it
 *                          fail with STATUS_ACCESS_DENIED)
 *   NoWait                 this handle never waits (STATUS_ACCESS_DENIED);
 *                          not together with NoSignal
 *   NoSignalMaxValueOnTdr  STATUS_NOT_SUPPORTED: nfence does not define
 *                          fence values after a device reset yet
 *   NoGPUAccess            STATUS_NOT_SUPPORTED: a native fence always has
 *                          GPU virtual addresses
 *   SignalByKmd            STATUS_INVALID_PARAMETER (for CPU notification
 *                          objects only, as on Windows)
 *   Reserved, D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0
 *                          must be zero: STATUS_INVALID_PARAMETER
 *
 * Invalid bits are reported before unsupported ones.
 * D3DKMTOpenNativeFenceFromNtHandle() ignores Shared and NtSecuritySharing
 * (the object's sharing was fixed when it was created) and treats the
 * other bits as above.
 */
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
	/* in: engines (bit per node ordinal) that use the fence; 0: all */
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
	/* in/out: left unchanged, the nfence kernel driver takes none */
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
 * @pCreateNativeFence is NULL, Flags.Value is not 0, Info.Type is unknown,
 * Info.Flags is invalid (see D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, also
 * NoSignal with NoWait or NtSecuritySharing without Shared) or
 * Info.EngineAffinity names an engine the adapter does not have;
 * STATUS_NOT_SUPPORTED for unsupported Info.Flags bits or an adapter
 * without native fences; STATUS_INVALID_HANDLE if hDevice is not a device
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
 * shareable as an NT handle; STATUS_INVALID_HANDLE if the handle is not a
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
	/* in/out: left unchanged, the nfence kernel driver takes none */
	BYTE PrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE];
	BYTE Reserved[32];		/* ignored */
} D3DKMT_OPENNATIVEFENCEFROMNTHANDLE;

/**
 * D3DKMTOpenNativeFenceFromNtHandle() - open a shared native fence
 * @pOpen: in: hNtHandle, hDevice, EngineAffinity, Flags; out: hSyncObject,
 *	NativeFenceMapping
 *
 * Opens the fence an NT handle from D3DKMTShareObjects() names, in this or
 * another process, on a device of the same adapter. The new sync object
 * shares CurrentValue with every other handle of the fence; its mapping is
 * as for D3DKMTCreateNativeFence(). @hNtHandle is not consumed: the caller
 * still closes it. The outputs are written only on success.
 *
 * Return: STATUS_SUCCESS; STATUS_INVALID_PARAMETER if @pOpen is NULL,
 * Flags is invalid (see D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS), EngineAffinity
 * names an engine the adapter does not have, or hNtHandle is an open file
 * that is not a fence of this adapter; STATUS_NOT_SUPPORTED for unsupported
 * Flags bits; STATUS_INVALID_HANDLE if hDevice is not a device handle or
 * hNtHandle is NULL or not an open file descriptor; STATUS_NO_MEMORY;
 * otherwise see NFenceStatusFromErrno().
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
 * STATUS_INVALID_HANDLE if hSyncObject is not a sync object handle (or the
 * kernel no longer knows the fence, e.g. a child process destroyed it
 * through the file it shares with its parent).
 */
NFENCE_EXPORT NTSTATUS D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *pDestroy);

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
 * NULL, ObjectCount is 0 or above 64, Flags.Reserved is not 0, an object
 * is an INTRA_GPU fence, or hAsyncEvent is not an eventfd;
 * STATUS_INVALID_HANDLE if hDevice is not a device handle, an object is not
 * a sync object of the device's adapter, or hAsyncEvent is not an open file
 * descriptor; STATUS_ACCESS_DENIED for an object opened with NoWait;
 * otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTWaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *pWait);

/*
 * D3DDDICB_SIGNALFLAGS: signal flags, in the bit order of Windows'
 * d3dukmdt.h. For a CPU signal: SignalAtSubmission is ignored (a CPU signal
 * happens when it is submitted); EnqueueCpuEvent and AllowFenceRewind are
 * STATUS_NOT_SUPPORTED (CurrentValue never decreases on nfence); Reserved
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
 * STATUS_NOT_SUPPORTED for unsupported Flags; STATUS_INVALID_HANDLE if
 * hDevice is not a device handle or an object is not a sync object of the
 * device's adapter; STATUS_ACCESS_DENIED for an object opened with
 * NoSignal; otherwise see NFenceStatusFromErrno().
 */
NFENCE_EXPORT NTSTATUS D3DKMTSignalSynchronizationObjectFromCpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU *pSignal);

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
 *   ENOENT, EBADF                      STATUS_INVALID_HANDLE
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

#ifdef __cplusplus
}
#endif

#endif /* _NFENCE_D3DKMTHK_H_ */
