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
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm/vgem_drm.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
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

/*
 * Adapter @adapter's value in the parameter's text: per-adapter parameters
 * read back as a comma-separated list whose last value repeats (the
 * driver's "module parameters"). Points at the value's first character.
 */
static const char *nfence_param_pick(const char *buf, unsigned int adapter)
{
	const char *p = buf, *comma;

	while (adapter-- && (comma = strchr(p, ',')))
		p = comma + 1;
	return p;
}

/**
 * nfence_param_u64_at: read adapter @adapter's value of the integer module
 * parameter @name
 *
 * Returns false when it cannot be read (module built in without sysfs
 * parameters, or not loaded).
 */
bool nfence_param_u64_at(const char *name, unsigned int adapter,
			 uint64_t *value)
{
	char buf[256], *end;
	const char *p;

	if (!nfence_param_read(name, buf, sizeof(buf)))
		return false;
	p = nfence_param_pick(buf, adapter);
	errno = 0;
	*value = strtoull(p, &end, 0);
	if (errno || end == p || (*end && *end != ',' && *end != '\n'))
		return false;
	return true;
}

/**
 * nfence_param_bool_at: read adapter @adapter's value of the boolean module
 * parameter @name ("Y"/"N")
 */
bool nfence_param_bool_at(const char *name, unsigned int adapter,
			  bool *value)
{
	char buf[256];
	const char *p;

	if (!nfence_param_read(name, buf, sizeof(buf)))
		return false;
	p = nfence_param_pick(buf, adapter);
	switch (p[0]) {
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
 * nfence_param_u64: read adapter 0's value of the integer module
 * parameter @name (see nfence_param_u64_at())
 */
bool nfence_param_u64(const char *name, uint64_t *value)
{
	return nfence_param_u64_at(name, 0, value);
}

/**
 * nfence_param_bool: read adapter 0's value of the boolean module
 * parameter @name
 */
bool nfence_param_bool(const char *name, bool *value)
{
	return nfence_param_bool_at(name, 0, value);
}

/**
 * nfence_param_get_u64_at: adapter @adapter's value of the integer module
 * parameter @name, failing the running subtest (or, in a fixture, all that
 * follow) if it cannot be read
 */
uint64_t nfence_param_get_u64_at(const char *name, unsigned int adapter)
{
	uint64_t value = 0;

	igt_assert_f(nfence_param_u64_at(name, adapter, &value),
		     "module parameter %s unreadable for adapter %u ("
		     NFENCE_PARAM_DIR "/%s)\n", name, adapter, name);
	return value;
}

/**
 * nfence_param_get_bool_at: adapter @adapter's value of the boolean module
 * parameter @name, failing the running subtest if it cannot be read
 */
bool nfence_param_get_bool_at(const char *name, unsigned int adapter)
{
	bool value = false;

	igt_assert_f(nfence_param_bool_at(name, adapter, &value),
		     "module parameter %s unreadable for adapter %u ("
		     NFENCE_PARAM_DIR "/%s)\n", name, adapter, name);
	return value;
}

/**
 * nfence_param_get_u64: adapter 0's value of the integer module parameter
 * @name, failing the running subtest if it cannot be read
 */
uint64_t nfence_param_get_u64(const char *name)
{
	return nfence_param_get_u64_at(name, 0);
}

/**
 * nfence_param_get_bool: adapter 0's value of the boolean module parameter
 * @name, failing the running subtest if it cannot be read
 */
bool nfence_param_get_bool(const char *name)
{
	return nfence_param_get_bool_at(name, 0);
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

/**
 * nfence_query_segment_sizes: the size of segment @id and its CPU-visible
 * part (both 0 if the adapter has no such segment)
 */
void nfence_query_segment_sizes(int fd, uint32_t id, uint64_t *size,
				uint64_t *cpu_visible_size)
{
	struct drm_nfence_query_segments *s;

	*size = 0;
	*cpu_visible_size = 0;
	s = nfence_query_alloc(fd, DRM_NFENCE_QUERY_SEGMENTS, NULL);
	for (uint32_t i = 0; i < s->num_segments; i++) {
		if (s->segments[i].id != id)
			continue;
		*size = s->segments[i].size;
		*cpu_visible_size = s->segments[i].cpu_visible_size;
	}
	free(s);
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
		[DRM_NFENCE_QUERY_SEGMENT_USAGE] = "segment-usage",
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
 * nfence_debugfs_dir: __nfence_debugfs_dir(), failing without it (debugfs
 * is always there where the tests run)
 */
int nfence_debugfs_dir(int fd)
{
	int dir = __nfence_debugfs_dir(fd);

	igt_assert_f(dir >= 0, "no debugfs directory for the adapter: %s\n",
		     strerror(-dir));
	return dir;
}

/**
 * nfence_debugfs_dir_files: nfence_debugfs_dir(), failing also unless each
 * of the @count debugfs @files (those the caller reads or writes) exists
 */
int nfence_debugfs_dir_files(int fd, const char * const *files,
			     unsigned int count)
{
	int dir = nfence_debugfs_dir(fd);

	for (unsigned int i = 0; i < count; i++)
		igt_assert_f(!faccessat(dir, files[i], F_OK, 0),
			     "no %s in debugfs: %s\n", files[i],
			     strerror(errno));
	return dir;
}

/**
 * __nfence_debugfs_write: write @value to @file in directory @dir (debugfs,
 * sysfs, or AT_FDCWD for a path);
 * 0 or -errno
 */
int __nfence_debugfs_write(int dir, const char *file, const char *value)
{
	ssize_t len = strlen(value);
	int f, ret = 0;

	f = openat(dir, file, O_WRONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	if (write(f, value, len) != len)
		ret = -errno;
	close(f);
	return ret;
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
 * nfence_assert_args_efault: each of the @count ioctl @requests fails with
 * EFAULT when its argument is NULL and when it is an unmapped address (the
 * ioctl's own argument, not a pointer inside it)
 */
void nfence_assert_args_efault(int fd, const unsigned long *requests,
			       unsigned int count)
{
	static void *const bad[] = { NULL, (void *)8 };

	for (unsigned int i = 0; i < count; i++) {
		for (unsigned int j = 0; j < ARRAY_SIZE(bad); j++) {
			errno = 0;
			igt_assert_f(ioctl(fd, requests[i], bad[j]) == -1 &&
				     errno == EFAULT,
				     "ioctl %#lx with argument %p: errno %d, "
				     "expected EFAULT\n", requests[i], bad[j],
				     errno);
		}
	}
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
 * nfence_fork_child: fork a plain child (no IGT in it: it may die as it
 * likes) running @child on its end of a socket pair, then _exit(99) if
 * @child returns; the parent's end (receive timeout 20 s) goes to *@sock
 */
pid_t nfence_fork_child(void (*child)(int sock), int *sock)
{
	struct timeval tv = { .tv_sec = 20 };
	int sv[2];
	pid_t pid;

	igt_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		      0);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		child(sv[1]);
		_exit(99);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/**
 * nfence_sysfs_write: write @value to the sysfs file @path; 0 or -errno
 */
int nfence_sysfs_write(const char *path, const char *value)
{
	return __nfence_debugfs_write(AT_FDCWD, path, value);
}

/**
 * nfence_sysfs_read: read the sysfs file @path into @buf (NUL-terminated,
 * its trailing newline dropped); the length, or -errno
 */
int nfence_sysfs_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int f;

	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, size - 1);
	close(f);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strlen(buf);
}

/*
 * The memory cgroup of nfence_cgroup_charge(): its path, and what its
 * child runs (the child's copy of @data).
 */
#define NFENCE_CGROUP_ROOT	"/sys/fs/cgroup"

static struct {
	char path[128];
	int (*setup)(void *data);
	int (*charge)(void *data);
	void *data;
} nfence_cg;

static int64_t nfence_cgroup_read(const char *file)
{
	char path[256], buf[64];
	int n;

	snprintf(path, sizeof(path), "%s/%s", nfence_cg.path, file);
	n = nfence_sysfs_read(path, buf, sizeof(buf));
	return n < 0 ? n : strtoll(buf, NULL, 10);
}

/* In the child: pin, join the cgroup, set up, charge, send the growth. */
static void nfence_cgroup_child(int sock)
{
	char path[160], pid[32];
	int64_t before, after;
	cpu_set_t one;
	int ret, cpu;

	/* One CPU, one charge stock (nfence_cgroup_lag()). */
	cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		_exit(NFENCE_CGROUP_EXIT_PIN);
	snprintf(path, sizeof(path), "%s/cgroup.procs", nfence_cg.path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (nfence_sysfs_write(path, pid))
		_exit(NFENCE_CGROUP_EXIT_JOIN);
	ret = nfence_cg.setup ? nfence_cg.setup(nfence_cg.data) : 0;
	if (ret)
		_exit(ret);
	before = nfence_cgroup_read("memory.current");
	ret = nfence_cg.charge(nfence_cg.data);
	if (ret)
		_exit(ret);
	after = nfence_cgroup_read("memory.current");
	if (before < 0 || after < 0)
		_exit(NFENCE_CGROUP_EXIT_READ);
	after -= before;
	if (write(sock, &after, sizeof(after)) != sizeof(after))
		_exit(NFENCE_CGROUP_EXIT_SEND);
	_exit(0);
}

/**
 * nfence_cgroup_charge: how much a child's work grows its memory cgroup
 *
 * Skips the subtest without cgroup2 (mounted at /sys/fs/cgroup if need
 * be) or without its memory controller. Makes a cgroup of its own
 * (nfence-igt-PID) and forks a plain child that joins it, runs @setup
 * (may be NULL), reads memory.current, runs @charge, reads memory.current
 * again and sends the difference. @setup and @charge get the child's copy
 * of @data and return 0, or an exit code of their own (1..99) that fails
 * the subtest. The cgroup is removed once the child is gone; what the
 * child made dies with it.
 *
 * Returns the growth of memory.current in bytes (what @charge made the
 * kernel charge, give or take nfence_cgroup_lag()).
 */
int64_t nfence_cgroup_charge(int (*setup)(void *data),
			     int (*charge)(void *data), void *data)
{
	char controllers[256];
	int64_t grown = -1;
	int sock, status, removed;
	ssize_t n;
	pid_t pid;

	if (access(NFENCE_CGROUP_ROOT "/cgroup.controllers", F_OK))
		igt_require_f(!system("mount -t cgroup2 none "
				      NFENCE_CGROUP_ROOT),
			      "no cgroup2 at " NFENCE_CGROUP_ROOT "\n");
	igt_require_f(nfence_sysfs_read(NFENCE_CGROUP_ROOT
					"/cgroup.controllers", controllers,
					sizeof(controllers)) > 0 &&
		      strstr(controllers, "memory"),
		      "no memory controller\n");
	nfence_sysfs_write(NFENCE_CGROUP_ROOT "/cgroup.subtree_control",
			   "+memory");
	snprintf(nfence_cg.path, sizeof(nfence_cg.path),
		 NFENCE_CGROUP_ROOT "/nfence-igt-%d", getpid());
	igt_assert_f(!mkdir(nfence_cg.path, 0755) || errno == EEXIST,
		     "mkdir %s: %s\n", nfence_cg.path, strerror(errno));
	igt_require_f(nfence_cgroup_read("memory.current") >= 0,
		      "memory controller not enabled for children\n");

	nfence_cg.setup = setup;
	nfence_cg.charge = charge;
	nfence_cg.data = data;
	pid = nfence_fork_child(nfence_cgroup_child, &sock);
	/* The child may take longer than the socket's timeout: wait first. */
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	n = read(sock, &grown, sizeof(grown));
	close(sock);
	removed = rmdir(nfence_cg.path) ? -errno : 0;
	igt_assert_f(WIFEXITED(status) && !WEXITSTATUS(status),
		     "child status 0x%x (exit %d)\n", status,
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	igt_assert_eq(n, sizeof(grown));
	igt_assert_eq(removed, 0);
	return grown;
}

/**
 * nfence_cgroup_lag: how far memory.current may lag behind the kernel
 * memory charged to the cgroup of nfence_cgroup_charge(), in bytes
 *
 * The memory controller charges memory.current ahead, in batches of
 * MEMCG_CHARGE_BATCH (64) pages whose unused rest a per-CPU stock keeps
 * for the next charges of the same cgroup, and charges slab objects in
 * bytes out of a per-CPU stock of less than two pages. What the child
 * charges between its two readings may first come out of stocks filled
 * before the first: memory.current then grows by less than was charged.
 * The child runs on one CPU only, from before it joins the cgroup, so
 * only that CPU's stocks ever hold the cgroup's charge: at most 66 pages.
 */
int64_t nfence_cgroup_lag(void)
{
	return (64 + 2) * sysconf(_SC_PAGESIZE);
}

/**
 * nfence_assert_charged: fail the subtest unless @grown (a growth of
 * memory.current, nfence_cgroup_charge()) shows @count objects, @what, of
 * at least @each bytes of kernel memory each charged, less
 * nfence_cgroup_lag()
 *
 * The objects must outweigh twice the lag, or their loss would not show.
 */
void nfence_assert_charged(int64_t grown, uint64_t count, uint64_t each,
			   const char *what)
{
	int64_t total = count * each, lag = nfence_cgroup_lag();

	igt_assert_f(total >= 2 * lag,
		     "%" PRIu64 " %s of %" PRIu64 " bytes do not outweigh "
		     "twice the lag of %" PRId64 " bytes\n", count, what, each,
		     lag);
	igt_info("%" PRIu64 " %s of at least %" PRIu64 " bytes: the cgroup "
		 "grew by %" PRId64 " bytes (at least %" PRId64 " expected: "
		 "%" PRId64 " less a lag of %" PRId64 ")\n", count, what, each,
		 grown, total - lag, total, lag);
	igt_assert_f(grown >= total - lag,
		     "%" PRIu64 " %s: the cgroup grew by %" PRId64 " bytes, "
		     "less than %" PRId64 "\n", count, what, grown,
		     total - lag);
}

/**
 * nfence_wait_in_ioctl: wait until thread @tid of process @pid sleeps in
 * an ioctl (/proc/PID/task/TID/syscall names ioctl), failing after
 * @timeout_ms: a wait it started is then queued, not about to start
 */
void nfence_wait_in_ioctl(pid_t pid, pid_t tid, unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;
	char path[64], buf[64];
	long nr = -1;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	for (;;) {
		f = open(path, O_RDONLY | O_CLOEXEC);
		igt_assert_f(f >= 0, "%s: %m\n", path);
		n = read(f, buf, sizeof(buf) - 1);
		close(f);
		if (n > 0) {
			buf[n] = '\0';
			nr = strtol(buf, NULL, 10);
			/* "running" while it runs: then no number. */
			if (nr == SYS_ioctl)
				break;
		}
		igt_assert_f(nfence_monotonic_ns() < end, "task %d/%d not in an "
			     "ioctl after %u ms (syscall %ld)\n", (int)pid,
			     (int)tid, timeout_ms, nr);
		usleep(1000);
	}
	/* In the ioctl, maybe not yet asleep: give it a moment more. */
	usleep(20 * 1000);
}

static void *nfence_cpu_waiter_main(void *data)
{
	struct nfence_cpu_waiter *w = data;
	int ret;

	__atomic_store_n(&w->tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	ret = __nfence_fence_wait_one(w->fd, w->device, w->handle, w->value,
				      w->deadline);
	w->done_ns = nfence_monotonic_ns();
	__atomic_store_n(&w->ret, ret, __ATOMIC_SEQ_CST);
	return NULL;
}

/**
 * nfence_cpu_waiter_start: start a thread (nfence_thread_create()) doing
 * FENCE_WAIT of @handle for @value until @deadline, and return once it
 * sleeps in that ioctl (it has not returned by then)
 */
void nfence_cpu_waiter_start(struct nfence_cpu_waiter *w, int fd,
			     uint32_t device, uint32_t handle, uint64_t value,
			     int64_t deadline)
{
	uint64_t end = nfence_monotonic_ns() + 5000 * 1000000ull;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->device = device;
	w->handle = handle;
	w->value = value;
	w->deadline = deadline;
	w->ret = 1;
	igt_assert_eq(nfence_thread_create(&w->thread, nfence_cpu_waiter_main,
					   w), 0);
	while (!__atomic_load_n(&w->tid, __ATOMIC_SEQ_CST)) {
		igt_assert(nfence_monotonic_ns() < end);
		usleep(1000);
	}
	nfence_wait_in_ioctl(getpid(), w->tid, 5000);
	igt_assert_eq(__atomic_load_n(&w->ret, __ATOMIC_SEQ_CST), 1);
}

/**
 * nfence_cpu_waiter_join: join the waiter, failing if it still waits after
 * @timeout_ms; its FENCE_WAIT's result
 */
int nfence_cpu_waiter_join(struct nfence_cpu_waiter *w,
			   unsigned int timeout_ms)
{
	igt_assert_f(nfence_thread_join(w->thread, timeout_ms) == 0,
		     "the CPU waiter still waits after %u ms\n", timeout_ms);
	return __atomic_load_n(&w->ret, __ATOMIC_SEQ_CST);
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

static sigjmp_buf nfence_access_env;
static volatile sig_atomic_t nfence_access_signo;

static void nfence_access_handler(int sig)
{
	nfence_access_signo = sig;
	siglongjmp(nfence_access_env, 1);
}

/**
 * nfence_access_faults: whether reading *@p into *@value (or, with @write,
 * writing *@value to @p) raises SIGSEGV or SIGBUS, whose number goes to
 * *@signo (0 if none). The handlers are the caller's again afterwards.
 */
bool nfence_access_faults(volatile uint64_t *p, bool write, uint64_t *value,
			  int *signo)
{
	struct sigaction sa = { .sa_handler = nfence_access_handler };
	struct sigaction old_segv, old_bus;
	bool faulted;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	nfence_access_signo = 0;
	if (sigsetjmp(nfence_access_env, 1) == 0) {
		if (write)
			*p = *value;
		else
			*value = *p;
		faulted = false;
	} else {
		faulted = true;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	*signo = nfence_access_signo;
	return faulted;
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
 * nfence_debugfs_fences_dir: __nfence_debugfs_fences_dir(), failing the
 * running subtest (or, in a fixture, all that follow) without it
 */
int nfence_debugfs_fences_dir(int fd)
{
	int dir = __nfence_debugfs_fences_dir(fd);

	igt_assert_f(dir >= 0, "no nfence_fences or nfence_interrupts in "
		     "debugfs: %s\n", strerror(-dir));
	return dir;
}

/*
 * "fence <id> type <t> cpu <off>:<voff> current <cv> monitored <mv>
 * waiters <n>", then any of " always_signaled", " cv_vram", " mv_vram";
 * 1 parsed, 0 not a fence line, -EINVAL a malformed one.
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
	f->cv_vram = strstr(line, " cv_vram");
	f->mv_vram = strstr(line, " mv_vram");
	return 1;
}

/*
 * The lines of a debugfs file, one at a time: nfence_lines_open(), then
 * nfence_lines_next() until it returns NULL, then nfence_lines_close().
 */
struct nfence_lines {
	FILE *file;
	char *line;
	size_t len;
};

static int nfence_lines_open(struct nfence_lines *l, int dir, const char *name)
{
	int lfd, ret;

	memset(l, 0, sizeof(*l));
	lfd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return -errno;
	l->file = fdopen(lfd, "r");
	if (!l->file) {
		ret = -errno;
		close(lfd);
		return ret;
	}
	return 0;
}

static const char *nfence_lines_next(struct nfence_lines *l)
{
	return getline(&l->line, &l->len, l->file) >= 0 ? l->line : NULL;
}

static void nfence_lines_close(struct nfence_lines *l)
{
	free(l->line);
	fclose(l->file);
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
	struct nfence_lines lines;
	int count = 0, ret;
	const char *line;

	ret = nfence_lines_open(&lines, dir, "nfence_fences");
	if (ret)
		return ret;
	while ((line = nfence_lines_next(&lines))) {
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
	nfence_lines_close(&lines);
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

/* GPU work: allocations, contexts, hardware queues, submission */

/**
 * __nfence_alloc_create: DRM_IOCTL_NFENCE_ALLOC_CREATE, 0 or -errno
 */
int __nfence_alloc_create(int fd, struct drm_nfence_alloc_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_ALLOC_CREATE, create);
}

/**
 * nfence_alloc_create: create an allocation of @size bytes in @segment_id
 * and return its (non-zero) handle; its GPU VA in @gpu_va unless NULL
 */
uint32_t nfence_alloc_create(int fd, uint32_t device, uint64_t size,
			     uint32_t segment_id, uint32_t flags,
			     uint64_t *gpu_va)
{
	struct drm_nfence_alloc_create create = {
		.device = device,
		.flags = flags,
		.size = size,
		.segment_id = segment_id,
	};
	int ret;

	ret = __nfence_alloc_create(fd, &create);
	igt_assert_f(ret == 0, "alloc of %" PRIu64 " bytes in segment %u "
		     "(flags %#x) failed: %s\n", size, segment_id, flags,
		     strerror(-ret));
	igt_assert_neq_u32(create.handle, 0);
	igt_assert_neq_u64(create.gpu_va, 0);
	if (gpu_va)
		*gpu_va = create.gpu_va;
	return create.handle;
}

/**
 * __nfence_alloc_destroy: DRM_IOCTL_NFENCE_ALLOC_DESTROY, 0 or -errno
 */
int __nfence_alloc_destroy(int fd, struct drm_nfence_alloc_destroy *destroy)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_ALLOC_DESTROY, destroy);
}

int __nfence_alloc_destroy_handle(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_alloc_destroy destroy = {
		.device = device,
		.handle = handle,
	};

	return __nfence_alloc_destroy(fd, &destroy);
}

void nfence_alloc_destroy(int fd, uint32_t device, uint32_t handle)
{
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, device, handle), 0);
}

/**
 * __nfence_alloc_lock: DRM_IOCTL_NFENCE_ALLOC_LOCK, 0 or -errno
 */
int __nfence_alloc_lock(int fd, struct drm_nfence_alloc_lock *lock)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_ALLOC_LOCK, lock);
}

/**
 * nfence_alloc_lock: the mmap offset of a CPU-visible allocation; the
 * number of bytes to map in @size unless NULL
 */
uint64_t nfence_alloc_lock(int fd, uint32_t device, uint32_t handle,
			   uint64_t *size)
{
	struct drm_nfence_alloc_lock lock = {
		.device = device,
		.handle = handle,
	};

	igt_assert_eq(__nfence_alloc_lock(fd, &lock), 0);
	igt_assert_neq_u64(lock.mmap_offset, 0);
	igt_assert_neq_u64(lock.size, 0);
	if (size)
		*size = lock.size;
	return lock.mmap_offset;
}

/**
 * nfence_alloc_map: Lock2 and mmap() a CPU-visible allocation read/write;
 * munmap() the result (of *@size bytes) when done
 */
void *nfence_alloc_map(int fd, uint32_t device, uint32_t handle,
		       uint64_t *size)
{
	uint64_t sz, offset = nfence_alloc_lock(fd, device, handle, &sz);
	void *p;

	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)offset);
	igt_assert_f(p != MAP_FAILED, "mmap of allocation %u at %#" PRIx64
		     " failed: %m\n", handle, offset);
	if (size)
		*size = sz;
	return p;
}

/**
 * nfence_bo_create: an allocation and, if the CPU can see it (requested
 * in system memory or CPU_VISIBLE), its mapping
 */
void nfence_bo_create(int fd, uint32_t device, uint64_t size,
		      uint32_t segment_id, uint32_t flags,
		      struct nfence_bo *bo)
{
	struct drm_nfence_alloc_create create = {
		.device = device,
		.flags = flags,
		.size = size,
		.segment_id = segment_id,
	};
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = __nfence_alloc_create(fd, &create);
	igt_assert_f(ret == 0, "alloc of %" PRIu64 " bytes in segment %u "
		     "(flags %#x) failed: %s\n", size, segment_id, flags,
		     strerror(-ret));
	igt_assert_neq_u32(create.handle, 0);
	igt_assert_neq_u64(create.gpu_va, 0);
	bo->fd = fd;
	bo->device = device;
	bo->handle = create.handle;
	bo->segment_id = create.placed_segment_id;
	bo->gpu_va = create.gpu_va;
	bo->size = size;
	/* Demoted VRAM is only mappable if it was asked to be. */
	if (segment_id == NFENCE_SEGMENT_SYSTEM ||
	    (flags & DRM_NFENCE_ALLOC_CPU_VISIBLE)) {
		bo->cpu = nfence_alloc_map(fd, device, bo->handle, &bo->size);
		igt_assert_lte_u64(size, bo->size);
	}
}

/* munmap() the allocation's CPU mapping, if any. */
void nfence_bo_unmap(struct nfence_bo *bo)
{
	if (bo->cpu)
		igt_assert_eq(munmap(bo->cpu, bo->size), 0);
	bo->cpu = NULL;
}

void nfence_bo_destroy(struct nfence_bo *bo)
{
	nfence_bo_unmap(bo);
	if (bo->handle)
		nfence_alloc_destroy(bo->fd, bo->device, bo->handle);
	bo->handle = 0;
}

/**
 * nfence_send_fd: send @sfd over the unix socket @sock (SCM_RIGHTS, one
 * byte of data); 0 or -errno
 */
int nfence_send_fd(int sock, int sfd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;

	memset(cbuf, 0, sizeof(cbuf));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &sfd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/**
 * nfence_recv_fd: receive an fd sent by nfence_send_fd() (close-on-exec);
 * the fd or -errno (-EPROTO for a message without one)
 */
int nfence_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	int rfd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -errno;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_level != SOL_SOCKET ||
	    cmsg->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&rfd, CMSG_DATA(cmsg), sizeof(int));
	return rfd;
}

/**
 * __nfence_doorbell_create: DRM_IOCTL_NFENCE_DOORBELL_CREATE, 0 or -errno
 */
int __nfence_doorbell_create(int fd, struct drm_nfence_doorbell_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DOORBELL_CREATE, create);
}

/**
 * __nfence_doorbell_connect: DRM_IOCTL_NFENCE_DOORBELL_CONNECT, 0 or -errno
 */
int __nfence_doorbell_connect(int fd,
			      struct drm_nfence_doorbell_connect *connect)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DOORBELL_CONNECT, connect);
}

/**
 * __nfence_doorbell_connect_once: one DRM_IOCTL_NFENCE_DOORBELL_CONNECT
 * call, not restarted on EINTR (a wait for a doorbell interrupted by a
 * handler installed without SA_RESTART returns -EINTR), 0 or -errno
 */
int __nfence_doorbell_connect_once(int fd,
				   struct drm_nfence_doorbell_connect *connect)
{
	return nfence_ioctl_once(fd, DRM_IOCTL_NFENCE_DOORBELL_CONNECT, connect);
}

/**
 * __nfence_doorbell_destroy: DRM_IOCTL_NFENCE_DOORBELL_DESTROY, 0 or -errno
 */
int __nfence_doorbell_destroy(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_doorbell_destroy destroy = {
		.device = device,
		.handle = handle,
	};

	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DOORBELL_DESTROY, &destroy);
}

/**
 * nfence_tracefs: the tracefs directory with nfence's events, NULL if none
 */
const char *nfence_tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(dirs); i++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/events/nfence", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	return NULL;
}

/**
 * nfence_trace_write: write @what to tracefs file @file, failing the subtest
 * if it cannot
 */
void nfence_trace_write(const char *dir, const char *file, const char *what)
{
	char path[160];
	int tfd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	tfd = open(path, O_WRONLY | O_TRUNC);
	igt_assert_f(tfd >= 0, "open %s: %s\n", path, strerror(errno));
	igt_assert_eq(write(tfd, what, strlen(what)), (ssize_t)strlen(what));
	close(tfd);
}

/**
 * nfence_trace_read: the whole trace buffer of @dir as text (free() it)
 */
char *nfence_trace_read(const char *dir)
{
	size_t size = 1 << 20, len = 0;
	char path[160], *buf = malloc(size);
	ssize_t n;
	int tfd;

	igt_assert(buf);
	snprintf(path, sizeof(path), "%s/trace", dir);
	tfd = open(path, O_RDONLY);
	igt_assert(tfd >= 0);
	while (len < size - 1 && (n = read(tfd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(tfd);
	buf[len] = '\0';
	return buf;
}

/**
 * nfence_trace_events: enable (or disable) the nfence trace event @event
 * ("nfence" for all of them) in tracefs @dir
 *
 * Enabling an event patches the kernel's text, and TCG guests have been
 * seen to take a stale int3 on the other vCPU during that patching (an
 * "Oops: int3"). So the comm recording that enabling would start, which
 * patches the scheduler's sched_switch tracepoint as well, is turned off
 * first: only nfence's own (idle) event sites change.
 */
void nfence_trace_events(const char *dir, const char *event, bool on)
{
	char file[96];

	if (strcmp(event, "nfence"))
		snprintf(file, sizeof(file), "events/nfence/%s/enable", event);
	else
		snprintf(file, sizeof(file), "events/nfence/enable");
	if (on)
		nfence_trace_write(dir, "options/record-cmd", "0");
	nfence_trace_write(dir, file, on ? "1" : "0");
	if (!on)
		nfence_trace_write(dir, "options/record-cmd", "1");
}

/**
 * __nfence_log_read: DRM_IOCTL_NFENCE_LOG_READ, 0 or -errno
 */
int __nfence_log_read(int fd, struct drm_nfence_log_read *read)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_LOG_READ, read);
}

/**
 * __nfence_logging_level: DRM_IOCTL_NFENCE_LOGGING_LEVEL, 0 or -errno
 */
int __nfence_logging_level(int fd, struct drm_nfence_logging_level *level)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_LOGGING_LEVEL, level);
}

/**
 * nfence_logging_level: set an adapter's logging level, or fail the test
 *
 * Returns the previous level.
 */
uint32_t nfence_logging_level(int fd, uint32_t level, uint32_t flags)
{
	struct drm_nfence_logging_level l = { .level = level, .flags = flags };

	igt_assert_eq(__nfence_logging_level(fd, &l), 0);
	return l.previous;
}

/**
 * __nfence_doorbell_notify: DRM_IOCTL_NFENCE_DOORBELL_NOTIFY, 0 or -errno
 */
int __nfence_doorbell_notify(int fd, struct drm_nfence_doorbell_notify *notify)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DOORBELL_NOTIFY, notify);
}

/**
 * __nfence_context_create: DRM_IOCTL_NFENCE_CONTEXT_CREATE, 0 or -errno
 */
int __nfence_context_create(int fd, struct drm_nfence_context_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_CONTEXT_CREATE, create);
}

/**
 * nfence_context_create: a context on engine @engine; its (non-zero) handle
 */
uint32_t nfence_context_create(int fd, uint32_t device, uint32_t engine)
{
	struct drm_nfence_context_create create = {
		.device = device,
		.engine = engine,
	};
	int ret;

	ret = __nfence_context_create(fd, &create);
	igt_assert_f(ret == 0, "context on engine %u failed: %s\n", engine,
		     strerror(-ret));
	igt_assert_neq_u32(create.handle, 0);
	return create.handle;
}

/**
 * __nfence_context_destroy: DRM_IOCTL_NFENCE_CONTEXT_DESTROY, 0 or -errno
 */
int __nfence_context_destroy(int fd,
			     struct drm_nfence_context_destroy *destroy)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_CONTEXT_DESTROY, destroy);
}

int __nfence_context_destroy_handle(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_context_destroy destroy = {
		.device = device,
		.handle = handle,
	};

	return __nfence_context_destroy(fd, &destroy);
}

void nfence_context_destroy(int fd, uint32_t device, uint32_t handle)
{
	igt_assert_eq(__nfence_context_destroy_handle(fd, device, handle), 0);
}

/**
 * __nfence_context_control: DRM_IOCTL_NFENCE_CONTEXT_CONTROL, 0 or -errno
 */
int __nfence_context_control(int fd,
			     struct drm_nfence_context_control *control)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_CONTEXT_CONTROL, control);
}

/**
 * nfence_context_control: run @op on a context; returns the state after it
 * (and the whole answer in @out unless NULL)
 */
uint32_t nfence_context_control(int fd, uint32_t device, uint32_t context,
				uint32_t op,
				struct drm_nfence_context_control *out)
{
	struct drm_nfence_context_control control = {
		.device = device,
		.context = context,
		.op = op,
	};

	igt_assert_eq(__nfence_context_control(fd, &control), 0);
	if (out)
		*out = control;
	return control.state;
}

uint32_t nfence_context_state(int fd, uint32_t device, uint32_t context)
{
	return nfence_context_control(fd, device, context,
				      DRM_NFENCE_CONTEXT_OP_QUERY, NULL);
}

/**
 * nfence_context_set_priority: SET_PRIORITY @priority on a context, which
 * must succeed and leave the field as given
 */
void nfence_context_set_priority(int fd, uint32_t device, uint32_t context,
				 int32_t priority)
{
	struct drm_nfence_context_control control = {
		.device = device,
		.context = context,
		.op = DRM_NFENCE_CONTEXT_OP_SET_PRIORITY,
		.priority = priority,
	};

	igt_assert_eq(__nfence_context_control(fd, &control), 0);
	igt_assert_eq(control.priority, priority);
}

/**
 * __nfence_device_control: DRM_IOCTL_NFENCE_DEVICE_CONTROL, 0 or -errno
 */
int __nfence_device_control(int fd, struct drm_nfence_device_control *control)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_CONTROL, control);
}

/**
 * nfence_device_control: run @op on a device; returns why it is in error
 * (&enum drm_nfence_device_error), and the whole answer in @out unless NULL
 */
uint32_t nfence_device_control(int fd, uint32_t device, uint32_t op,
			       struct drm_nfence_device_control *out)
{
	struct drm_nfence_device_control control = {
		.device = device,
		.op = op,
	};

	igt_assert_eq(__nfence_device_control(fd, &control), 0);
	if (out)
		*out = control;
	return control.error;
}

/**
 * __nfence_hwqueue_create: DRM_IOCTL_NFENCE_HWQUEUE_CREATE, 0 or -errno
 */
int __nfence_hwqueue_create(int fd, struct drm_nfence_hwqueue_create *create)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_HWQUEUE_CREATE, create);
}

/**
 * nfence_hwqueue_create: a hardware queue on @context; returns its
 * (non-zero) handle, its progress fence handle in @progress_fence and the
 * progress fence's mapping in @mapping (each unless NULL)
 */
uint32_t nfence_hwqueue_create(int fd, uint32_t device, uint32_t context,
			       uint32_t flags, uint32_t *progress_fence,
			       struct drm_nfence_fence_mapping *mapping)
{
	struct drm_nfence_hwqueue_create create = {
		.device = device,
		.context = context,
		.flags = flags,
	};
	int ret;

	ret = __nfence_hwqueue_create(fd, &create);
	igt_assert_f(ret == 0, "hw queue (flags %#x) failed: %s\n", flags,
		     strerror(-ret));
	igt_assert_neq_u32(create.handle, 0);
	igt_assert_neq_u32(create.progress_fence, 0);
	if (progress_fence)
		*progress_fence = create.progress_fence;
	if (mapping)
		*mapping = create.progress_fence_mapping;
	return create.handle;
}

/**
 * __nfence_hwqueue_destroy: DRM_IOCTL_NFENCE_HWQUEUE_DESTROY, 0 or -errno
 */
int __nfence_hwqueue_destroy(int fd,
			     struct drm_nfence_hwqueue_destroy *destroy)
{
	return nfence_ioctl(fd, DRM_IOCTL_NFENCE_HWQUEUE_DESTROY, destroy);
}

int __nfence_hwqueue_destroy_handle(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_hwqueue_destroy destroy = {
		.device = device,
		.handle = handle,
	};

	return __nfence_hwqueue_destroy(fd, &destroy);
}

void nfence_hwqueue_destroy(int fd, uint32_t device, uint32_t handle)
{
	igt_assert_eq(__nfence_hwqueue_destroy_handle(fd, device, handle), 0);
}

/**
 * __nfence_submit: DRM_IOCTL_NFENCE_SUBMIT, 0 or -errno
 *
 * A single ioctl() call: a submit blocked for room and interrupted shows
 * up as -EINTR.
 */
int __nfence_submit(int fd, struct drm_nfence_submit *submit)
{
	return nfence_ioctl_once(fd, DRM_IOCTL_NFENCE_SUBMIT, submit);
}

/**
 * __nfence_submit_wait: DRM_IOCTL_NFENCE_SUBMIT_WAIT, 0 or -errno
 */
int __nfence_submit_wait(int fd, struct drm_nfence_submit_sync *sync)
{
	return nfence_ioctl_once(fd, DRM_IOCTL_NFENCE_SUBMIT_WAIT, sync);
}

/**
 * __nfence_submit_signal: DRM_IOCTL_NFENCE_SUBMIT_SIGNAL, 0 or -errno
 */
int __nfence_submit_signal(int fd, struct drm_nfence_submit_sync *sync)
{
	return nfence_ioctl_once(fd, DRM_IOCTL_NFENCE_SUBMIT_SIGNAL, sync);
}

int __nfence_submit_wait_one(int fd, uint32_t device, uint32_t hwqueue,
			     uint32_t fence, uint64_t value)
{
	struct drm_nfence_submit_sync sync = {
		.device = device,
		.hwqueue = hwqueue,
		.handles = (uintptr_t)&fence,
		.values = (uintptr_t)&value,
		.count = 1,
	};

	return __nfence_submit_wait(fd, &sync);
}

int __nfence_submit_signal_one(int fd, uint32_t device, uint32_t hwqueue,
			       uint32_t fence, uint64_t value)
{
	struct drm_nfence_submit_sync sync = {
		.device = device,
		.hwqueue = hwqueue,
		.handles = (uintptr_t)&fence,
		.values = (uintptr_t)&value,
		.count = 1,
	};

	return __nfence_submit_signal(fd, &sync);
}

/**
 * nfence_cs_init: start encoding commands into @size bytes at @cpu, which
 * the GPU sees at @gpu_va
 */
void nfence_cs_init(struct nfence_cs *cs, void *cpu, uint64_t gpu_va,
		    uint32_t size)
{
	igt_assert_eq_u64((uintptr_t)cpu % 8, 0);
	igt_assert_eq_u64(gpu_va % 8, 0);
	cs->cpu = cpu;
	cs->gpu_va = gpu_va;
	cs->size = size;
	cs->len = 0;
}

/**
 * nfence_cs_raw: append a command made of @header, the second word
 * @word1 and @count 64-bit operands, whatever they are; returns its offset
 */
uint32_t nfence_cs_raw(struct nfence_cs *cs, uint32_t header, uint32_t word1,
		       const uint64_t *operands, unsigned int count)
{
	uint32_t offset = cs->len;
	uint32_t *p;

	igt_assert_f(cs->len + 8 + 8 * count <= cs->size,
		     "command buffer full (%u of %u bytes)\n", cs->len,
		     cs->size);
	p = cs->cpu + offset / 4;
	p[0] = header;
	p[1] = word1;
	for (unsigned int i = 0; i < count; i++) {
		p[2 + 2 * i] = (uint32_t)operands[i];
		p[3 + 2 * i] = (uint32_t)(operands[i] >> 32);
	}
	cs->len += 8 + 8 * count;
	return offset;
}

uint32_t nfence_cs_nop(struct nfence_cs *cs)
{
	return nfence_cs_raw(cs, DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_NOP,
						      DRM_NFENCE_CS_NOP_WORDS),
			     0, NULL, 0);
}

uint32_t nfence_cs_fence_wait(struct nfence_cs *cs, uint64_t va,
			      uint64_t value)
{
	const uint64_t op[] = { va, value };

	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_FENCE_WAIT,
						  DRM_NFENCE_CS_FENCE_WAIT_WORDS),
			     0, op, 2);
}

uint32_t nfence_cs_fence_signal(struct nfence_cs *cs, uint64_t cv_va,
				uint64_t mv_va, uint64_t value)
{
	const uint64_t op[] = { cv_va, mv_va, value };

	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_FENCE_SIGNAL,
						  DRM_NFENCE_CS_FENCE_SIGNAL_WORDS),
			     0, op, 3);
}

/**
 * nfence_cs_fence_wait_log: FENCE_WAIT with a log payload naming @handle
 * and operation @op (DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED unless testing)
 */
uint32_t nfence_cs_fence_wait_log(struct nfence_cs *cs, uint64_t va,
				  uint64_t value, uint32_t handle, uint32_t op)
{
	const uint64_t ops[] = { va, value, (uint64_t)op << 32 | handle };

	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_FENCE_WAIT,
							DRM_NFENCE_CS_FLAG_LOG,
							DRM_NFENCE_CS_FENCE_WAIT_WORDS +
							DRM_NFENCE_CS_LOG_WORDS),
			     0, ops, 3);
}

/**
 * nfence_cs_fence_signal_log: FENCE_SIGNAL with a log payload naming
 * @handle and operation @op (DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED unless
 * testing)
 */
uint32_t nfence_cs_fence_signal_log(struct nfence_cs *cs, uint64_t cv_va,
				    uint64_t mv_va, uint64_t value,
				    uint32_t handle, uint32_t op)
{
	const uint64_t ops[] = {
		cv_va, mv_va, value, (uint64_t)op << 32 | handle,
	};

	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_FENCE_SIGNAL,
							DRM_NFENCE_CS_FLAG_LOG,
							DRM_NFENCE_CS_FENCE_SIGNAL_WORDS +
							DRM_NFENCE_CS_LOG_WORDS),
			     0, ops, 4);
}

uint32_t nfence_cs_write64(struct nfence_cs *cs, uint64_t va, uint64_t value)
{
	const uint64_t op[] = { va, value };

	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_WRITE64,
						  DRM_NFENCE_CS_WRITE64_WORDS),
			     0, op, 2);
}

uint32_t nfence_cs_timestamp(struct nfence_cs *cs, uint64_t va)
{
	return nfence_cs_raw(cs,
			     DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_TIMESTAMP,
						  DRM_NFENCE_CS_TIMESTAMP_WORDS),
			     0, &va, 1);
}

uint32_t nfence_cs_work(struct nfence_cs *cs, uint64_t duration_ns)
{
	return nfence_cs_raw(cs, DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_WORK,
						      DRM_NFENCE_CS_WORK_WORDS),
			     0, &duration_ns, 1);
}

uint32_t nfence_cs_signal_fence(struct nfence_cs *cs,
				const struct drm_nfence_fence_mapping *m,
				uint64_t value)
{
	return nfence_cs_fence_signal(cs, m->current_value_gpu_va,
				      m->monitored_value_gpu_va, value);
}

uint32_t nfence_cs_wait_fence(struct nfence_cs *cs,
			      const struct drm_nfence_fence_mapping *m,
			      uint64_t value)
{
	return nfence_cs_fence_wait(cs, m->current_value_gpu_va, value);
}

/**
 * nfence_queue_create_on: a hardware queue with @flags on an existing
 * context, a system-memory command buffer and the progress fence mapped
 */
void nfence_queue_create_on(struct nfence_queue *q, int fd, uint32_t device,
			    uint32_t context, uint32_t flags)
{
	struct drm_nfence_hwqueue_create create = {
		.device = device,
		.context = context,
		.flags = flags,
	};
	int ret;

	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->device = device;
	q->context = context;
	q->flags = flags;
	ret = __nfence_hwqueue_create(fd, &create);
	igt_assert_f(ret == 0, "hw queue (flags %#x) failed: %s\n", flags,
		     strerror(-ret));
	igt_assert_neq_u32(create.handle, 0);
	q->handle = create.handle;
	q->progress_fence = create.progress_fence;
	q->progress_mapping = create.progress_fence_mapping;
	q->wait_log_gpu_va = create.wait_log_gpu_va;
	q->signal_log_gpu_va = create.signal_log_gpu_va;
	q->log_entries = create.log_entries;
	q->progress = nfence_fence_map(fd, &q->progress_mapping);
	nfence_bo_create(fd, device, NFENCE_QUEUE_CMDS_SIZE,
			 NFENCE_SEGMENT_SYSTEM, DRM_NFENCE_ALLOC_CPU_VISIBLE,
			 &q->cmds);
}

/**
 * nfence_queue_create: nfence_queue_create_on() a new context on @engine
 */
void nfence_queue_create(struct nfence_queue *q, int fd, uint32_t device,
			 uint32_t engine, uint32_t flags)
{
	uint32_t context = nfence_context_create(fd, device, engine);

	nfence_queue_create_on(q, fd, device, context, flags);
	q->engine = engine;
	q->own_context = true;
}

/**
 * nfence_queue_forget: drop the CPU mappings only, for a queue whose
 * device (or context) was destroyed some other way
 */
void nfence_queue_forget(struct nfence_queue *q)
{
	if (q->progress)
		nfence_fence_unmap(q->progress);
	q->progress = NULL;
	nfence_bo_unmap(&q->cmds);
	q->cmds.handle = 0;
	q->handle = 0;
}

/**
 * nfence_queue_destroy: destroy the queue, its command buffer and, if it
 * made it, its context
 */
void nfence_queue_destroy(struct nfence_queue *q)
{
	if (q->handle)
		nfence_hwqueue_destroy(q->fd, q->device, q->handle);
	q->handle = 0;
	nfence_bo_destroy(&q->cmds);
	if (q->progress)
		nfence_fence_unmap(q->progress);
	q->progress = NULL;
	if (q->own_context)
		nfence_context_destroy(q->fd, q->device, q->context);
	q->own_context = false;
}

/**
 * nfence_queue_begin: start a command buffer in the queue's command
 * allocation, after the previous one; when the allocation is used up the
 * queue is first waited idle and the space reused
 */
void nfence_queue_begin(struct nfence_queue *q, struct nfence_cs *cs)
{
	const uint32_t room = 4096;

	if (q->head + room > q->cmds.size) {
		nfence_queue_sync(q);
		q->head = 0;
	}
	nfence_cs_init(cs, (char *)q->cmds.cpu + q->head,
		       q->cmds.gpu_va + q->head, room);
}

/**
 * __nfence_queue_submit: submit @cs with the next progress value; 0 or
 * -errno
 */
int __nfence_queue_submit(struct nfence_queue *q, const struct nfence_cs *cs)
{
	struct drm_nfence_submit submit = {
		.device = q->device,
		.hwqueue = q->handle,
		.commands_gpu_va = cs->gpu_va,
		.size = cs->len,
		.progress_fence_value = q->submitted + 1,
	};
	int ret;

	ret = __nfence_submit(q->fd, &submit);
	if (ret)
		return ret;
	q->submitted++;
	if (cs->gpu_va == q->cmds.gpu_va + q->head)
		q->head += (cs->len + 63) & ~63u;
	return 0;
}

/**
 * nfence_queue_submit: submit @cs; returns the progress fence value that
 * marks its completion
 */
uint64_t nfence_queue_submit(struct nfence_queue *q,
			     const struct nfence_cs *cs)
{
	int ret = __nfence_queue_submit(q, cs);

	igt_assert_f(ret == 0, "submit of %u bytes failed: %s\n", cs->len,
		     strerror(-ret));
	return q->submitted;
}

int __nfence_queue_submit_wait(struct nfence_queue *q, uint32_t fence,
			       uint64_t value)
{
	return __nfence_submit_wait_one(q->fd, q->device, q->handle, fence,
					value);
}

int __nfence_queue_submit_signal(struct nfence_queue *q, uint32_t fence,
				 uint64_t value)
{
	return __nfence_submit_signal_one(q->fd, q->device, q->handle, fence,
					  value);
}

/**
 * nfence_queue_wait: CPU wait (FENCE_WAIT) for the progress fence to reach
 * @value, for at most @timeout_ms; 0 or -errno (-ETIME)
 */
int nfence_queue_wait(struct nfence_queue *q, uint64_t value,
		      unsigned int timeout_ms)
{
	int64_t deadline = nfence_deadline_ms(timeout_ms);
	int ret;

	do {
		ret = __nfence_fence_wait_one(q->fd, q->device,
					      q->progress_fence, value,
					      deadline);
	} while (ret == -EINTR);
	return ret;
}

/**
 * nfence_queue_sync: wait (10 s at most) for every submission to complete
 */
void nfence_queue_sync(struct nfence_queue *q)
{
	int ret = nfence_queue_wait(q, q->submitted, 10000);

	igt_assert_f(ret == 0, "queue %u: progress %" PRIu64 " of %" PRIu64
		     " after 10 s: %s\n", q->handle, *q->progress,
		     q->submitted, strerror(-ret));
}

/**
 * nfence_queue_poll: watch the CPU mapping of the progress fence, without
 * registering a waiter (no interrupt), until it reaches @value or
 * @timeout_ms pass; whether it did
 */
bool nfence_queue_poll(const struct nfence_queue *q, uint64_t value,
		       unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;

	for (;;) {
		if (*q->progress >= value)
			return true;
		if (nfence_monotonic_ns() > end)
			return *q->progress >= value;
		usleep(500);
	}
}

/**
 * nfence_queue_state: CONTEXT_CONTROL QUERY of the queue's context
 */
uint32_t nfence_queue_state(const struct nfence_queue *q,
			    struct drm_nfence_context_control *out)
{
	return nfence_context_control(q->fd, q->device, q->context,
				      DRM_NFENCE_CONTEXT_OP_QUERY, out);
}

bool nfence_tdr_timeout_ms(uint64_t *ms)
{
	return nfence_param_u64("tdr_timeout_ms", ms);
}

/**
 * nfence_debugfs_interrupts: the counters of nfence_interrupts
 */
void nfence_debugfs_interrupts(int dir, struct nfence_interrupts *irq)
{
	irq->signals = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					      "signals");
	irq->interrupts = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						 "interrupts");
	irq->suppressed = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						 "suppressed");
	irq->monitored = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						"monitored");
	irq->woken = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					    "woken");
	irq->spurious = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					       "spurious");
	irq->carries = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					      "carries");
	irq->scans = nfence_debugfs_get_u64(dir, "nfence_interrupts", "scans");
	irq->queue_irqs = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						 "queue_irqs");
	irq->engine_irqs = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						  "engine_irqs");
	irq->log_entries = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						  "log_entries");
	irq->overruns = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					       "overruns");
	irq->peer_rings = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						 "peer_rings");
	irq->peer_taken = nfence_debugfs_get_u64(dir, "nfence_interrupts",
					       "peer_taken");
	irq->peer_overflows = nfence_debugfs_get_u64(dir, "nfence_interrupts",
						     "peer_overflows");
}

/**
 * __nfence_debugfs_segment_used: the "used" bytes of the nfence_segments
 * block with "id: @id"; 0, -ENOENT or -errno
 */
int __nfence_debugfs_segment_used(int dir, uint32_t id, uint64_t *used)
{
	char buf[4096], *line, *save;
	bool in_block = false;
	int len;

	len = __nfence_debugfs_read(dir, "nfence_segments", buf, sizeof(buf));
	if (len < 0)
		return len;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;

		line += strspn(line, " \t");
		if (sscanf(line, "id: %llu", &v) == 1)
			in_block = v == id;
		else if (in_block && sscanf(line, "used: %llu", &v) == 1) {
			*used = v;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * "queue <id> pid <tgid> device <h> context <h> engine <n> state <s>
 * pending <n> progress <value>"; 1 parsed, 0 not a queue line, -EINVAL a
 * malformed one.
 */
static int nfence_parse_queue_line(const char *line,
				   struct nfence_debugfs_queue *q)
{
	line += strspn(line, " \t");
	if (strncmp(line, "queue ", 6))
		return 0;
	if (sscanf(line,
		   "queue %" SCNu64 " pid %" SCNd64 " device %" SCNu32
		   " context %" SCNu32 " engine %" SCNu32 " state %31s"
		   " pending %" SCNu64 " progress %" SCNu64,
		   &q->id, &q->pid, &q->device, &q->context, &q->engine,
		   q->state, &q->pending, &q->progress) != 8)
		return -EINVAL;
	return 1;
}

/**
 * __nfence_debugfs_queues: call @fn for every line of nfence_queues until
 * it returns true; the number of queue lines visited or -errno (-EINVAL
 * for a "queue" line not in the documented format)
 */
int __nfence_debugfs_queues(int dir, nfence_debugfs_queue_fn fn, void *data)
{
	struct nfence_lines lines;
	int count = 0, ret;
	const char *line;

	ret = nfence_lines_open(&lines, dir, "nfence_queues");
	if (ret)
		return ret;
	while ((line = nfence_lines_next(&lines))) {
		struct nfence_debugfs_queue q;
		int parsed = nfence_parse_queue_line(line, &q);

		if (parsed < 0) {
			igt_warn("nfence_queues: malformed line: %s", line);
			ret = parsed;
			break;
		}
		if (!parsed)
			continue;
		count++;
		if (fn && fn(&q, data))
			break;
	}
	nfence_lines_close(&lines);
	return ret ?: count;
}

struct nfence_queue_find {
	int64_t pid;
	uint32_t device;
	uint32_t context;
	struct nfence_debugfs_queue *out;
	int count;
};

static bool nfence_queue_count_pid(const struct nfence_debugfs_queue *q,
				   void *data)
{
	struct nfence_queue_find *find = data;

	if (q->pid == find->pid)
		find->count++;
	return false;
}

/**
 * nfence_debugfs_count_queues: queues nfence_queues lists for process @pid
 */
int nfence_debugfs_count_queues(int dir, int64_t pid)
{
	struct nfence_queue_find find = { .pid = pid };
	int ret = __nfence_debugfs_queues(dir, nfence_queue_count_pid, &find);

	igt_assert_f(ret >= 0, "reading nfence_queues failed: %s\n",
		     strerror(-ret));
	return find.count;
}

static bool nfence_queue_match(const struct nfence_debugfs_queue *q,
			       void *data)
{
	struct nfence_queue_find *find = data;

	if (q->pid != find->pid || q->device != find->device ||
	    q->context != find->context)
		return false;
	*find->out = *q;
	find->count++;
	return true;
}

/**
 * __nfence_debugfs_queue: the first nfence_queues line of a queue of
 * context @context of device @device of process @pid; 0 or -ENOENT/-errno
 */
int __nfence_debugfs_queue(int dir, int64_t pid, uint32_t device,
			   uint32_t context, struct nfence_debugfs_queue *out)
{
	struct nfence_debugfs_queue tmp;
	struct nfence_queue_find find = {
		.pid = pid,
		.device = device,
		.context = context,
		.out = out ?: &tmp,
	};
	int ret = __nfence_debugfs_queues(dir, nfence_queue_match, &find);

	if (ret < 0)
		return ret;
	return find.count ? 0 : -ENOENT;
}

/**
 * nfence_debugfs_queue_wait_state: poll until that queue's line shows
 * @state, for at most @timeout_ms; 0 (the line in @out unless NULL),
 * -ETIMEDOUT (@out holds the last line) or -errno
 */
int nfence_debugfs_queue_wait_state(int dir, int64_t pid, uint32_t device,
				    uint32_t context, const char *state,
				    unsigned int timeout_ms,
				    struct nfence_debugfs_queue *out)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;
	struct nfence_debugfs_queue tmp;

	if (!out)
		out = &tmp;
	for (;;) {
		int ret = __nfence_debugfs_queue(dir, pid, device, context,
						 out);

		if (ret)
			return ret;
		if (!strcmp(out->state, state))
			return 0;
		if (nfence_monotonic_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/**
 * nfence_debugfs_queue_wait_pending: poll until that queue's line shows
 * @pending submissions, for at most @timeout_ms; 0, -ETIMEDOUT or -errno
 */
int nfence_debugfs_queue_wait_pending(int dir, int64_t pid, uint32_t device,
				      uint32_t context, uint64_t pending,
				      unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;
	struct nfence_debugfs_queue line;

	for (;;) {
		int ret = __nfence_debugfs_queue(dir, pid, device, context,
						 &line);

		if (ret)
			return ret;
		if (line.pending == pending)
			return 0;
		if (nfence_monotonic_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/**
 * nfence_waitpid_ms: reap child @pid within @timeout_ms; the signal that
 * killed it, 0 if it exited, -ETIMEDOUT (it is then killed and reaped) or
 * -errno
 */
int nfence_waitpid_ms(pid_t pid, unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;
	int status;

	for (;;) {
		pid_t ret = waitpid(pid, &status, WNOHANG);

		if (ret < 0)
			return -errno;
		if (ret == pid)
			return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		if (nfence_monotonic_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
}

/**
 * nfence_debugfs_queues_wait_gone: poll until nfence_queues lists no queue
 * of process @pid, for at most @timeout_ms; 0 or -ETIMEDOUT
 */
int nfence_debugfs_queues_wait_gone(int dir, int64_t pid,
				    unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;

	for (;;) {
		if (!nfence_debugfs_count_queues(dir, pid))
			return 0;
		if (nfence_monotonic_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/**
 * nfence_device_exists: whether @device names a device of @fd (an
 * allocation on it is attempted and freed again)
 */
bool nfence_device_exists(int fd, uint32_t device)
{
	struct drm_nfence_alloc_create create = {
		.device = device,
		.size = 4096,
		.segment_id = NFENCE_SEGMENT_SYSTEM,
	};
	int ret = __nfence_alloc_create(fd, &create);

	if (!ret)
		nfence_alloc_destroy(fd, device, create.handle);
	return ret != -ENOENT;
}

/**
 * nfence_alloc_exists: whether @handle names an allocation of @device
 * (ALLOC_LOCK answers something other than -ENOENT)
 */
bool nfence_alloc_exists(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_alloc_lock lock = {
		.device = device,
		.handle = handle,
	};

	return __nfence_alloc_lock(fd, &lock) != -ENOENT;
}

/**
 * nfence_context_exists: whether @handle names a context of @device
 */
bool nfence_context_exists(int fd, uint32_t device, uint32_t handle)
{
	struct drm_nfence_context_control control = {
		.device = device,
		.context = handle,
		.op = DRM_NFENCE_CONTEXT_OP_QUERY,
	};

	return __nfence_context_control(fd, &control) != -ENOENT;
}

/**
 * nfence_fence_exists: whether @handle names a fence of @device (a poll
 * for value 0 answers something other than -ENOENT)
 */
bool nfence_fence_exists(int fd, uint32_t device, uint32_t handle)
{
	return __nfence_fence_wait_one(fd, device, handle, 0, 0) != -ENOENT;
}

/**
 * nfence_bad_name: subtest-friendly name of a way a handle is invalid
 */
const char *nfence_bad_name(enum nfence_bad bad)
{
	static const char * const names[NFENCE_BAD_COUNT] = {
		[NFENCE_BAD_ZERO] = "zero",
		[NFENCE_BAD_UNKNOWN] = "unknown",
		[NFENCE_BAD_DESTROYED] = "destroyed",
		[NFENCE_BAD_OTHER_DEVICE] = "other-device",
		[NFENCE_BAD_OTHER_FD] = "other-fd",
		[NFENCE_BAD_WRONG_KIND] = "wrong-kind",
	};

	return bad < NFENCE_BAD_COUNT ? names[bad] : "?";
}

/**
 * nfence_env_init: a fresh device on @fd, a second one, and a second file
 * of adapter 0 with a device of its own
 */
void nfence_env_init(struct nfence_env *env, int fd)
{
	env->fd = fd;
	env->dev = nfence_device_create(fd);
	env->dev2 = nfence_device_create(fd);
	env->fd2 = nfence_open();
	env->fd2_dev = nfence_device_create(env->fd2);
}

void nfence_env_fini(struct nfence_env *env)
{
	nfence_device_destroy(env->fd, env->dev);
	nfence_device_destroy(env->fd, env->dev2);
	close(env->fd2);
	env->fd2 = -1;
}

/**
 * nfence_make: a simple live object of @kind on @device: a page of system
 * memory, a context on engine 0, a queue on a new context, a DEFAULT fence
 */
uint32_t nfence_make(int fd, uint32_t device, enum nfence_kind kind)
{
	switch (kind) {
	case NFENCE_KIND_ALLOC:
		return nfence_alloc_create(fd, device, 4096,
					   NFENCE_SEGMENT_SYSTEM, 0, NULL);
	case NFENCE_KIND_CONTEXT:
		return nfence_context_create(fd, device, 0);
	case NFENCE_KIND_HWQUEUE:
		return nfence_hwqueue_create(fd, device,
					     nfence_context_create(fd, device,
								   0),
					     0, NULL, NULL);
	case NFENCE_KIND_FENCE:
		return nfence_fence_create(fd, device,
					   DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
					   NULL);
	}
	igt_assert(!"unknown kind");
	return 0;
}

void nfence_unmake(int fd, uint32_t device, enum nfence_kind kind,
		   uint32_t handle)
{
	switch (kind) {
	case NFENCE_KIND_ALLOC:
		nfence_alloc_destroy(fd, device, handle);
		return;
	case NFENCE_KIND_CONTEXT:
		nfence_context_destroy(fd, device, handle);
		return;
	case NFENCE_KIND_HWQUEUE:
		nfence_hwqueue_destroy(fd, device, handle);
		return;
	case NFENCE_KIND_FENCE:
		nfence_fence_destroy(fd, handle);
		return;
	}
	igt_assert(!"unknown kind");
}

static bool nfence_in(uint32_t h, const uint32_t *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i] == h)
			return true;
	return false;
}

/*
 * Whether @h may name an object of @kind on @device: by a probe where one
 * exists, else (queues) by the caller's list of live handles.
 */
static bool nfence_kind_live(int fd, uint32_t device, enum nfence_kind kind,
			     uint32_t h, const uint32_t *live, int nlive)
{
	if (nfence_in(h, live, nlive))
		return true;
	switch (kind) {
	case NFENCE_KIND_ALLOC:
		return nfence_alloc_exists(fd, device, h);
	case NFENCE_KIND_CONTEXT:
		return nfence_context_exists(fd, device, h);
	case NFENCE_KIND_FENCE:
		return nfence_fence_exists(fd, device, h);
	case NFENCE_KIND_HWQUEUE:
		return false;
	}
	return true;
}

/**
 * nfence_bad_device: a device handle for @env->fd that is invalid in the
 * way @bad says (NFENCE_BAD_OTHER_DEVICE makes no sense for a device)
 */
uint32_t nfence_bad_device(const struct nfence_env *env, enum nfence_bad bad)
{
	uint32_t h;

	switch (bad) {
	case NFENCE_BAD_ZERO:
		return 0;
	case NFENCE_BAD_UNKNOWN:
		return UINT32_MAX;
	case NFENCE_BAD_DESTROYED:
		h = nfence_device_create(env->fd);
		nfence_device_destroy(env->fd, h);
		return h;
	case NFENCE_BAD_OTHER_FD:
		do {
			h = nfence_device_create(env->fd2);
		} while (nfence_device_exists(env->fd, h));
		return h;
	case NFENCE_BAD_WRONG_KIND:
		do {
			h = nfence_context_create(env->fd, env->dev, 0);
		} while (nfence_device_exists(env->fd, h));
		return h;
	default:
		break;
	}
	igt_assert_f(false, "no bad device of kind %d\n", bad);
	return 0;
}

/**
 * nfence_bad_handle: a handle for an object of @kind on @env->dev that is
 * invalid in the way @bad says; @live lists the handles of that kind the
 * caller made on @env->dev (for kinds without a probe)
 */
uint32_t nfence_bad_handle(const struct nfence_env *env, enum nfence_kind kind,
			   enum nfence_bad bad, const uint32_t *live,
			   int nlive)
{
	enum nfence_kind other;
	uint32_t h;

	switch (bad) {
	case NFENCE_BAD_ZERO:
		return 0;
	case NFENCE_BAD_UNKNOWN:
		return UINT32_MAX;
	case NFENCE_BAD_DESTROYED:
		h = nfence_make(env->fd, env->dev, kind);
		nfence_unmake(env->fd, env->dev, kind, h);
		return h;
	case NFENCE_BAD_OTHER_DEVICE:
		return nfence_make(env->fd, env->dev2, kind);
	case NFENCE_BAD_OTHER_FD:
		do {
			h = nfence_make(env->fd2, env->fd2_dev, kind);
		} while (nfence_kind_live(env->fd, env->dev, kind, h, live,
					  nlive));
		return h;
	case NFENCE_BAD_WRONG_KIND:
		/* A context for a queue or an allocation, etc. */
		other = kind == NFENCE_KIND_ALLOC ? NFENCE_KIND_CONTEXT :
			kind == NFENCE_KIND_CONTEXT ? NFENCE_KIND_HWQUEUE :
			kind == NFENCE_KIND_HWQUEUE ? NFENCE_KIND_CONTEXT :
			NFENCE_KIND_ALLOC;
		do {
			h = nfence_make(env->fd, env->dev, other);
		} while (nfence_kind_live(env->fd, env->dev, kind, h, live,
					  nlive));
		return h;
	default:
		break;
	}
	igt_assert_f(false, "no bad handle of kind %d\n", bad);
	return 0;
}

/**
 * __nfence_device_error: put device @device of this process on the
 * adapter of @fd in error through debugfs nfence_device_error; 0 or -errno
 */
int __nfence_device_error(int fd, uint32_t device)
{
	char buf[64];
	int dir, ret;

	dir = __nfence_debugfs_dir(fd);
	if (dir < 0)
		return dir;
	snprintf(buf, sizeof(buf), "%d %u", getpid(), device);
	ret = __nfence_debugfs_write(dir, "nfence_device_error", buf);
	close(dir);
	return ret;
}

/**
 * nfence_device_error: __nfence_device_error(), failing without the hook
 */
void nfence_device_error(int fd, uint32_t device)
{
	int ret = __nfence_device_error(fd, device);

	igt_assert_f(ret == 0, "device error hook (debugfs "
		     "nfence_device_error) failed: %s\n", strerror(-ret));
}

/* ---- vgem: another driver's dma_fences, signaled when a test says ---- */

/* The first node of @driver in @prefix@first.., @accept'ed, or -1. */
static int nfence_drm_find(const char *prefix, int first, const char *driver,
			   bool (*accept)(int fd))
{
	char path[64];

	for (int i = first; i < first + 64; i++) {
		drmVersionPtr v;
		bool fit;
		int vfd;

		snprintf(path, sizeof(path), "%s%d", prefix, i);
		vfd = open(path, O_RDWR | O_CLOEXEC);
		if (vfd < 0)
			continue;
		v = drmGetVersion(vfd);
		fit = v && !strcmp(v->name, driver) && (!accept || accept(vfd));
		if (v)
			drmFreeVersion(v);
		if (fit)
			return vfd;
		close(vfd);
	}
	return -1;
}

/**
 * nfence_drm_open_driver: a file of another driver's DRM node, or -1
 * @prefix: "/dev/dri/card" (minors from 0) or "/dev/dri/renderD" (from 128)
 * @first: the first minor tried; 64 are
 * @driver: the driver's name as drmGetVersion() gives it, which is also the
 *	module loaded (modprobe) when no node is found; the node then has
 *	up to a second to appear
 * @accept: NULL, or whether a node of @driver will do (a capability)
 */
int nfence_drm_open_driver(const char *prefix, int first, const char *driver,
			   bool (*accept)(int fd))
{
	char cmd[64];
	int vfd = nfence_drm_find(prefix, first, driver, accept);

	snprintf(cmd, sizeof(cmd), "modprobe -q %s", driver);
	if (vfd >= 0 || system(cmd) != 0)
		return vfd;
	for (int i = 0; i < 10 && vfd < 0; i++) {
		vfd = nfence_drm_find(prefix, first, driver, accept);
		if (vfd < 0)
			usleep(100 * 1000);
	}
	return vfd;
}

/**
 * nfence_syncobj_import: @handle of @from's syncobjs, imported on @to
 * through an fd; the handle on @to
 */
uint32_t nfence_syncobj_import(int from, uint32_t handle, int to)
{
	uint32_t h = 0;
	int sfd = -1;

	igt_assert_eq(drmSyncobjHandleToFD(from, handle, &sfd), 0);
	igt_assert_eq(drmSyncobjFDToHandle(to, sfd, &h), 0);
	close(sfd);
	return h;
}

/**
 * nfence_syncobj_point_sync_file: a sync_file of the fence at @point of
 * @dfd's @syncobj, which must exist (moved through a binary syncobj)
 */
int nfence_syncobj_point_sync_file(int dfd, uint32_t syncobj, uint64_t point)
{
	uint32_t bin = 0;
	int sf = -1;

	igt_assert_eq(drmSyncobjCreate(dfd, 0, &bin), 0);
	igt_assert_eq(drmSyncobjTransfer(dfd, bin, 0, syncobj, point, 0), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(dfd, bin, &sf), 0);
	igt_assert_fd(sf);
	igt_assert_eq(drmSyncobjDestroy(dfd, bin), 0);
	return sf;
}

/**
 * nfence_sync_file_bridge_status: the status of nfence's syncobj-bridge
 * fence inside the signaled sync_file @sf (the sync_file's own status is
 * its dma_fence_chain's, which carries no error): 1 or the -errno it was
 * signaled with; 0 if @sf has none (drm_syncobj replaced a signaled point
 * below the timeline's last by a stub)
 */
int nfence_sync_file_bridge_status(int sf)
{
	struct sync_file_info info = {};
	struct sync_fence_info *fences;
	int status = 0;

	igt_assert_eq(ioctl(sf, SYNC_IOC_FILE_INFO, &info), 0);
	igt_assert_eq(info.status, 1);
	igt_assert_lt(0, (int)info.num_fences);
	fences = calloc(info.num_fences, sizeof(*fences));
	igt_assert(fences);
	info.sync_fence_info = (uintptr_t)fences;
	igt_assert_eq(ioctl(sf, SYNC_IOC_FILE_INFO, &info), 0);
	/* The point's own fence comes first. */
	for (uint32_t i = 0; i < info.num_fences && !status; i++)
		if (!strcmp(fences[i].driver_name, "nfence")) {
			igt_assert_eq(strcmp(fences[i].obj_name,
					     "syncobj-bridge"), 0);
			status = fences[i].status;
		}
	free(fences);
	return status;
}

/**
 * nfence_vgem_open: a vgem DRM file (loading vgem if needed), or -1
 */
int nfence_vgem_open(void)
{
	return nfence_drm_open_driver("/dev/dri/card", 0, "vgem", NULL);
}

/**
 * nfence_vgem_fence_create: an unsignaled vgem fence on a new buffer of
 * @vgem, exported as a dma-buf (vgem signals it itself after 10 s)
 */
void nfence_vgem_fence_create(int vgem, struct nfence_vgem_fence *v)
{
	struct drm_mode_create_dumb dumb = {
		.width = 64, .height = 1, .bpp = 32,
	};
	struct drm_vgem_fence_attach attach = {};

	igt_assert_eq(drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb), 0);
	v->bo = dumb.handle;
	attach.handle = v->bo;
	attach.flags = VGEM_FENCE_WRITE;
	igt_assert_eq(drmIoctl(vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach), 0);
	v->fence = attach.out_fence;
	igt_assert_eq(drmPrimeHandleToFD(vgem, v->bo, DRM_CLOEXEC, &v->dmabuf),
		      0);
}

/**
 * nfence_vgem_fence_sync_file: the fence as a new sync_file (what a
 * reader of the buffer waits for)
 */
int nfence_vgem_fence_sync_file(const struct nfence_vgem_fence *v)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_RW };

	igt_assert_eq(ioctl(v->dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e), 0);
	igt_assert_fd(e.fd);
	return e.fd;
}

/**
 * nfence_vgem_fence_syncobj: a new timeline syncobj of @dfd with the
 * fence at @point
 */
uint32_t nfence_vgem_fence_syncobj(int dfd, const struct nfence_vgem_fence *v,
				   uint64_t point)
{
	uint32_t bin = 0, s = 0;
	int sf = nfence_vgem_fence_sync_file(v);

	igt_assert_eq(drmSyncobjCreate(dfd, 0, &bin), 0);
	igt_assert_eq(drmSyncobjCreate(dfd, 0, &s), 0);
	igt_assert_eq(drmSyncobjImportSyncFile(dfd, bin, sf), 0);
	close(sf);
	igt_assert_eq(drmSyncobjTransfer(dfd, s, point, bin, 0, 0), 0);
	igt_assert_eq(drmSyncobjDestroy(dfd, bin), 0);
	return s;
}

/**
 * nfence_vgem_fence_signal: signal the fence
 */
void nfence_vgem_fence_signal(int vgem, const struct nfence_vgem_fence *v)
{
	struct drm_vgem_fence_signal sig = { .fence = v->fence };

	igt_assert_eq(drmIoctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sig), 0);
}

/**
 * nfence_vgem_fence_destroy: close the dma-buf and the buffer
 */
void nfence_vgem_fence_destroy(int vgem, struct nfence_vgem_fence *v)
{
	close(v->dmabuf);
	drmCloseBufferHandle(vgem, v->bo);
}
