/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-query.c - the read side of dependencies: the edges of one
 * event, a bounded chain (BFS) around an event and the critical path.
 * Stored edges come from the edges table (indexes on (src, kind) and
 * (dst, kind)); program-order edges are derived here, at query time: on an
 * in-order unit (engine, queue, stream, host thread) a slice depends on its
 * previous sibling, the slice before it at its depth within the same parent
 * (at the top level, the previous top-level slice of the unit).  The
 * critical path also climbs: a slice that is its parent's first child
 * started when its parent did, so it inherits the parent's predecessor in
 * program order (label "program order via PARENT").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps.h"

#define PO_LABEL "program order"
#define CHILD_LABEL "last child"	/* a slice returns after its last child */
#define EDGES_LIST_MAX 1000	/* per direction in deps_event_edges() */
#define PO_MAX_CLIMB 256	/* ancestors the critical path climbs through */

struct q {
	sqlite3 *db;
	struct tc_err *err;
	sqlite3_stmt *ev, *parent, *prev, *next, *in, *out, *pred, *label;
};

struct evinfo {
	int64_t id, unit, ts, dur;
	int depth, kind, unit_kind;
	int unit_depth;		/* the deepest slice of its unit */
	char name[256];
};

static const char ev_sql[] =
	"SELECT v.id, v.unit, v.ts, v.dur, v.depth, v.kind, u.kind, s.s, u.max_depth FROM events v "
	"JOIN units u ON u.id = v.unit LEFT JOIN strings s ON s.id = v.name WHERE v.id = ?1";
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
/*
 * The stored edges into ?1 of the kinds in mask ?2 whose source ends at ?3
 * or later, with that end, in no particular order: the events table skips a
 * chunk whose latest end is earlier without decoding it, so sources that
 * cannot finish last (most of those a buffer's old writes give) cost little.
 */
static const char pred_sql[] =
	"SELECT e.src, e.kind, v.ts_end FROM edges e JOIN events v ON v.id = e.src "
	"WHERE e.dst = ?1 AND ((1 << e.kind) & ?2) != 0 AND v.ts_end >= ?3";
/* The label of the first edge ?2 -> ?1 of kind ?3. */
static const char label_sql[] =
	"SELECT label FROM edges WHERE dst = ?1 AND src = ?2 AND kind = ?3 LIMIT 1";

static int
q_prep(struct q *q, sqlite3_stmt **st, const char *sql)
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

static void
q_done(struct q *q)
{
	sqlite3_finalize(q->ev);
	sqlite3_finalize(q->parent);
	sqlite3_finalize(q->prev);
	sqlite3_finalize(q->next);
	sqlite3_finalize(q->in);
	sqlite3_finalize(q->out);
	sqlite3_finalize(q->pred);
	sqlite3_finalize(q->label);
}

/* Look up event @id; -ENOENT when absent. */
static int
q_event(struct q *q, int64_t id, struct evinfo *ev)
{
	const unsigned char *name;
	int rc = q_prep(q, &q->ev, ev_sql);

	if (rc)
		return rc;
	sqlite3_bind_int64(q->ev, 1, id);
	if (sqlite3_step(q->ev) != SQLITE_ROW) {
		sqlite3_reset(q->ev);
		return tc_err_set(q->err, -ENOENT, "no event %lld in this trace", (long long)id);
	}
	ev->id = sqlite3_column_int64(q->ev, 0);
	ev->unit = sqlite3_column_int64(q->ev, 1);
	ev->ts = sqlite3_column_int64(q->ev, 2);
	ev->dur = sqlite3_column_int64(q->ev, 3);
	ev->depth = sqlite3_column_int(q->ev, 4);
	ev->kind = sqlite3_column_int(q->ev, 5);
	ev->unit_kind = sqlite3_column_int(q->ev, 6);
	name = sqlite3_column_text(q->ev, 7);
	ev->unit_depth = sqlite3_column_int(q->ev, 8);
	snprintf(ev->name, sizeof(ev->name), "%s", name ? (const char *)name : "");
	sqlite3_reset(q->ev);
	return 0;
}

static bool
in_order(const struct evinfo *ev)
{
	return ev->kind == ST_EV_SLICE &&
	       (ev->unit_kind == ST_UNIT_ENGINE || ev->unit_kind == ST_UNIT_QUEUE ||
		ev->unit_kind == ST_UNIT_STREAM || ev->unit_kind == ST_UNIT_THREAD);
}

/* One id from @sql bound to (unit, depth, a, b, c); 0 when none. */
static int64_t
q_one(struct q *q, sqlite3_stmt **st, const char *sql, const struct evinfo *ev, int depth,
      int64_t a, int64_t b, int64_t c)
{
	int64_t id = 0;

	if (q_prep(q, st, sql)) {
		tc_err_clear(q->err);
		return 0;
	}
	sqlite3_bind_int64(*st, 1, ev->unit);
	sqlite3_bind_int(*st, 2, depth);
	sqlite3_bind_int64(*st, 3, a);
	sqlite3_bind_int64(*st, 4, b);
	if (sql != parent_sql)
		sqlite3_bind_int64(*st, 5, c);
	if (sqlite3_step(*st) == SQLITE_ROW)
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
q_parent(struct q *q, const struct evinfo *ev, struct evinfo *par)
{
	int64_t id;

	if (ev->depth <= 0)
		return false;
	id = q_one(q, &q->parent, parent_sql, ev, ev->depth - 1, ev->ts, ev->id, 0);
	if (!id || q_event(q, id, par)) {
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
q_sibling(struct q *q, const struct evinfo *ev, const struct evinfo *par, bool after)
{
	int64_t lo = par ? par->ts : INT64_MIN, hi = par ? par->ts + par->dur : INT64_MAX, id;
	struct evinfo sib;

	if (!after)
		return q_one(q, &q->prev, prev_sql, ev, ev->depth, lo, ev->ts, ev->id);
	id = q_one(q, &q->next, next_sql, ev, ev->depth, ev->ts, hi, ev->id);
	if (id && par && (q_event(q, id, &sib) || sib.ts + sib.dur > hi)) {
		tc_err_clear(q->err);
		return 0;	/* starts in the parent but does not end there */
	}
	return id;
}

/* Program-order neighbour of @ev (@after: the next one), 0 when none. */
static int64_t
q_po(struct q *q, const struct evinfo *ev, bool after)
{
	struct evinfo par;

	if (!in_order(ev))
		return 0;
	if (ev->depth == 0)
		return q_sibling(q, ev, NULL, after);
	return q_parent(q, ev, &par) ? q_sibling(q, ev, &par, after) : 0;
}

/*
 * For the critical path: @ev's program-order predecessor, or, for a first
 * child, that of the nearest ancestor that has one (the thread reached
 * @ev when it entered that ancestor).  *@via gets the ancestor's name, ""
 * when @ev has a sibling before it.  Return: the predecessor's id or 0.
 */
static int64_t
q_po_climb(struct q *q, const struct evinfo *ev, char *via, size_t vlen)
{
	struct evinfo cur = *ev, par;

	via[0] = 0;
	if (!in_order(ev))
		return 0;
	for (int k = 0; k < PO_MAX_CLIMB; k++) {
		bool nested = cur.depth > 0;
		int64_t p;

		if (nested && !q_parent(q, &cur, &par))
			break;
		p = q_sibling(q, &cur, nested ? &par : NULL, false);
		if (p) {
			if (k)
				snprintf(via, vlen, "%s", cur.name);
			return p;
		}
		if (!nested)
			break;
		cur = par;
	}
	return 0;
}

struct tset;
static bool tset_has(const struct tset *s, int64_t a, int64_t b, int c);

/*
 * For the critical path: the last child of @ev into *@c, if @ev has one not
 * in @seen (a slice on an in-order unit returns after its last child: the
 * slice one level down that starts last within it and ends within it).
 */
static bool
q_last_child(struct q *q, const struct evinfo *ev, const struct tset *seen, struct evinfo *c)
{
	int64_t id;

	if (!in_order(ev) || ev->dur <= 0 || ev->depth >= ev->unit_depth)
		return false;	/* nothing nests under it */
	id = q_one(q, &q->prev, prev_sql, ev, ev->depth + 1, ev->ts, ev->ts + ev->dur, INT64_MAX);
	if (!id || tset_has(seen, id, 0, 0) || q_event(q, id, c)) {
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

static json_t *
ev_json(const struct evinfo *ev)
{
	return json_pack("{s:I,s:s,s:I,s:I,s:I}", "id", (json_int_t)ev->id, "name", ev->name,
			 "unit", (json_int_t)ev->unit, "ts", (json_int_t)ev->ts, "dur",
			 (json_int_t)ev->dur);
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
add_e(struct q *q, json_t *kinds, int64_t id, int kind, const char *label)
{
	struct evinfo ev;
	json_t *e;

	if (q_event(q, id, &ev)) {
		tc_err_clear(q->err);
		return;
	}
	e = ev_json(&ev);
	json_object_set_new(e, "label", label ? json_string(label) : json_null());
	json_array_append_new(json_object_get(kinds, st_edge_kind_name(kind)), e);
}

/* Stored edges of @id in one direction; returns whether the list was cut. */
static bool
q_list(struct q *q, int64_t id, bool out, json_t *kinds)
{
	sqlite3_stmt **st = out ? &q->out : &q->in;
	struct {
		int64_t id;
		int kind;
		char *label;
	} *v = NULL;
	size_t n = 0;
	bool cut = false;

	if (q_prep(q, st, out ? out_sql : in_sql))
		return false;
	sqlite3_bind_int64(*st, 1, id);
	sqlite3_bind_int(*st, 2, DEPS_KINDS_ALL);
	sqlite3_bind_int(*st, 3, EDGES_LIST_MAX + 1);
	v = tc_xcalloc(EDGES_LIST_MAX + 1, sizeof(*v));
	while (sqlite3_step(*st) == SQLITE_ROW) {
		const unsigned char *l = sqlite3_column_text(*st, 2);

		if (n == EDGES_LIST_MAX) {
			cut = true;
			break;
		}
		v[n].id = sqlite3_column_int64(*st, 0);
		v[n].kind = sqlite3_column_int(*st, 1);
		v[n].label = l ? tc_xstrdup((const char *)l) : NULL;
		n++;
	}
	sqlite3_reset(*st);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind >= 0 && v[i].kind < ST_EDGE_NKINDS)
			add_e(q, kinds, v[i].id, v[i].kind, v[i].label);
		free(v[i].label);
	}
	free(v);
	return cut;
}

json_t *
deps_event_edges(sqlite3 *db, int64_t eid, struct tc_err *err)
{
	struct q q = { .db = db, .err = err };
	struct evinfo ev;
	json_t *res = NULL, *in, *out;
	int64_t p;
	bool cut;

	if (q_event(&q, eid, &ev))
		goto out;
	in = kinds_obj();
	out = kinds_obj();
	p = q_po(&q, &ev, false);
	if (p)
		add_e(&q, in, p, ST_EDGE_ORDER, PO_LABEL);
	p = q_po(&q, &ev, true);
	if (p)
		add_e(&q, out, p, ST_EDGE_ORDER, PO_LABEL);
	cut = q_list(&q, eid, false, in);
	cut |= q_list(&q, eid, true, out);
	res = json_pack("{s:o,s:o,s:b}", "in", in, "out", out, "truncated", cut);
out:
	q_done(&q);
	return res;
}

/* ---- chains ---- */

/* An open-addressing set of (a, b, c) triples (c < 8). */
struct tset {
	struct trip {
		int64_t a, b;
		int c;	/* -1: empty */
	} *v;
	size_t n, cap;
};

static uint64_t
mix(int64_t a, int64_t b, int c)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ ((uint64_t)b + 0x632be59bd9b4e019ull) *
		     0xbf58476d1ce4e5b9ull ^ (uint64_t)c;

	h ^= h >> 31;
	return h * 0x94d049bb133111ebull;
}

/* Insert; return true when it was new. */
static bool
tset_add(struct tset *s, int64_t a, int64_t b, int c)
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
				tset_add(s, old[i].a, old[i].b, old[i].c);
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

static bool
tset_has(const struct tset *s, int64_t a, int64_t b, int c)
{
	if (!s->cap)
		return false;
	for (size_t i = mix(a, b, c) & (s->cap - 1); s->v[i].c >= 0; i = (i + 1) & (s->cap - 1))
		if (s->v[i].a == a && s->v[i].b == b && s->v[i].c == c)
			return true;
	return false;
}

struct qitem {
	struct evinfo ev;	/* looked up when found: not again when expanded */
	int hop;	/* < 0: predecessors, > 0: successors */
};

/* Neighbours of @ev in one direction: (other, kind, label) */
struct nb {
	int64_t id;
	int kind;
	char *label;
};

static size_t
q_neighbours(struct q *q, const struct evinfo *ev, bool out, unsigned kinds, int limit,
	     struct nb **res)
{
	sqlite3_stmt **st = out ? &q->out : &q->in;
	struct nb *v = tc_xcalloc(limit + 2, sizeof(*v));
	size_t n = 0;

	if ((kinds & (1u << ST_EDGE_ORDER))) {
		int64_t p = q_po(q, ev, out);

		if (p) {
			v[n].id = p;
			v[n].kind = ST_EDGE_ORDER;
			v[n].label = tc_xstrdup(PO_LABEL);
			n++;
		}
	}
	if (!q_prep(q, st, out ? out_sql : in_sql)) {
		sqlite3_bind_int64(*st, 1, ev->id);
		sqlite3_bind_int(*st, 2, kinds);
		sqlite3_bind_int(*st, 3, limit + 1);
		while (n < (size_t)limit + 1 && sqlite3_step(*st) == SQLITE_ROW) {
			const unsigned char *l = sqlite3_column_text(*st, 2);

			v[n].id = sqlite3_column_int64(*st, 0);
			v[n].kind = sqlite3_column_int(*st, 1);
			v[n].label = l ? tc_xstrdup((const char *)l) : NULL;
			n++;
		}
		sqlite3_reset(*st);
	}
	*res = v;
	return n;
}

json_t *
deps_chain(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
	   struct tc_err *err)
{
	struct q q = { .db = db, .err = err };
	struct tset seen = { 0 }, eseen = { 0 };
	struct qitem *queue = NULL;
	size_t qh = 0, qn = 0, qc = 0;
	json_t *nodes = NULL, *edges = NULL, *res = NULL;
	struct evinfo ev;
	int nedges = 0;
	bool truncated = false;

	if (q_event(&q, eid, &ev))
		goto out;
	if (!dir)
		dir = DEPS_DIR_IN | DEPS_DIR_OUT;
	if (budget <= 0)
		budget = 1000;
	nodes = json_array();
	edges = json_array();
	tset_add(&seen, eid, 0, 0);
	{
		json_t *n = ev_json(&ev);

		json_object_set_new(n, "hop", json_integer(0));
		json_array_append_new(nodes, n);
	}
	qc = 64;
	queue = tc_xmalloc(qc * sizeof(*queue));
	queue[qn++] = (struct qitem){ ev, 0 };
	while (qh < qn && !truncated) {
		const struct qitem *it = &queue[qh++];
		int ahop = it->hop < 0 ? -it->hop : it->hop, ihop = it->hop;
		int64_t iid = it->ev.id;

		if (ahop >= depth)
			continue;
		ev = it->ev;	/* the queue may move as it grows */
		for (int d = 0; d < 2 && !truncated; d++) {
			bool out = d == 1;
			struct nb *nb;
			size_t n;

			if (!(dir & (out ? DEPS_DIR_OUT : DEPS_DIR_IN)))
				continue;
			if ((ihop < 0 && out) || (ihop > 0 && !out))
				continue;	/* predecessors expand backwards only */
			n = q_neighbours(&q, &ev, out, kinds, budget - nedges, &nb);
			for (size_t i = 0; i < n; i++) {
				int64_t src = out ? iid : nb[i].id, dst = out ? nb[i].id : iid;
				int hop = out ? ahop + 1 : -(ahop + 1);

				if (!truncated && tset_add(&eseen, src, dst, nb[i].kind)) {
					if (nedges >= budget) {
						truncated = true;
					} else {
						json_array_append_new(edges, json_pack(
							"{s:I,s:I,s:s,s:s?}", "src", (json_int_t)src,
							"dst", (json_int_t)dst, "kind",
							st_edge_kind_name(nb[i].kind), "label",
							nb[i].label));
						nedges++;
						if (tset_add(&seen, nb[i].id, 0, 0)) {
							struct evinfo o;

							if (!q_event(&q, nb[i].id, &o)) {
								json_t *jn = ev_json(&o);

								json_object_set_new(jn, "hop",
										    json_integer(hop));
								json_array_append_new(nodes, jn);
								if (qn == qc) {
									qc *= 2;
									queue = tc_xrealloc(queue,
										qc * sizeof(*queue));
								}
								queue[qn++] = (struct qitem){ o, hop };
							} else {
								tc_err_clear(err);
							}
						}
					}
				}
				free(nb[i].label);
			}
			free(nb);
		}
	}
	res = json_pack("{s:o,s:o,s:b}", "nodes", nodes, "edges", edges, "truncated", truncated);
	nodes = edges = NULL;
out:
	json_decref(nodes);
	json_decref(edges);
	free(queue);
	free(seen.v);
	free(eseen.v);
	q_done(&q);
	return res;
}

/* ---- critical path ---- */

/*
 * The top-level slice ending last in [start, end] into *@out (0 if none):
 * on the in-order units (engines, queues, streams, threads), where the
 * work is, or else on any unit (a span on a track of its own, such as
 * Kineto's "PyTorch Profiler (0)", would otherwise end the path at
 * itself).  Return: 0 or -errno with the error set.
 */
static int
last_ending(struct q *q, int64_t start, int64_t end, int64_t *out)
{
	sqlite3_stmt *units = NULL, *st = NULL;
	int64_t best[2] = { 0, 0 }, best_end[2] = { INT64_MIN, INT64_MIN };
	int rc = 0;

	if (sqlite3_prepare_v2(q->db, "SELECT id, kind FROM units", -1, &units, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(q->db,
			       "SELECT id, ts + dur FROM events WHERE unit = ?1 AND depth = 0 "
			       "AND ts >= ?2 AND ts <= ?3 AND ts + dur <= ?3 AND kind = 0 "
			       "ORDER BY ts DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
		rc = tc_err_set(q->err, -EIO, "critical path: %s", sqlite3_errmsg(q->db));
		goto out;
	}
	while (sqlite3_step(units) == SQLITE_ROW) {
		struct evinfo u = { .kind = ST_EV_SLICE, .unit_kind = sqlite3_column_int(units, 1) };
		int k = in_order(&u) ? 0 : 1;

		sqlite3_bind_int64(st, 1, sqlite3_column_int64(units, 0));
		sqlite3_bind_int64(st, 2, start);
		sqlite3_bind_int64(st, 3, end);
		if (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0), fin = sqlite3_column_int64(st, 1);

			if (fin > best_end[k] || (fin == best_end[k] && id > best[k])) {
				best[k] = id;
				best_end[k] = fin;
			}
		}
		sqlite3_reset(st);
	}
out:
	sqlite3_finalize(units);
	sqlite3_finalize(st);
	*out = best[0] ? best[0] : best[1];
	return rc;
}

/*
 * Among the stored edges into @dst of @kinds whose source is not in @seen,
 * the one whose source ends last (the larger source on equal ends), if it
 * ends at or after @bound: then *@next, *@kind, *@fin and *@label (malloc'd;
 * the previous one is freed) are its.  Return: 0 or -errno with the error
 * set.
 */
static int
q_pred(struct q *q, int64_t dst, unsigned kinds, const struct tset *seen, int64_t bound,
       int64_t *next, int *kind, int64_t *fin, char **label)
{
	int64_t best = 0, best_fin = bound;
	int best_kind = -1, rc, s;
	char *best_label = NULL;

	if ((rc = q_prep(q, &q->pred, pred_sql)))
		return rc;
	sqlite3_bind_int64(q->pred, 1, dst);
	sqlite3_bind_int(q->pred, 2, (int)kinds);
	sqlite3_bind_int64(q->pred, 3, bound);
	while ((s = sqlite3_step(q->pred)) == SQLITE_ROW) {
		int64_t src = sqlite3_column_int64(q->pred, 0), f = sqlite3_column_int64(q->pred, 2);

		if (tset_has(seen, src, 0, 0))
			continue;
		if (best && (f < best_fin || (f == best_fin && src <= best)))
			continue;	/* the first of equals: the order the edges came in */
		best = src;
		best_fin = f;
		best_kind = sqlite3_column_int(q->pred, 1);
	}
	sqlite3_reset(q->pred);
	if (s == SQLITE_DONE && best) {
		/* its label: building every edge's label text would cost more */
		if ((rc = q_prep(q, &q->label, label_sql)))
			return rc;
		sqlite3_bind_int64(q->label, 1, dst);
		sqlite3_bind_int64(q->label, 2, best);
		sqlite3_bind_int(q->label, 3, best_kind);
		s = sqlite3_step(q->label);
		if (s == SQLITE_ROW) {
			const unsigned char *l = sqlite3_column_text(q->label, 0);

			best_label = l ? tc_xstrdup((const char *)l) : NULL;
			s = SQLITE_DONE;
		}
		sqlite3_reset(q->label);
	}
	if (s != SQLITE_DONE) {
		free(best_label);
		return tc_err_set(q->err, -EIO, "critical path: %s", sqlite3_errmsg(q->db));
	}
	if (best) {
		free(*label);
		*label = best_label;
		*next = best;
		*kind = best_kind;
		*fin = best_fin;
	}
	return 0;
}

/* A hop of the path as walked (all of them, for the totals). */
struct step {
	int64_t unit, ts, dur;
	int kind;	/* edge from the previous hop, -1 for the first */
	int64_t cover;	/* start of the outermost slice around it on the path, else INT64_MAX */
	int64_t wait, work;	/* the hop's share of the path */
};

/* Slices the path went down into (through their last child), still around it. */
struct around {
	int64_t unit, ts, end;
};

/* What is listed of the latest hops, the first max_hops walked. */
struct hop {
	int64_t id;
	char *name;	/* malloc'd */
	char *label;	/* malloc'd or NULL */
};

struct unit_sum {
	int64_t unit, hops, work, wait;
};

static int
unit_sum_by_unit(const void *a, const void *b)
{
	const struct unit_sum *x = a, *y = b;

	return (x->unit > y->unit) - (x->unit < y->unit);
}

static int
unit_sum_by_share(const void *a, const void *b)
{
	const struct unit_sum *x = a, *y = b;

	if (x->work != y->work)
		return x->work < y->work ? 1 : -1;
	if (x->wait != y->wait)
		return x->wait < y->wait ? 1 : -1;
	return unit_sum_by_unit(a, b);
}

/*
 * The path's time per unit, largest working share first: [{"unit", "hops",
 * "work_ns", "wait_ns"}] (a hop's waiting counts on the unit that waited).
 */
/*
 * Where hop @ev's waiting could start: the start of the outermost slice the
 * path went down into that holds it (the gap between two of its children
 * is its own work), INT64_MAX when none does.  Slices on @ev's unit that do
 * not hold it are dropped from @ar: the walk goes back in time on a unit,
 * so it will not be inside them again.
 */
static int64_t
around_cover(struct around *ar, size_t *nar, const struct evinfo *ev)
{
	int64_t cover = INT64_MAX, end = ev->ts + ev->dur;
	size_t m = 0;

	for (size_t k = 0; k < *nar; k++) {
		if (ar[k].unit != ev->unit) {
			ar[m++] = ar[k];
		} else if (ar[k].ts <= ev->ts && end <= ar[k].end) {
			cover = TC_MIN(cover, ar[k].ts);
			ar[m++] = ar[k];
		}
	}
	*nar = m;
	return cover;
}

static json_t *
units_json(const struct step *hops, size_t n)
{
	struct unit_sum *u = tc_xcalloc(n ? n : 1, sizeof(*u));
	json_t *arr = json_array();
	size_t m = 0;

	for (size_t k = 0; k < n; k++)
		u[k] = (struct unit_sum){ hops[k].unit, 1, hops[k].work, hops[k].wait };
	qsort(u, n, sizeof(*u), unit_sum_by_unit);
	for (size_t k = 0; k < n; k++) {
		if (m && u[m - 1].unit == u[k].unit) {
			u[m - 1].hops++;
			u[m - 1].work += u[k].work;
			u[m - 1].wait += u[k].wait;
		} else {
			u[m++] = u[k];
		}
	}
	qsort(u, m, sizeof(*u), unit_sum_by_share);
	for (size_t k = 0; k < m; k++)
		json_array_append_new(arr, json_pack("{s:I,s:I,s:I,s:I}", "unit",
						     (json_int_t)u[k].unit, "hops",
						     (json_int_t)u[k].hops, "work_ns",
						     (json_int_t)u[k].work, "wait_ns",
						     (json_int_t)u[k].wait));
	free(u);
	return arr;
}

/*
 * The path's time by the kind of edge that led into each hop: {"flow":
 * {"hops", "work_ns", "wait_ns"}, ...} for the kinds on the path (the first
 * hop has none).  Waiting is what that kind of dependency cost.
 */
static json_t *
kinds_json(const struct step *hops, size_t n)
{
	int64_t c[ST_EDGE_NKINDS][3] = { { 0 } };
	json_t *o = json_object();

	for (size_t k = 0; k + 1 < n; k++) {	/* hops[n - 1] is the first hop */
		if (hops[k].kind < 0 || hops[k].kind >= ST_EDGE_NKINDS)
			continue;
		c[hops[k].kind][0]++;
		c[hops[k].kind][1] += hops[k].work;
		c[hops[k].kind][2] += hops[k].wait;
	}
	for (int k = 0; k < ST_EDGE_NKINDS; k++)
		if (c[k][0])
			json_object_set_new(o, st_edge_kind_name(k),
					    json_pack("{s:I,s:I,s:I}", "hops", (json_int_t)c[k][0],
						      "work_ns", (json_int_t)c[k][1], "wait_ns",
						      (json_int_t)c[k][2]));
	return o;
}

json_t *
deps_critical_path(sqlite3 *db, int64_t end_eid, int64_t start_ns, int64_t end_ns,
		   unsigned kinds, int max_hops, int budget, struct tc_err *err)
{
	struct q q = { .db = db, .err = err };
	struct tset seen = { 0 };
	struct step *steps = NULL;
	struct hop *hops = NULL;
	struct around *ar = NULL;
	size_t nar = 0, arcap = 0;
	/* the hop, its program-order predecessor and its last child */
	struct evinfo ev = { 0 }, pe, ce;
	size_t n = 0, nh = 0, cap = 0;
	int64_t cur, wait_sum = 0, work_sum = 0, frontier, start;
	json_t *res = NULL, *jh;
	bool truncated = false;

	if (!kinds)
		kinds = DEPS_KINDS_ALL;
	if (max_hops <= 0)
		max_hops = DEPS_CP_HOPS;
	if (budget <= 0)
		budget = DEPS_CP_BUDGET;
	if (end_ns <= 0 && start_ns <= 0 && !end_eid) {
		start_ns = INT64_MIN;
		end_ns = INT64_MAX;
	} else if (end_ns <= 0) {
		end_ns = INT64_MAX;
	}
	if (end_eid) {
		cur = end_eid;
		start_ns = start_ns > 0 ? start_ns : INT64_MIN;
	} else {
		if (last_ending(&q, start_ns, end_ns, &cur))
			goto out;
	}
	hops = tc_xcalloc((size_t)TC_MIN(max_hops, budget), sizeof(*hops));
	while (cur) {
		int64_t next = 0, best_fin = INT64_MIN;
		int best_kind = -1;
		char *best_label = NULL;

		/* the program-order predecessor was read already when it won */
		if (ev.id != cur && q_event(&q, cur, &ev))
			goto out;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			steps = tc_xrealloc(steps, cap * sizeof(*steps));
		}
		steps[n++] = (struct step){ .unit = ev.unit, .ts = ev.ts, .dur = ev.dur, .kind = -1,
					    .cover = around_cover(ar, &nar, &ev) };
		if (nh < (size_t)max_hops)
			hops[nh++] = (struct hop){ .id = ev.id, .name = tc_xstrdup(ev.name) };
		tset_add(&seen, cur, 0, 0);
		/*
		 * The predecessor that finished last, skipping visited ones: the
		 * program-order one first, whose end bounds the stored ones'
		 * lookups; among stored ones the larger id on equal ends, and a
		 * stored one over program order on equal ends.
		 */
		pe.id = ce.id = 0;
		if ((kinds & (1u << ST_EDGE_ORDER)) && q_last_child(&q, &ev, &seen, &ce)) {
			next = ce.id;
			best_kind = ST_EDGE_ORDER;
			best_fin = ce.ts + ce.dur;
			best_label = tc_xstrdup(CHILD_LABEL);
		}
		if (kinds & (1u << ST_EDGE_ORDER)) {
			char via[sizeof(pe.name)];
			int64_t p = q_po_climb(&q, &ev, via, sizeof(via));

			if (p && !tset_has(&seen, p, 0, 0) && !q_event(&q, p, &pe) &&
			    (!next || pe.ts + pe.dur > best_fin)) {
				next = p;
				best_kind = ST_EDGE_ORDER;
				best_fin = pe.ts + pe.dur;
				free(best_label);
				best_label = via[0] ? tc_xasprintf(PO_LABEL " via %s", via) :
						      tc_xstrdup(PO_LABEL);
			}
			tc_err_clear(err);
		}
		if (q_pred(&q, cur, kinds, &seen, next ? best_fin : INT64_MIN, &next, &best_kind,
			   &best_fin, &best_label)) {
			free(best_label);
			goto out;
		}
		if (next && best_fin < start_ns)
			next = 0;	/* the predecessor lies before the window */
		if (next && n >= (size_t)budget) {
			truncated = true;	/* there is more, beyond the budget */
			next = 0;
		}
		if (next) {
			/* record the edge on the hop it leads into (the current one) */
			steps[n - 1].kind = best_kind;
			if (n <= nh)
				hops[n - 1].label = best_label;
			else
				free(best_label);
		} else {
			free(best_label);
		}
		if (next && next == pe.id) {
			ev = pe;
		} else if (next && next == ce.id) {
			if (nar == arcap) {
				arcap = arcap ? 2 * arcap : 16;
				ar = tc_xrealloc(ar, arcap * sizeof(*ar));
			}
			ar[nar++] = (struct around){ ev.unit, ev.ts, ev.ts + ev.dur };
			ev = ce;
		}
		cur = next;
	}
	/*
	 * Hops were collected backwards; report them first to last.  Each hop's
	 * time is split against the path so far (frontier: the latest end yet):
	 * waiting before it starts, working for what it adds beyond the
	 * frontier.  A kernel that starts before its launch call returns adds
	 * only its end past the call's, so the parts sum to the path's span.
	 */
	/* the path starts where the first hop or the slices it lies in start */
	frontier = n ? TC_MIN(steps[n - 1].ts, steps[n - 1].cover) : 0;
	start = frontier;
	for (size_t k = n; k-- > 0;) {
		struct step *h = &steps[k];
		int64_t end = h->ts + h->dur, from = TC_MAX(h->ts, frontier);

		/* a gap inside a slice the path went down into is that slice's own work */
		h->wait = TC_MAX(TC_MIN(h->ts, h->cover) - frontier, (int64_t)0);
		h->work = TC_MAX(end - from, (int64_t)0) +
			  TC_MAX(h->ts - TC_MAX(frontier, h->cover), (int64_t)0);
		wait_sum += h->wait;
		work_sum += h->work;
		frontier = TC_MAX(frontier, end);
	}
	/* the latest nh hops; steps[k].kind is the edge from hop k + 1 into hop k */
	jh = json_array();
	for (size_t k = nh; k-- > 0;) {
		const struct step *h = &steps[k];
		bool edge = k + 1 < n && h->kind >= 0;

		json_array_append_new(jh, json_pack(
			"{s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:s?,s:s?}", "id", (json_int_t)hops[k].id,
			"name", hops[k].name, "unit", (json_int_t)h->unit, "ts", (json_int_t)h->ts,
			"dur", (json_int_t)h->dur, "wait_ns", (json_int_t)h->wait, "work_ns",
			(json_int_t)h->work, "kind", edge ? st_edge_kind_name(h->kind) : NULL,
			"label", edge ? hops[k].label : NULL));
	}
	res = json_pack("{s:o,s:I,s:o,s:o,s:I,s:I,s:I,s:b}", "hops", jh, "hops_total",
			(json_int_t)n, "units", units_json(steps, n), "kinds",
			kinds_json(steps, n), "total_ns",
			(json_int_t)(frontier - start), "wait_ns",
			(json_int_t)wait_sum, "work_ns", (json_int_t)work_sum, "truncated",
			truncated);
out:
	for (size_t k = 0; k < nh; k++) {
		free(hops[k].name);
		free(hops[k].label);
	}
	free(hops);
	free(steps);
	free(ar);
	free(seen.v);
	q_done(&q);
	return res;
}
