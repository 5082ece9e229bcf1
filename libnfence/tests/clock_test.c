/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * D3DKMTQueryClockCalibration against the fake driver (mock_drm.c): the
 * layout of D3DKMT_QUERYCLOCKCALIBRATION, DXGK_GPUCLOCKDATA and its flags
 * (x86-64, against ../shared/spec/WINDOWS-ABI.md and, for the flag bit,
 * the WDK), the answer on two fake adapters with different engine counts,
 * and every invalid input, each with otherwise valid input, failing with
 * its status and nothing written. The fake's GPU clock is CLOCK_MONOTONIC
 * / 10 (100 MHz from boot); the VM kselftest checks the real one against
 * the TIMESTAMP command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"
#include "kselftest_harness.h"

#define POISON		0xa5
#define GPU_HZ		100000000ull

static UINT64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

static NTSTATUS calibrate(D3DKMT_HANDLE h, UINT node, UINT phys,
			  D3DKMT_QUERYCLOCKCALIBRATION *c)
{
	memset(c, POISON, sizeof(*c));
	c->hAdapter = h;
	c->NodeOrdinal = node;
	c->PhysicalAdapterIndex = phys;
	return D3DKMTQueryClockCalibration(c);
}

/* ---- the Windows ABI -------------------------------------------------- */

/*
 * The widths of the fields (their offsets and the byte-packed sizes, 28
 * and 40, are in windows_layouts.h).
 */
TEST(field_widths)
{
	EXPECT_EQ(4u, sizeof(DXGK_GPUCLOCKDATA_FLAGS));
	EXPECT_EQ(8u, sizeof(((DXGK_GPUCLOCKDATA *)0)->GpuFrequency));
	EXPECT_EQ(8u, sizeof(((DXGK_GPUCLOCKDATA *)0)->GpuClockCounter));
	EXPECT_EQ(8u, sizeof(((DXGK_GPUCLOCKDATA *)0)->CpuClockCounter));
	EXPECT_EQ(4u, sizeof(((D3DKMT_QUERYCLOCKCALIBRATION *)0)->NodeOrdinal));
	EXPECT_EQ(4u, sizeof(((D3DKMT_QUERYCLOCKCALIBRATION *)0)->
			     PhysicalAdapterIndex));
}

/* The WDK's bit order: ContextManagementProcessor is bit 0. */
TEST(flag_bits)
{
	DXGK_GPUCLOCKDATA_FLAGS f;

	memset(&f, 0, sizeof(f));
	f.ContextManagementProcessor = 1;
	EXPECT_EQ(1u, f.Value);
	memset(&f, 0, sizeof(f));
	f.Reserved = 0x7fffffff;
	EXPECT_EQ(0xfffffffeu, f.Value);
}

/* ---- two fake adapters ------------------------------------------------ */

/* Adapter 0 with 3 engines, adapter 1 with 5. */
FIXTURE(clock) {
	char dir[64];
	D3DKMT_ADAPTERINFO a[2];
	UINT engines[2];
};

FIXTURE_SETUP(clock)
{
	struct mock_adapter a0 = mock_default_adapter(0);
	struct mock_adapter a1 = mock_default_adapter(1);
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 2, .pAdapters = self->a };

	a1.num_engines = 5;
	self->engines[0] = 3;
	self->engines[1] = 5;
	strcpy(self->dir, "/tmp/nfence-clock-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD128", &a0));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD129", &a1));
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(2u, e.NumAdapters);
}

FIXTURE_TEARDOWN(clock)
{
	D3DKMT_CLOSEADAPTER c;
	char cmd[128];
	int i;

	for (i = 0; i < 2; i++) {
		c.hAdapter = self->a[i].hAdapter;
		D3DKMTCloseAdapter(&c);
	}
	EXPECT_EQ(0u, mock_open_files());
	mock_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/*
 * Every node of both adapters: the frequency the adapter query reports,
 * CLOCK_MONOTONIC read within the call, the fake's GPU clock at that
 * instant, no flag, the input fields as they were.
 */
TEST_F(clock, answers_every_node)
{
	D3DKMT_QUERYCLOCKCALIBRATION c;
	D3DKMT_NFENCE_ADAPTER info;
	D3DKMT_QUERYADAPTERINFO q = {
		.Type = KMTQAITYPE_NFENCE_ADAPTER,
		.pPrivateDriverData = &info,
		.PrivateDriverDataSize = sizeof(info),
	};
	UINT64 before, after;
	UINT a, n;

	for (a = 0; a < 2; a++) {
		q.hAdapter = self->a[a].hAdapter;
		ASSERT_EQ(STATUS_SUCCESS, D3DKMTQueryAdapterInfo(&q));
		ASSERT_EQ(self->engines[a], info.NumEngines);
		ASSERT_EQ(GPU_HZ, info.TimestampFrequency);
		for (n = 0; n < self->engines[a]; n++) {
			before = now_ns();
			ASSERT_EQ(STATUS_SUCCESS,
				  calibrate(self->a[a].hAdapter, n, 0, &c))
				TH_LOG("adapter %u node %u", a, n);
			after = now_ns();
			EXPECT_EQ(self->a[a].hAdapter, c.hAdapter);
			EXPECT_EQ(n, c.NodeOrdinal);
			EXPECT_EQ(0u, c.PhysicalAdapterIndex);
			EXPECT_EQ(info.TimestampFrequency,
				  c.ClockData.GpuFrequency);
			EXPECT_LE(before, c.ClockData.CpuClockCounter);
			EXPECT_GE(after, c.ClockData.CpuClockCounter);
			EXPECT_EQ(c.ClockData.CpuClockCounter / 10,
				  c.ClockData.GpuClockCounter);
			EXPECT_EQ(0u, c.ClockData.Flags.Value);
		}
	}
}

/* Two calibrations in a row: neither counter goes back. */
TEST_F(clock, monotonic)
{
	D3DKMT_QUERYCLOCKCALIBRATION c1, c2;

	ASSERT_EQ(STATUS_SUCCESS, calibrate(self->a[1].hAdapter, 4, 0, &c1));
	ASSERT_EQ(STATUS_SUCCESS, calibrate(self->a[1].hAdapter, 4, 0, &c2));
	EXPECT_LE(c1.ClockData.CpuClockCounter, c2.ClockData.CpuClockCounter);
	EXPECT_LE(c1.ClockData.GpuClockCounter, c2.ClockData.GpuClockCounter);
}

/*
 * @st for a call with @h, @node and @phys, nothing written, and no
 * question asked of the kernel.
 */
static void expect_refused(struct __test_metadata *_metadata, NTSTATUS st,
			   D3DKMT_HANDLE h, UINT node, UINT phys)
{
	D3DKMT_QUERYCLOCKCALIBRATION c, ref;
	unsigned int calls = mock_ioctl_calls(DRM_NFENCE_QUERY);

	memset(&ref, POISON, sizeof(ref));
	ref.hAdapter = h;
	ref.NodeOrdinal = node;
	ref.PhysicalAdapterIndex = phys;
	EXPECT_EQ(st, calibrate(h, node, phys, &c))
		TH_LOG("handle 0x%x node 0x%x physical adapter 0x%x",
		       h, node, phys);
	EXPECT_EQ(0, memcmp(&ref, &c, sizeof(c)));
	EXPECT_EQ(calls, mock_ioctl_calls(DRM_NFENCE_QUERY));
}

TEST_F(clock, bad_physical_adapter_index)
{
	static const UINT bad[] = { 1, 2, 0x10000, 0x80000000u, 0xffffffffu };
	unsigned int i, a;

	for (a = 0; a < 2; a++)
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			expect_refused(_metadata, STATUS_INVALID_PARAMETER,
				       self->a[a].hAdapter, 0, bad[i]);
}

/* Each adapter's own engine count bounds NodeOrdinal. */
TEST_F(clock, bad_node)
{
	static const UINT bad0[] = { 3, 4, 5, 0xffff, 0x10000, 0xffffffffu };
	static const UINT bad1[] = { 5, 6, 0x10004, 0x80000000u, 0xffffffffu };
	D3DKMT_QUERYCLOCKCALIBRATION c;
	unsigned int i;

	for (i = 0; i < sizeof(bad0) / sizeof(bad0[0]); i++)
		expect_refused(_metadata, STATUS_INVALID_PARAMETER,
			       self->a[0].hAdapter, bad0[i], 0);
	for (i = 0; i < sizeof(bad1) / sizeof(bad1[0]); i++)
		expect_refused(_metadata, STATUS_INVALID_PARAMETER,
			       self->a[1].hAdapter, bad1[i], 0);
	/* Node 4 is adapter 1's last, not adapter 0's. */
	EXPECT_EQ(STATUS_SUCCESS, calibrate(self->a[1].hAdapter, 4, 0, &c));
}

TEST_F(clock, bad_handle)
{
	static const D3DKMT_HANDLE bad[] = { 0, 1, 0x7fffffff, 0xffffffffu };
	D3DKMT_CREATEDEVICE d = { .hAdapter = self->a[0].hAdapter };
	D3DKMT_DESTROYDEVICE dd;
	D3DKMT_CLOSEADAPTER c;
	D3DKMT_OPENADAPTERFROMLUID o;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i] == self->a[0].hAdapter ||
		    bad[i] == self->a[1].hAdapter)
			continue;
		expect_refused(_metadata, STATUS_INVALID_PARAMETER, bad[i], 0, 0);
	}

	/* A handle of another kind: a device of the adapter. */
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateDevice(&d));
	expect_refused(_metadata, STATUS_INVALID_PARAMETER, d.hDevice, 0, 0);
	dd.hDevice = d.hDevice;
	EXPECT_EQ(STATUS_SUCCESS, D3DKMTDestroyDevice(&dd));

	/* A closed adapter handle (while another keeps the adapter open). */
	memset(&o, 0, sizeof(o));
	o.AdapterLuid = self->a[0].AdapterLuid;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&o));
	c.hAdapter = o.hAdapter;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCloseAdapter(&c));
	expect_refused(_metadata, STATUS_INVALID_PARAMETER, o.hAdapter, 0, 0);
}

/*
 * PhysicalAdapterIndex is checked before the handle, NodeOrdinal (which
 * needs the adapter) after it.
 */
TEST_F(clock, order_of_checks)
{
	expect_refused(_metadata, STATUS_INVALID_PARAMETER, 0x7fffffff, 0, 1);
	expect_refused(_metadata, STATUS_INVALID_PARAMETER, 0x7fffffff, 99, 0);
	expect_refused(_metadata, STATUS_INVALID_PARAMETER,
		       self->a[0].hAdapter, 99, 1);
}

/* A kernel error: its status, and nothing written. */
TEST_F(clock, kernel_error_writes_nothing)
{
	static const int errs[] = { EIO, ENODEV, ENOMEM };
	D3DKMT_QUERYCLOCKCALIBRATION c, ref;
	unsigned int i;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		memset(&ref, POISON, sizeof(ref));
		ref.hAdapter = self->a[0].hAdapter;
		ref.NodeOrdinal = 2;
		ref.PhysicalAdapterIndex = 0;
		mock_fail_next(errs[i]);
		EXPECT_EQ(NFenceStatusFromErrno(errs[i]),
			  calibrate(self->a[0].hAdapter, 2, 0, &c));
		EXPECT_EQ(0, memcmp(&ref, &c, sizeof(c)));
	}
	/* And the next call answers. */
	EXPECT_EQ(STATUS_SUCCESS, calibrate(self->a[0].hAdapter, 2, 0, &c));
}

TEST_HARNESS_MAIN
