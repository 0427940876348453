/* SPDX-License-Identifier: MIT */
/* store/st-chunk.c - encode and decode packed event chunks (st-chunk.h). */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include "common/tc-hash.h"
#include "common/tc-varint.h"
#include "store/st-chunk.h"
#include "store/store.h"

void
st_chunk_enc_event(struct tc_buf *cols, const struct st_cev *e, int64_t prev_ts,
		   int64_t prev_seq)
{
	uint8_t *p0 = (uint8_t *)tc_buf_room(cols, 8 * TC_VARINT_MAX + 8), *p = p0;

	p += tc_uvarint_put(p, (uint64_t)(e->ts - prev_ts));
	p += tc_uvarint_put(p, (uint64_t)e->dur);
	p += tc_uvarint_put(p, ((uint64_t)e->flags << 2) | (e->kind & 3u));
	p += tc_uvarint_put(p, (uint64_t)e->depth);
	p += tc_uvarint_put(p, e->name);
	p += tc_uvarint_put(p, e->cat);
	p += tc_uvarint_put(p, tc_zigzag(e->seq - prev_seq));
	p += tc_uvarint_put(p, e->args_len);
	if (e->kind == ST_EV_COUNTER) {
		uint64_t bits;

		memcpy(&bits, &e->value, sizeof(bits));
		for (int i = 0; i < 8; i++)
			*p++ = (uint8_t)(bits >> (8 * i));
	}
	tc_buf_commit(cols, (size_t)(p - p0));
}

#define ST_EV_ROOM (8 * TC_VARINT_MAX)	/* bytes of one event's varints, at most */

int
st_chunk_decode(const void *cols, size_t size, int count, int64_t ts_first,
		size_t args_size, struct st_cev *out)
{
	const uint8_t *p = cols, *end = p + size;
	int64_t ts = ts_first, seq = 0;
	uint64_t off = 0;

	for (int i = 0; i < count; i++) {
		struct st_cev *e = &out[i];
		uint64_t d, dur, kf, depth, name, cat, zs, alen;

		/* all but a chunk's last few events: no bound checks per byte */
		if (end - p >= ST_EV_ROOM) {
			if (tc_uvarint_get_room(&p, &d) || tc_uvarint_get_room(&p, &dur) ||
			    tc_uvarint_get_room(&p, &kf) || tc_uvarint_get_room(&p, &depth) ||
			    tc_uvarint_get_room(&p, &name) || tc_uvarint_get_room(&p, &cat) ||
			    tc_uvarint_get_room(&p, &zs) || tc_uvarint_get_room(&p, &alen))
				return -EBADMSG;
		} else if (tc_uvarint_get(&p, end, &d) || tc_uvarint_get(&p, end, &dur) ||
			   tc_uvarint_get(&p, end, &kf) || tc_uvarint_get(&p, end, &depth) ||
			   tc_uvarint_get(&p, end, &name) || tc_uvarint_get(&p, end, &cat) ||
			   tc_uvarint_get(&p, end, &zs) || tc_uvarint_get(&p, end, &alen)) {
			return -EBADMSG;
		}
		if (__builtin_add_overflow(ts, (int64_t)d, &ts) || (int64_t)d < 0 ||
		    __builtin_add_overflow(seq, tc_unzigzag(zs), &seq))
			return -EBADMSG;	/* times go forward, within range */
		e->ts = ts;
		e->dur = (int64_t)dur;
		e->kind = (uint8_t)(kf & 3);
		e->flags = (uint8_t)(kf >> 2);
		e->depth = (int32_t)depth;
		e->name = (uint32_t)name;
		e->cat = (uint32_t)cat;
		e->seq = seq;
		e->value = 0;
		if (e->kind == ST_EV_COUNTER) {
			uint64_t bits = 0;

			if (end - p < 8)
				return -EBADMSG;
			for (int b = 0; b < 8; b++)
				bits |= (uint64_t)p[b] << (8 * b);
			p += 8;
			memcpy(&e->value, &bits, sizeof(bits));
		}
		if (alen > args_size - off)	/* off <= args_size holds */
			return -EBADMSG;
		e->args_off = (uint32_t)off;
		e->args_len = (uint32_t)alen;
		off += alen;
	}
	return p == end ? 0 : -EBADMSG;
}

/* Little-endian words at @p (a load or store each, not a byte loop). */
static inline void
le64_put(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
le32_put(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t
le64_get(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint32_t
le32_get(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

int
st_chunk_dir_row(sqlite3_stmt *s, struct st_chunk_dir *d)
{
	d->first = sqlite3_column_int64(s, 0);
	d->unit = sqlite3_column_int(s, 1);
	d->count = sqlite3_column_int(s, 2);
	d->ts_first = sqlite3_column_int64(s, 3);
	d->ts_last = sqlite3_column_int64(s, 4);
	d->end_max = sqlite3_column_int64(s, 5);
	d->min_depth = sqlite3_column_int(s, 6);
	d->max_depth = sqlite3_column_int(s, 7);
	if (sqlite3_column_bytes(s, 8) != ST_BLOOM_BYTES)
		return -EBADMSG;
	memcpy(d->bloom, sqlite3_column_blob(s, 8), ST_BLOOM_BYTES);
	return 0;
}

void
st_chunk_dir_put(uint8_t *p, const struct st_chunk_dir *d)
{
	le64_put(p, (uint64_t)d->first);
	le64_put(p + 8, (uint64_t)d->ts_first);
	le64_put(p + 16, (uint64_t)d->ts_last);
	le64_put(p + 24, (uint64_t)d->end_max);
	le32_put(p + 32, (uint32_t)d->unit);
	le32_put(p + 36, (uint32_t)d->count);
	le32_put(p + 40, (uint32_t)d->min_depth);
	le32_put(p + 44, (uint32_t)d->max_depth);
	memcpy(p + 48, d->bloom, ST_BLOOM_BYTES);
}

void
st_chunk_dir_get(const uint8_t *p, struct st_chunk_dir *d)
{
	d->first = (int64_t)le64_get(p);
	d->ts_first = (int64_t)le64_get(p + 8);
	d->ts_last = (int64_t)le64_get(p + 16);
	d->end_max = (int64_t)le64_get(p + 24);
	d->unit = (int32_t)le32_get(p + 32);
	d->count = (int32_t)le32_get(p + 36);
	d->min_depth = (int32_t)le32_get(p + 40);
	d->max_depth = (int32_t)le32_get(p + 44);
	memcpy(d->bloom, p + 48, ST_BLOOM_BYTES);
}

/* Three bits per name, from one mix of the id. */
static inline uint32_t
st_bloom_mix(uint32_t x)
{
	return (uint32_t)tc_mix64(x);
}

void
st_bloom_add(uint8_t *bloom, uint32_t name)
{
	uint32_t h = st_bloom_mix(name);

	for (int i = 0; i < 3; i++, h >>= 8)
		bloom[(h & 0xff) >> 3] |= (uint8_t)(1u << (h & 7));
}

bool
st_bloom_has(const uint8_t *bloom, uint32_t name)
{
	uint32_t h = st_bloom_mix(name);

	for (int i = 0; i < 3; i++, h >>= 8)
		if (!(bloom[(h & 0xff) >> 3] & (1u << (h & 7))))
			return false;
	return true;
}
