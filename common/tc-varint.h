/* SPDX-License-Identifier: MIT */
/*
 * common/tc-varint.h - LEB128 varints (protobuf's wire encoding and the
 * store's event chunks): 7 bits per byte, low group first, high bit set on
 * every byte but the last.  Header-only: the decoders sit in hot loops.
 */
#ifndef TC_VARINT_H
#define TC_VARINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define TC_VARINT_MAX 10	/* bytes of the longest uint64 */

/** tc_uvarint_put - encode @v at @p (room for TC_VARINT_MAX); return bytes written. */
static inline size_t
tc_uvarint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/**
 * tc_uvarint_get - decode one varint from [*@p, @end) into @v and advance
 * *@p.  Return: 0, or -1 when the input ends inside it or it is longer than
 * TC_VARINT_MAX bytes (*@p is then unchanged).
 */
static inline int
tc_uvarint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;
	unsigned shift = 0;

	if (q < end && *q < 0x80) {	/* the common one-byte case */
		*v = *q;
		*p = q + 1;
		return 0;
	}
	while (q < end && shift < 64) {
		uint8_t b = *q++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*v = r;
			*p = q;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/**
 * tc_uvarint_get_room - tc_uvarint_get() where TC_VARINT_MAX bytes are known
 * to be readable at *@p: no bound to check at each byte (a decoder of many
 * varints checks once for a run of them).  Return: 0, or -1 when it is
 * longer than TC_VARINT_MAX bytes (*@p is then unchanged).
 */
static inline int
tc_uvarint_get_room(const uint8_t **p, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r;

	if (*q < 0x80) {
		*v = *q;
		*p = q + 1;
		return 0;
	}
	if (q[1] < 0x80) {	/* two bytes: most of the rest */
		*v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
		*p = q + 2;
		return 0;
	}
	r = *q++ & 0x7f;
	for (unsigned shift = 7; shift < 64; shift += 7) {
		uint8_t b = *q++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*v = r;
			*p = q;
			return 0;
		}
	}
	return -1;
}

/** tc_zigzag - signed to unsigned, small magnitudes stay small. */
static inline uint64_t
tc_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/** tc_unzigzag - inverse of tc_zigzag. */
static inline int64_t
tc_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/**
 * tc_whole - is @v a whole number of at most 2^53 in magnitude, and not
 * -0.0?  The difference of two such is exact as an int64_t, and adding it
 * back gives the same double bit for bit: a counter's samples are coded
 * that way (svarint of the difference) instead of 8 bytes each.
 */
static inline bool
tc_whole(double v)
{
	return v >= -9007199254740992.0 && v <= 9007199254740992.0 && v == (double)(int64_t)v &&
	       (v != 0 || !__builtin_signbit(v));
}

#endif
