/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-access.c - parsing of access strings ("A", "A[0:64]",
 * "A[0x100:0x140]"), semaphore waits ("S>=3") and Neuron runtime operand
 * strings (see docs/dependencies.md, "Neuron operands").
 */
#include <errno.h>
#include <string.h>
#include <ctype.h>
#include "deps/deps-int.h"

/* Parse a decimal or 0x-hex unsigned number in [s, end); 0 or -EINVAL. */
static int
parse_off(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int base = 10;

	while (s < end && (*s == ' ' || (*s >= '\t' && *s <= '\r')))	/* isspace() in C */
		s++;
	while (end > s && (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
		end--;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/*
 * The common "[LO:HI]" of plain digits (or 0x and hex digits) without
 * spaces, at @br up to @end: true with the numbers when it is that and
 * nothing overflows.  Anything else is left to the general parse, which
 * accepts everything this does, with the same numbers.
 */
static bool
fast_range(const char *br, const char *end, uint64_t *lo, uint64_t *hi)
{
	const char *p = deps_offset_plain(br + 1, end, ':', lo);

	if (p)
		p = deps_offset_plain(p, end, ']', hi);
	return p == end;
}

int
deps_access_parse_n(const char *s, size_t len, struct deps_access *a)
{
	const char *br = NULL, *colon, *end = s + len, *p;

	if (!s)
		return -EINVAL;
	/* the name: up to the first '[', without ']', spaces (isspace() in C) or NULs */
	for (p = s; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '[') {
			br = p;
			break;
		}
		if (c == ']' || c == ' ' || (c >= '\t' && c <= '\r') || c == '\0')
			return -EINVAL;
	}
	a->name = s;
	a->name_len = (size_t)(p - s);
	if (a->name_len == 0)
		return -EINVAL;
	if (!br) {
		a->lo = 0;
		a->hi = DEPS_WHOLE;
		return 0;
	}
	if (!fast_range(br, end, &a->lo, &a->hi)) {
		/* "[LO:HI]" closes the string */
		if (end[-1] != ']' || end - 1 == br || memchr(br, ']', end - 1 - br))
			return -EINVAL;
		colon = memchr(br, ':', end - 1 - br);
		if (!colon)
			return -EINVAL;
		if (parse_off(br + 1, colon, &a->lo) || parse_off(colon + 1, end - 1, &a->hi))
			return -EINVAL;
	}
	if (a->lo >= a->hi)
		return -EINVAL;
	return 0;
}

int
deps_access_parse(const char *s, struct deps_access *a)
{
	if (!s)
		return -EINVAL;
	return deps_access_parse_n(s, strlen(s), a);
}

int
deps_wait_parse_n(const char *s, size_t len, const char **name, size_t *name_len, int64_t *n)
{
	const char *ge = NULL, *p, *end = s + len;
	uint64_t v;

	if (!s)
		return -EINVAL;
	for (p = s; p + 1 < end; p++)
		if (p[0] == '>' && p[1] == '=')
			ge = p;
	if (!ge || ge == s)
		return -EINVAL;
	for (p = s; p < ge; p++)
		if (isspace((unsigned char)*p) || *p == '\0')
			return -EINVAL;
	p = ge + 2;
	if (p == end || !isdigit((unsigned char)*p))
		return -EINVAL;
	if (parse_off(p, end, &v) || v > INT64_MAX)
		return -EINVAL;
	*name = s;
	*name_len = ge - s;
	*n = (int64_t)v;
	return 0;
}

int
deps_wait_parse(const char *s, const char **name, size_t *name_len, int64_t *n)
{
	if (!s)
		return -EINVAL;
	return deps_wait_parse_n(s, strlen(s), name, name_len, n);
}

/*
 * Element size of a Neuron dtype: the first run of digits is the width in
 * bits ("fp16", "bf16", "bfloat16", "float32", "fp8_e4m3", "int8").
 * Return: bytes, or 0 when unknown.
 */
static unsigned
dtype_bytes(const char *s, size_t len)
{
	unsigned bits = 0;
	size_t i = 0;

	while (i < len && !isdigit((unsigned char)s[i]))
		i++;
	while (i < len && isdigit((unsigned char)s[i]) && bits < 1024)
		bits = bits * 10 + (s[i++] - '0');
	if (bits < 8 || bits % 8)
		return 0;
	return bits / 8;
}

/*
 * Parse "[a,b,c]" at *p (up to @end) into @v (at most @max values).
 * Return: the number of values, or -1 when malformed.
 */
static int
parse_list(const char **p, const char *end, int64_t *v, int max)
{
	const char *s = *p;
	int n = 0;

	if (s >= end || *s != '[')
		return -1;
	s++;
	for (;;) {
		const char *q = s;
		int64_t x = 0;
		bool neg = false;

		if (q < end && *q == '-') {
			neg = true;
			q++;
		}
		if (q >= end || !isdigit((unsigned char)*q))
			return -1;
		while (q < end && isdigit((unsigned char)*q)) {
			if (x > INT64_MAX / 16)
				return -1;
			x = x * 10 + (*q++ - '0');
		}
		if (n >= max)
			return -1;
		v[n++] = neg ? -x : x;
		if (q < end && *q == ',') {
			s = q + 1;
			continue;
		}
		if (q < end && *q == ']') {
			*p = q + 1;
			return n;
		}
		return -1;
	}
}

/*
 * One "KEY=DTYPE@[SPACE:]ADDR[steps][counts]" operand.  The buffer is SPACE
 * (default "mem"); the byte range runs from ADDR over the span of elements
 * the pattern touches: 1 + sum((count_i - 1) * |step_i|) elements.
 */
static int
parse_operand(const char *v, const char *end, bool write, const struct deps_opsink *sink)
{
	const char *at = memchr(v, '@', end - v), *addr, *colon, *p;
	int64_t steps[8], counts[8];
	uint64_t base, span = 1, bytes;
	unsigned esz;
	int ns, nc, i;
	const char *space = "mem";
	size_t space_len = 3;

	if (!at)
		return -EINVAL;
	esz = dtype_bytes(v, at - v);
	if (!esz)
		return -EINVAL;
	addr = at + 1;
	p = addr;
	while (p < end && *p != '[')
		p++;
	colon = memchr(addr, ':', p - addr);
	if (colon) {
		space = addr;
		space_len = colon - addr;
		addr = colon + 1;
		if (!space_len)
			return -EINVAL;
	}
	if (parse_off(addr, p, &base))
		return -EINVAL;
	if (p < end) {
		ns = parse_list(&p, end, steps, 8);
		if (ns < 0)
			return -EINVAL;
		nc = parse_list(&p, end, counts, 8);
		if (nc < 0 || nc != ns || p != end)
			return -EINVAL;
		for (i = 0; i < nc; i++) {
			int64_t st = steps[i] < 0 ? -steps[i] : steps[i];

			if (counts[i] < 1)
				return -EINVAL;
			if (counts[i] > 1 && st > (INT64_MAX / 4) / (counts[i] - 1))
				return -EINVAL;
			span += (uint64_t)(counts[i] - 1) * (uint64_t)st;
			if (span > (uint64_t)INT64_MAX / 8)
				return -EINVAL;
		}
	}
	bytes = span * esz;
	if (base > DEPS_WHOLE - bytes)
		return -EINVAL;
	if (sink->access)
		sink->access(sink->ctx, write, space, space_len, base, base + bytes);
	return 0;
}

void
deps_operands_parse(const char *ops, const struct deps_opsink *sink)
{
	const char *p = ops, *prev = NULL;
	size_t prev_len = 0;

	if (!ops)
		return;
	while (*p) {
		const char *tok, *end, *pp, *eq, *ge;
		size_t len;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		end = p;
		len = end - tok;
		pp = NULL;
		for (const char *q = tok; q + 1 < end; q++)
			if (q[0] == '+' && q[1] == '+') {
				pp = q;
				break;
			}
		eq = memchr(tok, '=', len);
		ge = NULL;
		for (const char *q = tok; q + 1 < end; q++)
			if (q[0] == '>' && q[1] == '=')
				ge = q;
		if (pp) {
			/* "S[5]++@complete" or "S[5] (Tensor)++@complete" */
			const char *name = tok, *nend = pp;

			if (*name == '$')
				name++;
			if (nend > name && nend[-1] == ')') {
				const char *o = name;

				while (o < nend && *o != '(')
					o++;
				nend = o;
			}
			if (nend > name) {
				if (sink->signal)
					sink->signal(sink->ctx, name, nend - name);
			} else if (prev && prev_len) {
				if (sink->signal)
					sink->signal(sink->ctx, prev, prev_len);
			} else if (sink->bad) {
				sink->bad(sink->ctx, tok, len);
			}
		} else if (ge) {
			/* "$S[45]>=16" */
			const char *name = *tok == '$' ? tok + 1 : tok;
			int64_t n = 0;
			bool okn = ge > name && ge + 2 < end;

			for (const char *q = ge + 2; okn && q < end; q++)
				if (!isdigit((unsigned char)*q))
					okn = false;
			for (const char *q = ge + 2; okn && q < end; q++) {
				if (n > INT64_MAX / 10 - 9) {
					okn = false;
					break;
				}
				n = n * 10 + (*q - '0');
			}
			if (okn && sink->wait)
				sink->wait(sink->ctx, name, ge - name, n);
			else if (!okn && sink->bad)
				sink->bad(sink->ctx, tok, len);
		} else if (eq && (!strncmp(tok, "src", 3) || !strncmp(tok, "dst", 3))) {
			bool write = tok[0] == 'd';

			/* "src=..." with nothing after "=" (e.g. "dst=...") is a placeholder */
			if (eq + 1 < end && strncmp(eq + 1, "...", 3) &&
			    parse_operand(eq + 1, end, write, sink) && sink->bad)
				sink->bad(sink->ctx, tok, len);
		}
		prev = *tok == '$' ? tok + 1 : tok;
		prev_len = end - prev;
	}
}
