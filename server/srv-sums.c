/* SPDX-License-Identifier: MIT */
/*
 * server/srv-sums.c - the decoded summary-level cache of srv-sums.h: a
 * doubly linked LRU list under one mutex, bounded by bytes; entries in use
 * are counted and never freed under their users.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc.h"
#include "store/library.h"
#include "server/srv-sums.h"

#define SUMS_MAX_BYTES ((size_t)64 << 20)

struct sums_ent {
	struct srv_sums pub;		/* first: srv_sums_put() casts back */
	char trace[ST_ID_LEN + 1];
	int64_t unit;
	int level;
	int refs;			/* under sums_mu */
	size_t bytes;
	struct sums_ent *prev, *next;	/* most recent first */
};

static pthread_mutex_t sums_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sums_ent *sums_head, *sums_tail;
static size_t sums_bytes;

void
srv_sums_read(struct srv_sum *r, sqlite3_stmt *st)
{
	r->bucket = sqlite3_column_int64(st, 0);
	r->count = sqlite3_column_int64(st, 1);
	r->busy = sqlite3_column_int64(st, 2);
	r->dom_ns = sqlite3_column_int64(st, 3);
	r->has_v = sqlite3_column_type(st, 4) != SQLITE_NULL;
	r->vmin = r->has_v ? sqlite3_column_double(st, 4) : 0;
	r->vmax = r->has_v ? sqlite3_column_double(st, 5) : 0;
	r->dom_name = (uint32_t)sqlite3_column_int64(st, 6);
}

static void
unlink_ent(struct sums_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		sums_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		sums_tail = e->prev;
	e->prev = e->next = NULL;
}

static void
push_front(struct sums_ent *e)
{
	e->prev = NULL;
	e->next = sums_head;
	if (sums_head)
		sums_head->prev = e;
	sums_head = e;
	if (!sums_tail)
		sums_tail = e;
}

static void
ent_free(struct sums_ent *e)
{
	if (e) {
		free((void *)e->pub.row);
		free(e);
	}
}

/* Free unused entries from the tail until within bounds; under sums_mu. */
static struct sums_ent *
evict_locked(void)
{
	struct sums_ent *e = sums_tail, *dead = NULL;

	while (e && sums_bytes > SUMS_MAX_BYTES) {
		struct sums_ent *p = e->prev;

		if (!e->refs) {
			unlink_ent(e);
			sums_bytes -= e->bytes;
			e->next = dead;		/* freed outside the lock */
			dead = e;
		}
		e = p;
	}
	return dead;
}

static struct sums_ent *
find_locked(const char *trace, int64_t unit, int level)
{
	for (struct sums_ent *e = sums_head; e; e = e->next)
		if (e->unit == unit && e->level == level && !strcmp(e->trace, trace))
			return e;
	return NULL;
}

static struct sums_ent *
load(const char *trace, int64_t unit, int level, sqlite3_stmt *all)
{
	struct sums_ent *e = tc_xcalloc(1, sizeof(*e));
	struct srv_sum *row = NULL;
	size_t n = 0, cap = 0;
	int rc;

	snprintf(e->trace, sizeof(e->trace), "%s", trace);
	e->unit = unit;
	e->level = level;
	sqlite3_bind_int64(all, 1, unit);
	sqlite3_bind_int(all, 2, level);
	while ((rc = sqlite3_step(all)) == SQLITE_ROW) {
		if (n == SRV_SUMS_MAX_ROWS)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			row = tc_xrealloc(row, cap * sizeof(*row));
		}
		srv_sums_read(&row[n++], all);
	}
	sqlite3_reset(all);
	if (rc != SQLITE_DONE) {	/* too many rows, or an error */
		free(row);
		free(e);
		return NULL;
	}
	e->pub.row = row;
	e->pub.n = n;
	e->bytes = sizeof(*e) + cap * sizeof(*row);
	return e;
}

/* The list is short (bounded by bytes, a few hundred levels): a linear
 * search costs less than one SQLite row per bucket. */
const struct srv_sums *
srv_sums_get(const char *trace, int64_t unit, int level, sqlite3_stmt *all)
{
	struct sums_ent *e, *mine, *dead;

	pthread_mutex_lock(&sums_mu);
	e = find_locked(trace, unit, level);
	if (e) {
		e->refs++;
		unlink_ent(e);
		push_front(e);
	}
	pthread_mutex_unlock(&sums_mu);
	if (e)
		return &e->pub;
	mine = load(trace, unit, level, all);
	if (!mine)
		return NULL;
	pthread_mutex_lock(&sums_mu);
	e = find_locked(trace, unit, level);	/* another thread was quicker */
	if (!e) {
		e = mine;
		mine = NULL;
		push_front(e);
		sums_bytes += e->bytes;
	}
	e->refs++;
	dead = evict_locked();
	pthread_mutex_unlock(&sums_mu);
	ent_free(mine);
	while (dead) {
		struct sums_ent *n = dead->next;

		ent_free(dead);
		dead = n;
	}
	return &e->pub;
}

void
srv_sums_put(const struct srv_sums *s)
{
	struct sums_ent *e = (struct sums_ent *)s, *dead;

	if (!e)
		return;
	pthread_mutex_lock(&sums_mu);
	e->refs--;
	dead = evict_locked();
	pthread_mutex_unlock(&sums_mu);
	while (dead) {
		struct sums_ent *n = dead->next;

		ent_free(dead);
		dead = n;
	}
}
