/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-query.c - the read side of dependencies: the edges of one
 * event, and the lookups it shares with chains (deps/deps-chain.c) and the
 * critical path (deps/deps-critical.c) through deps-query.h.  Stored edges
 * come from the store's direct reads, or else the edges table (lookups by
 * src or dst); program-order edges are derived here, at
 * query time: on an in-order unit (engine, queue, stream, host thread) a
 * slice depends on its previous sibling, the slice before it at its depth
 * within the same parent (at the top level, the previous top-level slice of
 * the unit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-json.h"
#include "common/tc-jw.h"
#include "common/tc-sort.h"
#include "deps/deps-query.h"

#define EDGES_LIST_MAX 1000	/* per direction in deps_event_edges() */

static const char ev_sql[] =
	"SELECT v.id, v.unit, v.ts, v.dur, v.depth, v.kind, s.s FROM events v "
	"LEFT JOIN strings s ON s.id = v.name WHERE v.id = ?1";
static const char unit_sql[] = "SELECT kind, max_depth FROM units WHERE id = ?1";
static const char name_sql[] = "SELECT s FROM strings WHERE id = ?1";
/* The slice of depth ?2 that starts last at or before ?3 (a candidate parent). */
static const char parent_sql[] =
	"SELECT id FROM events WHERE unit = ?1 AND depth = ?2 AND ts <= ?3 AND id < ?4 "
	"AND kind = 0 ORDER BY ts DESC, id DESC LIMIT 1";
/* Siblings: same unit and depth, starting in [?3, ?4] (the parent's span). */
static const char prev_sql[] =
	"SELECT id FROM events WHERE unit = ?1 AND depth = ?2 AND ts >= ?3 AND ts <= ?4 "
	"AND id < ?5 AND kind = 0 ORDER BY ts DESC, id DESC LIMIT 1";
static const char next_sql[] =
	"SELECT id FROM events WHERE unit = ?1 AND depth = ?2 AND ts >= ?3 AND ts <= ?4 "
	"AND id > ?5 AND kind = 0 ORDER BY ts, id LIMIT 1";
static const char in_sql[] =
	"SELECT e.src, e.kind, e.label FROM edges e WHERE e.dst = ?1 "
	"AND ((1 << e.kind) & ?2) != 0 ORDER BY e.kind, e.src LIMIT ?3";
static const char out_sql[] =
	"SELECT e.dst, e.kind, e.label FROM edges e WHERE e.src = ?1 "
	"AND ((1 << e.kind) & ?2) != 0 ORDER BY e.kind, e.dst LIMIT ?3";
/* The label of the first edge ?2 -> ?1 of kind ?3. */
static const char label_sql[] =
	"SELECT label FROM edges WHERE dst = ?1 AND src = ?2 AND kind = ?3 LIMIT 1";

int
dq_prep(struct dq *q, sqlite3_stmt **st, const char *sql)
{
	if (*st) {
		sqlite3_reset(*st);
		sqlite3_clear_bindings(*st);
		return 0;
	}
	if (sqlite3_prepare_v2(q->db, sql, -1, st, NULL) != SQLITE_OK)
		return tc_err_set(q->err, -EIO, "dependency query: %s", sqlite3_errmsg(q->db));
	return 0;
}

int
dq_step(struct dq *q, sqlite3_stmt *st)
{
	int s = sqlite3_step(st);

	if (s != SQLITE_ROW && s != SQLITE_DONE && !q->io_rc) {
		q->io_rc = -EIO;
		snprintf(q->io_msg, sizeof(q->io_msg), "%s", sqlite3_errmsg(q->db));
	}
	return s;
}

int
dq_done(struct dq *q)
{
	sqlite3_finalize(q->ev);
	sqlite3_finalize(q->unit);
	sqlite3_finalize(q->name);
	free(q->ends);
	free(q->names);
	tc_buf_free(&q->text);
	sqlite3_finalize(q->parent);
	sqlite3_finalize(q->prev);
	sqlite3_finalize(q->next);
	sqlite3_finalize(q->in);
	sqlite3_finalize(q->out);
	sqlite3_finalize(q->pred);
	sqlite3_finalize(q->label);
	if (q->io_rc)
		return tc_err_set(q->err, q->io_rc, "dependency query: %s", q->io_msg);
	return 0;
}

/*
 * Fill @ev's unit_kind and unit_depth from its unit, through a small cache
 * (a query meets few units, a walk the same ones over and over).  Return:
 * 0, or -ENOENT when the unit is missing, with q->err set.
 */
static int
dq_unit(struct dq *q, struct dq_ev *ev)
{
	struct dq_unit *u = &q->units[(uint64_t)ev->unit % DQ_UNITS];
	int rc, s;

	if (!u->known || u->id != ev->unit) {
		if ((rc = dq_prep(q, &q->unit, unit_sql)))
			return rc;
		sqlite3_bind_int64(q->unit, 1, ev->unit);
		s = dq_step(q, q->unit);
		if (s == SQLITE_ROW)
			*u = (struct dq_unit){ .known = true, .id = ev->unit,
					       .kind = sqlite3_column_int(q->unit, 0),
					       .max_depth = sqlite3_column_int(q->unit, 1) };
		sqlite3_reset(q->unit);
		if (s != SQLITE_ROW)
			return tc_err_set(q->err, -ENOENT, "no event %lld in this trace",
					  (long long)ev->id);
	}
	ev->unit_kind = u->kind;
	ev->unit_depth = u->max_depth;
	return 0;
}

struct st_conn *
dq_conn(struct dq *q)
{
	if (!q->sc_tried) {
		const char *sql_only = getenv("NX_DEPS_SQL");

		/* NX_DEPS_SQL=1: SQL only, the path damaged stores take (the tests compare) */
		q->sc = sql_only && !strcmp(sql_only, "1") ? NULL : st_conn_of(q->db);
		q->sc_tried = true;
	}
	return q->sc;
}

/* A name read, cached: most traces have few names, and a chain lists thousands of events. */
struct dq_name {
	uint32_t id;
	bool known;
	uint16_t len;		/* of text */
	char text[sizeof(((struct dq_ev *)0)->name)];
};

/* @c's text into @buf of @len bytes (cut to fit, NUL-terminated): a copy per event read. */
static void
dq_name_copy(const struct dq_name *c, char *buf, size_t len)
{
	size_t n = TC_MIN((size_t)c->len, len - 1);

	memcpy(buf, c->text, n);
	buf[n] = 0;
}

/* Name text @name into @buf ("" when the strings table has none). */
static int
dq_name(struct dq *q, uint32_t name, char *buf, size_t len)
{
	struct dq_name *c;
	const unsigned char *t;
	int rc;

	if (!q->names)
		q->names = tc_xcalloc(DQ_NAMES, sizeof(*q->names));
	c = &q->names[name % DQ_NAMES];
	if (c->known && c->id == name) {
		dq_name_copy(c, buf, len);
		return 0;
	}
	if ((rc = dq_prep(q, &q->name, name_sql)))
		return rc;
	sqlite3_bind_int64(q->name, 1, name);
	t = dq_step(q, q->name) == SQLITE_ROW ? sqlite3_column_text(q->name, 0) : NULL;
	snprintf(c->text, sizeof(c->text), "%s", t ? (const char *)t : "");
	c->len = (uint16_t)strlen(c->text);
	c->id = name;
	c->known = true;
	sqlite3_reset(q->name);
	dq_name_copy(c, buf, len);
	return 0;
}

/*
 * Event @id through the store's direct reads.  Return: 0, -ENOENT with
 * q->err set, or 1 when they cannot answer (SQL then will, or say why).
 */
static int
dq_event_direct(struct dq *q, int64_t id, struct dq_ev *ev)
{
	struct st_ev_brief b;
	int rc;

	if (!dq_conn(q))
		return 1;
	rc = st_conn_event(q->sc, id, &b);
	if (rc == -ENOENT)
		return tc_err_set(q->err, -ENOENT, "no event %lld in this trace", (long long)id);
	if (rc)
		return 1;
	/* field by field: a compound literal would clear all of the name */
	ev->id = id;
	ev->unit = b.unit;
	ev->ts = b.ts;
	ev->dur = b.dur;
	ev->depth = b.depth;
	ev->kind = b.kind;
	ev->unit_kind = ev->unit_depth = 0;
	ev->name[0] = 0;
	if (!q->no_names && (rc = dq_name(q, b.name, ev->name, sizeof(ev->name))))
		return rc;
	if ((rc = dq_unit(q, ev)))
		return rc;
	dq_ev_copy(&q->last, ev);
	q->last_named = !q->no_names;
	return 0;
}

/* Look up event @id; -ENOENT when absent. */
int
dq_event(struct dq *q, int64_t id, struct dq_ev *ev)
{
	const unsigned char *name;
	int rc;

	if (id && q->last.id == id && (q->last_named || q->no_names)) {
		dq_ev_copy(ev, &q->last);
		return 0;
	}
	if ((rc = dq_event_direct(q, id, ev)) <= 0)
		return rc;
	/* SQL only when the direct reads cannot answer: always with the name */
	if ((rc = dq_prep(q, &q->ev, ev_sql)))
		return rc;
	sqlite3_bind_int64(q->ev, 1, id);
	if (dq_step(q, q->ev) != SQLITE_ROW) {
		sqlite3_reset(q->ev);
		if (q->io_rc)	/* its chunk does not read: not "no event" */
			return tc_err_set(q->err, q->io_rc, "dependency query: %s", q->io_msg);
		return tc_err_set(q->err, -ENOENT, "no event %lld in this trace", (long long)id);
	}
	ev->id = sqlite3_column_int64(q->ev, 0);
	ev->unit = sqlite3_column_int64(q->ev, 1);
	ev->ts = sqlite3_column_int64(q->ev, 2);
	ev->dur = sqlite3_column_int64(q->ev, 3);
	ev->depth = sqlite3_column_int(q->ev, 4);
	ev->kind = sqlite3_column_int(q->ev, 5);
	name = sqlite3_column_text(q->ev, 6);
	snprintf(ev->name, sizeof(ev->name), "%s", name ? (const char *)name : "");
	sqlite3_reset(q->ev);
	if ((rc = dq_unit(q, ev)))
		return rc;
	dq_ev_copy(&q->last, ev);
	q->last_named = true;
	return 0;
}

bool
dq_in_order(const struct dq_ev *ev)
{
	return ev->kind == ST_EV_SLICE &&
	       (ev->unit_kind == ST_UNIT_ENGINE || ev->unit_kind == ST_UNIT_QUEUE ||
		ev->unit_kind == ST_UNIT_STREAM || ev->unit_kind == ST_UNIT_THREAD);
}

/* One id from @sql bound to (unit, depth, a, b, c); 0 when none. */
static int64_t
dq_one(struct dq *q, sqlite3_stmt **st, const char *sql, const struct dq_ev *ev, int depth,
      int64_t a, int64_t b, int64_t c)
{
	int64_t id = 0;

	if (dq_prep(q, st, sql)) {
		tc_err_clear(q->err);
		return 0;
	}
	sqlite3_bind_int64(*st, 1, ev->unit);
	sqlite3_bind_int(*st, 2, depth);
	sqlite3_bind_int64(*st, 3, a);
	sqlite3_bind_int64(*st, 4, b);
	if (sql != parent_sql)
		sqlite3_bind_int64(*st, 5, c);
	if (dq_step(q, *st) == SQLITE_ROW)
		id = sqlite3_column_int64(*st, 0);
	sqlite3_reset(*st);
	return id;
}

/*
 * The slice enclosing nested slice @ev on its unit into *@par: the last
 * slice one level up that starts before it, if it also contains it (a
 * slice that broke nesting sits deeper without a parent).  Return: whether
 * there is one.
 */
static bool
dq_parent(struct dq *q, const struct dq_ev *ev, struct dq_ev *par)
{
	int64_t id;

	if (ev->depth <= 0)
		return false;
	id = dq_one(q, &q->parent, parent_sql, ev, ev->depth - 1, ev->ts, ev->id, 0);
	if (!id || dq_event(q, id, par)) {
		tc_err_clear(q->err);
		return false;
	}
	return par->ts <= ev->ts && par->ts + par->dur >= ev->ts + ev->dur;
}

/*
 * The sibling before or (@after) after @ev on its unit, 0 when none:
 * siblings share the depth and the parent @par (NULL at the top level,
 * where every top-level slice of the unit is a sibling).
 */
static int64_t
dq_sibling(struct dq *q, const struct dq_ev *ev, const struct dq_ev *par, bool after)
{
	int64_t lo = par ? par->ts : INT64_MIN, hi = par ? par->ts + par->dur : INT64_MAX, id;
	struct dq_ev sib;

	if (!after) {
		/*
		 * Within a unit ids follow start times, so the sibling before
		 * is the slice of the largest smaller id at @ev's depth that
		 * starts within the parent: most often the id just before.
		 */
		if (ev->id > 1 && !dq_event(q, ev->id - 1, &sib) && sib.unit == ev->unit &&
		    sib.depth == ev->depth && sib.kind == ST_EV_SLICE && sib.ts >= lo &&
		    sib.ts <= ev->ts)
			return sib.id;
		tc_err_clear(q->err);
		return dq_one(q, &q->prev, prev_sql, ev, ev->depth, lo, ev->ts, ev->id);
	}
	/* the same for the sibling after: most often the id just after */
	if (!dq_event(q, ev->id + 1, &sib) && sib.unit == ev->unit && sib.depth == ev->depth &&
	    sib.kind == ST_EV_SLICE && sib.ts >= ev->ts && sib.ts <= hi) {
		id = sib.id;
	} else {
		tc_err_clear(q->err);
		id = dq_one(q, &q->next, next_sql, ev, ev->depth, ev->ts, hi, ev->id);
	}
	if (id && par && (dq_event(q, id, &sib) || sib.ts + sib.dur > hi)) {
		tc_err_clear(q->err);
		return 0;	/* starts in the parent but does not end there */
	}
	return id;
}

int64_t
dq_po(struct dq *q, const struct dq_ev *ev, bool after)
{
	struct dq_ev par;

	if (!dq_in_order(ev))
		return 0;
	if (ev->depth == 0)
		return dq_sibling(q, ev, NULL, after);
	return dq_parent(q, ev, &par) ? dq_sibling(q, ev, &par, after) : 0;
}

/*
 * For the critical path: @ev's program-order predecessor, or, for a first
 * child, that of the nearest ancestor that has one (the thread reached
 * @ev when it entered that ancestor).  *@via gets the ancestor's name, ""
 * when @ev has a sibling before it.  Return: the predecessor's id or 0.
 */
int64_t
dq_po_climb(struct dq *q, const struct dq_ev *ev, char *via, size_t vlen)
{
	struct dq_ev up[2];	/* ancestors, in turn */
	const struct dq_ev *cur = ev;

	via[0] = 0;
	if (!dq_in_order(ev))
		return 0;
	for (int k = 0; k < PO_MAX_CLIMB; k++) {
		bool nested = cur->depth > 0;
		struct dq_ev *par = &up[k & 1];
		int64_t p;

		if (nested && !dq_parent(q, cur, par))
			break;
		p = dq_sibling(q, cur, nested ? par : NULL, false);
		if (p) {
			if (k)
				snprintf(via, vlen, "%s", cur->name);
			return p;
		}
		if (!nested)
			break;
		cur = par;
	}
	return 0;
}

/*
 * For the critical path: the last child of @ev into *@c, if @ev has one not
 * in @seen (a slice on an in-order unit returns after its last child: the
 * slice one level down that starts last within it and ends within it).
 */
bool
dq_last_child(struct dq *q, const struct dq_ev *ev, const struct dq_ids *seen, struct dq_ev *c)
{
	int64_t id;

	if (!dq_in_order(ev) || ev->dur <= 0 || ev->depth >= ev->unit_depth)
		return false;	/* nothing nests under it */
	id = dq_one(q, &q->prev, prev_sql, ev, ev->depth + 1, ev->ts, ev->ts + ev->dur, INT64_MAX);
	if (!id || dq_ids_has(seen, id) || dq_event(q, id, c)) {
		tc_err_clear(q->err);
		c->id = 0;
		return false;
	}
	if (c->ts + c->dur > ev->ts + ev->dur) {
		c->id = 0;	/* it broke nesting: not a child */
		return false;
	}
	return true;
}

json_t *
dq_text_json(char *text, size_t len, struct tc_err *err)
{
	json_t *res;

	if (!text)
		return NULL;
	res = json_loadb(text, len, 0, NULL);
	free(text);
	if (!res)
		tc_err_set(err, -ENOMEM, "dependency query: cannot read back its answer");
	return res;
}

json_t *
dq_ev_json(const struct dq_ev *ev)
{
	return json_pack("{s:I,s:o,s:I,s:I,s:I}", "id", (json_int_t)ev->id, "name",
			 tc_json_str(ev->name),
			 "unit", (json_int_t)ev->unit, "ts", (json_int_t)ev->ts, "dur",
			 (json_int_t)ev->dur);
}

void
dq_ev_jw(struct tc_jw *w, int64_t id, const char *name, int64_t unit, int64_t ts, int64_t dur)
{
	tc_jw_lit(w, "{\"id\":");
	tc_jw_i64(w, id);
	tc_jw_lit(w, ",\"name\":");
	tc_jw_str(w, name);
	tc_jw_lit(w, ",\"unit\":");
	tc_jw_i64(w, unit);
	tc_jw_lit(w, ",\"ts\":");
	tc_jw_i64(w, ts);
	tc_jw_lit(w, ",\"dur\":");
	tc_jw_i64(w, dur);
}

static json_t *
kinds_obj(void)
{
	json_t *o = json_object();

	for (int k = 0; k < ST_EDGE_NKINDS; k++)
		json_object_set_new(o, st_edge_kind_name(k), json_array());
	return o;
}

static void
add_e(struct dq *q, json_t *kinds, int64_t id, int kind, const char *label)
{
	struct dq_ev ev;
	json_t *e;

	if (dq_event(q, id, &ev)) {
		tc_err_clear(q->err);
		return;
	}
	e = dq_ev_json(&ev);
	json_object_set_new(e, "label", tc_json_str(label));
	json_array_append_new(json_object_get(kinds, st_edge_kind_name(kind)), e);
}

/* Stored edges of @id in one direction; returns whether the list was cut. */
static bool
q_list(struct dq *q, int64_t id, bool out, json_t *kinds)
{
	struct dq_nb *v = NULL;
	size_t n = 0, total, cap = 0;
	bool cut;

	if (dq_stored(q, id, out, DEPS_KINDS_ALL, EDGES_LIST_MAX + 1, &v, &n, &cap)) {
		tc_err_clear(q->err);
		n = 0;	/* listed as none, as a failed statement was */
	}
	total = n;
	cut = n > EDGES_LIST_MAX;
	if (cut)
		n = EDGES_LIST_MAX;
	for (size_t i = 0; i < n; i++) {
		if (v[i].pending && dq_label(q, out ? id : v[i].id, out ? v[i].id : id, v[i].kind,
					     &v[i].ref, &v[i].label))
			tc_err_clear(q->err);
		if (v[i].kind >= 0 && v[i].kind < ST_EDGE_NKINDS)
			add_e(q, kinds, v[i].id, v[i].kind, v[i].label);
	}
	for (size_t i = 0; i < total; i++)
		free(v[i].label);
	free(v);
	return cut;
}

json_t *
deps_event_edges(sqlite3 *db, int64_t eid, struct tc_err *err)
{
	struct dq q = { .db = db, .err = err };
	struct dq_ev ev;
	json_t *res = NULL, *in, *out;
	int64_t p;
	bool cut;

	if (dq_event(&q, eid, &ev))
		goto out;
	in = kinds_obj();
	out = kinds_obj();
	p = dq_po(&q, &ev, false);
	if (p)
		add_e(&q, in, p, ST_EDGE_ORDER, PO_LABEL);
	p = dq_po(&q, &ev, true);
	if (p)
		add_e(&q, out, p, ST_EDGE_ORDER, PO_LABEL);
	cut = q_list(&q, eid, false, in);
	cut |= q_list(&q, eid, true, out);
	res = json_pack("{s:o,s:o,s:b}", "in", in, "out", out, "truncated", cut);
out:
	if (dq_done(&q) < 0) {	/* a read failed: not lists without its edges */
		json_decref(res);
		res = NULL;
	}
	return res;
}

#define NB_LESS(x, y) ((x)->kind != (y)->kind ? (x)->kind < (y)->kind : (x)->id < (y)->id)
TC_MSORT_DEFINE(nb_sort, struct dq_nb, NB_LESS)

/* dq_stored() through the direct reads; 1 when they cannot answer. */
static int
dq_stored_direct(struct dq *q, int64_t id, bool out, unsigned kinds, size_t limit,
		 struct dq_nb **v, size_t *n, size_t *cap)
{
	size_t k = 0, n0 = *n;
	struct dq_nb *tmp;

	if (!dq_conn(q) || st_conn_edges(q->sc, id, out, &q->ends, &k, &q->ends_cap))
		return 1;
	for (size_t i = 0; i < k; i++) {
		int64_t other = q->ends[i].id;
		int kind = q->ends[i].kind;

		if (!((1u << kind) & kinds))
			continue;
		TC_GROW(*v, *n, *cap, 16);
		(*v)[(*n)++] = (struct dq_nb){ .id = other, .kind = kind, .pending = true,
					       .ref = q->ends[i].label };
	}
	/* the order of the SQL below: by kind, then the other end (stable) */
	if (*n - n0 > 1) {
		tmp = tc_xmalloc(((*n - n0) / 2 + 1) * sizeof(*tmp));
		nb_sort(*v + n0, tmp, *n - n0);
		free(tmp);
	}
	if (*n - n0 > limit)
		*n = n0 + limit;
	return 0;
}

int
dq_stored(struct dq *q, int64_t id, bool out, unsigned kinds, size_t limit, struct dq_nb **v,
	  size_t *n, size_t *cap)
{
	sqlite3_stmt **st = out ? &q->out : &q->in;
	int rc, s;

	if (!limit || !dq_stored_direct(q, id, out, kinds, limit, v, n, cap))
		return 0;
	if ((rc = dq_prep(q, st, out ? out_sql : in_sql)))
		return rc;
	sqlite3_bind_int64(*st, 1, id);
	sqlite3_bind_int(*st, 2, (int)kinds);
	sqlite3_bind_int64(*st, 3, (sqlite3_int64)limit);
	while ((s = dq_step(q, *st)) == SQLITE_ROW) {
		const unsigned char *l = sqlite3_column_text(*st, 2);

		TC_GROW(*v, *n, *cap, 16);
		(*v)[(*n)++] = (struct dq_nb){ .id = sqlite3_column_int64(*st, 0),
					       .kind = sqlite3_column_int(*st, 1),
					       .label = l ? tc_xstrdup((const char *)l) : NULL,
					       .ref = { .form = ST_LABEL_AT_DST } };
	}
	sqlite3_reset(*st);
	if (s != SQLITE_DONE)
		return tc_err_set(q->err, -EIO, "dependency query: %s", sqlite3_errmsg(q->db));
	return 0;
}

int
dq_label(struct dq *q, int64_t src, int64_t dst, int kind, const struct st_label_ref *ref,
	 char **label)
{
	const unsigned char *l;
	int rc, s;

	*label = NULL;
	if (dq_conn(q)) {
		rc = ref && ref->form != ST_LABEL_AT_DST ? st_conn_label_of(q->sc, ref, &q->text) :
			st_conn_label(q->sc, src, dst, kind, &q->text);
		if (!rc)
			*label = tc_xstrdup(q->text.data);
		if (rc == 0 || rc == 1 || rc == -ENOENT)
			return 0;
	}
	if ((rc = dq_prep(q, &q->label, label_sql)))
		return rc;
	sqlite3_bind_int64(q->label, 1, dst);
	sqlite3_bind_int64(q->label, 2, src);
	sqlite3_bind_int(q->label, 3, kind);
	s = dq_step(q, q->label);
	if (s == SQLITE_ROW && (l = sqlite3_column_text(q->label, 0)))
		*label = tc_xstrdup((const char *)l);
	sqlite3_reset(q->label);
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		return tc_err_set(q->err, -EIO, "dependency query: %s", sqlite3_errmsg(q->db));
	return 0;
}

/* ---- sets of (a, b, c) triples: the events and edges a walk has seen ---- */

static uint64_t
mix(int64_t a, int64_t b, int c)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ ((uint64_t)b + 0x632be59bd9b4e019ull) *
		     0xbf58476d1ce4e5b9ull ^ (uint64_t)c;

	h ^= h >> 31;
	return h * 0x94d049bb133111ebull;
}

/* Insert; return true when it was new. */
bool
dq_set_add(struct dq_set *s, int64_t a, int64_t b, int c)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct trip *old = s->v;
		size_t oc = s->cap;

		s->cap = oc ? oc * 2 : 256;
		s->v = tc_xmalloc(s->cap * sizeof(*s->v));
		for (i = 0; i < s->cap; i++)
			s->v[i].c = -1;
		s->n = 0;
		for (i = 0; i < oc; i++)
			if (old[i].c >= 0)
				dq_set_add(s, old[i].a, old[i].b, old[i].c);
		free(old);
	}
	for (i = mix(a, b, c) & (s->cap - 1); s->v[i].c >= 0; i = (i + 1) & (s->cap - 1))
		if (s->v[i].a == a && s->v[i].b == b && s->v[i].c == c)
			return false;
	s->v[i].a = a;
	s->v[i].b = b;
	s->v[i].c = c;
	s->n++;
	return true;
}

bool
dq_set_has(const struct dq_set *s, int64_t a, int64_t b, int c)
{
	if (!s->cap)
		return false;
	for (size_t i = mix(a, b, c) & (s->cap - 1); s->v[i].c >= 0; i = (i + 1) & (s->cap - 1))
		if (s->v[i].a == a && s->v[i].b == b && s->v[i].c == c)
			return true;
	return false;
}

/* ---- sets of event ids ---- */

bool
dq_ids_add(struct dq_ids *s, int64_t id)
{
	size_t p = (size_t)(id / DQ_IDS_PAGE);
	uint64_t bit, *w;

	if (id < 0 || id >= DQ_IDS_MAX)
		return dq_set_add(&s->far, id, 0, 0);
	if (p >= s->npages) {
		size_t np = TC_MAX(p + 1, 2 * s->npages);

		s->pages = tc_xrealloc(s->pages, np * sizeof(*s->pages));
		memset(s->pages + s->npages, 0, (np - s->npages) * sizeof(*s->pages));
		s->npages = np;
	}
	if (!s->pages[p])
		s->pages[p] = tc_xcalloc(DQ_IDS_PAGE / 64, sizeof(uint64_t));
	w = &s->pages[p][(id % DQ_IDS_PAGE) / 64];
	bit = UINT64_C(1) << (id % 64);
	if (*w & bit)
		return false;
	*w |= bit;
	return true;
}

bool
dq_ids_has(const struct dq_ids *s, int64_t id)
{
	size_t p = (size_t)(id / DQ_IDS_PAGE);

	if (id < 0 || id >= DQ_IDS_MAX)
		return dq_set_has(&s->far, id, 0, 0);
	return p < s->npages && s->pages[p] &&
	       (s->pages[p][(id % DQ_IDS_PAGE) / 64] >> (id % 64) & 1);
}

void
dq_ids_free(struct dq_ids *s)
{
	for (size_t p = 0; p < s->npages; p++)
		free(s->pages[p]);
	free(s->pages);
	free(s->far.v);
	memset(s, 0, sizeof(*s));
}
