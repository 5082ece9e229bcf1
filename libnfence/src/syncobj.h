/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Sync objects: a D3DKMT sync object handle names a local fence handle of
 * the kernel on its device's adapter file, plus the fence's mapping in this
 * process. A sync object is owned (handle.h) by its device, or by its
 * hardware queue if it is the queue's progress fence: the kernel closes a
 * device's fence handles with the device, and a queue's progress fence
 * with the queue. The owner's reference keeps the adapter's file (and the
 * page cache its CPU mapping lives in) open while the sync object lives.
 */
#ifndef _NFENCE_SYNCOBJ_H_
#define _NFENCE_SYNCOBJ_H_

#include "device.h"
#include "fence_page.h"

/* A sync object handle (NF_HANDLE_SYNCOBJ). */
struct nf_syncobj {
	struct nf_object base;
	struct nf_device *device;	/* the owner's */
	uint32_t kernel_handle;		/* local fence handle on the file */
	struct nf_fence_page *page;	/* holds CurrentValue; NULL if none */
	D3DDDI_NATIVEFENCEMAPPING mapping; /* as returned to the caller */
	/* the progress fence of a hardware queue: closed with the queue */
	bool progress;
};

/*
 * nf_syncobj_lookup() - the sync object @handle names, with a new
 * reference (drop it with nf_syncobj_put()); NULL if @handle is not a sync
 * object handle.
 */
struct nf_syncobj *nf_syncobj_lookup(D3DKMT_HANDLE handle);

/*
 * nf_syncobj_kernel_handle() - the kernel's handle of sync object
 * @handle, for a native fence log payload; @handle itself if it names no
 * open sync object (the GPU does not check the payload).
 */
uint32_t nf_syncobj_kernel_handle(D3DKMT_HANDLE handle);

/*
 * nf_syncobj_user_handle() - the D3DKMT handle of the open sync object
 * whose kernel handle on @adapter's file is @kernel_handle, for a log
 * entry read back; @kernel_handle itself if there is none (a payload that
 * named no open sync object, or one closed since).
 */
D3DKMT_HANDLE nf_syncobj_user_handle(const struct nf_adapter *adapter,
				     uint32_t kernel_handle);

static inline void nf_syncobj_put(struct nf_syncobj *so)
{
	nf_object_put(&so->base);
}

/*
 * nf_syncobj_new() - wrap the local fence handle @kernel_handle that was
 * just created or opened on @dev (@owner: @dev's base) or, with
 * @progress, that the kernel made as a hardware queue's progress fence
 * (@owner: the queue, on @dev) in a new sync object handle, mapping it as
 * @km says. On failure the kernel fence handle is closed, unless the
 * owner's destruction closes it (the device's, if under way; the queue's,
 * always, which the caller makes sure of). On success *@handle and
 * *@mapping are set.
 */
NTSTATUS nf_syncobj_new(struct nf_object *owner, struct nf_device *dev,
			uint32_t kernel_handle,
			const struct drm_nfence_fence_mapping *km, bool progress,
			D3DKMT_HANDLE *handle,
			D3DDDI_NATIVEFENCEMAPPING *mapping);

/*
 * nf_syncobj_flags() - the DRM_NFENCE_FENCE_* flags for @flags, for a create
 * or (@open) an open; see D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS in d3dkmthk.h
 * for what each Windows bit does. Contradictions the kernel defines
 * (NoSignal with NoWait, NtSecuritySharing without Shared) are left to it.
 */
NTSTATUS nf_syncobj_flags(D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, bool open,
			  uint32_t *kflags);

/*
 * nf_syncobj_create() - FENCE_CREATE on the device @hDevice names, with the
 * kernel's @type and @kflags, wrapped in a new sync object handle: *@handle
 * and *@mapping on success. Native and monitored fences alike.
 */
NTSTATUS nf_syncobj_create(D3DKMT_HANDLE hDevice, uint32_t type, uint32_t kflags,
			   UINT affinity, UINT64 initial, D3DKMT_HANDLE *handle,
			   D3DDDI_NATIVEFENCEMAPPING *mapping);

/*
 * nf_syncobj_open() - FENCE_OPEN of the NT handle (fd) @hNtHandle on the
 * device @hDevice names, with the per-handle @flags, wrapped in a new sync
 * object handle: *@handle and *@mapping on success. With @native (a
 * native fence handle wanted), STATUS_NOT_SUPPORTED without an ioctl if
 * the device's adapter has no native fences: there the kernel would open
 * the fence as a monitored fence.
 */
NTSTATUS nf_syncobj_open(HANDLE hNtHandle, D3DKMT_HANDLE hDevice,
			 D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, UINT affinity,
			 bool native, D3DKMT_HANDLE *handle,
			 D3DDDI_NATIVEFENCEMAPPING *mapping);

/*
 * nf_sync_handles() - the kernel handles of the @count sync objects
 * @handles names, into @out. Each must be a sync object on @dev's adapter
 * (kernel handles are per file); which device of it the kernel checks.
 */
NTSTATUS nf_sync_handles(const struct nf_device *dev, UINT count,
			 const D3DKMT_HANDLE *handles, uint32_t *out);

#endif /* _NFENCE_SYNCOBJ_H_ */
