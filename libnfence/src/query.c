/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * D3DKMTQueryAdapterInfo: each KMTQUERYADAPTERINFOTYPE maps to one
 * DRM_IOCTL_NFENCE_QUERY type, whose answer is translated field by field
 * into the public struct.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* How each query type is sized and which kernel query answers it. */
struct nf_qai_desc {
	KMTQUERYADAPTERINFOTYPE type;
	uint32_t kquery;	/* enum drm_nfence_query_type */
	size_t size;		/* fixed size, or the header of an array */
	size_t entry_size;	/* 0 for fixed-size types */
};

static const struct nf_qai_desc nf_qai_descs[] = {
	{ KMTQAITYPE_WDDM_3_1_CAPS, DRM_NFENCE_QUERY_ADAPTER,
	  sizeof(D3DKMT_WDDM_3_1_CAPS), 0 },
	{ KMTQAITYPE_NFENCE_ADAPTER, DRM_NFENCE_QUERY_ADAPTER,
	  sizeof(D3DKMT_NFENCE_ADAPTER), 0 },
	{ KMTQAITYPE_NFENCE_SEGMENTS, DRM_NFENCE_QUERY_SEGMENTS,
	  D3DKMT_NFENCE_SEGMENTS_SIZE(0), sizeof(D3DKMT_NFENCE_SEGMENT_INFO) },
	{ KMTQAITYPE_NFENCE_ENGINES, DRM_NFENCE_QUERY_ENGINES,
	  D3DKMT_NFENCE_ENGINES_SIZE(0), sizeof(D3DKMT_NFENCE_ENGINE_INFO) },
	{ KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS, DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS,
	  sizeof(D3DKMT_NFENCE_NATIVE_FENCE_CAPS), 0 },
	{ KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS, DRM_NFENCE_QUERY_UMS_CAPS,
	  sizeof(D3DKMT_NFENCE_USERMODESUBMISSION_CAPS), 0 },
	{ KMTQAITYPE_NFENCE_TIMESTAMP, DRM_NFENCE_QUERY_TIMESTAMP,
	  sizeof(D3DKMT_NFENCE_TIMESTAMP), 0 },
};

static const struct nf_qai_desc *nf_qai_find(KMTQUERYADAPTERINFOTYPE type)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nf_qai_descs); i++)
		if (nf_qai_descs[i].type == type)
			return &nf_qai_descs[i];
	return NULL;
}

/* Fixed-size answers: @k is the zero-extended kernel struct. */
static void nf_fill_fixed(KMTQUERYADAPTERINFOTYPE type, const void *k,
			  const struct nf_adapter *adapter, void *out)
{
	switch (type) {
	case KMTQAITYPE_WDDM_3_1_CAPS: {
		const struct drm_nfence_query_adapter *ka = k;
		D3DKMT_WDDM_3_1_CAPS *caps = out;

		caps->Value = 0;
		caps->NativeGpuFenceSupported =
			!!(ka->flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE);
		break;
	}
	case KMTQAITYPE_NFENCE_ADAPTER: {
		const struct drm_nfence_query_adapter *ka = k;
		D3DKMT_NFENCE_ADAPTER *a = out;

		a->AdapterLuid.LowPart = ka->luid_low;
		a->AdapterLuid.HighPart = (LONG)ka->luid_high;
		a->AdapterIndex = ka->index;
		a->Flags.Value = 0;
		a->Flags.NativeGpuFence =
			!!(ka->flags & DRM_NFENCE_ADAPTER_NATIVE_FENCE);
		a->Flags.UserModeSubmission =
			!!(ka->flags & DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION);
		a->Flags.No64BitAtomics =
			!!(ka->flags & DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS);
		a->NumEngines = ka->num_engines;
		a->NumSegments = ka->num_segments;
		a->TimestampFrequency = ka->timestamp_frequency;
		break;
	}
	case KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS: {
		const struct drm_nfence_query_fence_caps *kc = k;
		D3DKMT_NFENCE_NATIVE_FENCE_CAPS *c = out;

		c->Flags.Value = 0;
		c->Flags.SupportOptimizedDefaultFenceType =
			!!(kc->flags & DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT);
		c->Flags.SupportIntraGpuFenceType =
			!!(kc->flags & DRM_NFENCE_FENCE_CAP_INTRA_GPU);
		c->Flags.SupportCrossAdapterFence =
			!!(kc->flags & DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER);
		c->Flags.SupportLogBuffers =
			!!(kc->flags & DRM_NFENCE_FENCE_CAP_LOG_BUFFERS);
		c->ValueStride = kc->value_stride;
		c->ValueBits = kc->value_bits;
		c->MaxLogEntries = kc->max_log_entries;
		c->LogBufferHeaderSize = kc->log_header_size;
		c->LogBufferEntrySize = kc->log_entry_size;
		break;
	}
	case KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS: {
		const struct drm_nfence_query_ums_caps *ku = k;
		D3DKMT_NFENCE_USERMODESUBMISSION_CAPS *u = out;

		u->DoorbellSize = ku->doorbell_size;
		u->DoorbellModel = (D3DKMT_NFENCE_DOORBELL_MODEL)ku->doorbell_model;
		u->NumPhysicalDoorbells = ku->num_doorbells;
		u->Reserved = 0;
		break;
	}
	case KMTQAITYPE_NFENCE_TIMESTAMP: {
		const struct drm_nfence_query_timestamp *kt = k;
		D3DKMT_NFENCE_TIMESTAMP *t = out;

		t->GpuTimestamp = kt->gpu_timestamp;
		t->CpuMonotonicNs = kt->cpu_monotonic_ns;
		t->GpuFrequency = adapter->info.timestamp_frequency;
		break;
	}
	default:
		break;
	}
}

/* The largest fixed-size kernel answer. */
union nf_kfixed {
	struct drm_nfence_query_adapter adapter;
	struct drm_nfence_query_fence_caps fence_caps;
	struct drm_nfence_query_ums_caps ums_caps;
	struct drm_nfence_query_timestamp timestamp;
};

static NTSTATUS nf_query_fixed_type(const struct nf_qai_desc *d,
				    const struct nf_adapter *adapter, void *out)
{
	union nf_kfixed k;
	NTSTATUS st;

	st = nf_query_fixed(adapter->fd, d->kquery, &k, sizeof(k));
	if (NT_SUCCESS(st)) {
		memset(out, 0, d->size);
		nf_fill_fixed(d->type, &k, adapter, out);
	}
	return st;
}

static void nf_fill_segment(D3DKMT_NFENCE_SEGMENT_INFO *s,
			    const struct drm_nfence_segment_info *ks)
{
	s->SegmentId = ks->id;
	s->Flags.Value = 0;
	s->Flags.Local = !!(ks->flags & DRM_NFENCE_SEGMENT_LOCAL);
	s->Flags.System = !!(ks->flags & DRM_NFENCE_SEGMENT_SYSTEM);
	s->Flags.CpuVisible = !!(ks->flags & DRM_NFENCE_SEGMENT_CPU_VISIBLE);
	s->Size = ks->size;
	s->CpuVisibleSize = ks->cpu_visible_size;
}

static void nf_fill_engine(D3DKMT_NFENCE_ENGINE_INFO *e,
			   const struct drm_nfence_engine_info *ke)
{
	e->NodeOrdinal = ke->ordinal;
	e->EngineType = (D3DKMT_NFENCE_ENGINE_TYPE)ke->engine_class;
	e->Flags.Value = 0;
	e->Flags.UserModeSubmissionSupported =
		!!(ke->flags & DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION);
	e->Reserved = 0;
}

/*
 * Array answers: both kernel arrays start with a __u32 count and a __u32
 * pad, as both public ones do.
 */
_Static_assert(offsetof(struct drm_nfence_query_segments, segments) == 8 &&
	       offsetof(struct drm_nfence_query_engines, engines) == 8,
	       "kernel array header");
_Static_assert(offsetof(D3DKMT_NFENCE_SEGMENTS, Segments) == 8 &&
	       offsetof(D3DKMT_NFENCE_ENGINES, Engines) == 8,
	       "public array header");

static NTSTATUS nf_query_array_type(const struct nf_qai_desc *d,
				    const struct nf_adapter *adapter,
				    void *out, UINT out_size)
{
	size_t kentry, khdr = sizeof(struct drm_nfence_query_segments);
	uint32_t ksize, count, i;
	UINT capacity;
	NTSTATUS st;
	void *k;

	kentry = d->kquery == DRM_NFENCE_QUERY_SEGMENTS ?
		 sizeof(struct drm_nfence_segment_info) :
		 sizeof(struct drm_nfence_engine_info);

	st = nf_query(adapter->fd, d->kquery, &k, &ksize);
	if (!NT_SUCCESS(st))
		return st;
	if (ksize < khdr) {
		free(k);
		return STATUS_UNSUCCESSFUL;
	}
	count = *(const uint32_t *)k;
	if (count > (ksize - khdr) / kentry) {
		/* The kernel's answer does not hold the entries it counts. */
		free(k);
		return STATUS_UNSUCCESSFUL;
	}

	/* Both public arrays: UINT count, UINT Reserved, entries. */
	capacity = (UINT)((out_size - d->size) / d->entry_size);
	((UINT *)out)[0] = count;
	((UINT *)out)[1] = 0;
	if (capacity < count) {
		free(k);
		return STATUS_BUFFER_TOO_SMALL;
	}

	for (i = 0; i < count; i++) {
		const char *ke = (const char *)k + khdr + i * kentry;

		if (d->kquery == DRM_NFENCE_QUERY_SEGMENTS)
			nf_fill_segment(&((D3DKMT_NFENCE_SEGMENTS *)out)->Segments[i],
					(const void *)ke);
		else
			nf_fill_engine(&((D3DKMT_NFENCE_ENGINES *)out)->Engines[i],
				       (const void *)ke);
	}
	free(k);
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTQueryAdapterInfo(const D3DKMT_QUERYADAPTERINFO *pQueryAdapterInfo)
{
	const D3DKMT_QUERYADAPTERINFO *q = pQueryAdapterInfo;
	const struct nf_qai_desc *d;
	struct nf_adapter *adapter;
	NTSTATUS st;

	if (!q || !q->pPrivateDriverData)
		return STATUS_INVALID_PARAMETER;
	d = nf_qai_find(q->Type);
	if (!d)
		return STATUS_INVALID_PARAMETER;
	if (d->entry_size ? q->PrivateDriverDataSize < d->size :
			    q->PrivateDriverDataSize != d->size)
		return STATUS_INVALID_PARAMETER;

	adapter = nf_adapter_lookup(q->hAdapter);
	if (!adapter)
		return STATUS_INVALID_HANDLE;

	if (d->entry_size)
		st = nf_query_array_type(d, adapter, q->pPrivateDriverData,
					 q->PrivateDriverDataSize);
	else
		st = nf_query_fixed_type(d, adapter, q->pPrivateDriverData);

	nf_adapter_put(adapter);
	return st;
}
