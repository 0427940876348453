/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-export.c - write a finished trace store as a plain
 * Perfetto trace (what `convert OUT.pftrace` produces).  Packets go out in
 * timestamp order on one sequence: a TrackDescriptor per device and unit,
 * then SLICE_BEGIN/SLICE_END pairs, instants and counters.  Flow edges
 * become flow_ids/terminating_flow_ids (one id per edge); the other edge
 * kinds, our event ids and the event args become debug annotations, which
 * standard readers show as args and otherwise ignore.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/tc-sort.h"
#include "common/tc-varint.h"
#include "store/store.h"
#include "ingest/perfetto-int.h"

typedef Perfetto__Protos__TracePacket PfPacket;
typedef Perfetto__Protos__TrackEvent PfEvent;
typedef Perfetto__Protos__DebugAnnotation PfAnnot;

#define PX_DEV_UUID(d) ((1ULL << 40) | (uint64_t)(d))
#define PX_UNIT_UUID(u) ((2ULL << 40) | (uint64_t)(u))
/* row @r of unit @u: 0 its own track, r >= 1 its r-th "(overlaps)" track */
#define PX_ROW_UUID(u, r) (((2ULL + (uint64_t)(r)) << 40) | (uint64_t)(u))
#define PX_UUID_UNIT(x) ((int)((x) & 0xffffffffffULL))
#define PX_UUID_ROW(x) ((int)((x) >> 40) - 2)

struct px_end {
	int64_t end;
	uint64_t uuid;
	int64_t ev;	/* the slice's event id */
};

/*
 * One unit's open slices.  A Perfetto track's slices must nest, a unit's
 * need not (async tracks): a slice that does not nest in the open one of
 * the unit's track goes to the first "(overlaps)" track where it does,
 * declared when first needed.
 */
struct px_row {
	int64_t *stack;		/* ends of the open slices, innermost last */
	size_t n, cap;
};

struct px_unit {
	struct px_row *rows;	/* [0]: the unit's own track */
	int nrows;
	char *name;
};

struct px_edge {
	int64_t ev;	/* src or dst event id */
	int64_t id;	/* edge rowid (the flow id) */
	int kind;
	int64_t other;
	bool late;	/* the source starts after the destination: bind at its end */
	const char *label;	/* in px_ctx.labels, NULL: none */
};

struct px_ctx {
	FILE *out;
	const char *name;
	struct tc_err *err;
	uint8_t *buf;
	size_t cap;
	bool failed;
	struct px_end *heap;
	size_t nheap, capheap;
	struct px_unit *units;
	int nunits;
	struct px_edge *by_src, *by_dst;
	struct tc_arena labels;	/* the edges' labels */
	size_t nedges;
	uint64_t packets;
};

static int
px_write(struct px_ctx *c, PfPacket *p)
{
	size_t len, n;
	uint8_t hdr[11];

	p->has_trusted_packet_sequence_id = 1;
	p->trusted_packet_sequence_id = 1;
	len = perfetto__protos__trace_packet__get_packed_size(p);
	if (len > c->cap) {
		c->cap = len * 2;
		c->buf = tc_xrealloc(c->buf, c->cap);
	}
	perfetto__protos__trace_packet__pack(p, c->buf);
	hdr[0] = 0x0a;
	n = 1 + tc_uvarint_put(hdr + 1, len);
	if (fwrite(hdr, 1, n, c->out) != n || fwrite(c->buf, 1, len, c->out) != len) {
		int e = tc_write_errno();

		c->failed = true;
		return tc_err_set(c->err, -e, "%s: write error: %s", c->name, strerror(e));
	}
	c->packets++;
	return 0;
}

/* ---- pending slice ends, a min-heap on end time ---- */

static void
px_heap_push(struct px_ctx *c, int64_t end, uint64_t uuid, int64_t ev)
{
	size_t i;

	if (c->nheap == c->capheap) {
		c->capheap = c->capheap ? c->capheap * 2 : 256;
		c->heap = tc_xrealloc(c->heap, c->capheap * sizeof(*c->heap));
	}
	i = c->nheap++;
	while (i && c->heap[(i - 1) / 2].end > end) {
		c->heap[i] = c->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->heap[i].end = end;
	c->heap[i].uuid = uuid;
	c->heap[i].ev = ev;
}

static struct px_end
px_heap_pop(struct px_ctx *c)
{
	struct px_end top = c->heap[0], last = c->heap[--c->nheap];
	size_t i = 0, k;

	while ((k = 2 * i + 1) < c->nheap) {
		if (k + 1 < c->nheap && c->heap[k + 1].end < c->heap[k].end)
			k++;
		if (c->heap[k].end >= last.end)
			break;
		c->heap[i] = c->heap[k];
		i = k;
	}
	if (c->nheap)
		c->heap[i] = last;
	return top;
}

static size_t px_edges_of(const struct px_edge *arr, size_t n, int64_t ev, size_t *first);

static int
px_emit_end(struct px_ctx *c, struct px_end e)
{
	PfPacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	PfEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	int u = PX_UUID_UNIT(e.uuid), row = PX_UUID_ROW(e.uuid), ret;
	uint64_t *tids = NULL;
	size_t first, n, i, nt = 0;

	if (u >= 0 && u < c->nunits && row >= 0 && row < c->units[u].nrows &&
	    c->units[u].rows[row].n)
		c->units[u].rows[row].n--;
	p.has_timestamp = 1;
	p.timestamp = (uint64_t)(e.end < 0 ? 0 : e.end);
	te.has_type = 1;
	te.type = 2;
	te.has_track_uuid = 1;
	te.track_uuid = e.uuid;
	p.track_event = &te;
	/* flows whose source starts later than this slice terminate at its end */
	n = px_edges_of(c->by_dst, c->nedges, e.ev, &first);
	for (i = 0; i < n; i++) {
		if (c->by_dst[first + i].kind != ST_EDGE_FLOW || !c->by_dst[first + i].late)
			continue;
		tids = tc_xrealloc(tids, (nt + 1) * sizeof(*tids));
		tids[nt++] = (uint64_t)c->by_dst[first + i].id;
	}
	te.n_terminating_flow_ids = nt;
	te.terminating_flow_ids = tids;
	ret = px_write(c, &p);
	free(tids);
	return ret;
}

/* Emit every slice end at or before @ts. */
static int
px_flush_ends(struct px_ctx *c, int64_t ts, bool all)
{
	int ret;

	while (c->nheap && (all || c->heap[0].end <= ts))
		if ((ret = px_emit_end(c, px_heap_pop(c))) < 0)
			return ret;
	return 0;
}

/* ---- descriptors ---- */

static int
px_descriptors(struct px_ctx *c, sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int ret = 0, sr;

	if (sqlite3_prepare_v2(db, "SELECT id, key, name, label FROM devices", -1, &s, NULL) !=
	    SQLITE_OK)
		goto sqlerr;
	while ((sr = sqlite3_step(s)) == SQLITE_ROW) {
		PfPacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
		int64_t id = sqlite3_column_int64(s, 0);
		const char *key = (const char *)sqlite3_column_text(s, 1);
		char *label = (char *)sqlite3_column_text(s, 3);
		long long pid;

		d.has_uuid = 1;
		d.uuid = PX_DEV_UUID(id);
		pd.has_pid = 1;
		pd.pid = (key && sscanf(key, "pid:%lld", &pid) == 1) ? (int32_t)pid :
			 (int32_t)(1000000 + id);
		pd.process_name = (char *)sqlite3_column_text(s, 2);
		if (label && *label) {	/* the labels as read, joined: one comes back the same */
			pd.n_process_labels = 1;
			pd.process_labels = &label;
		}
		d.process = &pd;
		p.track_descriptor = &d;
		if (!c->packets) {
			p.has_incremental_state_cleared = 1;
			p.incremental_state_cleared = 1;
		}
		if ((ret = px_write(c, &p)) < 0)
			goto out;
	}
	if (sr != SQLITE_DONE)
		goto sqlerr;
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT u.id, u.device_id, u.kind, u.name, u.key, d.key, u.sort "
			       "FROM units u JOIN devices d ON d.id = u.device_id", -1, &s,
			       NULL) != SQLITE_OK)
		goto sqlerr;
	while ((sr = sqlite3_step(s)) == SQLITE_ROW) {
		PfPacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
		Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
		int64_t id = sqlite3_column_int64(s, 0), dev = sqlite3_column_int64(s, 1);
		int kind = sqlite3_column_int(s, 2);
		const char *ukey = (const char *)sqlite3_column_text(s, 4);
		const char *dkey = (const char *)sqlite3_column_text(s, 5);
		char desc[64];
		long long pid, tid;

		if (id >= 0 && id < c->nunits)
			c->units[id].name = tc_xstrdup((const char *)sqlite3_column_text(s, 3));
		d.has_uuid = 1;
		d.uuid = PX_UNIT_UUID(id);
		d.has_parent_uuid = 1;
		d.parent_uuid = PX_DEV_UUID(dev);
		d.name = (char *)sqlite3_column_text(s, 3);
		/* what Perfetto shows as the track's description, and our reader's unit kind */
		snprintf(desc, sizeof(desc), PF_NX_UNIT_DESC "%s", st_unit_kind_name(kind));
		d.description = desc;
		if (sqlite3_column_type(s, 6) != SQLITE_NULL) {
			d.has_sibling_order_rank = 1;
			d.sibling_order_rank = sqlite3_column_int(s, 6);
		}
		if (kind == ST_UNIT_THREAD) {
			td.has_pid = 1;
			td.pid = (dkey && sscanf(dkey, "pid:%lld", &pid) == 1) ? (int32_t)pid :
				 (int32_t)(1000000 + dev);
			td.has_tid = 1;
			td.tid = (ukey && sscanf(ukey, "tid:%lld", &tid) == 1) ? tid : 2000000 + id;
			td.thread_name = d.name;
			d.thread = &td;
			d.has_parent_uuid = 0;
		} else if (kind == ST_UNIT_COUNTER) {
			d.counter = &cd;
		}
		p.track_descriptor = &d;
		if ((ret = px_write(c, &p)) < 0)
			goto out;
	}
	if (sr != SQLITE_DONE)
		goto sqlerr;
	goto out;
sqlerr:
	ret = tc_err_set(c->err, -EIO, "%s: reading the trace store: %s", c->name,
			 sqlite3_errmsg(db));
out:
	sqlite3_finalize(s);
	return ret;
}

/* ---- edges ---- */

static int
px_cmp_edge(const void *a, const void *b)
{
	const struct px_edge *x = a, *y = b;

	return x->ev < y->ev ? -1 : x->ev > y->ev ? 1 : (x->id > y->id) - (x->id < y->id);
}

static int
px_load_edges(struct px_ctx *c, sqlite3 *db)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int sr;

	if (sqlite3_prepare_v2(db, "SELECT x.rowid, x.src, x.dst, x.kind, a.ts > b.ts, x.label "
			       "FROM edges x JOIN events a ON a.id = x.src JOIN events b ON b.id = x.dst",
			       -1, &s, NULL) != SQLITE_OK)
		return tc_err_set(c->err, -EIO, "%s: reading edges: %s", c->name,
				  sqlite3_errmsg(db));
	while ((sr = sqlite3_step(s)) == SQLITE_ROW) {
		struct px_edge e;

		if (c->nedges == cap) {
			cap = cap ? cap * 2 : 256;
			c->by_src = tc_xrealloc(c->by_src, cap * sizeof(*c->by_src));
			c->by_dst = tc_xrealloc(c->by_dst, cap * sizeof(*c->by_dst));
		}
		e.id = sqlite3_column_int64(s, 0);
		e.kind = sqlite3_column_int(s, 3);
		e.late = sqlite3_column_int(s, 4) != 0;
		e.label = sqlite3_column_type(s, 5) == SQLITE_NULL ? NULL :
			  tc_arena_strndup(&c->labels, (const char *)sqlite3_column_text(s, 5),
					   (size_t)sqlite3_column_bytes(s, 5));
		e.ev = sqlite3_column_int64(s, 1);
		e.other = sqlite3_column_int64(s, 2);
		c->by_src[c->nedges] = e;
		e.ev = e.other;
		e.other = sqlite3_column_int64(s, 1);
		c->by_dst[c->nedges] = e;
		c->nedges++;
	}
	if (sr != SQLITE_DONE) {	/* a damaged store: not a file without its edges */
		sqlite3_finalize(s);
		return tc_err_set(c->err, -EIO, "%s: reading edges: %s", c->name,
				  sqlite3_errmsg(db));
	}
	sqlite3_finalize(s);
	if (c->nedges) {	/* qsort(NULL, 0) is undefined */
		qsort(c->by_src, c->nedges, sizeof(*c->by_src), px_cmp_edge);
		qsort(c->by_dst, c->nedges, sizeof(*c->by_dst), px_cmp_edge);
	}
	return 0;
}

/* The range of @arr (sorted by ev) with ev == @ev. */
static size_t
px_edges_of(const struct px_edge *arr, size_t n, int64_t ev, size_t *first)
{
	size_t lo = TC_LOWER_BOUND(n, m, arr[m].ev < ev), k;

	*first = lo;
	for (k = lo; k < n && arr[k].ev == ev; k++)
		;
	return k - lo;
}

/* ---- events ---- */

/*
 * One debug annotation per top-level arg: numbers, strings and booleans as
 * typed values, objects and arrays as legacy JSON text (owned by @aa[i]).
 */
static void
px_args(json_t *args, PfAnnot *aa, PfAnnot **out, struct tc_buf *unused)
{
	const char *key;
	json_t *v;
	size_t i = 0;

	json_object_foreach(args, key, v) {
		PfAnnot init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;

		aa[i] = init;
		aa[i].name = (char *)key;
		switch (json_typeof(v)) {
		case JSON_INTEGER:
			aa[i].has_int_value = 1;
			aa[i].int_value = json_integer_value(v);
			break;
		case JSON_REAL:
			aa[i].has_double_value = 1;
			aa[i].double_value = json_real_value(v);
			break;
		case JSON_STRING:
			aa[i].string_value = (char *)json_string_value(v);
			break;
		case JSON_TRUE:
		case JSON_FALSE:
			aa[i].has_bool_value = 1;
			aa[i].bool_value = json_is_true(v);
			break;
		default:
			aa[i].legacy_json_value = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			break;
		}
		out[i] = &aa[i];
		i++;
	}
}

static void
px_args_free(PfAnnot *aa, size_t n)
{
	size_t i;

	for (i = 0; aa && i < n; i++)
		free(aa[i].legacy_json_value);
	free(aa);
}

/* The TrackDescriptor of unit @unit's overflow row @row (>= 1). */
static int
px_declare_row(struct px_ctx *c, int unit, int row)
{
	PfPacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	const char *name = c->units[unit].name ? c->units[unit].name : "unit";
	char *nm = row == 1 ? tc_xasprintf("%s (overlaps)", name) :
			      tc_xasprintf("%s (overlaps %d)", name, row);
	int ret;

	d.has_uuid = 1;
	d.uuid = PX_ROW_UUID(unit, row);
	d.has_parent_uuid = 1;
	d.parent_uuid = PX_UNIT_UUID(unit);
	d.name = nm;
	d.description = (char *)PF_NX_OVER_DESC;	/* our reader: the parent's unit */
	p.track_descriptor = &d;
	ret = px_write(c, &p);
	free(nm);
	return ret;
}

static int
px_event(struct px_ctx *c, sqlite3_stmt *s)
{
	PfPacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	PfEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	PfAnnot a_id = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	PfAnnot a_args = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	PfAnnot a_deps = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	PfAnnot *fixed[3], **annots = fixed, *aa = NULL;
	json_t *args = NULL;
	size_t nargs = 0;
	struct tc_buf jsontexts;
	int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 2);
	int64_t dur = sqlite3_column_int64(s, 3);
	int unit = sqlite3_column_int(s, 1), kind = sqlite3_column_int(s, 4);
	char *cat = (char *)sqlite3_column_text(s, 7);
	uint64_t *fids = NULL, *tids = NULL;
	size_t first, n, i, nf = 0, nt = 0;
	struct tc_buf deps;
	uint64_t uuid = PX_UNIT_UUID(unit);
	int ret;

	if ((ret = px_flush_ends(c, ts, false)) < 0)
		return ret;
	tc_buf_init(&deps);
	tc_buf_init(&jsontexts);
	p.has_timestamp = 1;
	p.timestamp = (uint64_t)(ts < 0 ? 0 : ts);
	p.track_event = &te;
	te.name = (char *)sqlite3_column_text(s, 6);
	if (cat && *cat) {
		te.n_categories = 1;
		te.categories = &cat;
	}
	a_id.name = PF_NX_ID;
	a_id.has_int_value = 1;
	a_id.int_value = id;
	annots[te.n_debug_annotations++] = &a_id;
	if (sqlite3_column_type(s, 9) != SQLITE_NULL) {
		args = json_loads((const char *)sqlite3_column_text(s, 9), 0, NULL);
		if (json_is_object(args)) {
			nargs = json_object_size(args);
			aa = tc_xcalloc(nargs + 3, sizeof(*aa));
			annots = tc_xcalloc(nargs + 3, sizeof(*annots));
			annots[0] = &a_id;
			px_args(args, aa, annots + 1, &jsontexts);
			te.n_debug_annotations = 1 + nargs;
		} else {	/* not an object: keep the text */
			a_args.name = "args";
			a_args.legacy_json_value = (char *)sqlite3_column_text(s, 9);
			annots[te.n_debug_annotations++] = &a_args;
		}
	}
	/*
	 * flows: the source carries the edge id, the destination terminates it
	 * (what Perfetto draws); nx.deps lists every edge from here with its
	 * kind and label, which our reader takes back instead
	 */
	n = px_edges_of(c->by_src, c->nedges, id, &first);
	for (i = 0; i < n; i++) {
		const struct px_edge *e = &c->by_src[first + i];

		if (e->kind == ST_EDGE_FLOW) {
			fids = tc_xrealloc(fids, (nf + 1) * sizeof(*fids));
			fids[nf++] = (uint64_t)e->id;
		}
		tc_buf_printf(&deps, "%s{\"kind\":\"%s\",\"dst\":%" PRId64,
			      deps.len ? "," : "[", st_edge_kind_name(e->kind), e->other);
		if (e->label) {
			json_t *l = json_string(e->label);	/* NULL unless UTF-8 */
			char *txt = l ? json_dumps(l, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;

			if (txt)
				tc_buf_printf(&deps, ",\"label\":%s", txt);
			free(txt);
			json_decref(l);
		}
		tc_buf_adds(&deps, "}");
	}
	n = px_edges_of(c->by_dst, c->nedges, id, &first);
	for (i = 0; i < n; i++) {
		if (c->by_dst[first + i].kind != ST_EDGE_FLOW ||
		    (kind == ST_EV_SLICE && c->by_dst[first + i].late))
			continue;
		tids = tc_xrealloc(tids, (nt + 1) * sizeof(*tids));
		tids[nt++] = (uint64_t)c->by_dst[first + i].id;
	}
	if (deps.len) {
		tc_buf_adds(&deps, "]");
		a_deps.name = PF_NX_DEPS;
		a_deps.legacy_json_value = deps.data;
		annots[te.n_debug_annotations++] = &a_deps;
	}
	te.debug_annotations = annots;
	te.n_flow_ids = nf;
	te.flow_ids = fids;
	te.n_terminating_flow_ids = nt;
	te.terminating_flow_ids = tids;
	te.has_track_uuid = 1;
	te.has_type = 1;
	switch (kind) {
	case ST_EV_SLICE: {
		struct px_unit *u = unit >= 0 && unit < c->nunits ? &c->units[unit] : NULL;
		int row = 0;

		te.type = 1;
		if (u) {
			/* the first row where it nests (or that is empty) */
			while (row < u->nrows && u->rows[row].n &&
			       ts + dur > u->rows[row].stack[u->rows[row].n - 1])
				row++;
			if (row == u->nrows) {
				u->rows = tc_xrealloc(u->rows, (size_t)++u->nrows * sizeof(*u->rows));
				memset(&u->rows[row], 0, sizeof(u->rows[row]));
				if (row && (ret = px_declare_row(c, unit, row)) < 0)
					goto out;
			}
			if (u->rows[row].n == u->rows[row].cap) {
				u->rows[row].cap = u->rows[row].cap ? u->rows[row].cap * 2 : 16;
				u->rows[row].stack = tc_xrealloc(u->rows[row].stack,
								 u->rows[row].cap * sizeof(int64_t));
			}
			u->rows[row].stack[u->rows[row].n++] = ts + dur;
			uuid = PX_ROW_UUID(unit, row);
		}
		px_heap_push(c, ts + dur, uuid, id);
		break;
	}
	case ST_EV_INSTANT:
		te.type = 3;
		break;
	default:
		te.type = 4;
		te.name = NULL;
		te.n_categories = 0;
		te.n_debug_annotations = 0;
		te.has_double_counter_value = 1;
		te.double_counter_value = sqlite3_column_double(s, 8);
		break;
	}
	te.track_uuid = uuid;
	ret = px_write(c, &p);
out:
	free(fids);
	free(tids);
	tc_buf_free(&deps);
	px_args_free(aa, nargs);
	if (annots != fixed)
		free(annots);
	json_decref(args);
	tc_buf_free(&jsontexts);
	return ret;
}

int
pf_export_pftrace(sqlite3 *db, FILE *out, const char *out_name, struct tc_err *err)
{
	struct px_ctx c = { .out = out, .name = out_name, .err = err };
	sqlite3_stmt *s = NULL;
	int ret, i;

	tc_arena_init(&c.labels, 64 << 10);

	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) + 1 FROM units", -1, &s, NULL) !=
	    SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		ret = tc_err_set(err, -EIO, "%s: reading the trace store: %s", out_name,
				 sqlite3_errmsg(db));
		goto out;
	}
	c.nunits = sqlite3_column_int(s, 0);
	c.units = tc_xcalloc((size_t)c.nunits, sizeof(*c.units));
	sqlite3_finalize(s);
	s = NULL;
	if ((ret = px_descriptors(&c, db)) < 0 || (ret = px_load_edges(&c, db)) < 0)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT e.id, e.unit, e.ts, e.dur, e.kind, e.depth, "
			       "coalesce(n.s, ''), c.s, e.value, e.args FROM events e "
			       "LEFT JOIN strings n ON n.id = e.name "
			       "LEFT JOIN strings c ON c.id = e.cat "
			       "ORDER BY e.ts, e.dur DESC, e.id", -1, &s, NULL) != SQLITE_OK) {
		ret = tc_err_set(err, -EIO, "%s: reading events: %s", out_name, sqlite3_errmsg(db));
		goto out;
	}
	while ((ret = sqlite3_step(s)) == SQLITE_ROW)
		if ((ret = px_event(&c, s)) < 0)
			goto out;
	if (ret != SQLITE_DONE) {	/* a damaged store: not a file without its events */
		ret = tc_err_set(err, -EIO, "%s: reading events: %s", out_name, sqlite3_errmsg(db));
		goto out;
	}
	ret = px_flush_ends(&c, 0, true);
	if (!ret && fflush(out)) {
		int e = tc_write_errno();

		ret = tc_err_set(err, -e, "%s: write error: %s", out_name, strerror(e));
	}
out:
	sqlite3_finalize(s);
	for (i = 0; i < c.nunits; i++) {
		for (int r = 0; r < c.units[i].nrows; r++)
			free(c.units[i].rows[r].stack);
		free(c.units[i].rows);
		free(c.units[i].name);
	}
	free(c.units);
	free(c.heap);
	free(c.by_src);
	free(c.by_dst);
	tc_arena_free(&c.labels);
	free(c.buf);
	return ret;
}
