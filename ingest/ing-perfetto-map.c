/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-map.c - small helpers for the Perfetto reader and
 * writer: a uint64 -> uint64 hash map and protobuf varints.
 */
#include <stdlib.h>
#include <string.h>
#include "common/tc-hash.h"
#include "ingest/perfetto-int.h"

void
pf_map_init(struct pf_map *m)
{
	memset(m, 0, sizeof(*m));
}

void
pf_map_free(struct pf_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	pf_map_init(m);
}

void
pf_map_clear(struct pf_map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->n = 0;
}


static size_t
pf_map_find(const struct pf_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)tc_mix64(key) & mask;

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

bool
pf_map_get(const struct pf_map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->n)
		return false;
	i = pf_map_find(m, key);
	if (!m->used[i])
		return false;
	*val = m->vals[i];
	return true;
}

static void
pf_map_grow(struct pf_map *m)
{
	struct pf_map old = *m;
	size_t i;

	m->cap = old.cap ? old.cap * 2 : 16;
	m->keys = tc_xmalloc(m->cap * sizeof(*m->keys));
	m->vals = tc_xmalloc(m->cap * sizeof(*m->vals));
	m->used = tc_xcalloc(m->cap, 1);
	m->n = 0;
	for (i = 0; i < old.cap; i++) {
		if (old.used[i]) {
			size_t j = pf_map_find(m, old.keys[i]);

			m->used[j] = 1;
			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
			m->n++;
		}
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

uint64_t *
pf_map_slot(struct pf_map *m, uint64_t key, bool *created)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3)
		pf_map_grow(m);
	i = pf_map_find(m, key);
	if (created)
		*created = !m->used[i];
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->n++;
	}
	return &m->vals[i];
}

bool
pf_map_each(const struct pf_map *m, size_t *i, uint64_t *key, uint64_t *val)
{
	for (; *i < m->cap; (*i)++) {
		if (m->used[*i]) {
			*key = m->keys[*i];
			*val = m->vals[*i];
			(*i)++;
			return true;
		}
	}
	return false;
}

size_t
pf_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	size_t i;

	for (i = 0; i < 10 && p + i < end; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}
