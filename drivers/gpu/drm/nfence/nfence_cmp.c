// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include <drm/drm_print.h>

#include "nfence_cmp.h"
#include "nfence_engine.h"
#include "nfence_gpu.h"

/**
 * DOC: context management processor
 *
 * The CMP is the simulated GPU's scheduler: one kernel thread per adapter,
 * named "nfence-cmp/<index>". It sleeps in TASK_IDLE on its wait queue, so an
 * idle adapter costs no CPU time and does not add to the load average. Work
 * sources (kernel-mode submissions, CPU fence signals, legacy waits and
 * signals completing, context resume) call nfence_cmp_kick(), which sets a
 * request bit and wakes the thread; the thread clears the bit *before* it
 * looks at the runlists, so a kick that arrives while it works makes it
 * look again and no request is lost. A WORK command that keeps an engine
 * busy sets a deadline: the thread sleeps on an hrtimer until the earliest
 * one, never polling.
 *
 * A pass gives each engine's runnable queues a turn, round robin, in the
 * engine's runlist order. A queue parked on FENCE_WAIT re-runs that command
 * on its turn; since every pass that changed memory (any command run) is
 * followed by another pass, a GPU signal on any engine releases GPU waiters
 * on every engine without the driver's interrupt path, and a CPU signal
 * does through the kick. Engines are simulated concurrently: a WORK command
 * occupies only its own engine, so WORK on two engines overlaps in time.
 *
 * Hang detection (TDR): a queue whose WORK command has run for the
 * adapter's tdr_timeout_ms (and that was not created with
 * DisableGpuTimeout) puts its device in error. Suspended contexts are
 * skipped at command boundaries; a WORK already started finishes.
 *
 * The thread is started once the GPU is up and stopped before it goes down
 * (by the driver, when it creates the adapter and at the DRM device's
 * release); kthread_stop() waits for the current pass to finish.
 *
 * The CMP is the simulated hardware: it knows queues, entries and
 * contexts only as their &struct nfence_cmp_queue, &struct
 * nfence_cmp_entry and &struct nfence_cmp_context, which the driver's
 * objects embed, and fences as opaque pointers. Everything it has to tell
 * the driver (a fence interrupt, a fault, a hang, a legacy entry reached or
 * done) goes through the &struct nfence_cmp_ops the driver registered.
 */

#define NFENCE_CMP_KICK	0

static bool nfence_queue_runnable(struct nfence_cmp_queue *q)
{
	switch (q->state) {
	case NFENCE_QUEUE_READY:
	case NFENCE_QUEUE_WAIT_FENCE:
	case NFENCE_QUEUE_WAIT_CPU:
		return !q->ctx->suspended;
	default:
		return false;
	}
}

/* Whether the hang timeout applies to @q's running WORK command. */
static bool nfence_cmp_tdr_applies(struct nfence_cmp *cmp,
				   struct nfence_cmp_queue *q)
{
	return cmp->tdr_ns && !q->no_timeout;
}

/* When a busy engine needs a look: its WORK ends, or its TDR fires. */
static void nfence_cmp_wake_at(struct nfence_cmp *cmp,
			       struct nfence_cmp_engine *e, u64 *deadline)
{
	struct nfence_cmp_queue *q = e->busy;
	u64 at = e->busy_until_ns;

	if (nfence_cmp_tdr_applies(cmp, q))
		at = min(at, q->work_start_ns + cmp->tdr_ns);
	if (!*deadline || at < *deadline)
		*deadline = at;
}

/* An engine whose WORK command is running: done, hung or still going. */
static bool nfence_cmp_engine_busy(struct nfence_cmp *cmp,
				   struct nfence_cmp_engine *e, u64 now,
				   u64 *deadline, struct list_head *dropped)
{
	struct nfence_cmp_queue *q = e->busy;

	if (nfence_cmp_tdr_applies(cmp, q) &&
	    now >= q->work_start_ns + cmp->tdr_ns && now < e->busy_until_ns) {
		atomic64_inc(&cmp->hangs);
		/* Stops @q, and so frees the engine. */
		cmp->ops->queue_hang(cmp, q, dropped);
		return false;
	}
	if (now < e->busy_until_ns) {
		nfence_cmp_wake_at(cmp, e, deadline);
		return true;
	}
	e->busy = NULL;
	q->state = NFENCE_QUEUE_READY;
	return false;
}

/*
 * One pass over the engines' runlists. Returns true if it ran anything, in
 * which case the caller makes another pass; *deadline is the earliest time
 * a busy engine needs a look again (0 for none).
 */
static bool nfence_cmp_pass(struct nfence_cmp *cmp, u64 *deadline)
{
	u64 now = ktime_get_ns();
	bool progress = false;
	LIST_HEAD(dropped);
	u32 i, n;

	atomic64_inc(&cmp->passes);
	*deadline = 0;
	mutex_lock(&cmp->lock);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++) {
		struct nfence_cmp_engine *e = &cmp->engines[i];

		if (e->busy && nfence_cmp_engine_busy(cmp, e, now, deadline,
						      &dropped))
			continue;

		for (n = e->num_queues; n && !e->busy; n--) {
			struct nfence_cmp_queue *q;
			unsigned int ran;
			int res;

			q = list_first_entry(&e->runlist, struct nfence_cmp_queue,
					     engine_link);
			list_move_tail(&q->engine_link, &e->runlist);
			if (!nfence_queue_runnable(q))
				continue;
			res = nfence_engine_run(cmp, e, q, now, &ran, &dropped);
			if (ran || res == NFENCE_RUN_FAULT)
				progress = true;
			if (res == NFENCE_RUN_BUSY)
				nfence_cmp_wake_at(cmp, e, deadline);
		}
	}
	mutex_unlock(&cmp->lock);
	if (!list_empty(&dropped)) {
		cmp->ops->entries_drop(&dropped);
		progress = true;
	}
	return progress;
}

/* Sleep until kicked, stopped, or @deadline (ns, 0 for none) passes. */
static void nfence_cmp_sleep(struct nfence_cmp *cmp, u64 deadline)
{
	DEFINE_WAIT(wait);

	for (;;) {
		prepare_to_wait(&cmp->wq, &wait, TASK_IDLE);
		if (test_bit(NFENCE_CMP_KICK, &cmp->pending) ||
		    kthread_should_stop())
			break;
		if (deadline) {
			ktime_t expires = ns_to_ktime(deadline);

			if (ktime_get_ns() >= deadline)
				break;
			schedule_hrtimeout_range(&expires, 20 * NSEC_PER_USEC,
						 HRTIMER_MODE_ABS);
		} else {
			schedule();
		}
	}
	finish_wait(&cmp->wq, &wait);
}

static int nfence_cmp_thread(void *data)
{
	struct nfence_cmp *cmp = data;
	u64 deadline = 0;

	while (!kthread_should_stop()) {
		nfence_cmp_sleep(cmp, deadline);
		if (kthread_should_stop())
			break;
		clear_bit(NFENCE_CMP_KICK, &cmp->pending);
		/* Pairs with the barrier implied by set_bit + wake_up. */
		smp_mb__after_atomic();

		atomic64_inc(&cmp->wakeups);
		WRITE_ONCE(cmp->busy, true);
		while (nfence_cmp_pass(cmp, &deadline) &&
		       !kthread_should_stop())
			cond_resched();
		WRITE_ONCE(cmp->busy, false);
	}
	return 0;
}

/**
 * nfence_cmp_init - set up a CMP's state, without its thread
 * @cmp: the CMP
 * @gpu: the GPU it schedules, whose configuration is set
 * @ops: the driver's callbacks
 *
 * KUnit drives a CMP set up this way by calling the engine directly.
 */
void nfence_cmp_init(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const struct nfence_cmp_ops *ops)
{
	u32 i;

	cmp->gpu = gpu;
	cmp->ops = ops;
	cmp->thread = NULL;
	cmp->pending = 0;
	cmp->busy = false;
	cmp->next_id = 0;
	cmp->tdr_ns = (u64)gpu->cfg.tdr_timeout_ms * NSEC_PER_MSEC;
	mutex_init(&cmp->lock);
	for (i = 0; i < NFENCE_MAX_ENGINES; i++) {
		INIT_LIST_HEAD(&cmp->engines[i].runlist);
		cmp->engines[i].busy = NULL;
		cmp->engines[i].num_queues = 0;
	}
	atomic64_set(&cmp->wakeups, 0);
	atomic64_set(&cmp->passes, 0);
	atomic64_set(&cmp->commands, 0);
	atomic64_set(&cmp->faults, 0);
	atomic64_set(&cmp->hangs, 0);
	init_waitqueue_head(&cmp->wq);
}

/**
 * nfence_cmp_start - start the CMP thread of a GPU
 * @cmp: the CMP
 * @gpu: the GPU it schedules
 * @ops: the driver's callbacks
 * @name: thread name suffix
 *
 * Return: 0 or -errno.
 */
int nfence_cmp_start(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const struct nfence_cmp_ops *ops, const char *name)
{
	struct task_struct *thread;

	nfence_cmp_init(cmp, gpu, ops);
	thread = kthread_run(nfence_cmp_thread, cmp, "nfence-cmp/%s", name);
	if (IS_ERR(thread)) {
		mutex_destroy(&cmp->lock);
		return PTR_ERR(thread);
	}
	cmp->thread = thread;
	return 0;
}

/**
 * nfence_cmp_stop - stop the CMP thread
 * @cmp: a started CMP; every queue is gone
 */
void nfence_cmp_stop(struct nfence_cmp *cmp)
{
	if (!cmp->thread)
		return;
	kthread_stop(cmp->thread);
	cmp->thread = NULL;
	mutex_destroy(&cmp->lock);
}

/**
 * nfence_cmp_kick - tell the CMP there may be work
 * @cmp: the CMP
 *
 * Safe from any context that may call wake_up(), with any nfence lock but
 * the wait queue's held.
 */
void nfence_cmp_kick(struct nfence_cmp *cmp)
{
	if (!test_and_set_bit(NFENCE_CMP_KICK, &cmp->pending))
		wake_up(&cmp->wq);
}

/**
 * nfence_cmp_queue_init - set up the CMP state of a new queue
 * @q: the queue's CMP state; the caller sets @q->engine, @q->ctx, @q->vm,
 *	@q->progress and @q->no_timeout before nfence_cmp_queue_add_locked()
 */
void nfence_cmp_queue_init(struct nfence_cmp_queue *q)
{
	INIT_LIST_HEAD(&q->engine_link);
	INIT_LIST_HEAD(&q->pending);
	q->num_pending = 0;
	q->state = NFENCE_QUEUE_IDLE;
}

/**
 * nfence_cmp_queue_add_locked - put a queue on its engine's runlist
 * @cmp: the CMP, whose lock is held
 * @q: a queue set up with nfence_cmp_queue_init()
 */
void nfence_cmp_queue_add_locked(struct nfence_cmp *cmp,
				 struct nfence_cmp_queue *q)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	lockdep_assert_held(&cmp->lock);
	q->id = ++cmp->next_id;
	list_add_tail(&q->engine_link, &e->runlist);
	e->num_queues++;
}

/**
 * nfence_cmp_queue_remove_locked - take a stopped queue off its runlist
 * @cmp: the CMP, whose lock is held
 * @q: a queue stopped with nfence_cmp_queue_stop_locked()
 */
void nfence_cmp_queue_remove_locked(struct nfence_cmp *cmp,
				    struct nfence_cmp_queue *q)
{
	lockdep_assert_held(&cmp->lock);
	list_del_init(&q->engine_link);
	cmp->engines[q->engine].num_queues--;
}

/**
 * nfence_cmp_queue_push_locked - append an entry to a queue
 * @cmp: the CMP, whose lock is held
 * @q: the queue, which has room and is not stopped
 * @entry: the entry; the queue owns it until it runs or is dropped
 *
 * The caller kicks the CMP once it has dropped the lock.
 */
void nfence_cmp_queue_push_locked(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q,
				  struct nfence_cmp_entry *entry)
{
	lockdep_assert_held(&cmp->lock);
	list_add_tail(&entry->link, &q->pending);
	q->num_pending++;
	if (q->state == NFENCE_QUEUE_IDLE)
		q->state = NFENCE_QUEUE_READY;
}

/**
 * nfence_cmp_queue_stop_locked - stop a queue for good
 * @cmp: the CMP, whose lock is held
 * @q: the queue
 * @state: %NFENCE_QUEUE_FAULTED or %NFENCE_QUEUE_LOST (for a destroyed
 *	queue, the state it had)
 * @dropped: its pending entries are moved here
 *
 * A device lost is worse than a fault: %NFENCE_QUEUE_LOST is never
 * replaced. A WORK command of @q that occupies its engine ends now.
 */
void nfence_cmp_queue_stop_locked(struct nfence_cmp *cmp,
				  struct nfence_cmp_queue *q, u32 state,
				  struct list_head *dropped)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	lockdep_assert_held(&cmp->lock);
	list_splice_tail_init(&q->pending, dropped);
	q->num_pending = 0;
	if (q->state != NFENCE_QUEUE_LOST)
		q->state = state;
	if (e->busy == q)
		e->busy = NULL;
}

/**
 * nfence_cmp_walk_queues_locked - call a function on every listed queue
 * @cmp: the CMP, whose lock is held
 * @fn: the function; it may stop the queue, not take it off its runlist
 * @data: passed to @fn
 */
void nfence_cmp_walk_queues_locked(struct nfence_cmp *cmp,
				   nfence_cmp_queue_fn_t fn, void *data)
{
	struct nfence_cmp_queue *q;
	u32 i;

	lockdep_assert_held(&cmp->lock);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++)
		list_for_each_entry(q, &cmp->engines[i].runlist, engine_link)
			fn(q, data);
}

/**
 * nfence_cmp_pid - the pid of the CMP thread
 * @cmp: the CMP
 *
 * Return: the thread's pid, 0 if it is not running.
 */
pid_t nfence_cmp_pid(struct nfence_cmp *cmp)
{
	return cmp->thread ? task_pid_nr(cmp->thread) : 0;
}

/**
 * nfence_cmp_print - describe the CMP for debugfs
 * @cmp: the CMP
 * @p: where to print
 */
void nfence_cmp_print(struct nfence_cmp *cmp, struct drm_printer *p)
{
	drm_printf(p, "state: %s\n", READ_ONCE(cmp->busy) ? "running" : "idle");
	drm_printf(p, "pid: %d\n", nfence_cmp_pid(cmp));
	drm_printf(p, "wakeups: %lld\n", (long long)atomic64_read(&cmp->wakeups));
	drm_printf(p, "passes: %lld\n", (long long)atomic64_read(&cmp->passes));
	drm_printf(p, "commands: %lld\n",
		   (long long)atomic64_read(&cmp->commands));
	drm_printf(p, "faults: %lld\n", (long long)atomic64_read(&cmp->faults));
	drm_printf(p, "hangs: %lld\n", (long long)atomic64_read(&cmp->hangs));
}

/**
 * nfence_cmp_print_queues - list every hardware queue for debugfs
 * @cmp: the CMP
 * @p: where to print
 */
void nfence_cmp_print_queues(struct nfence_cmp *cmp, struct drm_printer *p)
{
	struct nfence_cmp_queue *q;
	u32 i;

	mutex_lock(&cmp->lock);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++)
		list_for_each_entry(q, &cmp->engines[i].runlist, engine_link)
			cmp->ops->queue_print(q, p);
	mutex_unlock(&cmp->lock);
}
