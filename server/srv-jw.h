/* SPDX-License-Identifier: MIT */
/*
 * server/srv-jw.h - private to server/: a JSON text writer for the large
 * answers (timeline, search, summary).  It appends to a growable buffer the
 * exact text json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) would print for the
 * same values (same escapes, same real formatting), without building a DOM.
 * Strings that are not valid UTF-8 get U+FFFD for each bad byte, like
 * srv_json_str().  The caller writes the punctuation ({, ", :, ,) itself
 * with srv_jw_lit().
 */
#ifndef SRV_JW_H
#define SRV_JW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** struct srv_jw - the text being written; @p is malloc'd, NUL-terminated when non-NULL. */
struct srv_jw {
	char *p;
	size_t len, cap;
};

/** srv_jw_grow - make room for @n more bytes (and a NUL). */
void srv_jw_grow(struct srv_jw *w, size_t n);

static inline char *
srv_jw_room(struct srv_jw *w, size_t n)
{
	if (w->len + n + 1 > w->cap)
		srv_jw_grow(w, n);
	return w->p + w->len;
}

/** srv_jw_raw - append @n bytes of ready JSON text. */
static inline void
srv_jw_raw(struct srv_jw *w, const char *s, size_t n)
{
	memcpy(srv_jw_room(w, n), s, n);
	w->len += n;
	w->p[w->len] = 0;
}

/* A string literal of JSON punctuation/keys. */
#define srv_jw_lit(w, lit) srv_jw_raw((w), "" lit, sizeof(lit) - 1)	/* literals only */

/** srv_jw_i64 - append @v in decimal. */
void srv_jw_i64(struct srv_jw *w, int64_t v);
/** srv_jw_real - append @v as Jansson prints a real ("%.17g", always a '.' or
 * an exponent); a non-finite @v, which Jansson cannot hold, becomes null. */
void srv_jw_real(struct srv_jw *w, double v);
/** srv_jw_str - append @s as a JSON string (ASCII only, \uXXXX escapes);
 * NULL appends null. */
void srv_jw_str(struct srv_jw *w, const char *s);
/** srv_jw_strn - srv_jw_str() of @n bytes (may hold no NUL). */
void srv_jw_strn(struct srv_jw *w, const char *s, size_t n);
/** srv_jw_free - release the text; srv_jw_free() of a zeroed writer is a no-op. */
void srv_jw_free(struct srv_jw *w);

#endif /* SRV_JW_H */
