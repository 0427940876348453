/* SPDX-License-Identifier: MIT */
/*
 * store/st-writer.c - the ingest side of the trace store: devices, units,
 * interned strings, and events appended in file order: a compact sort key
 * in memory plus a record and the args text in two spill files
 * (store/st-spill.c) that st_writer_finish() (store/st-finish.c) reads back
 * in sorted order.  Explicit edges go to a staging table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/store-int.h"

int
st_writer_open(struct st_writer **wp, const char *path, struct tc_err *err)
{
	struct st_writer *w;
	int rc;

	*wp = NULL;
	w = tc_xcalloc(1, sizeof(*w));
	st_keys_init(&w->keys);
	w->path = tc_xstrdup(path);
	w->min_ts = INT64_MAX;
	w->max_end = INT64_MIN;
	w->prog.phase = -1;
	unlink(path);
	/* "nx-direct": the store's pages go to the disk with O_DIRECT */
	if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, st_vfs_direct_name()) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "%s: cannot create: %s", path,
				w->db ? sqlite3_errmsg(w->db) : "out of memory");
		goto out;
	}
	/* A private temporary file, published by rename after a full sync:
	 * no journal needed while it is built. */
	rc = st_exec(w->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     " PRAGMA cache_size=-16384; PRAGMA temp_store=FILE;"
		     " PRAGMA page_size=32768;"
		     /* worker threads for SQLite's sorter (queries) */
		     " PRAGMA threads=2;", err);
	if (!rc)
		rc = st_keys_open(&w->keys, path, err);
	if (!rc)
		rc = st_spill_open(&w->args, path, "-stage-args", ST_SPILL_RAM, err);
	if (!rc)
		rc = st_spill_open(&w->raw_edges, path, "-stage-edges", ST_SPILL_RAM, err);
	if (!rc)
		rc = st_schema_create_trace(w->db, err);
	if (!rc)
		rc = st_exec(w->db, "BEGIN", err);
	if (rc < 0)
		goto out;
	if (sqlite3_prepare_v2(w->db, "INSERT INTO strings (id, s) VALUES (?,?)", -1,
			       &w->ins_str, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "%s: %s", path, sqlite3_errmsg(w->db));
		goto out;
	}
	*wp = w;
	rc = 0;
out:
	if (rc < 0)
		st_writer_abort(w);
	return rc;
}

static void
st_writer_release(struct st_writer *w)
{
	int i;

	st_edges_free(w->edges);	/* its pages may lie in the args' memory */
	st_spill_close(&w->args);
	st_spill_close(&w->raw_edges);
	st_keys_free(&w->keys);
	sqlite3_finalize(w->ins_str);
	if (w->db)
		sqlite3_close(w->db);
	st_map_free(&w->strings);
	st_map_free(&w->devkeys);
	st_map_free(&w->unitkeys);
	for (i = 1; i <= w->ndevs; i++) {
		free(w->devs[i].key);
		free(w->devs[i].name);
		free(w->devs[i].label);
	}
	for (i = 1; i <= w->nunits; i++) {
		free(w->units[i].key);
		free(w->units[i].name);
	}
	free(w->devs);
	free(w->units);
	free(w->path);
	free(w);
}

void
st_writer_abort(struct st_writer *w)
{
	char *path;

	if (!w)
		return;
	path = tc_xstrdup(w->path);
	st_writer_release(w);
	unlink(path);
	free(path);
}

/* Exported for st-finish.c through store-int.h's struct; keeps the release
 * logic in one place. */
void st_writer_release_(struct st_writer *w);
void
st_writer_release_(struct st_writer *w)
{
	st_writer_release(w);
}

static void
st_writer_fail(struct st_writer *w, const char *what)
{
	if (!w->failed) {
		w->failed = -EIO;
		tc_err_set(&w->ferr, -EIO, "%s: %s: %s", w->path, what, sqlite3_errmsg(w->db));
	}
}

uint32_t
st_intern(struct st_writer *w, const char *s, size_t len)
{
	uint32_t h;
	int id;

	len = strnlen(s, len);	/* the map's keys are C strings: a name ends at a NUL */
	h = st_hash(s, len);
	id = st_map_get(&w->strings, s, len, h);

	if (id)
		return (uint32_t)id;
	id = (int)++w->nstrings;
	st_map_put(&w->strings, tc_xstrndup(s, len), h, id);
	sqlite3_bind_int64(w->ins_str, 1, id);
	sqlite3_bind_text(w->ins_str, 2, s, (int)len, SQLITE_STATIC);
	if (sqlite3_step(w->ins_str) != SQLITE_DONE)
		st_writer_fail(w, "intern");
	sqlite3_reset(w->ins_str);
	return (uint32_t)id;
}

int
st_device(struct st_writer *w, const char *key, int kind, const char *name)
{
	uint32_t h = st_hash(key, strlen(key));
	int id = st_map_get(&w->devkeys, key, strlen(key), h);
	struct st_dev *d;

	if (id)
		return id;
	if (w->ndevs + 2 > w->capdevs) {
		w->capdevs = w->capdevs ? w->capdevs * 2 : 16;
		w->devs = tc_xrealloc(w->devs, (size_t)w->capdevs * sizeof(*w->devs));
	}
	id = ++w->ndevs;
	d = &w->devs[id];
	memset(d, 0, sizeof(*d));
	d->key = tc_xstrdup(key);
	d->name = tc_xstrdup(name ? name : key);
	d->kind = kind;
	st_map_put(&w->devkeys, tc_xstrdup(key), h, id);
	return id;
}

void
st_device_set_name(struct st_writer *w, int dev, const char *name)
{
	if (dev < 1 || dev > w->ndevs || !name)
		return;
	free(w->devs[dev].name);
	w->devs[dev].name = tc_xstrdup(name);
}

void
st_device_set_kind(struct st_writer *w, int dev, int kind)
{
	if (dev >= 1 && dev <= w->ndevs)
		w->devs[dev].kind = kind;
}

void
st_device_set_sort(struct st_writer *w, int dev, int64_t sort)
{
	if (dev < 1 || dev > w->ndevs)
		return;
	w->devs[dev].sort = sort;
	w->devs[dev].has_sort = true;
}

void
st_device_set_label(struct st_writer *w, int dev, const char *label)
{
	if (dev < 1 || dev > w->ndevs || !label)
		return;
	free(w->devs[dev].label);
	w->devs[dev].label = tc_xstrdup(label);
}

int
st_unit(struct st_writer *w, int dev, const char *key, int kind, const char *name)
{
	char *full = tc_xasprintf("%d\x1f%s", dev, key);
	uint32_t h = st_hash(full, strlen(full));
	int id = st_map_get(&w->unitkeys, full, strlen(full), h);
	struct st_unit_def *u;

	if (id) {
		free(full);
		return id;
	}
	if (w->nunits + 2 > w->capunits) {
		w->capunits = w->capunits ? w->capunits * 2 : 64;
		w->units = tc_xrealloc(w->units, (size_t)w->capunits * sizeof(*w->units));
	}
	id = ++w->nunits;
	u = &w->units[id];
	memset(u, 0, sizeof(*u));
	u->key = tc_xstrdup(key);
	u->name = tc_xstrdup(name ? name : key);
	u->dev = dev;
	u->kind = kind;
	u->ts_min = INT64_MAX;
	u->end_max = INT64_MIN;
	st_map_put(&w->unitkeys, full, h, id);
	return id;
}

void
st_unit_set_name(struct st_writer *w, int unit, const char *name)
{
	if (unit < 1 || unit > w->nunits || !name)
		return;
	free(w->units[unit].name);
	w->units[unit].name = tc_xstrdup(name);
}

void
st_unit_set_kind(struct st_writer *w, int unit, int kind)
{
	if (unit >= 1 && unit <= w->nunits)
		w->units[unit].kind = kind;
}

void
st_unit_set_sort(struct st_writer *w, int unit, int64_t sort)
{
	if (unit < 1 || unit > w->nunits)
		return;
	w->units[unit].sort = sort;
	w->units[unit].has_sort = true;
}

/*
 * Does the args text mention an access set or semaphore (deps/)?  All five
 * keys end in 's"', so one memmem pass for that pair finds the candidates.
 */
static int
st_args_flags(const char *a, size_t n)
{
	static const char *const keys[] = { "\"reads\"", "\"writes\"", "\"signals\"",
					    "\"waits\"", "\"operands\"" };
	const char *p = a, *end = a + n;
	size_t i;

	if (!a || n < 8)
		return 0;
	while ((p = memmem(p, (size_t)(end - p), "s\"", 2))) {
		p += 2;		/* just past the closing quote */
		for (i = 0; i < TC_ARRAY_SIZE(keys); i++) {
			size_t kl = strlen(keys[i]);

			if ((size_t)(p - a) >= kl && !memcmp(p - kl, keys[i], kl))
				return 1;
		}
	}
	return 0;
}

int64_t
st_event_add(struct st_writer *w, const struct st_event *ev)
{
	struct st_rec *rec;
	struct st_key *k;
	int64_t seq, end;
	int rc;

	if (w->failed)
		return w->failed;
	if (ev->unit < 1 || ev->unit > w->nunits || ev->dur < 0 ||
	    (ev->args && ev->args_len > INT32_MAX))
		return -EINVAL;
	if (w->seq >= UINT32_MAX - 1) {
		w->failed = tc_err_set(&w->ferr, -EFBIG, "%s: more than %u events", w->path,
				       UINT32_MAX - 1);
		return w->failed;
	}
	seq = ++w->seq;
	end = ev->ts + ev->dur;
	if (ev->ts < w->min_ts)
		w->min_ts = ev->ts;
	if (end > w->max_end)
		w->max_end = end;
	{
		struct st_unit_def *u = &w->units[ev->unit];

		u->n_add++;
		u->ts_min = TC_MIN(u->ts_min, ev->ts);
		u->end_max = TC_MAX(u->end_max, end);
	}
	k = st_keys_push(&w->keys, &rec);
	k->ts = ev->ts;
	k->dur = ev->dur;
	k->seq = (uint32_t)seq;
	k->unit = ev->unit;
	memset(rec, 0, sizeof(*rec));
	rec->value = ev->kind == ST_EV_COUNTER ? ev->value : 0;
	rec->name = ev->name;
	rec->cat = ev->cat;
	rec->kind = (uint8_t)ev->kind;
	if (ev->args && ev->args_len) {
		rec->args_off = w->args.size;
		rec->args_len = (uint32_t)ev->args_len;
		rec->flags = ev->args_scanned ? ev->has_access
					     : (uint8_t)st_args_flags(ev->args, ev->args_len);
		w->nflagged += rec->flags & 1;
	}
	rc = w->keys.rc;	/* a failed write of an earlier run */
	if (!rc && rec->args_len)
		rc = st_spill_write(&w->args, ev->args, ev->args_len);
	if (rc < 0) {
		w->failed = tc_err_set(&w->ferr, rc, "%s: staging: %s", w->path, strerror(-rc));
		return w->failed;
	}
	switch (ev->kind) {
	case ST_EV_SLICE:
		w->stats.slices++;
		break;
	case ST_EV_INSTANT:
		w->stats.instants++;
		break;
	default:
		w->stats.counters++;
		break;
	}
	return seq;
}

int
st_edge_add(struct st_writer *w, int64_t src, int64_t dst, int kind, const char *label)
{
	struct st_redge e = { 0 };
	size_t len = label ? strlen(label) : 0;
	int rc;

	if (w->failed)
		return w->failed;
	if (src < 1 || src > w->seq || dst < 1 || dst > w->seq || src == dst ||
	    kind < 0 || kind >= ST_EDGE_NKINDS || len > INT32_MAX)
		return -EINVAL;
	/* staged by seq in a spill file: the ids are known at finish */
	e.src = (uint32_t)src;
	e.dst = (uint32_t)dst;
	e.kind = (uint8_t)kind;
	e.has_label = label != NULL;
	e.label_len = (uint32_t)len;
	rc = st_spill_write(&w->raw_edges, &e, sizeof(e));
	if (!rc && len)
		rc = st_spill_write(&w->raw_edges, label, len);
	if (rc < 0) {
		w->failed = tc_err_set(&w->ferr, rc, "%s: staging edges: %s", w->path,
				       strerror(-rc));
		return w->failed;
	}
	w->nedges_raw++;
	return 0;
}

void
st_writer_edges_given(struct st_writer *w)
{
	w->edges_given = true;
}

void
st_writer_set_meta(struct st_writer *w, const char *key, const char *value)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO meta VALUES (?,?)", -1, &s,
			       NULL) != SQLITE_OK) {
		st_writer_fail(w, "meta");
		return;
	}
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE)
		st_writer_fail(w, "meta");
	sqlite3_finalize(s);
}

void
st_writer_count_bad(struct st_writer *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->stats.bad_events++) {
		va_start(ap, fmt);
		vsnprintf(w->stats.first_bad, sizeof(w->stats.first_bad), fmt, ap);
		va_end(ap);
	}
}

void
st_writer_count_unmatched(struct st_writer *w)
{
	w->stats.unmatched++;
}

void
st_writer_count_bad_access(struct st_writer *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->stats.bad_access++) {
		va_start(ap, fmt);
		vsnprintf(w->stats.first_bad_access, sizeof(w->stats.first_bad_access), fmt, ap);
		va_end(ap);
	}
}

sqlite3 *
st_writer_db(struct st_writer *w)
{
	return w->db;
}
