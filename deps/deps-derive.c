/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-derive.c - deps_derive(): run the derivation engine over the
 * flagged events of a trace being finished, in processing order, and hand
 * the edges it finds to the store (st_writer_add_edge_text()), which packs
 * them.  Called by st_writer_finish() inside its transaction.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "deps/deps.h"
#include "deps/deps-int.h"

struct derive {
	struct st_writer *w;
	struct st_stats *stats;
	struct tc_err *err;
	bool edge_failed;	/* @err says why */
	uint32_t *texts[2];	/* store text ids of the engine's buffer and semaphore names */
	size_t ntexts[2];
};

/* Hand an edge to the store, which packs them at the end of finish. */
static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	struct derive *d = ctx;
	int rc = st_writer_add_edge(d->w, src, dst, kind, label, len);

	if (rc < 0) {
		d->edge_failed = true;
		return tc_err_set(d->err, rc, "storing dependency edges: %s", strerror(-rc));
	}
	if (d->stats)
		d->stats->edges[kind]++;
	return 0;
}

/*
 * Hand an edge with a one-item label to the store, the name as a text id
 * resolved once per engine name.
 */
static int
on_parts(void *ctx, int64_t src, int64_t dst, int kind, const struct deps_label *l)
{
	struct derive *d = ctx;
	int t = l->shape == DEPS_LABEL_BYTES ? 0 : 1, rc;

	if (l->name_id >= d->ntexts[t]) {
		size_t n = TC_MAX((size_t)l->name_id + 1, 2 * d->ntexts[t]);

		d->texts[t] = tc_xrealloc(d->texts[t], n * sizeof(*d->texts[t]));
		memset(d->texts[t] + d->ntexts[t], 0, (n - d->ntexts[t]) * sizeof(*d->texts[t]));
		d->ntexts[t] = n;
	}
	if (!d->texts[t][l->name_id]) {		/* text ids start at 1 */
		rc = st_writer_edge_text(d->w, l->name, l->len, &d->texts[t][l->name_id]);
		if (rc < 0)
			goto fail;
	}
	rc = st_writer_add_edge_text(d->w, src, dst, kind,
				     t == 0 ? ST_LABEL_BYTES : ST_LABEL_AT_LEAST,
				     d->texts[t][l->name_id], l->a, l->b);
	if (rc < 0)
		goto fail;
	if (d->stats)
		d->stats->edges[kind]++;
	return 0;
fail:
	d->edge_failed = true;
	return tc_err_set(d->err, rc, "storing dependency edges: %s", strerror(-rc));
}

static void
on_bad(void *ctx, int64_t eid, const char *what, const char *text)
{
	struct derive *d = ctx;

	if (d->w)
		st_writer_count_bad_access(d->w, "event %lld: bad %s \"%.160s\"", (long long)eid,
					   what, text);
}

/*
 * Processing order is (ts, ts + dur, seq) over the events flagged by the
 * store (args mention reads, writes, signals, waits or operands).  The
 * store reads each unit's flagged events in id order (st_writer_flagged_open()),
 * and ids already run in (ts, dur DESC, seq) order within a unit, so each
 * unit is read as it is, runs of equal start times are re-sorted by (end,
 * seq), and a heap merges the units: no sort of the whole trace, no SQL, and
 * the args are read where the store staged them, not copied.
 */
#define DERIVE_DROP_BYTES (32u << 20)	/* args read between two page drops */
#define DERIVE_PROGRESS 65536	/* events between two progress reports (a power of 2) */
#define DERIVE_LEND_BYTES (1u << 20)	/* args read between two st_writer_flagged_done() */

/*
 * One unit's flagged events: a batch read ahead, and the current run of
 * equal start times.  Reading a batch at a time keeps a unit's merge of the
 * runs hot in the cache while it decodes them; the heap then takes the
 * events from an array, as it would from a file.
 */
#define DERIVE_BATCH 32

struct dstream {
	struct st_fcur *c;	/* owned: the unit's events, in id order */
	struct st_fev *buf;	/* owned: DERIVE_BATCH; [bpos, nbuf) not taken yet */
	size_t nbuf, bpos;
	struct st_fev *run;	/* owned: the run, in processing order */
	size_t nrun, caprun, at;
	uint64_t low;		/* where the args of the run's first event in id order start */
	bool low_none;		/* that event has no args */
};

static inline bool
fev_lt(const struct st_fev *x, const struct st_fev *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->ts + x->dur != y->ts + y->dur)
		return x->ts + x->dur < y->ts + y->dur;
	return x->seq < y->seq;
}

/* @u's next event not taken into a run; NULL at the end. */
static inline const struct st_fev *
dstream_peek(struct dstream *u)
{
	if (u->bpos == u->nbuf) {
		u->bpos = 0;
		u->nbuf = u->c ? st_fcur_read(u->c, u->buf, DERIVE_BATCH) : 0;
		if (!u->nbuf)
			return NULL;
	}
	return &u->buf[u->bpos];
}

/* Take @u's next run of events with one start time, sorted by (end, seq); false at the end. */
static bool
dstream_fill(struct dstream *u)
{
	const struct st_fev *x = dstream_peek(u);
	int64_t ts;

	u->nrun = u->at = 0;
	if (!x)
		return false;
	ts = x->ts;
	u->low = x->args_off;
	u->low_none = !x->args_len;
	do {
		size_t j = u->nrun++;

		if (u->nrun > u->caprun) {
			u->caprun = TC_MAX((size_t)8, 2 * u->caprun);
			u->run = tc_xrealloc(u->run, u->caprun * sizeof(*u->run));
		}
		while (j > 0 && fev_lt(x, &u->run[j - 1])) {	/* a few rows */
			u->run[j] = u->run[j - 1];
			j--;
		}
		u->run[j] = *x;
		u->bpos++;
	} while ((x = dstream_peek(u)) && x->ts == ts);
	return true;
}

static inline const struct st_fev *
dhead(const struct dstream *u)
{
	return &u->run[u->at];
}

static void
heap_down(struct dstream **h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct dstream *t;

		if (c >= n)
			return;
		if (c + 1 < n && fev_lt(dhead(h[c + 1]), dhead(h[c])))
			c++;
		if (!fev_lt(dhead(h[c]), dhead(h[i])))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/*
 * Where the args of the events still to read start, at the least, when
 * every unit's args lie in id order (st_writer_flagged_in_order()): at
 * those of the first event in id order of each stream's run (the events
 * not read yet are that run's and those after it).  0 (nothing known) when
 * such an event has no args; UINT64_MAX when no stream is left.
 */
static uint64_t
derive_args_low(struct dstream *const *h, size_t nh)
{
	uint64_t low = UINT64_MAX;

	for (size_t i = 0; i < nh; i++) {
		if (h[i]->low_none)
			return 0;
		low = TC_MIN(low, h[i]->low);
	}
	return low;
}

/*
 * The engine over the merged unit streams; 0 or an edge callback's error.
 * When the args lie in order, the memory of those read is handed back as
 * the reading goes (st_writer_flagged_done()): the store collects the
 * edges there rather than in new pages.
 */
static int
derive_merged(struct deps_engine *e, struct st_writer *w)
{
	int nunits = st_writer_flagged_units(w);
	struct dstream *v = tc_xcalloc((size_t)nunits + 1, sizeof(*v));
	struct dstream **h = tc_xmalloc(((size_t)nunits + 1) * sizeof(*h));
	size_t nh = 0, read = 0, total = 0, done = 0, lend = 0;
	bool in_order = st_writer_flagged_in_order(w);
	int rc = 0;

	for (int i = 1; i <= nunits; i++) {
		v[i].c = st_writer_flagged_open(w, i);
		total += (size_t)st_writer_flagged_count(w, i);
		if (v[i].c)
			v[i].buf = tc_xmalloc(DERIVE_BATCH * sizeof(*v[i].buf));
		if (dstream_fill(&v[i]))
			h[nh++] = &v[i];
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(h, nh, i);
	while (nh) {
		struct dstream *u = h[0];
		const struct st_fev *r = dhead(u);
		uint32_t len = r->args_len;

		rc = deps_engine_event(e, r->id, r->ts, r->dur, st_writer_flagged_args(w, r), len);
		if (rc)
			break;
		if (!(++done & (DERIVE_PROGRESS - 1)) &&
		    st_writer_progress(w, ST_PHASE_DEPS, (double)done / (double)total) < 0) {
			rc = -ECANCELED;
			break;
		}
		read += len + sizeof(*r);
		if (read > DERIVE_DROP_BYTES) {	/* keep the resident set bounded */
			st_writer_flagged_drop(w);
			read = 0;
		}
		/* r is not valid from here on */
		if (++u->at == u->nrun && !dstream_fill(u)) {
			h[0] = h[--nh];
		} else {
			/* the stream's next args, read when the other streams have had their turn */
			const char *a = st_writer_flagged_args(w, dhead(u));

			for (uint32_t k = 0; a && k < dhead(u)->args_len; k += 64)
				__builtin_prefetch(a + k);
		}
		heap_down(h, nh, 0);
		lend += len;
		if (in_order && lend > DERIVE_LEND_BYTES) {
			st_writer_flagged_done(w, derive_args_low(h, nh));
			lend = 0;
		}
	}
	if (in_order && !rc)	/* deps_engine_finish() reads no args */
		st_writer_flagged_done(w, UINT64_MAX);
	for (int i = 1; i <= nunits; i++) {
		st_fcur_free(v[i].c);
		free(v[i].buf);
		free(v[i].run);
	}
	free(v);
	free(h);
	return rc;
}

/*
 * NX_DEPS_CHECK=1 (tests): read the flagged events again through the SQL
 * `events` table and fail unless the store hands over exactly those, unit
 * by unit in id order, with the same times, seq and args.
 */
struct check {
	struct st_writer *w;
	int unit;		/* being compared */
	struct st_fcur *c;	/* owned: its flagged events */
	int64_t n, i;		/* i: those compared */
};

/* Done with the current unit (all its events seen?): on to @unit. */
static int
check_to(struct check *c, int unit, struct tc_err *err)
{
	while (c->unit < unit) {
		if (c->i != c->n)
			return tc_err_set(err, -EPROTO, "dependency check: unit %d: %lld flagged "
					  "events handed over, %lld in the events table", c->unit,
					  (long long)c->n, (long long)c->i);
		st_fcur_free(c->c);
		c->c = st_writer_flagged_open(c->w, ++c->unit);
		c->n = st_writer_flagged_count(c->w, c->unit);
		c->i = 0;
	}
	return 0;
}

static int
derive_check(struct st_writer *w, struct tc_err *err)
{
	sqlite3 *db = st_writer_db(w);
	struct check c = { .w = w };
	sqlite3_stmt *q = NULL;
	int rc = 0, s;

	if (sqlite3_prepare_v2(db, "SELECT unit, id, ts, dur, seq, args FROM events "
			       "WHERE (flags & 1) != 0 ORDER BY unit, id", -1, &q, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "dependency check: %s", sqlite3_errmsg(db));
		goto out;
	}
	while ((s = sqlite3_step(q)) == SQLITE_ROW) {
		const char *args = (const char *)sqlite3_column_text(q, 5), *fa;
		size_t len = (size_t)sqlite3_column_bytes(q, 5);
		struct st_fev r;
		bool has;

		rc = check_to(&c, sqlite3_column_int(q, 0), err);
		if (rc < 0)
			goto out;
		has = c.c && st_fcur_read(c.c, &r, 1) == 1;
		c.i++;
		fa = has ? st_writer_flagged_args(w, &r) : NULL;
		if (!has || r.id != sqlite3_column_int64(q, 1) || r.ts != sqlite3_column_int64(q, 2) ||
		    r.dur != sqlite3_column_int64(q, 3) || r.seq != sqlite3_column_int64(q, 4) ||
		    !args != !fa || (args && (r.args_len != len || memcmp(fa, args, len)))) {
			rc = tc_err_set(err, -EPROTO, "dependency check: unit %d: event %lld is not "
					"the one handed over", c.unit,
					(long long)sqlite3_column_int64(q, 1));
			goto out;
		}
	}
	if (s != SQLITE_DONE)
		rc = tc_err_set(err, -EIO, "dependency check: %s", sqlite3_errmsg(db));
	else	/* the units after the last row have none either */
		rc = check_to(&c, st_writer_flagged_units(w) + 1, err);
out:
	st_fcur_free(c.c);
	sqlite3_finalize(q);
	return rc;
}

bool
deps_enabled(void)
{
	const char *s = getenv("NX_DEPS_DISABLE");

	return !s || strcmp(s, "1");
}

/*
 * NX_STORE_TIMING=1: the wall time since @t0, the CPU time of this thread
 * since @c0 and that of each worker (on a machine with a core for each, the
 * wall time would be about the largest of them).
 */
static void
derive_timing(struct deps_engine *e, int64_t t0, int64_t c0)
{
	const char *what;
	int64_t ns;

	fprintf(stderr, "deps: %.3f s wall; cpu: this thread %.3f s",
		(double)(tc_mono_ns() - t0) / 1e9, (double)(tc_thread_cpu_ns() - c0) / 1e9);
	for (int k = 0; (ns = deps_engine_thread_cpu(e, k, &what)) >= 0; k++)
		fprintf(stderr, ", %s %.3f s", what, (double)ns / 1e9);
	fprintf(stderr, "\n");
}

/*
 * Threads for the derivation, this one included (deps_engine_set_threads()):
 * NX_DEPS_THREADS=N, else the CPUs this process may use (tc_ncpus(): its
 * affinity and its cgroup's quota), at least 2 and at most 8.  1: all on
 * this one, as before there were threads.  Two threads even on one CPU:
 * the batched path they take was as fast there (1M events pinned to one
 * CPU: deps phase 0.93 to 1.00 s on two threads, 1.00 to 1.03 s on one).
 */
static int
deps_threads(void)
{
	long n = tc_env_num("NX_DEPS_THREADS", 1, LONG_MAX, 0);

	if (n)
		return (int)TC_MIN(n, 8L);
	return TC_MAX(2, TC_MIN(tc_ncpus(), 8));
}

int
deps_derive(struct st_writer *w, struct st_stats *stats, struct tc_err *err)
{
	struct derive d = { .w = w, .stats = stats, .err = err };
	struct deps_engine *e = NULL;
	int64_t t0 = tc_mono_ns(), c0 = tc_thread_cpu_ns();
	int rc;

	if (!deps_enabled())
		return 0;
	if (getenv("NX_DEPS_CHECK") && !strcmp(getenv("NX_DEPS_CHECK"), "1")) {
		rc = derive_check(w, err);
		if (rc < 0)
			return rc;
	}
	e = deps_engine_new(on_edge, on_bad, &d);
	deps_engine_set_parts(e, on_parts);
	deps_engine_set_threads(e, deps_threads());	/* on failure: all on this thread */
	rc = derive_merged(e, w);
	if (!rc)
		rc = deps_engine_finish(e);
	if (getenv("NX_STORE_TIMING") && !strcmp(getenv("NX_STORE_TIMING"), "1"))
		derive_timing(e, t0, c0);
	if (rc == -ECANCELED)
		rc = tc_err_set(err, rc, ST_CANCELLED);
	else if (rc < 0 && !d.edge_failed)
		rc = tc_err_set(err, rc, "dependency analysis: %s", strerror(-rc));
	deps_engine_free(e);
	free(d.texts[0]);
	free(d.texts[1]);
	return rc;
}
