/* SPDX-License-Identifier: MIT */
/*
 * common/tc-jw.c - the JSON text writer of tc-jw.h: decimal integers
 * without printf, reals formatted as Jansson formats them, and strings
 * escaped as Jansson escapes them with JSON_ENSURE_ASCII.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/tc.h"
#include "common/tc-jw.h"

void
tc_jw_grow(struct tc_jw *w, size_t n)
{
	size_t need = w->len + n + 1, cap = w->cap ? w->cap : 4096;

	while (cap < need)
		cap *= 2;
	w->p = tc_xrealloc(w->p, cap);
	w->cap = cap;
}

void
tc_jw_free(struct tc_jw *w)
{
	free(w->p);
	w->p = NULL;
	w->len = w->cap = 0;
}

void
tc_jw_i64(struct tc_jw *w, int64_t v)
{
	char tmp[24], *e = tmp + sizeof(tmp), *s = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--s = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--s = '-';
	tc_jw_raw(w, s, (size_t)(e - s));
}

void
tc_jw_real(struct tc_jw *w, double v)
{
	char buf[40], *x;
	int n;

	if (!isfinite(v)) {
		tc_jw_lit(w, "null");
		return;
	}
	/* integral values below 2^53 print all digits with %.17g: fast path */
	if (v == 0 && signbit(v)) {
		tc_jw_lit(w, "-0.0");
		return;
	}
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
		tc_jw_i64(w, (int64_t)v);
		tc_jw_lit(w, ".0");
		return;
	}
	n = snprintf(buf, sizeof(buf), "%.17g", v);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 3) {
		tc_jw_lit(w, "null");
		return;
	}
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	/* Jansson drops the '+' and leading zeros of the exponent */
	x = strchr(buf, 'e');
	if (x) {
		char *start = x + 1, *end;

		if (*start == '-')
			start++;
		end = start;
		if (*end == '+')
			end++;
		while (*end == '0' && end[1])
			end++;
		if (start[0] == '+' || end != start) {
			memmove(start, end, strlen(end) + 1);
			n = (int)strlen(buf);
		}
	}
	tc_jw_raw(w, buf, (size_t)n);
}

/* Length of the valid UTF-8 sequence at @s (Jansson's rules: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 when invalid; its code
 * point in *@cp. */
static size_t
utf8_seq(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t n;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		v = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		v = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		v = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000))
		return 0;
	*cp = v;
	return n;
}

static void
put_u(struct tc_jw *w, uint32_t u)
{
	static const char hex[] = "0123456789ABCDEF";
	char *p = tc_jw_room(w, 6);

	p[0] = '\\';
	p[1] = 'u';
	p[2] = hex[(u >> 12) & 15];
	p[3] = hex[(u >> 8) & 15];
	p[4] = hex[(u >> 4) & 15];
	p[5] = hex[u & 15];
	w->len += 6;
	w->p[w->len] = 0;
}

void
tc_jw_strn(struct tc_jw *w, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + len;

	tc_jw_lit(w, "\"");
	while (s < end) {
		const unsigned char *run = s;
		uint32_t cp;
		size_t n;

		/* plain printable ASCII in one copy */
		while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			tc_jw_raw(w, (const char *)run, (size_t)(s - run));
		if (s == end)
			break;
		n = utf8_seq(s, (size_t)(end - s), &cp);
		if (!n) {
			put_u(w, 0xfffd);
			s++;
			continue;
		}
		s += n;
		switch (cp) {
		case '"':
			tc_jw_lit(w, "\\\"");
			break;
		case '\\':
			tc_jw_lit(w, "\\\\");
			break;
		case '\b':
			tc_jw_lit(w, "\\b");
			break;
		case '\f':
			tc_jw_lit(w, "\\f");
			break;
		case '\n':
			tc_jw_lit(w, "\\n");
			break;
		case '\r':
			tc_jw_lit(w, "\\r");
			break;
		case '\t':
			tc_jw_lit(w, "\\t");
			break;
		default:
			if (cp < 0x10000) {
				put_u(w, cp);
			} else {
				cp -= 0x10000;
				put_u(w, 0xd800 | (cp >> 10));
				put_u(w, 0xdc00 | (cp & 0x3ff));
			}
		}
	}
	tc_jw_lit(w, "\"");
}

void
tc_jw_str(struct tc_jw *w, const char *s)
{
	if (!s)
		tc_jw_lit(w, "null");
	else
		tc_jw_strn(w, s, strlen(s));
}
