/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * A fake nfence driver for host tests; see mock_drm.h.
 *
 * GPU work is emulated synchronously: the "CMP" (mock_cmp_run()) runs
 * every runnable queue as far as it can, under the mock's lock, whenever a
 * submission, a CPU signal or a resume may have made progress possible.
 * WORK commands take no time but move the GPU clock: TIMESTAMP writes
 * (CLOCK_MONOTONIC + the WORK so far) / 10, at the adapter's 100 MHz.
 *
 * MonitoredValue follows the kernel's waitlist (nfence_waitlist.c): the
 * least value a queued CPU waiter waits for, minus 1, or UINT64_MAX with
 * no waiter; 0 for good on a cross-adapter fence. The waiters are this
 * process's blocking and asynchronous CPU waits and the legacy queue waits
 * (SUBMIT_WAIT) a queue has reached; a waiter leaves when its value is
 * reached or its wait ends. Nothing counts interrupts.
 *
 * Where the kernel would block a SUBMIT (a queue holding
 * DRM_NFENCE_MAX_QUEUED pending submissions) the synchronous fake cannot
 * wait for the GPU to make room: it aborts the process with a message, so
 * that no host test can depend on what it does there. The VM test
 * (nfence_libnfence_test) covers the blocking submission.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"

#define MOCK_MAX_NODES	16
#define MOCK_MAX_FDS	4096

/*
 * Native fences. CurrentValues live in pages of one memfd, 64 bytes apart,
 * so that the values are shared with forked children like the kernel's;
 * the fake mmap offset of page i is MOCK_PAGE_OFFSET + i * MOCK_PAGE_SIZE.
 * A shared fence's NT handle is a duplicate of a memfd of its own (its
 * "token"), which identifies it. Fences and pages are never freed (each
 * test is its own process).
 */
#define MOCK_MAX_FENCES		8192
#define MOCK_MAX_PAGES		4096
#define MOCK_MAX_LOCAL		256	/* fence handles per file */
#define MOCK_MAX_ASYNC		4096	/* pending async waits, per file */
#define MOCK_PAGE_SIZE		4096u
#define MOCK_VALUE_STRIDE	64u
#define MOCK_PAGE_OFFSET	(1ull << 32)
#define MOCK_FENCE_FLAGS	0x3fu
#define MOCK_BLOCK		1	/* mock_dispatch(): wait unlocked */

/*
 * GPU objects. GPU VAs: a fence's CurrentValue is at MOCK_FENCE_VA +
 * id * 16, its MonitoredValue 8 bytes further (read-only); allocations
 * are placed from MOCK_ALLOC_VA up, per file, never reusing a VA. An
 * allocation's memory is a memfd of its own; its fake mmap offset is
 * MOCK_ALLOC_OFFSET + a global sequence number * 256 MiB.
 */
#define MOCK_MAX_ALLOCS		256	/* per file */
#define MOCK_MAX_CONTEXTS	64	/* per file */
#define MOCK_MAX_QUEUES		64	/* per file */
#define MOCK_FENCE_VA		0x100000000ull
#define MOCK_ALLOC_VA		0x200000000ull
#define MOCK_ALLOC_OFFSET	(1ull << 40)
#define MOCK_ALLOC_STRIDE	(256ull << 20)
#define MOCK_ALLOC_FLAGS	(DRM_NFENCE_ALLOC_CPU_VISIBLE | \
				 DRM_NFENCE_ALLOC_ALLOW_DEMOTE)
#define MOCK_HWQUEUE_FLAGS	0x3fu
#define MOCK_ALWAYS_SIGNALED	0xffffffffull

/*
 * CPU windows (DRM_IOCTL_NFENCE_FENCE_WINDOW): a file's window has the
 * fake mmap offset MOCK_WINDOW_OFFSET + fd * 4 GiB. A handle of a shared
 * fence made while the file has one takes its lowest free page; a mapping
 * of the window is a reserved range into which each given page's memfd
 * page is mapped (MAP_FIXED), and a PROT_NONE page when it is given back.
 */
#define MOCK_WINDOW_OFFSET	(1ull << 44)

struct mock_node {
	dev_t dev;
	ino_t ino;
	struct mock_adapter adapter;
};

/* A page of CurrentValues. */
struct mock_page {
	unsigned int index;		/* page of mock_memfd */
	uint64_t offset;		/* fake mmap offset */
	char *map;			/* in the mock's own mapping */
	int owner_fd;			/* file of non-shared fences; -1: shared */
	unsigned int used;		/* values handed out */
};

/* A global fence. */
struct mock_fence {
	uint32_t id;
	const struct mock_node *node;
	uint32_t type, flags;
	struct mock_page *page;		/* NULL for INTRA_GPU */
	uint32_t value_offset;
	uint64_t intra_value;		/* CurrentValue of INTRA_GPU fences */
	uint64_t mv;			/* MonitoredValue, as the GPU reads it */
	bool lowered;			/* on mock_lowered[] */
	bool always;			/* AlwaysSignaled (a faulted queue's) */
	int token;			/* memfd naming a shared fence, or -1 */
	dev_t token_dev;
	ino_t token_ino;
};

/* A local fence handle. */
struct mock_local {
	uint32_t handle;
	uint32_t device;
	uint32_t flags;			/* NO_SIGNAL, NO_WAIT */
	struct mock_fence *fence;
	uint32_t queue;			/* progress fence of this queue, or 0 */
	int wslot;			/* its page of the file's window, or -1 */
};

/* Where an allocation's memory came from (usage accounting). */
enum mock_pool {
	MOCK_POOL_SYSTEM,
	MOCK_POOL_VRAM_VISIBLE,
	MOCK_POOL_VRAM_INVISIBLE,
	MOCK_POOLS,
};

struct mock_alloc {
	uint32_t handle, device;
	uint32_t flags, placed;
	enum mock_pool pool;
	unsigned int node;		/* index in mock_nodes */
	bool cpu_visible;
	uint64_t size, gpu_va, mmap_offset;
	int memfd;
	char *map;			/* the mock's own mapping */
};

struct mock_context {
	uint32_t handle, device, engine;
	uint32_t state;			/* DRM_NFENCE_CONTEXT_STATE_* */
	uint64_t fault_va;
	uint32_t fault_reason;
	int32_t priority;		/* scheduling priority (not simulated) */
};

/* A pending submission of a queue. */
enum mock_entry_kind {
	MOCK_ENTRY_COMMANDS,
	MOCK_ENTRY_WAIT,
	MOCK_ENTRY_SIGNAL,
};

struct mock_entry {
	struct mock_entry *next;
	enum mock_entry_kind kind;
	uint64_t va;			/* COMMANDS: the buffer */
	uint32_t size, pos;		/* its size, the next command */
	uint64_t progress;		/* COMMANDS: progress fence value */
	unsigned int count;		/* WAIT, SIGNAL: the fences */
	struct mock_fence *fences[DRM_NFENCE_MAX_WAIT_FENCES];
	uint64_t values[DRM_NFENCE_MAX_WAIT_FENCES];
	/* WAIT: the queue reached it, its CPU waiters are queued ... */
	bool started;
	/* ... and these have left (their value was reached) */
	bool released[DRM_NFENCE_MAX_WAIT_FENCES];
};

struct mock_queue {
	uint32_t handle, device, context;
	uint32_t flags;
	uint32_t progress_handle;	/* local handle of the progress fence */
	struct mock_fence *progress;
	uint64_t last_value;		/* last progress_fence_value submitted */
	bool logs;			/* has log buffers: takes log payloads */
	struct mock_entry *head, *tail;
	unsigned int pending;
};

/* One open file of a fake node: its devices and fences (a drm_file). */
struct mock_file {
	uint32_t next_handle;
	unsigned int ndevices;
	uint32_t devices[DRM_NFENCE_MAX_DEVICES_PER_FILE];
	uint32_t next_fence_handle;
	unsigned int nlocals;
	struct mock_local locals[MOCK_MAX_LOCAL];
	struct mock_page *pack;		/* page for the next non-shared fence */
	uint32_t next_alloc_handle, next_context_handle, next_queue_handle;
	uint64_t next_va;
	unsigned int nallocs, ncontexts, nqueues;
	struct mock_alloc allocs[MOCK_MAX_ALLOCS];
	struct mock_context contexts[MOCK_MAX_CONTEXTS];
	struct mock_queue queues[MOCK_MAX_QUEUES];
	uint32_t win_pages;		/* its CPU window, 0 for none */
	uint64_t win_off;
	char *win_addr;			/* the process's mapping of it */
	size_t win_len;
	bool win_used[MOCK_MAX_LOCAL];	/* given pages: at most a handle each */
};

/*
 * What a wait waits for, gathered under the lock. While it is queued (a
 * blocking wait on mock_blocking, an async one in mock_async[]) its
 * waiters that have not left hold down their fences' MonitoredValues.
 */
struct mock_wait {
	unsigned int count;
	bool any;
	struct mock_fence *fences[DRM_NFENCE_MAX_WAIT_FENCES];
	uint64_t want[DRM_NFENCE_MAX_WAIT_FENCES];
	bool released[DRM_NFENCE_MAX_WAIT_FENCES];
	int64_t deadline;
	int fd, eventfd;		/* async waits */
	struct mock_wait *next;		/* on mock_blocking */
};

static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_node mock_nodes[MOCK_MAX_NODES];
static unsigned int mock_nnodes;
static struct mock_file *mock_files[MOCK_MAX_FDS];
static int mock_fail_err;
static bool mock_no_window;
static enum mock_map_fail mock_window_fail;
static int mock_window_fail_err;
static void *mock_taken;
static struct mock_fence *mock_fences[MOCK_MAX_FENCES];
static unsigned int mock_nfences;
static struct mock_page *mock_pages[MOCK_MAX_PAGES];
static unsigned int mock_npages;
static int mock_memfd = -1;		/* MOCK_MAX_PAGES pages */
static char *mock_memfd_map;
static struct mock_wait mock_async[MOCK_MAX_ASYNC];
static bool mock_async_used[MOCK_MAX_ASYNC];
static struct mock_wait *mock_blocking;	/* blocking waits in progress */
static struct mock_fence **mock_lowered;	/* fences whose mv is lowered */
static unsigned int mock_nlowered, mock_lowered_cap;
static unsigned int mock_interrupts;
static uint64_t mock_pool_used[MOCK_MAX_NODES][MOCK_POOLS];
static uint64_t mock_alloc_seq;
static unsigned int mock_calls[0x20];	/* per nfence ioctl number */
/* The handle of the last fence handle made, in any file. */
static uint32_t mock_fence_handle_last;
static uint32_t mock_hwqueue_flags_last;
static struct mock_bridge_call mock_bridge_last;

static void mock_cmp_run(void);
static void mock_settle(void);
static void mock_file_free_gpu(struct mock_file *f);
/* The error of the next LOGGING_LEVEL once it has set the level, or 0. */
static int mock_level_err;

/*
 * DRM_IOCTL_NFENCE_LOGGING_LEVEL: the kernel's checks, in its order; the
 * level is kept per adapter index (the fake adapters have no queue logs
 * to recreate). As the kernel, it writes @previous back with the error
 * of a queue's buffers (mock_fail_logging_buffers()).
 */
static int mock_logging_level(const struct mock_node *node,
			      struct drm_nfence_logging_level *args)
{
	static uint32_t levels[MOCK_MAX_NODES];
	uint32_t *level = &levels[node->adapter.index % MOCK_MAX_NODES];
	int err = mock_level_err;

	if (args->level > DRM_NFENCE_LOGGING_LEVEL_ALL ||
	    (args->flags & ~DRM_NFENCE_LOGGING_RECREATE) || args->pad)
		return -EINVAL;
	if (!node->adapter.native_fences)
		return -EOPNOTSUPP;
	args->previous = *level;
	*level = args->level;
	mock_level_err = 0;
	return -err;
}

void mock_fail_logging_buffers(int err)
{
	pthread_mutex_lock(&mock_lock);
	mock_level_err = err;
	pthread_mutex_unlock(&mock_lock);
}

static void mock_remove_device_gpu(struct mock_file *f, uint32_t device);
static void mock_local_remove(struct mock_file *f, struct mock_local *l);

static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_close)(int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static ssize_t (*real_readlink)(const char *, char *, size_t);

static void mock_resolve(void)
{
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))
			dlsym(RTLD_NEXT, "ioctl");
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (!real_mmap)
		real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))
			dlsym(RTLD_NEXT, "mmap");
	if (!real_munmap)
		real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	if (!real_readlink)
		real_readlink = (ssize_t (*)(const char *, char *, size_t))
			dlsym(RTLD_NEXT, "readlink");
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
	memset(mock_pool_used, 0, sizeof(mock_pool_used));
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

unsigned int mock_live_fences(void)
{
	unsigned int n = 0;
	int fd;

	pthread_mutex_lock(&mock_lock);
	for (fd = 0; fd < MOCK_MAX_FDS; fd++)
		if (mock_files[fd])
			n += mock_files[fd]->nlocals;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

unsigned int mock_wait_interrupts(void)
{
	unsigned int n;

	pthread_mutex_lock(&mock_lock);
	n = mock_interrupts;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

/* Sum of one counter over all open files. Locked. */
static unsigned int mock_count(size_t offset)
{
	unsigned int n = 0;
	int fd;

	for (fd = 0; fd < MOCK_MAX_FDS; fd++)
		if (mock_files[fd])
			n += *(const unsigned int *)((const char *)mock_files[fd] +
						     offset);
	return n;
}

unsigned int mock_live_allocations(void)
{
	unsigned int n;

	pthread_mutex_lock(&mock_lock);
	n = mock_count(offsetof(struct mock_file, nallocs));
	pthread_mutex_unlock(&mock_lock);
	return n;
}

unsigned int mock_live_contexts(void)
{
	unsigned int n;

	pthread_mutex_lock(&mock_lock);
	n = mock_count(offsetof(struct mock_file, ncontexts));
	pthread_mutex_unlock(&mock_lock);
	return n;
}

unsigned int mock_live_queues(void)
{
	unsigned int n;

	pthread_mutex_lock(&mock_lock);
	n = mock_count(offsetof(struct mock_file, nqueues));
	pthread_mutex_unlock(&mock_lock);
	return n;
}

unsigned int mock_pending(void)
{
	unsigned int n = 0, i;
	int fd;

	pthread_mutex_lock(&mock_lock);
	for (fd = 0; fd < MOCK_MAX_FDS; fd++)
		for (i = 0; mock_files[fd] && i < mock_files[fd]->nqueues; i++)
			n += mock_files[fd]->queues[i].pending;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

uint32_t mock_last_fence_handle(void)
{
	uint32_t h;

	pthread_mutex_lock(&mock_lock);
	h = mock_fence_handle_last;
	pthread_mutex_unlock(&mock_lock);
	return h;
}

uint32_t mock_last_hwqueue_flags(void)
{
	uint32_t flags;

	pthread_mutex_lock(&mock_lock);
	flags = mock_hwqueue_flags_last;
	pthread_mutex_unlock(&mock_lock);
	return flags;
}

struct mock_bridge_call mock_last_bridge_call(void)
{
	struct mock_bridge_call call;

	pthread_mutex_lock(&mock_lock);
	call = mock_bridge_last;
	pthread_mutex_unlock(&mock_lock);
	return call;
}

unsigned int mock_ioctl_calls(unsigned int nr)
{
	unsigned int n;

	pthread_mutex_lock(&mock_lock);
	n = nr < 0x20 ? mock_calls[nr] : 0;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

void mock_set_window(bool supported)
{
	pthread_mutex_lock(&mock_lock);
	mock_no_window = !supported;
	pthread_mutex_unlock(&mock_lock);
}

void mock_fail_window_map(enum mock_map_fail how, int err)
{
	pthread_mutex_lock(&mock_lock);
	mock_window_fail = how;
	mock_window_fail_err = err;
	pthread_mutex_unlock(&mock_lock);
}

void *mock_window_taken(void)
{
	void *p;

	pthread_mutex_lock(&mock_lock);
	p = mock_taken;
	pthread_mutex_unlock(&mock_lock);
	return p;
}

/*
 * A window mmap() failing as mock_fail_window_map() asked: the range of a
 * MAP_FIXED one unmapped first unless KEEP, and a page mapped at @addr
 * for TAKEN, as another thread would map it in the range left free.
 */
static void *mock_window_map_fail(void *addr, size_t len, int flags)
{
	enum mock_map_fail how = mock_window_fail;
	int err = mock_window_fail_err;
	void *p;

	mock_window_fail = MOCK_MAP_OK;
	mock_taken = NULL;
	if (how != MOCK_MAP_FAIL_KEEP && (flags & MAP_FIXED))
		real_munmap(addr, len);
	if (how == MOCK_MAP_FAIL_TAKEN && addr) {
		p = real_mmap(addr, MOCK_PAGE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS |
			      MAP_FIXED_NOREPLACE, -1, 0);
		if (p == addr) {
			*(uint64_t *)p = MOCK_TAKEN_MARK;
			mock_taken = p;
		} else if (p != MAP_FAILED) {
			real_munmap(p, MOCK_PAGE_SIZE);
		}
	}
	errno = err;
	return MAP_FAILED;
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

/*
 * Bytes of segment @id (1 system, 2 VRAM) @f's allocations hold, as the
 * kernel charges them to the file (fence values, which the kernel charges
 * to VRAM too, are not placed in the fake segments). Locked.
 */
static uint64_t mock_file_usage(const struct mock_file *f, uint32_t id)
{
	uint64_t used = 0;
	unsigned int i;

	for (i = 0; f && i < f->nallocs; i++)
		if (f->allocs[i].placed == id)
			used += f->allocs[i].size;
	return used;
}

/* A segment's budget: the client quota bounded by the size. */
static uint64_t mock_budget(uint32_t quota_mb, uint32_t size_mb)
{
	return (uint64_t)(quota_mb && quota_mb < size_mb ? quota_mb : size_mb)
	       << 20;
}

/*
 * Answer of a query into @buf (at most 512 bytes) for file @f (NULL: one
 * that holds nothing); returns its size.
 */
static uint32_t mock_answer(const struct mock_adapter *a,
			    const struct mock_file *f, uint32_t type,
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
			q->engines[i].flags = a->user_mode_submission &&
				!(a->no_ums_engines & (1u << i)) ?
				DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION : 0;
		}
		return sizeof(*q) + a->num_engines * sizeof(q->engines[0]);
	}
	case DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS: {
		struct drm_nfence_query_fence_caps *q = buf;

		if (a->native_fences) {
			/* As nfence_caps_fence(): no log buffers yet. */
			q->flags = DRM_NFENCE_FENCE_CAP_INTRA_GPU |
				   DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
				   DRM_NFENCE_FENCE_CAP_LOG_BUFFERS |
				   (a->optimized_default_fence ?
				    DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT : 0) |
				   (a->peer_signals ?
				    DRM_NFENCE_FENCE_CAP_PEER_SIGNALS : 0);
			q->value_stride = 64;
			q->value_bits = a->no_64bit_atomics ? 32 : 64;
			q->max_log_entries = DRM_NFENCE_LOG_ENTRIES;
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
	case DRM_NFENCE_QUERY_SEGMENT_USAGE: {
		struct drm_nfence_query_segment_usage *q = buf;

		q->num_segments = 2;
		q->segments[0].id = 1;
		q->segments[0].budget = mock_budget(a->client_sysmem_mb,
						    a->sysmem_mb);
		q->segments[0].usage = mock_file_usage(f, 1);
		q->segments[1].id = 2;
		q->segments[1].budget = mock_budget(a->client_vram_mb,
						    a->vram_mb);
		q->segments[1].usage = mock_file_usage(f, 2);
		return sizeof(*q) + 2 * sizeof(q->segments[0]);
	}
	}
	return 0;
}

static int mock_query(int fd, const struct mock_node *node,
		      struct drm_nfence_query *q)
{
	char buf[512];
	uint32_t need;

	if (q->flags || q->pad || q->reserved[0] || q->reserved[1] ||
	    q->type >= DRM_NFENCE_QUERY_COUNT)
		return -EINVAL;
	need = mock_answer(&node->adapter,
			   fd < MOCK_MAX_FDS ? mock_files[fd] : NULL,
			   q->type, buf);
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
		if (mock_files[fd]) {
			mock_files[fd]->next_handle = 1;
			mock_files[fd]->next_fence_handle = 1;
			mock_files[fd]->next_alloc_handle = 1;
			mock_files[fd]->next_context_handle = 1;
			mock_files[fd]->next_queue_handle = 1;
			mock_files[fd]->next_va = MOCK_ALLOC_VA;
		}
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
	/* Its allocations, contexts and queues go with it, and its fences. */
	mock_remove_device_gpu(f, args->handle);
	for (i = 0; i < (int)f->nlocals;) {
		if (f->locals[i].device == args->handle)
			mock_local_remove(f, &f->locals[i]);
		else
			i++;
	}
	return 0;
}

static uint64_t mock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t *mock_value(const struct mock_fence *fence)
{
	return (uint64_t *)(fence->page->map + fence->value_offset);
}

static struct mock_page *mock_page_new(int owner_fd)
{
	const size_t size = (size_t)MOCK_MAX_PAGES * MOCK_PAGE_SIZE;
	struct mock_page *page;
	void *map;

	if (mock_memfd < 0) {
		mock_memfd = memfd_create("nfence-mock-fences", MFD_CLOEXEC);
		if (mock_memfd < 0)
			return NULL;
		map = MAP_FAILED;
		if (!ftruncate(mock_memfd, (off_t)size))
			map = real_mmap(NULL, size, PROT_READ | PROT_WRITE,
					MAP_SHARED, mock_memfd, 0);
		if (map == MAP_FAILED) {
			real_close(mock_memfd);
			mock_memfd = -1;
			return NULL;
		}
		mock_memfd_map = map;
	}
	if (mock_npages == MOCK_MAX_PAGES)
		return NULL;
	page = calloc(1, sizeof(*page));
	if (!page)
		return NULL;
	page->index = mock_npages;
	page->offset = MOCK_PAGE_OFFSET +
		       (uint64_t)page->index * MOCK_PAGE_SIZE;
	page->map = mock_memfd_map + (size_t)page->index * MOCK_PAGE_SIZE;
	page->owner_fd = owner_fd;
	mock_pages[mock_npages++] = page;
	return page;
}

static struct mock_local *mock_find_local(struct mock_file *f, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->nlocals; i++)
		if (f->locals[i].handle == handle)
			return &f->locals[i];
	return NULL;
}

/* A new local handle of @fence on @f; NULL past the limit. */
static struct mock_local *mock_local_new(struct mock_file *f, uint32_t device,
					 uint32_t flags,
					 struct mock_fence *fence)
{
	struct mock_local *l;
	uint32_t h;

	if (f->nlocals == MOCK_MAX_LOCAL)
		return NULL;
	do {
		h = f->next_fence_handle++;
	} while (!h || mock_find_local(f, h));
	l = &f->locals[f->nlocals++];
	l->handle = h;
	mock_fence_handle_last = h;
	l->device = device;
	l->flags = flags & (DRM_NFENCE_FENCE_NO_SIGNAL | DRM_NFENCE_FENCE_NO_WAIT);
	l->fence = fence;
	l->queue = 0;
	l->wslot = -1;
	return l;
}

/* Show @page at page @slot of @f's window mapping, or nothing (NULL). */
static void mock_window_show(struct mock_file *f, int slot,
			     const struct mock_page *page)
{
	char *at;

	if (!f->win_addr || (size_t)slot * MOCK_PAGE_SIZE >= f->win_len)
		return;
	at = f->win_addr + (size_t)slot * MOCK_PAGE_SIZE;
	if (page)
		real_mmap(at, MOCK_PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED,
			  mock_memfd, (off_t)page->index * MOCK_PAGE_SIZE);
	else
		real_mmap(at, MOCK_PAGE_SIZE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

/*
 * A new handle @l of a shared fence on a file with a window takes the
 * lowest free page of it, whose offset goes to @m; a full window leaves
 * the page's own offset.
 */
static void mock_window_give(struct mock_file *f, struct mock_local *l,
			     struct drm_nfence_fence_mapping *m)
{
	const struct mock_page *page = l->fence->page;
	unsigned int slot;

	if (!f->win_pages || !page || page->owner_fd >= 0)
		return;
	for (slot = 0; slot < f->win_pages && slot < MOCK_MAX_LOCAL; slot++)
		if (!f->win_used[slot])
			break;
	if (slot == f->win_pages || slot == MOCK_MAX_LOCAL)
		return;
	f->win_used[slot] = true;
	l->wslot = (int)slot;
	m->cpu_mmap_offset = f->win_off + (uint64_t)slot * MOCK_PAGE_SIZE;
	mock_window_show(f, (int)slot, page);
}

/* Remove handle @l from @f; its page of the window shows nothing. */
static void mock_local_remove(struct mock_file *f, struct mock_local *l)
{
	if (l->wslot >= 0) {
		f->win_used[l->wslot] = false;
		mock_window_show(f, l->wslot, NULL);
	}
	*l = f->locals[--f->nlocals];
}

static void mock_fill_mapping(const struct mock_fence *fence,
			      struct drm_nfence_fence_mapping *m)
{
	memset(m, 0, sizeof(*m));
	if (fence->page) {
		m->cpu_mmap_offset = fence->page->offset;
		m->cpu_value_offset = fence->value_offset;
	}
	m->current_value_gpu_va = MOCK_FENCE_VA + fence->id * 16ull;
	/* A monitored fence has no MonitoredValue to show. */
	if (!(fence->flags & DRM_NFENCE_FENCE_MONITORED))
		m->monitored_value_gpu_va = m->current_value_gpu_va + 8;
}

/* EngineAffinity: physical adapters, of which an nfence adapter has one. */
static bool mock_affinity_ok(uint32_t affinity)
{
	return !(affinity & ~DRM_NFENCE_FENCE_AFFINITY_ALL);
}

/*
 * MonitoredValue without a waiter: UINT64_MAX, but 0 for good on a
 * cross-adapter fence, so that every signal interrupts and the kernel
 * passes it on to the fence's other adapters.
 */
static uint64_t mock_mv_default(const struct mock_fence *fence)
{
	return fence->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER ? 0 : UINT64_MAX;
}

/* A new global fence of file @f (fd @fd); NULL without memory. */
static struct mock_fence *mock_fence_new(struct mock_file *f, int fd,
					 const struct mock_node *node,
					 uint32_t type, uint32_t flags,
					 uint64_t initial)
{
	struct mock_page *page = NULL;
	struct mock_fence *fence;

	if (type == DRM_NFENCE_FENCE_TYPE_DEFAULT) {
		if (flags & DRM_NFENCE_FENCE_SHARED) {
			page = mock_page_new(-1);
		} else {
			if (!f->pack || f->pack->used ==
					MOCK_PAGE_SIZE / MOCK_VALUE_STRIDE)
				f->pack = mock_page_new(fd);
			page = f->pack;
		}
		if (!page)
			return NULL;
	}
	fence = calloc(1, sizeof(*fence));
	if (!fence)
		return NULL;
	fence->id = mock_nfences + 1;
	fence->node = node;
	fence->type = type;
	fence->flags = flags;
	fence->page = page;
	fence->token = -1;
	fence->mv = mock_mv_default(fence);
	if (page) {
		fence->value_offset = page->used++ * MOCK_VALUE_STRIDE;
		__atomic_store_n(mock_value(fence), initial, __ATOMIC_RELEASE);
	} else {
		fence->intra_value = initial;
	}
	mock_fences[mock_nfences++] = fence;
	return fence;
}

/*
 * This adapter's instance of the cross-adapter fence @peer, as FENCE_OPEN
 * makes one on another adapter: the same CurrentValue (page and offset),
 * an id and a MonitoredValue of its own. It is a native fence on an
 * adapter with native fences and a monitored fence (no MonitoredValue to
 * show) on one without, whichever @peer is. NULL past the limit or
 * without memory.
 */
static struct mock_fence *mock_fence_instance(const struct mock_node *node,
					      const struct mock_fence *peer)
{
	struct mock_fence *fence;

	if (mock_nfences == MOCK_MAX_FENCES)
		return NULL;
	fence = calloc(1, sizeof(*fence));
	if (!fence)
		return NULL;
	fence->id = mock_nfences + 1;
	fence->node = node;
	fence->type = peer->type;
	fence->flags = peer->flags & ~DRM_NFENCE_FENCE_MONITORED;
	if (!node->adapter.native_fences)
		fence->flags |= DRM_NFENCE_FENCE_MONITORED;
	fence->page = peer->page;
	fence->value_offset = peer->value_offset;
	fence->token = -1;
	fence->mv = mock_mv_default(fence);
	mock_fences[mock_nfences++] = fence;
	return fence;
}

static int mock_fence_create(int fd, const struct mock_node *node,
			     struct drm_nfence_fence_create *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_fence *fence;
	struct mock_local *l;
	bool shared = args->flags & DRM_NFENCE_FENCE_SHARED;

	if (!f)
		return -ENOMEM;
	if (args->pad || (args->flags & ~MOCK_FENCE_FLAGS) || args->type > 1)
		return -EINVAL;
	if ((args->flags & DRM_NFENCE_FENCE_NO_SIGNAL) &&
	    (args->flags & DRM_NFENCE_FENCE_NO_WAIT))
		return -EINVAL;
	if ((args->flags & DRM_NFENCE_FENCE_NT_SECURITY_SHARING) && !shared)
		return -EINVAL;
	if (!mock_affinity_ok(args->engine_affinity))
		return -EINVAL;
	if ((args->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER) &&
	    (!shared || args->type != DRM_NFENCE_FENCE_TYPE_DEFAULT))
		return -EINVAL;
	/* Monitored: DEFAULT storage; CrossAdapter allowed, as above. */
	if ((args->flags & DRM_NFENCE_FENCE_MONITORED) &&
	    args->type != DRM_NFENCE_FENCE_TYPE_DEFAULT)
		return -EINVAL;
	if (!node->adapter.native_fences &&
	    !(args->flags & DRM_NFENCE_FENCE_MONITORED))
		return -EOPNOTSUPP;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	if (f->nlocals == MOCK_MAX_LOCAL || mock_nfences == MOCK_MAX_FENCES)
		return -ENOSPC;

	fence = mock_fence_new(f, fd, node, args->type, args->flags,
			       args->initial_value);
	if (!fence)
		return -ENOMEM;
	l = mock_local_new(f, args->device, args->flags, fence);
	args->handle = l->handle;
	mock_fill_mapping(fence, &args->mapping);
	mock_window_give(f, l, &args->mapping);
	return 0;
}

static int mock_fence_destroy(int fd, struct drm_nfence_fence_destroy *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_local *l;

	if (!f)
		return -ENOMEM;
	if (args->pad)
		return -EINVAL;
	l = mock_find_local(f, args->handle);
	if (!l)
		return -ENOENT;
	if (l->queue)
		return -EBUSY;	/* a progress fence goes with its queue */
	mock_local_remove(f, l);
	return 0;
}

/* FENCE_WINDOW, as the kernel checks it; refused as unknown when off. */
static int mock_fence_window(int fd, struct drm_nfence_fence_window *args)
{
	struct mock_file *f = mock_file_of(fd);

	if (!f)
		return -ENOMEM;
	if (mock_no_window)
		return -EINVAL;
	if (args->flags || !args->pages ||
	    args->pages > DRM_NFENCE_FENCE_WINDOW_MAX_PAGES)
		return -EINVAL;
	if (f->win_pages)
		return -EEXIST;
	f->win_pages = args->pages;
	f->win_off = MOCK_WINDOW_OFFSET + ((uint64_t)fd << 32);
	args->mmap_offset = f->win_off;
	return 0;
}

static int mock_fence_share(int fd, struct drm_nfence_fence_share *args)
{
	struct mock_file *f = mock_file_of(fd);
	const uint32_t need = DRM_NFENCE_FENCE_SHARED |
			      DRM_NFENCE_FENCE_NT_SECURITY_SHARING;
	struct mock_local *l;
	int nfd;

	if (!f)
		return -ENOMEM;
	if (args->flags || args->pad)
		return -EINVAL;
	l = mock_find_local(f, args->handle);
	if (!l)
		return -ENOENT;
	if ((l->fence->flags & need) != need || !l->fence->page)
		return -EINVAL;
	if (l->fence->token < 0) {
		struct stat st;
		int token = memfd_create("nfence-mock-fence", MFD_CLOEXEC);

		if (token < 0)
			return -errno;
		if (fstat(token, &st)) {
			real_close(token);
			return -EIO;
		}
		l->fence->token = token;
		l->fence->token_dev = st.st_dev;
		l->fence->token_ino = st.st_ino;
	}
	nfd = fcntl(l->fence->token, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	args->fd = nfd;
	return 0;
}

static int mock_fence_open(int fd, const struct mock_node *node,
			   struct drm_nfence_fence_open *args)
{
	const uint32_t allowed = DRM_NFENCE_FENCE_NO_SIGNAL |
				 DRM_NFENCE_FENCE_NO_WAIT;
	struct mock_file *f = mock_file_of(fd);
	struct mock_fence *fence = NULL;
	struct mock_local *l;
	struct stat st;
	unsigned int i;

	if (!f)
		return -ENOMEM;
	if (args->pad || (args->flags & ~allowed) || args->flags == allowed)
		return -EINVAL;
	if (!mock_affinity_ok(args->engine_affinity))
		return -EINVAL;
	if (args->fd < 0 || fstat(args->fd, &st))
		return -EBADF;
	for (i = 0; i < mock_nfences; i++)
		if (mock_fences[i]->token >= 0 &&
		    mock_fences[i]->token_dev == st.st_dev &&
		    mock_fences[i]->token_ino == st.st_ino)
			fence = mock_fences[i];
	if (!fence)
		return -EINVAL;
	/*
	 * As the kernel: another adapter's fence must be cross-adapter; it
	 * opens on any adapter, native fences or not (mock_fence_instance()).
	 */
	if (fence->node != node &&
	    !(fence->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER))
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	if (fence->node != node) {
		fence = mock_fence_instance(node, fence);
		if (!fence)
			return -ENOMEM;
	}
	l = mock_local_new(f, args->device, args->flags, fence);
	if (!l)
		return -ENOSPC;
	args->handle = l->handle;
	mock_fill_mapping(fence, &args->mapping);
	mock_window_give(f, l, &args->mapping);
	return 0;
}

/*
 * The fences of a wait or signal on @device, checked in the kernel's
 * order: ENOENT for an unknown device, EFAULT for unreadable arrays,
 * ENOENT for a handle that is not a fence of that device (the kernel names
 * a fence by file, handle and device: another device's handle is unknown
 * here, even on the same file), EACCES for a handle with @deny, EINVAL
 * for an INTRA_GPU fence. Pointers are user memory of this process, read
 * directly.
 */
static int mock_fences_of(struct mock_file *f, uint32_t device,
			  uint32_t count, uint64_t handles, uint64_t values,
			  uint32_t deny, struct mock_fence **out)
{
	const uint32_t *h = (const uint32_t *)(uintptr_t)handles;
	struct mock_local *l;
	uint32_t i;

	if (mock_find_device(f, device) < 0)
		return -ENOENT;
	if (!handles || !values)
		return -EFAULT;
	for (i = 0; i < count; i++) {
		l = mock_find_local(f, h[i]);
		if (!l || l->device != device)
			return -ENOENT;
		if (l->flags & deny)
			return -EACCES;
		if (!l->fence->page)
			return -EINVAL;
		out[i] = l->fence;
	}
	return 0;
}

/* Whether @fence has reached @value, as nfence_fence_reached() says. */
static bool mock_reached(const struct mock_fence *fence, uint64_t value)
{
	return __atomic_load_n(&fence->always, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(mock_value(fence), __ATOMIC_ACQUIRE) >= value;
}

/* The first satisfied index (ALL: 0 when all are), or -1. */
static int mock_satisfied(const struct mock_wait *w)
{
	unsigned int i;

	for (i = 0; i < w->count; i++) {
		bool ok = mock_reached(w->fences[i], w->want[i]);

		if (ok && w->any)
			return (int)i;
		if (!ok && !w->any)
			return -1;
	}
	return w->any ? -1 : 0;
}

static void mock_eventfd_signal(int eventfd)
{
	uint64_t one = 1;

	if (write(eventfd, &one, sizeof(one)) != sizeof(one))
		return;	/* the test closed it: nobody to tell */
}

/* Keep @fence's MonitoredValue below @value, for a queued waiter. Locked. */
static void mock_lower(struct mock_fence *fence, uint64_t value)
{
	struct mock_fence **p;
	unsigned int cap;

	/* A cross-adapter fence's is 0 for good. */
	if (fence->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER)
		return;
	if (!fence->lowered) {
		if (mock_nlowered == mock_lowered_cap) {
			cap = mock_lowered_cap ? 2 * mock_lowered_cap : 64;
			p = realloc(mock_lowered, cap * sizeof(*p));
			if (!p) {
				fprintf(stderr, "mock_drm: out of memory for MonitoredValues\n");
				abort();
			}
			mock_lowered = p;
			mock_lowered_cap = cap;
		}
		mock_lowered[mock_nlowered++] = fence;
		fence->lowered = true;
	}
	/* A queued waiter's value is above CurrentValue, so at least 1. */
	if (value - 1 < fence->mv)
		fence->mv = value - 1;
}

/*
 * The waiters of @w whose values are reached leave (all of them once @w
 * is satisfied: the wait is over); the others keep their fences'
 * MonitoredValues down. Returns whether @w is satisfied. Locked.
 */
static bool mock_wait_settle(struct mock_wait *w)
{
	bool done = mock_satisfied(w) >= 0;
	unsigned int i;

	for (i = 0; i < w->count; i++) {
		if (!w->released[i] &&
		    (done || mock_reached(w->fences[i], w->want[i])))
			w->released[i] = true;
		if (!w->released[i])
			mock_lower(w->fences[i], w->want[i]);
	}
	return done;
}

/*
 * The kernel's waitlist bookkeeping (nfence_waitlist_settle()), redone
 * whenever a value or the set of waiters may have changed: waiters whose
 * values are reached leave, satisfied async waits signal their eventfds,
 * and every MonitoredValue becomes the least value still waited for,
 * minus 1, or its default without a waiter. Locked.
 */
static void mock_settle(void)
{
	struct mock_queue *q;
	struct mock_entry *e;
	struct mock_wait *w;
	unsigned int i, j;
	int fd;

	for (i = 0; i < mock_nlowered; i++) {
		mock_lowered[i]->mv = mock_mv_default(mock_lowered[i]);
		mock_lowered[i]->lowered = false;
	}
	mock_nlowered = 0;

	for (w = mock_blocking; w; w = w->next)
		mock_wait_settle(w);
	for (i = 0; i < MOCK_MAX_ASYNC; i++) {
		if (mock_async_used[i] && mock_wait_settle(&mock_async[i])) {
			mock_eventfd_signal(mock_async[i].eventfd);
			mock_async_used[i] = false;
		}
	}
	/* A legacy wait a queue has reached has CPU waiters in the kernel. */
	for (fd = 0; fd < MOCK_MAX_FDS; fd++) {
		for (i = 0; mock_files[fd] && i < mock_files[fd]->nqueues; i++) {
			q = &mock_files[fd]->queues[i];
			e = q->head;
			if (!e || e->kind != MOCK_ENTRY_WAIT || !e->started)
				continue;
			for (j = 0; j < e->count; j++) {
				if (!e->released[j] &&
				    mock_reached(e->fences[j], e->values[j]))
					e->released[j] = true;
				if (!e->released[j])
					mock_lower(e->fences[j], e->values[j]);
			}
		}
	}
}

static bool mock_is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	mock_resolve();
	n = real_readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(target, "anon_inode:[eventfd]");
}

static int mock_fence_wait(int fd, struct drm_nfence_fence_wait *args,
			   struct mock_wait *w)
{
	const uint32_t known = DRM_NFENCE_WAIT_ANY | DRM_NFENCE_WAIT_ASYNC;
	struct mock_file *f = mock_file_of(fd);
	bool async = args->flags & DRM_NFENCE_WAIT_ASYNC;
	const uint64_t *values;
	unsigned int i;
	int ret, idx;

	if (!f)
		return -ENOMEM;
	if (args->pad || (args->flags & ~known) || !args->count ||
	    args->count > DRM_NFENCE_MAX_WAIT_FENCES)
		return -EINVAL;
	if ((async && args->timeout_ns) || (!async && args->eventfd))
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	ret = mock_fences_of(f, args->device, args->count, args->handles,
			     args->values, DRM_NFENCE_FENCE_NO_WAIT, w->fences);
	if (ret)
		return ret;
	/* As the kernel, the eventfd is looked at after the fences. */
	if (async) {
		if (fcntl(args->eventfd, F_GETFD) < 0)
			return -EBADF;
		if (!mock_is_eventfd(args->eventfd))
			return -EINVAL;
	}

	values = (const uint64_t *)(uintptr_t)args->values;
	w->count = args->count;
	w->any = args->flags & DRM_NFENCE_WAIT_ANY;
	for (i = 0; i < args->count; i++)
		w->want[i] = values[i];
	w->deadline = args->timeout_ns;
	w->fd = fd;
	w->eventfd = args->eventfd;

	/* Already satisfied: done at once, whatever the deadline. */
	idx = mock_satisfied(w);
	if (idx >= 0) {
		if (async)
			mock_eventfd_signal(w->eventfd);
		else
			args->first_signaled = (uint32_t)idx;
		return 0;
	}
	if (async) {
		for (i = 0; i < MOCK_MAX_ASYNC; i++) {
			if (!mock_async_used[i]) {
				mock_async[i] = *w;
				mock_async_used[i] = true;
				mock_settle();
				return 0;
			}
		}
		return -ENOSPC;
	}
	if (w->deadline != DRM_NFENCE_TIMEOUT_INFINITE &&
	    w->deadline <= (int64_t)mock_now_ns())
		return -ETIME;
	/* Queued: its waiters hold MonitoredValues down until it ends. */
	w->next = mock_blocking;
	mock_blocking = w;
	mock_settle();
	return MOCK_BLOCK;
}

/*
 * A blocking wait, without the lock: polls the values (a forked child's
 * signal changes them behind this process's mock) until satisfied or the
 * deadline; a signal handler interrupts it with EINTR, as the kernel does
 * without SA_RESTART.
 */
static int mock_wait_poll(const struct mock_wait *w,
			  struct drm_nfence_fence_wait *args)
{
	struct timespec ts;
	uint64_t now, left;
	int idx;

	for (;;) {
		idx = mock_satisfied(w);
		if (idx >= 0) {
			args->first_signaled = (uint32_t)idx;
			return 0;
		}
		now = mock_now_ns();
		if (w->deadline <= 0 || now >= (uint64_t)w->deadline)
			return -ETIME;
		left = (uint64_t)w->deadline - now;
		if (left > 1000000)
			left = 1000000;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		if (nanosleep(&ts, NULL) && errno == EINTR)
			return -EINTR;
	}
}

/* The rest of a blocking wait mock_fence_wait() queued: wait, dequeue. */
static int mock_wait_block(struct mock_wait *w,
			   struct drm_nfence_fence_wait *args)
{
	int ret = mock_wait_poll(w, args);
	struct mock_wait **p;

	pthread_mutex_lock(&mock_lock);
	for (p = &mock_blocking; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	if (ret == -EINTR)
		mock_interrupts++;
	mock_settle();
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

static int mock_fence_signal(int fd, struct drm_nfence_fence_signal *args)
{
	struct mock_fence *fences[DRM_NFENCE_MAX_WAIT_FENCES];
	struct mock_file *f = mock_file_of(fd);
	const uint64_t *values;
	unsigned int i;
	int ret;

	if (!f)
		return -ENOMEM;
	if (args->flags || args->pad || !args->count ||
	    args->count > DRM_NFENCE_MAX_WAIT_FENCES)
		return -EINVAL;
	ret = mock_fences_of(f, args->device, args->count, args->handles,
			     args->values, DRM_NFENCE_FENCE_NO_SIGNAL, fences);
	if (ret)
		return ret;
	values = (const uint64_t *)(uintptr_t)args->values;
	for (i = 0; i < args->count; i++) {
		uint64_t *cur = mock_value(fences[i]);

		/* AlwaysSignaled: the storage is not touched any more. */
		if (fences[i]->always)
			continue;
		if (values[i] > __atomic_load_n(cur, __ATOMIC_ACQUIRE))
			__atomic_store_n(cur, values[i], __ATOMIC_RELEASE);
	}
	mock_settle();
	mock_cmp_run();
	return 0;
}

/* ------------------------------------------------------------------ */
/* Allocations                                                        */
/* ------------------------------------------------------------------ */

static struct mock_alloc *mock_find_alloc(struct mock_file *f, uint32_t device,
					  uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->nallocs; i++)
		if (f->allocs[i].handle == handle &&
		    f->allocs[i].device == device)
			return &f->allocs[i];
	return NULL;
}

static bool mock_alloc_handle_used(struct mock_file *f, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->nallocs; i++)
		if (f->allocs[i].handle == handle)
			return true;
	return false;
}

/*
 * The pool a request of file @f takes memory from, or -ENOSPC: as the
 * kernel, a segment is full for a file that would go past its quota there.
 * Locked.
 */
static int mock_pick_pool(const struct mock_node *node,
			  const struct mock_file *f, uint32_t segment,
			  uint32_t flags, uint64_t size)
{
	const struct mock_adapter *a = &node->adapter;
	const uint64_t *used = mock_pool_used[node - mock_nodes];
	uint64_t visible = (uint64_t)a->vram_visible_mb << 20;
	uint64_t invisible = ((uint64_t)a->vram_mb << 20) - visible;
	uint64_t system = (uint64_t)a->sysmem_mb << 20;
	uint64_t vram_quota = (uint64_t)a->client_vram_mb << 20;
	uint64_t sys_quota = (uint64_t)a->client_sysmem_mb << 20;

	if (sys_quota && mock_file_usage(f, 1) + size > sys_quota)
		system = 0;
	if (vram_quota && mock_file_usage(f, 2) + size > vram_quota)
		visible = invisible = 0;
	if (segment == 2) {
		if (!(flags & DRM_NFENCE_ALLOC_CPU_VISIBLE) &&
		    used[MOCK_POOL_VRAM_INVISIBLE] + size <= invisible)
			return MOCK_POOL_VRAM_INVISIBLE;
		if (used[MOCK_POOL_VRAM_VISIBLE] + size <= visible)
			return MOCK_POOL_VRAM_VISIBLE;
		if (!(flags & DRM_NFENCE_ALLOC_ALLOW_DEMOTE))
			return -ENOSPC;
	}
	if (used[MOCK_POOL_SYSTEM] + size <= system)
		return MOCK_POOL_SYSTEM;
	return -ENOSPC;
}

static int mock_alloc_create(int fd, const struct mock_node *node,
			     struct drm_nfence_alloc_create *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_alloc *a;
	uint64_t size;
	int pool, memfd;
	char *map;
	uint32_t h;

	if (!f)
		return -ENOMEM;
	if (args->pad || (args->flags & ~MOCK_ALLOC_FLAGS) || !args->size ||
	    args->size > DRM_NFENCE_MAX_ALLOC_SIZE ||
	    (args->segment_id != 1 && args->segment_id != 2))
		return -EINVAL;
	if (args->segment_id == 1 &&
	    (args->flags & DRM_NFENCE_ALLOC_ALLOW_DEMOTE))
		return -EINVAL;
	if (args->segment_id == 2 &&
	    (args->flags & DRM_NFENCE_ALLOC_CPU_VISIBLE) &&
	    !node->adapter.vram_visible_mb)
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	if (f->nallocs == MOCK_MAX_ALLOCS)
		return -ENOSPC;
	size = (args->size + MOCK_PAGE_SIZE - 1) & ~(uint64_t)(MOCK_PAGE_SIZE - 1);
	pool = mock_pick_pool(node, f, args->segment_id, args->flags, size);
	if (pool < 0)
		return pool;

	memfd = memfd_create("nfence-mock-alloc", MFD_CLOEXEC);
	if (memfd < 0)
		return -ENOMEM;
	map = MAP_FAILED;
	if (!ftruncate(memfd, (off_t)size))
		map = real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				memfd, 0);
	if (map == MAP_FAILED) {
		real_close(memfd);
		return -ENOMEM;
	}

	do {
		h = f->next_alloc_handle++;
	} while (!h || mock_alloc_handle_used(f, h));
	a = &f->allocs[f->nallocs++];
	memset(a, 0, sizeof(*a));
	a->handle = h;
	a->device = args->device;
	a->flags = args->flags;
	a->pool = (enum mock_pool)pool;
	a->node = (unsigned int)(node - mock_nodes);
	a->placed = pool == MOCK_POOL_SYSTEM ? 1 : 2;
	/* As the kernel: demoted VRAM is mappable only if asked so. */
	a->cpu_visible = args->segment_id == 1 ||
			 (args->flags & DRM_NFENCE_ALLOC_CPU_VISIBLE);
	a->size = size;
	a->gpu_va = f->next_va;
	f->next_va += size + MOCK_PAGE_SIZE;	/* a guard page */
	a->mmap_offset = MOCK_ALLOC_OFFSET + mock_alloc_seq++ * MOCK_ALLOC_STRIDE;
	a->memfd = memfd;
	a->map = map;
	mock_pool_used[node - mock_nodes][pool] += size;

	args->handle = h;
	args->gpu_va = a->gpu_va;
	args->placed_segment_id = a->placed;
	return 0;
}

/* Free the @i-th allocation of @f. Locked. */
static void mock_alloc_free(struct mock_file *f, unsigned int i)
{
	struct mock_alloc *a = &f->allocs[i];

	mock_pool_used[a->node][a->pool] -= a->size;
	real_munmap(a->map, a->size);
	real_close(a->memfd);
	*a = f->allocs[--f->nallocs];
}

static int mock_alloc_destroy(int fd, struct drm_nfence_alloc_destroy *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_alloc *a;

	if (!f)
		return -ENOMEM;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	a = mock_find_alloc(f, args->device, args->handle);
	if (!a)
		return -ENOENT;
	mock_alloc_free(f, (unsigned int)(a - f->allocs));
	return 0;
}

static int mock_alloc_lock(int fd, struct drm_nfence_alloc_lock *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_alloc *a;

	if (!f)
		return -ENOMEM;
	if (args->flags || args->pad)
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	a = mock_find_alloc(f, args->device, args->handle);
	if (!a)
		return -ENOENT;
	if (!a->cpu_visible)
		return -EINVAL;
	args->mmap_offset = a->mmap_offset;
	args->size = a->size;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Contexts and queues                                                */
/* ------------------------------------------------------------------ */

static struct mock_context *mock_find_context(struct mock_file *f,
					      uint32_t device, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->ncontexts; i++)
		if (f->contexts[i].handle == handle &&
		    f->contexts[i].device == device)
			return &f->contexts[i];
	return NULL;
}

static struct mock_queue *mock_find_queue(struct mock_file *f, uint32_t device,
					  uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->nqueues; i++)
		if (f->queues[i].handle == handle &&
		    f->queues[i].device == device)
			return &f->queues[i];
	return NULL;
}

static int mock_context_create(int fd, const struct mock_node *node,
			       struct drm_nfence_context_create *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_context *c;
	unsigned int i;
	uint32_t h;
	bool used;

	if (!f)
		return -ENOMEM;
	if (args->flags || args->engine >= node->adapter.num_engines)
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	if (f->ncontexts == MOCK_MAX_CONTEXTS)
		return -ENOSPC;
	do {
		h = f->next_context_handle++;
		used = !h;
		for (i = 0; i < f->ncontexts; i++)
			used |= f->contexts[i].handle == h;
	} while (used);
	c = &f->contexts[f->ncontexts++];
	memset(c, 0, sizeof(*c));
	c->handle = h;
	c->device = args->device;
	c->engine = args->engine;
	args->handle = h;
	return 0;
}

/* Drop the pending work of @q. */
static void mock_queue_drop(struct mock_queue *q)
{
	struct mock_entry *e, *next;

	for (e = q->head; e; e = next) {
		next = e->next;
		free(e);
	}
	q->head = q->tail = NULL;
	q->pending = 0;
}

/* Free the @i-th queue of @f and its progress fence handle. Locked. */
static void mock_queue_free(struct mock_file *f, unsigned int i)
{
	struct mock_queue *q = &f->queues[i];
	struct mock_local *l = mock_find_local(f, q->progress_handle);

	if (l)
		mock_local_remove(f, l);
	mock_queue_drop(q);
	*q = f->queues[--f->nqueues];
	/* A legacy wait it had reached no longer holds MonitoredValues. */
	mock_settle();
}

/* Free the queues of context @ctx of @device (every context: 0). Locked. */
static void mock_free_queues(struct mock_file *f, uint32_t device,
			     uint32_t ctx)
{
	unsigned int i = 0;

	while (i < f->nqueues) {
		if (f->queues[i].device == device &&
		    (!ctx || f->queues[i].context == ctx))
			mock_queue_free(f, i);
		else
			i++;
	}
}

static int mock_context_destroy(int fd, struct drm_nfence_context_destroy *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_context *c;

	if (!f)
		return -ENOMEM;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	c = mock_find_context(f, args->device, args->handle);
	if (!c)
		return -ENOENT;
	mock_free_queues(f, args->device, args->handle);
	*c = f->contexts[--f->ncontexts];
	return 0;
}

static int mock_context_control(int fd, struct drm_nfence_context_control *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_context *c;

	if (!f)
		return -ENOMEM;
	if (args->op > DRM_NFENCE_CONTEXT_OP_GET_PRIORITY)
		return -EINVAL;
	if (args->op == DRM_NFENCE_CONTEXT_OP_SET_PRIORITY ?
	    args->priority < DRM_NFENCE_CONTEXT_PRIORITY_MIN ||
	    args->priority > DRM_NFENCE_CONTEXT_PRIORITY_MAX :
	    args->priority != 0)
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	c = mock_find_context(f, args->device, args->context);
	if (!c)
		return -ENOENT;
	if (args->op == DRM_NFENCE_CONTEXT_OP_SUSPEND)
		c->state |= DRM_NFENCE_CONTEXT_STATE_SUSPENDED;
	else if (args->op == DRM_NFENCE_CONTEXT_OP_RESUME)
		c->state &= ~DRM_NFENCE_CONTEXT_STATE_SUSPENDED;
	else if (args->op == DRM_NFENCE_CONTEXT_OP_SET_PRIORITY)
		c->priority = args->priority;
	else if (args->op == DRM_NFENCE_CONTEXT_OP_GET_PRIORITY)
		args->priority = c->priority;
	args->state = c->state;
	args->fault_va = c->fault_va;
	args->fault_reason = c->fault_reason;
	if (args->op == DRM_NFENCE_CONTEXT_OP_RESUME)
		mock_cmp_run();
	return 0;
}

static int mock_hwqueue_create(int fd, const struct mock_node *node,
			       struct drm_nfence_hwqueue_create *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_context *c;
	struct mock_fence *fence;
	struct mock_local *l;
	struct mock_queue *q;
	unsigned int i;
	uint32_t h;
	bool used;

	if (!f)
		return -ENOMEM;
	if (args->pad || args->pad2 || (args->flags & ~MOCK_HWQUEUE_FLAGS))
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	c = mock_find_context(f, args->device, args->context);
	if (!c)
		return -ENOENT;
	if ((args->flags & DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION) ||
	    ((args->flags & DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE) &&
	     !node->adapter.native_fences))
		return -EOPNOTSUPP;
	if (f->nqueues == MOCK_MAX_QUEUES || f->nlocals == MOCK_MAX_LOCAL ||
	    mock_nfences == MOCK_MAX_FENCES)
		return -ENOSPC;
	if (c->state & DRM_NFENCE_CONTEXT_STATE_FAULTED)
		return -EIO;

	fence = mock_fence_new(f, fd, node, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0);
	if (!fence)
		return -ENOMEM;
	do {
		h = f->next_queue_handle++;
		used = !h;
		for (i = 0; i < f->nqueues; i++)
			used |= f->queues[i].handle == h;
	} while (used);
	l = mock_local_new(f, args->device, 0, fence);
	l->queue = h;
	q = &f->queues[f->nqueues++];
	memset(q, 0, sizeof(*q));
	q->handle = h;
	q->device = args->device;
	q->context = args->context;
	q->flags = args->flags;
	mock_hwqueue_flags_last = args->flags;
	q->progress_handle = l->handle;
	q->progress = fence;

	args->handle = h;
	args->progress_fence = l->handle;
	mock_fill_mapping(fence, &args->progress_fence_mapping);
	/* As the kernel: a monitored progress fence has no MonitoredValue. */
	if (!(args->flags & DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE))
		args->progress_fence_mapping.monitored_value_gpu_va = 0;
	/* Two log buffers of a page each on a native fence adapter. */
	args->wait_log_gpu_va = 0;
	args->signal_log_gpu_va = 0;
	args->log_entries = 0;
	q->logs = node->adapter.native_fences;
	if (q->logs) {
		args->wait_log_gpu_va = f->next_va;
		args->signal_log_gpu_va = f->next_va + 2 * MOCK_PAGE_SIZE;
		args->log_entries = DRM_NFENCE_LOG_ENTRIES;
		f->next_va += 4 * MOCK_PAGE_SIZE;
	}
	return 0;
}

static int mock_hwqueue_destroy(int fd, struct drm_nfence_hwqueue_destroy *args)
{
	struct mock_file *f = mock_file_of(fd);
	struct mock_queue *q;

	if (!f)
		return -ENOMEM;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	q = mock_find_queue(f, args->device, args->handle);
	if (!q)
		return -ENOENT;
	mock_queue_free(f, (unsigned int)(q - f->queues));
	return 0;
}

/*
 * DRM_IOCTL_NFENCE_LOG_READ: the fake CMP writes no log entries, so a log
 * is its header alone; the kernel's input checks, in its order.
 */
static int mock_log_read(int fd, const struct mock_node *node,
			 struct drm_nfence_log_read *args)
{
	struct mock_file *f = mock_file_of(fd);

	if (!f)
		return -ENOMEM;
	if (args->flags || (args->type != DRM_NFENCE_LOG_TYPE_WAITS &&
			    args->type != DRM_NFENCE_LOG_TYPE_SIGNALS))
		return -EINVAL;
	if (!mock_find_queue(f, args->device, args->hwqueue))
		return -ENOENT;
	if (!node->adapter.native_fences)
		return -EOPNOTSUPP;
	if (args->cursor)
		return -EINVAL;
	memset(&args->header, 0, sizeof(args->header));
	args->header.type = args->type;
	args->header.num_entries = DRM_NFENCE_LOG_ENTRIES;
	args->num_entries = 0;
	args->status = 0;
	args->gpu_va = 0x100000000ull + args->type * 0x1000;
	return 0;
}

static void mock_remove_device_gpu(struct mock_file *f, uint32_t device)
{
	unsigned int i;

	mock_free_queues(f, device, 0);
	for (i = 0; i < f->ncontexts;) {
		if (f->contexts[i].device == device)
			f->contexts[i] = f->contexts[--f->ncontexts];
		else
			i++;
	}
	for (i = 0; i < f->nallocs;) {
		if (f->allocs[i].device == device)
			mock_alloc_free(f, i);
		else
			i++;
	}
}

static void mock_file_free_gpu(struct mock_file *f)
{
	unsigned int i;

	for (i = 0; i < f->nqueues; i++)
		mock_queue_drop(&f->queues[i]);
	while (f->nallocs)
		mock_alloc_free(f, 0);
}

/* ------------------------------------------------------------------ */
/* The GPU: address translation, the ISA, the CMP                     */
/* ------------------------------------------------------------------ */

static uint64_t mock_work_ns;		/* WORK run so far */

/*
 * The CPU view of 8 bytes at GPU VA @va of file @f, for a write if
 * @write; NULL with *@reason set on a fault. *@fence is set to the fence
 * whose CurrentValue @va is, NULL for other memory.
 */
static uint64_t *mock_gpu_ptr(struct mock_file *f, uint64_t va, bool write,
			      uint32_t *reason, struct mock_fence **fence)
{
	struct mock_fence *fn;
	uint64_t id;
	unsigned int i;

	*fence = NULL;
	*reason = DRM_NFENCE_FAULT_MISALIGNED;
	if (va % 8)
		return NULL;
	*reason = DRM_NFENCE_FAULT_PAGE;
	if (va >= MOCK_FENCE_VA + 16 &&
	    va < MOCK_FENCE_VA + 16ull * (mock_nfences + 1)) {
		id = (va - MOCK_FENCE_VA) / 16;
		fn = mock_fences[id - 1];
		/* MonitoredValue: read-only for the engines. */
		if ((va - MOCK_FENCE_VA) % 16)
			return write ? NULL : &fn->mv;
		*fence = fn;
		return fn->page ? mock_value(fn) : &fn->intra_value;
	}
	for (i = 0; i < f->nallocs; i++)
		if (va >= f->allocs[i].gpu_va &&
		    va - f->allocs[i].gpu_va < f->allocs[i].size)
			return (uint64_t *)(f->allocs[i].map +
					    (va - f->allocs[i].gpu_va));
	return NULL;
}

static uint32_t mock_cs_words(uint32_t opcode)
{
	switch (opcode) {
	case DRM_NFENCE_CS_NOP:
		return DRM_NFENCE_CS_NOP_WORDS;
	case DRM_NFENCE_CS_FENCE_WAIT:
		return DRM_NFENCE_CS_FENCE_WAIT_WORDS;
	case DRM_NFENCE_CS_FENCE_SIGNAL:
		return DRM_NFENCE_CS_FENCE_SIGNAL_WORDS;
	case DRM_NFENCE_CS_WRITE64:
		return DRM_NFENCE_CS_WRITE64_WORDS;
	case DRM_NFENCE_CS_TIMESTAMP:
		return DRM_NFENCE_CS_TIMESTAMP_WORDS;
	case DRM_NFENCE_CS_WORK:
		return DRM_NFENCE_CS_WORK_WORDS;
	}
	return 0;
}

/*
 * Decode the command at @cmd (at most @left bytes) of a queue that has
 * log buffers (@logs) or not, as nfence_cs_decode() does: its length in
 * bytes with its operands in @ops (a log payload last), or 0 if it is
 * invalid, with *@reason BAD_COMMAND (unknown opcode, wrong length,
 * flags, a log payload on a queue without logs or with the wrong
 * operation, reserved word, too long a WORK, past the end) or MISALIGNED
 * and *@bad_va the misaligned VA operand. The fake CMP runs a logged
 * command as the unlogged one and writes no log entry.
 */
static uint32_t mock_cs_decode(const uint32_t *cmd, uint32_t left, bool logs,
			       uint64_t ops[4], uint32_t *reason,
			       uint64_t *bad_va)
{
	uint32_t words, opcode, flags;
	uint64_t va = 0, va2 = 0;

	*reason = DRM_NFENCE_FAULT_BAD_COMMAND;
	if (left < 8)
		return 0;
	opcode = DRM_NFENCE_CS_OPCODE(cmd[0]);
	flags = DRM_NFENCE_CS_FLAGS(cmd[0]);
	words = mock_cs_words(opcode);
	if (flags == DRM_NFENCE_CS_FLAG_LOG && logs &&
	    (opcode == DRM_NFENCE_CS_FENCE_WAIT ||
	     opcode == DRM_NFENCE_CS_FENCE_SIGNAL))
		words += DRM_NFENCE_CS_LOG_WORDS;
	else if (flags)
		return 0;
	if (!words || DRM_NFENCE_CS_WORDS(cmd[0]) != words ||
	    words * 4 > left || cmd[1])
		return 0;
	memset(ops, 0, 4 * sizeof(ops[0]));
	memcpy(ops, &cmd[2], words * 4 - 8);
	if (flags && (ops[(words - 4) / 2] >> 32) !=
	    (opcode == DRM_NFENCE_CS_FENCE_WAIT ?
	     DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED :
	     DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED))
		return 0;
	switch (opcode) {
	case DRM_NFENCE_CS_FENCE_WAIT:
	case DRM_NFENCE_CS_WRITE64:
	case DRM_NFENCE_CS_TIMESTAMP:
		va = ops[0];
		break;
	case DRM_NFENCE_CS_FENCE_SIGNAL:
		va = ops[0];
		va2 = ops[1];
		break;
	case DRM_NFENCE_CS_WORK:
		if (ops[0] > DRM_NFENCE_CS_MAX_WORK_NS)
			return 0;
		break;
	}
	if (va % 8 || va2 % 8) {
		*reason = DRM_NFENCE_FAULT_MISALIGNED;
		*bad_va = va % 8 ? va : va2;
		return 0;
	}
	*reason = DRM_NFENCE_FAULT_NONE;
	return words * 4;
}

/* The allocation of @f holding [@va, @va + @size), or NULL. */
static struct mock_alloc *mock_alloc_at(struct mock_file *f, uint64_t va,
					uint64_t size)
{
	unsigned int i;

	for (i = 0; i < f->nallocs; i++)
		if (va >= f->allocs[i].gpu_va &&
		    va - f->allocs[i].gpu_va + size <= f->allocs[i].size)
			return &f->allocs[i];
	return NULL;
}

static struct mock_context *mock_context_of(struct mock_file *f,
					    const struct mock_queue *q)
{
	return mock_find_context(f, q->device, q->context);
}

/*
 * Fault context @c of @f: its queues drop their work and their progress
 * fences become AlwaysSignaled (CurrentValue raised to 0xFFFFFFFF, every
 * value reached from now on). Locked.
 */
static void mock_fault(struct mock_file *f, struct mock_context *c,
		       uint64_t va, uint32_t reason)
{
	struct mock_fence *progress;
	unsigned int i;
	uint64_t *cv;

	if (!(c->state & DRM_NFENCE_CONTEXT_STATE_FAULTED)) {
		c->state |= DRM_NFENCE_CONTEXT_STATE_FAULTED;
		c->fault_va = va;
		c->fault_reason = reason;
	}
	for (i = 0; i < f->nqueues; i++) {
		if (f->queues[i].device != c->device ||
		    f->queues[i].context != c->handle)
			continue;
		mock_queue_drop(&f->queues[i]);
		progress = f->queues[i].progress;
		cv = mock_value(progress);
		if (*cv < MOCK_ALWAYS_SIGNALED)
			__atomic_store_n(cv, MOCK_ALWAYS_SIGNALED,
					 __ATOMIC_RELEASE);
		__atomic_store_n(&progress->always, true, __ATOMIC_RELEASE);
	}
	mock_settle();
}

static uint64_t mock_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void mock_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/*
 * Run the commands of @e on @q as far as they go: 1 when they are done,
 * 0 when blocked on a FENCE_WAIT, -1 after a fault. *@moved is set when a
 * command ran.
 */
static int mock_run_commands(struct mock_file *f, struct mock_queue *q,
			     struct mock_entry *e, bool *moved)
{
	uint32_t cmd[DRM_NFENCE_CS_FENCE_SIGNAL_WORDS + DRM_NFENCE_CS_LOG_WORDS];
	struct mock_context *c = mock_context_of(f, q);
	uint64_t ops[4], *p, *mv, bad_va = 0;
	uint32_t reason, len;
	struct mock_fence *fence, *unused;
	struct mock_alloc *a;

	while (e->pos < e->size) {
		a = mock_alloc_at(f, e->va + e->pos, 8);
		if (!a) {
			mock_fault(f, c, e->va + e->pos, DRM_NFENCE_FAULT_PAGE);
			return -1;
		}
		memset(cmd, 0, sizeof(cmd));
		len = e->size - e->pos;
		if (len > sizeof(cmd))
			len = sizeof(cmd);
		if (e->va + e->pos - a->gpu_va + len > a->size)
			len = (uint32_t)(a->size - (e->va + e->pos - a->gpu_va));
		memcpy(cmd, a->map + (e->va + e->pos - a->gpu_va), len);
		len = mock_cs_decode(cmd, len, q->logs, ops, &reason, &bad_va);
		if (!len) {
			/* The kernel blames a misaligned operand, else the command. */
			mock_fault(f, c, reason == DRM_NFENCE_FAULT_MISALIGNED ?
				   bad_va : e->va + e->pos, reason);
			return -1;
		}

		switch (DRM_NFENCE_CS_OPCODE(cmd[0])) {
		case DRM_NFENCE_CS_FENCE_WAIT:
			p = mock_gpu_ptr(f, ops[0], false, &reason, &fence);
			if (!p)
				goto fault;
			/* An AlwaysSignaled fence has reached every value. */
			if (mock_load(p) < ops[1] &&
			    !(fence && fence->always))
				return 0;
			break;
		case DRM_NFENCE_CS_FENCE_SIGNAL:
			p = mock_gpu_ptr(f, ops[0], true, &reason, &fence);
			if (!p)
				goto fault;
			mv = NULL;
			if (ops[1]) {
				mv = mock_gpu_ptr(f, ops[1], false, &reason,
						  &unused);
				if (!mv) {
					ops[0] = ops[1];
					goto fault;
				}
			}
			if (!(fence && fence->always))
				mock_store(p, ops[2]);
			mock_settle();
			break;
		case DRM_NFENCE_CS_WRITE64:
			p = mock_gpu_ptr(f, ops[0], true, &reason, &unused);
			if (!p)
				goto fault;
			mock_store(p, ops[1]);
			break;
		case DRM_NFENCE_CS_TIMESTAMP:
			p = mock_gpu_ptr(f, ops[0], true, &reason, &unused);
			if (!p)
				goto fault;
			mock_store(p, (mock_now_ns() + mock_work_ns) / 10);
			break;
		case DRM_NFENCE_CS_WORK:
			mock_work_ns += ops[0];
			break;
		}
		e->pos += len;
		*moved = true;
	}
	return 1;
fault:
	mock_fault(f, c, ops[0], reason);
	return -1;
}

/* Run @q's head entry; true if the queue moved. Locked. */
static bool mock_run_queue(struct mock_file *f, struct mock_queue *q)
{
	struct mock_context *c = mock_context_of(f, q);
	struct mock_entry *e;
	bool moved = false, done;
	unsigned int i;
	int ret;

	while ((e = q->head) && c && !c->state) {
		done = true;
		switch (e->kind) {
		case MOCK_ENTRY_COMMANDS:
			ret = mock_run_commands(f, q, e, &moved);
			if (ret < 0)
				return true;	/* the queue was dropped */
			done = ret > 0;
			if (done) {
				if (!q->progress->always)
					mock_store(mock_value(q->progress),
						   e->progress);
				mock_settle();
			}
			break;
		case MOCK_ENTRY_WAIT:
			/*
			 * Reached: the kernel queues a CPU waiter per fence,
			 * which lowers its MonitoredValue until released.
			 */
			if (!e->started) {
				e->started = true;
				mock_settle();
			}
			for (i = 0; i < e->count; i++)
				done &= e->released[i];
			break;
		case MOCK_ENTRY_SIGNAL:
			for (i = 0; i < e->count; i++)
				if (!e->fences[i]->always &&
				    e->values[i] >
				    mock_load(mock_value(e->fences[i])))
					mock_store(mock_value(e->fences[i]),
						   e->values[i]);
			mock_settle();
			break;
		}
		if (!done)
			break;
		q->head = e->next;
		if (!q->head)
			q->tail = NULL;
		q->pending--;
		free(e);
		moved = true;
	}
	return moved;
}

/* Run every queue until none can move. Locked. */
static void mock_cmp_run(void)
{
	bool moved;
	unsigned int i;
	int fd;

	do {
		moved = false;
		for (fd = 0; fd < MOCK_MAX_FDS; fd++)
			for (i = 0; mock_files[fd] &&
			     i < mock_files[fd]->nqueues; i++)
				moved |= mock_run_queue(mock_files[fd],
						       &mock_files[fd]->queues[i]);
	} while (moved);
}

/* Append @e to @q and run. */
static void mock_queue_push(struct mock_queue *q, struct mock_entry *e)
{
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	q->pending++;
	mock_cmp_run();
}

/* The queue @handle of @device, or -ENOENT. */
static int mock_submit_queue(struct mock_file *f, uint32_t device,
			     uint32_t handle, struct mock_queue **out)
{
	if (mock_find_device(f, device) < 0)
		return -ENOENT;
	*out = mock_find_queue(f, device, handle);
	return *out ? 0 : -ENOENT;
}

/*
 * Whether @q takes one more submission (@progress: its progress value, 0
 * for a legacy wait or signal): the kernel's nfence_hwqueue_push() checks,
 * in its order. Where the kernel would block until the queue makes room,
 * the fake, which runs the GPU only on the caller's own ioctls, would
 * block for good: it aborts instead, loudly.
 */
static int mock_queue_admit(struct mock_file *f, struct mock_queue *q,
			    uint64_t progress)
{
	struct mock_context *c = mock_context_of(f, q);

	if (!c || (c->state & DRM_NFENCE_CONTEXT_STATE_FAULTED))
		return -EIO;
	if (progress && progress <= q->last_value)
		return -EINVAL;
	if (q->pending >= DRM_NFENCE_MAX_QUEUED) {
		fprintf(stderr,
			"mock_drm: queue %u already holds %u pending submissions: the kernel blocks this one until the queue makes room, which the synchronous fake cannot do (see nfence_libnfence_test for the real behaviour)\n",
			q->handle, q->pending);
		abort();
	}
	return 0;
}

static int mock_submit(int fd, struct drm_nfence_submit *args)
{
	struct mock_file *f = mock_file_of(fd);
	uint64_t ops[4], bad_va;
	struct mock_entry *e;
	struct mock_alloc *a;
	struct mock_queue *q;
	uint32_t pos, len, reason;
	int ret;

	if (!f)
		return -ENOMEM;
	if (args->flags || !args->size || args->size > DRM_NFENCE_MAX_SUBMIT_SIZE ||
	    args->size % 8 || args->commands_gpu_va % 8)
		return -EINVAL;
	ret = mock_submit_queue(f, args->device, args->hwqueue, &q);
	if (ret)
		return ret;
	/* The buffer is checked before the queue's state, as the kernel. */
	a = mock_alloc_at(f, args->commands_gpu_va, args->size);
	if (!a)
		return -EINVAL;
	for (pos = 0; pos < args->size; pos += len) {
		len = mock_cs_decode((const uint32_t *)(a->map +
				     (args->commands_gpu_va - a->gpu_va) + pos),
				     args->size - pos, q->logs, ops, &reason,
				     &bad_va);
		if (!len)
			return -EINVAL;
	}
	ret = mock_queue_admit(f, q, args->progress_fence_value);
	if (ret)
		return ret;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->kind = MOCK_ENTRY_COMMANDS;
	e->va = args->commands_gpu_va;
	e->size = args->size;
	e->progress = args->progress_fence_value;
	q->last_value = args->progress_fence_value;
	mock_queue_push(q, e);
	return 0;
}

static int mock_submit_sync(int fd, struct drm_nfence_submit_sync *args,
			    bool signal)
{
	const uint32_t deny = signal ? DRM_NFENCE_FENCE_NO_SIGNAL :
				       DRM_NFENCE_FENCE_NO_WAIT;
	struct mock_file *f = mock_file_of(fd);
	const uint32_t *h = (const uint32_t *)(uintptr_t)args->handles;
	const uint64_t *v = (const uint64_t *)(uintptr_t)args->values;
	struct mock_entry *e;
	struct mock_local *l;
	struct mock_queue *q;
	unsigned int i;
	int ret;

	if (!f)
		return -ENOMEM;
	if (args->flags || !args->count ||
	    args->count > DRM_NFENCE_MAX_WAIT_FENCES)
		return -EINVAL;
	ret = mock_submit_queue(f, args->device, args->hwqueue, &q);
	if (ret)
		return ret;
	/* Every fence, then the queue's state, as the kernel. */
	if (!h || !v)
		return -EFAULT;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < args->count; i++) {
		l = mock_find_local(f, h[i]);
		ret = !l || l->device != args->device ? -ENOENT :
		      l->flags & deny ? -EACCES :
		      !l->fence->page ? -EINVAL : 0;
		if (ret) {
			free(e);
			return ret;
		}
		e->fences[i] = l->fence;
		e->values[i] = v[i];
	}
	ret = mock_queue_admit(f, q, 0);
	if (ret) {
		free(e);
		return ret;
	}
	e->kind = signal ? MOCK_ENTRY_SIGNAL : MOCK_ENTRY_WAIT;
	e->count = args->count;
	mock_queue_push(q, e);
	return 0;
}

/*
 * mmap() of a fake node: the read-only view of one fence page, or an
 * allocation's memory (read/write).
 */
static void *mock_mmap(void *addr, int fd, size_t len, int prot, int flags,
		       off_t off)
{
	struct mock_page *page = NULL;
	struct mock_file *f;
	unsigned int i;

	if ((uint64_t)off >= MOCK_WINDOW_OFFSET) {
		f = fd < MOCK_MAX_FDS ? mock_files[fd] : NULL;
		if (!f || !f->win_pages || (uint64_t)off != f->win_off ||
		    len > (size_t)f->win_pages * MOCK_PAGE_SIZE) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (prot & PROT_WRITE) {
			errno = EPERM;
			return MAP_FAILED;
		}
		if (mock_window_fail != MOCK_MAP_OK)
			return mock_window_map_fail(addr, len, flags);
		addr = real_mmap(addr, len, PROT_NONE, MAP_PRIVATE |
				 MAP_ANONYMOUS | (flags & MAP_FIXED), -1, 0);
		if (addr == MAP_FAILED)
			return MAP_FAILED;
		f->win_addr = addr;
		f->win_len = len;
		for (i = 0; i < f->nlocals; i++)
			if (f->locals[i].wslot >= 0)
				mock_window_show(f, f->locals[i].wslot,
						 f->locals[i].fence->page);
		return addr;
	}
	if ((uint64_t)off >= MOCK_ALLOC_OFFSET) {
		f = fd < MOCK_MAX_FDS ? mock_files[fd] : NULL;
		for (i = 0; f && i < f->nallocs; i++) {
			if (f->allocs[i].mmap_offset != (uint64_t)off ||
			    !f->allocs[i].cpu_visible)
				continue;
			if (len > f->allocs[i].size)
				break;
			return real_mmap(NULL, len, prot, flags,
					 f->allocs[i].memfd, 0);
		}
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (prot & PROT_WRITE) {
		errno = EACCES;
		return MAP_FAILED;
	}
	for (i = 0; i < mock_npages; i++)
		if (mock_pages[i]->offset == (uint64_t)off)
			page = mock_pages[i];
	if (!page || len > MOCK_PAGE_SIZE) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (page->owner_fd >= 0 && page->owner_fd != fd) {
		errno = EACCES;
		return MAP_FAILED;
	}
	return real_mmap(NULL, len, prot, flags, mock_memfd,
			 (off_t)page->index * MOCK_PAGE_SIZE);
}

/*
 * DEVICE_CONTROL: QUERY reports a fault of one of the device's contexts
 * (the first in context order, not necessarily the first in time) and no
 * error; the fake driver does not model device errors, so MARK_ERROR is
 * refused as an ioctl it does not know (the VM tests cover it).
 */
static int mock_device_control(int fd, struct drm_nfence_device_control *args)
{
	struct mock_file *f = mock_file_of(fd);
	const struct mock_context *c;
	unsigned int i;

	if (!f)
		return -ENOMEM;
	if (args->flags || args->op > DRM_NFENCE_DEVICE_OP_MARK_ERROR)
		return -EINVAL;
	if (mock_find_device(f, args->device) < 0)
		return -ENOENT;
	if (args->op == DRM_NFENCE_DEVICE_OP_MARK_ERROR)
		return -ENOTTY;
	args->error = DRM_NFENCE_DEVICE_ERROR_NONE;
	args->fault_va = 0;
	args->fault_reason = DRM_NFENCE_FAULT_NONE;
	args->fault_context = 0;
	for (i = 0; i < f->ncontexts; i++) {
		c = &f->contexts[i];
		if (c->device != args->device ||
		    !(c->state & DRM_NFENCE_CONTEXT_STATE_FAULTED))
			continue;
		args->fault_va = c->fault_va;
		args->fault_reason = c->fault_reason;
		args->fault_context = c->handle;
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The syncobj bridge                                                 */
/* ------------------------------------------------------------------ */

/*
 * The fake driver has no DRM syncobjs and no sync files: the bridge
 * ioctls check their flags, the device, and the fence handle as the kernel
 * does (unknown: ENOENT, an INTRA_GPU fence: EINVAL, a handle opened
 * without the right: EACCES), record the call (mock_last_bridge_call())
 * and succeed. The syncobj handle, the point's existence, the sync_file,
 * the 32-bit value window and the limits on pending calls are not checked,
 * and nothing is ever attached or signaled.
 */
static int mock_bridge_fence(struct mock_file *f, uint32_t device,
			     uint32_t fence, uint32_t deny)
{
	struct mock_local *l;

	if (mock_find_device(f, device) < 0)
		return -ENOENT;
	l = mock_find_local(f, fence);
	if (!l || l->device != device)
		return -ENOENT;
	if (!l->fence->page)
		return -EINVAL;
	if (l->flags & deny)
		return -EACCES;
	return 0;
}

static int mock_syncobj_bind(int fd, struct drm_nfence_syncobj_bind *args)
{
	struct mock_file *f = mock_file_of(fd);
	int ret;

	if (!f)
		return -ENOMEM;
	if (args->flags || !args->point)
		return -EINVAL;
	ret = mock_bridge_fence(f, args->device, args->fence,
				DRM_NFENCE_FENCE_NO_WAIT);
	if (ret)
		return ret;
	memset(&mock_bridge_last, 0, sizeof(mock_bridge_last));
	mock_bridge_last.nr = DRM_NFENCE_SYNCOBJ_BIND;
	mock_bridge_last.device = args->device;
	mock_bridge_last.fence = args->fence;
	mock_bridge_last.value = args->value;
	mock_bridge_last.syncobj = args->syncobj;
	mock_bridge_last.point = args->point;
	return 0;
}

static int mock_syncobj_signal(int fd, struct drm_nfence_syncobj_signal *args)
{
	struct mock_file *f = mock_file_of(fd);
	bool sync_file = args->flags & DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
	int ret;

	if (!f)
		return -ENOMEM;
	if ((args->flags & ~DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE) || args->pad ||
	    (sync_file ? args->syncobj || args->point : args->fd != 0))
		return -EINVAL;
	ret = mock_bridge_fence(f, args->device, args->fence,
				DRM_NFENCE_FENCE_NO_SIGNAL);
	if (ret)
		return ret;
	memset(&mock_bridge_last, 0, sizeof(mock_bridge_last));
	mock_bridge_last.nr = DRM_NFENCE_SYNCOBJ_SIGNAL;
	mock_bridge_last.device = args->device;
	mock_bridge_last.fence = args->fence;
	mock_bridge_last.value = args->value;
	mock_bridge_last.syncobj = args->syncobj;
	mock_bridge_last.fd = args->fd;
	mock_bridge_last.point = args->point;
	mock_bridge_last.flags = args->flags;
	return 0;
}

static int mock_dispatch(int fd, const struct mock_node *node,
			 unsigned long request, void *arg, struct mock_wait *w)
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
	if (_IOC_TYPE(request) == DRM_IOCTL_BASE &&
	    _IOC_NR(request) >= DRM_COMMAND_BASE &&
	    _IOC_NR(request) < DRM_COMMAND_BASE + 0x20)
		mock_calls[_IOC_NR(request) - DRM_COMMAND_BASE]++;
	switch (request) {
	case DRM_IOCTL_NFENCE_QUERY:
		return mock_query(fd, node, arg);
	case DRM_IOCTL_NFENCE_DEVICE_CREATE:
		return mock_device_create(fd, arg);
	case DRM_IOCTL_NFENCE_DEVICE_DESTROY:
		return mock_device_destroy(fd, arg);
	case DRM_IOCTL_NFENCE_FENCE_CREATE:
		return mock_fence_create(fd, node, arg);
	case DRM_IOCTL_NFENCE_FENCE_DESTROY:
		return mock_fence_destroy(fd, arg);
	case DRM_IOCTL_NFENCE_FENCE_SHARE:
		return mock_fence_share(fd, arg);
	case DRM_IOCTL_NFENCE_FENCE_OPEN:
		return mock_fence_open(fd, node, arg);
	case DRM_IOCTL_NFENCE_FENCE_WAIT:
		return mock_fence_wait(fd, arg, w);
	case DRM_IOCTL_NFENCE_FENCE_SIGNAL:
		return mock_fence_signal(fd, arg);
	case DRM_IOCTL_NFENCE_FENCE_WINDOW:
		return mock_fence_window(fd, arg);
	case DRM_IOCTL_NFENCE_ALLOC_CREATE:
		return mock_alloc_create(fd, node, arg);
	case DRM_IOCTL_NFENCE_ALLOC_DESTROY:
		return mock_alloc_destroy(fd, arg);
	case DRM_IOCTL_NFENCE_ALLOC_LOCK:
		return mock_alloc_lock(fd, arg);
	case DRM_IOCTL_NFENCE_CONTEXT_CREATE:
		return mock_context_create(fd, node, arg);
	case DRM_IOCTL_NFENCE_CONTEXT_DESTROY:
		return mock_context_destroy(fd, arg);
	case DRM_IOCTL_NFENCE_CONTEXT_CONTROL:
		return mock_context_control(fd, arg);
	case DRM_IOCTL_NFENCE_HWQUEUE_CREATE:
		return mock_hwqueue_create(fd, node, arg);
	case DRM_IOCTL_NFENCE_HWQUEUE_DESTROY:
		return mock_hwqueue_destroy(fd, arg);
	case DRM_IOCTL_NFENCE_SUBMIT:
		return mock_submit(fd, arg);
	case DRM_IOCTL_NFENCE_SUBMIT_WAIT:
		return mock_submit_sync(fd, arg, false);
	case DRM_IOCTL_NFENCE_SUBMIT_SIGNAL:
		return mock_submit_sync(fd, arg, true);
	case DRM_IOCTL_NFENCE_LOG_READ:
		return mock_log_read(fd, node, arg);
	case DRM_IOCTL_NFENCE_LOGGING_LEVEL:
		return mock_logging_level(node, arg);
	case DRM_IOCTL_NFENCE_DEVICE_CONTROL:
		return mock_device_control(fd, arg);
	case DRM_IOCTL_NFENCE_SYNCOBJ_BIND:
		return mock_syncobj_bind(fd, arg);
	case DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL:
		return mock_syncobj_signal(fd, arg);
	}
	return -ENOTTY;
}

/* Takes precedence over libc's ioctl() for the whole process. */
int ioctl(int fd, unsigned long request, ...)
{
	const struct mock_node *node;
	struct mock_wait w;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	mock_resolve();
	pthread_mutex_lock(&mock_lock);
	node = mock_node_of(fd);
	if (node) {
		ret = mock_dispatch(fd, node, request, arg, &w);
		pthread_mutex_unlock(&mock_lock);
		if (ret == MOCK_BLOCK)
			ret = mock_wait_block(&w, arg);
		if (ret < 0) {
			errno = -ret;
			return -1;
		}
		return ret;
	}
	pthread_mutex_unlock(&mock_lock);

	return real_ioctl(fd, request, arg);
}

/* Takes precedence over libc's mmap(): fence pages of fake nodes. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *ret;

	mock_resolve();
	if (fd >= 0) {
		pthread_mutex_lock(&mock_lock);
		if (mock_node_of(fd)) {
			ret = mock_mmap(addr, fd, len, prot, flags, off);
			pthread_mutex_unlock(&mock_lock);
			return ret;
		}
		pthread_mutex_unlock(&mock_lock);
	}
	return real_mmap(addr, len, prot, flags, fd, off);
}

/*
 * Takes precedence over libc's readlink(): /proc/self/fd/N of a shared
 * fence's NT handle (a memfd here) reads as the kernel's fence file does,
 * "anon_inode:nfence-fence", so that the library can tell it from other
 * files as it does with the kernel's.
 */
ssize_t readlink(const char *path, char *buf, size_t size)
{
	static const char fence[] = "anon_inode:nfence-fence";
	const char *prefix = "/proc/self/fd/";
	bool token = false;
	struct stat st;
	unsigned int i;
	char *end;
	long fd;

	mock_resolve();
	if (strncmp(path, prefix, strlen(prefix)))
		return real_readlink(path, buf, size);
	fd = strtol(path + strlen(prefix), &end, 10);
	if (*end || fd < 0 || fd > INT_MAX || fstat((int)fd, &st))
		return real_readlink(path, buf, size);
	pthread_mutex_lock(&mock_lock);
	for (i = 0; i < mock_nfences && !token; i++)
		token = mock_fences[i]->token >= 0 &&
			mock_fences[i]->token_dev == st.st_dev &&
			mock_fences[i]->token_ino == st.st_ino;
	pthread_mutex_unlock(&mock_lock);
	if (!token)
		return real_readlink(path, buf, size);
	if (size > sizeof(fence) - 1)
		size = sizeof(fence) - 1;
	memcpy(buf, fence, size);
	return (ssize_t)size;
}

/* Unmapping a window: its pages are no longer the mock's to map. */
int munmap(void *addr, size_t len)
{
	unsigned int i;

	mock_resolve();
	pthread_mutex_lock(&mock_lock);
	for (i = 0; i < MOCK_MAX_FDS; i++)
		if (mock_files[i] && mock_files[i]->win_addr == addr)
			mock_files[i]->win_addr = NULL;
	pthread_mutex_unlock(&mock_lock);
	return real_munmap(addr, len);
}

/*
 * Closing a fake node's file destroys its devices and fence handles and
 * ends its async waits, as the kernel does.
 */
int close(int fd)
{
	unsigned int i;

	pthread_mutex_lock(&mock_lock);
	if (fd >= 0 && fd < MOCK_MAX_FDS && mock_files[fd]) {
		mock_file_free_gpu(mock_files[fd]);
		free(mock_files[fd]);
		mock_files[fd] = NULL;
		for (i = 0; i < MOCK_MAX_ASYNC; i++)
			if (mock_async_used[i] && mock_async[i].fd == fd)
				mock_async_used[i] = false;
		/* Its waiters are gone: MonitoredValues go back up. */
		mock_settle();
	}
	pthread_mutex_unlock(&mock_lock);

	mock_resolve();
	return real_close(fd);
}
