/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-pipeline-demo: a two-engine GPU pipeline synchronized with native
 * fences, written as an application (or a UMD) would, with only the public
 * libnfence API:
 *
 *  1. a device on the first adapter with native fences and two engines
 *  2. a context on engine 0 and one on engine 1, a hardware queue on each
 *     with a native progress fence
 *  3. per queue a CPU-visible command buffer allocation (Lock2), plus a
 *     data allocation both engines write
 *  4. engine 0: TIMESTAMP, WORK, TIMESTAMP, WRITE64 of a payload, then
 *     FENCE_SIGNAL of native fence A
 *  5. engine 1: FENCE_WAIT for A, TIMESTAMP, WRITE64 of a second payload,
 *     FENCE_SIGNAL of native fence B; submitted first, so that it really
 *     waits on the GPU
 *  6. the CPU waits for B and for both progress fences, then checks the
 *     data through its Lock2 mapping and the order of the timestamps
 *
 * No CPU is involved between the engines: engine 1 is released by engine
 * 0's signal, on the GPU. Exit status: 0 if every step behaved, 1
 * otherwise (also when no adapter qualifies).
 *
 * The fence commands are logged (NFenceCsWaitNativeFence(),
 * NFenceCsSignalNativeFence(): the engines write native fence log entries,
 * which nfence-trace draws) when the queues have log buffers, and unlogged
 * (NFenceCs*Unlogged()) otherwise.
 *
 * Options:
 *   --unlogged        encode the fence commands without log payloads
 *   --logged          the default, accepted for scripts of 0.9
 *   --trace OUT.json  (root) logged, recording nfence's trace events
 *                     meanwhile as nfence-trace record does, and write
 *                     the timeline as trace-event JSON to OUT.json
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nfence/d3dkmthk.h>

#include "nfence-trace-core.h"

#define MS		UINT64_C(1000000)	/* ns */
#define MAX_ADAPTERS	16
#define CMD_SIZE	4096u
#define DATA_SIZE	4096u
#define WORK_NS		(2 * MS)
#define WAIT_NS		(10000 * MS)	/* no step should take this long */

#define PAYLOAD0	UINT64_C(0x600df00d00000000)
#define PAYLOAD1	UINT64_C(0x0000000051de5ee5)

/* Where each engine writes in the data allocation, in UINT64s. */
enum {
	TS0_START,	/* engine 0: before its WORK */
	TS0_DONE,	/* engine 0: after its WORK */
	DATA0,		/* engine 0: PAYLOAD0 */
	TS1,		/* engine 1: once the fence released it */
	DATA1,		/* engine 1: PAYLOAD0 ^ PAYLOAD1 */
	NSLOTS,
};

static int failures;
static int step;
static int logged = 1;	/* not --unlogged: commands with log payloads */

/* Report one step; returns @ok. */
static int check(int ok, const char *what)
{
	step++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", step, what);
	if (!ok)
		failures++;
	return ok;
}

/* A call that must succeed; prints the status otherwise. */
static int expect(NTSTATUS st, const char *what)
{
	if (st != STATUS_SUCCESS)
		fprintf(stderr, "nfence-pipeline-demo: %s: NTSTATUS 0x%08" PRIX32
			"\n", what, (uint32_t)st);
	return check(st == STATUS_SUCCESS, what);
}

static UINT64 read64(const volatile void *p)
{
	return __atomic_load_n((const UINT64 *)p, __ATOMIC_ACQUIRE);
}

/* An engine's queue and its command buffer. */
struct engine {
	UINT node;
	D3DKMT_HANDLE hContext;
	D3DKMT_CREATEHWQUEUE queue;
	D3DKMT_HANDLE hCommands;		/* the command allocation */
	D3DGPU_VIRTUAL_ADDRESS commands_va;
	VOID *commands;				/* its Lock2 mapping */
	NFENCE_CS cs;
};

static NTSTATUS create_allocation(D3DKMT_HANDLE hDevice, UINT64 size,
				  D3DKMT_HANDLE *hAllocation,
				  D3DGPU_VIRTUAL_ADDRESS *va, VOID **cpu)
{
	/* System memory: always CPU-visible. */
	NFENCE_ALLOCATION_DESC desc = {
		.Size = size,
		.SegmentId = NFENCE_SEGMENT_ID_SYSTEM,
	};
	D3DDDI_ALLOCATIONINFO2 info;
	D3DKMT_CREATEALLOCATION ca;
	D3DKMT_LOCK2 lock;
	NTSTATUS st;

	desc.Flags.CpuVisible = 1;
	memset(&info, 0, sizeof(info));
	info.pPrivateDriverData = &desc;
	info.PrivateDriverDataSize = sizeof(desc);
	memset(&ca, 0, sizeof(ca));
	ca.hDevice = hDevice;
	ca.NumAllocations = 1;
	ca.pAllocationInfo2 = &info;
	st = D3DKMTCreateAllocation2(&ca);
	if (st != STATUS_SUCCESS)
		return st;
	*hAllocation = info.hAllocation;
	*va = info.GpuVirtualAddress;

	memset(&lock, 0, sizeof(lock));
	lock.hDevice = hDevice;
	lock.hAllocation = info.hAllocation;
	st = D3DKMTLock2(&lock);
	*cpu = lock.pData;
	return st;
}

static void destroy_allocation(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE h)
{
	D3DKMT_UNLOCK2 u = { .hDevice = hDevice, .hAllocation = h };
	D3DKMT_DESTROYALLOCATION2 d = {
		.hDevice = hDevice,
		.phAllocationList = &h,
		.AllocationCount = 1,
	};

	if (!h)
		return;
	D3DKMTUnlock2(&u);
	expect(D3DKMTDestroyAllocation2(&d), "destroy an allocation");
}

static NTSTATUS setup_engine(D3DKMT_HANDLE hDevice, struct engine *e)
{
	D3DKMT_CREATECONTEXTVIRTUAL cc;
	NTSTATUS st;

	memset(&cc, 0, sizeof(cc));
	cc.hDevice = hDevice;
	cc.NodeOrdinal = e->node;
	cc.ClientHint = D3DKMT_CLIENTHINT_UNKNOWN;
	st = D3DKMTCreateContextVirtual(&cc);
	if (st != STATUS_SUCCESS)
		return st;
	e->hContext = cc.hContext;

	memset(&e->queue, 0, sizeof(e->queue));
	e->queue.hHwContext = e->hContext;
	e->queue.Flags.NativeProgressFence = 1;
	st = D3DKMTCreateHwQueue(&e->queue);
	if (st != STATUS_SUCCESS)
		return st;

	st = create_allocation(hDevice, CMD_SIZE, &e->hCommands,
			       &e->commands_va, &e->commands);
	if (st != STATUS_SUCCESS)
		return st;
	return NFenceCsInit(&e->cs, e->commands, CMD_SIZE, e->commands_va);
}

static NTSTATUS submit(struct engine *e, UINT64 progress)
{
	D3DKMT_SUBMITCOMMANDTOHWQUEUE s;

	memset(&s, 0, sizeof(s));
	s.hHwQueue = e->queue.hHwQueue;
	s.HwQueueProgressFenceId = progress;
	s.CommandBuffer = NFenceCsGpuVa(&e->cs);
	s.CommandLength = NFenceCsSize(&e->cs);
	return D3DKMTSubmitCommandToHwQueue(&s);
}

static NTSTATUS create_fence(D3DKMT_HANDLE hDevice,
			     D3DKMT_CREATENATIVEFENCE *cf)
{
	memset(cf, 0, sizeof(*cf));
	cf->hDevice = hDevice;
	cf->Info.Type = D3DDDI_NATIVEFENCE_TYPE_DEFAULT;
	/* Mapped on every physical adapter; engines are the contexts'. */
	cf->Info.EngineAffinity = 0;
	return D3DKMTCreateNativeFence(cf);
}

/* Wait until every object reaches its value, at most WAIT_NS. */
static NTSTATUS wait_all(D3DKMT_HANDLE hDevice, UINT count,
			 const D3DKMT_HANDLE *objects, const UINT64 *values)
{
	D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = {
		.hDevice = hDevice,
		.ObjectCount = count,
		.ObjectHandleArray = objects,
		.FenceValueArray = values,
	};

	return NFenceWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_NS,
								NULL);
}

/*
 * The first adapter with native fences and at least two engines, or -1;
 * *@info is its description.
 */
static int pick_adapter(const D3DKMT_ADAPTERINFO *adapters, ULONG n,
			D3DKMT_NFENCE_ADAPTER *info)
{
	ULONG i;

	for (i = 0; i < n; i++) {
		D3DKMT_QUERYADAPTERINFO q = {
			.hAdapter = adapters[i].hAdapter,
			.Type = KMTQAITYPE_NFENCE_ADAPTER,
			.pPrivateDriverData = info,
			.PrivateDriverDataSize = sizeof(*info),
		};

		if (D3DKMTQueryAdapterInfo(&q) == STATUS_SUCCESS &&
		    info->Flags.NativeGpuFence && info->NumEngines >= 2)
			return (int)i;
	}
	return -1;
}

/* GPU ticks to microseconds. */
static double ticks_us(UINT64 ticks, UINT64 frequency)
{
	return frequency ? (double)ticks * 1e6 / (double)frequency : 0.0;
}

/* The fence commands: logged unless --unlogged or the queue has no logs. */
static NTSTATUS wait_fence(struct engine *e, D3DKMT_CREATENATIVEFENCE *f,
			   UINT64 value)
{
	if (logged && e->queue.NativeFenceLogBufferNumberOfEntries)
		return NFenceCsWaitNativeFence(&e->cs,
					       &f->Info.NativeFenceMapping,
					       value, f->hSyncObject);
	return NFenceCsWaitNativeFenceUnlogged(&e->cs,
					       &f->Info.NativeFenceMapping,
					       value);
}

static NTSTATUS signal_fence(struct engine *e, D3DKMT_CREATENATIVEFENCE *f,
			     UINT64 value)
{
	if (logged && e->queue.NativeFenceLogBufferNumberOfEntries)
		return NFenceCsSignalNativeFence(&e->cs,
						 &f->Info.NativeFenceMapping,
						 value, f->hSyncObject);
	return NFenceCsSignalNativeFenceUnlogged(&e->cs,
						 &f->Info.NativeFenceMapping,
						 value);
}

static int usage(void)
{
	fprintf(stderr, "usage: nfence-pipeline-demo [--logged | --unlogged] "
		"[--trace OUT.json]\n");
	return 2;
}

int main(int argc, char **argv)
{
	D3DKMT_ADAPTERINFO adapters[MAX_ADAPTERS];
	D3DKMT_ENUMADAPTERS2 ea = { .NumAdapters = MAX_ADAPTERS,
				    .pAdapters = adapters };
	struct engine eng[2] = { { .node = 0 }, { .node = 1 } };
	D3DKMT_CREATENATIVEFENCE fa, fb;
	D3DKMT_NFENCE_ADAPTER info;
	D3DKMT_CREATEDEVICE cd;
	D3DKMT_HANDLE hDevice = 0, hData = 0;
	D3DKMT_HANDLE objects[3];
	D3DGPU_VIRTUAL_ADDRESS data_va = 0;
	volatile UINT64 *data = NULL;
	VOID *data_cpu = NULL;
	UINT64 values[3], slot[NSLOTS];
	const char *trace = NULL;
	struct ntrace_rec rec;
	ULONG i;
	int a, k;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--logged"))
			logged = 1;
		else if (!strcmp(argv[k], "--unlogged"))
			logged = 0;
		else if (!strcmp(argv[k], "--trace") && k + 1 < argc)
			trace = argv[++k];
		else
			return usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (trace) {
		logged = 1;
		if (ntrace_record_start(&rec, NULL, "nfence-pipeline-demo") < 0)
			return 1;
	}
	memset(&fa, 0, sizeof(fa));
	memset(&fb, 0, sizeof(fb));

	/* 1. A device on an adapter with native fences and two engines. */
	if (!expect(D3DKMTEnumAdapters2(&ea), "enumerate adapters")) {
		if (trace)
			ntrace_record_cancel(&rec);
		return 1;
	}
	a = pick_adapter(adapters, ea.NumAdapters, &info);
	if (!check(a >= 0, "an adapter has native fences and two engines"))
		goto close_adapters;
	memset(&cd, 0, sizeof(cd));
	cd.hAdapter = adapters[a].hAdapter;
	if (!expect(D3DKMTCreateDevice(&cd), "create device"))
		goto close_adapters;
	hDevice = cd.hDevice;

	/* 2-3. Contexts, queues, command buffers; the data; two fences. */
	for (k = 0; k < 2; k++) {
		char what[64];

		snprintf(what, sizeof(what),
			 "engine %u: context, queue, command buffer",
			 eng[k].node);
		if (!expect(setup_engine(hDevice, &eng[k]), what))
			goto destroy;
	}
	if (!expect(create_allocation(hDevice, DATA_SIZE, &hData, &data_va,
				      &data_cpu), "data allocation, locked"))
		goto destroy;
	data = data_cpu;
	if (!expect(create_fence(hDevice, &fa), "native fence A") ||
	    !expect(create_fence(hDevice, &fb), "native fence B"))
		goto destroy;
	printf("# data at GPU VA 0x%" PRIx64 ", fence A at 0x%" PRIx64
	       ", fence B at 0x%" PRIx64 "\n", data_va,
	       fa.Info.NativeFenceMapping.CurrentValueGpuVa,
	       fb.Info.NativeFenceMapping.CurrentValueGpuVa);

	/* 5. Engine 1 first: it must wait, on the GPU, for fence A. */
	wait_fence(&eng[1], &fa, 1);
	NFenceCsTimestamp(&eng[1].cs, data_va + 8 * TS1);
	NFenceCsWrite64(&eng[1].cs, data_va + 8 * DATA1, PAYLOAD0 ^ PAYLOAD1);
	signal_fence(&eng[1], &fb, 1);
	if (!expect(NFenceCsStatus(&eng[1].cs), "encode engine 1's commands") ||
	    !expect(submit(&eng[1], 1), "submit to engine 1"))
		goto destroy;
	check(read64(&data[DATA1]) == 0 &&
	      read64(fb.Info.NativeFenceMapping.CurrentValueCpuVa) == 0,
	      "engine 1 waits for fence A");

	/* 4. Engine 0: work, payload, then release engine 1. */
	NFenceCsTimestamp(&eng[0].cs, data_va + 8 * TS0_START);
	NFenceCsWork(&eng[0].cs, WORK_NS);
	NFenceCsTimestamp(&eng[0].cs, data_va + 8 * TS0_DONE);
	NFenceCsWrite64(&eng[0].cs, data_va + 8 * DATA0, PAYLOAD0);
	signal_fence(&eng[0], &fa, 1);
	if (!expect(NFenceCsStatus(&eng[0].cs), "encode engine 0's commands") ||
	    !expect(submit(&eng[0], 1), "submit to engine 0"))
		goto destroy;

	/* 6. The CPU waits for the end of the pipeline and both queues. */
	objects[0] = fb.hSyncObject;
	objects[1] = eng[0].queue.hHwQueueProgressFence;
	objects[2] = eng[1].queue.hHwQueueProgressFence;
	values[0] = values[1] = values[2] = 1;
	if (!expect(wait_all(hDevice, 1, objects, values),
		    "CPU wait for fence B"))
		goto destroy;
	expect(wait_all(hDevice, 2, &objects[1], &values[1]),
	       "CPU wait for both progress fences");
	check(read64(fa.Info.NativeFenceMapping.CurrentValueCpuVa) == 1 &&
	      read64(fb.Info.NativeFenceMapping.CurrentValueCpuVa) == 1,
	      "fences A and B read 1 through their CPU VAs");
	check(read64(eng[0].queue.HwQueueProgressFenceCPUVirtualAddress) == 1 &&
	      read64(eng[1].queue.HwQueueProgressFenceCPUVirtualAddress) == 1,
	      "progress fences read 1 through their CPU VAs");

	for (k = 0; k < NSLOTS; k++)
		slot[k] = read64(&data[k]);
	check(slot[DATA0] == PAYLOAD0, "engine 0's payload reached the CPU");
	check(slot[DATA1] == (PAYLOAD0 ^ PAYLOAD1),
	      "engine 1's payload reached the CPU");
	check(slot[TS0_START] != 0 && slot[TS0_START] <= slot[TS0_DONE] &&
	      slot[TS0_DONE] <= slot[TS1],
	      "timestamps in pipeline order (engine 0, then engine 1)");
	check(ticks_us(slot[TS0_DONE] - slot[TS0_START],
		       info.TimestampFrequency) >= WORK_NS / 1000.0,
	      "engine 0's WORK took its time");
	printf("# engine 0: work %.1f us; engine 1 released %.1f us after "
	       "engine 0's work (GPU clock %" PRIu64 " Hz)\n",
	       ticks_us(slot[TS0_DONE] - slot[TS0_START], info.TimestampFrequency),
	       ticks_us(slot[TS1] - slot[TS0_DONE], info.TimestampFrequency),
	       info.TimestampFrequency);

destroy:
	if (fa.hSyncObject) {
		D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = {
			.hSyncObject = fa.hSyncObject,
		};

		expect(D3DKMTDestroySynchronizationObject(&d),
		       "destroy fence A");
	}
	if (fb.hSyncObject) {
		D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = {
			.hSyncObject = fb.hSyncObject,
		};

		expect(D3DKMTDestroySynchronizationObject(&d),
		       "destroy fence B");
	}
	for (k = 0; k < 2; k++) {
		if (eng[k].queue.hHwQueue) {
			D3DKMT_DESTROYHWQUEUE d = {
				.hHwQueue = eng[k].queue.hHwQueue,
			};

			expect(D3DKMTDestroyHwQueue(&d), "destroy a queue");
		}
		if (eng[k].hContext) {
			D3DKMT_DESTROYCONTEXT d = {
				.hContext = eng[k].hContext,
			};

			expect(D3DKMTDestroyContext(&d), "destroy a context");
		}
		destroy_allocation(hDevice, eng[k].hCommands);
	}
	destroy_allocation(hDevice, hData);
	if (hDevice) {
		D3DKMT_DESTROYDEVICE dd = { .hDevice = hDevice };

		expect(D3DKMTDestroyDevice(&dd), "destroy device");
	}
close_adapters:
	for (i = 0; i < ea.NumAdapters; i++) {
		D3DKMT_CLOSEADAPTER ca = { .hAdapter = adapters[i].hAdapter };

		D3DKMTCloseAdapter(&ca);
	}
	if (trace) {
		struct ntrace_stats st;
		char what[64 + PATH_MAX];
		int ok;

		ok = ntrace_record_convert(&rec, NULL, trace,
					   "nfence-pipeline-demo", &st) == 0;
		snprintf(what, sizeof(what), "timeline written to %s", trace);
		if (check(ok, what))
			printf("# trace: %u tracks, %lu slices, %lu flows\n",
			       st.tracks, st.slices, st.flows);
	}
	printf("nfence-pipeline-demo: %d steps, %d failed\n", step, failures);
	return failures ? 1 : 0;
}
