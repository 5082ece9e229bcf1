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

#include <pthread.h>
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

/* Native fences */
/* NFENCE_FENCE_PAGE_SIZE: bytes to mmap() at a cpu_mmap_offset */
#define NFENCE_FENCE_PAGE_SIZE	4096
/* NFENCE_FENCE_VALID_FLAGS: every DRM_NFENCE_FENCE_* bit */
#define NFENCE_FENCE_VALID_FLAGS \
	(DRM_NFENCE_FENCE_SHARED | DRM_NFENCE_FENCE_NT_SECURITY_SHARING | \
	 DRM_NFENCE_FENCE_CROSS_ADAPTER | DRM_NFENCE_FENCE_NO_SIGNAL | \
	 DRM_NFENCE_FENCE_NO_WAIT)
/* NFENCE_FENCE_SHAREABLE: what a fence needs to be shared as an fd */
#define NFENCE_FENCE_SHAREABLE \
	(DRM_NFENCE_FENCE_SHARED | DRM_NFENCE_FENCE_NT_SECURITY_SHARING)

bool nfence_has_native_fences(int fd);
void nfence_query_fence_caps(int fd, struct drm_nfence_query_fence_caps *caps);

/* DRM_IOCTL_NFENCE_FENCE_CREATE / DESTROY / SHARE / OPEN */
int __nfence_fence_create(int fd, struct drm_nfence_fence_create *create);
uint32_t nfence_fence_create(int fd, uint32_t device, uint32_t type,
			     uint32_t flags, uint64_t initial_value,
			     struct drm_nfence_fence_mapping *mapping);
int __nfence_fence_destroy(int fd, struct drm_nfence_fence_destroy *destroy);
int __nfence_fence_destroy_handle(int fd, uint32_t handle);
void nfence_fence_destroy(int fd, uint32_t handle);
int __nfence_fence_share(int fd, struct drm_nfence_fence_share *share);
int nfence_fence_share(int fd, uint32_t handle);
int __nfence_fence_open(int fd, struct drm_nfence_fence_open *open);
uint32_t nfence_fence_open(int fd, uint32_t device, int fence_fd,
			   uint32_t flags,
			   struct drm_nfence_fence_mapping *mapping);

/* DRM_IOCTL_NFENCE_FENCE_WAIT / SIGNAL */
int __nfence_fence_wait(int fd, struct drm_nfence_fence_wait *wait);
int __nfence_fence_wait_one(int fd, uint32_t device, uint32_t handle,
			    uint64_t value, int64_t timeout_ns);
int __nfence_fence_signal(int fd, struct drm_nfence_fence_signal *signal);
int __nfence_fence_signal_one(int fd, uint32_t device, uint32_t handle,
			      uint64_t value);
void nfence_fence_signal(int fd, uint32_t device, uint32_t handle,
			 uint64_t value);
int64_t nfence_deadline_ms(unsigned int ms);

/* The CPU mapping of CurrentValue */
int __nfence_fence_mmap(int fd, uint64_t offset, int prot, void **ptr);
const volatile uint64_t *
nfence_fence_map(int fd, const struct drm_nfence_fence_mapping *mapping);
void nfence_fence_unmap(const volatile uint64_t *value);

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

/* One line of nfence_fences. */
struct nfence_debugfs_fence {
	uint64_t id;
	uint32_t type;
	uint32_t cpu_value_offset;
	uint64_t cpu_mmap_offset;
	uint64_t current;
	uint64_t monitored;
	uint64_t waiters;
};

typedef bool (*nfence_debugfs_fence_fn)(const struct nfence_debugfs_fence *f,
					void *data);
int __nfence_debugfs_fences_dir(int fd);
int nfence_debugfs_fences_dir(int fd);
int __nfence_debugfs_fences(int dir, nfence_debugfs_fence_fn fn, void *data);
int64_t nfence_debugfs_count_fences(int dir);
int __nfence_debugfs_fence(int dir, const struct drm_nfence_fence_mapping *m,
			   struct nfence_debugfs_fence *f);
void nfence_debugfs_fence(int dir, const struct drm_nfence_fence_mapping *m,
			  struct nfence_debugfs_fence *f);
int nfence_debugfs_fence_wait(int dir, const struct drm_nfence_fence_mapping *m,
			      uint64_t waiters, unsigned int timeout_ms,
			      struct nfence_debugfs_fence *f);
int nfence_debugfs_fence_wait_gone(int dir,
				   const struct drm_nfence_fence_mapping *m,
				   unsigned int timeout_ms);

/* misc */
uint64_t nfence_monotonic_ns(void);
void *nfence_readonly_page(size_t *size);
void nfence_watchdog(unsigned int seconds);
int nfence_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);
int nfence_thread_join(pthread_t thread, unsigned int timeout_ms);

#endif /* NFENCE_IGT_H */
