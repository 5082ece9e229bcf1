/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * The command encoder (NFENCE_CS): the exact bytes of every command,
 * compared with words built by hand from the ISA of nfence_drm.h (not
 * with its macros), sticky errors, overflow and reuse; that the fence
 * commands are logged by default, unlogged under the NFenceCs*Unlogged
 * names and under the LIBNFENCE_0.2 versions of the default names (what
 * programs built before 0.10 call); the ring writer's refusal of a
 * doorbell handle that names nothing. No driver needed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <nfence/d3dkmthk.h>

#include "kselftest_harness.h"

#define VA	0x200000000ull	/* GPU VA of the buffer in these tests */

/* Little-endian bytes of the words @w at @p; true if they match. */
static bool bytes_are(const BYTE *p, const uint32_t *w, size_t nwords)
{
	size_t i;

	for (i = 0; i < nwords * 4; i++)
		if (p[i] != (BYTE)(w[i / 4] >> (8 * (i % 4))))
			return false;
	return true;
}

#define LO(x)	((uint32_t)(x))
#define HI(x)	((uint32_t)((uint64_t)(x) >> 32))

TEST(every_command_encodes_as_the_isa_says)
{
	uint64_t buf[64];
	NFENCE_CS cs;
	/* header: opcode | words << 16; then a zero word; then operands */
	const uint32_t want[] = {
		0x00020000, 0,						/* NOP */
		0x00060001, 0, LO(0x100000010ull), HI(0x100000010ull),	/* WAIT */
		LO(0x1122334455667788ull), HI(0x1122334455667788ull),
		0x00080002, 0, 0x20, 0x1, 0x28, 0x1, 7, 0,		/* SIGNAL */
		0x00060003, 0, 0x1008, 0x2, 0xdeadbeef, 0xcafef00d,	/* WRITE64 */
		0x00040004, 0, 0x1010, 0x2,				/* TIMESTAMP */
		0x00040005, 0, 1000000, 0,				/* WORK */
		0x00080002, 0, 0x30, 0x1, 0, 0, UINT32_MAX, UINT32_MAX,	/* no MV */
	};

	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(VA, NFenceCsGpuVa(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceWaitUnlogged(&cs, 0x100000010ull,
					    0x1122334455667788ull));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceSignalUnlogged(&cs, 0x100000020ull,
					      0x100000028ull, 7));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, 0x200001008ull,
						 0xcafef00ddeadbeefull));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsTimestamp(&cs, 0x200001010ull));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWork(&cs, 1000000));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceSignalUnlogged(&cs, 0x100000030ull, 0,
					      UINT64_MAX));
	EXPECT_EQ(sizeof(want), NFenceCsSize(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs) % 8);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_TRUE(bytes_are((const BYTE *)buf, want, ARRAY_SIZE(want)));
	/* Nothing past the end was touched. */
	EXPECT_EQ(0xee, ((const BYTE *)buf)[sizeof(want)]);
}

TEST(native_fence_helpers_use_the_mapping)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	uint64_t buf[16];
	NFENCE_CS cs;
	const uint32_t want[] = {
		0x00080002, 0, 0x40, 0x1, 0x48, 0x1, 5, 0,
		0x00060001, 0, 0x40, 0x1, 9, 0,
	};

	memset(&m, 0, sizeof(m));
	m.CurrentValueGpuVa = 0x100000040ull;
	m.MonitoredValueGpuVa = 0x100000048ull;
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsSignalNativeFenceUnlogged(&cs, &m, 5));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWaitNativeFenceUnlogged(&cs, &m, 9));
	EXPECT_EQ(sizeof(want), NFenceCsSize(&cs));
	EXPECT_TRUE(bytes_are((const BYTE *)buf, want, ARRAY_SIZE(want)));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalNativeFenceUnlogged(&cs, NULL, 1));
	EXPECT_EQ(sizeof(want), NFenceCsSize(&cs));
}

/*
 * The default fence commands carry the log flag (header bit 8) and the
 * payload hNativeFence | op << 32 (WAIT_UNBLOCKED 1, SIGNAL_EXECUTED 0).
 * 0x77 names no open sync object: it is written as it is.
 */
static const uint32_t logged_want[] = {
	0x00080101, 0, 0x10, 0x1, 9, 0, 0x77, 1,		/* WAIT */
	0x000a0102, 0, 0x20, 0x1, 0x28, 0x1, 7, 0, 0x78, 0,	/* SIGNAL */
	0x00080101, 0, 0x40, 0x1, 11, 0, 0x79, 1,		/* native WAIT */
	0x000a0102, 0, 0x40, 0x1, 0x48, 0x1, 12, 0, 0x7a, 0,	/* native SIGNAL */
};

TEST(fence_commands_are_logged_by_default)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	uint64_t buf[32];
	NFENCE_CS cs;

	memset(&m, 0, sizeof(m));
	m.CurrentValueGpuVa = 0x100000040ull;
	m.MonitoredValueGpuVa = 0x100000048ull;
	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceWait(&cs, 0x100000010ull, 9,
						   0x77));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceSignal(&cs, 0x100000020ull,
						     0x100000028ull, 7, 0x78));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWaitNativeFence(&cs, &m, 11, 0x79));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsSignalNativeFence(&cs, &m, 12,
							   0x7a));
	EXPECT_EQ(sizeof(logged_want), NFenceCsSize(&cs));
	EXPECT_TRUE(bytes_are((const BYTE *)buf, logged_want,
			      ARRAY_SIZE(logged_want)));
	EXPECT_EQ(0xee, ((const BYTE *)buf)[sizeof(logged_want)]);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsWaitNativeFence(&cs, NULL, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalNativeFence(&cs, NULL, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsFenceWait(&cs, 4, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceSignal(&cs, 8, 12, 1, 1));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
}

/* The 0.4 names of the logged commands encode exactly the same. */
TEST(logged_names_of_0_4_are_the_defaults)
{
	D3DDDI_NATIVEFENCEMAPPING m;
	uint64_t buf[32];
	NFENCE_CS cs;

	memset(&m, 0, sizeof(m));
	m.CurrentValueGpuVa = 0x100000040ull;
	m.MonitoredValueGpuVa = 0x100000048ull;
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	NFenceCsFenceWaitLogged(&cs, 0x100000010ull, 9, 0x77);
	NFenceCsFenceSignalLogged(&cs, 0x100000020ull, 0x100000028ull, 7,
				  0x78);
	NFenceCsWaitNativeFenceLogged(&cs, &m, 11, 0x79);
	NFenceCsSignalNativeFenceLogged(&cs, &m, 12, 0x7a);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_EQ(sizeof(logged_want), NFenceCsSize(&cs));
	EXPECT_TRUE(bytes_are((const BYTE *)buf, logged_want,
			      ARRAY_SIZE(logged_want)));
}

/*
 * A program linked against libnfence 0.9 or older calls the four names at
 * LIBNFENCE_0.2 with the old arguments: it must get the unlogged commands
 * it asked for, not a log payload made of whatever is in a register.
 */
TEST(version_0_2_symbols_encode_unlogged)
{
	typedef NTSTATUS (*wait_fn)(NFENCE_CS *, D3DGPU_VIRTUAL_ADDRESS,
				    UINT64);
	typedef NTSTATUS (*signal_fn)(NFENCE_CS *, D3DGPU_VIRTUAL_ADDRESS,
				      D3DGPU_VIRTUAL_ADDRESS, UINT64);
	typedef NTSTATUS (*native_fn)(NFENCE_CS *,
				      const D3DDDI_NATIVEFENCEMAPPING *,
				      UINT64);
	const uint32_t want[] = {
		0x00060001, 0, 0x10, 0x1, 9, 0,
		0x00080002, 0, 0x20, 0x1, 0x28, 0x1, 7, 0,
		0x00060001, 0, 0x40, 0x1, 11, 0,
		0x00080002, 0, 0x40, 0x1, 0x48, 0x1, 12, 0,
	};
	D3DDDI_NATIVEFENCEMAPPING m;
	wait_fn wait;
	signal_fn signal;
	native_fn wait_native, signal_native;
	uint64_t buf[32];
	NFENCE_CS cs;

	wait = (wait_fn)dlvsym(RTLD_DEFAULT, "NFenceCsFenceWait",
			       "LIBNFENCE_0.2");
	signal = (signal_fn)dlvsym(RTLD_DEFAULT, "NFenceCsFenceSignal",
				   "LIBNFENCE_0.2");
	wait_native = (native_fn)dlvsym(RTLD_DEFAULT,
					"NFenceCsWaitNativeFence",
					"LIBNFENCE_0.2");
	signal_native = (native_fn)dlvsym(RTLD_DEFAULT,
					  "NFenceCsSignalNativeFence",
					  "LIBNFENCE_0.2");
	ASSERT_NE(NULL, wait);
	ASSERT_NE(NULL, signal);
	ASSERT_NE(NULL, wait_native);
	ASSERT_NE(NULL, signal_native);
	/* The current versions are other functions. */
	EXPECT_NE((void *)wait, dlvsym(RTLD_DEFAULT, "NFenceCsFenceWait",
				       "LIBNFENCE_0.10"));
	memset(&m, 0, sizeof(m));
	m.CurrentValueGpuVa = 0x100000040ull;
	m.MonitoredValueGpuVa = 0x100000048ull;
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_SUCCESS, wait(&cs, 0x100000010ull, 9));
	EXPECT_EQ(STATUS_SUCCESS, signal(&cs, 0x100000020ull, 0x100000028ull,
					 7));
	EXPECT_EQ(STATUS_SUCCESS, wait_native(&cs, &m, 11));
	EXPECT_EQ(STATUS_SUCCESS, signal_native(&cs, &m, 12));
	EXPECT_EQ(sizeof(want), NFenceCsSize(&cs));
	EXPECT_TRUE(bytes_are((const BYTE *)buf, want, ARRAY_SIZE(want)));
}

TEST(overflow_is_sticky_and_writes_nothing)
{
	uint64_t buf[8];	/* 64 bytes */
	NFENCE_CS cs;

	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_SUCCESS,
		  NFenceCsFenceSignalUnlogged(&cs, 8, 16, 1));	/* 32 */
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsFenceWaitUnlogged(&cs, 8, 1)); /* 56 */
	/* 8 bytes left: a 24-byte WRITE64 does not fit. */
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsWrite64(&cs, 8, 1));
	EXPECT_EQ(0xC0000023, (uint32_t)STATUS_BUFFER_TOO_SMALL);
	EXPECT_EQ(56u, NFenceCsSize(&cs));
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeull, buf[7]);
	/* A NOP would fit, but the error is sticky. */
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsNop(&cs));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsWork(&cs, 1u << 31));
	EXPECT_EQ(56u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsStatus(&cs));
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeull, buf[7]);

	/* Reset: empty again, usable again. */
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsStatus(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsNop(&cs));
	EXPECT_EQ(8u, NFenceCsSize(&cs));
}

TEST(fills_exactly)
{
	uint64_t buf[6];	/* 48 bytes: two WRITE64 */
	NFENCE_CS cs;

	/* Only whole 8-byte units of the size count. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf) + 7, VA));
	EXPECT_EQ(48u, cs.Capacity);
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, 8, 1));
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWrite64(&cs, 8, 2));
	EXPECT_EQ(48u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsNop(&cs));

	/* An empty buffer holds nothing. */
	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, 7, VA));
	EXPECT_EQ(STATUS_BUFFER_TOO_SMALL, NFenceCsNop(&cs));
}

TEST(invalid_operands_are_sticky)
{
	uint64_t buf[16];
	NFENCE_CS cs;

	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceWaitUnlogged(&cs, 4, 1));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	/* The first error stays, whatever comes next. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(&cs));

	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceSignalUnlogged(&cs, 8, 12, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceSignalUnlogged(&cs, 9, 0, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsWrite64(&cs, 1, 1));
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsTimestamp(&cs, 2));
	NFenceCsReset(&cs);
	/* WORK: at most 60 s. */
	EXPECT_EQ(STATUS_SUCCESS, NFenceCsWork(&cs, 60000000000ull));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsWork(&cs, 60000000001ull));
	EXPECT_EQ(16u, NFenceCsSize(&cs));
}

TEST(init_checks)
{
	uint64_t buf[4];
	NFENCE_CS cs;

	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsInit(NULL, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsInit(&cs, NULL, sizeof(buf), VA));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsInit(&cs, (char *)buf + 4, 16, VA));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsInit(&cs, buf, sizeof(buf), VA + 4));
	/* A failed init cannot be reset into a usable encoder. */
	NFenceCsReset(&cs);
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));

	/* NULL encoders are refused, not dereferenced. */
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(NULL));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsFenceWaitUnlogged(NULL, 3, 0));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsFenceWait(NULL, 8, 0, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsWork(NULL, UINT64_MAX));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(NULL));
	EXPECT_EQ(0u, NFenceCsSize(NULL));
	EXPECT_EQ(0u, NFenceCsGpuVa(NULL));
	NFenceCsReset(NULL);
}

/* A queue handle that names nothing: refused, and sticky. */
TEST(hw_queue_progress_bad_handle_is_sticky)
{
	uint64_t buf[8];
	NFENCE_CS cs;

	ASSERT_EQ(STATUS_SUCCESS, NFenceCsInit(&cs, buf, sizeof(buf), VA));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceCsSignalHwQueueProgress(&cs, 0xc0000040, 1));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsStatus(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceCsNop(&cs));
	EXPECT_EQ(0u, NFenceCsSize(&cs));
}

/*
 * A ring whose doorbell handle names nothing in this process (destroyed,
 * or the parent's in a fork()ed child, whose pages are shared with the
 * parent's) is not set up, and one set up before its doorbell went
 * writes nothing: not the last queued value, the entry, the write index
 * nor the doorbell.
 */
TEST(ring_without_open_doorbell_writes_nothing)
{
	const size_t size = 5 * 4096;
	D3DKMT_CREATE_DOORBELL db = { 0 };
	NFENCE_RING r;
	BYTE *mem, *copy;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	copy = malloc(size);
	ASSERT_NE(NULL, copy);
	memset(mem, 0x5a, size);
	memcpy(copy, mem, size);
	db.hDoorbell = 0xc0000040;
	db.DoorbellCPUVirtualAddress = mem;
	db.DoorbellStatusCPUVirtualAddress = mem + 4096;
	db.HwQueueProgressFenceLastQueuedValueCPUVirtualAddress =
		(UINT64 *)(mem + 8192);
	memset(&r, 0x77, sizeof(r));
	EXPECT_EQ(STATUS_INVALID_PARAMETER,
		  NFenceRingInit(&r, &db, mem + 12288, 4096, mem + 16384));
	EXPECT_EQ(0x77, ((BYTE *)&r)[0]);
	/* What NFenceRingInit() made while the doorbell was open. */
	memset(&r, 0, sizeof(r));
	r.hDoorbell = db.hDoorbell;
	r.pEntries = (NFENCE_RING_ENTRY *)(mem + 12288);
	r.NumEntries = 4096 / sizeof(NFENCE_RING_ENTRY);
	r.pControl = (NFENCE_RING_CONTROL *)(mem + 16384);
	r.pDoorbell = db.DoorbellCPUVirtualAddress;
	r.pStatus = db.DoorbellStatusCPUVirtualAddress;
	r.pLastQueued = db.HwQueueProgressFenceLastQueuedValueCPUVirtualAddress;
	EXPECT_EQ(STATUS_INVALID_PARAMETER, NFenceRingSubmit(&r, VA, 8, 1));
	EXPECT_EQ(0, memcmp(mem, copy, size));
	free(copy);
	munmap(mem, size);
}

TEST_HARNESS_MAIN
