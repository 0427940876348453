/* SPDX-License-Identifier: MIT */
/*
 * server/srv-http.c - the libmicrohttpd daemon: start/stop, the request
 * context (one arena per request), routing, JSON replies and query-parameter
 * parsing.  Handlers live in srv-upload.c, srv-api.c, srv-trace.c,
 * srv-static.c and srv-metrics.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "server/srv-int.h"

/*
 * Jansson allocates from the request's arena while a request handler runs
 * on this thread (building a timeline answer makes tens of thousands of
 * small objects; a bump allocator makes them cheap and frees them at once
 * when the request completes).  Outside a handler (ingest workers, start-up)
 * it is plain malloc/free.  No JSON value may outlive the request that made
 * it; json_dumps() output made in a handler lives in the arena too.
 */
static __thread struct tc_arena *srv_tls_arena;

static void *
srv_json_alloc(size_t n)
{
	if (srv_tls_arena)
		return tc_arena_alloc(srv_tls_arena, n);
	return malloc(n);
}

static void
srv_json_free(void *p)
{
	if (!srv_tls_arena)
		free(p);
}

struct tc_arena *
srv_json_arena_suspend(void)
{
	struct tc_arena *a = srv_tls_arena;

	srv_tls_arena = NULL;
	return a;
}

void
srv_json_arena_resume(struct tc_arena *a)
{
	srv_tls_arena = a;
}

void
srv_json_use_arenas(void)
{
	json_set_alloc_funcs(srv_json_alloc, srv_json_free);
}

const char *srv_arg(struct srv_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

static void
add_common_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
}

enum MHD_Result
srv_reply_response(struct srv_req *r, unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	add_common_headers(resp);
	ret = MHD_queue_response(r->conn, status, resp);
	MHD_destroy_response(resp);
	r->status = status;
	r->queued = true;
	return ret;
}

enum MHD_Result
srv_reply_text(struct srv_req *r, unsigned status, const char *text, size_t len)
{
	struct MHD_Response *resp = NULL;
	size_t gzlen = 0;
	void *gz = srv_gzip(r, text, len, &gzlen);

	if (gz) {
		resp = MHD_create_response_from_buffer(gzlen, gz, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(gz);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
	} else {
		resp = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
		if (!resp)
			return MHD_NO;
	}
	MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
	/* a ready trace never changes and ids are never reused */
	if (status == 200 && r->route >= SRV_R_UNITS && r->route <= SRV_R_SUMMARY)
		MHD_add_response_header(resp, "Cache-Control", "private, max-age=3600");
	else
		MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == 503)
		MHD_add_response_header(resp, "Retry-After", "5");
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate",
					"Bearer realm=\"neuron-explorer\"");
	return srv_reply_response(r, status, resp);
}

char *
srv_json_text(json_t *j, size_t *len)
{
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	char *out = NULL;

	if (text) {
		*len = strlen(text);
		out = tc_xmalloc(*len + 1);
		memcpy(out, text, *len + 1);
		if (!srv_tls_arena)
			free(text);
	}
	json_decref(j);
	return out;
}

enum MHD_Result
srv_reply_json(struct srv_req *r, unsigned status, json_t *j)
{
	static const char fail[] =
		"{\"error\":\"internal\",\"detail\":\"cannot encode the answer\"}";
	enum MHD_Result ret;
	char *text;

	/* in a handler the text is in the arena: MHD copies it */
	text = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(j);
	if (!text)
		return srv_reply_text(r, 500, fail, strlen(fail));
	ret = srv_reply_text(r, status, text, strlen(text));
	if (!srv_tls_arena)
		free(text);
	return ret;
}

enum MHD_Result
srv_reply_error(struct srv_req *r, unsigned status, const char *code, const char *fmt, ...)
{
	char detail[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return srv_reply_json(r, status, json_pack("{s:s, s:o}", "error", code, "detail",
						   tc_json_str(detail)));
}

enum MHD_Result
srv_reply_errno(struct srv_req *r, int code, const char *detail)
{
	switch (code) {
	case -ENOENT:
		return srv_reply_error(r, 404, "not_found", "%s", detail);
	case -EINVAL:
		return srv_reply_error(r, 400, "bad_request", "%s", detail);
	case -EBUSY:
		return srv_reply_error(r, 409, "conflict", "%s", detail);
	case -EAGAIN:
		return srv_reply_error(r, 503, "busy", "%s", detail);
	case -ENOSPC:
		return srv_reply_error(r, 507, "no_space", "%s", detail);
	default:
		return srv_reply_error(r, 500, "internal", "%s", detail);
	}
}

/* A JSON string from possibly invalid UTF-8: bad bytes become U+FFFD. */
json_t *
srv_col_str(sqlite3_stmt *st, int i)
{
	return tc_json_str((const char *)sqlite3_column_text(st, i));
}

int
srv_arg_i64(struct srv_req *r, const char *key, int64_t *out, int64_t min, int64_t max)
{
	const char *v = srv_arg(r, key);
	int64_t x;

	if (!v || !*v)
		return 0;
	if (tc_parse_i64(v, &x) < 0) {
		srv_reply_error(r, 400, "bad_param", "parameter %s=%.64s is not an integer",
				key, v);
		return -1;
	}
	if (x < min || x > max) {
		srv_reply_error(r, 400, "bad_param",
				"parameter %s=%lld is out of range [%lld, %lld]", key,
				(long long)x, (long long)min, (long long)max);
		return -1;
	}
	*out = x;
	return 1;
}

/* Split "/api/traces/ID/WHAT/REST" style paths. */
static enum MHD_Result
route_traces(struct srv_req *r, const char *method, const char *path)
{
	char id[ST_ID_LEN + 2];
	const char *slash, *what, *rest;
	size_t n;

	if (!*path) {
		r->route = SRV_R_LIST;
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			goto bad_method;
		return srv_api_list(r);
	}
	slash = strchr(path, '/');
	n = slash ? (size_t)(slash - path) : strlen(path);
	if (n != ST_ID_LEN) {
		r->route = SRV_R_TRACE;
		return srv_reply_error(r, 404, "not_found", "no trace with id '%.40s'", path);
	}
	memcpy(id, path, n);
	id[n] = 0;
	if (!st_id_valid(id)) {
		r->route = SRV_R_TRACE;
		return srv_reply_error(r, 404, "not_found", "no trace with id '%s'", id);
	}
	if (!slash || !slash[1]) {
		r->route = SRV_R_TRACE;
		if (!strcmp(method, "DELETE"))
			return srv_api_delete(r, id);
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			goto bad_method;
		return srv_api_trace(r, id);
	}
	what = slash + 1;
	rest = strchr(what, '/');
	if (!strcmp(what, "retry")) {
		r->route = SRV_R_TRACE;
		if (strcmp(method, "POST"))
			goto bad_method;
		return srv_api_retry(r, id);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		goto bad_method;
	if (!strcmp(what, "raw")) {
		r->route = SRV_R_RAW;
		return srv_api_raw(r, id);
	}
	if (!strcmp(what, "export")) {
		r->route = SRV_R_EXPORT;
		return srv_api_export(r, id);
	}
	{
		char w[32];
		size_t wl = rest ? (size_t)(rest - what) : strlen(what);

		if (wl >= sizeof(w))
			return srv_reply_error(r, 404, "not_found", "no such endpoint");
		memcpy(w, what, wl);
		w[wl] = 0;
		if (!strcmp(w, "units"))
			r->route = SRV_R_UNITS;
		else if (!strcmp(w, "timeline"))
			r->route = SRV_R_TIMELINE;
		else if (!strcmp(w, "events"))
			r->route = SRV_R_EVENT;
		else if (!strcmp(w, "deps"))
			r->route = SRV_R_DEPS;
		else if (!strcmp(w, "critical-path"))
			r->route = SRV_R_CRIT;
		else if (!strcmp(w, "search"))
			r->route = SRV_R_SEARCH;
		else if (!strcmp(w, "summary"))
			r->route = SRV_R_SUMMARY;
		else
			return srv_reply_error(r, 404, "not_found", "no such endpoint '%s'", w);
		return srv_trace_dispatch(r, id, w, rest ? rest + 1 : NULL);
	}
bad_method:
	return srv_reply_error(r, 405, "method_not_allowed", "%s is not allowed here", method);
}

static enum MHD_Result route(struct srv_req *r, const char *url, const char *method,
			     const char *upload_data, size_t *upload_size);

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct srv_req *r = *con_cls;
	enum MHD_Result ret;

	if (!r) {
		r = tc_xcalloc(1, sizeof(*r));
		r->srv = cls;
		r->conn = conn;
		r->t0 = tc_mono_ns();
		tc_arena_init(&r->arena, 1024 * 1024);
		*con_cls = r;
	}
	srv_tls_arena = &r->arena;
	ret = route(r, url, method, upload_data, upload_size);
	srv_tls_arena = NULL;
	return ret;
}

static enum MHD_Result
route(struct srv_req *r, const char *url, const char *method, const char *upload_data,
      size_t *upload_size)
{
	if (!r->routed) {
		r->routed = true;
		if (!strcmp(url, "/upload") || !strcmp(url, "/api/upload")) {
			r->route = SRV_R_UPLOAD;
			if (strcmp(method, "POST") && strcmp(method, "PUT"))
				return srv_reply_error(r, 405, "method_not_allowed",
						       "use POST to upload");
			return srv_upload(r, upload_data, upload_size);
		}
		/* Other requests are answered at once; a body is discarded. */
	}
	if (r->route == SRV_R_UPLOAD)
		return srv_upload(r, upload_data, upload_size);
	if (r->queued) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/healthz")) {
		r->route = SRV_R_HEALTH;
		return srv_reply_json(r, 200, json_pack("{s:b}", "ok", 1));
	}
	if (!strcmp(url, "/metrics")) {
		r->route = SRV_R_METRICS;
		return srv_metrics_reply(r);
	}
	if (!strncmp(url, "/api/traces", 11) && (url[11] == 0 || url[11] == '/'))
		return route_traces(r, method, url[11] ? url + 12 : "");
	if (!strncmp(url, "/api/", 5) || !strcmp(url, "/api"))
		return srv_reply_error(r, 404, "not_found", "no such endpoint");
	r->route = SRV_R_STATIC;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return srv_reply_error(r, 405, "method_not_allowed", "%s is not allowed here",
				       method);
	return srv_static(r, url);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
	     enum MHD_RequestTerminationCode toe)
{
	struct srv *s = cls;
	struct srv_req *r = *con_cls;

	if (!r)
		return;
	srv_metrics_record(s, r->route, r->queued ? r->status : 0, tc_mono_ns() - r->t0);
	srv_upload_free(r->up);
	tc_arena_free(&r->arena);
	free(r);
	*con_cls = NULL;
}

int
srv_http_start(struct srv *s, const char *host, uint16_t port, struct tc_err *err)
{
	struct sockaddr_storage ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_ITC;
	const union MHD_DaemonInfo *info;
	int rc = 0;

	memset(&ss, 0, sizeof(ss));
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return tc_err_set(err, -EINVAL, "--listen: bad IPv6 address '%s'", host);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return tc_err_set(err, -EINVAL, "--listen: bad IPv4 address '%s'", host);
	}
	s->mhd = MHD_start_daemon(flags, port, NULL, NULL, on_request, s,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->opts.max_conns,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				  MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				  MHD_OPTION_END);
	if (!s->mhd) {
		rc = tc_err_set(err, -EADDRINUSE, "cannot listen on %s:%u (address in use or "
				"not available)", host, port);
		goto out;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : port;
out:
	return rc;
}

void
srv_http_stop(struct srv *s)
{
	if (!s->mhd)
		return;
	MHD_stop_daemon(s->mhd);
	s->mhd = NULL;
}

void
srv_http_quiesce(struct srv *s)
{
	if (s->mhd) {
		MHD_socket fd = MHD_quiesce_daemon(s->mhd);

		if (fd != MHD_INVALID_SOCKET)
			close(fd);
	}
}
