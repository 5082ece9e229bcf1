/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_DOORBELL_H__
#define __NFENCE_DOORBELL_H__

#include <linux/types.h>

#include <drm/drm_gem.h>

#include "nfence_cmp_types.h"
#include "nfence_table.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct nfence_adapter;
struct nfence_alloc;
struct nfence_file;
struct page;

/**
 * struct nfence_doorbell_page - a page of a doorbell the process maps
 *
 * The status word and the last queued value: a GEM object of one page,
 * mapped whole at mmap() time. Lifetime: the GEM reference count; the
 * doorbell holds one until it is destroyed, each mapping one.
 */
struct nfence_doorbell_page {
	/** @base: the GEM object */
	struct drm_gem_object base;
	/** @page: the page */
	struct page *page;
	/** @read_only: the process may not write it */
	bool read_only;
};

/**
 * struct nfence_doorbell - a user-mode queue's doorbell (D3DKMTCreateDoorbell)
 *
 * Lifetime: the GEM object's reference count. The file's doorbell table
 * holds one until the doorbell is destroyed (by DOORBELL_DESTROY, or with
 * its queue), each CPU mapping of its page holds one.
 */
struct nfence_doorbell {
	/** @base: the GEM object of the doorbell page, mapped at fault time */
	struct drm_gem_object base;
	/** @adapter: the adapter */
	struct nfence_adapter *adapter;
	/** @hwq: the queue's CMP state, until the doorbell is closed */
	struct nfence_cmp_queue *hwq;
	/** @ring: what the CMP knows of the queue's ring */
	struct nfence_cmp_ring ring;
	/** @ring_alloc: the ring buffer, pinned */
	struct nfence_alloc *ring_alloc;
	/** @control_alloc: the ring control, pinned, or NULL */
	struct nfence_alloc *control_alloc;
	/** @dummy: where the doorbell's mappings point while disconnected */
	struct page *dummy;
	/** @status: the page of the status word, until destroyed */
	struct nfence_doorbell_page *status;
	/** @last_queued: the page of the last queued value, until destroyed */
	struct nfence_doorbell_page *last_queued;
	/**
	 * @obj: its handle, kind and owner (its queue) in the file's registry
	 */
	struct nfence_object obj;
	/** @mmap_allowed: the file may mmap the doorbell's pages */
	bool mmap_allowed;
	/** @closed: destroyed; under &nfence_adapter.doorbell_lock */
	bool closed;
	/**
	 * @f1_link: on the list of an F1 or D3 transition, under
	 * &nfence_adapter.doorbell_lock
	 */
	struct list_head f1_link;
	/** @f1_slot: the physical doorbell it had when its engine went to F1 */
	u32 f1_slot;
};

void nfence_doorbell_engine_f1(struct nfence_adapter *adapter, u32 engine);
void nfence_doorbell_adapter_d3(struct nfence_adapter *adapter);
void nfence_doorbell_disconnect_all(struct nfence_adapter *adapter);
void nfence_doorbell_engine_idle(struct nfence_cmp *cmp, u32 engine);
void nfence_doorbell_f1_hold(struct nfence_adapter *adapter, bool on);
int nfence_doorbell_f1_step(struct nfence_adapter *adapter);
void nfence_doorbell_f1_hold_print(struct nfence_adapter *adapter,
				   struct drm_printer *p);
void nfence_doorbell_print(struct nfence_adapter *adapter,
			   struct drm_printer *p);
void nfence_doorbell_reset_max(struct nfence_adapter *adapter);
void nfence_doorbell_adapter_init(struct nfence_adapter *adapter);
void nfence_doorbell_adapter_fini(struct nfence_adapter *adapter);
void nfence_file_doorbells_init(struct nfence_file *nfile);
int nfence_doorbell_create_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);
void nfence_file_doorbells_drain(struct nfence_file *nfile,
				 unsigned long deadline);
int nfence_doorbell_connect_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file);
int nfence_doorbell_destroy_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file);
int nfence_doorbell_notify_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
struct drm_nfence_doorbell_create;
int nfence_doorbell_pin(struct nfence_file *nfile, struct nfence_doorbell *db,
			const struct drm_nfence_doorbell_create *args);
#endif

#endif /* __NFENCE_DOORBELL_H__ */
