/* SPDX-License-Identifier: MIT */
/*
 * server/srv-api.c - the library endpoints: list and search traces, one
 * trace (catalog row + devices + meta), delete, and the original file.
 * Catalog reads go through pooled read-only connections; writes through the
 * server's st_library under lib_mu.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/srv-int.h"

#define TRACE_COLS "id, name, tags, status, progress, error, format, size, sha256, " \
	"created_ns, stats"

static json_t *
tags_json(const char *tags)
{
	json_t *a = json_array();
	const char *p = tags ? tags : "";

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n) {
			char *t = tc_xstrndup(p, n);

			json_array_append_new(a, tc_json_str(t));
			free(t);
		}
		if (!e)
			break;
		p = e + 1;
	}
	return a;
}

static json_t *
stat_int(json_t *stats, const char *key)
{
	json_t *v = json_object_get(stats, key);

	return json_is_number(v) ? json_incref(v) : json_integer(0);
}

/* Reads again of a catalog row that an ingest left meanwhile (row_json()). */
#define SRV_STALE_TRIES 3

/*
 * One catalog row (TRACE_COLS) as the TRACE object.  *@stale is set when
 * the row says "ingesting" and no worker holds the trace: the ingest ended
 * (the worker commits the row's new status, then lets go of the trace)
 * after this read's snapshot was taken, and the caller should read again.
 */
static json_t *
row_json(struct srv *s, sqlite3_stmt *st, bool *stale)
{
	const char *id = (const char *)sqlite3_column_text(st, 0);
	const char *status = (const char *)sqlite3_column_text(st, 3);
	double progress = sqlite3_column_double(st, 4);
	int phase = -1;
	json_t *stats = NULL, *flows, *j;
	const char *stext = (const char *)sqlite3_column_text(st, 10);

	if (stext)
		stats = json_loads(stext, 0, NULL);
	if (!json_is_object(stats)) {
		json_decref(stats);
		stats = json_object();
	}
	if (srv_queue_progress(s, id, &progress, &phase))
		status = "ingesting";
	else if (status && !strcmp(status, "ingesting"))
		*stale = true;
	flows = json_object_get(stats, "flows");
	if (!json_is_object(flows))
		flows = json_object_get(stats, "edges");
	if (json_is_object(flows)) {
		flows = json_pack("{s:o, s:o, s:o, s:o}", "flow", stat_int(flows, "flow"),
				  "order", stat_int(flows, "order"),
				  "anti", stat_int(flows, "anti"),
				  "output", stat_int(flows, "output"));
	} else {
		flows = json_pack("{s:i, s:i, s:i, s:i}", "flow", 0, "order", 0, "anti", 0,
				  "output", 0);
	}
	j = json_object();
	json_object_set_new(j, "id", json_string(id));
	json_object_set_new(j, "name", srv_col_str(st, 1));
	json_object_set_new(j, "tags", tags_json((const char *)sqlite3_column_text(st, 2)));
	json_object_set_new(j, "status", tc_json_str(status));
	json_object_set_new(j, "progress", json_real(!strcmp(status, "ready") ? 1.0 : progress));
	json_object_set_new(j, "phase", phase >= 0 ? json_string(st_phase_name(phase)) : json_null());
	json_object_set_new(j, "error", srv_col_str(st, 5));
	json_object_set_new(j, "format", srv_col_str(st, 6));
	json_object_set_new(j, "size", json_integer(sqlite3_column_int64(st, 7)));
	json_object_set_new(j, "sha256", srv_col_str(st, 8));
	json_object_set_new(j, "created_ns", json_integer(sqlite3_column_int64(st, 9)));
	json_object_set_new(j, "slices", stat_int(stats, "slices"));
	json_object_set_new(j, "instants", stat_int(stats, "instants"));
	json_object_set_new(j, "counters", stat_int(stats, "counters"));
	json_object_set_new(j, "units", stat_int(stats, "units"));
	json_object_set_new(j, "flows", flows);
	json_object_set_new(j, "start_ns", stat_int(stats, "start_ns"));
	json_object_set_new(j, "end_ns", stat_int(stats, "end_ns"));
	/* the rest of what `ingest --json` prints, for the detail view */
	json_object_set_new(j, "stats", stats);
	return j;
}

json_t *
srv_trace_json(struct srv *s, const char *id, int *code)
{
	struct tc_err err = { 0 };
	struct srv_pool_conn *c = srv_pool_get(s, NULL, &err);
	sqlite3_stmt *st = NULL;
	json_t *j = NULL;

	*code = -EIO;
	if (!c)
		return NULL;
	if (sqlite3_prepare_v2(c->db, "SELECT " TRACE_COLS " FROM traces WHERE id = ?1", -1,
			       &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	for (int tries = 0;; tries++) {
		bool stale = false;

		switch (sqlite3_step(st)) {
		case SQLITE_ROW:
			j = row_json(s, st, &stale);
			*code = 0;
			break;
		case SQLITE_DONE:
			*code = -ENOENT;
			break;
		}
		if (!stale || tries == SRV_STALE_TRIES)
			break;
		json_decref(j);		/* a new snapshot: the status it ended with */
		j = NULL;
		*code = -EIO;
		sqlite3_reset(st);
	}
out:
	sqlite3_finalize(st);
	srv_pool_put(s, c);
	return j;
}

enum MHD_Result
srv_api_list(struct srv_req *r)
{
	struct srv *s = r->srv;
	struct tc_err err = { 0 };
	struct srv_pool_conn *c;
	sqlite3_stmt *st = NULL;
	int64_t limit = 100, offset = 0, total = 0;
	const char *q = srv_arg(r, "q"), *sort = srv_arg(r, "sort"), *order;
	json_t *arr;
	char *sql;
	enum MHD_Result ret;
	int rc;

	if (srv_arg_i64(r, "limit", &limit, 0, SRV_LIST_MAX) < 0 ||
	    srv_arg_i64(r, "offset", &offset, 0, INT64_MAX / 2) < 0)
		return MHD_YES;
	if (!sort || !*sort || !strcmp(sort, "-created"))
		order = "created_ns DESC, id";
	else if (!strcmp(sort, "created"))
		order = "created_ns, id";
	else if (!strcmp(sort, "name"))
		order = "name COLLATE NOCASE, id";
	else if (!strcmp(sort, "-name"))
		order = "name COLLATE NOCASE DESC, id";
	else if (!strcmp(sort, "size"))
		order = "size, id";
	else if (!strcmp(sort, "-size"))
		order = "size DESC, id";
	else
		return srv_reply_error(r, 400, "bad_param", "sort must be one of created, "
				       "-created, name, -name, size, -size");
	if (!q)
		q = "";
	if (strlen(q) > 256)
		return srv_reply_error(r, 400, "bad_param", "q is longer than 256 bytes");
	c = srv_pool_get(s, NULL, &err);
	if (!c)
		return srv_reply_errno(r, err.code, err.msg);
#define WHERE " WHERE (?1 = '' OR instr(lower(name), lower(?1)) > 0 OR " \
	"instr(lower(tags), lower(?1)) > 0 OR id = ?1)"
	if (sqlite3_prepare_v2(c->db, "SELECT COUNT(*) FROM traces" WHERE, -1, &st, NULL))
		goto dberr;
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto dberr;
	total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	sql = tc_xasprintf("SELECT " TRACE_COLS " FROM traces" WHERE " ORDER BY %s LIMIT ?2 "
			   "OFFSET ?3", order);
#undef WHERE
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL)) {
		free(sql);
		goto dberr;
	}
	free(sql);
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	for (int tries = 0;; tries++) {
		bool stale = false;

		arr = json_array();
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			json_array_append_new(arr, row_json(s, st, &stale));
		if (rc != SQLITE_DONE) {	/* not a list without the rows after it */
			json_decref(arr);
			goto dberr;
		}
		if (!stale || tries == SRV_STALE_TRIES)
			break;
		json_decref(arr);	/* an ingest ended meanwhile: a new snapshot */
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	srv_pool_put(s, c);
	return srv_reply_json(r, 200, json_pack("{s:I, s:o}", "total", (json_int_t)total,
						"traces", arr));
dberr:
	ret = srv_reply_error(r, 500, "internal", "catalog: %s", sqlite3_errmsg(c->db));
	sqlite3_finalize(st);
	srv_pool_put(s, c);
	return ret;
}

/* devices of a trace, in display order */
json_t *
srv_devices_json(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	json_t *a = json_array();

	if (sqlite3_prepare_v2(db, "SELECT id, kind, name, label, sort FROM devices "
			       "ORDER BY sort IS NULL, sort, name, id", -1, &st, NULL))
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *kind = st_device_kind_name(sqlite3_column_int(st, 1));
		json_t *d = json_object();

		json_object_set_new(d, "id", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(d, "kind", json_string(kind ? kind : "other"));
		json_object_set_new(d, "name", srv_col_str(st, 2));
		json_object_set_new(d, "label", srv_col_str(st, 3));
		json_object_set_new(d, "sort", sqlite3_column_type(st, 4) == SQLITE_NULL ?
				    json_null() : json_integer(sqlite3_column_int64(st, 4)));
		json_array_append_new(a, d);
	}
out:
	sqlite3_finalize(st);
	return a;
}

enum MHD_Result
srv_api_trace(struct srv_req *r, const char *id)
{
	struct srv *s = r->srv;
	struct tc_err err = { 0 };
	struct srv_pool_conn *c = NULL;
	sqlite3_stmt *st = NULL;
	json_t *j, *meta, *manifest = NULL;
	int code;

	j = srv_trace_json(s, id, &code);
	if (!j)
		return code == -ENOENT ? srv_reply_error(r, 404, "not_found", "no trace %s", id) :
			srv_reply_error(r, 500, "internal", "cannot read the catalog");
	meta = json_object();
	if (!strcmp(json_string_value(json_object_get(j, "status")), "ready"))
		c = srv_pool_get(s, id, &err);
	if (c) {
		json_object_set_new(j, "devices", srv_devices_json(c->db));
		if (sqlite3_prepare_v2(c->db, "SELECT key, value FROM meta ORDER BY key", -1, &st,
				       NULL) == SQLITE_OK) {
			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *k = (const char *)sqlite3_column_text(st, 0);
				const char *v = (const char *)sqlite3_column_text(st, 1);

				if (!k)
					continue;
				if (!strcmp(k, "manifest") && v) {
					json_decref(manifest);
					manifest = json_loads(v, 0, NULL);
					continue;
				}
				json_object_set_new(meta, k, tc_json_str(v));
			}
		}
		sqlite3_finalize(st);
		srv_pool_put(s, c);
	} else {
		json_object_set_new(j, "devices", json_array());
	}
	json_object_set_new(j, "manifest", manifest ? manifest : json_null());
	json_object_set_new(j, "meta", meta);
	return srv_reply_json(r, 200, j);
}

enum MHD_Result
srv_api_delete(struct srv_req *r, const char *id)
{
	struct srv *s = r->srv;
	struct tc_err err = { 0 };
	int rc;

	if (!srv_auth_ok(r))
		return MHD_YES;
	rc = srv_queue_remove(s, id);
	if (rc == -EBUSY && srv_queue_cancel(s, id)) {
		/* being ingested: stop that first (within a report, 100 ms) */
		srv_queue_wait(s, id, tc_mono_ns() + SRV_CANCEL_WAIT_NS);
		rc = srv_queue_remove(s, id);
	}
	if (rc == -EBUSY)
		return srv_reply_error(r, 409, "ingesting", "trace %s is being ingested and its "
				       "ingest did not stop within %d s; try again", id,
				       (int)(SRV_CANCEL_WAIT_NS / 1000000000));
	pthread_mutex_lock(&s->lib_mu);
	rc = st_library_delete(s->lib, id, &err);
	pthread_mutex_unlock(&s->lib_mu);
	srv_pool_forget(s, id);
	srv_cache_forget(&s->cache, id);
	if (rc == -ENOENT)
		return srv_reply_error(r, 404, "not_found", "no trace %s", id);
	if (rc < 0)
		return srv_reply_errno(r, rc, err.msg);
	return srv_reply_json(r, 200, json_pack("{s:s}", "deleted", id));
}

/*
 * POST /api/traces/ID/retry: ingest a failed trace again from its kept raw
 * file (the disk was full, a bug since fixed), without uploading it again.
 */
enum MHD_Result
srv_api_retry(struct srv_req *r, const char *id)
{
	struct srv *s = r->srv;
	struct tc_err err = { 0 };
	char url[64];
	int rc;

	if (!srv_auth_ok(r))
		return MHD_YES;
	pthread_mutex_lock(&s->lib_mu);
	rc = st_library_requeue(s->lib, id, &err);
	pthread_mutex_unlock(&s->lib_mu);
	if (rc == -ENOENT)
		return srv_reply_error(r, 404, "not_found", "no trace %s", id);
	if (rc == -EALREADY)
		return srv_reply_error(r, 409, "not_failed", "%s: only a failed ingest is retried",
				       err.msg);
	if (rc < 0)
		return srv_reply_errno(r, rc, err.msg);
	srv_queue_push(s, id, true);	/* accepted once already: not held to --max-queue */
	snprintf(url, sizeof(url), "/api/traces/%s", id);
	return srv_reply_json(r, 202, json_pack("{s:s,s:s,s:s}", "id", id, "status", "queued",
						"url", url));
}

enum MHD_Result
srv_api_raw(struct srv_req *r, const char *id)
{
	struct srv *s = r->srv;
	struct tc_err err = { 0 };
	struct srv_pool_conn *c = srv_pool_get(s, NULL, &err);
	sqlite3_stmt *st = NULL;
	char sha[65] = "", fname[96], *path;
	struct MHD_Response *resp;
	struct stat sb;
	size_t k = 0;
	int fd;

	if (!c)
		return srv_reply_errno(r, err.code, err.msg);
	snprintf(fname, sizeof(fname), "%s", id);
	if (sqlite3_prepare_v2(c->db, "SELECT sha256, name FROM traces WHERE id = ?1", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *h = (const char *)sqlite3_column_text(st, 0);
			const unsigned char *n = sqlite3_column_text(st, 1);

			snprintf(sha, sizeof(sha), "%s", h ? h : "");
			/* a safe download name: [A-Za-z0-9._-] only */
			for (; n && *n && k + 1 < sizeof(fname); n++)
				if ((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
				    (*n >= '0' && *n <= '9') || *n == '.' || *n == '-' || *n == '_')
					fname[k++] = (char)*n;
			if (k)
				fname[k] = 0;
		}
	}
	sqlite3_finalize(st);
	srv_pool_put(s, c);
	if (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64)
		return srv_reply_error(r, 404, "not_found", "no trace %s", id);
	path = st_library_raw_path(s->lib, sha);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		if (fd >= 0)
			close(fd);
		return srv_reply_error(r, 404, "not_found", "the original file of %s is missing",
				       id);
	}
	resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/octet-stream");
	{
		char cd[160];

		snprintf(cd, sizeof(cd), "attachment; filename=\"%s\"", fname);
		MHD_add_response_header(resp, "Content-Disposition", cd);
	}
	MHD_add_response_header(resp, "Cache-Control", "private, max-age=31536000, immutable");
	return srv_reply_response(r, 200, resp);
}
