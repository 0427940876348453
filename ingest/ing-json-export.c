/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-json-export.c - write a finished trace store as Chrome Trace
 * Event JSON (`convert OUT.json`, the server's /export?format=json): M names
 * for processes and threads, X/i/C events in id order and flow edges as
 * flow v1 s/f pairs.  Times are exact decimal microseconds.  Our other
 * additions (unit kinds, dependency kinds other than flow) are left out:
 * tools that read Chrome JSON have no place for them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/tc-json.h"
#include "ingest/ingest.h"

static int
jx_event(FILE *f, json_t *ev, bool *first)
{
	int rc;

	if (fputs(*first ? "\n" : ",\n", f) == EOF)
		return -EIO;
	*first = false;
	rc = json_dumpf(ev, f, JSON_COMPACT);
	json_decref(ev);
	return rc ? -EIO : 0;
}

/*
 * @ns as the exact decimal count of microseconds JSON traces use
 * ("1623142623531272.128"): a double holds only every 256th ns of an epoch
 * clock's 1.6e18, and our reader takes the digits as written.
 */
static void
jx_us(char *buf, size_t n, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000);
	int len = snprintf(buf, n, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, frac);

	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
}

/* jx_event() with "ts" (and "dur" unless < 0) written exactly first. */
static int
jx_timed(FILE *f, json_t *ev, int64_t ts_ns, int64_t dur_ns, bool *first)
{
	char ts[32], dur[32], *body = json_dumps(ev, JSON_COMPACT);
	int rc;

	json_decref(ev);
	if (!body)
		return -EIO;
	jx_us(ts, sizeof(ts), ts_ns);
	jx_us(dur, sizeof(dur), dur_ns);
	rc = fprintf(f, "%s{\"ts\":%s%s%s%s%s", *first ? "\n" : ",\n", ts,
		     dur_ns >= 0 ? ",\"dur\":" : "", dur_ns >= 0 ? dur : "",
		     body[1] == '}' ? "" : ",", body + 1) < 0 ? -EIO : 0;
	*first = false;
	free(body);
	return rc;
}

/*
 * Chrome pid/tid of a device/unit: the real ones when the keys carry
 * integers ("pid:1234"); named ones ("pid:Traces", "tid:stream 7") would
 * all cast to 0 and merge, so they get numbers of their own.
 */
#define JX_INT_KEY(k, p) "(" k ".key LIKE '" p ":%' AND " \
	"CAST(CAST(substr(" k ".key, 5) AS INTEGER) AS TEXT) = substr(" k ".key, 5))"
#define JX_PID(d) "(CASE WHEN " JX_INT_KEY(d, "pid") " THEN CAST(substr(" d ".key, 5) AS INTEGER) " \
		  "ELSE 1000000 + " d ".id END)"
#define JX_TID(u) "(CASE WHEN " JX_INT_KEY(u, "tid") " THEN CAST(substr(" u ".key, 5) AS INTEGER) " \
		  "ELSE 1000000000 + " u ".id END)"

int
ing_json_export(sqlite3 *db, FILE *f, const char *name, struct tc_err *err)
{
	sqlite3_stmt *s = NULL, *es = NULL;
	bool first = true;
	int ret = 0, sr;

	if (fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f) == EOF)
		goto werr;
	/* names: one process per device, one thread per unit */
	if (sqlite3_prepare_v2(db, "SELECT " JX_TID("u") ", " JX_PID("d") ", u.name, d.name "
			       "FROM units u JOIN devices d ON d.id = u.device_id", -1, &s,
			       NULL) != SQLITE_OK)
		goto sqlerr;
	while ((sr = sqlite3_step(s)) == SQLITE_ROW) {
		json_int_t tid = sqlite3_column_int64(s, 0), pid = sqlite3_column_int64(s, 1);

		if (jx_event(f, json_pack("{s:s, s:s, s:I, s:I, s:{s:o}}", "ph", "M",
						    "name", "process_name", "pid", pid, "tid", 0,
						    "args", "name",
						    tc_json_str((const char *)sqlite3_column_text(s, 3))),
			     &first) ||
		    jx_event(f, json_pack("{s:s, s:s, s:I, s:I, s:{s:o}}", "ph", "M",
						    "name", "thread_name", "pid", pid, "tid", tid,
						    "args", "name",
						    tc_json_str((const char *)sqlite3_column_text(s, 2))),
			     &first))
			goto werr;
	}
	if (sr != SQLITE_DONE)	/* a damaged store: not a file without its events */
		goto sqlerr;
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT e.id, " JX_TID("u") ", " JX_PID("d") ", e.ts, e.dur, "
			       "e.kind, coalesce(n.s, ''), c.s, e.value, e.args, u.name FROM events e "
			       "JOIN units u ON u.id = e.unit JOIN devices d ON d.id = u.device_id "
			       "LEFT JOIN strings n ON n.id = e.name "
			       "LEFT JOIN strings c ON c.id = e.cat ORDER BY e.id", -1, &s, NULL) !=
	    SQLITE_OK)
		goto sqlerr;
	while ((sr = sqlite3_step(s)) == SQLITE_ROW) {
		json_int_t tid = sqlite3_column_int64(s, 1), pid = sqlite3_column_int64(s, 2);
		int64_t ts = sqlite3_column_int64(s, 3), dur = -1;
		int kind = sqlite3_column_int(s, 5);
		const char *nm = (const char *)sqlite3_column_text(s, 6);
		/* names are bytes: a name that is not UTF-8 gets U+FFFD, as the API shows it */
		json_t *ev = json_pack("{s:o, s:I, s:I}", "name", tc_json_str(nm), "pid", pid,
				       "tid", tid);
		json_t *args = NULL;

		if (sqlite3_column_type(s, 7) != SQLITE_NULL)
			json_object_set_new(ev, "cat", tc_json_str((const char *)
								   sqlite3_column_text(s, 7)));
		if (sqlite3_column_type(s, 9) != SQLITE_NULL)
			args = json_loads((const char *)sqlite3_column_text(s, 9), 0, NULL);
		if (kind == ST_EV_SLICE) {
			json_object_set_new(ev, "ph", json_string("X"));
			dur = sqlite3_column_int64(s, 4);
		} else if (kind == ST_EV_INSTANT) {
			json_object_set_new(ev, "ph", json_string("i"));
			json_object_set_new(ev, "s", json_string("t"));
		} else {	/* a counter series is named after its unit */
			json_object_set_new(ev, "ph", json_string("C"));
			json_object_set_new(ev, "name", tc_json_str((const char *)
								    sqlite3_column_text(s, 10)));
			json_decref(args);
			args = json_pack("{s:f}", "value", sqlite3_column_double(s, 8));
		}
		if (!args || !json_is_object(args)) {
			json_decref(args);
			args = json_object();
		}
		if (kind != ST_EV_COUNTER)	/* every counter arg is a series */
			json_object_set_new(args, "nx.id",
					    json_integer(sqlite3_column_int64(s, 0)));
		json_object_set_new(ev, "args", args);
		if (jx_timed(f, ev, ts, dur, &first))
			goto werr;
	}
	if (sr != SQLITE_DONE)	/* a damaged store: not a file without its events */
		goto sqlerr;
	sqlite3_finalize(s);
	s = NULL;
	/* flow edges as flow v1 pairs: s on the source, f (bp e) on the destination */
	if (sqlite3_prepare_v2(db, "SELECT x.rowid, a.ts, " JX_TID("ua") ", " JX_PID("da") ", "
			       "b.ts, " JX_TID("ub") ", " JX_PID("db") ", x.kind, x.label "
			       "FROM edges x "
			       "JOIN events a ON a.id = x.src JOIN units ua ON ua.id = a.unit "
			       "JOIN devices da ON da.id = ua.device_id "
			       "JOIN events b ON b.id = x.dst JOIN units ub ON ub.id = b.unit "
			       "JOIN devices db ON db.id = ub.device_id "
			       "WHERE x.kind = 0", -1, &es, NULL) != SQLITE_OK)
		goto sqlerr;
	while ((sr = sqlite3_step(es)) == SQLITE_ROW) {
		json_int_t id = sqlite3_column_int64(es, 0);

		if (jx_timed(f, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "ph", "s",
						    "name", "flow", "cat", "flow", "id", id, "tid",
						    sqlite3_column_int64(es, 2), "pid",
						    sqlite3_column_int64(es, 3)),
				       sqlite3_column_int64(es, 1), -1, &first) ||
		    jx_timed(f, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
						    "ph", "f", "bp", "e", "name", "flow", "cat",
						    "flow", "id", id, "tid",
						    sqlite3_column_int64(es, 5), "pid",
						    sqlite3_column_int64(es, 6)),
				       sqlite3_column_int64(es, 4), -1, &first))
			goto werr;
	}
	if (sr != SQLITE_DONE)
		goto sqlerr;
	if (fputs("\n]}\n", f) == EOF || fflush(f))
		goto werr;
	goto out;
sqlerr:
	ret = tc_err_set(err, -EIO, "reading the trace store: %s", sqlite3_errmsg(db));
	goto out;
werr:
	ret = tc_write_errno();
	ret = tc_err_set(err, -ret, "%s: write error: %s", name, strerror(ret));
out:
	sqlite3_finalize(s);
	sqlite3_finalize(es);
	return ret;
}
