/* SPDX-License-Identifier: MIT */
/*
 * store/st-finish.c - turn the staging table into the final trace store:
 * one sorted pass over (unit, ts, dur DESC, seq) assigns dense event ids,
 * nesting depth (slices that break nesting go one row deeper and are
 * counted), per-(unit, depth) maximum durations and the level-0 summary
 * buckets; higher summary levels are merged from level 0 per unit.  Then
 * explicit edges are remapped, deps/ derives the access-set edges, the
 * edges are packed and the file is synced.
 *
 * Memory: one uint32 per event for the seq -> id map (freed once the
 * explicit edges are remapped), one int64 per event for the events' ends
 * when edges are derived or many (each edge block's crit blob needs its
 * sources' ends; for a few explicit edges, the ends of their events only),
 * the nesting stack and the summary buckets of the current unit (at most
 * 2^ST_LEVEL0_MAX_BITS).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/tc-rank.h"
#include "store/store-int.h"
#include "store/st-chunk.h"
#include "store/st-flagged.h"
#include "deps/deps.h"

/*
 * Level-0 resolution: about one bucket per ST_EVENTS_PER_BUCKET events over
 * the whole trace, between 2^10 and 2^18 buckets.  A unit costs at most two
 * rows per level-0 bucket (all levels together), and a window narrower than
 * px level-0 buckets holds about px * ST_EVENTS_PER_BUCKET events on average,
 * which the server returns as events.
 */
#define ST_LEVEL0_MIN_BITS 10
#define ST_LEVEL0_MAX_BITS 18
#define ST_EVENTS_PER_BUCKET 32
#define ST_SPILL_RSS (32u << 20)	/* spill bytes mapped between two st_spill_drop() */
#define ST_DOM 4		/* dominant-name candidates kept per bucket */
/* explicit edges fewer than one per this many events: ends kept for their events only */
#define ST_FIN_FEW_EDGES 4

void st_writer_release_(struct st_writer *w);

struct st_bucket {
	int64_t b;		/* bucket index */
	int64_t count, busy;
	uint32_t dom[ST_DOM];
	int64_t dom_ns[ST_DOM];
	double vmin, vmax, vlast;
	bool has_value;
};

struct st_bvec {
	struct st_bucket *v;
	size_t n, cap;
};

static struct st_bucket *
st_bvec_push(struct st_bvec *bv, int64_t b)
{
	struct st_bucket *x;

	if (bv->n == bv->cap) {
		bv->cap = bv->cap ? bv->cap * 2 : 256;
		bv->v = tc_xrealloc(bv->v, bv->cap * sizeof(*bv->v));
	}
	x = &bv->v[bv->n++];
	memset(x, 0, sizeof(*x));
	x->b = b;
	return x;
}

static void
st_dom_add(struct st_bucket *k, uint32_t name, int64_t ns)
{
	int i, lo = 0;

	if (ns <= 0)
		return;
	for (i = 0; i < ST_DOM; i++) {
		if (k->dom[i] == name && k->dom_ns[i]) {
			k->dom_ns[i] += ns;
			return;
		}
		if (k->dom_ns[i] < k->dom_ns[lo])
			lo = i;
	}
	if (ns > k->dom_ns[lo]) {
		k->dom[lo] = name;
		k->dom_ns[lo] = ns;
	}
}

static int
st_dom_best(const struct st_bucket *k)
{
	int i, best = 0;

	for (i = 1; i < ST_DOM; i++)
		if (k->dom_ns[i] > k->dom_ns[best])
			best = i;
	return best;
}

static void
st_value_add(struct st_bucket *k, double v)
{
	if (!k->has_value) {
		k->vmin = k->vmax = v;
		k->has_value = true;
	}
	if (v < k->vmin)
		k->vmin = v;
	if (v > k->vmax)
		k->vmax = v;
	k->vlast = v;
}

/* Pending level-0 buckets of the current unit: [pbase, pbase + pn). */
struct st_pend {
	struct st_bucket *v;
	size_t n, cap, head;
	int64_t base;
};

static struct st_bucket *
st_pend_at(struct st_pend *p, int64_t b)
{
	size_t idx;

	if (p->n == 0) {
		p->head = 0;
		p->base = b;
	}
	idx = (size_t)(b - p->base);
	while (idx >= p->n) {
		struct st_bucket *x;

		if (p->head + p->n == p->cap) {
			if (p->head) {
				memmove(p->v, p->v + p->head, p->n * sizeof(*p->v));
				p->head = 0;
			} else {
				p->cap = p->cap ? p->cap * 2 : 256;
				p->v = tc_xrealloc(p->v, p->cap * sizeof(*p->v));
			}
		}
		x = &p->v[p->head + p->n];
		memset(x, 0, sizeof(*x));
		x->b = p->base + (int64_t)p->n;
		p->n++;
	}
	return &p->v[p->head + idx];
}

/* Move pending buckets before @b (or all when @b is INT64_MAX) to @out. */
static void
st_pend_flush(struct st_pend *p, int64_t b, struct st_bvec *out)
{
	while (p->n && p->base < b) {
		struct st_bucket *x = &p->v[p->head];

		if (x->count || x->busy || x->has_value)
			*st_bvec_push(out, x->b) = *x;
		p->head++;
		p->n--;
		p->base++;
	}
}

#define ST_BATCH 32		/* summary rows per multi-row INSERT */

/* The chunk being filled (store/st-chunk.h): one unit's next events. */
struct st_cbuild {
	struct st_chunk_dir dir;
	struct tc_buf cols, args;
	/*
	 * The event being added is built in ev[cur], the one before it (when
	 * count > 0) is ev[cur ^ 1]: no copy of an event that was just
	 * written field by field (reading it back whole stalled the store
	 * forwarding, 3% of a Perfetto ingest's CPU).
	 */
	struct st_cev ev[2];
	int cur;
};

struct st_fin {
	struct st_writer *w;
	sqlite3_stmt *ins_sumn;		/* ST_BATCH rows */
	/* chunk inserts, on a second thread: not in this struct, which the
	 * second part copies while that thread runs */
	struct st_chunk_out *outp;
	struct st_cbuild cb;
	struct st_merge merge;	/* this part's units, in id order */
	int64_t overlaps;	/* added to the stats when the parts are done */
	int64_t t0, c0;		/* NX_STORE_TIMING=1: phase times on stderr */
	sqlite3_stmt *ins_sum, *ins_depth;
	int64_t origin, bucket_ns;
	/* the current unit's lowest summary level and its bucket width */
	int ushift;
	int64_t ubucket_ns;
	uint32_t *map;		/* seq -> id */
	int64_t *ends;		/* id -> ts + dur when edges are derived or many, else NULL */
	/* when a few events have edges (explicit ones): their seqs, and by
	 * rank there each one's end (st_fin_edge_ends()), else NULL */
	struct tc_rank *eseq;
	int64_t *eend;
	/* current unit */
	int unit;
	int64_t *stack;		/* end times of open slices */
	size_t nstack, capstack;
	int64_t *dmax, *dcount;	/* per depth */
	size_t capdepth;
	int max_depth;
	struct st_pend pend;
	struct st_bvec level;
	struct tc_err *err;
	int part;		/* 0: the first part, 1: the second */
};

static void
st_fin_time(struct st_fin *f, const char *phase)
{
	struct timespec ts;
	int64_t t, c;

	if (!f->t0)
		return;
	t = tc_mono_ns();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	c = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	fprintf(stderr, "store: %-8s %8.3f s wall %8.3f s cpu\n", phase,
		(double)(t - f->t0) / 1e9, (double)(c - f->c0) / 1e9);
	f->t0 = t;
	f->c0 = c;
}

static void
st_sum_bind(sqlite3_stmt *s, int o, int unit, int level, const struct st_bucket *k)
{
	int best = st_dom_best(k);

	sqlite3_bind_int(s, o + 1, unit);
	sqlite3_bind_int(s, o + 2, level);
	sqlite3_bind_int64(s, o + 3, k->b);
	sqlite3_bind_int64(s, o + 4, k->count);
	sqlite3_bind_int64(s, o + 5, k->busy);
	sqlite3_bind_int64(s, o + 6, k->dom[best]);
	sqlite3_bind_int64(s, o + 7, k->dom_ns[best]);
	if (k->has_value) {
		sqlite3_bind_double(s, o + 8, k->vmin);
		sqlite3_bind_double(s, o + 9, k->vmax);
		sqlite3_bind_double(s, o + 10, k->vlast);
	} else {
		sqlite3_bind_null(s, o + 8);
		sqlite3_bind_null(s, o + 9);
		sqlite3_bind_null(s, o + 10);
	}
}

/* One level of the current unit: ST_BATCH rows per INSERT, then one by one. */
static int
st_fin_sum_write(struct st_fin *f, int level, const struct st_bvec *bv)
{
	size_t i = 0;
	int j;

	for (; i + ST_BATCH <= bv->n; i += ST_BATCH) {
		for (j = 0; j < ST_BATCH; j++)
			st_sum_bind(f->ins_sumn, j * 10, f->unit, level, &bv->v[i + (size_t)j]);
		if (sqlite3_step(f->ins_sumn) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(f->ins_sumn);
	}
	for (; i < bv->n; i++) {
		st_sum_bind(f->ins_sum, 0, f->unit, level, &bv->v[i]);
		if (sqlite3_step(f->ins_sum) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(f->ins_sum);
	}
	return 0;
fail:
	sqlite3_reset(f->ins_sum);
	sqlite3_reset(f->ins_sumn);
	return tc_err_set(f->err, -EIO, "summaries: %s", sqlite3_errmsg(f->w->db));
}

/* Finish the current unit: flush buckets, write all levels and depths. */
static int
st_fin_unit_end(struct st_fin *f)
{
	struct st_bvec next = { 0 };
	int level = f->ushift, rc = 0;
	size_t i;

	if (!f->unit)
		return 0;
	st_pend_flush(&f->pend, INT64_MAX, &f->level);
	for (;;) {
		rc = st_fin_sum_write(f, level, &f->level);
		if (rc < 0 || f->level.n <= 1 || level >= 62)
			break;
		/* merge pairs into level + 1 */
		next.n = 0;
		for (i = 0; i < f->level.n; i++) {
			const struct st_bucket *k = &f->level.v[i];
			struct st_bucket *m;
			int j;

			if (next.n && next.v[next.n - 1].b == (k->b >> 1)) {
				m = &next.v[next.n - 1];
			} else {
				m = st_bvec_push(&next, k->b >> 1);
			}
			m->count += k->count;
			m->busy += k->busy;
			for (j = 0; j < ST_DOM; j++)
				st_dom_add(m, k->dom[j], k->dom_ns[j]);
			if (k->has_value) {
				double last = k->vlast;

				st_value_add(m, k->vmin);
				st_value_add(m, k->vmax);
				m->vlast = last;
			}
		}
		{
			struct st_bvec t = f->level;

			f->level = next;
			next = t;
		}
		level++;
	}
	free(next.v);
	f->level.n = 0;
	for (i = 0; rc == 0 && i <= (size_t)f->max_depth && i < f->capdepth; i++) {
		if (!f->dcount[i])
			continue;
		sqlite3_bind_int(f->ins_depth, 1, f->unit);
		sqlite3_bind_int(f->ins_depth, 2, (int)i);
		sqlite3_bind_int64(f->ins_depth, 3, f->dcount[i]);
		sqlite3_bind_int64(f->ins_depth, 4, f->dmax[i]);
		if (sqlite3_step(f->ins_depth) != SQLITE_DONE)
			rc = tc_err_set(f->err, -EIO, "unit_depths: %s", sqlite3_errmsg(f->w->db));
		sqlite3_reset(f->ins_depth);
	}
	if (f->capdepth) {
		memset(f->dmax, 0, f->capdepth * sizeof(*f->dmax));
		memset(f->dcount, 0, f->capdepth * sizeof(*f->dcount));
	}
	f->w->units[f->unit].max_depth = f->max_depth;
	f->max_depth = 0;
	f->nstack = 0;
	f->unit = 0;
	return rc;
}

static void
st_fin_depth_note(struct st_fin *f, int depth, int64_t dur)
{
	if ((size_t)depth >= f->capdepth) {
		size_t old = f->capdepth;

		f->capdepth = TC_MAX((size_t)depth + 1, old ? old * 2 : 16);
		f->dmax = tc_xrealloc(f->dmax, f->capdepth * sizeof(*f->dmax));
		f->dcount = tc_xrealloc(f->dcount, f->capdepth * sizeof(*f->dcount));
		memset(f->dmax + old, 0, (f->capdepth - old) * sizeof(*f->dmax));
		memset(f->dcount + old, 0, (f->capdepth - old) * sizeof(*f->dcount));
	}
	f->dcount[depth]++;
	if (dur > f->dmax[depth])
		f->dmax[depth] = dur;
	if (depth > f->max_depth)
		f->max_depth = depth;
}

static int64_t
st_fin_bucket(const struct st_fin *f, int64_t ts)
{
	return (ts - f->origin) / f->ubucket_ns;
}

static void
st_fin_summarise(struct st_fin *f, int kind, int depth, int64_t ts, int64_t dur,
		 uint32_t name, double value)
{
	int64_t b = st_fin_bucket(f, ts), end, e, t;
	struct st_bucket *k;

	st_pend_flush(&f->pend, b, &f->level);
	k = st_pend_at(&f->pend, b);
	k->count++;
	if (kind == ST_EV_COUNTER) {
		st_value_add(k, value);
		return;
	}
	if (kind != ST_EV_SLICE || depth != 0 || dur <= 0)
		return;
	end = ts + dur;
	for (t = ts; t < end; t = e, b++) {
		int64_t bend = f->origin + (b + 1) * f->ubucket_ns;

		e = TC_MIN(end, bend);
		k = st_pend_at(&f->pend, b);
		k->busy += e - t;
		st_dom_add(k, name, e - t);
	}
}

/* Hand the chunk being filled, if any, to the insert thread. */
static int
st_fin_chunk_flush(struct st_fin *f)
{
	struct st_cbuild *cb = &f->cb;
	int rc;

	if (!cb->dir.count)
		return 0;
	rc = st_chunk_out_put(f->outp, &cb->dir, &cb->cols, &cb->args);
	memset(&cb->dir, 0, sizeof(cb->dir));
	if (rc < 0)
		rc = tc_err_set(f->err, rc, "%s", f->outp->msg);
	return rc;
}

/* Append event cb->ev[cb->cur] (id @id of unit @unit) to the chunk, starting
 * a new one when the unit changes or the chunk is full. */
static int
st_fin_chunk_add(struct st_fin *f, int64_t id, int unit, const char *args)
{
	struct st_cbuild *cb = &f->cb;
	struct st_chunk_dir *dir = &cb->dir;
	const struct st_cev *e = &cb->ev[cb->cur], *prev = &cb->ev[cb->cur ^ 1];
	int rc = 0;

	if (dir->count && (dir->unit != unit || dir->count == ST_CHUNK_EVENTS)) {
		rc = st_fin_chunk_flush(f);
		if (rc < 0)
			return rc;
	}
	if (!dir->count) {
		dir->first = id;
		dir->unit = unit;
		dir->ts_first = e->ts;
		dir->end_max = e->ts + e->dur;
		dir->min_depth = dir->max_depth = e->depth;
	}
	st_chunk_enc_event(&cb->cols, e, dir->count ? prev : NULL);
	dir->count++;
	dir->ts_last = e->ts;
	dir->end_max = TC_MAX(dir->end_max, e->ts + e->dur);
	dir->min_depth = TC_MIN(dir->min_depth, e->depth);
	dir->max_depth = TC_MAX(dir->max_depth, e->depth);
	if (dir->count == 1 || e->name != prev->name)	/* a counter's samples: once */
		st_bloom_add(dir->bloom, e->name);
	cb->cur ^= 1;
	if (e->args_len)
		tc_buf_add(&cb->args, args, e->args_len);
	return 0;
}

/*
 * The unit's lowest summary level: the first whose buckets, over the unit's
 * own span, hold about ST_EVENTS_PER_BUCKET of its events on average.  A
 * sparse unit (a counter sampled now and then, a thread with a few slices)
 * then costs rows in proportion to its events, not to the trace's level-0
 * resolution; the server reads the lowest level of a unit when a finer one
 * is asked for (server/srv-trace.c).
 */
static void
st_fin_unit_level(struct st_fin *f, int unit)
{
	const struct st_unit_def *u = &f->w->units[unit];
	int64_t want = (u->end_max - u->ts_min) / TC_MAX((int64_t)1, u->n_add / ST_EVENTS_PER_BUCKET);
	int shift = 0;

	while (shift < 40 && (f->bucket_ns << shift) < want)
		shift++;
	f->ushift = shift;
	f->ubucket_ns = f->bucket_ns << shift;
}

#define ST_PROGRESS_EVENTS 16384	/* events merged between two counts */

/*
 * @n more events merged by this part; the first part, on the writer's
 * thread, reports what both have merged.  Return: 0, or -ECANCELED (with
 * f->err set) once the ingest is cancelled, which both parts see.
 */
static int
st_fin_progress(struct st_fin *f, int64_t n)
{
	struct st_writer *w = f->w;
	int64_t done = atomic_fetch_add(&w->prog.sorted, n) + n;

	if (f->part == 0 && w->seq)
		st_writer_progress(w, ST_PHASE_SORTING, (double)done / (double)w->seq);
	if (atomic_load_explicit(&w->prog.cancelled, memory_order_relaxed))
		return tc_err_set(f->err, -ECANCELED, ST_CANCELLED);
	return 0;
}

/*
 * One part of the finish pass: the events of units [@lo, @hi] in id order,
 * ids after @id (the events of the units before @lo).  Two parts run at once
 * (st_fin_events): units are independent for nesting, depths, summaries and
 * chunks, and each part only writes its own units' entries.  The SQLite
 * connection is shared through f->outp's lock.
 */
static int
st_fin_part(struct st_fin *f, int lo, int hi, int64_t id)
{
	struct st_writer *w = f->w;
	const struct st_srec *k;
	uint64_t touched = 0, read0 = 0;
	int64_t tick = 0;
	int rc = 0;

	st_keys_merge_init(&w->keys, &f->merge, lo, hi);
	while ((k = st_keys_merge_next(&w->keys, &f->merge))) {
		int unit = k->key.unit;
		int64_t ts = k->key.ts, dur = k->key.dur;
		const struct st_srec *rec = k;
		struct st_unit_def *u;
		int depth = 0, kind;

		if (++tick == ST_PROGRESS_EVENTS) {
			rc = st_fin_progress(f, tick);
			tick = 0;
			if (rc < 0)
				goto out;
		}

		/* runs are read front to back; args mostly in file order */
		touched += rec->args_len;
		if (touched + f->merge.read - read0 > ST_SPILL_RSS) {
			/* keep the resident set bounded: the pages stay in the
			 * page cache, only this process's mapping lets them go */
			st_keys_drop(&w->keys);
			st_spill_drop(&w->args);
			touched = 0;
			read0 = f->merge.read;
		}
		kind = rec->kind;
		if (unit != f->unit) {
			st_chunk_out_lock(f->outp);
			rc = st_fin_unit_end(f);
			st_chunk_out_unlock(f->outp);
			if (rc < 0)
				goto out;
			f->unit = unit;
			st_fin_unit_level(f, unit);
			w->units[unit].first = id + 1;
		}
		u = &w->units[unit];
		id++;
		f->map[k->key.seq] = (uint32_t)id;
		if (f->ends) {
			f->ends[id] = (int64_t)((uint64_t)ts + (uint64_t)dur);
		} else if (f->eseq && tc_rank_has(f->eseq, k->key.seq)) {
			f->eend[tc_rank_of(f->eseq, k->key.seq)] =
				(int64_t)((uint64_t)ts + (uint64_t)dur);
		}
		if (kind != ST_EV_COUNTER) {
			while (f->nstack && f->stack[f->nstack - 1] <= ts)
				f->nstack--;
			depth = (int)f->nstack;
			if (kind == ST_EV_SLICE) {
				if (f->nstack && ts + dur > f->stack[f->nstack - 1]) {
					u->overlaps++;
					f->overlaps++;
				}
				if (f->nstack == f->capstack) {
					f->capstack = f->capstack ? f->capstack * 2 : 64;
					f->stack = tc_xrealloc(f->stack,
							       f->capstack * sizeof(*f->stack));
				}
				f->stack[f->nstack++] = ts + dur;
			}
		}
		st_fin_depth_note(f, depth, dur);
		st_fin_summarise(f, kind, depth, ts, dur, rec->name, rec->value);
		u->count++;
		u->last = id;

		{
			struct st_cev *e = &f->cb.ev[f->cb.cur];
			const char *args = NULL;

			e->ts = ts;
			e->dur = dur;
			e->seq = k->key.seq;
			e->value = kind == ST_EV_COUNTER ? rec->value : 0;
			e->name = rec->name;
			e->cat = rec->cat;
			e->args_off = 0;
			e->args_len = 0;
			e->depth = depth;
			e->kind = (uint8_t)kind;
			e->flags = rec->flags;
			if (st_writer_args_mapped(w, rec->args_off, rec->args_len)) {
				args = w->args.map + rec->args_off;
				e->args_len = rec->args_len;
			}
			/* the args pointers stay valid across st_spill_drop() */
			rc = st_fin_chunk_add(f, id, unit, args);
			if (w->flagged && (rec->flags & 1))
				st_flagged_note(w->flagged, unit, rec->args_off, e->args_len);
			if (rc < 0)
				goto out;
		}
	}
	rc = st_fin_chunk_flush(f);
	if (rc < 0)
		goto out;
	st_chunk_out_lock(f->outp);
	rc = st_fin_unit_end(f);
	st_chunk_out_unlock(f->outp);
out:
	if (rc >= 0)
		rc = st_fin_progress(f, tick);
	st_keys_merge_free(&f->merge);
	return rc;
}

struct st_part_job {
	struct st_fin *f;
	int lo, hi;
	int64_t id;
	int rc;
};

static void *
st_fin_part_thread(void *arg)
{
	struct st_part_job *j = arg;

	tc_thread_name("finish-part");
	j->rc = st_fin_part(j->f, j->lo, j->hi, j->id);
	return NULL;
}

/* Release what a part allocated for itself. */
static void
st_fin_part_free(struct st_fin *f)
{
	free(f->stack);
	free(f->dmax);
	free(f->dcount);
	free(f->pend.v);
	free(f->level.v);
	tc_buf_free(&f->cb.cols);
	tc_buf_free(&f->cb.args);
}

#define ST_SPLIT_MIN 4096	/* fewer events: one part */

/* Join @thr within ST_PROGRESS_NS: true when it ended (and is joined). */
static bool
st_fin_join(pthread_t thr)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ST_PROGRESS_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(thr, NULL, &ts) != ETIMEDOUT;
}

/* Whether deps/ derives edges from this trace's flagged events (not when the reader gave its own). */
static bool
st_fin_derives(const struct st_writer *w)
{
	return w->nflagged && deps_enabled() && !w->edges_given;
}

static int
st_fin_events(struct st_fin *f)
{
	struct st_writer *w = f->w;
	struct st_fin g;		/* the second part's state */
	struct st_part_job job = { 0 };
	struct tc_err gerr = { 0 };
	pthread_t thr;
	bool two = false;
	int64_t before = 0;
	int split = w->nunits, rc = 0;

	rc = st_spill_map(&w->args);
	if (!rc)
		rc = st_keys_sort_all(&w->keys);
	if (rc < 0) {
		rc = tc_err_set(f->err, rc, "%s: staging: %s", w->path, strerror(-rc));
		goto out;
	}
	st_fin_time(f, "sort");
	if (f->t0)
		fprintf(stderr, "store: staged   %8.1f MB runs %8.1f MB args (%zu events)\n",
			(double)w->keys.out.size / 1e6, (double)w->args.size / 1e6, w->keys.n);
	/* deps/ reads the flagged events from the runs, not through SQL */
	if (st_fin_derives(w))
		w->flagged = st_flagged_new(w->nunits);
	/* split the units where about half the events come before */
	if (w->seq >= ST_SPLIT_MIN && w->nunits >= 2) {
		for (split = 1; split < w->nunits; split++) {
			before += w->units[split].n_add;
			if (before * 2 >= w->seq)
				break;
		}
	}
	if (split < w->nunits) {
		g = *f;		/* shared: w, outp, map, statements, bucket sizes */
		g.t0 = 0;
		g.unit = 0;
		g.stack = NULL;
		g.nstack = g.capstack = 0;
		g.dmax = g.dcount = NULL;
		g.capdepth = 0;
		g.max_depth = 0;
		memset(&g.pend, 0, sizeof(g.pend));
		memset(&g.level, 0, sizeof(g.level));
		memset(&g.cb, 0, sizeof(g.cb));
		tc_buf_init(&g.cb.cols);
		tc_buf_init(&g.cb.args);
		g.overlaps = 0;
		g.err = &gerr;
		g.part = 1;
		job = (struct st_part_job){ .f = &g, .lo = split + 1, .hi = w->nunits, .id = before };
		two = pthread_create(&thr, NULL, st_fin_part_thread, &job) == 0;
		if (!two)
			st_fin_part_free(&g);
	}
	if (two) {
		rc = st_fin_part(f, 1, split, 0);
		/* the second part may have more to do: go on reporting its count */
		while (!st_fin_join(thr))
			st_fin_progress(f, 0);	/* a cancel reaches the second part this way */
		if (!rc)
			rc = st_fin_progress(f, 0);	/* both parts' last counts */
		if (!rc && job.rc)
			rc = tc_err_set(f->err, job.rc, "%s", gerr.msg);
		w->stats.overlaps += g.overlaps;
		st_fin_part_free(&g);
	} else {
		rc = st_fin_part(f, 1, w->nunits, 0);
	}
	w->stats.overlaps += f->overlaps;
	if (!rc)
		rc = st_chunk_out_finish(f->outp, true, f->err);
out:
	if (rc < 0) {
		struct tc_err ignore;

		st_chunk_out_finish(f->outp, false, &ignore);
	}
	/* the runs and the args are not needed any more unless deps/ reads them */
	if (!w->flagged) {
		st_keys_free(&w->keys);
		st_spill_close(&w->args);
	} else {
		st_keys_trim(&w->keys);
	}
	return rc;
}

/*
 * The reader's edge record at *@off of the mapped staging file @sp into
 * *@e, its label (NULL: none) into *@label; *@off moves past it.  Return:
 * 1, 0 at the end, -EIO when the file ends inside a label.
 */
static int
st_redge_next(const struct st_spill *sp, size_t *off, struct st_redge *e, const char **label)
{
	if (*off + sizeof(*e) > sp->mapsz)
		return 0;
	memcpy(e, sp->map + *off, sizeof(*e));	/* records are not aligned */
	*off += sizeof(*e);
	if (e->label_len > sp->mapsz - *off)
		return -EIO;
	*label = e->has_label ? sp->map + *off : NULL;
	*off += e->label_len;
	return 1;
}

/*
 * When a trace gives its edges and they touch few of its events (a flow per
 * kernel launch among millions of slices), the crit blobs need the ends of
 * those events only: mark their seqs in @seqs before the event phase, which
 * then keeps each one's end by its rank there, instead of an int64 for
 * every event (187 MB for 23M).  Return: 0 or -errno with f->err set.
 */
static int
st_fin_edge_ends(struct st_fin *f, struct tc_rank *seqs)
{
	struct st_writer *w = f->w;
	struct st_spill *sp = &w->raw_edges;
	struct st_redge e;
	const char *label;
	size_t off = 0;
	int rc;

	rc = st_spill_map(sp);
	if (rc < 0)
		return tc_err_set(f->err, rc, "edges: staging: %s", strerror(-rc));
	tc_rank_init(seqs, (uint64_t)w->seq + 1);
	while ((rc = st_redge_next(sp, &off, &e, &label)) > 0) {
		tc_rank_set(seqs, e.src);	/* st_writer_edge() checked both */
		tc_rank_set(seqs, e.dst);
	}
	if (rc < 0)
		return tc_err_set(f->err, rc, "edges: staging file is short");
	rc = tc_rank_index(seqs);
	if (rc < 0)
		return tc_err_set(f->err, rc, "edges: too many events with edges");
	f->eseq = seqs;
	f->eend = tc_xmalloc((seqs->count + 1) * sizeof(*f->eend));
	return 0;
}

/*
 * After the event phase, while f->map holds the ids: the ends of
 * st_fin_edge_ends()'s events by id, in @ids and *@ends_out (malloc'd), for
 * st_edges_set_ends_ranked().  An event the phase did not see (no id) is
 * left out, and the blocks of its edges get no crit blob.
 */
static void
st_fin_ends_by_id(struct st_fin *f, struct tc_rank *ids, int64_t **ends_out)
{
	int64_t *ends;
	uint64_t s, r;

	tc_rank_init(ids, (uint64_t)f->w->seq + 1);
	for (s = 0; tc_rank_next(f->eseq, &s); s++)
		if (f->map[s])
			tc_rank_set(ids, f->map[s]);
	(void)tc_rank_index(ids);	/* no more than in f->eseq */
	ends = tc_xmalloc((ids->count + 1) * sizeof(*ends));
	for (s = r = 0; tc_rank_next(f->eseq, &s); s++, r++)
		if (f->map[s])
			ends[tc_rank_of(ids, f->map[s])] = f->eend[r];
	*ends_out = ends;
}

/*
 * Start packing edges (st-edges.h): the explicit edges of the reader,
 * remapped from seq to id, then deps_derive() adds the derived ones through
 * st_writer_add_edge() and st_writer_finish() writes them all.
 */
static int
st_fin_edges(struct st_fin *f)
{
	struct st_writer *w = f->w;
	struct st_spill *sp = &w->raw_edges;
	struct st_redge e;
	const char *label;
	size_t off = 0;
	int rc;

	rc = st_edges_new(&w->edges, w->db, w->seq, st_edges_ram(), w->path, f->err);
	if (rc < 0)
		goto out;
	rc = st_spill_map(sp);
	if (rc < 0) {
		rc = tc_err_set(f->err, rc, "edges: staging: %s", strerror(-rc));
		goto out;
	}
	while ((rc = st_redge_next(sp, &off, &e, &label)) > 0) {
		rc = st_edges_add(w->edges, f->map[e.src], f->map[e.dst], e.kind, label,
				  e.label_len);
		if (rc < 0) {
			rc = tc_err_set(f->err, rc, "edges: %s", strerror(-rc));
			goto out;
		}
		w->stats.edges[e.kind]++;
	}
	if (rc < 0)
		rc = tc_err_set(f->err, rc, "edges: staging file is short");
out:
	st_spill_close(sp);
	return rc;
}

static int
st_fin_tables(struct st_fin *f)
{
	struct st_writer *w = f->w;
	sqlite3_stmt *s = NULL;
	int i, rc = 0;

	if (sqlite3_prepare_v2(w->db, "INSERT INTO devices VALUES (?,?,?,?,?,?)", -1, &s,
			       NULL) != SQLITE_OK)
		goto fail;
	for (i = 1; i <= w->ndevs; i++) {
		struct st_dev *d = &w->devs[i];

		sqlite3_bind_int(s, 1, i);
		sqlite3_bind_text(s, 2, d->key, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, d->kind);
		sqlite3_bind_text(s, 4, d->name, -1, SQLITE_STATIC);
		if (d->label)
			sqlite3_bind_text(s, 5, d->label, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 5);
		if (d->has_sort)
			sqlite3_bind_int64(s, 6, d->sort);
		else
			sqlite3_bind_null(s, 6);
		if (sqlite3_step(s) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(w->db, "INSERT INTO units VALUES (?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &s, NULL) != SQLITE_OK)
		goto fail;
	for (i = 1; i <= w->nunits; i++) {
		struct st_unit_def *u = &w->units[i];

		sqlite3_bind_int(s, 1, i);
		sqlite3_bind_int(s, 2, u->dev);
		sqlite3_bind_text(s, 3, u->key, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 4, u->kind);
		sqlite3_bind_text(s, 5, u->name, -1, SQLITE_STATIC);
		if (u->has_sort)
			sqlite3_bind_int64(s, 6, u->sort);
		else
			sqlite3_bind_null(s, 6);
		sqlite3_bind_int64(s, 7, u->count);
		if (u->count) {
			sqlite3_bind_int64(s, 8, u->first);
			sqlite3_bind_int64(s, 9, u->last);
		} else {
			sqlite3_bind_null(s, 8);
			sqlite3_bind_null(s, 9);
		}
		sqlite3_bind_int(s, 10, u->max_depth);
		sqlite3_bind_int64(s, 11, u->overlaps);
		if (sqlite3_step(s) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(s);
		if (u->count)
			w->stats.units++;
	}
	w->stats.devices = w->ndevs;
	goto out;
fail:
	rc = tc_err_set(f->err, -EIO, "units: %s", sqlite3_errmsg(w->db));
out:
	sqlite3_finalize(s);
	return rc;
}

/* st_edges_finish()'s progress: the share of its partitions written. */
static int
st_fin_edges_tick(void *ctx, double frac)
{
	return st_writer_progress(ctx, ST_PHASE_EDGES, frac);
}

int
st_writer_finish(struct st_writer *w, struct st_stats *stats, struct tc_err *err)
{
	struct st_fin f = { 0 };
	struct st_chunk_out out = { 0 };
	struct tc_rank eseq = { 0 }, eids = { 0 };	/* st_fin_edge_ends() */
	char *path = tc_xstrdup(w->path);
	char buf[64], *json = NULL;
	int64_t span;
	int rc;

	if (w->failed) {
		rc = tc_err_set(err, w->failed, "%s", w->ferr.msg);
		goto out;
	}
	f.w = w;
	f.err = err;
	if (w->seq == 0) {
		w->min_ts = 0;
		w->max_end = 0;
	}
	span = w->max_end - w->min_ts;
	f.origin = w->min_ts;
	{
		int bits = ST_LEVEL0_MIN_BITS;

		while (bits < ST_LEVEL0_MAX_BITS &&
		       ((int64_t)1 << bits) * ST_EVENTS_PER_BUCKET < w->seq)
			bits++;
		f.bucket_ns = TC_MAX((int64_t)1, (span + ((int64_t)1 << bits) - 1) >> bits);
	}
	f.map = tc_xcalloc((size_t)w->seq + 1, sizeof(*f.map));
	if (st_fin_derives(w) || w->nedges_raw >= w->seq / ST_FIN_FEW_EDGES)
		f.ends = tc_xcalloc((size_t)w->seq + 1, sizeof(*f.ends));
	else if (w->nedges_raw && (rc = st_fin_edge_ends(&f, &eseq)) < 0)
		goto out;
	{
		struct tc_buf sql;

		tc_buf_init(&sql);
		tc_buf_adds(&sql, "INSERT INTO summaries VALUES (?,?,?,?,?,?,?,?,?,?)");
		for (int i = 1; i < ST_BATCH; i++)
			tc_buf_adds(&sql, ",(?,?,?,?,?,?,?,?,?,?)");
		if (sqlite3_prepare_v2(w->db, sql.data, -1, &f.ins_sumn, NULL) != SQLITE_OK)
			f.ins_sumn = NULL;
		tc_buf_free(&sql);
	}
	tc_buf_init(&f.cb.cols);
	tc_buf_init(&f.cb.args);
	if (!f.ins_sumn ||

	    sqlite3_prepare_v2(w->db, "INSERT INTO summaries VALUES (?,?,?,?,?,?,?,?,?,?)", -1,
			       &f.ins_sum, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO unit_depths VALUES (?,?,?,?)", -1,
			       &f.ins_depth, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "%s: %s", path, sqlite3_errmsg(w->db));
		goto out;
	}
	/* the staging tables live in an attached temporary database that
	 * disappears with the connection: no need to drop them */
	if (getenv("NX_STORE_TIMING") && !strcmp(getenv("NX_STORE_TIMING"), "1"))
		f.t0 = tc_mono_ns();
	st_fin_time(&f, "add");
	f.outp = &out;
	st_writer_progress_plan(w, w->seq, st_fin_derives(w) ? w->nflagged : 0, w->nedges_raw);
	st_writer_progress(w, ST_PHASE_SORTING, 0);
	rc = st_chunk_out_start(&out, w->db, err);
	if (!rc)
		rc = st_fin_events(&f);
	st_fin_time(&f, "events");
	if (!rc)
		rc = st_fin_edges(&f);
	if (!rc && f.eseq) {
		st_fin_ends_by_id(&f, &eids, &f.ends);
		tc_rank_free(&eseq);
		free(f.eend);
		f.eseq = NULL;
		f.eend = NULL;
	}
	free(f.map);		/* the ids are all given out: memory for what follows */
	f.map = NULL;
	if (!rc)
		rc = st_fin_tables(&f);
	st_fin_time(&f, "edges");
	if (!rc && st_sql_register(w->db) < 0)
		rc = tc_err_set(err, -EIO, "%s: events table: %s", path, sqlite3_errmsg(w->db));
	if (!rc && w->flagged && !w->edges_given) {	/* nothing to analyse otherwise */
		st_writer_progress(w, ST_PHASE_DEPS, 0);
		if (tc_env_num("NX_EDGES_IN_ARGS", 0, 1, 1))	/* 0: new pages (a peer for benchmarks) */
			st_edges_set_lender(w->edges, &w->args);
		rc = deps_derive(w, &w->stats, err);
	}
	st_flagged_free(w->flagged);
	w->flagged = NULL;
	st_keys_free(&w->keys);
	/* the args hold edge pages where deps/ lent their memory: until the edges go */
	if (w->args.lent)
		st_spill_lend_end(&w->args);
	else
		st_spill_close(&w->args);
	st_fin_time(&f, "deps");
	if (rc < 0)
		goto out;
	if (f.t0 && w->edges) {
		uint64_t kept, spilled;

		st_edges_usage(w->edges, &kept, &spilled);
		fprintf(stderr, "store: edge pages %6.1f MB in memory %8.1f MB spilled (budget %.1f MB),"
			" %.1f MB in the args' memory\n", (double)kept / 1e6, (double)spilled / 1e6,
			(double)st_edges_ram() / 1e6, (double)w->args.lent / 1e6);
	}
	if (f.t0) {
		size_t now, top;
		uint64_t filed;

		st_spill_usage(&now, &top, &filed);
		fprintf(stderr, "store: staging   %6.1f MB reserved in memory at most %8.1f MB to files"
			" (share %.1f MB)\n", (double)top / 1e6, (double)filed / 1e6,
			(double)st_spill_ram() / 1e6);
	}
	/* the explicit and derived edges, packed per block of events (st-edges.c) */
	rc = st_exec(w->db, "PRAGMA cache_size=-4096;", err);
	if (!rc) {
		if (eids.bits)
			st_edges_set_ends_ranked(w->edges, &eids, f.ends);
		else
			st_edges_set_ends(w->edges, f.ends);
		rc = st_edges_finish(w->edges, st_fin_edges_tick, w, err);
	}
	free(f.ends);
	f.ends = NULL;
	tc_rank_free(&eids);
	st_fin_time(&f, "edgepack");
	if (rc < 0)
		goto out;
	w->stats.start_ns = w->seq ? w->min_ts : 0;
	w->stats.end_ns = w->seq ? w->max_end : 0;
	snprintf(buf, sizeof(buf), "%" PRId64, f.bucket_ns);
	st_writer_set_meta(w, "bucket_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRId64, f.origin);
	st_writer_set_meta(w, "origin_ns", buf);
	snprintf(buf, sizeof(buf), "%d", ST_TRACE_SCHEMA_VERSION);
	st_writer_set_meta(w, "schema_version", buf);
	json = st_stats_to_json_text(&w->stats);
	st_writer_set_meta(w, "stats", json);
	st_writer_progress(w, ST_PHASE_COMMIT, 0);	/* a cancel sets w->failed */
	if (w->failed) {
		rc = tc_err_set(err, w->failed, "%s", w->ferr.msg);
		goto out;
	}
	rc = st_exec(w->db, "COMMIT", err);
	if (!rc)
		rc = st_vfs_settle(w->db, path, err);
	st_fin_time(&f, "commit");
	if (f.t0) {
		uint64_t db, dn, dw;

		st_vfs_direct_usage(&db, &dn, &dw);
		fprintf(stderr, "store: direct     %.1f MB in %llu writes, %llu waits\n",
			db / 1e6, (unsigned long long)dn, (unsigned long long)dw);
	}
out:
	if (stats)
		*stats = w->stats;
	tc_buf_free(&f.cb.cols);
	tc_buf_free(&f.cb.args);
	sqlite3_finalize(f.ins_sumn);
	sqlite3_finalize(f.ins_sum);
	sqlite3_finalize(f.ins_depth);
	{
		struct tc_err ignore;

		st_chunk_out_finish(&out, false, &ignore);	/* no-op unless failed early */
	}
	st_flagged_free(w->flagged);	/* finish failed before deps/ */
	w->flagged = NULL;
	free(f.map);
	free(f.ends);
	free(f.eend);
	tc_rank_free(&eseq);
	tc_rank_free(&eids);
	free(f.stack);
	free(f.dmax);
	free(f.dcount);
	free(f.pend.v);
	free(f.level.v);
	free(json);
	st_writer_release_(w);
	if (rc < 0)
		unlink(path);
	else if (tc_fsync_file(path) < 0)
		rc = tc_err_set(err, -EIO, "%s: fsync failed", path);
	st_fin_time(&f, "fsync");
	if (f.t0)
		st_pcache_report(stderr);
	free(path);
	return rc;
}
