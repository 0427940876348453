/* SPDX-License-Identifier: MIT */
/*
 * store/st-flagged.c - the flagged events of a trace being finished, for
 * deps/ (see st-flagged.h): one spill file per finish part, a table by unit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store/st-flagged.h"

struct st_funit {
	uint64_t first;		/* index of its first record in its part's file */
	uint64_t n;
	int part;
	bool unordered;		/* the args of a record start before those of one before it */
	uint64_t args_last;	/* where the last record's args start */
};

struct st_flagged {
	struct st_spill part[ST_FLAGGED_PARTS];
	uint64_t count[ST_FLAGGED_PARTS];	/* records written by each part */
	struct st_funit *units;			/* [1 .. nunits] */
	int nunits;
	bool mapped;
};

int
st_flagged_new(struct st_flagged **out, const char *base, int nunits, struct tc_err *err)
{
	struct st_flagged *fl = tc_xcalloc(1, sizeof(*fl));
	int rc = 0;

	for (int p = 0; p < ST_FLAGGED_PARTS; p++)
		fl->part[p].fd = -1;
	fl->nunits = nunits;
	fl->units = tc_xcalloc((size_t)nunits + 1, sizeof(*fl->units));
	for (int p = 0; p < ST_FLAGGED_PARTS && !rc; p++) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), ".flagged%d", p);
		rc = st_spill_open(&fl->part[p], base, suffix, ST_SPILL_RAM, err);
	}
	if (rc < 0) {
		st_flagged_free(fl);
		fl = NULL;
	}
	*out = fl;
	return rc;
}

int
st_flagged_add(struct st_flagged *fl, int part, int unit, const struct st_fev *e)
{
	struct st_funit *u = &fl->units[unit];

	if (!u->n) {
		u->part = part;
		u->first = fl->count[part];
	}
	u->n++;
	if (e->args_len) {
		if (e->args_off < u->args_last)
			u->unordered = true;
		u->args_last = e->args_off;
	}
	fl->count[part]++;
	return st_spill_write(&fl->part[part], e, sizeof(*e));
}

int
st_flagged_map(struct st_flagged *fl)
{
	int rc = 0;

	for (int p = 0; p < ST_FLAGGED_PARTS && !rc; p++)
		rc = st_spill_map(&fl->part[p]);
	fl->mapped = rc == 0;
	return rc;
}

const struct st_fev *
st_flagged_unit(const struct st_flagged *fl, int unit, size_t *n)
{
	const struct st_funit *u;

	*n = 0;
	if (!fl || !fl->mapped || unit < 1 || unit > fl->nunits)
		return NULL;
	u = &fl->units[unit];
	if (!u->n)
		return NULL;
	*n = (size_t)u->n;
	/* the map is page-aligned and the records 8-byte multiples */
	return (const struct st_fev *)(fl->part[u->part].map + u->first * sizeof(struct st_fev));
}

void
st_flagged_drop(struct st_flagged *fl)
{
	for (int p = 0; fl && p < ST_FLAGGED_PARTS; p++)
		st_spill_drop(&fl->part[p]);
}

void
st_flagged_free(struct st_flagged *fl)
{
	if (!fl)
		return;
	for (int p = 0; p < ST_FLAGGED_PARTS; p++)
		if (fl->part[p].fd >= 0)
			st_spill_close(&fl->part[p]);
	free(fl->units);
	free(fl);
}

/* ---- for deps/ (store.h) ---- */

int
st_writer_flagged_units(struct st_writer *w)
{
	return w->flagged ? w->flagged->nunits : 0;
}

const struct st_fev *
st_writer_flagged(struct st_writer *w, int unit, size_t *n)
{
	return st_flagged_unit(w->flagged, unit, n);
}

const char *
st_writer_flagged_args(struct st_writer *w, const struct st_fev *e)
{
	if (!e->args_len || e->args_off + e->args_len > w->args.mapsz)
		return NULL;
	return w->args.map + e->args_off;
}

bool
st_writer_flagged_in_order(struct st_writer *w)
{
	const struct st_flagged *fl = w->flagged;

	for (int i = 1; fl && i <= fl->nunits; i++)
		if (fl->units[i].unordered)
			return false;
	return fl != NULL;
}

void
st_writer_flagged_done(struct st_writer *w, uint64_t args_off)
{
	st_spill_release(&w->args, args_off);
}

void
st_writer_flagged_drop(struct st_writer *w)
{
	st_flagged_drop(w->flagged);
	st_spill_drop(&w->args);
}
