/* SPDX-License-Identifier: MIT */
/*
 * common/tc-hash.h - an integer mixer for hash tables and filters keyed by
 * ids (MurmurHash3's 64-bit finaliser: every input bit affects every output
 * bit).  Header-only.
 */
#ifndef TC_HASH_H
#define TC_HASH_H

#include <stdint.h>

/** tc_mix64 - a well-mixed 64-bit hash of @k. */
static inline uint64_t
tc_mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

#endif
