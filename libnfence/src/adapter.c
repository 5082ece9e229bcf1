/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Adapters: D3DKMTEnumAdapters2/3, D3DKMTOpenAdapterFromLuid,
 * D3DKMTCloseAdapter, D3DKMTCloseDxCoreDevice and NFenceGetAdapterFd; the
 * queries of an adapter are in adapter_query.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"

#define NF_DRI_DIR		"/dev/dri"
#define NF_RENDER_PREFIX	"renderD"
#define NF_DRIVER_NAME		"nfence"

/*
 * The open adapters of the process, and every nf_adapter.refs. A forked
 * child starts with an empty list, as its handle table starts empty
 * (handle.c): its handles name nothing, and an adapter it opens gets a
 * render node file of its own, never the parent's. The inherited
 * nf_adapters stay reachable from the inherited handles' objects, and
 * their files stay open in the child (close-on-exec). A DRM file used by
 * two processes in turn also makes the DRM core (6.8 and later) hand it
 * over on every change of caller, an RCU grace period each time
 * (drm_file_update_pid()), which made a CPU wake between two processes
 * about a thousand times slower than a futex's.
 */
static pthread_mutex_t nf_adapters_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nf_adapter *nf_adapters;

static void nf_adapters_prefork(void)
{
	pthread_mutex_lock(&nf_adapters_lock);
}

static void nf_adapters_postfork(void)
{
	pthread_mutex_unlock(&nf_adapters_lock);
}

static void nf_adapters_child(void)
{
	nf_adapters = NULL;
	pthread_mutex_unlock(&nf_adapters_lock);
}

__attribute__((constructor))
static void nf_adapters_init(void)
{
	pthread_atfork(nf_adapters_prefork, nf_adapters_postfork,
		       nf_adapters_child);
}

static bool nf_luid_equal(const struct drm_nfence_query_adapter *info,
			  LUID luid)
{
	return info->luid_low == luid.LowPart &&
	       info->luid_high == (uint32_t)luid.HighPart;
}

static LUID nf_luid(const struct drm_nfence_query_adapter *info)
{
	LUID luid = {
		.LowPart = info->luid_low,
		.HighPart = (LONG)info->luid_high,
	};

	return luid;
}

void nf_adapter_get(struct nf_adapter *adapter)
{
	pthread_mutex_lock(&nf_adapters_lock);
	adapter->refs++;
	pthread_mutex_unlock(&nf_adapters_lock);
}

void nf_adapter_put(struct nf_adapter *adapter)
{
	struct nf_adapter **link;
	bool last;

	pthread_mutex_lock(&nf_adapters_lock);
	last = --adapter->refs == 0;
	if (last) {
		for (link = &nf_adapters; *link; link = &(*link)->next) {
			if (*link == adapter) {
				*link = adapter->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&nf_adapters_lock);

	if (last) {
		nf_fence_window_close(&adapter->window);
		close(adapter->fd);
		free(adapter);
	}
}

/* The open adapter with @luid, with a new reference, or NULL. */
static struct nf_adapter *nf_adapter_find(LUID luid)
{
	struct nf_adapter *a;

	pthread_mutex_lock(&nf_adapters_lock);
	for (a = nf_adapters; a; a = a->next) {
		if (nf_luid_equal(&a->info, luid)) {
			a->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&nf_adapters_lock);
	return a;
}

/*
 * nf_adapter_acquire() - the nf_adapter for a freshly opened render node
 * @fd described by @info, with a new reference. Takes over @fd: it becomes
 * the adapter's file, or is closed if the adapter is open already.
 */
static NTSTATUS nf_adapter_acquire(int fd,
				   const struct drm_nfence_query_adapter *info,
				   struct nf_adapter **out)
{
	struct nf_adapter *a, *fresh;
	NTSTATUS st = STATUS_SUCCESS;

	fresh = calloc(1, sizeof(*fresh));

	pthread_mutex_lock(&nf_adapters_lock);
	for (a = nf_adapters; a; a = a->next) {
		if (nf_luid_equal(&a->info, nf_luid(info))) {
			a->refs++;
			break;
		}
	}
	if (!a && fresh) {
		fresh->refs = 1;
		fresh->fd = fd;
		fresh->info = *info;
		/* Before the file is anyone's: no fence exists on it yet. */
		st = nf_fence_window_open(fd, &fresh->window);
		if (NT_SUCCESS(st)) {
			a = fresh;
			fresh = NULL;
			a->next = nf_adapters;
			nf_adapters = a;
			fd = -1;
		}
	}
	pthread_mutex_unlock(&nf_adapters_lock);

	free(fresh);
	if (fd >= 0)
		close(fd);
	*out = a;
	if (!a && NT_SUCCESS(st))
		st = STATUS_NO_MEMORY;
	return st;
}

static void nf_adapter_handle_release(struct nf_object *obj)
{
	struct nf_adapter_handle *ah = (struct nf_adapter_handle *)obj;

	nf_adapter_put(ah->adapter);
	free(ah);
}

static const struct nf_object_ops nf_adapter_handle_ops = {
	.type = NF_HANDLE_ADAPTER,
	.release = nf_adapter_handle_release,
};

/* A new adapter handle for @adapter; takes over the caller's reference. */
static NTSTATUS nf_adapter_open_handle(struct nf_adapter *adapter,
				       D3DKMT_HANDLE *handle)
{
	struct nf_adapter_handle *ah;
	NTSTATUS st;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		nf_adapter_put(adapter);
		return STATUS_NO_MEMORY;
	}
	nf_object_init(&ah->base, &nf_adapter_handle_ops, NULL);
	ah->adapter = adapter;

	st = nf_handle_insert(&ah->base, handle);
	/* On success the table holds the handle's reference. */
	nf_object_put(&ah->base);
	return st;
}

static NTSTATUS nf_adapter_close_handle(D3DKMT_HANDLE handle)
{
	return nf_handle_close(handle, NF_HANDLE_ADAPTER);
}

struct nf_adapter *nf_adapter_lookup(D3DKMT_HANDLE handle)
{
	struct nf_object *obj = nf_handle_lookup(handle, NF_HANDLE_ADAPTER);
	struct nf_adapter *a;

	if (!obj)
		return NULL;
	a = ((struct nf_adapter_handle *)obj)->adapter;
	nf_adapter_get(a);
	nf_object_put(obj);
	return a;
}

/* A render node found by a scan, not yet an nf_adapter. */
struct nf_probe {
	int fd;
	struct drm_nfence_query_adapter info;
};

static void nf_probes_free(struct nf_probe *probes, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (probes[i].fd >= 0)
			close(probes[i].fd);
	free(probes);
}

static int nf_probe_cmp(const void *a, const void *b)
{
	const struct nf_probe *pa = a, *pb = b;

	return (pa->info.index > pb->info.index) -
	       (pa->info.index < pb->info.index);
}

/*
 * Whether an error opening a render node is the process's, not the
 * node's: out of file descriptors or memory. The scan cannot tell an
 * nfence node from another driver's before it opens it, so whatever else
 * an open says (the node went away, has no driver, may not be opened,
 * another driver refused it) only makes the node one this process cannot
 * use.
 */
static bool nf_scan_fatal(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

/*
 * Whether the node open at @fd is driven by nfence: DRM's VERSION ioctl
 * into a buffer of our own (nothing allocated). A node that refuses the
 * ioctl is no DRM device, or a lost one: not ours either way.
 */
static bool nf_is_nfence(int fd)
{
	char name[sizeof(NF_DRIVER_NAME) + 1];
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name);
	if (nf_ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	return v.name_len == strlen(NF_DRIVER_NAME) &&
	       !memcmp(name, NF_DRIVER_NAME, strlen(NF_DRIVER_NAME));
}

/*
 * nf_scan() - open every nfence render node of the DRI directory (or of
 * $NFENCE_DRI_DIR) and read its adapter info; sorted by adapter index, one
 * entry per LUID. A missing directory means no adapter. A node is skipped
 * if it cannot be opened, is not nfence's or its adapter query fails, but
 * not for want of file descriptors or memory (nf_scan_fatal(),
 * STATUS_NO_MEMORY and STATUS_INSUFFICIENT_RESOURCES from the query): that
 * fails the scan with its status, so that a process at its limits is not
 * told that there are fewer adapters.
 */
static NTSTATUS nf_scan(struct nf_probe **out, unsigned int *count)
{
	const char *path = secure_getenv("NFENCE_DRI_DIR");
	struct nf_probe *probes = NULL, *p;
	unsigned int n = 0, cap = 0, i;
	struct drm_nfence_query_adapter info;
	NTSTATUS st = STATUS_SUCCESS;
	struct dirent *de;
	DIR *dir;
	int fd;

	if (!path || !*path)
		path = NF_DRI_DIR;
	dir = opendir(path);
	if (!dir) {
		*out = NULL;
		*count = 0;
		if (errno == ENOENT || errno == ENOTDIR)
			return STATUS_SUCCESS;
		return NFenceStatusFromErrno(errno);
	}

	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, NF_RENDER_PREFIX,
			    strlen(NF_RENDER_PREFIX)))
			continue;
		fd = openat(dirfd(dir), de->d_name, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (!nf_scan_fatal(errno))
				continue;
			st = NFenceStatusFromErrno(errno);
			break;
		}
		if (!nf_is_nfence(fd)) {
			close(fd);
			continue;
		}
		st = nf_query_fixed(fd, DRM_NFENCE_QUERY_ADAPTER, &info,
				    sizeof(info));
		if (!NT_SUCCESS(st)) {
			close(fd);
			if (st == STATUS_NO_MEMORY ||
			    st == STATUS_INSUFFICIENT_RESOURCES)
				break;
			st = STATUS_SUCCESS;
			continue;
		}
		/* The same adapter twice (a link): keep the first. */
		for (i = 0; i < n; i++)
			if (nf_luid_equal(&probes[i].info, nf_luid(&info)))
				break;
		if (i < n) {
			close(fd);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			p = reallocarray(probes, cap, sizeof(*probes));
			if (!p) {
				close(fd);
				st = STATUS_NO_MEMORY;
				break;
			}
			probes = p;
		}
		probes[n].fd = fd;
		probes[n].info = info;
		n++;
	}
	closedir(dir);

	if (!NT_SUCCESS(st)) {
		nf_probes_free(probes, n);
		return st;
	}
	if (n)
		qsort(probes, n, sizeof(*probes), nf_probe_cmp);
	*out = probes;
	*count = n;
	return STATUS_SUCCESS;
}

/* The filter bits Windows defines: IncludeComputeOnly, IncludeDisplayOnly. */
#define NF_ENUM_FILTER_KNOWN	0x3ull

/*
 * nf_enum_adapters() - D3DKMTEnumAdapters2() on its fields: @num (in: the
 * room at @adapters; out: the count), @adapters (NULL to only count).
 */
static NTSTATUS nf_enum_adapters(ULONG *num, D3DKMT_ADAPTERINFO *adapters)
{
	D3DKMT_ADAPTERINFO *infos = NULL;
	struct nf_probe *probes;
	struct nf_adapter *a;
	unsigned int n, i, j;
	NTSTATUS st;

	st = nf_scan(&probes, &n);
	if (!NT_SUCCESS(st))
		return st;

	if (!adapters || *num < n) {
		st = adapters ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
		*num = n;
		goto out;
	}

	/* Fill a copy, so a failure leaves the caller's array untouched. */
	if (n) {
		infos = calloc(n, sizeof(*infos));
		if (!infos) {
			st = STATUS_NO_MEMORY;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		st = nf_adapter_acquire(probes[i].fd, &probes[i].info, &a);
		probes[i].fd = -1;
		if (NT_SUCCESS(st))
			st = nf_adapter_open_handle(a, &infos[i].hAdapter);
		if (!NT_SUCCESS(st)) {
			for (j = 0; j < i; j++)
				nf_adapter_close_handle(infos[j].hAdapter);
			goto out;
		}
		infos[i].AdapterLuid = nf_luid(&probes[i].info);
		infos[i].NumOfSources = 0;
		infos[i].bPrecisePresentRegionsPreferred = FALSE;
	}
	if (n)
		memcpy(adapters, infos, n * sizeof(*infos));
	*num = n;
	st = STATUS_SUCCESS;
out:
	free(infos);
	nf_probes_free(probes, n);
	return st;
}

NTSTATUS D3DKMTEnumAdapters2(D3DKMT_ENUMADAPTERS2 *pEnumAdapters)
{
	if (!pEnumAdapters)
		return STATUS_INVALID_PARAMETER;
	return nf_enum_adapters(&pEnumAdapters->NumAdapters,
				pEnumAdapters->pAdapters);
}

/*
 * Every nfence adapter renders: the filter only adds compute-only and
 * display-only adapters, of which nfence has none.
 */
NTSTATUS D3DKMTEnumAdapters3(D3DKMT_ENUMADAPTERS3 *pEnumAdapters)
{
	if (!pEnumAdapters ||
	    (pEnumAdapters->Filter.Value & ~NF_ENUM_FILTER_KNOWN))
		return STATUS_INVALID_PARAMETER;
	return nf_enum_adapters(&pEnumAdapters->NumAdapters,
				pEnumAdapters->pAdapters);
}

NTSTATUS D3DKMTOpenAdapterFromLuid(D3DKMT_OPENADAPTERFROMLUID *pAdapter)
{
	struct nf_probe *probes;
	struct nf_adapter *a;
	unsigned int n, i;
	NTSTATUS st;

	if (!pAdapter)
		return STATUS_INVALID_PARAMETER;

	a = nf_adapter_find(pAdapter->AdapterLuid);
	if (!a) {
		st = nf_scan(&probes, &n);
		if (!NT_SUCCESS(st))
			return st;
		for (i = 0; i < n; i++)
			if (nf_luid_equal(&probes[i].info,
					  pAdapter->AdapterLuid))
				break;
		if (i == n) {
			st = STATUS_INVALID_PARAMETER;
		} else {
			st = nf_adapter_acquire(probes[i].fd, &probes[i].info,
						&a);
			probes[i].fd = -1;
		}
		nf_probes_free(probes, n);
		if (!NT_SUCCESS(st))
			return st;
	}

	return nf_adapter_open_handle(a, &pAdapter->hAdapter);
}

NTSTATUS D3DKMTCloseAdapter(const D3DKMT_CLOSEADAPTER *pAdapter)
{
	if (!pAdapter)
		return STATUS_INVALID_PARAMETER;
	return nf_adapter_close_handle(pAdapter->hAdapter);
}

int NFenceGetAdapterFd(D3DKMT_HANDLE hAdapter)
{
	struct nf_adapter *a = nf_adapter_lookup(hAdapter);
	int fd;

	if (!a) {
		errno = EBADF;
		return -1;
	}
	/* The handle's own reference keeps the file open after this put. */
	fd = a->fd;
	nf_adapter_put(a);
	return fd;
}

/*
 * D3DKMTCloseDxCoreDevice is "reserved for system use" in Microsoft's
 * reference; by its name, libdxg closes there the /dev/dxg file its calls
 * go through. libnfence has no process-wide file: every open adapter keeps
 * its own render node file until D3DKMTCloseAdapter, so there is nothing
 * to close, and open adapters stay usable.
 */
VOID D3DKMTCloseDxCoreDevice(VOID)
{
}
