/* SPDX-License-Identifier: MIT */
/*
 * server/srv-cache.c - a small LRU of encoded answers (timeline windows,
 * range summaries, search counts).  A ready trace never changes and its id
 * is never reused, so an answer stays right until the trace is deleted
 * (srv_cache_forget()).  Bounded by bytes; one mutex, held only to find,
 * link or unlink (copies happen outside it for puts, inside for gets of at
 * most a few MB).
 */
#include <stdlib.h>
#include <string.h>
#include "server/srv-int.h"

struct srv_cache_ent {
	struct srv_cache_ent *prev, *next;
	char *key;
	char *text;
	size_t len;
};

void
srv_cache_init(struct srv_cache *c, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	c->max_bytes = max_bytes;
}

static void
ent_free(struct srv_cache_ent *e)
{
	if (!e)
		return;
	free(e->key);
	free(e->text);
	free(e);
}

/* Called with mu held. */
static void
unlink_ent(struct srv_cache *c, struct srv_cache_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
	c->bytes -= e->len + strlen(e->key);
}

static void
push_front(struct srv_cache *c, struct srv_cache_ent *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
	c->bytes += e->len + strlen(e->key);
}

void
srv_cache_destroy(struct srv_cache *c)
{
	struct srv_cache_ent *e, *n;

	for (e = c->head; e; e = n) {
		n = e->next;
		ent_free(e);
	}
	c->head = c->tail = NULL;
	pthread_mutex_destroy(&c->mu);
}

char *
srv_cache_get(struct srv_cache *c, const char *key, size_t *len)
{
	struct srv_cache_ent *e;
	char *out = NULL;

	if (!c->max_bytes)
		return NULL;
	pthread_mutex_lock(&c->mu);
	for (e = c->head; e; e = e->next)
		if (!strcmp(e->key, key))
			break;
	if (e) {
		unlink_ent(c, e);
		push_front(c, e);
		out = tc_xmalloc(e->len + 1);
		memcpy(out, e->text, e->len + 1);
		*len = e->len;
	}
	pthread_mutex_unlock(&c->mu);
	atomic_fetch_add(out ? &c->hits : &c->misses, 1);
	return out;
}

void
srv_cache_put(struct srv_cache *c, const char *key, const char *text, size_t len)
{
	struct srv_cache_ent *e, *drop = NULL;

	if (!c->max_bytes || len > c->max_bytes / 4)
		return;
	e = tc_xcalloc(1, sizeof(*e));
	e->key = tc_xstrdup(key);
	e->text = tc_xmalloc(len + 1);
	memcpy(e->text, text, len);
	e->text[len] = 0;
	e->len = len;
	pthread_mutex_lock(&c->mu);
	for (struct srv_cache_ent *o = c->head; o; o = o->next)
		if (!strcmp(o->key, key)) {	/* raced with another miss */
			unlink_ent(c, o);
			o->next = drop;
			drop = o;
			break;
		}
	push_front(c, e);
	while (c->bytes > c->max_bytes && c->tail && c->tail != e) {
		struct srv_cache_ent *t = c->tail;

		unlink_ent(c, t);
		t->next = drop;
		drop = t;
	}
	pthread_mutex_unlock(&c->mu);
	while (drop) {
		e = drop->next;
		ent_free(drop);
		drop = e;
	}
}

void
srv_cache_forget(struct srv_cache *c, const char *id)
{
	struct srv_cache_ent *e, *n, *drop = NULL;
	size_t idl = strlen(id);

	pthread_mutex_lock(&c->mu);
	for (e = c->head; e; e = n) {
		n = e->next;
		if (!strncmp(e->key, id, idl) && e->key[idl] == '|') {
			unlink_ent(c, e);
			e->next = drop;
			drop = e;
		}
	}
	pthread_mutex_unlock(&c->mu);
	while (drop) {
		n = drop->next;
		ent_free(drop);
		drop = n;
	}
}
