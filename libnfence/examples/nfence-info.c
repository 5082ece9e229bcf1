/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * nfence-info: print every nfence adapter and its capabilities, and create
 * and destroy a device on each, using only the public libnfence API.
 *
 * Exit status: 0 if at least one adapter was found and every call
 * succeeded, 1 otherwise.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nfence/d3dkmthk.h>

static int failures;

/* Report a failed call; returns NT_SUCCESS(st). */
static int check(NTSTATUS st, const char *what)
{
	if (NT_SUCCESS(st))
		return 1;
	fprintf(stderr, "nfence-info: %s failed: NTSTATUS 0x%08" PRIX32 "\n",
		what, (uint32_t)st);
	failures++;
	return 0;
}

static NTSTATUS query(D3DKMT_HANDLE hAdapter, KMTQUERYADAPTERINFOTYPE type,
		      void *data, UINT size)
{
	D3DKMT_QUERYADAPTERINFO q = {
		.hAdapter = hAdapter,
		.Type = type,
		.pPrivateDriverData = data,
		.PrivateDriverDataSize = size,
	};

	return D3DKMTQueryAdapterInfo(&q);
}

static const char *engine_type_name(D3DKMT_NFENCE_ENGINE_TYPE type)
{
	switch (type) {
	case D3DKMT_NFENCE_ENGINE_TYPE_3D:
		return "3d";
	case D3DKMT_NFENCE_ENGINE_TYPE_COMPUTE:
		return "compute";
	case D3DKMT_NFENCE_ENGINE_TYPE_COPY:
		return "copy";
	}
	return "unknown";
}

static const char *doorbell_model_name(D3DKMT_NFENCE_DOORBELL_MODEL model)
{
	switch (model) {
	case D3DKMT_NFENCE_DOORBELL_MODEL_NONE:
		return "none";
	case D3DKMT_NFENCE_DOORBELL_MODEL_DEDICATED:
		return "dedicated";
	case D3DKMT_NFENCE_DOORBELL_MODEL_GLOBAL:
		return "global";
	}
	return "unknown";
}

static void print_segments(D3DKMT_HANDLE hAdapter)
{
	D3DKMT_NFENCE_SEGMENTS head, *segs;
	NTSTATUS st;
	UINT i;

	/* First call: a header-only buffer learns the number of segments. */
	st = query(hAdapter, KMTQAITYPE_NFENCE_SEGMENTS, &head,
		   D3DKMT_NFENCE_SEGMENTS_SIZE(0));
	if (st != STATUS_BUFFER_TOO_SMALL && !check(st, "query segments"))
		return;

	segs = malloc(D3DKMT_NFENCE_SEGMENTS_SIZE(head.NumSegments));
	if (!segs) {
		check(STATUS_NO_MEMORY, "query segments");
		return;
	}
	st = query(hAdapter, KMTQAITYPE_NFENCE_SEGMENTS, segs,
		   D3DKMT_NFENCE_SEGMENTS_SIZE(head.NumSegments));
	if (check(st, "query segments")) {
		printf("  segments: %u\n", segs->NumSegments);
		for (i = 0; i < segs->NumSegments; i++) {
			const D3DKMT_NFENCE_SEGMENT_INFO *s = &segs->Segments[i];

			printf("    segment %u: %s%s, %" PRIu64
			       " MiB, cpu-visible %" PRIu64 " MiB\n",
			       s->SegmentId,
			       s->Flags.Local ? "local" :
			       s->Flags.System ? "system" : "other",
			       s->Flags.CpuVisible ? " cpu-visible" : "",
			       (uint64_t)s->Size >> 20,
			       (uint64_t)s->CpuVisibleSize >> 20);
		}
	}
	free(segs);
}

static void print_engines(D3DKMT_HANDLE hAdapter)
{
	D3DKMT_NFENCE_ENGINES head, *engs;
	NTSTATUS st;
	UINT i;

	st = query(hAdapter, KMTQAITYPE_NFENCE_ENGINES, &head,
		   D3DKMT_NFENCE_ENGINES_SIZE(0));
	if (st != STATUS_BUFFER_TOO_SMALL && !check(st, "query engines"))
		return;

	engs = malloc(D3DKMT_NFENCE_ENGINES_SIZE(head.NumEngines));
	if (!engs) {
		check(STATUS_NO_MEMORY, "query engines");
		return;
	}
	st = query(hAdapter, KMTQAITYPE_NFENCE_ENGINES, engs,
		   D3DKMT_NFENCE_ENGINES_SIZE(head.NumEngines));
	if (check(st, "query engines")) {
		printf("  engines: %u\n", engs->NumEngines);
		for (i = 0; i < engs->NumEngines; i++) {
			const D3DKMT_NFENCE_ENGINE_INFO *e = &engs->Engines[i];

			printf("    node %u: %s%s\n", e->NodeOrdinal,
			       engine_type_name(e->EngineType),
			       e->Flags.UserModeSubmissionSupported ?
			       ", user-mode submission" : "");
		}
	}
	free(engs);
}

static void print_adapter(const D3DKMT_ADAPTERINFO *info)
{
	D3DKMT_HANDLE h = info->hAdapter;
	D3DKMT_WDDM_3_1_CAPS caps31;
	D3DKMT_NFENCE_ADAPTER adapter;
	D3DKMT_NFENCE_NATIVE_FENCE_CAPS fence;
	D3DKMT_NFENCE_USERMODESUBMISSION_CAPS ums;
	D3DKMT_NFENCE_TIMESTAMP ts;

	printf("adapter luid %08" PRIx32 ":%08" PRIx32 "\n",
	       (uint32_t)info->AdapterLuid.HighPart,
	       (uint32_t)info->AdapterLuid.LowPart);

	if (check(query(h, KMTQAITYPE_WDDM_3_1_CAPS, &caps31, sizeof(caps31)),
		  "query WDDM 3.1 caps"))
		printf("  NativeGpuFenceSupported: %u\n",
		       caps31.NativeGpuFenceSupported);

	if (check(query(h, KMTQAITYPE_NFENCE_ADAPTER, &adapter, sizeof(adapter)),
		  "query adapter"))
		printf("  index: %u\n  flags:%s%s%s\n  engines: %u, segments: %u\n"
		       "  timestamp frequency: %" PRIu64 " Hz\n",
		       adapter.AdapterIndex,
		       adapter.Flags.NativeGpuFence ? " native-fence" : "",
		       adapter.Flags.UserModeSubmission ?
		       " user-mode-submission" : "",
		       adapter.Flags.No64BitAtomics ? " no-64bit-atomics" : "",
		       adapter.NumEngines, adapter.NumSegments,
		       (uint64_t)adapter.TimestampFrequency);

	print_segments(h);
	print_engines(h);

	if (check(query(h, KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS, &fence,
			sizeof(fence)), "query native fence caps"))
		printf("  native fences:%s%s%s%s%s\n"
		       "    value stride %u, value bits %u, max log entries %u, log header %u B, log entry %u B\n",
		       fence.Flags.SupportOptimizedDefaultFenceType ?
		       " optimized-default" : "",
		       fence.Flags.SupportIntraGpuFenceType ? " intra-gpu" : "",
		       fence.Flags.SupportCrossAdapterFence ?
		       " cross-adapter" : "",
		       fence.Flags.SupportLogBuffers ? " log-buffers" : "",
		       fence.Flags.SupportPeerSignals ? " peer-signals" : "",
		       fence.ValueStride, fence.ValueBits, fence.MaxLogEntries,
		       fence.LogBufferHeaderSize, fence.LogBufferEntrySize);

	if (check(query(h, KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS, &ums,
			sizeof(ums)), "query user-mode submission caps"))
		printf("  user-mode submission: doorbell %u B, model %s, %u physical doorbells\n",
		       ums.DoorbellSize, doorbell_model_name(ums.DoorbellModel),
		       ums.NumPhysicalDoorbells);

	if (check(query(h, KMTQAITYPE_NFENCE_TIMESTAMP, &ts, sizeof(ts)),
		  "query timestamp"))
		printf("  timestamp: gpu %" PRIu64 " ticks @ %" PRIu64
		       " Hz, cpu monotonic %" PRIu64 " ns\n",
		       (uint64_t)ts.GpuTimestamp, (uint64_t)ts.GpuFrequency,
		       (uint64_t)ts.CpuMonotonicNs);
}

static void create_destroy_device(D3DKMT_HANDLE hAdapter)
{
	D3DKMT_CREATEDEVICE create = { .hAdapter = hAdapter };
	D3DKMT_DESTROYDEVICE destroy;

	if (!check(D3DKMTCreateDevice(&create), "D3DKMTCreateDevice"))
		return;
	printf("  device 0x%08x created", create.hDevice);
	destroy.hDevice = create.hDevice;
	if (check(D3DKMTDestroyDevice(&destroy), "D3DKMTDestroyDevice"))
		printf(" and destroyed\n");
	else
		printf("\n");
}

int main(void)
{
	D3DKMT_ENUMADAPTERS2 enum_args = { 0 };
	D3DKMT_ADAPTERINFO *adapters;
	ULONG i, n;

	if (!check(D3DKMTEnumAdapters2(&enum_args), "D3DKMTEnumAdapters2"))
		return 1;
	if (enum_args.NumAdapters == 0) {
		fprintf(stderr, "nfence-info: no nfence adapter found\n");
		return 1;
	}

	adapters = calloc(enum_args.NumAdapters, sizeof(*adapters));
	if (!adapters) {
		check(STATUS_NO_MEMORY, "allocating the adapter array");
		return 1;
	}
	enum_args.pAdapters = adapters;
	if (!check(D3DKMTEnumAdapters2(&enum_args), "D3DKMTEnumAdapters2")) {
		free(adapters);
		return 1;
	}

	n = enum_args.NumAdapters;
	printf("%lu nfence adapter(s)\n", (unsigned long)n);
	for (i = 0; i < n; i++) {
		D3DKMT_CLOSEADAPTER close_args = {
			.hAdapter = adapters[i].hAdapter,
		};

		print_adapter(&adapters[i]);
		create_destroy_device(adapters[i].hAdapter);
		check(D3DKMTCloseAdapter(&close_args), "D3DKMTCloseAdapter");
	}
	free(adapters);

	if (failures || n == 0)
		return 1;
	return 0;
}
