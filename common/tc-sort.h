/* SPDX-License-Identifier: MIT */
/*
 * common/tc-sort.h - a typed merge sort, written out per element type by a
 * macro so that the comparison and the moves inline.  qsort()'s indirect
 * call and memcpy() per element cost more than the comparisons themselves,
 * and inputs that come nearly in order (file order, usually) skip most
 * merges.
 */
#ifndef COMMON_TC_SORT_H
#define COMMON_TC_SORT_H

#include <stddef.h>
#include <string.h>
#include "common/tc.h"

/*
 * TC_MSORT_DEFINE(NAME, TYPE, LESS) defines
 *	static void NAME(TYPE *a, TYPE *tmp, size_t n)
 * which sorts @n elements of @a by LESS(const TYPE *, const TYPE *), stably,
 * using @tmp (room for n / 2 + 1 elements) as scratch.  Top-down; a merge
 * is skipped when its halves are already in order.
 */
#define TC_MSORT_DEFINE(NAME, TYPE, LESS) \
static void \
NAME(TYPE *a, TYPE *tmp, size_t n) \
{ \
	size_t h, i, j, k; \
 \
	if (n <= 16) { \
		for (i = 1; i < n; i++) { \
			TYPE x = a[i]; \
 \
			for (j = i; j > 0 && LESS(&x, &a[j - 1]); j--) \
				a[j] = a[j - 1]; \
			a[j] = x; \
		} \
		return; \
	} \
	h = n / 2; \
	NAME(a, tmp, h); \
	NAME(a + h, tmp, n - h); \
	if (!LESS(&a[h], &a[h - 1])) \
		return; \
	memcpy(tmp, a, h * sizeof(*a)); \
	/* the left half from tmp, the right one in place: k never passes j */ \
	for (i = 0, j = h, k = 0; i < h && j < n;) \
		a[k++] = LESS(&a[j], &tmp[i]) ? a[j++] : tmp[i++]; \
	while (i < h) \
		a[k++] = tmp[i++]; \
}

/*
 * TC_BUCKET_MSORT_DEFINE(NAME, TYPE, BUCKET, LESS) defines
 *	static TYPE *NAME(TYPE *a, size_t n, size_t nb, size_t arg)
 * which sorts @n elements of @a stably by (BUCKET(x, arg), LESS) into a new
 * array it returns (tc_xmalloc()'d; @a is freed): a counting pass into @nb
 * buckets (BUCKET gives 0 .. nb - 1; @arg is passed through), each element
 * moved once, then each bucket of more than one element merge-sorted by
 * LESS (NAME##_bucket, TC_MSORT_DEFINE).  For keys with a small dense
 * leading part: the buckets stay short and mostly in order.
 */
#define TC_BUCKET_MSORT_DEFINE(NAME, TYPE, BUCKET, LESS) \
TC_MSORT_DEFINE(NAME##_bucket, TYPE, LESS) \
static TYPE * \
NAME(TYPE *a, size_t n, size_t nb, size_t arg) \
{ \
	TYPE *out = tc_xmalloc((n ? n : 1) * sizeof(*out)), *tmp; \
	size_t *first = tc_xcalloc(nb + 1, sizeof(*first)), most = 0, i, b; \
 \
	(void)arg; \
	for (i = 0; i < n; i++) \
		first[BUCKET(&a[i], arg) + 1]++; \
	for (b = 0; b < nb; b++) { \
		most = most > first[b + 1] ? most : first[b + 1]; \
		first[b + 1] += first[b]; \
	} \
	for (i = 0; i < n; i++) \
		out[first[BUCKET(&a[i], arg)]++] = a[i]; \
	/* first[b] is now where bucket b + 1 starts */ \
	tmp = tc_xmalloc((most / 2 + 1) * sizeof(*tmp)); \
	for (b = 0; b < nb; b++) { \
		size_t lo = b ? first[b - 1] : 0; \
 \
		if (first[b] - lo > 1) \
			NAME##_bucket(out + lo, tmp, first[b] - lo); \
	} \
	free(tmp); \
	free(first); \
	free(a); \
	return out; \
}

/*
 * TC_LOWER_BOUND(n, I, BEFORE) - binary search: the first index in [0, @n)
 * for which the expression @BEFORE, written in terms of the index variable
 * named @I, is false (@n when none), @BEFORE being true for a prefix of the
 * indices: "element I sorts before the key", e.g.
 *	i = TC_LOWER_BOUND(n, m, arr[m].key < key);
 */
#define TC_LOWER_BOUND(n, I, BEFORE) __extension__ ({ \
	size_t lo_ = 0, hi_ = (n); \
 \
	while (lo_ < hi_) { \
		size_t I = lo_ + (hi_ - lo_) / 2; \
 \
		if (BEFORE) \
			lo_ = I + 1; \
		else \
			hi_ = I; \
	} \
	lo_; \
})

#endif /* COMMON_TC_SORT_H */
