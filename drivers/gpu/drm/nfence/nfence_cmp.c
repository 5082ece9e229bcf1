// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/bitops.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_cmp.h"
#include "nfence_cmp_doorbell.h"
#include "nfence_compat.h"
#include "nfence_engine.h"
#include "nfence_gpu.h"
#include "nfence_trace.h"
#include "nfence_vm.h"

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
 * engine's runlist order, the engines taking turns: as many turns as the
 * engine has queues, up to %NFENCE_ENGINE_BUDGET commands per turn and
 * %NFENCE_CMP_PASS_BUDGET per engine per pass (a turn runs only what is
 * left of its engine's), the rest in the next pass. The thread drops
 * &nfence_cmp.lock and reschedules after every turn that ran something,
 * and after every %NFENCE_CMP_VISIT_BUDGET queues it looked at (queues
 * parked on a FENCE_WAIT run nothing, but each looks at its fence), so no
 * client's load, however many queues and commands it has, holds the lock
 * (which every submission, queue teardown and file close takes) for more
 * than one turn and that many queues, or keeps the CPU without
 * rescheduling. The longest pass, the longest hold of the lock and the
 * most queues looked at under one hold are in debugfs (nfence_cmp). A
 * queue parked on FENCE_WAIT re-runs that command on its turn; since every
 * pass that changed memory (any command run) is followed by another pass,
 * a GPU signal on any engine releases GPU waiters on every engine without
 * the driver's interrupt path, and a CPU signal does through the kick. A
 * CPU signal kicks only while some queue is parked
 * (nfence_cmp_kick_waiters()): one that wakes only CPU waiters leaves the
 * thread asleep. Engines are simulated concurrently: a WORK command
 * occupies only its own engine, so WORK on two engines overlaps in time.
 *
 * A context's scheduling priority (-7 to 7, 0 by default; set with
 * %DRM_NFENCE_CONTEXT_OP_SET_PRIORITY) weighs the turns of its queues
 * against the other queues of their engine, without starving any. A queue
 * of priority p > 0 that ran something keeps the head of the runlist for
 * up to p more turns in a row (nfence_cmp_queue_turn_done()); a queue of
 * priority p < 0 yields its turn until 1 - p turns of other queues have run
 * on the engine since its last one (nfence_cmp_queue_yields()). A pass in
 * which a queue yielded and the engine ran nothing is followed by one in
 * which nobody yields, so a queue alone on its engine, or whose rivals are
 * all parked, runs after at most one empty pass. Against a queue of
 * priority 0, a queue of priority p gets 1 + p turns to its one, and a
 * queue of priority -p one turn to its 1 + p: 7 and -7 are eight to one.
 *
 * Hang detection (TDR): a queue whose WORK command has run for the
 * adapter's tdr_timeout_ms (and that was not created with
 * DisableGpuTimeout) puts its device in error. Suspended contexts are
 * skipped at command boundaries; a WORK already started finishes.
 *
 * The thread is started once the GPU is up and stopped before it goes down
 * (by the driver, when it creates the adapter and at the DRM device's
 * release, which never runs on the thread itself: DOC: the device's last
 * reference); kthread_stop() waits for the current pass to finish.
 *
 * The CMP is the simulated hardware: it knows queues, entries and
 * contexts only as their &struct nfence_cmp_queue, &struct
 * nfence_cmp_entry and &struct nfence_cmp_context, which the driver's
 * objects embed, and fences as opaque pointers. Everything it has to tell
 * the driver (a fence interrupt, a fault, a hang, a legacy entry reached or
 * done) goes through the &struct nfence_cmp_ops the driver registered.
 */

/*
 * After passes that found nothing to do: the doorbell watch's poll or its
 * going quiet. Returns true if another pass is due.
 */
static bool nfence_cmp_doorbells_idle(struct nfence_cmp *cmp, u64 *deadline)
{
	LIST_HEAD(dropped);
	bool rung;

	nfence_cmp_lock(cmp);
	rung = nfence_cmp_doorbell_idle_locked(cmp, deadline, &dropped);
	nfence_cmp_unlock(cmp);
	if (!list_empty(&dropped))
		cmp->ops->entries_drop(&dropped);
	return rung;
}

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
	nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_READY);
	return false;
}

/**
 * nfence_cmp_engine_f1_locked - an engine goes to F1
 * @cmp: the CMP, whose lock is held
 * @engine: the engine, whose rings the driver disconnects
 */
void nfence_cmp_engine_f1_locked(struct nfence_cmp *cmp, u32 engine)
{
	struct nfence_cmp_engine *e = &cmp->engines[engine];

	lockdep_assert_held(&cmp->lock);
	e->f1_asked_ns = 0;
	if (e->f1)
		return;
	e->f1 = true;
	atomic64_inc(&cmp->f1s);
}

/**
 * nfence_cmp_engine_f0_locked - an engine comes back to F0
 * @cmp: the CMP, whose lock is held
 * @engine: the engine, which was asked for work (a connect, a submission)
 */
void nfence_cmp_engine_f0_locked(struct nfence_cmp *cmp, u32 engine)
{
	struct nfence_cmp_engine *e = &cmp->engines[engine];

	lockdep_assert_held(&cmp->lock);
	e->active_ns = ktime_get_ns();
	if (!e->f1)
		return;
	e->f1 = false;
	atomic64_inc(&cmp->f0s);
}

/**
 * nfence_cmp_idle_locked - whether the whole adapter is idle
 * @cmp: the CMP, whose lock is held
 *
 * Asked at the end of every CMP cycle, so it walks no runlist: the
 * engines' &nfence_cmp_engine.num_not_idle counts the busy queues.
 *
 * Return: true if no doorbell is watched, no WORK runs, and every queue
 * that can still run has nothing queued (a queue of a suspended context
 * with work queued counts as busy: resuming it must not need a wake-up).
 */
NFENCE_VISIBLE_IF_KUNIT bool nfence_cmp_idle_locked(struct nfence_cmp *cmp)
{
	u32 i;

	lockdep_assert_held(&cmp->lock);
	if (cmp->num_connected && !cmp->quiet)
		return false;
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++)
		if (cmp->engines[i].busy || cmp->engines[i].num_not_idle)
			return false;
	return true;
}

/**
 * nfence_cmp_d3_enter - start the adapter's D0 to D3 transition
 * @cmp: the CMP
 *
 * The first step of a runtime suspend (see DOC: adapter power in
 * nfence_pm.c): if the adapter is idle, the CMP runs nothing and watches
 * no doorbell from now on, as WDDM's DxgkddiSuspendContext of every
 * context takes them off the hardware scheduler. The driver then
 * disconnects the doorbells and calls nfence_cmp_d3_commit().
 *
 * Return: 0, or -EBUSY if the adapter is not idle (nothing changed).
 */
int nfence_cmp_d3_enter(struct nfence_cmp *cmp)
{
	int ret = 0;

	nfence_cmp_lock(cmp);
	if (nfence_cmp_idle_locked(cmp))
		cmp->d3 = true;
	else
		ret = -EBUSY;
	nfence_cmp_unlock(cmp);
	return ret;
}

/**
 * nfence_cmp_d3_commit - finish the D0 to D3 transition
 * @cmp: the CMP, after nfence_cmp_d3_enter()
 *
 * The last look at the doorbells as they were disconnected may have found
 * work: then the transition is undone.
 *
 * Return: 0 (in D3), or -EBUSY (back in D0, the CMP kicked).
 */
int nfence_cmp_d3_commit(struct nfence_cmp *cmp)
{
	int ret = 0;

	nfence_cmp_lock(cmp);
	if (nfence_cmp_idle_locked(cmp)) {
		atomic64_inc(&cmp->d3s);
	} else {
		cmp->d3 = false;
		ret = -EBUSY;
	}
	nfence_cmp_unlock(cmp);
	if (ret)
		nfence_cmp_kick(cmp);
	return ret;
}

/**
 * nfence_cmp_d3_exit - the adapter is back in D0
 * @cmp: the CMP
 *
 * Queues run again; doorbells stay disconnected until connected.
 */
void nfence_cmp_d3_exit(struct nfence_cmp *cmp)
{
	nfence_cmp_lock(cmp);
	if (cmp->d3) {
		cmp->d3 = false;
		atomic64_inc(&cmp->d0s);
	}
	nfence_cmp_unlock(cmp);
	nfence_cmp_kick(cmp);
}

/**
 * nfence_cmp_engine_idle_locked - whether an engine may go to F1
 * @cmp: the CMP, whose lock is held
 * @e: one of @cmp's engines
 *
 * Asked every CMP cycle, so from the engine's counts, not its runlist.
 *
 * Return: true if @e runs nothing, has nothing to run, and has a connected
 * doorbell of a queue that can still run.
 */
NFENCE_VISIBLE_IF_KUNIT bool
nfence_cmp_engine_idle_locked(struct nfence_cmp *cmp,
			      struct nfence_cmp_engine *e)
{
	lockdep_assert_held(&cmp->lock);
	return !e->busy && !e->num_not_idle && e->num_bound;
}

/**
 * nfence_cmp_engine_f1_due_locked - whether the CMP's ask for F1 stands
 * @cmp: the CMP, whose lock is held
 * @engine: an engine the CMP asked F1 for (&nfence_cmp_ops.engine_idle)
 *
 * The CMP asks without its lock held, and the driver acts later: anything
 * that made the engine active since the ask (a connect, a kernel-mode
 * submission, a ring, a command run: its &nfence_cmp_engine.active_ns is
 * the ask's time or later) cancels it, and so does the engine no longer
 * being idle with connected doorbells. A cancelled ask is withdrawn; the
 * CMP asks again once the engine has been idle for f1_idle_ms, when next
 * kicked.
 *
 * Return: true if the driver is to put @engine in F1 now.
 */
bool nfence_cmp_engine_f1_due_locked(struct nfence_cmp *cmp, u32 engine)
{
	struct nfence_cmp_engine *e = &cmp->engines[engine];

	lockdep_assert_held(&cmp->lock);
	/* Not asked (0), or answered already: nothing is before 0. */
	if (e->active_ns < e->f1_asked_ns &&
	    nfence_cmp_engine_idle_locked(cmp, e))
		return true;
	e->f1_asked_ns = 0;
	return false;
}

/*
 * After passes that found nothing to do: ask the driver for F1 on every
 * engine idle for f1_idle_ms (see DOC: doorbells), or set *@deadline to
 * when the next one will be.
 */
static void nfence_cmp_f1_check(struct nfence_cmp *cmp, u64 *deadline)
{
	u64 idle_ns = (u64)cmp->gpu->cfg.f1_idle_ms * NSEC_PER_MSEC;
	unsigned long ask = 0;
	u64 now, due;
	u32 i;

	if (!idle_ns || !cmp->ops->engine_idle)
		return;
	now = ktime_get_ns();
	nfence_cmp_lock(cmp);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++) {
		struct nfence_cmp_engine *e = &cmp->engines[i];

		if (e->f1 || e->f1_asked_ns ||
		    !nfence_cmp_engine_idle_locked(cmp, e))
			continue;
		due = e->active_ns + idle_ns;
		if (now >= due) {
			e->f1_asked_ns = now;
			ask |= BIT(i);
		} else if (!*deadline || due < *deadline) {
			*deadline = due;
		}
	}
	nfence_cmp_unlock(cmp);
	for_each_set_bit(i, &ask, NFENCE_MAX_ENGINES)
		cmp->ops->engine_idle(cmp, i);
}

/*
 * Whether @q, runnable, yields its turn on @e: a negative priority p lets
 * it run once 1 - p turns of other queues have run since its last one.
 */
static bool nfence_cmp_queue_yields(struct nfence_cmp_engine *e,
				    const struct nfence_cmp_queue *q)
{
	int prio = q->ctx->priority;

	if (prio >= 0 || e->no_yield ||
	    e->turns - q->last_turn >= (u32)(1 - prio))
		return false;
	e->yielded = true;
	return true;
}

/*
 * @q, just moved to the tail of @e's runlist, ran something: count the
 * turn, and give a queue of positive priority p the head back for up to p
 * turns in a row.
 */
static void nfence_cmp_queue_turn_done(struct nfence_cmp_engine *e,
				       struct nfence_cmp_queue *q)
{
	q->last_turn = ++e->turns;
	if (q->streak < max_t(int, q->ctx->priority, 0)) {
		q->streak++;
		list_move(&q->engine_link, &e->runlist);
	} else {
		q->streak = 0;
	}
}

/*
 * The next turn on @e in this pass: its runlist's next runnable queue runs
 * until it yields, visiting at most *@left more queues and running at most
 * *@budget more commands in this pass; *@ran_total adds the commands it
 * ran. *@visits counts the queues it looks at under this hold of the lock,
 * up to %NFENCE_CMP_VISIT_BUDGET. True if a queue ran something.
 */
static bool nfence_cmp_engine_turn(struct nfence_cmp *cmp,
				   struct nfence_cmp_engine *e, u32 *left,
				   unsigned int *budget, u32 *ran_total,
				   u32 *visits, u64 now, u64 *deadline,
				   struct list_head *dropped, bool *progress)
{
	while (*left && *budget && *visits < NFENCE_CMP_VISIT_BUDGET &&
	       !e->busy && !list_empty(&e->runlist)) {
		struct nfence_cmp_queue *q;
		unsigned int ran;
		int res;

		q = list_first_entry(&e->runlist, struct nfence_cmp_queue,
				     engine_link);
		list_move_tail(&q->engine_link, &e->runlist);
		(*left)--;
		(*visits)++;
		if (!nfence_queue_runnable(q) || nfence_cmp_queue_yields(e, q)) {
			q->streak = 0;
			continue;
		}
		res = nfence_engine_run(cmp, e, q, now, *budget, &ran, dropped);
		if (ran || res == NFENCE_RUN_FAULT)
			*progress = true;
		if (res == NFENCE_RUN_BUSY)
			nfence_cmp_wake_at(cmp, e, deadline);
		if (!ran) {
			q->streak = 0;
			continue;
		}
		nfence_cmp_queue_turn_done(e, q);
		e->active_ns = now;
		*budget -= min(ran, *budget);
		*ran_total += ran;
		return true;
	}
	return false;
}

/* The lock is about to be dropped after *@visits queue turns: keep the most. */
static void nfence_cmp_visits_done(struct nfence_cmp *cmp, u32 *visits)
{
	if (*visits > cmp->max_visits)
		WRITE_ONCE(cmp->max_visits, *visits);
	*visits = 0;
}

/*
 * One pass over the engines' runlists. Returns true if it ran anything, in
 * which case the caller makes another pass; *deadline is the earliest time
 * a busy engine needs a look again (0 for none).
 *
 * The engines take turns, as engines running side by side would: one queue
 * turn on each engine in order, then again, until no engine has a queue
 * left to run or budget left (%NFENCE_CMP_PASS_BUDGET commands per engine
 * per pass, the last turn cut to what is left; the runlist's rotation
 * gives the next queues their turns in the next pass). &nfence_cmp.lock
 * is dropped, and the thread reschedules, after every turn that ran
 * something, and after every %NFENCE_CMP_VISIT_BUDGET queues looked at
 * under one hold: queues parked on a FENCE_WAIT, which run nothing, get
 * their turns in slices. A slice ends where the runlist's
 * rotation left it (each queue looked at goes to the tail), so the next one
 * goes on with the queues after it. The optimized interrupts are raised at
 * the end of the pass, one per engine that needs one
 * (nfence_engine_raise_queue_irq()), and the interrupt that needs a scan
 * of every fence once, after the pass (nfence_engine_flush()).
 */
static bool nfence_cmp_pass(struct nfence_cmp *cmp, u64 *deadline)
{
	u32 left[NFENCE_MAX_ENGINES], ran_total[NFENCE_MAX_ENGINES];
	unsigned int budget[NFENCE_MAX_ENGINES];
	u64 start = ktime_get_ns(), now = start;
	bool progress = false, ran;
	LIST_HEAD(dropped);
	u32 i, visits = 0;

	atomic64_inc(&cmp->passes);
	*deadline = 0;
	nfence_cmp_lock(cmp);
	/* Even in D3: its CPU waiters must not wait for D0. */
	nfence_engine_peer_wakes(cmp);
	if (cmp->d3) {
		/* Off the hardware scheduler until D0. */
		nfence_cmp_unlock(cmp);
		nfence_engine_flush(cmp);
		return false;
	}
	if (nfence_cmp_doorbell_look_locked(cmp, now, &dropped))
		progress = true;
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++) {
		struct nfence_cmp_engine *e = &cmp->engines[i];

		left[i] = 0;
		ran_total[i] = 0;
		budget[i] = NFENCE_CMP_PASS_BUDGET;
		e->yielded = false;
		if (!e->busy || !nfence_cmp_engine_busy(cmp, e, now, deadline,
							&dropped))
			left[i] = e->num_queues;
	}
	do {
		ran = false;
		for (i = 0; i < cmp->gpu->cfg.num_engines && !cmp->d3; i++) {
			if (!nfence_cmp_engine_turn(cmp, &cmp->engines[i],
						    &left[i], &budget[i],
						    &ran_total[i], &visits,
						    now, deadline, &dropped,
						    &progress) &&
			    visits < NFENCE_CMP_VISIT_BUDGET)
				continue;
			ran = true;
			/*
			 * Other clients' ioctls get the lock between turns
			 * that ran something, and after every
			 * NFENCE_CMP_VISIT_BUDGET queues looked at.
			 */
			nfence_cmp_visits_done(cmp, &visits);
			nfence_cmp_unlock(cmp);
			cond_resched();
			nfence_cmp_lock(cmp);
			now = ktime_get_ns();
			/*
			 * Between turns too: a parked queue sees another
			 * GPU's signal in memory before its id is taken, so
			 * a long pass would let the ids pile up.
			 */
			nfence_engine_peer_wakes(cmp);
		}
	} while (ran && !cmp->d3);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++) {
		struct nfence_cmp_engine *e = &cmp->engines[i];

		nfence_engine_raise_queue_irq(cmp, e);
		if (ran_total[i] > cmp->max_pass_commands)
			WRITE_ONCE(cmp->max_pass_commands, ran_total[i]);
		/* A yield must not leave the engine idle: see DOC. */
		e->no_yield = e->yielded && !ran_total[i];
		if (e->no_yield)
			progress = true;
	}
	nfence_cmp_visits_done(cmp, &visits);
	nfence_cmp_unlock(cmp);
	nfence_engine_flush(cmp);
	if (!list_empty(&dropped)) {
		cmp->ops->entries_drop(&dropped);
		progress = true;
	}
	now = ktime_get_ns() - start;
	if (now > READ_ONCE(cmp->max_pass_ns))
		WRITE_ONCE(cmp->max_pass_ns, now);
	return progress;
}

#if IS_ENABLED(CONFIG_DRM_NFENCE_KUNIT_TEST)
/**
 * nfence_cmp_run_pass - make one pass, as the CMP thread does
 * @cmp: a CMP set up with nfence_cmp_init(), without its thread
 * @deadline: out: the earliest time a busy engine needs a look again
 *
 * Return: true if the pass ran anything.
 */
bool nfence_cmp_run_pass(struct nfence_cmp *cmp, u64 *deadline)
{
	return nfence_cmp_pass(cmp, deadline);
}
#endif

/* Before sleeping: tell the driver if the whole adapter is idle. */
static void nfence_cmp_idle_check(struct nfence_cmp *cmp)
{
	bool idle;

	if (!cmp->ops->adapter_idle)
		return;
	/* Watching doorbells (a spin, a poll): not idle, no lock to take. */
	if (READ_ONCE(cmp->num_connected) && !READ_ONCE(cmp->quiet))
		return;
	nfence_cmp_lock(cmp);
	idle = !cmp->d3 && nfence_cmp_idle_locked(cmp);
	nfence_cmp_unlock(cmp);
	if (idle)
		cmp->ops->adapter_idle(cmp);
}

/*
 * Sleep until kicked, stopped, or @deadline (ns, 0 for none) passes; false
 * if it did not sleep at all (a deadline already due: a doorbell spin).
 */
static bool nfence_cmp_sleep(struct nfence_cmp *cmp, u64 deadline)
{
	DEFINE_WAIT(wait);
	bool slept = false;

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
		slept = true;
	}
	finish_wait(&cmp->wq, &wait);
	return slept;
}

/*
 * A CMP whose peer doorbell was written to lately looks again at once,
 * without sleeping, until &nfence_cmp.peer_until_ns: GPUs that bounce a
 * fence keep each other's CMP awake, as the interrupt path's work keeps a
 * CMP thread busy (DOC: peer signals).
 */
static void nfence_cmp_peer_watch(struct nfence_cmp *cmp, u64 *deadline)
{
	u64 now = ktime_get_ns();

	if (now < READ_ONCE(cmp->peer_until_ns) &&
	    (!*deadline || now < *deadline))
		*deadline = now;
}

static int nfence_cmp_thread(void *data)
{
	struct nfence_cmp *cmp = data;
	bool slept, kicked;
	u64 deadline = 0;

	while (!kthread_should_stop()) {
		slept = nfence_cmp_sleep(cmp, deadline);
		if (kthread_should_stop())
			break;
		/* A full barrier; pairs with the one of set_bit + wake_up. */
		kicked = test_and_clear_bit(NFENCE_CMP_KICK, &cmp->pending);

		if (slept || kicked)
			atomic64_inc(&cmp->wakeups);
		else
			cond_resched();	/* a doorbell spin */
		WRITE_ONCE(cmp->busy, true);
		do {
			while (nfence_cmp_pass(cmp, &deadline) &&
			       !kthread_should_stop())
				cond_resched();
		} while (nfence_cmp_doorbells_idle(cmp, &deadline) &&
			 !kthread_should_stop());
		nfence_cmp_peer_watch(cmp, &deadline);
		nfence_cmp_f1_check(cmp, &deadline);
		nfence_cmp_idle_check(cmp);
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
	atomic_set(&cmp->num_parked, 0);
	cmp->next_id = 0;
	cmp->tdr_ns = (u64)gpu->cfg.tdr_timeout_ms * NSEC_PER_MSEC;
	mutex_init(&cmp->lock);
	for (i = 0; i < NFENCE_MAX_ENGINES; i++) {
		INIT_LIST_HEAD(&cmp->engines[i].runlist);
		cmp->engines[i].busy = NULL;
		cmp->engines[i].num_queues = 0;
		cmp->engines[i].num_not_idle = 0;
		cmp->engines[i].num_bound = 0;
		cmp->engines[i].f1 = false;
		cmp->engines[i].f1_asked_ns = 0;
		cmp->engines[i].active_ns = 0;
	}
	atomic64_set(&cmp->wakeups, 0);
	atomic64_set(&cmp->passes, 0);
	atomic64_set(&cmp->commands, 0);
	atomic64_set(&cmp->faults, 0);
	atomic64_set(&cmp->hangs, 0);
	atomic64_set(&cmp->rings, 0);
	atomic64_set(&cmp->quiets, 0);
	atomic64_set(&cmp->spins, 0);
	atomic64_set(&cmp->polls_total, 0);
	atomic64_set(&cmp->f1s, 0);
	atomic64_set(&cmp->f0s, 0);
	atomic64_set(&cmp->d3s, 0);
	atomic64_set(&cmp->d0s, 0);
	cmp->d3 = false;
	memset(cmp->doorbells, 0, sizeof(cmp->doorbells));
	cmp->num_connected = 0;
	INIT_LIST_HEAD(&cmp->bound);
	cmp->watch_until_ns = 0;
	cmp->rung_ns = 0;
	cmp->peer_until_ns = 0;
	cmp->dry_ns = 0;
	cmp->spin_until_ns = 0;
	cmp->polls = 0;
	cmp->quiet = false;
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
	thread = kthread_create(nfence_cmp_thread, cmp, "nfence-cmp/%s", name);
	if (IS_ERR(thread)) {
		mutex_destroy(&cmp->lock);
		return PTR_ERR(thread);
	}
	/* Known before its first pass (nfence_cmp_current()). */
	WRITE_ONCE(cmp->thread, thread);
	wake_up_process(thread);
	return 0;
}

/**
 * nfence_cmp_stop - stop the CMP thread
 * @cmp: a started CMP; every queue is gone
 *
 * Once the thread has ended, &nfence_cmp_ops.stopped cleans up after its
 * callbacks; then the CMP's lock goes. A second call does nothing.
 */
void nfence_cmp_stop(struct nfence_cmp *cmp)
{
	if (!cmp->thread)
		return;
	kthread_stop(cmp->thread);
	WRITE_ONCE(cmp->thread, NULL);
	/*
	 * A callback made just before the stop may have queued work after
	 * its owner last cancelled it: cancelled now, once nothing queues it.
	 */
	if (cmp->ops->stopped)
		cmp->ops->stopped(cmp);
	mutex_destroy(&cmp->lock);
}

/**
 * nfence_cmp_current - whether the caller is the CMP thread
 * @cmp: the CMP
 *
 * Asked by code that must not, on the CMP thread, do what waits for that
 * thread to end (nfence_adapter_put()). KUnit stubs it.
 *
 * Return: true on @cmp's thread, false elsewhere and once it is stopped.
 */
bool nfence_cmp_current(struct nfence_cmp *cmp)
{
	NFENCE_KUNIT_STUB(nfence_cmp_current, cmp);
	return READ_ONCE(cmp->thread) == current;
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
	NFENCE_KUNIT_STUB(nfence_cmp_kick, cmp);
	if (!test_and_set_bit(NFENCE_CMP_KICK, &cmp->pending))
		wake_up(&cmp->wq);
}

/**
 * nfence_cmp_kick_waiters - tell the CMP that the CPU signaled a fence
 * @cmp: the CMP of the fence's adapter
 *
 * Called after the signal's store to CurrentValue. Only a queue parked on
 * a FENCE_WAIT can care, so the CMP is kicked only while one is
 * (&nfence_cmp.num_parked): a CPU signal with no GPU waiter does not wake
 * the CMP thread, which would otherwise compete with the CPU waiter it
 * releases. The engine counts a queue before it looks at the fence a last
 * time, and this reads the count after the store, each with a full
 * barrier between: either the engine's look sees the value, or this sees
 * the count and kicks.
 *
 * Safe from the contexts nfence_cmp_kick() is.
 */
void nfence_cmp_kick_waiters(struct nfence_cmp *cmp)
{
	/* Order the CurrentValue store before the load of the count. */
	smp_mb();
	if (atomic_read(&cmp->num_parked))
		nfence_cmp_kick(cmp);
}

/**
 * nfence_cmp_queue_init - set up the CMP state of a new queue
 * @q: the queue's CMP state; the caller sets @q->engine, @q->ctx, @q->vm,
 *	@q->progress and @q->no_timeout before nfence_cmp_queue_add_locked()
 */
void nfence_cmp_queue_init(struct nfence_cmp_queue *q)
{
	INIT_LIST_HEAD(&q->engine_link);
	INIT_LIST_HEAD(&q->bound_link);
	INIT_LIST_HEAD(&q->pending);
	q->num_pending = 0;
	q->state = NFENCE_QUEUE_IDLE;
	q->ring = NULL;
	q->parked = false;
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
	/* Whatever its priority, a new queue does not yield its first turn. */
	q->streak = 0;
	q->last_turn = e->turns - (u32)(1 - DRM_NFENCE_CONTEXT_PRIORITY_MIN);
	list_add_tail(&q->engine_link, &e->runlist);
	e->num_queues++;
	nfence_cmp_queue_count_locked(cmp, q);
}

/**
 * nfence_cmp_queue_remove_locked - take a stopped queue off its runlist
 * @cmp: the CMP, whose lock is held
 * @q: a queue stopped with nfence_cmp_queue_stop_locked()
 */
void nfence_cmp_queue_remove_locked(struct nfence_cmp *cmp,
				    struct nfence_cmp_queue *q)
{
	struct nfence_cmp_engine *e = &cmp->engines[q->engine];

	lockdep_assert_held(&cmp->lock);
	/* An optimized interrupt naming it (or its engine) goes first. */
	if (e->irq_queue)
		nfence_engine_raise_queue_irq(cmp, e);
	nfence_cmp_queue_uncount_locked(cmp, q);
	/* Its ring is detached first: a queue still bound would be freed there. */
	if (WARN_ON_ONCE(!list_empty(&q->bound_link)))
		list_del_init(&q->bound_link);
	list_del_init(&q->engine_link);
	e->num_queues--;
	/* Its engine's last queue gone: a count left over is a change missed. */
	WARN_ON_ONCE(!e->num_queues && (e->num_not_idle || e->num_bound));
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
		nfence_cmp_queue_set_state_locked(cmp, q, NFENCE_QUEUE_READY);
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
	if (q->ring)
		nfence_cmp_ring_stop_locked(q);
	list_splice_tail_init(&q->pending, dropped);
	q->num_pending = 0;
	nfence_engine_queue_unpark_locked(cmp, q);
	if (q->state != NFENCE_QUEUE_LOST)
		nfence_cmp_queue_set_state_locked(cmp, q, state);
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

	NFENCE_KUNIT_STUB(nfence_cmp_walk_queues_locked, cmp, fn, data);
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
 * nfence_cmp_reset_max - start measuring the CMP's maxima anew
 * @cmp: the CMP
 *
 * The longest pass and lock hold, the most queue turns under one hold, the
 * most commands one engine ran in one pass, and the most fences a scan
 * looked at under one hold of the fence table's lock
 * (&nfence_irq_stats.max_scan).
 */
void nfence_cmp_reset_max(struct nfence_cmp *cmp)
{
	nfence_cmp_lock(cmp);
	WRITE_ONCE(cmp->max_pass_ns, 0);
	cmp->max_hold_ns = 0;
	WRITE_ONCE(cmp->max_visits, 0);
	WRITE_ONCE(cmp->max_pass_commands, 0);
	WRITE_ONCE(cmp->gpu->irq_stats.max_scan, 0);
	nfence_cmp_unlock(cmp);
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
	drm_printf(p, "parked: %d\n", atomic_read(&cmp->num_parked));
	drm_printf(p, "commands: %lld\n",
		   (long long)atomic64_read(&cmp->commands));
	drm_printf(p, "faults: %lld\n", (long long)atomic64_read(&cmp->faults));
	drm_printf(p, "hangs: %lld\n", (long long)atomic64_read(&cmp->hangs));
	drm_printf(p, "rings: %lld\n", (long long)atomic64_read(&cmp->rings));
	drm_printf(p, "quiets: %lld\n", (long long)atomic64_read(&cmp->quiets));
	drm_printf(p, "spins: %lld\n", (long long)atomic64_read(&cmp->spins));
	drm_printf(p, "polls: %lld\n",
		   (long long)atomic64_read(&cmp->polls_total));
	drm_printf(p, "f1s: %lld\n", (long long)atomic64_read(&cmp->f1s));
	drm_printf(p, "f0s: %lld\n", (long long)atomic64_read(&cmp->f0s));
	drm_printf(p, "d3s: %lld\n", (long long)atomic64_read(&cmp->d3s));
	drm_printf(p, "d0s: %lld\n", (long long)atomic64_read(&cmp->d0s));
	drm_printf(p, "power: %s\n", READ_ONCE(cmp->d3) ? "D3" : "D0");
	drm_printf(p, "longest_pass_us: %llu\n",
		   div_u64(READ_ONCE(cmp->max_pass_ns), NSEC_PER_USEC));
	drm_printf(p, "longest_hold_us: %llu\n",
		   div_u64(READ_ONCE(cmp->max_hold_ns), NSEC_PER_USEC));
	drm_printf(p, "longest_visits: %u\n", READ_ONCE(cmp->max_visits));
	drm_printf(p, "most_pass_commands: %u\n",
		   READ_ONCE(cmp->max_pass_commands));
	drm_printf(p, "doorbells: %u%s\n", cmp->num_connected,
		   cmp->num_connected && READ_ONCE(cmp->quiet) ? " quiet" : "");
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

	nfence_cmp_lock(cmp);
	for (i = 0; i < cmp->gpu->cfg.num_engines; i++)
		list_for_each_entry(q, &cmp->engines[i].runlist, engine_link)
			cmp->ops->queue_print(q, p);
	nfence_cmp_unlock(cmp);
}
