/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_MMAP_H__
#define __NFENCE_MMAP_H__

#include <linux/mm.h>

/*
 * The driver's CPU mappings of pages it owns alone (fence value pages,
 * system-memory allocations, a doorbell's status and last queued value
 * pages) insert them at mmap time with vm_insert_page(), which makes the
 * VMA VM_MIXEDMAP. drm_dev_unplug() (and MADV_DONTNEED) zaps them; their
 * fault handler puts @page back at the faulting address the same way, as
 * a normal refcounted page, which vm_insert_page() allows from a fault
 * once the VMA is VM_MIXEDMAP. get_user_pages() works on such a mapping:
 * the reference it takes keeps the page, which is freed, never handed to
 * anyone else, while referenced. Memory the driver recycles while a
 * mapping's page could still be referenced (VRAM, the physical doorbells)
 * is mapped VM_PFNMAP instead, with vmf_insert_pfn().
 */
static inline vm_fault_t nfence_vmf_insert_page(struct vm_fault *vmf,
						struct page *page)
{
	int err = vm_insert_page(vmf->vma, vmf->address, page);

	switch (err) {
	case 0:
	case -EBUSY:	/* another fault of the same address won */
		return VM_FAULT_NOPAGE;
	case -ENOMEM:
		return VM_FAULT_OOM;
	default:
		return VM_FAULT_SIGBUS;
	}
}

#endif /* __NFENCE_MMAP_H__ */
