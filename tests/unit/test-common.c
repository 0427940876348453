/* SPDX-License-Identifier: MIT */
/* tests/unit/test-common.c - common/: buffers, arenas, gzip input, parsing. */
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include "common/tc.h"
#include "tests/tap.h"

static size_t
gz(const char *src, size_t n, unsigned char *out, size_t cap)
{
	z_stream z = { 0 };

	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)src;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	deflateEnd(&z);
	return cap - z.avail_out;
}

static long
read_all(struct tc_input *in, char *buf, size_t cap, struct tc_err *err)
{
	size_t got = 0;
	long n;

	while ((n = tc_input_read(in, buf + got, TC_MIN((size_t)7, cap - got), err)) > 0)
		got += (size_t)n;
	return n < 0 ? n : (long)got;
}

int
main(void)
{
	struct tc_err err = { 0 };
	struct tc_buf b;
	struct tc_arena a;
	struct tc_input *in;
	char text[4000], out[8000];
	unsigned char z[8000], two[16000];
	size_t zn, i;
	int64_t v;
	uint64_t u;
	char hex[17];
	long n;

	tc_buf_init(&b);
	tc_buf_adds(&b, "abc");
	tc_buf_printf(&b, "-%d-", 42);
	is_str(b.data, "abc-42-", "buf printf appends");
	{
		char *room = tc_buf_room(&b, 4096);

		memcpy(room, "xyz", 3);
		tc_buf_commit(&b, 3);
		is_str(b.data, "abc-42-xyz", "bytes written in place are committed");
		ok(b.cap >= b.len + 1 && b.data[b.len] == '\0', "still NUL-terminated");
	}
	tc_buf_reset(&b);
	tc_buf_add_utf8(&b, 0x41);
	tc_buf_add_utf8(&b, 0xe9);
	tc_buf_add_utf8(&b, 0x20ac);
	tc_buf_add_utf8(&b, 0x1f600);
	is_str(b.data, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "code points as 1-4 UTF-8 bytes");
	tc_buf_free(&b);

	tc_arena_init(&a, 64);
	{
		char *p = tc_arena_strndup(&a, "hello world", 5);
		void *big = tc_arena_alloc(&a, 1000);

		is_str(p, "hello", "arena strndup");
		ok(big != NULL, "arena serves allocations larger than a chunk");
	}
	tc_arena_free(&a);

	for (i = 0; i < sizeof(text) - 1; i++)
		text[i] = (char)('a' + i % 26);
	text[sizeof(text) - 1] = 0;
	zn = gz(text, strlen(text), z, sizeof(z));

	ok(tc_input_open_mem(&in, text, strlen(text), "plain", &err) == 0, "open plain");
	ok(!tc_input_is_gzip(in), "plain is not gzip");
	n = read_all(in, out, sizeof(out), &err);
	is_int(n, strlen(text), "plain read length");
	tc_input_close(in);

	ok(tc_input_open_mem(&in, z, zn, "z", &err) == 0, "open gzip");
	ok(tc_input_is_gzip(in), "gzip detected by magic");
	n = read_all(in, out, sizeof(out), &err);
	is_int(n, strlen(text), "gzip inflates to the original length");
	ok(n > 0 && !memcmp(out, text, (size_t)n), "gzip content matches");
	tc_input_close(in);

	memcpy(two, z, zn);
	memcpy(two + zn, z, zn);
	ok(tc_input_open_mem(&in, two, 2 * zn, "zz", &err) == 0, "open two gzip members");
	n = read_all(in, out, sizeof(out), &err);
	is_int(n, 2 * strlen(text), "concatenated members are both read");
	tc_input_close(in);

	tc_err_clear(&err);
	ok(tc_input_open_mem(&in, z, zn / 2, "half.gz", &err) == 0, "open truncated gzip");
	n = read_all(in, out, sizeof(out), &err);
	ok(n < 0, "truncated gzip is an error");
	ok(strstr(err.msg, "half.gz: truncated gzip stream at byte") != NULL,
	   "message names the file and the offset");
	tc_input_close(in);

	ok(tc_parse_i64("-12", &v) == 0 && v == -12, "parse i64");
	ok(tc_parse_i64("12x", &v) == -EINVAL, "parse i64 rejects junk");
	ok(tc_parse_u64("-1", &u) == -EINVAL, "parse u64 rejects negatives");
	ok(tc_random_hex(hex, 8) == 0 && strlen(hex) == 16, "random hex id");

	tc_err_clear(&err);
	tc_err_set(&err, -EINVAL, "first %d", 1);
	tc_err_set(&err, -EIO, "second");
	is_str(err.msg, "first 1", "first error wins");
	is_int(err.code, -EINVAL, "first code wins");
	return tap_done();
}
