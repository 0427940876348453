/* SPDX-License-Identifier: MIT */
/*
 * store/st-vtab.c - the read-only, eponymous-only virtual table `events`:
 * the packed event chunks of a trace (st-chunk.h) seen as one row per event,
 * in ascending id order.
 *
 * Plan: xBestIndex takes every usable =, >, >=, <, <= constraint on an
 * integer column (IN on name as one list, sqlite3_vtab_in()), hands them to
 * xFilter in argv (omit stays 0: SQLite checks them again) and writes them
 * into idxStr, which EXPLAIN QUERY PLAN shows and xFilter parses back:
 * "unit= depth= ts< desc".  xFilter turns them into one inclusive integer
 * range per column, finds the chunks to read by binary search in the
 * directory (id range; a unit's chunks; within one unit, ts by ts_first and
 * ts_last), skips chunks by their depth range, latest end, time range and
 * name Bloom filter, narrows each chunk to an event index range (ids are
 * first + i, times are sorted within a chunk) and tests the rest per event.
 *
 * The directory is read once per connection, on the first xFilter: a trace
 * is immutable once its events are queried.  It comes from event_dir's
 * packed parts (st-chunk.h), or from the rows of event_chunks in a store
 * without them or whose parts do not check.  Decoded chunks
 * sit in a small per-connection cache (the server does many point lookups by
 * id); an entry is reference-counted so that a cursor keeps its chunk while
 * another cursor of the same statement evicts it.  The args blob is read
 * only when the args column is asked for, one event's bytes at a time,
 * through a per-cursor sqlite3_blob handle.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store/st-chunk.h"
#include "store/store-int.h"

/* Columns, in declaration order. */
enum vt_col {
	VT_ID, VT_UNIT, VT_TS, VT_DUR, VT_KIND, VT_DEPTH, VT_NAME, VT_CAT, VT_VALUE,
	VT_SEQ, VT_FLAGS, VT_ARGS, VT_TS_END, VT_NCOLS
};

static const char *const vt_col_name[VT_NCOLS] = {
	"id", "unit", "ts", "dur", "kind", "depth", "name", "cat", "value", "seq", "flags",
	"args", "ts_end",
};

#define VT_BIT(c) (1u << (c))
/* columns whose constraints the module uses (integers only) */
#define VT_USABLE (~(VT_BIT(VT_VALUE) | VT_BIT(VT_ARGS)) & (VT_BIT(VT_NCOLS) - 1))

#define VT_CACHE 8		/* decoded chunks kept per connection */
#define VT_MAX_ARGV 16		/* constraints used per plan, at most */
#define VT_BLOOM_MAX 32		/* larger name lists skip the Bloom test */
#define VT_ROWS_GUESS 1048576.0	/* rows assumed by the cost model */
#define VT_PLANS 8		/* parsed plans kept per connection */
#define VT_ID_SHIFT 8		/* ids per block of the id map: 256, a full chunk */

/* One decoded chunk; refs: the cache slot plus each cursor on it. */
struct vt_ent {
	int refs;
	int chunk;		/* index into the directory */
	uint64_t used;		/* LRU tick */
	struct st_cev ev[ST_CHUNK_EVENTS];
};

struct vt_tab {
	sqlite3_vtab base;
	sqlite3 *db;
	struct st_conn *conn;	/* shared with the connection's edges and functions */
	char *schema;		/* sqlite3_malloc'd */
	bool loaded;
	bool load_failed;	/* a direct read could not load the directory */
	struct st_chunk_dir *dir;	/* sorted by first id */
	int ndir;
	/*
	 * id map: idmap[b] is the first chunk whose last id is at least
	 * b << VT_ID_SHIFT, for b in [0, nidmap) (idmap[nidmap - 1] == ndir), so
	 * that finding an id's chunk reads two words and a chunk or two of the
	 * directory instead of a binary search over all of it (3 MB at 10M
	 * events, a cache miss a step).  NULL when ids are too sparse for it.
	 */
	uint32_t *idmap;
	int64_t nidmap;
	sqlite3_stmt *get_cols;
	struct vt_ent *cache[VT_CACHE];
	int cached[VT_CACHE];	/* cache[i]'s chunk, -1: none (a probe reads one line) */
	/*
	 * cache[i]'s ids: [cfirst[i], cfirst[i] + ccount[i]), ccount[i] 0 when
	 * none; dir[cached[i]]'s first and count, copied so that finding an id
	 * among the cached chunks reads two lines, not eight directory rows
	 */
	int64_t cfirst[VT_CACHE];
	int64_t ccount[VT_CACHE];
	int hit;		/* the slot that answered last */
	uint64_t tick;
	/* idxStr texts parsed (a query may run thousands of point lookups) */
	struct vt_plan {
		char *text;	/* malloc'd copy of the idxStr; NULL: unused */
		int n;		/* constraints, one per argv value */
		uint8_t col[VT_MAX_ARGV], op[VT_MAX_ARGV];
		bool desc;
	} plans[VT_PLANS];
	int plan_next;		/* the slot the next new plan takes */
};

struct vt_cur {
	sqlite3_vtab_cursor base;
	struct vt_tab *t;
	/* the plan: inclusive bounds of the columns in @active */
	int64_t lo[VT_NCOLS], hi[VT_NCOLS];
	uint32_t active;	/* columns with bounds */
	uint32_t evmask;	/* columns tested per event */
	int64_t *names;		/* name IN (...), sorted; NULL: none */
	int nnames;
	bool in_names;
	int step;		/* +1 ascending id, -1 descending */
	int c0, c1;		/* directory range [c0, c1) */
	/* the position */
	bool eof;
	int c;			/* current chunk */
	struct vt_ent *ent;	/* its events, NULL before loading it */
	int i, i0, i1;		/* current event, the chunk's index range */
	/* the args column */
	sqlite3_blob *blob;
	int64_t blob_row;
	int nread;		/* args read from this row */
	bool whole;		/* @abuf holds the row's whole args blob */
	char *abuf;
	size_t acap;
};

static int
vt_err(struct vt_tab *t, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sqlite3_free(t->base.zErrMsg);
	t->base.zErrMsg = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	return rc;
}

static void
vt_ent_put(struct vt_ent *e)
{
	if (e && --e->refs == 0)
		free(e);
}

/* ---- connection ---- */

static int
vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
	   char **errp)
{
	struct vt_tab *t;
	int rc;

	(void)argc;
	(void)errp;
	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(id INTEGER, unit INTEGER, ts INTEGER, "
				  "dur INTEGER, kind INTEGER, depth INTEGER, name INTEGER, "
				  "cat INTEGER, value REAL, seq INTEGER, flags INTEGER, args TEXT, "
				  "ts_end INTEGER)");
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	t = sqlite3_malloc(sizeof(*t));
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < VT_CACHE; i++)
		t->cached[i] = -1;
	t->db = db;
	t->conn = aux;
	t->schema = sqlite3_mprintf("%s", argv[1]);
	if (!t->schema) {
		sqlite3_free(t);
		return SQLITE_NOMEM;
	}
	if (t->conn && !strcmp(t->schema, "main"))
		t->conn->events = t;
	*out = &t->base;
	return SQLITE_OK;
}

static int
vt_disconnect(sqlite3_vtab *vt)
{
	struct vt_tab *t = (struct vt_tab *)vt;

	if (t->conn && t->conn->events == t)
		t->conn->events = NULL;
	for (int i = 0; i < VT_CACHE; i++)
		vt_ent_put(t->cache[i]);
	for (int i = 0; i < VT_PLANS; i++)
		free(t->plans[i].text);
	sqlite3_finalize(t->get_cols);
	free(t->dir);
	free(t->idmap);
	sqlite3_free(t->schema);
	sqlite3_free(t);
	return SQLITE_OK;
}

/* ---- plan ---- */

enum vt_op { VT_EQ, VT_GT, VT_GE, VT_LT, VT_LE, VT_IN };
static const char *const vt_op_name[] = { "=", ">", ">=", "<", "<=", "=IN" };

/*
 * Whether rows in id order (ascending, or descending when *@desc) satisfy
 * the ORDER BY: id order is (unit, ts, dur DESC, seq) and ids are unique.
 * @eq: columns fixed by a single-valued = constraint (any order on them).
 */
static bool
vt_order(const sqlite3_index_info *info, uint32_t eq, bool *desc)
{
	int stage = 0;		/* 0: unit may come, 1: ts may come */
	int dir = -1;

	*desc = false;
	if (eq & VT_BIT(VT_ID))
		return true;	/* at most one row */
	for (int k = 0; k < info->nOrderBy; k++) {
		int col = info->aOrderBy[k].iColumn < 0 ? VT_ID : info->aOrderBy[k].iColumn;
		int d = info->aOrderBy[k].desc ? 1 : 0;

		if (eq & VT_BIT(col))
			continue;
		if (dir >= 0 && d != dir)
			return false;
		dir = d;
		if (col == VT_ID)
			break;	/* unique: the rest cannot matter */
		if (col == VT_UNIT && stage == 0)
			stage = 1;
		else if (col == VT_TS && (stage == 1 || (eq & VT_BIT(VT_UNIT))) && stage < 2)
			stage = 2;
		else
			return false;
	}
	*desc = dir == 1;
	return true;
}

static int
vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	uint32_t eq = 0, lo = 0, hi = 0, any = 0;
	char plan[VT_MAX_ARGV * 12 + 16] = "";
	size_t len = 0;
	int nargv = 0;
	double rows = VT_ROWS_GUESS, scan;
	bool desc = false, name_in = false;

	(void)vt;
	for (int i = 0; i < info->nConstraint && nargv < VT_MAX_ARGV; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		int col = c->iColumn < 0 ? VT_ID : c->iColumn;
		enum vt_op op;

		if (!c->usable || !(VT_USABLE & VT_BIT(col)))
			continue;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ: op = VT_EQ; break;
		case SQLITE_INDEX_CONSTRAINT_GT: op = VT_GT; break;
		case SQLITE_INDEX_CONSTRAINT_GE: op = VT_GE; break;
		case SQLITE_INDEX_CONSTRAINT_LT: op = VT_LT; break;
		case SQLITE_INDEX_CONSTRAINT_LE: op = VT_LE; break;
		default: continue;
		}
		if (op == VT_EQ && col == VT_NAME && sqlite3_vtab_in(info, i, -1)) {
			if (name_in)
				continue;	/* one list is enough */
			sqlite3_vtab_in(info, i, 1);
			op = VT_IN;
			name_in = true;
		}
		info->aConstraintUsage[i].argvIndex = ++nargv;
		info->aConstraintUsage[i].omit = 0;
		len += (size_t)snprintf(plan + len, sizeof(plan) - len, "%s%s%s", len ? " " : "",
					vt_col_name[col], vt_op_name[op]);
		any |= VT_BIT(col);
		if (op == VT_EQ)
			eq |= VT_BIT(col);
		if (op == VT_EQ || op == VT_IN || op == VT_GT || op == VT_GE)
			lo |= VT_BIT(col);
		if (op == VT_EQ || op == VT_IN || op == VT_LT || op == VT_LE)
			hi |= VT_BIT(col);
	}

	/* cost: rows decoded; estimatedRows: rows returned (rough shares) */
	if (eq & VT_BIT(VT_ID)) {
		rows = 1;
		scan = 1;
		info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
	} else {
		bool unit = eq & VT_BIT(VT_UNIT);

		if (lo & hi & VT_BIT(VT_ID))
			rows /= 64;
		else if (any & VT_BIT(VT_ID))
			rows /= 4;
		if (unit)
			rows /= 32;
		else if (any & VT_BIT(VT_UNIT))
			rows /= 2;
		if (hi & VT_BIT(VT_TS_END))	/* ts <= ts_end */
			hi |= VT_BIT(VT_TS);
		if (unit && (lo & hi & VT_BIT(VT_TS)))
			rows /= 16;
		else if (unit && ((lo | hi) & VT_BIT(VT_TS)))
			rows /= 4;
		scan = rows;
		if (!unit && ((lo | hi) & VT_BIT(VT_TS))) {
			rows /= 4;
			scan /= 2;
		}
		if (lo & VT_BIT(VT_TS_END)) {
			rows /= 2;
			scan /= 1.5;
		}
		if (eq & VT_BIT(VT_DEPTH)) {
			rows /= 4;
			scan /= 2;
		} else if (any & VT_BIT(VT_DEPTH)) {
			rows /= 2;
		}
		if (any & VT_BIT(VT_NAME)) {
			rows /= name_in ? 64 : 256;
			scan /= 16;
		}
		for (int col = VT_DUR; col < VT_NCOLS; col++)
			if ((any & VT_BIT(col) & (VT_BIT(VT_DUR) | VT_BIT(VT_KIND) | VT_BIT(VT_CAT) |
						   VT_BIT(VT_SEQ) | VT_BIT(VT_FLAGS))))
				rows /= 2;
	}
	info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
	info->estimatedCost = 10 + (scan < 1 ? 1 : scan);

	if (name_in)
		eq &= ~VT_BIT(VT_NAME);
	if (info->nOrderBy > 0 && vt_order(info, eq, &desc)) {
		info->orderByConsumed = 1;
		if (desc)
			len += (size_t)snprintf(plan + len, sizeof(plan) - len, "%sdesc",
						len ? " " : "");
	}
	info->idxNum = nargv;
	info->idxStr = sqlite3_mprintf("%s", len ? plan : "scan");
	if (!info->idxStr)
		return SQLITE_NOMEM;
	info->needToFreeIdxStr = 1;
	return SQLITE_OK;
}

/* ---- directory ---- */

/*
 * Build t->idmap over the loaded directory, if ids are dense enough for it
 * (blocks at most four times the chunks): it only narrows searches, so
 * without it (sparse ids, no memory) they run over the whole directory.
 */
static void
vt_idmap(struct vt_tab *t)
{
	int64_t nb, last;
	int c = 0;

	free(t->idmap);
	t->idmap = NULL;
	t->nidmap = 0;
	if (!t->ndir)
		return;
	last = t->dir[t->ndir - 1].first + t->dir[t->ndir - 1].count - 1;
	nb = (last >> VT_ID_SHIFT) + 2;
	if (nb > 4 * (int64_t)t->ndir + 1024 || !(t->idmap = malloc((size_t)nb * sizeof(uint32_t))))
		return;
	for (int64_t b = 0; b < nb; b++) {
		int64_t lo = b << VT_ID_SHIFT;

		while (c < t->ndir && t->dir[c].first + t->dir[c].count - 1 < lo)
			c++;
		t->idmap[b] = (uint32_t)c;
	}
	t->nidmap = nb;
}

/* Room in t->dir for row @n (*@cap rows now).  Return: SQLITE_OK or SQLITE_NOMEM. */
static int
vt_dir_room(struct vt_tab *t, int *cap, int n)
{
	void *nd;

	if (n < *cap)
		return SQLITE_OK;
	nd = realloc(t->dir, (size_t)(*cap ? *cap * 2 : 64) * sizeof(*t->dir));
	if (!nd)
		return SQLITE_NOMEM;
	t->dir = nd;
	*cap = *cap ? *cap * 2 : 64;
	return SQLITE_OK;
}

/* Directory row @n, just read, against what the searches and the skipping rely on. */
static int
vt_dir_check(struct vt_tab *t, int n)
{
	const struct st_chunk_dir *d = &t->dir[n], *p = n ? &t->dir[n - 1] : NULL;

	if (d->first < 0 || d->count < 1 || d->count > ST_CHUNK_EVENTS ||
	    d->ts_first > d->ts_last ||
	    d->min_depth > d->max_depth || d->first > INT64_MAX - d->count ||
	    (p && (p->first + p->count > d->first || p->unit > d->unit ||
		   (p->unit == d->unit && p->ts_last > d->ts_first))))
		return vt_err(t, SQLITE_CORRUPT, "events: chunk %lld: directory row out of "
			      "order or inconsistent", (long long)d->first);
	return SQLITE_OK;
}

/* Prepare @fmt (its %w: the table's schema) into *@s.  Return: SQLITE_OK, or an error set. */
static int
vt_prep(struct vt_tab *t, const char *fmt, sqlite3_stmt **s)
{
	char *sql = sqlite3_mprintf(fmt, t->schema);
	int rc;

	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(t->db, sql, -1, s, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? rc : vt_err(t, rc, "events: %s", sqlite3_errmsg(t->db));
}

/* The directory from the rows of event_chunks into t->dir; their count in *@n. */
static int
vt_load_rows(struct vt_tab *t, int *n)
{
	sqlite3_stmt *s = NULL;
	int cap = 0, rc;

	rc = vt_prep(t, "SELECT " ST_DIR_COLS " FROM \"%w\".event_chunks ORDER BY id", &s);
	if (rc != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct st_chunk_dir *d;

		if ((rc = vt_dir_room(t, &cap, *n)) != SQLITE_OK)
			goto out;
		d = &t->dir[*n];
		if (st_chunk_dir_row(s, d) < 0) {
			rc = vt_err(t, SQLITE_CORRUPT, "events: chunk %lld: name filter of %d bytes",
				    (long long)d->first, sqlite3_column_bytes(s, 8));
			goto out;
		}
		if ((rc = vt_dir_check(t, *n)) != SQLITE_OK)
			goto out;
		++*n;
	}
	rc = rc == SQLITE_DONE ? SQLITE_OK : vt_err(t, rc, "events: %s", sqlite3_errmsg(t->db));
out:
	sqlite3_finalize(s);
	return rc;
}

/* A one-integer query's answer into *@v. */
static int
vt_q1(struct vt_tab *t, const char *fmt, int64_t *v)
{
	sqlite3_stmt *s = NULL;
	int rc = vt_prep(t, fmt, &s);

	if (rc != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*v = sqlite3_column_int64(s, 0);
		rc = SQLITE_OK;
	} else {
		rc = vt_err(t, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "events: %s",
			    sqlite3_errmsg(t->db));
	}
	sqlite3_finalize(s);
	return rc;
}

/*
 * The directory from the parts of event_dir (st-chunk.h) into t->dir, their
 * rows' count in *@n: parts numbered from 0, all but the last full, as many
 * rows as event_chunks has.  Return: SQLITE_OK, SQLITE_DONE when the store
 * has no event_dir (written before it), or an error.
 */
static int
vt_load_packed(struct vt_tab *t, int *n)
{
	sqlite3_stmt *s = NULL;
	int64_t has = 0, rows = 0;
	int cap = 0, part = 0, last = ST_DIR_PART, rc;

	rc = vt_q1(t, "SELECT count(*) FROM \"%w\".sqlite_master WHERE type = 'table' "
		   "AND name = 'event_dir'", &has);
	if (rc != SQLITE_OK || !has)
		return rc != SQLITE_OK ? rc : SQLITE_DONE;
	rc = vt_prep(t, "SELECT id, rows FROM \"%w\".event_dir ORDER BY id", &s);
	if (rc != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const uint8_t *b = sqlite3_column_blob(s, 1);
		int len = sqlite3_column_bytes(s, 1), k = len / ST_DIR_REC;

		if (sqlite3_column_int64(s, 0) != part || last != ST_DIR_PART || !b ||
		    len % ST_DIR_REC || k < 1 || k > ST_DIR_PART) {
			rc = vt_err(t, SQLITE_CORRUPT, "events: event_dir part %d: corrupt "
				    "(%d bytes)", part, len);
			goto out;
		}
		for (int i = 0; i < k; i++) {
			if ((rc = vt_dir_room(t, &cap, *n)) != SQLITE_OK)
				goto out;
			st_chunk_dir_get(b + (size_t)i * ST_DIR_REC, &t->dir[*n]);
			if ((rc = vt_dir_check(t, *n)) != SQLITE_OK)
				goto out;
			++*n;
		}
		part++;
		last = k;
	}
	if (rc != SQLITE_DONE) {
		rc = vt_err(t, rc, "events: %s", sqlite3_errmsg(t->db));
		goto out;
	}
	if ((rc = vt_q1(t, "SELECT count(*) FROM \"%w\".event_chunks", &rows)) != SQLITE_OK)
		goto out;
	if (rows != *n)
		rc = vt_err(t, SQLITE_CORRUPT, "events: event_dir holds %d directory rows, "
			    "event_chunks %lld", *n, (long long)rows);
out:
	sqlite3_finalize(s);
	return rc;
}

static int
vt_load(struct vt_tab *t)
{
	char *sql;
	int n = 0, rc;

	rc = vt_load_packed(t, &n);
	if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
		/* none (an older store), or parts that do not check: the rows say the same */
		sqlite3_free(t->base.zErrMsg);
		t->base.zErrMsg = NULL;
		n = 0;
		rc = vt_load_rows(t, &n);
	}
	if (rc != SQLITE_OK)
		goto out;
	/*
	 * Not length(args): the args blob most often runs onto overflow
	 * pages, which SQLite reads to answer it (5 us a chunk, more than
	 * decoding it); vt_args() checks each event's args against the blob.
	 */
	sql = sqlite3_mprintf("SELECT cols FROM \"%w\".event_data WHERE id = ?1", t->schema);
	if (!sql) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	rc = sqlite3_prepare_v3(t->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->get_cols, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		rc = vt_err(t, rc, "events: %s", sqlite3_errmsg(t->db));
		goto out;
	}
	t->ndir = n;
	vt_idmap(t);
	t->loaded = true;
	rc = SQLITE_OK;
out:
	if (rc != SQLITE_OK) {
		free(t->dir);
		t->dir = NULL;
	}
	return rc;
}

/* Decode chunk @c into @e and check it against its directory row. */
static int
vt_decode(struct vt_tab *t, int c, struct vt_ent *e)
{
	const struct st_chunk_dir *d = &t->dir[c];
	sqlite3_stmt *s = t->get_cols;
	const char *why = NULL;
	int rc;

	sqlite3_bind_int64(s, 1, d->first);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		why = "no event_data row";
	} else if (rc != SQLITE_ROW) {
		rc = vt_err(t, rc, "events: chunk %lld: %s", (long long)d->first,
			    sqlite3_errmsg(t->db));
		goto out;
	} else if (st_chunk_decode(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0),
				   d->count, d->ts_first, INT_MAX, e->ev) < 0) {
		why = "cols blob does not decode";
	} else {
		/* names checked against the filter already: a chunk repeats a few */
		uint32_t named[64];
		uint64_t has = 0;

		for (int i = 0; i < d->count && !why; i++) {
			const struct st_cev *v = &e->ev[i];
			unsigned h = v->name & 63;

			if (v->dur < 0 || v->ts > INT64_MAX - v->dur || v->ts + v->dur > d->end_max)
				why = "an event ends after end_max";
			else if (v->depth < d->min_depth || v->depth > d->max_depth)
				why = "an event's depth is out of the chunk's range";
			else if (i && v->ts < e->ev[i - 1].ts)
				why = "events are not in time order";
			else if (!(has >> h & 1) || named[h] != v->name) {
				if (!st_bloom_has(d->bloom, v->name))
					why = "an event's name is not in the name filter";
				named[h] = v->name;
				has |= UINT64_C(1) << h;
			}
		}
		if (!why && e->ev[d->count - 1].ts != d->ts_last)
			why = "the last event's ts is not ts_last";
	}
	rc = why ? vt_err(t, SQLITE_CORRUPT, "events: chunk %lld: corrupt: %s",
			  (long long)d->first, why) : SQLITE_OK;
out:
	sqlite3_reset(s);
	return rc;
}

/* The decoded chunk @c (a reference for the caller) from the cache or decoded. */
static int
vt_chunk_get(struct vt_tab *t, int c, struct vt_ent **out)
{
	struct vt_ent *e = NULL;
	int slot = 0, rc;

	if (t->cached[t->hit] != c) {
		for (t->hit = 0; t->hit < VT_CACHE && t->cached[t->hit] != c; t->hit++)
			;
	}
	if (t->hit < VT_CACHE) {
		e = t->cache[t->hit];
		e->used = ++t->tick;
		e->refs++;
		*out = e;
		return SQLITE_OK;
	}
	t->hit = 0;
	for (int i = 0; i < VT_CACHE; i++)
		if (!t->cache[i] || (t->cache[slot] && t->cache[i]->used < t->cache[slot]->used))
			slot = i;
	t->cached[slot] = -1;
	t->ccount[slot] = 0;
	if (t->cache[slot] && t->cache[slot]->refs == 1) {
		e = t->cache[slot];	/* only the cache holds it: reuse */
	} else {
		vt_ent_put(t->cache[slot]);
		e = malloc(sizeof(*e));
		if (!e) {
			t->cache[slot] = NULL;
			return SQLITE_NOMEM;
		}
		e->refs = 1;
	}
	t->cache[slot] = NULL;
	rc = vt_decode(t, c, e);
	if (rc != SQLITE_OK) {
		free(e);
		return rc;
	}
	e->chunk = c;
	e->used = ++t->tick;
	e->refs = 2;
	t->cache[slot] = e;
	t->cached[slot] = c;
	t->cfirst[slot] = t->dir[c].first;
	t->ccount[slot] = t->dir[c].count;
	*out = e;
	return SQLITE_OK;
}

/* ---- cursor ---- */

static int
vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct vt_cur *k = sqlite3_malloc(sizeof(*k));

	if (!k)
		return SQLITE_NOMEM;
	memset(k, 0, sizeof(*k));
	k->t = (struct vt_tab *)vt;
	k->eof = true;
	*out = &k->base;
	return SQLITE_OK;
}

static void
vt_reset(struct vt_cur *k)
{
	vt_ent_put(k->ent);
	k->ent = NULL;
	free(k->names);
	k->names = NULL;
	k->nnames = 0;
	k->in_names = false;
	k->active = 0;
	k->evmask = 0;
	k->eof = true;
}

static int
vt_close(sqlite3_vtab_cursor *cur)
{
	struct vt_cur *k = (struct vt_cur *)cur;

	vt_reset(k);
	if (k->blob)
		sqlite3_blob_close(k->blob);
	free(k->abuf);
	sqlite3_free(k);
	return SQLITE_OK;
}

/*
 * Narrow column @col to the integers that satisfy "col OP v" (SQLite's
 * comparison of an INTEGER column with @v).  Return false when none can;
 * values that are not numbers leave the column alone (SQLite's own check
 * decides).
 */
static bool
vt_bound(struct vt_cur *k, int col, enum vt_op op, sqlite3_value *v)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX;

	switch (sqlite3_value_type(v)) {
	case SQLITE_NULL:
		return false;
	case SQLITE_INTEGER: {
		int64_t x = sqlite3_value_int64(v);

		if ((op == VT_GT && x == INT64_MAX) || (op == VT_LT && x == INT64_MIN))
			return false;
		lo = op == VT_EQ || op == VT_GE ? x : op == VT_GT ? x + 1 : INT64_MIN;
		hi = op == VT_EQ || op == VT_LE ? x : op == VT_LT ? x - 1 : INT64_MAX;
		break;
	}
	case SQLITE_FLOAT: {
		double f = sqlite3_value_double(v);
		bool lower = op == VT_GT || op == VT_GE, upper = op == VT_LT || op == VT_LE;

		if (isnan(f))
			return true;
		if (f >= 0x1p63)
			return upper;	/* every int64 is below it */
		if (f < -0x1p63)
			return lower;
		if (op == VT_EQ && floor(f) != f)
			return false;
		if (op == VT_EQ || op == VT_GE)
			lo = (int64_t)ceil(f);
		else if (op == VT_GT)
			lo = (int64_t)floor(f) + 1;	/* floor(f) < 2^63 - 1 here */
		if (op == VT_EQ || op == VT_LE) {
			hi = (int64_t)floor(f);
		} else if (op == VT_LT) {
			if ((int64_t)ceil(f) == INT64_MIN)
				return false;
			hi = (int64_t)ceil(f) - 1;
		}
		break;
	}
	default:
		return true;
	}
	if (!(k->active & VT_BIT(col))) {
		k->active |= VT_BIT(col);
		k->lo[col] = INT64_MIN;
		k->hi[col] = INT64_MAX;
	}
	k->lo[col] = TC_MAX(k->lo[col], lo);
	k->hi[col] = TC_MIN(k->hi[col], hi);
	return k->lo[col] <= k->hi[col];
}

static int
vt_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The name list of "name IN (...)" into k->names; *@empty when no value can
 * match.  A value that is not an integer number (text that might convert)
 * turns the list off.  Return: SQLITE_OK or an error code.
 */
static int
vt_names(struct vt_cur *k, sqlite3_value *list, bool *empty)
{
	sqlite3_value *v;
	int rc, cap = 0, n = 0;
	bool all = false;

	for (rc = sqlite3_vtab_in_first(list, &v); rc == SQLITE_OK && v;
	     rc = sqlite3_vtab_in_next(list, &v)) {
		int64_t x;

		if (sqlite3_value_type(v) == SQLITE_NULL)
			continue;
		if (sqlite3_value_type(v) == SQLITE_INTEGER) {
			x = sqlite3_value_int64(v);
		} else if (sqlite3_value_type(v) == SQLITE_FLOAT) {
			double f = sqlite3_value_double(v);

			if (!(f >= -0x1p63 && f < 0x1p63) || floor(f) != f)
				continue;
			x = (int64_t)f;
		} else {
			all = true;
			continue;
		}
		if (n == cap) {
			void *p = realloc(k->names, (size_t)(cap ? cap * 2 : 16) * sizeof(int64_t));

			if (!p)
				return SQLITE_NOMEM;
			k->names = p;
			cap = cap ? cap * 2 : 16;
		}
		k->names[n++] = x;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE)
		return rc;
	if (all) {
		free(k->names);
		k->names = NULL;
		return SQLITE_OK;
	}
	*empty |= n == 0;
	if (n > 1)	/* names is NULL when the list is empty */
		qsort(k->names, (size_t)n, sizeof(int64_t), vt_cmp_i64);
	k->nnames = n;
	k->in_names = true;
	return SQLITE_OK;
}

/* First directory index in [lo, hi) whose @pred is true (@pred monotone). */
#define VT_SEARCH(lo, hi, pred) ({						\
	int l_ = (lo), h_ = (hi);						\
	while (l_ < h_) {							\
		int m_ = l_ + (h_ - l_) / 2;					\
		const struct st_chunk_dir *d = &t->dir[m_];			\
		if (pred)							\
			h_ = m_;						\
		else								\
			l_ = m_ + 1;						\
	}									\
	l_;									\
})

/*
 * Narrow the directory range [*@c0, *@c1) to where the chunks holding ids
 * @lo..@hi lie, through the id map (unchanged without one).
 */
static void
vt_idmap_span(const struct vt_tab *t, int64_t lo, int64_t hi, int *c0, int *c1)
{
	int64_t bl, bh;

	if (!t->idmap)
		return;
	/*
	 * The chunk holding (or next after) id x lies in [idmap[b],
	 * idmap[b + 1]] for b = x >> VT_ID_SHIFT; the map's last block has no
	 * ids, so b + 1 stays inside.
	 */
	bl = lo < 0 ? 0 : TC_MIN(lo >> VT_ID_SHIFT, t->nidmap - 2);
	bh = hi < 0 ? 0 : TC_MIN(hi >> VT_ID_SHIFT, t->nidmap - 2);
	*c0 = (int)t->idmap[bl];
	*c1 = (int)TC_MIN((int64_t)t->idmap[bh + 1] + 1, (int64_t)t->ndir);
}

/*
 * The directory range [*@c0, *@c1) of the chunks holding ids @lo..@hi: the
 * id map narrows it, a binary search finishes.
 */
static void
vt_id_range(const struct vt_tab *t, int64_t lo, int64_t hi, int *c0, int *c1)
{
	vt_idmap_span(t, lo, hi, c0, c1);
	*c0 = VT_SEARCH(*c0, *c1, d->first + d->count - 1 >= lo);
	*c1 = VT_SEARCH(*c0, *c1, d->first > hi);
}

/* The directory range [c0, c1) that can hold matching events. */
static void
vt_range(struct vt_cur *k)
{
	const struct vt_tab *t = k->t;
	int c0 = 0, c1 = t->ndir;

	if (k->active & VT_BIT(VT_ID))
		vt_id_range(t, k->lo[VT_ID], k->hi[VT_ID], &c0, &c1);
	if (k->active & VT_BIT(VT_UNIT)) {
		int64_t lo = k->lo[VT_UNIT], hi = k->hi[VT_UNIT];

		c0 = VT_SEARCH(c0, c1, d->unit >= lo);
		c1 = VT_SEARCH(c0, c1, d->unit > hi);
	}
	/* within one unit the chunks are in time order */
	if ((k->active & VT_BIT(VT_TS)) && c0 < c1 && t->dir[c0].unit == t->dir[c1 - 1].unit) {
		int64_t lo = k->lo[VT_TS], hi = k->hi[VT_TS];

		c0 = VT_SEARCH(c0, c1, d->ts_last >= lo);
		c1 = VT_SEARCH(c0, c1, d->ts_first > hi);
	}
	k->c0 = c0;
	k->c1 = c1;
}

/* The directory index of the chunk holding id @id, -1 when none does. */
static int
vt_chunk_of(const struct vt_tab *t, int64_t id)
{
	int c0 = 0, c1 = t->ndir;

	vt_idmap_span(t, id, id, &c0, &c1);	/* then one search: a point needs no upper end */
	c0 = VT_SEARCH(c0, c1, d->first + d->count - 1 >= id);
	return c0 < c1 && t->dir[c0].first <= id ? c0 : -1;	/* its last id >= @id, first <= */
}

static bool
vt_in(const struct vt_cur *k, int col, int64_t v)
{
	return v >= k->lo[col] && v <= k->hi[col];
}

/* Whether chunk @d may hold a matching event. */
static bool
vt_chunk_ok(const struct vt_cur *k, const struct st_chunk_dir *d)
{
	uint32_t a = k->active;

	if ((a & VT_BIT(VT_TS)) && (d->ts_last < k->lo[VT_TS] || d->ts_first > k->hi[VT_TS]))
		return false;
	if ((a & VT_BIT(VT_TS_END)) && d->end_max < k->lo[VT_TS_END])
		return false;
	if ((a & VT_BIT(VT_DEPTH)) &&
	    (d->max_depth < k->lo[VT_DEPTH] || d->min_depth > k->hi[VT_DEPTH]))
		return false;
	if ((a & VT_BIT(VT_NAME)) && k->lo[VT_NAME] == k->hi[VT_NAME] &&
	    (k->lo[VT_NAME] < 0 || k->lo[VT_NAME] > UINT32_MAX ||
	     !st_bloom_has(d->bloom, (uint32_t)k->lo[VT_NAME])))
		return false;
	if (k->in_names && k->nnames <= VT_BLOOM_MAX) {
		for (int j = 0; j < k->nnames; j++)
			if (k->names[j] >= 0 && k->names[j] <= UINT32_MAX &&
			    st_bloom_has(d->bloom, (uint32_t)k->names[j]))
				return true;
		return false;
	}
	return true;
}

static int64_t
vt_value(const struct st_chunk_dir *d, const struct st_cev *e, int i, int col)
{
	switch (col) {
	case VT_ID: return d->first + i;
	case VT_UNIT: return d->unit;
	case VT_TS: return e->ts;
	case VT_DUR: return e->dur;
	case VT_KIND: return e->kind;
	case VT_DEPTH: return e->depth;
	case VT_NAME: return e->name;
	case VT_CAT: return e->cat;
	case VT_SEQ: return e->seq;
	case VT_FLAGS: return e->flags;
	case VT_TS_END: return (int64_t)((uint64_t)e->ts + (uint64_t)e->dur);
	default: return 0;
	}
}

static bool
vt_match(const struct vt_cur *k, const struct st_chunk_dir *d, int i)
{
	const struct st_cev *e = &k->ent->ev[i];
	uint32_t m = k->evmask;

	while (m) {
		int col = __builtin_ctz(m);

		m &= m - 1;
		if (!vt_in(k, col, vt_value(d, e, i, col)))
			return false;
	}
	if (k->in_names &&
	    !bsearch(&(int64_t){ e->name }, k->names, (size_t)k->nnames, sizeof(int64_t),
		     vt_cmp_i64))
		return false;
	return true;
}

/* The event index range [i0, i1] of the current chunk (ids and times). */
static void
vt_span(struct vt_cur *k, const struct st_chunk_dir *d)
{
	const struct st_cev *ev = k->ent->ev;
	int i0 = 0, i1 = d->count - 1;

	if (k->active & VT_BIT(VT_ID)) {
		if (k->lo[VT_ID] > d->first)
			i0 = (int)TC_MIN(k->lo[VT_ID] - d->first, (int64_t)d->count);
		if (k->hi[VT_ID] < d->first + d->count - 1)
			i1 = (int)TC_MAX(k->hi[VT_ID] - d->first, (int64_t)-1);
	}
	if (k->active & VT_BIT(VT_TS)) {
		int l = i0, h = i1 + 1;

		while (l < h) {		/* first ts >= lo */
			int m = l + (h - l) / 2;

			if (ev[m].ts >= k->lo[VT_TS])
				h = m;
			else
				l = m + 1;
		}
		i0 = l;
		h = i1 + 1;
		while (l < h) {		/* first ts > hi */
			int m = l + (h - l) / 2;

			if (ev[m].ts > k->hi[VT_TS])
				h = m;
			else
				l = m + 1;
		}
		i1 = l - 1;
	}
	k->i0 = i0;
	k->i1 = i1;
}

/* Move to the next matching event (the first one when @from_start). */
static int
vt_advance(struct vt_cur *k, bool from_start)
{
	struct vt_tab *t = k->t;
	int rc;

	if (!from_start)
		k->i += k->step;
	for (;;) {
		if (k->ent) {
			const struct st_chunk_dir *d = &t->dir[k->c];

			for (; k->i >= k->i0 && k->i <= k->i1; k->i += k->step)
				if (vt_match(k, d, k->i))
					return SQLITE_OK;
			vt_ent_put(k->ent);
			k->ent = NULL;
			k->c += k->step;
		}
		while (k->c >= k->c0 && k->c < k->c1 && !vt_chunk_ok(k, &t->dir[k->c]))
			k->c += k->step;
		if (k->c < k->c0 || k->c >= k->c1) {
			k->eof = true;
			return SQLITE_OK;
		}
		rc = vt_chunk_get(t, k->c, &k->ent);
		if (rc != SQLITE_OK) {
			k->eof = true;
			return rc;
		}
		vt_span(k, &t->dir[k->c]);
		k->i = k->step > 0 ? k->i0 : k->i1;
	}
}

/*
 * The plan of idxStr @text ("col<op>" per argv value, then "desc"; "scan"
 * when none), parsed once per connection and kept in t->plans.
 */
static int
vt_plan_get(struct vt_tab *t, const char *text, int argc, const struct vt_plan **out)
{
	struct vt_plan *pl;
	const char *p = text;

	for (int i = 0; i < VT_PLANS; i++) {
		if (t->plans[i].text && !strcmp(t->plans[i].text, text ? text : "")) {
			*out = &t->plans[i];
			return t->plans[i].n <= argc ? SQLITE_OK :
			       vt_err(t, SQLITE_INTERNAL, "events: bad plan \"%s\"", text);
		}
	}
	pl = &t->plans[t->plan_next];
	free(pl->text);
	memset(pl, 0, sizeof(*pl));
	while (p && *p) {
		size_t n = strcspn(p, " "), cl;
		int col = -1, op = VT_EQ;

		if (n == 4 && !strncmp(p, "desc", 4)) {
			pl->desc = true;
		} else if (!(n == 4 && !strncmp(p, "scan", 4))) {
			cl = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
			for (int c = 0; c < VT_NCOLS; c++)
				if (strlen(vt_col_name[c]) == cl && !strncmp(p, vt_col_name[c], cl))
					col = c;
			for (int o = 0; o < (int)TC_ARRAY_SIZE(vt_op_name); o++)
				if (strlen(vt_op_name[o]) == n - cl &&
				    !strncmp(p + cl, vt_op_name[o], n - cl))
					op = o;
			if (col < 0 || pl->n >= VT_MAX_ARGV || pl->n >= argc)
				return vt_err(t, SQLITE_INTERNAL, "events: bad plan \"%s\"", text);
			pl->col[pl->n] = (uint8_t)col;
			pl->op[pl->n++] = (uint8_t)op;
		}
		p += n;
		p += *p == ' ';
	}
	pl->text = strdup(text ? text : "");
	if (!pl->text)
		return SQLITE_NOMEM;
	t->plan_next = (t->plan_next + 1) % VT_PLANS;
	*out = pl;
	return SQLITE_OK;
}

static int
vt_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
	  sqlite3_value **argv)
{
	struct vt_cur *k = (struct vt_cur *)cur;
	struct vt_tab *t = k->t;
	const struct vt_plan *plan = NULL;
	bool empty = false;
	int a, rc;

	(void)idxNum;
	vt_reset(k);
	if (!t->loaded && (rc = vt_load(t)) != SQLITE_OK)
		return rc;
	if ((rc = vt_plan_get(t, idxStr, argc, &plan)) != SQLITE_OK)
		return rc;
	k->step = plan->desc ? -1 : 1;
	for (a = 0; a < plan->n; a++) {
		if (plan->op[a] == VT_IN) {
			rc = vt_names(k, argv[a], &empty);
			if (rc != SQLITE_OK)
				return rc;
		} else if (!vt_bound(k, plan->col[a], (enum vt_op)plan->op[a], argv[a])) {
			empty = true;
		}
	}
	if (empty)
		return SQLITE_OK;	/* eof */
	/* ts <= ts_end (durations are not negative) */
	if ((k->active & VT_BIT(VT_TS_END)) && k->hi[VT_TS_END] < INT64_MAX) {
		int64_t hi = k->hi[VT_TS_END];

		if (!(k->active & VT_BIT(VT_TS))) {
			k->active |= VT_BIT(VT_TS);
			k->lo[VT_TS] = INT64_MIN;
			k->hi[VT_TS] = INT64_MAX;
		}
		k->hi[VT_TS] = TC_MIN(k->hi[VT_TS], hi);
		if (k->lo[VT_TS] > k->hi[VT_TS])
			return SQLITE_OK;
	}
	/* id, unit and ts are settled by vt_range() and vt_span() */
	k->evmask = k->active & ~(VT_BIT(VT_ID) | VT_BIT(VT_UNIT) | VT_BIT(VT_TS));
	vt_range(k);
	k->eof = false;
	k->c = k->step > 0 ? k->c0 : k->c1 - 1;
	return vt_advance(k, true);
}

static int
vt_next(sqlite3_vtab_cursor *cur)
{
	return vt_advance((struct vt_cur *)cur, false);
}

static int
vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct vt_cur *)cur)->eof;
}

/* Fail xColumn with code @rc and message @msg (sqlite3_malloc'd, taken). */
static int
vt_col_err(sqlite3_context *ctx, int rc, char *msg)
{
	sqlite3_result_error(ctx, msg ? msg : "events: out of memory", -1);
	sqlite3_result_error_code(ctx, rc);
	sqlite3_free(msg);
	return rc;
}

/*
 * The args text of the current event, from the chunk's args blob: the
 * event's bytes for the first one asked of a chunk (a point lookup), the
 * whole blob from the second one on (a scan).
 */
static int
vt_args(struct vt_cur *k, sqlite3_context *ctx, const struct st_chunk_dir *d,
	const struct st_cev *e)
{
	struct vt_tab *t = k->t;
	int rc = SQLITE_OK, size, off = 0, n;

	if (!e->args_len) {
		sqlite3_result_null(ctx);
		return SQLITE_OK;
	}
	if (!k->blob)
		rc = sqlite3_blob_open(t->db, t->schema, "event_data", "args", d->first, 0,
				       &k->blob);
	else if (k->blob_row != d->first)
		rc = sqlite3_blob_reopen(k->blob, d->first);
	if (rc != SQLITE_OK) {
		char *msg = sqlite3_mprintf("events: chunk %lld: args: %s", (long long)d->first,
					    sqlite3_errmsg(t->db));

		sqlite3_blob_close(k->blob);	/* NULL or an aborted handle */
		k->blob = NULL;
		return vt_col_err(ctx, rc, msg);
	}
	if (k->blob_row != d->first) {
		k->blob_row = d->first;
		k->nread = 0;
		k->whole = false;
	}
	size = sqlite3_blob_bytes(k->blob);
	if ((int64_t)e->args_off + e->args_len > size)
		return vt_col_err(ctx, SQLITE_CORRUPT,
				  sqlite3_mprintf("events: chunk %lld: corrupt: args blob is short",
						  (long long)d->first));
	if (!k->whole) {
		k->whole = ++k->nread > 1;
		n = k->whole ? size : (int)e->args_len;
		off = k->whole ? 0 : (int)e->args_off;
		if ((size_t)n > k->acap) {
			char *nb = realloc(k->abuf, (size_t)n);

			if (!nb) {
				k->whole = false;
				sqlite3_result_error_nomem(ctx);
				return SQLITE_NOMEM;
			}
			k->abuf = nb;
			k->acap = (size_t)n;
		}
		rc = sqlite3_blob_read(k->blob, k->abuf, n, off);
		if (rc != SQLITE_OK) {
			k->whole = false;
			return vt_col_err(ctx, rc, sqlite3_mprintf("events: chunk %lld: args: %s",
								   (long long)d->first,
								   sqlite3_errmsg(t->db)));
		}
	}
	sqlite3_result_text(ctx, k->abuf + (k->whole ? e->args_off : 0), (int)e->args_len,
			    SQLITE_TRANSIENT);
	return SQLITE_OK;
}

static int
vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct vt_cur *k = (struct vt_cur *)cur;
	const struct st_chunk_dir *d = &k->t->dir[k->c];
	const struct st_cev *e = &k->ent->ev[k->i];

	switch (col) {
	case VT_VALUE:
		if (e->kind == ST_EV_COUNTER)
			sqlite3_result_double(ctx, e->value);
		else
			sqlite3_result_null(ctx);
		return SQLITE_OK;
	case VT_ARGS:
		return vt_args(k, ctx, d, e);
	default:
		sqlite3_result_int64(ctx, vt_value(d, e, k->i, col));
		return SQLITE_OK;
	}
}

static int
vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct vt_cur *k = (struct vt_cur *)cur;

	*rowid = k->t->dir[k->c].first + k->i;
	return SQLITE_OK;
}

static const sqlite3_module vt_module = {
	.iVersion = 0,
	.xCreate = NULL,	/* eponymous only */
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = NULL,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

/* ---- direct reads (store.h: struct st_conn) ---- */

/*
 * The connection's events table of schema "main", its directory read.  A
 * directory that failed to load is not read again here: every direct read
 * then fails at once, and its caller asks SQL, which tries again and says
 * what is wrong.
 */
static struct vt_tab *
vt_main(struct st_conn *c)
{
	struct vt_tab *t = c ? c->events : NULL;

	if (!t || t->load_failed)
		return NULL;
	if (!t->loaded && vt_load(t) != SQLITE_OK) {
		t->load_failed = true;
		return NULL;
	}
	return t;
}

int64_t
st_conn_end_bound(struct st_conn *c, int64_t id)
{
	struct vt_tab *t = vt_main(c);
	int k;

	if (!t)
		return INT64_MAX;
	k = vt_chunk_of(t, id);
	return k < 0 ? INT64_MIN : t->dir[k].end_max;
}

int
st_conn_event_ending(struct st_conn *c, int64_t id, int64_t min_end, struct st_ev_brief *ev)
{
	struct vt_tab *t = c ? c->events : NULL;
	const struct st_cev *e;
	struct vt_ent *ent;
	int k;

	if (!t)
		return -EAGAIN;
	if (!(t = vt_main(c)))
		return -EIO;
	/*
	 * a chunk decoded already, without a search of the directory: a walk
	 * reads events near the last ones (the one before, an edge's source)
	 */
	for (int i = 0; i < VT_CACHE; i++) {
		if ((uint64_t)id - (uint64_t)t->cfirst[i] < (uint64_t)t->ccount[i]) {
			k = t->cached[i];
			if (t->dir[k].end_max < min_end)
				return 1;
			ent = t->cache[i];
			ent->used = ++t->tick;
			e = &ent->ev[id - t->cfirst[i]];
			goto found;
		}
	}
	if ((k = vt_chunk_of(t, id)) < 0)
		return -ENOENT;
	if (t->dir[k].end_max < min_end)
		return 1;	/* the whole chunk ends before it */
	if (vt_chunk_get(t, k, &ent) != SQLITE_OK)
		return -EIO;
	vt_ent_put(ent);	/* the cache keeps it until the next decode */
	e = &ent->ev[id - t->dir[k].first];
found:
	*ev = (struct st_ev_brief){ .unit = t->dir[k].unit, .ts = e->ts, .dur = e->dur,
				    .name = e->name, .depth = e->depth, .kind = e->kind };
	return 0;
}

int
st_conn_event(struct st_conn *c, int64_t id, struct st_ev_brief *ev)
{
	return st_conn_event_ending(c, id, INT64_MIN, ev);
}

int
st_conn_scan(struct st_conn *c, int64_t lo, int64_t hi, st_scan_fn fn, void *arg)
{
	struct vt_tab *t = c ? c->events : NULL;
	int c0 = 0, c1, rc = 0;

	if (!t)
		return -EAGAIN;
	if (!(t = vt_main(c)))
		return -EIO;
	if (lo >= hi)
		return 0;
	c1 = t->ndir;
	vt_id_range(t, lo, hi - 1, &c0, &c1);
	for (int k = c0; k < c1 && !rc; k++) {
		const struct st_chunk_dir *d = &t->dir[k];
		int64_t i0 = TC_MAX(lo - d->first, 0), i1 = TC_MIN(hi - d->first, (int64_t)d->count);
		struct vt_ent *ent;

		if (i0 >= i1)
			continue;
		if (vt_chunk_get(t, k, &ent) != SQLITE_OK)
			return -EIO;
		for (int64_t i = i0; i < i1 && !rc; i++) {
			const struct st_cev *e = &ent->ev[i];
			struct st_ev_brief ev = { .unit = d->unit, .ts = e->ts, .dur = e->dur,
						  .name = e->name, .depth = e->depth,
						  .kind = e->kind };

			rc = fn(arg, d->first + i, &ev);
		}
		vt_ent_put(ent);
	}
	return rc;
}

/*
 * ts_end_bound(id): the latest end of the chunk that holds event @id (an
 * upper bound of its ts_end, read from the directory without decoding the
 * chunk), NULL when no chunk holds that id, and the largest integer when it
 * cannot be known (no statement of the connection has named `events` yet,
 * or its directory is damaged): nothing is ruled out.
 */
static void
vt_end_bound(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	int64_t b;

	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_int64(ctx, INT64_MAX);
		return;
	}
	b = st_conn_end_bound(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]));
	if (b == INT64_MIN)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, b);
}

int
st_sql_register(sqlite3 *db)
{
	struct st_conn *conn = st_conn_new(db);

	if (!conn)
		return -ENOMEM;
	/* on failure SQLite calls the module's destructor itself */
	if (sqlite3_create_module_v2(db, "events", &vt_module, conn, st_conn_unref) != SQLITE_OK)
		return -EIO;
	conn->refs++;
	if (st_edges_register_conn(db, conn) ||
	    sqlite3_create_function_v2(db, "ts_end_bound", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, conn,
				       vt_end_bound, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	return 0;
}
