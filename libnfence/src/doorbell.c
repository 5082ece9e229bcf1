/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Doorbells: D3DKMTCreateDoorbell / D3DKMTConnectDoorbell /
 * D3DKMTDestroyDoorbell / D3DKMTNotifyWorkSubmission over
 * DRM_IOCTL_NFENCE_DOORBELL_*. A doorbell is owned by its hardware queue
 * (handle.h), at most one per queue, and goes with it; its CPU addresses
 * are mmap()s of the pages of the kernel's doorbell, made at creation and
 * undone when the doorbell goes. It pins its ring buffer and control
 * allocations, as the kernel does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "allocation.h"
#include "hwqueue.h"

#define NF_PAGE_SIZE	4096u

_Static_assert(sizeof(NFENCE_RING_ENTRY) ==
	       sizeof(struct drm_nfence_ring_entry) &&
	       offsetof(NFENCE_RING_ENTRY, CommandLength) ==
	       offsetof(struct drm_nfence_ring_entry, size) &&
	       offsetof(NFENCE_RING_ENTRY, Flags) ==
	       offsetof(struct drm_nfence_ring_entry, flags),
	       "NFENCE_RING_ENTRY is the uapi's ring entry");
_Static_assert(sizeof(NFENCE_RING_CONTROL) ==
	       sizeof(struct drm_nfence_ring_control) &&
	       offsetof(NFENCE_RING_CONTROL, ReadIndex) ==
	       offsetof(struct drm_nfence_ring_control, read_index),
	       "NFENCE_RING_CONTROL is the uapi's ring control");
_Static_assert((int)D3DDDI_DOORBELLSTATUS_CONNECTED ==
	       (int)DRM_NFENCE_DOORBELL_CONNECTED &&
	       (int)D3DDDI_DOORBELLSTATUS_CONNECTED_NOTIFY_KMD ==
	       (int)DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD &&
	       (int)D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY ==
	       (int)DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY &&
	       (int)D3DDDI_DOORBELLSTATUS_DISCONNECTED_ABORT ==
	       (int)DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT,
	       "D3DDDI_DOORBELLSTATUS values are the uapi's");

/* D3DKMT_CREATE_DOORBELL_FLAGS bits, the uapi's. */
#define NF_DOORBELL_SECONDARY	(1u << 0)
#define NF_DOORBELL_RESIZE	(1u << 1)
#define NF_DOORBELL_KNOWN	(NF_DOORBELL_SECONDARY | NF_DOORBELL_RESIZE)

_Static_assert(DRM_NFENCE_DOORBELL_SECONDARY_CPU_VA == NF_DOORBELL_SECONDARY &&
	       DRM_NFENCE_DOORBELL_RESIZE_RING == NF_DOORBELL_RESIZE,
	       "D3DKMT_CREATE_DOORBELL_FLAGS bits are the uapi's");

/* NF_DB_*: the CPU mappings of a doorbell, in nf_doorbell.pages */
enum {
	NF_DB_DOORBELL,
	NF_DB_SECONDARY,
	NF_DB_STATUS,
	NF_DB_LAST_QUEUED,
	NF_DB_PAGES
};

/* A doorbell handle (NF_HANDLE_DOORBELL), owned by its queue. */
struct nf_doorbell {
	struct nf_object base;
	struct nf_hwqueue *queue;	/* the owner */
	struct nf_allocation *ring;	/* pinned, or NULL */
	struct nf_allocation *control;	/* pinned, or NULL */
	uint32_t kernel_handle;		/* 0 until made (the kernel's aren't) */
	void *pages[NF_DB_PAGES];	/* CPU mappings, or NULL */
};

/*
 * Destroy the kernel doorbell, if made, unless the queue's destruction
 * does; then undo the CPU mappings and pins.
 */
static NTSTATUS nf_doorbell_teardown(struct nf_object *obj,
				     bool owner_destroys)
{
	struct nf_doorbell *db = (struct nf_doorbell *)obj;
	NTSTATUS st = STATUS_SUCCESS;
	unsigned int i;

	if (db->kernel_handle)
		st = nf_device_destroy_object(db->queue->device,
					      DRM_IOCTL_NFENCE_DOORBELL_DESTROY,
					      db->kernel_handle,
					      owner_destroys);
	for (i = 0; i < NF_DB_PAGES; i++) {
		if (db->pages[i])
			munmap(db->pages[i], NF_PAGE_SIZE);
		db->pages[i] = NULL;
	}
	nf_allocation_unpin(db->ring);
	nf_allocation_unpin(db->control);
	db->ring = NULL;
	db->control = NULL;
	return st;
}

static const struct nf_object_ops nf_doorbell_ops = {
	.type = NF_HANDLE_DOORBELL,
	.one_per_owner = true,
	.teardown = nf_doorbell_teardown,
};

/*
 * mmap() one page of the kernel doorbell. On failure, the first failure's
 * errno goes to *@err, so that the caller's status is that of the first
 * page refused (ENODEV after an unplug: STATUS_DEVICE_REMOVED).
 */
static void *nf_doorbell_mmap(int fd, uint64_t offset, int prot, int *err)
{
	void *addr = MAP_FAILED;

	if (offset > (uint64_t)INT64_MAX)
		errno = EINVAL;
	else
		addr = mmap(NULL, NF_PAGE_SIZE, prot, MAP_SHARED, fd,
			    (off_t)offset);
	if (addr == MAP_FAILED && !*err)
		*err = errno ? errno : ENOMEM;
	return addr;
}

/* mmap() the pages of the kernel doorbell that @db uses. */
static NTSTATUS nf_doorbell_map(struct nf_doorbell *db, int fd,
				const struct drm_nfence_doorbell_create *args,
				bool secondary)
{
	const int rw = PROT_READ | PROT_WRITE;
	int err = 0;

	db->pages[NF_DB_DOORBELL] = nf_doorbell_mmap(fd, args->doorbell_offset,
						     rw, &err);
	if (secondary)
		db->pages[NF_DB_SECONDARY] =
			nf_doorbell_mmap(fd, args->doorbell_offset, rw, &err);
	db->pages[NF_DB_STATUS] = nf_doorbell_mmap(fd, args->status_offset,
						   PROT_READ, &err);
	db->pages[NF_DB_LAST_QUEUED] =
		nf_doorbell_mmap(fd, args->last_queued_offset, rw, &err);

	for (unsigned int i = 0; i < NF_DB_PAGES; i++) {
		if (db->pages[i] == MAP_FAILED)
			db->pages[i] = NULL;
	}
	return err ? NFenceStatusFromErrno(err) : STATUS_SUCCESS;
}

/* Pin the ring allocations and create the kernel doorbell of @db. */
static NTSTATUS nf_doorbell_make(struct nf_doorbell *db,
				 const D3DKMT_CREATE_DOORBELL *p,
				 struct drm_nfence_doorbell_create *out)
{
	const struct nf_device *dev = db->queue->device;
	struct drm_nfence_doorbell_create args;
	NTSTATUS st;

	db->ring = nf_allocation_pin(dev, p->hRingBuffer);
	if (!db->ring)
		return NF_STATUS_BAD_HANDLE;
	if (p->hRingBufferControl) {
		db->control = nf_allocation_pin(dev, p->hRingBufferControl);
		if (!db->control)
			return NF_STATUS_BAD_HANDLE;
	}
	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.hwqueue = db->queue->kernel_handle;
	args.ring_alloc = db->ring->kernel_handle;
	args.ring_control_alloc = db->control ? db->control->kernel_handle : 0;
	args.flags = p->Flags.Value;
	st = nf_ioctl_status(dev->adapter->fd, DRM_IOCTL_NFENCE_DOORBELL_CREATE,
			     &args);
	if (!NT_SUCCESS(st))
		return st;
	db->kernel_handle = args.handle;
	*out = args;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTCreateDoorbell(D3DKMT_CREATE_DOORBELL *pCreateDoorbell)
{
	D3DKMT_CREATE_DOORBELL *p = pCreateDoorbell;
	struct drm_nfence_doorbell_create args;
	D3DKMT_HANDLE handle = 0;
	bool secondary;
	struct nf_hwqueue *queue;
	struct nf_doorbell *db;
	NTSTATUS st;

	if (!p || (p->Flags.Value & ~NF_DOORBELL_KNOWN) ||
	    p->PrivateDriverDataSize)
		return STATUS_INVALID_PARAMETER;
	if (p->Flags.Value & NF_DOORBELL_RESIZE)
		return STATUS_NOT_SUPPORTED;
	secondary = p->Flags.Value & NF_DOORBELL_SECONDARY;

	queue = nf_hwqueue_lookup(p->hHwQueue);
	if (!queue)
		return NF_STATUS_BAD_HANDLE;
	if (!queue->user_mode) {
		nf_object_put(&queue->base);
		return STATUS_INVALID_PARAMETER;
	}
	db = calloc(1, sizeof(*db));
	if (!db) {
		nf_object_put(&queue->base);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&db->base, &nf_doorbell_ops, &queue->base);
	db->queue = queue;
	nf_object_put(&queue->base);	/* the doorbell holds one */

	st = nf_doorbell_make(db, p, &args);
	if (NT_SUCCESS(st))
		st = nf_doorbell_map(db, queue->device->adapter->fd, &args,
				     secondary);
	/*
	 * Refused (the queue closing or with a doorbell already), it is
	 * destroyed (by the queue's destruction if under way).
	 */
	if (NT_SUCCESS(st))
		st = nf_handle_insert(&db->base, &handle);
	else
		nf_doorbell_teardown(&db->base, false);
	if (NT_SUCCESS(st)) {
		p->DoorbellCPUVirtualAddress = db->pages[NF_DB_DOORBELL];
		p->DoorbellSecondaryCPUVirtualAddress =
			db->pages[NF_DB_SECONDARY];
		p->DoorbellStatusCPUVirtualAddress = db->pages[NF_DB_STATUS];
		p->HwQueueProgressFenceLastQueuedValueCPUVirtualAddress =
			db->pages[NF_DB_LAST_QUEUED];
		p->hDoorbell = handle;
	}
	/* On success the table holds the handle's reference. */
	nf_object_put(&db->base);
	return st;
}

/* The doorbell @handle names, with a reference; NULL if none. */
static struct nf_doorbell *nf_doorbell_lookup(D3DKMT_HANDLE handle)
{
	return (struct nf_doorbell *)nf_handle_lookup(handle,
						      NF_HANDLE_DOORBELL);
}

uint64_t nf_doorbell_ring_size(D3DKMT_HANDLE handle)
{
	struct nf_doorbell *db = nf_doorbell_lookup(handle);
	uint64_t size;

	if (!db)
		return 0;
	size = db->ring ? db->ring->size : 0;
	nf_object_put(&db->base);
	return size;
}

/*
 * DOORBELL_CONNECT or DOORBELL_NOTIFY (both take the device and doorbell
 * handles, then zeros; NOTIFY's argument is CONNECT's first 16 bytes) on
 * the doorbell @handle names.
 */
static NTSTATUS nf_doorbell_call(D3DKMT_HANDLE handle, UINT flags,
				 unsigned long request)
{
	_Static_assert(sizeof(struct drm_nfence_doorbell_connect) >=
		       sizeof(struct drm_nfence_doorbell_notify) &&
		       offsetof(struct drm_nfence_doorbell_notify, handle) ==
		       offsetof(struct drm_nfence_doorbell_connect, handle),
		       "CONNECT and NOTIFY start alike");
	struct drm_nfence_doorbell_connect args;
	const struct nf_device *dev;
	struct nf_doorbell *db;
	NTSTATUS st;

	if (flags)
		return STATUS_INVALID_PARAMETER;
	db = nf_doorbell_lookup(handle);
	if (!db)
		return NF_STATUS_BAD_HANDLE;
	dev = db->queue->device;
	memset(&args, 0, sizeof(args));
	args.device = dev->kernel_handle;
	args.handle = db->kernel_handle;
	st = nf_ioctl_status(dev->adapter->fd, request, &args);
	nf_object_put(&db->base);
	return st;
}

NTSTATUS D3DKMTConnectDoorbell(const D3DKMT_CONNECT_DOORBELL *pConnectDoorbell)
{
	if (!pConnectDoorbell)
		return STATUS_INVALID_PARAMETER;
	return nf_doorbell_call(pConnectDoorbell->hDoorbell,
				pConnectDoorbell->Flags.Value,
				DRM_IOCTL_NFENCE_DOORBELL_CONNECT);
}

NTSTATUS D3DKMTNotifyWorkSubmission(const D3DKMT_NOTIFY_WORK_SUBMISSION *pNotify)
{
	if (!pNotify)
		return STATUS_INVALID_PARAMETER;
	return nf_doorbell_call(pNotify->hDoorbell, pNotify->Flags.Value,
				DRM_IOCTL_NFENCE_DOORBELL_NOTIFY);
}

NTSTATUS D3DKMTDestroyDoorbell(const D3DKMT_DESTROY_DOORBELL *pDestroyDoorbell)
{
	if (!pDestroyDoorbell)
		return STATUS_INVALID_PARAMETER;
	return nf_handle_close(pDestroyDoorbell->hDoorbell, NF_HANDLE_DOORBELL);
}
