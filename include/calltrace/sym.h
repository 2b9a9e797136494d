/* SPDX-License-Identifier: MIT */
/* sym.h - the functions of an ELF object: the only module that uses libdw/libdwfl.
 * Loads function symbols (.symtab, .dynsym, MiniDebugInfo merged by libdwfl) with their
 * sizes, and from DWARF their source file, declaration line and number of parameters.
 * A stripped file (no .symtab) also gets a function for every .eh_frame FDE outside the
 * symbols' ranges, named by address: fn_0x<file address in hex>. Addresses are the
 * file's own (unrelocated) virtual addresses; the engine adds the load bias. */
#ifndef CALLTRACE_SYM_H
#define CALLTRACE_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_func {
	char *name;          /* demangled */
	char *raw;           /* symbol as in the file */
	uint64_t addr;       /* file virtual address */
	uint64_t size;
	char *file;          /* DWARF declaration file or NULL */
	int line;            /* DWARF declaration line or 0 */
	int arity;           /* DWARF formal parameters, or 0 */
	bool is_global;      /* a global or weak symbol (not a local alias) */
	bool is_cold;        /* a split-off part (name.cold): scanned for exits, no entry */
	bool from_cfi;       /* no symbol: found from an .eh_frame FDE, named fn_0x<addr>
			      * (fn_0x<addr>.cold, is_cold, when its first CFI row is
			      * not a function entry), or "main" if name_guessed */
	bool name_guessed;   /* a from_cfi function named "main" (name and raw) because
			      * glibc's _start at e_entry passes its address to
			      * __libc_start_main; see sym_module_load() */
};

struct sym_module {
	char *path;
	char *base;          /* base name, the report's module */
	bool is_dyn;         /* ET_DYN (PIE): load bias added at run time */
	uint64_t entry;      /* e_entry */
	struct sym_func *funcs;   /* sorted by address, one per address */
	size_t nr_funcs;
	size_t nr_from_cfi;  /* how many of funcs are from_cfi */
	bool has_symtab;     /* a .symtab (in the file, its debuginfo or MiniDebugInfo);
			      * false: stripped, names only from .dynsym and fn_0x... */
};

/* ELF checks done before anything runs. */
enum sym_elf_check {
	SYM_ELF_OK,
	SYM_ELF_NOT_ELF,
	SYM_ELF_32BIT,
	SYM_ELF_OTHER_ARCH,
	SYM_ELF_NOT_EXEC,    /* ET_REL or ET_CORE */
	SYM_ELF_UNREADABLE,
};

/* Check that @path is a 64-bit x86-64 executable ELF. On SYM_ELF_OTHER_ARCH, @machine
 * (may be NULL) receives a short machine name. */
enum sym_elf_check sym_check_elf(const char *path, const char **machine);

/* Load the functions of @path. 0, or -errno (-ENOENT: no functions at all, from
 * symbols or .eh_frame). Caller owns *out: sym_module_free().
 * When no function is named "main" but some come from .eh_frame (a stripped
 * executable), main is guessed from glibc's _start: the address it loads into %rdi
 * for __libc_start_main. The guess is taken only if it is exactly the start of a
 * fn_0x... function (not a cold part), which is then named "main" with
 * name_guessed set; otherwise nothing is renamed. */
int sym_module_load(const char *path, struct sym_module **out);

enum {
	SYM_LOAD_NO_CFI = 1 << 0,   /* stripped: .dynsym names only, no fn_0x... functions */
	SYM_LOAD_NO_DWARF = 1 << 1, /* the file's own symbols only: no separate debug file,
	                               no file, line, arity (the dynamic linker's debug
	                               information can be tens of MiB) */
};

/* sym_module_load() with SYM_LOAD_* @flags (sym_module_load is flags 0). */
int sym_module_load_flags(const char *path, unsigned int flags, struct sym_module **out);

void sym_module_free(struct sym_module *m);

#endif
