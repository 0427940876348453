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

/* xorshift64*: a seeded draw */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * tc_real_text() against json_dumps() on seeded draws of each kind of real
 * it takes a path for: any bits in its fixed-notation range and around it,
 * decimal fractions (k / 10^j, what traces hold), exact ties at the 17th
 * digit (j / 2^(k+1) with the 18th digit a 5: glibc rounds them to even),
 * whole numbers, and the edges of the range.  Counts per kind; the first
 * difference is shown.
 */
static void
reals_drawn(void)
{
	static const char *const kinds[] = { "bits from 1e-6 to 1e17", "decimal fractions",
					     "ties at the 17th digit", "whole numbers",
					     "range edges" };
	static const double edges[] = { 1e-4, 1e15, 1e14, 1e-3, 0.1, 1.0, 10.0 };
	uint64_t seed = 0x243f6a8885a308d3ULL;
	char got[TC_REAL_TEXT_MAX];

	for (int kind = 0; kind < 5; kind++) {
		int n = kind == 4 ? (int)(sizeof(edges) / sizeof(edges[0])) * 64 : 40000, bad = 0;
		char first[160] = "";

		for (int i = 0; i < n; i++) {
			uint64_t r = rnd(&seed), bits;
			double v;
			json_t *j;
			char *want;

			switch (kind) {
			case 0:	/* exponents for 2^-20 .. 2^57 */
				bits = ((uint64_t)(1003 + r % 78) << 52) | (rnd(&seed) >> 12);
				memcpy(&v, &bits, sizeof(v));
				break;
			case 1:
				v = (double)(r % 100000000000ULL) / pow(10, (double)(rnd(&seed) % 12));
				break;
			case 2: {
				int k = 2 + (int)(r % 5);	/* v = j / 2^(k+1), j odd */
				double lo = 1e16 / pow(5, k) * 2;
				uint64_t odd = ((uint64_t)lo + rnd(&seed) % (uint64_t)(lo * 4)) | 1;

				if (odd >= (1ULL << 53))
					odd = ((uint64_t)lo) | 1;
				v = ldexp((double)odd, -(k + 1));
				break;
			}
			case 3:
				v = (double)(int64_t)(r % 2000000000000000ULL) - 1e15;
				break;
			default: {
				double e = edges[i / 64];
				int step = i % 64 - 32;

				v = e;
				for (int t = 0; t < (step < 0 ? -step : step); t++)
					v = nextafter(v, step < 0 ? 0 : INFINITY);
				break;
			}
			}
			if (r & (1ULL << 63))
				v = -v;
			j = json_real(v);
			want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
			json_decref(j);
			tc_real_text(got, v);
			if (!want || strcmp(got, want)) {
				if (!bad++)
					snprintf(first, sizeof(first), "%a: got %s, want %s", v, got,
						 want ? want : "(null)");
			}
			free(want);
		}
		if (!ok(bad == 0, "reals, %s: %d drawn, as Jansson writes them", kinds[kind], n))
			printf("#   %d differ, first %s\n", bad, first);
	}
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
	reals_drawn();
	{
		static const uint64_t us[] = { 0, 7, 10, 512, 785920, UINT64_C(9223372036854775808),
					       UINT64_MAX };
		char buf[24], want[24];
		int bad = 0;

		for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
			int n = tc_u64_text(buf, us[i]);

			snprintf(want, sizeof(want), "%llu", (unsigned long long)us[i]);
			bad += strcmp(buf, want) != 0 || n != (int)strlen(want);
		}
		ok(bad == 0, "tc_u64_text: as printf's %%llu, to UINT64_MAX, with its length");
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

	/* laid out as json_dumps(JSON_INDENT(n)) lays out the same value */
	{
		static const char *docs[] = {
			"{}", "[]", "0", "\"a\"", "null",
			"{\"a\":[],\"b\":{},\"c\":[{}],\"d\":[[],[1,-2.5e-07,true,false,null]]}",
			"[\"{[,:]}\",\"q\\\"{\\\\\",\"\\u00e9\\n\",{\"k:,\":\"v]\"}]",
			"{\"hops\":[{\"id\":1,\"name\":\"x\",\"kind\":null}],\"units\":[],"
			"\"kinds\":{\"flow\":{\"hops\":2}},\"total_ns\":-9223372036854775808}",
		};

		for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
			for (int n = 1; n <= 3; n += 2) {
				size_t flags = JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII | JSON_ENCODE_ANY;
				json_t *v = json_loads(docs[i], JSON_DECODE_ANY, NULL);
				/* the compact text as this writer (or Jansson) spells it */
				char *in = v ? json_dumps(v, flags | JSON_COMPACT) : NULL;
				char *want = v ? json_dumps(v, flags | JSON_INDENT(n)) : NULL;

				w.len = 0;
				if (in)
					tc_jw_indent(&w, in, strlen(in), n);
				ok(want && w.p && !strcmp(w.p, want),
				   "tc_jw_indent %d of %s as Jansson lays it out", n, docs[i]);
				if (want && w.p && strcmp(w.p, want))
					printf("# got\n%s\n# want\n%s\n", w.p, want);
				free(in);
				free(want);
				json_decref(v);
			}
		}
	}

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
