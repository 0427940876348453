/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-critical.c - the critical path: from the event that ends last
 * in a window (or a chosen one) back along the predecessor that finished
 * last, over stored edges and program order (deps-query.h: climbing out of
 * first children, down into last children), with each hop's waiting and
 * working time and the path's time by unit and by edge kind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-jw.h"
#include "deps/deps-query.h"

/*
 * The stored edges into ?1 of the kinds in mask ?2 whose source ends at ?3
 * or later, with that end, in no particular order.  Sources that cannot
 * finish last (most of those a buffer's old writes give) cost little:
 * ts_end_bound() (store/st-vtab.c) rules out those whose chunk ends earlier
 * from the chunk directory alone, before the events table is asked.
 */
static const char pred_sql[] =
	"SELECT e.src, e.kind, v.ts_end FROM edges e JOIN events v ON v.id = e.src "
	"WHERE e.dst = ?1 AND ((1 << e.kind) & ?2) != 0 AND ts_end_bound(e.src) >= ?3 "
	"AND v.ts_end >= ?3";

/*
 * The top-level slice ending last in [start, end] into *@out (0 if none):
 * on the in-order units (engines, queues, streams, threads), where the
 * work is, or else on any unit (a span on a track of its own, such as
 * Kineto's "PyTorch Profiler (0)", would otherwise end the path at
 * itself).  Return: 0 or -errno with the error set.
 */
static int
last_ending(struct dq *q, int64_t start, int64_t end, int64_t *out)
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
	while (dq_step(q, units) == SQLITE_ROW) {
		struct dq_ev u = { .kind = ST_EV_SLICE, .unit_kind = sqlite3_column_int(units, 1) };
		int k = dq_in_order(&u) ? 0 : 1;

		sqlite3_bind_int64(st, 1, sqlite3_column_int64(units, 0));
		sqlite3_bind_int64(st, 2, start);
		sqlite3_bind_int64(st, 3, end);
		if (dq_step(q, st) == SQLITE_ROW) {
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
 * Candidate predecessor @src (edge kind @kind, ending at @f): it becomes
 * the best one unless visited, or ending earlier than the best so far, or
 * ending with it and not a larger id (the first of equals: the order the
 * edges came in).
 */
static void
pred_take(const struct dq_ids *seen, int64_t src, int kind, int64_t f, int64_t *best,
	  int64_t *best_fin, int *best_kind)
{
	/* the set last: a probe into it is most often a cache miss on a long path */
	if (*best && (f < *best_fin || (f == *best_fin && src <= *best)))
		return;
	if (dq_ids_has(seen, src))
		return;
	*best = src;
	*best_fin = f;
	*best_kind = kind;
}

/*
 * pred_sql's answer through the store's direct reads: the same rows in the
 * same order, given to pred_take().  Return: 0, or 1 when they cannot
 * answer (the caller runs pred_sql, which says what went wrong).
 */
static int
pred_direct(struct dq *q, int64_t dst, unsigned kinds, const struct dq_ids *seen, int64_t bound,
	    int64_t *best, int64_t *best_fin, int *best_kind)
{
	size_t n;

	if (!dq_conn(q) || st_conn_edges(q->sc, dst, false, &q->ends, &n, &q->ends_cap))
		return 1;
	for (size_t i = 0; i < n; i++) {
		const struct st_edge_end *e = &q->ends[i];
		struct st_ev_brief b;
		int64_t f;
		int rc;

		if (e->kind < 0 || e->kind > 62 || !((UINT64_C(1) << e->kind) & kinds))
			continue;
		rc = st_conn_event_ending(q->sc, e->id, bound, &b);
		if (rc == -ENOENT || rc == 1)
			continue;	/* no such event (the join finds none either), or ends before */
		if (rc)
			return 1;
		f = (int64_t)((uint64_t)b.ts + (uint64_t)b.dur);
		if (f >= bound)
			pred_take(seen, e->id, e->kind, f, best, best_fin, best_kind);
	}
	return 0;
}

/*
 * pred_direct()'s answer from what the store recorded of @dst (ending at
 * @dst_end) when the trace was finished (st_conn_crit()): the source of
 * edges into it that ends last, and the one after it, with their ends.  A
 * source that ends before @bound settles it (none; no other ends later).
 * The first source not in @seen whose edge's kind is in @kinds can be taken
 * (it is read, and must end as recorded); one of another kind cannot be
 * passed over (another edge of it may be of the kinds), nor can the second
 * when it is visited too.  Return: 0 when that settles it, 1 when every
 * edge must be read (those cases, a store that cannot say).
 */
static int
pred_stored(struct dq *q, int64_t dst, int64_t dst_end, unsigned kinds,
	    const struct dq_ids *seen, int64_t bound, int64_t *best, int64_t *best_fin,
	    int *best_kind)
{
	struct st_crit c[2];
	struct st_ev_brief b;
	int64_t f;

	if (!dq_conn(q) || st_conn_crit(q->sc, dst, 1, c))
		return 1;
	for (int w = 0; w < 2; w++) {
		if (w && st_conn_crit(q->sc, dst, 2, c))
			return 1;
		if (c[w].src < 0)
			return 0;	/* no (other) stored edge into it */
		if (__builtin_sub_overflow(dst_end, c[w].lag, &f))
			return 1;
		if (f < bound)
			return 0;
		if (!((1u << c[w].kind) & kinds))
			return 1;
		if (dq_ids_has(seen, c[w].src))
			continue;	/* visited: the next source, if it ends late enough */
		if (st_conn_event(q->sc, c[w].src, &b) ||
		    (int64_t)((uint64_t)b.ts + (uint64_t)b.dur) != f)
			return 1;	/* not as recorded: the edges say */
		*best = c[w].src;
		*best_fin = f;
		*best_kind = c[w].kind;
		return 0;
	}
	return 1;	/* both visited */
}

/*
 * Among the stored edges into @dst (which ends at @dst_end) of @kinds whose
 * source is not in @seen, the one whose source ends last (the larger source
 * on equal ends), if it ends at or after @bound: then *@next, *@kind, *@fin
 * and *@label (malloc'd; the previous one is freed) are its.  Return: 0 or
 * -errno with the error set.
 */
static int
q_pred(struct dq *q, int64_t dst, int64_t dst_end, unsigned kinds, const struct dq_ids *seen,
       int64_t bound, int64_t *next, int *kind, int64_t *fin, char **label)
{
	int64_t best = 0, best_fin = bound;
	int best_kind = -1, rc, s = SQLITE_DONE;
	char *best_label = NULL;

	if (pred_stored(q, dst, dst_end, kinds, seen, bound, &best, &best_fin, &best_kind) &&
	    pred_direct(q, dst, kinds, seen, bound, &best, &best_fin, &best_kind)) {
		best = 0;
		best_fin = bound;
		if ((rc = dq_prep(q, &q->pred, pred_sql)))
			return rc;
		sqlite3_bind_int64(q->pred, 1, dst);
		sqlite3_bind_int(q->pred, 2, (int)kinds);
		sqlite3_bind_int64(q->pred, 3, bound);
		while ((s = dq_step(q, q->pred)) == SQLITE_ROW)
			pred_take(seen, sqlite3_column_int64(q->pred, 0),
				  sqlite3_column_int(q->pred, 1), sqlite3_column_int64(q->pred, 2),
				  &best, &best_fin, &best_kind);
		sqlite3_reset(q->pred);
	}
	if (s != SQLITE_DONE)
		return tc_err_set(q->err, -EIO, "critical path: %s", sqlite3_errmsg(q->db));
	/*
	 * its label: building every edge's label text would cost more, and
	 * none at all past the hops listed (q->no_names)
	 */
	if (best && !q->no_names && (rc = dq_label(q, best, dst, best_kind, NULL, &best_label)))
		return rc;
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
	int64_t wait, work;	/* the hop's share of the path */
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
 * Where hop @ev's waiting could start: the start of the outermost slice the
 * path went down into that holds it (the gap between two of its children
 * is its own work), INT64_MAX when none does.  Slices on @ev's unit that do
 * not hold it are dropped from @ar: the walk goes back in time on a unit,
 * so it will not be inside them again.
 */
static int64_t
around_cover(struct around *ar, size_t *nar, const struct dq_ev *ev)
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

/* The per-unit sums of a path, added up through a hash of the units (a path has few). */
struct unit_sums {
	struct unit_sum *u;	/* malloc'd, @n of @cap */
	size_t n, cap;
	uint32_t *at;		/* open addressing: unit -> 1 + its index in u, 0: free */
	size_t tcap;
};

static size_t
unit_hash(int64_t unit)
{
	return (size_t)(((uint64_t)unit * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The slot of @unit in s->at: its entry, or the free one where it goes. */
static size_t
unit_slot(const struct unit_sums *s, int64_t unit)
{
	size_t i = unit_hash(unit) & (s->tcap - 1);

	while (s->at[i] && s->u[s->at[i] - 1].unit != unit)
		i = (i + 1) & (s->tcap - 1);
	return i;
}

/* The sum of @unit in @s, added when new. */
static struct unit_sum *
unit_sum_of(struct unit_sums *s, int64_t unit)
{
	size_t i;

	if (2 * (s->n + 1) > s->tcap) {	/* at most half full */
		s->tcap = s->tcap ? 2 * s->tcap : 64;
		free(s->at);
		s->at = tc_xcalloc(s->tcap, sizeof(*s->at));
		for (size_t x = 0; x < s->n; x++)
			s->at[unit_slot(s, s->u[x].unit)] = (uint32_t)x + 1;
	}
	i = unit_slot(s, unit);
	if (!s->at[i]) {
		TC_GROW(s->u, s->n, s->cap, 16);
		s->u[s->n++] = (struct unit_sum){ .unit = unit };
		s->at[i] = (uint32_t)s->n;
	}
	return &s->u[s->at[i] - 1];
}

/*
 * Add a hop's @wait and @work on @unit to @s; *@cur: the sum added to last
 * (a path stays on a unit for a while).
 */
static void
unit_add(struct unit_sums *s, struct unit_sum **cur, int64_t unit, int64_t wait, int64_t work)
{
	if (!*cur || (*cur)->unit != unit)
		*cur = unit_sum_of(s, unit);
	(*cur)->hops++;
	(*cur)->work += work;
	(*cur)->wait += wait;
}

/*
 * The path's time per unit from its sums @s (freed), largest working share
 * first: [{"unit", "hops", "work_ns", "wait_ns"}] (a hop's waiting counts on
 * the unit that waited).
 */
static void
units_json(struct tc_jw *w, struct unit_sums *s)
{
	struct unit_sum *u = s->u;
	size_t m = s->n;

	free(s->at);
	if (m)	/* qsort(NULL, 0) is undefined */
		qsort(u, m, sizeof(*u), unit_sum_by_share);
	tc_jw_lit(w, "[");
	for (size_t k = 0; k < m; k++) {
		if (k)
			tc_jw_lit(w, ",");
		tc_jw_lit(w, "{\"unit\":");
		tc_jw_i64(w, u[k].unit);
		tc_jw_lit(w, ",\"hops\":");
		tc_jw_i64(w, u[k].hops);
		tc_jw_lit(w, ",\"work_ns\":");
		tc_jw_i64(w, u[k].work);
		tc_jw_lit(w, ",\"wait_ns\":");
		tc_jw_i64(w, u[k].wait);
		tc_jw_lit(w, "}");
	}
	tc_jw_lit(w, "]");
	free(u);
	*s = (struct unit_sums){ 0 };
}

/*
 * The path's time by the kind of edge that led into each hop, from the sums
 * @c (hops, work, wait of each kind): {"flow": {"hops", "work_ns",
 * "wait_ns"}, ...} for the kinds on the path (the first hop has none).
 * Waiting is what that kind of dependency cost.
 */
static void
kinds_json(struct tc_jw *w, int64_t c[ST_EDGE_NKINDS][3])
{
	bool first = true;

	tc_jw_lit(w, "{");
	for (int k = 0; k < ST_EDGE_NKINDS; k++) {
		if (!c[k][0])
			continue;
		if (!first)
			tc_jw_lit(w, ",");
		first = false;
		tc_jw_str(w, st_edge_kind_name(k));
		tc_jw_lit(w, ":{\"hops\":");
		tc_jw_i64(w, c[k][0]);
		tc_jw_lit(w, ",\"work_ns\":");
		tc_jw_i64(w, c[k][1]);
		tc_jw_lit(w, ",\"wait_ns\":");
		tc_jw_i64(w, c[k][2]);
		tc_jw_lit(w, "}");
	}
	tc_jw_lit(w, "}");
}

char *
deps_critical_path_text(sqlite3 *db, int64_t end_eid, int64_t start_ns, int64_t end_ns,
			unsigned kinds, int max_hops, int budget, size_t *len, struct tc_err *err)
{
	struct dq q = { .db = db, .err = err };
	struct dq_ids seen = { 0 };
	struct step *steps = NULL;
	struct hop *hops = NULL;
	struct around *ar = NULL;
	size_t nar = 0, arcap = 0;
	/* the hop, its program-order predecessor and its last child */
	struct dq_ev ev = { 0 }, pe, ce;
	size_t n = 0, nh = 0, cap = 0;
	int64_t cur, wait_sum = 0, work_sum = 0, frontier, start;
	struct tc_jw w = { 0 };
	struct unit_sums usums = { 0 };
	struct unit_sum *ucur = NULL;
	int64_t ksums[ST_EDGE_NKINDS][3] = { { 0 } };
	char *res = NULL;
	bool truncated = false, clipped = false;

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
		if (ev.id != cur && dq_event(&q, cur, &ev))
			goto out;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			steps = tc_xrealloc(steps, cap * sizeof(*steps));
		}
		steps[n++] = (struct step){ .unit = ev.unit, .ts = ev.ts, .dur = ev.dur, .kind = -1,
					    .cover = around_cover(ar, &nar, &ev) };
		if (nh < (size_t)max_hops)
			hops[nh++] = (struct hop){ .id = ev.id, .name = tc_xstrdup(ev.name) };
		/* past the listed hops, names (and labels "via" an ancestor) go unused */
		q.no_names = n > nh;
		dq_ids_add(&seen, cur);
		/*
		 * The predecessor that finished last, skipping visited ones: the
		 * last child and the program-order one first, whose end bounds
		 * the stored ones' lookups.  On equal ends a stored one wins, then
		 * the last child; among stored ones the larger id.
		 */
		pe.id = ce.id = 0;
		if ((kinds & (1u << ST_EDGE_ORDER)) && dq_last_child(&q, &ev, &seen, &ce)) {
			next = ce.id;
			best_kind = ST_EDGE_ORDER;
			best_fin = ce.ts + ce.dur;
			best_label = q.no_names ? NULL : tc_xstrdup(CHILD_LABEL);
		}
		if (kinds & (1u << ST_EDGE_ORDER)) {
			char via[sizeof(pe.name)];
			int64_t p = dq_po_climb(&q, &ev, via, sizeof(via));

			if (p && !dq_ids_has(&seen, p) && !dq_event(&q, p, &pe) &&
			    (!next || pe.ts + pe.dur > best_fin)) {
				next = p;
				best_kind = ST_EDGE_ORDER;
				best_fin = pe.ts + pe.dur;
				free(best_label);
				best_label = q.no_names ? NULL :
					     via[0] ? tc_xasprintf(PO_LABEL " via %s", via) :
						      tc_xstrdup(PO_LABEL);
			}
			tc_err_clear(err);
		}
		if (q_pred(&q, cur, (int64_t)((uint64_t)ev.ts + (uint64_t)ev.dur), kinds, &seen,
			   next ? best_fin : INT64_MIN, &next, &best_kind, &best_fin, &best_label)) {
			free(best_label);
			goto out;
		}
		if (next && best_fin < start_ns) {
			next = 0;	/* the predecessor lies before the window */
			clipped = true;
		}
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
			dq_ev_copy(&ev, &pe);
		} else if (next && next == ce.id) {
			if (nar == arcap) {
				arcap = arcap ? 2 * arcap : 16;
				ar = tc_xrealloc(ar, arcap * sizeof(*ar));
			}
			ar[nar++] = (struct around){ ev.unit, ev.ts, ev.ts + ev.dur };
			dq_ev_copy(&ev, &ce);
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
	/*
	 * The path starts where the first hop or the slices it lies in start
	 * (their code ran before it): all of that when nothing came before it,
	 * none when the budget cut the walk, and from the window's start on
	 * when the window did.
	 */
	frontier = n ? steps[n - 1].ts : 0;
	if (n && !truncated)
		frontier = clipped ? TC_MAX(TC_MIN(frontier, steps[n - 1].cover),
					    TC_MIN(frontier, start_ns)) :
				     TC_MIN(frontier, steps[n - 1].cover);
	start = frontier;
	/* one pass: a whole path is millions of bytes of steps */
	for (size_t k = n; k-- > 0;) {
		const struct step *h = &steps[k];
		int64_t end = h->ts + h->dur, from = TC_MAX(h->ts, frontier);
		/* a gap inside a slice the path went down into is that slice's own work */
		int64_t wait = TC_MAX(TC_MIN(h->ts, h->cover) - frontier, (int64_t)0);
		int64_t work = TC_MAX(end - from, (int64_t)0) +
			       TC_MAX(h->ts - TC_MAX(frontier, h->cover), (int64_t)0);

		wait_sum += wait;
		work_sum += work;
		frontier = TC_MAX(frontier, end);
		unit_add(&usums, &ucur, h->unit, wait, work);
		/* steps[k].kind is the edge from hop k + 1 into hop k; the first hop has none */
		if (k + 1 < n && h->kind >= 0 && h->kind < ST_EDGE_NKINDS) {
			ksums[h->kind][0]++;
			ksums[h->kind][1] += work;
			ksums[h->kind][2] += wait;
		}
		if (k < nh) {
			hops[k].wait = wait;
			hops[k].work = work;
		}
	}
	/* the latest nh hops; steps[k].kind is the edge from hop k + 1 into hop k */
	tc_jw_lit(&w, "{\"hops\":[");
	for (size_t k = nh; k-- > 0;) {
		const struct step *h = &steps[k];
		bool edge = k + 1 < n && h->kind >= 0;

		dq_ev_jw(&w, hops[k].id, hops[k].name, h->unit, h->ts, h->dur);
		tc_jw_lit(&w, ",\"wait_ns\":");
		tc_jw_i64(&w, hops[k].wait);
		tc_jw_lit(&w, ",\"work_ns\":");
		tc_jw_i64(&w, hops[k].work);
		tc_jw_lit(&w, ",\"kind\":");
		tc_jw_str(&w, edge ? st_edge_kind_name(h->kind) : NULL);
		tc_jw_lit(&w, ",\"label\":");
		tc_jw_str(&w, edge ? hops[k].label : NULL);
		if (k)
			tc_jw_lit(&w, "},");
		else
			tc_jw_lit(&w, "}");
	}
	tc_jw_lit(&w, "],\"hops_total\":");
	tc_jw_i64(&w, (int64_t)n);
	tc_jw_lit(&w, ",\"units\":");
	units_json(&w, &usums);
	tc_jw_lit(&w, ",\"kinds\":");
	kinds_json(&w, ksums);
	tc_jw_lit(&w, ",\"total_ns\":");
	tc_jw_i64(&w, frontier - start);
	tc_jw_lit(&w, ",\"wait_ns\":");
	tc_jw_i64(&w, wait_sum);
	tc_jw_lit(&w, ",\"work_ns\":");
	tc_jw_i64(&w, work_sum);
	if (truncated)
		tc_jw_lit(&w, ",\"truncated\":true}");
	else
		tc_jw_lit(&w, ",\"truncated\":false}");
	*len = w.len;
	res = w.p;
	w.p = NULL;
out:
	for (size_t k = 0; k < nh; k++) {
		free(hops[k].name);
		free(hops[k].label);
	}
	free(hops);
	free(steps);
	free(ar);
	free(usums.u);
	free(usums.at);
	dq_ids_free(&seen);
	tc_jw_free(&w);
	if (dq_done(&q) < 0) {	/* a read failed: not a path around what it missed */
		free(res);
		res = NULL;
	}
	return res;
}

json_t *
deps_critical_path(sqlite3 *db, int64_t end_eid, int64_t start_ns, int64_t end_ns,
		   unsigned kinds, int max_hops, int budget, struct tc_err *err)
{
	size_t len;
	char *text = deps_critical_path_text(db, end_eid, start_ns, end_ns, kinds, max_hops,
					     budget, &len, err);

	return dq_text_json(text, len, err);
}
