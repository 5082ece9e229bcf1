/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_SYNCOBJ_H__
#define __NFENCE_SYNCOBJ_H__

struct drm_device;
struct drm_file;
struct nfence_file;

void nfence_file_bindings_init(struct nfence_file *nfile);
void nfence_file_bindings_abort(struct nfence_file *nfile, int error);
void nfence_file_bindings_fini(struct nfence_file *nfile);
int nfence_syncobj_bind_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file);
int nfence_syncobj_signal_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
struct nfence_binding;
void nfence_binding_decided(struct nfence_binding *b);
#endif

#endif /* __NFENCE_SYNCOBJ_H__ */
