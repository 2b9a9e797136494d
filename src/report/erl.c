/* SPDX-License-Identifier: MIT */
/* erl.c - Erlang term text shared by the Erlang-style report writers: quoting and
 * escaping of atoms and strings, UTF-8 decoding, code-point widths and term order on
 * names. The rules are those of formats.md 1.8; every form written here was checked to
 * read back with OTP 25's file:consult/1 (tests/report.cmake runs that check). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltrace/erl.h"
#include "calltrace/util.h"

void erl_buf_init(struct erl_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void erl_buf_fini(struct erl_buf *b)
{
	free(b->data);
	erl_buf_init(b);
}

void erl_buf_reset(struct erl_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void erl_buf_add(struct erl_buf *b, const char *s, size_t n)
{
	xgrow(&b->data, &b->cap, b->len + n + 1, 1);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void erl_buf_puts(struct erl_buf *b, const char *s)
{
	erl_buf_add(b, s, strlen(s));
}

void erl_buf_printf(struct erl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	xgrow(&b->data, &b->cap, b->len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void erl_buf_spaces(struct erl_buf *b, size_t n)
{
	xgrow(&b->data, &b->cap, b->len + n + 1, 1);
	memset(b->data + b->len, ' ', n);
	b->len += n;
	b->data[b->len] = '\0';
}

const char *erl_buf_str(const struct erl_buf *b)
{
	return b->data ? b->data : "";
}

size_t erl_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;
	uint32_t c, min;

	if (n == 0)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0) {
		len = 2;
		c = u[0] & 0x1f;
		min = 0x80;
	} else if ((u[0] & 0xf0) == 0xe0) {
		len = 3;
		c = u[0] & 0x0f;
		min = 0x800;
	} else if ((u[0] & 0xf8) == 0xf0) {
		len = 4;
		c = u[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Next character of @s (NUL-terminated, @n bytes left): its code point, advancing *@i.
 * An invalid byte is one character whose code point is the byte's value. */
static uint32_t next_char(const char *s, size_t n, size_t *i)
{
	uint32_t cp;
	size_t len = erl_utf8_decode(s + *i, n - *i, &cp);

	if (!len) {
		cp = (unsigned char)s[*i];
		len = 1;
	}
	*i += len;
	return cp;
}

size_t erl_text_width(const char *s)
{
	size_t n = strlen(s), i = 0, w = 0;

	while (i < n) {
		next_char(s, n, &i);
		w++;
	}
	return w;
}

int erl_text_cmp(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), i = 0, j = 0;

	while (i < na && j < nb) {
		uint32_t ca = next_char(a, na, &i), cb = next_char(b, nb, &j);

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	if (i < na)
		return 1;
	return j < nb ? -1 : 0;
}

bool erl_is_reserved(const char *name)
{
	/* OTP 25's reserved words plus maybe and else (reserved from OTP 27 on): quoting
	 * them is always safe. */
	static const char *const words[] = {
		"after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr",
		"bxor", "case", "catch", "cond", "div", "end", "fun", "if", "let", "maybe",
		"else", "not", "of", "or", "orelse", "receive", "rem", "try", "when", "xor",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(name, words[i]))
			return true;
	return false;
}

bool erl_atom_is_bare(const char *name)
{
	if (name[0] < 'a' || name[0] > 'z')
		return false;
	for (const char *c = name + 1; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '_' || *c == '@')
			continue;
		return false;
	}
	return !erl_is_reserved(name);
}

bool erl_name_is_string(const char *name)
{
	return erl_text_width(name) > ERL_ATOM_MAX;
}

/* Append @s between @quote characters, escaping the backslash, @quote, control
 * characters and bytes that are not valid UTF-8. \xHH takes exactly two hex digits in
 * Erlang, so a following hex digit is not swallowed. */
static void append_quoted(struct erl_buf *b, const char *s, char quote)
{
	size_t n = strlen(s), i = 0;
	char q[2] = { quote, '\0' };

	erl_buf_puts(b, q);
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t len;

		if (c == '\\' || c == (unsigned char)quote) {
			char esc[3] = { '\\', (char)c, '\0' };

			erl_buf_puts(b, esc);
			i++;
		} else if (c == '\n') {
			erl_buf_puts(b, "\\n");
			i++;
		} else if (c == '\t') {
			erl_buf_puts(b, "\\t");
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			erl_buf_printf(b, "\\x%02X", c);
			i++;
		} else if ((len = erl_utf8_decode(s + i, n - i, &cp)) != 0) {
			erl_buf_add(b, s + i, len);
			i += len;
		} else {
			erl_buf_printf(b, "\\x%02X", c);
			i++;
		}
	}
	erl_buf_puts(b, q);
}

void erl_append_atom(struct erl_buf *b, const char *name)
{
	if (erl_atom_is_bare(name))
		erl_buf_puts(b, name);
	else
		append_quoted(b, name, '\'');
}

void erl_append_string(struct erl_buf *b, const char *s)
{
	append_quoted(b, s, '"');
}

void erl_append_name(struct erl_buf *b, const char *name)
{
	if (erl_name_is_string(name))
		erl_append_string(b, name);
	else
		erl_append_atom(b, name);
}
