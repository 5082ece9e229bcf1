/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * A fake nfence driver for host tests; see mock_drm.h.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"

#define MOCK_MAX_NODES	16
#define MOCK_MAX_FDS	4096

struct mock_node {
	dev_t dev;
	ino_t ino;
	struct mock_adapter adapter;
};

/* One open file of a fake node: its devices (a drm_file). */
struct mock_file {
	uint32_t next_handle;
	unsigned int ndevices;
	uint32_t devices[DRM_NFENCE_MAX_DEVICES_PER_FILE];
};

static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_node mock_nodes[MOCK_MAX_NODES];
static unsigned int mock_nnodes;
static struct mock_file *mock_files[MOCK_MAX_FDS];
static int mock_fail_err;

static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_close)(int);

static void mock_resolve(void)
{
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))
			dlsym(RTLD_NEXT, "ioctl");
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

struct mock_adapter mock_default_adapter(uint32_t index)
{
	struct mock_adapter a = {
		.driver_name = "nfence",
		.index = index,
		.luid_low = 0x1000 + index,
		.luid_high = 0,
		.num_engines = 3,
		.vram_mb = 64,
		.vram_visible_mb = 16,
		.sysmem_mb = 256,
		.native_fences = true,
		.optimized_default_fence = true,
		.user_mode_submission = true,
		.no_64bit_atomics = false,
		.doorbell_model = DRM_NFENCE_DOORBELL_DEDICATED,
		.num_doorbells = 16,
	};

	return a;
}

int mock_add_node(const char *dir, const char *name,
		  const struct mock_adapter *adapter)
{
	char path[4096];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	close(fd);

	pthread_mutex_lock(&mock_lock);
	if (mock_nnodes == MOCK_MAX_NODES) {
		pthread_mutex_unlock(&mock_lock);
		return -1;
	}
	mock_nodes[mock_nnodes].dev = st.st_dev;
	mock_nodes[mock_nnodes].ino = st.st_ino;
	mock_nodes[mock_nnodes].adapter = *adapter;
	mock_nnodes++;
	pthread_mutex_unlock(&mock_lock);
	return 0;
}

void mock_reset(void)
{
	pthread_mutex_lock(&mock_lock);
	mock_nnodes = 0;
	pthread_mutex_unlock(&mock_lock);
}

/* The fake node @fd is open on, or NULL; called with the lock held. */
static const struct mock_node *mock_node_of(int fd)
{
	struct stat st;
	unsigned int i;

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	for (i = 0; i < mock_nnodes; i++)
		if (mock_nodes[i].dev == st.st_dev &&
		    mock_nodes[i].ino == st.st_ino)
			return &mock_nodes[i];
	return NULL;
}

unsigned int mock_open_files(void)
{
	unsigned int n = 0;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return ~0u;
	pthread_mutex_lock(&mock_lock);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d) &&
		    mock_node_of(atoi(de->d_name)))
			n++;
	pthread_mutex_unlock(&mock_lock);
	closedir(d);
	return n;
}

unsigned int mock_live_devices(void)
{
	unsigned int n = 0;
	int fd;

	pthread_mutex_lock(&mock_lock);
	for (fd = 0; fd < MOCK_MAX_FDS; fd++)
		if (mock_files[fd])
			n += mock_files[fd]->ndevices;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

void mock_fail_next(int err)
{
	pthread_mutex_lock(&mock_lock);
	mock_fail_err = err;
	pthread_mutex_unlock(&mock_lock);
}

static void mock_copy_string(const char *s, __kernel_size_t *len, char *buf)
{
	size_t n = strlen(s);

	if (buf && *len)
		memcpy(buf, s, n < *len ? n : *len);
	*len = n;
}

static int mock_version(const struct mock_node *node, struct drm_version *v)
{
	v->version_major = 1;
	v->version_minor = 0;
	v->version_patchlevel = 0;
	mock_copy_string(node->adapter.driver_name, &v->name_len, v->name);
	mock_copy_string("20260101", &v->date_len, v->date);
	mock_copy_string("fake nfence", &v->desc_len, v->desc);
	return 0;
}

/* Answer of a query into @buf (at most 512 bytes); returns its size. */
static uint32_t mock_answer(const struct mock_adapter *a, uint32_t type,
			    void *buf)
{
	memset(buf, 0, 512);
	switch (type) {
	case DRM_NFENCE_QUERY_ADAPTER: {
		struct drm_nfence_query_adapter *q = buf;

		q->luid_low = a->luid_low;
		q->luid_high = a->luid_high;
		q->index = a->index;
		q->flags = (a->native_fences ? DRM_NFENCE_ADAPTER_NATIVE_FENCE : 0) |
			   (a->user_mode_submission ?
			    DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION : 0) |
			   (a->no_64bit_atomics ?
			    DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS : 0);
		q->num_engines = a->num_engines;
		q->num_segments = 2;
		q->timestamp_frequency = 100000000;
		return sizeof(*q);
	}
	case DRM_NFENCE_QUERY_SEGMENTS: {
		struct drm_nfence_query_segments *q = buf;

		q->num_segments = 2;
		q->segments[0].id = 1;
		q->segments[0].flags = DRM_NFENCE_SEGMENT_SYSTEM |
				       DRM_NFENCE_SEGMENT_CPU_VISIBLE;
		q->segments[0].size = (uint64_t)a->sysmem_mb << 20;
		q->segments[0].cpu_visible_size = q->segments[0].size;
		q->segments[1].id = 2;
		q->segments[1].flags = DRM_NFENCE_SEGMENT_LOCAL |
			(a->vram_visible_mb ? DRM_NFENCE_SEGMENT_CPU_VISIBLE : 0);
		q->segments[1].size = (uint64_t)a->vram_mb << 20;
		q->segments[1].cpu_visible_size = (uint64_t)a->vram_visible_mb << 20;
		return sizeof(*q) + 2 * sizeof(q->segments[0]);
	}
	case DRM_NFENCE_QUERY_ENGINES: {
		struct drm_nfence_query_engines *q = buf;
		uint32_t i;

		q->num_engines = a->num_engines;
		for (i = 0; i < a->num_engines; i++) {
			q->engines[i].ordinal = i;
			q->engines[i].engine_class = i % 3;
			q->engines[i].flags = a->user_mode_submission ?
				DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION : 0;
		}
		return sizeof(*q) + a->num_engines * sizeof(q->engines[0]);
	}
	case DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS: {
		struct drm_nfence_query_fence_caps *q = buf;

		if (a->native_fences) {
			q->flags = DRM_NFENCE_FENCE_CAP_INTRA_GPU |
				   DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
				   DRM_NFENCE_FENCE_CAP_LOG_BUFFERS |
				   (a->optimized_default_fence ?
				    DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT : 0);
			q->value_stride = 64;
			q->value_bits = a->no_64bit_atomics ? 32 : 64;
			q->max_log_entries = 4096;
			q->log_header_size = 40;
			q->log_entry_size = 48;
		}
		return sizeof(*q);
	}
	case DRM_NFENCE_QUERY_UMS_CAPS: {
		struct drm_nfence_query_ums_caps *q = buf;

		if (a->user_mode_submission) {
			q->doorbell_size = 4096;
			q->doorbell_model = a->doorbell_model;
			q->num_doorbells = a->num_doorbells;
		}
		return sizeof(*q);
	}
	case DRM_NFENCE_QUERY_TIMESTAMP: {
		struct drm_nfence_query_timestamp *q = buf;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		q->cpu_monotonic_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				      (uint64_t)ts.tv_nsec;
		q->gpu_timestamp = q->cpu_monotonic_ns / 10;
		return sizeof(*q);
	}
	}
	return 0;
}

static int mock_query(const struct mock_node *node, struct drm_nfence_query *q)
{
	char buf[512];
	uint32_t need;

	if (q->flags || q->pad || q->reserved[0] || q->reserved[1] ||
	    q->type >= DRM_NFENCE_QUERY_COUNT)
		return -EINVAL;
	need = mock_answer(&node->adapter, q->type, buf);
	if (q->size == 0) {
		q->size = need;
		return 0;
	}
	if (q->size < need)
		return -EINVAL;
	if (!q->data)
		return -EFAULT;
	memcpy((void *)(uintptr_t)q->data, buf, need);
	q->size = need;
	return 0;
}

static struct mock_file *mock_file_of(int fd)
{
	if (fd >= MOCK_MAX_FDS)
		return NULL;
	if (!mock_files[fd]) {
		mock_files[fd] = calloc(1, sizeof(*mock_files[fd]));
		if (mock_files[fd])
			mock_files[fd]->next_handle = 1;
	}
	return mock_files[fd];
}

static int mock_find_device(const struct mock_file *f, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->ndevices; i++)
		if (f->devices[i] == handle)
			return (int)i;
	return -1;
}

static int mock_device_create(int fd, struct drm_nfence_device_create *args)
{
	struct mock_file *f = mock_file_of(fd);
	uint32_t h;

	if (!f)
		return -ENOMEM;
	if (args->flags)
		return -EINVAL;
	if (f->ndevices == DRM_NFENCE_MAX_DEVICES_PER_FILE)
		return -ENOSPC;
	do {
		h = f->next_handle++;
	} while (!h || mock_find_device(f, h) >= 0);
	f->devices[f->ndevices++] = h;
	args->handle = h;
	return 0;
}

static int mock_device_destroy(int fd, struct drm_nfence_device_destroy *args)
{
	struct mock_file *f = mock_file_of(fd);
	int i;

	if (!f)
		return -ENOMEM;
	if (args->pad)
		return -EINVAL;
	i = mock_find_device(f, args->handle);
	if (i < 0)
		return -ENOENT;
	f->devices[i] = f->devices[--f->ndevices];
	return 0;
}

static int mock_dispatch(int fd, const struct mock_node *node,
			 unsigned long request, void *arg)
{
	if (request == DRM_IOCTL_VERSION)
		return mock_version(node, arg);
	if (strcmp(node->adapter.driver_name, "nfence"))
		return -ENOTTY;
	if (mock_fail_err) {
		int err = mock_fail_err;

		mock_fail_err = 0;
		return -err;
	}
	switch (request) {
	case DRM_IOCTL_NFENCE_QUERY:
		return mock_query(node, arg);
	case DRM_IOCTL_NFENCE_DEVICE_CREATE:
		return mock_device_create(fd, arg);
	case DRM_IOCTL_NFENCE_DEVICE_DESTROY:
		return mock_device_destroy(fd, arg);
	}
	return -ENOTTY;
}

/* Takes precedence over libc's ioctl() for the whole process. */
int ioctl(int fd, unsigned long request, ...)
{
	const struct mock_node *node;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	pthread_mutex_lock(&mock_lock);
	node = mock_node_of(fd);
	if (node) {
		ret = mock_dispatch(fd, node, request, arg);
		pthread_mutex_unlock(&mock_lock);
		if (ret < 0) {
			errno = -ret;
			return -1;
		}
		return ret;
	}
	pthread_mutex_unlock(&mock_lock);

	mock_resolve();
	return real_ioctl(fd, request, arg);
}

/* Closing a fake node's file destroys its devices, as the kernel does. */
int close(int fd)
{
	pthread_mutex_lock(&mock_lock);
	if (fd >= 0 && fd < MOCK_MAX_FDS && mock_files[fd]) {
		free(mock_files[fd]);
		mock_files[fd] = NULL;
	}
	pthread_mutex_unlock(&mock_lock);

	mock_resolve();
	return real_close(fd);
}
