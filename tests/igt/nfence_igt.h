/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Helpers shared by the nfence IGT tests.
 *
 * Naming follows IGT: __nfence_foo() returns 0 or -errno and never
 * asserts; nfence_foo() asserts success (failing the running subtest) and
 * returns the useful value.
 */
#ifndef NFENCE_IGT_H
#define NFENCE_IGT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <drm/nfence_drm.h>

#define NFENCE_DRIVER_NAME	"nfence"
#define NFENCE_MAX_ADAPTERS	8

/* Render nodes and adapters */
bool nfence_is_nfence(int fd);
int nfence_count_adapters(void);
int __nfence_open_adapter(unsigned int index);
int nfence_open_adapter(unsigned int index);
int nfence_open(void);

/* Module parameters (/sys/module/nfence/parameters) */
bool nfence_param_u64(const char *name, uint64_t *value);
bool nfence_param_bool(const char *name, bool *value);

/* DRM_IOCTL_NFENCE_QUERY */
int __nfence_query(int fd, struct drm_nfence_query *q);
uint32_t nfence_query_size(int fd, uint32_t type);
uint32_t nfence_query(int fd, uint32_t type, void *data, uint32_t size);
void *nfence_query_alloc(int fd, uint32_t type, uint32_t *size);
void nfence_query_adapter(int fd, struct drm_nfence_query_adapter *adapter);
void nfence_query_timestamp(int fd, struct drm_nfence_query_timestamp *ts);
const char *nfence_query_name(uint32_t type);

/* DRM_IOCTL_NFENCE_DEVICE_CREATE / DESTROY */
int __nfence_device_create(int fd, struct drm_nfence_device_create *create);
uint32_t nfence_device_create(int fd);
int __nfence_device_destroy(int fd, struct drm_nfence_device_destroy *destroy);
int __nfence_device_destroy_handle(int fd, uint32_t handle);
void nfence_device_destroy(int fd, uint32_t handle);

/* debugfs (/sys/kernel/debug/dri/<card minor>) */
int __nfence_debugfs_dir(int fd);
int nfence_debugfs_dir(int fd);
int __nfence_debugfs_read(int dir, const char *file, char *buf, size_t size);
int __nfence_debugfs_get(int dir, const char *file, const char *key,
			 char *value, size_t size);
int __nfence_debugfs_get_u64(int dir, const char *file, const char *key,
			     uint64_t *value);
uint64_t nfence_debugfs_get_u64(int dir, const char *file, const char *key);
int64_t nfence_live_devices(int fd);

/* misc */
uint64_t nfence_monotonic_ns(void);
void *nfence_readonly_page(size_t *size);

#endif /* NFENCE_IGT_H */
