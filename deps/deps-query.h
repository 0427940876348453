/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-query.h - private to deps/: the lookups that the dependency
 * queries (deps-query.c: edges and chains) share with the critical path
 * (deps-critical.c).  Each runs prepared statements over the events and
 * edges tables of one trace connection, kept in a struct dq for the query.
 */
#ifndef DEPS_QUERY_H
#define DEPS_QUERY_H

#include <stddef.h>
#include <string.h>
#include "deps/deps.h"

#define PO_LABEL "program order"
#define CHILD_LABEL "last child"	/* a slice returns after its last child */
#define PO_MAX_CLIMB 256	/* ancestors the critical path climbs through */

/* An event as the queries see it. */
struct dq_ev {
	int64_t id, unit, ts, dur;
	int depth, kind, unit_kind;
	int unit_depth;		/* the deepest slice of its unit */
	char name[256];
};

/*
 * dq_ev_copy - *@dst = *@src, the name up to its end only: a walk copies
 * events at every hop, and most of the name's 256 bytes are unused.
 */
static inline void
dq_ev_copy(struct dq_ev *dst, const struct dq_ev *src)
{
	size_t n;

	memcpy(dst, src, offsetof(struct dq_ev, name));
	if (!src->name[0]) {	/* past the hops listed, a walk reads no names */
		dst->name[0] = 0;
		return;
	}
	n = strnlen(src->name, sizeof(src->name) - 1);
	memcpy(dst->name, src->name, n);
	dst->name[n] = 0;
}

/*
 * One query's connection, error and statements (prepared on first use),
 * and the event dq_event() read last (a walk often reads an event twice:
 * once as a candidate, once as the next hop).
 */
#define DQ_UNITS 64	/* units cached per query (direct-mapped by id) */
#define DQ_NAMES 256	/* names cached per query (direct-mapped by id) */
struct dq_name;

struct dq {
	sqlite3 *db;
	struct tc_err *err;
	sqlite3_stmt *ev, *unit, *name, *parent, *prev, *next, *in, *out, *pred, *label;
	/* the store's direct reads (NULL: SQL only), looked for on first use */
	struct st_conn *sc;
	bool sc_tried;
	struct st_edge_end *ends;	/* malloc'd; the stored edges of an event, as read */
	size_t ends_cap;
	struct tc_buf text;	/* a label read (tc_buf_free() in dq_done()) */
	struct dq_name *names;	/* malloc'd on first use: DQ_NAMES names read */
	struct dq_ev last;	/* last.id == 0: none */
	bool last_named;	/* last read with its name */
	struct dq_unit {
		bool known;
		int64_t id;
		int kind, max_depth;
	} units[DQ_UNITS];
	bool no_names;		/* dq_event() may leave names empty (a walk past what it lists) */
	/*
	 * the first read that failed (a damaged store), with the store's
	 * message then: lookups that treat a failed read as "none" still end
	 * the query with it (dq_done())
	 */
	int io_rc;
	char io_msg[200];
};

/* An open-addressing set of (a, b, c) triples (c < 8); zero-initialise, free(v). */
struct dq_set {
	struct trip {
		int64_t a, b;
		int c;	/* -1: empty */
	} *v;
	size_t n, cap;
};

/*
 * A set of event ids: a bitmap in pages of DQ_IDS_PAGE ids, allocated as
 * ids fall in them (ids are dense in a store: a path or chain over a
 * million events touches a few pages, and a probe reads one word of one,
 * where a hash set of as many ids misses the cache); ids past
 * DQ_IDS_MAX go to @far.  Zero-initialise, free with dq_ids_free().
 */
#define DQ_IDS_PAGE (1 << 16)
#define DQ_IDS_MAX (INT64_C(1) << 32)
struct dq_ids {
	uint64_t **pages;	/* [npages]; NULL: no id there */
	size_t npages;
	struct dq_set far;
};

/**
 * dq_prep - prepare @sql into *@st on first use, else reset it and clear
 * its bindings.  Return: 0 or -EIO with q->err set.
 */
int dq_prep(struct dq *q, sqlite3_stmt **st, const char *sql);

/** dq_conn - the store's direct reads for @q's connection, NULL when there are none. */
struct st_conn *dq_conn(struct dq *q);

/**
 * dq_step - sqlite3_step(@st) for @q: a step that fails (not a row, not the
 * end) is noted in q->io_rc with the store's message.  Return: its result.
 */
int dq_step(struct dq *q, sqlite3_stmt *st);

/**
 * dq_done - finalize every statement of @q and free what it holds.
 * Return: 0, or -EIO with q->err set when a read of the query failed
 * (dq_step()): its answer must not be given.
 */
int dq_done(struct dq *q);

/**
 * dq_event - look up event @id into *@ev (its name may be empty when q->no_names).
 * Return: 0 or -ENOENT with q->err set.
 */
int dq_event(struct dq *q, int64_t id, struct dq_ev *ev);

/** dq_in_order - whether @ev is a slice on an engine, queue, stream or thread. */
bool dq_in_order(const struct dq_ev *ev);

/**
 * dq_po_climb - @ev's program-order predecessor, or, for a first child, that
 * of the nearest ancestor that has one (the thread reached @ev when it
 * entered that ancestor).  *@via gets the ancestor's name, "" when @ev has
 * a sibling before it.  Return: the predecessor's id or 0.
 */
int64_t dq_po_climb(struct dq *q, const struct dq_ev *ev, char *via, size_t vlen);

/**
 * dq_last_child - the last child of @ev into *@c, if @ev has one not in
 * @seen: the slice one level down on its (in-order) unit that starts last
 * within it and ends within it; a slice returns after its last child.
 * Return: whether there is one.
 */
bool dq_last_child(struct dq *q, const struct dq_ev *ev, const struct dq_ids *seen,
		   struct dq_ev *c);

/**
 * dq_po - the program-order neighbour of @ev: its previous sibling, or
 * with @after its next one.  Return: its id, 0 when none.
 */
int64_t dq_po(struct dq *q, const struct dq_ev *ev, bool after);

/* A stored edge of an event, seen from the event: the other end and kind. */
struct dq_nb {
	int64_t id;
	int kind;
	char *label;		/* malloc'd; NULL: none, or not read yet (@pending) */
	bool pending;		/* the label is to be read with dq_label(), from @ref */
	struct st_label_ref ref;
};

/**
 * dq_stored - the stored edges into @id (or, with @out, out of it) of
 * @kinds, by kind and then the other end, the first @limit of them,
 * appended to *@v (*@n of *@cap, grown with realloc; the caller frees the
 * labels and *@v).  The direct reads leave the labels pending (reading them
 * in order of destination later reads each edge block once); SQL, where the
 * direct reads cannot answer, reads them.  Return: 0 or -EIO with q->err set.
 */
int dq_stored(struct dq *q, int64_t id, bool out, unsigned kinds, size_t limit,
	      struct dq_nb **v, size_t *n, size_t *cap);

/**
 * dq_label - the label of the first stored edge @src -> @dst of @kind (the
 * one the edges table lists first) into *@label (malloc'd; NULL when it has
 * none or there is no such edge).  @ref, when not NULL and not
 * ST_LABEL_AT_DST, is where that edge's label is (st_conn_edges() read it
 * with the edge): no lookup in the edges of @dst then.
 * Return: 0 or -EIO with q->err set.
 */
int dq_label(struct dq *q, int64_t src, int64_t dst, int kind, const struct st_label_ref *ref,
	     char **label);

/**
 * dq_text_json - an answer written as JSON text (@text, @len bytes; freed
 * here, NULL: none) read back as a JSON value, for the callers that want
 * one.  Return: a new reference, or NULL with @err set (already set when
 * @text is NULL).
 */
json_t *dq_text_json(char *text, size_t len, struct tc_err *err);

/** dq_ev_json - @ev as the API shows an event: {id, name, unit, ts, dur} (new reference). */
json_t *dq_ev_json(const struct dq_ev *ev);

struct tc_jw;

/**
 * dq_ev_jw - the same as JSON text into @w, left open: {"id", "name", "unit",
 * "ts", "dur" of the event given; the caller adds its fields and the "}".
 */
void dq_ev_jw(struct tc_jw *w, int64_t id, const char *name, int64_t unit, int64_t ts,
	      int64_t dur);

/** dq_set_add - insert (a, b, c) into @s.  Return: true when it was new. */
bool dq_set_add(struct dq_set *s, int64_t a, int64_t b, int c);

/** dq_set_has - whether @s holds (a, b, c). */
bool dq_set_has(const struct dq_set *s, int64_t a, int64_t b, int c);

/** dq_ids_add - insert @id into @s.  Return: true when it was new. */
bool dq_ids_add(struct dq_ids *s, int64_t id);

/** dq_ids_has - whether @s holds @id. */
bool dq_ids_has(const struct dq_ids *s, int64_t id);

/** dq_ids_free - free what @s holds (it is empty again). */
void dq_ids_free(struct dq_ids *s);

#endif /* DEPS_QUERY_H */
