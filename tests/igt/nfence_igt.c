// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Helpers shared by the nfence IGT tests: finding the render node of an
 * adapter by driver name (IGT's drm_open_driver() only knows its built-in
 * drivers), ioctl wrappers returning -errno, and debugfs parsing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

#define NFENCE_DRI_DIR		"/dev/dri"
#define NFENCE_DEBUGFS_ROOT	"/sys/kernel/debug"
#define NFENCE_DEBUGFS_DRI	NFENCE_DEBUGFS_ROOT "/dri"
#define NFENCE_PARAM_DIR	"/sys/module/nfence/parameters"

typedef bool (*nfence_node_fn)(int fd, uint32_t index, void *data);

static int nfence_ioctl(int fd, unsigned long request, void *arg)
{
	int err = 0;

	/* drmIoctl() restarts on EINTR and EAGAIN. */
	if (drmIoctl(fd, request, arg))
		err = -errno;
	errno = 0;
	return err;
}

/*
 * One ioctl() call: unlike drmIoctl() it does not restart on EINTR, so a
 * wait interrupted by a signal handler installed without SA_RESTART shows
 * up as -EINTR.
 */
static int nfence_ioctl_once(int fd, unsigned long request, void *arg)
{
	int err = 0;

	if (ioctl(fd, request, arg))
		err = -errno;
	errno = 0;
	return err;
}

/**
 * nfence_is_nfence: whether @fd is a DRM node of the nfence driver
 */
bool nfence_is_nfence(int fd)
{
	drmVersionPtr version;
	bool ret;

	version = drmGetVersion(fd);
	if (!version)
		return false;
	ret = version->name && !strcmp(version->name, NFENCE_DRIVER_NAME);
	drmFreeVersion(version);
	return ret;
}

/*
 * Calls @fn for every nfence render node with its open fd and its adapter
 * index; @fn returns true to keep the fd (and stop the scan), false to have
 * it closed. Returns the number of nfence render nodes visited.
 */
static int nfence_scan_render_nodes(nfence_node_fn fn, void *data)
{
	struct dirent *de;
	DIR *dir;
	int count = 0;

	dir = opendir(NFENCE_DRI_DIR);
	if (!dir)
		return 0;

	while ((de = readdir(dir))) {
		struct drm_nfence_query_adapter adapter;
		struct drm_nfence_query q;
		char path[PATH_MAX];
		int fd;

		if (strncmp(de->d_name, "renderD", 7))
			continue;

		snprintf(path, sizeof(path), NFENCE_DRI_DIR "/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;

		if (!nfence_is_nfence(fd)) {
			close(fd);
			continue;
		}

		memset(&adapter, 0, sizeof(adapter));
		memset(&q, 0, sizeof(q));
		q.type = DRM_NFENCE_QUERY_ADAPTER;
		q.size = sizeof(adapter);
		q.data = (uintptr_t)&adapter;
		if (__nfence_query(fd, &q)) {
			igt_debug("%s: adapter query failed\n", path);
			close(fd);
			continue;
		}

		count++;
		if (fn && fn(fd, adapter.index, data))
			break;
		close(fd);
	}

	closedir(dir);
	return count;
}

/**
 * nfence_count_adapters: number of nfence render nodes that answer the
 * adapter query
 */
int nfence_count_adapters(void)
{
	return nfence_scan_render_nodes(NULL, NULL);
}

struct nfence_find {
	uint32_t index;
	int fd;
};

static bool nfence_find_index(int fd, uint32_t index, void *data)
{
	struct nfence_find *find = data;

	if (index != find->index)
		return false;
	find->fd = fd;
	return true;
}

/**
 * __nfence_open_adapter: open the render node of adapter @index
 *
 * Returns the fd, or -ENODEV when there is no such adapter.
 */
int __nfence_open_adapter(unsigned int index)
{
	struct nfence_find find = { .index = index, .fd = -ENODEV };

	nfence_scan_render_nodes(nfence_find_index, &find);
	return find.fd;
}

/**
 * nfence_open_adapter: like __nfence_open_adapter(), but skips the running
 * subtest (or, in a fixture, all that follow) without such an adapter
 */
int nfence_open_adapter(unsigned int index)
{
	int fd = __nfence_open_adapter(index);

	igt_require_f(fd >= 0, "no nfence adapter %u (driver not loaded?)\n",
		      index);
	return fd;
}

/**
 * nfence_open: open adapter 0, skipping when nfence is not there
 */
int nfence_open(void)
{
	return nfence_open_adapter(0);
}

static bool nfence_param_read(const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), NFENCE_PARAM_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	return true;
}

/**
 * nfence_param_u64: read the integer module parameter @name
 *
 * Returns false when it cannot be read (module built in without sysfs
 * parameters, or not loaded).
 */
bool nfence_param_u64(const char *name, uint64_t *value)
{
	char buf[64], *end;

	if (!nfence_param_read(name, buf, sizeof(buf)))
		return false;
	errno = 0;
	*value = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return false;
	return true;
}

/**
 * nfence_param_bool: read the boolean module parameter @name ("Y"/"N")
 */
bool nfence_param_bool(const char *name, bool *value)
{
	char buf[64];

	if (!nfence_param_read(name, buf, sizeof(buf)))
		return false;
	switch (buf[0]) {
	case 'Y': case 'y': case '1':
		*value = true;
		return true;
	case 'N': case 'n': case '0':
		*value = false;
		return true;
	}
	return false;
}

/**
 * __nfence_query: DRM_IOCTL_NFENCE_QUERY, returning 0 or -errno
 */
int __nfence_query(int fd, struct drm_nfence_query *q)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_QUERY, q);
}

/**
 * nfence_query_size: the number of bytes the answer to @type needs
 */
uint32_t nfence_query_size(int fd, uint32_t type)
{
	struct drm_nfence_query q = { .type = type };

	igt_assert_eq(__nfence_query(fd, &q), 0);
	igt_assert_neq_u32(q.size, 0);
	return q.size;
}

/**
 * nfence_query: query @type into @data of @size bytes
 *
 * Returns the number of bytes written.
 */
uint32_t nfence_query(int fd, uint32_t type, void *data, uint32_t size)
{
	struct drm_nfence_query q = {
		.type = type,
		.size = size,
		.data = (uintptr_t)data,
	};

	igt_assert_eq(__nfence_query(fd, &q), 0);
	igt_assert_lte_u64(q.size, size);
	igt_assert_neq_u32(q.size, 0);
	return q.size;
}

/**
 * nfence_query_alloc: two-call protocol; returns a malloc()ed answer and
 * its size in @size
 */
void *nfence_query_alloc(int fd, uint32_t type, uint32_t *size)
{
	uint32_t needed = nfence_query_size(fd, type);
	void *data = calloc(1, needed);

	igt_assert(data);
	igt_assert_eq_u32(nfence_query(fd, type, data, needed), needed);
	if (size)
		*size = needed;
	return data;
}

void nfence_query_adapter(int fd, struct drm_nfence_query_adapter *adapter)
{
	memset(adapter, 0, sizeof(*adapter));
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_ADAPTER, adapter,
				       sizeof(*adapter)),
			  sizeof(*adapter));
}

void nfence_query_timestamp(int fd, struct drm_nfence_query_timestamp *ts)
{
	memset(ts, 0, sizeof(*ts));
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_TIMESTAMP, ts,
				       sizeof(*ts)),
			  sizeof(*ts));
}

/**
 * nfence_query_name: subtest-friendly name of a query type
 */
const char *nfence_query_name(uint32_t type)
{
	static const char * const names[DRM_NFENCE_QUERY_COUNT] = {
		[DRM_NFENCE_QUERY_ADAPTER] = "adapter",
		[DRM_NFENCE_QUERY_SEGMENTS] = "segments",
		[DRM_NFENCE_QUERY_ENGINES] = "engines",
		[DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS] = "native-fence-caps",
		[DRM_NFENCE_QUERY_UMS_CAPS] = "ums-caps",
		[DRM_NFENCE_QUERY_TIMESTAMP] = "timestamp",
	};

	if (type >= DRM_NFENCE_QUERY_COUNT || !names[type])
		return "unknown";
	return names[type];
}

/**
 * __nfence_device_create: DRM_IOCTL_NFENCE_DEVICE_CREATE, 0 or -errno
 */
int __nfence_device_create(int fd, struct drm_nfence_device_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_CREATE, create);
}

/**
 * nfence_device_create: create a device and return its (non-zero) handle
 */
uint32_t nfence_device_create(int fd)
{
	struct drm_nfence_device_create create = { 0 };

	igt_assert_eq(__nfence_device_create(fd, &create), 0);
	igt_assert_neq_u32(create.handle, 0);
	return create.handle;
}

/**
 * __nfence_device_destroy: DRM_IOCTL_NFENCE_DEVICE_DESTROY, 0 or -errno
 */
int __nfence_device_destroy(int fd, struct drm_nfence_device_destroy *destroy)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_DESTROY, destroy);
}

int __nfence_device_destroy_handle(int fd, uint32_t handle)
{
	struct drm_nfence_device_destroy destroy = { .handle = handle };

	return __nfence_device_destroy(fd, &destroy);
}

void nfence_device_destroy(int fd, uint32_t handle)
{
	igt_assert_eq(__nfence_device_destroy_handle(fd, handle), 0);
}

static void nfence_debugfs_mount(void)
{
	struct stat st;

	if (!stat(NFENCE_DEBUGFS_DRI, &st))
		return;
	/* vng/virtme normally mounts it; a bare init may not have. */
	if (mount("debugfs", NFENCE_DEBUGFS_ROOT, "debugfs", 0, NULL))
		igt_debug("mounting debugfs failed: %m\n");
}

/* The basename of /sys/dev/char/<maj>:<min>/device, e.g. "nfence.0". */
static int nfence_sysfs_device_name(const struct stat *st, char *buf,
				    size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device",
		 major(st->st_rdev), minor(st->st_rdev));
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= size)
		return -ENAMETOOLONG;
	memcpy(buf, base, strlen(base) + 1);
	return 0;
}

/* Fallback: find the dri/<N> whose "name" file says dev=<device name>. */
static int nfence_debugfs_dir_by_name(const char *devname)
{
	char needle[PATH_MAX], buf[512];
	struct dirent *de;
	int ret = -ENOENT;
	DIR *dir;

	snprintf(needle, sizeof(needle), "dev=%s", devname);
	dir = opendir(NFENCE_DEBUGFS_DRI);
	if (!dir)
		return -errno;

	while ((de = readdir(dir))) {
		const char *hit;
		int dfd, len;

		if (de->d_name[0] == '.')
			continue;
		dfd = openat(dirfd(dir), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		len = __nfence_debugfs_read(dfd, "name", buf, sizeof(buf));
		hit = len > 0 ? strstr(buf, needle) : NULL;
		if (hit && (hit[strlen(needle)] == ' ' ||
			    hit[strlen(needle)] == '\n' ||
			    hit[strlen(needle)] == '\0')) {
			ret = dfd;
			break;
		}
		close(dfd);
	}

	closedir(dir);
	return ret;
}

/**
 * __nfence_debugfs_dir: open the debugfs directory of the adapter behind
 * the DRM fd @fd
 *
 * That is /sys/kernel/debug/dri/<N> with N the minor of the adapter's card
 * node, found as /sys/dev/char/<maj>:<min>/device/drm/card<N>. Returns a
 * directory fd or -errno.
 */
int __nfence_debugfs_dir(int fd)
{
	char path[PATH_MAX], devname[256];
	struct dirent *de;
	struct stat st;
	int card = -1;
	DIR *dir;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENOTTY;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/drm",
		 major(st.st_rdev), minor(st.st_rdev));
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "card", 4))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (end == de->d_name + 4 || *end)
			continue;	/* e.g. card0-Virtual-1 */
		card = n;
		break;
	}
	closedir(dir);
	if (card < 0)
		return -ENOENT;

	nfence_debugfs_mount();

	snprintf(path, sizeof(path), NFENCE_DEBUGFS_DRI "/%d", card);
	ret = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ret >= 0)
		return ret;
	ret = -errno;

	if (!nfence_sysfs_device_name(&st, devname, sizeof(devname))) {
		int dfd = nfence_debugfs_dir_by_name(devname);

		if (dfd >= 0)
			return dfd;
	}
	return ret;
}

/**
 * nfence_debugfs_dir: __nfence_debugfs_dir(), skipping without debugfs
 */
int nfence_debugfs_dir(int fd)
{
	int dir = __nfence_debugfs_dir(fd);

	igt_require_f(dir >= 0, "no debugfs directory for the adapter: %s\n",
		      strerror(-dir));
	return dir;
}

/**
 * __nfence_debugfs_read: read all of @file in debugfs directory @dir into
 * @buf (NUL-terminated); returns the length or -errno
 */
int __nfence_debugfs_read(int dir, const char *file, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (!size)
		return -EINVAL;

	fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

/**
 * __nfence_debugfs_get: value of the first "@key: value" line of @file
 *
 * Leading blanks of a line are ignored, as is the blank after the colon.
 * Returns 0, -ENOENT if there is no such key, or another -errno.
 */
int __nfence_debugfs_get(int dir, const char *file, const char *key,
			 char *value, size_t size)
{
	size_t keylen = strlen(key);
	char buf[16384];
	char *line, *save;
	int len;

	len = __nfence_debugfs_read(dir, file, buf, sizeof(buf));
	if (len < 0)
		return len;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *v, *end;

		line += strspn(line, " \t");
		if (strncmp(line, key, keylen) || line[keylen] != ':')
			continue;

		v = line + keylen + 1;
		v += strspn(v, " \t");
		end = v + strlen(v);
		while (end > v && (end[-1] == ' ' || end[-1] == '\t' ||
				   end[-1] == '\r'))
			*--end = '\0';
		snprintf(value, size, "%s", v);
		return 0;
	}
	return -ENOENT;
}

/**
 * __nfence_debugfs_get_u64: __nfence_debugfs_get() of an integer (decimal,
 * or hex with 0x); -EINVAL if the value is not one
 */
int __nfence_debugfs_get_u64(int dir, const char *file, const char *key,
			     uint64_t *value)
{
	char buf[256], *end;
	int ret;

	ret = __nfence_debugfs_get(dir, file, key, buf, sizeof(buf));
	if (ret)
		return ret;

	errno = 0;
	*value = strtoull(buf, &end, 0);
	if (errno || end == buf || (*end && *end != ' '))
		return -EINVAL;
	return 0;
}

uint64_t nfence_debugfs_get_u64(int dir, const char *file, const char *key)
{
	uint64_t value = 0;
	int ret;

	ret = __nfence_debugfs_get_u64(dir, file, key, &value);
	igt_assert_f(ret == 0, "%s: no integer \"%s\": %s\n", file, key,
		     strerror(-ret));
	return value;
}

/**
 * nfence_live_devices: the "devices" count of nfence_adapter for the
 * adapter behind @fd, or -1 if debugfs cannot be read
 */
int64_t nfence_live_devices(int fd)
{
	uint64_t value;
	int dir, ret;

	dir = __nfence_debugfs_dir(fd);
	if (dir < 0)
		return -1;
	ret = __nfence_debugfs_get_u64(dir, "nfence_adapter", "devices",
				       &value);
	close(dir);
	return ret ? -1 : (int64_t)value;
}

uint64_t nfence_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * nfence_readonly_page: a zeroed anonymous mapping the process may only
 * read; its size is returned in @size. munmap() it when done.
 */
void *nfence_readonly_page(size_t *size)
{
	size_t sz = sysconf(_SC_PAGESIZE);
	void *ptr;

	ptr = mmap(NULL, sz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(ptr != MAP_FAILED);
	*size = sz;
	return ptr;
}

/**
 * nfence_watchdog: fail the running subtest if it is still running in
 * @seconds (igt_set_timeout()); 0 cancels
 *
 * Threads that may block must be started with nfence_thread_create() so
 * that the SIGALRM reaches the main thread.
 */
void nfence_watchdog(unsigned int seconds)
{
	igt_set_timeout(seconds, seconds ? "nfence subtest watchdog" : NULL);
}

/**
 * nfence_thread_create: pthread_create() of a thread that blocks SIGALRM
 * (the watchdog and the tests' own timers are for the main thread)
 *
 * Returns 0 or a positive error number, as pthread_create().
 */
int nfence_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t block, old;
	int ret;

	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/**
 * nfence_thread_join: join @thread if it ends within @timeout_ms
 *
 * Returns 0 when joined, ETIMEDOUT (the thread still runs) otherwise.
 */
int nfence_thread_join(pthread_t thread, unsigned int timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_timedjoin_np(thread, NULL, &ts);
}

/**
 * nfence_has_native_fences: whether the adapter behind @fd has
 * DRM_NFENCE_ADAPTER_NATIVE_FENCE
 */
bool nfence_has_native_fences(int fd)
{
	struct drm_nfence_query_adapter adapter;

	nfence_query_adapter(fd, &adapter);
	return adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
}

void nfence_query_fence_caps(int fd, struct drm_nfence_query_fence_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	igt_assert_eq_u32(nfence_query(fd, DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS,
				       caps, sizeof(*caps)),
			  sizeof(*caps));
}

/**
 * __nfence_fence_create: DRM_IOCTL_NFENCE_FENCE_CREATE, 0 or -errno
 */
int __nfence_fence_create(int fd, struct drm_nfence_fence_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_CREATE, create);
}

/**
 * nfence_fence_create: create a fence on @device and return its (non-zero)
 * handle; its mapping is returned in @mapping unless that is NULL
 */
uint32_t nfence_fence_create(int fd, uint32_t device, uint32_t type,
			     uint32_t flags, uint64_t initial_value,
			     struct drm_nfence_fence_mapping *mapping)
{
	struct drm_nfence_fence_create create = {
		.device = device,
		.type = type,
		.flags = flags,
		.initial_value = initial_value,
	};

	igt_assert_eq(__nfence_fence_create(fd, &create), 0);
	igt_assert_neq_u32(create.handle, 0);
	if (mapping)
		*mapping = create.mapping;
	return create.handle;
}

/**
 * __nfence_fence_destroy: DRM_IOCTL_NFENCE_FENCE_DESTROY, 0 or -errno
 */
int __nfence_fence_destroy(int fd, struct drm_nfence_fence_destroy *destroy)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_DESTROY, destroy);
}

int __nfence_fence_destroy_handle(int fd, uint32_t handle)
{
	struct drm_nfence_fence_destroy destroy = { .handle = handle };

	return __nfence_fence_destroy(fd, &destroy);
}

void nfence_fence_destroy(int fd, uint32_t handle)
{
	igt_assert_eq(__nfence_fence_destroy_handle(fd, handle), 0);
}

/**
 * __nfence_fence_share: DRM_IOCTL_NFENCE_FENCE_SHARE, 0 or -errno
 */
int __nfence_fence_share(int fd, struct drm_nfence_fence_share *share)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_SHARE, share);
}

/**
 * nfence_fence_share: the new fd (NT handle) of a shareable fence
 */
int nfence_fence_share(int fd, uint32_t handle)
{
	struct drm_nfence_fence_share share = { .handle = handle, .fd = -1 };

	igt_assert_eq(__nfence_fence_share(fd, &share), 0);
	igt_assert_fd(share.fd);
	return share.fd;
}

/**
 * __nfence_fence_open: DRM_IOCTL_NFENCE_FENCE_OPEN, 0 or -errno
 */
int __nfence_fence_open(int fd, struct drm_nfence_fence_open *open)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_OPEN, open);
}

/**
 * nfence_fence_open: open the shared fence @fence_fd on @device and return
 * the new local handle (and its mapping in @mapping unless NULL)
 */
uint32_t nfence_fence_open(int fd, uint32_t device, int fence_fd,
			   uint32_t flags,
			   struct drm_nfence_fence_mapping *mapping)
{
	struct drm_nfence_fence_open open = {
		.fd = fence_fd,
		.device = device,
		.flags = flags,
	};

	igt_assert_eq(__nfence_fence_open(fd, &open), 0);
	igt_assert_neq_u32(open.handle, 0);
	if (mapping)
		*mapping = open.mapping;
	return open.handle;
}

/**
 * __nfence_fence_wait: DRM_IOCTL_NFENCE_FENCE_WAIT, 0 or -errno
 *
 * A single ioctl() call, not restarted on EINTR: a wait interrupted by a
 * handler installed without SA_RESTART returns -EINTR. The deadline is
 * absolute, so calling again with the same struct is the restart.
 */
int __nfence_fence_wait(int fd, struct drm_nfence_fence_wait *wait)
{
	return nfence_ioctl_once(fd, DRM_IOCTL_NFENCE_FENCE_WAIT, wait);
}

/**
 * __nfence_fence_wait_one: wait until @handle reaches @value or the
 * absolute CLOCK_MONOTONIC deadline @timeout_ns passes
 */
int __nfence_fence_wait_one(int fd, uint32_t device, uint32_t handle,
			    uint64_t value, int64_t timeout_ns)
{
	struct drm_nfence_fence_wait wait = {
		.device = device,
		.count = 1,
		.handles = (uintptr_t)&handle,
		.values = (uintptr_t)&value,
		.timeout_ns = timeout_ns,
	};

	return __nfence_fence_wait(fd, &wait);
}

/**
 * __nfence_fence_signal: DRM_IOCTL_NFENCE_FENCE_SIGNAL, 0 or -errno
 */
int __nfence_fence_signal(int fd, struct drm_nfence_fence_signal *signal)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_FENCE_SIGNAL, signal);
}

int __nfence_fence_signal_one(int fd, uint32_t device, uint32_t handle,
			      uint64_t value)
{
	struct drm_nfence_fence_signal signal = {
		.device = device,
		.count = 1,
		.handles = (uintptr_t)&handle,
		.values = (uintptr_t)&value,
	};

	return __nfence_fence_signal(fd, &signal);
}

void nfence_fence_signal(int fd, uint32_t device, uint32_t handle,
			 uint64_t value)
{
	igt_assert_eq(__nfence_fence_signal_one(fd, device, handle, value), 0);
}

/**
 * nfence_deadline_ms: the absolute CLOCK_MONOTONIC deadline @ms from now,
 * as a wait's timeout_ns
 */
int64_t nfence_deadline_ms(unsigned int ms)
{
	return (int64_t)(nfence_monotonic_ns() + (uint64_t)ms * 1000000ull);
}

/**
 * __nfence_fence_mmap: mmap() one fence page of @fd at @offset with @prot
 * (MAP_SHARED); 0 and the address in @ptr, or -errno
 */
int __nfence_fence_mmap(int fd, uint64_t offset, int prot, void **ptr)
{
	void *p;

	p = mmap(NULL, NFENCE_FENCE_PAGE_SIZE, prot, MAP_SHARED, fd,
		 (off_t)offset);
	if (p == MAP_FAILED) {
		int err = -errno;

		errno = 0;
		return err;
	}
	*ptr = p;
	return 0;
}

/**
 * nfence_fence_map: map the CurrentValue of a DEFAULT fence read-only
 *
 * Returns a pointer to the value; release it with nfence_fence_unmap().
 */
const volatile uint64_t *
nfence_fence_map(int fd, const struct drm_nfence_fence_mapping *mapping)
{
	void *page = NULL;
	int ret;

	igt_assert_neq_u64(mapping->cpu_mmap_offset, 0);
	igt_assert_lt_u64(mapping->cpu_value_offset, NFENCE_FENCE_PAGE_SIZE);
	igt_assert_eq_u32(mapping->cpu_value_offset % 8, 0);
	ret = __nfence_fence_mmap(fd, mapping->cpu_mmap_offset, PROT_READ,
				  &page);
	igt_assert_f(ret == 0, "mmap of fence page %#" PRIx64 " failed: %s\n",
		     (uint64_t)mapping->cpu_mmap_offset, strerror(-ret));
	return (const volatile uint64_t *)((char *)page +
					   mapping->cpu_value_offset);
}

void nfence_fence_unmap(const volatile uint64_t *value)
{
	uintptr_t page = (uintptr_t)value &
		~(uintptr_t)(NFENCE_FENCE_PAGE_SIZE - 1);

	igt_assert_eq(munmap((void *)page, NFENCE_FENCE_PAGE_SIZE), 0);
}

/**
 * __nfence_debugfs_fences_dir: the debugfs directory of the adapter behind
 * @fd if it has readable nfence_fences and nfence_interrupts, else -errno
 */
int __nfence_debugfs_fences_dir(int fd)
{
	int dir = __nfence_debugfs_dir(fd);

	if (dir < 0)
		return dir;
	if (faccessat(dir, "nfence_fences", R_OK, 0) ||
	    faccessat(dir, "nfence_interrupts", R_OK, 0)) {
		int err = -errno;

		close(dir);
		return err;
	}
	return dir;
}

/**
 * nfence_debugfs_fences_dir: __nfence_debugfs_fences_dir(), skipping the
 * running subtest without it
 */
int nfence_debugfs_fences_dir(int fd)
{
	int dir = __nfence_debugfs_fences_dir(fd);

	igt_require_f(dir >= 0, "no nfence_fences in debugfs: %s\n",
		      strerror(-dir));
	return dir;
}

/*
 * "fence <id> type <t> cpu <off>:<voff> current <cv> monitored <mv>
 * waiters <n>"; 1 parsed, 0 not a fence line, -EINVAL a malformed one.
 */
static int nfence_parse_fence_line(const char *line,
				   struct nfence_debugfs_fence *f)
{
	line += strspn(line, " \t");
	if (strncmp(line, "fence ", 6))
		return 0;
	if (sscanf(line,
		   "fence %" SCNu64 " type %" SCNu32 " cpu %" SCNu64 ":%" SCNu32
		   " current %" SCNu64 " monitored %" SCNu64
		   " waiters %" SCNu64,
		   &f->id, &f->type, &f->cpu_mmap_offset, &f->cpu_value_offset,
		   &f->current, &f->monitored, &f->waiters) != 7)
		return -EINVAL;
	return 1;
}

/**
 * __nfence_debugfs_fences: call @fn for every line of nfence_fences until
 * it returns true
 *
 * Returns the number of fence lines visited, or -errno (-EINVAL for a
 * line that starts with "fence" but does not have the documented format).
 */
int __nfence_debugfs_fences(int dir, nfence_debugfs_fence_fn fn, void *data)
{
	char *line = NULL;
	size_t len = 0;
	int count = 0, ret = 0, lfd;
	FILE *file;

	lfd = openat(dir, "nfence_fences", O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return -errno;
	file = fdopen(lfd, "r");
	if (!file) {
		ret = -errno;
		close(lfd);
		return ret;
	}

	while (getline(&line, &len, file) >= 0) {
		struct nfence_debugfs_fence f;
		int parsed = nfence_parse_fence_line(line, &f);

		if (parsed < 0) {
			igt_warn("nfence_fences: malformed line: %s", line);
			ret = parsed;
			break;
		}
		if (!parsed)
			continue;
		count++;
		if (fn && fn(&f, data))
			break;
	}

	free(line);
	fclose(file);
	return ret ?: count;
}

/**
 * nfence_debugfs_count_fences: the number of global fences on the adapter
 */
int64_t nfence_debugfs_count_fences(int dir)
{
	int ret = __nfence_debugfs_fences(dir, NULL, NULL);

	igt_assert_f(ret >= 0, "reading nfence_fences failed: %s\n",
		     strerror(-ret));
	return ret;
}

struct nfence_fence_find {
	const struct drm_nfence_fence_mapping *m;
	struct nfence_debugfs_fence *f;
	bool found;
};

static bool nfence_fence_match(const struct nfence_debugfs_fence *f,
			       void *data)
{
	struct nfence_fence_find *find = data;

	if (f->cpu_mmap_offset != find->m->cpu_mmap_offset ||
	    f->cpu_value_offset != find->m->cpu_value_offset)
		return false;
	*find->f = *f;
	find->found = true;
	return true;
}

/**
 * __nfence_debugfs_fence: the nfence_fences line of the DEFAULT fence with
 * mapping @m (found by its cpu offset pair); 0, -ENOENT or -errno
 */
int __nfence_debugfs_fence(int dir, const struct drm_nfence_fence_mapping *m,
			   struct nfence_debugfs_fence *f)
{
	struct nfence_debugfs_fence tmp;
	struct nfence_fence_find find = { .m = m, .f = f ?: &tmp };
	int ret;

	if (!m->cpu_mmap_offset)
		return -EINVAL;	/* INTRA_GPU: "cpu 0:0" is not unique */
	ret = __nfence_debugfs_fences(dir, nfence_fence_match, &find);
	if (ret < 0)
		return ret;
	return find.found ? 0 : -ENOENT;
}

void nfence_debugfs_fence(int dir, const struct drm_nfence_fence_mapping *m,
			  struct nfence_debugfs_fence *f)
{
	int ret = __nfence_debugfs_fence(dir, m, f);

	igt_assert_f(ret == 0,
		     "no nfence_fences line for cpu %" PRIu64 ":%u: %s\n",
		     (uint64_t)m->cpu_mmap_offset, m->cpu_value_offset,
		     strerror(-ret));
}

/**
 * nfence_debugfs_fence_wait: poll the fence's nfence_fences line until it
 * shows @waiters waiters, for at most @timeout_ms
 *
 * Returns 0 (and the line in @f unless NULL), -ETIMEDOUT (@f holds the
 * last line read), or the error of __nfence_debugfs_fence().
 */
int nfence_debugfs_fence_wait(int dir, const struct drm_nfence_fence_mapping *m,
			      uint64_t waiters, unsigned int timeout_ms,
			      struct nfence_debugfs_fence *f)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;
	struct nfence_debugfs_fence tmp;

	if (!f)
		f = &tmp;
	for (;;) {
		int ret = __nfence_debugfs_fence(dir, m, f);

		if (ret)
			return ret;
		if (f->waiters == waiters)
			return 0;
		if (nfence_monotonic_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/**
 * nfence_debugfs_fence_wait_gone: poll until the fence's line is gone, for
 * at most @timeout_ms; 0 or -ETIMEDOUT (or another -errno)
 */
int nfence_debugfs_fence_wait_gone(int dir,
				   const struct drm_nfence_fence_mapping *m,
				   unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;

	for (;;) {
		int ret = __nfence_debugfs_fence(dir, m, NULL);

		if (ret == -ENOENT)
			return 0;
		if (ret)
			return ret;
		if (nfence_monotonic_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}
