/* SPDX-License-Identifier: MIT */
/*
 * common/tc-rank.h - a set of the integers below n as a bitmap, with each
 * word's count of members before it: membership, and a member's place
 * among the members (its rank), in constant time.  A dense array of one
 * value per member then stands in for an array over all n at 1/8 + 1/16
 * byte per integer.  Header-only: the lookups sit in hot loops.
 *
 * Fill with tc_rank_set(), then tc_rank_index() once; tc_rank_of() and
 * tc_rank_has() read only and may run on several threads.
 */
#ifndef TC_RANK_H
#define TC_RANK_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "common/tc.h"

struct tc_rank {
	uint64_t *bits;		/* owned: bit i of word i / 64 is member i */
	uint32_t *before;	/* owned: members in the words before each word */
	size_t nwords;
	uint64_t count;		/* members, after tc_rank_index() */
};

/** tc_rank_init - @r becomes the empty set over 0 .. @n - 1. */
static inline void
tc_rank_init(struct tc_rank *r, uint64_t n)
{
	r->nwords = (size_t)(n / 64 + 1);
	r->bits = tc_xcalloc(r->nwords, sizeof(*r->bits));
	r->before = tc_xmalloc(r->nwords * sizeof(*r->before));
	r->count = 0;
}

/** tc_rank_set - add @i (below the n of tc_rank_init()) to @r. */
static inline void
tc_rank_set(struct tc_rank *r, uint64_t i)
{
	r->bits[i >> 6] |= (uint64_t)1 << (i & 63);
}

/** tc_rank_has - whether @i is in @r. */
static inline bool
tc_rank_has(const struct tc_rank *r, uint64_t i)
{
	return r->bits[i >> 6] >> (i & 63) & 1;
}

/**
 * tc_rank_index - count the members, after the last tc_rank_set().
 * Return: 0, or -EOVERFLOW when there are 2^32 or more (ranks are uint32).
 */
static inline int
tc_rank_index(struct tc_rank *r)
{
	uint64_t n = 0;

	for (size_t w = 0; w < r->nwords; w++) {
		if (n > UINT32_MAX)
			return -EOVERFLOW;
		r->before[w] = (uint32_t)n;
		n += (uint64_t)__builtin_popcountll(r->bits[w]);
	}
	r->count = n;
	return n > UINT32_MAX ? -EOVERFLOW : 0;
}

/** tc_rank_of - how many members of @r are below @i (for a member: its place, from 0). */
static inline uint32_t
tc_rank_of(const struct tc_rank *r, uint64_t i)
{
	uint64_t below = ((uint64_t)1 << (i & 63)) - 1;

	return r->before[i >> 6] + (uint32_t)__builtin_popcountll(r->bits[i >> 6] & below);
}

/**
 * tc_rank_next - the first member of @r at or after *@i into *@i, so that
 * `for (i = 0; tc_rank_next(r, &i); i++)` visits the members in order.
 * Return: false when there is none.
 */
static inline bool
tc_rank_next(const struct tc_rank *r, uint64_t *i)
{
	size_t w = (size_t)(*i >> 6);
	uint64_t b;

	if (w >= r->nwords)
		return false;
	b = r->bits[w] & (~(uint64_t)0 << (*i & 63));
	while (!b) {
		if (++w >= r->nwords)
			return false;
		b = r->bits[w];
	}
	*i = (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(b);
	return true;
}

/** tc_rank_free - free what @r owns; it is then empty and may be freed again. */
static inline void
tc_rank_free(struct tc_rank *r)
{
	free(r->bits);
	free(r->before);
	r->bits = NULL;
	r->before = NULL;
	r->nwords = 0;
	r->count = 0;
}

#endif
