/* SPDX-License-Identifier: MIT */
/* common/tc-arena.c - bump allocator for per-request and per-batch memory. */
#include <stdlib.h>
#include <string.h>
#include "common/tc.h"

struct tc_arena_chunk {
	struct tc_arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

void
tc_arena_init(struct tc_arena *a, size_t chunk_size)
{
	a->head = NULL;
	a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
}

void *
tc_arena_alloc(struct tc_arena *a, size_t n)
{
	struct tc_arena_chunk *c = a->head;
	size_t align = sizeof(max_align_t);
	void *p;

	n = (n + align - 1) & ~(align - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > a->chunk_size ? n : a->chunk_size;

		c = tc_xmalloc(sizeof(*c) + size);
		c->used = 0;
		c->size = size;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

char *
tc_arena_strndup(struct tc_arena *a, const char *s, size_t n)
{
	char *p = tc_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
tc_arena_reset(struct tc_arena *a)
{
	struct tc_arena_chunk *c = a->head;

	/* keep the newest chunk, free the rest */
	if (!c)
		return;
	while (c->next) {
		struct tc_arena_chunk *n = c->next;

		c->next = n->next;
		free(n);
	}
	c->used = 0;
}

void
tc_arena_free(struct tc_arena *a)
{
	while (a->head) {
		struct tc_arena_chunk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
}
