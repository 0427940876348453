/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-progress.c - st_writer_progress() on a real writer: the
 * whole-ingest fraction of each phase (reading is the first half, the
 * finish phases share the second by their work), that it never goes down,
 * the reports kept back within a phase (NX_PROGRESS_MS), a cancel asked
 * by the function, and the names.
 * tests/deps/progress.sh runs whole ingests through the CLI and the server.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "store/store-int.h"
#include "tests/tap.h"

struct seen {
	int n;
	int cancel_at;		/* > 0: ask to cancel on that report */
	struct st_progress v[16];
};

static int
record(void *ctx, const struct st_progress *p)
{
	struct seen *s = ctx;

	if (s->n < 16)
		s->v[s->n] = *p;
	s->n++;
	return s->n == s->cancel_at;
}

static bool
near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* A writer on a fresh file in @dir whose reports go to @s. */
static struct st_writer *
writer(const char *dir, struct seen *s)
{
	char *path = tc_xasprintf("%s/w.db", dir);
	struct st_writer *w = NULL;
	struct tc_err err = { 0 };

	if (st_writer_open(&w, path, &err) < 0)
		tap_diag(err.msg);
	free(path);
	if (w)
		st_writer_set_progress(w, record, s);
	return w;
}

int
main(void)
{
	char dir[] = "/tmp/nxprog.XXXXXX";
	struct seen s = { 0 };
	struct st_writer *w;
	char *cmd;

	if (!mkdtemp(dir))
		tap_skip_all("no temp dir");

	setenv("NX_PROGRESS_MS", "0", 1);	/* every report */
	w = writer(dir, &s);
	ok(w != NULL, "writer opens");
	st_writer_progress(w, ST_PHASE_READING, 0.4);
	is_int(s.n, 1, "a report");
	ok(s.v[0].phase == ST_PHASE_READING && near(s.v[0].phase_frac, 0.4) &&
	   near(s.v[0].frac, 0.2), "reading 40%% is 20%% of the ingest");
	st_writer_progress(w, ST_PHASE_READING, 0.3);
	ok(s.n == 2 && near(s.v[1].phase_frac, 0.3) && near(s.v[1].frac, 0.2),
	   "a lower share is reported as it is, the whole fraction does not go down");
	st_writer_progress(w, ST_PHASE_READING, 7);
	ok(near(s.v[2].phase_frac, 1) && near(s.v[2].frac, 0.5), "above 1 is 1: half the ingest");
	/* 100 events, 50 with access sets, 10 explicit edges: costs 100, 80,
	 * 13 and 6 of 199 */
	st_writer_progress_plan(w, 100, 50, 10);
	st_writer_progress(w, ST_PHASE_SORTING, 0);
	ok(near(s.v[3].frac, 0.5), "sorting starts at half");
	st_writer_progress(w, ST_PHASE_SORTING, 0.5);
	ok(near(s.v[4].frac, 0.5 + 0.5 * 50 / 199), "sorting half done: 50 of 199 in the second half");
	st_writer_progress(w, ST_PHASE_DEPS, 0.25);
	ok(near(s.v[5].frac, 0.5 + 0.5 * (100 + 20) / 199.0), "dependencies a quarter done");
	st_writer_progress(w, ST_PHASE_EDGES, 1);
	ok(near(s.v[6].frac, 0.5 + 0.5 * 193 / 199.0), "edges done");
	st_writer_progress(w, ST_PHASE_COMMIT, 1);
	ok(near(s.v[7].frac, 1), "committed: the whole ingest");
	st_writer_progress(w, -1, 0.5);
	st_writer_progress(w, ST_PHASE_N, 0.5);
	is_int(s.n, 8, "phases out of range are not reported");
	st_writer_abort(w);

	/* a plan with no work at all: the commit has the whole second half */
	s.n = 0;
	w = writer(dir, &s);
	st_writer_progress_plan(w, 0, 0, 0);
	st_writer_progress(w, ST_PHASE_SORTING, 1);
	st_writer_progress(w, ST_PHASE_COMMIT, 0.5);
	ok(s.n == 2 && near(s.v[0].frac, 0.5) && near(s.v[1].frac, 0.75),
	   "an empty trace: sorting has no share, the commit all of it");
	st_writer_abort(w);

	/* within a phase, a report at most every NX_PROGRESS_MS */
	setenv("NX_PROGRESS_MS", "3600000", 1);
	s.n = 0;
	w = writer(dir, &s);
	st_writer_progress(w, ST_PHASE_READING, 0.1);
	st_writer_progress(w, ST_PHASE_READING, 0.2);
	is_int(s.n, 1, "a second report of the phase within the interval is kept back");
	st_writer_progress(w, ST_PHASE_READING, 1);
	is_int(s.n, 2, "the phase's end is reported");
	st_writer_progress(w, ST_PHASE_SORTING, 0);
	is_int(s.n, 3, "so is the next phase's start");
	st_writer_set_progress(w, NULL, NULL);
	st_writer_progress(w, ST_PHASE_DEPS, 0);
	is_int(s.n, 3, "no function: no report");
	st_writer_abort(w);

	/* the function cancels on its second report */
	setenv("NX_PROGRESS_MS", "0", 1);
	s = (struct seen){ .cancel_at = 2 };
	w = writer(dir, &s);
	is_int(st_writer_progress(w, ST_PHASE_READING, 0.1), 0, "a report that goes on: 0");
	is_int(st_writer_reading(w, 0.2), -ECANCELED, "the report that cancels: -ECANCELED");
	is_int(st_writer_progress(w, ST_PHASE_SORTING, 0), -ECANCELED, "and every one after it");
	is_int(s.n, 2, "without calling the function again");
	{
		struct st_event ev = { .unit = 1, .kind = ST_EV_SLICE, .ts = 1, .dur = 1 };
		struct tc_err err = { 0 };
		char *path = tc_xasprintf("%s/w.db", dir);

		is_int(st_event_add(w, &ev), -ECANCELED, "events are refused");
		is_int(st_writer_finish(w, NULL, &err), -ECANCELED, "finish fails");
		is_str(err.msg, ST_CANCELLED, "saying the ingest was cancelled");
		ok(access(path, F_OK) != 0, "and removes the file");
		free(path);
	}

	is_str(st_phase_name(ST_PHASE_READING), "reading", "name of reading");
	is_str(st_phase_name(ST_PHASE_DEPS), "dependencies", "name of the analysis");
	is_str(st_phase_name(ST_PHASE_COMMIT), "committing", "name of the commit");
	is_str(st_phase_name(ST_PHASE_N), "unknown", "out of range");

	cmd = tc_xasprintf("rm -rf '%s'", dir);
	if (system(cmd))
		tap_diag("could not remove the temp dir");
	free(cmd);
	return tap_done();
}
