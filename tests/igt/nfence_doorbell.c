// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("User-mode submission: DRM_IOCTL_NFENCE_DOORBELL_"
		     "CREATE/CONNECT/DESTROY/NOTIFY, the ring and its "
		     "control, doorbell mappings (dummy page, rotation, "
		     "read-only status), the CMP's watch and its quiet state, "
		     "taking doorbells from the least recently rung ring, "
		     "faults of bad rings, and the rejection of every invalid "
		     "input.");

#define WATCHDOG_S	60
#define RUN_MS		5000
#define QUIET_MS	2000
#define SYSTEM		NFENCE_SEGMENT_SYSTEM
#define VISIBLE		DRM_NFENCE_ALLOC_CPU_VISIBLE
#define Q_UMS		DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION
#define DB_SECONDARY	DRM_NFENCE_DOORBELL_SECONDARY_CPU_VA
#define ST_CONNECTED	DRM_NFENCE_DOORBELL_CONNECTED
#define ST_NOTIFY	DRM_NFENCE_DOORBELL_CONNECTED_NOTIFY_KMD
#define ST_RETRY	DRM_NFENCE_DOORBELL_DISCONNECTED_RETRY
#define ST_ABORT	DRM_NFENCE_DOORBELL_DISCONNECTED_ABORT
#define LEVEL_DEFAULT	DRM_NFENCE_LOGGING_LEVEL_DEFAULT
#define LEVEL_ALL	DRM_NFENCE_LOGGING_LEVEL_ALL
#define PAGE		4096u
#define RING_BYTES	PAGE
#define RING_ENTRIES	(RING_BYTES / sizeof(struct drm_nfence_ring_entry))

static int fd = -1;
static int dbg = -1;
static const char * const debugfs_files[] = {
	"nfence_device_error", "nfence_cmp", "nfence_engine_f1",
	"nfence_f1_hold", "nfence_adapter", "nfence_cmp_reset_max",
};
static bool global_model;
static uint32_t num_doorbells;
static uint32_t num_engines;
#define MAX_ENGINES	8

#define __db_create	__nfence_doorbell_create
#define __db_connect	__nfence_doorbell_connect
#define __db_destroy	__nfence_doorbell_destroy
#define __db_notify	__nfence_doorbell_notify

/* mmap one page at @offset; MAP_FAILED with errno on error */
static void *db_mmap(int f, uint64_t offset, int prot)
{
	return mmap(NULL, PAGE, prot, MAP_SHARED, f, offset);
}

/*
 * A user-mode queue with its ring buffer, ring control and doorbell, and
 * the CPU mappings of the doorbell's pages.
 */
struct uq {
	struct nfence_queue q;
	struct nfence_bo ring;
	struct nfence_bo control;
	uint32_t doorbell;
	uint32_t flags;
	uint64_t doorbell_offset;
	uint64_t status_offset;
	uint64_t last_queued_offset;
	volatile uint64_t *bell;
	volatile uint64_t *secondary;
	const volatile uint64_t *status;
	volatile uint64_t *last_queued;
	uint64_t written;
	/* connects uq_ring() made on DISCONNECTED_RETRY */
	uint64_t reconnects;
	/* uq_ring() connects again at once, never backing off */
	bool no_backoff;
	/* the most tries one uq_ring() took */
	int max_tries;
	/*
	 * The ring faults the queue: uq_ring() ends on DISCONNECTED_ABORT,
	 * which a CMP that takes the ring at once sets before the process
	 * reads the status
	 */
	bool faults;
};

static volatile struct drm_nfence_ring_control *uq_control(struct uq *u)
{
	return (volatile struct drm_nfence_ring_control *)u->control.cpu;
}

static void uq_map(struct uq *u)
{
	void *p;

	p = db_mmap(u->q.fd, u->doorbell_offset, PROT_READ | PROT_WRITE);
	igt_assert(p != MAP_FAILED);
	u->bell = p;
	p = db_mmap(u->q.fd, u->status_offset, PROT_READ);
	igt_assert(p != MAP_FAILED);
	u->status = p;
	p = db_mmap(u->q.fd, u->last_queued_offset, PROT_READ | PROT_WRITE);
	igt_assert(p != MAP_FAILED);
	u->last_queued = p;
	if (u->flags & DB_SECONDARY) {
		/* A second mapping of the doorbell page. */
		p = db_mmap(u->q.fd, u->doorbell_offset,
			    PROT_READ | PROT_WRITE);
		igt_assert(p != MAP_FAILED);
		u->secondary = p;
	}
}

static void uq_unmap(struct uq *u)
{
	if (u->bell)
		munmap((void *)u->bell, PAGE);
	if (u->status)
		munmap((void *)u->status, PAGE);
	if (u->last_queued)
		munmap((void *)u->last_queued, PAGE);
	if (u->secondary)
		munmap((void *)u->secondary, PAGE);
	u->bell = u->secondary = u->last_queued = NULL;
	u->status = NULL;
}

/* The queue, ring and control of a user-mode queue, without a doorbell. */
static void uq_init(struct uq *u, int f, uint32_t device, uint32_t engine)
{
	memset(u, 0, sizeof(*u));
	nfence_queue_create(&u->q, f, device, engine, Q_UMS);
	nfence_bo_create(f, device, RING_BYTES, SYSTEM, VISIBLE, &u->ring);
	nfence_bo_create(f, device, PAGE, SYSTEM, VISIBLE, &u->control);
}

static int __uq_doorbell(struct uq *u, uint32_t flags)
{
	struct drm_nfence_doorbell_create c = {
		.device = u->q.device,
		.hwqueue = u->q.handle,
		.ring_alloc = u->ring.handle,
		.ring_control_alloc = u->control.handle,
		.flags = flags,
	};
	int ret = __db_create(u->q.fd, &c);

	if (ret)
		return ret;
	igt_assert_neq(c.handle, 0);
	u->doorbell = c.handle;
	u->doorbell_offset = c.doorbell_offset;
	u->status_offset = c.status_offset;
	u->last_queued_offset = c.last_queued_offset;
	u->flags = flags;
	uq_map(u);
	return 0;
}

static void uq_create(struct uq *u, int f, uint32_t device, uint32_t engine,
		      uint32_t flags)
{
	uq_init(u, f, device, engine);
	igt_assert_eq(__uq_doorbell(u, flags), 0);
}

static void uq_destroy(struct uq *u)
{
	uq_unmap(u);
	if (u->doorbell)
		__db_destroy(u->q.fd, u->q.device, u->doorbell);
	u->doorbell = 0;
	nfence_bo_destroy(&u->ring);
	nfence_bo_destroy(&u->control);
	nfence_queue_destroy(&u->q);
}

static uint32_t uq_connect(struct uq *u)
{
	struct drm_nfence_doorbell_connect c = {
		.device = u->q.device, .handle = u->doorbell,
	};

	igt_assert_eq(__db_connect(u->q.fd, &c), 0);
	return c.status;
}

static void uq_notify(struct uq *u)
{
	struct drm_nfence_doorbell_notify n = {
		.device = u->q.device, .handle = u->doorbell,
	};

	igt_assert_eq(__db_notify(u->q.fd, &n), 0);
}

/*
 * Write a command buffer that signals the progress fence with the next
 * value into the ring; returns that value. Nothing is rung.
 */
static uint64_t uq_queue(struct uq *u, void (*emit)(struct nfence_cs *cs))
{
	volatile struct drm_nfence_ring_entry *e;
	struct nfence_cs cs;
	uint64_t value;

	/* The ring has room: at most RING_ENTRIES ahead of the engine. */
	uint64_t end = nfence_monotonic_ns() + RUN_MS * 1000000ull;

	while (u->written - uq_control(u)->read_index >= RING_ENTRIES) {
		igt_assert_f(nfence_monotonic_ns() < end, "ring full\n");
		usleep(500);
	}
	nfence_queue_begin(&u->q, &cs);
	if (emit)
		emit(&cs);
	value = ++u->q.submitted;
	nfence_cs_signal_fence(&cs, &u->q.progress_mapping, value);
	u->q.head += (cs.len + 63) & ~63u;

	e = (volatile struct drm_nfence_ring_entry *)u->ring.cpu +
	    u->written % RING_ENTRIES;
	e->commands_gpu_va = cs.gpu_va;
	e->size = cs.len;
	e->flags = 0;
	/* The seed's order: the last queued value, then the ring entry. */
	*u->last_queued = value;
	__sync_synchronize();
	u->written++;
	uq_control(u)->write_index = u->written;
	return value;
}

/* Store the write index to the doorbell; the status read after a barrier. */
static uint64_t uq_ring_at(struct uq *u, volatile uint64_t *bell)
{
	__sync_synchronize();
	*bell = u->written;
	__sync_synchronize();
	return *u->status;
}

/*
 * Ring as the seed's pseudocode does: connect again while the status says
 * DISCONNECTED_RETRY, notify on CONNECTED_NOTIFY_KMD. Two processes that
 * both ring all the time with one physical doorbell can take it from each
 * other between one's connect and its first store (whose page fault waits
 * for the other's connect), in lockstep: after a few tries back off for a
 * random while, longer each time, as a UMD has to (the callers seed rand()
 * per process).
 */
static void uq_ring(struct uq *u)
{
	for (int tries = 0; tries < 1000; tries++) {
		if (tries >= 3 && !u->no_backoff)
			usleep(1 + rand() % (tries * 50));
		uint64_t st = uq_ring_at(u, u->bell);

		if (tries + 1 > u->max_tries)
			u->max_tries = tries + 1;
		if (st == ST_CONNECTED)
			return;
		if (st == ST_NOTIFY) {
			uq_notify(u);
			return;
		}
		if (st == ST_ABORT && u->faults)
			return;
		igt_assert_eq_u64(st, ST_RETRY);
		uq_connect(u);
		u->reconnects++;
	}
	igt_assert_f(false, "doorbell never connected\n");
}

static uint64_t uq_submit(struct uq *u)
{
	uint64_t value = uq_queue(u, NULL);

	uq_ring(u);
	return value;
}

/*
 * The engine stores the read index after an entry's last command, its
 * progress signal included: give it a moment after the progress value.
 */
static void uq_assert_read_index(struct uq *u, uint64_t want)
{
	for (int i = 0; i < 1000 && uq_control(u)->read_index != want; i++)
		usleep(1000);
	igt_assert_eq_u64(uq_control(u)->read_index, want);
}

/* Wait until the CMP has gone quiet: the doorbell says NOTIFY_KMD. */
static void uq_wait_quiet(struct uq *u)
{
	uint64_t end = nfence_monotonic_ns() + QUIET_MS * 1000000ull;

	while (*u->status != ST_NOTIFY && nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_eq_u64(*u->status, ST_NOTIFY);
}

static uint32_t fault_reason(struct uq *u)
{
	struct drm_nfence_context_control out;

	igt_assert(nfence_queue_state(&u->q, &out) &
		   DRM_NFENCE_CONTEXT_STATE_FAULTED);
	return out.fault_reason;
}

/* Basic function */

static void test_create_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t e = 0; e < num_engines; e++) {
		uq_create(&u, fd, dev, e, 0);
		/* A new doorbell is disconnected. */
		igt_assert_eq_u64(*u.status, ST_RETRY);
		igt_assert_eq(__db_destroy(fd, dev, u.doorbell), 0);
		igt_assert_eq(__db_destroy(fd, dev, u.doorbell), -ENOENT);
		/* The mappings stay valid after destroy. */
		igt_assert_eq_u64(*u.status, ST_ABORT);
		*u.bell = 1;
		u.doorbell = 0;
		uq_destroy(&u);
	}
	nfence_device_destroy(fd, dev);
}

static void test_connect_submit(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	igt_assert_eq(uq_connect(&u), ST_CONNECTED);
	/* Connecting a connected doorbell only returns its status. */
	igt_assert_eq(uq_connect(&u), ST_CONNECTED);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_assert_read_index(&u, 1);
	igt_assert_eq_u64(*u.last_queued, value);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void level_default(int sig)
{
	struct drm_nfence_logging_level l = { .level = LEVEL_DEFAULT };

	(void)sig;
	__nfence_logging_level(fd, &l);
}

/* Connect: the status, and the logging level the call returned. */
static uint32_t uq_connect_level(struct uq *u, uint32_t *level)
{
	struct drm_nfence_doorbell_connect c = {
		.device = u->q.device, .handle = u->doorbell,
		.logging_level = 0xdead,
	};

	igt_assert_eq(__db_connect(u->q.fd, &c), 0);
	*level = c.logging_level;
	return c.status;
}

/*
 * The status word read both ways a UMD reads it: as the UINT64 of the
 * D3DKMT contract and of the seed's sample code, and as the UINT32
 * ConnectionStatus of the seed's D3DDDI_DOORBELLSTATUS_STORAGE. The
 * second half of that struct (byte 4) is the UINT64's high half, which
 * stays 0 whatever the logging level, so the UINT64 reading never sees
 * the level; the level is at byte 8.
 */
static void assert_status_both_readings(const struct uq *u, uint64_t want)
{
	volatile const uint32_t *word32 = (volatile const uint32_t *)u->status;

	igt_assert_eq_u64(*u->status, want);
	igt_assert_eq_u32(word32[0], want);
	igt_assert_eq_u32(word32[1], 0);
}

/*
 * The seed's detailed-logging switch: a new logging level disconnects
 * every doorbell (DISCONNECTED_RETRY); a connect returns the new level
 * and writes it in the status page's second word, and work rung after the
 * reconnect runs. The same level again leaves doorbells connected.
 */
static void test_logging_level_reconnect(void)
{
	uint32_t dev = nfence_device_create(fd);
	volatile const uint64_t *level_word;
	uint64_t value;
	uint32_t level;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(nfence_has_native_fences(fd),
		      "no native fences: no logs, no logging level\n");
	igt_install_exit_handler(level_default);
	level_default(0);
	uq_create(&u, fd, dev, 0, 0);
	level_word = u.status + 1;
	igt_assert_eq(uq_connect_level(&u, &level), ST_CONNECTED);
	igt_assert_eq_u32(level, LEVEL_DEFAULT);
	igt_assert_eq_u64(*level_word, LEVEL_DEFAULT);

	igt_assert_eq_u32(nfence_logging_level(fd, LEVEL_ALL, 0),
			  LEVEL_DEFAULT);
	assert_status_both_readings(&u, ST_RETRY);
	igt_assert_eq_u64(*level_word, LEVEL_DEFAULT);	/* until a connect */
	igt_assert_eq(uq_connect_level(&u, &level), ST_CONNECTED);
	igt_assert_eq_u32(level, LEVEL_ALL);
	igt_assert_eq_u64(*level_word, LEVEL_ALL);
	assert_status_both_readings(&u, ST_CONNECTED);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));

	/* The same level, new buffers: doorbells stay connected. */
	nfence_logging_level(fd, LEVEL_ALL, DRM_NFENCE_LOGGING_RECREATE);
	igt_assert_neq_u64(*u.status, ST_RETRY);

	igt_assert_eq_u32(nfence_logging_level(fd, LEVEL_DEFAULT, 0),
			  LEVEL_ALL);
	igt_assert_eq_u64(*u.status, ST_RETRY);
	igt_assert_eq(uq_connect_level(&u, &level), ST_CONNECTED);
	igt_assert_eq_u32(level, LEVEL_DEFAULT);
	igt_assert_eq_u64(*level_word, LEVEL_DEFAULT);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void ring_trace_off(int sig)
{
	const char *dir = nfence_tracefs();

	(void)sig;
	if (dir)
		nfence_trace_events(dir, "nfence_doorbell_ring", false);
}

/* Each ring the CMP takes is an nfence_doorbell_ring trace event. */
static void test_ring_traced(void)
{
	uint32_t dev = nfence_device_create(fd);
	const char *dir = nfence_tracefs();
	uint64_t value;
	struct uq u;
	char *text;

	nfence_watchdog(WATCHDOG_S);
	igt_require_f(dir, "no tracefs with nfence events\n");
	nfence_trace_write(dir, "trace", "");
	nfence_trace_events(dir, "nfence_doorbell_ring", true);
	igt_install_exit_handler(ring_trace_off);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	uq_submit(&u);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	ring_trace_off(0);
	text = nfence_trace_read(dir);
	igt_assert_f(strstr(text, "nfence_doorbell_ring:") &&
		     strstr(text, "write_index=2"),
		     "no ring event:\n%s\n", text);
	free(text);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_every_engine(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t n = num_engines;
	struct uq u[MAX_ENGINES];
	uint64_t value[MAX_ENGINES];

	nfence_watchdog(WATCHDOG_S);
	for (uint32_t e = 0; e < n; e++)
		uq_create(&u[e], fd, dev, e, 0);
	for (uint32_t e = 0; e < n; e++)
		value[e] = uq_submit(&u[e]);
	for (uint32_t e = 0; e < n; e++) {
		igt_assert(nfence_queue_poll(&u[e].q, value[e], RUN_MS));
		uq_destroy(&u[e]);
	}
	nfence_device_destroy(fd, dev);
}

static void test_ring_wrap(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value = 0;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	/* More than twice around the ring, rung in batches. */
	for (unsigned int i = 0; i < 2 * RING_ENTRIES + 10; i++) {
		value = uq_queue(&u, NULL);
		if (i % 7 == 6)
			uq_ring(&u);
	}
	uq_ring(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_assert_read_index(&u, u.written);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_no_control(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_doorbell_create c;
	struct uq u;
	int ret;

	nfence_watchdog(WATCHDOG_S);
	uq_init(&u, fd, dev, 0);
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
	};
	ret = __db_create(fd, &c);
	/* The global model finds write indexes in the controls only. */
	if (global_model) {
		igt_assert_eq(ret, -EINVAL);
	} else {
		uint64_t value;

		igt_assert_eq(ret, 0);
		u.doorbell = c.handle;
		u.doorbell_offset = c.doorbell_offset;
		u.status_offset = c.status_offset;
		u.last_queued_offset = c.last_queued_offset;
		uq_map(&u);
		value = uq_submit(&u);
		igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	}
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Writes to a disconnected doorbell go to its dummy page: nothing runs. */
static void test_dummy_page(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_queue(&u, NULL);
	igt_assert_eq_u64(uq_ring_at(&u, u.bell), ST_RETRY);
	igt_assert_eq_u64(*u.bell, u.written);	/* the dummy page holds it */
	igt_assert(!nfence_queue_poll(&u.q, value, 300));
	/* Connect: the mapping moves to the physical doorbell. */
	igt_assert_eq(uq_connect(&u), ST_CONNECTED);
	/*
	 * Dedicated: the doorbell starts at the last write index taken, so
	 * nothing runs before a ring. Global: the CMP may read the write
	 * index in the control on its own (its last look before going
	 * quiet), so the work may run early.
	 */
	if (!global_model)
		igt_assert(!nfence_queue_poll(&u.q, value, 300));
	uq_ring(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* A thread that keeps storing the write index through one mapping. */
struct ringer {
	pthread_t thread;
	struct uq *u;
	int stop;
	unsigned long stores;
};

static void *ringer_main(void *data)
{
	struct ringer *r = data;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		__sync_synchronize();
		*r->u->bell = r->u->written;
		__atomic_add_fetch(&r->stores, 1, __ATOMIC_RELAXED);
		usleep(200);
	}
	return NULL;
}

/*
 * The rotation seen from a second thread: it stores the write index
 * through the doorbell mapping it already has, again and again. Before the
 * connect its stores land on the dummy page and nothing runs; the connect,
 * made by the main thread, moves that same mapping to the physical
 * doorbell, and the thread's next store rings: the work runs without the
 * main thread ringing or the ringer mapping anything again.
 */
static void test_rotation_other_thread(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct ringer r = { 0 };
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_queue(&u, NULL);
	r.u = &u;
	igt_assert_eq(nfence_thread_create(&r.thread, ringer_main, &r), 0);
	igt_assert(!nfence_queue_poll(&u.q, value, 300));
	igt_assert(__atomic_load_n(&r.stores, __ATOMIC_RELAXED) > 0);
	igt_assert_eq_u64(*u.bell, u.written);	/* on the dummy page */

	igt_assert_eq(uq_connect(&u), ST_CONNECTED);
	igt_assert_f(nfence_queue_poll(&u.q, value, RUN_MS),
		     "the other thread's stores never rang\n");
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	igt_assert_eq(nfence_thread_join(r.thread, 5000), 0);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_secondary(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, DB_SECONDARY);
	uq_connect(&u);
	value = uq_queue(&u, NULL);
	/* A ring through the secondary mapping is a ring. */
	if (uq_ring_at(&u, u.secondary) == ST_NOTIFY)
		uq_notify(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	igt_assert_eq_u64(*u.bell, *u.secondary);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * The quiet protocol: once the CMP stops watching, the status says
 * NOTIFY_KMD and a ring alone is not seen until DOORBELL_NOTIFY.
 */
static void test_quiet_notify(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value, quiets, before, end;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	before = nfence_debugfs_get_u64(dbg, "nfence_cmp", "quiets");
	uq_connect(&u);
	/*
	 * A connect made while the CMP was quiet says NOTIFY_KMD at once,
	 * before the CMP has woken to watch: wait for it to go quiet again
	 * after this connect, not just for the status.
	 */
	end = nfence_monotonic_ns() + QUIET_MS * 1000000ull;
	while ((quiets = nfence_debugfs_get_u64(dbg, "nfence_cmp", "quiets")) ==
	       before && nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_f(quiets > before, "the CMP never went quiet\n");
	uq_wait_quiet(&u);
	value = uq_queue(&u, NULL);
	igt_assert_eq_u64(uq_ring_at(&u, u.bell), ST_NOTIFY);
	igt_assert(!nfence_queue_poll(&u.q, value, 300));
	uq_notify(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	/* Watching again, then quiet again. */
	uq_wait_quiet(&u);
	igt_assert(nfence_debugfs_get_u64(dbg, "nfence_cmp", "quiets") >
		   quiets);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Ring, then quiet, many times: no ring is lost at the edge. */
static void test_quiet_race(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value = 0;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	for (unsigned int i = 0; i < 60; i++) {
		/* Ring around when the CMP goes quiet (after 20 ms). */
		usleep(15000 + (i % 10) * 1000);
		value = uq_submit(&u);
		igt_assert_f(nfence_queue_poll(&u.q, value, RUN_MS),
			     "submission %" PRIu64 " lost\n", value);
	}
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * Global model: another queue's process stores 0 over a ring right after
 * it (the doorbell is one word for every queue). The CMP may have cleared
 * the doorbell without seeing the ring, but its last look before going
 * quiet reads every ring's control: the work runs late, with no notify.
 */
static void test_global_ring_overwritten(void)
{
	uint32_t dev = nfence_device_create(fd);
	unsigned int watched = 0;
	uint64_t value;
	struct uq u, o;

	igt_require_f(global_model, "needs the global doorbell model\n");
	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_create(&o, fd, dev, 0, 0);
	uq_connect(&u);
	uq_connect(&o);
	for (unsigned int i = 0; i < 20; i++) {
		/* A ring of the other queue: the CMP watches for 20 ms. */
		value = uq_submit(&o);
		igt_assert(nfence_queue_poll(&o.q, value, RUN_MS));
		value = uq_queue(&u, NULL);
		if (uq_ring_at(&u, u.bell) == ST_CONNECTED) {
			*o.bell = 0;
			watched++;
		} else {
			/* Quiet already: this round tests nothing more. */
			uq_notify(&u);
		}
		igt_assert_f(nfence_queue_poll(&u.q, value, RUN_MS),
			     "round %u: the ring stored over with 0 never "
			     "ran\n", i);
	}
	igt_info("%u of 20 rings stored over while the CMP watched\n",
		 watched);
	igt_assert_lt(0, watched);
	uq_destroy(&o);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_suspend_resume(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_context_control(fd, dev, u.q.context,
			       DRM_NFENCE_CONTEXT_OP_SUSPEND, NULL);
	value = uq_submit(&u);
	igt_assert(!nfence_queue_poll(&u.q, value, 300));
	/* Suspend keeps the doorbell connected. */
	igt_assert_neq_u64(*u.status, ST_RETRY);
	nfence_context_control(fd, dev, u.q.context,
			       DRM_NFENCE_CONTEXT_OP_RESUME, NULL);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Taking doorbells */

/* One user-mode queue more than the adapter has physical doorbells. */
static struct uq *victim_queues(uint32_t dev, uint32_t *n)
{
	struct uq *u;

	igt_require_f(!global_model, "the global doorbell is never taken\n");
	igt_require_f(num_doorbells <= 64, "too many doorbells to take\n");
	nfence_watchdog(WATCHDOG_S);
	*n = num_doorbells + 1;
	u = calloc(*n, sizeof(*u));
	igt_assert(u);
	for (uint32_t i = 0; i < *n; i++)
		uq_create(&u[i], fd, dev, 0, 0);
	return u;
}

/*
 * One more connected doorbell than the adapter has: the ring rung least
 * recently loses its doorbell, and gets one back by connecting.
 */
static void test_victim(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq *u;
	uint32_t n;

	u = victim_queues(dev, &n);
	for (uint32_t i = 0; i + 1 < n; i++) {
		igt_assert_eq(uq_connect(&u[i]), ST_CONNECTED);
		value = uq_submit(&u[i]);
		igt_assert(nfence_queue_poll(&u[i].q, value, RUN_MS));
	}
	/* u[0] was rung first: the last connect takes its doorbell. */
	igt_assert_eq(uq_connect(&u[n - 1]), ST_CONNECTED);
	igt_assert_eq_u64(*u[0].status, ST_RETRY);
	for (uint32_t i = 1; i < n; i++)
		igt_assert_eq_u64(*u[i].status & ~1ull, ST_CONNECTED);
	/* Its mapping is on its dummy page again: a ring goes nowhere. */
	value = uq_queue(&u[0], NULL);
	igt_assert_eq_u64(uq_ring_at(&u[0], u[0].bell), ST_RETRY);
	igt_assert(!nfence_queue_poll(&u[0].q, value, 300));
	/* The seed's loop reconnects (taking u[1]'s) and its work runs. */
	uq_ring(&u[0]);
	igt_assert(nfence_queue_poll(&u[0].q, value, RUN_MS));
	igt_assert_eq_u64(*u[1].status, ST_RETRY);
	/* And the new owner's ring runs. */
	value = uq_submit(&u[n - 1]);
	igt_assert(nfence_queue_poll(&u[n - 1].q, value, RUN_MS));
	for (uint32_t i = 0; i < n; i++)
		uq_destroy(&u[i]);
	free(u);
	nfence_device_destroy(fd, dev);
}

/*
 * A ring stored just before the doorbell is taken still runs: the CMP
 * looks at the doorbell once more after the victim's mapping moved.
 */
static void test_victim_last_ring(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq *u;
	uint32_t n;

	u = victim_queues(dev, &n);
	for (uint32_t i = 0; i + 1 < n; i++)
		uq_connect(&u[i]);
	/* Suspended, so the ring is taken but cannot run yet. */
	nfence_context_control(fd, dev, u[0].q.context,
			       DRM_NFENCE_CONTEXT_OP_SUSPEND, NULL);
	uq_wait_quiet(&u[0]);
	value = uq_queue(&u[0], NULL);
	/* Quiet: the CMP does not see this ring; no notify either. */
	igt_assert_eq_u64(uq_ring_at(&u[0], u[0].bell), ST_NOTIFY);
	uq_connect(&u[n - 1]);
	igt_assert_eq_u64(*u[0].status, ST_RETRY);
	nfence_context_control(fd, dev, u[0].q.context,
			       DRM_NFENCE_CONTEXT_OP_RESUME, NULL);
	igt_assert(nfence_queue_poll(&u[0].q, value, RUN_MS));
	for (uint32_t i = 0; i < n; i++)
		uq_destroy(&u[i]);
	free(u);
	nfence_device_destroy(fd, dev);
}

/*
 * A physical doorbell taken from one ring for another carries nothing the
 * first process stored past its write index: the page is the next
 * process's as a doorbell register would be, not a channel between them.
 * The page is taken from u[0] by the last connect, as in "victim".
 */
static void test_victim_page_cleared(void)
{
	const unsigned int words = PAGE / sizeof(uint64_t);
	uint32_t dev = nfence_device_create(fd);
	unsigned int i, dirty = 0;
	struct uq *u;
	uint32_t n;

	u = victim_queues(dev, &n);
	for (i = 0; i + 1 < n; i++) {
		igt_assert_eq(uq_connect(&u[i]), ST_CONNECTED);
		if (i == 0)
			for (unsigned int w = 1; w < words; w++)
				u[0].bell[w] = 0x5a5a5a5a00000000ull | w;
		igt_assert(nfence_queue_poll(&u[i].q, uq_submit(&u[i]),
					     RUN_MS));
	}
	igt_assert_eq(uq_connect(&u[n - 1]), ST_CONNECTED);
	igt_assert_eq_u64(*u[0].status, ST_RETRY);
	/* Word 0 is the ring's own write index; the rest reads 0. */
	for (unsigned int w = 1; w < words; w++)
		dirty += u[n - 1].bell[w] != 0;
	igt_assert_f(!dirty, "%u of %u words of the page kept the last "
		     "ring's stores\n", dirty, words - 1);
	/* And the new owner's ring runs. */
	igt_assert(nfence_queue_poll(&u[n - 1].q, uq_submit(&u[n - 1]),
				     RUN_MS));
	for (i = 0; i < n; i++)
		uq_destroy(&u[i]);
	free(u);
	nfence_device_destroy(fd, dev);
}

/*
 * Two processes, each with its own file, queue and doorbell, submit
 * through their doorbells as fast as they can, the seed's loop each time,
 * for 60 s where there is one physical doorbell (every connect takes it
 * from the other process, which reconnects on DISCONNECTED_RETRY) and
 * 10 s elsewhere. Every submission of each runs, in order, and with one
 * doorbell each process did have to reconnect.
 */
static void test_stress_two_processes(void)
{
	unsigned int seconds = num_doorbells == 1 ? 60 : 10;

	nfence_watchdog(seconds + WATCHDOG_S);
	igt_fork(child, 2) {
		int f = nfence_open_adapter(0);
		uint32_t dev = nfence_device_create(f);
		uint64_t end, value = 0;
		struct uq u;

		srand(getpid());
		uq_create(&u, f, dev, child % num_engines, 0);
		end = nfence_monotonic_ns() + seconds * 1000000000ull;
		while (nfence_monotonic_ns() < end) {
			value = uq_submit(&u);
			/* Now and then, all of it ran so far, in order. */
			if (value % 64 == 0)
				igt_assert_f(nfence_queue_poll(&u.q, value,
							       RUN_MS),
					     "child %d: submission %" PRIu64
					     " lost\n", child, value);
		}
		igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
		igt_assert_eq_u64(*u.q.progress, value);
		igt_info("child %d: %" PRIu64 " submissions, %" PRIu64
			 " reconnects\n", child, value, u.reconnects);
		if (num_doorbells == 1 && !global_model)
			igt_assert_f(u.reconnects > 0, "child %d never lost its "
				     "doorbell\n", child);
		uq_destroy(&u);
		nfence_device_destroy(f, dev);
		close(f);
	}
	igt_waitchildren();
}

/*
 * Two processes ring through one physical doorbell as fast as they can and
 * connect again at once when it was taken, never backing off. The kernel
 * keeps a doorbell just connected for its ring until that ring is rung (or
 * a grace of 1 ms has passed), so each connect is followed by the store it
 * was for: every ring gets through in a few tries. Without that grace the
 * two take the doorbell from each other between one's connect and its
 * store, and the rings spin.
 */
static void test_reconnect_no_backoff(void)
{
	const unsigned int seconds = 5;
	const int max_tries = 50;

	igt_require_f(num_doorbells == 1 && !global_model,
		      "needs one dedicated physical doorbell\n");
	nfence_watchdog(seconds + WATCHDOG_S);
	igt_fork(child, 2) {
		int f = nfence_open_adapter(0);
		uint32_t dev = nfence_device_create(f);
		uint64_t end, value = 0;
		struct uq u;

		uq_create(&u, f, dev, child % num_engines, 0);
		u.no_backoff = true;
		end = nfence_monotonic_ns() + seconds * 1000000000ull;
		while (nfence_monotonic_ns() < end)
			value = uq_submit(&u);
		igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
		igt_assert_eq_u64(*u.q.progress, value);
		igt_info("child %d: %" PRIu64 " submissions, %" PRIu64
			 " reconnects, at most %d tries for one ring\n", child,
			 value, u.reconnects, u.max_tries);
		igt_assert_f(u.max_tries <= max_tries, "child %d: a ring took "
			     "%d tries\n", child, u.max_tries);
		/* The doorbell did change hands: the test tested something. */
		igt_assert_f(u.reconnects > 0, "child %d never lost its "
			     "doorbell\n", child);
		uq_destroy(&u);
		nfence_device_destroy(f, dev);
		close(f);
	}
	igt_waitchildren();
}

/*
 * connect-fair: the hostile process's threads, each connecting its own two
 * queues' doorbells in turn (never ringing), and the bounds: of the
 * doorbells other connects bind while one connect waits (the kernel's
 * connect_most_ahead: one per other connecting thread, the hostile's and
 * the victim's), of the tries of one of the victim's rings, and of the
 * victim's submissions completed while the hostile runs.
 */
#define FAIR_SECONDS	5
#define FAIR_THREADS	2
#define FAIR_MAX_AHEAD	FAIR_THREADS
#define FAIR_MAX_TRIES	50
#define FAIR_MIN_DONE	100

/* What the hostile process and the victim share. */
struct fair {
	/* the hostile's connects that bound a doorbell */
	uint64_t binds;
	/* how long the hostile threads connect */
	unsigned int seconds;
	/* hostile threads still connecting */
	uint32_t running;
	/* a hostile connect failed (errno), for the hostile's main thread */
	int error;
};

struct fair_thread {
	pthread_t thread;
	struct fair *fair;
	struct uq u[2];
};

static void *fair_hostile(void *data)
{
	struct fair_thread *t = data;
	uint64_t end = nfence_monotonic_ns() +
		       t->fair->seconds * 1000000000ull;

	for (unsigned int i = 0; nfence_monotonic_ns() < end; i ^= 1) {
		struct uq *u = &t->u[i];
		struct drm_nfence_doorbell_connect c = {
			.device = u->q.device, .handle = u->doorbell,
		};
		bool bound = *u->status == ST_RETRY;
		int ret = __db_connect(u->q.fd, &c);

		if (ret) {
			__atomic_store_n(&t->fair->error, ret, __ATOMIC_SEQ_CST);
			break;
		}
		if (bound)
			__atomic_fetch_add(&t->fair->binds, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_fetch_sub(&t->fair->running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* What the hostile and the other process share, for @seconds of connects. */
static struct fair *fair_map(unsigned int seconds)
{
	struct fair *fair = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	igt_assert(fair != MAP_FAILED);
	fair->running = FAIR_THREADS;
	fair->seconds = seconds;
	return fair;
}

/*
 * The hostile process: FAIR_THREADS threads, each connecting its own two
 * queues' doorbells in turn for fair->seconds, never ringing.
 */
static void fair_hostile_run(struct fair *fair, int f, uint32_t dev)
{
	struct fair_thread t[FAIR_THREADS];

	for (int i = 0; i < FAIR_THREADS; i++) {
		t[i].fair = fair;
		uq_create(&t[i].u[0], f, dev, 0, 0);
		uq_create(&t[i].u[1], f, dev, 0, 0);
	}
	for (int i = 0; i < FAIR_THREADS; i++)
		igt_assert_eq(pthread_create(&t[i].thread, NULL, fair_hostile,
					     &t[i]), 0);
	for (int i = 0; i < FAIR_THREADS; i++)
		pthread_join(t[i].thread, NULL);
	igt_assert_f(!fair->error, "hostile connect: %s\n",
		     strerror(-fair->error));
	igt_info("hostile: %" PRIu64 " doorbells bound in %u s by %d "
		 "threads\n", fair->binds, fair->seconds, FAIR_THREADS);
	for (int i = 0; i < FAIR_THREADS; i++) {
		uq_destroy(&t[i].u[0]);
		uq_destroy(&t[i].u[1]);
	}
}

/*
 * A process that keeps every physical doorbell in its grace: its threads
 * connect their own queues' doorbells in turn as fast as they can, for
 * FAIR_SECONDS, and never ring, so that the last connect's grace
 * (NFENCE_DOORBELL_GRACE_NS) always holds the one doorbell. Meanwhile
 * another process submits through its doorbell, the seed's loop without
 * back-off. Connects that wait are served in the order they came, so
 * while one waits the others bind at most one doorbell each (debugfs
 * connect_most_ahead, counted by the kernel from the connect's first wait
 * to its bind), each ring of the victim takes a few connects, and its
 * work keeps completing. The hostile binds the victim saw during each of
 * its connect calls, counted from userspace, are printed, not asserted:
 * they include what happened before the call waited.
 */
static void test_connect_fair(void)
{
	struct fair *fair;
	uint64_t ahead;

	igt_require_f(num_doorbells == 1 && !global_model,
		      "needs one dedicated physical doorbell\n");
	nfence_watchdog(FAIR_SECONDS + WATCHDOG_S);
	fair = fair_map(FAIR_SECONDS);
	igt_assert_eq(__nfence_debugfs_write(dbg, "nfence_cmp_reset_max", "1"),
		      0);

	igt_fork(child, 2) {
		int f = nfence_open_adapter(0);
		uint32_t dev = nfence_device_create(f);

		if (child == 0) {
			fair_hostile_run(fair, f, dev);
		} else {
			uint64_t value = 0, done = 0, connects = 0, ahead;
			uint64_t max_ahead = 0, before, t0, longest = 0;
			int tries, max_tries = 0;
			struct uq u;

			uq_create(&u, f, dev, 0, 0);
			while (__atomic_load_n(&fair->running, __ATOMIC_SEQ_CST)) {
				value = uq_queue(&u, NULL);
				for (tries = 0;; tries++) {
					uint64_t st = uq_ring_at(&u, u.bell);

					if (st == ST_CONNECTED)
						break;
					if (st == ST_NOTIFY) {
						uq_notify(&u);
						break;
					}
					igt_assert_eq_u64(st, ST_RETRY);
					igt_assert_f(tries < FAIR_MAX_TRIES,
						     "a ring took %d tries\n",
						     tries);
					before = __atomic_load_n(&fair->binds,
								 __ATOMIC_SEQ_CST);
					t0 = nfence_monotonic_ns();
					uq_connect(&u);
					t0 = nfence_monotonic_ns() - t0;
					if (t0 > longest)
						longest = t0;
					ahead = __atomic_load_n(&fair->binds,
								__ATOMIC_SEQ_CST) -
						before;
					if (ahead > max_ahead)
						max_ahead = ahead;
					connects++;
				}
				if (tries + 1 > max_tries)
					max_tries = tries + 1;
				igt_assert(nfence_queue_poll(&u.q, value,
							     RUN_MS));
				if (__atomic_load_n(&fair->running,
						    __ATOMIC_SEQ_CST))
					done++;
			}
			igt_info("victim: %" PRIu64 " submissions completed "
				 "while the hostile ran, %" PRIu64 " connects, "
				 "at most %" PRIu64 " hostile binds during one, "
				 "the longest %.1f ms, at most %d tries for "
				 "one ring\n", done, connects, max_ahead,
				 longest / 1e6, max_tries);
			igt_assert_f(done >= FAIR_MIN_DONE, "the victim "
				     "completed %" PRIu64 " submissions\n",
				     done);
			uq_destroy(&u);
		}
		nfence_device_destroy(f, dev);
		close(f);
	}
	igt_waitchildren();
	munmap(fair, PAGE);
	ahead = nfence_debugfs_get_u64(dbg, "nfence_adapter",
				       "connect_most_ahead");
	igt_info("at most %" PRIu64 " doorbells bound by others while one "
		 "connect waited\n", ahead);
	igt_assert_f(ahead <= FAIR_MAX_AHEAD, "%" PRIu64 " doorbells bound by "
		     "others while one connect waited\n", ahead);
}

/*
 * connect-interrupted: connect-fair's hostile keeps the one doorbell in
 * its grace for INTR_SECONDS, so that connects wait. In another process,
 * one thread's connects are interrupted over and over by SIGUSR1, whose
 * handler has no SA_RESTART, so that an interrupted wait returns -EINTR
 * rather than restarting; another thread keeps connecting. A connect that
 * a signal ends leaves the queue of waiting connects, and if it was the
 * first, the next one goes: if it did not wake the next, that connect and
 * every later one would wait forever (the children are killed at the
 * watchdog and the subtest fails).
 */
#define INTR_SECONDS	3
#define INTR_MIN_BINDS	10

struct intr_thread {
	pthread_t thread;
	const struct fair *fair;
	struct uq u;
	/* one ioctl() call per connect (-EINTR counted), or drmIoctl() */
	bool once;
	uint64_t binds, eintr;
	int error;
};

static void intr_handler(int sig)
{
	(void)sig;
}

static void *intr_connect(void *data)
{
	struct intr_thread *t = data;

	while (__atomic_load_n(&t->fair->running, __ATOMIC_SEQ_CST)) {
		struct drm_nfence_doorbell_connect c = {
			.device = t->u.q.device, .handle = t->u.doorbell,
		};
		bool bound = *t->u.status == ST_RETRY;
		int ret;

		ret = t->once ? __nfence_doorbell_connect_once(t->u.q.fd, &c) :
				__db_connect(t->u.q.fd, &c);
		if (ret == -EINTR && t->once) {
			t->eintr++;
			continue;
		}
		if (ret) {
			t->error = ret;
			break;
		}
		if (bound)
			t->binds++;
	}
	return NULL;
}

static void test_connect_interrupted(void)
{
	struct fair *fair;

	igt_require_f(num_doorbells == 1 && !global_model,
		      "needs one dedicated physical doorbell\n");
	nfence_watchdog(INTR_SECONDS + WATCHDOG_S);
	fair = fair_map(INTR_SECONDS);

	igt_fork(child, 2) {
		int f = nfence_open_adapter(0);
		uint32_t dev = nfence_device_create(f);

		if (child == 0) {
			fair_hostile_run(fair, f, dev);
		} else {
			struct sigaction sa = { .sa_handler = intr_handler };
			struct intr_thread t[2] = {
				{ .fair = fair, .once = true },
				{ .fair = fair },
			};
			uint64_t signals = 0;

			/* No SA_RESTART: an interrupted wait is -EINTR. */
			igt_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
			for (int i = 0; i < 2; i++) {
				uq_create(&t[i].u, f, dev, 0, 0);
				igt_assert_eq(pthread_create(&t[i].thread, NULL,
							     intr_connect,
							     &t[i]), 0);
			}
			while (__atomic_load_n(&fair->running,
					       __ATOMIC_SEQ_CST)) {
				igt_assert_eq(pthread_kill(t[0].thread,
							   SIGUSR1), 0);
				signals++;
				usleep(100);
			}
			for (int i = 0; i < 2; i++)
				pthread_join(t[i].thread, NULL);
			igt_info("interrupted thread: %" PRIu64 " signals, %"
				 PRIu64 " connects ended by one, %" PRIu64
				 " binds; other thread: %" PRIu64 " binds\n",
				 signals, t[0].eintr, t[0].binds, t[1].binds);
			for (int i = 0; i < 2; i++)
				igt_assert_f(!t[i].error, "thread %d: connect: "
					     "%s\n", i, strerror(-t[i].error));
			/* The test tested something. */
			igt_assert_f(t[0].eintr > 0, "no connect was "
				     "interrupted while it waited\n");
			igt_assert_f(t[1].binds >= INTR_MIN_BINDS,
				     "the other thread bound %" PRIu64
				     " times\n", t[1].binds);
			for (int i = 0; i < 2; i++)
				uq_destroy(&t[i].u);
		}
		nfence_device_destroy(f, dev);
		close(f);
	}
	igt_waitchildren_timeout(INTR_SECONDS + 30, "a connect waits forever");
	munmap(fair, PAGE);
}

/* Engine power states */

/* debugfs nfence_engine_f1: put @engine in F1. */
static void engine_f1(unsigned int engine)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", engine);
	igt_assert_eq(__nfence_debugfs_write(dbg, "nfence_engine_f1", buf), 0);
}

static uint64_t cmp_count(const char *key)
{
	return nfence_debugfs_get_u64(dbg, "nfence_cmp", key);
}

/* The doorbells of an engine in F1 are disconnected; a connect brings it
 * back to F0, and the other engines' doorbells are untouched.
 */
static void test_f1_forced(void)
{
	uint32_t dev = nfence_device_create(fd);
	unsigned int n = num_engines > 1 ? 2 : 1;
	uint64_t value, f1s, f0s;
	struct uq u[2];

	nfence_watchdog(WATCHDOG_S);
	for (unsigned int i = 0; i < n; i++) {
		uq_create(&u[i], fd, dev, i, 0);
		value = uq_submit(&u[i]);
		igt_assert(nfence_queue_poll(&u[i].q, value, RUN_MS));
	}
	f1s = cmp_count("f1s");
	f0s = cmp_count("f0s");
	engine_f1(0);
	igt_assert_eq_u64(cmp_count("f1s"), f1s + 1);
	igt_assert_eq_u64(*u[0].status, ST_RETRY);
	if (n > 1)
		igt_assert_eq_u64(*u[1].status & ~1ull, ST_CONNECTED);
	/* Its mapping went back to the dummy page. */
	value = uq_queue(&u[0], NULL);
	igt_assert_eq_u64(uq_ring_at(&u[0], u[0].bell), ST_RETRY);
	igt_assert(!nfence_queue_poll(&u[0].q, value, 300));
	/* F1 again changes nothing. */
	engine_f1(0);
	igt_assert_eq_u64(cmp_count("f1s"), f1s + 1);
	/* The seed's loop connects: back to F0, and the work runs. */
	uq_ring(&u[0]);
	igt_assert(nfence_queue_poll(&u[0].q, value, RUN_MS));
	igt_assert_eq_u64(cmp_count("f0s"), f0s + 1);
	for (unsigned int i = 0; i < n; i++)
		uq_destroy(&u[i]);
	nfence_device_destroy(fd, dev);
}

/* A ring stored before the engine goes to F1 still runs. */
static void test_f1_last_ring(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_context_control(fd, dev, u.q.context,
			       DRM_NFENCE_CONTEXT_OP_SUSPEND, NULL);
	uq_wait_quiet(&u);
	value = uq_queue(&u, NULL);
	igt_assert_eq_u64(uq_ring_at(&u, u.bell), ST_NOTIFY);
	engine_f1(0);
	igt_assert_eq_u64(*u.status, ST_RETRY);
	nfence_context_control(fd, dev, u.q.context,
			       DRM_NFENCE_CONTEXT_OP_RESUME, NULL);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* A kernel-mode submission to an engine in F1 brings it back to F0. */
static void test_f1_kernel_submission(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_queue kq;
	struct nfence_cs cs;
	uint64_t f0s, value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_queue_create(&kq, fd, dev, 0, 0);
	engine_f1(0);
	f0s = cmp_count("f0s");
	nfence_queue_begin(&kq, &cs);
	nfence_cs_nop(&cs);
	value = nfence_queue_submit(&kq, &cs);
	igt_assert(nfence_queue_poll(&kq, value, RUN_MS));
	igt_assert_eq_u64(cmp_count("f0s"), f0s + 1);
	/* The doorbell stays disconnected until connected again. */
	igt_assert_eq_u64(*u.status, ST_RETRY);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	nfence_queue_destroy(&kq);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * With f1_idle_ms, an engine whose doorbells sat idle goes to F1 by
 * itself; without, the doorbells stay connected however long they idle.
 */
static void test_f1_idle(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t idle_ms = nfence_param_get_u64("f1_idle_ms");
	uint64_t value, f1s, end;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	f1s = cmp_count("f1s");
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	if (!idle_ms) {
		uq_wait_quiet(&u);
		usleep(500 * 1000);
		igt_assert_eq_u64(*u.status, ST_NOTIFY);
		igt_assert_eq_u64(cmp_count("f1s"), f1s);
	} else {
		end = nfence_monotonic_ns() +
		      (4 * idle_ms + RUN_MS) * 1000000ull;
		while (*u.status != ST_RETRY && nfence_monotonic_ns() < end)
			usleep(1000);
		igt_assert_eq_u64(*u.status, ST_RETRY);
		igt_assert(cmp_count("f1s") > f1s);
		/* Ringing connects again, which brings the engine back. */
		value = uq_submit(&u);
		igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	}
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* debugfs nfence_f1_hold: "hold", "step" or "release" the F1 work. */
static void f1_hold(const char *what)
{
	int ret = __nfence_debugfs_write(dbg, "nfence_f1_hold", what);

	igt_assert_f(ret == 0, "nfence_f1_hold %s: %s\n", what, strerror(-ret));
}

static void f1_release_on_exit(int sig)
{
	(void)sig;
	__nfence_debugfs_write(dbg, "nfence_f1_hold", "release");
}

/* Until the CMP has asked for F1 and the held F1 work waits. */
static void f1_wait_held(uint64_t idle_ms)
{
	uint64_t end = nfence_monotonic_ns() +
		       (4 * idle_ms + RUN_MS) * 1000000ull;

	while (nfence_debugfs_get_u64(dbg, "nfence_f1_hold", "waiting") != 1) {
		igt_assert_f(nfence_monotonic_ns() < end,
			     "the CMP never asked for F1\n");
		usleep(1000);
	}
}

/* What happens on the engine between the CMP's ask for F1 and the F1. */
enum f1_window {
	F1_WINDOW_CONNECT,
	F1_WINDOW_SUBMISSION,
	F1_WINDOW_RING,
};

static const char * const f1_window_names[] = {
	[F1_WINDOW_CONNECT] = "connect",
	[F1_WINDOW_SUBMISSION] = "submission",
	[F1_WINDOW_RING] = "ring",
};

/*
 * The CMP asks for F1 once an engine with connected doorbells has idled
 * for f1_idle_ms, and the driver's F1 work acts later: here it is held
 * (debugfs nfence_f1_hold) while a doorbell of the engine connects, a
 * kernel-mode submission runs on it or a connected doorbell rings. That
 * cancels the F1: the held run leaves the engine in F0 and its doorbells
 * connected. Once the engine has idled for f1_idle_ms again the CMP asks
 * again, and that F1 goes through.
 */
static void test_f1_window(enum f1_window what)
{
	uint64_t idle_ms = nfence_param_get_u64("f1_idle_ms");
	struct nfence_queue kq;
	uint64_t value, f1s;
	struct nfence_cs cs;
	struct uq u[2];
	uint32_t dev;

	igt_require_f(idle_ms, "needs f1_idle_ms (the f1idle load)\n");
	nfence_watchdog(WATCHDOG_S);
	igt_install_exit_handler(f1_release_on_exit);
	dev = nfence_device_create(fd);
	uq_create(&u[0], fd, dev, 0, 0);
	uq_create(&u[1], fd, dev, 0, 0);
	nfence_queue_create(&kq, fd, dev, 0, 0);
	f1_hold("hold");
	value = uq_submit(&u[0]);
	igt_assert(nfence_queue_poll(&u[0].q, value, RUN_MS));
	f1_wait_held(idle_ms);
	f1s = cmp_count("f1s");
	switch (what) {
	case F1_WINDOW_CONNECT:
		igt_assert_eq(uq_connect(&u[1]), ST_CONNECTED);
		break;
	case F1_WINDOW_SUBMISSION:
		nfence_queue_begin(&kq, &cs);
		nfence_cs_nop(&cs);
		value = nfence_queue_submit(&kq, &cs);
		igt_assert(nfence_queue_poll(&kq, value, RUN_MS));
		break;
	case F1_WINDOW_RING:
		value = uq_submit(&u[0]);
		igt_assert(nfence_queue_poll(&u[0].q, value, RUN_MS));
		break;
	}
	f1_hold("step");
	igt_assert_f(cmp_count("f1s") == f1s, "a %s between the ask and the "
		     "F1 did not cancel it\n", f1_window_names[what]);
	igt_assert_eq_u64(*u[0].status & ~1ull, ST_CONNECTED);
	if (what == F1_WINDOW_CONNECT)
		igt_assert_eq_u64(*u[1].status & ~1ull, ST_CONNECTED);

	/* Idle again: the next ask goes through. */
	f1_wait_held(idle_ms);
	f1_hold("step");
	igt_assert_eq_u64(cmp_count("f1s"), f1s + 1);
	igt_assert_eq_u64(*u[0].status, ST_RETRY);
	f1_hold("release");
	nfence_queue_destroy(&kq);
	uq_destroy(&u[1]);
	uq_destroy(&u[0]);
	nfence_device_destroy(fd, dev);
}

/*
 * The idle CMP reads the doorbells back to back (debugfs nfence_cmp
 * "spins") only after a ring that came soon after the work before it was
 * done (NFENCE_CMP_SPIN_NS), when the next is likely soon too: rings each
 * SPIN_GAP_MS after the last one's work completed, and after the CMP
 * polled the doorbells twice since (the rule counts polls, not time: under
 * TCG a poll may wake milliseconds late), never make it spin, however
 * many, and neither do notifies and connects; rings back to back, each as
 * soon as the last one's work is done, do within SPIN_TRIES.
 */
#define SPIN_GAP_MS	2
#define SPIN_RINGS	50
#define SPIN_TRIES	2000

/*
 * Wait until the CMP has chosen to poll the doorbells twice (debugfs
 * nfence_cmp "polls") since the caller saw its work done. A CMP that went
 * quiet (the doorbell says NOTIFY_KMD: 20 ms without a ring, which a busy
 * host gives) polls no more: a notify makes it watch, and poll, again.
 */
static void spin_gap(struct uq *u)
{
	uint64_t polls = cmp_count("polls");
	uint64_t end = nfence_monotonic_ns() + RUN_MS * 1000000ull;

	usleep(SPIN_GAP_MS * 1000);
	while (cmp_count("polls") < polls + 2) {
		igt_assert_f(nfence_monotonic_ns() < end,
			     "the CMP did not poll twice in %d ms\n", RUN_MS);
		if (*u->status == ST_NOTIFY)
			uq_notify(u);
		usleep(100);
	}
}

static void test_spin_back_to_back(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value, spins, apart, watch;
	unsigned int i;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	spin_gap(&u);
	spins = cmp_count("spins");
	for (i = 0; i < SPIN_RINGS; i++) {
		value = uq_submit(&u);
		igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
		spin_gap(&u);
	}
	apart = cmp_count("spins") - spins;

	/* A notify, or a connect of a connected doorbell, only watches. */
	spins = cmp_count("spins");
	for (i = 0; i < SPIN_RINGS; i++) {
		if (i % 2)
			uq_notify(&u);
		else
			igt_assert_eq_u64(uq_connect(&u) & ~1ull,
					  ST_CONNECTED);
		usleep(SPIN_GAP_MS * 1000);
	}
	watch = cmp_count("spins") - spins;
	igt_assert_f(apart == 0 && watch == 0, "%" PRIu64 " spinning looks "
		     "for %d rings %d ms apart, %" PRIu64 " for as many "
		     "notifies and connects\n", apart, SPIN_RINGS,
		     SPIN_GAP_MS, watch);

	spins = cmp_count("spins");
	for (i = 0; i < SPIN_TRIES && cmp_count("spins") == spins; i++) {
		value = uq_submit(&u);
		while (*u.q.progress < value)
			sched_yield();
	}
	igt_info("back to back, the CMP spun after %u rings\n", i);
	igt_assert_f(i < SPIN_TRIES, "no spin in %d rings back to back\n",
		     SPIN_TRIES);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Adapter power: D3 through runtime PM */

#define D3_DELAY_MS	100
#define D3_WAIT_MS	5000

/* /sys/devices/platform/nfence.N/power of adapter 0, through its node. */
static char power_dir[128];

static void power_dir_init(void)
{
	struct stat st;

	igt_assert_eq(fstat(fd, &st), 0);
	snprintf(power_dir, sizeof(power_dir),
		 "/sys/dev/char/%u:%u/device/power", major(st.st_rdev),
		 minor(st.st_rdev));
}

static void power_path(char *path, size_t size, const char *file)
{
	snprintf(path, size, "%s/%s", power_dir, file);
}

static int __power_write(const char *file, const char *value)
{
	char path[PATH_MAX];

	power_path(path, sizeof(path), file);
	return nfence_sysfs_write(path, value);
}

static bool runtime_status_is(const char *want)
{
	char path[PATH_MAX], buf[32];
	int ret;

	power_path(path, sizeof(path), "runtime_status");
	ret = nfence_sysfs_read(path, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "%s: %s\n", path, strerror(-ret));
	return !strcmp(buf, want);
}

static bool wait_runtime_status(const char *want, unsigned int ms)
{
	uint64_t end = nfence_monotonic_ns() + ms * 1000000ull;

	while (!runtime_status_is(want)) {
		if (nfence_monotonic_ns() >= end)
			return false;
		usleep(2000);
	}
	return true;
}

/* Let the adapter suspend after @delay_ms idle; d3_forbid() undoes it. */
static void d3_allow(unsigned int delay_ms)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", delay_ms);
	igt_assert_eq(__power_write("autosuspend_delay_ms", buf), 0);
	igt_assert_eq(__power_write("control", "auto"), 0);
}

/* The driver's defaults: never suspend (which resumes it), 1 s delay. */
static void d3_forbid(void)
{
	__power_write("control", "on");
	__power_write("autosuspend_delay_ms", "1000");
}

static void d3_forbid_on_exit(int sig __attribute__((unused)))
{
	if (power_dir[0])
		d3_forbid();
}

static void d3_wait_suspended(void)
{
	igt_assert_f(wait_runtime_status("suspended", D3_WAIT_MS),
		     "the idle adapter did not suspend\n");
}

/*
 * The driver's runtime PM defaults, read before this binary's D3 subtests
 * touch them (they come after it, and d3_forbid() puts the same values
 * back): power/control "on", so that the adapter never suspends unless
 * user space allows it (the kernel's own default would be "auto"), and an
 * autosuspend delay of 1000 ms (the kernel's would be 0).
 */
static void test_d3_defaults(void)
{
	char path[PATH_MAX], buf[32];
	int ret;

	power_path(path, sizeof(path), "control");
	ret = nfence_sysfs_read(path, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "%s: %s\n", path, strerror(-ret));
	igt_assert_f(!strcmp(buf, "on"), "control: %s\n", buf);
	power_path(path, sizeof(path), "autosuspend_delay_ms");
	ret = nfence_sysfs_read(path, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "%s: %s\n", path, strerror(-ret));
	igt_assert_f(!strcmp(buf, "1000"), "autosuspend_delay_ms: %s\n", buf);
	igt_assert(runtime_status_is("active"));
}

/*
 * A DOORBELL_NOTIFY on a suspended adapter resumes it: rung work is there
 * to take. The delay is raised to D3_HOLD_MS once in D3 (which leaves the
 * adapter suspended), so that the adapter the notify resumed is still
 * active when read.
 */
#define D3_HOLD_MS	10000

static void test_d3_notify(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t d0s, value;
	char buf[16];
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	d3_allow(D3_DELAY_MS);
	d3_wait_suspended();
	snprintf(buf, sizeof(buf), "%u", D3_HOLD_MS);
	igt_assert_eq(__power_write("autosuspend_delay_ms", buf), 0);
	igt_assert(runtime_status_is("suspended"));
	d0s = cmp_count("d0s");

	uq_notify(&u);
	igt_assert_f(runtime_status_is("active"),
		     "the adapter did not resume for a notify\n");
	igt_assert_eq_u64(cmp_count("d0s"), d0s + 1);
	d3_forbid();
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * An idle adapter allowed to suspend goes to D3: its connected doorbell
 * reads DISCONNECTED_RETRY and its mapping is the dummy page (a ring goes
 * nowhere and wakes nothing); the seed's loop connects, which brings the
 * adapter back to D0, and the work runs.
 */
static void test_d3_doorbell(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value, d3s, d0s;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	igt_assert(runtime_status_is("active"));
	d3s = cmp_count("d3s");
	d0s = cmp_count("d0s");

	d3_allow(D3_DELAY_MS);
	d3_wait_suspended();
	igt_assert_eq_u64(cmp_count("d3s"), d3s + 1);
	igt_assert_eq_u64(*u.status, ST_RETRY);
	value = uq_queue(&u, NULL);
	igt_assert_eq_u64(uq_ring_at(&u, u.bell), ST_RETRY);
	igt_assert(!nfence_queue_poll(&u.q, value, 300));
	igt_assert(runtime_status_is("suspended"));

	uq_ring(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	igt_assert(cmp_count("d0s") > d0s);
	d3_forbid();
	igt_assert(runtime_status_is("active"));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * A ring stored while the CMP is quiet, its NOTIFY not yet called, when
 * the adapter goes to D3: the transition's last look at the doorbells
 * finds it, the transition is undone, and the work runs without the
 * notify.
 */
static void test_d3_last_ring(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value, d3s;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	uq_wait_quiet(&u);
	value = uq_queue(&u, NULL);
	igt_assert_eq_u64(uq_ring_at(&u, u.bell), ST_NOTIFY);
	igt_assert(!nfence_queue_poll(&u.q, value, 100));
	d3s = cmp_count("d3s");

	d3_allow(20);
	igt_assert_f(nfence_queue_poll(&u.q, value, RUN_MS),
		     "the ring the D3 transition found did not run\n");
	igt_assert_eq_u64(*u.status, ST_RETRY);
	/* Then the idle adapter does go to D3. */
	d3_wait_suspended();
	igt_assert(cmp_count("d3s") > d3s);
	d3_forbid();
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* A kernel-mode submission wakes a suspended adapter and runs. */
static void test_d3_kernel_submission(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_queue kq;
	struct nfence_cs cs;
	uint64_t value, d0s;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&kq, fd, dev, 0, 0);
	d3_allow(D3_DELAY_MS);
	d3_wait_suspended();
	d0s = cmp_count("d0s");
	nfence_queue_begin(&kq, &cs);
	nfence_cs_nop(&cs);
	value = nfence_queue_submit(&kq, &cs);
	igt_assert(nfence_queue_poll(&kq, value, RUN_MS));
	igt_assert(cmp_count("d0s") > d0s);
	d3_forbid();
	nfence_queue_destroy(&kq);
	nfence_device_destroy(fd, dev);
}

/*
 * An adapter with work running does not suspend, however short the
 * delay; it does once the work is done.
 */
static void test_d3_busy(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct nfence_queue kq;
	struct nfence_cs cs;
	uint64_t value;

	nfence_watchdog(WATCHDOG_S);
	nfence_queue_create(&kq, fd, dev, 0, 0);
	d3_allow(20);
	nfence_queue_begin(&kq, &cs);
	nfence_cs_work(&cs, 1000 * 1000000ull);
	value = nfence_queue_submit(&kq, &cs);
	usleep(500 * 1000);
	igt_assert(!nfence_queue_poll(&kq, value, 0));
	igt_assert(runtime_status_is("active"));
	igt_assert(nfence_queue_poll(&kq, value, RUN_MS));
	d3_wait_suspended();
	d3_forbid();
	nfence_queue_destroy(&kq);
	nfence_device_destroy(fd, dev);
}

/*
 * Submissions through the doorbell, the seed's loop each time, at random
 * intervals around the moment the adapter suspends: none is lost (a ring
 * that lands as the doorbells are disconnected is found by the last look,
 * and the suspend is undone), and the adapter did go to D3 in between.
 */
static void test_d3_ring_race(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint64_t value, d3s;
	struct uq u;

	nfence_watchdog(WATCHDOG_S * 2);
	srand(7);
	uq_create(&u, fd, dev, 0, 0);
	d3s = cmp_count("d3s");
	d3_allow(10);
	for (int i = 0; i < 60; i++) {
		value = uq_submit(&u);
		igt_assert_f(nfence_queue_poll(&u.q, value, RUN_MS),
			     "submission %d lost\n", i);
		usleep((rand() % 80) * 1000);
	}
	igt_assert_f(cmp_count("d3s") > d3s, "the adapter never suspended\n");
	d3_forbid();
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Faults */

static void emit_bad_command(struct nfence_cs *cs)
{
	nfence_cs_raw(cs, DRM_NFENCE_CS_HEADER(0x7f, 2), 0, NULL, 0);
}

static void expect_abort(struct uq *u, uint32_t reason)
{
	struct drm_nfence_doorbell_connect c = {
		.device = u->q.device, .handle = u->doorbell,
	};
	uint64_t end = nfence_monotonic_ns() + RUN_MS * 1000000ull;

	while (*u->status != ST_ABORT && nfence_monotonic_ns() < end)
		usleep(1000);
	igt_assert_eq_u64(*u->status, ST_ABORT);
	igt_assert_eq(fault_reason(u), reason);
	/* The progress fence is AlwaysSignaled, connecting fails. */
	igt_assert(nfence_queue_poll(&u->q, NFENCE_ALWAYS_SIGNALED, RUN_MS));
	igt_assert_eq(__db_connect(u->q.fd, &c), -EIO);
}

static void test_fault_bad_command(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	u.faults = true;
	uq_queue(&u, emit_bad_command);
	uq_ring(&u);
	expect_abort(&u, DRM_NFENCE_FAULT_BAD_COMMAND);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_fault_bad_entry(void)
{
	uint32_t dev = nfence_device_create(fd);
	volatile struct drm_nfence_ring_entry *e;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	u.faults = true;
	uq_queue(&u, NULL);
	e = (volatile struct drm_nfence_ring_entry *)u.ring.cpu;
	e->flags = 1;
	uq_ring(&u);
	expect_abort(&u, DRM_NFENCE_FAULT_BAD_RING);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_fault_bad_index(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	u.faults = true;
	/* A write index more than the ring's entries ahead. */
	u.written = RING_ENTRIES + 1;
	uq_control(&u)->write_index = u.written;
	uq_ring(&u);
	expect_abort(&u, DRM_NFENCE_FAULT_BAD_RING);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_fault_ring_unmapped(void)
{
	uint32_t dev = nfence_device_create(fd);
	volatile struct drm_nfence_ring_entry *e;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	u.faults = true;
	uq_queue(&u, NULL);
	e = (volatile struct drm_nfence_ring_entry *)u.ring.cpu;
	e->commands_gpu_va = 1ull << 39;	/* nothing is mapped there */
	uq_ring(&u);
	expect_abort(&u, DRM_NFENCE_FAULT_PAGE);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_device_error(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_device_error(fd, dev);
	igt_assert_eq_u64(*u.status, ST_ABORT);
	igt_assert(nfence_queue_poll(&u.q, NFENCE_ALWAYS_SIGNALED, RUN_MS));
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/* Lifetimes */

static void test_alloc_pinned(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.ring.handle),
		      -EBUSY);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.control.handle),
		      -EBUSY);
	igt_assert_eq(__db_destroy(fd, dev, u.doorbell), 0);
	u.doorbell = 0;
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.ring.handle), 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.control.handle),
		      0);
	u.ring.handle = 0;
	u.control.handle = 0;
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_queue_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_hwqueue_destroy(fd, dev, u.q.handle);
	/* The queue's doorbell went with it, and its pins. */
	igt_assert_eq(__db_destroy(fd, dev, u.doorbell), -ENOENT);
	igt_assert_eq_u64(*u.status, ST_ABORT);
	*u.bell = 7;	/* the dummy page */
	u.doorbell = 0;
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.ring.handle), 0);
	u.ring.handle = 0;
	u.q.handle = 0;
	uq_unmap(&u);
	nfence_bo_destroy(&u.control);
	nfence_queue_forget(&u.q);
	nfence_context_destroy(fd, dev, u.q.context);
	nfence_device_destroy(fd, dev);
}

/*
 * Destroying the context destroys its queue and so the queue's doorbell
 * and its pins (Documentation/gpu-work.rst, "User-mode submission").
 */
static void test_context_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	nfence_context_destroy(fd, dev, u.q.context);
	igt_assert_eq(__nfence_hwqueue_destroy_handle(fd, dev, u.q.handle),
		      -ENOENT);
	igt_assert_eq(__db_destroy(fd, dev, u.doorbell), -ENOENT);
	igt_assert_eq_u64(*u.status, ST_ABORT);
	u.doorbell = 0;
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev, u.ring.handle), 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, dev,
						    u.control.handle), 0);
	u.ring.handle = 0;
	u.control.handle = 0;
	u.q.handle = 0;
	uq_unmap(&u);
	nfence_bo_unmap(&u.ring);
	nfence_bo_unmap(&u.control);
	nfence_queue_forget(&u.q);
	nfence_device_destroy(fd, dev);
}

static void test_device_destroy(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	uq_connect(&u);
	uq_submit(&u);
	nfence_device_destroy(fd, dev);
	igt_assert_eq_u64(*u.status, ST_ABORT);
	uq_unmap(&u);
	nfence_bo_unmap(&u.ring);
	nfence_bo_unmap(&u.control);
	nfence_queue_forget(&u.q);
}

static void test_close_mapped(void)
{
	int f = nfence_open();
	uint32_t dev = nfence_device_create(f);
	uint64_t value;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, f, dev, 0, DB_SECONDARY);
	uq_connect(&u);
	value = uq_submit(&u);
	igt_assert(nfence_queue_poll(&u.q, value, RUN_MS));
	/*
	 * Close with every mapping alive: the mappings keep the file, and so
	 * the doorbell, alive until the last munmap. (Seen once, in the
	 * doorbells1 load on 6.1: the status read RETRY here; unexplained,
	 * see issue 10's note: it is reported, not asserted, until understood.)
	 */
	close(f);
	igt_assert_neq_u64(*u.status, ST_ABORT);
	if (*u.status == ST_RETRY)
		igt_info("close-mapped: status RETRY after close\n");
	/* Rings of the index already taken: no new work, no fault. */
	*u.bell = u.written;
	*u.secondary = u.written;
	igt_assert_neq_u64(*u.status, ST_ABORT);
	uq_unmap(&u);
	nfence_bo_unmap(&u.ring);
	nfence_bo_unmap(&u.control);
	nfence_queue_forget(&u.q);
}

/* Kernel-mode submission to a user-mode queue */

static void test_no_kernel_submission(void)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t fence = nfence_fence_create(fd, dev, 0, 0, 0, NULL);
	struct nfence_cs cs;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	nfence_queue_begin(&u.q, &cs);
	nfence_cs_nop(&cs);
	igt_assert_eq(__nfence_queue_submit(&u.q, &cs), -EINVAL);
	igt_assert_eq(__nfence_queue_submit_wait(&u.q, fence, 1), -EINVAL);
	igt_assert_eq(__nfence_queue_submit_signal(&u.q, fence, 1), -EINVAL);
	uq_destroy(&u);
	nfence_fence_destroy(fd, fence);
	nfence_device_destroy(fd, dev);
}

/* Invalid input, each with everything else valid */

enum db_bad {
	DB_BAD_ZERO,
	DB_BAD_UNKNOWN,
	DB_BAD_DESTROYED,
	DB_BAD_OTHER_DEVICE,
	DB_BAD_COUNT,
};

static const char * const db_bad_names[] = {
	"zero", "unknown", "destroyed", "other-device",
};

static void test_create_bad_flags(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_doorbell_create c;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_init(&u, fd, dev, 0);
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	for (unsigned int bit = 2; bit < 32; bit++) {
		c.flags = 1u << bit;
		igt_assert_eq(__db_create(fd, &c), -EINVAL);
	}
	c.flags = DRM_NFENCE_DOORBELL_RESIZE_RING;
	igt_assert_eq(__db_create(fd, &c), -EOPNOTSUPP);
	c.flags = 0;
	igt_assert_eq(__db_create(fd, &c), 0);
	u.doorbell = c.handle;
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_create_bad_device(enum nfence_bad bad)
{
	struct drm_nfence_doorbell_create c;
	struct nfence_env env;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	uq_init(&u, fd, env.dev, 0);
	c = (struct drm_nfence_doorbell_create) {
		.hwqueue = u.q.handle, .ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	c.device = nfence_bad_device(&env, bad);
	igt_assert_eq(__db_create(fd, &c), -ENOENT);
	c.device = env.dev;
	igt_assert_eq(__db_create(fd, &c), 0);
	u.doorbell = c.handle;
	uq_destroy(&u);
	nfence_env_fini(&env);
}

static void test_create_bad_handle(enum nfence_bad bad, int which)
{
	struct drm_nfence_doorbell_create c, ok;
	struct nfence_env env;
	uint32_t *field;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	uq_init(&u, fd, env.dev, 0);
	ok = (struct drm_nfence_doorbell_create) {
		.device = env.dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	c = ok;
	if (which == 0) {
		field = &c.hwqueue;
		*field = nfence_bad_handle(&env, NFENCE_KIND_HWQUEUE, bad,
					   &u.q.handle, 1);
	} else {
		const uint32_t live[] = { u.ring.handle, u.control.handle,
					  u.q.cmds.handle };

		field = which == 1 ? &c.ring_alloc : &c.ring_control_alloc;
		*field = nfence_bad_handle(&env, NFENCE_KIND_ALLOC, bad, live,
					   ARRAY_SIZE(live));
	}
	if (which == 2 && bad == NFENCE_BAD_ZERO) {
		/* 0 is "no control": valid but in the global model. */
		if (global_model) {
			igt_assert_eq(__db_create(fd, &c), -EINVAL);
		} else {
			igt_assert_eq(__db_create(fd, &c), 0);
			igt_assert_eq(__db_destroy(fd, env.dev, c.handle), 0);
		}
	} else {
		igt_assert_eq(__db_create(fd, &c), -ENOENT);
	}
	/* Nothing was pinned by the failed calls. */
	c = ok;
	igt_assert_eq(__db_create(fd, &c), 0);
	igt_assert_eq(__db_destroy(fd, env.dev, c.handle), 0);
	igt_assert_eq(__nfence_alloc_destroy_handle(fd, env.dev,
						    u.ring.handle), 0);
	u.ring.handle = 0;
	uq_destroy(&u);
	nfence_env_fini(&env);
}

static void test_create_kernel_queue(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_doorbell_create c;
	struct nfence_queue q;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_init(&u, fd, dev, 0);
	nfence_queue_create(&q, fd, dev, 0, 0);
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	igt_assert_eq(__db_create(fd, &c), -EINVAL);
	c.hwqueue = u.q.handle;
	igt_assert_eq(__db_create(fd, &c), 0);
	u.doorbell = c.handle;
	/* One doorbell per queue. */
	igt_assert_eq(__db_create(fd, &c), -EBUSY);
	nfence_queue_destroy(&q);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_create_small_allocs(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_doorbell_create c;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_init(&u, fd, dev, 0);
	/* Allocation sizes are whole pages: both are large enough. */
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	igt_assert_eq(__db_create(fd, &c), 0);
	u.doorbell = c.handle;
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

static void test_create_device_error(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_doorbell_create c;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_init(&u, fd, dev, 0);
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	nfence_device_error(fd, dev);
	igt_assert_eq(__db_create(fd, &c), -EIO);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

/*
 * A queue whose context faulted (through a sibling queue's ring) on a
 * device that is not in error: DOORBELL_CREATE refuses to attach a ring
 * to the stopped queue (its own check, not the device's).
 */
static void test_create_context_faulted(void)
{
	uint32_t dev = nfence_device_create(fd);
	struct drm_nfence_device_control dc;
	struct drm_nfence_doorbell_create c;
	struct uq bad, u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&bad, fd, dev, 0, 0);
	memset(&u, 0, sizeof(u));
	nfence_queue_create_on(&u.q, fd, dev, bad.q.context, Q_UMS);
	nfence_bo_create(fd, dev, RING_BYTES, SYSTEM, VISIBLE, &u.ring);
	nfence_bo_create(fd, dev, PAGE, SYSTEM, VISIBLE, &u.control);
	bad.faults = true;
	uq_queue(&bad, emit_bad_command);
	uq_ring(&bad);
	expect_abort(&bad, DRM_NFENCE_FAULT_BAD_COMMAND);
	/* The sibling is stopped with its context; the device is not. */
	igt_assert(nfence_queue_poll(&u.q, NFENCE_ALWAYS_SIGNALED, RUN_MS));
	nfence_device_control(fd, dev, DRM_NFENCE_DEVICE_OP_QUERY, &dc);
	igt_assert_eq_u32(dc.error, DRM_NFENCE_DEVICE_ERROR_NONE);
	igt_assert_eq_u32(dc.fault_reason, DRM_NFENCE_FAULT_BAD_COMMAND);
	igt_assert_eq_u32(dc.fault_context, bad.q.context);
	c = (struct drm_nfence_doorbell_create) {
		.device = dev, .hwqueue = u.q.handle,
		.ring_alloc = u.ring.handle,
		.ring_control_alloc = u.control.handle,
	};
	igt_assert_eq(__db_create(fd, &c), -EIO);
	uq_destroy(&u);
	uq_destroy(&bad);
	nfence_device_destroy(fd, dev);
}

/* A doorbell handle that is invalid in one way, for @dev of @u. */
static uint32_t db_bad_handle(struct uq *u, uint32_t dev2, enum db_bad bad)
{
	struct uq other;
	uint32_t h;

	switch (bad) {
	case DB_BAD_ZERO:
		return 0;
	case DB_BAD_UNKNOWN:
		return UINT32_MAX;
	case DB_BAD_DESTROYED:
		uq_create(&other, u->q.fd, u->q.device, 0, 0);
		h = other.doorbell;
		uq_destroy(&other);
		return h;
	default:
		/* A live doorbell of another device of the file. */
		uq_create(&other, u->q.fd, dev2, 0, 0);
		h = other.doorbell;
		uq_unmap(&other);
		return h;
	}
}

static void test_connect_bad(enum db_bad bad)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t dev2 = nfence_device_create(fd);
	struct drm_nfence_doorbell_connect c;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	c = (struct drm_nfence_doorbell_connect) {
		.device = dev, .handle = db_bad_handle(&u, dev2, bad),
	};
	igt_assert_eq(__db_connect(fd, &c), -ENOENT);
	c.handle = u.doorbell;
	c.flags = 1;
	igt_assert_eq(__db_connect(fd, &c), -EINVAL);
	c.flags = 0;
	c.pad = 1;
	igt_assert_eq(__db_connect(fd, &c), -EINVAL);
	c.pad = 0;
	igt_assert_eq(__db_connect(fd, &c), 0);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev2);
	nfence_device_destroy(fd, dev);
}

static void test_destroy_bad(enum db_bad bad)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t dev2 = nfence_device_create(fd);
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	igt_assert_eq(__db_destroy(fd, dev, db_bad_handle(&u, dev2, bad)),
		      -ENOENT);
	igt_assert_eq(__db_destroy(fd, dev, u.doorbell), 0);
	u.doorbell = 0;
	uq_destroy(&u);
	nfence_device_destroy(fd, dev2);
	nfence_device_destroy(fd, dev);
}

static void test_notify_bad(enum db_bad bad)
{
	uint32_t dev = nfence_device_create(fd);
	uint32_t dev2 = nfence_device_create(fd);
	struct drm_nfence_doorbell_notify n;
	struct uq u;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	n = (struct drm_nfence_doorbell_notify) {
		.device = dev, .handle = db_bad_handle(&u, dev2, bad),
	};
	igt_assert_eq(__db_notify(fd, &n), -ENOENT);
	n.handle = u.doorbell;
	n.flags = 1;
	igt_assert_eq(__db_notify(fd, &n), -EINVAL);
	n.flags = 0;
	n.pad = 1;
	igt_assert_eq(__db_notify(fd, &n), -EINVAL);
	n.pad = 0;
	igt_assert_eq(__db_notify(fd, &n), 0);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev2);
	nfence_device_destroy(fd, dev);
}

static void test_bad_arg_pointer(void)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_DOORBELL_CREATE,
		DRM_IOCTL_NFENCE_DOORBELL_CONNECT,
		DRM_IOCTL_NFENCE_DOORBELL_DESTROY,
		DRM_IOCTL_NFENCE_DOORBELL_NOTIFY,
	};

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

static void test_mmap_rules(void)
{
	uint32_t dev = nfence_device_create(fd);
	int f2 = nfence_open();
	struct uq u;
	void *p;

	nfence_watchdog(WATCHDOG_S);
	uq_create(&u, fd, dev, 0, 0);
	/* The status is read-only, now and later. */
	p = db_mmap(fd, u.status_offset, PROT_READ | PROT_WRITE);
	igt_assert(p == MAP_FAILED && errno == EPERM);
	igt_assert_neq(mprotect((void *)u.status, PAGE,
				PROT_READ | PROT_WRITE), 0);
	/* Shared mappings only: a private one has nothing to copy. */
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, u.doorbell_offset);
	igt_assert(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, u.status_offset);
	igt_assert(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 u.last_queued_offset);
	igt_assert(p == MAP_FAILED && errno == EINVAL);
	/* One page per mapping. */
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, u.doorbell_offset);
	igt_assert(p == MAP_FAILED);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd,
		 u.last_queued_offset);
	igt_assert(p == MAP_FAILED);
	/* Three distinct objects. */
	igt_assert_neq_u64(u.doorbell_offset, u.status_offset);
	igt_assert_neq_u64(u.doorbell_offset, u.last_queued_offset);
	igt_assert_neq_u64(u.status_offset, u.last_queued_offset);
	/* Another open file of the adapter may map none of them. */
	p = db_mmap(f2, u.doorbell_offset, PROT_READ | PROT_WRITE);
	igt_assert(p == MAP_FAILED && errno == EACCES);
	p = db_mmap(f2, u.status_offset, PROT_READ);
	igt_assert(p == MAP_FAILED && errno == EACCES);
	p = db_mmap(f2, u.last_queued_offset, PROT_READ);
	igt_assert(p == MAP_FAILED && errno == EACCES);
	close(f2);
	/* After destroy no new mapping can be made; the old ones stay. */
	igt_assert_eq(__db_destroy(fd, dev, u.doorbell), 0);
	u.doorbell = 0;
	p = db_mmap(fd, u.doorbell_offset, PROT_READ);
	igt_assert(p == MAP_FAILED);
	igt_assert_eq_u64(*u.status, ST_ABORT);
	uq_destroy(&u);
	nfence_device_destroy(fd, dev);
}

igt_main
{
	static const enum nfence_bad bad_devices[] = {
		NFENCE_BAD_ZERO, NFENCE_BAD_UNKNOWN, NFENCE_BAD_DESTROYED,
		NFENCE_BAD_OTHER_FD, NFENCE_BAD_WRONG_KIND,
	};
	static const enum nfence_bad bad_handles[] = {
		NFENCE_BAD_ZERO, NFENCE_BAD_UNKNOWN, NFENCE_BAD_DESTROYED,
		NFENCE_BAD_OTHER_DEVICE, NFENCE_BAD_OTHER_FD,
		NFENCE_BAD_WRONG_KIND,
	};
	static const char * const handle_fields[] = {
		"hwqueue", "ring", "control",
	};
	struct drm_nfence_query_adapter adapter;

	igt_fixture {
		struct drm_nfence_query_engines *engines;
		uint32_t size;

		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		num_engines = adapter.num_engines;
		igt_require_f(adapter.flags &
			      DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION,
			      "no user-mode submission on this adapter\n");
		engines = nfence_query_alloc(fd, DRM_NFENCE_QUERY_ENGINES,
					     &size);
		for (uint32_t e = 0; e < engines->num_engines; e++)
			igt_require(engines->engines[e].flags &
				    DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION);
		free(engines);
		global_model = nfence_param_get_u64("doorbell_model") ==
			       DRM_NFENCE_DOORBELL_GLOBAL;
		num_doorbells = nfence_param_get_u64("num_doorbells");
		dbg = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
		power_dir_init();
		igt_install_exit_handler(d3_forbid_on_exit);
	}

	igt_describe("A doorbell on a queue of every engine starts "
		     "DISCONNECTED_RETRY; destroy leaves its mappings valid, "
		     "ABORT.");
	igt_subtest("create-destroy")
		test_create_destroy();

	igt_describe("Connect, write a ring entry, ring: the command buffer "
		     "runs, the read index and the last queued value follow.");
	igt_subtest("connect-submit")
		test_connect_submit();

	igt_describe("A new logging level disconnects every doorbell; the "
		     "connect returns the level and writes it in the status "
		     "page, and work rung after it runs.");
	igt_subtest("logging-level-reconnect")
		test_logging_level_reconnect();

	igt_describe("The CMP's taking of a ring shows as an "
		     "nfence_doorbell_ring trace event with its write index.");
	igt_subtest("ring-traced")
		test_ring_traced();

	igt_describe("A user-mode queue on every engine, all rung at once.");
	igt_subtest("every-engine")
		test_every_engine();

	igt_describe("More than twice around the ring, rung in batches.");
	igt_subtest("ring-wrap")
		test_ring_wrap();

	igt_describe("Without a ring control: the doorbell alone carries the "
		     "write index (dedicated), -EINVAL (global).");
	igt_subtest("no-control")
		test_no_control();

	igt_describe("A ring of a disconnected doorbell lands on its dummy "
		     "page and runs nothing; after connect the same mapping "
		     "reaches the physical doorbell.");
	igt_subtest("dummy-page")
		test_dummy_page();

	igt_describe("A second thread storing through the mapping it has "
		     "rings once the main thread connects: the connect moved "
		     "that mapping.");
	igt_subtest("rotation-other-thread")
		test_rotation_other_thread();

	igt_describe("With RequireSecondaryCpuVA a second mapping of the "
		     "doorbell rings it too.");
	igt_subtest("secondary-mapping")
		test_secondary();

	igt_describe("After its watch the CMP goes quiet: the status says "
		     "CONNECTED_NOTIFY_KMD, a ring alone is not seen, NOTIFY "
		     "makes it run.");
	igt_subtest("quiet-notify")
		test_quiet_notify();

	igt_describe("Rings around the moment the CMP goes quiet, following "
		     "the status protocol: none is lost.");
	igt_subtest("quiet-race")
		test_quiet_race();

	igt_describe("Global model: a ring another queue stores 0 over "
		     "right after runs anyway (the CMP's last look reads "
		     "every control), without a notify.");
	igt_subtest("global-ring-overwritten")
		test_global_ring_overwritten();

	igt_describe("A suspended context keeps its doorbell; its rung work "
		     "runs after resume.");
	igt_subtest("suspend-resume")
		test_suspend_resume();

	igt_describe("One doorbell more than the adapter has: the least "
		     "recently rung ring loses its doorbell (RETRY, dummy "
		     "page) and reconnects without losing work.");
	igt_subtest("victim")
		test_victim();

	igt_describe("A ring stored before the doorbell is taken still runs.");
	igt_subtest("victim-last-ring")
		test_victim_last_ring();

	igt_describe("A doorbell taken for another ring reads 0 past its "
		     "write index: nothing the last process stored there "
		     "reaches the next.");
	igt_subtest("victim-page-cleared")
		test_victim_page_cleared();

	igt_describe("Two processes submit through their doorbells for 60 s "
		     "(one physical doorbell: each connect takes it from the "
		     "other) or 10 s (elsewhere): nothing is lost.");
	igt_subtest("stress-two-processes")
		test_stress_two_processes();

	igt_describe("With one physical doorbell, two processes that ring "
		     "all the time for 5 s and reconnect at once without "
		     "backing off get every ring through in at most 50 tries: "
		     "a doorbell just connected is kept for its ring.");
	igt_subtest("reconnect-no-backoff")
		test_reconnect_no_backoff();

	igt_describe("With one physical doorbell, a process whose threads "
		     "connect their own doorbells in turn without ringing "
		     "does not starve another process's connects: connects "
		     "that wait are served in order.");
	igt_subtest("connect-fair")
		test_connect_fair();

	igt_describe("With one physical doorbell kept in its grace, connects "
		     "interrupted by a signal while they wait (-EINTR) leave "
		     "the queue and let the next connect go: another "
		     "thread's connects keep binding.");
	igt_subtest("connect-interrupted")
		test_connect_interrupted();

	igt_describe("The idle CMP spins on the doorbells only after rings "
		     "that come back to back: rings 2 ms apart never make it "
		     "spin; rings back to back do.");
	igt_subtest("spin-back-to-back")
		test_spin_back_to_back();

	igt_describe("An engine forced to F1 disconnects its doorbells "
		     "(RETRY, dummy page), not the other engines'; a connect "
		     "brings it back to F0.");
	igt_subtest("f1-forced")
		test_f1_forced();

	igt_describe("A ring stored before F1 still runs.");
	igt_subtest("f1-last-ring")
		test_f1_last_ring();

	igt_describe("A kernel-mode submission brings an engine back from F1; "
		     "its doorbells stay disconnected until connected.");
	igt_subtest("f1-kernel-submission")
		test_f1_kernel_submission();

	igt_describe("With f1_idle_ms an idle engine goes to F1 by itself; "
		     "without, its doorbells stay connected.");
	igt_subtest("f1-idle")
		test_f1_idle();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(f1_window_names);
	     i++) {
		igt_describe_f("A %s on an engine between the CMP's ask for "
			       "F1 and the F1 cancels it; the next ask goes "
			       "through.", f1_window_names[i]);
		igt_subtest_f("f1-window-%s", f1_window_names[i])
			test_f1_window(i);
	}

	igt_describe("Runtime PM defaults: power/control on, "
		     "autosuspend_delay_ms 1000.");
	igt_subtest("d3-defaults")
		test_d3_defaults();

	igt_describe("An idle adapter allowed to suspend (runtime PM, "
		     "power/control = auto) goes to D3: its doorbells read "
		     "RETRY, rings go nowhere; a connect resumes it.");
	igt_subtest("d3-doorbell")
		test_d3_doorbell();

	igt_describe("A ring stored before D3 and found by the transition's "
		     "last look undoes the transition and runs.");
	igt_subtest("d3-last-ring")
		test_d3_last_ring();

	igt_describe("A kernel-mode submission wakes a suspended adapter.");
	igt_subtest("d3-kernel-submission")
		test_d3_kernel_submission();

	igt_describe("A DOORBELL_NOTIFY resumes a suspended adapter.");
	igt_subtest("d3-notify")
		test_d3_notify();

	igt_describe("An adapter with work running stays in D0.");
	igt_subtest("d3-busy")
		test_d3_busy();

	igt_describe("Doorbell submissions around D3 transitions are never "
		     "lost.");
	igt_subtest("d3-ring-race")
		test_d3_ring_race();

	igt_describe("A bad command in a rung command buffer faults the "
		     "context: ABORT, AlwaysSignaled progress, connect -EIO.");
	igt_subtest("fault-bad-command")
		test_fault_bad_command();

	igt_describe("A ring entry with non-zero flags faults the context "
		     "(BAD_RING).");
	igt_subtest("fault-bad-entry")
		test_fault_bad_entry();

	igt_describe("A write index more than the ring's entries ahead "
		     "faults the context (BAD_RING).");
	igt_subtest("fault-bad-index")
		test_fault_bad_index();

	igt_describe("A ring entry naming unmapped memory faults the context "
		     "(PAGE).");
	igt_subtest("fault-unmapped-commands")
		test_fault_ring_unmapped();

	igt_describe("A device in error sets its doorbells DISCONNECTED_ABORT.");
	igt_subtest("device-error")
		test_device_error();

	igt_describe("The ring buffer and control cannot be destroyed while "
		     "the doorbell lives (-EBUSY), and can after.");
	igt_subtest("alloc-pinned")
		test_alloc_pinned();

	igt_describe("Destroying the queue destroys its doorbell and unpins "
		     "its allocations.");
	igt_subtest("queue-destroy")
		test_queue_destroy();

	igt_describe("Destroying the context destroys its queue's doorbell "
		     "and unpins its allocations.");
	igt_subtest("context-destroy")
		test_context_destroy();

	igt_describe("Destroying the device destroys its doorbells.");
	igt_subtest("device-destroy")
		test_device_destroy();

	igt_describe("Closing the file with every doorbell mapping alive.");
	igt_subtest("close-mapped")
		test_close_mapped();

	igt_describe("A user-mode queue refuses SUBMIT, SUBMIT_WAIT and "
		     "SUBMIT_SIGNAL with -EINVAL.");
	igt_subtest("no-kernel-submission")
		test_no_kernel_submission();

	igt_describe("Unknown DOORBELL_CREATE flags fail with -EINVAL, "
		     "ResizeRingBufferOperation with -EOPNOTSUPP.");
	igt_subtest("create-bad-flags")
		test_create_bad_flags();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe("DOORBELL_CREATE with a bad device: -ENOENT.");
		igt_subtest_f("create-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_create_bad_device(bad_devices[i]);
	}

	for (volatile unsigned int w = 0; w < ARRAY_SIZE(handle_fields); w++) {
		for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_handles); i++) {
			igt_describe("DOORBELL_CREATE with one bad handle: "
				     "-ENOENT, nothing pinned.");
			igt_subtest_f("create-%s-%s", handle_fields[w],
				      nfence_bad_name(bad_handles[i]))
				test_create_bad_handle(bad_handles[i], w);
		}
	}

	igt_describe("DOORBELL_CREATE on a kernel-mode queue fails with "
		     "-EINVAL, a second doorbell with -EBUSY.");
	igt_subtest("create-kernel-queue")
		test_create_kernel_queue();

	igt_describe("Page-sized ring and control allocations are enough.");
	igt_subtest("create-small-allocs")
		test_create_small_allocs();

	igt_describe("DOORBELL_CREATE on a device in error fails with -EIO.");
	igt_subtest("create-device-error")
		test_create_device_error();

	igt_describe("DOORBELL_CREATE on a queue whose context faulted, on a "
		     "device not in error, fails with -EIO.");
	igt_subtest("create-context-faulted")
		test_create_context_faulted();

	for (volatile unsigned int i = 0; i < DB_BAD_COUNT; i++) {
		igt_describe("DOORBELL_CONNECT with a bad handle: -ENOENT; "
			     "non-zero flags: -EINVAL.");
		igt_subtest_f("connect-%s", db_bad_names[i])
			test_connect_bad(i);
		igt_describe("DOORBELL_DESTROY with a bad handle: -ENOENT.");
		igt_subtest_f("destroy-%s", db_bad_names[i])
			test_destroy_bad(i);
		igt_describe("DOORBELL_NOTIFY with a bad handle: -ENOENT; "
			     "non-zero flags or pad: -EINVAL.");
		igt_subtest_f("notify-%s", db_bad_names[i])
			test_notify_bad(i);
	}

	igt_describe("mmap rules: shared mappings only, the status is "
		     "read-only, one page per mapping, only the creating file, "
		     "none after destroy.");
	igt_subtest("mmap-rules")
		test_mmap_rules();

	igt_describe("Each doorbell ioctl fails with -EFAULT for a NULL and an "
		     "unmapped argument.");
	igt_subtest("bad-arg-pointer")
		test_bad_arg_pointer();

	igt_fixture {
		close(dbg);
		close(fd);
	}
}
