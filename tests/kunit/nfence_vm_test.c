// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for GPU virtual address spaces (nfence_vm.c).
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>

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
	va = a.node.start;
	KUNIT_EXPECT_GE(test, va, NFENCE_VM_START);
	KUNIT_EXPECT_EQ(test, va % PAGE_SIZE, 0);
	KUNIT_EXPECT_NE(test, a.node.start, b.node.start);

	KUNIT_EXPECT_PTR_EQ(test, nfence_vm_translate(&vm, va, 8, true),
			    (void *)&buf_a[0]);
	KUNIT_EXPECT_PTR_EQ(test, nfence_vm_translate(&vm, va + 24, 8, false),
			    (void *)&buf_a[3]);
	/* Past the memory behind the mapping, though inside its page. */
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va + 32, 8, false));
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, va + 28, 8, false));
	/* Read-only mapping: reads translate, writes fault. */
	KUNIT_EXPECT_PTR_EQ(test,
			    nfence_vm_translate(&vm, b.node.start, 8, false),
			    (void *)&buf_b[0]);
	KUNIT_EXPECT_NULL(test, nfence_vm_translate(&vm, b.node.start, 8, true));
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
	KUNIT_EXPECT_EQ(test, -EINVAL, nfence_vm_map(&vm, &m, &x, U64_MAX, 0));
	KUNIT_EXPECT_NULL(test, m.vm);
	nfence_vm_fini(&vm);
}

static struct kunit_case nfence_vm_cases[] = {
	KUNIT_CASE(vm_map_translate_unmap),
	KUNIT_CASE(vm_map_rejects_bad_args),
	{}
};

static struct kunit_suite nfence_vm_suite = {
	.name = "nfence_vm",
	.test_cases = nfence_vm_cases,
};

kunit_test_suite(nfence_vm_suite);
