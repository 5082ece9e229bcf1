// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Basic nfence tests: opening render nodes, driver "
		     "identity, several adapters, the GPU timestamp clock "
		     "and the debugfs files.");

#define MANY_FDS 128
#define WATCHDOG_S	60

static int adapter_index(int fd)
{
	struct drm_nfence_query_adapter adapter;

	nfence_query_adapter(fd, &adapter);
	return adapter.index;
}

static uint64_t adapter_luid(int fd)
{
	struct drm_nfence_query_adapter adapter;

	nfence_query_adapter(fd, &adapter);
	return (uint64_t)adapter.luid_high << 32 | adapter.luid_low;
}

static void test_open_close(void)
{
	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 16; i++) {
		int fd = nfence_open();

		igt_assert(nfence_is_nfence(fd));
		igt_assert_eq(adapter_index(fd), 0);
		igt_assert_eq(close(fd), 0);
	}
}

static void test_open_many(int fd)
{
	uint64_t luid = adapter_luid(fd);
	struct rlimit rl;
	int fds[MANY_FDS];

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	igt_require(rl.rlim_cur > MANY_FDS + 32);

	for (int i = 0; i < MANY_FDS; i++) {
		fds[i] = nfence_open();
		igt_assert_eq_u64(adapter_luid(fds[i]), luid);
	}
	/* Every file is independent: each gets its own devices. */
	for (int i = 0; i < MANY_FDS; i++)
		nfence_device_create(fds[i]);
	for (int i = 0; i < MANY_FDS; i++)
		igt_assert_eq(close(fds[i]), 0);

	/* The first file still works after the others went away. */
	igt_assert_eq_u64(adapter_luid(fd), luid);
}

static void test_driver_version(int fd)
{
	drmVersionPtr version;

	nfence_watchdog(WATCHDOG_S);
	version = drmGetVersion(fd);
	igt_assert(version);
	igt_assert(version->name);
	igt_assert_eq(strcmp(version->name, NFENCE_DRIVER_NAME), 0);
	igt_assert_eq(version->name_len, (int)strlen(NFENCE_DRIVER_NAME));
	igt_assert(version->desc);
	igt_assert_f(!strcmp(version->desc, NFENCE_DRIVER_DESC),
		     "desc \"%s\"\n", version->desc);
	igt_assert_eq(version->desc_len, (int)strlen(NFENCE_DRIVER_DESC));
	/*
	 * The driver's date, or "0" from cores where the driver date is
	 * deprecated (Debian's 6.12 and 6.14 on) and never read.
	 */
	igt_assert(version->date);
	igt_assert_f(!strcmp(version->date, NFENCE_DRIVER_DATE) ||
		     !strcmp(version->date, "0"),
		     "date \"%s\"\n", version->date);
	igt_assert_eq(version->date_len, (int)strlen(version->date));
	igt_assert_eq(version->version_major, NFENCE_DRIVER_MAJOR);
	igt_assert_eq(version->version_minor, NFENCE_DRIVER_MINOR);
	igt_assert_eq(version->version_patchlevel, NFENCE_DRIVER_PATCHLEVEL);
	igt_info("%s %d.%d.%d %s (%s)\n", version->name,
		 version->version_major, version->version_minor,
		 version->version_patchlevel, version->date, version->desc);
	drmFreeVersion(version);
}

static void test_render_node(int fd)
{
	struct stat st;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(fstat(fd, &st), 0);
	igt_assert(S_ISCHR(st.st_mode));
	igt_assert_eq(drmGetNodeTypeFromFd(fd), DRM_NODE_RENDER);
}

static void test_adapter_indices(void)
{
	int count = nfence_count_adapters();

	nfence_watchdog(WATCHDOG_S);
	igt_assert_lte(1, count);
	igt_assert_lte(count, NFENCE_MAX_ADAPTERS);
	igt_assert_eq_u64(count, nfence_param_get_u64("num_adapters"));

	for (int i = 0; i < count; i++) {
		int fd = __nfence_open_adapter(i);

		igt_assert_f(fd >= 0, "adapter %d of %d missing\n", i, count);
		igt_assert_eq(adapter_index(fd), i);
		close(fd);
	}
	igt_assert_eq(__nfence_open_adapter(count), -ENODEV);
}

static void test_multi_adapter_distinct(void)
{
	int count = nfence_count_adapters();
	uint64_t luid[NFENCE_MAX_ADAPTERS];
	dev_t rdev[NFENCE_MAX_ADAPTERS];

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(count >= 2, "needs 2 adapters, have %d\n", count);
	igt_assert_lte(count, NFENCE_MAX_ADAPTERS);

	for (int i = 0; i < count; i++) {
		struct stat st;
		int fd = nfence_open_adapter(i);

		igt_assert_eq(adapter_index(fd), i);
		luid[i] = adapter_luid(fd);
		igt_assert_neq_u64(luid[i], 0);
		igt_assert_eq(fstat(fd, &st), 0);
		rdev[i] = st.st_rdev;
		close(fd);
	}

	for (int i = 0; i < count; i++) {
		for (int j = i + 1; j < count; j++) {
			igt_assert_neq_u64(luid[i], luid[j]);
			igt_assert(rdev[i] != rdev[j]);
		}
	}
}

static void test_timestamp_advances(int fd)
{
	struct drm_nfence_query_timestamp t0, t1;
	uint64_t before, after;

	nfence_watchdog(WATCHDOG_S);
	before = nfence_monotonic_ns();
	nfence_query_timestamp(fd, &t0);
	usleep(20 * 1000);
	nfence_query_timestamp(fd, &t1);
	after = nfence_monotonic_ns();

	igt_assert_lte_u64(before, t0.cpu_monotonic_ns);
	igt_assert_lt_u64(t0.cpu_monotonic_ns, t1.cpu_monotonic_ns);
	igt_assert_lte_u64(t1.cpu_monotonic_ns, after);
	igt_assert_lt_u64(t0.gpu_timestamp, t1.gpu_timestamp);
}

static void test_timestamp_monotonic(int fd)
{
	struct drm_nfence_query_timestamp prev, cur;

	nfence_watchdog(WATCHDOG_S);
	nfence_query_timestamp(fd, &prev);
	for (int i = 0; i < 2000; i++) {
		nfence_query_timestamp(fd, &cur);
		igt_assert_lte_u64(prev.gpu_timestamp, cur.gpu_timestamp);
		igt_assert_lte_u64(prev.cpu_monotonic_ns, cur.cpu_monotonic_ns);
		prev = cur;
	}
}

/*
 * Every file the driver creates (nfence_debugfs_init()): those read
 * here, then nfence_device_error, which is write-only.
 */
static const char * const debugfs_files[] = {
	"nfence_adapter", "nfence_cmp", "nfence_clients", "nfence_segments",
	"nfence_queues", "nfence_fences", "nfence_interrupts", "nfence_f1_hold",
	"nfence_device_error",
};

/* Those that always have content (the others list objects, maybe none). */
static const char * const debugfs_never_empty[] = {
	"nfence_adapter", "nfence_cmp", "nfence_clients", "nfence_segments",
	"nfence_interrupts", "nfence_f1_hold",
};

static const char * const interrupt_keys[] = {
	"signals", "interrupts", "suppressed", "monitored", "woken", "spurious",
	"carries",
};

static const char * const segment_keys[] = {
	"id", "size", "used", "cpu_visible_size",
};

static int count_client_lines(int dir, pid_t pid)
{
	char buf[16384], prefix[32], *line, *save;
	int n = 0;

	igt_assert_lte(0, __nfence_debugfs_read(dir, "nfence_clients", buf,
						sizeof(buf)));
	snprintf(prefix, sizeof(prefix), "pid %d ", pid);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (!strncmp(line, prefix, strlen(prefix)))
			n++;
	}
	return n;
}

static bool never_empty(const char *file)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(debugfs_never_empty); i++)
		if (!strcmp(file, debugfs_never_empty[i]))
			return true;
	return false;
}

static void test_debugfs_files(int fd)
{
	char buf[16384], value[256], path[64];
	struct stat st;
	uint64_t v;
	int dir, f;

	nfence_watchdog(WATCHDOG_S);
	dir = nfence_debugfs_dir(fd);

	/* The readable ones, all but the last. */
	for (unsigned int i = 0; i < ARRAY_SIZE(debugfs_files) - 1; i++) {
		int len = __nfence_debugfs_read(dir, debugfs_files[i], buf,
						sizeof(buf));

		igt_assert_f(len >= 0, "%s: %s\n", debugfs_files[i],
			     strerror(-len));
		igt_assert_f(len > 0 || !never_empty(debugfs_files[i]),
			     "%s: empty\n", debugfs_files[i]);
		igt_debug("%s:\n%s", debugfs_files[i], buf);
	}

	/* nfence_device_error: write-only, and it parses what it is given. */
	igt_assert_eq(fstatat(dir, "nfence_device_error", &st, 0), 0);
	igt_assert(S_ISREG(st.st_mode));
	igt_assert_eq_u32(st.st_mode & 07777, 0200);
	f = openat(dir, "nfence_device_error", O_WRONLY | O_CLOEXEC);
	igt_assert_f(f >= 0, "nfence_device_error: %m\n");
	igt_assert_eq(write(f, "x", 1), -1);
	igt_assert_eq(errno, EINVAL);
	/* Handle 0 is never a device: nothing of ours goes in error. */
	snprintf(value, sizeof(value), "%d 0", getpid());
	igt_assert_eq(write(f, value, strlen(value)), -1);
	igt_assert_eq(errno, ENOENT);
	close(f);

	/* nfence_adapter */
	igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
						 "index"),
			  adapter_index(fd));
	igt_assert_eq(__nfence_debugfs_get(dir, "nfence_adapter", "luid",
					   value, sizeof(value)), 0);
	igt_assert(value[0]);
	nfence_debugfs_get_u64(dir, "nfence_adapter", "devices");
	nfence_debugfs_get_u64(dir, "nfence_adapter", "connect_binds");
	nfence_debugfs_get_u64(dir, "nfence_adapter", "connect_most_ahead");
	igt_assert_lte_u64(1, nfence_debugfs_get_u64(dir, "nfence_adapter",
						     "clients"));

	/* nfence_cmp */
	igt_assert_eq(__nfence_debugfs_get(dir, "nfence_cmp", "state",
					   value, sizeof(value)), 0);
	igt_assert_f(!strcmp(value, "idle") || !strcmp(value, "running"),
		     "cmp state \"%s\"\n", value);
	v = nfence_debugfs_get_u64(dir, "nfence_cmp", "pid");
	igt_assert_lt_u64(0, v);
	snprintf(path, sizeof(path), "/proc/%" PRIu64, v);
	igt_assert_f(stat(path, &st) == 0, "cmp thread %" PRIu64 " missing\n",
		     v);
	nfence_debugfs_get_u64(dir, "nfence_cmp", "wakeups");
	nfence_debugfs_get_u64(dir, "nfence_cmp", "passes");
	nfence_debugfs_get_u64(dir, "nfence_cmp", "spins");
	nfence_debugfs_get_u64(dir, "nfence_cmp", "longest_pass_us");
	nfence_debugfs_get_u64(dir, "nfence_cmp", "longest_hold_us");

	/*
	 * nfence_f1_hold: nothing held (nfence_doorbell@f1-window-* hold
	 * it); a step with no run held, or an unknown word, is refused.
	 */
	igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_f1_hold",
						 "hold"), 0);
	igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_f1_hold",
						 "waiting"), 0);
	igt_assert_eq(__nfence_debugfs_write(dir, "nfence_f1_hold", "step"),
		      -EAGAIN);
	igt_assert_eq(__nfence_debugfs_write(dir, "nfence_f1_hold", "x"),
		      -EINVAL);

	/* nfence_clients: this fd is one of ours */
	igt_assert_lte(1, count_client_lines(dir, getpid()));

	/* nfence_segments */
	for (unsigned int i = 0; i < sizeof(segment_keys) /
	     sizeof(segment_keys[0]); i++)
		nfence_debugfs_get_u64(dir, "nfence_segments", segment_keys[i]);

	/* nfence_interrupts */
	for (unsigned int i = 0; i < ARRAY_SIZE(interrupt_keys); i++)
		nfence_debugfs_get_u64(dir, "nfence_interrupts",
				       interrupt_keys[i]);

	close(dir);
}

static void test_debugfs_every_adapter(void)
{
	int count = nfence_count_adapters();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < count; i++) {
		int fd = nfence_open_adapter(i);
		int dir = nfence_debugfs_dir(fd);

		igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
							 "index"), i);
		close(dir);
		close(fd);
	}
}

static void test_debugfs_clients(int fd)
{
	int fds[4];
	uint64_t base;
	int lines, dir;

	nfence_watchdog(WATCHDOG_S);
	dir = nfence_debugfs_dir(fd);
	base = nfence_debugfs_get_u64(dir, "nfence_adapter", "clients");
	lines = count_client_lines(dir, getpid());
	igt_assert_lte(1, lines);

	for (int i = 0; i < 4; i++) {
		fds[i] = nfence_open();
		igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
							 "clients"),
				  base + i + 1);
	}
	igt_assert_eq(count_client_lines(dir, getpid()), lines + 4);

	for (int i = 0; i < 4; i++)
		close(fds[i]);
	igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
						 "clients"), base);
	igt_assert_eq(count_client_lines(dir, getpid()), lines);
	close(dir);
}

static void test_debugfs_devices(int fd)
{
	uint32_t handles[3];
	uint64_t base;
	int dir;

	nfence_watchdog(WATCHDOG_S);
	dir = nfence_debugfs_dir(fd);
	base = nfence_debugfs_get_u64(dir, "nfence_adapter", "devices");

	for (int i = 0; i < 3; i++) {
		handles[i] = nfence_device_create(fd);
		igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
							 "devices"),
				  base + i + 1);
	}
	for (int i = 0; i < 3; i++) {
		nfence_device_destroy(fd, handles[i]);
		igt_assert_eq_u64(nfence_debugfs_get_u64(dir, "nfence_adapter",
							 "devices"),
				  base + 2 - i);
	}
	close(dir);
}

/*
 * The ioctl argument itself unreadable, for the ioctls whose own binaries
 * have no bad-arg-pointer subtest (the allocation, context, queue,
 * submission, doorbell, log read, syncobj and window ones do).
 */
static void test_bad_arg_pointer(int fd)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_QUERY,
		DRM_IOCTL_NFENCE_DEVICE_CREATE,
		DRM_IOCTL_NFENCE_DEVICE_DESTROY,
		DRM_IOCTL_NFENCE_DEVICE_CONTROL,
		DRM_IOCTL_NFENCE_FENCE_CREATE,
		DRM_IOCTL_NFENCE_FENCE_DESTROY,
		DRM_IOCTL_NFENCE_FENCE_SHARE,
		DRM_IOCTL_NFENCE_FENCE_OPEN,
		DRM_IOCTL_NFENCE_FENCE_WAIT,
		DRM_IOCTL_NFENCE_FENCE_SIGNAL,
		DRM_IOCTL_NFENCE_LOGGING_LEVEL,
	};

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

static int fd = -1;

igt_main
{
	igt_fixture {
		int dir;

		fd = nfence_open();
		/* debugfs is always there: without it the run is broken. */
		dir = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
		close(dir);
	}

	igt_describe("Open and close the render node of adapter 0 repeatedly; "
		     "each open file answers the adapter query.");
	igt_subtest("open-close")
		test_open_close();

	igt_describe("Hold many open files of one adapter at once; all see "
		     "the same adapter and each can create a device.");
	igt_subtest("open-many")
		test_open_many(fd);

	igt_describe("drmGetVersion() reports the driver's name \"nfence\", "
		     "description, date and version exactly.");
	igt_subtest("driver-version")
		test_driver_version(fd);

	igt_describe("The node the tests open is a DRM render node.");
	igt_subtest("render-node")
		test_render_node(fd);

	igt_describe("Adapter indices run from 0 to the number of adapters - 1, "
		     "one render node each, matching num_adapters.");
	igt_subtest("adapter-indices")
		test_adapter_indices();

	igt_describe("With two or more adapters, LUIDs, indices and render "
		     "nodes are pairwise distinct.");
	igt_subtest("multi-adapter-distinct")
		test_multi_adapter_distinct();

	igt_describe("The GPU timestamp and its CPU monotonic twin advance "
		     "across a sleep and bracket the CPU clock.");
	igt_subtest("timestamp-advances")
		test_timestamp_advances(fd);

	igt_describe("Back-to-back timestamp queries never go backwards.");
	igt_subtest("timestamp-monotonic")
		test_timestamp_monotonic(fd);

	igt_describe("Every debugfs file of the adapter exists, is readable "
		     "and has the documented keys.");
	igt_subtest("debugfs-files")
		test_debugfs_files(fd);

	igt_describe("Each adapter's debugfs directory reports its own index.");
	igt_subtest("debugfs-every-adapter")
		test_debugfs_every_adapter();

	igt_describe("debugfs counts open files: clients and the per-file "
		     "lines of nfence_clients follow open() and close().");
	igt_subtest("debugfs-clients")
		test_debugfs_clients(fd);

	igt_describe("debugfs \"devices\" follows device create and destroy.");
	igt_subtest("debugfs-devices")
		test_debugfs_devices(fd);

	igt_describe("An unreadable ioctl argument fails with -EFAULT: the "
		     "query, device, fence, wait, signal and logging level "
		     "ioctls.");
	igt_subtest("bad-arg-pointer")
		test_bad_arg_pointer(fd);

	igt_fixture {
		nfence_watchdog(0);
		close(fd);
	}
}
