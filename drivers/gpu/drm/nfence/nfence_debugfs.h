/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_DEBUGFS_H__
#define __NFENCE_DEBUGFS_H__

struct drm_minor;

void nfence_debugfs_init(struct drm_minor *minor);

#endif /* __NFENCE_DEBUGFS_H__ */
