/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-deps-edges.c - the packed edge store (store/st-edges.c)
 * on a real SQLite file: random edges collected in any order, with a memory
 * budget small enough to spill, then read back through the `edges` virtual
 * table by dst, by src, by kind and by full scan, and compared with what
 * went in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/tc-rank.h"
#include "store/store-int.h"
#include "tests/tap.h"

#define NEV 20000		/* event ids 0..NEV */

struct want {
	int64_t src, dst;
	int kind;
	char label[64];
	bool null_label;
	int shape;		/* added in parts: ST_LABEL_BYTES or ST_LABEL_AT_LEAST */
	char name[8];
	uint64_t a, b;
};

static struct want *edges;
static size_t nedges;

/* "src>dst:kind:label" of one edge, NULL labels as "-". */
static char *
fmt(int64_t src, int64_t dst, int kind, const char *label)
{
	return tc_xasprintf("%lld>%lld:%d:%s", (long long)src, (long long)dst, kind,
			    label ? label : "-");
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, ';'-joined list of strings (frees them). */
static char *
join(char **v, size_t n)
{
	struct tc_buf b;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	if (n)	/* qsort(NULL, 0) is undefined */
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		tc_buf_printf(&b, "%s;", v[i]);
		free(v[i]);
	}
	free(v);
	return tc_buf_steal(&b);
}

/* The rows of @sql (columns src, dst, kind, label) as a sorted list. */
static char *
got(sqlite3 *db, const char *sql, int64_t arg, int64_t arg2)
{
	sqlite3_stmt *s;
	char **v = NULL;
	size_t n = 0, cap = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		printf("# sql error: %s\n", sqlite3_errmsg(db));
		return tc_xstrdup("error");
	}
	if (sqlite3_bind_parameter_count(s) >= 1)
		sqlite3_bind_int64(s, 1, arg);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_int64(s, 2, arg2);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = tc_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = fmt(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
			     sqlite3_column_int(s, 2), (const char *)sqlite3_column_text(s, 3));
	}
	sqlite3_finalize(s);
	return join(v, n);
}

/* The edges that went in with @match, as a sorted list. */
static char *
want(bool (*match)(const struct want *, int64_t, int64_t), int64_t arg, int64_t arg2)
{
	char **v = tc_xmalloc((nedges + 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < nedges; i++)
		if (match(&edges[i], arg, arg2))
			v[n++] = fmt(edges[i].src, edges[i].dst, edges[i].kind,
				     edges[i].null_label ? NULL : edges[i].label);
	return join(v, n);
}

static bool m_all(const struct want *e, int64_t a, int64_t b) { return true; }
static bool m_dst(const struct want *e, int64_t a, int64_t b) { return e->dst == a; }
static bool m_src(const struct want *e, int64_t a, int64_t b) { return e->src == a; }
static bool m_kind(const struct want *e, int64_t a, int64_t b) { return e->kind == a; }
static bool m_dst_kind(const struct want *e, int64_t a, int64_t b)
{
	return e->dst == a && e->kind == b;
}
static bool m_src_dst(const struct want *e, int64_t a, int64_t b)
{
	return e->src == a && e->dst == b;
}

/* The first step of @sql on @db: SQLITE_ROW, SQLITE_DONE or an error; -1 when it does not prepare. */
static int
first_step(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK)
		rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc;
}

static sqlite3 *
fresh_db(const char *path)
{
	sqlite3 *db = NULL;
	struct tc_err err = { 0 };

	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK || st_schema_create_trace(db, &err) < 0 ||
	    st_sql_register(db) < 0) {
		printf("# cannot create %s: %s\n", path, err.msg);
		exit(99);
	}
	return db;
}

/* How many of the lookups dst = @id and src = @id differ from what went in. */
static int
by_ends_bad(sqlite3 *db, int64_t id)
{
	char *g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = ?", id, 0);
	char *w = want(m_dst, id, 0);
	int bad = strcmp(g, w) != 0;

	free(g);
	free(w);
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE src = ?", id, 0);
	w = want(m_src, id, 0);
	bad += strcmp(g, w) != 0;
	free(g);
	free(w);
	return bad;
}

/* The label of the first edge @src -> @dst of @kind through SQL into @b ("-" for none). */
static void
sql_label(sqlite3 *db, int64_t src, int64_t dst, int kind, struct tc_buf *b)
{
	sqlite3_stmt *s = NULL;

	sqlite3_prepare_v2(db, "SELECT label FROM edges WHERE dst = ? AND src = ? AND kind = ? "
			   "LIMIT 1", -1, &s, NULL);
	sqlite3_bind_int64(s, 1, dst);
	sqlite3_bind_int64(s, 2, src);
	sqlite3_bind_int(s, 3, kind);
	tc_buf_reset(b);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		tc_buf_add(b, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
	else
		tc_buf_add(b, "-", 1);
	sqlite3_finalize(s);
}

/* st_conn_label() of @src -> @dst of @kind into @b ("-" for none, "!" for an error). */
static void
direct_label(struct st_conn *c, int64_t src, int64_t dst, int kind, struct tc_buf *b)
{
	int rc = st_conn_label(c, src, dst, kind, b);

	if (rc) {
		tc_buf_reset(b);
		tc_buf_add(b, rc == 1 || rc == -ENOENT ? "-" : "!", 1);
	}
}

/*
 * How many of @n lookups (ids @ids) differ between the direct reads and SQL:
 * st_conn_edges() into an event against the edges table's dst = ? rows and
 * out of it against its src = ? rows (other ends and kinds, in order; into
 * it, st_conn_label_of() each row's label; out of it, labels left to the
 * destination), and st_conn_label() against the label SQL lists first for
 * each of them.
 */
static int
direct_bad(sqlite3 *db, struct st_conn *c, const int64_t *ids, size_t n)
{
	struct st_edge_end *v = NULL;
	size_t nv, cap = 0;
	struct tc_buf l1, l2;
	int bad = 0;

	tc_buf_init(&l1);
	tc_buf_init(&l2);
	for (size_t i = 0; i < n; i++) {
		for (int out = 0; out < 2; out++) {
			sqlite3_stmt *s = NULL;
			struct tc_buf a, b;

			tc_buf_init(&a);
			tc_buf_init(&b);
			if (st_conn_edges(c, ids[i], out, &v, &nv, &cap))
				nv = SIZE_MAX;
			for (size_t k = 0; nv != SIZE_MAX && k < nv; k++) {
				int64_t other = v[k].id;
				int kind = v[k].kind;

				tc_buf_printf(&a, "%lld:%d:", (long long)other, kind);
				if (out && v[k].label.form == ST_LABEL_AT_DST) {
					tc_buf_printf(&a, "@dst;");
				} else {
					int rc = st_conn_label_of(c, &v[k].label, &l1);

					tc_buf_printf(&a, "%s;", rc == 1 ? "-" : rc ? "!" : l1.data);
				}
				direct_label(c, out ? ids[i] : other, out ? other : ids[i], kind, &l1);
				sql_label(db, out ? ids[i] : other, out ? other : ids[i], kind, &l2);
				bad += strcmp(l1.data, l2.data) != 0;
			}
			sqlite3_prepare_v2(db, out ? "SELECT dst, kind, '@dst' FROM edges WHERE src = ?" :
					   "SELECT src, kind, coalesce(label, '-') FROM edges "
					   "WHERE dst = ?", -1, &s, NULL);
			sqlite3_bind_int64(s, 1, ids[i]);
			while (sqlite3_step(s) == SQLITE_ROW)
				tc_buf_printf(&b, "%lld:%d:%s;", (long long)sqlite3_column_int64(s, 0),
					      sqlite3_column_int(s, 1), sqlite3_column_text(s, 2));
			sqlite3_finalize(s);
			bad += nv == SIZE_MAX || a.len != b.len ||
			       (a.len && memcmp(a.data, b.data, a.len));
			tc_buf_free(&a);
			tc_buf_free(&b);
		}
		/* a pair that is no edge */
		direct_label(c, ids[i] + 1, ids[i], 7, &l1);
		bad += strcmp(l1.data, "-") != 0;
	}
	tc_buf_free(&l1);
	tc_buf_free(&l2);
	free(v);
	return bad;
}

/* Collect every edge with memory budget @ram, finish, and check the reads. */
/* Each event's end for st_edges_set_ends(): few distinct values, so that ends tie often. */
static int64_t ends[NEV + 1];

/* Whether source @a (ending at @ea) goes before @b (ending at @eb): later end, then larger id. */
static bool
crit_before(int64_t a, int64_t ea, int64_t b, int64_t eb)
{
	return b < 0 || ea > eb || (ea == eb && a > b);
}

/*
 * How many events st_conn_crit() answers differently from the edges that
 * went in: the source of edges into it that ends last (the larger source on
 * a tie) and the next source in that order, each with the kind of its first
 * edge added and the event's end less its own, or none.
 */
static int
crit_bad(struct st_conn *c, int *with_edges, int *with_two)
{
	int64_t (*best)[2] = tc_xcalloc(NEV + 1, sizeof(*best));
	int (*kind)[2] = tc_xcalloc(NEV + 1, sizeof(*kind));
	int bad = 0;

	for (int64_t id = 0; id <= NEV; id++)
		best[id][0] = best[id][1] = -1;
	for (size_t i = 0; i < nedges; i++) {	/* in the order they were added */
		const struct want *e = &edges[i];
		int64_t *b = best[e->dst];
		int *k = kind[e->dst];

		if (e->src == b[0] || e->src == b[1])
			continue;	/* a source's first edge gives its kind */
		if (crit_before(e->src, ends[e->src], b[0], b[0] < 0 ? 0 : ends[b[0]])) {
			b[1] = b[0];
			k[1] = k[0];
			b[0] = e->src;
			k[0] = e->kind;
		} else if (crit_before(e->src, ends[e->src], b[1], b[1] < 0 ? 0 : ends[b[1]])) {
			b[1] = e->src;
			k[1] = e->kind;
		}
	}
	*with_edges = *with_two = 0;
	for (int64_t id = 0; id <= NEV; id++) {
		struct st_crit got[2] = { { .src = -2 }, { .src = -2 } };
		int rc = st_conn_crit(c, id, 2, got), wrong = rc != 0;

		*with_edges += best[id][0] >= 0;
		*with_two += best[id][1] >= 0;
		for (int w = 0; w < 2 && !wrong; w++)
			wrong = got[w].src != best[id][w] ||
				(best[id][w] >= 0 && (got[w].kind != kind[id][w] ||
						      got[w].lag != ends[id] - ends[best[id][w]]));
		if (wrong && bad++ < 5)
			printf("# crit of %lld: rc %d src %lld, %lld kind %d, %d; want %lld, %lld "
			       "kind %d, %d\n", (long long)id, rc, (long long)got[0].src,
			       (long long)got[1].src, got[0].kind, got[1].kind,
			       (long long)best[id][0], (long long)best[id][1], kind[id][0],
			       kind[id][1]);
	}
	free(best);
	free(kind);
	return bad;
}

/* @ranked: the ends given for the edges' events only, by rank (st_edges_set_ends_ranked()) */
static void
round_trip(const char *path, size_t ram, bool ranked, const char *what)
{
	sqlite3 *db = fresh_db(path);
	struct st_edges *x = NULL;
	struct tc_err err = { 0 };
	struct tc_rank set = { 0 };
	int64_t *rends = NULL;
	int rc = 0, bad = 0, checked = 0;
	char *g, *w;

	is_int(st_edges_new(&x, db, NEV, ram, path, &err), 0, "collector opens");
	if (ranked) {
		tc_rank_init(&set, NEV + 1);
		for (size_t i = 0; i < nedges; i++) {
			tc_rank_set(&set, (uint64_t)edges[i].src);
			tc_rank_set(&set, (uint64_t)edges[i].dst);
		}
		ok(tc_rank_index(&set) == 0, "%s: rank index", what);
		ok(set.count > 1000 && set.count < NEV, "%s: %llu of %d events have edges", what,
		   (unsigned long long)set.count, NEV + 1);
		rends = tc_xmalloc(set.count * sizeof(*rends));
		for (int64_t id = 0; id <= NEV; id++)
			if (tc_rank_has(&set, (uint64_t)id))
				rends[tc_rank_of(&set, (uint64_t)id)] = ends[id];
		st_edges_set_ends_ranked(x, &set, rends);
	} else {
		st_edges_set_ends(x, ends);
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (size_t i = 0; i < nedges && !rc; i++) {
		const struct want *e = &edges[i];

		if (e->shape)
			rc = st_edges_add_parts(x, e->src, e->dst, e->kind, e->shape, e->name,
						strlen(e->name), e->a, e->b);
		else
			rc = st_edges_add(x, e->src, e->dst, e->kind,
					  e->null_label ? NULL : e->label, strlen(e->label));
	}
	is_int(rc, 0, "every edge added");
	is_int(st_edges_count(x), (long long)nedges, "counted");
	is_int(st_edges_finish(x, NULL, NULL, &err), 0, "finish writes the blocks");
	st_edges_free(x);
	tc_rank_free(&set);
	free(rends);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);

	g = got(db, "SELECT src, dst, kind, label FROM edges", 0, 0);
	w = want(m_all, 0, 0);
	ok(!strcmp(g, w), "%s: a full scan returns every edge", what);
	free(g);
	free(w);
	for (int k = 0; k < 4; k++) {
		g = got(db, "SELECT src, dst, kind, label FROM edges WHERE kind = ?", k, 0);
		w = want(m_kind, k, 0);
		bad += strcmp(g, w) != 0;
		free(g);
		free(w);
	}
	is_int(bad, 0, "kind = ? scans");
	for (int64_t id = 0; id <= NEV; id += id < 600 ? 1 : 97) {
		bad += by_ends_bad(db, id);
		g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = ? AND kind = ?",
			id, id % 4);
		w = want(m_dst_kind, id, id % 4);
		bad += strcmp(g, w) != 0;
		free(g);
		free(w);
		checked++;
	}
	is_int(bad, 0, "dst = ?, src = ? and dst = ? AND kind = ? lookups");
	ok(checked > 700, "%s: %d ids looked up", what, checked);
	/* backwards through the first blocks, as a critical path walks */
	for (int64_t id = 600; id-- > 0;)
		bad += by_ends_bad(db, id);
	ok(bad == 0, "%s: the same lookups in descending order", what);
	/* the same lookups through the store's direct reads, both ways, and off the ends */
	{
		struct st_conn *c = st_conn_of(db);
		int64_t ids[1400];
		size_t n = 0;

		for (int64_t id = 0; id <= NEV && n < 700; id += id < 600 ? 1 : 97)
			ids[n++] = id;
		for (int64_t id = 600; id-- > 0;)
			ids[n++] = id;
		ids[n++] = NEV + 5000;
		ids[n++] = -3;
		ok(c != NULL, "%s: st_conn_of", what);
		{
			int with = 0, two = 0;

			ok(c && crit_bad(c, &with, &two) == 0,
			   "%s: st_conn_crit names each event's two latest-ending sources", what);
			ok(with > 10000 && two > 1000, "%s: %d events with edges in, %d from two "
			   "sources or more", what, with, two);
		}
		is_int(c ? direct_bad(db, c, ids, n) : -1, 0,
		       "st_conn_edges lists what dst = ? and src = ? list, in their "
		       "order; st_conn_label gives the label SQL gives");
	}
	/* both ends given: the pair, and a pair that is not an edge */
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE src = ? AND dst = ?",
		edges[7].src, edges[7].dst);
	w = want(m_src_dst, edges[7].src, edges[7].dst);
	is_str(g, w, "src = ? AND dst = ?");
	free(g);
	free(w);
	/* values that match no integer id */
	is_int(sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL), SQLITE_OK, "db usable");
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = 'x'", 0, 0);
	is_str(g, "", "a text value matches nothing");
	free(g);
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = -3", 0, 0);
	is_str(g, "", "a negative id matches nothing");
	free(g);
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = ?", NEV + 5000, 0);
	is_str(g, "", "an id past the last block matches nothing");
	free(g);
	/* joins and IN go through the same lookups */
	g = got(db, "SELECT e.src, e.dst, e.kind, e.label FROM (SELECT ?1 AS id) v "
		"JOIN edges e ON e.dst = v.id", edges[3].dst, 0);
	w = want(m_dst, edges[3].dst, 0);
	is_str(g, w, "a join on dst");
	free(g);
	free(w);
	{
		int64_t n = -1;
		sqlite3_stmt *s;

		if (sqlite3_prepare_v2(db, "SELECT count(*), count(DISTINCT rowid) FROM edges", -1,
				       &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
		    sqlite3_column_int64(s, 0) == sqlite3_column_int64(s, 1))
			n = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
		is_int(n, (long long)nedges, "rowids are distinct in a scan");
	}
	/* the lookups left blob handles open: closing the connection closes them */
	ok(sqlite3_close(db) == SQLITE_OK, "%s: the connection closes (no statement left open)",
	   what);
	unlink(path);
}

/*
 * Write the @nbytes bytes of hex @hex over block @block's ins blob from byte
 * @at after its index on (its length kept, so the index stays right): a
 * lookup of @bad_dst is SQLITE_CORRUPT, one of @ok_dst (another group of
 * the block; edges i - 1 -> i of kind i % 4 labelled A[0:4]) still answers.
 */
static void
damage_ins(sqlite3 *db, int block, int at, const char *hex, int nbytes, int64_t bad_dst,
	   int64_t ok_dst, const char *what)
{
	char *sql = tc_xasprintf("UPDATE edge_blocks SET ins = CAST(substr(ins, 1, %d) || X'%s' || "
				 "substr(ins, %d) AS BLOB) WHERE id = %d", ST_EDGE_IDX + at, hex,
				 ST_EDGE_IDX + at + nbytes + 1, block);
	char want[64], name[128], *g;

	sqlite3_exec(db, sql, NULL, NULL, NULL);
	free(sql);
	sql = tc_xasprintf("SELECT src FROM edges WHERE dst = %lld", (long long)bad_dst);
	snprintf(name, sizeof(name), "%s is SQLITE_CORRUPT", what);
	is_int(first_step(db, sql), SQLITE_CORRUPT, name);
	free(sql);
	snprintf(want, sizeof(want), "%lld>%lld:%d:A[0:4];", (long long)ok_dst - 1,
		 (long long)ok_dst, (int)(ok_dst % 4));
	g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = ?", ok_dst, 0);
	snprintf(name, sizeof(name), "%s: a lookup in another group of the block answers", what);
	is_str(g, want, name);
	free(g);
}

int
main(void)
{
	char path[] = "/tmp/nx-test-edges-XXXXXX";
	int fd = mkstemp(path);
	uint64_t r = 88172645463325252ull;
	/* labels the store keeps as prefix + numbers, and look-alikes it must keep as text */
	static const char *fixed[] = {
		"A[0:64]", "S>=3", "program order", "", "flow 12", "B[16:32],B[256:264]",
		"S[5]>=16", "A[00:4]", "A[4:2]", "X>=07", ">=3", "[0:4]", "A[:4]", "A[0:]",
		"A[18446744073709551615:18446744073709551615]", "A[18446744073709551616:1]",
		"A[0:4]x", "A[0:4:8]", "S>=", "a>=b>=1", "A[1:2]]", "Q[0x10:0x20]",
	};
	const size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);

	if (fd < 0)
		tap_skip_all("no temp file");
	close(fd);
	for (int64_t id = 0; id <= NEV; id++)	/* ties, and ends before 0 */
		ends[id] = (id * 7919) % 37 - 5;
	nedges = 60000;
	edges = tc_xcalloc(nedges, sizeof(*edges));
	for (size_t i = 0; i < nedges; i++) {
		struct want *e = &edges[i];

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		/* mostly near each other, some far apart; both ends of the id range */
		e->dst = (int64_t)(r % (NEV + 1));
		e->src = (r >> 20) % 5 ? TC_MAX(0, e->dst - (int64_t)((r >> 24) % 300))
				       : (int64_t)((r >> 30) % (NEV + 1));
		if (i == 0) {
			e->src = 0;
			e->dst = NEV;
		}
		e->kind = (int)((r >> 40) % 4);
		e->null_label = (r >> 44) % 17 == 0;
		if ((r >> 50) % 3) {
			snprintf(e->label, sizeof(e->label), "%s", fixed[(r >> 52) % nfixed]);
		} else if ((r >> 58) % 4 == 0) {	/* in parts, as deps/ hands them */
			e->null_label = false;
			e->shape = (r >> 60) % 2 ? ST_LABEL_BYTES : ST_LABEL_AT_LEAST;
			snprintf(e->name, sizeof(e->name), "S%u", (unsigned)(r % 7));
			e->a = (r >> 8) % 100000;
			e->b = e->a + (r >> 30) % 5000;
			if (e->shape == ST_LABEL_BYTES)
				snprintf(e->label, sizeof(e->label), "%s[%llu:%llu]", e->name,
					 (unsigned long long)e->a, (unsigned long long)e->b);
			else
				snprintf(e->label, sizeof(e->label), "%s>=%llu", e->name,
					 (unsigned long long)e->a);
		} else {
			snprintf(e->label, sizeof(e->label), "sb%u[%u:%u]", (unsigned)(r % 16),
				 (unsigned)((r >> 8) % 2048) * 512,
				 (unsigned)((r >> 8) % 2048) * 512 + 512);
		}
	}
	/* pairs given twice, each time with another label (explicit flows can) */
	for (size_t i = 1; i <= 40; i++) {
		struct want *e = &edges[nedges - i], *f = &edges[i * 997];

		e->src = f->src;
		e->dst = f->dst;
		e->kind = f->kind;
		e->shape = 0;
		e->null_label = false;
		snprintf(e->label, sizeof(e->label), "again %zu", i);
	}
	round_trip(path, 64u << 20, false, "in memory");
	round_trip(path, 16u << 10, false, "spilled");
	round_trip(path, 64u << 20, true, "in memory, ends by rank");

	/* no edges at all */
	{
		sqlite3 *db = fresh_db(path);
		struct st_edges *x = NULL;
		struct tc_err err = { 0 };
		char *g;

		is_int(st_edges_new(&x, db, 10, 1 << 20, path, &err), 0, "empty collector");
		is_int(st_edges_add(x, 11, 1, 0, NULL, 0), -EINVAL, "an id past max_id is refused");
		is_int(st_edges_add(x, 1, 2, 8, NULL, 0), -EINVAL, "a kind past 7 is refused");
		is_int(st_edges_add_parts(x, 1, 2, 0, ST_LABEL_BYTES, "A", 1, 5, 4), -EINVAL,
		       "a byte range ending before it starts is refused");
		is_int(st_edges_add_parts(x, 1, 2, 0, 9, "A", 1, 5, 4), -EINVAL,
		       "an unknown shape is refused");
		is_int(st_edges_finish(x, NULL, NULL, &err), 0, "finishes");
		st_edges_free(x);
		g = got(db, "SELECT src, dst, kind, label FROM edges", 0, 0);
		is_str(g, "", "an empty trace has no edges");
		free(g);
		sqlite3_close(db);
		unlink(path);
	}
	/* a damaged ins blob: the lookups in its block fail as corrupt, others still answer */
	{
		/* ids by block: B + 1 is block 1's second event, and so on */
		const int64_t B = ST_EDGE_BLOCK, in2 = 2 * B + 60, c0 = B * 3 / 4 + 8;
		sqlite3 *db = fresh_db(path);
		struct st_edges *x = NULL;
		struct tc_err err = { 0 };
		char *g, *sql, want[64];

		is_int(st_edges_new(&x, db, 4 * B - 24, 1 << 20, path, &err), 0, "small collector");
		st_edges_set_ends(x, ends);
		for (int i = 1; i < 4 * B - 24; i++)
			st_edges_add(x, i - 1, i, i % 4, "A[0:4]", 6);
		is_int(st_edges_finish(x, NULL, NULL, &err), 0, "finishes");
		st_edges_free(x);
		/* block 1: its first entry (after the index) jumps past the block's last id */
		damage_ins(db, 1, 0, "ff7f00", 3, B + 1, B + 44, "a lookup in the damaged group");
		/* block 2: its index points past the blob */
		is_int(sqlite3_exec(db, "UPDATE edge_outs SET outs = X'ffffff7f00' || substr(outs, 6) "
				    "WHERE id = 2", NULL, NULL, NULL), SQLITE_OK, "outs of block 2 damaged");
		sql = tc_xasprintf("SELECT dst FROM edges WHERE src = %lld", (long long)(2 * B + 1));
		is_int(first_step(db, sql), SQLITE_CORRUPT,
		       "a lookup through a damaged index is SQLITE_CORRUPT");
		free(sql);
		/*
		 * block 0's first entry (0 -> 1: id step 01, then the source) with
		 * 11 bytes written over it from its source on, the length kept (the
		 * index stays right): a source of 11 bytes, one more than a varint
		 * may take.  Entries are read without per-byte bounds where 50
		 * bytes are left: still SQLITE_CORRUPT.
		 */
		damage_ins(db, 0, 1, "8180808080808080808000", 11, 1, 100,
			   "an entry with a number of 11 bytes");
		/* block 3: text where the ins blob should be */
		sqlite3_exec(db, "UPDATE edge_blocks SET ins = 'abc' WHERE id = 3", NULL, NULL, NULL);
		sql = tc_xasprintf("SELECT src FROM edges WHERE dst = %lld", (long long)(3 * B + 32));
		is_int(first_step(db, sql), SQLITE_CORRUPT,
		       "a lookup in a blob that is text is SQLITE_CORRUPT");
		free(sql);
		{
			struct st_conn *c = st_conn_of(db);
			struct st_edge_end *v = NULL;
			size_t n = 0, cap = 0;

			is_int(c ? st_conn_edges(c, B + 1, false, &v, &n, &cap) : 0, -EIO,
			       "st_conn_edges in the damaged group is -EIO");
			is_int(c ? st_conn_edges(c, 2 * B + 1, true, &v, &n, &cap) : 0, -EIO,
			       "st_conn_edges through the damaged index is -EIO");
			is_int(c ? st_conn_edges(c, in2, false, &v, &n, &cap) : -1, 0,
			       "st_conn_edges in another block answers");
			ok(n == 1 && v[0].id == in2 - 1 && v[0].kind == in2 % 4, "with its edge");
			free(v);
		}
		/*
		 * crit blobs: one that does not decode, one missing: the store cannot
		 * say; one whose second part does not decode: the first sources only
		 */
		is_int(sqlite3_exec(db, "UPDATE edge_crit SET crit = X'ffffffffffffffffffffff' "
				    "WHERE id = 1; DELETE FROM edge_crit WHERE id = 3;"
				    "UPDATE edge_crit SET crit = crit || X'ff' WHERE id = 0", NULL, NULL,
				    NULL), SQLITE_OK, "three crit rows damaged or deleted");
		{
			struct st_conn *c = st_conn_of(db);
			struct st_crit cr[2];

			is_int(c ? st_conn_crit(c, B + 44, 2, cr) : 0, 1,
			       "st_conn_crit in a block whose crit blob does not decode: 1");
			is_int(c ? st_conn_crit(c, 3 * B + 32, 2, cr) : 0, 1,
			       "and in one without a crit blob");
			is_int(c ? st_conn_crit(c, in2, 2, cr) : -1, 0, "another block answers");
			ok(cr[0].src == in2 - 1 && cr[0].kind == in2 % 4 &&
			   cr[0].lag == ends[in2] - ends[in2 - 1] &&
			   cr[1].src == -1, "with its edge (%lld, kind %d, ends %lld earlier), no other",
			   (long long)cr[0].src, cr[0].kind, (long long)cr[0].lag);
			is_int(c ? st_conn_crit(c, 0, 1, cr) : -1, 0, "an event without edges in");
			ok(cr[0].src == -1, "has none");
			is_int(c ? st_conn_crit(c, c0, 1, cr) : -1, 0,
			       "the first source where the second part does not decode");
			ok(cr[0].src == c0 - 1, "is still known (%lld)", (long long)cr[0].src);
			is_int(c ? st_conn_crit(c, c0, 2, cr) : 0, 1, "the second: 1 (cannot say)");
		}
		g = got(db, "SELECT src, dst, kind, label FROM edges WHERE dst = ?", in2, 0);
		snprintf(want, sizeof(want), "%lld>%lld:%d:A[0:4];", (long long)(in2 - 1),
			 (long long)in2, (int)(in2 % 4));
		is_str(g, want, "a lookup in another block still answers");
		free(g);
		sqlite3_close(db);
		unlink(path);
	}
	/* ends too far apart for a 64-bit difference: the block has no crit blob */
	{
		static int64_t far[600];
		sqlite3 *db = fresh_db(path);
		struct st_edges *x = NULL;
		struct tc_err err = { 0 };
		struct st_conn *c;
		struct st_crit cr[2];

		for (int i = 0; i < 600; i++)
			far[i] = i;
		far[1] = INT64_MIN;
		far[2] = INT64_MAX;
		is_int(st_edges_new(&x, db, 599, 1 << 20, path, &err), 0, "far-apart ends");
		st_edges_set_ends(x, far);
		st_edges_add(x, 1, 2, 0, "A", 1);	/* in block 0: INT64_MAX - INT64_MIN */
		st_edges_add(x, 299, 300, 1, "B", 1);	/* in block 1: 1 */
		is_int(st_edges_finish(x, NULL, NULL, &err), 0, "finishes");
		st_edges_free(x);
		c = st_conn_of(db);
		is_int(c ? st_conn_crit(c, 2, 2, cr) : 0, 1,
		       "st_conn_crit where the end difference does not fit: 1 (no blob)");
		is_int(c ? st_conn_crit(c, 300, 2, cr) : -1, 0, "another block answers");
		ok(cr[0].src == 299 && cr[0].kind == 1 && cr[0].lag == 1,
		   "with its edge, ending 1 earlier (%lld, %d, %lld)", (long long)cr[0].src,
		   cr[0].kind, (long long)cr[0].lag);
		sqlite3_close(db);
		unlink(path);
	}
	free(edges);
	return tap_done();
}
