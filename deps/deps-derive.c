/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-derive.c - deps_derive(): run the derivation engine over the
 * events of a trace being finished, in processing order, and hand the
 * edges it finds to the store (st_writer_add_edge()), which packs them.
 * Called by st_writer_finish() inside its transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps.h"
#include "deps/deps-int.h"

struct derive {
	struct st_writer *w;
	struct st_stats *stats;
	struct tc_err *err;
};

/* Hand an edge to the store, which packs them at the end of finish. */
static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	struct derive *d = ctx;
	int rc = st_writer_add_edge(d->w, src, dst, kind, label, len);

	if (rc < 0)
		return tc_err_set(d->err, rc, "storing dependency edges: %s", strerror(-rc));
	if (d->stats)
		d->stats->edges[kind]++;
	return 0;
}

static void
on_bad(void *ctx, int64_t eid, const char *what, const char *text)
{
	struct derive *d = ctx;

	if (d->w)
		st_writer_count_bad_access(d->w, "event %lld: bad %s \"%.160s\"", (long long)eid,
					   what, text);
}

/*
 * Events flagged by the store (args mention reads, writes, signals, waits or
 * operands) in processing order: start, end, file order.  Only the ids are
 * sorted; args are fetched by id afterwards so the sorter stays small.
 */
static const char sel_sql[] =
	"SELECT id FROM events WHERE (flags & 1) != 0 ORDER BY ts, ts + dur, seq";
static const char get_sql[] = "SELECT ts, dur, args FROM events WHERE id = ?";

int
deps_derive(struct st_writer *w, sqlite3 *db, struct st_stats *stats, struct tc_err *err)
{
	struct derive *d = tc_xcalloc(1, sizeof(*d));
	sqlite3_stmt *sel = NULL, *get = NULL;
	struct deps_engine *e = NULL;
	int rc = 0, s;

	/* For bench/deps-bench.sh: measure ingest without the analysis. */
	if (getenv("NX_DEPS_DISABLE") && !strcmp(getenv("NX_DEPS_DISABLE"), "1")) {
		free(d);
		return 0;
	}
	d->w = w;
	d->stats = stats;
	d->err = err;
	if (sqlite3_prepare_v2(db, sel_sql, -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, get_sql, -1, &get, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "dependency analysis: %s", sqlite3_errmsg(db));
		goto out;
	}
	e = deps_engine_new(on_edge, on_bad, d);
	while ((s = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);

		sqlite3_bind_int64(get, 1, id);
		if (sqlite3_step(get) == SQLITE_ROW)
			rc = deps_engine_event(e, id, sqlite3_column_int64(get, 0),
					       sqlite3_column_int64(get, 1),
					       (const char *)sqlite3_column_text(get, 2),
					       (size_t)sqlite3_column_bytes(get, 2));
		sqlite3_reset(get);
		if (rc)
			goto out;
	}
	if (s != SQLITE_DONE) {
		rc = tc_err_set(err, -EIO, "dependency analysis: %s", sqlite3_errmsg(db));
		goto out;
	}
	rc = deps_engine_finish(e);
out:
	deps_engine_free(e);
	sqlite3_finalize(sel);
	sqlite3_finalize(get);
	free(d);
	return rc;
}
