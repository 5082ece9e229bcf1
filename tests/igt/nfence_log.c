// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Native fence log buffers (WDDM 3.2): every hardware "
		     "queue's wait and signal logs, their geometry and "
		     "header, their read-only GPU mappings, the entries the "
		     "engines write for logged FENCE_WAIT and FENCE_SIGNAL "
		     "commands, wraparound and overrun, and "
		     "DRM_IOCTL_NFENCE_LOG_READ with each of its invalid "
		     "inputs.");

#define WATCHDOG_S	60
#define WAIT_MS		10000
#define N		DRM_NFENCE_LOG_ENTRIES
#define N_ALL		340	/* max_log_entries: a log at level ALL */
#define LEVEL_DEFAULT	DRM_NFENCE_LOGGING_LEVEL_DEFAULT
#define LEVEL_ALL	DRM_NFENCE_LOGGING_LEVEL_ALL
#define WAITS		DRM_NFENCE_LOG_TYPE_WAITS
#define SIGNALS		DRM_NFENCE_LOG_TYPE_SIGNALS
#define ST_FAULTED	DRM_NFENCE_CONTEXT_STATE_FAULTED
#define PAGE		4096u
#define CANARY		0xa5

#define OP_SIGNAL	DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED
#define OP_WAIT		DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED
#define TS_PER_MS	100000ull	/* 100 MHz GPU timestamps */

/* The interrupt payloads (module parameter interrupt_payload) */
#define PAYLOAD_FENCES	0
#define PAYLOAD_SCAN	1
#define PAYLOAD_QUEUE	2

static int fd = -1, dbg = -1;
static uint32_t dev;
static bool native;

/*
 * Read up to @room entries of @q's log @type from *@cursor, at whatever
 * size the log has now; its entry count in *@entries if not NULL.
 */
static uint32_t read_hdr(const struct nfence_queue *q, uint32_t type,
			 uint64_t *cursor, struct drm_nfence_log_entry *out,
			 uint32_t room, uint32_t *status, uint64_t *entries)
{
	struct drm_nfence_log_read r = {
		.device = q->device,
		.hwqueue = q->handle,
		.type = type,
		.cursor = *cursor,
		.entries_ptr = (uint64_t)(uintptr_t)out,
		.num_entries = room,
	};

	igt_assert_eq(__nfence_log_read(q->fd, &r), 0);
	igt_assert_eq_u32(r.header.type, type);
	*cursor = r.cursor;
	*status = r.status;
	if (entries)
		*entries = r.header.num_entries;
	return r.num_entries;
}

static uint32_t read_n(const struct nfence_queue *q, uint32_t type,
		       uint64_t *cursor, struct drm_nfence_log_entry *out,
		       uint32_t room, uint32_t *status)
{
	return read_hdr(q, type, cursor, out, room, status, NULL);
}

static void assert_entry(const struct drm_nfence_log_entry *e, uint64_t value,
			 uint32_t handle, uint32_t op)
{
	igt_assert_eq_u64(e->fence_value, value);
	igt_assert_eq_u32(e->fence_handle, handle);
	igt_assert_eq_u32(e->operation, op);
	igt_assert_eq_u64(e->reserved0, 0);
	igt_assert_eq_u64(e->reserved1, 0);
	igt_assert_neq_u64(e->end_gpu_timestamp, 0);
}

static struct drm_nfence_log_read read_args(const struct nfence_queue *q,
					    uint32_t type)
{
	return (struct drm_nfence_log_read){
		.device = q->device,
		.hwqueue = q->handle,
		.type = type,
	};
}

/* As read_n(), of a log of the default size; @status may be NULL. */
static uint32_t read_log(const struct nfence_queue *q, uint32_t type,
			 uint64_t *cursor, struct drm_nfence_log_entry *out,
			 uint32_t room, uint32_t *status)
{
	uint64_t entries;
	uint32_t st, n;

	n = read_hdr(q, type, cursor, out, room, &st, &entries);
	igt_assert_eq_u64(entries, N);
	if (status)
		*status = st;
	return n;
}

/* A read that must fail with @err and write nothing back. */
static void expect_read_error(int rfd, const struct drm_nfence_log_read *in,
			      int err)
{
	struct drm_nfence_log_read r = *in, orig;

	memset(&r.header, CANARY, sizeof(r.header));
	r.status = 0xdeadbeef;
	orig = r;
	igt_assert_eq(__nfence_log_read(rfd, &r), err);
	igt_assert_f(!memcmp(&r, &orig, sizeof(r)),
		     "log read struct changed on failure\n");
}

static uint64_t log_va(const struct nfence_queue *q, uint32_t type)
{
	return type == WAITS ? q->wait_log_gpu_va : q->signal_log_gpu_va;
}

static void test_queue_logs(void)
{
	struct drm_nfence_query_fence_caps caps;
	struct nfence_queue a, b;

	nfence_watchdog(WATCHDOG_S);
	nfence_query_fence_caps(fd, &caps);
	/* The geometry the driver allocates, and the cap. */
	igt_assert_eq_u32(caps.max_log_entries, N_ALL);
	igt_assert_eq_u32(caps.log_header_size,
			  sizeof(struct drm_nfence_log_header));
	igt_assert_eq_u32(caps.log_entry_size,
			  sizeof(struct drm_nfence_log_entry));
	igt_assert_eq_u32(caps.flags & DRM_NFENCE_FENCE_CAP_LOG_BUFFERS,
			  DRM_NFENCE_FENCE_CAP_LOG_BUFFERS);
	igt_assert_lte(sizeof(struct drm_nfence_log_header) +
		       N * sizeof(struct drm_nfence_log_entry), PAGE);
	igt_assert_lte(sizeof(struct drm_nfence_log_header) +
		       N_ALL * sizeof(struct drm_nfence_log_entry), 4 * PAGE);

	nfence_queue_create(&a, fd, dev, 0, 0);
	nfence_queue_create(&b, fd, dev, 0,
			    DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE);
	igt_assert_eq_u32(a.log_entries, N);
	igt_assert_eq_u32(b.log_entries, N);
	/* Four distinct pages. */
	igt_assert_neq_u64(a.wait_log_gpu_va, 0);
	igt_assert_neq_u64(a.signal_log_gpu_va, 0);
	igt_assert_eq_u64(a.wait_log_gpu_va % PAGE, 0);
	igt_assert_eq_u64(a.signal_log_gpu_va % PAGE, 0);
	igt_assert_neq_u64(a.wait_log_gpu_va, a.signal_log_gpu_va);
	igt_assert_neq_u64(b.wait_log_gpu_va, a.wait_log_gpu_va);
	igt_assert_neq_u64(b.wait_log_gpu_va, a.signal_log_gpu_va);
	igt_assert_neq_u64(b.signal_log_gpu_va, a.wait_log_gpu_va);
	igt_assert_neq_u64(b.signal_log_gpu_va, a.signal_log_gpu_va);
	nfence_queue_destroy(&b);
	nfence_queue_destroy(&a);
}

static void check_header(uint32_t type)
{
	struct drm_nfence_log_entry entries[4];
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);

	/* Header only. */
	r = read_args(&q, type);
	memset(&r.header, CANARY, sizeof(r.header));
	r.status = 0xdeadbeef;
	igt_assert_eq(__nfence_log_read(fd, &r), 0);
	igt_assert_eq_u32(r.header.first_free_entry_index, 0);
	igt_assert_eq_u32(r.header.wraparound_count, 0);
	igt_assert_eq_u32(r.header.type, type);
	igt_assert_eq_u32(r.header.pad, 0);
	igt_assert_eq_u64(r.header.num_entries, N);
	igt_assert_eq_u64(r.header.reserved[0], 0);
	igt_assert_eq_u64(r.header.reserved[1], 0);
	igt_assert_eq_u64(r.cursor, 0);
	igt_assert_eq_u32(r.num_entries, 0);
	igt_assert_eq_u32(r.status, 0);

	/* Room for entries: none written, none copied, the room untouched. */
	memset(entries, CANARY, sizeof(entries));
	r = read_args(&q, type);
	r.entries_ptr = (uint64_t)(uintptr_t)entries;
	r.num_entries = 4;
	igt_assert_eq(__nfence_log_read(fd, &r), 0);
	igt_assert_eq_u32(r.num_entries, 0);
	igt_assert_eq_u64(r.cursor, 0);
	for (unsigned int i = 0; i < sizeof(entries); i++)
		igt_assert_eq(((uint8_t *)entries)[i], CANARY);

	/* A work load that signals and waits leaves the logs empty. */
	{
		struct nfence_cs cs;
		uint64_t v;

		nfence_queue_begin(&q, &cs);
		nfence_cs_nop(&cs);
		v = nfence_queue_submit(&q, &cs);
		igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
		r = read_args(&q, type);
		igt_assert_eq(__nfence_log_read(fd, &r), 0);
		igt_assert_eq_u32(r.header.first_free_entry_index, 0);
	}
	nfence_queue_destroy(&q);
}

static void test_header_waits(void)
{
	check_header(WAITS);
}

static void test_header_signals(void)
{
	check_header(SIGNALS);
}

/* The GPU reads a log at its VA: NumberOfEntries, 16 bytes in. */
static void test_gpu_reads_log(void)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t v;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	for (uint32_t type = WAITS; type <= SIGNALS; type++) {
		nfence_queue_begin(&q, &cs);
		nfence_cs_fence_wait(&cs, log_va(&q, type) + 16, N);
		v = nfence_queue_submit(&q, &cs);
		igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	}
	igt_assert_eq_u32(nfence_queue_state(&q, NULL) & ST_FAULTED, 0);
	nfence_queue_destroy(&q);
}

/* A command writing at @va of the queue's address space faults there. */
static void expect_write_fault(uint64_t va, bool timestamp)
{
	struct drm_nfence_context_control ctl;
	struct nfence_queue q;
	struct nfence_cs cs;

	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	if (timestamp)
		nfence_cs_timestamp(&cs, va);
	else
		nfence_cs_write64(&cs, va, 1);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, q.submitted, WAIT_MS), 0);
	nfence_queue_state(&q, &ctl);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, va);
	nfence_queue_destroy(&q);
}

/* No command of the process writes a log: its own queue's or another's. */
static void test_gpu_write_faults(void)
{
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	expect_write_fault(q.wait_log_gpu_va, false);
	expect_write_fault(q.signal_log_gpu_va + 8, false);
	expect_write_fault(q.signal_log_gpu_va + 40, true);
	/* And the logs are as they were. */
	for (uint32_t type = WAITS; type <= SIGNALS; type++) {
		struct drm_nfence_log_read r = read_args(&q, type);

		igt_assert_eq(__nfence_log_read(fd, &r), 0);
		igt_assert_eq_u32(r.header.first_free_entry_index, 0);
		igt_assert_eq_u32(r.header.type, type);
		igt_assert_eq_u64(r.header.num_entries, N);
	}
	nfence_queue_destroy(&q);
}

/* A destroyed queue's logs leave the address space with it. */
static void test_unmapped_on_destroy(void)
{
	struct drm_nfence_context_control ctl;
	struct nfence_queue gone, q;
	struct drm_nfence_log_read r;
	struct nfence_cs cs;
	uint64_t va;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_create(&gone, fd, dev, 0, 0);
	va = gone.wait_log_gpu_va;
	r = read_args(&gone, WAITS);
	nfence_queue_destroy(&gone);
	expect_read_error(fd, &r, -ENOENT);

	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait(&cs, va + 16, N);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, q.submitted, WAIT_MS), 0);
	nfence_queue_state(&q, &ctl);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, va + 16);
	nfence_queue_destroy(&q);
}

/* A SUBMIT_WAIT held inside the ioctl by a page userfaultfd keeps back. */
struct held_submit {
	int fd;
	struct drm_nfence_submit_sync sync;
	int ret;
};

static void *held_submit_thread(void *arg)
{
	struct held_submit *h = arg;

	h->ret = __nfence_submit_wait(h->fd, &h->sync);
	return NULL;
}

/*
 * The queue's logs are unmapped by its destroy, not by its last
 * reference: a SUBMIT_WAIT on the queue, stopped in its copy of the fence
 * handles by a page that userfaultfd has not filled yet, holds a reference
 * across the destroy, and the destroyed queue's log must already fault.
 */
static void test_unmapped_on_destroy_held(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct drm_nfence_context_control ctl;
	struct uffdio_copy copy = { 0 };
	struct uffdio_register reg = { 0 };
	struct nfence_queue gone, q;
	struct held_submit h = { 0 };
	struct uffd_msg msg;
	struct pollfd pfd;
	struct nfence_cs cs;
	pthread_t thread;
	uint64_t va;
	char *page, *fill;
	int uffd;

	nfence_watchdog(WATCHDOG_S);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	igt_require_f(uffd >= 0, "userfaultfd: errno %d\n", errno);
	igt_assert_eq(ioctl(uffd, UFFDIO_API, &api), 0);
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(page != MAP_FAILED);
	reg.range.start = (uintptr_t)page;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	igt_assert_eq(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);

	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_create(&gone, fd, dev, 0, 0);
	va = gone.wait_log_gpu_va;
	h.fd = fd;
	h.sync.device = dev;
	h.sync.hwqueue = gone.handle;
	h.sync.handles = (uintptr_t)page;
	h.sync.values = (uintptr_t)(page + 8);
	h.sync.count = 1;
	igt_assert_eq(nfence_thread_create(&thread, held_submit_thread, &h), 0);

	/* The fault on the handles: the submission holds the queue now. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	igt_assert_eq(poll(&pfd, 1, WAIT_MS), 1);
	igt_assert_eq(read(uffd, &msg, sizeof(msg)), (ssize_t)sizeof(msg));
	igt_assert_eq(msg.event, UFFD_EVENT_PAGEFAULT);
	igt_assert_eq_u64(msg.arg.pagefault.address & ~(uint64_t)(PAGE - 1),
			  (uintptr_t)page);

	nfence_queue_destroy(&gone);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait(&cs, va + 16, N);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, q.submitted, WAIT_MS), 0);
	nfence_queue_state(&q, &ctl);
	igt_assert_f(ctl.state & ST_FAULTED,
		     "the destroyed queue's log was still mapped while a "
		     "submission held the queue\n");
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, va + 16);

	/* Let the submission go, with a valid fence: its queue is gone. */
	fill = calloc(1, PAGE);
	igt_assert(fill);
	memcpy(fill, &q.progress_fence, sizeof(q.progress_fence));
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)fill;
	copy.len = PAGE;
	igt_assert_eq(ioctl(uffd, UFFDIO_COPY, &copy), 0);
	igt_assert_eq(nfence_thread_join(thread, WAIT_MS), 0);
	igt_assert_eq(h.ret, -ENOENT);
	nfence_queue_destroy(&q);
	free(fill);
	munmap(page, PAGE);
	close(uffd);
}

static void test_read_bad_flags(void)
{
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	for (int bit = 0; bit < 32; bit++) {
		r = read_args(&q, WAITS);
		r.flags = 1u << bit;
		expect_read_error(fd, &r, -EINVAL);
	}
	r = read_args(&q, WAITS);
	igt_assert_eq(__nfence_log_read(fd, &r), 0);
	nfence_queue_destroy(&q);
}

static void test_read_bad_type(void)
{
	const uint32_t types[] = { 0, 3, 0x100, INT32_MAX, UINT32_MAX };
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(types); i++) {
		r = read_args(&q, types[i]);
		expect_read_error(fd, &r, -EINVAL);
	}
	/* Before the lookup: an unknown queue does not hide it. */
	r = read_args(&q, 0);
	r.hwqueue = UINT32_MAX;
	expect_read_error(fd, &r, -EINVAL);
	nfence_queue_destroy(&q);
}

static void test_read_bad_device(void)
{
	uint32_t other = nfence_device_create(fd), gone;
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	gone = nfence_device_create(fd);
	nfence_device_destroy(fd, gone);
	nfence_queue_create(&q, fd, dev, 0, 0);
	const uint32_t devices[] = { 0, other, gone, UINT32_MAX };

	for (unsigned int i = 0; i < ARRAY_SIZE(devices); i++) {
		r = read_args(&q, SIGNALS);
		r.device = devices[i];
		expect_read_error(fd, &r, -ENOENT);
	}
	nfence_queue_destroy(&q);
	nfence_device_destroy(fd, other);
}

static void test_read_bad_queue(void)
{
	struct drm_nfence_log_read r;
	struct nfence_queue q;
	uint32_t ctx;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	ctx = nfence_context_create(fd, dev, 0);
	const uint32_t handles[] = { 0, q.handle + 1000, UINT32_MAX, ctx };

	for (unsigned int i = 0; i < ARRAY_SIZE(handles); i++) {
		r = read_args(&q, WAITS);
		r.hwqueue = handles[i];
		expect_read_error(fd, &r, -ENOENT);
	}
	nfence_context_destroy(fd, dev, ctx);
	nfence_queue_destroy(&q);
}

/* Another file's queue handle names nothing in this one. */
static void test_read_other_file(void)
{
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	r = read_args(&q, WAITS);
	r.device = dev2;
	expect_read_error(fd2, &r, -ENOENT);
	nfence_device_destroy(fd2, dev2);
	close(fd2);
	nfence_queue_destroy(&q);
}

static void test_read_cursor_ahead(void)
{
	const uint64_t cursors[] = { 1, N, N + 1, 1ull << 32, UINT64_MAX };
	struct drm_nfence_log_read r;
	struct nfence_queue q;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&q, fd, dev, 0, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(cursors); i++) {
		for (uint32_t type = WAITS; type <= SIGNALS; type++) {
			r = read_args(&q, type);
			r.cursor = cursors[i];
			expect_read_error(fd, &r, -EINVAL);
		}
	}
	nfence_queue_destroy(&q);
}

static void test_read_bad_arg_pointer(void)
{
	static const unsigned long requests[] = { DRM_IOCTL_NFENCE_LOG_READ };

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

/* Queues come and go with their logs; a closed file takes its queues'. */
static void test_many_queues(void)
{
	enum { COUNT = 64 };
	struct nfence_queue *q = calloc(COUNT, sizeof(*q));
	int fd2 = nfence_open();
	uint32_t dev2 = nfence_device_create(fd2);

	nfence_watchdog(WATCHDOG_S);
	igt_assert(q);
	for (int i = 0; i < COUNT; i++) {
		nfence_queue_create(&q[i], i % 2 ? fd2 : fd, i % 2 ? dev2 : dev,
				    0, 0);
		igt_assert_neq_u64(q[i].wait_log_gpu_va, 0);
	}
	for (int i = 0; i < COUNT; i += 2)
		nfence_queue_destroy(&q[i]);
	/* fd2's queues go with the file. */
	for (int i = 1; i < COUNT; i += 2)
		nfence_queue_forget(&q[i]);
	close(fd2);
	free(q);
}

/*
 * A logged FENCE_SIGNAL: one entry in the signal log, between two
 * TIMESTAMPs around it, and none in the wait log.
 */
static void test_signal_entry(void)
{
	struct drm_nfence_log_entry e[4];
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_bo bo;
	struct nfence_cs cs;
	uint64_t cursor = 0, v;
	uint32_t h, status;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_bo_create(fd, dev, PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &bo);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_timestamp(&cs, bo.gpu_va);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 5, 0x1234,
				   OP_SIGNAL);
	nfence_cs_timestamp(&cs, bo.gpu_va + 8);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));

	igt_assert_eq(read_log(&q, SIGNALS, &cursor, e, 4, &status), 1);
	igt_assert_eq_u32(status, 0);
	igt_assert_eq_u64(cursor, 1);
	assert_entry(&e[0], 5, 0x1234, OP_SIGNAL);
	igt_assert_eq_u64(e[0].observed_gpu_timestamp, 0);
	igt_assert_lte_u64(*nfence_bo_u64(&bo, 0), e[0].end_gpu_timestamp);
	igt_assert_lte_u64(e[0].end_gpu_timestamp, *nfence_bo_u64(&bo, 8));
	cursor = 0;
	igt_assert_eq(read_log(&q, WAITS, &cursor, e, 4, NULL), 0);

	nfence_queue_destroy(&q);
	nfence_bo_destroy(&bo);
	nfence_fence_destroy(fd, h);
}

/*
 * A logged FENCE_WAIT that blocks: its entry says when the engine first
 * found it unresolved and when a CPU signal 20 ms later released it.
 */
static void test_wait_entry_blocked(void)
{
	struct drm_nfence_log_entry e[2];
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_queue line;
	struct nfence_queue q;
	struct nfence_bo bo;
	struct nfence_cs cs;
	uint64_t cursor = 0, v;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_bo_create(fd, dev, PAGE, NFENCE_SEGMENT_SYSTEM,
			 DRM_NFENCE_ALLOC_CPU_VISIBLE, &bo);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_timestamp(&cs, bo.gpu_va);
	nfence_cs_fence_wait_log(&cs, m.current_value_gpu_va, 7, 0x77,
				 OP_WAIT);
	nfence_cs_timestamp(&cs, bo.gpu_va + 8);
	v = nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_debugfs_queue_wait_state(dbg, getpid(), dev,
						      q.context, "wait-fence",
						      WAIT_MS, &line), 0);
	/* Parked, not logged yet. */
	igt_assert_eq(read_log(&q, WAITS, &cursor, e, 2, NULL), 0);
	usleep(20000);
	nfence_fence_signal(fd, dev, h, 7);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));

	igt_assert_eq(read_log(&q, WAITS, &cursor, e, 2, NULL), 1);
	assert_entry(&e[0], 7, 0x77, OP_WAIT);
	igt_assert_lte_u64(*nfence_bo_u64(&bo, 0), e[0].observed_gpu_timestamp);
	igt_assert_lte_u64(e[0].observed_gpu_timestamp + 10 * TS_PER_MS,
			   e[0].end_gpu_timestamp);
	igt_assert_lte_u64(e[0].end_gpu_timestamp, *nfence_bo_u64(&bo, 8));

	nfence_queue_destroy(&q);
	nfence_bo_destroy(&bo);
	nfence_fence_destroy(fd, h);
}

/* A logged FENCE_WAIT that passes at once: observed when it ended. */
static void test_wait_entry_passed(void)
{
	struct drm_nfence_log_entry e[2];
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t cursor = 0, v;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 9,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait_log(&cs, m.current_value_gpu_va, 9, 0x99,
				 OP_WAIT);
	/* Unlogged operations log nothing. */
	nfence_cs_wait_fence(&cs, &m, 9);
	nfence_cs_signal_fence(&cs, &m, 10);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	igt_assert_eq(read_log(&q, WAITS, &cursor, e, 2, NULL), 1);
	assert_entry(&e[0], 9, 0x99, OP_WAIT);
	igt_assert_eq_u64(e[0].observed_gpu_timestamp,
			  e[0].end_gpu_timestamp);
	cursor = 0;
	igt_assert_eq(read_log(&q, SIGNALS, &cursor, e, 2, NULL), 0);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* Append @n logged signals of values @first.. to @q, and run them. */
static void signal_many(struct nfence_queue *q,
			const struct drm_nfence_fence_mapping *m,
			uint64_t first, unsigned int n)
{
	struct nfence_cs cs;
	uint64_t v = 0;

	while (n) {
		unsigned int k = n < 64 ? n : 64;

		nfence_queue_begin(q, &cs);
		for (unsigned int i = 0; i < k; i++)
			nfence_cs_fence_signal_log(&cs, m->current_value_gpu_va,
						   m->monitored_value_gpu_va,
						   first + i, 0x5, OP_SIGNAL);
		v = nfence_queue_submit(q, &cs);
		first += k;
		n -= k;
	}
	igt_assert(nfence_queue_poll(q, v, WAIT_MS));
}

/* In order, timestamps never going back, read in pieces. */
static void test_entries_in_order(void)
{
	struct drm_nfence_log_entry e[N];
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	uint64_t cursor = 0, prev = 0;
	uint32_t h, got = 0, n;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	signal_many(&q, &m, 1, 50);
	while ((n = read_log(&q, SIGNALS, &cursor, e, 7, NULL))) {
		for (uint32_t i = 0; i < n; i++) {
			assert_entry(&e[i], got + i + 1, 0x5, OP_SIGNAL);
			igt_assert_lte_u64(prev, e[i].end_gpu_timestamp);
			prev = e[i].end_gpu_timestamp;
		}
		got += n;
	}
	igt_assert_eq_u32(got, 50);
	igt_assert_eq_u64(cursor, 50);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* More than a log holds: the index wraps, the reader sees the overrun. */
static void test_wraparound_overrun(void)
{
	const unsigned int total = 2 * N + 5;
	struct drm_nfence_log_entry e[N];
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_read r;
	struct nfence_queue q;
	uint64_t cursor = 0;
	uint32_t h, status;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	signal_many(&q, &m, 1, total);

	r = read_args(&q, SIGNALS);
	igt_assert_eq(__nfence_log_read(fd, &r), 0);
	igt_assert_eq_u32(r.header.first_free_entry_index, total % N);
	igt_assert_eq_u32(r.header.wraparound_count, total / N);

	igt_assert_eq(read_log(&q, SIGNALS, &cursor, e, N, &status), N);
	igt_assert_eq_u32(status, DRM_NFENCE_LOG_READ_OVERRUN);
	igt_assert_eq_u64(cursor, total);
	for (uint32_t i = 0; i < N; i++)
		assert_entry(&e[i], total - N + 1 + i, 0x5, OP_SIGNAL);
	/* Caught up: nothing more, no overrun. */
	igt_assert_eq(read_log(&q, SIGNALS, &cursor, e, N, &status), 0);
	igt_assert_eq_u32(status, 0);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* Entries to copy and nowhere to put them: -EFAULT, nothing written. */
static void test_read_efault(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_read r;
	struct nfence_queue q;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	signal_many(&q, &m, 1, 3);
	r = read_args(&q, SIGNALS);
	r.num_entries = 3;
	r.entries_ptr = 8;
	expect_read_error(fd, &r, -EFAULT);
	r.entries_ptr = 0;
	expect_read_error(fd, &r, -EFAULT);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* A log payload naming the other operation is an invalid command. */
static void test_bad_log_op(void)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait_log(&cs, m.current_value_gpu_va, 0, 1, OP_SIGNAL);
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 1, 1, OP_WAIT);
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 1, 1, 2);
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	/* The log flag on another opcode, at its own and the longer length. */
	nfence_queue_begin(&q, &cs);
	nfence_cs_raw(&cs, DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_NOP,
						      DRM_NFENCE_CS_FLAG_LOG,
						      DRM_NFENCE_CS_NOP_WORDS),
		      0, NULL, 0);
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	nfence_queue_begin(&q, &cs);
	{
		/* A payload's words: a length the flag would make right. */
		const uint64_t payload[] = { 0 };

		nfence_cs_raw(&cs,
			      DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_NOP,
							 DRM_NFENCE_CS_FLAG_LOG,
							 DRM_NFENCE_CS_NOP_WORDS +
							 DRM_NFENCE_CS_LOG_WORDS),
			      0, payload, 1);
	}
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	/* The flag without the payload's length. */
	nfence_queue_begin(&q, &cs);
	{
		const uint64_t ops[] = { m.current_value_gpu_va, 0 };

		nfence_cs_raw(&cs,
			      DRM_NFENCE_CS_HEADER_FLAGS(DRM_NFENCE_CS_FENCE_WAIT,
							 DRM_NFENCE_CS_FLAG_LOG,
							 DRM_NFENCE_CS_FENCE_WAIT_WORDS),
			      0, ops, 2);
	}
	igt_assert_eq(__nfence_queue_submit(&q, &cs), -EINVAL);
	igt_assert_eq_u32(nfence_queue_state(&q, NULL) & ST_FAULTED, 0);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* What a queue logged before its context faulted can still be read. */
static void test_faulted_context_logs(void)
{
	struct drm_nfence_log_entry e[4];
	struct drm_nfence_fence_mapping m;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t cursor = 0;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 3, 0x3,
				   OP_SIGNAL);
	nfence_cs_write64(&cs, q.wait_log_gpu_va, 1);	/* faults */
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 4, 0x3,
				   OP_SIGNAL);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, q.submitted, WAIT_MS), 0);
	igt_assert(nfence_queue_state(&q, NULL) & ST_FAULTED);
	igt_assert_eq(read_log(&q, SIGNALS, &cursor, e, 4, NULL), 1);
	assert_entry(&e[0], 3, 0x3, OP_SIGNAL);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* Whether @efd becomes readable within @ms. */
static bool eventfd_fired(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, ms);
	} while (ret < 0 && errno == EINTR);
	return ret > 0;
}

static void trace_off(int sig)
{
	const char *dir = nfence_tracefs();

	(void)sig;
	if (dir)
		nfence_trace_events(dir, "nfence", false);
}

/*
 * The trace events: a CPU signal, a blocking wait, a GPU signal that
 * wakes an asynchronous waiter through the interrupt, and a logged
 * signal each show up in tracefs with their values.
 */
static void test_tracepoints(void)
{
	static const char *const irq_text[] = {
		[PAYLOAD_FENCES] = "payload=fences fences=1 woken=1",
		[PAYLOAD_SCAN] = "payload=scan fences=0 woken=1",
		[PAYLOAD_QUEUE] = "payload=queue fences=1 woken=1",
	};
	uint64_t payload = nfence_param_get_u64("interrupt_payload");
	char entry[80];
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_fence_wait w;
	const char *dir = nfence_tracefs();
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t v, value;
	char *text;
	uint32_t h;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	igt_assert_lt_u64(payload, ARRAY_SIZE(irq_text));
	igt_require_f(dir, "no tracefs with nfence events\n");
	nfence_trace_write(dir, "trace", "");
	nfence_trace_events(dir, "nfence", true);
	igt_install_exit_handler(trace_off);

	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	nfence_fence_signal(fd, dev, h, 424242);
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, 424242, 0), 0);
	/* An asynchronous waiter for a GPU signal: the interrupt wakes it. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	igt_assert_fd(efd);
	value = 434343;
	w = (struct drm_nfence_fence_wait){
		.device = dev,
		.count = 1,
		.flags = DRM_NFENCE_WAIT_ASYNC,
		.handles = (uint64_t)(uintptr_t)&h,
		.values = (uint64_t)(uintptr_t)&value,
		.eventfd = efd,
	};
	igt_assert_eq(__nfence_fence_wait(fd, &w), 0);
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_work(&cs, 4343);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, 434343, h,
				   OP_SIGNAL);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	igt_assert(eventfd_fired(efd, WAIT_MS));
	nfence_trace_events(dir, "nfence", false);

	text = nfence_trace_read(dir);
	igt_debug("%s", text);
	igt_assert_f(strstr(text, "nfence_fence_signal:") &&
		     strstr(text, "value=424242 from=cpu"),
		     "no CPU signal event\n");
	igt_assert_f(strstr(text, "nfence_wait_begin:") &&
		     strstr(text, "value=424242 count=1 async=0"),
		     "no wait_begin event\n");
	igt_assert_f(strstr(text, "value=424242 result=0"),
		     "no wait_end event\n");
	igt_assert_f(strstr(text, "value=434343 count=1 async=1"),
		     "no async wait_begin event\n");
	igt_assert_f(strstr(text, "value=434343 from=gpu"),
		     "no GPU signal event\n");
	/* The signal log's entry names the fence by its id, not 0. */
	snprintf(entry, sizeof(entry),
		 "handle=%#x value=434343 observed_ts=0 gpu_ts=", h);
	igt_assert_f(strstr(text, "log=signals fence=") && strstr(text, entry),
		     "no log entry event \"%s\"\n", entry);
	snprintf(entry, sizeof(entry), "fence=0 handle=%#x", h);
	igt_assert_f(!strstr(text, entry), "log entry without its fence\n");
	igt_assert_f(strstr(text, "nfence_work:") && strstr(text, "ns=4343"),
		     "no work event\n");
	igt_assert_f(strstr(text, "nfence_interrupt:") &&
		     strstr(text, irq_text[payload]),
		     "no interrupt event \"%s\"\n", irq_text[payload]);
	igt_assert_f(strstr(text, "value=434343 result=0"),
		     "no async wait_end event\n");
	free(text);
	close(efd);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* One adapter, opened on its own, and what the tests need of it. */
struct payload_adapter {
	int fd;
	int dir;
	uint32_t dev;
	unsigned int index;
	unsigned int payload;
};

/*
 * Open the first adapter with native fences whose GPU gives its native
 * fence signaled interrupts @payload (the module parameter, which only
 * native fence adapters follow); false if there is none.
 */
static bool payload_adapter_open(unsigned int payload,
				 struct payload_adapter *a)
{
	unsigned int n = nfence_param_get_u64("num_adapters");

	for (unsigned int i = 0; i < n; i++) {
		int afd;

		if (nfence_param_get_u64_at("interrupt_payload", i) != payload)
			continue;
		afd = nfence_open_adapter(i);
		if (!nfence_has_native_fences(afd)) {
			close(afd);
			continue;
		}
		a->fd = afd;
		a->dir = nfence_debugfs_dir(afd);
		a->dev = nfence_device_create(afd);
		a->index = i;
		a->payload = payload;
		return true;
	}
	return false;
}

static void payload_adapter_require(unsigned int payload,
				    struct payload_adapter *a)
{
	igt_require_f(payload_adapter_open(payload, a),
		      "no native fence adapter with interrupt_payload=%u\n",
		      payload);
}

static void payload_adapter_close(struct payload_adapter *a)
{
	nfence_device_destroy(a->fd, a->dev);
	close(a->dir);
	close(a->fd);
}

/* An asynchronous CPU wait for @value of @h: its eventfd. */
static int async_waiter(int afd, uint32_t adev, uint32_t h, uint64_t value)
{
	struct drm_nfence_fence_wait w = {
		.device = adev,
		.count = 1,
		.flags = DRM_NFENCE_WAIT_ASYNC,
		.handles = (uint64_t)(uintptr_t)&h,
		.values = (uint64_t)(uintptr_t)&value,
	};
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	igt_assert_fd(efd);
	w.eventfd = efd;
	igt_assert_eq(__nfence_fence_wait(afd, &w), 0);
	return efd;
}

/* How a GPU signal of the optimized-interrupt tests is written. */
enum how {
	LOGGED,		/* logged, naming the fence it signals */
	UNLOGGED,	/* no log payload */
	WRONG_HANDLE,	/* logged, naming another fence */
	NO_HANDLE,	/* logged, naming no fence */
};

/*
 * On the optimized-interrupt adapter: one GPU signal of a fence a CPU
 * waiter waits for, written @how; the waiter is woken, through the
 * interrupt payload the test expects: the queue (its log read), or a scan
 * of every fence when the log cannot name the signal.
 */
static void optimized_signal(enum how how)
{
	struct drm_nfence_fence_mapping m, m2;
	struct nfence_interrupts before, after;
	struct payload_adapter a;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t h, h2, named;
	uint64_t v;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	payload_adapter_require(PAYLOAD_QUEUE, &a);
	h = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				0, &m);
	h2 = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				 0, 0, &m2);
	named = how == WRONG_HANDLE ? h2 : how == NO_HANDLE ? 0xdead : h;
	nfence_queue_create(&q, a.fd, a.dev, 0, 0);
	efd = async_waiter(a.fd, a.dev, h, 5);
	nfence_debugfs_interrupts(a.dir, &before);

	nfence_queue_begin(&q, &cs);
	if (how == UNLOGGED)
		nfence_cs_signal_fence(&cs, &m, 5);
	else
		nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
					   m.monitored_value_gpu_va, 5, named,
					   OP_SIGNAL);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	igt_assert_f(eventfd_fired(efd, WAIT_MS), "waiter not woken\n");
	nfence_debugfs_interrupts(a.dir, &after);

	igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
	igt_assert_eq_u64(after.engine_irqs, before.engine_irqs);
	igt_assert_eq_u64(after.overruns, before.overruns);
	if (how == LOGGED) {
		igt_assert_eq_u64(after.queue_irqs, before.queue_irqs + 1);
		igt_assert_eq_u64(after.log_entries, before.log_entries + 1);
		igt_assert_eq_u64(after.scans, before.scans);
	} else {
		igt_assert_eq_u64(after.queue_irqs, before.queue_irqs);
		igt_assert_eq_u64(after.scans, before.scans + 1);
	}

	close(efd);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(a.fd, h2);
	nfence_fence_destroy(a.fd, h);
	payload_adapter_close(&a);
}

/*
 * More logged signals than the log holds before the one that needs the
 * interrupt: the interrupt finds the log overrun and, instead of the
 * entries, looks at every fence of the adapter that has waiters (counted
 * as an overrun, not as a scan of the interrupt without a payload), which
 * still wakes the waiter.
 */
static void test_optimized_overrun(void)
{
	struct drm_nfence_fence_mapping mx, my;
	struct nfence_interrupts before, after;
	struct payload_adapter a;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint32_t hx, hy;
	uint64_t v;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	payload_adapter_require(PAYLOAD_QUEUE, &a);
	hx = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				 0, 0, &mx);
	hy = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				 0, 0, &my);
	nfence_queue_create(&q, a.fd, a.dev, 0, 0);
	efd = async_waiter(a.fd, a.dev, hy, 1);
	nfence_debugfs_interrupts(a.dir, &before);

	nfence_queue_begin(&q, &cs);
	/* Nobody waits for hx: no interrupt, N + 16 entries. */
	for (unsigned int i = 1; i <= N + 16; i++)
		nfence_cs_fence_signal_log(&cs, mx.current_value_gpu_va,
					   mx.monitored_value_gpu_va, i, hx,
					   OP_SIGNAL);
	nfence_cs_fence_signal_log(&cs, my.current_value_gpu_va,
				   my.monitored_value_gpu_va, 1, hy, OP_SIGNAL);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	igt_assert_f(eventfd_fired(efd, WAIT_MS), "waiter not woken\n");
	nfence_debugfs_interrupts(a.dir, &after);

	igt_assert_eq_u64(after.interrupts, before.interrupts + 1);
	igt_assert_eq_u64(after.queue_irqs, before.queue_irqs + 1);
	igt_assert_eq_u64(after.overruns, before.overruns + 1);
	igt_assert_eq_u64(after.scans, before.scans);

	close(efd);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(a.fd, hy);
	nfence_fence_destroy(a.fd, hx);
	payload_adapter_close(&a);
}

/*
 * A CPU waiter on a queue's progress fence: the optimized interrupt names
 * the queue, and the driver checks its progress fence with its log.
 */
static void test_optimized_progress(void)
{
	struct nfence_interrupts before, after;
	struct payload_adapter a;
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t v;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	payload_adapter_require(PAYLOAD_QUEUE, &a);
	nfence_queue_create(&q, a.fd, a.dev, 0,
			    DRM_NFENCE_HWQUEUE_NATIVE_PROGRESS_FENCE);
	efd = async_waiter(a.fd, a.dev, q.progress_fence, q.submitted + 1);
	nfence_debugfs_interrupts(a.dir, &before);
	nfence_queue_begin(&q, &cs);
	nfence_cs_nop(&cs);
	v = nfence_queue_submit(&q, &cs);
	igt_assert_eq_u64(v, q.submitted);
	igt_assert_f(eventfd_fired(efd, WAIT_MS), "waiter not woken\n");
	nfence_debugfs_interrupts(a.dir, &after);
	igt_assert_eq_u64(after.queue_irqs, before.queue_irqs + 1);
	igt_assert_eq_u64(after.scans, before.scans);
	close(efd);
	nfence_queue_destroy(&q);
	payload_adapter_close(&a);
}

/*
 * Two queues of one engine, parked on one gate fence, each then signal a
 * fence with a CPU waiter: the CPU signal of the gate releases both in
 * one CMP pass, and the one interrupt for both names no queue: the driver
 * reads the logs of every queue on the engine.
 */
static void test_optimized_engine_wide(void)
{
	struct drm_nfence_fence_mapping mg, m[2];
	struct nfence_interrupts before, after;
	struct nfence_debugfs_queue line;
	struct payload_adapter a;
	struct nfence_queue q[2];
	uint32_t gate, h[2];
	struct nfence_cs cs;
	uint64_t v[2];
	int efd[2];

	nfence_watchdog(WATCHDOG_S);
	payload_adapter_require(PAYLOAD_QUEUE, &a);
	gate = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				   0, 0, &mg);
	for (int i = 0; i < 2; i++) {
		h[i] = nfence_fence_create(a.fd, a.dev,
					   DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
					   &m[i]);
		nfence_queue_create(&q[i], a.fd, a.dev, 0, 0);
		efd[i] = async_waiter(a.fd, a.dev, h[i], 3);
		nfence_queue_begin(&q[i], &cs);
		nfence_cs_wait_fence(&cs, &mg, 1);
		nfence_cs_fence_signal_log(&cs, m[i].current_value_gpu_va,
					   m[i].monitored_value_gpu_va, 3, h[i],
					   OP_SIGNAL);
		v[i] = nfence_queue_submit(&q[i], &cs);
		igt_assert_eq(nfence_debugfs_queue_wait_state(a.dir, getpid(),
							      a.dev,
							      q[i].context,
							      "wait-fence",
							      WAIT_MS, &line),
			      0);
	}
	nfence_debugfs_interrupts(a.dir, &before);
	nfence_fence_signal(a.fd, a.dev, gate, 1);
	for (int i = 0; i < 2; i++) {
		igt_assert(nfence_queue_poll(&q[i], v[i], WAIT_MS));
		igt_assert_f(eventfd_fired(efd[i], WAIT_MS),
			     "waiter %d not woken\n", i);
	}
	nfence_debugfs_interrupts(a.dir, &after);
	igt_assert_eq_u64(after.engine_irqs, before.engine_irqs + 1);
	igt_assert_eq_u64(after.queue_irqs, before.queue_irqs);
	/* Both entries, and any other queue's of the engine not read yet. */
	igt_assert_lte_u64(before.log_entries + 2, after.log_entries);
	igt_assert_eq_u64(after.scans, before.scans);

	for (int i = 0; i < 2; i++) {
		close(efd[i]);
		nfence_queue_destroy(&q[i]);
		nfence_fence_destroy(a.fd, h[i]);
	}
	nfence_fence_destroy(a.fd, gate);
	payload_adapter_close(&a);
}

/* The fences, waiters and signals of test_payloads_agree(). */
#define AGREE_FENCES	6
#define AGREE_VALUES	3

/*
 * One workload on adapter @a: AGREE_VALUES asynchronous waiters (values
 * 1..3) on each of AGREE_FENCES fences, then one queue's signals, written
 * each way the optimized interrupt must cope with, and a CPU signal.
 * @fired[f][k]: whether the waiter for value k + 1 of fence f was woken.
 */
static void agree_run(const struct payload_adapter *a,
		      const uint64_t reached[AGREE_FENCES],
		      bool fired[AGREE_FENCES][AGREE_VALUES],
		      struct nfence_interrupts *delta)
{
	struct drm_nfence_fence_mapping m[AGREE_FENCES];
	int efd[AGREE_FENCES][AGREE_VALUES];
	struct nfence_interrupts before;
	uint32_t h[AGREE_FENCES];
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t v;

	for (int f = 0; f < AGREE_FENCES; f++) {
		h[f] = nfence_fence_create(a->fd, a->dev,
					   DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
					   &m[f]);
		for (int k = 0; k < AGREE_VALUES; k++)
			efd[f][k] = async_waiter(a->fd, a->dev, h[f], k + 1);
	}
	nfence_queue_create(&q, a->fd, a->dev, 0, 0);
	nfence_debugfs_interrupts(a->dir, &before);
	nfence_queue_begin(&q, &cs);
	/* 0: logged, to 2; 1: unlogged, to 3; 2: logged as fence 3, to 1 */
	nfence_cs_fence_signal_log(&cs, m[0].current_value_gpu_va,
				   m[0].monitored_value_gpu_va, 2, h[0],
				   OP_SIGNAL);
	nfence_cs_signal_fence(&cs, &m[1], 3);
	nfence_cs_fence_signal_log(&cs, m[2].current_value_gpu_va,
				   m[2].monitored_value_gpu_va, 1, h[3],
				   OP_SIGNAL);
	/* 3: nothing; 4: logged, 1 then 3 */
	nfence_cs_fence_signal_log(&cs, m[4].current_value_gpu_va,
				   m[4].monitored_value_gpu_va, 1, h[4],
				   OP_SIGNAL);
	nfence_cs_fence_signal_log(&cs, m[4].current_value_gpu_va,
				   m[4].monitored_value_gpu_va, 3, h[4],
				   OP_SIGNAL);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	/* 5: from the CPU, to 1 */
	nfence_fence_signal(a->fd, a->dev, h[5], 1);

	for (int f = 0; f < AGREE_FENCES; f++)
		for (int k = 0; k < AGREE_VALUES; k++)
			/* Every waiter whose value was reached wakes. */
			fired[f][k] = eventfd_fired(efd[f][k],
						    (uint64_t)k + 1 <= reached[f] ?
						    WAIT_MS : 0);
	/* Let the ones that must not wake have had time to. */
	usleep(100000);
	for (int f = 0; f < AGREE_FENCES; f++)
		for (int k = 0; k < AGREE_VALUES; k++) {
			if (!fired[f][k])
				fired[f][k] = eventfd_fired(efd[f][k], 0);
			close(efd[f][k]);
		}
	nfence_debugfs_interrupts(a->dir, delta);
	delta->interrupts -= before.interrupts;
	delta->scans -= before.scans;
	delta->queue_irqs -= before.queue_irqs;
	delta->engine_irqs -= before.engine_irqs;
	delta->log_entries -= before.log_entries;
	delta->woken -= before.woken;
	nfence_queue_destroy(&q);
	for (int f = 0; f < AGREE_FENCES; f++)
		nfence_fence_destroy(a->fd, h[f]);
}

/*
 * The same workload on three adapters whose GPUs raise the three
 * payloads: each wakes exactly the waiters whose values the fences
 * reached, so the three agree, and each did it its own way.
 */
static void test_payloads_agree(void)
{
	static const uint64_t reached[AGREE_FENCES] = { 2, 3, 1, 0, 3, 1 };
	bool fired[3][AGREE_FENCES][AGREE_VALUES];
	struct nfence_interrupts delta[3];
	struct payload_adapter a[3];

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int p = 0; p < 3; p++)
		payload_adapter_require(p, &a[p]);
	for (unsigned int p = 0; p < 3; p++) {
		agree_run(&a[p], reached, fired[p], &delta[p]);
		for (int f = 0; f < AGREE_FENCES; f++)
			for (int k = 0; k < AGREE_VALUES; k++)
				igt_assert_f(fired[p][f][k] ==
					     ((uint64_t)k + 1 <= reached[f]),
					     "payload %u: waiter for %d of "
					     "fence %d %s\n", p, k + 1, f,
					     fired[p][f][k] ? "woken" :
					     "not woken");
		igt_info("payload %u: %" PRIu64 " interrupts, %" PRIu64
			 " scans, %" PRIu64 " queue and %" PRIu64
			 " engine interrupts, %" PRIu64 " log entries read\n",
			 p, delta[p].interrupts, delta[p].scans,
			 delta[p].queue_irqs, delta[p].engine_irqs,
			 delta[p].log_entries);
	}
	/* Each payload its own way. */
	igt_assert_eq_u64(delta[PAYLOAD_FENCES].scans, 0);
	igt_assert_eq_u64(delta[PAYLOAD_FENCES].queue_irqs, 0);
	igt_assert_lte_u64(1, delta[PAYLOAD_SCAN].scans);
	igt_assert_eq_u64(delta[PAYLOAD_SCAN].queue_irqs, 0);
	igt_assert_lte_u64(1, delta[PAYLOAD_QUEUE].queue_irqs);
	igt_assert_lte_u64(3, delta[PAYLOAD_QUEUE].log_entries);
	/* The unlogged and the misnamed signals: scans. */
	igt_assert_lte_u64(1, delta[PAYLOAD_QUEUE].scans);
	for (unsigned int p = 0; p < 3; p++)
		payload_adapter_close(&a[p]);
}

/*
 * OptimizedNativeFenceSignaledInterrupt is reported by exactly the native
 * fence adapters whose GPU raises it (interrupt_payload=2).
 */
static void test_optimized_cap(void)
{
	unsigned int n = nfence_param_get_u64("num_adapters");

	for (unsigned int i = 0; i < n; i++) {
		struct drm_nfence_query_fence_caps caps;
		int afd = nfence_open_adapter(i);
		bool want = nfence_has_native_fences(afd) &&
			    nfence_param_get_u64_at("interrupt_payload", i) ==
			    PAYLOAD_QUEUE;

		nfence_query_fence_caps(afd, &caps);
		igt_assert_f(!!(caps.flags &
				DRM_NFENCE_FENCE_CAP_OPTIMIZED_INTERRUPT) == want,
			     "adapter %u: optimized interrupt cap %s\n", i,
			     want ? "missing" : "reported");
		close(afd);
	}
}

/* An adapter without native fences has no logs: the VAs are 0. */
static void test_no_logs(void)
{
	int count = nfence_count_adapters(), nfd = -1;
	struct drm_nfence_log_read r;
	struct nfence_queue q;
	uint32_t ndev;

	nfence_watchdog(WATCHDOG_S);
	for (int i = 0; i < count && nfd < 0; i++) {
		int afd = nfence_open_adapter(i);

		if (!nfence_has_native_fences(afd))
			nfd = afd;
		else
			close(afd);
	}
	igt_require_f(nfd >= 0, "needs an adapter without native fences\n");
	ndev = nfence_device_create(nfd);
	nfence_queue_create(&q, nfd, ndev, 0, 0);
	igt_assert_eq_u64(q.wait_log_gpu_va, 0);
	igt_assert_eq_u64(q.signal_log_gpu_va, 0);
	igt_assert_eq_u32(q.log_entries, 0);
	/* After the input checks; before them -EINVAL wins. */
	r = read_args(&q, WAITS);
	expect_read_error(nfd, &r, -EOPNOTSUPP);
	r = read_args(&q, SIGNALS);
	expect_read_error(nfd, &r, -EOPNOTSUPP);
	r = read_args(&q, 0);
	expect_read_error(nfd, &r, -EINVAL);
	/* No logs to size: no logging level either. */
	{
		struct drm_nfence_logging_level l = {
			.level = DRM_NFENCE_LOGGING_LEVEL_ALL,
		};

		igt_assert_eq(__nfence_logging_level(nfd, &l), -EOPNOTSUPP);
		l.flags = 2;
		igt_assert_eq(__nfence_logging_level(nfd, &l), -EINVAL);
	}
	/*
	 * A command with a log payload faults the context there: an invalid
	 * command, reported at its own address, not its operand's.
	 */
	{
		struct drm_nfence_context_control ctl;
		struct nfence_bo bo;
		struct nfence_cs cs;
		uint64_t cmd_va;

		nfence_bo_create(nfd, ndev, PAGE, NFENCE_SEGMENT_SYSTEM,
				 DRM_NFENCE_ALLOC_CPU_VISIBLE, &bo);
		nfence_queue_begin(&q, &cs);
		nfence_cs_nop(&cs);
		cmd_va = cs.gpu_va + cs.len;
		nfence_cs_fence_signal_log(&cs, bo.gpu_va, 0, 1, 1, OP_SIGNAL);
		nfence_queue_submit(&q, &cs);
		igt_assert_eq(nfence_queue_wait(&q, q.submitted, WAIT_MS), 0);
		nfence_queue_state(&q, &ctl);
		igt_assert(ctl.state & ST_FAULTED);
		igt_assert_eq_u32(ctl.fault_reason,
				  DRM_NFENCE_FAULT_BAD_COMMAND);
		igt_assert_eq_u64(ctl.fault_va, cmd_va);
		igt_assert_eq_u64(*nfence_bo_u64(&bo, 0), 0);
		nfence_bo_destroy(&bo);
	}
	nfence_queue_destroy(&q);
	nfence_device_destroy(nfd, ndev);
	close(nfd);
}

/* Put the adapter of @fd back at the default level (an exit handler). */
static void level_default(int sig)
{
	struct drm_nfence_logging_level l = { .level = LEVEL_DEFAULT };

	(void)sig;
	if (fd >= 0)
		__nfence_logging_level(fd, &l);
}

/* @q's log @type as it is now: header, GPU VA. */
static struct drm_nfence_log_read log_now(const struct nfence_queue *q,
					  uint32_t type)
{
	struct drm_nfence_log_read r = read_args(q, type);

	igt_assert_eq(__nfence_log_read(q->fd, &r), 0);
	igt_assert_eq_u32(r.header.type, type);
	return r;
}

/* A LOGGING_LEVEL call that must fail with @err and write nothing back. */
static void expect_level_error(struct drm_nfence_logging_level l, int err)
{
	struct drm_nfence_logging_level orig;
	struct nfence_queue q;

	l.previous = 0xdeadbeef;
	orig = l;
	igt_assert_eq(__nfence_logging_level(fd, &l), err);
	igt_assert_f(!memcmp(&l, &orig, sizeof(l)),
		     "logging level struct changed on failure\n");
	/* Nothing changed: a queue made now has the default logs. */
	nfence_queue_create(&q, fd, dev, 0, 0);
	igt_assert_eq_u32(q.log_entries, N);
	nfence_queue_destroy(&q);
}

static void test_level_bad_level(void)
{
	const uint32_t levels[] = { 2, 3, 0x100, INT32_MAX, UINT32_MAX };

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(levels); i++)
		expect_level_error((struct drm_nfence_logging_level){
					   .level = levels[i] }, -EINVAL);
}

static void test_level_bad_flags(void)
{
	const uint32_t flags[] = { 2, 4, 1u << 31, UINT32_MAX };

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < ARRAY_SIZE(flags); i++)
		expect_level_error((struct drm_nfence_logging_level){
					   .level = LEVEL_ALL,
					   .flags = flags[i] }, -EINVAL);
}

static void test_level_bad_pad(void)
{
	nfence_watchdog(WATCHDOG_S);
	expect_level_error((struct drm_nfence_logging_level){
				   .level = LEVEL_ALL, .pad = 1 }, -EINVAL);
	expect_level_error((struct drm_nfence_logging_level){
				   .level = LEVEL_ALL, .pad = UINT32_MAX },
			   -EINVAL);
}

/*
 * Without CAP_SYS_ADMIN: -EACCES, before any other check, and nothing
 * changes for anyone.
 */
static void test_level_not_root(void)
{
	nfence_watchdog(WATCHDOG_S);
	igt_fork(child, 1) {
		struct drm_nfence_logging_level l = { .level = LEVEL_ALL };

		igt_drop_root();
		igt_assert_eq(__nfence_logging_level(fd, &l), -EACCES);
		l.level = 2;
		igt_assert_eq(__nfence_logging_level(fd, &l), -EACCES);
	}
	igt_waitchildren();
	expect_level_error((struct drm_nfence_logging_level){ .level = 2 },
			   -EINVAL);
}

/* The GPU reads the header of the log at @va: num_entries is @n. */
static void expect_gpu_reads(uint64_t va, uint32_t n)
{
	struct nfence_queue q;
	struct nfence_cs cs;
	uint64_t v;

	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_wait(&cs, va + 16, n);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, WAIT_MS));
	igt_assert_eq_u32(nfence_queue_state(&q, NULL) & ST_FAULTED, 0);
	nfence_queue_destroy(&q);
}

/*
 * A FENCE_WAIT of @q reading @va faults there: nothing is mapped (the
 * queue's own old log VAs, unmapped last when logs are recreated, and
 * taken by nothing while no queue is made since). @q's context faults.
 */
static void expect_gpu_fault(struct nfence_queue *q, uint64_t va)
{
	struct drm_nfence_context_control ctl;
	struct nfence_cs cs;

	nfence_queue_begin(q, &cs);
	nfence_cs_fence_wait(&cs, va, 0);
	nfence_queue_submit(q, &cs);
	igt_assert_eq(nfence_queue_wait(q, q->submitted, WAIT_MS), 0);
	nfence_queue_state(q, &ctl);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, va);
}

/* @count logged signals of @h (mapping @m) on @q, values from @first. */
static void logged_signals(struct nfence_queue *q,
			   const struct drm_nfence_fence_mapping *m,
			   uint32_t h, uint64_t first, uint32_t count)
{
	struct nfence_cs cs;
	uint64_t v = 0;

	/* 64 logged signals fit a command buffer. */
	for (uint32_t done = 0; done < count;) {
		nfence_queue_begin(q, &cs);
		for (uint32_t i = 0; i < 64 && done < count; i++, done++)
			nfence_cs_fence_signal_log(&cs, m->current_value_gpu_va,
						   m->monitored_value_gpu_va,
						   first + done, h, OP_SIGNAL);
		v = nfence_queue_submit(q, &cs);
	}
	igt_assert(nfence_queue_poll(q, v, WAIT_MS));
}

/*
 * Level ALL: every queue's logs, and a new queue's, are the larger ones at
 * new GPU VAs, which the GPU reads, while the old VAs are unmapped; they
 * hold more than a default log without overrunning; back at DEFAULT the
 * logs are the default size again.
 */
static void test_level_all(void)
{
	struct drm_nfence_log_entry *e;
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_read r[2];
	struct nfence_queue a, b, c;
	uint64_t cursor = 0;
	uint32_t h, status;

	nfence_watchdog(WATCHDOG_S);
	igt_install_exit_handler(level_default);
	level_default(0);
	e = calloc(N_ALL, sizeof(*e));
	igt_assert(e);
	nfence_queue_create(&a, fd, dev, 0, 0);
	nfence_queue_create(&c, fd, dev, 0, 0);
	igt_assert_eq_u32(nfence_logging_level(fd, LEVEL_ALL, 0),
			  LEVEL_DEFAULT);
	/* The last queue's old logs were unmapped last: nothing there. */
	expect_gpu_fault(&c, c.signal_log_gpu_va + 16);
	nfence_queue_destroy(&c);
	for (uint32_t type = WAITS; type <= SIGNALS; type++) {
		r[type - WAITS] = log_now(&a, type);
		igt_assert_eq_u64(r[type - WAITS].header.num_entries, N_ALL);
		igt_assert_eq_u32(r[type - WAITS].header.first_free_entry_index,
				  0);
		igt_assert_neq_u64(r[type - WAITS].gpu_va, log_va(&a, type));
		igt_assert_eq_u64(r[type - WAITS].gpu_va % PAGE, 0);
		expect_gpu_reads(r[type - WAITS].gpu_va, N_ALL);
	}
	igt_assert_neq_u64(r[0].gpu_va, r[1].gpu_va);

	/* A queue made now: the larger logs, where it was told. */
	nfence_queue_create(&b, fd, dev, 0, 0);
	igt_assert_eq_u32(b.log_entries, N_ALL);
	igt_assert_eq_u64(log_now(&b, WAITS).gpu_va, b.wait_log_gpu_va);
	igt_assert_eq_u64(log_now(&b, SIGNALS).gpu_va, b.signal_log_gpu_va);

	/* More than a default log holds, none lost. */
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	logged_signals(&a, &m, h, 1, N + 20);
	igt_assert_eq_u32(read_n(&a, SIGNALS, &cursor, e, N_ALL, &status),
			  N + 20);
	igt_assert_eq_u32(status, 0);
	igt_assert_eq_u64(e[N + 19].fence_value, N + 20);

	igt_assert_eq_u32(nfence_logging_level(fd, LEVEL_DEFAULT, 0),
			  LEVEL_ALL);
	igt_assert_eq_u64(log_now(&a, SIGNALS).header.num_entries, N);
	igt_assert_eq_u64(log_now(&b, WAITS).header.num_entries, N);
	nfence_queue_destroy(&b);
	nfence_queue_destroy(&a);
	nfence_fence_destroy(fd, h);
	free(e);
}

/*
 * New buffers at the same level (the seed's "Dxgkrnl may destroy and
 * recreate the log buffers"): a new GPU VA, an empty header, and the
 * cursor carries on; entries not read before are gone (an overrun), those
 * written after are read in order.
 */
static void test_level_recreate(void)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_entry e[4];
	struct drm_nfence_log_read r;
	struct nfence_queue q;
	uint64_t cursor = 0;
	uint32_t h, status;

	nfence_watchdog(WATCHDOG_S);
	igt_install_exit_handler(level_default);
	level_default(0);
	nfence_queue_create(&q, fd, dev, 0, 0);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	logged_signals(&q, &m, h, 1, 3);
	igt_assert_eq_u32(read_n(&q, SIGNALS, &cursor, e, 1, &status), 1);

	igt_assert_eq_u32(nfence_logging_level(fd, LEVEL_DEFAULT,
					       DRM_NFENCE_LOGGING_RECREATE),
			  LEVEL_DEFAULT);
	r = log_now(&q, SIGNALS);
	igt_assert_neq_u64(r.gpu_va, q.signal_log_gpu_va);
	igt_assert_eq_u32(r.header.first_free_entry_index, 0);
	igt_assert_eq_u32(r.header.wraparound_count, 0);
	igt_assert_eq_u64(r.header.num_entries, N);
	/* From 0: the three entries of the old buffer are gone. */
	igt_assert_eq_u64(r.cursor, 3);
	igt_assert_eq_u32(r.status, DRM_NFENCE_LOG_READ_OVERRUN);

	/* Entries 2 and 3 were not read: gone, and the reader is told. */
	igt_assert_eq_u32(read_n(&q, SIGNALS, &cursor, e, 4, &status), 0);
	igt_assert_eq_u32(status, DRM_NFENCE_LOG_READ_OVERRUN);
	igt_assert_eq_u64(cursor, 3);
	logged_signals(&q, &m, h, 4, 2);
	igt_assert_eq_u32(read_n(&q, SIGNALS, &cursor, e, 4, &status), 2);
	igt_assert_eq_u32(status, 0);
	igt_assert_eq_u64(cursor, 5);
	assert_entry(&e[0], 4, h, OP_SIGNAL);
	assert_entry(&e[1], 5, h, OP_SIGNAL);
	/* The old buffer's VA is unmapped (the context faults). */
	expect_gpu_fault(&q, q.signal_log_gpu_va);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/* @count WORKs of 20 us, each then a logged signal of @h; the last seqno. */
static uint64_t work_and_signals(struct nfence_queue *q,
				 const struct drm_nfence_fence_mapping *m,
				 uint32_t h, uint32_t count)
{
	struct nfence_cs cs;
	uint64_t v = 0;

	for (uint32_t i = 1; i <= count; i++) {
		if (i % 50 == 1)
			nfence_queue_begin(q, &cs);
		nfence_cs_work(&cs, 20000);
		nfence_cs_fence_signal_log(&cs, m->current_value_gpu_va,
					   m->monitored_value_gpu_va, i, h,
					   OP_SIGNAL);
		if (i % 50 == 0 || i == count)
			v = nfence_queue_submit(q, &cs);
	}
	return v;
}

/*
 * New buffers while the engine logs: a queue runs logged signals between
 * short WORKs while the logs are recreated again and again; every signal
 * is counted once in the log's position, the queue does not fault, and
 * the fence ends at the last value.
 */
static void test_level_recreate_running(void)
{
	const uint32_t signals = 400;
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_entry *e;
	const volatile uint64_t *cv;
	struct nfence_queue q;
	uint64_t cursor = 0, v;
	uint32_t h, status, n;
	unsigned int rounds = 0;

	nfence_watchdog(WATCHDOG_S);
	igt_install_exit_handler(level_default);
	level_default(0);
	nfence_queue_create(&q, fd, dev, 0, 0);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0, 0,
				&m);
	v = work_and_signals(&q, &m, h, signals);
	while (!nfence_queue_poll(&q, v, 0)) {
		nfence_logging_level(fd, rounds & 1 ? LEVEL_DEFAULT : LEVEL_ALL,
				     DRM_NFENCE_LOGGING_RECREATE);
		rounds++;
	}
	nfence_logging_level(fd, LEVEL_DEFAULT, 0);
	igt_info("%u recreations while the queue ran\n", rounds);
	igt_assert_lt(0, rounds);
	igt_assert_eq_u32(nfence_queue_state(&q, NULL) & ST_FAULTED, 0);
	cv = nfence_fence_map(fd, &m);
	igt_assert_eq_u64(*cv, signals);
	nfence_fence_unmap(cv);
	/*
	 * The position: every signal once, whatever buffer it went to. From
	 * 0 the read starts at the oldest entry left (an overrun: older
	 * buffers are gone) and ends at the log's position.
	 */
	e = calloc(N_ALL, sizeof(*e));
	igt_assert(e);
	n = read_n(&q, SIGNALS, &cursor, e, N_ALL, &status);
	igt_assert_eq_u64(cursor, signals);
	/* Unless the last recreation came after it: the last signal last. */
	if (n)
		igt_assert_eq_u64(e[n - 1].fence_value, signals);
	free(e);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
}

/*
 * The optimized interrupt across new buffers: the driver's own cursor in
 * the signal log carries on, so a waiter for a logged signal after the
 * logs were recreated (the same level, then ALL) is woken through the
 * queue's log, without an overrun or a scan.
 */
static void test_optimized_recreate(void)
{
	struct nfence_interrupts before, after;
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_logging_level l;
	struct payload_adapter a;
	struct nfence_queue q;
	uint32_t h;
	int efd;

	nfence_watchdog(WATCHDOG_S);
	payload_adapter_require(PAYLOAD_QUEUE, &a);
	h = nfence_fence_create(a.fd, a.dev, DRM_NFENCE_FENCE_TYPE_DEFAULT, 0,
				0, &m);
	nfence_queue_create(&q, a.fd, a.dev, 0, 0);
	logged_signals(&q, &m, h, 1, 3);
	for (uint32_t level = LEVEL_DEFAULT; level <= LEVEL_ALL; level++) {
		l = (struct drm_nfence_logging_level){
			.level = level,
			.flags = DRM_NFENCE_LOGGING_RECREATE,
		};
		igt_assert_eq(__nfence_logging_level(a.fd, &l), 0);
		efd = async_waiter(a.fd, a.dev, h, 10 + level);
		nfence_debugfs_interrupts(a.dir, &before);
		logged_signals(&q, &m, h, 10 + level, 1);
		igt_assert_f(eventfd_fired(efd, WAIT_MS), "waiter not woken\n");
		nfence_debugfs_interrupts(a.dir, &after);
		igt_assert_eq_u64(after.queue_irqs, before.queue_irqs + 1);
		igt_assert_eq_u64(after.log_entries, before.log_entries + 1);
		igt_assert_eq_u64(after.overruns, before.overruns);
		igt_assert_eq_u64(after.scans, before.scans);
		close(efd);
	}
	l = (struct drm_nfence_logging_level){ .level = LEVEL_DEFAULT };
	igt_assert_eq(__nfence_logging_level(a.fd, &l), 0);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(a.fd, h);
	payload_adapter_close(&a);
}

static void test_hwqueue_bad_pad2(void)
{
	struct drm_nfence_hwqueue_create c = { 0 };

	nfence_watchdog(WATCHDOG_S);
	c.device = dev;
	c.context = nfence_context_create(fd, dev, 0);
	c.pad2 = 1;
	igt_assert_eq(__nfence_hwqueue_create(fd, &c), -EINVAL);
	igt_assert_eq_u32(c.handle, 0);
	igt_assert_eq_u64(c.wait_log_gpu_va, 0);
	nfence_context_destroy(fd, dev, c.context);
}

igt_main
{
	igt_fixture {
		fd = nfence_open();
		native = nfence_has_native_fences(fd);
		dev = nfence_device_create(fd);
		dbg = nfence_debugfs_dir(fd);
	}

	igt_describe("Without native fences a queue has no log buffers: "
		     "VAs 0, 0 entries, and LOG_READ fails with -EOPNOTSUPP "
		     "after its -EINVAL checks.");
	igt_subtest("no-logs")
		test_no_logs();

	igt_describe("HWQUEUE_CREATE fails with -EINVAL for a non-zero pad2.");
	igt_subtest("hwqueue-bad-pad2")
		test_hwqueue_bad_pad2();

	igt_subtest_group {
		igt_fixture
			igt_require_f(native, "adapter has no native fences\n");

		igt_describe("Every queue has a wait and a signal log of 84 "
			     "entries at distinct page-aligned GPU VAs; the "
			     "caps give that geometry, max_log_entries the "
			     "size at logging level ALL.");
		igt_subtest("queue-logs")
			test_queue_logs();

		igt_describe("The wait log's header: type WAITS, 84 entries, "
			     "index and wraparound 0, reserved 0; no entries.");
		igt_subtest("header-waits")
			test_header_waits();

		igt_describe("The signal log's header, as the wait log's.");
		igt_subtest("header-signals")
			test_header_signals();

		igt_describe("The GPU reads the logs at their VAs.");
		igt_subtest("gpu-reads-log")
			test_gpu_reads_log();

		igt_describe("A command writing a log faults the context at "
			     "that VA; the log is unchanged.");
		igt_subtest("gpu-write-faults")
			test_gpu_write_faults();

		igt_describe("A destroyed queue's logs are unmapped: reading "
			     "them faults, LOG_READ fails with -ENOENT.");
		igt_subtest("unmapped-on-destroy")
			test_unmapped_on_destroy();

		igt_describe("A destroyed queue's logs fault at once even while "
			     "a submission on the queue, held in its copy "
			     "of the handles by userfaultfd, still holds a "
			     "reference to it.");
		igt_subtest("unmapped-on-destroy-held")
			test_unmapped_on_destroy_held();

		igt_describe("LOG_READ fails with -EINVAL for every flag bit.");
		igt_subtest("read-bad-flags")
			test_read_bad_flags();

		igt_describe("LOG_READ fails with -EINVAL for an unknown log "
			     "type, before the queue lookup.");
		igt_subtest("read-bad-type")
			test_read_bad_type();

		igt_describe("LOG_READ fails with -ENOENT for a device that is "
			     "not the queue's.");
		igt_subtest("read-bad-device")
			test_read_bad_device();

		igt_describe("LOG_READ fails with -ENOENT for a handle that "
			     "names no queue.");
		igt_subtest("read-bad-queue")
			test_read_bad_queue();

		igt_describe("LOG_READ fails with -ENOENT for another file's "
			     "queue.");
		igt_subtest("read-other-file")
			test_read_other_file();

		igt_describe("LOG_READ fails with -EINVAL for a cursor ahead "
			     "of the log.");
		igt_subtest("read-cursor-ahead")
			test_read_cursor_ahead();

		igt_describe("LOG_READ with a NULL or unmapped argument fails "
			     "with -EFAULT.");
		igt_subtest("read-bad-arg-pointer")
			test_read_bad_arg_pointer();

		igt_describe("64 queues on two files: logs for each, freed "
			     "on destroy and on close.");
		igt_subtest("many-queues")
			test_many_queues();

		igt_describe("A logged FENCE_SIGNAL writes one signal log "
			     "entry: value, handle, operation, an end time "
			     "between the TIMESTAMPs around it.");
		igt_subtest("signal-entry")
			test_signal_entry();

		igt_describe("A logged FENCE_WAIT that blocks logs when it "
			     "was first found unresolved and when a CPU signal "
			     "20 ms later released it, nothing before.");
		igt_subtest("wait-entry-blocked")
			test_wait_entry_blocked();

		igt_describe("A logged FENCE_WAIT that passes at once is "
			     "observed when it ends; unlogged commands log "
			     "nothing.");
		igt_subtest("wait-entry-passed")
			test_wait_entry_passed();

		igt_describe("50 logged signals read 7 at a time: in order, "
			     "timestamps never going back.");
		igt_subtest("entries-in-order")
			test_entries_in_order();

		igt_describe("2 x 84 + 5 logged signals: the index wraps "
			     "twice, a reader from 0 gets the last 84 and the "
			     "overrun flag.");
		igt_subtest("wraparound-overrun")
			test_wraparound_overrun();

		igt_describe("LOG_READ with entries to copy to a bad pointer "
			     "fails with -EFAULT and writes nothing back.");
		igt_subtest("read-efault")
			test_read_efault();

		igt_describe("A log payload with the wrong operation, or the "
			     "log flag on another opcode or without its words, "
			     "is refused at submit with -EINVAL.");
		igt_subtest("bad-log-op")
			test_bad_log_op();

		igt_describe("Entries logged before a context fault stay "
			     "readable.");
		igt_subtest("faulted-context-logs")
			test_faulted_context_logs();

		igt_describe("The nfence trace events in tracefs: CPU and GPU "
			     "signals, a blocking and an asynchronous wait "
			     "begin and end, the interrupt that woke the "
			     "waiter, a log entry.");
		igt_subtest("tracepoints")
			test_tracepoints();
	}

	igt_describe("OptimizedNativeFenceSignaledInterrupt is reported by "
		     "exactly the native fence adapters with "
		     "interrupt_payload=2, on every adapter.");
	igt_subtest("optimized-cap")
		test_optimized_cap();

	igt_describe("Optimized interrupt: a logged GPU signal wakes its CPU "
		     "waiter through one interrupt naming the queue, whose "
		     "signal log entry the driver reads; no scan.");
	igt_subtest("optimized-logged-signal")
		optimized_signal(LOGGED);

	igt_describe("Optimized interrupt: an unlogged GPU signal still wakes "
		     "its waiter, through an interrupt without a payload "
		     "(a scan of every fence).");
	igt_subtest("optimized-unlogged-signal")
		optimized_signal(UNLOGGED);

	igt_describe("Optimized interrupt: a signal whose log payload names "
		     "another fence wakes its waiter through a scan.");
	igt_subtest("optimized-wrong-handle")
		optimized_signal(WRONG_HANDLE);

	igt_describe("Optimized interrupt: a signal whose log payload names "
		     "no fence wakes its waiter through a scan.");
	igt_subtest("optimized-no-handle")
		optimized_signal(NO_HANDLE);

	igt_describe("Optimized interrupt: 100 logged signals overrun the "
		     "84-entry log before the one that needs the interrupt, "
		     "which then looks at every fence with waiters and "
		     "still wakes the waiter.");
	igt_subtest("optimized-overrun")
		test_optimized_overrun();

	igt_describe("Optimized interrupt: a CPU waiter on a queue's progress "
		     "fence is woken by the interrupt naming the queue.");
	igt_subtest("optimized-progress-fence")
		test_optimized_progress();

	igt_describe("Optimized interrupt: two queues of one engine released "
		     "in one CMP pass signal fences with waiters; the one "
		     "interrupt names no queue and the driver reads both "
		     "logs.");
	igt_subtest("optimized-engine-wide")
		test_optimized_engine_wide();

	igt_subtest_group {
		igt_fixture
			igt_require_f(native, "adapter has no native fences\n");

		igt_describe("LOGGING_LEVEL fails with -EINVAL for an unknown "
			     "level and writes nothing back.");
		igt_subtest("level-bad-level")
			test_level_bad_level();

		igt_describe("LOGGING_LEVEL fails with -EINVAL for unknown "
			     "flags.");
		igt_subtest("level-bad-flags")
			test_level_bad_flags();

		igt_describe("LOGGING_LEVEL fails with -EINVAL for a non-zero "
			     "pad.");
		igt_subtest("level-bad-pad")
			test_level_bad_pad();

		igt_describe("LOGGING_LEVEL needs CAP_SYS_ADMIN: -EACCES "
			     "before any other check, and nothing changes.");
		igt_subtest("level-not-root")
			test_level_not_root();

		igt_describe("Level ALL gives every queue, and new ones, "
			     "larger logs at new GPU VAs that the GPU reads, "
			     "the old VAs unmapped; DEFAULT gives the 84-entry "
			     "logs back.");
		igt_subtest("level-all")
			test_level_all();

		igt_describe("RECREATE at the same level: new buffers at new "
			     "VAs, the cursor carries on, unread entries are "
			     "an overrun.");
		igt_subtest("level-recreate")
			test_level_recreate();

		igt_describe("Logs recreated again and again while the engine "
			     "logs: every signal counted once, no fault.");
		igt_subtest("level-recreate-running")
			test_level_recreate_running();

		igt_describe("The optimized interrupt reads recreated logs "
			     "from where it was: waiters woken through the "
			     "queue, no overrun, no scan.");
		igt_subtest("optimized-recreate")
			test_optimized_recreate();
	}

	igt_describe("One workload of logged, unlogged and misnamed GPU "
		     "signals and a CPU signal on three adapters with the "
		     "three interrupt payloads: each wakes exactly the "
		     "waiters the fences' values reached, each its own way.");
	igt_subtest("payloads-agree")
		test_payloads_agree();

	igt_fixture {
		nfence_device_destroy(fd, dev);
		close(fd);
	}
}
