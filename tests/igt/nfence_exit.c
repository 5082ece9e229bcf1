// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Process termination: a process killed by a signal or "
		     "crashing has its devices put in error, so the fences "
		     "it created become AlwaysSignaled for every process that "
		     "opened them (CPU and GPU waiters released), and its "
		     "queued work is dropped; a process that exits normally "
		     "leaves its shared fences alone, and its file's close "
		     "runs the work its queues hold first, for a bounded "
		     "time.");

#define WATCHDOG_S	60
#define INITIAL		7
#define WANTED		8
#define RELEASE_MS	1000	/* the seed's bound on releasing waiters */
#define EXIT_WAIT_MS	2000	/* the exit wait's bound without a TDR */
#define EXIT_MARGIN_MS	1000	/* how late a close past the bound may end */
#define SHAREABLE	(DRM_NFENCE_FENCE_SHARED | \
			 DRM_NFENCE_FENCE_NT_SECURITY_SHARING)

static int fd = -1;

enum ending {
	END_EXIT,	/* exit(0) with everything open */
	END_CLOSE,	/* close() then kill -9: the close was normal */
	END_SIGKILL,
	END_SIGSEGV,
};

/*
 * The creator, in a plain forked child (no IGT in it: it must be free to
 * die): its own file and device, a shared native fence at INITIAL sent to
 * the parent as an fd; then it ends as the parent's byte says. Exit codes
 * other than the ending are setup failures.
 */
static void creator(int sock)
{
	struct drm_nfence_device_create dc = { 0 };
	struct drm_nfence_fence_create fc = { 0 };
	struct drm_nfence_fence_share fs = { .fd = -1 };
	struct rlimit no_core = { 0, 0 };
	int cfd, cfd2;
	char how;

	/* No IGT handler, no core file: the kernel's own ending. */
	signal(SIGSEGV, SIG_DFL);
	setrlimit(RLIMIT_CORE, &no_core);
	cfd = __nfence_open_adapter(0);
	if (cfd < 0)
		_exit(10);
	if (__nfence_device_create(cfd, &dc))
		_exit(11);
	fc.device = dc.handle;
	fc.type = DRM_NFENCE_FENCE_TYPE_DEFAULT;
	fc.flags = SHAREABLE;
	/* With a second adapter, the parent opens it there too. */
	cfd2 = __nfence_open_adapter(1);
	if (cfd2 >= 0) {
		fc.flags |= DRM_NFENCE_FENCE_CROSS_ADAPTER;
		close(cfd2);
	}
	fc.initial_value = INITIAL;
	if (__nfence_fence_create(cfd, &fc))
		_exit(12);
	fs.handle = fc.handle;
	if (__nfence_fence_share(cfd, &fs) || nfence_send_fd(sock, fs.fd))
		_exit(13);
	close(fs.fd);
	if (read(sock, &how, 1) != 1)
		_exit(14);
	switch (how) {
	case END_EXIT:
		/* exit_group(0), without the IGT parent's atexit handlers. */
		_exit(0);
	case END_CLOSE:
		close(cfd);
		raise(SIGKILL);
		break;
	case END_SIGKILL:
		raise(SIGKILL);
		break;
	case END_SIGSEGV:
		raise(SIGSEGV);
		break;
	}
	_exit(15);
}

/* The fence opened on a second adapter, waited for by its CPU and GPU. */
struct far_side {
	int fd;
	uint32_t dev;
	uint32_t h;
	struct nfence_queue q;
	struct nfence_cpu_waiter w;
	uint64_t gpu_done;
};

static void far_side_start(struct far_side *f, int sfd, int64_t deadline)
{
	struct drm_nfence_fence_mapping m;
	struct nfence_cs cs;

	f->fd = nfence_open_adapter(1);
	f->dev = nfence_device_create(f->fd);
	f->h = nfence_fence_open(f->fd, f->dev, sfd, 0, &m);
	nfence_cpu_waiter_start(&f->w, f->fd, f->dev, f->h, WANTED, deadline);
	nfence_queue_create(&f->q, f->fd, f->dev, 0, 0);
	nfence_queue_begin(&f->q, &cs);
	nfence_cs_wait_fence(&cs, &m, WANTED);
	f->gpu_done = nfence_queue_submit(&f->q, &cs);
	igt_assert(!nfence_queue_poll(&f->q, f->gpu_done, 100));
}

static void far_side_stop(struct far_side *f)
{
	nfence_queue_destroy(&f->q);
	nfence_fence_destroy(f->fd, f->h);
	nfence_device_destroy(f->fd, f->dev);
	close(f->fd);
}

static void test_creator_ends(enum ending how)
{
	bool killed = how == END_SIGKILL || how == END_SIGSEGV;
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *value;
	struct nfence_queue q;
	struct nfence_cs cs;
	struct nfence_cpu_waiter w;
	uint64_t gpu_done, reaped_ns;
	int sock, sfd, status, ret;
	bool two = nfence_count_adapters() >= 2;
	struct far_side far;
	char byte = how;
	uint32_t dev, h;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	igt_require(nfence_has_native_fences(fd));
	if (!two)
		igt_info("one adapter: no waiter on a second one\n");
	pid = nfence_fork_child(creator, &sock);
	sfd = nfence_recv_fd(sock);
	igt_assert_f(sfd >= 0, "the creator sent no fence: %s\n",
		     strerror(-sfd));

	/* This process's device opens the fence and waits, CPU and GPU. */
	dev = nfence_device_create(fd);
	h = nfence_fence_open(fd, dev, sfd, 0, &m);
	if (two)
		far_side_start(&far, sfd,
			       nfence_deadline_ms(killed ? 20000 : 1500));
	value = nfence_fence_map(fd, &m);
	igt_assert_eq_u64(*value, INITIAL);
	nfence_cpu_waiter_start(&w, fd, dev, h, WANTED,
				nfence_deadline_ms(killed ? 20000 : 1500));
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_wait_fence(&cs, &m, WANTED);
	gpu_done = nfence_queue_submit(&q, &cs);
	igt_assert(!nfence_queue_poll(&q, gpu_done, 100));

	/* The creator ends. */
	igt_assert_eq(write(sock, &byte, 1), 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	reaped_ns = nfence_monotonic_ns();
	close(sock);
	switch (how) {
	case END_EXIT:
		igt_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		break;
	case END_CLOSE:
	case END_SIGKILL:
		igt_assert_f(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			     "creator status 0x%x\n", status);
		break;
	case END_SIGSEGV:
		igt_assert_f(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
			     "creator status 0x%x\n", status);
		break;
	}

	ret = nfence_cpu_waiter_join(&w, 30000);
	if (killed) {
		/* AlwaysSignaled: every waiter released, any value reached. */
		igt_assert_eq(ret, 0);
		igt_assert_f(w.done_ns < reaped_ns + RELEASE_MS * 1000000ull,
			     "the CPU waiter took %" PRIu64 " ms\n",
			     (w.done_ns - reaped_ns) / 1000000);
		igt_assert(nfence_queue_poll(&q, gpu_done, RELEASE_MS));
		igt_assert(*value >= NFENCE_ALWAYS_SIGNALED);
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, UINT64_MAX,
						      0), 0);
		if (two) {
			/* The instance on the other adapter as well. */
			igt_assert_eq(nfence_cpu_waiter_join(&far.w, 30000), 0);
			igt_assert_f(far.w.done_ns < reaped_ns +
				     RELEASE_MS * 1000000ull,
				     "adapter 1's CPU waiter took %" PRIu64
				     " ms\n",
				     (far.w.done_ns - reaped_ns) / 1000000);
			igt_assert(nfence_queue_poll(&far.q, far.gpu_done,
						     RELEASE_MS));
			igt_assert_eq(__nfence_fence_wait_one(far.fd, far.dev,
							      far.h,
							      UINT64_MAX, 0),
				      0);
			/* An instance opened there afterwards inherits it. */
			far_side_stop(&far);
			far.fd = nfence_open_adapter(1);
			far.dev = nfence_device_create(far.fd);
			far.h = nfence_fence_open(far.fd, far.dev, sfd, 0,
						  NULL);
			igt_assert_eq(__nfence_fence_wait_one(far.fd, far.dev,
							      far.h,
							      UINT64_MAX, 0),
				      0);
			nfence_fence_destroy(far.fd, far.h);
			nfence_device_destroy(far.fd, far.dev);
			close(far.fd);
			two = false;
		}
	} else {
		/* Left alone: still INITIAL, still usable. */
		igt_assert_eq(ret, -ETIME);
		igt_assert_eq_u64(*value, INITIAL);
		igt_assert(!nfence_queue_poll(&q, gpu_done, 100));
		if (two) {
			igt_assert_eq(nfence_cpu_waiter_join(&far.w, 30000),
				      -ETIME);
			igt_assert(!nfence_queue_poll(&far.q, far.gpu_done,
						      100));
		}
		nfence_fence_signal(fd, dev, h, WANTED);
		igt_assert(nfence_queue_poll(&q, gpu_done, 5000));
		igt_assert_eq_u64(*value, WANTED);
		/* A signal on adapter 0 still reaches adapter 1. */
		if (two)
			igt_assert(nfence_queue_poll(&far.q, far.gpu_done,
						     5000));
	}
	if (two)
		far_side_stop(&far);
	close(sfd);
	nfence_fence_unmap(value);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
}

/*
 * A user-mode queue's work at exit. The parent's shared fence goes to a
 * plain forked child, which rings a command buffer that runs WORK and
 * then signals it, and ends at once.
 */

#define WORK_NS		(300 * 1000000ull)
#define SIGNALED	5
#define PAGE		4096u

/* A CPU-visible system memory allocation of the child, mapped. */
static void *child_alloc(int cfd, uint32_t dev, uint64_t *va, uint32_t *h)
{
	struct drm_nfence_alloc_create ac = {
		.device = dev,
		.flags = DRM_NFENCE_ALLOC_CPU_VISIBLE,
		.size = PAGE,
		.segment_id = NFENCE_SEGMENT_SYSTEM,
	};
	struct drm_nfence_alloc_lock al = { .device = dev };
	void *p;

	if (__nfence_alloc_create(cfd, &ac))
		_exit(20);
	al.handle = ac.handle;
	if (__nfence_alloc_lock(cfd, &al))
		_exit(21);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
		 al.mmap_offset);
	if (p == MAP_FAILED)
		_exit(22);
	*va = ac.gpu_va;
	*h = ac.handle;
	return p;
}

/* What a plain child sets up: its file, device, the parent's fence, a queue. */
struct child_queue {
	int cfd;
	struct drm_nfence_device_create dc;
	struct drm_nfence_fence_open fo;
	struct drm_nfence_context_create cc;
	struct drm_nfence_hwqueue_create hc;
};

/*
 * In a plain child: open adapter 0, receive the parent's fence on @sock
 * and open it on a new device, make a context and a queue with @flags;
 * _exit(10..14) on a failure.
 */
static void child_queue(int sock, uint32_t flags, struct child_queue *c)
{
	int sfd;

	memset(c, 0, sizeof(*c));
	signal(SIGSEGV, SIG_DFL);
	c->cfd = __nfence_open_adapter(0);
	sfd = nfence_recv_fd(sock);
	if (c->cfd < 0 || sfd < 0)
		_exit(10);
	if (__nfence_device_create(c->cfd, &c->dc))
		_exit(11);
	c->fo.fd = sfd;
	c->fo.device = c->dc.handle;
	if (__nfence_fence_open(c->cfd, &c->fo))
		_exit(12);
	c->cc.device = c->dc.handle;
	if (__nfence_context_create(c->cfd, &c->cc))
		_exit(13);
	c->hc.device = c->dc.handle;
	c->hc.context = c->cc.handle;
	c->hc.flags = flags;
	if (__nfence_hwqueue_create(c->cfd, &c->hc))
		_exit(14);
}

/* In a plain child: end as the parent's byte on @sock says. */
static void child_end(int sock)
{
	char how;

	if (read(sock, &how, 1) != 1)
		_exit(18);
	if (how == END_EXIT)
		_exit(0);
	raise(SIGKILL);
	_exit(19);
}

/* In the parent: the child @pid ended as @how asked. */
static void assert_child_ended(pid_t pid, enum ending how)
{
	int status;

	igt_assert_eq(waitpid(pid, &status, 0), pid);
	if (how == END_EXIT)
		igt_assert_f(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			     "child status 0x%x\n", status);
	else
		igt_assert_f(WIFSIGNALED(status) &&
			     WTERMSIG(status) == SIGKILL,
			     "child status 0x%x\n", status);
}

/* The ringer's work waits for a value the parent never signals. */
static bool ringer_stuck;

static void ringer(int sock)
{
	struct drm_nfence_doorbell_create db = { 0 };
	struct drm_nfence_doorbell_connect conn = { 0 };
	struct drm_nfence_ring_entry *ring;
	struct drm_nfence_ring_control *control;
	volatile uint64_t *bell, *last;
	uint64_t cmd_va, ring_va, control_va;
	uint32_t cmd_h, ring_h, control_h;
	struct child_queue c;
	struct nfence_cs cs;
	void *cmds;
	int cfd;

	child_queue(sock, DRM_NFENCE_HWQUEUE_USER_MODE_SUBMISSION, &c);
	cfd = c.cfd;
	cmds = child_alloc(cfd, c.dc.handle, &cmd_va, &cmd_h);
	ring = child_alloc(cfd, c.dc.handle, &ring_va, &ring_h);
	control = child_alloc(cfd, c.dc.handle, &control_va, &control_h);
	db.device = c.dc.handle;
	db.hwqueue = c.hc.handle;
	db.ring_alloc = ring_h;
	db.ring_control_alloc = control_h;
	if (__nfence_doorbell_create(cfd, &db))
		_exit(15);
	bell = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
		    db.doorbell_offset);
	last = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
		    db.last_queued_offset);
	if (bell == MAP_FAILED || last == MAP_FAILED)
		_exit(16);
	conn.device = c.dc.handle;
	conn.handle = db.handle;
	if (__nfence_doorbell_connect(cfd, &conn))
		_exit(17);

	/* WORK, then the parent's fence, then the progress fence. */
	nfence_cs_init(&cs, cmds, cmd_va, PAGE);
	if (ringer_stuck) {
		nfence_cs_wait_fence(&cs, &c.fo.mapping, SIGNALED);
	} else {
		nfence_cs_work(&cs, WORK_NS);
		nfence_cs_signal_fence(&cs, &c.fo.mapping, SIGNALED);
	}
	nfence_cs_signal_fence(&cs, &c.hc.progress_fence_mapping, 1);
	*last = 1;
	ring[0].commands_gpu_va = cmd_va;
	ring[0].size = cs.len;
	ring[0].flags = 0;
	__sync_synchronize();
	control->write_index = 1;
	*bell = 1;
	__sync_synchronize();
	/* No notify even if the CMP went quiet: the exit wait looks again. */
	child_end(sock);
}

static void test_ring_then_end(enum ending how)
{
	struct drm_nfence_fence_mapping m;
	int sock, sfd, ret;
	char byte = how;
	uint32_t dev, h;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	igt_require(nfence_has_native_fences(fd));
	dev = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);
	pid = nfence_fork_child(ringer, &sock);
	igt_assert_eq(nfence_send_fd(sock, sfd), 0);
	close(sfd);
	igt_assert_eq(write(sock, &byte, 1), 1);
	assert_child_ended(pid, how);
	close(sock);
	if (how == END_EXIT) {
		/* Its file closed after the work ran: the fence is there. */
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, SIGNALED, 0),
			      0);
	} else {
		/* Killed: its queue stopped, its work is gone. */
		ret = __nfence_fence_wait_one(fd, dev, h, SIGNALED,
					      nfence_deadline_ms(1000));
		igt_assert_eq(ret, -ETIME);
	}
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
}

/*
 * The exit wait is bounded (Documentation/gpu-work.rst, "Process
 * termination"): a process that exits with rung work that can never
 * complete (a FENCE_WAIT on a value nobody signals) is gone after the TDR
 * timeout, 2 s at most, and not much later.
 */
static void test_ring_stuck_at_exit(void)
{
	struct drm_nfence_fence_mapping m;
	char byte = END_EXIT;
	uint64_t t0, ms;
	int sock, sfd;
	uint32_t dev, h;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	igt_require(nfence_has_native_fences(fd));
	dev = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);
	ringer_stuck = true;
	pid = nfence_fork_child(ringer, &sock);
	ringer_stuck = false;
	igt_assert_eq(nfence_send_fd(sock, sfd), 0);
	close(sfd);
	t0 = nfence_monotonic_ns();
	igt_assert_eq(write(sock, &byte, 1), 1);
	assert_child_ended(pid, END_EXIT);
	ms = (nfence_monotonic_ns() - t0) / 1000000;
	close(sock);
	igt_info("the exit took %" PRIu64 " ms\n", ms);
	/* The close waited (the work was rung), for the bound and no more. */
	igt_assert_f(ms >= 1500 && ms < 10000,
		     "the exit took %" PRIu64 " ms, not about 2000\n", ms);
	/* Its work went with the file: the wait never passed. */
	igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, SIGNALED, 0), -ETIME);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
}

/*
 * A kernel-mode queue's native fence logs at exit. A plain forked child
 * submits a logged signal of the parent's fence (value 1), WORK, and a
 * logged signal of SIGNALED; it reads its signal log until the first
 * entry is there, tells the parent, and ends while the WORK runs, its
 * queue's second log entry still to be written.
 */
static void logger(int sock)
{
	struct drm_nfence_log_entry entry;
	struct drm_nfence_submit sub = { 0 };
	struct drm_nfence_log_read lr = { 0 };
	struct child_queue c;
	struct nfence_cs cs;
	uint64_t cmd_va;
	uint32_t cmd_h;
	int tries;
	void *cmds;

	child_queue(sock, 0, &c);
	if (!c.hc.log_entries)
		_exit(14);
	cmds = child_alloc(c.cfd, c.dc.handle, &cmd_va, &cmd_h);
	nfence_cs_init(&cs, cmds, cmd_va, PAGE);
	nfence_cs_fence_signal_log(&cs, c.fo.mapping.current_value_gpu_va,
				   c.fo.mapping.monitored_value_gpu_va, 1,
				   c.fo.handle,
				   DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED);
	nfence_cs_work(&cs, WORK_NS);
	nfence_cs_fence_signal_log(&cs, c.fo.mapping.current_value_gpu_va,
				   c.fo.mapping.monitored_value_gpu_va,
				   SIGNALED, c.fo.handle,
				   DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED);
	sub.device = c.dc.handle;
	sub.hwqueue = c.hc.handle;
	sub.commands_gpu_va = cmd_va;
	sub.size = cs.len;
	sub.progress_fence_value = 1;
	if (__nfence_submit(c.cfd, &sub))
		_exit(15);
	/* The first signal is logged before the WORK ends. */
	lr.device = c.dc.handle;
	lr.hwqueue = c.hc.handle;
	lr.type = DRM_NFENCE_LOG_TYPE_SIGNALS;
	for (tries = 0; tries < 2000; tries++) {
		lr.cursor = 0;
		lr.entries_ptr = (uint64_t)(uintptr_t)&entry;
		lr.num_entries = 1;
		if (__nfence_log_read(c.cfd, &lr))
			_exit(16);
		if (lr.num_entries)
			break;
		usleep(1000);
	}
	if (lr.num_entries != 1 || entry.fence_value != 1 ||
	    entry.fence_handle != c.fo.handle)
		_exit(17);
	if (write(sock, "L", 1) != 1)
		_exit(18);
	child_end(sock);
}

static void log_trace_off(int sig)
{
	const char *dir = nfence_tracefs();

	(void)sig;
	if (dir)
		nfence_trace_events(dir, "nfence_log_entry", false);
}

/* Whether @text has an nfence_log_entry event of a signal of @value. */
static bool traced_signal_entry(const char *text, uint64_t value)
{
	char want[48];
	const char *line;

	snprintf(want, sizeof(want), " value=%" PRIu64 " ", value);
	for (line = text; (line = strstr(line, "nfence_log_entry:")); line++) {
		const char *end = strchr(line, '\n');
		const char *hit = strstr(line, want);
		const char *sig = strstr(line, "log=signals");

		if (hit && sig && (!end || (hit < end && sig < end)))
			return true;
	}
	return false;
}

/*
 * A process ends with a logged command still to run on a kernel-mode
 * queue. At a normal exit its file's close waits for the queue to run it
 * (Windows idles the device first: see gpu-work.rst, "Process
 * termination"): once the process is reaped the parent's fence is at the
 * second logged signal's value, and the engine logged both signals
 * (nfence_log_entry trace events, where tracefs has them). Killed, its
 * queue stops and the rest of its work is dropped: the fence stays at the
 * first signal's value and the second is never logged. Either way the
 * queue and its logs go away with the file (the debug kernel's KASAN and
 * kmemleak watch that), and a queue made next logs as usual.
 */
static void test_logged_work_then_end(enum ending how)
{
	const char *trace = nfence_tracefs();
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_log_entry e[2];
	struct drm_nfence_log_read lr;
	int sock, sfd, dir;
	struct nfence_queue q;
	struct nfence_cs cs;
	char byte = how, ack;
	uint32_t dev, h;
	char *text;
	uint64_t v;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	igt_require(nfence_has_native_fences(fd));
	dir = nfence_debugfs_dir(fd);
	dev = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				SHAREABLE, 0, &m);
	sfd = nfence_fence_share(fd, h);
	if (trace) {
		nfence_trace_write(trace, "trace", "");
		nfence_trace_events(trace, "nfence_log_entry", true);
		igt_install_exit_handler(log_trace_off);
	} else {
		igt_info("no tracefs with nfence events: the log entries "
			 "are not checked\n");
	}
	pid = nfence_fork_child(logger, &sock);
	igt_assert_eq(nfence_send_fd(sock, sfd), 0);
	close(sfd);
	igt_assert_f(read(sock, &ack, 1) == 1 && ack == 'L',
		     "the logger did not see its first log entry\n");
	igt_assert_eq(write(sock, &byte, 1), 1);
	assert_child_ended(pid, how);
	close(sock);
	igt_assert_eq(nfence_debugfs_queues_wait_gone(dir, pid, 10000), 0);
	if (how == END_EXIT) {
		/* Reaped after its close: the work ran before. */
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, SIGNALED, 0),
			      0);
	} else {
		/* Longer than the WORK: the rest of the buffer did not run. */
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, SIGNALED,
						      nfence_deadline_ms(1000)),
			      -ETIME);
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, 1, 0), 0);
	}
	if (trace) {
		log_trace_off(0);
		text = nfence_trace_read(trace);
		igt_assert_f(traced_signal_entry(text, 1),
			     "the first signal was not logged:\n%s\n", text);
		igt_assert_f(traced_signal_entry(text, SIGNALED) ==
			     (how == END_EXIT),
			     "the second signal was%s logged:\n%s\n",
			     how == END_EXIT ? " not" : "", text);
		free(text);
	}

	/* The adapter logs on: a new queue of this process. */
	nfence_queue_create(&q, fd, dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_fence_signal_log(&cs, m.current_value_gpu_va,
				   m.monitored_value_gpu_va, SIGNALED + 1, h,
				   DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED);
	v = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, v, 10000));
	lr = (struct drm_nfence_log_read){
		.device = dev, .hwqueue = q.handle,
		.type = DRM_NFENCE_LOG_TYPE_SIGNALS,
		.entries_ptr = (uint64_t)(uintptr_t)e, .num_entries = 2,
	};
	igt_assert_eq(__nfence_log_read(fd, &lr), 0);
	igt_assert_eq_u32(lr.num_entries, 1);
	igt_assert_eq_u64(e[0].fence_value, SIGNALED + 1);
	nfence_queue_destroy(&q);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
	close(dir);
}

/*
 * Blocked kernel-mode work at exit. A plain forked child's queue waits
 * (FENCE_WAIT) for the parent's fence to reach WANTED, then signals it to
 * DONE; the child then exits normally. Who releases the wait, if anyone:
 */
enum release {
	RELEASE_PARENT,	/* the parent, once the child's close is waiting */
	RELEASE_BOUND,	/* the parent, and DONE is bound to a syncobj point */
	RELEASE_SYNCOBJ, /* a pending SYNCOBJ_SIGNAL of the child's, once the
			  * parent signals its dma_fence (vgem's) */
	RELEASE_QUEUE,	/* another queue of the child, after a WORK */
	RELEASE_NONE,	/* nobody: the close gives up at its bound */
};

#define DONE		9
#define HALF		(PAGE / 2)
#define RELEASE_WORK_NS	(600 * 1000000ull)

/* What a blocker tells the parent once its work is queued. */
struct blocker_info {
	uint32_t device;
	uint32_t context;
};

static void blocker(int sock)
{
	struct drm_nfence_hwqueue_create hc2 = { 0 };
	struct drm_nfence_context_create cc2 = { 0 };
	struct drm_nfence_submit sub = { 0 };
	struct drm_nfence_syncobj_signal sig = { 0 };
	struct drm_nfence_syncobj_bind bind = { 0 };
	struct blocker_info info;
	struct child_queue c;
	struct nfence_cs cs;
	uint64_t cmd_va;
	uint32_t cmd_h;
	int xfd = -1;
	char rel;
	void *cmds;

	child_queue(sock, 0, &c);
	if (read(sock, &rel, 1) != 1)
		_exit(15);
	/* A syncobj to bind to, or a sync_file to signal from. */
	if (rel == RELEASE_BOUND || rel == RELEASE_SYNCOBJ) {
		xfd = nfence_recv_fd(sock);
		if (xfd < 0)
			_exit(19);
	}
	cmds = child_alloc(c.cfd, c.dc.handle, &cmd_va, &cmd_h);
	nfence_cs_init(&cs, cmds, cmd_va, HALF);
	nfence_cs_wait_fence(&cs, &c.fo.mapping, WANTED);
	nfence_cs_signal_fence(&cs, &c.fo.mapping, DONE);
	sub.device = c.dc.handle;
	sub.hwqueue = c.hc.handle;
	sub.commands_gpu_va = cmd_va;
	sub.size = cs.len;
	sub.progress_fence_value = 1;
	if (__nfence_submit(c.cfd, &sub))
		_exit(16);
	if (rel == RELEASE_BOUND) {
		bind.device = c.dc.handle;
		bind.fence = c.fo.handle;
		bind.value = DONE;
		bind.point = 1;
		if (drmSyncobjFDToHandle(c.cfd, xfd, &bind.syncobj) ||
		    drmIoctl(c.cfd, DRM_IOCTL_NFENCE_SYNCOBJ_BIND, &bind))
			_exit(20);
	}
	if (rel == RELEASE_SYNCOBJ) {
		sig.device = c.dc.handle;
		sig.fence = c.fo.handle;
		sig.value = WANTED;
		sig.fd = xfd;
		sig.flags = DRM_NFENCE_SYNCOBJ_SIGNAL_SYNC_FILE;
		if (drmIoctl(c.cfd, DRM_IOCTL_NFENCE_SYNCOBJ_SIGNAL, &sig))
			_exit(20);
	}
	if (rel == RELEASE_QUEUE) {
		/* A second queue, made later: the exit wait meets it last. */
		cc2.device = c.dc.handle;
		hc2.device = c.dc.handle;
		if (__nfence_context_create(c.cfd, &cc2))
			_exit(17);
		hc2.context = cc2.handle;
		if (__nfence_hwqueue_create(c.cfd, &hc2))
			_exit(17);
		nfence_cs_init(&cs, (char *)cmds + HALF, cmd_va + HALF, HALF);
		nfence_cs_work(&cs, RELEASE_WORK_NS);
		nfence_cs_signal_fence(&cs, &c.fo.mapping, WANTED);
		sub.hwqueue = hc2.handle;
		sub.commands_gpu_va = cmd_va + HALF;
		sub.size = cs.len;
		if (__nfence_submit(c.cfd, &sub))
			_exit(17);
	}
	info.device = c.dc.handle;
	info.context = c.cc.handle;
	if (write(sock, &info, sizeof(info)) != sizeof(info))
		_exit(18);
	child_end(sock);
}

/* The exit wait's bound on adapter 0: its TDR timeout, at most 2 s. */
static unsigned int exit_wait_ms(void)
{
	uint64_t tdr = nfence_param_get_u64("tdr_timeout_ms");

	return tdr && tdr < EXIT_WAIT_MS ? tdr : EXIT_WAIT_MS;
}

/* Whether nfence_clients lists a file that process @pid opened. */
static bool client_listed(int dir, pid_t pid)
{
	char buf[16384], prefix[32], *line, *save;

	igt_assert_lte(0, __nfence_debugfs_read(dir, "nfence_clients", buf,
						sizeof(buf)));
	snprintf(prefix, sizeof(prefix), "pid %d ", pid);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, prefix, strlen(prefix)))
			return true;
	return false;
}

/*
 * Wait until @pid's file has left nfence_clients: its close (postclose)
 * has begun.
 */
static void wait_close_begun(int dir, pid_t pid, unsigned int timeout_ms)
{
	uint64_t end = nfence_monotonic_ns() + timeout_ms * 1000000ull;

	while (client_listed(dir, pid)) {
		igt_assert_f(nfence_monotonic_ns() < end,
			     "process %d's file still open after %u ms\n",
			     pid, timeout_ms);
		usleep(1000);
	}
}

/*
 * A process exits normally with work blocked on a kernel-mode queue. Its
 * file's close waits for the work (the process is not reaped until it
 * ends), with its queues still listed: released by the parent after the
 * child exited, or by another queue of the child, the work runs (the
 * fence reaches DONE by the time the child is reaped). So does the
 * release by a SYNCOBJ_SIGNAL the child left pending, whose dma_fence the
 * parent signals during the close: a pending signal acts until the exit
 * wait is over. A binding of DONE to a syncobj point that the child left
 * pending publishes the point signaled, without error, once the work
 * reaches DONE during the close. Released by nobody,
 * the close gives up at the exit wait's bound (its TDR timeout, at most
 * 2 s), neither sooner nor much later, and drops the work: a late signal
 * of the fence no longer reaches DONE. The child's queues and device go
 * with its file either way.
 */
static void test_blocked_work_at_exit(enum release rel)
{
	unsigned int bound = exit_wait_ms();
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *value;
	struct nfence_vgem_fence vf;
	struct blocker_info info;
	uint64_t start, took_ms;
	int64_t devices;
	char byte = rel;
	int sock, sfd, dir, vgem = -1, xfd = -1;
	uint32_t dev, h, syncobj = 0;
	pid_t pid;

	nfence_watchdog(WATCHDOG_S);
	igt_require(nfence_has_native_fences(fd));
	if (rel == RELEASE_SYNCOBJ) {
		vgem = nfence_vgem_open();
		igt_require_f(vgem >= 0, "no vgem to make a dma_fence with\n");
		nfence_vgem_fence_create(vgem, &vf);
		xfd = nfence_vgem_fence_sync_file(&vf);
	}
	if (rel == RELEASE_BOUND) {
		igt_assert_eq(drmSyncobjCreate(fd, 0, &syncobj), 0);
		igt_assert_eq(drmSyncobjHandleToFD(fd, syncobj, &xfd), 0);
	}
	dir = nfence_debugfs_dir(fd);
	dev = nfence_device_create(fd);
	h = nfence_fence_create(fd, dev, DRM_NFENCE_FENCE_TYPE_DEFAULT,
				SHAREABLE, 0, &m);
	value = nfence_fence_map(fd, &m);
	devices = nfence_live_devices(fd);
	igt_assert_lte(0, devices);
	sfd = nfence_fence_share(fd, h);
	pid = nfence_fork_child(blocker, &sock);
	igt_assert_eq(nfence_send_fd(sock, sfd), 0);
	close(sfd);
	igt_assert_eq(write(sock, &byte, 1), 1);
	if (xfd >= 0) {
		igt_assert_eq(nfence_send_fd(sock, xfd), 0);
		close(xfd);
	}
	igt_assert_f(read(sock, &info, sizeof(info)) == sizeof(info),
		     "the blocker queued no work\n");
	igt_assert_eq(nfence_debugfs_queue_wait_state(dir, pid, info.device,
						      info.context,
						      "wait-fence", 10000,
						      NULL), 0);

	/* The child exits; its close is left waiting for the work. */
	byte = END_EXIT;
	start = nfence_monotonic_ns();
	igt_assert_eq(write(sock, &byte, 1), 1);
	wait_close_begun(dir, pid, 10000);
	if (rel != RELEASE_QUEUE) {
		igt_assert_lte(1, nfence_debugfs_count_queues(dir, pid));
		igt_assert_eq_u64(*value, 0);
	} else {
		/* The other queue's WORK still runs: released in the close. */
		igt_assert_f(*value < WANTED, "released before the close\n");
	}
	if (rel == RELEASE_PARENT || rel == RELEASE_BOUND ||
	    rel == RELEASE_SYNCOBJ) {
		usleep(bound / 4 * 1000);
		igt_assert_lte(1, nfence_debugfs_count_queues(dir, pid));
		igt_assert_eq_u64(*value, 0);
		if (rel == RELEASE_SYNCOBJ)
			nfence_vgem_fence_signal(vgem, &vf);
		else
			nfence_fence_signal(fd, dev, h, WANTED);
	}
	assert_child_ended(pid, END_EXIT);
	took_ms = (nfence_monotonic_ns() - start) / 1000000;
	close(sock);
	igt_info("the exit took %" PRIu64 " ms (bound %u ms)\n", took_ms,
		 bound);
	/* Reaped after its close: no queue of it is left. */
	igt_assert_eq(nfence_debugfs_count_queues(dir, pid), 0);
	if (rel == RELEASE_NONE) {
		igt_assert_f(took_ms + 20 >= bound &&
			     took_ms < bound + EXIT_MARGIN_MS,
			     "the exit took %" PRIu64 " ms, the bound is %u "
			     "ms\n", took_ms, bound);
		/* Dropped: releasing the wait now runs nothing. */
		igt_assert_eq_u64(*value, 0);
		nfence_fence_signal(fd, dev, h, WANTED);
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, DONE,
						      nfence_deadline_ms(500)),
			      -ETIME);
		igt_assert_eq_u64(*value, WANTED);
	} else {
		igt_assert_eq(__nfence_fence_wait_one(fd, dev, h, DONE, 0), 0);
		igt_assert_eq_u64(*value, DONE);
		igt_assert_f(took_ms < bound,
			     "the exit took %" PRIu64 " ms, the bound is %u "
			     "ms\n", took_ms, bound);
	}
	if (rel == RELEASE_BOUND) {
		uint64_t point = 1;
		int sf;

		/* Attached before the close ended. */
		igt_assert_eq(drmSyncobjTimelineWait(fd, &syncobj, &point, 1,
						     0, 0, NULL), 0);
		sf = nfence_syncobj_point_sync_file(fd, syncobj, 1);
		igt_assert_eq(nfence_sync_file_bridge_status(sf), 1);
		close(sf);
		drmSyncobjDestroy(fd, syncobj);
	}
	if (vgem >= 0) {
		nfence_vgem_fence_destroy(vgem, &vf);
		close(vgem);
	}
	/* The child's device went with its file. */
	for (int i = 0; nfence_live_devices(fd) != devices && i < 1000; i++)
		usleep(1000);
	igt_assert_eq(nfence_live_devices(fd), devices);
	nfence_fence_unmap(value);
	nfence_fence_destroy(fd, h);
	nfence_device_destroy(fd, dev);
	close(dir);
}

igt_main
{
	igt_fixture
		fd = nfence_open();

	igt_describe("The creator exits normally: the fence stays INITIAL, "
		     "waiters wait (here and, CrossAdapter, on a second "
		     "adapter), a signal from this process releases them.");
	igt_subtest("creator-exit")
		test_creator_ends(END_EXIT);

	igt_describe("The creator closes its file, then is killed: the close "
		     "was normal, the fence is left alone.");
	igt_subtest("creator-close-then-killed")
		test_creator_ends(END_CLOSE);

	igt_describe("The creator is killed (SIGKILL): the fence becomes "
		     "AlwaysSignaled, CPU and GPU waiters, here and on a "
		     "second adapter, are released within a second, a wait "
		     "for UINT64_MAX returns at once.");
	igt_subtest("creator-sigkill")
		test_creator_ends(END_SIGKILL);

	igt_describe("The creator crashes (SIGSEGV): as for SIGKILL.");
	igt_subtest("creator-sigsegv")
		test_creator_ends(END_SIGSEGV);

	igt_describe("A process rings a WORK command buffer and exits: its "
		     "file's close waits for the work, which signals the "
		     "parent's fence.");
	igt_subtest("doorbell-work-at-exit")
		test_ring_then_end(END_EXIT);

	igt_describe("The same process killed instead: its queues stop, the "
		     "work never signals.");
	igt_subtest("doorbell-work-killed")
		test_ring_then_end(END_SIGKILL);

	igt_describe("A process exits with rung work that never completes: "
		     "its file's close waits 2 s (the bound), no more.");
	igt_subtest("doorbell-stuck-at-exit")
		test_ring_stuck_at_exit();

	igt_describe("A process exits with logged work queued on a kernel-mode "
		     "queue: its file's close runs the work first (the fence "
		     "signals, both signals are logged), then the queue and "
		     "its logs go with the file, and the adapter logs on.");
	igt_subtest("logged-work-at-exit")
		test_logged_work_then_end(END_EXIT);

	igt_describe("A process is killed with logged work queued: nothing is "
		     "waited for, the rest of the work is dropped (the fence "
		     "stays at the first signal, the second is never "
		     "logged), and the adapter logs on.");
	igt_subtest("logged-work-killed")
		test_logged_work_then_end(END_SIGKILL);

	igt_describe("A process exits with work blocked on a fence that the "
		     "parent signals after the exit, within the exit wait: "
		     "the close waits, the work runs.");
	igt_subtest("blocked-work-released-after-exit")
		test_blocked_work_at_exit(RELEASE_PARENT);

	igt_describe("A process exits with work blocked on a fence that "
		     "another of its queues signals after a WORK: the queues "
		     "run during the close, the work runs.");
	igt_subtest("blocked-work-released-by-own-queue")
		test_blocked_work_at_exit(RELEASE_QUEUE);

	igt_describe("A process exits with work blocked on a fence that a "
		     "SYNCOBJ_SIGNAL it left pending signals once another "
		     "driver's dma_fence does, which the parent signals "
		     "within the exit wait: the pending signal acts during "
		     "the close, the work runs.");
	igt_subtest("blocked-work-released-by-syncobj")
		test_blocked_work_at_exit(RELEASE_SYNCOBJ);

	igt_describe("A process exits with a syncobj binding pending on a "
		     "value its blocked work reaches once the parent "
		     "releases it within the exit wait: the point is "
		     "published signaled, without -ECANCELED.");
	igt_subtest("bound-point-published-at-exit")
		test_blocked_work_at_exit(RELEASE_BOUND);

	igt_describe("A process exits with work blocked on a fence nobody "
		     "signals: the close gives up at the exit wait's bound "
		     "(TDR timeout, at most 2 s; not much later), the work is "
		     "dropped and its queue and device are gone.");
	igt_subtest("blocked-work-dropped-at-bound")
		test_blocked_work_at_exit(RELEASE_NONE);

	igt_fixture
		close(fd);
}
