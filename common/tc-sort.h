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

#endif /* COMMON_TC_SORT_H */
