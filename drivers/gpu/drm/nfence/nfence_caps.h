/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_CAPS_H__
#define __NFENCE_CAPS_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct nfence_gpu;
struct nfence_segment_usage;

size_t nfence_caps_size(const struct nfence_gpu *gpu, u32 type);
void nfence_caps_fill(const struct nfence_gpu *gpu,
		      struct nfence_segment_usage *usage, u32 type, void *buf);
int nfence_query_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file);

#endif /* __NFENCE_CAPS_H__ */
