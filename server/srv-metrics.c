/* SPDX-License-Identifier: MIT */
/*
 * server/srv-metrics.c - request counters and latency histograms, exported
 * as Prometheus text at GET /metrics.  Recording is lock-free (atomics).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "server/srv-int.h"

const double srv_lat_bounds[SRV_LAT_NBUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5,
};

const char *const srv_route_names[SRV_R_NROUTES] = {
	"other", "upload", "list", "trace", "raw", "units", "timeline", "event", "deps",
	"critical_path", "search", "summary", "healthz", "metrics", "static", "export",
};

void
srv_metrics_record(struct srv *s, enum srv_route route, unsigned status, int64_t ns)
{
	double sec = (double)ns / 1e9;
	unsigned cls = status >= 100 && status < 600 ? status / 100 : 0;
	int b;

	if ((unsigned)route >= SRV_R_NROUTES)
		route = SRV_R_OTHER;
	atomic_fetch_add(&s->m.req[route][cls], 1);
	for (b = 0; b < SRV_LAT_NBUCKETS && sec > srv_lat_bounds[b]; b++)
		;
	atomic_fetch_add(&s->m.lat[route][b], 1);
	atomic_fetch_add(&s->m.lat_sum_us[route], (uint64_t)(ns > 0 ? ns / 1000 : 0));
}

enum MHD_Result
srv_metrics_reply(struct srv_req *r)
{
	struct srv *s = r->srv;
	struct srv_metrics *m = &s->m;
	struct MHD_Response *resp;
	struct tc_buf b;
	size_t len;
	char *text;
	static const char *const cls[6] = { "none", "1xx", "2xx", "3xx", "4xx", "5xx" };

	tc_buf_init(&b);
	tc_buf_adds(&b, "# HELP nx_http_requests_total HTTP requests by route and status class.\n"
		    "# TYPE nx_http_requests_total counter\n");
	for (int i = 0; i < SRV_R_NROUTES; i++)
		for (int c = 0; c < 6; c++) {
			uint64_t v = atomic_load(&m->req[i][c]);

			if (v)
				tc_buf_printf(&b, "nx_http_requests_total{route=\"%s\","
					      "code=\"%s\"} %" PRIu64 "\n", srv_route_names[i],
					      cls[c], v);
		}
	tc_buf_adds(&b, "# HELP nx_http_request_seconds HTTP request latency by route.\n"
		    "# TYPE nx_http_request_seconds histogram\n");
	for (int i = 0; i < SRV_R_NROUTES; i++) {
		uint64_t cum = 0;

		for (int k = 0; k <= SRV_LAT_NBUCKETS; k++)
			cum += atomic_load(&m->lat[i][k]);
		if (!cum)
			continue;
		cum = 0;
		for (int k = 0; k < SRV_LAT_NBUCKETS; k++) {
			cum += atomic_load(&m->lat[i][k]);
			tc_buf_printf(&b, "nx_http_request_seconds_bucket{route=\"%s\",le=\"%g\"} "
				      "%" PRIu64 "\n", srv_route_names[i], srv_lat_bounds[k], cum);
		}
		cum += atomic_load(&m->lat[i][SRV_LAT_NBUCKETS]);
		tc_buf_printf(&b, "nx_http_request_seconds_bucket{route=\"%s\",le=\"+Inf\"} "
			      "%" PRIu64 "\n", srv_route_names[i], cum);
		tc_buf_printf(&b, "nx_http_request_seconds_sum{route=\"%s\"} %.6f\n",
			      srv_route_names[i], (double)atomic_load(&m->lat_sum_us[i]) / 1e6);
		tc_buf_printf(&b, "nx_http_request_seconds_count{route=\"%s\"} %" PRIu64 "\n",
			      srv_route_names[i], cum);
	}
#define COUNTER(name, help, v) \
	tc_buf_printf(&b, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %" PRIu64 \
		      "\n", (uint64_t)(v))
#define GAUGE(name, help, v) \
	tc_buf_printf(&b, "# HELP " name " " help "\n# TYPE " name " gauge\n" name " %" PRIu64 \
		      "\n", (uint64_t)(v))
	COUNTER("nx_uploads_total", "Uploads accepted.", atomic_load(&m->uploads));
	COUNTER("nx_upload_bytes_total", "Bytes of accepted uploads.",
		atomic_load(&m->upload_bytes));
	COUNTER("nx_uploads_rejected_total", "Uploads refused (bad input, limits).",
		atomic_load(&m->upload_rejected));
	COUNTER("nx_ingests_total", "Ingests that finished ready.", atomic_load(&m->ingests_ok));
	COUNTER("nx_ingest_errors_total", "Ingests that failed.", atomic_load(&m->ingests_failed));
	COUNTER("nx_ingests_cancelled_total", "Ingests stopped by a delete or the server stopping.",
		atomic_load(&m->ingests_cancelled));
	COUNTER("nx_ingest_bytes_total", "Raw bytes ingested.", atomic_load(&m->ingest_bytes));
	COUNTER("nx_answer_cache_hits_total",
		"Timeline, summary and search-count answers served from the cache.",
		atomic_load(&s->cache.hits));
	COUNTER("nx_answer_cache_misses_total",
		"Timeline, summary and search-count answers computed.",
		atomic_load(&s->cache.misses));
	GAUGE("nx_uploads_active", "Uploads in progress.", atomic_load(&s->uploads_active));
	GAUGE("nx_ingest_queue_length", "Traces waiting for a worker.", srv_queue_len(s));
	GAUGE("nx_ingests_active", "Traces being ingested.", srv_queue_busy(s));
	tc_buf_printf(&b, "# HELP nx_start_time_seconds Unix time the server started.\n"
		      "# TYPE nx_start_time_seconds gauge\nnx_start_time_seconds %.3f\n",
		      (double)s->started_ns / 1e9);
#undef COUNTER
#undef GAUGE
	len = b.len;
	text = tc_buf_steal(&b);
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return srv_reply_response(r, 200, resp);
}
