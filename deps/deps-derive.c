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
	bool edge_failed;	/* @err says why */
};

/* Hand an edge to the store, which packs them at the end of finish. */
static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	struct derive *d = ctx;
	int rc = st_writer_add_edge(d->w, src, dst, kind, label, len);

	if (rc < 0) {
		d->edge_failed = true;
		return tc_err_set(d->err, rc, "storing dependency edges: %s", strerror(-rc));
	}
	if (d->stats)
		d->stats->edges[kind]++;
	return 0;
}

static int
on_parts(void *ctx, int64_t src, int64_t dst, int kind, int shape, const char *name, size_t len,
	 uint64_t a, uint64_t b)
{
	struct derive *d = ctx;
	int rc = st_writer_add_edge_parts(d->w, src, dst, kind,
					  shape == DEPS_LABEL_BYTES ? ST_LABEL_BYTES
								    : ST_LABEL_AT_LEAST,
					  name, len, a, b);

	if (rc < 0) {
		d->edge_failed = true;
		return tc_err_set(d->err, rc, "storing dependency edges: %s", strerror(-rc));
	}
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
 * Processing order is (ts, ts + dur, seq) over the events flagged by the
 * store (args mention reads, writes, signals, waits or operands).  Event ids
 * already run in (ts, dur DESC, seq) order within a unit, so each unit with
 * flagged events is read in id order by its own statement, runs of equal
 * start times are re-sorted by (end, seq), and a heap merges the units: no
 * sort of the whole trace, and memory is one chunk per such unit.  With
 * more than DERIVE_MAX_UNITS of them, SQLite sorts instead (its sorter
 * spills to disk).
 */
#define DERIVE_MAX_UNITS 256

static const char unit_sql[] =
	"SELECT id, ts, dur, seq, args FROM events WHERE unit = ?1 AND (flags & 1) != 0 "
	"ORDER BY id";
static const char sel_sql[] =
	"SELECT id FROM events WHERE (flags & 1) != 0 ORDER BY ts, ts + dur, seq";
static const char get_sql[] = "SELECT ts, dur, args FROM events WHERE id = ?";

struct drow {
	int64_t id, ts, dur, seq;
	size_t off, len;	/* args in the stream's buffer */
	bool has_args;
};

/* One unit's flagged events: the current run of equal start times. */
struct dstream {
	sqlite3_stmt *st;
	struct drow *run;
	size_t nrun, caprun, at;
	struct tc_buf args;	/* args of the run */
	struct drow next;	/* the row after the run, read ahead */
	struct tc_buf next_args;
	bool has_next;
};

static void
drow_read(sqlite3_stmt *st, struct drow *r, struct tc_buf *args)
{
	const char *a = (const char *)sqlite3_column_text(st, 4);

	r->id = sqlite3_column_int64(st, 0);
	r->ts = sqlite3_column_int64(st, 1);
	r->dur = sqlite3_column_int64(st, 2);
	r->seq = sqlite3_column_int64(st, 3);
	r->has_args = a != NULL;
	r->off = args->len;
	r->len = a ? (size_t)sqlite3_column_bytes(st, 4) : 0;
	if (a)
		tc_buf_add(args, a, r->len);
}

static inline bool
drow_lt(const struct drow *x, const struct drow *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->ts + x->dur != y->ts + y->dur)
		return x->ts + x->dur < y->ts + y->dur;
	return x->seq < y->seq;
}

/*
 * Load @u's next run of events with one start time, sorted by (end, seq).
 * Return: 1 with a run, 0 at the end, -EIO.
 */
static int
dstream_fill(struct dstream *u)
{
	int s;

	u->nrun = u->at = 0;
	tc_buf_reset(&u->args);
	if (!u->has_next)
		return 0;
	for (;;) {
		struct drow *r;

		if (u->nrun == u->caprun) {
			u->caprun = u->caprun ? u->caprun * 2 : 4;
			u->run = tc_xrealloc(u->run, u->caprun * sizeof(*u->run));
		}
		r = &u->run[u->nrun++];
		*r = u->next;
		r->off = u->args.len;
		tc_buf_add(&u->args, u->next_args.data, u->next.len);
		tc_buf_reset(&u->next_args);
		u->has_next = false;
		s = sqlite3_step(u->st);
		if (s == SQLITE_DONE)
			break;
		if (s != SQLITE_ROW)
			return -EIO;
		drow_read(u->st, &u->next, &u->next_args);
		u->has_next = true;
		if (u->next.ts != u->run[0].ts)
			break;
	}
	for (size_t i = 1; i < u->nrun; i++) {	/* a few rows: insertion sort */
		struct drow x = u->run[i];
		size_t j = i;

		while (j > 0 && drow_lt(&x, &u->run[j - 1])) {
			u->run[j] = u->run[j - 1];
			j--;
		}
		u->run[j] = x;
	}
	return 1;
}

static const struct drow *
dhead(const struct dstream *u)
{
	return &u->run[u->at];
}

static void
heap_down(struct dstream **h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct dstream *t;

		if (c >= n)
			return;
		if (c + 1 < n && drow_lt(dhead(h[c + 1]), dhead(h[c])))
			c++;
		if (!drow_lt(dhead(h[c]), dhead(h[i])))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

static void
dstreams_free(struct dstream *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_finalize(v[i].st);
		free(v[i].run);
		tc_buf_free(&v[i].args);
		tc_buf_free(&v[i].next_args);
	}
	free(v);
}

/*
 * Open a stream for every unit that has flagged events (at most
 * DERIVE_MAX_UNITS; *@too_many otherwise).  Return: 0 or -EIO.
 */
static int
dstreams_open(sqlite3 *db, struct dstream **out, size_t *nout, bool *too_many)
{
	sqlite3_stmt *units = NULL, *probe = NULL;
	struct dstream *v = NULL;
	size_t n = 0;
	int rc = 0, s;

	*too_many = false;
	if (sqlite3_prepare_v2(db, "SELECT id FROM units WHERE event_count > 0 ORDER BY id", -1,
			       &units, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	while ((s = sqlite3_step(units)) == SQLITE_ROW) {
		if (!probe && sqlite3_prepare_v2(db, unit_sql, -1, &probe, NULL) != SQLITE_OK) {
			rc = -EIO;
			goto out;
		}
		sqlite3_bind_int64(probe, 1, sqlite3_column_int64(units, 0));
		s = sqlite3_step(probe);
		if (s == SQLITE_DONE) {		/* nothing flagged: reuse the statement */
			sqlite3_reset(probe);
			continue;
		}
		if (s != SQLITE_ROW) {
			rc = -EIO;
			goto out;
		}
		if (n == DERIVE_MAX_UNITS) {
			*too_many = true;
			goto out;
		}
		v = tc_xrealloc(v, (n + 1) * sizeof(*v));
		memset(&v[n], 0, sizeof(v[n]));
		tc_buf_init(&v[n].args);
		tc_buf_init(&v[n].next_args);
		v[n].st = probe;
		probe = NULL;
		drow_read(v[n].st, &v[n].next, &v[n].next_args);
		v[n].has_next = true;
		n++;
	}
	if (s != SQLITE_DONE)
		rc = -EIO;
out:
	sqlite3_finalize(units);
	sqlite3_finalize(probe);
	if (rc < 0 || *too_many) {
		dstreams_free(v, n);
		v = NULL;
		n = 0;
	}
	*out = v;
	*nout = n;
	return rc;
}

/* The engine over the merged unit streams; 0, -EIO or an edge callback's error. */
static int
derive_merged(struct deps_engine *e, struct dstream *v, size_t n)
{
	struct dstream **h = tc_xmalloc((n + 1) * sizeof(*h));
	size_t nh = 0;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		rc = dstream_fill(&v[i]);
		if (rc > 0) {
			h[nh++] = &v[i];
			rc = 0;
		}
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(h, nh, i);
	while (nh && !rc) {
		struct dstream *u = h[0];
		const struct drow *r = dhead(u);

		rc = deps_engine_event(e, r->id, r->ts, r->dur,
				       r->has_args ? u->args.data + r->off : NULL, r->len);
		if (rc)
			break;
		if (++u->at == u->nrun) {
			rc = dstream_fill(u);
			if (rc < 0)
				break;
			if (rc == 0)
				h[0] = h[--nh];
			rc = 0;
		}
		heap_down(h, nh, 0);
	}
	free(h);
	return rc;
}

/* The engine over SQLite's sort of all flagged events (many units). */
static int
derive_sorted(struct deps_engine *e, sqlite3 *db)
{
	sqlite3_stmt *sel = NULL, *get = NULL;
	int rc = 0, s;

	if (sqlite3_prepare_v2(db, sel_sql, -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, get_sql, -1, &get, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	while (!rc && (s = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);

		sqlite3_bind_int64(get, 1, id);
		if (sqlite3_step(get) == SQLITE_ROW)
			rc = deps_engine_event(e, id, sqlite3_column_int64(get, 0),
					       sqlite3_column_int64(get, 1),
					       (const char *)sqlite3_column_text(get, 2),
					       (size_t)sqlite3_column_bytes(get, 2));
		sqlite3_reset(get);
	}
	if (!rc && s != SQLITE_DONE)
		rc = -EIO;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(get);
	return rc;
}

int
deps_derive(struct st_writer *w, sqlite3 *db, struct st_stats *stats, struct tc_err *err)
{
	struct derive d = { .w = w, .stats = stats, .err = err };
	struct dstream *v = NULL;
	struct deps_engine *e = NULL;
	size_t n = 0;
	bool many;
	int rc;

	/* For bench/deps-bench.sh: measure ingest without the analysis. */
	if (getenv("NX_DEPS_DISABLE") && !strcmp(getenv("NX_DEPS_DISABLE"), "1"))
		return 0;
	e = deps_engine_new(on_edge, on_bad, &d);
	deps_engine_set_parts(e, on_parts);
	rc = dstreams_open(db, &v, &n, &many);
	if (!rc)
		rc = many ? derive_sorted(e, db) : derive_merged(e, v, n);
	if (!rc)
		rc = deps_engine_finish(e);
	if (rc < 0 && !d.edge_failed)
		rc = tc_err_set(err, rc, "dependency analysis: %s", sqlite3_errmsg(db));
	dstreams_free(v, n);
	deps_engine_free(e);
	return rc;
}
