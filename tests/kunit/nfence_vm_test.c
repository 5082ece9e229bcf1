// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for GPU virtual address spaces (nfence_vm.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "../nfence_fence.h"
#include "../nfence_vm.h"

static void vm_map_translate_unmap(struct kunit *test)
{
	struct nfence_vm_mapping a = {}, b = {};
	struct nfence_vm vm;
	u64 buf_a[4], buf_b[2];
	u64 va;

	nfence_vm_init(&vm);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &a, buf_a, sizeof(buf_a), 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &b, buf_b, sizeof(buf_b),
					       NFENCE_VM_READ_ONLY));
	va = a.start;
	KUNIT_EXPECT_GE(test, va, NFENCE_VM_START);
	KUNIT_EXPECT_EQ(test, va % PAGE_SIZE, 0);
	KUNIT_EXPECT_NE(test, a.start, b.start);

	KUNIT_EXPECT_PTR_EQ(test, nfence_vm_translate(&vm, va, 8, true),
			    (void *)&buf_a[0]);
	KUNIT_EXPECT_PTR_EQ(test, nfence_vm_translate(&vm, va + 24, 8, false),
			    (void *)&buf_a[3]);
	/* Past the memory behind the mapping, though inside its page. */
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va + 32, 8, false));
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va + 28, 8, false));
	/* Read-only mapping: reads translate, writes fault. */
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_vm_translate(&vm, b.start, 8, false),
			    (void *)&buf_b[0]);
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, b.start, 8, true));
	/* Unmapped addresses, zero length and wrap-around fault. */
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, 0, 8, false));
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va, 0, false));
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, U64_MAX - 3, 8, false));

	nfence_vm_unmap(&a);
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va, 8, false));
	nfence_vm_unmap(&a);
	nfence_vm_unmap(&b);
	nfence_vm_fini(&vm);
}

static void vm_map_rejects_bad_args(struct kunit *test)
{
	struct nfence_vm_mapping m = {};
	struct nfence_vm vm;
	u64 x;

	nfence_vm_init(&vm);
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, NULL, 8, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, &x, 0, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, &x, 8, BIT(5)));
	/* A page slot holds a page at most. */
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, &x, PAGE_SIZE + 1,
						     NFENCE_VM_SLOT));
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, &x, U64_MAX, 0));
	KUNIT_EXPECT_NULL(test, m.vm);
	nfence_vm_fini(&vm);
}

/*
 * A 32-byte mapping, then three one-page mappings, adjacent in GPU VA (a
 * fresh space fills from its bottom up) and backed by one contiguous
 * buffer, so that an access that crosses from one into the next is well
 * defined. Nothing is mapped after the third page.
 */
struct vm_pages {
	struct nfence_vm vm;
	struct nfence_vm_mapping page[3];
	struct nfence_vm_mapping small;
	u8 *mem;
	u64 small_mem[4];
	u64 va[3];
};

static struct vm_pages *vm_pages_setup(struct kunit *test)
{
	struct vm_pages *p;
	unsigned int i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->mem = kunit_kzalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->mem);
	for (i = 0; i < 3 * PAGE_SIZE; i++)
		p->mem[i] = i * 7 + i / PAGE_SIZE;

	nfence_vm_init(&p->vm);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&p->vm, &p->small, p->small_mem,
					       sizeof(p->small_mem), 0));
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, 0,
				nfence_vm_map(&p->vm, &p->page[i],
					      p->mem + i * PAGE_SIZE, PAGE_SIZE,
					      0));
		p->va[i] = p->page[i].start;
	}
	/* The tests below rely on the three pages being adjacent. */
	KUNIT_ASSERT_EQ(test, p->va[1], p->va[0] + PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, p->va[2], p->va[1] + PAGE_SIZE);
	return p;
}

static void vm_pages_teardown(struct vm_pages *p)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		nfence_vm_unmap(&p->page[i]);
	nfence_vm_unmap(&p->small);
	nfence_vm_fini(&p->vm);
}

/* nfence_vm_find_locked() under the lock, as the engines call it. */
static void *vm_find(struct nfence_vm *vm, u64 va, u64 len, bool write,
		     struct nfence_vm_mapping **mapp)
{
	void *vaddr;

	mutex_lock(&vm->lock);
	vaddr = nfence_vm_find_locked(vm, va, len, write, mapp);
	mutex_unlock(&vm->lock);
	return vaddr;
}

/* The mapping comes back with the address; read-only refuses writes. */
static void vm_find_returns_mapping(struct kunit *test)
{
	struct nfence_vm_mapping a = {}, ro = {}, *m;
	u64 buf_a[4], buf_ro[2];
	struct nfence_vm vm;

	nfence_vm_init(&vm);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &a, buf_a, sizeof(buf_a), 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &ro, buf_ro, sizeof(buf_ro),
					       NFENCE_VM_READ_ONLY));

	m = NULL;
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, a.start, 8, true, &m),
			    (void *)&buf_a[0]);
	KUNIT_EXPECT_PTR_EQ(test, m, &a);
	m = NULL;
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, a.start + 17, 3, false, &m),
			    (void *)buf_a + 17);
	KUNIT_EXPECT_PTR_EQ(test, m, &a);
	/* The whole mapping in one access; @mapp is optional. */
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, a.start, sizeof(buf_a), true,
					  NULL),
			    (void *)buf_a);

	/* Read-only: reads translate to the mapping, writes fault. */
	m = NULL;
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, ro.start + 8, 8, false, &m),
			    (void *)&buf_ro[1]);
	KUNIT_EXPECT_PTR_EQ(test, m, &ro);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, ro.start, 8, true, &m));
	KUNIT_EXPECT_NULL(test, vm_find(&vm, ro.start + 8, 8, true, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&vm, ro.start, 1, true, NULL));

	nfence_vm_unmap(&a);
	nfence_vm_unmap(&ro);
	nfence_vm_fini(&vm);
}

/* An access must lie inside one mapping's memory, and va + len not wrap. */
static void vm_find_rejects_straddle_overflow_holes(struct kunit *test)
{
	struct vm_pages *p = vm_pages_setup(test);
	u64 small = p->small.start;

	/* The last bytes of a mapping translate; one more byte does not. */
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, small + 31, 1, false, NULL),
			    (void *)p->small_mem + 31);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, small + 24, 8, false, NULL),
			    (void *)&p->small_mem[3]);
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, small + 28, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, small, 33, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, small + 32, 1, false, NULL));
	/* The rest of the mapping's page is a hole. */
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, small + PAGE_SIZE - 8, 8, false,
					NULL));

	/* Adjacent mappings: each access must fit in one of them. */
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, p->va[1] - 8, 8, false, NULL),
			    (void *)p->mem + PAGE_SIZE - 8);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, p->va[1], 8, false, NULL),
			    (void *)p->mem + PAGE_SIZE);
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[1] - 4, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[0], PAGE_SIZE + 1, false,
					NULL));

	/* Overflow of va + len, and zero length. */
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[0], U64_MAX, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[0] + 8, U64_MAX - 7, false,
					NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, U64_MAX, 1, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, U64_MAX - 7, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, U64_MAX - 3, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[0], 0, false, NULL));

	/* Outside the space, below and above it. */
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, NFENCE_VM_START - 8, 8, false,
					NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, NFENCE_VM_END - 8, 8, false,
					NULL));

	/* A hole between two mappings, entered from either side. */
	nfence_vm_unmap(&p->page[1]);
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[1], 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[1] + PAGE_SIZE - 8, 8,
					false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[1] - 4, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, p->va[2] - 4, 8, false, NULL));
	/* Its neighbours still translate. */
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, p->va[1] - 8, 8, false, NULL),
			    (void *)p->mem + PAGE_SIZE - 8);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&p->vm, p->va[2], 8, false, NULL),
			    (void *)p->mem + 2 * PAGE_SIZE);

	vm_pages_teardown(p);
}

/*
 * Nothing at or above NFENCE_VM_END translates. drm_mm's range iterator
 * walks onto the allocator's head node (which is in no mapping) for a range
 * beyond the allocator, see drm_mm_for_each_node_in_range(); whatever comes
 * back is only compared here, never used. Reads are 8 bytes, so that even
 * a bogus translation reads nothing but a drm_mm_node.
 */
static void vm_find_beyond_space(struct kunit *test)
{
	struct vm_pages *p = vm_pages_setup(test);
	u64 buf = 0;

	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, NFENCE_VM_END, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, NFENCE_VM_END, 8, true, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, NFENCE_VM_END + PAGE_SIZE, 8,
					true, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, BIT_ULL(63), 8, true, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&p->vm, U64_MAX - 15, 8, true, NULL));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, NFENCE_VM_END,
							8));
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm, NFENCE_VM_END,
						      &buf, sizeof(buf)));
	vm_pages_teardown(p);
}

/* nfence_vm_read() crosses from one mapping into the next, not holes. */
static void vm_read_across_mappings(struct kunit *test)
{
	struct vm_pages *p = vm_pages_setup(test);
	u8 *buf;

	buf = kunit_kzalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	/* Across the boundary of two adjacent mappings. */
	KUNIT_EXPECT_EQ(test, 0, nfence_vm_read(&p->vm, p->va[1] - 16, buf, 32));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, p->mem + PAGE_SIZE - 16, 32));
	/* Across all three, start to end. */
	memset(buf, 0, 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, 0, nfence_vm_read(&p->vm, p->va[0], buf,
						3 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, p->mem, 3 * PAGE_SIZE));
	/* Exactly a short mapping's memory, but not a byte past it. */
	p->small_mem[3] = 0x0123456789abcdefull;
	KUNIT_EXPECT_EQ(test, 0, nfence_vm_read(&p->vm, p->small.start,
						buf, 32));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, p->small_mem, 32));
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm,
						      p->small.start + 24,
						      buf, 9));
	/* Past the end of the last page, and from unmapped space. */
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm,
						      p->va[2] + PAGE_SIZE - 8,
						      buf, 16));
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm,
						      NFENCE_VM_START - 8,
						      buf, 16));

	/* A hole in the middle fails the read, from either side. */
	nfence_vm_unmap(&p->page[1]);
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm, p->va[1] - 16,
						      buf, 32));
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm, p->va[0], buf,
						      3 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, -EFAULT, nfence_vm_read(&p->vm, p->va[1], buf, 8));
	/* What is still mapped still reads. */
	KUNIT_EXPECT_EQ(test, 0, nfence_vm_read(&p->vm, p->va[1] - 16, buf, 16));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, p->mem + PAGE_SIZE - 16, 16));

	vm_pages_teardown(p);
}

/* nfence_vm_range_mapped(): every byte, through adjacent mappings. */
static void vm_range_mapped(struct kunit *test)
{
	struct vm_pages *p = vm_pages_setup(test);
	u64 small = p->small.start;

	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm, p->va[0],
						       3 * PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm, p->va[1] - 1, 2));
	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm,
						       p->va[2] + PAGE_SIZE - 1,
						       1));
	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm, small, 32));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, small, 33));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, small + 32, 1));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[0],
							3 * PAGE_SIZE + 1));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[0], 0));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[0],
							U64_MAX));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, U64_MAX, 1));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm,
							NFENCE_VM_START - 1,
							2));

	nfence_vm_unmap(&p->page[1]);
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[0],
							3 * PAGE_SIZE));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[1] - 1, 2));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&p->vm, p->va[2] - 1, 2));
	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm, p->va[0],
						       PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, nfence_vm_range_mapped(&p->vm, p->va[2],
						       PAGE_SIZE));

	vm_pages_teardown(p);
}

/**
 * struct vm_fence_storage - a mapping of fence values and what its
 * fence_at callback was asked
 * @map: the mapping
 * @values: the memory behind it
 * @fence: the fence the callback hands out for offset 0
 * @calls: callback invocations
 * @offset: the offset of the last one
 * @locked: whether the address space lock was held in every call
 */
struct vm_fence_storage {
	struct nfence_vm_mapping map;
	u64 values[8];
	struct nfence_fence *fence;
	unsigned int calls;
	u64 offset;
	bool locked;
};

static struct nfence_fence *vm_fence_at(struct nfence_vm_mapping *map,
					u64 offset)
{
	struct vm_fence_storage *s = container_of(map, struct vm_fence_storage,
						  map);

	s->calls++;
	s->offset = offset;
	if (!mutex_is_locked(&map->vm->lock))
		s->locked = false;
	return offset == 0 ? s->fence : NULL;
}

/*
 * The engine finds which fence a GPU VA holds through the mapping that
 * nfence_vm_find_locked() returns: its fence_at, at the offset of the VA
 * in the mapping. Mapping keeps a fence_at set before it; other mappings
 * have none.
 */
static void vm_find_fence_at(struct kunit *test)
{
	struct nfence_vm_mapping plain = {}, *m;
	struct vm_fence_storage *s;
	struct nfence_vm vm;
	u64 buf[2];
	u64 *cv;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	/* Never used as a fence: only its address is compared. */
	s->fence = kunit_kzalloc(test, sizeof(*s->fence), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->fence);
	s->locked = true;

	nfence_vm_init(&vm);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &plain, buf, sizeof(buf), 0));
	s->map.fence_at = vm_fence_at;
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s->map, s->values,
					       sizeof(s->values), 0));
	KUNIT_EXPECT_TRUE(test, s->map.fence_at == vm_fence_at);

	/* What nfence_engine_fence_signal() does, for the value at offset 0. */
	m = NULL;
	mutex_lock(&vm.lock);
	cv = nfence_vm_find_locked(&vm, s->map.start, 8, true, &m);
	KUNIT_EXPECT_PTR_EQ(test, cv, &s->values[0]);
	KUNIT_EXPECT_PTR_EQ(test, m, &s->map);
	if (m) {
		KUNIT_EXPECT_TRUE(test, m->fence_at == vm_fence_at);
		if (m->fence_at)
			KUNIT_EXPECT_PTR_EQ(test,
					    m->fence_at(m, s->map.start -
							m->start),
					    s->fence);
	}
	/* Another offset of the same mapping: the callback sees it. */
	m = NULL;
	cv = nfence_vm_find_locked(&vm, s->map.start + 40, 8, true, &m);
	KUNIT_EXPECT_PTR_EQ(test, cv, &s->values[5]);
	KUNIT_EXPECT_PTR_EQ(test, m, &s->map);
	if (m && m->fence_at)
		KUNIT_EXPECT_NULL(test, m->fence_at(m, s->map.start + 40 -
						      m->start));
	/* Ordinary memory has no fence_at. */
	m = NULL;
	KUNIT_EXPECT_PTR_EQ(test, nfence_vm_find_locked(&vm, plain.start,
							8, true, &m),
			    (void *)&buf[0]);
	KUNIT_EXPECT_PTR_EQ(test, m, &plain);
	if (m)
		KUNIT_EXPECT_TRUE(test, !m->fence_at);
	mutex_unlock(&vm.lock);

	KUNIT_EXPECT_EQ(test, s->calls, 2);
	KUNIT_EXPECT_EQ(test, s->offset, 40);
	KUNIT_EXPECT_TRUE(test, s->locked);

	nfence_vm_unmap(&plain);
	nfence_vm_unmap(&s->map);
	nfence_vm_fini(&vm);
}

/*
 * A mapping made with NFENCE_VM_SLOT takes a page slot at the top of the
 * space, lowest free first; the others a range of the rest, however small.
 * An access never crosses from the ranges into the slots.
 */
static void vm_slots_and_ranges(struct kunit *test)
{
	struct nfence_vm_mapping big = {}, small = {}, page = {}, s[3] = {};
	const size_t big_size = 3 * PAGE_SIZE + 8;
	struct nfence_vm vm;
	u64 value = 0;
	u8 *mem;

	mem = kunit_kzalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	nfence_vm_init(&vm);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &big, mem, big_size, 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &small, &value, 8, 0));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &page, mem, PAGE_SIZE,
					       NFENCE_VM_SLOT));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s[0], &value, 8,
					       NFENCE_VM_SLOT));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s[1], &value, 8,
					       NFENCE_VM_SLOT));

	/* A range below the slots, with a node of its own. */
	KUNIT_EXPECT_NOT_NULL(test, big.node);
	KUNIT_EXPECT_GE(test, big.start, NFENCE_VM_START);
	KUNIT_EXPECT_LE(test, big.start + round_up(big_size, PAGE_SIZE),
			NFENCE_VM_SLOTS_START);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, big.start + 3 * PAGE_SIZE, 8,
					  true, NULL),
			    (void *)mem + 3 * PAGE_SIZE);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, big.start + 3 * PAGE_SIZE + 4, 8,
					false, NULL));
	/* Small, but not a slot: a range too, the next one up. */
	KUNIT_EXPECT_NOT_NULL(test, small.node);
	KUNIT_EXPECT_EQ(test, small.start, big.start + 4 * PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, small.start, 8, true, NULL),
			    (void *)&value);

	/* A page and less: consecutive slots from the first. */
	KUNIT_EXPECT_NULL(test, page.node);
	KUNIT_EXPECT_EQ(test, page.start, NFENCE_VM_SLOTS_START);
	KUNIT_EXPECT_EQ(test, s[0].start, page.start + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, s[1].start, s[0].start + PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, page.start + PAGE_SIZE - 8, 8,
					  false, NULL),
			    (void *)mem + PAGE_SIZE - 8);
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, s[1].start, 8, true, NULL),
			    (void *)&value);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, s[1].start + 8, 8, false, NULL));
	KUNIT_EXPECT_NULL(test, vm_find(&vm, s[1].start + PAGE_SIZE, 8, false,
					NULL));

	/* Nothing straddles the border between ranges and slots. */
	KUNIT_EXPECT_NULL(test, vm_find(&vm, NFENCE_VM_SLOTS_START - 4, 8,
					false, NULL));
	KUNIT_EXPECT_FALSE(test, nfence_vm_range_mapped(&vm,
							NFENCE_VM_SLOTS_START - 8,
							16));

	/* A freed slot is the next one given, and faults meanwhile. */
	nfence_vm_unmap(&s[0]);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, page.start + PAGE_SIZE, 8, false,
					NULL));
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s[2], &value, 8,
					       NFENCE_VM_SLOT |
					       NFENCE_VM_READ_ONLY));
	KUNIT_EXPECT_EQ(test, s[2].start, page.start + PAGE_SIZE);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, s[2].start, 8, true, NULL));
	KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, s[2].start, 8, false, NULL),
			    (void *)&value);

	nfence_vm_unmap(&big);
	KUNIT_EXPECT_NULL(test, big.node);
	KUNIT_EXPECT_NULL(test, vm_find(&vm, big.start, 8, false, NULL));
	nfence_vm_unmap(&small);
	nfence_vm_unmap(&page);
	nfence_vm_unmap(&s[1]);
	nfence_vm_unmap(&s[2]);
	KUNIT_EXPECT_TRUE(test, xa_empty(&vm.slots));
	nfence_vm_fini(&vm);
}

/* With every page slot taken, a mapping that asks for one gets a range. */
static void vm_slots_run_out(struct kunit *test)
{
	struct nfence_vm_mapping s[3] = {};
	struct nfence_vm vm;
	u64 value = 7;
	unsigned int i;

	nfence_vm_init(&vm);
	vm.num_slots = 2;
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s[i], &value, 8,
						       NFENCE_VM_SLOT));
	KUNIT_EXPECT_NULL(test, s[0].node);
	KUNIT_EXPECT_NULL(test, s[1].node);
	KUNIT_EXPECT_NOT_NULL(test, s[2].node);
	KUNIT_EXPECT_LT(test, s[2].start, NFENCE_VM_SLOTS_START);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, vm_find(&vm, s[i].start, 8, false,
						  NULL), (void *)&value);
	/* A slot given back is taken again. */
	nfence_vm_unmap(&s[0]);
	KUNIT_ASSERT_EQ(test, 0, nfence_vm_map(&vm, &s[0], &value, 8,
					       NFENCE_VM_SLOT));
	KUNIT_EXPECT_NULL(test, s[0].node);
	KUNIT_EXPECT_EQ(test, s[0].start, NFENCE_VM_SLOTS_START);
	for (i = 0; i < 3; i++)
		nfence_vm_unmap(&s[i]);
	nfence_vm_fini(&vm);
}

static struct kunit_case nfence_vm_cases[] = {
	KUNIT_CASE(vm_map_translate_unmap),
	KUNIT_CASE(vm_map_rejects_bad_args),
	KUNIT_CASE(vm_find_returns_mapping),
	KUNIT_CASE(vm_find_rejects_straddle_overflow_holes),
	KUNIT_CASE(vm_find_beyond_space),
	KUNIT_CASE(vm_read_across_mappings),
	KUNIT_CASE(vm_range_mapped),
	KUNIT_CASE(vm_find_fence_at),
	KUNIT_CASE(vm_slots_and_ranges),
	KUNIT_CASE(vm_slots_run_out),
	{}
};

static struct kunit_suite nfence_vm_suite = {
	.name = "nfence_vm",
	.test_cases = nfence_vm_cases,
};

kunit_test_suite(nfence_vm_suite);
