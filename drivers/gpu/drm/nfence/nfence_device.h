/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_DEVICE_H__
#define __NFENCE_DEVICE_H__

#include <linux/kref.h>
#include <linux/types.h>

#include "nfence_table.h"

struct drm_device;
struct drm_file;
struct nfence_file;

/**
 * struct nfence_device - a D3DKMT device: one process's container of
 * contexts, allocations and synchronization objects on one adapter
 *
 * Lifetime: kref-counted. The file's handle table holds one reference from
 * create until destroy (or file close); lookups take their own with
 * nfence_device_lookup() and drop it with nfence_device_put().
 */
struct nfence_device {
	/** @ref: reference count */
	struct kref ref;
	/** @file: the file that created the device; outlives it */
	struct nfence_file *file;
	/**
	 * @obj: its handle, kind and owner (none) in the file's registry
	 */
	struct nfence_object obj;
	/** @error: the device is in error (device lost) */
	bool error;
	/**
	 * @error_cause: &enum drm_nfence_device_error, why it is in error
	 * (the first cause); under &nfence_cmp.lock
	 */
	u32 error_cause;
	/**
	 * @fault_va: GPU VA of the first fault of one of its contexts; under
	 * &nfence_cmp.lock, as are @fault_reason and @fault_context
	 */
	u64 fault_va;
	/** @fault_reason: &enum drm_nfence_fault_reason of that fault */
	u32 fault_reason;
	/** @fault_context: handle of the context that faulted */
	u32 fault_context;
	/** @dead: destroyed; no new object may join it (see nfence_device_mark_dead()) */
	bool dead;
	/**
	 * @fences: the local handles that created fences of it
	 * (&nfence_fence_local.dev_link), until it goes into error, which
	 * makes those fences AlwaysSignaled by this list alone; under the
	 * lock of its file's fence handle table
	 */
	struct list_head fences;
};

struct nfence_device *nfence_device_lookup(struct nfence_file *nfile,
					   u32 handle);
void nfence_device_put(struct nfence_device *wdev);
void nfence_file_devices_init(struct nfence_file *nfile);
int nfence_device_create_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);
int nfence_device_destroy_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);

#endif /* __NFENCE_DEVICE_H__ */
