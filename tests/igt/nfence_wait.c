// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Native fences: CPU waits and signals "
		     "(DRM_IOCTL_NFENCE_FENCE_WAIT/SIGNAL): deadlines, "
		     "any/all, eventfd waits, interruption and restart, "
		     "64-bit values, MonitoredValue and interrupt accounting, "
		     "lost-wakeup races, lifetimes of waiters and the "
		     "rejection of every invalid input.");

#define POISON		0xdeadbeefu
#define WATCHDOG_S	60
#define BLOCKED_MS	5000	/* a waiter shows up in debugfs */
#define JOIN_MS		5000	/* a released waiter returns */
#define WAITER_MS	10000	/* default waiter deadline */
#define QUIET_MS	100	/* "nothing happens" window */
#define MAX_FENCES	DRM_NFENCE_MAX_WAIT_FENCES
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define TYPE_INTRA_GPU	DRM_NFENCE_FENCE_TYPE_INTRA_GPU
#define SHAREABLE	NFENCE_FENCE_SHAREABLE
#define NO_SIGNAL	DRM_NFENCE_FENCE_NO_SIGNAL
#define NO_WAIT		DRM_NFENCE_FENCE_NO_WAIT
#define FLAG_ANY	DRM_NFENCE_WAIT_ANY
#define FLAG_ASYNC	DRM_NFENCE_WAIT_ASYNC
#define INFINITE	DRM_NFENCE_TIMEOUT_INFINITE
#define RACE_ITERATIONS		20000
#define RACE_MANY_ITERATIONS	5000
#define RACE_WAITERS		4
#define RACE_CAP_S		20
#define RACE_WAIT_MS		5000

static int fd = -1;
static uint32_t dev;
static int dbg = -1;
/* The debugfs files the subtests use (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_fences", "nfence_interrupts", "nfence_device_error",
};
static bool native;
static struct drm_nfence_query_adapter adapter;
static struct drm_nfence_query_fence_caps caps;

static uint32_t create(uint32_t flags, uint64_t initial,
		       struct drm_nfence_fence_mapping *m)
{
	return nfence_fence_create(fd, dev, TYPE_DEFAULT, flags, initial, m);
}

static uint64_t read_value(const struct drm_nfence_fence_mapping *m)
{
	const volatile uint64_t *v = nfence_fence_map(fd, m);
	uint64_t value = *v;

	nfence_fence_unmap(v);
	return value;
}

static int wait_one(uint32_t handle, uint64_t value, int64_t timeout_ns)
{
	return __nfence_fence_wait_one(fd, dev, handle, value, timeout_ns);
}

static int poll_one(uint32_t handle, uint64_t value)
{
	return wait_one(handle, value, 0);
}

static int wait_many(uint32_t count, const uint32_t *handles,
		     const uint64_t *values, uint32_t flags,
		     int64_t timeout_ns, int efd, uint32_t *first)
{
	struct drm_nfence_fence_wait w = {
		.device = dev,
		.count = count,
		.handles = (uintptr_t)handles,
		.values = (uintptr_t)values,
		.timeout_ns = timeout_ns,
		.flags = flags,
		.eventfd = efd,
		.first_signaled = POISON,
	};
	int ret = __nfence_fence_wait(fd, &w);

	if (first)
		*first = w.first_signaled;
	return ret;
}

static int signal_many(uint32_t count, const uint32_t *handles,
		       const uint64_t *values)
{
	struct drm_nfence_fence_signal s = {
		.device = dev,
		.count = count,
		.handles = (uintptr_t)handles,
		.values = (uintptr_t)values,
	};

	return __nfence_fence_signal(fd, &s);
}

static void debugfs_fence(const struct drm_nfence_fence_mapping *m,
			  struct nfence_debugfs_fence *f)
{
	nfence_debugfs_fence(dbg, m, f);
}

/* Wait until debugfs shows @n waiters on the fence; returns its line. */
static void wait_waiters(const struct drm_nfence_fence_mapping *m,
			 uint64_t n, struct nfence_debugfs_fence *f)
{
	struct nfence_debugfs_fence tmp;
	int ret;

	if (!f)
		f = &tmp;
	ret = nfence_debugfs_fence_wait(dbg, m, n, BLOCKED_MS, f);
	igt_assert_f(ret == 0,
		     "fence %" PRIu64 ":%u: waiters %" PRIu64 ", expected %"
		     PRIu64 ": %s\n", (uint64_t)m->cpu_mmap_offset,
		     m->cpu_value_offset, f->waiters, n, strerror(-ret));
}

/* Let @n waiters block on the fence: until debugfs shows them. */
static void settle(const struct drm_nfence_fence_mapping *m, uint64_t n)
{
	wait_waiters(m, n, NULL);
}

/* No waiter left behind, MonitoredValue back at UINT64_MAX. */
static void assert_idle(const struct drm_nfence_fence_mapping *m)
{
	struct nfence_debugfs_fence f;

	wait_waiters(m, 0, &f);
	igt_assert_eq_u64(f.monitored, UINT64_MAX);
}

static void assert_monitored(const struct drm_nfence_fence_mapping *m,
			     uint64_t waiters, uint64_t monitored)
{
	struct nfence_debugfs_fence f;

	wait_waiters(m, waiters, &f);
	igt_assert_eq_u64(f.monitored, monitored);
}

static void noop_handler(int sig)
{
	(void)sig;
}

static void install_handler(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	igt_assert_eq(sigaction(sig, &sa, NULL), 0);
}

/* A thread doing one wait ioctl. */
struct waiter {
	pthread_t thread;
	int fd;
	uint32_t device;
	uint32_t count;
	uint32_t handles[MAX_FENCES];
	uint64_t values[MAX_FENCES];
	uint32_t flags;
	int64_t timeout_ns;
	int result;
	uint32_t first_signaled;
	uint64_t end_ns;
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
		.timeout_ns = w->timeout_ns,
		.flags = w->flags,
		.first_signaled = POISON,
	};

	w->result = __nfence_fence_wait(w->fd, &wait);
	w->first_signaled = wait.first_signaled;
	w->end_ns = nfence_monotonic_ns();
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void waiter_start_full(struct waiter *w, uint32_t device,
			      uint32_t count, const uint32_t *handles,
			      const uint64_t *values, uint32_t flags,
			      int64_t timeout_ns)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->device = device;
	w->count = count;
	memcpy(w->handles, handles, count * sizeof(*handles));
	memcpy(w->values, values, count * sizeof(*values));
	w->flags = flags;
	w->timeout_ns = timeout_ns;
	w->result = 1;
	igt_assert_eq(nfence_thread_create(&w->thread, waiter_fn, w), 0);
	w->running = true;
}

static void waiter_start_many(struct waiter *w, uint32_t count,
			      const uint32_t *handles, const uint64_t *values,
			      uint32_t flags, int64_t timeout_ns)
{
	waiter_start_full(w, dev, count, handles, values, flags, timeout_ns);
}

static void waiter_start_dev(struct waiter *w, uint32_t device,
			     uint32_t handle, uint64_t value,
			     int64_t timeout_ns)
{
	waiter_start_full(w, device, 1, &handle, &value, 0, timeout_ns);
}

static void waiter_start(struct waiter *w, uint32_t handle, uint64_t value,
			 int64_t timeout_ns)
{
	waiter_start_many(w, 1, &handle, &value, 0, timeout_ns);
}

static bool waiter_done(struct waiter *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_SEQ_CST);
}

/*
 * Join a waiter that must return within @ms. One that does not is
 * interrupted (SIGUSR1, no SA_RESTART) so that it does not outlive the
 * subtest, and the subtest fails.
 */
static int waiter_join(struct waiter *w, unsigned int ms)
{
	int ret;

	igt_assert(w->running);
	ret = nfence_thread_join(w->thread, ms);
	if (ret) {
		pthread_kill(w->thread, SIGUSR1);
		if (!nfence_thread_join(w->thread, 2000))
			w->running = false;
		igt_assert_f(false, "waiter did not return within %u ms%s\n",
			     ms, w->running ? ", not even when interrupted" :
			     "");
	}
	w->running = false;
	return w->result;
}

/* The waiter is still blocked after a while. */
static void assert_still_waiting(struct waiter *w)
{
	usleep(QUIET_MS * 1000);
	igt_assert_f(!waiter_done(w), "waiter returned %d too early\n",
		     w->result);
}

static void assert_value(const struct drm_nfence_fence_mapping *m,
			 uint64_t value)
{
	igt_assert_eq_u64(read_value(m), value);
}

/* Whether @efd becomes readable within @ms; reads the count if so. */
static bool eventfd_fired(int efd, int ms, uint64_t *count)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t c = 0;
	int ret;

	do {
		ret = poll(&pfd, 1, ms);
	} while (ret < 0 && errno == EINTR);
	igt_assert_lte(0, ret);
	if (!ret)
		return false;
	igt_assert_eq(read(efd, &c, sizeof(c)), sizeof(c));
	if (count)
		*count = c;
	return true;
}

static int new_eventfd(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	igt_assert_fd(efd);
	return efd;
}

/*
 * Two pages, the second PROT_NONE: an array ending at the boundary
 * straddles into memory the kernel cannot read.
 */
static char *guarded_pages(void)
{
	char *p = mmap(NULL, 2 * NFENCE_FENCE_PAGE_SIZE,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	igt_assert(p != MAP_FAILED);
	igt_assert_eq(mprotect(p + NFENCE_FENCE_PAGE_SIZE,
			       NFENCE_FENCE_PAGE_SIZE, PROT_NONE), 0);
	return p;
}

static void expect_wait_error(int wfd, const struct drm_nfence_fence_wait *in,
			      int err)
{
	struct drm_nfence_fence_wait w = *in;

	igt_assert_eq(__nfence_fence_wait(wfd, &w), err);
}

static void expect_signal_error(int sfd,
				const struct drm_nfence_fence_signal *in,
				int err)
{
	struct drm_nfence_fence_signal s = *in;

	igt_assert_eq(__nfence_fence_signal(sfd, &s), err);
}

/* A valid poll of one unsignaled fence: -ETIME unless something is bad. */
static struct drm_nfence_fence_wait wait_args(const uint32_t *h,
					      const uint64_t *v)
{
	struct drm_nfence_fence_wait w = {
		.device = dev,
		.count = 1,
		.handles = (uintptr_t)h,
		.values = (uintptr_t)v,
	};

	return w;
}

static struct drm_nfence_fence_signal signal_args(const uint32_t *h,
						  const uint64_t *v,
						  uint32_t count)
{
	struct drm_nfence_fence_signal s = {
		.device = dev,
		.count = count,
		.handles = (uintptr_t)h,
		.values = (uintptr_t)v,
	};

	return s;
}

/* A device handle of file @of that names nothing on file @on. */
static uint32_t foreign_device(int of, int on, uint32_t on_dev)
{
	uint32_t d;

	(void)on;
	do {
		d = nfence_device_create(of);
	} while (d == on_dev);
	return d;
}

static void test_wait_bad_pad(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1;
	struct drm_nfence_fence_wait w = wait_args(&h, &v);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++) {
		w.pad = 1u << bit;
		expect_wait_error(fd, &w, -EINVAL);
	}
	w.pad = UINT32_MAX;
	expect_wait_error(fd, &w, -EINVAL);
	w.pad = 0;
	expect_wait_error(fd, &w, -ETIME);
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_wait_bad_flags(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1;
	struct drm_nfence_fence_wait w = wait_args(&h, &v);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 2; bit < 32; bit++) {
		w.flags = 1u << bit;
		expect_wait_error(fd, &w, -EINVAL);
		w.flags |= FLAG_ANY;
		expect_wait_error(fd, &w, -EINVAL);
	}
	w.flags = UINT32_MAX & ~FLAG_ASYNC;
	expect_wait_error(fd, &w, -EINVAL);
	w.flags = FLAG_ANY;
	expect_wait_error(fd, &w, -ETIME);
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_wait_bad_count(void)
{
	static uint32_t handles[MAX_FENCES + 1];
	static uint64_t values[MAX_FENCES + 1];
	const uint32_t counts[] = {
		MAX_FENCES + 1, MAX_FENCES + 2, 1024, 0x10000, 0x80000000u,
		UINT32_MAX,
	};
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	struct drm_nfence_fence_wait w = wait_args(handles, values);
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i <= MAX_FENCES; i++) {
		handles[i] = h;
		values[i] = 1;
	}

	for (int flags = 0; flags < 2; flags++) {
		w.flags = flags ? FLAG_ANY : 0;
		w.count = 0;
		expect_wait_error(fd, &w, -EINVAL);
		for (unsigned int i = 0; i < ARRAY_SIZE(counts); i++) {
			w.count = counts[i];
			expect_wait_error(fd, &w, -EINVAL);
		}
	}
	/* count 0 with NULL pointers: still -EINVAL, not -EFAULT. */
	w = wait_args(NULL, NULL);
	w.count = 0;
	expect_wait_error(fd, &w, -EINVAL);
	/* Async too. */
	w = wait_args(handles, values);
	w.flags = FLAG_ASYNC;
	w.eventfd = efd;
	w.count = 0;
	expect_wait_error(fd, &w, -EINVAL);
	w.count = MAX_FENCES + 1;
	expect_wait_error(fd, &w, -EINVAL);
	igt_assert(!eventfd_fired(efd, 0, NULL));

	/* 64 is fine. */
	w = wait_args(handles, values);
	w.count = MAX_FENCES;
	expect_wait_error(fd, &w, -ETIME);
	assert_idle(&m);
	close(efd);
	nfence_fence_destroy(fd, h);
}

static void test_wait_bad_pointers(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h[2];
	uint64_t v[2] = { 1, 1 };
	char *guard = guarded_pages();
	char *edge = guard + NFENCE_FENCE_PAGE_SIZE;
	const uint64_t kernel = 0xffff800000000000ull;
	struct drm_nfence_fence_wait w;

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 0, &m);
	h[1] = h[0];

	/* NULL, unmapped and kernel addresses. */
	w = wait_args(NULL, v);
	expect_wait_error(fd, &w, -EFAULT);
	w = wait_args(h, NULL);
	expect_wait_error(fd, &w, -EFAULT);
	w = wait_args((uint32_t *)edge, v);
	expect_wait_error(fd, &w, -EFAULT);
	w = wait_args(h, (uint64_t *)edge);
	expect_wait_error(fd, &w, -EFAULT);
	w = wait_args(h, v);
	w.handles = kernel;
	expect_wait_error(fd, &w, -EFAULT);
	w = wait_args(h, v);
	w.values = kernel;
	expect_wait_error(fd, &w, -EFAULT);

	/* Arrays whose second element is unreadable. */
	memcpy(edge - sizeof(uint32_t), h, sizeof(uint32_t));
	w = wait_args((uint32_t *)(edge - sizeof(uint32_t)), v);
	w.count = 2;
	expect_wait_error(fd, &w, -EFAULT);
	memcpy(edge - sizeof(uint64_t), v, sizeof(uint64_t));
	w = wait_args(h, (uint64_t *)(edge - sizeof(uint64_t)));
	w.count = 2;
	expect_wait_error(fd, &w, -EFAULT);

	/* Read-only memory is fine: the arrays are only read. */
	memcpy(guard, h, sizeof(h));
	memcpy(guard + 64, v, sizeof(v));
	igt_assert_eq(mprotect(guard, NFENCE_FENCE_PAGE_SIZE, PROT_READ), 0);
	w = wait_args((uint32_t *)guard, (uint64_t *)(guard + 64));
	w.count = 2;
	expect_wait_error(fd, &w, -ETIME);

	assert_idle(&m);
	munmap(guard, 2 * NFENCE_FENCE_PAGE_SIZE);
	nfence_fence_destroy(fd, h[0]);
}

static void test_wait_bad_device(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint32_t gone = nfence_device_create(fd);
	uint64_t v = 1;
	struct drm_nfence_fence_wait w = wait_args(&h, &v);
	uint32_t other, live;
	int fd2 = nfence_open();

	nfence_watchdog(WATCHDOG_S);
	nfence_device_destroy(fd, gone);
	other = foreign_device(fd2, fd, dev);

	w.device = 0;
	expect_wait_error(fd, &w, -ENOENT);
	w.device = gone;
	expect_wait_error(fd, &w, -ENOENT);
	w.device = UINT32_MAX;
	expect_wait_error(fd, &w, -ENOENT);
	if (other != gone) {
		w.device = other;
		expect_wait_error(fd, &w, -ENOENT);
	}
	/* A live device of this file that does not own the fence. */
	live = nfence_device_create(fd);
	w.device = live;
	expect_wait_error(fd, &w, -ENOENT);
	/* Also when the fence is already signaled. */
	v = 0;
	w.device = 0;
	expect_wait_error(fd, &w, -ENOENT);
	w.device = live;
	expect_wait_error(fd, &w, -ENOENT);
	assert_idle(&m);
	nfence_device_destroy(fd, live);
	close(fd2);
	nfence_fence_destroy(fd, h);
}

/* Handle @bad at each position of an array of otherwise good handles. */
static void check_bad_wait_handle(const uint32_t *good, uint64_t good_value,
				  uint32_t bad)
{
	uint32_t h[3];
	uint64_t v[3] = { good_value, good_value, good_value };

	for (int pos = 0; pos < 3; pos++) {
		for (int flags = 0; flags < 2; flags++) {
			struct drm_nfence_fence_wait w = wait_args(h, v);

			memcpy(h, good, sizeof(h));
			h[pos] = bad;
			w.count = 3;
			w.flags = flags ? FLAG_ANY : 0;
			expect_wait_error(fd, &w, -ENOENT);
		}
	}
}

static void test_wait_bad_handle(void)
{
	struct drm_nfence_fence_mapping m[3];
	uint32_t good[3], gone, other;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 3; i++)
		good[i] = create(0, 5, &m[i]);
	gone = create(0, 5, NULL);
	nfence_fence_destroy(fd, gone);
	/* A handle of fd2 that names no fence of fd. */
	do {
		other = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, 0, 5,
					    NULL);
	} while (other == good[0] || other == good[1] || other == good[2]);

	/* Unsatisfied (a poll would time out) and satisfied values. */
	for (int satisfied = 0; satisfied < 2; satisfied++) {
		uint64_t value = satisfied ? 5 : 6;

		check_bad_wait_handle(good, value, 0);
		check_bad_wait_handle(good, value, gone);
		check_bad_wait_handle(good, value, UINT32_MAX);
		check_bad_wait_handle(good, value, good[2] + 1000);
		check_bad_wait_handle(good, value, other);
	}
	for (int i = 0; i < 3; i++) {
		assert_idle(&m[i]);
		nfence_fence_destroy(fd, good[i]);
	}
	close(fd2);
}

static void test_wait_async_timeout(void)
{
	const int64_t timeouts[] = { 1, -1, INT64_MIN, INFINITE };
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	/* The fixed ones, then a deadline 1 s ahead. */
	for (unsigned int i = 0; i <= ARRAY_SIZE(timeouts); i++) {
		struct drm_nfence_fence_wait w = wait_args(&h, &v);

		w.flags = FLAG_ASYNC;
		w.eventfd = efd;
		w.timeout_ns = i < ARRAY_SIZE(timeouts) ? timeouts[i] :
			       nfence_deadline_ms(1000);
		expect_wait_error(fd, &w, -EINVAL);
		w.flags |= FLAG_ANY;
		expect_wait_error(fd, &w, -EINVAL);
	}
	/* Nothing was registered: a signal fires nothing. */
	assert_idle(&m);
	nfence_fence_signal(fd, dev, h, 1);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	close(efd);
	nfence_fence_destroy(fd, h);
}

static void test_wait_eventfd_without_async(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1;
	int efd = new_eventfd();
	struct drm_nfence_fence_wait w = wait_args(&h, &v);

	nfence_watchdog(WATCHDOG_S);
	w.eventfd = efd;
	expect_wait_error(fd, &w, -EINVAL);
	w.flags = FLAG_ANY;
	expect_wait_error(fd, &w, -EINVAL);
	w.timeout_ns = nfence_deadline_ms(1000);
	expect_wait_error(fd, &w, -EINVAL);
	w.eventfd = -1;
	expect_wait_error(fd, &w, -EINVAL);
	/* Also when satisfied. */
	v = 0;
	w.eventfd = efd;
	expect_wait_error(fd, &w, -EINVAL);
	assert_idle(&m);
	igt_assert(!eventfd_fired(efd, 0, NULL));
	close(efd);
	nfence_fence_destroy(fd, h);
}

static void test_wait_async_bad_fd(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	/* Not reached yet, then reached: the wait queued or signalled now. */
	const uint64_t values[] = { 1, 0 };
	int p[2], nfd, closed[2];

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(pipe2(p, O_CLOEXEC), 0);
	nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	igt_assert_fd(nfd);
	igt_assert_eq(pipe2(closed, O_CLOEXEC), 0);
	close(closed[0]);
	close(closed[1]);

	for (unsigned int k = 0; k < ARRAY_SIZE(values); k++) {
		const int not_eventfd[] = { p[0], p[1], nfd, fd };
		const int not_open[] = { closed[0], -1, INT_MAX, INT_MIN };
		uint64_t v = values[k];

		for (unsigned int i = 0; i < ARRAY_SIZE(not_eventfd); i++) {
			struct drm_nfence_fence_wait w = wait_args(&h, &v);

			w.flags = FLAG_ASYNC;
			w.eventfd = not_eventfd[i];
			expect_wait_error(fd, &w, -EINVAL);
		}
		for (unsigned int i = 0; i < ARRAY_SIZE(not_open); i++) {
			struct drm_nfence_fence_wait w = wait_args(&h, &v);

			w.flags = FLAG_ASYNC;
			w.eventfd = not_open[i];
			expect_wait_error(fd, &w, -EBADF);
		}
	}
	assert_idle(&m);
	close(nfd);
	close(p[0]);
	close(p[1]);
	nfence_fence_destroy(fd, h);
}

static void test_wait_no_wait_handle(void)
{
	struct drm_nfence_fence_mapping m, om;
	uint32_t nw, sh, onw, good;
	uint64_t v[2] = { 1, 1 };
	int sfd, efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	nw = create(NO_WAIT, 0, &m);
	sh = create(SHAREABLE, 0, &om);
	sfd = nfence_fence_share(fd, sh);
	onw = nfence_fence_open(fd, dev, sfd, NO_WAIT, NULL);
	good = create(0, 5, NULL);

	for (int satisfied = 0; satisfied < 2; satisfied++) {
		uint64_t value = satisfied ? 0 : 1;

		igt_assert_eq(poll_one(nw, value), -EACCES);
		igt_assert_eq(poll_one(onw, value), -EACCES);
		igt_assert_eq(wait_one(nw, value, nfence_deadline_ms(1000)),
			      -EACCES);
	}
	/* Inside an array, with ANY and a satisfied neighbour too. */
	{
		uint32_t hs[2] = { good, onw };

		v[0] = 1;
		igt_assert_eq(wait_many(2, hs, v, 0, 0, 0, NULL), -EACCES);
		igt_assert_eq(wait_many(2, hs, v, FLAG_ANY, 0, 0, NULL),
			      -EACCES);
		igt_assert_eq(wait_many(1, &onw, v, FLAG_ASYNC, 0, efd, NULL),
			      -EACCES);
	}

	/* The same fences wait fine through handles allowed to. */
	igt_assert_eq(poll_one(sh, 1), -ETIME);
	/* A NO_WAIT handle may signal. */
	nfence_fence_signal(fd, dev, onw, 1);
	nfence_fence_signal(fd, dev, nw, 1);
	igt_assert_eq(poll_one(sh, 1), 0);
	assert_value(&m, 1);
	assert_idle(&m);
	assert_idle(&om);
	igt_assert(!eventfd_fired(efd, 0, NULL));

	close(efd);
	close(sfd);
	nfence_fence_destroy(fd, onw);
	nfence_fence_destroy(fd, sh);
	nfence_fence_destroy(fd, nw);
	nfence_fence_destroy(fd, good);
}

static void test_wait_intra_gpu(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t ig, good;
	uint64_t v[2] = { 0, 0 };
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	igt_require(caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
	ig = nfence_fence_create(fd, dev, TYPE_INTRA_GPU, 0, 0, NULL);
	good = create(0, 0, &m);

	igt_assert_eq(poll_one(ig, 0), -EINVAL);
	igt_assert_eq(poll_one(ig, 1), -EINVAL);
	igt_assert_eq(wait_one(ig, 1, nfence_deadline_ms(1000)), -EINVAL);
	igt_assert_eq(wait_many(1, &ig, v, FLAG_ASYNC, 0, efd, NULL),
		      -EINVAL);
	{
		uint32_t hs[2] = { good, ig };

		igt_assert_eq(wait_many(2, hs, v, 0, 0, 0, NULL), -EINVAL);
		igt_assert_eq(wait_many(2, hs, v, FLAG_ANY, 0, 0, NULL),
			      -EINVAL);
	}
	assert_idle(&m);
	igt_assert(!eventfd_fired(efd, 0, NULL));
	close(efd);
	nfence_fence_destroy(fd, good);
	nfence_fence_destroy(fd, ig);
}

static void test_signal_bad_flags(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 3, &m);
	uint64_t v = 10;
	struct drm_nfence_fence_signal s = signal_args(&h, &v, 1);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++) {
		s.flags = 1u << bit;
		expect_signal_error(fd, &s, -EINVAL);
	}
	s.flags = UINT32_MAX;
	expect_signal_error(fd, &s, -EINVAL);
	assert_value(&m, 3);
	s.flags = 0;
	expect_signal_error(fd, &s, 0);
	assert_value(&m, 10);
	nfence_fence_destroy(fd, h);
}

static void test_signal_bad_pad(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 3, &m);
	uint64_t v = 10;
	struct drm_nfence_fence_signal s = signal_args(&h, &v, 1);

	nfence_watchdog(WATCHDOG_S);
	for (int bit = 0; bit < 32; bit++) {
		s.pad = 1u << bit;
		expect_signal_error(fd, &s, -EINVAL);
	}
	s.pad = UINT32_MAX;
	expect_signal_error(fd, &s, -EINVAL);
	assert_value(&m, 3);
	nfence_fence_destroy(fd, h);
}

static void test_signal_bad_count(void)
{
	static uint32_t handles[MAX_FENCES + 1];
	static uint64_t values[MAX_FENCES + 1];
	const uint32_t counts[] = {
		0, MAX_FENCES + 1, MAX_FENCES + 2, 1024, 0x80000000u,
		UINT32_MAX,
	};
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i <= MAX_FENCES; i++) {
		handles[i] = h;
		values[i] = i + 1;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(counts); i++) {
		struct drm_nfence_fence_signal s =
			signal_args(handles, values, counts[i]);

		expect_signal_error(fd, &s, -EINVAL);
	}
	{
		struct drm_nfence_fence_signal s = signal_args(NULL, NULL, 0);

		expect_signal_error(fd, &s, -EINVAL);
	}
	assert_value(&m, 0);

	/* 64 is fine: the same fence 64 times, the largest value wins. */
	{
		struct drm_nfence_fence_signal s =
			signal_args(handles, values, MAX_FENCES);

		expect_signal_error(fd, &s, 0);
	}
	assert_value(&m, MAX_FENCES);
	nfence_fence_destroy(fd, h);
}

static void test_signal_bad_pointers(void)
{
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];
	uint64_t v[2] = { 7, 7 };
	char *guard = guarded_pages();
	char *edge = guard + NFENCE_FENCE_PAGE_SIZE;
	const uint64_t kernel = 0xffff800000000000ull;
	struct drm_nfence_fence_signal s;

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 0, &m[0]);
	h[1] = create(0, 0, &m[1]);

	s = signal_args(NULL, v, 1);
	expect_signal_error(fd, &s, -EFAULT);
	s = signal_args(h, NULL, 1);
	expect_signal_error(fd, &s, -EFAULT);
	s = signal_args((uint32_t *)edge, v, 1);
	expect_signal_error(fd, &s, -EFAULT);
	s = signal_args(h, (uint64_t *)edge, 1);
	expect_signal_error(fd, &s, -EFAULT);
	s = signal_args(h, v, 1);
	s.handles = kernel;
	expect_signal_error(fd, &s, -EFAULT);
	s = signal_args(h, v, 1);
	s.values = kernel;
	expect_signal_error(fd, &s, -EFAULT);

	/* First element readable, second not: nothing is signaled. */
	memcpy(edge - sizeof(uint32_t), h, sizeof(uint32_t));
	s = signal_args((uint32_t *)(edge - sizeof(uint32_t)), v, 2);
	expect_signal_error(fd, &s, -EFAULT);
	memcpy(edge - sizeof(uint64_t), v, sizeof(uint64_t));
	s = signal_args(h, (uint64_t *)(edge - sizeof(uint64_t)), 2);
	expect_signal_error(fd, &s, -EFAULT);

	assert_value(&m[0], 0);
	assert_value(&m[1], 0);
	munmap(guard, 2 * NFENCE_FENCE_PAGE_SIZE);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

static void test_signal_bad_device(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint32_t gone = nfence_device_create(fd);
	uint64_t v = 9;
	struct drm_nfence_fence_signal s = signal_args(&h, &v, 1);
	int fd2 = nfence_open();
	uint32_t other, live;

	nfence_watchdog(WATCHDOG_S);
	nfence_device_destroy(fd, gone);
	other = foreign_device(fd2, fd, dev);

	s.device = 0;
	expect_signal_error(fd, &s, -ENOENT);
	s.device = gone;
	expect_signal_error(fd, &s, -ENOENT);
	s.device = UINT32_MAX;
	expect_signal_error(fd, &s, -ENOENT);
	if (other != gone) {
		s.device = other;
		expect_signal_error(fd, &s, -ENOENT);
	}
	/* A live device of this file that does not own the fence. */
	live = nfence_device_create(fd);
	s.device = live;
	expect_signal_error(fd, &s, -ENOENT);
	nfence_device_destroy(fd, live);
	assert_value(&m, 0);
	close(fd2);
	nfence_fence_destroy(fd, h);
}

static void test_signal_bad_handle(void)
{
	struct drm_nfence_fence_mapping m[3];
	uint32_t good[3], bad[4];
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 3; i++)
		good[i] = create(0, 0, &m[i]);
	bad[0] = 0;
	bad[1] = create(0, 0, NULL);
	nfence_fence_destroy(fd, bad[1]);
	bad[2] = good[2] + 1000;
	do {
		bad[3] = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, 0, 0,
					     NULL);
	} while (bad[3] == good[0] || bad[3] == good[1] || bad[3] == good[2]);

	/* A waiter on the first good fence must not be released. */
	waiter_start(&w, good[0], 1, nfence_deadline_ms(WAITER_MS));
	settle(&m[0], 1);

	for (unsigned int b = 0; b < ARRAY_SIZE(bad); b++) {
		for (int pos = 0; pos < 3; pos++) {
			uint32_t h[3];
			uint64_t v[3] = { 1, 2, 3 };
			struct drm_nfence_fence_signal s =
				signal_args(h, v, 3);

			memcpy(h, good, sizeof(h));
			h[pos] = bad[b];
			expect_signal_error(fd, &s, -ENOENT);
			for (int i = 0; i < 3; i++)
				assert_value(&m[i], 0);
		}
	}
	igt_assert(!waiter_done(&w));
	nfence_fence_signal(fd, dev, good[0], 1);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);

	for (int i = 0; i < 3; i++)
		nfence_fence_destroy(fd, good[i]);
	close(fd2);
}

static void test_signal_no_signal_handle(void)
{
	struct drm_nfence_fence_mapping m, om, gm;
	uint32_t ns, sh, ons, good;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	ns = create(NO_SIGNAL, 0, &m);
	sh = create(SHAREABLE, 0, &om);
	sfd = nfence_fence_share(fd, sh);
	ons = nfence_fence_open(fd, dev, sfd, NO_SIGNAL, NULL);
	good = create(0, 0, &gm);

	igt_assert_eq(__nfence_fence_signal_one(fd, dev, ns, 1), -EACCES);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, ons, 1), -EACCES);
	/* Even a signal that would not change anything. */
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, ns, 0), -EACCES);
	{
		uint32_t hs[2] = { good, ons };
		uint64_t vs[2] = { 5, 5 };

		igt_assert_eq(signal_many(2, hs, vs), -EACCES);
		hs[1] = ns;
		igt_assert_eq(signal_many(2, hs, vs), -EACCES);
	}
	assert_value(&m, 0);
	assert_value(&om, 0);
	assert_value(&gm, 0);

	/* NO_SIGNAL handles wait fine; the creator's handle signals. */
	igt_assert_eq(poll_one(ons, 1), -ETIME);
	nfence_fence_signal(fd, dev, sh, 1);
	igt_assert_eq(poll_one(ons, 1), 0);
	igt_assert_eq(poll_one(ns, 0), 0);
	igt_assert_eq(poll_one(ns, 1), -ETIME);

	close(sfd);
	nfence_fence_destroy(fd, ons);
	nfence_fence_destroy(fd, sh);
	nfence_fence_destroy(fd, ns);
	nfence_fence_destroy(fd, good);
}

static void test_signal_intra_gpu(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t ig, good;

	nfence_watchdog(WATCHDOG_S);
	igt_require(caps.flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
	ig = nfence_fence_create(fd, dev, TYPE_INTRA_GPU, 0, 0, NULL);
	good = create(0, 0, &m);

	igt_assert_eq(__nfence_fence_signal_one(fd, dev, ig, 1), -EINVAL);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, ig, 0), -EINVAL);
	{
		uint32_t hs[2] = { good, ig };
		uint64_t vs[2] = { 4, 4 };

		igt_assert_eq(signal_many(2, hs, vs), -EINVAL);
	}
	assert_value(&m, 0);
	nfence_fence_destroy(fd, good);
	nfence_fence_destroy(fd, ig);
}

static void test_wait_signaled(void)
{
	const int64_t timeouts[] = {
		0, -1, INT64_MIN, 1, INFINITE, INFINITE - 1, 0,
	};
	struct drm_nfence_fence_mapping m[3];
	uint32_t h[3];
	uint64_t v[3];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 3; i++)
		h[i] = create(0, 10 + i, &m[i]);

	for (unsigned int t = 0; t < ARRAY_SIZE(timeouts); t++) {
		int64_t timeout = timeouts[t];

		if (t == ARRAY_SIZE(timeouts) - 1)
			timeout = nfence_deadline_ms(WAITER_MS);
		for (int flags = 0; flags < 2; flags++) {
			for (uint64_t value = 0; value <= 10; value += 5) {
				uint64_t start = nfence_monotonic_ns();
				uint32_t first;

				for (int i = 0; i < 3; i++)
					v[i] = value + i;
				igt_assert_eq(wait_many(3, h, v,
							flags ? FLAG_ANY : 0,
							timeout, 0, &first),
					      0);
				igt_assert_eq_u32(first, 0);
				igt_assert_lt_u64(nfence_monotonic_ns() -
						  start, 2000000000ull);
				igt_assert_eq(wait_one(h[2], value, timeout),
					      0);
			}
		}
	}
	for (int i = 0; i < 3; i++) {
		assert_idle(&m[i]);
		nfence_fence_destroy(fd, h[i]);
	}
}

static void test_wait_poll(void)
{
	const int64_t timeouts[] = { 0, -1 };
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 10, &m[0]);
	h[1] = create(0, 10, &m[1]);

	for (unsigned int t = 0; t < ARRAY_SIZE(timeouts); t++) {
		uint64_t none[2] = { 11, 11 }, one[2] = { 10, 11 };
		uint64_t start = nfence_monotonic_ns();
		uint32_t first;

		igt_info("timeout_ns %" PRId64 "\n", timeouts[t]);
		igt_assert_eq(wait_one(h[0], 11, timeouts[t]), -ETIME);
		igt_assert_eq(wait_one(h[0], UINT64_MAX, timeouts[t]), -ETIME);
		igt_assert_eq(wait_many(2, h, none, 0, timeouts[t], 0, NULL),
			      -ETIME);
		igt_assert_eq(wait_many(2, h, none, FLAG_ANY, timeouts[t], 0,
					NULL), -ETIME);
		/* ALL with one of two satisfied is not satisfied ... */
		igt_assert_eq(wait_many(2, h, one, 0, timeouts[t], 0, NULL),
			      -ETIME);
		/* ... ANY is. */
		igt_assert_eq(wait_many(2, h, one, FLAG_ANY, timeouts[t], 0,
					&first), 0);
		igt_assert_eq_u32(first, 0);
		igt_assert_lt_u64(nfence_monotonic_ns() - start,
				  2000000000ull);
	}
	assert_idle(&m[0]);
	assert_idle(&m[1]);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

static void test_wait_deadline_past(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t now = nfence_monotonic_ns();
	const int64_t past[] = {
		(int64_t)now - 1000000000ll, (int64_t)now - 1,
		(int64_t)now / 2, 1, -1000000000ll,
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(past); i++) {
		uint64_t start = nfence_monotonic_ns();

		igt_info("timeout_ns %" PRId64 "\n", past[i]);
		igt_assert_eq(wait_one(h, 1, past[i]), -ETIME);
		igt_assert_lt_u64(nfence_monotonic_ns() - start,
				  1000000000ull);
		igt_assert_eq(wait_one(h, 0, past[i]), 0);
	}
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_wait_deadline_min(void)
{
	const int64_t past[] = { INT64_MIN, INT64_MIN + 1 };
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);

	/* Deadline minus now must not overflow into the far future. */
	nfence_watchdog(10);
	for (unsigned int i = 0; i < ARRAY_SIZE(past); i++) {
		uint64_t start = nfence_monotonic_ns();

		igt_info("timeout_ns %" PRId64 "\n", past[i]);
		igt_assert_eq(wait_one(h, 1, past[i]), -ETIME);
		igt_assert_lt_u64(nfence_monotonic_ns() - start,
				  1000000000ull);
	}
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
	nfence_watchdog(WATCHDOG_S);
}

static void test_wait_deadline(void)
{
	const unsigned int ms[] = { 50, 50, 200 };
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(ms); i++) {
		int64_t deadline = nfence_deadline_ms(ms[i]);
		uint64_t end;

		igt_assert_eq(wait_one(h, 1, deadline), -ETIME);
		end = nfence_monotonic_ns();
		igt_assert_f(end >= (uint64_t)deadline,
			     "-ETIME %" PRIu64 " ns before the deadline\n",
			     (uint64_t)deadline - end);
		igt_assert_lt_u64(end - deadline, 5000000000ull);
		igt_info("%u ms deadline: returned %" PRIu64 " us late\n",
			 ms[i], (end - deadline) / 1000);
	}
	/* ANY and ALL too. */
	{
		uint32_t hs[2] = { h, h };
		uint64_t vs[2] = { 1, 2 };

		for (int flags = 0; flags < 2; flags++) {
			int64_t deadline = nfence_deadline_ms(50);

			igt_assert_eq(wait_many(2, hs, vs,
						flags ? FLAG_ANY : 0,
						deadline, 0, NULL), -ETIME);
			igt_assert_lte_u64(deadline, nfence_monotonic_ns());
		}
	}
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_wait_wakes(void)
{
	/* waited value, signaled value */
	const uint64_t cases[][2] = {
		{ 1, 1 }, { 1, 2 }, { 5, 1000 }, { 1000, 1ull << 40 },
	};

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_nfence_fence_mapping m;
		uint64_t want = cases[i][0], to = cases[i][1];
		struct waiter w;
		uint32_t h;

		if (to > UINT32_MAX && caps.value_bits < 64)
			continue;
		h = create(0, 0, &m);
		waiter_start(&w, h, want, nfence_deadline_ms(WAITER_MS));
		settle(&m, 1);
		/* Below the waited value: still waiting. */
		if (want > 1) {
			nfence_fence_signal(fd, dev, h, want - 1);
			assert_still_waiting(&w);
		}
		nfence_fence_signal(fd, dev, h, to);
		igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
		igt_assert_eq_u32(w.first_signaled, 0);
		assert_value(&m, to);
		assert_idle(&m);
		nfence_fence_destroy(fd, h);
	}
}

static void test_wait_all(void)
{
	struct drm_nfence_fence_mapping m[4];
	uint32_t h[4];
	uint64_t v[4] = { 1, 2, 3, 4 };
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 4; i++)
		h[i] = create(0, 0, &m[i]);

	waiter_start_many(&w, 4, h, v, 0, nfence_deadline_ms(WAITER_MS));
	for (int i = 0; i < 4; i++)
		settle(&m[i], 1);
	/* Satisfy them out of order; only the last releases. */
	nfence_fence_signal(fd, dev, h[2], 3);
	assert_still_waiting(&w);
	nfence_fence_signal(fd, dev, h[0], 100);
	assert_still_waiting(&w);
	nfence_fence_signal(fd, dev, h[3], 4);
	assert_still_waiting(&w);
	igt_assert_eq(wait_many(4, h, v, 0, 0, 0, NULL), -ETIME);
	nfence_fence_signal(fd, dev, h[1], 2);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	igt_assert_eq_u32(w.first_signaled, 0);
	for (int i = 0; i < 4; i++) {
		assert_idle(&m[i]);
		nfence_fence_destroy(fd, h[i]);
	}
}

static void test_wait_any(void)
{
	struct drm_nfence_fence_mapping m[4];
	uint32_t h[4], first;
	uint64_t v[4] = { 5, 5, 5, 5 };
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < 4; i++)
		h[i] = create(0, 0, &m[i]);

	/* Polls: first_signaled is the lowest satisfied index. */
	nfence_fence_signal(fd, dev, h[3], 5);
	igt_assert_eq(wait_many(4, h, v, FLAG_ANY, 0, 0, &first), 0);
	igt_assert_eq_u32(first, 3);
	nfence_fence_signal(fd, dev, h[1], 5);
	igt_assert_eq(wait_many(4, h, v, FLAG_ANY, 0, 0, &first), 0);
	igt_assert_eq_u32(first, 1);

	/* A blocked ANY wait is released by any one fence. */
	for (int i = 0; i < 4; i++)
		v[i] = 10;
	waiter_start_many(&w, 4, h, v, FLAG_ANY,
			  nfence_deadline_ms(WAITER_MS));
	for (int i = 0; i < 4; i++)
		settle(&m[i], 1);
	nfence_fence_signal(fd, dev, h[0], 9);
	assert_still_waiting(&w);
	nfence_fence_signal(fd, dev, h[2], 10);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	igt_assert_eq_u32(w.first_signaled, 2);
	for (int i = 0; i < 4; i++) {
		assert_idle(&m[i]);
		nfence_fence_destroy(fd, h[i]);
	}
}

static void test_wait_async(void)
{
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];
	uint64_t v[2] = { 3, 3 }, count;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 0, &m[0]);
	h[1] = create(0, 0, &m[1]);

	/* One fence: fires only once the value is reached, exactly once. */
	{
		uint64_t start = nfence_monotonic_ns();

		igt_assert_eq(wait_many(1, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
		igt_assert_lt_u64(nfence_monotonic_ns() - start,
				  1000000000ull);
	}
	assert_monitored(&m[0], 1, 2);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	nfence_fence_signal(fd, dev, h[0], 2);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	nfence_fence_signal(fd, dev, h[0], 3);
	igt_assert(eventfd_fired(efd, JOIN_MS, &count));
	igt_assert_eq_u64(count, 1);
	nfence_fence_signal(fd, dev, h[0], 10);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	assert_idle(&m[0]);

	/* ALL over two fences. */
	v[0] = 20;
	v[1] = 20;
	igt_assert_eq(wait_many(2, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	nfence_fence_signal(fd, dev, h[1], 20);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	nfence_fence_signal(fd, dev, h[0], 20);
	igt_assert(eventfd_fired(efd, JOIN_MS, &count));
	igt_assert_eq_u64(count, 1);

	/* ANY over two fences. */
	v[0] = 30;
	v[1] = 30;
	igt_assert_eq(wait_many(2, h, v, FLAG_ASYNC | FLAG_ANY, 0, efd,
				NULL), 0);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	nfence_fence_signal(fd, dev, h[1], 30);
	igt_assert(eventfd_fired(efd, JOIN_MS, &count));
	igt_assert_eq_u64(count, 1);
	nfence_fence_signal(fd, dev, h[0], 30);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));

	/* Two async waits on one eventfd add up. */
	v[0] = 40;
	igt_assert_eq(wait_many(1, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	igt_assert_eq(wait_many(1, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	assert_monitored(&m[0], 2, 39);
	nfence_fence_signal(fd, dev, h[0], 40);
	{
		uint64_t total = 0, end = nfence_monotonic_ns() +
			JOIN_MS * 1000000ull;

		while (total < 2 && nfence_monotonic_ns() < end)
			if (eventfd_fired(efd, 100, &count))
				total += count;
		igt_assert_eq_u64(total, 2);
	}

	assert_idle(&m[0]);
	assert_idle(&m[1]);
	close(efd);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

static void test_wait_async_signaled(void)
{
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];
	uint64_t v[2], count;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 5, &m[0]);
	h[1] = create(0, 0, &m[1]);

	v[0] = 5;
	igt_assert_eq(wait_many(1, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	igt_assert(eventfd_fired(efd, 1000, &count));
	igt_assert_eq_u64(count, 1);

	v[0] = 0;
	igt_assert_eq(wait_many(1, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	igt_assert(eventfd_fired(efd, 1000, &count));
	igt_assert_eq_u64(count, 1);

	/* ANY with one of two satisfied. */
	v[0] = 5;
	v[1] = 1;
	igt_assert_eq(wait_many(2, h, v, FLAG_ASYNC | FLAG_ANY, 0, efd,
				NULL), 0);
	igt_assert(eventfd_fired(efd, 1000, &count));
	igt_assert_eq_u64(count, 1);

	/* No waiter was left behind. */
	assert_idle(&m[0]);
	assert_idle(&m[1]);
	nfence_fence_signal(fd, dev, h[1], 1);
	igt_assert(!eventfd_fired(efd, QUIET_MS, NULL));
	close(efd);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

static void test_wait_async_eventfd_closed(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(wait_many(1, &h, &v, FLAG_ASYNC, 0, efd, NULL), 0);
	/* The kernel holds its own reference to the eventfd. */
	close(efd);
	assert_monitored(&m, 1, 0);
	nfence_fence_signal(fd, dev, h, 1);
	assert_idle(&m);
	assert_value(&m, 1);
	nfence_fence_destroy(fd, h);
}

static volatile sig_atomic_t alarms;
static volatile sig_atomic_t alarm_limit;

static void alarm_handler(int sig)
{
	(void)sig;
	alarms++;
	if (alarm_limit && alarms >= alarm_limit) {
		struct itimerval off = { 0 };

		setitimer(ITIMER_REAL, &off, NULL);
	}
}

static void start_ticks(unsigned int first_ms, unsigned int every_ms,
			int limit)
{
	struct itimerval it = {
		.it_value = { .tv_sec = first_ms / 1000,
			      .tv_usec = (first_ms % 1000) * 1000 },
		.it_interval = { .tv_sec = every_ms / 1000,
				 .tv_usec = (every_ms % 1000) * 1000 },
	};

	alarms = 0;
	alarm_limit = limit;
	igt_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void stop_ticks(void)
{
	struct itimerval off = { 0 };

	igt_assert_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
}

/* A thread that signals once the fence has @waiters waiters (or later). */
struct signaler {
	pthread_t thread;
	const struct drm_nfence_fence_mapping *m;
	uint32_t handle;
	uint64_t value;
	uint64_t waiters;
	int seen;
	int result;
};

static void *signaler_fn(void *arg)
{
	struct signaler *s = arg;

	/*
	 * No igt_assert in a thread: if the waiters do not show within
	 * BLOCKED_MS it signals anyway, and signaler_join() fails.
	 */
	s->seen = nfence_debugfs_fence_wait(dbg, s->m, s->waiters, BLOCKED_MS,
					    NULL);
	s->result = __nfence_fence_signal_one(fd, dev, s->handle, s->value);
	return NULL;
}

static void signaler_start(struct signaler *s,
			   const struct drm_nfence_fence_mapping *m,
			   uint32_t handle, uint64_t value)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->handle = handle;
	s->value = value;
	s->waiters = 1;
	s->seen = 1;
	s->result = 1;
	igt_assert_eq(nfence_thread_create(&s->thread, signaler_fn, s), 0);
}

static void signaler_join(struct signaler *s)
{
	igt_assert_eq(nfence_thread_join(s->thread, BLOCKED_MS + JOIN_MS), 0);
	/* The waiter was blocked when the signal came. */
	igt_assert_eq(s->seen, 0);
	igt_assert_eq(s->result, 0);
}

static void test_wait_interrupted(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1, start;
	struct drm_nfence_fence_wait w = wait_args(&h, &v);
	struct signaler s;
	int ret;

	/* SIGALRM is ours here: no watchdog, bounded deadlines instead. */
	nfence_watchdog(0);
	install_handler(SIGALRM, alarm_handler, 0);
	w.timeout_ns = nfence_deadline_ms(WAITER_MS);

	start = nfence_monotonic_ns();
	start_ticks(100, 100, 0);
	ret = __nfence_fence_wait(fd, &w);
	stop_ticks();
	igt_assert_eq(ret, -EINTR);
	igt_assert_lte(1, alarms);
	igt_assert_lt_u64(nfence_monotonic_ns() - start,
			  WAITER_MS * 1000000ull);
	assert_idle(&m);

	/* The restart: same struct, same deadline; a signal completes it. */
	signaler_start(&s, &m, h, 1);
	ret = __nfence_fence_wait(fd, &w);
	signaler_join(&s);
	igt_assert_eq(ret, 0);
	igt_assert_lt_s64(nfence_monotonic_ns(), w.timeout_ns);

	/* An infinite wait is interruptible as well. */
	v = 2;
	w.timeout_ns = INFINITE;
	start_ticks(100, 100, 0);
	ret = __nfence_fence_wait(fd, &w);
	stop_ticks();
	igt_assert_eq(ret, -EINTR);
	assert_idle(&m);

	nfence_fence_destroy(fd, h);
	nfence_watchdog(WATCHDOG_S);
}

static void test_wait_interrupted_restart(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);
	uint64_t v = 1, start, elapsed;
	struct drm_nfence_fence_wait w = wait_args(&h, &v);
	struct signaler s;
	int ret;

	nfence_watchdog(0);
	install_handler(SIGALRM, alarm_handler, SA_RESTART);

	/*
	 * Ticks every 20 ms for 1 s restart the call again and again; with
	 * the absolute deadline it still ends at 300 ms (a deadline
	 * restarted as a relative timeout would run past the ticks).
	 */
	w.timeout_ns = nfence_deadline_ms(300);
	start = nfence_monotonic_ns();
	start_ticks(20, 20, 50);
	ret = __nfence_fence_wait(fd, &w);
	elapsed = nfence_monotonic_ns() - start;
	stop_ticks();
	igt_info("%d interruptions, -ETIME after %" PRIu64 " ms\n",
		 (int)alarms, elapsed / 1000000);
	igt_assert_eq(ret, -ETIME);
	igt_assert_lte(1, alarms);
	igt_assert_lte_u64(w.timeout_ns, start + elapsed);
	igt_assert_lt_u64(elapsed, 1000000000ull);
	assert_idle(&m);

	/* Restarted waits still see the signal. */
	w.timeout_ns = nfence_deadline_ms(WAITER_MS);
	start_ticks(20, 20, 0);
	signaler_start(&s, &m, h, 1);
	ret = __nfence_fence_wait(fd, &w);
	stop_ticks();
	signaler_join(&s);
	igt_assert_eq(ret, 0);
	assert_idle(&m);

	nfence_fence_destroy(fd, h);
	nfence_watchdog(WATCHDOG_S);
}

/*
 * No64BitAtomics (context-monitoring seed): wait and signal values more
 * than UINT_MAX/2 ahead of the current value are refused, and the window
 * moves with the value, across the 32-bit wrap.
 */
static void test_value32_window(bool signal)
{
	const uint64_t half = UINT32_MAX / 2;
	struct drm_nfence_fence_mapping m;
	uint64_t cv = 5;
	uint32_t h;
	int i;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(caps.value_bits == 32, "%u-bit fence values\n",
		      caps.value_bits);
	h = create(0, cv, &m);
	for (i = 0; i < 4; i++) {
		if (signal) {
			igt_assert_eq(signal_many(1, &h, (uint64_t[]){ cv + half + 1 }),
				      -EINVAL);
			assert_value(&m, cv);
			igt_assert_eq(signal_many(1, &h, (uint64_t[]){ UINT64_MAX }),
				      -EINVAL);
		} else {
			igt_assert_eq(poll_one(h, cv + half + 1), -EINVAL);
			igt_assert_eq(poll_one(h, UINT64_MAX), -EINVAL);
			igt_assert_eq(poll_one(h, cv + half), -ETIME);
			igt_assert_eq(poll_one(h, cv + 1), -ETIME);
		}
		/* At or below the current value is always fine. */
		igt_assert_eq(poll_one(h, cv), 0);
		igt_assert_eq(poll_one(h, 0), 0);
		/* The largest allowed step moves the window; 4 steps wrap. */
		nfence_fence_signal(fd, dev, h, cv + half);
		cv += half;
		assert_value(&m, cv);
	}
	igt_assert_lt_u64(UINT32_MAX, cv);
	nfence_fence_destroy(fd, h);
}

static void test_values(uint64_t value)
{
	struct drm_nfence_fence_mapping m, m0;
	uint32_t h, h0;
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	/* 32-bit adapters have their own subtests (value-32bit-*). */
	igt_require_f(caps.value_bits == 64, "%u-bit fence values\n",
		      caps.value_bits);

	h = create(0, value - 1, &m);
	assert_value(&m, value - 1);
	igt_assert_eq(poll_one(h, value), -ETIME);
	igt_assert_eq(poll_one(h, value - 1), 0);
	igt_assert_eq(poll_one(h, 0), 0);
	igt_assert_eq(poll_one(h, UINT64_MAX), -ETIME);

	waiter_start(&w, h, value, nfence_deadline_ms(WAITER_MS));
	settle(&m, 1);
	assert_monitored(&m, 1, value - 1);
	/* Equal to the current value: nothing changes. */
	nfence_fence_signal(fd, dev, h, value - 1);
	assert_still_waiting(&w);
	nfence_fence_signal(fd, dev, h, value);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	assert_value(&m, value);

	if (value != UINT64_MAX) {
		/* Catches values truncated to 32 bits or compared signed. */
		igt_assert_eq(poll_one(h, value + 1), -ETIME);
		igt_assert_eq(poll_one(h, UINT64_MAX), -ETIME);
	}
	igt_assert_eq(poll_one(h, value), 0);
	igt_assert_eq(poll_one(h, value - 1), 0);
	igt_assert_eq(poll_one(h, 1), 0);

	/* Lower values leave it alone. */
	nfence_fence_signal(fd, dev, h, value - 1);
	nfence_fence_signal(fd, dev, h, 1);
	nfence_fence_signal(fd, dev, h, 0);
	assert_value(&m, value);
	{
		struct nfence_debugfs_fence f;

		debugfs_fence(&m, &f);
		igt_assert_eq_u64(f.current, value);
		igt_assert_eq_u64(f.monitored, UINT64_MAX);
	}

	/* From 0 in one step. */
	h0 = create(0, 0, &m0);
	nfence_fence_signal(fd, dev, h0, value);
	assert_value(&m0, value);
	igt_assert_eq(poll_one(h0, value), 0);
	if (value != UINT64_MAX)
		igt_assert_eq(poll_one(h0, value + 1), -ETIME);

	assert_idle(&m);
	nfence_fence_destroy(fd, h0);
	nfence_fence_destroy(fd, h);
}

static void test_signal_lower(void)
{
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 10, &m[0]);
	h[1] = create(0, 0, &m[1]);

	waiter_start(&w, h[0], 11, nfence_deadline_ms(WAITER_MS));
	settle(&m[0], 1);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, h[0], 5), 0);
	assert_value(&m[0], 10);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, h[0], 10), 0);
	assert_value(&m[0], 10);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, h[0], 0), 0);
	assert_value(&m[0], 10);
	assert_still_waiting(&w);

	/* Lower for one fence, higher for another, in one call. */
	{
		uint64_t v[2] = { 3, 20 };

		igt_assert_eq(signal_many(2, h, v), 0);
	}
	assert_value(&m[0], 10);
	assert_value(&m[1], 20);
	assert_still_waiting(&w);

	nfence_fence_signal(fd, dev, h[0], 11);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	assert_value(&m[0], 11);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

static void test_signal_same_fence_twice(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h, o;
	struct waiter w;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create(SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);
	o = nfence_fence_open(fd, dev, sfd, 0, NULL);
	close(sfd);

	{
		uint32_t hs[2] = { h, h };
		uint64_t vs[2] = { 5, 3 };

		igt_assert_eq(signal_many(2, hs, vs), 0);
		assert_value(&m, 5);
		vs[0] = 7;
		vs[1] = 9;
		igt_assert_eq(signal_many(2, hs, vs), 0);
		assert_value(&m, 9);
		vs[0] = 9;
		igt_assert_eq(signal_many(2, hs, vs), 0);
		assert_value(&m, 9);
	}

	/* Through two handles of one fence, releasing a waiter. */
	waiter_start(&w, h, 20, nfence_deadline_ms(WAITER_MS));
	settle(&m, 1);
	{
		uint32_t hs[2] = { h, o };
		uint64_t vs[2] = { 20, 15 };

		igt_assert_eq(signal_many(2, hs, vs), 0);
		igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
		assert_value(&m, 20);
		vs[0] = 30;
		vs[1] = 25;
		hs[0] = o;
		hs[1] = h;
		igt_assert_eq(signal_many(2, hs, vs), 0);
		assert_value(&m, 30);
	}
	assert_idle(&m);
	nfence_fence_destroy(fd, o);
	nfence_fence_destroy(fd, h);
}

static void test_signal_max_count(void)
{
	struct drm_nfence_fence_mapping m[MAX_FENCES];
	uint32_t h[MAX_FENCES];
	uint64_t v[MAX_FENCES];
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < MAX_FENCES; i++)
		h[i] = create(0, 0, &m[i]);

	for (int i = 0; i < MAX_FENCES; i++)
		v[i] = i + 1;
	igt_assert_eq(signal_many(MAX_FENCES, h, v), 0);
	for (int i = 0; i < MAX_FENCES; i++)
		assert_value(&m[i], i + 1);
	igt_assert_eq(wait_many(MAX_FENCES, h, v, 0, 0, 0, NULL), 0);

	/* A 64-fence ALL wait is released by one 64-fence signal. */
	for (int i = 0; i < MAX_FENCES; i++)
		v[i] = 100 + i;
	igt_assert_eq(wait_many(MAX_FENCES, h, v, FLAG_ANY, 0, 0, NULL),
		      -ETIME);
	waiter_start_many(&w, MAX_FENCES, h, v, 0,
			  nfence_deadline_ms(WAITER_MS));
	settle(&m[MAX_FENCES - 1], 1);
	igt_assert_eq(signal_many(MAX_FENCES, h, v), 0);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	for (int i = 0; i < MAX_FENCES; i++) {
		assert_idle(&m[i]);
		nfence_fence_destroy(fd, h[i]);
	}
}

static void test_monitored_no_waiter(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence f;
	uint32_t h;
	int efd = new_eventfd();

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);
	debugfs_fence(&m, &f);
	igt_assert_eq_u64(f.monitored, UINT64_MAX);
	igt_assert_eq_u64(f.waiters, 0);

	nfence_fence_signal(fd, dev, h, 5);
	assert_idle(&m);
	igt_assert_eq(poll_one(h, 5), 0);
	assert_idle(&m);
	igt_assert_eq(poll_one(h, 6), -ETIME);
	assert_idle(&m);
	igt_assert_eq(wait_one(h, 6, nfence_deadline_ms(10)), -ETIME);
	assert_idle(&m);
	igt_assert_eq(wait_many(1, &h, &(uint64_t){ 5 }, FLAG_ASYNC, 0, efd,
				NULL), 0);
	igt_assert(eventfd_fired(efd, 1000, NULL));
	assert_idle(&m);
	debugfs_fence(&m, &f);
	igt_assert_eq_u64(f.current, 5);
	close(efd);
	nfence_fence_destroy(fd, h);
}

static void test_monitored_waiters(void)
{
	struct drm_nfence_fence_mapping m;
	struct waiter w[4];
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);

	waiter_start(&w[0], h, 10, nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m, 1, 9);
	waiter_start(&w[1], h, 5, nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m, 2, 4);
	waiter_start(&w[2], h, 20, nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m, 3, 4);
	waiter_start(&w[3], h, 5, nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m, 4, 4);

	/* Release the least: MonitoredValue moves to the next least. */
	nfence_fence_signal(fd, dev, h, 7);
	igt_assert_eq(waiter_join(&w[1], JOIN_MS), 0);
	igt_assert_eq(waiter_join(&w[3], JOIN_MS), 0);
	assert_monitored(&m, 2, 9);
	nfence_fence_signal(fd, dev, h, 15);
	igt_assert_eq(waiter_join(&w[0], JOIN_MS), 0);
	assert_monitored(&m, 1, 19);
	nfence_fence_signal(fd, dev, h, 20);
	igt_assert_eq(waiter_join(&w[2], JOIN_MS), 0);
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_monitored_async_waiters(void)
{
	struct drm_nfence_fence_mapping m;
	const uint64_t values[3] = { 7, 3, 12 };
	int efd[3];
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);
	for (int i = 0; i < 3; i++) {
		efd[i] = new_eventfd();
		igt_assert_eq(wait_many(1, &h, &values[i], FLAG_ASYNC, 0,
					efd[i], NULL), 0);
	}
	assert_monitored(&m, 3, 2);

	nfence_fence_signal(fd, dev, h, 3);
	igt_assert(eventfd_fired(efd[1], JOIN_MS, NULL));
	assert_monitored(&m, 2, 6);
	igt_assert(!eventfd_fired(efd[0], 0, NULL));
	nfence_fence_signal(fd, dev, h, 100);
	igt_assert(eventfd_fired(efd[0], JOIN_MS, NULL));
	igt_assert(eventfd_fired(efd[2], JOIN_MS, NULL));
	assert_idle(&m);

	/* Mixed with a blocked thread. */
	{
		struct waiter w;

		igt_assert_eq(wait_many(1, &h, &(uint64_t){ 150 }, FLAG_ASYNC,
					0, efd[0], NULL), 0);
		waiter_start(&w, h, 120, nfence_deadline_ms(WAITER_MS));
		assert_monitored(&m, 2, 119);
		nfence_fence_signal(fd, dev, h, 130);
		igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
		assert_monitored(&m, 1, 149);
		nfence_fence_signal(fd, dev, h, 150);
		igt_assert(eventfd_fired(efd[0], JOIN_MS, NULL));
		assert_idle(&m);
	}
	for (int i = 0; i < 3; i++)
		close(efd[i]);
	nfence_fence_destroy(fd, h);
}

/*
 * DRM_NFENCE_MAX_ASYNC_WAITS pending async waits on one file, then one
 * more: -ENOSPC, and the fence's waiters unchanged. A released wait makes
 * room again by the time its eventfd fires: 200 times over, each wait
 * released is replaced at once, with no -ENOSPC. Releasing them all fires
 * the eventfd once per wait.
 */
#define REARMS	200

static void test_async_wait_limit(void)
{
	const uint32_t max = DRM_NFENCE_MAX_ASYNC_WAITS;
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence f;
	int efd, ret, saved_fd = fd;
	uint32_t h, saved_dev = dev;
	uint64_t count = 0, v;

	nfence_watchdog(WATCHDOG_S * 2);
	/* A file of its own, with nothing else pending. */
	fd = nfence_open();
	dev = nfence_device_create(fd);
	h = create(0, 0, &m);
	efd = new_eventfd();
	for (uint32_t i = 0; i < max; i++) {
		v = i + 1;
		igt_assert_eq(wait_many(1, &h, &v, FLAG_ASYNC, 0, efd, NULL),
			      0);
	}
	assert_monitored(&m, max, 0);
	v = max + 1;
	igt_assert_eq(wait_many(1, &h, &v, FLAG_ASYNC, 0, efd, NULL),
		      -ENOSPC);
	nfence_debugfs_fence(dbg, &m, &f);
	igt_assert_eq_u64(f.waiters, max);
	/* Another file has room of its own. */
	{
		int fd2 = nfence_open(), efd2 = new_eventfd();
		uint32_t d2 = nfence_device_create(fd2);
		uint32_t h2 = nfence_fence_create(fd2, d2, TYPE_DEFAULT, 0, 0,
						  NULL);
		struct drm_nfence_fence_wait w = {
			.device = d2,
			.count = 1,
			.handles = (uintptr_t)&h2,
			.values = (uintptr_t)&v,
			.flags = FLAG_ASYNC,
			.eventfd = efd2,
		};

		igt_assert_eq(__nfence_fence_wait(fd2, &w), 0);
		close(fd2);
		close(efd2);
	}

	/* Each wait released: its slot is back when its eventfd fires. */
	for (uint32_t k = 1; k <= REARMS; k++) {
		uint64_t fired;

		nfence_fence_signal(fd, dev, h, k);
		igt_assert(eventfd_fired(efd, JOIN_MS, &fired));
		count += fired;
		v = max + k;
		ret = wait_many(1, &h, &v, FLAG_ASYNC, 0, efd, NULL);
		igt_assert_f(ret == 0, "re-arm %u after its eventfd: %d\n", k,
			     ret);
	}

	/* All of them, once each. */
	nfence_fence_signal(fd, dev, h, max + REARMS);
	while (count < max + REARMS && eventfd_fired(efd, JOIN_MS, &v))
		count += v;
	igt_assert_eq_u64(count, max + REARMS);
	assert_idle(&m);
	close(efd);
	nfence_fence_destroy(fd, h);
	close(fd);
	fd = saved_fd;
	dev = saved_dev;
}

static void test_monitored_timeout(void)
{
	struct drm_nfence_fence_mapping m;
	struct waiter w[2];
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);

	/* The least waiter times out: MonitoredValue moves up ... */
	waiter_start(&w[0], h, 50, nfence_deadline_ms(1500));
	waiter_start(&w[1], h, 80, nfence_deadline_ms(3000));
	assert_monitored(&m, 2, 49);
	igt_assert_eq(waiter_join(&w[0], 1500 + JOIN_MS), -ETIME);
	assert_monitored(&m, 1, 79);

	/* ... and back to UINT64_MAX when the last one leaves. */
	igt_assert_eq(waiter_join(&w[1], 3000 + JOIN_MS), -ETIME);
	assert_idle(&m);
	assert_value(&m, 0);
	nfence_fence_destroy(fd, h);
}

static void test_monitored_interrupted(void)
{
	struct drm_nfence_fence_mapping m;
	struct waiter w;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);

	/* An infinite wait, interrupted by a handler without SA_RESTART. */
	waiter_start(&w, h, 50, INFINITE);
	assert_monitored(&m, 1, 49);
	pthread_kill(w.thread, SIGUSR1);
	igt_assert_eq(waiter_join(&w, JOIN_MS), -EINTR);
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

static void test_monitored_any(void)
{
	struct drm_nfence_fence_mapping m[2];
	uint32_t h[2];
	uint64_t v[2] = { 5, 7 };
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 0, &m[0]);
	h[1] = create(0, 0, &m[1]);

	/* ANY: released by the first; leaves the other fence too. */
	waiter_start_many(&w, 2, h, v, FLAG_ANY,
			  nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m[0], 1, 4);
	assert_monitored(&m[1], 1, 6);
	nfence_fence_signal(fd, dev, h[0], 5);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	igt_assert_eq_u32(w.first_signaled, 0);
	assert_idle(&m[0]);
	assert_idle(&m[1]);

	/* ALL: still monitoring the one not yet reached. */
	v[0] = 10;
	v[1] = 10;
	waiter_start_many(&w, 2, h, v, 0, nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m[0], 1, 9);
	assert_monitored(&m[1], 1, 9);
	nfence_fence_signal(fd, dev, h[0], 10);
	assert_still_waiting(&w);
	assert_monitored(&m[1], 1, 9);
	nfence_fence_signal(fd, dev, h[1], 10);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	assert_idle(&m[0]);
	assert_idle(&m[1]);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[1]);
}

/*
 * A fence named several times in one wait gets one waiter (DOC: CPU
 * waits): an ALL wait for 7, 3 and 12 of one fence and 4 of another waits
 * for 12 (MonitoredValue 11) and 4, and completes only at 12; an ANY wait
 * for 7, 3 and 12 waits for 3 (MonitoredValue 2) and names the entry of 3
 * as the first signaled. The waits the fences see are one per wait.
 */
static void test_same_fence_merged(void)
{
	struct drm_nfence_fence_mapping m, m2;
	uint32_t h[4];
	uint64_t v[4] = { 7, 3, 12, 4 };
	struct waiter w;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	h[0] = create(0, 0, &m);
	h[1] = h[0];
	h[2] = h[0];
	h[3] = create(0, 0, &m2);

	efd = new_eventfd();
	igt_assert_eq(wait_many(4, h, v, FLAG_ASYNC, 0, efd, NULL), 0);
	assert_monitored(&m, 1, 11);
	assert_monitored(&m2, 1, 3);
	nfence_fence_signal(fd, dev, h[3], 4);
	nfence_fence_signal(fd, dev, h[0], 7);
	igt_assert(!eventfd_fired(efd, 50, NULL));
	assert_monitored(&m, 1, 11);
	nfence_fence_signal(fd, dev, h[0], 12);
	igt_assert(eventfd_fired(efd, JOIN_MS, NULL));
	assert_idle(&m);
	assert_idle(&m2);
	close(efd);

	v[0] = 17;
	v[1] = 13;
	v[2] = 22;
	waiter_start_many(&w, 3, h, v, FLAG_ANY,
			  nfence_deadline_ms(WAITER_MS));
	assert_monitored(&m, 1, 12);
	nfence_fence_signal(fd, dev, h[0], 13);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	igt_assert_eq_u32(w.first_signaled, 1);
	assert_idle(&m);
	nfence_fence_destroy(fd, h[0]);
	nfence_fence_destroy(fd, h[3]);
}

static uint64_t interrupts_get(const char *key)
{
	return nfence_debugfs_get_u64(dbg, "nfence_interrupts", key);
}

static void log_interrupts(const char *when)
{
	static const char * const keys[] = {
		"signals", "interrupts", "suppressed", "woken", "spurious",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(keys); i++)
		igt_debug("%s: %s %" PRIu64 "\n", when, keys[i],
			  interrupts_get(keys[i]));
}

static void test_interrupts_no_waiter(void)
{
	struct drm_nfence_fence_mapping m;
	uint64_t woken, interrupts;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);
	log_interrupts("before");
	woken = interrupts_get("woken");
	interrupts = interrupts_get("interrupts");

	for (int i = 1; i <= 10; i++)
		nfence_fence_signal(fd, dev, h, i);
	/* A satisfied wait does not register, so it is not woken either. */
	igt_assert_eq(poll_one(h, 10), 0);

	log_interrupts("after");
	igt_assert_eq_u64(interrupts_get("woken"), woken);
	/* CurrentValue never exceeded MonitoredValue = UINT64_MAX. */
	igt_assert_eq_u64(interrupts_get("interrupts"), interrupts);
	nfence_fence_destroy(fd, h);
}

static void test_interrupts_waiter(void)
{
	struct drm_nfence_fence_mapping m;
	uint64_t woken;
	struct waiter w;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);

	waiter_start(&w, h, 1, nfence_deadline_ms(WAITER_MS));
	wait_waiters(&m, 1, NULL);
	log_interrupts("before");
	woken = interrupts_get("woken");
	nfence_fence_signal(fd, dev, h, 1);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	log_interrupts("after");
	igt_assert_lt_u64(woken, interrupts_get("woken"));

	/* Below the waited value: no wake-up. */
	waiter_start(&w, h, 5, nfence_deadline_ms(WAITER_MS));
	wait_waiters(&m, 1, NULL);
	woken = interrupts_get("woken");
	nfence_fence_signal(fd, dev, h, 3);
	assert_still_waiting(&w);
	igt_assert_eq_u64(interrupts_get("woken"), woken);
	nfence_fence_signal(fd, dev, h, 5);
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	igt_assert_lt_u64(woken, interrupts_get("woken"));
	nfence_fence_destroy(fd, h);
}

struct race {
	uint32_t handle;
	const volatile uint64_t *value;
	uint64_t iterations;
	uint64_t cap_ns;
	int nwaiters;
	uint64_t ready[RACE_WAITERS];
	int stop;
	int error;
	int error_thread;
	uint64_t error_iteration;
	uint64_t signaled;
};

struct race_waiter {
	pthread_t thread;
	struct race *r;
	int index;
};

static void race_fail(struct race *r, int who, uint64_t i, int err)
{
	int expected = 0;

	if (__atomic_compare_exchange_n(&r->error, &expected, err, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		r->error_thread = who;
		r->error_iteration = i;
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
}

static void *race_waiter_fn(void *arg)
{
	struct race_waiter *rw = arg;
	struct race *r = rw->r;

	for (uint64_t i = 1; i <= r->iterations; i++) {
		int ret;

		if (__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(&r->ready[rw->index], i, __ATOMIC_SEQ_CST);
		ret = wait_one(r->handle, i, nfence_deadline_ms(RACE_WAIT_MS));
		if (ret) {
			/* -ETIME: the signal of i came and went unnoticed. */
			race_fail(r, rw->index, i, ret);
			break;
		}
		if (*r->value < i) {
			race_fail(r, rw->index, i, -EBADMSG);
			break;
		}
	}
	return NULL;
}

static void *race_signaler_fn(void *arg)
{
	struct race *r = arg;

	for (uint64_t i = 1; i <= r->iterations; i++) {
		int ret;

		for (int k = 0; k < r->nwaiters; k++) {
			while (__atomic_load_n(&r->ready[k],
					       __ATOMIC_SEQ_CST) < i) {
				if (__atomic_load_n(&r->stop,
						    __ATOMIC_SEQ_CST))
					goto out;
				sched_yield();
			}
		}
		if (nfence_monotonic_ns() > r->cap_ns) {
			__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
			break;
		}
		ret = __nfence_fence_signal_one(fd, dev, r->handle, i);
		if (ret) {
			race_fail(r, -1, i, ret);
			break;
		}
		r->signaled = i;
	}
out:
	/* Release whoever still waits (after a failure or the time cap). */
	__nfence_fence_signal_one(fd, dev, r->handle, UINT64_MAX);
	return NULL;
}

static void race(int nwaiters, uint64_t iterations)
{
	struct race_waiter rw[RACE_WAITERS];
	struct drm_nfence_fence_mapping m;
	struct race r;
	pthread_t signaler;
	uint64_t start;

	nfence_watchdog(RACE_CAP_S + 2 * RACE_WAIT_MS / 1000 + 30);
	memset(&r, 0, sizeof(r));
	r.handle = create(0, 0, &m);
	r.value = nfence_fence_map(fd, &m);
	r.iterations = iterations;
	r.nwaiters = nwaiters;
	start = nfence_monotonic_ns();
	r.cap_ns = start + RACE_CAP_S * 1000000000ull;

	for (int k = 0; k < nwaiters; k++) {
		rw[k].r = &r;
		rw[k].index = k;
		igt_assert_eq(nfence_thread_create(&rw[k].thread,
						   race_waiter_fn, &rw[k]), 0);
	}
	igt_assert_eq(nfence_thread_create(&signaler, race_signaler_fn, &r),
		      0);

	/* Every wait is bounded: the threads end. */
	igt_assert_eq(nfence_thread_join(signaler,
					 (RACE_CAP_S + 2 * RACE_WAIT_MS /
					  1000 + 10) * 1000), 0);
	for (int k = 0; k < nwaiters; k++)
		igt_assert_eq(nfence_thread_join(rw[k].thread,
						 2 * RACE_WAIT_MS), 0);

	igt_info("%d waiter(s): %" PRIu64 " of %" PRIu64 " rounds in %"
		 PRIu64 " ms\n", nwaiters, r.signaled, iterations,
		 (nfence_monotonic_ns() - start) / 1000000);
	igt_assert_f(!r.error,
		     "round %" PRIu64 ": %s %d got %d (%s)\n",
		     r.error_iteration,
		     r.error_thread < 0 ? "signaler" : "waiter",
		     r.error_thread, r.error, strerror(-r.error));
	igt_assert_lt_u64(100, r.signaled);
	assert_idle(&m);
	nfence_fence_unmap(r.value);
	nfence_fence_destroy(fd, r.handle);
}

static void test_race_signal_wait(void)
{
	race(1, RACE_ITERATIONS);
}

static void test_race_signal_many_waiters(void)
{
	race(RACE_WAITERS, RACE_MANY_ITERATIONS);
}

static void test_destroy_while_waiting(void)
{
	struct drm_nfence_fence_mapping m;
	struct waiter w;
	uint32_t h;
	int ret;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);
	waiter_start(&w, h, 1, INFINITE);
	settle(&m, 1);

	/*
	 * Nobody can signal the fence any more: the waiter comes back, with
	 * -ENOENT (Documentation/fences.rst), rather than sleep forever.
	 */
	nfence_fence_destroy(fd, h);
	ret = waiter_join(&w, JOIN_MS);
	igt_info("wait on a destroyed fence returned %d (%s)\n", ret,
		 strerror(-ret));
	igt_assert_eq(ret, -ENOENT);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &m, JOIN_MS), 0);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev, h, 1), -ENOENT);
}

static void test_device_destroy_while_waiting(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t d = nfence_device_create(fd);
	struct waiter w;
	uint32_t h;
	int ret;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, d, TYPE_DEFAULT, 0, 0, &m);
	memset(&w, 0, sizeof(w));
	w.fd = fd;
	w.device = d;
	w.count = 1;
	w.handles[0] = h;
	w.values[0] = 1;
	w.timeout_ns = INFINITE;
	w.result = 1;
	igt_assert_eq(nfence_thread_create(&w.thread, waiter_fn, &w), 0);
	w.running = true;
	settle(&m, 1);

	/* The fence's last handle went with the device: -ENOENT. */
	nfence_device_destroy(fd, d);
	ret = waiter_join(&w, JOIN_MS);
	igt_info("wait on a destroyed device returned %d (%s)\n", ret,
		 strerror(-ret));
	igt_assert_eq(ret, -ENOENT);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &m, JOIN_MS), 0);
}

/* A child blocked in a wait on @h (of the shared file) until killed. */
static pid_t fork_waiter(uint32_t h, uint64_t value)
{
	pid_t pid = fork();

	igt_assert_lte(0, pid);
	if (!pid) {
		int ret;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ret = wait_one(h, value, INFINITE);
		_exit(ret ? 1 : 0);
	}
	return pid;
}

static bool kill_and_reap(pid_t pid)
{
	int status = 0;

	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void test_killed_while_waiting(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence f1, f2;
	int ret1, ret2;
	bool k1, k2;
	pid_t p1, p2;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = create(0, 0, &m);

	/* Two processes sharing the file wait; kill them one by one. */
	p1 = fork_waiter(h, 5);
	p2 = fork_waiter(h, 9);
	ret1 = nfence_debugfs_fence_wait(dbg, &m, 2, BLOCKED_MS, &f1);
	k1 = kill_and_reap(p1);
	ret2 = nfence_debugfs_fence_wait(dbg, &m, 1, BLOCKED_MS, &f2);
	k2 = kill_and_reap(p2);

	igt_assert_eq(ret1, 0);
	igt_assert_eq_u64(f1.monitored, 4);
	igt_assert(k1);
	igt_assert_eq(ret2, 0);
	igt_assert_eq_u64(f2.monitored, 8);
	igt_assert(k2);
	assert_idle(&m);

	/* The fence is unharmed. */
	nfence_fence_signal(fd, dev, h, 9);
	igt_assert_eq(poll_one(h, 9), 0);
	assert_value(&m, 9);
	nfence_fence_destroy(fd, h);
}

struct child_fence {
	volatile int ready;
	struct drm_nfence_fence_mapping m;
};

static void test_killed_while_waiting_own_file(void)
{
	struct child_fence *shared;
	int64_t base;
	bool seen = false, killed;
	int ret = -1;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	base = nfence_debugfs_count_fences(dbg);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(shared != MAP_FAILED);

	pid = fork();
	igt_assert_lte(0, pid);
	if (!pid) {
		struct drm_nfence_fence_create c = { .type = TYPE_DEFAULT };
		struct drm_nfence_device_create d = { 0 };
		uint64_t v = 1;
		int cfd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		cfd = __nfence_open_adapter(0);
		if (cfd < 0 || __nfence_device_create(cfd, &d))
			_exit(2);
		c.device = d.handle;
		if (__nfence_fence_create(cfd, &c))
			_exit(3);
		shared->m = c.mapping;
		__atomic_store_n(&shared->ready, 1, __ATOMIC_SEQ_CST);
		__nfence_fence_wait_one(cfd, d.handle, c.handle, v, INFINITE);
		_exit(4);
	}

	for (int i = 0; i < BLOCKED_MS; i++) {
		if (__atomic_load_n(&shared->ready, __ATOMIC_SEQ_CST)) {
			seen = true;
			break;
		}
		usleep(1000);
	}
	if (seen)
		ret = nfence_debugfs_fence_wait(dbg, &shared->m, 1, BLOCKED_MS,
						NULL);
	killed = kill_and_reap(pid);

	igt_assert_f(seen, "child did not create its fence\n");
	igt_assert_eq(ret, 0);
	igt_assert(killed);
	/* Its file is gone and took the fence and its waiter along. */
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &shared->m,
						     JOIN_MS), 0);
	igt_assert_eq_s64(nfence_debugfs_count_fences(dbg), base);
	munmap(shared, sizeof(*shared));
}

static void test_async_dies_with_file(void)
{
	struct drm_nfence_fence_mapping m, sm;
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	uint64_t v = 5;
	int efd = new_eventfd(), sfd;
	uint32_t h, sh, o;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, 0, 0, &m);
	sh = nfence_fence_create(fd2, dev2, TYPE_DEFAULT, SHAREABLE, 0, &sm);
	sfd = nfence_fence_share(fd2, sh);
	{
		struct drm_nfence_fence_wait w = {
			.device = dev2,
			.count = 1,
			.handles = (uintptr_t)&h,
			.values = (uintptr_t)&v,
			.flags = FLAG_ASYNC,
			.eventfd = efd,
		};

		igt_assert_eq(__nfence_fence_wait(fd2, &w), 0);
		w.handles = (uintptr_t)&sh;
		igt_assert_eq(__nfence_fence_wait(fd2, &w), 0);
	}
	wait_waiters(&m, 1, NULL);
	wait_waiters(&sm, 1, NULL);

	/* The file goes: its fence goes, its waits on the shared one too. */
	close(fd2);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &m, JOIN_MS), 0);
	assert_idle(&sm);

	/* The shared fence still works. */
	o = nfence_fence_open(fd, dev, sfd, 0, NULL);
	close(sfd);
	nfence_fence_signal(fd, dev, o, 5);
	igt_assert_eq(poll_one(o, 5), 0);
	nfence_fence_destroy(fd, o);
	igt_assert_eq(nfence_debugfs_fence_wait_gone(dbg, &sm, JOIN_MS), 0);
	close(efd);
}

static void test_wait_fork_child(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h = create(0, 0, &m);

	nfence_watchdog(WATCHDOG_S);
	/* The children share the file: same device and fence handles. */
	igt_fork(child, 2) {
		igt_assert_eq(wait_one(h, 3 + child,
				       nfence_deadline_ms(WAITER_MS)), 0);
	}
	settle(&m, 2);
	nfence_fence_signal(fd, dev, h, 3);
	nfence_fence_signal(fd, dev, h, 4);
	igt_waitchildren();
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

/* Put device @device of this process in error through the debugfs hook. */
static void device_error(uint32_t device)
{
	char buf[64];
	int dir, f, n;

	dir = nfence_debugfs_dir(fd);
	f = openat(dir, "nfence_device_error", O_WRONLY);
	igt_assert_f(f >= 0, "nfence_device_error: %m\n");
	n = snprintf(buf, sizeof(buf), "%d %u", getpid(), device);
	igt_assert_eq(write(f, buf, n), n);
	close(f);
	close(dir);
}

/* A thread creating fences on one device while the device goes into error. */
#define RACE_FENCES	300

struct create_race {
	uint32_t device;
	uint32_t handles[RACE_FENCES];
	unsigned int created;
	volatile bool go;
};

static void *create_race_thread(void *data)
{
	struct create_race *r = data;

	while (!r->go)
		;
	for (r->created = 0; r->created < RACE_FENCES; r->created++) {
		struct drm_nfence_fence_create c = {
			.device = r->device,
			.type = TYPE_DEFAULT,
			.initial_value = 1,
		};

		if (__nfence_fence_create(fd, &c))
			break;
		r->handles[r->created] = c.handle;
	}
	return NULL;
}

/*
 * Issue 17 point 2: a fence created while its device goes into error is
 * AlwaysSignaled however the two interleave (the error is set under the
 * lock that publishes new handles).
 */
static void test_device_error_create_race(void)
{
	struct create_race *r = calloc(1, sizeof(*r));
	pthread_t thread;

	igt_assert(r);
	nfence_watchdog(WATCHDOG_S);
	for (unsigned int round = 0; round < 20; round++) {
		r->device = nfence_device_create(fd);
		r->go = false;
		igt_assert_eq(nfence_thread_create(&thread, create_race_thread,
						   r), 0);
		r->go = true;
		/* At a different point of the creations each round. */
		usleep((round % 10) * 200);
		device_error(r->device);
		pthread_join(thread, NULL);
		igt_assert_eq(r->created, RACE_FENCES);
		for (unsigned int i = 0; i < r->created; i++)
			igt_assert_f(__nfence_fence_wait_one(fd, r->device,
							     r->handles[i],
							     UINT64_MAX, 0) == 0,
				     "round %u: fence %u of %u is not "
				     "AlwaysSignaled\n", round, i, r->created);
		nfence_device_destroy(fd, r->device);
	}
	free(r);
}

/* @marked: through DEVICE_CONTROL's MARK_ERROR, not the debugfs hook. */
static void test_device_error(bool marked)
{
	struct drm_nfence_fence_mapping m, m2;
	uint32_t dev2, h, h2, later;
	struct waiter w;

	nfence_watchdog(WATCHDOG_S);
	/* A device of its own, so that the error spares the fixture's. */
	dev2 = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev2, TYPE_DEFAULT, 0, 1, &m);
	h2 = create(0, 1, &m2);

	waiter_start_dev(&w, dev2, h, 100, nfence_deadline_ms(WAITER_MS));
	usleep(100 * 1000);
	assert_still_waiting(&w);
	if (marked)
		nfence_device_control(fd, dev2, DRM_NFENCE_DEVICE_OP_MARK_ERROR,
				      NULL);
	else
		device_error(dev2);

	/* AlwaysSignaled: the waiter returns, every value is reached. */
	igt_assert_eq(waiter_join(&w, JOIN_MS), 0);
	assert_value(&m, 0xffffffffull);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, h, UINT64_MAX, 0), 0);
	/* Signals succeed and no longer touch the storage. */
	igt_assert_eq(__nfence_fence_signal_one(fd, dev2, h, 1ull << 40), 0);
	assert_value(&m, 0xffffffffull);

	/* Fences the device creates afterwards are signaled from birth. */
	later = nfence_fence_create(fd, dev2, TYPE_DEFAULT, 0, 3, NULL);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, later, UINT64_MAX, 0),
		      0);

	/* Other devices are not affected. */
	igt_assert_eq(poll_one(h2, 2), -ETIME);
	assert_value(&m2, 1);

	/* Unknown device: the hook refuses. */
	{
		char buf[64];
		int dir = nfence_debugfs_dir(fd);
		int f = openat(dir, "nfence_device_error", O_WRONLY);
		int n = snprintf(buf, sizeof(buf), "%d %u", getpid(), 0xfffffff0u);

		igt_assert(f >= 0);
		igt_assert_eq(write(f, buf, n), -1);
		igt_assert_eq(errno, ENOENT);
		close(f);
		close(dir);
	}

	nfence_fence_destroy(fd, h2);
	nfence_device_destroy(fd, dev2);
}

/*
 * AlwaysSignaled raises CurrentValue to 0xFFFFFFFF and never lowers it
 * (Documentation/fences.rst, "Device error"): a fence already above keeps
 * its value, as does one the device creates afterwards with a higher
 * initial value; any wait on either is satisfied, a signal changes nothing.
 */
static void test_device_error_never_lowers(void)
{
	const uint64_t high = 1ull << 40;
	struct drm_nfence_fence_mapping m, m2;
	uint32_t dev2, h, later;

	igt_require_f(caps.value_bits == 64, "%u-bit fence values\n",
		      caps.value_bits);
	nfence_watchdog(WATCHDOG_S);
	dev2 = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev2, TYPE_DEFAULT, 0, high, &m);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, h, high + 1, 0),
		      -ETIME);
	device_error(dev2);

	assert_value(&m, high);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, h, UINT64_MAX, 0), 0);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev2, h, high + 1), 0);
	assert_value(&m, high);

	later = nfence_fence_create(fd, dev2, TYPE_DEFAULT, 0, high, &m2);
	assert_value(&m2, high);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, later, UINT64_MAX, 0),
		      0);
	nfence_device_destroy(fd, dev2);
}

/*
 * 32-bit atomics: the UINT_MAX/2 window does not hold for an AlwaysSignaled
 * fence (Documentation/fences.rst, "32-bit atomics"): a wait for any value
 * is satisfied at once and a signal of any value succeeds, changing
 * nothing.
 */
static void test_value32_always_signaled(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t dev2, h;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(caps.value_bits == 32, "%u-bit fence values\n",
		      caps.value_bits);
	dev2 = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev2, TYPE_DEFAULT, 0, 5, &m);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, h, UINT64_MAX, 0),
		      -EINVAL);
	device_error(dev2);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev2, h, UINT64_MAX, 0), 0);
	igt_assert_eq(__nfence_fence_signal_one(fd, dev2, h, UINT64_MAX), 0);
	assert_value(&m, 0xffffffffull);
	nfence_device_destroy(fd, dev2);
}

static void test_wait_cross_process(void)
{
	struct drm_nfence_fence_mapping m;
	uint32_t h;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	h = create(SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);

	/* A process with its own file opens the fence and waits on it. */
	igt_fork(child, 1) {
		int cfd = nfence_open();
		uint32_t cdev = nfence_device_create(cfd);
		uint32_t o = nfence_fence_open(cfd, cdev, sfd, 0, NULL);

		int64_t deadline = nfence_deadline_ms(WAITER_MS);

		igt_assert_eq(__nfence_fence_wait_one(cfd, cdev, o, 5,
						      deadline), 0);
		igt_assert_eq(__nfence_fence_wait_one(cfd, cdev, o, 6, 0),
			      -ETIME);
		close(cfd);
	}
	settle(&m, 1);
	nfence_fence_signal(fd, dev, h, 5);
	igt_waitchildren();
	close(sfd);
	assert_idle(&m);
	nfence_fence_destroy(fd, h);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		native = adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
		igt_require_f(native, "adapter has no native fences\n");
		nfence_query_fence_caps(fd, &caps);
		dev = nfence_device_create(fd);
		dbg = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
		/* Interrupts waiter threads (no SA_RESTART: -EINTR). */
		install_handler(SIGUSR1, noop_handler, 0);
	}

	igt_describe("Non-zero wait pad fails with -EINVAL.");
	igt_subtest("wait-bad-pad")
		test_wait_bad_pad();

	igt_describe("Unknown wait flag bits fail with -EINVAL.");
	igt_subtest("wait-bad-flags")
		test_wait_bad_flags();

	igt_describe("Wait count 0 or above 64 fails with -EINVAL without "
		     "touching the arrays.");
	igt_subtest("wait-bad-count")
		test_wait_bad_count();

	igt_describe("NULL, unmapped, kernel and straddling handle/value "
		     "arrays fail with -EFAULT.");
	igt_subtest("wait-bad-pointers")
		test_wait_bad_pointers();

	igt_describe("A wait on device 0, destroyed, another file's device or "
		     "a device of this file that does not own the fence "
		     "fails with -ENOENT.");
	igt_subtest("wait-bad-device")
		test_wait_bad_device();

	igt_describe("One bad fence handle at any position of the array "
		     "fails the wait with -ENOENT, ALL or ANY.");
	igt_subtest("wait-bad-handle")
		test_wait_bad_handle();

	igt_describe("ASYNC with a non-zero timeout fails with -EINVAL.");
	igt_subtest("wait-async-timeout")
		test_wait_async_timeout();

	igt_describe("A non-zero eventfd without ASYNC fails with -EINVAL.");
	igt_subtest("wait-eventfd-without-async")
		test_wait_eventfd_without_async();

	igt_describe("ASYNC with a fd that is not an eventfd fails with "
		     "-EINVAL, with a closed fd with -EBADF, whether the "
		     "fence has reached the value already or not.");
	igt_subtest("wait-async-bad-fd")
		test_wait_async_bad_fd();

	igt_describe("Waiting through a NO_WAIT handle fails with -EACCES; "
		     "it may still signal.");
	igt_subtest("wait-no-wait-handle")
		test_wait_no_wait_handle();

	igt_describe("CPU waits on INTRA_GPU fences fail with -EINVAL.");
	igt_subtest("wait-intra-gpu")
		test_wait_intra_gpu();

	igt_describe("Non-zero signal flags fail with -EINVAL and signal "
		     "nothing.");
	igt_subtest("signal-bad-flags")
		test_signal_bad_flags();

	igt_describe("Non-zero signal pad fails with -EINVAL and signals "
		     "nothing.");
	igt_subtest("signal-bad-pad")
		test_signal_bad_pad();

	igt_describe("Signal count 0 or above 64 fails with -EINVAL; 64 "
		     "works.");
	igt_subtest("signal-bad-count")
		test_signal_bad_count();

	igt_describe("Unreadable signal arrays fail with -EFAULT and signal "
		     "nothing, not even the readable part.");
	igt_subtest("signal-bad-pointers")
		test_signal_bad_pointers();

	igt_describe("A signal on device 0, destroyed, another file's "
		     "device or a device of this file that does not own the "
		     "fence fails with -ENOENT.");
	igt_subtest("signal-bad-device")
		test_signal_bad_device();

	igt_describe("One bad handle inside a signal array fails with "
		     "-ENOENT and signals none of the others.");
	igt_subtest("signal-bad-handle")
		test_signal_bad_handle();

	igt_describe("Signaling through a NO_SIGNAL handle fails with "
		     "-EACCES, also inside an array; it may still wait.");
	igt_subtest("signal-no-signal-handle")
		test_signal_no_signal_handle();

	igt_describe("CPU signals of INTRA_GPU fences fail with -EINVAL.");
	igt_subtest("signal-intra-gpu")
		test_signal_intra_gpu();

	igt_describe("Already satisfied waits return 0 at once, whatever "
		     "the deadline, ALL or ANY.");
	igt_subtest("wait-signaled")
		test_wait_signaled();

	igt_describe("Timeout 0 or negative polls: -ETIME when not "
		     "satisfied.");
	igt_subtest("wait-poll")
		test_wait_poll();

	igt_describe("An absolute deadline in the past polls.");
	igt_subtest("wait-deadline-past")
		test_wait_deadline_past();

	igt_describe("INT64_MIN, the earliest deadline, polls too (no "
		     "overflow into an endless wait).");
	igt_subtest("wait-deadline-min")
		test_wait_deadline_min();

	igt_describe("An absolute deadline 50 ms ahead returns -ETIME, not "
		     "before the deadline.");
	igt_subtest("wait-deadline")
		test_wait_deadline();

	igt_describe("A signal at or above the waited value releases a "
		     "waiting thread; one below does not.");
	igt_subtest("wait-wakes")
		test_wait_wakes();

	igt_describe("An ALL wait returns only when every fence is reached.");
	igt_subtest("wait-all")
		test_wait_all();

	igt_describe("An ANY wait returns on the first fence reached and "
		     "reports the lowest satisfied index.");
	igt_subtest("wait-any")
		test_wait_any();

	igt_describe("ASYNC returns at once; the eventfd gets 1 only once "
		     "the wait is satisfied.");
	igt_subtest("wait-async")
		test_wait_async();

	igt_describe("ASYNC on a satisfied wait fires the eventfd at once.");
	igt_subtest("wait-async-signaled")
		test_wait_async_signaled();

	igt_describe("An async wait whose eventfd was closed completes "
		     "harmlessly.");
	igt_subtest("wait-async-eventfd-closed")
		test_wait_async_eventfd_closed();

	igt_describe("SIGALRM without SA_RESTART interrupts a wait with "
		     "-EINTR; calling again completes after a signal.");
	igt_subtest("wait-interrupted")
		test_wait_interrupted();

	igt_describe("With SA_RESTART, interrupted waits restart with the "
		     "same absolute deadline.");
	igt_subtest("wait-interrupted-restart")
		test_wait_interrupted_restart();

	igt_describe("Values around 2^31: wait, signal, no truncation.");
	igt_subtest("value-2-31")
		test_values(1ull << 31);

	igt_describe("Values around 2^32: wait, signal, no truncation.");
	igt_subtest("value-2-32")
		test_values(1ull << 32);

	igt_describe("Values around 2^63: compared unsigned.");
	igt_subtest("value-2-63")
		test_values(1ull << 63);

	igt_describe("Wait for UINT64_MAX and signal UINT64_MAX.");
	igt_subtest("value-max")
		test_values(UINT64_MAX);

	igt_describe("Device error: the fences the device created become "
		     "AlwaysSignaled; waiters return, signals change nothing, "
		     "other devices are unaffected.");
	igt_subtest("device-error-always-signaled")
		test_device_error(false);

	igt_describe("The same through DEVICE_CONTROL MARK_ERROR "
		     "(D3DKMTMarkDeviceAsError).");
	igt_subtest("mark-error-always-signaled")
		test_device_error(true);

	igt_describe("Fences created by one thread while the device goes into "
		     "error are all AlwaysSignaled, before and after.");
	igt_subtest("device-error-create-race")
		test_device_error_create_race();

	igt_describe("Device error never lowers CurrentValue: a fence above "
		     "0xFFFFFFFF, or created above it afterwards, keeps its "
		     "value and satisfies any wait.");
	igt_subtest("device-error-never-lowers")
		test_device_error_never_lowers();

	igt_describe("32-bit atomics: on an AlwaysSignaled fence a wait or "
		     "signal of any value succeeds, the window does not "
		     "apply.");
	igt_subtest("value-32bit-always-signaled")
		test_value32_always_signaled();

	igt_describe("32-bit atomics: waits more than UINT_MAX/2 ahead are "
		     "refused; the window moves across the 32-bit wrap.");
	igt_subtest("value-32bit-window-wait")
		test_value32_window(false);

	igt_describe("32-bit atomics: signals more than UINT_MAX/2 ahead are "
		     "refused and change nothing.");
	igt_subtest("value-32bit-window-signal")
		test_value32_window(true);

	igt_describe("A lower or equal signal succeeds and leaves the value "
		     "and its waiters alone.");
	igt_subtest("signal-lower")
		test_signal_lower();

	igt_describe("The same fence twice in one signal: the larger value "
		     "wins.");
	igt_subtest("signal-same-fence-twice")
		test_signal_same_fence_twice();

	igt_describe("64 fences signaled and waited in one call each.");
	igt_subtest("signal-max-count")
		test_signal_max_count();

	igt_describe("MonitoredValue is UINT64_MAX without waiters, whatever "
		     "was signaled or polled.");
	igt_subtest("monitored-no-waiter")
		test_monitored_no_waiter();

	igt_describe("With blocked threads, MonitoredValue is the least "
		     "waited value - 1, following the releases.");
	igt_subtest("monitored-waiters")
		test_monitored_waiters();

	igt_describe("DRM_NFENCE_MAX_ASYNC_WAITS async waits on a file, then "
		     "one more: -ENOSPC; a released wait makes room by the "
		     "time its eventfd fires (200 re-arms, none refused); "
		     "all fire once each.");
	igt_subtest("async-wait-limit")
		test_async_wait_limit();

	igt_describe("Async waits count as waiters for MonitoredValue.");
	igt_subtest("monitored-async-waiters")
		test_monitored_async_waiters();

	igt_describe("Timed out waiters leave: MonitoredValue moves up, "
		     "then back to UINT64_MAX.");
	igt_subtest("monitored-timeout")
		test_monitored_timeout();

	igt_describe("An interrupted infinite wait leaves: MonitoredValue "
		     "back to UINT64_MAX.");
	igt_subtest("monitored-interrupted")
		test_monitored_interrupted();

	igt_describe("ANY waits leave every fence when released; ALL waits "
		     "keep monitoring the fences not reached.");
	igt_subtest("monitored-any")
		test_monitored_any();

	igt_describe("A fence named several times in one wait gets one "
		     "waiter: the highest value for ALL, the lowest for ANY "
		     "(reported as the first signaled).");
	igt_subtest("same-fence-merged")
		test_same_fence_merged();

	igt_describe("CPU signals without a waiter wake nobody: woken and "
		     "interrupts do not move.");
	igt_subtest("interrupts-no-waiter")
		test_interrupts_no_waiter();

	igt_describe("A CPU signal reaching a waiter counts as woken; one "
		     "below it does not.");
	igt_subtest("interrupts-waiter")
		test_interrupts_waiter();

	igt_describe("Lost wakeups: a thread signals i while another waits "
		     "for i, thousands of times; a miss times out and fails.");
	igt_subtest("race-signal-wait")
		test_race_signal_wait();

	igt_describe("Lost wakeups with four waiters per value.");
	igt_subtest("race-signal-many-waiters")
		test_race_signal_many_waiters();

	igt_describe("Destroying the only handle of a fence a thread waits "
		     "on makes that wait return.");
	igt_subtest("destroy-while-waiting")
		test_destroy_while_waiting();

	igt_describe("Destroying the device of a fence a thread waits on "
		     "makes that wait return.");
	igt_subtest("device-destroy-while-waiting")
		test_device_destroy_while_waiting();

	igt_describe("Processes killed while waiting leave no waiter: "
		     "MonitoredValue follows, then UINT64_MAX.");
	igt_subtest("killed-while-waiting")
		test_killed_while_waiting();

	igt_describe("A process killed while waiting on its own file's "
		     "fence: fence and waiter are freed.");
	igt_subtest("killed-while-waiting-own-file")
		test_killed_while_waiting_own_file();

	igt_describe("Async waits die with their file.");
	igt_subtest("async-dies-with-file")
		test_async_dies_with_file();

	igt_describe("Forked children sharing the file wait; the parent "
		     "signals.");
	igt_subtest("wait-fork-child")
		test_wait_fork_child();

	igt_describe("A process with its own file waits on a shared fence "
		     "the creator signals.");
	igt_subtest("wait-cross-process")
		test_wait_cross_process();

	igt_fixture {
		nfence_watchdog(0);
		close(dbg);
		nfence_device_destroy(fd, dev);
		close(fd);
	}
}
