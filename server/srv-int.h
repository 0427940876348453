/* SPDX-License-Identifier: MIT */
/*
 * server/srv-int.h - private interfaces of the trace server (server/): the
 * shared server state, the ingest queue, the read-only connection pool, the
 * request context and the JSON reply helpers.  Nothing outside server/
 * includes this; the only public entry point is cmd_serve() (cli/cmds.h).
 *
 * Threading: libmicrohttpd runs one thread per connection; ingest runs in
 * --workers threads.  Everything in struct srv is either immutable after
 * start-up, atomic, or guarded by the mutex named next to it.
 */
#ifndef SRV_INT_H
#define SRV_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <sqlite3.h>
#include <jansson.h>
#include <microhttpd.h>
#include "common/tc.h"
#include "common/tc-json.h"
#include "store/library.h"

#define SRV_DEFAULT_HOST "127.0.0.1"
#define SRV_DEFAULT_PORT 8080
#define SRV_PX_MAX 8192			/* timeline px is clamped to this */
#define SRV_PX_DEFAULT 1000
#define SRV_LIST_MAX 1000		/* limit on list/search pages */
#define SRV_WAIT_MAX_S 600		/* ?wait=1 gives up after this */
#define SRV_CANCEL_WAIT_NS (30LL * 1000000000)	/* a DELETE waits this long for an ingest to stop */

/** struct srv_opts - the serve options (CLI > config file > defaults). */
struct srv_opts {
	char *listen;		/* HOST:PORT */
	char *data;		/* data directory */
	char *token_file;
	char *web;		/* static files directory */
	int workers;		/* ingest threads */
	uint64_t max_upload;	/* bytes per upload */
	int max_uploads;	/* concurrent uploads */
	int max_queue;		/* queued ingests */
	int max_conns;		/* concurrent connections */
	int cache_mb;		/* answer cache, MiB (0: off) */
	bool insecure;		/* allow a non-loopback address without a token */
};

/* Latency histogram bucket upper bounds, in seconds (Prometheus style). */
#define SRV_LAT_NBUCKETS 12
extern const double srv_lat_bounds[SRV_LAT_NBUCKETS];

/* Routes, for metrics labels. */
enum srv_route {
	SRV_R_OTHER = 0, SRV_R_UPLOAD, SRV_R_LIST, SRV_R_TRACE, SRV_R_RAW, SRV_R_UNITS,
	SRV_R_TIMELINE, SRV_R_EVENT, SRV_R_DEPS, SRV_R_CRIT, SRV_R_SEARCH, SRV_R_SUMMARY,
	SRV_R_HEALTH, SRV_R_METRICS, SRV_R_STATIC, SRV_R_EXPORT, SRV_R_NROUTES
};
extern const char *const srv_route_names[SRV_R_NROUTES];

/** struct srv_metrics - counters exported at /metrics; all atomic. */
struct srv_metrics {
	atomic_uint_fast64_t req[SRV_R_NROUTES][6];	/* by status class 0(other),1xx..5xx */
	atomic_uint_fast64_t lat[SRV_R_NROUTES][SRV_LAT_NBUCKETS + 1];
	atomic_uint_fast64_t lat_sum_us[SRV_R_NROUTES];
	atomic_uint_fast64_t uploads, upload_bytes, upload_rejected;
	atomic_uint_fast64_t ingests_ok, ingests_failed, ingests_cancelled, ingest_bytes;
};

/* srv-cache.c: encoded answers of ready traces (immutable), LRU by bytes */
struct srv_cache_ent;
struct srv_cache {
	pthread_mutex_t mu;
	struct srv_cache_ent *head, *tail;	/* most recent first */
	size_t bytes, max_bytes;
	atomic_uint_fast64_t hits, misses;
};
void srv_cache_init(struct srv_cache *c, size_t max_bytes);
void srv_cache_destroy(struct srv_cache *c);
/** srv_cache_get - a malloc'd copy of the answer for @key, or NULL. */
char *srv_cache_get(struct srv_cache *c, const char *key, size_t *len);
/** srv_cache_put - remember @text (copied) for @key (which starts with the trace id). */
void srv_cache_put(struct srv_cache *c, const char *key, const char *text, size_t len);
/** srv_cache_forget - drop every answer of trace @id. */
void srv_cache_forget(struct srv_cache *c, const char *id);

/** struct srv_pool_conn - one pooled read-only connection. */
struct srv_pool_conn {
	sqlite3 *db;
	char key[ST_ID_LEN + 1];	/* trace id, "" for the catalog */
	struct srv_pool_conn *next;	/* idle list */
	/* cached per trace (read at open) */
	int64_t bucket_ns, origin_ns;
	int64_t start_ns, end_ns;
};

/** struct srv_pool - idle read-only connections by key; guarded by @mu. */
struct srv_pool {
	pthread_mutex_t mu;
	struct srv_pool_conn *idle;
	size_t nidle;
};

/** struct srv_worker - one ingest thread. */
struct srv_worker {
	struct srv *srv;
	pthread_t thread;
	struct st_library *lib;	/* private to the thread */
	char current[ST_ID_LEN + 1];	/* under srv->q_mu; "" when idle */
	double progress;		/* under srv->q_mu */
	int phase;			/* enum st_phase, under srv->q_mu */
	bool cancel;			/* under srv->q_mu: stop the current ingest */
};

/** struct srv - the server. */
struct srv {
	struct srv_opts opts;
	char *token;			/* NULL: no auth */
	char *web_dir;			/* NULL: no static files */
	char *catalog_path;
	struct st_library *lib;		/* catalog writes, under lib_mu */
	pthread_mutex_t lib_mu;
	struct MHD_Daemon *mhd;
	uint16_t port;

	/* the ingest queue: ids waiting, ring buffer; under q_mu */
	pthread_mutex_t q_mu;
	pthread_cond_t q_cv;		/* work queued or stopping */
	pthread_cond_t done_cv;		/* an ingest finished */
	char (*q)[ST_ID_LEN + 1];
	size_t q_head, q_len, q_cap;
	bool stopping;
	struct srv_worker *workers;
	int nworkers;

	atomic_int uploads_active;
	struct srv_pool pool;
	struct srv_cache cache;
	struct srv_metrics m;
	int64_t started_ns;
};

/* srv-queue.c */
int srv_queue_start(struct srv *s, struct tc_err *err);
/** srv_queue_stop - wake waiters, let workers finish their ingest, join them. */
void srv_queue_stop(struct srv *s);
/** srv_queue_free - release the queue once no HTTP thread can use it. */
void srv_queue_free(struct srv *s);
/** srv_queue_push - enqueue @id; -EAGAIN when full and !@force. */
int srv_queue_push(struct srv *s, const char *id, bool force);
/** srv_queue_full - whether a new upload would be refused. */
bool srv_queue_full(struct srv *s);
/** srv_queue_remove - drop a queued id; 1 removed, 0 not queued, -EBUSY ingesting. */
int srv_queue_remove(struct srv *s, const char *id);
/**
 * srv_queue_cancel - ask the worker ingesting @id to stop (its catalog row
 * goes back to "queued"); srv_queue_wait() then waits for it.
 * Return: true when a worker had it.
 */
bool srv_queue_cancel(struct srv *s, const char *id);
/**
 * srv_queue_progress - live progress of @id when a worker has it: the whole
 * ingest's fraction in *@progress and its phase (enum st_phase) in *@phase;
 * false if no worker has it.
 */
bool srv_queue_progress(struct srv *s, const char *id, double *progress, int *phase);
size_t srv_queue_len(struct srv *s);
int srv_queue_busy(struct srv *s);
/** srv_queue_wait - block until @id is neither queued nor ingesting, or @deadline_ns (mono). */
void srv_queue_wait(struct srv *s, const char *id, int64_t deadline_ns);

/* srv-pool.c */
void srv_pool_init(struct srv_pool *p);
void srv_pool_destroy(struct srv_pool *p);
/**
 * srv_pool_get - a read-only connection to trace @id (or the catalog when
 * @id is NULL).  Return: the connection, or NULL with @err set (-ENOENT when
 * the trace db does not exist).  Give it back with srv_pool_put().
 */
struct srv_pool_conn *srv_pool_get(struct srv *s, const char *id, struct tc_err *err);
void srv_pool_put(struct srv *s, struct srv_pool_conn *c);
/**
 * srv_pool_forget - close the idle connections to @id (deleted trace).
 * Connections in use are closed when given back: get and put check that the
 * trace file still exists.
 */
void srv_pool_forget(struct srv *s, const char *id);

/* srv-http.c: the request context and replies */
struct srv_req {
	struct srv *srv;
	struct MHD_Connection *conn;
	struct tc_arena arena;
	int64_t t0;
	enum srv_route route;
	unsigned status;
	bool queued;			/* a response was queued */
	bool started;			/* upload: first call seen */
	bool routed;			/* first call seen */
	struct srv_upload *up;		/* POST /upload state */
};

int srv_http_start(struct srv *s, const char *host, uint16_t port, struct tc_err *err);
/** srv_http_quiesce - stop accepting connections; those open finish. */
void srv_http_quiesce(struct srv *s);
void srv_http_stop(struct srv *s);
/** srv_json_use_arenas - route Jansson's allocations through per-request
 * arenas in handler threads; call once at start, before any JSON exists. */
void srv_json_use_arenas(void);
/**
 * srv_json_arena_suspend - JSON values made on this thread are plain malloc'd
 * again until srv_json_arena_resume() gets the return value back: for work
 * that makes many values one at a time and frees them (an export), not one
 * answer.  No value made before may be freed in between, nor after.
 */
struct tc_arena *srv_json_arena_suspend(void);
void srv_json_arena_resume(struct tc_arena *a);
/** srv_col_str - tc_json_str() of text column @i of @st. */
json_t *srv_col_str(sqlite3_stmt *st, int i);
/** srv_reply_json - queue @j (stolen) with @status. */
enum MHD_Result srv_reply_json(struct srv_req *r, unsigned status, json_t *j);
/**
 * srv_gzip - the answer @text of @len bytes to @r as one gzip member,
 * malloc'd, its size in *@out_len, when the client's Accept-Encoding takes
 * gzip and the answer is big enough to pay.  Return: NULL when it goes as it
 * is (not asked for, too small, not smaller, or out of memory).
 */
void *srv_gzip(struct srv_req *r, const void *text, size_t len, size_t *out_len);

/**
 * srv_reply_text - queue JSON text (copied) with @status; gzip'd when the
 * client takes it (srv_gzip()).
 */
enum MHD_Result srv_reply_text(struct srv_req *r, unsigned status, const char *text,
			       size_t len);
/** srv_json_text - @j (stolen) as malloc'd compact JSON text; NULL on failure. */
char *srv_json_text(json_t *j, size_t *len);
/** srv_reply_error - queue {"error": code, "detail": printf(...)}. */
enum MHD_Result srv_reply_error(struct srv_req *r, unsigned status, const char *code,
				const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/** srv_reply_errno - map a -errno from a store call to a status and reply. */
enum MHD_Result srv_reply_errno(struct srv_req *r, int code, const char *detail);
enum MHD_Result srv_reply_response(struct srv_req *r, unsigned status,
				   struct MHD_Response *resp);
const char *srv_arg(struct srv_req *r, const char *key);

/* Query parameters: 0 absent (default kept), 1 parsed, -1 replied 400. */
int srv_arg_i64(struct srv_req *r, const char *key, int64_t *out, int64_t min, int64_t max);

/* srv-upload.c */
/** srv_auth_ok - true when no token is configured or the Bearer token
 * matches; else replies 401 and returns false. */
bool srv_auth_ok(struct srv_req *r);
enum MHD_Result srv_upload(struct srv_req *r, const char *upload_data, size_t *upload_size);
void srv_upload_free(struct srv_upload *u);

/* srv-api.c: the library */
enum MHD_Result srv_api_list(struct srv_req *r);
enum MHD_Result srv_api_trace(struct srv_req *r, const char *id);
enum MHD_Result srv_api_delete(struct srv_req *r, const char *id);
enum MHD_Result srv_api_retry(struct srv_req *r, const char *id);
enum MHD_Result srv_api_raw(struct srv_req *r, const char *id);

/* srv-export.c: GET /api/traces/ID/export?format=pftrace|json */
enum MHD_Result srv_api_export(struct srv_req *r, const char *id);
/** srv_devices_json - the devices array of a trace, in display order. */
json_t *srv_devices_json(sqlite3 *db);
/** srv_trace_json - the TRACE object of @id; NULL with -ENOENT/-errno in *@code. */
json_t *srv_trace_json(struct srv *s, const char *id, int *code);

/* srv-trace.c: one trace's contents */
enum MHD_Result srv_trace_dispatch(struct srv_req *r, const char *id, const char *what,
				   const char *rest);

/*
 * The first failed read of an answer (a damaged store: a chunk that does not
 * decode), kept with the store's message of that moment, so that the answer
 * is an error and not what was read before or after it.
 */
struct srv_rd_err {
	int rc;			/* SQLITE_OK: none */
	char msg[256];
};

/* sqlite3_step(@st), a failure noted in @e. */
static inline int
srv_rd_step(struct srv_rd_err *e, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE && e->rc == SQLITE_OK) {
		e->rc = rc;
		snprintf(e->msg, sizeof(e->msg), "%s", sqlite3_errmsg(sqlite3_db_handle(st)));
	}
	return rc;
}

/* The units an answer covers, in display order. */
struct unit_list {
	int64_t *id, *first, *last;	/* first/last event id, 0 when none */
	int *kind;
	size_t n, cap;
};

/**
 * srv_unit_list_push - append the unit of row @st: its id (or @id when > 0),
 * kind, first_event and last_event columns.
 */
void srv_unit_list_push(struct unit_list *l, sqlite3_stmt *st, int64_t id);
/** srv_unit_list_free - free @l's arrays (not @l). */
void srv_unit_list_free(struct unit_list *l);

/* srv-search.c */
/**
 * srv_search - GET /api/traces/ID/search?q=&limit=&offset= on connection @c,
 * which it hands back to the pool.
 */
enum MHD_Result srv_search(struct srv_req *r, struct srv_pool_conn *c);

/* srv-static.c */
enum MHD_Result srv_static(struct srv_req *r, const char *url);

/* srv-metrics.c */
void srv_metrics_record(struct srv *s, enum srv_route route, unsigned status, int64_t ns);
enum MHD_Result srv_metrics_reply(struct srv_req *r);

#endif /* SRV_INT_H */
