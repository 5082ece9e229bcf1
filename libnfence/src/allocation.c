/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Allocations: D3DKMTCreateAllocation2 / D3DKMTDestroyAllocation2 over
 * DRM_IOCTL_NFENCE_ALLOC_CREATE / _DESTROY, and D3DKMTLock2 /
 * D3DKMTUnlock2: DRM_IOCTL_NFENCE_ALLOC_LOCK and mmap() of the offset it
 * returns, made by the first lock and undone by the last unlock (or by
 * destroying the allocation or its device).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "allocation.h"

_Static_assert(NFENCE_SEGMENT_ID_SYSTEM == 1 && NFENCE_SEGMENT_ID_LOCAL == 2,
	       "the uapi's segment ids");

/* D3DKMT_CREATEALLOCATIONFLAGS bits that change nothing on nfence. */
#define NF_ALLOC_IGNORED_FLAGS	(1u << 2 |	/* NonSecure */		\
				 1u << 4 |	/* RestrictSharedAccess */ \
				 1u << 10 |	/* SwapChainBackBuffer */ \
				 1u << 14 |	/* Zeroed (an output) */ \
				 1u << 18 |	/* AllowNotZeroed */	\
				 1u << 20)	/* NoKmdAccess */
#define NF_ALLOC_RESERVED_FLAGS	0xffc00000u

/*
 * Every allocation's pins, lock count and CPU mapping (allocation.h); the
 * outer lock of handle.h's lock order.
 */
static pthread_mutex_t nf_allocation_lock = PTHREAD_MUTEX_INITIALIZER;

static void nf_allocation_prefork(void)
{
	pthread_mutex_lock(&nf_allocation_lock);
}

static void nf_allocation_postfork(void)
{
	pthread_mutex_unlock(&nf_allocation_lock);
}

__attribute__((constructor))
static void nf_allocation_init(void)
{
	pthread_atfork(nf_allocation_prefork, nf_allocation_postfork,
		       nf_allocation_postfork);
}

/* The unmapped CPU view of @alloc, if it has one. Locked. */
static void nf_allocation_unmap(struct nf_allocation *alloc)
{
	if (alloc->cpu_va)
		munmap(alloc->cpu_va, alloc->map_size);
	alloc->cpu_va = NULL;
	alloc->lock_count = 0;
}

/*
 * Closed (no new CPU mapping: D3DKMTLock2() finds it closing), so undo its
 * CPU mapping, and destroy it unless its device's destruction does.
 */
static NTSTATUS nf_allocation_teardown(struct nf_object *obj,
				       bool owner_destroys)
{
	struct nf_allocation *alloc = (struct nf_allocation *)obj;

	pthread_mutex_lock(&nf_allocation_lock);
	nf_allocation_unmap(alloc);
	pthread_mutex_unlock(&nf_allocation_lock);

	return nf_device_destroy_object(alloc->device,
					DRM_IOCTL_NFENCE_ALLOC_DESTROY,
					alloc->kernel_handle, owner_destroys);
}

static const struct nf_object_ops nf_allocation_ops = {
	.type = NF_HANDLE_ALLOCATION,
	.teardown = nf_allocation_teardown,
};

struct nf_allocation *nf_allocation_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_allocation *)nf_handle_lookup(handle,
							NF_HANDLE_ALLOCATION);
}

/* The NFENCE_ALLOCATION_DESC of @info into *@desc, once checked. */
static NTSTATUS nf_allocation_desc(const D3DDDI_ALLOCATIONINFO2 *info,
				   const NFENCE_ALLOCATION_DESC **desc)
{
	const NFENCE_ALLOCATION_DESC *d = info->pPrivateDriverData;

	if (!d || info->PrivateDriverDataSize != sizeof(*d) ||
	    d->Flags.Reserved || info->pSystemMem || info->Flags.Reserved)
		return STATUS_INVALID_PARAMETER;
	/* nfence has no display: no primaries. */
	if (info->Flags.Primary || info->Flags.Stereo)
		return STATUS_NOT_SUPPORTED;
	*desc = d;
	return STATUS_SUCCESS;
}

/*
 * nf_allocation_new() - create the allocation @desc describes on @dev and
 * give it a handle. On failure nothing is left behind.
 */
static NTSTATUS nf_allocation_new(struct nf_device *dev,
				  const NFENCE_ALLOCATION_DESC *desc,
				  D3DKMT_HANDLE *handle, uint64_t *gpu_va)
{
	struct drm_nfence_alloc_create args;
	struct nf_allocation *alloc;
	NTSTATUS st;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.size = desc->Size;
	args.segment_id = desc->SegmentId;
	if (desc->Flags.CpuVisible)
		args.flags |= DRM_NFENCE_ALLOC_CPU_VISIBLE;
	if (desc->Flags.AllowDemote)
		args.flags |= DRM_NFENCE_ALLOC_ALLOW_DEMOTE;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_ALLOC_CREATE,
			     &args);
	if (!NT_SUCCESS(st))
		return st;

	alloc = calloc(1, sizeof(*alloc));
	if (!alloc) {
		nf_device_destroy_object(dev, DRM_IOCTL_NFENCE_ALLOC_DESTROY,
					 args.handle, false);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&alloc->base, &nf_allocation_ops, &dev->base);
	alloc->device = dev;
	alloc->kernel_handle = args.handle;
	alloc->gpu_va = args.gpu_va;
	alloc->size = (desc->Size + 4095) & ~(uint64_t)4095;
	alloc->segment_id = desc->SegmentId;
	alloc->placed_segment_id = args.placed_segment_id;
	alloc->flags = desc->Flags.Value;

	/* Refused, it is destroyed (by D3DKMTDestroyDevice() if under way). */
	st = nf_handle_insert(&alloc->base, handle);
	if (NT_SUCCESS(st))
		*gpu_va = alloc->gpu_va;
	/* On success the table holds the handle's reference. */
	nf_object_put(&alloc->base);
	return st;
}

NTSTATUS D3DKMTCreateAllocation2(D3DKMT_CREATEALLOCATION *pCreateAllocation)
{
	D3DKMT_CREATEALLOCATION *p = pCreateAllocation;
	const NFENCE_ALLOCATION_DESC *desc;
	D3DKMT_HANDLE *handles;
	uint64_t *vas;
	struct nf_device *dev;
	uint32_t flags;
	NTSTATUS st = STATUS_SUCCESS;
	UINT i, j;

	if (!p || !p->pAllocationInfo2 || !p->NumAllocations || p->hResource)
		return STATUS_INVALID_PARAMETER;
	flags = p->Flags.Value;
	if (flags & NF_ALLOC_RESERVED_FLAGS)
		return STATUS_INVALID_PARAMETER;
	if (flags & ~NF_ALLOC_IGNORED_FLAGS)
		return STATUS_NOT_SUPPORTED;
	for (i = 0; i < p->NumAllocations; i++) {
		st = nf_allocation_desc(&p->pAllocationInfo2[i], &desc);
		if (!NT_SUCCESS(st))
			return st;
	}

	dev = nf_device_lookup(p->hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;
	handles = calloc(p->NumAllocations, sizeof(*handles));
	vas = calloc(p->NumAllocations, sizeof(*vas));
	if (!handles || !vas) {
		st = STATUS_NO_MEMORY;
		goto out;
	}

	/* All or nothing: undo the ones made before a failure. */
	for (i = 0; i < p->NumAllocations; i++) {
		nf_allocation_desc(&p->pAllocationInfo2[i], &desc);
		st = nf_allocation_new(dev, desc, &handles[i], &vas[i]);
		if (!NT_SUCCESS(st)) {
			for (j = 0; j < i; j++)
				nf_handle_close(handles[j],
						NF_HANDLE_ALLOCATION);
			goto out;
		}
	}

	for (i = 0; i < p->NumAllocations; i++) {
		p->pAllocationInfo2[i].hAllocation = handles[i];
		p->pAllocationInfo2[i].GpuVirtualAddress = vas[i];
	}
	p->hGlobalShare = 0;
	p->Flags.Zeroed = 1;
out:
	free(handles);
	free(vas);
	nf_device_put(dev);
	return st;
}

/*
 * nf_device_allocation() - the allocation @handle names if it is one of
 * @dev's, with a new reference; NULL otherwise.
 */
static struct nf_allocation *nf_device_allocation(const struct nf_device *dev,
						  D3DKMT_HANDLE handle)
{
	struct nf_allocation *alloc = nf_allocation_lookup(handle);

	if (alloc && alloc->device != dev) {
		nf_object_put(&alloc->base);
		alloc = NULL;
	}
	return alloc;
}

/*
 * nf_allocation_of() - the allocation @hAllocation names if it is one of
 * the device @hDevice names, with a new reference; NULL otherwise.
 */
static struct nf_allocation *nf_allocation_of(D3DKMT_HANDLE hDevice,
					      D3DKMT_HANDLE hAllocation)
{
	struct nf_allocation *alloc;
	struct nf_device *dev;

	dev = nf_device_lookup(hDevice);
	if (!dev)
		return NULL;
	alloc = nf_device_allocation(dev, hAllocation);
	nf_device_put(dev);
	return alloc;
}

struct nf_allocation *nf_allocation_pin(const struct nf_device *dev,
				       D3DKMT_HANDLE handle)
{
	struct nf_allocation *alloc = nf_device_allocation(dev, handle);

	if (!alloc)
		return NULL;
	pthread_mutex_lock(&nf_allocation_lock);
	if (!nf_object_is_open(&alloc->base)) {
		pthread_mutex_unlock(&nf_allocation_lock);
		nf_object_put(&alloc->base);
		return NULL;
	}
	alloc->pins++;
	pthread_mutex_unlock(&nf_allocation_lock);
	return alloc;
}

void nf_allocation_unpin(struct nf_allocation *alloc)
{
	if (!alloc)
		return;
	pthread_mutex_lock(&nf_allocation_lock);
	alloc->pins--;
	pthread_mutex_unlock(&nf_allocation_lock);
	nf_object_put(&alloc->base);
}

NTSTATUS D3DKMTDestroyAllocation2(const D3DKMT_DESTROYALLOCATION2 *pDestroyAllocation)
{
	const D3DKMT_DESTROYALLOCATION2 *p = pDestroyAllocation;
	struct nf_allocation *alloc;
	struct nf_object *obj;
	struct nf_device *dev;
	NTSTATUS st = STATUS_SUCCESS, st2;
	UINT i;

	if (!p || !p->phAllocationList || !p->AllocationCount ||
	    p->hResource || p->Flags.Reserved || p->Flags.SystemUseOnly)
		return STATUS_INVALID_PARAMETER;

	dev = nf_device_lookup(p->hDevice);
	if (!dev)
		return NF_STATUS_BAD_HANDLE;

	/* Every handle first: a bad or pinned one destroys nothing. */
	for (i = 0; i < p->AllocationCount; i++) {
		alloc = nf_device_allocation(dev, p->phAllocationList[i]);
		if (!alloc) {
			st = NF_STATUS_BAD_HANDLE;
			goto out;
		}
		pthread_mutex_lock(&nf_allocation_lock);
		if (alloc->pins)
			st = STATUS_DEVICE_BUSY;
		pthread_mutex_unlock(&nf_allocation_lock);
		nf_object_put(&alloc->base);
		if (!NT_SUCCESS(st))
			goto out;
	}

	for (i = 0; i < p->AllocationCount; i++) {
		/*
		 * Out of the table first: of concurrent destroys exactly one
		 * wins; and under nf_allocation_lock, so that no doorbell pins
		 * it meanwhile.
		 */
		pthread_mutex_lock(&nf_allocation_lock);
		alloc = nf_allocation_lookup(p->phAllocationList[i]);
		if (alloc && alloc->pins) {
			obj = NULL;
			st2 = STATUS_DEVICE_BUSY;
		} else {
			obj = nf_handle_remove(p->phAllocationList[i],
					       NF_HANDLE_ALLOCATION);
			st2 = NF_STATUS_BAD_HANDLE;	/* listed twice */
		}
		pthread_mutex_unlock(&nf_allocation_lock);
		if (alloc)
			nf_object_put(&alloc->base);
		if (!obj) {
			st = st2;
			continue;
		}
		st2 = nf_object_close(obj);
		if (NT_SUCCESS(st))
			st = st2;
	}
out:
	nf_device_put(dev);
	return st;
}

/*
 * nf_allocation_map() - map @alloc for the CPU: the kernel's mmap offset,
 * then mmap(). Called with nf_allocation_lock held.
 */
static NTSTATUS nf_allocation_map(struct nf_allocation *alloc)
{
	const struct nf_device *dev = alloc->device;
	struct drm_nfence_alloc_lock args;
	void *addr;
	int err;

	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.handle = alloc->kernel_handle;
	err = nf_ioctl(dev->adapter->fd, DRM_IOCTL_NFENCE_ALLOC_LOCK, &args);
	if (err)
		return NFenceStatusFromErrno(err);
	/* mmap() takes an off_t and a size_t. */
	if (args.mmap_offset > (uint64_t)INT64_MAX || !args.size ||
	    args.size > SIZE_MAX)
		return STATUS_UNSUCCESSFUL;

	addr = mmap(NULL, (size_t)args.size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, dev->adapter->fd, (off_t)args.mmap_offset);
	if (addr == MAP_FAILED)
		return NFenceStatusFromErrno(errno ? errno : ENOMEM);
	alloc->cpu_va = addr;
	alloc->map_size = (size_t)args.size;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTLock2(D3DKMT_LOCK2 *pLock)
{
	struct nf_allocation *alloc;
	void *cpu_va = NULL;
	NTSTATUS st = STATUS_SUCCESS;

	if (!pLock || pLock->Flags.Value)
		return STATUS_INVALID_PARAMETER;
	alloc = nf_allocation_of(pLock->hDevice, pLock->hAllocation);
	if (!alloc)
		return NF_STATUS_BAD_HANDLE;

	pthread_mutex_lock(&nf_allocation_lock);
	if (!nf_object_is_open(&alloc->base))
		st = NF_STATUS_BAD_HANDLE;	/* destroyed meanwhile */
	else if (alloc->lock_count == UINT32_MAX)
		st = STATUS_INTEGER_OVERFLOW;
	else if (!alloc->lock_count)
		st = nf_allocation_map(alloc);
	if (NT_SUCCESS(st)) {
		alloc->lock_count++;
		cpu_va = alloc->cpu_va;
	}
	pthread_mutex_unlock(&nf_allocation_lock);

	nf_object_put(&alloc->base);
	if (NT_SUCCESS(st))
		pLock->pData = cpu_va;
	return st;
}

NTSTATUS D3DKMTUnlock2(const D3DKMT_UNLOCK2 *pUnlock)
{
	struct nf_allocation *alloc;
	NTSTATUS st = STATUS_SUCCESS;

	if (!pUnlock)
		return STATUS_INVALID_PARAMETER;
	alloc = nf_allocation_of(pUnlock->hDevice, pUnlock->hAllocation);
	if (!alloc)
		return NF_STATUS_BAD_HANDLE;

	pthread_mutex_lock(&nf_allocation_lock);
	if (!nf_object_is_open(&alloc->base))
		st = NF_STATUS_BAD_HANDLE;
	else if (!alloc->lock_count)
		st = STATUS_INVALID_PARAMETER;	/* not locked */
	else if (--alloc->lock_count == 0)
		nf_allocation_unmap(alloc);
	pthread_mutex_unlock(&nf_allocation_lock);

	nf_object_put(&alloc->base);
	return st;
}

NTSTATUS NFenceQueryAllocation(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hAllocation,
			       D3DKMT_NFENCE_ALLOCATION_INFO *pInfo)
{
	D3DKMT_NFENCE_ALLOCATION_INFO info;
	struct nf_allocation *alloc;

	if (!pInfo)
		return STATUS_INVALID_PARAMETER;
	alloc = nf_allocation_of(hDevice, hAllocation);
	if (!alloc)
		return NF_STATUS_BAD_HANDLE;

	memset(&info, 0, sizeof(info));
	info.GpuVirtualAddress = alloc->gpu_va;
	info.SegmentId = alloc->segment_id;
	info.PlacedSegmentId = alloc->placed_segment_id;
	info.Flags.Value = alloc->flags;
	info.Size = alloc->size;
	pthread_mutex_lock(&nf_allocation_lock);
	info.LockCount = alloc->lock_count;
	pthread_mutex_unlock(&nf_allocation_lock);
	nf_object_put(&alloc->base);

	*pInfo = info;
	return STATUS_SUCCESS;
}
