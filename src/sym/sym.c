/* SPDX-License-Identifier: MIT */
/* sym.c - function symbols and their DWARF facts, through libdwfl. The only file that
 * includes libdw headers. Errors from libdwfl are turned into -errno here.
 *
 * Without a .symtab (a stripped file), libdwfl falls back to .dynsym, which names only
 * exported functions. The rest are found from the .eh_frame FDEs: every FDE whose start
 * is not inside a symbol's range becomes a function named fn_0x<file address>, sized by
 * its address_range. An FDE whose first row is not a function entry (CFA other than
 * rsp+8: a .cold part entered by a jump, a signal trampoline) is kept as a cold part so
 * that no entry probe is planted there. Functions with no FDE (crt helpers, some
 * assembly) cannot be found this way. Of these, main is named back from glibc's _start
 * (guess_main), so that -f main works on a stripped executable. */
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
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

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Order by address; at one address the first is the name reported for it: the longer
 * body, then a global symbol over a local alias (libc's __GI_ names), then the fewest
 * leading underscores, then the shortest name ("cbrt" over "cbrtf64"), then by name. */
static int cmp_func(const void *a, const void *b)
{
	const struct sym_func *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->is_global != y->is_global)
		return x->is_global ? -1 : 1;
	ux = leading_underscores(x->raw);
	uy = leading_underscores(y->raw);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->raw);
	ly = strlen(y->raw);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->raw, y->raw);
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

/* The name to report: demangled, without a symbol version ("clock_nanosleep@@GLIBC_2.17"
 * in glibc's debug symbols is clock_nanosleep). raw keeps the symbol as it is. */
static char *display_name(const char *raw)
{
	const char *at = raw[0] ? strchr(raw + 1, '@') : NULL;
	char *plain, *name;

	if (!at)
		return demangle(raw);
	plain = xstrdup(raw);
	plain[at - raw] = 0;
	name = demangle(plain);
	free(plain);
	return name;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Functions from .eh_frame ---------------------------------------------------------- */

/* A section the FDE starts are checked against. */
struct cfi_scn {
	uint64_t lo, hi;
	bool excluded;       /* PLT stubs, .init/.fini: never functions to trace */
};

struct cfi_walk {
	const unsigned char *ident;   /* e_ident, for dwarf_next_cfi */
	Elf_Data *data;
	uint64_t eh_addr;    /* .eh_frame's sh_addr */
	struct cfi_scn *scns;     /* executable sections */
	size_t nr_scns;
};

/* Sections whose FDEs are dropped. .init and .fini are left out too: with a symbol
 * table their _init/_fini symbols have size 0 and are never traced, so a stripped file
 * behaves the same. */
static bool scn_excluded(const char *name)
{
	static const char *const names[] = { ".plt", ".plt.got", ".plt.sec", ".init", ".fini" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~(uint64_t)0 << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

/* Read a DW_EH_PE-encoded value at *@p; @field is the address of *@p in the file, for
 * pcrel. @apply is false for address_range (format only). Supported: absptr, [us]data2,
 * [us]data4, [us]data8, [us]leb128, each absolute or pcrel. datarel, textrel, funcrel,
 * aligned and indirect are refused (x86-64 toolchains do not use them for FDE addresses;
 * libgcc's x86-64 unwinder has no data base for them). */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field,
			 bool apply, uint64_t *out)
{
	uint64_t v;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (end - *p < 8)
			return false;
		memcpy(&v, *p, 8);
		*p += 8;
		break;
	case DW_EH_PE_udata4: {
		uint32_t u;

		if (end - *p < 4)
			return false;
		memcpy(&u, *p, 4);
		*p += 4;
		v = u;
		break;
	}
	case DW_EH_PE_sdata4: {
		int32_t d;

		if (end - *p < 4)
			return false;
		memcpy(&d, *p, 4);
		*p += 4;
		v = (uint64_t)(int64_t)d;
		break;
	}
	case DW_EH_PE_udata2: {
		uint16_t u;

		if (end - *p < 2)
			return false;
		memcpy(&u, *p, 2);
		*p += 2;
		v = u;
		break;
	}
	case DW_EH_PE_sdata2: {
		int16_t d;

		if (end - *p < 2)
			return false;
		memcpy(&d, *p, 2);
		*p += 2;
		v = (uint64_t)(int64_t)d;
		break;
	}
	case DW_EH_PE_uleb128:
		if (!read_uleb(p, end, &v))
			return false;
		break;
	case DW_EH_PE_sleb128: {
		int64_t d;

		if (!read_sleb(p, end, &d))
			return false;
		v = (uint64_t)d;
		break;
	}
	default:
		return false;
	}
	if (apply) {
		switch (enc & 0x70) {
		case 0:
			break;
		case DW_EH_PE_pcrel:
			v += field;
			break;
		default:
			return false;
		}
	}
	*out = v;
	return true;
}

/* The FDE pointer encoding of @cie (its 'R' augmentation), or -1 if it cannot be told. */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	uint64_t skip;

	if (!a || a[0] == '\0')
		return DW_EH_PE_absptr;
	if (a[0] != 'z' || !p)
		return -1;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			return p < end ? *p : -1;
		case 'L':
			if (p >= end)
				return -1;
			p++;
			break;
		case 'P':
			if (p >= end)
				return -1;
			/* the personality pointer: skip it by its format */
			if (!read_encoded(&p, end, (uint8_t)(*p++ & 0x0f), 0, false, &skip))
				return -1;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

/* Decode one FDE's [start, start + range). false: skip it. */
static bool fde_range(const struct cfi_walk *w, const Dwarf_FDE *fde, uint64_t *start,
		      uint64_t *range)
{
	Dwarf_CFI_Entry cie;
	Dwarf_Off next;
	const uint8_t *p = fde->start;
	const uint8_t *base = w->data->d_buf;
	int enc;

	if (dwarf_next_cfi(w->ident, w->data, true, fde->CIE_pointer, &next, &cie) != 0 ||
	    !dwarf_cfi_cie_p(&cie))
		return false;
	enc = cie_fde_encoding(&cie.cie);
	if (enc < 0)
		return false;
	if (!read_encoded(&p, fde->end, (uint8_t)enc, w->eh_addr + (uint64_t)(p - base), true,
			  start))
		return false;
	if (!read_encoded(&p, fde->end, (uint8_t)(enc & 0x0f), 0, false, range))
		return false;
	return *range != 0;
}

/* The executable section holding @addr, or NULL. */
static const struct cfi_scn *scn_of(const struct cfi_walk *w, uint64_t addr)
{
	for (size_t i = 0; i < w->nr_scns; i++)
		if (addr >= w->scns[i].lo && addr < w->scns[i].hi)
			return &w->scns[i];
	return NULL;
}

/* Whether the first CFI row at @addr is a function entry: CFA = rsp + 8, the return
 * address just pushed by a call. */
static bool cfi_is_entry(Dwarf_CFI *cfi, uint64_t addr)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	bool entry = true;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return true;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0)
		entry = nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == 7 &&
			ops[0].number2 == 8;
	free(frame);
	return entry;
}

/* Index of the last of @funcs[0..@n) (sorted by address) with addr <= @addr, or n. */
static size_t func_at_or_before(const struct sym_func *funcs, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

/* Add to m->funcs[0..*n) (sorted by address, capacity *cap) a function for every FDE of
 * @elf's .eh_frame whose start is in no function's range; @bias is added to file
 * addresses as libdwfl adds it to symbols. DWARF facts come from @dws when there are
 * any. Returns how many were added. */
static size_t add_cfi_funcs(struct sym_module *m, size_t *n, size_t *cap, Elf *elf,
			    GElf_Addr bias, const struct dw_funcs *dws)
{
	struct cfi_walk w = { 0 };
	size_t nsym = *n, shstrndx, added = 0, scap = 0;
	uint64_t *max_end = NULL;
	Dwarf_CFI *cfi;
	Elf_Scn *scn = NULL;
	Elf_Scn *eh = NULL;
	Dwarf_Off off = 0, next;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh_mem, *sh = gelf_getshdr(scn, &sh_mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (!name)
			continue;
		if (strcmp(name, ".eh_frame") == 0 && sh->sh_type == SHT_PROGBITS) {
			eh = scn;
			w.eh_addr = sh->sh_addr;
		}
		if (!(sh->sh_flags & SHF_EXECINSTR) || !(sh->sh_flags & SHF_ALLOC))
			continue;
		xgrow(&w.scns, &scap, w.nr_scns + 1, sizeof(*w.scns));
		w.scns[w.nr_scns++] = (struct cfi_scn){
			.lo = sh->sh_addr,
			.hi = sh->sh_addr + sh->sh_size,
			.excluded = scn_excluded(name),
		};
	}
	w.ident = (const unsigned char *)elf_getident(elf, NULL);
	w.data = eh ? elf_getdata(eh, NULL) : NULL;
	if (!w.ident || !w.data || !w.data->d_buf || !w.data->d_size) {
		free(w.scns);
		return 0;
	}

	/* max_end[i]: the furthest end of funcs[0..i], so a start inside any earlier
	 * (possibly nested) symbol is seen. */
	max_end = xcalloc(nsym ? nsym : 1, sizeof(*max_end));
	for (size_t i = 0; i < nsym; i++) {
		uint64_t end = m->funcs[i].addr + m->funcs[i].size;

		max_end[i] = i && max_end[i - 1] > end ? max_end[i - 1] : end;
	}

	cfi = dwarf_getcfi_elf(elf);
	for (; off != (Dwarf_Off)-1; off = next) {
		Dwarf_CFI_Entry e;
		const struct cfi_scn *in;
		uint64_t start, range;
		size_t k;
		struct sym_func *f;
		const struct dw_func *dw;
		int r;

		next = (Dwarf_Off)-1;
		r = dwarf_next_cfi(w.ident, w.data, true, off, &next, &e);
		if (r > 0)
			break;
		if (r < 0) {
			/* skippable only if libdw moved past the entry */
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			continue;
		}
		if (dwarf_cfi_cie_p(&e) || !fde_range(&w, &e.fde, &start, &range))
			continue;
		in = scn_of(&w, start);
		if (!in || in->excluded)
			continue;
		if (range > in->hi - start)
			range = in->hi - start;
		start += bias;
		k = func_at_or_before(m->funcs, nsym, start);
		if (k < nsym && max_end[k] > start)
			continue;                       /* inside a symbol: never split it */
		k = k < nsym ? k + 1 : 0;               /* the next symbol after start */
		if (k < nsym && m->funcs[k].addr < start + range)
			range = m->funcs[k].addr - start; /* never overlap one either */

		xgrow(&m->funcs, cap, *n + 1, sizeof(*m->funcs));
		f = &m->funcs[(*n)++];
		memset(f, 0, sizeof(*f));
		f->addr = start;
		f->size = range;
		f->from_cfi = true;
		f->is_cold = !cfi_is_entry(cfi, start - bias);
		/* the engine takes a cold part's owner from the text before ".cold" */
		f->raw = f->is_cold ? xasprintf("fn_0x%" PRIx64 ".cold", start - bias)
				    : xasprintf("fn_0x%" PRIx64, start - bias);
		f->name = xstrdup(f->raw);
		dw = find_dw(dws, start);
		if (dw) {
			f->file = dw->file ? xstrdup(dw->file) : NULL;
			f->line = dw->line;
			f->arity = dw->arity;
		}
		added++;
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	free(max_end);
	free(w.scns);
	return added;
}

/* Whether @elf has a .symtab section. */
static bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh_mem, *sh = gelf_getshdr(scn, &sh_mem);

		if (sh && sh->sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* Whether @elf has a section named @name. */
static bool elf_has_scn(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh_mem, *sh = gelf_getshdr(scn, &sh_mem);
		const char *s = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (s && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

/* main from glibc's _start ----------------------------------------------------------- */

/* How many bytes at e_entry are looked at: glibc's _start reaches its call to
 * __libc_start_main in 27 bytes (2.36), 41 with the older __libc_csu_* arguments. */
#define START_SCAN 64

/* Copy @len bytes at file virtual address @vaddr from @elf's PT_LOAD file contents.
 * false if they are not all in one segment's file image (e.g. in .bss). */
static bool elf_read_vaddr(Elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	size_t nph, size;
	const char *raw = elf_rawfile(elf, &size);

	if (!raw || elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph_mem, *ph = gelf_getphdr(elf, (int)i, &ph_mem);

		if (!ph || ph->p_type != PT_LOAD || vaddr < ph->p_vaddr ||
		    vaddr - ph->p_vaddr > ph->p_filesz || len > ph->p_filesz - (vaddr - ph->p_vaddr))
			continue;
		if (ph->p_offset + (vaddr - ph->p_vaddr) + len > size)
			return false;
		memcpy(buf, raw + ph->p_offset + (vaddr - ph->p_vaddr), len);
		return true;
	}
	return false;
}

/* The addend of an R_X86_64_RELATIVE relocation at @slot in @elf's dynamic RELA
 * sections (.rela.dyn), for a GOT slot whose file content is 0: the linker is not
 * required to store the value there (lld does not, by default). */
static bool rela_relative_at(Elf *elf, uint64_t slot, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh_mem, *sh = gelf_getshdr(scn, &sh_mem);
		Elf_Data *data;

		if (!sh || sh->sh_type != SHT_RELA || !(sh->sh_flags & SHF_ALLOC) ||
		    !sh->sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
			GElf_Rela r_mem, *r = gelf_getrela(data, (int)i, &r_mem);

			if (r && r->r_offset == slot &&
			    GELF_R_TYPE(r->r_info) == R_X86_64_RELATIVE) {
				*value = (uint64_t)r->r_addend;
				return true;
			}
		}
	}
	return false;
}

/* Read the 8-byte pointer at @slot (file address), through its relocation if the
 * file holds 0 there. */
static bool got_slot_value(Elf *elf, uint64_t slot, uint64_t *value)
{
	uint64_t v;

	if (!elf_read_vaddr(elf, slot, &v, sizeof(v)))
		return false;
	if (v == 0)
		return rela_relative_at(elf, slot, value);
	*value = v;
	return true;
}

/* 7-byte instructions with a 32-bit operand that glibc's _start uses for other
 * arguments (older glibc: __libc_csu_fini in %r8, __libc_csu_init in %rcx). Skipped
 * whole, so an e8 byte in their operand is not taken for a call. */
static bool start_skippable(const uint8_t *p)
{
	static const uint8_t ops[][3] = {
		{ 0x49, 0xc7, 0xc0 }, { 0x48, 0xc7, 0xc1 },   /* mov $imm32, %r8 / %rcx */
		{ 0x4c, 0x8b, 0x05 }, { 0x48, 0x8b, 0x0d },   /* mov x(%rip), %r8 / %rcx */
		{ 0x4c, 0x8d, 0x05 }, { 0x48, 0x8d, 0x0d },   /* lea x(%rip), %r8 / %rcx */
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (memcmp(p, ops[i], 3) == 0)
			return true;
	return false;
}

/* The address glibc's _start (at @elf's e_entry @entry) passes to __libc_start_main in
 * %rdi, i.e. main, as a file address. A heuristic for glibc's x86-64 crt1 (start.S),
 * not a decoder: the entry must begin with xor %ebp,%ebp (the ABI's outermost-frame
 * mark, start.S's first instruction), then the bytes up to the first call (e8,
 * ff 15) or jmp * (ff 25) are scanned at every offset for the writes to %rdi seen in
 * glibc's _start, and the last one wins:
 *   48 c7 c7 imm32   mov $imm32, %rdi (sign-extended): -no-pie, static
 *   bf imm32         mov $imm32, %edi (zero-extended)
 *   48 8d 3d disp32  lea main(%rip), %rdi: PIE and static-pie after ld relaxed the GOT
 *                    load (binutils 2.40, the default)
 *   48 8b 3d disp32  mov main@GOTPCREL(%rip), %rdi: unrelaxed (-Wl,--no-relax, other
 *                    linkers); the GOT slot is read from the file, or from its
 *                    R_X86_64_RELATIVE relocation when the file holds 0
 * A wrong guess cannot pass silently: the caller accepts it only if it is exactly the
 * start of a function found from .eh_frame. tests/unit/check_sym.c main_guess_* */
static bool guess_main(Elf *elf, uint64_t entry, uint64_t *main_addr)
{
	uint8_t p[START_SCAN];
	size_t len = sizeof(p);
	bool found = false;
	uint64_t addr = 0;

	/* near the end of the segment: take what there is */
	while (len >= 8 && !elf_read_vaddr(elf, entry, p, len))
		len /= 2;
	if (len < 8 || !((p[0] == 0x31 && p[1] == 0xed) ||
			 (p[0] == 0x48 && p[1] == 0x31 && p[2] == 0xed)))
		return false;
	for (size_t i = 0; i < len;) {
		int32_t d;

		if (p[i] == 0xe8 || (i + 1 < len && p[i] == 0xff && (p[i + 1] == 0x15 ||
								     p[i + 1] == 0x25)))
			break;
		if (i + 7 <= len && p[i] == 0x48 && p[i + 1] == 0xc7 && p[i + 2] == 0xc7) {
			memcpy(&d, p + i + 3, 4);
			addr = (uint64_t)(int64_t)d;
			found = true;
			i += 7;
		} else if (i + 7 <= len && p[i] == 0x48 && p[i + 1] == 0x8d && p[i + 2] == 0x3d) {
			memcpy(&d, p + i + 3, 4);
			addr = entry + i + 7 + (uint64_t)(int64_t)d;
			found = true;
			i += 7;
		} else if (i + 7 <= len && p[i] == 0x48 && p[i + 1] == 0x8b && p[i + 2] == 0x3d) {
			memcpy(&d, p + i + 3, 4);
			found = got_slot_value(elf, entry + i + 7 + (uint64_t)(int64_t)d, &addr);
			i += 7;
		} else if (i + 5 <= len && p[i] == 0xbf && (i == 0 || (p[i - 1] & 0xf0) != 0x40)) {
			/* not after a REX prefix: 41 bf is mov $imm32, %r15d */
			uint32_t u;

			memcpy(&u, p + i + 1, 4);
			addr = u;
			found = true;
			i += 5;
		} else if (i + 7 <= len && start_skippable(p + i)) {
			i += 7;
		} else {
			i++;
		}
	}
	*main_addr = addr;
	return found;
}

/* Name the function of @m (sorted, one per address) at @addr "main" if it is a non-cold
 * function from .eh_frame and no function is already named main. */
static void name_guessed_main(struct sym_module *m, uint64_t addr)
{
	size_t k;
	struct sym_func *f;

	for (size_t i = 0; i < m->nr_funcs; i++)
		if (strcmp(m->funcs[i].name, "main") == 0)
			return;
	k = func_at_or_before(m->funcs, m->nr_funcs, addr);
	if (k == m->nr_funcs)
		return;
	f = &m->funcs[k];
	if (f->addr != addr || !f->from_cfi || f->is_cold)
		return;
	free(f->name);
	free(f->raw);
	f->name = xstrdup("main");
	f->raw = xstrdup("main");
	f->name_guessed = true;
}

int sym_module_load(const char *path, struct sym_module **out)
{
	return sym_module_load_flags(path, 0, out);
}

/* SYM_LOAD_NO_DWARF: no separate debug file at all, the file's own symbols only. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file, const char *debuglink,
			GElf_Word crc, char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file;
	(void)debuglink;
	(void)crc;
	(void)debuginfo_file_name;
	return -1;
}

int sym_module_load_flags(const char *path, unsigned int flags, struct sym_module **out)
{
	static char *debuginfo_path;
	/* Separate debug information by build-id only (/usr/lib/debug/.build-id, where
	 * Debian's -dbgsym packages put it), not dwfl_standard_find_debuginfo: in elfutils
	 * 0.188 that one ends by loading the debuginfod client (libcurl, gnutls, krb5...,
	 * some 6 MiB) to ask the network, which a tracer must never do, and which more than
	 * doubled calltrace's memory. .gnu_debuglink files outside the build-id tree are
	 * not looked up. */
	static const Dwfl_Callbacks callbacks_own = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = no_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_build_id_find_debuginfo,
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
	uint64_t main_addr = 0;
	bool have_main_guess = false;
	Dwfl *dwfl;

	dwfl = dwfl_begin(flags & SYM_LOAD_NO_DWARF ? &callbacks_own : &callbacks);
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

		while (!(flags & SYM_LOAD_NO_DWARF) &&
		       (cu = dwfl_module_nextcu(mod, cu, &cubias)) != NULL) {
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
		f->name = display_name(name);
		f->addr = addr;
		f->size = sym.st_size;
		f->is_global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		f->is_cold = strstr(name, ".cold") != NULL;
		dw = find_dw(&dws, addr);
		if (dw) {
			f->file = dw->file ? xstrdup(dw->file) : NULL;
			f->line = dw->line;
			f->arity = dw->arity;
		}
	}

	/* A .symtab in the file, its separate debuginfo, or MiniDebugInfo. */
	{
		Dwarf_Addr dbias;
		Dwarf *dbg = dwfl_module_getdwarf(mod, &dbias);
		Elf *delf = dbg ? dwarf_getelf(dbg) : NULL;

		m->has_symtab = elf_has_symtab(elf) || elf_has_scn(elf, ".gnu_debugdata") ||
				(delf && delf != elf && elf_has_symtab(delf));
	}
	/* Stripped (only .dynsym, if anything): the other functions from .eh_frame. */
	if ((!m->has_symtab || n == 0) && !(flags & SYM_LOAD_NO_CFI)) {
		qsort(m->funcs, n, sizeof(*m->funcs), cmp_func);
		if (add_cfi_funcs(m, &n, &cap, elf, elf_bias, &dws) &&
		    guess_main(elf, ehdr->e_entry, &main_addr))
			have_main_guess = true;
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
		if (m->funcs[i].from_cfi)
			m->nr_from_cfi++;
	}
	if (have_main_guess)
		name_guessed_main(m, main_addr + elf_bias);
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
