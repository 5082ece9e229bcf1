/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-cpu-bench: the CPU side of native fences next to what a Linux
 * program would otherwise use, measured in one run on the first adapter
 * with native fences, each result with its ratio to baselines measured in
 * the same run:
 *
 *  1) wake latency: a ping-pong between two threads, then between two
 *     processes (fork; the child opens what it needs on files of its
 *     own), each side signaling from the CPU what the other waits for,
 *     through
 *       native   two native fences: D3DKMTSignalSynchronizationObjectFromCpu
 *                and the blocking D3DKMTWaitForSynchronizationObjectFromCpu
 *       native+poll  the same signal; the wait an asynchronous one on an
 *                eventfd (hAsyncEvent), then poll() and read() it
 *       futex    a 32-bit word each (the floor): store, FUTEX_WAKE;
 *                FUTEX_WAIT while below the value
 *       futex+ioctl  the futex ping-pong with a DRM ioctl's floor (see
 *                below) before each futex call: two ioctls a hop, as a
 *                signal ioctl and a wait ioctl make, so the floor of any
 *                wait whose signal and wait are DRM ioctls
 *       syncobj  two drm_syncobj timelines on the same nfence render node:
 *                DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL and _WAIT (WAIT_FOR_SUBMIT)
 *       eventfd  an eventfd each: write(1), read()
 *     Round trips per second, the best of three calibrated runs after a
 *     warm-up (run k of every mechanism before run k + 1 of any, so that a
 *     slow spell of the host weighs on all alike), and the ratios
 *     native/futex and native/syncobj (the goal: a round trip at most 1.2x
 *     the futex's, so a rate ratio >= 0.83x, and no slower than the
 *     syncobj, >= 1x), futex+ioctl/futex (how far the
 *     DRM ioctl path alone is from the futex) and native/futex+ioctl (what
 *     nfence adds to that path). Then what each call costs where
 *     nothing sleeps (a signal nobody waits for, a wait already reached,
 *     a DRM ioctl that its first check refuses, and an ioctl on a file
 *     that has none), in ns, best of three.
 *  2) waiter scaling on the driver: with 10, 1,000 and 100,000
 *     asynchronous waiters outstanding (values nothing reaches; 4,096
 *     pending per file is the uapi's limit and libnfence has one file per
 *     adapter and process, so they are held by helper processes, 4,096
 *     each), all on one fence or spread over as many fences as waiters, at
 *     most 10,000, the per-operation cost, on a fence that has its share
 *     of them, of adding a waiter (an asynchronous wait on an eventfd), of
 *     a CPU signal that wakes one of them (which completes the wait and
 *     signals its eventfd) and of a CPU signal that wakes none. Batches of
 *     8 of each, timed per batch, the best of three runs after a warm-up;
 *     the ratio of the cost at 100,000 waiters to that at 10 (the issue's
 *     goal: 3x at most).
 *  3) fan-out: 1, 64 and 1,024 threads blocked on one native fence value
 *     (then on one syncobj timeline point, then a futex word), all seen
 *     asleep in /proc; one signal; the time from just before the signal
 *     until the last thread has run. The best and the median of several
 *     rounds after a warm-up one; the ratio native/syncobj (the goal: no
 *     slower than the syncobj with 64 and 1,024 threads, <= 1x).
 *  4) memory: kernel memory (/proc/meminfo Slab, and MemFree for all of
 *     it, fence pages and page tables included) per native fence with
 *     100,000 of them in one helper process (one file, as a D3D12 process
 *     holds them; the goal: 100,000 in one process), per opened instance
 *     (100,000 shared fences, each opened on a file other than its
 *     creator's, in helper processes of 8,192: their creators hold an NT
 *     handle each), each measured against the helpers with their files
 *     open and, for the instances, the shared fences already created; and
 *     per drm_syncobj (100,000 on one file, and a timeline point on each);
 *     then the fence limit per file (module parameter client_fences: with
 *     one, how many fences a process creates on the adapter before the
 *     first error, and which); and the goal: at most 512 bytes of slab per
 *     native fence and per opened instance.
 *
 * Every result is printed as it comes and, with -o FILE, appended to FILE
 * as CSV (part,name,param,value,unit) for scripts/nfence-cpu-bench-plot.py
 * (-o - prints them on stdout, each line prefixed "csv: ", which is how
 * "make bench-cpu" gets them out of the VM); the ratios come last, again.
 * -m NAME runs only that mechanism in 1), which then prints no ratio that
 * needs another. -t SECONDS is the time per measurement (default 1), -q
 * uses tiny sizes (a smoke test), -p LIST runs only the parts listed
 * (e.g. -p 1,3).
 *
 * Exit status: 0 if every call succeeded (whatever the numbers: a goal not
 * met is reported, not a failure), 1 otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drm/drm.h>
#include <nfence/d3dkmthk.h>

#define MAX_ADAPTERS	16
#define RUNS		3
#define WAIT_NS		(60ull * 1000000000ull)
#define SHARED_PER_HELPER 8192u	/* 4): NT handles (fds) a creator holds */
#define ASYNC_PER_FILE	4096u	/* DRM_NFENCE_MAX_ASYNC_WAITS */
#define BATCH		8u	/* 2): operations timed together */
#define FAR		(1ull << 40)	/* 2): values nothing signals */

static const char *prog = "nfence-cpu-bench";

/* An extra open of the adapter: its own render node file and device. */
struct file {
	D3DKMT_HANDLE hAdapter, hDevice;
};

struct bench {
	D3DKMT_HANDLE hAdapter, hDevice;
	LUID luid;
	D3DKMT_NFENCE_ADAPTER info;
	int drm;			/* the adapter's render node fd */
	double budget;			/* seconds per measurement */
	bool quick;
	FILE *csv;
	bool csv_stdout;		/* -o -: "csv: " lines on stdout */
	const char *only;		/* -m: one mechanism of 1) */
};

/* ---- helpers -------------------------------------------------------- */

static void fail(NTSTATUS st, const char *what)
{
	fprintf(stderr, "%s: %s: NTSTATUS 0x%08" PRIX32 "\n", prog, what,
		(uint32_t)st);
	exit(1);
}

static void ok(NTSTATUS st, const char *what)
{
	if (st != STATUS_SUCCESS)
		fail(st, what);
}

static void sys(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
		exit(1);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double ratio(double a, double base)
{
	return base > 0 ? a / base : 0;
}

/*
 * Both mechanisms of a part 1 ratio were measured: -m leaves the others
 * out, and a ratio with one of them would read 0.00x, "missed".
 */
static bool measured(const double *best, int a, int base)
{
	return best[a] > 0 && best[base] > 0;
}

/* The ratios, printed as they come and again, together, last. */
static char summary_text[8192];

static void summary(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void summary(const char *fmt, ...)
{
	size_t len = strlen(summary_text);
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsnprintf(summary_text + len, sizeof(summary_text) - len, fmt, ap);
	va_end(ap);
}

/* One result on stdout's table is printed by the caller; this is the CSV. */
static void csv(struct bench *b, const char *part, const char *name,
		const char *param, double value, const char *unit)
{
	if (b->csv)
		fprintf(b->csv, "%s%s,%s,%s,%.6g,%s\n",
			b->csv_stdout ? "csv: " : "", part, name, param, value,
			unit);
}

static void open_file(struct bench *b, struct file *f)
{
	D3DKMT_OPENADAPTERFROMLUID oa = { .AdapterLuid = b->luid };
	D3DKMT_CREATEDEVICE cd;

	ok(D3DKMTOpenAdapterFromLuid(&oa), "open the adapter again");
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = oa.hAdapter;
	ok(D3DKMTCreateDevice(&cd), "create device");
	f->hAdapter = oa.hAdapter;
	f->hDevice = cd.hDevice;
}

/* Destroying the device destroys its fences and cancels its waits. */
static void close_file(struct file *f)
{
	D3DKMT_DESTROYDEVICE dd = { .hDevice = f->hDevice };
	D3DKMT_CLOSEADAPTER ca = { .hAdapter = f->hAdapter };

	ok(D3DKMTDestroyDevice(&dd), "destroy device");
	ok(D3DKMTCloseAdapter(&ca), "close adapter");
}

static NTSTATUS try_create_fence(D3DKMT_HANDLE hDevice, bool shared,
				 D3DKMT_HANDLE *h)
{
	D3DKMT_CREATENATIVEFENCE cf;
	NTSTATUS st;

	memset(&cf, 0, sizeof(cf));
	cf.hDevice = hDevice;
	cf.Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	cf.Info.Flags.Shared = shared;
	cf.Info.Flags.NtSecuritySharing = shared;
	st = D3DKMTCreateNativeFence(&cf);
	if (st == STATUS_SUCCESS)
		*h = cf.hSyncObject;
	return st;
}

static D3DKMT_HANDLE create_fence(D3DKMT_HANDLE hDevice, bool shared)
{
	D3DKMT_HANDLE h = 0;

	ok(try_create_fence(hDevice, shared, &h), "create native fence");
	return h;
}

static void destroy_fence(D3DKMT_HANDLE h)
{
	D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { .hSyncObject = h };

	ok(D3DKMTDestroySynchronizationObject(&d), "destroy native fence");
}

static int share_fence(D3DKMT_HANDLE h)
{
	HANDLE nt = NULL;

	ok(D3DKMTShareObjects(1, &h, NULL, 0, &nt), "share native fence");
	return (int)(intptr_t)nt;
}

static D3DKMT_HANDLE open_fence(D3DKMT_HANDLE hDevice, int fd)
{
	D3DKMT_OPENNATIVEFENCEFROMNTHANDLE of;

	memset(&of, 0, sizeof(of));
	of.hNtHandle = (HANDLE)(intptr_t)fd;
	of.hDevice = hDevice;
	ok(D3DKMTOpenNativeFenceFromNtHandle(&of), "open native fence");
	return of.hSyncObject;
}

static void signal_fence(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	ok(D3DKMTSignalSynchronizationObjectFromCpu(&s), "CPU signal");
}

static void wait_fence(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h, UINT64 v)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
	};

	ok(D3DKMTWaitForSynchronizationObjectFromCpu(&w), "CPU wait");
}

static void wait_fence_async(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h,
			     UINT64 v, int efd)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = hDevice,
		.ObjectCount = 1,
		.ObjectHandleArray = &h,
		.FenceValueArray = &v,
		.hAsyncEvent = (HANDLE)(intptr_t)efd,
	};

	ok(D3DKMTWaitForSynchronizationObjectFromCpu(&w), "asynchronous wait");
}

static uint64_t read_eventfd(int efd)
{
	uint64_t count;

	if (read(efd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		sys(-1, "read eventfd");
	return count;
}

static void write_eventfd(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		sys(-1, "write eventfd");
}

/* drm_syncobj, with the kernel's uapi (no libdrm needed). */
static uint32_t syncobj_create(int fd)
{
	struct drm_syncobj_create c = { 0 };

	sys(ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c), "create syncobj");
	return c.handle;
}

static void syncobj_destroy(int fd, uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	sys(ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d), "destroy syncobj");
}

static void syncobj_signal(int fd, uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	sys(ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a),
	    "signal syncobj point");
}

static void syncobj_wait(int fd, uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.timeout_nsec = INT64_MAX,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};
	int ret;

	do
		ret = ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
	while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	sys(ret, "wait for syncobj point");
}

static int syncobj_export(int fd, uint32_t h)
{
	struct drm_syncobj_handle a = { .handle = h };

	sys(ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a), "export syncobj");
	return a.fd;
}

static uint32_t syncobj_import(int fd, int sfd)
{
	struct drm_syncobj_handle a = { .fd = sfd };

	sys(ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a), "import syncobj");
	return a.handle;
}

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/*
 * The floor of a DRM ioctl on the render node @drm: a SYNCOBJ_CREATE that
 * its first check refuses (unknown flags).
 */
static void ioctl_floor(int drm)
{
	struct drm_syncobj_create bad = { .flags = ~0u };

	if (ioctl(drm, DRM_IOCTL_SYNCOBJ_CREATE, &bad) == 0 || errno != EINVAL)
		sys(-1, "SYNCOBJ_CREATE with unknown flags");
}

/* Open the render node @fd is, anew: another file, as another process. */
static int reopen_node(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t len;
	int nfd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	sys((int)len, "find the render node");
	path[len] = '\0';
	nfd = open(path, O_RDWR | O_CLOEXEC);
	sys(nfd, "open the render node");
	return nfd;
}

/*
 * Size @fn (which runs @n iterations and returns seconds) to take @target
 * seconds: runs of growing size, each sized from the best rate seen so
 * far, until one takes at least half of @target. The first run (of
 * @first) is a warm-up. At most eight runs. -q only runs @first once.
 */
static unsigned long calibrated(struct bench *b,
				double (*fn)(struct bench *, void *,
					     unsigned long),
				void *arg, unsigned long first, double target)
{
	unsigned long n = first;
	double t, rate, best;
	int runs;

	t = fn(b, arg, first);
	if (b->quick)
		return n;
	best = t > 0 ? first / t : first * 1000.0;
	for (runs = 1; runs < 8; runs++) {
		t = fn(b, arg, n);
		rate = t > 0 ? n / t : n * 1000.0;
		if (rate > best)
			best = rate;
		if (t >= target / 2)
			break;
		n = (unsigned long)(best * target) > 2 * n ?
		    (unsigned long)(best * target) : 2 * n;
	}
	return n;
}

/* One run of @n iterations: iterations per second. */
static double one_run(struct bench *b,
		      double (*fn)(struct bench *, void *, unsigned long),
		      void *arg, unsigned long n)
{
	double t = fn(b, arg, n);

	return t > 0 ? n / t : 0;
}

/* calibrated(), then RUNS runs: every rate in @rate; returns the best. */
static double best_of_runs(struct bench *b,
			   double (*fn)(struct bench *, void *, unsigned long),
			   void *arg, unsigned long first, unsigned long *n,
			   double rate[RUNS])
{
	double best = 0;
	int k;

	*n = calibrated(b, fn, arg, first, b->budget / RUNS);
	for (k = 0; k < RUNS; k++) {
		rate[k] = one_run(b, fn, arg, *n);
		if (rate[k] > best)
			best = rate[k];
	}
	return best;
}

/* ---- 1) wake latency ------------------------------------------------ */

enum mech {
	NATIVE, NATIVE_POLL, FUTEX, FUTEX_IOCTL, SYNCOBJ, EVENTFD, NUM_MECHS
};

/* The goal: a native round trip at most this many times the futex's. */
#define WAKE_GOAL	1.2

static const char *const mech_names[NUM_MECHS] = {
	"native", "native+poll", "futex", "futex+ioctl", "syncobj", "eventfd",
};

/*
 * A ping-pong: channel 0 (ping) is signaled by the leader and waited for
 * by the partner, channel 1 (pong) the other way. Values grow across runs
 * (fences and timelines only go up): run values start after @base.
 */
struct pp {
	enum mech mech;
	bool process;
	UINT64 base;
	/* native: per side, as the side sees them */
	D3DKMT_HANDLE hDevice, fence[2];
	int nt[2];			/* NT handles, for the child */
	int efd[2];			/* native+poll: one per side; eventfd */
	uint32_t *word;			/* futex: two words, shared memory */
	int futex_op;
	int drm;			/* syncobj, futex+ioctl: render node file */
	uint32_t syncobj[2];
	int sfd[2];			/* syncobj fds, for the child */
	unsigned long n;
};

static void pp_signal(struct pp *p, int ch, UINT64 v)
{
	switch (p->mech) {
	case NATIVE:
	case NATIVE_POLL:
		signal_fence(p->hDevice, p->fence[ch], v);
		break;
	case FUTEX_IOCTL:
		ioctl_floor(p->drm);
		/* fall through */
	case FUTEX:
		__atomic_store_n(&p->word[ch], (uint32_t)v, __ATOMIC_RELEASE);
		futex(&p->word[ch], FUTEX_WAKE | p->futex_op, 1);
		break;
	case SYNCOBJ:
		syncobj_signal(p->drm, p->syncobj[ch], v);
		break;
	case EVENTFD:
		write_eventfd(p->efd[ch]);
		break;
	default:
		break;
	}
}

/* @side waits on channel @ch. */
static void pp_wait(struct pp *p, int side, int ch, UINT64 v)
{
	struct pollfd pfd;
	uint32_t cur;

	switch (p->mech) {
	case NATIVE:
		wait_fence(p->hDevice, p->fence[ch], v);
		break;
	case NATIVE_POLL:
		wait_fence_async(p->hDevice, p->fence[ch], v, p->efd[side]);
		pfd.fd = p->efd[side];
		pfd.events = POLLIN;
		while (poll(&pfd, 1, -1) < 0)
			if (errno != EINTR)
				sys(-1, "poll eventfd");
		read_eventfd(p->efd[side]);
		break;
	case FUTEX_IOCTL:
		ioctl_floor(p->drm);
		/* fall through */
	case FUTEX:
		while ((cur = __atomic_load_n(&p->word[ch], __ATOMIC_ACQUIRE)) <
		       (uint32_t)v)
			futex(&p->word[ch], FUTEX_WAIT | p->futex_op, cur);
		break;
	case SYNCOBJ:
		syncobj_wait(p->drm, p->syncobj[ch], v);
		break;
	case EVENTFD:
		read_eventfd(p->efd[ch]);
		break;
	default:
		break;
	}
}

/* The partner: n + 1 round trips (the first a handshake). */
static void pp_partner(struct pp *p)
{
	unsigned long i;

	for (i = 1; i <= p->n + 1; i++) {
		pp_wait(p, 1, 0, p->base + i);
		pp_signal(p, 1, p->base + i);
	}
}

static void *pp_thread(void *arg)
{
	pp_partner(arg);
	return NULL;
}

/* In the forked child: its own adapter file, device, render node file. */
static void pp_child_open(struct bench *b, struct pp *p)
{
	struct file f;

	switch (p->mech) {
	case NATIVE:
	case NATIVE_POLL:
		open_file(b, &f);
		p->hDevice = f.hDevice;
		p->fence[0] = open_fence(f.hDevice, p->nt[0]);
		p->fence[1] = open_fence(f.hDevice, p->nt[1]);
		break;
	case FUTEX_IOCTL:
		p->drm = reopen_node(b->drm);
		break;
	case SYNCOBJ:
		p->drm = reopen_node(b->drm);
		p->syncobj[0] = syncobj_import(p->drm, p->sfd[0]);
		p->syncobj[1] = syncobj_import(p->drm, p->sfd[1]);
		break;
	default:
		break;
	}
}

static double pingpong(struct bench *b, void *arg, unsigned long n)
{
	struct pp *p = arg;
	unsigned long i;
	pthread_t thread;
	pid_t pid = 0;
	double t0, t;
	int status;

	p->n = n;
	if (p->process) {
		pid = fork();
		sys(pid, "fork");
		if (!pid) {
			pp_child_open(b, p);
			pp_partner(p);
			_exit(0);
		}
	} else if (pthread_create(&thread, NULL, pp_thread, p)) {
		fail(STATUS_NO_MEMORY, "create thread");
	}
	/* A handshake, untimed: the partner is up and waiting. */
	pp_signal(p, 0, p->base + 1);
	pp_wait(p, 0, 1, p->base + 1);
	t0 = now();
	for (i = 2; i <= n + 1; i++) {
		pp_signal(p, 0, p->base + i);
		pp_wait(p, 0, 1, p->base + i);
	}
	t = now() - t0;
	if (p->process) {
		sys(waitpid(pid, &status, 0), "wait for the child");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail(STATUS_UNSUCCESSFUL, "the ping-pong child failed");
	} else {
		pthread_join(thread, NULL);
	}
	p->base += n + 1;
	return t;
}

static void pp_setup(struct bench *b, struct pp *p, enum mech m, bool process)
{
	int k;

	memset(p, 0, sizeof(*p));
	p->mech = m;
	p->process = process;
	p->hDevice = b->hDevice;
	p->drm = b->drm;
	p->nt[0] = p->nt[1] = p->sfd[0] = p->sfd[1] = -1;
	p->efd[0] = p->efd[1] = -1;
	switch (m) {
	case NATIVE:
	case NATIVE_POLL:
		for (k = 0; k < 2; k++) {
			p->fence[k] = create_fence(b->hDevice, process);
			if (process)
				p->nt[k] = share_fence(p->fence[k]);
			if (m == NATIVE_POLL) {
				p->efd[k] = eventfd(0, EFD_CLOEXEC);
				sys(p->efd[k], "create eventfd");
			}
		}
		break;
	case FUTEX:
	case FUTEX_IOCTL:
		p->word = mmap(NULL, 2 * sizeof(uint32_t),
			       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
		if (p->word == MAP_FAILED)
			sys(-1, "map the futex words");
		p->futex_op = process ? 0 : FUTEX_PRIVATE_FLAG;
		break;
	case SYNCOBJ:
		for (k = 0; k < 2; k++) {
			p->syncobj[k] = syncobj_create(b->drm);
			if (process)
				p->sfd[k] = syncobj_export(b->drm,
							   p->syncobj[k]);
		}
		break;
	case EVENTFD:
		for (k = 0; k < 2; k++) {
			p->efd[k] = eventfd(0, EFD_CLOEXEC);
			sys(p->efd[k], "create eventfd");
		}
		break;
	default:
		break;
	}
}

static void pp_teardown(struct pp *p)
{
	int k;

	for (k = 0; k < 2; k++) {
		if (p->mech == NATIVE || p->mech == NATIVE_POLL)
			destroy_fence(p->fence[k]);
		if (p->mech == SYNCOBJ)
			syncobj_destroy(p->drm, p->syncobj[k]);
		if (p->nt[k] >= 0)
			close(p->nt[k]);
		if (p->sfd[k] >= 0)
			close(p->sfd[k]);
		if (p->efd[k] >= 0)
			close(p->efd[k]);
	}
	if (p->word)
		munmap(p->word, 2 * sizeof(uint32_t));
}

/*
 * What one call costs where nothing sleeps: the parts of a round trip that
 * are not the sleep and the wake-up, the floor of a DRM ioctl on the
 * render node (ioctl_floor()), and the floor of an ioctl on any file (one
 * that an eventfd, which has no ioctls, refuses): what of the DRM floor is
 * the system call, the file look-up and the security hook, and what is
 * drm_ioctl().
 */
enum call {
	CALL_FILE_IOCTL, CALL_IOCTL_FLOOR, CALL_NATIVE_SIGNAL, CALL_NATIVE_WAIT,
	CALL_FUTEX_WAKE, CALL_FUTEX_WAIT, CALL_SYNCOBJ_SIGNAL,
	CALL_SYNCOBJ_WAIT, NUM_CALLS
};

static const char *const call_names[NUM_CALLS] = {
	"file ioctl floor", "drm ioctl floor", "native signal",
	"native wait reached",
	"futex wake", "futex wait EAGAIN", "syncobj signal",
	"syncobj wait reached",
};

struct calls {
	enum call call;
	D3DKMT_HANDLE fence;
	UINT64 value;
	uint32_t word;
	uint32_t syncobj;
	uint64_t point;
	int efd;		/* CALL_FILE_IOCTL's file */
};

static double calls_run(struct bench *b, void *arg, unsigned long n)
{
	struct calls *c = arg;
	double t0 = now();
	unsigned long i;

	for (i = 0; i < n; i++) {
		switch (c->call) {
		case CALL_FILE_IOCTL:
			if (ioctl(c->efd, DRM_IOCTL_SYNCOBJ_CREATE, NULL) == 0 ||
			    errno != ENOTTY)
				sys(-1, "an ioctl on an eventfd");
			break;
		case CALL_IOCTL_FLOOR:
			ioctl_floor(b->drm);
			break;
		case CALL_NATIVE_SIGNAL:
			signal_fence(b->hDevice, c->fence, ++c->value);
			break;
		case CALL_NATIVE_WAIT:
			wait_fence(b->hDevice, c->fence, c->value);
			break;
		case CALL_FUTEX_WAKE:
			futex(&c->word, FUTEX_WAKE_PRIVATE, 1);
			break;
		case CALL_FUTEX_WAIT:
			/* The word is 0: returns EAGAIN at once. */
			if (futex(&c->word, FUTEX_WAIT_PRIVATE, 1) == 0 ||
			    errno != EAGAIN)
				sys(-1, "FUTEX_WAIT on a changed word");
			break;
		case CALL_SYNCOBJ_SIGNAL:
			syncobj_signal(b->drm, c->syncobj, ++c->point);
			break;
		case CALL_SYNCOBJ_WAIT:
			syncobj_wait(b->drm, c->syncobj, c->point);
			break;
		default:
			break;
		}
	}
	return now() - t0;
}

static void bench_calls(struct bench *b)
{
	double ns[NUM_CALLS], rate[RUNS];
	struct calls c;
	unsigned long n;
	int k;

	memset(&c, 0, sizeof(c));
	c.fence = create_fence(b->hDevice, false);
	c.syncobj = syncobj_create(b->drm);
	c.efd = eventfd(0, EFD_CLOEXEC);
	sys(c.efd, "eventfd");
	printf("\n%-22s %10s\n", "call (nothing sleeps)", "ns");
	for (k = 0; k < NUM_CALLS; k++) {
		c.call = k;
		ns[k] = 1e9 / best_of_runs(b, calls_run, &c,
					   b->quick ? 20 : 1000, &n, rate);
		printf("%-22s %10.0f\n", call_names[k], ns[k]);
		csv(b, "call", call_names[k], "-", ns[k], "ns");
	}
	summary("calls: native signal + reached wait %.2fx futex wake + EAGAIN "
		"wait, %.2fx the syncobj's; a DRM ioctl's floor %.2fx a futex "
		"wake, %.2fx any file's ioctl's floor\n",
		(ns[CALL_NATIVE_SIGNAL] + ns[CALL_NATIVE_WAIT]) /
		(ns[CALL_FUTEX_WAKE] + ns[CALL_FUTEX_WAIT]),
		(ns[CALL_NATIVE_SIGNAL] + ns[CALL_NATIVE_WAIT]) /
		(ns[CALL_SYNCOBJ_SIGNAL] + ns[CALL_SYNCOBJ_WAIT]),
		ns[CALL_IOCTL_FLOOR] / ns[CALL_FUTEX_WAKE],
		ns[CALL_IOCTL_FLOOR] / ns[CALL_FILE_IOCTL]);
	close(c.efd);
	syncobj_destroy(b->drm, c.syncobj);
	destroy_fence(c.fence);
}

/* Whether part 1 runs mechanism @m: all of them, or the one -m names. */
static bool wake_runs(const struct bench *b, int m)
{
	return !b->only || !strcmp(b->only, mech_names[m]);
}

static void bench_wake(struct bench *b)
{
	static const char *const modes[2] = { "threads", "processes" };
	double best[2][NUM_MECHS], rate[NUM_MECHS][RUNS], r;
	unsigned long n[NUM_MECHS];
	struct pp p[NUM_MECHS];
	int mode, m, k;

	printf("\n1) wake latency: ping-pong, each side signals from the CPU "
	       "and the other waits\n");
	printf("%-10s %-12s %10s %10s %10s %12s %10s\n", "mode", "mechanism",
	       "run 1", "run 2", "run 3", "best rt/s", "us/rt");
	for (mode = 0; mode < 2; mode++) {
		/*
		 * Run k of every mechanism before run k + 1 of any, so that
		 * a slow spell of the host weighs on all of them alike.
		 */
		for (m = 0; m < NUM_MECHS; m++) {
			best[mode][m] = 0;
			if (!wake_runs(b, m))
				continue;
			pp_setup(b, &p[m], m, mode);
			n[m] = calibrated(b, pingpong, &p[m],
					  b->quick ? 20 : 200,
					  b->budget / RUNS);
		}
		for (k = 0; k < RUNS; k++)
			for (m = 0; m < NUM_MECHS; m++) {
				if (!wake_runs(b, m))
					continue;
				rate[m][k] = one_run(b, pingpong, &p[m], n[m]);
				if (rate[m][k] > best[mode][m])
					best[mode][m] = rate[m][k];
			}
		for (m = 0; m < NUM_MECHS; m++) {
			if (!wake_runs(b, m))
				continue;
			pp_teardown(&p[m]);
			printf("%-10s %-12s %10.0f %10.0f %10.0f %12.0f "
			       "%10.1f\n", modes[mode], mech_names[m],
			       rate[m][0], rate[m][1], rate[m][2],
			       best[mode][m], 1e6 / best[mode][m]);
			csv(b, "wake", mech_names[m], modes[mode],
			    best[mode][m], "round trips/s");
		}
	}
	for (mode = 0; mode < 2; mode++) {
		const double *bm = best[mode];
		const char *mn = modes[mode];

		if (measured(bm, NATIVE, FUTEX)) {
			r = ratio(bm[NATIVE], bm[FUTEX]);
			summary("wake %s: native/futex %.2fx of the rate (a "
				"round trip %.2fx the futex's; goal <= %.1fx: "
				"%s)\n", mn, r, 1 / r, WAKE_GOAL,
				r >= 1 / WAKE_GOAL ? "met" : "missed");
			csv(b, "ratio", "native/futex", mn, r, "x");
		}
		if (measured(bm, NATIVE, SYNCOBJ)) {
			r = ratio(bm[NATIVE], bm[SYNCOBJ]);
			summary("wake %s: native/syncobj %.2fx of the rate (goal "
				">= 1x: %s)\n", mn, r, r >= 1 ? "met" : "missed");
			csv(b, "ratio", "native/syncobj", mn, r, "x");
		}
		if (measured(bm, FUTEX_IOCTL, FUTEX)) {
			r = ratio(bm[FUTEX_IOCTL], bm[FUTEX]);
			summary("wake %s: futex+ioctl/futex %.2fx of the rate "
				"(two DRM ioctls a hop alone make a round trip "
				"%.2fx the futex's)\n", mn, r, 1 / r);
			csv(b, "ratio", "futex+ioctl/futex", mn, r, "x");
		}
		if (measured(bm, NATIVE, FUTEX_IOCTL)) {
			r = ratio(bm[NATIVE], bm[FUTEX_IOCTL]);
			summary("wake %s: native/futex+ioctl %.2fx of the rate (a "
				"round trip %.2fx that floor's)\n", mn, r, 1 / r);
			csv(b, "ratio", "native/futex+ioctl", mn, r, "x");
		}
		if (measured(bm, NATIVE_POLL, EVENTFD)) {
			r = ratio(bm[NATIVE_POLL], bm[EVENTFD]);
			summary("wake %s: native+poll/eventfd %.2fx of the rate\n",
				mn, r);
			csv(b, "ratio", "native+poll/eventfd", mn, r, "x");
		}
	}
}

/* ---- helper processes (parts 2 and 4) -------------------------------- */

/*
 * A file holds DRM_NFENCE_MAX_ASYNC_WAITS pending waits, and libnfence has
 * one file per adapter and process: 100,000 waiters need processes of
 * their own; so do 100,000 shared fences, each an NT handle (fd) of its
 * creator, and their instances on other files. A helper is a forked process that runs its function's step 0
 * at once (in it, it opens the adapter: a file of its own), then step 1,
 * 2, ... on each helper_step(), every step acknowledged, and HELPER_QUIT on
 * helper_stop() before it exits (exiting closes its files, which cancels
 * its waits and drops its fence handles).
 */
#define HELPER_QUIT	UINT_MAX

typedef void (*helper_fn)(struct bench *b, void *arg, unsigned int step);

struct helper {
	pid_t pid;
	int cmd, ack;			/* the parent's ends of its pipes */
};

static void helper_wait(struct helper *h)
{
	char c;

	if (read(h->ack, &c, 1) != 1)
		fail(STATUS_UNSUCCESSFUL, "a helper process failed");
}

static void helper_start(struct bench *b, struct helper *h, helper_fn fn,
			 void *arg)
{
	int cmd[2], ack[2];
	unsigned int step;
	char c;

	sys(pipe2(cmd, O_CLOEXEC), "create a pipe");
	sys(pipe2(ack, O_CLOEXEC), "create a pipe");
	/* Nothing buffered is written twice. */
	fflush(NULL);
	h->pid = fork();
	sys(h->pid, "fork");
	if (!h->pid) {
		/* Not left behind (holding pipes open) if its parent fails. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(cmd[1]);
		close(ack[0]);
		for (step = 0;; step++) {
			fn(b, arg, step);
			if (write(ack[1], "a", 1) != 1)
				_exit(1);
			if (read(cmd[0], &c, 1) != 1 || c == 'q')
				break;
		}
		fn(b, arg, HELPER_QUIT);
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	h->cmd = cmd[1];
	h->ack = ack[0];
	helper_wait(h);
}

static void helper_step(struct helper *h)
{
	if (write(h->cmd, "s", 1) != 1)
		sys(-1, "command a helper");
	helper_wait(h);
}

static void helper_stop(struct helper *h)
{
	int status;

	if (write(h->cmd, "q", 1) != 1)
		sys(-1, "stop a helper");
	sys(waitpid(h->pid, &status, 0), "wait for a helper");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail(STATUS_UNSUCCESSFUL, "a helper process failed");
	close(h->cmd);
	close(h->ack);
}

/* ---- 2) waiter scaling ---------------------------------------------- */

struct scale {
	unsigned int waiters, fences;	/* outstanding, over that many */
	struct helper *helpers;		/* ASYNC_PER_FILE waiters each */
	unsigned int nhelpers;
	unsigned int first;		/* the next helper's first waiter */
	int *nt;			/* NT handles, while helpers need them */
	D3DKMT_HANDLE measured;		/* fence 0 on b->hDevice */
	int efd;			/* every waiter's eventfd */
	UINT64 value;			/* fence 0's CurrentValue */
	double add, one, none;		/* seconds, summed over a run */
	unsigned long ops;
};

/* Waiter j waits on fence j * fences / waiters, at value FAR + j. */
static unsigned int scale_fence_of(const struct scale *s, unsigned int j)
{
	return (unsigned int)((uint64_t)j * s->fences / s->waiters);
}

/* The last waiter of the helper whose first is @first. */
static unsigned int scale_last_of(const struct scale *s, unsigned int first)
{
	return (s->waiters - first > ASYNC_PER_FILE ?
		first + ASYNC_PER_FILE : s->waiters) - 1;
}

/* A helper's step 0: its waiters, from s->first on, on a file of its own. */
static void scale_helper(struct bench *b, void *arg, unsigned int step)
{
	struct scale *s = arg;
	unsigned int j, f, last = scale_last_of(s, s->first), prev = UINT_MAX;
	D3DKMT_HANDLE h = 0;
	struct file file;

	if (step)
		return;
	open_file(b, &file);
	for (j = s->first; j <= last; j++) {
		f = scale_fence_of(s, j);
		if (f != prev)
			h = open_fence(file.hDevice, s->nt[f]);
		prev = f;
		wait_fence_async(file.hDevice, h, FAR + j, s->efd);
	}
}

/*
 * The fences are created (shared) on b->hDevice as the helpers need them;
 * each but fence 0 loses that handle as soon as it is shared: its NT
 * handle keeps it until the helpers that wait on it have opened it, then
 * their handles do. Every fence has a waiter (fences <= waiters).
 */
static void scale_setup(struct bench *b, struct scale *s)
{
	unsigned int w, next = 0, closed = 0, end;
	D3DKMT_HANDLE h;

	s->nhelpers = (s->waiters + ASYNC_PER_FILE - 1) / ASYNC_PER_FILE;
	s->helpers = calloc(s->nhelpers, sizeof(*s->helpers));
	s->nt = calloc(s->fences, sizeof(*s->nt));
	if (!s->helpers || !s->nt)
		fail(STATUS_NO_MEMORY, "allocate");
	s->efd = eventfd(0, EFD_CLOEXEC);
	sys(s->efd, "create eventfd");
	for (w = 0; w < s->nhelpers; w++) {
		s->first = w * ASYNC_PER_FILE;
		end = scale_fence_of(s, scale_last_of(s, s->first));
		for (; next <= end; next++) {
			h = create_fence(b->hDevice, true);
			s->nt[next] = share_fence(h);
			if (next)
				destroy_fence(h);
			else
				s->measured = h;
		}
		helper_start(b, &s->helpers[w], scale_helper, s);
		/* What no later helper opens. */
		end = w + 1 < s->nhelpers ?
		      scale_fence_of(s, s->first + ASYNC_PER_FILE) : s->fences;
		for (; closed < end; closed++)
			close(s->nt[closed]);
	}
	free(s->nt);
	s->nt = NULL;
	s->value = 0;
}

static void scale_teardown(struct scale *s)
{
	unsigned int i;

	destroy_fence(s->measured);
	for (i = 0; i < s->nhelpers; i++)
		helper_stop(&s->helpers[i]);
	free(s->helpers);
	close(s->efd);
}

/* @n batches on fence 0: BATCH adds, signals waking one, waking none. */
static double scale_run(struct bench *b, void *arg, unsigned long n)
{
	struct scale *s = arg;
	unsigned long k;
	unsigned int i;
	double t0, t1, t2, t3, start = now();

	s->add = s->one = s->none = 0;
	for (k = 0; k < n; k++) {
		t0 = now();
		for (i = 1; i <= BATCH; i++)
			wait_fence_async(b->hDevice, s->measured, s->value + i,
					 s->efd);
		t1 = now();
		for (i = 1; i <= BATCH; i++)
			signal_fence(b->hDevice, s->measured, s->value + i);
		t2 = now();
		for (i = BATCH + 1; i <= 2 * BATCH; i++)
			signal_fence(b->hDevice, s->measured, s->value + i);
		t3 = now();
		s->value += 2 * BATCH;
		/* Every woken wait has signaled the eventfd (>= BATCH). */
		read_eventfd(s->efd);
		s->add += t1 - t0;
		s->one += t2 - t1;
		s->none += t3 - t2;
	}
	s->ops = n * BATCH;
	return now() - start;
}

static void bench_scaling(struct bench *b)
{
	static const unsigned int full[] = { 10, 1000, 100000 };
	static const unsigned int quick[] = { 10, 100, 1000 };
	const unsigned int *counts = b->quick ? quick : full;
	static const char *const layouts[2] = { "one fence", "10k fences" };
	static const char *const ops[3] = { "add", "wake one", "wake none" };
	double cost[2][3][3];		/* layout, count, op: ns */
	double v[3];
	char param[64];
	unsigned long n;
	int l, c, o, k;

	printf("\n2) waiter scaling: ns per operation on a fence, with waiters "
	       "outstanding (asynchronous, %u per helper process)\n",
	       ASYNC_PER_FILE);
	printf("%-11s %8s %7s %10s %10s %10s %8s\n", "layout", "waiters",
	       "fences", "add ns", "wake1 ns", "wake0 ns", "setup s");
	for (l = 0; l < 2; l++) {
		for (c = 0; c < 3; c++) {
			struct scale s;
			double t0 = now(), setup;

			memset(&s, 0, sizeof(s));
			s.waiters = counts[c];
			s.fences = l ? (counts[c] < 10000 ? counts[c] : 10000) : 1;
			scale_setup(b, &s);
			setup = now() - t0;
			n = calibrated(b, scale_run, &s, b->quick ? 4 : 16,
				       b->budget / RUNS);
			for (o = 0; o < 3; o++)
				cost[l][c][o] = 1e30;
			for (k = 0; k < RUNS; k++) {
				scale_run(b, &s, n);
				v[0] = s.add;
				v[1] = s.one;
				v[2] = s.none;
				for (o = 0; o < 3; o++)
					if (v[o] * 1e9 / s.ops < cost[l][c][o])
						cost[l][c][o] = v[o] * 1e9 /
								s.ops;
			}
			scale_teardown(&s);
			printf("%-11s %8u %7u %10.0f %10.0f %10.0f %8.1f\n",
			       layouts[l], s.waiters, s.fences, cost[l][c][0],
			       cost[l][c][1], cost[l][c][2], setup);
			for (o = 0; o < 3; o++) {
				snprintf(param, sizeof(param), "%s %u",
					 layouts[l], s.waiters);
				csv(b, "scaling", ops[o], param, cost[l][c][o],
				    "ns/op");
			}
		}
	}
	for (l = 0; l < 2; l++)
		for (o = 0; o < 3; o++) {
			double r = ratio(cost[l][2][o], cost[l][0][o]);

			summary("scaling %s, %s: %u/%u waiters %.2fx per "
			       "operation (goal <= 3x: %s)\n", layouts[l],
			       ops[o], counts[2], counts[0], r,
			       r <= 3 ? "met" : "missed");
			snprintf(param, sizeof(param), "%s %u/%u", layouts[l],
				 counts[2], counts[0]);
			csv(b, "ratio", ops[o], param, r, "x");
		}
}

/* ---- 3) fan-out ----------------------------------------------------- */

struct fan {
	enum mech mech;			/* NATIVE, SYNCOBJ or FUTEX */
	struct bench *b;
	D3DKMT_HANDLE fence;
	uint32_t syncobj;
	uint32_t word;
	unsigned int threads, rounds;
	pid_t *tid;
	double *woke;			/* per thread, of the current round */
	unsigned int ready, done;	/* atomics */
};

struct fan_arg {
	struct fan *f;
	unsigned int index;
};

static void *fan_thread(void *arg)
{
	struct fan_arg *a = arg;
	struct fan *f = a->f;
	unsigned int r;
	uint32_t cur;

	f->tid[a->index] = (pid_t)syscall(SYS_gettid);
	for (r = 1; r <= f->rounds; r++) {
		__atomic_add_fetch(&f->ready, 1, __ATOMIC_ACQ_REL);
		switch (f->mech) {
		case NATIVE:
			wait_fence(f->b->hDevice, f->fence, r);
			break;
		case SYNCOBJ:
			syncobj_wait(f->b->drm, f->syncobj, r);
			break;
		default:
			while ((cur = __atomic_load_n(&f->word,
						      __ATOMIC_ACQUIRE)) < r)
				futex(&f->word, FUTEX_WAIT_PRIVATE, cur);
			break;
		}
		f->woke[a->index] = now();
		__atomic_add_fetch(&f->done, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

/* Whether thread @tid is asleep ('S' in its /proc stat). */
static bool asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* The fan-out latencies of every round after the first, in @lat (s). */
static void fan_run(struct bench *b, struct fan *f, double *lat)
{
	pthread_attr_t attr;
	pthread_t *threads = calloc(f->threads, sizeof(*threads));
	struct fan_arg *args = calloc(f->threads, sizeof(*args));
	unsigned int i, r;
	double t0, last;

	f->tid = calloc(f->threads, sizeof(*f->tid));
	f->woke = calloc(f->threads, sizeof(*f->woke));
	if (!threads || !args || !f->tid || !f->woke)
		fail(STATUS_NO_MEMORY, "allocate");
	f->b = b;
	f->ready = f->done = 0;
	f->word = 0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < f->threads; i++) {
		args[i].f = f;
		args[i].index = i;
		if (pthread_create(&threads[i], &attr, fan_thread, &args[i]))
			fail(STATUS_NO_MEMORY, "create thread");
	}
	for (r = 1; r <= f->rounds; r++) {
		/* Every thread counted, then seen asleep in its wait. */
		while (__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE) <
		       r * f->threads)
			sched_yield();
		for (i = 0; i < f->threads; i++)
			while (!asleep(f->tid[i]))
				sched_yield();
		t0 = now();
		switch (f->mech) {
		case NATIVE:
			signal_fence(b->hDevice, f->fence, r);
			break;
		case SYNCOBJ:
			syncobj_signal(b->drm, f->syncobj, r);
			break;
		default:
			__atomic_store_n(&f->word, r, __ATOMIC_RELEASE);
			futex(&f->word, FUTEX_WAKE_PRIVATE, INT_MAX);
			break;
		}
		while (__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) <
		       r * f->threads)
			sched_yield();
		last = t0;
		for (i = 0; i < f->threads; i++)
			if (f->woke[i] > last)
				last = f->woke[i];
		if (r > 1)
			lat[r - 2] = last - t0;
	}
	for (i = 0; i < f->threads; i++)
		pthread_join(threads[i], NULL);
	pthread_attr_destroy(&attr);
	free(threads);
	free(args);
	free(f->tid);
	free(f->woke);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void bench_fanout(struct bench *b)
{
	static const unsigned int counts[3] = { 1, 64, 1024 };
	static const enum mech mechs[3] = { NATIVE, SYNCOBJ, FUTEX };
	double best[3][3], lat[64];
	char param[32];
	int c, m;

	printf("\n3) fan-out: one signal, N blocked threads; time until the "
	       "last one runs\n");
	printf("%-8s %8s %12s %12s %7s\n", "mechanism", "threads", "best us",
	       "median us", "rounds");
	for (c = 0; c < 3; c++) {
		for (m = 0; m < 3; m++) {
			struct fan f;

			memset(&f, 0, sizeof(f));
			f.mech = mechs[m];
			f.threads = counts[c];
			/* A warm-up round, then as many as fit (5 to 64). */
			f.rounds = b->quick ? 3 : 1 + (unsigned int)
				   (counts[c] >= 1024 ? 5 : counts[c] >= 64 ?
				    10 : 30);
			if (f.mech == NATIVE)
				f.fence = create_fence(b->hDevice, false);
			if (f.mech == SYNCOBJ)
				f.syncobj = syncobj_create(b->drm);
			fan_run(b, &f, lat);
			if (f.mech == NATIVE)
				destroy_fence(f.fence);
			if (f.mech == SYNCOBJ)
				syncobj_destroy(b->drm, f.syncobj);
			qsort(lat, f.rounds - 1, sizeof(lat[0]), cmp_double);
			best[c][m] = lat[0];
			printf("%-8s %8u %12.1f %12.1f %7u\n",
			       mech_names[mechs[m]], counts[c], lat[0] * 1e6,
			       lat[(f.rounds - 1) / 2] * 1e6, f.rounds - 1);
			snprintf(param, sizeof(param), "%u", counts[c]);
			csv(b, "fanout", mech_names[mechs[m]], param,
			    lat[0] * 1e6, "us");
		}
	}
	for (c = 0; c < 3; c++) {
		double r = ratio(best[c][0], best[c][1]);

		/* The goal is for the many: one thread is part 1's case. */
		if (counts[c] > 1)
			summary("fan-out %u threads: native/syncobj %.2fx of the "
				"time (native/futex %.2fx; goal <= 1x: %s)\n",
				counts[c], r, ratio(best[c][0], best[c][2]),
				r <= 1 ? "met" : "missed");
		else
			summary("fan-out %u threads: native/syncobj %.2fx of the "
				"time (native/futex %.2fx)\n", counts[c], r,
				ratio(best[c][0], best[c][2]));
		snprintf(param, sizeof(param), "%u", counts[c]);
		csv(b, "ratio", "fanout native/syncobj time", param, r, "x");
	}
}

/* ---- 4) memory ------------------------------------------------------ */

/* Slab and MemFree from /proc/meminfo, in bytes. */
/*
 * /proc/slabinfo (root only): bytes in use per slab cache, so that part 4
 * can say which caches an object's slab went to. Caches of one size and
 * flags may be merged under one name (slab_nomerge keeps them apart).
 */
#define SLAB_CACHES	1024

struct slab_cache {
	char name[40];
	long long bytes;
};

struct slabs {
	unsigned int n;
	struct slab_cache c[SLAB_CACHES];
};

/* Taken with every meminfo(); the one before is the baseline's. */
static struct slabs slabs_now, slabs_base;

static void slabs_read(struct slabs *s)
{
	FILE *f = fopen("/proc/slabinfo", "re");
	long long active, size;
	char line[512];

	s->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && s->n < SLAB_CACHES) {
		struct slab_cache *c = &s->c[s->n];

		if (sscanf(line, "%39s %lld %*d %lld", c->name, &active,
			   &size) == 3 && line[0] != '#') {
			c->bytes = active * size;
			s->n++;
		}
	}
	fclose(f);
}

static long long slabs_bytes(const struct slabs *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return s->c[i].bytes;
	return 0;
}

/* The caches that grew most since the baseline, per object. */
static void slabs_report(unsigned int n)
{
	bool used[SLAB_CACHES] = { false };
	unsigned int i, k, best;
	double d, top;

	if (!slabs_now.n || !slabs_base.n)
		return;
	printf("  slab caches:");
	for (k = 0; k < 6; k++) {
		best = SLAB_CACHES;
		top = 4;
		for (i = 0; i < slabs_now.n; i++) {
			d = (double)(slabs_now.c[i].bytes -
				     slabs_bytes(&slabs_base,
						 slabs_now.c[i].name)) / n;
			if (!used[i] && d >= top) {
				top = d;
				best = i;
			}
		}
		if (best == SLAB_CACHES)
			break;
		used[best] = true;
		printf(" %s %.0f", slabs_now.c[best].name, top);
	}
	printf(" (bytes per object)\n");
}

static void meminfo(long long *slab, long long *memfree)
{
	char line[128];
	long long kb;
	FILE *f = fopen("/proc/meminfo", "re");

	slabs_base = slabs_now;
	slabs_read(&slabs_now);

	*slab = *memfree = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			*slab = kb * 1024;
		else if (sscanf(line, "MemFree: %lld kB", &kb) == 1)
			*memfree = kb * 1024;
	}
	fclose(f);
}

/* Settle freed memory (RCU, deferred work) before reading meminfo. */
static void settle(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	usleep(200000);
	/* Not root: the numbers are only noisier. */
	if (fd >= 0) {
		if (write(fd, "3", 1) != 1)
			perror("drop_caches");
		close(fd);
	}
	usleep(100000);
}

/* Print and record what @n objects took since @slab0/@free0; slab B/obj. */
static double mem_report(struct bench *b, const char *what, unsigned int n,
			 long long slab0, long long free0)
{
	long long slab, memfree;
	double ps, pt;

	settle();
	meminfo(&slab, &memfree);
	ps = (double)(slab - slab0) / n;
	pt = (double)(free0 - memfree) / n;
	printf("%-34s %8u %12.0f %12.0f\n", what, n, ps, pt);
	slabs_report(n);
	csv(b, "memory", what, "slab", ps, "bytes");
	csv(b, "memory", what, "total", pt, "bytes");
	return ps;
}

/* A helper of part 4: fences of its own, or instances of a creator's. */
struct mem_helper {
	unsigned int count;		/* fences created, or opened */
	bool shared;			/* create shared fences */
	int *nt;			/* shared: their NT handles */
	struct helper opener;		/* shared: the helper that opens them */
	struct mem_helper *creator;	/* an opener: whose fences */
	struct file file;
};

/*
 * Step 0 opens a file; step 1 creates (or opens) the fences, counted. A
 * creator of shared fences creates and shares them in step 0 (uncounted)
 * and starts its opener (which inherits the NT handles), whose step 1 is
 * the creator's.
 */
static void mem_helper(struct bench *b, void *arg, unsigned int step)
{
	struct mem_helper *m = arg, opener = { .creator = m };
	unsigned int i;

	if (step == HELPER_QUIT) {
		if (m->shared)
			helper_stop(&m->opener);
		return;
	}
	if (step == 0) {
		open_file(b, &m->file);
		if (!m->shared)
			return;
		m->nt = calloc(m->count, sizeof(*m->nt));
		if (!m->nt)
			fail(STATUS_NO_MEMORY, "allocate");
		for (i = 0; i < m->count; i++)
			m->nt[i] = share_fence(create_fence(m->file.hDevice,
							    true));
		/* Its step 0 runs in the fork, before this frame ends. */
		helper_start(b, &m->opener, mem_helper, &opener);
		return;
	}
	if (m->shared)
		helper_step(&m->opener);
	else if (m->creator)
		for (i = 0; i < m->creator->count; i++)
			open_fence(m->file.hDevice, m->creator->nt[i]);
	else
		for (i = 0; i < m->count; i++)
			create_fence(m->file.hDevice, false);
}

/*
 * @n fences (shared or not) over helpers, at most @per_helper each: the
 * helpers and their files first, then the fences (or, shared, their
 * instances: the fences themselves are in the baseline), each measured
 * against the state just before.
 */
static double mem_measure(struct bench *b, const char *what, unsigned int n,
			  unsigned int per_helper, bool shared)
{
	unsigned int nh = (n + per_helper - 1) / per_helper, i;
	struct mem_helper *m = calloc(nh, sizeof(*m));
	struct helper *hs = calloc(nh, sizeof(*hs));
	long long slab0, free0;
	double ps;

	if (!m || !hs)
		fail(STATUS_NO_MEMORY, "allocate");
	for (i = 0; i < nh; i++) {
		m[i].count = n - i * per_helper < per_helper ?
			     n - i * per_helper : per_helper;
		m[i].shared = shared;
		helper_start(b, &hs[i], mem_helper, &m[i]);
	}
	settle();
	meminfo(&slab0, &free0);
	for (i = 0; i < nh; i++)
		helper_step(&hs[i]);
	ps = mem_report(b, what, n, slab0, free0);
	for (i = 0; i < nh; i++)
		helper_stop(&hs[i]);
	free(hs);
	free(m);
	return ps;
}

/* Kernel memory a native fence, and an opened instance, should take. */
#define MEM_GOAL_BYTES	512
/* Native fences one process should be able to hold on one adapter. */
#define FENCES_GOAL	100000u

/*
 * The bench adapter's fence handle limit per file: its value of the module
 * parameter client_fences (one value per adapter, the last one for the
 * adapters after it); 0 for no limit but memory, or if it cannot be read.
 */
static unsigned long fence_limit(const struct bench *b)
{
	FILE *f = fopen("/sys/module/nfence/parameters/client_fences", "r");
	unsigned long v = 0;
	unsigned int i;
	char sep = ',';

	if (!f)
		return 0;
	for (i = 0; i <= b->info.AdapterIndex && sep == ','; i++)
		if (fscanf(f, "%lu%c", &v, &sep) < 1)
			break;
	fclose(f);
	return v;
}

static void bench_memory(struct bench *b)
{
	unsigned int n = b->quick ? 2000 : FENCES_GOAL, i, per_helper;
	unsigned long limit = fence_limit(b);
	struct file *fs = calloc(2, sizeof(*fs));
	uint32_t *sync = calloc(n, sizeof(*sync));
	long long slab0, free0;
	NTSTATUS st = STATUS_SUCCESS;
	double native, instance;
	struct rlimit rl;
	D3DKMT_HANDLE h;
	int fd;

	if (!fs || !sync)
		fail(STATUS_NO_MEMORY, "allocate");
	/* A creator of shared fences holds an NT handle (fd) for each. */
	per_helper = SHARED_PER_HELPER;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < per_helper + 64)
		per_helper = rl.rlim_cur > 128 ? rl.rlim_cur - 64 : 64;
	printf("\n4) kernel memory (/proc/meminfo: Slab, and MemFree for "
	       "everything), native fences in one process, %u shared fences "
	       "per helper process\n", per_helper);
	printf("%-34s %8s %12s %12s\n", "object", "count", "slab B/obj",
	       "total B/obj");

	/*
	 * Native fences, packed in shared pages, all in one process and file
	 * as a D3D12 process holds them, unless the adapter limits a file to
	 * fewer (client_fences).
	 */
	native = mem_measure(b, "native fence", n,
			     limit && limit < n ? limit : n, false);
	/* Opened instances of as many shared fences, on other files. */
	instance = mem_measure(b, "opened instance of a shared fence", n,
			       per_helper, true);

	/* drm_syncobj on one file, as many. */
	fd = reopen_node(b->drm);
	settle();
	meminfo(&slab0, &free0);
	for (i = 0; i < n; i++)
		sync[i] = syncobj_create(fd);
	mem_report(b, "drm_syncobj", n, slab0, free0);
	settle();
	meminfo(&slab0, &free0);
	for (i = 0; i < n; i++)
		syncobj_signal(fd, sync[i], 1);
	mem_report(b, "drm_syncobj timeline point", n, slab0, free0);
	close(fd);

	if (b->quick)
		summary("fences in one process: %u (quick run: the goal of "
			"%u is not measured)\n", n, FENCES_GOAL);
	else
		summary("fences in one process: %u in one file (goal: %u: "
			"%s)\n", limit && limit < n ? (unsigned int)limit : n,
			FENCES_GOAL, !limit || limit >= n ? "met" : "missed");
	csv(b, "limit", "fences per file", "count", limit, "fences");
	if (!limit) {
		summary("fence limit per file: none but memory "
			"(client_fences=0, charged to the memory cgroup)\n");
		goto out;
	}

	/* A limit: one file reaches it, then one process (files). */
	open_file(b, &fs[0]);
	for (i = 0; (st = try_create_fence(fs[0].hDevice, false, &h)) ==
	     STATUS_SUCCESS; i++)
		;
	close_file(&fs[0]);
	summary("fence limit per file: %u fences, then NTSTATUS 0x%08" PRIX32
	       "%s\n", i, (uint32_t)st,
	       st == STATUS_INSUFFICIENT_RESOURCES ?
	       " (STATUS_INSUFFICIENT_RESOURCES: -ENOSPC, client_fences)" : "");

	/*
	 * libnfence opens one render node file per adapter and process: a
	 * second adapter handle and device share it, and its limit.
	 */
	open_file(b, &fs[0]);
	for (i = 0; (st = try_create_fence(fs[0].hDevice, false, &h)) ==
	     STATUS_SUCCESS; i++)
		;
	open_file(b, &fs[1]);
	st = try_create_fence(fs[1].hDevice, false, &h);
	summary("fence limit per process and adapter: %u fences, then a "
		"device on a second adapter handle gets NTSTATUS 0x%08" PRIX32
		" (its file is the same)\n", i, (uint32_t)st);
	close_file(&fs[1]);
	close_file(&fs[0]);
out:
	summary("memory: native fence %.0f bytes of slab (goal <= %u: %s), "
		"opened instance %.0f (goal <= %u: %s)\n", native,
		MEM_GOAL_BYTES, native <= MEM_GOAL_BYTES ? "met" : "missed",
		instance, MEM_GOAL_BYTES,
		instance <= MEM_GOAL_BYTES ? "met" : "missed");
	free(fs);
	free(sync);
}

/* ---- main ----------------------------------------------------------- */

static void open_adapter(struct bench *b)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	D3DKMT_CREATEDEVICE cd;
	ULONG i;

	ok(D3DKMTEnumAdapters2(&ea), "enumerate adapters");
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = &b->info,
			.PrivateDriverDataSize = sizeof(b->info),
		};
		D3DKMT_CLOSEADAPTER c = { .hAdapter = adapters[i].hAdapter };

		if (!b->hAdapter && D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    b->info.Flags.NativeGpuFence) {
			b->hAdapter = adapters[i].hAdapter;
			b->luid = adapters[i].AdapterLuid;
		} else {
			D3DKMTCloseAdapter(&c);
		}
	}
	if (!b->hAdapter) {
		fprintf(stderr, "%s: no adapter with native fences\n", prog);
		exit(1);
	}
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = b->hAdapter;
	ok(D3DKMTCreateDevice(&cd), "create device");
	b->hDevice = cd.hDevice;
	b->drm = NFenceGetAdapterFd(b->hAdapter);
	if (b->drm < 0)
		fail(STATUS_INVALID_HANDLE, "the adapter's render node");
}

/* The machine, as the results need it: CPU, cores, kernel, emulation. */
static void machine(struct bench *b)
{
	char line[256], model[128] = "unknown", virt[16] = "no hypervisor";
	char kernel[128] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "re");
	FILE *o = fopen("/proc/sys/kernel/osrelease", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strchr(line, ':'))
			snprintf(model, sizeof(model), "%s",
				 strchr(line, ':') + 2);
		if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
			snprintf(virt, sizeof(virt), "hypervisor");
	}
	if (f)
		fclose(f);
	model[strcspn(model, "\n")] = '\0';
	if (o) {
		if (fgets(kernel, sizeof(kernel), o))
			kernel[strcspn(kernel, "\n")] = '\0';
		fclose(o);
	}
	printf("%s: kernel %s, %ld cpus, \"%s\" (%s), adapter %u, %.1f s per "
	       "measurement%s\n", prog, kernel, sysconf(_SC_NPROCESSORS_ONLN),
	       model, virt, b->info.AdapterIndex, b->budget,
	       b->quick ? " (quick)" : "");
	csv(b, "machine", "kernel", kernel, 0, "");
	csv(b, "machine", "cpus", "", (double)sysconf(_SC_NPROCESSORS_ONLN),
	    "");
	csv(b, "machine", "cpu", model, 0, virt);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-q] [-t SECONDS] [-o CSV|-] [-p PARTS] "
		"[-m MECHANISM]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench b;
	const char *parts = "1234", *out = NULL;
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_CLOSEADAPTER ca;
	struct rlimit rl;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&b, 0, sizeof(b));
	b.budget = 1;
	while ((opt = getopt(argc, argv, "qt:o:p:m:")) != -1) {
		switch (opt) {
		case 'q':
			b.quick = true;
			break;
		case 't':
			b.budget = strtod(optarg, NULL);
			if (b.budget <= 0)
				usage();
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			parts = optarg;
			break;
		case 'm':
			b.only = optarg;
			break;
		default:
			usage();
		}
	}
	/*
	 * A helper of part 4 holds an NT handle (fd) per shared fence it
	 * creates, up to SHARED_PER_HELPER: raise the limit (root may raise the
	 * hard one; bench_memory() uses fewer fences per helper otherwise).
	 */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_max < 65536) {
			struct rlimit big = { 65536, 65536 };

			if (!setrlimit(RLIMIT_NOFILE, &big))
				rl = big;
		}
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (out && !strcmp(out, "-")) {
		b.csv = stdout;
		b.csv_stdout = true;
	} else if (out) {
		b.csv = fopen(out, "we");
		if (!b.csv)
			sys(-1, out);
	}
	if (b.csv)
		fprintf(b.csv, "%spart,name,param,value,unit\n",
			b.csv_stdout ? "csv: " : "");
	open_adapter(&b);
	machine(&b);

	if (strchr(parts, '1')) {
		bench_wake(&b);
		if (!b.only)
			bench_calls(&b);
	}
	if (strchr(parts, '3'))
		bench_fanout(&b);
	if (strchr(parts, '2'))
		bench_scaling(&b);
	if (strchr(parts, '4'))
		bench_memory(&b);

	dd.hDevice = b.hDevice;
	ok(D3DKMTDestroyDevice(&dd), "destroy device");
	ca.hAdapter = b.hAdapter;
	ok(D3DKMTCloseAdapter(&ca), "close adapter");
	if (b.csv && !b.csv_stdout)
		fclose(b.csv);
	printf("\nratios and limits:\n%s%s: done\n", summary_text, prog);
	return 0;
}
