/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The nfence authors
 */
#ifndef __NFENCE_MMAP_H__
#define __NFENCE_MMAP_H__

#include <linux/mm.h>

/*
 * The driver's CPU mappings of kernel pages (fence values, allocations,
 * doorbell pages) insert their pages at mmap time with vm_insert_page(),
 * which makes the VMA VM_MIXEDMAP. drm_dev_unplug() (and MADV_DONTNEED)
 * zaps them; their fault handler puts @page back at the faulting address
 * the same way, as a normal refcounted page (get_user_pages() keeps
 * working), which vm_insert_page() allows from a fault once the VMA is
 * VM_MIXEDMAP.
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
