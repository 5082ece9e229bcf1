/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_DEVICE_STATE_H
#define NFENCE_DEVICE_STATE_H

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct list_head;
struct nfence_cmp;
struct nfence_device;

bool nfence_device_lost_locked(struct nfence_cmp *cmp,
			       struct nfence_device *wdev, u32 cause,
			       struct list_head *dropped);
void nfence_device_lost(struct nfence_cmp *cmp, struct nfence_device *wdev,
			u32 cause);
int nfence_device_control_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
void nfence_device_stop_queues_locked(struct nfence_cmp *cmp,
				      struct nfence_device *wdev,
				      struct list_head *dropped);
#endif

#endif /* NFENCE_DEVICE_STATE_H */
