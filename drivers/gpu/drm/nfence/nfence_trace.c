// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

/**
 * DOC: tracepoints
 *
 * nfence's trace events (TRACE_SYSTEM nfence, in tracefs under
 * events/nfence) show a workload to trace-cmd, perf and the timeline tools
 * as any DRM driver's do; like every tracepoint they cost a static branch
 * when off:
 *
 * - nfence_fence_signal: a fence's CurrentValue signaled, from the CPU
 *   (a CPU signal or a legacy queued signal) or the GPU (FENCE_SIGNAL, a
 *   queue's progress), with the fence's adapter-wide id;
 * - nfence_wait_begin / nfence_wait_end: a CPU wait (blocking or
 *   asynchronous) on its first fence, and its result;
 * - nfence_interrupt: a native or monitored fence signaled interrupt, by
 *   payload (signaled fences, scan, monitored fence, 32-bit carry), with
 *   the waiters it woke;
 * - nfence_doorbell_ring: the CMP took a ring from a doorbell (the write
 *   index the process stored);
 * - nfence_log_entry: the GPU wrote a native fence log entry.
 */

#define CREATE_TRACE_POINTS
#include "nfence_trace.h"
