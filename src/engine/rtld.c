/* SPDX-License-Identifier: MIT */
/* rtld.c - shared libraries through the dynamic linker's rendezvous (r_debug).
 *
 * ld.so calls _dl_debug_state() each time its list of loaded objects changes, with
 * r_debug.r_state saying whether the list is being changed (RT_ADD, RT_DELETE) or is
 * consistent again (RT_CONSISTENT). A breakpoint there (BP_RTLD) lets calltrace set up
 * every library matching --lib when it appears, before its constructors run (ld.so
 * reports the start-up libraries and each dlopen before it calls their initialisers),
 * and forget it on dlclose. The breakpoint is planted at the program's first
 * instruction, from ld.so's own symbols; r_debug itself is found through the
 * executable's DT_DEBUG entry, which ld.so fills before its first report. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltrace/sym.h"
#include "calltrace/util.h"
#include "internal.h"

static bool lib_wanted(const struct engine_opts *eo, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < eo->nr_libs; i++) {
		if (fnmatch(eo->libs[i], base, 0) == 0)
			return true;
	}
	return false;
}

uint64_t proc_auxv(pid_t pid, uint64_t type)
{
	char path[64];
	uint64_t av[2], val = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL) {
		if (av[0] == type)
			val = av[1];
	}
	close(fd);
	return val;
}

/* &r_debug from the executable's DT_DEBUG, 0 if not (yet) known. */
uint64_t rtld_find_r_debug(struct proc *pr)
{
	uint64_t phdr = proc_auxv(pr->pid, AT_PHDR), phnum = proc_auxv(pr->pid, AT_PHNUM);
	uint64_t bias = 0, dyn = 0;

	if (!phdr || !phnum || phnum > 256)
		return 0;
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;

		if (mem_read(pr, phdr + i * sizeof(ph), &ph, sizeof(ph)) < 0)
			return 0;
		if (ph.p_type == PT_PHDR)
			bias = phdr - ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	if (!dyn)
		return 0;
	dyn += bias;
	for (int i = 0; i < 4096; i++) {
		Elf64_Dyn d;

		if (mem_read(pr, dyn + (uint64_t)i * sizeof(d), &d, sizeof(d)) < 0 ||
		    d.d_tag == DT_NULL)
			return 0;
		if (d.d_tag == DT_DEBUG)
			return d.d_un.d_ptr;
	}
	return 0;
}

/* The mapping containing @addr: its file and the start of its offset-0 mapping. */
static bool mapping_of(pid_t pid, uint64_t addr, char *file, size_t len, uint64_t *base)
{
	char path[64], line[4096 + 128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t a, b, off;
		int n = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &a, &b, &off,
			   &n) < 3 || !n)
			continue;
		if (addr >= a && addr < b && line[n] == '/') {
			line[strcspn(line, "\n")] = 0;
			snprintf(file, len, "%s", line + n);
			found = true;
		}
	}
	if (found) {
		/* the object's lowest mapping (file offset 0) is its load base */
		rewind(f);
		*base = 0;
		while (fgets(line, sizeof(line), f)) {
			uint64_t a, b, off;
			int n = 0;

			line[strcspn(line, "\n")] = 0;
			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &a, &b,
				   &off, &n) >= 3 && n && !strcmp(line + n, file) && off == 0) {
				*base = a;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

void rtld_init(struct engine *e, struct proc *pr)
{
	struct sym_module *ld = NULL;
	char file[4096];
	uint64_t base, at_base = proc_auxv(pr->pid, AT_BASE);

	if (!e->eo->nr_libs || !at_base)
		return;           /* no libraries traced, or no dynamic linker */
	if (!mapping_of(pr->pid, at_base, file, sizeof(file), &base))
		return;
	base = at_base;
	if (sym_module_load_flags(file, SYM_LOAD_NO_CFI | SYM_LOAD_NO_DWARF, &ld) < 0) {
		msg_warn("%s: cannot read the dynamic linker's symbols; libraries loaded later "
			 "(dlopen) are not traced", file);
		sym_module_free(ld);
		return;
	}
	for (size_t i = 0; i < ld->nr_funcs; i++) {
		const char *raw = ld->funcs[i].raw;
		size_t len = strlen(raw);

		/* the exported name, or the internal alias that won its address */
		if (len >= 15 && !strcmp(raw + len - 15, "_dl_debug_state")) {
			int rc = aspace_add_rtld(e, pr, ld->funcs[i].addr + base);

			msg_debug("watching %s at %#" PRIx64 ": %d", ld->funcs[i].raw,
				  ld->funcs[i].addr + base, rc);

			if (rc < 0)
				msg_warn("%s: cannot watch _dl_debug_state (%s); libraries are not "
					 "traced", file, strerror(-rc));
			break;
		}
	}
	sym_module_free(ld);
}

void rtld_sync(struct engine *e, struct proc *pr, pid_t tid)
{
	struct aspace *as = pr->as;
	uint64_t lm, state = 0;
	int guard = 0;

	if (!as->r_debug)
		as->r_debug = rtld_find_r_debug(pr);
	msg_debug("pid %d: dynamic linker report, r_debug at %#" PRIx64, pr->pid, as->r_debug);
	if (!as->r_debug)
		return;
	/* struct r_debug: int r_version; link_map *r_map; ElfW(Addr) r_brk; r_state */
	if (mem_read(pr, as->r_debug + offsetof(struct r_debug, r_state), &state, sizeof(int)) < 0 ||
	    (int)state != RT_CONSISTENT)
		return;
	if (mem_read(pr, as->r_debug + offsetof(struct r_debug, r_map), &lm, sizeof(lm)) < 0)
		return;
	for (size_t i = 0; i < as->nr_mods; i++)
		as->mods[i]->mark = as->mods[i]->is_main;
	for (; lm && guard < 100000; guard++) {
		struct link_map l;
		char name[4096];
		struct module *m = NULL;

		if (mem_read(pr, lm, &l, sizeof(l)) < 0)
			break;
		name[0] = 0;
		if (l.l_name) {
			for (size_t k = 0; k < sizeof(name) - 1; k++) {
				if (mem_read(pr, (uint64_t)l.l_name + k, &name[k], 1) < 0)
					name[k] = 0;
				if (!name[k])
					break;
				name[k + 1] = 0;
			}
		}
		for (size_t i = 0; i < as->nr_mods; i++) {
			if (as->mods[i]->l_map == lm && as->mods[i]->bias == l.l_addr) {
				m = as->mods[i];
				break;
			}
		}
		if (m) {
			m->mark = true;
		} else if (name[0] == '/' && lib_wanted(e->eo, name)) {
			struct sym_module *sym = NULL;

			/* a library's named functions only: in a stripped library (no
			 * debuginfo installed) that is its exported ones, and the internal
			 * ones' time stays in the exported function that called them */
			if (sym_check_elf(name, NULL) == SYM_ELF_OK &&
			    sym_module_load_flags(name, SYM_LOAD_NO_CFI, &sym) == 0) {
				m = module_setup(e, pr, tid, sym, l.l_addr, false);
				m->l_map = lm;
				m->mark = true;
				msg_debug("traced library %s at %#" PRIx64 " (%zu functions)", name,
					  (uint64_t)l.l_addr, sym->nr_funcs);
			} else {
				sym_module_free(sym);
			}
		}
		lm = (uint64_t)l.l_next;
	}
	for (size_t i = 0; i < as->nr_mods;) {
		struct module *m = as->mods[i];

		if (!m->mark && m->l_map) {
			msg_debug("library at %#" PRIx64 " unloaded", m->bias);
			module_forget(as, m);     /* swaps the last module into slot i */
			shadow_trips_flush(e);
			continue;
		}
		i++;
	}
}
