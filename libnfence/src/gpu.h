/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * GPU objects: allocations, contexts and hardware queues. Each is a handle
 * of the process-wide table naming a kernel object of its device on the
 * adapter's file; the kernel names them per device, and the D3DKMT calls
 * that omit hDevice find the device through the object.
 *
 * Lifetimes follow the kernel's: destroying a device destroys its
 * allocations and contexts, destroying a context destroys its queues, and
 * destroying a queue destroys its doorbell and closes its progress fence.
 * Each object's owner in the registry (handle.h) is the one whose
 * destruction destroys it, so the registry closes the handles of what an
 * object owns when it closes the object.
 */
#ifndef _NFENCE_GPU_H_
#define _NFENCE_GPU_H_

#include <stdatomic.h>
#include <stdbool.h>

#include "device.h"
#include "fence.h"

/* An allocation handle (NF_HANDLE_ALLOCATION), owned by its device. */
struct nf_allocation {
	struct nf_object base;
	struct nf_device *device;	/* the owner */
	uint32_t kernel_handle;
	uint64_t gpu_va;
	uint64_t size;			/* page rounded */
	uint32_t segment_id, placed_segment_id;
	uint32_t flags;			/* NFENCE_ALLOCATION_FLAGS.Value */
	/* under nf_allocation_lock (allocation.c): */
	unsigned int pins;		/* doorbells using it: no destroy */
	unsigned int lock_count;	/* D3DKMTLock2() locks */
	void *cpu_va;			/* the mapping while lock_count > 0 */
	size_t map_size;		/* its size */
};

/* A context handle (NF_HANDLE_CONTEXT), owned by its device. */
struct nf_context {
	struct nf_object base;
	struct nf_device *device;	/* the owner */
	uint32_t kernel_handle;
	uint32_t engine;
	uint32_t queue_flags;		/* DRM_NFENCE_HWQUEUE_* for every queue */
	/*
	 * The kernel handle of the context's own queue, which only the
	 * context-level GPU waits and signals feed; 0 until the first. The
	 * kernel destroys it with the context.
	 */
	atomic_uint sync_queue;
};

/* A hardware queue handle (NF_HANDLE_HWQUEUE), owned by its context. */
struct nf_hwqueue {
	struct nf_object base;
	struct nf_context *context;	/* the owner */
	struct nf_device *device;	/* the context's */
	uint32_t kernel_handle;
	/* its progress fence's GPU VAs (CurrentValueCpuVa is not kept) */
	D3DDDI_NATIVEFENCEMAPPING progress;
	bool user_mode;			/* UserModeSubmission */
};

/*
 * nf_*_lookup() - the object @handle names, with a new reference (drop it
 * with nf_object_put()); NULL if @handle names no object of that kind.
 */
struct nf_allocation *nf_allocation_lookup(D3DKMT_HANDLE handle);
struct nf_context *nf_context_lookup(D3DKMT_HANDLE handle);
struct nf_hwqueue *nf_hwqueue_lookup(D3DKMT_HANDLE handle);

/*
 * nf_allocation_pin() - the allocation @handle names if it is one of
 * @dev's and open, with a new reference and a pin: until
 * nf_allocation_unpin(), D3DKMTDestroyAllocation2() refuses it with
 * STATUS_DEVICE_BUSY (destroying its device still destroys it).
 */
struct nf_allocation *nf_allocation_pin(const struct nf_device *dev,
					D3DKMT_HANDLE handle);
void nf_allocation_unpin(struct nf_allocation *alloc);

/*
 * nf_context_sync_queue() - the kernel handle of @ctx's own queue (for the
 * context-level GPU waits and signals) in *@kernel_handle, made on the
 * first call. NF_STATUS_BAD_HANDLE once the context is closing.
 */
NTSTATUS nf_context_sync_queue(struct nf_context *ctx, uint32_t *kernel_handle);

#endif /* _NFENCE_GPU_H_ */
