/* SPDX-License-Identifier: MIT */
/*
 * fuzz/fuzz-json.c - libFuzzer target for the Chrome/Kineto JSON reader: the
 * input bytes go through tc_input_open_mem() and ing_json_read() into a real
 * trace store on a temporary file, finished when the read succeeds.  The
 * streaming scanner is also checked differentially: fed whole and fed in
 * small chunks (1..61 bytes, picked from the input), it must hand out the same
 * events and metadata and fail with the same message; and so is the reader,
 * whose trace (its counts) or error must not change with small reads done on
 * the read-ahead thread, where events cross read chunks and take the
 * scanner's copy instead of being parsed in place.  Built
 * with -DFUZZ_REPLAY_MAIN it is instead a TAP program that feeds every file
 * of fuzz/corpus/json to the same entry point (run by make check).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/json-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db_path[256];

/* What a scan handed out, joined, for the differential check. */
static int
diff_event(void *ctx, const char *p, size_t n, uint64_t index, uint64_t off)
{
	tc_buf_printf(ctx, "E%llu@%llu:", (unsigned long long)index, (unsigned long long)off);
	tc_buf_add(ctx, p, n);
	return 0;
}

static int
diff_meta(void *ctx, const char *key, size_t keylen, const char *val, size_t vallen,
	  uint64_t off)
{
	tc_buf_printf(ctx, "M@%llu:", (unsigned long long)off);
	tc_buf_add(ctx, key, keylen);
	tc_buf_addc(ctx, '=');
	if (val)
		tc_buf_add(ctx, val, vallen);
	return 0;
}

static const struct ij_scan_ops diff_ops = { .event = diff_event, .meta = diff_meta };

static void
scan_in_chunks(const uint8_t *data, size_t size, size_t chunk, struct tc_buf *out)
{
	struct tc_err err = { 0 };
	struct ij_scan s;
	size_t i;
	int ret = 0;

	ij_scan_init(&s, &diff_ops, out, "fuzz.json");
	for (i = 0; i < size && !ret; i += chunk)
		ret = ij_scan_feed(&s, (const char *)data + i, TC_MIN(chunk, size - i), &err);
	if (!ret)
		ret = ij_scan_end(&s, &err);
	tc_buf_printf(out, "|ret %d %s", ret, err.msg);
	ij_scan_free(&s);
}

static void
scan_differential(const uint8_t *data, size_t size)
{
	struct tc_buf whole, pieces;

	tc_buf_init(&whole);
	tc_buf_init(&pieces);
	scan_in_chunks(data, size, size ? size : 1, &whole);
	scan_in_chunks(data, size, 1 + (size ? data[size / 2] % 61 : 0), &pieces);
	if (whole.len != pieces.len || memcmp(whole.data, pieces.data, whole.len)) {
		fprintf(stderr, "scanner differs by chunk size:\nwhole:  %s\npieces: %s\n",
			whole.data, pieces.data);
		abort();
	}
	tc_buf_free(&whole);
	tc_buf_free(&pieces);
}

/*
 * Read @data into a real store with @chunk-byte reads (0: the reader's
 * default), on a thread of their own when @thread is 1, and finish it; what
 * came out (the stats, or the error) as text in @out.
 */
static void
read_into_store(const uint8_t *data, size_t size, size_t chunk, int thread, struct tc_buf *out)
{
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	struct tc_err err = { 0 };
	struct st_stats st;
	char *text;
	int ret;

	if (st_writer_open(&w, db_path, &err))
		abort();	/* the harness, not the input */
	if (tc_input_open_mem(&in, data, size, "fuzz.json", &err)) {
		tc_buf_printf(out, "open: %s", err.msg);
		st_writer_abort(w);
		return;
	}
	tc_err_clear(&err);
	ret = ing_json_read_chunks(w, in, NULL, chunk, thread, &err);
	if (ret == 0) {
		ret = st_writer_finish(w, &st, &err);
		if (ret == 0) {
			text = st_stats_to_json_text(&st);
			tc_buf_adds(out, text);
			free(text);
			unlink(db_path);
		} else {
			tc_buf_printf(out, "finish %d: %s", ret, err.msg);
		}
	} else {
		if (!err.msg[0])
			abort();	/* every failure must say why */
		tc_buf_printf(out, "read %d: %s", ret, err.msg);
		st_writer_abort(w);
	}
	tc_input_close(in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_buf whole, pieces;
	size_t chunk = 1 + (size ? data[size / 2] % 61 : 0);

	scan_differential(data, size);
	if (!db_path[0])
		snprintf(db_path, sizeof(db_path), "%s/fuzz-json-%d.db",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	/* Whole, events parse in place; in small reads (on the read-ahead
	 * thread), most go through the scanner's copy: the same trace and the
	 * same messages either way. */
	tc_buf_init(&whole);
	tc_buf_init(&pieces);
	read_into_store(data, size, 0, 0, &whole);
	read_into_store(data, size, chunk, 1, &pieces);
	if (whole.len != pieces.len || memcmp(whole.data, pieces.data, whole.len)) {
		fprintf(stderr, "reader differs with %zu-byte reads:\nwhole:  %s\npieces: %s\n",
			chunk, whole.data, pieces.data);
		abort();
	}
	tc_buf_free(&whole);
	tc_buf_free(&pieces);
	return 0;
}

#ifdef FUZZ_REPLAY_MAIN
#include "fuzz/fuzz-replay.h"
FUZZ_REPLAY("json")
#endif
