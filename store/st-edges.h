/* SPDX-License-Identifier: MIT */
/*
 * store/st-edges.h - private to store/: packed dependency edges
 * (schemas/trace.sql, tables edge_blocks, edge_crit and edge_labels) and the read-only
 * virtual table `edges` over them.
 *
 * Edges are not stored one SQLite row each.  Event ids are cut into blocks
 * of ST_EDGE_BLOCK; edge_blocks row b holds two blobs for the events
 * b * ST_EDGE_BLOCK .. (b + 1) * ST_EDGE_BLOCK - 1, and edge_crit row b a
 * third (a row of its own, so that reading it does not read the pages of
 * the other two first):
 *
 *   ins:  the edges into them, by dst (then in the order they were added),
 *         each  uvarint dst - previous dst (the first: dst - b * ST_EDGE_BLOCK)
 *               svarint src - dst
 *               the label part
 *   outs: the edges out of them, by src, each
 *               uvarint src - previous src, svarint dst - src, uvarint kind
 *         without the label: a reader finds it in the ins of dst (the same
 *         src and kind; when explicit edges repeat a pair, the n-th of the
 *         outs is the n-th of the ins, both keep the order edges came in).
 *         That spares the bytes of every label a second time.
 *
 * Each blob starts with an index of ST_EDGE_GROUPS entries, one per group of
 * ST_EDGE_GROUP consecutive events (ST_EDGE_IDX bytes in all), so that a
 * lookup decodes the entries of one group, not the block's up to its event:
 * entry g is a u32, little-endian, the offset (from the end of the index) of
 * the first entry whose event is in group g or later (the entries' length
 * when none is), then a u8, the event of the entry before that one less the
 * block's first id (0 when there is none): the id the first entry's delta is
 * taken from.
 *
 *   crit: for the critical path's walk, of each event's edges in, the
 *         source that ends last (the larger source on equal ends; the kind
 *         of that source's first edge in the ins) and the next source in
 *         that order, in two parts: uvarint length of the first part, then
 *         the first part, then the second.  Each part: per event from the
 *         block's first up to the last with edges in (events past the blob
 *         have none), 0 for none, else 1 + (zigzag(src - dst) << 3 | kind)
 *         then zigzag(end of dst - end of src), so that the walk knows when
 *         the source ends without reading it (no blob when a difference
 *         does not fit in 64 bits).  No index: a reader decodes a whole
 *         part (at most 512 varints), the second only when asked.
 *
 * NULL when a block has no edge that way.  The label part is uvarint
 * x << 3 | kind, where x is 0 for no label, else t << 2 | form:
 *
 *   form 1: the label is text t;
 *   form 2: then uvarint lo, uvarint hi - lo: the label is text t followed
 *           by "[lo:hi]" in decimal (the bytes a derived edge is about);
 *   form 3: then uvarint n: text t followed by ">=n" (a semaphore wait).
 *
 * The store picks form 2 or 3 only when rebuilding gives back the exact
 * bytes it was handed (canonical decimals), so that the prefixes, a few
 * buffer and semaphore names, are the only texts most derived labels need.
 * Texts are ids into edge_labels: row g holds texts g * ST_EDGE_LABELS ..
 * (g + 1) * ST_EDGE_LABELS - 1 as uvarint length + bytes each, in id order
 * (text 0 is an empty entry).  Equal texts share an id while the interning
 * table has room (it is cleared when full, so memory stays bounded; a text
 * may then be stored twice).
 *
 * While a trace is finished, edges arrive in any order (explicit ones from
 * the reader, then derived ones in processing order).  Each is appended to
 * two partitions (of its dst and of its src; a partition is a range of
 * 2^k blocks, at most ST_EDGE_PARTS of them), kept in memory up to a budget
 * and spilled to an unlinked file beyond it.  st_edges_finish() then loads
 * one partition at a time, sorts it with a counting sort on the event id and
 * writes its blocks: memory is the budget plus one partition.
 */
#ifndef ST_EDGES_H
#define ST_EDGES_H

#include <stdint.h>
#include <stddef.h>
#include <sqlite3.h>
#include "common/tc.h"

/*
 * Event ids per row of edge_blocks, edge_outs and edge_crit (version 11;
 * 256 before).  SQLite keeps a row of up to a page less 35 bytes whole on
 * its leaf page, so rows between half a page and a page take a page each:
 * at 256 the ins of a dense engine trace (about 20 KB, 7 edges an event)
 * left a third of their 32 KB pages empty.
 */
#define ST_EDGE_BLOCK 128
#define ST_EDGE_GROUP 4	/* events per entry of a blob's index */
#define ST_EDGE_GROUPS (ST_EDGE_BLOCK / ST_EDGE_GROUP)
#define ST_EDGE_IDX (ST_EDGE_GROUPS * 5)	/* bytes of a blob's index */
#define ST_EDGE_LABELS 256	/* labels per edge_labels row */
#define ST_EDGE_PARTS 256	/* partitions at most */
#define ST_EDGE_RAM ((size_t)64 << 20)	/* edge bytes kept in memory: the least budget */
#define ST_EDGE_RAM_MAX ((size_t)4 << 30)	/* and the most */

struct st_edges;
struct st_spill;
struct tc_rank;

/**
 * st_edges_ram - the edge bytes a trace's collector keeps in memory before
 * it spills them: NX_EDGE_RAM_MB (MiB, 1 to 4096) when set to such a number,
 * else a sixteenth of the memory the process may use (tc_mem_total(): the
 * machine's, or its cgroup's limit) within ST_EDGE_RAM and ST_EDGE_RAM_MAX.
 */
size_t st_edges_ram(void);

/**
 * st_edges_new - a collector for the edges of a trace whose event ids are
 * at most @max_id, written through @db (tables edge_blocks, edge_crit and edge_labels
 * must exist and be empty).  Records beyond @ram bytes go to an unlinked
 * file named @spill_base + ".edges".  Free with st_edges_free().
 * Return: 0 or -errno with @err set.
 */
int st_edges_new(struct st_edges **out, sqlite3 *db, int64_t max_id, size_t ram,
		 const char *spill_base, struct tc_err *err);

/**
 * st_edges_set_lender - collect into the memory @sp lends (st_spill_lend())
 * while it has some, before new pages: @sp is borrowed, and must not be
 * closed before st_edges_free(@x).
 */
void st_edges_set_lender(struct st_edges *x, struct st_spill *sp);

/**
 * st_edges_set_ends - the end (ts + dur) of every event, by id (0 to the
 * collector's max_id), borrowed until st_edges_finish() returns: with it,
 * each block also gets its crit blob (the latest-ending source of each
 * event's edges in); without it, none.
 */
void st_edges_set_ends(struct st_edges *x, const int64_t *ends);

/**
 * st_edges_set_ends_ranked - as st_edges_set_ends(), for when few events
 * have edges: @ends holds the end of each id in @set, in the order of the
 * ids (@ends[tc_rank_of(@set, id)]), and @set must hold both ends of every
 * edge added.  Both borrowed until st_edges_finish() returns.
 */
void st_edges_set_ends_ranked(struct st_edges *x, const struct tc_rank *set,
			      const int64_t *ends);

/**
 * st_edges_add - collect edge @src -> @dst of @kind (0..7) with @label
 * (@len bytes, not NUL-terminated; NULL: no label).
 * Return: 0, -EINVAL (id out of range, bad kind) or -EIO (writing a label
 * row or the spill failed; later calls fail too).
 */
int st_edges_add(struct st_edges *x, int64_t src, int64_t dst, int kind, const char *label,
		 size_t len);

/**
 * st_edges_add_parts - st_edges_add() with the label "@name[@a:@b]" (@shape
 * ST_LABEL_BYTES, @a <= @b) or "@name>=@a" (ST_LABEL_AT_LEAST) in parts.
 */
int st_edges_add_parts(struct st_edges *x, int64_t src, int64_t dst, int kind, int shape,
		       const char *name, size_t len, uint64_t a, uint64_t b);

/**
 * st_edges_text_id - the id of label text @s (@len bytes) for
 * st_edges_add_text(): interned, or a new one.  An id stays valid for the
 * collector's life.  Return: 0 or -errno (as st_edges_add()).
 */
int st_edges_text_id(struct st_edges *x, const char *s, size_t len, uint32_t *id);

/**
 * st_edges_add_text - st_edges_add_parts() with the name given as its text
 * id (st_edges_text_id()): no hashing or lookup per edge.
 */
int st_edges_add_text(struct st_edges *x, int64_t src, int64_t dst, int kind, int shape,
		      uint32_t text, uint64_t a, uint64_t b);

/**
 * st_edges_usage - the bytes collected so far: kept in memory (full pages)
 * into *@kept, written to the spill file into *@spilled.
 */
void st_edges_usage(const struct st_edges *x, uint64_t *kept, uint64_t *spilled);

/**
 * st_edges_finish - sort what was collected and write the edge_blocks and
 * edge_labels rows.  @tick (may be NULL) gets @ctx and the share of the
 * partitions written: 0 before the first, when there are any, then after
 * each one; a negative return stops the packing with -ECANCELED (an
 * ingest cancelled).  Return: 0 or -errno with @err set.
 */
int st_edges_finish(struct st_edges *x, int (*tick)(void *ctx, double frac), void *ctx,
		    struct tc_err *err);

/** st_edges_free - release @x (NULL is a no-op); the spill file goes with it. */
void st_edges_free(struct st_edges *x);

/** st_edges_count - edges added so far. */
int64_t st_edges_count(const struct st_edges *x);

/**
 * st_edges_register - make the eponymous read-only virtual table `edges`
 * (src, dst, kind, label) available on @db, a per-trace connection.
 * Lookups by dst = ? or src = ? decode one block; other queries scan every
 * block in dst order.  rowid numbers the rows of one scan (unique in it,
 * not an identifier of the edge).  Return: 0 or -EIO.
 */
int st_edges_register(sqlite3 *db);

#endif
