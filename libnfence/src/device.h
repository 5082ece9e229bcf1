/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Devices: a D3DKMT device handle names a kernel device on its adapter's
 * file. The device holds a reference on the adapter, so the file stays
 * open (and the kernel device alive) after the adapter handle is closed.
 */
#ifndef _NFENCE_DEVICE_H_
#define _NFENCE_DEVICE_H_

#include <stdbool.h>

#include "adapter.h"

struct nf_link;
struct nf_syncobj;

/* A device handle (NF_HANDLE_DEVICE). */
struct nf_device {
	struct nf_object base;
	struct nf_adapter *adapter;	/* one reference */
	uint32_t kernel_handle;		/* drm_nfence_device_create.handle */
	/* under the sync object lock of fence.c: */
	struct nf_syncobj *syncobjs;	/* sync objects with open handles */
	bool destroyed;			/* D3DKMTDestroyDevice() has begun */
	/* under nf_gpu_lock (gpu.h): */
	struct nf_link *allocations;	/* nf_allocation.link */
	struct nf_link *contexts;	/* nf_context.link */
	bool gpu_closed;		/* no new allocation or context joins */
};

/*
 * nf_device_new() - wrap kernel device @kernel_handle of @adapter in a new
 * device handle; takes a reference on @adapter. Does not touch the kernel.
 */
NTSTATUS nf_device_new(struct nf_adapter *adapter, uint32_t kernel_handle,
		       D3DKMT_HANDLE *handle);

/*
 * nf_device_lookup() - the device @handle names, with a new reference
 * (drop it with nf_device_put()); NULL if @handle is not a device handle.
 */
struct nf_device *nf_device_lookup(D3DKMT_HANDLE handle);

static inline void nf_device_put(struct nf_device *device)
{
	nf_object_put(&device->base);
}

#endif /* _NFENCE_DEVICE_H_ */
