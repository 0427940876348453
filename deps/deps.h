/* SPDX-License-Identifier: MIT */
/*
 * deps/deps.h - dependency analysis over a trace store: edges derived at
 * ingest from access sets and semaphores, and the queries the server and the
 * CLI run (edges of one event, chains, critical path).
 */
#ifndef DEPS_DEPS_H
#define DEPS_DEPS_H

#include <stdint.h>
#include <sqlite3.h>
#include <jansson.h>
#include "common/tc.h"
#include "store/store.h"

/**
 * deps_derive - called by st_writer_finish() after events are sorted and
 * numbered and explicit edges are stored: derive flow/anti/output edges from
 * access sets and order edges from semaphore waits over the events with
 * flags bit 0, which the finish pass collected (st_writer_flagged()), hand
 * them to the store (st_writer_add_edge_parts()), add them to
 * @stats->edges and count malformed strings with
 * st_writer_count_bad_access().  Nothing when !deps_enabled().
 * Return: 0 or -errno with @err set.
 */
int deps_derive(struct st_writer *w, struct st_stats *stats, struct tc_err *err);

/**
 * deps_enabled - whether deps_derive() will analyse anything: false when
 * NX_DEPS_DISABLE=1 (bench/deps-bench.sh measures the ingest without it),
 * so that finish does not collect the flagged events for nothing.
 */
bool deps_enabled(void);

#define DEPS_DIR_IN  1	/* predecessors: what this waited on */
#define DEPS_DIR_OUT 2	/* successors: what waited on this */
#define DEPS_KINDS_ALL 0xfu	/* bit (1 << enum st_edge_kind) */
#define DEPS_CP_HOPS 10000	/* critical path: the latest hops listed unless told */
#define DEPS_CP_HOPS_MAX 100000	/* and the most a caller may ask for */
#define DEPS_CP_BUDGET 200000	/* hops walked (for the totals) unless told */
#define DEPS_CP_BUDGET_MAX 1000000	/* and the most a caller may ask for */

/**
 * deps_event_edges - edges into and out of event @eid by kind, stored ones
 * plus program order derived at query time:
 *   {"in": {"flow": [E...], "order": [...], "anti": [...], "output": [...]},
 *    "out": {...}}
 * with E = {"id","name","unit","ts","dur","label"}, plus "truncated": true
 * when more than 1000 edges exist in one direction (the rest are left out).
 * Program order (label "program order") is derived at query time between
 * sibling slices on engine/queue/stream/thread units (docs/dependencies.md).
 * Return: a new reference, or NULL with @err set (-ENOENT: no such event).
 */
json_t *deps_event_edges(sqlite3 *db, int64_t eid, struct tc_err *err);

/**
 * deps_chain - the dependency chain around @eid following @kinds (mask) in
 * direction @dir (DEPS_DIR_IN|OUT) up to @depth hops, visiting at most
 * @budget edges: {"nodes": [{"id","name","unit","ts","dur","hop"}],
 * "edges": [{"src","dst","kind","label"}], "truncated": bool}.
 * "hop" is 0 for @eid, -k for predecessors and +k for successors; with both
 * directions, predecessors are only followed backwards and successors only
 * forwards.  Return: a new reference, or NULL with @err set.
 */
json_t *deps_chain(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
		   struct tc_err *err);

/**
 * deps_chain_text - deps_chain()'s answer as the JSON text the API sends
 * (what json_dumps() with JSON_COMPACT | JSON_ENSURE_ASCII prints; a name
 * that is not UTF-8 gets U+FFFD for each bad byte), written as it is read
 * rather than built as a JSON value first.
 * Return: the text (malloc'd, *@len bytes), or NULL with @err set.
 */
char *deps_chain_text(sqlite3 *db, int64_t eid, unsigned kinds, int dir, int depth, int budget,
		      size_t *len, struct tc_err *err);

/**
 * deps_critical_path - walk back from @end_eid (or, when 0, the event that
 * ends last in [@start_ns, @end_ns]) along the predecessor whose completion
 * came last, at most @budget hops (0: DEPS_CP_BUDGET): {"hops": [{"id",
 * "name","unit","ts","dur","kind","label","wait_ns","work_ns"}],
 * "hops_total", "units": [{"unit","hops","work_ns","wait_ns"}], "kinds":
 * {"KIND": {"hops","work_ns","wait_ns"}}, "total_ns", "wait_ns", "work_ns",
 * "truncated"}.  hops lists the latest @max_hops (0: DEPS_CP_HOPS) of the
 * hops_total walked, first to last; the totals, units (largest working share
 * first) and kinds (by the edge into each hop) cover every hop walked;
 * truncated: the walk stopped at @budget with more path before it.
 */
json_t *deps_critical_path(sqlite3 *db, int64_t end_eid, int64_t start_ns, int64_t end_ns,
			   unsigned kinds, int max_hops, int budget, struct tc_err *err);

/**
 * deps_critical_path_text - deps_critical_path()'s answer as the JSON text
 * the API sends (as deps_chain_text() for deps_chain()).
 * Return: the text (malloc'd, *@len bytes), or NULL with @err set.
 */
char *deps_critical_path_text(sqlite3 *db, int64_t end_eid, int64_t start_ns, int64_t end_ns,
			      unsigned kinds, int max_hops, int budget, size_t *len,
			      struct tc_err *err);

#endif /* DEPS_DEPS_H */
