// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The nfence authors
 */

#include <linux/device.h>
#include <linux/platform_device.h>
#include <linux/pm_runtime.h>

#include "nfence_adapter.h"
#include "nfence_cmp.h"
#include "nfence_doorbell.h"
#include "nfence_pm.h"

/**
 * DOC: adapter power
 *
 * An adapter goes from D0 to D3 through the kernel's runtime PM on its
 * platform device, with autosuspend: /sys/devices/platform/nfence.N/power/
 * ``control`` (``on`` by default: never suspend; ``auto`` allows it),
 * ``autosuspend_delay_ms`` (1000 by default) and ``runtime_status``.
 *
 * The CMP tells runtime PM when the adapter has become idle (no doorbell
 * watched, no WORK running, no queue with anything queued) each time it
 * goes to sleep that way (&nfence_cmp_ops.adapter_idle); kernel-mode
 * submissions, DOORBELL_CONNECT and DOORBELL_NOTIFY hold a runtime PM
 * reference while they run, so they wake a suspended adapter first.
 *
 * The D0 to D3 transition follows WDDM: the CMP takes every queue off
 * the hardware scheduler (nfence_cmp_d3_enter(), refused with -EBUSY if
 * the adapter is not idle), every connected doorbell is disconnected with
 * DISCONNECTED_RETRY and its mappings go back to its dummy page, with a
 * last look at each physical doorbell; if that look found work the
 * transition is undone (-EBUSY, and the next idle CMP asks again). In D3
 * the CMP runs nothing and watches nothing, and costs nothing. The
 * process that next writes work sees DISCONNECTED_RETRY and calls
 * D3DKMTConnectDoorbell, which resumes the adapter (D3 to D0: queues run
 * again) and connects its doorbell. Doorbells of other queues stay
 * disconnected until their processes connect them. A context's own
 * suspended state (CONTEXT_CONTROL) is not touched: D3 holds the runlists
 * as a whole.
 *
 * Runtime PM calls are made holding none of the driver's locks; the
 * callbacks take &nfence_adapter.doorbell_lock and &nfence_cmp.lock.
 */

#define NFENCE_PM_AUTOSUSPEND_MS	1000

static int nfence_pm_runtime_suspend(struct device *dev)
{
	struct nfence_adapter *adapter = dev_get_drvdata(dev);
	int ret;

	ret = nfence_cmp_d3_enter(&adapter->cmp);
	if (ret)
		return ret;
	nfence_doorbell_adapter_d3(adapter);
	return nfence_cmp_d3_commit(&adapter->cmp);
}

static int nfence_pm_runtime_resume(struct device *dev)
{
	struct nfence_adapter *adapter = dev_get_drvdata(dev);

	nfence_cmp_d3_exit(&adapter->cmp);
	return 0;
}

/* The platform driver's power management callbacks. */
const struct dev_pm_ops nfence_pm_ops = {
	RUNTIME_PM_OPS(nfence_pm_runtime_suspend, nfence_pm_runtime_resume,
		       NULL)
};

/**
 * nfence_pm_init - enable runtime PM on a probed adapter
 * @adapter: the adapter, its platform device's drvdata already set
 *
 * Active, autosuspend after %NFENCE_PM_AUTOSUSPEND_MS, and forbidden
 * until user space writes ``auto`` to the device's power/control. Runtime
 * PM is disabled again when the device is unbound.
 *
 * Return: 0 or -errno.
 */
int nfence_pm_init(struct nfence_adapter *adapter)
{
	struct device *dev = &adapter->pdev->dev;
	int ret;

	pm_runtime_set_autosuspend_delay(dev, NFENCE_PM_AUTOSUSPEND_MS);
	pm_runtime_use_autosuspend(dev);
	ret = pm_runtime_set_active(dev);
	if (ret)
		return ret;
	ret = devm_pm_runtime_enable(dev);
	if (ret)
		return ret;
	pm_runtime_forbid(dev);
	return 0;
}
