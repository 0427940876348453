/* SPDX-License-Identifier: MIT */
/*
 * store/st-flagged.h - private to store/: the flagged events of a trace
 * being finished (args with access sets or semaphores, events.flags bit 0),
 * collected by the finish pass as it numbers them, for deps/ to read back
 * without the SQL `events` table (st_writer_flagged() in store.h).
 *
 * The finish pass runs in up to ST_FLAGGED_PARTS parts at once, each over
 * its own units in id order; each part appends its records (struct st_fev,
 * 40 bytes) to its own unlinked spill file, so memory stays at the spills'
 * write buffers whatever the trace's size.  A unit's records are contiguous
 * in its part's file: a table by unit says where.  The args texts stay in
 * the writer's args spill; the records point into it.
 */
#ifndef ST_FLAGGED_H
#define ST_FLAGGED_H

#include "store/store-int.h"

#define ST_FLAGGED_PARTS 2

struct st_flagged;

/**
 * st_flagged_new - a collector for the flagged events of units 1..@nunits,
 * spilling next to @base.  Free with st_flagged_free().
 * Return: 0 or -errno with @err set.
 */
int st_flagged_new(struct st_flagged **out, const char *base, int nunits, struct tc_err *err);

/**
 * st_flagged_add - append event @e of unit @unit, from finish part @part
 * (0 .. ST_FLAGGED_PARTS - 1).  A unit's events come from one part, in id
 * order, one unit after the other.  Parts may call this at the same time.
 * Return: 0 or -errno (a spill write failed).
 */
int st_flagged_add(struct st_flagged *fl, int part, int unit, const struct st_fev *e);

/** st_flagged_map - done adding: map the spills for reading.  0 or -errno. */
int st_flagged_map(struct st_flagged *fl);

/** st_flagged_unit - unit @unit's records (*@n of them); NULL when none. */
const struct st_fev *st_flagged_unit(const struct st_flagged *fl, int unit, size_t *n);

/** st_flagged_drop - let the mapped pages read so far go (st_spill_drop()). */
void st_flagged_drop(struct st_flagged *fl);

/** st_flagged_free - release @fl and its spills; NULL is a no-op. */
void st_flagged_free(struct st_flagged *fl);

#endif
