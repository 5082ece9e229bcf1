/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#ifndef NFENCE_LOGGING_H
#define NFENCE_LOGGING_H

struct drm_device;
struct drm_file;
struct nfence_adapter;
struct nfence_cmp_queue;

unsigned int nfence_logging_read_signals(struct nfence_adapter *adapter,
					 struct nfence_cmp_queue *hw,
					 bool *scanned);
int nfence_logging_level_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file);
int nfence_log_read_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);

#endif /* NFENCE_LOGGING_H */
