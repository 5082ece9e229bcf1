/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_WAIT_H__
#define __NFENCE_WAIT_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct nfence_file;

void nfence_file_waits_init(struct nfence_file *nfile);
void nfence_file_waits_cancel(struct nfence_file *nfile);
void nfence_file_waits_fini(struct nfence_file *nfile);
void nfence_file_waits_abort(struct nfence_file *nfile, int error);
int nfence_fence_wait_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);

#endif /* __NFENCE_WAIT_H__ */
