/* SPDX-License-Identifier: MIT */
/*
 * store/st-keys.c - the writer's sort keys: one 24-byte key per event, kept
 * in runs of ST_RUN_KEYS (NX_STORE_RUN_KEYS=N sets it, for tests).  Each full run is sorted by a background thread
 * while the reader goes on parsing; st_keys_sort_all() sorts the last one
 * and st_keys_next() merges the runs into the final id order
 * (unit, ts, dur DESC, seq) without copying them.
 *
 * Why runs: one sort of all keys at the end was 0.3 s of 3 s for 4.3M
 * Perfetto events, on the critical path; sorted runs overlap it with the
 * parse on the second core and cost a k-way merge (log2(runs) compares per
 * key) instead.  Runs are never reallocated, so the thread can sort one
 * while the reader fills the next.
 */
#include <stdlib.h>
#include <string.h>
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

static inline void
st_key_swap(struct st_key *a, struct st_key *b)
{
	struct st_key t = *a;

	*a = *b;
	*b = t;
}

static void
st_keys_sift(struct st_key *k, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			return;
		if (c + 1 < n && st_key_lt(&k[c], &k[c + 1]))
			c++;
		if (!st_key_lt(&k[i], &k[c]))
			return;
		st_key_swap(&k[i], &k[c]);
		i = c;
	}
}

/*
 * Introsort in place: glibc's qsort() allocates a copy of the array for its
 * merge sort (another 24 bytes per event at the peak), and the comparison
 * inlines here.  Keys are distinct (seq), median-of-three pivots, heapsort
 * when the recursion gets deep.
 */
static void
st_keys_introsort(struct st_key *k, size_t n, int depth)
{
	while (n > 16) {
		size_t i, j, m = n / 2;
		struct st_key p;

		if (depth-- == 0) {
			for (i = n / 2; i-- > 0;)
				st_keys_sift(k, i, n);
			for (i = n - 1; i > 0; i--) {
				st_key_swap(&k[0], &k[i]);
				st_keys_sift(k, 0, i);
			}
			return;
		}
		if (st_key_lt(&k[m], &k[0]))
			st_key_swap(&k[m], &k[0]);
		if (st_key_lt(&k[n - 1], &k[0]))
			st_key_swap(&k[n - 1], &k[0]);
		if (st_key_lt(&k[n - 1], &k[m]))
			st_key_swap(&k[n - 1], &k[m]);
		p = k[m];
		i = 0;
		j = n - 1;
		for (;;) {		/* Hoare partition */
			while (st_key_lt(&k[i], &p))
				i++;
			while (st_key_lt(&p, &k[j]))
				j--;
			if (i >= j)
				break;
			st_key_swap(&k[i], &k[j]);
			i++;
			j--;
		}
		/* [0, j] <= p <= [j + 1, n): recurse into the smaller side */
		if (j + 1 < n - j - 1) {
			st_keys_introsort(k, j + 1, depth);
			k += j + 1;
			n -= j + 1;
		} else {
			st_keys_introsort(k + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {	/* insertion sort */
		struct st_key x = k[i];
		size_t j = i;

		while (j > 0 && st_key_lt(&x, &k[j - 1])) {
			k[j] = k[j - 1];
			j--;
		}
		k[j] = x;
	}
}

/* Sort the keys; already sorted input (one unit, in time order) is common. */
static void
st_keys_sort(struct st_key *k, size_t n)
{
	size_t i;
	int depth = 0;

	for (i = 1; i < n; i++)
		if (st_key_lt(&k[i], &k[i - 1]))
			break;
	if (i >= n)
		return;
	for (i = n; i > 1; i >>= 1)
		depth += 2;
	st_keys_introsort(k, n, depth);
}


static void *
st_keys_thread(void *arg)
{
	struct st_keys *ks = arg;

	pthread_mutex_lock(&ks->mu);
	for (;;) {
		size_t r;

		struct st_key *run;

		while (ks->sorted >= ks->full && !ks->quit)
			pthread_cond_wait(&ks->cv, &ks->mu);
		if (ks->sorted >= ks->full)
			break;
		r = ks->sorted;
		run = ks->runs[r];	/* the array may be reallocated meanwhile */
		pthread_mutex_unlock(&ks->mu);
		st_keys_sort(run, ks->run);
		pthread_mutex_lock(&ks->mu);
		ks->sorted++;
		pthread_cond_broadcast(&ks->cv);
	}
	pthread_mutex_unlock(&ks->mu);
	return NULL;
}

void
st_keys_init(struct st_keys *ks)
{
	const char *e = getenv("NX_STORE_RUN_KEYS");	/* for tests: small runs */

	memset(ks, 0, sizeof(*ks));
	ks->run = ST_RUN_KEYS;
	if (e && atol(e) >= 16)
		ks->run = (size_t)atol(e);
	pthread_mutex_init(&ks->mu, NULL);
	pthread_cond_init(&ks->cv, NULL);
}

struct st_key *
st_keys_push(struct st_keys *ks)
{
	size_t r = ks->n / ks->run, i = ks->n % ks->run;

	if (i == 0) {
		struct st_key *run = tc_xmalloc(ks->run * sizeof(*run));

		if (ks->thr_on)
			pthread_mutex_lock(&ks->mu);
		if (r == ks->caprun) {
			ks->caprun = ks->caprun ? ks->caprun * 2 : 16;
			ks->runs = tc_xrealloc(ks->runs, ks->caprun * sizeof(*ks->runs));
		}
		ks->runs[r] = run;
		ks->nruns = r + 1;
		if (ks->thr_on)
			pthread_mutex_unlock(&ks->mu);
	}
	if (i == 0 && r > 0) {
		/* run r - 1 is complete (its last key was written by the
		 * caller after the previous push returned) */
		if (!ks->thr_on && !ks->no_thr) {
			ks->thr_on = pthread_create(&ks->thr, NULL, st_keys_thread, ks) == 0;
			ks->no_thr = !ks->thr_on;
		}
		if (ks->thr_on) {
			pthread_mutex_lock(&ks->mu);
			ks->full = r;
			pthread_cond_signal(&ks->cv);
			pthread_mutex_unlock(&ks->mu);
		}
	}
	ks->n++;
	return &ks->runs[r][i];
}

/* Run @r's length. */
static size_t
st_run_len(const struct st_keys *ks, size_t r)
{
	return r + 1 < ks->nruns ? ks->run : ks->n - r * ks->run;
}

/* Heap of run indices ordered by their current key. */
static inline bool
st_heap_lt(const struct st_keys *ks, size_t a, size_t b)
{
	return st_key_lt(&ks->runs[a][ks->pos[a]], &ks->runs[b][ks->pos[b]]);
}

static void
st_heap_down(struct st_keys *ks, size_t i)
{
	size_t n = ks->nheap, *h = ks->heap;

	for (;;) {
		size_t c = 2 * i + 1, t;

		if (c >= n)
			return;
		if (c + 1 < n && st_heap_lt(ks, h[c + 1], h[c]))
			c++;
		if (!st_heap_lt(ks, h[c], h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

void
st_keys_sort_all(struct st_keys *ks)
{
	size_t r;

	if (ks->nruns == 0)
		return;
	/* the last run here, the full ones in the thread (or here without it) */
	st_keys_sort(ks->runs[ks->nruns - 1], st_run_len(ks, ks->nruns - 1));
	if (ks->thr_on) {
		pthread_mutex_lock(&ks->mu);
		ks->full = ks->nruns - 1;
		ks->quit = true;
		pthread_cond_signal(&ks->cv);
		pthread_mutex_unlock(&ks->mu);
		pthread_join(ks->thr, NULL);
		ks->thr_on = false;
	} else {
		for (r = 0; r + 1 < ks->nruns; r++)
			st_keys_sort(ks->runs[r], ks->run);
	}
	ks->pos = tc_xcalloc(ks->nruns, sizeof(*ks->pos));
	ks->heap = tc_xmalloc(ks->nruns * sizeof(*ks->heap));
	for (r = 0; r < ks->nruns; r++)
		ks->heap[r] = r;
	ks->nheap = ks->nruns;
	for (r = ks->nheap / 2; r-- > 0;)
		st_heap_down(ks, r);
}

const struct st_key *
st_keys_next(struct st_keys *ks)
{
	const struct st_key *k;
	size_t r;

	if (!ks->nheap)
		return NULL;
	r = ks->heap[0];
	k = &ks->runs[r][ks->pos[r]++];
	if (ks->pos[r] == st_run_len(ks, r)) {
		/* run exhausted: the key stays valid until st_keys_free() */
		ks->heap[0] = ks->heap[--ks->nheap];
	}
	if (ks->nheap)
		st_heap_down(ks, 0);
	return k;
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
	for (size_t r = 0; r < ks->nruns; r++)
		free(ks->runs[r]);
	free(ks->runs);
	free(ks->pos);
	free(ks->heap);
	pthread_mutex_destroy(&ks->mu);
	pthread_cond_destroy(&ks->cv);
	memset(ks, 0, sizeof(*ks));
}
