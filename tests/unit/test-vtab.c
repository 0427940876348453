/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-vtab.c - the `events` virtual table (store/st-vtab.c)
 * against a brute force: random events of several units (nesting depths,
 * counters, args, more than 256 events a unit so that units have several
 * chunks) are packed into event_chunks/event_data and also stored as a plain
 * table ref_events; every query shape the code runs is answered from both
 * for many random parameters and the answers must be equal.  The plans
 * (EXPLAIN QUERY PLAN) must use the constraints they were written for.
 * Then corrupt chunks must fail with SQLITE_CORRUPT naming the chunk, and a
 * trace written by st_writer must read back as what was added.
 * NX_TEST_SEED=N picks another random trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/st-chunk.h"
#include "store/store.h"
#include "tests/tap.h"
#include "tests/unit/sql-int.h"

#define VT_STR_(x) #x
#define VT_STR(x) VT_STR_(x)
#define VT_VERSION VT_STR(ST_TRACE_SCHEMA_VERSION)	/* the store's, as text */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static int64_t id_max;	/* the last event's id */

static uint64_t
rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* uniform in [lo, hi] */
static int64_t
rnd_in(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

struct ev {
	int64_t id, ts, dur, seq;
	int unit, kind, depth, flags;
	uint32_t name, cat;
	double value;
	char *args;
};

static const int units[] = { 1, 2, 4, 5, 7, 8, 11 };	/* ids are not dense */
static const int nper[] = { 700, 0, 256, 257, 1, 1300, 40 };
#define NUNITS ((int)(sizeof(units) / sizeof(units[0])))
#define NNAMES 40

static struct ev *evs;
static int nev;
static int64_t ts_min, ts_max;

static int
ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Random events in id order: unit 11 is a counter series, the rest slices,
 * instants and a few counters, with repeated timestamps and skewed names. */
static void
gen_events(void)
{
	int total = 0, k = 0;

	for (int u = 0; u < NUNITS; u++)
		total += nper[u];
	evs = calloc((size_t)total, sizeof(*evs));
	for (int u = 0; u < NUNITS; u++) {
		int64_t ts = rnd_in(-50, 1000);

		for (int j = 0; j < nper[u]; j++, k++) {
			struct ev *e = &evs[k];

			e->unit = units[u];
			if (rnd() % 3)
				ts += rnd_in(0, 40);	/* ties now and then */
			e->ts = ts;
			e->kind = units[u] == 11 ? ST_EV_COUNTER : rnd() % 10 == 0 ? ST_EV_INSTANT :
				  rnd() % 25 == 0 ? ST_EV_COUNTER : ST_EV_SLICE;
			e->dur = e->kind == ST_EV_SLICE ? rnd_in(0, rnd() % 8 ? 60 : 3000) : 0;
			e->depth = units[u] == 7 ? 0 : (int)(rnd() % (1 + (uint64_t)(j / 200 % 5)));
			e->name = (uint32_t)(rnd() % 4 ? rnd_in(1, 8) : rnd_in(1, NNAMES));
			e->cat = (uint32_t)rnd_in(0, 3);
			e->flags = rnd() % 7 == 0;
			e->value = e->kind == ST_EV_COUNTER ? (double)rnd_in(-1000, 1000) / 8 : 0;
			if (rnd() % 3 == 0)
				e->args = tc_xasprintf("{\"k\":%d,\"s\":\"%.*s\"}", (int)rnd_in(0, 99),
						       (int)rnd_in(0, rnd() % 50 ? 10 : 3000),
						       "abcdefghijklmnopqrstuvwxyz");
		}
	}
	nev = total;
	/* seq: a random permutation (the input order) */
	for (int i = 0; i < nev; i++)
		evs[i].seq = i + 1;
	for (int i = nev - 1; i > 0; i--) {
		int j = (int)rnd_in(0, i);
		int64_t t = evs[i].seq;

		evs[i].seq = evs[j].seq;
		evs[j].seq = t;
	}
	qsort(evs, (size_t)nev, sizeof(*evs), ev_cmp);
	ts_min = INT64_MAX;
	ts_max = INT64_MIN;
	for (int i = 0; i < nev; i++) {
		ts_min = TC_MIN(ts_min, evs[i].ts);
		ts_max = TC_MAX(ts_max, evs[i].ts + evs[i].dur);
	}
}

/*
 * Number the events: 1, 2, ... (@gaps 0); with unused ids between units
 * (@gaps 1: up to 700, so some blocks of the vtab's id map hold no
 * event); or with one gap of 2^24 (@gaps 2: too sparse for the map).
 */
static void
number_events(int gaps)
{
	int64_t id = 0;

	for (int i = 0; i < nev; i++) {
		if (i && evs[i].unit != evs[i - 1].unit)
			id += gaps == 1 ? rnd_in(0, 700) : gaps == 2 && evs[i].unit == units[3] ?
			      1 << 24 : 0;
		evs[i].id = ++id;
	}
	id_max = id;
}

static int
exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		printf("# sql error: %s\n#   in %s\n", msg, sql);
	sqlite3_free(msg);
	return rc;
}

/* Add event_dir to the store at @path, packed from its event_chunks rows. */
static int
pack_dir(const char *path)
{
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	int rc = sqlite3_open(path, &db);

	if (rc == SQLITE_OK)
		rc = exec(db, "CREATE TABLE IF NOT EXISTS event_dir (id INTEGER PRIMARY KEY, "
			  "rows BLOB NOT NULL)");
	if (rc == SQLITE_OK && st_chunk_dir_pack(db, &err) < 0) {
		printf("# %s\n", err.msg);
		rc = SQLITE_ERROR;
	}
	sqlite3_close(db);
	return rc;
}

/* Pack events [a, b) (one unit) into one chunk. */
static void
put_chunk(sqlite3_stmt *dir, sqlite3_stmt *data, int a, int b)
{
	struct st_chunk_dir d = { .first = evs[a].id, .unit = evs[a].unit, .count = b - a,
				  .ts_first = evs[a].ts, .ts_last = evs[b - 1].ts,
				  .end_max = INT64_MIN, .min_depth = INT32_MAX,
				  .max_depth = INT32_MIN };
	struct tc_buf cols, args;
	struct st_cev prev;

	tc_buf_init(&cols);
	tc_buf_init(&args);
	for (int i = a; i < b; i++) {
		struct ev *e = &evs[i];
		struct st_cev c = { .ts = e->ts, .dur = e->dur, .seq = e->seq, .value = e->value,
				    .name = e->name, .cat = e->cat, .depth = e->depth,
				    .kind = (uint8_t)e->kind, .flags = (uint8_t)e->flags,
				    .args_len = e->args ? (uint32_t)strlen(e->args) : 0 };

		st_chunk_enc_event(&cols, &c, i > a ? &prev : NULL);
		prev = c;
		if (e->args)
			tc_buf_adds(&args, e->args);
		d.end_max = TC_MAX(d.end_max, e->ts + e->dur);
		d.min_depth = TC_MIN(d.min_depth, e->depth);
		d.max_depth = TC_MAX(d.max_depth, e->depth);
		st_bloom_add(d.bloom, e->name);
	}
	sqlite3_bind_int64(dir, 1, d.first);
	sqlite3_bind_int(dir, 2, d.unit);
	sqlite3_bind_int(dir, 3, d.count);
	sqlite3_bind_int64(dir, 4, d.ts_first);
	sqlite3_bind_int64(dir, 5, d.ts_last);
	sqlite3_bind_int64(dir, 6, d.end_max);
	sqlite3_bind_int(dir, 7, d.min_depth);
	sqlite3_bind_int(dir, 8, d.max_depth);
	sqlite3_bind_blob(dir, 9, d.bloom, ST_BLOOM_BYTES, SQLITE_STATIC);
	sqlite3_step(dir);
	sqlite3_reset(dir);
	sqlite3_bind_int64(data, 1, d.first);
	sqlite3_bind_blob(data, 2, cols.data, (int)cols.len, SQLITE_STATIC);
	if (args.len)
		sqlite3_bind_blob(data, 3, args.data, (int)args.len, SQLITE_STATIC);
	else
		sqlite3_bind_null(data, 3);
	sqlite3_step(data);
	sqlite3_reset(data);
	tc_buf_free(&cols);
	tc_buf_free(&args);
}

/* A trace file with the events packed by hand (chunks of 1..256 events, or
 * exactly 256 when @full) plus ref_events, strings and edges. */
static int
build(const char *path, bool full)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *dir = NULL, *data = NULL, *ref = NULL;
	int rc;

	unlink(path);
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = exec(db, "PRAGMA user_version = " VT_VERSION "; BEGIN;"
			  "CREATE TABLE event_chunks (id INTEGER PRIMARY KEY, unit INTEGER NOT NULL,"
			  " count INTEGER NOT NULL, ts_first INTEGER NOT NULL,"
			  " ts_last INTEGER NOT NULL, end_max INTEGER NOT NULL,"
			  " min_depth INTEGER NOT NULL, max_depth INTEGER NOT NULL,"
			  " names BLOB NOT NULL);"
			  "CREATE TABLE event_data (id INTEGER PRIMARY KEY, cols BLOB NOT NULL,"
			  " args BLOB);"
			  "CREATE TABLE ref_events (id INTEGER PRIMARY KEY, unit INTEGER, ts INTEGER,"
			  " dur INTEGER, kind INTEGER, depth INTEGER, name INTEGER, cat INTEGER,"
			  " value REAL, seq INTEGER, flags INTEGER, args TEXT, ts_end INTEGER);"
			  "CREATE TABLE strings (id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
			  "CREATE TABLE edges (src INTEGER NOT NULL, dst INTEGER NOT NULL,"
			  " kind INTEGER NOT NULL, label TEXT);");
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO event_chunks VALUES (?,?,?,?,?,?,?,?,?)",
					-1, &dir, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO event_data VALUES (?,?,?)", -1, &data,
					NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO ref_events VALUES (?,?,?,?,?,?,?,?,?,?,?,"
					"?,?)", -1, &ref, NULL);
	if (rc != SQLITE_OK)
		goto out;
	for (int a = 0; a < nev;) {
		int b = a + 1, lim = full ? ST_CHUNK_EVENTS : (int)rnd_in(1, ST_CHUNK_EVENTS);

		while (b < nev && b - a < lim && evs[b].unit == evs[a].unit)
			b++;
		put_chunk(dir, data, a, b);
		a = b;
	}
	for (int i = 0; i < nev; i++) {
		struct ev *e = &evs[i];

		sqlite3_bind_int64(ref, 1, e->id);
		sqlite3_bind_int(ref, 2, e->unit);
		sqlite3_bind_int64(ref, 3, e->ts);
		sqlite3_bind_int64(ref, 4, e->dur);
		sqlite3_bind_int(ref, 5, e->kind);
		sqlite3_bind_int(ref, 6, e->depth);
		sqlite3_bind_int64(ref, 7, e->name);
		sqlite3_bind_int64(ref, 8, e->cat);
		if (e->kind == ST_EV_COUNTER)
			sqlite3_bind_double(ref, 9, e->value);
		else
			sqlite3_bind_null(ref, 9);
		sqlite3_bind_int64(ref, 10, e->seq);
		sqlite3_bind_int(ref, 11, e->flags);
		if (e->args)
			sqlite3_bind_text(ref, 12, e->args, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(ref, 12);
		sqlite3_bind_int64(ref, 13, e->ts + e->dur);
		sqlite3_step(ref);
		sqlite3_reset(ref);
	}
	for (int n = 1; n <= NNAMES + 5; n++) {
		char *sql = sqlite3_mprintf("INSERT INTO strings VALUES (%d, 'name%d')", n, n);

		exec(db, sql);
		sqlite3_free(sql);
	}
	for (int j = 0; j < 3000; j++) {
		char *sql = sqlite3_mprintf("INSERT INTO edges VALUES (%lld, %lld, %d, NULL)",
					    (long long)evs[rnd_in(0, nev - 1)].id,
					    (long long)evs[rnd_in(0, nev - 1)].id,
					    (int)rnd_in(0, 3));

		exec(db, sql);
		sqlite3_free(sql);
	}
	rc = exec(db, "CREATE INDEX edges_src ON edges(src, kind);"
		  "CREATE INDEX edges_dst ON edges(dst, kind); COMMIT");
out:
	if (rc != SQLITE_OK)
		printf("# build: %s\n", sqlite3_errmsg(db));
	sqlite3_finalize(dir);
	sqlite3_finalize(data);
	sqlite3_finalize(ref);
	sqlite3_close(db);
	return rc;
}

/* ---- the query shapes ---- */

/*
 * One query shape: @sql with @T for the table; @ref_sql (optional) is
 * what the brute force runs instead (a tie-breaker the virtual table gives
 * by its id order).  @params: one letter per ?N: i id, u unit, d depth,
 * t time, n name, k kind, f flags, c cat, s seq, x a digit (text), r a
 * real id, q a text id, e an edge dst.  @plan: what EXPLAIN QUERY PLAN
 * must show for `events` (NULL: not checked); @nosort: and no sorting.
 */
struct shape {
	const char *sql, *ref_sql, *params, *plan;
	bool nosort;
};

#define SORTED true

static const struct shape shapes[] = {
	/* server/srv-trace.c */
	{ "SELECT id, ts, dur, depth, kind, value, name FROM @T WHERE unit = ?1 AND depth = ?2 "
	  "AND ts < ?3 ORDER BY ts DESC LIMIT 1",
	  "SELECT id, ts, dur, depth, kind, value, name FROM @T WHERE unit = ?1 AND depth = ?2 "
	  "AND ts < ?3 ORDER BY ts DESC, id DESC LIMIT 1", "udt", "unit= depth= ts< desc", SORTED },
	{ "SELECT id, ts, dur, depth, kind, value, name FROM @T WHERE id >= ?1 AND id < ?2 "
	  "ORDER BY id", NULL, "ii", "id>= id<", SORTED },
	{ "SELECT ts FROM @T WHERE id = ?1", NULL, "i", "id=", false },
	{ "SELECT 1 FROM @T WHERE id = ?1", NULL, "i", "id=", false },
	{ "SELECT * FROM @T WHERE id = ?1", NULL, "i", "id=", false },
	{ "SELECT id, ts, dur FROM @T WHERE name = ?1 AND id >= ?2 AND id <= ?3 ORDER BY id",
	  NULL, "nii", "name= id>= id<=", SORTED },
	{ "SELECT COUNT(*), SUM(e.id) FROM @T e WHERE e.name IN (SELECT id FROM strings "
	  "WHERE instr(lower(s), lower(?1)) > 0)", NULL, "x", "name=IN", false },
	{ "SELECT e.id, e.ts, e.dur, e.unit, s.s FROM @T e JOIN strings s ON s.id = e.name "
	  "WHERE e.name IN (SELECT id FROM strings WHERE instr(lower(s), lower(?1)) > 0) "
	  "ORDER BY e.ts, e.id LIMIT 50 OFFSET 3", NULL, "x", "name=IN", false },
	{ "SELECT name, COUNT(*), SUM(dur), MAX(dur) FROM @T WHERE unit = ?1 AND depth = ?2 AND "
	  "ts >= ?3 AND ts < ?4 AND ts_end > ?4 GROUP BY name ORDER BY name", NULL, "udtt",
	  "unit= depth= ts>= ts< ts_end>", false },
	{ "SELECT name, COUNT(*), SUM(dur), MAX(dur) FROM @T WHERE unit = ?1 AND depth = ?2 AND "
	  "ts >= ?3 AND ts < ?4 AND ts + dur > ?4 GROUP BY name ORDER BY name", NULL, "udtt",
	  "unit= depth= ts>= ts<", false },
	{ "SELECT name, dur, depth FROM @T WHERE id >= ?1 AND id < ?2", NULL, "ii", "id>= id<", false },
	{ "SELECT MIN(ts), MAX(ts + dur), MAX(ts_end), COUNT(*) FROM @T", NULL, "", "scan", false },
	/* deps/deps-query.c */
	{ "SELECT v.id, v.unit, v.ts, v.dur, v.depth, v.kind, u.s FROM @T v "
	  "LEFT JOIN strings u ON u.id = v.name WHERE v.id = ?1", NULL, "i", "id=", false },
	{ "SELECT id FROM @T WHERE unit = ?1 AND depth = 0 AND ts <= ?2 AND id < ?3 "
	  "AND kind = 0 ORDER BY ts DESC, id DESC LIMIT 1", NULL, "uti",
	  "unit= depth= ts<= id< kind= desc", SORTED },
	{ "SELECT id FROM @T WHERE unit = ?1 AND depth = 0 AND ts >= ?2 AND id > ?3 "
	  "AND kind = 0 ORDER BY ts, id LIMIT 1", NULL, "uti", "unit= depth= ts>= id> kind=", SORTED },
	{ "SELECT e.src, e.kind, e.label, v.ts + v.dur AS fin FROM edges e "
	  "JOIN @T v ON v.id = e.src WHERE e.dst = ?1 AND ((1 << e.kind) & ?2) != 0 "
	  "ORDER BY fin DESC, e.src DESC LIMIT 8", NULL, "ek", "id=", false },
	{ "SELECT e.src, e.kind, v.ts_end AS fin FROM edges e "
	  "JOIN @T v ON v.id = e.src WHERE e.dst = ?1 ORDER BY fin DESC, e.src DESC LIMIT 8",
	  NULL, "e", "id=", false },
	{ "SELECT id, ts + dur FROM @T WHERE unit = ?1 AND depth = 0 AND ts >= ?2 AND ts <= ?3 "
	  "AND ts + dur <= ?3 AND kind = 0 ORDER BY ts DESC LIMIT 1",
	  "SELECT id, ts + dur FROM @T WHERE unit = ?1 AND depth = 0 AND ts >= ?2 AND ts <= ?3 "
	  "AND ts + dur <= ?3 AND kind = 0 ORDER BY ts DESC, id DESC LIMIT 1", "utt",
	  "unit= depth= ts>= ts<= kind= desc", SORTED },
	{ "SELECT id, ts_end FROM @T WHERE unit = ?1 AND depth = 0 AND ts >= ?2 AND ts <= ?3 "
	  "AND ts_end <= ?3 AND kind = 0 ORDER BY ts DESC LIMIT 1",
	  "SELECT id, ts_end FROM @T WHERE unit = ?1 AND depth = 0 AND ts >= ?2 AND ts <= ?3 "
	  "AND ts_end <= ?3 AND kind = 0 ORDER BY ts DESC, id DESC LIMIT 1", "utt",
	  "unit= depth= ts>= ts<= ts_end<= kind= desc", SORTED },
	/* deps/deps-derive.c, cli/cmd-convert.c, ingest/ing-perfetto-export.c */
	{ "SELECT id FROM @T WHERE (flags & 1) != 0 ORDER BY ts, ts + dur, seq", NULL, "",
	  "scan", false },
	{ "SELECT ts, dur, args FROM @T WHERE id = ?", NULL, "i", "id=", false },
	{ "SELECT e.id, e.ts, e.dur, e.kind, coalesce(n.s, ''), e.value, e.args FROM @T e "
	  "LEFT JOIN strings n ON n.id = e.name ORDER BY e.id", NULL, "", "scan", SORTED },
	{ "SELECT x.rowid, x.src, x.dst, x.kind, a.ts > b.ts FROM edges x "
	  "JOIN @T a ON a.id = x.src JOIN @T b ON b.id = x.dst ORDER BY x.rowid", NULL, "",
	  "id=", false },
	{ "SELECT e.id, e.unit, e.ts, e.dur, e.kind, e.depth, e.value, e.args FROM @T e "
	  "ORDER BY e.ts, e.dur DESC, e.id", NULL, "", "scan", false },
	/* other plans */
	{ "SELECT id FROM @T WHERE id > ?1 ORDER BY id DESC", NULL, "i", "id> desc", SORTED },
	{ "SELECT id, ts FROM @T WHERE id <= ?1 AND id >= ?2 ORDER BY rowid DESC", NULL, "ii",
	  "id<= id>= desc", SORTED },
	{ "SELECT id FROM @T WHERE unit = ?1 ORDER BY ts DESC, id DESC", NULL, "u",
	  "unit= desc", SORTED },
	{ "SELECT id FROM @T WHERE unit = ?1 ORDER BY ts", NULL, "u", "unit=", SORTED },
	{ "SELECT id, ts FROM @T WHERE unit = ?1 AND ts_end >= ?2 AND ts <= ?3 ORDER BY ts, id",
	  NULL, "utt", "unit= ts_end>= ts<=", SORTED },
	{ "SELECT id FROM @T WHERE unit = ?1 AND depth <= ?2 ORDER BY id", NULL, "ud",
	  "unit= depth<=", SORTED },
	{ "SELECT id FROM @T WHERE unit = ?1 AND depth < ?2 AND depth > 0 ORDER BY id DESC",
	  NULL, "ud", "unit= depth< depth> desc", SORTED },
	{ "SELECT * FROM @T WHERE unit = ?1 AND name = ?2 ORDER BY ts", NULL, "un",
	  "unit= name=", SORTED },
	{ "SELECT id FROM @T WHERE name = ?1 ORDER BY id", NULL, "n", "name=", SORTED },
	{ "SELECT id FROM @T WHERE name IN (?1, ?2, ?3) ORDER BY id", NULL, "nnn",
	  "name=IN", SORTED },
	{ "SELECT id FROM @T WHERE unit IN (?1, ?2) ORDER BY ts, id", NULL, "uu", "unit=", false },
	{ "SELECT id FROM @T WHERE id IN (?1, ?2, ?3) ORDER BY id DESC", NULL, "iii", "id=", false },
	{ "SELECT id FROM @T WHERE ts > ?1 AND ts < ?2 ORDER BY id DESC", NULL, "tt",
	  "ts> ts< desc", SORTED },
	{ "SELECT id FROM @T WHERE ts_end >= ?1 AND ts_end <= ?2", NULL, "tt",
	  "ts_end>= ts_end<=", false },
	{ "SELECT id FROM @T WHERE unit > ?1 AND unit <= ?2 AND ts >= ?3 ORDER BY unit, ts",
	  NULL, "uut", "unit> unit<= ts>=", SORTED },
	{ "SELECT id FROM @T WHERE depth = ?1 AND kind = ?2 AND flags = ?3 AND cat = ?4 "
	  "ORDER BY id", NULL, "dkfc", "depth= kind= flags= cat=", SORTED },
	{ "SELECT id, seq FROM @T WHERE seq >= ?1 AND seq < ?1 + 50 AND dur >= ?2 ORDER BY id",
	  NULL, "sd", "seq>= seq< dur>=", SORTED },
	{ "SELECT id FROM @T WHERE id > ?1 AND id < ?2 ORDER BY id", NULL, "rq", "id> id<", SORTED },
	{ "SELECT id FROM @T WHERE ts >= ?1 AND unit = ?2 AND ts <= ?1 + 0.5 ORDER BY ts", NULL,
	  "ru", "ts>= unit= ts<=", SORTED },
	{ "SELECT id FROM @T WHERE id = ?1 OR id = ?2 ORDER BY id", NULL, "ii", NULL, false },
	{ "SELECT value, args FROM @T WHERE kind = 2 AND unit = ?1 ORDER BY ts DESC",
	  "SELECT value, args FROM @T WHERE kind = 2 AND unit = ?1 ORDER BY ts DESC, id DESC", "u",
	  "kind= unit= desc", SORTED },
	{ "SELECT count(*) FROM @T a JOIN @T b ON b.id = a.id + 1 "
	  "WHERE a.unit = b.unit AND b.ts < a.ts", NULL, "", "ts< id= unit=", false },
	{ "SELECT a.id, b.id FROM @T a, @T b WHERE a.unit = ?1 AND b.unit = ?1 "
	  "AND b.id = a.id + 3 AND a.depth = ?2 ORDER BY a.id", NULL, "ud", NULL, false },
	{ "SELECT id FROM @T WHERE id = NULL OR unit = NULL OR name IN (NULL)", NULL, "", NULL, false },
	{ "SELECT id FROM @T WHERE id > 9223372036854775807 OR id < -9223372036854775808 OR "
	  "ts >= 1e300 OR ts < -1e300 OR unit = 2.5", NULL, "", NULL, false },
};

/* Bind ?N of @s by letter @p; the values repeat for the two runs. */
static void
bind_param(sqlite3_stmt *s, int n, char p)
{
	int64_t v;

	switch (p) {
	case 'i':
		v = rnd() % 8 ? evs[rnd_in(0, nev - 1)].id + rnd_in(-2, 2) : rnd_in(-3, id_max + 3);
		break;
	case 'u':
		v = rnd() % 5 ? units[rnd_in(0, NUNITS - 1)] : rnd_in(0, 13);
		break;
	case 'd':
		v = rnd_in(-1, 5);
		break;
	case 't':
		v = rnd() % 2 ? evs[rnd_in(0, nev - 1)].ts + rnd_in(-1, 1) :
		    rnd_in(ts_min - 20, ts_max + 20);
		break;
	case 'n':
		v = rnd_in(0, NNAMES + 2);
		break;
	case 'k':
		v = rnd_in(0, 3);
		break;
	case 'f':
		v = rnd_in(0, 1);
		break;
	case 'c':
		v = rnd_in(0, 4);
		break;
	case 's':
		v = rnd_in(-5, nev);
		break;
	case 'e':
		v = rnd() % 8 ? evs[rnd_in(0, nev - 1)].id : rnd_in(1, id_max);
		break;
	case 'x': {
		char d[2] = { (char)('0' + rnd_in(0, 9)), 0 };

		sqlite3_bind_text(s, n, d, 1, SQLITE_TRANSIENT);
		return;
	}
	case 'r':
		sqlite3_bind_double(s, n, (double)rnd_in(-4, id_max + 4) / 2);
		return;
	case 'q': {
		char t[24];

		snprintf(t, sizeof(t), "%lld", (long long)rnd_in(0, id_max));
		sqlite3_bind_text(s, n, t, -1, SQLITE_TRANSIENT);
		return;
	}
	default:
		v = 0;
	}
	sqlite3_bind_int64(s, n, v);
}

/* All rows of @s as text ("NULL" for NULL), rows on lines; NULL on error. */
static char *
rows(sqlite3 *db, sqlite3_stmt *s, int *rc)
{
	struct tc_buf b;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	while ((*rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(s); i++) {
			const char *t = (const char *)sqlite3_column_text(s, i);

			tc_buf_printf(&b, "%s%s", i ? "|" : "", t ? t : "NULL");
		}
		tc_buf_addc(&b, '\n');
	}
	if (*rc != SQLITE_DONE) {
		printf("# step: %s\n", sqlite3_errmsg(db));
		tc_buf_free(&b);
		return NULL;
	}
	*rc = SQLITE_OK;
	return tc_buf_steal(&b);
}

/* @sql with each "@T" replaced by @table (malloc'd). */
static char *
subst(const char *sql, const char *table)
{
	struct tc_buf b;
	const char *p;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	while ((p = strstr(sql, "@T"))) {
		tc_buf_add(&b, sql, (size_t)(p - sql));
		tc_buf_adds(&b, table);
		sql = p + 2;
	}
	tc_buf_adds(&b, sql);
	return tc_buf_steal(&b);
}

static char *
eqp(sqlite3 *db, const char *sql)
{
	char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	sqlite3_stmt *s = NULL;
	struct tc_buf b;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	if (sqlite3_prepare_v2(db, q, -1, &s, NULL) == SQLITE_OK)
		while (sqlite3_step(s) == SQLITE_ROW)
			tc_buf_printf(&b, "%s; ", (const char *)sqlite3_column_text(s, 3));
	sqlite3_finalize(s);
	sqlite3_free(q);
	return tc_buf_steal(&b);
}

/* Run every shape @iters times with random parameters on events and
 * ref_events; one test per shape, plus its plan. */
static void
check_shapes(sqlite3 *db, int iters, const char *what)
{
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		const struct shape *sh = &shapes[k];
		char *sql = subst(sh->sql, "events");
		char *rsql = subst(sh->ref_sql ? sh->ref_sql : sh->sql, "ref_events");
		sqlite3_stmt *a = NULL, *b = NULL;
		int np = (int)strlen(sh->params), bad = 0, n = *sh->params ? iters : 1;
		int64_t total = 0;

		if (sqlite3_prepare_v2(db, sql, -1, &a, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(db, rsql, -1, &b, NULL) != SQLITE_OK) {
			ok(0, "%s: shape %zu prepares: %s", what, k, sqlite3_errmsg(db));
			goto next;
		}
		for (int it = 0; it < n && bad < 3; it++) {
			uint64_t save;
			char *ga, *gb;
			int rca, rcb;

			save = rng_state;
			for (int p = 0; p < np; p++)
				bind_param(a, p + 1, sh->params[p]);
			rng_state = save;
			for (int p = 0; p < np; p++)
				bind_param(b, p + 1, sh->params[p]);
			ga = rows(db, a, &rca);
			gb = rows(db, b, &rcb);
			if (!ga || !gb || strcmp(ga, gb)) {
				char *x = sqlite3_expanded_sql(a);

				printf("# shape %zu iteration %d differs: %s\n", k, it, x);
				sqlite3_free(x);
				printf("#   events: %.400s\n#   brute force: %.400s\n",
				       ga ? ga : "(error)", gb ? gb : "(error)");
				bad++;
			}
			for (const char *c = gb; c && *c; c++)
				total += *c == '\n';
			free(ga);
			free(gb);
			sqlite3_reset(a);
			sqlite3_reset(b);
		}
		ok(!bad, "%s: shape %zu matches the brute force (%d runs, %" PRId64 " rows): %.60s",
		   what, k, n, total, sh->sql);
		if (sh->plan) {
			char *plan = eqp(db, sql), want[128];

			snprintf(want, sizeof(want), ":%s;", sh->plan);
			if (!ok(strstr(plan, want) && (!sh->nosort || !strstr(plan, "TEMP B-TREE")),
				"%s: shape %zu plan uses \"%s\"%s", what, k, sh->plan,
				sh->nosort ? " and does not sort" : ""))
				printf("#   plan: %s\n", plan);
			free(plan);
		}
next:
		sqlite3_finalize(a);
		sqlite3_finalize(b);
		free(sql);
		free(rsql);
	}
}


/* The error of running @sql: its code, the message in @msg. */
static int
q_err(sqlite3 *db, const char *sql, char *msg, size_t n)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			for (int i = 0; i < sqlite3_column_count(s); i++)
				sqlite3_column_text(s, i);
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
	}
	snprintf(msg, n, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return rc;
}

/* Build a fresh copy at @path, run @upd (a format with %lld for the id of
 * the chunk holding event @eid) on it, open it with st_trace_open. */
static sqlite3 *
corrupt_copy(const char *path, int64_t eid, const char *upd, int64_t *chunk)
{
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	char *sql;

	build(path, false);
	sqlite3_open(path, &db);
	sql = sqlite3_mprintf("SELECT max(id) FROM event_chunks WHERE id <= %lld", (long long)eid);
	*chunk = q1(db, sql);
	sqlite3_free(sql);
	sql = sqlite3_mprintf(upd, (long long)*chunk);
	exec(db, sql);
	sqlite3_free(sql);
	sqlite3_close(db);
	db = NULL;
	if (st_trace_open(&db, path, &err) < 0)
		printf("# %s\n", err.msg);
	return db;
}

/*
 * Direct reads on @db, whose directory row @first is inconsistent: -EIO;
 * once the directory failed to load they do not read it again (mended
 * under them, they still fail), while SQL loads it again and succeeds.
 */
static void
check_direct_damaged(sqlite3 *db, const char *path, int64_t first)
{
	struct st_conn *c = st_conn_of(db);
	struct st_ev_brief b;
	sqlite3 *w = NULL;
	char *sql;

	if (!ok(c != NULL, "damaged directory: st_conn_of"))
		return;
	is_int(st_conn_event(c, evs[0].id, &b), -EIO, "damaged directory: a direct read is -EIO");
	ok(st_conn_end_bound(c, evs[0].id) == INT64_MAX,
	   "damaged directory: st_conn_end_bound rules nothing out");
	sql = sqlite3_mprintf("UPDATE event_chunks SET max_depth = min_depth WHERE id = %lld",
			      (long long)first);
	sqlite3_open(path, &w);	/* @db is read-only */
	exec(w, sql);
	sqlite3_close(w);
	sqlite3_free(sql);
	is_int(st_conn_event_ending(c, evs[0].id, INT64_MIN, &b), -EIO,
	       "mended: direct reads still fail at once (the failed load is not retried)");
	is_int(q1(db, "SELECT ts FROM events WHERE id = 1"), evs[0].ts,
	       "mended: SQL loads the directory again and reads");
}

/*
 * The packed directory is read, not the rows: rows damaged after packing go
 * unseen.  Packed parts that do not check (a torn part, a row out of order,
 * a part missing, one too many) are passed over for the rows, which read.
 */
static void
check_packed(const char *dir)
{
	static const struct {
		const char *upd, *what;
	} bad[] = {
		{ "UPDATE event_dir SET rows = substr(rows, 1, length(rows) - 1) WHERE id = 0",
		  "a torn part" },
		{ "UPDATE event_dir SET rows = substr(rows, 81, 80) || substr(rows, 1, 80) || "
		  "substr(rows, 161) WHERE id = 0", "two rows swapped" },
		{ "DELETE FROM event_dir", "no part" },
		{ "INSERT INTO event_dir SELECT 1, rows FROM event_dir WHERE id = 0",
		  "a part too many" },
		{ "UPDATE event_dir SET rows = zeroblob(0) WHERE id = 0", "an empty part" },
	};
	char *path = tc_xasprintf("%s/packed.db", dir), *sql;
	int64_t victim = evs[nev / 2].id, first;
	struct tc_err err = { 0 };
	sqlite3 *db;

	db = corrupt_copy(path, victim, "SELECT %lld", &first);
	sqlite3_close(db);
	pack_dir(path);
	sql = sqlite3_mprintf("UPDATE event_chunks SET max_depth = min_depth - 1 WHERE id = %lld",
			      (long long)first);
	sqlite3_open(path, &db);
	exec(db, sql);
	sqlite3_close(db);
	sqlite3_free(sql);
	db = NULL;
	st_trace_open(&db, path, &err);
	is_int(q1(db, "SELECT count(*) FROM (SELECT * FROM events EXCEPT SELECT * FROM "
		   "ref_events)"), 0, "packed directory: read from the parts, not the rows");
	sqlite3_close(db);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		db = corrupt_copy(path, victim, "SELECT %lld", &first);
		sqlite3_close(db);
		pack_dir(path);
		sqlite3_open(path, &db);
		exec(db, bad[i].upd);
		sqlite3_close(db);
		db = NULL;
		st_trace_open(&db, path, &err);
		ok(q1(db, "SELECT count(*) FROM events") == nev,
		   "packed directory, %s: every event read from the rows", bad[i].what);
		ok(q1(db, "SELECT count(*) FROM (SELECT * FROM events EXCEPT SELECT * FROM "
		      "ref_events)") == 0, "packed directory, %s: as the brute force's", bad[i].what);
		sqlite3_close(db);
	}
	unlink(path);
	free(path);
}

static void
check_corrupt(const char *dir)
{
	char *path = tc_xasprintf("%s/corrupt.db", dir), msg[512], want[64], *sql;
	int64_t victim = evs[nev / 2].id, first;
	sqlite3 *db;
	int rc;

	db = corrupt_copy(path, victim, "UPDATE event_data SET cols = substr(cols, 1, "
			  "length(cols) - 1) WHERE id = %lld", &first);
	sql = sqlite3_mprintf("SELECT ts FROM events WHERE id = %lld", (long long)victim);
	rc = q_err(db, sql, msg, sizeof(msg));
	sqlite3_free(sql);
	is_int(rc, SQLITE_CORRUPT, "a short cols blob is SQLITE_CORRUPT");
	snprintf(want, sizeof(want), "chunk %lld", (long long)first);
	if (!ok(strstr(msg, want) != NULL, "the message names the chunk"))
		printf("#   got \"%s\", want \"%s\"\n", msg, want);
	is_int(q_err(db, "SELECT count(*) FROM events", msg, sizeof(msg)), SQLITE_CORRUPT,
	       "a scan over it fails too");
	is_int(q1(db, "SELECT ts FROM events WHERE id = 1"), evs[0].ts,
	       "other chunks still read");
	sqlite3_close(db);

	db = corrupt_copy(path, victim, "UPDATE event_chunks SET max_depth = min_depth - 1 "
			  "WHERE id = %lld", &first);
	rc = q_err(db, "SELECT 1 FROM events WHERE id = 1", msg, sizeof(msg));
	is_int(rc, SQLITE_CORRUPT, "an inconsistent directory row is SQLITE_CORRUPT");
	snprintf(want, sizeof(want), "chunk %lld", (long long)first);
	if (!ok(strstr(msg, want) != NULL, "the message names the chunk"))
		printf("#   got \"%s\", want \"%s\"\n", msg, want);
	check_direct_damaged(db, path, first);
	sqlite3_close(db);

	db = corrupt_copy(path, victim, "UPDATE event_chunks SET names = x'00' WHERE id = %lld",
			  &first);
	is_int(q_err(db, "SELECT 1 FROM events WHERE id = 1", msg, sizeof(msg)),
	       SQLITE_CORRUPT, "a short name filter is SQLITE_CORRUPT");
	sqlite3_close(db);

	db = corrupt_copy(path, victim, "UPDATE event_chunks SET end_max = ts_first - 1 "
			  "WHERE id = %lld", &first);
	sql = sqlite3_mprintf("SELECT ts FROM events WHERE id = %lld", (long long)victim);
	is_int(q_err(db, sql, msg, sizeof(msg)), SQLITE_CORRUPT,
	       "an end_max below an event's end is SQLITE_CORRUPT");
	sqlite3_free(sql);
	sqlite3_close(db);

	db = corrupt_copy(path, victim, "UPDATE event_chunks SET names = zeroblob(32) "
			  "WHERE id = %lld", &first);
	sql = sqlite3_mprintf("SELECT name FROM events WHERE id = %lld", (long long)victim);
	is_int(q_err(db, sql, msg, sizeof(msg)), SQLITE_CORRUPT,
	       "a name filter without the chunk's names is SQLITE_CORRUPT");
	sqlite3_free(sql);
	sqlite3_close(db);

	db = corrupt_copy(path, victim, "DELETE FROM event_data WHERE id = %lld", &first);
	sql = sqlite3_mprintf("SELECT ts FROM events WHERE id = %lld", (long long)victim);
	is_int(q_err(db, sql, msg, sizeof(msg)), SQLITE_CORRUPT,
	       "a missing event_data row is SQLITE_CORRUPT");
	sqlite3_free(sql);
	sqlite3_close(db);

	/* the args blob shorter than the lengths in cols */
	for (int i = nev / 2; i < nev; i++) {
		if (evs[i].args && strlen(evs[i].args) > 2) {
			victim = evs[i].id;
			break;
		}
	}
	db = corrupt_copy(path, victim, "UPDATE event_data SET args = substr(args, 1, 2) "
			  "WHERE id = %lld", &first);
	sql = sqlite3_mprintf("SELECT args FROM events WHERE id = %lld", (long long)victim);
	is_int(q_err(db, sql, msg, sizeof(msg)), SQLITE_CORRUPT,
	       "a short args blob is SQLITE_CORRUPT");
	sqlite3_free(sql);
	sqlite3_close(db);

	unlink(path);
	free(path);
}

/* A trace written by st_writer reads back as what was added. */
static void
check_writer(const char *dir)
{
	char *path = tc_xasprintf("%s/writer.db", dir);
	struct tc_err err = { 0 };
	struct st_writer *w = NULL;
	struct st_stats st;
	sqlite3 *db = NULL;
	int u[4], n = 3000, rc, ui = 0;
	int64_t *seq = calloc((size_t)n, sizeof(*seq));
	sqlite3_stmt *s = NULL;
	int64_t bad = 0, got = 0;

	for (int i = 0; i < nev; i++)
		free(evs[i].args);
	free(evs);
	evs = calloc((size_t)n, sizeof(*evs));
	nev = n;
	rc = st_writer_open(&w, path, &err);
	if (!ok(rc == 0, "writer opens: %s", err.msg))
		goto out;
	{
		int dev = st_device(w, "pid:1", ST_DEV_PROCESS, "p");

		for (int i = 0; i < 4; i++) {
			char key[16];

			snprintf(key, sizeof(key), "tid:%d", i);
			u[i] = st_unit(w, dev, key, i == 3 ? ST_UNIT_COUNTER : ST_UNIT_THREAD, key);
		}
	}
	/* groups of 4 on one unit: a parent slice, then 3 children inside it */
	for (int i = 0; i < n; i++) {
		struct ev *e = &evs[i];
		char name[16];

		if (i % 4 == 0)
			ui = (int)(rnd() % 4);
		e->unit = u[ui];
		e->kind = ui == 3 ? ST_EV_COUNTER : i % 4 && rnd() % 9 == 0 ? ST_EV_INSTANT :
			  ST_EV_SLICE;
		e->ts = (int64_t)(i / 4) * 1000 + (i % 4) * 100;
		e->dur = e->kind == ST_EV_SLICE ? (i % 4 == 0 ? 900 : 50) : 0;
		e->value = e->kind == ST_EV_COUNTER ? i * 0.25 : 0;
		snprintf(name, sizeof(name), "n%d", (int)(rnd() % 30));
		e->name = st_intern(w, name, strlen(name));
		e->args = rnd() % 4 == 0 ? tc_xasprintf("{\"i\":%d}", i) : NULL;
		{
			struct st_event ev = { .unit = e->unit, .kind = e->kind, .ts = e->ts,
					       .dur = e->dur, .name = e->name, .value = e->value,
					       .args = e->args,
					       .args_len = e->args ? strlen(e->args) : 0 };

			seq[i] = st_event_add(w, &ev);
		}
	}
	rc = st_writer_finish(w, &st, &err);
	if (!ok(rc == 0, "writer finishes: %s", err.msg))
		goto out;
	rc = st_trace_open(&db, path, &err);
	if (!ok(rc == 0, "written trace opens: %s", err.msg))
		goto out;
	is_int(q1(db, "SELECT count(*) FROM events"), n, "every added event is a row");
	ok(q1(db, "SELECT count(*) FROM event_chunks") >= n / ST_CHUNK_EVENTS,
	   "in several chunks (%lld)", (long long)q1(db, "SELECT count(*) FROM event_chunks"));
	is_int(q1(db, "SELECT sum(length(rows)) / " VT_STR(ST_DIR_REC) " FROM event_dir"),
	       q1(db, "SELECT count(*) FROM event_chunks"),
	       "the writer packs the directory into event_dir");
	is_int(q1(db, "SELECT count(*) FROM events a JOIN events b ON b.id = a.id + 1 WHERE "
		   "a.unit > b.unit OR (a.unit = b.unit AND (a.ts > b.ts OR (a.ts = b.ts AND "
		   "a.dur < b.dur)))"), 0, "ids in (unit, ts, dur DESC) order");
	sqlite3_prepare_v2(db, "SELECT unit, ts, dur, kind, name, value, args FROM events "
			   "WHERE seq = ?1", -1, &s, NULL);
	for (int i = 0; i < n; i++) {
		const struct ev *e = &evs[i];
		const char *a;

		sqlite3_bind_int64(s, 1, seq[i]);
		if (sqlite3_step(s) != SQLITE_ROW) {
			bad++;
		} else {
			got++;
			a = (const char *)sqlite3_column_text(s, 6);
			if (sqlite3_column_int(s, 0) != e->unit ||
			    sqlite3_column_int64(s, 1) != e->ts ||
			    sqlite3_column_int64(s, 2) != e->dur ||
			    sqlite3_column_int(s, 3) != e->kind ||
			    sqlite3_column_int64(s, 4) != e->name ||
			    (e->kind == ST_EV_COUNTER ? sqlite3_column_double(s, 5) != e->value :
			     sqlite3_column_type(s, 5) != SQLITE_NULL) ||
			    (e->args ? !a || strcmp(a, e->args) : a != NULL))
				bad++;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	ok(bad == 0 && got == n, "each event reads back as added (%lld bad)", (long long)bad);
	is_int(q1(db, "SELECT count(*) FROM events WHERE kind = 0 AND depth = 1"),
	       q1(db, "SELECT count(*) FROM events WHERE kind = 0 AND dur = 50"),
	       "children are at depth 1");
	/* the plans again, against a copy of what the full scan gives */
	sqlite3_close(db);
	db = NULL;
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK && st_sql_register(db) == 0 &&
	    exec(db, "CREATE TEMP TABLE ref_events AS SELECT * FROM events;"
		 "CREATE TEMP TABLE strings AS SELECT * FROM main.strings;"
		 "CREATE TEMP TABLE edges AS SELECT * FROM main.edges") == SQLITE_OK) {
		sqlite3_prepare_v2(db, "SELECT id, ts, ts_end FROM events ORDER BY id", -1, &s,
				   NULL);
		ts_min = INT64_MAX;
		ts_max = INT64_MIN;
		for (int i = 0; i < n && sqlite3_step(s) == SQLITE_ROW; i++) {
			evs[i].id = sqlite3_column_int64(s, 0);
			evs[i].ts = sqlite3_column_int64(s, 1);
			ts_min = TC_MIN(ts_min, evs[i].ts);
			ts_max = TC_MAX(ts_max, sqlite3_column_int64(s, 2));
		}
		sqlite3_finalize(s);
		check_shapes(db, 20, "st_writer trace");
	}
out:
	sqlite3_close(db);
	free(seq);
	unlink(path);
	free(path);
}

/*
 * ts_end_bound(id) on @path: the largest integer on a connection whose
 * events table has not read its directory yet; then, for ids of events,
 * ids around them and ids no chunk holds, the latest end of the chunk that
 * holds the id (NULL for none), never less than the event's own end.
 */
static void
check_end_bound(const char *path, const char *what)
{
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int bad = 0, below = 0, null = 0;

	if (st_trace_open(&db, path, &err)) {
		ok(0, "%s: st_trace_open: %s", what, err.msg);
		return;
	}
	ok(q1(db, "SELECT ts_end_bound(1)") == INT64_MAX,
	   "%s: ts_end_bound before events is connected rules nothing out", what);
	/* connected (a statement names it), not read: ts_end_bound reads the directory */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM events WHERE 0", -1, &s, NULL) == SQLITE_OK)
		sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT ts_end_bound(?1) IS (SELECT c.end_max FROM event_chunks c "
			       "WHERE c.id <= ?1 AND c.id + c.count > ?1), ts_end_bound(?1) >= "
			       "(SELECT ts_end FROM ref_events WHERE id = ?1), ts_end_bound(?1) IS NULL",
			       -1, &s, NULL) != SQLITE_OK) {
		ok(0, "%s: prepare: %s", what, sqlite3_errmsg(db));
		goto out;
	}
	for (int n = 0; n < 4000; n++) {
		int64_t id = n < 3000 ? evs[rnd_in(0, nev - 1)].id + rnd_in(-2, 2) :
			     rnd_in(-3, id_max + 300);

		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) != SQLITE_ROW || !sqlite3_column_int(s, 0))
			bad++;
		if (sqlite3_column_type(s, 1) != SQLITE_NULL && !sqlite3_column_int(s, 1))
			below++;
		null += sqlite3_column_int(s, 2);
		sqlite3_reset(s);
	}
	ok(bad == 0, "%s: ts_end_bound is the latest end of the id's chunk, or NULL (%d wrong, "
	   "%d NULL)", what, bad, null);
	ok(below == 0, "%s: ts_end_bound is never below the event's end (%d are)", what, below);
	ok(null > 0, "%s: ids no chunk holds give NULL", what);
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/*
 * The store's direct reads on @path against SQL: st_conn_event() gives the
 * row `events` gives (or -ENOENT where it has none) and st_conn_end_bound()
 * what ts_end_bound() gives; edges here is a plain table, so st_conn_edges()
 * answers -EAGAIN.
 */
static void
check_direct(const char *path, const char *what)
{
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	struct st_conn *c;
	struct st_edge_end *v = NULL;
	size_t n, cap = 0;
	int bad = 0, none = 0, ends_before = 0;
	sqlite3 *db2 = NULL;

	if (st_trace_open(&db, path, &err) || st_trace_open(&db2, path, &err)) {
		ok(0, "%s: st_trace_open: %s", what, err.msg);
		sqlite3_close(db);
		return;
	}
	c = st_conn_of(db);
	ok(c != NULL, "%s: st_conn_of", what);
	ok(st_conn_of(db) == c && st_conn_of(db2) != NULL && st_conn_of(db2) != c,
	   "%s: st_conn_of finds the connection's own state again, another's for another", what);
	sqlite3_close(db2);
	db2 = NULL;
	if (sqlite3_open_v2(path, &db2, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		ok(st_conn_of(db2) == NULL, "%s: a connection without st_sql_register has none",
		   what);
	sqlite3_close(db2);
	if (!c || sqlite3_prepare_v2(db, "SELECT unit, ts, dur, name, depth, kind, "
				     "ifnull(ts_end_bound(?1), -1) FROM events WHERE id = ?1",
				     -1, &s, NULL) != SQLITE_OK)
		goto out;
	for (int k = 0; k < 3000; k++) {
		int64_t id = k < 2000 ? evs[rnd_in(0, nev - 1)].id + rnd_in(-1, 1) :
			     rnd_in(-3, id_max + 300);
		struct st_ev_brief b, b2;
		int rc = st_conn_event(c, id, &b);
		int64_t eb = st_conn_end_bound(c, id);
		/* a bound around the chunk's latest end: the combined lookup's cut */
		int64_t min_end = eb == INT64_MIN ? rnd_in(-3, 3) : eb + rnd_in(-1, 1);
		int rc2 = st_conn_event_ending(c, id, min_end, &b2);

		if (rc2 == 1)
			ends_before++, bad += eb >= min_end;
		else
			bad += rc2 != rc || (!rc && eb < min_end) ||
			       (!rc && (b.unit != b2.unit || b.ts != b2.ts || b.dur != b2.dur ||
					b.name != b2.name || b.depth != b2.depth ||
					b.kind != b2.kind));

		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW)
			bad += rc != 0 || b.unit != sqlite3_column_int64(s, 0) ||
			       b.ts != sqlite3_column_int64(s, 1) ||
			       b.dur != sqlite3_column_int64(s, 2) ||
			       b.name != (uint32_t)sqlite3_column_int64(s, 3) ||
			       b.depth != sqlite3_column_int(s, 4) ||
			       b.kind != sqlite3_column_int(s, 5) ||
			       eb != sqlite3_column_int64(s, 6);
		else
			none++, bad += rc != -ENOENT;
		sqlite3_reset(s);
	}
	ok(bad == 0, "%s: st_conn_event, st_conn_end_bound and st_conn_event_ending agree with "
	   "SQL (%d differ, %d ids without an event, %d cut by the bound)", what, bad, none,
	   ends_before);
	ok(ends_before > 0, "%s: the bound cut some lookups short", what);
	is_int(st_conn_edges(c, evs[0].id, false, &v, &n, &cap), -EAGAIN,
	       "st_conn_edges without the edges table: -EAGAIN");
out:
	free(v);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

int
main(void)
{
	char dir[] = "/tmp/nx-vtab-XXXXXX";
	struct tc_err err = { 0 };
	const char *seed = getenv("NX_TEST_SEED");
	char *path;
	sqlite3 *db = NULL;

	if (seed && *seed)
		rng_state = strtoull(seed, NULL, 0) | 1;
	printf("# seed %#" PRIx64 "\n", rng_state);
	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	gen_events();
	path = tc_xasprintf("%s/t.db", dir);
	for (int pass = 0; pass < 4; pass++) {
		static const char *const passes[] = {
			"chunks of 1..256", "chunks of 256", "ids with gaps",
			"ids with a gap of 2^24",
		};
		const char *what = passes[pass];
		bool full = pass == 1;

		number_events(pass < 2 ? 0 : pass - 1);
		if (!ok(build(path, full) == SQLITE_OK, "%s: trace built (%d events)", what, nev))
			break;
		/* the directory from its rows, then from event_dir's parts */
		for (int packed = 0; packed < 2; packed++) {
			char how[96];

			snprintf(how, sizeof(how), "%s%s", what, packed ? ", packed directory" : "");
			if (packed && !ok(pack_dir(path) == SQLITE_OK, "%s: event_dir written", how))
				break;
			ok(st_trace_open(&db, path, &err) == 0, "st_trace_open: %s", err.msg);
			is_int(q1(db, "SELECT count(*) FROM events"), nev, "every event is a row");
			is_int(q1(db, "SELECT count(*) FROM (SELECT * FROM events EXCEPT "
				   "SELECT * FROM ref_events)"), 0, "rows equal the brute force's");
			ok(q1(db, "SELECT count(*) FROM event_chunks") > NUNITS,
			   "%s: several chunks a unit (%lld)", how,
			   (long long)q1(db, "SELECT count(*) FROM event_chunks"));
			check_shapes(db, pass == 0 ? 120 : 40, how);
			sqlite3_close(db);
			db = NULL;
			check_end_bound(path, how);
			check_direct(path, how);
		}
	}
	number_events(0);
	/* a second, plain connection sees it once registered */
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	ok(q1(db, "SELECT count(*) FROM events") == -999, "without st_sql_register: no events");
	is_int(st_sql_register(db), 0, "st_sql_register");
	is_int(q1(db, "SELECT count(*) FROM events"), nev, "with it: every event");
	sqlite3_close(db);
	check_corrupt(dir);
	check_packed(dir);
	check_writer(dir);
	for (int i = 0; i < nev; i++)
		free(evs[i].args);
	free(evs);
	unlink(path);
	free(path);
	rmdir(dir);
	return tap_done();
}
