/* SPDX-License-Identifier: MIT */
/* check_sym.c - unit tests for src/sym: the ELF checks, function symbols with their
 * DWARF facts, demangling, and the .eh_frame fallback for stripped files. The inputs
 * are built at test time with the system compiler into a temporary directory (cc, g++,
 * strip, objcopy, nm and readelf from build-essential); without cc the runner exits 77
 * (skip). nm is the independent oracle for symbol addresses and sizes. The main_guess_*
 * tests check that a stripped executable's main is named back from glibc's _start. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "calltrace/sym.h"

static char tmp[] = "/tmp/check_sym.XXXXXX";
static bool have_static;     /* cc -static worked (libc.a installed) */
static bool have_cxx;        /* g++ worked */
static bool have_static_pie; /* cc -static-pie worked */

/* The fixture. Declaration lines are checked against DWARF: keep them in step with
 * the FIX_LINE_* values below. */
static const char fixture_c[] =
	"#include <stdio.h>\n"                                          /* 1 */
	"#include <stdlib.h>\n"                                         /* 2 */
	"\n"                                                            /* 3 */
	"static int __attribute__((noinline)) add3(int a, int b, int c)\n" /* 4 */
	"{\n"
	"\treturn a + b + c;\n"
	"}\n"
	"\n"
	"int __attribute__((noinline)) twice(int x)\n"                  /* 9 */
	"{\n"
	"\treturn add3(x, x, 0);\n"
	"}\n"
	"\n"
	"void __attribute__((noinline)) nothing(void)\n"                /* 14 */
	"{\n"
	"\tputs(\"\");\n"
	"}\n"
	"\n"
	"void __attribute__((noinline, cold)) report(int x)\n"         /* 19 */
	"{\n"
	"\tfprintf(stderr, \"negative %d\\n\", x);\n"
	"}\n"
	"\n"
	"int __attribute__((noinline)) check(int x)\n"                  /* 24 */
	"{\n"
	"\tint r = twice(x);\n"
	"\n"
	"\tif (x < 0) {\n"
	"\t\treport(x);\n"
	"\t\treport(r);\n"
	"\t\tr = twice(r + 1);\n"
	"\t}\n"
	"\treturn twice(r) + r;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"                             /* 36 */
	"{\n"
	"\tnothing();\n"
	"\treturn check(argc) + (argv == 0);\n"
	"}\n";

/* At -O2 the call to the cold report() moves into check.cold, a part entered by a
 * jump with check's frame set up. */
enum { FIX_LINE_ADD3 = 4, FIX_LINE_TWICE = 9, FIX_LINE_NOTHING = 14, FIX_LINE_REPORT = 19,
       FIX_LINE_CHECK = 24, FIX_LINE_MAIN = 36 };

static const char fixture_cc[] =
	"namespace ns {\n"
	"int __attribute__((noinline)) scale(int x, double y)\n"
	"{\n"
	"\treturn x * (int)y;\n"
	"}\n"
	"}\n"
	"int main(int argc, char **)\n"
	"{\n"
	"\treturn ns::scale(argc, 1.0);\n"
	"}\n";

/* -nostartfiles with its own _start: it starts like glibc's (xor %ebp,%ebp) and loads
 * %rdi before its first call, but with the address of data, not of a function. */
static const char own_start_c[] =
	"int __attribute__((noinline)) work(int x)\n"
	"{\n"
	"\treturn x + 1;\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\treturn work(41) - 42;\n"
	"}\n"
	"\n"
	"static const char __attribute__((used)) msg[] = \"not a function\";\n"
	"__asm__(\".text\\n.globl _start\\n_start:\\n\"\n"
	"\t\"\txor %ebp, %ebp\\n\"\n"
	"\t\"\tlea msg(%rip), %rdi\\n\"\n"
	"\t\"\tcall main\\n\"\n"
	"\t\"\tmov %eax, %edi\\n\"\n"
	"\t\"\tmov $60, %eax\\n\"\n"
	"\t\"\tsyscall\\n\");\n";

static const char *const fixture_names[] = { "add3", "twice", "nothing", "report", "check",
					     "main" };
#define NR_FIXTURE (sizeof(fixture_names) / sizeof(fixture_names[0]))

static char *path_of(const char *name)
{
	static char buf[8][256];
	static int k;
	char *p = buf[k++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmp, name);
	return p;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	return system(cmd);
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(name);
		exit(99);
	}
}

/* Copy @from to @to and write @len bytes at @off. */
static void patch_copy(const char *from, const char *to, long off, const void *bytes, size_t len)
{
	FILE *f;

	if (sh("cp '%s' '%s'", path_of(from), path_of(to)) != 0)
		exit(99);
	f = fopen(path_of(to), "r+b");
	if (!f || fseek(f, off, SEEK_SET) != 0 || fwrite(bytes, 1, len, f) != len || fclose(f))
		exit(99);
}

/* Build every input once; 77 (skip) without a compiler. */
static void build_inputs(void)
{
	const uint8_t class32 = 1;
	const uint8_t aarch64[2] = { 183, 0 };

	if (!mkdtemp(tmp))
		exit(99);
	if (sh("cc --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "check_sym: no cc, skipped\n");
		exit(77);
	}
	write_file("fix.c", fixture_c);
	write_file("fix.cc", fixture_cc);
	write_file("own.c", own_start_c);
	write_file("text", "not an ELF file\n");
	if (sh("cd %s && cc -O0 -g -fPIE -pie -o prog fix.c && "
	       "strip --strip-all -o prog.stripped prog && "
	       "strip --strip-debug -o prog.nodebug prog && "
	       "cc -O0 -g -rdynamic -o prog.rdyn.full fix.c && "
	       "strip --strip-all -o prog.rdyn prog.rdyn.full && "
	       "cc -O2 -g -o prog.o2 fix.c && strip --strip-all -o prog.o2.stripped prog.o2 && "
	       "objcopy -R .eh_frame -R .eh_frame_hdr prog.stripped prog.noeh && "
	       "cc -O0 -g -c -o fix.o fix.c && "
	       "cc -O0 -g -no-pie -o prog.nopie fix.c && "
	       "strip --strip-all -o prog.nopie.stripped prog.nopie && "
	       "cc -O0 -g -Wl,--no-relax -o prog.norelax fix.c && "
	       "strip --strip-all -o prog.norelax.stripped prog.norelax && "
	       "cc -O0 -nostartfiles -o own own.c && strip --strip-all -o own.stripped own",
	       tmp) != 0) {
		fprintf(stderr, "check_sym: cannot build the inputs\n");
		exit(99);
	}
	have_static = sh("cd %s && cc -O0 -static -o prog.static fix.c 2>/dev/null && "
			 "strip --strip-all -o prog.static.stripped prog.static", tmp) == 0;
	have_static_pie = sh("cd %s && cc -O0 -static-pie -o prog.spie fix.c 2>/dev/null && "
			     "strip --strip-all -o prog.spie.stripped prog.spie", tmp) == 0;
	have_cxx = sh("cd %s && g++ -O0 -g -c -o fixcc.o fix.cc 2>/dev/null && "
		      "g++ -o progcc fixcc.o", tmp) == 0;
	patch_copy("prog", "prog.32", 4, &class32, 1);
	patch_copy("prog", "prog.arm", 18, aarch64, 2);
}

/* nm's view of @file's defined text symbols: address and size of @name, or false. */
static bool nm_lookup(const char *file, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[512], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only -S '%s'", path_of(file));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (!found && fgets(line, sizeof(line), p)) {
		char type, sym[256];
		uint64_t a, s;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %255s", &a, &s, &type, sym) == 4 &&
		    (type == 't' || type == 'T') && strcmp(sym, name) == 0) {
			*addr = a;
			*size = s;
			found = true;
		}
	}
	pclose(p);
	return found;
}

/* The file offset of the slot that an R_X86_64_RELATIVE relocation with addend @value
 * fills in @file (readelf's view: the relocation, then the PT_LOAD holding it). */
static bool relative_slot_offset(const char *file, uint64_t value, long *off)
{
	char cmd[512], line[512];
	uint64_t slot = 0;
	bool have_slot = false, found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -rW '%s'", path_of(file));
	if (!(p = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), p)) {
		uint64_t r_off, info, addend;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " R_X86_64_RELATIVE %" SCNx64, &r_off,
			   &info, &addend) == 3 && addend == value && !have_slot) {
			slot = r_off;
			have_slot = true;
		}
	}
	pclose(p);
	if (!have_slot)
		return false;
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path_of(file));
	if (!(p = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), p)) {
		uint64_t offset, vaddr, paddr, filesz;

		if (!found && sscanf(line, " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64,
				     &offset, &vaddr, &paddr, &filesz) == 4 &&
		    slot >= vaddr && slot + 8 <= vaddr + filesz) {
			*off = (long)(offset + slot - vaddr);
			found = true;
		}
	}
	pclose(p);
	return found;
}

static struct sym_module *load(const char *file)
{
	struct sym_module *m = NULL;

	ck_assert_int_eq(sym_module_load(path_of(file), &m), 0);
	ck_assert_ptr_nonnull(m);
	return m;
}

static const struct sym_func *by_name(const struct sym_module *m, const char *name)
{
	for (size_t i = 0; i < m->nr_funcs; i++)
		if (strcmp(m->funcs[i].name, name) == 0)
			return &m->funcs[i];
	return NULL;
}

static const struct sym_func *by_addr(const struct sym_module *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nr_funcs; i++)
		if (m->funcs[i].addr == addr)
			return &m->funcs[i];
	return NULL;
}

static void assert_sorted_disjoint(const struct sym_module *m)
{
	for (size_t i = 1; i < m->nr_funcs; i++) {
		ck_assert_uint_lt(m->funcs[i - 1].addr, m->funcs[i].addr);
		ck_assert_uint_le(m->funcs[i - 1].addr + m->funcs[i - 1].size, m->funcs[i].addr);
	}
}

START_TEST(elf_checks)
{
	const char *mach = NULL;

	ck_assert_int_eq(sym_check_elf(path_of("prog"), NULL), SYM_ELF_OK);
	ck_assert_int_eq(sym_check_elf(path_of("prog.stripped"), NULL), SYM_ELF_OK);
	ck_assert_int_eq(sym_check_elf(path_of("text"), NULL), SYM_ELF_NOT_ELF);
	ck_assert_int_eq(sym_check_elf(path_of("prog.32"), NULL), SYM_ELF_32BIT);
	ck_assert_int_eq(sym_check_elf(path_of("prog.arm"), &mach), SYM_ELF_OTHER_ARCH);
	ck_assert_str_eq(mach, "aarch64");
	ck_assert_int_eq(sym_check_elf(path_of("fix.o"), NULL), SYM_ELF_NOT_EXEC);
	ck_assert_int_eq(sym_check_elf(path_of("no-such-file"), NULL), SYM_ELF_UNREADABLE);
}
END_TEST

/* Named functions with nm's sizes, DWARF declaration file and line, and arity. */
START_TEST(symbols_and_dwarf)
{
	static const int lines[NR_FIXTURE] = { FIX_LINE_ADD3, FIX_LINE_TWICE, FIX_LINE_NOTHING,
					       FIX_LINE_REPORT, FIX_LINE_CHECK, FIX_LINE_MAIN };
	static const int arity[NR_FIXTURE] = { 3, 1, 0, 1, 1, 2 };
	struct sym_module *m = load("prog");

	ck_assert(m->has_symtab);
	ck_assert(m->is_dyn);
	ck_assert_uint_eq(m->nr_from_cfi, 0);
	ck_assert_str_eq(m->base, "prog");
	assert_sorted_disjoint(m);
	for (size_t i = 0; i < NR_FIXTURE; i++) {
		const struct sym_func *f = by_name(m, fixture_names[i]);
		uint64_t addr, size;

		ck_assert_msg(f != NULL, "%s not found", fixture_names[i]);
		ck_assert(nm_lookup("prog", fixture_names[i], &addr, &size));
		ck_assert_uint_eq(f->addr, addr);
		ck_assert_uint_eq(f->size, size);
		ck_assert_str_eq(f->raw, fixture_names[i]);
		ck_assert_ptr_nonnull(f->file);
		ck_assert_msg(strstr(f->file, "fix.c") != NULL, "file %s", f->file);
		ck_assert_int_eq(f->line, lines[i]);
		ck_assert_int_eq(f->arity, arity[i]);
		ck_assert(!f->from_cfi);
		ck_assert(!f->is_cold);
	}
	sym_module_free(m);
}
END_TEST

/* --strip-debug keeps .symtab: same names and sizes, no DWARF, nothing from the CFI. */
START_TEST(strip_debug)
{
	struct sym_module *m = load("prog.nodebug");

	ck_assert(m->has_symtab);
	ck_assert_uint_eq(m->nr_from_cfi, 0);
	for (size_t i = 0; i < NR_FIXTURE; i++) {
		const struct sym_func *f = by_name(m, fixture_names[i]);
		uint64_t addr, size;

		ck_assert_ptr_nonnull(f);
		ck_assert(nm_lookup("prog", fixture_names[i], &addr, &size));
		ck_assert_uint_eq(f->addr, addr);
		ck_assert_uint_eq(f->size, size);
		ck_assert_ptr_null(f->file);
		ck_assert_int_eq(f->line, 0);
	}
	sym_module_free(m);
}
END_TEST

/* --strip-all PIE: every fixture function is found at its symbol's address with its
 * size, named fn_0x<addr>; every fn_0x function is at some symbol's address. */
START_TEST(strip_all_from_cfi)
{
	struct sym_module *full = load("prog");
	struct sym_module *m = load("prog.stripped");

	ck_assert(!m->has_symtab);
	ck_assert_uint_gt(m->nr_from_cfi, 0);
	assert_sorted_disjoint(m);
	for (size_t i = 0; i < NR_FIXTURE; i++) {
		const struct sym_func *s = by_name(full, fixture_names[i]);
		const struct sym_func *f = by_addr(m, s->addr);
		char want[64];

		ck_assert_msg(f != NULL, "%s at %#" PRIx64 " not found", s->name, s->addr);
		if (strcmp(s->name, "main") == 0)
			snprintf(want, sizeof(want), "main");   /* main_guess_pie */
		else
			snprintf(want, sizeof(want), "fn_0x%" PRIx64, s->addr);
		ck_assert_str_eq(f->name, want);
		ck_assert_str_eq(f->raw, want);
		ck_assert(f->name_guessed == (strcmp(s->name, "main") == 0));
		ck_assert(f->from_cfi);
		ck_assert(!f->is_cold);
		ck_assert_uint_eq(f->size, s->size);
		ck_assert_ptr_null(f->file);
	}
	for (size_t i = 0; i < m->nr_funcs; i++) {
		const struct sym_func *f = &m->funcs[i];

		if (!f->from_cfi)
			continue;
		ck_assert_msg(by_addr(full, f->addr) != NULL, "%s: no symbol there", f->name);
	}
	sym_module_free(full);
	sym_module_free(m);
}
END_TEST

/* -rdynamic then --strip-all: exported functions keep their .dynsym names, the static
 * add3 comes from its FDE; none is duplicated. */
START_TEST(dynsym_and_cfi)
{
	struct sym_module *full = load("prog.rdyn.full");
	struct sym_module *m = load("prog.rdyn");
	const struct sym_func *f, *add3 = by_name(full, "add3");
	size_t nr_cfi = 0;
	char want[64];

	ck_assert(!m->has_symtab);
	assert_sorted_disjoint(m);
	for (size_t i = 1; i < NR_FIXTURE; i++) {
		f = by_name(m, fixture_names[i]);
		ck_assert_msg(f != NULL, "%s not in .dynsym", fixture_names[i]);
		ck_assert(!f->from_cfi);
		ck_assert_uint_eq(f->addr, by_name(full, fixture_names[i])->addr);
		ck_assert_uint_eq(f->size, by_name(full, fixture_names[i])->size);
	}
	ck_assert_ptr_null(by_name(m, "add3"));
	ck_assert_ptr_nonnull(add3);
	f = by_addr(m, add3->addr);
	ck_assert_ptr_nonnull(f);
	ck_assert(f->from_cfi);
	ck_assert_uint_eq(f->size, add3->size);
	snprintf(want, sizeof(want), "fn_0x%" PRIx64, add3->addr);
	ck_assert_str_eq(f->name, want);
	for (size_t i = 0; i < m->nr_funcs; i++)
		nr_cfi += m->funcs[i].from_cfi;
	ck_assert_uint_eq(nr_cfi, m->nr_from_cfi);
	sym_module_free(full);
	sym_module_free(m);
}
END_TEST

/* SYM_LOAD_NO_CFI: only the .dynsym names; a --strip-all PIE has none (-ENOENT). */
START_TEST(no_cfi_flag)
{
	struct sym_module *m = NULL;

	ck_assert_int_eq(sym_module_load_flags(path_of("prog.rdyn"), SYM_LOAD_NO_CFI, &m), 0);
	ck_assert_uint_eq(m->nr_from_cfi, 0);
	ck_assert_ptr_nonnull(by_name(m, "twice"));
	ck_assert_ptr_null(by_name(m, "add3"));
	for (size_t i = 0; i < m->nr_funcs; i++)
		ck_assert(!m->funcs[i].from_cfi);
	sym_module_free(m);
	m = NULL;
	ck_assert_int_eq(sym_module_load_flags(path_of("prog.stripped"), SYM_LOAD_NO_CFI, &m),
			 -ENOENT);
	ck_assert_uint_eq(m->nr_funcs, 0);
	sym_module_free(m);
}
END_TEST

/* -O2 splits check's abort path into check.cold: the stripped file has it as a cold
 * part (no entry probe), named fn_0x<addr>.cold. */
START_TEST(cold_part)
{
	struct sym_module *full = load("prog.o2");
	struct sym_module *m = load("prog.o2.stripped");
	const struct sym_func *cold = by_name(full, "check.cold");
	const struct sym_func *f;
	char want[64];

	if (!cold) {
		fprintf(stderr, "check_sym: cc made no check.cold; cold_part not checked\n");
		goto out;
	}
	f = by_addr(m, cold->addr);
	ck_assert_ptr_nonnull(f);
	ck_assert(f->from_cfi);
	ck_assert(f->is_cold);
	snprintf(want, sizeof(want), "fn_0x%" PRIx64 ".cold", cold->addr);
	ck_assert_str_eq(f->raw, want);
	f = by_addr(m, by_name(full, "check")->addr);
	ck_assert_ptr_nonnull(f);
	ck_assert(!f->is_cold);
out:
	for (size_t i = 0; i < m->nr_funcs; i++)
		if (m->funcs[i].is_cold)
			ck_assert_ptr_nonnull(strstr(m->funcs[i].raw, ".cold"));
	sym_module_free(full);
	sym_module_free(m);
}
END_TEST

/* Static and stripped: glibc's own functions come from .eh_frame too; main is among
 * them, by address, named from _start's mov $main,%rdi (main_guess_*). */
START_TEST(static_stripped)
{
	struct sym_module *full, *m;
	uint64_t addr, size;
	const struct sym_func *f;

	if (!have_static) {
		fprintf(stderr, "check_sym: cc -static failed; static_stripped not checked\n");
		return;
	}
	full = load("prog.static");
	m = load("prog.static.stripped");
	ck_assert(!m->is_dyn);
	ck_assert(!m->has_symtab);
	ck_assert_uint_eq(m->nr_from_cfi, m->nr_funcs);
	ck_assert_uint_gt(m->nr_funcs, 100);
	assert_sorted_disjoint(m);
	ck_assert(nm_lookup("prog.static", "main", &addr, &size));
	f = by_addr(m, addr);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->size, size);
	ck_assert_str_eq(f->name, "main");
	ck_assert(f->name_guessed);
	sym_module_free(full);
	sym_module_free(m);
}
END_TEST

/* No symbols and no .eh_frame: -ENOENT, and *out is still set for the caller to free. */
START_TEST(nothing_at_all)
{
	struct sym_module *m = NULL;

	ck_assert_int_eq(sym_module_load(path_of("prog.noeh"), &m), -ENOENT);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nr_funcs, 0);
	ck_assert(!m->has_symtab);
	sym_module_free(m);
}
END_TEST

/* How many functions of @m are named @name, and how many are name_guessed. */
static size_t count_named(const struct sym_module *m, const char *name, size_t *nr_guessed)
{
	size_t n = 0;

	*nr_guessed = 0;
	for (size_t i = 0; i < m->nr_funcs; i++) {
		n += strcmp(m->funcs[i].name, name) == 0;
		*nr_guessed += m->funcs[i].name_guessed;
	}
	return n;
}

/* @stripped (from @full) has exactly one "main", guessed, at nm's address of main. */
static void assert_main_guessed(const char *full, const char *stripped)
{
	struct sym_module *m = load(stripped);
	const struct sym_func *f;
	uint64_t addr, size;
	size_t nr_guessed;

	ck_assert(!m->has_symtab);
	ck_assert(nm_lookup(full, "main", &addr, &size));
	f = by_name(m, "main");
	ck_assert_msg(f != NULL, "%s: main not guessed", stripped);
	ck_assert_uint_eq(f->addr, addr);
	ck_assert_uint_eq(f->size, size);
	ck_assert_str_eq(f->raw, "main");
	ck_assert(f->name_guessed);
	ck_assert(f->from_cfi);
	ck_assert(!f->is_cold);
	ck_assert_uint_eq(count_named(m, "main", &nr_guessed), 1);
	ck_assert_uint_eq(nr_guessed, 1);
	assert_sorted_disjoint(m);
	sym_module_free(m);
}

/* Default PIE: ld relaxes _start's mov main@GOTPCREL(%rip),%rdi to lea main(%rip),%rdi. */
START_TEST(main_guess_pie)
{
	assert_main_guessed("prog", "prog.stripped");
}
END_TEST

/* -no-pie, dynamic: mov $main,%rdi. */
START_TEST(main_guess_nopie)
{
	assert_main_guessed("prog.nopie", "prog.nopie.stripped");
}
END_TEST

/* -static: mov $main,%rdi (static_stripped checks the same file more widely). */
START_TEST(main_guess_static)
{
	if (!have_static) {
		fprintf(stderr, "check_sym: cc -static failed; main_guess_static not checked\n");
		return;
	}
	assert_main_guessed("prog.static", "prog.static.stripped");
}
END_TEST

/* -static-pie: lea main(%rip),%rdi. */
START_TEST(main_guess_static_pie)
{
	if (!have_static_pie) {
		fprintf(stderr, "check_sym: cc -static-pie failed; main_guess_static_pie not "
				"checked\n");
		return;
	}
	assert_main_guessed("prog.spie", "prog.spie.stripped");
}
END_TEST

/* -Wl,--no-relax keeps mov main@GOTPCREL(%rip),%rdi: main is read from the GOT slot;
 * with the slot zeroed (as lld leaves it) from its R_X86_64_RELATIVE addend. */
START_TEST(main_guess_got)
{
	const uint64_t zero = 0;
	uint64_t addr, size, slot_was;
	long off;
	FILE *f;

	assert_main_guessed("prog.norelax", "prog.norelax.stripped");
	ck_assert(nm_lookup("prog.norelax", "main", &addr, &size));
	ck_assert_msg(relative_slot_offset("prog.norelax", addr, &off),
		      "no R_X86_64_RELATIVE for main in prog.norelax");
	/* the file holds main's address in the slot (ld does): zeroing it tests the
	 * relocation path */
	f = fopen(path_of("prog.norelax.stripped"), "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	ck_assert_uint_eq(fread(&slot_was, sizeof(slot_was), 1, f), 1);
	fclose(f);
	ck_assert_uint_eq(slot_was, addr);
	patch_copy("prog.norelax.stripped", "prog.norelax.zero", off, &zero, sizeof(zero));
	assert_main_guessed("prog.norelax", "prog.norelax.zero");
}
END_TEST

/* With a .symtab, or main in .dynsym, nothing is guessed. */
START_TEST(main_guess_not_needed)
{
	static const char *const files[] = { "prog", "prog.nodebug", "prog.rdyn", "prog.o2" };

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct sym_module *m = load(files[k]);
		uint64_t addr, size;
		size_t nr_guessed;
		const struct sym_func *f = by_name(m, "main");

		ck_assert_ptr_nonnull(f);
		ck_assert(nm_lookup(files[k] == files[2] ? "prog.rdyn.full" : files[k], "main",
				    &addr, &size));
		ck_assert_uint_eq(f->addr, addr);
		ck_assert(!f->from_cfi);
		ck_assert_uint_eq(count_named(m, "main", &nr_guessed), 1);
		ck_assert_uint_eq(nr_guessed, 0);
		sym_module_free(m);
	}
}
END_TEST

/* Its own _start loads %rdi with data, not a function start: no guess, main stays
 * fn_0x<addr>. */
START_TEST(main_guess_own_start)
{
	struct sym_module *m = load("own.stripped");
	const struct sym_func *f;
	uint64_t addr, size;
	size_t nr_guessed;
	char want[64];

	ck_assert(!m->has_symtab);
	ck_assert_uint_eq(count_named(m, "main", &nr_guessed), 0);
	ck_assert_uint_eq(nr_guessed, 0);
	ck_assert(nm_lookup("own", "main", &addr, &size));
	f = by_addr(m, addr);
	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "fn_0x%" PRIx64, addr);
	ck_assert_str_eq(f->name, want);
	sym_module_free(m);
}
END_TEST

START_TEST(demangle_cxx)
{
	struct sym_module *m;
	const struct sym_func *f;

	if (!have_cxx) {
		fprintf(stderr, "check_sym: g++ failed; demangle_cxx not checked\n");
		return;
	}
	m = load("progcc");
	f = by_name(m, "ns::scale(int, double)");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->raw, "_ZN2ns5scaleEid");
	ck_assert_int_eq(f->arity, 2);
	ck_assert_int_eq(f->line, 2);
	f = by_name(m, "main");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->raw, "main");
	sym_module_free(m);
}
END_TEST

/* One address, several names (libc's memcpy variants, its __GI_ local aliases): the
 * one reported is the global name with the fewest leading underscores, then the
 * shortest. */
static const char aliases_c[] =
	"int cbrt_like(int x) { return x * x * x; }\n"
	"extern int cbrt_likef64(int) __attribute__((alias(\"cbrt_like\")));\n"
	"extern int __cbrt_like(int) __attribute__((alias(\"cbrt_like\")));\n"
	"static int __GI_cbrt_like(int) __attribute__((alias(\"cbrt_like\"), used));\n";

START_TEST(alias_names)
{
	struct sym_module *m;
	uint64_t addr, size;
	const struct sym_func *f;

	write_file("aliases.c", aliases_c);
	ck_assert_int_eq(sh("cd %s && cc -O0 -shared -fPIC -o libaliases.so aliases.c", tmp), 0);
	ck_assert(nm_lookup("libaliases.so", "cbrt_like", &addr, &size));
	m = load("libaliases.so");
	f = by_addr(m, addr);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->name, "cbrt_like");
	ck_assert(f->is_global);
	ck_assert_ptr_null(by_name(m, "__GI_cbrt_like"));
	ck_assert_ptr_null(by_name(m, "cbrt_likef64"));
	sym_module_free(m);
}
END_TEST

static Suite *sym_suite(void)
{
	Suite *s = suite_create("sym");
	TCase *tc = tcase_create("sym");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, elf_checks);
	tcase_add_test(tc, symbols_and_dwarf);
	tcase_add_test(tc, strip_debug);
	tcase_add_test(tc, strip_all_from_cfi);
	tcase_add_test(tc, dynsym_and_cfi);
	tcase_add_test(tc, no_cfi_flag);
	tcase_add_test(tc, cold_part);
	tcase_add_test(tc, static_stripped);
	tcase_add_test(tc, nothing_at_all);
	tcase_add_test(tc, demangle_cxx);
	tcase_add_test(tc, alias_names);
	tcase_add_test(tc, main_guess_pie);
	tcase_add_test(tc, main_guess_nopie);
	tcase_add_test(tc, main_guess_static);
	tcase_add_test(tc, main_guess_static_pie);
	tcase_add_test(tc, main_guess_got);
	tcase_add_test(tc, main_guess_not_needed);
	tcase_add_test(tc, main_guess_own_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sym_suite());
	int failed;

	build_inputs();
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	sh("rm -rf '%s'", tmp);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
