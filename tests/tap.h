/* SPDX-License-Identifier: MIT */
/*
 * tests/tap.h - minimal TAP producer for the C unit tests.  Each check prints
 * both operands on failure.  Exit 0 when all passed, 1 otherwise; call
 * tap_skip_all() (exit 77) when a prerequisite is missing.
 */
#ifndef TESTS_TAP_H
#define TESTS_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

static int tap_n, tap_failed;

static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, name) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, "%s", name)) printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)
/* is_int() with the name given as a printf format and its arguments */
#define is_intf(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, __VA_ARGS__)) printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)
#define is_str(got, want, name) do { \
	const char *g_ = (got), *w_ = (want); \
	int c_ = (g_ && w_) ? !strcmp(g_, w_) : g_ == w_; \
	if (!ok(c_, "%s", name)) printf("#   got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

static inline void tap_diag(const char *s) { printf("# %s\n", s); }
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

#endif /* TESTS_TAP_H */
