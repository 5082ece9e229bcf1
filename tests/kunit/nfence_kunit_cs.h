/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command emission for the KUnit suites that give the CMP commands to run
 * (nfence_cmp_test.c, nfence_cmp_ops_test.c): commands encoded in little
 * endian as the ISA in nfence_drm.h ("DOC: command stream") defines them,
 * appended to a buffer the suite has mapped into a GPU address space; and
 * that address space, as both suites' fixtures set it up (&struct
 * nfence_kspace).
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

#include "../nfence_vm.h"

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

/**
 * struct nfence_kspace - a fixture's GPU address space and its pages
 * @vm: the address space
 * @cmd_map: @cs's buffer, all but its last page
 * @cmd_tail_map: the buffer's last page, mapped right after @cmd_map, so
 *	that a command may straddle two mappings
 * @data_map: @data
 * @ro_map: @ro, read-only to the GPU
 * @fence_map: @fvals, a mapping whose &nfence_vm_mapping.fence_at names
 *	the fences whose values it holds
 * @cs: the command buffer
 * @data: a page of data
 * @data_va: its GPU VA
 * @ro: a page the GPU may only read
 * @ro_va: its GPU VA
 * @fvals: a page of fence values
 * @fence_va: its GPU VA
 * @ready: @vm is set up (nfence_kspace_fini() tears it down)
 */
struct nfence_kspace {
	struct nfence_vm vm;
	struct nfence_vm_mapping cmd_map;
	struct nfence_vm_mapping cmd_tail_map;
	struct nfence_vm_mapping data_map;
	struct nfence_vm_mapping ro_map;
	struct nfence_vm_mapping fence_map;
	struct nfence_kcs cs;
	u64 *data;
	u64 data_va;
	u64 *ro;
	u64 ro_va;
	u64 *fvals;
	u64 fence_va;
	bool ready;
};

/* Map @size bytes at @vaddr into @sp's address space; returns the GPU VA. */
static inline u64 nfence_kspace_map(struct kunit *test,
				    struct nfence_kspace *sp,
				    struct nfence_vm_mapping *map, void *vaddr,
				    u64 size, u32 flags)
{
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&sp->vm, map, vaddr, size,
					       flags));
	return map->start;
}

/*
 * Set up @sp: a command buffer of @cmd_bytes and a tail page, a data page,
 * a read-only page and a page of fence values found by @fence_at, each
 * mapped. A failure fails @test; nfence_kspace_fini() undoes what was done.
 */
static inline void nfence_kspace_init(struct kunit *test,
				      struct nfence_kspace *sp,
				      size_t cmd_bytes,
				      nfence_vm_fence_at_t fence_at)
{
	sp->cs.test = test;
	sp->cs.size = cmd_bytes + PAGE_SIZE;
	sp->cs.cmds = kunit_kzalloc(test, sp->cs.size, GFP_KERNEL);
	sp->data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	sp->ro = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	sp->fvals = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sp->cs.cmds);
	KUNIT_ASSERT_NOT_NULL(test, sp->data);
	KUNIT_ASSERT_NOT_NULL(test, sp->ro);
	KUNIT_ASSERT_NOT_NULL(test, sp->fvals);

	nfence_vm_init(&sp->vm);
	sp->ready = true;
	sp->cs.va = nfence_kspace_map(test, sp, &sp->cmd_map, sp->cs.cmds,
				      cmd_bytes, 0);
	KUNIT_ASSERT_EQ(test,
			nfence_kspace_map(test, sp, &sp->cmd_tail_map,
					  sp->cs.cmds + cmd_bytes, PAGE_SIZE,
					  0),
			sp->cs.va + cmd_bytes);
	sp->data_va = nfence_kspace_map(test, sp, &sp->data_map, sp->data,
					PAGE_SIZE, 0);
	sp->ro_va = nfence_kspace_map(test, sp, &sp->ro_map, sp->ro,
				      PAGE_SIZE, NFENCE_VM_READ_ONLY);
	sp->fence_map.fence_at = fence_at;
	sp->fence_va = nfence_kspace_map(test, sp, &sp->fence_map, sp->fvals,
					 PAGE_SIZE, 0);
}

/* Unmap @sp's pages and tear its address space down, once other maps are. */
static inline void nfence_kspace_fini(struct nfence_kspace *sp)
{
	if (!sp->ready)
		return;
	nfence_vm_unmap(&sp->cmd_map);
	nfence_vm_unmap(&sp->cmd_tail_map);
	nfence_vm_unmap(&sp->data_map);
	nfence_vm_unmap(&sp->ro_map);
	nfence_vm_unmap(&sp->fence_map);
	nfence_vm_fini(&sp->vm);
	sp->ready = false;
}

#endif /* __NFENCE_KUNIT_CS_H__ */
