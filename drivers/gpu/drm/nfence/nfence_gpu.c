// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/vmalloc.h>

#include <drm/drm_print.h>
#include <drm/nfence_drm.h>

#include "nfence_gpu.h"
#include "nfence_peer.h"

/**
 * DOC: the simulated GPU
 *
 * &struct nfence_gpu is the hardware the driver drives: what a PCI BAR and
 * firmware would be for a real adapter. It has
 *
 * - a system memory segment (an aperture: its pages belong to the objects
 *   placed in it) and a memory-backed local segment standing for VRAM, part
 *   of it CPU-visible (see nfence_segment.c);
 * - engines (WDDM nodes) whose classes cycle through 3D, compute and copy;
 * - a timestamp clock at %NFENCE_TIMESTAMP_FREQUENCY, derived from
 *   CLOCK_MONOTONIC so that it can be correlated with CPU time exactly;
 * - interrupt counters (&struct nfence_irq_stats).
 *
 * Its context management processor (nfence_cmp.c) runs on top of it: the
 * driver starts it once the GPU is up and stops it before the GPU goes
 * down.
 *
 * The adapter's LUID is generated here: the low part is random with the
 * adapter index in its low byte, so adapters of one module load never share a
 * LUID and a reload gives new ones, as a reboot would on Windows.
 */

static_assert(NFENCE_SEGMENT_USAGE_SLOTS == NFENCE_NUM_SEGMENTS);

/**
 * nfence_gpu_config_validate - check an adapter configuration
 * @cfg: the configuration
 *
 * Return: 0, or -EINVAL if the configuration describes no valid GPU.
 */
int nfence_gpu_config_validate(const struct nfence_gpu_config *cfg)
{
	if (!cfg->num_engines || cfg->num_engines > NFENCE_MAX_ENGINES)
		return -EINVAL;
	if (!cfg->vram_size || !PAGE_ALIGNED(cfg->vram_size) ||
	    cfg->vram_visible_size > cfg->vram_size ||
	    !PAGE_ALIGNED(cfg->vram_visible_size))
		return -EINVAL;
	if (!cfg->sysmem_size || !PAGE_ALIGNED(cfg->sysmem_size))
		return -EINVAL;
	/* A file may always hold as many fences as the uapi promises. */
	if (cfg->client_fences &&
	    cfg->client_fences < DRM_NFENCE_MAX_FENCES_PER_FILE)
		return -EINVAL;
	if (cfg->user_mode_submission) {
		if (cfg->doorbell_model != DRM_NFENCE_DOORBELL_DEDICATED &&
		    cfg->doorbell_model != DRM_NFENCE_DOORBELL_GLOBAL)
			return -EINVAL;
		if (!cfg->num_doorbells ||
		    cfg->num_doorbells > NFENCE_MAX_DOORBELLS)
			return -EINVAL;
	}
	if (cfg->tdr_timeout_ms > NFENCE_MAX_TDR_TIMEOUT_MS ||
	    cfg->f1_idle_ms > NFENCE_MAX_TDR_TIMEOUT_MS)
		return -EINVAL;
	/* The optimized DEFAULT fence is a native fence feature. */
	if (cfg->optimized_default_fence && !cfg->native_fence)
		return -EINVAL;
	/* So are the payloads; the optimized one reads the logs. */
	if (cfg->irq_payload > NFENCE_IRQ_QUEUE ||
	    (cfg->irq_payload != NFENCE_IRQ_FENCES && !cfg->native_fence))
		return -EINVAL;
	/* And peer signals, which tell the other GPUs' native instances. */
	if (cfg->peer_signals && !cfg->native_fence)
		return -EINVAL;
	return 0;
}

/**
 * nfence_gpu_setup_engines - describe the engines of a configured GPU
 * @gpu: GPU whose @cfg is set
 */
void nfence_gpu_setup_engines(struct nfence_gpu *gpu)
{
	static const u32 classes[] = {
		DRM_NFENCE_ENGINE_CLASS_3D,
		DRM_NFENCE_ENGINE_CLASS_COMPUTE,
		DRM_NFENCE_ENGINE_CLASS_COPY,
	};
	u32 i;

	for (i = 0; i < gpu->cfg.num_engines; i++) {
		struct nfence_engine *engine = &gpu->engines[i];

		engine->ordinal = i;
		engine->engine_class = classes[i % ARRAY_SIZE(classes)];
		engine->flags = gpu->cfg.user_mode_submission ?
				DRM_NFENCE_ENGINE_USER_MODE_SUBMISSION : 0;
	}
}

/*
 * The doorbell BAR: one zeroed page per physical doorbell. A process maps
 * one through its doorbell (VM_PFNMAP: the page table holds no page
 * reference); the mapping holds the doorbell's GEM object, which holds the
 * DRM device, so the GPU and its doorbell pages outlive every mapping.
 */
static void nfence_gpu_doorbells_fini(struct nfence_gpu *gpu)
{
	u32 i;

	if (!gpu->doorbell_pages)
		return;
	for (i = 0; i < gpu->cfg.num_doorbells; i++)
		if (gpu->doorbell_pages[i])
			put_page(gpu->doorbell_pages[i]);
	kfree(gpu->doorbell_pages);
	gpu->doorbell_pages = NULL;
}

static int nfence_gpu_doorbells_init(struct nfence_gpu *gpu)
{
	u32 i;

	if (!gpu->cfg.user_mode_submission)
		return 0;
	gpu->doorbell_pages = kcalloc(gpu->cfg.num_doorbells,
				      sizeof(*gpu->doorbell_pages), GFP_KERNEL);
	if (!gpu->doorbell_pages)
		return -ENOMEM;
	for (i = 0; i < gpu->cfg.num_doorbells; i++) {
		gpu->doorbell_pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!gpu->doorbell_pages[i]) {
			nfence_gpu_doorbells_fini(gpu);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * nfence_gpu_doorbell - the word a ring of a physical doorbell stores to
 * @gpu: a GPU with user-mode submission
 * @slot: the physical doorbell, below the configured number
 *
 * Return: the kernel address of the doorbell's 64-bit word.
 */
u64 *nfence_gpu_doorbell(struct nfence_gpu *gpu, u32 slot)
{
	return page_address(gpu->doorbell_pages[slot]);
}

/**
 * nfence_gpu_init - power up a simulated GPU
 * @gpu: zeroed GPU
 * @cfg: validated configuration
 * @index: adapter index
 *
 * Return: 0 or -errno.
 */
int nfence_gpu_init(struct nfence_gpu *gpu, const struct nfence_gpu_config *cfg,
		    u32 index)
{
	struct nfence_segment *sys = &gpu->segments[0];
	struct nfence_segment *local = &gpu->segments[1];
	u32 local_flags = DRM_NFENCE_SEGMENT_LOCAL;
	int ret;

	ret = nfence_gpu_config_validate(cfg);
	if (ret)
		return ret;

	gpu->cfg = *cfg;
	gpu->index = index;
	gpu->luid_low = (get_random_u32() & ~0xffu) | (index & 0xff);
	if (!gpu->luid_low)
		gpu->luid_low = 0x100;
	gpu->luid_high = 0;
	nfence_gpu_setup_engines(gpu);

	gpu->vram = vzalloc(cfg->vram_size);
	if (!gpu->vram)
		return -ENOMEM;

	ret = nfence_segment_init(sys, NFENCE_SEGMENT_ID_SYSTEM,
				  DRM_NFENCE_SEGMENT_SYSTEM |
				  DRM_NFENCE_SEGMENT_CPU_VISIBLE,
				  cfg->sysmem_size, cfg->sysmem_size, NULL);
	if (ret)
		goto err_vram;

	sys->client_quota = cfg->client_sysmem_quota;

	if (cfg->vram_visible_size)
		local_flags |= DRM_NFENCE_SEGMENT_CPU_VISIBLE;
	ret = nfence_segment_init(local, NFENCE_SEGMENT_ID_LOCAL, local_flags,
				  cfg->vram_size, cfg->vram_visible_size,
				  gpu->vram);
	if (ret)
		goto err_sys;

	local->client_quota = cfg->client_vram_quota;

	ret = nfence_gpu_doorbells_init(gpu);
	if (ret)
		goto err_local;

	if (cfg->peer_signals) {
		gpu->bell = nfence_peer_bell_create();
		if (!gpu->bell) {
			ret = -ENOMEM;
			goto err_doorbells;
		}
	}

	gpu->timestamp_base_ns = ktime_get_ns();
	return 0;

err_doorbells:
	nfence_gpu_doorbells_fini(gpu);
err_local:
	nfence_segment_fini(local);
err_sys:
	nfence_segment_fini(sys);
err_vram:
	vfree(gpu->vram);
	gpu->vram = NULL;
	return ret;
}

/**
 * nfence_gpu_fini - power down a simulated GPU
 * @gpu: GPU set up with nfence_gpu_init(), whose CMP is stopped
 */
void nfence_gpu_fini(struct nfence_gpu *gpu)
{
	int i;

	/* Peer tables may keep the doorbell a while (DOC: peer signals). */
	nfence_peer_bell_put(gpu->bell);
	gpu->bell = NULL;
	nfence_gpu_doorbells_fini(gpu);
	for (i = NFENCE_NUM_SEGMENTS - 1; i >= 0; i--)
		nfence_segment_fini(&gpu->segments[i]);
	vfree(gpu->vram);
	gpu->vram = NULL;
}

/**
 * nfence_gpu_ns_to_ticks - convert nanoseconds to GPU timestamp ticks
 * @ns: nanoseconds
 *
 * Return: @ns in ticks of %NFENCE_TIMESTAMP_FREQUENCY, rounded down.
 */
u64 nfence_gpu_ns_to_ticks(u64 ns)
{
	return div_u64(ns, NSEC_PER_SEC / NFENCE_TIMESTAMP_FREQUENCY);
}

/**
 * nfence_gpu_timestamp - read the GPU timestamp clock
 * @gpu: the GPU
 * @cpu_ns: if not NULL, CLOCK_MONOTONIC in ns at the same instant
 *
 * Return: the GPU timestamp in ticks since the GPU was powered up.
 */
u64 nfence_gpu_timestamp(const struct nfence_gpu *gpu, u64 *cpu_ns)
{
	u64 now = ktime_get_ns();

	if (cpu_ns)
		*cpu_ns = now;
	return nfence_gpu_ns_to_ticks(now - gpu->timestamp_base_ns);
}

/**
 * nfence_gpu_segment - look up a segment by id
 * @gpu: the GPU
 * @id: WDDM segment id
 *
 * Return: the segment, or NULL if @id names none.
 */
struct nfence_segment *nfence_gpu_segment(struct nfence_gpu *gpu, u32 id)
{
	if (!id || id > NFENCE_NUM_SEGMENTS)
		return NULL;
	return &gpu->segments[id - 1];
}

/**
 * nfence_gpu_print - describe a GPU for debugfs
 * @gpu: the GPU
 * @p: where to print
 */
void nfence_gpu_print(struct nfence_gpu *gpu, struct drm_printer *p)
{
	const struct nfence_gpu_config *cfg = &gpu->cfg;

	drm_printf(p, "index: %u\n", gpu->index);
	drm_printf(p, "luid: 0x%08x:0x%08x\n", gpu->luid_high, gpu->luid_low);
	drm_printf(p, "engines: %u\n", cfg->num_engines);
	drm_printf(p, "native_fences: %d\n", cfg->native_fence);
	drm_printf(p, "optimized_default_fence: %d\n",
		   cfg->optimized_default_fence);
	drm_printf(p, "no_64bit_atomics: %d\n", cfg->no_64bit_atomics);
	drm_printf(p, "interrupt_payload: %u\n", cfg->irq_payload);
	drm_printf(p, "peer_signals: %d\n", cfg->peer_signals);
	drm_printf(p, "tdr_timeout_ms: %u\n", cfg->tdr_timeout_ms);
	drm_printf(p, "f1_idle_ms: %u\n", cfg->f1_idle_ms);
	drm_printf(p, "user_mode_submission: %d\n", cfg->user_mode_submission);
	drm_printf(p, "doorbell_model: %u\n", cfg->doorbell_model);
	drm_printf(p, "doorbells: %u\n", cfg->num_doorbells);
	drm_printf(p, "vram_size: %llu\n", cfg->vram_size);
	drm_printf(p, "vram_visible_size: %llu\n", cfg->vram_visible_size);
	drm_printf(p, "sysmem_size: %llu\n", cfg->sysmem_size);
	drm_printf(p, "timestamp: %llu\n", nfence_gpu_timestamp(gpu, NULL));
}
