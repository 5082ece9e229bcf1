// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The nfence authors
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt_nfence_core.h"
#include "nfence_igt.h"

IGT_TEST_DESCRIPTION("Kernel-mode submission: DRM_IOCTL_NFENCE_SUBMIT, "
		     "SUBMIT_WAIT and SUBMIT_SIGNAL, the command stream "
		     "checked at submission, what the engines do with each "
		     "command, run-time faults (bad VA, read-only, misaligned, "
		     "bad command) and the rejection of every invalid input.");

#define WATCHDOG_S	60
#define WAIT_MS		10000
#define QUIET_MS	150
#define PAGE		4096ull
#define SYSTEM		NFENCE_SEGMENT_SYSTEM
#define VRAM		NFENCE_SEGMENT_VRAM
#define CPU_VISIBLE	DRM_NFENCE_ALLOC_CPU_VISIBLE
#define TYPE_DEFAULT	DRM_NFENCE_FENCE_TYPE_DEFAULT
#define TYPE_INTRA_GPU	DRM_NFENCE_FENCE_TYPE_INTRA_GPU
#define NO_SIGNAL	DRM_NFENCE_FENCE_NO_SIGNAL
#define NO_WAIT		DRM_NFENCE_FENCE_NO_WAIT
#define MAX_SUBMIT	DRM_NFENCE_MAX_SUBMIT_SIZE
#define MAX_QUEUED	DRM_NFENCE_MAX_QUEUED
#define MAX_FENCES	DRM_NFENCE_MAX_WAIT_FENCES
#define ST_FAULTED	DRM_NFENCE_CONTEXT_STATE_FAULTED
#define ST_LOST		DRM_NFENCE_CONTEXT_STATE_DEVICE_LOST
#define ALWAYS		NFENCE_ALWAYS_SIGNALED
#define HDR(op, words)	DRM_NFENCE_CS_HEADER(op, words)
static int fd = -1;
static int dbg = -1;
/* The debugfs files the subtests read (the fixture fails without them). */
static const char * const debugfs_files[] = {
	"nfence_queues", "nfence_interrupts",
};
static bool native;
static struct drm_nfence_query_adapter adapter;

static void require_native(void)
{
	igt_require_f(native, "adapter has no native fences\n");
}

/* What most subtests work with. */
struct t {
	struct nfence_env env;
	struct nfence_queue q;	/* on env.dev, engine 0 */
	struct nfence_bo bo;	/* 64 KiB of system memory */
};

static void t_init(struct t *t)
{
	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&t->env, fd);
	nfence_queue_create(&t->q, fd, t->env.dev, 0, 0);
	nfence_bo_create(fd, t->env.dev, 64 * 1024, SYSTEM, 0, &t->bo);
}

static void t_fini(struct t *t)
{
	nfence_bo_destroy(&t->bo);
	nfence_queue_destroy(&t->q);
	nfence_env_fini(&t->env);
}

static volatile uint64_t *word(struct t *t, uint64_t off)
{
	return nfence_bo_u64(&t->bo, off);
}

/*
 * The queue still works and nothing a rejected call asked for happened:
 * a WRITE64 submitted now lands with the next progress value, and the
 * word at @untouched (if not ~0) is still 0.
 */
static void assert_queue_ok(struct t *t, uint64_t untouched)
{
	struct nfence_cs cs;
	uint64_t v;

	nfence_queue_begin(&t->q, &cs);
	nfence_cs_write64(&cs, t->bo.gpu_va + 0x800, 0x600d + t->q.submitted);
	v = nfence_queue_submit(&t->q, &cs);
	igt_assert_eq(nfence_queue_wait(&t->q, v, WAIT_MS), 0);
	igt_assert_eq_u64(*t->q.progress, v);
	igt_assert_eq_u64(*word(t, 0x800), 0x600d + v - 1);
	if (untouched != ~0ull)
		igt_assert_eq_u64(*word(t, untouched), 0);
}

/* A valid submission: WRITE64 of 1 at bo + 0x100, then a NOP. */
static struct drm_nfence_submit valid_submit(struct t *t, struct nfence_cs *cs)
{
	struct drm_nfence_submit s = {
		.device = t->env.dev,
		.hwqueue = t->q.handle,
		.progress_fence_value = t->q.submitted + 1,
	};

	nfence_queue_begin(&t->q, cs);
	nfence_cs_write64(cs, t->bo.gpu_va + 0x100, 1);
	nfence_cs_nop(cs);
	s.commands_gpu_va = cs->gpu_va;
	s.size = cs->len;
	return s;
}

static void expect_submit_error(struct drm_nfence_submit *s, int err)
{
	struct drm_nfence_submit orig = *s;

	igt_assert_eq(__nfence_submit(fd, s), err);
	igt_assert(!memcmp(s, &orig, sizeof(*s)));
}

/* The same submission once fixed is accepted and runs. */
static void expect_submit_ok(struct t *t, struct drm_nfence_submit *s)
{
	s->progress_fence_value = t->q.submitted + 1;
	igt_assert_eq(__nfence_submit(fd, s), 0);
	t->q.submitted++;
	igt_assert_eq(nfence_queue_wait(&t->q, t->q.submitted, WAIT_MS), 0);
}

/* SUBMIT invalid input */

static void test_submit_bad_flags(void)
{
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	for (int bit = 0; bit < 32; bit++) {
		struct drm_nfence_submit s = valid_submit(&t, &cs);

		s.flags = 1u << bit;
		expect_submit_error(&s, -EINVAL);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_size_zero(void)
{
	struct nfence_cs cs;
	struct drm_nfence_submit s;
	struct t t;

	t_init(&t);
	s = valid_submit(&t, &cs);
	s.size = 0;
	expect_submit_error(&s, -EINVAL);
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_size_too_big(void)
{
	const uint32_t sizes[] = {
		MAX_SUBMIT + 8, MAX_SUBMIT + 4096, 2 * MAX_SUBMIT,
		UINT32_MAX & ~7u,
	};
	struct drm_nfence_submit s = { 0 };
	struct nfence_bo big;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	/* 2 MiB of NOPs: every size below is mapped and valid commands. */
	nfence_bo_create(fd, t.env.dev, 2 * MAX_SUBMIT, SYSTEM, 0, &big);
	nfence_cs_init(&cs, big.cpu, big.gpu_va, big.size);
	while (cs.len < cs.size)
		nfence_cs_nop(&cs);
	s.device = t.env.dev;
	s.hwqueue = t.q.handle;
	s.commands_gpu_va = big.gpu_va;
	for (unsigned int i = 0; i < ARRAY_SIZE(sizes); i++) {
		s.size = sizes[i];
		s.progress_fence_value = t.q.submitted + 1;
		expect_submit_error(&s, -EINVAL);
	}
	/* The largest size is fine. */
	s.size = MAX_SUBMIT;
	expect_submit_ok(&t, &s);
	assert_queue_ok(&t, ~0ull);
	nfence_bo_destroy(&big);
	t_fini(&t);
}

static void test_submit_size_misaligned(void)
{
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	for (uint32_t sz = 1; sz < 32; sz++) {
		struct drm_nfence_submit s = valid_submit(&t, &cs);

		if (sz % 8 == 0)
			continue;
		s.size = sz;
		expect_submit_error(&s, -EINVAL);
	}
	{
		struct drm_nfence_submit s = valid_submit(&t, &cs);

		s.size += 4;
		expect_submit_error(&s, -EINVAL);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_va_misaligned(void)
{
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	for (uint64_t off = 1; off < 8; off++) {
		struct drm_nfence_submit s = valid_submit(&t, &cs);
		const uint32_t nops[4] = {
			HDR(DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS), 0,
			HDR(DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS), 0,
		};

		/* Two valid NOPs at a misaligned address. */
		memcpy((char *)cs.cpu + off, nops, sizeof(nops));
		s.commands_gpu_va += off;
		s.size = 16;
		expect_submit_error(&s, -EINVAL);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_va_unmapped(void)
{
	struct drm_nfence_submit s;
	struct nfence_bo gone;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	s = valid_submit(&t, &cs);
	/* Page 0: no allocation starts at VA 0. */
	s.commands_gpu_va = 0;
	expect_submit_error(&s, -EINVAL);
	s.commands_gpu_va = 8;
	expect_submit_error(&s, -EINVAL);
	/* A destroyed allocation that held valid commands. */
	nfence_bo_create(fd, t.env.dev, PAGE, SYSTEM, 0, &gone);
	nfence_cs_init(&cs, gone.cpu, gone.gpu_va, PAGE);
	nfence_cs_nop(&cs);
	nfence_cs_write64(&cs, t.bo.gpu_va + 0x100, 1);
	nfence_bo_destroy(&gone);
	s.commands_gpu_va = gone.gpu_va;
	s.size = cs.len;
	expect_submit_error(&s, -EINVAL);
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_va_partly_mapped(void)
{
	struct drm_nfence_submit s = { 0 };
	struct nfence_bo a, b;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_bo_create(fd, t.env.dev, PAGE, SYSTEM, 0, &a);
	nfence_cs_init(&cs, a.cpu, a.gpu_va, PAGE);
	while (cs.len < cs.size)
		nfence_cs_nop(&cs);
	s.device = t.env.dev;
	s.hwqueue = t.q.handle;
	s.progress_fence_value = t.q.submitted + 1;

	/* The last NOP of the page and 8 bytes past its end. */
	s.commands_gpu_va = a.gpu_va + PAGE - 8;
	s.size = 16;
	expect_submit_error(&s, -EINVAL);
	/* The whole page and one unit more. */
	s.commands_gpu_va = a.gpu_va;
	s.size = PAGE + 8;
	expect_submit_error(&s, -EINVAL);
	/* Into a destroyed neighbour. */
	nfence_bo_create(fd, t.env.dev, PAGE, SYSTEM, 0, &b);
	nfence_bo_destroy(&b);
	s.commands_gpu_va = b.gpu_va - 8;
	s.size = 16;
	expect_submit_error(&s, -EINVAL);

	/* The page itself is fine. */
	s.commands_gpu_va = a.gpu_va;
	s.size = PAGE;
	expect_submit_ok(&t, &s);
	nfence_bo_destroy(&a);
	assert_queue_ok(&t, ~0ull);
	t_fini(&t);
}

static void test_submit_bad_device(enum nfence_bad bad)
{
	struct drm_nfence_submit s;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	s = valid_submit(&t, &cs);
	s.device = nfence_bad_device(&t.env, bad);
	expect_submit_error(&s, -ENOENT);
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_bad_hwqueue(enum nfence_bad bad)
{
	struct drm_nfence_submit s;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	s = valid_submit(&t, &cs);
	s.hwqueue = nfence_bad_handle(&t.env, NFENCE_KIND_HWQUEUE, bad,
				      &t.q.handle, 1);
	expect_submit_error(&s, -ENOENT);
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_submit_progress_not_increasing(void)
{
	struct drm_nfence_submit s;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	/* The first value must be above 0. */
	s = valid_submit(&t, &cs);
	s.progress_fence_value = 0;
	expect_submit_error(&s, -EINVAL);

	s.progress_fence_value = 10;
	igt_assert_eq(__nfence_submit(fd, &s), 0);
	t.q.submitted = 10;
	igt_assert_eq(nfence_queue_wait(&t.q, 10, WAIT_MS), 0);
	*word(&t, 0x100) = 0;

	/* Equal, lower, 0. */
	s = valid_submit(&t, &cs);
	s.progress_fence_value = 10;
	expect_submit_error(&s, -EINVAL);
	s.progress_fence_value = 9;
	expect_submit_error(&s, -EINVAL);
	s.progress_fence_value = 1;
	expect_submit_error(&s, -EINVAL);
	s.progress_fence_value = 0;
	expect_submit_error(&s, -EINVAL);
	/* Also against a submission still queued, not yet run. */
	if (native) {
		struct drm_nfence_fence_mapping m;
		uint32_t f = nfence_fence_create(fd, t.env.dev, TYPE_DEFAULT,
						 0, 0, &m);

		nfence_queue_begin(&t.q, &cs);
		nfence_cs_wait_fence(&cs, &m, 1);
		igt_assert_eq_u64(nfence_queue_submit(&t.q, &cs), 11);
		s = valid_submit(&t, &cs);
		s.progress_fence_value = 11;
		expect_submit_error(&s, -EINVAL);
		nfence_fence_signal(fd, t.env.dev, f, 1);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

/* Invalid commands at submission */

/*
 * Submit a valid WRITE64 (of 1 at bo + 0x100) followed by @count raw
 * words, @size bytes in all (0: all of it): must fail with -EINVAL and
 * run nothing.
 */
static void expect_cmds_rejected(struct t *t, const uint32_t *raw,
				 unsigned int count, uint32_t size)
{
	struct drm_nfence_submit s;
	struct nfence_cs cs;

	s = valid_submit(t, &cs);
	cs.len -= 8;	/* drop the NOP */
	memcpy((char *)cs.cpu + cs.len, raw, count * 4);
	cs.len += count * 4;
	s.size = size ? size : cs.len;
	expect_submit_error(&s, -EINVAL);
}

static void test_cmd_unknown_opcode(void)
{
	const uint32_t opcodes[] = { 0x06, 0x07, 0x10, 0x7f, 0x80, 0xff };
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(opcodes); i++) {
		for (uint32_t words = 2; words <= 8; words += 2) {
			uint32_t raw[8] = { HDR(opcodes[i], words) };

			expect_cmds_rejected(&t, raw, words, 0);
		}
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static const struct {
	uint32_t opcode;
	uint32_t words;
} opcodes[] = {
	{ DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS },
	{ DRM_NFENCE_CS_FENCE_WAIT, DRM_NFENCE_CS_FENCE_WAIT_WORDS },
	{ DRM_NFENCE_CS_FENCE_SIGNAL, DRM_NFENCE_CS_FENCE_SIGNAL_WORDS },
	{ DRM_NFENCE_CS_WRITE64, DRM_NFENCE_CS_WRITE64_WORDS },
	{ DRM_NFENCE_CS_TIMESTAMP, DRM_NFENCE_CS_TIMESTAMP_WORDS },
	{ DRM_NFENCE_CS_WORK, DRM_NFENCE_CS_WORK_WORDS },
};

/* A valid command of opcode @i into @raw (room for 16 words). */
static unsigned int valid_cmd(struct t *t, unsigned int i, uint32_t *raw)
{
	uint64_t va = t->bo.gpu_va + 0x200;

	memset(raw, 0, 16 * 4);
	raw[0] = HDR(opcodes[i].opcode, opcodes[i].words);
	switch (opcodes[i].opcode) {
	case DRM_NFENCE_CS_FENCE_WAIT:
	case DRM_NFENCE_CS_FENCE_SIGNAL:
	case DRM_NFENCE_CS_WRITE64:
	case DRM_NFENCE_CS_TIMESTAMP:
		raw[2] = (uint32_t)va;
		raw[3] = (uint32_t)(va >> 32);
		break;
	case DRM_NFENCE_CS_WORK:
		raw[2] = 1000;
		break;
	}
	return opcodes[i].words;
}

static void test_cmd_wrong_length(void)
{
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(opcodes); i++) {
		const uint32_t lengths[] = { 0, 2, 4, 6, 8, 10, 12, 0xfffe };

		for (unsigned int l = 0; l < ARRAY_SIZE(lengths); l++) {
			uint32_t raw[16];
			unsigned int n = valid_cmd(&t, i, raw);

			if (lengths[l] == opcodes[i].words)
				continue;
			raw[0] = HDR(opcodes[i].opcode, lengths[l]);
			/* The buffer holds n words, or the claimed length. */
			if (lengths[l] > n && lengths[l] <= 16)
				n = lengths[l];
			expect_cmds_rejected(&t, raw, n, 0);
		}
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_cmd_header_flags(void)
{
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(opcodes); i++) {
		for (int bit = 8; bit < 16; bit++) {
			uint32_t raw[16];
			unsigned int n = valid_cmd(&t, i, raw);

			raw[0] |= 1u << bit;
			expect_cmds_rejected(&t, raw, n, 0);
		}
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_cmd_second_word(void)
{
	const uint32_t values[] = { 1, 0x100, 0x80000000u, UINT32_MAX };
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(opcodes); i++) {
		for (unsigned int v = 0; v < ARRAY_SIZE(values); v++) {
			uint32_t raw[16];
			unsigned int n = valid_cmd(&t, i, raw);

			raw[1] = values[v];
			expect_cmds_rejected(&t, raw, n, 0);
		}
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_cmd_truncated(void)
{
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(opcodes); i++) {
		uint32_t raw[16];
		unsigned int n = valid_cmd(&t, i, raw);

		/* Every whole-unit cut short of the full command. */
		for (unsigned int keep = 2; keep < n; keep += 2)
			expect_cmds_rejected(&t, raw, keep, 0);
		/* The size, not the buffer, ends it. */
		if (n > 2)
			expect_cmds_rejected(&t, raw, n,
					     24 + (n - 2) * 4);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_cmd_misaligned_va(void)
{
	/* (opcode index, operand index) of every GPU VA operand */
	const struct { unsigned int op, operand; } vas[] = {
		{ 1, 0 },	/* FENCE_WAIT va */
		{ 2, 0 },	/* FENCE_SIGNAL cv_va */
		{ 2, 1 },	/* FENCE_SIGNAL mv_va */
		{ 3, 0 },	/* WRITE64 va */
		{ 4, 0 },	/* TIMESTAMP va */
	};
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(vas); i++) {
		for (uint64_t off = 1; off < 8; off++) {
			uint64_t va = t.bo.gpu_va + 0x300 + off;
			uint32_t raw[16];
			unsigned int n = valid_cmd(&t, vas[i].op, raw);

			raw[2 + 2 * vas[i].operand] = (uint32_t)va;
			raw[3 + 2 * vas[i].operand] = (uint32_t)(va >> 32);
			expect_cmds_rejected(&t, raw, n, 0);
		}
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

static void test_cmd_work_too_long(void)
{
	const uint64_t durations[] = {
		DRM_NFENCE_CS_MAX_WORK_NS + 1, DRM_NFENCE_CS_MAX_WORK_NS * 2,
		1ull << 63, UINT64_MAX,
	};
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(durations); i++) {
		uint32_t raw[4] = {
			HDR(DRM_NFENCE_CS_WORK, DRM_NFENCE_CS_WORK_WORDS), 0,
			(uint32_t)durations[i], (uint32_t)(durations[i] >> 32),
		};

		expect_cmds_rejected(&t, raw, 4, 0);
	}
	assert_queue_ok(&t, 0x100);

	/* The maximum is valid: queued behind a wait, dropped with it. */
	if (native) {
		struct drm_nfence_fence_mapping m;
		struct nfence_queue q;
		struct nfence_cs cs;

		nfence_fence_create(fd, t.env.dev, TYPE_DEFAULT, 0, 0, &m);
		nfence_queue_create(&q, fd, t.env.dev, 0, 0);
		nfence_queue_begin(&q, &cs);
		nfence_cs_wait_fence(&cs, &m, 1);
		nfence_cs_work(&cs, DRM_NFENCE_CS_MAX_WORK_NS);
		nfence_queue_submit(&q, &cs);
		nfence_queue_destroy(&q);
	}
	t_fini(&t);
}

/* A submission with nothing but invalid commands, and a valid prefix. */
static void test_cmd_bad_after_valid(void)
{
	struct t t;

	t_init(&t);
	/* The invalid command deep in a long buffer of valid ones. */
	{
		struct drm_nfence_submit s;
		struct nfence_cs cs;

		s = valid_submit(&t, &cs);
		while (cs.len < cs.size - 16)
			nfence_cs_nop(&cs);
		nfence_cs_raw(&cs, HDR(0x42, 2), 0, NULL, 0);
		s.size = cs.len;
		expect_submit_error(&s, -EINVAL);
	}
	/* Alone. */
	{
		uint32_t raw[2] = { HDR(0x42, 2), 0 };
		struct drm_nfence_submit s;
		struct nfence_cs cs;

		s = valid_submit(&t, &cs);
		memcpy(cs.cpu, raw, sizeof(raw));
		s.size = 8;
		expect_submit_error(&s, -EINVAL);
	}
	assert_queue_ok(&t, 0x100);
	t_fini(&t);
}

/* SUBMIT_WAIT / SUBMIT_SIGNAL invalid input */

enum sync_op { SYNC_WAIT, SYNC_SIGNAL };

static const char *sync_name(enum sync_op op)
{
	return op == SYNC_WAIT ? "submit-wait" : "submit-signal";
}

static int do_sync(enum sync_op op, struct drm_nfence_submit_sync *s)
{
	return op == SYNC_WAIT ? __nfence_submit_wait(fd, s) :
		__nfence_submit_signal(fd, s);
}

struct ts {
	struct t t;
	uint32_t fence;
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *cv;
	uint32_t handles[MAX_FENCES + 1];
	uint64_t values[MAX_FENCES + 1];
};

static void ts_init(struct ts *s)
{
	require_native();
	t_init(&s->t);
	s->fence = nfence_fence_create(fd, s->t.env.dev, TYPE_DEFAULT, 0, 0,
				       &s->m);
	s->cv = nfence_fence_map(fd, &s->m);
	for (int i = 0; i <= MAX_FENCES; i++) {
		s->handles[i] = s->fence;
		/* Not yet reached: a wrongly accepted wait holds the queue. */
		s->values[i] = 5;
	}
}

static void ts_fini(struct ts *s)
{
	nfence_fence_unmap(s->cv);
	t_fini(&s->t);
}

static struct drm_nfence_submit_sync sync_args(struct ts *s, uint32_t count)
{
	struct drm_nfence_submit_sync a = {
		.device = s->t.env.dev,
		.hwqueue = s->t.q.handle,
		.handles = (uintptr_t)s->handles,
		.values = (uintptr_t)s->values,
		.count = count,
	};

	return a;
}

static void expect_sync_error(enum sync_op op, struct drm_nfence_submit_sync *a,
			      int err)
{
	struct drm_nfence_submit_sync orig = *a;

	igt_assert_eq(do_sync(op, a), err);
	igt_assert(!memcmp(a, &orig, sizeof(*a)));
}

/* Nothing was queued: the queue runs, the fence was not signaled. */
static void sync_assert_nothing(struct ts *s)
{
	assert_queue_ok(&s->t, ~0ull);
	igt_assert_eq_u64(*s->cv, 0);
}

/* The fixed call works (a wait for 0, a signal of 1). */
static void sync_expect_ok(enum sync_op op, struct ts *s,
			   struct drm_nfence_submit_sync *a)
{
	uint64_t v = op == SYNC_WAIT ? 0 : 1;

	a->values = (uintptr_t)&v;
	a->count = 1;
	igt_assert_eq(do_sync(op, a), 0);
	assert_queue_ok(&s->t, ~0ull);
	if (op == SYNC_SIGNAL)
		igt_assert_eq_u64(*s->cv, 1);
}

static void test_sync_bad_flags(enum sync_op op)
{
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	a = sync_args(&s, 1);
	for (int bit = 0; bit < 32; bit++) {
		a.flags = 1u << bit;
		expect_sync_error(op, &a, -EINVAL);
	}
	sync_assert_nothing(&s);
	a.flags = 0;
	sync_expect_ok(op, &s, &a);
	ts_fini(&s);
}

static void test_sync_bad_count(enum sync_op op)
{
	const uint32_t counts[] = { 0, MAX_FENCES + 1, 1000, UINT32_MAX };
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	for (unsigned int i = 0; i < ARRAY_SIZE(counts); i++) {
		a = sync_args(&s, counts[i]);
		expect_sync_error(op, &a, -EINVAL);
	}
	sync_assert_nothing(&s);
	/* 64 is fine. */
	for (int i = 0; i < MAX_FENCES; i++)
		s.values[i] = op == SYNC_WAIT ? 0 : 1;
	a = sync_args(&s, MAX_FENCES);
	igt_assert_eq(do_sync(op, &a), 0);
	assert_queue_ok(&s.t, ~0ull);
	ts_fini(&s);
}

/* Two pages, the second PROT_NONE. */
static char *guarded_pages(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	igt_assert_eq(mprotect(p + PAGE, PAGE, PROT_NONE), 0);
	return p;
}

static void test_sync_bad_handles_pointer(enum sync_op op)
{
	char *guard = guarded_pages();
	char *edge = guard + PAGE;
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	a = sync_args(&s, 1);
	a.handles = 0;
	expect_sync_error(op, &a, -EFAULT);
	a.handles = (uintptr_t)edge;
	expect_sync_error(op, &a, -EFAULT);
	a.handles = 0xffff800000000000ull;
	expect_sync_error(op, &a, -EFAULT);
	/* The second element unreadable. */
	memcpy(edge - 4, &s.fence, 4);
	a = sync_args(&s, 2);
	a.handles = (uintptr_t)(edge - 4);
	expect_sync_error(op, &a, -EFAULT);
	sync_assert_nothing(&s);
	a = sync_args(&s, 1);
	sync_expect_ok(op, &s, &a);
	munmap(guard, 2 * PAGE);
	ts_fini(&s);
}

static void test_sync_bad_values_pointer(enum sync_op op)
{
	char *guard = guarded_pages();
	char *edge = guard + PAGE;
	struct drm_nfence_submit_sync a;
	uint64_t five = 5;
	struct ts s;

	ts_init(&s);
	a = sync_args(&s, 1);
	a.values = 0;
	expect_sync_error(op, &a, -EFAULT);
	a.values = (uintptr_t)edge;
	expect_sync_error(op, &a, -EFAULT);
	a.values = 0xffff800000000000ull;
	expect_sync_error(op, &a, -EFAULT);
	memcpy(edge - 8, &five, 8);
	a = sync_args(&s, 2);
	a.values = (uintptr_t)(edge - 8);
	expect_sync_error(op, &a, -EFAULT);
	sync_assert_nothing(&s);
	a = sync_args(&s, 1);
	sync_expect_ok(op, &s, &a);
	munmap(guard, 2 * PAGE);
	ts_fini(&s);
}

static void test_sync_bad_device(enum sync_op op, enum nfence_bad bad)
{
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	a = sync_args(&s, 1);
	a.device = nfence_bad_device(&s.t.env, bad);
	expect_sync_error(op, &a, -ENOENT);
	sync_assert_nothing(&s);
	a.device = s.t.env.dev;
	sync_expect_ok(op, &s, &a);
	ts_fini(&s);
}

static void test_sync_bad_hwqueue(enum sync_op op, enum nfence_bad bad)
{
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	a = sync_args(&s, 1);
	a.hwqueue = nfence_bad_handle(&s.t.env, NFENCE_KIND_HWQUEUE, bad,
				      &s.t.q.handle, 1);
	expect_sync_error(op, &a, -ENOENT);
	sync_assert_nothing(&s);
	a.hwqueue = s.t.q.handle;
	sync_expect_ok(op, &s, &a);
	ts_fini(&s);
}

static void test_sync_bad_fence(enum sync_op op, enum nfence_bad bad)
{
	struct drm_nfence_submit_sync a;
	uint32_t h;
	struct ts s;

	ts_init(&s);
	h = nfence_bad_handle(&s.t.env, NFENCE_KIND_FENCE, bad, &s.fence, 1);
	/* At each position of an array of good handles. */
	for (int pos = 0; pos < 3; pos++) {
		for (int i = 0; i < 3; i++)
			s.handles[i] = i == pos ? h : s.fence;
		a = sync_args(&s, 3);
		expect_sync_error(op, &a, -ENOENT);
	}
	sync_assert_nothing(&s);
	s.handles[0] = s.fence;
	a = sync_args(&s, 1);
	sync_expect_ok(op, &s, &a);
	ts_fini(&s);
}

static void test_sync_access(enum sync_op op)
{
	struct drm_nfence_fence_mapping m;
	struct drm_nfence_submit_sync a;
	uint32_t h;
	struct ts s;

	ts_init(&s);
	/* A wait through a NO_WAIT handle, a signal through NO_SIGNAL. */
	h = nfence_fence_create(fd, s.t.env.dev, TYPE_DEFAULT,
				op == SYNC_WAIT ? NO_WAIT : NO_SIGNAL, 0, &m);
	for (int pos = 0; pos < 2; pos++) {
		s.handles[0] = pos ? s.fence : h;
		s.handles[1] = pos ? h : s.fence;
		a = sync_args(&s, 2);
		expect_sync_error(op, &a, -EACCES);
	}
	sync_assert_nothing(&s);
	/* A NO_SIGNAL handle may wait and a NO_WAIT one signal. */
	{
		struct drm_nfence_fence_mapping om;
		uint32_t other = nfence_fence_create(fd, s.t.env.dev,
						     TYPE_DEFAULT,
						     op == SYNC_WAIT ?
						     NO_SIGNAL : NO_WAIT,
						     0, &om);

		uint64_t v = op == SYNC_WAIT ? 0 : 1;
		const volatile uint64_t *cv;

		s.handles[0] = other;
		a = sync_args(&s, 1);
		a.values = (uintptr_t)&v;
		igt_assert_eq(do_sync(op, &a), 0);
		assert_queue_ok(&s.t, ~0ull);
		/* (A NO_WAIT handle cannot be waited on: read it.) */
		cv = nfence_fence_map(fd, &om);
		igt_assert_eq_u64(*cv, v);
		nfence_fence_unmap(cv);
	}
	ts_fini(&s);
}

static void test_sync_intra_gpu(enum sync_op op)
{
	struct drm_nfence_submit_sync a;
	uint32_t h;
	struct ts s;

	ts_init(&s);
	h = nfence_fence_create(fd, s.t.env.dev, TYPE_INTRA_GPU, 0, 0, NULL);
	for (int pos = 0; pos < 2; pos++) {
		s.handles[0] = pos ? s.fence : h;
		s.handles[1] = pos ? h : s.fence;
		a = sync_args(&s, 2);
		expect_sync_error(op, &a, -EINVAL);
	}
	sync_assert_nothing(&s);
	s.handles[0] = s.fence;
	a = sync_args(&s, 1);
	sync_expect_ok(op, &s, &a);
	ts_fini(&s);
}

static void test_sync_check_order(enum sync_op op)
{
	struct drm_nfence_submit_sync a;
	struct ts s;

	ts_init(&s);
	/* -EINVAL (flags, count) before -ENOENT and -EFAULT... */
	a = sync_args(&s, 1);
	a.device = UINT32_MAX;
	a.flags = 1;
	expect_sync_error(op, &a, -EINVAL);
	a = sync_args(&s, 0);
	a.device = UINT32_MAX;
	a.handles = 0;
	expect_sync_error(op, &a, -EINVAL);
	a = sync_args(&s, 1);
	a.flags = 1;
	a.handles = 0;
	a.values = 0;
	expect_sync_error(op, &a, -EINVAL);
	a = sync_args(&s, MAX_FENCES + 1);
	a.hwqueue = UINT32_MAX;
	expect_sync_error(op, &a, -EINVAL);
	sync_assert_nothing(&s);
	ts_fini(&s);
}

/* What the commands do */

static void test_write64(void)
{
	const uint64_t values[] = {
		0, 1, 0x8000000000000000ull, UINT64_MAX, 0x0123456789abcdefull,
	};
	struct nfence_bo vis = { 0 };
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	memset(t.bo.cpu, 0xff, 0x400);
	nfence_queue_begin(&t.q, &cs);
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++)
		nfence_cs_write64(&cs, t.bo.gpu_va + 8 * i, values[i]);
	/* The last write to an address wins. */
	nfence_cs_write64(&cs, t.bo.gpu_va + 0x200, 1);
	nfence_cs_write64(&cs, t.bo.gpu_va + 0x200, 2);
	/* The last word of the allocation. */
	nfence_cs_write64(&cs, t.bo.gpu_va + t.bo.size - 8, 0x1a57);
	{
		struct drm_nfence_query_segments *seg;
		bool visible = false;

		seg = nfence_query_alloc(fd, DRM_NFENCE_QUERY_SEGMENTS, NULL);
		for (uint32_t i = 0; i < seg->num_segments; i++)
			if (seg->segments[i].id == VRAM &&
			    seg->segments[i].cpu_visible_size)
				visible = true;
		free(seg);
		if (visible) {
			nfence_bo_create(fd, t.env.dev, PAGE, VRAM,
					 CPU_VISIBLE, &vis);
			nfence_cs_write64(&cs, vis.gpu_va + 64, 0x7a3);
		}
	}
	nfence_queue_submit(&t.q, &cs);
	nfence_queue_sync(&t.q);

	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++)
		igt_assert_eq_u64(*word(&t, 8 * i), values[i]);
	/* Only the addressed words changed. */
	igt_assert_eq_u64(*word(&t, 8 * ARRAY_SIZE(values)), UINT64_MAX);
	igt_assert_eq_u64(*word(&t, 0x200), 2);
	igt_assert_eq_u64(*word(&t, t.bo.size - 8), 0x1a57);
	if (vis.cpu) {
		igt_assert_eq_u64(*nfence_bo_u64(&vis, 64), 0x7a3);
		nfence_bo_destroy(&vis);
	}
	t_fini(&t);
}

static void test_write64_invisible_vram(void)
{
	struct nfence_bo inv;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_bo_create(fd, t.env.dev, PAGE, VRAM, 0, &inv);
	igt_assert_eq_u32(inv.segment_id, VRAM);
	/* The GPU writes memory the CPU cannot see, then reads it back. */
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_write64(&cs, inv.gpu_va + 8, 77);
	nfence_cs_fence_wait(&cs, inv.gpu_va + 8, 77);
	nfence_cs_write64(&cs, t.bo.gpu_va, 1);
	nfence_queue_submit(&t.q, &cs);
	nfence_queue_sync(&t.q);
	igt_assert_eq_u64(*word(&t, 0), 1);
	nfence_bo_destroy(&inv);
	t_fini(&t);
}

static void test_cpu_write_gpu_read(void)
{
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	/* Written by the CPU before the submission: the GPU sees it. */
	*word(&t, 0x40) = 1234;
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_fence_wait(&cs, t.bo.gpu_va + 0x40, 1234);
	nfence_cs_write64(&cs, t.bo.gpu_va + 0x48, 1);
	nfence_queue_submit(&t.q, &cs);
	igt_assert_eq(nfence_queue_wait(&t.q, 1, WAIT_MS), 0);
	igt_assert_eq_u64(*word(&t, 0x48), 1);
	t_fini(&t);
}

static void test_timestamp(void)
{
	const uint64_t work_ns = 20 * 1000 * 1000;
	struct drm_nfence_query_timestamp before, after;
	uint64_t t0, t1, min_ticks;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_query_timestamp(fd, &before);
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_timestamp(&cs, t.bo.gpu_va);
	nfence_cs_work(&cs, work_ns);
	nfence_cs_timestamp(&cs, t.bo.gpu_va + 8);
	nfence_queue_submit(&t.q, &cs);
	nfence_queue_sync(&t.q);
	nfence_query_timestamp(fd, &after);

	t0 = *word(&t, 0);
	t1 = *word(&t, 8);
	igt_info("timestamps %" PRIu64 " .. %" PRIu64 " (query %" PRIu64
		 " .. %" PRIu64 ")\n", t0, t1, (uint64_t)before.gpu_timestamp,
		 (uint64_t)after.gpu_timestamp);
	igt_assert_lte_u64(before.gpu_timestamp, t0);
	igt_assert_lte_u64(t1, after.gpu_timestamp);
	min_ticks = work_ns * adapter.timestamp_frequency / 1000000000ull;
	igt_assert_f(t1 - t0 >= min_ticks, "WORK of %" PRIu64 " ns took %"
		     PRIu64 " ticks, expected at least %" PRIu64 "\n",
		     work_ns, t1 - t0, min_ticks);
	t_fini(&t);
}

static void test_progress_values(void)
{
	const uint64_t values[] = {
		1, 2, 5, 1000, 1ull << 32, (1ull << 40) + 3, UINT64_MAX - 1,
	};
	struct t t;

	t_init(&t);
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		struct drm_nfence_submit s;
		struct nfence_cs cs;

		s = valid_submit(&t, &cs);
		s.progress_fence_value = values[i];
		igt_assert_eq(__nfence_submit(fd, &s), 0);
		t.q.submitted = values[i];
		igt_assert_eq(nfence_queue_wait(&t.q, values[i], WAIT_MS), 0);
		igt_assert_eq_u64(*t.q.progress, values[i]);
	}
	t_fini(&t);
}

static void test_progress_in_order(void)
{
	const int n = 32;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	/* Each submission checks the previous one's write. */
	for (int i = 0; i < n; i++) {
		nfence_queue_begin(&t.q, &cs);
		if (i)
			nfence_cs_fence_wait(&cs, t.bo.gpu_va + 8 * (i - 1),
					     i);
		nfence_cs_write64(&cs, t.bo.gpu_va + 8 * i, i + 1);
		nfence_queue_submit(&t.q, &cs);
	}
	igt_assert_eq(nfence_queue_wait(&t.q, n, WAIT_MS), 0);
	for (int i = 0; i < n; i++)
		igt_assert_eq_u64(*word(&t, 8 * i), i + 1);
	/* Every intermediate value was passed, none is pending. */
	igt_assert_eq(nfence_queue_wait(&t.q, n + 1, 0), -ETIME);
	t_fini(&t);
}

static void test_max_size_runs(void)
{
	struct drm_nfence_submit s = { 0 };
	struct nfence_bo big;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_bo_create(fd, t.env.dev, MAX_SUBMIT, SYSTEM, 0, &big);
	nfence_cs_init(&cs, big.cpu, big.gpu_va, big.size);
	while (cs.len < cs.size - 24)
		nfence_cs_nop(&cs);
	nfence_cs_write64(&cs, t.bo.gpu_va, 0xb16);
	igt_assert_eq_u32(cs.len, MAX_SUBMIT);
	s.device = t.env.dev;
	s.hwqueue = t.q.handle;
	s.commands_gpu_va = big.gpu_va;
	s.size = cs.len;
	expect_submit_ok(&t, &s);
	igt_assert_eq_u64(*word(&t, 0), 0xb16);
	nfence_bo_destroy(&big);
	t_fini(&t);
}

static void test_queues_share_context(void)
{
	struct nfence_queue q2;
	struct nfence_cs cs;
	struct t t;

	t_init(&t);
	nfence_queue_create_on(&q2, fd, t.env.dev, t.q.context, 0);
	nfence_queue_begin(&q2, &cs);
	nfence_cs_write64(&cs, t.bo.gpu_va + 16, 2);
	nfence_queue_submit(&q2, &cs);
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_write64(&cs, t.bo.gpu_va + 8, 1);
	nfence_queue_submit(&t.q, &cs);
	nfence_queue_sync(&q2);
	nfence_queue_sync(&t.q);
	igt_assert_eq_u64(*word(&t, 8), 1);
	igt_assert_eq_u64(*word(&t, 16), 2);
	/* Each queue has its own progress. */
	igt_assert_eq_u64(*q2.progress, 1);
	igt_assert_eq_u64(*t.q.progress, 1);
	nfence_queue_destroy(&q2);
	t_fini(&t);
}

/*
 * A SUBMIT waiting for room waits interruptibly (Documentation/gpu-work.rst,
 * "Kernel-mode submission"): a signal without SA_RESTART ends it with
 * -EINTR and queues nothing, so the same progress value submits again
 * once there is room.
 */
struct interrupted {
	struct t *t;
	pid_t tid;
	int done;
	int error;
};

static void interrupt_handler(int sig)
{
	(void)sig;
}

static void *interrupted_fn(void *arg)
{
	struct interrupted *f = arg;

	f->tid = gettid();
	for (;;) {
		struct nfence_cs cs;
		int ret;

		nfence_cs_init(&cs, (char *)f->t->bo.cpu + 0x8000,
			       f->t->bo.gpu_va + 0x8000, 64);
		nfence_cs_nop(&cs);
		ret = __nfence_queue_submit(&f->t->q, &cs);
		if (ret) {
			f->error = ret;
			break;
		}
		__atomic_store_n(&f->done, f->done + 1, __ATOMIC_SEQ_CST);
		if (f->done > 2 * MAX_QUEUED) {
			/* Never blocked: the subtest fails on f->error. */
			f->error = -EOVERFLOW;
			break;
		}
	}
	return NULL;
}

static void test_blocked_submit_interrupted(void)
{
	struct sigaction sa = { .sa_handler = interrupt_handler }, old;
	struct interrupted f = { 0 };
	struct drm_nfence_fence_mapping m;
	struct nfence_cs cs;
	pthread_t thread;
	uint64_t value;
	uint32_t h;
	struct t t;

	require_native();
	t_init(&t);
	f.t = &t;
	/* No SA_RESTART: the interrupted ioctl returns -EINTR. */
	igt_assert_eq(sigaction(SIGUSR1, &sa, &old), 0);
	h = nfence_fence_create(fd, t.env.dev, TYPE_DEFAULT, 0, 0, &m);
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_wait_fence(&cs, &m, 1);
	nfence_queue_submit(&t.q, &cs);

	igt_assert_eq(nfence_thread_create(&thread, interrupted_fn, &f), 0);
	/* Until it stops submitting: blocked on the full queue. */
	for (int last = -1, same = 0; same < 5; usleep(50 * 1000)) {
		int now = __atomic_load_n(&f.done, __ATOMIC_SEQ_CST);

		same = now == last ? same + 1 : 0;
		last = now;
	}
	nfence_wait_in_ioctl(getpid(), __atomic_load_n(&f.tid,
						       __ATOMIC_SEQ_CST), 5000);
	igt_assert_eq(pthread_kill(thread, SIGUSR1), 0);
	igt_assert_eq(nfence_thread_join(thread, 5000), 0);
	igt_assert_eq(f.error, -EINTR);
	igt_info("%d submissions accepted behind the parked one\n", f.done);

	/* Nothing was queued: the interrupted value is still the next one. */
	value = t.q.submitted;
	nfence_fence_signal(fd, t.env.dev, h, 1);
	igt_assert(nfence_queue_poll(&t.q, value, 10000));
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_write64(&cs, t.bo.gpu_va + 8, 7);
	igt_assert_eq(__nfence_queue_submit(&t.q, &cs), 0);
	igt_assert_eq_u64(t.q.submitted, value + 1);
	nfence_queue_sync(&t.q);
	igt_assert_eq_u64(*word(&t, 8), 7);

	igt_assert_eq(sigaction(SIGUSR1, &old, NULL), 0);
	nfence_fence_destroy(fd, h);
	t_fini(&t);
}

/* SUBMIT blocks while DRM_NFENCE_MAX_QUEUED submissions are pending. */
struct filler {
	struct t *t;
	int total;
	int done;
	int error;
};

static void *filler_fn(void *arg)
{
	struct filler *f = arg;

	for (int i = 0; i < f->total; i++) {
		struct nfence_cs cs;
		int ret;

		nfence_cs_init(&cs, (char *)f->t->bo.cpu + 0x8000,
			       f->t->bo.gpu_va + 0x8000, 64);
		nfence_cs_nop(&cs);
		do {
			ret = __nfence_queue_submit(&f->t->q, &cs);
		} while (ret == -EINTR);
		if (ret) {
			f->error = ret;
			break;
		}
		__atomic_store_n(&f->done, i + 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void test_submit_blocks_when_full(void)
{
	struct drm_nfence_fence_mapping m;
	struct filler f = { .total = MAX_QUEUED + 40 };
	struct nfence_cs cs;
	pthread_t thread;
	uint32_t h;
	int stuck;
	struct t t;

	require_native();
	t_init(&t);
	f.t = &t;
	h = nfence_fence_create(fd, t.env.dev, TYPE_DEFAULT, 0, 0, &m);
	nfence_queue_begin(&t.q, &cs);
	nfence_cs_wait_fence(&cs, &m, 1);
	nfence_queue_submit(&t.q, &cs);

	igt_assert_eq(nfence_thread_create(&thread, filler_fn, &f), 0);
	/* Let it fill the queue until it blocks. */
	for (int last = -1, same = 0; same < 5; usleep(50 * 1000)) {
		int now = __atomic_load_n(&f.done, __ATOMIC_SEQ_CST);

		same = now == last ? same + 1 : 0;
		last = now;
	}
	stuck = __atomic_load_n(&f.done, __ATOMIC_SEQ_CST);
	igt_info("%d submissions accepted behind the parked one\n", stuck);
	nfence_fence_signal(fd, t.env.dev, h, 1);
	igt_assert_eq(nfence_thread_join(thread, 20000), 0);
	igt_assert_eq(f.error, 0);
	igt_assert_eq(f.done, f.total);
	nfence_queue_sync(&t.q);
	igt_assert_eq_u64(*t.q.progress, f.total + 1);
	/* MAX_QUEUED pending, counting the parked one or not. */
	igt_assert_lte(MAX_QUEUED - 1, stuck);
	igt_assert_lte(stuck, MAX_QUEUED);
	t_fini(&t);
}

/*
 * A SUBMIT blocked on a full queue, and what ends it. The queue is parked
 * on a FENCE_WAIT; a filler thread submits until the queue is full and it
 * blocks; then something happens to the queue and the blocked call must
 * return that queue's documented error, not sleep on.
 */
struct blocked {
	struct t t;
	struct filler f;
	pthread_t thread;
	uint32_t park;
	struct drm_nfence_fence_mapping park_m;
	/* The submission right after the park: a WRITE64 a test may break. */
	struct nfence_cs cs;
	uint32_t offset;
};

static void blocked_start(struct blocked *b, uint64_t work_ns)
{
	struct nfence_cs cs;

	t_init(&b->t);
	b->f = (struct filler){ .t = &b->t, .total = MAX_QUEUED + 40 };
	b->park = nfence_fence_create(fd, b->t.env.dev, TYPE_DEFAULT, 0, 0,
				      &b->park_m);
	nfence_queue_begin(&b->t.q, &cs);
	if (work_ns)
		nfence_cs_work(&cs, work_ns);
	else
		nfence_cs_wait_fence(&cs, &b->park_m, 1);
	nfence_queue_submit(&b->t.q, &cs);
	nfence_queue_begin(&b->t.q, &b->cs);
	b->offset = nfence_cs_write64(&b->cs, b->t.bo.gpu_va + 0x10, 0x11);
	nfence_queue_submit(&b->t.q, &b->cs);

	igt_assert_eq(nfence_thread_create(&b->thread, filler_fn, &b->f), 0);
	/* Until the queue is full and the filler sleeps in SUBMIT. */
	igt_assert_eq(nfence_debugfs_queue_wait_pending(dbg, getpid(),
							b->t.env.dev,
							b->t.q.context,
							MAX_QUEUED, WAIT_MS),
		      0);
	usleep(QUIET_MS * 1000);
	igt_assert_eq(__atomic_load_n(&b->f.error, __ATOMIC_SEQ_CST), 0);
	igt_assert_lt(__atomic_load_n(&b->f.done, __ATOMIC_SEQ_CST),
		      b->f.total);
}

/* The filler came back with @err, and nothing it submitted was lost. */
static void blocked_join(struct blocked *b, int err)
{
	igt_assert_eq(nfence_thread_join(b->thread, WAIT_MS), 0);
	igt_assert_eq(b->f.error, err);
	igt_assert_lt(b->f.done, b->f.total);
	igt_info("the blocked SUBMIT returned %d (%s) after %d accepted\n",
		 b->f.error, strerror(-b->f.error), b->f.done);
}

static void test_blocked_submit_destroy(void)
{
	struct blocked b;
	int base;

	require_native();
	base = nfence_debugfs_count_queues(dbg, getpid());
	blocked_start(&b, 0);
	nfence_hwqueue_destroy(fd, b.t.env.dev, b.t.q.handle);
	b.t.q.handle = 0;
	blocked_join(&b, -ENOENT);
	/* The queue and its pending submissions are gone. */
	igt_assert_eq(nfence_debugfs_count_queues(dbg, getpid()), base);
	nfence_fence_destroy(fd, b.park);
	t_fini(&b.t);
}

/*
 * Issue 17 point 6: nothing lowers the CurrentValue of an AlwaysSignaled
 * fence. A faulted queue's progress fence is AlwaysSignaled; a queue of
 * another context then WRITE64s and TIMESTAMPs below it at its GPU VA,
 * which store nothing; the same commands still store into a live fence.
 */
static void test_write_always_signaled(void)
{
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *live;
	struct nfence_queue qa, qb;
	struct nfence_env env;
	struct nfence_cs cs;
	uint64_t done;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	nfence_env_init(&env, fd);
	nfence_queue_create(&qa, fd, env.dev, 0, 0);
	nfence_queue_create(&qb, fd, env.dev, 0, 0);
	h = nfence_fence_create(fd, env.dev, TYPE_DEFAULT, 0, 0, &m);
	live = nfence_fence_map(fd, &m);

	/* qa faults (a write to an unmapped address). */
	nfence_queue_begin(&qa, &cs);
	nfence_cs_write64(&cs, 8, 1);
	nfence_queue_submit(&qa, &cs);
	igt_assert_eq(nfence_queue_wait(&qa, UINT64_MAX, WAIT_MS), 0);
	igt_assert_eq_u64(*qa.progress, ALWAYS);

	nfence_queue_begin(&qb, &cs);
	nfence_cs_write64(&cs, qa.progress_mapping.current_value_gpu_va, 5);
	nfence_cs_timestamp(&cs, qa.progress_mapping.current_value_gpu_va);
	nfence_cs_write64(&cs, m.current_value_gpu_va, 5);
	done = nfence_queue_submit(&qb, &cs);
	igt_assert(nfence_queue_poll(&qb, done, WAIT_MS));
	igt_assert_eq_u64(*qa.progress, ALWAYS);
	igt_assert_eq_u64(*live, 5);

	nfence_fence_unmap(live);
	nfence_fence_destroy(fd, h);
	nfence_queue_destroy(&qb);
	nfence_queue_destroy(&qa);
	nfence_env_fini(&env);
}

/*
 * Issue 17 point 7: a NO_SIGNAL handle cannot signal from the GPU. Its
 * CurrentValue VA is a read-only mapping of its own (also in the file that
 * created the fence, whose own VA stays writable): a FENCE_SIGNAL there
 * faults the queue's context with a page fault at that VA and leaves the
 * value alone; a FENCE_WAIT there still works; a handle of the same fence
 * without the flag signals.
 */
static void test_no_signal_read_only(void)
{
	struct drm_nfence_fence_mapping m, mo, mn, mc;
	struct drm_nfence_context_control ctl;
	const volatile uint64_t *value;
	struct nfence_queue q, qw, qs;
	struct nfence_env env;
	struct nfence_cs cs;
	uint32_t h, ho, hn, hc;
	uint64_t done;
	int sfd;

	nfence_watchdog(WATCHDOG_S);
	require_native();
	nfence_env_init(&env, fd);
	h = nfence_fence_create(fd, env.dev, TYPE_DEFAULT,
				DRM_NFENCE_FENCE_SHARED |
				DRM_NFENCE_FENCE_NT_SECURITY_SHARING, 3, &m);
	value = nfence_fence_map(fd, &m);
	sfd = nfence_fence_share(fd, h);
	/* Another file: a NO_SIGNAL handle and a plain one. */
	hn = nfence_fence_open(env.fd2, env.fd2_dev, sfd, NO_SIGNAL, &mn);
	ho = nfence_fence_open(env.fd2, env.fd2_dev, sfd, 0, &mo);
	/* The creator's file: a NO_SIGNAL handle on its second device. */
	hc = nfence_fence_open(fd, env.dev2, sfd, NO_SIGNAL, &mc);
	close(sfd);
	igt_assert_neq_u64(mn.current_value_gpu_va, mo.current_value_gpu_va);
	igt_assert_neq_u64(mc.current_value_gpu_va, m.current_value_gpu_va);

	/* Waits through the read-only VA work. */
	nfence_queue_create(&qw, env.fd2, env.fd2_dev, 0, 0);
	nfence_queue_begin(&qw, &cs);
	nfence_cs_wait_fence(&cs, &mn, 3);
	done = nfence_queue_submit(&qw, &cs);
	igt_assert(nfence_queue_poll(&qw, done, WAIT_MS));

	/* Signals through it fault, in either file. */
	nfence_queue_create(&q, env.fd2, env.fd2_dev, 0, 0);
	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &mn, 9);
	nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, UINT64_MAX, WAIT_MS), 0);
	nfence_queue_state(&q, &ctl);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, mn.current_value_gpu_va);
	nfence_queue_create(&qs, fd, env.dev2, 0, 0);
	nfence_queue_begin(&qs, &cs);
	nfence_cs_write64(&cs, mc.current_value_gpu_va, 1);
	nfence_queue_submit(&qs, &cs);
	igt_assert_eq(nfence_queue_wait(&qs, UINT64_MAX, WAIT_MS), 0);
	nfence_queue_state(&qs, &ctl);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u64(*value, 3);

	/* The plain handle signals. */
	nfence_queue_begin(&qw, &cs);
	nfence_cs_signal_fence(&cs, &mo, 9);
	done = nfence_queue_submit(&qw, &cs);
	igt_assert(nfence_queue_poll(&qw, done, WAIT_MS));
	igt_assert_eq_u64(*value, 9);

	nfence_fence_unmap(value);
	nfence_queue_destroy(&qs);
	nfence_queue_destroy(&q);
	nfence_queue_destroy(&qw);
	nfence_fence_destroy(fd, hc);
	nfence_fence_destroy(env.fd2, ho);
	nfence_fence_destroy(env.fd2, hn);
	nfence_fence_destroy(fd, h);
	nfence_env_fini(&env);
}

/*
 * Issue 19 point 8: a GPU FENCE_SIGNAL stores its value as given, as the
 * hardware writes memory: a lower value lowers CurrentValue, within the
 * same high half (a 32-bit store on a GPU without 64-bit atomics) and
 * across it (there, the interrupt with which the driver stores the whole
 * value). Waits then compare against the lowered value. A CPU signal
 * never lowers it (nfence_wait@signal-lower pins that side).
 */
static void test_gpu_signal_lower(void)
{
	static const uint64_t from[] = { 10, (1ull << 32) + 5 };
	static const uint64_t to[] = { 5, 3 };
	struct drm_nfence_fence_mapping m;
	const volatile uint64_t *value;
	struct nfence_queue q;
	bool gpu32 = adapter.flags & DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS;
	uint64_t done, carries;
	struct nfence_env env;
	struct nfence_cs cs;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	require_native();
	nfence_env_init(&env, fd);
	nfence_queue_create(&q, fd, env.dev, 0, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(from); i++) {
		carries = nfence_debugfs_get_u64(dbg, "nfence_interrupts",
						 "carries");
		h = nfence_fence_create(fd, env.dev, TYPE_DEFAULT, 0, from[i],
					&m);
		value = nfence_fence_map(fd, &m);
		nfence_queue_begin(&q, &cs);
		nfence_cs_signal_fence(&cs, &m, to[i]);
		done = nfence_queue_submit(&q, &cs);
		igt_assert(nfence_queue_poll(&q, done, WAIT_MS));
		igt_assert_eq_u64(*value, to[i]);
		/* Across a high half, a 32-bit GPU needs the driver's store. */
		igt_assert_eq_u64(nfence_debugfs_get_u64(dbg, "nfence_interrupts",
							 "carries") - carries,
				  gpu32 && (from[i] >> 32) != (to[i] >> 32));
		igt_assert_eq(__nfence_fence_wait_one(fd, env.dev, h, to[i] + 1,
						      0), -ETIME);
		igt_assert_eq(__nfence_fence_wait_one(fd, env.dev, h, to[i], 0),
			      0);
		nfence_fence_unmap(value);
		nfence_fence_destroy(fd, h);
	}
	nfence_queue_destroy(&q);
	nfence_env_fini(&env);
}

/* The count @efd held, read within @ms (0 if it did not become readable). */
static uint64_t eventfd_count(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t c = 0;
	int ret;

	do {
		ret = poll(&pfd, 1, ms);
	} while (ret < 0 && errno == EINTR);
	igt_assert_lte(0, ret);
	if (ret)
		igt_assert_eq(read(efd, &c, sizeof(c)), sizeof(c));
	return c;
}

/*
 * A GPU signal that lowers a fence does not bring back a waiter it had
 * released: an asynchronous wait for 5, released by a CPU signal of 10,
 * fires its eventfd once; a FENCE_SIGNAL of 3 then lowers the fence and
 * leaves no waiter (MonitoredValue UINT64_MAX), and a CPU signal of 6,
 * which reaches 5 again, fires nothing more. A new wait for 5 blocks on
 * the lowered value until that signal.
 */
static void test_gpu_signal_lower_released(void)
{
	uint64_t wanted = 5;
	struct drm_nfence_fence_wait w = {
		.count = 1,
		.values = (uintptr_t)&wanted,
		.flags = DRM_NFENCE_WAIT_ASYNC,
	};
	struct drm_nfence_fence_mapping m;
	struct nfence_debugfs_fence f;
	const volatile uint64_t *value;
	struct nfence_queue q;
	struct nfence_env env;
	struct nfence_cs cs;
	uint64_t done;
	int efd, fdir;
	uint32_t h;

	nfence_watchdog(WATCHDOG_S);
	require_native();
	fdir = nfence_debugfs_fences_dir(fd);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	igt_assert_fd(efd);
	nfence_env_init(&env, fd);
	nfence_queue_create(&q, fd, env.dev, 0, 0);
	h = nfence_fence_create(fd, env.dev, TYPE_DEFAULT, 0, 0, &m);
	value = nfence_fence_map(fd, &m);

	w.device = env.dev;
	w.handles = (uintptr_t)&h;
	w.eventfd = efd;
	igt_assert_eq(__nfence_fence_wait(fd, &w), 0);
	igt_assert_eq_u64(eventfd_count(efd, 0), 0);
	nfence_debugfs_fence(fdir, &m, &f);
	igt_assert_eq_u64(f.waiters, 1);
	igt_assert_eq_u64(f.monitored, wanted - 1);
	nfence_fence_signal(fd, env.dev, h, 10);
	igt_assert_eq_u64(eventfd_count(efd, WAIT_MS), 1);

	nfence_queue_begin(&q, &cs);
	nfence_cs_signal_fence(&cs, &m, 3);
	done = nfence_queue_submit(&q, &cs);
	igt_assert(nfence_queue_poll(&q, done, WAIT_MS));
	igt_assert_eq_u64(*value, 3);
	nfence_debugfs_fence(fdir, &m, &f);
	igt_assert_eq_u64(f.waiters, 0);
	igt_assert_eq_u64(f.monitored, UINT64_MAX);
	igt_assert_eq(__nfence_fence_wait_one(fd, env.dev, h, wanted, 0),
		      -ETIME);

	nfence_fence_signal(fd, env.dev, h, 6);
	igt_assert_eq_u64(*value, 6);
	igt_assert_eq_u64(eventfd_count(efd, QUIET_MS), 0);
	igt_assert_eq(__nfence_fence_wait_one(fd, env.dev, h, wanted, 0), 0);

	nfence_fence_unmap(value);
	nfence_fence_destroy(fd, h);
	nfence_queue_destroy(&q);
	nfence_env_fini(&env);
	close(efd);
	close(fdir);
}

/*
 * Every open file has a GPU VA space of its own: a WRITE64 on this file's
 * queue at a VA that only the second file maps (the last word of
 * VA_OTHER_SIZE bytes allocated there after the queue was made, past
 * everything this file's queue maps) is a page fault of this file's
 * context, at that VA, and leaves the second file's memory alone. The
 * same command on a queue of the second file writes it. (Were the space
 * shared, the allocation would come after the queue's mappings and the
 * first write would land in it.)
 */
#define VA_OTHER_SIZE	(4ull << 20)

static void test_va_space_per_file(void)
{
	struct drm_nfence_context_control ctl;
	struct drm_nfence_device_control dc;
	struct nfence_queue q, q2;
	struct nfence_env env;
	struct nfence_bo other;
	struct nfence_cs cs;
	uint64_t va, done;

	nfence_watchdog(WATCHDOG_S);
	require_native();
	nfence_env_init(&env, fd);
	nfence_queue_create(&q, fd, env.dev, 0, 0);
	nfence_bo_create(env.fd2, env.fd2_dev, VA_OTHER_SIZE, SYSTEM, 0,
			 &other);
	va = other.gpu_va + VA_OTHER_SIZE - 8;
	igt_assert_f(va >= q.cmds.gpu_va + q.cmds.size &&
		     va > q.progress_mapping.current_value_gpu_va &&
		     va > q.progress_mapping.monitored_value_gpu_va &&
		     va > q.wait_log_gpu_va && va > q.signal_log_gpu_va,
		     "%#" PRIx64 " is not past this file's queue\n", va);

	nfence_queue_begin(&q, &cs);
	nfence_cs_write64(&cs, va, 0x5a5a);
	done = nfence_queue_submit(&q, &cs);
	igt_assert_eq(nfence_queue_wait(&q, done, WAIT_MS), 0);
	igt_assert_eq_u64(*q.progress, ALWAYS);
	nfence_queue_state(&q, &ctl);
	igt_info("state %#x fault_va %#" PRIx64 " reason %u\n", ctl.state,
		 (uint64_t)ctl.fault_va, ctl.fault_reason);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert_eq_u32(ctl.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(ctl.fault_va, va);
	igt_assert_eq_u32(nfence_device_control(fd, env.dev,
						DRM_NFENCE_DEVICE_OP_QUERY,
						&dc),
			  DRM_NFENCE_DEVICE_ERROR_NONE);
	igt_assert_eq_u32(dc.fault_reason, DRM_NFENCE_FAULT_PAGE);
	igt_assert_eq_u64(dc.fault_va, va);
	igt_assert_eq_u64(*nfence_bo_u64(&other, VA_OTHER_SIZE - 8), 0);

	nfence_queue_create(&q2, env.fd2, env.fd2_dev, 0, 0);
	nfence_queue_begin(&q2, &cs);
	nfence_cs_write64(&cs, va, 0x5a5a);
	done = nfence_queue_submit(&q2, &cs);
	igt_assert_eq(nfence_queue_wait(&q2, done, WAIT_MS), 0);
	igt_assert_eq_u64(*q2.progress, done);
	igt_assert_eq_u64(*nfence_bo_u64(&other, VA_OTHER_SIZE - 8), 0x5a5a);

	nfence_queue_destroy(&q2);
	nfence_bo_destroy(&other);
	nfence_queue_destroy(&q);
	nfence_env_fini(&env);
}

static void test_blocked_submit_fault(void)
{
	struct blocked b;

	require_native();
	blocked_start(&b, 0);
	/* The command after the park becomes invalid, then the park ends. */
	*nfence_cs_ptr(&b.cs, b.offset) = HDR(0x7f,
					      DRM_NFENCE_CS_WRITE64_WORDS);
	nfence_fence_signal(fd, b.t.env.dev, b.park, 1);
	blocked_join(&b, -EIO);
	igt_assert_eq_u32(nfence_queue_state(&b.t.q, NULL), ST_FAULTED);
	igt_assert_eq_u64(*word(&b.t, 0x10), 0);
	nfence_fence_destroy(fd, b.park);
	t_fini(&b.t);
}

static void test_blocked_submit_tdr(void)
{
	uint64_t tdr_ms = nfence_param_get_u64("tdr_timeout_ms");
	struct blocked b;

	require_native();
	igt_require_f(tdr_ms > 0 && tdr_ms <= 10000, "tdr_timeout_ms is %"
		      PRIu64 " (0: off)\n", tdr_ms);
	nfence_watchdog(WATCHDOG_S + tdr_ms / 1000);
	/* A WORK far past the TDR timeout at the head of the queue. */
	blocked_start(&b, (tdr_ms + 5000) * 1000000ull);
	nfence_watchdog(WATCHDOG_S + tdr_ms / 1000);
	blocked_join(&b, -EIO);
	igt_assert_eq_u32(nfence_queue_state(&b.t.q, NULL), ST_LOST);
	igt_assert_eq_u64(*b.t.q.progress, ALWAYS);
	nfence_fence_destroy(fd, b.park);
	t_fini(&b.t);
}

/*
 * The child of blocked-submit-kill: a file of its own, a queue parked on a
 * fence and filled, then a SUBMIT that blocks until the child is killed.
 * Raw calls only (no IGT asserts in a plain child); tells the parent on
 * @ready just before the SUBMIT that blocks; returns a step on failure.
 */
static int blocked_child(int ready)
{
	struct drm_nfence_device_create dc = { 0 };
	struct drm_nfence_context_create cc = { 0 };
	struct drm_nfence_hwqueue_create qc = { 0 };
	struct drm_nfence_fence_create fc = { .type = TYPE_DEFAULT };
	struct drm_nfence_alloc_create ac = {
		.size = 64 * 1024,
		.segment_id = SYSTEM,
	};
	struct drm_nfence_alloc_lock al = { 0 };
	struct drm_nfence_submit s = { 0 };
	struct nfence_cs cs;
	void *cpu;
	int f = __nfence_open_adapter(0);

	if (f < 0)
		return 1;
	if (__nfence_device_create(f, &dc))
		return 2;
	cc.device = dc.handle;
	qc.device = dc.handle;
	fc.device = dc.handle;
	ac.device = dc.handle;
	al.device = dc.handle;
	if (__nfence_context_create(f, &cc))
		return 3;
	qc.context = cc.handle;
	if (__nfence_hwqueue_create(f, &qc) || __nfence_fence_create(f, &fc) ||
	    __nfence_alloc_create(f, &ac))
		return 4;
	al.handle = ac.handle;
	if (__nfence_alloc_lock(f, &al))
		return 5;
	cpu = mmap(NULL, al.size, PROT_READ | PROT_WRITE, MAP_SHARED, f,
		   al.mmap_offset);
	if (cpu == MAP_FAILED)
		return 6;
	s.device = dc.handle;
	s.hwqueue = qc.handle;
	/* The park, then NOPs until the queue is full. */
	nfence_cs_init(&cs, cpu, ac.gpu_va, 4096);
	nfence_cs_wait_fence(&cs, &fc.mapping, 1);
	s.commands_gpu_va = cs.gpu_va;
	s.size = cs.len;
	s.progress_fence_value = 1;
	if (__nfence_submit(f, &s))
		return 7;
	nfence_cs_init(&cs, (char *)cpu + 4096, ac.gpu_va + 4096, 64);
	nfence_cs_nop(&cs);
	s.commands_gpu_va = cs.gpu_va;
	s.size = cs.len;
	for (uint64_t v = 2; v <= MAX_QUEUED + 1; v++) {
		s.progress_fence_value = v;
		if (v == MAX_QUEUED + 1 && write(ready, "b", 1) != 1)
			return 8;
		if (__nfence_submit(f, &s))
			return 9;
	}
	/* The last SUBMIT should never have returned. */
	return 10;
}

static void test_blocked_submit_kill(void)
{
	int fds[2], ret = 0;
	pid_t pid;
	char c;

	require_native();
	nfence_watchdog(WATCHDOG_S);
	igt_assert_eq(pipe(fds), 0);
	pid = fork();
	igt_assert(pid >= 0);
	if (!pid) {
		close(fds[0]);
		_exit(blocked_child(fds[1]));
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		/* It failed before the SUBMIT that blocks. */
		ret = nfence_waitpid_ms(pid, WAIT_MS);
		igt_assert_f(false, "child setup failed (%d)\n", ret);
	}
	close(fds[0]);
	/* Full, and the child asleep in the SUBMIT that has no room. */
	igt_assert_eq(nfence_debugfs_count_queues(dbg, pid), 1);
	usleep(QUIET_MS * 1000);
	igt_assert_eq(waitpid(pid, NULL, WNOHANG), 0);
	kill(pid, SIGKILL);
	/* It dies at once, with its file, queue and submissions. */
	igt_assert_eq(nfence_waitpid_ms(pid, WAIT_MS), SIGKILL);
	igt_assert_eq(nfence_debugfs_queues_wait_gone(dbg, pid, WAIT_MS), 0);
	/* The engine still runs others. */
	{
		struct t t;

		t_init(&t);
		assert_queue_ok(&t, ~0ull);
		t_fini(&t);
	}
}

/*
 * Four threads submit to one queue, each taking the next progress value
 * from a shared counter and submitting at once, so that their SUBMITs
 * race. A SUBMIT whose value another thread's already passed fails with
 * -EINVAL; every accepted one must run, in the order of its value.
 */
#define RACERS		4
#define RACE_EACH	64

struct racer {
	pthread_t thread;
	struct t *t;
	struct nfence_bo *cmds;
	uint64_t *next;
	int index;
	int accepted, rejected, error;
	uint64_t last;	/* its highest accepted value */
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < RACE_EACH; i++) {
		uint64_t v = __atomic_add_fetch(r->next, 1, __ATOMIC_SEQ_CST);
		uint64_t off = v * 64;
		struct drm_nfence_submit s = {
			.device = r->t->env.dev,
			.hwqueue = r->t->q.handle,
			.progress_fence_value = v,
		};
		struct nfence_cs cs;
		int ret;

		/* Its own 64 bytes: a value's slot, then its timestamp. */
		nfence_cs_init(&cs, (char *)r->cmds->cpu + off,
			       r->cmds->gpu_va + off, 64);
		nfence_cs_write64(&cs, r->t->bo.gpu_va + v * 16, v);
		nfence_cs_timestamp(&cs, r->t->bo.gpu_va + v * 16 + 8);
		s.commands_gpu_va = cs.gpu_va;
		s.size = cs.len;
		do {
			ret = __nfence_submit(r->t->q.fd, &s);
		} while (ret == -EINTR);
		if (!ret) {
			r->accepted++;
			r->last = v;
		} else if (ret == -EINVAL) {
			r->rejected++;
		} else {
			r->error = ret;
			break;
		}
	}
	return NULL;
}

static void test_submit_concurrent(void)
{
	struct racer r[RACERS];
	struct nfence_bo cmds;
	uint64_t next = 0, last = 0, prev_ts = 0;
	int accepted = 0;
	struct t t;

	t_init(&t);
	nfence_bo_create(fd, t.env.dev, (RACERS * RACE_EACH + 1) * 64, SYSTEM,
			 0, &cmds);
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .t = &t, .cmds = &cmds, .next = &next,
				       .index = i };
		igt_assert_eq(nfence_thread_create(&r[i].thread,
						   racer_fn, &r[i]), 0);
	}
	for (int i = 0; i < RACERS; i++) {
		igt_assert_eq(nfence_thread_join(r[i].thread,
						 WAIT_MS), 0);
		igt_assert_f(r[i].error == 0, "racer %d: SUBMIT returned %d "
			     "(%s)\n", i, r[i].error, strerror(-r[i].error));
		accepted += r[i].accepted;
	}
	igt_info("%d of %d submissions accepted\n", accepted,
		 RACERS * RACE_EACH);
	igt_assert_lt(0, accepted);

	/* Every accepted value ran, in order; every rejected one never did. */
	for (int i = 0; i < RACERS; i++)
		if (r[i].last > last)
			last = r[i].last;
	igt_assert_eq(nfence_queue_wait(&t.q, last, WAIT_MS), 0);
	igt_assert_eq_u64(*t.q.progress, last);
	for (uint64_t v = 1, n = 0; v <= next; v++) {
		uint64_t got = *word(&t, v * 16);

		if (!got)
			continue;
		igt_assert_eq_u64(got, v);
		igt_assert_lte_u64(prev_ts, *word(&t, v * 16 + 8));
		prev_ts = *word(&t, v * 16 + 8);
		n++;
		if (v == last)
			igt_assert_eq_u64(n, accepted);
	}
	igt_assert_eq_u64(*word(&t, last * 16), last);
	t.q.submitted = last;
	assert_queue_ok(&t, ~0ull);
	nfence_bo_destroy(&cmds);
	t_fini(&t);
}

/* Run-time faults */

/*
 * How the submission that faults is made: @build appends its commands to
 * @cs (valid at submission); @break_it then breaks them through the CPU
 * mapping (or otherwise) while the queue is parked, and says which GPU
 * VA and reason the fault must report.
 */
struct fault {
	struct nfence_env env;
	struct nfence_queue qa, qa2, qb;
	struct nfence_bo bo, victim;
	uint32_t park, other;
	struct drm_nfence_fence_mapping park_m, other_m;
	struct nfence_cs cs;
	uint32_t offset;
	uint64_t fault_va;
	uint32_t reason;
	bool va_in_command;
};

typedef void (*fault_fn)(struct fault *f);

static void put_u64(struct fault *f, uint32_t word_index, uint64_t v)
{
	uint32_t *p = nfence_cs_ptr(&f->cs, f->offset) + word_index;

	p[0] = (uint32_t)v;
	p[1] = (uint32_t)(v >> 32);
}

static void build_write(struct fault *f)
{
	f->offset = nfence_cs_write64(&f->cs, f->bo.gpu_va + 0x10, 0x11);
}

static void break_unmapped(struct fault *f)
{
	put_u64(f, 2, 8);
	f->fault_va = 8;
	f->reason = DRM_NFENCE_FAULT_PAGE;
}

static void break_destroyed(struct fault *f)
{
	put_u64(f, 2, f->victim.gpu_va + 0x18);
	nfence_bo_destroy(&f->victim);
	f->fault_va = f->victim.gpu_va + 0x18;
	f->reason = DRM_NFENCE_FAULT_PAGE;
}

/*
 * The CurrentValue VA of a shared fence that this file opened (its own
 * page slot of the file's GPU VA space) and closed again, the fence gone
 * with its creator's file.
 */
static void break_destroyed_shared(struct fault *f)
{
	struct drm_nfence_fence_mapping m;
	int fd2 = nfence_open(), nt;
	uint32_t dev2 = nfence_device_create(fd2), h2, h;

	h2 = nfence_fence_create(fd2, dev2, TYPE_DEFAULT,
				 NFENCE_FENCE_SHAREABLE, 0, NULL);
	nt = nfence_fence_share(fd2, h2);
	h = nfence_fence_open(fd, f->env.dev, nt, 0, &m);
	put_u64(f, 2, m.current_value_gpu_va);
	nfence_fence_destroy(fd, h);
	close(nt);
	close(fd2);
	f->fault_va = m.current_value_gpu_va;
	f->reason = DRM_NFENCE_FAULT_PAGE;
}

static void break_read_only(struct fault *f)
{
	put_u64(f, 2, f->other_m.monitored_value_gpu_va);
	f->fault_va = f->other_m.monitored_value_gpu_va;
	f->reason = DRM_NFENCE_FAULT_PAGE;
}

static void break_misaligned(struct fault *f)
{
	put_u64(f, 2, f->bo.gpu_va + 0x14);
	f->fault_va = f->bo.gpu_va + 0x14;
	f->reason = DRM_NFENCE_FAULT_MISALIGNED;
}

static void break_opcode(struct fault *f)
{
	*nfence_cs_ptr(&f->cs, f->offset) = HDR(0x7f,
						DRM_NFENCE_CS_WRITE64_WORDS);
	f->fault_va = nfence_cs_va(&f->cs, f->offset);
	f->va_in_command = true;
	f->reason = DRM_NFENCE_FAULT_BAD_COMMAND;
}

static void break_length(struct fault *f)
{
	*nfence_cs_ptr(&f->cs, f->offset) = HDR(DRM_NFENCE_CS_WRITE64, 8);
	f->fault_va = nfence_cs_va(&f->cs, f->offset);
	f->va_in_command = true;
	f->reason = DRM_NFENCE_FAULT_BAD_COMMAND;
}

static void build_signal(struct fault *f)
{
	f->offset = nfence_cs_fence_signal(&f->cs, f->bo.gpu_va + 0x10, 0,
					   0x11);
}

static void build_fence_wait(struct fault *f)
{
	f->offset = nfence_cs_fence_wait(&f->cs, f->bo.gpu_va + 0x10, 0);
}

static void break_wait_unmapped(struct fault *f)
{
	put_u64(f, 2, 0x10);
	f->fault_va = 0x10;
	f->reason = DRM_NFENCE_FAULT_PAGE;
}

static void build_timestamp(struct fault *f)
{
	f->offset = nfence_cs_timestamp(&f->cs, f->bo.gpu_va + 0x10);
}

static void run_fault(fault_fn build, fault_fn break_it)
{
	struct drm_nfence_context_control ctl, again;
	struct drm_nfence_hwqueue_create qc = { 0 };
	struct fault f;
	struct nfence_cs cs;
	uint64_t faulting;

	nfence_watchdog(WATCHDOG_S);
	require_native();
	memset(&f, 0, sizeof(f));
	nfence_env_init(&f.env, fd);
	nfence_bo_create(fd, f.env.dev, 64 * 1024, SYSTEM, 0, &f.bo);
	nfence_bo_create(fd, f.env.dev, PAGE, SYSTEM, 0, &f.victim);
	f.park = nfence_fence_create(fd, f.env.dev, TYPE_DEFAULT, 0, 0,
				     &f.park_m);
	f.other = nfence_fence_create(fd, f.env.dev, TYPE_DEFAULT, 0, 0,
				      &f.other_m);
	/* qa and qa2 on context A, qb on context B, same engine. */
	nfence_queue_create(&f.qa, fd, f.env.dev, 0, 0);
	nfence_queue_create_on(&f.qa2, fd, f.env.dev, f.qa.context, 0);
	nfence_queue_create(&f.qb, fd, f.env.dev, 0, 0);

	/* qa: park; the command that will fault; more work after it. */
	nfence_queue_begin(&f.qa, &cs);
	nfence_cs_wait_fence(&cs, &f.park_m, 1);
	nfence_queue_submit(&f.qa, &cs);
	nfence_queue_begin(&f.qa, &f.cs);
	nfence_cs_nop(&f.cs);
	build(&f);
	nfence_cs_write64(&f.cs, f.bo.gpu_va + 0x20, 0x22);
	faulting = nfence_queue_submit(&f.qa, &f.cs);
	nfence_queue_begin(&f.qa, &cs);
	nfence_cs_write64(&cs, f.bo.gpu_va + 0x30, 0x33);
	nfence_queue_submit(&f.qa, &cs);
	/* qa2: work released only after the fault. */
	nfence_queue_begin(&f.qa2, &cs);
	nfence_cs_wait_fence(&cs, &f.park_m, 2);
	nfence_cs_write64(&cs, f.bo.gpu_va + 0x40, 0x44);
	nfence_queue_submit(&f.qa2, &cs);

	/* Break it while parked, then release. */
	break_it(&f);
	nfence_fence_signal(fd, f.env.dev, f.park, 1);

	/* The progress fence becomes AlwaysSignaled. */
	igt_assert_eq(nfence_queue_wait(&f.qa, faulting, WAIT_MS), 0);
	igt_assert_eq(nfence_queue_wait(&f.qa, UINT64_MAX, 0), 0);
	igt_assert_eq_u64(*f.qa.progress, ALWAYS);
	{
		struct nfence_debugfs_queue line;
		int ret = nfence_debugfs_queue_wait_state(dbg, getpid(),
							  f.env.dev,
							  f.qa.context,
							  "faulted", 5000,
							  &line);

		igt_assert_f(ret == 0, "queue state %s, expected faulted "
			     "(%s)\n", ret == -ETIMEDOUT ? line.state : "?",
			     strerror(-ret));
	}

	nfence_queue_state(&f.qa, &ctl);
	igt_info("state %#x fault_va %#" PRIx64 " reason %u\n", ctl.state,
		 (uint64_t)ctl.fault_va, ctl.fault_reason);
	igt_assert(ctl.state & ST_FAULTED);
	igt_assert(!(ctl.state & ST_LOST));
	igt_assert_eq_u32(ctl.fault_reason, f.reason);
	if (f.va_in_command)
		igt_assert_f(ctl.fault_va >= f.fault_va &&
			     ctl.fault_va < f.fault_va + 24,
			     "fault_va %#" PRIx64 " not in the command at %#"
			     PRIx64 "\n", (uint64_t)ctl.fault_va, f.fault_va);
	else
		igt_assert_eq_u64(ctl.fault_va, f.fault_va);
	/* The device has the same first fault, and is not in error. */
	{
		struct drm_nfence_device_control dc;

		igt_assert_eq_u32(nfence_device_control(fd, f.env.dev,
							DRM_NFENCE_DEVICE_OP_QUERY,
							&dc),
				  DRM_NFENCE_DEVICE_ERROR_NONE);
		igt_assert_eq_u32(dc.fault_reason, f.reason);
		igt_assert_eq_u64(dc.fault_va, ctl.fault_va);
		igt_assert_eq_u32(dc.fault_context, f.qa.context);
	}

	/* Work before the fault ran, work after it did not. */
	nfence_fence_signal(fd, f.env.dev, f.park, 2);
	{
		struct nfence_cs bcs;

		nfence_queue_begin(&f.qb, &bcs);
		nfence_cs_wait_fence(&bcs, &f.park_m, 2);
		nfence_cs_write64(&bcs, f.bo.gpu_va + 0x50, 0x55);
		nfence_queue_submit(&f.qb, &bcs);
		nfence_queue_sync(&f.qb);
		usleep(QUIET_MS * 1000);
	}
	igt_assert_eq_u64(*nfence_bo_u64(&f.bo, 0x50), 0x55);
	igt_assert_eq_u64(*nfence_bo_u64(&f.bo, 0x20), 0);
	igt_assert_eq_u64(*nfence_bo_u64(&f.bo, 0x30), 0);
	igt_assert_eq_u64(*nfence_bo_u64(&f.bo, 0x40), 0);
	/* The other queue of the context went down with it. */
	igt_assert_eq_u64(*f.qa2.progress, ALWAYS);

	/* Submissions to the faulted context fail with -EIO. */
	nfence_queue_begin(&f.qa, &cs);
	nfence_cs_nop(&cs);
	igt_assert_eq(__nfence_queue_submit(&f.qa, &cs), -EIO);
	nfence_queue_begin(&f.qa2, &cs);
	nfence_cs_nop(&cs);
	igt_assert_eq(__nfence_queue_submit(&f.qa2, &cs), -EIO);
	igt_assert_eq(__nfence_queue_submit_wait(&f.qa, f.park, 1), -EIO);
	igt_assert_eq(__nfence_queue_submit_signal(&f.qa, f.park, 3), -EIO);
	qc.device = f.env.dev;
	qc.context = f.qa.context;
	igt_assert_eq(__nfence_hwqueue_create(fd, &qc), -EIO);

	/* Context B of the same device still runs. */
	nfence_queue_begin(&f.qb, &cs);
	nfence_cs_write64(&cs, f.bo.gpu_va + 0x58, 0x58);
	nfence_queue_submit(&f.qb, &cs);
	nfence_queue_sync(&f.qb);
	igt_assert_eq_u64(*nfence_bo_u64(&f.bo, 0x58), 0x58);
	igt_assert_eq_u32(nfence_queue_state(&f.qb, NULL), 0);
	/* The other fences of the device are not AlwaysSignaled. */
	igt_assert_eq(__nfence_fence_wait_one(fd, f.env.dev, f.other, 1, 0),
		      -ETIME);

	/* The first fault stays. */
	nfence_queue_state(&f.qa, &again);
	igt_assert_eq_u64(again.fault_va, ctl.fault_va);
	igt_assert_eq_u32(again.fault_reason, ctl.fault_reason);

	nfence_queue_destroy(&f.qb);
	nfence_queue_destroy(&f.qa2);
	nfence_queue_destroy(&f.qa);
	if (f.victim.handle)
		nfence_bo_destroy(&f.victim);
	nfence_bo_destroy(&f.bo);
	nfence_env_fini(&f.env);
}

static void test_bad_arg_pointer(void)
{
	static const unsigned long requests[] = {
		DRM_IOCTL_NFENCE_SUBMIT,
		DRM_IOCTL_NFENCE_SUBMIT_WAIT,
		DRM_IOCTL_NFENCE_SUBMIT_SIGNAL,
	};

	nfence_watchdog(WATCHDOG_S);
	nfence_assert_args_efault(fd, requests, ARRAY_SIZE(requests));
}

igt_main
{
	static const enum nfence_bad bad_devices[] = {
		NFENCE_BAD_ZERO, NFENCE_BAD_UNKNOWN, NFENCE_BAD_DESTROYED,
		NFENCE_BAD_OTHER_FD, NFENCE_BAD_WRONG_KIND,
	};
	static const struct {
		const char *name;
		const char *desc;
		fault_fn build, break_it;
	} faults[] = {
		{ "unmapped-va", "a WRITE64 to an unmapped VA",
		  build_write, break_unmapped },
		{ "destroyed-alloc", "a WRITE64 to an allocation destroyed "
		  "after the submission", build_write, break_destroyed },
		{ "destroyed-shared-value", "a FENCE_SIGNAL to the "
		  "CurrentValue of a shared fence opened and closed after the "
		  "submission", build_signal, break_destroyed_shared },
		{ "read-only", "a WRITE64 to a fence's MonitoredValue "
		  "(GPU read-only)", build_write, break_read_only },
		{ "signal-read-only", "a FENCE_SIGNAL whose CurrentValue VA "
		  "is a MonitoredValue", build_signal, break_read_only },
		{ "timestamp-read-only", "a TIMESTAMP to a MonitoredValue",
		  build_timestamp, break_read_only },
		{ "wait-unmapped-va", "a FENCE_WAIT reading an unmapped VA",
		  build_fence_wait, break_wait_unmapped },
		{ "misaligned", "a WRITE64 to a VA not 8-byte aligned",
		  build_write, break_misaligned },
		{ "bad-opcode", "a command rewritten to an unknown opcode",
		  build_write, break_opcode },
		{ "bad-length", "a command rewritten to a wrong length",
		  build_write, break_length },
	};

	igt_fixture {
		fd = nfence_open();
		nfence_query_adapter(fd, &adapter);
		native = adapter.flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE;
		dbg = nfence_debugfs_dir_files(fd, debugfs_files,
					       ARRAY_SIZE(debugfs_files));
	}

	igt_describe("Any SUBMIT flag bit fails with -EINVAL; nothing runs.");
	igt_subtest("submit-bad-flags")
		test_submit_bad_flags();

	igt_describe("SUBMIT of size 0 fails with -EINVAL.");
	igt_subtest("submit-size-zero")
		test_submit_size_zero();

	igt_describe("SUBMIT above DRM_NFENCE_MAX_SUBMIT_SIZE fails with "
		     "-EINVAL (mapped, valid commands); the maximum works.");
	igt_subtest("submit-size-too-big")
		test_submit_size_too_big();

	igt_describe("SUBMIT sizes that are not a multiple of 8 fail with "
		     "-EINVAL.");
	igt_subtest("submit-size-misaligned")
		test_submit_size_misaligned();

	igt_describe("A command buffer VA not 8-byte aligned fails with "
		     "-EINVAL.");
	igt_subtest("submit-va-misaligned")
		test_submit_va_misaligned();

	igt_describe("A command buffer at an unmapped VA (page 0, a "
		     "destroyed allocation) fails with -EINVAL.");
	igt_subtest("submit-va-unmapped")
		test_submit_va_unmapped();

	igt_describe("A command buffer running past its allocation fails "
		     "with -EINVAL.");
	igt_subtest("submit-va-partly-mapped")
		test_submit_va_partly_mapped();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices); i++) {
		igt_describe_f("SUBMIT on a %s device handle fails with "
			       "-ENOENT.", nfence_bad_name(bad_devices[i]));
		igt_subtest_f("submit-device-%s",
			      nfence_bad_name(bad_devices[i]))
			test_submit_bad_device(bad_devices[i]);
	}

	for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
		igt_describe_f("SUBMIT to a %s queue handle fails with "
			       "-ENOENT.", nfence_bad_name(b));
		igt_subtest_f("submit-hwqueue-%s", nfence_bad_name(b))
			test_submit_bad_hwqueue(b);
	}

	igt_describe("A progress fence value not above the previous "
		     "submission's (0 first, equal, lower) fails with "
		     "-EINVAL.");
	igt_subtest("submit-progress-not-increasing")
		test_submit_progress_not_increasing();

	igt_describe("An unknown opcode fails the submission with -EINVAL.");
	igt_subtest("cmd-unknown-opcode")
		test_cmd_unknown_opcode();

	igt_describe("A length other than the opcode's fails with -EINVAL, "
		     "for every opcode.");
	igt_subtest("cmd-wrong-length")
		test_cmd_wrong_length();

	igt_describe("Non-zero header flags fail with -EINVAL.");
	igt_subtest("cmd-header-flags")
		test_cmd_header_flags();

	igt_describe("A non-zero second word fails with -EINVAL.");
	igt_subtest("cmd-second-word")
		test_cmd_second_word();

	igt_describe("A last command cut short by the size fails with "
		     "-EINVAL.");
	igt_subtest("cmd-truncated")
		test_cmd_truncated();

	igt_describe("A GPU VA operand not 8-byte aligned fails with -EINVAL, "
		     "for every VA operand.");
	igt_subtest("cmd-misaligned-va")
		test_cmd_misaligned_va();

	igt_describe("WORK above DRM_NFENCE_CS_MAX_WORK_NS fails with "
		     "-EINVAL; the maximum is accepted.");
	igt_subtest("cmd-work-too-long")
		test_cmd_work_too_long();

	igt_describe("An invalid command after many valid ones, or alone, "
		     "fails the whole submission.");
	igt_subtest("cmd-bad-after-valid")
		test_cmd_bad_after_valid();

	for (volatile int op = SYNC_WAIT; op <= SYNC_SIGNAL; op++) {
		igt_describe_f("Any %s flag bit fails with -EINVAL; nothing "
			       "is queued.", sync_name(op));
		igt_subtest_f("%s-bad-flags", sync_name(op))
			test_sync_bad_flags(op);

		igt_describe_f("%s count 0 or above 64 fails with -EINVAL; "
			       "64 works.", sync_name(op));
		igt_subtest_f("%s-bad-count", sync_name(op))
			test_sync_bad_count(op);

		igt_describe_f("%s with an unreadable handles array fails "
			       "with -EFAULT.", sync_name(op));
		igt_subtest_f("%s-bad-handles-pointer", sync_name(op))
			test_sync_bad_handles_pointer(op);

		igt_describe_f("%s with an unreadable values array fails "
			       "with -EFAULT.", sync_name(op));
		igt_subtest_f("%s-bad-values-pointer", sync_name(op))
			test_sync_bad_values_pointer(op);

		for (volatile unsigned int i = 0; i < ARRAY_SIZE(bad_devices);
		     i++) {
			igt_describe_f("%s on a %s device handle fails with "
				       "-ENOENT.", sync_name(op),
				       nfence_bad_name(bad_devices[i]));
			igt_subtest_f("%s-device-%s", sync_name(op),
				      nfence_bad_name(bad_devices[i]))
				test_sync_bad_device(op, bad_devices[i]);
		}

		for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
			igt_describe_f("%s to a %s queue handle fails with "
				       "-ENOENT.", sync_name(op),
				       nfence_bad_name(b));
			igt_subtest_f("%s-hwqueue-%s", sync_name(op),
				      nfence_bad_name(b))
				test_sync_bad_hwqueue(op, b);
		}

		for (volatile int b = 0; b < NFENCE_BAD_COUNT; b++) {
			igt_describe_f("%s with a %s fence handle at any "
				       "position fails with -ENOENT.",
				       sync_name(op), nfence_bad_name(b));
			igt_subtest_f("%s-fence-%s", sync_name(op),
				      nfence_bad_name(b))
				test_sync_bad_fence(op, b);
		}

		igt_describe_f("%s through a handle opened %s fails with "
			       "-EACCES; the other restriction is allowed.",
			       sync_name(op),
			       op == SYNC_WAIT ? "NO_WAIT" : "NO_SIGNAL");
		igt_subtest_f("%s-%s", sync_name(op),
			      op == SYNC_WAIT ? "no-wait-handle" :
			      "no-signal-handle")
			test_sync_access(op);

		igt_describe_f("%s of an INTRA_GPU fence fails with -EINVAL.",
			       sync_name(op));
		igt_subtest_f("%s-intra-gpu", sync_name(op))
			test_sync_intra_gpu(op);

		igt_describe_f("%s checks flags and count before handles "
			       "and pointers.", sync_name(op));
		igt_subtest_f("%s-check-order", sync_name(op))
			test_sync_check_order(op);
	}

	igt_describe("WRITE64 results read through Lock2 (system memory and "
		     "CPU-visible VRAM): exact values, only the addressed "
		     "words, the last write wins.");
	igt_subtest("write64")
		test_write64();

	igt_describe("The GPU writes invisible VRAM and reads it back.");
	igt_subtest("write64-invisible-vram")
		test_write64_invisible_vram();

	igt_describe("A value the CPU wrote through Lock2 is what the GPU "
		     "reads.");
	igt_subtest("cpu-write-gpu-read")
		test_cpu_write_gpu_read();

	igt_describe("TIMESTAMPs around a WORK lie between two timestamp "
		     "queries and at least the WORK's duration apart.");
	igt_subtest("timestamp")
		test_timestamp();

	igt_describe("The progress fence takes each submission's value, up "
		     "to 64-bit values.");
	igt_subtest("progress-values")
		test_progress_values();

	igt_describe("Submissions on a queue run in order; the progress "
		     "fence passes every value.");
	igt_subtest("progress-in-order")
		test_progress_in_order();

	igt_describe("A command buffer of DRM_NFENCE_MAX_SUBMIT_SIZE runs.");
	igt_subtest("max-size-runs")
		test_max_size_runs();

	igt_describe("Two queues of one context both run, each with its own "
		     "progress fence.");
	igt_subtest("queues-share-context")
		test_queues_share_context();

	igt_describe("SUBMIT waits for room when DRM_NFENCE_MAX_QUEUED "
		     "submissions are pending and continues when they run.");
	igt_subtest("submit-blocks-when-full")
		test_submit_blocks_when_full();

	igt_describe("A SUBMIT blocked on a full queue is interrupted by a "
		     "signal (-EINTR without SA_RESTART) and queues nothing: "
		     "the same progress value submits again.");
	igt_subtest("blocked-submit-interrupted")
		test_blocked_submit_interrupted();

	igt_describe("A SUBMIT blocked on a full queue returns -ENOENT when "
		     "another thread destroys the queue; nothing is left.");
	igt_subtest("blocked-submit-destroy")
		test_blocked_submit_destroy();

	igt_describe("A SUBMIT blocked on a full queue returns -EIO when a "
		     "queued command faults the context.");
	igt_subtest("blocked-submit-fault")
		test_blocked_submit_fault();

	igt_describe("WRITE64 and TIMESTAMP to the CurrentValue of an "
		     "AlwaysSignaled fence store nothing; to a live fence they "
		     "still store.");
	igt_subtest("write-always-signaled")
		test_write_always_signaled();

	igt_describe("A GPU FENCE_SIGNAL of a lower value lowers CurrentValue "
		     "(the hardware writes memory), on the 64-bit and the "
		     "32-bit atomics paths.");
	igt_subtest("gpu-signal-lower")
		test_gpu_signal_lower();

	igt_describe("A waiter a signal released stays released when a GPU "
		     "FENCE_SIGNAL lowers the fence: its eventfd fires once, "
		     "even when the value is reached again.");
	igt_subtest("gpu-signal-lower-released")
		test_gpu_signal_lower_released();

	igt_describe("Another open file has its own GPU VA space: a VA only "
		     "the other file maps is a page fault here.");
	igt_subtest("va-space-per-file")
		test_va_space_per_file();

	igt_describe("A NO_SIGNAL handle's CurrentValue VA is read-only for "
		     "the GPU: a signal there faults, a wait works.");
	igt_subtest("no-signal-read-only")
		test_no_signal_read_only();

	igt_describe("A SUBMIT blocked on a full queue returns -EIO when TDR "
		     "loses the device.");
	igt_subtest("blocked-submit-tdr")
		test_blocked_submit_tdr();

	igt_describe("A process blocked in SUBMIT on a full queue dies at "
		     "once with SIGKILL; its queue goes, the engine runs on.");
	igt_subtest("blocked-submit-kill")
		test_blocked_submit_kill();

	igt_describe("Four threads race their SUBMITs on one queue: each "
		     "accepted progress value runs, in the order of the "
		     "values; a value another thread passed is -EINVAL.");
	igt_subtest("submit-concurrent")
		test_submit_concurrent();

	for (volatile unsigned int i = 0; i < ARRAY_SIZE(faults); i++) {
		igt_describe_f("At run time, %s faults the context: FAULTED "
			       "with fault_va and fault_reason, progress "
			       "fences AlwaysSignaled, later work dropped, "
			       "SUBMIT* and HWQUEUE_CREATE -EIO; another "
			       "context of the device still runs.",
			       faults[i].desc);
		igt_subtest_f("fault-%s", faults[i].name)
			run_fault(faults[i].build, faults[i].break_it);
	}

	igt_describe("An unreadable ioctl argument fails with -EFAULT.");
	igt_subtest("bad-arg-pointer")
		test_bad_arg_pointer();

	igt_fixture {
		nfence_watchdog(0);
		close(dbg);
		close(fd);
	}
}
