// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/nfence_drm.h>

#include "nfence_adapter.h"
#include "nfence_caps.h"
#include "nfence_gpu.h"
#include "nfence_log.h"
#include "nfence_segment.h"

/**
 * DOC: capabilities
 *
 * DRM_IOCTL_NFENCE_QUERY answers what DxgkDdiQueryAdapterInfo answers on
 * Windows (DXGKQAITYPE_NATIVE_FENCE_CAPS, DXGKQAITYPE_USERMODESUBMISSION_CAPS,
 * node metadata, segment descriptions) plus the adapter identity and a
 * correlated timestamp, and the calling file's budget and usage of each
 * segment (DRM_NFENCE_QUERY_SEGMENT_USAGE, what D3DKMTQueryVideoMemoryInfo
 * is built on). The encoding lives in nfence_caps_size() and
 * nfence_caps_fill(), which only read the GPU's fixed description and the
 * file's segment usage counters, so that they can be tested without
 * hardware; the ioctl handler only negotiates the size and copies.
 *
 * A segment's budget is the per-client quota nfence_segment_alloc_charged()
 * enforces, bounded by the segment's size (no quota: the whole segment);
 * its usage is what &struct nfence_segment_usage counts for the file,
 * read without a lock: each counter is one atomic, and the answer is a
 * snapshot that concurrent allocations of the same file may change.
 */

static void nfence_caps_adapter(const struct nfence_gpu *gpu,
				struct drm_nfence_query_adapter *out)
{
	const struct nfence_gpu_config *cfg = &gpu->cfg;

	out->luid_low = gpu->luid_low;
	out->luid_high = gpu->luid_high;
	out->index = gpu->index;
	out->flags = 0;
	if (cfg->native_fence)
		out->flags |= DRM_NFENCE_ADAPTER_NATIVE_FENCE;
	if (cfg->user_mode_submission)
		out->flags |= DRM_NFENCE_ADAPTER_USER_MODE_SUBMISSION;
	if (cfg->no_64bit_atomics)
		out->flags |= DRM_NFENCE_ADAPTER_NO_64BIT_ATOMICS;
	out->num_engines = cfg->num_engines;
	out->num_segments = NFENCE_NUM_SEGMENTS;
	out->timestamp_frequency = NFENCE_TIMESTAMP_FREQUENCY;
}

static void nfence_caps_segments(const struct nfence_gpu *gpu,
				 struct drm_nfence_query_segments *out)
{
	u32 i;

	out->num_segments = NFENCE_NUM_SEGMENTS;
	for (i = 0; i < NFENCE_NUM_SEGMENTS; i++) {
		const struct nfence_segment *seg = &gpu->segments[i];

		out->segments[i].id = seg->id;
		out->segments[i].flags = seg->flags;
		out->segments[i].size = seg->size;
		out->segments[i].cpu_visible_size = seg->cpu_visible_size;
	}
}

static void nfence_caps_segment_usage(const struct nfence_gpu *gpu,
				      struct nfence_segment_usage *usage,
				      struct drm_nfence_query_segment_usage *out)
{
	u32 i;

	out->num_segments = NFENCE_NUM_SEGMENTS;
	for (i = 0; i < NFENCE_NUM_SEGMENTS; i++) {
		const struct nfence_segment *seg = &gpu->segments[i];
		u64 quota = READ_ONCE(seg->client_quota);

		out->segments[i].id = seg->id;
		out->segments[i].budget = quota ? min(quota, seg->size) :
						  seg->size;
		out->segments[i].usage = nfence_segment_usage_read(usage,
								   seg->id);
	}
}

static void nfence_caps_engines(const struct nfence_gpu *gpu,
				struct drm_nfence_query_engines *out)
{
	u32 i;

	out->num_engines = gpu->cfg.num_engines;
	for (i = 0; i < gpu->cfg.num_engines; i++) {
		out->engines[i].ordinal = gpu->engines[i].ordinal;
		out->engines[i].engine_class = gpu->engines[i].engine_class;
		out->engines[i].flags = gpu->engines[i].flags;
	}
}

static void nfence_caps_fence(const struct nfence_gpu *gpu,
			      struct drm_nfence_query_fence_caps *out)
{
	const struct nfence_gpu_config *cfg = &gpu->cfg;

	if (!cfg->native_fence)
		return;

	/* Every queue has its logs, which the engines write (nfence_log.c). */
	out->flags = DRM_NFENCE_FENCE_CAP_INTRA_GPU |
		     DRM_NFENCE_FENCE_CAP_CROSS_ADAPTER |
		     DRM_NFENCE_FENCE_CAP_LOG_BUFFERS;
	if (cfg->optimized_default_fence)
		out->flags |= DRM_NFENCE_FENCE_CAP_OPTIMIZED_DEFAULT;
	if (cfg->irq_payload == NFENCE_IRQ_QUEUE)
		out->flags |= DRM_NFENCE_FENCE_CAP_OPTIMIZED_INTERRUPT;
	if (cfg->peer_signals)
		out->flags |= DRM_NFENCE_FENCE_CAP_PEER_SIGNALS;
	out->value_stride = NFENCE_FENCE_VALUE_STRIDE;
	out->value_bits = cfg->no_64bit_atomics ? 32 : 64;
	out->max_log_entries = NFENCE_LOG_ENTRIES_ALL;
	out->log_header_size = NFENCE_LOG_HEADER_SIZE;
	out->log_entry_size = NFENCE_LOG_ENTRY_SIZE;
}

static void nfence_caps_ums(const struct nfence_gpu *gpu,
			    struct drm_nfence_query_ums_caps *out)
{
	const struct nfence_gpu_config *cfg = &gpu->cfg;

	if (!cfg->user_mode_submission)
		return;

	out->doorbell_size = NFENCE_DOORBELL_SIZE;
	out->doorbell_model = cfg->doorbell_model;
	out->num_doorbells = cfg->num_doorbells;
}

/**
 * nfence_caps_size - bytes the answer to a query takes
 * @gpu: the GPU
 * @type: &enum drm_nfence_query_type
 *
 * Return: the size, or 0 if @type is not a query type.
 */
size_t nfence_caps_size(const struct nfence_gpu *gpu, u32 type)
{
	struct drm_nfence_query_segments *segs;
	struct drm_nfence_query_segment_usage *usage;
	struct drm_nfence_query_engines *engines;

	switch (type) {
	case DRM_NFENCE_QUERY_ADAPTER:
		return sizeof(struct drm_nfence_query_adapter);
	case DRM_NFENCE_QUERY_SEGMENTS:
		return struct_size(segs, segments, NFENCE_NUM_SEGMENTS);
	case DRM_NFENCE_QUERY_ENGINES:
		return struct_size(engines, engines, gpu->cfg.num_engines);
	case DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS:
		return sizeof(struct drm_nfence_query_fence_caps);
	case DRM_NFENCE_QUERY_UMS_CAPS:
		return sizeof(struct drm_nfence_query_ums_caps);
	case DRM_NFENCE_QUERY_TIMESTAMP:
		return sizeof(struct drm_nfence_query_timestamp);
	case DRM_NFENCE_QUERY_SEGMENT_USAGE:
		return struct_size(usage, segments, NFENCE_NUM_SEGMENTS);
	default:
		return 0;
	}
}

/**
 * nfence_caps_fill - encode the answer to a query
 * @gpu: the GPU
 * @usage: the asking file's segment usage (DRM_NFENCE_QUERY_SEGMENT_USAGE)
 * @type: a valid &enum drm_nfence_query_type
 * @buf: zeroed buffer of nfence_caps_size() bytes
 */
void nfence_caps_fill(const struct nfence_gpu *gpu,
		      struct nfence_segment_usage *usage, u32 type, void *buf)
{
	struct drm_nfence_query_timestamp *ts = buf;

	switch (type) {
	case DRM_NFENCE_QUERY_ADAPTER:
		nfence_caps_adapter(gpu, buf);
		break;
	case DRM_NFENCE_QUERY_SEGMENTS:
		nfence_caps_segments(gpu, buf);
		break;
	case DRM_NFENCE_QUERY_ENGINES:
		nfence_caps_engines(gpu, buf);
		break;
	case DRM_NFENCE_QUERY_NATIVE_FENCE_CAPS:
		nfence_caps_fence(gpu, buf);
		break;
	case DRM_NFENCE_QUERY_UMS_CAPS:
		nfence_caps_ums(gpu, buf);
		break;
	case DRM_NFENCE_QUERY_TIMESTAMP:
		ts->gpu_timestamp = nfence_gpu_timestamp(gpu,
							 &ts->cpu_monotonic_ns);
		break;
	case DRM_NFENCE_QUERY_SEGMENT_USAGE:
		nfence_caps_segment_usage(gpu, usage, buf);
		break;
	}
}

/**
 * nfence_query_ioctl - DRM_IOCTL_NFENCE_QUERY
 * @drm: the DRM device
 * @data: &struct drm_nfence_query
 * @file: the caller's file
 *
 * Return: 0, -EINVAL on a bad type, flag, padding or too small a size,
 * -EFAULT if the answer cannot be written, -ENOMEM, -ENODEV after unplug.
 */
int nfence_query_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file)
{
	struct nfence_adapter *adapter = to_nfence_adapter(drm);
	struct drm_nfence_query *args = data;
	size_t size;
	void *buf;
	int ret = 0, idx;

	if (args->flags || args->pad || args->reserved[0] || args->reserved[1])
		return -EINVAL;

	size = nfence_caps_size(&adapter->gpu, args->type);
	if (!size)
		return -EINVAL;
	if (!args->size) {
		args->size = size;
		return 0;
	}
	if (args->size < size)
		return -EINVAL;

	buf = kzalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out;
	}
	nfence_caps_fill(&adapter->gpu, to_nfence_file(file)->seg_usage,
			 args->type, buf);
	drm_dev_exit(idx);

	if (copy_to_user(u64_to_user_ptr(args->data), buf, size))
		ret = -EFAULT;
	else
		args->size = size;
out:
	kfree(buf);
	return ret;
}
