/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Sync objects: a D3DKMT sync object handle names a local fence handle of
 * the kernel on its device's adapter file, plus the fence's mapping in this
 * process. A sync object holds a reference on its device, so the adapter's
 * file (and the page cache its CPU mapping lives in) outlives it.
 *
 * Each device lists the sync objects whose handles are open, so that
 * D3DKMTDestroyDevice() can close them: the kernel closes a device's fence
 * handles with the device. Whoever removes a sync object's handle from the
 * handle table tears it down; its CPU page is unmapped (if no other fence
 * uses it) when the last reference goes.
 */
#ifndef _NFENCE_FENCE_H_
#define _NFENCE_FENCE_H_

#include "device.h"
#include "fence_page.h"

/* A sync object handle (NF_HANDLE_SYNCOBJ). */
struct nf_syncobj {
	struct nf_object base;
	struct nf_device *device;	/* one reference */
	uint32_t kernel_handle;		/* local fence handle on the file */
	struct nf_fence_page *page;	/* holds CurrentValue; NULL if none */
	D3DDDI_NATIVEFENCEMAPPING mapping; /* as returned to the caller */
	/* nf_device.syncobjs, under the sync object lock; pprev NULL if off */
	struct nf_syncobj *next;
	struct nf_syncobj **pprev;
};

/*
 * nf_syncobj_lookup() - the sync object @handle names, with a new
 * reference (drop it with nf_syncobj_put()); NULL if @handle is not a sync
 * object handle.
 */
struct nf_syncobj *nf_syncobj_lookup(D3DKMT_HANDLE handle);

static inline void nf_syncobj_put(struct nf_syncobj *so)
{
	nf_object_put(&so->base);
}

/*
 * nf_device_close_syncobjs() - mark @dev as being destroyed, so no new sync
 * object joins it, and close the handles of its sync objects. Called by
 * D3DKMTDestroyDevice() once the device handle is removed; the kernel
 * closes the fence handles with the device.
 */
void nf_device_close_syncobjs(struct nf_device *dev);

#endif /* _NFENCE_FENCE_H_ */
