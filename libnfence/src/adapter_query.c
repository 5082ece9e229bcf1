/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * D3DKMTQueryAdapterInfo: nfence's own types and WDDM_3_1_CAPS map to one
 * DRM_IOCTL_NFENCE_QUERY type each, whose answer is translated field by
 * field into the public struct. The other Windows types (the queries a
 * runtime makes at startup) are answered here, from what the kernel
 * already reports (the adapter info read at open, the segment and engine
 * queries, the DRM version) and from what every nfence adapter is.
 *
 * D3DKMTQueryClockCalibration: DRM_NFENCE_QUERY_TIMESTAMP's pair, with the
 * frequency read at open.
 *
 * D3DKMTQueryVideoMemoryInfo: DRM_NFENCE_QUERY_SEGMENT_USAGE's budgets and
 * usage of the adapter file, summed over the segments of the group, which
 * the segment query's flags give as KMTQAITYPE_GETSEGMENTSIZE reads them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "adapter.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The Windows structs' layouts are pinned by the host tests
 * (tests/windows_layouts.h, against ../shared/spec/WINDOWS-LAYOUTS.md).
 */

/* An answer computed here; checks its input fields before writing. */
typedef NTSTATUS nf_answer_fn(struct nf_adapter *adapter, void *data);

/* How each query type is sized and which kernel query answers it. */
struct nf_qai_desc {
	KMTQUERYADAPTERINFOTYPE type;
	uint32_t kquery;	/* enum drm_nfence_query_type */
	size_t size;		/* fixed size, or the header of an array */
	size_t entry_size;	/* 0 for fixed-size types */
	nf_answer_fn *answer;	/* answered here (kquery unused), or NULL */
};

static nf_answer_fn nf_answer_segment_size, nf_answer_adapter_type,
	nf_answer_node_metadata, nf_answer_physical_count,
	nf_answer_device_ids, nf_answer_guid, nf_answer_description,
	nf_answer_wddm_2_7, nf_answer_wddm_2_9, nf_answer_wddm_3_0;

#define NF_COMPUTED(t, type, fn)	{ (t), 0, sizeof(type), 0, (fn) }

static const struct nf_qai_desc nf_qai_descs[] = {
	NF_COMPUTED(KMTQAITYPE_GETSEGMENTSIZE, D3DKMT_SEGMENTSIZEINFO,
		    nf_answer_segment_size),
	NF_COMPUTED(KMTQAITYPE_ADAPTERTYPE, D3DKMT_ADAPTERTYPE,
		    nf_answer_adapter_type),
	NF_COMPUTED(KMTQAITYPE_NODEMETADATA, D3DKMT_NODEMETADATA,
		    nf_answer_node_metadata),
	NF_COMPUTED(KMTQAITYPE_PHYSICALADAPTERCOUNT,
		    D3DKMT_PHYSICAL_ADAPTER_COUNT, nf_answer_physical_count),
	NF_COMPUTED(KMTQAITYPE_PHYSICALADAPTERDEVICEIDS,
		    D3DKMT_QUERY_DEVICE_IDS, nf_answer_device_ids),
	NF_COMPUTED(KMTQAITYPE_ADAPTERTYPE_RENDER, D3DKMT_ADAPTERTYPE,
		    nf_answer_adapter_type),
	NF_COMPUTED(KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, GUID,
		    nf_answer_guid),
	NF_COMPUTED(KMTQAITYPE_DRIVER_DESCRIPTION, D3DKMT_DRIVER_DESCRIPTION,
		    nf_answer_description),
	NF_COMPUTED(KMTQAITYPE_DRIVER_DESCRIPTION_RENDER,
		    D3DKMT_DRIVER_DESCRIPTION, nf_answer_description),
	NF_COMPUTED(KMTQAITYPE_WDDM_2_7_CAPS, D3DKMT_WDDM_2_7_CAPS,
		    nf_answer_wddm_2_7),
	NF_COMPUTED(KMTQAITYPE_WDDM_2_9_CAPS, D3DKMT_WDDM_2_9_CAPS,
		    nf_answer_wddm_2_9),
	NF_COMPUTED(KMTQAITYPE_WDDM_3_0_CAPS, D3DKMT_WDDM_3_0_CAPS,
		    nf_answer_wddm_3_0),
	{ KMTQAITYPE_WDDM_3_1_CAPS, DRM_NFENCE_QUERY_ADAPTER,
	  sizeof(D3DKMT_WDDM_3_1_CAPS), 0, NULL },
	{ KMTQAITYPE_NFENCE_ADAPTER, DRM_NFENCE_QUERY_ADAPTER,
	  sizeof(D3DKMT_NFENCE_ADAPTER), 0, NULL },
	{ KMTQAITYPE_NFENCE_SEGMENTS, DRM_NFENCE_QUERY_SEGMENTS,
	  D3DKMT_NFENCE_SEGMENTS_SIZE(0), sizeof(D3DKMT_NFENCE_SEGMENT_INFO),
	  NULL },
	{ KMTQAITYPE_NFENCE_ENGINES, DRM_NFENCE_QUERY_ENGINES,
	  D3DKMT_NFENCE_ENGINES_SIZE(0), sizeof(D3DKMT_NFENCE_ENGINE_INFO),
	  NULL },
	{ KMTQAITYPE_NFENCE_NATIVE_FENCE_CAPS, DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS,
	  sizeof(D3DKMT_NFENCE_NATIVE_FENCE_CAPS), 0, NULL },
	{ KMTQAITYPE_NFENCE_USERMODESUBMISSION_CAPS, DRM_NFENCE_QUERY_UMS_CAPS,
	  sizeof(D3DKMT_NFENCE_USERMODESUBMISSION_CAPS), 0, NULL },
	{ KMTQAITYPE_NFENCE_TIMESTAMP, DRM_NFENCE_QUERY_TIMESTAMP,
	  sizeof(D3DKMT_NFENCE_TIMESTAMP), 0, NULL },
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
		c->Flags.SupportPeerSignals =
			!!(kc->flags & DRM_NFENCE_FENCE_CAP_PEER_SIGNALS);
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

/*
 * nf_kquery_array() - the kernel's segment or engine array: on success *@k
 * is the malloc()ed answer (the caller frees it), *@count its entries, each
 * @kentry bytes after the 8-byte header.
 */
static NTSTATUS nf_kquery_array(const struct nf_adapter *adapter,
				uint32_t kquery, size_t kentry, void **k,
				uint32_t *count)
{
	size_t khdr = sizeof(struct drm_nfence_query_segments);
	uint32_t ksize;
	NTSTATUS st;

	st = nf_query(adapter->fd, kquery, k, &ksize);
	if (!NT_SUCCESS(st))
		return st;
	if (ksize < khdr) {
		free(*k);
		return STATUS_UNSUCCESSFUL;
	}
	*count = *(const uint32_t *)*k;
	if (*count > (ksize - khdr) / kentry) {
		/* The kernel's answer does not hold the entries it counts. */
		free(*k);
		return STATUS_UNSUCCESSFUL;
	}
	return STATUS_SUCCESS;
}

static NTSTATUS nf_query_array_type(const struct nf_qai_desc *d,
				    const struct nf_adapter *adapter,
				    void *out, UINT out_size)
{
	size_t kentry, khdr = sizeof(struct drm_nfence_query_segments);
	uint32_t count, i;
	UINT capacity;
	NTSTATUS st;
	void *k;

	kentry = d->kquery == DRM_NFENCE_QUERY_SEGMENTS ?
		 sizeof(struct drm_nfence_segment_info) :
		 sizeof(struct drm_nfence_engine_info);

	st = nf_kquery_array(adapter, d->kquery, kentry, &k, &count);
	if (!NT_SUCCESS(st))
		return st;

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

/* ---- the Windows startup queries, answered here ---------------------- */

/* Local segments are dedicated video memory, system segments shared. */
static NTSTATUS nf_answer_segment_size(struct nf_adapter *adapter, void *data)
{
	const struct drm_nfence_segment_info *ks;
	D3DKMT_SEGMENTSIZEINFO info = { 0, 0, 0 };
	uint32_t count, i;
	NTSTATUS st;
	void *k;

	st = nf_kquery_array(adapter, DRM_NFENCE_QUERY_SEGMENTS, sizeof(*ks),
			     &k, &count);
	if (!NT_SUCCESS(st))
		return st;
	ks = (const struct drm_nfence_segment_info *)
	     ((const char *)k + sizeof(struct drm_nfence_query_segments));
	for (i = 0; i < count; i++) {
		if (ks[i].flags & DRM_NFENCE_SEGMENT_LOCAL)
			info.DedicatedVideoMemorySize += ks[i].size;
		else if (ks[i].flags & DRM_NFENCE_SEGMENT_SYSTEM)
			info.SharedSystemMemorySize += ks[i].size;
	}
	free(k);
	memcpy(data, &info, sizeof(info));
	return STATUS_SUCCESS;
}

/* A software render (and compute) adapter with no display. */
static NTSTATUS nf_answer_adapter_type(struct nf_adapter *adapter, void *data)
{
	D3DKMT_ADAPTERTYPE *t = data;

	(void)adapter;
	t->Value = 0;
	t->RenderSupported = 1;
	t->SoftwareDevice = 1;
	return STATUS_SUCCESS;
}

/* The FriendlyName stem of each drm_nfence_engine_class. */
static const char *const nf_engine_names[] = {
	[DRM_NFENCE_ENGINE_CLASS_3D] = "3D",
	[DRM_NFENCE_ENGINE_CLASS_COMPUTE] = "Compute",
	[DRM_NFENCE_ENGINE_CLASS_COPY] = "Copy",
};

static DXGK_ENGINE_TYPE nf_engine_type(uint32_t engine_class)
{
	switch (engine_class) {
	case DRM_NFENCE_ENGINE_CLASS_3D:
		return DXGK_ENGINE_TYPE_3D;
	case DRM_NFENCE_ENGINE_CLASS_COPY:
		return DXGK_ENGINE_TYPE_COPY;
	default:
		/* Compute: the Windows list has no compute type. */
		return DXGK_ENGINE_TYPE_OTHER;
	}
}

/* @dst (@n WCHARs, zeroed first) gets @src, widened and NUL-terminated. */
static void nf_widen(WCHAR *dst, size_t n, const char *src)
{
	size_t i;

	memset(dst, 0, n * sizeof(*dst));
	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = (WCHAR)(unsigned char)src[i];
}

/*
 * One engine: its DXGK_ENGINE_TYPE and "<class>_<n>", n counting the
 * engines of its class from 0 in node ordinal order; UserModeSubmission
 * if the kernel says the engine takes it.
 */
static NTSTATUS nf_answer_node_metadata(struct nf_adapter *adapter, void *data)
{
	D3DKMT_NODEMETADATA *m = data;
	const struct drm_nfence_engine_info *ke, *e = NULL;
	UINT in = m->NodeOrdinalAndAdapterIndex;
	uint32_t ordinal = in & 0xffff, count, i, nth = 0;
	WCHAR wname[DXGK_MAX_METADATA_NAME_LENGTH];
	char name[DXGK_MAX_METADATA_NAME_LENGTH];
	DXGK_NODEMETADATA_FLAGS flags;
	DXGK_NODEMETADATA node;
	NTSTATUS st;
	void *k;

	if (in >> 16)	/* physical adapter index: one physical adapter */
		return STATUS_INVALID_PARAMETER;
	st = nf_kquery_array(adapter, DRM_NFENCE_QUERY_ENGINES, sizeof(*ke),
			     &k, &count);
	if (!NT_SUCCESS(st))
		return st;
	ke = (const struct drm_nfence_engine_info *)
	     ((const char *)k + sizeof(struct drm_nfence_query_engines));
	for (i = 0; i < count; i++)
		if (ke[i].ordinal == ordinal)
			e = &ke[i];
	if (!e) {
		free(k);
		return STATUS_INVALID_PARAMETER;
	}
	for (i = 0; i < count; i++)
		if (ke[i].engine_class == e->engine_class &&
		    ke[i].ordinal < ordinal)
			nth++;
	snprintf(name, sizeof(name), "%s_%u",
		 e->engine_class < ARRAY_SIZE(nf_engine_names) ?
		 nf_engine_names[e->engine_class] : "Engine", nth);

	/* Byte-packed: the name and flags are built aligned, then copied. */
	nf_widen(wname, DXGK_MAX_METADATA_NAME_LENGTH, name);
	flags.Value = 0;
	flags.UserModeSubmission =
		!!(e->flags & DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION);
	memset(&node, 0, sizeof(node));
	node.EngineType = nf_engine_type(e->engine_class);
	memcpy(node.FriendlyName, wname, sizeof(wname));
	node.Flags = flags;
	node.GpuMmuSupported = TRUE;
	node.IoMmuSupported = FALSE;
	free(k);
	memcpy(&m->NodeData, &node, sizeof(node));
	return STATUS_SUCCESS;
}

static NTSTATUS nf_answer_physical_count(struct nf_adapter *adapter,
					 void *data)
{
	D3DKMT_PHYSICAL_ADAPTER_COUNT *c = data;

	(void)adapter;
	c->Count = 1;
	return STATUS_SUCCESS;
}

static NTSTATUS nf_answer_device_ids(struct nf_adapter *adapter, void *data)
{
	D3DKMT_QUERY_DEVICE_IDS *q = data;

	(void)adapter;
	if (q->PhysicalAdapterIndex != 0)
		return STATUS_INVALID_PARAMETER;
	memset(&q->DeviceIds, 0, sizeof(q->DeviceIds));
	q->DeviceIds.VendorID = D3DKMT_NFENCE_VENDOR_ID;
	q->DeviceIds.DeviceID = D3DKMT_NFENCE_DEVICE_ID;
	return STATUS_SUCCESS;
}

/* The rule of d3dkmthk.h (KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID). */
static NTSTATUS nf_answer_guid(struct nf_adapter *adapter, void *data)
{
	uint32_t high = adapter->info.luid_high;
	GUID g;

	g.Data1 = adapter->info.luid_low;
	g.Data2 = 0x4E46;
	g.Data3 = (uint16_t)(0x8000 | (adapter->info.index & 0xfff));
	g.Data4[0] = 0x80;
	g.Data4[1] = 0;
	g.Data4[2] = 0;
	g.Data4[3] = 0;
	g.Data4[4] = (uint8_t)(high >> 24);
	g.Data4[5] = (uint8_t)(high >> 16);
	g.Data4[6] = (uint8_t)(high >> 8);
	g.Data4[7] = (uint8_t)high;
	memcpy(data, &g, sizeof(g));
	return STATUS_SUCCESS;
}

/* "nfence <major>.<minor>.<patchlevel> (<desc>)", from the DRM version. */
static NTSTATUS nf_answer_description(struct nf_adapter *adapter, void *data)
{
	D3DKMT_DRIVER_DESCRIPTION *d = data;
	char text[ARRAY_SIZE(d->DriverDescription)];
	drmVersionPtr v;

	errno = 0;
	v = drmGetVersion(adapter->fd);
	if (!v)
		return errno ? NFenceStatusFromErrno(errno) : STATUS_NO_MEMORY;
	snprintf(text, sizeof(text), "nfence %d.%d.%d (%.*s)",
		 v->version_major, v->version_minor, v->version_patchlevel,
		 v->desc ? v->desc_len : 0, v->desc ? v->desc : "");
	drmFreeVersion(v);
	nf_widen(d->DriverDescription, ARRAY_SIZE(d->DriverDescription), text);
	return STATUS_SUCCESS;
}

/* The CMP schedules every hardware queue; there is no other scheduler. */
static NTSTATUS nf_answer_wddm_2_7(struct nf_adapter *adapter, void *data)
{
	D3DKMT_WDDM_2_7_CAPS *c = data;

	(void)adapter;
	c->Value = 0;
	c->HwSchSupported = 1;
	c->HwSchEnabled = 1;
	c->HwSchEnabledByDefault = 1;
	return STATUS_SUCCESS;
}

static NTSTATUS nf_answer_wddm_2_9(struct nf_adapter *adapter, void *data)
{
	D3DKMT_WDDM_2_9_CAPS *c = data;

	(void)adapter;
	c->Value = 0;
	c->HwSchSupportState = DXGK_FEATURE_SUPPORT_ALWAYS_ON;
	c->HwSchEnabled = 1;
	return STATUS_SUCCESS;
}

/* No display, so no flip queue. */
static NTSTATUS nf_answer_wddm_3_0(struct nf_adapter *adapter, void *data)
{
	D3DKMT_WDDM_3_0_CAPS *c = data;

	(void)adapter;
	c->Value = 0;
	c->HwFlipQueueSupportState = DXGK_FEATURE_SUPPORT_ALWAYS_OFF;
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
		return NF_STATUS_BAD_HANDLE;

	if (d->answer)
		st = d->answer(adapter, q->pPrivateDriverData);
	else if (d->entry_size)
		st = nf_query_array_type(d, adapter, q->pPrivateDriverData,
					 q->PrivateDriverDataSize);
	else
		st = nf_query_fixed_type(d, adapter, q->pPrivateDriverData);

	nf_adapter_put(adapter);
	return st;
}

NTSTATUS D3DKMTQueryClockCalibration(D3DKMT_QUERYCLOCKCALIBRATION *pClockCalibration)
{
	D3DKMT_QUERYCLOCKCALIBRATION *q = pClockCalibration;
	struct drm_nfence_query_timestamp kt;
	struct nf_adapter *adapter;
	DXGK_GPUCLOCKDATA clock;
	NTSTATUS st;

	if (!q)
		return STATUS_INVALID_PARAMETER;
	/* One physical adapter per nfence adapter. */
	if (q->PhysicalAdapterIndex != 0)
		return STATUS_INVALID_PARAMETER;

	adapter = nf_adapter_lookup(q->hAdapter);
	if (!adapter)
		return NF_STATUS_BAD_HANDLE;
	if (q->NodeOrdinal >= adapter->info.num_engines) {
		nf_adapter_put(adapter);
		return STATUS_INVALID_PARAMETER;
	}

	/* Every engine shares the GPU's one timestamp clock. */
	st = nf_query_fixed(adapter->fd, DRM_NFENCE_QUERY_TIMESTAMP, &kt,
			    sizeof(kt));
	if (NT_SUCCESS(st)) {
		memset(&clock, 0, sizeof(clock));
		clock.GpuFrequency = adapter->info.timestamp_frequency;
		clock.GpuClockCounter = kt.gpu_timestamp;
		clock.CpuClockCounter = kt.cpu_monotonic_ns;
		/* The kernel read the pair on the CPU, not the CMP. */
		clock.Flags.Value = 0;
		q->ClockData = clock;
	}
	nf_adapter_put(adapter);
	return st;
}

/* The DRM_NFENCE_SEGMENT_* flag of a segment group's segments, or 0. */
static uint32_t nf_segment_group_flag(D3DKMT_MEMORY_SEGMENT_GROUP group)
{
	switch (group) {
	case D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL:
		return DRM_NFENCE_SEGMENT_LOCAL;
	case D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL:
		return DRM_NFENCE_SEGMENT_SYSTEM;
	}
	return 0;
}

/*
 * Sum the budget and usage of the segments with @flag into @q; the two
 * kernel answers must name the same segments.
 */
static NTSTATUS nf_sum_segment_usage(const struct nf_adapter *adapter,
				     uint32_t flag,
				     D3DKMT_QUERYVIDEOMEMORYINFO *q)
{
	const struct drm_nfence_segment_usage *ku;
	const struct drm_nfence_segment_info *ks;
	uint64_t budget = 0, usage = 0;
	uint32_t ucount, scount, i, j;
	void *kseg, *kuse;
	NTSTATUS st;

	st = nf_kquery_array(adapter, DRM_NFENCE_QUERY_SEGMENT_USAGE,
			     sizeof(*ku), &kuse, &ucount);
	if (st == STATUS_INVALID_PARAMETER)
		return STATUS_NOT_SUPPORTED;	/* a driver without the type */
	if (!NT_SUCCESS(st))
		return st;
	st = nf_kquery_array(adapter, DRM_NFENCE_QUERY_SEGMENTS, sizeof(*ks),
			     &kseg, &scount);
	if (!NT_SUCCESS(st)) {
		free(kuse);
		return st;
	}
	ku = (const struct drm_nfence_segment_usage *)
	     ((const char *)kuse + sizeof(struct drm_nfence_query_segment_usage));
	ks = (const struct drm_nfence_segment_info *)
	     ((const char *)kseg + sizeof(struct drm_nfence_query_segments));
	if (ucount != scount)
		st = STATUS_UNSUCCESSFUL;
	for (i = 0; NT_SUCCESS(st) && i < ucount; i++) {
		for (j = 0; j < scount && ks[j].id != ku[i].id; j++)
			;
		if (j == scount) {
			st = STATUS_UNSUCCESSFUL;
		} else if (ks[j].flags & flag) {
			budget += ku[i].budget;
			usage += ku[i].usage;
		}
	}
	free(kseg);
	free(kuse);
	if (!NT_SUCCESS(st))
		return st;
	q->Budget = budget;
	q->CurrentUsage = usage;
	/* nfence has no reservations (D3DKMTChangeVideoMemoryReservation). */
	q->CurrentReservation = 0;
	q->AvailableForReservation = 0;
	return STATUS_SUCCESS;
}

NTSTATUS D3DKMTQueryVideoMemoryInfo(D3DKMT_QUERYVIDEOMEMORYINFO *pData)
{
	D3DKMT_QUERYVIDEOMEMORYINFO *q = pData;
	struct nf_adapter *adapter;
	uint32_t flag;
	NTSTATUS st;

	if (!q)
		return STATUS_INVALID_PARAMETER;
	/* As WSL's driver: only the calling process, named by NULL. */
	if (q->hProcess)
		return STATUS_INVALID_PARAMETER;
	/* One physical adapter per nfence adapter. */
	if (q->PhysicalAdapterIndex != 0)
		return STATUS_INVALID_PARAMETER;
	flag = nf_segment_group_flag(q->MemorySegmentGroup);
	if (!flag)
		return STATUS_INVALID_PARAMETER;

	adapter = nf_adapter_lookup(q->hAdapter);
	if (!adapter)
		return NF_STATUS_BAD_HANDLE;
	st = nf_sum_segment_usage(adapter, flag, q);
	nf_adapter_put(adapter);
	return st;
}
