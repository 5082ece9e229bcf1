/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM nfence

#if !defined(NFENCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define NFENCE_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>

#include <drm/nfence_drm.h>

/*
 * NFENCE_TRACE_IRQ_*: what a native fence signaled interrupt carried (the
 * WDDM payloads), for the nfence_interrupt event: signaled fences, none
 * (scan), a monitored fence, a carry, and the optimized interrupt's
 * hardware queue or no queue (every queue of the engine). The event's
 * "fences" counts the payload's entries: fences, or queues whose signal
 * logs were read.
 */
#define NFENCE_TRACE_IRQ_FENCES		0
#define NFENCE_TRACE_IRQ_SCAN		1
#define NFENCE_TRACE_IRQ_MONITORED	2
#define NFENCE_TRACE_IRQ_CARRY		3
#define NFENCE_TRACE_IRQ_QUEUE		4
#define NFENCE_TRACE_IRQ_ENGINE		5

TRACE_EVENT(nfence_fence_signal,
	    TP_PROTO(u32 adapter, u32 fence, u64 value, bool gpu),
	    TP_ARGS(adapter, fence, value, gpu),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, fence)
			     __field(u64, value)
			     __field(bool, gpu)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->fence = fence;
			   __entry->value = value;
			   __entry->gpu = gpu;),
	    TP_printk("adapter=%u fence=%u value=%llu from=%s", __entry->adapter,
		      __entry->fence, __entry->value, __entry->gpu ? "gpu" : "cpu")
);

TRACE_EVENT(nfence_wait_begin,
	    TP_PROTO(u32 adapter, u32 fence, u64 value, u32 count, bool async),
	    TP_ARGS(adapter, fence, value, count, async),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, fence)
			     __field(u64, value)
			     __field(u32, count)
			     __field(bool, async)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->fence = fence;
			   __entry->value = value;
			   __entry->count = count;
			   __entry->async = async;),
	    TP_printk("adapter=%u fence=%u value=%llu count=%u async=%d",
		      __entry->adapter, __entry->fence, __entry->value,
		      __entry->count, __entry->async)
);

TRACE_EVENT(nfence_wait_end,
	    TP_PROTO(u32 adapter, u32 fence, u64 value, int result),
	    TP_ARGS(adapter, fence, value, result),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, fence)
			     __field(u64, value)
			     __field(int, result)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->fence = fence;
			   __entry->value = value;
			   __entry->result = result;),
	    TP_printk("adapter=%u fence=%u value=%llu result=%d",
		      __entry->adapter, __entry->fence, __entry->value,
		      __entry->result)
);

TRACE_EVENT(nfence_interrupt,
	    TP_PROTO(u32 adapter, u32 kind, u32 fences, u32 woken),
	    TP_ARGS(adapter, kind, fences, woken),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, kind)
			     __field(u32, fences)
			     __field(u32, woken)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->kind = kind;
			   __entry->fences = fences;
			   __entry->woken = woken;),
	    TP_printk("adapter=%u payload=%s fences=%u woken=%u",
		      __entry->adapter,
		      __print_symbolic(__entry->kind,
				       { NFENCE_TRACE_IRQ_FENCES, "fences" },
				       { NFENCE_TRACE_IRQ_SCAN, "scan" },
				       { NFENCE_TRACE_IRQ_MONITORED, "monitored" },
				       { NFENCE_TRACE_IRQ_CARRY, "carry" },
				       { NFENCE_TRACE_IRQ_QUEUE, "queue" },
				       { NFENCE_TRACE_IRQ_ENGINE, "engine" }),
		      __entry->fences, __entry->woken)
);

TRACE_EVENT(nfence_doorbell_ring,
	    TP_PROTO(u32 adapter, u32 queue, u64 write_index),
	    TP_ARGS(adapter, queue, write_index),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, queue)
			     __field(u64, write_index)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->queue = queue;
			   __entry->write_index = write_index;),
	    TP_printk("adapter=%u queue=%u write_index=%llu", __entry->adapter,
		      __entry->queue, __entry->write_index)
);

/*
 * nfence_log_entry: the GPU wrote a native fence log entry (see the uapi's
 * "native fence log buffers"): @type is the log, DRM_NFENCE_LOG_TYPE_*,
 * @fence the id of the fence at the command's address (0 for none; the
 * @handle is the command's claim), and the GPU timestamps are ticks of
 * the adapter's timestamp frequency.
 */
TRACE_EVENT(nfence_log_entry,
	    TP_PROTO(u32 adapter, u32 engine, u32 queue, u32 type, u32 fence,
		     const struct drm_nfence_log_entry *log),
	    TP_ARGS(adapter, engine, queue, type, fence, log),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, engine)
			     __field(u32, queue)
			     __field(u32, type)
			     __field(u32, fence)
			     __field(u32, handle)
			     __field(u64, value)
			     __field(u64, observed_ts)
			     __field(u64, end_ts)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->engine = engine;
			   __entry->queue = queue;
			   __entry->type = type;
			   __entry->fence = fence;
			   __entry->handle = log->fence_handle;
			   __entry->value = log->fence_value;
			   __entry->observed_ts = log->observed_gpu_timestamp;
			   __entry->end_ts = log->end_gpu_timestamp;),
	    TP_printk("adapter=%u engine=%u queue=%u log=%s fence=%u handle=%#x value=%llu observed_ts=%llu gpu_ts=%llu",
		      __entry->adapter, __entry->engine, __entry->queue,
		      __entry->type == DRM_NFENCE_LOG_TYPE_SIGNALS ?
		      "signals" : "waits", __entry->fence, __entry->handle,
		      __entry->value, __entry->observed_ts, __entry->end_ts)
);

/*
 * nfence_work: an engine starts a WORK command of @queue that keeps it
 * busy for @ns nanoseconds from the GPU timestamp @gpu_ts.
 */
TRACE_EVENT(nfence_work,
	    TP_PROTO(u32 adapter, u32 engine, u32 queue, u64 gpu_ts, u64 ns),
	    TP_ARGS(adapter, engine, queue, gpu_ts, ns),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, engine)
			     __field(u32, queue)
			     __field(u64, gpu_ts)
			     __field(u64, ns)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->engine = engine;
			   __entry->queue = queue;
			   __entry->gpu_ts = gpu_ts;
			   __entry->ns = ns;),
	    TP_printk("adapter=%u engine=%u queue=%u gpu_ts=%llu ns=%llu",
		      __entry->adapter, __entry->engine, __entry->queue,
		      __entry->gpu_ts, __entry->ns)
);

#endif /* NFENCE_TRACE_H */

/* An out-of-tree module: the header is found next to the source. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nfence_trace
#include <trace/define_trace.h>
