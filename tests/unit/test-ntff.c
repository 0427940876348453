/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-ntff.c - the .ntff container: write sections (memory and
 * file, plain and zlib), read them back, then damage copies of the file (cut
 * mid-section, flipped payload byte, flipped header byte, a section left
 * incomplete) and check what the reader and ing_ntff_read() report, with the
 * valid sections still loading into a real trace store.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zlib.h>
#include "tests/tap.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/ntff.h"

static char dir[256];

static char *
path_of(const char *name)
{
	return tc_xasprintf("%s/%s", dir, name);
}

static int
write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(data, 1, len, f) == len ? 0 : -1;

	if (f && fclose(f))
		rc = -1;
	return rc;
}

static void *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct tc_buf b;
	char chunk[4096];
	size_t n;

	tc_buf_init(&b);
	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		tc_buf_add(&b, chunk, n);
	if (f)
		fclose(f);
	*len = b.len;
	return b.data ? tc_buf_steal(&b) : tc_xcalloc(1, 1);
}

static const char manifest[] =
	"{\"format\":\"neuron-explorer-capture\",\"format_version\":1,"
	"\"sections\":[{\"name\":\"framework/trace.json\",\"layer\":\"framework\"},"
	"{\"name\":\"perfetto/small.pftrace\",\"layer\":\"kernel\"}],"
	"\"layers\":{\"framework\":{\"clock_offset_ns\":1000},\"kernel\":{}},"
	"\"clock\":{\"kernel\":{\"offset_ns\":-5000000000}}}";
static const char json_trace[] =
	"{\"traceEvents\":[{\"name\":\"step\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]}";

/* Builds the reference file: json (zlib), perfetto (file, zlib), attachment, manifest. */
static int
build(const char *out, const char *pftrace)
{
	struct ntff_writer *w = NULL;
	struct tc_err err = { 0 };
	int rc;

	rc = ntff_writer_open(&w, out, &err);
	if (rc == 0)
		rc = ntff_writer_add(w, NTFF_SEC_JSON, "framework/trace.json", json_trace,
				     strlen(json_trace), true, &err);
	if (rc == 0)
		rc = ntff_writer_add_file(w, NTFF_SEC_PERFETTO, "perfetto/small.pftrace", pftrace,
					  true, &err);
	if (rc == 0)
		rc = ntff_writer_add(w, NTFF_SEC_ATTACHMENT, "neuron/raw.bin", "\x00\x01\x02", 3,
				     false, &err);
	if (rc == 0)
		rc = ntff_writer_add(w, NTFF_SEC_MANIFEST, "manifest.json", manifest,
				     strlen(manifest), false, &err);
	if (w) {
		int rc2 = ntff_writer_close(w, &err);

		if (!rc)
			rc = rc2;
	}
	if (rc)
		printf("#   %s\n", err.msg);
	return rc;
}

static void
test_roundtrip(const char *file, const char *pftrace)
{
	struct ntff_reader *r = NULL;
	struct tc_err err = { 0 };
	void *data = NULL, *orig;
	size_t len = 0, olen, i;
	int rc;

	rc = ntff_open(&r, file, &err);
	if (!ok(rc == 0, "reference file opens"))
		return;
	is_int(ntff_count(r), 4, "4 sections");
	ok(ntff_damage(r) == NULL, "no damage");
	for (i = 0; i < ntff_count(r); i++) {
		char name[128];

		snprintf(name, sizeof(name), "section %zu (%s) verifies", i,
			 ntff_section(r, i)->name);
		ok(ntff_check(r, i, &err) == 0, "%s", name);
	}
	is_int(ntff_section(r, 0)->kind, NTFF_SEC_JSON, "kind of section 0");
	ok(ntff_section(r, 0)->flags & NTFF_F_ZLIB, "section 0 compressed");
	is_int(ntff_section(r, 0)->raw_len, strlen(json_trace), "raw length recorded");
	rc = ntff_read(r, 0, &data, &len, &err);
	ok(rc == 0 && len == strlen(json_trace) && !memcmp(data, json_trace, len),
	   "json section reads back byte for byte");
	free(data);
	orig = read_file(pftrace, &olen);
	rc = ntff_read(r, (size_t)ntff_find(r, "perfetto/small.pftrace"), &data, &len, &err);
	ok(rc == 0 && len == olen && !memcmp(data, orig, len),
	   "streamed file section reads back byte for byte");
	free(data);
	free(orig);
	rc = ntff_read(r, 2, &data, &len, &err);
	ok(rc == 0 && len == 3 && !memcmp(data, "\x00\x01\x02", 3), "attachment reads back");
	free(data);
	is_int(ntff_find(r, "manifest.json"), 3, "manifest found by name");
	ntff_close(r);
}

/* Ingest @file; returns the stats and the meta value of @key (malloc'd) in @meta. */
static int
ingest(const char *file, struct st_stats *st, char **warnings, struct tc_err *err,
       int64_t want_step, int64_t want_outer)
{
	char *db_path = path_of("t.db");
	struct st_writer *w = NULL;
	sqlite3 *db;
	sqlite3_stmt *s;
	int rc;

	*warnings = NULL;
	memset(st, 0, sizeof(*st));
	rc = st_writer_open(&w, db_path, err);
	if (rc == 0) {
		rc = ing_ntff_read(w, file, NULL, err);
		if (rc < 0)
			st_writer_abort(w);
		else
			rc = st_writer_finish(w, st, err);
	}
	if (rc == 0 && st_trace_open(&db, db_path, NULL) == 0) {
		if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'warnings'", -1, &s,
				       NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				*warnings = tc_xstrdup((const char *)sqlite3_column_text(s, 0));
			sqlite3_finalize(s);
		}
		if (sqlite3_prepare_v2(db, "SELECT min(ts) FROM events e JOIN strings n "
				       "ON n.id = e.name WHERE n.s = 'step'", -1, &s, NULL) ==
		    SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
				/* 1 us + the framework layer's clock_offset_ns when a manifest says so */
				is_int(sqlite3_column_int64(s, 0), want_step,
				       "json section at its layer's clock offset");
			}
			sqlite3_finalize(s);
		}
		if (sqlite3_prepare_v2(db, "SELECT min(ts) FROM events e JOIN strings n "
				       "ON n.id = e.name WHERE n.s = 'outer'", -1, &s, NULL) ==
		    SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
				is_int(sqlite3_column_int64(s, 0), want_outer,
				       "perfetto section at its layer's clock offset");
			sqlite3_finalize(s);
		}
		sqlite3_close(db);
	}
	unlink(db_path);
	free(db_path);
	return rc;
}

static void
test_ingest(const char *file)
{
	struct tc_err err = { 0 };
	struct st_stats st;
	char *warn;
	int rc;

	/* framework: clock_offset_ns 1000; kernel: clock.kernel.offset_ns -5 s */
	rc = ingest(file, &st, &warn, &err, 2000, 10000);
	if (!ok(rc == 0, "complete file ingests"))
		printf("#   %s\n", err.msg);
	is_int(st.slices, 3, "json slice + 2 perfetto slices");
	is_int(st.instants, 2, "perfetto instants");
	is_int(st.edges[ST_EDGE_FLOW], 1, "perfetto flow");
	ok(warn == NULL, "no warnings");
	free(warn);
}

static void
test_damage(const char *file)
{
	struct ntff_reader *r = NULL;
	struct tc_err err = { 0 };
	struct st_stats st;
	size_t len, i;
	unsigned char *orig = read_file(file, &len);
	char *p = path_of("bad.ntff"), *warn;
	uint64_t off1, data1;
	int rc;

	rc = ntff_open(&r, file, &err);
	off1 = ntff_section(r, 1)->offset;
	data1 = ntff_section(r, 1)->data_offset;
	ntff_close(r);
	r = NULL;

	/* 1. cut in the middle of section 1's payload */
	write_file(p, orig, (size_t)data1 + 10);
	rc = ntff_open(&r, p, &err);
	ok(rc == 0, "cut file still opens");
	is_int(ntff_count(r), 2, "cut: both headers seen");
	is_int(ntff_section(r, 1)->status, NTFF_ST_TRUNCATED, "cut: section 1 truncated");
	ok(ntff_damage(r) && strstr(ntff_damage(r), "perfetto/small.pftrace") &&
	   strstr(ntff_damage(r), "is truncated"), "cut: damage names the section");
	ok(ntff_check(r, 0, &err) == 0, "cut: section 0 still verifies");
	ntff_close(r);
	r = NULL;
	rc = ingest(p, &st, &warn, &err, 1000, 0);	/* no manifest: no offsets */
	if (!ok(rc == 0, "cut: the complete section still ingests"))
		printf("#   %s\n", err.msg);
	is_int(st.slices, 1, "cut: json slice loaded");
	ok(warn && strstr(warn, "perfetto/small.pftrace") && strstr(warn, "no manifest"),
	   "cut: warnings name the damaged section and the missing manifest");
	free(warn);

	/* 2. a flipped payload byte in section 1 */
	memcpy(orig + data1 + 5, (unsigned char[]){ orig[data1 + 5] ^ 0x40 }, 1);
	write_file(p, orig, len);
	rc = ntff_open(&r, p, &err);
	ok(rc == 0 && ntff_count(r) == 4 && !ntff_damage(r), "flipped byte: headers intact");
	memset(&err, 0, sizeof(err));
	ok(ntff_check(r, 1, &err) == -EBADMSG, "flipped byte: section 1 fails its check");
	ok(strstr(err.msg, "CRC mismatch") && strstr(err.msg, "perfetto/small.pftrace"),
	   "flipped byte: message says CRC and names the section");
	{
		char want[64];

		snprintf(want, sizeof(want), "at byte %llu", (unsigned long long)off1);
		ok(strstr(err.msg, want) != NULL, "flipped byte: message gives the offset");
	}
	for (i = 0; i < 4; i++)
		if (i != 1)
			ok(ntff_check(r, i, &err) == 0, "flipped byte: other sections verify");
	ntff_close(r);
	r = NULL;
	rc = ingest(p, &st, &warn, &err, 2000, 0);
	ok(rc == 0 && st.slices == 1, "flipped byte: the valid sections still ingest");
	ok(warn && strstr(warn, "CRC mismatch"), "flipped byte: warning recorded in meta");
	free(warn);
	memcpy(orig + data1 + 5, (unsigned char[]){ orig[data1 + 5] ^ 0x40 }, 1);

	/* 3. a flipped byte in section 2's header: the scan stops there */
	{
		size_t h2;

		rc = ntff_open(&r, file, &err);
		h2 = (size_t)ntff_section(r, 2)->offset;
		ntff_close(r);
		r = NULL;
		orig[h2 + 14] ^= 1;
		write_file(p, orig, len);
		orig[h2 + 14] ^= 1;
		rc = ntff_open(&r, p, &err);
		ok(rc == 0 && ntff_count(r) == 2, "bad header: the two sections before it remain");
		ok(ntff_damage(r) && strstr(ntff_damage(r), "header CRC"),
		   "bad header: damage says so");
		ntff_close(r);
		r = NULL;
	}

	/* 4. a section whose writer was killed: lengths still all-ones */
	{
		struct ntff_writer *w = NULL;

		ntff_writer_open(&w, p, &err);
		ntff_writer_add(w, NTFF_SEC_JSON, "a.json", json_trace, strlen(json_trace), false,
				&err);
		ntff_writer_close(w, &err);
		/* append a header the way ntff_writer_add_file() starts one */
		{
			unsigned char *all = read_file(p, &len);
			unsigned char *bad = malloc(len * 2 + 64);
			size_t first = len;

			memcpy(bad, all, len);
			memcpy(bad + len, all + 16, len - 16);	/* copy of section 0 */
			memset(bad + first + 12, 0xff, 16);	/* stored/raw = all-ones */
			/* header CRC must still match for the "incomplete" verdict */
			{
				uLong crc = crc32(0, bad + first, 36);

				crc = crc32(crc, bad + first + 40, 6);
				bad[first + 36] = (unsigned char)crc;
				bad[first + 37] = (unsigned char)(crc >> 8);
				bad[first + 38] = (unsigned char)(crc >> 16);
				bad[first + 39] = (unsigned char)(crc >> 24);
			}
			write_file(p, bad, len + len - 16);
			free(all);
			free(bad);
		}
		rc = ntff_open(&r, p, &err);
		ok(rc == 0 && ntff_count(r) == 2, "incomplete: both headers seen");
		is_int(ntff_section(r, 1)->status, NTFF_ST_INCOMPLETE, "incomplete: status");
		ok(ntff_damage(r) && strstr(ntff_damage(r), "never completed"),
		   "incomplete: damage says the writer stopped");
		ntff_close(r);
		r = NULL;
	}

	/* 5. not an ntff, and a newer major version */
	write_file(p, "hello", 5);
	memset(&err, 0, sizeof(err));
	ok(ntff_open(&r, p, &err) == -EINVAL && strstr(err.msg, "not an .ntff file"),
	   "not an ntff: clear error");
	orig[8] = 2;
	write_file(p, orig, len);
	memset(&err, 0, sizeof(err));
	ok(ntff_open(&r, p, &err) == -ENOTSUP && strstr(err.msg, "version 2.0"),
	   "newer major version refused with its number");
	free(orig);
	free(p);
}

int
main(void)
{
	char *file, *pf, *src;
	size_t len;
	void *data;

	snprintf(dir, sizeof(dir), "%s/test-ntff.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		tap_skip_all("cannot make a temp dir");
	src = tc_xasprintf("%s/tests/data/perfetto/small.pftrace",
			   getenv("NX_SRCDIR") ? getenv("NX_SRCDIR") : ".");
	data = read_file(src, &len);
	if (!len)
		tap_skip_all("tests/data/perfetto/small.pftrace not found (set NX_SRCDIR)");
	pf = path_of("small.pftrace");
	write_file(pf, data, len);
	free(data);
	file = path_of("ref.ntff");
	ok(build(file, pf) == 0, "writer builds the reference file");
	test_roundtrip(file, pf);
	test_ingest(file);
	test_damage(file);
	free(file);
	free(pf);
	free(src);
	{
		char *cmd = tc_xasprintf("rm -rf '%s'", dir);

		if (system(cmd))
			tap_diag("could not remove the temp dir");
		free(cmd);
	}
	return tap_done();
}
