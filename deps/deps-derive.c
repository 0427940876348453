/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-derive.c - deps_derive(): run the derivation engine over the
 * events of a trace being finished, in processing order, and store the
 * edges it finds.  Called by st_writer_finish() inside its transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps.h"
#include "deps/deps-int.h"

#define BATCH 64		/* edges per multi-row INSERT */
#define LABEL_LEN 208

struct pending {
	int64_t src, dst;
	int kind;
	char label[LABEL_LEN];
};

struct derive {
	struct st_writer *w;
	sqlite3 *db;
	sqlite3_stmt *ins, *ins1;	/* BATCH rows, one row */
	struct st_stats *stats;
	struct tc_err *err;
	struct pending batch[BATCH];
	int n;
};

/* Store the pending edges: one statement for a full batch, else row by row. */
static int
flush(struct derive *d)
{
	sqlite3_stmt *st = d->n == BATCH ? d->ins : d->ins1;
	int rc = 0;

	for (int i = 0; i < d->n && !rc; i++) {
		int b = d->n == BATCH ? 4 * i : 0;

		sqlite3_bind_int64(st, b + 1, d->batch[i].src);
		sqlite3_bind_int64(st, b + 2, d->batch[i].dst);
		sqlite3_bind_int(st, b + 3, d->batch[i].kind);
		sqlite3_bind_text(st, b + 4, d->batch[i].label, -1, SQLITE_STATIC);
		if (d->n == BATCH && i < d->n - 1)
			continue;
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = tc_err_set(d->err, -EIO, "storing dependency edges: %s",
					sqlite3_errmsg(d->db));
		sqlite3_reset(st);
	}
	d->n = 0;
	return rc;
}

static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	struct derive *d = ctx;
	struct pending *p = &d->batch[d->n++];

	p->src = src;
	p->dst = dst;
	p->kind = kind;
	snprintf(p->label, sizeof(p->label), "%s", label);
	if (d->stats)
		d->stats->edges[kind]++;
	return d->n == BATCH ? flush(d) : 0;
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
static const char ins_sql[] = "INSERT INTO edges(src, dst, kind, label) VALUES (?, ?, ?, ?)";

int
deps_derive(struct st_writer *w, sqlite3 *db, struct st_stats *stats, struct tc_err *err)
{
	struct derive *d = tc_xcalloc(1, sizeof(*d));
	sqlite3_stmt *sel = NULL, *get = NULL;
	struct deps_engine *e = NULL;
	struct tc_buf batch_sql;
	int rc = 0, s;

	/* For bench/deps-bench.sh: measure ingest without the analysis. */
	if (getenv("NX_DEPS_DISABLE") && !strcmp(getenv("NX_DEPS_DISABLE"), "1")) {
		free(d);
		return 0;
	}
	d->w = w;
	d->db = db;
	d->stats = stats;
	d->err = err;
	tc_buf_init(&batch_sql);
	tc_buf_adds(&batch_sql, "INSERT INTO edges(src, dst, kind, label) VALUES (?,?,?,?)");
	for (int i = 1; i < BATCH; i++)
		tc_buf_adds(&batch_sql, ",(?,?,?,?)");
	if (sqlite3_prepare_v2(db, sel_sql, -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, get_sql, -1, &get, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, ins_sql, -1, &d->ins1, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, batch_sql.data, -1, &d->ins, NULL) != SQLITE_OK) {
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
	if (!rc)
		rc = flush(d);
out:
	deps_engine_free(e);
	sqlite3_finalize(sel);
	sqlite3_finalize(get);
	sqlite3_finalize(d->ins);
	sqlite3_finalize(d->ins1);
	free(d);
	tc_buf_free(&batch_sql);
	return rc;
}
