/* SPDX-License-Identifier: MIT */
/* util.h - allocation that never returns NULL, user-facing messages, and the exit
 * statuses of calltrace's own failures. An allocation failure ends in die(), and die()
 * runs the release hook first so a traced program is never left with a breakpoint. */
#ifndef CALLTRACE_UTIL_H
#define CALLTRACE_UTIL_H

#include <stddef.h>

/* calltrace's own exit statuses (the traced program's status is passed through). */
#define EXIT_TRACER     125   /* calltrace failed, including usage errors */
#define EXIT_NOEXEC     126   /* PROGRAM found but cannot be executed or traced */
#define EXIT_NOTFOUND   127   /* PROGRAM not found */

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
/* Grow *@p (an array of @elem-byte items with capacity *@cap) to hold @need items. */
void xgrow(void *p, size_t *cap, size_t need, size_t elem);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "calltrace: <message>\n" on stderr. */
void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "calltrace: note: <message>": something the user should know, not a problem. */
void msg_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when CALLTRACE_DEBUG is set in the environment. */
void msg_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run the release hook (restore every traced process), print the message, exit with
 * @status. Safe to call from anywhere. */
void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The hook die() and fatal signals run first. Only one is registered at a time. */
void util_set_release_hook(void (*fn)(void));

#endif
