/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Allocations: an allocation handle names a kernel allocation of its
 * device on the adapter's file (the kernel names allocations per device).
 * The device owns it (handle.h): destroying the device destroys it.
 */
#ifndef _NFENCE_ALLOCATION_H_
#define _NFENCE_ALLOCATION_H_

#include <stddef.h>

#include "device.h"

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

/*
 * nf_allocation_lookup() - the allocation @handle names, with a new
 * reference (drop it with nf_object_put()); NULL if @handle names none.
 */
struct nf_allocation *nf_allocation_lookup(D3DKMT_HANDLE handle);

/*
 * nf_allocation_pin() - the allocation @handle names if it is one of
 * @dev's and open, with a new reference and a pin: until
 * nf_allocation_unpin(), D3DKMTDestroyAllocation2() refuses it with
 * STATUS_DEVICE_BUSY (destroying its device still destroys it).
 */
struct nf_allocation *nf_allocation_pin(const struct nf_device *dev,
					D3DKMT_HANDLE handle);
void nf_allocation_unpin(struct nf_allocation *alloc);

#endif /* _NFENCE_ALLOCATION_H_ */
