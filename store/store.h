/* SPDX-License-Identifier: MIT */
/*
 * store/store.h - the trace store: one catalog database for the library of
 * traces plus one SQLite file per trace (see docs/architecture.md and
 * schemas/trace.sql).
 *
 * Ingest side: an ingester opens a struct st_writer on a temporary file,
 * declares devices and units, adds events and explicit edges in file order,
 * and st_writer_finish() sorts, nests, summarises and indexes everything.
 * st_library_ingest() (store/st-library.c) wraps this with the catalog, the
 * content-addressed raw copy and the atomic publish.
 *
 * Threading: a st_writer belongs to one thread.  The catalog functions open
 * their own connections and may be called from any thread.
 */
#ifndef ST_STORE_H
#define ST_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sqlite3.h>
#include "common/tc.h"

/* Schema versions (PRAGMA user_version) of the two database kinds. */
#define ST_TRACE_SCHEMA_VERSION 11
#define ST_CATALOG_SCHEMA_VERSION 1

/* Device kinds (devices.kind). */
enum st_device_kind {
	ST_DEV_PROCESS = 0,	/* a host process */
	ST_DEV_GPU = 1,		/* an NVIDIA/AMD GPU (Kineto pid = device) */
	ST_DEV_NEURONCORE = 2,	/* a Trainium/Inferentia NeuronCore */
	ST_DEV_ACCEL = 3,	/* another accelerator (MTIA, ...) */
	ST_DEV_OTHER = 4,	/* global tracks, spans */
};

/* Unit kinds (units.kind): one timeline row each. */
enum st_unit_kind {
	ST_UNIT_ENGINE = 0,	/* a compute engine */
	ST_UNIT_QUEUE = 1,	/* a DMA queue / hardware channel */
	ST_UNIT_STREAM = 2,	/* a GPU stream */
	ST_UNIT_THREAD = 3,	/* a host thread */
	ST_UNIT_ASYNC = 4,	/* an async track (b/e, Perfetto async) */
	ST_UNIT_COUNTER = 5,	/* a counter series */
	ST_UNIT_TRACK = 6,	/* any other named track */
};

/* Event kinds (events.kind). */
enum st_event_kind {
	ST_EV_SLICE = 0,
	ST_EV_INSTANT = 1,
	ST_EV_COUNTER = 2,
};

/* Edge kinds (edges.kind). */
enum st_edge_kind {
	ST_EDGE_FLOW = 0,	/* producer -> consumer, RAW, launch -> kernel */
	ST_EDGE_ORDER = 1,	/* program order, semaphore and event waits */
	ST_EDGE_ANTI = 2,	/* write-after-read */
	ST_EDGE_OUTPUT = 3,	/* write-after-write */
	ST_EDGE_NKINDS = 4,
};

/** st_edge_kind_name - "flow", "order", "anti", "output" (NULL if out of range). */
const char *st_edge_kind_name(int kind);
/** st_edge_kind_parse - inverse of st_edge_kind_name; -1 when unknown. */
int st_edge_kind_parse(const char *s);
const char *st_unit_kind_name(int kind);
/** st_unit_kind_parse - enum st_unit_kind of the name st_unit_kind_name() gives, or -1. */
int st_unit_kind_parse(const char *s);
const char *st_device_kind_name(int kind);

/**
 * struct st_stats - what an ingest found; printed by `ingest --json` and
 * stored in the trace's meta table and the catalog.
 */
struct st_stats {
	int64_t slices, instants, counters;	/* events by kind */
	int64_t units, devices;
	int64_t edges[ST_EDGE_NKINDS];		/* stored edges by kind */
	int64_t start_ns, end_ns;		/* span of all events */
	int64_t bad_events;			/* skipped: missing/invalid fields */
	int64_t overlaps;			/* slices that broke nesting (kept on a sub-row) */
	int64_t unmatched;			/* B without E, E without B, unpaired flows */
	int64_t bad_access;			/* malformed reads/writes/waits (deps) */
	char first_bad[256];			/* first bad event, for the message */
	char first_bad_access[256];
};

struct st_writer;

/**
 * st_progress_fn - a reader's progress: @frac in [0,1] of its input consumed.
 * Return: 0 to go on, or -ECANCELED: the reader stops there and fails with
 * "ingest cancelled".
 */
typedef int (*st_progress_fn)(void *ctx, double frac);

/**
 * enum st_phase - what an ingest is busy with, in the order they come.
 * @ST_PHASE_READING:  the reader parses the input (a share of its bytes).
 * @ST_PHASE_SORTING:  finish: events sorted, nested, summarised and written.
 * @ST_PHASE_DEPS:     finish: the dependency analysis (events with access sets).
 * @ST_PHASE_EDGES:    finish: edges packed and written.
 * @ST_PHASE_COMMIT:   finish: commit, fsync and publish.
 * A phase with nothing to do is not reported.
 */
enum st_phase {
	ST_PHASE_READING,
	ST_PHASE_SORTING,
	ST_PHASE_DEPS,
	ST_PHASE_EDGES,
	ST_PHASE_COMMIT,
	ST_PHASE_N
};

/**
 * st_phase_name - the phase's name as the API and the CLI show it:
 * "reading", "sorting", "dependencies", "edges", "committing".
 */
const char *st_phase_name(int phase);

/**
 * struct st_progress - one progress report of an ingest.
 * @phase:      enum st_phase.
 * @phase_frac: how far that phase is, 0 to 1.
 * @frac:       the whole ingest, 0 to 1: never decreases.  An estimate:
 *              reading is half of it, the finish phases share the rest by
 *              the work they have (events, events with access sets).
 */
struct st_progress {
	int phase;
	double phase_frac, frac;
};

/**
 * st_phase_fn - ingest progress, called on the ingesting thread at each
 * phase's start and at most every ST_PROGRESS_NS within one (NX_PROGRESS_MS=N
 * sets N ms instead; 0: every report); @p is only valid during the call.
 * Return: 0 to go on; anything else cancels the ingest, which then stops
 * within one more report's worth of work and fails with -ECANCELED
 * ("ingest cancelled"), its temporary store removed.
 */
typedef int (*st_phase_fn)(void *ctx, const struct st_progress *p);
#define ST_PROGRESS_NS 100000000	/* 100 ms */
#define ST_CANCELLED "ingest cancelled"	/* the message of a cancelled ingest */

/**
 * st_writer_open - start a new per-trace database at @path (created; an
 * existing file is replaced).  The caller later renames it into place.
 * Return: 0 or -errno with @err set.
 */
int st_writer_open(struct st_writer **w, const char *path, struct tc_err *err);

/**
 * st_writer_abort - roll back, close and unlink the temporary file.
 * NULL is a no-op.
 */
void st_writer_abort(struct st_writer *w);

/**
 * st_writer_finish - sort events per unit, assign nesting depth (overlaps go
 * to a sub-row and are counted), remap edges, derive dependency edges from
 * access sets (deps/), build the per-unit summary levels and the indexes,
 * store meta, commit and close.  @w is freed in every case.
 * @stats: out, may be NULL.
 * Return: 0 or -errno with @err set (the file is then unlinked).
 */
int st_writer_finish(struct st_writer *w, struct st_stats *stats, struct tc_err *err);

/**
 * st_writer_set_progress - report the ingest's phases to @fn (with @ctx),
 * the finish phases by st_writer_finish() itself.  NULL @fn: no reports.
 */
void st_writer_set_progress(struct st_writer *w, st_phase_fn fn, void *ctx);

/**
 * st_writer_progress - phase @phase is @frac (0 to 1) done: reported when
 * the phase changes, when @frac is 1, or ST_PROGRESS_NS after the last
 * report.  The reader's share (ST_PHASE_READING) comes from its caller.
 * Only on the thread that owns @w.
 * Return: 0, or -ECANCELED once the function has asked to cancel (then on
 * every later call too; st_event_add() and st_writer_finish() fail).
 */
int st_writer_progress(struct st_writer *w, int phase, double frac);

/**
 * st_writer_reading - a reader's st_progress_fn for writer @w (given as the
 * reader's ctx): st_writer_progress(@w, ST_PHASE_READING, @frac).
 */
int st_writer_reading(void *w, double frac);

/**
 * st_intern - the id of string @s (@len bytes, need not be NUL-terminated;
 * a NUL within them ends it), interned per trace.  Ids start at 1; id 0
 * means "no string".
 */
uint32_t st_intern(struct st_writer *w, const char *s, size_t len);

/**
 * st_device - find or create the device known by @key (an ingester-chosen
 * stable key, e.g. "pid:1234" or "gpu:0").  @name may be NULL (defaults to
 * the key) and is only used on creation; later calls may rename with
 * st_device_set_name().
 * Return: the device id (>= 1).
 */
int st_device(struct st_writer *w, const char *key, int kind, const char *name);
void st_device_set_name(struct st_writer *w, int dev, const char *name);
void st_device_set_kind(struct st_writer *w, int dev, int kind);
void st_device_set_sort(struct st_writer *w, int dev, int64_t sort);
/** st_device_set_label - extra text shown with the name (process labels). */
void st_device_set_label(struct st_writer *w, int dev, const char *label);

/**
 * st_unit - find or create the unit @key of device @dev.  Same key rules as
 * st_device().  Return: unit id (>= 1).
 */
int st_unit(struct st_writer *w, int dev, const char *key, int kind, const char *name);
void st_unit_set_name(struct st_writer *w, int unit, const char *name);
void st_unit_set_kind(struct st_writer *w, int unit, int kind);
void st_unit_set_sort(struct st_writer *w, int unit, int64_t sort);

/**
 * struct st_event - one event handed to st_event_add().  Strings are
 * interned ids.  @args is a JSON object text (copied) or NULL.
 * @dur: slices only; instants and counters use 0.  Negative dur is invalid.
 */
struct st_event {
	int unit;
	int kind;		/* enum st_event_kind */
	int64_t ts;		/* ns */
	int64_t dur;		/* ns */
	uint32_t name;
	uint32_t cat;
	double value;		/* counters */
	const char *args;	/* JSON object text or NULL */
	size_t args_len;
	/*
	 * Whether the args carry access sets or semaphores (a top-level key
	 * reads, writes, signals, waits or operands: events.flags bit 0, what
	 * deps/ analyses).  A reader that parsed the args sets @args_scanned
	 * and @has_access; otherwise the store looks for the keys itself.
	 */
	bool args_scanned;
	bool has_access;
};

/**
 * st_access_key - is @s/@n one of the args keys deps/ reads (reads, writes,
 * signals, waits, operands; docs/dependencies.md)?  For readers that set
 * struct st_event's @has_access from the keys they see (inline: they ask
 * for every top-level key).
 */
static inline bool
st_access_key(const char *s, size_t n)
{
	switch (n) {
	case 5:
		return !memcmp(s, "reads", 5) || !memcmp(s, "waits", 5);
	case 6:
		return !memcmp(s, "writes", 6);
	case 7:
		return !memcmp(s, "signals", 7);
	case 8:
		return !memcmp(s, "operands", 8);
	default:
		return false;
	}
}

/**
 * st_event_add - append one event.  Events may arrive in any order.
 * Return: the event's sequence number in file order (>= 1), used to name it
 * in st_edge_add(); negative errno on a write failure (@w is then failed and
 * st_writer_finish() reports it).
 */
int64_t st_event_add(struct st_writer *w, const struct st_event *ev);

/**
 * st_edge_add - an explicit dependency edge between two added events
 * (sequence numbers from st_event_add()), e.g. a flow from the trace.
 * @label: what caused it (flow name/id, buffer, semaphore), may be NULL.
 */
int st_edge_add(struct st_writer *w, int64_t src_seq, int64_t dst_seq, int kind,
		const char *label);

/**
 * st_writer_edges_given - the trace brings the edges the analysis would
 * derive (our own Perfetto export, with its nx.deps): finish skips deps/,
 * and the reader adds them with st_edge_add().  Events keep their flags.
 */
void st_writer_edges_given(struct st_writer *w);

/** st_writer_set_meta - a key/value for the trace's meta table (e.g. "format"). */
void st_writer_set_meta(struct st_writer *w, const char *key, const char *value);

/** st_writer_count_bad - count a skipped event; @why is kept for the first one. */
void st_writer_count_bad(struct st_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void st_writer_count_unmatched(struct st_writer *w);
/** st_writer_count_bad_access - for deps/: a malformed access string or wait. */
void st_writer_count_bad_access(struct st_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * st_writer_add_edge - for deps/ during finish: store edge @src -> @dst
 * (final event ids) of @kind, labelled with @len bytes of @label (NULL: no
 * label).  Edges are packed at the end of st_writer_finish(); the caller
 * counts them in the stats.  Return: 0 or -errno (-EINVAL: an id out of
 * range or a bad kind).
 */
int st_writer_add_edge(struct st_writer *w, int64_t src, int64_t dst, int kind,
		       const char *label, size_t len);

/* Label shapes st_writer_add_edge_parts() takes. */
#define ST_LABEL_BYTES 1	/* NAME[A:B], A <= B */
#define ST_LABEL_AT_LEAST 2	/* NAME>=A */

/**
 * st_writer_add_edge_parts - st_writer_add_edge() with a label given in
 * parts: @name (@len bytes) and the numbers @a, @b of @shape.  The label
 * reads back as the text (decimal numbers), without that text being made
 * or parsed here.  Return: as st_writer_add_edge(); -EINVAL for a bad shape.
 */
int st_writer_add_edge_parts(struct st_writer *w, int64_t src, int64_t dst, int kind, int shape,
			     const char *name, size_t len, uint64_t a, uint64_t b);

/**
 * struct st_fev - for deps/ during finish: an event whose args carry access
 * sets or semaphores (events.flags bit 0), with the id finish gave it.
 * @args_off: where its args text lies, for st_writer_flagged_args().
 * @args_len: bytes of args (0: none).
 */
struct st_fev {
	int64_t ts, dur;
	uint64_t args_off;
	uint32_t id, seq;
	uint32_t args_len;
	uint32_t pad_;
};

/**
 * st_writer_flagged_units - for deps/ during finish: units are numbered
 * 1 .. this.  0 when there are no flagged events to read (none was added,
 * or deps_enabled() was false).
 */
int st_writer_flagged_units(struct st_writer *w);

/** st_writer_flagged_count - for deps/ during finish: @unit's flagged events. */
int64_t st_writer_flagged_count(struct st_writer *w, int unit);

struct st_fcur;

/**
 * st_writer_flagged_open - for deps/ during finish: a reader of the flagged
 * events of @unit in id order (st_fcur_read()); NULL when it has none.
 * Several may be open at once, on one thread.  Free with st_fcur_free()
 * before st_writer_finish() returns.
 */
struct st_fcur *st_writer_flagged_open(struct st_writer *w, int unit);

/**
 * st_fcur_read - the reader's next events, up to @max of them, into @v.
 * Return: how many; 0 when there is none left.
 */
size_t st_fcur_read(struct st_fcur *c, struct st_fev *v, size_t max);

/** st_fcur_free - release @c; NULL is a no-op. */
void st_fcur_free(struct st_fcur *c);

/**
 * st_writer_flagged_args - the args text of @e (@e->args_len bytes, not
 * NUL-terminated), NULL when it has none.  Valid until st_writer_finish()
 * returns, or until st_writer_flagged_done() says they are read.
 */
const char *st_writer_flagged_args(struct st_writer *w, const struct st_fev *e);

/**
 * st_writer_flagged_in_order - for deps/ during finish: whether, in every
 * unit, the args of each flagged event lie after those of the events
 * before it (args_off grows with the id, as where the trace is written in
 * time order): then the least args_off of the events still to read bounds
 * what st_writer_flagged_done() may be told.
 */
bool st_writer_flagged_in_order(struct st_writer *w);

/**
 * st_writer_flagged_done - for deps/ during finish: the args below
 * @args_off will not be read again, so their memory may hold the edges
 * collected from now on (st_spill_release()).  The pointers
 * st_writer_flagged_args() gave for them must not be used any more.
 */
void st_writer_flagged_done(struct st_writer *w, uint64_t args_off);

/**
 * st_writer_flagged_drop - let the pages of the staged events and their
 * args read so far leave the resident set (they stay in the page cache and
 * every pointer stays valid): call it now and then while reading them.
 */
void st_writer_flagged_drop(struct st_writer *w);

/**
 * st_writer_edge_text - for deps/ during finish: the id of label text @s
 * (@len bytes) for st_writer_add_edge_text(), valid until finish returns:
 * resolve a buffer or semaphore name once instead of per edge.
 * Return: 0 or -errno.
 */
int st_writer_edge_text(struct st_writer *w, const char *s, size_t len, uint32_t *id);

/**
 * st_writer_add_edge_text - st_writer_add_edge_parts() with the name given
 * by its id from st_writer_edge_text().  Return: as st_writer_add_edge_parts().
 */
int st_writer_add_edge_text(struct st_writer *w, int64_t src, int64_t dst, int kind, int shape,
			    uint32_t text, uint64_t a, uint64_t b);

/** st_writer_db - the underlying connection (for deps/ during finish). */
sqlite3 *st_writer_db(struct st_writer *w);

/* ---- process-wide setup ---- */

/**
 * st_pcache_setup - give SQLite one pool of page buffers, backed by
 * transparent huge pages, for all connections of the process
 * (store/st-pcache.c says why).  Call before anything opens a database:
 * SQLite takes the setting only before it is initialised.  NX_PAGE_POOL=0
 * leaves SQLite's own allocation; NX_PAGE_POOL=N sets the slot count.
 * Return: 0 (also when turned off); -EINVAL for a bad NX_PAGE_POOL;
 * -EBUSY when SQLite was already initialised; -errno when mmap fails.
 * The program runs correctly, only slower, on any error.
 */
int st_pcache_setup(void);

/**
 * st_pcache_report - one line on @f: slots in use now and at most, and
 * the most page-cache memory that went past the pool.  For
 * NX_STORE_TIMING=1.
 */
void st_pcache_report(FILE *f);

/* ---- reading a finished trace (server, CLI) ---- */

/**
 * st_trace_open - open a finished per-trace database read-only, through
 * the "nx-map" VFS (store/st-vfs.c: the whole file mapped, not the first
 * 2 GB SQLite maps itself).
 * Return: 0 or -errno with @err set.  Close with sqlite3_close().
 */
int st_trace_open(sqlite3 **db, const char *path, struct tc_err *err);

/**
 * st_read_begin - start a read transaction on @db, a connection that
 * st_trace_open() opened, with its pages mapped rather than copied.  In
 * autocommit every statement takes the shared lock, looks for a hot journal
 * and reads the header again: tens of microseconds, paid per statement by
 * queries that run thousands (the critical path).  A finished store never
 * changes, so a failed BEGIN costs only that speed and is not reported.
 * End with st_read_end().
 */
void st_read_begin(sqlite3 *db);

/**
 * st_read_end - end the read transaction st_read_begin() started, if any.
 */
void st_read_end(sqlite3 *db);

/**
 * st_sql_register - make the virtual table `events` (schemas/trace.sql:
 * the packed event chunks seen as one row per event) available on @db, a
 * connection to a per-trace database.  st_trace_open() calls it; call it on
 * other connections (the writer's, before deps/ reads events) yourself.
 * Return: 0 or -EIO.
 */
int st_sql_register(sqlite3 *db);

/* ---- direct reads beside SQL (the dependency walks' hot lookups) ---- */

/*
 * The state the store keeps per connection that st_sql_register() set up:
 * the `events` and `edges` tables of schema "main" (their directory, decoded
 * chunks and edge blocks).  Reads through it skip SQLite's statements; each
 * answers -EAGAIN when a table is not connected and -EIO when the store is
 * damaged, and a caller then asks SQL, which reports what went wrong.
 */
struct st_conn;

/* An event as st_conn_event() reads it. */
struct st_ev_brief {
	int64_t unit, ts, dur;
	uint32_t name;
	int depth, kind;
};

/*
 * Where a stored edge's label is: in the entry read (an edge into the
 * event: @form 0 for none, else its text and numbers, for st_conn_label_of())
 * or, for an edge out of it, with its destination (@form ST_LABEL_AT_DST:
 * st_conn_label()).
 */
#define ST_LABEL_AT_DST 0xff
struct st_label_ref {
	uint64_t a, b;
	uint32_t text;
	uint8_t form;
};

/* A stored edge seen from one of its events: the event at its other end, its kind and label. */
struct st_edge_end {
	int64_t id;
	int kind;
	struct st_label_ref label;
};

/**
 * st_conn_of - the store state of @db (connecting `events` and `edges` of
 * schema "main" if they are not yet), found in a registry without running
 * a statement once both are connected.  Return: it, or NULL when @db has no
 * st_sql_register() or `events` cannot be connected (without `edges`,
 * st_conn_edges() answers -EAGAIN).
 */
struct st_conn *st_conn_of(sqlite3 *db);

/**
 * st_conn_event - event @id into *@ev.  Return: 0, -ENOENT when no event
 * has that id, -EAGAIN or -EIO (see struct st_conn).
 */
int st_conn_event(struct st_conn *c, int64_t id, struct st_ev_brief *ev);

/**
 * st_conn_event_ending - st_conn_event() for a caller that wants event @id
 * only if it ends at or after @min_end: when the chunk directory alone tells
 * that it ends before (the chunk's latest end is earlier), answer 1 without
 * decoding the chunk.  One directory lookup where st_conn_end_bound() and
 * st_conn_event() would take two.
 * Return: 0, 1, -ENOENT, -EAGAIN or -EIO.
 */
int st_conn_event_ending(struct st_conn *c, int64_t id, int64_t min_end,
			 struct st_ev_brief *ev);

/* Called by st_conn_scan() for each event; non-zero stops the scan. */
typedef int (*st_scan_fn)(void *arg, int64_t id, const struct st_ev_brief *ev);

/**
 * st_conn_scan - call @fn(@arg, id, event) for every event with an id in
 * [@lo, @hi), in id order, reading the chunks straight from the store (a
 * unit's events are a range of ids, so one unit's events in time order).
 * Each chunk is checked as the events table checks it; an error says
 * nothing of the events @fn has not seen yet, so a caller that falls back
 * to SQL carries on after the last id @fn got.
 * Return: 0, @fn's non-zero value, -EAGAIN or -EIO (see struct st_conn).
 */
int st_conn_scan(struct st_conn *c, int64_t lo, int64_t hi, st_scan_fn fn, void *arg);

/**
 * st_conn_end_bound - ts_end_bound(@id): the latest end (ts + dur) of the
 * chunk that holds event @id, from the chunk directory alone.  Return: it,
 * INT64_MIN when no chunk holds @id, INT64_MAX when it cannot be known.
 */
int64_t st_conn_end_bound(struct st_conn *c, int64_t id);

/**
 * st_conn_edges - the stored edges into event @id (their sources), or with
 * @out the edges out of it (their destinations), in the order the edges
 * table lists them, into *@v (grown with realloc; *@cap its capacity, the
 * caller frees it), *@n of them.  Labels are not read: an edge into @id
 * says where its label is (st_conn_label_of()); an edge out of it keeps its
 * label with its destination (st_conn_label()).  Return: 0, -EAGAIN or -EIO.
 */
int st_conn_edges(struct st_conn *c, int64_t id, bool out, struct st_edge_end **v, size_t *n,
		  size_t *cap);

/** struct st_crit - a source of edges into an event, as st_conn_crit() gives it. */
struct st_crit {
	int64_t src;	/* -1: none */
	int kind;	/* of its first edge into the event */
	int64_t lag;	/* the event's end less the source's */
};

/**
 * st_conn_crit - of the sources of stored edges into event @id, the one
 * that ends last (ts + dur; the larger source on equal ends) into @out[0]
 * and, when @n is 2, the one after it in that order into @out[1], as the
 * store recorded them when the trace was finished: each source (-1 when
 * there is none), the kind of its edge that st_conn_edges() lists first,
 * and @id's end less the source's (so its end is known without reading
 * it).  Asking for one costs less: the second sources of a block are
 * decoded when first asked.  Return: 0, 1 when the store cannot say (ask
 * st_conn_edges()), -EAGAIN, -ENOMEM or -EIO.
 */
int st_conn_crit(struct st_conn *c, int64_t id, int n, struct st_crit *out);

/**
 * st_conn_label - the label of the first stored edge @src -> @dst of @kind
 * (the one the edges table lists first) into @out.  Reading labels in order
 * of @dst reads each edge block once.
 * Return: 0, 1 when that edge has no label, -ENOENT when there is no such
 * edge, -EAGAIN or -EIO.
 */
int st_conn_label(struct st_conn *c, int64_t src, int64_t dst, int kind, struct tc_buf *out);

/**
 * st_conn_label_of - the label that @ref (from st_conn_edges(), not
 * ST_LABEL_AT_DST) points at, into @out: its text, rebuilt with its numbers.
 * Return: 0, 1 when the edge has no label, -EAGAIN or -EIO.
 */
int st_conn_label_of(struct st_conn *c, const struct st_label_ref *ref, struct tc_buf *out);

/**
 * st_stats_to_json_text - the stats as a JSON object text (malloc'd), the
 * fields `ingest --json` prints: slices, instants, counters, units, devices,
 * flows (edge counts by kind), start_ns, end_ns, bad_events, overlaps, ...
 */
char *st_stats_to_json_text(const struct st_stats *s);

#endif /* ST_STORE_H */
