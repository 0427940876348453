/* SPDX-License-Identifier: MIT */
/*
 * common/tc-jw.c - the JSON text writer of tc-jw.h: decimal integers
 * without printf, reals formatted as Jansson formats them, and strings
 * escaped as Jansson escapes them with JSON_ENSURE_ASCII.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A newline and @depth * @n spaces. */
static void
jw_newline(struct tc_jw *w, int n, int depth)
{
	size_t k = (size_t)n * (size_t)depth;
	char *p = tc_jw_room(w, k + 1);

	p[0] = '\n';
	memset(p + 1, ' ', k);
	w->len += k + 1;
	w->p[w->len] = 0;
}

void
tc_jw_indent(struct tc_jw *w, const char *s, size_t len, int n)
{
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		size_t j = i;
		char c = s[i];

		switch (c) {
		case '"':	/* the string as it is, escapes included */
			for (j = i + 1; j < len && s[j] != '"'; j++)
				if (s[j] == '\\')
					j++;
			j = j < len ? j : len - 1;
			tc_jw_raw(w, s + i, j - i + 1);
			i = j;
			break;
		case '{':
		case '[':
			if (i + 1 < len && s[i + 1] == (c == '{' ? '}' : ']')) {
				tc_jw_raw(w, s + i, 2);	/* empty: {} or [] */
				i++;
				break;
			}
			tc_jw_raw(w, &c, 1);
			jw_newline(w, n, ++depth);
			break;
		case '}':
		case ']':
			jw_newline(w, n, depth > 0 ? --depth : 0);
			tc_jw_raw(w, &c, 1);
			break;
		case ',':
			tc_jw_lit(w, ",");
			jw_newline(w, n, depth);
			break;
		case ':':
			tc_jw_lit(w, ": ");
			break;
		default:	/* numbers, true, false, null */
			while (j + 1 < len && !strchr("\"{}[],:", s[j + 1]))
				j++;
			tc_jw_raw(w, s + i, j - i + 1);
			i = j;
		}
	}
}

/* 10^0 .. 10^19, exact */
static const uint64_t pow10_u64[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* 10^-3 .. 10^14, for a first guess */
static const double pow10_dbl[18] = {
	1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14,
};

static unsigned __int128
pow10_u128(int k)
{
	return k < 20 ? pow10_u64[k] : (unsigned __int128)pow10_u64[19] * pow10_u64[k - 19];
}

/* Decimal digits of @u (< 10^20) into @s; their count. */
static int
u64_digits(char *s, uint64_t u)
{
	char tmp[20], *e = tmp + sizeof(tmp), *p = e;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	memcpy(s, p, (size_t)(e - p));
	return (int)(e - p);
}

int
tc_u64_text(char *buf, uint64_t v)
{
	int n = u64_digits(buf, v);

	buf[n] = 0;
	return n;
}

int
tc_i64_text(char *buf, int64_t v)
{
	int n = 0;

	if (v < 0)
		buf[n++] = '-';
	n += u64_digits(buf + n, v < 0 ? -(uint64_t)v : (uint64_t)v);
	buf[n] = 0;
	return n;
}

void
tc_jw_i64(struct tc_jw *w, int64_t v)
{
	char buf[24];

	tc_jw_raw(w, buf, (size_t)tc_i64_text(buf, v));
}

/*
 * "%.17g" of a finite @v in fixed notation, from exact integer arithmetic:
 * the 17 significant digits are round(|v| * 10^(16 - X)) with X the decimal
 * exponent, ties to even as glibc rounds (the value m * 2^e is exact, so
 * m * 10^s fits 128 bits for the exponents taken here).  Trailing zeros of
 * the fraction are dropped as %g drops them, then Jansson's ".0" rule.
 * Return: the length, or 0 for what it leaves to printf (|v| below 1e-4,
 * where %g may turn to an exponent, and from 1e15, handled elsewhere).
 */
static int
real17_fixed(char *buf, double v)
{
	uint64_t bits, m;
	unsigned __int128 pr, q, rem, half;
	int e, x, shift, n = 0, i, last;
	char d[20];
	double a = fabs(v);

	if (!(a >= 1e-4 && a < 1e15))
		return 0;
	memcpy(&bits, &v, sizeof(bits));
	m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
	e = (int)((bits >> 52) & 0x7ff) - 1075;		/* v = m * 2^e */
	if (e >= 0)
		return 0;	/* whole: not reached, callers take those first */
	shift = -e;		/* 1 .. 66 for this range */
	/* a first guess of the exponent, corrected below on the exact digits */
	for (x = -4; x < 14 && a >= pow10_dbl[x + 4]; x++)
		;
	for (;;) {
		pr = (unsigned __int128)m * pow10_u128(16 - x);
		q = pr >> shift;
		rem = pr & (((unsigned __int128)1 << shift) - 1);
		half = (unsigned __int128)1 << (shift - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
		if (q >= pow10_u64[17] && x < 15)
			x++;
		else if (q < pow10_u64[16] && x > -4)
			x--;
		else
			break;
	}
	if (q >= pow10_u64[17] || q < pow10_u64[16])
		return 0;
	u64_digits(d, (uint64_t)q);	/* 17 digits */
	for (last = 16; last > 0 && d[last] == '0'; last--)
		;
	if (v < 0)
		buf[n++] = '-';
	if (x >= 0) {
		memcpy(buf + n, d, (size_t)x + 1);
		n += x + 1;
		buf[n++] = '.';
		if (last <= x) {
			buf[n++] = '0';
		} else {
			memcpy(buf + n, d + x + 1, (size_t)(last - x));
			n += last - x;
		}
	} else {
		buf[n++] = '0';
		buf[n++] = '.';
		for (i = 0; i < -x - 1; i++)
			buf[n++] = '0';
		memcpy(buf + n, d, (size_t)last + 1);
		n += last + 1;
	}
	buf[n] = 0;
	return n;
}

int
tc_real_text(char *buf, double v)
{
	char *x;
	int n;

	if (!isfinite(v))
		return 0;
	if (v == 0 && signbit(v)) {
		memcpy(buf, "-0.0", 5);
		return 4;
	}
	/* whole values below 2^53 print all their digits with %.17g */
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
		n = tc_i64_text(buf, (int64_t)v);
		memcpy(buf + n, ".0", 3);
		return n + 2;
	}
	n = real17_fixed(buf, v);
	if (n)
		return n;
	n = snprintf(buf, TC_REAL_TEXT_MAX, "%.17g", v);
	if (n <= 0 || n >= TC_REAL_TEXT_MAX - 3)
		return 0;
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
	return n;
}

void
tc_jw_real(struct tc_jw *w, double v)
{
	char buf[TC_REAL_TEXT_MAX];
	int n;

	if (!(n = tc_real_text(buf, v))) {	/* not finite */
		tc_jw_lit(w, "null");
		return;
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
