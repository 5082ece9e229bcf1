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
#include <sys/types.h>

#include <drm/nfence_drm.h>

/*
 * IGT defines ARRAY_SIZE in lib/drmtest.h, which only a build against IGT's
 * headers (IGT_INCLUDE: HAVE_IGT_HEADERS, igt.h included first) sees. The
 * default build uses igt_nfence_core.h's declarations of libigt.so.0 and
 * no IGT header: it has ARRAY_SIZE from here only.
 */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define NFENCE_DRIVER_NAME	"nfence"
/* What drmGetVersion() reports: DRIVER_* of the driver's nfence_drv.h */
#define NFENCE_DRIVER_DESC	"WDDM native fence model over a simulated GPU"
#define NFENCE_DRIVER_DATE	"20261121"
#define NFENCE_DRIVER_MAJOR	0
#define NFENCE_DRIVER_MINOR	10
#define NFENCE_DRIVER_PATCHLEVEL	0
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
/* The same, failing the running subtest when the parameter is unreadable */
uint64_t nfence_param_get_u64(const char *name);
bool nfence_param_get_bool(const char *name);
bool nfence_param_u64_at(const char *name, unsigned int adapter,
			 uint64_t *value);
bool nfence_param_bool_at(const char *name, unsigned int adapter,
			  bool *value);
uint64_t nfence_param_get_u64_at(const char *name, unsigned int adapter);
bool nfence_param_get_bool_at(const char *name, unsigned int adapter);

/* DRM_IOCTL_NFENCE_QUERY */
int __nfence_query(int fd, struct drm_nfence_query *q);
uint32_t nfence_query_size(int fd, uint32_t type);
uint32_t nfence_query(int fd, uint32_t type, void *data, uint32_t size);
void *nfence_query_alloc(int fd, uint32_t type, uint32_t *size);
void nfence_query_segment_sizes(int fd, uint32_t id, uint64_t *size,
				uint64_t *cpu_visible_size);
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
	 DRM_NFENCE_FENCE_NO_WAIT | DRM_NFENCE_FENCE_MONITORED)
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
bool nfence_access_faults(volatile uint64_t *p, bool write, uint64_t *value,
			  int *signo);
int __nfence_fence_mmap(int fd, uint64_t offset, int prot, void **ptr);
const volatile uint64_t *
nfence_fence_map(int fd, const struct drm_nfence_fence_mapping *mapping);
void nfence_fence_unmap(const volatile uint64_t *value);

/* Each ioctl fails with EFAULT for a NULL and an unmapped argument. */
void nfence_assert_args_efault(int fd, const unsigned long *requests,
			       unsigned int count);

/* debugfs (/sys/kernel/debug/dri/<card minor>) */
int __nfence_debugfs_dir(int fd);
int nfence_debugfs_dir(int fd);
int nfence_debugfs_dir_files(int fd, const char * const *files,
			     unsigned int count);
int __nfence_debugfs_read(int dir, const char *file, char *buf, size_t size);
int __nfence_debugfs_write(int dir, const char *file, const char *value);
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
	/* where the values are: VRAM (or system memory) */
	bool cv_vram;
	bool mv_vram;
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

/* GPU work: allocations, contexts, hardware queues, submission */
#define NFENCE_SEGMENT_SYSTEM	1
#define NFENCE_SEGMENT_VRAM	2
/* NFENCE_ALLOC_VALID_FLAGS: every DRM_NFENCE_ALLOC_* bit */
#define NFENCE_ALLOC_VALID_FLAGS \
	(DRM_NFENCE_ALLOC_CPU_VISIBLE | DRM_NFENCE_ALLOC_ALLOW_DEMOTE)
/* NFENCE_HWQUEUE_VALID_FLAGS: every DRM_NFENCE_HWQUEUE_* bit */
#define NFENCE_HWQUEUE_VALID_FLAGS \
	(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT | \
	 DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS | \
	 DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION | \
	 DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE)
/* NFENCE_ALWAYS_SIGNALED: CurrentValue of an AlwaysSignaled fence */
#define NFENCE_ALWAYS_SIGNALED	0xffffffffull

/* DRM_IOCTL_NFENCE_ALLOC_CREATE / DESTROY / LOCK */
int __nfence_alloc_create(int fd, struct drm_nfence_alloc_create *create);
uint32_t nfence_alloc_create(int fd, uint32_t device, uint64_t size,
			     uint32_t segment_id, uint32_t flags,
			     uint64_t *gpu_va);
int __nfence_alloc_destroy(int fd, struct drm_nfence_alloc_destroy *destroy);
int __nfence_alloc_destroy_handle(int fd, uint32_t device, uint32_t handle);
void nfence_alloc_destroy(int fd, uint32_t device, uint32_t handle);
int __nfence_alloc_lock(int fd, struct drm_nfence_alloc_lock *lock);
uint64_t nfence_alloc_lock(int fd, uint32_t device, uint32_t handle,
			   uint64_t *size);
void *nfence_alloc_map(int fd, uint32_t device, uint32_t handle,
		       uint64_t *size);

/*
 * An allocation with, when it is CPU-visible, its Lock2 mapping: @cpu is
 * NULL for VRAM the CPU cannot see.
 */
struct nfence_bo {
	int fd;
	uint32_t device;
	uint32_t handle;
	uint32_t segment_id;
	uint64_t gpu_va;
	uint64_t size;
	void *cpu;
};

void nfence_bo_create(int fd, uint32_t device, uint64_t size,
		      uint32_t segment_id, uint32_t flags,
		      struct nfence_bo *bo);
void nfence_bo_unmap(struct nfence_bo *bo);
void nfence_bo_destroy(struct nfence_bo *bo);
/* The 64-bit word at byte @offset of a mapped allocation. */
static inline volatile uint64_t *nfence_bo_u64(const struct nfence_bo *bo,
					       uint64_t offset)
{
	return (volatile uint64_t *)((char *)bo->cpu + offset);
}

/* DRM_IOCTL_NFENCE_CONTEXT_CREATE / DESTROY / CONTROL */
int __nfence_context_create(int fd, struct drm_nfence_context_create *create);
uint32_t nfence_context_create(int fd, uint32_t device, uint32_t engine);
int __nfence_context_destroy(int fd,
			     struct drm_nfence_context_destroy *destroy);
int __nfence_context_destroy_handle(int fd, uint32_t device, uint32_t handle);
void nfence_context_destroy(int fd, uint32_t device, uint32_t handle);
int __nfence_context_control(int fd,
			     struct drm_nfence_context_control *control);
uint32_t nfence_context_control(int fd, uint32_t device, uint32_t context,
				uint32_t op,
				struct drm_nfence_context_control *out);
uint32_t nfence_context_state(int fd, uint32_t device, uint32_t context);
void nfence_context_set_priority(int fd, uint32_t device, uint32_t context,
				 int32_t priority);
int __nfence_device_control(int fd, struct drm_nfence_device_control *control);
uint32_t nfence_device_control(int fd, uint32_t device, uint32_t op,
			       struct drm_nfence_device_control *out);

/* DRM_IOCTL_NFENCE_HWQUEUE_CREATE / DESTROY */
int __nfence_hwqueue_create(int fd, struct drm_nfence_hwqueue_create *create);
uint32_t nfence_hwqueue_create(int fd, uint32_t device, uint32_t context,
			       uint32_t flags, uint32_t *progress_fence,
			       struct drm_nfence_fence_mapping *mapping);
int __nfence_hwqueue_destroy(int fd,
			     struct drm_nfence_hwqueue_destroy *destroy);
int __nfence_hwqueue_destroy_handle(int fd, uint32_t device, uint32_t handle);
void nfence_hwqueue_destroy(int fd, uint32_t device, uint32_t handle);

/* DRM_IOCTL_NFENCE_SUBMIT / SUBMIT_WAIT / SUBMIT_SIGNAL */
int __nfence_submit(int fd, struct drm_nfence_submit *submit);
int __nfence_submit_wait(int fd, struct drm_nfence_submit_sync *sync);
int __nfence_submit_signal(int fd, struct drm_nfence_submit_sync *sync);
int __nfence_submit_wait_one(int fd, uint32_t device, uint32_t hwqueue,
			     uint32_t fence, uint64_t value);
int __nfence_submit_signal_one(int fd, uint32_t device, uint32_t hwqueue,
			       uint32_t fence, uint64_t value);

/* Passing an fd (a shared fence's NT handle) to another process */
int nfence_send_fd(int sock, int sfd);
int nfence_recv_fd(int sock);

/* DRM_IOCTL_NFENCE_DOORBELL_CREATE / CONNECT / DESTROY / NOTIFY */
int __nfence_doorbell_create(int fd, struct drm_nfence_doorbell_create *create);
int __nfence_doorbell_connect(int fd,
			      struct drm_nfence_doorbell_connect *connect);
int __nfence_doorbell_connect_once(int fd,
				   struct drm_nfence_doorbell_connect *connect);
int __nfence_doorbell_destroy(int fd, uint32_t device, uint32_t handle);
int __nfence_doorbell_notify(int fd, struct drm_nfence_doorbell_notify *notify);

/*
 * Command stream encoder: commands are written at @cpu (the CPU view of
 * GPU memory at @gpu_va), @len bytes so far out of @size. Each emitter
 * returns the byte offset of the command it wrote, so that a test can
 * find (and rewrite) it later; nfence_cs_va() is its GPU VA.
 */
struct nfence_cs {
	uint32_t *cpu;
	uint64_t gpu_va;
	uint32_t size;
	uint32_t len;
};

void nfence_cs_init(struct nfence_cs *cs, void *cpu, uint64_t gpu_va,
		    uint32_t size);
uint32_t nfence_cs_raw(struct nfence_cs *cs, uint32_t header, uint32_t word1,
		       const uint64_t *operands, unsigned int count);
uint32_t nfence_cs_nop(struct nfence_cs *cs);
uint32_t nfence_cs_fence_wait(struct nfence_cs *cs, uint64_t va,
			      uint64_t value);
uint32_t nfence_cs_fence_signal(struct nfence_cs *cs, uint64_t cv_va,
				uint64_t mv_va, uint64_t value);
uint32_t nfence_cs_write64(struct nfence_cs *cs, uint64_t va, uint64_t value);
uint32_t nfence_cs_fence_wait_log(struct nfence_cs *cs, uint64_t va,
				  uint64_t value, uint32_t handle, uint32_t op);
uint32_t nfence_cs_fence_signal_log(struct nfence_cs *cs, uint64_t cv_va,
				    uint64_t mv_va, uint64_t value,
				    uint32_t handle, uint32_t op);
uint32_t nfence_cs_timestamp(struct nfence_cs *cs, uint64_t va);
uint32_t nfence_cs_work(struct nfence_cs *cs, uint64_t duration_ns);
/* Signal a fence through its mapping, with the interrupt check. */
uint32_t nfence_cs_signal_fence(struct nfence_cs *cs,
				const struct drm_nfence_fence_mapping *m,
				uint64_t value);
/* Wait for a fence through its mapping. */
uint32_t nfence_cs_wait_fence(struct nfence_cs *cs,
			      const struct drm_nfence_fence_mapping *m,
			      uint64_t value);
static inline uint64_t nfence_cs_va(const struct nfence_cs *cs,
				    uint32_t offset)
{
	return cs->gpu_va + offset;
}
static inline uint32_t *nfence_cs_ptr(const struct nfence_cs *cs,
				      uint32_t offset)
{
	return cs->cpu + offset / 4;
}

/*
 * A context with one hardware queue, a command buffer allocation and the
 * CPU view of the queue's progress fence: what most GPU-work subtests need.
 */
#define NFENCE_QUEUE_CMDS_SIZE	(256u << 10)

struct nfence_queue {
	int fd;
	uint32_t device;
	uint32_t engine;
	uint32_t context;
	bool own_context;
	uint32_t handle;
	uint32_t flags;
	uint32_t progress_fence;
	struct drm_nfence_fence_mapping progress_mapping;
	const volatile uint64_t *progress;
	uint64_t submitted;
	struct nfence_bo cmds;
	uint32_t head;
	/* its native fence log buffers (0 without native fences) */
	uint64_t wait_log_gpu_va;
	uint64_t signal_log_gpu_va;
	uint32_t log_entries;
};

/* tracefs and nfence's trace events */
const char *nfence_tracefs(void);
void nfence_trace_write(const char *dir, const char *file, const char *what);
char *nfence_trace_read(const char *dir);
void nfence_trace_events(const char *dir, const char *event, bool on);

int __nfence_log_read(int fd, struct drm_nfence_log_read *read);
int __nfence_logging_level(int fd, struct drm_nfence_logging_level *level);
uint32_t nfence_logging_level(int fd, uint32_t level, uint32_t flags);

void nfence_queue_create(struct nfence_queue *q, int fd, uint32_t device,
			 uint32_t engine, uint32_t flags);
void nfence_queue_create_on(struct nfence_queue *q, int fd, uint32_t device,
			    uint32_t context, uint32_t flags);
void nfence_queue_destroy(struct nfence_queue *q);
void nfence_queue_forget(struct nfence_queue *q);
void nfence_queue_begin(struct nfence_queue *q, struct nfence_cs *cs);
int __nfence_queue_submit(struct nfence_queue *q, const struct nfence_cs *cs);
uint64_t nfence_queue_submit(struct nfence_queue *q,
			     const struct nfence_cs *cs);
int __nfence_queue_submit_wait(struct nfence_queue *q, uint32_t fence,
			       uint64_t value);
int __nfence_queue_submit_signal(struct nfence_queue *q, uint32_t fence,
				 uint64_t value);
int nfence_queue_wait(struct nfence_queue *q, uint64_t value,
		      unsigned int timeout_ms);
void nfence_queue_sync(struct nfence_queue *q);
bool nfence_queue_poll(const struct nfence_queue *q, uint64_t value,
		       unsigned int timeout_ms);
uint32_t nfence_queue_state(const struct nfence_queue *q,
			    struct drm_nfence_context_control *out);

/*
 * Whether a handle names a live object of that kind (probes that leave
 * nothing behind); for building "foreign" handles that name nothing.
 */
bool nfence_device_exists(int fd, uint32_t device);
bool nfence_alloc_exists(int fd, uint32_t device, uint32_t handle);
bool nfence_context_exists(int fd, uint32_t device, uint32_t handle);
bool nfence_fence_exists(int fd, uint32_t device, uint32_t handle);

/*
 * Invalid handles, each in a single way: every ioctl that takes a handle
 * has one subtest per way, with everything else valid.
 */
enum nfence_bad {
	NFENCE_BAD_ZERO,	/* 0, never a handle */
	NFENCE_BAD_UNKNOWN,	/* never handed out */
	NFENCE_BAD_DESTROYED,	/* was valid, destroyed */
	NFENCE_BAD_OTHER_DEVICE,/* of another device of the same file */
	NFENCE_BAD_OTHER_FD,	/* of another open file (names nothing here) */
	NFENCE_BAD_WRONG_KIND,	/* a live handle of another kind */
	NFENCE_BAD_COUNT,
};

enum nfence_kind {
	NFENCE_KIND_ALLOC,
	NFENCE_KIND_CONTEXT,
	NFENCE_KIND_HWQUEUE,
	NFENCE_KIND_FENCE,
};

/*
 * The file under test with a fresh device, a second device of the same
 * file and a second open file of the same adapter with a device.
 */
struct nfence_env {
	int fd;
	uint32_t dev;
	uint32_t dev2;
	int fd2;
	uint32_t fd2_dev;
};

const char *nfence_bad_name(enum nfence_bad bad);
void nfence_env_init(struct nfence_env *env, int fd);
void nfence_env_fini(struct nfence_env *env);
uint32_t nfence_make(int fd, uint32_t device, enum nfence_kind kind);
void nfence_unmake(int fd, uint32_t device, enum nfence_kind kind,
		   uint32_t handle);
uint32_t nfence_bad_device(const struct nfence_env *env, enum nfence_bad bad);
uint32_t nfence_bad_handle(const struct nfence_env *env, enum nfence_kind kind,
			   enum nfence_bad bad, const uint32_t *live,
			   int nlive);

/* debugfs nfence_device_error: put @device of this process in error */
int __nfence_device_error(int fd, uint32_t device);
void nfence_device_error(int fd, uint32_t device);

/* Module parameter tdr_timeout_ms; false if it cannot be read. */
bool nfence_tdr_timeout_ms(uint64_t *ms);

/* debugfs nfence_interrupts */
struct nfence_interrupts {
	uint64_t signals;
	uint64_t interrupts;
	uint64_t suppressed;
	/* monitored fence signaled interrupts (WDDM 2.x progress fences) */
	uint64_t monitored;
	uint64_t woken;
	uint64_t spurious;
	/* values a 32-bit GPU half stored that the driver completed */
	uint64_t carries;
	/* interrupts without a payload: every fence scanned */
	uint64_t scans;
	/* optimized interrupts naming a queue, and naming none (engine) */
	uint64_t queue_irqs;
	uint64_t engine_irqs;
	/* signal log entries they read; logs they found overrun */
	uint64_t log_entries;
	uint64_t overruns;
	/*
	 * peer signals: fence ids written to other GPUs' peer doorbells,
	 * ids found in this GPU's own, and looks that found it overflowed
	 */
	uint64_t peer_rings;
	uint64_t peer_taken;
	uint64_t peer_overflows;
};

void nfence_debugfs_interrupts(int dir, struct nfence_interrupts *irq);

/* debugfs nfence_segments: "used" of segment @id */
int __nfence_debugfs_segment_used(int dir, uint32_t id, uint64_t *used);

/* One line of debugfs nfence_queues. */
struct nfence_debugfs_queue {
	uint64_t id;
	int64_t pid;
	uint32_t device;
	uint32_t context;
	uint32_t engine;
	char state[32];
	uint64_t pending;
	uint64_t progress;
};

typedef bool (*nfence_debugfs_queue_fn)(const struct nfence_debugfs_queue *q,
					void *data);
int __nfence_debugfs_queues(int dir, nfence_debugfs_queue_fn fn, void *data);
int nfence_debugfs_count_queues(int dir, int64_t pid);
int __nfence_debugfs_queue(int dir, int64_t pid, uint32_t device,
			   uint32_t context, struct nfence_debugfs_queue *out);
int nfence_debugfs_queue_wait_state(int dir, int64_t pid, uint32_t device,
				    uint32_t context, const char *state,
				    unsigned int timeout_ms,
				    struct nfence_debugfs_queue *out);
int nfence_debugfs_queues_wait_gone(int dir, int64_t pid,
				    unsigned int timeout_ms);
int nfence_debugfs_queue_wait_pending(int dir, int64_t pid, uint32_t device,
				      uint32_t context, uint64_t pending,
				      unsigned int timeout_ms);
int nfence_waitpid_ms(pid_t pid, unsigned int timeout_ms);

/* misc */
uint64_t nfence_monotonic_ns(void);
void *nfence_readonly_page(size_t *size);
void nfence_watchdog(unsigned int seconds);
int nfence_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);
int nfence_thread_join(pthread_t thread, unsigned int timeout_ms);
void nfence_wait_in_ioctl(pid_t pid, pid_t tid, unsigned int timeout_ms);

/* A CPU waiter: one FENCE_WAIT on a thread of its own. */
struct nfence_cpu_waiter {
	pthread_t thread;
	int fd;
	uint32_t device;
	uint32_t handle;
	uint64_t value;
	int64_t deadline;
	int tid;
	int ret;		/* 1 while waiting */
	uint64_t done_ns;	/* CLOCK_MONOTONIC when it returned */
};

void nfence_cpu_waiter_start(struct nfence_cpu_waiter *w, int fd,
			     uint32_t device, uint32_t handle, uint64_t value,
			     int64_t deadline);
int nfence_cpu_waiter_join(struct nfence_cpu_waiter *w,
			   unsigned int timeout_ms);
int nfence_sysfs_write(const char *path, const char *value);
pid_t nfence_fork_child(void (*child)(int sock), int *sock);
int nfence_sysfs_read(const char *path, char *buf, size_t size);

/*
 * Kernel memory charged to a memory cgroup: a child in a cgroup of its own
 * runs @setup, then @charge between two readings of memory.current.
 * Exit codes of the child the helper itself uses (theirs are 1..99).
 */
#define NFENCE_CGROUP_EXIT_JOIN	100	/* could not join the cgroup */
#define NFENCE_CGROUP_EXIT_READ	101	/* could not read memory.current */
#define NFENCE_CGROUP_EXIT_SEND	102	/* could not send the growth */
#define NFENCE_CGROUP_EXIT_PIN	103	/* could not pin itself to a CPU */
int64_t nfence_cgroup_charge(int (*setup)(void *data),
			     int (*charge)(void *data), void *data);
int64_t nfence_cgroup_lag(void);
void nfence_assert_charged(int64_t grown, uint64_t count, uint64_t each,
			   const char *what);

int nfence_drm_open_driver(const char *prefix, int first, const char *driver,
			   bool (*accept)(int fd));
uint32_t nfence_syncobj_import(int from, uint32_t handle, int to);
int nfence_syncobj_point_sync_file(int dfd, uint32_t syncobj, uint64_t point);
int nfence_sync_file_bridge_status(int sf);

/* vgem: another driver's dma_fences, signaled when a test says */
struct nfence_vgem_fence {
	uint32_t bo;		/* vgem buffer handle */
	uint32_t fence;		/* vgem fence id */
	int dmabuf;		/* the buffer as a dma-buf */
};

int nfence_vgem_open(void);
void nfence_vgem_fence_create(int vgem, struct nfence_vgem_fence *v);
int nfence_vgem_fence_sync_file(const struct nfence_vgem_fence *v);
uint32_t nfence_vgem_fence_syncobj(int dfd, const struct nfence_vgem_fence *v,
				   uint64_t point);
void nfence_vgem_fence_signal(int vgem, const struct nfence_vgem_fence *v);
void nfence_vgem_fence_destroy(int vgem, struct nfence_vgem_fence *v);

#endif /* NFENCE_IGT_H */
