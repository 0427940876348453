/* SPDX-License-Identifier: MIT */
/* store/st-chunk.c - encode and decode packed event chunks (st-chunk.h). */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "common/tc-hash.h"
#include "common/tc-varint.h"
#include "store/st-chunk.h"
#include "store/store.h"

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

/* The byte that opens an event in a cols blob: which fields follow. */
enum {
	ST_C_DUR = 1, ST_C_KF = 2, ST_C_DEPTH = 4, ST_C_NAME = 8, ST_C_CAT = 16,
	ST_C_ARGS = 32, ST_C_VAL = 64, ST_C_VINT = 128,
};

/* A counter's value as the event before it in a chunk leaves it. */
static inline double
st_chunk_prev_value(const struct st_cev *prev)
{
	return prev && prev->kind == ST_EV_COUNTER ? prev->value : 0;
}

void
st_chunk_enc_event(struct tc_buf *cols, const struct st_cev *e, const struct st_cev *prev)
{
	static const struct st_cev zero;
	uint8_t *p0 = (uint8_t *)tc_buf_room(cols, 1 + 8 * TC_VARINT_MAX + 8), *p = p0 + 1;
	const struct st_cev *q = prev ? prev : &zero;
	unsigned kf = ((unsigned)e->flags << 2) | (e->kind & 3u);
	unsigned qkf = ((unsigned)q->flags << 2) | (q->kind & 3u);
	uint8_t h = 0;

	p += tc_uvarint_put(p, (uint64_t)(e->ts - (prev ? prev->ts : e->ts)));
	p += tc_uvarint_put(p, tc_zigzag(e->seq - q->seq));
	if (e->dur != q->dur) {
		h |= ST_C_DUR;
		p += tc_uvarint_put(p, (uint64_t)e->dur);
	}
	if (kf != qkf) {
		h |= ST_C_KF;
		p += tc_uvarint_put(p, kf);
	}
	if (e->depth != q->depth) {
		h |= ST_C_DEPTH;
		p += tc_uvarint_put(p, (uint64_t)(uint32_t)e->depth);
	}
	if (e->name != q->name) {
		h |= ST_C_NAME;
		p += tc_uvarint_put(p, e->name);
	}
	if (e->cat != q->cat) {
		h |= ST_C_CAT;
		p += tc_uvarint_put(p, e->cat);
	}
	if (e->args_len) {
		h |= ST_C_ARGS;
		p += tc_uvarint_put(p, e->args_len);
	}
	if (e->kind == ST_EV_COUNTER) {
		double pv = st_chunk_prev_value(prev);
		uint64_t bits, pbits;

		memcpy(&bits, &e->value, sizeof(bits));
		memcpy(&pbits, &pv, sizeof(pbits));
		if (bits != pbits) {
			h |= ST_C_VAL;
			if (tc_whole(e->value) && tc_whole(pv)) {
				h |= ST_C_VINT;
				p += tc_uvarint_put(p, tc_zigzag((int64_t)e->value - (int64_t)pv));
			} else {
				le64_put(p, bits);
				p += 8;
			}
		}
	}
	*p0 = h;
	tc_buf_commit(cols, (size_t)(p - p0));
}

#define ST_EV_ROOM (1 + 8 * TC_VARINT_MAX + 8)	/* bytes of one event, at most */

/* The next varint of the event at *@p: no bound checks when @room. */
static inline int
st_chunk_get(const uint8_t **p, const uint8_t *end, bool room, uint64_t *v)
{
	return room ? tc_uvarint_get_room(p, v) : tc_uvarint_get(p, end, v);
}

int
st_chunk_decode(const void *cols, size_t size, int count, int64_t ts_first,
		size_t args_size, struct st_cev *out)
{
	const uint8_t *p = cols, *end = p + size;
	/*
	 * The event before, all zero at first, kept in locals: reading back
	 * the struct just written field by field stalled on store forwarding
	 * (a quarter of this function's time on the server's chains).
	 */
	int64_t ts = ts_first, seq = 0, dur = 0;
	double value = 0;
	uint32_t name = 0, cat = 0;
	int32_t depth = 0;
	uint8_t kind = 0, flags = 0;
	uint64_t off = 0;

	for (int i = 0; i < count; i++) {
		struct st_cev *e = &out[i];
		/* all but a chunk's last few events: no bound checks per byte */
		bool room = end - p >= ST_EV_ROOM;
		uint64_t d, zs, v, alen = 0;
		unsigned h;

		if (p == end)
			return -EBADMSG;
		h = *p++;
		if (st_chunk_get(&p, end, room, &d) || st_chunk_get(&p, end, room, &zs))
			return -EBADMSG;
		if (__builtin_add_overflow(ts, (int64_t)d, &ts) || (int64_t)d < 0 ||
		    __builtin_add_overflow(seq, tc_unzigzag(zs), &seq))
			return -EBADMSG;	/* times go forward, within range */
		if (h & ST_C_DUR) {
			if (st_chunk_get(&p, end, room, &v))
				return -EBADMSG;
			dur = (int64_t)v;
		}
		if (h & ST_C_KF) {
			if (st_chunk_get(&p, end, room, &v))
				return -EBADMSG;
			kind = (uint8_t)(v & 3);
			flags = (uint8_t)(v >> 2);
		}
		if (h & ST_C_DEPTH) {
			if (st_chunk_get(&p, end, room, &v))
				return -EBADMSG;
			depth = (int32_t)v;
		}
		if (h & ST_C_NAME) {
			if (st_chunk_get(&p, end, room, &v))
				return -EBADMSG;
			name = (uint32_t)v;
		}
		if (h & ST_C_CAT) {
			if (st_chunk_get(&p, end, room, &v))
				return -EBADMSG;
			cat = (uint32_t)v;
		}
		if (h & ST_C_ARGS) {
			if (st_chunk_get(&p, end, room, &alen))
				return -EBADMSG;
			if (alen > args_size - off)	/* off <= args_size holds */
				return -EBADMSG;
		}
		if (kind != ST_EV_COUNTER) {
			if (h & (ST_C_VAL | ST_C_VINT))
				return -EBADMSG;	/* a value on an event that has none */
			value = 0;
		} else if ((h & (ST_C_VAL | ST_C_VINT)) == (ST_C_VAL | ST_C_VINT)) {
			int64_t w;

			if (st_chunk_get(&p, end, room, &v) || !tc_whole(value) ||
			    __builtin_add_overflow((int64_t)value, tc_unzigzag(v), &w))
				return -EBADMSG;
			value = (double)w;
		} else if (h & ST_C_VAL) {
			uint64_t bits;

			if (end - p < 8)
				return -EBADMSG;
			bits = le64_get(p);
			p += 8;
			memcpy(&value, &bits, sizeof(bits));
		}
		e->ts = ts;
		e->dur = dur;
		e->seq = seq;
		e->value = value;
		e->name = name;
		e->cat = cat;
		e->args_off = (uint32_t)off;
		e->args_len = (uint32_t)alen;
		e->depth = depth;
		e->kind = kind;
		e->flags = flags;
		off += alen;
	}
	return p == end ? 0 : -EBADMSG;
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
