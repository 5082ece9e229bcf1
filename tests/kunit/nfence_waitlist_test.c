// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the CPU waiter structure and MonitoredValue
 * (nfence_waitlist.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/random.h>

#include "../nfence_fence.h"
#include "../nfence_waitlist.h"

struct wl_test {
	struct nfence_waitlist wl;
	u64 cv;
	u64 mv;
	unsigned int done;
};

struct test_waiter {
	struct nfence_waiter w;
	struct wl_test *t;
	bool fired;
};

static void test_done(struct nfence_waiter *w)
{
	struct test_waiter *tw = container_of(w, struct test_waiter, w);

	tw->fired = true;
	tw->t->done++;
}

static struct test_waiter *waiters(struct kunit *test, struct wl_test *t,
				   unsigned int n)
{
	struct test_waiter *tw;
	unsigned int i;

	tw = kunit_kcalloc(test, n, sizeof(*tw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tw);
	for (i = 0; i < n; i++) {
		tw[i].t = t;
		tw[i].w.done = test_done;
	}
	return tw;
}

static struct wl_test *wl_setup(struct kunit *test, u64 cv)
{
	struct wl_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->cv = cv;
	t->mv = 12345;
	nfence_waitlist_init(&t->wl, &t->cv, &t->mv);
	return t;
}

static void waitlist_no_waiter_is_max(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 7);

	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 0);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 0);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
}

static void waitlist_mv_is_least_minus_one(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 10);
	struct test_waiter *w = waiters(test, t, 3);

	w[0].w.value = 50;
	w[1].w.value = 20;
	w[2].w.value = 30;
	KUNIT_EXPECT_FALSE(test, nfence_waitlist_add(&t->wl, &w[0].w));
	KUNIT_EXPECT_EQ(test, t->mv, 49);
	KUNIT_EXPECT_FALSE(test, nfence_waitlist_add(&t->wl, &w[1].w));
	KUNIT_EXPECT_EQ(test, t->mv, 19);
	KUNIT_EXPECT_FALSE(test, nfence_waitlist_add(&t->wl, &w[2].w));
	KUNIT_EXPECT_EQ(test, t->mv, 19);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 3);

	/* Waiters leaving restore MonitoredValue, up to U64_MAX. */
	nfence_waitlist_remove(&t->wl, &w[1].w);
	KUNIT_EXPECT_EQ(test, t->mv, 29);
	nfence_waitlist_remove(&t->wl, &w[0].w);
	KUNIT_EXPECT_EQ(test, t->mv, 29);
	nfence_waitlist_remove(&t->wl, &w[2].w);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, t->done, 0);
	/* Removing a waiter that is not queued is harmless. */
	nfence_waitlist_remove(&t->wl, &w[2].w);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 0);
}

static void waitlist_already_reached(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 100);
	struct test_waiter *w = waiters(test, t, 2);

	w[0].w.value = 100;
	w[1].w.value = 0;
	KUNIT_EXPECT_TRUE(test, nfence_waitlist_add(&t->wl, &w[0].w));
	KUNIT_EXPECT_TRUE(test, nfence_waitlist_add(&t->wl, &w[1].w));
	KUNIT_EXPECT_TRUE(test, w[0].fired && w[1].fired);
	KUNIT_EXPECT_FALSE(test, w[0].w.queued);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 0);
}

static void waitlist_process_releases_reached(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, 4);
	static const u64 values[] = { 5, 10, 10, 15 };
	int i;

	for (i = 0; i < 4; i++) {
		w[i].w.value = values[i];
		nfence_waitlist_add(&t->wl, &w[i].w);
	}
	KUNIT_EXPECT_EQ(test, t->mv, 4);

	/* A signal below the least value releases nobody. */
	WRITE_ONCE(t->cv, 4);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 0);
	KUNIT_EXPECT_EQ(test, t->mv, 4);

	WRITE_ONCE(t->cv, 10);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 3);
	KUNIT_EXPECT_TRUE(test, w[0].fired && w[1].fired && w[2].fired);
	KUNIT_EXPECT_FALSE(test, w[3].fired);
	KUNIT_EXPECT_EQ(test, t->mv, 14);

	WRITE_ONCE(t->cv, U64_MAX);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 1);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, t->done, 4);
}

static void waitlist_extreme_values(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, 2);

	w[0].w.value = U64_MAX;
	w[1].w.value = 1ull << 63;
	nfence_waitlist_add(&t->wl, &w[0].w);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX - 1);
	nfence_waitlist_add(&t->wl, &w[1].w);
	KUNIT_EXPECT_EQ(test, t->mv, (1ull << 63) - 1);

	WRITE_ONCE(t->cv, 1ull << 63);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 1);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX - 1);
	WRITE_ONCE(t->cv, U64_MAX);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 1);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
}

static void waitlist_flush_releases_all(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, 3);
	int i;

	for (i = 0; i < 3; i++) {
		w[i].w.value = 100 + i;
		nfence_waitlist_add(&t->wl, &w[i].w);
	}
	KUNIT_EXPECT_EQ(test, nfence_waitlist_flush(&t->wl), 3);
	KUNIT_EXPECT_EQ(test, t->done, 3);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 0);
}

/* A done callback during which the GPU writes a lower CurrentValue. */
static void test_done_lowers(struct nfence_waiter *w)
{
	struct test_waiter *tw = container_of(w, struct test_waiter, w);

	test_done(w);
	WRITE_ONCE(tw->t->cv, 1);
}

/*
 * A released waiter is told why: reached (by the value CurrentValue had
 * when it was released, even if a lower one was written since, as by a
 * WRITE64 while the first waiter's callback runs) or flushed, also when
 * added after the flush. The callbacks go by this, never by a second read.
 */
static void waitlist_reached_says_why(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, 4);
	int i;

	w[0].w.done = test_done_lowers;
	w[0].w.value = 5;
	w[1].w.value = 5;
	w[2].w.value = 100;
	w[3].w.value = 100;
	for (i = 0; i < 3; i++) {
		w[i].w.reached = false;
		KUNIT_ASSERT_FALSE(test, nfence_waitlist_add(&t->wl, &w[i].w));
	}
	WRITE_ONCE(t->cv, 5);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_process(&t->wl), 2);
	KUNIT_EXPECT_TRUE(test, w[0].fired && w[1].fired);
	KUNIT_EXPECT_TRUE(test, w[0].w.reached);
	KUNIT_EXPECT_TRUE(test, w[1].w.reached);
	KUNIT_EXPECT_EQ(test, t->cv, 1);
	KUNIT_EXPECT_FALSE(test, w[2].fired);

	w[2].w.reached = true;
	KUNIT_EXPECT_EQ(test, nfence_waitlist_flush(&t->wl), 1);
	KUNIT_EXPECT_TRUE(test, w[2].fired);
	KUNIT_EXPECT_FALSE(test, w[2].w.reached);

	w[3].w.reached = true;
	KUNIT_EXPECT_TRUE(test, nfence_waitlist_add(&t->wl, &w[3].w));
	KUNIT_EXPECT_TRUE(test, w[3].fired);
	KUNIT_EXPECT_FALSE(test, w[3].w.reached);
}

/*
 * A waiter added after the flush is released at once and never queued:
 * the fence can no longer change. The flush holds the list's lock from
 * closing it to its last release, so an add comes wholly before it (and
 * the flush releases it) or wholly after (this case).
 */
static void waitlist_add_after_flush_released(struct kunit *test)
{
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, 2);

	w[0].w.value = 100;
	nfence_waitlist_add(&t->wl, &w[0].w);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_flush(&t->wl), 1);
	KUNIT_EXPECT_EQ(test, t->done, 1);

	w[1].w.value = 1000;
	KUNIT_EXPECT_TRUE(test, nfence_waitlist_add(&t->wl, &w[1].w));
	KUNIT_EXPECT_EQ(test, t->done, 2);
	KUNIT_EXPECT_TRUE(test, w[1].fired);
	KUNIT_EXPECT_FALSE(test, w[1].w.queued);
	KUNIT_EXPECT_EQ(test, nfence_waitlist_count(&t->wl), 0);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	/* Nothing moves it back: not a signal, not a remove. */
	WRITE_ONCE(t->cv, 2000);
	nfence_waitlist_process(&t->wl);
	nfence_waitlist_remove(&t->wl, &w[1].w);
	KUNIT_EXPECT_EQ(test, t->mv, U64_MAX);
	KUNIT_EXPECT_EQ(test, t->done, 2);
}

/* Random adds, removes and signals against a brute-force model. */
static void waitlist_matches_model(struct kunit *test)
{
	const unsigned int n = 256;
	struct wl_test *t = wl_setup(test, 0);
	struct test_waiter *w = waiters(test, t, n);
	unsigned int step, i;

	for (step = 0; step < 4096; step++) {
		u64 least = U64_MAX;

		i = get_random_u32_below(n);
		switch (get_random_u32_below(3)) {
		case 0:
			if (!w[i].w.queued && !w[i].fired) {
				w[i].w.value = t->cv + 1 + get_random_u32_below(64);
				nfence_waitlist_add(&t->wl, &w[i].w);
			}
			break;
		case 1:
			nfence_waitlist_remove(&t->wl, &w[i].w);
			break;
		case 2:
			WRITE_ONCE(t->cv, t->cv + get_random_u32_below(4));
			nfence_waitlist_process(&t->wl);
			break;
		}
		for (i = 0; i < n; i++) {
			/* Nothing queued is reached; nothing reached is queued. */
			if (w[i].w.queued) {
				KUNIT_ASSERT_GT(test, w[i].w.value, t->cv);
				least = min(least, w[i].w.value);
			}
			if (w[i].fired)
				KUNIT_ASSERT_LE(test, w[i].w.value, t->cv);
		}
		KUNIT_ASSERT_EQ(test, t->mv,
				least == U64_MAX ? U64_MAX : least - 1);
	}
}

/* The 32-bit atomics window, around 2^31, 2^32 and U64_MAX. */
static void value32_window(struct kunit *test)
{
	const u64 half = U32_MAX / 2;
	static const u64 bases[] = {
		0, 1, (1ull << 31) - 1, 1ull << 31, U32_MAX, 1ull << 32,
		(1ull << 32) + 1, 1ull << 63, U64_MAX - half - 1,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		u64 cv = bases[i];

		KUNIT_EXPECT_TRUE(test, nfence_value32_in_window(cv, cv));
		KUNIT_EXPECT_TRUE(test, nfence_value32_in_window(cv, cv + 1));
		KUNIT_EXPECT_TRUE(test, nfence_value32_in_window(cv, cv + half));
		KUNIT_EXPECT_FALSE(test,
				   nfence_value32_in_window(cv, cv + half + 1));
		KUNIT_EXPECT_FALSE(test, nfence_value32_in_window(cv, U64_MAX));
		KUNIT_EXPECT_TRUE(test,
				  nfence_value32_in_window(U64_MAX - half,
							   U64_MAX));
		/* Behind is always fine: it is already reached. */
		KUNIT_EXPECT_TRUE(test, nfence_value32_in_window(cv, 0));
		if (cv)
			KUNIT_EXPECT_TRUE(test,
					  nfence_value32_in_window(cv, cv - 1));
	}
	/* Across the 32-bit wrap, the window is about the 64-bit value. */
	KUNIT_EXPECT_TRUE(test, nfence_value32_in_window(U32_MAX - 5,
							 (1ull << 32) + 5));
	KUNIT_EXPECT_FALSE(test, nfence_value32_in_window(5, 5 + (1ull << 32)));
}

/*
 * The 32-bit GPU's wait check agrees with the 64-bit comparison for every
 * value inside the window, around 2^31, 2^32 and U64_MAX, including across
 * the 32-bit wrap where the low halves alone run backwards.
 */
static void value32_reached(struct kunit *test)
{
	const u64 half = U32_MAX / 2;
	static const u64 bases[] = {
		0, 1, (1ull << 31) - 1, 1ull << 31, U32_MAX - 3, U32_MAX,
		1ull << 32, (1ull << 32) + 1, 1ull << 63, U64_MAX - half - 1,
	};
	static const u64 steps[] = { 0, 1, 2, 7, 1ull << 30, half - 1, half };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		for (j = 0; j < ARRAY_SIZE(steps); j++) {
			u64 cv = bases[i], ahead = cv + steps[j];

			/* A value ahead in the window: reached iff equal. */
			KUNIT_EXPECT_EQ_MSG(test,
					    nfence_value32_reached(cv, ahead),
					    cv >= ahead, "cv %#llx value %#llx",
					    cv, ahead);
			/* The fence moved ahead of the value: reached. */
			KUNIT_EXPECT_TRUE_MSG(test,
					      nfence_value32_reached(ahead, cv),
					      "cv %#llx value %#llx", ahead,
					      cv);
		}
	}
	/* Low halves 0xfffffff0 > 0x10, yet 0x1_00000010 is ahead. */
	KUNIT_EXPECT_FALSE(test, nfence_value32_reached(0xfffffff0ull,
							0x100000010ull));
	KUNIT_EXPECT_TRUE(test, nfence_value32_reached(0x100000010ull,
						       0xfffffff0ull));
	/* Beyond the window only the low halves count. */
	KUNIT_EXPECT_TRUE(test, nfence_value32_reached(0x100000010ull,
						       0x200000003ull));
	KUNIT_EXPECT_FALSE(test, nfence_value32_reached(5, 5 + half + 1));
}

static struct kunit_case nfence_waitlist_cases[] = {
	KUNIT_CASE(value32_window),
	KUNIT_CASE(value32_reached),
	KUNIT_CASE(waitlist_no_waiter_is_max),
	KUNIT_CASE(waitlist_mv_is_least_minus_one),
	KUNIT_CASE(waitlist_already_reached),
	KUNIT_CASE(waitlist_process_releases_reached),
	KUNIT_CASE(waitlist_extreme_values),
	KUNIT_CASE(waitlist_flush_releases_all),
	KUNIT_CASE(waitlist_add_after_flush_released),
	KUNIT_CASE(waitlist_reached_says_why),
	KUNIT_CASE(waitlist_matches_model),
	{}
};

static struct kunit_suite nfence_waitlist_suite = {
	.name = "nfence_waitlist",
	.test_cases = nfence_waitlist_cases,
};

kunit_test_suite(nfence_waitlist_suite);
