/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The nfence authors
 *
 * Reading libnfence's USDT probes for nfence-trace: the ELF notes that
 * <sys/sdt.h> leaves in the library (.note.stapsdt, note type 3, owner
 * "stapsdt": the probe's address, the address of .stapsdt.base when the
 * note was written, the semaphore's, then provider, name and arguments
 * as NUL-terminated strings), turned into what tracefs's uprobe_events
 * takes: a file offset and fetch arguments. x86-64 only, as the driver.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfence-trace-usdt.h"

#define NT_STAPSDT	3

/* The probes nfence-trace records, and the names of their arguments. */
static const char *const probes[] = {
	"fence_wait_queued", "fence_signal_queued",
};
static const char *const arg_names[] = {
	"handle", "kernel_handle", "value", "va",
};

/* x86-64 register names of <sys/sdt.h> operands to the kernel's. */
static const struct {
	const char *reg;	/* without the size forms */
	const char *kernel;
} regs[] = {
	{ "ax", "ax" }, { "bx", "bx" }, { "cx", "cx" }, { "dx", "dx" },
	{ "si", "si" }, { "di", "di" }, { "bp", "bp" }, { "sp", "sp" },
	{ "ip", "ip" },
};

/* "%rax", "%eax", "%ax", "%al", "%sil", "%r12d" ... to "ax", "r12". */
static const char *kernel_reg(const char *s, size_t len, char *buf,
			      size_t buflen)
{
	char r[8];
	unsigned int i, n;

	if (len < 2 || len >= sizeof(r) || s[0] != '%')
		return NULL;
	memcpy(r, s + 1, len - 1);
	r[len - 1] = '\0';
	/* r8 .. r15, with the b/w/d forms. */
	if (r[0] == 'r' && r[1] >= '0' && r[1] <= '9') {
		char *end;

		n = (unsigned int)strtoul(r + 1, &end, 10);
		if (n < 8 || n > 15 ||
		    (*end && (strchr("bwd", *end) == NULL || end[1])))
			return NULL;
		snprintf(buf, buflen, "r%u", n);
		return buf;
	}
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		const char *k = regs[i].reg;
		size_t l = strlen(r);

		/* rax eax ax; al (ax), sil dil bpl spl (si di bp sp) */
		if ((l == 3 && (r[0] == 'r' || r[0] == 'e') &&
		     !strcmp(r + 1, k)) || !strcmp(r, k) ||
		    (l == 2 && k[1] == 'x' && r[0] == k[0] && r[1] == 'l') ||
		    (l == 3 && k[1] != 'x' && r[2] == 'l' &&
		     !strncmp(r, k, 2))) {
			snprintf(buf, buflen, "%s", regs[i].kernel);
			return buf;
		}
	}
	return NULL;
}

int ntrace_usdt_arg(const char *sdt, char *out, size_t len)
{
	const char *at = strchr(sdt, '@'), *op, *paren;
	char reg[8], type[8];
	long size;
	char *end;

	if (!at)
		return -1;
	size = strtol(sdt, &end, 10);
	if (end != at)
		return -1;
	switch (size) {
	case 1: case 2: case 4: case 8:
	case -1: case -2: case -4: case -8:
		break;
	default:
		return -1;
	}
	snprintf(type, sizeof(type), "%c%ld", size < 0 ? 's' : 'u',
		 (size < 0 ? -size : size) * 8);
	op = at + 1;
	if (op[0] == '%') {
		if (!kernel_reg(op, strlen(op), reg, sizeof(reg)))
			return -1;
		snprintf(out, len, "%%%s:%s", reg, type);
		return 0;
	}
	if (op[0] == '$') {
		long long imm = strtoll(op + 1, &end, 0);

		if (end == op + 1 || *end)
			return -1;
		snprintf(out, len, "\\%lld:%s", imm, type);
		return 0;
	}
	/* OFFSET(%reg), OFFSET optional. */
	paren = strchr(op, '(');
	if (!paren || paren[strlen(paren) - 1] != ')') {
		return -1;
	} else {
		long long off = 0;

		if (paren != op) {
			off = strtoll(op, &end, 0);
			if (end != paren)
				return -1;
		}
		if (!kernel_reg(paren + 1, strlen(paren + 1) - 1, reg,
				sizeof(reg)))
			return -1;
		snprintf(out, len, "%+lld(%%%s):%s", off, reg, type);
	}
	return 0;
}

static int fail(char *why, size_t len, const char *fmt, const char *what)
{
	snprintf(why, len, fmt, what);
	return -1;
}

/* The file offset of virtual address @va, through the PT_LOAD holding it. */
static bool va_offset(const unsigned char *m, size_t size, uint64_t va,
		      uint64_t *off)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	unsigned int i;

	if (eh->e_phoff > size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff)
		return false;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)
			(m + eh->e_phoff + i * sizeof(Elf64_Phdr));

		if (ph->p_type == PT_LOAD && va >= ph->p_vaddr &&
		    va - ph->p_vaddr < ph->p_filesz) {
			*off = va - ph->p_vaddr + ph->p_offset;
			return true;
		}
	}
	return false;
}

/* Parse the notes of section @sh into @out; returns the count or -1. */
static int read_notes(const unsigned char *m, size_t size,
		      const Elf64_Shdr *sh, uint64_t base_addr,
		      struct ntrace_usdt *out, unsigned int max, char *why,
		      size_t why_len)
{
	uint64_t pos = sh->sh_offset, end = sh->sh_offset + sh->sh_size;
	unsigned int n = 0, i, k;

	if (sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
		return fail(why, why_len, "%s", ".note.stapsdt is cut short");
	while (pos + sizeof(Elf64_Nhdr) <= end) {
		const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(m + pos);
		uint64_t desc = pos + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
		uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);
		const char *s, *provider, *name, *args;
		uint64_t pc, note_base, off;
		char fetch[64], one[64];
		const char *p;
		size_t left;

		if (next > end || next <= pos)
			return fail(why, why_len, "%s", "a malformed note");
		pos = next;
		if (nh->n_type != NT_STAPSDT || nh->n_namesz != 8 ||
		    memcmp(m + (desc - 8), "stapsdt", 8) || nh->n_descsz < 27)
			continue;
		memcpy(&pc, m + desc, 8);
		memcpy(&note_base, m + desc + 8, 8);
		s = (const char *)m + desc + 24;
		left = nh->n_descsz - 24;
		provider = s;
		if (!memchr(provider, '\0', left))
			continue;
		name = provider + strlen(provider) + 1;
		if ((size_t)(name - s) >= left ||
		    !memchr(name, '\0', left - (size_t)(name - s)))
			continue;
		args = name + strlen(name) + 1;
		if ((size_t)(args - s) >= left ||
		    !memchr(args, '\0', left - (size_t)(args - s)))
			continue;
		if (strcmp(provider, "libnfence"))
			continue;
		for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			if (!strcmp(name, probes[i]))
				break;
		if (i == sizeof(probes) / sizeof(probes[0]))
			continue;
		if (n == max)
			return fail(why, why_len, "%s",
				    "more libnfence probes than expected");
		/* A prelinked file moved .stapsdt.base: move the probe too. */
		if (base_addr && note_base)
			pc += base_addr - note_base;
		if (!va_offset(m, size, pc, &off))
			return fail(why, why_len, "probe %s is in no loaded "
				    "segment", name);
		snprintf(out[n].event, sizeof(out[n].event), "nfence_%s", name);
		out[n].offset = off;
		out[n].fetch[0] = '\0';
		for (k = 0, p = args; *p; k++) {
			size_t l = strcspn(p, " ");

			if (k == sizeof(arg_names) / sizeof(arg_names[0]) ||
			    l >= sizeof(one))
				return fail(why, why_len, "probe %s has an "
					    "unknown argument list", name);
			memcpy(one, p, l);
			one[l] = '\0';
			if (ntrace_usdt_arg(one, fetch, sizeof(fetch)) < 0)
				return fail(why, why_len, "an argument this "
					    "reader does not know: %s", one);
			l = strlen(out[n].fetch);
			snprintf(out[n].fetch + l, sizeof(out[n].fetch) - l,
				 " %s=%s", arg_names[k], fetch);
			p += strcspn(p, " ");
			while (*p == ' ')
				p++;
		}
		if (k != sizeof(arg_names) / sizeof(arg_names[0]))
			return fail(why, why_len, "probe %s has an unknown "
				    "argument list", name);
		n++;
	}
	return (int)n;
}

int ntrace_usdt_read(const char *path, struct ntrace_usdt *out,
		     unsigned int max, char *why, size_t why_len)
{
	const Elf64_Shdr *notes = NULL;
	const Elf64_Ehdr *eh;
	const unsigned char *m;
	uint64_t base_addr = 0;
	struct stat st;
	unsigned int i;
	size_t size;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(why, why_len, "%s", strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(*eh)) {
		close(fd);
		return fail(why, why_len, "%s", "not an ELF file");
	}
	size = (size_t)st.st_size;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return fail(why, why_len, "%s", strerror(errno));
	eh = (const Elf64_Ehdr *)m;
	ret = -1;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64) {
		fail(why, why_len, "%s", "not an x86-64 ELF file");
		goto out;
	}
	if (eh->e_shoff > size || eh->e_shstrndx >= eh->e_shnum ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff) {
		fail(why, why_len, "%s", "bad section headers");
		goto out;
	}
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)
			(m + eh->e_shoff + i * sizeof(Elf64_Shdr));
		const Elf64_Shdr *strs = (const Elf64_Shdr *)
			(m + eh->e_shoff + eh->e_shstrndx * sizeof(Elf64_Shdr));
		const char *name;

		if (strs->sh_offset > size || sh->sh_name >= strs->sh_size ||
		    strs->sh_size > size - strs->sh_offset)
			continue;
		name = (const char *)m + strs->sh_offset + sh->sh_name;
		if (!memchr(name, '\0', strs->sh_size - sh->sh_name))
			continue;
		if (!strcmp(name, ".note.stapsdt") && sh->sh_type == SHT_NOTE)
			notes = sh;
		else if (!strcmp(name, ".stapsdt.base"))
			base_addr = sh->sh_addr;
	}
	ret = notes ? read_notes(m, size, notes, base_addr, out, max, why,
				 why_len) : 0;
out:
	munmap((void *)m, size);
	return ret;
}

int ntrace_usdt_library(char *path, size_t len)
{
	char buf[PATH_MAX];
	Dl_info info;
	void *sym;

	/*
	 * Any export of libnfence names its file; asked of the loader, as
	 * the address a program takes of a function may be its own PLT's.
	 */
	sym = dlsym(RTLD_DEFAULT, "NFenceCsInit");
	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, buf) || strlen(buf) >= len)
		return -1;
	memcpy(path, buf, strlen(buf) + 1);
	return 0;
}
