/* SPDX-License-Identifier: MIT */
/*
 * server/srv-search.c - GET /api/traces/ID/search: how many events have a
 * name that contains q, and a page of them in (ts, id) order.
 *
 * The total is a sum over the matching names of the events each name has.
 * Those counts are read once per trace, in one direct scan of the store's
 * chunks, and kept in the answer cache: a new search string then costs a
 * pass over the strings table, not a count over the events (on the 10M-event
 * synthetic trace, 4.3 s for a string that every name contains).
 * The page merges one cursor per unit and matching name on the name index
 * when there are few of them (the events module skips chunks by their name
 * filter, which suits rare names).  With more, each unit (its ids are in ts
 * order) is read straight from the store until it gives offset + limit
 * matches, which the many matching names make quick, and those are sorted;
 * SQL's ORDER BY over every match only past SEARCH_SCAN_MAX or on a store
 * the direct reads give up on.  NX_SEARCH_SQL=1 answers with SQL alone (the
 * tests compare the two).
 */
#include <stdlib.h>
#include <string.h>
#include "common/tc-jw.h"
#include "server/srv-int.h"
#include "store/store.h"

#define SEARCH_SCAN_MAX 100000	/* offset + limit the unit scans collect, at most */
#define SEARCH_MATCH "e.name IN (SELECT id FROM strings WHERE instr(lower(s), lower(?1)) > 0)"

/* The strings that contain q: their ids, and a bit per id. */
struct name_set {
	uint32_t *ids;
	size_t n, cap;
	uint8_t *bits;
	uint32_t nbits;
};

static void
name_set_free(struct name_set *s)
{
	free(s->ids);
	free(s->bits);
}

static inline bool
name_set_has(const struct name_set *s, uint32_t name)
{
	return name < s->nbits && (s->bits[name >> 3] >> (name & 7) & 1);
}

/* The ids of the strings that contain @q (ASCII case-insensitive).  Return: SQLite's code. */
static int
name_set_get(sqlite3 *db, const char *q, struct name_set *s, struct srv_rd_err *err)
{
	sqlite3_stmt *st = NULL;
	uint32_t top = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = sqlite3_prepare_v2(db, "SELECT id FROM strings WHERE instr(lower(s), lower(?1)) > 0",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	while (srv_rd_step(err, st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id <= 0 || id > UINT32_MAX)
			continue;	/* not a name an event can have */
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 64;
			s->ids = tc_xrealloc(s->ids, s->cap * sizeof(*s->ids));
		}
		s->ids[s->n++] = (uint32_t)id;
		if ((uint32_t)id > top)
			top = (uint32_t)id;
	}
	sqlite3_finalize(st);
	if (err->rc != SQLITE_OK)
		return err->rc;
	s->nbits = s->n ? top + 1 : 0;
	s->bits = tc_xcalloc((size_t)s->nbits / 8 + 1, 1);
	for (size_t i = 0; i < s->n; i++)
		s->bits[s->ids[i] >> 3] |= (uint8_t)(1u << (s->ids[i] & 7));
	return SQLITE_OK;
}

/* ---- the total: events per name, once per trace ---- */

/* One name's events; a trace's counts are an array sorted by name. */
struct name_count {
	uint32_t name;
	uint32_t unused;
	int64_t count;
};

struct count_scan {
	int64_t *by_name;	/* [nnames] */
	uint32_t nnames;
	int64_t next;		/* the id after the last one counted */
};

static void
count_event(struct count_scan *k, int64_t id, int64_t name)
{
	if (name > 0 && name < k->nnames)	/* others: no string for a search to match */
		k->by_name[name]++;
	k->next = id + 1;
}

static int
count_ev(void *arg, int64_t id, const struct st_ev_brief *ev)
{
	count_event(arg, id, ev->name);
	return 0;
}

/*
 * The trace's events per name id into *@v, *@n of them (the caller frees
 * *@v): from the answer cache, or counted in one pass over the events
 * (chunks read directly, SQL from where that stops) and put there.
 * Return: SQLite's code; a failed read is in @err and nothing is cached.
 */
static int
name_counts(struct srv_req *r, struct srv_pool_conn *c, struct name_count **v, size_t *n,
	    struct srv_rd_err *err)
{
	struct count_scan k = { .next = 1 };
	sqlite3_stmt *st = NULL;
	struct st_conn *sc;
	int64_t names = 0, last = 0;
	size_t len = 0, m = 0;
	char *key, *text;
	int rc;

	*v = NULL;
	*n = 0;
	key = tc_arena_alloc(&r->arena, ST_ID_LEN + 16);
	sprintf(key, "%s|name-counts", c->key);
	text = srv_cache_get(&r->srv->cache, key, &len);
	if (text) {
		*v = (struct name_count *)text;	/* malloc'd: aligned for it */
		*n = len / sizeof(**v);
		return SQLITE_OK;
	}
	rc = sqlite3_prepare_v2(c->db, "SELECT (SELECT MAX(id) FROM strings), "
				"(SELECT MAX(last_event) FROM units)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (srv_rd_step(err, st) == SQLITE_ROW) {
		names = sqlite3_column_int64(st, 0);
		last = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (err->rc != SQLITE_OK)
		return err->rc;
	if (names < 0 || names >= UINT32_MAX)
		names = 0;
	k.nnames = (uint32_t)names + 1;
	k.by_name = tc_xcalloc(k.nnames, sizeof(*k.by_name));
	sc = st_conn_of(c->db);
	if (sc && last > 0)
		st_conn_scan(sc, 1, last + 1, count_ev, &k);
	rc = sqlite3_prepare_v2(c->db, "SELECT id, name FROM events WHERE id >= ?1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, k.next);
	while (srv_rd_step(err, st) == SQLITE_ROW)
		count_event(&k, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	rc = err->rc;
	if (rc != SQLITE_OK)
		goto out;
	for (uint32_t i = 1; i < k.nnames; i++)
		m += k.by_name[i] != 0;
	*v = tc_xmalloc((m ? m : 1) * sizeof(**v));
	for (uint32_t i = 1; i < k.nnames; i++)
		if (k.by_name[i])
			(*v)[(*n)++] = (struct name_count){ .name = i, .count = k.by_name[i] };
	srv_cache_put(&r->srv->cache, key, (const char *)*v, *n * sizeof(**v));
out:
	free(k.by_name);
	return rc;
}

/* The events of the names in @s, from the counts @v (sorted by name). */
static int64_t
name_set_total(const struct name_set *s, const struct name_count *v, size_t n)
{
	int64_t total = 0;

	for (size_t i = 0; i < s->n; i++) {
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid].name < s->ids[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && v[lo].name == s->ids[i])
			total += v[lo].count;
	}
	return total;
}

/* ---- the page ---- */

static void
search_match(struct tc_jw *w, int64_t i, int64_t id, int64_t ts, int64_t dur, int64_t unit,
	     const char *name)
{
	if (i)
		tc_jw_lit(w, ",");
	tc_jw_lit(w, "{\"id\":");
	tc_jw_i64(w, id);
	tc_jw_lit(w, ",\"ts\":");
	tc_jw_i64(w, ts);
	tc_jw_lit(w, ",\"dur\":");
	tc_jw_i64(w, dur);
	tc_jw_lit(w, ",\"unit\":");
	tc_jw_i64(w, unit);
	tc_jw_lit(w, ",\"name\":");
	tc_jw_str(w, name);
	tc_jw_lit(w, "}");
}

#define SEARCH_MERGE_CURSORS 256	/* at most this many statements open at once */

/* The matches of one name in one unit, in id (= ts) order, from the name index. */
struct search_cur {
	sqlite3_stmt *st;
	int64_t unit, id, ts, dur;
	uint32_t name;
	bool live;
};

static void
search_cur_next(struct search_cur *k, struct srv_rd_err *err)
{
	if (srv_rd_step(err, k->st) != SQLITE_ROW) {
		k->live = false;
		return;
	}
	k->id = sqlite3_column_int64(k->st, 0);
	k->ts = sqlite3_column_int64(k->st, 1);
	k->dur = sqlite3_column_int64(k->st, 2);
}

/*
 * The page of matches ordered by (ts, id) by merging, for every unit and
 * every matching name, its events within the unit's ids (`name = ? AND id
 * BETWEEN`: the events module skips chunks by their name filter; a unit's
 * ids are in ts order): reads offset + limit matches,
 * where ORDER BY over all events reads and sorts every match.  Return 1
 * written, 0 too many units x names (the caller sorts), -1 store error.
 */
static int
search_merge(struct srv_pool_conn *c, const char *q, int64_t limit, int64_t offset,
	     struct tc_jw *w, struct srv_rd_err *err)
{
	struct unit_list ul = { 0 };
	struct search_cur *cur = NULL;
	sqlite3_stmt *ns = NULL, *str = NULL;
	uint32_t *names = NULL;
	const char **text = NULL;
	size_t nn = 0, ncap = 0, ncur = 0;
	int64_t want = offset + limit, seen = 0, out = 0;
	int rc = 0;

	if (sqlite3_prepare_v2(c->db, "SELECT id, s FROM strings WHERE instr(lower(s), "
			       "lower(?1)) > 0", -1, &ns, NULL)) {
		rc = -1;
		goto out;
	}
	sqlite3_bind_text(ns, 1, q, -1, SQLITE_STATIC);
	while (sqlite3_step(ns) == SQLITE_ROW && nn <= SEARCH_MERGE_CURSORS) {
		if (nn == ncap) {
			ncap = ncap ? ncap * 2 : 16;
			names = tc_xrealloc(names, ncap * sizeof(*names));
			text = tc_xrealloc(text, ncap * sizeof(*text));
		}
		names[nn] = (uint32_t)sqlite3_column_int64(ns, 0);
		text[nn++] = tc_xstrdup(sqlite3_column_text(ns, 1) ?
					 (const char *)sqlite3_column_text(ns, 1) : "");
	}
	sqlite3_finalize(ns);
	ns = NULL;
	if (!nn || nn > SEARCH_MERGE_CURSORS)
		goto out;
	if (sqlite3_prepare_v2(c->db, "SELECT u.id, u.kind, u.first_event, u.last_event FROM "
			       "units u", -1, &ns, NULL)) {
		rc = -1;
		goto out;
	}
	while (sqlite3_step(ns) == SQLITE_ROW)
		srv_unit_list_push(&ul, ns, 0);
	if (ul.n * nn > SEARCH_MERGE_CURSORS)
		goto out;
	cur = tc_xcalloc(ul.n * nn, sizeof(*cur));
	for (size_t i = 0; i < ul.n; i++) {
		if (ul.first[i] <= 0 || ul.last[i] < ul.first[i])
			continue;
		for (size_t j = 0; j < nn; j++) {
			struct search_cur *k = &cur[ncur++];

			if (sqlite3_prepare_v2(c->db, "SELECT id, ts, dur FROM events WHERE name = ?1 "
					       "AND id >= ?2 AND id <= ?3 ORDER BY id", -1, &k->st,
					       NULL)) {
				rc = -1;
				goto out;
			}
			sqlite3_bind_int64(k->st, 1, names[j]);
			sqlite3_bind_int64(k->st, 2, ul.first[i]);
			sqlite3_bind_int64(k->st, 3, ul.last[i]);
			k->unit = ul.id[i];
			k->name = (uint32_t)j;	/* index into text[] */
			k->live = true;
			search_cur_next(k, err);
		}
	}
	while (seen < want) {
		struct search_cur *m = NULL;

		for (size_t i = 0; i < ncur; i++)
			if (cur[i].live && (!m || cur[i].ts < m->ts ||
					    (cur[i].ts == m->ts && cur[i].id < m->id)))
				m = &cur[i];
		if (!m)
			break;
		if (seen++ >= offset)
			search_match(w, out++, m->id, m->ts, m->dur, m->unit, text[m->name]);
		search_cur_next(m, err);
	}
	rc = err->rc == SQLITE_OK ? 1 : -1;
out:
	for (size_t i = 0; i < ncur; i++)
		sqlite3_finalize(cur[i].st);
	free(cur);
	for (size_t j = 0; j < nn; j++)
		free((char *)text[j]);
	free(text);
	free(names);
	sqlite3_finalize(ns);
	sqlite3_finalize(str);
	srv_unit_list_free(&ul);
	return rc;
}

/* A match of search_scan(): one event. */
struct hit {
	int64_t id, ts, dur, unit;
	uint32_t name;
};

struct page_scan {
	const struct name_set *s;
	struct hit *v;		/* kept matches: at most 2 * want after each unit */
	size_t n, cap;
	size_t want, got;	/* got: of the unit being read */
	bool cut;		/* @last is the want-th match so far: later ones can stop */
	struct hit last;
	int64_t unit, next;	/* the id after the last one read */
};

/*
 * Keep the event when its name matches; non-zero once the unit gave enough
 * or reached past the want-th match kept so far (a unit's ids are in ts
 * order: the rest of it comes later still).
 */
static int
page_event(struct page_scan *k, int64_t id, int64_t ts, int64_t dur, int64_t name)
{
	k->next = id + 1;
	if (k->cut && (ts > k->last.ts || (ts == k->last.ts && id > k->last.id)))
		return 1;
	if (name < 0 || name > UINT32_MAX || !name_set_has(k->s, (uint32_t)name))
		return 0;
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 256;
		k->v = tc_xrealloc(k->v, k->cap * sizeof(*k->v));
	}
	k->v[k->n++] = (struct hit){ id, ts, dur, k->unit, (uint32_t)name };
	return ++k->got >= k->want;
}

static int
page_ev(void *arg, int64_t id, const struct st_ev_brief *ev)
{
	return page_event(arg, id, ev->ts, ev->dur, ev->name);
}

static int
hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * The page of matches ordered by (ts, id): from each unit its first
 * offset + limit matches in id (= ts) order, read straight from the store
 * (SQL from where that stops), then sorted together; whenever twice that
 * many are kept, only the first offset + limit stay, and the next units
 * stop at the last of those.  Return 1 written, 0
 * not for this page (past SEARCH_SCAN_MAX, no direct reads), -1 store error.
 */
static int
search_scan(struct srv_pool_conn *c, const struct name_set *s, int64_t limit, int64_t offset,
	    struct tc_jw *w, struct srv_rd_err *err)
{
	struct st_conn *sc = st_conn_of(c->db);
	struct page_scan k = { .s = s };
	struct unit_list ul = { 0 };
	sqlite3_stmt *st = NULL, *rest = NULL, *str = NULL;
	int64_t want = offset + limit, out = 0;
	int rc = 0;

	if (!sc || want > SEARCH_SCAN_MAX)
		return 0;
	if (sqlite3_prepare_v2(c->db, "SELECT id, kind, first_event, last_event FROM units", -1,
			       &st, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT id, ts, dur, name FROM events WHERE id >= ?1 AND "
			       "id <= ?2 ORDER BY id", -1, &rest, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT s FROM strings WHERE id = ?1", -1, &str, NULL)) {
		rc = -1;
		goto out;
	}
	while (srv_rd_step(err, st) == SQLITE_ROW)
		srv_unit_list_push(&ul, st, 0);
	for (size_t i = 0; i < ul.n && err->rc == SQLITE_OK; i++) {
		if (ul.first[i] <= 0 || ul.last[i] < ul.first[i])
			continue;
		k.unit = ul.id[i];
		k.next = ul.first[i];
		k.want = (size_t)want;
		k.got = 0;
		/* straight from the chunks; SQL from where that stopped on a bad one */
		if (st_conn_scan(sc, ul.first[i], ul.last[i] + 1, page_ev, &k) <= 0) {
			sqlite3_reset(rest);
			sqlite3_bind_int64(rest, 1, k.next);
			sqlite3_bind_int64(rest, 2, ul.last[i]);
			while (k.next <= ul.last[i] && srv_rd_step(err, rest) == SQLITE_ROW)
				if (page_event(&k, sqlite3_column_int64(rest, 0),
					       sqlite3_column_int64(rest, 1),
					       sqlite3_column_int64(rest, 2),
					       sqlite3_column_int64(rest, 3)))
					break;
		}
		if (k.n >= 2 * k.want) {	/* keep the first want: memory stays bounded */
			qsort(k.v, k.n, sizeof(*k.v), hit_cmp);
			k.n = k.want;
			k.last = k.v[k.n - 1];
			k.cut = true;
		}
	}
	if (err->rc != SQLITE_OK) {
		rc = -1;
		goto out;
	}
	if (k.n > 1)
		qsort(k.v, k.n, sizeof(*k.v), hit_cmp);
	for (size_t i = (size_t)offset; i < k.n && (int64_t)i < want; i++) {
		const struct hit *h = &k.v[i];
		const char *name = NULL;

		sqlite3_reset(str);
		sqlite3_bind_int64(str, 1, h->name);
		if (srv_rd_step(err, str) == SQLITE_ROW)
			name = (const char *)sqlite3_column_text(str, 0);
		search_match(w, out++, h->id, h->ts, h->dur, h->unit, name ? name : "");
	}
	rc = err->rc == SQLITE_OK ? 1 : -1;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(rest);
	sqlite3_finalize(str);
	srv_unit_list_free(&ul);
	free(k.v);
	return rc;
}

/* The total with SQL alone: every matching event counted. */
static int
search_count_sql(sqlite3 *db, const char *q, int64_t *total, struct srv_rd_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM events e WHERE " SEARCH_MATCH, -1,
				    &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	if (srv_rd_step(err, st) == SQLITE_ROW)
		*total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return err->rc;
}

/* The page with SQL alone: every match read and sorted. */
static int
search_page_sql(sqlite3 *db, const char *q, int64_t limit, int64_t offset, struct tc_jw *w,
		struct srv_rd_err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t n = 0;
	int rc = sqlite3_prepare_v2(db, "SELECT e.id, e.ts, e.dur, e.unit, s.s FROM events e "
				    "JOIN strings s ON s.id = e.name WHERE " SEARCH_MATCH
				    " ORDER BY e.ts, e.id LIMIT ?2 OFFSET ?3", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	while (srv_rd_step(err, st) == SQLITE_ROW)
		search_match(w, n++, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			     sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
			     (const char *)sqlite3_column_text(st, 4));
	sqlite3_finalize(st);
	return err->rc;
}

enum MHD_Result
srv_search(struct srv_req *r, struct srv_pool_conn *c)
{
	const char *q = srv_arg(r, "q"), *sql_only = getenv("NX_SEARCH_SQL");
	int64_t limit = 100, offset = 0, total = 0;
	struct name_count *counts = NULL;
	struct name_set ns = { 0 };
	struct tc_jw w = { 0 };
	struct srv_rd_err err = { 0 };
	bool sql = sql_only && !strcmp(sql_only, "1"), have_ns = false;
	size_t ncounts = 0, len = 0;
	char *key, *text;
	int rc = SQLITE_OK;

	if (!q || !*q || strlen(q) > 256) {
		srv_reply_error(r, 400, "bad_param", "q must be 1 to 256 bytes");
		goto put;
	}
	if (srv_arg_i64(r, "limit", &limit, 0, SRV_LIST_MAX) < 0 ||
	    srv_arg_i64(r, "offset", &offset, 0, INT64_C(1) << 40) < 0)
		goto put;
	st_read_begin(c->db);
	/* remembered for the next pages */
	key = tc_arena_alloc(&r->arena, ST_ID_LEN + 16 + strlen(q));
	sprintf(key, "%s|search-total|%s", c->key, q);
	text = sql ? NULL : srv_cache_get(&r->srv->cache, key, &len);
	if (text) {
		if (tc_parse_i64(text, &total) < 0)
			total = 0;
		free(text);
	} else {
		char num[24];

		if (sql) {
			rc = search_count_sql(c->db, q, &total, &err);
		} else {
			rc = name_set_get(c->db, q, &ns, &err);
			have_ns = rc == SQLITE_OK;
			if (rc == SQLITE_OK && ns.n)
				rc = name_counts(r, c, &counts, &ncounts, &err);
			if (rc == SQLITE_OK)
				total = name_set_total(&ns, counts, ncounts);
		}
		if (rc != SQLITE_OK)
			goto dberr;	/* not a count to remember */
		snprintf(num, sizeof(num), "%lld", (long long)total);
		if (!sql)
			srv_cache_put(&r->srv->cache, key, num, strlen(num));
	}
	tc_jw_lit(&w, "{\"total\":");
	tc_jw_i64(&w, total);
	tc_jw_lit(&w, ",\"matches\":[");
	if (offset < total && limit > 0) {
		int m = sql ? 0 : search_merge(c, q, limit, offset, &w, &err);

		if (m == 0 && !sql && !have_ns) {
			rc = name_set_get(c->db, q, &ns, &err);
			have_ns = rc == SQLITE_OK;
			if (rc != SQLITE_OK)
				goto dberr;
		}
		if (m == 0 && !sql)
			m = search_scan(c, &ns, limit, offset, &w, &err);
		if (m < 0)
			goto dberr;
		if (m == 0 && (rc = search_page_sql(c->db, q, limit, offset, &w, &err)) != SQLITE_OK)
			goto dberr;
	}
	st_read_end(c->db);
	srv_pool_put(r->srv, c);
	tc_jw_lit(&w, "]}");
	srv_reply_text(r, 200, w.p, w.len);
	tc_jw_free(&w);
	name_set_free(&ns);
	free(counts);
	return MHD_YES;
dberr:
	tc_jw_free(&w);
	srv_reply_error(r, 500, "internal", "trace store: %s",
			err.rc != SQLITE_OK ? err.msg : sqlite3_errmsg(c->db));
	st_read_end(c->db);
	name_set_free(&ns);
	free(counts);
put:
	srv_pool_put(r->srv, c);
	return MHD_YES;
}
