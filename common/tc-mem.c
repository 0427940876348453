/* SPDX-License-Identifier: MIT */
/* common/tc-mem.c - checked allocation: out of memory is fatal. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc.h"

static void __attribute__((noreturn))
tc_oom(size_t n)
{
	fprintf(stderr, "neuron-explorer: out of memory (%zu bytes)\n", n);
	abort();
}

void *
tc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		tc_oom(n);
	return p;
}

void *
tc_xaligned(size_t align, size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, align, n ? n : 1))
		tc_oom(n);
	return p;
}

void *
tc_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (!p)
		tc_oom(n * m);
	return p;
}

void *
tc_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		tc_oom(n);
	return q;
}

char *
tc_xstrdup(const char *s)
{
	return tc_xstrndup(s, strlen(s));
}

char *
tc_xmemdup(const void *s, size_t n)
{
	char *p = tc_xmalloc(n + 1);

	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
tc_xstrndup(const char *s, size_t n)
{
	char *p;

	n = strnlen(s, n);	/* like strndup(3): stop at a NUL */
	p = tc_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
tc_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		tc_oom(strlen(fmt));
	va_end(ap);
	return p;
}
