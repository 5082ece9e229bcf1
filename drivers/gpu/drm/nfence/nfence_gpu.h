/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_GPU_H__
#define __NFENCE_GPU_H__

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/types.h>

#include <drm/nfence_drm.h>

#include "nfence_segment.h"

struct drm_printer;
struct nfence_peer_bell;

/* Engines (WDDM nodes) an adapter may have. */
#define NFENCE_MAX_ENGINES		8
#define NFENCE_MAX_DOORBELLS		1024
#define NFENCE_MAX_TDR_TIMEOUT_MS	60000
#define NFENCE_NUM_SEGMENTS		2
#define NFENCE_SEGMENT_ID_SYSTEM	1
#define NFENCE_SEGMENT_ID_LOCAL		2
#define NFENCE_TIMESTAMP_FREQUENCY	100000000ULL
#define NFENCE_FENCE_VALUE_STRIDE	64
#define NFENCE_LOG_HEADER_SIZE		40
#define NFENCE_LOG_ENTRY_SIZE		48
#define NFENCE_DOORBELL_SIZE		4096

/**
 * struct nfence_irq_stats - what the native fence interrupt path saw
 */
struct nfence_irq_stats {
	/** @signals: fence signals (CPU and GPU) */
	atomic64_t signals;
	/**
	 * @interrupts: interrupts raised: signals that made CurrentValue
	 * exceed MonitoredValue, and carries
	 */
	atomic64_t interrupts;
	/** @suppressed: signals that did not (no interrupt raised) */
	atomic64_t suppressed;
	/**
	 * @monitored: monitored fence signaled interrupts: one per GPU
	 * signal of a WDDM 2.x monitored fence, whoever waits (not counted
	 * in @interrupts, @suppressed or @spurious)
	 */
	atomic64_t monitored;
	/** @woken: CPU waiters satisfied */
	atomic64_t woken;
	/** @spurious: interrupts that satisfied no waiter, carries excepted */
	atomic64_t spurious;
	/**
	 * @carries: values a GPU without 64-bit atomics could not store
	 * (their high half changed) and the interrupt path stored
	 * (nfence_interrupt_carry())
	 */
	atomic64_t carries;
	/**
	 * @queue_irqs: optimized interrupts that named a hardware queue
	 * (%NFENCE_IRQ_QUEUE): its signal log was read
	 */
	atomic64_t queue_irqs;
	/**
	 * @engine_irqs: optimized interrupts with no queue: the signal logs
	 * of every queue on the engine were read
	 */
	atomic64_t engine_irqs;
	/** @log_entries: signal log entries those interrupts read */
	atomic64_t log_entries;
	/**
	 * @overruns: signal logs found overrun by those interrupts (entries
	 * lost): every fence of the adapter with waiters was looked at
	 * instead, as by a scan (not counted in @scans)
	 */
	atomic64_t overruns;
	/**
	 * @unnamed: signal log entries those interrupts read whose handle
	 * named no fence any more (closed since the GPU logged the signal):
	 * every fence of the adapter with waiters was looked at instead, as
	 * for an overrun (not counted in @scans)
	 */
	atomic64_t unnamed;
	/**
	 * @peer_rings: fence ids this GPU wrote to other GPUs' peer
	 * doorbells (DOC: peer signals)
	 */
	atomic64_t peer_rings;
	/**
	 * @peer_taken: writes to its own peer doorbell its CMP has taken (an
	 * id written again before the CMP looked is kept once, counted each
	 * time)
	 */
	atomic64_t peer_taken;
	/**
	 * @peer_overflows: looks that found its peer doorbell overflowed
	 * (ids lost: every fence was scanned instead)
	 */
	atomic64_t peer_overflows;
	/**
	 * @scans: interrupts without a payload (scan every fence of the
	 * adapter)
	 */
	atomic64_t scans;
	/**
	 * @max_scan: most fences a scan (of an interrupt without a payload,
	 * or of an overrun, see @overruns) looked at under one hold of the
	 * adapter's fence table lock, since the CMP's maxima were last reset
	 * (nfence_cmp_reset_max())
	 */
	u32 max_scan;
	/**
	 * @handler_ns: time the driver spent handling native fence signaled
	 * interrupts (all payloads, carries and monitored fences included)
	 */
	atomic64_t handler_ns;
};

/**
 * enum nfence_irq_payload - what the GPU's native fence signaled interrupt
 * carries (see DOC: fence signals, the interrupt path and AlwaysSignaled)
 * @NFENCE_IRQ_FENCES: the signaled fence, when the GPU knows it (a signal
 *	of fence storage); no payload for other memory
 * @NFENCE_IRQ_SCAN: never a payload: the driver scans every fence
 * @NFENCE_IRQ_QUEUE: the optimized interrupt: the hardware queue that ran
 *	the signals, whose signal log the driver reads; no queue when the
 *	engine ran several; no payload when no log names the signal
 */
enum nfence_irq_payload {
	NFENCE_IRQ_FENCES,
	NFENCE_IRQ_SCAN,
	NFENCE_IRQ_QUEUE,
};

/**
 * struct nfence_gpu_config - what a simulated adapter is built with
 *
 * Filled from the module parameters; checked by nfence_gpu_config_validate().
 */
struct nfence_gpu_config {
	/** @num_engines: engines (WDDM nodes), 1..NFENCE_MAX_ENGINES */
	u32 num_engines;
	/** @doorbell_model: &enum drm_nfence_doorbell_model */
	u32 doorbell_model;
	/** @num_doorbells: physical doorbells, 1..NFENCE_MAX_DOORBELLS */
	u32 num_doorbells;
	/** @vram_size: bytes of VRAM, page-aligned, non-zero */
	u64 vram_size;
	/** @vram_visible_size: CPU-visible bytes of VRAM */
	u64 vram_visible_size;
	/** @sysmem_size: bytes of the system memory aperture */
	u64 sysmem_size;
	/** @client_vram_quota: VRAM bytes one client may hold, 0 for no limit */
	u64 client_vram_quota;
	/** @client_sysmem_quota: aperture bytes one client may hold, 0 for none */
	u64 client_sysmem_quota;
	/**
	 * @client_fences: local fence handles one client may hold, 0 for no
	 * limit but memory; otherwise at least %DRM_NFENCE_MAX_FENCES_PER_FILE
	 */
	u32 client_fences;
	/** @native_fence: native GPU fences supported */
	bool native_fence;
	/** @optimized_default_fence: MonitoredValue of DEFAULT fences in VRAM */
	bool optimized_default_fence;
	/** @user_mode_submission: doorbells supported */
	bool user_mode_submission;
	/** @tdr_timeout_ms: GPU hang timeout, 0 for none */
	u32 tdr_timeout_ms;
	/**
	 * @f1_idle_ms: an engine with connected doorbells and nothing to run
	 * for this long goes to F1, 0 for never
	 */
	u32 f1_idle_ms;
	/** @no_64bit_atomics: the GPU only writes 32 bits atomically */
	bool no_64bit_atomics;
	/**
	 * @irq_payload: &enum nfence_irq_payload of its native fence
	 * signaled interrupts; %NFENCE_IRQ_FENCES without native fences
	 */
	u32 irq_payload;
	/**
	 * @peer_signals: the GPU signals other GPUs through their peer
	 * doorbells, and has one (DOC: peer signals); native fences only
	 */
	bool peer_signals;
};

/**
 * struct nfence_engine - one engine (WDDM node)
 */
struct nfence_engine {
	/** @ordinal: node ordinal */
	u32 ordinal;
	/** @engine_class: &enum drm_nfence_engine_class */
	u32 engine_class;
	/** @flags: DRM_NFENCE_ENGINE_* bits */
	u32 flags;
};

/**
 * struct nfence_gpu - the simulated GPU behind one adapter
 *
 * Owns the memory segments, the engines, the timestamp clock and the
 * interrupt counters; its CMP (&struct nfence_cmp) runs on top of it.
 * Everything in it but the segment allocators and @irq_stats is fixed after
 * nfence_gpu_init().
 */
struct nfence_gpu {
	/** @cfg: configuration */
	struct nfence_gpu_config cfg;
	/** @index: adapter index */
	u32 index;
	/** @luid_low: LowPart of the adapter LUID */
	u32 luid_low;
	/** @luid_high: HighPart of the adapter LUID */
	u32 luid_high;
	/** @engines: the engines, @cfg.num_engines of them */
	struct nfence_engine engines[NFENCE_MAX_ENGINES];
	/** @segments: system segment then local segment */
	struct nfence_segment segments[NFENCE_NUM_SEGMENTS];
	/** @vram: memory backing the local segment */
	void *vram;
	/** @timestamp_base_ns: CLOCK_MONOTONIC at GPU timestamp 0 */
	u64 timestamp_base_ns;
	/**
	 * @doorbell_pages: the physical doorbells (@cfg.num_doorbells pages
	 * of %NFENCE_DOORBELL_SIZE), with user-mode submission; a ring is a
	 * 64-bit store at offset 0 of one
	 */
	struct page **doorbell_pages;
	/** @bell: its peer doorbell, with @cfg.peer_signals (else NULL) */
	struct nfence_peer_bell *bell;
	/** @irq_stats: native fence interrupt path counters */
	struct nfence_irq_stats irq_stats;
};

int nfence_gpu_config_validate(const struct nfence_gpu_config *cfg);
void nfence_gpu_setup_engines(struct nfence_gpu *gpu);
int nfence_gpu_init(struct nfence_gpu *gpu, const struct nfence_gpu_config *cfg,
		    u32 index);
void nfence_gpu_fini(struct nfence_gpu *gpu);
u64 *nfence_gpu_doorbell(struct nfence_gpu *gpu, u32 slot);
u64 nfence_gpu_ns_to_ticks(u64 ns);
u64 nfence_gpu_timestamp(const struct nfence_gpu *gpu, u64 *cpu_ns);
struct nfence_segment *nfence_gpu_segment(struct nfence_gpu *gpu, u32 id);
void nfence_gpu_print(struct nfence_gpu *gpu, struct drm_printer *p);

/**
 * nfence_value32_in_window - the 32-bit atomics rule of WDDM's context
 * monitoring
 * @current_value: the fence's last signaled value
 * @value: a value to wait for or signal
 *
 * On a GPU that updates only 32 bits atomically, outstanding wait and
 * signal values may not be more than UINT_MAX/2 ahead of the last signaled
 * value, so that a 32-bit GPU value always extends to one 64-bit value.
 * Values at or below the current one are always fine.
 *
 * Return: true if @value may be used.
 */
static inline bool nfence_value32_in_window(u64 current_value, u64 value)
{
	return value <= current_value || value - current_value <= U32_MAX / 2;
}

/**
 * nfence_value32_reached - the wait check of a GPU without 64-bit atomics
 * @current_value: the fence's value in memory; only its low half is read
 * @value: the value waited for
 *
 * Such a GPU compares the low 32 bits as serial numbers, which gives the
 * 64-bit answer while @value is within UINT_MAX/2 of the fence's value (see
 * nfence_value32_in_window()).
 *
 * Return: true if the low half of @current_value is at or past @value's.
 */
static inline bool nfence_value32_reached(u64 current_value, u64 value)
{
	return (s32)(lower_32_bits(current_value) - lower_32_bits(value)) >= 0;
}

#endif /* __NFENCE_GPU_H__ */
