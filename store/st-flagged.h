/* SPDX-License-Identifier: MIT */
/*
 * store/st-flagged.h - private to store/: what deps/ needs to read the
 * flagged events of a trace being finished (args with access sets or
 * semaphores, events.flags bit 0) without the SQL `events` table
 * (st_writer_flagged_open() in store.h).
 *
 * No copy of the events is made: the finish pass notes, per unit, how many
 * of its events are flagged and whether their args lie in id order, and
 * keeps the sorted runs (st-keys.c) until deps/ is done; a reader of a unit
 * merges that unit's stretches of the runs again, as the finish pass did,
 * which gives its events in id order.
 */
#ifndef ST_FLAGGED_H
#define ST_FLAGGED_H

#include "store/store-int.h"

struct st_funit {
	int64_t n;		/* flagged events */
	uint64_t args_last;	/* where the args of the last one seen start */
	bool unordered;		/* the args of one start before those of one before it */
};

struct st_flagged {
	struct st_funit *units;	/* owned: [1 .. nunits] */
	int nunits;
};

/** st_flagged_new - the notes for units 1..@nunits; free with st_flagged_free(). */
struct st_flagged *st_flagged_new(int nunits);

/**
 * st_flagged_note - the finish pass met a flagged event of @unit whose args
 * start at @args_off (@args_len bytes).  A unit's events come in id order
 * from one finish part; two parts may note at once, for their own units.
 */
static inline void
st_flagged_note(struct st_flagged *fl, int unit, uint64_t args_off, uint32_t args_len)
{
	struct st_funit *u = &fl->units[unit];

	u->n++;
	if (args_len) {
		if (args_off < u->args_last)
			u->unordered = true;
		u->args_last = args_off;
	}
}

/** st_flagged_free - release @fl; NULL is a no-op. */
void st_flagged_free(struct st_flagged *fl);

#endif
