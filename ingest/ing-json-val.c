/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-json-val.c - a small validating JSON value parser over one
 * complete buffer (an event object), string decoding, and the exact
 * microsecond -> nanosecond number parser.  No allocation on the fast path.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/json-int.h"

#define IJ_MAX_DEPTH 512

const char *
ij_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* @p is just after the opening quote.  Returns the byte after the closing one. */
static const char *
parse_str(const char *p, const char *end, struct ij_val *v, const char **why, const char **at)
{
	const char *s = p;

	v->esc = false;
	for (;;) {
		p = ij_str_skip(p, end);
		if (p >= end) {
			*why = "unterminated string";
			*at = s - 1;
			return NULL;
		}
		if (*p == '"')
			break;
		v->esc = true;
		if (p + 1 >= end) {
			*why = "unterminated string";
			*at = s - 1;
			return NULL;
		}
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6 || tc_hexval(p[2]) < 0 || tc_hexval(p[3]) < 0 ||
			    tc_hexval(p[4]) < 0 || tc_hexval(p[5]) < 0) {
				*why = "bad \\u escape in string";
				*at = p;
				return NULL;
			}
			p += 6;
			break;
		default:
			*why = "bad escape in string";
			*at = p;
			return NULL;
		}
	}
	v->type = IJ_STR;
	v->p = s;
	v->n = p - s;
	return p + 1;
}

static const char *
parse_num(const char *p, const char *end, const char **why, const char **at)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		goto bad;
	if (*p == '0')
		p++;
	else
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p;
bad:
	*why = "invalid number";
	*at = s;
	return NULL;
}

static const char *value_at(const char *p, const char *end, struct ij_val *v, int depth,
			    const char **why, const char **at);

static const char *
parse_container(const char *p, const char *end, int depth, const char **why, const char **at)
{
	char close = *p == '{' ? '}' : ']';
	bool obj = *p == '{';
	const char *open = p;
	struct ij_val k, v;
	bool first = true;

	if (depth >= IJ_MAX_DEPTH) {
		*why = "nesting too deep";
		*at = p;
		return NULL;
	}
	p++;
	for (;;) {
		p = ij_ws(p, end);
		if (p >= end)
			goto trunc;
		if (*p == close && first)
			return p + 1;
		if (obj) {
			if (*p != '"') {
				*why = "expected a string key";
				*at = p;
				return NULL;
			}
			p = parse_str(p + 1, end, &k, why, at);
			if (!p)
				return NULL;
			p = ij_ws(p, end);
			if (p >= end)
				goto trunc;
			if (*p != ':') {
				*why = "expected ':'";
				*at = p;
				return NULL;
			}
			p++;
		}
		p = value_at(p, end, &v, depth + 1, why, at);
		if (!p)
			return NULL;
		p = ij_ws(p, end);
		if (p >= end)
			goto trunc;
		if (*p == close)
			return p + 1;
		if (*p != ',') {
			*why = obj ? "expected ',' or '}'" : "expected ',' or ']'";
			*at = p;
			return NULL;
		}
		p++;
		first = false;
	}
trunc:
	*why = obj ? "unterminated object" : "unterminated array";
	*at = open;
	return NULL;
}

static const char *
value_at(const char *p, const char *end, struct ij_val *v, int depth, const char **why,
	 const char **at)
{
	const char *s;

	p = ij_ws(p, end);
	v->esc = false;
	if (p >= end) {
		*why = "expected a value";
		*at = p;
		return NULL;
	}
	s = p;
	switch (*p) {
	case '"':
		return parse_str(p + 1, end, v, why, at);
	case '{':
	case '[':
		v->type = *p == '{' ? IJ_OBJ : IJ_ARR;
		p = parse_container(p, end, depth, why, at);
		break;
	case 't':
		v->type = IJ_TRUE;
		p = (end - p >= 4 && !memcmp(p, "true", 4)) ? p + 4 : NULL;
		break;
	case 'f':
		v->type = IJ_FALSE;
		p = (end - p >= 5 && !memcmp(p, "false", 5)) ? p + 5 : NULL;
		break;
	case 'n':
		v->type = IJ_NULL;
		p = (end - p >= 4 && !memcmp(p, "null", 4)) ? p + 4 : NULL;
		break;
	default:
		v->type = IJ_NUM;
		p = parse_num(p, end, why, at);
		if (!p)
			return NULL;
		break;
	}
	if (!p) {
		if (v->type != IJ_OBJ && v->type != IJ_ARR) {
			*why = "invalid literal";
			*at = s;
		}
		return NULL;
	}
	v->p = s;
	v->n = p - s;
	return p;
}

const char *
ij_value(const char *p, const char *end, struct ij_val *v, const char **why, const char **at)
{
	return value_at(p, end, v, 0, why, at);
}

const char *
ij_value_at(const char *p, const char *end, struct ij_val *v, int depth, const char **why,
	    const char **at)
{
	return value_at(p, end, v, depth, why, at);
}

int
ij_member(const char **pp, const char *end, bool first, struct ij_val *key, const char **why,
	  const char **at)
{
	const char *p = ij_ws(*pp, end);

	if (p >= end)
		goto trunc;
	if (*p == '}') {
		*pp = p + 1;
		return 0;
	}
	if (!first) {
		if (*p != ',') {
			*why = "expected ',' or '}'";
			*at = p;
			return -1;
		}
		p = ij_ws(p + 1, end);
		if (p >= end)
			goto trunc;
	}
	if (*p != '"') {
		*why = "expected a string key";
		*at = p;
		return -1;
	}
	p = parse_str(p + 1, end, key, why, at);
	if (!p)
		return -1;
	p = ij_ws(p, end);
	if (p >= end)
		goto trunc;
	if (*p != ':') {
		*why = "expected ':'";
		*at = p;
		return -1;
	}
	*pp = p + 1;
	return 1;
trunc:
	*why = "unterminated object";
	*at = p;
	return -1;
}

int
ij_obj_next(const char **pp, const char *end, bool first, struct ij_val *key,
	    struct ij_val *val, const char **why, const char **at)
{
	const char *p;
	int ret = ij_member(pp, end, first, key, why, at);

	if (ret <= 0)
		return ret;
	p = value_at(*pp, end, val, 1, why, at);
	if (!p)
		return -1;
	*pp = p;
	return 1;
}

static uint32_t
hex4(const char *p)
{
	return (uint32_t)(tc_hexval(p[0]) << 12 | tc_hexval(p[1]) << 8 | tc_hexval(p[2]) << 4 |
			  tc_hexval(p[3]));
}

void
ij_str_decode(const struct ij_val *v, struct tc_buf *out)
{
	const char *p = v->p, *end = v->p + v->n, *run;
	uint32_t cp, lo;

	if (!v->esc) {
		tc_buf_add(out, p, v->n);
		return;
	}
	while (p < end) {
		run = p;
		while (p < end && *p != '\\')
			p++;
		if (p > run)
			tc_buf_add(out, run, p - run);
		if (p >= end)
			break;
		/* ij_value() validated the escape. */
		switch (p[1]) {
		case 'b': tc_buf_addc(out, '\b'); break;
		case 'f': tc_buf_addc(out, '\f'); break;
		case 'n': tc_buf_addc(out, '\n'); break;
		case 'r': tc_buf_addc(out, '\r'); break;
		case 't': tc_buf_addc(out, '\t'); break;
		case 'u':
			cp = hex4(p + 2);
			p += 6;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && tc_hexval(p[2]) >= 0 && tc_hexval(p[3]) >= 0 &&
			    tc_hexval(p[4]) >= 0 && tc_hexval(p[5]) >= 0 &&
			    (lo = hex4(p + 2)) >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;	/* lone surrogate */
			}
			tc_buf_add_utf8(out, cp);
			continue;
		default: tc_buf_addc(out, p[1]); break;
		}
		p += 2;
	}
}

/* The slow path: exponents.  @p/@n were checked by the caller's grammar scan. */
static int
us_to_ns_double(const char *p, size_t n, int64_t *out)
{
	char tmp[64];
	double d;

	if (n >= sizeof(tmp))
		return -ERANGE;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	d = strtod(tmp, NULL) * 1000.0;
	if (!(d > -9e18 && d < 9e18))	/* the plain form's bound: under 9e15 µs */
		return -ERANGE;
	*out = llround(d);
	return 0;
}

int
ij_us_to_ns(const char *p, size_t n, int64_t *out)
{
	const char *s = p, *end = p + n;
	bool neg = false;
	uint64_t ip = 0, frac = 0;
	int fd = 0;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9') {
		if (ip > (UINT64_C(9000000000000000) - 9) / 10)
			return -ERANGE;
		ip = ip * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return -EINVAL;
		while (p < end && *p >= '0' && *p <= '9') {
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(*p - '0');
			else if (fd == 3 && *p >= '5')
				frac++;		/* round half away from zero */
			fd++;
			p++;
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return -EINVAL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p != end)
			return -EINVAL;
		return us_to_ns_double(s, n, out);
	}
	if (p != end)
		return -EINVAL;
	while (fd < 3) {
		frac *= 10;
		fd++;
	}
	if (ip > UINT64_C(9000000000000000))	/* ns must fit in int64 */
		return -ERANGE;
	ip = ip * 1000 + frac;
	*out = neg ? -(int64_t)ip : (int64_t)ip;
	return 0;
}

int
ij_num_double(const char *p, size_t n, double *out)
{
	char tmp[64];
	const char *why, *at, *q;
	char *e;

	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	q = parse_num(p, p + n, &why, &at);
	if (!q || q != p + n)
		return -EINVAL;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	*out = strtod(tmp, &e);
	return 0;
}
