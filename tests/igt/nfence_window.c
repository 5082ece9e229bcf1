// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("DRM_IOCTL_NFENCE_FENCE_WINDOW: one CPU mapping for "
		     "the CurrentValues of a file's shared fences, a page per "
		     "handle, gone with its handle; and the rejection of "
		     "every invalid input without side effects.");

#define WATCHDOG_S	60
#define PAGE		4096u
#define SHAREABLE	NFENCE_FENCE_SHAREABLE
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT

/* Each subtest opens files of its own: a file gets one window for life. */
static int win_open(void)
{
	return nfence_open();
}

static int __window(int fd, uint32_t pages, uint32_t flags, uint64_t *offset)
{
	struct drm_nfence_fence_window w = {
		.pages = pages,
		.flags = flags,
		.mmap_offset = 0xdeadbeef,
	};
	int ret = drmIoctl(fd, DRM_IOCTL_NFENCE_FENCE_WINDOW, &w) ? -errno : 0;

	if (!ret && offset)
		*offset = w.mmap_offset;
	return ret;
}

static uint64_t window(int fd, uint32_t pages)
{
	uint64_t offset = 0;

	igt_assert_eq(__window(fd, pages, 0, &offset), 0);
	igt_assert_neq_u64(offset, 0);
	igt_assert_eq_u64(offset % PAGE, 0);
	return offset;
}

static const volatile uint64_t *map_window(int fd, uint64_t offset,
					   uint32_t pages)
{
	void *p = mmap(NULL, (size_t)pages * PAGE, PROT_READ, MAP_SHARED, fd,
		       (off_t)offset);

	igt_assert_f(p != MAP_FAILED, "mmap of the window: %s\n",
		     strerror(errno));
	return p;
}

/* Where @m's CurrentValue is in the window mapped at @base. */
static const volatile uint64_t *
in_window(const volatile uint64_t *base, uint64_t offset, uint32_t pages,
	  const struct drm_nfence_fence_mapping *m)
{
	igt_assert_f(m->cpu_mmap_offset >= offset &&
		     m->cpu_mmap_offset - offset < (uint64_t)pages * PAGE,
		     "offset %#llx not in the window [%#llx, +%u pages)\n",
		     (unsigned long long)m->cpu_mmap_offset,
		     (unsigned long long)offset, pages);
	igt_assert_eq_u64(m->cpu_mmap_offset % PAGE, 0);
	return (const volatile uint64_t *)((const volatile char *)base +
		(m->cpu_mmap_offset - offset) + m->cpu_value_offset);
}

static bool outside_window(uint64_t offset, uint32_t pages,
			   const struct drm_nfence_fence_mapping *m)
{
	return m->cpu_mmap_offset < offset ||
	       m->cpu_mmap_offset - offset >= (uint64_t)pages * PAGE;
}

static void assert_sigbus(const volatile uint64_t *p)
{
	uint64_t value = 0;
	int signo;

	igt_assert_f(nfence_access_faults((volatile uint64_t *)p, false,
					  &value, &signo),
		     "read %#llx from a page the file no longer holds\n",
		     (unsigned long long)value);
	igt_assert_eq(signo, SIGBUS);
}

static void test_bad_flags(void)
{
	int fd = win_open();

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int bit = 0; bit < 32; bit++)
		igt_assert_eq(__window(fd, 4, 1u << bit, NULL), -EINVAL);
	/* None of them made a window. */
	window(fd, 4);
	close(fd);
}

static void test_bad_pages(void)
{
	const uint32_t bad[] = {
		0, DRM_NFENCE_FENCE_WINDOW_MAX_PAGES + 1, UINT32_MAX,
	};
	int fd = win_open();

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++)
		igt_assert_eq(__window(fd, bad[i], 0, NULL), -EINVAL);
	window(fd, DRM_NFENCE_FENCE_WINDOW_MAX_PAGES);
	close(fd);
}

/* The ioctl's argument itself unreadable: EFAULT, and no window made. */
static void test_bad_arg_pointer(void)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_FENCE_WINDOW,
	};
	int fd = win_open();

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
	window(fd, 4);
	close(fd);
}

static void test_twice(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *base;
	int fd = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, 2);
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(__window(fd, 2, 0, NULL), -EEXIST);
	igt_assert_eq(__window(fd, 8, 0, NULL), -EEXIST);
	/* The first window is still the one fences land in. */
	h = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 7, &m);
	base = map_window(fd, offset, 2);
	igt_assert_eq_u64(*in_window(base, offset, 2, &m), 7);
	munmap((void *)base, 2 * PAGE);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
	close(fd);
}

/*
 * Every handle of a shared fence gets a page of the window, created or
 * opened, in this file or from another; a non-shared fence keeps its
 * pool page's own offset. One mapping shows them all and follows signals.
 */
static void test_shared_pages(void)
{
	enum { N = 3, PAGES = 8 };
	struct drm_nfence_fence_mapping m[N], o[N], o2, plain;
	const volatile uint64_t *base, *v;
	int fd = win_open(), other = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint32_t odev = nfence_device_create(other);
	uint32_t h[N], oh[N], h2;
	uint64_t offset = window(fd, PAGES);

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < N; i++) {
		int sfd;

		/* Created here... */
		h[i] = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE,
					   10 + i, &m[i]);
		/* ...and created in another file, opened here. */
		oh[i] = nfence_fence_create(other, odev, TYPE_DEFAULT,
					    SHAREABLE, 20 + i, NULL);
		sfd = nfence_fence_share(other, oh[i]);
		h2 = nfence_fence_open(fd, dev, sfd, 0, &o[i]);
		igt_assert_neq_u32(h2, 0);
		close(sfd);
	}
	/* The same fence opened twice: two pages, one value. */
	{
		int sfd = nfence_fence_share(other, oh[0]);

		nfence_fence_open(fd, dev, sfd, 0, &o2);
		close(sfd);
	}
	nfence_fence_create(fd, dev, TYPE_DEFAULT, 0, 5, &plain);
	igt_assert(outside_window(offset, PAGES, &plain));

	base = map_window(fd, offset, PAGES);
	for (int i = 0; i < N; i++) {
		igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[i]),
				  10 + i);
		igt_assert_eq_u64(*in_window(base, offset, PAGES, &o[i]),
				  20 + i);
		for (int j = 0; j < N; j++) {
			igt_assert_neq_u64(o[i].cpu_mmap_offset,
					   m[j].cpu_mmap_offset);
			if (j != i)
				igt_assert_neq_u64(m[i].cpu_mmap_offset,
						   m[j].cpu_mmap_offset);
		}
	}
	igt_assert_neq_u64(o2.cpu_mmap_offset, o[0].cpu_mmap_offset);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &o2), 20);

	/* Signals from either file show through the one mapping. */
	nfence_fence_signal(fd, dev, h[1], 111);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[1]), 111);
	nfence_fence_signal(other, odev, oh[0], 222);
	v = in_window(base, offset, PAGES, &o[0]);
	igt_assert_eq_u64(*v, 222);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &o2), 222);

	munmap((void *)base, PAGES * PAGE);
	nfence_device_destroy(fd, dev);
	nfence_device_destroy(other, odev);
	close(other);
	close(fd);
}

/*
 * A full window: later handles get their page's own offset, mapped on
 * its own as without a window; a page given back is given again.
 */
static void test_full(void)
{
	enum { PAGES = 2 };
	struct drm_nfence_fence_mapping m[PAGES + 1], again;
	const volatile uint64_t *base, *own;
	int fd = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, PAGES);
	uint32_t h[PAGES + 1];

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i <= PAGES; i++)
		h[i] = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE,
					   30 + i, &m[i]);
	base = map_window(fd, offset, PAGES);
	for (int i = 0; i < PAGES; i++)
		igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[i]),
				  30 + i);
	igt_assert(outside_window(offset, PAGES, &m[PAGES]));
	own = nfence_fence_map(fd, &m[PAGES]);
	igt_assert_eq_u64(*own, 30 + PAGES);
	nfence_fence_unmap(own);

	/* The first page back, and given to the next shared handle. */
	nfence_fence_destroy(fd, h[0]);
	h[0] = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 40,
				   &again);
	igt_assert_eq_u64(again.cpu_mmap_offset, m[0].cpu_mmap_offset);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &again), 40);

	munmap((void *)base, PAGES * PAGE);
	nfence_device_destroy(fd, dev);
	close(fd);
}

/*
 * A destroyed handle's page shows nothing (SIGBUS), though it was read
 * before through the same mapping; a later fence given the page shows its
 * own value there, never the old one.
 */
static void test_destroyed_page(void)
{
	enum { PAGES = 4 };
	struct drm_nfence_fence_mapping m, keep, next;
	const volatile uint64_t *base, *v;
	int fd = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, PAGES);
	uint32_t h, hk, hn;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 50, &m);
	hk = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 51, &keep);
	base = map_window(fd, offset, PAGES);
	v = in_window(base, offset, PAGES, &m);
	igt_assert_eq_u64(*v, 50);

	nfence_fence_destroy(fd, h);
	assert_sigbus(v);
	/* The other page is untouched. */
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &keep), 51);
	/* A page never given shows nothing either. */
	assert_sigbus(base + (PAGES - 1) * (PAGE / sizeof(uint64_t)));

	hn = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 52, &next);
	igt_assert_eq_u64(next.cpu_mmap_offset, m.cpu_mmap_offset);
	igt_assert_eq_u64(*v, 52);
	nfence_fence_signal(fd, dev, hn, 53);
	igt_assert_eq_u64(*v, 53);

	munmap((void *)base, PAGES * PAGE);
	nfence_fence_destroy(fd, hn);
	nfence_fence_destroy(fd, hk);
	nfence_device_destroy(fd, dev);
	close(fd);
}

/*
 * The window cannot be mapped writable, made writable or written; it is
 * mapped from its first page, no larger than it is, by its file alone.
 */
static void test_bad_mmap(void)
{
	enum { PAGES = 4 };
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *base;
	int fd = win_open(), other = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, PAGES);
	uint32_t h;
	void *p;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 60, &m);

	p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_f(errno == EPERM || errno == EACCES, "errno %d\n", errno);
	p = mmap(NULL, (PAGES + 1) * PAGE, PROT_READ, MAP_SHARED, fd,
		 (off_t)offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EINVAL);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd,
		 (off_t)(offset + PAGE));
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EINVAL);
	p = mmap(NULL, PAGES * PAGE, PROT_READ, MAP_SHARED, other,
		 (off_t)offset);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EACCES);

	base = map_window(fd, offset, PAGES);
	igt_assert_eq(mprotect((void *)base, PAGES * PAGE,
			       PROT_READ | PROT_WRITE), -1);
	igt_assert_eq(errno, EACCES);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m), 60);
	munmap((void *)base, PAGES * PAGE);

	/* A prefix is a window too. */
	base = map_window(fd, offset, 1);
	igt_assert_eq_u64(*in_window(base, offset, 1, &m), 60);
	munmap((void *)base, PAGE);

	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
	close(other);
	close(fd);
}

/*
 * A mapping of the window holds its file, as any mapping of a DRM file
 * does: closed by the process, the file and its handles stay until the
 * mapping goes, and what the window shows with them.
 */
static void test_holds_file(void)
{
	enum { PAGES = 2 };
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *base, *v;
	int fd = win_open(), other = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, PAGES);
	int64_t devices;

	nfence_watchdog(WATCHDOG_S);
	devices = nfence_live_devices(other);
	igt_require_f(devices > 0, "no nfence_adapter in debugfs\n");
	nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 70, &m);
	base = map_window(fd, offset, PAGES);
	v = in_window(base, offset, PAGES, &m);
	close(fd);
	igt_assert_eq_u64(*v, 70);
	igt_assert_eq(nfence_live_devices(other), devices);
	munmap((void *)base, PAGES * PAGE);
	igt_assert_eq(nfence_live_devices(other), devices - 1);
	close(other);
}

/*
 * Handles made before the window keep their pages' own offsets (and
 * mappings); those made after get pages of the window.
 */
static void test_handles_before(void)
{
	enum { PAGES = 4 };
	struct drm_nfence_fence_mapping before, after;
	const volatile uint64_t *base, *own;
	int fd = win_open();
	uint32_t dev = nfence_device_create(fd);
	uint32_t hb, ha;
	uint64_t offset;

	nfence_watchdog(WATCHDOG_S);
	hb = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 80,
				 &before);
	own = nfence_fence_map(fd, &before);
	offset = window(fd, PAGES);
	ha = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE, 81, &after);
	igt_assert(outside_window(offset, PAGES, &before));
	base = map_window(fd, offset, PAGES);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &after), 81);
	nfence_fence_signal(fd, dev, hb, 82);
	igt_assert_eq_u64(*own, 82);
	nfence_fence_unmap(own);
	munmap((void *)base, PAGES * PAGE);
	nfence_fence_destroy(fd, ha);
	nfence_fence_destroy(fd, hb);
	nfence_device_destroy(fd, dev);
	close(fd);
}

/*
 * A mapping split by a partial munmap keeps showing its pages, and a
 * forked child's copy of the mapping follows the parent's handles: a
 * page the parent's destroy gave back shows nothing in the child either.
 */
static void test_split_and_fork(void)
{
	enum { PAGES = 4 };
	struct drm_nfence_fence_mapping m[PAGES];
	const volatile uint64_t *base;
	int fd = win_open(), status = 0, go[2], ready[2];
	uint32_t dev = nfence_device_create(fd);
	uint64_t offset = window(fd, PAGES);
	uint32_t h[PAGES];
	pid_t child;
	char c;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < PAGES; i++)
		h[i] = nfence_fence_create(fd, dev, TYPE_DEFAULT, SHAREABLE,
					   90 + i, &m[i]);
	base = map_window(fd, offset, PAGES);
	/* Page 1 unmapped: pages 0, 2 and 3 in two mappings now. */
	igt_assert_eq(munmap((void *)((const char *)base + PAGE), PAGE), 0);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[0]), 90);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[2]), 92);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[3]), 93);

	igt_assert_eq(pipe(go), 0);
	igt_assert_eq(pipe(ready), 0);
	child = fork();
	igt_assert(child >= 0);
	if (child == 0) {
		uint64_t v = 0;
		int signo = 0;
		bool faulted;

		/* The child's copy shows what the parent's does... */
		if (*in_window(base, offset, PAGES, &m[2]) != 92)
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		/* ...and, once the parent destroyed it, nothing. */
		faulted = nfence_access_faults((volatile uint64_t *)
					       in_window(base, offset, PAGES,
							 &m[2]),
					       false, &v, &signo);
		_exit(faulted && signo == SIGBUS ? 0 : 3);
	}
	/* Not before the child read the page while it showed the fence. */
	igt_assert_eq(read(ready[0], &c, 1), 1);
	nfence_fence_destroy(fd, h[2]);
	igt_assert_eq(write(go[1], "x", 1), 1);
	igt_assert_eq(waitpid(child, &status, 0), child);
	igt_assert_f(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		     "child: status %#x\n", status);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	igt_assert_eq_u64(*in_window(base, offset, PAGES, &m[3]), 93);

	munmap((void *)base, PAGE);
	munmap((void *)((const char *)base + 2 * PAGE), 2 * PAGE);
	nfence_device_destroy(fd, dev);
	close(fd);
}

/*
 * A destroyed handle's page index given again while mappings still held
 * its old page: thread A creates a fence that takes the window's only
 * page, reads it through many mappings (each a page table entry to zap)
 * and destroys it; thread B creates fences meanwhile until one gets that
 * page, and reads its value through every mapping. Each read must show
 * B's fence, never A's.
 */
#define RACE_MAPS	1024
#define RACE_ROUNDS	20

struct race {
	int fd;
	uint32_t dev;
	uint64_t offset;
	const volatile uint64_t *maps[RACE_MAPS];
	int phase;		/* 1: A destroys; 2: B is done */
	int stop;
	unsigned int stale, rounds, errors;
};

static void *race_reader(void *arg)
{
	struct race *r = arg;

	for (;;) {
		while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) &&
		       __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE) != 1)
			sched_yield();
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return NULL;
		for (;;) {
			struct drm_nfence_fence_create c = {
				.device = r->dev,
				.type = TYPE_DEFAULT,
				.flags = SHAREABLE,
				.initial_value = 7,
			};
			struct drm_nfence_fence_destroy d = { 0 };
			bool mine;

			if (drmIoctl(r->fd, DRM_IOCTL_NFENCE_FENCE_CREATE, &c)) {
				r->errors++;
				break;
			}
			mine = c.mapping.cpu_mmap_offset == r->offset;
			if (mine) {
				unsigned int bad = 0;

				for (int i = 0; i < RACE_MAPS; i++)
					bad += r->maps[i][c.mapping.cpu_value_offset / 8] != 7;
				r->stale += bad != 0;
				r->rounds++;
			}
			d.handle = c.handle;
			if (drmIoctl(r->fd, DRM_IOCTL_NFENCE_FENCE_DESTROY, &d))
				r->errors++;
			if (mine)
				break;
		}
		__atomic_store_n(&r->phase, 2, __ATOMIC_RELEASE);
	}
}

static void test_reuse_race(void)
{
	struct race *r = calloc(1, sizeof(*r));
	pthread_t reader;

	igt_assert(r);
	nfence_watchdog(600);
	r->fd = win_open();
	r->dev = nfence_device_create(r->fd);
	r->offset = window(r->fd, 1);
	for (int i = 0; i < RACE_MAPS; i++)
		r->maps[i] = map_window(r->fd, r->offset, 1);
	igt_assert_eq(nfence_thread_create(&reader, race_reader, r), 0);
	for (unsigned int round = 0; round < RACE_ROUNDS; round++) {
		struct drm_nfence_fence_mapping m;
		uint32_t h = nfence_fence_create(r->fd, r->dev, TYPE_DEFAULT,
						 SHAREABLE, 1000 + round, &m);

		igt_assert_eq_u64(m.cpu_mmap_offset, r->offset);
		for (int i = 0; i < RACE_MAPS; i++)
			igt_assert_eq_u64(r->maps[i][m.cpu_value_offset / 8],
					  1000 + round);
		__atomic_store_n(&r->phase, 1, __ATOMIC_RELEASE);
		nfence_fence_destroy(r->fd, h);
		while (__atomic_load_n(&r->phase, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		__atomic_store_n(&r->phase, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	igt_assert_eq(pthread_join(reader, NULL), 0);
	igt_info("%u rounds, %u with another fence's value\n", r->rounds,
		 r->stale);
	igt_assert_eq(r->errors, 0);
	igt_assert_eq(r->rounds, RACE_ROUNDS);
	igt_assert_f(r->stale == 0, "%u of %u handles given a reused page "
		     "read another fence's value through an old mapping\n",
		     r->stale, r->rounds);
	for (int i = 0; i < RACE_MAPS; i++)
		munmap((void *)r->maps[i], PAGE);
	nfence_device_destroy(r->fd, r->dev);
	close(r->fd);
	free(r);
}

/*
 * The adapter's windows share a budget of mmap offset space: files past
 * it are refused (-ENOSPC, nothing made) and work without a window; a
 * window closed gives its share back.
 */
#define BUDGET_FILES	320	/* more than the 256 largest windows */

static void test_budget(void)
{
	const uint32_t max = DRM_NFENCE_FENCE_WINDOW_MAX_PAGES;
	struct drm_nfence_fence_mapping m;
	int fds[BUDGET_FILES], n, ret = 0, victim;
	const volatile uint64_t *v;
	uint32_t dev, h;

	nfence_watchdog(WATCHDOG_S);
	for (n = 0; n < BUDGET_FILES; n++) {
		fds[n] = win_open();
		ret = __window(fds[n], max, 0, NULL);
		if (ret)
			break;
	}
	igt_assert_f(n < BUDGET_FILES, "%d windows of %u pages made\n", n,
		     max);
	igt_assert_eq(ret, -ENOSPC);
	igt_info("%d windows of %u pages before -ENOSPC\n", n, max);
	igt_assert(n >= 1 && n <= 256);
	/* The refused file has no window: a second try is refused alike. */
	igt_assert_eq(__window(fds[n], max, 0, NULL), -ENOSPC);

	/* A file without a window works as before. */
	victim = fds[n];
	dev = nfence_device_create(victim);
	h = nfence_fence_create(victim, dev, TYPE_DEFAULT, SHAREABLE, 3, &m);
	v = nfence_fence_map(victim, &m);
	igt_assert_eq_u64(*v, 3);
	nfence_fence_unmap(v);
	nfence_fence_destroy(victim, h);
	nfence_device_destroy(victim, dev);

	/* One window closed: its share goes to the next. */
	close(fds[0]);
	fds[0] = win_open();
	window(fds[0], max);
	for (int i = 0; i <= n; i++)
		close(fds[i]);
}

igt_main
{
	igt_fixture {
		int fd = nfence_open();

		igt_require(nfence_has_native_fences(fd));
		close(fd);
	}

	igt_describe("Every flag bit is refused with EINVAL, and none makes "
		     "a window.");
	igt_subtest("window-bad-flags")
		test_bad_flags();

	igt_describe("0 pages and more than the largest window are refused "
		     "with EINVAL, and make none; the largest is made.");
	igt_subtest("window-bad-pages")
		test_bad_pages();

	igt_describe("An unreadable argument is refused with EFAULT, and "
		     "makes no window.");
	igt_subtest("window-bad-arg-pointer")
		test_bad_arg_pointer();

	igt_describe("A second window on the file is refused with EEXIST; "
		     "the first stays.");
	igt_subtest("window-twice")
		test_twice();

	igt_describe("Shared fences created or opened on the file each get a "
		     "page of the window, which one mapping shows, signals "
		     "included; a non-shared fence keeps its pool page.");
	igt_subtest("window-shared-pages")
		test_shared_pages();

	igt_describe("A full window leaves later handles their own pages; a "
		     "page given back is given to the next handle.");
	igt_subtest("window-full")
		test_full();

	igt_describe("A destroyed handle's page raises SIGBUS; the fence given "
		     "it next shows its own value there.");
	igt_subtest("window-destroyed-page")
		test_destroyed_page();

	igt_describe("The window is mapped read-only, from its first page, "
		     "no larger than it is, and by its own file alone.");
	igt_subtest("window-bad-mmap")
		test_bad_mmap();

	igt_describe("A mapping of the window holds its file, closed or not, "
		     "and lets it go when unmapped.");
	igt_subtest("window-holds-file")
		test_holds_file();

	igt_describe("Handles made before the window keep their pages' own "
		     "offsets; later ones get pages of it.");
	igt_subtest("window-handles-before")
		test_handles_before();

	igt_describe("A mapping split by munmap keeps its pages; a forked "
		     "child's copy follows the parent's handles.");
	igt_subtest("window-split-and-fork")
		test_split_and_fork();

	igt_describe("A page index given again while old mappings held its "
		     "page: the new handle reads its own value through every "
		     "mapping, never the destroyed fence's.");
	igt_subtest("window-reuse-race")
		test_reuse_race();

	igt_describe("The adapter's windows share a budget: past it a window "
		     "is refused with ENOSPC and the file works without one; "
		     "a closed window gives its share back.");
	igt_subtest("window-budget")
		test_budget();
}
