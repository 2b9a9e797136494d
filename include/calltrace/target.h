/* SPDX-License-Identifier: MIT */
/* target.h - checks on the program and the outputs before anything runs: the program
 * is found, executable, a 64-bit x86-64 ELF with function symbols, every -f pattern
 * matches a function, and every output file can be written. Each failure is one line
 * naming the input, the problem and the way out, and an exit status. */
#ifndef CALLTRACE_TARGET_H
#define CALLTRACE_TARGET_H

#include <stddef.h>

struct sym_module;

/* Resolve @name (a path, or a command searched in PATH) into *@path (caller frees).
 * 0, or an exit status (126/127) after printing the message. */
int target_resolve(const char *name, char **path);

/* Check that @path is a traceable ELF and load its symbols into *@out (caller owns).
 * 0, or an exit status after printing the message. */
int target_load(const char *path, struct sym_module **out);

/* Check that each of @patterns matches a function of @m. 0, or an exit status after
 * printing the message (with the closest name as a hint). */
int target_check_patterns(const struct sym_module *m, const char *const *patterns,
			  size_t nr_patterns);

#endif
