/* SPDX-License-Identifier: MIT */
/* sym.c - function symbols and their DWARF facts, through libdwfl. The only file that
 * includes libdw headers. Errors from libdwfl are turned into -errno here. */
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltrace/sym.h"
#include "calltrace/util.h"

/* libstdc++'s demangler (the C++ runtime is linked for it). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

enum sym_elf_check sym_check_elf(const char *path, const char **machine)
{
	unsigned char h[64];
	ssize_t n;
	uint16_t mach;
	uint16_t type;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return SYM_ELF_UNREADABLE;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 20 || memcmp(h, ELFMAG, SELFMAG) != 0)
		return SYM_ELF_NOT_ELF;
	if (h[EI_CLASS] != ELFCLASS64)
		return SYM_ELF_32BIT;
	memcpy(&type, h + 16, 2);
	memcpy(&mach, h + 18, 2);
	if (h[EI_DATA] != ELFDATA2LSB || mach != EM_X86_64) {
		if (machine) {
			switch (mach) {
			case EM_AARCH64: *machine = "aarch64"; break;
			case EM_ARM: *machine = "arm"; break;
			case EM_386: *machine = "i386"; break;
			case EM_RISCV: *machine = "riscv"; break;
			case EM_PPC64: *machine = "ppc64"; break;
			case EM_S390: *machine = "s390"; break;
			default: *machine = "another architecture"; break;
			}
		}
		return SYM_ELF_OTHER_ARCH;
	}
	if (n < 64)
		return SYM_ELF_NOT_ELF;
	if (type != ET_EXEC && type != ET_DYN)
		return SYM_ELF_NOT_EXEC;
	return SYM_ELF_OK;
}

/* What DWARF says about one subprogram. */
struct dw_func {
	uint64_t lowpc;
	const char *file;    /* borrowed from the Dwarf; copied before dwfl_end */
	int line;
	int arity;
};

struct dw_funcs {
	struct dw_func *v;
	size_t nr, cap;
	Dwarf_Addr bias;
};

static int count_params(Dwarf_Die *die)
{
	Dwarf_Die child;
	int n = 0;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		if (dwarf_tag(&child) == DW_TAG_formal_parameter)
			n++;
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static int collect_func(Dwarf_Die *die, void *arg)
{
	struct dw_funcs *fs = arg;
	struct dw_func *f;
	Dwarf_Addr lowpc;
	int line = 0;

	if (dwarf_lowpc(die, &lowpc) != 0 && dwarf_entrypc(die, &lowpc) != 0)
		return DWARF_CB_OK;
	xgrow(&fs->v, &fs->cap, fs->nr + 1, sizeof(*fs->v));
	f = &fs->v[fs->nr++];
	f->lowpc = lowpc + fs->bias;
	f->file = dwarf_decl_file(die);
	dwarf_decl_line(die, &line);
	f->line = line;
	f->arity = count_params(die);
	return DWARF_CB_OK;
}

static int cmp_dw(const void *a, const void *b)
{
	const struct dw_func *x = a, *y = b;

	return x->lowpc < y->lowpc ? -1 : x->lowpc > y->lowpc;
}

static const struct dw_func *find_dw(const struct dw_funcs *fs, uint64_t addr)
{
	size_t lo = 0, hi = fs->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (fs->v[mid].lowpc < addr)
			lo = mid + 1;
		else if (fs->v[mid].lowpc > addr)
			hi = mid;
		else
			return &fs->v[mid];
	}
	return NULL;
}

static int cmp_func(const void *a, const void *b)
{
	const struct sym_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address, prefer the longer body, then a name without '.' or '_' */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->name[0] == '_') - (y->name[0] == '_');
}

static char *demangle(const char *raw)
{
	int status = -1;
	char *d;

	if (raw[0] != '_' || raw[1] != 'Z')
		return xstrdup(raw);
	d = __cxa_demangle(raw, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return xstrdup(raw);
	}
	return d;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int sym_module_load(const char *path, struct sym_module **out)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	struct dw_funcs dws = { 0 };
	struct sym_module *m;
	Dwfl_Module *mod;
	Dwarf_Die *cu = NULL;
	GElf_Ehdr ehdr_mem, *ehdr;
	Elf *elf;
	GElf_Addr elf_bias;
	size_t cap = 0, n = 0;
	int nsyms, rc = 0;
	Dwfl *dwfl;

	/* Never reach for the network: debuginfod would be consulted if this were set. */
	unsetenv("DEBUGINFOD_URLS");
	dwfl = dwfl_begin(&callbacks);
	if (!dwfl)
		return -ENOMEM;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, base_name(path), path, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		dwfl_end(dwfl);
		return -EINVAL;
	}
	elf = dwfl_module_getelf(mod, &elf_bias);
	ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;
	if (!ehdr) {
		dwfl_end(dwfl);
		return -EINVAL;
	}

	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->base = xstrdup(base_name(path));
	m->is_dyn = ehdr->e_type == ET_DYN;
	m->entry = ehdr->e_entry;

	{
		Dwarf_Addr cubias;

		while ((cu = dwfl_module_nextcu(mod, cu, &cubias)) != NULL) {
			dws.bias = cubias;
			dwarf_getfuncs(cu, collect_func, &dws, 0);
		}
	}
	qsort(dws.v, dws.nr, sizeof(*dws.v), cmp_dw);

	nsyms = dwfl_module_getsymtab(mod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		const struct dw_func *dw;
		struct sym_func *f;

		if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size == 0)
			continue;
		xgrow(&m->funcs, &cap, n + 1, sizeof(*m->funcs));
		f = &m->funcs[n++];
		memset(f, 0, sizeof(*f));
		f->raw = xstrdup(name);
		f->name = demangle(name);
		f->addr = addr;
		f->size = sym.st_size;
		f->is_cold = strstr(name, ".cold") != NULL;
		dw = find_dw(&dws, addr);
		if (dw) {
			f->file = dw->file ? xstrdup(dw->file) : NULL;
			f->line = dw->line;
			f->arity = dw->arity;
		}
	}
	free(dws.v);
	dwfl_end(dwfl);

	/* One function per address: aliases (memcpy / __memcpy_...) share one probe. */
	qsort(m->funcs, n, sizeof(*m->funcs), cmp_func);
	m->nr_funcs = 0;
	for (size_t i = 0; i < n; i++) {
		if (m->nr_funcs && m->funcs[m->nr_funcs - 1].addr == m->funcs[i].addr) {
			free(m->funcs[i].name);
			free(m->funcs[i].raw);
			free(m->funcs[i].file);
			continue;
		}
		m->funcs[m->nr_funcs++] = m->funcs[i];
	}
	if (!m->nr_funcs)
		rc = -ENOENT;
	*out = m;
	return rc;
}

void sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_funcs; i++) {
		free(m->funcs[i].name);
		free(m->funcs[i].raw);
		free(m->funcs[i].file);
	}
	free(m->funcs);
	free(m->path);
	free(m->base);
	free(m);
}
