/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-chain.c - the bounded chain of dependencies around an event
 * (deps_chain()): a breadth-first walk over stored edges and program
 * order, up to a depth and a budget of edges.
 *
 * The walk reads the graph alone: the stored edges of each event it expands
 * (other ends and kinds, dq_stored()) and program order.  What it keeps is
 * read afterwards: the edges' labels in order of destination, the events in
 * order of id.  A chain's events lie scattered over the trace, so reading
 * them as the walk met them decoded an edge block or an event chunk for
 * almost every edge and event; in order, each block and chunk is decoded
 * once.  The answer is the same either way.
 */
#include <errno.h>
#include <stdlib.h>
#include "common/tc-jw.h"
#include "common/tc-sort.h"
#include "deps/deps-query.h"

/* An event the walk found, in the order it found them. */
struct ch_item {
	int64_t id;
	int hop;		/* < 0: predecessors, > 0: successors */
	size_t at, len;		/* its node's text in the nodes' buffer; len 0: no such event */
};

/* An edge of the answer, in the order the walk took them. */
struct ch_edge {
	int64_t src, dst;
	int kind;
	char *label;		/* malloc'd; NULL: none, or not read yet (@pending) */
	bool pending;
};

/* Where to read in order: @key (an id), @i (an index into the answer). */
struct ch_ref {
	int64_t key;
	size_t i;
};

#define REF_LESS(x, y) ((x)->key != (y)->key ? (x)->key < (y)->key : (x)->i < (y)->i)
TC_MSORT_DEFINE(ref_sort, struct ch_ref, REF_LESS)

/* Sort @v (@n of them) by key; @tmp is scratch for n / 2 + 1. */
static void
ch_sort(struct ch_ref *v, size_t n)
{
	struct ch_ref *tmp = tc_xmalloc((n / 2 + 1) * sizeof(*tmp));

	ref_sort(v, tmp, n);
	free(tmp);
}

/*
 * Expand @ev (found at @hop) in one direction: its neighbours of @kinds
 * (program order first, then the stored edges by kind and other end, as
 * many as @limit + 1), each edge new to @eseen taken while the budget
 * lasts, each event new to @seen queued.  Return: whether the budget ran
 * out.
 */
static bool
ch_expand(struct dq *q, const struct dq_ev *ev, int hop, bool out, unsigned kinds, int budget,
	  struct dq_set *seen, struct dq_set *eseen, struct ch_item **items, size_t *ni,
	  size_t *icap, struct ch_edge **edges, size_t *ne, size_t *ecap)
{
	int ahop = hop < 0 ? -hop : hop, nhop = out ? ahop + 1 : -(ahop + 1);
	size_t limit = (size_t)(budget - (int)*ne) + 1, n = 0, cap = 0;
	struct dq_nb *nb = NULL;
	bool truncated = false;

	if (kinds & (1u << ST_EDGE_ORDER)) {
		int64_t p = dq_po(q, ev, out);

		if (p) {
			nb = tc_xmalloc(sizeof(*nb));
			cap = 1;
			nb[n++] = (struct dq_nb){ .id = p, .kind = ST_EDGE_ORDER,
						  .label = tc_xstrdup(PO_LABEL) };
		}
	}
	if (n < limit && dq_stored(q, ev->id, out, kinds, limit - n, &nb, &n, &cap))
		tc_err_clear(q->err);	/* what was read stands */
	for (size_t i = 0; i < n; i++) {
		int64_t src = out ? ev->id : nb[i].id, dst = out ? nb[i].id : ev->id;

		if (truncated || !dq_set_add(eseen, src, dst, nb[i].kind)) {
			free(nb[i].label);
			continue;
		}
		if ((int)*ne >= budget) {
			truncated = true;
			free(nb[i].label);
			continue;
		}
		if (*ne == *ecap) {
			*ecap *= 2;
			*edges = tc_xrealloc(*edges, *ecap * sizeof(**edges));
		}
		(*edges)[(*ne)++] = (struct ch_edge){ src, dst, nb[i].kind, nb[i].label,
						      nb[i].pending };
		if (dq_set_add(seen, nb[i].id, 0, 0)) {
			if (*ni == *icap) {
				*icap *= 2;
				*items = tc_xrealloc(*items, *icap * sizeof(**items));
			}
			(*items)[(*ni)++] = (struct ch_item){ nb[i].id, nhop, 0, 0 };
		}
	}
	free(nb);
	return truncated;
}

/* Event @ev found at @hop as a node of the answer. */
static void
ch_node(struct tc_jw *w, const struct dq_ev *ev, int hop)
{
	tc_jw_lit(w, "{\"id\":");
	tc_jw_i64(w, ev->id);
	tc_jw_lit(w, ",\"name\":");
	tc_jw_str(w, ev->name);
	tc_jw_lit(w, ",\"unit\":");
	tc_jw_i64(w, ev->unit);
	tc_jw_lit(w, ",\"ts\":");
	tc_jw_i64(w, ev->ts);
	tc_jw_lit(w, ",\"dur\":");
	tc_jw_i64(w, ev->dur);
	tc_jw_lit(w, ",\"hop\":");
	tc_jw_i64(w, hop);
	tc_jw_lit(w, "}");
}

char *
deps_chain_text(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
		size_t *len, struct tc_err *err)
{
	struct dq q = { .db = db, .err = err };
	struct dq_set seen = { 0 }, eseen = { 0 };
	struct ch_item *items = NULL;
	struct ch_edge *edges = NULL;
	struct ch_ref *refs = NULL;
	size_t ni = 0, icap = 64, ne = 0, ecap = 64, nr;
	struct tc_jw nodes = { 0 }, w = { 0 };
	struct dq_ev ev;
	bool truncated = false, first;

	if (dq_event(&q, eid, &ev))
		goto out;
	if (!dir)
		dir = DEPS_DIR_IN | DEPS_DIR_OUT;
	if (budget <= 0)
		budget = 1000;
	items = tc_xmalloc(icap * sizeof(*items));
	edges = tc_xmalloc(ecap * sizeof(*edges));
	dq_set_add(&seen, eid, 0, 0);
	items[ni++] = (struct ch_item){ eid, 0, 0, 0 };

	/* the walk: names are read for the answer only */
	q.no_names = true;
	for (size_t qh = 0; qh < ni && !truncated; qh++) {
		int hop = items[qh].hop, ahop = hop < 0 ? -hop : hop;

		if (ahop >= depth)
			continue;
		if (dq_event(&q, items[qh].id, &ev)) {
			tc_err_clear(err);	/* no such event: listed nowhere, not expanded */
			continue;
		}
		for (int d = 0; d < 2 && !truncated; d++) {
			bool out = d == 1;

			if (!(dir & (out ? DEPS_DIR_OUT : DEPS_DIR_IN)))
				continue;
			if ((hop < 0 && out) || (hop > 0 && !out))
				continue;	/* predecessors expand backwards only */
			truncated = ch_expand(&q, &ev, hop, out, kinds, budget, &seen, &eseen,
					      &items, &ni, &icap, &edges, &ne, &ecap);
		}
	}

	/* the labels, by destination */
	refs = tc_xmalloc((ni > ne ? ni : ne) * sizeof(*refs) + sizeof(*refs));
	nr = 0;
	for (size_t i = 0; i < ne; i++)
		if (edges[i].pending)
			refs[nr++] = (struct ch_ref){ edges[i].dst, i };
	ch_sort(refs, nr);
	for (size_t r = 0; r < nr; r++) {
		struct ch_edge *e = &edges[refs[r].i];

		if (dq_label(&q, e->src, e->dst, e->kind, &e->label))
			tc_err_clear(err);
	}

	/* the events, by id */
	q.no_names = false;
	for (size_t i = 0; i < ni; i++)
		refs[i] = (struct ch_ref){ items[i].id, i };
	ch_sort(refs, ni);
	for (size_t r = 0; r < ni; r++) {
		struct ch_item *it = &items[refs[r].i];

		if (dq_event(&q, it->id, &ev)) {
			tc_err_clear(err);
			continue;
		}
		it->at = nodes.len;
		ch_node(&nodes, &ev, it->hop);
		it->len = nodes.len - it->at;
	}

	/* the answer, in the order the walk found them */
	tc_jw_lit(&w, "{\"nodes\":[");
	first = true;
	for (size_t i = 0; i < ni; i++) {
		if (!items[i].len)
			continue;
		if (!first)
			tc_jw_lit(&w, ",");
		tc_jw_raw(&w, nodes.p + items[i].at, items[i].len);
		first = false;
	}
	tc_jw_lit(&w, "],\"edges\":[");
	for (size_t i = 0; i < ne; i++) {
		if (i)
			tc_jw_lit(&w, ",");
		tc_jw_lit(&w, "{\"src\":");
		tc_jw_i64(&w, edges[i].src);
		tc_jw_lit(&w, ",\"dst\":");
		tc_jw_i64(&w, edges[i].dst);
		tc_jw_lit(&w, ",\"kind\":");
		tc_jw_str(&w, st_edge_kind_name(edges[i].kind));
		tc_jw_lit(&w, ",\"label\":");
		tc_jw_str(&w, edges[i].label);
		tc_jw_lit(&w, "}");
	}
	if (truncated)
		tc_jw_lit(&w, "],\"truncated\":true}");
	else
		tc_jw_lit(&w, "],\"truncated\":false}");
	*len = w.len;
out:
	for (size_t i = 0; i < ne; i++)
		free(edges[i].label);
	free(items);
	free(edges);
	free(refs);
	free(seen.v);
	free(eseen.v);
	tc_jw_free(&nodes);
	dq_done(&q);
	return w.p;	/* NULL when nothing was written: the error is set */
}

json_t *
deps_chain(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
	   struct tc_err *err)
{
	size_t len;
	char *text = deps_chain_text(db, eid, kinds, dir, depth, budget, &len, err);
	json_t *res;

	if (!text)
		return NULL;
	res = json_loadb(text, len, 0, NULL);
	free(text);
	if (!res)
		tc_err_set(err, -ENOMEM, "dependency chain: cannot read back its answer");
	return res;
}
