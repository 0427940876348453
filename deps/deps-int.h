/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-int.h - private to deps/: access-string parsing, the per-buffer
 * interval map and the derivation engine that turns a stream of events (in
 * start order) into flow/anti/output/order edges.  None of this touches
 * SQLite, so the unit tests drive it directly.
 */
#ifndef DEPS_DEPS_INT_H
#define DEPS_DEPS_INT_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "common/tc.h"

/* A whole-buffer access covers [0, DEPS_WHOLE). */
#define DEPS_WHOLE UINT64_MAX

/**
 * struct deps_access - one parsed "BUF" or "BUF[LO:HI]" string.
 * @name, @name_len: the buffer name, pointing into the parsed string.
 * @lo, @hi: half-open byte range; [0, DEPS_WHOLE) for the whole buffer.
 */
struct deps_access {
	const char *name;
	size_t name_len;
	uint64_t lo, hi;
};

/**
 * deps_access_parse - parse an access string: a non-empty name without
 * '[' ']' or spaces, optionally followed by "[LO:HI]" with LO < HI, each a
 * decimal or 0x-hex byte offset.
 * Return: 0, or -EINVAL when malformed (@a is then undefined).
 */
int deps_access_parse(const char *s, struct deps_access *a);
/** deps_access_parse_n - the same over @len bytes of @s (no NUL needed). */
int deps_access_parse_n(const char *s, size_t len, struct deps_access *a);

/**
 * deps_offset_plain - one number of a plain "[LO:HI]" at @p before @end:
 * decimal, or 0x and hex digits (at most 19 or 16 digits: nothing to
 * overflow), ended by @stop.  Return: the byte after @stop with the value
 * in *@out, or NULL (*@out untouched) when it is not that.  Both the
 * general parse's fast range and the args scanner read numbers this way.
 */
static inline const char *
deps_offset_plain(const char *p, const char *end, char stop, uint64_t *out)
{
	const char *d;
	uint64_t v = 0;

	if (end - p >= 2 && p[0] == '0' && (p[1] | 0x20) == 'x') {
		for (d = p += 2; p < end; p++) {
			unsigned c = (unsigned char)*p, x;

			if (c - '0' < 10)
				x = c - '0';
			else if ((c | 0x20) - 'a' < 6)
				x = (c | 0x20) - 'a' + 10;
			else
				break;
			v = v << 4 | x;
		}
		if (p - d > 16)
			return NULL;
	} else {
		for (d = p; p < end && (unsigned)(*p - '0') < 10; p++)
			v = v * 10 + (unsigned)(*p - '0');
		if (p - d > 19)
			return NULL;
	}
	if (p == d || p == end || *p != stop)
		return NULL;
	*out = v;
	return p + 1;
}

/**
 * deps_wait_parse - parse "NAME>=N" (NAME non-empty, N a decimal >= 0).
 * The name may itself contain brackets ("S[3]>=2"): the last ">=" splits.
 * Return: 0 or -EINVAL.
 */
int deps_wait_parse(const char *s, const char **name, size_t *name_len, int64_t *n);
/** deps_wait_parse_n - the same over @len bytes of @s. */
int deps_wait_parse_n(const char *s, size_t len, const char **name, size_t *name_len,
		      int64_t *n);

/**
 * struct deps_opsink - where deps_operands_parse() puts what it finds.
 * Each callback gets a name that is not NUL-terminated.
 */
struct deps_opsink {
	void *ctx;
	void (*access)(void *ctx, bool write, const char *buf, size_t len, uint64_t lo,
		       uint64_t hi);
	void (*signal)(void *ctx, const char *sem, size_t len);
	void (*wait)(void *ctx, const char *sem, size_t len, int64_t n);
	void (*bad)(void *ctx, const char *token, size_t len);
};

/**
 * deps_operands_parse - map a Neuron runtime operand string
 * ("S[5] (Tensor)++@complete acc_flags=3 src=fp16@0x5600[1,0,0][3,1,1]
 * dst=..." , "$S[45]>=16") onto accesses, signals and waits, see
 * docs/dependencies.md.  Unknown tokens are ignored; src/dst tokens that do
 * not parse are reported through @sink->bad.
 */
void deps_operands_parse(const char *ops, const struct deps_opsink *sink);

/* ---- interval map (deps-intervals.c) ---- */

struct deps_imap;

/**
 * deps_emit_fn - called for every (earlier event, byte range) an access
 * depends on: @kind is ST_EDGE_FLOW (writer before a read), ST_EDGE_OUTPUT
 * (writer before a write) or ST_EDGE_ANTI (reader before a write).
 */
typedef void (*deps_emit_fn)(void *ctx, int64_t src, int kind, uint64_t lo, uint64_t hi);

/**
 * deps_imap_new - an empty interval map; it starts as a grid unless
 * NX_DEPS_GRID=0 (deps-intervals.c).
 */
struct deps_imap *deps_imap_new(void);
void deps_imap_free(struct deps_imap *m);

/** deps_imap_set_grid - start @m as a grid or as the tree; only before its first access. */
void deps_imap_set_grid(struct deps_imap *m, bool on);

/** deps_imap_is_grid - whether @m is (still) a grid (for tests). */
bool deps_imap_is_grid(const struct deps_imap *m);

/**
 * deps_imap_access - apply event @eid (1 .. UINT32_MAX) reading or writing
 * [@lo, @hi) of this buffer: report the dependencies through @emit, then
 * record the access (a write replaces every interval it covers by one; a
 * read adds @eid to the reader set of each byte).  Events must come in
 * processing order.
 */
void deps_imap_access(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid,
		      deps_emit_fn emit, void *ctx);

/**
 * struct deps_piece - one (earlier event, byte range) an access depends on,
 * as deps_emit_fn gets it, with the buffer's id.
 */
struct deps_piece {
	int64_t src;
	int kind;
	uint32_t buf;
	uint64_t lo, hi;
};

/**
 * struct deps_pieces - pieces collected by deps_imap_add().
 * @v, @n, @cap: the array (tc_xrealloc()ed; free @v when done).
 * @buf: the buffer id the next pieces get.
 */
struct deps_pieces {
	struct deps_piece *v;
	size_t n, cap;
	uint32_t buf;
};

/**
 * deps_imap_add - deps_imap_access() that appends the dependencies to @out
 * (with buffer id @out->buf), in the order the callback would get them,
 * instead of calling a function for each.
 */
void deps_imap_add(struct deps_imap *m, uint64_t lo, uint64_t hi, bool write, int64_t eid,
		   struct deps_pieces *out);

/** deps_imap_count - live intervals, or a grid's cells in use (for tests and memory accounting). */
size_t deps_imap_count(const struct deps_imap *m);

/* ---- derivation engine (deps-engine.c) ---- */

struct deps_engine;

/**
 * deps_edge_fn - one derived, deduplicated edge.  @label (@len bytes, also
 * NUL-terminated) is only valid during the call.
 */
typedef int (*deps_edge_fn)(void *ctx, int64_t src, int64_t dst, int kind, const char *label,
			    size_t len);
/* Label shapes deps_parts_fn takes. */
#define DEPS_LABEL_BYTES 1	/* NAME[A:B] */
#define DEPS_LABEL_WAIT 2	/* NAME>=A */

/**
 * struct deps_label - a label of one item, in parts: @name (@len bytes, not
 * NUL-terminated) and the numbers of @shape.  The text would be the same
 * that deps_edge_fn gets (DEPS_LABEL_BYTES: "NAME[A:B]", DEPS_LABEL_WAIT:
 * "NAME>=A").  @name_id numbers the name in the engine (buffers and
 * semaphores apart, by @shape), the same for the engine's life: a callback
 * may resolve a name once per id.
 */
struct deps_label {
	int shape;
	uint32_t name_id;
	const char *name;
	size_t len;
	uint64_t a, b;
};

/**
 * deps_parts_fn - an edge whose label is one item, given in parts (@l is
 * only valid during the call), without formatting it.
 */
typedef int (*deps_parts_fn)(void *ctx, int64_t src, int64_t dst, int kind,
			     const struct deps_label *l);

/** deps_bad_fn - a malformed access string, wait or operand of event @eid. */
typedef void (*deps_bad_fn)(void *ctx, int64_t eid, const char *what, const char *text);

/**
 * deps_engine_new - a fresh engine that reports edges to @edge and bad
 * strings to @bad (may be NULL), both with @ctx.  Free with deps_engine_free().
 */
struct deps_engine *deps_engine_new(deps_edge_fn edge, deps_bad_fn bad, void *ctx);
void deps_engine_free(struct deps_engine *e);

/**
 * deps_engine_set_parts - report edges whose label is one item through @fn
 * (same ctx) instead of as text; the others still go to the edge callback.
 */
void deps_engine_set_parts(struct deps_engine *e, deps_parts_fn fn);

/**
 * deps_engine_set_threads - derive on @n threads in all (at most 8), the
 * calling one included: it scans the args; the interval maps run on worker
 * threads (nx-deps-K), each owning the buffers whose id is K modulo their
 * number; with 4 threads or more one of them (nx-deps-report) merges the
 * workers' results and calls the edge callbacks, else the calling thread
 * does between events.  The edges, their labels and the order in which the
 * edge callbacks get them are the same as with one thread, but the
 * flow/anti/output edges of an event are reported later (by the time a
 * later deps_engine_event() or deps_engine_finish() returns) and, with 4
 * threads or more, on the reporting thread, while malformed strings are
 * still reported on the calling thread as it scans them.  Call before the
 * first event; @n <= 1 keeps everything on the calling thread.  The threads
 * stop in deps_engine_free().
 * Return: 0, -EBUSY (events came already), or -errno when a thread could
 * not be started (the engine then stays on one thread).
 */
int deps_engine_set_threads(struct deps_engine *e, int n);

/**
 * deps_engine_thread_cpu - the CPU time thread @k (0 .. : the workers, then
 * the reporter) has used as of its last batch, in ns, and *@what it is
 * ("worker" or "reporter"); -1 past the last.
 */
int64_t deps_engine_thread_cpu(struct deps_engine *e, int k, const char **what);

/**
 * deps_engine_event - process one event (@eid 1 .. UINT32_MAX, as the store
 * numbers them); events must arrive ordered by (ts, ts + dur, file order).  @args is the event's JSON args object text
 * (reads, writes, signals, waits, operands), @args_len bytes (no NUL
 * needed), or NULL.  Only the top-level keys named above are decoded; no
 * JSON value is built.  Flow/anti/output edges into @eid are reported
 * before this returns (with worker threads, in a later call); semaphore
 * edges at finish.
 * Return: 0, -ERANGE for an id out of range (the event is ignored), or the
 * first negative value an edge callback returned.
 */
int deps_engine_event(struct deps_engine *e, int64_t eid, int64_t ts, int64_t dur,
		      const char *args, size_t args_len);

/**
 * deps_engine_finish - report the flow/anti/output edges still queued for
 * worker threads, then resolve semaphore waits against signals counted in
 * completion order and report the order edges.  Return: as above.
 */
int deps_engine_finish(struct deps_engine *e);

/**
 * deps_engine_live - live intervals over all buffers (memory bound check);
 * with worker threads, only after deps_engine_finish().
 */
size_t deps_engine_live(const struct deps_engine *e);

#endif /* DEPS_DEPS_INT_H */
