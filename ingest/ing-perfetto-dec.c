/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-dec.c - a hand-written protobuf wire-format decoder
 * for the packets that make up nearly all of a trace: TracePacket's scalar
 * fields, TrackEvent (with its LegacyEvent and DebugAnnotations) and
 * InternedData.  It fills the same structs that protobuf-c's
 * perfetto__protos__trace_packet__unpack() fills, so the reader handles
 * both alike, but reads each field once, allocates from the caller's bump
 * arena only what the structs point to (strings, arrays, submessages) and
 * leaves nothing to free per packet: protobuf-c's descriptor-driven unpack
 * scans every packet twice, copies every unknown field (Chrome's typed
 * TrackEvent extensions) and walks it all again to free it.
 *
 * What it does not decode it hands back as PF_DEC_SLOW and the caller
 * unpacks the packet with protobuf-c: the rare packet kinds (clock
 * snapshots, process/thread/track descriptors, trace_packet_defaults) and
 * any encoding on which protobuf-c's answer is the reference (a known field
 * with an unexpected wire type, a submessage field given twice, which
 * protobuf-c merges, out-of-range field numbers, lengths near 2^32).  On
 * everything it accepts it gives protobuf-c's values, and it calls
 * PF_DEC_BAD only what protobuf-c rejects as well: truncated varints and
 * fixed fields, varints over 10 bytes, tags over 5 bytes, lengths past the
 * end of the enclosing message, packed fixed64/double runs that are not a
 * multiple of 8 bytes, group and reserved wire types (3, 4, 6, 7).
 * tests/unit/test-perfetto.c checks this against protobuf-c packet by
 * packet, on the traces and on mutated packets.
 */
#include <stdint.h>
#include <string.h>
#include "common/tc-varint.h"
#include "ingest/perfetto-int.h"

typedef Perfetto__Protos__TrackEvent PfEvent;
typedef Perfetto__Protos__TrackEvent__LegacyEvent PfLegacy;
typedef Perfetto__Protos__DebugAnnotation PfAnnot;
typedef Perfetto__Protos__InternedData PfInterned;

/* Submessage nesting the fast path follows (debug annotation dicts and
 * arrays); deeper input goes to protobuf-c, which has no limit. */
#define PF_DEC_MAX_NEST 64
/* Largest field number; larger ones are left to protobuf-c. */
#define PF_DEC_MAX_FIELD ((1u << 29) - 1)

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct pf_dec {
	struct tc_arena *a;
	int nest;
};

/*
 * libc's memcpy, called through a pointer the compiler cannot see through:
 * GCC turns a copy of a known size (or of a mostly-zero constant) into
 * "rep movs" / "rep stos", which take tens of cycles to start; libc copies
 * a few hundred bytes with vector moves.  A third of the decoder's time on
 * Chrome's small packets went to starting those.
 */
static void *(*volatile dec_copy)(void *, const void *, size_t) = memcpy;

/* The generated __init(): a copy of the message's INIT value. */
#define DEC_INIT(m, INITV) do { \
	static const __typeof__(*(m)) init_ = INITV; \
	dec_copy((m), &init_, sizeof(*(m))); \
} while (0)

/* ---- wire primitives ---- */

static inline int
dec_tag(const uint8_t **p, const uint8_t *end, uint32_t *field, int *wt)
{
	const uint8_t *q = *p;
	uint64_t v;

	if (q < end && q[0] >= 0x08 && q[0] < 0x80) {	/* fields 1-15 */
		*field = q[0] >> 3;
		*wt = q[0] & 7;
		*p = q + 1;
		return PF_DEC_OK;
	}
	if (end - q >= 2 && q[0] >= 0x80 && q[1] && q[1] < 0x80) {	/* fields 16-2047 */
		v = (q[0] & 0x7fu) | ((uint64_t)q[1] << 7);
		*field = (uint32_t)(v >> 3);
		*wt = (int)(v & 7);
		*p = q + 2;
		return PF_DEC_OK;
	}
	if (tc_uvarint_get(p, end, &v) || *p - q > 5)	/* protobuf-c: at most 5 bytes */
		return PF_DEC_BAD;
	if ((v >> 3) == 0 || (v >> 3) > PF_DEC_MAX_FIELD)
		return PF_DEC_SLOW;
	*field = (uint32_t)(v >> 3);
	*wt = (int)(v & 7);
	return PF_DEC_OK;
}

/* The payload of a length-delimited field: [*@data, *@data + *@len). */
static int
dec_len(const uint8_t **p, const uint8_t *end, const uint8_t **data, size_t *len)
{
	const uint8_t *q = *p;
	uint64_t v;

	if (tc_uvarint_get(p, end, &v) || *p - q > 5)	/* protobuf-c: at most 5 bytes */
		return PF_DEC_BAD;
	if (v > UINT32_MAX - 16)	/* protobuf-c's 32-bit length sums: its call */
		return PF_DEC_SLOW;
	if (v > (uint64_t)(end - *p))
		return PF_DEC_BAD;
	*data = *p;
	*len = (size_t)v;
	*p += v;
	return PF_DEC_OK;
}

static int
dec_skip(const uint8_t **p, const uint8_t *end, int wt)
{
	const uint8_t *data;
	uint64_t v;
	size_t len;

	switch (wt) {
	case WT_VARINT:
		return tc_uvarint_get(p, end, &v) ? PF_DEC_BAD : PF_DEC_OK;
	case WT_I64:
		if (end - *p < 8)
			return PF_DEC_BAD;
		*p += 8;
		return PF_DEC_OK;
	case WT_I32:
		if (end - *p < 4)
			return PF_DEC_BAD;
		*p += 4;
		return PF_DEC_OK;
	case WT_LEN:
		return dec_len(p, end, &data, &len);
	}
	return PF_DEC_BAD;	/* groups (3, 4) and 6, 7: protobuf-c rejects them too */
}

static int
dec_varint(const uint8_t **p, const uint8_t *end, int wt, uint64_t *v)
{
	if (wt != WT_VARINT)
		return PF_DEC_SLOW;
	return tc_uvarint_get(p, end, v) ? PF_DEC_BAD : PF_DEC_OK;
}

static uint64_t
dec_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static int
dec_fixed64(const uint8_t **p, const uint8_t *end, int wt, uint64_t *v)
{
	if (wt != WT_I64)
		return PF_DEC_SLOW;
	if (end - *p < 8)
		return PF_DEC_BAD;
	*v = dec_le64(*p);
	*p += 8;
	return PF_DEC_OK;
}

/* optional uint64 / int64 / uint32 / int32 / bool / double */

static int
get_u64(const uint8_t **p, const uint8_t *end, int wt, uint64_t *v, protobuf_c_boolean *has)
{
	int r = dec_varint(p, end, wt, v);

	if (!r)
		*has = 1;
	return r;
}

static int
get_i64(const uint8_t **p, const uint8_t *end, int wt, int64_t *v, protobuf_c_boolean *has)
{
	uint64_t u;
	int r = dec_varint(p, end, wt, &u);

	if (!r) {
		*v = (int64_t)u;
		*has = 1;
	}
	return r;
}

static int
get_u32(const uint8_t **p, const uint8_t *end, int wt, uint32_t *v, protobuf_c_boolean *has)
{
	uint64_t u;
	int r = dec_varint(p, end, wt, &u);

	if (!r) {
		*v = (uint32_t)u;	/* the low 32 bits, as protobuf-c */
		*has = 1;
	}
	return r;
}

static int
get_i32(const uint8_t **p, const uint8_t *end, int wt, int32_t *v, protobuf_c_boolean *has)
{
	uint64_t u;
	int r = dec_varint(p, end, wt, &u);

	if (!r) {
		*v = (int32_t)(uint32_t)u;	/* negative int32s come as 10-byte varints */
		*has = 1;
	}
	return r;
}

static int
get_bool(const uint8_t **p, const uint8_t *end, int wt, protobuf_c_boolean *v,
	 protobuf_c_boolean *has)
{
	const uint8_t *q = *p;
	uint64_t u;
	int r = dec_varint(p, end, wt, &u);

	if (r)
		return r;
	/* protobuf-c: true when any of the varint's 7-bit groups is non-zero
	 * (also the ones past bit 63) */
	*v = 0;
	for (; q < *p; q++)
		if (*q & 0x7f)
			*v = 1;
	*has = 1;
	return PF_DEC_OK;
}

static int
get_double(const uint8_t **p, const uint8_t *end, int wt, double *v, protobuf_c_boolean *has)
{
	uint64_t u;
	int r = dec_fixed64(p, end, wt, &u);

	if (!r) {
		memcpy(v, &u, sizeof(*v));
		*has = 1;
	}
	return r;
}

/* optional string: a NUL-terminated copy in the arena (later ones win) */
static int
get_str(struct pf_dec *d, const uint8_t **p, const uint8_t *end, int wt, char **s)
{
	const uint8_t *data;
	size_t len;
	int r;

	if (wt != WT_LEN)
		return PF_DEC_SLOW;
	if ((r = dec_len(p, end, &data, &len)))
		return r;
	*s = tc_arena_strndup(d->a, (const char *)data, len);
	return PF_DEC_OK;
}

/* optional bytes: points into the packet (which outlives the decoded one) */
static int
get_bytes(const uint8_t **p, const uint8_t *end, int wt, ProtobufCBinaryData *b,
	  protobuf_c_boolean *has)
{
	const uint8_t *data;
	size_t len;
	int r;

	if (wt != WT_LEN)
		return PF_DEC_SLOW;
	if ((r = dec_len(p, end, &data, &len)))
		return r;
	b->data = len ? (uint8_t *)(uintptr_t)data : NULL;
	b->len = len;
	*has = 1;
	return PF_DEC_OK;
}

/* ---- repeated fields: arrays in the arena, capacity implied by the count ---- */

static size_t
dec_cap(size_t n)
{
	size_t c = 4;

	if (!n)
		return 0;
	while (c < n)
		c <<= 1;
	return c;
}

/* The array *@arr of @n elements of @size bytes, with room for @k more. */
static void *
dec_room(struct pf_dec *d, void *arr, size_t n, size_t k, size_t size)
{
	size_t want = dec_cap(n + k);
	void *na;

	if (want <= dec_cap(n))
		return arr;
	na = tc_arena_alloc(d->a, want * size);
	if (n)
		memcpy(na, arr, n * size);
	return na;
}

/*
 * The repeated-field helpers take the array and return it (grown as
 * needed), count in *@n, status in *@r; on error the array is unchanged.
 */

/* repeated uint64 / int64 (varint elements), packed or one at a time */
static void *
add_varints(struct pf_dec *d, const uint8_t **p, const uint8_t *end, int wt, void *arr,
	    size_t *n, int *r)
{
	const uint8_t *data, *q, *qend;
	size_t len;
	uint64_t v;

	if (wt == WT_VARINT) {
		if (tc_uvarint_get(p, end, &v)) {
			*r = PF_DEC_BAD;
			return arr;
		}
		arr = dec_room(d, arr, *n, 1, sizeof(v));
		memcpy((uint8_t *)arr + (*n)++ * sizeof(v), &v, sizeof(v));
		*r = PF_DEC_OK;
		return arr;
	}
	if (wt != WT_LEN) {
		*r = PF_DEC_SLOW;
		return arr;
	}
	if ((*r = dec_len(p, end, &data, &len)))
		return arr;
	for (q = data, qend = data + len; q < qend;) {
		if (tc_uvarint_get(&q, qend, &v)) {
			*r = PF_DEC_BAD;
			return arr;
		}
		arr = dec_room(d, arr, *n, 1, sizeof(v));
		memcpy((uint8_t *)arr + (*n)++ * sizeof(v), &v, sizeof(v));
	}
	return arr;
}

/* repeated fixed64 / double (8-byte elements), packed or one at a time */
static void *
add_fixed64s(struct pf_dec *d, const uint8_t **p, const uint8_t *end, int wt, void *arr,
	     size_t *n, int *r)
{
	const uint8_t *data;
	size_t len, i, k;
	uint64_t v;

	if (wt == WT_I64) {
		if ((*r = dec_fixed64(p, end, wt, &v)))
			return arr;
		arr = dec_room(d, arr, *n, 1, sizeof(v));
		memcpy((uint8_t *)arr + (*n)++ * sizeof(v), &v, sizeof(v));
		return arr;
	}
	if (wt != WT_LEN) {
		*r = PF_DEC_SLOW;
		return arr;
	}
	if ((*r = dec_len(p, end, &data, &len)))
		return arr;
	if (len % 8) {
		*r = PF_DEC_BAD;
		return arr;
	}
	k = len / 8;
	if (!k)
		return arr;
	arr = dec_room(d, arr, *n, k, sizeof(v));
	for (i = 0; i < k; i++) {
		v = dec_le64(data + 8 * i);
		memcpy((uint8_t *)arr + (*n + i) * sizeof(v), &v, sizeof(v));
	}
	*n += k;
	return arr;
}

/* repeated string */
static char **
add_str(struct pf_dec *d, const uint8_t **p, const uint8_t *end, int wt, char **arr, size_t *n,
	int *r)
{
	char *s;

	if ((*r = get_str(d, p, end, wt, &s)))
		return arr;
	arr = dec_room(d, arr, *n, 1, sizeof(*arr));
	arr[(*n)++] = s;
	return arr;
}

/* The payload of a submessage field. */
static int
dec_msg(const uint8_t **p, const uint8_t *end, int wt, const uint8_t **data, size_t *len)
{
	if (wt != WT_LEN)
		return PF_DEC_SLOW;
	return dec_len(p, end, data, len);
}

/* ---- messages ---- */

static int
dec_annot(struct pf_dec *d, const uint8_t *p, const uint8_t *end, PfAnnot *a);

/* repeated DebugAnnotation */
static PfAnnot **
add_annot(struct pf_dec *d, const uint8_t **p, const uint8_t *end, int wt, PfAnnot **arr,
	  size_t *n, int *r)
{
	const uint8_t *data;
	size_t len;
	PfAnnot *a;

	if ((*r = dec_msg(p, end, wt, &data, &len)))
		return arr;
	if (d->nest >= PF_DEC_MAX_NEST) {
		*r = PF_DEC_SLOW;
		return arr;
	}
	a = tc_arena_alloc(d->a, sizeof(*a));
	d->nest++;
	*r = dec_annot(d, data, data + len, a);
	d->nest--;
	if (*r)
		return arr;
	arr = dec_room(d, arr, *n, 1, sizeof(*arr));
	arr[(*n)++] = a;
	return arr;
}

static int
dec_annot(struct pf_dec *d, const uint8_t *p, const uint8_t *end, PfAnnot *a)
{
	DEC_INIT(a, PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT);
	while (p < end) {
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		switch (f) {
		case 1:
			r = get_u64(&p, end, wt, &a->name_iid, &a->has_name_iid);
			break;
		case 2:
			r = get_bool(&p, end, wt, &a->bool_value, &a->has_bool_value);
			break;
		case 3:
			r = get_u64(&p, end, wt, &a->uint_value, &a->has_uint_value);
			break;
		case 4:
			r = get_i64(&p, end, wt, &a->int_value, &a->has_int_value);
			break;
		case 5:
			r = get_double(&p, end, wt, &a->double_value, &a->has_double_value);
			break;
		case 6:
			r = get_str(d, &p, end, wt, &a->string_value);
			break;
		case 7:
			r = get_u64(&p, end, wt, &a->pointer_value, &a->has_pointer_value);
			break;
		case 9:
			r = get_str(d, &p, end, wt, &a->legacy_json_value);
			break;
		case 10:
			r = get_str(d, &p, end, wt, &a->name);
			break;
		case 11:
			a->dict_entries = add_annot(d, &p, end, wt, a->dict_entries, &a->n_dict_entries,
						     &r);
			break;
		case 12:
			a->array_values = add_annot(d, &p, end, wt, a->array_values, &a->n_array_values,
						     &r);
			break;
		case 17:
			r = get_u64(&p, end, wt, &a->string_value_iid, &a->has_string_value_iid);
			break;
		default:
			r = dec_skip(&p, end, wt);
			break;
		}
		if (r)
			return r;
	}
	return PF_DEC_OK;
}

static int
dec_legacy(struct pf_dec *d, const uint8_t *p, const uint8_t *end, PfLegacy *le)
{
	DEC_INIT(le, PERFETTO__PROTOS__TRACK_EVENT__LEGACY_EVENT__INIT);
	while (p < end) {
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		switch (f) {
		case 1:
			r = get_u64(&p, end, wt, &le->name_iid, &le->has_name_iid);
			break;
		case 2:
			r = get_i32(&p, end, wt, &le->phase, &le->has_phase);
			break;
		case 3:
			r = get_i64(&p, end, wt, &le->duration_us, &le->has_duration_us);
			break;
		case 4:
			r = get_i64(&p, end, wt, &le->thread_duration_us, &le->has_thread_duration_us);
			break;
		case 6:
			r = get_u64(&p, end, wt, &le->unscoped_id, &le->has_unscoped_id);
			break;
		case 7:
			r = get_str(d, &p, end, wt, &le->id_scope);
			break;
		case 8:
			r = get_u64(&p, end, wt, &le->bind_id, &le->has_bind_id);
			break;
		case 9:
			r = get_bool(&p, end, wt, &le->use_async_tts, &le->has_use_async_tts);
			break;
		case 10:
			r = get_u64(&p, end, wt, &le->local_id, &le->has_local_id);
			break;
		case 11:
			r = get_u64(&p, end, wt, &le->global_id, &le->has_global_id);
			break;
		case 12:
			r = get_bool(&p, end, wt, &le->bind_to_enclosing, &le->has_bind_to_enclosing);
			break;
		case 13:
			r = get_i32(&p, end, wt, &le->flow_direction, &le->has_flow_direction);
			break;
		case 14:
			r = get_i32(&p, end, wt, &le->instant_event_scope,
				    &le->has_instant_event_scope);
			break;
		case 18:
			r = get_i32(&p, end, wt, &le->pid_override, &le->has_pid_override);
			break;
		case 19:
			r = get_i32(&p, end, wt, &le->tid_override, &le->has_tid_override);
			break;
		default:
			r = dec_skip(&p, end, wt);
			break;
		}
		if (r)
			return r;
	}
	return PF_DEC_OK;
}

static int
dec_track_event(struct pf_dec *d, const uint8_t *p, const uint8_t *end, PfEvent *te)
{
	DEC_INIT(te, PERFETTO__PROTOS__TRACK_EVENT__INIT);
	while (p < end) {
		const uint8_t *data;
		size_t len;
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		switch (f) {
		case 1:
			r = get_i64(&p, end, wt, &te->timestamp_delta_us, &te->has_timestamp_delta_us);
			break;
		case 2:
			r = get_i64(&p, end, wt, &te->thread_time_delta_us,
				    &te->has_thread_time_delta_us);
			break;
		case 3:
			te->category_iids = add_varints(d, &p, end, wt, te->category_iids,
							 &te->n_category_iids, &r);
			break;
		case 4:
			te->debug_annotations = add_annot(d, &p, end, wt, te->debug_annotations,
							  &te->n_debug_annotations, &r);
			break;
		case 6:
			if (te->legacy_event)	/* given twice: protobuf-c merges them */
				return PF_DEC_SLOW;
			if ((r = dec_msg(&p, end, wt, &data, &len)))
				return r;
			te->legacy_event = tc_arena_alloc(d->a, sizeof(*te->legacy_event));
			r = dec_legacy(d, data, data + len, te->legacy_event);
			break;
		case 8:
			r = get_i64(&p, end, wt, &te->thread_instruction_count_delta,
				    &te->has_thread_instruction_count_delta);
			break;
		case 9:
			r = get_i32(&p, end, wt, &te->type, &te->has_type);
			break;
		case 10:
			r = get_u64(&p, end, wt, &te->name_iid, &te->has_name_iid);
			break;
		case 11:
			r = get_u64(&p, end, wt, &te->track_uuid, &te->has_track_uuid);
			break;
		case 12:
			te->extra_counter_values = add_varints(d, &p, end, wt, te->extra_counter_values,
							       &te->n_extra_counter_values, &r);
			break;
		case 16:
			r = get_i64(&p, end, wt, &te->timestamp_absolute_us,
				    &te->has_timestamp_absolute_us);
			break;
		case 17:
			r = get_i64(&p, end, wt, &te->thread_time_absolute_us,
				    &te->has_thread_time_absolute_us);
			break;
		case 20:
			r = get_i64(&p, end, wt, &te->thread_instruction_count_absolute,
				    &te->has_thread_instruction_count_absolute);
			break;
		case 22:
			te->categories = add_str(d, &p, end, wt, te->categories, &te->n_categories, &r);
			break;
		case 23:
			r = get_str(d, &p, end, wt, &te->name);
			break;
		case 30:
			r = get_i64(&p, end, wt, &te->counter_value, &te->has_counter_value);
			break;
		case 31:
			te->extra_counter_track_uuids =
				add_varints(d, &p, end, wt, te->extra_counter_track_uuids,
					    &te->n_extra_counter_track_uuids, &r);
			break;
		case 36:
			te->flow_ids_old = add_varints(d, &p, end, wt, te->flow_ids_old,
						       &te->n_flow_ids_old, &r);
			break;
		case 42:
			te->terminating_flow_ids_old =
				add_varints(d, &p, end, wt, te->terminating_flow_ids_old,
					    &te->n_terminating_flow_ids_old, &r);
			break;
		case 44:
			r = get_double(&p, end, wt, &te->double_counter_value,
				       &te->has_double_counter_value);
			break;
		case 45:
			te->extra_double_counter_track_uuids =
				add_varints(d, &p, end, wt, te->extra_double_counter_track_uuids,
					    &te->n_extra_double_counter_track_uuids, &r);
			break;
		case 46:
			te->extra_double_counter_values =
				add_fixed64s(d, &p, end, wt, te->extra_double_counter_values,
					     &te->n_extra_double_counter_values, &r);
			break;
		case 47:
			te->flow_ids = add_fixed64s(d, &p, end, wt, te->flow_ids, &te->n_flow_ids, &r);
			break;
		case 48:
			te->terminating_flow_ids =
				add_fixed64s(d, &p, end, wt, te->terminating_flow_ids,
					     &te->n_terminating_flow_ids, &r);
			break;
		default:	/* Chrome's typed extensions 1000-9999 among them */
			r = dec_skip(&p, end, wt);
			break;
		}
		if (r)
			return r;
	}
	return PF_DEC_OK;
}

/*
 * One interned entry: EventCategory, EventName and DebugAnnotationName are
 * {iid = 1, name = 2 (string)}, InternedString is {iid = 1, str = 2 (bytes)}.
 * @name or @str says which.
 */
static int
dec_iid_entry(struct pf_dec *d, const uint8_t *p, const uint8_t *end, uint64_t *iid,
	      protobuf_c_boolean *has_iid, char **name, ProtobufCBinaryData *str,
	      protobuf_c_boolean *has_str)
{
	while (p < end) {
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		if (f == 1)
			r = get_u64(&p, end, wt, iid, has_iid);
		else if (f == 2 && name)
			r = get_str(d, &p, end, wt, name);
		else if (f == 2)
			r = get_bytes(&p, end, wt, str, has_str);
		else
			r = dec_skip(&p, end, wt);
		if (r)
			return r;
	}
	return PF_DEC_OK;
}

static int
dec_interned(struct pf_dec *d, const uint8_t *p, const uint8_t *end, PfInterned *in)
{
	DEC_INIT(in, PERFETTO__PROTOS__INTERNED_DATA__INIT);
	while (p < end) {
		const uint8_t *sub, *se;
		size_t len;
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		if (f != 1 && f != 2 && f != 3 && f != 29) {
			/* source locations, frames, ...: not read */
			if ((r = dec_skip(&p, end, wt)))
				return r;
			continue;
		}
		if ((r = dec_msg(&p, end, wt, &sub, &len)))
			return r;
		se = sub + len;
		if (f == 1) {
			Perfetto__Protos__EventCategory *e = tc_arena_alloc(d->a, sizeof(*e));

			DEC_INIT(e, PERFETTO__PROTOS__EVENT_CATEGORY__INIT);
			r = dec_iid_entry(d, sub, se, &e->iid, &e->has_iid, &e->name, NULL, NULL);
			in->event_categories = dec_room(d, in->event_categories,
							in->n_event_categories, 1, sizeof(e));
			in->event_categories[in->n_event_categories++] = e;
		} else if (f == 2) {
			Perfetto__Protos__EventName *e = tc_arena_alloc(d->a, sizeof(*e));

			DEC_INIT(e, PERFETTO__PROTOS__EVENT_NAME__INIT);
			r = dec_iid_entry(d, sub, se, &e->iid, &e->has_iid, &e->name, NULL, NULL);
			in->event_names = dec_room(d, in->event_names, in->n_event_names, 1,
						   sizeof(e));
			in->event_names[in->n_event_names++] = e;
		} else if (f == 3) {
			Perfetto__Protos__DebugAnnotationName *e = tc_arena_alloc(d->a, sizeof(*e));

			DEC_INIT(e, PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT);
			r = dec_iid_entry(d, sub, se, &e->iid, &e->has_iid, &e->name, NULL, NULL);
			in->debug_annotation_names = dec_room(d, in->debug_annotation_names,
							      in->n_debug_annotation_names, 1,
							      sizeof(e));
			in->debug_annotation_names[in->n_debug_annotation_names++] = e;
		} else {
			Perfetto__Protos__InternedString *e = tc_arena_alloc(d->a, sizeof(*e));

			DEC_INIT(e, PERFETTO__PROTOS__INTERNED_STRING__INIT);
			r = dec_iid_entry(d, sub, se, &e->iid, &e->has_iid, NULL, &e->str,
					  &e->has_str);
			in->debug_annotation_string_values =
				dec_room(d, in->debug_annotation_string_values,
					 in->n_debug_annotation_string_values, 1, sizeof(e));
			in->debug_annotation_string_values
				[in->n_debug_annotation_string_values++] = e;
		}
		if (r)
			return r;
	}
	return PF_DEC_OK;
}

int
pf_dec_packet(struct tc_arena *a, const uint8_t *data, size_t len,
	      Perfetto__Protos__TracePacket *pk)
{
	struct pf_dec d = { .a = a, .nest = 0 };
	const uint8_t *p = data, *end = data + len;

	DEC_INIT(pk, PERFETTO__PROTOS__TRACE_PACKET__INIT);
	while (p < end) {
		const uint8_t *sub;
		size_t sublen;
		uint32_t f;
		int wt, r;

		if ((r = dec_tag(&p, end, &f, &wt)))
			return r;
		switch (f) {
		case 8:
			r = get_u64(&p, end, wt, &pk->timestamp, &pk->has_timestamp);
			break;
		case 10:
			r = get_u32(&p, end, wt, &pk->trusted_packet_sequence_id,
				    &pk->has_trusted_packet_sequence_id);
			break;
		case 11:
			if (pk->track_event)	/* given twice: protobuf-c merges them */
				return PF_DEC_SLOW;
			if ((r = dec_msg(&p, end, wt, &sub, &sublen)))
				return r;
			pk->track_event = tc_arena_alloc(a, sizeof(*pk->track_event));
			r = dec_track_event(&d, sub, sub + sublen, pk->track_event);
			break;
		case 12:
			if (pk->interned_data)
				return PF_DEC_SLOW;
			if ((r = dec_msg(&p, end, wt, &sub, &sublen)))
				return r;
			pk->interned_data = tc_arena_alloc(a, sizeof(*pk->interned_data));
			r = dec_interned(&d, sub, sub + sublen, pk->interned_data);
			break;
		case 13:
			r = get_u32(&p, end, wt, &pk->sequence_flags, &pk->has_sequence_flags);
			break;
		case 41:
			r = get_bool(&p, end, wt, &pk->incremental_state_cleared,
				     &pk->has_incremental_state_cleared);
			break;
		case 42:
			r = get_bool(&p, end, wt, &pk->previous_packet_dropped,
				     &pk->has_previous_packet_dropped);
			break;
		case 50:
			r = get_bytes(&p, end, wt, &pk->compressed_packets,
				      &pk->has_compressed_packets);
			break;
		case 58:
			r = get_u32(&p, end, wt, &pk->timestamp_clock_id,
				    &pk->has_timestamp_clock_id);
			break;
		case 79:
			r = get_i32(&p, end, wt, &pk->trusted_pid, &pk->has_trusted_pid);
			break;
		case 87:
			r = get_bool(&p, end, wt, &pk->first_packet_on_sequence,
				     &pk->has_first_packet_on_sequence);
			break;
		case 6:		/* clock_snapshot */
		case 43:	/* process_descriptor */
		case 44:	/* thread_descriptor */
		case 59:	/* trace_packet_defaults */
		case 60:	/* track_descriptor */
			return PF_DEC_SLOW;
		default:	/* ftrace bundles, chrome metadata, ...: skipped */
			r = dec_skip(&p, end, wt);
			break;
		}
		if (r)
			return r;
	}
	return PF_DEC_OK;
}
