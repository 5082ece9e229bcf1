// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Cross-adapter native fences (CROSS_ADAPTER): the "
		     "capability, creation, sharing to another adapter, one "
		     "CurrentValue seen by every adapter, MonitoredValue 0 "
		     "and an interrupt for every signal, CPU and GPU signals "
		     "on one adapter releasing CPU, asynchronous, GPU and "
		     "legacy waits on the other, device error, lifetimes "
		     "and lost-wakeup loops between two adapters.");

#define WATCHDOG_S	90
#define WAIT_MS		10000	/* something that must happen does */
#define JOIN_MS		(WAIT_MS + 5000)
#define STATE_MS	5000	/* a waiter or a queue settles */
#define QUIET_MS	200	/* "nothing happens" window */
#define GONE_MS		5000
#define MS		((uint64_t)1000000)
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define TYPE_INTRA_GPU	DRM_NFENCE_FENCE_TYPE_INTRA_GPU
#define SHARED		DRM_NFENCE_FENCE_SHARED
#define SHAREABLE	NFENCE_FENCE_SHAREABLE
#define CROSS		DRM_NFENCE_FENCE_CROSS_ADAPTER
#define NO_SIGNAL	DRM_NFENCE_FENCE_NO_SIGNAL
#define NO_WAIT		DRM_NFENCE_FENCE_NO_WAIT
#define MONITORED	DRM_NFENCE_FENCE_MONITORED
#define FLAG_ANY	DRM_NFENCE_WAIT_ANY
#define FLAG_ASYNC	DRM_NFENCE_WAIT_ASYNC
#define ALWAYS		NFENCE_ALWAYS_SIGNALED
#define POISON		0xdeadbeefu
/*
 * The stress loops run STRESS_MIN rounds whatever the time they take, then
 * on until STRESS_ITERATIONS or their time cap: a slow machine (a debug
 * kernel under TCG) runs fewer rounds, never too few to fail the check.
 */
#define STRESS_ITERATIONS	2000
#define STRESS_CAP_S		10
#define STRESS_MIN		200
#define STRESS_WAIT_MS		5000
#define STRESS_OPENS		4

/*
 * Adapter 0 and adapter 1: with native fences (@two), or without them
 * (@mixed: the mixed load).
 */
static int nadapters;
static int fds[3] = { -1, -1, -1 };
static uint32_t devs[3];
static int dbgs[3] = { -1, -1, -1 };
static struct drm_nfence_query_adapter info[3];
static struct drm_nfence_query_fence_caps caps[3];
static bool two, mixed;
/*
 * The peer load: adapters 0 and 1 with peer signals, 2 without (@peer).
 * The other subtests need adapters 0 and 1 without them (@two).
 */
static bool peer;

static bool has_peer_signals(int a)
{
	return caps[a].flags & DRM_NFENCE_FENCE_CAP_PEER_SIGNALS;
}

static void require_peer(void)
{
	igt_require_f(peer, "needs adapters 0 and 1 with peer signals and "
		      "adapter 2 with native fences and without (%d adapter%s)"
		      "\n", nadapters, nadapters == 1 ? "" : "s");
}

static void require_two(void)
{
	igt_require_f(two, "needs two nfence adapters with native fences "
		      "(%d adapter%s)\n", nadapters, nadapters == 1 ? "" : "s");
}

static void require_mixed(void)
{
	igt_require_f(mixed, "needs adapter 1 without native fences "
		      "(%d adapter%s)\n", nadapters, nadapters == 1 ? "" : "s");
}

/* Whether both adapters can hold @value (64-bit unless NO_64BIT_ATOMICS). */
static bool value_fits(uint64_t value, int n)
{
	for (int i = 0; i < n; i++)
		if (caps[i].value_bits < 64 && value > UINT32_MAX)
			return false;
	return true;
}

static int64_t live_fences(int a)
{
	return nfence_debugfs_count_fences(dbgs[a]);
}

/* Freeing may be deferred a little: poll for the expected count. */
static void assert_fences(int a, int64_t expected)
{
	uint64_t end = nfence_monotonic_ns() + GONE_MS * MS;

	while (live_fences(a) != expected && nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_f(live_fences(a) == expected,
		     "adapter %d lists %" PRId64 " fences, expected %" PRId64
		     "\n", a, live_fences(a), expected);
}

static void assert_gone(int a, const struct drm_nfence_fence_mapping *m)
{
	int ret;

	ret = nfence_debugfs_fence_wait_gone(dbgs[a], m, GONE_MS);
	igt_assert_f(ret == 0, "adapter %d: fence %" PRIu64 ":%u still "
		     "listed: %s\n", a, (uint64_t)m->cpu_mmap_offset,
		     m->cpu_value_offset, strerror(-ret));
}

/* The fence's nfence_fences line on adapter @a. */
static void line(int a, const struct drm_nfence_fence_mapping *m,
		 struct nfence_debugfs_fence *f)
{
	int ret;

	ret = __nfence_debugfs_fence(dbgs[a], m, f);
	igt_assert_f(ret == 0, "adapter %d lists no fence %" PRIu64 ":%u: "
		     "%s\n", a, (uint64_t)m->cpu_mmap_offset,
		     m->cpu_value_offset, strerror(-ret));
}

/* On adapter @a the fence's MonitoredValue is 0 and CurrentValue @cv. */
static void assert_line(int a, const struct drm_nfence_fence_mapping *m,
			uint64_t cv)
{
	struct nfence_debugfs_fence f;

	line(a, m, &f);
	igt_assert_f(f.monitored == 0, "adapter %d: cross-adapter fence "
		     "with MonitoredValue %" PRIu64 "\n", a, f.monitored);
	igt_assert_eq_u32(f.type, TYPE_DEFAULT);
	igt_assert_f(f.current == cv, "adapter %d: debugfs CurrentValue %"
		     PRIu64 ", expected %" PRIu64 "\n", a, f.current, cv);
}

static void irq(int a, struct nfence_interrupts *i)
{
	nfence_debugfs_interrupts(dbgs[a], i);
}

static void assert_interrupts(int a, const struct nfence_interrupts *before,
			      uint64_t n, const char *what)
{
	struct nfence_interrupts after;

	irq(a, &after);
	igt_info("adapter %d, %s: interrupts %" PRIu64 " -> %" PRIu64
		 ", signals %" PRIu64 " -> %" PRIu64 "\n", a, what,
		 before->interrupts, after.interrupts, before->signals,
		 after.signals);
	igt_assert_f(after.interrupts == before->interrupts + n,
		     "adapter %d, %s: %" PRIu64 " interrupts, expected %"
		     PRIu64 "\n", a, what, after.interrupts - before->interrupts,
		     n);
	igt_assert_lte_u64(before->signals + n, after.signals);
}

/* The mapping of a DEFAULT fence as the contract describes it. */
static void assert_default_mapping(int a,
				   const struct drm_nfence_fence_mapping *m)
{
	igt_assert_neq_u64(m->cpu_mmap_offset, 0);
	igt_assert_eq_u64(m->cpu_mmap_offset % NFENCE_FENCE_PAGE_SIZE, 0);
	igt_assert_lt_u64(m->cpu_value_offset, NFENCE_FENCE_PAGE_SIZE);
	igt_assert_eq_u32(m->cpu_value_offset % caps[a].value_stride, 0);
	igt_assert_eq_u32(m->pad, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, 0);
	igt_assert_neq_u64(m->monitored_value_gpu_va, 0);
	igt_assert_eq_u64(m->current_value_gpu_va % 8, 0);
	igt_assert_eq_u64(m->monitored_value_gpu_va % 8, 0);
	igt_assert_neq_u64(m->current_value_gpu_va, m->monitored_value_gpu_va);
}

static uint64_t read_value(int rfd, const struct drm_nfence_fence_mapping *m)
{
	const volatile uint64_t *v = nfence_fence_map(rfd, m);
	uint64_t value = *v;

	nfence_fence_unmap(v);
	return value;
}

/*
 * A cross-adapter fence created on adapter @from (file fds[from], device
 * devs[from]) and opened on the other one: a handle, a mapping and a CPU
 * view on each adapter.
 */
struct xf {
	uint32_t h[2];
	struct drm_nfence_fence_mapping m[2];
	const volatile uint64_t *v[2];
	int sfd;
};

static void xf_create(struct xf *x, int from, uint64_t initial)
{
	int to = !from;

	memset(x, 0, sizeof(*x));
	x->h[from] = nfence_fence_create(fds[from], devs[from], TYPE_DEFAULT,
					 CROSS | SHAREABLE, initial,
					 &x->m[from]);
	x->sfd = nfence_fence_share(fds[from], x->h[from]);
	x->h[to] = nfence_fence_open(fds[to], devs[to], x->sfd, 0, &x->m[to]);
	for (int i = 0; i < 2; i++) {
		assert_default_mapping(i, &x->m[i]);
		x->v[i] = nfence_fence_map(fds[i], &x->m[i]);
	}
}

static void xf_destroy(struct xf *x)
{
	for (int i = 0; i < 2; i++) {
		if (x->v[i])
			nfence_fence_unmap(x->v[i]);
		if (x->h[i])
			nfence_fence_destroy(fds[i], x->h[i]);
		x->v[i] = NULL;
		x->h[i] = 0;
	}
	if (x->sfd >= 0)
		close(x->sfd);
	x->sfd = -1;
}

/* Both CPU views show @value. */
static void xf_assert_value(const struct xf *x, uint64_t value)
{
	for (int i = 0; i < 2; i++)
		igt_assert_f(x->v[i][0] == value, "adapter %d reads %" PRIu64
			     ", expected %" PRIu64 "\n", i, x->v[i][0], value);
}

/* A thread doing one FENCE_WAIT, blocking. */
struct waiter {
	pthread_t thread;
	int fd;
	uint32_t device;
	uint32_t count;
	uint32_t handles[4];
	uint64_t values[4];
	uint32_t flags;
	int64_t deadline;
	int result;
	uint32_t first_signaled;
	int tid;
	int done;
	bool running;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	struct drm_nfence_fence_wait wait = {
		.device = w->device,
		.count = w->count,
		.handles = (uintptr_t)w->handles,
		.values = (uintptr_t)w->values,
		.timeout_ns = w->deadline,
		.flags = w->flags,
		.first_signaled = POISON,
	};

	__atomic_store_n(&w->tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->result = __nfence_fence_wait(w->fd, &wait);
	w->first_signaled = wait.first_signaled;
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void waiter_start_on(struct waiter *w, int wfd, uint32_t device,
			    uint32_t count, const uint32_t *handles,
			    const uint64_t *values, uint32_t flags)
{
	igt_assert_lte(count, ARRAY_SIZE(w->handles));
	memset(w, 0, sizeof(*w));
	w->fd = wfd;
	w->device = device;
	w->count = count;
	memcpy(w->handles, handles, count * sizeof(*handles));
	memcpy(w->values, values, count * sizeof(*values));
	w->flags = flags;
	w->deadline = nfence_deadline_ms(WAIT_MS);
	w->result = 1;
	igt_assert_eq(nfence_thread_create(&w->thread, waiter_fn, w), 0);
	w->running = true;
}

static void waiter_start_many(struct waiter *w, int a, uint32_t count,
			      const uint32_t *handles, const uint64_t *values,
			      uint32_t flags)
{
	waiter_start_on(w, fds[a], devs[a], count, handles, values, flags);
}

static void waiter_start(struct waiter *w, int a, uint32_t handle,
			 uint64_t value)
{
	waiter_start_many(w, a, 1, &handle, &value, 0);
}

static bool waiter_done(struct waiter *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_SEQ_CST);
}

/* The scheduler state letter in the stat file @path, or 0. */
static char stat_state(const char *path)
{
	char buf[512], *p;
	ssize_t len;
	int f;

	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	len = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static char thread_state(int tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	return stat_state(path);
}

/* Process @pid sleeps interruptibly (in its wait) within STATE_MS. */
static void process_sleeping(pid_t pid)
{
	uint64_t end = nfence_monotonic_ns() + STATE_MS * MS;
	char path[64], state;
	int status = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		igt_assert_f(waitpid(pid, &status, WNOHANG) == 0,
			     "child %d ended early (status %#x)\n", (int)pid,
			     status);
		state = stat_state(path);
		if (state == 'S')
			break;
		igt_assert_f(nfence_monotonic_ns() < end, "child %d not "
			     "asleep after %u ms (state %c)\n", (int)pid,
			     STATE_MS, state ?: '?');
		usleep(1000);
	}
	usleep(10 * 1000);
}

/*
 * The waiter sleeps in its wait (interruptible sleep, 'S'): it has queued
 * itself, so a signal from now on has to wake it.
 */
static void waiter_sleeping(struct waiter *w)
{
	uint64_t end = nfence_monotonic_ns() + STATE_MS * MS;
	char state = 0;
	int tid;

	for (;;) {
		igt_assert_f(!waiter_done(w), "waiter returned %d before any "
			     "signal\n", w->result);
		tid = __atomic_load_n(&w->tid, __ATOMIC_SEQ_CST);
		if (tid) {
			state = thread_state(tid);
			if (state == 'S')
				break;
		}
		igt_assert_f(nfence_monotonic_ns() < end, "waiter not asleep "
			     "after %u ms (state %c)\n", STATE_MS,
			     state ?: '?');
		usleep(1000);
	}
	/* Sleeping in the ioctl, not yet in it: give it a moment more. */
	usleep(10 * 1000);
	igt_assert_f(!waiter_done(w), "waiter returned %d before any signal\n",
		     w->result);
}

static void assert_still_waiting(struct waiter *w)
{
	usleep(QUIET_MS * 1000);
	igt_assert_f(!waiter_done(w), "waiter returned %d too early\n",
		     w->result);
}

static int waiter_join(struct waiter *w)
{
	int ret;

	igt_assert(w->running);
	ret = nfence_thread_join(w->thread, JOIN_MS);
	if (ret) {
		pthread_kill(w->thread, SIGUSR1);
		if (!nfence_thread_join(w->thread, 2000))
			w->running = false;
		igt_assert_f(false, "waiter did not return within %u ms\n",
			     JOIN_MS);
	}
	w->running = false;
	return w->result;
}

static int new_eventfd(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	igt_assert_fd(efd);
	return efd;
}

/* Whether @efd becomes readable within @ms (its count is consumed). */
static bool eventfd_fired(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t c;
	int ret;

	do {
		ret = poll(&pfd, 1, ms);
	} while (ret < 0 && errno == EINTR);
	igt_assert_lte(0, ret);
	if (!ret)
		return false;
	igt_assert_eq(read(efd, &c, sizeof(c)), sizeof(c));
	return true;
}

static int async_wait(int a, uint32_t handle, uint64_t value, int efd)
{
	struct drm_nfence_fence_wait wait = {
		.device = devs[a],
		.count = 1,
		.handles = (uintptr_t)&handle,
		.values = (uintptr_t)&value,
		.flags = FLAG_ASYNC,
		.eventfd = efd,
	};

	return __nfence_fence_wait(fds[a], &wait);
}

/* A queue on engine 0 of adapter @a. */
static void queue(struct nfence_queue *q, int a)
{
	nfence_queue_create(q, fds[a], devs[a], 0, 0);
}

/* Submit a FENCE_WAIT for @value through the mapping @m. */
static void queue_wait(struct nfence_queue *q,
		       const struct drm_nfence_fence_mapping *m,
		       uint64_t value)
{
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_wait_fence(&cs, m, value);
	nfence_queue_submit(q, &cs);
}

/* Submit a FENCE_SIGNAL of @value, with the MonitoredValue check. */
static void queue_signal(struct nfence_queue *q,
			 const struct drm_nfence_fence_mapping *m,
			 uint64_t value)
{
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_signal_fence(&cs, m, value);
	nfence_queue_submit(q, &cs);
}

/* The queue on adapter @a is parked on its FENCE_WAIT. */
static void assert_parked(const struct nfence_queue *q, int a)
{
	struct nfence_debugfs_queue l;
	int ret;

	ret = nfence_debugfs_queue_wait_state(dbgs[a], getpid(), q->device,
					      q->context, "wait-fence",
					      STATE_MS, &l);
	if (ret) {
		char buf[8192];

		if (__nfence_debugfs_read(dbgs[a], "nfence_queues", buf,
					  sizeof(buf)) >= 0)
			igt_info("nfence_queues of adapter %d:\n%s", a, buf);
	}
	igt_assert_f(ret == 0, "adapter %d: queue of context %u in state "
		     "%s, expected wait-fence (%s)\n", a, q->context,
		     ret == -ETIMEDOUT ? l.state : "?", strerror(-ret));
}

/* Watch the progress fence without a CPU waiter (no interrupt). */
static void poll_progress(const struct nfence_queue *q, int a, uint64_t v)
{
	igt_assert_f(nfence_queue_poll(q, v, WAIT_MS), "adapter %d: queue "
		     "progress %" PRIu64 " after %u ms, expected %" PRIu64
		     "\n", a, *q->progress, WAIT_MS, v);
}

static void assert_held(const struct nfence_queue *q, int a, uint64_t v)
{
	usleep(QUIET_MS * 1000);
	igt_assert_f(*q->progress == v, "adapter %d: queue progress %" PRIu64
		     ", expected it held at %" PRIu64 "\n", a, *q->progress,
		     v);
}

/* Capability and creation */

static void test_caps(void)
{
	int seen = 0;

	nfence_watchdog(WATCHDOG_S);
	for (int a = 0; a < NFENCE_MAX_ADAPTERS; a++) {
		struct drm_nfence_query_adapter ad;
		struct drm_nfence_query_fence_caps c;
		int afd = __nfence_open_adapter(a);

		if (afd < 0)
			continue;
		seen++;
		nfence_query_adapter(afd, &ad);
		nfence_query_fence_caps(afd, &c);
		igt_info("adapter %d: native %d, fence caps %#x\n", a,
			 !!(ad.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE),
			 c.flags);
		if (ad.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE)
			igt_assert_f(c.flags &
				     DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER,
				     "adapter %d has native fences but no "
				     "CROSS_ADAPTER capability\n", a);
		else
			igt_assert_eq_u32(c.flags, 0);
		close(afd);
	}
	igt_assert_eq(seen, nadapters);
}

static void test_create(void)
{
	const uint32_t flags[] = {
		CROSS | SHARED,
		CROSS | SHAREABLE,
		CROSS | SHARED | NO_SIGNAL,
		CROSS | SHARED | NO_WAIT,
		CROSS | SHAREABLE | NO_SIGNAL,
		CROSS | SHAREABLE | NO_WAIT,
	};
	int64_t base = live_fences(0);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++) {
		struct drm_nfence_fence_mapping m;
		uint64_t initial = 0x1230 + i;
		uint32_t h;
		int ret;

		h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
					flags[i], initial, &m);
		assert_default_mapping(0, &m);
		/* Shared: a page of its own. */
		igt_assert_eq_u32(m.cpu_value_offset, 0);
		igt_assert_eq_u64(read_value(fds[0], &m), initial);
		assert_line(0, &m, initial);
		assert_fences(0, base + 1);

		ret = __nfence_fence_signal_one(fds[0], devs[0], h,
						initial + 1);
		if (flags[i] & NO_SIGNAL) {
			igt_assert_eq(ret, -EACCES);
		} else {
			igt_assert_eq(ret, 0);
			initial++;
		}
		igt_assert_eq_u64(read_value(fds[0], &m), initial);
		assert_line(0, &m, initial);
		ret = __nfence_fence_wait_one(fds[0], devs[0], h, initial, 0);
		igt_assert_eq(ret, flags[i] & NO_WAIT ? -EACCES : 0);
		if (!(flags[i] & NO_WAIT))
			igt_assert_eq(__nfence_fence_wait_one(fds[0], devs[0],
							      h, initial + 1,
							      0), -ETIME);

		nfence_fence_destroy(fds[0], h);
		assert_gone(0, &m);
		assert_fences(0, base);
	}
}

static void test_share_needs_nt_handle(void)
{
	struct drm_nfence_fence_share s;
	struct drm_nfence_fence_mapping m, om, m2;
	uint32_t h, h2, o, d2;
	int sfd, fd2;

	nfence_watchdog(WATCHDOG_S);
	/* SHARED alone: a cross-adapter fence without an NT handle. */
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT, CROSS | SHARED,
				5, &m);
	s = (struct drm_nfence_fence_share){ .handle = h, .fd = -1 };
	igt_assert_eq(__nfence_fence_share(fds[0], &s), -EINVAL);
	igt_assert_eq(s.fd, -1);
	nfence_fence_destroy(fds[0], h);

	/* With NT_SECURITY_SHARING it opens on its own adapter too. */
	h2 = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				 CROSS | SHAREABLE, 6, &m2);
	sfd = nfence_fence_share(fds[0], h2);
	fd2 = nfence_open_adapter(0);
	d2 = nfence_device_create(fd2);
	o = nfence_fence_open(fd2, d2, sfd, 0, &om);
	assert_default_mapping(0, &om);
	igt_assert_eq_u64(read_value(fd2, &om), 6);
	nfence_fence_signal(fd2, d2, o, 7);
	igt_assert_eq_u64(read_value(fds[0], &m2), 7);
	nfence_fence_signal(fds[0], devs[0], h2, 8);
	igt_assert_eq_u64(read_value(fd2, &om), 8);
	igt_assert_eq(__nfence_fence_wait_one(fd2, d2, o, 8, 0), 0);
	close(sfd);
	nfence_fence_destroy(fds[0], h2);
	igt_assert_eq_u64(read_value(fd2, &om), 8);
	close(fd2);
	assert_gone(0, &m2);
}

/* MonitoredValue and interrupts */

static void test_monitored_zero(void)
{
	struct drm_nfence_fence_mapping m, pm;
	struct nfence_debugfs_fence f;
	struct waiter w, pw;
	uint32_t h, p;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				CROSS | SHAREABLE, 0, &m);
	assert_line(0, &m, 0);

	/* An ordinary shared fence: MonitoredValue follows its waiter ... */
	p = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT, SHAREABLE, 0,
				&pm);
	waiter_start(&pw, 0, p, 10);
	igt_assert_eq(nfence_debugfs_fence_wait(dbgs[0], &pm, 1, STATE_MS,
						&f), 0);
	igt_assert_eq_u64(f.monitored, 9);

	/* ... a cross-adapter one stays at 0 with the same waiter. */
	waiter_start(&w, 0, h, 10);
	igt_assert_eq(nfence_debugfs_fence_wait(dbgs[0], &m, 1, STATE_MS,
						&f), 0);
	igt_assert_eq_u64(f.monitored, 0);
	igt_assert_eq(async_wait(0, h, 5, efd), 0);
	igt_assert_eq(nfence_debugfs_fence_wait(dbgs[0], &m, 2, STATE_MS,
						&f), 0);
	igt_assert_eq_u64(f.monitored, 0);

	nfence_fence_signal(fds[0], devs[0], h, 5);
	igt_assert(eventfd_fired(efd, WAIT_MS));
	assert_still_waiting(&w);
	assert_line(0, &m, 5);
	nfence_fence_signal(fds[0], devs[0], h, 10);
	igt_assert_eq(waiter_join(&w), 0);
	igt_assert_eq(nfence_debugfs_fence_wait(dbgs[0], &m, 0, STATE_MS,
						&f), 0);
	assert_line(0, &m, 10);

	nfence_fence_signal(fds[0], devs[0], p, 10);
	igt_assert_eq(waiter_join(&pw), 0);
	nfence_fence_destroy(fds[0], p);
	nfence_fence_destroy(fds[0], h);
	close(efd);
}

static void test_monitored_zero_both(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int from = 0; from < 2; from++) {
		int to = !from;
		struct waiter w;
		struct xf x;

		xf_create(&x, from, 3);
		assert_line(0, &x.m[0], 3);
		assert_line(1, &x.m[1], 3);

		/* A CPU waiter on the other adapter changes nothing. */
		waiter_start(&w, to, x.h[to], 10);
		waiter_sleeping(&w);
		assert_line(0, &x.m[0], 3);
		assert_line(1, &x.m[1], 3);

		nfence_fence_signal(fds[from], devs[from], x.h[from], 10);
		igt_assert_eq(waiter_join(&w), 0);
		xf_assert_value(&x, 10);
		assert_line(0, &x.m[0], 10);
		assert_line(1, &x.m[1], 10);
		xf_destroy(&x);
	}
}

static void test_interrupt_cpu_signals(void)
{
	const uint64_t n = 16;
	struct drm_nfence_fence_mapping m;
	struct nfence_interrupts before;
	uint32_t h, p;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				CROSS | SHAREABLE, 0, &m);
	p = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT, SHAREABLE, 0,
				NULL);

	/* Nobody waits: an ordinary fence raises no interrupt ... */
	irq(0, &before);
	for (uint64_t v = 1; v <= n; v++)
		nfence_fence_signal(fds[0], devs[0], p, v);
	assert_interrupts(0, &before, 0, "ordinary fence, CPU signals");

	/* ... a cross-adapter fence one per signal. */
	irq(0, &before);
	for (uint64_t v = 1; v <= n; v++)
		nfence_fence_signal(fds[0], devs[0], h, v);
	assert_interrupts(0, &before, n, "cross-adapter fence, CPU signals");
	igt_assert_eq_u64(read_value(fds[0], &m), n);
	assert_line(0, &m, n);

	nfence_fence_destroy(fds[0], p);
	nfence_fence_destroy(fds[0], h);
}

static void test_interrupt_gpu_signals(void)
{
	const uint64_t n = 16;
	struct drm_nfence_fence_mapping m, pm;
	struct nfence_interrupts before;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t h, p;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				CROSS | SHAREABLE, 0, &m);
	p = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT, SHAREABLE, 0,
				&pm);
	queue(&q, 0);

	irq(0, &before);
	nfence_queue_begin(&q, &cs);
	for (uint64_t v = 1; v <= n; v++)
		nfence_cs_signal_fence(&cs, &pm, v);
	nfence_queue_submit(&q, &cs);
	poll_progress(&q, 0, 1);
	assert_interrupts(0, &before, 0, "ordinary fence, GPU signals");

	irq(0, &before);
	nfence_queue_begin(&q, &cs);
	for (uint64_t v = 1; v <= n; v++)
		nfence_cs_signal_fence(&cs, &m, v);
	nfence_queue_submit(&q, &cs);
	poll_progress(&q, 0, 2);
	assert_interrupts(0, &before, n, "cross-adapter fence, GPU signals");
	igt_assert_eq_u64(read_value(fds[0], &m), n);
	assert_line(0, &m, n);

	nfence_queue_destroy(&q);
	nfence_fence_destroy(fds[0], p);
	nfence_fence_destroy(fds[0], h);
}

static void test_interrupt_both(void)
{
	const uint64_t n = 8;
	struct nfence_interrupts before;
	struct nfence_queue q[2];
	struct nfence_cs cs;
	uint64_t v = 0;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	xf_create(&x, 0, 0);
	queue(&q[0], 0);
	queue(&q[1], 1);

	/* No waiter anywhere: each signal interrupts where it is made. */
	for (int a = 0; a < 2; a++) {
		irq(a, &before);
		for (uint64_t i = 0; i < n; i++)
			nfence_fence_signal(fds[a], devs[a], x.h[a], ++v);
		assert_interrupts(a, &before, n, "CPU signals");
		xf_assert_value(&x, v);

		irq(a, &before);
		nfence_queue_begin(&q[a], &cs);
		for (uint64_t i = 0; i < n; i++)
			nfence_cs_signal_fence(&cs, &x.m[a], ++v);
		nfence_queue_submit(&q[a], &cs);
		poll_progress(&q[a], a, 1);
		assert_interrupts(a, &before, n, "GPU signals");
		xf_assert_value(&x, v);
	}
	assert_line(0, &x.m[0], v);
	assert_line(1, &x.m[1], v);

	nfence_queue_destroy(&q[0]);
	nfence_queue_destroy(&q[1]);
	xf_destroy(&x);
}

/* Sharing to the other adapter */

static void test_open_other_adapter(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int from = 0; from < 2; from++) {
		int to = !from;
		struct drm_nfence_fence_mapping m, om;
		struct drm_nfence_fence_open o;
		uint32_t h, oh, p;
		int sfd, psfd;

		h = nfence_fence_create(fds[from], devs[from], TYPE_DEFAULT,
					CROSS | SHAREABLE, 77, &m);
		sfd = nfence_fence_share(fds[from], h);

		oh = nfence_fence_open(fds[to], devs[to], sfd, 0, &om);
		igt_assert_neq_u32(oh, 0);
		assert_default_mapping(to, &om);
		igt_assert_eq_u64(read_value(fds[to], &om), 77);
		igt_assert_eq(__nfence_fence_wait_one(fds[to], devs[to], oh,
						      77, 0), 0);
		igt_assert_eq(__nfence_fence_wait_one(fds[to], devs[to], oh,
						      78, 0), -ETIME);

		/* The open flags hold on the other adapter too. */
		o = (struct drm_nfence_fence_open){
			.fd = sfd, .device = devs[to], .flags = NO_SIGNAL,
		};
		igt_assert_eq(__nfence_fence_open(fds[to], &o), 0);
		igt_assert_eq(__nfence_fence_signal_one(fds[to], devs[to],
							o.handle, 80),
			      -EACCES);
		igt_assert_eq(__nfence_fence_wait_one(fds[to], devs[to],
						      o.handle, 77, 0), 0);
		nfence_fence_destroy(fds[to], o.handle);
		o.flags = NO_WAIT;
		igt_assert_eq(__nfence_fence_open(fds[to], &o), 0);
		igt_assert_eq(__nfence_fence_wait_one(fds[to], devs[to],
						      o.handle, 77, 0),
			      -EACCES);
		nfence_fence_signal(fds[to], devs[to], o.handle, 79);
		igt_assert_eq_u64(read_value(fds[from], &m), 79);
		nfence_fence_destroy(fds[to], o.handle);

		/* The creator's NO_SIGNAL and NO_WAIT are its own. */
		{
			struct drm_nfence_fence_mapping nm;
			uint32_t nh, ns, nw;
			int nsfd;

			nh = nfence_fence_create(fds[from], devs[from],
						 TYPE_DEFAULT,
						 CROSS | SHAREABLE | NO_SIGNAL,
						 1, &nm);
			igt_assert_eq(__nfence_fence_signal_one(fds[from],
								devs[from],
								nh, 2),
				      -EACCES);
			nsfd = nfence_fence_share(fds[from], nh);
			ns = nfence_fence_open(fds[to], devs[to], nsfd, 0,
					       NULL);
			nfence_fence_signal(fds[to], devs[to], ns, 2);
			igt_assert_eq_u64(read_value(fds[from], &nm), 2);
			igt_assert_eq(__nfence_fence_wait_one(fds[from],
							      devs[from], nh,
							      2, 0), 0);
			nfence_fence_destroy(fds[to], ns);
			close(nsfd);
			nfence_fence_destroy(fds[from], nh);

			nh = nfence_fence_create(fds[from], devs[from],
						 TYPE_DEFAULT,
						 CROSS | SHAREABLE | NO_WAIT,
						 1, &nm);
			nsfd = nfence_fence_share(fds[from], nh);
			nw = nfence_fence_open(fds[to], devs[to], nsfd, 0,
					       NULL);
			nfence_fence_signal(fds[from], devs[from], nh, 3);
			igt_assert_eq(__nfence_fence_wait_one(fds[to],
							      devs[to], nw,
							      3, 0), 0);
			igt_assert_eq(__nfence_fence_wait_one(fds[from],
							      devs[from], nh,
							      3, 0), -EACCES);
			nfence_fence_destroy(fds[to], nw);
			close(nsfd);
			nfence_fence_destroy(fds[from], nh);
		}

		/* An ordinary shared fence still stays on its adapter. */
		p = nfence_fence_create(fds[from], devs[from], TYPE_DEFAULT,
					SHAREABLE, 0, NULL);
		psfd = nfence_fence_share(fds[from], p);
		o = (struct drm_nfence_fence_open){
			.fd = psfd, .device = devs[to], .handle = POISON,
		};
		igt_assert_eq(__nfence_fence_open(fds[to], &o), -EINVAL);
		igt_assert_eq_u32(o.handle, POISON);
		close(psfd);
		nfence_fence_destroy(fds[from], p);

		nfence_fence_destroy(fds[to], oh);
		close(sfd);
		nfence_fence_destroy(fds[from], h);
		assert_gone(from, &m);
		assert_gone(to, &om);
	}
}

static void test_shared_value(void)
{
	const uint64_t values[] = {
		1, 2, 1000, 0x7fffffff, 0xfffffffe, 0x100000000ull,
		0x123456789abcull, 1ull << 62,
	};
	struct drm_nfence_fence_mapping bm;
	const volatile uint64_t *bv;
	uint32_t bdev, bh;
	struct xf x;
	int fd1b;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	xf_create(&x, 0, 0);
	/* A third handle: a second file of adapter 1. */
	fd1b = nfence_open_adapter(1);
	bdev = nfence_device_create(fd1b);
	bh = nfence_fence_open(fd1b, bdev, x.sfd, 0, &bm);
	bv = nfence_fence_map(fd1b, &bm);
	igt_assert_neq_u64(x.m[0].current_value_gpu_va, 0);
	igt_assert_neq_u64(x.m[1].current_value_gpu_va, 0);

	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		uint64_t v = values[i];

		if (!value_fits(v, 2))
			continue;
		/* Signal through each handle in turn. */
		switch (i % 3) {
		case 0:
			nfence_fence_signal(fds[0], devs[0], x.h[0], v);
			break;
		case 1:
			nfence_fence_signal(fds[1], devs[1], x.h[1], v);
			break;
		default:
			nfence_fence_signal(fd1b, bdev, bh, v);
			break;
		}
		xf_assert_value(&x, v);
		igt_assert_eq_u64(*bv, v);
		igt_assert_eq_u64(read_value(fds[0], &x.m[0]), v);
		igt_assert_eq_u64(read_value(fds[1], &x.m[1]), v);
		assert_line(0, &x.m[0], v);
		assert_line(1, &x.m[1], v);
		for (int a = 0; a < 2; a++)
			igt_assert_eq(__nfence_fence_wait_one(fds[a], devs[a],
							      x.h[a], v, 0),
				      0);
		igt_assert_eq(__nfence_fence_wait_one(fd1b, bdev, bh, v + 1,
						      0), -ETIME);
	}

	/* CurrentValue never decreases, whichever adapter tries. */
	{
		uint64_t top = *x.v[0];

		nfence_fence_signal(fds[1], devs[1], x.h[1], 1);
		nfence_fence_signal(fds[0], devs[0], x.h[0], 2);
		xf_assert_value(&x, top);
	}

	nfence_fence_unmap(bv);
	nfence_fence_destroy(fd1b, bh);
	close(fd1b);
	xf_destroy(&x);
}

/* Signals on one adapter, waits on the other */

static void test_cpu_signal_cpu_wait(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	/* Created on @c, signaled on @s, waited for on the other. */
	for (int c = 0; c < 2; c++) {
		for (int s = 0; s < 2; s++) {
			int w = !s;
			struct waiter all, any;
			uint32_t local, hs[2];
			uint64_t vs[2] = { 1, 9 };
			int efd = new_eventfd();
			struct xf x;

			igt_info("created on %d, signaled on %d\n", c, s);
			xf_create(&x, c, 0);
			local = nfence_fence_create(fds[w], devs[w],
						    TYPE_DEFAULT, 0, 0, NULL);
			hs[0] = local;
			hs[1] = x.h[w];
			waiter_start(&all, w, x.h[w], 10);
			waiter_start_many(&any, w, 2, hs, vs, FLAG_ANY);
			igt_assert_eq(async_wait(w, x.h[w], 7, efd), 0);
			waiter_sleeping(&all);
			waiter_sleeping(&any);

			/* Too low for anyone. */
			nfence_fence_signal(fds[s], devs[s], x.h[s], 6);
			igt_assert(!eventfd_fired(efd, QUIET_MS));
			assert_still_waiting(&all);
			assert_still_waiting(&any);

			nfence_fence_signal(fds[s], devs[s], x.h[s], 7);
			igt_assert_f(eventfd_fired(efd, WAIT_MS),
				     "async wait on adapter %d not "
				     "released\n", w);
			assert_still_waiting(&all);
			assert_still_waiting(&any);

			nfence_fence_signal(fds[s], devs[s], x.h[s], 9);
			igt_assert_eq(waiter_join(&any), 0);
			igt_assert_eq_u32(any.first_signaled, 1);
			assert_still_waiting(&all);

			nfence_fence_signal(fds[s], devs[s], x.h[s], 10);
			igt_assert_eq(waiter_join(&all), 0);
			xf_assert_value(&x, 10);

			nfence_fence_destroy(fds[w], local);
			xf_destroy(&x);
			close(efd);
		}
	}
}

static void test_cpu_signal_gpu_wait(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int s = 0; s < 2; s++) {
		int w = !s;
		struct nfence_queue q;
		struct xf x;

		xf_create(&x, 0, 0);
		queue(&q, w);
		/* Parked on the other adapter's GPU VA of the fence. */
		queue_wait(&q, &x.m[w], 5);
		assert_parked(&q, w);

		nfence_fence_signal(fds[s], devs[s], x.h[s], 4);
		assert_held(&q, w, 0);
		assert_parked(&q, w);

		nfence_fence_signal(fds[s], devs[s], x.h[s], 5);
		poll_progress(&q, w, 1);

		/* Again, with the value already there: no wait at all. */
		queue_wait(&q, &x.m[w], 5);
		poll_progress(&q, w, 2);

		nfence_queue_destroy(&q);
		xf_destroy(&x);
	}
}

static void test_gpu_signal_cpu_wait(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int s = 0; s < 2; s++) {
		int w = !s;
		struct nfence_queue q;
		struct waiter wt;
		int efd = new_eventfd();
		struct xf x;

		xf_create(&x, 0, 0);
		queue(&q, s);
		waiter_start(&wt, w, x.h[w], 3);
		igt_assert_eq(async_wait(w, x.h[w], 3, efd), 0);
		waiter_sleeping(&wt);

		queue_signal(&q, &x.m[s], 2);
		poll_progress(&q, s, 1);
		xf_assert_value(&x, 2);
		assert_still_waiting(&wt);
		igt_assert(!eventfd_fired(efd, 0));

		/* After some work, so the wait is surely asleep. */
		{
			struct nfence_cs cs;

			nfence_queue_begin(&q, &cs);
			nfence_cs_work(&cs, 20 * MS);
			nfence_cs_signal_fence(&cs, &x.m[s], 3);
			nfence_queue_submit(&q, &cs);
		}
		igt_assert_eq(waiter_join(&wt), 0);
		igt_assert_f(eventfd_fired(efd, WAIT_MS), "async wait on "
			     "adapter %d not released\n", w);
		xf_assert_value(&x, 3);

		nfence_queue_destroy(&q);
		xf_destroy(&x);
		close(efd);
	}
}

static void test_gpu_signal_gpu_wait(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int s = 0; s < 2; s++) {
		int w = !s;
		struct nfence_queue qs, qw;
		struct xf x;

		xf_create(&x, s, 0);
		queue(&qs, s);
		queue(&qw, w);
		queue_wait(&qw, &x.m[w], 3);
		assert_parked(&qw, w);

		queue_signal(&qs, &x.m[s], 2);
		poll_progress(&qs, s, 1);
		assert_held(&qw, w, 0);

		queue_signal(&qs, &x.m[s], 3);
		/* Nobody waits on the CPU: only the propagation wakes it. */
		poll_progress(&qw, w, 1);
		xf_assert_value(&x, 3);

		nfence_queue_destroy(&qs);
		nfence_queue_destroy(&qw);
		xf_destroy(&x);
	}
}

/*
 * Adapter 1 signals the odd values and adapter 0 the even ones, each
 * waiting for the other's last, through queues @q: one GPU hands over to
 * the other GPU 2 * @rounds times. Returns once both are done.
 */
static void ping_pong(struct nfence_queue *q, const struct xf *x,
		      uint64_t rounds)
{
	struct nfence_cs cs;

	for (int a = 0; a < 2; a++) {
		nfence_queue_begin(&q[a], &cs);
		for (uint64_t r = 0; r < rounds; r++) {
			uint64_t odd = 2 * r + 1;

			if (a == 1) {
				nfence_cs_signal_fence(&cs, &x->m[1], odd);
				nfence_cs_wait_fence(&cs, &x->m[1], odd + 1);
			} else {
				nfence_cs_wait_fence(&cs, &x->m[0], odd);
				nfence_cs_signal_fence(&cs, &x->m[0], odd + 1);
			}
		}
		nfence_queue_submit(&q[a], &cs);
	}
	poll_progress(&q[0], 0, 1);
	poll_progress(&q[1], 1, 1);
	xf_assert_value(x, 2 * rounds);
}

static void test_gpu_ping_pong(void)
{
	const uint64_t rounds = 64;
	struct nfence_interrupts before[2];
	struct nfence_queue q[2];
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	xf_create(&x, 0, 0);
	queue(&q[0], 0);
	queue(&q[1], 1);
	for (int a = 0; a < 2; a++)
		irq(a, &before[a]);

	/* Through the CPU: an interrupt for every signal. */
	ping_pong(q, &x, rounds);
	for (int a = 0; a < 2; a++)
		assert_interrupts(a, &before[a], rounds, "ping-pong");

	nfence_queue_destroy(&q[0]);
	nfence_queue_destroy(&q[1]);
	xf_destroy(&x);
}

static void test_legacy_wait_signal(void)
{
	struct nfence_queue q1, q0;
	struct nfence_cs cs;
	struct waiter w;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	xf_create(&x, 0, 0);

	/* A legacy wait on adapter 1, released by adapter 0's CPU. */
	queue(&q1, 1);
	igt_assert_eq(__nfence_queue_submit_wait(&q1, x.h[1], 5), 0);
	nfence_queue_begin(&q1, &cs);
	nfence_cs_nop(&cs);
	nfence_queue_submit(&q1, &cs);
	igt_assert_eq(nfence_debugfs_queue_wait_state(dbgs[1], getpid(),
						      q1.device, q1.context,
						      "wait-cpu", STATE_MS,
						      NULL), 0);
	nfence_fence_signal(fds[0], devs[0], x.h[0], 4);
	assert_held(&q1, 1, 0);
	nfence_fence_signal(fds[0], devs[0], x.h[0], 5);
	poll_progress(&q1, 1, 1);

	/*
	 * A legacy signal on adapter 1 releases a CPU waiter and a GPU wait
	 * on adapter 0.
	 */
	queue(&q0, 0);
	queue_wait(&q0, &x.m[0], 8);
	assert_parked(&q0, 0);
	waiter_start(&w, 0, x.h[0], 8);
	waiter_sleeping(&w);
	igt_assert_eq(__nfence_queue_submit_signal(&q1, x.h[1], 8), 0);
	igt_assert_eq(waiter_join(&w), 0);
	poll_progress(&q0, 0, 1);
	xf_assert_value(&x, 8);

	nfence_queue_destroy(&q0);
	nfence_queue_destroy(&q1);
	xf_destroy(&x);
}

/* Adapters with and without native fences (the mixed load) */

/* Adapter @a's monitored fence signaled interrupts moved by @n. */
static void assert_monitored_irqs(int a, const struct nfence_interrupts *before,
				  uint64_t n, const char *what)
{
	struct nfence_interrupts after;

	irq(a, &after);
	igt_info("adapter %d, %s: monitored interrupts %" PRIu64 " -> %"
		 PRIu64 "\n", a, what, before->monitored, after.monitored);
	igt_assert_f(after.monitored == before->monitored + n,
		     "adapter %d, %s: %" PRIu64 " monitored interrupts, "
		     "expected %" PRIu64 "\n", a, what,
		     after.monitored - before->monitored, n);
}

/*
 * A cross-adapter fence between adapter 0 (native fences) and adapter 1
 * (none), created on @from: a native fence if @from is 0, a monitored one
 * if it is 1. Either way adapter 0's handle is a native fence and adapter
 * 1's a monitored one, over one CurrentValue.
 */
static void mf_create(struct xf *x, int from, uint64_t initial)
{
	int to = !from;

	memset(x, 0, sizeof(*x));
	x->h[from] = nfence_fence_create(fds[from], devs[from], TYPE_DEFAULT,
					 CROSS | SHAREABLE |
					 (from ? MONITORED : 0),
					 initial, &x->m[from]);
	x->sfd = nfence_fence_share(fds[from], x->h[from]);
	x->h[to] = nfence_fence_open(fds[to], devs[to], x->sfd, 0, &x->m[to]);
	assert_default_mapping(0, &x->m[0]);
	igt_assert_neq_u64(x->m[1].cpu_mmap_offset, 0);
	igt_assert_neq_u64(x->m[1].current_value_gpu_va, 0);
	igt_assert_eq_u64(x->m[1].monitored_value_gpu_va, 0);
	for (int i = 0; i < 2; i++)
		x->v[i] = nfence_fence_map(fds[i], &x->m[i]);
	xf_assert_value(x, initial);
}

static const char *const creators[] = { "created native", "created monitored" };

/*
 * Created on either side, the fence opens on the other as the other's
 * kind, one more fence there; CPU signals on either side are seen by
 * both, and each side's handle goes with its destroy.
 */
static void test_mixed_open(void)
{
	int64_t base[2];
	uint64_t v = 0;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_mixed();
	for (int from = 0; from < 2; from++) {
		igt_info("%s\n", creators[from]);
		for (int a = 0; a < 2; a++)
			base[a] = live_fences(a);
		mf_create(&x, from, v);
		assert_fences(0, base[0] + 1);
		assert_fences(1, base[1] + 1);
		for (int a = 0; a < 2; a++) {
			nfence_fence_signal(fds[a], devs[a], x.h[a], ++v);
			xf_assert_value(&x, v);
		}
		/* The creator's side goes first: the other keeps the value. */
		close(x.sfd);
		x.sfd = -1;
		nfence_fence_unmap(x.v[from]);
		nfence_fence_destroy(fds[from], x.h[from]);
		x.v[from] = NULL;
		x.h[from] = 0;
		assert_fences(from, base[from]);
		nfence_fence_signal(fds[!from], devs[!from], x.h[!from], ++v);
		igt_assert_eq_u64(x.v[!from][0], v);
		xf_destroy(&x);
		assert_fences(!from, base[!from]);
	}
}

/* A legacy SUBMIT_WAIT for @value on adapter 1's queue, then a nop. */
static void legacy_wait(struct nfence_queue *q, uint32_t h, uint64_t value)
{
	struct nfence_cs cs;

	igt_assert_eq(__nfence_queue_submit_wait(q, h, value), 0);
	nfence_queue_begin(q, &cs);
	nfence_cs_nop(&cs);
	nfence_queue_submit(q, &cs);
	igt_assert_eq(nfence_debugfs_queue_wait_state(dbgs[1], getpid(),
						      q->device, q->context,
						      "wait-cpu", STATE_MS,
						      NULL), 0);
}

/* A legacy SUBMIT_SIGNAL of @value on adapter 1's queue, landed. */
static void legacy_signal(struct nfence_queue *q, uint32_t h, uint64_t value)
{
	igt_assert_eq(__nfence_queue_submit_signal(q, h, value), 0);
	igt_assert_eq(__nfence_fence_wait_one(fds[1], devs[1], h, value,
					      nfence_deadline_ms(WAIT_MS)), 0);
}

/*
 * Run @round @rounds times, with values 10, 20, ..., on a fence between
 * the two adapters created on each side in turn, with a queue on each.
 */
static void mixed_rounds(unsigned int rounds,
			 void (*round)(struct xf *x, struct nfence_queue *q,
				       unsigned int i, uint64_t v))
{
	struct nfence_queue q[2];
	uint64_t v = 0;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_mixed();
	for (int from = 0; from < 2; from++) {
		igt_info("%s\n", creators[from]);
		mf_create(&x, from, 0);
		queue(&q[0], 0);
		queue(&q[1], 1);
		for (unsigned int i = 0; i < rounds; i++)
			round(&x, q, i, v += 10);
		nfence_queue_destroy(&q[0]);
		nfence_queue_destroy(&q[1]);
		xf_destroy(&x);
	}
}

/*
 * Seed section 14.1.2: signals on the adapter with native fences (its
 * GPU in round 0, its CPU in round 1), waits on the one without (a CPU
 * wait, a legacy SUBMIT_WAIT). A signal below the waits' value releases
 * nothing; the one that reaches it releases both. Each GPU and CPU signal
 * of the native handle raises the native fence signaled interrupt on
 * adapter 0 (its MonitoredValue is 0); adapter 1 raises none for it. (The
 * queues' progress fences are monitored fences, without
 * NativeProgressFence: each command buffer a queue completes raises one
 * monitored interrupt on its adapter.)
 */
static void native_signal_round(struct xf *x, struct nfence_queue *q,
				unsigned int i, uint64_t v)
{
	const char *how = i ? "CPU signals" : "GPU signals";
	struct nfence_interrupts b0, b1;
	struct waiter w;

	waiter_start(&w, 1, x->h[1], v);
	legacy_wait(&q[1], x->h[1], v);
	waiter_sleeping(&w);
	irq(0, &b0);
	irq(1, &b1);
	for (uint64_t s = v - 1; s <= v; s++) {
		if (i) {
			nfence_fence_signal(fds[0], devs[0], x->h[0], s);
		} else {
			queue_signal(&q[0], &x->m[0], s);
			poll_progress(&q[0], 0, q[0].submitted);
		}
		if (s == v)
			break;
		assert_held(&q[1], 1, q[1].submitted - 1);
		igt_assert_f(!waiter_done(&w), "%s: the CPU wait for %" PRIu64
			     " returned at %" PRIu64 "\n", how, v, s);
	}
	igt_assert_eq(waiter_join(&w), 0);
	poll_progress(&q[1], 1, q[1].submitted);
	xf_assert_value(x, v);
	assert_interrupts(0, &b0, 2, how);
	assert_interrupts(1, &b1, 0, how);
	/* The progress of round 0's two signal buffers on adapter 0 ... */
	assert_monitored_irqs(0, &b0, i ? 0 : 2, how);
	/* ... and of the command buffer behind the legacy wait. */
	assert_monitored_irqs(1, &b1, 1, how);
}

static void test_mixed_native_signals(void)
{
	mixed_rounds(2, native_signal_round);
}

/*
 * Seed section 14.1.3: signals on the adapter without native fences (its
 * CPU in round 0, a legacy SUBMIT_SIGNAL in round 1, a command buffer's
 * FENCE_SIGNAL in round 2), waits on the one with them (a CPU wait, a GPU
 * FENCE_WAIT parked on the CMP). A signal below the waits' value releases
 * nothing; the one that reaches it releases both. A command buffer's
 * signals raise adapter 1's monitored fence signaled interrupt, one each;
 * the CPU and legacy signals are the OS's own and raise none; adapter 0
 * raises no native interrupt. (Each command buffer a queue completes
 * raises one monitored interrupt more for its progress fence.)
 */
static void monitored_signal_round(struct xf *x, struct nfence_queue *q,
				   unsigned int i, uint64_t v)
{
	static const char *const hows[] = {
		"CPU signals", "legacy SUBMIT_SIGNALs", "GPU signals",
	};
	struct nfence_interrupts b0, b1;
	struct waiter w;

	waiter_start(&w, 0, x->h[0], v);
	queue_wait(&q[0], &x->m[0], v);
	assert_parked(&q[0], 0);
	waiter_sleeping(&w);
	irq(0, &b0);
	irq(1, &b1);
	for (uint64_t s = v - 1; s <= v; s++) {
		if (i == 0) {
			nfence_fence_signal(fds[1], devs[1], x->h[1], s);
		} else if (i == 1) {
			legacy_signal(&q[1], x->h[1], s);
		} else {
			queue_signal(&q[1], &x->m[1], s);
			poll_progress(&q[1], 1, q[1].submitted);
		}
		if (s == v)
			break;
		assert_held(&q[0], 0, q[0].submitted - 1);
		igt_assert_f(!waiter_done(&w), "%s: the CPU wait for %" PRIu64
			     " returned at %" PRIu64 "\n", hows[i], v, s);
	}
	igt_assert_eq(waiter_join(&w), 0);
	poll_progress(&q[0], 0, q[0].submitted);
	xf_assert_value(x, v);
	assert_interrupts(0, &b0, 0, hows[i]);
	/* The progress of the FENCE_WAIT's command buffer ... */
	assert_monitored_irqs(0, &b0, 1, hows[i]);
	/* ... and round 2's two command buffers, a signal and a progress each. */
	assert_monitored_irqs(1, &b1, i == 2 ? 4 : 0, hows[i]);
}

static void test_mixed_monitored_signals(void)
{
	mixed_rounds(3, monitored_signal_round);
}

/*
 * The creating device put in error: AlwaysSignaled on both sides, the
 * monitored side's CPU wait and legacy wait and the native side's CPU
 * wait and parked FENCE_WAIT all released.
 */
static void test_mixed_device_error(void)
{
	struct nfence_queue q0, q1;
	struct waiter w0, w1;
	uint32_t d, h[2];
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_mixed();
	for (int from = 0; from < 2; from++) {
		uint32_t keep = devs[from];

		igt_info("%s\n", creators[from]);
		/* A device of its own: the error is for good. */
		d = nfence_device_create(fds[from]);
		devs[from] = d;
		mf_create(&x, from, 1);
		devs[from] = keep;
		/* The creator's side waits through a handle of devs[from]. */
		h[from] = nfence_fence_open(fds[from], devs[from], x.sfd, 0,
					    NULL);
		h[!from] = x.h[!from];
		queue(&q0, 0);
		queue(&q1, 1);
		/* Adapter 1 is 32-bit: waits within its window of 1. */
		waiter_start(&w0, 0, h[0], 100);
		waiter_start(&w1, 1, h[1], 100);
		queue_wait(&q0, &x.m[0], 100);
		legacy_wait(&q1, h[1], 100);
		assert_parked(&q0, 0);
		waiter_sleeping(&w0);
		waiter_sleeping(&w1);

		nfence_device_error(fds[from], d);
		igt_assert_eq(waiter_join(&w0), 0);
		igt_assert_eq(waiter_join(&w1), 0);
		poll_progress(&q0, 0, 1);
		poll_progress(&q1, 1, 1);
		for (int a = 0; a < 2; a++)
			igt_assert_lte_u64(ALWAYS, x.v[a][0]);

		nfence_queue_destroy(&q0);
		nfence_queue_destroy(&q1);
		nfence_fence_destroy(fds[from], h[from]);
		xf_destroy(&x);
		nfence_device_destroy(fds[from], d);
	}
}

/* Device error and lifetimes */

static void test_device_error(void)
{
	struct drm_nfence_fence_mapping m[2];
	const volatile uint64_t *v[2];
	struct nfence_debugfs_fence f;
	struct nfence_queue q;
	struct waiter w;
	uint32_t e, h0, h1;
	int sfd, efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	require_two();
	/* A device of its own on adapter 0: the error is for good. */
	e = nfence_device_create(fds[0]);
	h0 = nfence_fence_create(fds[0], e, TYPE_DEFAULT, CROSS | SHAREABLE, 1,
				 &m[0]);
	sfd = nfence_fence_share(fds[0], h0);
	h1 = nfence_fence_open(fds[1], devs[1], sfd, 0, &m[1]);
	close(sfd);
	v[0] = nfence_fence_map(fds[0], &m[0]);
	v[1] = nfence_fence_map(fds[1], &m[1]);

	/* Waiters on adapter 1 for values up to 0xFFFFFFFF. */
	waiter_start(&w, 1, h1, ALWAYS);
	igt_assert_eq(async_wait(1, h1, 100, efd), 0);
	queue(&q, 1);
	queue_wait(&q, &m[1], ALWAYS);
	waiter_sleeping(&w);
	assert_parked(&q, 1);
	igt_assert(!eventfd_fired(efd, 0));

	nfence_device_error(fds[0], e);

	igt_assert_eq(waiter_join(&w), 0);
	igt_assert_f(eventfd_fired(efd, WAIT_MS), "async wait on adapter 1 "
		     "not released by the device error\n");
	poll_progress(&q, 1, 1);
	igt_assert_eq_u64(*v[0], ALWAYS);
	igt_assert_eq_u64(*v[1], ALWAYS);
	igt_assert_eq(__nfence_fence_wait_one(fds[1], devs[1], h1, ALWAYS, 0),
		      0);
	nfence_debugfs_fence(dbgs[0], &m[0], &f);
	igt_assert_eq_u64(f.current, ALWAYS);
	nfence_debugfs_fence(dbgs[1], &m[1], &f);
	igt_assert_eq_u64(f.current, ALWAYS);

	nfence_queue_destroy(&q);
	nfence_fence_unmap(v[0]);
	nfence_fence_unmap(v[1]);
	nfence_fence_destroy(fds[1], h1);
	nfence_device_destroy(fds[0], e);
	assert_gone(0, &m[0]);
	assert_gone(1, &m[1]);
	close(efd);
}

/*
 * An instance opened after the creating device went into error inherits
 * AlwaysSignaled when it joins the group (Documentation/fences.rst,
 * "Cross-adapter fences"): on the other adapter any CPU wait is satisfied
 * at once, a signal leaves the shared value alone, and a GPU wait for a
 * value never signaled passes.
 */
static void test_device_error_open_after(void)
{
	struct drm_nfence_fence_mapping m0, m1;
	struct nfence_queue q;
	uint32_t e, h0, h1;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	e = nfence_device_create(fds[0]);
	h0 = nfence_fence_create(fds[0], e, TYPE_DEFAULT, CROSS | SHAREABLE, 1,
				 &m0);
	sfd = nfence_fence_share(fds[0], h0);
	nfence_device_error(fds[0], e);
	igt_assert_eq(__nfence_fence_wait_one(fds[0], e, h0, UINT64_MAX, 0), 0);

	/* Joined after the error: AlwaysSignaled from the start. */
	h1 = nfence_fence_open(fds[1], devs[1], sfd, 0, &m1);
	close(sfd);
	igt_assert_eq(__nfence_fence_wait_one(fds[1], devs[1], h1, UINT64_MAX,
					      0), 0);
	igt_assert_eq_u64(read_value(fds[1], &m1), ALWAYS);
	nfence_fence_signal(fds[1], devs[1], h1, ALWAYS + 1);
	igt_assert_eq_u64(read_value(fds[1], &m1), ALWAYS);
	igt_assert_eq_u64(read_value(fds[0], &m0), ALWAYS);
	queue(&q, 1);
	queue_wait(&q, &m1, ALWAYS + 1);
	poll_progress(&q, 1, 1);

	nfence_queue_destroy(&q);
	nfence_fence_destroy(fds[1], h1);
	nfence_device_destroy(fds[0], e);
	assert_gone(0, &m0);
	assert_gone(1, &m1);
}

/*
 * The creating device on adapter 1 goes into error while adapter 0's GPU
 * stores the fence's CurrentValue as fast as it can (FENCE_SIGNALs in
 * even rounds, WRITE64s in odd ones, of values far below 0xFFFFFFFF). The
 * raise to 0xFFFFFFFF runs under adapter 1's CMP lock, which adapter 0's
 * engine does not take: a store that looked at AlwaysSignaled before the
 * raise and lands after it must not leave the value below 0xFFFFFFFF
 * (Documentation/fences.rst, "Cross-adapter fences").
 */
#define ERROR_RACE_LATE		100	/* rounds whose error raced the stores */
#define ERROR_RACE_ROUNDS	1000
#define ERROR_RACE_CAP_S	30
#define ERROR_RACE_STORES	8000

static void test_device_error_vs_gpu_stores(void)
{
	uint64_t start, cap, lowered = 0, late = 0;
	struct drm_nfence_fence_mapping m[2];
	const volatile uint64_t *v[2];
	struct nfence_queue q;
	unsigned int round;

	nfence_watchdog(ERROR_RACE_CAP_S + 30);
	require_two();
	queue(&q, 0);
	igt_assert_lte(ERROR_RACE_STORES * 32, q.cmds.size);
	start = nfence_monotonic_ns();
	cap = start + ERROR_RACE_CAP_S * 1000 * MS;

	for (round = 0; round < ERROR_RACE_ROUNDS && late < ERROR_RACE_LATE;
	     round++) {
		uint32_t e, h0, h1;
		struct nfence_cs cs;
		uint64_t done;
		int sfd;

		if (nfence_monotonic_ns() > cap)
			break;
		e = nfence_device_create(fds[1]);
		h1 = nfence_fence_create(fds[1], e, TYPE_DEFAULT,
					 CROSS | SHAREABLE, 0, &m[1]);
		sfd = nfence_fence_share(fds[1], h1);
		h0 = nfence_fence_open(fds[0], devs[0], sfd, 0, &m[0]);
		close(sfd);
		v[0] = nfence_fence_map(fds[0], &m[0]);
		v[1] = nfence_fence_map(fds[1], &m[1]);

		/* No MonitoredValue check: no interrupt slows the stores. */
		q.head = 0;
		nfence_cs_init(&cs, q.cmds.cpu, q.cmds.gpu_va, q.cmds.size);
		for (uint64_t i = 1; i <= ERROR_RACE_STORES; i++) {
			if (round % 2)
				nfence_cs_write64(&cs, m[0].current_value_gpu_va,
						  i);
			else
				nfence_cs_fence_signal(&cs,
						       m[0].current_value_gpu_va,
						       0, i);
		}
		done = nfence_queue_submit(&q, &cs);
		/* The stores have started: the error lands among them. */
		while (*v[0] == 0 && *q.progress < done)
			;
		igt_assert_eq_u32(nfence_device_control(fds[1], e,
				DRM_NFENCE_DEVICE_OP_MARK_ERROR, NULL),
				DRM_NFENCE_DEVICE_ERROR_MARKED);
		if (*q.progress < done)
			late++;
		nfence_queue_sync(&q);

		if (*v[0] < ALWAYS || *v[1] < ALWAYS) {
			igt_info("round %u: CurrentValue %" PRIu64 " (adapter "
				 "0), %" PRIu64 " (adapter 1) after the "
				 "error\n", round, *v[0], *v[1]);
			lowered++;
		}
		nfence_fence_unmap(v[0]);
		nfence_fence_unmap(v[1]);
		nfence_fence_destroy(fds[0], h0);
		nfence_fence_destroy(fds[1], h1);
		nfence_device_destroy(fds[1], e);
		assert_gone(0, &m[0]);
		assert_gone(1, &m[1]);
	}
	igt_info("%u rounds in %" PRIu64 " ms, the error before the last "
		 "store in %" PRIu64 ", CurrentValue left below 0xFFFFFFFF "
		 "in %" PRIu64 "\n", round, (nfence_monotonic_ns() - start) / MS,
		 late, lowered);
	igt_assert_f(lowered == 0, "an AlwaysSignaled value was lowered by "
		     "the other adapter's GPU in %" PRIu64 " of %u rounds\n",
		     lowered, round);
	/* Enough rounds raced the stores for the check to mean something. */
	igt_assert_lte_u64(ERROR_RACE_LATE / 2, late);
	nfence_queue_destroy(&q);
}

static void test_lifetime_creator_gone(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int c = 0; c < 2; c++) {
		int o = !c;
		int64_t base[2] = { live_fences(0), live_fences(1) };
		struct nfence_interrupts before;
		struct nfence_queue q;
		struct waiter w;
		struct xf x;

		xf_create(&x, c, 0);
		nfence_fence_signal(fds[c], devs[c], x.h[c], 42);

		/* The creator's handle and the fd go. */
		nfence_fence_unmap(x.v[c]);
		x.v[c] = NULL;
		nfence_fence_destroy(fds[c], x.h[c]);
		x.h[c] = 0;
		/* The fd alone still opens it, on either adapter. */
		for (int a = 0; a < 2; a++) {
			struct drm_nfence_fence_mapping rm;
			uint32_t rh = nfence_fence_open(fds[a], devs[a], x.sfd,
							0, &rm);

			igt_assert_eq_u64(read_value(fds[a], &rm), 42);
			nfence_fence_destroy(fds[a], rh);
		}
		close(x.sfd);
		x.sfd = -1;

		/* The other adapter's handle keeps it. */
		igt_assert_eq_u64(*x.v[o], 42);
		igt_assert_eq_u64(read_value(fds[o], &x.m[o]), 42);
		assert_line(o, &x.m[o], 42);
		nfence_fence_signal(fds[o], devs[o], x.h[o], 43);
		igt_assert_eq_u64(*x.v[o], 43);
		igt_assert_eq(__nfence_fence_wait_one(fds[o], devs[o], x.h[o],
						      43, 0), 0);
		igt_assert_eq(__nfence_fence_wait_one(fds[o], devs[o], x.h[o],
						      44, 0), -ETIME);

		/* Still a cross-adapter fence: every signal interrupts. */
		irq(o, &before);
		nfence_fence_signal(fds[o], devs[o], x.h[o], 44);
		assert_interrupts(o, &before, 1, "survivor signal");

		/* CPU and GPU waits still work there. */
		waiter_start(&w, o, x.h[o], 45);
		waiter_sleeping(&w);
		nfence_fence_signal(fds[o], devs[o], x.h[o], 45);
		igt_assert_eq(waiter_join(&w), 0);
		queue(&q, o);
		queue_wait(&q, &x.m[o], 46);
		assert_parked(&q, o);
		nfence_fence_signal(fds[o], devs[o], x.h[o], 46);
		poll_progress(&q, o, 1);
		nfence_queue_destroy(&q);
		igt_assert_eq_u64(*x.v[o], 46);

		/* The last handle frees it on both adapters. */
		xf_destroy(&x);
		assert_gone(c, &x.m[c]);
		assert_gone(o, &x.m[o]);
		assert_fences(0, base[0]);
		assert_fences(1, base[1]);
	}
}

static void test_lifetime_close_files(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int c = 0; c < 2; c++) {
		int o = !c;
		int64_t base[2] = { live_fences(0), live_fences(1) };
		struct drm_nfence_fence_mapping cm, om, rm;
		const volatile uint64_t *ov;
		uint32_t cdev, odev, ch, oh, rh;
		int cfd, ofd, sfd;

		cfd = nfence_open_adapter(c);
		cdev = nfence_device_create(cfd);
		ofd = nfence_open_adapter(o);
		odev = nfence_device_create(ofd);
		ch = nfence_fence_create(cfd, cdev, TYPE_DEFAULT,
					 CROSS | SHAREABLE, 10, &cm);
		sfd = nfence_fence_share(cfd, ch);
		oh = nfence_fence_open(ofd, odev, sfd, 0, &om);
		ov = nfence_fence_map(ofd, &om);

		/* The creating file closes; the fd and adapter o hold it. */
		igt_assert_eq(close(cfd), 0);
		igt_assert_eq_u64(*ov, 10);
		nfence_fence_signal(ofd, odev, oh, 11);
		igt_assert_eq_u64(*ov, 11);
		assert_line(o, &om, 11);

		/* The fd still opens it on the creator's adapter. */
		rh = nfence_fence_open(fds[c], devs[c], sfd, 0, &rm);
		igt_assert_eq_u64(read_value(fds[c], &rm), 11);
		nfence_fence_signal(fds[c], devs[c], rh, 12);
		igt_assert_eq_u64(*ov, 12);
		nfence_fence_destroy(fds[c], rh);
		close(sfd);

		/* Only adapter o's file is left. */
		igt_assert_eq_u64(*ov, 12);
		nfence_fence_signal(ofd, odev, oh, 13);
		igt_assert_eq_u64(*ov, 13);
		nfence_fence_unmap(ov);
		igt_assert_eq(close(ofd), 0);

		assert_gone(c, &cm);
		assert_gone(o, &om);
		assert_fences(0, base[0]);
		assert_fences(1, base[1]);
	}
}

/* Many handles, processes and files */

/* A local handle of a fence on some file of some adapter. */
struct hnd {
	int fd;
	uint32_t dev;
	int a;
	uint32_t h;
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *v;
};

static void hnd_open(struct hnd *h, int hfd, uint32_t dev, int a, int sfd)
{
	h->fd = hfd;
	h->dev = dev;
	h->a = a;
	h->h = nfence_fence_open(hfd, dev, sfd, 0, &h->m);
	h->v = nfence_fence_map(hfd, &h->m);
}

static void test_many_handles(void)
{
	enum { N = 5 };
	struct nfence_queue q[3];
	struct waiter w[N];
	struct hnd hs[N];
	uint32_t d0b, d1b;
	int fd0b, fd1b, sfd;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	fd0b = nfence_open_adapter(0);
	d0b = nfence_device_create(fd0b);
	fd1b = nfence_open_adapter(1);
	d1b = nfence_device_create(fd1b);

	/*
	 * The creator's handle, two handles on one file of adapter 1, one
	 * on another file of adapter 1 and one on another file of adapter 0.
	 */
	hs[0] = (struct hnd){ .fd = fds[0], .dev = devs[0], .a = 0 };
	hs[0].h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				      CROSS | SHAREABLE, 0, &hs[0].m);
	hs[0].v = nfence_fence_map(fds[0], &hs[0].m);
	sfd = nfence_fence_share(fds[0], hs[0].h);
	hnd_open(&hs[1], fds[1], devs[1], 1, sfd);
	hnd_open(&hs[2], fds[1], devs[1], 1, sfd);
	hnd_open(&hs[3], fd1b, d1b, 1, sfd);
	hnd_open(&hs[4], fd0b, d0b, 0, sfd);
	close(sfd);
	for (int i = 0; i < N; i++)
		assert_default_mapping(hs[i].a, &hs[i].m);

	/* Queues parked through three of the handles' GPU VAs. */
	nfence_queue_create(&q[0], fds[1], devs[1], 0, 0);
	nfence_queue_create(&q[1], fd1b, d1b, 0, 0);
	nfence_queue_create(&q[2], fd0b, d0b, 0, 0);

	/* Each handle signals in turn; everybody else waits for it. */
	for (int r = 0; r < N; r++) {
		const struct hnd *qh[3] = { &hs[1 + r % 2], &hs[3], &hs[4] };
		uint64_t value = 10 * (r + 1);

		igt_info("round %d: handle %d on adapter %d signals %" PRIu64
			 "\n", r, r, hs[r].a, value);
		for (int i = 0; i < N; i++)
			if (i != r)
				waiter_start_on(&w[i], hs[i].fd, hs[i].dev, 1,
						&hs[i].h, &value, 0);
		for (int i = 0; i < 3; i++)
			queue_wait(&q[i], &qh[i]->m, value);
		for (int i = 0; i < N; i++)
			if (i != r)
				waiter_sleeping(&w[i]);
		for (int i = 0; i < 3; i++)
			assert_parked(&q[i], i < 2 ? 1 : 0);

		nfence_fence_signal(hs[r].fd, hs[r].dev, hs[r].h, value);
		for (int i = 0; i < N; i++)
			if (i != r)
				igt_assert_f(waiter_join(&w[i]) == 0,
					     "waiter on handle %d (adapter %d)"
					     ": %d\n", i, hs[i].a, w[i].result);
		for (int i = 0; i < 3; i++)
			poll_progress(&q[i], i < 2 ? 1 : 0, r + 1);
		for (int i = 0; i < N; i++) {
			igt_assert_f(*hs[i].v == value, "handle %d (adapter "
				     "%d) reads %" PRIu64 "\n", i, hs[i].a,
				     *hs[i].v);
			assert_line(hs[i].a, &hs[i].m, value);
		}
	}

	for (int i = 0; i < 3; i++)
		nfence_queue_destroy(&q[i]);
	for (int i = N - 1; i >= 0; i--) {
		nfence_fence_unmap(hs[i].v);
		nfence_fence_destroy(hs[i].fd, hs[i].h);
	}
	for (int i = 0; i < N; i++)
		assert_gone(hs[i].a, &hs[i].m);
	close(fd0b);
	close(fd1b);
}

static void test_signal_many(void)
{
	struct nfence_interrupts before;
	uint32_t local, sh[4], wh[3];
	uint64_t sv1[2] = { 4, 1 }, sv2[4] = { 5, 2, 6, 7 };
	uint64_t wv[3] = { 5, 6, 7 };
	struct drm_nfence_fence_signal sig;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct waiter w;
	struct xf x[3];

	nfence_watchdog(WATCHDOG_S);
	require_two();
	xf_create(&x[0], 0, 0);
	xf_create(&x[1], 0, 0);
	xf_create(&x[2], 1, 0);
	local = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT, 0, 0, NULL);
	sh[0] = x[0].h[0];
	sh[1] = local;
	sh[2] = x[1].h[0];
	sh[3] = x[2].h[0];
	for (int i = 0; i < 3; i++)
		wh[i] = x[i].h[1];

	/* Adapter 1 waits for all three, on the CPU and on the GPU. */
	waiter_start_many(&w, 1, 3, wh, wv, 0);
	queue(&q, 1);
	nfence_queue_begin(&q, &cs);
	for (int i = 0; i < 3; i++)
		nfence_cs_wait_fence(&cs, &x[i].m[1], wv[i]);
	nfence_queue_submit(&q, &cs);
	waiter_sleeping(&w);
	assert_parked(&q, 1);

	/* Two of them, one too low: not enough. */
	sig = (struct drm_nfence_fence_signal){
		.device = devs[0],
		.count = 2,
		.handles = (uintptr_t)sh,
		.values = (uintptr_t)sv1,
	};
	igt_assert_eq(__nfence_fence_signal(fds[0], &sig), 0);
	assert_still_waiting(&w);
	assert_held(&q, 1, 0);

	/* All four (one of them an ordinary fence) in one call. */
	irq(0, &before);
	sig.count = 4;
	sig.values = (uintptr_t)sv2;
	igt_assert_eq(__nfence_fence_signal(fds[0], &sig), 0);
	igt_assert_eq(waiter_join(&w), 0);
	poll_progress(&q, 1, 1);
	for (int i = 0; i < 3; i++)
		xf_assert_value(&x[i], wv[i]);
	/* One interrupt per cross-adapter fence, none for the other. */
	assert_interrupts(0, &before, 3, "one call, four fences");

	nfence_queue_destroy(&q);
	nfence_fence_destroy(fds[0], local);
	for (int i = 0; i < 3; i++)
		xf_destroy(&x[i]);
}

static void test_other_process(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h;
	int sfd, p[2];
	char c = 0;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				CROSS | SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fds[0], h);
	igt_assert_eq(pipe2(p, O_CLOEXEC), 0);

	/* A child opens the inherited fd on its own file of adapter 1. */
	igt_fork(child, 1) {
		struct drm_nfence_fence_mapping om;
		int cfd = nfence_open_adapter(1);
		uint32_t cdev = nfence_device_create(cfd);
		uint32_t o = nfence_fence_open(cfd, cdev, sfd, 0, &om);

		close(p[0]);
		igt_assert_eq(write(p[1], "R", 1), 1);
		igt_assert_eq(__nfence_fence_wait_one(cfd, cdev, o, 5,
						      nfence_deadline_ms(WAIT_MS)),
			      0);
		igt_assert_eq_u64(read_value(cfd, &om), 5);
		nfence_fence_signal(cfd, cdev, o, 6);
		close(cfd);
	}
	close(p[1]);
	igt_assert_eq(read(p[0], &c, 1), 1);
	igt_assert_eq(c, 'R');
	close(p[0]);
	/* Most likely asleep by now; released either way. */
	usleep(QUIET_MS * 1000);
	nfence_fence_signal(fds[0], devs[0], h, 5);
	igt_assert_eq(__nfence_fence_wait_one(fds[0], devs[0], h, 6,
					      nfence_deadline_ms(WAIT_MS)), 0);
	igt_waitchildren();
	igt_assert_eq_u64(read_value(fds[0], &m), 6);
	close(sfd);
	nfence_fence_destroy(fds[0], h);
	assert_gone(0, &m);
}

/*
 * An instance loses its last handle while a thread waits on it (the wait
 * holds the fence): the fence can still be signaled through the other
 * adapter, so the wait stays blocked and returns 0 when it is, not
 * -ENOENT at the destroy.
 */
static void test_instance_handle_gone(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_two();
	for (int c = 0; c < 2; c++) {
		int o = !c;
		struct waiter w;
		struct xf x;

		xf_create(&x, c, 0);
		waiter_start(&w, o, x.h[o], 5);
		waiter_sleeping(&w);

		nfence_fence_unmap(x.v[o]);
		x.v[o] = NULL;
		nfence_fence_destroy(fds[o], x.h[o]);
		x.h[o] = 0;
		/* Given time to go wrong: still asleep in its wait. */
		usleep(100 * 1000);
		waiter_sleeping(&w);

		nfence_fence_signal(fds[c], devs[c], x.h[c], 5);
		igt_assert_eq(waiter_join(&w), 0);
		xf_destroy(&x);
	}
}

/*
 * A cross-adapter fence has at most DRM_NFENCE_MAX_FENCE_INSTANCES
 * instances: the opens on the other adapter past that fail with -ENOSPC
 * and write nothing back, an open on its own adapter makes none and still
 * succeeds, and a closed instance makes room for one.
 */
static void test_open_instance_limit(void)
{
	const unsigned int max = DRM_NFENCE_MAX_FENCE_INSTANCES;
	struct drm_nfence_fence_open o = {};
	uint32_t *h = calloc(max, sizeof(*h));
	int64_t base1;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	igt_assert(h);
	base1 = live_fences(1);
	xf_create(&x, 0, 0);
	/* The creator's and x.h[1] are two. */
	for (unsigned int i = 2; i < max; i++)
		h[i] = nfence_fence_open(fds[1], devs[1], x.sfd, 0, NULL);
	assert_fences(1, base1 + max - 1);

	o.fd = x.sfd;
	o.device = devs[1];
	o.handle = 0xdeadbeef;
	igt_assert_eq(__nfence_fence_open(fds[1], &o), -ENOSPC);
	igt_assert_eq_u32(o.handle, 0xdeadbeef);
	igt_assert_eq(live_fences(1), base1 + max - 1);
	o.device = devs[0];
	igt_assert_eq(__nfence_fence_open(fds[0], &o), 0);
	nfence_fence_destroy(fds[0], o.handle);

	/* Gone once it left its adapter's table (a scan may hold it). */
	nfence_fence_destroy(fds[1], h[max - 1]);
	assert_fences(1, base1 + max - 2);
	h[max - 1] = nfence_fence_open(fds[1], devs[1], x.sfd, 0, NULL);
	for (unsigned int i = 2; i < max; i++)
		nfence_fence_destroy(fds[1], h[i]);
	xf_destroy(&x);
	assert_fences(1, base1);
	free(h);
}

static void test_close_with_waiters(void)
{
	const uint64_t values[3] = { 5, 10, 1000 };
	struct drm_nfence_fence_mapping m, om;
	struct nfence_queue q;
	uint32_t h, odev, oh;
	int sfd, ofd, efd[3], status;
	int64_t base1;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	require_two();
	base1 = live_fences(1);
	h = nfence_fence_create(fds[0], devs[0], TYPE_DEFAULT,
				CROSS | SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fds[0], h);

	/* A process blocked in a wait on adapter 1, to be killed. */
	pid = fork();
	igt_assert_lte(0, pid);
	if (pid == 0) {
		int cfd = __nfence_open_adapter(1);
		struct drm_nfence_device_create dc = { 0 };
		struct drm_nfence_fence_open o = { .fd = sfd };

		if (cfd < 0 || __nfence_device_create(cfd, &dc))
			_exit(2);
		o.device = dc.handle;
		if (__nfence_fence_open(cfd, &o))
			_exit(3);
		__nfence_fence_wait_one(cfd, dc.handle, o.handle, 1000,
					nfence_deadline_ms(60000));
		_exit(4);
	}

	/* A file of adapter 1 with async waits and a parked queue. */
	ofd = nfence_open_adapter(1);
	odev = nfence_device_create(ofd);
	oh = nfence_fence_open(ofd, odev, sfd, 0, &om);
	for (int i = 0; i < 3; i++) {
		efd[i] = new_eventfd();
		igt_assert_eq(__nfence_fence_wait(ofd,
			&(struct drm_nfence_fence_wait){
				.device = odev, .count = 1,
				.handles = (uintptr_t)&oh,
				.values = (uintptr_t)&values[i],
				.flags = FLAG_ASYNC, .eventfd = efd[i],
			}), 0);
	}
	nfence_queue_create(&q, ofd, odev, 0, 0);
	queue_wait(&q, &om, 10);
	assert_parked(&q, 1);
	process_sleeping(pid);

	/*
	 * Everything on adapter 1 goes while it waits. The queue's context
	 * is suspended first: the close's exit wait would otherwise wait
	 * (up to 2 s) for the parked work to run.
	 */
	nfence_context_control(ofd, odev, q.context,
			       DRM_NFENCE_CONTEXT_OP_SUSPEND, NULL);
	nfence_queue_forget(&q);
	igt_assert_eq(close(ofd), 0);
	igt_assert_eq(kill(pid, SIGKILL), 0);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert_f(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		     "the child ended on its own (status %#x)\n", status);

	/* Adapter 0 signals on, its fence unharmed. */
	for (int i = 0; i < 3; i++)
		nfence_fence_signal(fds[0], devs[0], h, values[i]);
	for (int i = 0; i < 3; i++) {
		/* A cancelled async wait may or may not have fired. */
		eventfd_fired(efd[i], 0);
		close(efd[i]);
	}
	igt_assert_eq(__nfence_fence_wait_one(fds[0], devs[0], h, 1000, 0), 0);
	igt_assert_eq_u64(read_value(fds[0], &m), 1000);
	assert_line(0, &m, 1000);
	assert_fences(1, base1);

	/* And it still opens on adapter 1. */
	oh = nfence_fence_open(fds[1], devs[1], sfd, 0, &om);
	igt_assert_eq_u64(read_value(fds[1], &om), 1000);
	nfence_fence_destroy(fds[1], oh);
	close(sfd);
	nfence_fence_destroy(fds[0], h);
	assert_gone(0, &m);
	assert_fences(1, base1);
}

/* Lost wake-ups between the adapters */

struct pong {
	pthread_t thread;
	uint32_t a1;	/* adapter 1's handle of the fence adapter 0 signals */
	uint32_t b1;	/* adapter 1's handle of the fence it answers on */
	uint64_t rounds;
	int stop;
	int error;
	uint64_t error_at;
};

static void *pong_fn(void *arg)
{
	struct pong *p = arg;

	for (uint64_t i = 1; i <= p->rounds; i++) {
		int ret;

		ret = __nfence_fence_wait_one(fds[1], devs[1], p->a1, i,
					      nfence_deadline_ms(STRESS_WAIT_MS));
		if (__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST))
			break;
		if (!ret)
			ret = __nfence_fence_signal_one(fds[1], devs[1],
							p->b1, i);
		if (ret) {
			p->error = ret;
			p->error_at = i;
			break;
		}
	}
	return NULL;
}

static void test_stress_cpu_ping_pong(void)
{
	uint64_t start, cap, done = 0;
	struct pong p;
	struct xf a, b;
	int err = 0;

	nfence_watchdog(STRESS_CAP_S + 2 * STRESS_WAIT_MS / 1000 + 30);
	require_two();
	xf_create(&a, 0, 0);
	xf_create(&b, 1, 0);
	memset(&p, 0, sizeof(p));
	p.a1 = a.h[1];
	p.b1 = b.h[1];
	p.rounds = STRESS_ITERATIONS;
	igt_assert_eq(nfence_thread_create(&p.thread, pong_fn, &p), 0);

	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S * 1000 * MS;
	/* Adapter 0 signals i, adapter 1 (the thread) answers with i. */
	for (uint64_t i = 1; i <= p.rounds; i++) {
		if (i > STRESS_MIN && nfence_monotonic_ns() > cap)
			break;
		err = __nfence_fence_signal_one(fds[0], devs[0], a.h[0], i);
		if (!err)
			err = __nfence_fence_wait_one(fds[0], devs[0], b.h[0],
						      i,
						      nfence_deadline_ms(STRESS_WAIT_MS));
		if (err)
			break;
		done = i;
	}
	/* Let the thread out of a wait it may be in. */
	__atomic_store_n(&p.stop, 1, __ATOMIC_SEQ_CST);
	nfence_fence_signal(fds[0], devs[0], a.h[0], p.rounds + 1);
	igt_assert_eq(nfence_thread_join(p.thread, JOIN_MS), 0);

	igt_info("CPU ping-pong between adapters: %" PRIu64 " of %" PRIu64
		 " rounds in %" PRIu64 " ms\n", done, p.rounds,
		 (nfence_monotonic_ns() - start) / MS);
	igt_assert_f(!err, "adapter 0, round %" PRIu64 ": %s\n", done + 1,
		     strerror(-err));
	igt_assert_f(!p.error, "adapter 1, round %" PRIu64 ": %s\n",
		     p.error_at, strerror(-p.error));
	igt_assert_lte_u64(STRESS_MIN, done);
	xf_destroy(&a);
	xf_destroy(&b);
}

static void test_stress_gpu_signal_cpu_wait(void)
{
	uint64_t start, cap, done = 0;
	struct nfence_queue q[2];
	struct xf x;
	int err = 0;

	nfence_watchdog(STRESS_CAP_S + STRESS_WAIT_MS / 1000 + 30);
	require_two();
	xf_create(&x, 0, 0);
	queue(&q[0], 0);
	queue(&q[1], 1);
	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S * 1000 * MS;

	/*
	 * Round i: adapter i % 2's GPU signals i while the CPU goes to sleep
	 * waiting for i on the other adapter.
	 */
	for (uint64_t i = 1; i <= STRESS_ITERATIONS; i++) {
		int s = i % 2, w = !s;
		struct nfence_cs cs;

		if (i > STRESS_MIN && nfence_monotonic_ns() > cap)
			break;
		nfence_queue_begin(&q[s], &cs);
		if (i % 4 < 2)
			nfence_cs_work(&cs, 50000);
		nfence_cs_signal_fence(&cs, &x.m[s], i);
		nfence_queue_submit(&q[s], &cs);
		err = __nfence_fence_wait_one(fds[w], devs[w], x.h[w], i,
					      nfence_deadline_ms(STRESS_WAIT_MS));
		if (err)
			break;
		done = i;
	}
	igt_info("GPU signals, CPU waits on the other adapter: %" PRIu64
		 " of %d rounds in %" PRIu64 " ms\n", done, STRESS_ITERATIONS,
		 (nfence_monotonic_ns() - start) / MS);
	igt_assert_f(!err, "round %" PRIu64 ": %s (CurrentValue %" PRIu64
		     ")\n", done + 1, strerror(-err), *x.v[0]);
	igt_assert_lte_u64(STRESS_MIN, done);

	nfence_queue_destroy(&q[0]);
	nfence_queue_destroy(&q[1]);
	xf_destroy(&x);
}

struct signaler {
	pthread_t thread;
	uint32_t h;
	uint64_t value;
	int stop;
	int error;
};

static void *signaler_fn(void *arg)
{
	struct signaler *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
		uint64_t v = __atomic_add_fetch(&s->value, 1, __ATOMIC_SEQ_CST);
		int ret = __nfence_fence_signal_one(fds[0], devs[0], s->h, v);

		if (ret) {
			s->error = ret;
			break;
		}
		if (v % 16 == 0)
			sched_yield();
	}
	return NULL;
}

/*
 * Until @cap (ns) or STRESS_ITERATIONS rounds, adapter 1 opens @x
 * STRESS_OPENS times, waits on the CPU for its value plus 2 through the
 * last instance (with @async_too, every third round also leaves an
 * asynchronous wait pending on the first when the handles go) and
 * destroys the instances. *@done counts the rounds that succeeded; the
 * first error ends the rounds and is returned.
 */
static int open_wait_close_rounds(const struct xf *x, bool async_too,
				  uint64_t cap, uint64_t *done)
{
	int err = 0;

	for (uint64_t i = 1; i <= STRESS_ITERATIONS; i++) {
		uint32_t oh[STRESS_OPENS];
		uint64_t target;
		int n = 0, efd = -1;

		if (i > STRESS_MIN && nfence_monotonic_ns() > cap)
			break;
		for (; n < STRESS_OPENS; n++) {
			struct drm_nfence_fence_open o = {
				.fd = x->sfd, .device = devs[1],
			};

			err = __nfence_fence_open(fds[1], &o);
			if (err)
				break;
			oh[n] = o.handle;
		}
		target = *x->v[0] + 2;
		if (!err && async_too && i % 3 == 0) {
			/*
			 * An async wait left pending when the handle goes.
			 * The signaler reaches its value soon after: the
			 * instance it holds goes then (a fence has at most
			 * DRM_NFENCE_MAX_FENCE_INSTANCES at once).
			 */
			efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			err = efd < 0 ? -errno :
				async_wait(1, oh[0], target + 64, efd);
		}
		if (!err)
			err = __nfence_fence_wait_one(fds[1], devs[1],
						      oh[n - 1], target,
						      nfence_deadline_ms(STRESS_WAIT_MS));
		while (n > 0) {
			int ret = __nfence_fence_destroy_handle(fds[1],
								oh[--n]);

			err = err ?: ret;
		}
		if (efd >= 0)
			close(efd);
		if (err)
			break;
		*done = i;
	}
	return err;
}

static void test_stress_open_while_signaling(void)
{
	uint64_t start, cap, done = 0;
	struct signaler sg;
	struct xf x;
	int err = 0;

	nfence_watchdog(STRESS_CAP_S + STRESS_WAIT_MS / 1000 + 30);
	require_two();
	xf_create(&x, 0, 0);
	memset(&sg, 0, sizeof(sg));
	sg.h = x.h[0];
	igt_assert_eq(nfence_thread_create(&sg.thread, signaler_fn, &sg), 0);
	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S / 2 * 1000 * MS;

	/*
	 * Adapter 0 signals without a pause while adapter 1 keeps opening
	 * the fence (several instances a round), waiting a little ahead of
	 * it and closing it again: the propagation races instances coming
	 * and going.
	 */
	err = open_wait_close_rounds(&x, true, cap, &done);
	__atomic_store_n(&sg.stop, 1, __ATOMIC_SEQ_CST);
	igt_assert_eq(nfence_thread_join(sg.thread, JOIN_MS), 0);
	igt_info("open/wait/destroy on adapter 1 while adapter 0 signals: %"
		 PRIu64 " rounds, %" PRIu64 " signals in %" PRIu64 " ms\n",
		 done, sg.value, (nfence_monotonic_ns() - start) / MS);
	igt_assert_f(!err, "round %" PRIu64 ": %s\n", done + 1,
		     strerror(-err));
	igt_assert_f(!sg.error, "signaler: %s\n", strerror(-sg.error));
	igt_assert_lte_u64(STRESS_MIN, done);
	xf_assert_value(&x, sg.value);
	xf_destroy(&x);
}

/* Peer signals (the peer load) */

/* The counters of adapters 0, 1 and 2. */
static void peer_counters(struct nfence_interrupts *c)
{
	for (int a = 0; a < 3; a++)
		irq(a, &c[a]);
}

/*
 * Adapter @a raised @interrupts interrupts and wrote @rings ids to other
 * GPUs' peer doorbells since @before, and found none overflowed.
 */
static void assert_peer(int a, const struct nfence_interrupts *before,
			uint64_t interrupts, uint64_t rings, const char *what)
{
	struct nfence_interrupts after;

	irq(a, &after);
	igt_info("adapter %d, %s: interrupts +%" PRIu64 ", peer rings +%"
		 PRIu64 ", peer ids +%" PRIu64 "\n", a, what,
		 after.interrupts - before->interrupts,
		 after.peer_rings - before->peer_rings,
		 after.peer_taken - before->peer_taken);
	igt_assert_f(after.interrupts - before->interrupts == interrupts,
		     "adapter %d, %s: %" PRIu64 " interrupts, expected %"
		     PRIu64 "\n", a, what, after.interrupts - before->interrupts,
		     interrupts);
	igt_assert_f(after.peer_rings - before->peer_rings == rings,
		     "adapter %d, %s: %" PRIu64 " peer rings, expected %"
		     PRIu64 "\n", a, what, after.peer_rings - before->peer_rings,
		     rings);
	igt_assert_eq_u64(after.peer_overflows, before->peer_overflows);
}

/* Adapter @a's CMP has found @n ids in its peer doorbell since @before. */
static void wait_peer_taken(int a, const struct nfence_interrupts *before,
			  uint64_t n)
{
	uint64_t end = nfence_monotonic_ns() + WAIT_MS * MS;
	struct nfence_interrupts now;

	do {
		irq(a, &now);
		if (now.peer_taken - before->peer_taken >= n)
			break;
		usleep(1000);
	} while (nfence_monotonic_ns() < end);
	igt_assert_f(now.peer_taken - before->peer_taken == n, "adapter %d found %"
		     PRIu64 " ids in its peer doorbell, expected %" PRIu64
		     "\n", a, now.peer_taken - before->peer_taken, n);
}

/* The fence's MonitoredValue on adapter @a is @mv. */
static void assert_mv(int a, const struct drm_nfence_fence_mapping *m,
		      uint64_t mv)
{
	struct nfence_debugfs_fence f;

	line(a, m, &f);
	igt_assert_f(f.monitored == mv, "adapter %d: MonitoredValue %#" PRIx64
		     ", expected %#" PRIx64 "\n", a, f.monitored, mv);
}

/* @n GPU signals on adapter @a's queue @q, from *@v + 1 on. */
static void gpu_signals(struct nfence_queue *q, const struct xf *x, int a,
			uint64_t n, uint64_t *v)
{
	struct nfence_cs cs;
	uint64_t done = *q->progress;

	nfence_queue_begin(q, &cs);
	for (uint64_t i = 0; i < n; i++)
		nfence_cs_signal_fence(&cs, &x->m[a], ++*v);
	nfence_queue_submit(q, &cs);
	poll_progress(q, a, done + 1);
}

static void test_peer_gpu_signals(void)
{
	const uint64_t n = 16;
	struct nfence_interrupts before[3];
	struct nfence_queue q;
	uint64_t v = 0;
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_peer();
	xf_create(&x, 0, 0);
	/* No CPU waiter: a real MonitoredValue, not the CPU path's 0. */
	for (int a = 0; a < 2; a++)
		assert_mv(a, &x.m[a], UINT64_MAX);

	for (int s = 0; s < 2; s++) {
		int o = !s;

		queue(&q, s);
		peer_counters(before);
		gpu_signals(&q, &x, s, n, &v);
		wait_peer_taken(o, &before[o], n);
		assert_peer(s, &before[s], 0, n, "GPU signals, nobody waits");
		assert_peer(o, &before[o], 0, 0, "its peer");
		xf_assert_value(&x, v);
		nfence_queue_destroy(&q);
	}

	/* A CPU waiter on adapter w: only w interrupts, once it is reached. */
	for (int w = 0; w < 2; w++) {
		struct waiter wt;

		queue(&q, 0);
		waiter_start(&wt, w, x.h[w], v + 2);
		waiter_sleeping(&wt);
		assert_mv(w, &x.m[w], v + 1);
		assert_mv(!w, &x.m[!w], UINT64_MAX);

		peer_counters(before);
		gpu_signals(&q, &x, 0, 1, &v);
		wait_peer_taken(1, &before[1], 1);
		assert_still_waiting(&wt);
		assert_peer(0, &before[0], 0, 1, "signal below the waiter's");
		assert_peer(1, &before[1], 0, 0, "its peer");

		peer_counters(before);
		gpu_signals(&q, &x, 0, 1, &v);
		igt_assert_eq(waiter_join(&wt), 0);
		wait_peer_taken(1, &before[1], 1);
		assert_peer(w, &before[w], 1, w ? 0 : 1, "the waiter's value");
		assert_peer(!w, &before[!w], 0, w ? 1 : 0, "the other adapter");
		assert_mv(w, &x.m[w], UINT64_MAX);
		nfence_queue_destroy(&q);
	}
	xf_destroy(&x);
}

static void test_peer_gpu_wait(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_peer();
	for (int s = 0; s < 2; s++) {
		struct nfence_interrupts before[3];
		struct nfence_queue qs, qw;
		int w = !s;
		struct xf x;

		xf_create(&x, s, 0);
		queue(&qs, s);
		queue(&qw, w);
		peer_counters(before);
		queue_wait(&qw, &x.m[w], 3);
		assert_parked(&qw, w);

		queue_signal(&qs, &x.m[s], 2);
		poll_progress(&qs, s, 1);
		assert_held(&qw, w, 0);

		queue_signal(&qs, &x.m[s], 3);
		/* Nobody waits on the CPU: the other GPU's ring wakes it. */
		poll_progress(&qw, w, 1);
		/* Its ring is counted after the wake: the signal done too. */
		poll_progress(&qs, s, 2);
		xf_assert_value(&x, 3);
		assert_peer(s, &before[s], 0, 2, "GPU signals");
		assert_peer(w, &before[w], 0, 0, "GPU wait");

		nfence_queue_destroy(&qs);
		nfence_queue_destroy(&qw);
		xf_destroy(&x);
	}
}

static void test_peer_ping_pong(void)
{
	const uint64_t rounds = 64;
	struct nfence_interrupts before[3];
	struct nfence_queue q[2];
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_peer();
	xf_create(&x, 0, 0);
	queue(&q[0], 0);
	queue(&q[1], 1);
	peer_counters(before);

	/* As gpu-ping-pong, GPU to GPU: no interrupt on either adapter. */
	ping_pong(q, &x, rounds);
	for (int a = 0; a < 2; a++)
		wait_peer_taken(a, &before[a], rounds);
	for (int a = 0; a < 2; a++)
		assert_peer(a, &before[a], 0, rounds, "ping-pong");

	nfence_queue_destroy(&q[0]);
	nfence_queue_destroy(&q[1]);
	xf_destroy(&x);
}

static void test_peer_cpu_signals(void)
{
	nfence_watchdog(WATCHDOG_S);
	require_peer();
	for (int s = 0; s < 2; s++) {
		struct nfence_interrupts before[3];
		struct nfence_queue qw;
		struct waiter wt;
		int w = !s;
		struct xf x;

		xf_create(&x, 0, 0);
		queue(&qw, w);
		queue_wait(&qw, &x.m[w], 2);
		assert_parked(&qw, w);
		waiter_start(&wt, w, x.h[w], 2);
		waiter_sleeping(&wt);

		/*
		 * A CPU signal goes the CPU way whatever MonitoredValue
		 * says: the other instance's waiters, CPU and GPU, wake.
		 */
		peer_counters(before);
		nfence_fence_signal(fds[s], devs[s], x.h[s], 1);
		assert_held(&qw, w, 0);
		assert_still_waiting(&wt);
		nfence_fence_signal(fds[s], devs[s], x.h[s], 2);
		igt_assert_eq(waiter_join(&wt), 0);
		poll_progress(&qw, w, 1);
		assert_peer(s, &before[s], 2, 0, "CPU signals");
		xf_assert_value(&x, 2);

		nfence_queue_destroy(&qw);
		xf_destroy(&x);
	}
}

static void test_peer_cpu_instance(void)
{
	const uint64_t n = 8;
	struct nfence_interrupts before[3];
	struct drm_nfence_fence_mapping m2;
	struct nfence_queue q, q2;
	struct waiter wt;
	uint64_t v = 0;
	struct xf x;
	uint32_t h2;

	nfence_watchdog(WATCHDOG_S);
	require_peer();
	xf_create(&x, 0, 0);
	queue(&q, 0);

	/* Adapter 2 has no peer doorbell: only the CPU can tell it. */
	h2 = nfence_fence_open(fds[2], devs[2], x.sfd, 0, &m2);
	assert_mv(2, &m2, 0);
	peer_counters(before);
	gpu_signals(&q, &x, 0, n, &v);
	wait_peer_taken(1, &before[1], n);
	assert_peer(0, &before[0], n, n, "GPU signals, a CPU-only instance");
	assert_peer(1, &before[1], 0, 0, "a peer");
	igt_assert_eq_u64(read_value(fds[2], &m2), v);

	/* Its waiters, GPU and CPU, wake through adapter 0's interrupt. */
	nfence_queue_create(&q2, fds[2], devs[2], 0, 0);
	queue_wait(&q2, &m2, v + 1);
	assert_parked(&q2, 2);
	waiter_start_on(&wt, fds[2], devs[2], 1, &h2,
			(const uint64_t[]){ v + 1 }, 0);
	waiter_sleeping(&wt);
	gpu_signals(&q, &x, 0, 1, &v);
	igt_assert_eq(waiter_join(&wt), 0);
	poll_progress(&q2, 2, 1);
	nfence_queue_destroy(&q2);

	/* Gone: adapter 0's signals interrupt no more. */
	nfence_fence_destroy(fds[2], h2);
	assert_gone(2, &m2);
	peer_counters(before);
	gpu_signals(&q, &x, 0, n, &v);
	wait_peer_taken(1, &before[1], n);
	assert_peer(0, &before[0], 0, n, "GPU signals, peers only again");

	nfence_queue_destroy(&q);
	xf_destroy(&x);
}

static void test_peer_instances(void)
{
	const uint64_t n = 8;
	struct nfence_interrupts before[3];
	struct drm_nfence_fence_mapping m1[2];
	struct nfence_queue q;
	uint64_t v = 0;
	uint32_t h1[2];
	struct xf x;

	nfence_watchdog(WATCHDOG_S);
	require_peer();
	xf_create(&x, 0, 0);
	queue(&q, 0);

	/* Adapter 1's instance gone: adapter 0's GPU rings nobody. */
	nfence_fence_destroy(fds[1], x.h[1]);
	nfence_fence_unmap(x.v[1]);
	x.h[1] = 0;
	x.v[1] = NULL;
	assert_gone(1, &x.m[1]);
	peer_counters(before);
	gpu_signals(&q, &x, 0, n, &v);
	usleep(QUIET_MS * 1000);
	assert_peer(0, &before[0], 0, 0, "the only instance");
	assert_peer(1, &before[1], 0, 0, "no instance");
	wait_peer_taken(1, &before[1], 0);

	/* Two instances on adapter 1: a ring for each per signal. */
	for (int i = 0; i < 2; i++)
		h1[i] = nfence_fence_open(fds[1], devs[1], x.sfd, 0, &m1[i]);
	peer_counters(before);
	gpu_signals(&q, &x, 0, n, &v);
	wait_peer_taken(1, &before[1], 2 * n);
	assert_peer(0, &before[0], 0, 2 * n, "two instances on adapter 1");
	for (int i = 0; i < 2; i++)
		igt_assert_eq_u64(read_value(fds[1], &m1[i]), v);

	/* One of them gone, the other still rung. */
	nfence_fence_destroy(fds[1], h1[0]);
	assert_gone(1, &m1[0]);
	peer_counters(before);
	gpu_signals(&q, &x, 0, n, &v);
	wait_peer_taken(1, &before[1], n);
	assert_peer(0, &before[0], 0, n, "one instance left on adapter 1");
	nfence_fence_destroy(fds[1], h1[1]);

	nfence_queue_destroy(&q);
	xf_destroy(&x);
}

/* Adapter 0's GPU signals a fence without a pause, fed from a thread. */
struct gpu_signaler {
	pthread_t thread;
	struct nfence_queue q;
	struct nfence_bo cmds;
	const struct drm_nfence_fence_mapping *m;
	uint64_t value;
	int stop;
	int error;
};

/* FENCE_SIGNALs per submission, each after 20 us of work. */
#define GPU_SIGNALS_PER	64
/* Bytes of each half of the command buffer: 64 x (WORK 16 + SIGNAL 32). */
#define GPU_SIGNALS_HALF	4096

/*
 * Two halves of @cmds taken in turn, a half written again only once the
 * submission before the last is done. A failed submission or wait ends
 * the thread and is reported (the encoder's own checks cannot fire: a
 * half holds the 3,072 bytes of a submission).
 */
static void *gpu_signaler_fn(void *arg)
{
	struct gpu_signaler *s = arg;
	uint64_t half = GPU_SIGNALS_HALF, n;
	struct nfence_cs cs;
	int ret;

	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
		n = s->q.submitted;
		if (n >= 2 && !nfence_queue_poll(&s->q, n - 1, WAIT_MS)) {
			s->error = -ETIMEDOUT;
			break;
		}
		nfence_cs_init(&cs, (char *)s->cmds.cpu + (n % 2) * half,
			       s->cmds.gpu_va + (n % 2) * half, half);
		for (int i = 0; i < GPU_SIGNALS_PER; i++) {
			nfence_cs_work(&cs, 20000);
			nfence_cs_signal_fence(&cs, s->m,
					       __atomic_add_fetch(&s->value, 1,
								  __ATOMIC_SEQ_CST));
		}
		ret = __nfence_queue_submit(&s->q, &cs);
		if (ret) {
			s->error = ret;
			break;
		}
	}
	return NULL;
}

/*
 * Peer signals: adapter 0's GPU signals without a pause while adapter 1
 * keeps opening the fence (several instances a round), waiting on the CPU
 * a little ahead of the value and closing the instances again: every
 * instance joins and leaves the peer table while the GPU rings, and every
 * wait must be released by a ring (or its own look at the value).
 */
static void test_peer_open_while_gpu_signals(void)
{
	uint64_t start, cap, done = 0;
	struct gpu_signaler sg;
	struct xf x;
	int err = 0;

	nfence_watchdog(STRESS_CAP_S + STRESS_WAIT_MS / 1000 + 30);
	require_peer();
	xf_create(&x, 0, 0);
	memset(&sg, 0, sizeof(sg));
	sg.m = &x.m[0];
	queue(&sg.q, 0);
	nfence_bo_create(fds[0], devs[0], 2 * GPU_SIGNALS_HALF,
			 NFENCE_SEGMENT_SYSTEM, 0, &sg.cmds);
	igt_assert_eq(nfence_thread_create(&sg.thread, gpu_signaler_fn, &sg),
		      0);
	start = nfence_monotonic_ns();
	cap = start + STRESS_CAP_S / 2 * 1000 * MS;

	err = open_wait_close_rounds(&x, false, cap, &done);
	__atomic_store_n(&sg.stop, 1, __ATOMIC_SEQ_CST);
	igt_assert_eq(nfence_thread_join(sg.thread, JOIN_MS), 0);
	igt_info("open/wait/destroy on adapter 1 while adapter 0's GPU "
		 "signals: %" PRIu64 " rounds, %" PRIu64 " signals in %"
		 PRIu64 " ms\n", done, sg.value,
		 (nfence_monotonic_ns() - start) / MS);
	/* The signaler's failure first: it makes the waits time out. */
	igt_assert_f(!sg.error, "GPU signaler: %s\n", strerror(-sg.error));
	igt_assert_f(!err, "round %" PRIu64 ": %s\n", done + 1,
		     strerror(-err));
	igt_assert_lte_u64(STRESS_MIN, done);
	igt_assert(nfence_queue_poll(&sg.q, sg.q.submitted, WAIT_MS));
	xf_assert_value(&x, sg.value);
	nfence_queue_destroy(&sg.q);
	nfence_bo_destroy(&sg.cmds);
	xf_destroy(&x);
}

static void noop_handler(int sig)
{
	(void)sig;
}

/* The debugfs files the subtests use (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_fences", "nfence_interrupts", "nfence_queues",
	"nfence_device_error",
};

/* The debugfs directory of adapter @a, with every file the tests use. */
static int debugfs_dir(int a)
{
	return nfence_debugfs_dir_files(fds[a], debugfs_files,
					ARRAY_SIZE(debugfs_files));
}

igt_main
{
	igt_fixture {
		struct sigaction sa = { .sa_handler = noop_handler };

		/* SIGUSR1 interrupts a stuck waiter thread (no SA_RESTART). */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);

		fds[0] = nfence_open_adapter(0);
		nadapters = nfence_count_adapters();
		nfence_query_adapter(fds[0], &info[0]);
		igt_require_f(info[0].flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE,
			      "adapter 0 has no native fences\n");
		nfence_query_fence_caps(fds[0], &caps[0]);
		devs[0] = nfence_device_create(fds[0]);
		dbgs[0] = debugfs_dir(0);
		if (nadapters >= 2)
			fds[1] = __nfence_open_adapter(1);
		if (fds[1] >= 0) {
			nfence_query_adapter(fds[1], &info[1]);
			nfence_query_fence_caps(fds[1], &caps[1]);
			two = info[1].flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
			mixed = !two;
		}
		if (two || mixed) {
			devs[1] = nfence_device_create(fds[1]);
			dbgs[1] = debugfs_dir(1);
		}
		if (two && nadapters >= 3) {
			fds[2] = nfence_open_adapter(2);
			nfence_query_adapter(fds[2], &info[2]);
			nfence_query_fence_caps(fds[2], &caps[2]);
			devs[2] = nfence_device_create(fds[2]);
			dbgs[2] = debugfs_dir(2);
			peer = has_peer_signals(0) && has_peer_signals(1) &&
			       (info[2].flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE) &&
			       !has_peer_signals(2);
		}
		/* The subtests of the CPU path need it between 0 and 1. */
		if (two && (has_peer_signals(0) || has_peer_signals(1)))
			two = false;
		igt_info("%d nfence adapters, cross-adapter subtests %s, "
			 "mixed-* subtests %s, peer-* subtests %s\n", nadapters,
			 two ? "run" : "skip", mixed ? "run" : "skip",
			 peer ? "run" : "skip");
	}

	igt_describe("Every adapter with native fences reports "
		     "CROSS_ADAPTER in NATIVE_FENCE_CAPS.");
	igt_subtest("caps")
		test_caps();

	igt_describe("CROSS_ADAPTER with SHARED (and NT_SECURITY_SHARING, "
		     "NO_SIGNAL, NO_WAIT) creates a DEFAULT fence on a page of "
		     "its own with MonitoredValue 0; the creator's flags "
		     "hold.");
	igt_subtest("create")
		test_create();

	igt_describe("A CROSS_ADAPTER fence needs NT_SECURITY_SHARING to be "
		     "shared as an fd, which also opens on its own adapter.");
	igt_subtest("share-needs-nt-handle")
		test_share_needs_nt_handle();

	igt_describe("MonitoredValue stays 0 while CPU waiters (blocking and "
		     "async) come and go; an ordinary fence's follows them.");
	igt_subtest("monitored-zero")
		test_monitored_zero();

	igt_describe("MonitoredValue is 0 on both adapters, with a CPU "
		     "waiter on the other adapter too.");
	igt_subtest("monitored-zero-both")
		test_monitored_zero_both();

	igt_describe("Every CPU signal of a cross-adapter fence raises an "
		     "interrupt with no waiter anywhere; an ordinary fence's "
		     "raise none.");
	igt_subtest("interrupt-cpu-signals")
		test_interrupt_cpu_signals();

	igt_describe("Every GPU FENCE_SIGNAL (with the MonitoredValue VA) of "
		     "a cross-adapter fence raises an interrupt; an ordinary "
		     "fence's raise none.");
	igt_subtest("interrupt-gpu-signals")
		test_interrupt_gpu_signals();

	igt_describe("CPU and GPU signals on either adapter each raise one "
		     "interrupt on the adapter that signals.");
	igt_subtest("interrupt-both")
		test_interrupt_both();

	igt_describe("The fd of a cross-adapter fence opens on the other "
		     "adapter, both ways, with the open flags honored; an "
		     "ordinary fence's fd still fails there with -EINVAL.");
	igt_subtest("open-other-adapter")
		test_open_other_adapter();

	igt_describe("One CurrentValue: signals through any handle on either "
		     "adapter show in every CPU mapping and debugfs line, "
		     "and never lower it.");
	igt_subtest("shared-value")
		test_shared_value();

	igt_describe("A CPU signal on one adapter releases blocking, "
		     "WAIT_ANY and async CPU waits on the other adapter, only "
		     "once the value is reached; every direction.");
	igt_subtest("cpu-signal-cpu-wait")
		test_cpu_signal_cpu_wait();

	igt_describe("A CPU signal on one adapter releases a queue parked on "
		     "FENCE_WAIT (through its own GPU VA) on the other.");
	igt_subtest("cpu-signal-gpu-wait")
		test_cpu_signal_gpu_wait();

	igt_describe("A GPU FENCE_SIGNAL on one adapter releases blocking "
		     "and async CPU waits on the other.");
	igt_subtest("gpu-signal-cpu-wait")
		test_gpu_signal_cpu_wait();

	igt_describe("A GPU FENCE_SIGNAL on one adapter releases a GPU "
		     "FENCE_WAIT on the other, with no CPU waiter.");
	igt_subtest("gpu-signal-gpu-wait")
		test_gpu_signal_gpu_wait();

	igt_describe("Two queues on two adapters hand a fence back and forth "
		     "128 times, all submitted at once; one interrupt per "
		     "signal on each adapter.");
	igt_subtest("gpu-ping-pong")
		test_gpu_ping_pong();

	igt_describe("A legacy SUBMIT_WAIT on one adapter is released by a "
		     "CPU signal on the other; a legacy SUBMIT_SIGNAL releases "
		     "CPU and GPU waits on the other.");
	igt_subtest("legacy-wait-signal")
		test_legacy_wait_signal();

	igt_describe("Adapter 0 with native fences, adapter 1 without: a "
		     "cross-adapter fence created native on 0 or monitored on "
		     "1 opens on the other as the other's kind (a monitored "
		     "fence has no MonitoredValue) over one value, and each "
		     "side outlives the other's destroy.");
	igt_subtest("mixed-open")
		test_mixed_open();

	igt_describe("Seed 14.1.2: CPU and GPU signals on the native side "
		     "release a CPU wait and a legacy SUBMIT_WAIT on the "
		     "monitored side at their value and not before, one "
		     "native interrupt per signal on the native side.");
	igt_subtest("mixed-native-signals")
		test_mixed_native_signals();

	igt_describe("Seed 14.1.3: CPU, legacy SUBMIT_SIGNAL and command "
		     "buffer signals on the monitored side release a CPU wait "
		     "and a parked FENCE_WAIT on the native side at their "
		     "value and not before; only the command buffer's raise "
		     "(monitored) interrupts.");
	igt_subtest("mixed-monitored-signals")
		test_mixed_monitored_signals();

	igt_describe("The creating device in error: AlwaysSignaled on both "
		     "sides, every CPU and GPU wait of both released.");
	igt_subtest("mixed-device-error")
		test_mixed_device_error();

	igt_describe("Five handles on two files of each adapter: a signal "
		     "through any one releases CPU waiters on all the others "
		     "and GPU waits through three of them.");
	igt_subtest("many-handles")
		test_many_handles();

	igt_describe("One FENCE_SIGNAL of three cross-adapter fences and an "
		     "ordinary one releases a WAIT_ALL and a GPU wait for all "
		     "three on the other adapter; three interrupts.");
	igt_subtest("signal-many")
		test_signal_many();

	igt_describe("A child process opens the fd on its own file of "
		     "adapter 1, is released by adapter 0's signal and "
		     "answers.");
	igt_subtest("other-process")
		test_other_process();

	igt_describe("Adapter 1's file with async waits and a parked queue "
		     "(its context suspended: not waited for) is closed and "
		     "a process blocked on adapter 1 killed; adapter 0 "
		     "signals on and the fence still works.");
	igt_subtest("close-with-waiters")
		test_close_with_waiters();

	igt_describe("An instance's last handle destroyed while a thread "
		     "waits on it: the wait stays, and ends reached when the "
		     "other adapter signals.");
	igt_subtest("instance-handle-gone")
		test_instance_handle_gone();

	igt_describe("A cross-adapter fence has at most 256 instances: "
		     "further opens on another adapter fail with -ENOSPC and "
		     "make nothing; a closed one makes room for one.");
	igt_subtest("open-instance-limit")
		test_open_instance_limit();

	igt_describe("The creating device in error: CurrentValue 0xFFFFFFFF "
		     "on both adapters, and the other adapter's blocking, "
		     "async and GPU waiters are released.");
	igt_subtest("device-error")
		test_device_error();

	igt_describe("An instance opened on the other adapter after the "
		     "creating device's error is AlwaysSignaled: any CPU "
		     "wait passes, signals change nothing, a GPU wait passes.");
	igt_subtest("device-error-open-after")
		test_device_error_open_after();

	igt_describe("The creating device on one adapter goes into error "
		     "while the other adapter's GPU stores the fence's value "
		     "(FENCE_SIGNAL, WRITE64) back to back: CurrentValue is "
		     "0xFFFFFFFF afterwards, never lowered by a store that "
		     "raced the error.");
	igt_subtest("device-error-vs-gpu-stores")
		test_device_error_vs_gpu_stores();

	igt_describe("With the creator's handle and the fd gone, the other "
		     "adapter's handle keeps the fence: value, signals, "
		     "interrupts, CPU and GPU waits; its destroy frees it on "
		     "both adapters.");
	igt_subtest("lifetime-creator-gone")
		test_lifetime_creator_gone();

	igt_describe("Closing the creating file leaves the fence to the fd "
		     "and the other adapter's file; closing everything frees "
		     "it on both adapters.");
	igt_subtest("lifetime-close-files")
		test_lifetime_close_files();

	igt_describe("Lost wake-ups: two threads on two adapters ping-pong "
		     "CPU signals and waits thousands of times.");
	igt_subtest("stress-cpu-ping-pong")
		test_stress_cpu_ping_pong();

	igt_describe("Lost wake-ups: one adapter's GPU signals while the CPU "
		     "waits on the other, alternating, thousands of times.");
	igt_subtest("stress-gpu-signal-cpu-wait")
		test_stress_gpu_signal_cpu_wait();

	igt_describe("Adapter 1 opens, waits on and closes the fence over "
		     "and over while adapter 0 signals it without a pause.");
	igt_subtest("stress-open-while-signaling")
		test_stress_open_while_signaling();

	igt_describe("Peer signals: GPU signals on either adapter with peer "
		     "signals ring the other GPU and raise no interrupt while "
		     "nobody waits on the CPU; MonitoredValue is the CPU "
		     "waiters' bound, and a waiter's value interrupts on its "
		     "own adapter only.");
	igt_subtest("peer-gpu-signals")
		test_peer_gpu_signals();

	igt_describe("Peer signals: a GPU signal releases the other "
		     "adapter's parked queue, both ways, without an "
		     "interrupt.");
	igt_subtest("peer-gpu-wait")
		test_peer_gpu_wait();

	igt_describe("Peer signals: two GPUs hand a fence back and forth "
		     "128 times with no interrupt on either adapter.");
	igt_subtest("peer-ping-pong")
		test_peer_ping_pong();

	igt_describe("Peer signals: CPU signals still reach the other "
		     "adapter's CPU and GPU waiters through the CPU.");
	igt_subtest("peer-cpu-signals")
		test_peer_cpu_signals();

	igt_describe("Peer signals: while the fence is open on an adapter "
		     "without them, every GPU signal interrupts and that "
		     "adapter's waiters wake; once it is gone, none does.");
	igt_subtest("peer-cpu-instance")
		test_peer_cpu_instance();

	igt_describe("Peer signals: an instance that is gone is rung no "
		     "more; two instances on one adapter are rung once each.");
	igt_subtest("peer-instances")
		test_peer_instances();

	igt_describe("Peer signals: adapter 1 opens, waits on and closes "
		     "instances over and over while adapter 0's GPU signals "
		     "the fence without a pause.");
	igt_subtest("peer-open-while-gpu-signals")
		test_peer_open_while_gpu_signals();

	igt_fixture {
		nfence_watchdog(0);
		for (int a = 0; a < 3; a++) {
			if (dbgs[a] >= 0)
				close(dbgs[a]);
			if (fds[a] >= 0)
				close(fds[a]);
		}
	}
}
