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

/*
 * NFENCE_TRACE_IRQ_*: what a native fence signaled interrupt carried (the
 * seed's payloads), for the nfence_interrupt event: signaled fences, none
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

TRACE_EVENT(nfence_log_entry,
	    TP_PROTO(u32 adapter, u32 queue, u32 type, u64 value, u32 handle,
		     u64 end_ts),
	    TP_ARGS(adapter, queue, type, value, handle, end_ts),
	    TP_STRUCT__entry(__field(u32, adapter)
			     __field(u32, queue)
			     __field(u32, type)
			     __field(u32, handle)
			     __field(u64, value)
			     __field(u64, end_ts)),
	    TP_fast_assign(__entry->adapter = adapter;
			   __entry->queue = queue;
			   __entry->type = type;
			   __entry->handle = handle;
			   __entry->value = value;
			   __entry->end_ts = end_ts;),
	    TP_printk("adapter=%u queue=%u log=%s handle=%#x value=%llu gpu_ts=%llu",
		      __entry->adapter, __entry->queue,
		      __entry->type ? "signals" : "waits", __entry->handle,
		      __entry->value, __entry->end_ts)
);

#endif /* NFENCE_TRACE_H */

/* An out-of-tree module: the header is found next to the source. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nfence_trace
#include <trace/define_trace.h>
