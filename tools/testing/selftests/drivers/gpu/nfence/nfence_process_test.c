// SPDX-License-Identifier: GPL-2.0
/*
 * nfence selftests: what a process sees of the nfence render node.
 *
 * Opening from many processes at once, fork() sharing the drm_file and its
 * handles, handles being per open file, close-on-exec, cleanup of devices
 * held by a process killed with SIGKILL, and the CMP kernel thread (exists,
 * and burns no CPU while the adapter is idle).
 *
 * Every test skips when no nfence render node exists. Checks that need the
 * driver's debugfs files (/sys/kernel/debug/dri/<card minor>/nfence_*) skip
 * with a message when debugfs is not mounted or not readable; without
 * debugfs the CMP thread tests look for "nfence*" kernel threads in /proc.
 *
 * The fixture tests the nfence render node with the lowest minor, or the
 * one named by $NFENCE_RENDER_NODE (e.g. /dev/dri/renderD129 for another
 * adapter).
 *
 * Copyright (C) 2026 The nfence authors
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "drm/nfence_drm.h"

/*
 * Keep -Wextra -Werror builds clean of warnings in kselftest_harness.h
 * code, which its macros expand into this file: unused parameters (the
 * SIGALRM handler's ucontext, the variant of TEST() wrappers), and
 * -Wclobbered on the TEST_F() wrapper's "child" around its setjmp(), which
 * gcc reports or not depending on inlining.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wclobbered"
#endif
#include "kselftest_harness.h"

#define NF_DRI_DIR		"/dev/dri"
#define NF_DEBUGFS		"/sys/kernel/debug"
#define NF_DEBUGFS_DRI		NF_DEBUGFS "/dri"
#define NF_DEBUGFS_MAGIC	0x64626720	/* DEBUGFS_MAGIC */
#define NF_NODE_LEN		64
#define NF_MAX_NODES		64

/* Processes opening the render node at once, and devices each creates. */
#define NF_NPROC		32
#define NF_NDEV_PER_PROC	16
#define NF_ROUNDS		4

/* Devices the child killed with SIGKILL holds. */
#define NF_KILL_NDEV		64

/* How long to wait for the kernel to settle a count, in milliseconds. */
#define NF_SETTLE_MS		5000

/* PF_KTHREAD from include/linux/sched.h, field 9 of /proc/<pid>/stat. */
#define NF_PF_KTHREAD		0x00200000UL

/* argv[1] of the re-executed binary in the close-on-exec tests. */
#define NF_EXEC_MARKER		"--nfence-exec-child"

/* ------------------------------------------------------------------ */
/* ioctl helpers: all return 0 or -errno.                             */
/* ------------------------------------------------------------------ */

static int nf_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));

	return ret == -1 ? -errno : 0;
}

/* DRM_NFENCE_QUERY_ADAPTER with the two-call protocol. */
static int nf_query_adapter(int fd, struct drm_nfence_query_adapter *out)
{
	struct drm_nfence_query q = { .type = DRM_NFENCE_QUERY_ADAPTER };
	int ret;

	ret = nf_ioctl(fd, DRM_IOCTL_NFENCE_QUERY, &q);
	if (ret)
		return ret;
	if (q.size != sizeof(*out))
		return -EPROTO;

	memset(out, 0, sizeof(*out));
	q.data = (uintptr_t)out;
	ret = nf_ioctl(fd, DRM_IOCTL_NFENCE_QUERY, &q);
	if (ret)
		return ret;

	return q.size == sizeof(*out) ? 0 : -EPROTO;
}

static int nf_device_create(int fd, __u32 *handle)
{
	struct drm_nfence_device_create c = { 0 };
	int ret;

	ret = nf_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_CREATE, &c);
	if (ret)
		return ret;
	*handle = c.handle;

	return c.handle ? 0 : -EPROTO;
}

static int nf_device_destroy(int fd, __u32 handle)
{
	struct drm_nfence_device_destroy d = { .handle = handle };

	return nf_ioctl(fd, DRM_IOCTL_NFENCE_DEVICE_DESTROY, &d);
}

static __u64 nf_luid(const struct drm_nfence_query_adapter *a)
{
	return ((__u64)a->luid_high << 32) | a->luid_low;
}

/* ------------------------------------------------------------------ */
/* Finding the render node.                                           */
/* ------------------------------------------------------------------ */

static bool nf_is_nfence(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ret;

	ret = v && v->name && !strcmp(v->name, "nfence");
	drmFreeVersion(v);

	return ret;
}

static int nf_render_filter(const struct dirent *de)
{
	return !strncmp(de->d_name, "renderD", 7);
}

/*
 * Fill @nodes with the paths of every nfence render node, in minor order.
 * Returns how many were found.
 */
static int nf_list_render_nodes(char nodes[][NF_NODE_LEN], int max)
{
	struct dirent **list;
	int i, n, found = 0;

	n = scandir(NF_DRI_DIR, &list, nf_render_filter, versionsort);
	if (n < 0)
		return 0;

	for (i = 0; i < n; i++) {
		char path[NF_NODE_LEN];
		int fd;

		if (snprintf(path, sizeof(path), NF_DRI_DIR "/%s",
			     list[i]->d_name) >= (int)sizeof(path))
			goto next;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			goto next;
		if (nf_is_nfence(fd) && found < max)
			snprintf(nodes[found++], NF_NODE_LEN, "%s", path);
		close(fd);
next:
		free(list[i]);
	}
	free(list);

	return found;
}

/*
 * The render node the fixture tests: $NFENCE_RENDER_NODE if set (to test
 * another adapter), else the nfence render node with the lowest minor.
 */
static int nf_find_render_node(char *node, size_t len)
{
	char nodes[NF_MAX_NODES][NF_NODE_LEN];
	const char *env = getenv("NFENCE_RENDER_NODE");

	if (env && *env) {
		int fd = open(env, O_RDWR | O_CLOEXEC);
		bool ok;

		if (fd < 0)
			return -errno;
		ok = nf_is_nfence(fd);
		close(fd);
		if (!ok || strlen(env) >= len)
			return -ENODEV;
		snprintf(node, len, "%s", env);
		return 0;
	}

	if (nf_list_render_nodes(nodes, NF_MAX_NODES) < 1)
		return -ENODEV;
	if (strlen(nodes[0]) >= len)
		return -ENAMETOOLONG;
	snprintf(node, len, "%s", nodes[0]);

	return 0;
}

/* ------------------------------------------------------------------ */
/* debugfs: "key: value" files under /sys/kernel/debug/dri/<N>/.      */
/* ------------------------------------------------------------------ */

static int nf_read_key(const char *dir, const char *file, const char *key,
		       char *val, size_t len)
{
	size_t klen = strlen(key);
	char path[PATH_MAX];
	char line[256];
	int ret = -ENOENT;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;

	while (fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		v = line + klen + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (strlen(v) >= len) {
			ret = -ENAMETOOLONG;
			break;
		}
		snprintf(val, len, "%s", v);
		ret = 0;
		break;
	}
	fclose(f);

	return ret;
}

/* Read a whole (small) debugfs file; returns bytes read or -errno. */
static int nf_read_file(const char *dir, const char *file, char *buf,
			size_t len)
{
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

static int nf_read_key_u64(const char *dir, const char *file, const char *key,
			   unsigned long long *out)
{
	char val[128];
	char *end;
	int ret;

	ret = nf_read_key(dir, file, key, val, sizeof(val));
	if (ret)
		return ret;

	errno = 0;
	*out = strtoull(val, &end, 0);
	if (errno || end == val)
		return -EINVAL;

	return 0;
}

static bool nf_debugfs_usable(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/nfence_adapter", dir) >=
	    (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);

	return true;
}

/*
 * The debugfs directory of the adapter behind the render node @st:
 * /sys/kernel/debug/dri/<card minor> (the contract), else the render
 * minor's link to the same directory, else whichever directory's
 * nfence_adapter reports our adapter @index. Empty string if none.
 */
static bool nf_find_debugfs(const struct stat *st, __u32 index, char *dir,
			    size_t len)
{
	unsigned long long v;
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int n;
	bool found = false;
	DIR *d;

	if (snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/drm",
		     major(st->st_rdev), minor(st->st_rdev)) < (int)sizeof(path)) {
		d = opendir(path);
		while (d && !found && (de = readdir(d))) {
			if (sscanf(de->d_name, "card%u", &n) != 1)
				continue;
			if (snprintf(dir, len, NF_DEBUGFS_DRI "/%u", n) <
			    (int)len)
				found = nf_debugfs_usable(dir);
		}
		if (d)
			closedir(d);
	}
	if (found)
		return true;

	if (snprintf(dir, len, NF_DEBUGFS_DRI "/%u", minor(st->st_rdev)) <
	    (int)len && nf_debugfs_usable(dir))
		return true;

	d = opendir(NF_DEBUGFS_DRI);
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(dir, len, NF_DEBUGFS_DRI "/%s", de->d_name) >=
		    (int)len || !nf_debugfs_usable(dir))
			continue;
		found = !nf_read_key_u64(dir, "nfence_adapter", "index", &v) &&
			v == index;
	}
	if (d)
		closedir(d);
	if (!found && len)
		dir[0] = '\0';

	return found;
}

static int nf_adapter_devices(const char *dir, unsigned long long *n)
{
	return nf_read_key_u64(dir, "nfence_adapter", "devices", n);
}

/*
 * Wait until nfence_adapter "devices:" equals @want, for at most
 * NF_SETTLE_MS. Returns the last value read, or -1 if it cannot be read.
 */
static long long nf_wait_devices(const char *dir, unsigned long long want)
{
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
	unsigned long long n = 0;
	int i;

	for (i = 0; i < NF_SETTLE_MS / 10; i++) {
		if (nf_adapter_devices(dir, &n))
			return -1;
		if (n == want)
			break;
		nanosleep(&ts, NULL);
	}

	return (long long)n;
}

/*
 * nfence_clients: "pid <pid> comm <comm> devices <n>" per open file.
 * Returns the devices of the first file opened by @pid, -ENOENT if @pid
 * has none open.
 */
static long long nf_client_devices(const char *dir, pid_t pid)
{
	char path[PATH_MAX];
	char line[256];
	long long ret = -ENOENT;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/nfence_clients", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;

	while (fgets(line, sizeof(line), f)) {
		unsigned long long devs;
		const char *p;
		int lpid;

		if (sscanf(line, "pid %d ", &lpid) != 1 || lpid != pid)
			continue;
		/* comm may hold anything: take the last " devices ". */
		p = strstr(line, " devices ");
		while (p && strstr(p + 1, " devices "))
			p = strstr(p + 1, " devices ");
		if (p && sscanf(p, " devices %llu", &devs) == 1) {
			ret = (long long)devs;
			break;
		}
	}
	fclose(f);

	return ret;
}

/* ------------------------------------------------------------------ */
/* /proc/<pid>/stat                                                   */
/* ------------------------------------------------------------------ */

struct nf_task_stat {
	char comm[64];
	char state;
	unsigned long flags;
	unsigned long long utime;
	unsigned long long stime;
};

static int nf_read_task_stat(pid_t pid, struct nf_task_stat *ts)
{
	char path[64];
	char buf[1024];
	char *lp, *rp;
	size_t clen;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';

	/* comm is in parentheses and may contain anything, even ')'. */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp)
		return -EPROTO;
	clen = rp - lp - 1;
	if (clen >= sizeof(ts->comm))
		clen = sizeof(ts->comm) - 1;
	memcpy(ts->comm, lp + 1, clen);
	ts->comm[clen] = '\0';

	/* Fields 3 (state) .. 15 (stime). */
	if (sscanf(rp + 1,
		   " %c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu",
		   &ts->state, &ts->flags, &ts->utime, &ts->stime) != 4)
		return -EPROTO;

	return 0;
}

static bool nf_is_nfence_kthread(const struct nf_task_stat *ts)
{
	return (ts->flags & NF_PF_KTHREAD) &&
	       !strncmp(ts->comm, "nfence", strlen("nfence"));
}

/* Every kernel thread whose comm starts with "nfence". */
static int nf_scan_nfence_kthreads(pid_t *pids, int max)
{
	struct nf_task_stat ts;
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (!nf_read_task_stat(pid, &ts) && nf_is_nfence_kthread(&ts))
			pids[n++] = pid;
	}
	closedir(d);

	return n;
}

/* ------------------------------------------------------------------ */
/* Process helpers                                                    */
/* ------------------------------------------------------------------ */

static int nf_waitpid(pid_t pid, int *status)
{
	pid_t ret;

	do {
		ret = waitpid(pid, status, 0);
	} while (ret == -1 && errno == EINTR);

	return ret == pid ? 0 : -errno;
}

static const char *nf_wstatus(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "wait status 0x%x", status);

	return buf;
}

static bool nf_exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void nf_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000 * 1000,
	};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* The re-executed child of the close-on-exec tests.                  */
/* ------------------------------------------------------------------ */

/*
 * argv: <exe> NF_EXEC_MARKER closed <fd>
 *       <exe> NF_EXEC_MARKER open <fd> <rdev> <luid> <handle>
 *
 * "closed": the fd was opened with O_CLOEXEC and must be gone.
 * "open": the fd was opened without it; it must still be the render node,
 * answer the query ioctl with the same adapter, and still hold the device
 * @handle the parent created before the exec (same drm_file), which this
 * child destroys.
 *
 * Runs before the harness and prints nothing on stdout (KTAP stream).
 */
enum {
	NF_EXEC_OK = 0,
	NF_EXEC_USAGE = 20,
	NF_EXEC_STILL_OPEN,
	NF_EXEC_BAD_ERRNO,
	NF_EXEC_GONE,
	NF_EXEC_CLOEXEC_SET,
	NF_EXEC_NOT_NODE,
	NF_EXEC_QUERY,
	NF_EXEC_LUID,
	NF_EXEC_DESTROY,
	NF_EXEC_REDESTROY,
};

static int nf_exec_child_main(int argc, char **argv)
{
	unsigned long long rdev, luid;
	struct drm_nfence_query_adapter a;
	unsigned long handle;
	struct stat st;
	int fd, flags;

	if (argc < 4)
		return NF_EXEC_USAGE;
	fd = atoi(argv[3]);

	if (!strcmp(argv[2], "closed")) {
		if (fcntl(fd, F_GETFD) != -1)
			return NF_EXEC_STILL_OPEN;
		return errno == EBADF ? NF_EXEC_OK : NF_EXEC_BAD_ERRNO;
	}

	if (strcmp(argv[2], "open") || argc < 7)
		return NF_EXEC_USAGE;
	rdev = strtoull(argv[4], NULL, 0);
	luid = strtoull(argv[5], NULL, 0);
	handle = strtoul(argv[6], NULL, 0);

	flags = fcntl(fd, F_GETFD);
	if (flags == -1)
		return NF_EXEC_GONE;
	if (flags & FD_CLOEXEC)
		return NF_EXEC_CLOEXEC_SET;
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || st.st_rdev != rdev)
		return NF_EXEC_NOT_NODE;
	if (nf_query_adapter(fd, &a))
		return NF_EXEC_QUERY;
	if (nf_luid(&a) != luid)
		return NF_EXEC_LUID;
	if (nf_device_destroy(fd, handle))
		return NF_EXEC_DESTROY;
	if (nf_device_destroy(fd, handle) != -ENOENT)
		return NF_EXEC_REDESTROY;

	return NF_EXEC_OK;
}

static const char *nf_exec_result(int status)
{
	if (!WIFEXITED(status))
		return "did not exit";

	switch (WEXITSTATUS(status)) {
	case NF_EXEC_OK:
		return "ok";
	case NF_EXEC_USAGE:
		return "bad arguments";
	case NF_EXEC_STILL_OPEN:
		return "O_CLOEXEC fd still open after exec";
	case NF_EXEC_BAD_ERRNO:
		return "fcntl(F_GETFD) failed, but not with EBADF";
	case NF_EXEC_GONE:
		return "fd without O_CLOEXEC closed by exec";
	case NF_EXEC_CLOEXEC_SET:
		return "fd has FD_CLOEXEC set";
	case NF_EXEC_NOT_NODE:
		return "fd is not the render node any more";
	case NF_EXEC_QUERY:
		return "query ioctl failed after exec";
	case NF_EXEC_LUID:
		return "query answered another adapter";
	case NF_EXEC_DESTROY:
		return "device created before exec not found after it";
	case NF_EXEC_REDESTROY:
		return "destroyed device still there";
	case 127:
		return "execv(/proc/self/exe) failed";
	default:
		return "unknown exit code";
	}
}

/* fork + execv("/proc/self/exe", argv); returns the child's wait status. */
static int nf_run_exec_child(char *const argv[], int *status)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}

	return nf_waitpid(pid, status);
}

/* ------------------------------------------------------------------ */
/* Worker of many_processes: runs in each of NF_NPROC children.       */
/* ------------------------------------------------------------------ */

enum {
	NF_W_OK = 0,
	NF_W_OPEN = 10,
	NF_W_VERSION,
	NF_W_QUERY,
	NF_W_ADAPTER,
	NF_W_CREATE,
	NF_W_HANDLE,
	NF_W_DESTROY,
	NF_W_REDESTROY,
	NF_W_CLOSE,
};

static int nf_worker(const char *node, const struct drm_nfence_query_adapter *ref)
{
	__u32 h[NF_NDEV_PER_PROC];
	struct drm_nfence_query_adapter a;
	int fd, r, i, j;

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NF_W_OPEN;
	if (!nf_is_nfence(fd))
		return NF_W_VERSION;
	if (nf_query_adapter(fd, &a))
		return NF_W_QUERY;
	if (memcmp(&a, ref, sizeof(a)))
		return NF_W_ADAPTER;

	for (r = 0; r < NF_ROUNDS; r++) {
		for (i = 0; i < NF_NDEV_PER_PROC; i++) {
			if (nf_device_create(fd, &h[i]))
				return NF_W_CREATE;
			for (j = 0; j < i; j++)
				if (h[j] == h[i])
					return NF_W_HANDLE;
		}
		for (i = 0; i < NF_NDEV_PER_PROC; i++)
			if (nf_device_destroy(fd, h[i]))
				return NF_W_DESTROY;
		for (i = 0; i < NF_NDEV_PER_PROC; i++)
			if (nf_device_destroy(fd, h[i]) != -ENOENT)
				return NF_W_REDESTROY;
	}

	return close(fd) ? NF_W_CLOSE : NF_W_OK;
}

/* ------------------------------------------------------------------ */
/* Tests without the fixture.                                         */
/* ------------------------------------------------------------------ */

/*
 * Every nfence render node belongs to platform device "nfence.<index>",
 * answers ADAPTER with its index and a non-zero LUID, indices are
 * 0 .. n - 1 and LUIDs distinct, and n matches num_adapters.
 */
TEST(adapters_enumerate)
{
	char nodes[NF_MAX_NODES][NF_NODE_LEN];
	__u64 luids[NF_MAX_NODES];
	unsigned long long nparam;
	bool seen[NF_MAX_NODES] = { false };
	char link[PATH_MAX], path[PATH_MAX], want[32];
	int i, j, n;
	FILE *f;

	n = nf_list_render_nodes(nodes, NF_MAX_NODES);
	if (n < 1)
		SKIP(return, "no nfence render node (is the nfence module loaded?)");

	for (i = 0; i < n; i++) {
		struct drm_nfence_query_adapter a;
		struct stat st;
		ssize_t len;
		int fd;

		fd = open(nodes[i], O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("open %s: %s", nodes[i], strerror(errno));
		ASSERT_EQ(0, fstat(fd, &st));
		ASSERT_EQ(0, nf_query_adapter(fd, &a)) TH_LOG("%s", nodes[i]);
		close(fd);

		ASSERT_GT((__u32)NF_MAX_NODES, a.index);
		EXPECT_FALSE(seen[a.index]) TH_LOG("index %u twice", a.index);
		seen[a.index] = true;
		luids[i] = nf_luid(&a);
		EXPECT_NE(0ULL, luids[i]) TH_LOG("%s: zero LUID", nodes[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(luids[j], luids[i])
				TH_LOG("%s and %s share a LUID", nodes[j], nodes[i]);

		snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device",
			 major(st.st_rdev), minor(st.st_rdev));
		len = readlink(path, link, sizeof(link) - 1);
		ASSERT_LT(0, len) TH_LOG("readlink %s: %s", path, strerror(errno));
		link[len] = '\0';
		snprintf(want, sizeof(want), "nfence.%u", a.index);
		EXPECT_STREQ(want, basename(link));
	}
	for (i = 0; i < n; i++)
		EXPECT_TRUE(seen[i]) TH_LOG("no adapter with index %d", i);

	f = fopen("/sys/module/nfence/parameters/num_adapters", "re");
	if (f) {
		if (fscanf(f, "%llu", &nparam) == 1)
			EXPECT_EQ(nparam, (unsigned long long)n);
		fclose(f);
	}
}

/* ------------------------------------------------------------------ */
/* Fixture: one open render node of the adapter under test.           */
/* ------------------------------------------------------------------ */

FIXTURE(nfence) {
	int fd;
	char node[NF_NODE_LEN];
	struct stat st;
	struct drm_nfence_query_adapter adapter;
	/* debugfs directory of the adapter, "" when debugfs is unusable */
	char dbg[256];
};

FIXTURE_SETUP(nfence)
{
	self->fd = -1;
	self->dbg[0] = '\0';

	if (nf_find_render_node(self->node, sizeof(self->node)))
		SKIP(return, "no nfence render node (is the nfence module loaded?)");

	self->fd = open(self->node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", self->node, strerror(errno));
	ASSERT_EQ(0, fstat(self->fd, &self->st));
	ASSERT_EQ(0, nf_query_adapter(self->fd, &self->adapter));

	nf_find_debugfs(&self->st, self->adapter.index, self->dbg,
			sizeof(self->dbg));
}

FIXTURE_TEARDOWN(nfence)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * NF_NPROC processes open the render node at the same moment, query the
 * adapter and create and destroy devices; all must succeed, and no device
 * must be left behind.
 */
TEST_F_TIMEOUT(nfence, many_processes, 60)
{
	unsigned long long before = 0;
	pid_t pids[NF_NPROC];
	int gate[2], i, ok = 0;
	char buf[64];

	if (self->dbg[0])
		ASSERT_EQ(0, nf_adapter_devices(self->dbg, &before));

	/* The children block on the gate until the parent closes its end. */
	ASSERT_EQ(0, pipe2(gate, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < NF_NPROC; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]) TH_LOG("fork: %s", strerror(errno));
		if (pids[i] == 0) {
			char c;

			close(gate[1]);
			while (read(gate[0], &c, 1) == -1 && errno == EINTR)
				;
			_exit(nf_worker(self->node, &self->adapter));
		}
	}
	close(gate[0]);
	close(gate[1]);

	for (i = 0; i < NF_NPROC; i++) {
		int status;

		ASSERT_EQ(0, nf_waitpid(pids[i], &status));
		if (nf_exited_ok(status))
			ok++;
		else
			TH_LOG("child %d (pid %d): %s", i, pids[i],
			       nf_wstatus(status, buf, sizeof(buf)));
	}
	EXPECT_EQ(NF_NPROC, ok);

	if (self->dbg[0])
		EXPECT_EQ((long long)before, nf_wait_devices(self->dbg, before));
}

/*
 * A child after fork() shares the parent's drm_file: it sees the device
 * the parent created, destroying it there is visible to the parent, a
 * device the child creates is visible to the parent, and the child's exit
 * does not destroy anything.
 */
TEST_F(nfence, fork_shares_handles)
{
	__u32 a, b, c = 0;
	int p[2], status;
	char buf[64];
	pid_t pid;

	ASSERT_EQ(0, nf_device_create(self->fd, &a));
	ASSERT_EQ(0, nf_device_create(self->fd, &b));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_nfence_query_adapter ad;

		close(p[0]);
		if (nf_query_adapter(self->fd, &ad) ||
		    nf_luid(&ad) != nf_luid(&self->adapter))
			_exit(10);
		if (nf_device_destroy(self->fd, a))
			_exit(11);
		if (nf_device_destroy(self->fd, a) != -ENOENT)
			_exit(12);
		if (nf_device_create(self->fd, &c))
			_exit(13);
		if (write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(14);
		_exit(0);
	}
	close(p[1]);

	ASSERT_EQ(0, nf_waitpid(pid, &status));
	ASSERT_TRUE(nf_exited_ok(status))
		TH_LOG("child: %s (10 query, 11 destroy, 12 re-destroy, 13 create, 14 pipe)",
		       nf_wstatus(status, buf, sizeof(buf)));
	ASSERT_EQ((ssize_t)sizeof(c), read(p[0], &c, sizeof(c)));
	close(p[0]);

	EXPECT_EQ(-ENOENT, nf_device_destroy(self->fd, a));
	EXPECT_EQ(0, nf_device_destroy(self->fd, b));
	EXPECT_EQ(0, nf_device_destroy(self->fd, c));
}

/*
 * Handles are per open file: a device of one file is -ENOENT on another
 * file of the same process, and the failed attempt does not destroy it.
 */
TEST_F(nfence, handles_per_file)
{
	__u32 h1, h2, h2b;
	int fd2;

	fd2 = open(self->node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2) TH_LOG("open %s: %s", self->node, strerror(errno));

	ASSERT_EQ(0, nf_device_create(self->fd, &h1));
	EXPECT_EQ(-ENOENT, nf_device_destroy(fd2, h1));

	/*
	 * Both files may hand out the same numbers: of two devices of fd2,
	 * one has a handle that names nothing on fd1.
	 */
	ASSERT_EQ(0, nf_device_create(fd2, &h2));
	ASSERT_EQ(0, nf_device_create(fd2, &h2b));
	ASSERT_NE(h2, h2b);
	if (h2 == h1) {
		EXPECT_EQ(0, nf_device_destroy(fd2, h2));
		h2 = h2b;
	} else {
		EXPECT_EQ(0, nf_device_destroy(fd2, h2b));
	}
	EXPECT_EQ(-ENOENT, nf_device_destroy(self->fd, h2));

	/* The failed attempts destroyed nothing. */
	EXPECT_EQ(0, nf_device_destroy(self->fd, h1));
	EXPECT_EQ(-ENOENT, nf_device_destroy(self->fd, h1));
	EXPECT_EQ(0, nf_device_destroy(fd2, h2));
	EXPECT_EQ(-ENOENT, nf_device_destroy(fd2, h2));

	/* Closing one file leaves the other working. */
	ASSERT_EQ(0, nf_device_create(fd2, &h2));
	EXPECT_EQ(0, close(fd2));
	ASSERT_EQ(0, nf_device_create(self->fd, &h1));
	EXPECT_EQ(0, nf_device_destroy(self->fd, h1));
}

/*
 * The driver's debugfs files are where the contract puts them, at
 * /sys/kernel/debug/dri/<card minor>/, and say what a process expects:
 * our adapter index, our open file, an existing CMP thread. Skips only
 * when debugfs is not mounted or not readable.
 */
TEST_F(nfence, debugfs_files)
{
	static const char *const keys[][2] = {
		{ "nfence_adapter", "index" },
		{ "nfence_adapter", "devices" },
		{ "nfence_adapter", "clients" },
		{ "nfence_cmp", "state" },
		{ "nfence_cmp", "pid" },
		{ "nfence_cmp", "wakeups" },
		{ "nfence_cmp", "passes" },
	};
	char path[PATH_MAX], want[PATH_MAX];
	unsigned long long v;
	struct statfs sfs;
	struct dirent *de;
	unsigned int card;
	bool have_card = false;
	size_t i;
	DIR *d;

	if (statfs(NF_DEBUGFS, &sfs) || sfs.f_type != NF_DEBUGFS_MAGIC)
		SKIP(return, "debugfs not mounted at " NF_DEBUGFS);
	if (access(NF_DEBUGFS_DRI, R_OK | X_OK))
		SKIP(return, NF_DEBUGFS_DRI " not readable (not root?)");
	ASSERT_NE(0, self->dbg[0])
		TH_LOG("no nfence_adapter for adapter %u under " NF_DEBUGFS_DRI,
		       self->adapter.index);

	/* The card minor of our DRM device names the directory. */
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/drm",
		 major(self->st.st_rdev), minor(self->st.st_rdev));
	d = opendir(path);
	ASSERT_NE(NULL, d) TH_LOG("%s: %s", path, strerror(errno));
	while (!have_card && (de = readdir(d)))
		have_card = sscanf(de->d_name, "card%u", &card) == 1;
	closedir(d);
	ASSERT_TRUE(have_card) TH_LOG("no card node next to %s", self->node);
	snprintf(want, sizeof(want), NF_DEBUGFS_DRI "/%u", card);
	EXPECT_STREQ(want, self->dbg);

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		char val[128];

		EXPECT_EQ(0, nf_read_key(self->dbg, keys[i][0], keys[i][1],
					 val, sizeof(val)))
			TH_LOG("%s/%s: no \"%s:\"", self->dbg, keys[i][0],
			       keys[i][1]);
	}

	ASSERT_EQ(0, nf_read_key_u64(self->dbg, "nfence_adapter", "index", &v));
	EXPECT_EQ(self->adapter.index, v);
	ASSERT_EQ(0, nf_read_key_u64(self->dbg, "nfence_adapter", "clients", &v));
	EXPECT_LE(1ULL, v);
	/* Our own file, with no devices yet. */
	EXPECT_EQ(0, nf_client_devices(self->dbg, getpid()));

	snprintf(path, sizeof(path), "%s/nfence_segments", self->dbg);
	EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s: %s", path, strerror(errno));
}

/* Closing a file destroys every device it still holds. */
TEST_F(nfence, close_destroys_devices)
{
	unsigned long long before, during;
	__u32 h;
	int fd2, i;

	if (!self->dbg[0])
		SKIP(return, "debugfs not mounted or not readable: cannot count devices");

	ASSERT_EQ(0, nf_adapter_devices(self->dbg, &before));
	fd2 = open(self->node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, nf_device_create(fd2, &h));
	ASSERT_EQ(0, nf_adapter_devices(self->dbg, &during));
	EXPECT_EQ(before + 8, during);
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ((long long)before, nf_wait_devices(self->dbg, before));
}

/* An fd opened with O_CLOEXEC is gone in the process after execve(). */
TEST_F(nfence, cloexec_fd_closed_by_exec)
{
	char fdstr[16], buf[64];
	int fd, status;
	char *argv[] = {
		"nfence_process_test", NF_EXEC_MARKER, "closed", fdstr, NULL,
	};

	fd = open(self->node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	snprintf(fdstr, sizeof(fdstr), "%d", fd);

	ASSERT_EQ(0, nf_run_exec_child(argv, &status));
	EXPECT_TRUE(nf_exited_ok(status))
		TH_LOG("exec child: %s: %s",
		       nf_wstatus(status, buf, sizeof(buf)),
		       nf_exec_result(status));

	/* The parent's copy is untouched. */
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	close(fd);
}

/*
 * An fd opened without O_CLOEXEC survives execve(): it is still the render
 * node, answers the query ioctl, and still holds the device created before
 * the exec. The exec'd process destroys it, which the parent then sees.
 */
TEST_F(nfence, fd_survives_exec_without_cloexec)
{
	char fdstr[16], rdevstr[32], luidstr[32], hstr[16], buf[64];
	int fd, status;
	__u32 h;
	char *argv[] = {
		"nfence_process_test", NF_EXEC_MARKER, "open", fdstr, rdevstr,
		luidstr, hstr, NULL,
	};

	fd = open(self->node, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nf_device_create(fd, &h));

	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	snprintf(rdevstr, sizeof(rdevstr), "%llu",
		 (unsigned long long)self->st.st_rdev);
	snprintf(luidstr, sizeof(luidstr), "0x%llx",
		 (unsigned long long)nf_luid(&self->adapter));
	snprintf(hstr, sizeof(hstr), "%u", h);

	ASSERT_EQ(0, nf_run_exec_child(argv, &status));
	EXPECT_TRUE(nf_exited_ok(status))
		TH_LOG("exec child: %s: %s",
		       nf_wstatus(status, buf, sizeof(buf)),
		       nf_exec_result(status));

	EXPECT_EQ(-ENOENT, nf_device_destroy(fd, h));
	close(fd);
}

/*
 * A process killed with SIGKILL while holding devices on its own file:
 * its devices are destroyed, and its file is gone from nfence_clients.
 */
TEST_F(nfence, sigkill_cleans_devices)
{
	unsigned long long before = 0, during = 0;
	struct drm_nfence_query_adapter a;
	int ready[2], status;
	char buf[64], c;
	ssize_t n;
	pid_t pid;

	if (self->dbg[0])
		ASSERT_EQ(0, nf_adapter_devices(self->dbg, &before));

	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 h;
		int fd, i;

		close(ready[0]);
		/* Never outlive the test, whatever happens to it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(9);
		/* Its own file: the inherited one is shared with the parent. */
		fd = open(self->node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(10);
		for (i = 0; i < NF_KILL_NDEV; i++)
			if (nf_device_create(fd, &h))
				_exit(11);
		if (write(ready[1], "r", 1) != 1)
			_exit(12);
		for (;;)
			pause();
	}
	close(ready[1]);

	do {
		n = read(ready[0], &c, 1);
	} while (n == -1 && errno == EINTR);
	close(ready[0]);
	if (n != 1) {
		ASSERT_EQ(0, nf_waitpid(pid, &status));
		ASSERT_EQ(1, n)
			TH_LOG("child died before it was ready: %s (9 prctl, 10 open, 11 create)",
			       nf_wstatus(status, buf, sizeof(buf)));
	}

	if (self->dbg[0]) {
		EXPECT_EQ(0, nf_adapter_devices(self->dbg, &during));
		EXPECT_EQ(before + NF_KILL_NDEV, during);
		EXPECT_EQ(NF_KILL_NDEV, nf_client_devices(self->dbg, pid));
	}

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(0, nf_waitpid(pid, &status));
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child: %s", nf_wstatus(status, buf, sizeof(buf)));

	/* The parent's own file is unaffected. */
	ASSERT_EQ(0, nf_query_adapter(self->fd, &a));

	if (!self->dbg[0])
		SKIP(return, "debugfs not usable: device cleanup after SIGKILL not checked");

	EXPECT_EQ((long long)before, nf_wait_devices(self->dbg, before));
	EXPECT_EQ(-ENOENT, nf_client_devices(self->dbg, pid));
}

/*
 * The CMP kernel thread exists while the module is loaded: a kernel thread
 * whose comm starts with "nfence" (the one named by nfence_cmp "pid:" when
 * debugfs is available).
 */
TEST_F(nfence, cmp_thread_exists)
{
	struct nf_task_stat ts;
	unsigned long long pid;
	char state[32];
	pid_t pids[16];
	int n;

	if (!self->dbg[0]) {
		n = nf_scan_nfence_kthreads(pids, 16);
		TH_LOG("debugfs not usable: found %d nfence kernel thread(s) in /proc", n);
		ASSERT_LE(1, n);
		return;
	}

	ASSERT_EQ(0, nf_read_key_u64(self->dbg, "nfence_cmp", "pid", &pid));
	ASSERT_LT(0ULL, pid);
	ASSERT_EQ(0, nf_read_task_stat(pid, &ts))
		TH_LOG("CMP thread pid %llu not in /proc", pid);
	EXPECT_EQ(0, strncmp(ts.comm, "nfence", strlen("nfence")))
		TH_LOG("CMP thread comm \"%s\"", ts.comm);
	EXPECT_NE(0UL, ts.flags & NF_PF_KTHREAD)
		TH_LOG("pid %llu is not a kernel thread", pid);

	ASSERT_EQ(0, nf_read_key(self->dbg, "nfence_cmp", "state", state,
				 sizeof(state)));
	EXPECT_TRUE(!strcmp(state, "idle") || !strcmp(state, "running"))
		TH_LOG("state \"%s\"", state);
}

/*
 * The CMP thread sleeps on a wait queue while the adapter is idle: its
 * utime + stime do not move over 2 s.
 */
TEST_F_TIMEOUT(nfence, cmp_thread_idle_no_cpu, 30)
{
	unsigned long long t0[16], t1[16];
	unsigned long long w0 = 0, w1 = 0, pid;
	struct nf_task_stat ts;
	char state[32] = "";
	pid_t pids[16];
	int i, n;

	if (self->dbg[0]) {
		ASSERT_EQ(0, nf_read_key_u64(self->dbg, "nfence_cmp", "pid",
					     &pid));
		pids[0] = pid;
		n = 1;

		/* The adapter has no work: the CMP must reach idle. */
		for (i = 0; i < 200; i++) {
			ASSERT_EQ(0, nf_read_key(self->dbg, "nfence_cmp", "state",
						 state, sizeof(state)));
			if (!strcmp(state, "idle"))
				break;
			nf_sleep_ms(10);
		}
		ASSERT_STREQ("idle", state);
	} else {
		n = nf_scan_nfence_kthreads(pids, 16);
		TH_LOG("debugfs not usable: measuring all %d nfence kernel thread(s)", n);
		ASSERT_LE(1, n);
	}

	/* Let anything the fixture's open() caused run out. */
	nf_sleep_ms(200);

	if (self->dbg[0])
		nf_read_key_u64(self->dbg, "nfence_cmp", "wakeups", &w0);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, nf_read_task_stat(pids[i], &ts));
		t0[i] = ts.utime + ts.stime;
	}

	nf_sleep_ms(2000);

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, nf_read_task_stat(pids[i], &ts));
		t1[i] = ts.utime + ts.stime;
	}
	if (self->dbg[0]) {
		nf_read_key_u64(self->dbg, "nfence_cmp", "wakeups", &w1);
		TH_LOG("CMP pid %d: %llu wakeups in 2 s", pids[0], w1 - w0);
	}

	for (i = 0; i < n; i++)
		EXPECT_EQ(0ULL, t1[i] - t0[i])
			TH_LOG("pid %d used %llu clock ticks while idle",
			       pids[i], t1[i] - t0[i]);
}

/*
 * The idle check: after real GPU work, with a queue parked on a
 * FENCE_WAIT nobody will satisfy, the CMP sleeps: no CPU time and no
 * wakeups over 10 s.
 */
TEST_F_TIMEOUT(nfence, cmp_idle_with_parked_queue, 60)
{
	struct drm_nfence_device_create dc = {};
	struct drm_nfence_alloc_create ac = {};
	struct drm_nfence_alloc_lock al = {};
	struct drm_nfence_context_create cc = {};
	struct drm_nfence_hwqueue_create qc = {};
	struct drm_nfence_fence_create fc = {};
	struct drm_nfence_submit sub = {};
	unsigned long long pid, w0 = 0, w1 = 0;
	char state[32] = "", queues[512];
	struct nf_task_stat ts;
	unsigned long long t0;
	__u32 *cs;
	__u64 v;
	int i, n = 0;

	if (!self->dbg[0])
		SKIP(return, "needs debugfs to find the CMP and its queues");
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_DEVICE_CREATE, &dc));
	fc.device = dc.handle;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_FENCE_CREATE, &fc));
	ac.device = dc.handle;
	ac.size = 4096;
	ac.segment_id = 1;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_ALLOC_CREATE, &ac));
	al.device = dc.handle;
	al.handle = ac.handle;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_ALLOC_LOCK, &al));
	cs = mmap(NULL, al.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  al.mmap_offset);
	ASSERT_NE(MAP_FAILED, cs);
	cc.device = dc.handle;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_CONTEXT_CREATE, &cc));
	qc.device = dc.handle;
	qc.context = cc.handle;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_HWQUEUE_CREATE, &qc));

	/* WORK 1 ms, then wait for a value the fence never reaches. */
	cs[n++] = DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_WORK, 4);
	cs[n++] = 0;
	v = 1000000;
	memcpy(&cs[n], &v, 8);
	n += 2;
	cs[n++] = DRM_NFENCE_CS_HEADER(DRM_NFENCE_CS_FENCE_WAIT, 6);
	cs[n++] = 0;
	memcpy(&cs[n], &fc.mapping.current_value_gpu_va, 8);
	n += 2;
	v = 1;
	memcpy(&cs[n], &v, 8);
	n += 2;
	sub.device = dc.handle;
	sub.hwqueue = qc.handle;
	sub.commands_gpu_va = ac.gpu_va;
	sub.size = n * 4;
	sub.progress_fence_value = 1;
	ASSERT_EQ(0, nf_ioctl(self->fd, DRM_IOCTL_NFENCE_SUBMIT, &sub));

	for (i = 0; i < 500; i++) {
		ASSERT_EQ(0, nf_read_key(self->dbg, "nfence_cmp", "state",
					 state, sizeof(state)));
		queues[0] = '\0';
		nf_read_file(self->dbg, "nfence_queues", queues, sizeof(queues));
		if (!strcmp(state, "idle") && strstr(queues, "state wait-fence"))
			break;
		nf_sleep_ms(10);
	}
	ASSERT_STREQ("idle", state);
	ASSERT_NE(NULL, strstr(queues, "state wait-fence"));

	ASSERT_EQ(0, nf_read_key_u64(self->dbg, "nfence_cmp", "pid", &pid));
	nf_read_key_u64(self->dbg, "nfence_cmp", "wakeups", &w0);
	ASSERT_EQ(0, nf_read_task_stat(pid, &ts));
	t0 = ts.utime + ts.stime;
	nf_sleep_ms(10000);
	ASSERT_EQ(0, nf_read_task_stat(pid, &ts));
	nf_read_key_u64(self->dbg, "nfence_cmp", "wakeups", &w1);
	TH_LOG("CMP pid %llu with a parked queue: %llu ticks, %llu wakeups in 10 s",
	       pid, ts.utime + ts.stime - t0, w1 - w0);
	EXPECT_EQ(0ULL, ts.utime + ts.stime - t0);
	EXPECT_EQ(0ULL, w1 - w0);

	munmap(cs, al.size);
	ASSERT_EQ(0, nf_device_destroy(self->fd, dc.handle));
}

int main(int argc, char **argv)
{
	/* The process execve()d by the close-on-exec tests. */
	if (argc > 1 && !strcmp(argv[1], NF_EXEC_MARKER))
		return nf_exec_child_main(argc, argv);

	return test_harness_run(argc, argv);
}
