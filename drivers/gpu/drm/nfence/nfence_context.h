/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CONTEXT_H__
#define __NFENCE_CONTEXT_H__

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>

#include "nfence_cmp_types.h"
#include "nfence_table.h"

struct drm_device;
struct drm_file;
struct nfence_adapter;
struct nfence_device;
struct nfence_file;

/**
 * struct nfence_context - a context on one engine (D3DKMTCreateContextVirtual)
 *
 * Lifetime: kref-counted; the file's context table holds one reference until
 * destroy, each of its hardware queues holds one.
 */
struct nfence_context {
	/** @ref: reference count */
	struct kref ref;
	/** @device: the device (a reference) */
	struct nfence_device *device;
	/** @adapter: the adapter */
	struct nfence_adapter *adapter;
	/**
	 * @obj: its handle, kind and owner (its device) in the file's registry
	 */
	struct nfence_object obj;
	/** @engine: engine ordinal */
	u32 engine;
	/** @queues: its hardware queues; under &nfence_cmp.lock */
	struct list_head queues;
	/** @dead: destroyed; under &nfence_file.sched_lock */
	bool dead;
	/** @hw: what the CMP knows of it (suspended); under &nfence_cmp.lock */
	struct nfence_cmp_context hw;
	/** @faulted: a GPU fault stopped it; under &nfence_cmp.lock */
	bool faulted;
	/** @fault_va: GPU VA of the first fault; under &nfence_cmp.lock */
	u64 fault_va;
	/** @fault_reason: &enum drm_nfence_fault_reason; under &nfence_cmp.lock */
	u32 fault_reason;
};

void nfence_context_put(struct nfence_context *ctx);
struct nfence_context *nfence_context_lookup(struct nfence_file *nfile,
					     u32 device, u32 handle);

int nfence_context_create_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int nfence_context_control_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
int nfence_context_destroy_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
void nfence_context_fault_locked(struct nfence_context *ctx, u64 va,
				 u32 reason);

#endif /* __NFENCE_CONTEXT_H__ */
