/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-deps-feed.c - the flagged events the store hands to
 * deps/ (st_writer_flagged_open(), store/st-flagged.c) on a real SQLite file:
 * with NX_DEPS_CHECK=1 deps_derive() compares them with the SQL `events`
 * table, unit by unit; and the edges stored from them are those the engine
 * derives from the events read back through SQL, sorted by SQLite into
 * processing order (ts, ts + dur, seq).  The trace has many equal start
 * times within and across units, events with args but no access sets, and
 * enough events for the finish pass to run in two parts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/store.h"
#include "deps/deps.h"
#include "deps/deps-int.h"
#include "tests/tap.h"

#define NEV 20000
#define NUNITS 5
#define MANY_UNITS 400	/* the second round: a reader per unit over many runs */

static struct tc_buf got;

static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	tc_buf_printf(&got, "%lld>%lld:%d:%.*s\n", (long long)src, (long long)dst, kind, (int)len,
		      label);
	return 0;
}

static int
on_parts(void *ctx, int64_t src, int64_t dst, int kind, const struct deps_label *l)
{
	if (l->shape == DEPS_LABEL_BYTES)
		tc_buf_printf(&got, "%lld>%lld:%d:%.*s[%llu:%llu]\n", (long long)src, (long long)dst,
			      kind, (int)l->len, l->name, (unsigned long long)l->a,
			      (unsigned long long)l->b);
	else
		tc_buf_printf(&got, "%lld>%lld:%d:%.*s>=%llu\n", (long long)src, (long long)dst,
			      kind, (int)l->len, l->name, (unsigned long long)l->a);
	return 0;
}

static int
cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of @text, sorted, joined again (@text is consumed). */
static char *
sorted(char *text)
{
	char **v = NULL, *p, *save = NULL;
	size_t n = 0, cap = 0;
	struct tc_buf b;

	for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = tc_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = p;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_line);
	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	for (size_t i = 0; i < n; i++)
		tc_buf_printf(&b, "%s\n", v[i]);
	free(v);
	free(text);
	return tc_buf_steal(&b);
}

/* The derived edges of the stored trace, through the engine fed by SQL. */
static char *
reference(sqlite3 *db)
{
	struct deps_engine *e = deps_engine_new(on_edge, NULL, NULL);
	sqlite3_stmt *q;

	deps_engine_set_parts(e, on_parts);
	tc_buf_reset(&got);
	tc_buf_adds(&got, "");
	if (sqlite3_prepare_v2(db, "SELECT id, ts, dur, args FROM events WHERE (flags & 1) != 0 "
			       "ORDER BY ts, ts + dur, seq", -1, &q, NULL) != SQLITE_OK) {
		deps_engine_free(e);
		return tc_xstrdup("sql error");
	}
	while (sqlite3_step(q) == SQLITE_ROW)
		deps_engine_event(e, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
				  sqlite3_column_int64(q, 2), (const char *)sqlite3_column_text(q, 3),
				  (size_t)sqlite3_column_bytes(q, 3));
	sqlite3_finalize(q);
	deps_engine_finish(e);
	deps_engine_free(e);
	return sorted(tc_buf_steal(&got));
}

/* The stored edges of kinds the analysis derives (the trace has no explicit ones). */
static char *
stored(sqlite3 *db)
{
	sqlite3_stmt *q;

	tc_buf_reset(&got);
	tc_buf_adds(&got, "");
	if (sqlite3_prepare_v2(db, "SELECT src, dst, kind, label FROM edges", -1, &q, NULL) !=
	    SQLITE_OK)
		return tc_xstrdup("sql error");
	while (sqlite3_step(q) == SQLITE_ROW)
		tc_buf_printf(&got, "%lld>%lld:%d:%s\n", (long long)sqlite3_column_int64(q, 0),
			      (long long)sqlite3_column_int64(q, 1), sqlite3_column_int(q, 2),
			      (const char *)sqlite3_column_text(q, 3));
	sqlite3_finalize(q);
	return sorted(tc_buf_steal(&got));
}

static int64_t
q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/*
 * Write the trace to @path: NEV events on @nunits streams, start times from a
 * few hundred values (so many ties), half of them flagged (reads and writes
 * of tiles of 4 buffers, some signals and waits), the rest with args
 * without access sets or none.  Return: st_writer_finish()'s.
 */
static int
build(const char *path, int nunits, struct st_stats *st, struct tc_err *err)
{
	struct st_writer *w;
	uint64_t r = 7;
	int dev, u[MANY_UNITS];
	int rc;

	rc = st_writer_open(&w, path, err);
	if (rc < 0)
		return rc;
	dev = st_device(w, "gpu:0", ST_DEV_GPU, NULL);
	for (int i = 0; i < nunits; i++) {
		char k[16];

		snprintf(k, sizeof(k), "q%d", i);
		u[i] = st_unit(w, dev, k, ST_UNIT_STREAM, NULL);
	}
	for (int i = 1; i <= NEV; i++) {
		struct st_event ev = { 0 };
		char args[200];
		unsigned x;

		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		x = (unsigned)(r >> 33);
		ev.unit = u[x % (unsigned)nunits];
		ev.kind = ST_EV_SLICE;
		ev.ts = (int64_t)((x >> 3) % 400) * 100;
		ev.dur = (int64_t)((x >> 12) % 4) * 50;
		ev.name = st_intern(w, "op", 2);
		if (x >> 20 & 1) {
			int len = snprintf(args, sizeof(args),
					   "{\"reads\": [\"b%u[%u:%u]\"], \"writes\": [\"b%u[%u:%u]\"]",
					   x % 4, (x >> 5) % 8 * 64, (x >> 5) % 8 * 64 + 128,
					   (x >> 7) % 4, (x >> 9) % 8 * 64, (x >> 9) % 8 * 64 + 64);

			if (x >> 21 & 1)
				len += snprintf(args + len, sizeof(args) - len,
						", \"signals\": [\"S%u\"]", x % 3);
			if ((x >> 22 & 3) == 0)
				len += snprintf(args + len, sizeof(args) - len,
						", \"waits\": [\"S%u>=%u\"]", x % 3, 1 + i / 100);
			snprintf(args + len, sizeof(args) - len, "}");
			ev.args = args;
			ev.args_len = strlen(args);
		} else if (x >> 21 & 1) {
			snprintf(args, sizeof(args), "{\"i\": %d}", i);
			ev.args = args;
			ev.args_len = strlen(args);
		}
		if (st_event_add(w, &ev) < 0) {
			st_writer_abort(w);
			return -EIO;
		}
	}
	return st_writer_finish(w, st, err);
}

int
main(void)
{
	char dir[] = "/tmp/nx-feed-XXXXXX";
	struct tc_err err = { 0 };
	struct st_stats st;
	sqlite3 *db;
	char *path, *want, *have;

	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	tc_buf_init(&got);
	path = tc_xasprintf("%s/t.db", dir);

	for (int round = 0; round < 2; round++) {
		int nunits = round ? MANY_UNITS : NUNITS;
		const char *what = round ? "400 units over 29 sorted runs: " : "";

		/* the second round: each unit has a stretch in each of many runs */
		if (round)
			setenv("NX_STORE_RUN_KEYS", "700", 1);
		setenv("NX_DEPS_CHECK", "1", 1);
		is_intf(build(path, nunits, &st, &err), 0, "%sfinish with the check: the flagged "
		       "events handed to deps/ are those of the events table", what);
		if (err.msg[0])
			printf("# %s\n", err.msg);
		unsetenv("NX_DEPS_CHECK");
		unsetenv("NX_STORE_RUN_KEYS");
		ok(st.edges[ST_EDGE_FLOW] > 1000 && st.edges[ST_EDGE_ANTI] > 1000 &&
		   st.edges[ST_EDGE_ORDER] > 100, "%sflow, anti and order edges derived", what);
		ok(st_trace_open(&db, path, &err) == 0, "%sreopen", what);
		ok(q1(db, "SELECT count(*) FROM events WHERE (flags & 1) != 0") > NEV / 3,
		   "%sa third or more of the events are flagged", what);
		ok(q1(db, "SELECT count(*) FROM (SELECT ts FROM events WHERE (flags & 1) != 0 "
			  "GROUP BY ts HAVING count(DISTINCT unit) > 1 AND count(DISTINCT dur) > 1)") >
		   100, "%smany start times are shared within and across units", what);
		ok(q1(db, "SELECT count(DISTINCT unit) FROM events") == nunits, "%s%d units", what,
		   nunits);
		want = reference(db);
		have = stored(db);
		ok(strlen(want) > 10000, "%sthe reference has edges", what);
		ok(!strcmp(have, want), "%sstored edges are those derived from the events in SQL "
		   "order", what);
		if (strcmp(have, want))
			printf("# stored %zu bytes, reference %zu bytes\n", strlen(have),
			       strlen(want));
		free(want);
		free(have);
		sqlite3_close(db);
	}

	setenv("NX_DEPS_DISABLE", "1", 1);
	is_int(build(path, NUNITS, &st, &err), 0, "finish without the analysis");
	unsetenv("NX_DEPS_DISABLE");
	ok(st.edges[ST_EDGE_FLOW] == 0 && st.edges[ST_EDGE_ORDER] == 0, "no edge derived");

	unlink(path);
	rmdir(dir);
	free(path);
	tc_buf_free(&got);
	return tap_done();
}
