/* SPDX-License-Identifier: MIT */
/*
 * common/tc-jw.h - a JSON text writer for the large answers (the server's
 * timeline, search and summary, the dependency chains).  It appends to a growable buffer the
 * exact text json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) would print for the
 * same values (same escapes, same real formatting), without building a DOM.
 * Strings that are not valid UTF-8 get U+FFFD for each bad byte, like
 * tc_json_str().  The caller writes the punctuation ({, ", :, ,) itself
 * with tc_jw_lit().
 */
#ifndef COMMON_TC_JW_H
#define COMMON_TC_JW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** struct tc_jw - the text being written; @p is malloc'd, NUL-terminated when non-NULL. */
struct tc_jw {
	char *p;
	size_t len, cap;
};

/** tc_jw_grow - make room for @n more bytes (and a NUL). */
void tc_jw_grow(struct tc_jw *w, size_t n);

static inline char *
tc_jw_room(struct tc_jw *w, size_t n)
{
	if (w->len + n + 1 > w->cap)
		tc_jw_grow(w, n);
	return w->p + w->len;
}

/** tc_jw_raw - append @n bytes of ready JSON text. */
static inline void
tc_jw_raw(struct tc_jw *w, const char *s, size_t n)
{
	memcpy(tc_jw_room(w, n), s, n);
	w->len += n;
	w->p[w->len] = 0;
}

/* A string literal of JSON punctuation/keys. */
#define tc_jw_lit(w, lit) tc_jw_raw((w), "" lit, sizeof(lit) - 1)	/* literals only */

/**
 * tc_i64_text - @v in decimal into @buf (at least 21 bytes), NUL-terminated.
 * Return: the length.
 */
int tc_i64_text(char *buf, int64_t v);

/**
 * tc_u64_text - @v in decimal into @buf (at least 21 bytes), NUL-terminated.
 * Return: the length.
 */
int tc_u64_text(char *buf, uint64_t v);

/** tc_jw_i64 - append @v in decimal. */
void tc_jw_i64(struct tc_jw *w, int64_t v);
#define TC_REAL_TEXT_MAX 40

/**
 * tc_real_text - the text of the finite double @v as Jansson 2.14 (built
 * without dtoa) writes a real: "%.17g", ".0" added when that has neither '.'
 * nor 'e', the exponent without '+' or leading zeros.  Whole values and
 * those from 1e-4 to 1e15 are written without printf, digit for digit the
 * same (ties to even, as glibc rounds).
 * @buf: TC_REAL_TEXT_MAX bytes, NUL-terminated on return.
 * Return: the length; 0 when @v is not finite.
 */
int tc_real_text(char *buf, double v);

/** tc_jw_real - append @v as Jansson prints a real ("%.17g", always a '.' or
 * an exponent); a non-finite @v, which Jansson cannot hold, becomes null. */
void tc_jw_real(struct tc_jw *w, double v);
/** tc_jw_str - append @s as a JSON string (ASCII only, \uXXXX escapes);
 * NULL appends null. */
void tc_jw_str(struct tc_jw *w, const char *s);
/** tc_jw_strn - tc_jw_str() of @n bytes (may hold no NUL). */
void tc_jw_strn(struct tc_jw *w, const char *s, size_t n);
/**
 * tc_jw_indent - append compact JSON text @s (@len bytes, as this writer or
 * json_dumps(JSON_COMPACT) writes it: no whitespace outside strings) laid
 * out as json_dumps(JSON_INDENT(@n)) lays it out: each member and element
 * on its own line, @n spaces a level, ": " after keys, {} and [] when
 * empty.  Strings and numbers are copied as they are (so non-ASCII stays
 * escaped).  Not a validator: text that is not JSON comes out re-spaced.
 */
void tc_jw_indent(struct tc_jw *w, const char *s, size_t len, int n);
/** tc_jw_free - release the text; tc_jw_free() of a zeroed writer is a no-op. */
void tc_jw_free(struct tc_jw *w);

#endif /* COMMON_TC_JW_H */
