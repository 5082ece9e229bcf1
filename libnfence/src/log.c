/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Reading a hardware queue's native fence log buffers (WDDM 3.2) through
 * the kernel (DRM_IOCTL_NFENCE_LOG_READ): what a tool uses, with no GPU VA.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "hwqueue.h"
#include "syncobj.h"

/* The D3DKMT layouts are the uapi's, byte for byte. */
_Static_assert(sizeof(DXGK_NATIVE_FENCE_LOG_HEADER) ==
	       sizeof(struct drm_nfence_log_header), "log header size");
_Static_assert(sizeof(DXGK_NATIVE_FENCE_LOG_ENTRY) ==
	       sizeof(struct drm_nfence_log_entry), "log entry size");
_Static_assert(sizeof(ULARGE_INTEGER) == 8 &&
	       offsetof(DXGK_NATIVE_FENCE_LOG_HEADER,
			AtomicWraparoundAndEntryIndex.LowPart) ==
	       offsetof(struct drm_nfence_log_header, first_free_entry_index) &&
	       offsetof(DXGK_NATIVE_FENCE_LOG_HEADER,
			AtomicWraparoundAndEntryIndex.HighPart) ==
	       offsetof(struct drm_nfence_log_header, wraparound_count),
	       "AtomicWraparoundAndEntryIndex: the index is the low half");
_Static_assert(offsetof(DXGK_NATIVE_FENCE_LOG_HEADER, NumberOfEntries) ==
	       offsetof(struct drm_nfence_log_header, num_entries),
	       "NumberOfEntries");
_Static_assert(offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY,
			FenceObservedGpuTimestamp) ==
	       offsetof(struct drm_nfence_log_entry, observed_gpu_timestamp),
	       "FenceObservedGpuTimestamp");
_Static_assert(offsetof(DXGK_NATIVE_FENCE_LOG_ENTRY, FenceEndGpuTimestamp) ==
	       offsetof(struct drm_nfence_log_entry, end_gpu_timestamp),
	       "FenceEndGpuTimestamp");
_Static_assert(DXGK_NATIVE_FENCE_LOG_TYPE_WAITS == DRM_NFENCE_LOG_TYPE_WAITS &&
	       DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS ==
	       DRM_NFENCE_LOG_TYPE_SIGNALS &&
	       DXGK_NATIVE_FENCE_LOG_OPERATION_SIGNAL_EXECUTED ==
	       DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED &&
	       DXGK_NATIVE_FENCE_LOG_OPERATION_WAIT_UNBLOCKED ==
	       DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED &&
	       NFENCE_NATIVE_FENCE_LOG_OVERRUN == DRM_NFENCE_LOG_READ_OVERRUN &&
	       D3DDDI_LOGGING_LEVEL_DEFAULT == DRM_NFENCE_LOGGING_LEVEL_DEFAULT &&
	       D3DDDI_LOGGING_LEVEL_ALL == DRM_NFENCE_LOGGING_LEVEL_ALL &&
	       NFENCE_LOGGING_RECREATE == DRM_NFENCE_LOGGING_RECREATE,
	       "log values");

/*
 * The kernel's entries name fences by its handles on @adapter's file (what
 * NFenceCs*Logged() wrote): give back the D3DKMT handles (see
 * nf_syncobj_user_handle()). A run of entries naming one fence costs one
 * look.
 */
static void nf_log_user_handles(const struct nf_adapter *adapter,
				DXGK_NATIVE_FENCE_LOG_ENTRY *entries, UINT count)
{
	D3DKMT_HANDLE kernel_prev = 0, user_prev = 0;
	UINT i;

	for (i = 0; i < count; i++) {
		if (!i || entries[i].hNativeFence != kernel_prev) {
			kernel_prev = entries[i].hNativeFence;
			user_prev = nf_syncobj_user_handle(adapter, kernel_prev);
		}
		entries[i].hNativeFence = user_prev;
	}
}

NTSTATUS NFenceReadNativeFenceLog(NFENCE_READNATIVEFENCELOG *pRead)
{
	struct drm_nfence_log_read args;
	const struct nf_adapter *adapter;
	struct nf_hwqueue *queue;
	NTSTATUS st;

	if (!pRead || (pRead->Type != DXGK_NATIVE_FENCE_LOG_TYPE_WAITS &&
		       pRead->Type != DXGK_NATIVE_FENCE_LOG_TYPE_SIGNALS) ||
	    (pRead->NumEntries && !pRead->pEntries))
		return STATUS_INVALID_PARAMETER;
	queue = nf_hwqueue_lookup(pRead->hHwQueue);
	if (!queue)
		return NF_STATUS_BAD_HANDLE;
	memset(&args, 0, sizeof(args));
	args.device = queue->device->kernel_handle;
	args.hwqueue = queue->kernel_handle;
	args.type = pRead->Type;
	args.cursor = pRead->Cursor;
	args.entries_ptr = (uint64_t)(uintptr_t)pRead->pEntries;
	args.num_entries = pRead->NumEntries;
	adapter = queue->device->adapter;
	st = nf_ioctl_status(adapter->fd, DRM_IOCTL_NFENCE_LOG_READ, &args);
	if (NT_SUCCESS(st))
		nf_log_user_handles(adapter, pRead->pEntries, args.num_entries);
	nf_object_put(&queue->base);
	if (!NT_SUCCESS(st))
		return st;
	pRead->Cursor = args.cursor;
	pRead->NumEntries = args.num_entries;
	pRead->Flags = args.status;
	memcpy(&pRead->Header, &args.header, sizeof(pRead->Header));
	pRead->GpuVa = args.gpu_va;
	return STATUS_SUCCESS;
}

NTSTATUS NFenceSetLoggingLevel(NFENCE_SETLOGGINGLEVEL *pLevel)
{
	struct drm_nfence_logging_level args;
	struct nf_adapter *adapter;
	int err;

	if (!pLevel || (pLevel->LoggingLevel != D3DDDI_LOGGING_LEVEL_DEFAULT &&
			pLevel->LoggingLevel != D3DDDI_LOGGING_LEVEL_ALL) ||
	    (pLevel->Flags & ~(UINT)NFENCE_LOGGING_RECREATE))
		return STATUS_INVALID_PARAMETER;
	adapter = nf_adapter_lookup(pLevel->hAdapter);
	if (!adapter)
		return NF_STATUS_BAD_HANDLE;
	memset(&args, 0, sizeof(args));
	args.level = pLevel->LoggingLevel;
	args.flags = pLevel->Flags;
	err = nf_ioctl(adapter->fd, DRM_IOCTL_NFENCE_LOGGING_LEVEL, &args);
	nf_adapter_put(adapter);
	/*
	 * The kernel sets the level before it makes the queues' buffers:
	 * when one cannot be made, the level is set all the same, and the
	 * caller needs the previous one to put it back.
	 */
	if (!err || err == ENOMEM || err == ENOSPC)
		pLevel->PreviousLevel = (D3DDDI_LOGGING_LEVEL)args.previous;
	return NFenceStatusFromErrno(err);
}
