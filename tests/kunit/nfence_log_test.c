// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the native fence log buffers (nfence_log.c): the GPU's
 * append with its wraparound, the reader's cursor and overrun, and a log
 * given new buffers (a new logging level).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../nfence_log.h"

#define N	DRM_NFENCE_LOG_ENTRIES

static int log_test_init(struct kunit *test)
{
	struct nfence_log *log;

	log = kunit_kzalloc(test, sizeof(*log), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log);
	KUNIT_ASSERT_EQ(test, nfence_log_init(log, DRM_NFENCE_LOG_TYPE_SIGNALS,
					      N), 0);
	test->priv = log;
	return 0;
}

static void log_test_exit(struct kunit *test)
{
	nfence_log_fini(test->priv);
}

static const struct drm_nfence_log_header *hdr(struct nfence_log *log)
{
	return log->buf->vaddr;
}

/* Append entries for values @first .. @first + @n - 1. */
static void append(struct nfence_log *log, u64 first, u32 n)
{
	struct drm_nfence_log_entry e = {
		.fence_handle = 7,
		.operation = DRM_NFENCE_LOG_OP_SIGNAL_EXECUTED,
	};
	u32 i;

	for (i = 0; i < n; i++) {
		e.fence_value = first + i;
		e.end_gpu_timestamp = 1000 + first + i;
		nfence_log_append(log, &e);
	}
}

/* Room for a buffer's worth of entries (too big for the stack). */
static struct drm_nfence_log_entry *entries(struct kunit *test)
{
	struct drm_nfence_log_entry *out;

	out = kunit_kcalloc(test, NFENCE_LOG_ENTRIES_ALL, sizeof(*out),
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	return out;
}

/* Read from *@cursor into @out (room @room); returns the count. */
static u32 read(struct kunit *test, struct nfence_log *log, u64 *cursor,
		struct drm_nfence_log_entry *out, u32 room, u32 *status)
{
	u32 count = room;

	KUNIT_ASSERT_EQ(test, nfence_log_read(log, cursor, out, &count,
					      status), 0);
	return count;
}

static void log_header_fresh(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	const struct drm_nfence_log_header *h = hdr(log);
	u64 cursor = 0;
	u32 status = 1;

	KUNIT_EXPECT_EQ(test, h->first_free_entry_index, 0);
	KUNIT_EXPECT_EQ(test, h->wraparound_count, 0);
	KUNIT_EXPECT_EQ(test, h->type, DRM_NFENCE_LOG_TYPE_SIGNALS);
	KUNIT_EXPECT_EQ(test, h->num_entries, N);
	KUNIT_EXPECT_EQ(test, h->reserved[0], 0);
	KUNIT_EXPECT_EQ(test, h->reserved[1], 0);
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, NULL, 0, &status), 0);
	KUNIT_EXPECT_EQ(test, cursor, 0);
	KUNIT_EXPECT_EQ(test, status, 0);
}

static void log_append_read(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	u64 cursor = 0;
	u32 status, n, i;

	append(log, 1, 10);
	KUNIT_EXPECT_EQ(test, hdr(log)->first_free_entry_index, 10);
	KUNIT_EXPECT_EQ(test, hdr(log)->wraparound_count, 0);
	/* Less room than entries: the oldest first, the cursor after them. */
	n = read(test, log, &cursor, out, 4, &status);
	KUNIT_EXPECT_EQ(test, n, 4);
	KUNIT_EXPECT_EQ(test, cursor, 4);
	KUNIT_EXPECT_EQ(test, status, 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, out[i].fence_value, 1 + i);
		KUNIT_EXPECT_EQ(test, out[i].fence_handle, 7);
		KUNIT_EXPECT_EQ(test, out[i].end_gpu_timestamp, 1001 + i);
	}
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, n, 6);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, 5);
	KUNIT_EXPECT_EQ(test, cursor, 10);
	/* Nothing new. */
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, out, N, &status), 0);
	KUNIT_EXPECT_EQ(test, cursor, 10);
}

static void log_wraparound(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	u64 cursor = N - 2;
	u32 status, n;

	append(log, 1, N + 3);
	KUNIT_EXPECT_EQ(test, hdr(log)->first_free_entry_index, 3);
	KUNIT_EXPECT_EQ(test, hdr(log)->wraparound_count, 1);
	/* Read across the end of the buffer, in order. */
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, 5);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, N - 1);
	KUNIT_EXPECT_EQ(test, out[4].fence_value, N + 3);
	KUNIT_EXPECT_EQ(test, cursor, N + 3);
}

/*
 * WraparoundCount is 32 bits: past 2^32 wraps it is 0 again, but the log's
 * position goes on, so that a cursor from before reads what follows it
 * (not "ahead of the log" for good), in the log and in a copy of it (what
 * LOG_READ reads).
 */
static void log_wraparound_count_overflows(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	struct drm_nfence_log_header *h = log->buf->vaddr;
	struct nfence_log_buffer buf = {};
	struct nfence_log copy = { .buf = &buf };
	u64 cursor, before;
	u32 status, n;

	buf.vaddr = kunit_kzalloc(test, nfence_log_size(NFENCE_LOG_ENTRIES_ALL),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf.vaddr);

	/* As after 2^32 - 1 wraps, with the buffer's last slot next. */
	h->wraparound_count = U32_MAX;
	h->first_free_entry_index = N - 1;
	before = nfence_log_position(log);
	KUNIT_EXPECT_EQ(test, before, (u64)U32_MAX * N + N - 1);
	cursor = before;
	append(log, 1, 3);
	KUNIT_EXPECT_EQ(test, hdr(log)->wraparound_count, 0);
	KUNIT_EXPECT_EQ(test, hdr(log)->first_free_entry_index, 2);
	KUNIT_EXPECT_EQ(test, nfence_log_position(log), before + 3);
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, 3);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, 1);
	KUNIT_EXPECT_EQ(test, out[2].fence_value, 3);
	KUNIT_EXPECT_EQ(test, cursor, before + 3);

	nfence_log_copy(&copy, log);
	KUNIT_EXPECT_EQ(test, nfence_log_position(&copy), before + 3);
	cursor = before + 1;
	n = read(test, &copy, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, 2);
	KUNIT_EXPECT_EQ(test, cursor, before + 3);
}

static void log_overrun(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	u64 cursor = 0, before;
	u32 status, n;

	/* Exactly a buffer's worth behind: nothing lost yet. */
	append(log, 1, N);
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, N);
	/* Then N + 5 more: the first 5 of them were overwritten. */
	append(log, N + 1, N + 5);
	/* A read of nothing says so, and where a read would start. */
	before = cursor;
	KUNIT_EXPECT_EQ(test, read(test, log, &before, out, 0, &status), 0);
	KUNIT_EXPECT_EQ(test, status, DRM_NFENCE_LOG_READ_OVERRUN);
	KUNIT_EXPECT_EQ(test, before, N + 5);
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, DRM_NFENCE_LOG_READ_OVERRUN);
	KUNIT_EXPECT_EQ(test, n, N);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, N + 6);
	KUNIT_EXPECT_EQ(test, out[N - 1].fence_value, 2 * N + 5);
	KUNIT_EXPECT_EQ(test, cursor, 2 * N + 5);
	KUNIT_EXPECT_EQ(test, hdr(log)->wraparound_count, 2);
}

static void log_cursor_ahead(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry out[1];
	u64 cursor = 4;
	u32 count = 1, status = 9;

	append(log, 1, 3);
	KUNIT_EXPECT_EQ(test, nfence_log_read(log, &cursor, out, &count,
					      &status), -EINVAL);
	/* Nothing changed. */
	KUNIT_EXPECT_EQ(test, cursor, 4);
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, status, 9);
}

static void log_bad_index(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_header *h = log->buf->vaddr;
	struct drm_nfence_log_entry *out = entries(test);
	u64 cursor = 0;
	u32 status;

	/* Not something the engines write: an overrun, nothing copied. */
	h->first_free_entry_index = N;
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, out, N, &status), 0);
	KUNIT_EXPECT_EQ(test, status, DRM_NFENCE_LOG_READ_OVERRUN);
}

/*
 * The seed's "empty or repeated log buffer timestamps": entries with a
 * zero timestamp, or the same one as the entry before, are read back as
 * they were written, in order; the reader does not judge timestamps.
 */
static void log_zero_and_repeated_timestamps(struct kunit *test)
{
	static const u64 ts[] = { 0, 5, 5, 0, 7, 7 };
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	struct drm_nfence_log_entry e = {
		.fence_handle = 3,
		.operation = DRM_NFENCE_LOG_OP_WAIT_UNBLOCKED,
	};
	u64 cursor = 0;
	u32 status, n, i;

	for (i = 0; i < ARRAY_SIZE(ts); i++) {
		e.fence_value = i + 1;
		e.observed_gpu_timestamp = ts[i];
		e.end_gpu_timestamp = ts[i];
		nfence_log_append(log, &e);
	}
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(ts));
	KUNIT_EXPECT_EQ(test, status, 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, out[i].fence_value, i + 1);
		KUNIT_EXPECT_EQ(test, out[i].observed_gpu_timestamp, ts[i]);
		KUNIT_EXPECT_EQ(test, out[i].end_gpu_timestamp, ts[i]);
	}
}

/* The geometry: a 4 KiB buffer by default, 16 KiB while traced. */
static void log_sizes(struct kunit *test)
{
	struct nfence_log *log = test->priv;

	KUNIT_EXPECT_EQ(test, log->buf->size, 4096);
	KUNIT_EXPECT_EQ(test, nfence_log_size(DRM_NFENCE_LOG_ENTRIES), 4096);
	KUNIT_EXPECT_EQ(test, nfence_log_size(NFENCE_LOG_ENTRIES_ALL), 16384);
	KUNIT_EXPECT_EQ(test, nfence_log_position(log), 0);
}

/* Give @log a new buffer of @entries; free the old one. */
static void replace(struct kunit *test, struct nfence_log *log, u32 entries)
{
	struct nfence_log_buffer *buf;

	buf = nfence_log_buffer_alloc(DRM_NFENCE_LOG_TYPE_SIGNALS, entries);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	nfence_log_buffer_free(nfence_log_replace(log, buf));
}

/*
 * A new buffer, larger: the cursor counts on across buffers, a reader
 * that had read everything loses nothing, and the new buffer wraps at its
 * own size.
 */
static void log_replace_keeps_position(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	const u32 big = NFENCE_LOG_ENTRIES_ALL;
	u64 cursor = 0;
	u32 status, n;

	append(log, 1, N + 10);
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, out, N, &status), N);
	KUNIT_EXPECT_EQ(test, status, DRM_NFENCE_LOG_READ_OVERRUN);
	KUNIT_EXPECT_EQ(test, cursor, N + 10);

	replace(test, log, big);
	KUNIT_EXPECT_EQ(test, log->base, N + 10);
	KUNIT_EXPECT_EQ(test, hdr(log)->num_entries, big);
	KUNIT_EXPECT_EQ(test, hdr(log)->type, DRM_NFENCE_LOG_TYPE_SIGNALS);
	KUNIT_EXPECT_EQ(test, hdr(log)->first_free_entry_index, 0);
	KUNIT_EXPECT_EQ(test, nfence_log_position(log), N + 10);
	/* Nothing new yet, and nothing lost. */
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, out, big, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);

	/* More than the old buffer held, less than the new one. */
	append(log, 1000, N + 1);
	n = read(test, log, &cursor, out, big, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, N + 1);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, 1000);
	KUNIT_EXPECT_EQ(test, out[N].fence_value, 1000 + N);
	KUNIT_EXPECT_EQ(test, cursor, 2 * N + 11);

	/* It wraps at its own size. */
	append(log, 5000, big);
	KUNIT_EXPECT_EQ(test, hdr(log)->wraparound_count, 1);
	KUNIT_EXPECT_EQ(test, hdr(log)->first_free_entry_index, N + 1);
	n = read(test, log, &cursor, out, big, &status);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, n, big);
	KUNIT_EXPECT_EQ(test, out[big - 1].fence_value, 5000 + big - 1);
}

/*
 * Entries of the old buffer a reader had not read are gone: an overrun
 * for it, from the new buffer's first entry; a cursor into the old buffer
 * is not "ahead".
 */
static void log_replace_loses_unread(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	u64 cursor = 3;
	u32 status, n;

	append(log, 1, 10);
	replace(test, log, DRM_NFENCE_LOG_ENTRIES);
	append(log, 100, 2);
	n = read(test, log, &cursor, out, N, &status);
	KUNIT_EXPECT_EQ(test, status, DRM_NFENCE_LOG_READ_OVERRUN);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, out[0].fence_value, 100);
	KUNIT_EXPECT_EQ(test, cursor, 12);
	/* Back to a smaller buffer: the same rules. */
	replace(test, log, DRM_NFENCE_LOG_ENTRIES);
	cursor = 12;
	KUNIT_EXPECT_EQ(test, read(test, log, &cursor, out, N, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	cursor = 13;
	n = N;
	KUNIT_EXPECT_EQ(test, nfence_log_read(log, &cursor, out, &n, &status),
			-EINVAL);
}

/* A copy reads as the log does, from the copy's own memory. */
static void log_copy_reads_the_same(struct kunit *test)
{
	struct nfence_log *log = test->priv;
	struct drm_nfence_log_entry *out = entries(test);
	struct nfence_log_buffer buf = {};
	struct nfence_log copy = { .buf = &buf };
	u64 cursor = 0;
	u32 status;

	buf.vaddr = kunit_kzalloc(test, nfence_log_size(NFENCE_LOG_ENTRIES_ALL),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf.vaddr);
	append(log, 1, 5);
	replace(test, log, NFENCE_LOG_ENTRIES_ALL);
	append(log, 50, 3);
	nfence_log_copy(&copy, log);
	/* The log moves on; the copy does not. */
	append(log, 90, 1);
	cursor = 5;
	KUNIT_EXPECT_EQ(test, read(test, &copy, &cursor, out, N, &status), 3);
	KUNIT_EXPECT_EQ(test, out[2].fence_value, 52);
	KUNIT_EXPECT_EQ(test, cursor, 8);
	KUNIT_EXPECT_EQ(test, buf.num_entries, NFENCE_LOG_ENTRIES_ALL);
}

static struct kunit_case nfence_log_cases[] = {
	KUNIT_CASE(log_sizes),
	KUNIT_CASE(log_zero_and_repeated_timestamps),
	KUNIT_CASE(log_replace_keeps_position),
	KUNIT_CASE(log_replace_loses_unread),
	KUNIT_CASE(log_copy_reads_the_same),
	KUNIT_CASE(log_header_fresh),
	KUNIT_CASE(log_append_read),
	KUNIT_CASE(log_wraparound),
	KUNIT_CASE(log_wraparound_count_overflows),
	KUNIT_CASE(log_overrun),
	KUNIT_CASE(log_cursor_ahead),
	KUNIT_CASE(log_bad_index),
	{}
};

static struct kunit_suite nfence_log_suite = {
	.name = "nfence_log",
	.init = log_test_init,
	.exit = log_test_exit,
	.test_cases = nfence_log_cases,
};

kunit_test_suite(nfence_log_suite);
