/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Sync objects: their lifetime, creating and opening them over
 * DRM_IOCTL_NFENCE_FENCE_CREATE and _OPEN (for native and monitored
 * fences alike), D3DKMTShareObjects and D3DKMTDestroySynchronizationObject
 * over DRM_IOCTL_NFENCE_FENCE_SHARE and _DESTROY, and the translation of
 * D3DKMT sync object handles to the kernel's and back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncobj.h"

static void nf_syncobj_release(struct nf_object *obj)
{
	struct nf_syncobj *so = (struct nf_syncobj *)obj;

	/* The owner's reference keeps the adapter and its page cache. */
	if (so->page)
		nf_fence_page_put(so->device->adapter, so->page);
	free(so);
}

static NTSTATUS nf_kernel_fence_destroy(int fd, uint32_t kernel_handle)
{
	struct drm_nfence_fence_destroy args = { .handle = kernel_handle };

	return nf_ioctl_status(fd, DRM_IOCTL_NFENCE_FENCE_DESTROY, &args);
}

/*
 * Close the kernel's fence handle unless the owner's destruction does: a
 * device closes its fence handles, a queue its progress fence, which no
 * one else may close (the kernel's EBUSY). The CPU page is unmapped (if
 * no other fence uses it) when the last reference goes.
 */
static NTSTATUS nf_syncobj_teardown(struct nf_object *obj, bool owner_destroys)
{
	struct nf_syncobj *so = (struct nf_syncobj *)obj;

	if (owner_destroys || so->progress)
		return STATUS_SUCCESS;
	return nf_kernel_fence_destroy(so->device->adapter->fd,
				       so->kernel_handle);
}

static const struct nf_object_ops nf_syncobj_ops = {
	.type = NF_HANDLE_SYNCOBJ,
	.release = nf_syncobj_release,
	.teardown = nf_syncobj_teardown,
};

struct nf_syncobj *nf_syncobj_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_syncobj *)nf_handle_lookup(handle, NF_HANDLE_SYNCOBJ);
}

uint32_t nf_syncobj_kernel_handle(D3DKMT_HANDLE handle)
{
	struct nf_syncobj *so = nf_syncobj_lookup(handle);
	uint32_t kernel_handle;

	if (!so)
		return handle;
	kernel_handle = so->kernel_handle;
	nf_syncobj_put(so);
	return kernel_handle;
}

struct nf_kernel_match {
	const struct nf_adapter *adapter;
	uint32_t kernel_handle;
};

static bool nf_syncobj_match_kernel(const struct nf_object *obj,
				    const void *data)
{
	const struct nf_syncobj *so = (const struct nf_syncobj *)obj;
	const struct nf_kernel_match *m = data;

	return so->kernel_handle == m->kernel_handle &&
	       so->device->adapter == m->adapter;
}

D3DKMT_HANDLE nf_syncobj_user_handle(const struct nf_adapter *adapter,
				     uint32_t kernel_handle)
{
	struct nf_kernel_match m = { adapter, kernel_handle };
	struct nf_object *obj;
	D3DKMT_HANDLE handle;

	obj = nf_handle_find(NF_HANDLE_SYNCOBJ, nf_syncobj_match_kernel, &m);
	if (!obj)
		return kernel_handle;
	handle = obj->handle;
	nf_object_put(obj);
	return handle;
}

NTSTATUS nf_sync_handles(const struct nf_device *dev, UINT count,
			 const D3DKMT_HANDLE *handles, uint32_t *out)
{
	struct nf_syncobj *so;
	bool same_file;
	UINT i;

	for (i = 0; i < count; i++) {
		so = nf_syncobj_lookup(handles[i]);
		if (!so)
			return NF_STATUS_BAD_HANDLE;
		same_file = so->device->adapter == dev->adapter;
		out[i] = so->kernel_handle;
		nf_syncobj_put(so);
		if (!same_file)
			return NF_STATUS_BAD_HANDLE;
	}
	return STATUS_SUCCESS;
}

NTSTATUS nf_syncobj_flags(D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, bool open,
			  uint32_t *kflags)
{
	uint32_t k = 0;

	if (flags.SignalByKmd || flags.Reserved ||
	    flags.D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0)
		return STATUS_INVALID_PARAMETER;
	if (flags.TopOfPipeline || flags.NoSignalMaxValueOnTdr ||
	    flags.NoGPUAccess)
		return STATUS_NOT_SUPPORTED;

	if (open) {
		/* Sharing is the object's, fixed when it was created. */
		if (flags.CrossAdapter)
			return STATUS_NOT_SUPPORTED;
	} else {
		if (flags.Shared)
			k |= DRM_NFENCE_FENCE_SHARED;
		if (flags.NtSecuritySharing)
			k |= DRM_NFENCE_FENCE_NT_SECURITY_SHARING;
		if (flags.CrossAdapter)
			k |= DRM_NFENCE_FENCE_CROSS_ADAPTER;
	}
	if (flags.NoSignal)
		k |= DRM_NFENCE_FENCE_NO_SIGNAL;
	if (flags.NoWait)
		k |= DRM_NFENCE_FENCE_NO_WAIT;
	*kflags = k;
	return STATUS_SUCCESS;
}

/*
 * nf_syncobj_map() - the CPU view of CurrentValue @km describes, for @so.
 * A fence without a CPU page (INTRA_GPU) gets a NULL CurrentValueCpuVa.
 */
static NTSTATUS nf_syncobj_map(struct nf_syncobj *so,
			       const struct drm_nfence_fence_mapping *km)
{
	const void *page;
	NTSTATUS st;

	so->mapping.CurrentValueGpuVa = km->current_value_gpu_va;
	so->mapping.MonitoredValueGpuVa = km->monitored_value_gpu_va;
	if (!km->cpu_mmap_offset)
		return STATUS_SUCCESS;

	/* A whole, aligned UINT64 inside the page, or the kernel is broken. */
	if (km->cpu_value_offset > NF_FENCE_PAGE_SIZE - sizeof(UINT64) ||
	    km->cpu_value_offset % sizeof(UINT64))
		return STATUS_UNSUCCESSFUL;
	/* A shared fence's page in the adapter's window, mapped already. */
	page = nf_fence_window_addr(&so->device->adapter->window,
				    km->cpu_mmap_offset);
	if (!page) {
		st = nf_fence_page_get(so->device->adapter,
				       km->cpu_mmap_offset, &so->page);
		if (!NT_SUCCESS(st))
			return st;
		page = so->page->addr;
	}
	so->mapping.CurrentValueCpuVa =
		(VOID *)((const char *)page + km->cpu_value_offset);
	return STATUS_SUCCESS;
}

NTSTATUS nf_syncobj_new(struct nf_object *owner, struct nf_device *dev,
			uint32_t kernel_handle,
			const struct drm_nfence_fence_mapping *km, bool progress,
			D3DKMT_HANDLE *handle,
			D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	struct nf_syncobj *so;
	NTSTATUS st;

	so = calloc(1, sizeof(*so));
	if (!so) {
		if (!progress)
			nf_kernel_fence_destroy(dev->adapter->fd,
						kernel_handle);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&so->base, &nf_syncobj_ops, owner);
	so->device = dev;
	so->kernel_handle = kernel_handle;
	so->progress = progress;

	st = nf_syncobj_map(so, km);
	/* Refused, it is closed (by its owner's destruction if under way). */
	if (NT_SUCCESS(st))
		st = nf_handle_insert(&so->base, handle);
	else
		nf_syncobj_teardown(&so->base, false);
	if (NT_SUCCESS(st))
		*mapping = so->mapping;
	/* On success the table holds the handle's reference. */
	nf_syncobj_put(so);
	return st;
}

NTSTATUS nf_syncobj_create(D3DKMT_HANDLE hDevice, uint32_t type, uint32_t kflags,
			   UINT affinity, UINT64 initial, D3DKMT_HANDLE *handle,
			   D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	struct drm_nfence_fence_create args;
	struct nf_device *dev;
	NTSTATUS st;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.type = type;
	args.flags = kflags;
	args.engine_affinity = affinity;
	args.initial_value = initial;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_FENCE_CREATE,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_syncobj_new(&dev->base, dev, args.handle, &args.mapping,
				    false, handle, mapping);
	nf_device_put(dev);
	return st;
}

NTSTATUS nf_syncobj_open(HANDLE hNtHandle, D3DKMT_HANDLE hDevice,
			 D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, UINT affinity,
			 bool native, D3DKMT_HANDLE *handle,
			 D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	struct drm_nfence_fence_open args;
	struct nf_device *dev;
	uint32_t kflags;
	intptr_t fd;
	NTSTATUS st;
	int err;

	st = nf_syncobj_flags(flags, true, &kflags);
	if (!NT_SUCCESS(st))
		return st;
	/* NULL is "no handle"; anything else must be a file descriptor. */
	fd = (intptr_t)hNtHandle;
	if (fd <= 0 || fd > INT_MAX)
		return STATUS_INVALID_HANDLE;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	/* No native fence handle on an adapter without native fences. */
	if (native &&
	    !(dev->adapter->info.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE)) {
		nf_device_put(dev);
		return STATUS_NOT_SUPPORTED;
	}

	memset(&args, 0, sizeof(args));
	args.fd = (int32_t)fd;
	args.device = dev->kernel_handle;
	args.flags = kflags;
	args.engine_affinity = affinity;
	err = nf_ioctl(dev->adapter->fd, DRM_IOCTL_NFENCE_FENCE_OPEN, &args);
	/*
	 * The kernel says EINVAL for a file that is no fence as for bad
	 * flags or affinity; a foreign file is a bad NT handle.
	 */
	if (err == EINVAL && nf_fd_is_other((int)fd, NF_FD_KIND_FENCE))
		st = STATUS_INVALID_HANDLE;
	else
		st = NFenceStatusFromErrno(err);
	if (NT_SUCCESS(st))
		st = nf_syncobj_new(&dev->base, dev, args.handle, &args.mapping,
				    false, handle, mapping);
	nf_device_put(dev);
	return st;
}

NTSTATUS D3DKMTShareObjects(UINT cObjects, const D3DKMT_HANDLE *hObjects,
			    void *pObjectAttributes, DWORD dwDesiredAccess,
			    HANDLE *phSharedNtHandle)
{
	struct drm_nfence_fence_share args;
	struct nf_syncobj *so;
	NTSTATUS st;

	/* Windows security attributes and access rights mean nothing here. */
	(void)pObjectAttributes;
	(void)dwDesiredAccess;

	if (cObjects != 1 || !hObjects || !phSharedNtHandle)
		return STATUS_INVALID_PARAMETER;
	so = nf_syncobj_lookup(hObjects[0]);
	if (!so)
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	args.handle = so->kernel_handle;
	st = nf_ioctl_status(so->device->adapter->fd,
			     DRM_IOCTL_NFENCE_FENCE_SHARE, &args);
	nf_syncobj_put(so);
	if (!NT_SUCCESS(st))
		return st;
	/*
	 * fd 0 (stdin closed) would be the NULL handle, "none": the caller
	 * could neither open nor close it. Another number, close-on-exec.
	 */
	if (args.fd == 0) {
		int fd = fcntl(0, F_DUPFD_CLOEXEC, 1);

		close(0);
		if (fd < 0)
			return NFenceStatusFromErrno(errno);
		args.fd = fd;
	}
	*phSharedNtHandle = (HANDLE)(intptr_t)args.fd;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *pDestroy)
{
	struct nf_syncobj *so;
	bool progress;

	if (!pDestroy)
		return STATUS_INVALID_PARAMETER;

	/* A progress fence goes with its queue only (the kernel's EBUSY). */
	so = nf_syncobj_lookup(pDestroy->hSyncObject);
	if (!so)
		return NF_STATUS_BAD_HANDLE;
	progress = so->progress;
	nf_syncobj_put(so);
	if (progress)
		return NFenceStatusFromErrno(EBUSY);
	return nf_handle_close(pDestroy->hSyncObject, NF_HANDLE_SYNCOBJ);
}
