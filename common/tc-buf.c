/* SPDX-License-Identifier: MIT */
/* common/tc-buf.c - growable NUL-terminated byte buffers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc.h"

void
tc_buf_init(struct tc_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
tc_buf_free(struct tc_buf *b)
{
	free(b->data);
	tc_buf_init(b);
}

void
tc_buf_reset(struct tc_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static void
tc_buf_grow(struct tc_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 64;
	while (b->cap < need)
		b->cap *= 2;
	b->data = tc_xrealloc(b->data, b->cap);
}

char *
tc_buf_room(struct tc_buf *b, size_t n)
{
	tc_buf_grow(b, n);
	return b->data + b->len;
}

void
tc_buf_commit(struct tc_buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = '\0';
}

void
tc_buf_add(struct tc_buf *b, const void *p, size_t n)
{
	tc_buf_grow(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
tc_buf_adds(struct tc_buf *b, const char *s)
{
	tc_buf_add(b, s, strlen(s));
}

void
tc_buf_printf(struct tc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	tc_buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *
tc_buf_steal(struct tc_buf *b)
{
	char *p = b->data ? b->data : tc_xstrdup("");

	tc_buf_init(b);
	return p;
}

void
tc_buf_add_utf8(struct tc_buf *out, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		tc_buf_addc(out, (char)cp);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		tc_buf_add(out, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		tc_buf_add(out, b, 3);
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		tc_buf_add(out, b, 4);
	}
}
