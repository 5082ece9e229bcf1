// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include <drm/nfence_drm.h>

#include "nfence_gpu.h"
#include "nfence_params.h"

/**
 * DOC: module parameters
 *
 * num_adapters says how many simulated adapters module load registers.
 * Every other parameter describes an adapter and takes one value per
 * adapter, comma-separated, in adapter order; the last value given applies
 * to the adapters after it. So ``num_adapters=2 native_fences=1,0`` makes
 * a native fence adapter 0 and a WDDM 2.x adapter 1, and
 * ``num_adapters=4 num_engines=1`` gives all four adapters one engine.
 * More values than adapters is a mistake that fails module load, as does
 * an adapter configuration that nfence_gpu_config_validate() refuses (the
 * kernel log names the parameter or the adapter). The values read back in
 * /sys/module/nfence/parameters as they were given (one value when none
 * was).
 *
 * optimized_default_fence, interrupt_payload and peer_signals are native
 * fence features: on an adapter without native fences the first and the
 * last are off and the second 0 whatever the parameters say.
 */

static unsigned int num_adapters = 1;
module_param(num_adapters, uint, 0444);
MODULE_PARM_DESC(num_adapters, "Number of simulated adapters (1-8, default 1)");

/*
 * One value per adapter: name[] holds name_count values (1 until the
 * parameter is given, so that sysfs shows the default).
 */
static unsigned int num_engines[NFENCE_MAX_ADAPTERS] = { 3 };
static unsigned int num_engines_count = 1;
module_param_array(num_engines, uint, &num_engines_count, 0444);
MODULE_PARM_DESC(num_engines, "Engines per adapter (1-8, default 3; one value per adapter)");

static unsigned int vram_mb[NFENCE_MAX_ADAPTERS] = { 64 };
static unsigned int vram_mb_count = 1;
module_param_array(vram_mb, uint, &vram_mb_count, 0444);
MODULE_PARM_DESC(vram_mb, "VRAM (local segment) per adapter in MiB (default 64; one value per adapter)");

static unsigned int vram_visible_mb[NFENCE_MAX_ADAPTERS] = { 16 };
static unsigned int vram_visible_mb_count = 1;
module_param_array(vram_visible_mb, uint, &vram_visible_mb_count, 0444);
MODULE_PARM_DESC(vram_visible_mb, "CPU-visible part of VRAM in MiB (default 16; one value per adapter)");

static unsigned int sysmem_mb[NFENCE_MAX_ADAPTERS] = { 256 };
static unsigned int sysmem_mb_count = 1;
module_param_array(sysmem_mb, uint, &sysmem_mb_count, 0444);
MODULE_PARM_DESC(sysmem_mb, "System memory segment (aperture) in MiB (default 256; one value per adapter)");

static unsigned int client_vram_mb[NFENCE_MAX_ADAPTERS] = { 0 };
static unsigned int client_vram_mb_count = 1;
module_param_array(client_vram_mb, uint, &client_vram_mb_count, 0444);
MODULE_PARM_DESC(client_vram_mb, "VRAM one open file's allocations and fence values may hold, in MiB (default 0: no limit; one value per adapter)");

static unsigned int client_sysmem_mb[NFENCE_MAX_ADAPTERS] = { 0 };
static unsigned int client_sysmem_mb_count = 1;
module_param_array(client_sysmem_mb, uint, &client_sysmem_mb_count, 0444);
MODULE_PARM_DESC(client_sysmem_mb, "Aperture one open file's allocations may hold, in MiB (default 0: no limit; one value per adapter)");

static unsigned int client_fences[NFENCE_MAX_ADAPTERS] = { 0 };
static unsigned int client_fences_count = 1;
module_param_array(client_fences, uint, &client_fences_count, 0444);
MODULE_PARM_DESC(client_fences, "Fence handles one open file may hold (default 0: no limit but memory; otherwise at least 8192; one value per adapter)");

static bool native_fences[NFENCE_MAX_ADAPTERS] = { true };
static unsigned int native_fences_count = 1;
module_param_array(native_fences, bool, &native_fences_count, 0444);
MODULE_PARM_DESC(native_fences, "Adapter supports native GPU fences (default Y; one value per adapter)");

static bool optimized_default_fence[NFENCE_MAX_ADAPTERS] = { true };
static unsigned int optimized_default_fence_count = 1;
module_param_array(optimized_default_fence, bool, &optimized_default_fence_count, 0444);
MODULE_PARM_DESC(optimized_default_fence, "DEFAULT fences keep MonitoredValue in VRAM (default Y; one value per adapter)");

static bool user_mode_submission[NFENCE_MAX_ADAPTERS] = { true };
static unsigned int user_mode_submission_count = 1;
module_param_array(user_mode_submission, bool, &user_mode_submission_count, 0444);
MODULE_PARM_DESC(user_mode_submission, "Engines support user-mode submission (default Y; one value per adapter)");

static unsigned int doorbell_model[NFENCE_MAX_ADAPTERS] = { DRM_NFENCE_DOORBELL_DEDICATED };
static unsigned int doorbell_model_count = 1;
module_param_array(doorbell_model, uint, &doorbell_model_count, 0444);
MODULE_PARM_DESC(doorbell_model, "1 = dedicated doorbells, 2 = global doorbell (default 1; one value per adapter)");

static unsigned int num_doorbells[NFENCE_MAX_ADAPTERS] = { 16 };
static unsigned int num_doorbells_count = 1;
module_param_array(num_doorbells, uint, &num_doorbells_count, 0444);
MODULE_PARM_DESC(num_doorbells, "Physical doorbells per adapter (1-1024, default 16; one value per adapter)");

static unsigned int tdr_timeout_ms[NFENCE_MAX_ADAPTERS] = { 2000 };
static unsigned int tdr_timeout_ms_count = 1;
module_param_array(tdr_timeout_ms, uint, &tdr_timeout_ms_count, 0444);
MODULE_PARM_DESC(tdr_timeout_ms, "GPU hang detection: longest a command may run, 0 = never (0-60000, default 2000; one value per adapter)");

static unsigned int f1_idle_ms[NFENCE_MAX_ADAPTERS] = { 0 };
static unsigned int f1_idle_ms_count = 1;
module_param_array(f1_idle_ms, uint, &f1_idle_ms_count, 0444);
MODULE_PARM_DESC(f1_idle_ms, "An engine with connected doorbells and no work for this long goes to F1, 0 = never (0-60000, default 0; one value per adapter)");

static bool no_64bit_atomics[NFENCE_MAX_ADAPTERS] = { false };
static unsigned int no_64bit_atomics_count = 1;
module_param_array(no_64bit_atomics, bool, &no_64bit_atomics_count, 0444);
MODULE_PARM_DESC(no_64bit_atomics, "Simulate a GPU that updates only 32 bits atomically (default N; one value per adapter)");

static unsigned int interrupt_payload[NFENCE_MAX_ADAPTERS] = { NFENCE_IRQ_FENCES };
static unsigned int interrupt_payload_count = 1;
module_param_array(interrupt_payload, uint, &interrupt_payload_count, 0444);
MODULE_PARM_DESC(interrupt_payload, "Native fence signaled interrupt payload: 0 = signaled fences, 1 = none (scan every fence), 2 = the hardware queue (optimized, reads its signal log) (default 0; one value per adapter)");

static bool peer_signals[NFENCE_MAX_ADAPTERS];
static unsigned int peer_signals_count = 1;
module_param_array(peer_signals, bool, &peer_signals_count, 0444);
MODULE_PARM_DESC(peer_signals, "The GPU passes cross-adapter fence signals to other GPUs with peer signals itself, without the CPU (default N; one value per adapter)");

#define NFENCE_PARAM_COUNT(name)	{ #name, &name##_count }

static const struct {
	const char *name;
	const unsigned int *count;
} nfence_adapter_params[] = {
	NFENCE_PARAM_COUNT(num_engines),
	NFENCE_PARAM_COUNT(vram_mb),
	NFENCE_PARAM_COUNT(vram_visible_mb),
	NFENCE_PARAM_COUNT(sysmem_mb),
	NFENCE_PARAM_COUNT(client_vram_mb),
	NFENCE_PARAM_COUNT(client_sysmem_mb),
	NFENCE_PARAM_COUNT(client_fences),
	NFENCE_PARAM_COUNT(native_fences),
	NFENCE_PARAM_COUNT(optimized_default_fence),
	NFENCE_PARAM_COUNT(user_mode_submission),
	NFENCE_PARAM_COUNT(doorbell_model),
	NFENCE_PARAM_COUNT(num_doorbells),
	NFENCE_PARAM_COUNT(tdr_timeout_ms),
	NFENCE_PARAM_COUNT(f1_idle_ms),
	NFENCE_PARAM_COUNT(no_64bit_atomics),
	NFENCE_PARAM_COUNT(interrupt_payload),
	NFENCE_PARAM_COUNT(peer_signals),
};

/* Adapter @i's value of @name: its own, or the last one given. */
#define NFENCE_PARAM_AT(name, i)	((name)[min((i), (name##_count) - 1)])

static void nfence_params_config(u32 i, struct nfence_gpu_config *cfg)
{
	cfg->num_engines = NFENCE_PARAM_AT(num_engines, i);
	cfg->vram_size = (u64)NFENCE_PARAM_AT(vram_mb, i) << 20;
	cfg->vram_visible_size = (u64)NFENCE_PARAM_AT(vram_visible_mb, i) << 20;
	cfg->sysmem_size = (u64)NFENCE_PARAM_AT(sysmem_mb, i) << 20;
	cfg->client_vram_quota = (u64)NFENCE_PARAM_AT(client_vram_mb, i) << 20;
	cfg->client_sysmem_quota =
		(u64)NFENCE_PARAM_AT(client_sysmem_mb, i) << 20;
	cfg->client_fences = NFENCE_PARAM_AT(client_fences, i);
	cfg->native_fence = NFENCE_PARAM_AT(native_fences, i);
	cfg->optimized_default_fence =
		cfg->native_fence && NFENCE_PARAM_AT(optimized_default_fence, i);
	cfg->user_mode_submission = NFENCE_PARAM_AT(user_mode_submission, i);
	cfg->doorbell_model = NFENCE_PARAM_AT(doorbell_model, i);
	cfg->num_doorbells = NFENCE_PARAM_AT(num_doorbells, i);
	cfg->no_64bit_atomics = NFENCE_PARAM_AT(no_64bit_atomics, i);
	cfg->tdr_timeout_ms = NFENCE_PARAM_AT(tdr_timeout_ms, i);
	cfg->f1_idle_ms = NFENCE_PARAM_AT(f1_idle_ms, i);
	cfg->irq_payload = cfg->native_fence ?
			   NFENCE_PARAM_AT(interrupt_payload, i) :
			   NFENCE_IRQ_FENCES;
	cfg->peer_signals =
		cfg->native_fence && NFENCE_PARAM_AT(peer_signals, i);
}

/**
 * nfence_params_read - the adapter configurations module load was given
 * @cfgs: out: one configuration per adapter (at least %NFENCE_MAX_ADAPTERS)
 *
 * See "module parameters".
 *
 * Return: the number of adapters, or -EINVAL (logged) if the parameters
 * do not describe valid adapters.
 */
int nfence_params_read(struct nfence_gpu_config *cfgs)
{
	u32 i;

	if (!num_adapters || num_adapters > NFENCE_MAX_ADAPTERS) {
		pr_err("nfence: num_adapters must be 1-%d\n", NFENCE_MAX_ADAPTERS);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(nfence_adapter_params); i++) {
		unsigned int count = *nfence_adapter_params[i].count;

		if (!count || count > num_adapters) {
			pr_err("nfence: %s has %u values for %u adapters\n",
			       nfence_adapter_params[i].name, count,
			       num_adapters);
			return -EINVAL;
		}
	}
	for (i = 0; i < num_adapters; i++) {
		nfence_params_config(i, &cfgs[i]);
		if (nfence_gpu_config_validate(&cfgs[i])) {
			pr_err("nfence: invalid configuration for adapter %u\n",
			       i);
			return -EINVAL;
		}
	}
	return num_adapters;
}
