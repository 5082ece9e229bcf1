// SPDX-License-Identifier: GPL-2.0-only
/*
 * Waiter-scaling benchmark for the CPU waiter structure (nfence_waitlist.c):
 * time per add, per remove and per signal with 10, 1,000 and 100,000
 * waiters on one fence, reported as ratios to the 10-waiter case measured in
 * the same run. It asserts only correctness; the numbers go to the log.
 * Run it with "make bench-waiters" (not part of "make check").
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/vmalloc.h>

#include "../nfence_waitlist.h"

struct bench_waiter {
	struct nfence_waiter w;
	unsigned int *fired;
};

static void bench_done(struct nfence_waiter *w)
{
	(*container_of(w, struct bench_waiter, w)->fired)++;
}

struct bench_result {
	u64 add_ns, remove_ns, signal_ns;
};

static void bench_one(struct kunit *test, unsigned int n,
		      struct bench_result *r)
{
	struct bench_waiter *bw;
	struct nfence_waitlist wl;
	unsigned int fired = 0, i;
	u64 cv = 0, mv, t0;

	bw = vzalloc(array_size(n, sizeof(*bw)));
	KUNIT_ASSERT_NOT_NULL(test, bw);
	nfence_waitlist_init(&wl, &cv, &mv);

	/* Add n waiters on random values, then remove them all. */
	for (i = 0; i < n; i++) {
		bw[i].fired = &fired;
		bw[i].w.done = bench_done;
		bw[i].w.value = 1 + get_random_u32_below(1u << 30);
	}
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		nfence_waitlist_add(&wl, &bw[i].w);
	r->add_ns = ktime_get_ns() - t0;
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&wl), n);

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		nfence_waitlist_remove(&wl, &bw[i].w);
	r->remove_ns = ktime_get_ns() - t0;
	KUNIT_EXPECT_EQ(test, mv, U64_MAX);

	/* Waiters on 1..n; n signals each release exactly one. */
	for (i = 0; i < n; i++) {
		bw[i].w.value = i + 1;
		nfence_waitlist_add(&wl, &bw[i].w);
	}
	t0 = ktime_get_ns();
	for (i = 1; i <= n; i++) {
		WRITE_ONCE(cv, i);
		/* The signal side: barrier, then the conditional check. */
		smp_mb();
		if (READ_ONCE(cv) > READ_ONCE(mv))
			nfence_waitlist_process(&wl);
	}
	r->signal_ns = ktime_get_ns() - t0;
	KUNIT_EXPECT_EQ(test, fired, n);
	KUNIT_EXPECT_EQ(test, mv, U64_MAX);
	vfree(bw);
}

static void waitlist_scaling(struct kunit *test)
{
	static const unsigned int sizes[] = { 10, 1000, 100000 };
	struct bench_result base = {}, r;
	unsigned int i, rep;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		unsigned int n = sizes[i];
		/* Repeat small sizes so that each row times >= 100,000 ops. */
		unsigned int reps = max(1u, 100000 / n);
		struct bench_result sum = {};

		for (rep = 0; rep < reps; rep++) {
			bench_one(test, n, &r);
			sum.add_ns += r.add_ns;
			sum.remove_ns += r.remove_ns;
			sum.signal_ns += r.signal_ns;
		}
		/* Per-op cost in picoseconds to keep precision. */
		r.add_ns = div64_u64(sum.add_ns * 1000, (u64)n * reps);
		r.remove_ns = div64_u64(sum.remove_ns * 1000, (u64)n * reps);
		r.signal_ns = div64_u64(sum.signal_ns * 1000, (u64)n * reps);
		if (!i)
			base = r;
		kunit_info(test,
			   "waiters %6u: add %llu.%03llu ns (x%llu.%02llu), remove %llu.%03llu ns (x%llu.%02llu), signal %llu.%03llu ns (x%llu.%02llu)\n",
			   n, r.add_ns / 1000, r.add_ns % 1000,
			   div64_u64(r.add_ns * 100, max(base.add_ns, 1ull)) / 100,
			   div64_u64(r.add_ns * 100, max(base.add_ns, 1ull)) % 100,
			   r.remove_ns / 1000, r.remove_ns % 1000,
			   div64_u64(r.remove_ns * 100, max(base.remove_ns, 1ull)) / 100,
			   div64_u64(r.remove_ns * 100, max(base.remove_ns, 1ull)) % 100,
			   r.signal_ns / 1000, r.signal_ns % 1000,
			   div64_u64(r.signal_ns * 100, max(base.signal_ns, 1ull)) / 100,
			   div64_u64(r.signal_ns * 100, max(base.signal_ns, 1ull)) % 100);
	}
}

static struct kunit_case nfencebench_waitlist_cases[] = {
	KUNIT_CASE_SLOW(waitlist_scaling),
	{}
};

static struct kunit_suite nfencebench_waitlist_suite = {
	.name = "nfencebench_waitlist",
	.test_cases = nfencebench_waitlist_cases,
};

kunit_test_suite(nfencebench_waitlist_suite);
