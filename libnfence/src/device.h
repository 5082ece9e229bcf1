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

#include "adapter.h"

/*
 * A device handle (NF_HANDLE_DEVICE): the owner of its allocations,
 * contexts and sync objects (handle.h).
 */
struct nf_device {
	struct nf_object base;
	struct nf_adapter *adapter;	/* one reference */
	uint32_t kernel_handle;		/* drm_nfence_device_create.handle */
};

/*
 * nf_device_lookup() - the device @handle names, with a new reference
 * (drop it with nf_device_put()); NULL if @handle is not a device handle.
 */
struct nf_device *nf_device_lookup(D3DKMT_HANDLE handle);

/*
 * nf_device_destroy_object() - destroy the kernel object @kernel_handle of
 * @dev with @request (DRM_IOCTL_NFENCE_ALLOC_DESTROY, _CONTEXT_DESTROY,
 * _HWQUEUE_DESTROY or _DOORBELL_DESTROY, which take the same arguments),
 * unless @owner_destroys: the teardown of such an object (handle.h), or
 * the undoing of one that was never wrapped. Returns the status of the
 * ioctl, STATUS_SUCCESS if there was none to make.
 */
NTSTATUS nf_device_destroy_object(const struct nf_device *dev,
				  unsigned long request, uint32_t kernel_handle,
				  bool owner_destroys);

static inline void nf_device_put(struct nf_device *device)
{
	nf_object_put(&device->base);
}

#endif /* _NFENCE_DEVICE_H_ */
