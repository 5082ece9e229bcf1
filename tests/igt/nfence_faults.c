// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Allocation failures on every path a process drives, one site at a time.
 *
 * Needs a kernel with fault injection (CONFIG_FAULT_INJECTION, FAILSLAB,
 * FAIL_PAGE_ALLOC, FAULT_INJECTION_STACKTRACE_FILTER: the project's debug
 * kernel) and two adapters; the VM runner runs it only there, in a load
 * of its own (scripts/vm-run.sh, "faults").
 *
 * The fixture points failslab and fail_page_alloc at nfence: sleeping
 * allocations may fail too, and only allocations with an nfence.ko frame
 * on the stack count (the stack-trace filter, require-start/-end set to
 * the module's text). Each subtest then runs one operation (an ioctl, an
 * open, an mmap) with /proc/thread-self/fail-nth set to 1, 2, 3, ...:
 * the Nth allocation nfence causes in that call fails. That walks every
 * allocation site of the operation's path in order, until a call
 * completes without reaching the Nth. For each injected failure:
 *  - the call fails with -ENOMEM, or succeeds (a site with a fallback);
 *  - nothing is left behind: the adapter's live devices, native fences,
 *    open files and segment usage are back to what they were, and the
 *    operation then works;
 *  - the site is named from the kernel's report of the failure (the first
 *    nfence frame and what it called), and printed as
 *    "fault-site: OPERATION N CALLEE <- FUNCTION+OFFSET RESULT".
 * kmemleak and the module unload after the run are the VM runner's.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

/* No path has anywhere near this many allocation sites. */
#define MAX_NTH		400

static int fd = -1, fd1 = -1, dbg = -1, dbg1 = -1, kmsg = -1;
static uint32_t dev, dev1;
static char node0[64];

/* What must be back to its value after every failed call. */
struct baseline {
	int64_t devices[2];
	int64_t fences[2];
	uint64_t sys_used, vram_used;
	uint64_t clients;
};

static void snapshot(struct baseline *b)
{
	b->devices[0] = nfence_live_devices(fd);
	b->devices[1] = nfence_live_devices(fd1);
	b->fences[0] = nfence_debugfs_count_fences(dbg);
	b->fences[1] = nfence_debugfs_count_fences(dbg1);
	igt_assert_eq(__nfence_debugfs_segment_used(dbg, NFENCE_SEGMENT_SYSTEM,
						    &b->sys_used), 0);
	igt_assert_eq(__nfence_debugfs_segment_used(dbg, NFENCE_SEGMENT_VRAM,
						    &b->vram_used), 0);
	b->clients = nfence_debugfs_get_u64(dbg, "nfence_adapter", "clients");
}

static void assert_baseline(const struct baseline *want, const char *op,
			    int nth)
{
	struct baseline now;

	snapshot(&now);
	igt_assert_f(!memcmp(want, &now, sizeof(now)),
		     "%s, allocation %d failed: left something behind: "
		     "devices %" PRId64 "/%" PRId64 " (were %" PRId64 "/%"
		     PRId64 "), fences %" PRId64 "/%" PRId64 " (were %" PRId64
		     "/%" PRId64 "), system %" PRIu64 " (was %" PRIu64
		     "), VRAM %" PRIu64 " (was %" PRIu64 "), clients %" PRIu64
		     " (were %" PRIu64 ")\n", op, nth,
		     now.devices[0], now.devices[1], want->devices[0],
		     want->devices[1], now.fences[0], now.fences[1],
		     want->fences[0], want->fences[1], now.sys_used,
		     want->sys_used, now.vram_used, want->vram_used,
		     now.clients, want->clients);
}

/* debugfs fault attributes */

static void attr_write(const char *attr, const char *file, const char *value)
{
	char path[128];
	int f, len = strlen(value);

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", attr, file);
	f = open(path, O_WRONLY);
	igt_assert_f(f >= 0, "%s: %s (a kernel with fault injection?)\n",
		     path, strerror(errno));
	igt_assert_eq(write(f, value, len), len);
	close(f);
}

/* The lowest and highest address of nfence.ko's symbols. */
static void module_range(uint64_t *lo, uint64_t *hi)
{
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "r");

	igt_assert(f);
	*lo = UINT64_MAX;
	*hi = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;

		if (!strstr(line, "[nfence]"))
			continue;
		addr = strtoull(line, NULL, 16);
		if (addr < *lo)
			*lo = addr;
		if (addr > *hi)
			*hi = addr;
	}
	fclose(f);
	igt_assert_f(*lo && *lo < *hi,
		     "no nfence symbols in /proc/kallsyms (kptr_restrict?)\n");
}

static void faults_setup(void)
{
	static const char * const attrs[] = { "failslab", "fail_page_alloc" };
	char lo_s[32], hi_s[32];
	uint64_t lo, hi;

	module_range(&lo, &hi);
	snprintf(lo_s, sizeof(lo_s), "%" PRIu64, lo);
	/* The last function's size is not in kallsyms: a page past it. */
	snprintf(hi_s, sizeof(hi_s), "%" PRIu64, hi + 4096);
	for (unsigned int i = 0; i < ARRAY_SIZE(attrs); i++) {
		attr_write(attrs[i], "probability", "0");
		attr_write(attrs[i], "ignore-gfp-wait", "N");
		attr_write(attrs[i], "verbose", "2");
		attr_write(attrs[i], "stacktrace-depth", "32");
		attr_write(attrs[i], "require-start", lo_s);
		attr_write(attrs[i], "require-end", hi_s);
	}
	attr_write("fail_page_alloc", "ignore-gfp-highmem", "N");
	attr_write("fail_page_alloc", "min-order", "0");
}

static void faults_teardown(void)
{
	static const char * const attrs[] = { "failslab", "fail_page_alloc" };

	for (unsigned int i = 0; i < ARRAY_SIZE(attrs); i++) {
		attr_write(attrs[i], "require-start", "0");
		attr_write(attrs[i], "require-end", "18446744073709551615");
		attr_write(attrs[i], "ignore-gfp-wait", "Y");
	}
}

/* fail-nth */

static void set_fail_nth(int nth)
{
	char buf[16];
	int f = open("/proc/thread-self/fail-nth", O_RDWR);
	int len = snprintf(buf, sizeof(buf), "%d", nth);

	igt_assert_f(f >= 0, "/proc/thread-self/fail-nth: %s\n",
		     strerror(errno));
	igt_assert_eq(write(f, buf, len), len);
	close(f);
}

/* Whether the fault was injected; clears whatever is left of the count. */
static bool fail_nth_injected(void)
{
	char buf[16] = "";
	int f = open("/proc/thread-self/fail-nth", O_RDWR);
	bool injected;

	igt_assert(f >= 0);
	igt_assert_lt(0, read(f, buf, sizeof(buf) - 1));
	injected = atoi(buf) == 0;
	if (!injected)
		igt_assert_eq(write(f, "0", 1), 1);
	close(f);
	return injected;
}

/*
 * The site of the failure just injected, from the kernel's report: the
 * first nfence frame ("nfence_foo+0x1c/0x80 [nfence]") and the frame
 * before it, what nfence called.
 */
static void fault_site(char *site, size_t size)
{
	char rec[1024], prev[256] = "?";
	bool in_report = false;
	ssize_t n;

	/* __GFP_NOWARN allocations fail without a report (FAULT_NOWARN). */
	snprintf(site, size, "a __GFP_NOWARN allocation (no report)");
	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 || errno == EPIPE) {
		char *msg, *end;

		if (n <= 0)
			continue;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = '\0';
		if (strstr(msg, "FAULT_INJECTION: forcing a failure")) {
			in_report = true;
			continue;
		}
		if (!in_report)
			continue;
		while (*msg == ' ' || *msg == '?')
			msg++;
		if (strstr(msg, "[nfence]")) {
			char *slash = strchr(msg, '/');
			char *plus = strchr(prev, '+');

			if (slash)
				*slash = '\0';
			if (plus)
				*plus = '\0';
			snprintf(site, size, "%s <- %s", prev, msg);
			in_report = false;
			continue;
		}
		if (strchr(msg, '+'))
			snprintf(prev, sizeof(prev), "%s", msg);
	}
}

/*
 * How many allocation sites an operation's path reaches under nfence's own
 * frames. Most must reach at least one, or the injection is not working;
 * an mmap and its page fault may reach none (the core allocates before
 * calling nfence); and the paths nfence keeps free of allocations (a CPU
 * wait for one fence, a CPU signal of a few: DOC: CPU waits) must reach
 * none, so that one that starts allocating is seen.
 */
enum sites { SITES_SOME, SITES_MAYBE, SITES_NONE };

/*
 * One operation under test: @run does it and returns 0 or -errno,
 * @undo undoes a success. Both get @data.
 */
struct op {
	const char *name;
	int (*run)(void *data);
	void (*undo)(void *data);
	void *data;
	enum sites sites;
};

static void walk(const struct op *op)
{
	struct baseline base;
	unsigned int injected = 0, absorbed = 0;
	int nth, ret;

	nfence_watchdog(300);
	snapshot(&base);
	for (nth = 1; nth <= MAX_NTH; nth++) {
		char site[300];
		bool hit;

		lseek(kmsg, 0, SEEK_END);
		set_fail_nth(nth);
		ret = op->run(op->data);
		hit = fail_nth_injected();
		if (!hit) {
			/* Fewer than nth allocations: the whole path ran. */
			igt_assert_f(ret == 0, "%s failed with %d (%s) with no "
				     "fault injected\n", op->name, ret,
				     strerror(-ret));
			op->undo(op->data);
			assert_baseline(&base, op->name, nth);
			break;
		}
		fault_site(site, sizeof(site));
		printf("igt-report: fault-site: %s %d %s: %s\n", op->name, nth,
		       site, ret ? strerror(-ret) : "absorbed");
		igt_assert_f(ret == 0 || ret == -ENOMEM,
			     "%s with allocation %d (%s) failing returned %d "
			     "(%s), not -ENOMEM\n", op->name, nth, site, ret,
			     strerror(-ret));
		if (ret == 0) {
			absorbed++;
			op->undo(op->data);
		} else {
			injected++;
		}
		assert_baseline(&base, op->name, nth);
	}
	igt_assert_f(nth <= MAX_NTH, "%s: more than %d allocation sites?\n",
		     op->name, MAX_NTH);
	printf("igt-report: fault-sites: %s: %d allocation sites, %u failed "
	       "cleanly with -ENOMEM, %u absorbed\n", op->name, nth - 1,
	       injected, absorbed);
	if (op->sites == SITES_SOME)
		igt_assert_f(nth > 1, "%s reached no allocation site: is fault "
			     "injection on?\n", op->name);
	if (op->sites == SITES_NONE)
		igt_assert_f(nth == 1, "%s reached %d allocation sites, where "
			     "it should allocate nothing\n", op->name, nth - 1);
}

static void walk_op(const char *name, int (*run)(void *data),
		    void (*undo)(void *data), void *data, enum sites sites)
{
	const struct op op = {
		.name = name,
		.run = run,
		.undo = undo,
		.data = data,
		.sites = sites,
	};

	walk(&op);
}

/* The operations */

/*
 * Fences a wait or signal of many names: more than FENCE_SIGNAL takes
 * without allocating (8).
 */
#define MANY_FENCES	9

struct obj {
	int fd;
	uint32_t device;
	uint32_t handle;
	uint32_t extra;
	int share_fd;
	struct drm_nfence_fence_mapping m;
	void *map;
	int efd;
	struct nfence_queue q;
	uint64_t value;
	uint64_t window;	/* a CPU window's offset, opens into it */
	uint32_t fences[MANY_FENCES];	/* for the waits and signals of many */
	struct nfence_bo ring, control;
};

static int op_open(void *data)
{
	struct obj *o = data;

	o->fd = open(node0, O_RDWR | O_CLOEXEC);
	return o->fd < 0 ? -errno : 0;
}

static void undo_close(void *data)
{
	close(((struct obj *)data)->fd);
}

static int op_device_create(void *data)
{
	struct drm_nfence_device_create c = { 0 };
	struct obj *o = data;
	int ret = __nfence_device_create(fd, &c);

	o->handle = c.handle;
	return ret;
}

static void undo_device(void *data)
{
	nfence_device_destroy(fd, ((struct obj *)data)->handle);
}

static int fence_create(struct obj *o, int f, uint32_t device, uint32_t type,
			uint32_t flags)
{
	struct drm_nfence_fence_create c = {
		.device = device,
		.type = type,
		.flags = flags,
	};
	int ret = __nfence_fence_create(f, &c);

	o->handle = c.handle;
	o->m = c.mapping;
	return ret;
}

static int op_fence_default(void *data)
{
	return fence_create(data, fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0);
}

static int op_fence_intra_gpu(void *data)
{
	return fence_create(data, fd, dev, DRM_NFENCE_FENCE_TYPE_INTRA_GPU, 0);
}

static int op_fence_shared(void *data)
{
	return fence_create(data, fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
			    NFENCE_FENCE_SHAREABLE);
}

static int op_fence_cross_adapter(void *data)
{
	return fence_create(data, fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
			    NFENCE_FENCE_SHAREABLE |
			    DRM_NFENCE_FENCE_CROSS_ADAPTER);
}

static void undo_fence(void *data)
{
	nfence_fence_destroy(fd, ((struct obj *)data)->handle);
}

/* Share, open and map work on a fence made once, outside the walk. */
static int op_fence_share(void *data)
{
	struct obj *o = data;
	struct drm_nfence_fence_share s = { .handle = o->extra };
	int ret = __nfence_fence_share(fd, &s);

	o->share_fd = s.fd;
	return ret;
}

static void undo_share(void *data)
{
	close(((struct obj *)data)->share_fd);
}

static int op_fence_open(void *data)
{
	struct obj *o = data;
	struct drm_nfence_fence_open op = {
		.fd = o->share_fd,
		.device = o->device,
	};
	int ret = __nfence_fence_open(o->fd, &op);

	o->handle = op.handle;
	/* Into a file with a window: its first page. */
	if (!ret && o->window && op.mapping.cpu_mmap_offset != o->window) {
		nfence_fence_destroy(o->fd, op.handle);
		return -EPROTO;
	}
	return ret;
}

static void undo_open(void *data)
{
	struct obj *o = data;

	nfence_fence_destroy(o->fd, o->handle);
}

/* FENCE_WINDOW on a file of its own, which has none yet. */
static int op_fence_window(void *data)
{
	struct drm_nfence_fence_window w = { .pages = 4 };
	struct obj *o = data;

	return drmIoctl(o->fd, DRM_IOCTL_NFENCE_FENCE_WINDOW, &w) ? -errno : 0;
}

/* A file has one window for life: the next call gets a new file. */
static void undo_window(void *data)
{
	struct obj *o = data;

	close(o->fd);
	o->fd = open(node0, O_RDWR | O_CLOEXEC);
	igt_assert_f(o->fd >= 0, "reopening %s: %s\n", node0, strerror(errno));
}

static int op_fence_mmap(void *data)
{
	struct obj *o = data;

	o->map = mmap(NULL, NFENCE_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd,
		      o->m.cpu_mmap_offset);
	if (o->map == MAP_FAILED)
		return -errno;
	/* Fault the page in: that is where a mapping allocates. */
	(void)*(volatile uint64_t *)((char *)o->map + o->m.cpu_value_offset);
	return 0;
}

static void undo_mmap(void *data)
{
	munmap(((struct obj *)data)->map, NFENCE_FENCE_PAGE_SIZE);
}

static int op_wait_async(void *data)
{
	struct obj *o = data;
	uint64_t value = ++o->value;
	struct drm_nfence_fence_wait w = {
		.device = dev,
		.count = 1,
		.handles = (uintptr_t)&o->extra,
		.values = (uintptr_t)&value,
		.flags = DRM_NFENCE_WAIT_ASYNC,
		.eventfd = o->efd,
	};

	return __nfence_fence_wait(fd, &w);
}

static void undo_wait_async(void *data)
{
	struct obj *o = data;

	/* Release the queued wait: signal what it waits for. */
	nfence_fence_signal(fd, dev, o->extra, o->value);
}

static int op_wait_timeout_one(void *data)
{
	struct obj *o = data;
	int ret = __nfence_fence_wait_one(fd, dev, o->fences[0], 1 << 20,
					  nfence_deadline_ms(1));

	return ret == -ETIME ? 0 : ret;
}

static int op_wait_timeout_many(void *data)
{
	struct obj *o = data;
	uint64_t values[MANY_FENCES];
	struct drm_nfence_fence_wait w = {
		.device = dev,
		.count = MANY_FENCES,
		.handles = (uintptr_t)o->fences,
		.values = (uintptr_t)values,
		.timeout_ns = nfence_deadline_ms(1),
	};
	int i, ret;

	for (i = 0; i < MANY_FENCES; i++)
		values[i] = 1 << 20;
	ret = __nfence_fence_wait(fd, &w);
	return ret == -ETIME ? 0 : ret;
}

static void undo_nothing(void *data)
{
	(void)data;
}

static int op_signal_one(void *data)
{
	struct obj *o = data;

	return __nfence_fence_signal_one(fd, dev, o->fences[0], ++o->value);
}

static int op_signal_many(void *data)
{
	struct obj *o = data;
	uint64_t values[MANY_FENCES];
	struct drm_nfence_fence_signal sig = {
		.device = dev,
		.count = MANY_FENCES,
		.handles = (uintptr_t)o->fences,
		.values = (uintptr_t)values,
	};
	int i;

	o->value++;
	for (i = 0; i < MANY_FENCES; i++)
		values[i] = o->value;
	return __nfence_fence_signal(fd, &sig);
}

static void fences_create(struct obj *o)
{
	int i;

	for (i = 0; i < MANY_FENCES; i++)
		o->fences[i] = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
	o->value = 0;
}

static void fences_destroy(struct obj *o)
{
	int i;

	for (i = 0; i < MANY_FENCES; i++)
		nfence_fence_destroy(fd, o->fences[i]);
}

static int alloc_create(struct obj *o, uint32_t segment, uint32_t flags)
{
	struct drm_nfence_alloc_create c = {
		.device = dev,
		.size = 64 << 10,
		.segment_id = segment,
		.flags = flags,
	};
	int ret = __nfence_alloc_create(fd, &c);

	o->handle = c.handle;
	return ret;
}

static int op_alloc_system(void *data)
{
	return alloc_create(data, NFENCE_SEGMENT_SYSTEM, 0);
}

static int op_alloc_vram(void *data)
{
	return alloc_create(data, NFENCE_SEGMENT_VRAM,
			    DRM_NFENCE_ALLOC_CPU_VISIBLE);
}

static void undo_alloc(void *data)
{
	nfence_alloc_destroy(fd, dev, ((struct obj *)data)->handle);
}

static int op_alloc_lock_map(void *data)
{
	struct obj *o = data;
	struct drm_nfence_alloc_lock l = {
		.device = dev,
		.handle = o->extra,
	};
	int ret = __nfence_alloc_lock(fd, &l);

	if (ret)
		return ret;
	o->map = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      l.mmap_offset);
	if (o->map == MAP_FAILED)
		return -errno;
	*(volatile uint64_t *)o->map = 1;
	o->value = l.size;
	return 0;
}

static void undo_alloc_map(void *data)
{
	struct obj *o = data;

	munmap(o->map, o->value);
}

static int op_context_create(void *data)
{
	struct obj *o = data;
	struct drm_nfence_context_create c = { .device = dev };
	int ret = __nfence_context_create(fd, &c);

	o->handle = c.handle;
	return ret;
}

static void undo_context(void *data)
{
	nfence_context_destroy(fd, dev, ((struct obj *)data)->handle);
}

static int op_hwqueue_create(void *data)
{
	struct obj *o = data;
	struct drm_nfence_hwqueue_create c = {
		.device = dev,
		.context = o->extra,
	};
	int ret = __nfence_hwqueue_create(fd, &c);

	o->handle = c.handle;
	return ret;
}

static void undo_hwqueue(void *data)
{
	nfence_hwqueue_destroy(fd, dev, ((struct obj *)data)->handle);
}

static int op_submit(void *data)
{
	struct obj *o = data;
	struct nfence_cs cs;
	int ret;

	nfence_queue_begin(&o->q, &cs);
	nfence_cs_nop(&cs);
	ret = __nfence_queue_submit(&o->q, &cs);
	return ret;
}

static int op_submit_signal(void *data)
{
	struct obj *o = data;

	return __nfence_queue_submit_signal(&o->q, o->extra, ++o->value);
}

static int op_submit_wait(void *data)
{
	struct obj *o = data;

	return __nfence_queue_submit_wait(&o->q, o->extra, 0);
}

static void undo_queue_sync(void *data)
{
	nfence_queue_sync(&((struct obj *)data)->q);
}

/* QUERY of the adapter: the answer's buffer. */
static int op_query(void *data)
{
	struct drm_nfence_query_adapter answer;
	struct drm_nfence_query q = {
		.type = DRM_NFENCE_QUERY_ADAPTER,
		.size = sizeof(answer),
		.data = (uint64_t)(uintptr_t)&answer,
	};

	(void)data;
	if (drmIoctl(fd, DRM_IOCTL_NFENCE_QUERY, &q))
		return -errno;
	return 0;
}

/* DOORBELL_CREATE for a user-mode queue: the doorbell, its pages. */
static int op_doorbell_create(void *data)
{
	struct obj *o = data;
	struct drm_nfence_doorbell_create c = {
		.device = dev,
		.hwqueue = o->q.handle,
		.ring_alloc = o->ring.handle,
		.ring_control_alloc = o->control.handle,
	};
	int ret = __nfence_doorbell_create(fd, &c);

	o->handle = c.handle;
	return ret;
}

static void undo_doorbell(void *data)
{
	igt_assert_eq(__nfence_doorbell_destroy(fd, dev,
						((struct obj *)data)->handle),
		      0);
}

/* SYNCOBJ_BIND: a timeline point that appears when the fence reaches it. */
static int op_syncobj_bind(void *data)
{
	struct obj *o = data;
	struct drm_nfence_syncobj_bind b = {
		.device = dev,
		.fence = o->extra,
		.value = o->value + 1,
		.syncobj = o->handle,
		.point = o->value + 1,
	};

	if (drmIoctl(fd, DRM_IOCTL_NFENCE_SYNCOBJ_BIND, &b))
		return -errno;
	return 0;
}

/* The binding ends when the fence reaches its value. */
static void undo_syncobj_bind(void *data)
{
	struct obj *o = data;

	nfence_fence_signal(fd, dev, o->extra, ++o->value);
}

/* LOG_READ of a queue's signal log: the snapshot and the entries' room. */
static int op_log_read(void *data)
{
	struct obj *o = data;
	struct drm_nfence_log_entry e[4];
	struct drm_nfence_log_read r = {
		.device = o->q.device,
		.hwqueue = o->q.handle,
		.type = DRM_NFENCE_LOG_TYPE_SIGNALS,
		.entries_ptr = (uint64_t)(uintptr_t)e,
		.num_entries = ARRAY_SIZE(e),
	};

	return __nfence_log_read(o->q.fd, &r);
}

igt_main
{
	struct obj o;

	igt_fixture {
		char link[64];
		ssize_t n;

		fd = nfence_open_adapter(0);
		fd1 = nfence_open_adapter(1);
		dbg = nfence_debugfs_dir(fd);
		dbg1 = nfence_debugfs_dir(fd1);
		/* The node's path, for the open path. */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, node0, sizeof(node0) - 1);
		igt_assert_lt(0, n);
		node0[n] = '\0';
		dev = nfence_device_create(fd);
		dev1 = nfence_device_create(fd1);
		kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
		igt_assert(kmsg >= 0);
		faults_setup();
	}

	memset(&o, 0, sizeof(o));

	igt_describe("open() of a render node: the DRM file and nfence's "
		     "per-file state.");
	igt_subtest("open")
		walk_op("open", op_open, undo_close, &o, SITES_SOME);

	igt_describe("DEVICE_CREATE.");
	igt_subtest("device-create")
		walk_op("device-create", op_device_create,
			undo_device, &o, SITES_SOME);

	igt_describe("FENCE_CREATE of each kind: DEFAULT, INTRA_GPU, shared, "
		     "cross-adapter.");
	igt_subtest("fence-create-default")
		walk_op("fence-create-default", op_fence_default,
			undo_fence, &o, SITES_SOME);
	igt_subtest("fence-create-intra-gpu")
		walk_op("fence-create-intra-gpu",
			op_fence_intra_gpu, undo_fence, &o, SITES_SOME);
	igt_subtest("fence-create-shared")
		walk_op("fence-create-shared", op_fence_shared,
			undo_fence, &o, SITES_SOME);
	igt_subtest("fence-create-cross-adapter")
		walk_op("fence-create-cross-adapter",
			op_fence_cross_adapter, undo_fence, &o, SITES_SOME);

	igt_describe("FENCE_SHARE, FENCE_OPEN on the same adapter and on the "
		     "other one, and the CPU mapping of CurrentValue.");
	igt_subtest("fence-share") {
		o.extra = nfence_fence_create(fd, dev, 0,
					      NFENCE_FENCE_SHAREABLE, 0, NULL);
		walk_op("fence-share", op_fence_share, undo_share,
			&o, SITES_SOME);
		nfence_fence_destroy(fd, o.extra);
	}
	igt_subtest("fence-open") {
		uint32_t h = nfence_fence_create(fd, dev, 0,
						 NFENCE_FENCE_SHAREABLE, 0,
						 NULL);

		o.share_fd = nfence_fence_share(fd, h);
		o.fd = fd;
		o.device = dev;
		walk_op("fence-open", op_fence_open, undo_open,
			&o, SITES_SOME);
		close(o.share_fd);
		nfence_fence_destroy(fd, h);
	}
	igt_subtest("fence-open-cross-adapter") {
		uint32_t h = nfence_fence_create(fd, dev, 0,
						 NFENCE_FENCE_SHAREABLE |
						 DRM_NFENCE_FENCE_CROSS_ADAPTER,
						 0, NULL);

		o.share_fd = nfence_fence_share(fd, h);
		o.fd = fd1;
		o.device = dev1;
		walk_op("fence-open-cross-adapter", op_fence_open,
			undo_open, &o, SITES_SOME);
		close(o.share_fd);
		nfence_fence_destroy(fd, h);
	}
	igt_describe("FENCE_WINDOW, and FENCE_OPEN into a file with a CPU "
		     "window (the handle's page of the window).");
	igt_subtest("fence-window") {
		o.fd = open(node0, O_RDWR | O_CLOEXEC);
		igt_assert(o.fd >= 0);
		walk_op("fence-window", op_fence_window, undo_window, &o,
			SITES_SOME);
		close(o.fd);
	}
	igt_subtest("fence-open-windowed") {
		struct drm_nfence_fence_window w = { .pages = 4 };
		uint32_t h = nfence_fence_create(fd, dev, 0,
						 NFENCE_FENCE_SHAREABLE, 0,
						 NULL);

		o.fd = open(node0, O_RDWR | O_CLOEXEC);
		igt_assert(o.fd >= 0);
		igt_assert_eq(drmIoctl(o.fd, DRM_IOCTL_NFENCE_FENCE_WINDOW, &w),
			      0);
		/* Each open takes page 0, which its undo gives back. */
		o.window = w.mmap_offset;
		o.device = nfence_device_create(o.fd);
		o.share_fd = nfence_fence_share(fd, h);
		walk_op("fence-open-windowed", op_fence_open, undo_open, &o,
			SITES_SOME);
		o.window = 0;
		close(o.share_fd);
		nfence_device_destroy(o.fd, o.device);
		close(o.fd);
		nfence_fence_destroy(fd, h);
	}
	igt_subtest("fence-mmap") {
		uint32_t h = nfence_fence_create(fd, dev, 0, 0, 0, &o.m);

		walk_op("fence-mmap", op_fence_mmap, undo_mmap,
			&o, SITES_MAYBE);
		nfence_fence_destroy(fd, h);
	}

	igt_describe("FENCE_WAIT (an async wait with an eventfd, a wait for "
		     "9 fences that times out) and FENCE_SIGNAL of 9 fences.");
	igt_subtest("fence-wait-async") {
		o.extra = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
		o.efd = eventfd(0, EFD_CLOEXEC);
		igt_assert(o.efd >= 0);
		o.value = 0;
		walk_op("fence-wait-async", op_wait_async,
			undo_wait_async, &o, SITES_SOME);
		close(o.efd);
		nfence_fence_destroy(fd, o.extra);
	}
	igt_subtest("fence-wait-timeout") {
		fences_create(&o);
		walk_op("fence-wait-timeout", op_wait_timeout_many,
			undo_nothing, &o, SITES_SOME);
		fences_destroy(&o);
	}
	igt_subtest("fence-signal") {
		fences_create(&o);
		walk_op("fence-signal", op_signal_many, undo_nothing,
			&o, SITES_SOME);
		fences_destroy(&o);
	}

	igt_describe("A blocking wait for one fence and a signal of one "
		     "allocate nothing (DOC: CPU waits).");
	igt_subtest("fence-wait-timeout-one") {
		fences_create(&o);
		walk_op("fence-wait-timeout-one", op_wait_timeout_one,
			undo_nothing, &o, SITES_NONE);
		fences_destroy(&o);
	}
	igt_subtest("fence-signal-one") {
		fences_create(&o);
		walk_op("fence-signal-one", op_signal_one, undo_nothing,
			&o, SITES_NONE);
		fences_destroy(&o);
	}

	igt_describe("ALLOC_CREATE in system memory and VRAM, ALLOC_LOCK and "
		     "the CPU mapping.");
	igt_subtest("alloc-create-system")
		walk_op("alloc-create-system", op_alloc_system,
			undo_alloc, &o, SITES_SOME);
	igt_subtest("alloc-create-vram")
		walk_op("alloc-create-vram", op_alloc_vram,
			undo_alloc, &o, SITES_SOME);
	igt_subtest("alloc-lock-map") {
		o.extra = nfence_alloc_create(fd, dev, 64 << 10,
					      NFENCE_SEGMENT_SYSTEM, 0, NULL);
		walk_op("alloc-lock-map", op_alloc_lock_map,
			undo_alloc_map, &o, SITES_MAYBE);
		nfence_alloc_destroy(fd, dev, o.extra);
	}

	igt_describe("CONTEXT_CREATE and HWQUEUE_CREATE (with its progress "
		     "fence).");
	igt_subtest("context-create")
		walk_op("context-create", op_context_create,
			undo_context, &o, SITES_SOME);
	igt_subtest("hwqueue-create") {
		o.extra = nfence_context_create(fd, dev, 0);
		walk_op("hwqueue-create", op_hwqueue_create,
			undo_hwqueue, &o, SITES_SOME);
		nfence_context_destroy(fd, dev, o.extra);
	}

	igt_describe("SUBMIT of a command buffer, SUBMIT_SIGNAL and "
		     "SUBMIT_WAIT.");
	igt_subtest("submit") {
		nfence_queue_create(&o.q, fd, dev, 0, 0);
		walk_op("submit", op_submit, undo_queue_sync,
			&o, SITES_SOME);
		nfence_queue_destroy(&o.q);
	}
	igt_subtest("submit-signal") {
		nfence_queue_create(&o.q, fd, dev, 0, 0);
		o.extra = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
		o.value = 0;
		walk_op("submit-signal", op_submit_signal,
			undo_queue_sync, &o, SITES_SOME);
		nfence_queue_destroy(&o.q);
		nfence_fence_destroy(fd, o.extra);
	}
	igt_subtest("submit-wait") {
		nfence_queue_create(&o.q, fd, dev, 0, 0);
		o.extra = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
		walk_op("submit-wait", op_submit_wait,
			undo_queue_sync, &o, SITES_SOME);
		nfence_queue_destroy(&o.q);
		nfence_fence_destroy(fd, o.extra);
	}

	igt_describe("QUERY of the adapter's description.");
	igt_subtest("query")
		walk_op("query", op_query, undo_nothing, &o, SITES_SOME);

	igt_describe("DOORBELL_CREATE for a user-mode queue.");
	igt_subtest("doorbell-create") {
		nfence_queue_create(&o.q, fd, dev, 0,
				    DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION);
		nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_SYSTEM,
				 DRM_NFENCE_ALLOC_CPU_VISIBLE, &o.ring);
		nfence_bo_create(fd, dev, 4096, NFENCE_SEGMENT_SYSTEM,
				 DRM_NFENCE_ALLOC_CPU_VISIBLE, &o.control);
		walk_op("doorbell-create", op_doorbell_create, undo_doorbell,
			&o, SITES_SOME);
		nfence_bo_destroy(&o.ring);
		nfence_bo_destroy(&o.control);
		nfence_queue_destroy(&o.q);
	}

	igt_describe("SYNCOBJ_BIND of a native fence to a drm_syncobj "
		     "timeline point.");
	igt_subtest("syncobj-bind") {
		o.extra = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
		o.value = 0;
		igt_assert_eq(drmSyncobjCreate(fd, 0, &o.handle), 0);
		walk_op("syncobj-bind", op_syncobj_bind, undo_syncobj_bind,
			&o, SITES_SOME);
		igt_assert_eq(drmSyncobjDestroy(fd, o.handle), 0);
		nfence_fence_destroy(fd, o.extra);
	}

	igt_describe("LOG_READ of a hardware queue's native fence log "
		     "(its copies of the log and of the entries asked for).");
	igt_subtest("log-read") {
		nfence_queue_create(&o.q, fd, dev, 0, 0);
		o.extra = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
		igt_assert_eq(__nfence_queue_submit_signal(&o.q, o.extra, 1), 0);
		nfence_queue_sync(&o.q);
		walk_op("log-read", op_log_read, undo_nothing, &o, SITES_SOME);
		nfence_queue_destroy(&o.q);
		nfence_fence_destroy(fd, o.extra);
	}

	igt_fixture {
		faults_teardown();
		close(kmsg);
		nfence_device_destroy(fd, dev);
		nfence_device_destroy(fd1, dev1);
		close(dbg);
		close(dbg1);
		close(fd);
		close(fd1);
	}
}
