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
#define DRM_NFENCE_ALLOC_CREATE		0x09
#define DRM_NFENCE_ALLOC_DESTROY	0x0a
#define DRM_NFENCE_ALLOC_LOCK		0x0b
#define DRM_NFENCE_CONTEXT_CREATE	0x0c
#define DRM_NFENCE_CONTEXT_DESTROY	0x0d
#define DRM_NFENCE_CONTEXT_CONTROL	0x0e
#define DRM_NFENCE_HWQUEUE_CREATE	0x0f
#define DRM_NFENCE_HWQUEUE_DESTROY	0x10
#define DRM_NFENCE_SUBMIT		0x11
#define DRM_NFENCE_SUBMIT_WAIT		0x12
#define DRM_NFENCE_SUBMIT_SIGNAL	0x13
#define DRM_NFENCE_DOORBELL_CREATE	0x14
#define DRM_NFENCE_DOORBELL_CONNECT	0x15
#define DRM_NFENCE_DOORBELL_DESTROY	0x16
#define DRM_NFENCE_DOORBELL_NOTIFY	0x17
#define DRM_NFENCE_LOG_READ		0x18
#define DRM_NFENCE_LOGGING_LEVEL	0x19
#define DRM_NFENCE_DEVICE_CONTROL	0x1a
#define DRM_NFENCE_SYNCOBJ_BIND		0x1b
#define DRM_NFENCE_SYNCOBJ_SIGNAL	0x1c
#define DRM_NFENCE_FENCE_WINDOW		0x1d

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
#define DRM_IOCTL_NFENCE_ALLOC_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_ALLOC_CREATE, \
		 struct drm_nfence_alloc_create)
#define DRM_IOCTL_NFENCE_ALLOC_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_ALLOC_DESTROY, \
		struct drm_nfence_alloc_destroy)
#define DRM_IOCTL_NFENCE_ALLOC_LOCK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_ALLOC_LOCK, \
		 struct drm_nfence_alloc_lock)
#define DRM_IOCTL_NFENCE_CONTEXT_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_CONTEXT_CREATE, \
		 struct drm_nfence_context_create)
#define DRM_IOCTL_NFENCE_CONTEXT_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_CONTEXT_DESTROY, \
		struct drm_nfence_context_destroy)
#define DRM_IOCTL_NFENCE_CONTEXT_CONTROL \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_CONTEXT_CONTROL, \
		 struct drm_nfence_context_control)
#define DRM_IOCTL_NFENCE_HWQUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_HWQUEUE_CREATE, \
		 struct drm_nfence_hwqueue_create)
#define DRM_IOCTL_NFENCE_HWQUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_HWQUEUE_DESTROY, \
		struct drm_nfence_hwqueue_destroy)
#define DRM_IOCTL_NFENCE_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_SUBMIT, struct drm_nfence_submit)
#define DRM_IOCTL_NFENCE_SUBMIT_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_SUBMIT_WAIT, \
		struct drm_nfence_submit_sync)
#define DRM_IOCTL_NFENCE_SUBMIT_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_SUBMIT_SIGNAL, \
		struct drm_nfence_submit_sync)
#define DRM_IOCTL_NFENCE_DOORBELL_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_DOORBELL_CREATE, \
		 struct drm_nfence_doorbell_create)
#define DRM_IOCTL_NFENCE_DOORBELL_CONNECT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_DOORBELL_CONNECT, \
		 struct drm_nfence_doorbell_connect)
#define DRM_IOCTL_NFENCE_DOORBELL_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_DOORBELL_DESTROY, \
		struct drm_nfence_doorbell_destroy)
#define DRM_IOCTL_NFENCE_DOORBELL_NOTIFY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_DOORBELL_NOTIFY, \
		struct drm_nfence_doorbell_notify)
#define DRM_IOCTL_NFENCE_LOG_READ \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_LOG_READ, \
		 struct drm_nfence_log_read)
#define DRM_IOCTL_NFENCE_LOGGING_LEVEL \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_LOGGING_LEVEL, \
		 struct drm_nfence_logging_level)
#define DRM_IOCTL_NFENCE_DEVICE_CONTROL \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_DEVICE_CONTROL, \
		 struct drm_nfence_device_control)
#define DRM_IOCTL_NFENCE_SYNCOBJ_BIND \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_SYNCOBJ_BIND, \
		struct drm_nfence_syncobj_bind)
#define DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_NFENCE_SYNCOBJ_SIGNAL, \
		struct drm_nfence_syncobj_signal)
#define DRM_IOCTL_NFENCE_FENCE_WINDOW \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NFENCE_FENCE_WINDOW, \
		 struct drm_nfence_fence_window)

/**
 * enum drm_nfence_query_type - what &struct drm_nfence_query returns
 * @DRM_NFENCE_QUERY_ADAPTER: &struct drm_nfence_query_adapter
 * @DRM_NFENCE_QUERY_SEGMENTS: &struct drm_nfence_query_segments
 * @DRM_NFENCE_QUERY_ENGINES: &struct drm_nfence_query_engines
 * @DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS: &struct drm_nfence_query_fence_caps
 * @DRM_NFENCE_QUERY_UMS_CAPS: &struct drm_nfence_query_ums_caps
 * @DRM_NFENCE_QUERY_TIMESTAMP: &struct drm_nfence_query_timestamp
 * @DRM_NFENCE_QUERY_SEGMENT_USAGE: &struct drm_nfence_query_segment_usage
 * @DRM_NFENCE_QUERY_COUNT: number of query types, not a valid type
 */
enum drm_nfence_query_type {
	DRM_NFENCE_QUERY_ADAPTER = 0,
	DRM_NFENCE_QUERY_SEGMENTS = 1,
	DRM_NFENCE_QUERY_ENGINES = 2,
	DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS = 3,
	DRM_NFENCE_QUERY_UMS_CAPS = 4,
	DRM_NFENCE_QUERY_TIMESTAMP = 5,
	DRM_NFENCE_QUERY_SEGMENT_USAGE = 6,
	DRM_NFENCE_QUERY_COUNT,
};

/**
 * struct drm_nfence_query - query adapter information
 *
 * With @size = 0 the kernel only writes the number of bytes the answer
 * needs into @size. With @size smaller than that it fails with -EINVAL and
 * writes nothing. With @size at least that large it writes the answer at
 * @data and sets @size to the number of bytes written.
 *
 * Errors: -EINVAL for an unknown @type, non-zero @flags, @pad or
 * @reserved, or too small a @size; -EFAULT if the answer cannot be
 * written at @data; -ENOMEM; -ENODEV once the adapter is unplugged.
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
 * @DRM_NFENCE_ENGINE_CLASS_COMPUTE: compute (the DXGK_ENGINE_TYPE values
 *	nfence follows have none for compute: libnfence reports OTHER)
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
/*
 * DRM_NFENCE_FENCE_CAP_OPTIMIZED_INTERRUPT: OptimizedNativeFenceSignaled-
 * Interrupt: the GPU's native fence signaled interrupt names the hardware
 * queue whose signal log says what was signaled (see "native fence log
 * buffers")
 */
#define DRM_NFENCE_FENCE_CAP_OPTIMIZED_INTERRUPT	(1u << 4)
/*
 * DRM_NFENCE_FENCE_CAP_PEER_SIGNALS: the GPU passes its signals of a
 * cross-adapter fence to the other GPUs with this capability itself,
 * without the CPU (the seed's future GPU-to-GPU signal, the driver's DOC
 * "peer signals"); an instance of such a fence on this adapter has a real
 * MonitoredValue instead of 0
 */
#define DRM_NFENCE_FENCE_CAP_PEER_SIGNALS	(1u << 5)

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
	/**
	 * @max_log_entries: largest NativeFenceLogBufferNumberOfEntries (a
	 * queue's, at %DRM_NFENCE_LOGGING_LEVEL_ALL)
	 */
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
 * struct drm_nfence_segment_usage - what the calling file holds of a segment
 *
 * One entry per segment, in the order and with the ids of
 * &struct drm_nfence_query_segments.
 */
struct drm_nfence_segment_usage {
	/** @id: segment id, as &drm_nfence_segment_info.id */
	__u32 id;
	/** @pad: zero */
	__u32 pad;
	/**
	 * @budget: bytes the calling file may hold of the segment: its
	 * per-client quota (module parameters client_vram_mb and
	 * client_sysmem_mb) when that is set and smaller than the segment,
	 * the segment's size otherwise. Fixed while the module is loaded.
	 */
	__u64 budget;
	/**
	 * @usage: bytes of the segment charged to the calling file now: its
	 * allocations (page-aligned sizes), including those destroyed while
	 * a CPU mapping still holds them, and, in the local segment, the
	 * fence values placed there for the fences it created or opened.
	 * Another file's, of the same process or not, never count. At most
	 * @budget, except for the moment an allocation past the quota takes
	 * to be refused.
	 */
	__u64 usage;
};

/**
 * struct drm_nfence_query_segment_usage - DRM_NFENCE_QUERY_SEGMENT_USAGE
 *
 * The calling file's budget and usage of every segment, as the kernel
 * counts them to enforce the per-client quotas. The only query whose
 * answer depends on the file that asks.
 */
struct drm_nfence_query_segment_usage {
	/** @num_segments: number of entries in @segments */
	__u32 num_segments;
	/** @pad: zero */
	__u32 pad;
	/** @segments: the segments */
	struct drm_nfence_segment_usage segments[];
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
 * of this file, -EINVAL for a non-zero @pad.
 */
struct drm_nfence_device_destroy {
	/** @handle: the device handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * enum drm_nfence_device_op - what &struct drm_nfence_device_control does
 * @DRM_NFENCE_DEVICE_OP_QUERY: only report the device's state
 *	(D3DKMTGetDeviceState)
 * @DRM_NFENCE_DEVICE_OP_MARK_ERROR: put the device in error
 *	(D3DKMTMarkDeviceAsError), then report its state
 */
enum drm_nfence_device_op {
	DRM_NFENCE_DEVICE_OP_QUERY = 0,
	DRM_NFENCE_DEVICE_OP_MARK_ERROR = 1,
};

/**
 * enum drm_nfence_device_error - why a device is in error
 * @DRM_NFENCE_DEVICE_ERROR_NONE: it is not
 * @DRM_NFENCE_DEVICE_ERROR_HANG: one of its queues hung (TDR)
 * @DRM_NFENCE_DEVICE_ERROR_MARKED: %DRM_NFENCE_DEVICE_OP_MARK_ERROR
 * @DRM_NFENCE_DEVICE_ERROR_LOST: another device-lost event: the debugfs
 *	hook nfence_device_error (the abnormal end of the device's process
 *	and the adapter's unplug are too, but no ioctl can see those)
 */
enum drm_nfence_device_error {
	DRM_NFENCE_DEVICE_ERROR_NONE = 0,
	DRM_NFENCE_DEVICE_ERROR_HANG = 1,
	DRM_NFENCE_DEVICE_ERROR_MARKED = 2,
	DRM_NFENCE_DEVICE_ERROR_LOST = 3,
};

/**
 * struct drm_nfence_device_control - query a device's state, or put it in
 * error
 *
 * %DRM_NFENCE_DEVICE_OP_MARK_ERROR puts the device in error through the
 * same path as a hang (see DOC: contexts and hardware queues): the fences
 * it created become AlwaysSignaled for every holder, its queues stop and
 * drop their work, its doorbells are disconnected for good, later context,
 * queue and doorbell creations and submissions on it fail with -EIO, and a
 * fence it creates afterwards is born AlwaysSignaled (fence opens and
 * allocations still succeed). Marking a device in
 * error again succeeds and changes nothing: @error keeps the first cause.
 *
 * Both operations report the device's state: why it is in error, and the
 * first GPU fault of any of its contexts (a fault stops only its context,
 * so a device may have faulted without being in error).
 *
 * -ENOENT for an unknown @device, -EINVAL for an unknown @op or non-zero
 * @flags, -ENODEV after unplug.
 */
struct drm_nfence_device_control {
	/** @device: device handle */
	__u32 device;
	/** @op: &enum drm_nfence_device_op */
	__u32 op;
	/** @flags: must be zero */
	__u32 flags;
	/** @error: out: &enum drm_nfence_device_error, the first cause */
	__u32 error;
	/**
	 * @fault_va: out: GPU VA of the first fault of a context of the
	 * device (as &drm_nfence_context_control.fault_va); 0 if none
	 */
	__u64 fault_va;
	/**
	 * @fault_reason: out: &enum drm_nfence_fault_reason of that fault,
	 * %DRM_NFENCE_FAULT_NONE if none
	 */
	__u32 fault_reason;
	/** @fault_context: out: handle of the context that faulted, 0 if none */
	__u32 fault_context;
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
 * A CPU signal never lowers CurrentValue: a value at or below it leaves it
 * unchanged and succeeds. A GPU FENCE_SIGNAL stores its value as given (a
 * lower one lowers it), except into an AlwaysSignaled fence.
 */

/**
 * enum drm_nfence_fence_type - D3DDDI_NATIVEFENCE_TYPE
 * @DRM_NFENCE_FENCE_TYPE_DEFAULT: CurrentValue in system memory, CPU-visible;
 *	MonitoredValue in system memory, or in VRAM on adapters with
 *	%DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT (moved back to system memory
 *	when VRAM is short)
 * @DRM_NFENCE_FENCE_TYPE_INTRA_GPU: both values in VRAM the CPU cannot see
 *	(in system memory only the GPU maps when VRAM is short); no CPU
 *	mapping, no CPU wait, no CPU signal
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
/* DRM_NFENCE_FENCE_CROSS_ADAPTER: CrossAdapter: openable on every adapter; needs SHARED, DEFAULT */
#define DRM_NFENCE_FENCE_CROSS_ADAPTER		(1u << 2)
/*
 * DRM_NFENCE_FENCE_NO_SIGNAL: this handle never signals (NoSignal): a CPU
 * signal is -EACCES, and its CurrentValue GPU VA is a read-only mapping of
 * its own, where a GPU write (FENCE_SIGNAL, WRITE64) faults the context
 */
#define DRM_NFENCE_FENCE_NO_SIGNAL		(1u << 3)
/* DRM_NFENCE_FENCE_NO_WAIT: this handle never waits (NoWait) */
#define DRM_NFENCE_FENCE_NO_WAIT		(1u << 4)
/*
 * DRM_NFENCE_FENCE_MONITORED: a WDDM 2.x monitored fence
 * (D3DDDI_MONITORED_FENCE), not a native one: see DOC: monitored fences.
 * Needs %DRM_NFENCE_FENCE_TYPE_DEFAULT; any adapter.
 */
#define DRM_NFENCE_FENCE_MONITORED		(1u << 5)

/**
 * DOC: monitored fences
 *
 * A monitored fence (WDDM 2.x "context monitoring") is a 64-bit CurrentValue
 * that the CPU reads through a read-only mapping and GPU engines write
 * through a GPU VA, as a native fence's, with no MonitoredValue: the
 * mapping's @monitored_value_gpu_va is 0, every GPU FENCE_SIGNAL (or
 * WRITE64) of it raises the monitored fence signaled interrupt, after which
 * the kernel checks its waiters, and a GPU wait on it is resolved by the
 * kernel (%DRM_IOCTL_NFENCE_SUBMIT_WAIT), not by the CMP. The progress
 * fence of a queue without NativeProgressFence is one.
 * %DRM_IOCTL_NFENCE_FENCE_CREATE makes one with %DRM_NFENCE_FENCE_MONITORED
 * on any adapter, with or without native fences; sharing, opening, CPU
 * waits and signals, FENCE_DESTROY and the device error rules are a
 * native fence's. A GPU FENCE_WAIT command on its CurrentValue waits as
 * on any other memory word.
 *
 * A cross-adapter fence (%DRM_NFENCE_FENCE_CROSS_ADAPTER) is a native
 * fence on the adapters that have native fences and a monitored fence on
 * the others, whichever it was created as: created native on an adapter
 * with native fences, it opens on an adapter without them as a monitored
 * fence; created monitored, it opens on an adapter with native fences as
 * a native fence (with a MonitoredValue of its own). Every instance shares
 * CurrentValue, and a signal on any adapter reaches the waiters of all of
 * them (see &struct drm_nfence_fence_open).
 */

/**
 * struct drm_nfence_fence_mapping - where a fence's values are
 *
 * NativeFenceMapping. The CPU view of CurrentValue is
 * mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, @cpu_mmap_offset) +
 * @cpu_value_offset; the mapping cannot be made writable. In a file with
 * a CPU window (&struct drm_nfence_fence_window), @cpu_mmap_offset may be
 * the offset of a page of the window instead: read it through the
 * window's own mapping, as &struct drm_nfence_fence_window says, not
 * through a mmap() of that one page.
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

/*
 * DRM_NFENCE_FENCE_AFFINITY_ALL: every physical adapter of an nfence adapter
 * (it has one) in &drm_nfence_fence_create.engine_affinity
 */
#define DRM_NFENCE_FENCE_AFFINITY_ALL	(1u << 0)

/**
 * struct drm_nfence_fence_create - create a native fence (D3DKMTCreateNativeFence)
 * or, with %DRM_NFENCE_FENCE_MONITORED, a monitored fence
 * (D3DKMTCreateSynchronizationObject2)
 *
 * -EOPNOTSUPP for a native fence on an adapter without native fences;
 * -ENOENT if @device names
 * no device; -EINVAL for an unknown @type, unknown or contradictory @flags
 * (NO_SIGNAL with NO_WAIT, NT_SECURITY_SHARING without SHARED,
 * CROSS_ADAPTER without SHARED or with INTRA_GPU, MONITORED with
 * INTRA_GPU), an @engine_affinity
 * other than 0 or %DRM_NFENCE_FENCE_AFFINITY_ALL, or non-zero @pad;
 * -ENOSPC when the file holds as many local fence handles as its adapter's
 * module parameter client_fences allows (by default no number but memory
 * limits them; never fewer than %DRM_NFENCE_MAX_FENCES_PER_FILE), and
 * -ENOMEM when memory, charged to the caller's memory cgroup, runs out.
 * Values placed in
 * VRAM count against the file's VRAM quota (module parameter
 * client_vram_mb) until they are freed; a value that finds no room in
 * VRAM or in that quota is placed in system memory instead (an INTRA_GPU
 * fence's CurrentValue in a page that only the GPU maps), and the fence
 * works the same.
 */
struct drm_nfence_fence_create {
	/** @device: device handle */
	__u32 device;
	/** @type: &enum drm_nfence_fence_type */
	__u32 type;
	/** @flags: DRM_NFENCE_FENCE_* flags */
	__u32 flags;
	/**
	 * @engine_affinity: EngineAffinity: the physical adapters where the
	 * fence's GPU VAs are mapped, a bit per physical adapter of a linked
	 * adapter; 0 for all. An nfence adapter is one physical adapter: 0 or
	 * %DRM_NFENCE_FENCE_AFFINITY_ALL. Not an engine mask: engines belong
	 * to contexts.
	 */
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

/*
 * DRM_NFENCE_MAX_FENCES_PER_FILE: local fence handles one open file can
 * always hold. The limit itself is the adapter's module parameter
 * client_fences: no number by default, and never below this one.
 */
#define DRM_NFENCE_MAX_FENCES_PER_FILE	8192

/*
 * DRM_NFENCE_MAX_FENCE_INSTANCES: instances a cross-adapter fence may have
 * at once, its creator's included: each %DRM_IOCTL_NFENCE_FENCE_OPEN of it
 * on another adapter makes one, and each signal is passed on to every one.
 */
#define DRM_NFENCE_MAX_FENCE_INSTANCES	256

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
 * D3DKMTOpenNativeFenceFromNtHandle and D3DKMTOpenSyncObjectFromNtHandle2.
 * -EBADF if @fd is not open, -EINVAL if it is not an nfence fence fd or
 * belongs to another adapter and was not created with
 * %DRM_NFENCE_FENCE_CROSS_ADAPTER, -ENOSPC at the file's limit of local
 * fence handles (as for %DRM_IOCTL_NFENCE_FENCE_CREATE) or, opening on
 * another adapter, when the fence has %DRM_NFENCE_MAX_FENCE_INSTANCES
 * instances, -ENOMEM. Nothing is created when it fails.
 *
 * A cross-adapter fence opened on another adapter gets an instance there
 * that shares the CurrentValue page. On an adapter with native fences the
 * instance is a native fence, whose MonitoredValue is 0 for good, so that
 * every signal raises the native fence signaled interrupt (between two
 * adapters with %DRM_NFENCE_FENCE_CAP_PEER_SIGNALS the GPUs tell each
 * other instead, and MonitoredValue is that of an ordinary fence: the
 * driver's DOC "peer signals"); on an adapter
 * without them (%DRM_NFENCE_ADAPTER_NATIVE_FENCE clear) it is a monitored
 * fence (DOC: monitored fences; @mapping.monitored_value_gpu_va is 0),
 * every signal of which raises the monitored fence signaled interrupt.
 * Either way the driver passes each signal on to the other adapters' CPU
 * waiters and GPU queues (WDDM's NotificationOnly update), so a native
 * fence of one adapter and a monitored fence of another wait and signal
 * on one value. Opened on its own adapter, a fence is what it was created
 * as.
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

/* DRM_NFENCE_FENCE_WINDOW_MAX_PAGES: the largest CPU window, 1 GiB */
#define DRM_NFENCE_FENCE_WINDOW_MAX_PAGES	(1u << 18)

/**
 * struct drm_nfence_fence_window - give the file one CPU window onto the
 * CurrentValues of the shared fences it holds
 *
 * Without a window, each shared fence's CurrentValue is a page of its own
 * with an mmap offset of its own, and a process that reads a thousand
 * shared fences maps a thousand pages, each a VMA. After this call, every
 * later %DRM_IOCTL_NFENCE_FENCE_CREATE of a shared fence and every
 * %DRM_IOCTL_NFENCE_FENCE_OPEN on the file returns, in
 * &drm_nfence_fence_mapping.cpu_mmap_offset, the offset of a page of the
 * window (@mmap_offset plus a multiple of 4096) while the window has a
 * free page, and the page's own offset, as before, when it is full. So
 * one mapping of the window,
 * mmap(NULL, @pages * 4096, PROT_READ, MAP_SHARED, fd, @mmap_offset),
 * shows them all: a fence's CurrentValue is at the mapping's address plus
 * (cpu_mmap_offset - @mmap_offset) plus
 * &drm_nfence_fence_mapping.cpu_value_offset. A page of the window shows
 * its fence's CurrentValue page from the call that returned it until that
 * handle is destroyed (or the file closed); then it shows nothing (a
 * read faults, SIGBUS) until a later handle is given the page. The
 * window is mapped read-only (-EPERM for PROT_WRITE, and mprotect()
 * cannot add it), from its first page, and no larger than @pages. The
 * pages of non-shared fences (pools of 64 CurrentValues) keep offsets of
 * their own.
 *
 * A window reserves its size in the DRM device's mmap offset space, which
 * the adapter's files share: the windows of an adapter together may take
 * a quarter of it (2^26 pages on 64-bit kernels). Windows only save
 * kernel memory: a file refused one gets the pages' own offsets, and
 * works the same.
 *
 * -EINVAL for non-zero @flags, or @pages 0 or above
 * %DRM_NFENCE_FENCE_WINDOW_MAX_PAGES; -EEXIST if the file has a window
 * already (a file has one for its life); -ENOSPC when the adapter's
 * windows would pass their share of the offset space; -ENODEV after an
 * unplug; -ENOMEM. Nothing is created when it fails.
 */
struct drm_nfence_fence_window {
	/** @pages: the window's size in pages of 4096 bytes */
	__u32 pages;
	/** @flags: must be zero */
	__u32 flags;
	/** @mmap_offset: out: mmap offset of the window's first page */
	__u64 mmap_offset;
};

/* DRM_NFENCE_MAX_WAIT_FENCES: fences one wait or signal call may name */
#define DRM_NFENCE_MAX_WAIT_FENCES	64

/* Wait flags. */
/* DRM_NFENCE_WAIT_ANY: satisfied when any fence reaches its value */
#define DRM_NFENCE_WAIT_ANY		(1u << 0)
/* DRM_NFENCE_WAIT_ASYNC: return at once; signal @eventfd when satisfied */
#define DRM_NFENCE_WAIT_ASYNC		(1u << 1)

/* DRM_NFENCE_MAX_ASYNC_WAITS: pending asynchronous waits one open file may have */
#define DRM_NFENCE_MAX_ASYNC_WAITS	4096

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
 * INTRA_GPU fence or, on an adapter with
 * %DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS, a value more than UINT_MAX/2 above
 * the fence's CurrentValue; -ENOENT for an unknown device or fence handle,
 * and for a wait released because its fence lost its last handle and fd
 * (nobody can signal it any more; those of a cross-adapter fence on every
 * adapter). With %DRM_NFENCE_WAIT_ASYNC: -EBADF if @eventfd
 * is not an open file descriptor, -EINVAL if it is not an eventfd, -ENOSPC
 * if the file already has %DRM_NFENCE_MAX_ASYNC_WAITS asynchronous waits
 * pending (a wait stops being pending when it completes, before its
 * eventfd is signaled: whoever the eventfd wakes may wait again at once).
 * -ENODEV once the adapter is unplugged: a blocked wait returns
 * it when the unplug happens, and an asynchronous wait then adds 1 to its
 * @eventfd, so the eventfd says the wait ended, not that it was satisfied
 * (the same for an asynchronous wait whose fence loses its last handle
 * and fd, even during the call). A fence named more than once is waited
 * for once: up to its highest value, or, with %DRM_NFENCE_WAIT_ANY, its
 * lowest.
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
 * %DRM_NFENCE_FENCE_NO_SIGNAL, -EINVAL for an INTRA_GPU fence or a value
 * outside the 32-bit window (see &struct drm_nfence_fence_wait).
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

/**
 * DOC: allocations
 *
 * An allocation is memory of one segment mapped at a GPU VA in the file's
 * GPU address space (D3DKMTCreateAllocation2 with the VA of
 * D3DKMTMapGpuVirtualAddress returned at once). The simulated engines reach
 * it only through that VA. An allocation made with
 * %DRM_NFENCE_ALLOC_CPU_VISIBLE can be mapped by the CPU: D3DKMTLock2 is
 * &struct drm_nfence_alloc_lock followed by mmap() of the returned offset
 * (read/write, shared with the GPU), D3DKMTUnlock2 is munmap().
 *
 * A VRAM request that finds no room first has the fence values kept in
 * VRAM moved to system memory (the fences keep working, at the same GPU
 * VAs) and tries again. Made with %DRM_NFENCE_ALLOC_ALLOW_DEMOTE it then
 * lands in system memory when VRAM (or its CPU-visible part) is full;
 * @placed_segment_id says where it went. Without that flag a full segment
 * fails with -ENOSPC.
 * An open file's allocations, with the fence values placed in VRAM for
 * its fences, may hold at most the adapter's per-client
 * quota of each segment (module parameters client_vram_mb and
 * client_sysmem_mb; no limit by default): past it a request fails, or is
 * demoted, exactly as if the segment were full. Memory counts until it is
 * freed, so a destroyed allocation that a CPU mapping keeps alive counts
 * until munmap. Destroying an allocation unmaps its GPU VA at once: later GPU accesses to
 * it are GPU page faults. CPU mappings keep the memory alive until munmap.
 *
 * What a CPU mapping allows depends on where the memory is
 * (@placed_segment_id), as with the system memory and the VRAM BAR of a
 * real GPU:
 *
 * - System memory: ordinary pages. Loads, stores, read() and write() into
 *   the mapping, and I/O that pins pages (O_DIRECT, vmsplice(), io_uring
 *   fixed buffers, RDMA registration) all work. Pinned pages stay valid
 *   after munmap and destroy and are never another allocation's memory
 *   while pinned.
 * - VRAM: device memory (VM_IO | VM_PFNMAP). Loads, stores, read() and
 *   write() into the mapping work, and so do ptrace() and /proc/PID/mem;
 *   anything that pins pages fails with EFAULT (vmsplice(), io_uring
 *   buffer registration, O_DIRECT from or to the mapping,
 *   process_vm_readv()), because a freed VRAM range is handed to the next
 *   allocation at once.
 */

/* Allocation flags. */
/* DRM_NFENCE_ALLOC_CPU_VISIBLE: the CPU may map it (Lock2) */
#define DRM_NFENCE_ALLOC_CPU_VISIBLE	(1u << 0)
/* DRM_NFENCE_ALLOC_ALLOW_DEMOTE: a VRAM request may fall back to system memory */
#define DRM_NFENCE_ALLOC_ALLOW_DEMOTE	(1u << 1)

/* DRM_NFENCE_MAX_ALLOC_SIZE: largest allocation, in bytes */
#define DRM_NFENCE_MAX_ALLOC_SIZE	(256ull << 20)
/* DRM_NFENCE_MAX_ALLOCS_PER_FILE: live allocations one open file may hold */
#define DRM_NFENCE_MAX_ALLOCS_PER_FILE	4096

/**
 * struct drm_nfence_alloc_create - create an allocation
 *
 * -ENOENT for an unknown @device; -EINVAL for a @size of 0 or above
 * %DRM_NFENCE_MAX_ALLOC_SIZE, a @segment_id that is not 1 (system) or 2
 * (local), unknown @flags, ALLOW_DEMOTE on a system request, CPU_VISIBLE on
 * a local request of an adapter without CPU-visible VRAM (system memory is
 * always CPU-visible), or non-zero @pad; -ENOSPC when the
 * segment (and, with ALLOW_DEMOTE, system memory) is full or the file's
 * quota of it used up, or past %DRM_NFENCE_MAX_ALLOCS_PER_FILE allocations.
 */
struct drm_nfence_alloc_create {
	/** @device: device handle */
	__u32 device;
	/** @flags: DRM_NFENCE_ALLOC_* */
	__u32 flags;
	/** @size: bytes, rounded up to whole pages */
	__u64 size;
	/** @segment_id: requested segment: 1 system memory, 2 VRAM */
	__u32 segment_id;
	/** @handle: out: allocation handle, never 0 */
	__u32 handle;
	/** @gpu_va: out: GPU VA of the first byte, page aligned */
	__u64 gpu_va;
	/** @placed_segment_id: out: the segment the memory came from */
	__u32 placed_segment_id;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_nfence_alloc_destroy - destroy an allocation
 *
 * D3DKMTDestroyAllocation2. -ENOENT for an unknown @device or @handle,
 * -EBUSY while the allocation is a doorbell's ring buffer or control.
 */
struct drm_nfence_alloc_destroy {
	/** @device: device handle */
	__u32 device;
	/** @handle: allocation handle */
	__u32 handle;
};

/**
 * struct drm_nfence_alloc_lock - get the CPU mapping offset (D3DKMTLock2)
 *
 * -ENOENT for an unknown @device or @handle, -EINVAL for non-zero @flags or
 * @pad or an allocation made without %DRM_NFENCE_ALLOC_CPU_VISIBLE. The
 * mapping is MAP_SHARED: mmap() with MAP_PRIVATE fails with EINVAL,
 * whatever the protection and the file's mode; on a file opened
 * read-only the shared mapping is read-only.
 */
struct drm_nfence_alloc_lock {
	/** @device: device handle */
	__u32 device;
	/** @handle: allocation handle */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
	/** @mmap_offset: out: offset to mmap() on the DRM fd */
	__u64 mmap_offset;
	/** @size: out: bytes to map (the page-rounded size) */
	__u64 size;
};

/**
 * DOC: contexts and hardware queues
 *
 * A context (D3DKMTCreateContextVirtual) runs on one engine of the adapter;
 * its hardware queues (D3DKMTCreateHwQueue) are what the CMP schedules.
 * Every queue has a progress fence, returned as a local fence handle of the
 * queue's device with its mapping: a native fence when
 * %DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE is set (the adapter must have
 * native fences), otherwise a WDDM 2.x monitored fence: CurrentValue as a
 * native fence has it (CPU-readable, GPU-writable), no MonitoredValue
 * (&drm_nfence_fence_mapping.monitored_value_gpu_va is 0), and every GPU
 * signal of it raises the monitored fence signaled interrupt, after which
 * the kernel checks its waiters. After each kernel-mode submission
 * completes, the CMP signals the progress fence with the submission's
 * @progress_fence_value. The progress fence handle is
 * closed with the queue; %DRM_IOCTL_NFENCE_FENCE_DESTROY on it fails with
 * -EBUSY.
 *
 * A GPU page fault or an invalid command puts the context in error: its
 * queues drop their pending work, their progress fences become
 * AlwaysSignaled, and further submissions to them fail with -EIO. A queue
 * that runs one command for longer than the adapter's TDR timeout (module
 * parameter tdr_timeout_ms) puts its whole device in error (device lost):
 * every fence of the device becomes AlwaysSignaled, every queue of the
 * device stops, and submissions fail with -EIO; other devices keep running.
 *
 * Suspending a context (test hook for the OS-initiated suspend) stops the
 * CMP from scheduling its queues at the next command boundary; submissions
 * are still accepted. Resuming lets them run again.
 */

/**
 * struct drm_nfence_context_create - create a context on an engine
 *
 * -ENOENT for an unknown @device, -EINVAL for an @engine the adapter does
 * not have or non-zero @flags, -ENOSPC past %DRM_NFENCE_MAX_CONTEXTS_PER_FILE,
 * -EIO when the device is in error.
 */
struct drm_nfence_context_create {
	/** @device: device handle */
	__u32 device;
	/** @engine: engine ordinal (NodeOrdinal) */
	__u32 engine;
	/** @flags: must be zero */
	__u32 flags;
	/** @handle: out: context handle, never 0 */
	__u32 handle;
};

/* DRM_NFENCE_MAX_CONTEXTS_PER_FILE: live contexts one open file may hold */
#define DRM_NFENCE_MAX_CONTEXTS_PER_FILE	256

/**
 * struct drm_nfence_context_destroy - destroy a context and its queues
 *
 * D3DKMTDestroyContext. Work still queued is dropped. -ENOENT for an
 * unknown @device or @handle.
 */
struct drm_nfence_context_destroy {
	/** @device: device handle */
	__u32 device;
	/** @handle: context handle */
	__u32 handle;
};

/**
 * enum drm_nfence_context_op - what &struct drm_nfence_context_control does
 * @DRM_NFENCE_CONTEXT_OP_QUERY: only report @state and @fault_va
 * @DRM_NFENCE_CONTEXT_OP_SUSPEND: stop scheduling the context's queues
 * @DRM_NFENCE_CONTEXT_OP_RESUME: schedule them again
 * @DRM_NFENCE_CONTEXT_OP_SET_PRIORITY: set the context's scheduling
 *	priority to &drm_nfence_context_control.priority
 * @DRM_NFENCE_CONTEXT_OP_GET_PRIORITY: report it in
 *	&drm_nfence_context_control.priority
 */
enum drm_nfence_context_op {
	DRM_NFENCE_CONTEXT_OP_QUERY = 0,
	DRM_NFENCE_CONTEXT_OP_SUSPEND = 1,
	DRM_NFENCE_CONTEXT_OP_RESUME = 2,
	DRM_NFENCE_CONTEXT_OP_SET_PRIORITY = 3,
	DRM_NFENCE_CONTEXT_OP_GET_PRIORITY = 4,
};

/* The lowest scheduling priority of a context (D3DKMT's idle priority). */
#define DRM_NFENCE_CONTEXT_PRIORITY_MIN		(-7)
/* The highest scheduling priority of a context; a new context has 0. */
#define DRM_NFENCE_CONTEXT_PRIORITY_MAX		7

/* Context state bits reported by DRM_IOCTL_NFENCE_CONTEXT_CONTROL. */
/* DRM_NFENCE_CONTEXT_STATE_SUSPENDED: suspended */
#define DRM_NFENCE_CONTEXT_STATE_SUSPENDED	(1u << 0)
/* DRM_NFENCE_CONTEXT_STATE_FAULTED: a GPU page fault or invalid command */
#define DRM_NFENCE_CONTEXT_STATE_FAULTED	(1u << 1)
/* DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST: its device is in error */
#define DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST	(1u << 2)

/**
 * struct drm_nfence_context_control - suspend, resume or query a context,
 * or set or get its scheduling priority
 *
 * The scheduling priority (D3DKMTSetContextSchedulingPriority) weighs the
 * turns the CMP gives the context's queues against the other queues of
 * their engine (see DOC: context management processor): 0, a new
 * context's, is the normal share; each step above 0 gives the queue one
 * more turn in a row, each step below 0 has it yield its turn to one more
 * turn of the others (7 and -7 are eight turns to one against 0). No
 * priority starves a queue.
 *
 * -ENOENT for an unknown @device or @context, -EINVAL for an unknown @op,
 * a non-zero @priority with another op than
 * %DRM_NFENCE_CONTEXT_OP_SET_PRIORITY, or a priority outside
 * %DRM_NFENCE_CONTEXT_PRIORITY_MIN..%DRM_NFENCE_CONTEXT_PRIORITY_MAX; on
 * an error nothing is written. Suspending a suspended context and
 * resuming a running one succeed and change nothing. Every op reports
 * @state and the first fault.
 */
struct drm_nfence_context_control {
	/** @device: device handle */
	__u32 device;
	/** @context: context handle */
	__u32 context;
	/** @op: &enum drm_nfence_context_op */
	__u32 op;
	/** @state: out: DRM_NFENCE_CONTEXT_STATE_* after the operation */
	__u32 state;
	/**
	 * @fault_va: out: the first fault's GPU VA: the operand for a page
	 * fault or a misaligned operand, the command's address for an invalid
	 * command; 0 if none
	 */
	__u64 fault_va;
	/** @fault_reason: out: &enum drm_nfence_fault_reason of the first fault */
	__u32 fault_reason;
	/**
	 * @priority: in: %DRM_NFENCE_CONTEXT_OP_SET_PRIORITY's new scheduling
	 * priority, zero for every other op; out:
	 * %DRM_NFENCE_CONTEXT_OP_GET_PRIORITY's answer (the other ops leave
	 * it as it was)
	 */
	__s32 priority;
};

/**
 * enum drm_nfence_fault_reason - why a context faulted
 * @DRM_NFENCE_FAULT_NONE: no fault
 * @DRM_NFENCE_FAULT_PAGE: a GPU VA with no (or a read-only) mapping
 * @DRM_NFENCE_FAULT_MISALIGNED: a GPU VA not 8-byte aligned
 * @DRM_NFENCE_FAULT_BAD_COMMAND: unknown opcode, bad length or non-zero
 *	reserved bits in a command
 * @DRM_NFENCE_FAULT_BAD_RING: a user-mode queue's doorbell named a write
 *	index behind the last one or more than the ring's entries ahead of
 *	the read index, or a ring entry is malformed
 */
enum drm_nfence_fault_reason {
	DRM_NFENCE_FAULT_NONE = 0,
	DRM_NFENCE_FAULT_PAGE = 1,
	DRM_NFENCE_FAULT_MISALIGNED = 2,
	DRM_NFENCE_FAULT_BAD_COMMAND = 3,
	DRM_NFENCE_FAULT_BAD_RING = 4,
};

/* Hardware queue flags: D3DDDI_CREATEHWQUEUEFLAGS. */
/* DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT: never TDR this queue */
#define DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT	(1u << 0)
/* DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL: accepted, no meaning on one adapter */
#define DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL	(1u << 1)
/* DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT: accepted, no meaning on one adapter */
#define DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT	(1u << 2)
/* DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS: accepted, no meaning here */
#define DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS	(1u << 3)
/* DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION: fed by a doorbell, not by SUBMIT */
#define DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION	(1u << 4)
/* DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE: the progress fence is a native fence */
#define DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE	(1u << 5)

/* DRM_NFENCE_MAX_HWQUEUES_PER_FILE: live hardware queues one open file may hold */
#define DRM_NFENCE_MAX_HWQUEUES_PER_FILE	1024

/**
 * struct drm_nfence_hwqueue_create - create a hardware queue (D3DKMTCreateHwQueue)
 *
 * -ENOENT for an unknown @device or @context, -EINVAL for unknown @flags
 * or non-zero @pad, -EOPNOTSUPP for USER_MODE_SUBMISSION on an engine
 * without %DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION and for
 * NATIVE_PROGRESS_FENCE on an adapter without native fences, -EPERM for
 * DISABLE_GPU_TIMEOUT without CAP_SYS_NICE (a queue the hang detection
 * never stops can keep its engine from every other client, so it is
 * privileged, as high-priority contexts are in other DRM drivers),
 * -ENOSPC past %DRM_NFENCE_MAX_HWQUEUES_PER_FILE or when the file is at
 * its limit of local fence handles (the queue's progress fence is one),
 * -EIO when the context or device is in error.
 */
struct drm_nfence_hwqueue_create {
	/** @device: device handle */
	__u32 device;
	/** @context: context handle (hHwContext) */
	__u32 context;
	/** @flags: DRM_NFENCE_HWQUEUE_* */
	__u32 flags;
	/** @handle: out: queue handle, never 0 */
	__u32 handle;
	/** @progress_fence: out: local fence handle of the progress fence */
	__u32 progress_fence;
	/** @pad: must be zero */
	__u32 pad;
	/** @progress_fence_mapping: out: where the progress fence's values are */
	struct drm_nfence_fence_mapping progress_fence_mapping;
	/**
	 * @wait_log_gpu_va: out: GPU VA of the queue's native fence wait log
	 * buffer (NativeFenceWaitLogBufferGpuVa), read-only to the GPU's
	 * commands; 0 on an adapter without native fences
	 */
	__u64 wait_log_gpu_va;
	/**
	 * @signal_log_gpu_va: out: GPU VA of its signal log buffer
	 * (NativeFenceSignalLogBufferGpuVa); 0 as @wait_log_gpu_va
	 */
	__u64 signal_log_gpu_va;
	/**
	 * @log_entries: out: entries in each log buffer
	 * (NativeFenceLogBufferNumberOfEntries); 0 without log buffers
	 */
	__u32 log_entries;
	/** @pad2: must be zero */
	__u32 pad2;
};

/**
 * struct drm_nfence_hwqueue_destroy - destroy a hardware queue
 *
 * D3DKMTDestroyHwQueue. Work still queued is dropped, and the progress
 * fence handle is closed. -ENOENT for an unknown @device or @handle.
 */
struct drm_nfence_hwqueue_destroy {
	/** @device: device handle */
	__u32 device;
	/** @handle: queue handle */
	__u32 handle;
};

/* DRM_NFENCE_MAX_SUBMIT_SIZE: largest command buffer, in bytes */
#define DRM_NFENCE_MAX_SUBMIT_SIZE	(1u << 20)
/* DRM_NFENCE_MAX_QUEUED: submissions one queue holds before submit blocks */
#define DRM_NFENCE_MAX_QUEUED		256

/**
 * struct drm_nfence_submit - kernel-mode submission (D3DKMTSubmitCommandToHwQueue)
 *
 * Queues the command buffer at @commands_gpu_va (in the file's GPU address
 * space) for the CMP, which signals the queue's progress fence with
 * @progress_fence_value once every command has run. The buffer is checked
 * when submitted and again when it runs (the CPU can still write it): an
 * invalid command found at submission fails the ioctl with -EINVAL, one
 * found at run time faults the context.
 *
 * -ENOENT for an unknown @device or @hwqueue; -EINVAL for non-zero @flags,
 * @size of 0, above %DRM_NFENCE_MAX_SUBMIT_SIZE or not a multiple of 8, a
 * @commands_gpu_va not 8-byte aligned or not mapped for the whole @size, an
 * invalid command, or a @progress_fence_value not above the previous
 * submission's or (%DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS) more than
 * UINT_MAX/2 above the progress fence's CurrentValue, or a queue created
 * with USER_MODE_SUBMISSION (it takes work only from its doorbell); -EIO
 * when the context
 * or device is in error. When %DRM_NFENCE_MAX_QUEUED submissions are
 * pending, the call waits for room (interruptibly: -ERESTARTSYS).
 */
struct drm_nfence_submit {
	/** @device: device handle */
	__u32 device;
	/** @hwqueue: queue handle */
	__u32 hwqueue;
	/** @commands_gpu_va: GPU VA of the command buffer, 8-byte aligned */
	__u64 commands_gpu_va;
	/** @size: bytes of commands */
	__u32 size;
	/** @flags: must be zero */
	__u32 flags;
	/** @progress_fence_value: HwQueueProgressFenceId for this submission */
	__u64 progress_fence_value;
};

/**
 * struct drm_nfence_submit_sync - legacy GPU wait or signal through the CPU
 *
 * D3DKMTSubmitWaitForSyncObjectsToHwQueue and
 * D3DKMTSubmitSignalSyncObjectsToHwQueue as WDDM 2.x monitored fences do
 * them: the queue is held by the kernel, not the GPU. A wait entry blocks
 * the queue until the driver's CPU waiters on every fence are satisfied
 * (they raise MonitoredValue and take the interrupt path); a signal entry
 * is run by a kernel worker through the update-from-CPU path once the
 * queue reaches it. This is the baseline native GPU waits are measured
 * against.
 *
 * -ENOENT for an unknown @device, @hwqueue or fence handle; -EINVAL for
 * @count of 0 or above %DRM_NFENCE_MAX_WAIT_FENCES, non-zero @flags, an
 * INTRA_GPU fence, or a value outside the 32-bit window (see
 * &struct drm_nfence_fence_wait) or a queue created with
 * USER_MODE_SUBMISSION; -EACCES for a fence handle opened with NO_WAIT
 * (wait) or NO_SIGNAL (signal); -EIO when the context or device is in
 * error. Blocks for room as &struct drm_nfence_submit does.
 */
struct drm_nfence_submit_sync {
	/** @device: device handle */
	__u32 device;
	/** @hwqueue: queue handle */
	__u32 hwqueue;
	/** @handles: user pointer to @count __u32 local fence handles */
	__u64 handles;
	/** @values: user pointer to @count __u64 values */
	__u64 values;
	/** @count: fences, 1..%DRM_NFENCE_MAX_WAIT_FENCES */
	__u32 count;
	/** @flags: must be zero */
	__u32 flags;
};

/**
 * DOC: user-mode submission (doorbells)
 *
 * A hardware queue created with %DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION
 * takes no kernel-mode submission: the process writes command buffers, a
 * ring of &struct drm_nfence_ring_entry in one of its allocations, and
 * rings the queue's doorbell, with no system call per submission.
 *
 * - The ring buffer is an allocation of the queue's device whose size
 *   divided by 16 gives the number of entries (at least 1). Entry i of the
 *   ring holds the i-th command buffer modulo that number.
 * - The ring buffer control, optional on an adapter of the dedicated
 *   doorbell model and required on one of the global model, is an
 *   allocation holding &struct drm_nfence_ring_control at offset 0:
 *   @write_index is the process's,
 *   @read_index the engine's (the entries it has finished). The engine
 *   stores the read index after an entry's last command has run, so a
 *   progress value that entry signals can be seen a moment before it.
 * - Ringing is a 64-bit store of the write index (the count of entries
 *   written since the doorbell was created) to the doorbell page; in the
 *   global model (%DRM_NFENCE_DOORBELL_GLOBAL), where every queue shares
 *   one doorbell, any non-zero store rings and the CMP reads each
 *   connected ring's write index from its control. The CMP
 *   runs entries from its read index up to the last write index it took
 *   from the doorbell, as command buffers of the engine's ISA; the process
 *   signals the queue's progress fence from its command buffers.
 * - A write index behind the last one taken, or more than the ring's
 *   entries ahead of the read index, and an entry with a bad size, a
 *   command buffer address not 8-byte aligned or non-zero @flags, fault
 *   the context (%DRM_NFENCE_FAULT_BAD_RING), as a bad command does. An
 *   entry whose command buffer is not mapped, or a ring control that is
 *   not, faults it as any GPU access there does
 *   (%DRM_NFENCE_FAULT_PAGE).
 *
 * %DRM_IOCTL_NFENCE_DOORBELL_CREATE returns three mmap offsets, each of
 * one page: the doorbell (read/write; map it twice for a secondary
 * address), the status word (read-only, a __u64 &enum
 * drm_nfence_doorbell_status) and the last queued progress fence value
 * (read/write, the process's). The status page holds a second __u64, at
 * byte 8: the adapter's logging level (DRM_NFENCE_LOGGING_LEVEL_*,
 * D3DDDI_DOORBELLSTATUS_STORAGE.LoggingLevel), written by every
 * connect. A new doorbell is disconnected: its
 * mappings show a dummy page of its own, where stores go nowhere, and its
 * status is %DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY.
 * %DRM_IOCTL_NFENCE_DOORBELL_CONNECT gives it a physical doorbell and
 * moves its mappings there (the CPU page tables change, no copy is made).
 *
 * The CMP watches connected doorbells while it is active. When it has
 * seen no ring for a while it stops watching: it sets the status of every
 * connected doorbell to %DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD, issues
 * a full barrier and looks at every doorbell once more. A process rings,
 * issues a full barrier and reads the status; when it reads
 * CONNECTED_NOTIFY_KMD it calls %DRM_IOCTL_NFENCE_DOORBELL_NOTIFY. Either
 * the CMP's last look sees the ring or the process sees the status, so no
 * ring is lost.
 *
 * With the dedicated doorbell model an adapter has a limited number of
 * physical doorbells; connecting one more takes the one of the connected
 * doorbell rung least recently (one of a stopped queue first), whose
 * mapping goes back to its dummy page and status to DISCONNECTED_RETRY
 * before the physical doorbell is reused. Its work already rung runs; the
 * process connects again and rings again. A queue whose context faults or
 * whose device is lost has its doorbell status set to
 * %DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT, and connecting it fails.
 */

/**
 * struct drm_nfence_ring_entry - one entry of a user-mode queue's ring
 */
struct drm_nfence_ring_entry {
	/** @commands_gpu_va: GPU VA of the command buffer, 8-byte aligned */
	__u64 commands_gpu_va;
	/** @size: bytes of commands, 8..%DRM_NFENCE_MAX_SUBMIT_SIZE, 8-aligned */
	__u32 size;
	/** @flags: must be zero */
	__u32 flags;
};

/**
 * struct drm_nfence_ring_control - the ring buffer control allocation
 */
struct drm_nfence_ring_control {
	/** @write_index: entries written; the process's */
	__u64 write_index;
	/** @read_index: entries the engine has finished; the engine's */
	__u64 read_index;
};

/**
 * enum drm_nfence_doorbell_status - D3DDDI_DOORBELLSTATUS
 * @DRM_NFENCE_DOORBELL_CONNECTED: rings reach the CMP
 * @DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD: rings reach the CMP once the
 *	process calls %DRM_IOCTL_NFENCE_DOORBELL_NOTIFY
 * @DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY: rings go nowhere; connect and
 *	ring again
 * @DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT: the queue is lost; destroy and
 *	recreate it
 */
enum drm_nfence_doorbell_status {
	DRM_NFENCE_DOORBELL_CONNECTED = 0,
	DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD = 1,
	DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY = 2,
	DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT = 3,
};

/* Doorbell flags: D3DKMT_CREATE_DOORBELL_FLAGS. */
/*
 * DRM_NFENCE_DOORBELL_SECONDARY_CPU_VA: RequireSecondaryCpuVA; accepted,
 * the process maps the doorbell page twice
 */
#define DRM_NFENCE_DOORBELL_SECONDARY_CPU_VA	(1u << 0)
/* DRM_NFENCE_DOORBELL_RESIZE_RING: ResizeRingBufferOperation; -EOPNOTSUPP */
#define DRM_NFENCE_DOORBELL_RESIZE_RING		(1u << 1)

/**
 * struct drm_nfence_doorbell_create - create a doorbell (D3DKMTCreateDoorbell)
 *
 * Ties a user-mode submission queue to its ring. The ring buffer and
 * control allocations must belong to the queue's device; while the
 * doorbell lives, destroying them fails with -EBUSY.
 *
 * -ENOENT for an unknown @device, @hwqueue, @ring_alloc or
 * @ring_control_alloc; -EINVAL for unknown @flags, a queue created without
 * USER_MODE_SUBMISSION, or no control on an adapter of the global
 * doorbell model (allocations are whole pages, so any ring holds an entry
 * and any control its struct); -EOPNOTSUPP for
 * %DRM_NFENCE_DOORBELL_RESIZE_RING; -EBUSY if the queue has a doorbell;
 * -EIO when the queue's context or device is in error; -ENODEV after
 * unplug.
 */
struct drm_nfence_doorbell_create {
	/** @device: device handle */
	__u32 device;
	/** @hwqueue: a queue created with USER_MODE_SUBMISSION */
	__u32 hwqueue;
	/** @ring_alloc: allocation handle of the ring buffer */
	__u32 ring_alloc;
	/**
	 * @ring_control_alloc: allocation handle of the control, or 0 (not
	 * on an adapter of the global doorbell model)
	 */
	__u32 ring_control_alloc;
	/** @flags: DRM_NFENCE_DOORBELL_* */
	__u32 flags;
	/** @handle: out: doorbell handle, never 0 */
	__u32 handle;
	/** @doorbell_offset: out: mmap offset of the doorbell page */
	__u64 doorbell_offset;
	/** @status_offset: out: mmap offset of the status page (read-only) */
	__u64 status_offset;
	/** @last_queued_offset: out: mmap offset of the last queued value */
	__u64 last_queued_offset;
};

/**
 * struct drm_nfence_doorbell_connect - connect a doorbell (D3DKMTConnectDoorbell)
 *
 * -ENOENT for an unknown @device or @handle, -EINVAL for non-zero @flags
 * or @pad, -EIO when the doorbell's status is DISCONNECTED_ABORT, -ENODEV
 * after unplug. Connecting a connected doorbell only returns its status.
 * When every physical doorbell is connected to a ring that was connected
 * less than 1 ms ago and has not rung since, the call waits (interruptibly:
 * -EINTR, or a restart) until one of them has had its 1 ms, so that a
 * process that connected gets to ring before its doorbell is taken again;
 * connects that arrive while others are waiting queue behind them, in order.
 * Connecting wakes the adapter from D3 (runtime PM): an error of that
 * wake-up is returned as it is.
 */
struct drm_nfence_doorbell_connect {
	/** @device: device handle */
	__u32 device;
	/** @handle: doorbell handle */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
	/** @status: out: &enum drm_nfence_doorbell_status after the call */
	__u32 status;
	/**
	 * @logging_level: out: the adapter's DRM_NFENCE_LOGGING_LEVEL_*, as
	 * the status page's second word now holds it
	 */
	__u32 logging_level;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_nfence_doorbell_destroy - destroy a doorbell (D3DKMTDestroyDoorbell)
 *
 * Disconnects the doorbell; ring entries not yet run are dropped. Its CPU
 * mappings stay valid (on its dummy page) until munmap(). -ENOENT for an
 * unknown @device or @handle.
 */
struct drm_nfence_doorbell_destroy {
	/** @device: device handle */
	__u32 device;
	/** @handle: doorbell handle */
	__u32 handle;
};

/**
 * struct drm_nfence_doorbell_notify - D3DKMTNotifyWorkSubmission
 *
 * Tells the CMP to look at the doorbell, and to watch connected doorbells
 * again, waking the adapter from D3 (runtime PM: an error of that wake-up
 * is returned as it is). -ENOENT for an unknown @device or @handle,
 * -EINVAL for non-zero @flags or @pad, -ENODEV after unplug.
 */
struct drm_nfence_doorbell_notify {
	/** @device: device handle */
	__u32 device;
	/** @handle: doorbell handle */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * DOC: native fence log buffers
 *
 * On an adapter with native fences, every hardware queue has two native
 * fence log buffers (WDDM 3.2), one for waits and one for signals, made
 * with the queue and freed with it, or earlier when
 * %DRM_IOCTL_NFENCE_LOGGING_LEVEL gives the queue new ones. Each is a
 * &struct drm_nfence_log_header, then &drm_nfence_log_header.num_entries
 * &struct drm_nfence_log_entry: one 4 KiB page of 84 entries at the
 * default logging level, 16 KiB of 340 at %DRM_NFENCE_LOGGING_LEVEL_ALL.
 * These are the layouts of the Windows
 * DXGK_NATIVE_FENCE_LOG_HEADER and DXGK_NATIVE_FENCE_LOG_ENTRY. The GPU
 * (the engine running the queue) writes an entry at
 * &drm_nfence_log_header.first_free_entry_index and advances it, wrapping
 * to 0 and counting &drm_nfence_log_header.wraparound_count, so the log
 * overruns entries nobody read rather than block the GPU.
 *
 * They are mapped read-only at GPU VAs of the queue's address space
 * (&drm_nfence_hwqueue_create.wait_log_gpu_va and .signal_log_gpu_va: a
 * command writing there faults the context) and not at all for the CPU:
 * a process reads them with %DRM_IOCTL_NFENCE_LOG_READ.
 *
 * The GPU logs the FENCE_WAIT and FENCE_SIGNAL commands that carry a log
 * payload (see "command stream"); such adapters report
 * %DRM_NFENCE_FENCE_CAP_LOG_BUFFERS. An adapter that reports
 * %DRM_NFENCE_FENCE_CAP_OPTIMIZED_INTERRUPT finds the CPU waiters a GPU
 * signal satisfies through the signal log: the log payload of a
 * FENCE_SIGNAL should name the fence it signals (by its handle in the
 * queue's file). A signal logged under another handle, or not logged,
 * still wakes its waiters, through a scan of every fence, which costs in
 * proportion to the fences of the adapter. %DRM_IOCTL_NFENCE_LOGGING_LEVEL
 * recreates every queue's buffers, larger while a tool traces.
 */

/* DRM_NFENCE_LOG_TYPE_WAITS: a queue's wait log (DXGK_NATIVE_FENCE_LOG_TYPE_WAITS) */
#define DRM_NFENCE_LOG_TYPE_WAITS	1
/* DRM_NFENCE_LOG_TYPE_SIGNALS: its signal log (DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS) */
#define DRM_NFENCE_LOG_TYPE_SIGNALS	2

/* DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED: a signal ran (the Windows value) */
#define DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED	0
/* DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED: a wait was satisfied (the Windows value) */
#define DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED	1

/* DRM_NFENCE_LOG_ENTRIES: entries of a 4 KiB log buffer */
#define DRM_NFENCE_LOG_ENTRIES	84

/**
 * struct drm_nfence_log_header - the head of a native fence log buffer
 *
 * DXGK_NATIVE_FENCE_LOG_HEADER: the GPU updates @first_free_entry_index
 * and @wraparound_count together, as one 64-bit word.
 */
struct drm_nfence_log_header {
	/** @first_free_entry_index: FirstFreeEntryIndex: the next entry written */
	__u32 first_free_entry_index;
	/** @wraparound_count: WraparoundCount: times the index went back to 0 */
	__u32 wraparound_count;
	/** @type: Type: DRM_NFENCE_LOG_TYPE_* */
	__u32 type;
	/** @pad: zero */
	__u32 pad;
	/** @num_entries: NumberOfEntries: entries after the header */
	__u64 num_entries;
	/** @reserved: zero */
	__u64 reserved[2];
};

/**
 * struct drm_nfence_log_entry - one fence operation the GPU logged
 *
 * DXGK_NATIVE_FENCE_LOG_ENTRY. Timestamps are GPU ticks (the adapter's
 * timestamp_frequency); they never go backwards within a log, but may be
 * 0 or repeat the previous entry's.
 */
struct drm_nfence_log_entry {
	/** @fence_value: FenceValue: the value signaled or waited for */
	__u64 fence_value;
	/** @fence_handle: hNativeFence: the fence's handle, as the UMD named it */
	__u32 fence_handle;
	/** @operation: OperationType: DRM_NFENCE_LOG_OP_* */
	__u32 operation;
	/** @reserved0: zero */
	__u64 reserved0;
	/**
	 * @observed_gpu_timestamp: FenceObservedGpuTimestamp: for a wait,
	 * when the engine first saw it unresolved (@end_gpu_timestamp if it
	 * never was); 0 for a signal
	 */
	__u64 observed_gpu_timestamp;
	/** @reserved1: zero */
	__u64 reserved1;
	/** @end_gpu_timestamp: FenceEndGpuTimestamp: when it completed */
	__u64 end_gpu_timestamp;
};

/* DRM_NFENCE_LOG_READ_OVERRUN: entries after the cursor were overwritten */
#define DRM_NFENCE_LOG_READ_OVERRUN	(1u << 0)

/**
 * struct drm_nfence_log_read - read a queue's log from a cursor
 *
 * A cursor counts the entries the GPU has written to the log since the
 * queue was made, across the buffers it had (a logging level change or
 * %DRM_NFENCE_LOGGING_RECREATE gives it new ones) and past 2^32 wraps:
 * (@header.wraparound_count * @header.num_entries +
 * @header.first_free_entry_index) only while the queue has had one
 * buffer and fewer wraps; keep the @cursor a call returns. Start with 0.
 * The call copies the
 * entries from @cursor on, oldest first, at most @num_entries of them,
 * and advances @cursor past them. When the GPU has written more than
 * @header.num_entries entries since @cursor, the oldest are gone:
 * %DRM_NFENCE_LOG_READ_OVERRUN is set and the copy starts at the oldest
 * entry still in the log. @num_entries 0 copies no entry: it reads the
 * header and @status, and returns in @cursor where a read would start
 * (after an overrun, the oldest entry left, with
 * %DRM_NFENCE_LOG_READ_OVERRUN set in this call's @status).
 *
 * -EINVAL for an unknown @type or non-zero @flags, -ENOENT for an unknown
 * @device or @hwqueue, -EOPNOTSUPP when the queue has no log buffers (an
 * adapter without native fences), -EINVAL for a @cursor ahead of the
 * GPU's, -EFAULT when the entries cannot be written at @entries_ptr.
 * Nothing is written back when it fails.
 */
struct drm_nfence_log_read {
	/** @device: device handle */
	__u32 device;
	/** @hwqueue: queue handle */
	__u32 hwqueue;
	/** @type: DRM_NFENCE_LOG_TYPE_* */
	__u32 type;
	/** @flags: in: must be zero */
	__u32 flags;
	/** @cursor: in: where to read from; out: past the last entry copied */
	__u64 cursor;
	/** @entries_ptr: user pointer to @num_entries &struct drm_nfence_log_entry */
	__u64 entries_ptr;
	/** @num_entries: in: room at @entries_ptr; out: entries copied */
	__u32 num_entries;
	/** @status: out: DRM_NFENCE_LOG_READ_* */
	__u32 status;
	/** @header: out: the log's header, as read */
	struct drm_nfence_log_header header;
	/**
	 * @gpu_va: out: GPU VA of the log's buffer now (a new logging level
	 * gives it a new one)
	 */
	__u64 gpu_va;
};

/* DRM_NFENCE_LOGGING_LEVEL_DEFAULT: D3DDDI_LOGGING_LEVEL_DEFAULT */
#define DRM_NFENCE_LOGGING_LEVEL_DEFAULT	0
/* DRM_NFENCE_LOGGING_LEVEL_ALL: D3DDDI_LOGGING_LEVEL_ALL (a tool traces) */
#define DRM_NFENCE_LOGGING_LEVEL_ALL		1

/* DRM_NFENCE_LOGGING_RECREATE: new log buffers even at the same level */
#define DRM_NFENCE_LOGGING_RECREATE	(1u << 0)

/**
 * struct drm_nfence_logging_level - set an adapter's logging level
 *
 * What Dxgkrnl does when a tool turns verbose ETW logging on or off (WDDM's
 * UpdateLoggingLevel): the adapter's level becomes @level; at a new
 * level every hardware queue of every process on the adapter gets new log
 * buffers (&drm_nfence_query_fence_caps.max_log_entries entries, 16 KiB,
 * at %DRM_NFENCE_LOGGING_LEVEL_ALL, so that a trace does not overrun;
 * %DRM_NFENCE_LOG_ENTRIES, 4 KiB, at the default), at new GPU VAs; entries not
 * read from the old ones are gone. Then every connected doorbell of the
 * adapter is disconnected (DISCONNECTED_RETRY), so that each process
 * reconnects and reads the new level from the status page (or
 * &drm_nfence_doorbell_connect.logging_level). %DRM_NFENCE_LOGGING_RECREATE
 * makes new buffers even when the level does not change (doorbells stay
 * connected then).
 *
 * Needs CAP_SYS_ADMIN (-EACCES), as it changes every process's queues.
 * -EINVAL for an unknown @level, unknown @flags or non-zero @pad;
 * -EOPNOTSUPP on an adapter without log buffers (no native fences);
 * -ENOMEM or -ENOSPC if a queue's new buffers could not be made: the
 * level is set, and that queue keeps its old buffers.
 */
struct drm_nfence_logging_level {
	/** @level: DRM_NFENCE_LOGGING_LEVEL_* */
	__u32 level;
	/** @flags: DRM_NFENCE_LOGGING_* */
	__u32 flags;
	/** @previous: out: the level before the call */
	__u32 previous;
	/** @pad: must be zero */
	__u32 pad;
};

/* DRM_NFENCE_MAX_SYNCOBJ_BINDINGS: pending syncobj bindings one open file may have */
#define DRM_NFENCE_MAX_SYNCOBJ_BINDINGS	1024

/**
 * struct drm_nfence_syncobj_bind - attach a syncobj point when a native
 * fence reaches a value
 *
 * Binds (@fence, @value) to (@syncobj, @point). Nothing is attached to the
 * syncobj until the fence's CurrentValue reaches @value; then the driver
 * adds an already-signaled fence at @point (as
 * DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL would). Until then the point does not
 * exist: consumers wait for it with DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
 * or DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE. No dma_fence ever waits on the
 * native fence (see "the syncobj bridge" in Documentation/fences.rst).
 * A value already reached attaches the point before the call returns.
 *
 * A pending binding ends exactly once, always with the point attached:
 *
 * - the fence reaches @value: a signaled fence, status 1;
 * - the fence's device goes into error (the fence is AlwaysSignaled; a
 *   killed process's devices do) before it reached @value: a fence
 *   signaled with error -EIO;
 * - the fence loses its last handle and fd (nobody can signal it; a
 *   cross-adapter fence's, on every adapter): error -ENOENT;
 * - the file is closed, and its exit wait (the GPU work it had queued,
 *   which runs first) did not reach @value: error -ECANCELED (-ENODEV if
 *   the adapter was unplugged meanwhile);
 * - the adapter is unplugged: error -ENODEV.
 *
 * Points are added in the order the bindings complete; drm_syncobj's rules
 * for a point added below the timeline's last one apply (bind in point
 * order). Any syncobj can take a point, binary ones too (a binary syncobj
 * then holds the point's fence, as after a TIMELINE_SIGNAL on it).
 *
 * -EINVAL for non-zero @flags, a @point of 0, an INTRA_GPU fence or, on an
 * adapter with %DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS, a @value outside the
 * 32-bit window (see &struct drm_nfence_fence_wait); -ENOENT for an unknown
 * @device, @fence or @syncobj handle; -EACCES for a fence handle opened with
 * %DRM_NFENCE_FENCE_NO_WAIT; -ENOSPC when the file already has
 * %DRM_NFENCE_MAX_SYNCOBJ_BINDINGS bindings whose point is not attached
 * yet; -ENODEV after unplug.
 */
struct drm_nfence_syncobj_bind {
	/** @device: device handle */
	__u32 device;
	/** @fence: local fence handle, of a fence this file may wait on */
	__u32 fence;
	/** @value: the fence value that makes the point appear */
	__u64 value;
	/** @syncobj: drm_syncobj handle of the same DRM file */
	__u32 syncobj;
	/** @flags: must be zero */
	__u32 flags;
	/** @point: the timeline point, not 0 */
	__u64 point;
};

/* DRM_NFENCE_MAX_SYNCOBJ_SIGNALS: pending syncobj signals one open file may have */
#define DRM_NFENCE_MAX_SYNCOBJ_SIGNALS	1024

/* DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE: &drm_nfence_syncobj_signal.fd is a sync_file */
#define DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE	(1u << 0)

/**
 * struct drm_nfence_syncobj_signal - signal a native fence when a
 * dma_fence signals
 *
 * The other direction of the syncobj bridge: signals @fence to @value, as
 * DRM_IOCTL_NFENCE_FENCE_SIGNAL would, once the dma_fence of (@syncobj,
 * @point) signals, or, with %DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE, the
 * dma_fence of the sync_file @fd. The dma_fence is taken when the call is
 * made: the point must exist then (a point nobody submitted yet is
 * -EINVAL, as for DRM_IOCTL_SYNCOBJ_WAIT without WAIT_FOR_SUBMIT); @point 0
 * takes a binary syncobj's fence, or a timeline's last one. The signal is
 * made by a work item after the dma_fence's callback: a native fence may
 * wait on a dma_fence, never the other way round. A dma_fence already
 * signaled signals the fence before the call returns.
 *
 * The fence is signaled whether the dma_fence signaled with or without an
 * error: a native fence has no error of its own (its device's error makes
 * it AlwaysSignaled instead). A pending signal holds the native fence, not
 * a handle: destroying the handle does not cancel it. It is dropped
 * without signaling when the adapter is unplugged, or when the file is
 * closed: at a process's normal exit too, but only after the exit wait has
 * run the GPU work the file had queued, during which it still signals (so
 * work that waits for it runs); a fence shared with other processes then
 * keeps its value for them.
 *
 * -EINVAL for unknown @flags, non-zero @pad, a used @fd without the flag
 * (it must be 0) or a non-zero @syncobj or @point with it, an fd that is
 * no sync_file, a point without a fence, an INTRA_GPU fence or, on an
 * adapter with %DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS, a @value outside the
 * 32-bit window; -ENOENT for an unknown @device, @fence or @syncobj
 * handle; -EACCES for a fence handle opened with
 * %DRM_NFENCE_FENCE_NO_SIGNAL; -ENOSPC when the file already has
 * %DRM_NFENCE_MAX_SYNCOBJ_SIGNALS signals pending; -ENODEV after unplug.
 */
struct drm_nfence_syncobj_signal {
	/** @device: device handle */
	__u32 device;
	/** @fence: local fence handle, of a fence this file may signal */
	__u32 fence;
	/** @value: the value @fence is signaled to */
	__u64 value;
	/** @syncobj: drm_syncobj handle of the same DRM file, or 0 */
	__u32 syncobj;
	/**
	 * @fd: with %DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE a sync_file fd,
	 * else 0
	 */
	__s32 fd;
	/** @point: the timeline point of @syncobj (0: its current fence) */
	__u64 point;
	/** @flags: %DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE or 0 */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * DOC: command stream (the simulated engines' ISA)
 *
 * A command buffer is a sequence of commands, little endian. Every command
 * is a whole number of 8-byte units and starts with a 32-bit header:
 *
 * - bits 0-7: opcode (&enum drm_nfence_cs_opcode)
 * - bits 8-15: flags: %DRM_NFENCE_CS_FLAG_LOG on FENCE_WAIT and
 *   FENCE_SIGNAL, every other bit (and that one on other opcodes) must be
 *   zero
 * - bits 16-31: length of the command in 32-bit words, header included;
 *   it must be exactly the opcode's length (with the log payload, 2 more)
 *
 * followed by a 32-bit word that must be zero and the opcode's 64-bit
 * operands. Every GPU VA operand must be 8-byte aligned and translate,
 * through the submitting file's GPU address space, to memory mapped for the
 * access (fence MonitoredValues are read-only to the GPU). 64-bit reads and
 * writes are single atomic accesses, except on an adapter with
 * %DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS, whose GPU stores 32 bits at a time
 * and compares fence values 32 bits wide:
 *
 * - FENCE_SIGNAL of a fence's CurrentValue stores the low half of the value
 *   when the high half in memory already is the value's. When the high half
 *   must change (the value crosses a multiple of 2^32), the GPU stores
 *   nothing and raises the native fence signaled interrupt, with which the
 *   driver stores the whole value: no reader sees half a value. FENCE_SIGNAL
 *   to other memory stores the low half, then the high half.
 * - FENCE_WAIT compares the low halves as serial numbers: it passes when
 *   (__s32)(low(memory) - low(value)) >= 0, which is exact for values within
 *   UINT_MAX/2 of the fence's value; beyond, the low halves alone decide.
 * - WRITE64 and TIMESTAMP store the low half, then the high half.
 *
 * - NOP (2 words): nothing.
 * - FENCE_WAIT (6 words: va, value): the queue stops until the 64-bit value
 *   at va is at least value. The CMP re-checks a stopped queue whenever an
 *   engine writes memory or the CPU signals a fence; the queue never polls.
 * - FENCE_SIGNAL (8 words: cv_va, mv_va, value): write value at cv_va
 *   (CurrentValue), full barrier, read the MonitoredValue at mv_va, and raise
 *   the native fence signaled interrupt if value > MonitoredValue. mv_va 0
 *   skips the check (no CPU can be waiting, e.g. INTRA_GPU fences). When
 *   cv_va is a monitored fence's CurrentValue (a queue's progress fence
 *   without NATIVE_PROGRESS_FENCE, whose mapping has mv_va 0), the WDDM 2.x
 *   monitored fence signaled interrupt is raised instead, on every signal.
 *   The write is a plain store, as on hardware: a lower value lowers the
 *   fence. A fence whose device is in error (AlwaysSignaled) is not
 *   written.
 * - WRITE64 (6 words: va, value): write value at va.
 * - TIMESTAMP (4 words: va): write the GPU timestamp (ticks of the
 *   adapter's timestamp_frequency) at va.
 * - WORK (4 words: duration_ns): occupy the engine for duration_ns
 *   (at most %DRM_NFENCE_CS_MAX_WORK_NS); other engines keep running.
 *
 * The log payload (%DRM_NFENCE_CS_FLAG_LOG) is one more 64-bit operand
 * after the others: the fence's handle as the UMD names it (hNativeFence)
 * in bits 0-31 and the log operation in bits 32-63,
 * %DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED for FENCE_WAIT and
 * %DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED for FENCE_SIGNAL (any other is an
 * invalid command). After the fence operation the engine logs it in the
 * queue's wait or signal log (see "native fence log buffers"): a
 * FENCE_SIGNAL writes the value, then the entry (FenceEndGpuTimestamp:
 * when it ran), then advances the log's index, then a barrier, then reads
 * MonitoredValue, WDDM's order; a FENCE_WAIT logs when it passes, with
 * FenceObservedGpuTimestamp when the engine first found it unresolved (the
 * same as FenceEndGpuTimestamp for a wait that never blocked). On a queue
 * without log buffers (an adapter without native fences) a command with
 * the log payload faults the context (%DRM_NFENCE_FAULT_BAD_COMMAND).
 */

/**
 * enum drm_nfence_cs_opcode - command opcodes
 * @DRM_NFENCE_CS_NOP: no operation
 * @DRM_NFENCE_CS_FENCE_WAIT: wait for a 64-bit value to reach a value
 * @DRM_NFENCE_CS_FENCE_SIGNAL: signal a fence, with the interrupt check
 * @DRM_NFENCE_CS_WRITE64: write a 64-bit value
 * @DRM_NFENCE_CS_TIMESTAMP: write the GPU timestamp
 * @DRM_NFENCE_CS_WORK: busy the engine for a time
 */
enum drm_nfence_cs_opcode {
	DRM_NFENCE_CS_NOP = 0x00,
	DRM_NFENCE_CS_FENCE_WAIT = 0x01,
	DRM_NFENCE_CS_FENCE_SIGNAL = 0x02,
	DRM_NFENCE_CS_WRITE64 = 0x03,
	DRM_NFENCE_CS_TIMESTAMP = 0x04,
	DRM_NFENCE_CS_WORK = 0x05,
};

/* DRM_NFENCE_CS_HEADER: build a command header */
#define DRM_NFENCE_CS_HEADER(opcode, words) \
	((__u32)(opcode) | ((__u32)(words) << 16))
/* DRM_NFENCE_CS_OPCODE: the opcode of a header */
#define DRM_NFENCE_CS_OPCODE(header)	((header) & 0xffu)
/* DRM_NFENCE_CS_FLAGS: the flags of a header */
#define DRM_NFENCE_CS_FLAGS(header)	(((header) >> 8) & 0xffu)
/* DRM_NFENCE_CS_FLAG_LOG: FENCE_WAIT/FENCE_SIGNAL carry a log payload */
#define DRM_NFENCE_CS_FLAG_LOG		(1u << 0)
/* DRM_NFENCE_CS_HEADER_FLAGS: build a command header with flags */
#define DRM_NFENCE_CS_HEADER_FLAGS(opcode, flags, words) \
	(DRM_NFENCE_CS_HEADER(opcode, words) | ((__u32)(flags) << 8))
/* DRM_NFENCE_CS_LOG_WORDS: what the log payload adds to a command */
#define DRM_NFENCE_CS_LOG_WORDS		2
/* DRM_NFENCE_CS_WORDS: the length in 32-bit words of a header */
#define DRM_NFENCE_CS_WORDS(header)	((header) >> 16)

/* Command lengths in 32-bit words. */
#define DRM_NFENCE_CS_NOP_WORDS			2
#define DRM_NFENCE_CS_FENCE_WAIT_WORDS		6
#define DRM_NFENCE_CS_FENCE_SIGNAL_WORDS	8
#define DRM_NFENCE_CS_WRITE64_WORDS		6
#define DRM_NFENCE_CS_TIMESTAMP_WORDS		4
#define DRM_NFENCE_CS_WORK_WORDS		4

/* DRM_NFENCE_CS_MAX_WORK_NS: longest WORK command (60 s) */
#define DRM_NFENCE_CS_MAX_WORK_NS	60000000000ull

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NFENCE_DRM_H_ */
