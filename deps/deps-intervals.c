/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-intervals.c - the interval map of one buffer: disjoint byte
 * intervals, each with its last writer and the events that read it since,
 * in a B+tree keyed by start offset (leaves of up to DI_FAN intervals, kept
 * in a doubly linked chain).
 *
 * An access [lo, hi) descends once to the leaf where lo belongs, walks the k
 * intervals it overlaps (reporting dependencies), and computes their
 * replacement: the parts of the first and last interval outside the access,
 * then one interval (a write) or the overlapped pieces with the reader added
 * plus new pieces for the gaps (a read).  The replacement is applied in
 * place when it has the same starts (a tile reused whole), spliced into the
 * leaf when everything stays in it (the common case), and otherwise erased
 * and inserted entry by entry, each O(log n).  Leaves are contiguous arrays,
 * so a descent touches a few cache lines per level instead of one node per
 * level of a binary tree.
 *
 * Reader sets are the DI_RD newest readers plus a shared, reference-counted
 * list of the older ones (prepending shares the tail), so cutting an interval in
 * two copies nothing.  Their cells come from a free list of slabs, not one
 * malloc() each.
 *
 * Before the tree, a map is a grid: while every access of the buffer starts
 * and ends on a multiple of a granule (a power of two: the largest that
 * divides every bound seen so far), the state of each granule is one cell of
 * an array indexed by offset / granule, and an access visits its cells with
 * no descent and no splitting.  Engine buffers are accessed in whole tiles,
 * so most maps stay grids.  A bound off the granule halves it as needed (each
 * cell copied, its reader list shared); a whole-buffer access, more than
 * DI_GRID_CELLS cells, or the process's grids past DI_GRID_BYTES turn the map
 * into the tree, one interval per cell in use.  The dependencies are those of
 * the tree byte for byte; a grid reports them a granule at a time where the
 * tree may report a longer interval at once, and the engine merges the
 * pieces of one source, kind and buffer into runs, so the edges and labels
 * stored are the same (tests/deps/grid.sh compares them; NX_DEPS_GRID=0
 * starts every map as a tree).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "deps/deps-int.h"
#include "store/store.h"

#define DI_FAN 32		/* entries per node */
#define DI_MAXH 32		/* tree height bound (splits only happen on full nodes) */
#define DI_SLAB_MAX 4096	/* reader cells per slab, at most */

#define DI_RD 3			/* readers kept in the interval itself */
#define DI_GRID_CELLS ((size_t)1 << 16)	/* cells of one grid, at most */
#define DI_GRID_BYTES ((size_t)64 << 20)	/* cell bytes of all the process's grids, at most */

/*
 * Event ids are kept in 32 bits (deps_imap_access() takes ids below 2^32,
 * as the store numbers them): an interval is then 32 bytes with its three
 * newest readers, half a cache line.
 */

/* A persistent list of readers: prepending shares the tail. */
struct rlist {
	uint32_t eid;
	uint32_t ref;
	struct rlist *next;	/* also the free-list link */
};

/*
 * The readers since the last write, newest first: the DI_RD newest in @r
 * (0: none), the older ones in a shared list (only when @r is full), so
 * most intervals (read a few times between writes) need no list walk and
 * no cell.
 */
struct di_rd {
	struct rlist *rest;
	uint32_t r[DI_RD];
};

struct di_ent {			/* an interval in a leaf; it starts at the leaf's key */
	uint64_t hi;
	struct rlist *rest;	/* the reader set, as struct di_rd */
	uint32_t writer;	/* 0: never written in this trace */
	uint32_t r[DI_RD];
};

struct di_node {
	uint32_t n;
	bool leaf;
	uint64_t key[DI_FAN];	/* leaf: interval starts; inner: smallest start below child i */
	union {
		struct di_node *child[DI_FAN];
		struct di_ent ent[DI_FAN];
	};
	struct di_node *prev, *next;	/* leaves, in key order */
};

/* An interval taken out of the tree or about to go in. */
struct di_iv {
	uint64_t lo, hi;
	uint32_t writer;
	struct di_rd rd;
};

static inline struct di_rd
ent_rd(const struct di_ent *e)
{
	struct di_rd rd = { e->rest, { 0 } };

	memcpy(rd.r, e->r, sizeof(rd.r));
	return rd;
}

static inline void
ent_set(struct di_ent *e, uint64_t hi, uint32_t writer, struct di_rd rd)
{
	e->hi = hi;
	e->writer = writer;
	e->rest = rd.rest;
	memcpy(e->r, rd.r, sizeof(e->r));
}

struct di_step {
	struct di_node *node;
	int idx;		/* child taken */
};

struct di_cell {		/* a granule of a grid: an interval without bounds */
	struct rlist *rest;
	uint32_t writer;
	uint32_t r[DI_RD];
};

static _Atomic size_t di_grid_bytes;	/* of all grids' cells */

struct deps_imap {
	struct di_node *root;
	size_t count;
	struct rlist *free_cells;
	void **slabs;
	size_t nslabs;
	size_t slab_size;
	struct di_iv *old, *neu;	/* scratch: the replaced and the replacing intervals */
	size_t cold, cneu;
	struct di_step path[DI_MAXH];	/* the last descent, root first */
	int depth;
	/* a grid while @grid: cell i holds [i << gshift, (i + 1) << gshift); no cells: no access yet */
	bool grid;
	unsigned gshift;
	struct di_cell *cells;
	size_t ncells;
};

/* ---- reader lists ---- */

static struct rlist *
rl_alloc(struct deps_imap *m)
{
	struct rlist *r;

	if (!m->free_cells) {
		size_t n = m->slab_size = m->slab_size ? TC_MIN(m->slab_size * 2, DI_SLAB_MAX) : 32;
		struct rlist *s = tc_xmalloc(n * sizeof(*s));

		m->slabs = tc_xrealloc(m->slabs, (m->nslabs + 1) * sizeof(*m->slabs));
		m->slabs[m->nslabs++] = s;
		for (size_t i = 0; i < n; i++) {
			s[i].next = m->free_cells;
			m->free_cells = &s[i];
		}
	}
	r = m->free_cells;
	m->free_cells = r->next;
	return r;
}

static void
rl_put(struct deps_imap *m, struct rlist *r)
{
	while (r && --r->ref == 0) {
		struct rlist *next = r->next;

		r->next = m->free_cells;
		m->free_cells = r;
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

/* A reader set that shares @rd's (one more reference on its list). */
static struct di_rd
rd_get(struct di_rd rd)
{
	rl_get(rd.rest);
	return rd;
}

/* @rd plus reader @eid (new references; @rd keeps its own). */
static struct di_rd
rd_push(struct deps_imap *m, struct di_rd rd, uint32_t eid)
{
	struct di_rd n = { rd.rest, { eid } };

	if (rd.r[0] == eid)	/* read twice by one event */
		return rd_get(rd);
	if (rd.r[DI_RD - 1]) {	/* full: the oldest goes to the list */
		struct rlist *c = rl_alloc(m);

		c->eid = rd.r[DI_RD - 1];
		c->ref = 1;
		c->next = rl_get(rd.rest);
		n.rest = c;
	}			/* else there is no list */
	for (int k = 1; k < DI_RD; k++)
		n.r[k] = rd.r[k - 1];
	return n;
}

/*
 * The access paths below are inlined into deps_imap_access() (any @emit)
 * and deps_imap_add() (pieces appended where they are found, no call).
 */
#define DI_INLINE static inline __attribute__((always_inline))

/*
 * Reader @eid into the set kept at *@rest and @r (an interval's or a grid
 * cell's), in place: what rd_push() gives, the set's reference on its list
 * moving to the new node when the oldest reader goes there.  Built on the
 * stack and passed to rd_push() by value, the set's 16-byte loads waited
 * for the 4-byte stores just made (a sixth of a grid's time at 1M events).
 */
DI_INLINE void
rd_push_at(struct deps_imap *m, struct rlist **rest, uint32_t *r, uint32_t eid)
{
	if (r[0] == eid)	/* read twice by one event */
		return;
	if (r[DI_RD - 1]) {
		struct rlist *n = rl_alloc(m);

		n->eid = r[DI_RD - 1];
		n->ref = 1;
		n->next = *rest;
		*rest = n;
	}
	for (int k = DI_RD - 1; k > 0; k--)
		r[k] = r[k - 1];
	r[0] = eid;
}

/* Report each reader of @rd but @eid as an anti dependency of [@a, @b). */
DI_INLINE void
rd_emit(struct di_rd rd, uint32_t eid, uint64_t a, uint64_t b, deps_emit_fn emit, void *ctx)
{
	for (int k = 0; k < DI_RD && rd.r[k]; k++)
		if (rd.r[k] != eid)
			emit(ctx, rd.r[k], ST_EDGE_ANTI, a, b);
	for (struct rlist *c = rd.rest; c; c = c->next)
		if (c->eid != eid)
			emit(ctx, c->eid, ST_EDGE_ANTI, a, b);
}

/* ---- the tree ---- */

static struct di_node *
node_new(bool leaf)
{
	struct di_node *n = tc_xcalloc(1, sizeof(*n));

	n->leaf = leaf;
	return n;
}

struct deps_imap *
deps_imap_new(void)
{
	static _Atomic int grid = -1;	/* NX_DEPS_GRID, read once */
	struct deps_imap *m = tc_xcalloc(1, sizeof(*m));

	if (grid < 0)
		grid = (int)tc_env_num("NX_DEPS_GRID", 0, 1, 1);
	m->root = node_new(true);
	m->grid = grid;
	return m;
}

void
deps_imap_set_grid(struct deps_imap *m, bool on)
{
	if (!m->count && !m->ncells)	/* nothing recorded yet */
		m->grid = on;
}

bool
deps_imap_is_grid(const struct deps_imap *m)
{
	return m->grid;
}

/* Give the grid's cells back (their reader lists are the caller's to put or move). */
static void
grid_free(struct deps_imap *m)
{
	atomic_fetch_sub(&di_grid_bytes, m->ncells * sizeof(*m->cells));
	free(m->cells);
	m->cells = NULL;
	m->ncells = 0;
}

static void
free_tree(struct deps_imap *m, struct di_node *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->leaf)
			rl_put(m, t->ent[i].rest);
		else
			free_tree(m, t->child[i]);
	}
	free(t);
}

void
deps_imap_free(struct deps_imap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ncells; i++)
		rl_put(m, m->cells[i].rest);
	grid_free(m);
	free_tree(m, m->root);
	for (size_t i = 0; i < m->nslabs; i++)
		free(m->slabs[i]);
	free(m->slabs);
	free(m->old);
	free(m->neu);
	free(m);
}

size_t
deps_imap_count(const struct deps_imap *m)
{
	return m ? m->count : 0;
}

/*
 * The last index with key <= @x, or -1: the keys at or below @x counted
 * without a branch per key (a binary search mispredicts on random keys).
 */
static inline int
node_le(const struct di_node *t, uint64_t x)
{
	int c = 0;

	for (uint32_t i = 0; i < t->n; i++)
		c += t->key[i] <= x;
	return c - 1;
}

/* Descend to the leaf where @x belongs, recording the path in m->path. */
static struct di_node *
descend(struct deps_imap *m, uint64_t x)
{
	struct di_node *t = m->root;

	m->depth = 0;
	while (!t->leaf) {
		int i = node_le(t, x);

		if (i < 0)
			i = 0;
		m->path[m->depth].node = t;
		m->path[m->depth].idx = i;
		m->depth++;
		t = t->child[i];
	}
	return t;
}

/* The first key of the node at path level @lvl (or the leaf) changed: pass it up. */
static void
fix_min(struct deps_imap *m, int lvl, uint64_t key)
{
	while (lvl-- > 0) {
		struct di_step *s = &m->path[lvl];

		s->node->key[s->idx] = key;
		if (s->idx != 0)
			break;
	}
}

/* Insert (@key, @child) after the path's child at level @lvl, splitting upwards. */
static void
insert_child(struct deps_imap *m, int lvl, uint64_t key, struct di_node *child)
{
	while (lvl-- > 0) {
		struct di_node *t = m->path[lvl].node, *r;
		int at = m->path[lvl].idx + 1, half;

		if (t->n < DI_FAN) {
			memmove(&t->key[at + 1], &t->key[at], (t->n - at) * sizeof(t->key[0]));
			memmove(&t->child[at + 1], &t->child[at], (t->n - at) * sizeof(t->child[0]));
			t->key[at] = key;
			t->child[at] = child;
			t->n++;
			return;
		}
		r = node_new(false);
		half = DI_FAN / 2;
		r->n = DI_FAN - half;
		memcpy(r->key, &t->key[half], r->n * sizeof(t->key[0]));
		memcpy(r->child, &t->child[half], r->n * sizeof(t->child[0]));
		t->n = half;
		{
			struct di_node *tgt = at <= half ? t : r;
			int pos = at <= half ? at : at - half;

			memmove(&tgt->key[pos + 1], &tgt->key[pos], (tgt->n - pos) * sizeof(t->key[0]));
			memmove(&tgt->child[pos + 1], &tgt->child[pos],
				(tgt->n - pos) * sizeof(t->child[0]));
			tgt->key[pos] = key;
			tgt->child[pos] = child;
			tgt->n++;
		}
		key = r->key[0];
		child = r;
	}
	/* the root split: a new root over the two halves */
	{
		struct di_node *root = node_new(false);

		root->n = 2;
		root->key[0] = m->root->key[0];
		root->child[0] = m->root;
		root->key[1] = key;
		root->child[1] = child;
		m->root = root;
	}
}

/* Insert interval @iv (disjoint from every interval in the tree). */
static void
tree_insert(struct deps_imap *m, const struct di_iv *iv)
{
	struct di_node *l = descend(m, iv->lo), *r, *tgt;
	int pos = node_le(l, iv->lo) + 1, half;

	if (l->n == DI_FAN) {
		r = node_new(true);
		half = DI_FAN / 2;
		r->n = DI_FAN - half;
		memcpy(r->key, &l->key[half], r->n * sizeof(l->key[0]));
		memcpy(r->ent, &l->ent[half], r->n * sizeof(l->ent[0]));
		l->n = half;
		r->prev = l;
		r->next = l->next;
		if (l->next)
			l->next->prev = r;
		l->next = r;
		tgt = pos <= half ? l : r;
		if (pos > half)
			pos -= half;
	} else {
		r = NULL;
		tgt = l;
	}
	memmove(&tgt->key[pos + 1], &tgt->key[pos], (tgt->n - pos) * sizeof(tgt->key[0]));
	memmove(&tgt->ent[pos + 1], &tgt->ent[pos], (tgt->n - pos) * sizeof(tgt->ent[0]));
	tgt->key[pos] = iv->lo;
	ent_set(&tgt->ent[pos], iv->hi, iv->writer, iv->rd);
	tgt->n++;
	if (tgt == l && pos == 0)
		fix_min(m, m->depth, l->key[0]);
	if (r)
		insert_child(m, m->depth, r->key[0], r);
	m->count++;
}

/* Remove the path's child at level @lvl from its parent (it became empty). */
static void
remove_child(struct deps_imap *m, int lvl)
{
	while (lvl-- > 0) {
		struct di_node *t = m->path[lvl].node;
		int at = m->path[lvl].idx;

		free(t->child[at]);
		memmove(&t->key[at], &t->key[at + 1], (t->n - at - 1) * sizeof(t->key[0]));
		memmove(&t->child[at], &t->child[at + 1], (t->n - at - 1) * sizeof(t->child[0]));
		t->n--;
		if (t->n > 0) {
			if (at == 0)
				fix_min(m, lvl, t->key[0]);
			break;
		}
		if (lvl == 0) {		/* the root lost its last child */
			t->leaf = true;
			return;
		}
	}
	/* a root with one child hands over to it */
	while (!m->root->leaf && m->root->n == 1) {
		struct di_node *old = m->root;

		m->root = old->child[0];
		free(old);
	}
}

/* Remove the interval starting at @lo (which must exist); its readers stay referenced. */
static void
tree_erase(struct deps_imap *m, uint64_t lo)
{
	struct di_node *l = descend(m, lo);
	int pos = node_le(l, lo);

	if (pos < 0 || l->key[pos] != lo)
		return;		/* cannot happen: the caller just saw it */
	memmove(&l->key[pos], &l->key[pos + 1], (l->n - pos - 1) * sizeof(l->key[0]));
	memmove(&l->ent[pos], &l->ent[pos + 1], (l->n - pos - 1) * sizeof(l->ent[0]));
	l->n--;
	m->count--;
	if (l->n > 0) {
		if (pos == 0)
			fix_min(m, m->depth, l->key[0]);
		return;
	}
	if (m->depth == 0)
		return;		/* the root leaf may be empty */
	if (l->prev)
		l->prev->next = l->next;
	if (l->next)
		l->next->prev = l->prev;
	remove_child(m, m->depth);
}

static struct di_iv *
iv_push(struct di_iv **v, size_t *cap, size_t n)
{
	if (n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = tc_xrealloc(*v, *cap * sizeof(**v));
	}
	return &(*v)[n];
}

/*
 * The access [key[@j], @hi) when it covers whole intervals of leaf @l (one
 * for a write, any run without gaps for a read): the intervals keep their
 * bounds, so they are updated where they lie, with the same dependencies
 * reported in the same order as the general path below.  Tiles reused
 * whole are the common case.  Return: false, having done nothing, when the
 * access is not of that kind.
 */
DI_INLINE bool
access_in_place(struct deps_imap *m, struct di_node *l, int j, uint64_t hi, bool write,
		uint32_t eid, deps_emit_fn emit, void *ctx)
{
	struct di_ent *e = &l->ent[j];
	int k = j;

	if (write && e->hi == hi) {
		if (e->writer && e->writer != eid)
			emit(ctx, e->writer, ST_EDGE_OUTPUT, l->key[j], hi);
		rd_emit(ent_rd(e), eid, l->key[j], hi, emit, ctx);
		rl_put(m, e->rest);
		ent_set(e, hi, eid, (struct di_rd){ NULL, { 0 } });
		return true;
	}
	/* intervals end to end from key[j] to exactly hi, all in this leaf */
	while (l->ent[k].hi < hi && k + 1 < (int)l->n && l->key[k + 1] == l->ent[k].hi)
		k++;
	if (l->ent[k].hi != hi)
		return false;
	if (write) {
		/*
		 * A write over several whole intervals: their dependencies in
		 * order, then the first becomes the written interval and the
		 * others leave the leaf (its first key stays).
		 */
		for (int i = j; i <= k; i++) {
			e = &l->ent[i];
			if (e->writer && e->writer != eid)
				emit(ctx, e->writer, ST_EDGE_OUTPUT, l->key[i], e->hi);
			rd_emit(ent_rd(e), eid, l->key[i], e->hi, emit, ctx);
		}
		for (int i = j; i <= k; i++)
			rl_put(m, l->ent[i].rest);
		ent_set(&l->ent[j], hi, eid, (struct di_rd){ NULL, { 0 } });
		memmove(&l->key[j + 1], &l->key[k + 1], (l->n - k - 1) * sizeof(l->key[0]));
		memmove(&l->ent[j + 1], &l->ent[k + 1], (l->n - k - 1) * sizeof(l->ent[0]));
		l->n -= (uint32_t)(k - j);
		m->count -= (size_t)(k - j);
		return true;
	}
	for (int i = j; i <= k; i++) {
		e = &l->ent[i];
		if (e->writer && e->writer != eid)
			emit(ctx, e->writer, ST_EDGE_FLOW, l->key[i], e->hi);
	}
	for (int i = j; i <= k; i++)
		rd_push_at(m, &l->ent[i].rest, l->ent[i].r, eid);
	return true;
}

/*
 * The access [@lo, @hi) inside interval @j of leaf @l but not the whole of
 * it (a tile of a larger interval): the interval is cut into the parts
 * before and after the access, which keep its writer and readers, and the
 * accessed part, all where it lies when the leaf has room for them.  The
 * same dependencies and the same intervals as the general path below.
 * Return: false, having done nothing, when the leaf is too full.
 */
DI_INLINE bool
access_within(struct deps_imap *m, struct di_node *l, int j, uint64_t lo, uint64_t hi,
	      bool write, uint32_t eid, deps_emit_fn emit, void *ctx)
{
	struct di_ent *e = &l->ent[j];
	uint64_t klo = l->key[j], khi = e->hi;
	uint32_t writer = e->writer;
	struct di_rd rd = ent_rd(e), mid;
	uint32_t add = (klo < lo) + (hi < khi);
	int at = j;

	if (l->n + add > DI_FAN)
		return false;
	if (write) {
		if (writer && writer != eid)
			emit(ctx, writer, ST_EDGE_OUTPUT, lo, hi);
		rd_emit(rd, eid, lo, hi, emit, ctx);
		mid = (struct di_rd){ NULL, { 0 } };
	} else {
		if (writer && writer != eid)
			emit(ctx, writer, ST_EDGE_FLOW, lo, hi);
		mid = rd_push(m, rd, eid);
	}
	memmove(&l->key[j + 1 + add], &l->key[j + 1], (l->n - j - 1) * sizeof(l->key[0]));
	memmove(&l->ent[j + 1 + add], &l->ent[j + 1], (l->n - j - 1) * sizeof(l->ent[0]));
	if (klo < lo) {		/* key[j] stays klo: no first key changes */
		l->key[at] = klo;
		ent_set(&l->ent[at++], lo, writer, rd_get(rd));
	}
	l->key[at] = lo;
	ent_set(&l->ent[at++], hi, write ? eid : writer, mid);
	if (hi < khi) {
		l->key[at] = hi;
		ent_set(&l->ent[at], khi, writer, rd_get(rd));
	}
	rl_put(m, rd.rest);	/* the cut interval's own reference */
	l->n += add;
	m->count += add;
	return true;
}

/* ---- the grid ---- */

static inline struct di_rd
cell_rd(const struct di_cell *c)
{
	struct di_rd rd = { c->rest, { 0 } };

	memcpy(rd.r, c->r, sizeof(rd.r));
	return rd;
}

/* Count @n more cell bytes against the process's grids: false when over. */
static bool
grid_take(size_t n)
{
	if (atomic_fetch_add(&di_grid_bytes, n) + n > DI_GRID_BYTES) {
		atomic_fetch_sub(&di_grid_bytes, n);
		return false;
	}
	return true;
}

/* At least @n cells (new ones empty).  false: past the limits, nothing changed. */
static bool
grid_grow(struct deps_imap *m, size_t n)
{
	size_t cap = m->ncells ? m->ncells : 64;

	while (cap < n)
		cap *= 2;
	cap = TC_MIN(cap, DI_GRID_CELLS);
	if (!grid_take((cap - m->ncells) * sizeof(*m->cells)))
		return false;
	m->cells = tc_xrealloc(m->cells, cap * sizeof(*m->cells));
	memset(m->cells + m->ncells, 0, (cap - m->ncells) * sizeof(*m->cells));
	m->ncells = cap;
	return true;
}

/*
 * The granule down to 1 << @shift: each cell becomes that many cells with
 * its state (its reader list shared).  false: past the limits, nothing changed.
 */
static bool
grid_refine(struct deps_imap *m, unsigned shift)
{
	unsigned d = m->gshift - shift;
	size_t f, n;
	struct di_cell *c;

	if ((DI_GRID_CELLS >> d) < m->ncells)	/* d < 64: shifts of 63 at most */
		return false;
	f = (size_t)1 << d;
	n = m->ncells * f;
	if (!grid_take((n - m->ncells) * sizeof(*c)))
		return false;
	c = tc_xmalloc(n * sizeof(*c));
	for (size_t i = 0; i < m->ncells; i++) {
		const struct di_cell *o = &m->cells[i];

		for (size_t k = 0; k < f; k++)
			c[i * f + k] = *o;
		for (size_t k = 1; k < f; k++)
			rl_get(o->rest);
		if (o->writer || o->r[0])
			m->count += f - 1;
	}
	free(m->cells);
	m->cells = c;
	m->ncells = n;
	m->gshift = shift;
	return true;
}

/* From the grid to the tree: one interval per cell in use, its readers moved. */
static void
grid_to_tree(struct deps_imap *m)
{
	m->grid = false;
	m->count = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		const struct di_cell *c = &m->cells[i];

		if (c->writer || c->r[0]) {	/* in use: up to the highest bound seen */
			struct di_iv iv = { (uint64_t)i << m->gshift,
					    (uint64_t)(i + 1) << m->gshift, c->writer, cell_rd(c) };

			tree_insert(m, &iv);
		}
	}
	grid_free(m);
}

/*
 * Make the grid ready for [@lo, @hi) (lo < hi): the granule halved and the
 * cells grown as needed.  false: the map is now the tree.
 */
static bool
grid_fit_slow(struct deps_imap *m, uint64_t lo, uint64_t hi)
{
	unsigned shift = (unsigned)__builtin_ctzll(lo | hi);	/* hi > 0 */

	if (m->ncells && shift > m->gshift)
		shift = m->gshift;
	if (hi == DEPS_WHOLE || (hi >> shift) > DI_GRID_CELLS)
		goto tree;
	if (!m->ncells)		/* the first access: grown below */
		m->gshift = shift;
	else if (shift < m->gshift && !grid_refine(m, shift))
		goto tree;
	if ((hi >> m->gshift) > m->ncells && !grid_grow(m, (size_t)(hi >> m->gshift)))
		goto tree;
	return true;
tree:
	grid_to_tree(m);
	return false;
}

static inline bool
grid_fit(struct deps_imap *m, uint64_t lo, uint64_t hi)
{
	if (m->ncells && !((lo | hi) & (((uint64_t)1 << m->gshift) - 1)) &&
	    (hi >> m->gshift) <= m->ncells)
		return true;
	return grid_fit_slow(m, lo, hi);
}

/* [@lo, @hi), which the grid fits, a granule at a time: as access_in_place() per interval. */
DI_INLINE void
grid_access(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, uint32_t eid,
	    deps_emit_fn emit, void *ctx)
{
	uint64_t g = (uint64_t)1 << m->gshift, a = lo;
	struct di_cell *c = &m->cells[lo >> m->gshift], *end = &m->cells[hi >> m->gshift];

	for (; c < end; c++, a += g) {
		if (!c->writer && !c->r[0])
			m->count++;
		if (write) {
			if (c->writer && c->writer != eid)
				emit(ctx, c->writer, ST_EDGE_OUTPUT, a, a + g);
			rd_emit(cell_rd(c), eid, a, a + g, emit, ctx);
			rl_put(m, c->rest);
			c->rest = NULL;
			c->writer = eid;
			memset(c->r, 0, sizeof(c->r));
		} else {
			if (c->writer && c->writer != eid)
				emit(ctx, c->writer, ST_EDGE_FLOW, a, a + g);
			rd_push_at(m, &c->rest, c->r, eid);
		}
	}
}

DI_INLINE void
imap_access(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid64,
	    deps_emit_fn emit, void *ctx)
{
	uint32_t eid = (uint32_t)eid64;
	struct di_node *l, *c;
	size_t nold = 0, nnew = 0, in_leaf = 0, i;
	uint64_t cur = lo;
	int j, ci;
	bool same;

	if (lo >= hi)
		return;
	if (m->grid && grid_fit(m, lo, hi)) {
		grid_access(m, lo, hi, write, eid, emit, ctx);
		return;
	}
	l = descend(m, lo);
	j = node_le(l, lo);
	if (j < 0 || l->ent[j].hi <= lo)
		j++;
	if (j < (int)l->n && l->key[j] == lo && access_in_place(m, l, j, hi, write, eid, emit, ctx))
		return;
	if (j < (int)l->n && l->key[j] <= lo && hi <= l->ent[j].hi &&
	    access_within(m, l, j, lo, hi, write, eid, emit, ctx))
		return;
	/* the overlapped intervals, in order; report what they cause */
	for (c = l, ci = j;;) {
		struct di_ent *e;
		struct di_iv *o;
		uint64_t a, b;

		if (ci == (int)c->n) {
			c = c->next;
			ci = 0;
			if (!c)
				break;
		}
		if (c->key[ci] >= hi)
			break;
		e = &c->ent[ci];
		o = iv_push(&m->old, &m->cold, nold);
		o->lo = c->key[ci];
		o->hi = e->hi;
		o->writer = e->writer;
		o->rd = ent_rd(e);
		nold++;
		if (c == l)
			in_leaf++;
		a = TC_MAX(o->lo, lo);
		b = TC_MIN(o->hi, hi);
		if (write) {
			if (o->writer && o->writer != eid)
				emit(ctx, o->writer, ST_EDGE_OUTPUT, a, b);
			rd_emit(o->rd, eid, a, b, emit, ctx);
		} else if (o->writer && o->writer != eid) {
			emit(ctx, o->writer, ST_EDGE_FLOW, a, b);
		}
		ci++;
	}
	/* the replacement */
	if (nold && m->old[0].lo < lo)
		*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ m->old[0].lo, lo,
			m->old[0].writer, rd_get(m->old[0].rd) };
	if (write) {
		*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ lo, hi, eid, { NULL, { 0 } } };
	} else {
		for (i = 0; i < nold; i++) {
			struct di_iv *o = &m->old[i];
			uint64_t a = TC_MAX(o->lo, lo), b = TC_MIN(o->hi, hi);

			if (a > cur)
				*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ cur, a, 0,
					{ NULL, { eid } } };
			*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ a, b, o->writer,
				rd_push(m, o->rd, eid) };
			cur = b;
		}
		if (cur < hi)
			*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ cur, hi, 0,
				{ NULL, { eid } } };
	}
	if (nold && m->old[nold - 1].hi > hi)
		*iv_push(&m->neu, &m->cneu, nnew++) = (struct di_iv){ hi, m->old[nold - 1].hi,
			m->old[nold - 1].writer, rd_get(m->old[nold - 1].rd) };

	/* apply it: in place, spliced into the leaf, or entry by entry */
	same = nold == nnew && in_leaf == nold;
	for (i = 0; same && i < nold; i++)
		same = m->old[i].lo == m->neu[i].lo;
	if (same || (in_leaf == nold && l->n - nold + nnew <= DI_FAN)) {
		if (!same) {
			memmove(&l->key[j + nnew], &l->key[j + nold], (l->n - j - nold) * sizeof(l->key[0]));
			memmove(&l->ent[j + nnew], &l->ent[j + nold], (l->n - j - nold) * sizeof(l->ent[0]));
			l->n = l->n - nold + nnew;
			m->count = m->count - nold + nnew;
		}
		for (i = 0; i < nnew; i++) {
			l->key[j + i] = m->neu[i].lo;
			ent_set(&l->ent[j + i], m->neu[i].hi, m->neu[i].writer, m->neu[i].rd);
		}
		if (j == 0 && !same)
			fix_min(m, m->depth, l->key[0]);
	} else {
		for (i = 0; i < nold; i++)
			tree_erase(m, m->old[i].lo);
		for (i = 0; i < nnew; i++)
			tree_insert(m, &m->neu[i]);
	}
	for (i = 0; i < nold; i++)
		rl_put(m, m->old[i].rd.rest);
}

void
deps_imap_access(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid,
		 deps_emit_fn emit, void *ctx)
{
	imap_access(m, lo, hi, write, eid, emit, ctx);
}

/* Append a piece of buffer out->buf to @ctx, a struct deps_pieces. */
DI_INLINE void
pieces_emit(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi)
{
	struct deps_pieces *out = ctx;
	struct deps_piece *p;

	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 64;
		out->v = tc_xrealloc(out->v, out->cap * sizeof(*out->v));
	}
	p = &out->v[out->n++];
	p->src = src;
	p->kind = kind;
	p->buf = out->buf;
	p->lo = lo;
	p->hi = hi;
}

void
deps_imap_add(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid,
	      struct deps_pieces *out)
{
	imap_access(m, lo, hi, write, eid, pieces_emit, out);
}
