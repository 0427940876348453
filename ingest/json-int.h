/* SPDX-License-Identifier: MIT */
/*
 * ingest/json-int.h - private pieces of the Chrome/Kineto JSON reader: a
 * small validating JSON value parser over a complete buffer (one event),
 * the streaming top-level scanner that cuts the input into event spans, and
 * the microsecond -> nanosecond number parser.  See docs/json-ingest.md.
 */
#ifndef ING_JSON_INT_H
#define ING_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/tc.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- values over a complete buffer (ing-json-val.c) ---- */

enum ij_type { IJ_NONE = 0, IJ_STR, IJ_NUM, IJ_OBJ, IJ_ARR, IJ_TRUE, IJ_FALSE, IJ_NULL };

/**
 * struct ij_val - one parsed JSON value.
 * @type: enum ij_type.
 * @p/@n: for IJ_STR the raw contents between the quotes (escapes not
 *        decoded); for every other type the whole value text.
 * @esc:  IJ_STR only: the contents hold a backslash escape.
 */
struct ij_val {
	int type;
	const char *p;
	size_t n;
	bool esc;
};

/** ij_ws - skip JSON white space; returns the first other byte or @end. */
const char *ij_ws(const char *p, const char *end);

/**
 * ij_str_skip - the first '"' or '\\' in [@p, @end), or @end.  Inside a
 * string that is where the plain run of bytes stops.  16 bytes at a time
 * where SSE2 is there (every x86-64); never reads at or past @end.
 */
static inline const char *ij_str_skip(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
								      _mm_cmpeq_epi8(x, bslash)));

		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

/**
 * ij_value - parse and validate one value starting at @p (white space first
 * allowed).  Objects and arrays are validated to a nesting depth of 512.
 * Return: the byte after the value, or NULL on a syntax error with *@why set
 * to a static message and *@at to the offending byte.
 */
const char *ij_value(const char *p, const char *end, struct ij_val *v, const char **why,
		     const char **at);

/**
 * ij_value_at - ij_value() for a value nested @depth containers deep (an
 * event's members are at depth 1, the members of its args at depth 2), so
 * the 512 limit counts from the top of the event.
 */
const char *ij_value_at(const char *p, const char *end, struct ij_val *v, int depth,
			const char **why, const char **at);

/**
 * ij_member - the key of the next member of an object, leaving *@pp at its
 * value (white space before it allowed): ij_obj_next() without the value,
 * for callers that walk some values themselves.  Same start, return and
 * error rules as ij_obj_next().
 */
int ij_member(const char **pp, const char *end, bool first, struct ij_val *key,
	      const char **why, const char **at);

/**
 * ij_obj_next - walk the members of an object.  Start with *@pp just after
 * the '{' (ij_value()'s IJ_OBJ text + 1) and @first = true.
 * Return: 1 with @key/@val set, 0 at the closing '}', -1 on a syntax error
 * (@why and @at set as for ij_value()).
 */
int ij_obj_next(const char **pp, const char *end, bool first, struct ij_val *key,
		struct ij_val *val, const char **why, const char **at);

/** ij_str_decode - append the decoded contents of string @v to @out (not NUL-added). */
void ij_str_decode(const struct ij_val *v, struct tc_buf *out);

/** ij_key_is - whether string @v (undecoded) equals the literal @lit. */
static inline bool ij_key_is(const struct ij_val *v, const char *lit, size_t litlen)
{
	size_t i;

	if (v->n != litlen)
		return false;
	for (i = 0; i < litlen; i++)
		if (v->p[i] != lit[i])
			return false;
	return true;
}
#define IJ_KEY_IS(v, lit) ij_key_is((v), lit, sizeof(lit) - 1)

/**
 * ij_us_to_ns - parse JSON number text (or the contents of a numeric string)
 * in microseconds into integer nanoseconds.  The decimal text is read
 * directly: integer part * 1000 plus up to 3 fraction digits, rounded half
 * away from zero on the 4th; exponents fall back to strtod().
 * Return: 0, -EINVAL (not a number) or -ERANGE (does not fit).
 */
int ij_us_to_ns(const char *p, size_t n, int64_t *out);

/** ij_num_double - parse number text (or numeric string contents); 0 or -EINVAL. */
int ij_num_double(const char *p, size_t n, double *out);

/* ---- the streaming top-level scanner (ing-json-scan.c) ---- */

enum ij_form { IJ_FORM_NONE = 0, IJ_FORM_ARRAY, IJ_FORM_OBJECT };

/* Biggest single event and biggest top-level metadata value kept. */
#define IJ_EVENT_MAX (64u << 20)
#define IJ_META_MAX (64u << 10)

/**
 * struct ij_scan_ops - what the scanner reports.
 * @event: one element of the events array: its complete text @p/@n (valid
 *         until the callback returns), its 0-based index and the decompressed
 *         byte offset where it starts.  Return 0 or -errno to stop.
 * @meta:  a top-level key other than traceEvents and its value text; @val is
 *         NULL when the value was longer than IJ_META_MAX (skipped).
 * @event_at: optional, the fast path: called where an element starting with
 *         '{' begins, with the rest of the current chunk (@p/@avail, valid
 *         until it returns).  It may parse the event in place and return the
 *         object's length (the scanner then skips it: no @event call, no
 *         byte-by-byte scan, no copy).  It returns 0 to decline (an object
 *         that runs past the chunk, or any syntax error), and the scanner
 *         then captures the element and calls @event, which must give the
 *         same result; -errno stops the scan.
 */
struct ij_scan_ops {
	int (*event)(void *ctx, const char *p, size_t n, uint64_t index, uint64_t off);
	int (*meta)(void *ctx, const char *key, size_t keylen, const char *val, size_t vallen,
		    uint64_t off);
	long (*event_at)(void *ctx, const char *p, size_t avail, uint64_t index, uint64_t off);
};

/**
 * struct ij_scan - state of one scan; fields are private to ing-json-scan.c
 * except @form, @events and @off which callers may read.
 */
struct ij_scan {
	const struct ij_scan_ops *ops;
	void *ctx;
	const char *name;	/* for messages */
	int form;		/* enum ij_form */
	uint64_t events;	/* elements seen in the events array */
	uint64_t off;		/* decompressed bytes consumed */
	/* private */
	int state;
	int cap_kind;		/* what the running capture is for */
	int cap_mode;		/* container, string or scalar */
	int depth;
	bool in_str, esc, cap_over, saw_events, events_done;
	uint64_t cap_off;
	struct tc_buf carry;	/* a capture spanning chunk boundaries */
	struct tc_buf key;	/* the current top-level key */
};

void ij_scan_init(struct ij_scan *s, const struct ij_scan_ops *ops, void *ctx, const char *name);
/** ij_scan_feed - scan the next @n bytes; 0 or -errno with @err set. */
int ij_scan_feed(struct ij_scan *s, const char *buf, size_t n, struct tc_err *err);
/** ij_scan_end - the input ended; checks it is complete.  0 or -errno. */
int ij_scan_end(struct ij_scan *s, struct tc_err *err);
void ij_scan_free(struct ij_scan *s);

/* ---- CUDA synchronisation (ing-json-sync.c) ---- */

struct st_writer;

/**
 * struct ij_slice - a slice as the reader keeps it to bind flows and
 * synchronisations: sorted by (unit, ts, end descending, seq) once the
 * file is read, @parent the index of the enclosing slice (-1: top level).
 */
struct ij_slice {
	int64_t ts, end;
	int64_t parent;
	uint32_t seq;		/* the store's sequence number (< UINT32_MAX) */
	int unit;
};

/**
 * ij_slice_bound - in @sl (sorted), the first index whose (unit, ts) is
 * greater than (@unit, @t) when @upper, greater or equal otherwise.
 */
size_t ij_slice_bound(const struct ij_slice *sl, size_t nsl, int unit, int64_t t, bool upper);

/* Kineto's cuda_sync events, by "cuda_sync_kind" (or name). */
enum ij_sync_kind { IJ_SYNC_STREAM_WAIT, IJ_SYNC_STREAM, IJ_SYNC_EVENT, IJ_SYNC_CONTEXT };

/** ij_sync_kind_parse - the enum ij_sync_kind of Kineto's name @s ("Stream Sync"; any case), or -1. */
int ij_sync_kind_parse(const char *s);

struct ij_syncs;

/**
 * struct ij_sync_ops - what the reader answers for the synchronisations:
 * @stream_units: the store units of device @dev's stream @stream (-1: all
 * of its streams) into @out (at most @max); returns how many.
 */
struct ij_sync_ops {
	int (*stream_units)(void *ctx, int dev, int64_t stream, int *out, int max);
};

/**
 * ij_syncs_add - note a cuda_sync event (store sequence @seq on @unit of
 * device index @dev, times as the slices keep them) of @kind with the host
 * call's correlation @corr and, for waits on another stream, @wait_stream
 * (-1 when absent).  Allocates *@sp on first use.
 */
void ij_syncs_add(struct ij_syncs **sp, int kind, int unit, int dev, int64_t seq, int64_t ts,
		  int64_t end, int64_t corr, int64_t wait_stream);

/** ij_syncs_by_corr - the sequence number of the sync with correlation @corr, or 0. */
int64_t ij_syncs_by_corr(struct ij_syncs *s, int64_t corr);

/** ij_syncs_launch - a launch flow (Kineto "ac2g") from host call @src to @dst, id @corr. */
void ij_syncs_launch(struct ij_syncs *s, int64_t src, int64_t dst, int64_t corr);

/**
 * ij_syncs_resolve - add an `order` edge for every synchronisation whose
 * waited-for operation is found (docs/dependencies.md; the store counts
 * them with the other explicit edges).  @sl: the sorted slices.  Return: 0
 * or the negative errno of st_edge_add().
 */
int ij_syncs_resolve(struct ij_syncs *s, const struct ij_slice *sl, size_t nsl,
		     const struct ij_sync_ops *ops, void *ctx, struct st_writer *w);

/** ij_syncs_free - free @s (NULL is fine). */
void ij_syncs_free(struct ij_syncs *s);

/* ---- the reader (ing-json.c) ---- */

struct ing_opts;

/**
 * ing_json_read_chunks - ing_json_read() reading the input @chunk bytes at a
 * time (0: the default, 1 MiB), on a thread of its own when @thread is 1,
 * inline when 0, and on a thread for inputs of 8 MiB or more (1 MiB gzip'd)
 * when -1 (what ing_json_read() does).  Events that cross a chunk boundary
 * take the scanner's copying path and the others are parsed in place, so the
 * tests and the fuzz target use it to check that all ways give the same
 * trace.  Return: as ing_json_read().
 */
int ing_json_read_chunks(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
			 size_t chunk, int thread, struct tc_err *err);

#endif /* ING_JSON_INT_H */
