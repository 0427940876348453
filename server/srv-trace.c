/* SPDX-License-Identifier: MIT */
/*
 * server/srv-trace.c - the endpoints over one trace's store: units, the
 * timeline window (events or summary buckets, bounded by px), one event with
 * its edges, dependency chains, the critical path and the per-name summary
 * of a selection (name search: srv-search.c).  All SQL is prepared with bound
 * parameters; connections come from the read-only pool.
 *
 * Timeline window per unit: a unit's events have consecutive ids in ts
 * order (store contract), so two lookups by time in the unit's id range
 * (the events module binary-searches its chunk directory) give the ids
 * [lo, hi) starting inside the window in O(log n).  More than px of them:
 * the answer is summary buckets, from the level whose bucket width is the
 * smallest power-of-two multiple of bucket_ns not below (end - start) / px
 * (merged further above the highest stored level), so at most about px
 * buckets, one range scan per unit.  Otherwise the events: per depth the one
 * reaching in from before (at one depth slices do not overlap: a backward
 * scan of the unit's chunks that skips those without that depth), then
 * [lo, hi) in one scan.
 * Large answers (timeline, search, summary) are written straight to JSON
 * text (tc-jw.c), each request in one read transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps.h"
#include "server/srv-int.h"
#include "common/tc-jw.h"
#include "server/srv-sums.h"

#define EV_LOWER_SQL "SELECT id FROM events WHERE unit = ?1 AND id >= ?2 AND id <= ?3 " \
		     "AND ts >= ?4 ORDER BY id LIMIT 1"

#define UNITS_MAX 65536
#define WIN_MIN (-(INT64_C(1) << 61))	/* end - start stays far from overflow */
#define WIN_MAX (INT64_C(1) << 61)

static const char *
ev_kind_name(int k)
{
	switch (k) {
	case ST_EV_SLICE:
		return "slice";
	case ST_EV_INSTANT:
		return "instant";
	case ST_EV_COUNTER:
		return "counter";
	}
	return "slice";
}

static struct srv_pool_conn *
trace_conn(struct srv_req *r, const char *id)
{
	struct tc_err err = { 0 };
	struct srv_pool_conn *c = srv_pool_get(r->srv, id, &err);
	json_t *j;
	int code;

	if (c)
		return c;
	j = srv_trace_json(r->srv, id, &code);
	if (!j) {
		if (code == -ENOENT)
			srv_reply_error(r, 404, "not_found", "no trace %s", id);
		else
			srv_reply_error(r, 500, "internal", "cannot read the catalog");
		return NULL;
	}
	{
		const char *st = json_string_value(json_object_get(j, "status"));
		const char *e = json_string_value(json_object_get(j, "error"));

		if (st && !strcmp(st, "failed"))
			srv_reply_error(r, 409, "not_ready", "trace %s failed to ingest: %s", id,
					e ? e : "unknown error");
		else if (st && !strcmp(st, "ready"))
			srv_reply_error(r, 500, "internal", "trace %s: %s", id, err.msg);
		else
			srv_reply_error(r, 409, "not_ready", "trace %s is %s", id, st ? st : "?");
	}
	json_decref(j);
	return NULL;
}

static enum MHD_Result
db_error(struct srv_req *r, struct srv_pool_conn *c)
{
	enum MHD_Result ret = srv_reply_error(r, 500, "internal", "trace store: %s",
					      sqlite3_errmsg(c->db));

	srv_pool_put(r->srv, c);
	return ret;
}

/* ---- units ---- */

#define UNIT_ORDER " ORDER BY d.sort IS NULL, d.sort, d.name, d.id, u.kind, u.sort IS NULL, " \
	"u.sort, u.name, u.id"

static enum MHD_Result
api_units(struct srv_req *r, struct srv_pool_conn *c)
{
	sqlite3_stmt *st = NULL;
	json_t *units = json_array(), *ans;

	if (sqlite3_prepare_v2(c->db, "SELECT u.id, u.device_id, u.kind, u.name, u.sort, "
			       "u.event_count, u.max_depth, u.overlaps FROM units u JOIN devices d "
			       "ON d.id = u.device_id" UNIT_ORDER, -1, &st, NULL)) {
		json_decref(units);
		return db_error(r, c);
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *kind = st_unit_kind_name(sqlite3_column_int(st, 2));
		json_t *u = json_object();

		json_object_set_new(u, "id", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(u, "device_id", json_integer(sqlite3_column_int64(st, 1)));
		json_object_set_new(u, "kind", json_string(kind ? kind : "track"));
		json_object_set_new(u, "name", srv_col_str(st, 3));
		json_object_set_new(u, "sort", sqlite3_column_type(st, 4) == SQLITE_NULL ?
				    json_null() : json_integer(sqlite3_column_int64(st, 4)));
		json_object_set_new(u, "event_count", json_integer(sqlite3_column_int64(st, 5)));
		json_object_set_new(u, "max_depth", json_integer(sqlite3_column_int64(st, 6)));
		json_object_set_new(u, "overlaps", json_integer(sqlite3_column_int64(st, 7)));
		json_array_append_new(units, u);
	}
	sqlite3_finalize(st);
	ans = json_pack("{s:o, s:o}", "devices", srv_devices_json(c->db), "units", units);
	srv_pool_put(r->srv, c);
	return srv_reply_json(r, 200, ans);
}

/* ---- unit lists ---- */

void
srv_unit_list_free(struct unit_list *l)
{
	free(l->id);
	free(l->first);
	free(l->last);
	free(l->kind);
}

void
srv_unit_list_push(struct unit_list *l, sqlite3_stmt *st, int64_t id)
{
	int col = id > 0 ? 0 : 1;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->id = tc_xrealloc(l->id, l->cap * sizeof(*l->id));
		l->first = tc_xrealloc(l->first, l->cap * sizeof(*l->first));
		l->last = tc_xrealloc(l->last, l->cap * sizeof(*l->last));
		l->kind = tc_xrealloc(l->kind, l->cap * sizeof(*l->kind));
	}
	l->id[l->n] = id > 0 ? id : sqlite3_column_int64(st, 0);
	l->kind[l->n] = sqlite3_column_int(st, col);
	l->first[l->n] = sqlite3_column_int64(st, col + 1);	/* NULL reads 0 */
	l->last[l->n] = sqlite3_column_int64(st, col + 2);
	l->n++;
}

/* ?units=1,2,3 (or every unit in display order).  0, or -1 replied. */
static int
unit_list_get(struct srv_req *r, struct srv_pool_conn *c, struct unit_list *l)
{
	const char *arg = srv_arg(r, "units");
	sqlite3_stmt *st = NULL;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	if (!arg || !*arg) {
		if (sqlite3_prepare_v2(c->db, "SELECT u.id, u.kind, u.first_event, u.last_event "
				       "FROM units u JOIN devices d ON d.id = u.device_id"
				       UNIT_ORDER, -1, &st, NULL)) {
			srv_reply_error(r, 500, "internal", "trace store: %s",
					sqlite3_errmsg(c->db));
			return -1;
		}
		while (sqlite3_step(st) == SQLITE_ROW)
			srv_unit_list_push(l, st, 0);
		sqlite3_finalize(st);
		return 0;
	}
	if (sqlite3_prepare_v2(c->db, "SELECT kind, first_event, last_event FROM units "
			       "WHERE id = ?1", -1, &st, NULL)) {
		srv_reply_error(r, 500, "internal", "trace store: %s", sqlite3_errmsg(c->db));
		return -1;
	}
	for (const char *p = arg; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char tok[24];
		int64_t u;

		if (n == 0 || n >= sizeof(tok)) {
			srv_reply_error(r, 400, "bad_param", "units must be a comma-separated list "
					"of unit ids");
			rc = -1;
			break;
		}
		memcpy(tok, p, n);
		tok[n] = 0;
		if (tc_parse_i64(tok, &u) < 0 || u < 1) {
			srv_reply_error(r, 400, "bad_param", "units: '%s' is not a unit id", tok);
			rc = -1;
			break;
		}
		if (l->n >= UNITS_MAX) {
			srv_reply_error(r, 400, "bad_param", "units: more than %d ids", UNITS_MAX);
			rc = -1;
			break;
		}
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, u);
		if (sqlite3_step(st) == SQLITE_ROW)	/* unknown ids are skipped */
			srv_unit_list_push(l, st, u);
		if (!e)
			break;
		p = e + 1;
	}
	sqlite3_finalize(st);
	if (rc < 0)
		srv_unit_list_free(l);
	return rc;
}

/* start/end (default: the trace's span): 0 or -1 replied. */
static int
window_get(struct srv_req *r, struct srv_pool_conn *c, int64_t *start, int64_t *end)
{
	int a, b;

	*start = c->start_ns;
	*end = c->end_ns;
	a = srv_arg_i64(r, "start", start, WIN_MIN, WIN_MAX);
	if (a < 0)
		return -1;
	b = srv_arg_i64(r, "end", end, WIN_MIN, WIN_MAX);
	if (b < 0)
		return -1;
	if (*end <= *start) {
		if (a == 0 && b == 0) {
			*end = *start + 1;	/* empty or one-instant trace */
			return 0;
		}
		srv_reply_error(r, 400, "bad_param", "end (%lld) must be after start (%lld)",
				(long long)*end, (long long)*start);
		return -1;
	}
	return 0;
}

/* ---- timeline ---- */

/*
 * The answer is written straight into a tc_jw buffer (a DOM of tens of
 * thousands of objects cost more than the queries).  Names come from a
 * per-request cache of their JSON text by string id.
 */

struct tl_name {
	uint32_t id;		/* 0: empty slot */
	uint32_t len;
	const char *text;	/* JSON text ("..." or null), in the request arena */
};

struct tl {
	struct srv_req *r;
	struct tc_jw *w;
	sqlite3_stmt *depths, *prev, *win, *ts_at, *maxlevel, *sums, *suml, *str;
	struct tl_name *names;
	size_t ncap, nn;
	struct srv_rd_err err;
};

static void
tl_free(struct tl *t)
{
	sqlite3_finalize(t->depths);
	sqlite3_finalize(t->prev);
	sqlite3_finalize(t->win);
	sqlite3_finalize(t->ts_at);
	sqlite3_finalize(t->maxlevel);
	sqlite3_finalize(t->sums);
	sqlite3_finalize(t->suml);
	sqlite3_finalize(t->str);
	free(t->names);
}

static int
tl_prepare(sqlite3 *db, struct tl *t)
{
#define EV_COLS "id, ts, dur, depth, kind, value, name"
	if (sqlite3_prepare_v2(db, "SELECT depth FROM unit_depths WHERE unit_id = ?1 "
			       "ORDER BY depth", -1, &t->depths, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT " EV_COLS " FROM events WHERE unit = ?1 AND "
			       "depth = ?2 AND ts < ?3 ORDER BY ts DESC LIMIT 1", -1, &t->prev,
			       NULL) ||
	    sqlite3_prepare_v2(db, "SELECT " EV_COLS " FROM events WHERE id >= ?1 AND "
			       "id < ?2 ORDER BY id", -1, &t->win, NULL) ||
	    sqlite3_prepare_v2(db, EV_LOWER_SQL, -1, &t->ts_at, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT (SELECT MIN(level) FROM summaries WHERE unit_id = ?1), "
			       "(SELECT MAX(level) FROM summaries WHERE unit_id = ?1)", -1,
			       &t->maxlevel, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT bucket, count, busy, dom_ns, vmin, vmax, dom_name "
			       "FROM summaries WHERE unit_id = ?1 AND level = ?2 AND bucket "
			       "BETWEEN ?3 AND ?4 ORDER BY bucket", -1, &t->sums, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT bucket, count, busy, dom_ns, vmin, vmax, dom_name "
			       "FROM summaries WHERE unit_id = ?1 AND level = ?2 ORDER BY bucket",
			       -1, &t->suml, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT s FROM strings WHERE id = ?1", -1, &t->str, NULL))
		return -1;
#undef EV_COLS
	return 0;
}

static struct tl_name *
tl_name_slot(struct tl *t, uint32_t id)
{
	size_t i;

	for (i = (id * 2654435761u) & (t->ncap - 1); t->names[i].id && t->names[i].id != id;
	     i = (i + 1) & (t->ncap - 1))
		;
	return &t->names[i];
}

/* Append the JSON of string id @id (null for 0 or a missing string). */
static void
tl_name(struct tl *t, uint32_t id)
{
	struct tl_name *n;
	size_t mark;
	char *text;

	if (!id) {
		tc_jw_lit(t->w, "null");
		return;
	}
	if (t->nn * 2 >= t->ncap) {
		struct tl_name *old = t->names;
		size_t ocap = t->ncap;

		t->ncap = ocap ? ocap * 2 : 256;
		t->names = tc_xcalloc(t->ncap, sizeof(*t->names));
		for (size_t k = 0; k < ocap; k++)
			if (old[k].id)
				*tl_name_slot(t, old[k].id) = old[k];
		free(old);
	}
	n = tl_name_slot(t, id);
	if (n->id) {
		tc_jw_raw(t->w, n->text, n->len);
		return;
	}
	mark = t->w->len;
	sqlite3_bind_int64(t->str, 1, id);
	if (sqlite3_step(t->str) == SQLITE_ROW)
		tc_jw_strn(t->w, (const char *)sqlite3_column_text(t->str, 0),
			    (size_t)sqlite3_column_bytes(t->str, 0));
	else
		tc_jw_lit(t->w, "null");
	sqlite3_reset(t->str);
	text = tc_arena_strndup(&t->r->arena, t->w->p + mark, t->w->len - mark);
	n->id = id;
	n->len = (uint32_t)(t->w->len - mark);
	n->text = text;
	t->nn++;
}

/* The first event id in [@lo, @hi] of @unit (ids sorted by ts) whose ts is
 * >= @x; @hi + 1 when none.  One query with @ts_at (EV_LOWER_SQL): the
 * events module binary-searches the unit's chunks by time and decodes one. */
static int64_t
ev_lower(struct srv_rd_err *e, sqlite3_stmt *ts_at, int64_t unit, int64_t lo, int64_t hi,
	 int64_t x)
{
	int64_t id = hi + 1;

	if (lo > hi)
		return lo;
	sqlite3_bind_int64(ts_at, 1, unit);
	sqlite3_bind_int64(ts_at, 2, lo);
	sqlite3_bind_int64(ts_at, 3, hi);
	sqlite3_bind_int64(ts_at, 4, x);
	if (srv_rd_step(e, ts_at) == SQLITE_ROW)
		id = sqlite3_column_int64(ts_at, 0);
	sqlite3_reset(ts_at);
	return id;
}

/* One event of an events-mode answer, read before it is written. */
struct tl_ev {
	int64_t id, ts, dur, key;	/* key: index of the depth in the unit's depths */
	double value;
	uint32_t name;
	int depth, kind;
	bool has_value;
};

static void
tl_ev_read(struct tl_ev *e, sqlite3_stmt *st)
{
	e->id = sqlite3_column_int64(st, 0);
	e->ts = sqlite3_column_int64(st, 1);
	e->dur = sqlite3_column_int64(st, 2);
	e->depth = sqlite3_column_int(st, 3);
	e->kind = sqlite3_column_int(st, 4);
	e->has_value = sqlite3_column_type(st, 5) != SQLITE_NULL;
	e->value = e->has_value ? sqlite3_column_double(st, 5) : 0;
	e->name = (uint32_t)sqlite3_column_int64(st, 6);
}

static void
tl_ev_write(struct tc_jw *w, struct tl *t, const struct tl_ev *e)
{
	tc_jw_lit(w, "{\"id\":");
	tc_jw_i64(w, e->id);
	tc_jw_lit(w, ",\"ts\":");
	tc_jw_i64(w, e->ts);
	tc_jw_lit(w, ",\"dur\":");
	tc_jw_i64(w, e->dur);
	tc_jw_lit(w, ",\"depth\":");
	tc_jw_i64(w, e->depth);
	tc_jw_lit(w, ",\"name\":");
	tl_name(t, e->name);
	switch (e->kind) {
	case ST_EV_INSTANT:
		tc_jw_lit(w, ",\"kind\":\"instant\"}");
		break;
	case ST_EV_COUNTER:
		tc_jw_lit(w, ",\"kind\":\"counter\",\"value\":");
		if (e->has_value)
			tc_jw_real(w, e->value);
		else
			tc_jw_lit(w, "null");
		tc_jw_lit(w, "}");
		break;
	default:
		tc_jw_lit(w, ",\"kind\":\"slice\"}");
	}
}

/*
 * Append the unit's events in the window as a JSON array, or return false
 * when there are more than @px.  Per depth (ascending): the one reaching in
 * from before (only looked for when @before: some event of the unit starts
 * before the window), then those starting inside, which are the ids
 * [@lo, @hi) (a unit's events have consecutive ids in ts order): one scan
 * of the table, no index lookups per event.
 */
static bool
tl_events(struct tl *t, int64_t unit, bool counter, int64_t start, int64_t px, bool before,
	  int64_t lo, int64_t hi)
{
	struct tc_jw *w = t->w;
	struct tl_ev *ev, **order = NULL;
	int64_t *depth = NULL;
	size_t n = 0, nd = 0, dcap = 0, cap = (size_t)(hi - lo) + 16, k, *pos = NULL;
	bool ok = false;

	if (hi - lo > px)
		return false;
	ev = tc_xmalloc(cap * sizeof(*ev));
	sqlite3_bind_int64(t->depths, 1, unit);
	while (srv_rd_step(&t->err, t->depths) == SQLITE_ROW) {
		int64_t d = sqlite3_column_int64(t->depths, 0);

		if (nd == dcap) {
			dcap = dcap ? dcap * 2 : 16;
			depth = tc_xrealloc(depth, dcap * sizeof(*depth));
		}
		depth[nd++] = d;
		if (!before)
			continue;
		sqlite3_bind_int64(t->prev, 1, unit);
		sqlite3_bind_int64(t->prev, 2, d);
		sqlite3_bind_int64(t->prev, 3, start);
		if (srv_rd_step(&t->err, t->prev) == SQLITE_ROW) {
			int64_t ts = sqlite3_column_int64(t->prev, 1);
			int64_t dur = sqlite3_column_int64(t->prev, 2);

			/* a slice reaching into the window; for counters the
			 * sample in force at the start */
			if (ts + dur > start || (counter && d == 0)) {
				if (n == cap) {
					cap *= 2;
					ev = tc_xrealloc(ev, cap * sizeof(*ev));
				}
				tl_ev_read(&ev[n], t->prev);
				ev[n++].key = (int64_t)nd - 1;
			}
		}
		sqlite3_reset(t->prev);
		if ((int64_t)n + (hi - lo) > px)
			break;
	}
	sqlite3_reset(t->depths);
	if ((int64_t)n + (hi - lo) > px)
		goto out;
	if (hi > lo) {
		size_t nb = n;

		if (n + (size_t)(hi - lo) > cap) {
			cap = n + (size_t)(hi - lo);
			ev = tc_xrealloc(ev, cap * sizeof(*ev));
		}
		sqlite3_bind_int64(t->win, 1, lo);
		sqlite3_bind_int64(t->win, 2, hi);
		while (n < nb + (size_t)(hi - lo) && srv_rd_step(&t->err, t->win) == SQLITE_ROW) {
			size_t a = 0, b = nd;

			tl_ev_read(&ev[n], t->win);
			while (a < b) {	/* depths are ascending */
				size_t mid = a + (b - a) / 2;

				if (depth[mid] < ev[n].depth)
					a = mid + 1;
				else
					b = mid;
			}
			/* a depth unit_depths does not list is not shown */
			if (a < nd && depth[a] == ev[n].depth) {
				ev[n].key = (int64_t)a;
				n++;
			}
		}
		sqlite3_reset(t->win);
	}
	/* by depth, stable (counting sort): the one reaching in, then in ts order */
	pos = tc_xcalloc(nd + 1, sizeof(*pos));
	for (k = 0; k < n; k++)
		pos[ev[k].key + 1]++;
	for (k = 0; k < nd; k++)
		pos[k + 1] += pos[k];
	order = tc_xmalloc((n ? n : 1) * sizeof(*order));
	for (k = 0; k < n; k++)
		order[pos[ev[k].key]++] = &ev[k];
	tc_jw_lit(w, "[");
	for (k = 0; k < n; k++) {
		if (k)
			tc_jw_lit(w, ",");
		tl_ev_write(w, t, order[k]);
	}
	tc_jw_lit(w, "]");
	ok = true;
out:
	free(order);
	free(pos);
	free(ev);
	free(depth);
	return ok;
}

static int64_t
floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct tl_bucket {
	int64_t g;		/* group index */
	int64_t count, busy, dom_ns;
	double vmin, vmax;
	bool has_v;
	uint32_t name;
};

static void
tl_bucket_flush(struct tl *t, struct tl_bucket *b, int64_t origin, int64_t w, bool counter,
		bool *first)
{
	struct tc_jw *o = t->w;

	if (b->g == INT64_MIN)
		return;
	if (!*first)
		tc_jw_lit(o, ",");
	tc_jw_lit(o, "{\"ts\":");
	*first = false;
	tc_jw_i64(o, origin + b->g * w);
	tc_jw_lit(o, ",\"count\":");
	tc_jw_i64(o, b->count);
	tc_jw_lit(o, ",\"busy\":");
	tc_jw_i64(o, TC_MIN(b->busy, w));
	tc_jw_lit(o, ",\"name\":");
	tl_name(t, b->name);
	if (counter) {
		tc_jw_lit(o, ",\"vmin\":");
		if (b->has_v)
			tc_jw_real(o, b->vmin);
		else
			tc_jw_lit(o, "null");
		tc_jw_lit(o, ",\"vmax\":");
		if (b->has_v)
			tc_jw_real(o, b->vmax);
		else
			tc_jw_lit(o, "null");
	}
	tc_jw_lit(o, "}");
	b->g = INT64_MIN;
}

/* Fold summaries row @row into group bucket @cur (k level buckets a group). */
static void
tl_bucket_add(struct tl *t, struct tl_bucket *cur, const struct srv_sum *row, int64_t k,
	      int64_t origin, int64_t w, bool counter, bool *first)
{
	int64_t gi = k == 1 ? row->bucket : floordiv(row->bucket, k);

	if (gi != cur->g) {
		tl_bucket_flush(t, cur, origin, w, counter, first);
		*cur = (struct tl_bucket){ .g = gi, .dom_ns = -1 };
	}
	cur->count += row->count;
	cur->busy += row->busy;
	if (row->dom_ns > cur->dom_ns && row->dom_name > 0) {
		cur->name = row->dom_name;
		cur->dom_ns = row->dom_ns;
	}
	if (counter && row->has_v) {
		if (!cur->has_v || row->vmin < cur->vmin)
			cur->vmin = row->vmin;
		if (!cur->has_v || row->vmax > cur->vmax)
			cur->vmax = row->vmax;
		cur->has_v = true;
	}
}

/* Append "bucket_ns":W,"buckets":[...] for the unit: one range scan of the
 * summary level that fits px. */
static void
tl_buckets(struct tl *t, struct srv_pool_conn *c, int64_t unit, bool counter, int64_t start,
	   int64_t end, int64_t px)
{
	int64_t span = end - start, target = (span + px - 1) / px, g, k, w, b0, b1;
	int level = 0, maxlevel = 0;
	struct tl_bucket cur = { .g = INT64_MIN };
	const struct srv_sums *lvl = NULL;
	bool first = true;

	/* a unit's lowest level follows its own density (store/st-finish.c) */
	sqlite3_bind_int64(t->maxlevel, 1, unit);
	if (srv_rd_step(&t->err, t->maxlevel) == SQLITE_ROW) {
		level = sqlite3_column_int(t->maxlevel, 0);
		maxlevel = sqlite3_column_int(t->maxlevel, 1);
	}
	sqlite3_reset(t->maxlevel);
	/*
	 * The level of width bucket_ns << L with L the largest such that the
	 * width is <= span / px gives px..2px buckets; merging pairs gives the
	 * next level, so read that one directly when it is stored: at most px
	 * buckets, half the rows.  Above the highest stored level, merge k.
	 */
	while (level < maxlevel && level < 40 && (c->bucket_ns << level) < target)
		level++;
	g = c->bucket_ns << level;
	k = (target + g - 1) / g;
	if (k < 1)
		k = 1;
	w = g * k;
	b0 = floordiv(start - c->origin_ns, g);
	b1 = floordiv(end - 1 - c->origin_ns, g);
	tc_jw_lit(t->w, ",\"bucket_ns\":");
	tc_jw_i64(t->w, w);
	tc_jw_lit(t->w, ",\"buckets\":[");
	/* a level of at most SRV_SUMS_MAX_ROWS buckets over the trace is cached */
	if ((c->end_ns - c->start_ns) / g + 2 <= SRV_SUMS_MAX_ROWS)
		lvl = srv_sums_get(c->key, unit, level, t->suml);
	if (lvl) {
		size_t i = 0, hi = lvl->n;

		while (i < hi) {	/* the first bucket >= b0 */
			size_t mid = i + (hi - i) / 2;

			if (lvl->row[mid].bucket < b0)
				i = mid + 1;
			else
				hi = mid;
		}
		for (; i < lvl->n && lvl->row[i].bucket <= b1; i++)
			tl_bucket_add(t, &cur, &lvl->row[i], k, c->origin_ns, w, counter, &first);
		srv_sums_put(lvl);
	} else {
		struct srv_sum row;

		sqlite3_bind_int64(t->sums, 1, unit);
		sqlite3_bind_int(t->sums, 2, level);
		sqlite3_bind_int64(t->sums, 3, b0);
		sqlite3_bind_int64(t->sums, 4, b1);
		while (srv_rd_step(&t->err, t->sums) == SQLITE_ROW) {
			srv_sums_read(&row, t->sums);
			tl_bucket_add(t, &cur, &row, k, c->origin_ns, w, counter, &first);
		}
	}
	tl_bucket_flush(t, &cur, c->origin_ns, w, counter, &first);
	sqlite3_reset(t->sums);
	tc_jw_lit(t->w, "]");
}

/* One UNITWIN object of the answer. */
static void
tl_unit(struct tl *t, struct srv_pool_conn *c, const struct unit_list *ul, size_t i,
	int64_t start, int64_t end, int64_t px)
{
	struct tc_jw *w = t->w;
	int64_t unit = ul->id[i], first = ul->first[i], last = ul->last[i], lo = 0, hi = 0;
	bool counter = ul->kind[i] == ST_UNIT_COUNTER, before = false;

	if (first > 0 && last >= first) {
		/* events of a unit have consecutive ids in ts order */
		lo = ev_lower(&t->err, t->ts_at, unit, first, last, start);
		hi = lo > last ? lo : ev_lower(&t->err, t->ts_at, unit, lo, last, end);
		before = lo > first;
	}
	tc_jw_lit(w, "{\"id\":");
	tc_jw_i64(w, unit);
	if (hi - lo <= px || c->bucket_ns <= 0) {
		size_t mark = w->len;

		tc_jw_lit(w, ",\"mode\":\"events\",\"events\":");
		if (tl_events(t, unit, counter, start, px, before, lo, hi))
			goto done;
		if (c->bucket_ns <= 0) {	/* no summaries: no events */
			tc_jw_lit(w, "[]");
			goto done;
		}
		/* px + 1 with the slices reaching in: buckets after all */
		w->len = mark;
		w->p[mark] = 0;
	}
	tc_jw_lit(w, ",\"mode\":\"buckets\"");
	tl_buckets(t, c, unit, counter, start, end, px);
done:
	tc_jw_lit(w, "}");
}

static enum MHD_Result
api_timeline(struct srv_req *r, struct srv_pool_conn *c)
{
	int64_t start, end, px = SRV_PX_DEFAULT;
	struct unit_list ul;
	struct tl t = { .r = r };
	struct tc_jw w = { 0 };
	const char *pxs = srv_arg(r, "px"), *us = srv_arg(r, "units");
	char *key, *text;
	size_t len = 0;
	enum MHD_Result ret;

	if (pxs && *pxs) {
		if (tc_parse_i64(pxs, &px) < 0 || px < 1) {
			srv_reply_error(r, 400, "bad_param", "px must be a positive integer");
			goto put;
		}
		if (px > SRV_PX_MAX)
			px = SRV_PX_MAX;	/* clamped; the answer says which */
	}
	if (window_get(r, c, &start, &end) < 0)
		goto put;
	key = tc_arena_alloc(&r->arena, ST_ID_LEN + 80 + (us ? strlen(us) : 0));
	sprintf(key, "%s|%lld|%lld|%lld|%s", c->key, (long long)start, (long long)end,
		(long long)px, us ? us : "");
	text = srv_cache_get(&r->srv->cache, key, &len);
	if (text) {
		ret = srv_reply_text(r, 200, text, len);
		free(text);
		srv_pool_put(r->srv, c);
		return ret;
	}
	/* one read transaction: not one lock, journal check and header read per statement */
	st_read_begin(c->db);
	if (unit_list_get(r, c, &ul) < 0) {
		st_read_end(c->db);
		goto put;
	}
	if (tl_prepare(c->db, &t) < 0) {
		tl_free(&t);
		srv_unit_list_free(&ul);
		st_read_end(c->db);
		return db_error(r, c);
	}
	t.w = &w;
	tc_jw_grow(&w, 64 * 1024);
	tc_jw_lit(&w, "{\"start\":");
	tc_jw_i64(&w, start);
	tc_jw_lit(&w, ",\"end\":");
	tc_jw_i64(&w, end);
	tc_jw_lit(&w, ",\"px\":");
	tc_jw_i64(&w, px);
	tc_jw_lit(&w, ",\"units\":[");
	for (size_t i = 0; i < ul.n; i++) {
		if (i)
			tc_jw_lit(&w, ",");
		tl_unit(&t, c, &ul, i, start, end, px);
	}
	tc_jw_lit(&w, "]}");
	tl_free(&t);
	st_read_end(c->db);
	srv_unit_list_free(&ul);
	srv_pool_put(r->srv, c);
	if (t.err.rc != SQLITE_OK) {	/* a damaged store: no partial window */
		ret = srv_reply_error(r, 500, "internal", "trace store: %s", t.err.msg);
	} else {
		srv_cache_put(&r->srv->cache, key, w.p, w.len);
		ret = srv_reply_text(r, 200, w.p, w.len);
	}
	tc_jw_free(&w);
	return ret;
put:
	srv_pool_put(r->srv, c);
	return MHD_YES;
}

/* ---- one event ---- */

static int
eid_get(struct srv_req *r, const char *rest, int64_t *eid)
{
	if (!rest || !*rest || strchr(rest, '/') || tc_parse_i64(rest, eid) < 0 || *eid < 1) {
		srv_reply_error(r, 400, "bad_param", "the event id must be a positive integer");
		return -1;
	}
	return 0;
}

static json_t *
empty_edges(void)
{
	return json_pack("{s:{s:[], s:[], s:[], s:[]}, s:{s:[], s:[], s:[], s:[]}}",
			 "in", "flow", "order", "anti", "output",
			 "out", "flow", "order", "anti", "output");
}

static enum MHD_Result
api_event(struct srv_req *r, struct srv_pool_conn *c, const char *rest)
{
	sqlite3_stmt *st = NULL;
	struct tc_err err = { 0 };
	struct srv_rd_err rerr = { 0 };
	int64_t eid;
	json_t *e, *args = NULL, *edges;
	const char *atext;
	int kind;

	if (eid_get(r, rest, &eid) < 0) {
		srv_pool_put(r->srv, c);
		return MHD_YES;
	}
	st_read_begin(c->db);
	if (sqlite3_prepare_v2(c->db,
			       "SELECT e.id, e.unit, u.name, u.device_id, e.ts, e.dur, e.depth, "
			       "e.kind, sn.s, sc.s, e.value, e.args, dv.name FROM events e "
			       "JOIN units u ON u.id = e.unit "
			       "JOIN devices dv ON dv.id = u.device_id "
			       "LEFT JOIN strings sn ON sn.id = e.name "
			       "LEFT JOIN strings sc ON sc.id = e.cat WHERE e.id = ?1",
			       -1, &st, NULL)) {
		st_read_end(c->db);
		return db_error(r, c);
	}
	sqlite3_bind_int64(st, 1, eid);
	if (srv_rd_step(&rerr, st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		st_read_end(c->db);
		srv_pool_put(r->srv, c);
		if (rerr.rc != SQLITE_OK)	/* its chunk does not read: not "no event" */
			return srv_reply_error(r, 500, "internal", "trace store: %s", rerr.msg);
		return srv_reply_error(r, 404, "not_found", "no event %lld", (long long)eid);
	}
	kind = sqlite3_column_int(st, 7);
	e = json_object();
	json_object_set_new(e, "id", json_integer(eid));
	json_object_set_new(e, "unit", json_integer(sqlite3_column_int64(st, 1)));
	json_object_set_new(e, "unit_name", srv_col_str(st, 2));
	json_object_set_new(e, "device", json_integer(sqlite3_column_int64(st, 3)));
	json_object_set_new(e, "device_name",
			    srv_col_str(st, 12));
	json_object_set_new(e, "ts", json_integer(sqlite3_column_int64(st, 4)));
	json_object_set_new(e, "dur", json_integer(sqlite3_column_int64(st, 5)));
	json_object_set_new(e, "depth", json_integer(sqlite3_column_int64(st, 6)));
	json_object_set_new(e, "kind", json_string(ev_kind_name(kind)));
	json_object_set_new(e, "name", srv_col_str(st, 8));
	json_object_set_new(e, "cat", srv_col_str(st, 9));
	json_object_set_new(e, "value", sqlite3_column_type(st, 10) == SQLITE_NULL ? json_null() :
			    json_real(sqlite3_column_double(st, 10)));
	atext = (const char *)sqlite3_column_text(st, 11);
	if (atext) {
		args = json_loads(atext, 0, NULL);
		if (!json_is_object(args)) {
			json_decref(args);
			args = json_pack("{s:o}", "_raw", tc_json_str(atext));
		}
	}
	json_object_set_new(e, "args", args ? args : json_object());
	sqlite3_finalize(st);
	edges = deps_event_edges(c->db, eid, &err);
	if (!edges) {
		edges = empty_edges();
		json_object_set_new(e, "edges_error", tc_json_str(err.msg));
	}
	json_object_set_new(e, "edges", edges);
	st_read_end(c->db);
	srv_pool_put(r->srv, c);
	return srv_reply_json(r, 200, e);
}

/* ?kinds=flow,order -> mask; -1 replied. */
static int
kinds_get(struct srv_req *r, unsigned *mask)
{
	const char *arg = srv_arg(r, "kinds");

	*mask = DEPS_KINDS_ALL;
	if (!arg || !*arg || !strcmp(arg, "all"))
		return 0;
	*mask = 0;
	for (const char *p = arg; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char tok[16];
		int k;

		if (n == 0 || n >= sizeof(tok))
			goto bad;
		memcpy(tok, p, n);
		tok[n] = 0;
		k = st_edge_kind_parse(tok);
		if (k < 0 || k >= ST_EDGE_NKINDS)
			goto bad;
		*mask |= 1u << k;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
bad:
	srv_reply_error(r, 400, "bad_param", "kinds must be a comma-separated list of flow, "
			"order, anti, output");
	return -1;
}

/*
 * Whether event @eid exists: answered here (404, or 500 when its chunk does
 * not read) and false when not, so that a damaged chunk is not "no event".
 */
static bool
event_exists(struct srv_req *r, sqlite3 *db, int64_t eid)
{
	sqlite3_stmt *st = NULL;
	struct srv_rd_err err = { 0 };
	bool ok = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM events WHERE id = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_int64(st, 1, eid);
		ok = srv_rd_step(&err, st) == SQLITE_ROW;
	} else {
		err.rc = SQLITE_ERROR;
		snprintf(err.msg, sizeof(err.msg), "%s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	if (err.rc != SQLITE_OK)
		srv_reply_error(r, 500, "internal", "trace store: %s", err.msg);
	else if (!ok)
		srv_reply_error(r, 404, "not_found", "no event %lld", (long long)eid);
	return ok;
}

/*
 * Answer a dependency query: its JSON text (@text, @len bytes, malloc'd,
 * freed here), or when NULL the error in @err.  Gives the connection back.
 */
static enum MHD_Result
deps_reply(struct srv_req *r, struct srv_pool_conn *c, char *text, size_t len,
	   struct tc_err *err)
{
	enum MHD_Result ret;

	st_read_end(c->db);
	srv_pool_put(r->srv, c);
	if (!text && err->code == -ENOENT)
		return srv_reply_error(r, 404, "not_found", "%s", err->msg);
	if (!text)
		return srv_reply_error(r, 500, "deps_failed", "%s", err->msg[0] ? err->msg :
				       "dependency query failed");
	ret = srv_reply_text(r, 200, text, len);
	free(text);
	return ret;
}

static enum MHD_Result
api_deps(struct srv_req *r, struct srv_pool_conn *c, const char *rest)
{
	struct tc_err err = { 0 };
	int64_t eid, depth = 8, budget = 10000;
	unsigned kinds;
	const char *d = srv_arg(r, "dir");
	int dir = DEPS_DIR_IN | DEPS_DIR_OUT;
	size_t len;
	char *text;

	if (eid_get(r, rest, &eid) < 0 || kinds_get(r, &kinds) < 0 ||
	    srv_arg_i64(r, "depth", &depth, 1, 256) < 0 ||
	    srv_arg_i64(r, "budget", &budget, 1, 1000000) < 0)
		goto put;
	if (d && *d) {
		if (!strcmp(d, "in"))
			dir = DEPS_DIR_IN;
		else if (!strcmp(d, "out"))
			dir = DEPS_DIR_OUT;
		else if (strcmp(d, "both")) {
			srv_reply_error(r, 400, "bad_param", "dir must be in, out or both");
			goto put;
		}
	}
	if (!event_exists(r, c->db, eid))
		goto put;
	st_read_begin(c->db);	/* a chain runs thousands of lookups */
	text = deps_chain_text(c->db, eid, kinds, dir, (int)depth, (int)budget, &len, &err);
	return deps_reply(r, c, text, len, &err);
put:
	srv_pool_put(r->srv, c);
	return MHD_YES;
}

static enum MHD_Result
api_critical(struct srv_req *r, struct srv_pool_conn *c)
{
	struct tc_err err = { 0 };
	int64_t start, end, eid = 0, max_hops = DEPS_CP_HOPS, budget = DEPS_CP_BUDGET;
	unsigned kinds;
	size_t len;
	char *text;

	if (window_get(r, c, &start, &end) < 0 || kinds_get(r, &kinds) < 0 ||
	    srv_arg_i64(r, "event", &eid, 0, INT64_MAX) < 0 ||
	    srv_arg_i64(r, "max_hops", &max_hops, 1, DEPS_CP_HOPS_MAX) < 0 ||
	    srv_arg_i64(r, "budget", &budget, 1, DEPS_CP_BUDGET_MAX) < 0)
		goto put;
	if (eid && !event_exists(r, c->db, eid))
		goto put;
	st_read_begin(c->db);
	text = deps_critical_path_text(c->db, eid, start, end, kinds, (int)max_hops, (int)budget,
				       &len, &err);
	return deps_reply(r, c, text, len, &err);
put:
	srv_pool_put(r->srv, c);
	return MHD_YES;
}

/* ---- summary ---- */

struct sum_row {
	uint32_t name;		/* 0: empty slot */
	int64_t count, total, max;
};

struct sum_map {
	struct sum_row *rows;
	size_t cap, n;
	bool has_zero;		/* events with name id 0 */
	struct sum_row zero;
};

static struct sum_row *
sum_slot(struct sum_map *m, uint32_t name)
{
	size_t i;

	if (name == 0) {
		m->has_zero = true;
		return &m->zero;
	}
	if (m->n * 2 >= m->cap) {
		struct sum_row *old = m->rows;
		size_t ocap = m->cap;

		m->cap = m->cap ? m->cap * 2 : 256;
		m->rows = tc_xcalloc(m->cap, sizeof(*m->rows));
		m->n = 0;
		for (size_t k = 0; k < ocap; k++)
			if (old[k].name)
				*sum_slot(m, old[k].name) = old[k];
		free(old);
	}
	for (i = (name * 2654435761u) & (m->cap - 1); m->rows[i].name && m->rows[i].name != name;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->rows[i].name) {
		m->rows[i].name = name;
		m->n++;
	}
	return &m->rows[i];
}

static int
sum_cmp(const void *a, const void *b)
{
	const struct sum_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void
sum_add(struct sum_map *m, uint32_t name, int64_t count, int64_t total, int64_t max)
{
	struct sum_row *s = sum_slot(m, name);

	s->count += count;
	s->total += total;
	if (max > s->max)
		s->max = max;
}

/* The events of one unit starting in the window, counted by sum_event(). */
struct sum_scan {
	struct sum_map *m;
	const int64_t *depth;	/* the unit's depths in unit_depths */
	size_t nd;
	size_t dlast;		/* the index in @depth that matched last */
	int64_t next;		/* the id after the last one counted */
};

static void
sum_event(struct sum_scan *s, uint32_t name, int64_t dur, int d)
{
	/* a depth unit_depths does not list is not counted */
	if (s->dlast >= s->nd || s->depth[s->dlast] != d) {
		for (s->dlast = 0; s->dlast < s->nd && s->depth[s->dlast] != d; s->dlast++)
			;
		if (s->dlast == s->nd)
			return;
	}
	sum_add(s->m, name, 1, dur, dur);
}

static int
sum_scan_ev(void *arg, int64_t id, const struct st_ev_brief *ev)
{
	struct sum_scan *s = arg;

	sum_event(s, ev->name, ev->dur, ev->depth);
	s->next = id + 1;
	return 0;
}

/*
 * Per name count, total and max duration of the events overlapping
 * [start, end) (a zero-length one at start counts): those starting inside
 * are the ids [lo, hi) of the unit, read in one scan of the table; those
 * reaching in from before come per depth from the index, no further back
 * than the depth's longest event.
 */
static enum MHD_Result
api_summary(struct srv_req *r, struct srv_pool_conn *c)
{
	int64_t start, end, limit = 500;
	struct unit_list ul = { 0 };
	struct sum_map m = { 0 };
	sqlite3_stmt *dq = NULL, *eq = NULL, *nq = NULL, *ts_at = NULL, *scan = NULL;
	struct tc_jw w = { 0 };
	struct st_conn *sc;
	struct sum_scan ss;
	const char *sql_only = getenv("NX_SUMMARY_SQL"), *us = srv_arg(r, "units");
	size_t k = 0, len = 0;
	struct srv_rd_err err = { 0 };
	char *key, *text;

	if (window_get(r, c, &start, &end) < 0 ||
	    srv_arg_i64(r, "limit", &limit, 1, 100000) < 0)
		goto put;
	/* a ready trace's answer never changes: a whole-trace summary is asked again */
	key = tc_arena_alloc(&r->arena, ST_ID_LEN + 100 + (us ? strlen(us) : 0));
	sprintf(key, "%s|summary|%lld|%lld|%lld|%s", c->key, (long long)start, (long long)end,
		(long long)limit, us ? us : "");
	text = srv_cache_get(&r->srv->cache, key, &len);
	if (text) {
		srv_reply_text(r, 200, text, len);
		free(text);
		goto put;
	}
	st_read_begin(c->db);
	if (unit_list_get(r, c, &ul) < 0)
		goto out;
	if (sqlite3_prepare_v2(c->db, "SELECT depth, max_dur FROM unit_depths WHERE unit_id = ?1",
			       -1, &dq, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT name, COUNT(*), SUM(dur), MAX(dur) FROM events "
			       "WHERE unit = ?1 AND depth = ?2 AND ts >= ?3 AND ts < ?4 AND "
			       "ts_end > ?4 GROUP BY name", -1, &eq, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT name, dur, depth FROM events WHERE id >= ?1 AND "
			       "id < ?2", -1, &scan, NULL) ||
	    sqlite3_prepare_v2(c->db, EV_LOWER_SQL, -1, &ts_at, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT s FROM strings WHERE id = ?1", -1, &nq, NULL)) {
		srv_reply_error(r, 500, "internal", "trace store: %s", sqlite3_errmsg(c->db));
		goto out;
	}
	/* NX_SUMMARY_SQL=1: SQL only, the path damaged stores take (the tests compare) */
	sc = sql_only && !strcmp(sql_only, "1") ? NULL : st_conn_of(c->db);
	for (size_t i = 0; i < ul.n && err.rc == SQLITE_OK; i++) {
		int64_t first = ul.first[i], last = ul.last[i], lo, hi;
		int64_t *depth = NULL;
		size_t nd = 0, dcap = 0;

		if (first <= 0 || last < first)
			continue;
		lo = ev_lower(&err, ts_at, ul.id[i], first, last, start);
		hi = lo > last ? lo : ev_lower(&err, ts_at, ul.id[i], lo, last, end);
		sqlite3_reset(dq);
		sqlite3_bind_int64(dq, 1, ul.id[i]);
		while (srv_rd_step(&err, dq) == SQLITE_ROW) {
			int64_t d = sqlite3_column_int64(dq, 0);
			int64_t maxdur = sqlite3_column_int64(dq, 1);

			if (nd == dcap) {
				dcap = dcap ? dcap * 2 : 16;
				depth = tc_xrealloc(depth, dcap * sizeof(*depth));
			}
			depth[nd++] = d;
			if (lo == first || maxdur <= 0)
				continue;	/* nothing can reach in from before */
			sqlite3_reset(eq);
			sqlite3_bind_int64(eq, 1, ul.id[i]);
			sqlite3_bind_int64(eq, 2, d);
			sqlite3_bind_int64(eq, 3, start - maxdur);
			sqlite3_bind_int64(eq, 4, start);
			while (srv_rd_step(&err, eq) == SQLITE_ROW)
				sum_add(&m, (uint32_t)sqlite3_column_int64(eq, 0),
					sqlite3_column_int64(eq, 1), sqlite3_column_int64(eq, 2),
					sqlite3_column_int64(eq, 3));
			if (err.rc != SQLITE_OK)
				break;
		}
		sqlite3_reset(eq);
		/* the store's chunks read directly; SQL from where that stopped */
		ss = (struct sum_scan){ .m = &m, .depth = depth, .nd = nd, .next = lo };
		if (sc && hi > lo && err.rc == SQLITE_OK)
			st_conn_scan(sc, lo, hi, sum_scan_ev, &ss);
		sqlite3_reset(scan);
		sqlite3_bind_int64(scan, 1, ss.next);
		sqlite3_bind_int64(scan, 2, hi);
		if (hi > ss.next && err.rc == SQLITE_OK)
			while (srv_rd_step(&err, scan) == SQLITE_ROW)
				sum_event(&ss, (uint32_t)sqlite3_column_int64(scan, 0),
					  sqlite3_column_int64(scan, 1),
					  sqlite3_column_int(scan, 2));
		free(depth);
	}
	if (err.rc != SQLITE_OK) {	/* a damaged store: no partial sums */
		srv_reply_error(r, 500, "internal", "trace store: %s", err.msg);
		goto out;
	}
	/* compact and sort */
	for (size_t i = 0; i < m.cap; i++)
		if (m.rows[i].name)
			m.rows[k++] = m.rows[i];
	if (m.has_zero) {
		m.rows = tc_xrealloc(m.rows, (k + 1) * sizeof(*m.rows));
		m.rows[k++] = m.zero;
	}
	if (k)
		qsort(m.rows, k, sizeof(*m.rows), sum_cmp);
	tc_jw_lit(&w, "{\"rows\":[");
	for (size_t i = 0; i < k && (int64_t)i < limit; i++) {
		struct sum_row *s = &m.rows[i];
		const char *name = NULL;

		sqlite3_reset(nq);
		sqlite3_bind_int64(nq, 1, s->name);
		if (s->name && sqlite3_step(nq) == SQLITE_ROW)
			name = (const char *)sqlite3_column_text(nq, 0);
		if (i)
			tc_jw_lit(&w, ",");
		tc_jw_lit(&w, "{\"name\":");
		tc_jw_str(&w, name ? name : "");
		tc_jw_lit(&w, ",\"count\":");
		tc_jw_i64(&w, s->count);
		tc_jw_lit(&w, ",\"total_ns\":");
		tc_jw_i64(&w, s->total);
		tc_jw_lit(&w, ",\"mean_ns\":");
		tc_jw_real(&w, s->count ? (double)s->total / (double)s->count : 0);
		tc_jw_lit(&w, ",\"max_ns\":");
		tc_jw_i64(&w, s->max);
		tc_jw_lit(&w, "}");
	}
	tc_jw_lit(&w, "],\"names\":");
	tc_jw_i64(&w, (int64_t)k);
	tc_jw_lit(&w, ",\"start\":");
	tc_jw_i64(&w, start);
	tc_jw_lit(&w, ",\"end\":");
	tc_jw_i64(&w, end);
	tc_jw_lit(&w, "}");
	srv_cache_put(&r->srv->cache, key, w.p, w.len);
	srv_reply_text(r, 200, w.p, w.len);
out:
	sqlite3_finalize(dq);
	sqlite3_finalize(eq);
	sqlite3_finalize(nq);
	sqlite3_finalize(ts_at);
	sqlite3_finalize(scan);
	st_read_end(c->db);
	tc_jw_free(&w);
	free(m.rows);
	srv_unit_list_free(&ul);
put:
	srv_pool_put(r->srv, c);
	return MHD_YES;
}

enum MHD_Result
srv_trace_dispatch(struct srv_req *r, const char *id, const char *what, const char *rest)
{
	struct srv_pool_conn *c;
	bool takes_eid = !strcmp(what, "events") || !strcmp(what, "deps");

	if (!takes_eid && rest)
		return srv_reply_error(r, 404, "not_found", "no such endpoint");
	c = trace_conn(r, id);
	if (!c)
		return MHD_YES;
	if (!strcmp(what, "units"))
		return api_units(r, c);
	if (!strcmp(what, "timeline"))
		return api_timeline(r, c);
	if (!strcmp(what, "events"))
		return api_event(r, c, rest);
	if (!strcmp(what, "deps"))
		return api_deps(r, c, rest);
	if (!strcmp(what, "critical-path"))
		return api_critical(r, c);
	if (!strcmp(what, "search"))
		return srv_search(r, c);
	if (!strcmp(what, "summary"))
		return api_summary(r, c);
	srv_pool_put(r->srv, c);
	return srv_reply_error(r, 404, "not_found", "no such endpoint");
}
