/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_WINDOW_H__
#define __NFENCE_WINDOW_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct nfence_file;
struct page;

int nfence_window_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int nfence_window_add(struct nfence_file *nfile, struct page *page,
		      u32 *index, u64 *mmap_offset);
void nfence_window_remove(struct nfence_file *nfile, u32 index);
void nfence_file_window_fini(struct nfence_file *nfile);

#endif /* __NFENCE_WINDOW_H__ */
