/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Native fences as sync objects: D3DKMTCreateNativeFence,
 * D3DKMTOpenNativeFenceFromNtHandle, D3DKMTShareObjects and
 * D3DKMTDestroySynchronizationObject over DRM_IOCTL_NFENCE_FENCE_CREATE,
 * _OPEN, _SHARE and _DESTROY, and the sync object lifetime.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"

/* Every nf_device.syncobjs list and nf_device.destroyed flag. */
static pthread_mutex_t nf_syncobj_lock = PTHREAD_MUTEX_INITIALIZER;

static void nf_syncobj_prefork(void)
{
	pthread_mutex_lock(&nf_syncobj_lock);
}

static void nf_syncobj_postfork(void)
{
	pthread_mutex_unlock(&nf_syncobj_lock);
}

__attribute__((constructor))
static void nf_syncobj_init(void)
{
	pthread_atfork(nf_syncobj_prefork, nf_syncobj_postfork,
		       nf_syncobj_postfork);
}

static void nf_syncobj_release(struct nf_object *obj)
{
	struct nf_syncobj *so = (struct nf_syncobj *)obj;

	/* The device's reference keeps the adapter and its page cache. */
	if (so->page)
		nf_fence_page_put(so->device->adapter, so->page);
	nf_device_put(so->device);
	free(so);
}

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

static int nf_kernel_fence_destroy(int fd, uint32_t kernel_handle)
{
	struct drm_nfence_fence_destroy args = { .handle = kernel_handle };

	return nf_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_DESTROY, &args);
}

NTSTATUS nf_fence_flags(D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, bool open,
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
	NTSTATUS st;

	so->mapping.CurrentValueGpuVa = km->current_value_gpu_va;
	so->mapping.MonitoredValueGpuVa = km->monitored_value_gpu_va;
	if (!km->cpu_mmap_offset)
		return STATUS_SUCCESS;

	/* A whole, aligned UINT64 inside the page, or the kernel is broken. */
	if (km->cpu_value_offset > NF_FENCE_PAGE_SIZE - sizeof(UINT64) ||
	    km->cpu_value_offset % sizeof(UINT64))
		return STATUS_UNSUCCESSFUL;
	st = nf_fence_page_get(so->device->adapter, km->cpu_mmap_offset,
			       &so->page);
	if (!NT_SUCCESS(st))
		return st;
	so->mapping.CurrentValueCpuVa =
		(VOID *)((const char *)so->page->addr + km->cpu_value_offset);
	return STATUS_SUCCESS;
}

NTSTATUS nf_syncobj_new(struct nf_device *dev, uint32_t kernel_handle,
			const struct drm_nfence_fence_mapping *km, bool progress,
			D3DKMT_HANDLE *handle,
			D3DDDI_NATIVEFENCEMAPPING *mapping,
			struct nf_syncobj **so_out)
{
	struct nf_syncobj *so;
	bool close_kernel = !progress;
	NTSTATUS st;

	so = calloc(1, sizeof(*so));
	if (!so) {
		if (close_kernel)
			nf_kernel_fence_destroy(dev->adapter->fd,
						kernel_handle);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&so->base, NF_HANDLE_SYNCOBJ, nf_syncobj_release);
	nf_object_get(&dev->base);
	so->device = dev;
	so->kernel_handle = kernel_handle;
	so->progress = progress;

	st = nf_syncobj_map(so, km);
	if (NT_SUCCESS(st)) {
		pthread_mutex_lock(&nf_syncobj_lock);
		if (dev->destroyed) {
			/* Lost a race with D3DKMTDestroyDevice(). */
			st = NF_STATUS_BAD_HANDLE;
			close_kernel = false;
		} else {
			st = nf_handle_insert(&so->base, handle);
		}
		if (NT_SUCCESS(st)) {
			so->next = dev->syncobjs;
			if (so->next)
				so->next->pprev = &so->next;
			so->pprev = &dev->syncobjs;
			dev->syncobjs = so;
			*mapping = so->mapping;
		}
		pthread_mutex_unlock(&nf_syncobj_lock);
	}
	if (!NT_SUCCESS(st) && close_kernel)
		nf_kernel_fence_destroy(dev->adapter->fd, kernel_handle);
	if (NT_SUCCESS(st) && so_out)
		*so_out = so;	/* the caller's reference */
	else
		nf_syncobj_put(so); /* the table holds the handle's */
	return st;
}

/* Remove @so from its device's list; true if it was on it. Locked. */
static bool nf_syncobj_unlink(struct nf_syncobj *so)
{
	if (!so->pprev)
		return false;
	*so->pprev = so->next;
	if (so->next)
		so->next->pprev = so->pprev;
	so->next = NULL;
	so->pprev = NULL;
	return true;
}

void nf_device_close_syncobjs(struct nf_device *dev)
{
	struct nf_syncobj *list, *so, *next;
	struct nf_object *obj;

	/*
	 * Take the list with a reference on each member; members are alive
	 * while listed, as D3DKMTDestroySynchronizationObject() unlinks under
	 * the lock before it drops the table's reference.
	 */
	pthread_mutex_lock(&nf_syncobj_lock);
	dev->destroyed = true;
	list = dev->syncobjs;
	dev->syncobjs = NULL;
	for (so = list; so; so = so->next) {
		nf_object_get(&so->base);
		so->pprev = NULL;
	}
	pthread_mutex_unlock(&nf_syncobj_lock);

	/* Unlisted, ->next is ours alone now. */
	for (so = list; so; so = next) {
		next = so->next;
		so->next = NULL;
		obj = nf_handle_remove(so->base.handle, NF_HANDLE_SYNCOBJ);
		if (obj)
			nf_object_put(obj);
		nf_syncobj_put(so);
	}
}

void nf_syncobj_forget(struct nf_syncobj *so)
{
	struct nf_object *obj;

	/* Whoever removes the handle tears the sync object down. */
	obj = nf_handle_remove(so->base.handle, NF_HANDLE_SYNCOBJ);
	if (!obj)
		return;
	pthread_mutex_lock(&nf_syncobj_lock);
	nf_syncobj_unlink(so);
	pthread_mutex_unlock(&nf_syncobj_lock);
	nf_object_put(obj);
}

/*
 * nf_fence_pdd_ok() - whether a native fence's PrivateDriverData is all
 * zero: the nfence kernel driver takes none, and data meant for a driver
 * that would read it must not be dropped without a word.
 */
static bool nf_fence_pdd_ok(const BYTE *pdd)
{
	for (size_t i = 0; i < D3DDDI_NATIVE_FENCE_PDD_SIZE; i++)
		if (pdd[i])
			return false;
	return true;
}

NTSTATUS nf_fence_create(D3DKMT_HANDLE hDevice, uint32_t type, uint32_t kflags,
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
		st = nf_syncobj_new(dev, args.handle, &args.mapping, false,
				    handle, mapping, NULL);
	nf_device_put(dev);
	return st;
}

NTSTATUS nf_fence_open(HANDLE hNtHandle, D3DKMT_HANDLE hDevice,
		       D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags, UINT affinity,
		       D3DKMT_HANDLE *handle, D3DDDI_NATIVEFENCEMAPPING *mapping)
{
	struct drm_nfence_fence_open args;
	struct nf_device *dev;
	uint32_t kflags;
	intptr_t fd;
	NTSTATUS st;

	st = nf_fence_flags(flags, true, &kflags);
	if (!NT_SUCCESS(st))
		return st;
	/* NULL is "no handle"; anything else must be a file descriptor. */
	fd = (intptr_t)hNtHandle;
	if (fd <= 0 || fd > INT_MAX)
		return STATUS_INVALID_HANDLE;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;

	memset(&args, 0, sizeof(args));
	args.fd = (int32_t)fd;
	args.device = dev->kernel_handle;
	args.flags = kflags;
	args.engine_affinity = affinity;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_FENCE_OPEN,
			     &args);
	if (NT_SUCCESS(st))
		st = nf_syncobj_new(dev, args.handle, &args.mapping, false,
				    handle, mapping, NULL);
	nf_device_put(dev);
	return st;
}

NTSTATUS D3DKMTCreateNativeFence(D3DKMT_CREATENATIVEFENCE *pCreateNativeFence)
{
	D3DKMT_CREATENATIVEFENCE *p = pCreateNativeFence;
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	uint32_t kflags;
	NTSTATUS st;

	if (!p || p->Flags.Value || !nf_fence_pdd_ok(p->PrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	if ((UINT)p->Info.Type != D3DDDI_NATIVEFENCE_TYPE_DEFAULT &&
	    (UINT)p->Info.Type != D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU)
		return STATUS_INVALID_PARAMETER;
	st = nf_fence_flags(p->Info.Flags, false, &kflags);
	if (!NT_SUCCESS(st))
		return st;

	st = nf_fence_create(p->hDevice,
			     (UINT)p->Info.Type == D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU ?
			     DRM_NFENCE_FENCE_TYPE_INTRA_GPU :
			     DRM_NFENCE_FENCE_TYPE_DEFAULT,
			     kflags, p->Info.EngineAffinity,
			     p->Info.InitialFenceValue, &handle, &mapping);
	if (!NT_SUCCESS(st))
		return st;

	p->hSyncObject = handle;
	p->Info.NativeFenceMapping.CurrentValueCpuVa = mapping.CurrentValueCpuVa;
	p->Info.NativeFenceMapping.CurrentValueGpuVa = mapping.CurrentValueGpuVa;
	p->Info.NativeFenceMapping.MonitoredValueGpuVa =
		mapping.MonitoredValueGpuVa;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTOpenNativeFenceFromNtHandle(D3DKMT_OPENNATIVEFENCEFROMNTHANDLE *pOpen)
{
	D3DDDI_NATIVEFENCEMAPPING mapping = { 0 };
	D3DKMT_HANDLE handle = 0;
	NTSTATUS st;

	if (!pOpen || !nf_fence_pdd_ok(pOpen->PrivateDriverData))
		return STATUS_INVALID_PARAMETER;
	st = nf_fence_open(pOpen->hNtHandle, pOpen->hDevice, pOpen->Flags,
			   pOpen->EngineAffinity, &handle, &mapping);
	if (!NT_SUCCESS(st))
		return st;

	pOpen->hSyncObject = handle;
	pOpen->NativeFenceMapping.CurrentValueCpuVa = mapping.CurrentValueCpuVa;
	pOpen->NativeFenceMapping.CurrentValueGpuVa = mapping.CurrentValueGpuVa;
	pOpen->NativeFenceMapping.MonitoredValueGpuVa =
		mapping.MonitoredValueGpuVa;
	return STATUS_SUCCESS;
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
	*phSharedNtHandle = (HANDLE)(intptr_t)args.fd;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *pDestroy)
{
	struct nf_object *obj;
	struct nf_syncobj *so;
	bool listed;
	int err = 0;

	if (!pDestroy)
		return STATUS_INVALID_PARAMETER;

	/* A progress fence goes with its queue only (the kernel's EBUSY). */
	so = nf_syncobj_lookup(pDestroy->hSyncObject);
	if (!so)
		return NF_STATUS_BAD_HANDLE;
	err = so->progress ? EBUSY : 0;
	nf_syncobj_put(so);
	if (err)
		return NFenceStatusFromErrno(err);

	/* Unlink first: of concurrent destroys exactly one reaches here. */
	obj = nf_handle_remove(pDestroy->hSyncObject, NF_HANDLE_SYNCOBJ);
	if (!obj)
		return NF_STATUS_BAD_HANDLE;
	so = (struct nf_syncobj *)obj;

	pthread_mutex_lock(&nf_syncobj_lock);
	listed = nf_syncobj_unlink(so);
	pthread_mutex_unlock(&nf_syncobj_lock);

	/* Off the list: its device is being destroyed, closing the fence. */
	if (listed)
		err = nf_kernel_fence_destroy(so->device->adapter->fd,
					      so->kernel_handle);
	nf_syncobj_put(so);
	return NFenceStatusFromErrno(err);
}
