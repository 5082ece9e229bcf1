// SPDX-License-Identifier: GPL-2.0-only
/*
 * The harness self-test's KUnit half (CONFIG_DRM_NFENCE_HARNESS_SELFTEST):
 * a case that passes while the kernel under it WARNs. kunit.sh reads the
 * kernel log and must fail the run. See nfence_harness.c.
 *
 * Copyright (C) 2026 The nfence authors
 */

#include <kunit/test.h>
#include <linux/bug.h>

static void nfence_harness_warn(struct kunit *test)
{
	WARN(1, "nfence: deliberate WARN: kunit.sh must fail this run\n");
	KUNIT_SUCCEED(test);
}

static struct kunit_case nfence_harness_cases[] = {
	KUNIT_CASE(nfence_harness_warn),
	{}
};

static struct kunit_suite nfence_harness_suite = {
	.name = "nfence_harness",
	.test_cases = nfence_harness_cases,
};

kunit_test_suite(nfence_harness_suite);
