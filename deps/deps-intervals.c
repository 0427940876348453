/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-intervals.c - the interval map of one buffer: disjoint byte
 * intervals, each with its last writer and the events that read it since,
 * kept in a treap ordered by start offset.  An access cuts the intervals at
 * its two ends (O(log n) expected), detaches the covered ones, reports dependencies
 * and puts back either one interval (a write) or the pieces with the reader
 * added (a read).  Reader sets are shared, reference-counted lists, so
 * cutting an interval in two copies nothing.
 */
#include <stdlib.h>
#include "deps/deps-int.h"
#include "store/store.h"

/* A persistent list of readers: prepending shares the tail. */
struct rlist {
	int64_t eid;
	uint32_t ref;
	struct rlist *next;
};

struct node {
	uint64_t lo, hi;
	int64_t writer;		/* 0: never written in this trace */
	struct rlist *readers;	/* since the last write, newest first */
	uint32_t prio;
	struct node *l, *r;
};

struct deps_imap {
	struct node *root;
	size_t count;
	uint32_t rng;
	struct node **vec;	/* scratch for the detached range */
	size_t vlen, vcap;
};

static void
rl_put(struct rlist *r)
{
	while (r && --r->ref == 0) {
		struct rlist *next = r->next;

		free(r);
		r = next;
	}
}

static struct rlist *
rl_get(struct rlist *r)
{
	if (r)
		r->ref++;
	return r;
}

static uint32_t
rnd(struct deps_imap *m)
{
	uint32_t x = m->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	m->rng = x;
	return x;
}

static struct node *
node_new(struct deps_imap *m, uint64_t lo, uint64_t hi, int64_t writer, struct rlist *readers)
{
	struct node *n = tc_xmalloc(sizeof(*n));

	n->lo = lo;
	n->hi = hi;
	n->writer = writer;
	n->readers = readers;
	n->prio = rnd(m);
	n->l = n->r = NULL;
	m->count++;
	return n;
}

static void
node_free(struct deps_imap *m, struct node *n)
{
	rl_put(n->readers);
	free(n);
	m->count--;
}

/* Split @t into nodes with lo < @key (*l) and lo >= @key (*r). */
static void
split(struct node *t, uint64_t key, struct node **l, struct node **r)
{
	if (!t) {
		*l = *r = NULL;
	} else if (t->lo < key) {
		split(t->r, key, &t->r, r);
		*l = t;
	} else {
		split(t->l, key, l, &t->l);
		*r = t;
	}
}

/* Merge @a and @b where every key of @a is below every key of @b. */
static struct node *
merge(struct node *a, struct node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = merge(a->r, b);
		return a;
	}
	b->l = merge(a, b->l);
	return b;
}

static struct node *
rightmost(struct node *t)
{
	while (t && t->r)
		t = t->r;
	return t;
}

/*
 * If the last interval of @t runs past @x, cut it there and return the part
 * from @x on (a new node, sharing the reader set), else NULL.
 */
static struct node *
cut_tail(struct deps_imap *m, struct node *t, uint64_t x)
{
	struct node *last = rightmost(t), *n;

	if (!last || last->hi <= x)
		return NULL;
	n = node_new(m, x, last->hi, last->writer, rl_get(last->readers));
	last->hi = x;
	return n;
}

static void
collect(struct deps_imap *m, struct node *t)
{
	if (!t)
		return;
	collect(m, t->l);
	if (m->vlen == m->vcap) {
		m->vcap = m->vcap ? m->vcap * 2 : 16;
		m->vec = tc_xrealloc(m->vec, m->vcap * sizeof(*m->vec));
	}
	m->vec[m->vlen++] = t;
	collect(m, t->r);
}

struct deps_imap *
deps_imap_new(void)
{
	struct deps_imap *m = tc_xcalloc(1, sizeof(*m));

	m->rng = 0x9e3779b9u;
	return m;
}

static void
free_tree(struct deps_imap *m, struct node *t)
{
	if (!t)
		return;
	free_tree(m, t->l);
	free_tree(m, t->r);
	node_free(m, t);
}

void
deps_imap_free(struct deps_imap *m)
{
	if (!m)
		return;
	free_tree(m, m->root);
	free(m->vec);
	free(m);
}

size_t
deps_imap_count(const struct deps_imap *m)
{
	return m ? m->count : 0;
}

static struct rlist *
rl_push(struct rlist *tail, int64_t eid)
{
	struct rlist *r;

	if (tail && tail->eid == eid)	/* read twice by one event */
		return rl_get(tail);
	r = tc_xmalloc(sizeof(*r));
	r->eid = eid;
	r->ref = 1;
	r->next = rl_get(tail);
	return r;
}

void
deps_imap_access(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid,
		 deps_emit_fn emit, void *ctx)
{
	struct node *l, *mid, *r, *n;
	uint64_t cur = lo;
	size_t i;

	if (lo >= hi)
		return;
	/* fast path: the access covers exactly one interval (tiles reused whole) */
	for (n = m->root; n && n->lo != lo;)
		n = lo < n->lo ? n->l : n->r;
	if (n && n->hi == hi) {
		struct rlist *nr;

		if (write) {
			if (n->writer && n->writer != eid)
				emit(ctx, n->writer, ST_EDGE_OUTPUT, lo, hi);
			for (struct rlist *rd = n->readers; rd; rd = rd->next)
				if (rd->eid != eid)
					emit(ctx, rd->eid, ST_EDGE_ANTI, lo, hi);
			rl_put(n->readers);
			n->readers = NULL;
			n->writer = eid;
			return;
		}
		if (n->writer && n->writer != eid)
			emit(ctx, n->writer, ST_EDGE_FLOW, lo, hi);
		nr = rl_push(n->readers, eid);
		rl_put(n->readers);
		n->readers = nr;
		return;
	}
	/* detach the intervals inside [lo, hi), cutting the ones across its ends */
	split(m->root, lo, &l, &mid);
	n = cut_tail(m, l, lo);
	if (n)
		mid = merge(n, mid);
	split(mid, hi, &mid, &r);
	n = cut_tail(m, mid, hi);
	if (n)
		r = merge(n, r);
	m->vlen = 0;
	collect(m, mid);
	mid = NULL;
	for (i = 0; i < m->vlen; i++) {
		struct node *t = m->vec[i];

		t->l = t->r = NULL;
		if (write) {
			if (t->writer && t->writer != eid)
				emit(ctx, t->writer, ST_EDGE_OUTPUT, t->lo, t->hi);
			for (struct rlist *rd = t->readers; rd; rd = rd->next)
				if (rd->eid != eid)
					emit(ctx, rd->eid, ST_EDGE_ANTI, t->lo, t->hi);
			node_free(m, t);
			continue;
		}
		if (t->lo > cur)
			mid = merge(mid, node_new(m, cur, t->lo, 0, rl_push(NULL, eid)));
		if (t->writer && t->writer != eid)
			emit(ctx, t->writer, ST_EDGE_FLOW, t->lo, t->hi);
		{
			struct rlist *nr = rl_push(t->readers, eid);

			rl_put(t->readers);
			t->readers = nr;
		}
		mid = merge(mid, t);
		cur = t->hi;
	}
	if (write)
		mid = node_new(m, lo, hi, eid, NULL);
	else if (cur < hi)
		mid = merge(mid, node_new(m, cur, hi, 0, rl_push(NULL, eid)));
	m->root = merge(merge(l, mid), r);
}
