/* SPDX-License-Identifier: MIT */
/* target.c - what must hold before calltrace starts a program. Everything here runs
 * before fork, so a bad input never leaves a half-traced program behind. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calltrace/sym.h"
#include "calltrace/target.h"
#include "calltrace/util.h"

static int check_file(const char *shown, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			msg_error("%s: no such file or directory; check the path", shown);
			return EXIT_NOTFOUND;
		}
		msg_error("%s: cannot access: %s", shown, strerror(errno));
		return EXIT_NOEXEC;
	}
	if (S_ISDIR(sb.st_mode)) {
		msg_error("%s: is a directory; give the program's file", shown);
		return EXIT_NOEXEC;
	}
	if (!S_ISREG(sb.st_mode) || access(path, X_OK) < 0) {
		msg_error("%s: not executable (permission denied); chmod +x it, or check the path",
			  shown);
		return EXIT_NOEXEC;
	}
	return 0;
}

int target_resolve(const char *name, char **path)
{
	const char *env;
	char *dirs, *save = NULL;
	int rc;

	*path = NULL;
	if (strchr(name, '/')) {
		rc = check_file(name, name);
		if (rc == 0)
			*path = xstrdup(name);
		return rc;
	}
	env = getenv("PATH");
	dirs = xstrdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *d ? d : ".", name);
		struct stat sb;

		if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && access(cand, X_OK) == 0) {
			*path = cand;
			free(dirs);
			return 0;
		}
		free(cand);
	}
	free(dirs);
	msg_error("%s: command not found in PATH; give its path, e.g. ./%s", name, name);
	return EXIT_NOTFOUND;
}

int target_load(const char *path, struct sym_module **out)
{
	const char *machine = NULL;
	int rc;

	*out = NULL;
	switch (sym_check_elf(path, &machine)) {
	case SYM_ELF_OK:
		break;
	case SYM_ELF_NOT_ELF:
		msg_error("%s: not an ELF executable; to trace a script, trace its interpreter "
			  "(e.g. calltrace /bin/sh %s)", path, path);
		return EXIT_NOEXEC;
	case SYM_ELF_32BIT:
		msg_error("%s: 32-bit ELF; calltrace traces 64-bit x86-64 programs only", path);
		return EXIT_NOEXEC;
	case SYM_ELF_OTHER_ARCH:
		msg_error("%s: ELF for %s; calltrace traces x86-64 programs only", path, machine);
		return EXIT_NOEXEC;
	case SYM_ELF_NOT_EXEC:
		msg_error("%s: ELF object is not an executable (relocatable or core file); link it first",
			  path);
		return EXIT_NOEXEC;
	case SYM_ELF_UNREADABLE:
		msg_error("%s: cannot read: %s; calltrace needs to read the program's symbols",
			  path, strerror(errno));
		return EXIT_NOEXEC;
	}
	rc = sym_module_load(path, out);
	if (rc == -ENOENT) {
		msg_error("%s: no function symbols and no .eh_frame to find functions in; trace a "
			  "build that keeps its symbol table", path);
		sym_module_free(*out);
		*out = NULL;
		return EXIT_TRACER;
	}
	if (rc < 0) {
		msg_error("%s: cannot read its symbols: %s", path, strerror(-rc));
		sym_module_free(*out);
		*out = NULL;
		return EXIT_TRACER;
	}
	if (!(*out)->has_symtab && (*out)->nr_from_cfi) {
		bool guessed = false;

		for (size_t i = 0; i < (*out)->nr_funcs; i++)
			guessed |= (*out)->funcs[i].name_guessed;
		msg_note("%s: stripped: %zu functions found from .eh_frame, named fn_0x<address>%s",
			 path, (*out)->nr_from_cfi, guessed ? "; main found from _start" : "");
	}
	return 0;
}

/* Levenshtein distance, capped: names are short. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row, best;

	if (la > 200 || lb > 200)
		return SIZE_MAX;
	row = xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t v = diag + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

int target_check_patterns(const struct sym_module *m, const char *const *patterns,
			  size_t nr_patterns)
{
	for (size_t i = 0; i < nr_patterns; i++) {
		const char *best = NULL;
		size_t best_d = SIZE_MAX;
		bool found = false;

		for (size_t j = 0; j < m->nr_funcs && !found; j++) {
			const struct sym_func *f = &m->funcs[j];

			if (f->is_cold)
				continue;
			if (fnmatch(patterns[i], f->name, 0) == 0 || fnmatch(patterns[i], f->raw, 0) == 0)
				found = true;
		}
		if (found)
			continue;
		for (size_t j = 0; j < m->nr_funcs; j++) {
			size_t d = distance(patterns[i], m->funcs[j].name);

			if (d < best_d) {
				best_d = d;
				best = m->funcs[j].name;
			}
		}
		if (best && best_d <= 3)
			msg_error("-f %s: no function matches in %s (did you mean '%s'?)",
				  patterns[i], m->path, best);
		else
			msg_error("-f %s: no function matches in %s; list its functions with "
				  "'nm -C %s'", patterns[i], m->path, m->path);
		return EXIT_TRACER;
	}
	return 0;
}
