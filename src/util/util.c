/* SPDX-License-Identifier: MIT */
/* util.c - allocation, messages and die(). The one place where calltrace decides how a
 * fatal error ends: release the tracees (restore their code), then exit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/util.h"

static void (*release_hook)(void);

void util_set_release_hook(void (*fn)(void))
{
	release_hook = fn;
}

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	fputs("calltrace: ", stderr);
	if (level)
		fprintf(stderr, "%s: ", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msg_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning", fmt, ap);
	va_end(ap);
}

void msg_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("note", fmt, ap);
	va_end(ap);
}

void msg_debug(const char *fmt, ...)
{
	static int enabled = -1;
	va_list ap;

	if (enabled < 0)
		enabled = getenv("CALLTRACE_DEBUG") != NULL;
	if (!enabled)
		return;
	va_start(ap, fmt);
	vmsg("debug", fmt, ap);
	va_end(ap);
}

void die(int status, const char *fmt, ...)
{
	va_list ap;
	void (*hook)(void) = release_hook;

	release_hook = NULL;          /* a failure inside the hook must not recurse */
	if (hook)
		hook();
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
	exit(status);
}

static void *check(void *p, size_t n)
{
	if (!p && n)
		die(EXIT_TRACER, "out of memory (%zu bytes)", n);
	return p;
}

void *xmalloc(size_t n)
{
	return check(malloc(n ? n : 1), n);
}

void *xcalloc(size_t nmemb, size_t n)
{
	return check(calloc(nmemb ? nmemb : 1, n ? n : 1), nmemb * n);
}

void *xrealloc(void *p, size_t n)
{
	return check(realloc(p, n ? n : 1), n);
}

void xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	void **pp = p;
	size_t ncap = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (ncap < need)
		ncap *= 2;
	*pp = xrealloc(*pp, ncap * elem);
	*cap = ncap;
}

char *xstrdup(const char *s)
{
	return check(strdup(s), strlen(s) + 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die(EXIT_TRACER, "out of memory");
	return s;
}
