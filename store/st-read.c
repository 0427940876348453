/* SPDX-License-Identifier: MIT */
/* store/st-read.c - opening finished traces, and the stats as JSON. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include "store/store-int.h"

int
st_trace_open(sqlite3 **dbp, const char *path, struct tc_err *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int v = -1, rc = 0;

	*dbp = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    st_vfs_name()) != SQLITE_OK) {
		rc = tc_err_set(err, -ENOENT, "%s: cannot open: %s", path,
				db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (v != ST_TRACE_SCHEMA_VERSION) {
		rc = tc_err_set(err, -EPROTO, "%s: trace store version %d, this build reads %d"
				" (re-ingest it from the raw file)", path, v,
				ST_TRACE_SCHEMA_VERSION);
		goto out;
	}
	if (st_sql_register(db) < 0) {
		rc = tc_err_set(err, -EIO, "%s: cannot register the events table: %s", path,
				sqlite3_errmsg(db));
		goto out;
	}
	*dbp = db;
	db = NULL;
out:
	if (db)
		sqlite3_close(db);
	return rc;
}

void
st_read_begin(sqlite3 *db)
{
	sqlite3_exec(db, "PRAGMA mmap_size = 1099511627776; BEGIN", NULL, NULL, NULL);
}

void
st_read_end(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

char *
st_stats_to_json_text(const struct st_stats *s)
{
	json_t *o = json_object(), *flows = json_object();
	char *text;
	int k;

	json_object_set_new(o, "slices", json_integer(s->slices));
	json_object_set_new(o, "instants", json_integer(s->instants));
	json_object_set_new(o, "counters", json_integer(s->counters));
	json_object_set_new(o, "units", json_integer(s->units));
	json_object_set_new(o, "devices", json_integer(s->devices));
	for (k = 0; k < ST_EDGE_NKINDS; k++)
		json_object_set_new(flows, st_edge_kind_name(k), json_integer(s->edges[k]));
	json_object_set_new(o, "flows", flows);
	json_object_set_new(o, "start_ns", json_integer(s->start_ns));
	json_object_set_new(o, "end_ns", json_integer(s->end_ns));
	json_object_set_new(o, "bad_events", json_integer(s->bad_events));
	if (s->bad_events)
		json_object_set_new(o, "first_bad_event", json_string(s->first_bad));
	json_object_set_new(o, "overlaps", json_integer(s->overlaps));
	json_object_set_new(o, "unmatched", json_integer(s->unmatched));
	json_object_set_new(o, "bad_access", json_integer(s->bad_access));
	if (s->bad_access)
		json_object_set_new(o, "first_bad_access", json_string(s->first_bad_access));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}
