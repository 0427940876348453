/* SPDX-License-Identifier: MIT */
/*
 * store/st-flagged.c - the flagged events of a trace being finished, for
 * deps/ (see st-flagged.h): per-unit notes, and readers that merge a unit's
 * stretches of the sorted runs again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store/st-flagged.h"

struct st_flagged *
st_flagged_new(int nunits)
{
	struct st_flagged *fl = tc_xcalloc(1, sizeof(*fl));

	fl->nunits = nunits;
	fl->units = tc_xcalloc((size_t)nunits + 1, sizeof(*fl->units));
	return fl;
}

void
st_flagged_free(struct st_flagged *fl)
{
	if (!fl)
		return;
	free(fl->units);
	free(fl);
}

/* ---- for deps/ (store.h) ---- */

struct st_fcur {
	struct st_writer *w;
	struct st_merge m;	/* owned: over this one unit */
	int64_t id;		/* the id of the next event the merge gives */
	int64_t left;		/* flagged events not given yet */
};

int
st_writer_flagged_units(struct st_writer *w)
{
	return w->flagged ? w->flagged->nunits : 0;
}

int64_t
st_writer_flagged_count(struct st_writer *w, int unit)
{
	if (!w->flagged || unit < 1 || unit > w->flagged->nunits)
		return 0;
	return w->flagged->units[unit].n;
}

struct st_fcur *
st_writer_flagged_open(struct st_writer *w, int unit)
{
	struct st_fcur *c;
	int64_t n = st_writer_flagged_count(w, unit);

	if (!n)
		return NULL;
	c = tc_xcalloc(1, sizeof(*c));
	c->w = w;
	c->id = w->units[unit].first;	/* the finish pass gave them in this order */
	c->left = n;
	st_keys_merge_init(&w->keys, &c->m, unit, unit);
	return c;
}

size_t
st_fcur_read(struct st_fcur *c, struct st_fev *v, size_t max)
{
	const struct st_srec *k;
	size_t n = 0;

	/* the unit's last events may be plain ones: not read */
	while (n < max && c->left && (k = st_keys_merge_next(&c->w->keys, &c->m))) {
		int64_t id = c->id++;
		struct st_fev *e = &v[n];

		if (!(k->flags & 1))
			continue;
		e->ts = k->key.ts;
		e->dur = k->key.dur;
		e->args_off = k->args_off;
		e->id = (uint32_t)id;
		e->seq = k->key.seq;
		/* as the finish pass stored them */
		e->args_len = st_writer_args_mapped(c->w, k->args_off, k->args_len) ? k->args_len : 0;
		e->pad_ = 0;
		c->left--;
		n++;
	}
	return n;
}

void
st_fcur_free(struct st_fcur *c)
{
	if (!c)
		return;
	st_keys_merge_free(&c->m);
	free(c);
}

const char *
st_writer_flagged_args(struct st_writer *w, const struct st_fev *e)
{
	if (!st_writer_args_mapped(w, e->args_off, e->args_len))
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
	st_keys_drop(&w->keys);
	st_spill_drop(&w->args);
}
