/* SPDX-License-Identifier: MIT */
/*
 * fuzz/fuzz-store.c - libFuzzer target for the read side of a trace store
 * whose bytes went bad (a disk error, a truncated copy, a hand edit): the
 * packed event chunks (`events`), the packed edges (`edges`) and the
 * dependency queries over them must answer or fail, never crash or read out
 * of bounds.  A small store is built once from an embedded trace (nested
 * slices on threads and in-order streams, access sets, semaphores, flows);
 * each input replaces one blob of one row of a copy of it:
 *
 *   byte 0: what, modulo 6: event_data.cols, edge_blocks.ins,
 *           edge_outs.outs, edge_labels.texts, edge_crit.crit,
 *           event_dir.rows
 *   byte 1: which row (modulo the rows there are)
 *   rest:   the new blob (empty: SQL NULL)
 *
 * then scans both tables (also through st_conn_scan(), as the server's
 * summaries read events), looks up every event's edges both ways, and runs
 * deps_event_edges(), deps_chain() and deps_critical_path() from several
 * events.  Built with -DFUZZ_REPLAY_MAIN it is a TAP program that replays
 * fuzz/corpus/store (make check); FUZZ_STORE_SEEDS=DIR writes the store's own
 * blobs there as seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/library.h"
#include "store/store.h"
#include "ingest/ingest.h"
#include "deps/deps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char trace[] =
	"{\"traceEvents\": [\n"
	"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n"
	"{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}},\n"
	"{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 8, \"args\": {\"name\": \"stream 8\"}},\n"
	"{\"name\": \"step\", \"ph\": \"X\", \"ts\": 0, \"dur\": 100, \"pid\": 1, \"tid\": 1},\n"
	"{\"name\": \"op\", \"ph\": \"X\", \"ts\": 10, \"dur\": 30, \"pid\": 1, \"tid\": 1},\n"
	"{\"name\": \"launch\", \"ph\": \"X\", \"ts\": 15, \"dur\": 5, \"pid\": 1, \"tid\": 1},\n"
	"{\"name\": \"op2\", \"ph\": \"X\", \"ts\": 50, \"dur\": 40, \"pid\": 1, \"tid\": 1},\n"
	"{\"name\": \"launch2\", \"ph\": \"X\", \"ts\": 60, \"dur\": 5, \"pid\": 1, \"tid\": 1},\n"
	"{\"name\": \"k\", \"ph\": \"X\", \"ts\": 22, \"dur\": 20, \"pid\": 0, \"tid\": 7, \"args\": "
	"{\"writes\": [\"A[0:64]\"], \"signals\": [\"S\"]}},\n"
	"{\"name\": \"k2\", \"ph\": \"X\", \"ts\": 45, \"dur\": 20, \"pid\": 0, \"tid\": 8, \"args\": "
	"{\"reads\": [\"A[0:32]\"], \"waits\": [\"S>=1\"]}},\n"
	"{\"name\": \"k3\", \"ph\": \"X\", \"ts\": 70, \"dur\": 10, \"pid\": 0, \"tid\": 7, \"args\": "
	"{\"writes\": [\"A[16:48]\", \"B\"]}},\n"
	"{\"name\": \"k4\", \"ph\": \"X\", \"ts\": 85, \"dur\": 10, \"pid\": 0, \"tid\": 8, \"args\": "
	"{\"reads\": [\"B\", \"A\"], \"writes\": [\"A[0:8]\"]}},\n"
	"{\"name\": \"mark\", \"ph\": \"i\", \"ts\": 30, \"pid\": 1, \"tid\": 1, \"s\": \"t\"},\n"
	"{\"name\": \"mem\", \"ph\": \"C\", \"ts\": 5, \"pid\": 1, \"args\": {\"bytes\": 10}},\n"
	"{\"name\": \"launch\", \"ph\": \"s\", \"id\": 1, \"ts\": 16, \"pid\": 1, \"tid\": 1, \"cat\": \"ac2g\"},\n"
	"{\"name\": \"launch\", \"ph\": \"f\", \"id\": 1, \"ts\": 22, \"pid\": 0, \"tid\": 7, \"cat\": \"ac2g\", \"bp\": \"e\"}\n"
	"]}\n";

/* The blobs an input may replace, by its first byte modulo NKINDS. */
static const struct {
	const char *table, *col, *key;
} kinds[] = {
	{ "event_data", "cols", "rowid" },
	{ "edge_blocks", "ins", "id" },
	{ "edge_outs", "outs", "id" },
	{ "edge_labels", "texts", "id" },
	{ "edge_crit", "crit", "id" },
	{ "event_dir", "rows", "id" },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static char base[256], work[256];
static uint8_t *base_bytes;
static size_t base_len;

static void
build_base(void)
{
	const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	struct tc_err err = { 0 };
	struct st_stats st;
	FILE *f;
	long n;

	snprintf(base, sizeof(base), "%s/fuzz-store-%d.db", t, (int)getpid());
	snprintf(work, sizeof(work), "%s/fuzz-store-%d-work.db", t, (int)getpid());
	if (st_writer_open(&w, base, &err) ||
	    tc_input_open_mem(&in, trace, sizeof(trace) - 1, "fuzz-store.json", &err) ||
	    ing_json_read(w, in, NULL, &err) || st_writer_finish(w, &st, &err)) {
		fprintf(stderr, "fuzz-store: cannot build the store: %s\n", err.msg);
		abort();	/* the harness, not the input */
	}
	tc_input_close(in);
	f = fopen(base, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		abort();
	base_len = (size_t)n;
	base_bytes = tc_xmalloc(base_len);
	if (fread(base_bytes, 1, base_len, f) != base_len)
		abort();
	fclose(f);
	unlink(base);
}

/* st_conn_scan()'s callback: every field read */
static int
scan_ev(void *arg, int64_t id, const struct st_ev_brief *ev)
{
	*(uint64_t *)arg += (uint64_t)id + (uint64_t)ev->unit + (uint64_t)ev->ts +
			    (uint64_t)ev->dur + ev->name + (uint64_t)ev->depth + (uint64_t)ev->kind;
	return 0;
}

/* Step @sql to the end, reading every column of every row. */
static void
drain(sqlite3 *db, const char *sql, int64_t a)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, a);
	while (sqlite3_step(s) == SQLITE_ROW)
		for (int c = 0; c < sqlite3_column_count(s); c++)
			(void)sqlite3_column_text(s, c);
	sqlite3_finalize(s);
}

static void
write_seeds(const char *dir)
{
	sqlite3 *db = NULL;
	char path[1024];

	if (sqlite3_open_v2(work, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		abort();
	for (size_t what = 0; what < NKINDS; what++) {
		sqlite3_stmt *s = NULL;
		char sql[256];
		int row = 0;

		snprintf(sql, sizeof(sql), "SELECT %s FROM %s ORDER BY %s", kinds[what].col,
			 kinds[what].table, kinds[what].key);
		if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
			abort();
		while (sqlite3_step(s) == SQLITE_ROW && row < 4) {
			FILE *f;
			uint8_t hdr[2] = { (uint8_t)what, (uint8_t)row };

			snprintf(path, sizeof(path), "%s/seed-%zu-%d", dir, what, row++);
			f = fopen(path, "wb");
			if (!f || fwrite(hdr, 1, 2, f) != 2 ||
			    fwrite(sqlite3_column_blob(s, 0), 1, (size_t)sqlite3_column_bytes(s, 0),
				   f) != (size_t)sqlite3_column_bytes(s, 0) || fclose(f))
				abort();
		}
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	struct st_conn *sc;
	FILE *f;
	int64_t rows = 0, nev = 0;
	char sql[256];
	size_t what;

	if (!base_bytes)
		build_base();
	f = fopen(work, "wb");
	if (!f || fwrite(base_bytes, 1, base_len, f) != base_len || fclose(f))
		abort();
	if (getenv("FUZZ_STORE_SEEDS")) {
		write_seeds(getenv("FUZZ_STORE_SEEDS"));
		unsetenv("FUZZ_STORE_SEEDS");
	}
	if (size < 2)
		goto out;
	what = data[0] % NKINDS;
	/* the damage, through plain SQLite */
	if (sqlite3_open(work, &db) != SQLITE_OK)
		abort();
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", kinds[what].table);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		rows = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	s = NULL;
	snprintf(sql, sizeof(sql), "UPDATE %s SET %s = ?1 WHERE %s = (SELECT %s FROM %s ORDER BY %s "
		 "LIMIT 1 OFFSET ?2)", kinds[what].table, kinds[what].col, kinds[what].key,
		 kinds[what].key, kinds[what].table, kinds[what].key);
	if (rows > 0 && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
		if (size > 2)
			sqlite3_bind_blob(s, 1, data + 2, (int)(size - 2), SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(s, 1);
		sqlite3_bind_int64(s, 2, data[1] % rows);
		sqlite3_step(s);
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	db = NULL;
	/* the read side, as the server and the CLI use it */
	if (st_trace_open(&db, work, &err))
		goto out;
	st_read_begin(db);
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM events", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		nev = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	drain(db, "SELECT * FROM events", 0);
	drain(db, "SELECT * FROM events WHERE unit = 1 AND depth = 1 AND ts <= 50 "
		  "ORDER BY ts DESC, id DESC", 0);
	drain(db, "SELECT * FROM edges", 0);
	if ((sc = st_conn_of(db))) {
		uint64_t sum = 0;

		st_conn_scan(sc, 0, nev + 2, scan_ev, &sum);
		st_conn_scan(sc, 2, nev / 2 + 1, scan_ev, &sum);
	}
	for (int64_t id = 0; id <= nev + 1; id++) {
		json_t *j;

		drain(db, "SELECT * FROM edges WHERE dst = ?1", id);
		drain(db, "SELECT * FROM edges WHERE src = ?1", id);
		j = deps_event_edges(db, id, &err);
		json_decref(j);
		tc_err_clear(&err);
		if (id % 3 == 0) {
			json_decref(deps_chain(db, id, DEPS_KINDS_ALL, 0, 4, 200, &err));
			tc_err_clear(&err);
			json_decref(deps_critical_path(db, id, 0, 0, DEPS_KINDS_ALL, 0, 1000, &err));
			tc_err_clear(&err);
		}
	}
	json_decref(deps_critical_path(db, 0, 0, 0, DEPS_KINDS_ALL, 0, 1000, &err));
	st_read_end(db);
out:
	sqlite3_close(db);
	unlink(work);
	return 0;
}

#ifdef FUZZ_REPLAY_MAIN
#include "fuzz/fuzz-replay.h"
FUZZ_REPLAY("store")
#endif
