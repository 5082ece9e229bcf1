/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command emission for the KUnit suites that give the CMP commands to run
 * (nfence_cmp_test.c, nfence_cmp_ops_test.c): commands encoded in little
 * endian as the ISA in nfence_drm.h ("DOC: command stream") defines them,
 * appended to a buffer the suite has mapped into a GPU address space.
 *
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_KUNIT_CS_H__
#define __NFENCE_KUNIT_CS_H__

#include <kunit/test.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include <drm/nfence_drm.h>

/**
 * struct nfence_kcs - a command buffer being written
 * @test: the test; a command past @size fails it
 * @cmds: the buffer, in the kernel
 * @va: its GPU VA
 * @used: bytes written so far
 * @size: bytes of @cmds
 */
struct nfence_kcs {
	struct kunit *test;
	u8 *cmds;
	u64 va;
	size_t used;
	size_t size;
};

/* The GPU VA of the next command. */
static inline u64 nfence_kcs_cursor(const struct nfence_kcs *cs)
{
	return cs->va + cs->used;
}

/* The kernel address of GPU VA @va of the buffer. */
static inline void *nfence_kcs_ptr(const struct nfence_kcs *cs, u64 va)
{
	return cs->cmds + (va - cs->va);
}

static inline void nfence_kcs_put64(void *p, u64 v)
{
	__le64 le = cpu_to_le64(v);

	memcpy(p, &le, sizeof(le));
}

/* Header with @flags, the zero word, @nops operands; returns the VA. */
static inline u64 nfence_kcs_emit_raw(struct nfence_kcs *cs, u32 opcode,
				      u32 flags, u32 words, const u64 *ops,
				      u32 nops)
{
	u64 va = nfence_kcs_cursor(cs);
	u8 *p = cs->cmds + cs->used;
	__le32 word[2] = {
		cpu_to_le32(DRM_NFENCE_CS_HEADER(opcode, words) | flags << 8),
		0,
	};
	u32 i;

	KUNIT_ASSERT_LE(cs->test, cs->used + 8 + 8 * nops, cs->size);
	memcpy(p, word, sizeof(word));
	for (i = 0; i < nops; i++)
		nfence_kcs_put64(p + 8 + 8 * i, ops[i]);
	cs->used += 8 + 8 * nops;
	return va;
}

static inline u64 nfence_kcs_emit(struct nfence_kcs *cs, u32 opcode,
				  u32 words, const u64 *ops, u32 nops)
{
	return nfence_kcs_emit_raw(cs, opcode, 0, words, ops, nops);
}

static inline u64 nfence_kcs_nop(struct nfence_kcs *cs)
{
	return nfence_kcs_emit(cs, DRM_NFENCE_CS_NOP, DRM_NFENCE_CS_NOP_WORDS,
			       NULL, 0);
}

static inline u64 nfence_kcs_wait(struct nfence_kcs *cs, u64 va, u64 value)
{
	const u64 ops[] = { va, value };

	return nfence_kcs_emit(cs, DRM_NFENCE_CS_FENCE_WAIT,
			       DRM_NFENCE_CS_FENCE_WAIT_WORDS, ops, 2);
}

static inline u64 nfence_kcs_signal(struct nfence_kcs *cs, u64 cv_va,
				    u64 mv_va, u64 value)
{
	const u64 ops[] = { cv_va, mv_va, value };

	return nfence_kcs_emit(cs, DRM_NFENCE_CS_FENCE_SIGNAL,
			       DRM_NFENCE_CS_FENCE_SIGNAL_WORDS, ops, 3);
}

static inline u64 nfence_kcs_write64(struct nfence_kcs *cs, u64 va,
				     u64 value)
{
	const u64 ops[] = { va, value };

	return nfence_kcs_emit(cs, DRM_NFENCE_CS_WRITE64,
			       DRM_NFENCE_CS_WRITE64_WORDS, ops, 2);
}

static inline u64 nfence_kcs_timestamp(struct nfence_kcs *cs, u64 va)
{
	return nfence_kcs_emit(cs, DRM_NFENCE_CS_TIMESTAMP,
			       DRM_NFENCE_CS_TIMESTAMP_WORDS, &va, 1);
}

static inline u64 nfence_kcs_work(struct nfence_kcs *cs, u64 ns)
{
	return nfence_kcs_emit(cs, DRM_NFENCE_CS_WORK,
			       DRM_NFENCE_CS_WORK_WORDS, &ns, 1);
}

#endif /* __NFENCE_KUNIT_CS_H__ */
