/* SPDX-License-Identifier: MIT */
/*
 * store/st-conn.c - struct st_conn, the state the `events` and `edges`
 * modules of one connection share, and the registry that finds it from the
 * connection.
 *
 * st_sql_register() makes one per connection (st_conn_new()) and gives it
 * to both modules as their aux pointer; each module's destructor drops a
 * reference (st_conn_unref()), and the last one takes it out of the
 * registry and frees it.  SQLite destroys a connection's modules while it
 * closes the connection, before the allocator can hand the same sqlite3
 * pointer out again, so a registered pointer always names a live
 * connection.  A lookup takes one mutex and reads a short list: the
 * dependency queries call st_conn_of() once each, and a server's pooled
 * connection then costs no statement at all.
 */
#include <pthread.h>
#include <stdint.h>
#include "store/store-int.h"

#define SC_BUCKETS 64

static pthread_mutex_t sc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct st_conn *sc_reg[SC_BUCKETS];	/* chains through ->next */

static struct st_conn **
sc_bucket(const sqlite3 *db)
{
	uint64_t h = (uint64_t)(uintptr_t)db * UINT64_C(0x9e3779b97f4a7c15);

	return &sc_reg[h >> 58];	/* the top 6 bits: SC_BUCKETS == 64 */
}

struct st_conn *
st_conn_new(sqlite3 *db)
{
	struct st_conn *c = sqlite3_malloc(sizeof(*c)), **b;

	if (!c)
		return NULL;
	*c = (struct st_conn){ .refs = 1, .db = db };
	pthread_mutex_lock(&sc_lock);
	b = sc_bucket(db);
	c->next = *b;		/* first: a second registration on @db is found first */
	*b = c;
	pthread_mutex_unlock(&sc_lock);
	return c;
}

void
st_conn_unref(void *p)
{
	struct st_conn *c = p, **pp;

	if (!c || --c->refs > 0)
		return;
	pthread_mutex_lock(&sc_lock);
	for (pp = sc_bucket(c->db); *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	pthread_mutex_unlock(&sc_lock);
	sqlite3_free(c);
}

struct st_conn *
st_conn_of(sqlite3 *db)
{
	struct st_conn *c;
	sqlite3_stmt *s;

	pthread_mutex_lock(&sc_lock);
	for (c = *sc_bucket(db); c && c->db != db; c = c->next)
		;
	pthread_mutex_unlock(&sc_lock);
	if (!c)
		return NULL;
	/* preparing a statement that names an eponymous table connects it */
	if (!c->events && sqlite3_prepare_v2(db, "SELECT 1 FROM events WHERE 0", -1, &s,
					     NULL) == SQLITE_OK)
		sqlite3_finalize(s);
	if (!c->edges && sqlite3_prepare_v2(db, "SELECT 1 FROM edges WHERE 0", -1, &s,
					    NULL) == SQLITE_OK)
		sqlite3_finalize(s);
	return c->events ? c : NULL;
}
