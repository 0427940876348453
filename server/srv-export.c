/* SPDX-License-Identifier: MIT */
/*
 * server/srv-export.c - GET /api/traces/ID/export?format=pftrace|json: the
 * stored trace written out as a plain Perfetto trace (the default) or as
 * Chrome JSON (ing_export(), docs/perfetto-ingest.md "Export"), to open in
 * Perfetto's UI or a tool that reads Chrome JSON; a run uploaded as .ntff
 * has no other form they read.  The file is written to a temporary in
 * DATA/tmp that is unlinked at once and sent from its descriptor, so
 * nothing stays behind, also when the client goes away.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ingest/ingest.h"
#include "server/srv-int.h"

/* @name without its extensions, [A-Za-z0-9._-] only, into @out; @id when empty. */
static void
export_name(const char *name, const char *id, char *out, size_t n)
{
	size_t k = 0;

	for (; name && *name && *name != '.' && k + 1 < n; name++)
		if ((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
		    (*name >= '0' && *name <= '9') || *name == '-' || *name == '_')
			out[k++] = *name;
	out[k] = 0;
	if (!k)
		snprintf(out, n, "%s", id);
}

enum MHD_Result
srv_api_export(struct srv_req *r, const char *id)
{
	struct srv *s = r->srv;
	const char *fmt = srv_arg(r, "format"), *ext, *ctype, *status;
	struct tc_err err = { 0 };
	struct srv_pool_conn *c;
	struct MHD_Response *resp;
	char base[96], cd[192], *path;
	struct stat sb;
	json_t *t;
	FILE *f;
	int format, code = 0, fd, fd2, rc;

	if (!fmt || !strcmp(fmt, "pftrace")) {
		format = ING_EXPORT_PFTRACE;
		ext = ".pftrace";
		ctype = "application/octet-stream";
	} else if (!strcmp(fmt, "json")) {
		format = ING_EXPORT_JSON;
		ext = ".json";
		ctype = "application/json";
	} else {
		return srv_reply_error(r, 400, "bad_request",
				       "format must be pftrace or json, not '%.40s'", fmt);
	}
	t = srv_trace_json(s, id, &code);
	if (!t && code == -ENOENT)
		return srv_reply_error(r, 404, "not_found", "no trace %s", id);
	if (!t)
		return srv_reply_errno(r, code, "reading the library failed");
	status = json_string_value(json_object_get(t, "status"));
	if (!status || strcmp(status, "ready")) {
		rc = srv_reply_error(r, 409, "not_ready", "trace %s is %s: it can be exported once "
				     "it is ready", id, status ? status : "not ready");
		json_decref(t);
		return rc;
	}
	export_name(json_string_value(json_object_get(t, "name")), id, base, sizeof(base));
	json_decref(t);

	path = st_library_tmp_path(s->lib, ext);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	rc = fd < 0 ? -errno : 0;
	if (fd >= 0)
		unlink(path);
	free(path);
	if (rc)
		return srv_reply_errno(r, rc, "cannot make a temporary file for the export");
	fd2 = dup(fd);	/* fclose() closes this one; the response keeps fd */
	f = fd2 >= 0 ? fdopen(fd2, "w") : NULL;
	if (!f && fd2 >= 0)
		close(fd2);
	c = f ? srv_pool_get(s, id, &err) : NULL;
	if (!f) {
		rc = tc_err_set(&err, -errno, "cannot write the export: %s", strerror(errno));
	} else if (!c) {
		rc = err.code ? err.code : -EIO;
	} else {
		/* one event's JSON at a time, freed as it goes: not the request's arena */
		struct tc_arena *a = srv_json_arena_suspend();

		rc = ing_export(c->db, format, f, base, &err);
		srv_json_arena_resume(a);
	}
	if (c)
		srv_pool_put(s, c);
	if (f && fclose(f) != 0 && !rc) {
		int e = tc_write_errno();

		rc = tc_err_set(&err, -e, "writing the export: %s", strerror(e));
	}
	if (!rc && fstat(fd, &sb) < 0)
		rc = tc_err_set(&err, -errno, "the export: %s", strerror(errno));
	if (rc) {
		close(fd);
		return srv_reply_errno(r, rc, err.msg);
	}
	resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);	/* owns fd */
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", ctype);
	snprintf(cd, sizeof(cd), "attachment; filename=\"%s%s\"", base, ext);
	MHD_add_response_header(resp, "Content-Disposition", cd);
	MHD_add_response_header(resp, "Cache-Control", "private, max-age=31536000, immutable");
	return srv_reply_response(r, 200, resp);
}
