/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-deps-query.c - deps_event_edges() (the /events/{eid}
 * "edges" object) on a real ingested store: stored edges by kind and
 * direction, program order derived at query time, errors; and the id set
 * the walks keep their visited events in (struct dq_ids).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "deps/deps.h"
#include "deps/deps-query.h"
#include "store/library.h"
#include "tests/tap.h"

static int64_t
eid_of(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int64_t id = 0;

	sqlite3_prepare_v2(db, "SELECT e.id FROM events e JOIN strings s ON s.id = e.name "
			   "WHERE s.s = ?", -1, &st, NULL);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* "name:label" of each E in edges[dir][kind], space-separated (malloc'd). */
static char *
list(json_t *edges, const char *dir, const char *kind)
{
	struct tc_buf b;
	json_t *e;
	size_t i;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	json_array_foreach(json_object_get(json_object_get(edges, dir), kind), i, e) {
		tc_buf_printf(&b, "%s%s:%s", i ? " " : "",
			      json_string_value(json_object_get(e, "name")),
			      json_string_value(json_object_get(e, "label")));
	}
	return tc_buf_steal(&b);
}

/*
 * dq_ids against a brute force: ids in one page, across pages, next to
 * the bitmap's end and past it, negative, the extremes; each added twice.
 */
static void
test_ids(void)
{
	static const int64_t base[] = { 100, 164, DQ_IDS_PAGE - 1, DQ_IDS_PAGE, 5 * DQ_IDS_PAGE + 7,
					DQ_IDS_MAX - 1, DQ_IDS_MAX, DQ_IDS_MAX + 64, -1, -164 };
	enum { N = 3000 };
	int64_t *v = tc_xmalloc(N * sizeof(*v));
	struct dq_ids s = { 0 };
	uint64_t r = 0x2545f4914f6cdd1dull;
	int bad = 0;

	for (size_t i = 0; i < N; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		v[i] = base[r % (sizeof(base) / sizeof(base[0]))] + (int64_t)((r >> 8) % 200) - 100;
	}
	v[0] = INT64_MAX;
	v[1] = INT64_MIN;
	for (size_t i = 0; i < N; i++) {
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = v[k] == v[i];
		bad += dq_ids_has(&s, v[i]) != seen;
		bad += dq_ids_add(&s, v[i]) == seen;
		bad += !dq_ids_has(&s, v[i]) || dq_ids_add(&s, v[i]);
	}
	for (int64_t id = -3; id < 3 * DQ_IDS_PAGE; id += 977) {
		bool in = false;

		for (size_t k = 0; k < N && !in; k++)
			in = v[k] == id;
		bad += dq_ids_has(&s, id) != in;
	}
	ok(bad == 0, "dq_ids: adds and lookups agree with a brute force (%d ids)", N);
	dq_ids_free(&s);
	ok(!dq_ids_has(&s, v[2]) && s.npages == 0, "dq_ids_free empties it");
	free(v);
}

int
main(void)
{
	const char *src = getenv("NX_SRCDIR");
	char dir[] = "/tmp/nxdepsq.XXXXXX", id[ST_ID_LEN + 1], *path = NULL, *trace = NULL, *s;
	struct st_library *lib = NULL;
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	json_t *j;
	int rc;

	test_ids();
	if (!mkdtemp(dir))
		tap_skip_all("no temp dir");
	path = tc_xasprintf("%s/tests/data/deps/pipeline.json", src ? src : ".");
	rc = st_library_open(&lib, dir, &err);
	is_int(rc, 0, "library opens");
	rc = st_library_add_raw(lib, path, false, NULL, "pipeline", NULL, id, &err);
	is_int(rc, 0, "raw file added");
	rc = st_library_ingest(lib, id, NULL, NULL, NULL, &err);
	if (!ok(rc == 0, "pipeline ingests"))
		printf("#   %s\n", err.msg);
	trace = st_library_trace_path(lib, id);
	is_int(st_trace_open(&db, trace, &err), 0, "trace opens");

	j = deps_event_edges(db, eid_of(db, "compute2"), &err);
	ok(j != NULL, "edges of compute2");
	s = list(j, "in", "flow");
	is_str(s, "compute1:Y[0:100]", "in.flow: RAW from compute1 on Y");
	free(s);
	s = list(j, "in", "order");
	is_str(s, "other:program order other:S>=1",
	       "in.order: program order on its stream, then the semaphore");
	free(s);
	s = list(j, "out", "flow");
	is_str(s, "store:W", "out.flow: store reads W");
	free(s);
	s = list(j, "out", "anti");
	is_str(s, "", "no anti edges");
	free(s);
	ok(json_is_false(json_object_get(j, "truncated")), "not truncated");
	json_decref(j);

	j = deps_event_edges(db, eid_of(db, "load"), &err);
	s = list(j, "out", "order");
	is_str(s, "store:program order", "load is followed by store on the dma stream");
	free(s);
	s = list(j, "in", "order");
	is_str(s, "", "nothing before the first slice");
	free(s);
	json_decref(j);

	tc_err_clear(&err);
	j = deps_event_edges(db, 12345, &err);
	ok(j == NULL && err.code == -ENOENT, "a missing event is -ENOENT");

	j = deps_critical_path(db, 0, 0, 0, DEPS_KINDS_ALL, 0, 0, &err);
	is_int(json_array_size(json_object_get(j, "hops")), 4, "critical path has four hops");
	json_decref(j);

	sqlite3_close(db);
	st_library_close(lib);
	s = tc_xasprintf("rm -rf '%s'", dir);
	if (system(s))
		tap_diag("could not remove the temp dir");
	free(s);
	free(trace);
	free(path);
	return tap_done();
}
