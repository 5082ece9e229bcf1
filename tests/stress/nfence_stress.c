// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence_stress: random ioctls against the nfence adapters from several
 * processes and threads at once, while a supervisor kills worker processes
 * at random and forks replacements (issue 9, item 4).
 *
 * Each worker thread keeps the objects it made (devices, fences,
 * allocations, contexts, hardware queues with command buffers, CPU
 * mappings, fence fds) and drives every nfence ioctl with arguments drawn
 * from its PRNG: mostly valid ones on its live objects, so that there is
 * real work in flight (GPU and CPU waits, pending submissions, faulted
 * contexts), and among them invalid ones of every kind the uapi names:
 * handles that are 0, random, stale (destroyed), of another device, of
 * another file or adapter, or of another kind; unknown flag bits; non-zero
 * pad and reserved fields; bad pointers (NULL, a PROT_NONE page, kernel and
 * non-canonical addresses, a read-only page for outputs); huge sizes and
 * counts; command buffers with garbage, or rewritten under the GPU, so that
 * contexts fault. Around that: fence fds passed between worker processes
 * over unix sockets and inherited by short-lived fork children, fence and
 * allocation CPU mappings made, read, written and unmapped (also after
 * their object or file is gone), and render nodes closed and reopened.
 *
 * Every ioctl and its result (per errno) is counted in memory shared with
 * the supervisor, so that the counts of a killed worker are not lost. At
 * the end the supervisor prints them and fails the run (exit 1) for any
 * errno that the uapi header's kernel-doc does not document for that ioctl
 * (see nfs_io[]: a strict check), a worker or fork child that died of
 * anything but SIGKILL, a failed mapping check, or an ioctl never issued.
 *
 * Determinism: every worker thread's choices come from a splitmix64 stream
 * seeded from (seed, worker slot, generation, thread), and the supervisor's
 * kill times and victims from one seeded from the seed alone; rand() and
 * the clock never choose anything. What the threads' interleaving decides
 * (an ioctl's result, and so the choices that follow it) and when a kill
 * lands in a worker's sequence cannot be replayed: a seed replays the same
 * choices given the same results, not the same run.
 *
 * Nothing may hang the run: every blocking CPU wait has an absolute
 * CLOCK_MONOTONIC deadline at most 50 ms ahead (or is asynchronous, with an
 * eventfd), every ioctl that can block (waits, and submissions, which wait
 * for queue room) runs under a per-thread timer whose signal interrupts it,
 * valid WORK commands last at most 3 ms (garbage read as one, under
 * 4.2 ms), queues are retired after a bounded number of submissions,
 * fork children are killed after two seconds, and the supervisor SIGKILLs
 * every worker at the deadline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <xf86drm.h>

#include <drm/nfence_drm.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_MSEC		1000000ull
#define NSEC_PER_SEC		1000000000ull

#define NFS_NAME		"nfence_stress"
#define NFS_DRIVER_NAME		"nfence"
#define NFS_DRI_DIR		"/dev/dri"

/* Limits of the command line. */
#define NFS_MAX_ADAPTERS	8
#define NFS_MAX_PROCS		64
#define NFS_MAX_THREADS		64
#define NFS_MAX_DURATION	(7 * 24 * 3600)

/* Worker processes the supervisor tracks: live, and killed not yet reaped. */
#define NFS_MAX_PROC_RECORDS	(4 * NFS_MAX_PROCS)
/* Kill a random worker every 100..1500 ms. */
#define NFS_KILL_MIN_MS		100
#define NFS_KILL_MAX_MS		1500
/* How long the supervisor waits for the killed workers at the end. */
#define NFS_REAP_GRACE_MS	10000

/* errno values counted one by one; anything above shares the last slot. */
#define NFS_ERRNO_SLOTS		600

/* The farthest deadline of a blocking wait (a fork child's: 20 ms). */
#define NFS_WAIT_MAX_NS		(50 * NSEC_PER_MSEC)
#define NFS_CHILD_WAIT_MAX_NS	(20 * NSEC_PER_MSEC)
/* The guard timer: first shot, then period, interrupting a blocked ioctl. */
#define NFS_GUARD_FIRST_NS	(250 * NSEC_PER_MSEC)
#define NFS_GUARD_PERIOD_NS	(50 * NSEC_PER_MSEC)
/* A fork child is SIGKILLed after this long. */
#define NFS_CHILD_MAX_MS	2000

/* Longest WORK command a worker writes: 3 ms (the uapi allows 60 s). */
#define NFS_WORK_MAX_NS		(3 * NSEC_PER_MSEC)
/*
 * Every 64-bit word of garbage written into a command buffer is below
 * this: read as a WORK duration it is under 4.2 ms, read as a GPU VA it is
 * below 4 GiB, where nothing is ever mapped (the driver's GPU VA space
 * starts at 4 GiB), so garbage faults or does little, and never occupies
 * an engine for long.
 */
#define NFS_GARBAGE_LIMIT	(1ull << 22)

#define NFS_FENCE_PAGE		4096u
#define NFS_PAGE		4096ull
#define NFS_CMDBUF_SIZE		(64u << 10)
/* Bytes one submission takes in its queue's buffer, at most. */
#define NFS_SUBMIT_MAX_BYTES	512u
/* A queue is destroyed after this many queued operations, at most. */
#define NFS_QUEUE_MAX_OPS	120u
/* Async waits one file may be given before the thread stops asking. */
#define NFS_ASYNC_PER_FILE	1000u

/* What one thread keeps, at most. */
#define NFS_DEVS		6
#define NFS_FENCES		48
#define NFS_ALLOCS		24
#define NFS_CTXS		8
#define NFS_QUEUES		6
#define NFS_MAPS		24
#define NFS_WINDOW_PAGES	16	/* at most, a CPU window's */
#define NFS_FDS			8
#define NFS_STALE		16
#define NFS_ARRAY		128	/* handles/values of one wait or signal */
#define NFS_QUERY_BUF		4096

/* An fd number that is never open (above any RLIMIT_NOFILE). */
#define NFS_CLOSED_FD		0x3fffffff

#define NFS_FENCE_FLAGS \
	(DRM_NFENCE_FENCE_SHARED | DRM_NFENCE_FENCE_NT_SECURITY_SHARING | \
	 DRM_NFENCE_FENCE_CROSS_ADAPTER | DRM_NFENCE_FENCE_NO_SIGNAL | \
	 DRM_NFENCE_FENCE_NO_WAIT | DRM_NFENCE_FENCE_MONITORED)
#define NFS_FENCE_SHAREABLE \
	(DRM_NFENCE_FENCE_SHARED | DRM_NFENCE_FENCE_NT_SECURITY_SHARING)
#define NFS_HWQUEUE_FLAGS \
	(DRM_NFENCE_HWQUEUE_DISABLE_GPU_TIMEOUT | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_SIGNAL | \
	 DRM_NFENCE_HWQUEUE_NO_BROADCAST_WAIT | \
	 DRM_NFENCE_HWQUEUE_NO_KMD_ACCESS | \
	 DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION | \
	 DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE)

/*
 * The ioctls, in uapi order, with the errnos the uapi header documents
 * for each. This is a strict check: an errno is documented for an ioctl
 * only if the header's kernel-doc names it for that ioctl (its own comment,
 * the DOC section that describes it, or the conventions every ioctl shares:
 * -EINVAL for flags, pad and reserved fields, -ENOENT for handles, -EFAULT
 * for pointers, the argument itself included). -ERESTARTSYS, documented for
 * the calls that block, reaches user space as EINTR here, since the guard
 * timer's handler is installed without SA_RESTART. Errors that uapi.rst
 * lists for every ioctl but the header does not (-ENOMEM, -ENODEV) and
 * anything else (-EPERM, -ENOTTY, a kernel-internal value such as
 * ENOTSUPP) are "unexpected" and fail the run.
 */
enum nfs_io_type {
	NFS_IO_QUERY,
	NFS_IO_DEVICE_CREATE,
	NFS_IO_DEVICE_DESTROY,
	NFS_IO_FENCE_CREATE,
	NFS_IO_FENCE_DESTROY,
	NFS_IO_FENCE_SHARE,
	NFS_IO_FENCE_OPEN,
	NFS_IO_FENCE_WAIT,
	NFS_IO_FENCE_SIGNAL,
	NFS_IO_ALLOC_CREATE,
	NFS_IO_ALLOC_DESTROY,
	NFS_IO_ALLOC_LOCK,
	NFS_IO_CONTEXT_CREATE,
	NFS_IO_CONTEXT_DESTROY,
	NFS_IO_CONTEXT_CONTROL,
	NFS_IO_HWQUEUE_CREATE,
	NFS_IO_HWQUEUE_DESTROY,
	NFS_IO_SUBMIT,
	NFS_IO_SUBMIT_WAIT,
	NFS_IO_SUBMIT_SIGNAL,
	NFS_IO_FENCE_WINDOW,
	NFS_IO_COUNT
};

struct nfs_io {
	const char *name;
	unsigned long request;
	/* It may block: it runs under the guard timer. */
	bool blocks;
	/* The errnos the header documents for it, 0-terminated. */
	int documented[8];
};

static const struct nfs_io nfs_io[NFS_IO_COUNT] = {
	/* type/size/flags/pad/reserved -EINVAL; an unwritable @data -EFAULT */
	[NFS_IO_QUERY] = {
		"QUERY", DRM_IOCTL_NFENCE_QUERY, false,
		{ EFAULT, EINVAL },
	},
	[NFS_IO_DEVICE_CREATE] = {
		"DEVICE_CREATE", DRM_IOCTL_NFENCE_DEVICE_CREATE, false,
		{ EFAULT, EINVAL, ENOSPC },
	},
	[NFS_IO_DEVICE_DESTROY] = {
		"DEVICE_DESTROY", DRM_IOCTL_NFENCE_DEVICE_DESTROY, false,
		{ EFAULT, EINVAL, ENOENT },
	},
	[NFS_IO_FENCE_CREATE] = {
		"FENCE_CREATE", DRM_IOCTL_NFENCE_FENCE_CREATE, false,
		{ EFAULT, EINVAL, ENOENT, ENOSPC, EOPNOTSUPP },
	},
	/* -EBUSY: a queue's progress fence (DOC: contexts and hardware queues) */
	[NFS_IO_FENCE_DESTROY] = {
		"FENCE_DESTROY", DRM_IOCTL_NFENCE_FENCE_DESTROY, false,
		{ EFAULT, EINVAL, ENOENT, EBUSY },
	},
	[NFS_IO_FENCE_SHARE] = {
		"FENCE_SHARE", DRM_IOCTL_NFENCE_FENCE_SHARE, false,
		{ EFAULT, EINVAL, ENOENT },
	},
	[NFS_IO_FENCE_OPEN] = {
		"FENCE_OPEN", DRM_IOCTL_NFENCE_FENCE_OPEN, false,
		{ EFAULT, EINVAL, ENOENT, EBADF },
	},
	[NFS_IO_FENCE_WAIT] = {
		"FENCE_WAIT", DRM_IOCTL_NFENCE_FENCE_WAIT, true,
		{ EFAULT, EINVAL, ENOENT, EACCES, ETIME, EINTR, EBADF, ENOSPC },
	},
	[NFS_IO_FENCE_SIGNAL] = {
		"FENCE_SIGNAL", DRM_IOCTL_NFENCE_FENCE_SIGNAL, false,
		{ EFAULT, EINVAL, ENOENT, EACCES },
	},
	[NFS_IO_ALLOC_CREATE] = {
		"ALLOC_CREATE", DRM_IOCTL_NFENCE_ALLOC_CREATE, false,
		{ EFAULT, EINVAL, ENOENT, ENOSPC },
	},
	/* No flags and no padding: no -EINVAL. */
	[NFS_IO_ALLOC_DESTROY] = {
		"ALLOC_DESTROY", DRM_IOCTL_NFENCE_ALLOC_DESTROY, false,
		{ EFAULT, ENOENT },
	},
	[NFS_IO_ALLOC_LOCK] = {
		"ALLOC_LOCK", DRM_IOCTL_NFENCE_ALLOC_LOCK, false,
		{ EFAULT, EINVAL, ENOENT },
	},
	[NFS_IO_CONTEXT_CREATE] = {
		"CONTEXT_CREATE", DRM_IOCTL_NFENCE_CONTEXT_CREATE, false,
		{ EFAULT, EINVAL, ENOENT, ENOSPC },
	},
	[NFS_IO_CONTEXT_DESTROY] = {
		"CONTEXT_DESTROY", DRM_IOCTL_NFENCE_CONTEXT_DESTROY, false,
		{ EFAULT, ENOENT },
	},
	[NFS_IO_CONTEXT_CONTROL] = {
		"CONTEXT_CONTROL", DRM_IOCTL_NFENCE_CONTEXT_CONTROL, false,
		{ EFAULT, EINVAL, ENOENT },
	},
	[NFS_IO_HWQUEUE_CREATE] = {
		"HWQUEUE_CREATE", DRM_IOCTL_NFENCE_HWQUEUE_CREATE, false,
		{ EFAULT, EINVAL, ENOENT, ENOSPC, EOPNOTSUPP, EIO },
	},
	[NFS_IO_HWQUEUE_DESTROY] = {
		"HWQUEUE_DESTROY", DRM_IOCTL_NFENCE_HWQUEUE_DESTROY, false,
		{ EFAULT, ENOENT },
	},
	[NFS_IO_SUBMIT] = {
		"SUBMIT", DRM_IOCTL_NFENCE_SUBMIT, true,
		{ EFAULT, EINVAL, ENOENT, EIO, EINTR },
	},
	[NFS_IO_SUBMIT_WAIT] = {
		"SUBMIT_WAIT", DRM_IOCTL_NFENCE_SUBMIT_WAIT, true,
		{ EFAULT, EINVAL, ENOENT, EACCES, EIO, EINTR },
	},
	[NFS_IO_SUBMIT_SIGNAL] = {
		"SUBMIT_SIGNAL", DRM_IOCTL_NFENCE_SUBMIT_SIGNAL, true,
		{ EFAULT, EINVAL, ENOENT, EACCES, EIO, EINTR },
	},
	/* -EEXIST: the file has its window; -ENOSPC: the adapter's budget */
	[NFS_IO_FENCE_WINDOW] = {
		"FENCE_WINDOW", DRM_IOCTL_NFENCE_FENCE_WINDOW, false,
		{ EFAULT, EINVAL, EEXIST, ENOSPC },
	},
};

/* Counters besides the ioctls'. */
enum nfs_counter {
	NFS_CNT_MMAP,		/* mmap() calls */
	NFS_CNT_MMAP_FAILED,	/* of which failed (most on purpose) */
	NFS_CNT_MUNMAP,
	NFS_CNT_MAP_READ,	/* values read through a mapping */
	NFS_CNT_MAP_WRITE,	/* values written through a mapping */
	NFS_CNT_ANOMALY,	/* a check other than an errno's failed */
	NFS_CNT_ANOMALY_PRINTED,
	NFS_CNT_ANOMALY_SKIPPED,	/* not checked: a shared file replaced */
	NFS_CNT_FD_SENT,	/* fence fds sent to a worker's mailbox */
	NFS_CNT_FD_RECEIVED,
	NFS_CNT_FD_DROPPED,	/* the mailbox was full */
	NFS_CNT_FORK,		/* fork children run */
	NFS_CNT_FORK_KILLED,	/* of which SIGKILLed for taking too long */
	NFS_CNT_FORK_BAD,	/* of which died of something else */
	NFS_CNT_REOPEN,		/* a thread's own render node reopened */
	NFS_CNT_REOPEN_SHARED,	/* a process's shared render node replaced */
	NFS_CNT_CS_REWRITE,	/* a queued command buffer rewritten */
	NFS_CNT_WINDOW_READ,	/* pages of a CPU window read */
	NFS_CNT_WINDOW_BUS,	/* of which showed nothing (SIGBUS) */
	NFS_CNT_COUNT
};

/*
 * What the workers count, in a MAP_SHARED mapping made before the first
 * fork; only updated with atomic increments.
 */
struct nfs_stats {
	uint64_t issued[NFS_IO_COUNT];
	uint64_t result[NFS_IO_COUNT][NFS_ERRNO_SLOTS + 1];
	/* The first unexpected result of each kind has been printed. */
	uint32_t reported[NFS_IO_COUNT][NFS_ERRNO_SLOTS + 1];
	uint64_t count[NFS_CNT_COUNT];
	/* The first failed check, for the summary (set once). */
	uint32_t first_anomaly_taken;
	char first_anomaly[600];
};

/* The run, set up by the supervisor before it forks; read-only after. */
static struct nfs_config {
	int procs;
	int threads;
	int duration;
	int adapters;
	uint64_t seed;
	/* The render node of adapter index i (the i-th lowest index). */
	char node[NFS_MAX_ADAPTERS][64];
	/*
	 * One SOCK_DGRAM socketpair per worker slot: [1] is where any worker
	 * sends fence fds for that slot, [0] where the slot's worker reads
	 * them. The supervisor keeps both ends open, so that fds in flight
	 * outlive killed workers and reach the replacements.
	 */
	int mailbox[NFS_MAX_PROCS][2];
	pid_t supervisor;
} cfg;

static struct nfs_stats *stats;
/* A page that cannot be read or written, and one that can only be read. */
static void *nfs_none_page;
static void *nfs_ro_page;

/* A fence fd in a mailbox message. */
struct nfs_mail {
	uint32_t magic;
	int32_t adapter;
	uint32_t cross;
	uint32_t from;
};

#define NFS_MAIL_MAGIC	0x6e667364u

/* PRNG: splitmix64. */

struct nfs_rng {
	uint64_t s;
};

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A seed for stream @b of seed @a. */
static uint64_t nfs_mix(uint64_t a, uint64_t b)
{
	uint64_t s = a ^ (b * 0xd1342543de82ef95ull);

	splitmix64(&s);
	return splitmix64(&s);
}

static uint64_t rnd64(struct nfs_rng *r)
{
	return splitmix64(&r->s);
}

static uint32_t rnd32(struct nfs_rng *r)
{
	return rnd64(r) >> 32;
}

/* 0 .. n - 1 (the modulo bias does not matter here). */
static uint64_t below(struct nfs_rng *r, uint64_t n)
{
	return n ? rnd64(r) % n : 0;
}

static bool chance(struct nfs_rng *r, unsigned int percent)
{
	return below(r, 100) < percent;
}

static uint64_t nfs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void nfs_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	nanosleep(&ts, NULL);
}

static void nfs_add(enum nfs_counter c, uint64_t n)
{
	__atomic_fetch_add(&stats->count[c], n, __ATOMIC_RELAXED);
}

static uint64_t nfs_get(enum nfs_counter c)
{
	return __atomic_load_n(&stats->count[c], __ATOMIC_RELAXED);
}

/* The name of an errno, kernel-internal ones included; NULL if none. */
static const char *nfs_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} internal[] = {
		{ 512, "ERESTARTSYS" }, { 513, "ERESTARTNOINTR" },
		{ 514, "ERESTARTNOHAND" }, { 515, "ENOIOCTLCMD" },
		{ 516, "ERESTART_RESTARTBLOCK" }, { 517, "EPROBE_DEFER" },
		{ 518, "EOPENSTALE" }, { 519, "ENOPARAM" },
		{ 521, "EBADHANDLE" }, { 522, "ENOTSYNC" },
		{ 523, "EBADCOOKIE" }, { 524, "ENOTSUPP" },
		{ 525, "ETOOSMALL" }, { 526, "ESERVERFAULT" },
		{ 527, "EBADTYPE" }, { 528, "EJUKEBOX" },
		{ 529, "EIOCBQUEUED" }, { 530, "ERECALLCONFLICT" },
	};
	const char *name;
	size_t i;

	if (!err)
		return "ok";
	if (err < 512) {
		name = strerrorname_np(err);
		if (name)
			return name;
	}
	for (i = 0; i < ARRAY_SIZE(internal); i++)
		if (internal[i].err == err)
			return internal[i].name;
	return NULL;
}

static bool nfs_documented(enum nfs_io_type io, int err)
{
	const int *doc = nfs_io[io].documented;

	if (!err)
		return true;
	for (; *doc; doc++)
		if (*doc == err)
			return true;
	return false;
}

static void __attribute__((format(printf, 1, 2))) nfs_msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, NFS_NAME ": %s\n", buf);
}

/* Worker side: one process, several threads. */

/* What a worker knows of an adapter. */
struct nfs_adapter_info {
	uint32_t num_engines;
	uint32_t flags;		/* DRM_NFENCE_ADAPTER_* */
};

static struct nfs_worker {
	int slot;
	int gen;
	uint64_t seed;
	/* The process's shared render fds, replaced with dup2() now and then. */
	int shared_fd[NFS_MAX_ADAPTERS];
	/* Bumped when shared_fd[a] is replaced (atomic). */
	unsigned int shared_gen[NFS_MAX_ADAPTERS];
	/* Async waits given to the file behind shared_fd[a] (atomic). */
	unsigned int shared_async[NFS_MAX_ADAPTERS];
	struct nfs_adapter_info info[NFS_MAX_ADAPTERS];
} wk;

enum nfs_kind {
	NFS_K_DEV,
	NFS_K_FENCE,
	NFS_K_ALLOC,
	NFS_K_CTX,
	NFS_K_QUEUE,
	NFS_K_COUNT
};

/* One open render node as a thread sees it ("fx" indexes these). */
struct nfs_file {
	int fd;			/* -1: closed, reopened later */
	int adapter;
	bool shared;		/* the process's; the others are the thread's */
	unsigned int gen;	/* shared: wk.shared_gen[] last seen */
	unsigned int async;	/* own: async waits given to it */
	/* own: its CPU window (FENCE_WINDOW), no pages without one */
	uint64_t win_off;
	uint32_t win_pages;
};

struct nfs_dev {
	int fx;
	uint32_t handle;
};

struct nfs_fence {
	int fx;
	uint32_t dev;
	uint32_t handle;
	uint32_t flags;		/* DRM_NFENCE_FENCE_* it was made or opened with */
	bool progress;		/* a queue's progress fence */
	uint64_t known;		/* a value it has reached */
	struct drm_nfence_fence_mapping m;
};

struct nfs_alloc {
	int fx;
	uint32_t dev;
	uint32_t handle;
	uint64_t gpu_va;
	uint64_t size;
	bool cmd;		/* a live queue's command buffer */
};

struct nfs_ctx {
	int fx;
	uint32_t dev;
	uint32_t handle;
};

struct nfs_queue {
	int fx;
	uint32_t dev;
	uint32_t ctx;
	uint32_t handle;
	uint32_t progress;	/* progress fence handle */
	uint32_t cmd;		/* command buffer allocation, 0 once destroyed */
	uint64_t cmd_va;
	uint8_t *cmd_cpu;	/* its CPU mapping, NULL if none */
	uint64_t cmd_len;
	uint32_t cursor;	/* where the next submission's commands go */
	uint32_t last_start;	/* the last queued submission's commands */
	uint32_t last_len;
	uint64_t value;		/* the last queued progress_fence_value */
	uint32_t ops;		/* operations queued */
	uint32_t tries;		/* operations tried */
	uint32_t max_ops;	/* retired at this many (tries: twice that) */
};

/* A handle that was destroyed, or whose file was closed. */
struct nfs_stale {
	int fx;
	uint32_t dev;
	uint32_t handle;
	uint64_t va;		/* allocations: their GPU VA */
};

struct nfs_map {
	uint8_t *ptr;
	size_t len;
	size_t value_off;	/* fences: where CurrentValue is */
	bool fence;
	bool writable;
	bool window;		/* a CPU window: its pages come and go */
	int fx;			/* window: its file, and its offset there */
	uint64_t win_off;
};

struct nfs_held_fd {
	int fd;
	int adapter;
	bool cross;
};

struct nfs_thread {
	int index;
	struct nfs_rng rng;
	timer_t timer;
	bool have_timer;
	bool child;		/* a fork child's copy */
	uint64_t max_wait_ns;

	struct nfs_file file[2 * NFS_MAX_ADAPTERS];
	int nfile;

	struct nfs_dev dev[NFS_DEVS];
	int ndev;
	struct nfs_fence fence[NFS_FENCES];
	int nfence;
	struct nfs_alloc alloc[NFS_ALLOCS];
	int nalloc;
	struct nfs_ctx ctx[NFS_CTXS];
	int nctx;
	struct nfs_queue queue[NFS_QUEUES];
	int nqueue;
	struct nfs_stale stale[NFS_K_COUNT][NFS_STALE];
	unsigned int nstale[NFS_K_COUNT];
	struct nfs_map map[NFS_MAPS];
	int nmap;
	struct nfs_held_fd held[NFS_FDS];
	int nheld;
	int efd[2];

	uint32_t handles[NFS_ARRAY];
	uint64_t values[NFS_ARRAY];
	int which[NFS_ARRAY];
	uint64_t qbuf[NFS_QUERY_BUF / 8];
};

/* Which thread a message comes from. */
static void __attribute__((format(printf, 2, 3)))
nfs_thread_msg(const struct nfs_thread *th, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (th->child)
		return;		/* stdio is not fork-safe in a threaded parent */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, NFS_NAME ": worker %d.%d thread %d: %s\n", wk.slot,
		wk.gen, th->index, buf);
}

/*
 * Whether file @fx is still the one this thread's records of it are about:
 * always for the thread's own files; for a shared one, only if no other
 * thread has begun replacing it since nfs_sync_shared(). An ioctl on a
 * replaced file reaches a new file whose handles and offsets name other
 * objects (its handles start at 1 again), so a result check made after it
 * could fail for the test's sake, not the driver's: such a check is not
 * made (counted as NFS_CNT_ANOMALY_SKIPPED).
 */
static bool nfs_file_settled(const struct nfs_thread *th, int fx)
{
	const struct nfs_file *f = &th->file[fx];

	if (!f->shared)
		return true;
	return !(f->gen & 1) &&
	       __atomic_load_n(&wk.shared_gen[f->adapter], __ATOMIC_SEQ_CST) ==
	       f->gen;
}

/*
 * A check other than an errno's failed after a call on file @fx: counted,
 * the first few said, and the first kept for the summary; unless the file
 * was replaced under the call (see nfs_file_settled()).
 */
static void __attribute__((format(printf, 3, 4)))
nfs_anomaly(const struct nfs_thread *th, int fx, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!nfs_file_settled(th, fx)) {
		nfs_add(NFS_CNT_ANOMALY_SKIPPED, 1);
		return;
	}
	nfs_add(NFS_CNT_ANOMALY, 1);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&stats->count[NFS_CNT_ANOMALY_PRINTED], 1,
			       __ATOMIC_RELAXED) >= 20)
		return;
	nfs_thread_msg(th, "ANOMALY: %s", buf);
	if (!__atomic_exchange_n(&stats->first_anomaly_taken, 1,
				 __ATOMIC_RELAXED))
		snprintf(stats->first_anomaly, sizeof(stats->first_anomaly),
			 "worker %d.%d thread %d: %s", wk.slot, wk.gen,
			 th->index, buf);
}

static void nfs_guard_handler(int sig)
{
	(void)sig;
}

/* The timer that interrupts this thread's blocked ioctl. */
static void nfs_guard_init(struct nfs_thread *th)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev.sigev_notify_thread_id = gettid();
	th->have_timer = !timer_create(CLOCK_MONOTONIC, &sev, &th->timer);
	if (!th->have_timer)
		nfs_thread_msg(th, "timer_create: %s; blocking ioctls unguarded",
			       strerror(errno));
}

static void nfs_guard_set(struct nfs_thread *th, uint64_t first,
			  uint64_t period)
{
	struct itimerspec its = {
		.it_value = { first / NSEC_PER_SEC, first % NSEC_PER_SEC },
		.it_interval = { period / NSEC_PER_SEC, period % NSEC_PER_SEC },
	};

	timer_settime(th->timer, 0, &its, NULL);
}

/* Print the first unexpected result of each kind, with the argument. */
static void nfs_report(const struct nfs_thread *th, enum nfs_io_type io,
		       int err, const void *arg, bool arg_ok)
{
	size_t size = _IOC_SIZE(nfs_io[io].request), i, len = 0;
	const char *name = nfs_errno_name(err);
	char dump[400] = "(bad pointer)";
	char ename[32];

	if (arg_ok) {
		for (i = 0; i + 4 <= size && len + 12 < sizeof(dump); i += 4) {
			uint32_t w;

			memcpy(&w, (const uint8_t *)arg + i, 4);
			len += snprintf(dump + len, sizeof(dump) - len,
					"%s%08x", i ? " " : "", w);
		}
	}
	if (!name) {
		snprintf(ename, sizeof(ename), "errno %d", err);
		name = ename;
	}
	nfs_thread_msg(th, "%s returned %s, which the uapi does not document "
		       "for it (first of its kind); argument words: %s",
		       nfs_io[io].name, name, dump);
}

static void nfs_count(const struct nfs_thread *th, enum nfs_io_type io,
		      int err, const void *arg, bool arg_ok)
{
	int slot = err >= 0 && err < NFS_ERRNO_SLOTS ? err : NFS_ERRNO_SLOTS;

	__atomic_fetch_add(&stats->result[io][slot], 1, __ATOMIC_RELAXED);
	if (nfs_documented(io, err) || th->child)
		return;
	if (!__atomic_exchange_n(&stats->reported[io][slot], 1,
				 __ATOMIC_RELAXED))
		nfs_report(th, io, err, arg, arg_ok);
}

/*
 * One ioctl, counted; 0 or -errno. Never restarted: EINTR is a result.
 * @arg_ok: @arg points at a whole argument (for the report).
 */
static int nfs_ioctl_arg(struct nfs_thread *th, enum nfs_io_type io, int fd,
			 void *arg, bool arg_ok)
{
	bool guard = th->have_timer && nfs_io[io].blocks;
	int err = 0;

	__atomic_fetch_add(&stats->issued[io], 1, __ATOMIC_RELAXED);
	if (guard)
		nfs_guard_set(th, NFS_GUARD_FIRST_NS, NFS_GUARD_PERIOD_NS);
	if (ioctl(fd, nfs_io[io].request, arg))
		err = errno;
	if (guard)
		nfs_guard_set(th, 0, 0);
	nfs_count(th, io, err, arg, arg_ok);
	return -err;
}

static int nfs_ioctl(struct nfs_thread *th, enum nfs_io_type io, int fd,
		     void *arg)
{
	return nfs_ioctl_arg(th, io, fd, arg, true);
}

/* Argument generators. */

/* @valid's bits at random; with @bad_pct percent, an unknown bit too. */
static uint32_t nfs_flags(struct nfs_thread *th, uint32_t valid,
			  unsigned int bad_pct)
{
	uint32_t flags = rnd32(&th->rng) & valid;

	if (valid != UINT32_MAX && chance(&th->rng, bad_pct)) {
		uint32_t bit;

		do {
			bit = 1u << below(&th->rng, 32);
		} while (bit & valid);
		flags |= bit;
	}
	return flags;
}

/* A pad or reserved field: zero, now and then not. */
static uint32_t nfs_pad(struct nfs_thread *th)
{
	return chance(&th->rng, 2) ? rnd32(&th->rng) | 1 : 0;
}

/* A user pointer the kernel must refuse (-EFAULT). */
static uint64_t nfs_bad_ptr(struct nfs_thread *th, bool output)
{
	switch (below(&th->rng, 5)) {
	case 0:
		return 0;
	case 1:
		return 8;
	case 2:
		return (uintptr_t)nfs_none_page;
	case 3:
		return 0xffff888000000000ull;	/* kernel */
	default:
		/* A read-only page for outputs; non-canonical for inputs. */
		return output ? (uintptr_t)nfs_ro_page : 0x8000000000000000ull;
	}
}

static const struct nfs_adapter_info *nfs_info(const struct nfs_thread *th,
					       int fx)
{
	return &wk.info[th->file[fx].adapter];
}

/* An engine_affinity: mostly 0 (all), else the one physical adapter. */
static uint32_t nfs_affinity(struct nfs_thread *th)
{
	unsigned int r = below(&th->rng, 100);

	if (r < 80)
		return 0;
	if (r < 95)
		return DRM_NFENCE_FENCE_AFFINITY_ALL;
	return rnd32(&th->rng);
}

/* A fence value around @base: reached, just ahead, wrapping, anywhere. */
static uint64_t nfs_wait_value(struct nfs_thread *th, uint64_t base)
{
	unsigned int r = below(&th->rng, 100);

	if (r < 50)
		return base - below(&th->rng, base < 16 ? base + 1 : 16);
	if (r < 80)
		return base + 1 + below(&th->rng, 4);
	if (r < 88)
		return below(&th->rng, 1000);
	if (r < 94)
		return base + (1ull << 32);
	return rnd64(&th->rng);
}

static uint64_t nfs_signal_value(struct nfs_thread *th, uint64_t base)
{
	unsigned int r = below(&th->rng, 100);

	if (r < 70)
		return base + 1 + below(&th->rng, 64);
	if (r < 78)
		return base;
	if (r < 84)
		return base - below(&th->rng, base < 64 ? base + 1 : 64);
	if (r < 92)	/* across a multiple of 2^32 */
		return (base | 0xffffffffull) + 1 - below(&th->rng, 3);
	return rnd64(&th->rng);
}

static uint64_t nfs_initial_value(struct nfs_thread *th)
{
	unsigned int r = below(&th->rng, 100);

	if (r < 60)
		return below(&th->rng, 1000);
	if (r < 75)
		return rnd64(&th->rng);
	if (r < 90)
		return 0xffffffffull - below(&th->rng, 8);
	return 0;
}

/*
 * A wait deadline: absolute CLOCK_MONOTONIC, never more than
 * th->max_wait_ns ahead and never infinite; now and then in the past, 0
 * or negative (a poll).
 */
static int64_t nfs_deadline(struct nfs_thread *th)
{
	int64_t now = (int64_t)nfs_now_ns();
	unsigned int r = below(&th->rng, 100);

	if (r < 45)
		return now + (int64_t)below(&th->rng, th->max_wait_ns + 1);
	if (r < 60)
		return now + (int64_t)below(&th->rng, 2 * NSEC_PER_MSEC);
	if (r < 72)
		return 0;
	if (r < 84)
		return now - (int64_t)below(&th->rng, NSEC_PER_SEC);
	if (r < 92)
		return -1 - (int64_t)below(&th->rng, 1000);
	if (r < 96)
		return INT64_MIN;
	return now;
}

/* Object bookkeeping. */

static int nfs_kind_count(const struct nfs_thread *th, enum nfs_kind kind)
{
	switch (kind) {
	case NFS_K_DEV:
		return th->ndev;
	case NFS_K_FENCE:
		return th->nfence;
	case NFS_K_ALLOC:
		return th->nalloc;
	case NFS_K_CTX:
		return th->nctx;
	case NFS_K_QUEUE:
		return th->nqueue;
	default:
		return 0;
	}
}

static void nfs_kind_get(const struct nfs_thread *th, enum nfs_kind kind,
			 int i, int *fx, uint32_t *handle)
{
	switch (kind) {
	case NFS_K_DEV:
		*fx = th->dev[i].fx;
		*handle = th->dev[i].handle;
		return;
	case NFS_K_FENCE:
		*fx = th->fence[i].fx;
		*handle = th->fence[i].handle;
		return;
	case NFS_K_ALLOC:
		*fx = th->alloc[i].fx;
		*handle = th->alloc[i].handle;
		return;
	case NFS_K_CTX:
		*fx = th->ctx[i].fx;
		*handle = th->ctx[i].handle;
		return;
	default:
		*fx = th->queue[i].fx;
		*handle = th->queue[i].handle;
		return;
	}
}

/* A handle for an object of @kind on file @fx that is wrong somehow. */
static uint32_t nfs_bad_handle(struct nfs_thread *th, enum nfs_kind kind,
			       int fx)
{
	unsigned int n, tries;
	uint32_t handle;
	enum nfs_kind other;
	int ofx;

	switch (below(&th->rng, 7)) {
	case 0:
		return 0;
	case 1:
		return rnd32(&th->rng);
	case 2:
		/* Small: on a shared file, maybe another thread's object. */
		return 1 + below(&th->rng, 64);
	case 3:
		/* Stale: destroyed, or of a file since closed. */
		n = th->nstale[kind] < NFS_STALE ? th->nstale[kind] : NFS_STALE;
		if (n)
			return th->stale[kind][below(&th->rng, n)].handle;
		return UINT32_MAX;
	case 4:
		/* Of another file: another fd or another adapter. */
		n = nfs_kind_count(th, kind);
		for (tries = 0; n && tries < 4; tries++) {
			nfs_kind_get(th, kind, below(&th->rng, n), &ofx,
				     &handle);
			if (ofx != fx)
				return handle;
		}
		return UINT32_MAX - 1;
	case 5:
		/* Of another kind. */
		other = (kind + 1 + below(&th->rng, NFS_K_COUNT - 1)) %
			NFS_K_COUNT;
		n = nfs_kind_count(th, other);
		if (n) {
			nfs_kind_get(th, other, below(&th->rng, n), &ofx,
				     &handle);
			return handle;
		}
		return 0x7fffffff;
	default:
		return rnd32(&th->rng) & 0xffff;
	}
}

/* @handle, or with @bad_pct percent a wrong one. */
static uint32_t nfs_handle_arg(struct nfs_thread *th, enum nfs_kind kind,
			       int fx, uint32_t handle, unsigned int bad_pct)
{
	return chance(&th->rng, bad_pct) ? nfs_bad_handle(th, kind, fx) :
	       handle;
}

/* The device handle for an object of device @dev: mostly right. */
static uint32_t nfs_dev_arg(struct nfs_thread *th, int fx, uint32_t dev)
{
	int i, start;

	if (!chance(&th->rng, 6))
		return dev;
	if (th->ndev && chance(&th->rng, 40)) {
		/* Another device of the same file. */
		start = below(&th->rng, th->ndev);
		for (i = 0; i < th->ndev; i++) {
			const struct nfs_dev *d = &th->dev[(start + i) %
							   th->ndev];

			if (d->fx == fx && d->handle != dev)
				return d->handle;
		}
	}
	return nfs_bad_handle(th, NFS_K_DEV, fx);
}

static void nfs_stale_add(struct nfs_thread *th, enum nfs_kind kind, int fx,
			  uint32_t dev, uint32_t handle, uint64_t va)
{
	struct nfs_stale *s = &th->stale[kind][th->nstale[kind]++ % NFS_STALE];

	s->fx = fx;
	s->dev = dev;
	s->handle = handle;
	s->va = va;
}

static void nfs_munmap(void *ptr, size_t len)
{
	if (munmap(ptr, len) == 0)
		nfs_add(NFS_CNT_MUNMAP, 1);
}

static void nfs_fence_remove(struct nfs_thread *th, int i)
{
	struct nfs_fence *f = &th->fence[i];

	nfs_stale_add(th, NFS_K_FENCE, f->fx, f->dev, f->handle, 0);
	*f = th->fence[--th->nfence];
}

static void nfs_alloc_remove(struct nfs_thread *th, int i)
{
	struct nfs_alloc *a = &th->alloc[i];
	int j;

	if (a->cmd) {
		for (j = 0; j < th->nqueue; j++)
			if (th->queue[j].fx == a->fx &&
			    th->queue[j].cmd == a->handle)
				th->queue[j].cmd = 0;
	}
	nfs_stale_add(th, NFS_K_ALLOC, a->fx, a->dev, a->handle, a->gpu_va);
	*a = th->alloc[--th->nalloc];
}

/*
 * Forget queue @i: its progress fence handle died with it, and its command
 * buffer, if still there, becomes a plain allocation.
 */
static void nfs_queue_remove(struct nfs_thread *th, int i)
{
	struct nfs_queue *q = &th->queue[i];
	int j;

	if (q->cmd_cpu)
		nfs_munmap(q->cmd_cpu, q->cmd_len);
	for (j = th->nfence - 1; j >= 0; j--)
		if (th->fence[j].progress && th->fence[j].fx == q->fx &&
		    th->fence[j].handle == q->progress)
			nfs_fence_remove(th, j);
	for (j = 0; j < th->nalloc; j++)
		if (th->alloc[j].cmd && th->alloc[j].fx == q->fx &&
		    th->alloc[j].handle == q->cmd)
			th->alloc[j].cmd = false;
	nfs_stale_add(th, NFS_K_QUEUE, q->fx, q->dev, q->handle, 0);
	*q = th->queue[--th->nqueue];
}

static void nfs_ctx_remove(struct nfs_thread *th, int i)
{
	struct nfs_ctx c = th->ctx[i];
	int j;

	for (j = th->nqueue - 1; j >= 0; j--)
		if (th->queue[j].fx == c.fx && th->queue[j].dev == c.dev &&
		    th->queue[j].ctx == c.handle)
			nfs_queue_remove(th, j);
	nfs_stale_add(th, NFS_K_CTX, c.fx, c.dev, c.handle, 0);
	th->ctx[i] = th->ctx[--th->nctx];
}

/*
 * Forget everything on file @fx, or with @dev != 0 only what device @dev
 * of that file owned.
 */
static void nfs_forget(struct nfs_thread *th, int fx, uint32_t dev)
{
	int j;

#define NFS_MATCH(o)	((o).fx == fx && (!dev || (o).dev == dev))
	for (j = th->nqueue - 1; j >= 0; j--)
		if (NFS_MATCH(th->queue[j]))
			nfs_queue_remove(th, j);
	for (j = th->nctx - 1; j >= 0; j--)
		if (NFS_MATCH(th->ctx[j]))
			nfs_ctx_remove(th, j);
	for (j = th->nfence - 1; j >= 0; j--)
		if (NFS_MATCH(th->fence[j]))
			nfs_fence_remove(th, j);
	for (j = th->nalloc - 1; j >= 0; j--)
		if (NFS_MATCH(th->alloc[j]))
			nfs_alloc_remove(th, j);
#undef NFS_MATCH
	for (j = th->ndev - 1; j >= 0; j--) {
		struct nfs_dev *d = &th->dev[j];

		if (d->fx != fx || (dev && d->handle != dev))
			continue;
		nfs_stale_add(th, NFS_K_DEV, d->fx, 0, d->handle, 0);
		*d = th->dev[--th->ndev];
	}
}

static void nfs_map_add(struct nfs_thread *th, void *ptr, size_t len,
			size_t value_off, bool fence, bool writable)
{
	struct nfs_map *m;

	if (th->nmap == NFS_MAPS) {
		int i = below(&th->rng, NFS_MAPS);

		nfs_munmap(th->map[i].ptr, th->map[i].len);
		th->map[i] = th->map[--th->nmap];
	}
	m = &th->map[th->nmap++];
	m->ptr = ptr;
	m->len = len;
	m->value_off = value_off;
	m->fence = fence;
	m->writable = writable;
	m->window = false;
}

static void nfs_hold_fd(struct nfs_thread *th, int fd, int adapter, bool cross)
{
	struct nfs_held_fd *h;

	if (th->nheld == NFS_FDS) {
		int i = below(&th->rng, NFS_FDS);

		close(th->held[i].fd);
		th->held[i] = th->held[--th->nheld];
	}
	h = &th->held[th->nheld++];
	h->fd = fd;
	h->adapter = adapter;
	h->cross = cross;
}

/* Random picks among live objects; -1 when there is none. */

static int nfs_pick_file(struct nfs_thread *th)
{
	int open[2 * NFS_MAX_ADAPTERS], n = 0, i;

	for (i = 0; i < th->nfile; i++)
		if (th->file[i].fd >= 0)
			open[n++] = i;
	return n ? open[below(&th->rng, n)] : -1;
}

static int nfs_pick_dev(struct nfs_thread *th)
{
	return th->ndev ? (int)below(&th->rng, th->ndev) : -1;
}

/* A device on adapter @adapter, or -1. */
static int nfs_pick_dev_on(struct nfs_thread *th, int adapter)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < th->ndev; i++)
		if (th->file[th->dev[i].fx].adapter == adapter &&
		    below(&th->rng, ++n) == 0)
			pick = i;
	return pick;
}

/* A fence of device @dev on file @fx, or -1. */
static int nfs_pick_fence_of(struct nfs_thread *th, int fx, uint32_t dev)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < th->nfence; i++)
		if (th->fence[i].fx == fx && th->fence[i].dev == dev &&
		    below(&th->rng, ++n) == 0)
			pick = i;
	return pick;
}

/* A fence on file @fx (any device: the GPU VA space is the file's). */
static int nfs_pick_fence_on(struct nfs_thread *th, int fx)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < th->nfence; i++)
		if (th->fence[i].fx == fx && below(&th->rng, ++n) == 0)
			pick = i;
	return pick;
}

/* A data allocation (not a live queue's command buffer) on file @fx. */
static int nfs_pick_data_on(struct nfs_thread *th, int fx)
{
	int i, n = 0, pick = -1;

	for (i = 0; i < th->nalloc; i++)
		if (th->alloc[i].fx == fx && !th->alloc[i].cmd &&
		    below(&th->rng, ++n) == 0)
			pick = i;
	return pick;
}

/* Async waits may still be given to file @fx; @add counts one more. */
static bool nfs_async_budget(struct nfs_thread *th, int fx, bool add)
{
	struct nfs_file *f = &th->file[fx];

	if (f->shared) {
		unsigned int *n = &wk.shared_async[f->adapter];

		if (add)
			return __atomic_add_fetch(n, 1, __ATOMIC_RELAXED) <=
			       NFS_ASYNC_PER_FILE;
		return __atomic_load_n(n, __ATOMIC_RELAXED) <
		       NFS_ASYNC_PER_FILE;
	}
	if (add)
		f->async++;
	return f->async < NFS_ASYNC_PER_FILE;
}

/* The operations. */

static void nfs_op_device_create(struct nfs_thread *th);
static void nfs_op_device_destroy(struct nfs_thread *th);
static void nfs_op_fence_create(struct nfs_thread *th);
static void nfs_op_fence_destroy(struct nfs_thread *th);
static void nfs_op_alloc_destroy(struct nfs_thread *th);
static void nfs_op_context_create(struct nfs_thread *th);
static void nfs_op_context_destroy(struct nfs_thread *th);
static void nfs_op_hwqueue_create(struct nfs_thread *th);
static void nfs_op_hwqueue_destroy(struct nfs_thread *th);

static void nfs_op_query(struct nfs_thread *th)
{
	struct drm_nfence_query q;
	unsigned int r;
	int fx = nfs_pick_file(th);

	if (fx < 0)
		return;
	memset(&q, 0, sizeof(q));
	q.type = chance(&th->rng, 90) ? below(&th->rng, DRM_NFENCE_QUERY_COUNT) :
		 chance(&th->rng, 50) ? DRM_NFENCE_QUERY_COUNT : rnd32(&th->rng);
	r = below(&th->rng, 100);
	if (r < 30)
		q.size = 0;
	else if (r < 85)
		q.size = NFS_QUERY_BUF;
	else if (r < 95)
		q.size = 1 + below(&th->rng, 8);	/* too small */
	else
		q.size = UINT32_MAX;	/* more than the buffer: fine */
	q.data = chance(&th->rng, 90) ? (uintptr_t)th->qbuf :
		 nfs_bad_ptr(th, true);
	q.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	q.pad = nfs_pad(th);
	if (chance(&th->rng, 2))
		q.reserved[below(&th->rng, 2)] = rnd64(&th->rng) | 1;
	if (nfs_ioctl(th, NFS_IO_QUERY, th->file[fx].fd, &q) || !q.size ||
	    q.size > NFS_QUERY_BUF || q.flags || q.pad || q.reserved[0] ||
	    q.reserved[1])
		return;
	/* The second call of the two-call protocol. */
	q.data = (uintptr_t)th->qbuf;
	nfs_ioctl(th, NFS_IO_QUERY, th->file[fx].fd, &q);
}

/* Record device @handle of file @fx, or destroy it if there is no room. */
static void nfs_dev_add(struct nfs_thread *th, int fx, uint32_t handle)
{
	struct drm_nfence_device_destroy d = { .handle = handle };

	if (th->ndev < NFS_DEVS) {
		th->dev[th->ndev].fx = fx;
		th->dev[th->ndev++].handle = handle;
		return;
	}
	nfs_ioctl(th, NFS_IO_DEVICE_DESTROY, th->file[fx].fd, &d);
}

static void nfs_op_device_create(struct nfs_thread *th)
{
	struct drm_nfence_device_create c;
	int fx, i, best;

	if (th->ndev >= NFS_DEVS) {
		nfs_op_device_destroy(th);
		return;
	}
	fx = nfs_pick_file(th);
	if (fx < 0)
		return;
	if (chance(&th->rng, 50)) {
		/* Mostly where there is no device yet. */
		for (best = 0; best < th->nfile; best++) {
			bool has = false;

			if (th->file[best].fd < 0)
				continue;
			for (i = 0; i < th->ndev; i++)
				has |= th->dev[i].fx == best;
			if (!has) {
				fx = best;
				break;
			}
		}
	}
	memset(&c, 0, sizeof(c));
	c.flags = chance(&th->rng, 4) ? nfs_flags(th, 0, 100) : 0;
	if (nfs_ioctl(th, NFS_IO_DEVICE_CREATE, th->file[fx].fd, &c))
		return;
	if (!c.handle) {
		nfs_anomaly(th, fx, "DEVICE_CREATE returned handle 0");
		return;
	}
	nfs_dev_add(th, fx, c.handle);
}

static void nfs_op_device_destroy(struct nfs_thread *th)
{
	struct drm_nfence_device_destroy d;
	int i = nfs_pick_dev(th), fx, ret;

	if (i < 0) {
		fx = nfs_pick_file(th);
		if (fx < 0 || chance(&th->rng, 70)) {
			nfs_op_device_create(th);
			return;
		}
		memset(&d, 0, sizeof(d));
		d.handle = nfs_bad_handle(th, NFS_K_DEV, fx);
		nfs_ioctl(th, NFS_IO_DEVICE_DESTROY, th->file[fx].fd, &d);
		return;
	}
	fx = th->dev[i].fx;
	memset(&d, 0, sizeof(d));
	d.handle = nfs_handle_arg(th, NFS_K_DEV, fx, th->dev[i].handle, 8);
	d.pad = nfs_pad(th);
	ret = nfs_ioctl(th, NFS_IO_DEVICE_DESTROY, th->file[fx].fd, &d);
	if (d.handle == th->dev[i].handle && !d.pad &&
	    (!ret || ret == -ENOENT))
		nfs_forget(th, fx, d.handle);
}

/* Record a fence, or close its handle if there is no room. */
static void nfs_fence_add(struct nfs_thread *th, int fx, uint32_t dev,
			  uint32_t handle, uint32_t flags, bool progress,
			  uint64_t known,
			  const struct drm_nfence_fence_mapping *m)
{
	struct drm_nfence_fence_destroy d = { .handle = handle };
	struct nfs_fence *f;

	if (th->nfence == NFS_FENCES) {
		if (!progress)
			nfs_ioctl(th, NFS_IO_FENCE_DESTROY, th->file[fx].fd,
				  &d);
		return;
	}
	if (m->cpu_mmap_offset &&
	    (m->cpu_value_offset >= NFS_FENCE_PAGE ||
	     m->cpu_value_offset % 8))
		nfs_anomaly(th, fx, "fence %u: CurrentValue at byte %u of its page",
			    handle, m->cpu_value_offset);
	f = &th->fence[th->nfence++];
	f->fx = fx;
	f->dev = dev;
	f->handle = handle;
	f->flags = flags;
	f->progress = progress;
	f->known = known;
	f->m = *m;
}

static void nfs_op_fence_create(struct nfs_thread *th)
{
	struct drm_nfence_fence_create c;
	unsigned int r;
	int i, fx;

	if (th->nfence >= NFS_FENCES) {
		nfs_op_fence_destroy(th);
		return;
	}
	i = nfs_pick_dev(th);
	if (i < 0) {
		nfs_op_device_create(th);
		return;
	}
	fx = th->dev[i].fx;
	memset(&c, 0, sizeof(c));
	c.device = nfs_dev_arg(th, fx, th->dev[i].handle);
	r = below(&th->rng, 100);
	c.type = r < 85 ? DRM_NFENCE_FENCE_TYPE_DEFAULT :
		 r < 97 ? DRM_NFENCE_FENCE_TYPE_INTRA_GPU :
		 r < 99 ? DRM_NFENCE_FENCE_TYPE_INTRA_GPU + 1 : rnd32(&th->rng);
	r = below(&th->rng, 100);
	if (r < 40)
		c.flags = 0;
	else if (r < 65)
		c.flags = NFS_FENCE_SHAREABLE;
	else if (r < 80)
		c.flags = NFS_FENCE_SHAREABLE | DRM_NFENCE_FENCE_CROSS_ADAPTER;
	else if (r < 88)
		c.flags = chance(&th->rng, 50) ? DRM_NFENCE_FENCE_NO_SIGNAL :
			  DRM_NFENCE_FENCE_NO_WAIT;
	else if (r < 94)
		c.flags = DRM_NFENCE_FENCE_MONITORED |
			  (chance(&th->rng, 50) ? NFS_FENCE_SHAREABLE : 0);
	else
		c.flags = nfs_flags(th, NFS_FENCE_FLAGS, 0);
	if (chance(&th->rng, 2))
		c.flags = nfs_flags(th, NFS_FENCE_FLAGS, 100);
	c.engine_affinity = nfs_affinity(th);
	c.initial_value = nfs_initial_value(th);
	c.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_FENCE_CREATE, th->file[fx].fd, &c))
		return;
	if (!c.handle) {
		nfs_anomaly(th, fx, "FENCE_CREATE returned handle 0");
		return;
	}
	nfs_fence_add(th, fx, c.device, c.handle, c.flags, false,
		      c.initial_value, &c.mapping);
}

static void nfs_op_fence_destroy(struct nfs_thread *th)
{
	struct drm_nfence_fence_destroy d;
	struct nfs_fence *f;
	int i, fx, ret;

	if (!th->nfence) {
		fx = nfs_pick_file(th);
		if (fx < 0 || chance(&th->rng, 80)) {
			nfs_op_fence_create(th);
			return;
		}
		memset(&d, 0, sizeof(d));
		d.handle = nfs_bad_handle(th, NFS_K_FENCE, fx);
		nfs_ioctl(th, NFS_IO_FENCE_DESTROY, th->file[fx].fd, &d);
		return;
	}
	i = below(&th->rng, th->nfence);
	f = &th->fence[i];
	fx = f->fx;
	memset(&d, 0, sizeof(d));
	d.handle = nfs_handle_arg(th, NFS_K_FENCE, fx, f->handle, 6);
	d.pad = nfs_pad(th);
	ret = nfs_ioctl(th, NFS_IO_FENCE_DESTROY, th->file[fx].fd, &d);
	if (d.handle != f->handle || d.pad)
		return;
	if (f->progress) {
		/* Closed with its queue only: -EBUSY (or -ENOENT, gone). */
		if (!ret)
			nfs_anomaly(th, fx, "FENCE_DESTROY of progress fence %u of "
				    "a live queue succeeded", f->handle);
		return;
	}
	if (!ret || ret == -ENOENT)
		nfs_fence_remove(th, i);
}

static void nfs_op_fence_share(struct nfs_thread *th)
{
	struct drm_nfence_fence_share s;
	struct nfs_fence *f;
	int i, n = 0, pick = -1, ret;

	if (!th->nfence) {
		nfs_op_fence_create(th);
		return;
	}
	/* Mostly a shareable fence, if there is one. */
	if (chance(&th->rng, 75)) {
		for (i = 0; i < th->nfence; i++)
			if ((th->fence[i].flags & NFS_FENCE_SHAREABLE) ==
			    NFS_FENCE_SHAREABLE && !th->fence[i].progress &&
			    below(&th->rng, ++n) == 0)
				pick = i;
	}
	if (pick < 0)
		pick = below(&th->rng, th->nfence);
	f = &th->fence[pick];
	memset(&s, 0, sizeof(s));
	s.handle = nfs_handle_arg(th, NFS_K_FENCE, f->fx, f->handle, 6);
	s.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	s.pad = nfs_pad(th);
	s.fd = -1;
	ret = nfs_ioctl(th, NFS_IO_FENCE_SHARE, th->file[f->fx].fd, &s);
	if (ret)
		return;
	if (s.fd < 0) {
		nfs_anomaly(th, f->fx, "FENCE_SHARE succeeded with fd %d", s.fd);
		return;
	}
	nfs_hold_fd(th, s.fd, th->file[f->fx].adapter,
		    s.handle == f->handle &&
		    (f->flags & DRM_NFENCE_FENCE_CROSS_ADAPTER));
}

/* Open fence fd @fd (of adapter @adapter) on some device of ours. */
static void nfs_fence_open(struct nfs_thread *th, int fd, int adapter,
			   bool cross)
{
	struct drm_nfence_fence_open o;
	unsigned int r;
	int i, fx;

	/* A cross-adapter fence mostly on another adapter. */
	if (cross && cfg.adapters > 1 && chance(&th->rng, 60))
		i = nfs_pick_dev_on(th, (adapter + 1 +
					 below(&th->rng, cfg.adapters - 1)) %
					cfg.adapters);
	else if (chance(&th->rng, 80))
		i = nfs_pick_dev_on(th, adapter);
	else
		i = nfs_pick_dev(th);
	if (i < 0)
		i = nfs_pick_dev(th);
	if (i < 0) {
		nfs_op_device_create(th);
		return;
	}
	fx = th->dev[i].fx;
	memset(&o, 0, sizeof(o));
	o.fd = fd;
	o.device = nfs_dev_arg(th, fx, th->dev[i].handle);
	r = below(&th->rng, 100);
	if (r < 70)
		o.flags = 0;
	else if (r < 82)
		o.flags = DRM_NFENCE_FENCE_NO_SIGNAL;
	else if (r < 94)
		o.flags = DRM_NFENCE_FENCE_NO_WAIT;
	else if (r < 97)
		o.flags = DRM_NFENCE_FENCE_NO_SIGNAL | DRM_NFENCE_FENCE_NO_WAIT;
	else
		o.flags = nfs_flags(th, NFS_FENCE_FLAGS, 50);
	o.engine_affinity = nfs_affinity(th);
	o.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_FENCE_OPEN, th->file[fx].fd, &o))
		return;
	if (!o.handle) {
		nfs_anomaly(th, fx, "FENCE_OPEN returned handle 0");
		return;
	}
	nfs_fence_add(th, fx, o.device, o.handle,
		      o.flags | NFS_FENCE_SHAREABLE |
		      (cross ? DRM_NFENCE_FENCE_CROSS_ADAPTER : 0),
		      false, 0, &o.mapping);
}

static void nfs_op_fence_open(struct nfs_thread *th)
{
	int fx;

	if (th->nheld && chance(&th->rng, 85)) {
		const struct nfs_held_fd *h = &th->held[below(&th->rng,
							      th->nheld)];

		nfs_fence_open(th, h->fd, h->adapter, h->cross);
		return;
	}
	/* An fd that is not open, or not a fence's. */
	fx = nfs_pick_file(th);
	switch (below(&th->rng, 5)) {
	case 0:
		nfs_fence_open(th, -1, 0, false);
		return;
	case 1:
		nfs_fence_open(th, NFS_CLOSED_FD, 0, false);
		return;
	case 2:
		/* A render node. */
		nfs_fence_open(th, fx >= 0 ? th->file[fx].fd : -1, 0, false);
		return;
	case 3:
		nfs_fence_open(th, th->efd[0], 0, false);
		return;
	default:
		nfs_fence_open(th, cfg.mailbox[wk.slot][0], 0, false);
		return;
	}
}

/*
 * Fill th->handles/values/which with @count fences of device @dev of file
 * @fx (th->which[i]: the record, or -1 for a wrong handle); @wait picks
 * wait values, else signal values.
 */
static void nfs_fill_fences(struct nfs_thread *th, int fx, uint32_t dev,
			    uint32_t count, bool wait)
{
	uint32_t i;

	if (count > NFS_ARRAY)
		count = NFS_ARRAY;
	for (i = 0; i < count; i++) {
		int j = chance(&th->rng, 96) ? nfs_pick_fence_of(th, fx, dev) :
			-1;
		uint64_t base;

		/* INTRA_GPU fences (no CPU mapping): -EINVAL, now and then. */
		if (j >= 0 && !th->fence[j].m.cpu_mmap_offset &&
		    chance(&th->rng, 70))
			j = nfs_pick_fence_of(th, fx, dev);
		base = j >= 0 ? th->fence[j].known : 0;

		th->which[i] = j;
		th->handles[i] = j >= 0 ? th->fence[j].handle :
				 nfs_bad_handle(th, NFS_K_FENCE, fx);
		th->values[i] = wait ? nfs_wait_value(th, base) :
				nfs_signal_value(th, base);
	}
}

/* A count of fences: mostly 1..4, now and then 0, many or too many. */
static uint32_t nfs_fence_count(struct nfs_thread *th)
{
	unsigned int r = below(&th->rng, 100);

	if (r < 85)
		return 1 + below(&th->rng, 4);
	if (r < 93)
		return 5 + below(&th->rng, DRM_NFENCE_MAX_WAIT_FENCES - 4);
	if (r < 96)
		return 0;
	if (r < 99)
		return DRM_NFENCE_MAX_WAIT_FENCES + 1 +
		       below(&th->rng, NFS_ARRAY - DRM_NFENCE_MAX_WAIT_FENCES);
	return UINT32_MAX;	/* must be refused before anything is read */
}

static void nfs_op_fence_wait(struct nfs_thread *th)
{
	struct drm_nfence_fence_wait w;
	struct nfs_fence *f;
	unsigned int r;
	int fx, ret;

	if (!th->nfence) {
		nfs_op_fence_create(th);
		return;
	}
	f = &th->fence[below(&th->rng, th->nfence)];
	fx = f->fx;
	memset(&w, 0, sizeof(w));
	w.device = nfs_dev_arg(th, fx, f->dev);
	w.count = nfs_fence_count(th);
	nfs_fill_fences(th, fx, f->dev, w.count, true);
	w.handles = chance(&th->rng, 98) ? (uintptr_t)th->handles :
		    nfs_bad_ptr(th, false);
	w.values = chance(&th->rng, 98) ? (uintptr_t)th->values :
		   nfs_bad_ptr(th, false);
	r = below(&th->rng, 100);
	if (r < 55)
		w.flags = 0;
	else if (r < 75)
		w.flags = DRM_NFENCE_WAIT_ANY;
	else if (r < 95)
		w.flags = DRM_NFENCE_WAIT_ASYNC |
			  (chance(&th->rng, 50) ? DRM_NFENCE_WAIT_ANY : 0);
	else
		w.flags = nfs_flags(th, DRM_NFENCE_WAIT_ANY |
				    DRM_NFENCE_WAIT_ASYNC, 60);
	/* No async waits from fork children, and a bounded number per file. */
	if (th->child || !nfs_async_budget(th, fx, false))
		w.flags &= ~DRM_NFENCE_WAIT_ASYNC;
	if (w.flags & DRM_NFENCE_WAIT_ASYNC) {
		r = below(&th->rng, 100);
		if (r < 94)
			w.eventfd = th->efd[below(&th->rng, 2)];
		else if (r < 96)
			w.eventfd = th->file[fx].fd;	/* not an eventfd */
		else if (r < 98)
			w.eventfd = -1;
		else
			w.eventfd = NFS_CLOSED_FD;
		/* An async wait's deadline must be 0. */
		w.timeout_ns = chance(&th->rng, 95) ? 0 : nfs_deadline(th);
	} else {
		w.eventfd = chance(&th->rng, 98) ? 0 : th->efd[0];
		w.timeout_ns = nfs_deadline(th);
	}
	w.pad = nfs_pad(th);
	ret = nfs_ioctl(th, NFS_IO_FENCE_WAIT, th->file[fx].fd, &w);
	if (ret)
		return;
	if (w.flags & DRM_NFENCE_WAIT_ASYNC) {
		nfs_async_budget(th, fx, true);
		return;
	}
	/* Every fence (or, with ANY, the first signaled) got there. */
	if (w.count <= NFS_ARRAY && w.handles == (uintptr_t)th->handles &&
	    w.values == (uintptr_t)th->values) {
		uint32_t i = w.flags & DRM_NFENCE_WAIT_ANY ? w.first_signaled : 0;
		uint32_t end = w.flags & DRM_NFENCE_WAIT_ANY ? i + 1 : w.count;

		if (i >= w.count) {
			nfs_anomaly(th, fx, "FENCE_WAIT: first_signaled %u of %u",
				    w.first_signaled, w.count);
			return;
		}
		for (; i < end; i++) {
			int j = th->which[i];

			if (j >= 0 && th->fence[j].known < th->values[i])
				th->fence[j].known = th->values[i];
		}
	}
}

static void nfs_op_fence_signal(struct nfs_thread *th)
{
	struct drm_nfence_fence_signal s;
	struct nfs_fence *f;
	uint32_t i;
	int fx;

	if (!th->nfence) {
		nfs_op_fence_create(th);
		return;
	}
	f = &th->fence[below(&th->rng, th->nfence)];
	fx = f->fx;
	memset(&s, 0, sizeof(s));
	s.device = nfs_dev_arg(th, fx, f->dev);
	s.count = nfs_fence_count(th);
	nfs_fill_fences(th, fx, f->dev, s.count, false);
	s.handles = chance(&th->rng, 98) ? (uintptr_t)th->handles :
		    nfs_bad_ptr(th, false);
	s.values = chance(&th->rng, 98) ? (uintptr_t)th->values :
		   nfs_bad_ptr(th, false);
	s.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	s.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_FENCE_SIGNAL, th->file[fx].fd, &s) ||
	    s.count > NFS_ARRAY || s.values != (uintptr_t)th->values)
		return;
	for (i = 0; i < s.count; i++) {
		int j = th->which[i];

		if (j >= 0 && th->fence[j].known < th->values[i])
			th->fence[j].known = th->values[i];
	}
}

/* Record an allocation, or destroy it if there is no room. */
static int nfs_alloc_add(struct nfs_thread *th, int fx,
			 const struct drm_nfence_alloc_create *c, bool cmd)
{
	struct drm_nfence_alloc_destroy d = {
		.device = c->device,
		.handle = c->handle,
	};
	struct nfs_alloc *a;

	if (th->nalloc == NFS_ALLOCS) {
		nfs_ioctl(th, NFS_IO_ALLOC_DESTROY, th->file[fx].fd, &d);
		return -1;
	}
	if (c->gpu_va % NFS_PAGE || !c->gpu_va)
		nfs_anomaly(th, fx, "ALLOC_CREATE: GPU VA %#" PRIx64,
			    (uint64_t)c->gpu_va);
	a = &th->alloc[th->nalloc];
	a->fx = fx;
	a->dev = c->device;
	a->handle = c->handle;
	a->gpu_va = c->gpu_va;
	a->size = c->size;
	a->cmd = cmd;
	return th->nalloc++;
}

static void nfs_op_alloc_create(struct nfs_thread *th)
{
	static const uint64_t huge[] = {
		0, DRM_NFENCE_MAX_ALLOC_SIZE + 1, 1ull << 63, UINT64_MAX,
		DRM_NFENCE_MAX_ALLOC_SIZE + NFS_PAGE,
	};
	struct drm_nfence_alloc_create c;
	unsigned int r;
	int i, fx;

	if (th->nalloc >= NFS_ALLOCS - 2) {
		nfs_op_alloc_destroy(th);
		return;
	}
	i = nfs_pick_dev(th);
	if (i < 0) {
		nfs_op_device_create(th);
		return;
	}
	fx = th->dev[i].fx;
	memset(&c, 0, sizeof(c));
	c.device = nfs_dev_arg(th, fx, th->dev[i].handle);
	r = below(&th->rng, 1000);
	if (r < 450)
		c.size = NFS_PAGE;
	else if (r < 750)
		c.size = NFS_PAGE * (1 + below(&th->rng, 64));
	else if (r < 850)
		c.size = 1 + below(&th->rng, 1 << 20);
	else if (r < 900)
		c.size = (1 + below(&th->rng, 8)) << 20;
	else if (r < 990)
		c.size = huge[below(&th->rng, ARRAY_SIZE(huge))];
	else if (r < 992)
		c.size = DRM_NFENCE_MAX_ALLOC_SIZE;
	else
		c.size = rnd64(&th->rng);
	r = below(&th->rng, 100);
	c.segment_id = r < 60 ? 1 : r < 96 ? 2 :
		       r < 98 ? 3 * (uint32_t)below(&th->rng, 2) :
		       rnd32(&th->rng);
	if (c.segment_id == 1) {
		r = below(&th->rng, 100);
		c.flags = r < 50 ? DRM_NFENCE_ALLOC_CPU_VISIBLE :
			  r < 97 ? 0 : DRM_NFENCE_ALLOC_ALLOW_DEMOTE;
	} else {
		c.flags = nfs_flags(th, DRM_NFENCE_ALLOC_CPU_VISIBLE |
				    DRM_NFENCE_ALLOC_ALLOW_DEMOTE, 0);
	}
	if (chance(&th->rng, 2))
		c.flags = nfs_flags(th, DRM_NFENCE_ALLOC_CPU_VISIBLE |
				    DRM_NFENCE_ALLOC_ALLOW_DEMOTE, 100);
	c.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_ALLOC_CREATE, th->file[fx].fd, &c))
		return;
	if (!c.handle) {
		nfs_anomaly(th, fx, "ALLOC_CREATE returned handle 0");
		return;
	}
	nfs_alloc_add(th, fx, &c, false);
}

static void nfs_op_alloc_destroy(struct nfs_thread *th)
{
	struct drm_nfence_alloc_destroy d;
	struct nfs_alloc *a;
	int i, ret;

	if (!th->nalloc) {
		i = nfs_pick_dev(th);
		if (i < 0 || chance(&th->rng, 80)) {
			nfs_op_alloc_create(th);
			return;
		}
		memset(&d, 0, sizeof(d));
		d.device = th->dev[i].handle;
		d.handle = nfs_bad_handle(th, NFS_K_ALLOC, th->dev[i].fx);
		nfs_ioctl(th, NFS_IO_ALLOC_DESTROY,
			  th->file[th->dev[i].fx].fd, &d);
		return;
	}
	i = below(&th->rng, th->nalloc);
	/* Mostly not a live queue's command buffer. */
	if (th->alloc[i].cmd && chance(&th->rng, 80))
		i = below(&th->rng, th->nalloc);
	/* Big ones do not stay long. */
	for (ret = 0; ret < th->nalloc; ret++)
		if (th->alloc[ret].size > (8u << 20) && chance(&th->rng, 80))
			i = ret;
	a = &th->alloc[i];
	memset(&d, 0, sizeof(d));
	d.device = nfs_dev_arg(th, a->fx, a->dev);
	d.handle = nfs_handle_arg(th, NFS_K_ALLOC, a->fx, a->handle, 6);
	ret = nfs_ioctl(th, NFS_IO_ALLOC_DESTROY, th->file[a->fx].fd, &d);
	if (d.device == a->dev && d.handle == a->handle &&
	    (!ret || ret == -ENOENT))
		nfs_alloc_remove(th, i);
}

/* Count an mmap() and its result. */
static void *nfs_mmap(size_t len, int prot, int fd, uint64_t offset)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)offset);

	nfs_add(NFS_CNT_MMAP, 1);
	if (p == MAP_FAILED) {
		nfs_add(NFS_CNT_MMAP_FAILED, 1);
		return NULL;
	}
	return p;
}

static void nfs_op_alloc_lock(struct nfs_thread *th)
{
	struct drm_nfence_alloc_lock l;
	struct nfs_alloc *a;
	unsigned int r;
	bool writable;
	size_t len;
	uint8_t *p;
	int i;

	if (!th->nalloc) {
		nfs_op_alloc_create(th);
		return;
	}
	i = below(&th->rng, th->nalloc);
	a = &th->alloc[i];
	memset(&l, 0, sizeof(l));
	l.device = nfs_dev_arg(th, a->fx, a->dev);
	l.handle = nfs_handle_arg(th, NFS_K_ALLOC, a->fx, a->handle, 6);
	l.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	l.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_ALLOC_LOCK, th->file[a->fx].fd, &l) ||
	    !chance(&th->rng, 70))
		return;
	if (!l.mmap_offset || !l.size) {
		nfs_anomaly(th, a->fx, "ALLOC_LOCK: offset %#" PRIx64 " size %" PRIu64,
			    (uint64_t)l.mmap_offset, (uint64_t)l.size);
		return;
	}
	/*
	 * D3DKMTLock2: map it. Read-only when it is a live queue's command
	 * buffer (its commands are the queue's business) or may be one (a
	 * wrong handle that named something).
	 */
	writable = l.handle == a->handle && l.device == a->dev && !a->cmd &&
		   chance(&th->rng, 90);
	len = l.size;
	r = below(&th->rng, 100);
	if (r < 4)
		len += NFS_PAGE;	/* more than the object */
	else if (r < 6)
		len = rnd64(&th->rng) | 1;
	p = nfs_mmap(len, PROT_READ | (writable ? PROT_WRITE : 0),
		     th->file[a->fx].fd, l.mmap_offset);
	if (!p)
		return;
	if (len > l.size) {
		/* Past the object: no use keeping it. */
		nfs_munmap(p, len);
		return;
	}
	(void)*(volatile uint64_t *)p;
	nfs_add(NFS_CNT_MAP_READ, 1);
	nfs_map_add(th, p, len, 0, false, writable);
}

static void nfs_op_context_create(struct nfs_thread *th)
{
	struct drm_nfence_context_create c;
	const struct nfs_adapter_info *ai;
	unsigned int r;
	int i, fx;

	if (th->nctx >= NFS_CTXS) {
		nfs_op_context_destroy(th);
		return;
	}
	i = nfs_pick_dev(th);
	if (i < 0) {
		nfs_op_device_create(th);
		return;
	}
	fx = th->dev[i].fx;
	ai = nfs_info(th, fx);
	memset(&c, 0, sizeof(c));
	c.device = nfs_dev_arg(th, fx, th->dev[i].handle);
	r = below(&th->rng, 100);
	c.engine = r < 90 ? below(&th->rng, ai->num_engines) :
		   r < 97 ? ai->num_engines + below(&th->rng, 8) :
		   rnd32(&th->rng);
	c.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	if (nfs_ioctl(th, NFS_IO_CONTEXT_CREATE, th->file[fx].fd, &c))
		return;
	if (!c.handle) {
		nfs_anomaly(th, fx, "CONTEXT_CREATE returned handle 0");
		return;
	}
	if (th->nctx == NFS_CTXS) {
		struct drm_nfence_context_destroy d = {
			.device = c.device,
			.handle = c.handle,
		};

		nfs_ioctl(th, NFS_IO_CONTEXT_DESTROY, th->file[fx].fd, &d);
		return;
	}
	th->ctx[th->nctx].fx = fx;
	th->ctx[th->nctx].dev = c.device;
	th->ctx[th->nctx++].handle = c.handle;
}

static void nfs_op_context_destroy(struct nfs_thread *th)
{
	struct drm_nfence_context_destroy d;
	struct nfs_ctx *c;
	int i, ret;

	if (!th->nctx) {
		nfs_op_context_create(th);
		return;
	}
	i = below(&th->rng, th->nctx);
	c = &th->ctx[i];
	memset(&d, 0, sizeof(d));
	d.device = nfs_dev_arg(th, c->fx, c->dev);
	d.handle = nfs_handle_arg(th, NFS_K_CTX, c->fx, c->handle, 6);
	ret = nfs_ioctl(th, NFS_IO_CONTEXT_DESTROY, th->file[c->fx].fd, &d);
	if (d.device == c->dev && d.handle == c->handle &&
	    (!ret || ret == -ENOENT))
		nfs_ctx_remove(th, i);
}

static void nfs_op_context_control(struct nfs_thread *th)
{
	struct drm_nfence_context_control cc;
	struct nfs_ctx *c;
	unsigned int r;

	if (!th->nctx) {
		nfs_op_context_create(th);
		return;
	}
	c = &th->ctx[below(&th->rng, th->nctx)];
	memset(&cc, 0, sizeof(cc));
	cc.device = nfs_dev_arg(th, c->fx, c->dev);
	cc.context = nfs_handle_arg(th, NFS_K_CTX, c->fx, c->handle, 6);
	/* Resumes outnumber suspends, so that queues mostly run. */
	r = below(&th->rng, 100);
	cc.op = r < 40 ? DRM_NFENCE_CONTEXT_OP_QUERY :
		r < 55 ? DRM_NFENCE_CONTEXT_OP_SUSPEND :
		r < 85 ? DRM_NFENCE_CONTEXT_OP_RESUME :
		r < 93 ? DRM_NFENCE_CONTEXT_OP_SET_PRIORITY :
		r < 96 ? DRM_NFENCE_CONTEXT_OP_GET_PRIORITY :
		DRM_NFENCE_CONTEXT_OP_GET_PRIORITY + 1 +
		below(&th->rng, 1000);
	/* SET_PRIORITY's priority, mostly in -7..7; the others' must be 0. */
	if (cc.op == DRM_NFENCE_CONTEXT_OP_SET_PRIORITY && !chance(&th->rng, 8))
		cc.priority = (int32_t)below(&th->rng, 15) - 7;
	else
		cc.priority = (int32_t)nfs_pad(th);
	if (chance(&th->rng, 2))
		cc.state = rnd32(&th->rng);	/* an output: ignored */
	nfs_ioctl(th, NFS_IO_CONTEXT_CONTROL, th->file[c->fx].fd, &cc);
}

/* Give queue @q a command buffer: an allocation, locked and mapped. */
static void nfs_queue_cmdbuf(struct nfs_thread *th, struct nfs_queue *q)
{
	struct drm_nfence_alloc_create c = {
		.device = q->dev,
		.size = NFS_CMDBUF_SIZE,
		.segment_id = 1,
		.flags = DRM_NFENCE_ALLOC_CPU_VISIBLE,
	};
	struct drm_nfence_alloc_lock l;
	int fd = th->file[q->fx].fd;

	if (th->nalloc >= NFS_ALLOCS ||
	    nfs_ioctl(th, NFS_IO_ALLOC_CREATE, fd, &c) || !c.handle ||
	    nfs_alloc_add(th, q->fx, &c, true) < 0)
		return;
	q->cmd = c.handle;
	q->cmd_va = c.gpu_va;
	memset(&l, 0, sizeof(l));
	l.device = q->dev;
	l.handle = c.handle;
	if (nfs_ioctl(th, NFS_IO_ALLOC_LOCK, fd, &l) ||
	    l.size < NFS_CMDBUF_SIZE)
		return;
	q->cmd_cpu = nfs_mmap(l.size, PROT_READ | PROT_WRITE, fd,
			      l.mmap_offset);
	q->cmd_len = q->cmd_cpu ? l.size : 0;
}

static void nfs_op_hwqueue_create(struct nfs_thread *th)
{
	struct drm_nfence_hwqueue_create c;
	struct nfs_queue *q;
	struct nfs_ctx *ctx;
	unsigned int r;
	int fx;

	if (th->nqueue >= NFS_QUEUES) {
		nfs_op_hwqueue_destroy(th);
		return;
	}
	if (!th->nctx) {
		nfs_op_context_create(th);
		return;
	}
	ctx = &th->ctx[below(&th->rng, th->nctx)];
	fx = ctx->fx;
	memset(&c, 0, sizeof(c));
	c.device = nfs_dev_arg(th, fx, ctx->dev);
	c.context = nfs_handle_arg(th, NFS_K_CTX, fx, ctx->handle, 6);
	r = below(&th->rng, 100);
	if (r < 55)
		c.flags = 0;
	else if (r < 88)
		c.flags = nfs_flags(th, NFS_HWQUEUE_FLAGS &
				    ~DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION,
				    0);
	else if (r < 94)
		c.flags = DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION;
	else
		c.flags = nfs_flags(th, NFS_HWQUEUE_FLAGS, 70);
	c.pad = nfs_pad(th);
	if (nfs_ioctl(th, NFS_IO_HWQUEUE_CREATE, th->file[fx].fd, &c))
		return;
	if (!c.handle || !c.progress_fence) {
		nfs_anomaly(th, fx, "HWQUEUE_CREATE returned queue %u progress "
			    "fence %u", c.handle, c.progress_fence);
		return;
	}
	q = &th->queue[th->nqueue++];
	memset(q, 0, sizeof(*q));
	q->fx = fx;
	q->dev = c.device;
	q->ctx = c.context;
	q->handle = c.handle;
	q->progress = c.progress_fence;
	q->max_ops = 8 + below(&th->rng, NFS_QUEUE_MAX_OPS - 8);
	nfs_fence_add(th, fx, c.device, c.progress_fence, 0, true, 0,
		      &c.progress_fence_mapping);
	nfs_queue_cmdbuf(th, q);
}

/* Destroy queue @i with a valid call, and forget it whatever happens. */
static void nfs_queue_retire(struct nfs_thread *th, int i)
{
	struct nfs_queue *q = &th->queue[i];
	struct drm_nfence_hwqueue_destroy d = {
		.device = q->dev,
		.handle = q->handle,
	};

	nfs_ioctl(th, NFS_IO_HWQUEUE_DESTROY, th->file[q->fx].fd, &d);
	nfs_queue_remove(th, i);
}

static void nfs_op_hwqueue_destroy(struct nfs_thread *th)
{
	struct drm_nfence_hwqueue_destroy d;
	struct nfs_queue *q;
	int i, ret;

	if (!th->nqueue) {
		nfs_op_hwqueue_create(th);
		return;
	}
	i = below(&th->rng, th->nqueue);
	q = &th->queue[i];
	memset(&d, 0, sizeof(d));
	d.device = nfs_dev_arg(th, q->fx, q->dev);
	d.handle = nfs_handle_arg(th, NFS_K_QUEUE, q->fx, q->handle, 6);
	ret = nfs_ioctl(th, NFS_IO_HWQUEUE_DESTROY, th->file[q->fx].fd, &d);
	if (d.device == q->dev && d.handle == q->handle &&
	    (!ret || ret == -ENOENT))
		nfs_queue_remove(th, i);
}

/*
 * A queue to submit to, or -1 (then the caller made one, or tried). A
 * queue that has done its share is retired first.
 */
static int nfs_pick_queue(struct nfs_thread *th)
{
	struct nfs_queue *q;
	int i;

	if (!th->nqueue) {
		nfs_op_hwqueue_create(th);
		return -1;
	}
	i = below(&th->rng, th->nqueue);
	q = &th->queue[i];
	q->tries++;
	if (q->ops >= q->max_ops || q->tries >= 2 * q->max_ops ||
	    (q->cmd_cpu && q->cursor + NFS_SUBMIT_MAX_BYTES > q->cmd_len) ||
	    (!q->cmd && chance(&th->rng, 25))) {
		nfs_queue_retire(th, i);
		return -1;
	}
	return i;
}

/* Append one command: @words 32-bit words of header, 0 and operands. */
static uint32_t nfs_cs_emit(uint8_t *p, uint32_t opcode, uint32_t words,
			    const uint64_t *op, unsigned int nop)
{
	uint32_t header = DRM_NFENCE_CS_HEADER(opcode, words), zero = 0;
	unsigned int i;

	memcpy(p, &header, 4);
	memcpy(p + 4, &zero, 4);
	for (i = 0; i < nop; i++)
		memcpy(p + 8 + 8 * i, &op[i], 8);
	return 8 + 8 * nop;
}

/* A small garbage word (see NFS_GARBAGE_LIMIT). */
static uint64_t nfs_garbage(struct nfs_thread *th)
{
	return below(&th->rng, NFS_GARBAGE_LIMIT);
}

/*
 * A GPU VA with nothing of this thread's behind it: a destroyed
 * allocation's (unmapped, or reused since), or one outside the GPU VA
 * space the driver uses (4 GiB .. 1 TiB; the uapi does not say).
 */
static uint64_t nfs_bad_va(struct nfs_thread *th)
{
	unsigned int n = th->nstale[NFS_K_ALLOC];

	if (n > NFS_STALE)
		n = NFS_STALE;
	if (n && chance(&th->rng, 40))
		return th->stale[NFS_K_ALLOC][below(&th->rng, n)].va;
	if (chance(&th->rng, 50))
		return 1ull << (40 + below(&th->rng, 8));
	return nfs_garbage(th) & ~7ull;	/* below 4 GiB */
}

/* A GPU VA to write on file @fx; *@any_value: any value may go there. */
static uint64_t nfs_cs_target(struct nfs_thread *th, int fx, bool *any_value)
{
	unsigned int r = below(&th->rng, 100);
	int j;

	*any_value = false;
	if (r < 60) {
		j = nfs_pick_data_on(th, fx);
		if (j >= 0) {
			const struct nfs_alloc *a = &th->alloc[j];
			uint64_t span = a->size < (64u << 10) ? a->size :
					(64u << 10);

			*any_value = true;
			return a->gpu_va + 8 * below(&th->rng, span / 8 ?: 1);
		}
	} else if (r < 75) {
		j = nfs_pick_fence_on(th, fx);
		if (j >= 0) {
			*any_value = true;
			return th->fence[j].m.current_value_gpu_va;
		}
	} else if (r < 83) {
		j = nfs_pick_fence_on(th, fx);
		if (j >= 0)	/* read-only to the GPU: a page fault */
			return th->fence[j].m.monitored_value_gpu_va;
	}
	return nfs_bad_va(th);
}

/*
 * Write 1..6 commands for queue @q at @p: mostly valid, some that fault
 * when they run (unmapped or read-only targets), now and then garbage
 * that the submit must refuse. Returns the bytes written.
 */
static uint32_t nfs_cs_build(struct nfs_thread *th, const struct nfs_queue *q,
			     uint8_t *p)
{
	unsigned int n = 1 + below(&th->rng, 6), i;
	uint32_t len = 0;

	for (i = 0; i < n; i++) {
		unsigned int r = below(&th->rng, 100);
		int j = nfs_pick_fence_on(th, q->fx);
		uint64_t op[3];
		bool any;

		if (r < 12) {
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_NOP,
					   DRM_NFENCE_CS_NOP_WORDS, NULL, 0);
		} else if (r < 24) {
			op[0] = chance(&th->rng, 90) ?
				below(&th->rng, 300000) :
				below(&th->rng, NFS_WORK_MAX_NS + 1);
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_WORK,
					   DRM_NFENCE_CS_WORK_WORDS, op, 1);
		} else if (r < 44 && j >= 0) {
			const struct nfs_fence *f = &th->fence[j];

			op[0] = f->m.current_value_gpu_va;
			op[1] = chance(&th->rng, 80) ?
				f->m.monitored_value_gpu_va : 0;
			op[2] = f->known + 1 + below(&th->rng, 16);
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_FENCE_SIGNAL,
					   DRM_NFENCE_CS_FENCE_SIGNAL_WORDS,
					   op, 3);
		} else if (r < 58 && j >= 0) {
			const struct nfs_fence *f = &th->fence[j];

			/* Mostly reached; else someone has to signal it. */
			op[0] = f->m.current_value_gpu_va;
			op[1] = chance(&th->rng, 80) ?
				f->known - below(&th->rng, 2) : f->known + 1;
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_FENCE_WAIT,
					   DRM_NFENCE_CS_FENCE_WAIT_WORDS,
					   op, 2);
		} else if (r < 78) {
			op[0] = nfs_cs_target(th, q->fx, &any);
			op[1] = any ? rnd64(&th->rng) : nfs_garbage(th);
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_WRITE64,
					   DRM_NFENCE_CS_WRITE64_WORDS, op, 2);
		} else if (r < 96) {
			op[0] = nfs_cs_target(th, q->fx, &any);
			if (!any)	/* a timestamp is a big value */
				op[0] = nfs_garbage(th) & ~7ull;
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_TIMESTAMP,
					   DRM_NFENCE_CS_TIMESTAMP_WORDS,
					   op, 1);
		} else if (r < 98) {
			/* A misaligned operand: refused by the submit. */
			op[0] = nfs_cs_target(th, q->fx, &any) | 4;
			op[1] = nfs_garbage(th);
			len += nfs_cs_emit(p + len, DRM_NFENCE_CS_WRITE64,
					   DRM_NFENCE_CS_WRITE64_WORDS, op, 2);
		} else {
			/* Garbage: a bad header, length or reserved word. */
			unsigned int k, words = 1 + below(&th->rng, 3);

			for (k = 0; k < words; k++) {
				op[0] = nfs_garbage(th);
				memcpy(p + len, &op[0], 8);
				len += 8;
			}
		}
	}
	return len;
}

static void nfs_op_submit(struct nfs_thread *th)
{
	struct drm_nfence_submit s;
	struct nfs_queue *q;
	uint32_t start = 0, len = 0;
	unsigned int r;
	int i, ret;

	i = nfs_pick_queue(th);
	if (i < 0)
		return;
	q = &th->queue[i];
	memset(&s, 0, sizeof(s));
	s.device = nfs_dev_arg(th, q->fx, q->dev);
	s.hwqueue = nfs_handle_arg(th, NFS_K_QUEUE, q->fx, q->handle, 5);
	if (q->cmd_cpu) {
		start = q->cursor;
		len = nfs_cs_build(th, q, q->cmd_cpu + start);
		s.commands_gpu_va = q->cmd_va + start;
		s.size = len;
	}
	r = below(&th->rng, 100);
	if (!q->cmd_cpu || r >= 88) {
		switch (r % 7) {
		case 0:
			s.size = 0;
			break;
		case 1:
			s.size = len + 4;	/* not a multiple of 8 */
			break;
		case 2:
			s.size = chance(&th->rng, 50) ?
				 DRM_NFENCE_MAX_SUBMIT_SIZE + 8 : UINT32_MAX;
			break;
		case 3:
			s.commands_gpu_va |= 4;	/* misaligned */
			break;
		case 4:
			/* Past the end of the buffer, or of the VA space. */
			s.commands_gpu_va = q->cmd_cpu ?
					    q->cmd_va + q->cmd_len - 8 :
					    UINT64_MAX - 7;
			s.size = 64;
			break;
		default:
			/*
			 * Unmapped, or a destroyed allocation's VA; never
			 * data, whose contents could form a long WORK.
			 */
			s.commands_gpu_va = nfs_bad_va(th);
			s.size = 8 * (1 + below(&th->rng, 8));
			break;
		}
	}
	r = below(&th->rng, 100);
	s.progress_fence_value = r < 92 ? q->value + 1 + below(&th->rng, 16) :
				 r < 96 ? q->value :
				 r < 98 ? 0 : rnd64(&th->rng);
	s.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	ret = nfs_ioctl(th, NFS_IO_SUBMIT, th->file[q->fx].fd, &s);
	if (ret)
		return;
	/*
	 * Queued commands are never overwritten but on purpose (with
	 * garbage), whichever queue took them: a wrong handle may have
	 * named another queue.
	 */
	if (q->cmd_cpu && s.commands_gpu_va == q->cmd_va + start &&
	    s.size == len) {
		q->last_start = start;
		q->last_len = len;
		q->cursor = start + ((len + 7) & ~7u);
	}
	if (s.device != q->dev || s.hwqueue != q->handle)
		return;
	q->ops++;
	if (s.progress_fence_value > q->value)
		q->value = s.progress_fence_value;
}

/* SUBMIT_WAIT (@signal false) or SUBMIT_SIGNAL. */
static void nfs_submit_sync(struct nfs_thread *th, bool signal)
{
	enum nfs_io_type io = signal ? NFS_IO_SUBMIT_SIGNAL : NFS_IO_SUBMIT_WAIT;
	struct drm_nfence_submit_sync s;
	struct nfs_queue *q;
	unsigned int r;
	int i;

	i = nfs_pick_queue(th);
	if (i < 0)
		return;
	q = &th->queue[i];
	memset(&s, 0, sizeof(s));
	s.device = nfs_dev_arg(th, q->fx, q->dev);
	s.hwqueue = nfs_handle_arg(th, NFS_K_QUEUE, q->fx, q->handle, 5);
	r = below(&th->rng, 100);
	s.count = r < 90 ? 1 + below(&th->rng, 3) :
		  r < 94 ? 4 + below(&th->rng, DRM_NFENCE_MAX_WAIT_FENCES - 3) :
		  r < 97 ? 0 : DRM_NFENCE_MAX_WAIT_FENCES + 1;
	nfs_fill_fences(th, q->fx, q->dev, s.count, !signal);
	if (signal) {
		uint32_t k;

		/* Mostly a step up from what it has. */
		for (k = 0; k < s.count && k < NFS_ARRAY; k++)
			if (th->which[k] >= 0 && chance(&th->rng, 80))
				th->values[k] = th->fence[th->which[k]].known +
						1 + below(&th->rng, 16);
	}
	s.handles = chance(&th->rng, 98) ? (uintptr_t)th->handles :
		    nfs_bad_ptr(th, false);
	s.values = chance(&th->rng, 98) ? (uintptr_t)th->values :
		   nfs_bad_ptr(th, false);
	s.flags = chance(&th->rng, 2) ? nfs_flags(th, 0, 100) : 0;
	if (!nfs_ioctl(th, io, th->file[q->fx].fd, &s) &&
	    s.device == q->dev && s.hwqueue == q->handle)
		q->ops++;
}

static void nfs_op_submit_wait(struct nfs_thread *th)
{
	nfs_submit_sync(th, false);
}

static void nfs_op_submit_signal(struct nfs_thread *th)
{
	nfs_submit_sync(th, true);
}

/*
 * Rewrite the commands a queue's last submission queued with garbage: if
 * they have not run yet, the context faults when they do.
 */
static void nfs_op_cs_rewrite(struct nfs_thread *th)
{
	struct nfs_queue *q;
	uint32_t off;

	if (!th->nqueue)
		return;
	q = &th->queue[below(&th->rng, th->nqueue)];
	if (!q->cmd_cpu || !q->last_len)
		return;
	for (off = 0; off + 8 <= q->last_len; off += 8) {
		uint64_t w = nfs_garbage(th);

		__atomic_store_n((uint64_t *)(q->cmd_cpu + q->last_start + off),
				 w, __ATOMIC_RELAXED);
	}
	q->last_len = 0;
	nfs_add(NFS_CNT_CS_REWRITE, 1);
}

/*
 * Whether fence @f still exists, and so has existed all along: handles are
 * never reused, so a fence found now was alive when its page was mapped.
 * A fence another thread destroyed (on a shared file, handles are guessed)
 * may have taken its page with it, and the page's mmap offset may since
 * name another object, one that may be mapped writable: a check about the
 * mapping is made only of a fence that lived. A wait for value 0 is
 * satisfied at once by any fence, so it only looks the handle up.
 */
static bool nfs_fence_lived(struct nfs_thread *th, const struct nfs_fence *f)
{
	struct drm_nfence_fence_wait w;
	uint32_t handle = f->handle;
	uint64_t value = 0;

	memset(&w, 0, sizeof(w));
	w.device = f->dev;
	w.count = 1;
	w.handles = (uintptr_t)&handle;
	w.values = (uintptr_t)&value;
	return nfs_ioctl(th, NFS_IO_FENCE_WAIT, th->file[f->fx].fd, &w) !=
	       -ENOENT;
}

/*
 * Map a fence's CurrentValue page and read it; now and then try what must
 * fail (a writable mapping, mprotect() to writable) or may (the wrong
 * size, another file's offset).
 */
/*
 * CPU windows (DRM_IOCTL_NFENCE_FENCE_WINDOW). A page of a window shows a
 * shared fence's CurrentValue while the file holds the handle it was
 * given for, and nothing (SIGBUS) before and after: reads of a window go
 * through nfs_window_read(), which turns that SIGBUS into a count. A SIGBUS
 * anywhere else kills the worker, as before.
 */
static __thread sigjmp_buf nfs_window_env;
static __thread volatile sig_atomic_t nfs_window_reading;

static void nfs_window_bus(int sig)
{
	if (nfs_window_reading)
		siglongjmp(nfs_window_env, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Read the value at @p of a window; false if it showed nothing. */
static bool nfs_window_read(const uint8_t *p)
{
	bool shown = true;

	nfs_add(NFS_CNT_WINDOW_READ, 1);
	if (sigsetjmp(nfs_window_env, 1) == 0) {
		nfs_window_reading = 1;
		(void)*(const volatile uint64_t *)p;
	} else {
		nfs_add(NFS_CNT_WINDOW_BUS, 1);
		shown = false;
	}
	nfs_window_reading = 0;
	return shown;
}

/* Whether @f's CurrentValue is a page of its (own) file's window. */
static bool nfs_in_window(const struct nfs_thread *th,
			  const struct nfs_fence *f)
{
	const struct nfs_file *file = &th->file[f->fx];
	uint64_t off = f->m.cpu_mmap_offset;

	return file->win_pages && off >= file->win_off &&
	       off - file->win_off < (uint64_t)file->win_pages * NFS_FENCE_PAGE;
}

static void nfs_op_map_fence(struct nfs_thread *th)
{
	int i, n = 0, pick = -1, fd;
	const struct nfs_fence *f;
	unsigned int r;
	uint64_t off;
	uint8_t *p;

	for (i = 0; i < th->nfence; i++)
		if (th->fence[i].m.cpu_mmap_offset &&
		    !nfs_in_window(th, &th->fence[i]) &&
		    below(&th->rng, ++n) == 0)
			pick = i;
	if (pick < 0) {
		nfs_op_fence_create(th);
		return;
	}
	f = &th->fence[pick];
	fd = th->file[f->fx].fd;
	off = f->m.cpu_mmap_offset;
	r = below(&th->rng, 100);
	if (r < 5) {
		p = nfs_mmap(NFS_FENCE_PAGE, PROT_READ | PROT_WRITE, fd, off);
		if (p && nfs_fence_lived(th, f))
			nfs_anomaly(th, f->fx, "fence %u: a writable mapping of its "
				    "CurrentValue page succeeded", f->handle);
		if (p)
			nfs_munmap(p, NFS_FENCE_PAGE);
		return;
	}
	if (r < 10) {
		int other = nfs_pick_file(th);

		p = nfs_mmap(NFS_FENCE_PAGE, PROT_READ,
			     other >= 0 ? th->file[other].fd : fd,
			     chance(&th->rng, 50) ? off : off + NFS_FENCE_PAGE *
			     (1 + below(&th->rng, 64)));
		if (p)
			nfs_munmap(p, NFS_FENCE_PAGE);
		return;
	}
	if (r < 13) {
		p = nfs_mmap(2 * NFS_FENCE_PAGE, PROT_READ, fd, off);
		if (p)
			nfs_munmap(p, 2 * NFS_FENCE_PAGE);
		return;
	}
	if (f->m.cpu_value_offset >= NFS_FENCE_PAGE ||
	    f->m.cpu_value_offset % 8)
		return;
	p = nfs_mmap(NFS_FENCE_PAGE, PROT_READ, fd, off);
	if (!p)
		return;
	(void)*(const volatile uint64_t *)(p + f->m.cpu_value_offset);
	nfs_add(NFS_CNT_MAP_READ, 1);
	if (chance(&th->rng, 10)) {
		if (!mprotect(p, NFS_FENCE_PAGE, PROT_READ | PROT_WRITE)) {
			if (nfs_fence_lived(th, f))
				nfs_anomaly(th, f->fx, "fence %u: mprotect() made "
					    "its CurrentValue page writable",
					    f->handle);
			mprotect(p, NFS_FENCE_PAGE, PROT_READ);
		}
	}
	nfs_map_add(th, p, NFS_FENCE_PAGE, f->m.cpu_value_offset, true, false);
}

/*
 * Read a page of window mapping @m: mostly the CurrentValue of one of
 * this thread's fences that has a page of it, which must show while the
 * handle lives (a SIGBUS for a handle that still exists afterwards, so
 * existed all along, is an anomaly); else any page, which may show
 * nothing.
 */
static void nfs_window_touch(struct nfs_thread *th, const struct nfs_map *m)
{
	const struct nfs_file *file = &th->file[m->fx];
	const struct nfs_fence *f = NULL;
	uint64_t at;
	int i, n = 0;

	for (i = 0; file->win_off == m->win_off && i < th->nfence; i++) {
		const struct nfs_fence *c = &th->fence[i];

		if (c->fx == m->fx && nfs_in_window(th, c) &&
		    c->m.cpu_mmap_offset - m->win_off < m->len &&
		    c->m.cpu_value_offset < NFS_FENCE_PAGE &&
		    below(&th->rng, ++n) == 0)
			f = c;
	}
	if (!f || chance(&th->rng, 20)) {
		nfs_window_read(m->ptr + NFS_FENCE_PAGE *
				below(&th->rng, m->len / NFS_FENCE_PAGE));
		return;
	}
	at = f->m.cpu_mmap_offset - m->win_off + (f->m.cpu_value_offset & ~7u);
	if (!nfs_window_read(m->ptr + at) && nfs_fence_lived(th, f))
		nfs_anomaly(th, f->fx, "fence %u: its page of the CPU window "
			    "showed nothing while its handle lived", f->handle);
}

/*
 * Read (and, for allocations, write) through some mappings, which must
 * stay valid whatever became of their object or file.
 */
static void nfs_op_map_touch(struct nfs_thread *th)
{
	unsigned int n = 1 + below(&th->rng, 4), k;

	for (k = 0; k < n && th->nmap; k++) {
		const struct nfs_map *m = &th->map[below(&th->rng, th->nmap)];
		size_t span = m->len < (64u << 10) ? m->len : (64u << 10);

		if (m->window) {
			nfs_window_touch(th, m);
			continue;
		}
		size_t off = m->fence ? m->value_off :
			     8 * below(&th->rng, span / 8);
		volatile uint64_t *v = (volatile uint64_t *)(m->ptr + off);

		(void)*v;
		nfs_add(NFS_CNT_MAP_READ, 1);
		if (m->writable && chance(&th->rng, 40)) {
			*v = rnd64(&th->rng);
			nfs_add(NFS_CNT_MAP_WRITE, 1);
		}
	}
}

static void nfs_op_munmap(struct nfs_thread *th)
{
	int i;

	if (!th->nmap)
		return;
	i = below(&th->rng, th->nmap);
	nfs_munmap(th->map[i].ptr, th->map[i].len);
	th->map[i] = th->map[--th->nmap];
}

/* Send a fence fd to a worker's mailbox (maybe our own). */
static void nfs_op_fd_send(struct nfs_thread *th)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct nfs_mail mail;
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	int i, to;

	if (!th->nheld) {
		nfs_op_fence_share(th);
		return;
	}
	i = below(&th->rng, th->nheld);
	to = below(&th->rng, cfg.procs);
	memset(&mail, 0, sizeof(mail));
	mail.magic = NFS_MAIL_MAGIC;
	mail.adapter = th->held[i].adapter;
	mail.cross = th->held[i].cross;
	mail.from = wk.slot;
	iov.iov_base = &mail;
	iov.iov_len = sizeof(mail);
	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &th->held[i].fd, sizeof(int));
	if (sendmsg(cfg.mailbox[to][1], &msg, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(mail)) {
		nfs_add(NFS_CNT_FD_DROPPED, 1);
		return;
	}
	nfs_add(NFS_CNT_FD_SENT, 1);
	/* Mostly let go of it: the fd in flight keeps the fence alive. */
	if (chance(&th->rng, 60)) {
		close(th->held[i].fd);
		th->held[i] = th->held[--th->nheld];
	}
}

/* Take a fence fd from our mailbox, and mostly open it at once. */
static void nfs_op_fd_recv(struct nfs_thread *th)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct nfs_mail mail;
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	ssize_t n;
	int fd = -1;

	iov.iov_base = &mail;
	iov.iov_len = sizeof(mail);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	n = recvmsg(cfg.mailbox[wk.slot][0], &msg,
		    MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k, nfd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + k * sizeof(int),
			       sizeof(int));
			if (fd < 0)
				fd = got;
			else
				close(got);
		}
	}
	if (fd < 0)
		return;
	if (n != (ssize_t)sizeof(mail) || mail.magic != NFS_MAIL_MAGIC ||
	    mail.adapter < 0 || mail.adapter >= cfg.adapters) {
		close(fd);
		return;
	}
	nfs_add(NFS_CNT_FD_RECEIVED, 1);
	nfs_hold_fd(th, fd, mail.adapter, mail.cross);
	if (chance(&th->rng, 70))
		nfs_fence_open(th, fd, mail.adapter, mail.cross);
}

/* An ioctl whose argument itself cannot be read or written: -EFAULT. */
static void nfs_op_bad_arg(struct nfs_thread *th)
{
	enum nfs_io_type io = below(&th->rng, NFS_IO_COUNT);
	int fx = nfs_pick_file(th);
	uint64_t p;

	if (fx < 0)
		return;
	/*
	 * A read-only page as an in/out argument reads as zeros: the call
	 * may then act (a device made whose handle cannot be returned)
	 * before the copy out fails.
	 */
	p = nfs_bad_ptr(th, _IOC_DIR(nfs_io[io].request) & _IOC_READ);
	nfs_ioctl_arg(th, io, th->file[fx].fd, (void *)(uintptr_t)p, false);
}

static void nfs_op_eventfd_drain(struct nfs_thread *th)
{
	uint64_t v;
	int i;

	for (i = 0; i < 2; i++)
		if (th->efd[i] >= 0 && read(th->efd[i], &v, sizeof(v)) < 0 &&
		    errno != EAGAIN)
			nfs_thread_msg(th, "eventfd read: %s", strerror(errno));
}

static int nfs_open_node(int adapter)
{
	return open(cfg.node[adapter], O_RDWR | O_CLOEXEC);
}

/* Close one of this thread's own render fds and open it again. */
static void nfs_op_reopen(struct nfs_thread *th)
{
	int fx = 2 * below(&th->rng, cfg.adapters);	/* own: even */
	struct nfs_file *f = &th->file[fx];

	if (f->fd >= 0)
		close(f->fd);
	nfs_forget(th, fx, 0);
	f->fd = nfs_open_node(f->adapter);
	f->async = 0;
	f->win_pages = 0;
	nfs_add(NFS_CNT_REOPEN, 1);
}

/*
 * Replace the process's shared render fd of an adapter: dup2() swaps the
 * file under every thread at once, and each thread forgets what it had
 * there when it sees the new generation (nfs_sync_shared()).
 */
static void nfs_op_reopen_shared(struct nfs_thread *th)
{
	int a = below(&th->rng, cfg.adapters), fd;

	fd = nfs_open_node(a);
	if (fd < 0)
		return;
	/* Odd while the file changes: see nfs_file_settled(). */
	__atomic_add_fetch(&wk.shared_gen[a], 1, __ATOMIC_SEQ_CST);
	if (dup2(fd, wk.shared_fd[a]) >= 0) {
		__atomic_store_n(&wk.shared_async[a], 0, __ATOMIC_RELAXED);
		nfs_add(NFS_CNT_REOPEN_SHARED, 1);
	}
	__atomic_add_fetch(&wk.shared_gen[a], 1, __ATOMIC_SEQ_CST);
	close(fd);
}

static void nfs_sync_shared(struct nfs_thread *th)
{
	int fx;

	for (fx = 1; fx < th->nfile; fx += 2) {
		struct nfs_file *f = &th->file[fx];
		unsigned int gen = __atomic_load_n(&wk.shared_gen[f->adapter],
						   __ATOMIC_ACQUIRE);

		if (gen != f->gen) {
			nfs_forget(th, fx, 0);
			f->gen = gen;
		}
	}
}

/*
 * A fork child: it shares this thread's files (and so their handles) and
 * inherits its fence fds; it opens, signals, waits for (briefly), maps and
 * closes fences and exits. Only system calls and this thread's own state:
 * the other threads may have held any lock at the fork.
 */
static void __attribute__((noreturn))
nfs_child(struct nfs_thread *th, uint64_t seed, pid_t parent)
{
	unsigned int n, k;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	th->child = true;
	th->have_timer = false;
	th->max_wait_ns = NFS_CHILD_WAIT_MAX_NS;
	th->rng.s = seed;
	n = 1 + below(&th->rng, 6);
	for (k = 0; k < n; k++) {
		switch (below(&th->rng, 7)) {
		case 0:
		case 1:
			nfs_op_fence_open(th);
			break;
		case 2:
			nfs_op_fence_signal(th);
			break;
		case 3:
			nfs_op_fence_wait(th);
			break;
		case 4:
			nfs_op_map_fence(th);
			nfs_op_map_touch(th);
			break;
		case 5:
			nfs_op_fence_destroy(th);
			break;
		default:
			nfs_op_query(th);
			break;
		}
	}
	_exit(0);
}

/*
 * Give one of this thread's own files its window (a few pages, so that it
 * fills and its handles also get pages of their own), or try with bad
 * arguments, or a second time; map it, or a prefix of it, for
 * nfs_op_map_touch() to read while handles come and go.
 */
static void nfs_op_window(struct nfs_thread *th)
{
	int fx = 2 * below(&th->rng, cfg.adapters);	/* own: even */
	struct nfs_file *f = &th->file[fx];
	struct drm_nfence_fence_window w;
	unsigned int r = below(&th->rng, 100);
	bool bad = false;
	size_t len;
	void *p;

	if (f->fd < 0)
		return;
	memset(&w, 0, sizeof(w));
	w.pages = 1 + below(&th->rng, NFS_WINDOW_PAGES);
	if (r < 10) {
		w.flags = rnd32(&th->rng) | 1;
		bad = true;
	} else if (r < 15) {
		w.pages = chance(&th->rng, 50) ? 0 :
			  DRM_NFENCE_FENCE_WINDOW_MAX_PAGES + 1 +
			  below(&th->rng, 1000);
		bad = true;
	}
	if (!nfs_ioctl(th, NFS_IO_FENCE_WINDOW, f->fd, &w)) {
		if (bad || f->win_pages)
			nfs_anomaly(th, fx, "a window was made with pages %u, "
				    "flags %#x, on a file that had %u",
				    w.pages, w.flags, f->win_pages);
		f->win_off = w.mmap_offset;
		f->win_pages = w.pages;
	}
	if (!f->win_pages || f->win_off > (uint64_t)INT64_MAX)
		return;
	len = (size_t)(1 + below(&th->rng, f->win_pages)) * NFS_FENCE_PAGE;
	p = nfs_mmap(len, PROT_READ, f->fd, f->win_off);
	if (!p) {
		nfs_anomaly(th, fx, "the window of %u pages could not be "
			    "mapped: %s", f->win_pages, strerror(errno));
		return;
	}
	nfs_map_add(th, p, len, 0, false, false);
	th->map[th->nmap - 1].window = true;
	th->map[th->nmap - 1].fx = fx;
	th->map[th->nmap - 1].win_off = f->win_off;
}

static void nfs_op_fork(struct nfs_thread *th)
{
	uint64_t seed = rnd64(&th->rng), deadline;
	pid_t parent = getpid(), pid;
	bool killed = false, done;
	int status = 0;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0)
		nfs_child(th, seed, parent);
	nfs_add(NFS_CNT_FORK, 1);
	deadline = nfs_now_ns() + NFS_CHILD_MAX_MS * NSEC_PER_MSEC;
	while (!(done = waitpid(pid, &status, WNOHANG) == pid) &&
	       nfs_now_ns() < deadline)
		nfs_sleep_ns(NSEC_PER_MSEC);
	if (!done) {
		kill(pid, SIGKILL);
		killed = true;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		nfs_add(NFS_CNT_FORK_KILLED, 1);
	}
	if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	nfs_add(NFS_CNT_FORK_BAD, 1);
	if (WIFSIGNALED(status))
		nfs_thread_msg(th, "fork child %d died of signal %d (%s)", pid,
			       WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		nfs_thread_msg(th, "fork child %d exited with %d", pid,
			       WEXITSTATUS(status));
}

struct nfs_op {
	void (*fn)(struct nfs_thread *th);
	unsigned int weight;
};

/* What a thread does, and how often (weights out of their sum). */
static const struct nfs_op nfs_ops[] = {
	{ nfs_op_query, 150 },
	{ nfs_op_device_create, 100 },
	{ nfs_op_device_destroy, 40 },
	{ nfs_op_fence_create, 450 },
	{ nfs_op_fence_destroy, 280 },
	{ nfs_op_fence_share, 220 },
	{ nfs_op_fence_open, 260 },
	{ nfs_op_fence_wait, 650 },
	{ nfs_op_fence_signal, 650 },
	{ nfs_op_alloc_create, 280 },
	{ nfs_op_alloc_destroy, 200 },
	{ nfs_op_alloc_lock, 220 },
	{ nfs_op_context_create, 180 },
	{ nfs_op_context_destroy, 60 },
	{ nfs_op_context_control, 220 },
	{ nfs_op_hwqueue_create, 170 },
	{ nfs_op_hwqueue_destroy, 60 },
	{ nfs_op_submit, 1000 },
	{ nfs_op_submit_wait, 260 },
	{ nfs_op_submit_signal, 260 },
	{ nfs_op_cs_rewrite, 40 },
	{ nfs_op_map_fence, 220 },
	{ nfs_op_map_touch, 280 },
	{ nfs_op_munmap, 120 },
	{ nfs_op_fd_send, 110 },
	{ nfs_op_fd_recv, 180 },
	{ nfs_op_bad_arg, 90 },
	{ nfs_op_eventfd_drain, 40 },
	{ nfs_op_reopen, 8 },
	{ nfs_op_reopen_shared, 3 },
	{ nfs_op_window, 6 },
	{ nfs_op_fork, 15 },
};

static void nfs_thread_setup(struct nfs_thread *th)
{
	int a;

	th->max_wait_ns = NFS_WAIT_MAX_NS;
	th->efd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	th->efd[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	th->nfile = 2 * cfg.adapters;
	for (a = 0; a < cfg.adapters; a++) {
		struct nfs_file *own = &th->file[2 * a];
		struct nfs_file *shared = &th->file[2 * a + 1];

		own->adapter = a;
		own->fd = nfs_open_node(a);
		if (own->fd < 0)
			nfs_thread_msg(th, "%s: %s", cfg.node[a],
				       strerror(errno));
		shared->adapter = a;
		shared->shared = true;
		shared->fd = wk.shared_fd[a];
		shared->gen = __atomic_load_n(&wk.shared_gen[a],
					      __ATOMIC_ACQUIRE);
	}
	nfs_guard_init(th);
}

static void *nfs_thread_main(void *arg)
{
	struct nfs_thread *th = arg;
	unsigned int total = 0, i;
	int fx;

	nfs_thread_setup(th);
	for (i = 0; i < ARRAY_SIZE(nfs_ops); i++)
		total += nfs_ops[i].weight;
	for (;;) {
		unsigned int r = below(&th->rng, total);

		nfs_sync_shared(th);
		/* An own render fd that could not be reopened: try again. */
		for (fx = 0; fx < th->nfile; fx += 2)
			if (th->file[fx].fd < 0) {
				th->file[fx].fd = nfs_open_node(th->file[fx].adapter);
				th->file[fx].win_pages = 0;
			}
		for (i = 0; r >= nfs_ops[i].weight; i++)
			r -= nfs_ops[i].weight;
		nfs_ops[i].fn(th);
	}
	return NULL;
}

/* Ask the adapter behind @fd what the workers need to know. */
static void nfs_adapter_info(struct nfs_thread *th, int fd,
			     struct nfs_adapter_info *ai)
{
	struct drm_nfence_query_adapter adapter;
	struct drm_nfence_query q;

	memset(&adapter, 0, sizeof(adapter));
	memset(&q, 0, sizeof(q));
	q.type = DRM_NFENCE_QUERY_ADAPTER;
	q.size = sizeof(adapter);
	q.data = (uintptr_t)&adapter;
	ai->num_engines = 1;
	ai->flags = 0;
	if (nfs_ioctl(th, NFS_IO_QUERY, fd, &q))
		return;
	ai->num_engines = adapter.num_engines ?: 1;
	ai->flags = adapter.flags;
}

static void __attribute__((noreturn)) nfs_worker(int slot, int gen)
{
	struct nfs_thread *threads;
	struct sigaction sa;
	pthread_t tid;
	int a, t;

	/* Its own process group, so that its fork children die with it. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != cfg.supervisor)
		_exit(0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* No SA_RESTART: the guard timer's signal interrupts the ioctl. */
	sa.sa_handler = nfs_guard_handler;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = nfs_window_bus;
	sigaction(SIGBUS, &sa, NULL);

	wk.slot = slot;
	wk.gen = gen;
	wk.seed = nfs_mix(nfs_mix(cfg.seed, slot + 1), gen + 1);
	threads = calloc(cfg.threads, sizeof(*threads));
	if (!threads) {
		nfs_msg("worker %d.%d: out of memory", slot, gen);
		_exit(3);
	}
	for (t = 0; t < cfg.threads; t++) {
		threads[t].index = t;
		threads[t].rng.s = nfs_mix(wk.seed, 0x100 + t);
		threads[t].efd[0] = -1;
		threads[t].efd[1] = -1;
	}
	for (a = 0; a < cfg.adapters; a++) {
		wk.shared_fd[a] = nfs_open_node(a);
		if (wk.shared_fd[a] < 0) {
			nfs_msg("worker %d.%d: %s: %s", slot, gen, cfg.node[a],
				strerror(errno));
			_exit(3);
		}
		nfs_adapter_info(&threads[0], wk.shared_fd[a], &wk.info[a]);
	}
	for (t = 1; t < cfg.threads; t++) {
		int err = pthread_create(&tid, NULL, nfs_thread_main,
					 &threads[t]);

		if (err) {
			nfs_msg("worker %d.%d: pthread_create: %s", slot, gen,
				strerror(err));
			_exit(3);
		}
	}
	nfs_thread_main(&threads[0]);
	_exit(3);
}

/* Supervisor side. */

struct nfs_proc {
	pid_t pid;		/* 0: a free record */
	int slot;
	int gen;
	bool killed;		/* SIGKILLed by the supervisor */
};

static struct nfs_supervisor {
	struct nfs_proc proc[NFS_MAX_PROC_RECORDS];
	pid_t live[NFS_MAX_PROCS];	/* the worker of each slot */
	int gen[NFS_MAX_PROCS];
	uint64_t kills;
	uint64_t spawned;
	uint64_t bad_deaths;		/* workers */
	uint64_t bad_orphans;		/* fork children of dead workers */
	uint64_t stuck;
	struct nfs_rng rng;
} sv;

static volatile sig_atomic_t nfs_interrupted;

static void nfs_interrupt(int sig)
{
	(void)sig;
	nfs_interrupted = 1;
}

static void nfs_spawn(int slot)
{
	int i;
	pid_t pid;

	for (i = 0; i < NFS_MAX_PROC_RECORDS && sv.proc[i].pid; i++)
		;
	if (i == NFS_MAX_PROC_RECORDS) {
		sv.live[slot] = 0;	/* retried once records are reaped */
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		nfs_msg("fork: %s", strerror(errno));
		sv.live[slot] = 0;
		return;
	}
	if (pid == 0)
		nfs_worker(slot, sv.gen[slot]);
	setpgid(pid, pid);
	sv.proc[i].pid = pid;
	sv.proc[i].slot = slot;
	sv.proc[i].gen = sv.gen[slot];
	sv.proc[i].killed = false;
	sv.live[slot] = pid;
	sv.spawned++;
}

static void nfs_kill(struct nfs_proc *p)
{
	if (p->killed)
		return;
	p->killed = true;
	/* The worker and its fork children. */
	if (kill(-p->pid, SIGKILL) < 0)
		kill(p->pid, SIGKILL);
}

static struct nfs_proc *nfs_find_proc(pid_t pid)
{
	int i;

	for (i = 0; i < NFS_MAX_PROC_RECORDS; i++)
		if (sv.proc[i].pid == pid)
			return &sv.proc[i];
	return NULL;
}

static void nfs_describe_status(int status, char *buf, size_t size)
{
	if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "exit %d", WEXITSTATUS(status));
}

/*
 * Reap what has died: workers (respawned while @respawn, unless the
 * supervisor killed them, in which case it already has) and, since the
 * supervisor is their subreaper, the fork children of dead workers.
 * Returns false once there are no children left at all.
 */
static bool nfs_reap(bool respawn)
{
	char what[96];
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct nfs_proc *p = nfs_find_proc(pid);
		bool sigkill = WIFSIGNALED(status) &&
			       WTERMSIG(status) == SIGKILL;

		nfs_describe_status(status, what, sizeof(what));
		if (!p) {
			/* An orphaned fork child; SIGKILL came with its worker. */
			if (sigkill ||
			    (WIFEXITED(status) && !WEXITSTATUS(status)))
				continue;
			sv.bad_orphans++;
			nfs_msg("fork child %d of a dead worker died: %s", pid,
				what);
			continue;
		}
		if (!p->killed || !sigkill) {
			/* Not our SIGKILL (a fault, the OOM killer, ...). */
			sv.bad_deaths++;
			nfs_msg("worker %d.%d (pid %d) died: %s%s", p->slot,
				p->gen, pid, what,
				p->killed ? " (while being killed)" : "");
		}
		if (sv.live[p->slot] == pid) {
			sv.live[p->slot] = 0;
			if (respawn) {
				sv.gen[p->slot]++;
				nfs_spawn(p->slot);
			}
		}
		p->pid = 0;
	}
	return !(pid < 0 && errno == ECHILD);
}

static uint64_t nfs_kill_delay(void)
{
	return (NFS_KILL_MIN_MS +
		below(&sv.rng, NFS_KILL_MAX_MS - NFS_KILL_MIN_MS + 1)) *
	       NSEC_PER_MSEC;
}

/* Fork the workers, kill and replace them at random until the end. */
static void nfs_supervise(void)
{
	uint64_t start = nfs_now_ns(), end, next_kill, deadline, now;
	int slot;

	end = start + (uint64_t)cfg.duration * NSEC_PER_SEC;
	next_kill = start + nfs_kill_delay();
	for (slot = 0; slot < cfg.procs; slot++)
		nfs_spawn(slot);
	while (!nfs_interrupted && (now = nfs_now_ns()) < end) {
		nfs_reap(true);
		for (slot = 0; slot < cfg.procs; slot++)
			if (!sv.live[slot]) {
				sv.gen[slot]++;
				nfs_spawn(slot);
			}
		if (now >= next_kill) {
			struct nfs_proc *p;

			slot = below(&sv.rng, cfg.procs);
			p = sv.live[slot] ? nfs_find_proc(sv.live[slot]) : NULL;
			if (p) {
				nfs_kill(p);
				sv.kills++;
				sv.live[slot] = 0;
				sv.gen[slot]++;
				nfs_spawn(slot);
			}
			next_kill = now + nfs_kill_delay();
		}
		deadline = next_kill < end ? next_kill : end;
		nfs_sleep_ns(deadline - now < 10 * NSEC_PER_MSEC ?
			     deadline - now : 10 * NSEC_PER_MSEC);
	}

	/* The end: SIGKILL everything, and wait (not forever) for it. */
	for (slot = 0; slot < NFS_MAX_PROC_RECORDS; slot++)
		if (sv.proc[slot].pid)
			nfs_kill(&sv.proc[slot]);
	deadline = nfs_now_ns() + NFS_REAP_GRACE_MS * NSEC_PER_MSEC;
	while (nfs_reap(false) && nfs_now_ns() < deadline)
		nfs_sleep_ns(5 * NSEC_PER_MSEC);
	for (slot = 0; slot < NFS_MAX_PROC_RECORDS; slot++) {
		if (!sv.proc[slot].pid)
			continue;
		sv.stuck++;
		nfs_msg("worker %d.%d (pid %d) still not gone %d s after "
			"SIGKILL (stuck in the kernel?)", sv.proc[slot].slot,
			sv.proc[slot].gen, sv.proc[slot].pid,
			NFS_REAP_GRACE_MS / 1000);
	}
	if (nfs_interrupted)
		nfs_msg("interrupted after %.1f s of %d",
			(nfs_now_ns() - start) / 1e9, cfg.duration);
}

/* Print the counts; returns the number of failed checks. */
static uint64_t nfs_summary(void)
{
	uint64_t total = 0, unexpected = 0, never = 0, failures;
	int io, e;

	printf(NFS_NAME ": summary (results per ioctl; \"unexpected\": an "
	       "errno the uapi header does not document for that ioctl)\n");
	for (io = 0; io < NFS_IO_COUNT; io++) {
		uint64_t issued = __atomic_load_n(&stats->issued[io],
						  __ATOMIC_RELAXED);
		uint64_t counted = 0;

		total += issued;
		printf("  %-16s %12" PRIu64 " issued\n", nfs_io[io].name,
		       issued);
		if (!issued) {
			never++;
			printf("      never issued\n");
		}
		for (e = 0; e <= NFS_ERRNO_SLOTS; e++) {
			uint64_t n = __atomic_load_n(&stats->result[io][e],
						     __ATOMIC_RELAXED);
			const char *name = e < NFS_ERRNO_SLOTS ?
					   nfs_errno_name(e) : NULL;
			bool doc = e < NFS_ERRNO_SLOTS && nfs_documented(io, e);
			char buf[32];

			if (!n)
				continue;
			counted += n;
			if (!name) {
				if (e < NFS_ERRNO_SLOTS)
					snprintf(buf, sizeof(buf), "errno %d", e);
				else
					snprintf(buf, sizeof(buf), "errno >= %d",
						 NFS_ERRNO_SLOTS);
				name = buf;
			}
			printf("      %-22s %12" PRIu64 "%s\n", name, n,
			       doc ? "" : "  unexpected (not documented)");
			if (!doc)
				unexpected += n;
		}
		if (issued > counted)
			printf("      %-22s %12" PRIu64 "\n",
			       "(killed in the call)", issued - counted);
	}
	printf("  mmaps %" PRIu64 " (%" PRIu64 " failed, most on purpose), "
	       "munmaps %" PRIu64 ", mapped reads %" PRIu64 ", mapped writes %"
	       PRIu64 "\n", nfs_get(NFS_CNT_MMAP), nfs_get(NFS_CNT_MMAP_FAILED),
	       nfs_get(NFS_CNT_MUNMAP), nfs_get(NFS_CNT_MAP_READ),
	       nfs_get(NFS_CNT_MAP_WRITE));
	printf("  fd passes: %" PRIu64 " sent, %" PRIu64 " received, %" PRIu64
	       " dropped (mailbox full); fork children %" PRIu64 " (%" PRIu64
	       " killed slow, %" PRIu64 " died badly)\n",
	       nfs_get(NFS_CNT_FD_SENT), nfs_get(NFS_CNT_FD_RECEIVED),
	       nfs_get(NFS_CNT_FD_DROPPED), nfs_get(NFS_CNT_FORK),
	       nfs_get(NFS_CNT_FORK_KILLED), nfs_get(NFS_CNT_FORK_BAD));
	printf("  render nodes reopened: %" PRIu64 " own, %" PRIu64 " shared; "
	       "queued command buffers rewritten: %" PRIu64 "\n",
	       nfs_get(NFS_CNT_REOPEN), nfs_get(NFS_CNT_REOPEN_SHARED),
	       nfs_get(NFS_CNT_CS_REWRITE));
	printf("  CPU window pages read: %" PRIu64 " (%" PRIu64 " showing "
	       "nothing: SIGBUS)\n", nfs_get(NFS_CNT_WINDOW_READ),
	       nfs_get(NFS_CNT_WINDOW_BUS));
	printf("  kills %" PRIu64 ", workers started %" PRIu64 ", workers that "
	       "died otherwise %" PRIu64 " (and their fork children %" PRIu64
	       "), stuck %" PRIu64 "\n", sv.kills, sv.spawned, sv.bad_deaths,
	       sv.bad_orphans, sv.stuck);
	printf("  mapping and result checks failed: %" PRIu64 " (%" PRIu64
	       " not made: a shared render node replaced under the call)\n",
	       nfs_get(NFS_CNT_ANOMALY), nfs_get(NFS_CNT_ANOMALY_SKIPPED));
	if (nfs_get(NFS_CNT_ANOMALY))
		printf("  the first: %s\n", stats->first_anomaly);

	failures = unexpected + never + sv.bad_deaths + sv.bad_orphans +
		   sv.stuck + nfs_get(NFS_CNT_ANOMALY) +
		   nfs_get(NFS_CNT_FORK_BAD);
	printf(NFS_NAME ": %" PRIu64 " ioctls, %" PRIu64 " unexpected, %"
	       PRIu64 " kills, exit %d\n", total, failures, sv.kills,
	       failures ? 1 : 0);
	fflush(stdout);
	return failures;
}

/* The nfence render nodes, by adapter index; how many there are. */
static int nfs_find_adapters(char nodes[][64], int max)
{
	struct {
		char path[64];
		uint32_t index;
	} found[NFS_MAX_ADAPTERS * 4];
	int n = 0, i, j;
	struct dirent *de;
	DIR *dir;

	dir = opendir(NFS_DRI_DIR);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < (int)ARRAY_SIZE(found)) {
		struct drm_nfence_query_adapter adapter;
		struct drm_nfence_query q;
		drmVersionPtr version;
		bool ours;
		int fd;

		if (strncmp(de->d_name, "renderD", 7) ||
		    strlen(de->d_name) > 32)
			continue;
		snprintf(found[n].path, sizeof(found[n].path),
			 NFS_DRI_DIR "/%.32s", de->d_name);
		fd = open(found[n].path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		version = drmGetVersion(fd);
		ours = version && version->name &&
		       !strcmp(version->name, NFS_DRIVER_NAME);
		drmFreeVersion(version);
		memset(&adapter, 0, sizeof(adapter));
		memset(&q, 0, sizeof(q));
		q.type = DRM_NFENCE_QUERY_ADAPTER;
		q.size = sizeof(adapter);
		q.data = (uintptr_t)&adapter;
		if (ours && !drmIoctl(fd, DRM_IOCTL_NFENCE_QUERY, &q)) {
			found[n].index = adapter.index;
			n++;
		}
		close(fd);
	}
	closedir(dir);
	/* By adapter index. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && found[j].index < found[j - 1].index; j--) {
			typeof(found[0]) tmp = found[j];

			found[j] = found[j - 1];
			found[j - 1] = tmp;
		}
	for (i = 0; i < n && i < max; i++)
		memcpy(nodes[i], found[i].path, sizeof(nodes[i]));
	return n;
}

static void nfs_usage(FILE *out)
{
	fprintf(out,
"usage: " NFS_NAME " [-p PROCS] [-t THREADS] [-d SECONDS] [-s SEED]\n"
"                     [-a ADAPTERS]\n"
"\n"
"Random-ioctl stress of the nfence driver. A supervisor forks PROCS worker\n"
"processes of THREADS threads each; every thread drives every nfence ioctl\n"
"with random valid and invalid arguments on render nodes of the first\n"
"ADAPTERS nfence adapters (its own fds and its process's shared ones, both\n"
"closed and reopened now and then), runs GPU work that may fault, maps and\n"
"reads fence and allocation memory, passes fence fds to other workers over\n"
"unix sockets and to fork children. At random times the supervisor kills a\n"
"worker with SIGKILL and forks a replacement; at the end it kills them all\n"
"and prints every ioctl's results per errno.\n"
"\n"
"  -p PROCS     worker processes (default 8, at most %d)\n"
"  -t THREADS   threads per worker (default 4, at most %d)\n"
"  -d SECONDS   duration (default 60)\n"
"  -s SEED      PRNG seed, decimal or 0x hex (default: random, printed)\n"
"  -a ADAPTERS  adapters to use (default 2, at most %d); fewer: exit 2\n"
"  -h, --help   this text\n"
"\n"
"Each thread's choices come from a PRNG seeded from (SEED, worker slot,\n"
"generation, thread), the kill times from SEED: the same seed gives the\n"
"same choices for the same results, but thread interleavings and where a\n"
"kill lands in a worker's sequence cannot be replayed, so a run is not\n"
"reproduced exactly.\n"
"\n"
"Exit status: 0 when every check passed; 1 when an ioctl returned an errno\n"
"the uapi header (include/uapi/drm/nfence_drm.h) does not document for it\n"
"(a strict check), a worker or fork child died of anything but the\n"
"supervisor's SIGKILL, a mapping check failed, a worker could not be reaped,\n"
"or an ioctl was never issued; 2 for a bad command line or too few nfence\n"
"adapters. Blocking waits have deadlines at most 50 ms ahead, blocked ioctls\n"
"are interrupted by a timer, and the supervisor exits at most %d s after\n"
"the duration.\n",
		NFS_MAX_PROCS, NFS_MAX_THREADS, NFS_MAX_ADAPTERS,
		NFS_REAP_GRACE_MS / 1000);
}

static void nfs_usage_short(void)
{
	fprintf(stderr, "usage: " NFS_NAME " [-p PROCS] [-t THREADS] "
		"[-d SECONDS] [-s SEED] [-a ADAPTERS]; see --help\n");
}

static bool nfs_parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	struct rlimit rl;
	bool have_seed = false;
	int opt, found, i;
	char *end;

	cfg.procs = 8;
	cfg.threads = 4;
	cfg.duration = 60;
	cfg.adapters = 2;
	while ((opt = getopt_long(argc, argv, "p:t:d:s:a:h", longopts,
				  NULL)) != -1) {
		bool ok = true;

		switch (opt) {
		case 'p':
			ok = nfs_parse_int(optarg, 1, NFS_MAX_PROCS, &cfg.procs);
			break;
		case 't':
			ok = nfs_parse_int(optarg, 1, NFS_MAX_THREADS,
					   &cfg.threads);
			break;
		case 'd':
			ok = nfs_parse_int(optarg, 1, NFS_MAX_DURATION,
					   &cfg.duration);
			break;
		case 'a':
			ok = nfs_parse_int(optarg, 1, NFS_MAX_ADAPTERS,
					   &cfg.adapters);
			break;
		case 's':
			errno = 0;
			cfg.seed = strtoull(optarg, &end, 0);
			ok = !errno && end != optarg && !*end;
			have_seed = true;
			break;
		case 'h':
			nfs_usage(stdout);
			return 0;
		default:
			nfs_usage_short();
			return 2;
		}
		if (!ok) {
			nfs_msg("bad value for -%c: %s", opt, optarg);
			nfs_usage_short();
			return 2;
		}
	}
	if (optind < argc) {
		nfs_msg("unexpected argument: %s", argv[optind]);
		nfs_usage_short();
		return 2;
	}

	found = nfs_find_adapters(cfg.node, NFS_MAX_ADAPTERS);
	if (!found) {
		nfs_msg("no nfence adapter (no render node of driver \"%s\" "
			"in " NFS_DRI_DIR "; is the module loaded?)",
			NFS_DRIVER_NAME);
		return 2;
	}
	if (found < cfg.adapters) {
		nfs_msg("%d nfence adapter%s, %d requested (-a)", found,
			found == 1 ? "" : "s", cfg.adapters);
		return 2;
	}

	if (!have_seed && getrandom(&cfg.seed, sizeof(cfg.seed), 0) !=
	    sizeof(cfg.seed))
		cfg.seed = nfs_now_ns() ^ ((uint64_t)getpid() << 32);
	printf(NFS_NAME ": seed 0x%" PRIx64 " (replay with -s 0x%" PRIx64 ")\n",
	       cfg.seed, cfg.seed);
	printf(NFS_NAME ": %d adapter%s (", cfg.adapters,
	       cfg.adapters == 1 ? "" : "s");
	for (i = 0; i < cfg.adapters; i++)
		printf("%s%s", i ? ", " : "", cfg.node[i]);
	printf("), %d processes x %d threads, %d s\n", cfg.procs, cfg.threads,
	       cfg.duration);
	fflush(stdout);

	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	nfs_none_page = mmap(NULL, NFS_PAGE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	nfs_ro_page = mmap(NULL, NFS_PAGE, PROT_READ,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stats == MAP_FAILED || nfs_none_page == MAP_FAILED ||
	    nfs_ro_page == MAP_FAILED) {
		nfs_msg("mmap: %s", strerror(errno));
		return 2;
	}
	for (i = 0; i < cfg.procs; i++) {
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0,
			       cfg.mailbox[i])) {
			nfs_msg("socketpair: %s", strerror(errno));
			return 2;
		}
	}
	/* Many workers and threads hold many fds: no EMFILE on the way. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	cfg.supervisor = getpid();
	sv.rng.s = nfs_mix(cfg.seed, 0x5eed5eed);
	/* Orphaned fork children come back to the supervisor to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nfs_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	nfs_supervise();

	for (i = 0; i < cfg.procs; i++) {
		close(cfg.mailbox[i][0]);
		close(cfg.mailbox[i][1]);
	}
	return nfs_summary() ? 1 : 0;
}
