/* SPDX-License-Identifier: MIT */
/* erl.h - Erlang term text for the Erlang-style reports (fprof now, cprof and eprof
 * later): atom quoting and escaping, string quoting, UTF-8 decoding, code-point widths
 * and Erlang's term order on names. Everything written here reads back with
 * file:consult/1 (formats.md 1.8 "Atom and string rules"). */
#ifndef CALLTRACE_ERL_H
#define CALLTRACE_ERL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest atom file:consult accepts, in characters (code points). */
#define ERL_ATOM_MAX 255

/* A growable text buffer, always NUL-terminated once something was added. Embedded:
 * erl_buf_init() before use, erl_buf_fini() frees the text. */
struct erl_buf {
	char *data;
	size_t len, cap;
};

void erl_buf_init(struct erl_buf *b);
void erl_buf_fini(struct erl_buf *b);
/* Empty the buffer, keeping its memory. */
void erl_buf_reset(struct erl_buf *b);
void erl_buf_add(struct erl_buf *b, const char *s, size_t n);
void erl_buf_puts(struct erl_buf *b, const char *s);
void erl_buf_printf(struct erl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append @n spaces. */
void erl_buf_spaces(struct erl_buf *b, size_t n);
/* The text so far ("" if nothing was added). Borrowed, valid until the next change. */
const char *erl_buf_str(const struct erl_buf *b);

/* Decode one UTF-8 sequence at @s (at most @n bytes): its length in bytes (1..4) with
 * the code point in *@cp, or 0 if the bytes are not valid UTF-8 (overlong forms,
 * surrogates and values above U+10FFFF are invalid). */
size_t erl_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Number of characters in @s: valid UTF-8 sequences count one each, and so does every
 * byte that is not valid UTF-8. This is the width used for column padding. */
size_t erl_text_width(const char *s);

/* Compare two names in Erlang's order for atoms and strings: character by character
 * by code point (an invalid byte counts as the code point of its value), a prefix
 * first. <0, 0 or >0 like strcmp. */
int erl_text_cmp(const char *a, const char *b);

/* True if @name is one of Erlang's reserved words (including maybe and else). */
bool erl_is_reserved(const char *name);

/* True if @name can be written as an atom without quotes:
 * ^[a-z][A-Za-z0-9_@]*$ and not a reserved word. */
bool erl_atom_is_bare(const char *name);

/* True if @name is too long for an atom (more than ERL_ATOM_MAX characters), so
 * erl_append_name() writes it as a string. */
bool erl_name_is_string(const char *name);

/* Append @name as an atom: bare if possible, otherwise in single quotes with \\, \',
 * \n, \t and \xHH escapes (control characters and bytes that are not valid UTF-8).
 * Valid UTF-8 is copied as it is. The length is not checked: see erl_append_name(). */
void erl_append_atom(struct erl_buf *b, const char *name);

/* Append @s as a double-quoted string, escaping \\ and \" (and control characters and
 * invalid bytes like erl_append_atom()). */
void erl_append_string(struct erl_buf *b, const char *s);

/* Append @name as an atom, or as a string when it is longer than ERL_ATOM_MAX
 * characters (file:consult rejects longer atoms). */
void erl_append_name(struct erl_buf *b, const char *name);

#endif
