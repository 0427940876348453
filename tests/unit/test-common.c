/* SPDX-License-Identifier: MIT */
/* tests/unit/test-common.c - common/: buffers, arenas, gzip input, parsing, copies. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "common/tc.h"
#include "common/tc-rank.h"
#include "common/tc-varint.h"
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

/* A file of @n pseudo-random bytes at @path; its bytes in *@out (malloc'd). */
static int
write_file(const char *path, size_t n, unsigned char **out)
{
	unsigned char *b = tc_xmalloc(n ? n : 1);
	uint64_t r = n + 1;
	FILE *f = fopen(path, "wb");
	size_t i;

	for (i = 0; i < n; i++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		b[i] = (unsigned char)(r >> 56);
	}
	if (!f || fwrite(b, 1, n, f) != n || fclose(f)) {
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

/* Whether @path holds exactly @n bytes equal to @want. */
static bool
file_is(const char *path, const unsigned char *want, size_t n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = tc_xmalloc(n + 1);
	size_t got = f ? fread(b, 1, n + 1, f) : 0;
	bool same = f && got == n && !memcmp(b, want, n);

	if (f)
		fclose(f);
	free(b);
	return same;
}

/*
 * tc_copy_file(): sizes around its 4 MiB buffer and the 4 KiB blocks it
 * writes with O_DIRECT (an unaligned tail goes through the page cache), the
 * digest against tc_sha256_file(), and the errors.
 */
static void
test_copy(void)
{
	static const size_t sizes[] = { 0, 1, 4096, 4097, (size_t)4 << 20,
					((size_t)8 << 20) + 12345 };
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *dir = tc_xasprintf("%s/nx-copy-XXXXXX", tmp), *src, *dst, want[65], hex[65];
	struct tc_err err = { 0 };

	if (!mkdtemp(dir)) {
		ok(0, "temporary directory: %s", strerror(errno));
		free(dir);
		return;
	}
	src = tc_xasprintf("%s/src", dir);
	dst = tc_xasprintf("%s/dst", dir);
	for (size_t i = 0; i < TC_ARRAY_SIZE(sizes); i++) {
		unsigned char *b = NULL;

		if (write_file(src, sizes[i], &b) < 0) {
			ok(0, "write %zu bytes", sizes[i]);
			continue;
		}
		hex[0] = 0;
		ok(tc_copy_file(src, dst, hex, &err) == 0, "copy of %zu bytes: %s", sizes[i],
		   err.msg);
		ok(file_is(dst, b, sizes[i]), "the copy of %zu bytes has the same bytes", sizes[i]);
		ok(tc_sha256_file(src, want, &err) == 0 && !strcmp(hex, want),
		   "its digest is the source's (%zu bytes)", sizes[i]);
		ok(tc_copy_file(src, dst, NULL, &err) == 0 && file_is(dst, b, sizes[i]),
		   "a copy without digest over the previous one (%zu bytes)", sizes[i]);
		free(b);
	}
	unlink(src);
	unlink(dst);
	tc_err_clear(&err);
	ok(tc_copy_file(src, dst, hex, &err) == -ENOENT && strstr(err.msg, "/src: "),
	   "a missing source is an error naming it: %s", err.msg);
	ok(access(dst, F_OK) != 0, "and leaves no copy");
	free(dst);
	dst = tc_xasprintf("%s/no/such/dir", dir);
	{
		unsigned char *b = NULL;

		if (write_file(src, 10, &b) == 0)
			free(b);
	}
	tc_err_clear(&err);
	ok(tc_copy_file(src, dst, hex, &err) == -ENOENT && strstr(err.msg, "/no/such/dir: "),
	   "an impossible destination is an error naming it: %s", err.msg);
	unlink(src);
	rmdir(dir);
	free(src);
	free(dst);
	free(dir);
}

/* Write @text to @root/@rel, creating the directories. */
static void
put_file(const char *root, const char *rel, const char *text)
{
	char *path = tc_xasprintf("%s/%s", root, rel), *dir = tc_xstrdup(path);
	FILE *f;

	*strrchr(dir, '/') = 0;
	tc_mkdir_p(dir, 0755);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(dir);
	free(path);
}

/* The plain byte loop: what the decoders must agree with. */
static int
ref_uvarint(const uint8_t *p, const uint8_t *end, uint64_t *v, size_t *len)
{
	uint64_t r = 0;

	for (size_t i = 0; i < TC_VARINT_MAX && p + i < end; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			*v = r;
			*len = i + 1;
			return 0;
		}
	}
	return -1;
}

/*
 * Every length of varint, canonical or padded with 0x80 groups (protobuf
 * takes those), followed by random bytes and read with the end right after
 * it or further: tc_uvarint_get() and tc_uvarint_get_room() (with their
 * one- and two-byte shortcuts) give what the plain byte loop gives.
 */
static void
test_varint_lengths(void)
{
	uint8_t buf[2 * TC_VARINT_MAX];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int bad = 0, tried = 0;

	for (int i = 0; i < 50000; i++) {
		uint64_t v, want, a = 1, b = 2;
		const uint8_t *p = buf, *q = buf;
		size_t n, len;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (x % 64);
		n = tc_uvarint_put(buf, v);
		if (i % 3 == 0 && n < TC_VARINT_MAX) {	/* one more group, of zero */
			buf[n - 1] |= 0x80;
			buf[n++] = 0;
		}
		for (size_t k = n; k < sizeof(buf); k++)
			buf[k] = (uint8_t)(x >> (8 * (k % 8)));
		if (ref_uvarint(buf, buf + n, &want, &len) || want != v || len != n) {
			bad++;
			continue;
		}
		tried++;
		bad += tc_uvarint_get(&p, buf + (i % 2 ? n : sizeof(buf)), &a) != 0 ||
		       tc_uvarint_get_room(&q, &b) != 0 || a != v || b != v || p != buf + n ||
		       q != buf + n;
	}
	ok(bad == 0 && tried == 50000, "varints of 1 to 10 bytes read as the byte loop reads them (%d, %d wrong)",
	   tried, bad);
}

/*
 * tc_uvarint_get_room() against tc_uvarint_get(): the same values and
 * lengths for every length of varint, and both refuse one longer than
 * TC_VARINT_MAX bytes.
 */
static void
test_varint_room(void)
{
	uint8_t buf[2 * TC_VARINT_MAX];
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		uint64_t v, a = 1, b = 2;
		const uint8_t *p = buf, *q = buf;
		size_t n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (x % 64);	/* every length from 1 to 10 bytes */
		n = tc_uvarint_put(buf, v);
		memset(buf + n, 0xff, sizeof(buf) - n);
		bad += tc_uvarint_get(&p, buf + n, &a) != 0 || tc_uvarint_get_room(&q, &b) != 0 ||
		       a != v || b != v || p != buf + n || q != buf + n;
	}
	is_int(bad, 0, "tc_uvarint_get_room reads what tc_uvarint_get reads");
	{
		const uint8_t *p = buf;
		uint64_t v;

		memset(buf, 0x80, TC_VARINT_MAX);
		buf[TC_VARINT_MAX] = 1;
		ok(tc_uvarint_get_room(&p, &v) == -1 && p == buf,
		   "tc_uvarint_get_room refuses 11 bytes and leaves the pointer");
	}
}

/* tc_mem_total_at() and tc_ncpus_at() over fake /proc and /sys trees. */
static void
test_mem_total(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t phys = (uint64_t)pages * (uint64_t)psz;
	char tmpl[] = "/tmp/nx-memtest.XXXXXX", *root = mkdtemp(tmpl), *r;

	ok(root != NULL, "temp dir for fake cgroup trees");
	if (!root)
		return;
	is_int((long long)tc_mem_total_at(root), (long long)phys, "no cgroup files: physical memory");
	is_int((long long)tc_mem_share(16, 1, UINT64_MAX), (long long)(tc_mem_total() / 16),
	       "tc_mem_share: a sixteenth of this process's memory");
	is_int((long long)tc_mem_share(16, UINT64_MAX / 2, UINT64_MAX), (long long)(UINT64_MAX / 2),
	       "tc_mem_share: at least the least");
	is_int((long long)tc_mem_share(16, 1, 4096), 4096, "tc_mem_share: at most the most");

	r = tc_xasprintf("%s/v2", root);
	put_file(r, "proc/self/cgroup", "0::/system.slice/nx.service\n");
	put_file(r, "sys/fs/cgroup/memory.max", "max\n");
	put_file(r, "sys/fs/cgroup/system.slice/memory.max", "1073741824\n");
	put_file(r, "sys/fs/cgroup/system.slice/nx.service/memory.max", "max\n");
	is_int((long long)tc_mem_total_at(r), (long long)TC_MIN(phys, 1073741824ULL),
	       "cgroup v2: a limit on a parent cgroup counts");
	put_file(r, "sys/fs/cgroup/system.slice/nx.service/memory.max", "536870912\n");
	is_int((long long)tc_mem_total_at(r), (long long)TC_MIN(phys, 536870912ULL), "cgroup v2: the least limit up the path");
	free(r);

	r = tc_xasprintf("%s/v1", root);
	put_file(r, "proc/self/cgroup", "5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n");
	put_file(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "805306368\n");
	is_int((long long)tc_mem_total_at(r), (long long)TC_MIN(phys, 805306368ULL),
	       "cgroup v1: the container's own mount when its path is not visible");
	put_file(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	is_int((long long)tc_mem_total_at(r), (long long)phys,
	       "cgroup v1: no limit (the largest value) leaves physical memory");
	put_file(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "12abc\n");
	is_int((long long)tc_mem_total_at(r), (long long)phys, "a malformed limit is ignored");
	free(r);

	ok(tc_mem_total() > 0 && tc_mem_total() <= phys, "this process: at most physical memory");

	{
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		int base = tc_ncpus_at(root);	/* no cgroup files: the affinity mask */

		ok(base >= 1 && base <= online, "CPUs without cgroup files: 1 to the online ones (%d)",
		   base);
		r = tc_xasprintf("%s/c2", root);
		put_file(r, "proc/self/cgroup", "0::/user.slice/job\n");
		put_file(r, "sys/fs/cgroup/user.slice/job/cpu.max", "max 100000\n");
		is_int(tc_ncpus_at(r), base, "cgroup v2: cpu.max of max is no quota");
		put_file(r, "sys/fs/cgroup/user.slice/cpu.max", "150000 100000\n");
		is_int(tc_ncpus_at(r), TC_MIN(base, 2), "cgroup v2: 1.5 CPUs of a parent round up to 2");
		free(r);
		r = tc_xasprintf("%s/c1", root);
		put_file(r, "proc/self/cgroup", "2:cpuacct:/\n1:cpu:/docker/x\n");
		put_file(r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
		put_file(r, "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
		is_int(tc_ncpus_at(r), base, "cgroup v1: a quota of -1 is none");
		put_file(r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "100000\n");
		is_int(tc_ncpus_at(r), 1, "cgroup v1: one CPU's quota");
		free(r);
		r = tc_xasprintf("%s/c1b", root);
		put_file(r, "proc/self/cgroup", "3:cpu,cpuacct:/k\n");
		put_file(r, "sys/fs/cgroup/cpu,cpuacct/k/cpu.cfs_quota_us", "50000\n");
		put_file(r, "sys/fs/cgroup/cpu,cpuacct/k/cpu.cfs_period_us", "100000\n");
		is_int(tc_ncpus_at(r), 1, "cgroup v1: controllers mounted together, half a CPU is 1");
		free(r);
		ok(tc_ncpus() >= 1 && tc_ncpus() <= online, "this process: 1 to the online CPUs");
	}
	{
		char *cmd = tc_xasprintf("rm -rf '%s'", root);

		ok(system(cmd) == 0, "fake trees removed");
		free(cmd);
	}
}

/* tc_rank: membership and ranks against a plain count, at several densities and sizes. */
static void
test_rank(void)
{
	static const uint64_t sizes[] = { 1, 63, 64, 65, 1000, 100003 };
	static const unsigned every[] = { 1, 2, 7, 100, 5000 };
	uint64_t seed = 12345;
	int bad = 0, sets = 0;

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (size_t ei = 0; ei < sizeof(every) / sizeof(every[0]); ei++) {
			uint64_t n = sizes[si], members = 0;
			unsigned char *in = tc_xcalloc(n, 1);
			struct tc_rank r;

			tc_rank_init(&r, n);
			for (uint64_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				if ((seed >> 33) % every[ei] == 0 || i == n - 1) {
					in[i] = 1;
					tc_rank_set(&r, i);
				}
			}
			bad += tc_rank_index(&r) != 0;
			for (uint64_t i = 0; i < n; i++) {
				bad += tc_rank_has(&r, i) != (in[i] != 0);
				bad += tc_rank_of(&r, i) != members;
				members += in[i];
			}
			bad += r.count != members;
			/* tc_rank_next visits the members, in order, and nothing else */
			{
				uint64_t i, seen = 0, last = 0;

				for (i = 0; tc_rank_next(&r, &i); i++) {
					bad += !in[i] || (seen && i <= last);
					last = i;
					seen++;
				}
				bad += seen != members;
			}
			tc_rank_free(&r);
			tc_rank_free(&r);	/* twice is allowed */
			free(in);
			sets++;
		}
	}
	ok(bad == 0 && sets == 30, "tc_rank: membership, ranks, counts and the members in order of %d sets as a plain count gives", sets);
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

	test_rank();
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
	test_copy();
	test_mem_total();
	test_varint_room();
	test_varint_lengths();
	unsetenv("NX_TEST_NUM");
	is_int(tc_env_num("NX_TEST_NUM", 1, 8, 3), 3, "env number: unset gives the default");
	setenv("NX_TEST_NUM", "5", 1);
	is_int(tc_env_num("NX_TEST_NUM", 1, 8, 3), 5, "env number: a number in range");
	setenv("NX_TEST_NUM", "9", 1);
	is_int(tc_env_num("NX_TEST_NUM", 1, 8, 3), 3, "env number: out of range gives the default");
	setenv("NX_TEST_NUM", "5x", 1);
	is_int(tc_env_num("NX_TEST_NUM", 1, 8, 3), 3, "env number: trailing junk gives the default");
	setenv("NX_TEST_NUM", "", 1);
	is_int(tc_env_num("NX_TEST_NUM", 1, 8, 3), 3, "env number: empty gives the default");
	setenv("NX_TEST_NUM", "99999999999999999999", 1);
	is_int(tc_env_num("NX_TEST_NUM", 1, LONG_MAX, 3), 3, "env number: overflow gives the default");
	unsetenv("NX_TEST_NUM");
	return tap_done();
}
