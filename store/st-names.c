/* SPDX-License-Identifier: MIT */
/* store/st-names.c - names of the store's enums, and the string hash map. */
#include <stdlib.h>
#include <string.h>
#include "store/store-int.h"

static const char *const edge_kinds[] = { "flow", "order", "anti", "output" };
static const char *const unit_kinds[] = { "engine", "queue", "stream", "thread", "async",
					  "counter", "track" };
static const char *const dev_kinds[] = { "process", "gpu", "neuroncore", "accel", "other" };

const char *
st_edge_kind_name(int kind)
{
	return kind >= 0 && kind < ST_EDGE_NKINDS ? edge_kinds[kind] : NULL;
}

int
st_edge_kind_parse(const char *s)
{
	int i;

	for (i = 0; i < ST_EDGE_NKINDS; i++)
		if (!strcmp(s, edge_kinds[i]))
			return i;
	return -1;
}

const char *
st_unit_kind_name(int kind)
{
	return kind >= 0 && kind < (int)TC_ARRAY_SIZE(unit_kinds) ? unit_kinds[kind] : "track";
}

int
st_unit_kind_parse(const char *s)
{
	for (int i = 0; i < (int)TC_ARRAY_SIZE(unit_kinds); i++)
		if (!strcmp(s, unit_kinds[i]))
			return i;
	return -1;
}

const char *
st_device_kind_name(int kind)
{
	return kind >= 0 && kind < (int)TC_ARRAY_SIZE(dev_kinds) ? dev_kinds[kind] : "other";
}

uint32_t
st_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h ? h : 1;
}

int
st_map_get(struct st_map *m, const char *key, size_t n, uint32_t h)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct st_hent *e = &m->tab[i];

		if (!e->key)
			return 0;
		if (e->hash == h && !strncmp(e->key, key, n) && e->key[n] == '\0')
			return e->id;
	}
}

void
st_map_put(struct st_map *m, char *key, uint32_t h, int id)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct st_map big = { 0 };
		size_t j;

		big.cap = m->cap ? m->cap * 2 : 1024;
		big.tab = tc_xcalloc(big.cap, sizeof(*big.tab));
		for (j = 0; j < m->cap; j++)
			if (m->tab[j].key)
				st_map_put(&big, m->tab[j].key, m->tab[j].hash, m->tab[j].id);
		free(m->tab);
		*m = big;
	}
	for (i = h & (m->cap - 1); m->tab[i].key; i = (i + 1) & (m->cap - 1))
		;
	m->tab[i].key = key;
	m->tab[i].hash = h;
	m->tab[i].id = id;
	m->n++;
}

void
st_map_free(struct st_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->tab[i].key);
	free(m->tab);
	memset(m, 0, sizeof(*m));
}
