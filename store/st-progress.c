/* SPDX-License-Identifier: MIT */
/*
 * store/st-progress.c - an ingest's progress in phases (enum st_phase):
 * the reader's share of its input, then the finish's passes, turned into
 * one fraction for a progress bar and handed to the caller's st_phase_fn.
 *
 * Why phases: the finish of a large trace is not short.  A 10M-event engine
 * trace with access sets reads in about 4 s, then sorts and writes its
 * events for 4.5 s, derives its dependencies for 7.4 s and packs 71M edges
 * for 1.1 s (docs/benchmarks-deps.md); a fraction taken from the reader
 * alone sat at 100% for three quarters of the ingest.
 */
#include <errno.h>
#include "store/store-int.h"

static const char *const st_phase_names[ST_PHASE_N] = {
	[ST_PHASE_READING] = "reading",
	[ST_PHASE_SORTING] = "sorting",
	[ST_PHASE_DEPS] = "dependencies",
	[ST_PHASE_EDGES] = "edges",
	[ST_PHASE_COMMIT] = "committing",
};

const char *
st_phase_name(int phase)
{
	return phase >= 0 && phase < ST_PHASE_N ? st_phase_names[phase] : "unknown";
}

void
st_writer_set_progress(struct st_writer *w, st_phase_fn fn, void *ctx)
{
	w->prog.fn = fn;
	w->prog.ctx = ctx;
	/* NX_PROGRESS_MS=N: reports within a phase N ms apart (tests: 0, every one) */
	w->prog.every_ns = tc_env_num("NX_PROGRESS_MS", 0, 3600000, ST_PROGRESS_NS / 1000000) *
			   1000000;
}

/*
 * The finish phases' shares of the second half, from the work each has:
 * per event, the dependency analysis took about 1.6 times what sorting and
 * writing took on the benchmark traces, packing the edges a quarter, the
 * commit a twentieth and a constant, so that the total is never 0 (the
 * share of the other phases with no work is 0).
 */
void
st_writer_progress_plan(struct st_writer *w, int64_t events, int64_t analysed, int64_t edges)
{
	double *c = w->prog.cost;

	c[ST_PHASE_READING] = 0;
	c[ST_PHASE_SORTING] = (double)events;
	c[ST_PHASE_DEPS] = 1.6 * (double)analysed;
	c[ST_PHASE_EDGES] = 0.25 * (double)analysed + 0.05 * (double)edges;
	c[ST_PHASE_COMMIT] = 0.05 * (double)events + 1;
}

/* The whole ingest's fraction when @phase is @f done. */
static double
st_progress_whole(const struct st_wprog *p, int phase, double f)
{
	double before = 0, total = 0;

	if (phase == ST_PHASE_READING)
		return 0.5 * f;
	for (int i = ST_PHASE_SORTING; i < ST_PHASE_N; i++) {
		total += p->cost[i];
		if (i < phase)
			before += p->cost[i];
	}
	if (total <= 0)		/* no plan yet: st_writer_finish() makes one first */
		return 0.5;
	return 0.5 + 0.5 * (before + f * p->cost[phase]) / total;
}

int
st_writer_reading(void *w, double frac)
{
	return st_writer_progress(w, ST_PHASE_READING, frac);
}

int
st_writer_progress(struct st_writer *w, int phase, double frac)
{
	struct st_wprog *p = &w->prog;
	struct st_progress r;
	int64_t now;

	if (atomic_load_explicit(&p->cancelled, memory_order_relaxed))
		return -ECANCELED;
	if (!p->fn || phase < 0 || phase >= ST_PHASE_N)
		return 0;
	frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
	now = tc_mono_ns();
	if (phase == p->phase && frac < 1 && now - p->last_ns < p->every_ns)
		return 0;
	r.phase = phase;
	r.phase_frac = frac;
	r.frac = TC_MAX(p->frac, st_progress_whole(p, phase, frac));
	p->phase = phase;
	p->last_ns = now;
	p->frac = r.frac;
	if (!p->fn(p->ctx, &r))
		return 0;
	atomic_store(&p->cancelled, true);
	if (!w->failed)
		w->failed = tc_err_set(&w->ferr, -ECANCELED, ST_CANCELLED);
	return -ECANCELED;
}
