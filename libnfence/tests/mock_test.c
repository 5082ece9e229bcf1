/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The public API against a fake nfence driver (mock_drm.c) that follows
 * the kernel contract: enumeration, LUIDs, every query, devices, handle
 * lifetimes and error mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"
#include "test_helpers.h"
#include "kselftest_harness.h"

static NTSTATUS query(D3DKMT_HANDLE h, KMTQUERYADAPTERINFOTYPE type,
		      void *data, UINT size)
{
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = h,
		.Type = type,
		.pPrivateDriverData = data,
		.PrivateDriverDataSize = size,
	};

	return D3DKMTQueryAdapterInfo(&q);
}

static NTSTATUS close_adapter(D3DKMT_HANDLE h)
{
	D3DKMT_CLOSEADAPTER c = { .hAdapter = h };

	return D3DKMTCloseAdapter(&c);
}

static NTSTATUS open_luid(DWORD low, LONG high, D3DKMT_HANDLE *h)
{
	D3DKMT_OPENADAPTERFROMLUID o = {
		.AdapterLuid = { .LowPart = low, .HighPart = high },
	};
	NTSTATUS st = D3DKMTOpenAdapterFromLuid(&o);

	*h = o.hAdapter;
	return st;
}

/*
 * Two nfence adapters, registered out of index order, plus nodes that must
 * be skipped: another driver, a card node, and a second link to adapter 0.
 * Adapter 1 has native fences and user-mode submission turned off.
 */
#define LUID0_LOW	0x1000u
#define LUID0_HIGH	7
#define LUID1_LOW	0x1001u
#define LUID1_HIGH	(-2)

FIXTURE(mock) {
	char dir[64];
};

FIXTURE_SETUP(mock)
{
	struct mock_adapter a0 = mock_default_adapter(0);
	struct mock_adapter a1 = mock_default_adapter(1);
	struct mock_adapter other = mock_default_adapter(5);
	struct mock_adapter card = mock_default_adapter(6);
	char path[128];

	a0.luid_low = LUID0_LOW;
	a0.luid_high = LUID0_HIGH;
	a0.peer_signals = true;
	a1.luid_low = LUID1_LOW;
	a1.luid_high = (uint32_t)LUID1_HIGH;
	a1.native_fences = false;
	a1.user_mode_submission = false;
	a1.no_64bit_atomics = true;
	a1.num_engines = 5;
	a1.vram_visible_mb = 0;
	other.driver_name = "i915";
	card.luid_low = 0x2000;

	strcpy(self->dir, "/tmp/nfence-mock-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD128", &a1));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD129", &a0));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD130", &other));
	ASSERT_EQ(0, mock_add_node(self->dir, "card0", &card));
	snprintf(path, sizeof(path), "%s/renderD131", self->dir);
	ASSERT_EQ(0, symlink("renderD129", path));
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));
}

FIXTURE_TEARDOWN(mock)
{
	char cmd[128];

	mock_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* Enumerate into @infos (room for 4); returns the count. */
static ULONG enum_all(struct __test_metadata *_metadata,
		      D3DKMT_ADAPTERINFO *infos)
{
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 4, .pAdapters = infos };

	EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	return e.NumAdapters;
}

TEST_F(mock, enum_count_only)
{
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 0, .pAdapters = NULL };

	EXPECT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(2u, e.NumAdapters);
	EXPECT_EQ(0u, mock_open_files());
}

TEST_F(mock, enum_buffer_too_small)
{
	D3DKMT_ADAPTERINFO infos[1];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 1, .pAdapters = infos };

	memset(infos, 0x5a, sizeof(infos));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(2u, e.NumAdapters);
	EXPECT_EQ(0x5a5a5a5au, infos[0].hAdapter);
	EXPECT_EQ(0u, mock_open_files());

	e.NumAdapters = 0;
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, D3DKMTEnumAdapters2(&e));
	EXPECT_EQ(2u, e.NumAdapters);
}

TEST_F(mock, enum_sorted_by_index_and_open)
{
	D3DKMT_ADAPTERINFO infos[4];
	ULONG n;

	memset(infos, 0, sizeof(infos));
	n = enum_all(_metadata, infos);
	ASSERT_EQ(2u, n);
	EXPECT_EQ(LUID0_LOW, infos[0].AdapterLuid.LowPart);
	EXPECT_EQ(LUID0_HIGH, infos[0].AdapterLuid.HighPart);
	EXPECT_EQ(LUID1_LOW, infos[1].AdapterLuid.LowPart);
	EXPECT_EQ(LUID1_HIGH, infos[1].AdapterLuid.HighPart);
	EXPECT_NE(0u, infos[0].hAdapter);
	EXPECT_NE(0u, infos[1].hAdapter);
	EXPECT_NE(infos[0].hAdapter, infos[1].hAdapter);
	/* Windows' local handle format; made one after the other: 0x40 apart. */
	EXPECT_EQ(0xc0000000u, infos[0].hAdapter & 0xc000003fu);
	EXPECT_EQ(infos[0].hAdapter + 0x40, infos[1].hAdapter);
	EXPECT_EQ(0u, infos[0].NumOfSources);
	EXPECT_EQ(FALSE, infos[0].bPrecisePresentRegionsPreferred);
	EXPECT_EQ(2u, mock_open_files());

	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(1u, mock_open_files());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
	EXPECT_EQ(0u, mock_open_files());
	/* Closed handles are invalid. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(infos[1].hAdapter));
}

TEST_F(mock, one_file_per_adapter)
{
	D3DKMT_ADAPTERINFO a[4], b[4];
	D3DKMT_HANDLE h;
	int fd;

	ASSERT_EQ(2u, enum_all(_metadata, a));
	ASSERT_EQ(2u, enum_all(_metadata, b));
	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));
	EXPECT_EQ(2u, mock_open_files());

	/* New handles each time, one file per adapter. */
	EXPECT_NE(a[0].hAdapter, b[0].hAdapter);
	EXPECT_NE(h, a[0].hAdapter);
	fd = NFenceGetAdapterFd(a[0].hAdapter);
	EXPECT_LE(0, fd);
	EXPECT_EQ(fd, NFenceGetAdapterFd(b[0].hAdapter));
	EXPECT_EQ(fd, NFenceGetAdapterFd(h));
	EXPECT_NE(fd, NFenceGetAdapterFd(a[1].hAdapter));

	/* The file closes with the last handle. */
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(a[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(b[0].hAdapter));
	EXPECT_EQ(2u, mock_open_files());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
	EXPECT_EQ(1u, mock_open_files());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(a[1].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(b[1].hAdapter));
	EXPECT_EQ(0u, mock_open_files());
}

TEST_F(mock, open_from_luid)
{
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_NFENCE_ADAPTER ad;
	D3DKMT_HANDLE h, h2;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID1_LOW, LUID1_HIGH, &h));
	EXPECT_NE(0u, h);
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_ADAPTER, &ad,
					sizeof(ad)));
	EXPECT_EQ(1u, ad.AdapterIndex);
	EXPECT_EQ(1u, mock_open_files());

	/* Opening again, now from the open adapter, gives a new handle. */
	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID1_LOW, LUID1_HIGH, &h2));
	EXPECT_NE(h, h2);
	EXPECT_EQ(1u, mock_open_files());

	/* The LUID must match in both halves; skipped nodes are not found. */
	h2 = 0;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_luid(LUID1_LOW, 0, &h2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_luid(LUID0_LOW, 0, &h2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_luid(0x2000, 0, &h2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_luid(0x1005, 0, &h2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, open_luid(0, 0, &h2));
	EXPECT_EQ(0u, h2);
	EXPECT_EQ(1u, mock_open_files());

	ASSERT_EQ(2u, enum_all(_metadata, infos));
	EXPECT_EQ(2u, mock_open_files());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
}

TEST_F(mock, query_adapter_and_caps)
{
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_WDDM_3_1_CAPS caps;
	D3DKMT_NFENCE_ADAPTER ad;
	D3DKMT_NFENCE_NATIVE_FENCE_CAPS fc;
	D3DKMT_NFENCE_USERMODESUBMISSION_CAPS uc;
	D3DKMT_HANDLE h0, h1;

	ASSERT_EQ(2u, enum_all(_metadata, infos));
	h0 = infos[0].hAdapter;
	h1 = infos[1].hAdapter;

	memset(&caps, 0xff, sizeof(caps));
	ASSERT_EQ(STATUS_SUCCESS, query(h0, KMTQAITYPE_WDDM_3_1_CAPS, &caps,
					sizeof(caps)));
	EXPECT_EQ(1u, caps.Value);
	EXPECT_EQ(1u, (UINT)caps.NativeGpuFenceSupported);
	memset(&caps, 0xff, sizeof(caps));
	ASSERT_EQ(STATUS_SUCCESS, query(h1, KMTQAITYPE_WDDM_3_1_CAPS, &caps,
					sizeof(caps)));
	EXPECT_EQ(0u, caps.Value);

	memset(&ad, 0xff, sizeof(ad));
	ASSERT_EQ(STATUS_SUCCESS, query(h0, KMTQAITYPE_NFENCE_ADAPTER, &ad,
					sizeof(ad)));
	EXPECT_EQ(LUID0_LOW, ad.AdapterLuid.LowPart);
	EXPECT_EQ(LUID0_HIGH, ad.AdapterLuid.HighPart);
	EXPECT_EQ(0u, ad.AdapterIndex);
	EXPECT_EQ(3u, ad.Flags.Value);
	EXPECT_EQ(1u, (UINT)ad.Flags.NativeGpuFence);
	EXPECT_EQ(1u, (UINT)ad.Flags.UserModeSubmission);
	EXPECT_EQ(0u, (UINT)ad.Flags.No64BitAtomics);
	EXPECT_EQ(3u, ad.NumEngines);
	EXPECT_EQ(2u, ad.NumSegments);
	EXPECT_EQ(100000000u, ad.TimestampFrequency);
	ASSERT_EQ(STATUS_SUCCESS, query(h1, KMTQAITYPE_NFENCE_ADAPTER, &ad,
					sizeof(ad)));
	EXPECT_EQ(LUID1_HIGH, ad.AdapterLuid.HighPart);
	EXPECT_EQ(4u, ad.Flags.Value);
	EXPECT_EQ(1u, (UINT)ad.Flags.No64BitAtomics);
	EXPECT_EQ(5u, ad.NumEngines);

	memset(&fc, 0xff, sizeof(fc));
	ASSERT_EQ(STATUS_SUCCESS, query(h0, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS,
					&fc, sizeof(fc)));
	EXPECT_EQ(0x1fu, fc.Flags.Value);
	EXPECT_EQ(1u, (UINT)fc.Flags.SupportOptimizedDefaultFenceType);
	EXPECT_EQ(1u, (UINT)fc.Flags.SupportIntraGpuFenceType);
	EXPECT_EQ(1u, (UINT)fc.Flags.SupportCrossAdapterFence);
	EXPECT_EQ(1u, (UINT)fc.Flags.SupportLogBuffers);
	EXPECT_EQ(1u, (UINT)fc.Flags.SupportPeerSignals);
	EXPECT_EQ(64u, fc.ValueStride);
	EXPECT_EQ(64u, fc.ValueBits);
	EXPECT_EQ(84u, fc.MaxLogEntries);
	EXPECT_EQ(40u, fc.LogBufferHeaderSize);
	EXPECT_EQ(48u, fc.LogBufferEntrySize);
	memset(&fc, 0xff, sizeof(fc));
	ASSERT_EQ(STATUS_SUCCESS, query(h1, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS,
					&fc, sizeof(fc)));
	EXPECT_EQ(0u, fc.Flags.Value);
	EXPECT_EQ(0u, fc.ValueStride);
	EXPECT_EQ(0u, fc.ValueBits);
	EXPECT_EQ(0u, fc.LogBufferEntrySize);

	memset(&uc, 0xff, sizeof(uc));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(h0, KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS, &uc,
			sizeof(uc)));
	EXPECT_EQ(4096u, uc.DoorbellSize);
	EXPECT_EQ(D3DKMT_NFENCE_DOORBELL_MODEL_DEDICATED, uc.DoorbellModel);
	EXPECT_EQ(16u, uc.NumPhysicalDoorbells);
	EXPECT_EQ(0u, uc.Reserved);
	memset(&uc, 0xff, sizeof(uc));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(h1, KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS, &uc,
			sizeof(uc)));
	EXPECT_EQ(0u, uc.DoorbellSize);
	EXPECT_EQ(D3DKMT_NFENCE_DOORBELL_MODEL_NONE, uc.DoorbellModel);
	EXPECT_EQ(0u, uc.NumPhysicalDoorbells);

	/* Wrong sizes fail without touching the buffer. */
	memset(&fc, 0x11, sizeof(fc));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h0, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS, &fc,
			sizeof(fc) - 4));
	EXPECT_EQ(0x11111111u, fc.ValueStride);

	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h0));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h1));
}

TEST_F(mock, query_segments_two_calls)
{
	D3DKMT_ADAPTERINFO infos[4];
	union {
		D3DKMT_NFENCE_SEGMENTS s;
		char raw[D3DKMT_NFENCE_SEGMENTS_SIZE(3)];
	} buf;
	D3DKMT_NFENCE_SEGMENTS *s = &buf.s;
	D3DKMT_HANDLE h;

	ASSERT_EQ(2u, enum_all(_metadata, infos));
	h = infos[0].hAdapter;

	memset(&buf, 0xff, sizeof(buf));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, s,
			D3DKMT_NFENCE_SEGMENTS_SIZE(0)));
	EXPECT_EQ(2u, s->NumSegments);
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, s,
			D3DKMT_NFENCE_SEGMENTS_SIZE(2) - 1));
	EXPECT_EQ(2u, s->NumSegments);

	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_SEGMENTS, s,
					D3DKMT_NFENCE_SEGMENTS_SIZE(2)));
	ASSERT_EQ(2u, s->NumSegments);
	EXPECT_EQ(0u, s->Reserved);
	EXPECT_EQ(1u, s->Segments[0].SegmentId);
	EXPECT_EQ(0u, (UINT)s->Segments[0].Flags.Local);
	EXPECT_EQ(1u, (UINT)s->Segments[0].Flags.System);
	EXPECT_EQ(1u, (UINT)s->Segments[0].Flags.CpuVisible);
	EXPECT_EQ(256ull << 20, s->Segments[0].Size);
	EXPECT_EQ(256ull << 20, s->Segments[0].CpuVisibleSize);
	EXPECT_EQ(2u, s->Segments[1].SegmentId);
	EXPECT_EQ(1u, (UINT)s->Segments[1].Flags.Local);
	EXPECT_EQ(0u, (UINT)s->Segments[1].Flags.System);
	EXPECT_EQ(1u, (UINT)s->Segments[1].Flags.CpuVisible);
	EXPECT_EQ(64ull << 20, s->Segments[1].Size);
	EXPECT_EQ(16ull << 20, s->Segments[1].CpuVisibleSize);

	/* A larger buffer is fine. */
	memset(&buf, 0xff, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_SEGMENTS, s,
					sizeof(buf)));
	EXPECT_EQ(2u, s->NumSegments);

	/* Adapter 1 has no CPU-visible VRAM. */
	ASSERT_EQ(STATUS_SUCCESS, query(infos[1].hAdapter,
					KMTQAITYPE_NFENCE_SEGMENTS, s,
					sizeof(buf)));
	EXPECT_EQ(0u, (UINT)s->Segments[1].Flags.CpuVisible);
	EXPECT_EQ(0u, s->Segments[1].CpuVisibleSize);

	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
}

TEST_F(mock, query_engines_two_calls)
{
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_NFENCE_ENGINES head, *e;
	D3DKMT_HANDLE h;
	UINT i;

	ASSERT_EQ(2u, enum_all(_metadata, infos));
	h = infos[1].hAdapter;

	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_ENGINES, &head,
			D3DKMT_NFENCE_ENGINES_SIZE(0)));
	ASSERT_EQ(5u, head.NumEngines);
	e = malloc(D3DKMT_NFENCE_ENGINES_SIZE(head.NumEngines));
	ASSERT_NE(NULL, e);
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL,
		  query(h, KMTQAITYPE_NFENCE_ENGINES, e,
			D3DKMT_NFENCE_ENGINES_SIZE(4)));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(h, KMTQAITYPE_NFENCE_ENGINES, e,
			D3DKMT_NFENCE_ENGINES_SIZE(head.NumEngines)));
	ASSERT_EQ(5u, e->NumEngines);
	for (i = 0; i < e->NumEngines; i++) {
		EXPECT_EQ(i, e->Engines[i].NodeOrdinal);
		EXPECT_EQ((D3DKMT_NFENCE_ENGINE_TYPE)(i % 3),
			  e->Engines[i].EngineType);
		EXPECT_EQ(0u, (UINT)e->Engines[i].Flags.UserModeSubmissionSupported);
	}
	free(e);

	e = malloc(D3DKMT_NFENCE_ENGINES_SIZE(3));
	ASSERT_NE(NULL, e);
	ASSERT_EQ(STATUS_SUCCESS,
		  query(infos[0].hAdapter, KMTQAITYPE_NFENCE_ENGINES, e,
			D3DKMT_NFENCE_ENGINES_SIZE(3)));
	EXPECT_EQ(D3DKMT_NFENCE_ENGINE_TYPE_3D, e->Engines[0].EngineType);
	EXPECT_EQ(D3DKMT_NFENCE_ENGINE_TYPE_COMPUTE, e->Engines[1].EngineType);
	EXPECT_EQ(D3DKMT_NFENCE_ENGINE_TYPE_COPY, e->Engines[2].EngineType);
	EXPECT_EQ(1u, (UINT)e->Engines[2].Flags.UserModeSubmissionSupported);
	free(e);

	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
}

TEST_F(mock, query_timestamp)
{
	D3DKMT_NFENCE_TIMESTAMP a, b;
	D3DKMT_HANDLE h;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_TIMESTAMP, &a,
					sizeof(a)));
	usleep(1000);
	ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_NFENCE_TIMESTAMP, &b,
					sizeof(b)));
	EXPECT_EQ(100000000u, a.GpuFrequency);
	EXPECT_LT(a.GpuTimestamp, b.GpuTimestamp);
	EXPECT_LT(a.CpuMonotonicNs, b.CpuMonotonicNs);
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
}

TEST_F(mock, device_lifecycle)
{
	D3DKMT_CREATEDEVICE c;
	D3DKMT_HANDLE h, h2;
	int dummy;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));

	memset(&c, 0, sizeof(c));
	c.hAdapter = h;
	c.Flags.RequestVSync = 1;
	c.pCommandBuffer = &dummy;
	c.CommandBufferSize = 5;
	c.pAllocationList = (D3DDDI_ALLOCATIONLIST *)&dummy;
	c.PatchLocationListSize = 7;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTCreateDevice(&c));
	EXPECT_NE(0u, c.hDevice);
	EXPECT_NE(h, c.hDevice);
	EXPECT_EQ(NULL, c.pCommandBuffer);
	EXPECT_EQ(0u, c.CommandBufferSize);
	EXPECT_EQ(NULL, c.pAllocationList);
	EXPECT_EQ(0u, c.AllocationListSize);
	EXPECT_EQ(NULL, c.pPatchLocationList);
	EXPECT_EQ(0u, c.PatchLocationListSize);
	EXPECT_EQ(1u, mock_live_devices());

	ASSERT_EQ(STATUS_SUCCESS, create_device(h, &h2));
	EXPECT_NE(c.hDevice, h2);
	EXPECT_EQ(2u, mock_live_devices());

	/* Handles are typed. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(h));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(c.hDevice));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_device(c.hDevice, &h2));

	EXPECT_EQ(STATUS_SUCCESS, destroy_device(c.hDevice));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(c.hDevice));
	EXPECT_EQ(1u, mock_live_devices());
	ASSERT_EQ(STATUS_SUCCESS, create_device(h, &h2));
	EXPECT_NE(c.hDevice, h2);	/* not reused */
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
	EXPECT_EQ(2u, mock_live_devices());
}

TEST_F(mock, device_keeps_adapter_open)
{
	D3DKMT_WDDM_3_1_CAPS caps;
	D3DKMT_HANDLE h, dev, dev2;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));
	ASSERT_EQ(STATUS_SUCCESS, create_device(h, &dev));
	ASSERT_EQ(STATUS_SUCCESS, close_adapter(h));

	/* The adapter handle is gone, its file and the device are not. */
	EXPECT_EQ(1u, mock_open_files());
	EXPECT_EQ(1u, mock_live_devices());
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  query(h, KMTQAITYPE_WDDM_3_1_CAPS, &caps, sizeof(caps)));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, create_device(h, &dev2));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, close_adapter(h));
	EXPECT_EQ(-1, NFenceGetAdapterFd(h));

	/* Reopening the adapter shares the device's file. */
	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));
	EXPECT_EQ(1u, mock_open_files());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));

	/* The kernel device is destroyed, then the file closes. */
	EXPECT_EQ(STATUS_SUCCESS, destroy_device(dev));
	EXPECT_EQ(0u, mock_live_devices());
	EXPECT_EQ(0u, mock_open_files());
}

TEST_F(mock, device_limit)
{
	static D3DKMT_HANDLE devs[DRM_NFENCE_MAX_DEVICES_PER_FILE];
	D3DKMT_HANDLE h, extra = 0;
	unsigned int i;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		ASSERT_EQ(STATUS_SUCCESS, create_device(h, &devs[i]));
	EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, create_device(h, &extra));
	EXPECT_EQ(0u, extra);
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		ASSERT_EQ(STATUS_SUCCESS, destroy_device(devs[i]));
	EXPECT_EQ(0u, mock_live_devices());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
	EXPECT_EQ(0u, mock_open_files());
}

TEST_F(mock, kernel_errors_are_mapped)
{
	D3DKMT_WDDM_3_1_CAPS caps;
	D3DKMT_NFENCE_SEGMENTS segs;
	D3DKMT_HANDLE h, dev = 0;

	ASSERT_EQ(STATUS_SUCCESS, open_luid(LUID0_LOW, LUID0_HIGH, &h));

	mock_fail_next(ENODEV);
	EXPECT_EQ(STATUS_DEVICE_REMOVED,
		  query(h, KMTQAITYPE_WDDM_3_1_CAPS, &caps, sizeof(caps)));
	mock_fail_next(EIO);
	EXPECT_EQ(STATUS_DEVICE_REMOVED,
		  query(h, KMTQAITYPE_NFENCE_SEGMENTS, &segs, sizeof(segs)));
	mock_fail_next(ENOMEM);
	EXPECT_EQ(STATUS_NO_MEMORY, create_device(h, &dev));
	EXPECT_EQ(0u, dev);
	mock_fail_next(EACCES);
	EXPECT_EQ(STATUS_ACCESS_DENIED, create_device(h, &dev));

	/* A failed kernel destroy still releases the handle. */
	ASSERT_EQ(STATUS_SUCCESS, create_device(h, &dev));
	mock_fail_next(ENOENT);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(dev));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, destroy_device(dev));

	/* Nothing leaked: the adapter's file closes with its handle. */
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(h));
	EXPECT_EQ(0u, mock_open_files());
}

TEST_F(mock, enum_skips_failing_node)
{
	D3DKMT_ADAPTERINFO infos[4];
	char path[128];

	/* A node whose adapter is lost (EIO) is skipped, not fatal. */
	snprintf(path, sizeof(path), "%s/renderD131", self->dir);
	ASSERT_EQ(0, unlink(path));
	mock_fail_next(EIO);
	ASSERT_EQ(1u, enum_all(_metadata, infos));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(0u, mock_open_files());
}

/* A file descriptor limit, under which fds_fill() takes all but a few. */
#define NFILL		64

struct fd_fill {
	struct rlimit old;
	int fds[NFILL];
	int n;
};

static void fds_restore(struct fd_fill *f)
{
	while (f->n > 0)
		close(f->fds[--f->n]);
	setrlimit(RLIMIT_NOFILE, &f->old);
}

/*
 * Lower RLIMIT_NOFILE to NFILL and open /dev/null until no descriptor is
 * left, then close @spare of them. Returns 0, or -1 with nothing changed.
 * fds_restore() gives everything back.
 */
static int fds_fill(struct fd_fill *f, int spare)
{
	struct rlimit r;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &f->old))
		return -1;
	r.rlim_cur = NFILL;
	r.rlim_max = f->old.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r))
		return -1;
	f->n = 0;
	while (f->n < NFILL &&
	       (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		f->fds[f->n++] = fd;
	if (f->n < spare) {
		fds_restore(f);
		return -1;
	}
	while (spare-- > 0)
		close(f->fds[--f->n]);
	return 0;
}

/*
 * Scan with call @call: 0 enumerates into room for 4, 1 only counts, 2
 * opens LUID 1. Closes whatever it opened; returns its status.
 */
static NTSTATUS scan_call(int call)
{
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 4, .pAdapters = infos };
	D3DKMT_HANDLE h;
	NTSTATUS st;
	ULONG i;

	if (call == 2) {
		st = open_luid(LUID1_LOW, LUID1_HIGH, &h);
		if (NT_SUCCESS(st))
			close_adapter(h);
		return st;
	}
	if (call == 1)
		e.pAdapters = NULL;
	st = D3DKMTEnumAdapters2(&e);
	if (NT_SUCCESS(st) && e.pAdapters)
		for (i = 0; i < e.NumAdapters; i++)
			close_adapter(infos[i].hAdapter);
	return st;
}

/*
 * A scan that runs out of file descriptors or memory fails with that
 * status: it does not report fewer adapters, or no adapter with a LUID
 * that is there, and leaves nothing open. A node that cannot be opened
 * for any other reason is skipped.
 */
TEST_F(mock, scan_fails_out_of_resources)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	D3DKMT_ADAPTERINFO infos[4];
	int spare, call, sock;
	struct fd_fill fill;
	char path[128];
	NTSTATUS st;

	/*
	 * Two descriptors: the directory and the first nfence node, then
	 * EMFILE for the next render node, whatever readdir()'s order. One:
	 * the directory alone, then EMFILE for every node.
	 */
	for (spare = 2; spare >= 1; spare--) {
		for (call = 0; call < 3; call++) {
			ASSERT_EQ(0, fds_fill(&fill, spare));
			st = scan_call(call);
			fds_restore(&fill);
			EXPECT_EQ(STATUS_INSUFFICIENT_RESOURCES, st) {
				TH_LOG("%d descriptors free, call %d", spare,
				       call);
			}
			EXPECT_EQ(0u, mock_open_files());
		}
	}

	/* The first nfence node's adapter query out of memory. */
	for (call = 0; call < 3; call++) {
		mock_fail_next(ENOMEM);
		st = scan_call(call);
		mock_fail_next(0);
		EXPECT_EQ(STATUS_NO_MEMORY, st) {
			TH_LOG("call %d", call);
		}
		EXPECT_EQ(0u, mock_open_files());
	}

	/* With descriptors and memory again, both adapters are there. */
	ASSERT_EQ(2u, enum_all(_metadata, infos));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
	EXPECT_EQ(0u, mock_open_files());

	/*
	 * Nodes whose open fails for their own sake are skipped: a dangling
	 * link (ENOENT), a socket (ENXIO), a directory (EISDIR).
	 */
	snprintf(path, sizeof(path), "%s/renderD140", self->dir);
	ASSERT_EQ(0, symlink("gone", path));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/renderD141",
		 self->dir);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, sock);
	ASSERT_EQ(0, bind(sock, (struct sockaddr *)&addr, sizeof(addr)));
	close(sock);
	snprintf(path, sizeof(path), "%s/renderD142", self->dir);
	ASSERT_EQ(0, mkdir(path, 0700));
	for (call = 0; call < 3; call++)
		EXPECT_EQ(STATUS_SUCCESS, scan_call(call));
	ASSERT_EQ(2u, enum_all(_metadata, infos));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[0].hAdapter));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[1].hAdapter));
	EXPECT_EQ(0u, mock_open_files());
}

#define THREADS		8
#define ROUNDS		200

static D3DKMT_HANDLE thread_adapter;

static void *device_thread(void *p)
{
	int *failures = p;
	D3DKMT_HANDLE devs[4];
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < 4; i++)
			if (create_device(thread_adapter, &devs[i]))
				(*failures)++;
		for (i = 0; i < 4; i++)
			if (destroy_device(devs[i]))
				(*failures)++;
	}
	return NULL;
}

TEST_F(mock, concurrent_devices)
{
	pthread_t th[THREADS];
	int failures[THREADS] = { 0 };
	int i;

	ASSERT_EQ(STATUS_SUCCESS,
		  open_luid(LUID0_LOW, LUID0_HIGH, &thread_adapter));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, device_thread,
					    &failures[i]));
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, failures[i]);
	}
	EXPECT_EQ(0u, mock_live_devices());
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(thread_adapter));
	EXPECT_EQ(0u, mock_open_files());
}

TEST_HARNESS_MAIN
