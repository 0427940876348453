/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-json-sync.c - CUDA synchronisation in Kineto traces as `order`
 * edges (issue #7's "explicit waits a source reports").  Kineto writes each
 * synchronisation CUPTI saw as an X event of category "cuda_sync" on the
 * GPU stream's row, with its correlation id (the host call's) and, for a
 * cross-stream wait, "wait_on_stream":
 *
 *  - "Stream Wait Event" on stream X waiting on stream Y: the work launched
 *    on Y before the wait was issued must finish before X goes on.  Edge:
 *    the last operation on Y launched before the wait (correlation below the
 *    wait's) that ended by the time X's next operation started -> that next
 *    operation on X.  The wait marker itself ends early (it is the command,
 *    not the blocking), so the edge goes to the operation that waited.
 *  - "Stream Sync", "Event Sync" (stream X, or "wait_on_stream"), "Context
 *    Sync" (every stream of the device): the host call blocked until the
 *    work launched before it had finished.  Edge: the last such operation
 *    (on the device: the one that ended last) -> the host call
 *    (cudaStreamSynchronize, ...), found through its "ac2g" launch flow; the
 *    sync event itself when the trace has no such flow.
 *
 * An operation's correlation id comes from the "ac2g" flow that binds its
 * launch to it (Kineto writes one per kernel, copy and set, with the
 * correlation as the flow id).  Where a stream has no such flows the
 * operation is chosen by time alone.  Only top-level slices that are not
 * sync events themselves count as operations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common/tc-sort.h"
#include "store/library.h"
#include "ingest/json-int.h"

#define SYNC_SCAN_MAX 4096	/* slices looked at per stream for one sync */
#define CONTEXT_UNITS_MAX 256	/* streams of one device for a Context Sync */

struct sync_ev {
	int kind;		/* enum ij_sync_kind */
	int unit, dev;
	uint32_t seq;
	int64_t ts, end;
	int64_t corr;		/* -1 unknown */
	int64_t wait_stream;	/* -1 none */
};

/* A launch flow bound at both ends: host call @src -> device operation @dst. */
struct sync_launch {
	uint32_t src, dst;
	int64_t corr;
};

struct ij_syncs {
	struct sync_ev *ev;
	size_t n, cap;
	struct sync_ev **by_corr;	/* sorted by corr, built on first lookup */
	struct sync_launch *ln;
	size_t nln, capln;
	uint8_t *is_sync;	/* bitmap by seq, built at resolve */
};

#define GROW(arr, n, cap) TC_GROW(arr, n, cap, 64)

void
ij_syncs_add(struct ij_syncs **sp, int kind, int unit, int dev, int64_t seq, int64_t ts,
	     int64_t end, int64_t corr, int64_t wait_stream)
{
	struct ij_syncs *s = *sp;

	if (seq < 1 || seq >= UINT32_MAX)
		return;
	if (!s)
		s = *sp = tc_xcalloc(1, sizeof(*s));
	GROW(s->ev, s->n, s->cap);
	s->ev[s->n++] = (struct sync_ev){ .kind = kind, .unit = unit, .dev = dev,
					  .seq = (uint32_t)seq, .ts = ts, .end = end,
					  .corr = corr, .wait_stream = wait_stream };
}

void
ij_syncs_launch(struct ij_syncs *s, int64_t src, int64_t dst, int64_t corr)
{
	if (!s || src < 1 || dst < 1 || src >= UINT32_MAX || dst >= UINT32_MAX)
		return;
	GROW(s->ln, s->nln, s->capln);
	s->ln[s->nln++] = (struct sync_launch){ (uint32_t)src, (uint32_t)dst, corr };
}

void
ij_syncs_free(struct ij_syncs *s)
{
	if (!s)
		return;
	free(s->ev);
	free(s->by_corr);
	free(s->ln);
	free(s->is_sync);
	free(s);
}

static int
corr_cmp(const void *a, const void *b)
{
	const struct sync_ev *x = *(struct sync_ev *const *)a, *y = *(struct sync_ev *const *)b;

	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

int64_t
ij_syncs_by_corr(struct ij_syncs *s, int64_t corr)
{
	size_t lo;

	if (!s || corr < 0)
		return 0;
	if (!s->by_corr) {
		s->by_corr = tc_xmalloc((s->n + 1) * sizeof(*s->by_corr));
		for (size_t i = 0; i < s->n; i++)
			s->by_corr[i] = &s->ev[i];
		qsort(s->by_corr, s->n, sizeof(*s->by_corr), corr_cmp);
	}
	lo = TC_LOWER_BOUND(s->n, m, s->by_corr[m]->corr < corr);
	return lo < s->n && s->by_corr[lo]->corr == corr ? s->by_corr[lo]->seq : 0;
}

static inline bool
launch_less(const struct sync_launch *x, const struct sync_launch *y)
{
	return x->dst < y->dst;
}

/* launch_sort(): common/tc-sort.h (the flows come nearly in order) */
TC_MSORT_DEFINE(launch_sort, struct sync_launch, launch_less)

/* The launch flow into operation @seq, or NULL. */
static const struct sync_launch *
launch_of(const struct ij_syncs *s, uint32_t seq)
{
	size_t lo = TC_LOWER_BOUND(s->nln, m, s->ln[m].dst < seq);

	return lo < s->nln && s->ln[lo].dst == seq ? &s->ln[lo] : NULL;
}

static bool
is_sync(const struct ij_syncs *s, uint32_t seq)
{
	return s->is_sync[seq >> 3] & (1u << (seq & 7));
}

/* A top-level slice that is not a sync event: an operation of the stream. */
static bool
is_op(const struct ij_syncs *s, const struct ij_slice *x)
{
	return x->parent < 0 && !is_sync(s, x->seq);
}

/*
 * The last operation on @unit that started by @start_by and ended by
 * @end_by and whose launch came before correlation @corr, or NULL.  Where
 * the stream has no launch flows (or @corr is unknown) the last one that
 * ended by @start_by, by time alone.
 */
static const struct ij_slice *
last_op(const struct ij_syncs *s, const struct ij_slice *sl, size_t nsl, int unit,
	int64_t corr, int64_t start_by, int64_t end_by)
{
	const struct ij_slice *by_time = NULL;
	size_t i = ij_slice_bound(sl, nsl, unit, start_by, true);
	bool flows = false;

	for (int k = 0; i > 0 && sl[i - 1].unit == unit && k < SYNC_SCAN_MAX; i--, k++) {
		const struct ij_slice *x = &sl[i - 1];
		const struct sync_launch *l;

		if (!is_op(s, x))
			continue;
		l = launch_of(s, x->seq);
		if (l && corr >= 0) {
			flows = true;
			if (l->corr < corr && x->end <= end_by)
				return x;
			continue;	/* launched after the sync, or still running */
		}
		if (!by_time && x->end <= start_by)
			by_time = x;
	}
	return flows ? NULL : by_time;
}

/* The first operation on @unit starting at or after @ts other than @seq. */
static const struct ij_slice *
next_op(const struct ij_syncs *s, const struct ij_slice *sl, size_t nsl, int unit, int64_t ts,
	uint32_t seq)
{
	size_t i = ij_slice_bound(sl, nsl, unit, ts, false);

	for (int k = 0; i < nsl && sl[i].unit == unit && k < SYNC_SCAN_MAX; i++, k++)
		if (sl[i].seq != seq && is_op(s, &sl[i]))
			return &sl[i];
	return NULL;
}

static const char *const kind_name[] = {
	[IJ_SYNC_STREAM_WAIT] = "Stream Wait Event", [IJ_SYNC_STREAM] = "Stream Sync",
	[IJ_SYNC_EVENT] = "Event Sync", [IJ_SYNC_CONTEXT] = "Context Sync",
};

int
ij_sync_kind_parse(const char *s)
{
	for (int k = 0; k < (int)TC_ARRAY_SIZE(kind_name); k++)
		if (!strcasecmp(s, kind_name[k]))
			return k;
	return -1;
}

/* An edge found, before duplicates go (two waits before one operation). */
struct sync_edge {
	uint32_t src, dst;
	int kind;
	int64_t stream;		/* in the label, -1 none */
};

static int
edge_cmp(const void *a, const void *b)
{
	const struct sync_edge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* The edge for sync @e, if what it waited for is found. */
static bool
sync_edge(const struct ij_syncs *s, const struct sync_ev *e, const struct ij_slice *sl,
	  size_t nsl, const struct ij_sync_ops *ops, void *ctx, struct sync_edge *out)
{
	const struct sync_launch *host = launch_of(s, e->seq);
	const struct ij_slice *p = NULL, *q;
	int64_t corr = e->corr >= 0 ? e->corr : host ? host->corr : -1;
	int units[CONTEXT_UNITS_MAX];
	int nu, y;

	out->kind = e->kind;
	out->stream = -1;
	if (e->kind == IJ_SYNC_STREAM_WAIT) {
		if (e->wait_stream < 0 ||
		    ops->stream_units(ctx, e->dev, e->wait_stream, &y, 1) != 1 || y == e->unit)
			return false;
		/* the operation that waited, and what it waited for (one clock) */
		q = next_op(s, sl, nsl, e->unit, e->ts, e->seq);
		if (!q)
			return false;
		p = last_op(s, sl, nsl, y, corr, q->ts, q->ts);
		out->dst = q->seq;
		out->stream = e->wait_stream;
	} else {
		/* the host call returned once the work launched before it had
		 * finished (host and device clocks: no test on the end) */
		out->dst = host ? host->src : e->seq;
		if (e->kind == IJ_SYNC_CONTEXT) {
			nu = ops->stream_units(ctx, e->dev, -1, units, CONTEXT_UNITS_MAX);
		} else if (e->kind == IJ_SYNC_EVENT && e->wait_stream >= 0) {
			nu = ops->stream_units(ctx, e->dev, e->wait_stream, units, 1);
			out->stream = e->wait_stream;
		} else {
			units[0] = e->unit;
			nu = 1;
		}
		for (int u = 0; u < nu; u++) {
			q = last_op(s, sl, nsl, units[u], corr, e->end, INT64_MAX);
			if (q && (!p || q->end > p->end))
				p = q;
		}
	}
	if (!p || p->seq == out->dst)
		return false;
	out->src = p->seq;
	return true;
}

int
ij_syncs_resolve(struct ij_syncs *s, const struct ij_slice *sl, size_t nsl,
		 const struct ij_sync_ops *ops, void *ctx, struct st_writer *w)
{
	struct sync_edge *ed = NULL;
	uint32_t maxseq = 0;
	size_t n = 0;
	char label[64];
	int rc = 0;

	if (!s || !s->n)
		return 0;
	for (size_t i = 0; i < nsl; i++)
		maxseq = sl[i].seq > maxseq ? sl[i].seq : maxseq;
	s->is_sync = tc_xcalloc((size_t)maxseq / 8 + 1, 1);
	for (size_t i = 0; i < s->n; i++)
		if (s->ev[i].seq <= maxseq)
			s->is_sync[s->ev[i].seq >> 3] |= (uint8_t)(1u << (s->ev[i].seq & 7));
	if (s->nln) {
		struct sync_launch *tmp = tc_xmalloc((s->nln / 2 + 1) * sizeof(*tmp));

		launch_sort(s->ln, tmp, s->nln);
		free(tmp);
	}

	ed = tc_xmalloc(s->n * sizeof(*ed));
	for (size_t i = 0; i < s->n; i++)
		if (sync_edge(s, &s->ev[i], sl, nsl, ops, ctx, &ed[n]))
			n++;
	if (n)
		qsort(ed, n, sizeof(*ed), edge_cmp);
	for (size_t i = 0; i < n && !rc; i++) {
		if (i && !edge_cmp(&ed[i], &ed[i - 1]))
			continue;
		if (ed[i].stream >= 0)
			snprintf(label, sizeof(label), "%s (stream %lld)", kind_name[ed[i].kind],
				 (long long)ed[i].stream);
		else
			snprintf(label, sizeof(label), "%s", kind_name[ed[i].kind]);
		rc = st_edge_add(w, ed[i].src, ed[i].dst, ST_EDGE_ORDER, label);
	}
	free(ed);
	return rc;
}
