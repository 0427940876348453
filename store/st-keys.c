/* SPDX-License-Identifier: MIT */
/*
 * store/st-keys.c - the writer's staging of events as sorted runs.
 *
 * st_event_add() fills a run: ST_RUN_KEYS events (NX_STORE_RUN_KEYS=N sets
 * it, for tests), each a 24-byte sort key plus a 32-byte record (kind, name,
 * cat, value, flags, args offset).  A full run goes to a background thread
 * that sorts its keys by (unit, ts, dur DESC, seq), encodes key and record
 * together in that order (below) into an unlinked spill file, and frees the
 * run.  st_keys_sort_all() does the same for the last run and maps the file;
 * st_keys_merge_next() merges the runs (a heap over their heads) into the
 * final id order, decoding each run front to back.
 *
 * Why: the sort overlaps the parse on the second core; memory stays at two
 * runs whatever the trace size (the keys of a 23M-event trace were 550 MB);
 * and st_writer_finish() reads every run front to back instead of fetching
 * each record from a file-order spill at random (23M events: about one page
 * fault per event).
 *
 * The encoding: a run is cut into stretches, one per unit (struct st_seg,
 * kept in memory: offset, count, unit).  An entry is coded against the
 * previous one of its stretch (all zero before the first):
 *
 *   byte  h: ST_E_DUR dur differs, ST_E_NAME, ST_E_CAT, ST_E_KF kind or
 *            flags differ, ST_E_ARGS has args, ST_E_VAL value differs,
 *            ST_E_VINT value differs and both are whole (tc_whole())
 *   uvarint ts - previous ts (mod 2^64; ts never decreases in a stretch)
 *   svarint seq - previous seq
 *   [svarint dur] [uvarint name] [uvarint cat] [byte kind, byte flags]
 *   [uvarint args_len, svarint args_off - end of the previous args]
 *   [8 bytes of the double value, host order | svarint of the difference
 *    of the two values as whole numbers]
 *
 * A 23M-event Perfetto trace stages about 7.4 bytes an entry (9.2 with its
 * counters' values as doubles) instead of the 56 of the decoded struct
 * st_srec: the copy into the page cache and the merge's reading of it were
 * a fifth of the ingest's CPU.  Entries without
 * args decode with args_off 0, as st_event_add() stages them.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "common/tc-varint.h"
#include "store/store-int.h"

/* (unit, ts, dur DESC, seq): the final id order. */
static inline bool
st_key_lt(const struct st_key *x, const struct st_key *y)
{
	if (x->unit != y->unit)
		return x->unit < y->unit;
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->dur != y->dur)
		return x->dur > y->dur;
	return x->seq < y->seq;
}

/* Insertion sort of a few keys. */
static void
st_keys_isort(struct st_key *k, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct st_key x = k[i];
		size_t j = i;

		while (j > 0 && st_key_lt(&x, &k[j - 1])) {
			k[j] = k[j - 1];
			j--;
		}
		k[j] = x;
	}
}

/* The first index in @k[0, @n) whose key is greater than @x. */
static size_t
st_keys_upper(const struct st_key *k, size_t n, const struct st_key *x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st_key_lt(x, &k[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The first index in @k[0, @n) whose key is not less than @x. */
static size_t
st_keys_lower(const struct st_key *k, size_t n, const struct st_key *x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st_key_lt(&k[mid], x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Merge the sorted @k[0, @na) and @k[@na, @n) using @buf (room for @na).
 * Only the part where they overlap moves: the keys of the first half below
 * the second half's first key, and the keys of the second half above the
 * first half's last key, are found by binary search and stay where they
 * are.  Nearly sorted input costs little more than the searches.
 */
static void
st_keys_merge2(struct st_key *k, size_t na, size_t n, struct st_key *buf)
{
	struct st_key *b = k + na;
	size_t a0, nb, i, j, o;

	if (!st_key_lt(&b[0], &k[na - 1]))
		return;		/* in order already */
	a0 = st_keys_upper(k, na, &b[0]);
	nb = st_keys_lower(b, n - na, &k[na - 1]);
	memcpy(buf, k + a0, (na - a0) * sizeof(*buf));
	for (i = 0, j = 0, o = a0; i < na - a0 && j < nb;)
		k[o++] = st_key_lt(&b[j], &buf[i]) ? b[j++] : buf[i++];
	memcpy(k + o, buf + i, (na - a0 - i) * sizeof(*buf));	/* the rest of @b is in place */
}

#define ST_SORT_BLOCK 32	/* keys sorted by insertion before merging */

/*
 * Sort @k[0, @n) with @buf (room for @n keys) as merge space: blocks by
 * insertion, then merged pairwise, bottom up.  Worst case n log n; a unit's
 * events come nearly in order (a slice is written when it ends, after the
 * slices nested in it; overlapping copies of a track are a few sorted
 * sequences), and then most merges only compare their edges.
 */
static void
st_keys_msort(struct st_key *k, size_t n, struct st_key *buf)
{
	for (size_t i = 0; i < n; i += ST_SORT_BLOCK)
		st_keys_isort(k + i, TC_MIN(ST_SORT_BLOCK, n - i));
	for (size_t w = ST_SORT_BLOCK; w < n; w *= 2)
		for (size_t i = 0; i + w < n; i += 2 * w)
			st_keys_merge2(k + i, w, TC_MIN(2 * w, n - i), buf);
}

/* Units per run beyond which the counting pass is not worth its array. */
#define ST_SORT_MAX_UNITS(n) ((n) / 4 + 4096)

/*
 * Sort a run's @n keys into final order, with @tmp (room for @n keys) as
 * scratch; returns the sorted array, @k or @tmp.  A run holds the events
 * of all units interleaved in file order: a stable counting pass by unit
 * into @tmp first (file order kept within a unit), then each unit's
 * segment is merge-sorted alone, with the same range of @k as merge space.
 * Segments are short, and the comparisons over the unit field of a
 * whole-run sort are spared.  Runs with too many distinct units are
 * merge-sorted whole.
 */
static struct st_key *
st_keys_sort(struct st_key *k, struct st_key *tmp, size_t n)
{
	int32_t umin = INT32_MAX, umax = INT32_MIN;
	size_t i, range, *cnt;

	for (i = 0; i < n; i++) {
		umin = TC_MIN(umin, k[i].unit);
		umax = TC_MAX(umax, k[i].unit);
	}
	range = n ? (size_t)((int64_t)umax - umin) + 1 : 0;
	if (range <= 1 || range > ST_SORT_MAX_UNITS(n)) {
		st_keys_msort(k, n, tmp);
		return k;
	}
	cnt = tc_xcalloc(range + 1, sizeof(*cnt));
	for (i = 0; i < n; i++)
		cnt[k[i].unit - umin + 1]++;
	for (i = 1; i <= range; i++)
		cnt[i] += cnt[i - 1];
	for (i = 0; i < n; i++)	/* cnt[u]: the next slot of unit u */
		tmp[cnt[k[i].unit - umin]++] = k[i];
	/* now cnt[u] is the end of unit u's segment and the start of u + 1's */
	for (i = 0; i < range; i++) {
		size_t lo = i ? cnt[i - 1] : 0;

		st_keys_msort(tmp + lo, cnt[i] - lo, k + lo);
	}
	free(cnt);
	return tmp;
}

/*
 * Run buffers are reused: a fresh 56 MiB allocation per run costs its page
 * faults and zeroing again (about 0.5 s of the reader's thread on a 23M-event
 * trace).  Called with ks->mu held when the thread runs.
 */
static void
st_run_release(struct st_keys *ks, struct st_key *keys, struct st_rec *recs)
{
	if (ks->nfree < ST_RUNS_FREE) {
		ks->free_keys[ks->nfree] = keys;
		ks->free_recs[ks->nfree++] = recs;
		return;
	}
	free(keys);
	free(recs);
}

enum {
	ST_E_DUR = 1, ST_E_NAME = 2, ST_E_CAT = 4, ST_E_KF = 8, ST_E_ARGS = 16, ST_E_VAL = 32,
	ST_E_VINT = 64,
};

#define ST_E_MAX (1 + 3 * TC_VARINT_MAX + 2 * 5 + 2 + 5 + 2 * TC_VARINT_MAX)	/* bytes */

/* Encode @e after @prev (same stretch) at @p; return the bytes written. */
static size_t
st_enc_entry(uint8_t *p, const struct st_srec *e, const struct st_srec *prev,
	     uint64_t *args_end)
{
	uint8_t *p0 = p++;
	unsigned h = 0;

	p += tc_uvarint_put(p, (uint64_t)e->key.ts - (uint64_t)prev->key.ts);
	p += tc_uvarint_put(p, tc_zigzag((int64_t)e->key.seq - (int64_t)prev->key.seq));
	if (e->key.dur != prev->key.dur) {
		h |= ST_E_DUR;
		p += tc_uvarint_put(p, tc_zigzag(e->key.dur));
	}
	if (e->name != prev->name) {
		h |= ST_E_NAME;
		p += tc_uvarint_put(p, e->name);
	}
	if (e->cat != prev->cat) {
		h |= ST_E_CAT;
		p += tc_uvarint_put(p, e->cat);
	}
	if (e->kind != prev->kind || e->flags != prev->flags) {
		h |= ST_E_KF;
		*p++ = e->kind;
		*p++ = e->flags;
	}
	if (e->args_len) {
		h |= ST_E_ARGS;
		p += tc_uvarint_put(p, e->args_len);
		p += tc_uvarint_put(p, tc_zigzag((int64_t)(e->args_off - *args_end)));
		*args_end = e->args_off + e->args_len;
	}
	if (memcmp(&e->value, &prev->value, sizeof(e->value))) {
		if (tc_whole(e->value) && tc_whole(prev->value)) {
			h |= ST_E_VINT;
			p += tc_uvarint_put(p, tc_zigzag((int64_t)e->value - (int64_t)prev->value));
		} else {
			h |= ST_E_VAL;
			memcpy(p, &e->value, sizeof(e->value));
			p += sizeof(e->value);
		}
	}
	*p0 = (uint8_t)h;
	return (size_t)(p - p0);
}

/* A varint the encoder above wrote: no bounds to check. */
static inline uint64_t
st_dec_uv(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;

	if (v >= 0x80) {
		unsigned shift = 7;
		uint8_t b;

		v &= 0x7f;
		do {
			b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		} while (b >= 0x80);
	}
	*pp = p;
	return v;
}

/* Decode the entry at *@pp over @e (the previous one of its stretch). */
static inline void
st_dec_entry(const uint8_t **pp, struct st_srec *e, uint64_t *args_end)
{
	const uint8_t *p = *pp;
	unsigned h = *p++;

	e->key.ts = (int64_t)((uint64_t)e->key.ts + st_dec_uv(&p));
	e->key.seq = (uint32_t)((int64_t)e->key.seq + tc_unzigzag(st_dec_uv(&p)));
	if (h & ST_E_DUR)
		e->key.dur = tc_unzigzag(st_dec_uv(&p));
	if (h & ST_E_NAME)
		e->name = (uint32_t)st_dec_uv(&p);
	if (h & ST_E_CAT)
		e->cat = (uint32_t)st_dec_uv(&p);
	if (h & ST_E_KF) {
		e->kind = p[0];
		e->flags = p[1];
		p += 2;
	}
	if (h & ST_E_ARGS) {
		e->args_len = (uint32_t)st_dec_uv(&p);
		e->args_off = *args_end + (uint64_t)tc_unzigzag(st_dec_uv(&p));
		*args_end = e->args_off + e->args_len;
	} else {
		e->args_len = 0;
		e->args_off = 0;
	}
	if (h & ST_E_VAL) {
		memcpy(&e->value, p, sizeof(e->value));
		p += sizeof(e->value);
	} else if (h & ST_E_VINT) {
		e->value = (double)((int64_t)e->value + tc_unzigzag(st_dec_uv(&p)));
	}
	*pp = p;
}

/* Start stretch @unit of the run being emitted, at spill offset @off. */
static void
st_seg_start(struct st_keys *ks, int32_t unit, uint64_t off)
{
	if (ks->nsegs == ks->capsegs) {
		ks->capsegs = ks->capsegs ? ks->capsegs * 2 : 256;
		ks->segs = tc_xrealloc(ks->segs, ks->capsegs * sizeof(*ks->segs));
	}
	ks->segs[ks->nsegs++] = (struct st_seg){ .off = off, .n = 0, .unit = unit };
}

/* Sort a run and append it, encoded, to the sorted spill. */
static int
st_run_emit(struct st_keys *ks, struct st_key *keys, struct st_rec *recs, size_t n,
	    uint64_t base_seq)
{
	uint8_t buf[64 * 1024];
	struct st_srec ent[2];	/* this entry and the previous, by turns: no struct copy */
	uint64_t args_end = 0;
	size_t i, nb = 0;
	unsigned cur = 0;
	int rc = 0;

	if (!ks->scratch)
		ks->scratch = tc_xmalloc(ks->run * sizeof(*ks->scratch));
	keys = st_keys_sort(keys, ks->scratch, n);
	ks->runseg = tc_xrealloc(ks->runseg, (ks->nemitted + 2) * sizeof(*ks->runseg));
	ks->runseg[ks->nemitted] = ks->nsegs;
	for (i = 0; i < n && !rc; i++, cur ^= 1) {
		const struct st_key *k = &keys[i];
		const struct st_rec *r = &recs[k->seq - base_seq];
		struct st_srec *e = &ent[cur], *prev = &ent[cur ^ 1];

		/* records are gathered in key order: fetch a few ahead */
		if (i + 16 < n)
			__builtin_prefetch(&recs[keys[i + 16].seq - base_seq]);
		if (i == 0 || k->unit != prev->key.unit) {
			st_seg_start(ks, k->unit, ks->out.size + nb);
			memset(prev, 0, sizeof(*prev));
			prev->key.unit = k->unit;
			args_end = 0;
		}
		ks->segs[ks->nsegs - 1].n++;
		e->key = *k;
		e->value = r->value;
		e->args_off = r->args_off;
		e->name = r->name;
		e->cat = r->cat;
		e->args_len = r->args_len;
		e->kind = r->kind;
		e->flags = r->flags;
		nb += st_enc_entry(buf + nb, e, prev, &args_end);
		if (nb > sizeof(buf) - ST_E_MAX || i + 1 == n) {
			rc = st_spill_write(&ks->out, buf, nb);
			nb = 0;
		}
	}
	ks->runseg[++ks->nemitted] = ks->nsegs;
	return rc;
}

static void *
st_keys_thread(void *arg)
{
	struct st_keys *ks = arg;

	tc_thread_name("run-sort");
	pthread_mutex_lock(&ks->mu);
	for (;;) {
		struct st_key *keys;
		struct st_rec *recs;
		size_t r;
		int rc;

		while (ks->sorted >= ks->full && !ks->quit)
			pthread_cond_wait(&ks->cv, &ks->mu);
		if (ks->sorted >= ks->full)
			break;
		r = ks->sorted;
		keys = ks->runs[r];	/* the arrays may be reallocated meanwhile */
		recs = ks->recs[r];
		ks->runs[r] = NULL;
		ks->recs[r] = NULL;
		pthread_mutex_unlock(&ks->mu);
		rc = ks->rc ? 0 : st_run_emit(ks, keys, recs, ks->run, r * ks->run + 1);
		pthread_mutex_lock(&ks->mu);
		st_run_release(ks, keys, recs);
		if (rc && !ks->rc)
			ks->rc = rc;
		ks->sorted++;
		pthread_cond_broadcast(&ks->cv);
	}
	pthread_mutex_unlock(&ks->mu);
	return NULL;
}

void
st_keys_init(struct st_keys *ks)
{
	memset(ks, 0, sizeof(*ks));
	/* NX_STORE_RUN_KEYS=N, for tests: small runs */
	ks->run = (size_t)tc_env_num("NX_STORE_RUN_KEYS", 16, LONG_MAX, (long)ST_RUN_KEYS);
	pthread_mutex_init(&ks->mu, NULL);
	pthread_cond_init(&ks->cv, NULL);
}

int
st_keys_open(struct st_keys *ks, const char *base, struct tc_err *err)
{
	return st_spill_open(&ks->out, base, "-stage-sorted", ST_SPILL_RAM, err);
}

/* At most two full runs wait for the thread: the reader waits beyond. */
#define ST_RUNS_PENDING 2

struct st_key *
st_keys_push(struct st_keys *ks, struct st_rec **rec)
{
	size_t r = ks->n / ks->run, i = ks->n % ks->run;

	if (i == 0) {
		struct st_key *keys = NULL;
		struct st_rec *recs = NULL;

		if (ks->thr_on)
			pthread_mutex_lock(&ks->mu);
		if (ks->nfree) {
			keys = ks->free_keys[--ks->nfree];
			recs = ks->free_recs[ks->nfree];
		}
		if (ks->thr_on)
			pthread_mutex_unlock(&ks->mu);
		if (!keys) {
			keys = tc_xmalloc(ks->run * sizeof(*keys));
			recs = tc_xmalloc(ks->run * sizeof(*recs));
		}
		if (r > 0 && !ks->thr_on && !ks->no_thr) {
			ks->thr_on = pthread_create(&ks->thr, NULL, st_keys_thread, ks) == 0;
			ks->no_thr = !ks->thr_on;
		}
		if (ks->thr_on)
			pthread_mutex_lock(&ks->mu);
		if (r == ks->caprun) {
			ks->caprun = ks->caprun ? ks->caprun * 2 : 16;
			ks->runs = tc_xrealloc(ks->runs, ks->caprun * sizeof(*ks->runs));
			ks->recs = tc_xrealloc(ks->recs, ks->caprun * sizeof(*ks->recs));
		}
		ks->runs[r] = keys;
		ks->recs[r] = recs;
		ks->nruns = r + 1;
		if (r > 0 && ks->thr_on) {
			/* run r - 1 is complete: its last key was written by
			 * the caller after the previous push returned */
			ks->full = r;
			pthread_cond_signal(&ks->cv);
			while (ks->full - ks->sorted > ST_RUNS_PENDING)
				pthread_cond_wait(&ks->cv, &ks->mu);
		}
		if (ks->thr_on)
			pthread_mutex_unlock(&ks->mu);
		if (r > 0 && !ks->thr_on) {	/* no thread: here */
			if (!ks->rc)
				ks->rc = st_run_emit(ks, ks->runs[r - 1], ks->recs[r - 1], ks->run,
						     (r - 1) * ks->run + 1);
			st_run_release(ks, ks->runs[r - 1], ks->recs[r - 1]);
			ks->runs[r - 1] = NULL;
			ks->recs[r - 1] = NULL;
			ks->sorted = r;
		}
	}
	ks->n++;
	*rec = &ks->recs[r][i];
	return &ks->runs[r][i];
}

/* Run @r's length. */
static size_t
st_run_len(const struct st_keys *ks, size_t r)
{
	return r + 1 < ks->nruns ? ks->run : ks->n - r * ks->run;
}

int
st_keys_sort_all(struct st_keys *ks)
{
	size_t last;
	int rc;

	if (ks->thr_on) {	/* the full runs first: the file is in run order */
		pthread_mutex_lock(&ks->mu);
		ks->quit = true;
		pthread_cond_signal(&ks->cv);
		pthread_mutex_unlock(&ks->mu);
		pthread_join(ks->thr, NULL);
		ks->thr_on = false;
	}
	rc = ks->rc;
	if (!rc && ks->nruns) {
		last = ks->nruns - 1;
		rc = st_run_emit(ks, ks->runs[last], ks->recs[last], st_run_len(ks, last),
				 last * ks->run + 1);
		st_run_release(ks, ks->runs[last], ks->recs[last]);
		ks->runs[last] = NULL;
		ks->recs[last] = NULL;
	}
	if (!rc)
		rc = st_spill_map(&ks->out);
	if (rc < 0)
		return rc;
	if (ks->out.size > ks->out.mapsz || ks->nemitted != ks->nruns)
		return -EIO;
	return 0;
}

/*
 * Heap of the runs' current keys.  Each node keeps a copy of its run's head
 * key, so sifting compares within this small array instead of reaching into
 * one mapped run per comparison (that indirection was 6% of an ingest).
 */
static void
st_heap_down(struct st_merge *m, size_t i)
{
	size_t n = m->nheap;
	struct st_mnode *h = m->heap, x;

	/* field by field (see st_keys_merge_next()): the top's key was just
	 * stored that way, and a wider load of it would stall */
	x.key.ts = h[i].key.ts;
	__asm__("" ::: "memory");
	x.key.dur = h[i].key.dur;
	x.key.seq = h[i].key.seq;
	x.key.unit = h[i].key.unit;
	x.run = h[i].run;
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && st_key_lt(&h[c + 1].key, &h[c].key))
			c++;
		if (!st_key_lt(&h[c].key, &x.key))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* The smallest head below the top: the top's lesser child. */
static void
st_merge_lim(struct st_merge *m)
{
	if (m->nheap > 2 && st_key_lt(&m->heap[2].key, &m->heap[1].key))
		m->lim = m->heap[2].key;
	else if (m->nheap > 1)
		m->lim = m->heap[1].key;
}

/* Decode @c's next entry into c->e; false at the end of its stretches. */
static inline bool
st_rcur_next(const struct st_keys *ks, struct st_merge *m, struct st_rcur *c)
{
	const uint8_t *p;

	if (!c->left) {
		const struct st_seg *g;

		if (c->seg >= c->seg_end)
			return false;
		g = &ks->segs[c->seg++];
		c->p = (const uint8_t *)ks->out.map + g->off;
		c->left = g->n;
		memset(&c->e, 0, sizeof(c->e));
		c->e.key.unit = g->unit;
		c->args_end = 0;
	}
	p = c->p;
	/* the heap switches between a few dozen runs: their streams are not
	 * all followed by the hardware prefetcher */
	__builtin_prefetch(p + 256);
	st_dec_entry(&c->p, &c->e, &c->args_end);
	m->read += (uint64_t)(c->p - p);
	c->left--;
	return true;
}

/* The first of stretches [@lo, @hi) of one run whose unit is @unit or more. */
static size_t
st_seg_first(const struct st_seg *segs, size_t lo, size_t hi, int64_t unit)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (segs[mid].unit < unit)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
st_keys_merge_init(const struct st_keys *ks, struct st_merge *m, int unit_lo, int unit_hi)
{
	size_t r, n = ks->nruns ? ks->nruns : 1;

	memset(m, 0, sizeof(*m));
	m->cur = tc_xcalloc(n, sizeof(*m->cur));
	m->heap = tc_xmalloc(n * sizeof(*m->heap));
	for (r = 0; r < ks->nruns; r++) {
		struct st_rcur *c = &m->cur[r];
		size_t g = ks->runseg[r], end = ks->runseg[r + 1];

		/* a run's stretches are in unit order: deps/ opens one merge
		 * per unit, of thousands of units maybe */
		g = st_seg_first(ks->segs, g, end, unit_lo);
		c->seg = g;
		c->seg_end = st_seg_first(ks->segs, g, end, (int64_t)unit_hi + 1);
		if (st_rcur_next(ks, m, c)) {
			m->heap[m->nheap].key = c->e.key;
			m->heap[m->nheap++].run = r;
		}
	}
	for (r = m->nheap / 2; r-- > 0;)
		st_heap_down(m, r);
	st_merge_lim(m);
}

/*
 * The top run gives its head; while its next entry stays below every other
 * head (a unit's stretch of one run that no other run overlaps, the common
 * case when a trace is not copies of itself) that costs one comparison,
 * with no sifting.
 */
const struct st_srec *
st_keys_merge_next(const struct st_keys *ks, struct st_merge *m)
{
	struct st_rcur *c;

	if (!m->nheap)
		return NULL;
	c = &m->cur[m->heap[0].run];
	m->out = c->e;
	if (!st_rcur_next(ks, m, c)) {
		m->heap[0] = m->heap[--m->nheap];	/* run exhausted */
	} else {
		/* field by field: a 16-byte load of what st_dec_entry() just
		 * stored as two 8-byte fields cannot be forwarded and stalls */
		m->heap[0].key.ts = c->e.key.ts;
		__asm__("" ::: "memory");
		m->heap[0].key.dur = c->e.key.dur;
		m->heap[0].key.seq = c->e.key.seq;
		m->heap[0].key.unit = c->e.key.unit;
		if (m->nheap == 1 || st_key_lt(&m->heap[0].key, &m->lim))
			return &m->out;
	}
	if (m->nheap > 1) {
		st_heap_down(m, 0);
		st_merge_lim(m);
	}
	return &m->out;
}

void
st_keys_merge_free(struct st_merge *m)
{
	free(m->cur);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

void
st_keys_drop(struct st_keys *ks)
{
	st_spill_drop(&ks->out);
}

void
st_keys_trim(struct st_keys *ks)
{
	for (size_t i = 0; i < ks->nfree; i++) {
		free(ks->free_keys[i]);
		free(ks->free_recs[i]);
	}
	ks->nfree = 0;
	free(ks->scratch);
	ks->scratch = NULL;
}

void
st_keys_free(struct st_keys *ks)
{
	if (!ks->run)		/* never initialised, or freed already */
		return;
	if (ks->thr_on) {
		pthread_mutex_lock(&ks->mu);
		ks->quit = true;
		ks->full = 0;		/* stop after the run being sorted */
		pthread_cond_signal(&ks->cv);
		pthread_mutex_unlock(&ks->mu);
		pthread_join(ks->thr, NULL);
		ks->thr_on = false;
	}
	for (size_t r = 0; r < ks->nruns; r++) {
		free(ks->runs[r]);
		free(ks->recs[r]);
	}
	free(ks->runs);
	free(ks->recs);
	st_keys_trim(ks);
	free(ks->segs);
	free(ks->runseg);
	st_spill_close(&ks->out);
	pthread_mutex_destroy(&ks->mu);
	pthread_cond_destroy(&ks->cv);
	memset(ks, 0, sizeof(*ks));
}
