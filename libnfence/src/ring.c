/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The ring writer of user-mode submission (NFenceRing*) and the progress
 * fence signal a user-mode queue's command buffers end with: what a UMD
 * does between its command encoder and the doorbell, following the
 * pseudocode of the WDDM 3.2 user-mode work submission documentation.
 */
#include <string.h>

#include "hwqueue.h"

/* The allocations' page size: their sizes are whole pages of it. */
#define NF_RING_PAGE	4096u

NTSTATUS NFenceRingInit(NFENCE_RING *pRing,
			const D3DKMT_CREATE_DOORBELL *pDoorbell,
			VOID *pRingBuffer, UINT RingBufferSize,
			VOID *pRingControl)
{
	uint64_t size, entries;

	if (!pRing || !pDoorbell || !pRingBuffer || !pRingControl ||
	    !pDoorbell->DoorbellCPUVirtualAddress ||
	    !pDoorbell->DoorbellStatusCPUVirtualAddress ||
	    !pDoorbell->HwQueueProgressFenceLastQueuedValueCPUVirtualAddress ||
	    RingBufferSize < sizeof(NFENCE_RING_ENTRY))
		return STATUS_INVALID_PARAMETER;
	/*
	 * The engine reads as many entries as the allocation's whole pages
	 * hold; a writer that counted fewer would put them at other slots.
	 * So RingBufferSize is the allocation's size, as created or rounded
	 * up to whole pages, and the writer counts the engine's entries.
	 */
	size = nf_doorbell_ring_size(pDoorbell->hDoorbell);
	if (!size)
		return NF_STATUS_BAD_HANDLE;
	if (RingBufferSize > size ||
	    ((uint64_t)RingBufferSize + NF_RING_PAGE - 1) / NF_RING_PAGE !=
	    size / NF_RING_PAGE)
		return STATUS_INVALID_PARAMETER;
	entries = size / sizeof(NFENCE_RING_ENTRY);
	memset(pRing, 0, sizeof(*pRing));
	pRing->hDoorbell = pDoorbell->hDoorbell;
	pRing->pEntries = pRingBuffer;
	pRing->NumEntries = entries > UINT32_MAX ? UINT32_MAX : (UINT)entries;
	pRing->pControl = pRingControl;
	pRing->pDoorbell = pDoorbell->DoorbellCPUVirtualAddress;
	pRing->pStatus = pDoorbell->DoorbellStatusCPUVirtualAddress;
	pRing->pLastQueued =
		pDoorbell->HwQueueProgressFenceLastQueuedValueCPUVirtualAddress;
	/* A ring control may be reused: go on from where it is. */
	pRing->WriteIndex = pRing->pControl->WriteIndex;
	return STATUS_SUCCESS;
}

/* Store the write index to the doorbell; the status, after a barrier. */
static UINT64 nf_ring_ring(NFENCE_RING *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(r->pDoorbell, r->WriteIndex, __ATOMIC_RELAXED);
	/* The ring before the status load: pairs with the scheduler's. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(r->pStatus, __ATOMIC_RELAXED);
}

/* Append the entry and ring until the status says it was taken. */
static NTSTATUS nf_ring_submit(NFENCE_RING *pRing,
			       D3DGPU_VIRTUAL_ADDRESS CommandBuffer,
			       UINT CommandLength, UINT64 ProgressFenceValue)
{
	volatile NFENCE_RING_ENTRY *e;
	NTSTATUS st;
	UINT64 status;

	if (pRing->WriteIndex - pRing->pControl->ReadIndex >=
	    pRing->NumEntries)
		return STATUS_DEVICE_BUSY;

	/* WDDM's order: the last queued value, then the entry. */
	*pRing->pLastQueued = ProgressFenceValue;
	e = &pRing->pEntries[pRing->WriteIndex % pRing->NumEntries];
	e->CommandBuffer = CommandBuffer;
	e->CommandLength = CommandLength;
	e->Flags = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pRing->WriteIndex++;
	pRing->pControl->WriteIndex = pRing->WriteIndex;

	for (;;) {
		status = nf_ring_ring(pRing);
		switch (status) {
		case D3DDDI_DOORBELLSTATUS_CONNECTED:
			return STATUS_SUCCESS;
		case D3DDDI_DOORBELLSTATUS_CONNECTED_NOTIFY_KMD: {
			D3DKMT_NOTIFY_WORK_SUBMISSION n = {
				.hDoorbell = pRing->hDoorbell,
			};

			pRing->Notifies++;
			return D3DKMTNotifyWorkSubmission(&n);
		}
		case D3DDDI_DOORBELLSTATUS_DISCONNECTED_RETRY: {
			D3DKMT_CONNECT_DOORBELL c = {
				.hDoorbell = pRing->hDoorbell,
			};

			pRing->Connects++;
			st = D3DKMTConnectDoorbell(&c);
			if (!NT_SUCCESS(st))
				return st;
			break;
		}
		default:
			return STATUS_DEVICE_REMOVED;
		}
	}
}

NTSTATUS NFenceRingSubmit(NFENCE_RING *pRing,
			  D3DGPU_VIRTUAL_ADDRESS CommandBuffer,
			  UINT CommandLength, UINT64 ProgressFenceValue)
{
	struct nf_object *db;
	NTSTATUS st;

	if (!pRing || !CommandLength || CommandLength % 8 || CommandBuffer % 8 ||
	    CommandLength > DRM_NFENCE_MAX_SUBMIT_SIZE)
		return STATUS_INVALID_PARAMETER;
	/*
	 * The doorbell's pages (and the pinned ring's) are this process's
	 * only while its handle is open here: a destroyed doorbell's are
	 * unmapped, and a fork()ed child's are the parent's.
	 */
	db = nf_handle_lookup(pRing->hDoorbell, NF_HANDLE_DOORBELL);
	if (!db)
		return NF_STATUS_BAD_HANDLE;
	st = nf_ring_submit(pRing, CommandBuffer, CommandLength,
			    ProgressFenceValue);
	nf_object_put(db);
	return st;
}

NTSTATUS NFenceCsSignalHwQueueProgress(NFENCE_CS *pCs, D3DKMT_HANDLE hHwQueue,
				       UINT64 Value)
{
	struct nf_hwqueue *queue;
	NTSTATUS st;

	if (!pCs)
		return STATUS_INVALID_PARAMETER;
	queue = nf_hwqueue_lookup(hHwQueue);
	if (!queue) {
		/* Sticky, as every error of the encoder. */
		if (NT_SUCCESS(pCs->Status))
			pCs->Status = NF_STATUS_BAD_HANDLE;
		return pCs->Status;
	}
	st = NFenceCsSignalNativeFenceUnlogged(pCs, &queue->progress, Value);
	nf_object_put(&queue->base);
	return st;
}
