/* SPDX-License-Identifier: MIT */
/*
 * server/srv-pool.c - a small pool of read-only SQLite connections, keyed by
 * trace id (or "" for the catalog), shared by the HTTP threads.  Each
 * connection is used by one thread at a time (SQLITE_OPEN_NOMUTEX) and keeps
 * the per-trace facts a timeline query needs (bucket width, origin, span).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "server/srv-int.h"

#define SRV_POOL_MAX_IDLE 64

void
srv_pool_init(struct srv_pool *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
}

static void
conn_close(struct srv_pool_conn *c)
{
	if (!c)
		return;
	sqlite3_close(c->db);
	free(c);
}

void
srv_pool_destroy(struct srv_pool *p)
{
	struct srv_pool_conn *c, *n;

	for (c = p->idle; c; c = n) {
		n = c->next;
		conn_close(c);
	}
	p->idle = NULL;
	p->nidle = 0;
	pthread_mutex_destroy(&p->mu);
}

static int64_t
meta_i64(sqlite3 *db, const char *key, int64_t dflt)
{
	sqlite3_stmt *st = NULL;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL))
		goto out;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		int64_t x;

		if (t && !tc_parse_i64(t, &x))
			v = x;
	}
out:
	sqlite3_finalize(st);
	return v;
}

/* The span of all events, from the stats st_writer_finish() stored in meta
 * (0, 0 when they cannot be read). */
static void
trace_span(struct srv_pool_conn *c)
{
	sqlite3_stmt *st = NULL;

	c->start_ns = 0;
	c->end_ns = 0;
	if (sqlite3_prepare_v2(c->db, "SELECT value FROM meta WHERE key = 'stats'", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		json_t *j = t ? json_loads(t, 0, NULL) : NULL;
		json_t *a = json_object_get(j, "start_ns"), *b = json_object_get(j, "end_ns");

		if (json_is_integer(a) && json_is_integer(b)) {
			c->start_ns = json_integer_value(a);
			c->end_ns = json_integer_value(b);
		}
		json_decref(j);
	}
	sqlite3_finalize(st);
}

static struct srv_pool_conn *
conn_open(struct srv *s, const char *id, struct tc_err *err)
{
	struct srv_pool_conn *c = tc_xcalloc(1, sizeof(*c));
	char *path = NULL;
	int rc;

	if (id) {
		path = st_library_trace_path(s->lib, id);
		snprintf(c->key, sizeof(c->key), "%s", id);
	} else {
		path = tc_xstrdup(s->catalog_path);
	}
	if (id) {
		/* checks the store version, registers the events table */
		rc = st_trace_open(&c->db, path, err);
	} else {
		rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
				     NULL);
		if (rc != SQLITE_OK)
			rc = tc_err_set(err, -EIO, "%s: %s", path,
					c->db ? sqlite3_errmsg(c->db) : "open failed");
	}
	if (rc) {
		conn_close(c);
		c = NULL;
		goto out;
	}
	sqlite3_busy_timeout(c->db, 5000);
	if (id) {
		c->bucket_ns = meta_i64(c->db, "bucket_ns", 0);
		c->origin_ns = meta_i64(c->db, "origin_ns", 0);
		trace_span(c);
	}
out:
	free(path);
	return c;
}

static bool
trace_exists(struct srv *s, const char *id)
{
	struct stat sb;
	char *path = st_library_trace_path(s->lib, id);
	bool ok = stat(path, &sb) == 0;

	free(path);
	return ok;
}

struct srv_pool_conn *
srv_pool_get(struct srv *s, const char *id, struct tc_err *err)
{
	struct srv_pool *p = &s->pool;
	struct srv_pool_conn *c = NULL, **pp;
	const char *key = id ? id : "";

	if (id && !trace_exists(s, id)) {
		srv_pool_forget(s, id);
		tc_err_set(err, -ENOENT, "trace %s has no data", id);
		return NULL;
	}
	pthread_mutex_lock(&p->mu);
	for (pp = &p->idle; *pp; pp = &(*pp)->next) {
		if (!strcmp((*pp)->key, key)) {
			c = *pp;
			*pp = c->next;
			c->next = NULL;
			p->nidle--;
			break;
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (!c)
		c = conn_open(s, id, err);
	return c;
}

void
srv_pool_put(struct srv *s, struct srv_pool_conn *c)
{
	struct srv_pool *p = &s->pool;
	struct srv_pool_conn *drop = NULL;

	if (!c)
		return;
	if (c->key[0] && !trace_exists(s, c->key)) {
		conn_close(c);
		return;
	}
	pthread_mutex_lock(&p->mu);
	c->next = p->idle;
	p->idle = c;
	p->nidle++;
	if (p->nidle > SRV_POOL_MAX_IDLE) {
		/* drop the oldest (the tail) */
		struct srv_pool_conn **pp = &p->idle;

		while ((*pp)->next)
			pp = &(*pp)->next;
		drop = *pp;
		*pp = NULL;
		p->nidle--;
	}
	pthread_mutex_unlock(&p->mu);
	conn_close(drop);
}

void
srv_pool_forget(struct srv *s, const char *id)
{
	struct srv_pool *p = &s->pool;
	struct srv_pool_conn *c, **pp, *dead = NULL;

	pthread_mutex_lock(&p->mu);
	pp = &p->idle;
	while ((c = *pp)) {
		if (!strcmp(c->key, id)) {
			*pp = c->next;
			c->next = dead;
			dead = c;
			p->nidle--;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&p->mu);
	while (dead) {
		c = dead->next;
		conn_close(dead);
		dead = c;
	}
}
