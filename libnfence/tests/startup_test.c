/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The calls a Windows runtime makes at startup, against the fake driver
 * (mock_drm.c): the Windows types and structs of <nfence/d3dkmthk.h> (the
 * bit fields of windows_layouts.h, made from windows-layouts.txt, whose
 * sizes and offsets header_compat.c asserts; the base types, KMTQAITYPE values and the bits of the types
 * WINDOWS-LAYOUTS.md lacks against ../shared/spec/WINDOWS-ABI.md),
 * D3DKMTEnumAdapters3 and its filter, and
 * each Windows query type: its answer on both fake adapters, and every
 * invalid input (each with otherwise valid input) failing with nothing
 * written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <nfence/d3dkmthk.h>
#include "drm/nfence_drm.h"

#include "mock_drm.h"
#include "windows_layouts.h"
#include "kselftest_harness.h"

#define MiB		(1ull << 20)
#define POISON		0xa5

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

/* True if @n bytes at @p are all @byte. */
static bool all_bytes(const void *p, size_t n, unsigned char byte)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != byte)
			return false;
	return true;
}

/* ---- the Windows ABI -------------------------------------------------- */

TEST(basic_types)
{
	EXPECT_EQ(1u, sizeof(BOOLEAN));
	EXPECT_EQ(1u, sizeof(BYTE));
	EXPECT_EQ(4u, sizeof(WCHAR));
	EXPECT_TRUE((__builtin_types_compatible_p(WCHAR, wchar_t)));
	EXPECT_TRUE((__builtin_types_compatible_p(BOOLEAN, unsigned char)));
	EXPECT_TRUE((__builtin_types_compatible_p(BOOL, int)));
	EXPECT_EQ(4u, sizeof(ULONG));
	EXPECT_EQ(4u, sizeof(LONG));
	EXPECT_EQ(4u, sizeof(UINT));
	EXPECT_EQ(4u, sizeof(DWORD));
	EXPECT_EQ(8u, sizeof(ULONGLONG));
	EXPECT_EQ(8u, sizeof(UINT64));
	EXPECT_EQ(sizeof(void *), sizeof(HANDLE));
	EXPECT_EQ(8u, sizeof(LUID));
	EXPECT_EQ(0u, offsetof(LUID, LowPart));
	EXPECT_EQ(4u, offsetof(LUID, HighPart));
	EXPECT_EQ(16u, sizeof(GUID));
	EXPECT_EQ(0u, offsetof(GUID, Data1));
	EXPECT_EQ(4u, offsetof(GUID, Data2));
	EXPECT_EQ(6u, offsetof(GUID, Data3));
	EXPECT_EQ(8u, offsetof(GUID, Data4));
	/* LONG is signed, ULONG is not. */
	EXPECT_TRUE((LONG)-1 < 0);
	EXPECT_TRUE((ULONG)-1 > 0);
}

TEST(kmtqaitype_values)
{
	EXPECT_EQ(3, KMTQAITYPE_GETSEGMENTSIZE);
	EXPECT_EQ(15, KMTQAITYPE_ADAPTERTYPE);
	EXPECT_EQ(25, KMTQAITYPE_NODEMETADATA);
	EXPECT_EQ(30, KMTQAITYPE_PHYSICALADAPTERCOUNT);
	EXPECT_EQ(31, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS);
	EXPECT_EQ(57, KMTQAITYPE_ADAPTERTYPE_RENDER);
	EXPECT_EQ(60, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID);
	EXPECT_EQ(65, KMTQAITYPE_DRIVER_DESCRIPTION);
	EXPECT_EQ(66, KMTQAITYPE_DRIVER_DESCRIPTION_RENDER);
	EXPECT_EQ(70, KMTQAITYPE_WDDM_2_7_CAPS);
	EXPECT_EQ(75, KMTQAITYPE_WDDM_2_9_CAPS);
	EXPECT_EQ(77, KMTQAITYPE_WDDM_3_0_CAPS);
	EXPECT_EQ(80, KMTQAITYPE_WDDM_3_1_CAPS);
	/* nfence's own, far above the Windows range. */
	EXPECT_EQ(0x4E460000, KMTQAITYPE_NFENCE_ADAPTER);
	EXPECT_EQ(0x4E460001, KMTQAITYPE_NFENCE_SEGMENTS);
	EXPECT_EQ(0x4E460002, KMTQAITYPE_NFENCE_ENGINES);
	EXPECT_EQ(0x4E460003, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS);
	EXPECT_EQ(0x4E460004, KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS);
	EXPECT_EQ(0x4E460005, KMTQAITYPE_NFENCE_TIMESTAMP);

	EXPECT_EQ(0, DXGK_ENGINE_TYPE_OTHER);
	EXPECT_EQ(1, DXGK_ENGINE_TYPE_3D);
	EXPECT_EQ(2, DXGK_ENGINE_TYPE_VIDEO_DECODE);
	EXPECT_EQ(3, DXGK_ENGINE_TYPE_VIDEO_ENCODE);
	EXPECT_EQ(4, DXGK_ENGINE_TYPE_VIDEO_PROCESSING);
	EXPECT_EQ(5, DXGK_ENGINE_TYPE_SCENE_ASSEMBLY);
	EXPECT_EQ(6, DXGK_ENGINE_TYPE_COPY);
	EXPECT_EQ(7, DXGK_ENGINE_TYPE_OVERLAY);
	EXPECT_EQ(8, DXGK_ENGINE_TYPE_CRYPTO);

	EXPECT_EQ(0, DXGK_FEATURE_SUPPORT_ALWAYS_OFF);
	EXPECT_EQ(1, DXGK_FEATURE_SUPPORT_EXPERIMENTAL);
	EXPECT_EQ(2, DXGK_FEATURE_SUPPORT_STABLE);
	EXPECT_EQ(3, DXGK_FEATURE_SUPPORT_ALWAYS_ON);
	EXPECT_EQ(32, DXGK_MAX_METADATA_NAME_LENGTH);
}

/* Sizes of the types WINDOWS-LAYOUTS.md lacks (windows_layouts.h has the rest). */
TEST(struct_sizes)
{
	EXPECT_EQ(4u, sizeof(D3DKMT_WDDM_3_1_CAPS));
	EXPECT_EQ(4u, sizeof(DXGK_ENGINE_TYPE));
	EXPECT_EQ(4u, sizeof(DXGK_NODEMETADATA_FLAGS));
}

/*
 * Every bit field of windows_layouts.h, set alone to all ones in a zeroed
 * struct, occupies exactly its bits: the bytes are compared with the mask
 * built from (byte, first, last).
 */
#define NF_WIN_BITS_CHECK(type, field, byte, first, last) do {		\
	type v_;							\
	unsigned char want_[sizeof(type)];				\
	unsigned int b_;						\
									\
	memset(&v_, 0, sizeof(v_));					\
	memset(want_, 0, sizeof(want_));				\
	v_.field = ones;						\
	for (b_ = (byte) * 8 + (first); b_ <= (byte) * 8 + (last); b_++) \
		want_[b_ / 8] |= (unsigned char)(1u << (b_ % 8));	\
	EXPECT_EQ(0, memcmp(&v_, want_, sizeof(v_)))			\
		TH_LOG(#type "." #field " is not at %u:%u-%u",		\
		       (byte), (first), (last));			\
} while (0);

TEST(windows_bit_fields)
{
	/* Assigning it truncates to each field's width. */
	unsigned long long ones = ~0ull;

	NF_WIN_BITFIELDS(NF_WIN_BITS_CHECK)
}

/*
 * Bit positions of the types WINDOWS-LAYOUTS.md lacks, from bit 0 in the
 * order of WINDOWS-ABI.md: each field set alone (to its largest value) in
 * a zeroed struct shows in Value.
 */
#define BIT_AT(type, field, width, shift) do {				\
	type v_;							\
	memset(&v_, 0, sizeof(v_));					\
	v_.field = (1ull << (width)) - 1;				\
	EXPECT_EQ(((1ull << (width)) - 1) << (shift), (uint64_t)v_.Value) \
		TH_LOG(#type "." #field);				\
} while (0)

TEST(bit_positions)
{
	BIT_AT(D3DKMT_WDDM_3_1_CAPS, NativeGpuFenceSupported, 1, 0);
	BIT_AT(D3DKMT_WDDM_3_1_CAPS, Reserved, 31, 1);

	BIT_AT(DXGK_NODEMETADATA_FLAGS, ContextSchedulingSupported, 1, 0);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, RingBufferFenceRelease, 1, 1);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, SupportTrackedWorkload, 1, 2);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, UserModeSubmission, 1, 3);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, SupportBuildTestCommandBuffer, 1, 4);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, Reserved, 11, 5);
	BIT_AT(DXGK_NODEMETADATA_FLAGS, MaxInFlightHwQueueBuffers, 16, 16);
}

/* ---- two fake adapters ------------------------------------------------ */

/*
 * Adapter 0: the module's defaults (3 engines), but its copy engine takes
 * no user-mode submission. Adapter 1: 5 engines, a negative LUID HighPart,
 * other segment sizes, no user-mode submission. Registered out of index
 * order, with a node of another driver that must be skipped.
 */
#define LUID0_LOW	0x1000u
#define LUID0_HIGH	7
#define LUID1_LOW	0x2301u
#define LUID1_HIGH	(-2)

FIXTURE(startup) {
	char dir[64];
	D3DKMT_ADAPTERINFO a[2];
};

FIXTURE_SETUP(startup)
{
	struct mock_adapter a0 = mock_default_adapter(0);
	struct mock_adapter a1 = mock_default_adapter(1);
	struct mock_adapter other = mock_default_adapter(5);
	D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = 2, .pAdapters = self->a };

	a0.luid_low = LUID0_LOW;
	a0.luid_high = LUID0_HIGH;
	a0.no_ums_engines = 1u << 2;
	a1.luid_low = LUID1_LOW;
	a1.luid_high = (uint32_t)LUID1_HIGH;
	a1.num_engines = 5;
	a1.vram_mb = 128;
	a1.sysmem_mb = 512;
	a1.user_mode_submission = false;
	other.driver_name = "i915";

	strcpy(self->dir, "/tmp/nfence-startup-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD128", &a1));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD129", &other));
	ASSERT_EQ(0, mock_add_node(self->dir, "renderD130", &a0));
	ASSERT_EQ(0, setenv("NFENCE_DRI_DIR", self->dir, 1));
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTEnumAdapters2(&e));
	ASSERT_EQ(2u, e.NumAdapters);
	ASSERT_EQ(LUID0_LOW, self->a[0].AdapterLuid.LowPart);
	ASSERT_EQ(LUID1_LOW, self->a[1].AdapterLuid.LowPart);
}

FIXTURE_TEARDOWN(startup)
{
	char cmd[128];

	close_adapter(self->a[0].hAdapter);
	close_adapter(self->a[1].hAdapter);
	EXPECT_EQ(0u, mock_open_files());
	mock_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

static NTSTATUS enum3(UINT64 filter, ULONG *num, D3DKMT_ADAPTERINFO *infos)
{
	D3DKMT_ENUMADAPTERS3 e;
	NTSTATUS st;

	memset(&e, 0, sizeof(e));
	e.Filter.Value = filter;
	e.NumAdapters = *num;
	e.pAdapters = infos;
	st = D3DKMTEnumAdapters3(&e);
	*num = e.NumAdapters;
	return st;
}

/* Every filter nfence accepts gives both adapters, as EnumAdapters2. */
TEST_F(startup, enum3_filters)
{
	static const UINT64 filters[] = { 0, 1, 2, 3 };
	D3DKMT_ADAPTERINFO infos[4];
	unsigned int f, i;
	ULONG n;

	for (f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
		/* Count only. */
		n = 0;
		EXPECT_EQ(STATUS_SUCCESS, enum3(filters[f], &n, NULL));
		EXPECT_EQ(2u, n);
		n = 77;
		EXPECT_EQ(STATUS_SUCCESS, enum3(filters[f], &n, NULL));
		EXPECT_EQ(2u, n);
		EXPECT_EQ(2u, mock_open_files());

		/* The same adapters, order and rules as D3DKMTEnumAdapters2. */
		memset(infos, 0, sizeof(infos));
		n = 4;
		ASSERT_EQ(STATUS_SUCCESS, enum3(filters[f], &n, infos));
		ASSERT_EQ(2u, n);
		for (i = 0; i < 2; i++) {
			EXPECT_NE(0u, infos[i].hAdapter);
			EXPECT_NE(self->a[i].hAdapter, infos[i].hAdapter);
			EXPECT_EQ(self->a[i].AdapterLuid.LowPart,
				  infos[i].AdapterLuid.LowPart);
			EXPECT_EQ(self->a[i].AdapterLuid.HighPart,
				  infos[i].AdapterLuid.HighPart);
			EXPECT_EQ(0u, infos[i].NumOfSources);
			EXPECT_EQ(FALSE, infos[i].bPrecisePresentRegionsPreferred);
			EXPECT_EQ(NFenceGetAdapterFd(self->a[i].hAdapter),
				  NFenceGetAdapterFd(infos[i].hAdapter));
		}
		EXPECT_EQ(0, memcmp(&infos[2], &(D3DKMT_ADAPTERINFO){ 0 },
				    sizeof(infos[2])));
		for (i = 0; i < 2; i++)
			EXPECT_EQ(STATUS_SUCCESS, close_adapter(infos[i].hAdapter));
	}
}

/* Too small: the count and STATUS_BUFFER_TOO_SMALL, nothing opened. */
TEST_F(startup, enum3_too_small)
{
	D3DKMT_ADAPTERINFO infos[2];
	ULONG n;

	close_adapter(self->a[0].hAdapter);
	close_adapter(self->a[1].hAdapter);
	memset(self->a, 0, sizeof(self->a));
	ASSERT_EQ(0u, mock_open_files());

	memset(infos, POISON, sizeof(infos));
	n = 1;
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, enum3(1, &n, infos));
	EXPECT_EQ(2u, n);
	n = 0;
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, enum3(2, &n, infos));
	EXPECT_EQ(2u, n);
	EXPECT_TRUE(all_bytes(infos, sizeof(infos), POISON));
	EXPECT_EQ(0u, mock_open_files());
}

/* Reserved filter bits: STATUS_INVALID_PARAMETER, nothing written or opened. */
TEST_F(startup, enum3_reserved_bits)
{
	static const UINT64 bad[] = {
		1ull << 2, 1ull << 3, 1ull << 31, 1ull << 32, 1ull << 63,
		~0ull, ~3ull, 3ull | (1ull << 40),
	};
	D3DKMT_ADAPTERINFO infos[4];
	D3DKMT_ENUMADAPTERS3 e;
	unsigned int i;
	ULONG n;

	close_adapter(self->a[0].hAdapter);
	close_adapter(self->a[1].hAdapter);
	memset(self->a, 0, sizeof(self->a));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(infos, POISON, sizeof(infos));
		n = 4;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, enum3(bad[i], &n, infos))
			TH_LOG("filter 0x%llx", (unsigned long long)bad[i]);
		EXPECT_EQ(4u, n);
		EXPECT_TRUE(all_bytes(infos, sizeof(infos), POISON));
		n = 9;
		EXPECT_EQ(STATUS_INVALID_PARAMETER, enum3(bad[i], &n, NULL));
		EXPECT_EQ(9u, n);
		EXPECT_EQ(0u, mock_open_files());
	}

	/* Through the named bit-field too. */
	memset(&e, 0, sizeof(e));
	e.Filter.Reserved = 1;
	e.NumAdapters = 4;
	e.pAdapters = infos;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(&e));
	EXPECT_EQ(4u, e.NumAdapters);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, D3DKMTEnumAdapters3(NULL));
}

/* ---- the startup queries ---------------------------------------------- */

TEST_F(startup, adapter_type)
{
	static const KMTQUERYADAPTERINFOTYPE types[] = {
		KMTQAITYPE_ADAPTERTYPE, KMTQAITYPE_ADAPTERTYPE_RENDER,
	};
	D3DKMT_ADAPTERTYPE t;
	unsigned int i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			memset(&t, POISON, sizeof(t));
			ASSERT_EQ(STATUS_SUCCESS, query(self->a[i].hAdapter,
							types[j], &t, sizeof(t)));
			EXPECT_EQ(1u, (UINT)t.RenderSupported);
			EXPECT_EQ(1u, (UINT)t.SoftwareDevice);
			EXPECT_EQ(0u, (UINT)t.DisplaySupported);
			EXPECT_EQ(0u, (UINT)t.ComputeOnly);
			/* Nothing else: bits 0 and 2. */
			EXPECT_EQ(0x5u, t.Value);
		}
	}
}

TEST_F(startup, physical_adapters)
{
	D3DKMT_PHYSICAL_ADAPTER_COUNT c;
	D3DKMT_QUERY_DEVICE_IDS ids;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		memset(&c, POISON, sizeof(c));
		ASSERT_EQ(STATUS_SUCCESS,
			  query(self->a[i].hAdapter,
				KMTQAITYPE_PHYSICALADAPTERCOUNT, &c, sizeof(c)));
		EXPECT_EQ(1u, c.Count);

		memset(&ids, POISON, sizeof(ids));
		ids.PhysicalAdapterIndex = 0;
		ASSERT_EQ(STATUS_SUCCESS,
			  query(self->a[i].hAdapter,
				KMTQAITYPE_PHYSICALADAPTERDEVICEIDS,
				&ids, sizeof(ids)));
		EXPECT_EQ(0u, ids.PhysicalAdapterIndex);
		EXPECT_EQ(0xFFFFu, ids.DeviceIds.VendorID);
		EXPECT_EQ(D3DKMT_NFENCE_VENDOR_ID, ids.DeviceIds.VendorID);
		EXPECT_EQ(0x4E46u, ids.DeviceIds.DeviceID);
		EXPECT_EQ(D3DKMT_NFENCE_DEVICE_ID, ids.DeviceIds.DeviceID);
		EXPECT_EQ(0u, ids.DeviceIds.SubVendorID);
		EXPECT_EQ(0u, ids.DeviceIds.SubSystemID);
		EXPECT_EQ(0u, ids.DeviceIds.RevisionID);
		EXPECT_EQ(0u, ids.DeviceIds.BusType);
	}
}

TEST_F(startup, driver_description)
{
	static const KMTQUERYADAPTERINFOTYPE types[] = {
		KMTQAITYPE_DRIVER_DESCRIPTION,
		KMTQAITYPE_DRIVER_DESCRIPTION_RENDER,
	};
	/* The fake driver's DRM version: 1.0.0, "fake nfence". */
	static const WCHAR want[] = L"nfence 1.0.0 (fake nfence)";
	static D3DKMT_DRIVER_DESCRIPTION d;
	size_t len = wcslen(want);
	unsigned int i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			memset(&d, POISON, sizeof(d));
			ASSERT_EQ(STATUS_SUCCESS,
				  query(self->a[i].hAdapter, types[j],
					&d, sizeof(d)));
			EXPECT_EQ(0, wcscmp(want, d.DriverDescription))
				TH_LOG("got \"%ls\"", d.DriverDescription);
			/* NUL-terminated, the rest zero. */
			EXPECT_TRUE(all_bytes(&d.DriverDescription[len],
					      sizeof(d) - len * sizeof(WCHAR),
					      0));
		}
	}
}

TEST_F(startup, wddm_caps)
{
	D3DKMT_WDDM_2_7_CAPS c27;
	D3DKMT_WDDM_2_9_CAPS c29;
	D3DKMT_WDDM_3_0_CAPS c30;
	D3DKMT_WDDM_3_1_CAPS c31;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		D3DKMT_HANDLE h = self->a[i].hAdapter;

		memset(&c27, POISON, sizeof(c27));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_2_7_CAPS,
						&c27, sizeof(c27)));
		EXPECT_EQ(1u, (UINT)c27.HwSchSupported);
		EXPECT_EQ(1u, (UINT)c27.HwSchEnabled);
		EXPECT_EQ(1u, (UINT)c27.HwSchEnabledByDefault);
		EXPECT_EQ(0u, (UINT)c27.IndependentVidPnVSyncControl);
		EXPECT_EQ(0x7u, c27.Value);

		memset(&c29, POISON, sizeof(c29));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_2_9_CAPS,
						&c29, sizeof(c29)));
		EXPECT_EQ((UINT)DXGK_FEATURE_SUPPORT_ALWAYS_ON,
			  (UINT)c29.HwSchSupportState);
		EXPECT_EQ(1u, (UINT)c29.HwSchEnabled);
		EXPECT_EQ(0u, (UINT)c29.SelfRefreshMemorySupported);
		EXPECT_EQ(0x7u, c29.Value);

		memset(&c30, POISON, sizeof(c30));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_3_0_CAPS,
						&c30, sizeof(c30)));
		EXPECT_EQ((UINT)DXGK_FEATURE_SUPPORT_ALWAYS_OFF,
			  (UINT)c30.HwFlipQueueSupportState);
		EXPECT_EQ(0u, c30.Value);

		/* Native fences on both fake adapters. */
		memset(&c31, POISON, sizeof(c31));
		ASSERT_EQ(STATUS_SUCCESS, query(h, KMTQAITYPE_WDDM_3_1_CAPS,
						&c31, sizeof(c31)));
		EXPECT_EQ(1u, c31.Value);
	}
}

/*
 * Engines: 3D, compute, copy, 3D, compute, ... as the kernel lists them;
 * UserModeSubmission where the kernel's engine list says the engine takes
 * it (adapter 0's 3D and compute engines), no other flag.
 */
TEST_F(startup, node_metadata)
{
	static unsigned char ebuf[D3DKMT_NFENCE_ENGINES_SIZE(8)];
	D3DKMT_NFENCE_ENGINES *engs = (D3DKMT_NFENCE_ENGINES *)ebuf;
	WCHAR name[DXGK_MAX_METADATA_NAME_LENGTH];
	DXGK_NODEMETADATA_FLAGS flags;
	static const struct {
		DXGK_ENGINE_TYPE type;
		const WCHAR *name;
	} want[] = {
		{ DXGK_ENGINE_TYPE_3D, L"3D_0" },
		{ DXGK_ENGINE_TYPE_OTHER, L"Compute_0" },
		{ DXGK_ENGINE_TYPE_COPY, L"Copy_0" },
		{ DXGK_ENGINE_TYPE_3D, L"3D_1" },
		{ DXGK_ENGINE_TYPE_OTHER, L"Compute_1" },
	};
	static const UINT engines[2] = { 3, 5 };
	D3DKMT_NODEMETADATA m;
	unsigned int i, n;
	size_t len;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(STATUS_SUCCESS,
			  query(self->a[i].hAdapter, KMTQAITYPE_NFENCE_ENGINES,
				ebuf, sizeof(ebuf)));
		ASSERT_EQ(engines[i], engs->NumEngines);
		for (n = 0; n < engines[i]; n++) {
			memset(&m, POISON, sizeof(m));
			m.NodeOrdinalAndAdapterIndex = n;
			ASSERT_EQ(STATUS_SUCCESS,
				  query(self->a[i].hAdapter,
					KMTQAITYPE_NODEMETADATA, &m, sizeof(m)));
			EXPECT_EQ(n, m.NodeOrdinalAndAdapterIndex);
			EXPECT_EQ(want[n].type, m.NodeData.EngineType);
			/* Byte-packed: copy the name out before using it. */
			memcpy(name, m.NodeData.FriendlyName, sizeof(name));
			EXPECT_EQ(0, wcscmp(want[n].name, name))
				TH_LOG("node %u: \"%ls\"", n, name);
			len = wcslen(want[n].name);
			EXPECT_TRUE(all_bytes(&name[len],
					      (DXGK_MAX_METADATA_NAME_LENGTH - len) *
					      sizeof(WCHAR), 0));
			flags = m.NodeData.Flags;
			EXPECT_EQ((UINT)engs->Engines[n].Flags.UserModeSubmissionSupported,
				  (UINT)flags.UserModeSubmission);
			EXPECT_EQ(i == 0 && n != 2 ? 1u << 3 : 0u, flags.Value)
				TH_LOG("adapter %u node %u", i, n);
			EXPECT_EQ(TRUE, m.NodeData.GpuMmuSupported);
			EXPECT_EQ(FALSE, m.NodeData.IoMmuSupported);
		}
	}
}

TEST_F(startup, segment_size)
{
	D3DKMT_SEGMENTSIZEINFO s;

	memset(&s, POISON, sizeof(s));
	ASSERT_EQ(STATUS_SUCCESS, query(self->a[0].hAdapter,
					KMTQAITYPE_GETSEGMENTSIZE,
					&s, sizeof(s)));
	EXPECT_EQ(64 * MiB, s.DedicatedVideoMemorySize);
	EXPECT_EQ(0u, s.DedicatedSystemMemorySize);
	EXPECT_EQ(256 * MiB, s.SharedSystemMemorySize);

	memset(&s, POISON, sizeof(s));
	ASSERT_EQ(STATUS_SUCCESS, query(self->a[1].hAdapter,
					KMTQAITYPE_GETSEGMENTSIZE,
					&s, sizeof(s)));
	EXPECT_EQ(128 * MiB, s.DedicatedVideoMemorySize);
	EXPECT_EQ(0u, s.DedicatedSystemMemorySize);
	EXPECT_EQ(512 * MiB, s.SharedSystemMemorySize);
}

/* The rule of d3dkmthk.h, stable across calls and handles. */
TEST_F(startup, unique_guid)
{
	static const uint8_t d4_0[8] = { 0x80, 0, 0, 0, 0, 0, 0, 7 };
	static const uint8_t d4_1[8] = { 0x80, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe };
	D3DKMT_OPENADAPTERFROMLUID o;
	GUID g0, g1, again;

	memset(&g0, POISON, sizeof(g0));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(self->a[0].hAdapter,
			KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, &g0, sizeof(g0)));
	EXPECT_EQ(LUID0_LOW, g0.Data1);
	EXPECT_EQ(0x4E46, g0.Data2);
	EXPECT_EQ(0x8000, g0.Data3);
	EXPECT_EQ(0, memcmp(d4_0, g0.Data4, 8));

	memset(&g1, POISON, sizeof(g1));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(self->a[1].hAdapter,
			KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, &g1, sizeof(g1)));
	EXPECT_EQ(LUID1_LOW, g1.Data1);
	EXPECT_EQ(0x4E46, g1.Data2);
	EXPECT_EQ(0x8001, g1.Data3);
	EXPECT_EQ(0, memcmp(d4_1, g1.Data4, 8));
	EXPECT_NE(0, memcmp(&g0, &g1, sizeof(g0)));

	/* Another handle of adapter 1, opened from its LUID: the same GUID. */
	memset(&o, 0, sizeof(o));
	o.AdapterLuid = self->a[1].AdapterLuid;
	ASSERT_EQ(STATUS_SUCCESS, D3DKMTOpenAdapterFromLuid(&o));
	ASSERT_EQ(STATUS_SUCCESS,
		  query(o.hAdapter, KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID,
			&again, sizeof(again)));
	EXPECT_EQ(0, memcmp(&g1, &again, sizeof(g1)));
	EXPECT_EQ(STATUS_SUCCESS, close_adapter(o.hAdapter));
}

/* ---- invalid input: STATUS_INVALID_PARAMETER, nothing written ----------- */

static const struct {
	KMTQUERYADAPTERINFOTYPE type;
	UINT size;
} startup_types[] = {
	{ KMTQAITYPE_GETSEGMENTSIZE, sizeof(D3DKMT_SEGMENTSIZEINFO) },
	{ KMTQAITYPE_ADAPTERTYPE, sizeof(D3DKMT_ADAPTERTYPE) },
	{ KMTQAITYPE_NODEMETADATA, sizeof(D3DKMT_NODEMETADATA) },
	{ KMTQAITYPE_PHYSICALADAPTERCOUNT, sizeof(D3DKMT_PHYSICAL_ADAPTER_COUNT) },
	{ KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, sizeof(D3DKMT_QUERY_DEVICE_IDS) },
	{ KMTQAITYPE_ADAPTERTYPE_RENDER, sizeof(D3DKMT_ADAPTERTYPE) },
	{ KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, sizeof(GUID) },
	{ KMTQAITYPE_DRIVER_DESCRIPTION, sizeof(D3DKMT_DRIVER_DESCRIPTION) },
	{ KMTQAITYPE_DRIVER_DESCRIPTION_RENDER, sizeof(D3DKMT_DRIVER_DESCRIPTION) },
	{ KMTQAITYPE_WDDM_2_7_CAPS, sizeof(D3DKMT_WDDM_2_7_CAPS) },
	{ KMTQAITYPE_WDDM_2_9_CAPS, sizeof(D3DKMT_WDDM_2_9_CAPS) },
	{ KMTQAITYPE_WDDM_3_0_CAPS, sizeof(D3DKMT_WDDM_3_0_CAPS) },
	{ KMTQAITYPE_WDDM_3_1_CAPS, sizeof(D3DKMT_WDDM_3_1_CAPS) },
};

#define NTYPES	(sizeof(startup_types) / sizeof(startup_types[0]))
#define BUFSZ	(sizeof(D3DKMT_DRIVER_DESCRIPTION) + 64)

/* Each type with a valid input part (node 0, physical adapter 0). */
static void *valid_input(void *buf)
{
	memset(buf, POISON, BUFSZ);
	memset(buf, 0, sizeof(UINT));
	return buf;
}

/* Wrong sizes, a NULL buffer and a bad handle, each alone. */
TEST_F(startup, wrong_size_null_and_bad_handle)
{
	static unsigned char buf[BUFSZ], ref[BUFSZ];
	D3DKMT_HANDLE h = self->a[0].hAdapter;
	unsigned int i, k;

	for (i = 0; i < NTYPES; i++) {
		UINT size = startup_types[i].size;
		const UINT bad[] = {
			0, 1, size - 1, size + 1, size * 2, 0xffffffffu,
		};

		valid_input(ref);
		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			valid_input(buf);
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(h, startup_types[i].type, buf, bad[k]))
				TH_LOG("type %d size %u", startup_types[i].type,
				       bad[k]);
			EXPECT_EQ(0, memcmp(ref, buf, BUFSZ));
		}
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query(h, startup_types[i].type, NULL, size));

		valid_input(buf);
		EXPECT_EQ(STATUS_INVALID_PARAMETER,
			  query(0x7fffffff, startup_types[i].type, buf, size));
		EXPECT_EQ(0, memcmp(ref, buf, BUFSZ));

		/* And with all of it right, it answers. */
		valid_input(buf);
		EXPECT_EQ(STATUS_SUCCESS,
			  query(h, startup_types[i].type, buf, size))
			TH_LOG("type %d", startup_types[i].type);
	}
}

/* Windows types nfence does not answer, whatever the size. */
TEST_F(startup, unknown_types)
{
	static const int unknown[] = {
		0, 1, 2, 4, 13 /* DRIVERVERSION */, 14, 16, 24, 26, 29, 32,
		56, 58, 59, 61, 64, 67, 69, 71, 74, 76, 78, 79, 81, 200,
	};
	static const UINT sizes[] = { 4, 16, 24, 28, 144, 16384 };
	static unsigned char buf[BUFSZ];
	unsigned int i, k;

	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			memset(buf, POISON, sizeof(buf));
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(self->a[0].hAdapter,
					(KMTQUERYADAPTERINFOTYPE)unknown[i],
					buf, sizes[k]))
				TH_LOG("type %d", unknown[i]);
			EXPECT_TRUE(all_bytes(buf, sizeof(buf), POISON));
		}
	}
}

TEST_F(startup, bad_physical_adapter_index)
{
	static const UINT bad[] = { 1, 2, 0x10000, 0x80000000u, 0xffffffffu };
	D3DKMT_QUERY_DEVICE_IDS ids, ref;
	unsigned int i, a;

	for (a = 0; a < 2; a++) {
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memset(&ids, POISON, sizeof(ids));
			ids.PhysicalAdapterIndex = bad[i];
			ref = ids;
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(self->a[a].hAdapter,
					KMTQAITYPE_PHYSICALADAPTERDEVICEIDS,
					&ids, sizeof(ids)));
			EXPECT_EQ(0, memcmp(&ref, &ids, sizeof(ids)));
		}
	}
}

TEST_F(startup, bad_node)
{
	/* Past the last node, and physical adapter indexes other than 0. */
	static const UINT bad0[] = {
		3, 4, 0xffff, 0x10000, 0x10002, 0xffff0000u, 0xffffffffu,
	};
	static const UINT bad1[] = { 5, 8, 0x20004, 0x80000000u };
	const struct { const UINT *v; unsigned int n; } bad[2] = {
		{ bad0, sizeof(bad0) / sizeof(bad0[0]) },
		{ bad1, sizeof(bad1) / sizeof(bad1[0]) },
	};
	D3DKMT_NODEMETADATA m, ref;
	unsigned int i, a;

	for (a = 0; a < 2; a++) {
		for (i = 0; i < bad[a].n; i++) {
			memset(&m, POISON, sizeof(m));
			m.NodeOrdinalAndAdapterIndex = bad[a].v[i];
			ref = m;
			EXPECT_EQ(STATUS_INVALID_PARAMETER,
				  query(self->a[a].hAdapter,
					KMTQAITYPE_NODEMETADATA, &m, sizeof(m)))
				TH_LOG("adapter %u input 0x%x", a, bad[a].v[i]);
			EXPECT_EQ(0, memcmp(&ref, &m, sizeof(m)));
		}
	}
}

/* A kernel error on the queries that ask the kernel: mapped, nothing written. */
TEST_F(startup, kernel_error_writes_nothing)
{
	static const KMTQUERYADAPTERINFOTYPE types[] = {
		KMTQAITYPE_GETSEGMENTSIZE, KMTQAITYPE_NODEMETADATA,
	};
	static unsigned char buf[BUFSZ], ref[BUFSZ];
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		valid_input(ref);
		valid_input(buf);
		mock_fail_next(EIO);
		EXPECT_EQ(NFenceStatusFromErrno(EIO),
			  query(self->a[0].hAdapter, types[i], buf,
				types[i] == KMTQAITYPE_GETSEGMENTSIZE ?
				sizeof(D3DKMT_SEGMENTSIZEINFO) :
				sizeof(D3DKMT_NODEMETADATA)));
		EXPECT_EQ(0, memcmp(ref, buf, BUFSZ));
	}
}

/*
 * DXGK_FAULT_ERROR_CODE, which WINDOWS-LAYOUTS.md lacks: the WDK's bit
 * fields (D3DKMT_DEVICEPAGEFAULT_STATE and D3DKMT_GETDEVICESTATE, which
 * contain it, are in windows_layouts.h).
 */
TEST(fault_error_code_bits)
{
	DXGK_FAULT_ERROR_CODE c;
	UINT v;

	EXPECT_EQ(4u, sizeof(DXGK_FAULT_ERROR_CODE));
	/* The device-specific code sits above IsDeviceSpecificCode (bit 0). */
	memset(&c, 0, sizeof(c));
	c.IsDeviceSpecificCode = 1;
	c.DeviceSpecificCode = 3;
	memcpy(&v, &c, sizeof(v));
	EXPECT_EQ(1u | (3u << 1), v);
	EXPECT_EQ(1u, (UINT)c.IsDeviceSpecificCodeReservedBit);
}

/*
 * WSL's D3DKMT_CREATESYNCFILE (WINDOWS-ABI.md): declared for source
 * compatibility; the call is always refused and writes nothing.
 */
TEST(create_sync_file_refused)
{
	D3DKMT_CREATESYNCFILE c;

	memset(&c, 0xa5, sizeof(c));
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateSyncFile(&c));
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, c.hSyncFile);
	EXPECT_EQ(STATUS_NOT_SUPPORTED, D3DKMTCreateSyncFile(NULL));
}

/*
 * Monitored fences (WINDOWS-ABI.md "Monitored fences"): the type values
 * and the members of the MonitoredFence unions, which WINDOWS-LAYOUTS.md
 * does not break down (it has the direct members, in windows_layouts.h:
 * D3DDDI_SYNCHRONIZATIONOBJECTINFO2 is 80 bytes with SharedHandle at 72,
 * so D3DKMT_CREATESYNCHRONIZATIONOBJECT2.hSyncObject is at 88).
 */
TEST(monitored_fence_layout)
{
	EXPECT_EQ(5, D3DDDI_MONITORED_FENCE);
	EXPECT_EQ(1, D3DDDI_SYNCHRONIZATION_MUTEX);
	EXPECT_EQ(6, D3DDDI_PERIODIC_MONITORED_FENCE);

	EXPECT_EQ(8u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
			       MonitoredFence.InitialFenceValue));
	EXPECT_EQ(16u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
				MonitoredFence.FenceValueCPUVirtualAddress));
	EXPECT_EQ(24u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
				MonitoredFence.FenceValueGPUVirtualAddress));
	EXPECT_EQ(32u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
				MonitoredFence.EngineAffinity));
	EXPECT_EQ(36u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
				MonitoredFence.Padding));
	EXPECT_EQ(72u, offsetof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2,
				SharedHandle));
	EXPECT_EQ(80u, sizeof(D3DDDI_SYNCHRONIZATIONOBJECTINFO2));
	EXPECT_EQ(88u, offsetof(D3DKMT_CREATESYNCHRONIZATIONOBJECT2,
				hSyncObject));

	EXPECT_EQ(24u, offsetof(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2,
				MonitoredFence.FenceValueCPUVirtualAddress));
	EXPECT_EQ(32u, offsetof(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2,
				MonitoredFence.FenceValueGPUVirtualAddress));
	EXPECT_EQ(40u, offsetof(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2,
				MonitoredFence.EngineAffinity));
}

TEST_HARNESS_MAIN
