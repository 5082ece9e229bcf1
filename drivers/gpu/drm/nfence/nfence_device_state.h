/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_DEVICE_STATE_H
#define NFENCE_DEVICE_STATE_H

struct drm_device;
struct drm_file;

int nfence_device_control_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);

#endif /* NFENCE_DEVICE_STATE_H */
