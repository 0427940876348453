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
	struct st_label_ref ref;	/* where it is (dq_label()) */
};

/* The walk's state, and what it found. */
struct ch {
	struct dq q;
	unsigned kinds;
	int budget;		/* edges in the answer, at most */
	bool truncated;		/* the budget ran out */
	struct dq_ids seen;	/* events found */
	struct dq_set eseen;	/* edges taken: (src, dst, kind) */
	struct ch_item *items;	/* malloc'd, @ni of @icap */
	size_t ni, icap;
	struct ch_edge *edges;	/* malloc'd, @ne of @ecap */
	size_t ne, ecap;
};

/* Where to read in order: @key (an id), @i (an index into the answer). */
struct ch_ref {
	int64_t key;
	size_t i;
};

#define REF_LESS(x, y) ((x)->key != (y)->key ? (x)->key < (y)->key : (x)->i < (y)->i)
TC_MSORT_DEFINE(ref_sort, struct ch_ref, REF_LESS)

/* Sort @v (@n of them) by key. */
static void
ch_sort(struct ch_ref *v, size_t n)
{
	struct ch_ref *tmp = tc_xmalloc((n / 2 + 1) * sizeof(*tmp));

	ref_sort(v, tmp, n);
	free(tmp);
}

/* Queue event @id, found at @hop, unless it was found before. */
static void
ch_found(struct ch *c, int64_t id, int hop)
{
	if (!dq_ids_add(&c->seen, id))
		return;
	TC_GROW(c->items, c->ni, c->icap, 64);
	c->items[c->ni++] = (struct ch_item){ .id = id, .hop = hop };
}

/*
 * Expand @ev (found at @hop) in one direction: its neighbours (program
 * order first, then the stored edges by kind and other end, as many as the
 * budget can still take plus one), each edge not taken before taken while
 * the budget lasts, each event at its other end queued.
 */
static void
ch_expand(struct ch *c, const struct dq_ev *ev, int hop, bool out)
{
	int ahop = hop < 0 ? -hop : hop, nhop = out ? ahop + 1 : -(ahop + 1);
	size_t limit = (size_t)(c->budget - (int)c->ne) + 1, n = 0, cap = 0;
	struct dq_nb *nb = NULL;

	if (c->kinds & (1u << ST_EDGE_ORDER)) {
		int64_t p = dq_po(&c->q, ev, out);

		if (p) {
			TC_GROW(nb, n, cap, 16);
			nb[n++] = (struct dq_nb){ .id = p, .kind = ST_EDGE_ORDER,
						  .label = tc_xstrdup(PO_LABEL) };
		}
	}
	if (n < limit && dq_stored(&c->q, ev->id, out, c->kinds, limit - n, &nb, &n, &cap))
		tc_err_clear(c->q.err);	/* what was read stands */
	for (size_t i = 0; i < n; i++) {
		int64_t src = out ? ev->id : nb[i].id, dst = out ? nb[i].id : ev->id;

		if (c->truncated || !dq_set_add(&c->eseen, src, dst, nb[i].kind)) {
			free(nb[i].label);
			continue;
		}
		if ((int)c->ne >= c->budget) {
			c->truncated = true;
			free(nb[i].label);
			continue;
		}
		TC_GROW(c->edges, c->ne, c->ecap, 64);
		c->edges[c->ne++] = (struct ch_edge){ src, dst, nb[i].kind, nb[i].label,
						      nb[i].pending, nb[i].ref };
		ch_found(c, nb[i].id, nhop);
	}
	free(nb);
}

/* The walk, breadth first from the event found first; names are not read. */
static void
ch_walk(struct ch *c, int dir, int depth)
{
	struct dq_ev ev;

	c->q.no_names = true;
	for (size_t qh = 0; qh < c->ni && !c->truncated; qh++) {
		int hop = c->items[qh].hop, ahop = hop < 0 ? -hop : hop;

		if (ahop >= depth)
			continue;
		if (dq_event(&c->q, c->items[qh].id, &ev)) {
			tc_err_clear(c->q.err);	/* no such event: listed nowhere, not expanded */
			continue;
		}
		for (int d = 0; d < 2 && !c->truncated; d++) {
			bool out = d == 1;

			if (!(dir & (out ? DEPS_DIR_OUT : DEPS_DIR_IN)))
				continue;
			if ((hop < 0 && out) || (hop > 0 && !out))
				continue;	/* predecessors expand backwards only */
			ch_expand(c, &ev, hop, out);
		}
	}
	c->q.no_names = false;
}

/* The labels the walk left to read, in order of destination. */
static void
ch_labels(struct ch *c)
{
	struct ch_ref *refs = tc_xmalloc((c->ne + 1) * sizeof(*refs));
	size_t nr = 0;

	for (size_t i = 0; i < c->ne; i++)
		if (c->edges[i].pending)
			refs[nr++] = (struct ch_ref){ c->edges[i].dst, i };
	ch_sort(refs, nr);
	for (size_t r = 0; r < nr; r++) {
		struct ch_edge *e = &c->edges[refs[r].i];

		if (dq_label(&c->q, e->src, e->dst, e->kind, &e->ref, &e->label))
			tc_err_clear(c->q.err);	/* listed without its label */
	}
	free(refs);
}

/* Event @ev found at @hop as a node of the answer. */
static void
ch_node(struct tc_jw *w, const struct dq_ev *ev, int hop)
{
	dq_ev_jw(w, ev->id, ev->name, ev->unit, ev->ts, ev->dur);
	tc_jw_lit(w, ",\"hop\":");
	tc_jw_i64(w, hop);
	tc_jw_lit(w, "}");
}

/* The events found, read in order of id, as nodes into @nodes (item.at, item.len). */
static void
ch_nodes(struct ch *c, struct tc_jw *nodes)
{
	struct ch_ref *refs = tc_xmalloc((c->ni + 1) * sizeof(*refs));
	struct dq_ev ev;

	for (size_t i = 0; i < c->ni; i++)
		refs[i] = (struct ch_ref){ c->items[i].id, i };
	ch_sort(refs, c->ni);
	for (size_t r = 0; r < c->ni; r++) {
		struct ch_item *it = &c->items[refs[r].i];

		if (dq_event(&c->q, it->id, &ev)) {
			tc_err_clear(c->q.err);	/* no such event: not a node */
			continue;
		}
		it->at = nodes->len;
		ch_node(nodes, &ev, it->hop);
		it->len = nodes->len - it->at;
	}
	free(refs);
}

/* The answer into @w, nodes and edges in the order the walk found them. */
static void
ch_answer(const struct ch *c, const struct tc_jw *nodes, struct tc_jw *w)
{
	bool first = true;

	tc_jw_lit(w, "{\"nodes\":[");
	for (size_t i = 0; i < c->ni; i++) {
		if (!c->items[i].len)
			continue;
		if (!first)
			tc_jw_lit(w, ",");
		tc_jw_raw(w, nodes->p + c->items[i].at, c->items[i].len);
		first = false;
	}
	tc_jw_lit(w, "],\"edges\":[");
	for (size_t i = 0; i < c->ne; i++) {
		const struct ch_edge *e = &c->edges[i];

		if (i)
			tc_jw_lit(w, ",");
		tc_jw_lit(w, "{\"src\":");
		tc_jw_i64(w, e->src);
		tc_jw_lit(w, ",\"dst\":");
		tc_jw_i64(w, e->dst);
		tc_jw_lit(w, ",\"kind\":");
		tc_jw_str(w, st_edge_kind_name(e->kind));
		tc_jw_lit(w, ",\"label\":");
		tc_jw_str(w, e->label);
		tc_jw_lit(w, "}");
	}
	if (c->truncated)
		tc_jw_lit(w, "],\"truncated\":true}");
	else
		tc_jw_lit(w, "],\"truncated\":false}");
}

char *
deps_chain_text(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
		size_t *len, struct tc_err *err)
{
	struct ch c = { .q = { .db = db, .err = err }, .kinds = kinds,
			.budget = budget > 0 ? budget : 1000 };
	struct tc_jw nodes = { 0 }, w = { 0 };
	struct dq_ev ev;

	if (dq_event(&c.q, eid, &ev))
		goto out;
	ch_found(&c, eid, 0);
	ch_walk(&c, dir ? dir : DEPS_DIR_IN | DEPS_DIR_OUT, depth);
	ch_labels(&c);
	ch_nodes(&c, &nodes);
	ch_answer(&c, &nodes, &w);
	*len = w.len;
out:
	for (size_t i = 0; i < c.ne; i++)
		free(c.edges[i].label);
	free(c.items);
	free(c.edges);
	dq_ids_free(&c.seen);
	free(c.eseen.v);
	tc_jw_free(&nodes);
	if (dq_done(&c.q) < 0) {	/* a read failed: not a chain without what it missed */
		free(w.p);
		w.p = NULL;
	}
	return w.p;	/* NULL when nothing was written: the error is set */
}

json_t *
deps_chain(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
	   struct tc_err *err)
{
	size_t len;
	char *text = deps_chain_text(db, eid, kinds, dir, depth, budget, &len, err);

	return dq_text_json(text, len, err);
}
