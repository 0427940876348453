/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-tc-jw.c - the server's JSON text writer (common/tc-jw.c)
 * prints exactly what Jansson's json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII)
 * prints for the same integers, reals and strings, and turns invalid UTF-8
 * into U+FFFD per bad byte.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/tc-jw.h"
#include "tests/tap.h"

static char *
jansson(json_t *v)
{
	json_t *a = json_pack("[o]", v);
	char *s = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);

	json_decref(a);
	return s;
}

static void
ours_begin(struct tc_jw *w)
{
	w->len = 0;
	tc_jw_lit(w, "[");
}

static void
check(struct tc_jw *w, json_t *v, const char *name)
{
	char *want = jansson(v);

	tc_jw_lit(w, "]");
	is_str(w->p, want, name);
	free(want);
}

int
main(void)
{
	static const int64_t ints[] = { 0, 1, -1, 9, 10, 123456789, -987654321, INT64_MAX,
					INT64_MIN, INT64_MIN + 1, 1000000000000 };
	static const double reals[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1.5, 92084.0, 1e15, 1e16,
					1e17, 1e20, 1e-5, 1.25e-300, 123456.789, -2.5e22,
					9007199254740992.0, 9007199254740993.0, DBL_MAX, DBL_MIN,
					DBL_TRUE_MIN, 3.141592653589793, 1.0 / 3 };
	static const char *strs[] = { "", "matmul", "a\"b\\c", "tab\there\nnl\r\b\f",
				      "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
				      "<script>alert(1)</script>", "/path/with/slashes",
				      "\xe4\xb8\xad\xe6\x96\x87" };
	struct tc_jw w = { 0 };
	char name[64];

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		ours_begin(&w);
		tc_jw_i64(&w, ints[i]);
		snprintf(name, sizeof(name), "integer %lld", (long long)ints[i]);
		check(&w, json_integer(ints[i]), name);
	}
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		ours_begin(&w);
		tc_jw_real(&w, reals[i]);
		snprintf(name, sizeof(name), "real %.17g", reals[i]);
		check(&w, json_real(reals[i]), name);
	}
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		ours_begin(&w);
		tc_jw_str(&w, strs[i]);
		snprintf(name, sizeof(name), "string %zu", i);
		check(&w, json_string(strs[i]), name);
	}
	ours_begin(&w);
	tc_jw_str(&w, NULL);
	check(&w, json_null(), "NULL string is null");

	/* what Jansson refuses: non-finite reals, invalid UTF-8 */
	w.len = 0;
	tc_jw_real(&w, INFINITY);
	tc_jw_real(&w, NAN);
	is_str(w.p, "nullnull", "non-finite reals are null");
	w.len = 0;
	tc_jw_str(&w, "a\xff" "b\xc3(\xe0\x80\x80\xed\xa0\x80\xf4\x90\x80\x80z\xe2\x82");
	is_str(w.p, "\"a\\uFFFDb\\uFFFD(\\uFFFD\\uFFFD\\uFFFD\\uFFFD\\uFFFD\\uFFFD"
	       "\\uFFFD\\uFFFD\\uFFFD\\uFFFDz\\uFFFD\\uFFFD\"",
	       "invalid UTF-8: U+FFFD per bad byte (overlong, surrogate, > U+10FFFF, cut)");
	w.len = 0;
	tc_jw_strn(&w, "a\0b", 3);
	is_str(w.p, "\"a\\u0000b\"", "an embedded NUL is escaped");

	/* growth across many appends keeps the text whole */
	w.len = 0;
	for (int i = 0; i < 100000; i++)
		tc_jw_i64(&w, i % 10);
	ok(w.len == 100000 && w.p[99999] == '9' && w.p[100000] == 0, "100000 appends");
	tc_jw_free(&w);
	tc_jw_free(&w);
	ok(w.p == NULL, "tc_jw_free twice is harmless");
	return tap_done();
}
