/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef _UAPI_NFENCE_DRM_H_
#define _UAPI_NFENCE_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: nfence uapi
 *
 * nfence is a DRM render-only driver for a simulated GPU that implements the
 * WDDM 3.1/3.2 native GPU fence and user-mode work submission model. Each
 * simulated adapter is one DRM device named "nfence" with a render node.
 *
 * Conventions shared by every ioctl:
 *
 * - Every @flags, @pad and @reserved field must be zero on input; unknown
 *   flag bits and non-zero padding fail with -EINVAL.
 * - Handles are per open file (per &struct drm_file); 0 is never a valid
 *   handle. A handle that does not name an object of the right kind fails
 *   with -ENOENT.
 * - User pointers are passed as __u64. A pointer that cannot be read or
 *   written fails with -EFAULT.
 * - Variable-sized results use the two-call protocol of
 *   &struct drm_nfence_query: ask for the size with @size = 0, then call
 *   again with a buffer at least that large.
 */

#define DRM_NFENCE_QUERY		0x00
#define DRM_NFENCE_DEVICE_CREATE	0x01
#define DRM_NFENCE_DEVICE_DESTROY	0x02
#define DRM_NFENCE_FENCE_CREATE		0x03
#define DRM_NFENCE_FENCE_DESTROY	0x04
#define DRM_NFENCE_FENCE_SHARE		0x05
#define DRM_NFENCE_FENCE_OPEN		0x06
#define DRM_NFENCE_FENCE_WAIT		0x07
#define DRM_NFENCE_FENCE_SIGNAL		0x08

#define DRM_IOCTL_NFENCE_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_QUERY, struct drm_nfence_query)
#define DRM_IOCTL_NFENCE_DEVICE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_DEVICE_CREATE, \
		 struct drm_nfence_device_create)
#define DRM_IOCTL_NFENCE_DEVICE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_DEVICE_DESTROY, \
		struct drm_nfence_device_destroy)
#define DRM_IOCTL_NFENCE_FENCE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_CREATE, \
		 struct drm_nfence_fence_create)
#define DRM_IOCTL_NFENCE_FENCE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_DESTROY, \
		struct drm_nfence_fence_destroy)
#define DRM_IOCTL_NFENCE_FENCE_SHARE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_SHARE, \
		 struct drm_nfence_fence_share)
#define DRM_IOCTL_NFENCE_FENCE_OPEN \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_OPEN, \
		 struct drm_nfence_fence_open)
#define DRM_IOCTL_NFENCE_FENCE_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_WAIT, \
		 struct drm_nfence_fence_wait)
#define DRM_IOCTL_NFENCE_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_SIGNAL, \
		struct drm_nfence_fence_signal)

/**
 * enum drm_nfence_query_type - what &struct drm_nfence_query returns
 * @DRM_NFENCE_QUERY_ADAPTER: &struct drm_nfence_query_adapter
 * @DRM_NFENCE_QUERY_SEGMENTS: &struct drm_nfence_query_segments
 * @DRM_NFENCE_QUERY_ENGINES: &struct drm_nfence_query_engines
 * @DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS: &struct drm_nfence_query_fence_caps
 * @DRM_NFENCE_QUERY_UMS_CAPS: &struct drm_nfence_query_ums_caps
 * @DRM_NFENCE_QUERY_TIMESTAMP: &struct drm_nfence_query_timestamp
 * @DRM_NFENCE_QUERY_COUNT: number of query types, not a valid type
 */
enum drm_nfence_query_type {
	DRM_NFENCE_QUERY_ADAPTER = 0,
	DRM_NFENCE_QUERY_SEGMENTS = 1,
	DRM_NFENCE_QUERY_ENGINES = 2,
	DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS = 3,
	DRM_NFENCE_QUERY_UMS_CAPS = 4,
	DRM_NFENCE_QUERY_TIMESTAMP = 5,
	DRM_NFENCE_QUERY_COUNT,
};

/**
 * struct drm_nfence_query - query adapter information
 *
 * With @size = 0 the kernel only writes the number of bytes the answer
 * needs into @size. With @size smaller than that it fails with -EINVAL and
 * writes nothing. With @size at least that large it writes the answer at
 * @data and sets @size to the number of bytes written.
 */
struct drm_nfence_query {
	/** @type: one of &enum drm_nfence_query_type */
	__u32 type;
	/** @size: in: bytes available at @data (0: ask); out: bytes needed/written */
	__u32 size;
	/** @data: user pointer to the answer buffer */
	__u64 data;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
	/** @reserved: must be zero */
	__u64 reserved[2];
};

/* Adapter capability bits (&drm_nfence_query_adapter.flags). */
/* DRM_NFENCE_ADAPTER_NATIVE_FENCE: native GPU fences (NativeGpuFenceSupported) */
#define DRM_NFENCE_ADAPTER_NATIVE_FENCE		(1u << 0)
/* DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION: doorbells on some engine */
#define DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION	(1u << 1)
/* DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS: the GPU only updates 32 bits atomically */
#define DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS	(1u << 2)

/**
 * struct drm_nfence_query_adapter - DRM_NFENCE_QUERY_ADAPTER
 */
struct drm_nfence_query_adapter {
	/** @luid_low: LowPart of the adapter LUID, unique while the module is loaded */
	__u32 luid_low;
	/** @luid_high: HighPart of the adapter LUID (signed on Windows) */
	__u32 luid_high;
	/** @index: adapter index, 0 .. number of adapters - 1 */
	__u32 index;
	/** @flags: DRM_NFENCE_ADAPTER_* bits */
	__u32 flags;
	/** @num_engines: number of engines (WDDM nodes) */
	__u32 num_engines;
	/** @num_segments: number of memory segments */
	__u32 num_segments;
	/** @timestamp_frequency: GPU timestamp ticks per second */
	__u64 timestamp_frequency;
};

/* DRM_NFENCE_SEGMENT_LOCAL: VRAM (memory-backed local segment) */
#define DRM_NFENCE_SEGMENT_LOCAL	(1u << 0)
/* DRM_NFENCE_SEGMENT_SYSTEM: system memory (aperture) segment */
#define DRM_NFENCE_SEGMENT_SYSTEM	(1u << 1)
/* DRM_NFENCE_SEGMENT_CPU_VISIBLE: some or all of the segment is CPU-visible */
#define DRM_NFENCE_SEGMENT_CPU_VISIBLE	(1u << 2)

/**
 * struct drm_nfence_segment_info - one memory segment
 */
struct drm_nfence_segment_info {
	/** @id: segment id, 1-based as WDDM segment ids */
	__u32 id;
	/** @flags: DRM_NFENCE_SEGMENT_* bits */
	__u32 flags;
	/** @size: size in bytes */
	__u64 size;
	/** @cpu_visible_size: bytes from the start of the segment the CPU can map */
	__u64 cpu_visible_size;
};

/**
 * struct drm_nfence_query_segments - DRM_NFENCE_QUERY_SEGMENTS
 */
struct drm_nfence_query_segments {
	/** @num_segments: number of entries in @segments */
	__u32 num_segments;
	/** @pad: zero */
	__u32 pad;
	/** @segments: the segments */
	struct drm_nfence_segment_info segments[];
};

/**
 * enum drm_nfence_engine_class - what an engine executes
 * @DRM_NFENCE_ENGINE_CLASS_3D: graphics (DXGK_ENGINE_TYPE_3D)
 * @DRM_NFENCE_ENGINE_CLASS_COMPUTE: compute (DXGK_ENGINE_TYPE_COMPUTE)
 * @DRM_NFENCE_ENGINE_CLASS_COPY: copy (DXGK_ENGINE_TYPE_COPY)
 */
enum drm_nfence_engine_class {
	DRM_NFENCE_ENGINE_CLASS_3D = 0,
	DRM_NFENCE_ENGINE_CLASS_COMPUTE = 1,
	DRM_NFENCE_ENGINE_CLASS_COPY = 2,
};

/* DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION: UserModeSubmissionSupported */
#define DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION	(1u << 0)

/**
 * struct drm_nfence_engine_info - one engine (WDDM node)
 */
struct drm_nfence_engine_info {
	/** @ordinal: node ordinal, 0 .. num_engines - 1 */
	__u32 ordinal;
	/** @engine_class: &enum drm_nfence_engine_class */
	__u32 engine_class;
	/** @flags: DRM_NFENCE_ENGINE_* bits */
	__u32 flags;
	/** @pad: zero */
	__u32 pad;
};

/**
 * struct drm_nfence_query_engines - DRM_NFENCE_QUERY_ENGINES
 */
struct drm_nfence_query_engines {
	/** @num_engines: number of entries in @engines */
	__u32 num_engines;
	/** @pad: zero */
	__u32 pad;
	/** @engines: the engines */
	struct drm_nfence_engine_info engines[];
};

/* DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT: MonitoredValue may live in VRAM */
#define DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT	(1u << 0)
/* DRM_NFENCE_FENCE_CAP_INTRA_GPU: INTRA_GPU fences (both values in VRAM) */
#define DRM_NFENCE_FENCE_CAP_INTRA_GPU		(1u << 1)
/* DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER: cross-adapter fences */
#define DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER	(1u << 2)
/* DRM_NFENCE_FENCE_CAP_LOG_BUFFERS: native fence log buffers */
#define DRM_NFENCE_FENCE_CAP_LOG_BUFFERS	(1u << 3)

/**
 * struct drm_nfence_query_fence_caps - DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS
 *
 * All zero when the adapter does not support native fences.
 */
struct drm_nfence_query_fence_caps {
	/** @flags: DRM_NFENCE_FENCE_CAP_* bits */
	__u32 flags;
	/** @value_stride: bytes between packed CurrentValues of non-shared fences */
	__u32 value_stride;
	/** @value_bits: 64, or 32 on a GPU without 64-bit atomics */
	__u32 value_bits;
	/** @max_log_entries: largest NativeFenceLogBufferNumberOfEntries */
	__u32 max_log_entries;
	/** @log_header_size: bytes of a log buffer header */
	__u32 log_header_size;
	/** @log_entry_size: bytes of a log buffer entry */
	__u32 log_entry_size;
};

/**
 * enum drm_nfence_doorbell_model - how doorbells reach the CMP
 * @DRM_NFENCE_DOORBELL_DEDICATED: one physical doorbell per connected queue,
 *	virtualized over more queues by victimizing the least recently used
 * @DRM_NFENCE_DOORBELL_GLOBAL: one doorbell shared by every queue
 */
enum drm_nfence_doorbell_model {
	DRM_NFENCE_DOORBELL_DEDICATED = 1,
	DRM_NFENCE_DOORBELL_GLOBAL = 2,
};

/**
 * struct drm_nfence_query_ums_caps - DRM_NFENCE_QUERY_UMS_CAPS
 *
 * DXGK_USERMODESUBMISSION_CAPS; all zero without user-mode submission.
 */
struct drm_nfence_query_ums_caps {
	/** @doorbell_size: bytes of one doorbell (DXGK_USERMODESUBMISSION_CAPS) */
	__u32 doorbell_size;
	/** @doorbell_model: &enum drm_nfence_doorbell_model */
	__u32 doorbell_model;
	/** @num_doorbells: number of physical doorbells */
	__u32 num_doorbells;
	/** @pad: zero */
	__u32 pad;
};

/**
 * struct drm_nfence_query_timestamp - DRM_NFENCE_QUERY_TIMESTAMP
 *
 * A correlated pair of the GPU timestamp clock and CLOCK_MONOTONIC.
 */
struct drm_nfence_query_timestamp {
	/** @gpu_timestamp: GPU timestamp, in ticks of timestamp_frequency */
	__u64 gpu_timestamp;
	/** @cpu_monotonic_ns: CLOCK_MONOTONIC at the same instant, in ns */
	__u64 cpu_monotonic_ns;
};

/**
 * struct drm_nfence_device_create - create a device (D3DKMTCreateDevice)
 *
 * A device is the per-process container of contexts, allocations and
 * synchronization objects on one adapter. At most
 * %DRM_NFENCE_MAX_DEVICES_PER_FILE devices exist per file; one more fails
 * with -ENOSPC.
 */
struct drm_nfence_device_create {
	/** @flags: must be zero */
	__u32 flags;
	/** @handle: out: the device handle, never 0 */
	__u32 handle;
};

/* DRM_NFENCE_MAX_DEVICES_PER_FILE: devices one open file may hold */
#define DRM_NFENCE_MAX_DEVICES_PER_FILE	1024

/**
 * struct drm_nfence_device_destroy - destroy a device (D3DKMTDestroyDevice)
 *
 * Destroys everything the device owns. -ENOENT if @handle names no device
 * of this file.
 */
struct drm_nfence_device_destroy {
	/** @handle: the device handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * DOC: native fences
 *
 * A native fence has a 64-bit CurrentValue, which the CPU may read through a
 * read-only mapping and which GPU engines read and write through a GPU
 * virtual address, and a MonitoredValue that only the kernel and the GPU
 * see: the least value a CPU waiter waits for, minus one, or UINT64_MAX
 * when nobody waits. The GPU interrupts the CPU only when a signal makes
 * CurrentValue exceed MonitoredValue.
 *
 * A fence is a global object; each open file reaches it through a local
 * handle (per file, like device handles). Sharing turns a fence created
 * with %DRM_NFENCE_FENCE_SHARED | %DRM_NFENCE_FENCE_NT_SECURITY_SHARING into
 * a file descriptor (an "NT handle": close-on-exec, passable over a unix
 * socket); opening that fd on any file of the same adapter gives a new local
 * handle with new mappings. The global object lives until its last local
 * handle and its last fd are gone.
 *
 * CurrentValue never decreases: a CPU signal of a value at or below it
 * leaves it unchanged and succeeds.
 */

/**
 * enum drm_nfence_fence_type - D3DDDI_NATIVEFENCE_TYPE
 * @DRM_NFENCE_FENCE_TYPE_DEFAULT: CurrentValue in system memory, CPU-visible;
 *	MonitoredValue in system memory, or in VRAM on adapters with
 *	%DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT (moved back to system memory
 *	when VRAM is short)
 * @DRM_NFENCE_FENCE_TYPE_INTRA_GPU: both values in VRAM the CPU cannot see;
 *	no CPU mapping, no CPU wait, no CPU signal
 */
enum drm_nfence_fence_type {
	DRM_NFENCE_FENCE_TYPE_DEFAULT = 0,
	DRM_NFENCE_FENCE_TYPE_INTRA_GPU = 1,
};

/* Fence flags: D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS. */
/* DRM_NFENCE_FENCE_SHARED: the fence may be shared (Shared) */
#define DRM_NFENCE_FENCE_SHARED			(1u << 0)
/* DRM_NFENCE_FENCE_NT_SECURITY_SHARING: shared as an fd; needs SHARED */
#define DRM_NFENCE_FENCE_NT_SECURITY_SHARING	(1u << 1)
/* DRM_NFENCE_FENCE_CROSS_ADAPTER: CrossAdapter; not supported yet: -EOPNOTSUPP */
#define DRM_NFENCE_FENCE_CROSS_ADAPTER		(1u << 2)
/* DRM_NFENCE_FENCE_NO_SIGNAL: this handle never signals (NoSignal) */
#define DRM_NFENCE_FENCE_NO_SIGNAL		(1u << 3)
/* DRM_NFENCE_FENCE_NO_WAIT: this handle never waits (NoWait) */
#define DRM_NFENCE_FENCE_NO_WAIT		(1u << 4)

/**
 * struct drm_nfence_fence_mapping - where a fence's values are
 *
 * NativeFenceMapping. The CPU view of CurrentValue is
 * mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, @cpu_mmap_offset) +
 * @cpu_value_offset; the mapping cannot be made writable.
 */
struct drm_nfence_fence_mapping {
	/** @cpu_mmap_offset: mmap offset of the page holding CurrentValue, 0 if none */
	__u64 cpu_mmap_offset;
	/** @cpu_value_offset: byte offset of CurrentValue in that page */
	__u32 cpu_value_offset;
	/** @pad: zero */
	__u32 pad;
	/** @current_value_gpu_va: GPU VA of CurrentValue in this file's address space */
	__u64 current_value_gpu_va;
	/** @monitored_value_gpu_va: GPU VA of MonitoredValue (GPU read-only) */
	__u64 monitored_value_gpu_va;
};

/**
 * struct drm_nfence_fence_create - create a native fence (D3DKMTCreateNativeFence)
 *
 * -EOPNOTSUPP on an adapter without native fences; -ENOENT if @device names
 * no device; -EINVAL for an unknown @type, unknown or contradictory @flags
 * (NO_SIGNAL with NO_WAIT, NT_SECURITY_SHARING without SHARED), engine bits
 * the adapter does not have, or non-zero @pad; -ENOSPC past
 * %DRM_NFENCE_MAX_FENCES_PER_FILE fences on the file.
 */
struct drm_nfence_fence_create {
	/** @device: device handle */
	__u32 device;
	/** @type: &enum drm_nfence_fence_type */
	__u32 type;
	/** @flags: DRM_NFENCE_FENCE_* flags */
	__u32 flags;
	/** @engine_affinity: engines that use the fence, bit per ordinal; 0: all */
	__u32 engine_affinity;
	/** @initial_value: InitialFenceValue */
	__u64 initial_value;
	/** @handle: out: local fence handle, never 0 */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @mapping: out: where the values are */
	struct drm_nfence_fence_mapping mapping;
};

/* DRM_NFENCE_MAX_FENCES_PER_FILE: local fence handles one open file may hold */
#define DRM_NFENCE_MAX_FENCES_PER_FILE	8192

/**
 * struct drm_nfence_fence_destroy - close a local fence handle
 *
 * D3DKMTDestroySynchronizationObject. The global fence dies with its last
 * local handle and its last shared fd.
 */
struct drm_nfence_fence_destroy {
	/** @handle: local fence handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_nfence_fence_share - get an NT handle (fd) for a shared fence
 *
 * D3DKMTShareObjects. -EINVAL unless the fence was created with
 * %DRM_NFENCE_FENCE_SHARED and %DRM_NFENCE_FENCE_NT_SECURITY_SHARING.
 */
struct drm_nfence_fence_share {
	/** @handle: local fence handle */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
	/** @fd: out: a new close-on-exec file descriptor for the fence */
	__s32 fd;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_nfence_fence_open - open a shared fence from its fd
 *
 * D3DKMTOpenNativeFenceFromNtHandle. -EBADF if @fd is not open, -EINVAL if
 * it is not an nfence fence fd or belongs to another adapter.
 */
struct drm_nfence_fence_open {
	/** @fd: the fence fd (NT handle) */
	__s32 fd;
	/** @device: device handle the new local handle belongs to */
	__u32 device;
	/** @flags: only %DRM_NFENCE_FENCE_NO_SIGNAL and %DRM_NFENCE_FENCE_NO_WAIT */
	__u32 flags;
	/** @engine_affinity: as in &struct drm_nfence_fence_create */
	__u32 engine_affinity;
	/** @handle: out: new local fence handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @mapping: out: the values, mapped for this file */
	struct drm_nfence_fence_mapping mapping;
};

/* DRM_NFENCE_MAX_WAIT_FENCES: fences one wait or signal call may name */
#define DRM_NFENCE_MAX_WAIT_FENCES	64

/* Wait flags. */
/* DRM_NFENCE_WAIT_ANY: satisfied when any fence reaches its value */
#define DRM_NFENCE_WAIT_ANY		(1u << 0)
/* DRM_NFENCE_WAIT_ASYNC: return at once; signal @eventfd when satisfied */
#define DRM_NFENCE_WAIT_ASYNC		(1u << 1)

/* DRM_NFENCE_TIMEOUT_INFINITE: a wait deadline that never passes */
#define DRM_NFENCE_TIMEOUT_INFINITE	0x7fffffffffffffffll

/**
 * struct drm_nfence_fence_wait - CPU wait (D3DKMTWaitForSynchronizationObjectFromCpu)
 *
 * Waits until every fence (or, with %DRM_NFENCE_WAIT_ANY, one fence) has a
 * CurrentValue at least its value. @timeout_ns is an absolute
 * CLOCK_MONOTONIC deadline: one in the past polls, and
 * %DRM_NFENCE_TIMEOUT_INFINITE never passes. Returns 0 when satisfied,
 * -ETIME at the deadline, -ERESTARTSYS when interrupted (the call restarts
 * with the same deadline). With %DRM_NFENCE_WAIT_ASYNC it returns 0 at once
 * and adds 1 to @eventfd when satisfied; @timeout_ns must then be 0.
 * -EACCES for a handle opened with %DRM_NFENCE_FENCE_NO_WAIT, -EINVAL for an
 * INTRA_GPU fence.
 */
struct drm_nfence_fence_wait {
	/** @device: device handle */
	__u32 device;
	/** @count: fences, 1..%DRM_NFENCE_MAX_WAIT_FENCES */
	__u32 count;
	/** @handles: user pointer to @count __u32 local fence handles */
	__u64 handles;
	/** @values: user pointer to @count __u64 values */
	__u64 values;
	/** @timeout_ns: absolute CLOCK_MONOTONIC deadline */
	__s64 timeout_ns;
	/** @flags: DRM_NFENCE_WAIT_* */
	__u32 flags;
	/** @eventfd: with %DRM_NFENCE_WAIT_ASYNC, the eventfd; else must be 0 */
	__s32 eventfd;
	/** @first_signaled: out: index of a satisfied fence (of the first with WAIT_ANY) */
	__u32 first_signaled;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_nfence_fence_signal - CPU signal (D3DKMTSignalSynchronizationObjectFromCpu)
 *
 * Sets each fence's CurrentValue to its value (never lowering it), wakes
 * the CPU waiters and GPU queues it releases. Every handle is checked before
 * any fence is signaled. -EACCES for a handle opened with
 * %DRM_NFENCE_FENCE_NO_SIGNAL, -EINVAL for an INTRA_GPU fence.
 */
struct drm_nfence_fence_signal {
	/** @device: device handle */
	__u32 device;
	/** @count: fences, 1..%DRM_NFENCE_MAX_WAIT_FENCES */
	__u32 count;
	/** @handles: user pointer to @count __u32 local fence handles */
	__u64 handles;
	/** @values: user pointer to @count __u64 values */
	__u64 values;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NFENCE_DRM_H_ */
