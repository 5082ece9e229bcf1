// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/kthread.h>
#include <linux/pid.h>
#include <linux/sched.h>

#include <drm/drm_print.h>

#include "nfence_cmp.h"
#include "nfence_gpu.h"

/**
 * DOC: context management processor
 *
 * The CMP is the simulated GPU's scheduler: one kernel thread per adapter,
 * named "nfence-cmp/<index>". It sleeps in TASK_IDLE on its wait queue, so an
 * idle adapter costs no CPU time and does not add to the load average. Work
 * sources (doorbells, kernel-mode submissions, CPU fence signals) call
 * nfence_cmp_kick(), which sets a request bit and wakes the thread; the
 * thread clears the bit *before* it looks at the runlists, so a kick that
 * arrives while it works makes it look again and no request is lost.
 *
 * The thread is created with the GPU and stopped with it
 * (kthread_stop() waits for the current pass to finish).
 */

#define NFENCE_CMP_KICK	0

/*
 * One pass over the engines' runlists. Returns true if it did work, in which
 * case the caller makes another pass. The runlists (hardware queues) come with
 * the queue code; until then a pass finds nothing to run.
 */
static bool nfence_cmp_pass(struct nfence_cmp *cmp)
{
	atomic64_inc(&cmp->passes);
	return false;
}

static bool nfence_cmp_should_wake(struct nfence_cmp *cmp)
{
	return test_bit(NFENCE_CMP_KICK, &cmp->pending) ||
	       kthread_should_stop();
}

static int nfence_cmp_thread(void *data)
{
	struct nfence_cmp *cmp = data;

	while (!kthread_should_stop()) {
		wait_event_idle(cmp->wq, nfence_cmp_should_wake(cmp));
		if (!test_and_clear_bit(NFENCE_CMP_KICK, &cmp->pending))
			continue;

		atomic64_inc(&cmp->wakeups);
		WRITE_ONCE(cmp->busy, true);
		/* Pairs with the barrier implied by set_bit + wake_up. */
		smp_mb__after_atomic();
		while (nfence_cmp_pass(cmp) && !kthread_should_stop())
			cond_resched();
		WRITE_ONCE(cmp->busy, false);
	}
	return 0;
}

/**
 * nfence_cmp_start - start the CMP thread of a GPU
 * @cmp: the CMP
 * @gpu: the GPU it schedules
 * @name: thread name suffix
 *
 * Return: 0 or -errno.
 */
int nfence_cmp_start(struct nfence_cmp *cmp, struct nfence_gpu *gpu,
		     const char *name)
{
	struct task_struct *thread;

	cmp->gpu = gpu;
	cmp->pending = 0;
	cmp->busy = false;
	atomic64_set(&cmp->wakeups, 0);
	atomic64_set(&cmp->passes, 0);
	init_waitqueue_head(&cmp->wq);

	thread = kthread_run(nfence_cmp_thread, cmp, "nfence-cmp/%s", name);
	if (IS_ERR(thread))
		return PTR_ERR(thread);
	cmp->thread = thread;
	return 0;
}

/**
 * nfence_cmp_stop - stop the CMP thread
 * @cmp: a started CMP
 */
void nfence_cmp_stop(struct nfence_cmp *cmp)
{
	if (!cmp->thread)
		return;
	kthread_stop(cmp->thread);
	cmp->thread = NULL;
}

/**
 * nfence_cmp_kick - tell the CMP there may be work
 * @cmp: the CMP
 *
 * Safe from any context that may call wake_up().
 */
void nfence_cmp_kick(struct nfence_cmp *cmp)
{
	if (!test_and_set_bit(NFENCE_CMP_KICK, &cmp->pending))
		wake_up(&cmp->wq);
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
}
